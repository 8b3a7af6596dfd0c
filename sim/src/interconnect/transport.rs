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
}

/// Payload per packet on a route: the smallest `max_payload_bytes` along it, so a packet is
/// never re-fragmented on the way (both fidelities use this).
pub(super) fn route_payload_bytes(fabric: &Fabric, channels: &[ChannelId]) -> u64 {
    channels
        .iter()
        .map(|c| u64::from(fabric.channels[c.0 as usize].max_payload_bytes).max(1))
        .min()
        .unwrap_or(u64::MAX)
}
