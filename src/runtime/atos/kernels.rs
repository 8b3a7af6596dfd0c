//! Atos's kernels (seeds 003 and 004) as the simulator runs them, their buffer layout and
//! the operator trait algorithms implement.
//!
//! # Buffers
//! Every Atos kernel (the worker and the aggregator) takes the same buffers, in [`Slot`]
//! order: this GPU's graph (offsets over its own vertices, arc targets as new ids, the
//! first new id of every GPU), its vertex state (`value` words, `aux` floats, `flags`), its
//! queues (local, low-priority, receive, aggregation; each an item buffer and a counter block
//! laid out by [`crate::backend::queue`]), the worker table (the simulator's; the CUDA
//! workers' scratch, see `kernels/atos.cu`), the state
//! block ([`state`]) and the mapped control block ([`ctl`]); then for every GPU `h` of the
//! run its `value`, receive items and receive counters ([`peer_slot`]), which a kernel reads
//! (colouring's remote colours) or addresses with remote operations.
//!
//! Queue items: local and low-priority queues hold one word, a local vertex index with
//! [`TAG`] as an optional task tag (colouring's "check" task); the receive queue and the
//! aggregation queues hold `(local vertex index on the receiver, value)` pairs.
//!
//! # The worker (one step = one round of every resident worker)
//! Workers are `resident_threads / width` (thread: 1 lane, warp: 32, CTA: its block). Each
//! step: the receive queue is drained (its pairs applied; the tasks they make start at once
//! or queue locally), idle workers pop the local queue, then, with the priority queue of
//! seed 003, the low queue once the threshold has been raised (by `threshold_delta`, when
//! nothing below the threshold is queued or held by a busy worker of this GPU: work in
//! flight is work below the threshold, and raising past it is what makes the extra work
//! the priority queue exists to avoid), a CTA
//! worker `FETCH_SIZE` items, others one; they *start* their items reading the vertex state
//! as it is at the step's start (a snapshot: nothing finished in this step is visible yet);
//! every busy worker processes `width` arcs; the workers whose arcs are done *finish* in an
//! order drawn from the step's seed, applying their updates with atomic semantics (local
//! updates at once, so later finishers see earlier ones; remote ones as one-sided operations
//! sent at the step's end). A worker holding a long adjacency list is busy for many steps
//! and its updates become visible late: speculation, load imbalance and extra work show,
//! and depend on the seed. A persistent worker kernel runs until the host sets `STOP`; a
//! discrete one processes the items queued when it was launched and ends.
//!
//! # Remote updates
//! An update of a vertex another GPU owns is, in direct mode, a remote atomic min that pushes
//! `(vertex, value)` into the owner's receive queue on improvement (BFS, seed 003 Listing
//! 5) where the operator says so, else the pair itself pushed into the owner's receive queue
//! (one push per finishing worker and target, as a warp or CTA leader batches it); in
//! aggregated mode the pair goes to this GPU's aggregation queue for the target, which the
//! aggregator kernel (running beside the workers) sends when it holds `BATCH_SIZE` bytes or
//! after `WAIT_TIME` polls (seed 003 sec. III-A3). A min-update (BFS) first passes the
//! remote filter: a local atomic min on this GPU's copy of the vertex's value (`flags` over
//! every new id), and only an update that lowered it goes out, as in Atos's own BFS; without
//! it every remote arc costs a remote atomic.
//!
//! # Termination counting
//! Every remote record is counted in the sender's `ctl[SENT_TO + h]` (mapped host memory,
//! written only by the sender) when issued, and in the receiver's [`RECV_ARRIVED`] (device
//! memory) when resolved (the push landed, or the atomic was applied); a GPU publishes
//! `IDLE` with `SEEN` = its `RECV_ARRIVED` when it finds nothing to do. The host's detector
//! ([`super::termination`]) decides from two identical reads.

use super::graph::owner_of;
use crate::backend::queue::{self, COUNTER_WORDS};
use crate::backend::{
    AtomicOp, BackendError, BufferId, Fetch, HostData, KernelContext, KernelDef, KernelRegistry,
    Notify, QueueRef, RemoteOp, StepNext, Word,
};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Buffer slots of every Atos kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Slot {
    /// `u64[n_local + 1]` CSR offsets over this GPU's vertices.
    Offsets,
    /// `u32` arc targets (new ids).
    Targets,
    /// `u32[gpus + 1]` first new id of every GPU, then the vertex count.
    Bases,
    /// `u32[n_local]` the vertex value (level, colour, residual bits).
    Value,
    /// `f32[n_local]` second value (PageRank's rank; one element otherwise).
    Aux,
    /// `u32[n_local]` per-vertex flags (PageRank's "queued"), or, for a `REMOTE_MIN`
    /// application on several GPUs, `u32[n]` over every new id: the smallest value this GPU
    /// sent to each remote vertex (the remote filter, see [`AtosOperator::REMOTE_MIN`]); one
    /// element otherwise.
    Flags,
    /// Local queue items.
    LocalItems,
    /// Local queue counters.
    LocalCounters,
    /// Low-priority queue items.
    LowItems,
    /// Low-priority queue counters.
    LowCounters,
    /// Receive queue items (pairs).
    RecvItems,
    /// Receive queue counters.
    RecvCounters,
    /// Aggregation queues, one segment of `agg_capacity` pairs per target GPU.
    AggItems,
    /// Their counter blocks, one per target GPU.
    AggCounters,
    /// `u32` worker table (the simulator's resident workers between steps; on CUDA the
    /// workers' scratch counters, `X_*` in `kernels/atos.cu`).
    Workers,
    /// `u64[state::LEN]` the GPU's kernel state and counts.
    State,
    /// `u64` mapped control block (every GPU's termination counters and the stop flag).
    Ctl,
}

/// Number of fixed slots; [`peer_slot`] follows them.
pub const SLOTS: usize = 17;

/// Most GPUs an Atos run uses.
pub const MAX_GPUS: usize = 16;

/// Buffer slot of GPU `h`'s `value` (`+ 1`: its receive items, `+ 2`: its receive counters).
pub const fn peer_slot(h: usize) -> usize {
    SLOTS + 3 * h
}

/// Positions that may be other GPUs' buffers.
pub const PEER_ARGS: [usize; 3 * MAX_GPUS] = {
    let mut a = [0usize; 3 * MAX_GPUS];
    let mut i = 0;
    while i < 3 * MAX_GPUS {
        a[i] = SLOTS + i;
        i += 1;
    }
    a
};

/// Words of a receive queue's counter block: the queue's ([`COUNTER_WORDS`]), then per
/// sending GPU `s` at `RECV_CONSUMED + s` the record slots (pairs, batch headers included) it
/// consumed from `s`'s aggregator, which `s` reads to keep its batches within its share of
/// the queue (flow control: an aggregated run never overflows a receive queue); then, on a
/// line of its own at [`RECV_ARRIVED`], the records that arrived at this GPU.
pub const RECV_COUNTER_WORDS: usize = COUNTER_WORDS + MAX_GPUS + queue::LINE_WORDS;

/// See [`RECV_COUNTER_WORDS`].
pub const RECV_CONSUMED: usize = COUNTER_WORDS;

/// Remote records resolved at this GPU (in its receive counter block, device memory): a
/// sender adds to it after its records are visible here (a push landed, a remote atomic
/// done), and after it published them in its `ctl::SENT_TO` (see [`super::termination`]).
/// The GPU reads it before it checks its queues (its `ctl::SEEN` when idle).
pub const RECV_ARRIVED: usize = COUNTER_WORDS + MAX_GPUS;

/// The task tag bit of a queue item (colouring's check task: a tag, not a sign, so that
/// vertex 0 can carry it, seed 004 sec. 5.3).
pub const TAG: u32 = 1 << 31;

/// The state block (`u64` indices).
pub mod state {
    /// Priority threshold (seed 003 `threshold`).
    pub const THRESHOLD: usize = 0;
    /// Sweep cursor (PageRank's `check`, seed 004 Alg. 4).
    pub const CHECK: usize = 1;
    /// Vertices swept in a row with nothing found and nothing changed since.
    pub const CLEAN: usize = 2;
    /// Visits: tasks an algorithm counts as work (the extra-work numerator).
    pub const VISITS: usize = 3;
    /// Tasks started (visits and other tasks, e.g. colouring's checks).
    pub const TASKS: usize = 4;
    /// Arcs processed.
    pub const EDGES: usize = 5;
    /// Items pushed into this GPU's own queues.
    pub const PUSHES: usize = 6;
    /// Records sent to other GPUs (atomics and pairs).
    pub const SENT: usize = 7;
    /// Pairs popped from the receive queue.
    pub const RECEIVED: usize = 8;
    /// Threshold raises.
    pub const RAISES: usize = 9;
    /// Worker steps.
    pub const STEPS: usize = 10;
    /// Aggregator batches sent.
    pub const BATCHES: usize = 11;
    /// A discrete launch's pop limits: local, low, receive queue ends at its start.
    pub const LIMIT_LOCAL: usize = 12;
    /// See [`LIMIT_LOCAL`].
    pub const LIMIT_LOW: usize = 13;
    /// See [`LIMIT_LOCAL`].
    pub const LIMIT_RECV: usize = 14;
    /// Vertices swept.
    pub const SWEPT: usize = 15;
    /// Items popped from the local and low-priority queues.
    pub const POPPED: usize = 16;
    /// Aggregator polls since the last send, per target GPU.
    pub const AGG_POLLS: usize = 17;
    /// The GPU's `ctl[RECV]` at its last step: when remote records resolved since (remote
    /// atomic adds into its values, which push nothing), its sweep starts over.
    pub const LAST_RECV: usize = AGG_POLLS + super::MAX_GPUS;
    /// Aggregator: record slots (pairs and batch headers) sent to each target GPU's receive
    /// queue so far, against the slots that GPU says it consumed ([`super::RECV_CONSUMED`]).
    pub const SENT_TO: usize = LAST_RECV + 1;
    /// Finished workers that waited a step for room in an aggregation queue.
    pub const BLOCKED: usize = SENT_TO + super::MAX_GPUS;
    /// Aggregator polls that held a batch back for want of credit at its target.
    pub const AGG_WAITS: usize = BLOCKED + 1;
    /// Remote updates of a `REMOTE_MIN` application left unsent by the remote filter (this
    /// GPU had already sent the owner a value at most as large).
    pub const FILTERED: usize = AGG_WAITS + 1;
    /// Length.
    pub const LEN: usize = FILTERED + 1;
}

/// The mapped control block (`u64` indices): per GPU `g` at `g * STRIDE`, then the stop flag.
///
/// Every word has one writer and is written with plain stores: kernels never apply atomics
/// to it (a system-scope atomic on mapped host memory is not allowed where the host has no
/// native atomics with the GPU, e.g. over PCIe, and compute-sanitizer rejects it).
pub mod ctl {
    /// 1 when the GPU found nothing to do (no queued item, no busy worker, sweep clean).
    pub const IDLE: usize = 0;
    /// Its [`super::RECV_ARRIVED`] when it published `IDLE`, read before it checked its queues.
    pub const SEEN: usize = 1;
    /// 1 when one of its queues refused items.
    pub const OVERFLOW: usize = 2;
    /// First of [`super::MAX_GPUS`] words: per GPU `h`, the remote records this GPU sent to
    /// `h` so far (published before they are counted in `h`'s `RECV_ARRIVED`).
    pub const SENT_TO: usize = 8;
    /// Words per GPU.
    pub const STRIDE: usize = SENT_TO + super::MAX_GPUS;
    /// Index of the stop flag for `gpus` GPUs.
    pub const fn stop(gpus: usize) -> usize {
        gpus * STRIDE
    }
    /// Length for `gpus` GPUs.
    pub const fn len(gpus: usize) -> usize {
        gpus * STRIDE + 1
    }
    /// Records every GPU published as sent to GPU `g`, in `block` of `gpus` GPUs.
    pub fn sent_to(block: &[u64], gpus: usize, g: usize) -> u64 {
        (0..gpus).filter_map(|y| block.get(y * STRIDE + SENT_TO + g)).sum()
    }
    /// Records GPU `g` published as sent to any GPU.
    pub fn sent_by(block: &[u64], gpus: usize, g: usize) -> u64 {
        (0..gpus).filter_map(|h| block.get(g * STRIDE + SENT_TO + h)).sum()
    }
}

/// Worker scalars, in contract order.
pub mod scalar {
    /// `u32` this GPU.
    pub const GPU: usize = 0;
    /// `u32` GPUs of the run.
    pub const GPUS: usize = 1;
    /// `u32` lanes per worker (1, 32 or the CTA's threads).
    pub const WIDTH: usize = 2;
    /// `u32` items a worker fetches (CTA workers; 1 otherwise).
    pub const FETCH: usize = 3;
    /// `u32` 1: persistent (runs until stopped); 0: discrete.
    pub const PERSISTENT: usize = 4;
    /// `u32` 1: remote updates go to the aggregator; 0: direct.
    pub const AGGREGATED: usize = 5;
    /// `u32` priority threshold step (`threshold_delta`); 0: no priority queue.
    pub const DELTA: usize = 6;
    /// `u32` vertices a sweep reserves (`Check_Size`).
    pub const CHECK_SIZE: usize = 7;
    /// `f64` tolerance.
    pub const EPSILON: usize = 8;
    /// `f64` damping factor.
    pub const DAMPING: usize = 9;
    /// `u32` bits of CUDA-only experiments (the simulator has none of these mechanisms):
    /// 1, the workers order with `fence.acq_rel` instead of sequentially consistent fences
    /// (`SWITCHYARD_ATOS_FENCE=acq_rel`); 2, remote pairs are pushed per warp at once instead
    /// of per CTA pass (`SWITCHYARD_ATOS_REMOTE_PUSH=warp`); 4, a busy team counts its remote
    /// operations only when it runs out of work, not every 16 rounds too
    /// (`SWITCHYARD_ATOS_FLUSH=idle`); 8, level keeping: a persistent BFS CTA worker runs up
    /// to `bits >> 16` (0: its width) of the tasks a level finds as its next level instead
    /// of queueing them (`SWITCHYARD_ATOS_KEEP`, see [`keep_bits`]).
    pub const FENCE: usize = 10;
    /// The environment variable that sets bit 1 of [`FENCE`] (`acq_rel`).
    pub const FENCE_ENV: &str = "SWITCHYARD_ATOS_FENCE";
    /// The environment variable that sets bit 2 of [`FENCE`] (`warp`).
    pub const REMOTE_PUSH_ENV: &str = "SWITCHYARD_ATOS_REMOTE_PUSH";
    /// The environment variable that sets bit 4 of [`FENCE`] (`idle`).
    pub const FLUSH_ENV: &str = "SWITCHYARD_ATOS_FLUSH";
    /// The environment variable that sets level keeping (bit 8 and bits 16-31 of [`FENCE`]):
    /// `off`, `on` (keep up to the CTA's width) or the items kept per level (1-[`KEEP_MAX`]).
    pub const KEEP_ENV: &str = "SWITCHYARD_ATOS_KEEP";
    /// Level keeping when [`KEEP_ENV`] is unset or unreadable: 128 tasks per level. Measured
    /// on one H100 (c22, c23; reports/atos.md, "Level keeping"): road grid BFS 32.5 ms off,
    /// 17.5 ms at 128, 36.7 ms at 512 (a CTA's levels then take four passes and run apart,
    /// extra work 2.6); luxembourg 7.2 ms off, 3.5-3.6 ms at 128 or 256, 3.8 ms at 512.
    pub const KEEP_DEFAULT: Option<u32> = Some(128);
    /// The most tasks a level keeps (`AT_KEEP_MAX` in kernels/atos.cu, the BFS worker's
    /// largest block): larger [`KEEP_ENV`] values are clamped to it.
    pub const KEEP_MAX: u32 = 512;

    /// The [`FENCE`] bits the environment asks for.
    pub fn experiment_bits() -> u32 {
        let is = |var: &str, want: &str| std::env::var(var).is_ok_and(|v| v.trim() == want);
        u32::from(is(FENCE_ENV, "acq_rel"))
            | (u32::from(is(REMOTE_PUSH_ENV, "warp")) << 1)
            | (u32::from(is(FLUSH_ENV, "idle")) << 2)
            | keep_bits(std::env::var(KEEP_ENV).ok().as_deref())
    }

    /// The level-keeping bits of [`FENCE`] for a [`KEEP_ENV`] value: `off` or `0` none, `on`
    /// bit 8 alone (keep up to the CTA's width), `N` bit 8 and N (at most [`KEEP_MAX`]) in bits
    /// 16-31; anything else (or no value) [`KEEP_DEFAULT`].
    pub fn keep_bits(value: Option<&str>) -> u32 {
        let items = match value.map(str::trim) {
            Some("off") | Some("0") => None,
            Some("on") => Some(0),
            Some(v) => v.parse::<u32>().ok().map_or(KEEP_DEFAULT, |n| Some(n.min(KEEP_MAX))),
            None => KEEP_DEFAULT,
        };
        items.map_or(0, |n| 8 | (n << 16))
    }
    /// Aggregator: `u64` batch size in bytes (`BATCH_SIZE`).
    pub const BATCH_BYTES: usize = 2;
    /// Aggregator: `u32` polls before a partial batch goes (`WAIT_TIME`).
    pub const WAIT_POLLS: usize = 3;
    /// Aggregator: `u32` bit `h` set when GPU `h` is reached over a network (InfiniBand).
    /// A batch to it is one put that the NIC reads from the aggregation queue itself
    /// (GPUDirect RDMA, seed 003 sec. III-A3b: "IB requests require only one or a few
    /// threads"), so the aggregator's SM pays per batch there, not per pair as for the peer
    /// stores over NVLink. The CUDA aggregator (one node) ignores it.
    pub const NETWORK_TARGETS: usize = 4;
}

/// The registered names of an application's worker kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtosKernels {
    /// The worker (persistent or discrete, by scalar).
    pub worker: &'static str,
    /// The same worker compiled for two CTAs an SM (fewer registers, twice the threads in
    /// flight), where the application has one; see [`super::CtasPerSm`].
    pub wide_worker: Option<&'static str>,
}

impl AtosKernels {
    /// The worker for `ctas_per_sm` (2 where the application has a wide worker, else 1).
    pub fn worker_for(&self, ctas_per_sm: u32) -> &'static str {
        match (ctas_per_sm, self.wide_worker) {
            (2, Some(wide)) => wide,
            _ => self.worker,
        }
    }
}

/// Registered name of the aggregator kernel.
pub const AGGREGATOR: &str = "atos_aggregator";

/// What a started task carries to its finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// A word the finish needs (BFS: the level read at the start).
    pub carry: u32,
    /// Arcs the task processes (its worker is busy `ceil(arcs / width)` steps, at least one).
    pub arcs: u64,
    /// Whether it counts as a visit (the extra-work numerator).
    pub visit: bool,
}

/// What the cost model is told.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Atomic operations.
    pub atomics: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// A GPU's graph and vertex state as an operator sees it.
pub struct LocalState<'a> {
    /// This GPU.
    pub gpu: usize,
    /// First new id of every GPU, then the vertex count.
    pub bases: &'a [u32],
    /// CSR offsets over this GPU's vertices.
    pub offsets: &'a [u64],
    /// Arc targets (new ids).
    pub targets: &'a [u32],
    /// Vertex values.
    pub value: &'a mut [u32],
    /// Second values.
    pub aux: &'a mut [f32],
    /// Flags.
    pub flags: &'a mut [u32],
    /// Every GPU's values (this GPU's own entry is empty: use `value`).
    pub peers: Vec<&'a [u32]>,
    /// Tolerance.
    pub epsilon: f64,
    /// Damping factor.
    pub damping: f64,
    /// Counts for the cost model.
    pub counts: Counts,
    /// Bytes read from each GPU's `value` through peer access.
    pub peer_bytes: Vec<u64>,
}

impl LocalState<'_> {
    /// First new id of this GPU.
    pub fn base(&self) -> u32 {
        self.bases[self.gpu]
    }

    /// Arc targets of local vertex `v`.
    pub fn neighbors(&self, v: u32) -> &[u32] {
        let (a, b) = (self.offsets[v as usize] as usize, self.offsets[v as usize + 1] as usize);
        &self.targets[a..b]
    }

    /// The value of vertex `t` (a new id, any GPU's; a remote one is a peer load).
    pub fn value_of(&mut self, t: u32) -> u32 {
        let h = owner_of(self.bases, t);
        let local = (t - self.bases[h]) as usize;
        if h == self.gpu {
            self.value[local]
        } else {
            self.peer_bytes[h] += 4;
            self.peers[h].get(local).copied().unwrap_or(u32::MAX)
        }
    }
}

/// The updates and pushes a finishing task emits.
#[derive(Default)]
pub struct Emit {
    /// `(target new id, value)` updates.
    pub updates: Vec<(u32, u32)>,
    /// Items for this GPU's own queue (with their priority).
    pub pushes: Vec<(u32, u32)>,
}

impl Emit {
    /// Updates vertex `t` (a new id) with `value` by the operator's rule.
    pub fn update(&mut self, t: u32, value: u32) {
        self.updates.push((t, value));
    }

    /// Pushes `item` (a local index, maybe tagged) into this GPU's queue with `priority`.
    pub fn push(&mut self, item: u32, priority: u32) {
        self.pushes.push((item, priority));
    }
}

/// An application of Atos: the per-task operator of an algorithm as the simulator's
/// kernels run it (seed 004's `f1`, with `f2` the sweep). Algorithms implement it in
/// `crate::algo`; the CUDA worker of the same contract is the application's functor in
/// `kernels/atos.cu` (`ON_CUDA`), else `--backend cuda --runtime atos` is refused with a
/// message naming the kernel.
pub trait AtosOperator: 'static {
    /// The application's kernel name.
    const KERNELS: AtosKernels;
    /// Whether `kernels/atos.cu` has its worker (`Self::KERNELS.worker`, same contract).
    const ON_CUDA: bool = false;
    /// Remote updates are atomic mins that push on improvement (BFS, direct mode); else
    /// messages the owner applies when it pops them. Such updates are filtered where the
    /// application's `flags` cover every new id (its [`super::AtosApp::init`] gives them,
    /// initialised to `u32::MAX`): an update goes to the owner, directly or aggregated, only
    /// when it is below every value this GPU sent that vertex before (Atos's own BFS does
    /// the same with its local copy of every level).
    const REMOTE_MIN: bool;
    /// Remote updates in direct mode are `f32` atomic adds on the owner's value word (its
    /// bits hold an `f32`: PageRank's residual), pushing nothing: the owner's sweep finds
    /// the vertices they lifted over the tolerance (seed 003 sec. IV, seed 004 Alg. 4).
    /// Through the aggregator they travel as `(vertex, f32 bits)` pairs the owner applies.
    const REMOTE_ADD_F32: bool = false;
    /// Idle workers and finished tasks sweep `Check_Size` vertices (PageRank).
    const SWEEPS: bool = false;
    /// Starts task `item` (a local index, maybe tagged): reads what it needs now (the
    /// state as at the step's start), takes what it consumes; `None` when there is
    /// nothing to do.
    fn start(st: &mut LocalState<'_>, item: u32) -> Option<Started>;
    /// Finishes task `item` with the word its start carried.
    fn finish(st: &mut LocalState<'_>, item: u32, carry: u32, emit: &mut Emit);
    /// Applies an update to own vertex `v` (local index); the priority to push `v` with,
    /// or `None` not to push it.
    fn apply(st: &mut LocalState<'_>, v: u32, value: u32) -> Option<u32>;
    /// A `(v, value)` pair popped from the receive queue; the priority to visit `v` with,
    /// or `None`. `applied`: a remote atomic already applied it (direct mode, `REMOTE_MIN`).
    fn receive(st: &mut LocalState<'_>, v: u32, value: u32, applied: bool) -> Option<u32> {
        if applied {
            (st.value[v as usize] == value).then_some(value)
        } else {
            Self::apply(st, v, value)
        }
    }
    /// Priority of a queued item (lower first).
    fn priority(st: &LocalState<'_>, item: u32) -> u32;
    /// Sweeps own vertex `v`: whether to queue it now (marking it queued).
    fn sweep(_st: &mut LocalState<'_>, _v: u32) -> bool {
        false
    }
}

/// Registers application `Op`'s worker kernel.
pub fn register_app<Op: AtosOperator>(registry: &mut KernelRegistry) {
    for name in std::iter::once(Op::KERNELS.worker).chain(Op::KERNELS.wide_worker) {
        register_worker::<Op>(registry, name);
    }
}

fn register_worker<Op: AtosOperator>(registry: &mut KernelRegistry, name: &'static str) {
    registry.register(KernelDef {
        name,
        contract: "Atos worker (one round of every resident worker per step; see \
                   runtime::atos::kernels): pop from the receive, local and low queues, start \
                   tasks on the state as at the step's start, process `width` arcs per busy \
                   worker, finish tasks in a seeded order applying updates atomically (local), \
                   as remote atomics with push on improvement or as pushed pairs (direct), or \
                   into the aggregation queues; sweep `check_size` vertices where the \
                   application sweeps; publish IDLE/SEEN in the mapped control block; \
                   persistent: until STOP, discrete: until the items queued at its launch are \
                   done",
        sim: worker_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(name),
        remote_args: &PEER_ARGS,
    });
}

/// Registers the runtime's own kernels (the aggregator).
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: AGGREGATOR,
        contract: "Atos aggregator (persistent, beside the workers; seed 003 Fig. 3): per step \
                   (one poll) and per target GPU, send the aggregation queue's pairs as one \
                   push into the target's receive queue when they fill `batch_bytes` or after \
                   `wait_polls` polls, counting them in SENT and the target's RECV; until STOP. \
                   Scalars: gpu, gpus, batch_bytes, wait_polls, network_targets (bit h: GPU h is \
                   over a network, whose NIC reads a batch: the SM pays per batch, not per pair)",
        sim: aggregator_kernel,
        cuda_name: Some(AGGREGATOR),
        remote_args: &PEER_ARGS,
    });
}

fn kernel_error(kernel: &str, message: String) -> BackendError {
    BackendError::Kernel { kernel: kernel.to_string(), message }
}

/// Queue views of one step.
struct Queue<'a> {
    items: &'a mut [u32],
    counters: &'a mut [u64],
}

impl Queue<'_> {
    fn push(&mut self, values: &[u32]) -> bool {
        matches!(queue::push(self.counters, self.items, values), queue::PushOutcome::Stored(_))
    }

    fn pending(&self) -> u64 {
        queue::pending(self.counters)
    }

    /// Pops up to `max` items below `limit`.
    fn pop(&mut self, max: u64, limit: u64) -> std::ops::Range<u64> {
        let end = self.counters[queue::END].min(limit);
        let start = self.counters[queue::START];
        let take = end.saturating_sub(start).min(max);
        self.counters[queue::START] = start + take;
        start..start + take
    }

    fn available(&self, limit: u64) -> u64 {
        self.counters[queue::END].min(limit).saturating_sub(self.counters[queue::START])
    }

    /// Moves the unpopped items to the front so that the capacity bounds what is queued,
    /// not what was ever queued: the simulator's form of a circular queue (safe here: a
    /// simulated step runs alone and remote pushes land whole between steps). Done when
    /// at least as many items were popped as remain, so each item moves O(1) times.
    fn compact(&mut self) {
        compact(self.counters, self.items);
    }
}

/// See [`Queue::compact`] (`items` holds one word per item).
fn compact(counters: &mut [u64], items: &mut [u32]) {
    let (start, end) = (counters[queue::START], counters[queue::END]);
    if start == 0 || end != counters[queue::END_ALLOC] || counters[queue::OVERFLOW] != 0 {
        return;
    }
    let pending = end - start;
    if pending > start {
        return;
    }
    items.copy_within(start as usize..end as usize, 0);
    for c in [queue::END, queue::END_ALLOC, queue::END_MAX, queue::END_COUNT] {
        counters[c] = pending;
    }
    counters[queue::START] = 0;
}

/// A busy worker: arcs left and its items with their carried words.
struct Busy {
    arcs_left: u64,
    items: Vec<(u32, u32)>,
}

/// Reads the worker table (`[busy, then records of 2 + 2 * fetch words]`).
fn read_table(table: &[u32], fetch: usize) -> Vec<Busy> {
    let rec = 2 + 2 * fetch;
    let busy = table.first().copied().unwrap_or(0) as usize;
    (0..busy)
        .filter_map(|w| table.get(1 + w * rec..1 + (w + 1) * rec))
        .map(|r| {
            let count = r[1] as usize;
            Busy {
                arcs_left: u64::from(r[0]),
                items: (0..count.min(fetch)).map(|i| (r[2 + 2 * i], r[3 + 2 * i])).collect(),
            }
        })
        .collect()
}

fn write_table(table: &mut [u32], fetch: usize, busy: &[Busy]) {
    let rec = 2 + 2 * fetch;
    table[0] = busy.len() as u32;
    for (w, b) in busy.iter().enumerate() {
        let r = &mut table[1 + w * rec..1 + (w + 1) * rec];
        r[0] = b.arcs_left.min(u64::from(u32::MAX)) as u32;
        r[1] = b.items.len() as u32;
        for (i, &(item, carry)) in b.items.iter().enumerate() {
            r[2 + 2 * i] = item;
            r[3 + 2 * i] = carry;
        }
    }
}

/// `u64` words of scratch the CUDA workers keep in the worker table's buffer (`X_WORDS` in
/// `kernels/atos.cu`): the buffer holds at least twice as many `u32`s.
pub const CUDA_SCRATCH_WORDS: usize = 144;

/// Workers the table can hold for `fetch` items each.
pub fn table_capacity(table_len: usize, fetch: usize) -> usize {
    table_len.saturating_sub(1) / (2 + 2 * fetch)
}

/// Words of a worker table for `workers` workers of `fetch` items.
pub fn table_words(workers: u64, fetch: u32) -> usize {
    1 + workers as usize * (2 + 2 * fetch as usize)
}

/// The remote-operation addresses of every GPU.
struct Peers {
    value: Vec<BufferId>,
    recv: Vec<QueueRef>,
}

fn peers(ids: &[BufferId], gpus: usize) -> Result<Peers, BackendError> {
    let at = |i: usize| {
        ids.get(i)
            .copied()
            .ok_or_else(|| kernel_error("atos", format!("missing peer buffer argument {i}")))
    };
    let mut value = Vec::with_capacity(gpus);
    let mut recv = Vec::with_capacity(gpus);
    for h in 0..gpus {
        value.push(at(peer_slot(h))?);
        recv.push(QueueRef { items: at(peer_slot(h) + 1)?, counters: at(peer_slot(h) + 2)? });
    }
    Ok(Peers { value, recv })
}

/// The remote filter of `REMOTE_MIN` applications (Atos's own BFS keeps a local copy of
/// every vertex's level and issues a remote atomic min only when its local atomic min on
/// that copy improved): `shadow` holds, per new id, the smallest value this GPU sent to the
/// vertex's owner. True when `val` is below it (recorded, to be sent); false when the owner
/// already has a value at most `val` from this GPU, so the update cannot improve it. A
/// shadow that does not cover `t` (one GPU, or an application without one) sends all.
fn sent_lower(shadow: &mut [u32], t: u32, val: u32) -> bool {
    match shadow.get_mut(t as usize) {
        Some(s) if val >= *s => false,
        Some(s) => {
            *s = val;
            true
        }
        None => true,
    }
}

/// The termination count of `n` records resolved at GPU `h` (its `RECV_ARRIVED`).
fn arrived(peers: &Peers, h: usize, n: u64) -> Notify {
    Notify { buffer: peers.recv[h].counters, index: RECV_ARRIVED, amount: n }
}

/// Whether this GPU has nothing to do (queues, workers, aggregation, sweep).
fn gpu_idle(
    sweeps: bool,
    busy: usize,
    queues: [&Queue<'_>; 3],
    agg_counters: &[u64],
    gpus: usize,
    clean: u64,
    n_local: u64,
) -> bool {
    busy == 0
        && queues.iter().all(|q| q.pending() == 0)
        && (0..gpus).all(|h| {
            agg_counters
                .get(h * COUNTER_WORDS..(h + 1) * COUNTER_WORDS)
                .is_none_or(|c| queue::pending(c) == 0)
        })
        && (!sweeps || clean >= n_local)
}

/// The worker kernel of application `Op` (see the module docs).
fn worker_kernel<Op: AtosOperator>(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let kernel = ctx.kernel;
    let gpu = ctx.scalar_u32(scalar::GPU)? as usize;
    let gpus = ctx.scalar_u32(scalar::GPUS)? as usize;
    let width = u64::from(ctx.scalar_u32(scalar::WIDTH)?.max(1));
    let fetch = ctx.scalar_u32(scalar::FETCH)?.max(1) as usize;
    let persistent = ctx.scalar_u32(scalar::PERSISTENT)? != 0;
    let aggregated = ctx.scalar_u32(scalar::AGGREGATED)? != 0;
    let delta = u64::from(ctx.scalar_u32(scalar::DELTA)?);
    let check_size = u64::from(ctx.scalar_u32(scalar::CHECK_SIZE)?);
    let epsilon = ctx.scalar_f64(scalar::EPSILON)?;
    let damping = ctx.scalar_f64(scalar::DAMPING)?;
    if gpus == 0 || gpus > MAX_GPUS || gpu >= gpus {
        return Err(kernel_error(kernel, format!("gpu {gpu} of {gpus} (at most {MAX_GPUS})")));
    }
    let ids = ctx.buffer_ids.to_vec();
    let peer_ids = peers(&ids, gpus)?;
    let (step, seed, resident) = (ctx.step, ctx.seed, ctx.resident_threads);
    let n_bufs = ctx.buffers.len();
    if n_bufs < peer_slot(gpus) {
        return Err(kernel_error(kernel, format!("{n_bufs} buffers for {gpus} GPUs")));
    }
    let (fixed, rest) = ctx.buffers.split_at_mut(SLOTS);
    let [
        offsets,
        targets,
        bases,
        value,
        aux,
        flags,
        local_items,
        local_counters,
        low_items,
        low_counters,
        recv_items,
        recv_counters,
        agg_items,
        agg_counters,
        workers,
        state_buf,
        ctl_buf,
    ] = <&mut [HostData; SLOTS]>::try_from(fixed)
        .map_err(|_| kernel_error(kernel, "wrong number of buffers".into()))?;
    let st_block = state_buf.as_u64_mut()?;
    let ctl_block = ctl_buf.as_u64_mut()?;
    let stop = ctl_block.get(ctl::stop(gpus)).copied().unwrap_or(0) != 0;
    let mine = gpu * ctl::STRIDE;
    if ctl_block.len() < ctl::len(gpus) || st_block.len() < state::LEN {
        return Err(kernel_error(kernel, "control or state block too short".into()));
    }
    if persistent && stop {
        ctx.effects.next = StepNext::Done;
        return Ok(());
    }
    let peer_values: Vec<&[u32]> = (0..gpus)
        .map(|h| if h == gpu { Ok(&[][..]) } else { rest[3 * h].as_u32() })
        .collect::<Result<_, _>>()?;
    let n_local = value.len() as u64;
    let mut st = LocalState {
        gpu,
        bases: bases.as_u32()?,
        offsets: offsets.as_u64()?,
        targets: targets.as_u32()?,
        value: value.as_u32_mut()?,
        aux: aux.as_f32_mut()?,
        flags: flags.as_u32_mut()?,
        peers: peer_values,
        epsilon,
        damping,
        counts: Counts::default(),
        peer_bytes: vec![0; gpus],
    };
    let mut local =
        Queue { items: local_items.as_u32_mut()?, counters: local_counters.as_u64_mut()? };
    let mut low = Queue { items: low_items.as_u32_mut()?, counters: low_counters.as_u64_mut()? };
    let mut recv = Queue { items: recv_items.as_u32_mut()?, counters: recv_counters.as_u64_mut()? };
    let seen = recv.counters.get(RECV_ARRIVED).copied().unwrap_or(0);
    if seen != st_block[state::LAST_RECV] {
        // Remote records landed since the last step (atomic adds push nothing): sweep again.
        st_block[state::LAST_RECV] = seen;
        st_block[state::CLEAN] = 0;
    }
    let agg_items = agg_items.as_u32_mut()?;
    let agg_counters = agg_counters.as_u64_mut()?;
    let table = workers.as_u32_mut()?;
    let mut busy = read_table(table, fetch);
    let workers_max =
        ((resident / width).max(1) as usize).min(table_capacity(table.len(), fetch)).max(1);

    // A discrete launch works on what was queued when it started.
    if step == 0 && !persistent {
        for q in [&mut local, &mut low, &mut recv] {
            q.compact();
        }
        st_block[state::LIMIT_LOCAL] = local.counters[queue::END];
        st_block[state::LIMIT_LOW] = low.counters[queue::END];
        st_block[state::LIMIT_RECV] = recv.counters[queue::END];
    }
    let limits = if persistent {
        [u64::MAX; 3]
    } else {
        [st_block[state::LIMIT_LOCAL], st_block[state::LIMIT_LOW], st_block[state::LIMIT_RECV]]
    };
    let prio = delta > 0;
    let mut threshold = st_block[state::THRESHOLD];
    let mut items_popped = 0u64;
    let mut pushes = 0u64;

    // 1. Idle workers pop and start tasks.
    let idle = workers_max.saturating_sub(busy.len());
    let want = (idle * fetch) as u64;
    let mut tasks: Vec<u32> = Vec::new();
    let push_local = |local: &mut Queue<'_>,
                      low: &mut Queue<'_>,
                      item: u32,
                      priority: u32,
                      threshold: u64,
                      pushes: &mut u64|
     -> bool {
        *pushes += 1;
        if prio && u64::from(priority) >= threshold {
            low.push(&[item])
        } else {
            local.push(&[item])
        }
    };
    let mut refused = 0u64;
    {
        // The receive queue is drained every step: its pairs are applied (cheap: an
        // atomic each), the tasks they make start now while workers are idle and queue
        // locally otherwise, so the queue holds what arrived since the last step only.
        let got = recv.pop(recv.available(limits[2]) & !1, limits[2]);
        let applied = Op::REMOTE_MIN && !aggregated;
        let mut i = got.start;
        let mut headers = 0u64;
        while i + 1 < got.end {
            let (v, val) = (recv.items[i as usize], recv.items[i as usize + 1]);
            i += 2;
            if v & TAG != 0 {
                // An aggregator's batch header `(TAG | sender, pairs)`: the batch's slots are
                // consumed (all of it is in this drain: a push lands whole).
                let s = (v & !TAG) as usize;
                if let Some(c) = recv.counters.get_mut(RECV_CONSUMED + s) {
                    *c += u64::from(val) + 1;
                }
                headers += 1;
                continue;
            }
            st_block[state::CLEAN] = 0;
            if let Some(p) = Op::receive(&mut st, v, val, applied) {
                if (prio && u64::from(p) >= threshold) || tasks.len() as u64 >= want {
                    if !push_local(&mut local, &mut low, v, p, threshold, &mut pushes) {
                        refused += 1;
                    }
                } else {
                    tasks.push(v);
                }
            }
        }
        let pairs = (got.end - got.start) / 2 - headers;
        items_popped += pairs;
        st_block[state::RECEIVED] += pairs;
    }
    if want > 0 {
        if (tasks.len() as u64) < want {
            let got = local.pop(want - tasks.len() as u64, limits[0]);
            items_popped += got.end - got.start;
            st_block[state::POPPED] += got.end - got.start;
            tasks.extend(got.map(|i| local.items[i as usize]));
        }
        if prio
            && (tasks.len() as u64) < want
            && local.pending() == 0
            && recv.pending() == 0
            && busy.is_empty()
        {
            let avail = low.available(limits[1]);
            if avail > 0 {
                threshold += delta;
                st_block[state::RAISES] += 1;
                let got = low.pop((want - tasks.len() as u64).min(avail), limits[1]);
                items_popped += got.end - got.start;
                st_block[state::POPPED] += got.end - got.start;
                let items: Vec<u32> = got.map(|i| low.items[i as usize]).collect();
                for item in items {
                    let p = Op::priority(&st, item);
                    if u64::from(p) < threshold {
                        tasks.push(item);
                    } else {
                        pushes += 1;
                        if !low.push(&[item]) {
                            refused += 1;
                        }
                    }
                }
            }
        }
    }
    let mut new_workers = 0usize;
    let mut started = 0u64;
    for chunk in tasks.chunks(fetch) {
        let mut w = Busy { arcs_left: 0, items: Vec::with_capacity(chunk.len()) };
        for &item in chunk {
            started += 1;
            if let Some(s) = Op::start(&mut st, item) {
                st_block[state::TASKS] += 1;
                st_block[state::VISITS] += u64::from(s.visit);
                w.arcs_left += s.arcs;
                w.items.push((item, s.carry));
            }
        }
        if !w.items.is_empty() {
            busy.push(w);
            new_workers += 1;
        }
    }

    // 2. Every busy worker processes one round of arcs.
    let mut arcs = 0u64;
    let mut finished = Vec::new();
    let mut still = Vec::with_capacity(busy.len());
    for mut w in busy {
        let take = w.arcs_left.min(width);
        arcs += take;
        w.arcs_left -= take;
        if w.arcs_left == 0 {
            finished.push(w);
        } else {
            still.push(w);
        }
    }
    st_block[state::EDGES] += arcs;

    // 3. Finishers apply their updates in an order drawn from the step's seed.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    finished.shuffle(&mut rng);
    let mut remote = Vec::new();
    let mut sent_to = vec![0u64; gpus];
    let mut updates = 0u64;
    let mut emit = Emit::default();
    let mut swept_total = 0u64;
    let sweep = |st: &mut LocalState<'_>,
                 st_block: &mut [u64],
                 local: &mut Queue<'_>,
                 low: &mut Queue<'_>,
                 pushes: &mut u64,
                 refused: &mut u64,
                 threshold: u64|
     -> u64 {
        if n_local == 0 {
            return 0;
        }
        let mut found = false;
        let m = check_size.min(n_local);
        for _ in 0..m {
            let v = (st_block[state::CHECK] % n_local) as u32;
            st_block[state::CHECK] += 1;
            if Op::sweep(st, v) {
                found = true;
                let p = Op::priority(st, v);
                *pushes += 1;
                let ok = if prio && u64::from(p) >= threshold {
                    low.push(&[v])
                } else {
                    local.push(&[v])
                };
                if !ok {
                    *refused += 1;
                }
            }
        }
        st_block[state::SWEPT] += m;
        if found {
            st_block[state::CLEAN] = 0;
        } else {
            st_block[state::CLEAN] += m;
        }
        m
    };
    let agg_cap = agg_items.len() / gpus;
    let finished_len = finished.len();
    for w in finished {
        // A worker whose remote updates may not fit its aggregation queues waits (stays busy,
        // as a GPU worker spins on a full buffer) until the aggregator has sent them on.
        if aggregated && gpus > 1 {
            let room = |h: usize| {
                let seg = &agg_counters[h * COUNTER_WORDS..(h + 1) * COUNTER_WORDS];
                (agg_cap as u64).saturating_sub(seg[queue::END_ALLOC])
            };
            // Every arc remote to one target is the most any target can need: when that
            // fits everywhere, the per-target count (an owner look-up per arc) is skipped.
            let most: u64 =
                w.items.iter().map(|&(item, _)| 2 * st.neighbors(item & !TAG).len() as u64).sum();
            let blocked = (0..gpus).filter(|&h| h != gpu).any(|h| most > room(h)) && {
                let mut need = vec![0u64; gpus];
                for &(item, _) in &w.items {
                    for &t in st.neighbors(item & !TAG) {
                        need[owner_of(st.bases, t)] += 2;
                    }
                }
                (0..gpus)
                    .filter(|&h| h != gpu)
                    .any(|h| need[h] > room(h) && need[h] <= agg_cap as u64)
            };
            if blocked {
                st_block[state::BLOCKED] += 1;
                still.push(w);
                continue;
            }
        }
        for &(item, carry) in &w.items {
            Op::finish(&mut st, item, carry, &mut emit);
        }
        let mut pairs_by_target: Vec<Vec<u32>> = vec![Vec::new(); gpus];
        for (t, val) in emit.updates.drain(..) {
            updates += 1;
            let h = owner_of(st.bases, t);
            let t_local = t - st.bases[h];
            if h != gpu && Op::REMOTE_MIN && !sent_lower(st.flags, t, val) {
                // This GPU already sent the owner a value at most `val`.
                st_block[state::FILTERED] += 1;
                continue;
            }
            if h == gpu {
                st_block[state::CLEAN] = 0;
                if let Some(p) = Op::apply(&mut st, t_local, val)
                    && !push_local(&mut local, &mut low, t_local, p, threshold, &mut pushes)
                {
                    refused += 1;
                }
            } else if aggregated {
                let seg = &mut agg_counters[h * COUNTER_WORDS..(h + 1) * COUNTER_WORDS];
                let cap = agg_items.len() / gpus;
                let items = &mut agg_items[h * cap..(h + 1) * cap];
                if !matches!(
                    queue::push(seg, items, &[t_local, val]),
                    queue::PushOutcome::Stored(_)
                ) {
                    refused += 2;
                }
            } else if Op::REMOTE_ADD_F32 {
                remote.push(RemoteOp::Atomic {
                    buffer: peer_ids.value[h],
                    index: t_local as usize,
                    op: AtomicOp::Add,
                    value: Word::F32(f32::from_bits(val)),
                    fetch: Fetch::Discard,
                    notify: Some(arrived(&peer_ids, h, 1)),
                });
                sent_to[h] += 1;
            } else if Op::REMOTE_MIN {
                let notify = Some(arrived(&peer_ids, h, 1));
                remote.push(RemoteOp::Atomic {
                    buffer: peer_ids.value[h],
                    index: t_local as usize,
                    op: AtomicOp::Min,
                    value: Word::U32(val),
                    fetch: Fetch::IfChanged(Box::new(RemoteOp::Push {
                        queue: peer_ids.recv[h],
                        items: vec![t_local, val],
                        notify,
                    })),
                    notify,
                });
                sent_to[h] += 1;
            } else {
                pairs_by_target[h].extend([t_local, val]);
            }
        }
        for (h, items) in pairs_by_target.into_iter().enumerate() {
            if items.is_empty() {
                continue;
            }
            let n = items.len() as u64 / 2;
            sent_to[h] += n;
            remote.push(RemoteOp::Push {
                queue: peer_ids.recv[h],
                items,
                notify: Some(arrived(&peer_ids, h, n)),
            });
        }
        for (item, p) in emit.pushes.drain(..) {
            if !push_local(&mut local, &mut low, item, p, threshold, &mut pushes) {
                refused += 1;
            }
        }
        if Op::SWEEPS {
            swept_total += sweep(
                &mut st,
                st_block,
                &mut local,
                &mut low,
                &mut pushes,
                &mut refused,
                threshold,
            );
        }
    }
    // Workers whose pop failed sweep (seed 003's f2), a full cycle at most per step.
    if Op::SWEEPS {
        let idle_now = workers_max.saturating_sub(still.len() + new_workers.min(finished_len));
        let mut budget = (idle_now as u64 * check_size).min(n_local);
        while budget > 0 && check_size > 0 {
            let m = sweep(
                &mut st,
                st_block,
                &mut local,
                &mut low,
                &mut pushes,
                &mut refused,
                threshold,
            );
            swept_total += m;
            budget = budget.saturating_sub(m.max(1));
        }
    }
    st_block[state::THRESHOLD] = threshold;
    st_block[state::PUSHES] += pushes;
    st_block[state::SENT] += sent_to.iter().sum::<u64>();
    st_block[state::STEPS] += 1;
    for (h, n) in sent_to.iter().enumerate() {
        ctl_block[mine + ctl::SENT_TO + h] += n;
    }
    if persistent {
        for q in [&mut local, &mut low, &mut recv] {
            q.compact();
        }
    }
    let overflowed = refused > 0
        || [&local, &low, &recv].iter().any(|q| queue::overflowed(q.counters) > 0)
        || (0..gpus).any(|h| {
            queue::overflowed(&agg_counters[h * COUNTER_WORDS..(h + 1) * COUNTER_WORDS]) > 0
        });
    if overflowed {
        ctl_block[mine + ctl::OVERFLOW] = 1;
    }

    // 4. Publish, and say what comes next.
    let idle_gpu = gpu_idle(
        Op::SWEEPS,
        still.len(),
        [&local, &low, &recv],
        agg_counters,
        gpus,
        st_block[state::CLEAN],
        n_local,
    );
    ctl_block[mine + ctl::IDLE] = u64::from(idle_gpu);
    if idle_gpu {
        ctl_block[mine + ctl::SEEN] = seen;
    }
    // The low queue is work for this launch only when the threshold may be raised now:
    // nothing else queued, not even past this discrete launch's limits (items pushed
    // during the launch). Otherwise a discrete launch whose local queue holds only such
    // items would step forever without popping anything; it ends instead, and the
    // relaunch takes them.
    let may_raise = local.pending() == 0 && recv.pending() == 0;
    let more_here = !still.is_empty()
        || local.available(limits[0]) > 0
        || recv.available(limits[2]) > 0
        || (prio && may_raise && low.available(limits[1]) > 0)
        || (Op::SWEEPS && st_block[state::CLEAN] < n_local && persistent);
    write_table(table, fetch, &still);
    let peer_bytes = std::mem::take(&mut st.peer_bytes);
    let counts = st.counts;
    ctx.effects.items = started + items_popped + swept_total;
    ctx.effects.edges = arcs;
    ctx.effects.atomics = updates + pushes + counts.atomics;
    ctx.effects.bytes_read = arcs * 4 + items_popped * 8 + swept_total * 8 + counts.bytes_read;
    ctx.effects.bytes_written = pushes * 4 + updates * 4 + counts.bytes_written;
    ctx.effects.remote = remote;
    ctx.effects.peer_reads = peer_bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b > 0)
        .map(|(h, &bytes)| crate::backend::PeerRead { arg: peer_slot(h), bytes })
        .collect();
    ctx.effects.next = match (persistent, more_here) {
        (_, true) => StepNext::Continue,
        (true, false) => StepNext::Idle,
        (false, false) => StepNext::Done,
    };
    Ok(())
}

/// The aggregator kernel (see the module docs).
fn aggregator_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let kernel = ctx.kernel;
    let gpu = ctx.scalar_u32(scalar::GPU)? as usize;
    let gpus = ctx.scalar_u32(scalar::GPUS)? as usize;
    let batch_bytes = ctx.scalar_u64(scalar::BATCH_BYTES)?.max(8);
    let wait_polls = u64::from(ctx.scalar_u32(scalar::WAIT_POLLS)?);
    let network = ctx.scalar_u32(scalar::NETWORK_TARGETS)?;
    if gpus == 0 || gpus > MAX_GPUS || gpu >= gpus {
        return Err(kernel_error(kernel, format!("gpu {gpu} of {gpus} (at most {MAX_GPUS})")));
    }
    let ids = ctx.buffer_ids.to_vec();
    let peer_ids = peers(&ids, gpus)?;
    let buffers = &mut *ctx.buffers;
    if buffers.len() < SLOTS {
        return Err(kernel_error(kernel, "too few buffers".into()));
    }
    if buffers.len() < peer_slot(gpus) {
        return Err(kernel_error(kernel, format!("{} buffers for {gpus} GPUs", buffers.len())));
    }
    let (fixed, rest) = buffers.split_at_mut(SLOTS);
    // Each target's receive queue: its capacity in record slots and what it consumed from
    // this GPU (a peer load of its counter block).
    let mut recv_slots = vec![0u64; gpus];
    let mut consumed = vec![0u64; gpus];
    for h in (0..gpus).filter(|&h| h != gpu) {
        recv_slots[h] = rest[3 * h + 1].len() as u64 / 2;
        consumed[h] = rest[3 * h + 2].as_u64()?.get(RECV_CONSUMED + gpu).copied().unwrap_or(0);
    }
    let (_, tail) = fixed.split_at_mut(Slot::AggItems as usize);
    let (agg, tail) = tail.split_at_mut(2);
    let [agg_items, agg_counters] = agg else {
        return Err(kernel_error(kernel, "aggregation buffers".into()));
    };
    let agg_items = agg_items.as_u32_mut()?;
    let agg_counters = agg_counters.as_u64_mut()?;
    let [_workers, state_buf, ctl_buf] = tail else {
        return Err(kernel_error(kernel, "state buffers".into()));
    };
    let st_block = state_buf.as_u64_mut()?;
    let ctl_block = ctl_buf.as_u64_mut()?;
    if ctl_block.len() < ctl::len(gpus) || st_block.len() < state::LEN {
        return Err(kernel_error(kernel, "control or state block too short".into()));
    }
    if ctl_block[ctl::stop(gpus)] != 0 {
        ctx.effects.next = StepNext::Done;
        return Ok(());
    }
    let cap = agg_items.len() / gpus;
    let mut remote = Vec::new();
    let mut sent_pairs = 0u64;
    // What the aggregator's SM copies (pairs to peer-store targets) and the batches it sends.
    let (mut copied_pairs, mut batches) = (0u64, 0u64);
    let mut pending_after = 0u64;
    for h in (0..gpus).filter(|&h| h != gpu) {
        let seg = &mut agg_counters[h * COUNTER_WORDS..(h + 1) * COUNTER_WORDS];
        let items = &mut agg_items[h * cap..(h + 1) * cap];
        if queue::pending(seg) == 0 {
            st_block[state::AGG_POLLS + h] = 0;
            continue;
        }
        st_block[state::AGG_POLLS + h] += 1;
        // Every full batch goes at once; a partial one after `wait_polls` polls. Flow
        // control: this GPU's batches not yet consumed by the target (headers included) stay
        // within its share of the target's receive queue, so no push there can overflow.
        let batch_pairs = (batch_bytes / 8).max(1);
        let share = recv_slots[h] / (gpus as u64 - 1);
        loop {
            let pending = queue::pending(seg) / 2;
            let full = pending >= batch_pairs;
            if pending == 0 || !(full || st_block[state::AGG_POLLS + h] >= wait_polls) {
                break;
            }
            let outstanding = st_block[state::SENT_TO + h].saturating_sub(consumed[h]);
            let credit = share.saturating_sub(outstanding + 1);
            if credit == 0 {
                st_block[state::AGG_WAITS] += 1;
                break;
            }
            let got = queue::pop(seg, pending.min(batch_pairs).min(credit) * 2);
            let n = (got.end - got.start) / 2;
            let mut batch = Vec::with_capacity(2 * n as usize + 2);
            batch.extend([TAG | gpu as u32, n as u32]);
            batch.extend_from_slice(&items[got.start as usize..got.end as usize]);
            st_block[state::SENT_TO + h] += n + 1;
            sent_pairs += n;
            batches += 1;
            if network & (1 << h) == 0 {
                copied_pairs += n;
            }
            remote.push(RemoteOp::Push {
                queue: peer_ids.recv[h],
                items: batch,
                notify: Some(arrived(&peer_ids, h, n)),
            });
            ctl_block[gpu * ctl::STRIDE + ctl::SENT_TO + h] += n;
            st_block[state::BATCHES] += 1;
            if !full {
                st_block[state::AGG_POLLS + h] = 0;
            }
        }
        if queue::pending(seg) == 0 {
            st_block[state::AGG_POLLS + h] = 0;
        }
        compact(seg, items);
        pending_after += queue::pending(seg);
    }
    st_block[state::SENT] += sent_pairs;
    // A copied pair is read and stored by the SM; a batch put over the network costs its
    // header and counter update, the NIC moving the pairs.
    ctx.effects.items = copied_pairs + batches;
    ctx.effects.bytes_read = copied_pairs * 8 + batches * 8;
    ctx.effects.atomics = remote.len() as u64;
    ctx.effects.remote = remote;
    ctx.effects.next = if pending_after > 0 { StepNext::Continue } else { StepNext::Idle };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cuda_kernels_use_this_layout() {
        let source = crate::backend::cuda::kernels::ATOS_SOURCE;
        let defines: Vec<(&str, usize)> = vec![
            ("AT_LOCAL_ITEMS", Slot::LocalItems as usize),
            ("AT_AGG_COUNTERS", Slot::AggCounters as usize),
            ("AT_WORKERS", Slot::Workers as usize),
            ("AT_STATE", Slot::State as usize),
            ("AT_CTL", Slot::Ctl as usize),
            ("AT_SLOTS", SLOTS),
            ("X_WORDS", CUDA_SCRATCH_WORDS),
            ("AT_MAX_GPUS", MAX_GPUS),
            ("Q_END", queue::END),
            ("Q_END_ALLOC", queue::END_ALLOC),
            ("Q_END_MAX", queue::END_MAX),
            ("Q_END_COUNT", queue::END_COUNT),
            ("Q_OVERFLOW", queue::OVERFLOW),
            ("Q_WORDS", COUNTER_WORDS),
            ("AT_RECV_CONSUMED", RECV_CONSUMED),
            ("ST_THRESHOLD", state::THRESHOLD),
            ("ST_CHECK", state::CHECK),
            ("ST_VISITS", state::VISITS),
            ("ST_TASKS", state::TASKS),
            ("ST_EDGES", state::EDGES),
            ("ST_PUSHES", state::PUSHES),
            ("ST_SENT", state::SENT),
            ("ST_RECEIVED", state::RECEIVED),
            ("ST_RAISES", state::RAISES),
            ("ST_BATCHES", state::BATCHES),
            ("ST_LIMIT_LOCAL", state::LIMIT_LOCAL),
            ("ST_LIMIT_LOW", state::LIMIT_LOW),
            ("ST_LIMIT_RECV", state::LIMIT_RECV),
            ("ST_SWEPT", state::SWEPT),
            ("ST_POPPED", state::POPPED),
            ("ST_AGG_POLLS", state::AGG_POLLS),
            ("ST_LAST_RECV", state::LAST_RECV),
            ("ST_SENT_TO", state::SENT_TO),
            ("ST_BLOCKED", state::BLOCKED),
            ("ST_AGG_WAITS", state::AGG_WAITS),
            ("ST_FILTERED", state::FILTERED),
            ("ST_LEN", state::LEN),
            ("C_SENT_TO", ctl::SENT_TO),
            ("AT_RECV_ARRIVED", RECV_ARRIVED),
            ("C_IDLE", ctl::IDLE),
            ("C_SEEN", ctl::SEEN),
            ("C_OVERFLOW", ctl::OVERFLOW),
            ("C_STRIDE", ctl::STRIDE),
            ("SC_GPUS", scalar::GPUS),
            ("SC_WIDTH", scalar::WIDTH),
            ("SC_FETCH", scalar::FETCH),
            ("SC_PERSISTENT", scalar::PERSISTENT),
            ("SC_AGGREGATED", scalar::AGGREGATED),
            ("SC_DELTA", scalar::DELTA),
            ("SC_CHECK_SIZE", scalar::CHECK_SIZE),
            ("SC_EPSILON", scalar::EPSILON),
            ("SC_DAMPING", scalar::DAMPING),
            ("SC_FENCE", scalar::FENCE),
            ("SC_BATCH_BYTES", scalar::BATCH_BYTES),
            ("SC_WAIT_POLLS", scalar::WAIT_POLLS),
        ];
        for (name, value) in defines {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "kernels/atos.cu: `#define {name} {value}` expected"
            );
        }
        assert!(source.contains(&format!("#define AT_TAG 0x{TAG:08x}u\n")));
        // The CUDA-only queue words sit in the overflow line, which the host reads one word of.
        for (name, value) in [
            ("Q_POP_MAX", queue::POP_MAX),
            ("Q_POP_COUNT", queue::POP_COUNT),
            ("Q_FREED", queue::FREED),
            ("Q_START_ALLOC", queue::START_ALLOC),
        ] {
            assert!(source.contains(&format!("#define {name} {value}\n")), "{name}");
        }
        for op in [
            "atos_bfs_worker",
            "atos_bfs_worker_wide",
            "atos_bfs_worker_wide__pre",
            "atos_pr_worker",
            "atos_color_worker",
            "atos_bfs_worker__pre",
            AGGREGATOR,
        ] {
            assert!(crate::backend::cuda::kernels::source_defines(source, op), "{op}");
        }
    }

    #[test]
    fn the_remote_filter_passes_only_values_below_every_one_sent() {
        let mut shadow = vec![u32::MAX; 4];
        let sent: Vec<bool> = [(2, 7), (2, 7), (2, 9), (2, 5), (1, 9), (2, 6)]
            .iter()
            .map(|&(t, v)| sent_lower(&mut shadow, t, v))
            .collect();
        assert_eq!(sent, [true, false, false, true, true, false]);
        assert_eq!(shadow, [u32::MAX, 9, 5, u32::MAX]);
        // A shadow that does not cover the vertex (one GPU, no filter) sends everything.
        assert!(sent_lower(&mut [], 3, 1) && sent_lower(&mut [0], 3, 1));
    }

    #[test]
    fn level_keeping_bits_follow_the_environment_value() {
        let source = crate::backend::cuda::kernels::ATOS_SOURCE;
        assert!(source.contains("#define AT_MODE_KEEP 8u\n"), "kernels/atos.cu: AT_MODE_KEEP 8");
        assert_eq!(scalar::keep_bits(Some("off")), 0);
        assert_eq!(scalar::keep_bits(Some("0")), 0);
        assert_eq!(scalar::keep_bits(Some("on")), 8);
        assert_eq!(scalar::keep_bits(Some(" 256 ")), 8 | (256 << 16));
        assert_eq!(scalar::keep_bits(Some("5000")), 8 | (512 << 16));
        assert!(source.contains("#define AT_KEEP_MAX 512\n"), "kernels/atos.cu: AT_KEEP_MAX");
        let default = scalar::KEEP_DEFAULT.map_or(0, |n| 8 | (n << 16));
        assert_eq!(scalar::keep_bits(Some("many")), default);
        assert_eq!(scalar::keep_bits(None), default);
    }

    #[test]
    fn the_worker_table_round_trips() {
        let mut table = vec![0u32; table_words(3, 2)];
        let busy = vec![
            Busy { arcs_left: 5, items: vec![(1, 10), (2, 20)] },
            Busy { arcs_left: 1, items: vec![(3 | TAG, 0)] },
        ];
        write_table(&mut table, 2, &busy);
        let back = read_table(&table, 2);
        assert_eq!(back.len(), 2);
        assert_eq!((back[0].arcs_left, back[0].items.clone()), (5, vec![(1, 10), (2, 20)]));
        assert_eq!((back[1].arcs_left, back[1].items.clone()), (1, vec![(3 | TAG, 0)]));
        assert_eq!(table_capacity(table.len(), 2), 3);
    }
}
