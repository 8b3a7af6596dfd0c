//! Command-line front end: argument parsing and dispatch. Each subcommand lives in its own
//! module; errors become `anyhow` here, at the edge.

mod atos_args;
mod calibrate;
mod graph;
mod graph500;
mod graph_analysis;
mod graph_io;
mod graph_source;
mod graphalytics;
mod gum;
mod output;
mod plot;
mod run;
mod swarm;
mod sweep;
mod topo;
mod whatif;

use clap::{Parser, Subcommand};
use switchyard::algo::Algorithm;
use switchyard::driver::RuntimeKind;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::{LoadOptions, load_graph_from_bytes};
use switchyard_sim::topology::Topology;

/// Asynchronous multi-GPU graph analytics on a deterministic simulator and on real GPUs.
///
/// With no command: the main job (BFS on every runtime and PageRank on the bulk-synchronous
/// runtime, 1-8 simulated DGX-1 GPUs (or `--topology`), over an embedded real graph
/// and a generated scale-free one, validated, tabulated and plotted into reports/latest/: a
/// panel per algorithm, a colour per runtime).
#[derive(Parser, Debug)]
#[command(name = "switchyard", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The main job's machine: a bundled name, a topology file or an overlay (default
    /// dgx1-v100).
    #[arg(long, value_name = "NAME|FILE")]
    topology: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one algorithm on one graph and machine, validate it, and report.
    Run(run::RunArgs),
    /// Run over GPU counts, algorithms, runtimes and topologies; write CSV, JSON and plots.
    Sweep(sweep::SweepArgs),
    /// Swarm testing: per seed, draw a whole configuration, run it and validate it.
    Swarm(swarm::SwarmArgs),
    /// GUM's cost model: regenerate the logs and refit g(W) (`switchyard gum fit`).
    Gum(gum::GumArgs),
    /// An LDBC Graphalytics benchmark run: BFS, PR, WCC, CDLP, LCC and SSSP on one graph
    /// with its .properties' parameters, validated, with output files and EVPS.
    Graphalytics(graphalytics::GraphalyticsArgs),
    /// Inspect, generate, convert and partition graphs.
    #[command(subcommand)]
    Graph(graph::GraphCommand),
    /// List, show, check and benchmark machine topologies.
    #[command(subcommand)]
    Topo(topo::TopoCommand),
    /// Plot one metric of one or more sweeps (their sweep.json) over the GPU count.
    Plot(plot::PlotArgs),
    /// The what-if studies of reports/whatif.md: figures, rows and the numbers they quote.
    Whatif(whatif::WhatifArgs),
    /// Measure this machine's GPUs into a topology file; time runs on real GPUs or the
    /// simulator (predicted versus measured).
    #[command(subcommand)]
    Calibrate(calibrate::CalibrateCommand),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Run(args)) => run::run_command(args),
        Some(Command::Sweep(args)) => sweep::sweep_command(args),
        Some(Command::Swarm(args)) => swarm::swarm_command(args),
        Some(Command::Gum(args)) => gum::gum_command(args),
        Some(Command::Graphalytics(args)) => graphalytics::graphalytics_command(args),
        Some(Command::Graph(command)) => graph::run(command),
        Some(Command::Topo(command)) => topo::run(command),
        Some(Command::Plot(args)) => plot::plot_command(args),
        Some(Command::Calibrate(command)) => calibrate::run(command),
        Some(Command::Whatif(args)) => whatif::whatif_command(args),
        None => main_job(cli.topology.as_deref().unwrap_or("dgx1-v100")),
    }
}

/// Default options, parsed from an empty command line so they match the CLI's defaults.
#[derive(Parser, Debug)]
struct DefaultOptions {
    #[command(flatten)]
    options: run::RunOptions,
}

/// The generated scale-free graph of the main job.
const MAIN_JOB_RMAT: &str = "rmat:scale=17,ef=16,seed=1";

/// The main job: see [`Cli`].
fn main_job(machine: &str) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let power = load_graph_from_bytes(
        "embedded:power.graph",
        graph_source::EMBEDDED_POWER,
        &LoadOptions::default(),
    )?;
    let rmat_spec = GeneratorSpec::parse(MAIN_JOB_RMAT)?;
    let rmat = generate(&rmat_spec)?;
    // BFS from the highest-degree vertex, which is in the giant component.
    let hub = |g: &switchyard::graph::Csr| (0..g.num_vertices()).max_by_key(|&v| g.degree(v));
    let (power_source, rmat_source) = (hub(&power.csr), hub(&rmat));
    let machine = Topology::open(machine)?;
    println!(
        "switchyard main job: BFS on every runtime (bulk-synchronous, Groute, GUM, Atos) and \
         PageRank on the bulk-synchronous runtime, 1-{} GPUs of the simulated {}, every run \
         validated",
        machine.gpus.len(),
        machine.name
    );
    let title = format!("switchyard: scaling on {}", machine.name);
    let graphs = vec![
        (power.csr, "power-grid (embedded)".to_string(), power_source),
        (rmat, MAIN_JOB_RMAT.to_string(), rmat_source),
    ];
    let options = DefaultOptions::parse_from(["switchyard"]).options;
    let bfs = sweep::Plan {
        graphs,
        algorithms: vec![Algorithm::Bfs],
        runtimes: RuntimeKind::ALL.to_vec(),
        topologies: vec![machine],
        gpus: None,
        options,
        params: Default::default(),
    };
    let mut rows = bfs.execute()?;
    let pr =
        sweep::Plan { algorithms: vec![Algorithm::Pr], runtimes: vec![RuntimeKind::Bsp], ..bfs };
    rows.extend(pr.execute()?);
    sweep::write_outputs(&rows, std::path::Path::new("reports/latest"), &title)?;
    println!("all {} runs validated in {:.1} s", rows.len(), started.elapsed().as_secs_f64());
    Ok(())
}
