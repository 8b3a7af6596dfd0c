//! Peak host memory per arc of each stage of a run (`cargo bench --bench memory`;
//! `harness = false`; Linux only: it reads `/proc/self/status`).
//!
//! For R-MAT graphs (edge factor 16, undirected) of `MEMORY_SCALES` (default `16,18,20`),
//! one stage at a time in this process: generating; writing and loading a SNAP edge list and
//! a binary CSR; partitioning (random) over `MEMORY_GPUS` (default 8) parts; simulating BFS
//! and PageRank with the bulk-synchronous runtime on that many GPUs of the simulated DGX-1
//! (`dgx-h100x8` for 8, the result not validated); and validating that result against the
//! sequential reference. Before a stage the kernel's peak-RSS counter is reset (`echo 5 >
//! /proc/self/clear_refs`); the stage's cost is its peak RSS (`VmHWM`) minus the RSS before
//! it (the graph it works on included in neither), in bytes per arc of the graph; large
//! allocations are fixed to be their own mappings (`MALLOC_MMAP_THRESHOLD_=65536`), so what a
//! stage frees is returned and the next stage's peak is its own. Prints a table and writes
//! `reports/bench/memory.json` (or `MEMORY_JSON`, relative to the repository).
//!
//! `MEMORY_ALGOS` (default `bfs,pr`) picks the simulated algorithms; `MEMORY_LOAD=0` skips
//! writing and loading the files (at scale 24 the SNAP text alone is several GB). The JSON
//! also gives the process's peak over the whole run (the largest stage peak: every
//! allocation happens inside a stage) and the wall time of all stages.
//!
//!     MEMORY_SCALES=22 MEMORY_GPUS=8 nice -n 19 cargo bench --bench memory
//!     MEMORY_SCALES=24 MEMORY_ALGOS=bfs MEMORY_LOAD=0 MEMORY_JSON=reports/bench/memory_rmat24.json \
//!         nice -n 19 cargo bench --bench memory

use std::path::PathBuf;
use std::time::Instant;
use switchyard::algo::{Algorithm, AlgorithmParams, VertexResult};
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::formats::{self, GraphFormat};
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::partition::partitioner_by_name;
use switchyard::graph::{Csr, LoadOptions, load_graph};
use switchyard::runtime::bsp::BspOptions;
use switchyard::runtime::groute::worklist::WorklistOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// `VmRSS` and `VmHWM` of this process, in bytes.
fn rss_and_peak() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One stage's measurement.
#[derive(serde::Serialize)]
struct Stage {
    scale: u32,
    gpus: u32,
    stage: String,
    arcs: u64,
    vertices: u32,
    /// RSS before the stage, bytes.
    before_bytes: u64,
    /// Peak RSS during the stage, bytes.
    peak_bytes: u64,
    /// (peak - before) / arcs.
    peak_bytes_per_arc: f64,
    /// RSS after the stage minus before (what it keeps), per arc.
    kept_bytes_per_arc: f64,
    seconds: f64,
}

/// What one stage took: RSS before, peak and after (bytes), and seconds.
struct Measure {
    before: u64,
    peak: u64,
    after: u64,
    seconds: f64,
}

/// Runs `f` with the peak-RSS counter reset first.
fn measure<T>(f: impl FnOnce() -> T) -> (T, Measure) {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak RSS (Linux 4.0+)");
    let (before, _) = rss_and_peak();
    let started = Instant::now();
    let out = f();
    let seconds = started.elapsed().as_secs_f64();
    let (after, peak) = rss_and_peak();
    (out, Measure { before, peak, after, seconds })
}

/// Records a measured stage of the run on `graph`.
fn record(rows: &mut Vec<Stage>, scale: u32, gpus: u32, graph: &Csr, name: &str, m: Measure) {
    let arcs = graph.num_arcs();
    let per_arc = |b: u64| b as f64 / arcs.max(1) as f64;
    let row = Stage {
        scale,
        gpus,
        stage: name.to_string(),
        arcs,
        vertices: graph.num_vertices(),
        before_bytes: m.before,
        peak_bytes: m.peak,
        peak_bytes_per_arc: per_arc(m.peak.saturating_sub(m.before)),
        kept_bytes_per_arc: per_arc(m.after.saturating_sub(m.before)),
        seconds: m.seconds,
    };
    println!(
        "scale {scale:>2}  {name:<18} {:>7.1} B/arc peak  {:>6.1} B/arc kept  peak {:>7.0} MiB  {:>8.2} s",
        row.peak_bytes_per_arc,
        row.kept_bytes_per_arc,
        m.peak as f64 / f64::from(1u32 << 20),
        m.seconds
    );
    rows.push(row);
}

fn spec(algorithm: Algorithm, gpus: u32, source: u32) -> RunSpec {
    RunSpec {
        gpus,
        runtime: RuntimeKind::Bsp,
        algorithm,
        params: AlgorithmParams { source, ..AlgorithmParams::default() },
        partitioner: "random".into(),
        seed: 1,
        bsp: BspOptions::default(),
        groute: WorklistOptions::default(),
        gum: Default::default(),
        atos: Default::default(),
        validate: false,
        command_line: vec!["bench memory".into()],
    }
}

/// glibc serves large allocations from its heap once big blocks have been freed (its mmap
/// threshold grows), so a stage could reuse memory an earlier one freed and look free of
/// cost. With the threshold fixed at 64 KiB every large buffer is its own mapping, returned
/// on free: the bench re-runs itself so.
const MMAP_THRESHOLD: (&str, &str) = ("MALLOC_MMAP_THRESHOLD_", "65536");

fn main() {
    if std::env::var_os(MMAP_THRESHOLD.0).is_none() {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args_os().skip(1))
            .env(MMAP_THRESHOLD.0, MMAP_THRESHOLD.1)
            .status()
            .expect("the bench re-runs itself");
        std::process::exit(status.code().unwrap_or(1));
    }
    let scales: Vec<u32> = std::env::var("MEMORY_SCALES")
        .unwrap_or_else(|_| "16,18,20".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let gpus: u32 = std::env::var("MEMORY_GPUS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let algorithms: Vec<Algorithm> = std::env::var("MEMORY_ALGOS")
        .unwrap_or_else(|_| "bfs,pr".into())
        .split(',')
        .map(|name| match name.trim() {
            "bfs" => Algorithm::Bfs,
            "pr" => Algorithm::Pr,
            other => panic!("MEMORY_ALGOS: `{other}` is not bfs or pr"),
        })
        .collect();
    let load = std::env::var("MEMORY_LOAD").map_or(true, |v| v != "0");
    let all_started = Instant::now();
    let machine = if gpus <= 8 { "dgx-h100x8" } else { "summit-ib-x8" };
    let topology = Topology::bundled(machine).expect("bundled machine");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rows = Vec::new();
    for &scale in &scales {
        let spec_text = format!("rmat:scale={scale},ef=16,seed=1");
        let generator = GeneratorSpec::parse(&spec_text).expect("spec");
        let (graph, m) = measure(|| generate(&generator).expect("generate"));
        record(&mut rows, scale, gpus, &graph, "generate", m);
        if load {
            let snap: PathBuf = dir.path().join(format!("g{scale}.txt"));
            let binary: PathBuf = dir.path().join(format!("g{scale}.bin"));
            for (path, format) in [(&snap, GraphFormat::Snap), (&binary, GraphFormat::Binary)] {
                let file = std::fs::File::create(path).expect("temp file");
                formats::write_graph(std::io::BufWriter::new(file), format, &graph, None, "bench")
                    .expect("write");
            }
            let (loaded, m) = measure(|| load_graph(&snap, &LoadOptions::default()).expect("snap"));
            drop(loaded);
            record(&mut rows, scale, gpus, &graph, "load snap text", m);
            let options =
                LoadOptions { format: Some(GraphFormat::Binary), ..LoadOptions::default() };
            let (loaded, m) = measure(|| load_graph(&binary, &options).expect("load binary"));
            drop(loaded);
            record(&mut rows, scale, gpus, &graph, "load binary csr", m);
            std::fs::remove_file(&snap).ok();
            std::fs::remove_file(&binary).ok();
        }
        let (partition, m) = measure(|| {
            partitioner_by_name("random", 1).expect("random").partition(&graph, gpus).expect("p")
        });
        drop(partition);
        record(&mut rows, scale, gpus, &graph, "partition random", m);
        let hub = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
        let setup = BackendSetup::Sim(SimSetup {
            topology: topology.clone(),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        });
        for &algorithm in &algorithms {
            let spec = spec(algorithm, gpus, hub);
            let (output, m) =
                measure(|| run(&graph, &spec_text, &spec, &setup).expect("simulated run"));
            record(&mut rows, scale, gpus, &graph, &format!("simulate {}", algorithm.name()), m);
            let instance = algorithm.instance(&spec.params);
            let (report, m) = measure(|| {
                let result = VertexResult { values: &output.values, aux: output.aux.as_deref() };
                instance.validate(&graph, result).expect("validation runs")
            });
            record(&mut rows, scale, gpus, &graph, &format!("validate {}", algorithm.name()), m);
            assert!(report.is_ok(), "scale {scale} {}: {report}", algorithm.name());
        }
    }
    let wall_seconds = all_started.elapsed().as_secs_f64();
    let process_peak_bytes = rows.iter().map(|r| r.peak_bytes).max().unwrap_or(0);
    println!(
        "process peak {:.2} GiB, {wall_seconds:.1} s in all",
        process_peak_bytes as f64 / f64::from(1u32 << 30)
    );
    let json = serde_json::json!({
        "bench": "memory",
        "what": "peak host memory (VmHWM) of each stage minus the RSS before it, per arc of \
                 an R-MAT graph (edge factor 16, undirected: 2 arcs per edge)",
        "machine": "the shared 2-core build machine (load from other builds varies)",
        "process_peak_bytes": process_peak_bytes,
        "wall_seconds": wall_seconds,
        "rows": rows,
    });
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(std::env::var("MEMORY_JSON").unwrap_or_else(|_| "reports/bench/memory.json".into()));
    std::fs::write(&out, serde_json::to_string_pretty(&json).expect("json") + "\n")
        .expect("write reports/bench/memory.json");
    println!("wrote {}", out.display());
}
