//! Generator benchmark: R-MAT (Graph500 parameters) straight into a CSR, timing each phase
//! and reading the peak resident memory (VmHWM) from /proc/self/status.
//!
//! `cargo bench --bench generate` runs scale 24, edge factor 16 (268M edges, ~537M arcs
//! undirected); `SWITCHYARD_BENCH_SCALE=16` picks another scale and
//! `SWITCHYARD_BENCH_SPEC=rmat:...` any R-MAT spec. The default run writes
//! `reports/bench/generate.json`, others `reports/bench/generate_other.json`.

use std::time::Instant;
use switchyard::graph::BuildOptions;
use switchyard::graph::generate::GeneratorKind;
use switchyard::graph::generate::{GeneratorSpec, csr_from_edges_parallel, rmat_edges};

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat (clock ticks of
/// 1/100 s): unlike wall time it does not grow when other processes share the cores.
fn cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the full line: 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scale: u32 =
        std::env::var("SWITCHYARD_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let default_spec = format!("rmat:scale={scale},ef=16,seed=1");
    let spec_text = std::env::var("SWITCHYARD_BENCH_SPEC").unwrap_or(default_spec);
    let spec = GeneratorSpec::parse(&spec_text)?;
    let GeneratorKind::Rmat(params) = &spec.kind else {
        return Err(
            format!("SWITCHYARD_BENCH_SPEC={spec_text}: the benchmark takes an rmat spec").into()
        );
    };
    let scale = params.scale;
    let threads = rayon::current_num_threads();
    let hwm_start_kib = vm_hwm_kib().unwrap_or(0);

    let (started, cpu_start_s) = (Instant::now(), cpu_s());
    let edges = rmat_edges(params, spec.seed)?;
    let edges_s = started.elapsed().as_secs_f64();
    let edges_cpu_s = cpu_s() - cpu_start_s;
    let hwm_edges_kib = vm_hwm_kib().unwrap_or(0);

    let (started, cpu_start_s) = (Instant::now(), cpu_s());
    let options = BuildOptions { drop_self_loops: params.dedup, drop_duplicates: params.dedup };
    let csr = csr_from_edges_parallel(1 << scale, &edges, None, spec.directed, options)?;
    let csr_s = started.elapsed().as_secs_f64();
    let csr_cpu_s = cpu_s() - cpu_start_s;
    let load_average = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
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
        "edge_generation_cpu_s": edges_cpu_s,
        "csr_build_cpu_s": csr_cpu_s,
        "load_average_at_end": load_average.trim(),
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
    // Only the default run (Graph500 scale 24) writes the recorded report.
    let name = if std::env::var_os("SWITCHYARD_BENCH_SPEC").is_none() && scale == 24 {
        "generate.json"
    } else {
        "generate_other.json"
    };
    std::fs::write(dir.join(name), serde_json::to_string_pretty(&report)? + "\n")?;
    eprintln!("wrote {}", dir.join(name).display());
    Ok(())
}
