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
//! host reserved for it: a round starts only while a whole Out still fits the budget).
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
//! are serialised among themselves, promote runs only while nothing else is in flight and
//! grow only while the device is quiet. The contract is written so that this is safe:
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

use crate::backend::{BackendError, HostData, KernelContext, KernelDef, KernelRegistry};

/// Buffer slots of every worklist kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Slot {
    /// `u64[n + 1]` CSR offsets over all vertices (arcs of owned vertices only).
    Offsets,
    /// `u32` arc targets (global ids).
    Targets,
    /// `u32` arc weights (empty unless SSSP).
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
    /// `u32[2 * pairs]` pass-through pairs (SplitReceive).
    Pass,
}

/// Number of buffer slots.
pub const SLOTS: usize = 12;

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
    /// Promote report: items promoted to the worklist.
    pub const P_PROMOTED: usize = 24;
    /// Promote report: items still deferred.
    pub const P_REMAINING: usize = 25;
    /// Promote report: lowest priority still deferred.
    pub const P_MIN_PRIO: usize = 26;
    /// Length of the control block.
    pub const LEN: usize = 32;
    /// Initial value of start and end: room to prepend without wrapping below zero.
    pub const ORIGIN: u64 = 1 << 40;
}

/// The applications of the distributed worklist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    /// Breadth-first search (levels, atomic min).
    Bfs,
    /// Single-source shortest paths (distances, atomic min).
    Sssp,
    /// Residual-push PageRank (remote residuals always forwarded).
    PageRank,
}

impl App {
    /// Kernel name prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            App::Bfs => "groute_bfs",
            App::Sssp => "groute_sssp",
            App::PageRank => "groute_pr",
        }
    }

    /// Name of one of its kernels (`work`, `split_send`, `split_receive`, `promote`,
    /// `fused`).
    pub fn kernel(self, which: &str) -> &'static str {
        KERNEL_NAMES
            .iter()
            .find(|(app, w, _)| *app == self && *w == which)
            .map_or("groute_unknown", |(_, _, n)| n)
    }
}

const KERNEL_NAMES: [(App, &str, &str); 15] = [
    (App::Bfs, "work", "groute_bfs_work"),
    (App::Bfs, "split_send", "groute_bfs_split_send"),
    (App::Bfs, "split_receive", "groute_bfs_split_receive"),
    (App::Bfs, "promote", "groute_bfs_promote"),
    (App::Bfs, "fused", "groute_bfs_fused"),
    (App::Sssp, "work", "groute_sssp_work"),
    (App::Sssp, "split_send", "groute_sssp_split_send"),
    (App::Sssp, "split_receive", "groute_sssp_split_receive"),
    (App::Sssp, "promote", "groute_sssp_promote"),
    (App::Sssp, "fused", "groute_sssp_fused"),
    (App::PageRank, "work", "groute_pr_work"),
    (App::PageRank, "split_send", "groute_pr_split_send"),
    (App::PageRank, "split_receive", "groute_pr_split_receive"),
    (App::PageRank, "promote", "groute_pr_promote"),
    (App::PageRank, "fused", "groute_pr_fused"),
];

/// Registers every worklist kernel.
pub fn register(registry: &mut KernelRegistry) {
    macro_rules! app_kernels {
        ($app:expr, $work:literal, $send:literal, $recv:literal, $promote:literal, $fused:literal) => {{
            registry.register(KernelDef {
                name: $work,
                contract: "take the longest prefix of the first min(count, END - START) \
                           items (END as published) whose out-degrees sum to at most Out's \
                           capacity (at least one item; an error if the first alone does \
                           not fit) and apply the application's operator to each \
                           (push-style, atomic value updates), writing every vertex it \
                           updates to Out in unspecified order",
                sim: |ctx| work_kernel(ctx, $app),
                cuda_name: Some($work),
                remote_args: &[],
            });
            registry.register(KernelDef {
                name: $send,
                contract: "SplitSend: route every Out item by OnSend: owned items are \
                           prepended to the worklist (or deferred when GetPrio >= threshold), \
                           others are packed as (vertex, value) into Message",
                sim: |ctx| split_send_kernel(ctx, $app),
                cuda_name: Some($send),
                remote_args: &[],
            });
            registry.register(KernelDef {
                name: $recv,
                contract: "SplitReceive (high-priority stream, concurrent with the \
                           worker): for each received (vertex, value) pair, OnReceive: owned \
                           and improving: take (append to the worklist through END_ALLOC / \
                           END_WRITTEN / END, or defer); owned, not improving: drop; else \
                           pass to Pass",
                sim: |ctx| split_receive_kernel(ctx, $app),
                cuda_name: Some($recv),
                remote_args: &[],
            });
            registry.register(KernelDef {
                name: $promote,
                contract: "move deferred items whose GetPrio is below the new consensus \
                           threshold to the worklist's end (published as appends); compact \
                           the rest (in unspecified order)",
                sim: |ctx| promote_kernel(ctx, $app),
                cuda_name: Some($promote),
                remote_args: &[],
            });
            registry.register(KernelDef {
                name: $fused,
                contract: "fused worker: rounds of (take a batch by the work kernel's \
                           rule, work, SplitSend) inside one persistent launch until the \
                           worklist is empty (END as published), `max_rounds` rounds ran, \
                           `flush_pairs` pairs wait to be sent, or another round could push \
                           past `push_budget`; Out's contents afterwards are unspecified",
                sim: |ctx| fused_kernel(ctx, $app),
                cuda_name: Some($fused),
                remote_args: &[],
            });
        }};
    }
    app_kernels!(
        App::Bfs,
        "groute_bfs_work",
        "groute_bfs_split_send",
        "groute_bfs_split_receive",
        "groute_bfs_promote",
        "groute_bfs_fused"
    );
    app_kernels!(
        App::Sssp,
        "groute_sssp_work",
        "groute_sssp_split_send",
        "groute_sssp_split_receive",
        "groute_sssp_promote",
        "groute_sssp_fused"
    );
    app_kernels!(
        App::PageRank,
        "groute_pr_work",
        "groute_pr_split_send",
        "groute_pr_split_receive",
        "groute_pr_promote",
        "groute_pr_fused"
    );
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
    })
}

fn args<'a>(buffers: &'a mut [HostData]) -> Result<Args<'a>, BackendError> {
    let [offsets, targets, weights, owner, values, rank, wl, ctl, out, deferred, message, pass] =
        buffers
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
    })
}

/// What the cost model is told, accumulated by the kernel bodies.
#[derive(Default)]
struct Counts {
    items: u64,
    edges: u64,
    atomics: u64,
    bytes_read: u64,
    bytes_written: u64,
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

/// GetPrio: the vertex's current value (level or distance); PageRank has no priority.
fn priority(app: App, values: &HostData, v: u32) -> u64 {
    match (app, values) {
        (App::Bfs | App::Sssp, HostData::U32(x)) => u64::from(x[v as usize]),
        _ => 0,
    }
}

/// The work kernel body: consumes up to `count` items; returns (consumed, out_len).
fn work(
    app: App,
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
    let mut out_len = 0usize;
    let mut consumed = 0u64;
    while consumed < take {
        let v = a.wl[((start + consumed) % capacity) as usize];
        let (lo, hi) = (a.offsets[v as usize] as usize, a.offsets[v as usize + 1] as usize);
        consumed += 1;
        counts.items += 1;
        counts.bytes_read += 4 + 16;
        match (app, &mut *a.values) {
            (App::Bfs, HostData::U32(level)) => {
                let next = level[v as usize].saturating_add(1);
                for &t in &a.targets[lo..hi] {
                    if next < level[t as usize] {
                        level[t as usize] = next;
                        a.out[out_len] = t;
                        out_len += 1;
                    }
                }
            }
            (App::Sssp, HostData::U32(dist)) => {
                let d = dist[v as usize];
                for (&t, &w) in a.targets[lo..hi].iter().zip(&a.weights[lo..hi]) {
                    let nd = d.saturating_add(w);
                    if nd < dist[t as usize] {
                        dist[t as usize] = nd;
                        a.out[out_len] = t;
                        out_len += 1;
                    }
                }
                counts.bytes_read += 4 * (hi - lo) as u64;
            }
            (App::PageRank, HostData::F64(residual)) => {
                // Residuals and ranks are f64: a hub's residual grows large while it waits
                // in the worklist, and the small shares pushed into it fall below an f32 ulp
                // (a single-GPU R-MAT-16 run lost 2.6% of the hub's rank in f32).
                let HostData::F64(rank) = &mut *a.rank else {
                    return Err(BackendError::Usage("PageRank needs f64 ranks".into()));
                };
                let r = std::mem::take(&mut residual[v as usize]);
                rank[v as usize] += r;
                counts.bytes_written += 16;
                if r == 0.0 || hi == lo {
                    continue;
                }
                let share = s.damping * r / (hi - lo) as f64;
                let epsilon = s.epsilon;
                for &t in &a.targets[lo..hi] {
                    let slot = &mut residual[t as usize];
                    let old = *slot;
                    *slot += share;
                    let owned = a.owner[t as usize] == s.gpu;
                    // Owned: schedule when the residual passes epsilon. Remote: always
                    // forward (section 4.6.3), once per accumulation in the halo.
                    if (owned && old <= epsilon && *slot > epsilon) || (!owned && old == 0.0) {
                        a.out[out_len] = t;
                        out_len += 1;
                    }
                }
            }
            _ => return Err(BackendError::Usage(format!("{app:?}: wrong value type"))),
        }
        let arcs = (hi - lo) as u64;
        counts.edges += arcs;
        counts.atomics += arcs;
        counts.bytes_read += arcs * 8;
    }
    a.ctl[ctl::START] += consumed;
    counts.bytes_written += out_len as u64 * 4;
    Ok((consumed, out_len))
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
fn take_item(
    app: App,
    a: &mut Args<'_>,
    v: u32,
    threshold: u64,
    prepend: bool,
    split: &mut Split,
) -> Result<(), BackendError> {
    let prio = priority(app, a.values, v);
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
fn split_send(
    app: App,
    a: &mut Args<'_>,
    s: &Scalars,
    out_len: usize,
    split: &mut Split,
    counts: &mut Counts,
) -> Result<(), BackendError> {
    for i in 0..out_len {
        let v = a.out[i];
        if a.owner[v as usize] == s.gpu {
            // BFS and SSSP prepend their own production (section 4.3); PageRank appends, so
            // a vertex's residual keeps accumulating while it waits: prepending made a
            // 1-GPU R-MAT-16 run push 12.5x the edges of the bulk-synchronous version.
            take_item(app, a, v, s.threshold, app != App::PageRank, split)?;
        } else {
            // Pack: (vertex, value); PageRank ships the halo's accumulated residual.
            let value = match &mut *a.values {
                HostData::U32(x) => x[v as usize],
                // The halo's accumulated residual travels as f32 (a delta, not a total).
                HostData::F64(x) => (std::mem::take(&mut x[v as usize]) as f32).to_bits(),
                _ => 0,
            };
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
    counts.bytes_written += split.taken * 4 + split.deferred * 4 + split.sent * 8;
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

fn work_kernel(ctx: &mut KernelContext<'_>, app: App) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let (consumed, out_len) = work(app, &mut a, &s, s.count, &mut counts)?;
    let split = Split { min_prio: u64::MAX, ..Split::default() };
    write_worker_report(a.ctl, consumed, &split, counts.edges, 1);
    a.ctl[ctl::OUT_LEN] = out_len as u64;
    counts.charge(ctx);
    Ok(())
}

fn split_send_kernel(ctx: &mut KernelContext<'_>, app: App) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let consumed = a.ctl[ctl::W_CONSUMED];
    let edges = a.ctl[ctl::W_EDGES];
    let out_len = std::mem::take(&mut a.ctl[ctl::OUT_LEN]) as usize;
    let mut split = Split { min_prio: u64::MAX, ..Split::default() };
    split_send(app, &mut a, &s, out_len, &mut split, &mut counts)?;
    write_worker_report(a.ctl, consumed, &split, edges, 1);
    counts.charge(ctx);
    Ok(())
}

fn split_receive_kernel(ctx: &mut KernelContext<'_>, app: App) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let mut counts = Counts::default();
    let mut a = args(ctx.buffers)?;
    let pairs = s.count as usize;
    if 2 * pairs > a.message.len() {
        return Err(kernel_error(
            app.kernel("split_receive"),
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
                    app.kernel("split_receive"),
                    format!("received vertex {v} is out of range"),
                ));
            }
            a.pass[2 * passed] = v;
            a.pass[2 * passed + 1] = value;
            passed += 1;
            continue;
        }
        // OnReceive: owned. Take if it improves the owner's value.
        let take = match &mut *a.values {
            HostData::U32(x) => {
                let improved = value < x[v as usize];
                if improved {
                    x[v as usize] = value;
                }
                improved
            }
            HostData::F64(x) => {
                let old = x[v as usize];
                x[v as usize] += f64::from(f32::from_bits(value));
                old <= s.epsilon && x[v as usize] > s.epsilon
            }
            _ => false,
        };
        if take {
            take_item(app, &mut a, v, s.threshold, false, &mut split)?;
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

fn promote_kernel(ctx: &mut KernelContext<'_>, app: App) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
    let a = args(ctx.buffers)?;
    let len = a.ctl[ctl::DEFERRED] as usize;
    let capacity = a.wl.len() as u64;
    let mut kept = 0usize;
    let mut promoted = 0u64;
    let mut min_prio = u64::MAX;
    for i in 0..len {
        let v = a.deferred[i];
        let prio = priority(app, a.values, v);
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

fn fused_kernel(ctx: &mut KernelContext<'_>, app: App) -> Result<(), BackendError> {
    let s = scalars(ctx)?;
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
        let (c, out_len) = work(app, &mut a, &s, s.count, &mut counts)?;
        consumed += c;
        rounds += 1;
        split_send(app, &mut a, &s, out_len, &mut split, &mut counts)?;
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
