//! Flow-level fidelity: every leg is a fluid flow over its route; rates are max-min fair.
//!
//! # Rates
//!
//! Progressive filling (water-filling) over every channel of every transmitting flow: all
//! unfrozen flows rise at the same rate until a channel saturates; the flows crossing it
//! freeze at that rate; repeat. A flow loads channel `c` with `rate x weight_c`, where
//! `weight_c = wire_c / payload` accounts for packet headers: every channel frames the data
//! in its own packets (`max_payload_bytes`), exactly as the packet model does (see
//! `transport.rs`), so `wire_c = bytes + packets_c x header_bytes_c`. Rates are recomputed whenever a flow
//! starts or finishes, then floored to whole payload bytes per second (at least 1), so the
//! channels are never oversubscribed.
//!
//! # Time
//!
//! Progress is exact integer arithmetic in payload byte-picoseconds (`bytes x 10^12`): over
//! `dt` picoseconds a flow at `r` bytes/s moves `r x dt` of them, and a flow finishes
//! `ceil(remaining / r)` picoseconds after the last recomputation. A finished flow then
//! travels its route's latency (the sum of hop latencies), once per leg, before it counts as
//! delivered; bandwidth is released when transmission ends, not when the tail arrives.

use std::collections::{BTreeMap, BTreeSet};

use super::ChannelStats;
use super::transport::{LegId, Transport, framing, route_unit_bytes};
use crate::fabric::{ChannelId, Fabric};
use crate::time::{PS_PER_S, TimePs};

struct Flow {
    channels: Vec<ChannelId>,
    /// Wire bytes per payload byte on each channel (same order as `channels`).
    weights: Vec<f64>,
    /// Wire bytes on each channel, for the stats.
    wire_bytes: Vec<u64>,
    /// Link packets on each channel, for the stats.
    packets: Vec<u64>,
    /// Payload still to send, in byte-picoseconds (bytes x 10^12).
    remaining: u128,
    /// Current rate in payload bytes per second.
    rate: u64,
    /// When transmission ends at the current rate.
    finish_ps: TimePs,
    latency_ps: TimePs,
}

/// Flow-level transport.
pub(super) struct FlowTransport {
    flows: BTreeMap<LegId, Flow>,
    /// Legs done transmitting, waiting out their latency: (arrival time, leg).
    tails: BTreeSet<(TimePs, LegId)>,
    /// Time up to which flows have been progressed.
    clock_ps: TimePs,
    next_finish_ps: Option<TimePs>,
    active_per_channel: Vec<u32>,
    stats: Vec<ChannelStats>,
    // Scratch space for water-filling, indexed by channel.
    capacity_left: Vec<f64>,
    weight_sum: Vec<f64>,
}

impl FlowTransport {
    pub fn new(fabric: &Fabric) -> Self {
        let n = fabric.channels.len();
        FlowTransport {
            flows: BTreeMap::new(),
            tails: BTreeSet::new(),
            clock_ps: 0,
            next_finish_ps: None,
            active_per_channel: vec![0; n],
            stats: vec![ChannelStats::default(); n],
            capacity_left: vec![0.0; n],
            weight_sum: vec![0.0; n],
        }
    }

    /// Moves every flow forward to `t` at its current rate.
    fn progress(&mut self, t: TimePs) {
        debug_assert!(t >= self.clock_ps);
        let dt = t - self.clock_ps;
        if dt > 0 {
            for f in self.flows.values_mut() {
                f.remaining = f.remaining.saturating_sub(f.rate as u128 * dt as u128);
            }
            for (c, &n) in self.active_per_channel.iter().enumerate() {
                if n > 0 {
                    self.stats[c].busy_ps += dt;
                }
            }
        }
        self.clock_ps = t;
    }

    /// Max-min fair rates by progressive filling, then finish times.
    fn recompute(&mut self, fabric: &Fabric) {
        let mut touched: Vec<u32> =
            self.flows.values().flat_map(|f| f.channels.iter().map(|c| c.0)).collect();
        touched.sort_unstable();
        touched.dedup();
        for &c in &touched {
            self.capacity_left[c as usize] =
                fabric.channels[c as usize].bandwidth_bytes_per_s as f64;
        }
        let mut frozen: BTreeMap<LegId, f64> = BTreeMap::new();
        while frozen.len() < self.flows.len() {
            for &c in &touched {
                self.weight_sum[c as usize] = 0.0;
            }
            for (leg, f) in &self.flows {
                if !frozen.contains_key(leg) {
                    for (c, w) in f.channels.iter().zip(&f.weights) {
                        self.weight_sum[c.0 as usize] += w;
                    }
                }
            }
            // The bottleneck: the channel that saturates first (lowest index on ties).
            let mut best: Option<(f64, u32)> = None;
            for &c in &touched {
                let w = self.weight_sum[c as usize];
                if w > 0.0 {
                    let level = (self.capacity_left[c as usize] / w).max(0.0);
                    if best.is_none_or(|(l, _)| level < l) {
                        best = Some((level, c));
                    }
                }
            }
            let Some((level, bottleneck)) = best else { break };
            let crossing: Vec<LegId> = self
                .flows
                .iter()
                .filter(|(leg, f)| {
                    !frozen.contains_key(leg) && f.channels.iter().any(|c| c.0 == bottleneck)
                })
                .map(|(leg, _)| *leg)
                .collect();
            for leg in crossing {
                let f = &self.flows[&leg];
                for (c, w) in f.channels.iter().zip(&f.weights) {
                    let left = &mut self.capacity_left[c.0 as usize];
                    *left = (*left - level * w).max(0.0);
                }
                frozen.insert(leg, level);
            }
        }
        let mut next: Option<TimePs> = None;
        for (leg, f) in self.flows.iter_mut() {
            let level = frozen.get(leg).copied().unwrap_or(f64::MAX);
            // Floor to whole bytes per second; at least 1 so every flow finishes.
            f.rate = if level >= u64::MAX as f64 { u64::MAX } else { (level as u64).max(1) };
            let dt = f.remaining.div_ceil(f.rate as u128);
            f.finish_ps = self.clock_ps.saturating_add(dt.min(TimePs::MAX as u128) as TimePs);
            next = Some(next.map_or(f.finish_ps, |n| n.min(f.finish_ps)));
        }
        self.next_finish_ps = next;
    }
}

impl Transport for FlowTransport {
    fn start(
        &mut self,
        fabric: &Fabric,
        now: TimePs,
        leg: LegId,
        channels: &[ChannelId],
        bytes: u64,
    ) {
        self.progress(now.max(self.clock_ps));
        let latency_ps: TimePs =
            channels.iter().map(|c| fabric.channels[c.0 as usize].latency_ps).sum();
        if bytes == 0 || channels.is_empty() {
            self.tails.insert((self.clock_ps.saturating_add(latency_ps), leg));
            return;
        }
        let unit = route_unit_bytes(fabric, channels);
        let framed: Vec<(u64, u64)> =
            channels.iter().map(|&c| framing(fabric, c, bytes, unit)).collect();
        let packets: Vec<u64> = framed.iter().map(|f| f.0).collect();
        let wire_bytes: Vec<u64> = framed.iter().map(|f| f.1).collect();
        let weights = wire_bytes.iter().map(|&w| w as f64 / bytes as f64).collect();
        for c in channels {
            self.active_per_channel[c.0 as usize] += 1;
        }
        self.flows.insert(
            leg,
            Flow {
                channels: channels.to_vec(),
                weights,
                wire_bytes,
                packets,
                remaining: bytes as u128 * PS_PER_S as u128,
                rate: 0,
                finish_ps: TimePs::MAX,
                latency_ps,
            },
        );
        self.recompute(fabric);
    }

    fn next_event_time(&self) -> Option<TimePs> {
        let tail = self.tails.first().map(|&(t, _)| t);
        match (self.next_finish_ps, tail) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance_to(&mut self, fabric: &Fabric, time: TimePs, done: &mut Vec<(TimePs, LegId)>) {
        while let Some(t) = self.next_event_time().filter(|&t| t <= time) {
            if self.next_finish_ps == Some(t) {
                self.progress(t);
                let finished: Vec<LegId> =
                    self.flows.iter().filter(|(_, f)| f.finish_ps == t).map(|(l, _)| *l).collect();
                for leg in finished {
                    let f = self.flows.remove(&leg).expect("finished flow exists");
                    for ((c, w), p) in f.channels.iter().zip(&f.wire_bytes).zip(&f.packets) {
                        let s = &mut self.stats[c.0 as usize];
                        s.bytes_carried = s.bytes_carried.saturating_add(*w);
                        s.packets = s.packets.saturating_add(*p);
                        self.active_per_channel[c.0 as usize] -= 1;
                    }
                    self.tails.insert((t.saturating_add(f.latency_ps), leg));
                }
                self.recompute(fabric);
            }
            while let Some(&(ta, leg)) = self.tails.first() {
                if ta > t {
                    break;
                }
                self.tails.pop_first();
                done.push((ta, leg));
            }
        }
    }

    fn stats(&self) -> &[ChannelStats] {
        &self.stats
    }

    fn reconfigure(&mut self, fabric: &Fabric, now: TimePs, aborted: &[LegId]) {
        self.progress(now.max(self.clock_ps));
        for leg in aborted {
            if let Some(f) = self.flows.remove(leg) {
                for c in &f.channels {
                    self.active_per_channel[c.0 as usize] -= 1;
                }
            }
            self.tails.retain(|&(_, l)| l != *leg);
        }
        self.recompute(fabric);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Channel;
    use proptest::prelude::*;

    fn fabric(bandwidths: &[u64], headers: &[u32]) -> Fabric {
        let mut f = Fabric::default();
        for (i, (&b, &h)) in bandwidths.iter().zip(headers).enumerate() {
            f.channels.push(Channel {
                name: format!("c{i}"),
                bandwidth_bytes_per_s: b,
                latency_ps: 0,
                max_payload_bytes: 256,
                header_bytes: h,
            });
        }
        f
    }

    proptest! {
        /// The defining property of max-min fairness: no channel is oversubscribed, and
        /// every flow has a bottleneck, a saturated channel on its route where no other flow
        /// gets a higher rate. Tolerances: rates are floored to whole bytes per second, so a
        /// channel counts as saturated within 1 B/s per flow (times its header weight).
        #[test]
        fn rates_are_max_min_fair(
            bw in prop::collection::vec(1u64..=100, 6),
            headers in prop::collection::vec(0u32..=64, 6),
            routes in prop::collection::vec(
                (prop::collection::btree_set(0u32..6, 1..=3), 1u64..10_000_000), 1..=8),
        ) {
            let bandwidths: Vec<u64> = bw.iter().map(|b| b * 1_000_000_000).collect();
            let f = fabric(&bandwidths, &headers);
            let mut t = FlowTransport::new(&f);
            for (leg, (chans, bytes)) in routes.iter().enumerate() {
                let chans: Vec<ChannelId> = chans.iter().map(|&c| ChannelId(c)).collect();
                t.start(&f, 0, leg as LegId, &chans, *bytes);
            }
            let mut load = [0.0f64; 6];
            let mut flows_on = [0usize; 6];
            for fl in t.flows.values() {
                for (c, w) in fl.channels.iter().zip(&fl.weights) {
                    load[c.0 as usize] += fl.rate as f64 * w;
                    flows_on[c.0 as usize] += 1;
                }
            }
            for c in 0..6 {
                prop_assert!(load[c] <= bandwidths[c] as f64 * (1.0 + 1e-12), "channel {} oversubscribed", c);
            }
            for (leg, fl) in &t.flows {
                let has_bottleneck = fl.channels.iter().any(|c| {
                    let c = c.0 as usize;
                    let slack = 2.0 * flows_on[c] as f64 + 1e-9 * bandwidths[c] as f64;
                    let saturated = load[c] >= bandwidths[c] as f64 - slack;
                    let is_max = t.flows.values()
                        .filter(|o| o.channels.iter().any(|oc| oc.0 as usize == c))
                        .all(|o| o.rate <= fl.rate + 1);
                    saturated && is_max
                });
                prop_assert!(has_bottleneck, "flow {} at {} B/s has no bottleneck", leg, fl.rate);
            }
        }
    }
}
