//! Hub caching (seed 001 §V-B, Ex. 6): the adjacency lists of hub vertices (in-degree above
//! t4) are copied to every other GPU up front, so a thief that steals a hub reads its list
//! (targets and weights) from its own memory instead of through the victim's peer path. The
//! lists move whole, as every stolen list does (Alg. 1 never splits one); what caching saves
//! is the remote read, not the list's work.
//!
//! A victim's cache on a thief is four buffers: the sorted victim-local ids of its hubs (the
//! paper's bitmap, searched instead of indexed), their offsets into the cached lists, the
//! targets (victim-local ids) and the weights. `gum_steal_min` takes them as its arguments 7
//! to 10; both kernels (the simulator's, which charges it as local traffic, and the CUDA one
//! in `kernels/gum.cu`) read a hub's list there instead of through the peer pointers.

use super::cost_model::{FrontierStats, bucket_of};
use crate::backend::{Backend, BufferId, DeviceId, ElemType, HostData, StreamId, Token};
use crate::runtime::RuntimeError;
use crate::runtime::bsp::Subgraph;

/// One fragment's hub lists, on the host, in the fragment's local ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HubLists {
    /// Local ids of the fragment's own vertices with in-degree above t4, ascending.
    pub ids: Vec<u32>,
    /// `offsets[k]..offsets[k + 1]` is hub `ids[k]`'s list in `targets` and `weights`.
    pub offsets: Vec<u64>,
    /// Targets, local ids of the fragment.
    pub targets: Vec<u32>,
    /// Weights aligned with `targets` (empty for an unweighted graph).
    pub weights: Vec<u32>,
}

impl HubLists {
    /// The hubs of fragment `gpu` in `sub` (before its CSR is uploaded): its own vertices whose
    /// in-degree in the whole graph (`in_degree`, by global id) is above `t4`.
    pub fn of(sub: &Subgraph, gpu: u32, in_degree: &[u32], t4: u32) -> HubLists {
        let mut lists = HubLists { offsets: vec![0], ..HubLists::default() };
        for v in 0..sub.local {
            let global = sub.global_of_local[v as usize] as usize;
            if sub.owner_of_local[v as usize] != gpu || in_degree[global] <= t4 {
                continue;
            }
            let (a, b) = (sub.offsets[v as usize] as usize, sub.offsets[v as usize + 1] as usize);
            lists.ids.push(v);
            lists.targets.extend_from_slice(&sub.targets[a..b]);
            if let Some(w) = &sub.weights {
                lists.weights.extend_from_slice(&w[a..b]);
            }
            lists.offsets.push(lists.targets.len() as u64);
        }
        lists
    }

    /// Whether the fragment has no hubs.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// A victim's hub lists on a thief: the four buffers `gum_steal_min` takes after its seven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HubCache {
    /// Sorted hub ids, offsets, targets, weights.
    pub buffers: [BufferId; 4],
}

impl HubCache {
    /// Allocates `lists` on `device` and queues their upload on `stream`; the writes'
    /// tokens (`phase` in the top byte, then their index in `tokens`) go to `tokens`.
    pub fn upload<B: Backend + ?Sized>(
        backend: &mut B,
        device: DeviceId,
        stream: StreamId,
        lists: &HubLists,
        tokens: &mut Vec<Token>,
        phase: u8,
    ) -> Result<HubCache, RuntimeError> {
        let contents = [
            (ElemType::U32, "hub ids", HostData::U32(lists.ids.clone())),
            (ElemType::U64, "hub offsets", HostData::U64(lists.offsets.clone())),
            (ElemType::U32, "hub targets", HostData::U32(lists.targets.clone())),
            (ElemType::U32, "hub weights", HostData::U32(lists.weights.clone())),
        ];
        let mut buffers = [BufferId(0); 4];
        for (slot, (elem, label, data)) in buffers.iter_mut().zip(contents) {
            *slot = backend.alloc(device, elem, data.len(), label)?;
            if !data.is_empty() {
                let t = Token((u64::from(phase) << 56) | tokens.len() as u64);
                backend.write_from_host(stream, *slot, 0, data, Some(t))?;
                tokens.push(t);
            }
        }
        Ok(HubCache { buffers })
    }
}

/// The share of a frontier's edges that leave hubs, estimated from its out-degree histogram:
/// the edges of vertices in buckets whose every degree is above `t4` (out-degree standing in
/// for in-degree, equal on a symmetric graph). A lower bound: a bucket that straddles t4 is
/// left out.
pub fn hub_edge_share(stats: &FrontierStats, t4: u32) -> f64 {
    if stats.out_edges == 0 {
        return 0.0;
    }
    // Bucket b holds degrees 2^(b-1)..2^b - 1; the first bucket above t4 is that of t4 + 1
    // if t4 + 1 starts its bucket, else the next one.
    let d = u64::from(t4) + 1;
    let first = if d.is_power_of_two() { bucket_of(d) } else { bucket_of(d) + 1 };
    let edges: u64 = stats.bucket_edges.iter().skip(first).sum();
    (edges as f64 / stats.out_edges as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Csr;
    use crate::runtime::bsp::{Duplication, build_subgraphs};

    #[test]
    fn hub_lists_hold_the_owned_hubs_lists_in_local_ids() {
        // A directed star around 0 both ways (in-degree 4); two parts: 0, 1 on part 0.
        let arcs = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (2, 0), (3, 0), (4, 0)];
        let csr = Csr::from_edges(5, &arcs, None, true, Default::default()).expect("csr");
        let owner = vec![0, 0, 1, 1, 1];
        let subs = build_subgraphs(&csr, &owner, 2, Duplication::OneHop);
        let in_degree = [4, 1, 1, 1, 1];
        let lists = HubLists::of(&subs[0], 0, &in_degree, 3);
        assert_eq!(lists.ids.len(), 1);
        let hub = lists.ids[0];
        assert_eq!(subs[0].global_of_local[hub as usize], 0);
        assert_eq!(lists.offsets, vec![0, 4]);
        let mut globals: Vec<u32> =
            lists.targets.iter().map(|&t| subs[0].global_of_local[t as usize]).collect();
        globals.sort_unstable();
        assert_eq!(globals, vec![1, 2, 3, 4]);
        assert!(HubLists::of(&subs[1], 1, &in_degree, 3).is_empty(), "part 1 owns no hub");
        assert!(HubLists::of(&subs[0], 0, &in_degree, 4).is_empty(), "t4 is exclusive");
    }

    #[test]
    fn hub_share_counts_the_buckets_above_t4() {
        let mut stats = FrontierStats::from_degrees([1u64, 2, 3, 4096, 5000].map(|d| (d, d)));
        assert_eq!(stats.out_edges, 1 + 2 + 3 + 4096 + 5000);
        // t4 = 4095: degrees 4096.. are hubs, bucket 13 holds 4096..8191.
        let share = hub_edge_share(&stats, 4095);
        assert!((share - 9096.0 / 9102.0).abs() < 1e-12, "{share}");
        // t4 = 4096: bucket 13 straddles it and is left out.
        assert_eq!(hub_edge_share(&stats, 4096), 0.0);
        stats.out_edges = 0;
        assert_eq!(hub_edge_share(&stats, 1), 0.0);
    }
}
