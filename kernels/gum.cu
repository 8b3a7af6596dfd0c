// GUM's framework kernels (src/runtime/gum/kernels.rs, seed 001): the frontier's degree
// statistics and out-degree prefix sums, Alg. 1's sorted search, the stolen-range kernel
// that reads a victim's lists and values through peer pointers, and the victim's merge of
// the returned pairs. Where the contract leaves an order free (the stolen pairs, the merged
// frontier's appends) the sets are those of the Rust implementation; `sum d ln d` is a
// float sum in whatever order the threads add.

#define GUM_BUCKETS 32
#define GUM_STATS_WORDS (8 + 2 * GUM_BUCKETS)
#define GUM_MAX_CUTS 64

// Histogram bucket of out-degree d: 0 for 0, else the bit length, capped (cost_model.rs).
__device__ __forceinline__ u32 gum_bucket(u64 d) {
    return d == 0 ? 0u : min((u32)(64 - __clzll((long long)d)), (u32)(GUM_BUCKETS - 1));
}

// Buffers: degree u32, in_degree u32, frontier u32, counters u64 ([1] the frontier's
// length), stats u64, prefix u64. One block does it all: each thread takes a consecutive
// segment of the frontier, the block scans the segments' sums, and a second pass writes the
// inclusive prefix sums (grid-wide scans are not worth it at the frontier sizes of a
// coordinator's decision; the other blocks return at once).
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_frontier_stats(const SyArgs a) {
    if (blockIdx.x != 0) return;
    const u32 *degree = sy_buf<const u32>(a, 0);
    const u32 *in_degree = sy_buf<const u32>(a, 1);
    const u32 *frontier = sy_buf<const u32>(a, 2);
    const u64 *counters = sy_buf<const u64>(a, 3);
    u64 *stats = sy_buf<u64>(a, 4);
    u64 *prefix = sy_buf<u64>(a, 5);
    u64 len = a.len[3] > 1 ? counters[1] : 0;
    if (len > a.len[2] || len > a.len[5] || a.len[4] < GUM_STATS_WORDS) {
        if (threadIdx.x == 0) sy_fail(a, SY_ERR_LEN, len, a.len[2]);
        return;
    }
    __shared__ u64 s_out, s_in, s_out_min, s_out_max, s_in_min, s_in_max;
    __shared__ double s_dlnd;
    __shared__ u64 s_bucket_v[GUM_BUCKETS], s_bucket_e[GUM_BUCKETS];
    __shared__ u64 s_scan[SY_BLOCK];
    u32 t = threadIdx.x;
    if (t == 0) {
        s_out = s_in = s_out_max = s_in_max = 0;
        s_out_min = s_in_min = ~0ull;
        s_dlnd = 0.0;
    }
    if (t < GUM_BUCKETS) s_bucket_v[t] = s_bucket_e[t] = 0;
    __syncthreads();
    u64 seg = (len + blockDim.x - 1) / blockDim.x;
    u64 begin = min((u64)t * seg, len);
    u64 end = min(begin + seg, len);
    u64 out = 0, in = 0, out_min = ~0ull, out_max = 0, in_min = ~0ull, in_max = 0;
    double dlnd = 0.0;
    // Runs of one degree bucket are counted in registers and added to shared memory when
    // the bucket changes: one shared atomic per item serialised the block on frontiers of
    // one bucket (a road graph's: 610 ms for 21M items on an H100). d ln d is reused along
    // a run of one degree.
    u32 run_b = 0;
    u64 run_v = 0, run_e = 0, last_d = 0;
    double last_dlnd = 0.0;
    for (u64 k = begin; k < end; k++) {
        u32 v = frontier[k];
        u64 d = degree[v], di = in_degree[v];
        out += d;
        in += di;
        out_min = min(out_min, d);
        out_max = max(out_max, d);
        in_min = min(in_min, di);
        in_max = max(in_max, di);
        if (d != last_d) {
            last_d = d;
            last_dlnd = d > 0 ? (double)d * log((double)d) : 0.0;
        }
        dlnd += last_dlnd;
        u32 b = gum_bucket(d);
        if (b != run_b && run_v > 0) {
            atomicAdd(&s_bucket_v[run_b], run_v);
            atomicAdd(&s_bucket_e[run_b], run_e);
            run_v = run_e = 0;
        }
        run_b = b;
        run_v += 1;
        run_e += d;
    }
    if (run_v > 0) {
        atomicAdd(&s_bucket_v[run_b], run_v);
        atomicAdd(&s_bucket_e[run_b], run_e);
    }
    if (end > begin) {
        atomicAdd(&s_out, out);
        atomicAdd(&s_in, in);
        atomicMin(&s_out_min, out_min);
        atomicMax(&s_out_max, out_max);
        atomicMin(&s_in_min, in_min);
        atomicMax(&s_in_max, in_max);
        atomicAdd(&s_dlnd, dlnd);
    }
    // Inclusive scan of the segments' sums (Hillis-Steele), then each segment's prefixes.
    s_scan[t] = out;
    __syncthreads();
    for (u32 o = 1; o < blockDim.x; o <<= 1) {
        u64 x = t >= o ? s_scan[t - o] : 0;
        __syncthreads();
        s_scan[t] += x;
        __syncthreads();
    }
    u64 running = s_scan[t] - out;
    for (u64 k = begin; k < end; k++) {
        running += degree[frontier[k]];
        prefix[k] = running;
    }
    __syncthreads();
    if (t == 0) {
        stats[0] = len;
        stats[1] = s_out;
        stats[2] = s_in;
        stats[3] = len ? s_out_min : 0;
        stats[4] = s_out_max;
        stats[5] = len ? s_in_min : 0;
        stats[6] = s_in_max;
        stats[7] = (u64)__double_as_longlong(s_dlnd);
    }
    if (t < GUM_BUCKETS) {
        stats[8 + t] = s_bucket_v[t];
        stats[8 + GUM_BUCKETS + t] = s_bucket_e[t];
    }
    sy_count(a, t == 0 ? len : 0, 0, t == 0 ? len / 32 : 0);
}

// Buffers: prefix u64, stats u64. Scalars: frontier_len u64, cuts u32, one u64 cut per
// worker boundary. Thread c of block 0 finds cut c: the first position whose exclusive
// start is at or beyond it, and the edges before that position.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_cut(const SyArgs a) {
    if (blockIdx.x != 0) return;
    u64 len = sy_u64(a, 0);
    u32 cuts = sy_u32(a, 1);
    const u64 *prefix = sy_buf<const u64>(a, 0);
    u64 *stats = sy_buf<u64>(a, 1);
    if (cuts > GUM_MAX_CUTS || cuts + 2 > a.nscalars || len > a.len[0] ||
        a.len[1] < GUM_STATS_WORDS + 2 * GUM_MAX_CUTS) {
        if (threadIdx.x == 0) sy_fail(a, SY_ERR_LEN, cuts, len);
        return;
    }
    u32 c = threadIdx.x;
    if (c < cuts) {
        u64 cut = sy_u64(a, 2 + c);
        u64 lo = 0, hi = len;
        while (lo < hi) {
            u64 mid = lo + (hi - lo) / 2;
            u64 start = mid == 0 ? 0 : prefix[mid - 1];
            if (start < cut) lo = mid + 1;
            else hi = mid;
        }
        stats[GUM_STATS_WORDS + c] = lo;
        stats[GUM_STATS_WORDS + GUM_MAX_CUTS + c] = lo == 0 ? 0 : prefix[lo - 1];
    }
    sy_count(a, c < cuts ? 1 : 0, 0, 0);
}

// Buffers: offsets u64, targets u32, weights u32, values u32, frontier u32 (the victim's,
// through peer pointers), out u32 pairs, out_len u64. Scalars: start u64, end u64, rule
// u32 (0 value + 1, 1 value + weight, 2 value; saturating), remote_mask u32 (the
// simulator's accounting only).
extern "C" __global__ void gum_steal_min__pre(const SyArgs a) {
    u64 *out_len = sy_buf<u64>(a, 6);
    out_len[0] = 0;
    u64 start = sy_u64(a, 0), end = sy_u64(a, 1);
    if (start > end || end > a.len[4]) sy_fail(a, SY_ERR_RANGE, end, a.len[4]);
    if (sy_u32(a, 2) == 1 && a.len[2] < a.len[1]) sy_fail(a, SY_ERR_WEIGHTS, a.len[2], a.len[1]);
}

// One warp per frontier vertex: its lanes stride over the vertex's arcs.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_steal_min(const SyArgs a) {
    const u64 *offsets = sy_buf<const u64>(a, 0);
    const u32 *targets = sy_buf<const u32>(a, 1);
    const u32 *weights = sy_buf<const u32>(a, 2);
    const u32 *values = sy_buf<const u32>(a, 3);
    const u32 *frontier = sy_buf<const u32>(a, 4);
    u32 *out = sy_buf<u32>(a, 5);
    u64 *out_len = sy_buf<u64>(a, 6);
    u64 cap = a.len[5] / 2;
    u64 start = sy_u64(a, 0), end = sy_u64(a, 1);
    u32 rule = sy_u32(a, 2);
    u64 items = 0, edges = 0, atomics = 0;
    if (start <= end && end <= a.len[4]) {
        u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
        for (u64 k = start + warp; k < end; k += warps) {
            u32 v = frontier[k];
            u64 first = offsets[v], last = offsets[v + 1];
            u32 value = values[v];
            if (sy_lane() == 0) {
                items++;
                edges += last - first;
            }
            for (u64 e = first + sy_lane(); e < last; e += 32) {
                u32 t = targets[e];
                u32 candidate = value;
                if (rule == 0) candidate = value == 0xffffffffu ? value : value + 1;
                else if (rule == 1) {
                    u32 w = weights[e];
                    candidate = value > 0xffffffffu - w ? 0xffffffffu : value + w;
                }
                if (candidate < values[t]) {
                    u64 slot = atomicAdd(out_len, 1ull);
                    atomics++;
                    if (slot < cap) {
                        out[2 * slot] = t;
                        out[2 * slot + 1] = candidate;
                    } else {
                        sy_fail(a, SY_ERR_OUT_OVERFLOW, slot, cap);
                    }
                }
            }
        }
    }
    sy_count(a, items, edges, atomics);
}

// Buffers: values u32, marker u32, frontier_out u32, counters u64 ([0] frontier_out's
// length), then one returned package of u32 pairs per thief. Scalars: stamp u32, then one
// u64 pair count per package. Min-combines and appends improved vertices once.
extern "C" __global__ void gum_merge_return__pre(const SyArgs a) {
    for (u64 p = 0; p + 4 < a.nbuffers; p++)
        if (2 * sy_u64(a, 1 + p) > a.len[4 + p]) sy_fail(a, SY_ERR_MERGE_ROOM, p, sy_u64(a, 1 + p));
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_merge_return(const SyArgs a) {
    u32 stamp = sy_u32(a, 0);
    u32 *values = sy_buf<u32>(a, 0);
    u32 *marker = sy_buf<u32>(a, 1);
    u32 *fout = sy_buf<u32>(a, 2);
    u64 *counters = sy_buf<u64>(a, 3);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 items = 0;
    for (u64 p = 0; p + 4 < a.nbuffers; p++) {
        u64 len = sy_u64(a, 1 + p);
        if (2 * len > a.len[4 + p]) continue;  // the pre-pass reported it
        const u32 *package = sy_buf<const u32>(a, 4 + p);
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
            items++;
            u32 v = package[2 * i];
            u32 value = package[2 * i + 1];
            if (value < atomicMin(&values[v], value) && atomicExch(&marker[v], stamp) != stamp)
                sy_push(a, &counters[0], fout, a.len[2], v);
        }
    }
    sy_count(a, items, 0, items);
}
