//! `switchyard calibrate`: measures the GPUs of the machine it runs on and writes a
//! topology file (with its own GPU model) that the simulator loads (`machine`), and runs the
//! bulk-synchronous runtime over algorithms and GPU counts on one graph loaded once, on real
//! GPUs or on the simulator, writing one JSON row per run with the time, GTEPS, bytes per
//! link and the run's memory-bandwidth floor (`runs`). The predicted-versus-measured table
//! of `reports/calibration.md` is `runs --backend sim --topology CALIBRATED.toml` next to
//! `runs --backend cuda` on the same graph.

use super::graph_source::{GraphArgs, resolve_graph};
use super::run::RunOptions;
use anyhow::{Context, bail};
use serde::Serialize;
use std::path::PathBuf;
use switchyard::algo::Algorithm;
use switchyard::driver::{BackendSetup, CudaSetup, RunOutput, RuntimeKind, trace::chrome_trace};
use switchyard_sim::topology::Topology;

/// `switchyard calibrate` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum CalibrateCommand {
    /// Measure this machine's GPUs (peer, host and memory bandwidth, latencies, launch
    /// overhead, per-edge throughput) and write a topology file for the simulator.
    Machine(MachineArgs),
    /// Run algorithms over GPU counts on one graph (loaded once) and write one JSON row per
    /// run: time, GTEPS, bytes per link, bandwidth floor.
    Runs(Box<RunsArgs>),
    /// BFS by Graph500's kernel 2 rules: 64 random search keys of non-zero degree, each
    /// search validated, harmonic mean TEPS over the input edges of the reached component.
    Graph500(Box<super::graph500::Graph500Args>),
}

/// Arguments of `calibrate machine`.
#[derive(clap::Args, Debug)]
pub struct MachineArgs {
    /// GPUs to measure (the first N; 0: all).
    #[arg(long, default_value_t = 0)]
    gpus: u32,
    /// Topology file to write.
    #[arg(long, default_value = "calibrated.toml")]
    topology_out: PathBuf,
    /// Also write the raw measurements as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// R-MAT scale of the graph whose BFS and PageRank runs fit the per-edge costs.
    #[arg(long, default_value_t = 22)]
    fit_scale: u32,
}

/// Where `calibrate runs` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RunsBackend {
    /// Real GPUs.
    Cuda,
    /// The simulator, on `--topology`.
    Sim,
}

/// Which runs `calibrate runs` validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidatePolicy {
    /// Every run.
    All,
    /// The first GPU count of each algorithm.
    First,
    /// None.
    None,
}

/// Arguments of `calibrate runs`.
#[derive(clap::Args, Debug)]
pub struct RunsArgs {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    options: RunOptions,
    /// Algorithms, comma-separated (bfs, dobfs, sssp, cc, pr, pr-residual).
    #[arg(long, value_delimiter = ',', default_value = "bfs,sssp,cc,pr")]
    algos: Vec<Algorithm>,
    /// GPU counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    gpu_counts: Vec<u32>,
    /// Runtime of every run.
    #[arg(long, value_enum, default_value = "bsp")]
    runtime: RuntimeKind,
    /// With --backend cuda: run each GPU count as logical GPUs on this machine's GPUs
    /// (several share one where it has fewer; checks multi-GPU bookkeeping, not scaling).
    #[arg(long)]
    logical_gpus: bool,
    /// Real GPUs or the simulator.
    #[arg(long, value_enum, default_value = "cuda")]
    backend: RunsBackend,
    /// Topology of the simulator (a bundled name or a TOML file, e.g. one `calibrate
    /// machine` wrote); on real GPUs only its name is reported.
    #[arg(long, default_value = "hgx-h200x4")]
    topology: String,
    /// Which runs to validate against the references.
    #[arg(long, value_enum, default_value = "all")]
    validate: ValidatePolicy,
    /// Start BFS and SSSP from the highest-degree vertex instead of --source.
    #[arg(long)]
    hub_source: bool,
    /// Device memory bandwidth for the floors, GB/s (default: measured on GPU 0 with a
    /// 1 GiB device-to-device copy, or the simulator's GPU model).
    #[arg(long)]
    memory_bandwidth_gb_s: Option<f64>,
    /// L2 size for the floors, MiB (default: GPU 0's, or 50 on the simulator).
    #[arg(long)]
    l2_mib: Option<f64>,
    /// Write the rows here (rewritten after every run, so a cut-off job keeps its rows).
    #[arg(long)]
    json: PathBuf,
    /// A label for the graph in the rows (default: its name or spec).
    #[arg(long)]
    label: Option<String>,
    /// Also write each run's trace here, as `LABEL-RUNTIME-ALGO-gGPUS.json` (simulator:
    /// kernels with the counts the cost model charged, and transfers; CUDA: each kernel's
    /// span from CUDA events), for `scripts/calib_fit.py`.
    #[arg(long)]
    trace_dir: Option<PathBuf>,
}

/// Runs `switchyard calibrate`.
pub fn run(command: CalibrateCommand) -> anyhow::Result<()> {
    match command {
        CalibrateCommand::Machine(args) => machine(args),
        CalibrateCommand::Runs(args) => runs(*args),
        CalibrateCommand::Graph500(args) => super::graph500::graph500(*args),
    }
}

/// One run of `calibrate runs`.
#[derive(Debug, Serialize)]
struct RunRow {
    graph: String,
    vertices: u64,
    arcs: u64,
    algo: String,
    /// Runtime and its variant (`bsp`, `groute`, `groute+fused+prio10`, ...).
    runtime: String,
    gpus: u32,
    backend: String,
    topology: String,
    time_ms: f64,
    supersteps: u32,
    /// PageRank (LDBC): time of one iteration.
    per_iteration_ms: Option<f64>,
    edges_visited: u64,
    /// Work items (frontier entries, or worklist items the workers consumed).
    work_items: u64,
    gteps: f64,
    messages: u64,
    bytes_sent: u64,
    links: Vec<(String, u64)>,
    /// Per GPU: time its kernels ran, ms (the busy time that explains a run's scaling).
    gpu_kernel_ms: Vec<f64>,
    /// Per GPU: time it sat idle waiting (for peers, copies or the host), ms.
    gpu_idle_ms: Vec<f64>,
    floor_bytes: f64,
    floor_ms: f64,
    floor_rule: String,
    time_over_floor: f64,
    memory_bandwidth_gb_s: f64,
    validation: String,
}

/// Bytes a run must move through device memory at the least (see `reports/gpu_bench.md`):
/// the offset array once per sweep, each visited arc's target (and weight) once, and the
/// per-vertex values either once each (the vector fits in L2) or one 32-byte sector per
/// visited arc (it does not: every gather misses). PageRank adds its per-vertex arrays.
fn floor_bytes(
    algo: Algorithm,
    n: u64,
    m: u64,
    visited: u64,
    iterations: u32,
    l2: f64,
) -> (f64, String) {
    let (n, m, e) = (n as f64, m as f64, visited as f64);
    let fits = 4.0 * n <= l2;
    let gathers = |edges: f64| if fits { 8.0 * n } else { 32.0 * edges };
    let rule =
        if fits { "values fit in L2: 8 B per vertex" } else { "values miss L2: 32 B per arc" };
    let bytes = match algo {
        Algorithm::Bfs | Algorithm::Dobfs | Algorithm::Cc => 8.0 * n + 4.0 * e + gathers(e),
        Algorithm::Sssp => 8.0 * n + 8.0 * e + gathers(e),
        Algorithm::PrResidual => 8.0 * n + 4.0 * e + gathers(e) + 8.0 * n,
        Algorithm::Pr => {
            let per = 8.0 * n + 4.0 * m + 8.0 * n + gathers(m) + 24.0 * n;
            per * f64::from(iterations.max(1))
        }
        // Per iteration: the arcs and their labels, each arc's table slot written (key and
        // count) and both of its slots read back.
        Algorithm::Cdlp => {
            let per = 8.0 * n + 4.0 * m + gathers(m) + 8.0 * m + 16.0 * m;
            per * f64::from(iterations.max(1))
        }
        // Every arc walked in the intersections: its target and flag.
        Algorithm::Lcc => 8.0 * n + 8.0 * e + 8.0 * n,
        // One assignment and one check per vertex: every arc's target and its colour, twice.
        Algorithm::Color => 2.0 * (8.0 * n + 4.0 * e + gathers(e)),
    };
    (
        bytes,
        format!(
            "offsets 8 B/vertex, targets 4 B/arc{}, {rule}",
            if algo == Algorithm::Sssp { ", weights 4 B/arc" } else { "" }
        ),
    )
}

fn runs(args: RunsArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    super::output::check_output_path("--json", &args.json)?;
    if args.backend == RunsBackend::Cuda {
        // Logical GPUs share whatever GPUs the machine has: one is enough.
        let most = args.gpu_counts.iter().copied().max().unwrap_or(1);
        switchyard::backend::cuda::check_available(if args.logical_gpus { 1 } else { most })?;
    }
    let topology = Topology::open(&args.topology)
        .with_context(|| format!("opening topology `{}`", args.topology))?;
    let resolved = resolve_graph(&args.graph, args.options.seed)?;
    let (graph, name) = (&resolved.csr, resolved.name.clone());
    // Bad parameters (a --source the file does not have) fail before any output.
    // `--source` is the file's vertex id, as for `switchyard run`.
    let params = args
        .algos
        .iter()
        .map(|&algo| Ok((algo, args.options.params_from_file(algo, &resolved)?.0)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let label = args.label.clone().unwrap_or(name.clone());
    eprintln!(
        "graph {label}: {} vertices, {} arcs, loaded in {:.1} s",
        graph.num_vertices(),
        graph.num_arcs(),
        started.elapsed().as_secs_f64()
    );
    let summary = switchyard::graph::summary::summarize(graph);
    let (bandwidth, l2) = machine_facts(&args, &topology)?;
    let hub = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
    let mut rows: Vec<RunRow> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    println!(
        "{:<12} {:<22} {:>4} {:>11} {:>10} {:>8} {:>11} {:>10} {:>7}  validation",
        "algo",
        "runtime",
        "gpus",
        "time ms",
        "per-it ms",
        "GTEPS",
        "bytes sent",
        "floor ms",
        "x floor"
    );
    for &(algo, params) in &params {
        for (i, &gpus) in args.gpu_counts.iter().enumerate() {
            let mut spec = args.options.spec_with(
                algo,
                args.runtime,
                gpus,
                params,
                std::env::args().collect(),
            )?;
            if args.hub_source {
                spec.params.source = hub;
            }
            let setup = match args.backend {
                RunsBackend::Cuda => BackendSetup::Cuda(CudaSetup {
                    logical_gpus: args.logical_gpus,
                    trace: args.trace_dir.is_some(),
                }),
                RunsBackend::Sim => BackendSetup::Sim(args.options.sim_setup(
                    topology.clone(),
                    gpus,
                    args.trace_dir.is_some(),
                )?),
            };
            spec.validate = match args.validate {
                ValidatePolicy::All => true,
                ValidatePolicy::First => i == 0,
                ValidatePolicy::None => false,
            };
            let t0 = std::time::Instant::now();
            let result =
                switchyard::driver::run_with_summary(graph, &label, Some(&summary), &spec, &setup);
            // A failed run is a row too: the others still run.
            let output: RunOutput = match result {
                Ok(output) => output,
                Err(e) => {
                    println!("{:<12} {gpus:>4} ERROR: {e}", algo.name());
                    failures.push(format!("{} on {gpus} GPUs: {e}", algo.name()));
                    continue;
                }
            };
            if let (Some(dir), Some(spans)) = (&args.trace_dir, &output.trace) {
                let path = dir.join(format!(
                    "{}-{}-{}-g{gpus}.json",
                    label.replace(['/', ' '], "_"),
                    output.report.runtime_label().replace(['/', ' ', '+'], "_"),
                    algo.name()
                ));
                std::fs::create_dir_all(dir)
                    .and_then(|()| {
                        std::fs::write(&path, serde_json::to_string(&chrome_trace(spans))?)
                    })
                    .with_context(|| format!("writing the trace {}", path.display()))?;
            }
            let r = &output.report;
            if args.backend == RunsBackend::Cuda
                && rows.is_empty()
                && let Some(warning) = topology.calibration_mismatch(&r.topology.name)
            {
                eprintln!("{warning}");
            }
            let time_ms = r.time_ps as f64 / 1e9;
            let iterations = if algo == Algorithm::Pr { r.supersteps } else { 1 };
            let (fb, rule) = floor_bytes(
                algo,
                r.graph.summary.vertices,
                r.graph.summary.arcs,
                r.work.edges_visited,
                iterations,
                l2,
            );
            let floor_ms = fb / (bandwidth * f64::from(gpus)) * 1e3;
            let validation = match &r.validation {
                None => "skipped".to_string(),
                Some(v) if v.is_ok() => "passed".to_string(),
                Some(v) => format!("FAILED: {v}"),
            };
            let row = RunRow {
                graph: label.clone(),
                vertices: r.graph.summary.vertices,
                arcs: r.graph.summary.arcs,
                algo: algo.name().to_string(),
                runtime: r.runtime_label(),
                gpus,
                backend: r.backend.name.clone(),
                topology: r.topology.name.clone(),
                time_ms,
                supersteps: r.supersteps,
                per_iteration_ms: (algo == Algorithm::Pr && r.supersteps > 0)
                    .then(|| time_ms / f64::from(r.supersteps)),
                edges_visited: r.work.edges_visited,
                work_items: r.work.work_items,
                gteps: r.gteps,
                messages: r.work.messages,
                bytes_sent: r.work.bytes_sent,
                links: r.links.iter().map(|l| (l.name.clone(), l.bytes)).collect(),
                gpu_kernel_ms: r.gpus.iter().map(|g| g.kernel_ps as f64 / 1e9).collect(),
                gpu_idle_ms: r.gpus.iter().map(|g| g.idle_ps as f64 / 1e9).collect(),
                floor_bytes: fb,
                floor_ms,
                floor_rule: rule,
                time_over_floor: if floor_ms > 0.0 { time_ms / floor_ms } else { 0.0 },
                memory_bandwidth_gb_s: bandwidth / 1e9,
                validation,
            };
            println!(
                "{:<12} {:<22} {:>4} {:>11.3} {:>10} {:>8.2} {:>11} {:>10.3} {:>7.2}  {} ({:.0} s)",
                row.algo,
                row.runtime,
                gpus,
                time_ms,
                row.per_iteration_ms.map_or("-".to_string(), |p| format!("{p:.3}")),
                row.gteps,
                row.bytes_sent,
                floor_ms,
                row.time_over_floor,
                row.validation,
                t0.elapsed().as_secs_f64()
            );
            rows.push(row);
            let json = serde_json::to_string_pretty(&rows)?;
            std::fs::write(&args.json, json + "\n")
                .with_context(|| format!("writing {}", args.json.display()))?;
        }
    }
    if !failures.is_empty() {
        bail!("{} runs failed: {}", failures.len(), failures.join("; "));
    }
    if let Some(bad) = rows.iter().find(|r| r.validation.starts_with("FAILED")) {
        bail!("validation failed for {} on {} GPUs: {}", bad.algo, bad.gpus, bad.validation);
    }
    Ok(())
}

/// Memory bandwidth (bytes per second) and L2 size (bytes) for the floors.
fn machine_facts(args: &RunsArgs, topology: &Topology) -> anyhow::Result<(f64, f64)> {
    let l2_given = args.l2_mib.map(|m| m * 1024.0 * 1024.0);
    if let Some(bw) = args.memory_bandwidth_gb_s {
        return Ok((bw * 1e9, l2_given.unwrap_or(50.0 * 1024.0 * 1024.0)));
    }
    match args.backend {
        RunsBackend::Sim => {
            let bw =
                topology.gpus.first().map_or(1e12, |g| g.model.memory_bandwidth_bytes_per_s as f64);
            Ok((bw, l2_given.unwrap_or(50.0 * 1024.0 * 1024.0)))
        }
        RunsBackend::Cuda => cuda_facts(l2_given),
    }
}

#[cfg(feature = "cuda")]
fn cuda_facts(l2_given: Option<f64>) -> anyhow::Result<(f64, f64)> {
    use switchyard::backend::DeviceId;
    use switchyard::backend::cuda::CudaBackend;
    let mut b = CudaBackend::open(1, switchyard::driver::builtin_kernels())?;
    let bytes = 1usize << 30;
    let s = b.measure_copy_seconds(0, 0, bytes, 3)?;
    let bw = 2.0 * bytes as f64 / s;
    let l2 = l2_given.unwrap_or(b.l2_bytes(DeviceId(0)) as f64);
    eprintln!(
        "memory bandwidth for the floors: {:.0} GB/s (1 GiB device-to-device copy, read + \
         write), L2 {:.0} MiB",
        bw / 1e9,
        l2 / 1048576.0
    );
    Ok((bw, l2))
}

#[cfg(not(feature = "cuda"))]
fn cuda_facts(_: Option<f64>) -> anyhow::Result<(f64, f64)> {
    bail!(switchyard::backend::cuda::UNAVAILABLE)
}

#[cfg(not(feature = "cuda"))]
fn machine(_: MachineArgs) -> anyhow::Result<()> {
    bail!(switchyard::backend::cuda::UNAVAILABLE)
}

#[cfg(feature = "cuda")]
fn machine(args: MachineArgs) -> anyhow::Result<()> {
    super::output::check_output_path("--topology-out", &args.topology_out)?;
    if let Some(json) = &args.json {
        super::output::check_output_path("--json", json)?;
    }
    measure::machine(args)
}

#[cfg(feature = "cuda")]
mod measure {
    use super::MachineArgs;
    use anyhow::Context;
    use serde::Serialize;
    use std::fmt::Write as _;
    use std::time::Instant;
    use switchyard::algo::{Algorithm, AlgorithmParams};
    use switchyard::backend::cuda::CudaBackend;
    use switchyard::backend::{Backend, BufferSlice, DeviceId, ElemType, StreamPriority, Token};
    use switchyard::driver::{RunSpec, RuntimeKind, builtin_kernels, execute, prepare};
    use switchyard::graph::generate::{GeneratorSpec, generate};
    use switchyard::runtime::Outcome;
    use switchyard::runtime::bsp::BspOptions;
    use switchyard::runtime::groute::worklist::WorklistOptions;

    /// Copy sizes of the peer sweep.
    const SIZES: [usize; 5] = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20];

    #[derive(Debug, Serialize)]
    struct Pair {
        from: u32,
        to: u32,
        /// `(bytes, GB/s)` per size, event-timed (GPU time), best of five.
        bandwidth_gb_s: Vec<(usize, f64)>,
        /// 4 KiB copy, GPU time, microseconds.
        small_copy_us: f64,
        /// 4 KiB copy issued and its completion observed by the host, median, microseconds.
        small_copy_round_trip_us: f64,
    }

    #[derive(Debug, Serialize)]
    struct Measurements {
        gpu: String,
        gpus: u32,
        sm_count: u32,
        memory_bytes: u64,
        l2_bytes: u64,
        device_copy_gb_s: f64,
        host_to_device_gb_s: f64,
        device_to_host_gb_s: f64,
        launch_issue_us: f64,
        kernel_back_to_back_us: f64,
        launch_round_trip_us: f64,
        pairs: Vec<Pair>,
        fit_graph: String,
        bfs_ms: f64,
        bfs_supersteps: u32,
        bfs_edges: u64,
        bfs_items: u64,
        pr_ms: f64,
        pr_iterations: u32,
        pr_arcs: u64,
        pr_vertices: u64,
        edge_ps: f64,
        item_ps: f64,
        atomic_ps: f64,
        copy_setup_ns: f64,
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    pub fn machine(args: MachineArgs) -> anyhow::Result<()> {
        let present = switchyard::backend::cuda::gpus_present();
        switchyard::backend::cuda::check_available(present.max(1))?;
        let gpus = if args.gpus == 0 { present } else { args.gpus };
        let mut b = CudaBackend::open(gpus, builtin_kernels())?;
        let info = b.device_info(DeviceId(0));
        eprintln!("measuring {gpus} x {}", info.name);
        let s0 = b.create_stream(DeviceId(0), StreamPriority::Normal)?;

        // Device memory: a 1 GiB device-to-device copy reads and writes every byte.
        let gib = 1usize << 30;
        let device_copy = 2.0 * gib as f64 / b.measure_copy_seconds(0, 0, gib, 3)?;

        // Host <-> device between pinned host memory and the GPU, 256 MiB, DMA alone.
        let size = 256usize << 20;
        let h2d = size as f64 / b.measure_host_copy_seconds(0, size, true, 3)?;
        let d2h = size as f64 / b.measure_host_copy_seconds(0, size, false, 3)?;

        // Launches: host issue cost, back-to-back kernel floor, round trip.
        b.launch_noops(s0, 100)?;
        let t = Instant::now();
        b.launch_noops(s0, 2000)?;
        let issue = t.elapsed().as_secs_f64() / 2000.0;
        let back_to_back = b.time_on(s0, |me| me.launch_noops(s0, 2000))? / 2000.0;
        let mut trips = Vec::new();
        for rep in 0..200u64 {
            let t = Instant::now();
            b.launch_noops(s0, 1)?;
            b.host_callback(s0, Token(1000 + rep))?;
            while b.next_completion()?.is_some() {}
            trips.push(t.elapsed().as_secs_f64());
        }
        let round_trip = median(trips);

        // Peer pairs.
        let mut pairs = Vec::new();
        for from in 0..gpus {
            for to in 0..gpus {
                if from == to {
                    continue;
                }
                let mut bandwidth = Vec::new();
                let mut small = 0.0;
                for &size in &SIZES {
                    let s = b.measure_copy_seconds(from, to, size, 5)?;
                    if size == SIZES[0] {
                        small = s;
                    }
                    bandwidth.push((size, size as f64 / s / 1e9));
                }
                let src = b.alloc(DeviceId(from), ElemType::U32, 1024, "probe")?;
                let dst = b.alloc(DeviceId(to), ElemType::U32, 1024, "probe")?;
                let s = b.create_stream(DeviceId(from), StreamPriority::Normal)?;
                let mut trips = Vec::new();
                for rep in 0..100u64 {
                    let t = Instant::now();
                    b.copy(
                        s,
                        BufferSlice::new(src, 0, 1024),
                        BufferSlice::new(dst, 0, 1024),
                        Some(Token(rep)),
                    )?;
                    while b.next_completion()?.is_some() {}
                    trips.push(t.elapsed().as_secs_f64());
                }
                b.free(src)?;
                b.free(dst)?;
                pairs.push(Pair {
                    from,
                    to,
                    bandwidth_gb_s: bandwidth,
                    small_copy_us: small * 1e6,
                    small_copy_round_trip_us: median(trips) * 1e6,
                });
            }
        }
        let l2 = b.l2_bytes(DeviceId(0));
        drop(b);

        // Per-edge costs, fitted from a BFS and a PageRank run of the bulk-synchronous
        // runtime on one GPU (whole-run times less the measured per-superstep overheads).
        let spec = GeneratorSpec::parse(&format!("rmat:scale={},ef=16,seed=1", args.fit_scale))?;
        let graph = generate(&spec)?;
        let hub = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
        let params = AlgorithmParams {
            source: hub,
            damping: 0.85,
            iterations: 10,
            epsilon: 1e-4,
            ..AlgorithmParams::default()
        };
        let fit = |algorithm| -> anyhow::Result<Outcome> {
            let spec = RunSpec {
                gpus: 1,
                runtime: RuntimeKind::Bsp,
                algorithm,
                params,
                partitioner: "random".into(),
                seed: 1,
                bsp: BspOptions::default(),
                groute: WorklistOptions::default(),
                atos: Default::default(),
                gum: Default::default(),
                validate: false,
                command_line: Vec::new(),
            };
            let prepared = prepare(&graph, &spec)?;
            let mut b = CudaBackend::open(1, builtin_kernels())?;
            Ok(execute(&mut b, &prepared, &spec)?)
        };
        let bfs = fit(Algorithm::Bfs)?;
        let pr = fit(Algorithm::Pr)?;
        // A superstep: four launches (advance, split, merge, apply) and two host reads.
        let overhead = 4.0 * issue.max(back_to_back) + 2.0 * round_trip;
        let bfs_s = bfs.compute_time_ps as f64 / 1e12;
        let pr_s = pr.compute_time_ps as f64 / 1e12;
        let bfs_items: u64 = bfs.work.frontier_sizes.iter().sum();
        let bfs_kernels = (bfs_s - f64::from(bfs.supersteps) * overhead).max(bfs_s * 0.1);
        // BFS: items * item_ps + edges * edge_ps with item_ps / edge_ps = 27 / 19, the
        // shared H200 model's ratio.
        let edge_s = bfs_kernels / (bfs.work.edges_visited as f64 + bfs_items as f64 * 27.0 / 19.0);
        let item_s = edge_s * 27.0 / 19.0;
        let per_iter = (pr_s - f64::from(pr.supersteps) * overhead).max(pr_s * 0.1)
            / f64::from(pr.supersteps.max(1));
        let arcs = graph.num_arcs();
        let nv = graph.num_vertices() as f64;
        // PageRank push: vertices (push and apply) * item_ps + arcs * (edge_ps + atomic_ps).
        let atomic_s =
            ((per_iter - 2.0 * nv * item_s - arcs as f64 * edge_s) / arcs as f64).max(0.0);

        let peer_bw: Vec<f64> =
            pairs.iter().map(|p| p.bandwidth_gb_s.last().map_or(0.0, |x| x.1)).collect();
        let slowest_peer = peer_bw.iter().copied().fold(f64::INFINITY, f64::min);
        let small_trip = median(
            pairs
                .iter()
                .map(|p| p.small_copy_round_trip_us)
                .collect::<Vec<_>>()
                .into_iter()
                .chain([0.0])
                .collect(),
        );
        let sync_ns = (round_trip - issue - back_to_back).max(0.0) * 1e9;
        let copy_setup_ns = if pairs.is_empty() {
            7100.0
        } else {
            (small_trip * 1e3 - sync_ns - 4096.0 / (slowest_peer * 1e9) * 1e9 - 1000.0).max(0.0)
        };
        let m = Measurements {
            gpu: info.name.clone(),
            gpus,
            sm_count: info.sm_count,
            memory_bytes: info.memory_bytes,
            l2_bytes: l2,
            device_copy_gb_s: device_copy / 1e9,
            host_to_device_gb_s: h2d / 1e9,
            device_to_host_gb_s: d2h / 1e9,
            launch_issue_us: issue * 1e6,
            kernel_back_to_back_us: back_to_back * 1e6,
            launch_round_trip_us: round_trip * 1e6,
            pairs,
            fit_graph: spec.to_string(),
            bfs_ms: bfs_s * 1e3,
            bfs_supersteps: bfs.supersteps,
            bfs_edges: bfs.work.edges_visited,
            bfs_items,
            pr_ms: pr_s * 1e3,
            pr_iterations: pr.supersteps,
            pr_arcs: arcs,
            pr_vertices: graph.num_vertices().into(),
            edge_ps: edge_s * 1e12,
            item_ps: item_s * 1e12,
            atomic_ps: atomic_s * 1e12,
            copy_setup_ns,
        };
        let toml = topology_toml(&m, slowest_peer, sync_ns);
        std::fs::write(&args.topology_out, &toml)
            .with_context(|| format!("writing {}", args.topology_out.display()))?;
        if let Some(path) = &args.json {
            std::fs::write(path, serde_json::to_string_pretty(&m)? + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
        println!(
            "{} x{}: device copy {:.0} GB/s, host->device {:.1} GB/s, device->host {:.1} GB/s",
            m.gpu, m.gpus, m.device_copy_gb_s, m.host_to_device_gb_s, m.device_to_host_gb_s
        );
        println!(
            "launch: issue {:.2} us, back-to-back {:.2} us, round trip {:.2} us",
            m.launch_issue_us, m.kernel_back_to_back_us, m.launch_round_trip_us
        );
        for p in &m.pairs {
            let bw: Vec<String> =
                p.bandwidth_gb_s.iter().map(|(s, g)| format!("{}K {:.1}", s >> 10, g)).collect();
            println!(
                "gpu{}->gpu{}: GB/s at {}; 4 KiB copy {:.1} us (round trip {:.1} us)",
                p.from,
                p.to,
                bw.join(", "),
                p.small_copy_us,
                p.small_copy_round_trip_us
            );
        }
        println!(
            "fit on {}: bfs {:.3} ms ({} supersteps), pr {:.3} ms ({} iterations): edge {:.1} \
             ps, item {:.1} ps, atomic {:.1} ps",
            m.fit_graph,
            m.bfs_ms,
            m.bfs_supersteps,
            m.pr_ms,
            m.pr_iterations,
            m.edge_ps,
            m.item_ps,
            m.atomic_ps
        );
        println!("wrote {}", args.topology_out.display());
        Ok(())
    }

    /// The topology file (schema: topologies/SCHEMA.md) of the measured machine: one
    /// socket, the GPUs on PCIe at the measured host rate and, with peers, on one NVSwitch
    /// whose links carry the slowest measured peer rate; the GPU model is measured.
    fn topology_toml(m: &Measurements, slowest_peer_gb_s: f64, sync_ns: f64) -> String {
        let mut t = String::new();
        let model = format!("calibrated-{}", m.gpu.replace(' ', "-"));
        let _ =
            writeln!(t, "# Written by `switchyard calibrate machine` on {} x {}.", m.gpus, m.gpu);
        let _ =
            writeln!(t, "# Every number below is measured on that machine unless marked estimate.");
        let _ = writeln!(
            t,
            "name = \"calibrated-{}x{}\"",
            m.gpu.replace(' ', "-").to_lowercase(),
            m.gpus
        );
        let _ = writeln!(
            t,
            "description = \"Measured by switchyard calibrate: {} x {}\"",
            m.gpus, m.gpu
        );
        // Using this file on another GPU warns (Topology::calibration_mismatch).
        let _ = writeln!(t, "measured_on = \"{}\"\n", m.gpu);
        let _ = writeln!(t, "[gpu_model.{model}]");
        let _ = writeln!(t, "sm_count = {}", m.sm_count);
        let _ =
            writeln!(t, "resident_threads_per_sm = 2048   # Hopper occupancy limit (datasheet)");
        let _ = writeln!(t, "memory_mib = {}", m.memory_bytes >> 20);
        let _ = writeln!(
            t,
            "memory_bandwidth_gb_s = {:.1}   # 1 GiB device copy, read + write",
            m.device_copy_gb_s
        );
        let _ = writeln!(
            t,
            "launch_overhead_ns = {:.1}   # host issue of an empty kernel",
            m.launch_issue_us * 1e3
        );
        let _ = writeln!(
            t,
            "sync_overhead_ns = {:.1}   # launch + observe round trip less issue and kernel",
            sync_ns
        );
        let _ = writeln!(
            t,
            "kernel_min_ns = {:.1}   # empty kernels back to back",
            m.kernel_back_to_back_us * 1e3
        );
        let _ = writeln!(t, "dependent_access_ns = 1200.0   # estimate (shared H200 model)");
        let _ = writeln!(
            t,
            "item_ps = {:.2}   # fitted: bfs on {} (item/edge ratio of the shared model)",
            m.item_ps, m.fit_graph
        );
        let _ = writeln!(t, "edge_ps = {:.2}   # fitted: bfs on {}", m.edge_ps, m.fit_graph);
        let _ =
            writeln!(t, "atomic_ps = {:.2}   # fitted: pagerank on {}", m.atomic_ps, m.fit_graph);
        let _ = writeln!(
            t,
            "copy_setup_ns = {:.1}   # 4 KiB peer copy round trip less sync, latency, bytes\n",
            m.copy_setup_ns
        );
        let pcie_lane = m.host_to_device_gb_s.min(m.device_to_host_gb_s) / 16.0;
        let _ = writeln!(t, "[link_type.host]\nkind = \"pcie\"");
        let _ = writeln!(
            t,
            "bandwidth_gb_s = {pcie_lane:.3}   # pinned host<->device, slower direction, / 16 lanes"
        );
        let _ = writeln!(
            t,
            "latency_ns = 150.0   # estimate\nmax_payload_bytes = 256\nheader_bytes = 0   # folded into the measured rate\n"
        );
        if m.gpus > 1 {
            let _ = writeln!(t, "[link_type.peer]\nkind = \"nvlink\"");
            let _ = writeln!(
                t,
                "bandwidth_gb_s = {slowest_peer_gb_s:.2}   # slowest measured 256 MiB peer copy"
            );
            let _ = writeln!(
                t,
                "latency_ns = 500.0   # estimate\nmax_payload_bytes = 128\nheader_bytes = 0   # folded into the measured rate\n"
            );
        }
        let _ = writeln!(t, "[[socket]]\nname = \"cpu0\"\n");
        if m.gpus > 1 {
            let _ = writeln!(t, "[[switch]]\nname = \"nvswitch\"\nkind = \"nvswitch\"\n");
        }
        for g in 0..m.gpus {
            let _ = writeln!(t, "[[gpu]]\nname = \"gpu{g}\"\nmodel = \"{model}\"\n");
        }
        for g in 0..m.gpus {
            let _ = writeln!(
                t,
                "[[link]]\na = \"cpu0\"\nb = \"gpu{g}\"\ntype = \"host\"\nlanes = 16\n"
            );
            if m.gpus > 1 {
                let _ = writeln!(
                    t,
                    "[[link]]\na = \"gpu{g}\"\nb = \"nvswitch\"\ntype = \"peer\"\nlanes = 1\n"
                );
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_count_offsets_targets_and_gathers_by_whether_values_fit_in_l2() {
        let mib = 1024.0 * 1024.0;
        // 1M vertices (4 MiB of values) fit in 60 MiB: 8 B per vertex for the values.
        let (fits, _) = floor_bytes(Algorithm::Bfs, 1 << 20, 16 << 20, 16 << 20, 1, 60.0 * mib);
        assert_eq!(fits, (8 + 8) as f64 * f64::from(1 << 20) + 4.0 * f64::from(16 << 20));
        // 32M vertices (128 MiB) do not: one 32-byte sector per visited arc.
        let (misses, rule) =
            floor_bytes(Algorithm::Bfs, 32 << 20, 512 << 20, 512 << 20, 1, 60.0 * mib);
        assert_eq!(misses, 8.0 * f64::from(32 << 20) + 36.0 * f64::from(512 << 20));
        assert!(rule.contains("32 B per arc"), "{rule}");
        // SSSP adds the weights; PageRank counts every arc per iteration.
        let (sssp, _) = floor_bytes(Algorithm::Sssp, 1 << 20, 16 << 20, 16 << 20, 1, 60.0 * mib);
        assert_eq!(sssp - fits, 4.0 * f64::from(16 << 20));
        let (pr1, _) = floor_bytes(Algorithm::Pr, 1 << 20, 16 << 20, 0, 1, 60.0 * mib);
        let (pr20, _) = floor_bytes(Algorithm::Pr, 1 << 20, 16 << 20, 0, 20, 60.0 * mib);
        assert_eq!(pr20, 20.0 * pr1);
    }
}
