//! One-to-all broadcast from GPU 0 (seed 000 section 2.1, Fig. 2d): a packetized ring
//! against direct copies.
//!
//! - [`ring_broadcast`]: a router with [`Policy::Ring`]; GPU 0 sends the buffer cut into
//!   packets to the next GPU of the ring, and every GPU, as each packet lands, copies it
//!   into its own destination buffer and forwards it (from there) to the next GPU, so the
//!   hops pipeline. The last GPU does not forward, so the data travels a chain from GPU 0:
//!   the order is [`widest_chain`] over the path bandwidths unless given (the widest ring
//!   is not enough: on the DGX-1's GPUs 0-3 the ring 0-1-2-3 is as wide as any, but as a
//!   chain it starts on a one-lane hop where 0-3-2-1 has two lanes on every hop).
//! - [`direct_broadcast`]: a router with [`Policy::Broadcast`] from GPU 0 to every other
//!   GPU; by default the buffer goes unsegmented (one copy per destination, each landing
//!   straight in that GPU's destination buffer); with a packet size, packetized.
//!
//! Both return the simulated time from the first send until every GPU holds the data, and
//! both check that every GPU received exactly GPU 0's data (read back after timing).

use super::context::{Context, Endpoint, Event, LinkConfig, LinkTraffic, ReceivedData};
use super::context::{Segment, SegmentData};
use super::policy::{Policy, widest_chain};
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    StreamId, StreamPriority, Token,
};
use crate::runtime::RuntimeError;
use std::collections::BTreeMap;

/// Options of a ring broadcast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingOptions {
    /// Packet size in bytes (a multiple of 4).
    pub packet_bytes: u64,
    /// Receive buffers per link.
    pub buffers: u32,
    /// Ring order (a permutation of the devices starting with 0); `None`: [`widest_chain`].
    pub order: Option<Vec<u32>>,
}

impl Default for RingOptions {
    /// 1 MiB packets (Fig. 2b: ~10% packetization overhead at 1 MB), double buffering.
    fn default() -> Self {
        RingOptions { packet_bytes: 1 << 20, buffers: 2, order: None }
    }
}

/// What a broadcast took.
#[derive(Clone, Debug, PartialEq)]
pub struct BroadcastOutcome {
    /// From the first send until every GPU holds the data, in picoseconds.
    pub time_ps: u64,
    /// When each GPU held all of the data (0 for GPU 0), in picoseconds from the start.
    pub done_ps_per_gpu: Vec<u64>,
    /// The order the data travelled (ring) or `[0]` followed by the destinations (direct).
    pub order: Vec<u32>,
    /// Traffic of every link.
    pub traffic: Vec<LinkTraffic>,
}

/// Broadcasts `bytes` from GPU 0 to every other GPU over a packetized ring.
pub fn ring_broadcast<B: Backend + ?Sized>(
    backend: &mut B,
    bytes: u64,
    options: &RingOptions,
) -> Result<BroadcastOutcome, RuntimeError> {
    let elems = check(backend, bytes, Some(options.packet_bytes))?;
    if options.buffers == 0 {
        return Err(RuntimeError::Options(
            "ring broadcast: receive buffers must be at least 1; use 2 for double buffering".into(),
        ));
    }
    let gpus = backend.device_count();
    let order = match &options.order {
        Some(order) => {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if order.first() != Some(&0) || sorted != (0..gpus).collect::<Vec<_>>() {
                return Err(RuntimeError::Options(format!(
                    "ring order {order:?} must start at GPU 0 and name each of the {gpus} GPUs \
                     once"
                )));
            }
            order.clone()
        }
        None => {
            widest_chain(gpus, |a, b| backend.path_bandwidth_bytes_per_s(DeviceId(a), DeviceId(b)))
        }
    };
    let (buffers, streams) = setup(backend, elems)?;
    let start_ps = backend.now_ps();
    let mut ctx = Context::new(backend);
    let ring: Vec<Endpoint> = order.iter().map(|&g| Endpoint::gpu(g)).collect();
    let config = LinkConfig {
        elem: ElemType::U32,
        packet_elems: (options.packet_bytes / 4) as usize,
        buffers: options.buffers,
    };
    let mut arrivals = Arrivals::new(gpus, elems, start_ps);
    if gpus > 1 {
        let router = ctx.router(
            ring.clone(),
            ring[1..].to_vec(),
            config,
            Box::new(Policy::Ring { order: ring.clone() }),
        )?;
        let source = SegmentData::Device(BufferSlice::new(buffers[0], 0, elems));
        ctx.route(router, ring[0], Segment::new(source, 0))?;
        let next_of: BTreeMap<u32, Option<u32>> =
            order.iter().enumerate().map(|(i, &g)| (g, order.get(i + 1).copied())).collect();
        let mut copies: BTreeMap<Token, (super::context::Received, u32)> = BTreeMap::new();
        while let Some(event) = ctx.next_event()? {
            match event {
                Event::Received(r) => {
                    let g = ctx.link_destination(r.link).device().map_or(0, |d| d.0);
                    let ReceivedData::Device(packet) = r.data.clone() else {
                        return Err(unexpected("a packet outside device memory"));
                    };
                    // Tags carry where a forwarded segment starts in the buffer.
                    let at = r.tag as usize + r.offset;
                    let stream = streams[g as usize];
                    let dst = BufferSlice::new(buffers[g as usize], at, r.len);
                    let t = ctx.token();
                    ctx.backend.copy(stream, packet, dst, Some(t))?;
                    if let Some(Some(_)) = next_of.get(&g) {
                        let ready = Some(ctx.backend.record_event(stream)?);
                        let seg = Segment { data: SegmentData::Device(dst), tag: at as u64, ready };
                        ctx.route(router, Endpoint::gpu(g), seg)?;
                    }
                    copies.insert(t, (r, g));
                }
                Event::Completion(c) => {
                    let (r, g) = copies
                        .remove(&c.token)
                        .ok_or_else(|| unexpected("an unknown completion"))?;
                    ctx.release(&r)?;
                    arrivals.land(g, r.len, c.time_ps);
                }
                Event::Sent { .. } | Event::Shutdown { .. } => {}
            }
        }
        arrivals.check("ring broadcast")?;
    }
    let traffic = ctx.traffic();
    drop(ctx); // frees the links' receive buffers
    finish(backend, &buffers, &streams, elems, arrivals.done_ps, order, traffic)
}

/// Broadcasts `bytes` from GPU 0 to every other GPU with direct copies: unsegmented when
/// `packet_bytes` is `None`, else packetized.
pub fn direct_broadcast<B: Backend + ?Sized>(
    backend: &mut B,
    bytes: u64,
    packet_bytes: Option<u64>,
) -> Result<BroadcastOutcome, RuntimeError> {
    let elems = check(backend, bytes, packet_bytes)?;
    let gpus = backend.device_count();
    let packet_elems = packet_bytes.map_or(elems, |p| (p / 4) as usize);
    let (buffers, streams) = setup(backend, elems)?;
    let start_ps = backend.now_ps();
    let mut ctx = Context::new(backend);
    let devices = ctx.devices();
    let mut arrivals = Arrivals::new(gpus, elems, start_ps);
    if gpus > 1 {
        let buffers_per_link = if packet_bytes.is_some() { 2 } else { 1 };
        let config = LinkConfig { elem: ElemType::U32, packet_elems, buffers: buffers_per_link };
        let router = ctx.router(
            vec![devices[0]],
            devices[1..].to_vec(),
            config,
            Box::new(Policy::Broadcast),
        )?;
        let source = SegmentData::Device(BufferSlice::new(buffers[0], 0, elems));
        ctx.route(router, devices[0], Segment::new(source, 0))?;
        let mut copies: BTreeMap<Token, (super::context::Received, u32)> = BTreeMap::new();
        // Unsegmented copies land in the receive buffers, which are the destinations.
        let mut held: Vec<(super::context::Received, u32)> = Vec::new();
        while let Some(event) = ctx.next_event()? {
            match event {
                Event::Received(r) => {
                    let g = ctx.link_destination(r.link).device().map_or(0, |d| d.0);
                    let ReceivedData::Device(packet) = r.data.clone() else {
                        return Err(unexpected("a packet outside device memory"));
                    };
                    if packet_bytes.is_none() {
                        arrivals.land(g, r.len, ctx.backend.now_ps());
                        held.push((r, g));
                        continue;
                    }
                    let stream = streams[g as usize];
                    let dst = BufferSlice::new(buffers[g as usize], r.offset, r.len);
                    let t = ctx.token();
                    ctx.backend.copy(stream, packet, dst, Some(t))?;
                    copies.insert(t, (r, g));
                }
                Event::Completion(c) => {
                    let (r, g) = copies
                        .remove(&c.token)
                        .ok_or_else(|| unexpected("an unknown completion"))?;
                    ctx.release(&r)?;
                    arrivals.land(g, r.len, c.time_ps);
                }
                Event::Sent { .. } | Event::Shutdown { .. } => {}
            }
        }
        arrivals.check("direct broadcast")?;
        // After the timing: move what landed in receive buffers into the buffers the check
        // reads.
        for (r, g) in held {
            let ReceivedData::Device(packet) = r.data else { continue };
            let t = ctx.token();
            let dst = BufferSlice::new(buffers[g as usize], 0, elems);
            ctx.backend.copy(streams[g as usize], packet, dst, Some(t))?;
            while let Some(e) = ctx.next_event()? {
                if matches!(e, Event::Completion(ref c) if c.token == t) {
                    break;
                }
            }
        }
    }
    let traffic = ctx.traffic();
    drop(ctx); // frees the links' receive buffers
    let order = (0..gpus).collect();
    finish(backend, &buffers, &streams, elems, arrivals.done_ps, order, traffic)
}

/// Elements landed per GPU and when each GPU had them all.
struct Arrivals {
    elems: usize,
    start_ps: u64,
    landed: Vec<usize>,
    done_ps: Vec<u64>,
}

impl Arrivals {
    fn new(gpus: u32, elems: usize, start_ps: u64) -> Self {
        Arrivals {
            elems,
            start_ps,
            landed: vec![0; gpus as usize],
            done_ps: vec![0; gpus as usize],
        }
    }

    /// `len` more elements are in GPU `g`'s buffer at `time_ps`.
    fn land(&mut self, g: u32, len: usize, time_ps: u64) {
        let g = g as usize;
        self.landed[g] += len;
        if self.landed[g] == self.elems {
            self.done_ps[g] = time_ps - self.start_ps;
        }
    }

    /// Every GPU but the source has the whole buffer.
    fn check(&self, what: &str) -> Result<(), RuntimeError> {
        match (1..self.landed.len()).find(|&g| self.landed[g] != self.elems) {
            Some(g) => Err(BackendError::Deadlock(format!(
                "{what} stopped with {} of {} elements on gpu{g}",
                self.landed[g], self.elems
            ))
            .into()),
            None => Ok(()),
        }
    }
}

fn check<B: Backend + ?Sized>(
    backend: &B,
    bytes: u64,
    packet_bytes: Option<u64>,
) -> Result<usize, RuntimeError> {
    if backend.device_count() == 0 {
        return Err(RuntimeError::Options(
            "broadcast needs at least one GPU and the backend has none".into(),
        ));
    }
    if bytes == 0 || !bytes.is_multiple_of(4) {
        return Err(RuntimeError::Options(format!(
            "broadcast of {bytes} bytes: the size must be a positive multiple of 4 (u32 \
             elements)"
        )));
    }
    if let Some(p) = packet_bytes
        && (p == 0 || !p.is_multiple_of(4))
    {
        return Err(RuntimeError::Options(format!(
            "broadcast packet size of {p} bytes: it must be a positive multiple of 4, such as \
             1048576 (1 MiB)"
        )));
    }
    usize::try_from(bytes / 4)
        .map_err(|_| RuntimeError::Options(format!("{bytes} bytes is too large")))
}

/// Allocates a destination buffer and a stream on every GPU and fills GPU 0's buffer with a
/// pattern (before the timed part).
fn setup<B: Backend + ?Sized>(
    backend: &mut B,
    elems: usize,
) -> Result<(Vec<BufferId>, Vec<StreamId>), RuntimeError> {
    let mut buffers = Vec::new();
    let mut streams = Vec::new();
    for g in 0..backend.device_count() {
        let d = DeviceId(g);
        buffers.push(backend.alloc(d, ElemType::U32, elems, "broadcast buffer")?);
        streams.push(backend.create_stream(d, StreamPriority::Normal)?);
    }
    let pattern: Vec<u32> = (0..elems as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    backend.write_from_host(streams[0], buffers[0], 0, HostData::U32(pattern), None)?;
    let t = Token(u64::MAX);
    backend.host_callback(streams[0], t)?;
    crate::runtime::wait_all(backend, &[t])?;
    Ok((buffers, streams))
}

/// Reads every GPU's buffer back and compares it with GPU 0's.
fn finish<B: Backend + ?Sized>(
    backend: &mut B,
    buffers: &[BufferId],
    streams: &[StreamId],
    elems: usize,
    done_ps_per_gpu: Vec<u64>,
    order: Vec<u32>,
    traffic: Vec<LinkTraffic>,
) -> Result<BroadcastOutcome, RuntimeError> {
    let time_ps = done_ps_per_gpu.iter().copied().max().unwrap_or(0);
    let mut tokens = Vec::new();
    for (g, (&b, &s)) in buffers.iter().zip(streams).enumerate() {
        let t = Token(u64::MAX - 1 - g as u64);
        backend.read_to_host(s, BufferSlice::new(b, 0, elems), t)?;
        tokens.push(t);
    }
    let mut data = BTreeMap::new();
    for c in crate::runtime::wait_all(backend, &tokens)? {
        if let CompletionKind::HostRead(HostData::U32(v)) = c.kind {
            data.insert(c.token, v);
        }
    }
    let expected = data.get(&tokens[0]);
    for (g, t) in tokens.iter().enumerate() {
        if data.get(t) != expected {
            return Err(BackendError::Usage(format!(
                "broadcast: gpu{g} does not hold gpu0's data (a runtime bug)"
            ))
            .into());
        }
    }
    for &b in buffers {
        backend.free(b)?;
    }
    Ok(BroadcastOutcome { time_ps, done_ps_per_gpu, order, traffic })
}

fn unexpected(what: &str) -> RuntimeError {
    BackendError::Usage(format!("broadcast received {what} (a runtime bug)")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_chain_drops_the_narrow_hop_a_ring_must_keep() {
        // A 4-cycle 0-3-2-1-0 where 0-1 is narrow: any ring uses it, the chain need not.
        let bw = |a: u32, b: u32| match (a.min(b), a.max(b)) {
            (0, 1) => 1,
            (0, 3) | (2, 3) | (1, 2) => 10,
            _ => 0,
        };
        assert_eq!(widest_chain(4, bw), vec![0, 3, 2, 1]);
        assert_eq!(widest_chain(3, |_, _| 5), vec![0, 1, 2]);
        assert_eq!(widest_chain(12, |_, _| 5), (0..12).collect::<Vec<_>>());
    }
}
