//! Routing policies (seed 000 section 4.2): the callback a router asks where a segment
//! goes. A policy returns candidate destinations and whether one of them (the first with a
//! free receive buffer) or all of them get the segment.

use super::context::Endpoint;

/// What a policy knows about a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The program's tag.
    pub tag: u64,
    /// Elements.
    pub len: usize,
}

/// Whether a segment goes to one of the candidates or to all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteMode {
    /// The first candidate with a free receive buffer gets it (availability).
    Any,
    /// Every candidate gets a copy.
    All,
}

/// A routing decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Candidate destinations, in preference order.
    pub to: Vec<Endpoint>,
    /// One of them or all of them.
    pub mode: RouteMode,
}

/// The routing-policy callback of a router.
pub trait RoutingPolicy {
    /// Where a segment from `source` goes, out of the router's `destinations`.
    fn route(
        &mut self,
        segment: &SegmentInfo,
        source: Endpoint,
        destinations: &[Endpoint],
    ) -> Route;
}

/// Any closure with the callback's signature is a policy.
impl<F> RoutingPolicy for F
where
    F: FnMut(&SegmentInfo, Endpoint, &[Endpoint]) -> Route,
{
    fn route(
        &mut self,
        segment: &SegmentInfo,
        source: Endpoint,
        destinations: &[Endpoint],
    ) -> Route {
        self(segment, source, destinations)
    }
}

/// The built-in policies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Any available destination other than the source (load balancing by availability).
    AnyAvailable,
    /// The next device after the source in `order` (a ring); segments from the host go to
    /// the first device of the ring.
    Ring {
        /// Ring order of the devices.
        order: Vec<Endpoint>,
    },
    /// Every destination other than the source.
    Broadcast,
    /// Segment `tag` goes to destination `tag mod n` (a static split).
    Scatter,
    /// Everything goes to one destination.
    Gather {
        /// The destination.
        to: Endpoint,
    },
    /// Each source sends to its parent in a reduction tree (see [`reduction_tree`]).
    Tree {
        /// `(child, parent)` pairs; the root has none.
        parent: Vec<(Endpoint, Endpoint)>,
    },
}

impl RoutingPolicy for Policy {
    fn route(
        &mut self,
        segment: &SegmentInfo,
        source: Endpoint,
        destinations: &[Endpoint],
    ) -> Route {
        let others = || destinations.iter().copied().filter(|&d| d != source).collect();
        match self {
            Policy::AnyAvailable => Route { to: others(), mode: RouteMode::Any },
            Policy::Broadcast => Route { to: others(), mode: RouteMode::All },
            Policy::Ring { order } => {
                let next = match order.iter().position(|&e| e == source) {
                    Some(i) => order[(i + 1) % order.len()],
                    None => order[0],
                };
                Route { to: vec![next], mode: RouteMode::All }
            }
            Policy::Scatter => {
                let i = (segment.tag % destinations.len().max(1) as u64) as usize;
                Route { to: vec![destinations[i]], mode: RouteMode::All }
            }
            Policy::Gather { to } => Route { to: vec![*to], mode: RouteMode::All },
            Policy::Tree { parent } => Route {
                to: parent.iter().filter(|(c, _)| *c == source).map(|&(_, p)| p).collect(),
                mode: RouteMode::All,
            },
        }
    }
}

/// A reduction tree that pairs siblings by the topology: in each round, every remaining
/// device is paired greedily with the remaining device it has the widest path to (ties to
/// the lower index); the higher-numbered device of each pair sends to the lower one and
/// drops out. Returns the rounds, each a list of `(child, parent)` transfers; device 0 is
/// the root. `bandwidth(a, b)` is the path bandwidth between devices.
pub fn reduction_tree(devices: u32, bandwidth: impl Fn(u32, u32) -> u64) -> Vec<Vec<(u32, u32)>> {
    let mut remaining: Vec<u32> = (0..devices).collect();
    let mut rounds = Vec::new();
    while remaining.len() > 1 {
        let mut pairs: Vec<(u64, u32, u32)> = Vec::new();
        for (i, &a) in remaining.iter().enumerate() {
            for &b in &remaining[i + 1..] {
                pairs.push((bandwidth(a, b), a, b));
            }
        }
        // Widest first; ties by lower indices for a deterministic, readable tree.
        pairs.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        let mut taken = vec![false; devices as usize];
        let mut round = Vec::new();
        for (_, a, b) in pairs {
            if !taken[a as usize] && !taken[b as usize] {
                taken[a as usize] = true;
                taken[b as usize] = true;
                round.push((b.max(a), b.min(a)));
            }
        }
        round.sort();
        remaining.retain(|d| !round.iter().any(|&(child, _)| child == *d));
        rounds.push(round);
    }
    rounds
}

/// The ring order over `devices` GPUs whose narrowest hop (the one back to device 0
/// included) is widest; ties: larger total bandwidth, then lexicographically smallest;
/// starting at device 0. Exhaustive for up to 9 devices; index order beyond.
pub fn widest_ring(devices: u32, bandwidth: impl Fn(u32, u32) -> u64) -> Vec<u32> {
    widest_order(devices, bandwidth, true)
}

/// The chain from device 0 through all `devices` GPUs whose narrowest hop is widest (no hop
/// back to 0: a broadcast's path), with [`widest_ring`]'s tie rules.
pub fn widest_chain(devices: u32, bandwidth: impl Fn(u32, u32) -> u64) -> Vec<u32> {
    widest_order(devices, bandwidth, false)
}

fn widest_order(devices: u32, bandwidth: impl Fn(u32, u32) -> u64, closed: bool) -> Vec<u32> {
    let index_order: Vec<u32> = (0..devices).collect();
    if devices > 9 {
        return index_order;
    }
    let score = |order: &[u32]| {
        let n = order.len();
        let hops = if closed { n } else { n.saturating_sub(1) };
        let widths = (0..hops).map(|i| bandwidth(order[i], order[(i + 1) % n]));
        (widths.clone().min().unwrap_or(0), widths.sum::<u64>())
    };
    let mut best = index_order.clone();
    let mut best_score = score(&best);
    let mut rest: Vec<u32> = (1..devices).collect();
    permute(&mut rest, 0, &mut |perm| {
        let order: Vec<u32> = std::iter::once(0).chain(perm.iter().copied()).collect();
        let s = score(&order);
        if s > best_score || (s == best_score && order < best) {
            best_score = s;
            best = order;
        }
    });
    best
}

fn permute(items: &mut Vec<u32>, k: usize, visit: &mut impl FnMut(&[u32])) {
    if k == items.len() {
        visit(items);
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permute(items, k + 1, visit);
        items.swap(k, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dgx1_lanes(a: u32, b: u32) -> u64 {
        // seed 001 Fig. 2: two lanes, one lane, none (host).
        let two = [(0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (4, 7), (5, 6), (6, 7)];
        let one = [(0, 1), (0, 2), (1, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7)];
        let key = (a.min(b), a.max(b));
        if two.contains(&key) {
            50
        } else if one.contains(&key) {
            25
        } else {
            10
        }
    }

    #[test]
    fn the_reduction_tree_pairs_the_widest_siblings_and_ends_at_device_0() {
        let rounds = reduction_tree(8, dgx1_lanes);
        assert_eq!(rounds.len(), 3);
        // First round: four disjoint two-lane pairs.
        assert_eq!(rounds[0].len(), 4);
        for &(c, p) in &rounds[0] {
            assert_eq!(dgx1_lanes(c, p), 50, "{c}->{p}");
            assert!(p < c);
        }
        let all_children: Vec<u32> = rounds.iter().flatten().map(|&(c, _)| c).collect();
        let mut sorted = all_children.clone();
        sorted.sort();
        assert_eq!(sorted, (1..8).collect::<Vec<_>>(), "every device but 0 sends once");
        // Three devices: one pair then the leftover.
        assert_eq!(reduction_tree(3, |_, _| 1), vec![vec![(1, 0)], vec![(2, 0)]]);
        assert!(reduction_tree(1, |_, _| 1).is_empty());
    }

    #[test]
    fn the_widest_ring_avoids_host_hops_on_the_dgx1() {
        let ring = widest_ring(8, dgx1_lanes);
        let narrowest =
            (0..8).map(|i| dgx1_lanes(ring[i], ring[(i + 1) % 8])).min().unwrap_or_default();
        assert!(narrowest >= 25, "{ring:?}");
        // Index order crosses 3-4, which has no NVLink.
        assert_eq!(dgx1_lanes(3, 4), 10);
        // Five GPUs 0..4: GPU 4's only NVLink neighbour among them is 0, so every ring has
        // one hop through the host (the odd-count trouble GUM's paper reports); the widest
        // ring still carries more than index order (0-1-2-3-4-0 uses 3-4, no NVLink).
        let ring5 = widest_ring(5, dgx1_lanes);
        let hops = |r: &[u32]| (0..5).map(|i| dgx1_lanes(r[i], r[(i + 1) % 5])).collect::<Vec<_>>();
        assert_eq!(hops(&ring5).iter().filter(|&&b| b == 10).count(), 1, "{ring5:?}");
        let index: Vec<u32> = (0..5).collect();
        assert!(hops(&ring5).iter().sum::<u64>() > hops(&index).iter().sum::<u64>(), "{ring5:?}");
    }

    #[test]
    fn policies_pick_destinations_as_documented() {
        let d: Vec<Endpoint> = (0..3).map(Endpoint::gpu).collect();
        let seg = SegmentInfo { tag: 4, len: 10 };
        let any = Policy::AnyAvailable.route(&seg, Endpoint::Host, &d);
        assert_eq!((any.to.len(), any.mode), (3, RouteMode::Any));
        let ring = Policy::Ring { order: d.clone() }.route(&seg, d[2], &d);
        assert_eq!(ring.to, vec![d[0]]);
        assert_eq!(Policy::Scatter.route(&seg, Endpoint::Host, &d).to, vec![d[1]]);
        let b = Policy::Broadcast.route(&seg, d[1], &d);
        assert_eq!((b.to, b.mode), (vec![d[0], d[2]], RouteMode::All));
        let tree = Policy::Tree { parent: vec![(d[1], d[0]), (d[2], d[0])] };
        assert_eq!(tree.clone().route(&seg, d[2], &d).to, vec![d[0]]);
        let mut closure = |_: &SegmentInfo, _: Endpoint, dst: &[Endpoint]| Route {
            to: dst[..1].to_vec(),
            mode: RouteMode::All,
        };
        assert_eq!(RoutingPolicy::route(&mut closure, &seg, d[1], &d).to, vec![d[0]]);
    }
}
