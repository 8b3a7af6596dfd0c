//! The algorithm seam: one module per algorithm, owning everything about it.
//!
//! Architecture invariant: an algorithm is one module here. It says what it is called, what
//! it needs of its graph (weights, symmetry, a source), how its parameters are checked, how
//! its result is validated against its sequential reference (with the tolerance and why),
//! and the operators it gives each runtime that can run it: a [`BspPrimitive`] for the
//! bulk-synchronous runtime, [`GrouteOperators`] for Groute. Runtimes own mechanisms only
//! (frontiers, worklists, routers, termination) and never name an algorithm. Adding an
//! algorithm means a module here, its section of `kernels/*.cu` and its reference in
//! `graph::reference`, plus one line in [`Algorithm`]'s table ([`Algorithm::instance`]).

pub mod bfs;
pub mod cc;
pub mod cdlp;
pub mod coloring;
pub mod dobfs;
pub(crate) mod gum;
pub mod lcc;
pub mod pagerank;
pub mod sequential;
pub mod sssp;

use crate::backend::KernelRegistry;
use crate::graph::reference::ValidationReport;
use crate::graph::{Csr, GraphError, ResultValue};
pub use crate::runtime::atos::AtosApp;
pub use crate::runtime::bsp::BspPrimitive;
pub use crate::runtime::groute::GrouteOperators;
pub use crate::runtime::gum::GumOperators;
use std::borrow::Cow;

/// An algorithm by name: the registry of every algorithm the product runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Breadth-first search levels from a source.
    Bfs,
    /// Direction-optimizing BFS (push/pull; broadcasts, seed 002 section VI-A).
    Dobfs,
    /// Single-source shortest paths (integer or real weights).
    Sssp,
    /// Weakly connected components.
    Cc,
    /// PageRank, LDBC Graphalytics definition (fixed iterations, dangling spread).
    Pr,
    /// Residual push PageRank to a tolerance (Groute/Atos).
    PrResidual,
    /// Community detection by label propagation, LDBC Graphalytics definition.
    Cdlp,
    /// Local clustering coefficient, LDBC Graphalytics definition.
    Lcc,
    /// Speculative greedy graph colouring (seed 004 sec. 5.3).
    Color,
}

impl Algorithm {
    /// All algorithms, in CLI order.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::Bfs,
        Algorithm::Dobfs,
        Algorithm::Sssp,
        Algorithm::Cc,
        Algorithm::Pr,
        Algorithm::PrResidual,
        Algorithm::Cdlp,
        Algorithm::Lcc,
        Algorithm::Color,
    ];

    /// The algorithm with its parameters: the one table from names to modules.
    pub fn instance(self, params: &AlgorithmParams) -> Box<dyn GraphAlgorithm> {
        match self {
            Algorithm::Bfs => Box::new(bfs::Bfs { source: params.source }),
            Algorithm::Dobfs => Box::new(dobfs::DirectionOptimizingBfs {
                source: params.source,
                alpha: params.dobfs_alpha,
                beta: params.dobfs_beta,
            }),
            Algorithm::Sssp => {
                Box::new(sssp::Sssp { source: params.source, weights: Default::default() })
            }
            Algorithm::Cc => Box::new(cc::ConnectedComponents),
            Algorithm::Pr => Box::new(pagerank::PageRankLdbc {
                damping: params.damping,
                iterations: params.iterations,
                direction: params.pr_direction,
            }),
            Algorithm::PrResidual => Box::new(pagerank::PageRankResidual {
                damping: params.damping,
                epsilon: params.epsilon,
            }),
            Algorithm::Cdlp => Box::new(cdlp::Cdlp { iterations: params.iterations }),
            Algorithm::Lcc => Box::new(lcc::Lcc),
            Algorithm::Color => Box::new(coloring::Coloring),
        }
    }

    /// The algorithm with its parameters, specialised to what `graph` carries: SSSP picks
    /// its integer or real-weight operators from the graph's weights. Runs use this one;
    /// [`Algorithm::instance`] is the graph-independent view (names, needs, runtimes).
    pub fn instance_for(self, params: &AlgorithmParams, graph: &Csr) -> Box<dyn GraphAlgorithm> {
        match self {
            Algorithm::Sssp => Box::new(sssp::Sssp::for_graph(params.source, graph)),
            other => other.instance(params),
        }
    }

    /// Name as the CLI spells it.
    pub fn name(self) -> &'static str {
        self.instance(&AlgorithmParams::default()).name()
    }

    /// What it needs of its graph.
    pub fn needs(self) -> Needs {
        self.instance(&AlgorithmParams::default()).needs()
    }

    /// Whether it needs edge weights.
    pub fn needs_weights(self) -> bool {
        self.needs().weights
    }
}

/// Parameters of the algorithms.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct AlgorithmParams {
    /// Source vertex of BFS and SSSP.
    pub source: u32,
    /// PageRank damping factor.
    pub damping: f64,
    /// Iterations of LDBC PageRank and of CDLP.
    pub iterations: u32,
    /// Residual PageRank tolerance on the raw scale (each vertex starts with `1 - d`).
    pub epsilon: f64,
    /// Direction-optimizing BFS: push to pull when the frontier exceeds the unvisited
    /// vertices divided by this.
    pub dobfs_alpha: f64,
    /// Direction-optimizing BFS: pull back to push when the frontier falls below the
    /// vertex count divided by this.
    pub dobfs_beta: f64,
    /// LDBC PageRank on the bulk-synchronous runtime: push or pull the shares.
    pub pr_direction: pagerank::PrDirection,
}

impl Default for AlgorithmParams {
    fn default() -> Self {
        AlgorithmParams {
            source: 0,
            damping: 0.85,
            iterations: 20,
            epsilon: 1e-4,
            dobfs_alpha: dobfs::DEFAULT_ALPHA,
            dobfs_beta: dobfs::DEFAULT_BETA,
            pr_direction: pagerank::PrDirection::default(),
        }
    }
}

/// What an algorithm needs of its input graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Edge weights (integer or real; an algorithm that takes one kind only says so in its
    /// `check_params`).
    pub weights: bool,
    /// The symmetrised graph (weakly connected components of a directed graph).
    pub undirected: bool,
}

/// A run's per-vertex result as the runtimes return it.
#[derive(Clone, Copy, Debug)]
pub struct VertexResult<'a> {
    /// One value per vertex: `u32` values, or `f32` bits.
    pub values: &'a [u32],
    /// One `f32` per vertex where the algorithm has a second value (PageRank ranks).
    pub aux: Option<&'a [f32]>,
}

/// One algorithm with its parameters: everything the product knows about it.
pub trait GraphAlgorithm {
    /// Name as the CLI spells it.
    fn name(&self) -> &'static str;
    /// What it needs of its graph.
    fn needs(&self) -> Needs {
        Needs::default()
    }
    /// The name with the variant this instance runs, for messages (e.g. "sssp (real-valued
    /// f32 weights)"); the name by default.
    fn describe(&self) -> String {
        self.name().to_string()
    }
    /// Its source vertex, if it has one (checked against the graph).
    fn source(&self) -> Option<u32> {
        None
    }
    /// The graph it runs on, made from the input graph: by default the symmetrised graph
    /// where [`Needs::undirected`] asks for it, else the input. Algorithms that need another
    /// shape (CDLP's neighbour multiset, LCC's neighbourhoods) build it here; validation
    /// then receives this graph.
    fn prepare<'g>(&self, graph: &'g Csr) -> Cow<'g, Csr> {
        if self.needs().undirected && graph.is_directed() {
            Cow::Owned(graph.symmetrized())
        } else {
            Cow::Borrowed(graph)
        }
    }
    /// Checks its parameters against the graph before a run (the needs and the source are
    /// checked by [`check`], which calls this too).
    fn check_params(&self, _graph: &Csr) -> Result<(), GraphError> {
        Ok(())
    }
    /// Validates a result on `graph` (as [`prepare_graph`] made it) against the
    /// algorithm's sequential reference.
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError>;
    /// Its result per vertex as the Graphalytics output file writes it (`run --output`):
    /// by default each value as an integer. Algorithms whose values are levels, distances,
    /// ranks or vertex labels say so.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<ResultValue> {
        result.values.iter().map(|&v| ResultValue::Int(i64::from(v))).collect()
    }
    /// Its operators for the bulk-synchronous runtime, if it runs there.
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        None
    }
    /// Its operators for the Groute runtime, if it runs there.
    fn groute(&self) -> Option<GrouteOperators> {
        None
    }
    /// Its operators for the Atos runtime, if it runs there.
    fn atos(&self) -> Option<Box<dyn AtosApp>> {
        None
    }
    /// Its operators for GUM, if it runs there (see `gum.rs`).
    fn gum(&self) -> Option<GumOperators> {
        None
    }
}

/// Checks `algorithm`'s needs, source and parameters against `graph` before a run.
pub fn check(algorithm: &dyn GraphAlgorithm, graph: &Csr) -> Result<(), GraphError> {
    if let Some(source) = algorithm.source()
        && source >= graph.num_vertices()
    {
        return Err(GraphError::VertexOutOfRange {
            what: format!("{} source (--source)", algorithm.name()),
            vertex: u64::from(source),
            num_vertices: graph.num_vertices(),
        });
    }
    if algorithm.needs().weights && graph.weights().is_none() {
        return Err(GraphError::WrongWeights {
            algorithm: algorithm.name().into(),
            reason: "needs edge weights and the graph has none; add --weights to draw uniform \
                     integer weights 1..=64, or load a weighted graph (a third column of \
                     weights in its edge lines)"
                .into(),
        });
    }
    algorithm.check_params(graph)
}

/// The graph `algorithm` runs on ([`GraphAlgorithm::prepare`]).
pub fn prepare_graph<'g>(algorithm: &dyn GraphAlgorithm, graph: &'g Csr) -> Cow<'g, Csr> {
    algorithm.prepare(graph)
}

/// Checks a PageRank damping factor.
pub(crate) fn check_damping(damping: f64) -> Result<(), GraphError> {
    if damping > 0.0 && damping < 1.0 {
        Ok(())
    } else {
        Err(GraphError::InvalidArgument {
            what: "--damping".into(),
            found: damping.to_string(),
            expected: "a number strictly between 0 and 1, such as 0.85".into(),
        })
    }
}

/// Registers every algorithm's kernels (every runtime's operators).
pub fn register(registry: &mut KernelRegistry) {
    bfs::register(registry);
    sssp::register(registry);
    cc::register(registry);
    dobfs::register(registry);
    pagerank::register(registry);
    cdlp::register(registry);
    lcc::register(registry);
    coloring::register(registry);
}
