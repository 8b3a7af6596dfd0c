//! Where a run's graph comes from: a file, a generator spec, or an embedded graph.

use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::graph::{Csr, GraphFormat, LoadOptions, load_graph, load_graph_from_bytes};

/// The real graph embedded in the binary (the US power grid, METIS format).
pub const EMBEDDED_POWER: &[u8] = include_bytes!("../embedded/power.graph");

/// Graph selection shared by `run` and `sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct GraphArgs {
    /// Graph file (format detected from the content; gzip handled).
    #[arg(long, conflicts_with = "generate")]
    pub graph: Option<PathBuf>,
    /// Format override for --graph.
    #[arg(long, requires = "graph")]
    pub format: Option<GraphFormat>,
    /// Generator spec instead of a file, e.g. `rmat:scale=16,ef=16` or `rgg:n=100000,degree=3`.
    #[arg(long)]
    pub generate: Option<String>,
    /// Draw uniform integer weights 1..=64 (the papers' SSSP setting) if the graph has none.
    #[arg(long)]
    pub weights: bool,
}

/// Loads or generates the graph; returns it with the name reports use.
pub fn resolve(args: &GraphArgs, seed: u64) -> anyhow::Result<(Csr, String)> {
    let (mut csr, name) = match (&args.graph, &args.generate) {
        (Some(path), None) => {
            let options = LoadOptions { format: args.format, ..LoadOptions::default() };
            let loaded = load_graph(path, &options)
                .with_context(|| format!("loading graph {}", path.display()))?;
            (loaded.csr, path.display().to_string())
        }
        (None, Some(spec)) => {
            let parsed = GeneratorSpec::parse(spec)?;
            (generate(&parsed)?, parsed.to_string())
        }
        (None, None) => {
            let loaded = load_graph_from_bytes(
                "embedded:power.graph",
                EMBEDDED_POWER,
                &LoadOptions::default(),
            )?;
            (loaded.csr, "embedded:power.graph".to_string())
        }
        (Some(_), Some(_)) => bail!("give either --graph or --generate, not both"),
    };
    if args.weights && csr.weights().is_none() {
        csr = with_uniform_weights(&csr, 1, 64, seed)?;
    }
    Ok((csr, name))
}
