// Atos's kernels (seeds 003 and 004) on CUDA: the worker of each application (BFS, residual
// PageRank, colouring) and the aggregator. Contracts: src/runtime/atos/kernels.rs (buffer slots,
// scalars, the state block, the mapped control block), src/backend/queue.rs (the queue's
// counters, one cache line each); the host side and the termination detector:
// src/runtime/atos/mod.rs and termination.rs.
//
// What runs where. A persistent worker launch is a resident grid (the backend sizes it from
// the occupancy query for the block the runtime asks for; every block width and block-wide
// scan here is taken from blockDim.x, never from a constant the launch might disagree with).
// It loops until the host raises STOP. A discrete launch processes the items below the queue
// ends its NAME__pre recorded and ends; its last block publishes IDLE. A team is what pops
// together: a warp for thread workers (one item per lane, each lane a worker) and for warp
// workers (one item, the lanes stride its arcs), the block for CTA workers (FETCH items; BFS
// and PageRank lay the items' arcs end to end over the block's threads, colouring takes them
// one at a time with the whole block).
//
// Queues. Items live at index % capacity: the counters only grow, so a queue is circular and
// its capacity bounds what is queued, not what was ever queued (the simulator compacts
// instead). Push: END_ALLOC reserves, the items are written, then END_MAX / END_COUNT / END
// publish them (queue.rs); a reservation that would pass the slots not yet freed is not
// written: it is added to OVERFLOW and the GPU's ctl OVERFLOW is raised (the host stops the
// run and says which queue, never losing work silently). Pop, persistent teams on the local
// queue: one atomicAdd on START_ALLOC reserves FETCH indices ahead, taken as END reaches them
// (START counts the items taken); discrete launches, the low and the receive queues: a
// compare-and-swap on START below END (and below the launch's or the low queue's limit), so
// START never passes END. Slots are freed when the popper has read them: POP_MAX /
// POP_COUNT / FREED (CUDA-only words in the OVERFLOW line) publish them the way END_MAX /
// END_COUNT / END publish pushes. A CTA worker's pass over its arcs pushes its tasks with
// one reservation per queue; statistics stay in shared memory until the launch ends; a
// round on one GPU issues no system-scope fence or atomic.
//
// Remote updates between GPUs are plain device atomics and stores through peer pointers
// (the same instructions between logical GPUs of one physical GPU): BFS's atomicMin that
// pushes (vertex, level) into the owner's receive queue on improvement, PageRank's f32
// atomicAdd that pushes nothing, colouring's pairs pushed into the owner's receive queue;
// or, aggregated, pairs into this GPU's aggregation queue for the target, which the
// aggregator sends as batches with a header (TAG | sender, pairs).
//
// Termination counting (termination.rs). A team's remote records are counted when it runs
// out of work (at_count_sent): under the GPU's publication lock, the new total sent to each
// target is stored into this GPU's SENT_TO words of the mapped control block, then (after a
// system fence) added to the target's RECV_ARRIVED in its device memory. A GPU is idle when
// every unit of work it opened is closed: units are the items ever pushed into its local and
// low queues (their END_ALLOC), the receive-queue pairs and sweeps it took (X_OPENED); a unit
// is closed (X_CLOSED) after the units it made were opened. The check reads RECV_ARRIVED, then
// X_CLOSED, then the receive and aggregation queues, then the opened counts; equal counts
// with those queues empty mean nothing was queued or in flight at the last read. PageRank's
// sweep is clean when the sweeps counted since the last change of any residual (X_EPOCH,
// bumped after local adds, received pairs, found vertices and arrivals) cover the
// vertices: X_CLEAN packs (epoch, vertices swept clean in it).
//
// Scratch (CUDA only): the Workers slot (the simulator's worker table) as u64 words X_*.

#define AT_OFFSETS 0
#define AT_TARGETS 1
#define AT_BASES 2
#define AT_VALUE 3
#define AT_AUX 4
#define AT_FLAGS 5
#define AT_LOCAL_ITEMS 6
#define AT_LOCAL_COUNTERS 7
#define AT_LOW_ITEMS 8
#define AT_LOW_COUNTERS 9
#define AT_RECV_ITEMS 10
#define AT_RECV_COUNTERS 11
#define AT_AGG_ITEMS 12
#define AT_AGG_COUNTERS 13
#define AT_WORKERS 14
#define AT_STATE 15
#define AT_CTL 16
#define AT_SLOTS 17
// GPUs whose three peer buffers fit the ABI's SY_MAX_BUFFERS.
#define AT_PEERS ((SY_MAX_BUFFERS - AT_SLOTS) / 3)

// Queue counter block (queue.rs), u64 indices.
#define Q_START 0
#define Q_END 16
#define Q_END_ALLOC 32
#define Q_END_MAX 48
#define Q_END_COUNT 64
#define Q_OVERFLOW 80
#define Q_POP_MAX 81
#define Q_POP_COUNT 82
#define Q_FREED 83
#define Q_START_ALLOC 84
#define Q_WORDS 96
#define AT_RECV_CONSUMED 96
#define AT_RECV_ARRIVED 112
#define AT_TAG 0x80000000u
#define AT_MAX_GPUS 16

// State block (kernels.rs `state`).
#define ST_THRESHOLD 0
#define ST_CHECK 1
#define ST_CLEAN 2
#define ST_VISITS 3
#define ST_TASKS 4
#define ST_EDGES 5
#define ST_PUSHES 6
#define ST_SENT 7
#define ST_RECEIVED 8
#define ST_RAISES 9
#define ST_STEPS 10
#define ST_BATCHES 11
#define ST_LIMIT_LOCAL 12
#define ST_LIMIT_LOW 13
#define ST_LIMIT_RECV 14
#define ST_SWEPT 15
#define ST_POPPED 16
#define ST_AGG_POLLS 17
#define ST_LAST_RECV 33
#define ST_SENT_TO 34
#define ST_BLOCKED 50
#define ST_AGG_WAITS 51
#define ST_FILTERED 52
#define ST_LEN 53

// Mapped control block (kernels.rs `ctl`): plain stores only, one writer per word (no
// atomics on host memory: a PCIe host does not take them from the GPU).
#define C_IDLE 0
#define C_SEEN 1
#define C_OVERFLOW 2
#define C_SENT_TO 8
#define C_STRIDE 24

// Worker scalars (kernels.rs `scalar`).
#define SC_GPU 0
#define SC_GPUS 1
#define SC_WIDTH 2
#define SC_FETCH 3
#define SC_PERSISTENT 4
#define SC_AGGREGATED 5
#define SC_DELTA 6
#define SC_CHECK_SIZE 7
#define SC_EPSILON 8
#define SC_DAMPING 9
#define SC_FENCE 10
#define SC_BATCH_BYTES 2
#define SC_WAIT_POLLS 3

// Scratch words (u64), each hot counter on its own line.
#define X_CLOSED 0
#define X_OPENED 16
#define X_EPOCH 32
#define X_CLEAN 48
#define X_EXITED 64
#define X_LOW_MARK 65
#define X_CHECKS 66
#define X_PUBLISHED 67
#define X_RAISING 68
#define X_LOCK 80
#define X_STOP 81
#define X_SWEPT 96
#define X_PUB_LOCK 112
#define X_SENT_TO 128
#define X_WORDS 144

#define AT_MAX_BLOCK 1024
#define AT_MAX_WARPS (AT_MAX_BLOCK / 32)
// The BFS worker's launch bound: blocks of at most 512 threads, one block an SM
// guaranteed, so that ptxas may give a thread up to 128 registers (it takes 80). Under a
// bound of AT_MAX_BLOCK (64 registers) it spilled 216 bytes a thread and ran 7-9 % slower as
// persistent CTA workers on one H200 (reports/atos.md, "Registers"); the CUDA backend refuses
// a larger block with the bound named (backend.rs `launch_with`). The PageRank and colouring
// workers keep AT_MAX_BLOCK: bounded the same way they ran slower on luxembourg (c49).
#define AT_BFS_WORKER_BLOCK 512
#define AT_FULL 0xffffffffu

__device__ __forceinline__ u64 at_vol(const u64 *p) { return *(const volatile u64 *)p; }

// A load with acquire semantics at GPU scope: what was written before a release of this word
// (a fence, then the store or atomic) is visible to the loads after it, with no fence.
__device__ __forceinline__ u64 at_acq(const u64 *p) {
    u64 v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// The workers' fences. Their ordering points are message passing (write, fence, publish;
// read the publication, fence, read), which fence.acq_rel orders; they are sequentially
// consistent fences (__threadfence) unless the launch asks for the lighter ones (SC_FENCE bit
// 1, set from SWITCHYARD_ATOS_FENCE=acq_rel). s_light and s_mode (all SC_FENCE bits, see
// kernels.rs `scalar::FENCE`) are set before a block's first barrier.
__shared__ int s_light;
__shared__ u32 s_mode;
#define AT_MODE_WARP_REMOTE 2u
#define AT_MODE_FLUSH_IDLE 4u
#define AT_MODE_KEEP 8u
__device__ __forceinline__ void at_fence() {
    if (s_light) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    else __threadfence();
}
__device__ __forceinline__ u32 at_vol32(const u32 *p) { return *(const volatile u32 *)p; }

struct AtQ {
    u32 *items;
    u64 *c;
    u64 cap;
};

struct AtCtx {
    const u64 *offsets;
    const u32 *targets;
    u32 *value;
    float *aux;
    u32 *flags;
    AtQ local, low, recv;
    u32 *agg_items;
    u64 *agg_c;
    u64 agg_seg;
    u64 *x;
    u64 *st;
    u64 *ctl;
    u32 *pval[AT_PEERS];
    AtQ precv[AT_PEERS];
    u32 bases[AT_PEERS + 1];
    u32 gpu, gpus, width, fetch, persistent, aggregated, delta, check_size, n_local;
    u64 n_flags;
    double eps, damping;
};

__device__ __forceinline__ AtQ at_agg(const AtCtx &c, u32 h) {
    AtQ q;
    q.items = c.agg_items + h * c.agg_seg;
    q.c = c.agg_c + (u64)h * Q_WORDS;
    q.cap = c.agg_seg;
    return q;
}

__device__ __forceinline__ u32 at_owner(const AtCtx &c, u32 t) {
    u32 h = 0;
    while (h + 1 < c.gpus && t >= c.bases[h + 1]) h++;
    return h;
}

__device__ __forceinline__ u64 *at_ctl(const AtCtx &c, u32 g, u32 word) {
    return c.ctl + (u64)g * C_STRIDE + word;
}

// Marks the run overflowed (the host stops it and reports the queue).
__device__ void at_overflowed(const AtCtx &c) {
    *(volatile u64 *)at_ctl(c, c.gpu, C_OVERFLOW) = 1;
    __threadfence_system();
}

// The block's counts, kept in shared memory and added once at exit (a per-round atomic on
// a GPU-wide word is a serialised round trip on the hot path): 0-2 the stream's counters
// (items, edges, atomics) as the simulator's kernels report them (items started, popped,
// received and swept; arcs; updates, own-queue pushes and PageRank's two atomics per start),
// then the state block's statistics (AS_* below: popped, tasks, visits, edges, pushes).
#define AT_NSTAT 9
#define AS_POPPED 3
#define AS_TASKS 4
#define AS_VISITS 5
#define AS_EDGES 6
#define AS_PUSHES 7
#define AS_FILTERED 8
__shared__ u64 s_stat[AT_NSTAT];

__device__ __forceinline__ void at_stat(int i, u64 x) {
    if (x) atomicAdd(&s_stat[i], x);
}

// Adds the block's counts to the stream's counters and the state block `st` (every thread
// calls it, at exit; the host reads both only after the launch ends).
__device__ void at_stat_flush(const SyArgs &a, u64 *st) {
    __syncthreads();
    u32 i = threadIdx.x;
    if (i < AT_NSTAT && s_stat[i]) {
        u64 *to = i < 3 ? &a.stats[i]
                  : st + (i == AS_POPPED ? ST_POPPED
                          : i == AS_TASKS ? ST_TASKS
                          : i == AS_VISITS ? ST_VISITS
                          : i == AS_EDGES ? ST_EDGES
                          : i == AS_PUSHES ? ST_PUSHES
                                           : ST_FILTERED);
        atomicAdd(to, s_stat[i]);
    }
}

// Reserves n slots of q at `at`; false (counted in OVERFLOW) when they would pass the slots
// not yet freed. One thread.
__device__ bool at_reserve(const AtCtx &c, const AtQ &q, u64 n, u64 &at) {
    at = atomicAdd(q.c + Q_END_ALLOC, n);
    // FREED is read only once the queue could have wrapped (at + n <= cap cannot pass it):
    // one dependent round trip less per push on a queue that never wraps.
    if (at + n > q.cap && at + n - at_vol(q.c + Q_FREED) > q.cap) {
        atomicAdd(q.c + Q_OVERFLOW, n);
        at_overflowed(c);
        return false;
    }
    return true;
}

// The slot of queue index i (a 64-bit remainder only once the queue has wrapped).
__device__ __forceinline__ u64 at_slot(const AtQ &q, u64 i) { return i < q.cap ? i : i % q.cap; }
__device__ __forceinline__ void at_put(const AtQ &q, u64 i, u32 v) { q.items[at_slot(q, i)] = v; }
__device__ __forceinline__ u32 at_get(const AtQ &q, u64 i) { return __ldcg(q.items + at_slot(q, i)); }

// Publishes the written slots at..at+n (one thread, after the writers' fences); `sys`: the
// queue is another GPU's (system-scope ordering), else this GPU's own.
__device__ void at_publish(const AtQ &q, u64 at, u64 n, bool sys) {
    if (sys) __threadfence_system();
    else at_fence();
    atomicMax(q.c + Q_END_MAX, at + n);
    u64 count = atomicAdd(q.c + Q_END_COUNT, n) + n;
    if (count == at_vol(q.c + Q_END_MAX)) atomicMax(q.c + Q_END, count);
}

// Reserves up to `want` valid items below `limit` (one thread): a compare-and-swap on START,
// so it never passes END. `open`: a counter to add the taken items to before they leave the
// queue (the receive queue's pairs are opened units); a failed attempt closes what it opened.
__device__ u64 at_pop(const AtQ &q, u64 want, u64 limit, u64 &at, u64 *open, u64 *close,
                      u64 unit) {
    while (true) {
        u64 s = at_vol(q.c + Q_START);
        u64 e = at_vol(q.c + Q_END);
        if (e > limit) e = limit;
        if (s >= e) return 0;
        u64 take = e - s < want ? e - s : want;
        if (open) atomicAdd(open, take / unit);
        at_fence();
        if (atomicCAS(q.c + Q_START, s, s + take) == s) {
            at = s;
            at_fence();
            return take;
        }
        if (close) atomicAdd(close, take / unit);
    }
}

// Raises END to END_COUNT when every reserved slot below END_MAX is written (END_COUNT read
// first: a count equal to the maximum read after it means every slot below was written).
// Idle teams call it, so a publisher that saw a slot still being written below its own
// does not leave END behind (one thread).
__device__ void at_help_end(const AtQ &q, u64 e) {
    u64 count = at_acq(q.c + Q_END_COUNT);
    if (count <= e) return;
    if (at_vol(q.c + Q_END_MAX) == count) atomicMax(q.c + Q_END, count);
}

// Takes what END has reached of the held reservation (END > hold[0]; one thread): START
// counts it; the acquire load of END that saw it orders the reads of the items.
__device__ u64 at_take_from(const AtQ &q, u64 *hold, u64 e, u64 &at) {
    at = hold[0];
    u64 take = (e < hold[1] ? e : hold[1]) - at;
    hold[0] = at + take;
    atomicAdd(q.c + Q_START, take);
    return take;
}

// More of the held reservation, contiguous with what was taken (no new reservation): 0 when
// END has not reached it or it is all taken (one thread).
__device__ u64 at_take_more(const AtQ &q, u64 *hold, u64 &at) {
    if (hold[0] >= hold[1]) return 0;
    u64 e = at_acq(q.c + Q_END);
    return e > hold[0] ? at_take_from(q, hold, e, at) : 0;
}

// A persistent team's pop (one thread): it holds a reservation hold[0]..hold[1] of indices,
// taken with one atomicAdd on START_ALLOC (no compare-and-swap to retry, so pops do not
// serialise on START), and takes what END has reached of it; a whole reservation taken, it
// reserves the next `want`. START counts the items taken (so START <= END still holds and
// END - START is what waits), not an index. Discrete launches pop with at_pop (they must not
// reserve past the launch's limit).
__device__ u64 at_take_held(const AtQ &q, u64 *hold, u64 want, u64 &at) {
    if (hold[0] >= hold[1]) {
        hold[0] = atomicAdd(q.c + Q_START_ALLOC, want);
        hold[1] = hold[0] + want;
    }
    // A few polls here, without the team's barriers between them.
    u64 e = at_acq(q.c + Q_END);
    for (int i = 0; i < 8 && e <= hold[0]; i++) {
        at_help_end(q, e);
        e = at_acq(q.c + Q_END);
    }
    return e > hold[0] ? at_take_from(q, hold, e, at) : 0;
}

// Frees popped slots at..at+n once read (one thread, after the readers' fences).
__device__ void at_pop_done(const AtQ &q, u64 at, u64 n) {
    at_fence();
    atomicMax(q.c + Q_POP_MAX, at + n);
    u64 count = atomicAdd(q.c + Q_POP_COUNT, n) + n;
    if (count == at_vol(q.c + Q_POP_MAX)) atomicMax(q.c + Q_FREED, count);
}

// Warp-aggregated push: the lanes that call it together push `words` (1 or 2) words each
// into their queue (lanes naming the same queue share one reservation). `count`: count the
// items pushed (own queues: ST_PUSHES); `sys`: another GPU's queue. False when the queue
// refused them.
__device__ bool at_push(const AtCtx &c, const AtQ &q, u32 w0, u32 w1, u32 words, bool count,
                        bool sys) {
    u32 active = __activemask();
    u32 peers = __match_any_sync(active, (unsigned long long)q.c);
    u32 leader = __ffs(peers) - 1;
    u32 rank = __popc(peers & ((1u << sy_lane()) - 1));
    u64 n = (u64)__popc(peers) * words;
    u64 at = 0;
    int ok = 1;
    if (sy_lane() == leader) ok = at_reserve(c, q, n, at);
    at = __shfl_sync(peers, at, leader);
    ok = __shfl_sync(peers, ok, leader);
    if (ok) {
        at_put(q, at + (u64)rank * words, w0);
        if (words == 2) at_put(q, at + (u64)rank * words + 1, w1);
        if (sys) __threadfence_system();
        else at_fence();
    }
    __syncwarp(peers);
    if (sy_lane() == leader && ok) {
        at_publish(q, at, n, sys);
        if (count) {
            at_stat(AS_PUSHES, n / words);
            at_stat(2, n / words);
        }
    }
    return ok;
}

// Pushes own vertex `item` (maybe tagged) as a task with priority `prio`: into the low
// queue when the priority queue is on and prio >= the threshold, else the local queue.
__device__ __forceinline__ bool at_is_low(const AtCtx &c, u32 prio) {
    return c.delta != 0 && (u64)prio >= at_vol(c.st + ST_THRESHOLD);
}
__device__ void at_push_task(const AtCtx &c, u32 item, u32 prio) {
    at_push(c, at_is_low(c, prio) ? c.low : c.local, item, 0, 1, true, false);
}

// What a CTA worker's thread found in one pass over its arcs: a task (queue 1: local, 2:
// low) or a pair for GPU h's receive queue (queue 3 + h), 0: none. The block pushes a pass's
// finds with one reservation and one publication per queue (at_push_block) instead of one
// per warp: on another GPU's queue each is a chain of remote round trips, and 16 warps
// contending for its counters serialised there.
struct AtSink {
    u32 item, val, queue;
    // A kept local find's row (level keeping, BFS): loaded by the finder right after its
    // atomicMin, so the loads overlap the push's barriers (see s_kbeg).
    u64 beg, end;
};

#define AT_SINKS (2 + AT_MAX_GPUS)
__shared__ u32 s_pn[AT_SINKS];

// Level keeping (persistent BFS CTA workers; SC_FENCE bit 8, SWITCHYARD_ATOS_KEEP, on by
// default with 128 tasks per level: see kernels.rs `scalar::FENCE` and `KEEP_DEFAULT`). A CTA keeps up to s_kmax of the local tasks a level of its
// round finds in shared memory and runs them as its next level, in the same round, instead
// of pushing them and popping them back: on a road graph a BFS level is a few hundred
// vertices, and the queue's push, publication and pop put about ten dependent L2 round trips
// between two levels. Tasks past s_kmax are pushed (spilled) for idle CTAs; each level the
// CTA also takes what arrived in its reservation and, on several GPUs, every
// AT_KEEP_RECV_LEVELS levels drains its receive queue, so queued work is not left behind by a
// long round. Kept tasks are neither pushed nor
// popped: the round's popped items stay open until its last level, so the GPU cannot look
// idle while a CTA holds kept tasks (termination.rs), and initial + pushes == popped holds.
// s_kmax 0: off. s_kbuf[s_kside] fills with the next level (s_knext items); s_kbase and
// s_kpass: the items kept before this pass of at_push_block and by it; s_klevel: the kept
// tasks handed to the next level.
__shared__ u32 s_kmax, s_kside, s_knext, s_kbase, s_kpass, s_klevel;
// Tasks kept per level at most (SWITCHYARD_ATOS_KEEP is clamped to it; kernels.rs
// `KEEP_MAX`): the BFS worker's block (AT_BFS_WORKER_BLOCK).
#define AT_KEEP_MAX 512
__shared__ u32 s_kbuf[2][AT_KEEP_MAX];
// How often (in levels) a keeping CTA drains its receive queue on several GPUs. Every level
// cost a round trip and two barriers a level (c55, 4 x H200: a 2,000-vertex path took 4.34 ms
// on one GPU, 5.23-5.30 ms on two); every 16th level took 4.72-4.77 ms, and luxembourg on
// two GPUs 3.55-3.92 -> 3.28-3.47 ms (c56). Idle CTAs drain it at every round meanwhile.
#define AT_KEEP_RECV_LEVELS 16
// With each kept task, what its finder knew: the label it set (s_klab), and the task's row
// (s_kbeg, s_kdeg), loaded by the finder. The next level starts the task from these, with no
// round trip to the label and the row (the label may have dropped since: the task then
// spreads a label that loses to the better one's, which is extra work, never a wrong level).
// c51 put 1,250-1,800 of a kept level's 5,300-7,800 cycles at its top, where that round
// trip was; taking it away saved 5 % on luxembourg on one H200 (c52; reports/atos.md,
// "Registers").
__shared__ u64 s_kbeg[2][AT_KEEP_MAX];
__shared__ u32 s_kdeg[2][AT_KEEP_MAX], s_klab[2][AT_KEEP_MAX];
__shared__ u64 s_pat[AT_SINKS];
__shared__ int s_pok[AT_SINKS];

// Keeps local find `s` as task `slot` of the next level, with what its finder knew.
__device__ __forceinline__ void at_keep(const AtSink &s, u32 slot) {
    s_kbuf[s_kside][slot] = s.item;
    s_klab[s_kside][slot] = s.val;
    s_kbeg[s_kside][slot] = s.beg;
    s_kdeg[s_kside][slot] = (u32)(s.end - s.beg);
}

// The queue of sink slot qi (queue - 1).
__device__ __forceinline__ AtQ at_sink_queue(const AtCtx &c, u32 qi) {
    return qi == 0 ? c.local : qi == 1 ? c.low : c.precv[qi - 2];
}

// Pushes the block's finds (every thread calls it, with its sink). s_pn is 0 between calls.
template <class App> __device__ void at_push_block(const AtCtx &c, const AtSink &s) {
    if (!__syncthreads_or(s.queue != 0)) return;
    u32 rank = 0;
    u32 active = __ballot_sync(AT_FULL, s.queue != 0);
    if (s.queue) {
        u32 peers = __match_any_sync(active, s.queue);
        u32 leader = __ffs(peers) - 1;
        u32 words = s.queue > 2 ? 2 : 1;
        u32 b = 0;
        if (sy_lane() == leader) b = atomicAdd(&s_pn[s.queue - 1], (u32)__popc(peers) * words);
        b = __shfl_sync(peers, b, leader);
        rank = b + (u32)__popc(peers & ((1u << sy_lane()) - 1)) * words;
    }
    __syncthreads();
    u32 nq = 2 + (c.gpus > 1 ? c.gpus : 0);
    if constexpr (App::KEEP) {
        // Every find of the pass is a local task that fits the kept level (the common pass
        // on a road graph): each thread keeps its own, with no reservation and one barrier
        // instead of two (every thread reads s_knext and s_pn before thread 0 moves them).
        bool fits = s_kmax && s_pn[0] <= s_kmax - s_knext;
        for (u32 qi = 1; qi < nq; qi++) fits = fits && s_pn[qi] == 0;
        if (fits) {
            if (s.queue == 1) at_keep(s, s_knext + rank);
            __syncthreads();
            if (threadIdx.x == 0) {
                s_knext += s_pn[0];
                s_pn[0] = 0;
            }
            return;
        }
    }
    if (threadIdx.x < nq) {
        u64 n = s_pn[threadIdx.x], at = 0;
        if (threadIdx.x == 0 && s_kmax) {
            // Keep the first of this pass's local tasks that fit; push (spill) the rest.
            // s_knext and s_pn[0] move after the barrier below: threads still reading them
            // for `fits` above would race with the stores (racecheck, direct comm, c59).
            u32 keep = (u32)n < s_kmax - s_knext ? (u32)n : s_kmax - s_knext;
            s_kbase = s_knext;
            s_kpass = keep;
            n -= keep;
        }
        s_pok[threadIdx.x] = n ? at_reserve(c, at_sink_queue(c, threadIdx.x), n, at) : 0;
        s_pat[threadIdx.x] = at;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // Volatile: with plain accesses every thread loaded s_knext here ahead of the test of
        // threadIdx.x, racing with thread 0's store (racecheck, R-MAT 10, c65).
        volatile u32 *knext = &s_knext, *pn0 = &s_pn[0];
        u32 kpass = *(volatile u32 *)&s_kpass;
        if (kpass) {
            *knext = *knext + kpass;
            *pn0 = *pn0 - kpass;
        }
    }
    if (s.queue == 1 && rank < s_kpass) {
        at_keep(s, s_kbase + rank);
    } else if (s.queue && s_pok[s.queue - 1]) {
        AtQ q = at_sink_queue(c, s.queue - 1);
        u64 at = s_pat[s.queue - 1] + rank - (s.queue == 1 ? s_kpass : 0);
        at_put(q, at, s.item);
        if (s.queue > 2) {
            at_put(q, at + 1, s.val);
            __threadfence_system();
        } else {
            at_fence();
        }
    }
    __syncthreads();
    if (threadIdx.x < nq) {
        u64 n = s_pn[threadIdx.x];
        if (n && s_pok[threadIdx.x]) {
            bool remote = threadIdx.x >= 2;
            at_publish(at_sink_queue(c, threadIdx.x), s_pat[threadIdx.x], n, remote);
            if (!remote) {
                at_stat(AS_PUSHES, n);
                at_stat(2, n);
            }
        }
        s_pn[threadIdx.x] = 0;
        if (threadIdx.x == 0) s_kpass = 0;
    }
}

// Publishes and counts n records this GPU sent to GPU h (one thread; termination.rs): under
// the GPU's publication lock (so the stored totals only grow), the new total goes into the
// mapped control block with a plain store, then, after a system fence, n is added to h's
// RECV_ARRIVED (device memory, a peer atomic).
__device__ void at_count_sent(const AtCtx &c, u32 h, u64 n) {
    if (n == 0) return;
    while (atomicCAS(c.x + X_PUB_LOCK, 0ull, 1ull) != 0) __nanosleep(32);
    __threadfence();
    u64 total = atomicAdd(c.x + X_SENT_TO + h, n) + n;
    *(volatile u64 *)at_ctl(c, c.gpu, C_SENT_TO + h) = total;
    __threadfence_system();
    atomicAdd_system((unsigned long long *)(c.precv[h].c + AT_RECV_ARRIVED), (unsigned long long)n);
    __threadfence_system();
    atomicExch(c.x + X_PUB_LOCK, 0ull);
}

// Per-warp counts of remote operations by target GPU, not yet in SENT and RECV. They are
// counted late: a team that issued remote operations in a round keeps them (and one unit of
// work open in X_OPENED, so its GPU cannot look idle) until it runs out of work, then counts
// them (at_count_sent) and closes the unit (termination.rs says why that is safe). They were
// counted per team round with system-scope atomics on mapped host memory, which a PCIe host
// does not support (compute-sanitizer: "Invalid __global__ system-scoped atomic") and which
// crossed the bus on the same words from every team.
__shared__ u32 s_remote[AT_MAX_WARPS][AT_MAX_GPUS];
// A team that keeps finding work counts its remote operations every AT_FLUSH_ROUNDS rounds
// too: PageRank's remote adds push nothing, so their targets learn of them (and sweep again)
// only from the count.
#define AT_FLUSH_ROUNDS 16
// Per warp: it counted remote operations this round (set by at_count_remote); it holds
// uncounted ones (a unit open).
__shared__ u32 s_wdirty[AT_MAX_WARPS];
__shared__ u32 s_wheld[AT_MAX_WARPS];

__device__ __forceinline__ void at_count_remote(u32 h) {
    atomicAdd(&s_remote[threadIdx.x >> 5][h], 1u);
    s_wdirty[threadIdx.x >> 5] = 1;
}

// A warp team's round tail, before it closes the round's items: a warp that counted remote
// operations and holds none yet opens its unit. Every lane calls it.
__device__ void at_hold_remote_warp(const AtCtx &c) {
    if (c.gpus < 2) return;
    u32 w = threadIdx.x >> 5;
    __syncwarp();
    if (sy_lane() == 0 && s_wdirty[w]) {
        s_wdirty[w] = 0;
        if (!s_wheld[w]) {
            s_wheld[w] = 1;
            atomicAdd(c.x + X_OPENED, 1ull);
        }
    }
    __syncwarp();
}

// Adds a warp's held remote operations to SENT (this GPU) then RECV (each target), after
// they are visible, then closes its unit. Every lane of the warp calls it.
__device__ void at_flush_remote_warp(const AtCtx &c) {
    if (c.gpus < 2) return;
    u32 w = threadIdx.x >> 5;
    u32 lane = sy_lane();
    __syncwarp();
    if (!s_wheld[w]) return;
    // Every lane's operations are visible before any is counted.
    __threadfence_system();
    __syncwarp();
    if (lane == 0) {
        u64 total = 0;
        for (u32 h = 0; h < c.gpus; h++) {
            u32 n = s_remote[w][h];
            s_remote[w][h] = 0;
            total += n;
            at_count_sent(c, h, n);
        }
        if (total) atomicAdd(c.st + ST_SENT, total);
        at_fence();
        atomicAdd(c.x + X_CLOSED, 1ull);
        s_wheld[w] = 0;
    }
    __syncwarp();
}

// A CTA team's round tail (every thread calls it), before thread 0 closes the round's items:
// the block opens its unit if it counted remote operations and holds none yet.
__device__ void at_hold_remote_block(const AtCtx &c) {
    if (c.gpus < 2) return;
    u32 w = threadIdx.x >> 5;
    // Every lane's at_count_remote of the round lands before lane 0 reads the flag: lanes of a
    // warp may arrive apart, and a flag set after the read would be cleared below unseen.
    __syncwarp();
    bool dirty = __syncthreads_or(sy_lane() == 0 && s_wdirty[w]) != 0;
    if (sy_lane() == 0) s_wdirty[w] = 0;
    // Volatile: a plain load of s_wheld[0] was issued by every thread ahead of the test of
    // threadIdx.x, racing with thread 0's store (racecheck, direct comm, c60).
    if (dirty && threadIdx.x == 0 && !*(volatile u32 *)&s_wheld[0]) {
        s_wheld[0] = 1;
        atomicAdd(c.x + X_OPENED, 1ull);
    }
    __syncthreads();
}

// The same flush for a whole block (every thread calls it; s_wheld[0] is the block's).
__device__ void at_flush_remote_block(const AtCtx &c) {
    if (c.gpus < 2) return;
    __shared__ u32 s_sum[AT_MAX_GPUS + 1];
    __syncthreads();
    if (!s_wheld[0]) return;
    u32 warps = blockDim.x >> 5;
    if (threadIdx.x < c.gpus) {
        u32 n = 0;
        for (u32 w = 0; w < warps; w++) {
            n += s_remote[w][threadIdx.x];
            s_remote[w][threadIdx.x] = 0;
        }
        s_sum[threadIdx.x] = n;
    }
    __syncthreads();
    // The operations of every thread that issued one are visible before they are counted.
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 total = 0;
        for (u32 h = 0; h < c.gpus; h++) {
            total += s_sum[h];
            at_count_sent(c, h, s_sum[h]);
        }
        if (total) atomicAdd(c.st + ST_SENT, total);
        at_fence();
        atomicAdd(c.x + X_CLOSED, 1ull);
        s_wheld[0] = 0;
    }
    __syncthreads();
}

// Teams: what pops together and shares an item's arcs.
struct AtSolo {  // a thread worker: one lane, its own item
    __device__ static u32 size() { return 1; }
    __device__ static u32 rank() { return 0; }
    __device__ static void sync() {}
    __device__ static u64 bcast(u64 v) { return v; }
    __device__ static bool any(bool p) { return p; }
    __device__ static u64 or64(u64 m) { return m; }
};
struct AtWarp {
    __device__ static u32 size() { return 32; }
    __device__ static u32 rank() { return sy_lane(); }
    __device__ static void sync() { __syncwarp(); }
    __device__ static u64 bcast(u64 v) { return __shfl_sync(AT_FULL, v, 0); }
    __device__ static bool any(bool p) { return __any_sync(AT_FULL, p); }
    __device__ static u64 or64(u64 m) {
        u32 lo = __reduce_or_sync(AT_FULL, (u32)m);
        u32 hi = __reduce_or_sync(AT_FULL, (u32)(m >> 32));
        return ((u64)hi << 32) | lo;
    }
};
__shared__ u64 s_team[2];
struct AtBlock {
    __device__ static u32 size() { return blockDim.x; }
    __device__ static u32 rank() { return threadIdx.x; }
    __device__ static void sync() { __syncthreads(); }
    __device__ static u64 bcast(u64 v) {
        if (threadIdx.x == 0) s_team[0] = v;
        __syncthreads();
        u64 r = s_team[0];
        __syncthreads();
        return r;
    }
    __device__ static bool any(bool p) { return __syncthreads_or(p) != 0; }
    __device__ static u64 or64(u64 m) {
        if (threadIdx.x == 0) s_team[1] = 0;
        __syncthreads();
        if (m) atomicOr(&s_team[1], m);
        __syncthreads();
        u64 r = s_team[1];
        __syncthreads();
        return r;
    }
};

// A started task.
struct AtTask {
    u32 carry;
    u64 beg, end;
    bool ok, visit;
};

// Per-thread counts, added to the state block per team round.
struct AtCounts {
    u64 tasks, visits, edges, atomics;
};

// Applications. Each gives: SWEEPS, REMOTE_MIN, REMOTE_ADD, COLOR; start (one thread, may
// take what it consumes), arc (one arc of a started task), apply (an update of an own
// vertex: push it?), receive (a pair from the receive queue), priority, sweep.

// Sends update (t, val) by the application's rule: local at once (a task it makes is pushed,
// or left in `sink` for the block to push), else aggregated, else a remote atomic (min with
// push on improvement, f32 add) or a pair pushed to the owner.
template <class App> __device__ void at_update(const AtCtx &c, u32 t, u32 val, AtSink *sink) {
    u32 h = at_owner(c, t);
    u32 tl = t - c.bases[h];
    if (h == c.gpu) {
        u32 prio = 0;
        if (App::apply(c, tl, val, prio)) {
            if (sink) {
                sink->item = tl;
                sink->queue = at_is_low(c, prio) ? 2 : 1;
                if (App::KEEP && s_kmax) {
                    // Loaded now, used after the push's barriers (s_kbeg).
                    sink->val = val;
                    sink->beg = c.offsets[tl];
                    sink->end = c.offsets[tl + 1];
                }
            } else {
                at_push_task(c, tl, prio);
            }
        }
    } else if (App::REMOTE_MIN && t < c.n_flags && val >= atomicMin(c.flags + t, val)) {
        // The remote filter (kernels.rs): this GPU already sent the owner a value <= val.
        u32 m = __activemask();
        if (sy_lane() == (u32)(__ffs(m) - 1)) at_stat(AS_FILTERED, (u64)__popc(m));
    } else if (c.aggregated) {
        at_push(c, at_agg(c, h), tl, val, 2, false, false);
    } else if (App::REMOTE_ADD) {
        atomicAdd((float *)c.pval[h] + tl, __uint_as_float(val));
        at_count_remote(h);
    } else {
        bool push = true;
        if (App::REMOTE_MIN) push = val < atomicMin(c.pval[h] + tl, val);
        if (push && sink && !(s_mode & AT_MODE_WARP_REMOTE)) {
            sink->item = tl;
            sink->val = val;
            sink->queue = 3 + h;
        } else if (push) {
            at_push(c, c.precv[h], tl, val, 2, false, true);
        }
        at_count_remote(h);
    }
}

struct AtBfs {
    static constexpr bool SWEEPS = false, REMOTE_MIN = true, REMOTE_ADD = false, COLOR = false;
    static constexpr bool KEEP = true;  // level keeping applies (see s_kmax)
    __device__ static AtTask start(const AtCtx &c, u32 v) {
        AtTask t;
        // The three loads are independent (the row's end is not loaded only when the vertex
        // is reached): one round trip, not two, on the path of every BFS level.
        u32 level = __ldcg(c.value + v);
        u64 beg = c.offsets[v], end = c.offsets[v + 1];
        t.ok = level != SY_UNREACHED;
        t.visit = t.ok;
        t.carry = level + 1;
        t.beg = beg;
        t.end = t.ok ? end : beg;
        return t;
    }
    __device__ static void arc(const AtCtx &c, u32 carry, u32 t, AtSink *sink) {
        at_update<AtBfs>(c, t, carry, sink);
    }
    __device__ static bool apply(const AtCtx &c, u32 v, u32 val, u32 &prio) {
        prio = val;
        return val < atomicMin(c.value + v, val);
    }
    __device__ static bool receive(const AtCtx &c, u32 v, u32 val, bool applied, u32 &prio) {
        if (applied) {
            prio = val;
            return __ldcg(c.value + v) == val;
        }
        return apply(c, v, val, prio);
    }
    __device__ static u32 priority(const AtCtx &c, u32 item) { return __ldcg(c.value + item); }
    __device__ static bool sweep(const AtCtx &, u32) { return false; }
};

struct AtPr {
    static constexpr bool SWEEPS = true, REMOTE_MIN = false, REMOTE_ADD = true, COLOR = false;
    static constexpr bool KEEP = false;
    __device__ static AtTask start(const AtCtx &c, u32 v) {
        AtTask t;
        atomicExch(c.flags + v, 0u);
        float r = __uint_as_float(atomicExch(c.value + v, 0u));
        atomicAdd(c.aux + v, r);
        u64 beg = c.offsets[v], end = c.offsets[v + 1];
        t.ok = r != 0.0f;
        t.visit = t.ok;
        t.carry = 0;
        if (t.ok && end > beg) t.carry = __float_as_uint((float)(c.damping * (double)r / (double)(end - beg)));
        t.beg = beg;
        t.end = t.ok ? end : beg;
        return t;
    }
    __device__ static void arc(const AtCtx &c, u32 carry, u32 t, AtSink *sink) {
        at_update<AtPr>(c, t, carry, sink);
    }
    // Adds the residual and queues nothing (Alg. 4 line 10): the sweep finds the vertex.
    __device__ static bool apply(const AtCtx &c, u32 v, u32 val, u32 &prio) {
        prio = 0;
        atomicAdd((float *)c.value + v, __uint_as_float(val));
        return false;
    }
    __device__ static bool receive(const AtCtx &c, u32 v, u32 val, bool, u32 &prio) {
        return apply(c, v, val, prio);
    }
    __device__ static u32 priority(const AtCtx &, u32) { return 0; }
    __device__ static bool sweep(const AtCtx &c, u32 v) {
        float r = __uint_as_float(__ldcg(c.value + v));
        return (double)r > c.eps && __ldcg(c.flags + v) == 0 && atomicCAS(c.flags + v, 0u, 1u) == 0;
    }
};

#define AT_ASSIGN_QUEUED 1u
#define AT_CHECK_QUEUED 2u
#define AT_UNCOLORED 0xffffffffu

// coloring::wins: a fixed total order that looks random (a 32-bit mix, ties by id).
__device__ __forceinline__ u32 at_mix(u32 x) {
    x ^= 0x9E3779B9u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    return x ^ (x >> 16);
}
__device__ __forceinline__ bool at_wins(u32 a, u32 b) {
    u32 ma = at_mix(a), mb = at_mix(b);
    return ma < mb || (ma == mb && a < b);
}

struct AtColor {
    static constexpr bool SWEEPS = false, REMOTE_MIN = false, REMOTE_ADD = false, COLOR = true;
    static constexpr bool KEEP = false;
    __device__ static bool mark(const AtCtx &c, u32 v, u32 bit) {
        return (atomicOr(c.flags + v, bit) & bit) == 0;
    }
    __device__ static u32 value_of(const AtCtx &c, u32 t) {
        u32 h = at_owner(c, t);
        const u32 *p = h == c.gpu ? c.value : c.pval[h];
        return __ldcg(p + (t - c.bases[h]));
    }
    __device__ static AtTask start(const AtCtx &, u32) { return AtTask(); }
    __device__ static void arc(const AtCtx &, u32, u32, AtSink *) {}
    // A reassignment request: queue the vertex's assignment unless one is queued.
    __device__ static bool apply(const AtCtx &c, u32 v, u32, u32 &prio) {
        prio = 0;
        return mark(c, v, AT_ASSIGN_QUEUED);
    }
    __device__ static bool receive(const AtCtx &c, u32 v, u32 val, bool, u32 &prio) {
        return apply(c, v, val, prio);
    }
    __device__ static u32 priority(const AtCtx &, u32) { return 0; }
    __device__ static bool sweep(const AtCtx &, u32) { return false; }
};

// Colouring's fused task (seed 004 Alg. 6) on one item, by the whole team: an assignment
// takes the smallest colour no neighbour has (in windows of 64 colours) and queues the
// check; a check that finds a same-coloured neighbour that wins queues a new assignment,
// else it asks every same-coloured neighbour (they lose) to reassign.
template <class Team> __device__ void at_color_task(const AtCtx &c, u32 item, AtCounts &n) {
    u32 v = item & ~AT_TAG;
    bool check = (item & AT_TAG) != 0;
    if (Team::rank() == 0) atomicAnd(c.flags + v, ~(check ? AT_CHECK_QUEUED : AT_ASSIGN_QUEUED));
    u64 beg = c.offsets[v], end = c.offsets[v + 1];
    u32 me = c.bases[c.gpu] + v;
    if (Team::rank() == 0) {
        n.tasks++;
        n.edges += end - beg;
        at_stat(0, 1);
    }
    if (!check) {
        u32 colour = 0;
        for (u32 base = 0;; base += 64) {
            u64 mask = 0;
            for (u64 e = beg + Team::rank(); e < end; e += Team::size()) {
                u32 u = c.targets[e];
                if (u == me) continue;
                u32 col = AtColor::value_of(c, u);
                if (col >= base && col - base < 64) mask |= 1ull << (col - base);
            }
            mask = Team::or64(mask);
            if (mask != ~0ull) {
                colour = base + (u32)(__ffsll((long long)~mask) - 1);
                break;
            }
        }
        if (Team::rank() == 0) {
            n.visits++;
            atomicExch(c.value + v, colour);
            at_fence();
            if (AtColor::mark(c, v, AT_CHECK_QUEUED)) at_push_task(c, v | AT_TAG, 0);
        }
        Team::sync();
        return;
    }
    u32 mine = __ldcg(c.value + v);
    bool lost = false;
    for (u64 e = beg + Team::rank(); e < end && !lost; e += Team::size()) {
        u32 u = c.targets[e];
        if (u != me && at_wins(u, me) && AtColor::value_of(c, u) == mine) lost = true;
    }
    lost = Team::any(lost);
    if (lost) {
        if (Team::rank() == 0 && AtColor::mark(c, v, AT_ASSIGN_QUEUED)) at_push_task(c, v, 0);
        Team::sync();
        return;
    }
    for (u64 e = beg + Team::rank(); e < end; e += Team::size()) {
        u32 u = c.targets[e];
        if (u != me && AtColor::value_of(c, u) == mine) {
            at_update<AtColor>(c, u, 0, nullptr);
            n.atomics++;
        }
    }
    Team::sync();
}

// One item by the team: colouring's task, or start (by the team's first thread) and the arcs
// strided over the team.
template <class App, class Team> __device__ void at_task(const AtCtx &c, u32 item, AtCounts &n) {
    if constexpr (App::COLOR) {
        at_color_task<Team>(c, item, n);
        return;
    }
    AtTask t = {0, 0, 0, false, false};
    if (Team::rank() == 0) {
        t = App::start(c, item);
        n.tasks += t.ok;
        n.visits += t.visit;
        n.edges += t.end - t.beg;
        n.atomics += t.end - t.beg + (App::SWEEPS ? 2 : 0);
        at_stat(0, 1);
    }
    u64 carry = Team::bcast(t.carry);
    u64 beg = Team::bcast(t.beg);
    u64 end = Team::bcast(t.end);
    for (u64 e = beg + Team::rank(); e < end; e += Team::size())
        App::arc(c, (u32)carry, c.targets[e], nullptr);
    Team::sync();
}

// CTA workers of BFS and PageRank: the block's items (one per thread, at most blockDim; the
// first `items` threads may hold one) are started by their threads, their arcs laid end to
// end (a block-wide exclusive scan of their counts) and taken by consecutive threads (binary
// search for the owner item among the first `items`).
template <class App>
__device__ void at_block_expand(const AtCtx &c, u32 item, bool have, u32 items, AtCounts &n,
                                int kside = 0, int kslot = -1) {
    __shared__ u32 s_excl[AT_MAX_BLOCK], s_carry[AT_MAX_BLOCK], s_warp[AT_MAX_WARPS + 1];
    __shared__ u64 s_beg[AT_MAX_BLOCK];
    AtTask t;
    t.beg = t.end = 0;
    t.carry = 0;
    if (have) {
        if (App::KEEP && kslot >= 0) {
            // A kept task: started from what its finder knew (s_kbeg).
            t.beg = s_kbeg[kside][kslot];
            t.end = t.beg + s_kdeg[kside][kslot];
            t.carry = s_klab[kside][kslot] + 1;
            t.ok = t.visit = true;
        } else {
            t = App::start(c, item);
        }
        n.tasks += t.ok;
        n.visits += t.visit;
        n.edges += t.end - t.beg;
        n.atomics += t.end - t.beg + (App::SWEEPS ? 2 : 0);
    }
    // Items started, one shared atomic per warp (not per thread on one word).
    u32 started = __popc(__ballot_sync(AT_FULL, have));
    if (sy_lane() == 0) at_stat(0, started);
    u32 count = (u32)(t.end - t.beg);
    u32 incl = sy_warp_scan(count);
    u32 warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (sy_lane() == 31) s_warp[warp] = incl;
    __syncthreads();
    if (threadIdx.x < 32) {
        // The warps' totals scanned by warp 0 (warps <= 32).
        u32 x = threadIdx.x < warps ? s_warp[threadIdx.x] : 0;
        u32 run = sy_warp_scan(x);
        if (threadIdx.x < warps) s_warp[threadIdx.x] = run - x;
        if (threadIdx.x == 31) s_warp[AT_MAX_WARPS] = run;
    }
    __syncthreads();
    s_excl[threadIdx.x] = s_warp[warp] + incl - count;
    s_beg[threadIdx.x] = t.beg;
    s_carry[threadIdx.x] = t.carry;
    __syncthreads();
    u32 total = s_warp[AT_MAX_WARPS];
    // One arc per thread per pass; the pass's tasks are pushed by the block together.
    for (u32 base = 0; base < total; base += blockDim.x) {
        u32 k = base + threadIdx.x;
        AtSink sink = {0, 0, 0, 0, 0};
        if (k < total) {
            u32 lo = 0, hi = items - 1;
            while (lo < hi) {
                u32 mid = (lo + hi + 1) >> 1;
                if (s_excl[mid] <= k) lo = mid; else hi = mid - 1;
            }
            App::arc(c, s_carry[lo], c.targets[s_beg[lo] + (k - s_excl[lo])], &sink);
        }
        at_push_block<App>(c, sink);
    }
    __syncthreads();
}

// Adds a thread's counts to the block's (at exit; see s_stat).
__device__ void at_add_counts(AtCounts &n) {
    at_stat(AS_TASKS, n.tasks);
    at_stat(AS_VISITS, n.visits);
    at_stat(AS_EDGES, n.edges);
    at_stat(1, n.edges);
    at_stat(2, n.atomics);
    n.tasks = n.visits = n.edges = n.atomics = 0;
}

// Fills the block's context (thread 0).
__device__ void at_context(const SyArgs &a, AtCtx &c) {
    c.offsets = sy_buf<const u64>(a, AT_OFFSETS);
    c.targets = sy_buf<const u32>(a, AT_TARGETS);
    c.value = sy_buf<u32>(a, AT_VALUE);
    c.aux = sy_buf<float>(a, AT_AUX);
    c.flags = sy_buf<u32>(a, AT_FLAGS);
    c.local.items = sy_buf<u32>(a, AT_LOCAL_ITEMS);
    c.local.c = sy_buf<u64>(a, AT_LOCAL_COUNTERS);
    c.local.cap = a.len[AT_LOCAL_ITEMS];
    c.low.items = sy_buf<u32>(a, AT_LOW_ITEMS);
    c.low.c = sy_buf<u64>(a, AT_LOW_COUNTERS);
    c.low.cap = a.len[AT_LOW_ITEMS];
    c.recv.items = sy_buf<u32>(a, AT_RECV_ITEMS);
    c.recv.c = sy_buf<u64>(a, AT_RECV_COUNTERS);
    c.recv.cap = a.len[AT_RECV_ITEMS];
    c.agg_items = sy_buf<u32>(a, AT_AGG_ITEMS);
    c.agg_c = sy_buf<u64>(a, AT_AGG_COUNTERS);
    c.x = sy_buf<u64>(a, AT_WORKERS);
    c.st = sy_buf<u64>(a, AT_STATE);
    c.ctl = sy_buf<u64>(a, AT_CTL);
    c.gpu = sy_u32(a, SC_GPU);
    c.gpus = sy_u32(a, SC_GPUS);
    c.agg_seg = c.gpus ? a.len[AT_AGG_ITEMS] / c.gpus : 0;
    c.n_local = (u32)a.len[AT_VALUE];
    c.n_flags = a.len[AT_FLAGS];
    const u32 *bases = sy_buf<const u32>(a, AT_BASES);
#pragma unroll
    for (int h = 0; h < AT_PEERS; h++) {
        c.pval[h] = sy_buf<u32>(a, AT_SLOTS + 3 * h);
        c.precv[h].items = sy_buf<u32>(a, AT_SLOTS + 3 * h + 1);
        c.precv[h].c = sy_buf<u64>(a, AT_SLOTS + 3 * h + 2);
        c.precv[h].cap = a.len[AT_SLOTS + 3 * h + 1];
    }
    for (u32 h = 0; h <= c.gpus && h <= AT_PEERS; h++) c.bases[h] = bases[h];
}

// Checks the contract's shapes; false (with the error word set) when the launch is unusable.
__device__ bool at_check(const SyArgs &a, u32 gpus, u32 gpu) {
    if (gpus == 0 || gpus > AT_PEERS || gpu >= gpus || a.nbuffers < AT_SLOTS + 3 * gpus) {
        sy_fail(a, SY_ERR_LEN, AT_SLOTS + 3 * (u64)gpus, a.nbuffers);
        return false;
    }
    if (a.len[AT_WORKERS] / 2 < X_WORDS) {
        sy_fail(a, SY_ERR_LEN, 2 * X_WORDS, a.len[AT_WORKERS]);
        return false;
    }
    if (a.len[AT_STATE] < ST_LEN || a.len[AT_CTL] < (u64)gpus * C_STRIDE + 1) {
        sy_fail(a, SY_ERR_LEN, ST_LEN, a.len[AT_STATE]);
        return false;
    }
    return true;
}

// Whether this GPU has nothing to do (one thread; see the file's notes), RECV read first.
template <class App> __device__ bool at_idle(const AtCtx &c, u64 &seen) {
    seen = at_vol(c.recv.c + AT_RECV_ARRIVED);
    if (App::SWEEPS && seen != at_vol(c.st + ST_LAST_RECV)) {
        // Remote adds landed (they push nothing): sweep again.
        atomicMax(c.st + ST_LAST_RECV, seen);
        atomicAdd(c.x + X_EPOCH, 1ull);
        return false;
    }
    at_fence();
    u64 closed = at_vol(c.x + X_CLOSED);
    at_fence();
    if (at_vol(c.recv.c + Q_END_ALLOC) != at_vol(c.recv.c + Q_START)) return false;
    for (u32 h = 0; h < c.gpus; h++) {
        AtQ q = at_agg(c, h);
        if (at_vol(q.c + Q_END_ALLOC) != at_vol(q.c + Q_START)) return false;
    }
    at_fence();
    u64 opened = at_vol(c.local.c + Q_END_ALLOC) + at_vol(c.low.c + Q_END_ALLOC) +
                 at_vol(c.x + X_OPENED);
    if (opened != closed) return false;
    if (App::SWEEPS && c.n_local > 0) {
        u64 clean = at_vol(c.x + X_CLEAN);
        u64 epoch = at_vol(c.x + X_EPOCH);
        if ((u32)(clean >> 32) != (u32)epoch || (clean & 0xffffffffull) < c.n_local) return false;
    }
    return true;
}

__device__ void at_publish_idle(const AtCtx &c, bool idle, u64 seen) {
    volatile u64 *ctl = (volatile u64 *)at_ctl(c, c.gpu, 0);
    if (idle) {
        ctl[C_SEEN] = seen;
        __threadfence_system();
        ctl[C_IDLE] = 1;
    } else {
        ctl[C_IDLE] = 0;
    }
    __threadfence_system();
}

// Adds `m` clean vertices swept in `epoch` (one thread).
__device__ void at_clean_add(const AtCtx &c, u64 epoch, u64 m) {
    u32 e = (u32)epoch;
    while (true) {
        u64 x = at_vol(c.x + X_CLEAN);
        u32 xe = (u32)(x >> 32);
        u64 nx;
        if (xe == e) {
            if ((x & 0xffffffffull) >= c.n_local) return;
            nx = x + m;
        } else if ((int)(e - xe) > 0) {
            nx = ((u64)e << 32) | m;
        } else {
            return;  // a newer epoch began: this sweep counts for nothing
        }
        if (atomicCAS(c.x + X_CLEAN, x, nx) == x) return;
    }
}

// A sweep of Check_Size vertices by the team (seed 004 Alg. 4's f2): 0 when it did not sweep
// (a persistent GPU already swept clean, or a discrete launch's budget of one full cycle is
// spent), 1 when it swept and found nothing, 2 when it queued vertices.
template <class App, class Team> __device__ int at_sweep(const AtCtx &c) {
    if (c.n_local == 0 || c.check_size == 0) return 0;
    u64 m = c.check_size < c.n_local ? c.check_size : c.n_local;
    u64 base = 0, epoch = 0, go = 0;
    if (Team::rank() == 0) {
        if (c.persistent) {
            u64 clean = at_vol(c.x + X_CLEAN);
            go = (u32)(clean >> 32) != (u32)at_vol(c.x + X_EPOCH) ||
                 (clean & 0xffffffffull) < c.n_local;
        } else {
            go = at_vol(c.x + X_SWEPT) < c.n_local;
        }
        if (go) {
            atomicAdd(c.x + X_OPENED, 1ull);
            at_fence();
            epoch = at_vol(c.x + X_EPOCH);
            at_fence();
            base = atomicAdd(c.st + ST_CHECK, m);
            if (!c.persistent) atomicAdd(c.x + X_SWEPT, m);
            at_fence();
        }
    }
    if (!Team::bcast(go)) return 0;
    base = Team::bcast(base);
    bool found = false;
    for (u64 i = Team::rank(); i < m; i += Team::size()) {
        u32 v = (u32)((base + i) % c.n_local);
        if (App::sweep(c, v)) {
            at_push_task(c, v, App::priority(c, v));
            found = true;
        }
    }
    found = Team::any(found);
    if (Team::rank() == 0) {
        atomicAdd(c.st + ST_SWEPT, m);
        at_stat(0, m);
        at_fence();
        if (found) atomicAdd(c.x + X_EPOCH, 1ull);
        else at_clean_add(c, epoch, m);
        at_fence();
        atomicAdd(c.x + X_CLOSED, 1ull);
    }
    Team::sync();
    return found ? 2 : 1;
}

// The limit a discrete launch pops below (its NAME__pre recorded the ends), or none.
__device__ __forceinline__ u64 at_limit(const AtCtx &c, int which) {
    return c.persistent ? ~0ull : at_vol(c.st + ST_LIMIT_LOCAL + which);
}

// Drains up to one pair per team thread from the receive queue (applied, tasks pushed
// locally); returns the pairs taken. Headers of aggregated batches count their slots as
// consumed from their sender.
template <class App, class Team> __device__ u32 at_receive(const AtCtx &c, u32 lane_base) {
    if (c.gpus < 2) return 0;
    u64 at = 0, take = 0;
    if (Team::rank() == 0)
        take = at_pop(c.recv, 2 * (u64)Team::size(), at_limit(c, 2), at, c.x + X_OPENED,
                      c.x + X_CLOSED, 2);
    (void)lane_base;
    take = Team::bcast(take);
    if (take == 0) return 0;
    at = Team::bcast(at);
    u32 pairs = (u32)(take / 2);
    u32 r = Team::rank();
    u32 v = 0, val = 0;
    bool have = r < pairs;
    if (have) {
        v = at_get(c.recv, at + 2 * (u64)r);
        val = at_get(c.recv, at + 2 * (u64)r + 1);
    }
    at_fence();
    Team::sync();
    if (Team::rank() == 0) at_pop_done(c.recv, at, take);
    u32 received = 0;
    if (have) {
        if (v & AT_TAG) {
            u32 s = v & ~AT_TAG;
            if (s < AT_MAX_GPUS) atomicAdd(c.recv.c + AT_RECV_CONSUMED + s, (u64)val + 1);
        } else {
            received = 1;
            u32 prio = 0;
            bool applied = App::REMOTE_MIN && !c.aggregated;
            if (App::receive(c, v, val, applied, prio)) at_push_task(c, v, prio);
        }
    }
    at_fence();
    bool any_received = Team::any(received != 0);
    if (App::SWEEPS && any_received && Team::rank() == 0) atomicAdd(c.x + X_EPOCH, 1ull);
    // Count the pairs received (headers excluded) and close every pair taken.
    u32 got = received;
    if (Team::size() > 1) {
        if (Team::size() == 32) got = __reduce_add_sync(AT_FULL, got);
        else {
            __shared__ u32 s_got;
            if (threadIdx.x == 0) s_got = 0;
            __syncthreads();
            if (got) atomicAdd(&s_got, got);
            __syncthreads();
            got = s_got;
            __syncthreads();
        }
    }
    if (Team::rank() == 0) {
        if (got) atomicAdd(c.st + ST_RECEIVED, (u64)got);
        at_stat(0, got);
        at_fence();
        atomicAdd(c.x + X_CLOSED, (u64)pairs);
    }
    Team::sync();
    return pairs;
}

// In flight on this GPU: items taken from the local and low queues plus receive pairs and
// sweeps taken, less those closed (one thread).
__device__ u64 at_in_flight(const AtCtx &c) {
    return at_vol(c.local.c + Q_START) + at_vol(c.low.c + Q_START) + at_vol(c.x + X_OPENED) -
           at_vol(c.x + X_CLOSED);
}

// Raises the priority threshold when nothing below it is queued or in flight and the low
// queue's items below its mark are all taken; the mark becomes the low queue's END, so the
// items queued before this raise are popped after it, and those still at or above the
// threshold, pushed back, wait for the next raise instead of going round (one thread, under
// X_RAISING so the mark and the threshold move together).
__device__ void at_maybe_raise(const AtCtx &c) {
    if (atomicCAS(c.x + X_RAISING, 0ull, 1ull) != 0) return;
    at_fence();
    u64 ls = at_vol(c.low.c + Q_START);
    if (ls >= at_vol(c.x + X_LOW_MARK) && at_vol(c.low.c + Q_END) != ls &&
        at_vol(c.local.c + Q_END) == at_vol(c.local.c + Q_START) &&
        at_vol(c.recv.c + Q_END) == at_vol(c.recv.c + Q_START) && at_in_flight(c) == 0) {
        atomicAdd(c.st + ST_THRESHOLD, (u64)c.delta);
        atomicAdd(c.st + ST_RAISES, 1ull);
        atomicMax(c.x + X_LOW_MARK, at_vol(c.low.c + Q_END));
    }
    at_fence();
    atomicExch(c.x + X_RAISING, 0ull);
}

// Takes up to `want` task items for the team from the local queue (persistent: from its
// reservation `hold`, see at_take_held), or (priority queue on, nothing local or received)
// from the low queue below its mark, raising the threshold first when nothing is in flight.
// Items stay in the queue's slots until at_pop_done; `from` says which queue.
template <class App> __device__ u64 at_take(const AtCtx &c, u64 want, u64 &at, int &from, u64 *hold) {
    u64 got = c.persistent ? at_take_held(c.local, hold, want, at)
                           : at_pop(c.local, want, at_limit(c, 0), at, nullptr, nullptr, 1);
    from = 0;
    if (got || c.delta == 0) return got;
    if (at_vol(c.local.c + Q_END) != at_vol(c.local.c + Q_START)) return 0;
    if (at_vol(c.recv.c + Q_END) != at_vol(c.recv.c + Q_START)) return 0;
    if (at_vol(c.low.c + Q_START) >= at_vol(c.x + X_LOW_MARK)) at_maybe_raise(c);
    u64 limit = at_limit(c, 1), mark = at_vol(c.x + X_LOW_MARK);
    from = 1;
    return at_pop(c.low, want, mark < limit ? mark : limit, at, nullptr, nullptr, 1);
}

// A popped item from the low queue whose priority is at or above the threshold goes back.
template <class App> __device__ bool at_deferred(const AtCtx &c, u32 item, int from) {
    if (from != 1) return false;
    if ((u64)App::priority(c, item) < at_vol(c.st + ST_THRESHOLD)) return false;
    at_push(c, c.low, item, 0, 1, true, false);
    return true;
}

// Persistent teams' reservations in the local queue (at_take_held): the block's, and each
// warp's for thread and warp workers.
__shared__ u64 s_hold[2];
__shared__ u64 s_whold[AT_MAX_WARPS][2];

// One round of a warp team (thread or warp workers): receive, else take tasks and run them
// (then sweep, for sweeping applications); false when it found nothing to do.
template <class App, bool THREAD> __device__ bool at_round_warp(const AtCtx &c, AtCounts &n) {
    if (at_receive<App, AtWarp>(c, 0)) return true;
    u64 at = 0, got = 0;
    int from = 0;
    if (sy_lane() == 0) got = at_take<App>(c, THREAD ? 32 : 1, at, from, s_whold[threadIdx.x >> 5]);
    got = __shfl_sync(AT_FULL, got, 0);
    bool worked = got != 0;
    if (got) {
        at = __shfl_sync(AT_FULL, at, 0);
        from = __shfl_sync(AT_FULL, from, 0);
        const AtQ &q = from ? c.low : c.local;
        if (THREAD) {
            bool have = sy_lane() < got;
            u32 item = have ? at_get(q, at + sy_lane()) : 0;
            at_fence();
            __syncwarp();
            if (sy_lane() == 0) {
                at_pop_done(q, at, got);
                at_stat(AS_POPPED, got);
                at_stat(0, got);
            }
            if (have && !at_deferred<App>(c, item, from)) at_task<App, AtSolo>(c, item, n);
        } else {
            u32 item = at_get(q, at);
            at_fence();
            __syncwarp();
            if (sy_lane() == 0) {
                at_pop_done(q, at, got);
                at_stat(AS_POPPED, got);
                at_stat(0, got);
            }
            bool defer = false;
            if (sy_lane() == 0) defer = at_deferred<App>(c, item, from);
            if (!__shfl_sync(AT_FULL, (int)defer, 0)) at_task<App, AtWarp>(c, item, n);
        }
        __syncwarp();
        at_hold_remote_warp(c);
        at_fence();
        __syncwarp();
        if (App::SWEEPS && sy_lane() == 0) atomicAdd(c.x + X_EPOCH, 1ull);
        if (sy_lane() == 0) {
            at_fence();
            atomicAdd(c.x + X_CLOSED, got);
        }
    }
    if constexpr (App::SWEEPS) {
        // Persistent: a sweep that finds nothing is not work (the team goes idle); discrete:
        // sweeping is the launch's work until one full cycle is swept.
        int swept = at_sweep<App, AtWarp>(c);
        if (swept == 2 || (swept == 1 && !c.persistent)) worked = true;
    }
    return worked;
}

// One round of a CTA team.
template <class App> __device__ bool at_round_block(const AtCtx &c, AtCounts &n) {
    if (at_receive<App, AtBlock>(c, 0)) return true;
    __shared__ u64 s_at, s_got;
    __shared__ int s_from;
    if (threadIdx.x == 0) {
        u64 at = 0;
        int from = 0;
        s_got = at_take<App>(c, c.fetch, at, from, s_hold);
        s_at = at;
        s_from = from;
    }
    __syncthreads();
    u64 got = s_got, at = s_at;
    int from = s_from;
    __syncthreads();
    bool worked = got != 0;
    if (got) {
        const AtQ &q = from ? c.low : c.local;
        // Items this round took, at first..first+total: a persistent team takes what arrives
        // in its reservation while it works before it frees and closes them (its next items
        // wait for no one else, so the round's tail is not on their path).
        // With level keeping (s_kmax), each pass of the loop is a level: the items taken
        // from the queue, then the kn tasks the previous level kept in s_kbuf[cur].
        u64 first = at, total = 0;
        bool keep = App::KEEP && s_kmax != 0;
        u32 kn = 0, cur = 0;
        u64 end_seen = 0;  // thread 0, keeping: END as read at the level's start
        u32 levels = 0;
        while (true) {
        if (keep && threadIdx.x == 0) end_seen = at_vol(c.local.c + Q_END);
        u64 all = got + kn;
        for (u64 round = 0; round < all; round += blockDim.x) {
            u64 i = round + threadIdx.x;
            bool have = i < all;
            u32 item = 0;
            int kslot = -1;
            if (i < got) {
                item = at_get(q, at + i);
                if (at_deferred<App>(c, item, from)) have = false;
            } else if (have) {
                kslot = (int)(i - got);
                item = s_kbuf[cur][kslot];
            }
            if constexpr (App::COLOR) {
                __shared__ u32 s_items[AT_MAX_BLOCK];
                __shared__ u32 s_have[AT_MAX_BLOCK];
                s_items[threadIdx.x] = item;
                s_have[threadIdx.x] = have;
                __syncthreads();
                u64 count = got - round < blockDim.x ? got - round : blockDim.x;
                for (u32 k = 0; k < count; k++)
                    if (s_have[k]) at_task<App, AtBlock>(c, s_items[k], n);
                __syncthreads();
            } else {
                u64 rest = all - round;
                at_block_expand<App>(c, item, have, rest < blockDim.x ? (u32)rest : blockDim.x, n,
                                     (int)cur, kslot);
            }
        }
        total += got;
        if (!c.persistent || from != 0) break;
        if (keep) {
            // The next level: what the END read at this level's start showed of the
            // reservation (its round trip overlapped the level), and the tasks kept.
            if (threadIdx.x == 0) {
                u64 taken = 0, taken_at = 0;
                if (s_hold[0] < s_hold[1] && end_seen > s_hold[0]) {
                    at_fence();
                    taken = at_take_from(c.local, s_hold, end_seen, taken_at);
                }
                s_got = taken;
                s_at = taken_at;
                s_klevel = s_knext;
                s_knext = 0;
                s_kside ^= 1;
            }
            __syncthreads();
            got = s_got;
            at = s_at;
            kn = s_klevel;
            cur = s_kside ^ 1;
            __syncthreads();
            if (got == 0 && kn == 0) break;
            // On several GPUs, pairs that arrived are applied every AT_KEEP_RECV_LEVELS
            // levels (levels is the same in every thread).
            if (c.gpus > 1 && ++levels % AT_KEEP_RECV_LEVELS == 0) at_receive<App, AtBlock>(c, 0);
            continue;
        }
        if (threadIdx.x == 0) s_got = at_take_more(c.local, s_hold, s_at);
        __syncthreads();
        got = s_got;
        at = s_at;
        __syncthreads();
        if (got == 0) break;
        }
        got = total;
        at_fence();
        __syncthreads();
        if (threadIdx.x == 0) {
            at_pop_done(q, first, got);
            at_stat(AS_POPPED, got);
            at_stat(0, got);
        }
        at_hold_remote_block(c);
        if (threadIdx.x == 0) {
            if (App::SWEEPS) atomicAdd(c.x + X_EPOCH, 1ull);
            at_fence();
            atomicAdd(c.x + X_CLOSED, got);
        }
        __syncthreads();
    }
    if constexpr (App::SWEEPS) {
        int swept = at_sweep<App, AtBlock>(c);
        if (swept == 2 || (swept == 1 && !c.persistent)) worked = true;
    }
    return worked;
}

// Idle in a persistent launch (one thread of the team; `idles`: the team's idle rounds in a
// row). A team's first idle round and every eighth after it tries the lock; the holder checks
// this GPU's idleness and publishes it to the host when it changed (X_PUBLISHED: 0, or the
// SEEN published with IDLE + 1), and reads the host's stop flag (mapped host memory, a bus
// round trip) when idle and at every sixteenth check otherwise. True when the run is stopped.
template <class App> __device__ bool at_idle_round(const AtCtx &c, u32 &idles) {
    if (at_vol(c.x + X_STOP)) return true;
    if ((idles++ & 7) == 0 && atomicCAS(c.x + X_LOCK, 0ull, 1ull) == 0) {
        u64 seen = 0;
        bool idle = at_idle<App>(c, seen);
        u64 checks = at_vol(c.x + X_CHECKS);
        *(volatile u64 *)(c.x + X_CHECKS) = checks + 1;
        if ((idle || (checks & 15) == 0) && at_vol(c.ctl + (u64)c.gpus * C_STRIDE)) {
            *(volatile u64 *)(c.x + X_STOP) = 1;
        } else {
            u64 was = at_vol(c.x + X_PUBLISHED), now = idle ? seen + 1 : 0;
            if (was != now) {
                at_publish_idle(c, idle, seen);
                *(volatile u64 *)(c.x + X_PUBLISHED) = now;
            }
        }
        at_fence();
        atomicExch(c.x + X_LOCK, 0ull);
    }
    __nanosleep(idles < 64 ? 32 : 128);
    return at_vol(c.x + X_STOP) != 0;
}

template <class App> __device__ void at_worker(const SyArgs &a) {
    __shared__ AtCtx s_c;
    __shared__ int s_ok;
    if (threadIdx.x == 0) {
        s_mode = sy_u32(a, SC_FENCE);
        s_light = (s_mode & 1u) != 0;
        s_ok = at_check(a, sy_u32(a, SC_GPUS), sy_u32(a, SC_GPU));
        if (s_ok) {
            at_context(a, s_c);
            s_c.width = sy_u32(a, SC_WIDTH);
            s_c.fetch = sy_u32(a, SC_FETCH) ? sy_u32(a, SC_FETCH) : 1;
            s_c.persistent = sy_u32(a, SC_PERSISTENT);
            s_c.aggregated = sy_u32(a, SC_AGGREGATED);
            s_c.delta = sy_u32(a, SC_DELTA);
            s_c.check_size = sy_u32(a, SC_CHECK_SIZE);
            s_c.eps = sy_f64(a, SC_EPSILON);
            s_c.damping = sy_f64(a, SC_DAMPING);
            if (s_c.width != 1 && s_c.width != 32 && s_c.width != blockDim.x) {
                sy_fail(a, SY_ERR_LEN, s_c.width, blockDim.x);
                s_ok = 0;
            }
        }
        // Level keeping: persistent CTA workers without the priority queue (whose low
        // queue orders the work instead); SC_FENCE bits 16-31 the items kept per level
        // (0: the block's width).
        u32 kmax = s_mode >> 16;
        kmax = kmax == 0 ? blockDim.x : kmax < AT_KEEP_MAX ? kmax : AT_KEEP_MAX;
        s_kmax = s_ok && App::KEEP && (s_mode & AT_MODE_KEEP) && s_c.persistent && s_c.delta == 0 ? kmax : 0;
        s_kside = s_knext = s_kbase = s_kpass = 0;
    }
    for (u32 i = threadIdx.x; i < AT_MAX_WARPS * AT_MAX_GPUS; i += blockDim.x)
        (&s_remote[0][0])[i] = 0;
    for (u32 i = threadIdx.x; i < AT_MAX_WARPS * 2; i += blockDim.x) (&s_whold[0][0])[i] = 0;
    if (threadIdx.x < AT_MAX_WARPS) s_wdirty[threadIdx.x] = s_wheld[threadIdx.x] = 0;
    if (threadIdx.x < AT_NSTAT) s_stat[threadIdx.x] = 0;
    if (threadIdx.x < AT_SINKS) s_pn[threadIdx.x] = 0;
    if (threadIdx.x < 2) s_hold[threadIdx.x] = 0;
    __syncthreads();
    if (!s_ok) return;
    const AtCtx &c = s_c;
    AtCounts n = {0, 0, 0, 0};
    u32 idles = 0;  // the team's idle rounds in a row (its first thread's)
    // A CTA worker of 32 threads that fetches one item is a warp worker.
    bool cta = c.width > 32 || (c.width == 32 && c.fetch > 1);
    u32 rounds = 0;  // rounds since the team last counted its remote operations
    if (cta) {
        while (true) {
            if (at_round_block<App>(c, n)) {
                idles = 0;
                if (!(s_mode & AT_MODE_FLUSH_IDLE) && ++rounds >= AT_FLUSH_ROUNDS) {
                    rounds = 0;
                    at_flush_remote_block(c);
                }
                continue;
            }
            rounds = 0;
            at_flush_remote_block(c);
            __shared__ int s_stop;
            if (threadIdx.x == 0) s_stop = c.persistent ? at_idle_round<App>(c, idles) : 1;
            __syncthreads();
            bool stop = s_stop != 0;
            __syncthreads();
            if (stop) break;
        }
    } else {
        while (true) {
            bool worked = c.width == 1 ? at_round_warp<App, true>(c, n) : at_round_warp<App, false>(c, n);
            if (worked) {
                idles = 0;
                if (!(s_mode & AT_MODE_FLUSH_IDLE) && ++rounds >= AT_FLUSH_ROUNDS) {
                    rounds = 0;
                    at_flush_remote_warp(c);
                }
                continue;
            }
            rounds = 0;
            at_flush_remote_warp(c);
            int stop = 1;
            if (sy_lane() == 0 && c.persistent) stop = at_idle_round<App>(c, idles);
            if (__shfl_sync(AT_FULL, stop, 0)) break;
        }
    }
    at_add_counts(n);
    at_stat_flush(a, c.st);
    // A discrete launch's last block checks and publishes this GPU's idleness.
    __syncthreads();
    if (threadIdx.x == 0 && !c.persistent) {
        at_fence();
        if (atomicAdd(c.x + X_EXITED, 1ull) == gridDim.x - 1) {
            u64 seen = 0;
            bool idle = at_idle<App>(c, seen);
            at_publish_idle(c, idle, seen);
        }
    }
}

// The workers are compiled for blocks of up to AT_MAX_BLOCK threads (a CTA worker of 1024
// threads must fit an SM's registers), so any width the options allow can launch.

// Before each launch (one thread): a discrete launch pops below the queue ends as they are
// now; the exit count and the discrete sweep budget start over; no stop seen yet.
__device__ void at_pre(const SyArgs &a) {
    s_light = 0;
    if (!at_check(a, sy_u32(a, SC_GPUS), sy_u32(a, SC_GPU))) return;
    u64 *st = sy_buf<u64>(a, AT_STATE);
    u64 *x = sy_buf<u64>(a, AT_WORKERS);
    st[ST_LIMIT_LOCAL] = at_vol(sy_buf<u64>(a, AT_LOCAL_COUNTERS) + Q_END);
    st[ST_LIMIT_LOW] = at_vol(sy_buf<u64>(a, AT_LOW_COUNTERS) + Q_END);
    st[ST_LIMIT_RECV] = at_vol(sy_buf<u64>(a, AT_RECV_COUNTERS) + Q_END);
    x[X_EXITED] = 0;
    x[X_SWEPT] = 0;
    x[X_LOCK] = 0;
    x[X_STOP] = 0;
    at_fence();
}

extern "C" __global__ void atos_bfs_worker__pre(const SyArgs a) { at_pre(a); }
extern "C" __global__ void __launch_bounds__(AT_BFS_WORKER_BLOCK, 1) atos_bfs_worker(const SyArgs a) { at_worker<AtBfs>(a); }
// The same BFS worker for two CTAs an SM (ptxas holds it to 64 registers, and it spills):
// twice the threads in flight, for wide frontiers. One H100, c63 (ms, 4 runs each): R-MAT 22
// 8.80-8.98 against 14.06-14.18 with one CTA an SM, R-MAT 20 3.11-3.46 against 3.59-3.69,
// cnr-2000 0.45-0.51 against 0.56-0.58; luxembourg 3.11-3.26 against 2.81-2.88 and the road
// grid 15.8-16.1 against 14.4-22.5. The host picks it for graphs that are not road-like
// (AtosOptions::ctas_per_sm).
extern "C" __global__ void atos_bfs_worker_wide__pre(const SyArgs a) { at_pre(a); }
extern "C" __global__ void __launch_bounds__(AT_BFS_WORKER_BLOCK, 2) atos_bfs_worker_wide(const SyArgs a) { at_worker<AtBfs>(a); }
extern "C" __global__ void atos_pr_worker__pre(const SyArgs a) { at_pre(a); }
extern "C" __global__ void __launch_bounds__(AT_MAX_BLOCK) atos_pr_worker(const SyArgs a) { at_worker<AtPr>(a); }
extern "C" __global__ void atos_color_worker__pre(const SyArgs a) { at_pre(a); }
extern "C" __global__ void __launch_bounds__(AT_MAX_BLOCK) atos_color_worker(const SyArgs a) { at_worker<AtColor>(a); }

// The aggregator (seed 003 Fig. 3), persistent beside the workers until STOP: block b serves
// the targets h with h % gridDim.x == b. Per poll and target: every full batch (BATCH_SIZE
// bytes of pairs) goes at once, a partial one after WAIT_TIME polls; a batch is a header
// (TAG | sender, pairs) and its pairs, reserved in the target's receive queue only when they
// fit the slots it has freed (so an aggregated run never overflows a receive queue: the
// batch waits, counted in AGG_WAITS), counted in SENT before it is written and in the
// target's RECV after it is published, and taken off the aggregation queue after that.
extern "C" __global__ void atos_aggregator(const SyArgs a) {
    __shared__ AtCtx s_c;
    __shared__ int s_ok;
    __shared__ u64 s_at, s_n, s_start;
    if (threadIdx.x == 0) {
        s_ok = at_check(a, sy_u32(a, SC_GPUS), sy_u32(a, SC_GPU));
        if (s_ok) at_context(a, s_c);
        s_light = 0;
        s_mode = 0;
    }
    if (threadIdx.x < AT_NSTAT) s_stat[threadIdx.x] = 0;
    __syncthreads();
    if (!s_ok) return;
    const AtCtx &c = s_c;
    u64 batch_pairs = sy_u64(a, SC_BATCH_BYTES) / 8;
    if (batch_pairs == 0) batch_pairs = 1;
    u64 wait_polls = sy_u32(a, SC_WAIT_POLLS);
    for (u64 poll = 0;; poll++) {
        // One barrier both shares the host's stop flag and orders this read before the next
        // poll's (a shared flag written by thread 0 raced with the slower threads' read of
        // it in blocks that skip the loop below: compute-sanitizer racecheck, c56).
        bool stop = threadIdx.x == 0 && (poll & 15) == 0 && at_vol(c.ctl + (u64)c.gpus * C_STRIDE);
        if (__syncthreads_or(stop)) break;
        for (u32 h = blockIdx.x; h < c.gpus; h += gridDim.x) {
            if (h == c.gpu) continue;
            AtQ q = at_agg(c, h);
            const AtQ &t = c.precv[h];
            u64 *polls = c.st + ST_AGG_POLLS + h;
            if (threadIdx.x == 0) {
                u64 pending = at_vol(q.c + Q_END) - at_vol(q.c + Q_START);
                *polls = pending == 0 ? 0 : *polls + 1;
            }
            while (true) {
                if (threadIdx.x == 0) {
                    s_n = 0;
                    u64 start = at_vol(q.c + Q_START);
                    u64 pending = (at_vol(q.c + Q_END) - start) / 2;
                    bool full = pending >= batch_pairs;
                    if (pending > 0 && (full || *polls >= wait_polls)) {
                        u64 n = pending < batch_pairs ? pending : batch_pairs;
                        if (2 * n + 2 > t.cap) n = t.cap / 2 - 1;
                        u64 len = 2 * n + 2;
                        while (n > 0) {
                            u64 ea = at_vol(t.c + Q_END_ALLOC);
                            if (ea + len - at_vol(t.c + Q_FREED) > t.cap) {
                                // Flow control: the batch waits for room at its target.
                                atomicAdd(c.st + ST_AGG_WAITS, 1ull);
                                break;
                            }
                            if (atomicCAS(t.c + Q_END_ALLOC, ea, ea + len) == ea) {
                                at_put(t, ea, AT_TAG | c.gpu);
                                at_put(t, ea + 1, (u32)n);
                                s_at = ea;
                                s_n = n;
                                s_start = start;
                                if (!full) *polls = 0;
                                break;
                            }
                        }
                    }
                }
                __syncthreads();
                u64 n = s_n, ea = s_at, start = s_start;
                __syncthreads();
                if (n == 0) break;
                for (u64 i = threadIdx.x; i < 2 * n; i += blockDim.x)
                    at_put(t, ea + 2 + i, at_get(q, start + i));
                __threadfence_system();
                __syncthreads();
                if (threadIdx.x == 0) {
                    at_publish(t, ea, 2 * n + 2, true);
                    __threadfence_system();
                    at_count_sent(c, h, n);
                    // Off the aggregation queue (this block is its only popper).
                    *(volatile u64 *)(q.c + Q_START) = start + 2 * n;
                    at_fence();
                    *(volatile u64 *)(q.c + Q_FREED) = start + 2 * n;
                    c.st[ST_SENT_TO + h] += n + 1;
                    atomicAdd(c.st + ST_BATCHES, 1ull);
                    atomicAdd(c.st + ST_SENT, n);
                    at_stat(0, n);
                    at_stat(2, 1);
                }
                __syncthreads();
            }
        }
        __nanosleep(200);
    }
    at_stat_flush(a, c.st);
}

// ---------------------------------------------------------------------------------------
// On-chip tiles (src/runtime/atos/tiles.rs): BFS on one GPU, one CTA a tile of the graph,
// every CTA resident. A CTA keeps its tile's labels, rows and lists in shared memory and runs
// its part of the BFS there; an arc to another tile lowers the target's global label with an
// atomic min and, on improvement, pushes (index in tile, label) into the owner's inbox. Token
// termination: ctl[0] counts the CTAs holding work and the messages not yet given back.
// Buffers: 0 tile starts (tiles + 1), 1 rows (n + 1, over tile-ordered ids), 2 arcs (index in
// the tile, or AT_TILE_REMOTE | tile-ordered id), 3 labels (in and out), 4 inboxes (tiles x
// capacity u64, all ones until written), 5 tails (tiles), 6 ctl (tokens, refused),
// 7 stats (u64: expansions, messages, most rounds of a CTA, arcs). Scalars: tiles, capacity.
// ctl: [0] tokens (the host gives every CTA one), [1] refused entries, [2] stalled (a CTA
// waited AT_TILE_STALL_NS for a message or the end: every CTA stops, the run fails).
#define AT_TILE_BLOCK 256
#define AT_TILE_STALL_NS 10000000000ull
#define AT_TILE_REMOTE 0x80000000u
#define AT_TILE_EMPTY 0xffffffffffffffffull
extern __shared__ u32 at_tile_smem[];

__device__ __forceinline__ u32 at_tile_owner(const u32 *s_start, u32 tiles, u32 g) {
    u32 lo = 0, hi = tiles;  // the largest t with s_start[t] <= g
    while (hi - lo > 1) {
        u32 mid = (lo + hi) >> 1;
        if (s_start[mid] <= g) lo = mid; else hi = mid;
    }
    return lo;
}

__device__ __forceinline__ u64 at_tile_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// An inbox entry, spinning until its sender has written it; AT_TILE_EMPTY if the run was
// stopped as stalled meanwhile (checked every 4,096 spins).
__device__ __forceinline__ u64 at_tile_entry(const u64 *entry, const u32 *ctl) {
    u64 x;
    for (u32 spins = 1; (x = *(volatile const u64 *)entry) == AT_TILE_EMPTY; spins++)
        if ((spins & 4095) == 0 && *(volatile const u32 *)(ctl + 2)) break;
    return x;
}

extern "C" __global__ void __launch_bounds__(AT_TILE_BLOCK) atos_bfs_tiles(const SyArgs a) {
    const u32 tiles = sy_u32(a, 0);
    const u64 cap = sy_u32(a, 1);
    if (gridDim.x != tiles || blockDim.x > AT_TILE_BLOCK) {
        if (threadIdx.x == 0 && blockIdx.x == 0) sy_fail(a, SY_ERR_GRID, gridDim.x, tiles);
        return;
    }
    const u32 *start = (const u32 *)a.ptr[0];
    const u32 *rows = (const u32 *)a.ptr[1];
    const u32 *cols = (const u32 *)a.ptr[2];
    u32 *glab = (u32 *)a.ptr[3];
    u64 *inboxes = (u64 *)a.ptr[4];
    u32 *tails = (u32 *)a.ptr[5];
    u32 *ctl = (u32 *)a.ptr[6];
    u64 *stats = (u64 *)a.ptr[7];
    const u32 t = blockIdx.x;
    const u32 base = start[t], nv = start[t + 1] - base;
    const u32 ebase = rows[base], ne = rows[base + nv] - ebase;
    u32 *s_start = at_tile_smem;        // tiles + 1
    u32 *s_row = s_start + tiles + 1;   // nv + 1, relative
    u32 *s_lab = s_row + nv + 1;        // nv
    u32 *s_flag = s_lab + nv;           // nv: the round whose list holds the vertex
    u32 *s_cur = s_flag + nv;           // nv
    u32 *s_next = s_cur + nv;           // nv
    u32 *s_col = s_next + nv;           // ne
    __shared__ u32 s_ncur, s_nnext, s_head, s_tail, s_tokens, s_done;
    for (u32 i = threadIdx.x; i <= tiles; i += blockDim.x) s_start[i] = start[i];
    for (u32 i = threadIdx.x; i <= nv; i += blockDim.x) s_row[i] = rows[base + i] - ebase;
    for (u32 i = threadIdx.x; i < ne; i += blockDim.x) s_col[i] = cols[ebase + i];
    if (threadIdx.x == 0) {
        s_ncur = 0; s_nnext = 0; s_head = 0; s_tail = 0; s_done = 0; s_tokens = 0;
    }
    __syncthreads();
    // The initial list: every vertex with a label (BFS: the source).
    for (u32 i = threadIdx.x; i < nv; i += blockDim.x) {
        u32 l = glab[base + i];
        s_lab[i] = l;
        s_flag[i] = l != SY_UNREACHED ? 1 : 0;
        if (l != SY_UNREACHED) s_cur[atomicAdd(&s_ncur, 1)] = i;
    }
    __syncthreads();
    // Every CTA holds one token from the start (the host counted them): its starting labels
    // may already carry a neighbour's early message, whose token the sender added.
    if (threadIdx.x == 0) s_tokens = 1;
    u64 *inbox = inboxes + (u64)t * cap;
    u32 round = 1;
    u64 expansions = 0, messages = 0, arcs = 0;
    while (true) {
        // Thread 0 issues the inbox poll now; its value is used after the round's work.
        u32 tail_seen = 0;
        if (threadIdx.x == 0) tail_seen = *(volatile u32 *)(tails + t);
        const u32 ncur = s_ncur;
        for (u32 k = threadIdx.x; k < ncur; k += blockDim.x) {
            const u32 v = s_cur[k];
            const u32 nl = s_lab[v] + 1;
            expansions++;
            for (u32 e = s_row[v], end = s_row[v + 1]; e < end; e++) {
                const u32 c = s_col[e];
                arcs++;
                if (!(c & AT_TILE_REMOTE)) {
                    if (nl < s_lab[c] && atomicMin(&s_lab[c], nl) > nl &&
                        atomicExch(&s_flag[c], round + 1) != round + 1)
                        s_next[atomicAdd(&s_nnext, 1)] = c;
                } else {
                    const u32 g = c & ~AT_TILE_REMOTE;
                    if (nl < *(volatile u32 *)(glab + g) && atomicMin(glab + g, nl) > nl) {
                        // The token first, visible before the message is.
                        atomicAdd(ctl, 1u);
                        __threadfence();
                        const u32 o = at_tile_owner(s_start, tiles, g);
                        const u32 slot = atomicAdd(tails + o, 1u);
                        if (slot < cap) {
                            *(volatile u64 *)(inboxes + (u64)o * cap + slot) =
                                ((u64)nl << 32) | (u64)(g - s_start[o]);
                        } else {
                            // Refused: counted, and its token taken back so that the run
                            // ends; the host runs again with larger inboxes.
                            atomicAdd(ctl + 1, 1u);
                            atomicSub(ctl, 1u);
                        }
                        messages++;
                    }
                }
            }
        }
        if (threadIdx.x == 0) s_tail = min((u64)tail_seen, cap);
        __syncthreads();
        // The inbox's new entries join the next round's list.
        u32 head = s_head, tl = s_tail;
        for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
            u64 x;
            if ((x = at_tile_entry(inbox + k, ctl)) == AT_TILE_EMPTY) continue;
            const u32 l = (u32)x, lab = (u32)(x >> 32);
            if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
                atomicExch(&s_flag[l], round + 1) != round + 1)
                s_next[atomicAdd(&s_nnext, 1)] = l;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            s_tokens += tl - head;
            s_head = tl;
            s_ncur = s_nnext;
            s_nnext = 0;
            if (s_ncur == 0) {
                // Out of work: the tokens go back, then wait for a message or the end.
                if (s_tokens) { atomicSub(ctl, s_tokens); s_tokens = 0; }
                const u64 since = at_tile_now();
                while (true) {
                    const u32 now = (u32)min((u64)*(volatile u32 *)(tails + t), cap);
                    if (now > s_head) { s_tail = now; break; }
                    if (*(volatile u32 *)ctl == 0) { s_done = 1; break; }
                    if (*(volatile u32 *)(ctl + 2)) { s_done = 1; break; }
                    if (at_tile_now() - since > AT_TILE_STALL_NS) {
                        atomicExch(ctl + 2, 1u);
                        sy_fail(a, SY_ERR_STALLED, AT_TILE_STALL_NS, t);
                        s_done = 1;
                        break;
                    }
                    __nanosleep(64);
                }
            }
        }
        __syncthreads();
        const bool done = s_done;
        const bool woken = s_ncur == 0;
        if (done) break;
        { u32 *x = s_cur; s_cur = s_next; s_next = x; }
        round++;
        if (woken) {
            // Woken by a message: its entries are the next round's list.
            __syncthreads();  // every thread has read s_ncur
            head = s_head; tl = s_tail;
            for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
                u64 x;
                if ((x = at_tile_entry(inbox + k, ctl)) == AT_TILE_EMPTY) continue;
                const u32 l = (u32)x, lab = (u32)(x >> 32);
                if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
                    atomicExch(&s_flag[l], round) != round)
                    s_cur[atomicAdd(&s_ncur, 1)] = l;
            }
            __syncthreads();
            if (threadIdx.x == 0) { s_tokens += tl - head; s_head = tl; }
            __syncthreads();
        }
    }
    for (u32 i = threadIdx.x; i < nv; i += blockDim.x) glab[base + i] = s_lab[i];
    __shared__ u64 s_sum[3];
    if (threadIdx.x < 3) s_sum[threadIdx.x] = 0;
    __syncthreads();
    if (expansions) atomicAdd(&s_sum[0], expansions);
    if (messages) atomicAdd(&s_sum[1], messages);
    if (arcs) atomicAdd(&s_sum[2], arcs);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(stats + 0, s_sum[0]);
        atomicAdd(stats + 1, s_sum[1]);
        atomicMax(stats + 2, (u64)round);
        atomicAdd(stats + 3, s_sum[2]);
    }
    // Three global atomics a message (its token, the label's min, the inbox's tail), as the
    // simulator counts them.
    sy_count(a, expansions, arcs, 3 * messages);
}

// ---------------------------------------------------------------------------------------
// On-chip tiles on several GPUs (tiles.rs, tiles/peer.rs): one launch a GPU, its CTAs the
// tiles of its part, every CTA of every GPU resident at once. The algorithm of
// atos_bfs_tiles; a tile's labels, inbox and tail live in its owner GPU's memory, reached
// through peer pointers (the remote buffer arguments the Atos workers push through; between
// logical GPUs of one physical GPU, plain pointers), with system-scope atomics because CTAs
// of several GPUs update the same words. One token word for every GPU, on GPU 0.
// Buffers: 0 tile starts (every GPU's tiles + 1), 1 rows (n + 1), 2 arcs (as atos_bfs_tiles),
// 3 starting labels (every tile-ordered id), 4 first tile of every GPU (gpus + 1), 5 this
// GPU's stats (u64: expansions, messages, most rounds of a CTA, arcs, messages to other
// GPUs), 6 GPU 0's ctl (tokens: the host gives every CTA of every GPU one; refused; stalled),
// then per GPU h: 7 + 3h its labels (its tile-ordered ids from its first), 8 + 3h its inboxes
// (its tiles x capacity), 9 + 3h its tails. Scalars: gpu, gpus, capacity.
//
// Termination (why ctl[0] == 0 means every CTA of every GPU is done): ctl[0] is the tokens
// held by CTAs that have work plus the messages sent and not yet taken back by their
// receiver. A CTA holds at least one token while it works (its own, or those of the messages
// it took), so a sender holds one while it adds its message's token: ctl[0] >= 1 throughout.
// The sender adds the message's token to ctl[0] (GPU 0), then __threadfence_system(), then
// reserves the slot in the owner's tail and stores the entry (the owner's GPU): any CTA that
// sees the slot (the receiver) sees it after the token's add, system-wide. The receiver counts
// a token per slot it saw and gives its tokens back only after it has taken their entries
// and found no more work, after its own __threadfence_system(); the adds and the give-back
// are atomics on one word, so the give-back follows the add in that word's order and the
// word never drops below the tokens of work outstanding. A CTA that reads 0 thus reads it
// when no CTA works and no message is in flight, and no message can be sent any more.
#define AT_TILE_PEERS 7
#define AT_TILE_MAX_GPUS 8

extern "C" __global__ void __launch_bounds__(AT_TILE_BLOCK) atos_bfs_tiles_peer(const SyArgs a) {
    const u32 gpu = sy_u32(a, 0), gpus = sy_u32(a, 1);
    const u64 cap = sy_u32(a, 2);
    const u32 *start = (const u32 *)a.ptr[0];
    const u32 *rows = (const u32 *)a.ptr[1];
    const u32 *cols = (const u32 *)a.ptr[2];
    const u32 *init = (const u32 *)a.ptr[3];
    const u32 *gtiles = (const u32 *)a.ptr[4];
    u64 *stats = (u64 *)a.ptr[5];
    u32 *ctl = (u32 *)a.ptr[6];
    if (gpus == 0 || gpus > AT_TILE_MAX_GPUS || gpu >= gpus ||
        a.nbuffers != AT_TILE_PEERS + 3 * (u64)gpus || gridDim.x != gtiles[gpu + 1] - gtiles[gpu] ||
        blockDim.x > AT_TILE_BLOCK) {
        if (threadIdx.x == 0 && blockIdx.x == 0) {
            // Every other GPU's CTAs stop too (they would wait for this GPU's tokens).
            atomicExch_system(ctl + 2, 1u);
            sy_fail(a, SY_ERR_GRID, gridDim.x, gpus > gpu ? gtiles[gpu + 1] - gtiles[gpu] : 0);
        }
        return;
    }
    __shared__ u32 *s_plab[AT_TILE_MAX_GPUS];
    __shared__ u64 *s_pinbox[AT_TILE_MAX_GPUS];
    __shared__ u32 *s_ptail[AT_TILE_MAX_GPUS];
    __shared__ u32 s_gt[AT_TILE_MAX_GPUS + 1];  // first tile of every GPU, then the tiles
    __shared__ u32 s_vb[AT_TILE_MAX_GPUS];      // first tile-ordered id of every GPU
    const u32 tiles = gtiles[gpus];
    const u32 t = gtiles[gpu] + blockIdx.x;  // this CTA's tile, among every GPU's
    const u32 base = start[t], nv = start[t + 1] - base;
    const u32 ebase = rows[base], ne = rows[base + nv] - ebase;
    u32 *s_start = at_tile_smem;        // tiles + 1
    u32 *s_row = s_start + tiles + 1;   // nv + 1, relative
    u32 *s_lab = s_row + nv + 1;        // nv
    u32 *s_flag = s_lab + nv;           // nv: the round whose list holds the vertex
    u32 *s_cur = s_flag + nv;           // nv
    u32 *s_next = s_cur + nv;           // nv
    u32 *s_col = s_next + nv;           // ne
    __shared__ u32 s_ncur, s_nnext, s_head, s_tail, s_tokens, s_done;
    if (threadIdx.x < gpus) {
        const u32 h = threadIdx.x;
        s_plab[h] = sy_buf<u32>(a, AT_TILE_PEERS + 3 * h);
        s_pinbox[h] = sy_buf<u64>(a, AT_TILE_PEERS + 3 * h + 1);
        s_ptail[h] = sy_buf<u32>(a, AT_TILE_PEERS + 3 * h + 2);
        s_vb[h] = start[gtiles[h]];
    }
    if (threadIdx.x <= gpus) s_gt[threadIdx.x] = gtiles[threadIdx.x];
    for (u32 i = threadIdx.x; i <= tiles; i += blockDim.x) s_start[i] = start[i];
    for (u32 i = threadIdx.x; i <= nv; i += blockDim.x) s_row[i] = rows[base + i] - ebase;
    for (u32 i = threadIdx.x; i < ne; i += blockDim.x) s_col[i] = cols[ebase + i];
    if (threadIdx.x == 0) {
        s_ncur = 0; s_nnext = 0; s_head = 0; s_tail = 0; s_done = 0; s_tokens = 0;
    }
    __syncthreads();
    // The initial list: every vertex with a starting label (BFS: the source). A message that
    // lowered a label before this CTA started is in its inbox and is taken as any other.
    for (u32 i = threadIdx.x; i < nv; i += blockDim.x) {
        u32 l = init[base + i];
        s_lab[i] = l;
        s_flag[i] = l != SY_UNREACHED ? 1 : 0;
        if (l != SY_UNREACHED) s_cur[atomicAdd(&s_ncur, 1)] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0) s_tokens = 1;  // every CTA of every GPU holds one from the start
    u32 *my_tail = s_ptail[gpu] + blockIdx.x;
    u64 *inbox = s_pinbox[gpu] + (u64)blockIdx.x * cap;
    u32 round = 1;
    u64 expansions = 0, messages = 0, arcs = 0, crossed = 0;
    while (true) {
        u32 tail_seen = 0;
        if (threadIdx.x == 0) tail_seen = *(volatile u32 *)my_tail;
        const u32 ncur = s_ncur;
        for (u32 k = threadIdx.x; k < ncur; k += blockDim.x) {
            const u32 v = s_cur[k];
            const u32 nl = s_lab[v] + 1;
            expansions++;
            for (u32 e = s_row[v], end = s_row[v + 1]; e < end; e++) {
                const u32 c = s_col[e];
                arcs++;
                if (!(c & AT_TILE_REMOTE)) {
                    if (nl < s_lab[c] && atomicMin(&s_lab[c], nl) > nl &&
                        atomicExch(&s_flag[c], round + 1) != round + 1)
                        s_next[atomicAdd(&s_nnext, 1)] = c;
                } else {
                    const u32 g = c & ~AT_TILE_REMOTE;
                    const u32 o = at_tile_owner(s_start, tiles, g);
                    const u32 h = at_tile_owner(s_gt, gpus, o);
                    u32 *lab = s_plab[h] + (g - s_vb[h]);
                    if (nl < *(volatile u32 *)lab && atomicMin_system(lab, nl) > nl) {
                        // The token first, visible system-wide before the slot or the entry
                        // is (see the termination argument above).
                        atomicAdd_system(ctl, 1u);
                        __threadfence_system();
                        const u32 ol = o - s_gt[h];
                        const u32 slot = atomicAdd_system(s_ptail[h] + ol, 1u);
                        if (slot < cap) {
                            *(volatile u64 *)(s_pinbox[h] + (u64)ol * cap + slot) =
                                ((u64)nl << 32) | (u64)(g - s_start[o]);
                        } else {
                            // Refused: counted, and its token taken back so that the run
                            // ends; the host runs again with larger inboxes.
                            atomicAdd_system(ctl + 1, 1u);
                            atomicAdd_system(ctl, 0xffffffffu);
                        }
                        messages++;
                        if (h != gpu) crossed++;
                    }
                }
            }
        }
        if (threadIdx.x == 0) s_tail = min((u64)tail_seen, cap);
        __syncthreads();
        u32 head = s_head, tl = s_tail;
        for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
            u64 x;
            if ((x = at_tile_entry(inbox + k, ctl)) == AT_TILE_EMPTY) continue;
            const u32 l = (u32)x, lab = (u32)(x >> 32);
            if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
                atomicExch(&s_flag[l], round + 1) != round + 1)
                s_next[atomicAdd(&s_nnext, 1)] = l;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            s_tokens += tl - head;
            s_head = tl;
            s_ncur = s_nnext;
            s_nnext = 0;
            if (s_ncur == 0) {
                // Out of work: the entries taken and the messages sent are ordered before
                // the tokens go back; then wait for a message or the end.
                if (s_tokens) {
                    __threadfence_system();
                    atomicAdd_system(ctl, 0u - s_tokens);
                    s_tokens = 0;
                }
                const u64 since = at_tile_now();
                while (true) {
                    const u32 now = (u32)min((u64)*(volatile u32 *)my_tail, cap);
                    if (now > s_head) { s_tail = now; break; }
                    if (*(volatile u32 *)ctl == 0) { s_done = 1; break; }
                    if (*(volatile u32 *)(ctl + 2)) { s_done = 1; break; }
                    if (at_tile_now() - since > AT_TILE_STALL_NS) {
                        atomicExch_system(ctl + 2, 1u);
                        sy_fail(a, SY_ERR_STALLED, AT_TILE_STALL_NS, t);
                        s_done = 1;
                        break;
                    }
                    __nanosleep(64);
                }
            }
        }
        __syncthreads();
        const bool done = s_done;
        const bool woken = s_ncur == 0;
        if (done) break;
        { u32 *x = s_cur; s_cur = s_next; s_next = x; }
        round++;
        if (woken) {
            // Woken by a message: its entries are the next round's list.
            __syncthreads();  // every thread has read s_ncur
            head = s_head; tl = s_tail;
            for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
                u64 x;
                if ((x = at_tile_entry(inbox + k, ctl)) == AT_TILE_EMPTY) continue;
                const u32 l = (u32)x, lab = (u32)(x >> 32);
                if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
                    atomicExch(&s_flag[l], round) != round)
                    s_cur[atomicAdd(&s_ncur, 1)] = l;
            }
            __syncthreads();
            if (threadIdx.x == 0) { s_tokens += tl - head; s_head = tl; }
            __syncthreads();
        }
    }
    u32 *glab = s_plab[gpu] + (base - s_vb[gpu]);
    for (u32 i = threadIdx.x; i < nv; i += blockDim.x) glab[i] = s_lab[i];
    __shared__ u64 s_sum[4];
    if (threadIdx.x < 4) s_sum[threadIdx.x] = 0;
    __syncthreads();
    if (expansions) atomicAdd(&s_sum[0], expansions);
    if (messages) atomicAdd(&s_sum[1], messages);
    if (arcs) atomicAdd(&s_sum[2], arcs);
    if (crossed) atomicAdd(&s_sum[3], crossed);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(stats + 0, s_sum[0]);
        atomicAdd(stats + 1, s_sum[1]);
        atomicMax(stats + 2, (u64)round);
        atomicAdd(stats + 3, s_sum[2]);
        atomicAdd(stats + 4, s_sum[3]);
    }
    // Three atomics a message (its token, the label's min, the inbox's tail); the simulator
    // counts those of messages to another GPU as remote operations instead.
    sy_count(a, expansions, arcs, 3 * messages);
}
