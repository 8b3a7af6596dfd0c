//! `switchyard graphalytics`: an LDBC Graphalytics-style benchmark run on one graph. The six
//! core algorithms (BFS, PageRank, WCC, CDLP, LCC, SSSP) run one after the other on the
//! graph loaded once, each with its parameters from the graph's `.properties` (the options
//! override or must agree, as for `run`), each validated against its reference; their
//! results go to `OUT/NAME-BFS`, `-PR`, `-WCC`, `-CDLP`, `-LCC`, `-SSSP` in the Graphalytics
//! output format, and a table with Graphalytics' metrics goes to stdout (processing time
//! `T_p`: the algorithm's time once the graph is on the GPUs, without loading or
//! partitioning; EVPS = (vertices + edges) / `T_p`), a JSON report to `OUT/graphalytics.json`
//! (or `--json`). SSSP is skipped, and says why, on a graph without weights. Exits non-zero
//! after writing everything if any result fails validation.

use super::graph_source::{GraphArgs, ResolvedGraph, resolve_graph};
use super::run::{BackendArg, RunOptions, backend_setup};
use anyhow::bail;
use serde::Serialize;
use std::path::{Path, PathBuf};
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{RuntimeKind, run};

/// Arguments of `graphalytics`.
#[derive(clap::Args, Debug)]
pub struct GraphalyticsArgs {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    options: RunOptions,
    /// Runtime for the algorithms it runs (the others run on bsp, the only runtime with
    /// all six).
    #[arg(long, value_enum, default_value = "bsp")]
    runtime: RuntimeKind,
    /// Backend: the simulator, or real GPUs through CUDA.
    #[arg(long, value_enum, default_value = "sim")]
    backend: BackendArg,
    /// Topology of the simulator: a bundled name or a TOML file.
    #[arg(long, default_value = "dgx1-v100")]
    topology: String,
    /// GPUs to use.
    #[arg(long, default_value_t = 1)]
    gpus: u32,
    /// With --backend cuda: run --gpus logical GPUs on this machine's GPUs.
    #[arg(long)]
    logical_gpus: bool,
    /// Folder for the six output files and graphalytics.json (created if missing).
    #[arg(long, default_value = "reports/graphalytics")]
    out: PathBuf,
    /// Write the JSON report here instead of OUT/graphalytics.json.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The six algorithms in Graphalytics' order, with the suffix of their output files.
const SIX: [(Algorithm, &str); 6] = [
    (Algorithm::Bfs, "BFS"),
    (Algorithm::Pr, "PR"),
    (Algorithm::Cc, "WCC"),
    (Algorithm::Cdlp, "CDLP"),
    (Algorithm::Lcc, "LCC"),
    (Algorithm::Sssp, "SSSP"),
];

/// The JSON report's schema name and version.
const SCHEMA: &str = "switchyard.graphalytics";
const SCHEMA_VERSION: u32 = 1;

/// The JSON report of a `graphalytics` run.
#[derive(Serialize)]
struct Report {
    schema: &'static str,
    schema_version: u32,
    command_line: Vec<String>,
    git_sha: &'static str,
    graph: String,
    vertices: u64,
    /// Edges as Graphalytics counts them (an undirected edge once).
    edges: u64,
    directed: bool,
    backend: String,
    machine: String,
    gpus: u32,
    /// Whether processing times are virtual (the simulator) or measured.
    simulated: bool,
    jobs: Vec<Job>,
}

/// One algorithm's run.
#[derive(Serialize)]
struct Job {
    /// Graphalytics' name (BFS, PR, WCC, CDLP, LCC, SSSP).
    algorithm: &'static str,
    /// switchyard's name (`--algo`).
    algo: &'static str,
    runtime: &'static str,
    params: Option<AlgorithmParams>,
    /// The source vertex as the file names it (BFS, SSSP).
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<u64>,
    /// `ran`, `skipped` (with `reason`).
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// Processing time `T_p` in seconds.
    processing_time_s: Option<f64>,
    /// (vertices + edges) / `T_p`.
    evps: Option<f64>,
    /// `passed`, `failed`, or `not run`.
    validation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    validation_rule: Option<String>,
    supersteps: Option<u32>,
    output: Option<PathBuf>,
}

/// Edges as Graphalytics counts them: arcs of a directed graph; an undirected graph's edges
/// once (the CSR holds two arcs per edge and one per self-loop).
fn graphalytics_edges(graph: &switchyard::graph::Csr) -> u64 {
    if graph.is_directed() {
        return graph.num_arcs();
    }
    let loops = (0..graph.num_vertices())
        .map(|v| graph.neighbors(v).iter().filter(|&&t| t == v).count() as u64)
        .sum::<u64>();
    (graph.num_arcs() - loops) / 2 + loops
}

/// The output file of one algorithm: `OUT/NAME-SUFFIX`, NAME the graph's Graphalytics name
/// (or its file stem).
fn output_path(out: &Path, graph: &ResolvedGraph, suffix: &str) -> PathBuf {
    let name = match &graph.properties {
        Some((_, p)) if !p.name.is_empty() => p.name.clone(),
        _ => Path::new(&graph.name)
            .file_stem()
            .map_or("graph".into(), |s| s.to_string_lossy().into_owned()),
    };
    out.join(format!("{name}-{suffix}"))
}

/// Runs `switchyard graphalytics`.
pub fn graphalytics_command(args: GraphalyticsArgs) -> anyhow::Result<()> {
    // Every output is checked before any work.
    super::output::check_output_dir("--out", &args.out)?;
    let json = args.json.clone().unwrap_or_else(|| args.out.join("graphalytics.json"));
    if args.json.is_some() {
        super::output::check_output_path("--json", &json)?;
    }
    if args.runtime != RuntimeKind::Groute
        && (args.options.priority_delta.is_some() || args.options.fused == super::run::FusedArg::On)
    {
        bail!("--priority-delta and --fused are Groute options: add --runtime groute");
    }
    let setup = backend_setup(
        args.backend,
        &args.options,
        &args.topology,
        args.gpus,
        args.logical_gpus,
        false,
    )?;
    let graph = resolve_graph(&args.graph, args.options.seed)?;
    let (n, m) = (u64::from(graph.csr.num_vertices()), graphalytics_edges(&graph.csr));
    // Every algorithm's parameters first: a contradiction or a bad source stops the run
    // before any algorithm runs.
    let mut plan = Vec::new();
    let mut lines = Vec::new();
    for (algorithm, suffix) in SIX {
        let (params, used) = args.options.params_from_file(algorithm, &graph)?;
        if !used.is_empty() {
            lines.push(format!("  {suffix}: {}", used.join(", ")));
        }
        plan.push((algorithm, suffix, params));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| {
        anyhow::anyhow!(
            "--out {}: cannot create it ({e}); choose a writable folder",
            args.out.display()
        )
    })?;
    println!(
        "graphalytics: {} ({} vertices, {} edges, {}), {} GPU{}, {} backend",
        graph.name,
        n,
        m,
        if graph.csr.is_directed() { "directed" } else { "undirected" },
        args.gpus,
        if args.gpus == 1 { "" } else { "s" },
        match args.backend {
            BackendArg::Sim => "sim (times are virtual)",
            BackendArg::Cuda => "cuda",
        }
    );
    if let Some((file, _)) = &graph.properties {
        println!("parameters from {}:", file.display());
        for used in &graph.used {
            println!("  graph: {used}");
        }
        for line in lines {
            println!("{line}");
        }
    }
    let ids = graph.ids.all(graph.csr.num_vertices());
    let mut jobs = Vec::new();
    let mut machine = String::new();
    let mut failed = Vec::new();
    for (algorithm, suffix, params) in plan {
        let runtime = if args.runtime.runs(algorithm) { args.runtime } else { RuntimeKind::Bsp };
        let mut job = Job {
            algorithm: suffix,
            algo: algorithm.name(),
            runtime: runtime.name(),
            params: Some(params),
            source: matches!(algorithm, Algorithm::Bfs | Algorithm::Sssp)
                .then(|| graph.ids.file_id(params.source)),
            status: "ran",
            reason: None,
            processing_time_s: None,
            evps: None,
            validation: "not run".into(),
            validation_rule: None,
            supersteps: None,
            output: None,
        };
        if algorithm.needs_weights() && graph.csr.weights().is_none() {
            job.status = "skipped";
            job.reason = Some("the graph has no edge weights (Graphalytics runs SSSP on weighted graphs only; add --weights to draw integer ones)".into());
            job.params = None;
            jobs.push(job);
            continue;
        }
        let spec = args.options.spec_with(
            algorithm,
            runtime,
            args.gpus,
            params,
            std::env::args().collect(),
        )?;
        let output = run(&graph.csr, &graph.name, &spec, &setup)?;
        let report = &output.report;
        machine = report.topology.name.clone();
        let seconds = report.time_ps as f64 / 1e12;
        job.processing_time_s = Some(seconds);
        job.evps = (seconds > 0.0).then(|| (n + m) as f64 / seconds);
        job.supersteps = Some(report.supersteps);
        if let Some(v) = &report.validation {
            job.validation = if v.is_ok() { "passed".into() } else { "failed".into() };
            job.validation_rule = Some(v.rule.clone());
            if !v.is_ok() {
                let mut v = v.clone();
                v.name_vertices(|d| u32::try_from(d).map_or(d, |d| graph.ids.file_id(d)));
                eprintln!("{suffix}: {v}");
                failed.push(suffix);
            }
        }
        let path = output_path(&args.out, &graph, suffix);
        let values = output.result_values(&graph.csr, &spec);
        super::output::write_file(&path, false, |w| {
            Ok(switchyard::graph::write_vertex_values(
                w,
                &path.display().to_string(),
                Some(&ids),
                values,
            )?)
        })?;
        job.output = Some(path);
        jobs.push(job);
    }
    print!("{}", table(&jobs));
    let report = Report {
        schema: SCHEMA,
        schema_version: SCHEMA_VERSION,
        command_line: std::env::args().collect(),
        git_sha: switchyard::driver::git_sha(),
        graph: graph.name.clone(),
        vertices: n,
        edges: m,
        directed: graph.csr.is_directed(),
        backend: match args.backend {
            BackendArg::Sim => "sim".into(),
            BackendArg::Cuda => "cuda".into(),
        },
        machine,
        gpus: args.gpus,
        simulated: matches!(args.backend, BackendArg::Sim),
        jobs,
    };
    super::output::write_file(&json, false, |w| {
        serde_json::to_writer_pretty(&mut *w, &report)?;
        writeln!(w)?;
        Ok(())
    })?;
    println!("wrote {} and the output files in {}", json.display(), args.out.display());
    if !failed.is_empty() {
        bail!(
            "validation failed for {}: the results differ from the references",
            failed.join(", ")
        );
    }
    Ok(())
}

/// The human table: one line per algorithm.
fn table(jobs: &[Job]) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "{:<6} {:<7} {:>14} {:>12} {:>10}  {}\n",
        "algo", "runtime", "T_p ms", "EVPS", "valid", "output"
    );
    for j in jobs {
        let (time, evps) = match (j.processing_time_s, j.evps) {
            (Some(t), Some(e)) => (format!("{:.3}", t * 1e3), format!("{e:.3e}")),
            (Some(t), None) => (format!("{:.3}", t * 1e3), "-".into()),
            _ => ("-".into(), "-".into()),
        };
        let output = match (&j.output, &j.reason) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(r)) => format!("skipped: {r}"),
            (None, None) => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<6} {:<7} {:>14} {:>12} {:>10}  {}",
            j.algorithm, j.runtime, time, evps, j.validation, output
        );
    }
    out
}
