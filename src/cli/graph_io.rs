//! `switchyard graph convert`: load a graph in any supported format and write it in another.
//! The binary CSR format is written only here.

use super::output::{check_output_path, write_file};
use anyhow::bail;
use std::path::{Path, PathBuf};
use switchyard::graph::formats::{self, GraphFormat, ldbc, metis};
use switchyard::graph::{BuildOptions, LoadOptions, LoadedGraph, load_graph, relabel_random};

/// Arguments of `graph convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// Graph file to read (gzip is detected and decompressed). `--input` is accepted as a
    /// hidden alias (its old spelling), so existing scripts keep working.
    #[arg(long = "graph", alias = "input")]
    pub graph: PathBuf,
    /// Format of the input; detected from the content when omitted. The binary CSR format
    /// is read only when named here.
    #[arg(long, value_enum)]
    pub format: Option<GraphFormat>,
    /// File to write. For `--to ldbc` a base name: BASE.v, BASE.e and BASE.properties are
    /// written. A name ending in `.gz` is gzip-compressed (text formats only).
    #[arg(long)]
    pub output: PathBuf,
    /// Format to write.
    #[arg(long, value_enum)]
    pub to: GraphFormat,
    /// Read the graph as directed (`true`) or undirected (`false`), overriding the file.
    #[arg(long)]
    pub directed: Option<bool>,
    /// Drop self-loops while loading.
    #[arg(long)]
    pub drop_self_loops: bool,
    /// Drop repeated edges while loading.
    #[arg(long)]
    pub drop_duplicates: bool,
    /// Relabel vertices with a random permutation drawn from this seed (the file's own ids
    /// are then not written back).
    #[arg(long)]
    pub relabel_seed: Option<u64>,
}

/// Runs `graph convert`.
pub fn convert(args: ConvertArgs) -> anyhow::Result<()> {
    if same_file(&args.graph, &args.output) {
        bail!(
            "--output {} is the input file (--graph); choose another output path so the input is not lost",
            args.output.display()
        );
    }
    let gz = args.output.extension().is_some_and(|e| e == "gz");
    if gz && args.to == GraphFormat::Binary {
        bail!(
            "--output {} ends in .gz, but the binary CSR format is written uncompressed; drop the .gz",
            args.output.display()
        );
    }
    check_output_path("--output", &args.output)?;
    let options = LoadOptions {
        format: args.format,
        directed: args.directed,
        build: BuildOptions {
            drop_self_loops: args.drop_self_loops,
            drop_duplicates: args.drop_duplicates,
        },
    };
    let started = std::time::Instant::now();
    let mut graph = load_graph(&args.graph, &options)?;
    let load_s = started.elapsed().as_secs_f64();
    if let Some(seed) = args.relabel_seed {
        let (csr, _) = relabel_random(&graph.csr, seed);
        graph = LoadedGraph { csr, original_ids: None, metis: None, ..graph };
    }
    let started = std::time::Instant::now();
    let written = write(&graph, args.to, &args.output, gz)?;
    println!(
        "read {} ({}) in {load_s:.3} s: {} vertices, {} arcs, {}; wrote {} ({}) in {:.3} s",
        args.graph.display(),
        graph.format,
        graph.csr.num_vertices(),
        graph.csr.num_arcs(),
        if graph.csr.is_directed() { "directed" } else { "undirected" },
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        args.to,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn write(
    graph: &LoadedGraph,
    to: GraphFormat,
    output: &Path,
    gz: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let name = output.display().to_string();
    let ids = graph.original_ids.as_deref();
    match to {
        GraphFormat::Ldbc => {
            let base = output.to_string_lossy().trim_end_matches(".gz").to_string();
            let stem = Path::new(&base)
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "graph".into());
            let mut properties = graph.ldbc.clone().unwrap_or_default();
            properties.name = stem;
            let suffix = if gz { ".gz" } else { "" };
            let paths: Vec<PathBuf> = [".v", ".e", ".properties"]
                .iter()
                .map(|e| PathBuf::from(format!("{base}{e}{suffix}")))
                .collect();
            let mut bufs = (Vec::new(), Vec::new(), Vec::new());
            ldbc::write(&mut bufs.0, &mut bufs.1, &mut bufs.2, &graph.csr, ids, &properties)?;
            for (path, bytes) in paths.iter().zip([bufs.0, bufs.1, bufs.2]) {
                write_file(path, gz, |w| Ok(w.write_all(&bytes)?))?;
            }
            Ok(paths)
        }
        GraphFormat::Metis => {
            write_file(output, gz, |w| {
                Ok(metis::write(w, &graph.csr, graph.metis.as_ref(), &name)?)
            })?;
            Ok(vec![output.to_path_buf()])
        }
        _ => {
            write_file(output, gz, |w| Ok(formats::write_graph(w, to, &graph.csr, ids, &name)?))?;
            Ok(vec![output.to_path_buf()])
        }
    }
}
