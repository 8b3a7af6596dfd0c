//! Local clustering coefficients, the LDBC Graphalytics definition, sequential: `N(v)` the
//! set of in- and out-neighbours of `v` without `v`; `LCC(v)` the number of arcs between
//! members of `N(v)` (ordered pairs `(u, w)` with `u -> w` an arc) over `|N(v)| (|N(v)| -
//! 1)`, 0 when `|N(v)| < 2`. Sorted, deduplicated lists; no shared code with the runtimes.

use crate::graph::Csr;

/// Every vertex's coefficient, in `f64`.
pub fn local_clustering_coefficients(csr: &Csr) -> Vec<f64> {
    let n = csr.num_vertices() as usize;
    // Out-neighbour sets (sorted, no repeats, no self).
    let outs: Vec<Vec<u32>> = (0..csr.num_vertices())
        .map(|u| {
            let mut list: Vec<u32> = csr.neighbors(u).iter().copied().filter(|&w| w != u).collect();
            list.sort_unstable();
            list.dedup();
            list
        })
        .collect();
    // Neighbour sets: out plus in.
    let mut around: Vec<Vec<u32>> = outs.clone();
    for (u, list) in outs.iter().enumerate() {
        for &w in list {
            around[w as usize].push(u as u32);
        }
    }
    for list in &mut around {
        list.sort_unstable();
        list.dedup();
    }
    let mut lcc = vec![0.0; n];
    for v in 0..n {
        let members = &around[v];
        let d = members.len();
        if d < 2 {
            continue;
        }
        let mut arcs = 0u64;
        for &u in members {
            arcs +=
                outs[u as usize].iter().filter(|w| members.binary_search(w).is_ok()).count() as u64;
        }
        lcc[v] = arcs as f64 / (d as f64 * (d as f64 - 1.0));
    }
    lcc
}
