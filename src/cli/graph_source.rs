//! Where a run's graph comes from: a file, a generator spec, or an embedded graph; how the
//! file names its vertices; and what its LDBC `.properties` says.

use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::graph::formats::ldbc::LdbcProperties;
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::graph::{
    Csr, GraphFormat, LoadOptions, VertexIds, load_graph, load_graph_from_bytes,
};

/// The real graph embedded in the binary (the US power grid, METIS format).
pub const EMBEDDED_POWER: &[u8] = include_bytes!("../embedded/power.graph");

/// Graph selection shared by `run` and `sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct GraphArgs {
    /// Graph file (format detected from the content; gzip handled). For an LDBC
    /// Graphalytics graph: its `.properties` file (or `--format ldbc` with the base name).
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
    /// Read --graph as directed (`true`) or undirected (`false`), overriding its format's
    /// default (an LDBC graph's `.properties` must agree unless --ignore-properties).
    #[arg(long, requires = "graph")]
    pub directed: Option<bool>,
    /// Neither take parameters (source vertex, damping, iterations, directedness) from an
    /// LDBC graph's `.properties` nor check the options against it.
    #[arg(long)]
    pub ignore_properties: bool,
}

/// A graph ready to run on, with how its input names vertices.
pub struct ResolvedGraph {
    /// The graph.
    pub csr: Csr,
    /// The name reports use (the path, the generator spec, or `embedded:...`).
    pub name: String,
    /// The input's vertex ids (what `--source` takes and outputs write).
    pub ids: VertexIds,
    /// An LDBC graph's `.properties` path and content, unless --ignore-properties.
    pub properties: Option<(PathBuf, LdbcProperties)>,
    /// The settings taken from the `.properties` while loading (directedness), as
    /// `what (key)` for the line that says what was used.
    pub used: Vec<String>,
}

impl ResolvedGraph {
    /// A graph named by dense ids, with no `.properties`.
    pub fn dense(csr: Csr, name: String) -> Self {
        ResolvedGraph { csr, name, ids: VertexIds::dense(), properties: None, used: Vec::new() }
    }

    /// `graph.NAME.suffix` in this graph's `.properties`.
    pub fn key(&self, suffix: &str) -> String {
        let name = self.properties.as_ref().map_or("", |(_, p)| p.name.as_str());
        format!("graph.{name}.{suffix}")
    }

    /// The dense index of the vertex the input calls `id`, or an error naming `what` gave
    /// it, the input, the ids it has, and `fix`.
    pub fn dense_vertex(&self, id: u64, what: &str, fix: &str) -> anyhow::Result<u32> {
        let n = self.csr.num_vertices();
        self.ids.dense_id(id, n).with_context(|| {
            format!(
                "{what}: vertex {id} is not in {} (its {n} vertices are named by {}: {}); {fix}",
                self.name,
                self.ids.scheme(),
                self.ids.sample(n)
            )
        })
    }
}

/// Loads or generates the graph; returns it with the name reports use (for callers that
/// take dense vertex ids and no `.properties`).
pub fn resolve(args: &GraphArgs, seed: u64) -> anyhow::Result<(Csr, String)> {
    let resolved = resolve_graph(args, seed)?;
    Ok((resolved.csr, resolved.name))
}

/// Loads or generates the graph, with its vertex ids and `.properties`; an option that
/// contradicts the `.properties` (--directed) is an error naming both.
pub fn resolve_graph(args: &GraphArgs, seed: u64) -> anyhow::Result<ResolvedGraph> {
    let mut resolved = match (&args.graph, &args.generate) {
        (Some(path), None) => {
            let options = LoadOptions {
                format: args.format,
                directed: args.directed,
                ..LoadOptions::default()
            };
            let loaded = load_graph(path, &options)
                .with_context(|| format!("loading graph {}", path.display()))?;
            let ids = loaded.vertex_ids();
            let properties = match (loaded.ldbc, loaded.properties_path) {
                (Some(p), Some(file)) if !args.ignore_properties => Some((file, p)),
                _ => None,
            };
            let mut resolved = ResolvedGraph {
                csr: loaded.csr,
                name: path.display().to_string(),
                ids,
                properties,
                used: Vec::new(),
            };
            if let Some((file, p)) = &resolved.properties
                && let Some(declared) = p.directed
            {
                let key = resolved.key("directed");
                match args.directed {
                    Some(asked) if asked != declared => bail!(
                        "--directed {asked} contradicts `{key} = {declared}` in {}; drop \
                         --directed to read the graph as its .properties says, or pass \
                         --ignore-properties to override it",
                        file.display()
                    ),
                    Some(_) => {}
                    None => resolved.used.push(format!(
                        "{} ({key})",
                        if declared { "directed" } else { "undirected" }
                    )),
                }
            }
            resolved
        }
        (None, Some(spec)) => {
            let parsed = GeneratorSpec::parse(spec)?;
            ResolvedGraph::dense(generate(&parsed)?, parsed.to_string())
        }
        (None, None) => {
            let loaded = load_graph_from_bytes(
                "embedded:power.graph",
                EMBEDDED_POWER,
                &LoadOptions::default(),
            )?;
            let ids = loaded.vertex_ids();
            ResolvedGraph { ids, ..ResolvedGraph::dense(loaded.csr, "embedded:power.graph".into()) }
        }
        (Some(_), Some(_)) => bail!("give either --graph or --generate, not both"),
    };
    if args.weights && resolved.csr.weights().is_none() {
        resolved.csr = with_uniform_weights(&resolved.csr, 1, 64, seed)?;
    }
    Ok(resolved)
}
