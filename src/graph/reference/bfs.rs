//! BFS levels (hop distance from a source) on petgraph's `Bfs` walker.

use super::{CsrView, check_source};
use crate::graph::{Csr, GraphError, VertexId};
use petgraph::graph::NodeIndex;
use petgraph::visit::Bfs;

/// Level of a vertex the source cannot reach.
pub const BFS_UNREACHED: u32 = u32::MAX;

/// Hop distance from `source` to every vertex along out-arcs; [`BFS_UNREACHED`] where there
/// is no path.
pub fn bfs_levels(csr: &Csr, source: VertexId) -> Result<Vec<u32>, GraphError> {
    check_source(csr, source, "BFS")?;
    let graph = CsrView(csr);
    let mut levels = vec![BFS_UNREACHED; csr.num_vertices() as usize];
    levels[source as usize] = 0;
    let mut walker = Bfs::new(graph, NodeIndex::new(source as usize));
    // The walker yields vertices in nondecreasing level order, so when `u` comes out its
    // level is final and every neighbour not yet levelled is one hop further.
    while let Some(u) = walker.next(graph) {
        let u = u.index();
        let next = levels[u] + 1;
        for &v in csr.neighbors(u as VertexId) {
            if levels[v as usize] == BFS_UNREACHED {
                levels[v as usize] = next;
            }
        }
    }
    Ok(levels)
}
