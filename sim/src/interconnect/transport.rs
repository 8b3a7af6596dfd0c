//! The fidelity-specific part of an interconnect model: moving the bytes of one leg (one
//! copy along one route). Copy engines, staging and application-level packets live in
//! `model.rs`, above this trait.

use super::ChannelStats;
use crate::fabric::{ChannelId, Fabric};
use crate::time::TimePs;

/// Identifies one leg in flight inside a transport (assigned by the model, increasing).
pub(super) type LegId = u64;

/// Moves the bytes of legs over channels.
pub(super) trait Transport {
    /// Starts moving `bytes` of payload along `channels` at `now` (no earlier than the last
    /// time advanced to).
    fn start(
        &mut self,
        fabric: &Fabric,
        now: TimePs,
        leg: LegId,
        channels: &[ChannelId],
        bytes: u64,
    );
    /// Time of the next internal event.
    fn next_event_time(&self) -> Option<TimePs>;
    /// Processes every internal event with time `<= time`; appends `(time, leg)` for every
    /// leg whose last byte arrived, in time order (ties in leg order).
    fn advance_to(&mut self, fabric: &Fabric, time: TimePs, done: &mut Vec<(TimePs, LegId)>);
    /// Per-channel counters.
    fn stats(&self) -> &[ChannelStats];
    /// The fabric changed at `now` (an injected fault: bandwidths or latencies, or routes):
    /// the legs in `aborted` stop where they are and never complete (their bytes on the wire
    /// are lost), and the rest carry on under the new channel parameters.
    fn reconfigure(&mut self, fabric: &Fabric, now: TimePs, aborted: &[LegId]);
}

/// Size of the store-and-forward unit on a route: the largest `max_payload_bytes` along it.
/// On a hop whose own maximum payload is smaller, a unit travels as several link packets
/// back to back (see [`link_packets`]), each with that hop's header: every channel is framed
/// in its own packets (a NIC re-frames NVLink traffic into InfiniBand MTUs), and the unit
/// sets only the granularity of queueing and pipelining.
pub(super) fn route_unit_bytes(fabric: &Fabric, channels: &[ChannelId]) -> u64 {
    channels
        .iter()
        .map(|c| u64::from(fabric.channels[c.0 as usize].max_payload_bytes).max(1))
        .max()
        .unwrap_or(1)
}

/// Link packets needed to carry `payload_bytes` (one unit or less) on `channel`.
pub(super) fn link_packets(fabric: &Fabric, channel: ChannelId, payload_bytes: u64) -> u64 {
    let max = u64::from(fabric.channels[channel.0 as usize].max_payload_bytes).max(1);
    payload_bytes.div_ceil(max)
}

/// Link packets and wire bytes (payload plus headers) that `bytes` cut into units of
/// `unit_bytes` put on `channel`: the same count the packet model produces.
pub(super) fn framing(
    fabric: &Fabric,
    channel: ChannelId,
    bytes: u64,
    unit_bytes: u64,
) -> (u64, u64) {
    let full = bytes / unit_bytes;
    let rest = bytes % unit_bytes;
    // Saturating: absurd sizes must not overflow (they just take absurdly long).
    let packets = full
        .saturating_mul(link_packets(fabric, channel, unit_bytes))
        .saturating_add(link_packets(fabric, channel, rest));
    let header = u64::from(fabric.channels[channel.0 as usize].header_bytes);
    (packets, bytes.saturating_add(packets.saturating_mul(header)))
}
