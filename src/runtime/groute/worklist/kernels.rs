//! The distributed worklist's kernels (seed 000 sections 4.3-4.6) and their slot layout.
//!
//! Every kernel takes the same buffers, in this order (see [`Slot`]): the graph (offsets
//! over all `n` vertices with arcs for owned vertices only, global target ids, weights), the
//! owner of every vertex, the vertex values of *all* vertices (Groute keeps every vertex's
//! value on every GPU, section 4.6.1, so halo values filter useless sends), PageRank's
//! ranks, the local worklist (a multiple-producer single-consumer circular buffer of vertex
//! ids), the control block, the work kernel's output, the deferred (low-priority) bag, and
//! one message buffer of `(vertex, value)` pairs (outgoing for SplitSend, the received
//! packet for SplitReceive) plus the pass-through buffer.
//!
//! Scalars, in order: `gpu u32`, `count u64` (items to take, or pairs in the packet),
//! `threshold u64` (soft-priority threshold; `u64::MAX` when off), `epsilon f64`,
//! `damping f64`, `max_rounds u32`, `flush_pairs u64` and `push_budget u64` (the fused
//! worker: most rounds, pairs that end the launch to be sent, and the worklist pushes the
//! host reserved for it: a round starts only while a whole Out still fits the budget),
//! `ring_pairs u64` and `parts u32` (the asynchronous send: pairs per outbox and inbox
//! ring, 0 when remote items wait for the launch's end; the run's GPUs).
//!
//! # Asynchronous send (seed 000 section 4.5, Fig. 9)
//! With `ring_pairs > 0` the fused worker does not collect remote items for the end of its
//! launch. Every round packs them into per-destination outboxes (rings in Message, counted
//! in `ctl[OUT_W + d]`) and publishes the counts in the mapped [`mail`] block; the host,
//! polling that block while the worker runs, copies each published segment to the same
//! positions of the destination's inbox (rings in Pass) and then publishes the delivery in
//! the destination's mail (`DELIV`) and the freed outbox slots in the source's (`FREED`).
//! Each round starts by taking the delivered pairs (OnReceive: take by appending, defer, or
//! drop; `ctl[CONS + s]` counts them), so a running worker sees remote work without waiting
//! for anybody's launch to end. A round packs only while every outbox has room for a whole
//! Out. With nothing to take or work, a worker *lingers* (`mail::IDLE`) until a delivery,
//! freed outbox slots or the host's `mail::STOP`; the host stops every lingering worker once
//! all running workers linger with everything delivered taken, everything published copied
//! and no copy in flight (nothing can reach them), and launches a worker again when a
//! delivery or work comes. A launch also ends when its push budget or rounds are spent. On
//! CUDA a worker lingers at most 500 us (logical GPUs sharing a physical GPU must not wait
//! on each other's grids). The simulator runs this worker persistent, one round per step: a
//! round sees the deliveries that landed before it, what it publishes reaches the host at
//! its end, and a lingering worker is an idle step that mapped writes wake.
//!
//! Termination (the host's count): with asynchronous sends a destination may report pairs
//! it took before their sender's launch reports having sent them, so the count is signed
//! and exact only when no launch or copy is in flight. Every pair is counted once when its
//! sender's launch reports it sent and once when its receiver's launch reports it taken,
//! deferred or dropped; worklist and deferred items likewise. The host declares termination
//! when the count is zero *and* nothing is in flight: then every report is in, so no item
//! sits in a worklist, bag, outbox or inbox. A lingering worker cannot hide work: it lingers
//! only with an empty worklist and everything delivered taken, and the host stops it only
//! when every running worker is in that state with nothing in flight.
//!
//! The worklist's start and end are monotonic counters (`ctl[START]`, `ctl[END]`); the
//! element of position `i` lives at `wl[i mod capacity]`. Consumption advances start; the
//! worker's own local production is *prepended* (start decreases), avoiding conflicts with
//! the receiver, which appends at end (section 4.3). The host sizes the worklist so that a
//! kernel can never overflow it (it grows the buffer first, see the runtime); a kernel that
//! would overflow anyway fails the run rather than lose an item.
//!
//! # Concurrency
//! On a real GPU the worker's kernels (work, split_send, fused, promote, grow; one stream)
//! run *concurrently* with the receiver's split_receive (a high-priority stream); receivers
//! are serialised among themselves, promote runs only while nothing else is in flight on
//! its device (the host holds received packets until it ends: the CUDA promote compacts
//! through the worklist's free slots) and grow only while the device is quiet. The contract is written so that this is safe:
//! - **Publishing appends.** Appending is three counters: an appender reserves slots by
//!   advancing `END_ALLOC` (an atomic add), writes its items, then adds their number to
//!   `END_WRITTEN`; whoever brings `END_WRITTEN` level with `END_ALLOC` publishes
//!   `END = END_WRITTEN` (an atomic max). Several appenders may be active at once (PageRank's
//!   split_send and fused worker append on the worker stream while a receiver appends), so
//!   a single "last one publishes" rule would expose slots another appender has reserved
//!   but not written; with the written count, `END` only ever covers written slots.
//!   Readers (work, fused) take items below the *published* `END` only. The Rust kernels
//!   run alone, so after each of them `END == END_ALLOC == END_WRITTEN`.
//! - Only the worker moves `START` (consuming, prepending); the deferred bag is appended to
//!   by worker and receiver alike (an atomic add on `ctl[DEFERRED]`) and read only by
//!   promote. Worker and receiver write disjoint report fields.
//! - Values are updated with atomics: BFS/SSSP an atomic min ("take if the new value is
//!   below the old"), PageRank an atomic f64 add for residuals (the add's old value decides
//!   the epsilon crossing), an atomic exchange to take a residual (work) or a halo residual
//!   (Pack), an atomic add to the rank. A kernel may therefore observe a concurrent
//!   receiver's updates at any point: a value may be lower (BFS/SSSP) or a residual larger
//!   than when the item was queued, GetPrio is read when an item is routed, and a Pack
//!   ships the value current at packing. Every such interleaving is one the sequential
//!   contract could produce by running the receiver earlier or later, so results stay
//!   correct; only the amount of redundant work differs.
//! - The order of the items a kernel writes (Out, the prepended or appended worklist items,
//!   Message, Pass, the deferred bag after promote) is unspecified; only the multiset is.
//!
//! Callbacks (Fig. 10) per application: `OnSend` (owned: take; else pass), `Pack`
//! (`(v, value)`; PageRank sends the accumulated halo residual and zeroes it), `Unpack`,
//! `OnReceive` (owned: take if it improves, else drop; not owned: pass), `GetPrio` (the
//! vertex value: BFS level, SSSP distance).

use crate::backend::{
    BackendError, HostData, KernelContext, KernelDef, KernelRegistry, RemoteOp, StepNext,
};

/// Buffer slots of every worklist kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Slot {
    /// `u64[n + 1]` CSR offsets over all vertices (arcs of owned vertices only).
    Offsets,
    /// `u32` arc targets (global ids).
    Targets,
    /// `u32` arc weights: integers, or `f32` bits for real weights (empty unless the
    /// application reads weights).
    Weights,
    /// `u32[n]` owner GPU of every vertex.
    Owner,
    /// `u32[n]` levels/distances, or `f64[n]` PageRank residuals.
    Values,
    /// `f64[n]` PageRank ranks (empty otherwise).
    Rank,
    /// `u32[capacity]` local worklist (circular).
    Worklist,
    /// `u64[CTL_LEN]` control block and kernel reports.
    Ctl,
    /// `u32[out capacity]` the work kernel's output (vertex ids).
    Out,
    /// `u32[capacity]` deferred (low-priority) items.
    Deferred,
    /// `u32[2 * pairs]` message: outgoing (SplitSend) or received (SplitReceive).
    Message,
    /// `u32[2 * pairs]` pass-through pairs (SplitReceive); with asynchronous sends, the
    /// fused worker's inboxes (one ring of `ring_pairs` pairs per source GPU).
    Pass,
    /// `u64[mail::LEN]` mapped host memory of the asynchronous send ([`mail`]): what the
    /// fused worker published and what the host delivered, read without stream order; an
    /// empty buffer when sends wait for the launch's end.
    Mail,
}

/// Number of buffer slots.
pub const SLOTS: usize = 13;

/// Most GPUs the asynchronous send addresses (one outbox and one inbox per peer).
pub const MAX_PARTS: usize = 16;

/// The asynchronous send's mapped block of one GPU (`u64` indices; seed 000 section 4.5:
/// the worker's outgoing segments are routed by the host while the worker runs).
///
/// Outbox `d` is the ring `[d * ring_pairs, (d + 1) * ring_pairs)` of pairs of Message, and
/// inbox `s` the same ring of Pass; a pair's monotonic position `p` lives at `p mod
/// ring_pairs` in both, so the host copies a segment to the same positions. Each word has
/// one writer: the kernel's (a plain store after a system fence, read by the host with a
/// volatile load) or the host's (read by the kernel with a volatile load before a fence).
pub mod mail {
    /// Kernel: pairs published into outbox `d` (`PUB + d`), monotonic over the run.
    pub const PUB: usize = 0;
    /// Kernel: pairs consumed from inbox `s` (`CONS + s`).
    pub const CONS: usize = 16;
    /// Host: pairs delivered into inbox `s` (`DELIV + s`): copied, and the copy complete.
    pub const DELIV: usize = 32;
    /// Host: pairs of outbox `d` copied out (`FREED + d`): its slots below may be reused.
    pub const FREED: usize = 48;
    /// Kernel: 1 while the worker lingers idle (nothing to take or work; `PUB` and `CONS`
    /// as published before it), 0 once it works again (written before `CONS` moves).
    pub const IDLE: usize = 64;
    /// Host: 1 asks a lingering worker to end its launch (0 when the host launches it).
    pub const STOP: usize = 65;
    /// Length of the block.
    pub const LEN: usize = 72;
}

/// Control block layout (`u64` indices).
pub mod ctl {
    /// Worklist start (monotonic).
    pub const START: usize = 0;
    /// Worklist end (monotonic).
    pub const END: usize = 1;
    /// Deferred items.
    pub const DEFERRED: usize = 2;
    /// Items the work kernel left in Out for SplitSend.
    pub const OUT_LEN: usize = 3;
    /// Worklist end reserved by appenders (`>= END_WRITTEN >= END`; see the module docs).
    pub const END_ALLOC: usize = 4;
    /// Worklist slots appenders have finished writing, counted from the same origin.
    pub const END_WRITTEN: usize = 5;
    /// Worker report: items consumed by the work kernel.
    pub const W_CONSUMED: usize = 8;
    /// Worker report: items taken into the worklist.
    pub const W_TAKEN: usize = 9;
    /// Worker report: items deferred.
    pub const W_DEFERRED: usize = 10;
    /// Worker report: pairs packed for sending.
    pub const W_SENT: usize = 11;
    /// Worker report: items dropped.
    pub const W_DROPPED: usize = 12;
    /// Worker report: lowest priority deferred (`u64::MAX` if none).
    pub const W_MIN_PRIO: usize = 13;
    /// Worker report: edges visited.
    pub const W_EDGES: usize = 14;
    /// Worker report: internal rounds (fused worker).
    pub const W_ROUNDS: usize = 15;
    /// Receiver report: pairs processed.
    pub const R_PROCESSED: usize = 16;
    /// Receiver report: items taken into the worklist.
    pub const R_TAKEN: usize = 17;
    /// Receiver report: items deferred.
    pub const R_DEFERRED: usize = 18;
    /// Receiver report: pairs passed on.
    pub const R_PASSED: usize = 19;
    /// Receiver report: pairs dropped.
    pub const R_DROPPED: usize = 20;
    /// Receiver report: lowest priority deferred.
    pub const R_MIN_PRIO: usize = 21;
    /// Worker report (asynchronous send): inbox pairs the fused worker processed (their
    /// outcomes are in `W_TAKEN`, `W_DEFERRED` and `W_DROPPED`).
    pub const W_RECEIVED: usize = 22;
    /// Promote report: items promoted to the worklist.
    pub const P_PROMOTED: usize = 24;
    /// Promote report: items still deferred.
    pub const P_REMAINING: usize = 25;
    /// Promote report: lowest priority still deferred.
    pub const P_MIN_PRIO: usize = 26;
    /// Asynchronous send: pairs written to outbox `d` over the run (`OUT_W + d`).
    pub const OUT_W: usize = 32;
    /// Asynchronous send: pairs consumed from inbox `s` over the run (`CONS + s`).
    pub const CONS: usize = 48;
    /// Asynchronous send, the CUDA fused worker's scratch: the current round takes inbox
    /// `s` up to `RTO + s` (the simulator's kernel keeps these ranges to itself).
    pub const RTO: usize = 64;
    /// Length of the control block: every per-GPU array above has `MAX_PARTS` words
    /// (`kernels/groute_worklist.cu` addresses `RTO + s` for every source `s`, so a block
    /// that ended at `RTO` had the fused worker write past its allocation on CUDA).
    pub const LEN: usize = RTO + super::MAX_PARTS;
    /// Initial value of start and end: room to prepend without wrapping below zero.
    pub const ORIGIN: u64 = 1 << 40;
}

/// The registered names of one application's five worklist kernels (their CUDA names are
/// the same, in `kernels/groute_worklist.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorklistKernels {
    /// Take a batch and apply the operator.
    pub work: &'static str,
    /// SplitSend.
    pub split_send: &'static str,
    /// SplitReceive.
    pub split_receive: &'static str,
    /// Promote deferred items below a new threshold.
    pub promote: &'static str,
    /// The fused worker.
    pub fused: &'static str,
}

/// What a vertex operator sees: the vertex, its arcs, and the run's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Visit<'a> {
    /// The vertex being worked (global id, owned by this GPU).
    pub v: u32,
    /// Targets of its out-arcs (global ids).
    pub targets: &'a [u32],
    /// Weights of its out-arcs as 32-bit words: integers, or `f32` bits for real weights
    /// (empty unless the application uploads weights).
    pub weights: &'a [u32],
    /// Owner GPU of every vertex.
    pub owner: &'a [u32],
    /// This GPU.
    pub gpu: u32,
    /// The application's tolerance (`epsilon` scalar).
    pub epsilon: f64,
    /// The application's damping factor (`damping` scalar).
    pub damping: f64,
}

/// The work kernel's output: the vertices the operator updated, for SplitSend.
pub struct Out<'a> {
    items: &'a mut [u32],
    len: usize,
    overflowed: bool,
}

impl Out<'_> {
    /// Queues vertex `t` for SplitSend (the batch was planned so that it fits).
    pub fn push(&mut self, t: u32) {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = t;
                self.len += 1;
            }
            None => self.overflowed = true,
        }
    }
}

/// What the cost model is told, accumulated by the kernel bodies and the operators.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Work items.
    pub items: u64,
    /// Edges visited.
    pub edges: u64,
    /// Atomic operations.
    pub atomics: u64,
    /// Bytes read from device memory.
    pub bytes_read: u64,
    /// Bytes written to device memory.
    pub bytes_written: u64,
}

/// An application of the distributed worklist: its callbacks (seed 000 Fig. 10: the
/// operator, `Pack`, `OnReceive`, `GetPrio`; `Unpack` and `OnSend` are the runtime's) as
/// the simulator's kernels run them. Algorithms implement it in `crate::algo`; the CUDA
/// versions are functors in `kernels/groute_worklist.cu` with the same contract.
pub trait WorklistOperator: 'static {
    /// The application's kernel names.
    const KERNELS: WorklistKernels;
    /// Whether a GPU prepends its own production (BFS, SSSP: section 4.3) rather than
    /// appending it (PageRank, so that a residual keeps accumulating while it waits).
    const PREPEND_OWN: bool;
    /// Whether `kernels/groute_worklist.cu` has its functor (the kernels are registered
    /// with a CUDA name); `false` keeps the application simulator-only, and the CUDA
    /// backend refuses it before any work.
    const ON_CUDA: bool = true;
    /// The operator on owned vertex `visit.v` (push-style): updates `values` (and `rank`)
    /// and pushes every vertex to route onwards into `out`; adds its memory traffic beyond
    /// the targets (weights, ranks) to `counts`. Returns the arcs it visited (0 when it
    /// skipped them, as PageRank does for a vertex without residual).
    fn visit(
        visit: &Visit<'_>,
        values: &mut HostData,
        rank: &mut HostData,
        out: &mut Out<'_>,
        counts: &mut Counts,
    ) -> Result<u64, BackendError>;
    /// Pack: the value sent with remote vertex `v` (it may take it from the halo, as
    /// PageRank's accumulated residual).
    fn pack(values: &mut HostData, v: u32) -> Result<u32, BackendError>;
    /// OnReceive for owned vertex `v`: combines the received `value`; whether `v` is taken
    /// into the worklist (else the pair is dropped).
    fn on_receive(
        values: &mut HostData,
        v: u32,
        value: u32,
        epsilon: f64,
    ) -> Result<bool, BackendError>;
    /// GetPrio: the priority of `v` (lower first); 0 for applications without one.
    fn priority(values: &HostData, v: u32) -> Result<u64, BackendError>;
}

/// Registers application `Op`'s five worklist kernels.
pub fn register_app<Op: WorklistOperator>(registry: &mut KernelRegistry) {
    let k = Op::KERNELS;
    registry.register(KernelDef {
        name: k.work,
        contract: "take the longest prefix of the first min(count, END - START) items (END \
                   as published) whose out-degrees sum to at most Out's capacity (at least \
                   one item; an error if the first alone does not fit) and apply the \
                   application's operator to each (push-style, atomic value updates), \
                   writing every vertex it updates to Out in unspecified order",
        sim: work_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(k.work),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: k.split_send,
        contract: "SplitSend: route every Out item by OnSend: owned items are prepended to \
                   the worklist (appended where the application appends its own \
                   production; deferred when GetPrio >= threshold), others are packed as \
                   (vertex, value) into Message",
        sim: split_send_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(k.split_send),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: k.split_receive,
        contract: "SplitReceive (high-priority stream, concurrent with the worker): for each \
                   received (vertex, value) pair, OnReceive: owned and improving: take \
                   (append to the worklist through END_ALLOC / END_WRITTEN / END, or \
                   defer); owned, not improving: drop; else pass to Pass",
        sim: split_receive_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(k.split_receive),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: k.promote,
        contract: "move deferred items whose GetPrio is below the new consensus threshold \
                   to the worklist's end (published as appends); compact the rest (in \
                   unspecified order)",
        sim: promote_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(k.promote),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: k.fused,
        contract: "fused worker: rounds of (take a batch by the work kernel's rule, work, \
                   SplitSend) inside one persistent launch until the worklist is empty (END \
                   as published), `max_rounds` rounds ran, `flush_pairs` pairs wait to be \
                   sent, or another round could push past `push_budget`; Out's contents \
                   afterwards are unspecified",
        sim: fused_kernel::<Op>,
        cuda_name: Op::ON_CUDA.then_some(k.fused),
        remote_args: &[],
    });
}

/// Registers the worklist's own kernels (the applications register theirs with
/// [`register_app`]).
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "groute_wl_grow",
        contract: "copy the live items of the worklist (buffer 0, control block buffer 1) \
                   into the larger worklist (buffer 2), unwrapped, keeping start and end",
        sim: grow_kernel,
        cuda_name: Some("groute_wl_grow"),
        remote_args: &[],
    });
}

fn kernel_error(kernel: &str, message: String) -> BackendError {
    BackendError::Kernel { kernel: kernel.to_string(), message }
}

/// The buffers of a worklist kernel, typed.
struct Args<'a> {
    offsets: &'a [u64],
    targets: &'a [u32],
    weights: &'a [u32],
    owner: &'a [u32],
    values: &'a mut HostData,
    rank: &'a mut HostData,
    wl: &'a mut [u32],
    ctl: &'a mut [u64],
    out: &'a mut [u32],
    deferred: &'a mut [u32],
    message: &'a mut [u32],
    pass: &'a mut [u32],
    mail: &'a mut HostData,
}

struct Scalars {
    gpu: u32,
    count: u64,
    threshold: u64,
    epsilon: f64,
    damping: f64,
    max_rounds: u32,
    flush_pairs: u64,
    push_budget: u64,
    /// Pairs per outbox and inbox ring; 0: remote items wait in Message for the launch's
    /// end (the send at launch end).
    ring_pairs: u64,
    /// GPUs of the run.
    parts: u32,
}

fn scalars(ctx: &KernelContext<'_>) -> Result<Scalars, BackendError> {
    Ok(Scalars {
        gpu: ctx.scalar_u32(0)?,
        count: ctx.scalar_u64(1)?,
        threshold: ctx.scalar_u64(2)?,
        epsilon: ctx.scalar_f64(3)?,
        damping: ctx.scalar_f64(4)?,
        max_rounds: ctx.scalar_u32(5)?,
        flush_pairs: ctx.scalar_u64(6)?,
        push_budget: ctx.scalar_u64(7)?,
        ring_pairs: ctx.scalar_u64(8)?,
        parts: ctx.scalar_u32(9)?,
    })
}

fn args<'a>(buffers: &'a mut [HostData]) -> Result<Args<'a>, BackendError> {
    let [
        offsets,
        targets,
        weights,
        owner,
        values,
        rank,
        wl,
        ctl,
        out,
        deferred,
        message,
        pass,
        mail,
    ] = buffers
    else {
        return Err(BackendError::Usage(format!(
            "worklist kernels take {SLOTS} buffers, got {}",
            buffers.len()
        )));
    };
    Ok(Args {
        offsets: offsets.as_u64()?,
        targets: targets.as_u32()?,
        weights: weights.as_u32()?,
        owner: owner.as_u32()?,
        values,
        rank,
        wl: wl.as_u32_mut()?,
        ctl: ctl.as_u64_mut()?,
        out: out.as_u32_mut()?,
        deferred: deferred.as_u32_mut()?,
        message: message.as_u32_mut()?,
        pass: pass.as_u32_mut()?,
        mail,
    })
}

impl Counts {
    fn charge(&self, ctx: &mut KernelContext<'_>) {
        let e = &mut ctx.effects;
        e.items += self.items;
        e.edges += self.edges;
        e.atomics += self.atomics;
        e.bytes_read += self.bytes_read;
        e.bytes_written += self.bytes_written;
    }
}

/// The work kernel body: consumes up to `count` items; returns (consumed, out_len).
fn work<Op: WorklistOperator>(
    a: &mut Args<'_>,
    s: &Scalars,
    count: u64,
    counts: &mut Counts,
) -> Result<(u64, usize), BackendError> {
    let capacity = a.wl.len() as u64;
    let start = a.ctl[ctl::START];
    let available = a.ctl[ctl::END] - start;
    let candidates = count.min(available);
    // The batch: the longest prefix of the candidates whose out-degrees fit Out (a parallel
    // kernel can fix it before it starts: a prefix sum of degrees), at least one item.
    let item = |i: u64| a.wl[((start + i) % capacity) as usize] as usize;
    let mut take = 0u64;
    let mut arcs_total = 0u64;
    while take < candidates {
        let v = item(take);
        let arcs = a.offsets[v + 1] - a.offsets[v];
        if arcs_total + arcs > a.out.len() as u64 {
            if take == 0 {
                return Err(BackendError::Usage(format!(
                    "work output buffer of {} items cannot hold the {arcs} arcs of vertex {v}",
                    a.out.len()
                )));
            }
            break; // back-pressure: the rest stays in the worklist
        }
        arcs_total += arcs;
        take += 1;
    }
    let mut out = Out { items: &mut *a.out, len: 0, overflowed: false };
    for consumed in 0..take {
        let v = a.wl[((start + consumed) % capacity) as usize];
        let (lo, hi) = (a.offsets[v as usize] as usize, a.offsets[v as usize + 1] as usize);
        let visit = Visit {
            v,
            targets: &a.targets[lo..hi],
            weights: a.weights.get(lo..hi).unwrap_or_default(),
            owner: a.owner,
            gpu: s.gpu,
            epsilon: s.epsilon,
            damping: s.damping,
        };
        let arcs = Op::visit(&visit, a.values, a.rank, &mut out, counts)?;
        counts.items += 1;
        counts.bytes_read += 4 + 16 + arcs * 8;
        counts.edges += arcs;
        counts.atomics += arcs;
    }
    if out.overflowed {
        return Err(BackendError::Usage(format!(
            "work output of {} items overflowed although the batch was planned to fit",
            a.out.len()
        )));
    }
    let out_len = out.len;
    a.ctl[ctl::START] += take;
    counts.bytes_written += out_len as u64 * 4;
    Ok((take, out_len))
}

/// Per-kernel routing counts.
#[derive(Default)]
struct Split {
    taken: u64,
    deferred: u64,
    sent: u64,
    dropped: u64,
    min_prio: u64,
}

/// Puts an owned item into the worklist (`prepend` at start, else append at end) or the
/// deferred bag when its priority is at or above the threshold.
fn take_item<Op: WorklistOperator>(
    a: &mut Args<'_>,
    v: u32,
    threshold: u64,
    prepend: bool,
    split: &mut Split,
) -> Result<(), BackendError> {
    let prio = Op::priority(a.values, v)?;
    if prio >= threshold {
        let len = a.ctl[ctl::DEFERRED] as usize;
        let Some(slot) = a.deferred.get_mut(len) else {
            return Err(BackendError::Usage(format!(
                "deferred bag of {} items overflowed (the host sizes it first: runtime bug)",
                a.deferred.len()
            )));
        };
        *slot = v;
        a.ctl[ctl::DEFERRED] += 1;
        split.deferred += 1;
        split.min_prio = split.min_prio.min(prio);
        return Ok(());
    }
    let capacity = a.wl.len() as u64;
    if a.ctl[ctl::END_ALLOC] - a.ctl[ctl::START] >= capacity {
        return Err(BackendError::Usage(format!(
            "worklist of {capacity} items overflowed (the host grows it first: runtime bug)"
        )));
    }
    if prepend {
        a.ctl[ctl::START] -= 1;
        a.wl[(a.ctl[ctl::START] % capacity) as usize] = v;
    } else {
        append(a.ctl, a.wl, v);
    }
    split.taken += 1;
    Ok(())
}

/// Appends `v` at the worklist's end: reserve (`END_ALLOC`), write, count it written
/// (`END_WRITTEN`) and publish (`END`); run alone, the three stay equal.
fn append(ctl_block: &mut [u64], wl: &mut [u32], v: u32) {
    let at = ctl_block[ctl::END_ALLOC];
    ctl_block[ctl::END_ALLOC] += 1;
    wl[(at % wl.len() as u64) as usize] = v;
    ctl_block[ctl::END_WRITTEN] += 1;
    if ctl_block[ctl::END_WRITTEN] == ctl_block[ctl::END_ALLOC] {
        ctl_block[ctl::END] = ctl_block[ctl::END].max(ctl_block[ctl::END_WRITTEN]);
    }
}

/// SplitSend over `out[..out_len]`; returns the routing counts (pairs packed in Message).
fn split_send<Op: WorklistOperator>(
    a: &mut Args<'_>,
    s: &Scalars,
    out_len: usize,
    split: &mut Split,
    counts: &mut Counts,
) -> Result<(), BackendError> {
    // `split` accumulates over a fused launch's rounds: charge this call's pushes only.
    let before = split.taken * 4 + split.deferred * 4 + split.sent * 8;
    for i in 0..out_len {
        let v = a.out[i];
        if a.owner[v as usize] == s.gpu {
            take_item::<Op>(a, v, s.threshold, Op::PREPEND_OWN, split)?;
        } else if s.ring_pairs > 0 {
            // Asynchronous send: into the owner's outbox (the round was started only with
            // room for a whole Out in every outbox).
            let dest = a.owner[v as usize] as usize;
            let value = Op::pack(a.values, v)?;
            let p = a.ctl[ctl::OUT_W + dest];
            let at = 2 * (dest as u64 * s.ring_pairs + p % s.ring_pairs) as usize;
            let Some(pair) = a.message.get_mut(at..at + 2) else {
                return Err(BackendError::Usage(format!(
                    "outbox {dest} of {} pairs is out of the {}-pair message area",
                    s.ring_pairs,
                    a.message.len() / 2
                )));
            };
            pair.copy_from_slice(&[v, value]);
            a.ctl[ctl::OUT_W + dest] = p + 1;
            split.sent += 1;
        } else {
            let value = Op::pack(a.values, v)?;
            let at = 2 * split.sent as usize;
            let Some(pair) = a.message.get_mut(at..at + 2) else {
                return Err(BackendError::Usage(format!(
                    "message buffer of {} pairs overflowed",
                    a.message.len() / 2
                )));
            };
            pair.copy_from_slice(&[v, value]);
            split.sent += 1;
        }
    }
    counts.items += out_len as u64;
    counts.atomics += (out_len as u64).div_ceil(32); // warp-aggregated reservations
    counts.bytes_read += out_len as u64 * 8;
    counts.bytes_written += split.taken * 4 + split.deferred * 4 + split.sent * 8 - before;
    Ok(())
}

fn write_worker_report(
    ctl_block: &mut [u64],
    consumed: u64,
    split: &Split,
    edges: u64,
    rounds: u64,
) {
    ctl_block[ctl::W_CONSUMED] = consumed;
    ctl_block[ctl::W_TAKEN] = split.taken;
    ctl_block[ctl::W_DEFERRED] = split.deferred;
    ctl_block[ctl::W_SENT] = split.sent;
    ctl_block[ctl::W_DROPPED] = split.dropped;
    ctl_block[ctl::W_MIN_PRIO] = split.min_prio;
    ctl_block[ctl::W_EDGES] = edges;
    ctl_block[ctl::W_ROUNDS] = rounds;
}

fn work_kernel<Op: WorklistOperator>(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let (consumed, out_len) = work::<Op>(&mut a, &s, s.count, &mut counts)?;
    let split = Split { min_prio: u64::MAX, ..Split::default() };
    write_worker_report(a.ctl, consumed, &split, counts.edges, 1);
    a.ctl[ctl::OUT_LEN] = out_len as u64;
    counts.charge(ctx);
    Ok(())
}

fn split_send_kernel<Op: WorklistOperator>(
    ctx: &mut KernelContext<'_>,
) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let consumed = a.ctl[ctl::W_CONSUMED];
    let edges = a.ctl[ctl::W_EDGES];
    let out_len = std::mem::take(&mut a.ctl[ctl::OUT_LEN]) as usize;
    let mut split = Split { min_prio: u64::MAX, ..Split::default() };
    split_send::<Op>(&mut a, &s, out_len, &mut split, &mut counts)?;
    write_worker_report(a.ctl, consumed, &split, edges, 1);
    counts.charge(ctx);
    Ok(())
}

fn split_receive_kernel<Op: WorklistOperator>(
    ctx: &mut KernelContext<'_>,
) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let pairs = s.count as usize;
    if 2 * pairs > a.message.len() {
        return Err(kernel_error(
            Op::KERNELS.split_receive,
            format!("{pairs} pairs do not fit the {}-element packet", a.message.len()),
        ));
    }
    let mut split = Split { min_prio: u64::MAX, ..Split::default() };
    let mut passed = 0usize;
    for i in 0..pairs {
        let (v, value) = (a.message[2 * i], a.message[2 * i + 1]);
        if a.owner.get(v as usize).copied() != Some(s.gpu) {
            if a.owner.get(v as usize).is_none() {
                return Err(kernel_error(
                    Op::KERNELS.split_receive,
                    format!("received vertex {v} is out of range"),
                ));
            }
            a.pass[2 * passed] = v;
            a.pass[2 * passed + 1] = value;
            passed += 1;
            continue;
        }
        if Op::on_receive(a.values, v, value, s.epsilon)? {
            take_item::<Op>(&mut a, v, s.threshold, false, &mut split)?;
        } else {
            split.dropped += 1;
        }
    }
    a.ctl[ctl::R_PROCESSED] = pairs as u64;
    a.ctl[ctl::R_TAKEN] = split.taken;
    a.ctl[ctl::R_DEFERRED] = split.deferred;
    a.ctl[ctl::R_PASSED] = passed as u64;
    a.ctl[ctl::R_DROPPED] = split.dropped;
    a.ctl[ctl::R_MIN_PRIO] = split.min_prio;
    counts.items += pairs as u64;
    counts.atomics += pairs as u64;
    counts.bytes_read += pairs as u64 * 16;
    counts.bytes_written += (split.taken + split.deferred) * 4 + passed as u64 * 8;
    counts.charge(ctx);
    Ok(())
}

fn promote_kernel<Op: WorklistOperator>(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let a = args(ctx.buffers)?;
    let len = a.ctl[ctl::DEFERRED] as usize;
    let capacity = a.wl.len() as u64;
    let mut kept = 0usize;
    let mut promoted = 0u64;
    let mut min_prio = u64::MAX;
    for i in 0..len {
        let v = a.deferred[i];
        let prio = Op::priority(a.values, v)?;
        if prio < s.threshold {
            if a.ctl[ctl::END_ALLOC] - a.ctl[ctl::START] >= capacity {
                return Err(BackendError::Usage(format!(
                    "worklist of {capacity} items overflowed while promoting (runtime bug)"
                )));
            }
            append(a.ctl, a.wl, v);
            promoted += 1;
        } else {
            a.deferred[kept] = v;
            kept += 1;
            min_prio = min_prio.min(prio);
        }
    }
    a.ctl[ctl::DEFERRED] = kept as u64;
    a.ctl[ctl::P_PROMOTED] = promoted;
    a.ctl[ctl::P_REMAINING] = kept as u64;
    a.ctl[ctl::P_MIN_PRIO] = min_prio;
    ctx.effects.items += len as u64;
    ctx.effects.bytes_read += len as u64 * 8;
    ctx.effects.bytes_written += len as u64 * 4;
    Ok(())
}

fn fused_kernel<Op: WorklistOperator>(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    if s.ring_pairs > 0 {
        return fused_async_step::<Op>(ctx, &s);
    }
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let mut split = Split { min_prio: u64::MAX, ..Split::default() };
    let mut consumed = 0u64;
    let mut rounds = 0u64;
    // Leave room in Message for one more full Out of remote items.
    let room = (a.message.len() / 2).saturating_sub(a.out.len()) as u64;
    while rounds < u64::from(s.max_rounds.max(1)) {
        let pushed = split.taken + split.deferred;
        if a.ctl[ctl::END] == a.ctl[ctl::START] || pushed + a.out.len() as u64 > s.push_budget {
            break;
        }
        let (c, out_len) = work::<Op>(&mut a, &s, s.count, &mut counts)?;
        consumed += c;
        rounds += 1;
        split_send::<Op>(&mut a, &s, out_len, &mut split, &mut counts)?;
        if split.sent >= s.flush_pairs.min(room) {
            break;
        }
    }
    let edges = counts.edges;
    write_worker_report(a.ctl, consumed, &split, edges, rounds);
    counts.charge(ctx);
    ctx.effects.rounds = rounds;
    Ok(())
}

/// One round of the fused worker with asynchronous sends (a persistent kernel's step; see
/// the module docs): take the delivered pairs, work one batch if the budget and every
/// outbox allow, publish the outboxes' and inboxes' counts at the step's end, and go on
/// while there is something either could do.
fn fused_async_step<Op: WorklistOperator>(
    ctx: &mut KernelContext<'_>,
    s: &Scalars,
) -> Result<(), BackendError> {
    let first = ctx.step == 0;
    let mail_id = ctx.buffer_ids[Slot::Mail as usize];
    let parts = s.parts as usize;
    let me = s.gpu as usize;
    if parts > MAX_PARTS || me >= parts {
        return Err(kernel_error(
            Op::KERNELS.fused,
            format!("gpu {me} of {parts}: the asynchronous send addresses at most {MAX_PARTS}"),
        ));
    }
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let mail: Vec<u64> = a.mail.as_u64()?.to_vec();
    if mail.len() < mail::LEN {
        return Err(kernel_error(
            Op::KERNELS.fused,
            format!("the mail block has {} words, needs {}", mail.len(), mail::LEN),
        ));
    }
    if first {
        write_worker_report(a.ctl, 0, &Split { min_prio: u64::MAX, ..Split::default() }, 0, 0);
        a.ctl[ctl::W_RECEIVED] = 0;
    }
    let c = &a.ctl;
    let mut split = Split {
        taken: c[ctl::W_TAKEN],
        deferred: c[ctl::W_DEFERRED],
        sent: c[ctl::W_SENT],
        dropped: c[ctl::W_DROPPED],
        min_prio: c[ctl::W_MIN_PRIO],
    };
    let (mut consumed, mut edges) = (c[ctl::W_CONSUMED], c[ctl::W_EDGES]);
    let peers = || (0..parts).filter(move |&p| p != me);
    // Inboxes: every delivered pair the push budget allows.
    let mut received = 0u64;
    for src in peers() {
        let from = a.ctl[ctl::CONS + src];
        let room = s.push_budget.saturating_sub(split.taken + split.deferred);
        let k = mail[mail::DELIV + src].saturating_sub(from).min(room);
        for p in from..from + k {
            let at = 2 * (src as u64 * s.ring_pairs + p % s.ring_pairs) as usize;
            let Some(&[v, value]) = a.pass.get(at..at + 2) else {
                return Err(kernel_error(
                    Op::KERNELS.fused,
                    format!("inbox {src} is out of the {}-pair inbox area", a.pass.len() / 2),
                ));
            };
            if a.owner.get(v as usize).copied() != Some(s.gpu) {
                return Err(kernel_error(
                    Op::KERNELS.fused,
                    format!("inbox {src} holds vertex {v}, which gpu{me} does not own"),
                ));
            }
            if Op::on_receive(a.values, v, value, s.epsilon)? {
                take_item::<Op>(&mut a, v, s.threshold, false, &mut split)?;
            } else {
                split.dropped += 1;
            }
        }
        a.ctl[ctl::CONS + src] = from + k;
        received += k;
    }
    let out_cap = a.out.len() as u64;
    // A round packs only with room for a whole Out in every outbox (the host frees slots
    // as its copies complete).
    let outboxes_have_room = |ctl_block: &[u64]| {
        peers().all(|d| {
            let used = ctl_block[ctl::OUT_W + d].saturating_sub(mail[mail::FREED + d]);
            used + out_cap <= s.ring_pairs
        })
    };
    let max_rounds = u64::from(s.max_rounds.max(1));
    let may_work = |ctl_block: &[u64], split: &Split| {
        ctl_block[ctl::END] != ctl_block[ctl::START]
            && ctl_block[ctl::W_ROUNDS] < max_rounds
            && split.taken + split.deferred + out_cap <= s.push_budget
            && outboxes_have_room(ctl_block)
    };
    let worked = may_work(a.ctl, &split);
    if worked {
        let (c, out_len) = work::<Op>(&mut a, s, s.count, &mut counts)?;
        consumed += c;
        split_send::<Op>(&mut a, s, out_len, &mut split, &mut counts)?;
    }
    edges += counts.edges;
    a.ctl[ctl::W_ROUNDS] += 1;
    a.ctl[ctl::W_RECEIVED] += received;
    write_worker_report(a.ctl, consumed, &split, edges, a.ctl[ctl::W_ROUNDS]);
    // Go on while a round could take a delivered pair or work a batch (as far as this
    // round saw the mail; later deliveries wake the host, which launches again).
    let budget_left = s.push_budget > split.taken + split.deferred;
    let inbox_left = peers().any(|src| mail[mail::DELIV + src] > a.ctl[ctl::CONS + src]);
    let go_on = (budget_left && inbox_left) || may_work(a.ctl, &split);
    // Nothing to do: linger until a delivery, freed outbox slots or the host's stop
    // (mapped writes wake it), unless the host already asked it to end; a launch out of
    // budget or rounds ends.
    let linger = !go_on
        && mail[mail::STOP] == 0
        && split.taken + split.deferred + out_cap <= s.push_budget
        && a.ctl[ctl::W_ROUNDS] < max_rounds;
    let published: Vec<u64> = (0..parts).map(|d| a.ctl[ctl::OUT_W + d]).collect();
    let consumed_in: Vec<u64> = (0..parts).map(|src| a.ctl[ctl::CONS + src]).collect();
    counts.items += received;
    counts.atomics += received;
    counts.bytes_read += received * 16;
    counts.charge(ctx);
    // Published at the step's end (the host sees them after the round's time).
    ctx.effects.remote.push(RemoteOp::Store {
        buffer: mail_id,
        offset: mail::PUB,
        data: HostData::U64(published),
    });
    ctx.effects.remote.push(RemoteOp::Store {
        buffer: mail_id,
        offset: mail::CONS,
        data: HostData::U64(consumed_in),
    });
    ctx.effects.remote.push(RemoteOp::Store {
        buffer: mail_id,
        offset: mail::IDLE,
        data: HostData::U64(vec![u64::from(linger)]),
    });
    // Every round after the launch's first ends in a grid barrier.
    ctx.effects.rounds = u64::from(!first);
    ctx.effects.next = if go_on {
        StepNext::Continue
    } else if linger {
        StepNext::Idle
    } else {
        StepNext::Done
    };
    Ok(())
}

fn grow_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let [old, ctl_block, new] = ctx.buffers::<3>()?;
    let (old, ctl_block, new) = (old.as_u32()?, ctl_block.as_u64()?, new.as_u32_mut()?);
    let (start, end) = (ctl_block[ctl::START], ctl_block[ctl::END]);
    let (old_cap, new_cap) = (old.len() as u64, new.len() as u64);
    if end - start > new_cap {
        return Err(BackendError::Usage(format!(
            "growing a worklist of {} live items into {new_cap} slots",
            end - start
        )));
    }
    for i in start..end {
        new[(i % new_cap) as usize] = old[(i % old_cap) as usize];
    }
    ctx.effects.items = end - start;
    ctx.effects.bytes_read = (end - start) * 4;
    ctx.effects.bytes_written = (end - start) * 4;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MAX_PARTS, SLOTS, Slot, ctl, mail};

    /// The CUDA kernels, which index the same blocks by their own `#define`s.
    const CUDA: &str = include_str!("../../../../kernels/groute_worklist.cu");

    /// The CUDA source's `#define {prefix}NAME number` lines: (NAME, number, whether its
    /// comment marks it a per-GPU array, `// + d:` or `// + s:`).
    fn defines(prefix: &str) -> Vec<(String, usize, bool)> {
        CUDA.lines()
            .filter_map(|line| {
                let mut words = line.strip_prefix("#define ")?.split_whitespace();
                let name = words.next()?.strip_prefix(prefix)?;
                let value = words.next()?.parse().ok()?;
                Some((name.to_string(), value, line.contains("// + ")))
            })
            .collect()
    }

    /// Every word the kernels address in the control block lies inside it: a per-GPU array
    /// has `MAX_PARTS` words. The fused worker's inbox ranges (`C_RTO + s`) once lay past
    /// the 64 words the runtime allocates, so on CUDA the asynchronous worker wrote into
    /// whatever allocation followed the block and read back what else wrote there.
    #[test]
    fn the_cuda_kernels_address_only_words_of_the_control_block() {
        let words = defines("C_");
        assert!(words.len() > 20, "found {} control-block defines", words.len());
        for (name, at, per_gpu) in &words {
            let len = if *per_gpu { MAX_PARTS } else { 1 };
            assert!(
                at + len <= ctl::LEN,
                "C_{name} addresses words {at}..{} of a {}-word control block",
                at + len,
                ctl::LEN
            );
        }
        let per_gpu: Vec<&str> =
            words.iter().filter(|w| w.2).map(|w| w.0.as_str()).collect::<Vec<_>>();
        assert_eq!(per_gpu, ["OUT_W", "CONS", "RTO"]);
    }

    /// The `prefix` defines of the CUDA file, name and word in order, are `rust`'s.
    fn assert_same_words(prefix: &str, rust: &[(&str, usize)], what: &str) {
        let cuda: Vec<(String, usize)> =
            defines(prefix).into_iter().map(|(name, at, _)| (name, at)).collect();
        let rust: Vec<(String, usize)> =
            rust.iter().map(|&(name, at)| (name.to_string(), at)).collect();
        assert_eq!(cuda, rust, "{what}");
    }

    /// The CUDA defines and this module's indices agree, name for name.
    #[test]
    fn the_cuda_kernels_use_the_same_layout() {
        let ctl_words = [
            ("START", ctl::START),
            ("END", ctl::END),
            ("DEFERRED", ctl::DEFERRED),
            ("OUT_LEN", ctl::OUT_LEN),
            ("END_ALLOC", ctl::END_ALLOC),
            ("END_WRITTEN", ctl::END_WRITTEN),
            ("W_CONSUMED", ctl::W_CONSUMED),
            ("W_TAKEN", ctl::W_TAKEN),
            ("W_DEFERRED", ctl::W_DEFERRED),
            ("W_SENT", ctl::W_SENT),
            ("W_DROPPED", ctl::W_DROPPED),
            ("W_MIN_PRIO", ctl::W_MIN_PRIO),
            ("W_EDGES", ctl::W_EDGES),
            ("W_ROUNDS", ctl::W_ROUNDS),
            ("R_PROCESSED", ctl::R_PROCESSED),
            ("R_TAKEN", ctl::R_TAKEN),
            ("R_DEFERRED", ctl::R_DEFERRED),
            ("R_PASSED", ctl::R_PASSED),
            ("R_DROPPED", ctl::R_DROPPED),
            ("R_MIN_PRIO", ctl::R_MIN_PRIO),
            ("W_RECEIVED", ctl::W_RECEIVED),
            ("P_PROMOTED", ctl::P_PROMOTED),
            ("P_REMAINING", ctl::P_REMAINING),
            ("P_MIN_PRIO", ctl::P_MIN_PRIO),
            ("OUT_W", ctl::OUT_W),
            ("CONS", ctl::CONS),
            ("RTO", ctl::RTO),
        ];
        assert_same_words(
            "C_",
            &ctl_words,
            "control block: kernels/groute_worklist.cu against ctl",
        );

        let mail_words = [
            ("PUB", mail::PUB),
            ("CONS", mail::CONS),
            ("DELIV", mail::DELIV),
            ("FREED", mail::FREED),
            ("IDLE", mail::IDLE),
            ("STOP", mail::STOP),
        ];
        assert_same_words("M_", &mail_words, "mail block: kernels/groute_worklist.cu against mail");
        for &(name, at) in &mail_words {
            let len = if at < mail::IDLE { MAX_PARTS } else { 1 };
            assert!(at + len <= mail::LEN, "M_{name} ends past the {}-word mail block", mail::LEN);
        }

        let slots = [
            ("OFFSETS", Slot::Offsets),
            ("TARGETS", Slot::Targets),
            ("WEIGHTS", Slot::Weights),
            ("OWNER", Slot::Owner),
            ("VALUES", Slot::Values),
            ("RANK", Slot::Rank),
            ("WL", Slot::Worklist),
            ("CTL", Slot::Ctl),
            ("OUT", Slot::Out),
            ("DEFERRED", Slot::Deferred),
            ("MESSAGE", Slot::Message),
            ("PASS", Slot::Pass),
            ("MAIL", Slot::Mail),
        ];
        assert_eq!(slots.len(), SLOTS);
        let cuda = defines("GW_");
        for (name, slot) in slots {
            let found = cuda.iter().find(|d| d.0 == name).map(|d| d.1);
            assert_eq!(found, Some(slot as usize), "GW_{name}");
        }
    }
}
