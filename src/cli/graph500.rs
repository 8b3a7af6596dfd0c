//! `switchyard calibrate graph500`: BFS measured by the rules of Graph500's kernel 2.
//!
//! The rules kept (Graph500 specification, section "Kernel 2 - Breadth-First Search"):
//! 64 search keys drawn at random, without repetition, from the vertices of non-zero degree;
//! each search timed alone (here: the runtime's compute time, the graph already on the
//! GPUs) and validated (here: against the sequential reference, exactly); the traversed
//! edges of a search are the input edges inside the component it reached (duplicates and
//! self-loops counted as the input has them: half the degree sum of the reached vertices of
//! an undirected graph, the out-arcs of the reached vertices of a directed one); the
//! reported figure is the harmonic mean of TEPS over the searches, with the minimum,
//! quartiles, maximum and the harmonic standard deviation the specification's output lists.
//! Graph construction (kernel 1) is not timed.

use super::calibrate::RunsBackend;
use super::graph_source::{GraphArgs, resolve};
use super::run::RunOptions;
use anyhow::{Context, bail};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::path::PathBuf;
use switchyard::algo::Algorithm;
use switchyard::driver::{BackendSetup, CudaSetup, RuntimeKind};
use switchyard::graph::Csr;
use switchyard_sim::topology::Topology;

/// Arguments of `calibrate graph500`.
#[derive(clap::Args, Debug)]
pub struct Graph500Args {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    options: RunOptions,
    /// The search: `bfs` or `dobfs` (direction-optimising).
    #[arg(long, default_value = "bfs")]
    algo: Algorithm,
    /// Runtime of every search.
    #[arg(long, value_enum, default_value = "bsp")]
    runtime: RuntimeKind,
    /// GPUs of every search.
    #[arg(long, default_value_t = 1)]
    gpus: u32,
    /// With --backend cuda: run --gpus logical GPUs on this machine's GPUs.
    #[arg(long)]
    logical_gpus: bool,
    /// Real GPUs or the simulator.
    #[arg(long, value_enum, default_value = "cuda")]
    backend: RunsBackend,
    /// Topology of the simulator (a bundled name or a TOML file).
    #[arg(long, default_value = "hgx-h200x4")]
    topology: String,
    /// Search keys (Graph500: 64), drawn with the run's --seed.
    #[arg(long, default_value_t = 64)]
    roots: u32,
    /// Write the searches and the summary here as JSON.
    #[arg(long)]
    json: PathBuf,
}

/// One search.
#[derive(Debug, Serialize)]
struct Search {
    root: u32,
    time_ms: f64,
    /// Input edges in the component the search reached.
    edges: u64,
    reached: u64,
    teps: f64,
    validation: String,
}

/// Kernel 2's statistics over the searches (TEPS).
#[derive(Debug, Serialize, PartialEq)]
pub struct TepsSummary {
    /// Searches.
    pub searches: usize,
    /// Smallest TEPS.
    pub min: f64,
    /// First quartile.
    pub first_quartile: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub third_quartile: f64,
    /// Largest TEPS.
    pub max: f64,
    /// Harmonic mean: the figure Graph500 ranks by.
    pub harmonic_mean: f64,
    /// Harmonic standard deviation, as the specification's reference code computes it.
    pub harmonic_stddev: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    graph: String,
    vertices: u64,
    arcs: u64,
    algo: String,
    runtime: String,
    gpus: u32,
    backend: String,
    seed: u64,
    summary: TepsSummary,
    searches: Vec<Search>,
}

/// Runs `calibrate graph500`.
pub fn graph500(args: Graph500Args) -> anyhow::Result<()> {
    super::output::check_output_path("--json", &args.json)?;
    if !matches!(args.algo, Algorithm::Bfs | Algorithm::Dobfs) {
        bail!("--algo {}: Graph500's kernel 2 is a BFS; choose bfs or dobfs", args.algo.name());
    }
    if args.roots == 0 {
        bail!("--roots 0: Graph500 runs 64 searches; choose at least 1");
    }
    if args.backend == RunsBackend::Cuda {
        let gpus = if args.logical_gpus { 1 } else { args.gpus };
        switchyard::backend::cuda::check_available(gpus)?;
    }
    let topology = Topology::open(&args.topology)
        .with_context(|| format!("opening topology `{}`", args.topology))?;
    let (graph, name) = resolve(&args.graph, args.options.seed)?;
    let roots = search_keys(&graph, args.roots, args.options.seed);
    if roots.is_empty() {
        bail!("graph {name}: every vertex has degree 0, so there is no search key to draw");
    }
    let summary = switchyard::graph::summary::summarize(&graph);
    eprintln!(
        "graph500 kernel 2 on {name}: {} vertices, {} arcs, {} search keys (seed {})",
        graph.num_vertices(),
        graph.num_arcs(),
        roots.len(),
        args.options.seed
    );
    let mut searches = Vec::with_capacity(roots.len());
    let mut backend_name = String::new();
    let mut runtime_label = String::new();
    for (i, &root) in roots.iter().enumerate() {
        let mut spec =
            args.options.spec(args.algo, args.runtime, args.gpus, std::env::args().collect())?;
        spec.params.source = root;
        spec.validate = true;
        let setup = match args.backend {
            RunsBackend::Cuda => {
                BackendSetup::Cuda(CudaSetup { logical_gpus: args.logical_gpus, trace: false })
            }
            RunsBackend::Sim => {
                BackendSetup::Sim(args.options.sim_setup(topology.clone(), args.gpus, false)?)
            }
        };
        let output =
            switchyard::driver::run_with_summary(&graph, &name, Some(&summary), &spec, &setup)
                .with_context(|| format!("search {} from vertex {root}", i + 1))?;
        let r = &output.report;
        backend_name.clone_from(&r.backend.name);
        runtime_label = r.runtime_label();
        let (reached, edges) = component_edges(&graph, &output.values);
        let time_ms = r.time_ps as f64 / 1e9;
        let validation = match &r.validation {
            Some(v) if v.is_ok() => "passed".to_string(),
            Some(v) => format!("FAILED: {v}"),
            None => "skipped".to_string(),
        };
        let teps = if time_ms > 0.0 { edges as f64 / (time_ms / 1e3) } else { 0.0 };
        eprintln!(
            "search {:>2} root {root:>10}: {time_ms:>9.3} ms {:>8.3} GTEPS ({edges} edges) {validation}",
            i + 1,
            teps / 1e9
        );
        searches.push(Search { root, time_ms, edges, reached, teps, validation });
    }
    let teps: Vec<f64> = searches.iter().map(|s| s.teps).collect();
    let stats = teps_summary(&teps);
    println!(
        "graph500 kernel 2, {} {} on {} GPU(s) ({backend_name}), {} searches: harmonic mean {:.3} \
         GTEPS (min {:.3}, median {:.3}, max {:.3}; harmonic stddev {:.3})",
        args.algo.name(),
        runtime_label,
        args.gpus,
        stats.searches,
        stats.harmonic_mean / 1e9,
        stats.min / 1e9,
        stats.median / 1e9,
        stats.max / 1e9,
        stats.harmonic_stddev / 1e9
    );
    let failed = searches.iter().filter(|s| s.validation != "passed").count();
    let report = Report {
        graph: name,
        vertices: u64::from(graph.num_vertices()),
        arcs: graph.num_arcs(),
        algo: args.algo.name().to_string(),
        runtime: runtime_label,
        gpus: args.gpus,
        backend: backend_name,
        seed: args.options.seed,
        summary: stats,
        searches,
    };
    std::fs::write(&args.json, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("writing {}", args.json.display()))?;
    if failed > 0 {
        bail!(
            "{failed} of {} searches failed validation (see {})",
            roots.len(),
            args.json.display()
        );
    }
    Ok(())
}

/// Up to `count` distinct vertices of non-zero degree, drawn uniformly with a ChaCha8
/// stream seeded by `seed` (all of them, in a seeded order, when there are fewer).
fn search_keys(graph: &Csr, count: u32, seed: u64) -> Vec<u32> {
    let mut candidates: Vec<u32> =
        (0..graph.num_vertices()).filter(|&v| graph.degree(v) > 0).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6772_6170_6835_3030); // "graph500"
    let take = (count as usize).min(candidates.len());
    // A partial Fisher-Yates shuffle: the first `take` entries are the keys.
    for i in 0..take {
        let j = rng.random_range(i..candidates.len());
        candidates.swap(i, j);
    }
    candidates.truncate(take);
    candidates
}

/// The reached vertices of a BFS result (`u32::MAX` = unreached) and the input edges in
/// their component: half the degree sum of an undirected graph (each edge is two arcs), the
/// out-arcs of a directed one.
fn component_edges(graph: &Csr, levels: &[u32]) -> (u64, u64) {
    let mut reached = 0u64;
    let mut arcs = 0u64;
    for (v, &level) in levels.iter().enumerate() {
        if level != u32::MAX {
            reached += 1;
            arcs += graph.degree(v as u32);
        }
    }
    let edges = if graph.is_directed() { arcs } else { arcs / 2 };
    (reached, edges)
}

/// Minimum, quartiles, maximum, harmonic mean and harmonic standard deviation of `teps`
/// (Graph500's reference output; quartiles by linear interpolation between order
/// statistics). Empty input gives zeros.
pub fn teps_summary(teps: &[f64]) -> TepsSummary {
    let n = teps.len();
    let mut sorted = teps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let quantile = |q: f64| -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        let pos = q * (n - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
    };
    let positive: Vec<f64> = teps.iter().copied().filter(|&t| t > 0.0).collect();
    let (harmonic_mean, harmonic_stddev) = if positive.len() == n && n > 0 {
        let k = n as f64;
        let mean_inv = positive.iter().map(|t| 1.0 / t).sum::<f64>() / k;
        let var_inv = if n > 1 {
            positive.iter().map(|t| (1.0 / t - mean_inv).powi(2)).sum::<f64>() / (k - 1.0)
        } else {
            0.0
        };
        // The reference code's harmonic stddev: sqrt(var(1/t)) / (mean(1/t)^2 sqrt(n - 1)).
        let stddev =
            if n > 1 { var_inv.sqrt() / (mean_inv * mean_inv * (k - 1.0).sqrt()) } else { 0.0 };
        (1.0 / mean_inv, stddev)
    } else {
        (0.0, 0.0)
    };
    TepsSummary {
        searches: n,
        min: sorted.first().copied().unwrap_or(0.0),
        first_quartile: quantile(0.25),
        median: quantile(0.5),
        third_quartile: quantile(0.75),
        max: sorted.last().copied().unwrap_or(0.0),
        harmonic_mean,
        harmonic_stddev,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undirected(n: u32, edges: &[(u32, u32)]) -> Csr {
        Csr::from_edges(n, edges, None, false, Default::default()).expect("a valid graph")
    }

    #[test]
    fn the_harmonic_mean_is_the_reciprocal_of_the_mean_reciprocal() {
        // 1/2 (1/1 + 1/4) = 5/8, so the harmonic mean is 8/5; computed by hand.
        let s = teps_summary(&[1.0, 4.0]);
        assert!((s.harmonic_mean - 1.6).abs() < 1e-12, "{s:?}");
        assert_eq!((s.min, s.max, s.median), (1.0, 4.0, 2.5));
        // var(1/t) = ((1 - 5/8)^2 + (1/4 - 5/8)^2) / 1 = 9/32; stddev = sqrt(9/32) /
        // ((5/8)^2 * 1).
        let expected = (9.0f64 / 32.0).sqrt() / (25.0 / 64.0);
        assert!((s.harmonic_stddev - expected).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn quartiles_interpolate_between_order_statistics() {
        let s = teps_summary(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!((s.first_quartile, s.median, s.third_quartile), (2.0, 3.0, 4.0));
        assert_eq!(teps_summary(&[]).harmonic_mean, 0.0);
    }

    #[test]
    fn search_keys_are_distinct_vertices_of_nonzero_degree_and_depend_only_on_the_seed() {
        // A path 0-1-2 and isolated vertices 3..10.
        let graph = undirected(10, &[(0, 1), (1, 2)]);
        let keys = search_keys(&graph, 64, 7);
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2]);
        assert_eq!(keys, search_keys(&graph, 64, 7));
        let big = undirected(1000, &(0..999).map(|v| (v, v + 1)).collect::<Vec<_>>());
        let a = search_keys(&big, 64, 1);
        let mut dedup = a.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!((a.len(), dedup.len()), (64, 64));
        assert_ne!(a, search_keys(&big, 64, 2));
    }

    #[test]
    fn component_edges_count_input_edges_once() {
        // Undirected path 0-1-2 plus an edge 3-4 that the search does not reach.
        let graph = undirected(5, &[(0, 1), (1, 2), (3, 4)]);
        let levels = [0, 1, 2, u32::MAX, u32::MAX];
        assert_eq!(component_edges(&graph, &levels), (3, 2));
    }
}
