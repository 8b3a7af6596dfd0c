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

use super::kernel::{AtomicOp, Fetch, PeerRead, RemoteOp, StepNext, Word};
use super::{
    Backend, BackendError, BackendStats, BufferId, BufferSlice, Completion, CompletionKind,
    DeviceId, DeviceInfo, DeviceStats, ElemType, EventId, HostData, KernelContext,
    KernelCountsReport, KernelRegistry, Launch, LaunchConfig, LinkStats, RemotePath, StreamId,
    StreamPriority, Token, queue,
};
use rand::RngExt;
use std::collections::{BTreeMap, VecDeque};
use switchyard_sim::engine::Engine;
use switchyard_sim::fabric::EndpointId;
use switchyard_sim::fault::DeliveryDelays;
use switchyard_sim::gpu::{GpuModel, KernelCounts};
use switchyard_sim::interconnect::{
    Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
};
use switchyard_sim::topology::{LinkKind, Topology};
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
    /// A kernel's counts over all its steps (what the cost model charged); `None` for
    /// transfers and for spans measured on real GPUs.
    #[serde(skip)]
    pub counts: Option<KernelCounts>,
}

enum Op {
    Kernel(Launch, LaunchConfig, Option<Token>),
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
    /// Operations the host is issuing to it (with a host model) that have not joined
    /// `queue` yet.
    issuing: u32,
    running: bool,
    /// The kernel at the head of the queue while it holds SMs.
    kernel: Option<Running>,
}

/// A kernel holding SMs of its device: an ordinary kernel for its one step, a persistent
/// kernel from its launch to its last step.
struct Running {
    device: u32,
    sms: u32,
    persistent: bool,
    /// Threads of one wave of its workers.
    resident_threads: u64,
    /// The launch's number, for its seeds.
    serial: u64,
    start_ps: TimePs,
    step: u64,
    /// When the current step started.
    step_start_ps: TimePs,
    /// Time spent in steps so far (a persistent kernel parked between steps is not busy).
    stepping_ps: u64,
    totals: KernelCountsReport,
    /// The cost model's counts over all steps (for the trace).
    charged: KernelCounts,
    /// Parts of the current step still running: its compute and its peer reads.
    outstanding: u32,
    next: StepNext,
    /// Remote operations of the current step, sent when it ends.
    remote: Vec<RemoteOp>,
    did_work: bool,
    /// Idle, waiting for something to change on its device.
    parked: bool,
    /// Something changed on its device during the current step.
    woken: bool,
}

struct Buffer {
    device: u32,
    /// Mapped host memory (device 0 is a placeholder): every device's kernels may use it.
    mapped: bool,
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
    /// SMs not held by a running kernel.
    sm_free: u32,
    /// Streams whose head kernel waits for SMs, by (priority, arrival); served in order.
    compute_waiters: BTreeMap<(u8, u64), u32>,
    stats: DeviceStats,
}

/// What a finished transfer means.
enum TransferPurpose {
    /// Completes the head op of `stream`; data lands in `dst` (if any).
    StreamOp { stream: u32, landing: Option<(BufferId, usize, HostData)>, read: Option<HostData> },
    /// One-sided operations a kernel on device `from` issued, applied on arrival.
    Remote { from: u32, ops: Vec<RemoteOp> },
    /// Replies of remote atomics travelling back to device `to`.
    Reply { to: u32, actions: Vec<ReplyAction> },
    /// Bytes a kernel (the head of `stream`) read from a peer's buffer.
    PeerRead { stream: u32 },
}

/// What the reply of a remote atomic does on the issuing device.
enum ReplyAction {
    /// The old value lands in a buffer of the issuer.
    Write { buffer: BufferId, index: usize, old: Word },
    /// The issuing thread acts on the old value: it issues this operation.
    Issue(RemoteOp),
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
    /// The head operation of a stream, an on-device copy of `bytes`, finished.
    StreamOpDone { stream: u32, bytes: u64 },
    /// The compute part of the current step of the kernel at the head of `stream` is done.
    StepCompute { stream: u32 },
    /// The persistent kernel at the head of `stream` runs its next step now.
    NextStep { stream: u32 },
    /// Host work finished.
    HostWorkDone { token: Token },
    /// The host observes an operation of `stream` that completed `sync_overhead` earlier.
    Observed { completion: Completion, stream: u32 },
    /// The host has issued `op` to `stream` (its kind's host cost after the operation issued
    /// before it; a kernel: the launch's lead, `HostIssue::launch_lead_ps`): it joins the
    /// stream's queue now.
    Issued { stream: u32, op: Op },
    /// A transfer prepared earlier starts now (after a copy's setup time, or when the kernel
    /// that issued remote operations ends).
    StartTransfer { id: u64 },
    /// A transfer that completed earlier is delivered now (a `delay` fault held it back).
    Deliver { id: u64 },
}

/// The stream (derived from the run's seed) that `delay` faults draw from.
const FAULT_DELAY_STREAM: u64 = 0xFA_0175;

/// Threads per block of a launch that does not say (the CUDA backend's default too).
const DEFAULT_BLOCK_THREADS: u32 = 256;

/// Where a kernel step stands: its number, its wave width and its seed.
#[derive(Clone, Copy)]
struct ExecShape {
    step: u64,
    resident_threads: u64,
    seed: u64,
}

/// What one execution of a kernel's Rust implementation did.
struct Executed {
    report: KernelCountsReport,
    counts: KernelCounts,
    remote: Vec<RemoteOp>,
    peer_reads: Vec<PeerRead>,
    next: StepNext,
}

/// SplitMix64 of `a` and `b`: per-launch and per-step seeds from the run's seed.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Applies one atomic to `data[index]`; returns the old value and whether it changed.
fn apply_atomic(
    data: &mut HostData,
    buffer: BufferId,
    index: usize,
    op: AtomicOp,
    value: Word,
) -> Result<(Word, bool), BackendError> {
    fn go<T: Copy + PartialEq>(
        slot: Option<&mut T>,
        buffer: BufferId,
        index: usize,
        value: T,
        expected: Option<T>,
        combine: impl Fn(T, T) -> T,
    ) -> Result<(T, bool), BackendError> {
        let slot = slot.ok_or_else(|| out_of_range(buffer, index))?;
        let old = *slot;
        let new = match expected {
            Some(e) if old == e => value,
            Some(_) => old,
            None => combine(old, value),
        };
        *slot = new;
        Ok((old, new != old))
    }
    let elem = data.elem();
    let mismatch = || BackendError::Kernel {
        kernel: "remote atomic".into(),
        message: format!(
            "operand {value:?} (or the expected value of a CAS) does not match the element \
             type of buffer {} ({elem:?})",
            buffer.0
        ),
    };
    let expected = match op {
        AtomicOp::Cas { expected } => Some(expected),
        _ => None,
    };
    match (data, value) {
        (HostData::U32(v), Word::U32(x)) => {
            let e = match expected {
                Some(Word::U32(e)) => Some(e),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let f = match op {
                AtomicOp::Add => u32::wrapping_add,
                AtomicOp::Min => std::cmp::min,
                AtomicOp::Max => std::cmp::max,
                AtomicOp::Cas { .. } | AtomicOp::Exch => |_, b| b,
            };
            go(v.get_mut(index), buffer, index, x, e, f).map(|(o, c)| (Word::U32(o), c))
        }
        (HostData::U64(v), Word::U64(x)) => {
            let e = match expected {
                Some(Word::U64(e)) => Some(e),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let f = match op {
                AtomicOp::Add => u64::wrapping_add,
                AtomicOp::Min => std::cmp::min,
                AtomicOp::Max => std::cmp::max,
                AtomicOp::Cas { .. } | AtomicOp::Exch => |_, b| b,
            };
            go(v.get_mut(index), buffer, index, x, e, f).map(|(o, c)| (Word::U64(o), c))
        }
        (HostData::F32(v), Word::F32(x)) => {
            let e = match expected {
                Some(Word::F32(e)) => Some(e),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let f = match op {
                AtomicOp::Add => |a: f32, b: f32| a + b,
                AtomicOp::Min => f32::min,
                AtomicOp::Max => f32::max,
                AtomicOp::Cas { .. } | AtomicOp::Exch => |_, b| b,
            };
            go(v.get_mut(index), buffer, index, x, e, f).map(|(o, c)| (Word::F32(o), c))
        }
        // Device memory is untyped: an `f32` atomic on a `u32` buffer works on the `f32`
        // whose bits the word holds (Atos keeps PageRank's residuals in its `u32` values).
        (HostData::U32(v), Word::F32(x)) => {
            let e = match expected {
                Some(Word::F32(e)) => Some(e.to_bits()),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let f = match op {
                AtomicOp::Add => |a: u32, b: u32| (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
                AtomicOp::Min => {
                    |a: u32, b: u32| f32::from_bits(a).min(f32::from_bits(b)).to_bits()
                }
                AtomicOp::Max => {
                    |a: u32, b: u32| f32::from_bits(a).max(f32::from_bits(b)).to_bits()
                }
                AtomicOp::Cas { .. } | AtomicOp::Exch => |_, b| b,
            };
            go(v.get_mut(index), buffer, index, x.to_bits(), e, f)
                .map(|(o, c)| (Word::F32(f32::from_bits(o)), c))
        }
        _ => Err(mismatch()),
    }
}

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
    /// Completions the host can take, each with the stream it finished on (`None`: host
    /// work, which costs no poll).
    ready: VecDeque<(Completion, Option<u32>)>,
    /// When the host's one thread is done issuing what it issued so far and taking the
    /// completions it took.
    host_free_ps: TimePs,
    in_flight: BTreeMap<u64, InFlight>,
    next_transfer: u64,
    arrivals: u64,
    waiter_seq: u64,
    launches: u64,
    trace: Vec<TraceSpan>,
    delays: Option<DeliveryDelays>,
    progress_watchdog_ps: Option<u64>,
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
                sm_free: g.model.sm_count.max(1),
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
            host_free_ps: 0,
            in_flight: BTreeMap::new(),
            next_transfer: 0,
            arrivals: 0,
            waiter_seq: 0,
            launches: 0,
            trace: Vec::new(),
            progress_watchdog_ps: None,
        })
    }

    /// Asks runtimes for a progress watch of `limit_ps` of virtual time
    /// ([`Backend::progress_watchdog_ps`]), as CUDA does, so that the watch's code runs in
    /// tests; `None` (the default): none, the simulator's own time and event limits stop a
    /// hung run.
    pub fn set_progress_watchdog_ps(&mut self, limit_ps: Option<u64>) {
        self.progress_watchdog_ps = limit_ps;
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

    /// A mapped buffer, or an error saying which functions to use instead.
    fn mapped_buffer(&self, id: BufferId) -> Result<&Buffer, BackendError> {
        let b = self.buffer(id)?;
        if !b.mapped {
            return Err(BackendError::Usage(format!(
                "buffer `{}` is device memory of gpu{}, not mapped host memory: read and write \
                 it with read_to_host/write_from_host",
                b.label, b.device
            )));
        }
        Ok(b)
    }

    /// A device buffer for a stream-ordered operation (mapped memory is not one).
    fn device_buffer(&self, id: BufferId) -> Result<&Buffer, BackendError> {
        let b = self.buffer(id)?;
        if b.mapped {
            return Err(BackendError::Usage(format!(
                "buffer `{}` is mapped host memory: read and write it with read_mapped and \
                 write_mapped (or copy between it and device memory), not with stream reads \
                 and writes",
                b.label
            )));
        }
        Ok(b)
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

    /// The host issues `op` to `stream`: it joins the queue once the host's one thread
    /// has spent the GPU model's host cost of the operation's kind on it after everything
    /// issued before it.
    fn enqueue(&mut self, stream: StreamId, op: Op) -> Result<(), BackendError> {
        let device = self.stream_mut(stream)?.device;
        let Some(h) = self.topology.gpus[device as usize].model.host else {
            self.streams[stream.0 as usize].queue.push_back(op);
            return self.pump(stream.0);
        };
        // Through the event queue even at no cost, so that operations join in issue order:
        // a kernel joins `launch_lead` into its launch, every other operation once issued,
        // and the lead is at most the launch, so no later operation joins before it.
        let (issue, lead) = match &op {
            Op::Kernel(..) => (h.launch_ps, h.launch_lead_ps.min(h.launch_ps)),
            // The CUDA backend's `host_callback` records one event after the stream's work.
            Op::Callback(_) => (h.record_ps, h.record_ps),
            Op::Copy { .. } => (h.copy_ps, h.copy_ps),
            Op::Write { .. } => (h.write_ps, h.write_ps),
            Op::Read { .. } => (h.read_ps, h.read_ps),
            Op::Record(_) => (h.record_ps, h.record_ps),
            Op::Wait(_) => (h.wait_ps, h.wait_ps),
        };
        let start = self.host_free_ps.max(self.engine.now());
        self.host_free_ps = start.saturating_add(issue);
        self.streams[stream.0 as usize].issuing += 1;
        self.engine.schedule_at(start.saturating_add(lead), Event::Issued { stream: stream.0, op });
        Ok(())
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
                    self.observe(
                        stream,
                        Completion { token, time_ps, kind: CompletionKind::Callback },
                    );
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

    /// Starts waiting kernels on `device`, in (priority, arrival) order, while the first
    /// one's SMs fit (a kernel without an SM limit needs the whole GPU).
    fn start_kernels(&mut self, device: u32) -> Result<(), BackendError> {
        loop {
            let d = &self.devices[device as usize];
            let Some((&key, &stream)) = d.compute_waiters.first_key_value() else {
                return Ok(());
            };
            let Some(Op::Kernel(_, config, _)) = self.streams[stream as usize].queue.front() else {
                return Err(BackendError::Usage("kernel waiter without a kernel".into()));
            };
            let sms = self.sms_of(device, config);
            if sms > d.sm_free {
                return Ok(());
            }
            let d = &mut self.devices[device as usize];
            d.compute_waiters.remove(&key);
            d.sm_free -= sms;
            self.begin_kernel(stream, sms)?;
        }
    }

    /// SMs a launch occupies on `device`.
    fn sms_of(&self, device: u32, config: &LaunchConfig) -> u32 {
        let all = self.devices[device as usize].info.sm_count.max(1);
        config.sm_limit.map_or(all, |l| l.clamp(1, all))
    }

    /// Threads of one wave of a launch's workers on `sms` SMs of `device`.
    fn resident_threads(
        &self,
        device: u32,
        sms: u32,
        launch: &Launch,
        config: &LaunchConfig,
    ) -> u64 {
        let model = &self.topology.gpus[device as usize].model;
        let block = u64::from(config.block_threads.unwrap_or(DEFAULT_BLOCK_THREADS).max(1));
        let per_sm = u64::from(model.resident_threads_per_sm.max(1));
        let blocks_per_sm = (per_sm / block).max(1);
        let resident = u64::from(sms) * blocks_per_sm * block;
        match config.blocks {
            Some(b) => (u64::from(b) * block).min(resident),
            None if config.persistent => resident,
            None => launch.work_items.clamp(1, resident),
        }
    }

    /// The kernel at the head of `stream` takes `sms` SMs and runs its first step.
    fn begin_kernel(&mut self, stream: u32, sms: u32) -> Result<(), BackendError> {
        let Some(Op::Kernel(launch, config, _)) = self.streams[stream as usize].queue.front()
        else {
            return Err(BackendError::Usage("kernel start without a kernel".into()));
        };
        let device = self.streams[stream as usize].device;
        let resident_threads = self.resident_threads(device, sms, launch, config);
        let persistent = config.persistent;
        self.launches += 1;
        self.streams[stream as usize].kernel = Some(Running {
            device,
            sms,
            persistent,
            resident_threads,
            serial: self.launches,
            start_ps: self.engine.now(),
            step: 0,
            step_start_ps: self.engine.now(),
            stepping_ps: 0,
            totals: KernelCountsReport::default(),
            charged: KernelCounts::default(),
            outstanding: 0,
            next: StepNext::Done,
            remote: Vec::new(),
            did_work: false,
            parked: false,
            woken: false,
        });
        self.run_step(stream)
    }

    /// Runs one step of the kernel at the head of `stream` (an ordinary kernel has one):
    /// executes its Rust implementation on memory as it is now, and schedules the step's end
    /// after the cost model's time on its SMs and its peer reads.
    fn run_step(&mut self, stream: u32) -> Result<(), BackendError> {
        let Some(Op::Kernel(launch, config, _)) = self.streams[stream as usize].queue.front()
        else {
            return Err(BackendError::Usage("kernel step without a kernel".into()));
        };
        let (launch, config) = (launch.clone(), *config);
        let Some(r) = self.streams[stream as usize].kernel.as_mut() else {
            return Err(BackendError::Usage("kernel step of a kernel that never started".into()));
        };
        r.woken = false;
        r.parked = false;
        r.step_start_ps = self.engine.now();
        let (device, sms, step) = (r.device, r.sms, r.step);
        let seed = mix(mix(self.config.seed, r.serial), step);
        let shape = ExecShape { step, resident_threads: r.resident_threads, seed };
        let exec = self.execute(device, &launch, shape)?;
        if !config.persistent && exec.next != StepNext::Done {
            return Err(BackendError::Kernel {
                kernel: launch.kernel.into(),
                message: format!(
                    "asked for another step ({:?}) but was not launched persistent; launch it \
                     with LaunchConfig::persistent",
                    exec.next
                ),
            });
        }
        let model = self.model_on(device, sms);
        let fitted = if config.persistent {
            model.persistent_step_ps(launch.kernel, &exec.counts, step)
        } else {
            None
        };
        let healthy = if let Some(step_ps) = fitted {
            // A fitted persistent kernel: its step's share of the fitted launch cost, and the
            // launch itself once.
            let launch_ps = if step == 0 { model.launch_overhead_ps() } else { 0 };
            launch_ps.saturating_add(step_ps)
        } else if config.persistent {
            // A step is a pass of the resident workers: no launch, at least one poll of
            // memory; the launch and the grid's start are paid once, by the first step.
            let counts = KernelCounts { rounds: 0, ..exec.counts };
            let pass = model.kernel_body_ps(launch.kernel, &counts).max(model.dependent_access_ps);
            let first = if step == 0 {
                model.launch_overhead_ps() + model.kernel_fixed_ps(launch.kernel)
            } else {
                0
            };
            // A step that reports grid-wide rounds (a device-side loop's round per step)
            // pays their barriers, as an ordinary kernel's rounds after its first do.
            let barriers = exec.counts.rounds.saturating_mul(model.round_barrier_ps(launch.kernel));
            first.saturating_add(pass).saturating_add(barriers)
        } else {
            model
                .launch_overhead_ps()
                .saturating_add(model.named_kernel_time_ps(launch.kernel, &exec.counts))
        };
        let now = self.engine.now();
        // A straggler's steps take longer from the fault's time on.
        let duration = self
            .topology
            .faults()
            .kernel_time_ps(device, now, healthy)
            .saturating_add(self.jitter());
        let reads = self.peer_read_sources(device, &launch, &exec.peer_reads)?;
        let Some(r) = self.streams[stream as usize].kernel.as_mut() else {
            return Err(BackendError::Usage("kernel vanished during its step".into()));
        };
        let report = exec.report;
        r.did_work = report.items + report.edges + report.atomics + report.remote_ops > 0;
        r.totals.items += report.items;
        r.totals.edges += report.edges;
        r.totals.atomics += report.atomics;
        r.totals.remote_ops += report.remote_ops;
        let c = &mut r.charged;
        c.items += exec.counts.items;
        c.edges += exec.counts.edges;
        c.atomics += exec.counts.atomics;
        c.vertices += exec.counts.vertices;
        c.outputs += exec.counts.outputs;
        c.path_edges += exec.counts.path_edges;
        c.bytes_read += exec.counts.bytes_read;
        c.bytes_written += exec.counts.bytes_written;
        c.rounds += exec.counts.rounds.max(1);
        r.remote = exec.remote;
        r.next = exec.next;
        r.outstanding = 1 + reads.len() as u32;
        self.engine.schedule_at(now.saturating_add(duration), Event::StepCompute { stream });
        let dst = self.devices[device as usize].endpoint;
        for (src_device, bytes) in reads {
            let src = self.devices[src_device as usize].endpoint;
            let track = format!("gpu{src_device}->gpu{device}");
            self.submit_transfer(
                now,
                src,
                dst,
                bytes,
                TransferPurpose::PeerRead { stream },
                track,
                "peer read",
            )?;
        }
        Ok(())
    }

    /// The GPU model of `device` restricted to `sms` of its SMs (and that share of its
    /// memory bandwidth).
    fn model_on(&self, device: u32, sms: u32) -> std::borrow::Cow<'_, GpuModel> {
        let model = &self.topology.gpus[device as usize].model;
        if sms >= model.sm_count {
            return std::borrow::Cow::Borrowed(model);
        }
        std::borrow::Cow::Owned(model.on_sms(sms))
    }

    /// Where each peer read of a kernel on `device` comes from: (owner device, bytes); reads
    /// of local or mapped buffers cost nothing beyond the kernel's own memory traffic.
    fn peer_read_sources(
        &self,
        device: u32,
        launch: &Launch,
        reads: &[PeerRead],
    ) -> Result<Vec<(u32, u64)>, BackendError> {
        let mut out = Vec::new();
        for read in reads {
            let Some(&id) = launch.buffers.get(read.arg) else {
                return Err(BackendError::Kernel {
                    kernel: launch.kernel.into(),
                    message: format!(
                        "reports a peer read of argument {}, but has {} buffer arguments",
                        read.arg,
                        launch.buffers.len()
                    ),
                });
            };
            let b = self.buffer(id)?;
            if !b.mapped && b.device != device && read.bytes > 0 {
                out.push((b.device, read.bytes));
            }
        }
        Ok(out)
    }

    /// A part of the current step of the kernel at the head of `stream` finished; the step
    /// ends when the last one does.
    fn step_part_done(&mut self, stream: u32) -> Result<(), BackendError> {
        let Some(r) = self.streams[stream as usize].kernel.as_mut() else {
            return Err(BackendError::Usage("step part of a kernel that is not running".into()));
        };
        r.outstanding = r.outstanding.saturating_sub(1);
        if r.outstanding > 0 {
            return Ok(());
        }
        self.end_step(stream)
    }

    /// The current step of the kernel at the head of `stream` ended: its remote operations
    /// leave, kernels it may have given work wake, and it finishes, steps again or idles.
    fn end_step(&mut self, stream: u32) -> Result<(), BackendError> {
        let Some(r) = self.streams[stream as usize].kernel.as_mut() else {
            return Err(BackendError::Usage("end of a step of no kernel".into()));
        };
        let (device, remote, did_work, next) =
            (r.device, std::mem::take(&mut r.remote), r.did_work, r.next);
        let now = self.engine.now();
        r.stepping_ps += now.saturating_sub(r.step_start_ps);
        if !remote.is_empty() {
            self.submit_remote(device, remote, now)?;
        }
        if did_work {
            self.wake_device(Some(device), Some(stream));
        }
        let Some(r) = self.streams[stream as usize].kernel.as_mut() else {
            return Err(BackendError::Usage("kernel vanished at the end of its step".into()));
        };
        match next {
            StepNext::Done => self.finish_kernel(stream),
            StepNext::Continue => {
                r.step += 1;
                self.run_step(stream)
            }
            StepNext::Idle => {
                r.step += 1;
                if r.woken {
                    self.run_step(stream)
                } else {
                    r.parked = true;
                    Ok(())
                }
            }
        }
    }

    /// The kernel at the head of `stream` is done: it gives its SMs back and completes.
    fn finish_kernel(&mut self, stream: u32) -> Result<(), BackendError> {
        let Some(r) = self.streams[stream as usize].kernel.take() else {
            return Err(BackendError::Usage("finish of no kernel".into()));
        };
        let now = self.engine.now();
        let d = &mut self.devices[r.device as usize];
        d.sm_free += r.sms;
        d.stats.kernels += 1;
        d.stats.edges += r.totals.edges;
        d.stats.kernel_busy_ps += r.stepping_ps;
        if self.config.trace
            && let Some(Op::Kernel(launch, _, _)) = self.streams[stream as usize].queue.front()
        {
            self.trace.push(TraceSpan {
                name: launch.kernel.to_string(),
                track: format!("gpu{}/stream{stream}", r.device),
                start_ps: r.start_ps,
                duration_ps: now - r.start_ps,
                amount: r.totals.edges,
                counts: Some(r.charged),
            });
        }
        self.start_kernels(r.device)?;
        self.finish_head(stream, CompletionKind::Kernel(r.totals))
    }

    /// Something changed on `device` (or on every device: mapped memory): idle persistent
    /// kernels there run a step, busy ones step again instead of idling.
    fn wake_device(&mut self, device: Option<u32>, except: Option<u32>) {
        let now = self.engine.now();
        for (i, s) in self.streams.iter_mut().enumerate() {
            let Some(r) = s.kernel.as_mut() else { continue };
            if !r.persistent || except == Some(i as u32) || device.is_some_and(|d| d != r.device) {
                continue;
            }
            if r.parked {
                r.parked = false;
                self.engine.schedule_at(now, Event::NextStep { stream: i as u32 });
            } else {
                r.woken = true;
            }
        }
    }

    /// Executes a kernel's Rust implementation on the buffers it names.
    fn execute(
        &mut self,
        device: u32,
        launch: &Launch,
        shape: ExecShape,
    ) -> Result<Executed, BackendError> {
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
            if buffer.device != device && !buffer.mapped && !def.remote_args.contains(&position) {
                return Err(BackendError::Kernel {
                    kernel: def.name.into(),
                    message: format!(
                        "argument {position} (`{}`) lives on gpu{}, the kernel runs on gpu{device}",
                        buffer.label, buffer.device
                    ),
                });
            }
            // Local, mapped and peer buffers alike are lent to the kernel for its step (a
            // peer buffer is for reading: writes go through remote operations). A buffer
            // named twice (an Atos GPU's own peer slots) is lent at its first position; later
            // ones get an empty buffer of its type, not a zero-filled copy of its length.
            if launch.buffers[..position].contains(&id) {
                taken.push(HostData::zeros(buffer.elem, 0));
                continue;
            }
            buffer.contents();
            taken.push(buffer.data.take().unwrap_or_else(|| HostData::zeros(buffer.elem, 0)));
        }
        let mut ctx = KernelContext::new(def.name, &mut taken, &launch.buffers, &launch.scalars);
        ctx.device = DeviceId(device);
        ctx.step = shape.step;
        ctx.resident_threads = shape.resident_threads;
        ctx.seed = shape.seed;
        let result = (def.sim)(&mut ctx);
        let effects = std::mem::take(&mut ctx.effects);
        for (&id, data) in launch.buffers.iter().zip(taken) {
            if let Some(buffer) = self.buffers[id.0 as usize].as_mut()
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
            vertices: effects.vertices,
            outputs: effects.outputs,
            path_edges: effects.path_edges,
        };
        Ok(Executed {
            report,
            counts,
            remote: effects.remote,
            peer_reads: effects.peer_reads,
            next: effects.next,
        })
    }

    /// The device a remote operation's buffer lives on; `None` for mapped host memory.
    fn target_device(&self, buffer: BufferId) -> Result<Option<u32>, BackendError> {
        let b = self.buffer(buffer)?;
        Ok(if b.mapped { None } else { Some(b.device) })
    }

    /// Kernels apply no atomics to mapped host memory (a host on PCIe has no native atomics
    /// with the GPU: CUDA leaves them non-atomic and compute-sanitizer rejects them), so a
    /// remote atomic, a queue push (its counters are atomics) or a notification (an atomic
    /// add) landing there is an error here too; a plain store is allowed.
    fn refuse_host_atomics(&self, device: u32, op: &RemoteOp) -> Result<(), BackendError> {
        let mapped = |id: BufferId| -> Result<Option<String>, BackendError> {
            let b = self.buffer(id)?;
            Ok(b.mapped.then(|| b.label.clone()))
        };
        let (what, buffer, notify, then) = match op {
            RemoteOp::Atomic { buffer, notify, fetch, .. } => {
                let then = if let Fetch::IfChanged(t) = fetch { Some(&**t) } else { None };
                ("a remote atomic", Some(*buffer), *notify, then)
            }
            RemoteOp::Push { queue, notify, .. } => {
                ("a queue push", Some(queue.counters), *notify, None)
            }
            RemoteOp::Store { .. } => ("a store", None, None, None),
        };
        let hit = match buffer.map(mapped).transpose()?.flatten() {
            Some(label) => Some((what, label)),
            None => notify
                .map(|n| mapped(n.buffer))
                .transpose()?
                .flatten()
                .map(|label| ("a notification (an atomic add)", label)),
        };
        if let Some((what, label)) = hit {
            return Err(BackendError::Kernel {
                kernel: "remote operation".into(),
                message: format!(
                    "{what} from gpu{device} lands in `{label}`, mapped host memory: kernels may \
                     not apply atomics to host memory (a host on PCIe has no native atomics with \
                     the GPU; CUDA leaves them non-atomic and compute-sanitizer rejects them); \
                     keep the counter in device memory and publish it to host memory with plain \
                     stores from one writer"
                ),
            });
        }
        match then {
            Some(t) => self.refuse_host_atomics(device, t),
            None => Ok(()),
        }
    }

    /// Whether the route from `a` to `b` crosses InfiniBand, and the largest set-up cost of
    /// a message on it.
    fn network_setup_ps(&self, a: u32, b: u32) -> Option<TimePs> {
        let fabric = self.topology.fabric();
        let (ea, eb) = (self.devices[a as usize].endpoint, self.devices[b as usize].endpoint);
        let route = fabric.route(ea, eb)?;
        let mut ib = false;
        let mut setup: TimePs = 0;
        for &c in &route.channels {
            let lt = &self.topology.link_types[self.topology.link_of_channel(c).link_type];
            if lt.kind == LinkKind::Infiniband {
                ib = true;
                setup = setup.max((lt.setup_ns * 1000.0).round() as TimePs);
            }
        }
        ib.then_some(setup)
    }

    /// Sends the remote operations a kernel on `device` issued, one message per target
    /// device (applied at once where they target `device` itself or mapped memory). Over
    /// InfiniBand each operation is a message that pays the link's set-up cost, and
    /// operations IB cannot carry are an error.
    fn submit_remote(
        &mut self,
        device: u32,
        ops: Vec<RemoteOp>,
        at_ps: TimePs,
    ) -> Result<(), BackendError> {
        let mut by_target: BTreeMap<Option<u32>, Vec<RemoteOp>> = BTreeMap::new();
        for op in ops {
            self.refuse_host_atomics(device, &op)?;
            let target = self.target_device(op.target())?;
            by_target.entry(target).or_default().push(op);
        }
        for (target, ops) in by_target {
            let Some(target) = target.filter(|&t| t != device) else {
                self.apply_remote(device, target.unwrap_or(device), ops)?;
                continue;
            };
            let setup = match self.network_setup_ps(device, target) {
                Some(per_message) => {
                    for op in &ops {
                        if let RemoteOp::Atomic { op, value, .. } = op
                            && !op.supported_over_network(*value)
                        {
                            return Err(BackendError::Kernel {
                                kernel: "remote operation".into(),
                                message: format!(
                                    "a remote {op:?} on {value:?} from gpu{device} to gpu{target} \
                                     crosses InfiniBand, which has no remote min/max or float \
                                     atomics (seed 003 sec. III-A3b); send the update as a \
                                     message to the owner's queue instead"
                                ),
                            });
                        }
                    }
                    per_message * ops.len() as u64
                }
                None => 0,
            };
            let bytes: u64 = ops.iter().map(RemoteOp::wire_bytes).sum();
            let (src, dst) =
                (self.devices[device as usize].endpoint, self.devices[target as usize].endpoint);
            let track = format!("gpu{device}->gpu{target}");
            self.submit_transfer(
                at_ps + setup,
                src,
                dst,
                bytes,
                TransferPurpose::Remote { from: device, ops },
                track,
                "remote",
            )?;
        }
        Ok(())
    }

    /// Applies remote operations from `from` that arrived at `target` (or at mapped
    /// memory), then sends the replies atomics owe their issuer.
    fn apply_remote(
        &mut self,
        from: u32,
        target: u32,
        ops: Vec<RemoteOp>,
    ) -> Result<(), BackendError> {
        let mut replies = Vec::new();
        let mut wakes_all = false;
        for op in ops {
            wakes_all |= self.buffer(op.target())?.mapped;
            match op {
                RemoteOp::Atomic { buffer, index, op, value, fetch, notify } => {
                    let (old, changed) =
                        apply_atomic(self.data_mut(buffer)?, buffer, index, op, value)?;
                    let follows = matches!(fetch, Fetch::IfChanged(_)) && changed;
                    if let (Some(n), false) = (notify, follows) {
                        wakes_all |= self.notify(n)?;
                    }
                    match fetch {
                        Fetch::Discard => {}
                        Fetch::Into { buffer, index } => {
                            replies.push(ReplyAction::Write { buffer, index, old })
                        }
                        Fetch::IfChanged(then) if changed => {
                            replies.push(ReplyAction::Issue(*then))
                        }
                        Fetch::IfChanged(_) => {}
                    }
                }
                RemoteOp::Push { queue: q, items, notify } => {
                    let mut storage =
                        std::mem::replace(self.data_mut(q.items)?, HostData::U32(Vec::new()));
                    let outcome = {
                        let counters = self.data_mut(q.counters)?.as_u64_mut()?;
                        storage.as_u32_mut().map(|s| queue::push(counters, s, &items))
                    };
                    *self.data_mut(q.items)? = storage;
                    outcome?;
                    if let Some(n) = notify {
                        wakes_all |= self.notify(n)?;
                    }
                }
                RemoteOp::Store { buffer, offset, data } => {
                    self.data_mut(buffer)?.copy_range_from(offset, &data, 0, data.len())?;
                }
            }
        }
        self.wake_device(if wakes_all { None } else { Some(target) }, None);
        if replies.is_empty() {
            return Ok(());
        }
        if from == target {
            return self.deliver_replies(from, replies);
        }
        let setup = self.network_setup_ps(target, from).unwrap_or(0);
        let bytes = replies.len() as u64 * super::kernel::ATOMIC_WIRE_BYTES;
        let (src, dst) =
            (self.devices[target as usize].endpoint, self.devices[from as usize].endpoint);
        let now = self.engine.now();
        self.submit_transfer(
            now + setup,
            src,
            dst,
            bytes,
            TransferPurpose::Reply { to: from, actions: replies },
            format!("gpu{target}->gpu{from}"),
            "reply",
        )
    }

    /// Adds a notification's amount to its counter; whether it is mapped memory (every device may
    /// be watching it).
    fn notify(&mut self, n: super::Notify) -> Result<bool, BackendError> {
        let counter = self.data_mut(n.buffer)?.as_u64_mut()?;
        let slot = counter.get_mut(n.index).ok_or_else(|| out_of_range(n.buffer, n.index))?;
        *slot += n.amount;
        Ok(self.buffer(n.buffer)?.mapped)
    }

    /// Replies of remote atomics reached their issuer `to`.
    fn deliver_replies(&mut self, to: u32, actions: Vec<ReplyAction>) -> Result<(), BackendError> {
        let mut issue = Vec::new();
        for action in actions {
            match action {
                ReplyAction::Write { buffer, index, old } => {
                    let data = self.data_mut(buffer)?;
                    let ok = match (data, old) {
                        (HostData::U32(v), Word::U32(x)) => v.get_mut(index).map(|s| *s = x),
                        (HostData::U64(v), Word::U64(x)) => v.get_mut(index).map(|s| *s = x),
                        (HostData::F32(v), Word::F32(x)) => v.get_mut(index).map(|s| *s = x),
                        _ => None,
                    };
                    if ok.is_none() {
                        return Err(BackendError::Kernel {
                            kernel: "remote atomic".into(),
                            message: format!(
                                "its old value {old:?} cannot land in element {index} of buffer {} \
                                 (wrong type or out of range)",
                                buffer.0
                            ),
                        });
                    }
                }
                ReplyAction::Issue(op) => issue.push(op),
            }
        }
        self.wake_device(Some(to), None);
        if issue.is_empty() {
            return Ok(());
        }
        let now = self.engine.now();
        self.submit_remote(to, issue, now)
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

    /// Whether a buffer is mapped host memory.
    fn is_mapped(&self, id: BufferId) -> Result<bool, BackendError> {
        Ok(self.buffer(id)?.mapped)
    }

    /// The ends and trace track of a copy between mapped host memory and `device` (the
    /// stream's GPU): a DMA over its host link, charged as a host write (`to_device`) or
    /// host read of the same bytes.
    fn host_copy_ends(&self, device: u32, to_device: bool) -> (EndpointId, EndpointId, String) {
        let d = &self.devices[device as usize];
        if to_device {
            (d.host, d.endpoint, format!("host->gpu{device}"))
        } else {
            (d.endpoint, d.host, format!("gpu{device}->host"))
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
            Some(Op::Copy { src, dst, .. })
                if self.is_mapped(src.buffer)? || self.is_mapped(dst.buffer)? =>
            {
                // Mapped host memory on one side: a DMA between the host and the stream's GPU
                // over its host link, charged as a host write or read of the same bytes.
                let (src, dst) = (*src, *dst);
                let data = self.buffer(src.buffer)?.slice(src.offset, src.len)?;
                let (s, d, track) = self.host_copy_ends(device, self.is_mapped(src.buffer)?);
                let bytes = data.size_bytes();
                (s, d, bytes, Some((dst.buffer, dst.offset, data)), None, "copy", track)
            }
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
                        Event::StreamOpDone { stream, bytes },
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
            Some(Op::Kernel(_, _, token))
            | Some(Op::Copy { token, .. })
            | Some(Op::Write { token, .. }) => token,
            Some(Op::Read { token, .. }) => Some(token),
            _ => return Err(BackendError::Usage("finished op missing from its stream".into())),
        };
        if let Some(token) = token {
            let completion = Completion { token, time_ps: self.engine.now(), kind };
            self.observe(stream, completion);
        }
        self.pump(stream)
    }

    /// The host's time to take a completion of `stream` (with a host model): one event query
    /// for it and one for every other stream with operations outstanding (queued, running
    /// or still being issued), as the CUDA backend's `next_completion` pass queries them.
    fn poll_ps(&self, stream: u32) -> TimePs {
        let device = self.streams[stream as usize].device;
        let Some(h) = self.topology.gpus[device as usize].model.host else { return 0 };
        if h.poll_query_ps == 0 {
            return 0;
        }
        let others = (self.streams.iter().enumerate())
            .filter(|&(i, s)| i != stream as usize && (!s.queue.is_empty() || s.issuing > 0))
            .count() as u64;
        h.poll_query_ps.saturating_mul(1 + others)
    }

    /// Hands the host a completion of an operation on `stream`: with a host model (the GPU
    /// model's `host`), the host sees it `sync_overhead` after it happened (the
    /// completion keeps the time it happened at), and only then can act on it, once its
    /// thread has spent [`Self::poll_ps`] taking it (in `next_completion`).
    fn observe(&mut self, stream: u32, completion: Completion) {
        let device = self.streams[stream as usize].device;
        let model = &self.topology.gpus[device as usize].model;
        let sync = model.host.map_or(0, |_| model.sync_overhead_ps());
        if sync == 0 {
            self.ready.push_back((completion, Some(stream)));
        } else {
            let at = self.engine.now().saturating_add(sync);
            self.engine.schedule_at(at, Event::Observed { completion, stream });
        }
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
            Event::StreamOpDone { stream, bytes } => {
                let device = self.streams[stream as usize].device;
                self.wake_device(Some(device), None);
                self.finish_head(stream, CompletionKind::Copy { bytes })
            }
            Event::StepCompute { stream } => self.step_part_done(stream),
            Event::NextStep { stream } => {
                // A wake-up for a kernel that meanwhile finished or already stepped is moot.
                match self.streams[stream as usize].kernel.as_ref() {
                    Some(r) if !r.parked && r.outstanding == 0 => self.run_step(stream),
                    _ => Ok(()),
                }
            }
            Event::Observed { completion, stream } => {
                self.ready.push_back((completion, Some(stream)));
                Ok(())
            }
            Event::Issued { stream, op } => {
                let s = &mut self.streams[stream as usize];
                s.issuing -= 1;
                s.queue.push_back(op);
                self.pump(stream)
            }
            Event::HostWorkDone { token } => {
                let time_ps = self.engine.now();
                let work = Completion { token, time_ps, kind: CompletionKind::HostWork };
                self.ready.push_back((work, None));
                Ok(())
            }
        }
    }

    /// A transfer completed: delivered now, or later under a `delay` fault.
    fn on_transfer(&mut self, id: u64) -> Result<(), BackendError> {
        if let (Some(delays), Some(flight)) = (self.delays.as_mut(), self.in_flight.get(&id)) {
            // One order key per stream, and per GPU pair for one-sided operations.
            let key = match &flight.purpose {
                TransferPurpose::StreamOp { stream, .. } | TransferPurpose::PeerRead { stream } => {
                    u64::from(*stream)
                }
                TransferPurpose::Remote { .. } | TransferPurpose::Reply { .. } => {
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
                counts: None,
            });
        }
        match flight.purpose {
            TransferPurpose::Remote { from, ops } => {
                let target = self.target_device(ops[0].target())?.unwrap_or(from);
                self.apply_remote(from, target, ops)
            }
            TransferPurpose::Reply { to, actions } => self.deliver_replies(to, actions),
            TransferPurpose::PeerRead { stream } => self.step_part_done(stream),
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
                    // Mapped memory is every device's: wake them all.
                    let device = (!target.mapped).then_some(target.device);
                    self.wake_device(device, None);
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
                    Op::Kernel(l, config, _) => match &s.kernel {
                        Some(r) if r.parked => format!(
                            "persistent kernel `{}` is idle, waiting for work that nothing is \
                             left to send (step {})",
                            l.kernel, r.step
                        ),
                        Some(_) => format!("kernel `{}` never finished a step", l.kernel),
                        None => format!(
                            "kernel `{}` never started: it needs {} SMs, {} are free (kernels \
                             beside it hold the rest)",
                            l.kernel,
                            self.sms_of(s.device, config),
                            self.devices[s.device as usize].sm_free
                        ),
                    },
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
                    Op::Kernel(l, ..) if s.kernel.is_some() => {
                        format!("kernel `{}` running", l.kernel)
                    }
                    Op::Kernel(l, ..) => format!("kernel `{}` waits for the GPU", l.kernel),
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
            mapped: false,
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
        if !b.mapped {
            self.devices[b.device as usize].memory_in_use_bytes -=
                b.len as u64 * b.elem.size_bytes();
        }
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
            issuing: 0,
            running: false,
            kernel: None,
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

    fn launch_with(
        &mut self,
        stream: StreamId,
        launch: Launch,
        config: LaunchConfig,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        self.registry.get(launch.kernel)?;
        if config.sm_limit == Some(0) || config.block_threads == Some(0) || config.blocks == Some(0)
        {
            return Err(BackendError::Usage(format!(
                "kernel `{}`: a launch of 0 SMs, 0 threads per block or 0 blocks runs nothing; \
                 leave the field unset for the default",
                launch.kernel
            )));
        }
        self.enqueue(stream, Op::Kernel(launch, config, token))
    }

    fn progress_watchdog_ps(&self) -> Option<u64> {
        self.progress_watchdog_ps
    }

    fn host_work(&mut self, cost_ps: u64, token: Token) -> Result<(), BackendError> {
        let at = self.engine.now().saturating_add(cost_ps);
        self.engine.schedule_at(at, Event::HostWorkDone { token });
        Ok(())
    }

    fn alloc_mapped(
        &mut self,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError> {
        self.buffers.push(Some(Buffer {
            device: 0,
            mapped: true,
            elem,
            len,
            data: None,
            label: label.to_string(),
        }));
        Ok(BufferId(self.buffers.len() as u32 - 1))
    }

    fn read_mapped(&self, buffer: BufferId) -> Result<HostData, BackendError> {
        let b = self.mapped_buffer(buffer)?;
        b.slice(0, b.len)
    }

    fn write_mapped(
        &mut self,
        buffer: BufferId,
        offset: usize,
        data: HostData,
    ) -> Result<(), BackendError> {
        self.mapped_buffer(buffer)?;
        self.data_mut(buffer)?.copy_range_from(offset, &data, 0, data.len())?;
        self.wake_device(None, None);
        Ok(())
    }

    fn memory_bandwidth_bytes_per_s(&self, device: DeviceId) -> u64 {
        self.topology
            .gpus
            .get(device.0 as usize)
            .map_or(0, |g| g.model.memory_bandwidth_bytes_per_s)
    }

    fn remote_path(&self, a: DeviceId, b: DeviceId) -> RemotePath {
        if a == b {
            RemotePath::Local
        } else if !self.peer_access(a, b) {
            RemotePath::Staged
        } else if self.network_setup_ps(a.0, b.0).is_some() {
            RemotePath::Network
        } else {
            RemotePath::Peer
        }
    }

    fn copy(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        dst: BufferSlice,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        // One side may be mapped host memory: a DMA over the host link (see
        // `start_transfer_op`).
        if self.is_mapped(src.buffer)? && self.is_mapped(dst.buffer)? {
            return Err(BackendError::Usage(format!(
                "copy from buffer {} to buffer {}: both are mapped host memory; a copy needs \
                 device memory on at least one side (use read_mapped and write_mapped)",
                src.buffer.0, dst.buffer.0
            )));
        }
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
        self.device_buffer(dst)?;
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
        self.device_buffer(src.buffer)?;
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
            if let Some((c, stream)) = self.ready.pop_front() {
                // Taking it occupies the host's one thread (after what it issued so far):
                // what the runtime issues in answer queues behind it.
                let poll = stream.map_or(0, |s| self.poll_ps(s));
                if poll > 0 {
                    self.host_free_ps =
                        self.host_free_ps.max(self.engine.now()).saturating_add(poll);
                }
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
