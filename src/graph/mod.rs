//! The graph layer: CSR core, loaders, generators, partitioners and references.

mod csr;
pub mod reference;
pub mod summary;
pub mod generate;

pub use csr::{BuildOptions, Csr, EdgeWeights, VertexId};

/// Errors of the graph layer. Every variant names the input, what is wrong and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// CSR parts that do not fit together.
    #[error("invalid CSR: {0}")]
    InvalidCsr(String),
    /// A vertex id outside the graph (e.g. a BFS source).
    #[error(
        "{what} {vertex} is out of range: the graph has {num_vertices} vertices (ids 0..{num_vertices}); pick an id below {num_vertices}"
    )]
    VertexOutOfRange {
        /// What the id was given for.
        what: String,
        /// The id given.
        vertex: u64,
        /// Vertices in the graph.
        num_vertices: u32,
    },
    /// Edge weights missing or unusable for an algorithm.
    #[error("{algorithm}: {reason}")]
    WrongWeights {
        /// The algorithm that needs the weights.
        algorithm: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A parameter outside its valid range.
    #[error("{what}: found {found}, expected {expected}")]
    InvalidArgument {
        /// The parameter.
        what: String,
        /// The value given.
        found: String,
        /// What is accepted.
        expected: String,
    },
    /// A generator spec that does not parse or names impossible parameters.
    #[error("generator spec `{spec}`: {reason}")]
    InvalidSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A graph or buffer too large for memory or for u32 ids.
    #[error("{what} is too large: {reason}")]
    TooLarge {
        /// What was being built.
        what: String,
        /// Sizes and how to fix it.
        reason: String,
    },
    /// A partitioning request that cannot be met, or METIS failing.
    #[error("partitioner {partitioner}: {reason}")]
    Partition {
        /// The partitioner's name.
        partitioner: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
}
