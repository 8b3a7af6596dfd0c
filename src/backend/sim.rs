//! The simulator backend: the [`Backend`] trait over `switchyard-sim`'s event engine,
//! interconnect models and GPU cost model.
//!
//! Every operation is queued on its stream and started when it reaches the stream's head.
//! Kernels run their Rust implementation when they start (the simulated GPU's compute is
//! one resource per device; high-priority streams are served first), and occupy the GPU
//! for the launch overhead plus the cost model's time for the counts they report. Copies,
//! host reads and writes, and kernels' one-sided remote operations become transfers on the
//! interconnect (staged through host memory where a pair has no peer access); their data
//! lands when the transfer completes. Everything is ordered by (virtual time, sequence):
//! the same inputs give the same completions, statistics and trace.
//!
//! Faults come with the machine ([`Topology::faults`], see `switchyard_sim::fault`): the
//! interconnect model degrades and fails links itself; this backend makes stragglers'
//! kernels longer, delays deliveries (keyed by stream, and by GPU pair for one-sided
//! operations, so a stream's operations never reorder), and turns a transfer that a failed
//! link left without a route into [`BackendError::Device`] naming the link.

use super::kernel::RemoteOp;
use super::{
    Backend, BackendError, BackendStats, BufferId, BufferSlice, Completion, CompletionKind,
    DeviceId, DeviceInfo, DeviceStats, ElemType, EventId, HostData, KernelContext,
    KernelCountsReport, KernelRegistry, Launch, LinkStats, StreamId, StreamPriority, Token,
};
use rand::RngExt;
use std::collections::{BTreeMap, VecDeque};
use switchyard_sim::engine::Engine;
use switchyard_sim::fabric::EndpointId;
use switchyard_sim::fault::DeliveryDelays;
use switchyard_sim::gpu::KernelCounts;
use switchyard_sim::interconnect::{
    Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
};
use switchyard_sim::topology::Topology;
use switchyard_sim::{SimError, TimePs};

/// Settings of a simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Interconnect fidelity.
    pub fidelity: Fidelity,
    /// Seed of the run's random stream.
    pub seed: u64,
    /// Record a trace of kernels and transfers.
    pub trace: bool,
    /// Stop with an error past this virtual time.
    pub time_limit_ps: TimePs,
    /// Upper bound of a random delay (uniform in `0..=jitter_ps`, drawn from the run's
    /// seeded stream) added to every transfer's start and every kernel's duration, so that
    /// different seeds exercise different interleavings of messages and kernels. 0: none.
    pub jitter_ps: TimePs,
    /// Stop with an error after this many simulator events (bounds the wall-clock time of
    /// a run that is slow to simulate). `u64::MAX`: no limit.
    pub event_limit: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fidelity: Fidelity::Flow,
            seed: 0,
            trace: false,
            time_limit_ps: TimePs::MAX,
            jitter_ps: 0,
            event_limit: u64::MAX,
        }
    }
}

/// One span of a trace: a kernel on a stream or a transfer between two endpoints.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceSpan {
    /// What ran (kernel name, `copy`, `read`, `write`, `remote`).
    pub name: String,
    /// Track: `gpu0/stream3` for kernels, `gpu0->gpu1` for transfers.
    pub track: String,
    /// Start in picoseconds.
    pub start_ps: TimePs,
    /// Duration in picoseconds.
    pub duration_ps: TimePs,
    /// Bytes moved (transfers) or edges visited (kernels).
    pub amount: u64,
}

enum Op {
    Kernel(Launch, Option<Token>),
    Copy { src: BufferSlice, dst: BufferSlice, token: Option<Token> },
    Write { dst: BufferId, offset: usize, data: HostData, token: Option<Token> },
    Read { src: BufferSlice, token: Token },
    Callback(Token),
    Record(EventId),
    Wait(EventId),
}

struct Stream {
    device: u32,
    priority: StreamPriority,
    queue: VecDeque<Op>,
    running: bool,
}

struct Buffer {
    device: u32,
    elem: ElemType,
    len: usize,
    /// Contents; `None` while the buffer is all zeros and nothing has touched it (a fresh
    /// allocation that an upload will overwrite costs no zero-filling).
    data: Option<HostData>,
    label: String,
}

impl Buffer {
    /// The contents, zero-filled on first use.
    fn contents(&mut self) -> &mut HostData {
        let (elem, len) = (self.elem, self.len);
        self.data.get_or_insert_with(|| HostData::zeros(elem, len))
    }

    /// A copy of `len` elements from `offset` (zeros for an untouched buffer).
    fn slice(&self, offset: usize, len: usize) -> Result<HostData, BackendError> {
        match &self.data {
            Some(data) => data.slice(offset, len),
            None if offset + len <= self.len => Ok(HostData::zeros(self.elem, len)),
            None => Err(BackendError::Usage(format!(
                "elements {offset}..{} of `{}` are out of its {} elements",
                offset + len,
                self.label,
                self.len
            ))),
        }
    }
}

struct Device {
    info: DeviceInfo,
    endpoint: EndpointId,
    host: EndpointId,
    memory_in_use_bytes: u64,
    compute_busy: bool,
    /// Streams whose head kernel waits for the compute resource, by (priority, arrival).
    compute_waiters: BTreeMap<(u8, u64), u32>,
    stats: DeviceStats,
}

/// What a finished transfer means.
enum TransferPurpose {
    /// Completes the head op of `stream`; data lands in `dst` (if any).
    StreamOp { stream: u32, landing: Option<(BufferId, usize, HostData)>, read: Option<HostData> },
    /// One-sided operations from a kernel, applied on arrival.
    Remote(Vec<RemoteOp>),
}

struct InFlight {
    request: TransferRequest,
    purpose: TransferPurpose,
    start_ps: TimePs,
    track: String,
    name: &'static str,
    bytes: u64,
}

enum Event {
    /// The head operation of a stream finished after a fixed time (kernel, local copy).
    /// `kernel`: the device and counts of a kernel; `None` for an on-device copy of `bytes`.
    StreamOpDone {
        stream: u32,
        kernel: Option<(u32, KernelCountsReport)>,
        bytes: u64,
        start_ps: TimePs,
    },
    /// A transfer prepared earlier starts now (after a copy's setup time, or when the kernel
    /// that issued remote operations ends).
    StartTransfer { id: u64 },
    /// A transfer that completed earlier is delivered now (a `delay` fault held it back).
    Deliver { id: u64 },
}

/// The stream (derived from the run's seed) that `delay` faults draw from.
const FAULT_DELAY_STREAM: u64 = 0xFA_0175;

/// The simulator backend.
pub struct SimBackend {
    topology: Topology,
    registry: KernelRegistry,
    config: SimConfig,
    engine: Engine<Event>,
    net: Box<dyn Interconnect>,
    devices: Vec<Device>,
    buffers: Vec<Option<Buffer>>,
    streams: Vec<Stream>,
    events_reached: Vec<bool>,
    ready: VecDeque<Completion>,
    in_flight: BTreeMap<u64, InFlight>,
    next_transfer: u64,
    arrivals: u64,
    waiter_seq: u64,
    trace: Vec<TraceSpan>,
    delays: Option<DeliveryDelays>,
}

impl SimBackend {
    /// A simulated machine with the first `gpus` GPUs of `topology` usable, running the
    /// kernels of `registry`.
    pub fn new(
        topology: Topology,
        gpus: u32,
        registry: KernelRegistry,
        config: SimConfig,
    ) -> Result<Self, BackendError> {
        let available = topology.gpus.len() as u32;
        if gpus == 0 || gpus > available {
            return Err(BackendError::Usage(format!(
                "topology `{}` has {available} GPUs, {gpus} asked for; choose 1..={available}",
                topology.name
            )));
        }
        let changes = topology.faults().fabric_changes();
        let net =
            Box::new(InterconnectModel::with_faults(topology.fabric(), config.fidelity, changes));
        let engine = Engine::new(config.seed);
        let delays = topology.faults().delivery_delays(engine.derive_rng(FAULT_DELAY_STREAM));
        let devices = topology.gpus[..gpus as usize]
            .iter()
            .map(|g| Device {
                info: DeviceInfo {
                    name: g.model.name.clone(),
                    memory_bytes: g.model.memory_bytes(),
                    sm_count: g.model.sm_count,
                },
                endpoint: g.endpoint,
                host: topology.host_endpoint(g.home_socket).unwrap_or(g.endpoint),
                memory_in_use_bytes: 0,
                compute_busy: false,
                compute_waiters: BTreeMap::new(),
                stats: DeviceStats::default(),
            })
            .collect();
        Ok(SimBackend {
            engine,
            delays,
            topology,
            registry,
            config,
            net,
            devices,
            buffers: Vec::new(),
            streams: Vec::new(),
            events_reached: Vec::new(),
            ready: VecDeque::new(),
            in_flight: BTreeMap::new(),
            next_transfer: 0,
            arrivals: 0,
            waiter_seq: 0,
            trace: Vec::new(),
        })
    }

    /// The simulated machine.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The trace recorded so far (empty unless [`SimConfig::trace`]).
    pub fn trace(&self) -> &[TraceSpan] {
        &self.trace
    }

    /// Events the engine processed plus transfers completed.
    pub fn events_processed(&self) -> u64 {
        self.engine.events_processed() + self.arrivals
    }

    fn buffer(&self, id: BufferId) -> Result<&Buffer, BackendError> {
        self.buffers.get(id.0 as usize).and_then(Option::as_ref).ok_or_else(|| {
            BackendError::Usage(format!("buffer {} does not exist or was freed", id.0))
        })
    }

    fn stream_mut(&mut self, id: StreamId) -> Result<&mut Stream, BackendError> {
        self.streams
            .get_mut(id.0 as usize)
            .ok_or_else(|| BackendError::Usage(format!("stream {} does not exist", id.0)))
    }

    fn enqueue(&mut self, stream: StreamId, op: Op) -> Result<(), BackendError> {
        self.stream_mut(stream)?.queue.push_back(op);
        self.pump(stream.0)
    }

    /// Starts the head operation of `stream` if it can start, repeatedly for operations
    /// that finish at once (records, satisfied waits, callbacks).
    fn pump(&mut self, stream: u32) -> Result<(), BackendError> {
        loop {
            let s = &mut self.streams[stream as usize];
            if s.running {
                return Ok(());
            }
            let Some(head) = s.queue.front() else { return Ok(()) };
            match head {
                Op::Record(e) => {
                    let e = *e;
                    s.queue.pop_front();
                    self.events_reached[e.0 as usize] = true;
                    let waiting: Vec<u32> = (0..self.streams.len() as u32)
                        .filter(|&o| matches!(self.streams[o as usize].queue.front(), Some(Op::Wait(w)) if *w == e))
                        .collect();
                    for o in waiting {
                        self.pump(o)?;
                    }
                }
                Op::Wait(e) => {
                    if !self.events_reached[e.0 as usize] {
                        return Ok(());
                    }
                    s.queue.pop_front();
                }
                Op::Callback(token) => {
                    let token = *token;
                    s.queue.pop_front();
                    let time_ps = self.engine.now();
                    self.ready.push_back(Completion {
                        token,
                        time_ps,
                        kind: CompletionKind::Callback,
                    });
                }
                Op::Kernel(..) => {
                    s.running = true;
                    let device = s.device;
                    let priority = u8::from(s.priority != StreamPriority::High);
                    self.waiter_seq += 1;
                    let arrival = self.waiter_seq;
                    let d = &mut self.devices[device as usize];
                    d.compute_waiters.insert((priority, arrival), stream);
                    return self.start_kernels(device);
                }
                Op::Copy { .. } | Op::Write { .. } | Op::Read { .. } => {
                    s.running = true;
                    return self.start_transfer_op(stream);
                }
            }
        }
    }

    /// Runs waiting kernels on `device` while its compute resource is free.
    fn start_kernels(&mut self, device: u32) -> Result<(), BackendError> {
        let d = &mut self.devices[device as usize];
        if d.compute_busy {
            return Ok(());
        }
        let Some((_, stream)) = d.compute_waiters.pop_first() else { return Ok(()) };
        d.compute_busy = true;
        let Some(Op::Kernel(launch, _)) = self.streams[stream as usize].queue.front() else {
            return Err(BackendError::Usage("kernel waiter without a kernel".into()));
        };
        let launch = launch.clone();
        let (report, counts, remote) = self.execute(device, &launch)?;
        let model = &self.topology.gpus[device as usize].model;
        let healthy = model.launch_overhead_ps().saturating_add(model.kernel_time_ps(&counts));
        let now = self.engine.now();
        let duration = self
            .topology
            .faults()
            .kernel_time_ps(device, now, healthy)
            .saturating_add(self.jitter());
        if !remote.is_empty() {
            self.submit_remote(device, remote, now.saturating_add(duration))?;
        }
        self.engine.schedule_at(
            now.saturating_add(duration),
            Event::StreamOpDone { stream, kernel: Some((device, report)), bytes: 0, start_ps: now },
        );
        Ok(())
    }

    /// Executes a kernel's Rust implementation on the buffers it names.
    fn execute(
        &mut self,
        device: u32,
        launch: &Launch,
    ) -> Result<(KernelCountsReport, KernelCounts, Vec<RemoteOp>), BackendError> {
        let def = self.registry.get(launch.kernel)?.clone();
        let mut taken = Vec::with_capacity(launch.buffers.len());
        for (position, &id) in launch.buffers.iter().enumerate() {
            let buffer =
                self.buffers.get_mut(id.0 as usize).and_then(Option::as_mut).ok_or_else(|| {
                    BackendError::Usage(format!(
                        "kernel `{}` argument {position}: buffer {} does not exist",
                        def.name, id.0
                    ))
                })?;
            if buffer.device != device && !def.remote_args.contains(&position) {
                return Err(BackendError::Kernel {
                    kernel: def.name.into(),
                    message: format!(
                        "argument {position} (`{}`) lives on gpu{}, the kernel runs on gpu{device}",
                        buffer.label, buffer.device
                    ),
                });
            }
            let data = if buffer.device == device {
                buffer.contents();
                buffer.data.take().unwrap_or_else(|| HostData::zeros(buffer.elem, 0))
            } else {
                HostData::zeros(buffer.elem, 0)
            };
            taken.push(data);
        }
        let mut ctx = KernelContext {
            kernel: def.name,
            buffers: &mut taken,
            buffer_ids: &launch.buffers,
            scalars: &launch.scalars,
            effects: Default::default(),
        };
        let result = (def.sim)(&mut ctx);
        let effects = std::mem::take(&mut ctx.effects);
        for (&id, data) in launch.buffers.iter().zip(taken) {
            if let Some(buffer) = self.buffers[id.0 as usize].as_mut()
                && buffer.device == device
                && buffer.data.is_none()
            {
                buffer.data = Some(data);
            }
        }
        result?;
        let report = KernelCountsReport {
            items: effects.items,
            edges: effects.edges,
            atomics: effects.atomics,
            remote_ops: effects.remote.len() as u64,
        };
        let counts = KernelCounts {
            items: effects.items,
            edges: effects.edges,
            atomics: effects.atomics,
            bytes_read: effects.bytes_read,
            bytes_written: effects.bytes_written,
            rounds: effects.rounds,
        };
        Ok((report, counts, effects.remote))
    }

    fn submit_remote(
        &mut self,
        device: u32,
        ops: Vec<RemoteOp>,
        at_ps: TimePs,
    ) -> Result<(), BackendError> {
        let mut by_target: BTreeMap<u32, Vec<RemoteOp>> = BTreeMap::new();
        for op in ops {
            let target = match &op {
                RemoteOp::AtomicMinU32 { buffer, .. } | RemoteOp::AtomicAddF32 { buffer, .. } => {
                    *buffer
                }
                RemoteOp::PushU32 { queue, .. } => *queue,
            };
            let target_device = self.buffer(target)?.device;
            by_target.entry(target_device).or_default().push(op);
        }
        for (target, ops) in by_target {
            let bytes: u64 = ops
                .iter()
                .map(|op| match op {
                    RemoteOp::PushU32 { values, .. } => 4 * values.len() as u64 + 8,
                    _ => 8,
                })
                .sum();
            if target == device {
                self.apply_remote(ops)?;
                continue;
            }
            let (src, dst) =
                (self.devices[device as usize].endpoint, self.devices[target as usize].endpoint);
            let track = format!("gpu{device}->gpu{target}");
            self.submit_transfer(
                at_ps,
                src,
                dst,
                bytes,
                TransferPurpose::Remote(ops),
                track,
                "remote",
            )?;
        }
        Ok(())
    }

    fn apply_remote(&mut self, ops: Vec<RemoteOp>) -> Result<(), BackendError> {
        for op in ops {
            match op {
                RemoteOp::AtomicMinU32 { buffer, index, value } => {
                    let data = self.data_mut(buffer)?.as_u32_mut()?;
                    let slot = data.get_mut(index).ok_or_else(|| out_of_range(buffer, index))?;
                    *slot = (*slot).min(value);
                }
                RemoteOp::AtomicAddF32 { buffer, index, value } => {
                    let data = self.data_mut(buffer)?.as_f32_mut()?;
                    *data.get_mut(index).ok_or_else(|| out_of_range(buffer, index))? += value;
                }
                RemoteOp::PushU32 { queue, counter, values } => {
                    let end = self.data_mut(counter)?.as_u64_mut()?.first().copied().unwrap_or(0);
                    let storage = self.data_mut(queue)?.as_u32_mut()?;
                    let start = end as usize;
                    let Some(slots) = storage.get_mut(start..start + values.len()) else {
                        return Err(BackendError::Kernel {
                            kernel: "remote push".into(),
                            message: format!(
                                "queue buffer {} overflows: {} items at {start} exceed its {} slots",
                                queue.0,
                                values.len(),
                                storage.len()
                            ),
                        });
                    };
                    slots.copy_from_slice(&values);
                    if let Some(c) = self.data_mut(counter)?.as_u64_mut()?.first_mut() {
                        *c += values.len() as u64;
                    }
                }
            }
        }
        Ok(())
    }

    fn data_mut(&mut self, id: BufferId) -> Result<&mut HostData, BackendError> {
        self.buffers
            .get_mut(id.0 as usize)
            .and_then(Option::as_mut)
            .map(Buffer::contents)
            .ok_or_else(|| BackendError::Usage(format!("buffer {} does not exist", id.0)))
    }

    #[allow(clippy::too_many_arguments)]
    fn submit_transfer(
        &mut self,
        at_ps: TimePs,
        src: EndpointId,
        dst: EndpointId,
        bytes: u64,
        purpose: TransferPurpose,
        track: String,
        name: &'static str,
    ) -> Result<(), BackendError> {
        let id = self.next_transfer;
        self.next_transfer += 1;
        let at_ps = at_ps.saturating_add(self.jitter());
        let request = TransferRequest { src, dst, bytes, packet_bytes: None };
        self.in_flight
            .insert(id, InFlight { request, purpose, start_ps: at_ps, track, name, bytes });
        // The interconnect only accepts transfers that start at the current time.
        self.engine.schedule_at(at_ps, Event::StartTransfer { id });
        Ok(())
    }

    /// A random delay in `0..=jitter_ps` from the run's seeded stream (0 without jitter).
    fn jitter(&mut self) -> TimePs {
        match self.config.jitter_ps {
            0 => 0,
            max => self.engine.rng().random_range(0..=max),
        }
    }

    /// Starts a copy, host write or host read at the head of `stream`.
    fn start_transfer_op(&mut self, stream: u32) -> Result<(), BackendError> {
        let now = self.engine.now();
        let device = self.streams[stream as usize].device;
        let (src_ep, dst_ep, bytes, landing, read, name, track) = match self.streams
            [stream as usize]
            .queue
            .front()
        {
            Some(Op::Copy { src, dst, .. }) => {
                let (src, dst) = (*src, *dst);
                let from = self.buffer(src.buffer)?;
                let data = from.slice(src.offset, src.len)?;
                let from_device = from.device;
                let to_device = self.buffer(dst.buffer)?.device;
                let bytes = data.size_bytes();
                let landing = Some((dst.buffer, dst.offset, data));
                if from_device == to_device {
                    // On-device copy: read and write through device memory.
                    let model = &self.topology.gpus[from_device as usize].model;
                    let duration = model.copy_setup_ps()
                        + (2 * u128::from(bytes) * 1_000_000_000_000)
                            .div_ceil(u128::from(model.memory_bandwidth_bytes_per_s.max(1)))
                            as u64;
                    if let Some((b, o, d)) = landing {
                        self.data_mut(b)?.copy_range_from(o, &d, 0, d.len())?;
                    }
                    self.engine.schedule_at(
                        now.saturating_add(duration),
                        Event::StreamOpDone { stream, kernel: None, bytes, start_ps: now },
                    );
                    return Ok(());
                }
                let (s, d) = (
                    self.devices[from_device as usize].endpoint,
                    self.devices[to_device as usize].endpoint,
                );
                (s, d, bytes, landing, None, "copy", format!("gpu{from_device}->gpu{to_device}"))
            }
            Some(Op::Write { .. }) => {
                let Some(Op::Write { dst, offset, data, .. }) =
                    self.streams[stream as usize].queue.front_mut()
                else {
                    return Err(BackendError::Usage("write op vanished".into()));
                };
                // The data moves into the transfer; the op keeps an empty husk.
                let data = std::mem::replace(data, HostData::zeros(data.elem(), 0));
                let bytes = data.size_bytes();
                let d = &self.devices[device as usize];
                (
                    d.host,
                    d.endpoint,
                    bytes,
                    Some((*dst, *offset, data)),
                    None,
                    "write",
                    format!("host->gpu{device}"),
                )
            }
            Some(Op::Read { src, .. }) => {
                let data = self.buffer(src.buffer)?.slice(src.offset, src.len)?;
                let d = &self.devices[device as usize];
                (
                    d.endpoint,
                    d.host,
                    data.size_bytes(),
                    None,
                    Some(data),
                    "read",
                    format!("gpu{device}->host"),
                )
            }
            _ => return Err(BackendError::Usage("transfer op expected".into())),
        };
        // Copy set-up (driver, DMA descriptors; an InfiniBand message's own set-up).
        let setup = self.topology.transfer_setup_ps(src_ep, dst_ep);
        self.submit_transfer(
            now.saturating_add(setup),
            src_ep,
            dst_ep,
            bytes.max(1),
            TransferPurpose::StreamOp { stream, landing, read },
            track,
            name,
        )
    }

    /// Finishes the head op of `stream`, delivering its completion if it has a token.
    fn finish_head(&mut self, stream: u32, kind: CompletionKind) -> Result<(), BackendError> {
        let s = &mut self.streams[stream as usize];
        s.running = false;
        let token = match s.queue.pop_front() {
            Some(Op::Kernel(_, token))
            | Some(Op::Copy { token, .. })
            | Some(Op::Write { token, .. }) => token,
            Some(Op::Read { token, .. }) => Some(token),
            _ => return Err(BackendError::Usage("finished op missing from its stream".into())),
        };
        if let Some(token) = token {
            self.ready.push_back(Completion { token, time_ps: self.engine.now(), kind });
        }
        self.pump(stream)
    }

    fn on_event(&mut self, event: Event) -> Result<(), BackendError> {
        match event {
            Event::StartTransfer { id } => {
                let Some(flight) = self.in_flight.get(&id) else {
                    return Err(BackendError::Usage(format!("transfer {id} vanished")));
                };
                let now = self.engine.now();
                match self.net.submit(now, TransferId(id), flight.request) {
                    Err(SimError::LinkFault { message, .. }) => {
                        Err(fault_error(flight, now, &message))
                    }
                    submitted => submitted.map_err(|e| {
                        BackendError::Usage(format!("transfer {}: {e}", flight.track))
                    }),
                }
            }
            Event::Deliver { id } => self.deliver(id),
            Event::StreamOpDone { stream, kernel, bytes, start_ps } => {
                let now = self.engine.now();
                let kind = match kernel {
                    Some((device, report)) => {
                        let d = &mut self.devices[device as usize];
                        d.compute_busy = false;
                        d.stats.kernels += 1;
                        d.stats.edges += report.edges;
                        d.stats.kernel_busy_ps += now - start_ps;
                        if self.config.trace
                            && let Some(Op::Kernel(launch, _)) =
                                self.streams[stream as usize].queue.front()
                        {
                            self.trace.push(TraceSpan {
                                name: launch.kernel.to_string(),
                                track: format!("gpu{device}/stream{stream}"),
                                start_ps,
                                duration_ps: now - start_ps,
                                amount: report.edges,
                            });
                        }
                        self.start_kernels(device)?;
                        CompletionKind::Kernel(report)
                    }
                    None => CompletionKind::Copy { bytes },
                };
                self.finish_head(stream, kind)
            }
        }
    }

    /// A transfer completed: delivered now, or later under a `delay` fault.
    fn on_transfer(&mut self, id: u64) -> Result<(), BackendError> {
        if let (Some(delays), Some(flight)) = (self.delays.as_mut(), self.in_flight.get(&id)) {
            // One order key per stream, and per GPU pair for one-sided operations.
            let key = match &flight.purpose {
                TransferPurpose::StreamOp { stream, .. } => u64::from(*stream),
                TransferPurpose::Remote(_) => {
                    (1 << 63)
                        | (u64::from(flight.request.src.0) << 32)
                        | u64::from(flight.request.dst.0)
                }
            };
            let now = self.engine.now();
            let at = delays.delivery_ps(now, key);
            if at > now {
                self.engine.schedule_at(at, Event::Deliver { id });
                return Ok(());
            }
        }
        self.deliver(id)
    }

    /// Delivers a completed transfer: its data lands and its stream moves on.
    fn deliver(&mut self, id: u64) -> Result<(), BackendError> {
        let Some(flight) = self.in_flight.remove(&id) else {
            return Err(BackendError::Usage(format!("unknown transfer {id} completed")));
        };
        self.arrivals += 1;
        let now = self.engine.now();
        if self.config.trace {
            self.trace.push(TraceSpan {
                name: flight.name.to_string(),
                track: flight.track.clone(),
                start_ps: flight.start_ps,
                duration_ps: now - flight.start_ps,
                amount: flight.bytes,
            });
        }
        match flight.purpose {
            TransferPurpose::Remote(ops) => self.apply_remote(ops),
            TransferPurpose::StreamOp { stream, landing, read } => {
                if let Some((buffer, offset, data)) = landing {
                    let target = self.buffers.get_mut(buffer.0 as usize).and_then(Option::as_mut);
                    let target = target.ok_or_else(|| {
                        BackendError::Usage(format!("copy into freed buffer {}", buffer.0))
                    })?;
                    if offset == 0 && data.len() == target.len && data.elem() == target.elem {
                        target.data = Some(data);
                    } else {
                        target.contents().copy_range_from(offset, &data, 0, data.len())?;
                    }
                }
                let kind = match read {
                    Some(data) => CompletionKind::HostRead(data),
                    None => CompletionKind::Copy { bytes: flight.bytes },
                };
                self.finish_head(stream, kind)
            }
        }
    }

    fn stalled_report(&self) -> String {
        let mut lines = Vec::new();
        for (i, s) in self.streams.iter().enumerate() {
            if let Some(op) = s.queue.front() {
                let what = match op {
                    Op::Wait(e) => format!("waits for event {} that is never recorded", e.0),
                    Op::Kernel(l, _) => format!("kernel `{}` never started", l.kernel),
                    _ => "an operation never finished".to_string(),
                };
                lines.push(format!("stream {i} on gpu{}: {what}", s.device));
            }
        }
        lines.join("; ")
    }

    /// What every stream and transfer waits for, and the faults of the run: the story of a
    /// run stopped by a limit.
    fn waiting_report(&self) -> String {
        const SHOWN: usize = 8;
        let now = self.engine.now();
        let mut parts = Vec::new();
        let busy: Vec<String> = self
            .streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let what = match s.queue.front()? {
                    Op::Kernel(l, _) if s.running => format!("kernel `{}` running", l.kernel),
                    Op::Kernel(l, _) => format!("kernel `{}` waits for the GPU", l.kernel),
                    Op::Wait(e) => format!("waits for event {}", e.0),
                    Op::Copy { .. } | Op::Write { .. } | Op::Read { .. } => {
                        "a transfer in flight".to_string()
                    }
                    _ => "an operation".to_string(),
                };
                Some(format!("stream {i} on gpu{}: {what} ({} queued)", s.device, s.queue.len()))
            })
            .collect();
        if busy.is_empty() {
            parts.push("every stream is idle".to_string());
        } else {
            let more = busy.len().saturating_sub(SHOWN);
            let mut shown = busy.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
            if more > 0 {
                shown.push_str(&format!(" and {more} more streams"));
            }
            parts.push(shown);
        }
        if !self.in_flight.is_empty() {
            let oldest = self.in_flight.values().min_by_key(|f| f.start_ps);
            let oldest = oldest
                .map(|f| {
                    format!(
                        ", the oldest {} {} of {} bytes since {} ps",
                        f.name, f.track, f.bytes, f.start_ps
                    )
                })
                .unwrap_or_default();
            parts.push(format!("{} transfers in flight{oldest}", self.in_flight.len()));
        }
        let faults = self.topology.faults();
        if !faults.is_empty() {
            parts.push(format!("faults: {}", faults.describe().join("; ")));
        }
        parts.push(format!("at {now} ps"));
        parts.join("; ")
    }
}

/// The error of a transfer that a failed link left without a route.
fn fault_error(flight: &InFlight, time_ps: TimePs, message: &str) -> BackendError {
    BackendError::Device(format!(
        "simulated fault: {} {} of {} bytes (started at {} ps) cannot be delivered at {} ps: \
         {message}",
        flight.name, flight.track, flight.bytes, flight.start_ps, time_ps
    ))
}

fn out_of_range(buffer: BufferId, index: usize) -> BackendError {
    BackendError::Kernel {
        kernel: "remote operation".into(),
        message: format!("index {index} is out of range of buffer {}", buffer.0),
    }
}

impl Backend for SimBackend {
    fn name(&self) -> &str {
        "sim"
    }

    fn device_count(&self) -> u32 {
        self.devices.len() as u32
    }

    fn device_info(&self, device: DeviceId) -> DeviceInfo {
        self.devices[device.0 as usize].info.clone()
    }

    fn peer_access(&self, a: DeviceId, b: DeviceId) -> bool {
        let fabric = self.topology.fabric();
        let (ea, eb) = (self.devices[a.0 as usize].endpoint, self.devices[b.0 as usize].endpoint);
        a == b || fabric.route(ea, eb).is_some_and(|r| r.peer_access)
    }

    fn path_bandwidth_bytes_per_s(&self, a: DeviceId, b: DeviceId) -> u64 {
        if a == b {
            return 0;
        }
        let fabric = self.topology.fabric();
        let (ea, eb) = (self.devices[a.0 as usize].endpoint, self.devices[b.0 as usize].endpoint);
        let Some(route) = fabric.route(ea, eb) else {
            return 0;
        };
        if route.peer_access {
            return fabric.bottleneck_bytes_per_s(route);
        }
        // Staged through host memory: the slower of the two legs.
        let host = self.devices[a.0 as usize].host;
        let leg = |s, d| fabric.route(s, d).map_or(0, |r| fabric.bottleneck_bytes_per_s(r));
        leg(ea, host).min(leg(host, eb))
    }

    fn now_ps(&self) -> u64 {
        self.engine.now()
    }

    fn alloc(
        &mut self,
        device: DeviceId,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError> {
        let d = self
            .devices
            .get_mut(device.0 as usize)
            .ok_or_else(|| BackendError::Usage(format!("gpu{} does not exist", device.0)))?;
        let bytes = (len as u64).saturating_mul(elem.size_bytes());
        if d.memory_in_use_bytes.saturating_add(bytes) > d.info.memory_bytes {
            return Err(BackendError::OutOfMemory {
                device: device.0,
                label: label.to_string(),
                requested_bytes: bytes,
                in_use_bytes: d.memory_in_use_bytes,
                capacity_bytes: d.info.memory_bytes,
            });
        }
        d.memory_in_use_bytes += bytes;
        d.stats.memory_peak_bytes = d.stats.memory_peak_bytes.max(d.memory_in_use_bytes);
        self.buffers.push(Some(Buffer {
            device: device.0,
            elem,
            len,
            data: None,
            label: label.to_string(),
        }));
        Ok(BufferId(self.buffers.len() as u32 - 1))
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), BackendError> {
        let b =
            self.buffers.get_mut(buffer.0 as usize).and_then(Option::take).ok_or_else(|| {
                BackendError::Usage(format!("buffer {} freed twice or never allocated", buffer.0))
            })?;
        self.devices[b.device as usize].memory_in_use_bytes -= b.len as u64 * b.elem.size_bytes();
        Ok(())
    }

    fn memory_in_use_bytes(&self, device: DeviceId) -> u64 {
        self.devices.get(device.0 as usize).map_or(0, |d| d.memory_in_use_bytes)
    }

    fn buffer_shape(&self, buffer: BufferId) -> Result<(ElemType, usize), BackendError> {
        let b = self.buffer(buffer)?;
        Ok((b.elem, b.len))
    }

    fn create_stream(
        &mut self,
        device: DeviceId,
        priority: StreamPriority,
    ) -> Result<StreamId, BackendError> {
        if device.0 >= self.device_count() {
            return Err(BackendError::Usage(format!("gpu{} does not exist", device.0)));
        }
        self.streams.push(Stream {
            device: device.0,
            priority,
            queue: VecDeque::new(),
            running: false,
        });
        Ok(StreamId(self.streams.len() as u32 - 1))
    }

    fn record_event(&mut self, stream: StreamId) -> Result<EventId, BackendError> {
        self.events_reached.push(false);
        let id = EventId(self.events_reached.len() as u32 - 1);
        self.enqueue(stream, Op::Record(id))?;
        Ok(id)
    }

    fn wait_event(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError> {
        if event.0 as usize >= self.events_reached.len() {
            return Err(BackendError::Usage(format!("event {} was never recorded", event.0)));
        }
        self.enqueue(stream, Op::Wait(event))
    }

    fn launch(
        &mut self,
        stream: StreamId,
        launch: Launch,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        self.registry.get(launch.kernel)?;
        self.enqueue(stream, Op::Kernel(launch, token))
    }

    fn copy(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        dst: BufferSlice,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        let (se, sl) = self.buffer_shape(src.buffer)?;
        let (de, dl) = self.buffer_shape(dst.buffer)?;
        if se != de || src.len != dst.len || src.offset + src.len > sl || dst.offset + dst.len > dl
        {
            return Err(BackendError::Usage(format!(
                "copy of {} elements from buffer {} ({se:?}, {sl}) at {} to buffer {} ({de:?}, \
                 {dl}) at {}: types differ or a range is out of bounds",
                src.len, src.buffer.0, src.offset, dst.buffer.0, dst.offset
            )));
        }
        self.enqueue(stream, Op::Copy { src, dst, token })
    }

    fn write_from_host(
        &mut self,
        stream: StreamId,
        dst: BufferId,
        offset: usize,
        data: HostData,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        let (elem, len) = self.buffer_shape(dst)?;
        if elem != data.elem() || offset + data.len() > len {
            return Err(BackendError::Usage(format!(
                "host write of {} {:?} elements at {offset} into buffer {} ({elem:?}, {len})",
                data.len(),
                data.elem(),
                dst.0
            )));
        }
        self.enqueue(stream, Op::Write { dst, offset, data, token })
    }

    fn read_to_host(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        token: Token,
    ) -> Result<(), BackendError> {
        let (_, len) = self.buffer_shape(src.buffer)?;
        if src.offset + src.len > len {
            return Err(BackendError::Usage(format!(
                "host read of elements {}..{} from buffer {} of {len}",
                src.offset,
                src.offset + src.len,
                src.buffer.0
            )));
        }
        self.enqueue(stream, Op::Read { src, token })
    }

    fn host_callback(&mut self, stream: StreamId, token: Token) -> Result<(), BackendError> {
        self.enqueue(stream, Op::Callback(token))
    }

    fn next_completion(&mut self) -> Result<Option<Completion>, BackendError> {
        let mut finished = Vec::new();
        loop {
            if let Some(c) = self.ready.pop_front() {
                return Ok(Some(c));
            }
            let engine_next = self.engine.peek_time();
            let net_next = self.net.next_event_time();
            let next = match (engine_next, net_next) {
                (None, None) => {
                    let stalled = self.stalled_report();
                    return if stalled.is_empty() {
                        Ok(None)
                    } else {
                        Err(BackendError::Deadlock(stalled))
                    };
                }
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
            };
            if next > self.config.time_limit_ps {
                return Err(BackendError::Limit(format!(
                    "virtual time limit of {} ps reached; {}",
                    self.config.time_limit_ps,
                    self.waiting_report()
                )));
            }
            if self.events_processed() >= self.config.event_limit {
                return Err(BackendError::Limit(format!(
                    "event limit of {} reached at {} ps of virtual time; {}",
                    self.config.event_limit,
                    self.engine.now(),
                    self.waiting_report()
                )));
            }
            if net_next == Some(next) {
                self.engine
                    .advance_now(next)
                    .map_err(|e| BackendError::Usage(format!("engine clock: {e}")))?;
                finished.clear();
                self.net.advance_to(next, &mut finished);
                if let Some(failure) = self.net.take_failures().into_iter().next() {
                    let flight = self.in_flight.get(&failure.id.0);
                    return Err(match flight {
                        Some(f) => fault_error(f, failure.time_ps, &failure.message),
                        None => {
                            BackendError::Device(format!("simulated fault: {}", failure.message))
                        }
                    });
                }
                for c in std::mem::take(&mut finished) {
                    self.on_transfer(c.id.0)?;
                }
            } else if let Some((_, event)) = self.engine.pop() {
                self.on_event(event)?;
            }
        }
    }

    fn stats(&self) -> BackendStats {
        let fabric = self.topology.fabric();
        let links = self
            .net
            .channel_stats()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.bytes_carried > 0)
            .map(|(i, s)| LinkStats {
                name: fabric.channels[i].name.clone(),
                bytes: s.bytes_carried,
                busy_ps: s.busy_ps,
            })
            .collect();
        BackendStats {
            devices: self.devices.iter().map(|d| d.stats.clone()).collect(),
            links,
            events: self.events_processed(),
        }
    }
}
