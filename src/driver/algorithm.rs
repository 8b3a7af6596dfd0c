//! The algorithms a run can ask for: their names, the primitive each runs, the graph each
//! needs, and the validation of each result against the references.

use crate::algo::BspPrimitive;
use crate::algo::bfs::Bfs;
use crate::algo::cc::ConnectedComponents;
use crate::algo::dobfs::DirectionOptimizingBfs;
use crate::algo::pagerank::{PageRankLdbc, PageRankResidual};
use crate::algo::sssp::Sssp;
use crate::graph::reference::{
    self, FloatTolerance, ValidationReport, compare_components, compare_exact, compare_float,
};
use crate::graph::{Csr, EdgeWeights, GraphError};
use std::borrow::Cow;

/// An algorithm by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Breadth-first search levels from a source.
    Bfs,
    /// Direction-optimizing BFS (push/pull; broadcasts, seed 002 section VI-A).
    Dobfs,
    /// Single-source shortest paths (integer weights).
    Sssp,
    /// Weakly connected components.
    Cc,
    /// PageRank, LDBC Graphalytics definition (fixed iterations, dangling spread).
    Pr,
    /// Residual push PageRank to a tolerance (Groute/Atos).
    PrResidual,
}

impl Algorithm {
    /// All algorithms, in CLI order.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Bfs,
        Algorithm::Dobfs,
        Algorithm::Sssp,
        Algorithm::Cc,
        Algorithm::Pr,
        Algorithm::PrResidual,
    ];

    /// Name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "bfs",
            Algorithm::Dobfs => "dobfs",
            Algorithm::Sssp => "sssp",
            Algorithm::Cc => "cc",
            Algorithm::Pr => "pr",
            Algorithm::PrResidual => "pr-residual",
        }
    }

    /// Whether it needs integer edge weights.
    pub fn needs_weights(self) -> bool {
        self == Algorithm::Sssp
    }
}

/// Parameters of the algorithms.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct AlgorithmParams {
    /// Source vertex of BFS and SSSP.
    pub source: u32,
    /// PageRank damping factor.
    pub damping: f64,
    /// LDBC PageRank iterations.
    pub iterations: u32,
    /// Residual PageRank tolerance on the raw scale (each vertex starts with `1 - d`).
    pub epsilon: f64,
}

impl Default for AlgorithmParams {
    fn default() -> Self {
        AlgorithmParams { source: 0, damping: 0.85, iterations: 20, epsilon: 1e-4 }
    }
}

/// The primitive that runs `algorithm`.
pub fn primitive(algorithm: Algorithm, params: &AlgorithmParams) -> Box<dyn BspPrimitive> {
    match algorithm {
        Algorithm::Bfs => Box::new(Bfs { source: params.source }),
        Algorithm::Dobfs => Box::new(DirectionOptimizingBfs::new(params.source)),
        Algorithm::Sssp => Box::new(Sssp { source: params.source }),
        Algorithm::Cc => Box::new(ConnectedComponents),
        Algorithm::Pr => {
            Box::new(PageRankLdbc { damping: params.damping, iterations: params.iterations })
        }
        Algorithm::PrResidual => {
            Box::new(PageRankResidual { damping: params.damping, epsilon: params.epsilon })
        }
    }
}

/// The graph `algorithm` runs on: the symmetrised graph for components, else `graph`.
pub fn prepare_graph(algorithm: Algorithm, graph: &Csr) -> Cow<'_, Csr> {
    if algorithm == Algorithm::Cc && graph.is_directed() {
        Cow::Owned(graph.symmetrized())
    } else {
        Cow::Borrowed(graph)
    }
}

/// Checks the parameters against the graph before a run.
pub fn check(
    algorithm: Algorithm,
    params: &AlgorithmParams,
    graph: &Csr,
) -> Result<(), GraphError> {
    if matches!(algorithm, Algorithm::Bfs | Algorithm::Dobfs | Algorithm::Sssp)
        && params.source >= graph.num_vertices()
    {
        return Err(GraphError::VertexOutOfRange {
            what: format!("{} source (--source)", algorithm.name()),
            vertex: u64::from(params.source),
            num_vertices: graph.num_vertices(),
        });
    }
    if algorithm.needs_weights() && !matches!(graph.weights(), Some(EdgeWeights::Int(_))) {
        return Err(GraphError::WrongWeights {
            algorithm: algorithm.name().into(),
            reason: "needs integer edge weights and the graph has none; add --weights to draw \
                     uniform weights 1..=64, or load a weighted graph"
                .into(),
        });
    }
    if matches!(algorithm, Algorithm::Pr | Algorithm::PrResidual)
        && !(params.damping > 0.0 && params.damping < 1.0)
    {
        return Err(GraphError::InvalidArgument {
            what: "--damping".into(),
            found: params.damping.to_string(),
            expected: "a number strictly between 0 and 1, such as 0.85".into(),
        });
    }
    if algorithm == Algorithm::PrResidual && !(params.epsilon > 0.0 && params.epsilon.is_finite()) {
        return Err(GraphError::InvalidArgument {
            what: "--epsilon".into(),
            found: params.epsilon.to_string(),
            expected: "a positive tolerance such as 1e-4".into(),
        });
    }
    Ok(())
}

/// Validates a run's per-vertex result (`values`: u32 values or f32 bits; `aux`: f32
/// ranks) on `graph` (as prepared by [`prepare_graph`]) against the references.
///
/// Tolerances: BFS, SSSP and components are compared exactly (components as partitions).
/// The runtimes compute PageRank in `f32`: LDBC PageRank is compared within
/// `1e-3 / n + 1e-3 * |expected|`; residual PageRank is normalised (ranks divided by their
/// sum) and compared with the residual reference run to a 100x tighter tolerance, within
/// `20 * epsilon / ((1 - d) * n) + 2e-3 * |expected|`: each leftover residual below
/// `epsilon` changes a raw rank by at most `epsilon / (1 - d)`.
pub fn validate(
    algorithm: Algorithm,
    params: &AlgorithmParams,
    graph: &Csr,
    values: &[u32],
    aux: Option<&[f32]>,
) -> Result<ValidationReport, GraphError> {
    let n = f64::from(graph.num_vertices().max(1));
    Ok(match algorithm {
        Algorithm::Bfs | Algorithm::Dobfs => {
            let expected = reference::bfs_levels(graph, params.source)?;
            compare_exact("bfs levels", &expected, values)
        }
        Algorithm::Sssp => {
            let expected: Vec<u64> = reference::sssp_distances_int(graph, params.source)?;
            let actual: Vec<u64> = values
                .iter()
                .map(|&d| if d == u32::MAX { reference::SSSP_UNREACHED_INT } else { u64::from(d) })
                .collect();
            compare_exact("sssp distances", &expected, &actual)
        }
        Algorithm::Cc => {
            let expected = reference::weakly_connected_components(graph);
            compare_components(&expected, values)
        }
        Algorithm::Pr => {
            let expected = reference::pagerank_ldbc(graph, params.damping, params.iterations)?;
            let actual: Vec<f64> = aux.unwrap_or_default().iter().map(|&r| f64::from(r)).collect();
            compare_float(
                "pagerank (ldbc)",
                &expected,
                &actual,
                FloatTolerance { abs: 1e-3 / n, rel: 1e-3 },
            )
        }
        Algorithm::PrResidual => {
            let expected =
                reference::pagerank_residual(graph, params.damping, params.epsilon / 100.0)?;
            let raw: Vec<f64> = aux.unwrap_or_default().iter().map(|&r| f64::from(r)).collect();
            let sum: f64 = raw.iter().sum();
            let actual: Vec<f64> = raw.iter().map(|r| r / sum.max(f64::MIN_POSITIVE)).collect();
            let abs = 20.0 * params.epsilon / ((1.0 - params.damping) * n);
            compare_float(
                "pagerank (residual, normalised)",
                &expected.ranks,
                &actual,
                FloatTolerance { abs, rel: 2e-3 },
            )
        }
    })
}
