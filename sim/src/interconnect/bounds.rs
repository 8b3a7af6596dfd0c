//! How a copy is routed (directly, or staged through host memory) and the fastest it could
//! possibly be: the floor no model may beat, for tests and for sanity checks in reports.

use crate::error::SimError;
use crate::fabric::{ChannelId, EndpointId, EndpointKind, Fabric};
use crate::time::{PS_PER_S, TimePs};

/// One leg of a copy: a transfer along one route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegPlan {
    /// Where the leg starts (its copy engine is used).
    pub src: EndpointId,
    /// Where it ends.
    pub dst: EndpointId,
    /// Channels crossed, in order.
    pub channels: Vec<ChannelId>,
}

/// The legs of a copy from `src` to `dst`: one leg along the route when the pair has peer
/// access (or is not a GPU pair), otherwise two legs staged through host memory.
///
/// The staging host is the host memory endpoint with the fewest channels from `src`, then
/// the fewest to `dst`, then the lowest index (the source "pushes" into its nearest host
/// memory and the destination "pulls" from it: seed 000 section 2.1). `transfer` only
/// labels errors.
pub fn plan_legs(
    fabric: &Fabric,
    transfer: u64,
    src: EndpointId,
    dst: EndpointId,
) -> Result<Vec<LegPlan>, SimError> {
    let count = fabric.endpoints.len();
    for e in [src, dst] {
        if e.0 as usize >= count {
            return Err(SimError::UnknownEndpoint { transfer, endpoint: e.0, count });
        }
    }
    let name = |e: EndpointId| fabric.endpoints[e.0 as usize].name.clone();
    if src == dst {
        return Err(SimError::SelfTransfer { transfer, endpoint: name(src) });
    }
    let is_gpu =
        |e: EndpointId| matches!(fabric.endpoints[e.0 as usize].kind, EndpointKind::Gpu { .. });
    let direct = fabric.route(src, dst);
    match direct {
        Some(r) if r.peer_access || !(is_gpu(src) && is_gpu(dst)) => {
            return Ok(vec![LegPlan { src, dst, channels: r.channels.clone() }]);
        }
        None if !(is_gpu(src) && is_gpu(dst)) => {
            return Err(SimError::NoRoute { transfer, src: name(src), dst: name(dst) });
        }
        _ => {}
    }
    // A GPU pair without peer access (or without any route): stage through host memory.
    let mut best: Option<((usize, usize, u32), EndpointId)> = None;
    for (i, e) in fabric.endpoints.iter().enumerate() {
        if !matches!(e.kind, EndpointKind::HostMemory { .. }) {
            continue;
        }
        let h = EndpointId(i as u32);
        if let (Some(a), Some(b)) = (fabric.route(src, h), fabric.route(h, dst)) {
            let rank = (a.channels.len(), b.channels.len(), h.0);
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, h));
            }
        }
    }
    match best {
        Some((_, h)) => Ok(vec![
            LegPlan { src, dst: h, channels: fabric.routes[&(src, h)].channels.clone() },
            LegPlan { src: h, dst, channels: fabric.routes[&(h, dst)].channels.clone() },
        ]),
        None if direct.is_none() => {
            Err(SimError::NoRoute { transfer, src: name(src), dst: name(dst) })
        }
        None => Err(SimError::NoStagingPath { transfer, src: name(src), dst: name(dst) }),
    }
}

/// Sum of the hop latencies of `channels`, in picoseconds.
pub fn latency_floor_ps(fabric: &Fabric, channels: &[ChannelId]) -> TimePs {
    channels.iter().map(|c| fabric.channels[c.0 as usize].latency_ps).sum()
}

/// Smallest bandwidth along `channels` in bytes per second (`u64::MAX` for no channel).
pub fn bottleneck_bytes_per_s(fabric: &Fabric, channels: &[ChannelId]) -> u64 {
    channels
        .iter()
        .map(|c| fabric.channels[c.0 as usize].bandwidth_bytes_per_s)
        .min()
        .unwrap_or(u64::MAX)
}

/// Time to push `bytes` through `bandwidth_bytes_per_s`, rounded up to whole picoseconds.
pub fn serialization_ps(bytes: u64, bandwidth_bytes_per_s: u64) -> TimePs {
    if bandwidth_bytes_per_s == 0 {
        return TimePs::MAX;
    }
    let ps = (bytes as u128 * PS_PER_S as u128).div_ceil(bandwidth_bytes_per_s as u128);
    ps.min(TimePs::MAX as u128) as TimePs
}

/// The fastest a copy of `bytes` from `src` to `dst` could complete on an idle machine,
/// ignoring packet headers and setup: the latencies of every channel it crosses (both legs
/// of a staged copy) plus `bytes` at the slowest of those channels. This holds even when a
/// packetized staged copy pipelines its legs, so no model may beat it. `None` when the copy
/// cannot be routed.
pub fn transfer_floor_ps(
    fabric: &Fabric,
    src: EndpointId,
    dst: EndpointId,
    bytes: u64,
) -> Option<TimePs> {
    let legs = plan_legs(fabric, 0, src, dst).ok()?;
    let channels: Vec<ChannelId> = legs.iter().flat_map(|l| l.channels.iter().copied()).collect();
    Some(
        latency_floor_ps(fabric, &channels)
            + serialization_ps(bytes, bottleneck_bytes_per_s(fabric, &channels)),
    )
}
