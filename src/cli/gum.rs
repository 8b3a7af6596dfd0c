//! `switchyard gum fit`: regenerate GUM's cost-model logs on the simulated DGX-1 and refit
//! `g(W)` (seed 001 §III-B), writing the coefficients the product embeds.
//! `switchyard gum repro`: the paper's Table III, Fig. 1/8, Fig. 9, Table IV and Fig. 6 in
//! shape on the simulated DGX-1 (see [`switchyard::driver::gum_repro`]).

use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::driver::gum_fit::{fit, log_samples};
use switchyard::driver::gum_repro::{ReproOptions, run_repro, write_repro};
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::graph::{LoadOptions, load_graph};
use switchyard::runtime::gum::cost_model::{CostModel, FitOptions, Sample};
use switchyard_sim::topology::Topology;

/// `switchyard gum ...`.
#[derive(clap::Args, Debug)]
pub struct GumArgs {
    #[command(subcommand)]
    command: GumCommand,
}

#[derive(clap::Subcommand, Debug)]
enum GumCommand {
    /// Run BFS, SSSP, PR and CC with GUM (no stealing) on generated and real graphs, log one
    /// sample per GPU and superstep, and fit g(W) by SGD on the RMSRE loss (Eq. 3).
    Fit(FitArgs),
    /// Reproduce the paper's Table III, Fig. 1/8, Fig. 9, Table IV and Fig. 6 in shape on
    /// the simulated DGX-1 (8 V100s), every run validated: JSON, markdown and SVG per
    /// experiment into --out.
    Repro(ReproArgs),
}

#[derive(clap::Args, Debug)]
struct ReproArgs {
    /// Folder the experiments are written into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Small graphs (and FSteal thresholds scaled with them): about a minute in a debug
    /// build, for tests.
    #[arg(long)]
    small: bool,
    /// Seed of the generators, weights, partitions and simulator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(clap::Args, Debug)]
struct FitArgs {
    /// Where the fitted model goes (the product embeds src/runtime/gum/cost_model.json).
    #[arg(long, default_value = "src/runtime/gum/cost_model.json")]
    out: PathBuf,
    /// Where the samples go (JSON lines), if wanted.
    #[arg(long)]
    logs: Option<PathBuf>,
    /// Directory of the real graphs (the repository's test graphs).
    #[arg(long, default_value = "tests/data/graphs")]
    real_graphs: PathBuf,
    /// Seed of the partitions, the weights and the SGD.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// SGD passes over the samples.
    #[arg(long, default_value_t = FitOptions::default().epochs)]
    epochs: u32,
    /// GPUs of the simulated DGX-1.
    #[arg(long, default_value_t = 8)]
    gpus: u32,
    /// Log every graph under this many partitions and weightings (seeds --seed,
    /// --seed + 1, ...): more samples from the same graphs.
    #[arg(long, default_value_t = 1)]
    partitions: u64,
}

/// The generated graphs of the logs: scale-free, uniform random, grids and road-like.
const GENERATED: &[&str] = &[
    "rmat:scale=14,ef=16,seed=1",
    "rmat:scale=13,ef=8,seed=2",
    "rmat:scale=15,ef=4,seed=3",
    "er:n=20000,m=160000,seed=4",
    "grid2d:w=200,h=200,drop=0.1,seed=5",
    "grid3d:w=30,h=30,d=30,seed=6",
    "rgg:n=40000,degree=3,seed=7",
    "rgg:n=20000,degree=8,seed=8",
];

/// The real graphs of the logs (under `--real-graphs`).
const REAL: &[&str] = &[
    "facebook_combined.txt",
    "wiki-Vote.txt",
    "delaunay_n16.mtx",
    "luxembourg_osm.mtx",
    "cnr-2000.txt.gz",
];

/// Runs `switchyard gum ...`.
pub fn gum_command(args: GumArgs) -> anyhow::Result<()> {
    match args.command {
        GumCommand::Fit(args) => fit_command(args),
        GumCommand::Repro(args) => repro_command(args),
    }
}

fn repro_command(args: ReproArgs) -> anyhow::Result<()> {
    super::output::check_output_dir("--out", &args.out)?;
    let options = ReproOptions { small: args.small, seed: args.seed };
    let experiments = run_repro(options, &mut |line| eprintln!("{line}"))?;
    let written = write_repro(&experiments, options, &args.out)?;
    for e in &experiments {
        let reached = e.findings.iter().filter(|f| f.holds).count();
        println!("{}: {} of {} shapes reached", e.title, reached, e.findings.len());
    }
    println!("wrote {} files into {}", written.len(), args.out.display());
    Ok(())
}

fn fit_command(args: FitArgs) -> anyhow::Result<()> {
    super::output::check_output_path("--out", &args.out)?;
    let topology = Topology::bundled("dgx1-v100")?;
    let mut samples: Vec<Sample> = Vec::new();
    let mut graphs = Vec::new();
    for spec in GENERATED {
        let parsed = GeneratorSpec::parse(spec)?;
        graphs.push((spec.to_string(), generate(&parsed)?));
    }
    for name in REAL {
        let path = args.real_graphs.join(name);
        let loaded = load_graph(&path, &LoadOptions::default())
            .with_context(|| format!("loading {} (set --real-graphs)", path.display()))?;
        graphs.push((name.to_string(), loaded.csr));
    }
    if args.partitions == 0 {
        bail!("--partitions 0 logs nothing; give at least 1 (the default)");
    }
    for seed in args.seed..args.seed.saturating_add(args.partitions) {
        for (name, graph) in &graphs {
            let weighted = with_uniform_weights(graph, 1, 64, seed)?;
            let got = log_samples(&weighted, name, &topology, args.gpus, seed)?;
            eprintln!("{name} (seed {seed}): {} samples", got.len());
            samples.extend(got);
        }
    }
    if samples.is_empty() {
        bail!("no samples: the graphs gave no superstep with enough edges");
    }
    // The model the binary embeds, on the same samples: the "before" of a refit.
    let embedded = CostModel::embedded()?;
    println!(
        "the embedded model (src/runtime/gum/cost_model.json) on these {} samples: RMSRE {:.3}",
        samples.len(),
        embedded.rmsre(&samples)
    );
    if let Some(path) = &args.logs {
        let mut text = String::new();
        for s in &samples {
            text.push_str(&serde_json::to_string(s)?);
            text.push('\n');
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let options = FitOptions { seed: args.seed, epochs: args.epochs, ..FitOptions::default() };
    let model = fit(&samples, options)?;
    let json = serde_json::to_string_pretty(&model)? + "\n";
    std::fs::write(&args.out, json).with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "{} samples ({} train, {} held out) from {} graphs x 4 algorithms x {} partitions on \
         {} GPUs: RMSRE train {:.3}, held out {:.3}, all {:.3}; wrote {}",
        samples.len(),
        model.samples.0,
        model.samples.1,
        graphs.len(),
        args.partitions,
        args.gpus,
        model.train_rmsre,
        model.test_rmsre,
        model.rmsre(&samples),
        args.out.display()
    );
    Ok(())
}
