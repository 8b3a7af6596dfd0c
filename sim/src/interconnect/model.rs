//! The fidelity-independent front end: copy engines, staging through host memory and
//! application-level packets, over a [`Transport`] that moves the bytes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::bounds::{LegPlan, plan_legs};
use super::flow::FlowTransport;
use super::packet::PacketTransport;
use super::transport::{LegId, Transport};
use super::{
    ChannelStats, Completion, Fidelity, Interconnect, TransferFailure, TransferId, TransferRequest,
};
use crate::error::SimError;
use crate::fabric::{ChannelId, EndpointId, Fabric};
use crate::fault::{ChannelEffect, FabricChange};
use crate::time::TimePs;

/// Progress of one leg of a transfer.
#[derive(Clone, Copy, Debug, Default)]
struct LegProgress {
    /// Holds a copy engine of its source.
    has_engine: bool,
    /// Queued for a copy engine.
    waiting_engine: bool,
    /// A chunk of this leg is in the transport.
    in_flight: bool,
    /// Next chunk to start.
    next_chunk: u64,
    /// Chunks delivered.
    done_chunks: u64,
}

struct TransferState {
    legs: Vec<LegPlan>,
    progress: Vec<LegProgress>,
    bytes: u64,
    chunk_bytes: u64,
    chunks: u64,
}

impl TransferState {
    fn chunk_len(&self, k: u64) -> u64 {
        self.chunk_bytes.min(self.bytes - (k * self.chunk_bytes).min(self.bytes))
    }
}

/// One entry of the model's optional event log (see [`InterconnectModel::enable_event_log`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelLogEntry {
    /// A chunk of a leg of a transfer entered the transport.
    ChunkStarted {
        /// Virtual time in picoseconds.
        time_ps: TimePs,
        /// The transfer.
        id: TransferId,
        /// Leg index (0, or 1 for the second leg of a staged copy).
        leg: usize,
        /// Chunk index (application-level packet; 0 when unpacketized).
        chunk: u64,
        /// Payload bytes of the chunk.
        bytes: u64,
    },
    /// A chunk's last byte arrived.
    ChunkDone {
        /// Virtual time in picoseconds.
        time_ps: TimePs,
        /// The transfer.
        id: TransferId,
        /// Leg index.
        leg: usize,
    },
    /// A leg had to queue for a copy engine of `endpoint`.
    EngineWait {
        /// Virtual time in picoseconds.
        time_ps: TimePs,
        /// The transfer.
        id: TransferId,
        /// Leg index.
        leg: usize,
        /// Index of the endpoint whose engines were all busy.
        endpoint: u32,
    },
}

/// Copy engines of one endpoint.
#[derive(Default)]
struct EngineQueue {
    busy: u32,
    /// (transfer, leg index) waiting, in request order.
    waiting: VecDeque<(u64, usize)>,
}

/// An interconnect model of one fidelity over one fabric. See the [module
/// docs](super) for what it models.
pub struct InterconnectModel {
    fabric: Fabric,
    fidelity: Fidelity,
    transport: Box<dyn Transport + Send>,
    /// Latest time submitted at or advanced to.
    clock_ps: TimePs,
    transfers: BTreeMap<u64, TransferState>,
    /// Leg in the transport -> (transfer, leg index).
    legs: BTreeMap<LegId, (u64, usize)>,
    next_leg: LegId,
    engines: Vec<EngineQueue>,
    /// Completions computed but not yet returned by `advance_to`.
    undelivered: Vec<Completion>,
    scratch: Vec<(TimePs, LegId)>,
    log: Option<Vec<ModelLogEntry>>,
    /// Injected link faults, in time order, and how many have happened.
    changes: Vec<FabricChange>,
    changes_applied: usize,
    /// Channels of failed links and the failures' descriptions, for messages.
    failed_channels: BTreeSet<ChannelId>,
    failed_links: Vec<String>,
    /// Transfers that failed and were not yet taken.
    failures: Vec<TransferFailure>,
}

impl InterconnectModel {
    /// A model of `fabric` at the given fidelity, idle at time 0.
    pub fn new(fabric: &Fabric, fidelity: Fidelity) -> Self {
        let transport: Box<dyn Transport + Send> = match fidelity {
            Fidelity::Flow => Box::new(FlowTransport::new(fabric)),
            Fidelity::Packet => Box::new(PacketTransport::new(fabric)),
        };
        InterconnectModel {
            fabric: fabric.clone(),
            fidelity,
            transport,
            clock_ps: 0,
            transfers: BTreeMap::new(),
            legs: BTreeMap::new(),
            next_leg: 0,
            engines: (0..fabric.endpoints.len()).map(|_| EngineQueue::default()).collect(),
            undelivered: Vec::new(),
            scratch: Vec::new(),
            log: None,
            changes: Vec::new(),
            changes_applied: 0,
            failed_channels: BTreeSet::new(),
            failed_links: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// A model of `fabric` whose links degrade or fail as `changes` say (resolved link
    /// faults, see [`crate::fault`]; from [`crate::topology::Topology::faults`]).
    ///
    /// A change happens at its time whenever the model is advanced or submitted to past it.
    /// While transfers are in flight, [`Interconnect::next_event_time`] includes the next
    /// change, so a driver steps onto it; an idle model applies it on the next submission
    /// (an idle link failing changes nothing but the routes later transfers take).
    pub fn with_faults(fabric: &Fabric, fidelity: Fidelity, changes: &[FabricChange]) -> Self {
        let mut model = InterconnectModel::new(fabric, fidelity);
        model.changes = changes.to_vec();
        model.changes.sort_by_key(|c| c.at_ps);
        model
    }

    /// Time of the next link fault that has not happened yet.
    fn next_change_ps(&self) -> Option<TimePs> {
        self.changes.get(self.changes_applied).map(|c| c.at_ps)
    }

    /// Applies the next link fault at its time `now`.
    fn apply_change(&mut self, now: TimePs) {
        let change = self.changes[self.changes_applied].clone();
        self.changes_applied += 1;
        match change.effect {
            ChannelEffect::Degrade { bandwidth_factor, extra_latency_ps } => {
                for c in &change.channels {
                    let ch = &mut self.fabric.channels[c.0 as usize];
                    let scaled = (ch.bandwidth_bytes_per_s as f64 * bandwidth_factor).floor();
                    ch.bandwidth_bytes_per_s = (scaled as u64).max(1);
                    ch.latency_ps = ch.latency_ps.saturating_add(extra_latency_ps);
                }
                self.transport.reconfigure(&self.fabric, now, &[]);
            }
            ChannelEffect::Fail { routes } => {
                self.fabric.routes = routes;
                self.failed_channels.extend(change.channels.iter().copied());
                self.failed_links.push(change.description);
                self.reroute(now);
            }
        }
    }

    /// After a link failure at `now`: every unfinished leg over a failed channel takes the
    /// new route between its ends (its chunk in flight restarts from its first byte); a
    /// direct GPU-to-GPU copy whose new route lacks peer access (or that has none) is planned
    /// again, staged through host memory, and restarts; a transfer with a leg that no route
    /// carries any more fails.
    fn reroute(&mut self, now: TimePs) {
        let mut aborted: Vec<LegId> = Vec::new();
        let mut restarted: Vec<u64> = Vec::new();
        let mut failed: Vec<(u64, EndpointId, EndpointId)> = Vec::new();
        let in_transport: BTreeMap<(u64, usize), LegId> =
            self.legs.iter().map(|(&leg, &key)| (key, leg)).collect();
        for (&id, t) in self.transfers.iter_mut() {
            let hit = |t: &TransferState, j: usize| {
                t.progress[j].done_chunks < t.chunks
                    && t.legs[j].channels.iter().any(|c| self.failed_channels.contains(c))
            };
            if !(0..t.legs.len()).any(|j| hit(t, j)) {
                continue;
            }
            let direct = t.legs.len() == 1;
            let (src, dst) = (t.legs[0].src, t.legs[t.legs.len() - 1].dst);
            if direct {
                match plan_legs(&self.fabric, id, src, dst) {
                    Ok(plan) if plan.len() == 1 => {
                        t.legs = plan;
                        if t.progress[0].in_flight
                            && let Some(&leg) = in_transport.get(&(id, 0))
                        {
                            aborted.push(leg);
                            t.progress[0].in_flight = false;
                            t.progress[0].next_chunk -= 1;
                            restarted.push(id);
                        }
                        continue;
                    }
                    Ok(plan) => {
                        // Now staged: every chunk goes again, through host memory.
                        let first = t.progress[0];
                        t.progress = vec![LegProgress::default(); plan.len()];
                        t.progress[0].has_engine = first.has_engine;
                        t.progress[0].waiting_engine = first.waiting_engine;
                        t.legs = plan;
                        if first.in_flight
                            && let Some(&leg) = in_transport.get(&(id, 0))
                        {
                            aborted.push(leg);
                        }
                        restarted.push(id);
                        continue;
                    }
                    Err(_) => {
                        failed.push((id, src, dst));
                        continue;
                    }
                }
            }
            for j in 0..t.legs.len() {
                if !hit(t, j) {
                    continue;
                }
                let Some(route) = self.fabric.route(t.legs[j].src, t.legs[j].dst) else {
                    failed.push((id, t.legs[j].src, t.legs[j].dst));
                    break;
                };
                t.legs[j].channels = route.channels.clone();
                if t.progress[j].in_flight
                    && let Some(&leg) = in_transport.get(&(id, j))
                {
                    aborted.push(leg);
                    t.progress[j].in_flight = false;
                    t.progress[j].next_chunk -= 1;
                    restarted.push(id);
                }
            }
        }
        // Every chunk in flight of a failing transfer stops too.
        for &(id, ..) in &failed {
            aborted.extend(self.legs.iter().filter(|(_, (t, _))| *t == id).map(|(&l, _)| l));
        }
        aborted.sort_unstable();
        aborted.dedup();
        for leg in &aborted {
            self.legs.remove(leg);
        }
        self.transport.reconfigure(&self.fabric, now, &aborted);
        for (id, src, dst) in failed {
            let name = |e: EndpointId| self.fabric.endpoints[e.0 as usize].name.clone();
            let message = format!(
                "{}; no route from `{}` to `{}` avoids the failed links",
                self.failed_links.join("; "),
                name(src),
                name(dst)
            );
            self.fail_transfer(now, id, message);
        }
        for id in restarted {
            self.pump(now, id);
        }
    }

    /// Drops transfer `id` (its chunks in flight were aborted), releases its copy engines and
    /// records the failure.
    fn fail_transfer(&mut self, now: TimePs, id: u64, message: String) {
        let Some(t) = self.transfers.remove(&id) else { return };
        for (j, p) in t.progress.iter().enumerate() {
            let src = t.legs[j].src.0 as usize;
            if p.waiting_engine {
                self.engines[src].waiting.retain(|&w| w != (id, j));
            }
            if p.has_engine {
                self.release_engine(now, src);
            }
        }
        self.failures.push(TransferFailure { id: TransferId(id), time_ps: now, message });
    }

    /// Which fidelity this model runs.
    pub fn fidelity(&self) -> Fidelity {
        self.fidelity
    }

    /// The fabric it models.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Transfers submitted and not yet completed (including those waiting for an engine).
    pub fn in_flight(&self) -> usize {
        self.transfers.len()
    }

    /// Switches the event log on (off by default): chunk starts and arrivals and engine
    /// waits, in the order they happen. For determinism tests and traces.
    pub fn enable_event_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The event log so far (empty when off).
    pub fn event_log(&self) -> &[ModelLogEntry] {
        self.log.as_deref().unwrap_or(&[])
    }

    fn record(&mut self, entry: ModelLogEntry) {
        if let Some(log) = &mut self.log {
            log.push(entry);
        }
    }

    /// Processes transport events up to `time`, chaining chunks, legs and engine grants.
    fn run_until(&mut self, time: TimePs) {
        loop {
            let change = self.next_change_ps().filter(|&c| c <= time);
            let next = self.transport.next_event_time().filter(|&t| t <= time);
            // A fault happens before the transport events of its own instant.
            if let Some(c) = change
                && next.is_none_or(|t| c <= t)
            {
                self.apply_change(c);
                continue;
            }
            let Some(t) = next else { break };
            let mut done = std::mem::take(&mut self.scratch);
            self.transport.advance_to(&self.fabric, t, &mut done);
            for &(tl, leg) in &done {
                self.on_leg_done(tl, leg);
            }
            done.clear();
            self.scratch = done;
        }
    }

    fn on_leg_done(&mut self, now: TimePs, leg: LegId) {
        let (id, j) = self.legs.remove(&leg).expect("leg is known");
        self.record(ModelLogEntry::ChunkDone { time_ps: now, id: TransferId(id), leg: j });
        let t = self.transfers.get_mut(&id).expect("transfer of a leg exists");
        let chunks = t.chunks;
        let last_leg = j + 1 == t.legs.len();
        let p = &mut t.progress[j];
        p.in_flight = false;
        p.done_chunks += 1;
        if p.done_chunks == chunks {
            p.has_engine = false;
            let src = t.legs[j].src;
            if last_leg {
                self.transfers.remove(&id);
                self.undelivered.push(Completion { id: TransferId(id), time_ps: now });
            } else {
                self.pump(now, id);
            }
            self.release_engine(now, src.0 as usize);
        } else {
            self.pump(now, id);
        }
    }

    fn release_engine(&mut self, now: TimePs, endpoint: usize) {
        let q = &mut self.engines[endpoint];
        q.busy -= 1;
        if let Some((id, j)) = q.waiting.pop_front() {
            q.busy += 1;
            let p = &mut self.transfers.get_mut(&id).expect("waiting transfer exists").progress[j];
            p.waiting_engine = false;
            p.has_engine = true;
            self.pump(now, id);
        }
    }

    /// Starts whatever transfer `id` can start at `now`: engine requests and chunks.
    fn pump(&mut self, now: TimePs, id: u64) {
        let Some(t) = self.transfers.get_mut(&id) else { return };
        for j in 0..t.legs.len() {
            let ready_upstream =
                |t: &TransferState, k: u64| j == 0 || t.progress[j - 1].done_chunks > k;
            let p = t.progress[j];
            if !p.has_engine && !p.waiting_engine && p.next_chunk == 0 && ready_upstream(t, 0) {
                let src = t.legs[j].src.0 as usize;
                let q = &mut self.engines[src];
                let limit = self.fabric.endpoints[src].copy_engines;
                if q.busy < limit {
                    q.busy += 1;
                    t.progress[j].has_engine = true;
                } else {
                    q.waiting.push_back((id, j));
                    t.progress[j].waiting_engine = true;
                    if let Some(log) = &mut self.log {
                        let (time_ps, endpoint) = (now, src as u32);
                        log.push(ModelLogEntry::EngineWait {
                            time_ps,
                            id: TransferId(id),
                            leg: j,
                            endpoint,
                        });
                    }
                }
            }
            let p = t.progress[j];
            if p.has_engine
                && !p.in_flight
                && p.next_chunk < t.chunks
                && ready_upstream(t, p.next_chunk)
            {
                let leg = self.next_leg;
                self.next_leg += 1;
                let bytes = t.chunk_len(p.next_chunk);
                t.progress[j].in_flight = true;
                t.progress[j].next_chunk += 1;
                self.legs.insert(leg, (id, j));
                if let Some(log) = &mut self.log {
                    let chunk = p.next_chunk;
                    log.push(ModelLogEntry::ChunkStarted {
                        time_ps: now,
                        id: TransferId(id),
                        leg: j,
                        chunk,
                        bytes,
                    });
                }
                self.transport.start(&self.fabric, now, leg, &t.legs[j].channels, bytes);
            }
        }
    }
}

impl Interconnect for InterconnectModel {
    fn submit(
        &mut self,
        now: TimePs,
        id: TransferId,
        request: TransferRequest,
    ) -> Result<(), SimError> {
        if now < self.clock_ps {
            return Err(SimError::SubmitInPast {
                transfer: id.0,
                at_ps: now,
                clock_ps: self.clock_ps,
            });
        }
        if request.packet_bytes == Some(0) {
            return Err(SimError::ZeroPacketSize { transfer: id.0 });
        }
        if self.transfers.contains_key(&id.0) {
            return Err(SimError::DuplicateTransfer { transfer: id.0 });
        }
        // Everything before `now` happens first (its completions are kept for advance_to),
        // link faults included, so the transfer takes the routes of its time.
        self.run_until(now);
        self.clock_ps = now;
        let legs = match plan_legs(&self.fabric, id.0, request.src, request.dst) {
            Err(SimError::NoRoute { src, dst, .. } | SimError::NoStagingPath { src, dst, .. })
                if !self.failed_links.is_empty() =>
            {
                return Err(SimError::LinkFault {
                    transfer: id.0,
                    message: format!(
                        "{}; no route from `{src}` to `{dst}` avoids the failed links",
                        self.failed_links.join("; ")
                    ),
                });
            }
            planned => planned?,
        };
        if let Some(l) =
            legs.iter().find(|l| self.fabric.endpoints[l.src.0 as usize].copy_engines == 0)
        {
            let endpoint = self.fabric.endpoints[l.src.0 as usize].name.clone();
            return Err(SimError::NoCopyEngine { transfer: id.0, endpoint });
        }
        let chunk_bytes = request.packet_bytes.unwrap_or(request.bytes).min(request.bytes).max(1);
        let chunks = request.bytes.div_ceil(chunk_bytes).max(1);
        let progress = vec![LegProgress::default(); legs.len()];
        self.transfers.insert(
            id.0,
            TransferState { legs, progress, bytes: request.bytes, chunk_bytes, chunks },
        );
        self.pump(now, id.0);
        Ok(())
    }

    fn next_event_time(&self) -> Option<TimePs> {
        let pending = self.undelivered.iter().map(|c| c.time_ps).min();
        // A fault is an event only while something is in flight for it to act on.
        let change = self.next_change_ps().filter(|_| !self.transfers.is_empty());
        [pending, self.transport.next_event_time(), change].into_iter().flatten().min()
    }

    fn advance_to(&mut self, time: TimePs, completed: &mut Vec<Completion>) {
        self.run_until(time);
        self.clock_ps = self.clock_ps.max(time);
        self.undelivered.sort_unstable_by_key(|c| (c.time_ps, c.id));
        let n = self.undelivered.partition_point(|c| c.time_ps <= time);
        completed.extend(self.undelivered.drain(..n));
    }

    fn channel_stats(&self) -> &[ChannelStats] {
        self.transport.stats()
    }

    fn take_failures(&mut self) -> Vec<TransferFailure> {
        std::mem::take(&mut self.failures)
    }
}
