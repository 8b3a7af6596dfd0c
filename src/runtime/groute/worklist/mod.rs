//! Groute's distributed worklist (seed 000 sections 4.3-4.6, Figs. 9-11) and the
//! worklist applications BFS, SSSP and residual PageRank.
//!
//! One system-wide router (ring policy by default) connects the devices. Each device has a
//! local worklist (a multiple-producer single-consumer circular buffer, [`kernels`]), a
//! *worker* agent (work kernel, then SplitSend: own items prepended locally, remote items
//! packed and routed) and a *receiver* agent (SplitReceive on a high-priority stream: owned
//! items unpacked and taken or dropped, others passed on along the ring). The host counts
//! work items centrally: every kernel reports what it consumed and produced, and when the
//! count reaches zero the host shuts the router down (termination detection).
//!
//! Options: soft-priority scheduling (section 4.4: items whose priority is at or above a
//! system-wide threshold are deferred; when only deferred work remains anywhere, the host
//! raises the threshold to the lowest deferred priority plus `delta` and every device
//! promotes what falls below it) and the fused worker (section 5.2: one persistent launch
//! runs rounds of work and SplitSend without returning to the host between them).
//!
//! A full buffer never loses work: before a kernel that may push `k` items runs, the host
//! makes sure the worklist and the deferred bag have room for everything that kernels in
//! flight may push; if not, it holds new work on that device until its kernels drain,
//! doubles the buffers and records the growth in the outcome.

pub mod kernels;

use super::context::{Context, Endpoint, Event, LinkConfig, LinkTraffic, Received, ReceivedData};
use super::policy::Policy;
use super::{Segment, SegmentData, widest_ring};
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    Launch, LaunchConfig, Scalar, StreamId, StreamPriority, Token,
};
use crate::graph::{Csr, EdgeWeights};
use crate::runtime::{RuntimeError, wait_all};
use kernels::{SLOTS, Slot, ctl};
pub use kernels::{WorklistKernels, WorklistOperator};
use std::collections::{BTreeMap, VecDeque};

/// Ring order of the worklist's router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RingOrder {
    /// Device 0, 1, 2, ... (Groute's default).
    Index,
    /// The order whose narrowest hop is widest on this machine ([`widest_ring`]).
    Widest,
}

/// When the fused worker's remote items leave its GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SendMode {
    /// At the end of each launch, through the ring router (a receiver on each GPU passes
    /// others' items on).
    #[default]
    End,
    /// While the fused worker runs (seed 000 section 4.5): it publishes per-destination
    /// outbox segments in mapped memory, the host copies each straight to its destination's
    /// inbox as soon as it sees it (all-to-all, no pass-through hops), and the destination's
    /// running worker takes deliveries at the start of its next round
    /// ([`kernels`] module docs, "Asynchronous send"). Needs the fused worker.
    Async,
}

/// Options of the distributed worklist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WorklistOptions {
    /// Work items per packet on the router's links (a packet carries `(vertex, value)`
    /// pairs: 8 bytes each).
    pub packet_items: usize,
    /// Receive buffers per link (pipelined receive operations).
    pub buffers: u32,
    /// Ring order.
    pub ring: RingOrder,
    /// Soft-priority scheduling: `Some(delta)` turns it on with this threshold step
    /// (levels for BFS, distance units for SSSP).
    pub priority_delta: Option<u64>,
    /// Fused worker (persistent kernel) instead of a launch per batch.
    pub fused: bool,
    /// Largest batch of items one work kernel (or fused round) takes.
    pub batch_items: u64,
    /// Capacity of the work kernel's output, in items (at least the largest out-degree).
    pub out_items: usize,
    /// Most rounds of one fused launch.
    pub fused_max_rounds: u32,
    /// Initial worklist capacity per device, in items (it grows on demand).
    pub initial_worklist_items: usize,
    /// Widen `batch_items` and `out_items` to the graph ([`WorklistOptions::sized_for`]):
    /// on by default, off when a user gives either size.
    pub auto_size: bool,
    /// Soft priority with the application's own step ([`WorklistApp::auto_priority_delta`])
    /// on more than one GPU when `priority_delta` is `None` ([`WorklistOptions::sized_for`]):
    /// off here, on in the CLI unless `--priority-delta` is given. Groute runs its fused
    /// BFS with soft priority by default (`prio_delta` 10): without it, a GPU runs ahead on
    /// levels that a lagging GPU's messages then correct (seed 000 section 5.3: 4,244M
    /// work items instead of 24M for BFS on USA over four GPUs).
    pub auto_priority: bool,
    /// When the fused worker's remote items leave ([`SendMode`]; one GPU never sends).
    pub send: SendMode,
    /// The fused worker when `fused` is off, for an application that asks for it on the
    /// graph ([`WorklistApp::fused_on_road_like`]), resolved by the driver: off here, on in
    /// the CLI unless `--fused on|off` is given.
    pub auto_fused: bool,
    /// The asynchronous send with the fused worker on several GPUs when `auto_fused` is on,
    /// the application asks for it ([`WorklistApp::fused_async_on_several_gpus`]) and the
    /// graph is not road-like (there a launch per batch routes through the ring,
    /// a host round trip a hop), resolved by the driver: off here, on in the CLI unless
    /// `--groute-send end|async` or `--fused on|off` is given.
    pub auto_send: bool,
}

impl Default for WorklistOptions {
    fn default() -> Self {
        WorklistOptions {
            packet_items: 4096,
            buffers: 4,
            ring: RingOrder::Index,
            priority_delta: None,
            fused: false,
            batch_items: 1 << 16,
            out_items: 1 << 18,
            fused_max_rounds: 64,
            initial_worklist_items: 1 << 18,
            auto_size: true,
            auto_priority: false,
            send: SendMode::End,
            auto_fused: false,
            auto_send: false,
        }
    }
}

impl WorklistOptions {
    /// The options a run over `arcs` arcs on `parts` GPUs uses. With `auto_size`, the work
    /// kernel's output holds a quarter of a GPU's share of the arcs (within 2^18..2^26
    /// items) and a batch is a sixteenth of that (within 2^16..2^22): a batch's out-degrees
    /// then fit one launch on graphs of average degree up to 16, as Groute sizes its
    /// worklists by the edge count. The fixed defaults (64 Ki items per batch, 256 Ki of
    /// output) cut an R-MAT 22 BFS into launches of a few thousand vertices: 103.6 ms
    /// against 6.3 ms with these sizes on one H100 (`reports/gpu_bench.md`).
    ///
    /// With `auto_priority`, more than one GPU and no `priority_delta`, soft priority is on
    /// with `auto_delta` (the application's [`WorklistApp::auto_priority_delta`]), unless sends
    /// are asynchronous ([`SendMode::Async`]: deliveries within a few rounds keep the GPUs'
    /// levels together, and every raise is a consensus round trip of all GPUs).
    pub fn sized_for(&self, arcs: u64, parts: u32, auto_delta: Option<u64>) -> WorklistOptions {
        let mut options = *self;
        // Asynchronous sends keep the GPUs' levels together without it (and each raise
        // is a consensus of every GPU): auto leaves it off there.
        if self.auto_priority
            && parts > 1
            && self.priority_delta.is_none()
            && self.send == SendMode::End
        {
            options.priority_delta = auto_delta;
        }
        if !self.auto_size {
            return options;
        }
        let share = arcs / u64::from(parts.max(1));
        let out = (share / 4).clamp(1 << 18, 1 << 26);
        let batch = (out / 16).clamp(1 << 16, 1 << 22);
        WorklistOptions {
            out_items: self.out_items.max(out as usize),
            batch_items: self.batch_items.max(batch),
            ..options
        }
    }
}

/// An application of the distributed worklist as the host sees it: its kernels (which
/// implement [`WorklistOperator`]), its initial state and where its work starts.
/// Algorithms implement it in `crate::algo`; the runtime never names one.
pub trait WorklistApp {
    /// What errors call it (e.g. "residual PageRank").
    fn label(&self) -> &'static str;
    /// Its five kernels.
    fn kernels(&self) -> WorklistKernels;
    /// Initial values of every vertex on GPU `gpu` (`owner[v]` owns `v`): `u32` levels or
    /// distances, or `f64` residuals.
    fn initial_values(&self, owner: &[u32], gpu: u32) -> HostData;
    /// Initial second values (`f64` ranks) of every vertex, if it keeps them.
    fn initial_ranks(&self, n: usize) -> Option<HostData> {
        let _ = n;
        None
    }
    /// Where its work starts.
    fn start(&self) -> Start;
    /// The `epsilon` and `damping` scalars its kernels take.
    fn tolerance_and_damping(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
    /// Whether its kernels read arc weights (uploaded as 32-bit words: integers, or `f32`
    /// bits for real weights).
    fn uses_weights(&self) -> bool {
        false
    }
    /// Whether GetPrio orders its items (soft-priority scheduling needs it).
    fn has_priority(&self) -> bool {
        true
    }
    /// The soft-priority step a run on several GPUs takes unless told otherwise
    /// ([`WorklistOptions::auto_priority`]); `None`: off.
    fn auto_priority_delta(&self) -> Option<u64> {
        None
    }
    /// Whether it runs the fused worker unless told otherwise
    /// ([`WorklistOptions::auto_fused`]) on a road-like graph (every vertex has at most
    /// [`crate::graph::partition::AUTO_METIS_MAX_DEGREE`] arcs): thousands of small rounds,
    /// where a launch per batch is host-bound.
    fn fused_on_road_like(&self) -> bool {
        false
    }
    /// Whether it runs the fused worker with the asynchronous send unless told otherwise
    /// ([`WorklistOptions::auto_send`]) on several GPUs on a graph that is not road-like,
    /// where a launch per batch routes through the ring (a host round trip a hop).
    fn fused_async_on_several_gpus(&self) -> bool {
        false
    }
}

/// Where a worklist application's work starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// One vertex, sent through the router from the host (section 4.5).
    Source(u32),
    /// Every vertex, queued on its owner.
    EveryOwnedVertex,
}

/// A worklist or deferred bag that grew during the run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Growth {
    /// GPU.
    pub gpu: u32,
    /// Which buffer (`worklist` or `deferred`).
    pub buffer: &'static str,
    /// Old capacity in items.
    pub from_items: u64,
    /// New capacity in items.
    pub to_items: u64,
}

/// Per-GPU work.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuWork {
    /// Items the work kernels consumed.
    pub work_items: u64,
    /// Pairs SplitSend packed for other GPUs.
    pub sent_pairs: u64,
    /// Pairs SplitReceive processed.
    pub received_pairs: u64,
    /// Pairs passed on along the ring.
    pub passed_pairs: u64,
    /// Kernels launched.
    pub kernels: u64,
}

/// What a distributed-worklist run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct WorklistOutcome {
    /// Final value of every vertex (levels, distances; PageRank residual bits).
    pub values: Vec<u32>,
    /// PageRank ranks (raw, not normalised).
    pub ranks: Option<Vec<f32>>,
    /// Work items processed by work kernels, all GPUs.
    pub work_items: u64,
    /// Edges visited.
    pub edges: u64,
    /// Remote work items created (pairs packed by SplitSend).
    pub messages: u64,
    /// Received items dropped because they improved nothing.
    pub dropped: u64,
    /// Soft-priority threshold raises (consensus rounds).
    pub priority_raises: u32,
    /// The soft-priority step the run used (given, or chosen by `auto_priority`).
    pub priority_delta: Option<u64>,
    /// Buffers that grew.
    pub growths: Vec<Growth>,
    /// Per-GPU work.
    pub per_gpu: Vec<GpuWork>,
    /// Traffic per router link.
    pub traffic: Vec<LinkTraffic>,
    /// The ring order used.
    pub ring: Vec<u32>,
    /// Time from the first work item to termination, in picoseconds.
    pub compute_time_ps: u64,
}

impl From<WorklistOutcome> for crate::runtime::Outcome {
    fn from(outcome: WorklistOutcome) -> Self {
        crate::runtime::Outcome {
            gum: None,
            compute_time_ps: outcome.compute_time_ps,
            work: crate::runtime::WorkReport {
                edges_visited: outcome.edges,
                work_items: outcome.work_items,
                messages: outcome.messages,
                bytes_sent: outcome.traffic.iter().map(|l| l.bytes).sum(),
                frontier_sizes: Vec::new(),
            },
            supersteps: 0,
            groute: Some(crate::runtime::GrouteReport {
                priority_raises: outcome.priority_raises,
                priority_delta: outcome.priority_delta,
                dropped: outcome.dropped,
                growths: outcome.growths,
                ring: outcome.ring,
                per_gpu: outcome.per_gpu,
                links: outcome.traffic,
            }),
            values: outcome.values,
            aux: outcome.ranks,
            atos: None,
        }
    }
}

/// Outgoing message buffers per device.
const SEND_BUFFERS: usize = 2;
/// Segment-tag bit of pass-through buffers.
const PASS_TAG: u64 = 1 << 40;

/// What a program token stands for.
enum Op {
    Worker {
        gpu: usize,
        send: BufferId,
        reserve: u64,
    },
    /// A fused launch with asynchronous sends (its remote items already left).
    AsyncWorker {
        gpu: usize,
        reserve: u64,
    },
    /// Copies of outbox `src -> dst` up to pair `upto` (the last of them carries the token).
    Route {
        src: usize,
        dst: usize,
        upto: u64,
    },
    Receiver {
        gpu: usize,
        received: Received,
        pass: BufferId,
        reserve: u64,
    },
    Promote {
        gpu: usize,
    },
    Grow {
        gpu: usize,
        old: Vec<BufferId>,
        growths: Vec<Growth>,
    },
    Final {
        gpu: usize,
        what: FinalRead,
    },
}

/// What a read after termination fetches.
#[derive(Clone, Copy)]
enum FinalRead {
    Values,
    Ranks,
    /// The control block: its worklist and deferred bag must be empty.
    Control,
}

struct Device {
    worker: StreamId,
    receiver: StreamId,
    slots: [BufferId; SLOTS],
    dummy: BufferId,
    /// Items the worklist and the deferred bag can each hold (they grow together).
    capacity: u64,
    /// Items in the worklist, per the reports received so far (signed: a fused worker may
    /// consume items whose arrival the host has not heard of yet; exact once every report
    /// is in).
    wl_count: i64,
    deferred_count: u64,
    deferred_min_prio: u64,
    /// Items kernels in flight may still push.
    reserved: u64,
    worker_busy: bool,
    receiving: u32,
    promoting: bool,
    growing: bool,
    /// Room (items beyond what is there) the pending growth must make: a promote's whole
    /// deferred bag, or a packet or worker launch that did not fit.
    grow_need: u64,
    held_packets: VecDeque<Received>,
    /// Outgoing message buffers of the worker (a fixed pool: when all are in flight the
    /// worker waits, which is the back-pressure a slow ring exerts on producers).
    free_sends: Vec<BufferId>,
    /// Pass-through buffers of the receiver (packet-sized, allocated on demand so that a
    /// receiver never blocks and the ring cannot deadlock).
    free_passes: Vec<BufferId>,
    /// Its side of the asynchronous send (`None`: sends at launch end).
    mailbox: Option<Mailbox>,
    work: GpuWork,
}

/// A GPU's side of the asynchronous send ([`SendMode::Async`]; layout in [`kernels::mail`]).
struct Mailbox {
    /// The mapped block (also `slots[Mail]`).
    mail: BufferId,
    /// Its outbox rings (the fused worker's Message) and inbox rings (its Pass).
    outboxes: BufferId,
    inboxes: BufferId,
    /// The stream of the copies out of its outboxes.
    stream: StreamId,
    /// Per destination: pairs written to the outbox (as far as the host has seen), copied
    /// (issued), and copied with the copy complete (free again).
    written: Vec<u64>,
    routed: Vec<u64>,
    freed: Vec<u64>,
    /// Per source: pairs delivered into the inbox (copy complete) and consumed (as far as
    /// the host has seen).
    delivered: Vec<u64>,
    consumed: Vec<u64>,
    /// Per destination: a route's copies are in flight (one at a time: what is published
    /// meanwhile goes with the next, as Groute keeps one segment per link in flight).
    in_flight: Vec<bool>,
    /// The worker lingered idle at the last poll of its block.
    idle: bool,
    /// The host asked the running worker to end (`mail::STOP`).
    stop_asked: bool,
}

/// Virtual time between two host polls of the mapped blocks while asynchronous workers
/// run (a host thread reading mapped memory over PCIe; Atos polls as often). On CUDA a
/// poll costs its real time.
const SEND_POLL_PS: u64 = 2_000_000;

/// Runs `app` on `graph` over the first `parts` devices of `backend`, vertex `v` owned by
/// GPU `owner[v]`. An application that reads weights needs the graph to have some.
pub fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    app: &dyn WorklistApp,
    options: &WorklistOptions,
) -> Result<WorklistOutcome, RuntimeError> {
    let n = graph.num_vertices();
    let options = &options.sized_for(graph.num_arcs(), parts, app.auto_priority_delta());
    check(backend, graph, owner, parts, app, options)?;
    let has_ranks = app.initial_ranks(0).is_some();
    let max_degree = (0..n).map(|v| graph.degree(v)).max().unwrap_or(0) as usize;
    let out_items = options.out_items.max(max_degree).max(1);
    let message_pairs = (2 * out_items).max(options.packet_items);
    let mut upload_tokens = Vec::new();
    let mut devices = Vec::with_capacity(parts as usize);
    for g in 0..parts {
        devices.push(upload(
            backend,
            graph,
            owner,
            g,
            app,
            options,
            out_items,
            message_pairs,
            &mut upload_tokens,
        )?);
    }
    // Asynchronous send: an outbox and an inbox ring per peer, each with room for two
    // whole Outs (a round packs only while a whole Out fits its outboxes).
    let ring_pairs = if options.send == SendMode::Async && parts > 1 { 2 * out_items } else { 0 };
    if ring_pairs > 0 {
        for (g, d) in devices.iter_mut().enumerate() {
            let dev = DeviceId(g as u32);
            let area = 2 * parts as usize * ring_pairs;
            let mail = backend.alloc_mapped(
                ElemType::U64,
                kernels::mail::LEN,
                &format!("groute gpu{g} mail"),
            )?;
            let outboxes =
                backend.alloc(dev, ElemType::U32, area, &format!("groute gpu{g} outboxes"))?;
            let inboxes =
                backend.alloc(dev, ElemType::U32, area, &format!("groute gpu{g} inboxes"))?;
            let stream = backend.create_stream(dev, StreamPriority::Normal)?;
            d.slots[Slot::Mail as usize] = mail;
            let zeros = vec![0u64; parts as usize];
            d.mailbox = Some(Mailbox {
                mail,
                outboxes,
                inboxes,
                stream,
                written: zeros.clone(),
                routed: zeros.clone(),
                freed: zeros.clone(),
                delivered: zeros.clone(),
                consumed: zeros,
                in_flight: vec![false; parts as usize],
                idle: false,
                stop_asked: false,
            });
        }
    }
    wait_all(backend, &upload_tokens)?;
    let ring: Vec<u32> = match options.ring {
        RingOrder::Index => (0..parts).collect(),
        RingOrder::Widest => {
            widest_ring(parts, |a, b| backend.path_bandwidth_bytes_per_s(DeviceId(a), DeviceId(b)))
        }
    };

    let mut ctx = Context::new(backend);
    let gpus: Vec<Endpoint> = (0..parts).map(Endpoint::gpu).collect();
    let inputs: Vec<Endpoint> = gpus.iter().copied().chain([Endpoint::Host]).collect();
    let router = ctx.router(
        inputs.clone(),
        gpus.clone(),
        LinkConfig {
            elem: ElemType::U32,
            packet_elems: 2 * options.packet_items,
            buffers: options.buffers,
        },
        Box::new(Policy::Ring { order: ring.iter().map(|&g| Endpoint::gpu(g)).collect() }),
    )?;

    let mut state = State {
        kernels: app.kernels(),
        scalars: app.tolerance_and_damping(),
        options: *options,
        out_items: out_items as u64,
        threshold: options.priority_delta.unwrap_or(u64::MAX),
        work_total: 0,
        ring_pairs: ring_pairs as u64,
        parts,
        routes_in_flight: 0,
        poll: None,
        async_traffic: BTreeMap::new(),
        ops: BTreeMap::new(),
        outcome: WorklistOutcome {
            values: Vec::new(),
            ranks: None,
            work_items: 0,
            edges: 0,
            messages: 0,
            dropped: 0,
            priority_raises: 0,
            priority_delta: options.priority_delta,
            growths: Vec::new(),
            per_gpu: Vec::new(),
            traffic: Vec::new(),
            ring: ring.clone(),
            compute_time_ps: 0,
        },
    };
    // The clock starts once the router's buffers exist (set-up, like the upload).
    let start_ps = ctx.backend.now_ps();
    // Initial work: a source is sent through the router from the host (section 4.5);
    // otherwise every owned vertex starts in its owner's worklist.
    match app.start() {
        Start::Source(source) => {
            state.work_total = 1;
            let data = SegmentData::Host(HostData::U32(vec![source, 0]));
            ctx.route(router, Endpoint::Host, Segment::new(data, u64::MAX))?;
        }
        Start::EveryOwnedVertex => {
            state.work_total = devices.iter().map(|d| d.wl_count.max(0)).sum();
        }
    }
    ctx.shutdown_input(router, Endpoint::Host)?;
    let mut shut_down = false;
    let mut finals = vec![(Vec::new(), Vec::new()); parts as usize];
    loop {
        if !shut_down {
            for g in 0..devices.len() {
                state.schedule(&mut ctx, &mut devices, g)?;
            }
            if state.consensus(&mut ctx, &mut devices)? {
                // It asked for growths first: the quiet devices start them now.
                for g in 0..devices.len() {
                    state.schedule(&mut ctx, &mut devices, g)?;
                }
            }
            if state.ring_pairs > 0 && state.poll.is_none() && devices.iter().any(|d| d.worker_busy)
            {
                // Asynchronous workers run: look at their mail again after a poll's time.
                let t = ctx.token();
                ctx.backend.host_work(SEND_POLL_PS, t)?;
                state.poll = Some(t);
            }
            if state.work_total == 0 && (state.ring_pairs == 0 || state.quiet(&devices)) {
                shut_down = true;
                state.outcome.compute_time_ps = ctx.backend.now_ps() - start_ps;
                for &g in &gpus {
                    ctx.shutdown_input(router, g)?;
                }
                for (g, d) in devices.iter().enumerate() {
                    let t = ctx.token();
                    ctx.backend.read_to_host(
                        d.worker,
                        whole(ctx.backend, d.slots[Slot::Values as usize])?,
                        t,
                    )?;
                    state.ops.insert(t, Op::Final { gpu: g, what: FinalRead::Values });
                    if has_ranks {
                        let t = ctx.token();
                        ctx.backend.read_to_host(
                            d.worker,
                            whole(ctx.backend, d.slots[Slot::Rank as usize])?,
                            t,
                        )?;
                        state.ops.insert(t, Op::Final { gpu: g, what: FinalRead::Ranks });
                    }
                    let t = ctx.token();
                    ctx.backend.read_to_host(
                        d.worker,
                        BufferSlice::new(d.slots[Slot::Ctl as usize], 0, ctl::LEN),
                        t,
                    )?;
                    state.ops.insert(t, Op::Final { gpu: g, what: FinalRead::Control });
                }
            }
        }
        let Some(event) = ctx.next_event()? else { break };
        match event {
            Event::Received(r) => {
                let g = ctx.link_destination(r.link).device().map_or(0, |d| d.0 as usize);
                if shut_down {
                    return Err(BackendError::Usage(format!(
                        "gpu{g} received a packet after termination was detected"
                    ))
                    .into());
                }
                devices[g].held_packets.push_back(r);
            }
            Event::Sent { source, tag } => {
                if let Some(dev) = source.device() {
                    let d = &mut devices[dev.0 as usize];
                    let buffer = BufferId(tag as u32);
                    if tag & PASS_TAG != 0 {
                        d.free_passes.push(buffer)
                    } else {
                        d.free_sends.push(buffer)
                    }
                }
            }
            Event::Shutdown { .. } => {}
            Event::Completion(c) if Some(c.token) == state.poll => {
                state.poll = None;
                if !shut_down {
                    state.poll_mail(&mut ctx, &mut devices)?;
                }
            }
            Event::Completion(c) => {
                let op = state.ops.remove(&c.token).ok_or_else(|| {
                    BackendError::Usage(format!("unexpected completion {:?}", c.token))
                })?;
                match (op, c.kind) {
                    (Op::Final { gpu, what }, CompletionKind::HostRead(data)) => match (what, data)
                    {
                        (FinalRead::Values, HostData::U32(v)) => finals[gpu].0 = v,
                        (FinalRead::Values, HostData::F64(v)) => {
                            finals[gpu].0 = v.iter().map(|&x| (x as f32).to_bits()).collect()
                        }
                        (FinalRead::Ranks, HostData::F64(v)) => {
                            finals[gpu].1 = v.iter().map(|&x| x as f32).collect()
                        }
                        (FinalRead::Control, HostData::U64(block)) => {
                            check_drained(gpu, &block)?;
                        }
                        _ => {
                            return Err(
                                BackendError::Usage("final read of the wrong type".into()).into()
                            );
                        }
                    },
                    (op, CompletionKind::HostRead(HostData::U64(block))) => {
                        state.complete(&mut ctx, &mut devices, router, op, &block)?;
                    }
                    (Op::Route { src, dst, upto }, CompletionKind::Copy { .. }) => {
                        state.routed(&mut ctx, &mut devices, src, dst, upto)?;
                    }
                    (_, other) => {
                        return Err(BackendError::Usage(format!(
                            "a worklist control read completed as {other:?}"
                        ))
                        .into());
                    }
                }
            }
        }
    }
    if !shut_down {
        return Err(BackendError::Deadlock(format!(
            "the distributed worklist stopped with {} work items outstanding",
            state.work_total
        ))
        .into());
    }
    state.outcome.traffic = ctx.traffic();
    state.outcome.traffic.extend(std::mem::take(&mut state.async_traffic).into_values());
    state.outcome.per_gpu = devices.iter().map(|d| d.work.clone()).collect();
    // Free every device buffer the run allocated (the context frees its links' buffers).
    for d in &devices {
        let mut buffers: Vec<BufferId> = d.slots.to_vec();
        buffers.push(d.dummy);
        buffers.extend(&d.free_sends);
        buffers.extend(&d.free_passes);
        if let Some(m) = &d.mailbox {
            buffers.extend([m.outboxes, m.inboxes]);
        }
        buffers.sort();
        buffers.dedup();
        for b in buffers {
            ctx.backend.free(b)?;
        }
    }
    let mut values = vec![0u32; n as usize];
    let mut ranks = vec![0f32; if has_ranks { n as usize } else { 0 }];
    for (v, &g) in owner.iter().enumerate() {
        let g = g as usize;
        values[v] = finals[g].0[v];
        if has_ranks {
            ranks[v] = finals[g].1[v];
        }
    }
    state.outcome.values = values;
    state.outcome.ranks = has_ranks.then_some(ranks);
    Ok(state.outcome)
}

/// After termination a device's worklist and deferred bag must be empty: the host's count
/// reached zero, so anything left there is work the count lost (a runtime bug), which
/// would otherwise show only as a wrong result.
fn check_drained(gpu: usize, block: &[u64]) -> Result<(), RuntimeError> {
    let (start, end) = (block[ctl::START], block[ctl::END]);
    let (alloc, deferred) = (block[ctl::END_ALLOC], block[ctl::DEFERRED]);
    if end != start || alloc != end || deferred != 0 {
        return Err(BackendError::Usage(format!(
            "runtime bug: termination was detected with work left on gpu{gpu} ({} worklist \
             items, {} reserved and unpublished, {deferred} deferred): the work count lost them",
            end.wrapping_sub(start),
            alloc.wrapping_sub(end)
        ))
        .into());
    }
    Ok(())
}

fn whole<B: Backend + ?Sized>(backend: &B, buffer: BufferId) -> Result<BufferSlice, BackendError> {
    let (_, len) = backend.buffer_shape(buffer)?;
    Ok(BufferSlice::new(buffer, 0, len))
}

fn check<B: Backend + ?Sized>(
    backend: &B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    app: &dyn WorklistApp,
    options: &WorklistOptions,
) -> Result<(), RuntimeError> {
    let n = graph.num_vertices();
    if parts == 0 || parts > backend.device_count() {
        return Err(RuntimeError::Options(format!(
            "the distributed worklist needs 1 to {} GPUs, got {parts}",
            backend.device_count()
        )));
    }
    if owner.len() != n as usize || owner.iter().any(|&o| o >= parts) {
        return Err(RuntimeError::Options(format!(
            "the partition must give each of the {n} vertices an owner below {parts}"
        )));
    }
    if options.packet_items == 0 || options.buffers == 0 || options.batch_items == 0 {
        return Err(RuntimeError::Options(format!(
            "--packet-size ({}), --buffers ({}) and the batch size ({}) must be at least 1",
            options.packet_items, options.buffers, options.batch_items
        )));
    }
    if options.send == SendMode::Async && !options.fused {
        return Err(RuntimeError::Options(
            "--groute-send async sends while the fused worker runs: add --fused".into(),
        ));
    }
    if options.send == SendMode::Async && parts as usize > kernels::MAX_PARTS {
        return Err(RuntimeError::Options(format!(
            "--groute-send async addresses at most {} GPUs, got {parts}; use --groute-send end",
            kernels::MAX_PARTS
        )));
    }
    if options.priority_delta == Some(0) {
        return Err(RuntimeError::Options("--priority-delta must be at least 1 (or `off`)".into()));
    }
    if let Start::Source(source) = app.start()
        && source >= n
    {
        return Err(RuntimeError::Options(format!("source vertex {source} is not below {n}")));
    }
    if app.uses_weights() && graph.weights().is_none() {
        return Err(RuntimeError::Options(format!(
            "{} needs edge weights and the graph has none",
            app.label()
        )));
    }
    if !app.has_priority() && options.priority_delta.is_some() {
        return Err(RuntimeError::Options(format!(
            "{} has no priority: leave --priority-delta off",
            app.label()
        )));
    }
    Ok(())
}

/// Allocates and uploads one device's share.
#[allow(clippy::too_many_arguments)]
fn upload<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    g: u32,
    app: &dyn WorklistApp,
    options: &WorklistOptions,
    out_items: usize,
    message_pairs: usize,
    tokens: &mut Vec<Token>,
) -> Result<Device, RuntimeError> {
    let n = graph.num_vertices() as usize;
    let dev = DeviceId(g);
    let worker = backend.create_stream(dev, StreamPriority::Normal)?;
    let receiver = backend.create_stream(dev, StreamPriority::High)?;
    // Offsets over all vertices, arcs of owned vertices only.
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::new();
    let mut weights = Vec::new();
    // Weights as 32-bit words (integers, or f32 bits): the application's kernels know
    // which they read; the worklist only uploads them.
    let words = graph.weights().filter(|_| app.uses_weights()).map(EdgeWeights::words);
    let int_weights = words.as_deref();
    offsets.push(0u64);
    let mut owned = Vec::new();
    for (v, &home) in owner.iter().enumerate() {
        if home == g {
            owned.push(v as u32);
            let range = graph.arc_range(v as u32);
            targets.extend_from_slice(&graph.targets()[range.clone()]);
            if let Some(w) = int_weights {
                weights.extend_from_slice(&w[range]);
            }
        }
        offsets.push(targets.len() as u64);
    }
    // Work that starts everywhere queues every owned vertex; a source starts small.
    let every = app.start() == Start::EveryOwnedVertex;
    let initial = if every { owned.len() } else { 0 };
    let wl_capacity = options.initial_worklist_items.max(out_items + initial) as u64;
    let label = |what: &str| format!("groute gpu{g} {what}");
    let alloc = |b: &mut B, elem, len: usize, what: &str| b.alloc(dev, elem, len, &label(what));
    let values = app.initial_values(owner, g);
    let rank = app.initial_ranks(n);
    let wl_init = if every { owned.clone() } else { Vec::new() };
    let end = ctl::ORIGIN + wl_init.len() as u64;
    let dummy = alloc(backend, ElemType::U32, 0, "unused")?;
    let slots = [
        alloc(backend, ElemType::U64, n + 1, "offsets")?,
        alloc(backend, ElemType::U32, targets.len(), "targets")?,
        alloc(backend, ElemType::U32, weights.len(), "weights")?,
        alloc(backend, ElemType::U32, n, "owner")?,
        alloc(backend, values.elem(), n, "values")?,
        match &rank {
            Some(r) => alloc(backend, r.elem(), n, "ranks")?,
            None => dummy,
        },
        alloc(backend, ElemType::U32, wl_capacity as usize, "worklist")?,
        alloc(backend, ElemType::U64, ctl::LEN, "control")?,
        alloc(backend, ElemType::U32, out_items, "work output")?,
        alloc(backend, ElemType::U32, wl_capacity as usize, "deferred")?,
        dummy,
        dummy,
        dummy,
    ];
    let mut control = vec![0u64; ctl::LEN];
    control[ctl::START] = ctl::ORIGIN;
    control[ctl::END] = end;
    control[ctl::END_ALLOC] = end;
    control[ctl::END_WRITTEN] = end;
    let mut wl = vec![0u32; wl_capacity as usize];
    for (i, &v) in wl_init.iter().enumerate() {
        wl[((ctl::ORIGIN + i as u64) % wl_capacity) as usize] = v;
    }
    let mut writes = vec![
        (Slot::Offsets, HostData::U64(offsets)),
        (Slot::Targets, HostData::U32(targets)),
        (Slot::Weights, HostData::U32(weights)),
        (Slot::Owner, HostData::U32(owner.to_vec())),
        (Slot::Values, values),
        (Slot::Ctl, HostData::U64(control)),
        (Slot::Worklist, HostData::U32(wl)),
    ];
    if let Some(r) = rank {
        writes.push((Slot::Rank, r));
    }
    for (slot, data) in writes {
        if data.is_empty() {
            continue;
        }
        let t = Token(u64::from(g) << 32 | tokens.len() as u64);
        backend.write_from_host(worker, slots[slot as usize], 0, data, Some(t))?;
        tokens.push(t);
    }
    let mut free_sends = Vec::new();
    for i in 0..SEND_BUFFERS {
        let what = format!("send buffer {i}");
        free_sends.push(backend.alloc(dev, ElemType::U32, 2 * message_pairs, &label(&what))?);
    }
    Ok(Device {
        worker,
        receiver,
        slots,
        dummy,
        capacity: wl_capacity,
        wl_count: wl_init.len() as i64,
        deferred_count: 0,
        deferred_min_prio: u64::MAX,
        reserved: 0,
        worker_busy: false,
        receiving: 0,
        promoting: false,
        growing: false,
        grow_need: 0,
        held_packets: VecDeque::new(),
        free_sends,
        free_passes: Vec::new(),
        mailbox: None,
        work: GpuWork::default(),
    })
}

/// The host side of the run: work counting, consensus, and the agents' scheduling.
struct State {
    kernels: WorklistKernels,
    /// The application's `epsilon` and `damping` scalars.
    scalars: (f64, f64),
    options: WorklistOptions,
    out_items: u64,
    threshold: u64,
    /// Work items in the system (worklists, deferred bags, messages in flight). Signed:
    /// with asynchronous sends a receiver may report pairs before their sender's launch
    /// reports them; the count is exact whenever no launch is in flight.
    work_total: i64,
    /// Pairs per outbox and inbox ring; 0: sends at launch end.
    ring_pairs: u64,
    /// GPUs of the run.
    parts: u32,
    /// Route copies not yet complete.
    routes_in_flight: u32,
    /// The token of the host's pending poll of the mapped blocks.
    poll: Option<Token>,
    /// Asynchronous traffic per (source, destination).
    async_traffic: BTreeMap<(usize, usize), LinkTraffic>,
    ops: BTreeMap<Token, Op>,
    outcome: WorklistOutcome,
}

impl State {
    fn scalars(&self, gpu: usize, count: u64, fused: Option<(u32, u64)>) -> Vec<Scalar> {
        let (max_rounds, push_budget) = fused.unwrap_or((1, self.out_items));
        let (epsilon, damping) = self.scalars;
        vec![
            Scalar::U32(gpu as u32),
            Scalar::U64(count),
            Scalar::U64(self.threshold),
            Scalar::F64(epsilon),
            Scalar::F64(damping),
            Scalar::U32(max_rounds),
            Scalar::U64(self.out_items),
            Scalar::U64(push_budget),
            Scalar::U64(if fused.is_some() { self.ring_pairs } else { 0 }),
            Scalar::U32(self.parts),
        ]
    }

    /// Nothing in flight anywhere (asynchronous sends: the work count is exact then).
    fn quiet(&self, devices: &[Device]) -> bool {
        self.routes_in_flight == 0
            && devices
                .iter()
                .all(|d| !d.worker_busy && d.receiving == 0 && !d.promoting && !d.growing)
    }

    /// Whether `d`'s inboxes hold delivered pairs its worker has not taken.
    fn inbox_pending(d: &Device) -> bool {
        d.mailbox.as_ref().is_some_and(|m| m.delivered.iter().zip(&m.consumed).any(|(a, b)| a > b))
    }

    /// Whether every outbox of `d` has room for a whole Out (a round packs only then).
    fn outboxes_have_room(&self, d: &Device) -> bool {
        d.mailbox.as_ref().is_none_or(|m| {
            m.written.iter().zip(&m.freed).all(|(w, f)| w - f + self.out_items <= self.ring_pairs)
        })
    }

    /// Reads the mapped blocks of the GPUs whose asynchronous workers run, and routes what
    /// they published.
    fn poll_mail<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
    ) -> Result<(), RuntimeError> {
        for d in devices.iter_mut().filter(|d| d.worker_busy) {
            let Some(m) = d.mailbox.as_mut() else { continue };
            let HostData::U64(block) = ctx.backend.read_mapped(m.mail)? else {
                return Err(BackendError::Usage("the mail block is not u64".into()).into());
            };
            for p in 0..self.parts as usize {
                m.written[p] = m.written[p].max(block[kernels::mail::PUB + p]);
                m.consumed[p] = m.consumed[p].max(block[kernels::mail::CONS + p]);
            }
            m.idle = block[kernels::mail::IDLE] != 0;
        }
        self.route_all(ctx, devices)?;
        self.stop_lingering(ctx, devices)
    }

    /// Asks lingering workers to end their launches once nothing can reach them: every
    /// running worker lingers idle, has taken everything delivered to it and had
    /// everything it published copied out, and no copy is in flight. (A worker waiting on
    /// a device whose receivers hold packets is asked at once: on the simulator they need
    /// its SMs.) The host launches a worker again when a delivery or work comes.
    fn stop_lingering<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
    ) -> Result<(), RuntimeError> {
        let settled = |d: &Device| {
            !d.worker_busy
                || d.mailbox
                    .as_ref()
                    .is_none_or(|m| m.idle && m.consumed == m.delivered && m.written == m.routed)
        };
        let all = self.routes_in_flight == 0 && devices.iter().all(settled);
        for d in devices.iter_mut() {
            let blocked = !d.held_packets.is_empty() || d.receiving > 0;
            let Some(m) = d.mailbox.as_mut() else { continue };
            if d.worker_busy && !m.stop_asked && (all || blocked) {
                ctx.backend.write_mapped(m.mail, kernels::mail::STOP, HostData::U64(vec![1]))?;
                m.stop_asked = true;
            }
        }
        Ok(())
    }

    /// Copies every published outbox segment that its destination's inbox has room for
    /// (same positions modulo the ring; two copies where the segment wraps).
    fn route_all<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
    ) -> Result<(), RuntimeError> {
        let ring = self.ring_pairs;
        if ring == 0 {
            return Ok(());
        }
        for src in 0..devices.len() {
            for dst in (0..devices.len()).filter(|&d| d != src) {
                let (Some(from_box), Some(to_box)) =
                    (devices[src].mailbox.as_ref(), devices[dst].mailbox.as_ref())
                else {
                    continue;
                };
                let from = from_box.routed[dst];
                let upto = from_box.written[dst].min(to_box.consumed[src] + ring);
                if upto <= from || from_box.in_flight[dst] {
                    continue;
                }
                let (outboxes, inboxes, stream) =
                    (from_box.outboxes, to_box.inboxes, from_box.stream);
                let t = ctx.token();
                let mut p = from;
                while p < upto {
                    let at = p % ring;
                    let n = (upto - p).min(ring - at);
                    let out_at = 2 * (dst as u64 * ring + at) as usize;
                    let in_at = 2 * (src as u64 * ring + at) as usize;
                    let last = p + n == upto;
                    ctx.backend.copy(
                        stream,
                        BufferSlice::new(outboxes, out_at, 2 * n as usize),
                        BufferSlice::new(inboxes, in_at, 2 * n as usize),
                        last.then_some(t),
                    )?;
                    let link =
                        self.async_traffic.entry((src, dst)).or_insert_with(|| LinkTraffic {
                            src: format!("gpu{src}"),
                            dst: format!("gpu{dst}"),
                            packets: 0,
                            elements: 0,
                            bytes: 0,
                        });
                    link.packets += 1;
                    link.elements += 2 * n;
                    link.bytes += 8 * n;
                    p += n;
                }
                self.ops.insert(t, Op::Route { src, dst, upto });
                self.routes_in_flight += 1;
                if let Some(m) = devices[src].mailbox.as_mut() {
                    m.routed[dst] = upto;
                    m.in_flight[dst] = true;
                }
            }
        }
        Ok(())
    }

    /// A route's copies are complete: the destination's worker may take the pairs, the
    /// source's outbox slots are free again.
    fn routed<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
        src: usize,
        dst: usize,
        upto: u64,
    ) -> Result<(), RuntimeError> {
        self.routes_in_flight -= 1;
        if let Some(m) = devices[src].mailbox.as_mut() {
            m.in_flight[dst] = false;
            m.freed[dst] = m.freed[dst].max(upto);
            let data = HostData::U64(vec![m.freed[dst]]);
            ctx.backend.write_mapped(m.mail, kernels::mail::FREED + dst, data)?;
        }
        if let Some(m) = devices[dst].mailbox.as_mut() {
            m.delivered[src] = m.delivered[src].max(upto);
            let data = HostData::U64(vec![m.delivered[src]]);
            ctx.backend.write_mapped(m.mail, kernels::mail::DELIV + src, data)?;
        }
        self.route_all(ctx, devices)
    }

    /// Launches one of the application's kernels on `stream`; its work descriptor is
    /// the `count` scalar.
    fn launch<B: Backend + ?Sized>(
        &self,
        ctx: &mut Context<'_, B>,
        d: &mut Device,
        stream: StreamId,
        kernel: &'static str,
        buffers: Vec<BufferId>,
        scalars: Vec<Scalar>,
    ) -> Result<(), RuntimeError> {
        d.work.kernels += 1;
        let work_items = match scalars.get(1) {
            Some(Scalar::U64(count)) => *count,
            _ => 0,
        };
        ctx.backend.launch(stream, Launch { kernel, buffers, scalars, work_items }, None)?;
        Ok(())
    }

    fn read_ctl<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        d: &Device,
        stream: StreamId,
        op: Op,
    ) -> Result<(), RuntimeError> {
        let t = ctx.token();
        ctx.backend.read_to_host(
            stream,
            BufferSlice::new(d.slots[Slot::Ctl as usize], 0, ctl::LEN),
            t,
        )?;
        self.ops.insert(t, op);
        Ok(())
    }

    /// Whether `d` has room for `more` pushes beyond what is there and reserved.
    fn fits(d: &Device, more: u64) -> bool {
        let fullest = (d.wl_count.max(0) as u64).max(d.deferred_count);
        fullest + d.reserved + more <= d.capacity
    }

    /// Starts whatever device `g` can do now: a held packet, the worker, a growth.
    fn schedule<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
        g: usize,
    ) -> Result<(), RuntimeError> {
        let d = &mut devices[g];
        if d.growing {
            if !d.worker_busy && d.receiving == 0 && !d.promoting {
                self.grow(ctx, d, g)?;
                if !d.growing {
                    return self.schedule(ctx, devices, g); // no growth was needed
                }
            }
            return Ok(());
        }
        // Receiver agent: every held packet, as long as there is room, and never while
        // the device promotes: promote owns the worklist's free slots (the CUDA kernel
        // compacts through them), and on a GPU a receiver would run beside it. Another
        // device may finish its own promote and send before this one is done.
        while let Some(r) = d.held_packets.front().filter(|_| !d.promoting) {
            let pairs = (r.len / 2) as u64;
            if !Self::fits(d, pairs) {
                Self::ask_growth(d, pairs);
                return self.schedule(ctx, devices, g);
            }
            let Some(r) = d.held_packets.pop_front() else { break };
            let ReceivedData::Device(slice) = r.data.clone() else {
                return Err(
                    BackendError::Usage("a worklist packet landed in host memory".into()).into()
                );
            };
            let pass = match d.free_passes.pop() {
                Some(b) => b,
                None => ctx.backend.alloc(
                    DeviceId(g as u32),
                    ElemType::U32,
                    2 * self.options.packet_items,
                    &format!("groute gpu{g} pass-through buffer"),
                )?,
            };
            let mut buffers = d.slots.to_vec();
            buffers[Slot::Message as usize] = slice.buffer;
            buffers[Slot::Pass as usize] = pass;
            let scalars = self.scalars(g, pairs, None);
            let stream = d.receiver;
            self.launch(ctx, d, stream, self.kernels.split_receive, buffers, scalars)?;
            d.reserved += pairs;
            d.receiving += 1;
            self.read_ctl(
                ctx,
                d,
                stream,
                Op::Receiver { gpu: g, received: r, pass, reserve: pairs },
            )?;
        }
        // Worker agent.
        if d.mailbox.is_some() {
            return self.schedule_async(ctx, d, g);
        }
        if d.worker_busy || d.promoting || d.wl_count <= 0 || d.free_sends.is_empty() {
            return Ok(());
        }
        // A fused launch may push up to half the free room (at least one Out; the other
        // half stays for the receiver); it stops its rounds before it could exceed that.
        let pushes = if self.options.fused {
            let fullest = (d.wl_count.max(0) as u64).max(d.deferred_count);
            (d.capacity.saturating_sub(fullest + d.reserved) / 2).max(self.out_items)
        } else {
            self.out_items
        };
        if !Self::fits(d, pushes) {
            Self::ask_growth(d, pushes);
            return self.schedule(ctx, devices, g);
        }
        let Some(send) = d.free_sends.pop() else { return Ok(()) };
        let mut buffers = d.slots.to_vec();
        buffers[Slot::Message as usize] = send;
        let batch = (d.wl_count as u64).min(self.options.batch_items);
        let stream = d.worker;
        if self.options.fused {
            // Each round takes up to a whole batch: the worklist grows during the launch
            // (a BFS from one source would otherwise take one item per round).
            let batch = self.options.batch_items;
            let scalars = self.scalars(g, batch, Some((self.options.fused_max_rounds, pushes)));
            self.launch(ctx, d, stream, self.kernels.fused, buffers, scalars)?;
        } else {
            let scalars = self.scalars(g, batch, None);
            self.launch(ctx, d, stream, self.kernels.work, buffers.clone(), scalars.clone())?;
            self.launch(ctx, d, stream, self.kernels.split_send, buffers, scalars)?;
        }
        d.reserved += pushes;
        d.worker_busy = true;
        self.read_ctl(ctx, d, stream, Op::Worker { gpu: g, send, reserve: pushes })
    }

    /// The asynchronous worker agent of `d`: a fused launch when its inboxes hold
    /// deliveries, or its worklist items and its outboxes room for a round.
    fn schedule_async<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        d: &mut Device,
        g: usize,
    ) -> Result<(), RuntimeError> {
        if d.worker_busy
            || d.promoting
            || !(Self::inbox_pending(d) || (d.wl_count > 0 && self.outboxes_have_room(d)))
        {
            return Ok(());
        }
        let fullest = (d.wl_count.max(0) as u64).max(d.deferred_count);
        let pushes = (d.capacity.saturating_sub(fullest + d.reserved) / 2).max(self.out_items);
        if !Self::fits(d, pushes) {
            Self::ask_growth(d, pushes);
            if !d.worker_busy && d.receiving == 0 && !d.promoting {
                self.grow(ctx, d, g)?;
                if !d.growing {
                    return self.schedule_async(ctx, d, g);
                }
            }
            return Ok(());
        }
        let Some(m) = d.mailbox.as_mut() else { return Ok(()) };
        // Neither idle nor asked to stop (the last launch has ended: nobody writes these).
        ctx.backend.write_mapped(m.mail, kernels::mail::IDLE, HostData::U64(vec![0, 0]))?;
        m.idle = false;
        m.stop_asked = false;
        let mut buffers = d.slots.to_vec();
        buffers[Slot::Message as usize] = m.outboxes;
        buffers[Slot::Pass as usize] = m.inboxes;
        let scalars = self.scalars(
            g,
            self.options.batch_items,
            Some((self.options.fused_max_rounds, pushes)),
        );
        d.work.kernels += 1;
        // Persistent: the simulator runs it a round per step, so that a round sees the
        // deliveries that landed before it (CUDA launches the fused worker cooperatively
        // by name either way).
        let config = LaunchConfig { persistent: true, ..LaunchConfig::default() };
        let launch = Launch {
            kernel: self.kernels.fused,
            buffers,
            scalars,
            work_items: self.options.batch_items,
        };
        ctx.backend.launch_with(d.worker, launch, config, None)?;
        d.reserved += pushes;
        d.worker_busy = true;
        let stream = d.worker;
        self.read_ctl(ctx, d, stream, Op::AsyncWorker { gpu: g, reserve: pushes })
    }

    /// Asks for a growth of `d`'s buffers that makes room for `more` items beyond what is
    /// there; it happens once the device is quiet.
    fn ask_growth(d: &mut Device, more: u64) {
        d.growing = true;
        d.grow_need = d.grow_need.max(more);
    }

    /// Doubles (or more) the worklist and deferred bag of a quiet device, until they have
    /// room for what the growth was asked for, the held packets and two work outputs.
    fn grow<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        d: &mut Device,
        g: usize,
    ) -> Result<(), RuntimeError> {
        let held: u64 = d.held_packets.iter().map(|r| r.len as u64 / 2).sum();
        let more = (held + 2 * self.out_items).max(d.grow_need);
        d.grow_need = 0;
        if Self::fits(d, more) {
            // What looked full was reserved by kernels that have finished: no growth.
            d.growing = false;
            return Ok(());
        }
        let need = (d.wl_count.max(0) as u64).max(d.deferred_count) + more;
        let mut new_cap = 2 * d.capacity.max(1);
        while new_cap < 2 * need {
            new_cap *= 2;
        }
        let dev = DeviceId(g as u32);
        let old_wl = d.slots[Slot::Worklist as usize];
        let old_def = d.slots[Slot::Deferred as usize];
        let new_wl = ctx.backend.alloc(
            dev,
            ElemType::U32,
            new_cap as usize,
            &format!("groute gpu{g} worklist"),
        )?;
        let new_def = ctx.backend.alloc(
            dev,
            ElemType::U32,
            new_cap as usize,
            &format!("groute gpu{g} deferred"),
        )?;
        ctx.backend.launch(
            d.worker,
            Launch {
                kernel: "groute_wl_grow",
                buffers: vec![old_wl, d.slots[Slot::Ctl as usize], new_wl],
                scalars: Vec::new(),
                work_items: d.wl_count.max(0) as u64,
            },
            None,
        )?;
        if d.deferred_count > 0 {
            let len = d.deferred_count as usize;
            ctx.backend.copy(
                d.worker,
                BufferSlice::new(old_def, 0, len),
                BufferSlice::new(new_def, 0, len),
                None,
            )?;
        }
        let growths = vec![Growth {
            gpu: g as u32,
            buffer: "worklist and deferred bag",
            from_items: d.capacity,
            to_items: new_cap,
        }];
        d.slots[Slot::Worklist as usize] = new_wl;
        d.slots[Slot::Deferred as usize] = new_def;
        d.capacity = new_cap;
        d.worker_busy = true; // until the growth completes
        let stream = d.worker;
        self.read_ctl(ctx, d, stream, Op::Grow { gpu: g, old: vec![old_wl, old_def], growths })
    }

    /// Soft-priority consensus: when only deferred work remains anywhere, raise the
    /// threshold and promote. Returns whether it asked for growths instead (a device whose
    /// worklist could not take its deferred bag).
    fn consensus<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
    ) -> Result<bool, RuntimeError> {
        let Some(delta) = self.options.priority_delta else { return Ok(false) };
        let deferred: u64 = devices.iter().map(|d| d.deferred_count).sum();
        if deferred == 0
            || self.work_total != deferred as i64
            || self.routes_in_flight > 0
            || devices.iter().any(|d| d.promoting || d.growing || d.worker_busy || d.receiving > 0)
        {
            return Ok(false);
        }
        // Every device promotes at once: one whose worklist cannot take its whole deferred
        // bag grows first, and the threshold rises once all of them can.
        let mut short = false;
        for d in devices.iter_mut().filter(|d| !Self::fits(d, d.deferred_count)) {
            Self::ask_growth(d, d.deferred_count);
            short = true;
        }
        if short {
            return Ok(true);
        }
        let lowest = devices.iter().map(|d| d.deferred_min_prio).min().unwrap_or(u64::MAX);
        self.threshold = lowest.saturating_add(delta);
        self.outcome.priority_raises += 1;
        for (g, d) in devices.iter_mut().enumerate() {
            if d.deferred_count == 0 {
                continue;
            }
            let mut buffers = d.slots.to_vec();
            buffers[Slot::Message as usize] = d.dummy;
            let scalars = self.scalars(g, d.deferred_count, None);
            let stream = d.worker;
            self.launch(ctx, d, stream, self.kernels.promote, buffers, scalars)?;
            d.promoting = true;
            self.read_ctl(ctx, d, stream, Op::Promote { gpu: g })?;
        }
        Ok(false)
    }

    /// Books a worker launch's report (`block`) on its device `d` and the run: items taken,
    /// deferred, consumed and sent, the `received` pairs it took from its inbox (0 for a
    /// worker whose messages travel through the router), the `reserve` it held. Returns
    /// the pairs it sent.
    fn account_worker(
        &mut self,
        d: &mut Device,
        block: &[u64],
        reserve: u64,
        received: u64,
    ) -> u64 {
        let consumed = block[ctl::W_CONSUMED];
        let (taken, deferred, sent) =
            (block[ctl::W_TAKEN], block[ctl::W_DEFERRED], block[ctl::W_SENT]);
        d.wl_count += taken as i64 - consumed as i64;
        d.deferred_count += deferred;
        d.deferred_min_prio = d.deferred_min_prio.min(block[ctl::W_MIN_PRIO]);
        d.reserved -= reserve;
        d.worker_busy = false;
        d.work.work_items += consumed;
        d.work.sent_pairs += sent;
        d.work.received_pairs += received;
        self.work_total += (taken + deferred + sent) as i64 - (consumed + received) as i64;
        self.outcome.work_items += consumed;
        self.outcome.edges += block[ctl::W_EDGES];
        self.outcome.messages += sent;
        sent
    }

    /// Applies a kernel chain's report.
    fn complete<B: Backend + ?Sized>(
        &mut self,
        ctx: &mut Context<'_, B>,
        devices: &mut [Device],
        router: super::RouterId,
        op: Op,
        block: &[u64],
    ) -> Result<(), RuntimeError> {
        match op {
            Op::Worker { gpu, send, reserve } => {
                let d = &mut devices[gpu];
                let sent = self.account_worker(d, block, reserve, 0);
                if sent > 0 {
                    let data = SegmentData::Device(BufferSlice::new(send, 0, 2 * sent as usize));
                    ctx.route(
                        router,
                        Endpoint::gpu(gpu as u32),
                        Segment::new(data, u64::from(send.0)),
                    )?;
                } else {
                    d.free_sends.push(send);
                }
            }
            Op::AsyncWorker { gpu, reserve } => {
                let d = &mut devices[gpu];
                self.account_worker(d, block, reserve, block[ctl::W_RECEIVED]);
                self.outcome.dropped += block[ctl::W_DROPPED];
                if let Some(m) = d.mailbox.as_mut() {
                    for p in 0..self.parts as usize {
                        m.written[p] = m.written[p].max(block[ctl::OUT_W + p]);
                        m.consumed[p] = m.consumed[p].max(block[ctl::CONS + p]);
                    }
                }
                self.route_all(ctx, devices)?;
            }
            Op::Route { .. } => {
                return Err(BackendError::Usage("a route completed as a host read".into()).into());
            }
            Op::Receiver { gpu, received, pass, reserve } => {
                let d = &mut devices[gpu];
                let processed = block[ctl::R_PROCESSED];
                let (taken, deferred, passed) =
                    (block[ctl::R_TAKEN], block[ctl::R_DEFERRED], block[ctl::R_PASSED]);
                d.wl_count += taken as i64;
                d.deferred_count += deferred;
                d.deferred_min_prio = d.deferred_min_prio.min(block[ctl::R_MIN_PRIO]);
                d.reserved -= reserve;
                d.receiving -= 1;
                d.work.received_pairs += processed;
                d.work.passed_pairs += passed;
                self.work_total += (taken + deferred + passed) as i64 - processed as i64;
                self.outcome.dropped += block[ctl::R_DROPPED];
                ctx.release(&received)?;
                if passed > 0 {
                    let data = SegmentData::Device(BufferSlice::new(pass, 0, 2 * passed as usize));
                    ctx.route(
                        router,
                        Endpoint::gpu(gpu as u32),
                        Segment::new(data, u64::from(pass.0) | PASS_TAG),
                    )?;
                } else {
                    d.free_passes.push(pass);
                }
            }
            Op::Promote { gpu } => {
                let d = &mut devices[gpu];
                d.wl_count += block[ctl::P_PROMOTED] as i64;
                d.deferred_count = block[ctl::P_REMAINING];
                d.deferred_min_prio = block[ctl::P_MIN_PRIO];
                d.promoting = false;
            }
            Op::Grow { gpu, old, growths } => {
                let d = &mut devices[gpu];
                for b in old {
                    ctx.backend.free(b)?;
                }
                d.growing = false;
                d.worker_busy = false;
                self.outcome.growths.extend(growths);
            }
            Op::Final { .. } => {}
        }
        Ok(())
    }
}
