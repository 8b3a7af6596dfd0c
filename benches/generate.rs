//! Generator benchmark: R-MAT (Graph500 parameters) straight into a CSR, timing each phase
//! and reading the peak resident memory (VmHWM) from /proc/self/status.
//!
//! `cargo bench --bench generate` runs scale 24, edge factor 16 (268M edges, ~537M arcs
//! undirected); `SWITCHYARD_BENCH_SCALE=16` picks another scale. Writes
//! `reports/bench/generate.json`.

use std::time::Instant;
use switchyard::graph::BuildOptions;
use switchyard::graph::generate::GeneratorKind;
use switchyard::graph::generate::{GeneratorSpec, csr_from_edges_parallel, rmat_edges};

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scale: u32 =
        std::env::var("SWITCHYARD_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let spec = GeneratorSpec::parse(&format!("rmat:scale={scale},ef=16,seed=1"))?;
    let GeneratorKind::Rmat(params) = &spec.kind else { unreachable!("rmat spec") };
    let threads = rayon::current_num_threads();
    let hwm_start_kib = vm_hwm_kib().unwrap_or(0);

    let started = Instant::now();
    let edges = rmat_edges(params, spec.seed)?;
    let edges_s = started.elapsed().as_secs_f64();
    let hwm_edges_kib = vm_hwm_kib().unwrap_or(0);

    let started = Instant::now();
    let csr = csr_from_edges_parallel(1 << scale, &edges, None, false, BuildOptions::default())?;
    let csr_s = started.elapsed().as_secs_f64();
    let edge_count = edges.len() as u64;
    drop(edges);
    let hwm_kib = vm_hwm_kib().unwrap_or(0);

    let max_degree = (0..csr.num_vertices()).map(|v| csr.degree(v)).max().unwrap_or(0);
    let csr_bytes = csr.offsets().len() as u64 * 8 + csr.num_arcs() * 4;
    let report = serde_json::json!({
        "benchmark": "generate",
        "spec": spec.to_string(),
        "threads": threads,
        "vertices": csr.num_vertices(),
        "edges_generated": edge_count,
        "arcs": csr.num_arcs(),
        "max_degree": max_degree,
        "edge_generation_s": edges_s,
        "csr_build_s": csr_s,
        "total_s": edges_s + csr_s,
        "edges_per_s": edge_count as f64 / (edges_s + csr_s),
        "csr_bytes": csr_bytes,
        "edge_list_bytes": edge_count * 8,
        "peak_rss_start_kib": hwm_start_kib,
        "peak_rss_after_edges_kib": hwm_edges_kib,
        "peak_rss_kib": hwm_kib,
        "peak_rss_gib": hwm_kib as f64 / (1u64 << 20) as f64,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/bench");
    std::fs::create_dir_all(&dir)?;
    let name = if scale == 24 {
        "generate.json".to_string()
    } else {
        format!("generate_scale{scale}.json")
    };
    std::fs::write(dir.join(&name), serde_json::to_string_pretty(&report)? + "\n")?;
    eprintln!("wrote {}", dir.join(name).display());
    Ok(())
}
