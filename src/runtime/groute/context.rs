//! Groute's communication constructs (seed 000 section 3, Table 1, and sections 4.1-4.2)
//! over the backend trait: endpoints, segments, links with pipelined receivers, and routers
//! with a segmenter, a routing policy and a multiplexer.
//!
//! A [`Context`] owns the backend for the length of a Groute program and is its event loop:
//! a program submits sends, releases and its own kernels and reads, and reacts to the
//! [`Event`]s that [`Context::next_event`] returns (a packet landed in a receive buffer, a
//! segment was delivered, a link was shut down, or one of the program's own operations
//! finished). Nothing here blocks: Groute's futures become events.
//!
//! - A **link** connects one source endpoint to one destination endpoint. It has a packet
//!   size (elements) and a number of receive buffers at the destination (its pipelined
//!   receiver: 1 = single, 2 = double, 3 = triple buffering). A send is cut into packets; a
//!   packet moves only into a free receive buffer and the buffer stays taken until the
//!   receiver releases it, so a slow receiver exerts back-pressure on its senders.
//! - A **router** connects sources to destinations through one output link per
//!   destination. For each segment, its routing policy names the candidate destinations and
//!   whether one of them (first available) or all of them get it; the segmenter cuts it to
//!   the smallest packet size among them; the multiplexer queues each packet on every
//!   candidate's send queue and the first link with a free receive buffer takes it, the
//!   copies queued at the others becoming stale and being dropped when those queues are
//!   next inspected (section 4.2).
//! - **Shutdown** is socket-like: after [`Context::shutdown`] the receiver gets every packet
//!   sent before it, then one [`Event::Shutdown`]. A router shuts its outputs down once every
//!   one of its inputs has shut down.

use super::policy::{Route, RouteMode, RoutingPolicy, SegmentInfo};
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, Completion, CompletionKind, DeviceId, ElemType,
    EventId, HostData, StreamId, StreamPriority, Token,
};
use crate::runtime::RuntimeError;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// A communication endpoint: the host, a (virtual) endpoint on a device, or a router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// Host memory.
    Host,
    /// An endpoint on a device; `slot` tells several virtual endpoints of one device apart.
    Device {
        /// The device.
        device: DeviceId,
        /// Virtual endpoint number on that device.
        slot: u32,
    },
}

impl Endpoint {
    /// The first (usually only) endpoint of `device`.
    pub fn gpu(device: u32) -> Endpoint {
        Endpoint::Device { device: DeviceId(device), slot: 0 }
    }

    /// The device of a device endpoint.
    pub fn device(self) -> Option<DeviceId> {
        match self {
            Endpoint::Host => None,
            Endpoint::Device { device, .. } => Some(device),
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Host => write!(f, "host"),
            Endpoint::Device { device, slot: 0 } => write!(f, "{device}"),
            Endpoint::Device { device, slot } => write!(f, "{device}.{slot}"),
        }
    }
}

/// A link (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A router (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RouterId(pub u32);

/// How a link moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Element type of what it carries.
    pub elem: ElemType,
    /// Largest packet, in elements.
    pub packet_elems: usize,
    /// Receive buffers at the destination (pipelined receive operations).
    pub buffers: u32,
}

/// Data to send: a range of a buffer the backend copies from, or host memory.
#[derive(Clone, Debug, PartialEq)]
pub enum SegmentData {
    /// Elements of a buffer: device memory on the link's source device, or, when the
    /// source is the host, mapped host memory ([`Backend::alloc_mapped`]), whose packets
    /// move to the destination device by DMA ([`Backend::copy`]) with no staging copy.
    Device(BufferSlice),
    /// Host memory (the link's source is the host): each packet is copied out of it and
    /// written with [`Backend::write_from_host`] (through a staging block on CUDA).
    Host(HostData),
}

impl SegmentData {
    fn len(&self) -> usize {
        match self {
            SegmentData::Device(s) => s.len,
            SegmentData::Host(h) => h.len(),
        }
    }

    fn slice(&self, offset: usize, len: usize) -> Result<SegmentData, BackendError> {
        Ok(match self {
            SegmentData::Device(s) => {
                SegmentData::Device(BufferSlice::new(s.buffer, s.offset + offset, len))
            }
            SegmentData::Host(h) => SegmentData::Host(h.slice(offset, len)?),
        })
    }
}

/// A message: data plus a tag the program chooses (segment number, kind), delivered with
/// every packet cut from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The data.
    pub data: SegmentData,
    /// Program-defined tag.
    pub tag: u64,
    /// An event the data is ready at (Groute's `Send(segment, event)`); `None` when it is
    /// ready now.
    pub ready: Option<EventId>,
}

impl Segment {
    /// A segment whose data is ready now.
    pub fn new(data: SegmentData, tag: u64) -> Segment {
        Segment { data, tag, ready: None }
    }
}

/// Where a received packet lies.
#[derive(Clone, Debug, PartialEq)]
pub enum ReceivedData {
    /// In a receive buffer on the destination device: this range of it.
    Device(BufferSlice),
    /// Delivered to host memory.
    Host(HostData),
}

/// A packet that landed in a receive buffer (Groute's `PendingSegment`): process it, then
/// [`Context::release`] it so the buffer takes the next packet.
#[derive(Clone, Debug, PartialEq)]
pub struct Received {
    /// The link it came over.
    pub link: LinkId,
    /// The receive buffer it occupies.
    pub slot: u32,
    /// The data.
    pub data: ReceivedData,
    /// Elements.
    pub len: usize,
    /// The segment's tag.
    pub tag: u64,
    /// Where the packet started in its segment, in elements.
    pub offset: usize,
    /// The endpoint that sent the segment.
    pub source: Endpoint,
}

/// What the event loop hands a Groute program.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A packet arrived.
    Received(Received),
    /// Every packet of a segment sent with this tag from `source` was delivered: the
    /// sender may reuse its memory.
    Sent {
        /// The sender.
        source: Endpoint,
        /// The segment's tag.
        tag: u64,
    },
    /// The link will deliver nothing more.
    Shutdown {
        /// The link.
        link: LinkId,
    },
    /// One of the program's own operations finished.
    Completion(Completion),
}

/// Per-link traffic, for reports.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LinkTraffic {
    /// Source endpoint.
    pub src: String,
    /// Destination endpoint.
    pub dst: String,
    /// Packets carried.
    pub packets: u64,
    /// Elements carried.
    pub elements: u64,
    /// Bytes carried (payload).
    pub bytes: u64,
}

#[derive(Clone, Debug)]
struct QueuedPacket {
    /// The whole segment the packet is cut from, shared by its packets and by the copies
    /// queued at several candidate links: a host segment's packet is copied out of it only
    /// when it is sent, so routing a large host segment copies nothing up front.
    data: Rc<SegmentData>,
    tag: u64,
    /// The packet's first element in the segment, and its length.
    offset: usize,
    len: usize,
    source: Endpoint,
    segment: u64,
    ready: Option<EventId>,
    /// Index into `Context::multiplexed` when queued on several candidate links.
    shared: Option<usize>,
}

struct LinkState {
    /// The sending endpoint; `None` for a router's output (fed by any of its inputs).
    src: Option<Endpoint>,
    dst: Endpoint,
    config: LinkConfig,
    /// Receive buffers on the destination device (empty when the destination is the host).
    buffers: Vec<BufferId>,
    free: VecDeque<u32>,
    queue: VecDeque<QueuedPacket>,
    in_flight: u32,
    shutdown_asked: bool,
    shutdown_sent: bool,
    traffic: LinkTraffic,
}

struct RouterState {
    inputs: Vec<Endpoint>,
    outputs: Vec<(Endpoint, LinkId)>,
    policy: Box<dyn RoutingPolicy>,
    shut_inputs: Vec<Endpoint>,
}

struct SegmentState {
    remaining: u64,
    source: Endpoint,
    tag: u64,
}

enum Purpose {
    Program,
    Packet { link: LinkId, slot: u32, packet: QueuedPacket, len: usize },
}

/// The Groute context: the backend, the links and routers built on it, and the event loop.
pub struct Context<'b, B: Backend + ?Sized> {
    /// The backend, for the program's own kernels, reads and allocations.
    pub backend: &'b mut B,
    links: Vec<LinkState>,
    routers: Vec<RouterState>,
    tokens: BTreeMap<Token, Purpose>,
    next_token: u64,
    ready: VecDeque<Event>,
    segments: BTreeMap<u64, SegmentState>,
    next_segment: u64,
    /// Stale flags of packets queued on several candidate links.
    multiplexed: Vec<bool>,
    /// Transfer streams per (link, issuing device).
    streams: BTreeMap<(LinkId, DeviceId), StreamId>,
}

/// Tokens of the program's own operations have this bit clear; the context's have it set.
const CONTEXT_TOKEN_BIT: u64 = 1 << 63;

impl<'b, B: Backend + ?Sized> Context<'b, B> {
    /// A context over `backend` (Groute's `Context`, which manages all its devices).
    pub fn new(backend: &'b mut B) -> Self {
        Context {
            backend,
            links: Vec::new(),
            routers: Vec::new(),
            tokens: BTreeMap::new(),
            next_token: 0,
            ready: VecDeque::new(),
            segments: BTreeMap::new(),
            next_segment: 0,
            multiplexed: Vec::new(),
            streams: BTreeMap::new(),
        }
    }

    /// The devices, as endpoints.
    pub fn devices(&self) -> Vec<Endpoint> {
        (0..self.backend.device_count()).map(Endpoint::gpu).collect()
    }

    /// A fresh token for one of the program's own operations; its completion comes back as
    /// [`Event::Completion`].
    pub fn token(&mut self) -> Token {
        let t = Token(self.next_token);
        self.next_token += 1;
        self.tokens.insert(t, Purpose::Program);
        t
    }

    fn context_token(&mut self, purpose: Purpose) -> Token {
        let t = Token(self.next_token | CONTEXT_TOKEN_BIT);
        self.next_token += 1;
        self.tokens.insert(t, purpose);
        t
    }

    /// Creates a link from `src` to `dst`, allocating its receive buffers on the destination
    /// device.
    pub fn link(
        &mut self,
        src: Endpoint,
        dst: Endpoint,
        config: LinkConfig,
    ) -> Result<LinkId, RuntimeError> {
        let what = format!("link {src} -> {dst}");
        check_config(&what, config)?;
        if src == dst {
            return Err(RuntimeError::Options(format!(
                "{what}: a link connects two different endpoints"
            )));
        }
        self.add_link(Some(src), dst, config, what)
    }

    /// Allocates a link's receive buffers on `dst` (none for the host) and registers it.
    /// `src` is `None` for a router's output, fed by whichever input sends.
    fn add_link(
        &mut self,
        src: Option<Endpoint>,
        dst: Endpoint,
        config: LinkConfig,
        name: String,
    ) -> Result<LinkId, RuntimeError> {
        let id = LinkId(self.links.len() as u32);
        let mut buffers = Vec::new();
        if let Some(device) = dst.device() {
            for b in 0..config.buffers {
                let label = format!("groute {name} receive buffer {b}");
                buffers.push(self.backend.alloc(
                    device,
                    config.elem,
                    config.packet_elems,
                    &label,
                )?);
            }
        }
        let source_name = src.map_or_else(|| name.clone(), |e| e.to_string());
        self.links.push(LinkState {
            src,
            dst,
            config,
            buffers,
            free: (0..config.buffers).collect(),
            queue: VecDeque::new(),
            in_flight: 0,
            shutdown_asked: false,
            shutdown_sent: false,
            traffic: LinkTraffic { src: source_name, dst: dst.to_string(), ..Default::default() },
        });
        Ok(id)
    }

    /// Creates a router from `inputs` to `outputs`, one output link per destination with
    /// `config`, routing by `policy`.
    pub fn router(
        &mut self,
        inputs: Vec<Endpoint>,
        outputs: Vec<Endpoint>,
        config: LinkConfig,
        policy: Box<dyn RoutingPolicy>,
    ) -> Result<RouterId, RuntimeError> {
        if outputs.is_empty() {
            return Err(RuntimeError::Options("a router needs at least one destination".into()));
        }
        let name = format!("router{}", self.routers.len());
        check_config(&name, config)?;
        let mut links = Vec::with_capacity(outputs.len());
        for &dst in &outputs {
            let id = self.add_link(None, dst, config, name.clone())?;
            links.push((dst, id));
        }
        let id = RouterId(self.routers.len() as u32);
        self.routers.push(RouterState { inputs, outputs: links, policy, shut_inputs: Vec::new() });
        Ok(id)
    }

    /// The output link of `router` towards `dst`.
    pub fn router_link(&self, router: RouterId, dst: Endpoint) -> Option<LinkId> {
        self.routers
            .get(router.0 as usize)?
            .outputs
            .iter()
            .find(|(d, _)| *d == dst)
            .map(|&(_, l)| l)
    }

    /// The destination endpoint of a link.
    pub fn link_destination(&self, link: LinkId) -> Endpoint {
        self.links[link.0 as usize].dst
    }

    /// Sends `segment` over `link` (from the link's source endpoint).
    pub fn send(&mut self, link: LinkId, segment: Segment) -> Result<(), RuntimeError> {
        let source = self.link_state(link)?.src.ok_or_else(|| {
            RuntimeError::Options(format!(
                "link {} is a router's output: send through the router (Context::route)",
                link.0
            ))
        })?;
        let packet_elems = self.links[link.0 as usize].config.packet_elems;
        let segment_id = self.begin_segment(&segment, source, packet_elems);
        let whole = Rc::new(segment.data);
        for (offset, len) in packets(whole.len(), packet_elems) {
            let packet = QueuedPacket {
                data: Rc::clone(&whole),
                tag: segment.tag,
                offset,
                len,
                source,
                segment: segment_id,
                ready: segment.ready,
                shared: None,
            };
            self.links[link.0 as usize].queue.push_back(packet);
        }
        self.pump(link)
    }

    /// Sends `segment` from `source` through `router`: the policy picks the destinations.
    pub fn route(
        &mut self,
        router: RouterId,
        source: Endpoint,
        segment: Segment,
    ) -> Result<(), RuntimeError> {
        let r = self
            .routers
            .get_mut(router.0 as usize)
            .ok_or_else(|| RuntimeError::Options(format!("router {} does not exist", router.0)))?;
        if !r.inputs.contains(&source) {
            return Err(RuntimeError::Options(format!(
                "router {}: {source} is not one of its inputs",
                router.0
            )));
        }
        let destinations: Vec<Endpoint> = r.outputs.iter().map(|&(d, _)| d).collect();
        let info = SegmentInfo { tag: segment.tag, len: segment.data.len() };
        let Route { to, mode } = r.policy.route(&info, source, &destinations);
        let links: Vec<LinkId> = to
            .iter()
            .map(|d| {
                r.outputs.iter().find(|(o, _)| o == d).map(|&(_, l)| l).ok_or_else(|| {
                    RuntimeError::Options(format!(
                        "router {}: its policy chose {d}, which is not a destination",
                        router.0
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        if links.is_empty() {
            return Err(RuntimeError::Options(format!(
                "router {}: its policy chose no destination for a segment from {source}",
                router.0
            )));
        }
        // Segmenter: the smallest packet among the candidates.
        let packet_elems =
            links.iter().map(|l| self.links[l.0 as usize].config.packet_elems).min().unwrap_or(1);
        let copies = if mode == RouteMode::All { links.len() as u64 } else { 1 };
        let segment_id = self.begin_segment(&segment, source, packet_elems);
        if let Some(s) = self.segments.get_mut(&segment_id) {
            s.remaining *= copies;
        }
        let whole = Rc::new(segment.data);
        for (offset, len) in packets(whole.len(), packet_elems) {
            let shared = (mode == RouteMode::Any && links.len() > 1).then(|| {
                self.multiplexed.push(false);
                self.multiplexed.len() - 1
            });
            for &l in &links {
                self.links[l.0 as usize].queue.push_back(QueuedPacket {
                    data: Rc::clone(&whole),
                    tag: segment.tag,
                    offset,
                    len,
                    source,
                    segment: segment_id,
                    ready: segment.ready,
                    shared,
                });
            }
        }
        for l in links {
            self.pump(l)?;
        }
        Ok(())
    }

    /// Releases a received packet's buffer for the next packet.
    pub fn release(&mut self, received: &Received) -> Result<(), RuntimeError> {
        let link = self.link_state(received.link)?;
        if link.free.contains(&received.slot) || received.slot >= link.config.buffers {
            return Err(RuntimeError::Options(format!(
                "link {}: receive buffer {} released twice or never taken",
                received.link.0, received.slot
            )));
        }
        self.links[received.link.0 as usize].free.push_back(received.slot);
        self.pump(received.link)
    }

    /// Signals that `link` will carry nothing more after what was already sent.
    pub fn shutdown(&mut self, link: LinkId) -> Result<(), RuntimeError> {
        self.link_state(link)?;
        self.links[link.0 as usize].shutdown_asked = true;
        self.check_shutdown(link);
        Ok(())
    }

    /// Signals that `source` will send nothing more through `router`; once every input
    /// has done so, every output link shuts down.
    pub fn shutdown_input(
        &mut self,
        router: RouterId,
        source: Endpoint,
    ) -> Result<(), RuntimeError> {
        let r = self
            .routers
            .get_mut(router.0 as usize)
            .ok_or_else(|| RuntimeError::Options(format!("router {} does not exist", router.0)))?;
        if !r.shut_inputs.contains(&source) {
            r.shut_inputs.push(source);
        }
        if r.inputs.iter().all(|i| r.shut_inputs.contains(i)) {
            let outs: Vec<LinkId> = r.outputs.iter().map(|&(_, l)| l).collect();
            for l in outs {
                self.shutdown(l)?;
            }
        }
        Ok(())
    }

    /// Traffic per link so far.
    pub fn traffic(&self) -> Vec<LinkTraffic> {
        self.links.iter().map(|l| l.traffic.clone()).collect()
    }

    /// The next event; `None` when nothing is outstanding anywhere.
    pub fn next_event(&mut self) -> Result<Option<Event>, RuntimeError> {
        loop {
            if let Some(e) = self.ready.pop_front() {
                return Ok(Some(e));
            }
            let Some(completion) = self.backend.next_completion()? else {
                return Ok(None);
            };
            match self.tokens.remove(&completion.token) {
                Some(Purpose::Program) => return Ok(Some(Event::Completion(completion))),
                Some(Purpose::Packet { link, slot, packet, len }) => {
                    self.packet_landed(link, slot, packet, len, completion)?;
                }
                None => {
                    return Err(BackendError::Usage(format!(
                        "a completion with unknown token {:?}",
                        completion.token
                    ))
                    .into());
                }
            }
        }
    }

    fn link_state(&self, link: LinkId) -> Result<&LinkState, RuntimeError> {
        self.links
            .get(link.0 as usize)
            .ok_or_else(|| RuntimeError::Options(format!("link {} does not exist", link.0)))
    }

    fn begin_segment(&mut self, segment: &Segment, source: Endpoint, packet_elems: usize) -> u64 {
        let id = self.next_segment;
        self.next_segment += 1;
        let count = packets(segment.data.len(), packet_elems).count() as u64;
        if count == 0 {
            self.ready.push_back(Event::Sent { source, tag: segment.tag });
        } else {
            self.segments.insert(id, SegmentState { remaining: count, source, tag: segment.tag });
        }
        id
    }

    /// Multiplexer: matches queued sends with free receive buffers, dropping stale copies.
    fn pump(&mut self, link: LinkId) -> Result<(), RuntimeError> {
        let mut multiplexed = false;
        loop {
            let l = &mut self.links[link.0 as usize];
            if l.free.is_empty() {
                break;
            }
            let Some(packet) = l.queue.pop_front() else { break };
            if let Some(shared) = packet.shared {
                if self.multiplexed[shared] {
                    continue; // taken by another candidate: stale
                }
                self.multiplexed[shared] = true;
                multiplexed = true;
            }
            let slot = l.free.pop_front().unwrap_or_default();
            self.transfer(link, slot, packet)?;
        }
        if multiplexed {
            // Copies queued at other candidates just went stale: their links may be done.
            for other in 0..self.links.len() {
                self.check_shutdown(LinkId(other as u32));
            }
        } else {
            self.check_shutdown(link);
        }
        Ok(())
    }

    fn transfer(
        &mut self,
        link: LinkId,
        slot: u32,
        packet: QueuedPacket,
    ) -> Result<(), RuntimeError> {
        let len = packet.len;
        let (dst, buffer) = {
            let l = &self.links[link.0 as usize];
            (l.dst, l.buffers.get(slot as usize).copied())
        };
        let stream = self.link_stream(link, packet.source, dst)?;
        if let Some(event) = packet.ready {
            self.backend.wait_event(stream, event)?;
        }
        let data = packet.data.slice(packet.offset, len)?;
        let token = self.context_token(Purpose::Packet { link, slot, packet, len });
        self.links[link.0 as usize].in_flight += 1;
        match (data, dst, buffer) {
            (SegmentData::Device(src), Endpoint::Device { .. }, Some(buffer)) => {
                self.backend.copy(stream, src, BufferSlice::new(buffer, 0, len), Some(token))?;
            }
            (SegmentData::Host(h), Endpoint::Device { .. }, Some(buffer)) => {
                self.backend.write_from_host(stream, buffer, 0, h, Some(token))?;
            }
            (SegmentData::Device(src), Endpoint::Host, _) => {
                self.backend.read_to_host(stream, src, token)?;
            }
            (SegmentData::Host(_), Endpoint::Host, _) | (_, Endpoint::Device { .. }, None) => {
                return Err(RuntimeError::Options(format!(
                    "link {}: host-to-host links carry nothing a GPU program needs",
                    link.0
                )));
            }
        }
        Ok(())
    }

    /// The stream a link's transfers go on: one per (link, source device), on the source
    /// device (or the destination device for host-to-device writes).
    fn link_stream(
        &mut self,
        link: LinkId,
        source: Endpoint,
        dst: Endpoint,
    ) -> Result<StreamId, RuntimeError> {
        let device = source.device().or(dst.device()).ok_or_else(|| {
            RuntimeError::Options(format!("link {}: neither end is a device", link.0))
        })?;
        // Router links are fed by several sources: keep a stream per source device.
        let key = (link, device);
        if let Some(&s) = self.streams.get(&key) {
            return Ok(s);
        }
        let s = self.backend.create_stream(device, StreamPriority::Normal)?;
        self.streams.insert(key, s);
        Ok(s)
    }

    fn packet_landed(
        &mut self,
        link: LinkId,
        slot: u32,
        packet: QueuedPacket,
        len: usize,
        completion: Completion,
    ) -> Result<(), RuntimeError> {
        let l = &mut self.links[link.0 as usize];
        l.in_flight -= 1;
        l.traffic.packets += 1;
        l.traffic.elements += len as u64;
        l.traffic.bytes += len as u64 * l.config.elem.size_bytes();
        let data = match (l.dst, completion.kind) {
            (Endpoint::Host, CompletionKind::HostRead(h)) => {
                // The host has no receive buffer to hold: free the slot at once.
                l.free.push_back(slot);
                ReceivedData::Host(h)
            }
            (Endpoint::Device { .. }, _) => {
                ReceivedData::Device(BufferSlice::new(l.buffers[slot as usize], 0, len))
            }
            (Endpoint::Host, other) => {
                return Err(BackendError::Usage(format!(
                    "a device-to-host packet completed as {other:?}"
                ))
                .into());
            }
        };
        self.ready.push_back(Event::Received(Received {
            link,
            slot,
            data,
            len,
            tag: packet.tag,
            offset: packet.offset,
            source: packet.source,
        }));
        if let Some(s) = self.segments.get_mut(&packet.segment) {
            s.remaining -= 1;
            if s.remaining == 0 {
                let s = self.segments.remove(&packet.segment).expect("present");
                self.ready.push_back(Event::Sent { source: s.source, tag: s.tag });
            }
        }
        if matches!(self.links[link.0 as usize].dst, Endpoint::Host) {
            self.pump(link)?;
        }
        self.check_shutdown(link);
        Ok(())
    }

    fn check_shutdown(&mut self, link: LinkId) {
        let l = &mut self.links[link.0 as usize];
        let pending = l.queue.iter().any(|p| p.shared.is_none_or(|s| !self.multiplexed[s]));
        if l.shutdown_asked && !l.shutdown_sent && l.in_flight == 0 && !pending {
            l.shutdown_sent = true;
            self.ready.push_back(Event::Shutdown { link });
        }
    }
}

impl<B: Backend + ?Sized> Drop for Context<'_, B> {
    /// Frees the links' receive buffers (a program's own buffers are its own to free).
    fn drop(&mut self) {
        for link in &self.links {
            for &b in &link.buffers {
                let _ = self.backend.free(b);
            }
        }
    }
}

/// A link needs a packet size and a receive buffer.
fn check_config(what: &str, config: LinkConfig) -> Result<(), RuntimeError> {
    if config.packet_elems == 0 || config.buffers == 0 {
        return Err(RuntimeError::Options(format!(
            "{what}: packet size ({}) and receive buffers ({}) must be at least 1",
            config.packet_elems, config.buffers
        )));
    }
    Ok(())
}

/// `(offset, len)` of the packets a segment of `len` elements is cut into.
fn packets(len: usize, packet_elems: usize) -> impl Iterator<Item = (usize, usize)> {
    let step = packet_elems.max(1);
    (0..len).step_by(step).map(move |o| (o, step.min(len - o)))
}
