//! Weakly connected components on petgraph's `UnionFind`.

use crate::graph::Csr;
use petgraph::unionfind::UnionFind;

/// Component label of every vertex, arcs taken as undirected. The label is the smallest
/// vertex id of the component (a canonical choice; compare labellings with
/// [`super::compare_components`], which ignores label values).
pub fn weakly_connected_components(csr: &Csr) -> Vec<u32> {
    let n = csr.num_vertices() as usize;
    let mut sets = UnionFind::<u32>::new(n);
    for u in 0..csr.num_vertices() {
        for &v in csr.neighbors(u) {
            sets.union(u, v);
        }
    }
    let roots = sets.into_labeling();
    let mut smallest = vec![u32::MAX; n];
    for (v, &root) in roots.iter().enumerate() {
        let s = &mut smallest[root as usize];
        *s = (*s).min(v as u32);
    }
    roots.iter().map(|&root| smallest[root as usize]).collect()
}

/// Number of distinct labels in a component labelling.
pub fn component_count(labels: &[u32]) -> u64 {
    let mut sorted = labels.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len() as u64
}
