//! Reference results and validators. Every algorithm the runtimes run has a plain,
//! sequential reference here, built where it fits on `petgraph` (BFS walker, Dijkstra,
//! union-find), and a comparison that returns a [`ValidationReport`].
//!
//! | algorithm | reference | comparison |
//! |---|---|---|
//! | BFS | [`bfs_levels`] (petgraph `Bfs`) | exact ([`compare_exact`]) |
//! | SSSP | [`sssp_distances_int`] / [`sssp_distances_f32`] (petgraph `dijkstra`; [`sssp_distances_float`] in `f64` for the truth) | exact / exact in `f32` arithmetic |
//! | WCC | [`weakly_connected_components`] (petgraph `UnionFind`) | as partitions ([`compare_components`]) |
//! | PageRank | [`pagerank_ldbc`] (LDBC Graphalytics) and [`pagerank_residual`] (Groute/Atos push) | [`compare_float`] |
//! | colouring | [`greedy_coloring`] | [`check_coloring`] (validity and colour count) |
//! | CDLP | [`cdlp_labels`] (LDBC Graphalytics) | exact |
//! | LCC | [`local_clustering_coefficients`] (LDBC Graphalytics) | [`compare_float`] |
//!
//! Architecture invariant: references are sequential and deterministic; they never share
//! code with the runtimes they check.

mod bfs;
mod cdlp;
mod coloring;
mod lcc;
mod pagerank;
mod sssp;
mod validate;
mod wcc;

pub use bfs::{BFS_UNREACHED, bfs_levels};
pub use cdlp::cdlp_labels;
pub use coloring::{CONFLICTS_LISTED_MAX, ColoringReport, check_coloring, greedy_coloring};
pub use lcc::local_clustering_coefficients;
pub use pagerank::{ResidualPageRank, pagerank_ldbc, pagerank_residual};
pub use sssp::{SSSP_UNREACHED_INT, sssp_distances_f32, sssp_distances_float, sssp_distances_int};
pub use validate::{
    FloatTolerance, MISMATCHES_LISTED_MAX, Mismatch, ValidationReport, compare_components,
    compare_exact, compare_float,
};
pub use wcc::{component_count, weakly_connected_components};

use super::{Csr, GraphError, VertexId};

/// Checks that `source` is a vertex of `csr`.
pub(crate) fn check_source(csr: &Csr, source: VertexId, algorithm: &str) -> Result<(), GraphError> {
    if source >= csr.num_vertices() {
        return Err(GraphError::VertexOutOfRange {
            what: format!("{algorithm} source"),
            vertex: u64::from(source),
            num_vertices: csr.num_vertices(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
mod view;

pub(crate) use view::CsrView;
