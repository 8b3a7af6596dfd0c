//! Route selection: fewest hops, then highest bottleneck bandwidth, then the lowest-numbered
//! channel at each hop. GPUs are endpoints only: no route passes through one.

use std::collections::{BTreeSet, VecDeque};

use super::{Device, Link};
use crate::fabric::{Channel, ChannelId};

/// The device graph with its directed channels.
pub(crate) struct Graph<'a> {
    devices: &'a [Device],
    /// Outgoing `(channel, neighbour)` per device, in channel order.
    out: Vec<Vec<(ChannelId, usize)>>,
    channels: &'a [Channel],
}

/// The best route from one source to every device.
pub(crate) struct Tree {
    source: usize,
    /// `(incoming channel, previous device)` for each reached device except the source.
    pred: Vec<Option<(ChannelId, usize)>>,
}

impl<'a> Graph<'a> {
    pub fn new(devices: &'a [Device], links: &[Link], channels: &'a [Channel]) -> Graph<'a> {
        Graph::without(devices, links, channels, &BTreeSet::new())
    }

    /// The device graph without the links whose indices are in `excluded` (failed links);
    /// channel ids stay those of the whole machine.
    pub fn without(
        devices: &'a [Device],
        links: &[Link],
        channels: &'a [Channel],
        excluded: &BTreeSet<usize>,
    ) -> Graph<'a> {
        let mut out = vec![Vec::new(); devices.len()];
        for (i, l) in links.iter().enumerate() {
            if excluded.contains(&i) {
                continue;
            }
            out[l.a].push((ChannelId(2 * i as u32), l.b));
            out[l.b].push((ChannelId(2 * i as u32 + 1), l.a));
        }
        Graph { devices, out, channels }
    }

    pub fn name(&self, device: usize) -> &str {
        &self.devices[device].name
    }

    /// The channel from `a` to `b`, if a link joins them.
    pub fn channel_between(&self, a: usize, b: usize) -> Option<ChannelId> {
        self.out[a].iter().find(|&&(_, n)| n == b).map(|&(c, _)| c)
    }

    /// Channels along a device path, if every step is linked.
    pub fn channels_along(&self, path: &[usize]) -> Option<Vec<ChannelId>> {
        path.windows(2).map(|w| self.channel_between(w[0], w[1])).collect()
    }

    /// Shortest (in hops) widest (in bottleneck bandwidth) routes from `source`.
    pub fn shortest_widest(&self, source: usize) -> Tree {
        let n = self.devices.len();
        let mut dist = vec![usize::MAX; n];
        let mut order = Vec::with_capacity(n);
        let mut queue = VecDeque::new();
        dist[source] = 0;
        queue.push_back(source);
        while let Some(u) = queue.pop_front() {
            order.push(u);
            if u != source && !self.devices[u].kind.forwards() {
                continue;
            }
            for &(_, v) in &self.out[u] {
                if dist[v] == usize::MAX {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        // Widest among shortest: process in BFS order; every predecessor on a shortest path
        // is settled before its successors.
        let mut width = vec![0u64; n];
        let mut pred: Vec<Option<(ChannelId, usize)>> = vec![None; n];
        width[source] = u64::MAX;
        for &v in order.iter().skip(1) {
            let mut best: Option<(u64, ChannelId, usize)> = None;
            for u in 0..n {
                if dist[u] == usize::MAX || dist[u] + 1 != dist[v] {
                    continue;
                }
                if u != source && !self.devices[u].kind.forwards() {
                    continue;
                }
                for &(c, w) in &self.out[u] {
                    if w != v {
                        continue;
                    }
                    let cw = width[u].min(self.channels[c.0 as usize].bandwidth_bytes_per_s);
                    let better = match best {
                        None => true,
                        Some((bw, bc, _)) => cw > bw || (cw == bw && c < bc),
                    };
                    if better {
                        best = Some((cw, c, u));
                    }
                }
            }
            if let Some((w, c, u)) = best {
                width[v] = w;
                pred[v] = Some((c, u));
            }
        }
        Tree { source, pred }
    }
}

impl Tree {
    /// Channels and devices (source and destination included) of the route to `dest`.
    pub fn path_to(&self, dest: usize) -> Option<(Vec<ChannelId>, Vec<usize>)> {
        if dest == self.source {
            return Some((Vec::new(), vec![dest]));
        }
        let mut chans = Vec::new();
        let mut devs = vec![dest];
        let mut at = dest;
        while at != self.source {
            let (c, p) = self.pred[at]?;
            chans.push(c);
            devs.push(p);
            at = p;
        }
        chans.reverse();
        devs.reverse();
        Some((chans, devs))
    }
}
