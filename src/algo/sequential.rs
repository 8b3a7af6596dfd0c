//! Plain sequential CSR implementations, the single-core baselines that benchmarks hold
//! the simulator's cost against (not references: those live in `graph::reference`).

use crate::graph::Csr;

/// BFS levels from `source` with a FIFO queue over the CSR (`u32::MAX`: unreached).
pub fn bfs_levels(csr: &Csr, source: u32) -> Vec<u32> {
    let mut levels = vec![u32::MAX; csr.num_vertices() as usize];
    let Some(first) = levels.get_mut(source as usize) else { return levels };
    *first = 0;
    let mut queue = Vec::with_capacity(csr.num_vertices() as usize);
    queue.push(source);
    let mut head = 0;
    while let Some(&v) = queue.get(head) {
        head += 1;
        let next = levels[v as usize] + 1;
        for &t in csr.neighbors(v) {
            if levels[t as usize] == u32::MAX {
                levels[t as usize] = next;
                queue.push(t);
            }
        }
    }
    levels
}

/// LDBC PageRank (`iterations` pull-free push rounds, dangling rank spread), in `f32` as the
/// runtimes compute it.
pub fn pagerank_ldbc(csr: &Csr, damping: f32, iterations: u32) -> Vec<f32> {
    let n = csr.num_vertices() as usize;
    let mut rank = vec![1.0 / n as f32; n];
    let mut sums = vec![0f32; n];
    for _ in 0..iterations {
        let mut dangling = 0f32;
        for v in 0..csr.num_vertices() {
            let degree = csr.degree(v);
            if degree == 0 {
                dangling += rank[v as usize];
                continue;
            }
            let share = rank[v as usize] / degree as f32;
            for &t in csr.neighbors(v) {
                sums[t as usize] += share;
            }
        }
        let base = (1.0 - damping) / n as f32 + damping * dangling / n as f32;
        for (r, s) in rank.iter_mut().zip(sums.iter_mut()) {
            *r = base + damping * *s;
            *s = 0.0;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{BuildOptions, reference};

    #[test]
    fn sequential_baselines_agree_with_the_references() {
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (4, 4)];
        let g = Csr::from_edges(6, &edges, None, true, BuildOptions::default()).unwrap();
        assert_eq!(bfs_levels(&g, 0), reference::bfs_levels(&g, 0).unwrap());
        let expected = reference::pagerank_ldbc(&g, 0.85, 10).unwrap();
        for (e, a) in expected.iter().zip(pagerank_ldbc(&g, 0.85, 10)) {
            assert!((e - f64::from(a)).abs() < 1e-6, "{e} vs {a}");
        }
    }
}
