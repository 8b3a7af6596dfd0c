// Groute's distributed-worklist kernels: work, split_send, split_receive, promote and the
// fused worker for BFS, SSSP and residual PageRank, and the worklist's growth. Contracts:
// src/runtime/groute/worklist/kernels.rs (slot layout, scalars, ctl block, reports, counts);
// read its "Concurrency" section first: on a GPU the worker stream's kernels run
// concurrently with the receiver stream's split_receive.
//
// The mechanism is written once; an application is a functor (GwBfs, GwSssp, GwPr) with
//   begin(g, v, arcs, state) -> bool   the operator's per-item part (read the value; PageRank
//                                      takes the residual); false: no arcs (none counted);
//   relax(g, state, arc, t) -> bool    the operator's per-arc part (atomic update of t);
//                                      true: t goes to Out (is routed);
//   prio(g, t)                         GetPrio;
//   pack(g, t)                         Pack: the value sent with a remote t;
//   receive(g, v, value) -> bool       OnReceive for an owned v: take it?
//   PREPEND                            own production is prepended (BFS, SSSP) or appended.
//
// Memory model. Everything another thread may write while a kernel runs (values, the
// worklist, Out, the control block), and everything rewritten between launches by work on
// another stream (a receive buffer, written by a copy on the sender's link stream), is read
// with ld.global.cg (L2, never a stale L1 or read-only-cache line) or volatile; atomics act
// at L2. __ldg is kept for what never changes during a run (the graph, the owners). Appends are published through END_ALLOC (reserve),
// END_WRITTEN (count written, after a fence) and END (atomic max, by whoever brings
// END_WRITTEN level with END_ALLOC), so a reader never sees a reserved slot before its
// item. Only the worker moves START.
//
// Scratch. The worker stream's huge-vertex list is this file's scratch (no other kernel on
// that stream runs between a launch's passes): a header of GW_HDR words, the per-tile degree
// sums of the batch plan, then entries of 4 u64 (vertex, state, first arc, end arc) for the
// chunks of SY_HUGE arcs of huge items, which the grid shares out.
//
// The batch plan. The contract's batch is the longest prefix of the first
// min(count, END - START) items whose out-degrees fit Out. NAME__plan (full grid) sums the
// degrees of tiles of GW_TILE items; the last block to finish (an atomic ticket) scans the
// tile sums, then the items of the tile where the sum passes Out's capacity, and stores
// `take`. The fused worker does the same between two grid barriers.

#define GW_OFFSETS 0
#define GW_TARGETS 1
#define GW_WEIGHTS 2
#define GW_OWNER 3
#define GW_VALUES 4
#define GW_RANK 5
#define GW_WL 6
#define GW_CTL 7
#define GW_OUT 8
#define GW_DEFERRED 9
#define GW_MESSAGE 10
#define GW_PASS 11
#define GW_MAIL 12

// Control block (kernels.rs `ctl`).
#define C_START 0
#define C_END 1
#define C_DEFERRED 2
#define C_OUT_LEN 3
#define C_END_ALLOC 4
#define C_END_WRITTEN 5
#define C_W_CONSUMED 8
#define C_W_TAKEN 9
#define C_W_DEFERRED 10
#define C_W_SENT 11
#define C_W_DROPPED 12
#define C_W_MIN_PRIO 13
#define C_W_EDGES 14
#define C_W_ROUNDS 15
#define C_R_PROCESSED 16
#define C_R_TAKEN 17
#define C_R_DEFERRED 18
#define C_R_PASSED 19
#define C_R_DROPPED 20
#define C_R_MIN_PRIO 21
#define C_W_RECEIVED 22
#define C_P_PROMOTED 24
#define C_P_REMAINING 25
#define C_P_MIN_PRIO 26
#define C_OUT_W 32      // + d: pairs written to outbox d over the run (asynchronous send)
#define C_CONS 48       // + s: pairs consumed from inbox s over the run
#define C_RTO 64        // + s: the current round takes inbox s up to here (fused scratch; ctl::LEN = 80)

// The asynchronous send's mapped block (kernels.rs `mail`): the kernel writes PUB and CONS
// (plain volatile stores after __threadfence_system, one thread), the host DELIV and FREED
// (read here with volatile loads; data behind them is read after a fence and a barrier).
#define M_PUB 0
#define M_CONS 16
#define M_DELIV 32
#define M_FREED 48
#define M_IDLE 64
#define M_STOP 65
// Most time a worker lingers idle waiting for deliveries before it ends its launch anyway
// (the host normally stops it sooner; the bound keeps logical GPUs that share one physical
// GPU from waiting on each other's grids).
#define GW_LINGER_NS 500000ull

// Scratch header words.
#define H_CAND 0        // candidates of this batch
#define H_START 1       // START when the batch was planned
#define H_TAKE 2        // the batch
#define H_TICKET 3      // plan: blocks done
#define H_TICKET2 4     // main: blocks done
#define H_CHUNKS 5      // huge chunk entries registered
#define H_EDGES 6       // edges visited (fused)
#define H_ARRIVE 7      // grid barrier: blocks arrived
#define H_GEN 8         // grid barrier: generation
#define H_STAGED 9      // fused: own items staged in Out by the last round
#define H_STAGED_NEXT 10  // fused: own items this round stages
#define H_END 11        // fused: END as snapshot for the next round
#define H_STOP 12       // fused: no further round
#define H_ROUNDS 13     // fused: rounds run
#define H_CONSUMED 14   // fused: items consumed
#define H_PUSHES 15     // fused: taken + deferred + sent after the last round
#define H_ITEMS 16      // fused: cost-model items
#define H_ATOMICS 17    // fused: cost-model atomics (beyond the edges)
#define H_HUGE_AT 18    // fused: lowest candidate index with a huge degree
#define H_HAS_HUGE 19   // fused: this round's batch has a huge item
#define H_LEN 20        // promote: deferred items at the start; split_send: Out items
#define H_STAGED_OFF 21 // fused: where the staged items start in Out (circular)
#define H_NEXT_OFF 22   // fused: where this round stages its own items in Out
#define H_FAST 23       // fused: the next round's batch is known (no plan, see gw_fused)
#define H_NEW_DEG 24    // fused: out-degrees of this round's own new items
#define H_OWN_APPENDS 25  // fused: items this round appended itself (PageRank)
#define H_NEW_HUGE 26   // fused: a new item has at least SY_HUGE arcs
#define H_RECV 27       // fused, asynchronous send: this round takes inbox pairs [CONS, RTO)
#define H_NOWORK 28     // fused, asynchronous send: this round works no batch
#define GW_HDR 32
#define GW_TILE 1024    // items per plan tile (4 per thread)
#define GW_MAX_TILES 16384

__device__ __forceinline__ u64 gw_ld(const u64 *p) { return __ldcg(p); }
__device__ __forceinline__ u32 gw_ld(const u32 *p) { return __ldcg(p); }
__device__ __forceinline__ double gw_ld(const double *p) { return __ldcg(p); }
__device__ __forceinline__ u64 gw_vol(const u64 *p) { return *(const volatile u64 *)p; }

struct GW {
    const u64 *offsets;
    const u32 *targets;
    const u32 *weights;
    const u32 *owner;
    u64 n;
    void *values;
    double *rank;
    u32 *wl;
    u64 cap;
    u64 *ctl;
    u32 *out;
    u64 out_cap;
    u32 *deferred;
    u64 deferred_cap;
    u32 *message;
    u64 message_pairs;
    u32 *pass;
    u64 pass_pairs;
    u32 gpu;
    u64 count;
    u64 threshold;
    double epsilon;
    double damping;
    u32 max_rounds;
    u64 flush_pairs;
    u64 push_budget;
    u64 *h;          // scratch header
    u64 *tiles;      // per-tile degree sums
    u64 *chunks;     // huge chunk entries (4 u64 each)
    u64 chunk_cap;
    u64 stage_off;   // fused: where this round stages its own items in Out
    u64 ring;        // asynchronous send: pairs per outbox and inbox ring (0: off)
    u32 parts;       // GPUs of the run
    u64 *mail;       // the mapped block (asynchronous send)
};

__device__ GW gw_make(const SyArgs &a) {
    GW g;
    g.offsets = sy_buf<const u64>(a, GW_OFFSETS);
    g.targets = sy_buf<const u32>(a, GW_TARGETS);
    g.weights = sy_buf<const u32>(a, GW_WEIGHTS);
    g.owner = sy_buf<const u32>(a, GW_OWNER);
    g.n = a.len[GW_OWNER];
    g.values = sy_buf<void>(a, GW_VALUES);
    g.rank = sy_buf<double>(a, GW_RANK);
    g.wl = sy_buf<u32>(a, GW_WL);
    g.cap = a.len[GW_WL];
    g.ctl = sy_buf<u64>(a, GW_CTL);
    g.out = sy_buf<u32>(a, GW_OUT);
    g.out_cap = a.len[GW_OUT];
    g.deferred = sy_buf<u32>(a, GW_DEFERRED);
    g.deferred_cap = a.len[GW_DEFERRED];
    g.message = sy_buf<u32>(a, GW_MESSAGE);
    g.message_pairs = a.len[GW_MESSAGE] / 2;
    g.pass = sy_buf<u32>(a, GW_PASS);
    g.pass_pairs = a.len[GW_PASS] / 2;
    g.gpu = sy_u32(a, 0);
    g.count = sy_u64(a, 1);
    g.threshold = sy_u64(a, 2);
    g.epsilon = sy_f64(a, 3);
    g.damping = sy_f64(a, 4);
    g.max_rounds = sy_u32(a, 5);
    g.flush_pairs = sy_u64(a, 6);
    g.push_budget = sy_u64(a, 7);
    g.h = a.huge;
    g.tiles = a.huge + GW_HDR;
    g.chunks = a.huge + GW_HDR + GW_MAX_TILES;
    u64 words = 1 + 3 * a.huge_cap;
    g.chunk_cap = words > GW_HDR + GW_MAX_TILES ? (words - GW_HDR - GW_MAX_TILES) / 4 : 0;
    g.stage_off = 0;
    g.ring = sy_u64(a, 8);
    g.parts = sy_u32(a, 9);
    g.mail = sy_buf<u64>(a, GW_MAIL);
    return g;
}

// Position p (monotonic) of the circular worklist.
__device__ __forceinline__ u64 gw_slot(const GW &g, u64 p) { return p % g.cap; }

__device__ __forceinline__ u64 gw_degree(const GW &g, u32 v) {
    return __ldg(g.offsets + v + 1) - __ldg(g.offsets + v);
}

// ------------------------------------------------------------------ the applications

__device__ __forceinline__ u32 gw_sat_add(u32 a, u32 b) {
    u64 s = (u64)a + b;
    return s > 0xffffffffull ? 0xffffffffu : (u32)s;
}

struct GwBfs {
    static const bool PREPEND = true;
    __device__ static bool begin(const GW &g, u32 v, u64, u64 &state) {
        state = gw_sat_add(gw_ld((const u32 *)g.values + v), 1);
        return true;
    }
    __device__ static bool relax(const GW &g, u64 state, u64 arc, u32 &t) {
        t = __ldg(g.targets + arc);
        u32 next = (u32)state;
        u32 *x = (u32 *)g.values + t;
        return next < gw_ld(x) && next < atomicMin(x, next);
    }
    __device__ static u64 prio(const GW &g, u32 t) { return gw_ld((const u32 *)g.values + t); }
    __device__ static u32 pack(const GW &g, u32 t) { return gw_ld((const u32 *)g.values + t); }
    __device__ static bool receive(const GW &g, u32 v, u32 value) {
        u32 *x = (u32 *)g.values + v;
        return value < gw_ld(x) && value < atomicMin(x, value);
    }
};

struct GwSssp {
    static const bool PREPEND = true;
    __device__ static bool begin(const GW &g, u32 v, u64, u64 &state) {
        state = gw_ld((const u32 *)g.values + v);
        return true;
    }
    __device__ static bool relax(const GW &g, u64 state, u64 arc, u32 &t) {
        t = __ldg(g.targets + arc);
        u32 nd = gw_sat_add((u32)state, __ldg(g.weights + arc));
        u32 *x = (u32 *)g.values + t;
        return nd < gw_ld(x) && nd < atomicMin(x, nd);
    }
    __device__ static u64 prio(const GW &g, u32 t) { return gw_ld((const u32 *)g.values + t); }
    __device__ static u32 pack(const GW &g, u32 t) { return gw_ld((const u32 *)g.values + t); }
    __device__ static bool receive(const GW &g, u32 v, u32 value) {
        u32 *x = (u32 *)g.values + v;
        return value < gw_ld(x) && value < atomicMin(x, value);
    }
};

// Residual PageRank: residuals and ranks are f64; a residual is taken with an atomic
// exchange, pushed with atomic adds whose old value decides the epsilon crossing (owned)
// or the first accumulation in the halo (remote), and the halo's residual is shipped as f32.
struct GwPr {
    static const bool PREPEND = false;
    __device__ static bool begin(const GW &g, u32 v, u64 arcs, u64 &state) {
        double *res = (double *)g.values;
        double r = __longlong_as_double(
            (long long)atomicExch((unsigned long long *)(res + v), 0ull));
        atomicAdd(g.rank + v, r);
        if (r == 0.0 || arcs == 0) return false;
        double share = g.damping * r / (double)arcs;
        state = (u64)__double_as_longlong(share);
        return true;
    }
    __device__ static bool relax(const GW &g, u64 state, u64 arc, u32 &t) {
        t = __ldg(g.targets + arc);
        double share = __longlong_as_double((long long)state);
        double old = atomicAdd((double *)g.values + t, share);
        double now = old + share;
        bool owned = __ldg(g.owner + t) == g.gpu;
        return (owned && old <= g.epsilon && now > g.epsilon) || (!owned && old == 0.0);
    }
    __device__ static u64 prio(const GW &, u32) { return 0; }
    __device__ static u32 pack(const GW &g, u32 t) {
        double r = __longlong_as_double(
            (long long)atomicExch((unsigned long long *)((double *)g.values + t), 0ull));
        return __float_as_uint((float)r);
    }
    __device__ static bool receive(const GW &g, u32 v, u32 value) {
        double x = (double)__uint_as_float(value);
        double old = atomicAdd((double *)g.values + v, x);
        return old <= g.epsilon && old + x > g.epsilon;
    }
};

// ------------------------------------------------------- warp-aggregated queue operations

__device__ __forceinline__ u32 gw_lanes_below() { return (1u << sy_lane()) - 1; }

// The lanes calling together add their number to *counter (one atomic); each gets its
// slot, base + its rank among them.
__device__ __forceinline__ u64 gw_reserve(u64 *counter) {
    u32 active = __activemask();
    u32 leader = __ffs(active) - 1;
    u64 base = 0;
    if (sy_lane() == leader) base = atomicAdd(counter, (u64)__popc(active));
    base = __shfl_sync(active, base, leader);
    return base + __popc(active & gw_lanes_below());
}

// Adds one per calling lane to *counter (one atomic).
__device__ __forceinline__ void gw_count_lanes(u64 *counter) {
    u32 active = __activemask();
    if (sy_lane() == __ffs(active) - 1) atomicAdd(counter, (u64)__popc(active));
}

// Appends v at the worklist's end (see the memory model above).
__device__ void gw_append(const SyArgs &a, const GW &g, u32 v) {
    u32 active = __activemask();
    u32 leader = __ffs(active) - 1;
    u32 k = __popc(active);
    u64 base = 0;
    if (sy_lane() == leader) base = atomicAdd(&g.ctl[C_END_ALLOC], (u64)k);
    base = __shfl_sync(active, base, leader);
    u64 at = base + __popc(active & gw_lanes_below());
    // A safety net (the host reserves the room): START read after the reservation can
    // only make the occupancy look smaller than it is, never report a false overflow.
    u64 start = gw_vol(&g.ctl[C_START]);
    if (at - start >= g.cap) sy_fail(a, SY_ERR_OUT_OVERFLOW, at - start, g.cap);
    else g.wl[gw_slot(g, at)] = v;
    __threadfence();
    __syncwarp(active);
    if (sy_lane() == leader) {
        u64 written = atomicAdd(&g.ctl[C_END_WRITTEN], (u64)k) + k;
        if (written == gw_vol(&g.ctl[C_END_ALLOC])) atomicMax(&g.ctl[C_END], written);
    }
}

// Prepends v at the worklist's start (the worker only).
__device__ void gw_prepend(const SyArgs &a, const GW &g, u32 v) {
    u32 active = __activemask();
    u32 leader = __ffs(active) - 1;
    u32 k = __popc(active);
    u64 old = 0;
    if (sy_lane() == leader) old = atomicAdd(&g.ctl[C_START], (u64)0 - (u64)k);
    old = __shfl_sync(active, old, leader);
    u64 at = old - k + __popc(active & gw_lanes_below());
    u64 end = gw_vol(&g.ctl[C_END_ALLOC]);
    if (end - at > g.cap) sy_fail(a, SY_ERR_OUT_OVERFLOW, end - at, g.cap);
    else g.wl[gw_slot(g, at)] = v;
}

// Puts v in the deferred bag; counts it in *report and lowers *min_prio.
__device__ void gw_defer(const SyArgs &a, const GW &g, u32 v, u64 prio, u64 *report,
                         u64 *min_prio) {
    u64 at = gw_reserve(&g.ctl[C_DEFERRED]);
    if (at < g.deferred_cap) g.deferred[at] = v;
    else sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.deferred_cap);
    gw_count_lanes(report);
    atomicMin(min_prio, prio);
}

// A block's queue of updated vertices in shared memory: threads append with shared atomics
// and the block moves it to the global queue with one global atomic add per step
// (`gw_qflush`), instead of one per warp and step on a single hot counter. Full: the
// caller falls back to a warp-aggregated global push.
#define GW_QCAP 2048
struct GwQueue {
    u32 n;
    u32 pad;
    u64 deg;  // fused: the queued items' out-degrees (each at most SY_HUGE)
    u32 item[GW_QCAP];
};

__device__ __forceinline__ void gw_qinit(GwQueue *q) {
    if (threadIdx.x == 0) {
        q->n = 0;
        q->deg = 0;
    }
    __syncthreads();
}

__device__ __forceinline__ bool gw_qpush(GwQueue *q, u32 t) {
    u32 k = atomicAdd(&q->n, 1u);
    if (k < GW_QCAP) {
        q->item[k] = t;
        return true;
    }
    return false;
}

// Moves the queued items to dest at positions *counter + j (circular from off, capacity
// cap) and empties the queue; returns how many. Every thread of the block calls it.
__device__ u32 gw_qflush(const SyArgs &a, GwQueue *q, u64 *counter, u32 *dest, u64 cap,
                         u64 off) {
    __shared__ u64 s_base;
    __syncthreads();
    u32 n = q->n < GW_QCAP ? q->n : GW_QCAP;
    if (threadIdx.x == 0 && n) s_base = atomicAdd(counter, (u64)n);
    __syncthreads();
    if (n) {
        u64 base = s_base;
        for (u32 j = threadIdx.x; j < n; j += blockDim.x) {
            u64 at = base + j;
            if (at >= cap) {
                sy_fail(a, SY_ERR_OUT_OVERFLOW, at, cap);
                continue;
            }
            u64 p = off + at;
            if (p >= cap) p -= cap;
            dest[p] = q->item[j];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) q->n = 0;
    __syncthreads();
    return n;
}

// SplitSend of one item (OnSend, GetPrio, Pack). `staged`: own items of a prepending
// application go to Out at H_STAGED_NEXT (the fused worker writes them to the worklist
// after the round) instead of straight to the worklist's start.
template <class App, bool staged>
__device__ void gw_route(const SyArgs &a, const GW &g, u32 t, GwQueue *q) {
    if (__ldg(g.owner + t) == g.gpu) {
        u64 prio = App::prio(g, t);
        if (prio >= g.threshold) {
            gw_defer(a, g, t, prio, &g.ctl[C_W_DEFERRED], &g.ctl[C_W_MIN_PRIO]);
            return;
        }
        if (staged) {
            // The fused worker plans its next round from these (see gw_fused).
            u64 d = gw_degree(g, t);
            if (d >= SY_HUGE) g.h[H_NEW_HUGE] = 1;
            if (App::PREPEND && q && gw_qpush(q, t)) {
                atomicAdd(&q->deg, d < SY_HUGE ? d : (u64)SY_HUGE);
                return;  // staged and counted when the block flushes its queue
            }
            u32 act = __activemask();
            u32 sum = __reduce_add_sync(act, (u32)(d < SY_HUGE ? d : SY_HUGE));
            if (sy_lane() == __ffs(act) - 1) atomicAdd(&g.h[H_NEW_DEG], (u64)sum);
        }
        if (App::PREPEND) {
            if (staged) {
                u64 at = gw_reserve(&g.h[H_STAGED_NEXT]);
                u64 p = g.stage_off + at;
                if (p >= g.out_cap) p -= g.out_cap;
                if (at < g.out_cap) g.out[p] = t;
                else sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.out_cap);
            } else {
                gw_prepend(a, g, t);
            }
        } else {
            gw_append(a, g, t);
            if (staged) gw_count_lanes(&g.h[H_OWN_APPENDS]);
        }
        gw_count_lanes(&g.ctl[C_W_TAKEN]);
    } else if (g.ring) {
        // Asynchronous send: into the owner's outbox (a round starts only with room for a
        // whole Out in every outbox). Lanes with the same owner reserve together.
        u32 dest = __ldg(g.owner + t);
        u32 value = App::pack(g, t);
        u32 active = __activemask();
        u32 same = __match_any_sync(active, dest);
        u32 leader = __ffs(same) - 1;
        u64 base = 0;
        if (sy_lane() == leader) base = atomicAdd(&g.ctl[C_OUT_W + dest], (u64)__popc(same));
        base = __shfl_sync(same, base, leader);
        u64 p = base + __popc(same & gw_lanes_below());
        u64 at = (u64)dest * g.ring + p % g.ring;
        if (dest < g.parts && at < g.message_pairs) {
            g.message[2 * at] = t;
            g.message[2 * at + 1] = value;
        } else {
            sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.message_pairs);
        }
        gw_count_lanes(&g.ctl[C_W_SENT]);
    } else {
        u32 value = App::pack(g, t);
        u64 at = gw_reserve(&g.ctl[C_W_SENT]);
        if (at < g.message_pairs) {
            g.message[2 * at] = t;
            g.message[2 * at + 1] = value;
        } else {
            sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.message_pairs);
        }
    }
}

// --------------------------------------------------------------------- block helpers

// Sum of x over the block (every thread gets it). Every thread must call it.
__device__ u64 gw_block_sum(u64 x) {
    __shared__ u64 s[SY_BLOCK / 32];
    __shared__ u64 s_total;
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if (sy_lane() == 0) s[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 t = 0;
        for (u32 w = 0; w < SY_BLOCK / 32; w++) t += s[w];
        s_total = t;
    }
    __syncthreads();
    u64 r = s_total;
    __syncthreads();
    return r;
}

// Inclusive scan of x over the block. Every thread must call it.
__device__ u64 gw_block_scan(u64 x) {
    __shared__ u64 s[SY_BLOCK / 32];
    x = sy_warp_scan(x);
    u32 warp = threadIdx.x >> 5;
    if (sy_lane() == 31) s[warp] = x;
    __syncthreads();
    u64 before = 0;
    for (u32 w = 0; w < warp; w++) before += s[w];
    __syncthreads();
    return x + before;
}

// Item i of the batch's candidates: the `staged` items Out[0..staged) come first (the
// fused worker's last round; they sit at [start, start + staged) once written), then the
// worklist from start + staged.
struct GwFetch {
    const u32 *wl;
    u64 cap;
    u64 pos;  // start % cap
    const u32 *staged;
    u64 m;
    u64 so;    // the staged items' start in Out (circular)
    u64 scap;  // Out's capacity
    __device__ __forceinline__ u32 operator()(u64 i) const {
        if (i < m) {
            u64 p = so + i;
            if (p >= scap) p -= scap;
            return gw_ld(staged + p);
        }
        u64 p = pos + i;
        if (p >= cap) p -= cap;
        return gw_ld(wl + p);
    }
};

__device__ __forceinline__ GwFetch gw_fetch(const GW &g, u64 start, u64 staged, u64 off = 0) {
    GwFetch f;
    f.wl = g.wl;
    f.cap = g.cap;
    f.pos = start % g.cap;
    f.staged = g.out;
    f.m = staged;
    f.so = off;
    f.scap = g.out_cap;
    return f;
}

// Plan, first half: the degree sum of every tile of the `cand` candidates, into g.tiles;
// the lowest candidate index with at least SY_HUGE arcs into *huge_at (atomic min).
__device__ void gw_plan_tiles(const GW &g, const GwFetch &f, u64 cand, u64 *huge_at) {
    u64 tiles = (cand + GW_TILE - 1) / GW_TILE;
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        u64 sum = 0, huge = ~0ull;
        for (u32 k = 0; k < 4; k++) {
            u64 i = t * GW_TILE + 4 * threadIdx.x + k;
            if (i < cand) {
                u64 d = gw_degree(g, f(i));
                sum += d;
                if (d >= SY_HUGE && huge == ~0ull) huge = i;
            }
        }
        if (huge != ~0ull) atomicMin(huge_at, huge);
        u64 total = gw_block_sum(sum);
        if (threadIdx.x == 0) g.tiles[t] = total;
    }
}

// Plan, second half, by one whole block: the longest prefix of the candidates whose degrees
// fit Out (at least one item; 0 and an error if the first alone does not fit).
__device__ u64 gw_plan_take(const SyArgs &a, const GW &g, const GwFetch &f, u64 cand) {
    __shared__ u64 s_base, s_tile, s_take;
    u64 tiles = (cand + GW_TILE - 1) / GW_TILE;
    if (threadIdx.x == 0) {
        s_base = 0;
        s_tile = tiles;
    }
    __syncthreads();
    // The first tile whose inclusive sum passes the capacity.
    for (u64 t0 = 0; t0 < tiles; t0 += SY_BLOCK) {
        u64 t = t0 + threadIdx.x;
        u64 x = t < tiles ? gw_ld(g.tiles + t) : 0;
        u64 base = s_base;
        u64 incl = gw_block_scan(x);
        u32 fits = __syncthreads_count(t < tiles && base + incl <= g.out_cap);
        u32 valid = (u32)min((u64)SY_BLOCK, tiles - t0);
        if (fits < valid) {
            if (threadIdx.x == fits) {
                s_tile = t0 + fits;
                s_base = base + incl - x;
            }
            __syncthreads();
            break;
        }
        __syncthreads();
        if (threadIdx.x == SY_BLOCK - 1) s_base = base + incl;
        __syncthreads();
    }
    u64 tile = s_tile;
    if (tile == tiles) return cand;  // everything fits (uniform: read after a barrier)
    // Within that tile: 4 items per thread.
    u64 base = s_base;
    u64 d[4], own = 0;
    for (u32 k = 0; k < 4; k++) {
        u64 i = tile * GW_TILE + 4 * threadIdx.x + k;
        d[k] = i < cand ? gw_degree(g, f(i)) : 0;
        own += d[k];
    }
    u64 incl = gw_block_scan(own);
    u32 fits = __syncthreads_count(base + incl <= g.out_cap);
    if (threadIdx.x == fits) {
        u64 run = base + incl - own;
        u32 k = 0;
        while (k < 4 && run + d[k] <= g.out_cap) run += d[k++];
        u64 take = tile * GW_TILE + 4 * threadIdx.x + k;
        if (take == 0) sy_fail(a, SY_ERR_OUT_SMALL, d[0], g.out_cap);
        s_take = take;
    }
    __syncthreads();
    u64 take = s_take;
    __syncthreads();
    return take;
}

// -------------------------------------------------------------- load-balanced expansion

// Merrill's expansion (sy_expand's pieces in common.cuh) of items [0, take) fetched by f, with
// 64-bit operator state. Items of at least SY_HUGE arcs are set aside as chunk entries for
// gw_expand_chunks (or expanded by their block when the list is full). Op supplies
// begin(v, arcs, state) -> bool and visit(state, arc). Returns the arcs this thread's
// items have (edges visited, counted once per item by its thread).
template <class Op>
__device__ u64 gw_expand(const SyArgs &a, const GW &g, const GwFetch &f, u64 take, Op &op) {
    __shared__ u64 s_fbeg[SY_BLOCK], s_fstate[SY_BLOCK];
    u64 edges = 0;
    // Items per block and step: a whole block's worth when the batch is large, else spread
    // over every block (a batch of a few thousand items must not land on a few blocks).
    u64 per = (take + gridDim.x - 1) / gridDim.x;
    per = per > SY_BLOCK ? SY_BLOCK : (per == 0 ? 1 : per);
    const u64 stride = (u64)gridDim.x * per;
    for (u64 base0 = (u64)blockIdx.x * per; base0 < take; base0 += stride) {
        u64 i = base0 + threadIdx.x;
        u64 state = 0, beg = 0, end = 0;
        if (threadIdx.x < per && i < take) {
            u32 v = f(i);
            beg = __ldg(g.offsets + v);
            end = __ldg(g.offsets + v + 1);
            if (op.begin(v, end - beg, state)) edges += end - beg;
            else end = beg;
            if (end - beg >= SY_HUGE) {
                u64 chunks = (end - beg + SY_HUGE - 1) / SY_HUGE;
                u64 slot = atomicAdd(&g.h[H_CHUNKS], chunks);
                if (slot + chunks <= g.chunk_cap) {
                    for (u64 c = 0; c < chunks; c++) {
                        u64 *e = g.chunks + 4 * (slot + c);
                        e[0] = v;
                        e[1] = state;
                        e[2] = beg + c * SY_HUGE;
                        e[3] = min(end, beg + (c + 1) * SY_HUGE);
                    }
                    end = beg;
                } else {
                    // Full: the reserved entries are emptied, the block expands it.
                    for (u64 c = slot; c < slot + chunks && c < g.chunk_cap; c++) {
                        u64 *e = g.chunks + 4 * c;
                        e[2] = 0;
                        e[3] = 0;
                    }
                }
            }
        }
        s_fstate[threadIdx.x] = state;
        // Block-wide expansion of the largest items (racecheck-clean pick).
        for (int o; (o = sy_claim_wide(beg, end)) >= 0;) {
            u64 st = s_fstate[o], e1 = sy_wide.end;
            for (u64 e = sy_wide.beg + threadIdx.x; e < e1; e += blockDim.x) op.visit(st, e);
            __syncthreads();
        }
        // Warp-wide expansion of medium items.
        while (true) {
            u64 ws = state;
            SyRow r = sy_claim_warp(beg, end, ws);
            if (r.owner < 0) break;
            for (u64 e = r.beg + sy_lane(); e < r.end; e += 32) op.visit(ws, e);
        }
        // The rest: a scan-based fine-grained gather over the block's remaining arcs.
        s_fbeg[threadIdx.x] = beg;
        u32 total = sy_lay_rows((u32)(end - beg));
        for (u32 k = threadIdx.x; k < total; k += SY_BLOCK) {
            u32 at, row = sy_row_of(k, at);
            op.visit(s_fstate[row], s_fbeg[row] + at);
        }
        __syncthreads();
        op.flush();
    }
    return edges;
}

// The chunks gw_expand set aside, shared out over the grid one per block at a time.
template <class Op> __device__ void gw_expand_chunks(const GW &g, u64 count, Op &op) {
    if (count > g.chunk_cap) count = g.chunk_cap;
    for (u64 i = blockIdx.x; i < count; i += gridDim.x) {
        const u64 *e = g.chunks + 4 * i;
        u64 state = gw_ld(e + 1), first = gw_ld(e + 2), end = gw_ld(e + 3);
        for (u64 x = first + threadIdx.x; x < end; x += blockDim.x) op.visit(state, x);
        op.flush();
    }
}

// The work kernel's operator: updated vertices go to Out.
template <class App> struct GwWorkOp {
    const SyArgs &a;
    const GW &g;
    GwQueue *q;
    __device__ bool begin(u32 v, u64 arcs, u64 &state) { return App::begin(g, v, arcs, state); }
    __device__ void visit(u64 state, u64 arc) {
        u32 t;
        if (App::relax(g, state, arc, t) && !gw_qpush(q, t)) {
            u64 at = gw_reserve(&g.ctl[C_OUT_LEN]);
            if (at < g.out_cap) g.out[at] = t;
            else sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.out_cap);
        }
    }
    __device__ void flush() { gw_qflush(a, q, &g.ctl[C_OUT_LEN], g.out, g.out_cap, 0); }
};

// The fused worker's operator: updated vertices are routed at once (SplitSend).
template <class App> struct GwFusedOp {
    const SyArgs &a;
    const GW &g;
    GwQueue *q;
    __device__ bool begin(u32 v, u64 arcs, u64 &state) { return App::begin(g, v, arcs, state); }
    __device__ void visit(u64 state, u64 arc) {
        u32 t;
        if (App::relax(g, state, arc, t)) gw_route<App, true>(a, g, t, q);
    }
    __device__ void flush() {
        if (!App::PREPEND) return;  // (uniform) only staging goes through the queue
        u32 n = gw_qflush(a, q, &g.h[H_STAGED_NEXT], g.out, g.out_cap, g.stage_off);
        if (threadIdx.x == 0 && n) {
            atomicAdd(&g.ctl[C_W_TAKEN], (u64)n);
            atomicAdd(&g.h[H_NEW_DEG], q->deg);
            q->deg = 0;
        }
        __syncthreads();
    }
};

// ---------------------------------------------------------------------------- work
// __pre: the candidates (START, END as published); __plan: the batch; main: the operator
// over the batch, huge items set aside; the last block advances START and writes the
// report; __post: the huge items' chunks.

__device__ void gw_work_pre(const SyArgs &a) {
    GW g = gw_make(a);
    u64 start = gw_vol(&g.ctl[C_START]);
    u64 end = gw_vol(&g.ctl[C_END]);
    u64 cand = end - start < g.count ? end - start : g.count;
    if (cand > (u64)GW_MAX_TILES * GW_TILE) cand = (u64)GW_MAX_TILES * GW_TILE;
    g.h[H_CAND] = cand;
    g.h[H_START] = start;
    g.h[H_TAKE] = 0;
    g.h[H_TICKET] = 0;
    g.h[H_TICKET2] = 0;
    g.h[H_CHUNKS] = 0;
    g.h[H_HUGE_AT] = ~0ull;
    g.h[H_EDGES] = 0;
    g.ctl[C_OUT_LEN] = 0;
}

__device__ void gw_work_plan(const SyArgs &a) {
    GW g = gw_make(a);
    __shared__ bool s_last;
    u64 cand = gw_vol(&g.h[H_CAND]);
    GwFetch f = gw_fetch(g, gw_vol(&g.h[H_START]), 0);
    gw_plan_tiles(g, f, cand, &g.h[H_HUGE_AT]);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_last = atomicAdd(&g.h[H_TICKET], 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    u64 take = cand == 0 ? 0 : gw_plan_take(a, g, f, cand);
    if (threadIdx.x == 0) g.h[H_TAKE] = take;
}

template <class App> __device__ void gw_work(const SyArgs &a) {
    GW g = gw_make(a);
    __shared__ bool s_last;
    u64 start = gw_vol(&g.h[H_START]), take = gw_vol(&g.h[H_TAKE]);
    GwFetch f = gw_fetch(g, start, 0);
    __shared__ GwQueue q;
    gw_qinit(&q);
    GwWorkOp<App> op{a, g, &q};
    u64 edges = gw_expand(a, g, f, take, op);
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? take : 0, edges, edges);
    u64 block_edges = gw_block_sum(edges);
    if (threadIdx.x == 0) {
        if (block_edges) atomicAdd(&g.h[H_EDGES], block_edges);
        __threadfence();
        s_last = atomicAdd(&g.h[H_TICKET2], 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (s_last && threadIdx.x == 0) {
        __threadfence();
        u64 *c = g.ctl;
        c[C_START] = start + take;
        c[C_W_CONSUMED] = take;
        c[C_W_TAKEN] = 0;
        c[C_W_DEFERRED] = 0;
        c[C_W_SENT] = 0;
        c[C_W_DROPPED] = 0;
        c[C_W_MIN_PRIO] = ~0ull;
        c[C_W_EDGES] = gw_vol(&g.h[H_EDGES]);
        c[C_W_ROUNDS] = 1;
        g.h[H_EDGES] = 0;
    }
}

template <class App> __device__ void gw_work_post(const SyArgs &a) {
    GW g = gw_make(a);
    __shared__ GwQueue q;
    gw_qinit(&q);
    GwWorkOp<App> op{a, g, &q};
    gw_expand_chunks(g, gw_vol(&g.h[H_CHUNKS]), op);
}

// ---------------------------------------------------------------------- split_send

__device__ void gw_split_send_pre(const SyArgs &a) {
    GW g = gw_make(a);
    u64 *c = g.ctl;
    g.h[H_LEN] = c[C_OUT_LEN];
    c[C_OUT_LEN] = 0;
    c[C_W_TAKEN] = 0;
    c[C_W_DEFERRED] = 0;
    c[C_W_SENT] = 0;
    c[C_W_DROPPED] = 0;
    c[C_W_MIN_PRIO] = ~0ull;
    c[C_W_ROUNDS] = 1;
}

template <class App> __device__ void gw_split_send(const SyArgs &a) {
    GW g = gw_make(a);
    u64 len = gw_vol(&g.h[H_LEN]);
    if (len > g.out_cap) {
        if (blockIdx.x == 0 && threadIdx.x == 0) sy_fail(a, SY_ERR_LEN, len, g.out_cap);
        return;
    }
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride)
        gw_route<App, false>(a, g, gw_ld(g.out + i), nullptr);
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    sy_count(a, first ? len : 0, 0, first ? (len + 31) / 32 : 0);
}

// -------------------------------------------------------------------- split_receive

__device__ void gw_receive_pre(const SyArgs &a) {
    GW g = gw_make(a);
    u64 *c = g.ctl;
    u64 pairs = g.count;
    if (2 * pairs > a.len[GW_MESSAGE]) sy_fail(a, SY_ERR_LEN, 2 * pairs, a.len[GW_MESSAGE]);
    c[C_R_PROCESSED] = pairs;
    c[C_R_TAKEN] = 0;
    c[C_R_DEFERRED] = 0;
    c[C_R_PASSED] = 0;
    c[C_R_DROPPED] = 0;
    c[C_R_MIN_PRIO] = ~0ull;
}

template <class App> __device__ void gw_receive(const SyArgs &a) {
    GW g = gw_make(a);
    u64 pairs = g.count;
    if (2 * pairs > a.len[GW_MESSAGE]) return;  // the pre-pass reported it
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += stride) {
        // Not __ldg: a receive buffer is rewritten between receivers by copies on the
        // sender's link stream, which the driver does not see as a dependency of this
        // kernel, while other kernels stay resident on the SMs; the non-coherent path could
        // serve the previous packet's lines (pairs lost with the count intact: found as
        // wrong SSSP distances with soft priority at 4 and 8 logical GPUs). L2 is coherent
        // with the copy engines.
        u32 v = gw_ld(g.message + 2 * i), value = gw_ld(g.message + 2 * i + 1);
        if (v >= g.n) {
            sy_fail(a, SY_ERR_VERTEX, v, g.n);
            continue;
        }
        if (__ldg(g.owner + v) != g.gpu) {
            u64 at = gw_reserve(&g.ctl[C_R_PASSED]);
            if (at < g.pass_pairs) {
                g.pass[2 * at] = v;
                g.pass[2 * at + 1] = value;
            } else {
                sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.pass_pairs);
            }
            continue;
        }
        if (!App::receive(g, v, value)) {
            gw_count_lanes(&g.ctl[C_R_DROPPED]);
            continue;
        }
        u64 prio = App::prio(g, v);
        if (prio >= g.threshold) {
            gw_defer(a, g, v, prio, &g.ctl[C_R_DEFERRED], &g.ctl[C_R_MIN_PRIO]);
        } else {
            gw_append(a, g, v);
            gw_count_lanes(&g.ctl[C_R_TAKEN]);
        }
    }
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    sy_count(a, first ? pairs : 0, 0, first ? pairs : 0);
}

// -------------------------------------------------------------------------- promote
// Runs while nothing else is in flight, so the worklist's free slots [END_ALLOC,
// START + capacity) are free: promoted items are appended at their front, kept ones parked
// at their back (the host made room for all of the deferred bag), and __post moves the
// kept ones back to the start of the bag (compaction without a second buffer).

__device__ void gw_promote_pre(const SyArgs &a) {
    GW g = gw_make(a);
    u64 *c = g.ctl;
    u64 len = c[C_DEFERRED];
    u64 start = c[C_START], used = c[C_END_ALLOC] - start;
    g.h[H_LEN] = len;
    g.h[H_START] = start;
    if (len > g.deferred_cap || used + len > g.cap) {
        sy_fail(a, SY_ERR_OUT_OVERFLOW, used + len, g.cap);
        g.h[H_LEN] = 0;
    }
    c[C_P_PROMOTED] = 0;
    c[C_P_REMAINING] = 0;
    c[C_P_MIN_PRIO] = ~0ull;
}

template <class App> __device__ void gw_promote(const SyArgs &a) {
    GW g = gw_make(a);
    u64 len = gw_vol(&g.h[H_LEN]), start = gw_vol(&g.h[H_START]);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        u32 v = gw_ld(g.deferred + i);
        u64 prio = App::prio(g, v);
        if (prio < g.threshold) {
            gw_append(a, g, v);
            gw_count_lanes(&g.ctl[C_P_PROMOTED]);
        } else {
            u64 j = gw_reserve(&g.ctl[C_P_REMAINING]);
            g.wl[gw_slot(g, start + g.cap - 1 - j)] = v;
            atomicMin(&g.ctl[C_P_MIN_PRIO], prio);
        }
    }
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? len : 0, 0, 0);
}

__device__ void gw_promote_post(const SyArgs &a) {
    GW g = gw_make(a);
    u64 kept = gw_vol(&g.ctl[C_P_REMAINING]), start = gw_vol(&g.h[H_START]);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < kept; j += stride)
        g.deferred[j] = gw_ld(g.wl + gw_slot(g, start + g.cap - 1 - j));
    if (blockIdx.x == 0 && threadIdx.x == 0) g.ctl[C_DEFERRED] = kept;
}

// ---------------------------------------------------------------------------- fused
// One cooperative launch (the grid is co-resident: the backend sizes it by occupancy and
// launches it with cuLaunchCooperativeKernel). A round is
//   plan:   write the staged own items of the last round to the worklist at START (they
//           are the first candidates), sum the candidates' degrees per tile;
//   barrier (the last block to arrive computes the batch);
//   expand: the operator over the batch, every updated vertex routed at once (owned:
//           staged in Out (BFS, SSSP), appended (PageRank) or deferred; remote: packed in
//           Message);
//   [barrier; the huge items' chunks, if the batch has any];
//   barrier (the last block to arrive does the round's bookkeeping: START, counts, END
//           snapshot for the next round, the stop decision).
// Fast rounds. When a round consumed every candidate, nobody else appended meanwhile, and
// its own new items (now the whole worklist) have out-degrees that fit Out, the next batch
// is exactly those items (the contract's prefix is all of them): the bookkeeping says so
// and the next round skips the plan and its barrier, expanding the staged items straight
// from Out (staging is circular in Out: a fast round stages after the items it reads, which
// its degree sum keeps from overlapping). A road-graph BFS is a long run of such rounds.
// Out holds the staged items between rounds; its contents afterwards are unspecified.

// Writes the m staged items (Out from offset off, circular) to the worklist at
// [start, start + m).
__device__ void gw_write_staged(const GW &g, u64 start, u64 m, u64 off) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 pos = start % g.cap;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        u64 o = off + i;
        if (o >= g.out_cap) o -= g.out_cap;
        u64 p = pos + i;
        if (p >= g.cap) p -= g.cap;
        g.wl[p] = gw_ld(g.out + o);
    }
}

// Whether another round may start: work left, pushes within the budget.
__device__ bool gw_fused_go(const GW &g, u64 rounds, u64 start, u64 end, u64 pushed) {
    u64 most = g.max_rounds > 1 ? g.max_rounds : 1;
    return rounds < most && end != start && pushed + g.out_cap <= g.push_budget;
}

// ------------------------------------------------------------- asynchronous send
// (kernels.rs "Asynchronous send"). Between rounds one thread reads the host's deliveries
// and freed outbox slots from the mapped block, fixes the next round's inbox ranges
// [C_CONS + s, C_RTO + s) within the push budget, and decides whether the round takes
// pairs (H_RECV), works a batch (not H_NOWORK: worklist items, rounds and budget left, and
// room for a whole Out in every outbox) or the launch ends (neither). At the end of each
// round the same thread counts the taken ranges consumed and publishes the outboxes' and
// inboxes' counts to the host.

__device__ __forceinline__ u64 gw_mail_ld(const GW &g, u32 i) {
    return *(const volatile u64 *)(g.mail + i);
}
__device__ __forceinline__ void gw_mail_st(const GW &g, u32 i, u64 v) {
    *(volatile u64 *)(g.mail + i) = v;
}

// Whether another round runs (one thread; see above).
__device__ bool gw_async_next(const GW &g, u64 rounds, u64 start, u64 end, u64 pushed) {
    u64 *c = g.ctl, *h = g.h;
    u32 parts = g.parts < 16 ? g.parts : 16;
    u64 most = g.max_rounds > 1 ? g.max_rounds : 1;
    bool rounds_left = rounds < most;
    u64 room = rounds_left && g.push_budget > pushed ? g.push_budget - pushed : 0;
    u64 got = 0;
    for (u32 s = 0; s < parts; s++) {
        u64 from = gw_vol(&c[C_CONS + s]), k = 0;
        if (s != g.gpu) {
            u64 deliv = gw_mail_ld(g, M_DELIV + s);
            k = deliv > from ? deliv - from : 0;
            if (k > room - got) k = room - got;
        }
        c[C_RTO + s] = from + k;
        got += k;
    }
    bool room_ok = true;
    for (u32 d = 0; d < parts; d++) {
        if (d == g.gpu) continue;
        u64 w = gw_vol(&c[C_OUT_W + d]), freed = gw_mail_ld(g, M_FREED + d);
        u64 used = w > freed ? w - freed : 0;
        if (used + g.out_cap > g.ring) room_ok = false;
    }
    // The pairs behind DELIV are read by other threads after the grid barrier that
    // follows (or the launch of the main pass, after the pre-pass).
    __threadfence();
    bool work = rounds_left && end != start && pushed + got + g.out_cap <= g.push_budget &&
                room_ok;
    h[H_RECV] = got > 0;
    h[H_NOWORK] = !work;
    return got > 0 || work;
}

__device__ __forceinline__ u64 gw_now_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Nothing to take or work: linger (IDLE = 1 for the host) until a delivery, freed outbox
// slots or worklist items make a round possible (IDLE = 0 before CONS can move again), or
// the host's STOP, or GW_LINGER_NS. Returns whether a round runs; one thread.
__device__ bool gw_linger(const GW &g, u64 rounds, u64 start, u64 pushed, u64 &end_now) {
    if (gw_mail_ld(g, M_STOP)) return false;
    gw_mail_st(g, M_IDLE, 1);
    __threadfence_system();
    u64 t0 = gw_now_ns();
    bool go = false;
    while (!gw_mail_ld(g, M_STOP) && gw_now_ns() - t0 < GW_LINGER_NS) {
        __nanosleep(256);
        end_now = gw_vol(&g.ctl[C_END]);
        if (gw_async_next(g, rounds, start, end_now, pushed)) {
            go = true;
            break;
        }
    }
    if (go) {
        gw_mail_st(g, M_IDLE, 0);
        __threadfence_system();
    }
    return go;
}

// The round's inbox pairs (OnReceive: take by appending, defer, or drop); every thread.
template <class App> __device__ void gw_fused_receive(const SyArgs &a, const GW &g) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 parts = g.parts < 16 ? g.parts : 16;
    for (u32 s = 0; s < parts; s++) {
        if (s == g.gpu) continue;
        u64 from = gw_vol(&g.ctl[C_CONS + s]), to = gw_vol(&g.ctl[C_RTO + s]);
        for (u64 p = from + tid; p < to; p += stride) {
            u64 at = (u64)s * g.ring + p % g.ring;
            if (at >= g.pass_pairs) {
                sy_fail(a, SY_ERR_OUT_OVERFLOW, at, g.pass_pairs);
                continue;
            }
            // L2 loads: the pairs were written by a copy after this kernel started.
            u32 v = gw_ld(g.pass + 2 * at), value = gw_ld(g.pass + 2 * at + 1);
            if (v >= g.n || __ldg(g.owner + v) != g.gpu) {
                sy_fail(a, SY_ERR_VERTEX, v, g.n);
                continue;
            }
            if (!App::receive(g, v, value)) {
                gw_count_lanes(&g.ctl[C_W_DROPPED]);
                continue;
            }
            u64 prio = App::prio(g, v);
            if (prio >= g.threshold) {
                gw_defer(a, g, v, prio, &g.ctl[C_W_DEFERRED], &g.ctl[C_W_MIN_PRIO]);
            } else {
                gw_append(a, g, v);
                gw_count_lanes(&g.ctl[C_W_TAKEN]);
            }
        }
    }
}

// End of a round (the bookkeeping thread): the taken ranges are consumed; publish.
__device__ void gw_async_publish(const GW &g) {
    u64 *c = g.ctl;
    u32 parts = g.parts < 16 ? g.parts : 16;
    u64 got = 0;
    for (u32 s = 0; s < parts; s++) {
        u64 r = gw_vol(&c[C_RTO + s]), f = gw_vol(&c[C_CONS + s]);
        got += r - f;
        c[C_CONS + s] = r;
    }
    c[C_W_RECEIVED] = gw_vol(&c[C_W_RECEIVED]) + got;
    // The outbox pairs (written before the barrier) reach memory before the host can see
    // their count, and the inbox slots are read before the host may refill them.
    __threadfence_system();
    for (u32 d = 0; d < parts; d++) gw_mail_st(g, M_PUB + d, gw_vol(&c[C_OUT_W + d]));
    for (u32 s = 0; s < parts; s++) gw_mail_st(g, M_CONS + s, gw_vol(&c[C_CONS + s]));
    __threadfence_system();
}

// Resets the counters of a round's own production (the leader, before the round expands).
__device__ void gw_fused_reset(u64 *h, u64 next_off) {
    h[H_STAGED_NEXT] = 0;
    h[H_NEXT_OFF] = next_off;
    h[H_NEW_DEG] = 0;
    h[H_OWN_APPENDS] = 0;
    h[H_NEW_HUGE] = 0;
    h[H_CHUNKS] = 0;
}

__device__ void gw_fused_pre(const SyArgs &a) {
    GW g = gw_make(a);
    u64 *c = g.ctl, *h = g.h;
    u64 start = gw_vol(&c[C_START]), end = gw_vol(&c[C_END]);
    h[H_ARRIVE] = 0;
    h[H_START] = start;
    h[H_END] = end;
    h[H_STAGED] = 0;
    h[H_STAGED_OFF] = 0;
    h[H_FAST] = 0;
    h[H_ROUNDS] = 0;
    h[H_CONSUMED] = 0;
    h[H_EDGES] = 0;
    h[H_PUSHES] = 0;
    h[H_ITEMS] = 0;
    h[H_ATOMICS] = 0;
    h[H_HUGE_AT] = ~0ull;
    gw_fused_reset(h, 0);
    h[H_RECV] = 0;
    h[H_NOWORK] = 0;
    h[H_STOP] = g.ring ? !gw_async_next(g, 0, start, end, 0) : !gw_fused_go(g, 0, start, end, 0);
    if (g.ring) c[C_W_RECEIVED] = 0;
    c[C_W_CONSUMED] = 0;
    c[C_W_TAKEN] = 0;
    c[C_W_DEFERRED] = 0;
    c[C_W_SENT] = 0;
    c[C_W_DROPPED] = 0;
    c[C_W_MIN_PRIO] = ~0ull;
    c[C_W_EDGES] = 0;
    c[C_W_ROUNDS] = 0;
}

template <class App> __device__ void gw_fused(const SyArgs &a) {
    GW g = gw_make(a);
    u64 *h = g.h, *c = g.ctl;
    __shared__ GwQueue q;
    gw_qinit(&q);
    GwFusedOp<App> op{a, g, &q};
    u64 room = g.message_pairs > g.out_cap ? g.message_pairs - g.out_cap : 0;
    u64 flush = g.flush_pairs < room ? g.flush_pairs : room;
    while (true) {
        u64 start = gw_vol(&h[H_START]), m = gw_vol(&h[H_STAGED]);
        u64 off = gw_vol(&h[H_STAGED_OFF]), end = gw_vol(&h[H_END]);
        if (gw_vol(&h[H_STOP])) {
            gw_write_staged(g, start, m, off);
            break;
        }
        // The round's bookkeeping (the last block to arrive, thread 0): START, counts, END
        // snapshot for the next round, the stop decision; `take` items were worked.
        auto keep = [&](u64 take) {
            if (threadIdx.x != 0) return;
            u64 staged_next = gw_vol(&h[H_STAGED_NEXT]);
            u64 next_start = start + take - staged_next;
            c[C_START] = next_start;
            u64 taken = gw_vol(&c[C_W_TAKEN]), deferred = gw_vol(&c[C_W_DEFERRED]);
            u64 sent = gw_vol(&c[C_W_SENT]);
            u64 pushes = taken + deferred + sent;
            u64 out_len = pushes - gw_vol(&h[H_PUSHES]);
            h[H_PUSHES] = pushes;
            h[H_ITEMS] = gw_vol(&h[H_ITEMS]) + take + out_len;
            h[H_ATOMICS] = gw_vol(&h[H_ATOMICS]) + (out_len + 31) / 32;
            h[H_CONSUMED] = gw_vol(&h[H_CONSUMED]) + take;
            u64 rounds = gw_vol(&h[H_ROUNDS]) + 1;
            h[H_ROUNDS] = rounds;
            u64 end_now = gw_vol(&c[C_END]);
            u64 next_off = gw_vol(&h[H_NEXT_OFF]);
            h[H_START] = next_start;
            h[H_STAGED] = staged_next;
            h[H_STAGED_OFF] = next_off;
            h[H_END] = end_now;
            bool stop, lingered = false;
            if (g.ring) {
                gw_async_publish(g);
                u64 pushed = taken + deferred;
                stop = !gw_async_next(g, rounds, next_start, end_now, pushed);
                u64 most = g.max_rounds > 1 ? g.max_rounds : 1;
                if (stop && rounds < most && pushed + g.out_cap <= g.push_budget) {
                    lingered = true;
                    stop = !gw_linger(g, rounds, next_start, pushed, end_now);
                    h[H_END] = end_now;
                }
            } else {
                stop = sent >= flush ||
                       !gw_fused_go(g, rounds, next_start, end_now, taken + deferred);
            }
            bool nowork = g.ring && gw_vol(&h[H_NOWORK]);
            h[H_STOP] = stop;
            // Fast next round: every candidate was taken (none left behind, the count did
            // not cut), the worklist holds only this round's own items, and they fit Out
            // (with the staged ones, which the next round reads while it stages).
            u64 appends = gw_vol(&h[H_OWN_APPENDS]), deg = gw_vol(&h[H_NEW_DEG]);
            u64 live = end_now - next_start;
            bool fast = !stop && !nowork && !lingered && take == end - start && end_now == end + appends &&
                        live > 0 && live == staged_next + appends && live <= g.count &&
                        !gw_vol(&h[H_NEW_HUGE]) && deg + staged_next <= g.out_cap;
            h[H_FAST] = fast;
            if (fast) {
                u64 o = next_off + staged_next;
                h[H_TAKE] = live;
                h[H_HAS_HUGE] = 0;
                gw_fused_reset(h, o >= g.out_cap ? o - g.out_cap : o);
            } else if (nowork && !stop) {
                gw_fused_reset(h, 0);  // the next round only writes the staged items
            }
        };
        // Asynchronous send: the deliveries this round takes (beside the plan or the
        // expansion: they append beyond END_ALLOC, which neither touches).
        if (g.ring && gw_vol(&h[H_RECV])) gw_fused_receive<App>(a, g);
        if (g.ring && gw_vol(&h[H_NOWORK])) {
            gw_write_staged(g, start, m, off);
            sy_grid_sync(&g.h[H_ARRIVE], &g.h[H_GEN], [&]() { keep(0); });
            continue;
        }
        u64 cand;
        GwFetch batch;
        if (gw_vol(&h[H_FAST])) {
            // The batch is the whole worklist: the staged items in Out, or (PageRank) the
            // worklist itself; the bookkeeping set the counters and the take.
            batch = gw_fetch(g, start, m, off);
            cand = end - start;
        } else {
            gw_write_staged(g, start, m, off);
            cand = end - start < g.count ? end - start : g.count;
            if (cand > (u64)GW_MAX_TILES * GW_TILE) cand = (u64)GW_MAX_TILES * GW_TILE;
            GwFetch staged = gw_fetch(g, start, m, off);
            gw_plan_tiles(g, staged, cand, &h[H_HUGE_AT]);
            sy_grid_sync(&g.h[H_ARRIVE], &g.h[H_GEN], [&]() {
                u64 take = gw_plan_take(a, g, staged, cand);
                if (threadIdx.x == 0) {
                    h[H_TAKE] = take;
                    h[H_HAS_HUGE] = gw_vol(&h[H_HUGE_AT]) < take;
                    h[H_HUGE_AT] = ~0ull;
                    gw_fused_reset(h, 0);  // Out is free: its items are in the worklist
                    if (take == 0) h[H_STOP] = 1;  // the first item does not fit: reported
                }
            });
            batch = gw_fetch(g, start, 0);
        }
        u64 take = gw_vol(&h[H_TAKE]);
        if (take == 0) break;
        g.stage_off = gw_vol(&h[H_NEXT_OFF]);
        u64 edges = gw_expand(a, g, batch, take, op);
        u64 block_edges = gw_block_sum(edges);
        if (threadIdx.x == 0 && block_edges) atomicAdd(&h[H_EDGES], block_edges);
        if (gw_vol(&h[H_HAS_HUGE])) {
            sy_grid_sync(&g.h[H_ARRIVE], &g.h[H_GEN], []() {});
            gw_expand_chunks(g, gw_vol(&h[H_CHUNKS]), op);
        }
        sy_grid_sync(&g.h[H_ARRIVE], &g.h[H_GEN], [&]() { keep(take); });
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        u64 edges = gw_vol(&h[H_EDGES]);
        c[C_W_CONSUMED] = gw_vol(&h[H_CONSUMED]);
        c[C_W_EDGES] = edges;
        c[C_W_ROUNDS] = gw_vol(&h[H_ROUNDS]);
        atomicAdd(&a.stats[0], gw_vol(&h[H_ITEMS]));
        atomicAdd(&a.stats[1], edges);
        atomicAdd(&a.stats[2], edges + gw_vol(&h[H_ATOMICS]));
    }
}

// ----------------------------------------------------------------------------- grow
// Buffers [old worklist, control block, new worklist]; the device is quiet.

extern "C" __global__ void groute_wl_grow__pre(const SyArgs a) {
    const u64 *c = sy_buf<const u64>(a, 1);
    u64 live = c[C_END] - c[C_START];
    if (live > a.len[2]) sy_fail(a, SY_ERR_OUT_OVERFLOW, live, a.len[2]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_wl_grow(const SyArgs a) {
    const u32 *old = sy_buf<const u32>(a, 0);
    const u64 *c = sy_buf<const u64>(a, 1);
    u32 *fresh = sy_buf<u32>(a, 2);
    u64 start = c[C_START], live = c[C_END] - start;
    u64 old_cap = a.len[0], new_cap = a.len[2];
    if (live > new_cap) return;  // the pre-pass reported it
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < live; i += stride)
        fresh[(start + i) % new_cap] = old[(start + i) % old_cap];
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? live : 0, 0, 0);
}

// ------------------------------------------------------------------- entry points

// One line per entry point (tests find the kernels by their `extern "C" __global__` line).
extern "C" __global__ void groute_bfs_work__pre(const SyArgs a) { gw_work_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_work__plan(const SyArgs a) { gw_work_plan(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_work(const SyArgs a) { gw_work<GwBfs>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_work__post(const SyArgs a) { gw_work_post<GwBfs>(a); }
extern "C" __global__ void groute_bfs_split_send__pre(const SyArgs a) { gw_split_send_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_split_send(const SyArgs a) { gw_split_send<GwBfs>(a); }
extern "C" __global__ void groute_bfs_split_receive__pre(const SyArgs a) { gw_receive_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_split_receive(const SyArgs a) { gw_receive<GwBfs>(a); }
extern "C" __global__ void groute_bfs_promote__pre(const SyArgs a) { gw_promote_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_promote(const SyArgs a) { gw_promote<GwBfs>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_promote__post(const SyArgs a) { gw_promote_post(a); }
extern "C" __global__ void groute_bfs_fused__pre(const SyArgs a) { gw_fused_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_bfs_fused(const SyArgs a) { gw_fused<GwBfs>(a); }

extern "C" __global__ void groute_sssp_work__pre(const SyArgs a) { gw_work_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_work__plan(const SyArgs a) { gw_work_plan(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_work(const SyArgs a) { gw_work<GwSssp>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_work__post(const SyArgs a) { gw_work_post<GwSssp>(a); }
extern "C" __global__ void groute_sssp_split_send__pre(const SyArgs a) { gw_split_send_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_split_send(const SyArgs a) { gw_split_send<GwSssp>(a); }
extern "C" __global__ void groute_sssp_split_receive__pre(const SyArgs a) { gw_receive_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_split_receive(const SyArgs a) { gw_receive<GwSssp>(a); }
extern "C" __global__ void groute_sssp_promote__pre(const SyArgs a) { gw_promote_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_promote(const SyArgs a) { gw_promote<GwSssp>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_promote__post(const SyArgs a) { gw_promote_post(a); }
extern "C" __global__ void groute_sssp_fused__pre(const SyArgs a) { gw_fused_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_fused(const SyArgs a) { gw_fused<GwSssp>(a); }

extern "C" __global__ void groute_pr_work__pre(const SyArgs a) { gw_work_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_work__plan(const SyArgs a) { gw_work_plan(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_work(const SyArgs a) { gw_work<GwPr>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_work__post(const SyArgs a) { gw_work_post<GwPr>(a); }
extern "C" __global__ void groute_pr_split_send__pre(const SyArgs a) { gw_split_send_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_split_send(const SyArgs a) { gw_split_send<GwPr>(a); }
extern "C" __global__ void groute_pr_split_receive__pre(const SyArgs a) { gw_receive_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_split_receive(const SyArgs a) { gw_receive<GwPr>(a); }
extern "C" __global__ void groute_pr_promote__pre(const SyArgs a) { gw_promote_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_promote(const SyArgs a) { gw_promote<GwPr>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_promote__post(const SyArgs a) { gw_promote_post(a); }
extern "C" __global__ void groute_pr_fused__pre(const SyArgs a) { gw_fused_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_pr_fused(const SyArgs a) { gw_fused<GwPr>(a); }

// ===================================================== SSSP over real weights (GwSsspF32)
// src/algo/sssp.rs `SsspFloatWorklist`: distances and weights are f32 bits (order-preserving
// for non-negative floats, so atomicMin on the bits is the float minimum); an unreached
// vertex (0xffffffff) is never expanded and counts no arcs; GetPrio is the distance rounded
// down (saturating; 0 for an unreached vertex), so --priority-delta stays in distance units.

struct GwSsspF32 {
    static const bool PREPEND = true;
    __device__ static bool begin(const GW &g, u32 v, u64, u64 &state) {
        state = gw_ld((const u32 *)g.values + v);
        return (u32)state != SY_UNREACHED;
    }
    __device__ static bool relax(const GW &g, u64 state, u64 arc, u32 &t) {
        t = __ldg(g.targets + arc);
        float w = __uint_as_float(__ldg(g.weights + arc));
        u32 nd = __float_as_uint(__fadd_rn(__uint_as_float((u32)state), w));
        u32 *x = (u32 *)g.values + t;
        return nd < gw_ld(x) && nd < atomicMin(x, nd);
    }
    __device__ static u64 prio(const GW &g, u32 t) {
        float d = __uint_as_float(gw_ld((const u32 *)g.values + t));
        if (!(d >= 0.0f)) return 0;                       // unreached (NaN bits)
        if (d >= 18446744073709551616.0f) return ~0ull;   // 2^64 and above
        return (u64)d;
    }
    __device__ static u32 pack(const GW &g, u32 t) { return gw_ld((const u32 *)g.values + t); }
    __device__ static bool receive(const GW &g, u32 v, u32 value) {
        u32 *x = (u32 *)g.values + v;
        return value < gw_ld(x) && value < atomicMin(x, value);
    }
};

extern "C" __global__ void groute_sssp_f32_work__pre(const SyArgs a) { gw_work_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_work__plan(const SyArgs a) { gw_work_plan(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_work(const SyArgs a) { gw_work<GwSsspF32>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_work__post(const SyArgs a) { gw_work_post<GwSsspF32>(a); }
extern "C" __global__ void groute_sssp_f32_split_send__pre(const SyArgs a) { gw_split_send_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_split_send(const SyArgs a) { gw_split_send<GwSsspF32>(a); }
extern "C" __global__ void groute_sssp_f32_split_receive__pre(const SyArgs a) { gw_receive_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_split_receive(const SyArgs a) { gw_receive<GwSsspF32>(a); }
extern "C" __global__ void groute_sssp_f32_promote__pre(const SyArgs a) { gw_promote_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_promote(const SyArgs a) { gw_promote<GwSsspF32>(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_promote__post(const SyArgs a) { gw_promote_post(a); }
extern "C" __global__ void groute_sssp_f32_fused__pre(const SyArgs a) { gw_fused_pre(a); }
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_sssp_f32_fused(const SyArgs a) { gw_fused<GwSsspF32>(a); }
