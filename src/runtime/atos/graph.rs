//! Each GPU's part of the graph, as Atos lays it out: vertices renumbered so that every GPU
//! owns one contiguous range of new ids (`bases[g]..bases[g + 1]`, in ascending original id
//! within a GPU), so a neighbour's owner is found from its id alone (seed 003 Listing 5's
//! `findPE`) and one `u32` per arc names it. A GPU holds the out-arcs of its own vertices.

use crate::graph::Csr;

/// The renumbering and every GPU's arcs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtosGraph {
    /// First new id of every GPU, and the vertex count last (`gpus + 1` entries).
    pub bases: Vec<u32>,
    /// New id of every original vertex.
    pub new_of: Vec<u32>,
    /// Original id of every new id.
    pub old_of: Vec<u32>,
    /// Per GPU: CSR offsets over its own vertices (local index = new id - base).
    pub offsets: Vec<Vec<u64>>,
    /// Per GPU: arc targets as new ids.
    pub targets: Vec<Vec<u32>>,
}

impl AtosGraph {
    /// Splits `graph` by `owner` (the GPU of every vertex) over `gpus` GPUs.
    pub fn build(graph: &Csr, owner: &[u32], gpus: u32) -> AtosGraph {
        let n = graph.num_vertices() as usize;
        let k = gpus.max(1) as usize;
        let mut counts = vec![0u32; k];
        for &o in owner {
            counts[(o as usize).min(k - 1)] += 1;
        }
        let mut bases = vec![0u32; k + 1];
        for g in 0..k {
            bases[g + 1] = bases[g] + counts[g];
        }
        let mut next = bases.clone();
        let mut new_of = vec![0u32; n];
        let mut old_of = vec![0u32; n];
        for v in 0..n {
            let g = (owner[v] as usize).min(k - 1);
            new_of[v] = next[g];
            old_of[next[g] as usize] = v as u32;
            next[g] += 1;
        }
        let mut offsets = Vec::with_capacity(k);
        let mut targets = Vec::with_capacity(k);
        for g in 0..k {
            let (lo, hi) = (bases[g], bases[g + 1]);
            let mut off = Vec::with_capacity((hi - lo) as usize + 1);
            off.push(0u64);
            let arcs: u64 = (lo..hi).map(|u| graph.degree(old_of[u as usize])).sum();
            let mut tg = Vec::with_capacity(arcs as usize);
            for u in lo..hi {
                tg.extend(graph.neighbors(old_of[u as usize]).iter().map(|&t| new_of[t as usize]));
                off.push(tg.len() as u64);
            }
            offsets.push(off);
            targets.push(tg);
        }
        AtosGraph { bases, new_of, old_of, offsets, targets }
    }

    /// The same layout for the graph `perm` relabelled (this one was built from the graph
    /// in which vertex `v` is `perm[v]`): `new_of` and `old_of` speak the original ids.
    pub fn composed_with(mut self, perm: &[u32]) -> AtosGraph {
        let new_of_permuted = std::mem::take(&mut self.new_of);
        self.new_of = perm.iter().map(|&pv| new_of_permuted[pv as usize]).collect();
        for (v, &u) in self.new_of.iter().enumerate() {
            self.old_of[u as usize] = v as u32;
        }
        self
    }

    /// GPUs.
    pub fn gpus(&self) -> u32 {
        self.bases.len() as u32 - 1
    }

    /// Vertices GPU `g` owns.
    pub fn local_vertices(&self, g: u32) -> u32 {
        self.bases[g as usize + 1] - self.bases[g as usize]
    }

    /// Arcs of GPU `g` whose target another GPU owns.
    pub fn remote_arcs(&self, g: u32) -> u64 {
        let (lo, hi) = (self.bases[g as usize], self.bases[g as usize + 1]);
        self.targets[g as usize].iter().filter(|&&t| t < lo || t >= hi).count() as u64
    }

    /// Per-vertex values in original id order, from per-GPU values in local order.
    pub fn gather<T: Copy>(&self, per_gpu: &[Vec<T>]) -> Vec<T> {
        let mut by_new = Vec::with_capacity(self.old_of.len());
        for part in per_gpu {
            by_new.extend_from_slice(part);
        }
        self.new_of.iter().map(|&u| by_new[u as usize]).collect()
    }
}

/// The GPU owning new id `v` (`bases` as in [`AtosGraph::bases`]).
pub fn owner_of(bases: &[u32], v: u32) -> usize {
    // Few GPUs: count the sorted bases at or below `v` (a branch-free scan, called per arc).
    let k = bases.len() - 1;
    bases[1..k].iter().filter(|&&b| b <= v).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_gives_each_gpu_a_contiguous_range_and_keeps_every_arc() {
        // 0-1, 1-2, 2-3, 3-0 (directed), owners 1, 0, 1, 0.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 0)];
        let g = Csr::from_edges(4, &edges, None, true, Default::default()).unwrap();
        let a = AtosGraph::build(&g, &[1, 0, 1, 0], 2);
        assert_eq!(a.bases, vec![0, 2, 4]);
        assert_eq!(a.new_of, vec![2, 0, 3, 1]);
        assert_eq!(a.old_of, vec![1, 3, 0, 2]);
        // GPU 0 owns old 1 (new 0) -> old 2 (new 3), old 3 (new 1) -> old 0 (new 2).
        assert_eq!(a.targets[0], vec![3, 2]);
        assert_eq!(a.targets[1], vec![0, 1]);
        assert_eq!(a.remote_arcs(0), 2);
        assert_eq!((owner_of(&a.bases, 1), owner_of(&a.bases, 2)), (0, 1));
        assert_eq!(a.gather(&[vec![10, 30], vec![0, 20]]), vec![0, 10, 20, 30]);
    }
}
