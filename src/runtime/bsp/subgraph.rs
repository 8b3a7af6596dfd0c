//! Host-side preparation of the per-GPU subgraphs of the bulk-synchronous runtime
//! (seed 002 section III-C): every GPU holds its owned vertices with all their out-edges,
//! plus local proxies of the remote vertices those edges reach.
//!
//! Local id space of a GPU: owned vertices first (`0..owned`, in global id order), then
//! proxies (`owned..local`, in global id order). With duplicate-all every vertex has a
//! local copy and local ids equal global ids.

use crate::graph::{Csr, EdgeWeights};
use rayon::prelude::*;

/// The most target ranges [`Subgraph::local_transpose`] fills in parallel: each scans every
/// arc, so more pieces add reads faster than they remove random writes.
const TRANSPOSE_PIECES: usize = 16;

/// How remote vertices are duplicated locally (seed 002 section III-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Duplication {
    /// A proxy only for the immediate remote neighbours; ids are renumbered.
    OneHop,
    /// A local copy of every vertex; local ids are global ids.
    All,
}

/// One GPU's share of the graph, in its local id space.
#[derive(Clone, Debug, PartialEq)]
pub struct Subgraph {
    /// Number of owned vertices (local ids `0..owned` with one-hop duplication; with
    /// duplicate-all, owned vertices are those with `is_owned`).
    pub owned: u32,
    /// Number of local vertices (owned plus proxies).
    pub local: u32,
    /// Local CSR offsets over all local vertices (proxies have no out-edges).
    pub offsets: Vec<u64>,
    /// Local CSR targets (local ids).
    pub targets: Vec<u32>,
    /// Integer weights aligned with targets, if the graph is weighted.
    pub weights: Option<Vec<u32>>,
    /// Global id of every local vertex.
    pub global_of_local: Vec<u32>,
    /// For every local vertex: the GPU that owns it.
    pub owner_of_local: Vec<u32>,
    /// For every local vertex: its local id on its owner.
    pub owner_local_id: Vec<u32>,
    /// Out-degree in the whole graph of every local vertex (PageRank divides by it).
    pub global_degree: Vec<u32>,
}

impl Subgraph {
    /// Whether local vertex `v` is owned by this GPU.
    pub fn is_owned(&self, gpu: u32, v: u32) -> bool {
        self.owner_of_local[v as usize] == gpu
    }

    /// In-arcs of this GPU's owned vertices as a CSR over global ids (other vertices have
    /// none), from the transpose of the whole graph. For duplicate-all subgraphs, whose
    /// local ids are global ids.
    pub fn reverse_csr(&self, gpu: u32, transpose: &Csr) -> (Vec<u64>, Vec<u32>) {
        let mut offsets = Vec::with_capacity(transpose.num_vertices() as usize + 1);
        offsets.push(0u64);
        let mut sources = Vec::new();
        for v in 0..transpose.num_vertices() {
            if self.owner_of_local.get(v as usize) == Some(&gpu) {
                sources.extend_from_slice(transpose.neighbors(v));
            }
            offsets.push(sources.len() as u64);
        }
        (offsets, sources)
    }

    /// The transpose of this GPU's own arcs, in local ids: for every local vertex, the
    /// local sources of its in-arcs here (owned vertices, ascending; a vertex with several
    /// arcs to it is listed once per arc). A counting sort: the in-degrees by a parallel
    /// histogram, then the targets cut into one range of about equal arcs per thread (at
    /// most [`TRANSPOSE_PIECES`]), each filled by its thread from a scan of all arcs in
    /// source order, O(pieces x (local + arcs)) reads but each piece's writes within its
    /// range (the serial sort's random writes over all sources took most of PageRank's
    /// set-up on R-MAT 24: 40 s a run). The result does not depend on the number of threads.
    pub fn local_transpose(&self) -> (Vec<u64>, Vec<u32>) {
        use std::sync::atomic::{AtomicU64, Ordering};
        let local = self.local as usize;
        let in_degree: Vec<AtomicU64> = (0..local).map(|_| AtomicU64::new(0)).collect();
        self.targets.par_iter().for_each(|&t| {
            in_degree[t as usize].fetch_add(1, Ordering::Relaxed);
        });
        let mut offsets = vec![0u64; local + 1];
        for (v, d) in in_degree.into_iter().enumerate() {
            offsets[v + 1] = offsets[v] + d.into_inner();
        }
        let arcs = self.targets.len();
        let pieces = if arcs < (1 << 20) {
            1
        } else {
            rayon::current_num_threads().clamp(1, TRANSPOSE_PIECES)
        };
        // Target ranges [bounds[k], bounds[k + 1]) of about arcs / pieces in-arcs each.
        let mut bounds: Vec<usize> = (0..pieces)
            .map(|k| offsets.partition_point(|&o| o < (k * arcs / pieces) as u64).min(local))
            .collect();
        bounds.push(local);
        bounds.dedup();
        let mut sources = vec![0u32; arcs];
        let mut slices = Vec::with_capacity(bounds.len());
        let mut rest = sources.as_mut_slice();
        for w in bounds.windows(2) {
            let len = (offsets[w[1]] - offsets[w[0]]) as usize;
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
            slices.push((w[0], w[1], piece));
            rest = tail;
        }
        slices.into_par_iter().for_each(|(lo, hi, piece)| {
            let base = offsets[lo];
            let mut next: Vec<u64> = offsets[lo..hi].iter().map(|&o| o - base).collect();
            for u in 0..local {
                let row = self.offsets[u] as usize..self.offsets[u + 1] as usize;
                for &t in &self.targets[row] {
                    let t = t as usize;
                    if (lo..hi).contains(&t) {
                        let at = &mut next[t - lo];
                        piece[*at as usize] = u as u32;
                        *at += 1;
                    }
                }
            }
        });
        (offsets, sources)
    }

    /// Vertices of this GPU proxied here but owned by `peer` (their count sizes the send
    /// buffer to `peer`).
    pub fn proxies_owned_by(&self, gpu: u32, peer: u32) -> usize {
        if peer == gpu {
            return 0;
        }
        self.owner_of_local.iter().filter(|&&o| o == peer).count()
    }
}

/// Splits `graph` into one subgraph per part of `owner` (`owner[v]` = GPU of vertex `v`).
pub fn build_subgraphs(
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    duplication: Duplication,
) -> Vec<Subgraph> {
    let n = graph.num_vertices() as usize;
    // Local id of every vertex on its owner (owned vertices in global order).
    let mut owner_local = vec![0u32; n];
    let mut owned_count = vec![0u32; parts as usize];
    for v in 0..n {
        let p = owner[v] as usize;
        owner_local[v] = owned_count[p];
        owned_count[p] += 1;
    }
    // Weights as 32-bit words (integers, or f32 bits): the advance kernel's contract says
    // which it reads; the framework only moves them.
    let words = graph.weights().map(EdgeWeights::words);
    let int_weights = words.as_deref();
    // Host-side preparation before the simulation starts: each GPU's subgraph depends only
    // on the graph and the partition, so building them on several cores gives the same
    // subgraphs in the same order.
    (0..parts)
        .into_par_iter()
        .map(|gpu| match duplication {
            Duplication::OneHop => one_hop(graph, owner, &owner_local, gpu, int_weights),
            Duplication::All => all(graph, owner, gpu, int_weights),
        })
        .collect()
}

/// Splits `graph` for a primitive that reads two hops (its vertices' neighbours' arcs, as
/// triangle counting does): duplicate-all, and every GPU holds the arcs of every vertex
/// (the whole graph), while each still owns only its part of the vertices. Costs the whole
/// CSR per GPU; nothing needs to travel between GPUs to reach remote adjacency.
pub fn build_subgraphs_with_all_arcs(graph: &Csr, owner: &[u32], parts: u32) -> Vec<Subgraph> {
    let words = graph.weights().map(EdgeWeights::words);
    let n = graph.num_vertices();
    (0..parts)
        .map(|gpu| Subgraph {
            owned: owner.iter().filter(|&&o| o == gpu).count() as u32,
            local: n,
            offsets: graph.offsets().to_vec(),
            targets: graph.targets().to_vec(),
            weights: words.as_deref().map(<[u32]>::to_vec),
            global_of_local: (0..n).collect(),
            owner_of_local: owner.to_vec(),
            owner_local_id: (0..n).collect(),
            global_degree: (0..n).map(|v| graph.degree(v) as u32).collect(),
        })
        .collect()
}

fn one_hop(
    graph: &Csr,
    owner: &[u32],
    owner_local: &[u32],
    gpu: u32,
    weights: Option<&[u32]>,
) -> Subgraph {
    let owned_globals: Vec<u32> =
        (0..graph.num_vertices()).filter(|&v| owner[v as usize] == gpu).collect();
    // Local id of every vertex this GPU sees: owned ones first, then proxies in global id
    // order (a table over all vertices: linear time, no sorting).
    const ABSENT: u32 = u32::MAX;
    let mut local_of = vec![ABSENT; graph.num_vertices() as usize];
    for &v in &owned_globals {
        for &t in graph.neighbors(v) {
            if owner[t as usize] != gpu {
                local_of[t as usize] = 0;
            }
        }
    }
    let owned = owned_globals.len() as u32;
    let mut proxies = Vec::new();
    for (t, slot) in local_of.iter_mut().enumerate() {
        if *slot == 0 {
            *slot = owned + proxies.len() as u32;
            proxies.push(t as u32);
        }
    }
    for &v in &owned_globals {
        local_of[v as usize] = owner_local[v as usize];
    }
    let mut offsets = Vec::with_capacity(owned_globals.len() + proxies.len() + 1);
    offsets.push(0u64);
    let owned_arcs: usize = owned_globals.iter().map(|&v| graph.degree(v) as usize).sum();
    let mut targets = Vec::with_capacity(owned_arcs);
    let mut local_weights = weights.map(|_| Vec::with_capacity(owned_arcs));
    for &v in &owned_globals {
        targets.extend(graph.neighbors(v).iter().map(|&t| local_of[t as usize]));
        if let (Some(out), Some(w)) = (&mut local_weights, weights) {
            out.extend_from_slice(&w[graph.arc_range(v)]);
        }
        offsets.push(targets.len() as u64);
    }
    offsets.extend(std::iter::repeat_n(targets.len() as u64, proxies.len()));
    let global_of_local: Vec<u32> = owned_globals.iter().chain(&proxies).copied().collect();
    Subgraph {
        owned,
        local: global_of_local.len() as u32,
        offsets,
        targets,
        weights: local_weights,
        owner_of_local: global_of_local.iter().map(|&g| owner[g as usize]).collect(),
        owner_local_id: global_of_local.iter().map(|&g| owner_local[g as usize]).collect(),
        global_degree: global_of_local.iter().map(|&g| graph.degree(g) as u32).collect(),
        global_of_local,
    }
}

fn all(graph: &Csr, owner: &[u32], gpu: u32, weights: Option<&[u32]>) -> Subgraph {
    let n = graph.num_vertices();
    let mut offsets = Vec::with_capacity(n as usize + 1);
    offsets.push(0u64);
    let mut targets = Vec::new();
    let mut local_weights = weights.map(|_| Vec::new());
    let mut owned = 0;
    for v in 0..n {
        if owner[v as usize] == gpu {
            owned += 1;
            let range = graph.arc_range(v);
            targets.extend_from_slice(&graph.targets()[range.clone()]);
            if let (Some(out), Some(w)) = (&mut local_weights, weights) {
                out.extend_from_slice(&w[range]);
            }
        }
        offsets.push(targets.len() as u64);
    }
    Subgraph {
        owned,
        local: n,
        offsets,
        targets,
        weights: local_weights,
        global_of_local: (0..n).collect(),
        owner_of_local: owner.to_vec(),
        owner_local_id: (0..n).collect(),
        global_degree: (0..n).map(|v| graph.degree(v) as u32).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::BuildOptions;

    fn path4() -> Csr {
        // 0 - 1 - 2 - 3, undirected
        Csr::from_edges(4, &[(0, 1), (1, 2), (2, 3)], None, false, BuildOptions::default()).unwrap()
    }

    #[test]
    fn one_hop_keeps_every_arc_once_and_maps_proxies_to_owners() {
        let g = path4();
        let owner = [0, 0, 1, 1];
        let subs = build_subgraphs(&g, &owner, 2, Duplication::OneHop);
        assert_eq!(subs[0].owned, 2);
        assert_eq!(subs[0].global_of_local, vec![0, 1, 2]);
        assert_eq!(subs[0].owner_of_local, vec![0, 0, 1]);
        assert_eq!(subs[0].owner_local_id, vec![0, 1, 0]);
        let arcs: usize = subs.iter().map(|s| s.targets.len()).sum();
        assert_eq!(arcs as u64, g.num_arcs());
        // Every local arc maps back to a global arc.
        for (gpu, s) in subs.iter().enumerate() {
            for v in 0..s.owned {
                let gv = s.global_of_local[v as usize];
                let mut mapped: Vec<u32> = s.targets
                    [s.offsets[v as usize] as usize..s.offsets[v as usize + 1] as usize]
                    .iter()
                    .map(|&t| s.global_of_local[t as usize])
                    .collect();
                mapped.sort_unstable();
                let mut expected = g.neighbors(gv).to_vec();
                expected.sort_unstable();
                assert_eq!(mapped, expected, "gpu {gpu} vertex {gv}");
            }
        }
    }

    /// Checks a local transpose against every local arc u -> t, as (t, u), sorted.
    fn assert_is_local_transpose(s: &Subgraph, (offsets, sources): &(Vec<u64>, Vec<u32>)) {
        assert_eq!(offsets.len(), s.local as usize + 1);
        let mut want: Vec<(u32, u32)> = (0..s.local)
            .flat_map(|u| {
                let row = s.offsets[u as usize] as usize..s.offsets[u as usize + 1] as usize;
                s.targets[row].iter().map(move |&t| (t, u)).collect::<Vec<_>>()
            })
            .collect();
        want.sort_unstable();
        let got: Vec<(u32, u32)> = (0..s.local)
            .flat_map(|t| {
                let row = offsets[t as usize] as usize..offsets[t as usize + 1] as usize;
                sources[row].iter().map(move |&u| (t, u)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_local_transpose_lists_each_local_arc_once_by_its_target_sources_ascending() {
        // A directed graph with a repeated arc, split over 2 GPUs, both duplications.
        let arcs = [(0, 1), (0, 1), (0, 2), (1, 3), (2, 1), (3, 0), (3, 2), (2, 3)];
        let g = Csr::from_edges(4, &arcs, None, true, BuildOptions::default()).unwrap();
        for duplication in [Duplication::OneHop, Duplication::All] {
            for s in build_subgraphs(&g, &[0, 1, 0, 1], 2, duplication) {
                assert_is_local_transpose(&s, &s.local_transpose());
            }
        }
    }

    #[test]
    fn a_gpu_that_holds_no_vertex_has_an_empty_transpose() {
        let g = path4();
        let empty = build_subgraphs(&g, &[0; 4], 2, Duplication::OneHop).remove(1);
        assert_eq!(empty.local, 0);
        assert_eq!(empty.local_transpose(), (vec![0], vec![]));
    }

    #[test]
    fn a_large_local_transpose_is_the_same_on_any_number_of_threads() {
        // Over 2^20 arcs on one GPU, so the targets are cut into one range per thread;
        // skewed targets (a hub and a cold range) leave some ranges nearly empty.
        use rand::{RngExt, SeedableRng};
        let n = 1u32 << 14;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let arcs: Vec<(u32, u32)> = (0..(1 << 20) + 4321)
            .map(|i| {
                let t = if i % 5 == 0 { 3 } else { rng.random_range(0..n / 2) };
                (rng.random_range(0..n), t)
            })
            .collect();
        let g = Csr::from_edges(n, &arcs, None, true, BuildOptions::default()).unwrap();
        let s = build_subgraphs(&g, &vec![0; n as usize], 1, Duplication::OneHop).remove(0);
        assert!(s.targets.len() > 1 << 20);
        let on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| s.local_transpose())
        };
        let one = on(1);
        assert_is_local_transpose(&s, &one);
        for threads in [2, 5, 16] {
            assert!(on(threads) == one, "{threads} threads");
        }
    }

    #[test]
    fn duplicate_all_keeps_global_ids() {
        let g = path4();
        let owner = [1, 0, 1, 0];
        let subs = build_subgraphs(&g, &owner, 2, Duplication::All);
        assert_eq!(subs[1].local, 4);
        assert_eq!(subs[1].owned, 2);
        assert_eq!(subs[1].offsets, vec![0, 1, 1, 3, 3]);
    }
}
