//! Seeded random relabelling of vertex ids (vertex order changes speculative colouring a
//! lot: seed 004 section 6.3). Deterministic: the same seed gives the same permutation on
//! every platform and thread count.

use super::{Csr, EdgeWeights, VertexId};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A uniformly random permutation of `0..n` from `seed` (Fisher-Yates over a ChaCha8
/// stream, drawing `u64`s so the result does not depend on the pointer width).
pub fn random_permutation(n: u32, seed: u64) -> Vec<VertexId> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<VertexId> = (0..n).collect();
    for i in (1..perm.len()).rev() {
        let j = rng.random_range(0..=i as u64) as usize;
        perm.swap(i, j);
    }
    perm
}

/// Relabels `csr` with a random permutation drawn from `seed`. Returns the new graph and
/// the permutation `perm`, where old vertex `v` is new vertex `perm[v]`. Each vertex keeps
/// its arcs in their order (targets renamed), with their weights.
pub fn relabel_random(csr: &Csr, seed: u64) -> (Csr, Vec<VertexId>) {
    let perm = random_permutation(csr.num_vertices(), seed);
    (relabel(csr, &perm), perm)
}

/// Relabels `csr` with `perm` (old `v` becomes `perm[v]`); `perm` must be a permutation of
/// `0..n`.
pub fn relabel(csr: &Csr, perm: &[VertexId]) -> Csr {
    let n = csr.num_vertices() as usize;
    assert_eq!(perm.len(), n, "permutation length must equal the vertex count");
    let mut inverse = vec![0 as VertexId; n];
    for (old, &new) in perm.iter().enumerate() {
        inverse[new as usize] = old as VertexId;
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut targets = Vec::with_capacity(csr.num_arcs() as usize);
    let mut arc_order =
        Vec::with_capacity(if csr.weights().is_some() { targets.capacity() } else { 0 });
    for &old in &inverse {
        let range = csr.arc_range(old);
        targets.extend(csr.neighbors(old).iter().map(|&t| perm[t as usize]));
        if csr.weights().is_some() {
            arc_order.extend(range);
        }
        offsets.push(targets.len() as u64);
    }
    let weights = csr.weights().map(|w| match w {
        EdgeWeights::Int(w) => EdgeWeights::Int(arc_order.iter().map(|&a| w[a]).collect()),
        EdgeWeights::Float(w) => EdgeWeights::Float(arc_order.iter().map(|&a| w[a]).collect()),
    });
    Csr::from_parts(offsets, targets, weights, csr.is_directed())
        .expect("relabelling a valid CSR by a permutation gives a valid CSR")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::BuildOptions;

    #[test]
    fn permutation_is_deterministic_and_complete() {
        let a = random_permutation(1000, 7);
        assert_eq!(a, random_permutation(1000, 7));
        assert_ne!(a, random_permutation(1000, 8));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn relabelled_graph_has_the_same_edges_renamed() {
        let edges = [(0, 1), (1, 2), (2, 0), (3, 3), (0, 2)];
        let csr = Csr::from_edges(
            5,
            &edges,
            Some(EdgeWeights::Int(vec![1, 2, 3, 4, 5])),
            true,
            BuildOptions::default(),
        )
        .unwrap();
        let (new, perm) = relabel_random(&csr, 42);
        let arcs = |g: &Csr| {
            let mut v: Vec<(u32, u32, f64)> = (0..g.num_vertices())
                .flat_map(|u| {
                    g.arc_range(u)
                        .zip(g.neighbors(u))
                        .map(move |(a, &t)| (u, t, a))
                        .collect::<Vec<_>>()
                })
                .map(|(u, t, a)| (u, t, g.weights().unwrap().get_f64(a)))
                .collect();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v
        };
        let mut expected: Vec<(u32, u32, f64)> = arcs(&csr)
            .into_iter()
            .map(|(u, t, w)| (perm[u as usize], perm[t as usize], w))
            .collect();
        expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(arcs(&new), expected);
        assert_eq!(new.num_vertices(), 5);
    }
}
