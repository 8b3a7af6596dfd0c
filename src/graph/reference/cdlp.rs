//! Community detection by label propagation, the LDBC Graphalytics definition, sequential:
//! labels start as vertex ids; each iteration every vertex takes the most frequent label
//! among its in- and out-neighbours (a neighbour counted once per arc, in either
//! direction), the smallest on a tie; a vertex without neighbours keeps its label. Ordered
//! maps only, so the result depends on nothing but the graph.

use crate::graph::Csr;
use std::collections::BTreeMap;

/// CDLP labels after `iterations` synchronous iterations (dense vertex ids as labels).
pub fn cdlp_labels(csr: &Csr, iterations: u32) -> Vec<u32> {
    let n = csr.num_vertices() as usize;
    // Every vertex's in-neighbours, from the arcs.
    let mut sources: Vec<Vec<u32>> = vec![Vec::new(); n];
    for u in 0..csr.num_vertices() {
        for &v in csr.neighbors(u) {
            sources[v as usize].push(u);
        }
    }
    let mut labels: Vec<u32> = (0..csr.num_vertices()).collect();
    for _ in 0..iterations {
        let mut next = labels.clone();
        let mut changed = false;
        for v in 0..csr.num_vertices() {
            let mut frequency: BTreeMap<u32, u64> = BTreeMap::new();
            for &u in csr.neighbors(v).iter().chain(&sources[v as usize]) {
                *frequency.entry(labels[u as usize]).or_default() += 1;
            }
            // Ascending labels: the first with the highest count is the smallest of them.
            let mut best: Option<(u32, u64)> = None;
            for (&label, &count) in &frequency {
                if best.is_none_or(|(_, c)| count > c) {
                    best = Some((label, count));
                }
            }
            if let Some((label, _)) = best {
                changed |= label != labels[v as usize];
                next[v as usize] = label;
            }
        }
        labels = next;
        if !changed {
            break;
        }
    }
    labels
}
