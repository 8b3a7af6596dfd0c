//! The graph layer: CSR core, loaders, generators, partitioners and references.

mod csr;
pub mod formats;
pub mod generate;
pub mod load;
pub mod partition;
pub mod reference;
pub mod relabel;
pub mod results;
pub mod summary;

pub use csr::{BuildOptions, Csr, EdgeWeights, VertexId};
pub use formats::GraphFormat;
pub use formats::ldbc::LdbcProperties;
pub use load::{
    InputProblem, LoadOptions, LoadedGraph, VertexIds, load_graph, load_graph_from_bytes,
};
pub use relabel::relabel_random;
pub use results::{ResultValue, format_float, read_vertex_values, write_vertex_values};

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
    /// A graph file could not be read or written.
    #[error("{path}: {action} failed: {source}; check the path and its permissions")]
    Io {
        /// The file.
        path: String,
        /// `reading` or `writing`.
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A graph path that names something other than a regular file this process may read
    /// (a directory, a FIFO, a device or socket, a file without read permission).
    #[error("{path}: {problem}; {fix}")]
    UnusableInput {
        /// The path as given.
        path: String,
        /// What it is instead of a readable graph file.
        problem: InputProblem,
        /// How to fix it.
        fix: String,
    },
    /// A line of a graph file that does not parse.
    #[error("{file}:{line}: expected {expected}, found {found}; {fix}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line number.
        line: u64,
        /// What the parser expected.
        expected: String,
        /// What it found.
        found: String,
        /// How to fix it.
        fix: String,
    },
    /// A graph file that is wrong as a whole (format, header, binary checksum).
    #[error("{file}: {problem}; {fix}")]
    Format {
        /// The file.
        file: String,
        /// What is wrong.
        problem: String,
        /// How to fix it.
        fix: String,
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
