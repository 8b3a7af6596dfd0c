//! Where a run's graph comes from: a file, a generator spec, or an embedded graph; how the
//! file names its vertices; and what its LDBC `.properties` says.

use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::graph::formats::ldbc::LdbcProperties;
use switchyard::graph::generate::{GeneratorKind, GeneratorSpec, generate, with_uniform_weights};
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
    #[arg(long, requires = "graph", conflicts_with = "generate")]
    pub format: Option<GraphFormat>,
    /// Generator spec instead of a file, e.g. `rmat:scale=16,ef=16` or `rgg:n=100000,degree=3`.
    #[arg(long)]
    pub generate: Option<String>,
    /// Draw uniform integer weights 1..=64 (the papers' SSSP setting) if the graph has none.
    #[arg(long)]
    pub weights: bool,
    /// Read --graph as directed (`true`) or undirected (`false`), overriding its format's
    /// default (an LDBC graph's `.properties` must agree unless --ignore-properties).
    #[arg(long, requires = "graph", conflicts_with = "generate")]
    pub directed: Option<bool>,
    /// Neither take parameters (source vertex, damping, iterations, directedness) from an
    /// LDBC graph's `.properties` nor check the options against it.
    #[arg(long, conflicts_with = "generate")]
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
            check_generated_graph_fits(&parsed)?;
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
    if resolved.csr.num_vertices() == 0 {
        bail!(
            "graph {} has no vertices (nothing but comments or headers); give a graph with at \
             least one vertex",
            resolved.name
        );
    }
    if args.weights && resolved.csr.weights().is_none() {
        resolved.csr = with_uniform_weights(&resolved.csr, 1, 64, seed)?;
    }
    Ok(resolved)
}

/// Host memory a generator spec needs at its peak, roughly: the generated edge list (8 bytes
/// an edge, and as much again while the CSR is built), the CSR's offsets (8 bytes a vertex)
/// and targets (4 bytes an arc; an undirected edge is two arcs), and weights (4 bytes an edge
/// and an arc). Within a factor of two of the figures in `reports/reliability.md`.
pub fn generated_graph_bytes(spec: &GeneratorSpec) -> u64 {
    let (n, edges): (f64, f64) = match &spec.kind {
        GeneratorKind::Rmat(p) => {
            let n = 2f64.powi(p.scale as i32);
            (n, n * f64::from(p.edge_factor))
        }
        GeneratorKind::ErdosRenyi { n, m } => {
            let n = f64::from(*n);
            (n, (*m as f64).min(n * n))
        }
        GeneratorKind::ErdosRenyiGnp { n, p } => (f64::from(*n), f64::from(*n).powi(2) * p),
        GeneratorKind::Grid2d { w, h, .. } => {
            let n = f64::from(*w) * f64::from(*h);
            (n, 2.0 * n)
        }
        GeneratorKind::Grid3d { w, h, d, .. } => {
            let n = f64::from(*w) * f64::from(*h) * f64::from(*d);
            (n, 3.0 * n)
        }
        GeneratorKind::Rgg { n, degree } => (f64::from(*n), f64::from(*n) * degree / 2.0),
    };
    let arcs = if spec.directed { edges } else { 2.0 * edges };
    let weights = if spec.weights.is_some() { 4.0 * (edges + arcs) } else { 0.0 };
    (8.0 * (n + 1.0) + 16.0 * edges + 4.0 * arcs + weights).min(u64::MAX as f64) as u64
}

/// Memory this machine has available (Linux `MemAvailable`), if it can tell.
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuses, before generating, a graph that would not fit this machine's available memory,
/// with the sizes.
pub fn check_generated_graph_fits(spec: &GeneratorSpec) -> anyhow::Result<()> {
    let needed = generated_graph_bytes(spec);
    if let Some(available) = available_memory_bytes()
        && needed > available
    {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        bail!(
            "generator spec `{spec}`: the graph needs about {:.1} GiB of memory to generate and \
             this machine has {:.1} GiB available; generate a smaller graph (a lower scale, \
             fewer vertices or edges), or run on a machine with more memory",
            gib(needed),
            gib(available)
        );
    }
    Ok(())
}
