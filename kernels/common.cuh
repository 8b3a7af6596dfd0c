// switchyard CUDA kernels: the shared ABI and helpers.
//
// ABI (every kernel, see src/backend/cuda/kernels.rs): one argument, a SyArgs passed by value:
//   ptr[i]     device pointer of buffer argument i, in the kernel contract's order
//              (0 for an empty buffer);
//   len[i]     its length in elements;
//   scalar[j]  scalar argument j in contract order, as raw bits (u32 and f32 in the low 32
//              bits, u64 and f64 as they are);
//   work_items the launch's work descriptor; nbuffers, nscalars: the counts given;
//   launch     the backend's number for this launch (reported with an error);
//   stats      this stream's device counters: [0] items, [1] edges, [2] atomics,
//              [3] remote operations (cumulative; the backend snapshots them);
//   error      host-mapped error word: [0] code (0 = none), [1], [2] details, [3] launch;
//   huge       this stream's list of huge vertices: [0] count, then huge_cap entries of
//              three u64 (v | state << 32, first arc, end arc), one per chunk.
// A kernel NAME may have a pre-pass NAME__pre, launched with one thread before it on the
// same stream (resets output counters, checks the contract's preconditions), and a
// post-pass NAME__post, launched after it with a full grid (expands the huge vertices the
// main pass set aside, in chunks the blocks share out).
// Launch configuration: SY_BLOCK threads per block, a grid-stride loop, as many blocks as
// the work needs up to 8 per multiprocessor.

typedef unsigned int u32;
typedef unsigned long long u64;

#define SY_MAX_BUFFERS 32
#define SY_MAX_SCALARS 16
#define SY_BLOCK 256
#define SY_UNREACHED 0xffffffffu
// Vertices with at least this many arcs are set aside in chunks of this many arcs, which
// the blocks of NAME__post share out.
#define SY_HUGE 4096

struct SyArgs {
    u64 ptr[SY_MAX_BUFFERS];
    u64 len[SY_MAX_BUFFERS];
    u64 scalar[SY_MAX_SCALARS];
    u64 work_items;
    u64 nbuffers;
    u64 nscalars;
    u64 launch;
    u64 *stats;
    volatile u64 *error;
    u64 *huge;
    u64 huge_cap;
};

// Error codes (the backend turns them into messages naming the kernel).
#define SY_ERR_FRONTIER_LEN 1   // [1] frontier length, [2] buffer length
#define SY_ERR_OUT_OVERFLOW 2   // [1] index, [2] capacity
#define SY_ERR_PACKAGE_OVERFLOW 3 // [1] peer, [2] capacity in pairs
#define SY_ERR_MERGE_ROOM 4     // [1] peer, [2] announced pairs
#define SY_ERR_WEIGHTS 5        // [1] weights, [2] arcs
#define SY_ERR_NO_REVERSE 6     // [1] reverse offsets length, [2] vertices
#define SY_ERR_OUT_LEN 7        // [1] output frontier length, [2] buffer length
#define SY_ERR_LEN 8            // [1] length given, [2] buffer length
#define SY_ERR_VERTEX 9         // [1] vertex, [2] vertex count
#define SY_ERR_UPWARD 10        // [1] vertex v, [2] parent[v] > v
#define SY_ERR_ODD 11           // [1] edge-list length (elements)
#define SY_ERR_RANGE 12         // [1] offset + len, [2] vertex count
#define SY_ERR_PREDICATE 13     // [1] kind, [2] a
#define SY_ERR_OUT_SMALL 14     // [1] arcs of the first item, [2] Out's capacity
#define SY_ERR_INJECTED 15      // a failure drill (SWITCHYARD_CUDA_FAULT=error:KERNEL)
#define SY_ERR_GRID 16          // [1] blocks launched, [2] blocks the kernel needs
#define SY_ERR_STALLED 17       // [1] ns waited, [2] block (a persistent kernel's wait)

template <class T> __device__ __forceinline__ T *sy_buf(const SyArgs &a, int i) {
    return reinterpret_cast<T *>(a.ptr[i]);
}
__device__ __forceinline__ u32 sy_u32(const SyArgs &a, int i) { return (u32)a.scalar[i]; }
__device__ __forceinline__ u64 sy_u64(const SyArgs &a, int i) { return a.scalar[i]; }
__device__ __forceinline__ double sy_f64(const SyArgs &a, int i) {
    return __longlong_as_double((long long)a.scalar[i]);
}

__device__ void sy_fail(const SyArgs &a, u64 code, u64 d1, u64 d2) {
    if (a.error[0] == 0) {
        a.error[1] = d1;
        a.error[2] = d2;
        a.error[3] = a.launch;
        __threadfence_system();
        a.error[0] = code;
        __threadfence_system();
    }
}

__device__ __forceinline__ u32 sy_lane() { return threadIdx.x & 31; }

// Adds each thread's counts to the stream's counters: one atomic per block and counter.
// Every thread of the block must call it.
__device__ void sy_count(const SyArgs &a, u64 items, u64 edges, u64 atomics) {
    __shared__ u64 s[3][SY_BLOCK / 32];
    for (int o = 16; o > 0; o >>= 1) {
        items += __shfl_down_sync(0xffffffffu, items, o);
        edges += __shfl_down_sync(0xffffffffu, edges, o);
        atomics += __shfl_down_sync(0xffffffffu, atomics, o);
    }
    u32 warp = threadIdx.x >> 5;
    if (sy_lane() == 0) {
        s[0][warp] = items;
        s[1][warp] = edges;
        s[2][warp] = atomics;
    }
    __syncthreads();
    if (threadIdx.x < 3) {
        u64 sum = 0;
        for (u32 w = 0; w < blockDim.x / 32; w++) sum += s[threadIdx.x][w];
        if (sum) atomicAdd(&a.stats[threadIdx.x], sum);
    }
}

// Warp-aggregated append: the lanes that call it together reserve their slots with one
// atomic add on *counter, then write their value. Fails the run on overflow.
__device__ __forceinline__ void sy_push(const SyArgs &a, u64 *counter, u32 *queue, u64 cap,
                                        u32 value) {
    u32 active = __activemask();
    u32 leader = __ffs(active) - 1;
    u32 rank = __popc(active & ((1u << sy_lane()) - 1));
    u64 base = 0;
    if (sy_lane() == leader) base = atomicAdd(counter, (u64)__popc(active));
    base = __shfl_sync(active, base, leader);
    u64 at = base + rank;
    if (at < cap)
        queue[at] = value;
    else
        sy_fail(a, SY_ERR_OUT_OVERFLOW, at, cap);
}

// Block-aggregated append: every thread of the block calls it, those with `keep` append
// `value`; one atomic add on *counter per block (a warp-aggregated append of every vertex
// serialised a sweep on its one counter: 0.6 ms of LDBC PageRank's apply on R-MAT 22, H100).
// Fails the run on overflow.
__device__ void sy_push_block(const SyArgs &a, u64 *counter, u32 *queue, u64 cap, bool keep,
                              u32 value) {
    __shared__ u32 s_before[SY_BLOCK / 32];
    __shared__ u64 s_base;
    const u32 lane = sy_lane(), warp = threadIdx.x >> 5;
    u32 ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) s_before[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 run = 0;
        for (u32 w = 0; w < blockDim.x / 32; w++) {
            u32 c = s_before[w];
            s_before[w] = run;
            run += c;
        }
        s_base = run ? atomicAdd(counter, (u64)run) : 0;
    }
    __syncthreads();
    if (keep) {
        u64 at = s_base + s_before[warp] + __popc(ballot & ((1u << lane) - 1));
        if (at < cap)
            queue[at] = value;
        else
            sy_fail(a, SY_ERR_OUT_OVERFLOW, at, cap);
    }
    __syncthreads();
}

// Block-staged appends, for an advance's discoveries: the lanes that discover something put
// it in their block's stage in shared memory (warp-aggregated shared atomics), and the block
// flushes the stage where all its threads meet (sy_expand, sy_expand_huge), reserving each
// destination's slots with one global atomic add. A warp-aggregated append per discovery
// took one global atomic on one counter per warp visit that found anything: on R-MAT's
// widest BFS level, millions of them on a single word. What does not fit in the stage goes
// straight out (sy_stage_put returns false, and the caller appends it itself).
#define SY_STAGE 2048
#define SY_STAGE_DESTS 33  // an output frontier and up to 32 packages
struct SyStage {
    u32 n;                      // values put since the stage was last emptied (a HALF flush
                                // that writes nothing leaves it); past SY_STAGE: sent direct
    u32 count[SY_STAGE_DESTS];  // values staged per destination
    u64 base[SY_STAGE_DESTS];   // a flush's first global slot per destination
    u32 value[SY_STAGE];
    u32 where[SY_STAGE];  // destination << 16 | rank among the destination's staged values
};
__shared__ SyStage sy_stage;

// Stages `value` for destination `dest` (any subset of a warp's lanes may call it); false
// when the stage is full or dest is out of its range.
__device__ __forceinline__ bool sy_stage_put(u32 dest, u32 value) {
    if (dest >= SY_STAGE_DESTS) return false;
    const u32 active = __activemask(), lane = sy_lane(), below = (1u << lane) - 1;
    const u32 leader = __ffs(active) - 1;
    u32 first = 0;
    if (lane == leader) first = atomicAdd(&sy_stage.n, (u32)__popc(active));
    const u32 slot = __shfl_sync(active, first, leader) + __popc(active & below);
    const u32 staged = __ballot_sync(active, slot < SY_STAGE);
    if (slot >= SY_STAGE) return false;
    const u32 same = __match_any_sync(staged, dest);
    const u32 head = __ffs(same) - 1;
    u32 rank = 0;
    if (lane == head) rank = atomicAdd(&sy_stage.count[dest], (u32)__popc(same));
    rank = __shfl_sync(same, rank, head) + __popc(same & below);
    sy_stage.value[slot] = value;
    sy_stage.where[slot] = dest << 16 | rank;
    return true;
}

// What a flush point does: empty the stage without writing (on entry to every sy_expand
// and sy_expand_huge), write it out if at least half full, or write out whatever it holds.
#define SY_FLUSH_RESET 0
#define SY_FLUSH_HALF 1
#define SY_FLUSH_ALL 2

// Writes the stage out: counter(dest) gives destination dest's u64 length word (one
// atomic add per destination with staged values), write(dest, slot, value) stores a value
// at its reserved slot (checking the capacity). Every thread of the block calls it.
template <class Counter, class Write>
__device__ void sy_stage_flush(int how, u32 dests, Counter counter, Write write) {
    if (dests > SY_STAGE_DESTS) dests = SY_STAGE_DESTS;
    __syncthreads();
    u32 n = how == SY_FLUSH_RESET ? 0 : min(sy_stage.n, (u32)SY_STAGE);
    __syncthreads();  // every thread has read n before any puts again
    if (how == SY_FLUSH_HALF && n < SY_STAGE / 2) return;
    if (n > 0) {
        if (threadIdx.x < dests) {
            u32 c = sy_stage.count[threadIdx.x];
            if (c) sy_stage.base[threadIdx.x] = atomicAdd(counter(threadIdx.x), (u64)c);
        }
        __syncthreads();
        for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
            u32 w = sy_stage.where[i], dest = w >> 16;
            write(dest, sy_stage.base[dest] + (w & 0xffffu), sy_stage.value[i]);
        }
    }
    if (threadIdx.x < SY_STAGE_DESTS) sy_stage.count[threadIdx.x] = 0;
    if (threadIdx.x == 0) sy_stage.n = 0;
    __syncthreads();
}

// Calls op.flush(how) where Op stages its appends, nothing for the others (the int
// overload wins where op.flush exists).
template <class Op>
__device__ __forceinline__ auto sy_op_flush(Op &op, int how, int) -> decltype(op.flush(how), void()) {
    op.flush(how);
}
template <class Op> __device__ __forceinline__ void sy_op_flush(Op &, int, long) {}

// The bsp slot layout (src/runtime/bsp/kernels.rs).
#define S_OFFSETS 0
#define S_TARGETS 1
#define S_WEIGHTS 2
#define S_VALUES 3
#define S_AUX 4
#define S_DEGREE 5
#define S_MARKER 6
#define S_FIN 7
#define S_FOUT 8
#define S_COUNTERS 9
#define S_OWNER 10
#define S_OWNER_ID 11
#define S_ROFFSETS 12
#define S_RTARGETS 13
#define S_FIXED 14

// Advance scalars: frontier_len u64, stamp u32, superstep u32, param f64, gpu u32, extra f64.
struct Advance {
    const u64 *offsets;
    const u32 *targets;
    u32 *marker;
    u32 *fout;
    u64 *counters;
    u64 fout_cap;
    const u32 *frontier;
    u64 frontier_len;
    u32 stamp;
    u32 superstep;
    double param;
    u32 gpu;
    double extra;
    // A device-side loop's per-thread count of the out-arcs of the vertices this thread
    // appended (null in an ordinary advance).
    u64 *out_arcs;
};

__device__ Advance sy_advance(const SyArgs &a) {
    Advance d;
    d.offsets = sy_buf<const u64>(a, S_OFFSETS);
    d.targets = sy_buf<const u32>(a, S_TARGETS);
    d.marker = sy_buf<u32>(a, S_MARKER);
    d.fout = sy_buf<u32>(a, S_FOUT);
    d.counters = sy_buf<u64>(a, S_COUNTERS);
    d.fout_cap = a.len[S_FOUT];
    d.frontier = sy_buf<const u32>(a, S_FIN);
    d.frontier_len = sy_u64(a, 0);
    d.stamp = sy_u32(a, 1);
    d.superstep = sy_u32(a, 2);
    d.param = sy_f64(a, 3);
    d.gpu = sy_u32(a, 4);
    d.extra = sy_f64(a, 5);
    d.out_arcs = nullptr;
    return d;
}

// Appends local vertex t to the output frontier unless this superstep's stamp is on it.
// With Staged, through the block's stage (destination 0), for ops whose flush writes it
// out (sy_stage_flush_frontier).
template <bool Staged = false>
__device__ __forceinline__ void sy_emit(const SyArgs &a, const Advance &d, u32 t) {
    if (d.marker[t] != d.stamp && atomicExch(&d.marker[t], d.stamp) != d.stamp) {
        if (!Staged || !sy_stage_put(0, t)) sy_push(a, &d.counters[0], d.fout, d.fout_cap, t);
        if (d.out_arcs) *d.out_arcs += d.offsets[t + 1] - d.offsets[t];
    }
}

// sy_emit for a vertex only this thread can append this superstep (it won the CAS that set
// its value once): the marker is stored without an atomic, and the append is staged
// (destination 0; the op's flush writes the stage out with sy_flush_frontier).
__device__ __forceinline__ void sy_emit_unique(const SyArgs &a, const Advance &d, u32 t) {
    d.marker[t] = d.stamp;
    if (!sy_stage_put(0, t)) sy_push(a, &d.counters[0], d.fout, d.fout_cap, t);
    if (d.out_arcs) *d.out_arcs += d.offsets[t + 1] - d.offsets[t];
}

// Stores a staged output-frontier vertex at its reserved slot.
__device__ __forceinline__ void sy_flush_frontier(const SyArgs &a, const Advance &d, u64 at,
                                                  u32 v) {
    if (at < d.fout_cap)
        d.fout[at] = v;
    else
        sy_fail(a, SY_ERR_OUT_OVERFLOW, at, d.fout_cap);
}

// The flush of an op whose one staged destination is the output frontier (counter 0).
__device__ __forceinline__ void sy_stage_flush_frontier(int how, const SyArgs &a,
                                                        const Advance &d) {
    sy_stage_flush(
        how, 1, [&](u32) { return &d.counters[0]; },
        [&](u32, u64 at, u32 v) { sy_flush_frontier(a, d, at, v); });
}

// Common pre-pass of advance kernels: resets the output length, checks the input length.
__device__ void sy_advance_pre(const SyArgs &a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[0] = 0;
    a.huge[0] = 0;
    if (sy_u64(a, 0) > a.len[S_FIN]) sy_fail(a, SY_ERR_FRONTIER_LEN, sy_u64(a, 0), a.len[S_FIN]);
}

// Sets vertex v's arcs [beg, end) aside for NAME__post in chunks of SY_HUGE arcs if there
// are at least SY_HUGE of them and the list has room for all its chunks (one atomic add: a
// compare-and-swap loop here serialised thousands of hubs; slots reserved past the end of a
// full list are left empty). Returns whether it did; if not, the caller does the arcs.
__device__ bool sy_set_aside(const SyArgs &a, u32 v, u32 state, u64 beg, u64 end) {
    if (end - beg < SY_HUGE) return false;
    u64 chunks = (end - beg + SY_HUGE - 1) / SY_HUGE;
    u64 slot = atomicAdd(&a.huge[0], chunks);
    if (slot + chunks > a.huge_cap) {
        for (u64 c = slot; c < a.huge_cap; c++) {
            u64 *entry = a.huge + 1 + 3 * c;
            entry[1] = 0;
            entry[2] = 0;
        }
        return false;
    }
    for (u64 c = 0; c < chunks; c++) {
        u64 *entry = a.huge + 1 + 3 * (slot + c);
        entry[0] = (u64)v | ((u64)state << 32);
        entry[1] = beg + c * SY_HUGE;
        entry[2] = min(end, beg + (c + 1) * SY_HUGE);
    }
    return true;
}

// Sum over the warp; every lane gets it.
__device__ __forceinline__ double sy_warp_sum(double x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// Inclusive scan over the warp: lane l gets the sum of x over lanes 0..l. Every lane calls it.
template <class T> __device__ __forceinline__ T sy_warp_scan(T x) {
    for (int o = 1; o < 32; o <<= 1) {
        T y = __shfl_up_sync(0xffffffffu, x, o);
        if ((int)sy_lane() >= o) x += y;
    }
    return x;
}

// Sum over the block, valid in thread 0. Every thread of the block must call it; the
// caller syncs before calling it again.
__device__ double sy_block_sum(double x) {
    __shared__ double s_part[SY_BLOCK / 32];
    x = sy_warp_sum(x);
    if (sy_lane() == 0) s_part[threadIdx.x >> 5] = x;
    __syncthreads();
    double sum = 0.0;
    if (threadIdx.x == 0)
        for (u32 w = 0; w < blockDim.x / 32; w++) sum += s_part[w];
    return sum;
}

// A grid-wide barrier for a cooperative launch over two device words: *arrive counts the
// blocks that arrived, *gen the barriers passed. The last block to arrive runs leader()
// (every thread of it) before the others go on. The device-side loops (algo.cu
// sy_levels, groute_worklist.cu's fused worker) use it.
template <class F> __device__ void sy_grid_sync(u64 *arrive, u64 *gen, F leader) {
    __shared__ bool s_last;
    __shared__ u64 s_gen;
    __syncthreads();
    if (threadIdx.x == 0) {
        s_gen = *(volatile u64 *)gen;
        __threadfence();
        s_last = atomicAdd(arrive, 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (s_last) {
        __threadfence();
        leader();
        __syncthreads();
        if (threadIdx.x == 0) {
            *arrive = 0;
            __threadfence();
            atomicAdd(gen, 1ull);
        }
    } else if (threadIdx.x == 0) {
        while (*(volatile u64 *)gen == s_gen) __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
}

// Merrill's load-balanced expansion, in pieces that sy_expand, pr_ldbc_pull (algo.cu) and
// gw_expand (groute_worklist.cu) share: rows of at least SY_BLOCK arcs are claimed by the
// whole block one at a time (sy_claim_wide), rows of at least 32 by their warp
// (sy_claim_warp), and the rest are laid end to end over the block (sy_lay_rows) so that
// its threads take consecutive arcs and find each arc's row (sy_row_of): neighbouring
// threads read neighbouring targets (Merrill's scan-based fine-grained gather).

// The row sy_claim_wide claimed for the block, [beg, end). In shared memory and read
// where used: copies held in registers across the visits cost the advance kernels
// registers (pr_ldbc_push went from 32 to 40).
struct SyWide {
    u64 beg, end;
};
__shared__ SyWide sy_wide;

// Claims one thread's row with at least SY_BLOCK arcs for the whole block: returns that
// thread (-1 when none is left), whose beg becomes end, with its row in sy_wide (the row's
// other values the caller reads from the thread's slot of its own shared arrays). Every
// thread of the block calls it, and syncs the block after using the row before calling it
// again. The thread is picked with a shared atomicMax (the highest): plain stores, one of
// which won, were what racecheck reported in sy_expand and pr_ldbc_pull (c59).
__device__ __forceinline__ int sy_claim_wide(u64 &beg, u64 &end) {
    __shared__ int s_owner;
    if (threadIdx.x == 0) s_owner = -1;
    __syncthreads();
    if (end - beg >= SY_BLOCK) atomicMax(&s_owner, (int)threadIdx.x);
    __syncthreads();
    int o = s_owner;
    if (o < 0) return -1;
    if ((int)threadIdx.x == o) {
        sy_wide.beg = beg;
        sy_wide.end = end;
        beg = end;
    }
    __syncthreads();
    return o;
}

// A row sy_claim_warp claimed for the warp: the lane that held it (-1 when none is left)
// and its arcs [beg, end).
struct SyRow {
    int owner;
    u64 beg, end;
};

// Claims the row of the lowest lane with at least 32 arcs for the whole warp; that lane's
// beg becomes end, and each of `values` (the caller's copies of its per-row values)
// becomes that lane's. Every lane of the warp calls it.
template <class... T>
__device__ __forceinline__ SyRow sy_claim_warp(u64 &beg, u64 &end, T &...values) {
    u32 m = __ballot_sync(0xffffffffu, end - beg >= 32);
    if (!m) return SyRow{-1, 0, 0};
    int l = __ffs(m) - 1;
    ((values = __shfl_sync(0xffffffffu, values, l)), ...);
    u64 wb = __shfl_sync(0xffffffffu, beg, l);
    u64 we = __shfl_sync(0xffffffffu, end, l);
    if ((int)sy_lane() == l) beg = end;
    return SyRow{l, wb, we};
}

// Where thread t's row starts when the block lays its rows end to end (sy_lay_rows).
__shared__ u32 sy_row_start[SY_BLOCK];

// Lays the block's rows end to end (an exclusive scan of their arc counts into
// sy_row_start) and returns the block's total. Every thread of the block calls it with its
// row's count; it ends with a barrier, so what the threads stored in shared memory before
// the call is visible after it. The caller syncs the block before calling it again.
__device__ __forceinline__ u32 sy_lay_rows(u32 count) {
    __shared__ u32 s_warp_total[SY_BLOCK / 32], s_total;
    u32 incl = sy_warp_scan(count);
    u32 warp = threadIdx.x >> 5;
    if (sy_lane() == 31) s_warp_total[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 run = 0;
        for (u32 w = 0; w < SY_BLOCK / 32; w++) {
            u32 t = s_warp_total[w];
            s_warp_total[w] = run;
            run += t;
        }
        s_total = run;
    }
    __syncthreads();
    sy_row_start[threadIdx.x] = s_warp_total[warp] + incl - count;
    u32 total = s_total;
    __syncthreads();
    return total;
}

// The row of arc k of the rows sy_lay_rows laid out (the last thread whose arcs start at
// or before k); at is k's position within it.
__device__ __forceinline__ u32 sy_row_of(u32 k, u32 &at) {
    u32 lo = 0, hi = SY_BLOCK - 1;
    while (lo < hi) {
        u32 mid = (lo + hi + 1) >> 1;
        if (sy_row_start[mid] <= k) lo = mid; else hi = mid - 1;
    }
    at = k - sy_row_start[lo];
    return lo;
}

// Load-balanced expansion of the input frontier (Merrill's thread/warp/CTA scheme, above):
// a vertex with at least SY_BLOCK arcs is expanded by the whole block, one with at least
// 32 by its warp, the rest by the block's threads over the concatenation of their arcs.
// Op supplies:
//   bool prepare(u32 v, u64 arcs, u32 &state)  per frontier vertex, by its thread; false
//                                              skips its arcs;
//   void visit(u32 v, u32 state, u64 arc)      per arc;
//   void flush(int how)                        optional, by every thread at the flush
//                                              points (sy_op_flush): an op that appends
//                                              through the block stage (sy_stage_put,
//                                              sy_emit<true>, sy_emit_unique) must have it,
//                                              or its staged appends are never written.
template <class Op> __device__ void sy_expand(const SyArgs &a, const Advance &d, Op &op) {
    __shared__ u32 s_fv[SY_BLOCK], s_fstate[SY_BLOCK];
    __shared__ u64 s_fbeg[SY_BLOCK];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    sy_op_flush(op, SY_FLUSH_RESET, 0);
    for (u64 base = (u64)blockIdx.x * blockDim.x; base < d.frontier_len; base += stride) {
        u64 i = base + threadIdx.x;
        u32 v = 0, state = 0;
        u64 beg = 0, end = 0;
        if (i < d.frontier_len) {
            v = __ldcg(&d.frontier[i]);  // L2: a device-side loop wrote it this launch
            beg = d.offsets[v];
            end = d.offsets[v + 1];
            if (!op.prepare(v, end - beg, state)) end = beg;
            if (sy_set_aside(a, v, state, beg, end)) end = beg;  // NAME__post expands it
        }
        s_fv[threadIdx.x] = v;
        s_fstate[threadIdx.x] = state;
        // Block-wide expansion of the largest vertices.
        for (int o; (o = sy_claim_wide(beg, end)) >= 0;) {
            for (u64 e = sy_wide.beg + threadIdx.x; e < sy_wide.end; e += blockDim.x)
                op.visit(s_fv[o], s_fstate[o], e);
            __syncthreads();
            sy_op_flush(op, SY_FLUSH_HALF, 0);
        }
        // Warp-wide expansion of medium vertices.
        while (true) {
            u32 wv = v, ws = state;
            SyRow r = sy_claim_warp(beg, end, wv, ws);
            if (r.owner < 0) break;
            for (u64 e = r.beg + sy_lane(); e < r.end; e += 32) op.visit(wv, ws, e);
        }
        // The rest (fewer than 32 arcs each), end to end over the block.
        s_fbeg[threadIdx.x] = beg;
        u32 total = sy_lay_rows((u32)(end - beg));
        for (u32 k = threadIdx.x; k < total; k += SY_BLOCK) {
            u32 at, row = sy_row_of(k, at);
            op.visit(s_fv[row], s_fstate[row], s_fbeg[row] + at);
        }
        __syncthreads();
        sy_op_flush(op, SY_FLUSH_HALF, 0);
    }
    sy_op_flush(op, SY_FLUSH_ALL, 0);
}

// Calls chunk(v, state, first arc, end arc) for this block's share of the chunks the main
// pass set aside, one chunk per block at a time (every thread of the block calls it).
template <class F> __device__ void sy_huge_chunks(const SyArgs &a, F chunk) {
    // Read through L2 (a device-side loop refills the list within one launch).
    u64 count = __ldcg(&a.huge[0]);
    if (count > a.huge_cap) count = a.huge_cap;
    for (u64 i = blockIdx.x; i < count; i += gridDim.x) {
        const u64 *entry = a.huge + 1 + 3 * i;
        u64 head = __ldcg(&entry[0]), first = __ldcg(&entry[1]), end = __ldcg(&entry[2]);
        chunk((u32)head, (u32)(head >> 32), first, end);
    }
}

// The post-pass of an expansion: the blocks of the grid share out the chunks (SY_HUGE arcs
// each) of the huge vertices the main pass set aside, one chunk per block at a time (counts
// were taken there).
template <class Op> __device__ void sy_expand_huge(const SyArgs &a, Op &op) {
    sy_op_flush(op, SY_FLUSH_RESET, 0);
    sy_huge_chunks(a, [&](u32 v, u32 state, u64 first, u64 end) {
        for (u64 e = first + threadIdx.x; e < end; e += blockDim.x) op.visit(v, state, e);
        sy_op_flush(op, SY_FLUSH_HALF, 0);
    });
    sy_op_flush(op, SY_FLUSH_ALL, 0);
}

// The empty kernel: `switchyard calibrate` times launches with it.
extern "C" __global__ void sy_noop(const SyArgs) {}

// Failure drills (src/backend/cuda/faults.rs), launched once after the kernel that
// SWITCHYARD_CUDA_FAULT names, with that kernel's argument block (so its launch id).
// error: the error word, as a kernel that finds a broken contract writes it.
extern "C" __global__ void sy_inject_error(const SyArgs a) { sy_fail(a, SY_ERR_INJECTED, 0, 0); }
// trap: a real device fault; the context is lost.
extern "C" __global__ void sy_inject_trap(const SyArgs) { __trap(); }
// hang: spins for scalar[0] nanoseconds of the GPU's global timer.
extern "C" __global__ void sy_inject_hang(const SyArgs a) {
    u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < a.scalar[0]);
}
