//! The graph layer: CSR core, loaders, generators, partitioners and references.

mod csr;

pub use csr::{BuildOptions, Csr, EdgeWeights, VertexId};

/// Errors of the graph layer. Every variant names the input, what is wrong and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// CSR parts that do not fit together.
    #[error("invalid CSR: {0}")]
    InvalidCsr(String),
}
