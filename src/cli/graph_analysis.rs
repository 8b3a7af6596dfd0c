//! `switchyard graph info | generate | partition`.

use super::output::write_file;
use anyhow::bail;
use std::io::Write;
use std::path::{Path, PathBuf};
use switchyard::graph::formats::{self, GraphFormat, ldbc};
use switchyard::graph::generate::{GeneratorSpec, generate as generate_graph};
use switchyard::graph::partition::{partition_metrics, partitioner_by_name};
use switchyard::graph::summary::{GraphSummary, summarize};
use switchyard::graph::{BuildOptions, Csr, LoadOptions, VertexIds, load_graph};

/// Where a graph comes from: a file or a generator spec (exactly one).
#[derive(clap::Args, Debug)]
pub struct GraphSource {
    /// Graph file to read (gzip is detected and decompressed).
    #[arg(long, conflicts_with = "generate", required_unless_present = "generate")]
    pub graph: Option<PathBuf>,
    /// Format of `--graph`; detected from the content when omitted.
    #[arg(long, requires = "graph")]
    pub format: Option<GraphFormat>,
    /// Read `--graph` as directed (`true`) or undirected (`false`), overriding the file
    /// (a SNAP edge list cannot say which it is).
    #[arg(long, requires = "graph")]
    pub directed: Option<bool>,
    /// Generate the graph instead, e.g. `rmat:scale=16,ef=16,seed=1` (see `graph generate`).
    #[arg(long, value_name = "SPEC")]
    pub generate: Option<String>,
}

impl GraphSource {
    /// The graph's name, the graph, and how its input names its vertices.
    fn load(&self) -> anyhow::Result<(String, Csr, VertexIds)> {
        match (&self.graph, &self.generate) {
            (Some(path), _) => {
                let options = LoadOptions {
                    format: self.format,
                    directed: self.directed,
                    build: BuildOptions::default(),
                };
                let loaded = load_graph(path, &options)?;
                let ids = loaded.vertex_ids();
                Ok((path.display().to_string(), loaded.csr, ids))
            }
            (None, Some(spec)) => {
                let spec = GeneratorSpec::parse(spec)?;
                super::graph_source::check_generated_graph_fits(&spec)?;
                Ok((spec.to_string(), generate_graph(&spec)?, VertexIds::dense()))
            }
            (None, None) => bail!("give a graph: --graph FILE or --generate SPEC"),
        }
    }
}

/// Arguments of `graph info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    source: GraphSource,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `graph generate`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Generator spec: `rmat:scale=..,ef=..,a=..,b=..,c=..,noise=..,permute=..,dedup=..,directed=..`,
    /// `er:n=..,m=..` or `er:n=..,p=..`, `grid2d:w=..,h=..,drop=..`, `grid3d:w=..,h=..,d=..,drop=..`,
    /// `rgg:n=..,degree=..`; all take `seed=..` and `weights=LO..HI` (e.g. 1..64).
    spec: String,
    /// File to write (a name ending in `.gz` is gzip-compressed). For `--to ldbc` a base
    /// name: BASE.v, BASE.e and BASE.properties are written.
    #[arg(long)]
    output: PathBuf,
    /// Format to write (binary CSR only through `graph convert`).
    #[arg(long, value_enum, default_value = "snap")]
    to: GraphFormat,
}

/// Arguments of `graph partition`.
#[derive(clap::Args, Debug)]
pub struct PartitionArgs {
    #[command(flatten)]
    source: GraphSource,
    /// Number of parts (GPUs).
    #[arg(long)]
    parts: u32,
    /// Partitioner: random, biased-random, seg, hash or metis.
    #[arg(long, default_value = "random")]
    partitioner: String,
    /// Seed of the random partitioners and of METIS.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the owner of every vertex, one `vertex part` line each.
    #[arg(long)]
    output: Option<PathBuf>,
}

/// Runs `graph info`.
pub fn info(args: InfoArgs) -> anyhow::Result<()> {
    let (name, csr, ids) = args.source.load()?;
    let summary = summarize(&csr);
    let hub_id = summary.hub_vertex.map(|v| ids.file_id(v));
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&SummaryJson { graph: &name, summary: &summary, hub_id })?
        );
    } else {
        print_summary(&name, &summary, hub_id);
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct SummaryJson<'a> {
    graph: &'a str,
    #[serde(flatten)]
    summary: &'a GraphSummary,
    /// The hub as the input names it (what `--source` takes).
    hub_id: Option<u64>,
}

fn print_summary(name: &str, s: &GraphSummary, hub_id: Option<u64>) {
    println!("graph                {name}");
    println!("vertices             {}", s.vertices);
    println!(
        "edges                {} ({} arcs, {}{})",
        s.edges,
        s.arcs,
        if s.directed { "directed" } else { "undirected" },
        if s.weighted { ", weighted" } else { "" }
    );
    println!("degree min/max/mean  {} / {} / {:.3}", s.degree_min, s.degree_max, s.degree_mean);
    if let Some(id) = hub_id {
        println!("hub vertex           {id} (highest degree; the id --source takes)");
    }
    println!("degree Gini          {:.4}", s.degree_gini);
    println!("degree entropy       {:.4}", s.degree_entropy);
    println!("diameter (approx.)   {}", s.diameter_approx);
    println!(
        "weak components      {} (largest {} vertices)",
        s.weak_components, s.largest_component_vertices
    );
    println!("self-loops           {}", s.self_loops);
    println!("duplicate arcs       {}", s.duplicate_arcs);
}

/// Runs `graph generate`.
pub fn generate(args: GenerateArgs) -> anyhow::Result<()> {
    if args.to == GraphFormat::Binary {
        bail!(
            "--to binary: the binary CSR format is written only by `graph convert`; generate a \
             text format (e.g. --to snap) and convert it"
        );
    }
    let spec = GeneratorSpec::parse(&args.spec)?;
    super::output::check_output_path("--output", &args.output)?;
    let started = std::time::Instant::now();
    super::graph_source::check_generated_graph_fits(&spec)?;
    let csr = generate_graph(&spec)?;
    let generate_s = started.elapsed().as_secs_f64();
    let gz = args.output.extension().is_some_and(|e| e == "gz");
    let name = args.output.display().to_string();
    let written = if args.to == GraphFormat::Ldbc {
        let base = name.trim_end_matches(".gz").to_string();
        let properties = ldbc::LdbcProperties {
            name: Path::new(&base)
                .file_name()
                .map_or_else(|| "graph".into(), |s| s.to_string_lossy().to_string()),
            directed: Some(csr.is_directed()),
            ..Default::default()
        };
        let mut bufs = (Vec::new(), Vec::new(), Vec::new());
        ldbc::write(&mut bufs.0, &mut bufs.1, &mut bufs.2, &csr, None, &properties)?;
        let suffix = if gz { ".gz" } else { "" };
        let mut paths = Vec::new();
        for (ext, bytes) in [".v", ".e", ".properties"].iter().zip([bufs.0, bufs.1, bufs.2]) {
            let path = PathBuf::from(format!("{base}{ext}{suffix}"));
            write_file(&path, gz, |w| Ok(w.write_all(&bytes)?))?;
            paths.push(path);
        }
        paths
    } else {
        write_file(&args.output, gz, |w| Ok(formats::write_graph(w, args.to, &csr, None, &name)?))?;
        vec![args.output.clone()]
    };
    println!(
        "generated {spec} in {generate_s:.3} s: {} vertices, {} arcs; wrote {} ({})",
        csr.num_vertices(),
        csr.num_arcs(),
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        args.to
    );
    Ok(())
}

/// Runs `graph partition`.
pub fn partition(args: PartitionArgs) -> anyhow::Result<()> {
    let partitioner = partitioner_by_name(&args.partitioner, args.seed)?;
    if let Some(path) = &args.output {
        super::output::check_output_path("--output", path)?;
    }
    let (name, csr, _) = args.source.load()?;
    let started = std::time::Instant::now();
    let partition = partitioner.partition(&csr, args.parts)?;
    let partition_s = started.elapsed().as_secs_f64();
    let metrics = partition_metrics(&csr, &partition)?;
    if let Some(path) = &args.output {
        write_file(path, false, |w| {
            let mut w = std::io::BufWriter::new(w);
            for (v, p) in partition.owner.iter().enumerate() {
                writeln!(w, "{v} {p}")?;
            }
            Ok(w.flush()?)
        })?;
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            graph: &'a str,
            partitioner: &'a str,
            seed: u64,
            partition_s: f64,
            #[serde(flatten)]
            metrics: &'a switchyard::graph::partition::PartitionMetrics,
        }
        let out = Out {
            graph: &name,
            partitioner: partitioner.name(),
            seed: args.seed,
            partition_s,
            metrics: &metrics,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "graph {name}: {} parts by {} (seed {}) in {partition_s:.3} s",
        metrics.parts,
        partitioner.name(),
        args.seed
    );
    println!(
        "edge cut {} ({:.2} % of edges), border vertices {}, vertex imbalance {:.3}, arc imbalance {:.3}",
        metrics.edge_cut,
        100.0 * metrics.edge_cut_fraction,
        metrics.border_vertices,
        metrics.vertex_imbalance,
        metrics.arc_imbalance
    );
    println!("part  vertices        arcs    cut arcs      border    boundary");
    for p in &metrics.per_part {
        println!(
            "{:>4} {:>9} {:>11} {:>11} {:>11} {:>11}",
            p.part, p.vertices, p.arcs, p.cut_arcs, p.border_vertices, p.boundary_vertices
        );
    }
    Ok(())
}
