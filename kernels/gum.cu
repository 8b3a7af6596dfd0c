// GUM's framework kernels (src/runtime/gum/kernels.rs, seed 001): the frontier's degree
// statistics and out-degree prefix sums, Alg. 1's sorted search, the stolen-range kernel
// that reads a victim's lists and values through peer pointers (a cached hub's list from
// the thief's own copy), and the victim's merge of the returned pairs. Where the contract
// leaves an order free (the stolen pairs, the merged frontier's appends) the sets are those
// of the Rust implementation; `sum d ln d` is a float sum in whatever order the threads add.

#define GUM_BUCKETS 32
#define GUM_STATS_WORDS (8 + 2 * GUM_BUCKETS)
#define GUM_MAX_CUTS 64

// Histogram bucket of out-degree d: 0 for 0, else the bit length, capped (cost_model.rs).
__device__ __forceinline__ u32 gum_bucket(u64 d) {
    return d == 0 ? 0u : min((u32)(64 - __clzll((long long)d)), (u32)(GUM_BUCKETS - 1));
}

// The stats buffer's regions (src/runtime/gum/kernels.rs): the statistics, the cuts, an
// accumulator the blocks of gum_frontier_stats add into (zero between launches: the last
// block moves it into the statistics and clears it), and the out-degree sum of each chunk.
#define GUM_ACC_AT (GUM_STATS_WORDS + 2 * GUM_MAX_CUTS)
#define GUM_TICKET_AT (GUM_ACC_AT + GUM_STATS_WORDS)
#define GUM_TOTALS_AT (GUM_TICKET_AT + 1)
#define GUM_PREFIX_CHUNKS 1024
#define GUM_STATS_BUFFER_WORDS (GUM_TOTALS_AT + GUM_PREFIX_CHUNKS)

// The frontier of `len` items in chunks: min(len, GUM_PREFIX_CHUNKS) of ceil(len / that).
__device__ __forceinline__ u64 gum_chunk_items(u64 len) {
    u64 chunks = len < GUM_PREFIX_CHUNKS ? len : GUM_PREFIX_CHUNKS;
    return chunks == 0 ? 1 : (len + chunks - 1) / chunks;
}

// Buffers: degree u32, in_degree u32, frontier u32, counters u64 ([1] the frontier's
// length), stats u64 (GUM_STATS_BUFFER_WORDS), prefix u64 (unused: gum_frontier_prefix
// writes it when a plan needs cuts). Every block takes chunks of the frontier (chunk c by
// block c mod grid); in a chunk each thread takes a consecutive segment, so runs of one
// degree bucket are counted in registers (one shared atomic per item serialised the block on
// a road graph's frontier of one bucket). Blocks add their sums into the accumulator, and
// the last block to finish (a ticket) writes the statistics and clears the accumulator.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_frontier_stats(const SyArgs a) {
    const u32 *degree = sy_buf<const u32>(a, 0);
    const u32 *in_degree = sy_buf<const u32>(a, 1);
    const u32 *frontier = sy_buf<const u32>(a, 2);
    const u64 *counters = sy_buf<const u64>(a, 3);
    u64 *stats = sy_buf<u64>(a, 4);
    u64 len = a.len[3] > 1 ? counters[1] : 0;
    if (len > a.len[2] || a.len[4] < GUM_STATS_BUFFER_WORDS) {
        if (threadIdx.x == 0 && blockIdx.x == 0) sy_fail(a, SY_ERR_LEN, len, a.len[2]);
        return;
    }
    __shared__ u64 s_out, s_in, s_out_min, s_out_max, s_in_min, s_in_max, s_chunk;
    __shared__ double s_dlnd;
    __shared__ u64 s_bucket_v[GUM_BUCKETS], s_bucket_e[GUM_BUCKETS];
    __shared__ bool s_last;
    u32 t = threadIdx.x;
    if (t == 0) {
        s_out = s_in = s_out_max = s_in_max = 0;
        s_out_min = s_in_min = ~0ull;
        s_dlnd = 0.0;
    }
    if (t < GUM_BUCKETS) s_bucket_v[t] = s_bucket_e[t] = 0;
    __syncthreads();
    u64 chunk = gum_chunk_items(len);
    u64 chunks = (len + chunk - 1) / chunk;
    u64 out = 0, in = 0, out_min = ~0ull, out_max = 0, in_min = ~0ull, in_max = 0;
    double dlnd = 0.0;
    u32 run_b = 0;
    u64 run_v = 0, run_e = 0, last_d = 0;
    double last_dlnd = 0.0;
    for (u64 c = blockIdx.x; c < chunks; c += gridDim.x) {
        u64 c_begin = c * chunk, c_end = min(c_begin + chunk, len);
        u64 seg = (c_end - c_begin + blockDim.x - 1) / blockDim.x;
        u64 begin = min(c_begin + (u64)t * seg, c_end);
        u64 end = min(begin + seg, c_end);
        if (t == 0) s_chunk = 0;
        __syncthreads();
        u64 chunk_out = 0;
        for (u64 k = begin; k < end; k++) {
            u32 v = frontier[k];
            u64 d = degree[v], di = in_degree[v];
            chunk_out += d;
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
        out += chunk_out;
        if (chunk_out > 0) atomicAdd(&s_chunk, chunk_out);
        __syncthreads();
        if (t == 0) stats[GUM_TOTALS_AT + c] = s_chunk;
        __syncthreads();
    }
    if (run_v > 0) {
        atomicAdd(&s_bucket_v[run_b], run_v);
        atomicAdd(&s_bucket_e[run_b], run_e);
    }
    if (out_min != ~0ull) {
        atomicAdd(&s_out, out);
        atomicAdd(&s_in, in);
        atomicMin(&s_out_min, out_min);
        atomicMax(&s_out_max, out_max);
        atomicMin(&s_in_min, in_min);
        atomicMax(&s_in_max, in_max);
        atomicAdd(&s_dlnd, dlnd);
    }
    __syncthreads();
    // The accumulator holds minima complemented, so that zero is every field's start.
    u64 *acc = stats + GUM_ACC_AT;
    if (t == 0) {
        atomicAdd(&acc[1], s_out);
        atomicAdd(&acc[2], s_in);
        atomicMax(&acc[3], ~s_out_min);
        atomicMax(&acc[4], s_out_max);
        atomicMax(&acc[5], ~s_in_min);
        atomicMax(&acc[6], s_in_max);
        atomicAdd((double *)&acc[7], s_dlnd);
    }
    if (t < GUM_BUCKETS) {
        if (s_bucket_v[t]) atomicAdd(&acc[8 + t], s_bucket_v[t]);
        if (s_bucket_e[t]) atomicAdd(&acc[8 + GUM_BUCKETS + t], s_bucket_e[t]);
    }
    __threadfence();
    __syncthreads();
    if (t == 0) s_last = atomicAdd(&stats[GUM_TICKET_AT], 1ull) == gridDim.x - 1;
    __syncthreads();
    if (s_last) {
        __threadfence();
        volatile u64 *vacc = acc;
        if (t == 0) {
            stats[0] = len;
            stats[1] = vacc[1];
            stats[2] = vacc[2];
            stats[3] = len ? ~vacc[3] : 0;
            stats[4] = vacc[4];
            stats[5] = len ? ~vacc[5] : 0;
            stats[6] = vacc[6];
            stats[7] = vacc[7];
            stats[GUM_TICKET_AT] = 0;
        }
        if (t < GUM_BUCKETS) {
            stats[8 + t] = vacc[8 + t];
            stats[8 + GUM_BUCKETS + t] = vacc[8 + GUM_BUCKETS + t];
        }
        __syncthreads();
        for (u32 w = t; w < GUM_STATS_WORDS; w += blockDim.x) acc[w] = 0;
    }
    sy_count(a, t == 0 && blockIdx.x == 0 ? len : 0, 0,
             t == 0 && blockIdx.x == 0 ? len / 32 : 0);
}

// Buffers: degree u32, frontier u32, counters u64 ([1] the frontier's length), stats u64
// (its chunk sums as gum_frontier_stats left them), prefix u64. The inclusive prefix sums of
// the frontier's out-degrees: chunk c starts after the sums of chunks 0..c, and within a
// chunk each thread takes a consecutive segment (a block scan of the segments' sums).
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_frontier_prefix(const SyArgs a) {
    const u32 *degree = sy_buf<const u32>(a, 0);
    const u32 *frontier = sy_buf<const u32>(a, 1);
    const u64 *counters = sy_buf<const u64>(a, 2);
    const u64 *stats = sy_buf<const u64>(a, 3);
    u64 *prefix = sy_buf<u64>(a, 4);
    u64 len = a.len[2] > 1 ? counters[1] : 0;
    if (len > a.len[1] || len > a.len[4] || a.len[3] < GUM_STATS_BUFFER_WORDS) {
        if (threadIdx.x == 0 && blockIdx.x == 0) sy_fail(a, SY_ERR_LEN, len, a.len[1]);
        return;
    }
    __shared__ u64 s_scan[SY_BLOCK];
    __shared__ u64 s_base;
    u32 t = threadIdx.x;
    u64 chunk = gum_chunk_items(len);
    u64 chunks = (len + chunk - 1) / chunk;
    for (u64 c = blockIdx.x; c < chunks; c += gridDim.x) {
        u64 base = 0;
        for (u64 j = t; j < c; j += blockDim.x) base += stats[GUM_TOTALS_AT + j];
        if (t == 0) s_base = 0;
        __syncthreads();
        if (base) atomicAdd(&s_base, base);
        u64 c_begin = c * chunk, c_end = min(c_begin + chunk, len);
        u64 seg = (c_end - c_begin + blockDim.x - 1) / blockDim.x;
        u64 begin = min(c_begin + (u64)t * seg, c_end);
        u64 end = min(begin + seg, c_end);
        u64 sum = 0;
        for (u64 k = begin; k < end; k++) sum += degree[frontier[k]];
        s_scan[t] = sum;
        __syncthreads();
        for (u32 o = 1; o < blockDim.x; o <<= 1) {
            u64 x = t >= o ? s_scan[t - o] : 0;
            __syncthreads();
            s_scan[t] += x;
            __syncthreads();
        }
        u64 running = s_base + s_scan[t] - sum;
        for (u64 k = begin; k < end; k++) {
            running += degree[frontier[k]];
            prefix[k] = running;
        }
        __syncthreads();
    }
    sy_count(a, t == 0 && blockIdx.x == 0 ? len : 0, 0, 0);
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
// through peer pointers), out u32 pairs, out_len u64, and optionally (11 buffers) the
// thief's own cache of the victim's hub lists (src/runtime/gum/hub_cache.rs): hub ids u32
// ascending, hub offsets u64, hub targets u32, hub weights u32. Scalars: start u64, end u64,
// rule u32 (0 value + 1, 1 value + weight, 2 value; saturating), remote_mask u32 (the
// simulator's accounting only).
#define GUM_STEAL_BUFFERS 7
#define GUM_STEAL_CACHED_BUFFERS 11
extern "C" __global__ void gum_steal_min__pre(const SyArgs a) {
    if (a.nbuffers != GUM_STEAL_BUFFERS && a.nbuffers != GUM_STEAL_CACHED_BUFFERS) {
        sy_fail(a, SY_ERR_LEN, a.nbuffers, GUM_STEAL_CACHED_BUFFERS);
        return;
    }
    u64 *out_len = sy_buf<u64>(a, 6);
    out_len[0] = 0;
    u64 start = sy_u64(a, 0), end = sy_u64(a, 1);
    if (start > end || end > a.len[4]) sy_fail(a, SY_ERR_RANGE, end, a.len[4]);
    bool weighted = sy_u32(a, 2) == 1;
    if (weighted && a.len[2] < a.len[1]) sy_fail(a, SY_ERR_WEIGHTS, a.len[2], a.len[1]);
    if (a.nbuffers == GUM_STEAL_CACHED_BUFFERS) {
        if (a.len[8] != a.len[7] + 1) sy_fail(a, SY_ERR_LEN, a.len[7] + 1, a.len[8]);
        if (weighted && a.len[10] < a.len[9]) sy_fail(a, SY_ERR_WEIGHTS, a.len[10], a.len[9]);
    }
}

// Where hub v's list lies in the cache of `hubs` sorted ids (seed 001 Ex. 6): its index, or
// `hubs` when v is not cached. Every lane of a warp searches the same v (broadcast reads).
__device__ __forceinline__ u64 gum_hub_index(const u32 *ids, u64 hubs, u32 v) {
    u64 lo = 0, hi = hubs;
    while (lo < hi) {
        u64 mid = lo + (hi - lo) / 2;
        if (ids[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < hubs && ids[lo] == v ? lo : hubs;
}

// One warp per frontier vertex: its lanes stride over the vertex's arcs, read from the
// thief's hub cache when the vertex is a cached hub, else through the victim's peer pointers.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) gum_steal_min(const SyArgs a) {
    const u64 *offsets = sy_buf<const u64>(a, 0);
    const u32 *targets = sy_buf<const u32>(a, 1);
    const u32 *weights = sy_buf<const u32>(a, 2);
    const u32 *values = sy_buf<const u32>(a, 3);
    const u32 *frontier = sy_buf<const u32>(a, 4);
    u32 *out = sy_buf<u32>(a, 5);
    u64 *out_len = sy_buf<u64>(a, 6);
    const bool cached = a.nbuffers == GUM_STEAL_CACHED_BUFFERS;
    const u32 *hub_ids = cached ? sy_buf<const u32>(a, 7) : nullptr;
    const u64 *hub_offsets = cached ? sy_buf<const u64>(a, 8) : nullptr;
    const u32 *hub_targets = cached ? sy_buf<const u32>(a, 9) : nullptr;
    const u32 *hub_weights = cached ? sy_buf<const u32>(a, 10) : nullptr;
    const u64 hubs = cached && a.len[8] == a.len[7] + 1 ? a.len[7] : 0;
    u64 cap = a.len[5] / 2;
    u64 start = sy_u64(a, 0), end = sy_u64(a, 1);
    u32 rule = sy_u32(a, 2);
    u64 items = 0, edges = 0, atomics = 0;
    if (start <= end && end <= a.len[4] &&
        (a.nbuffers == GUM_STEAL_BUFFERS || a.nbuffers == GUM_STEAL_CACHED_BUFFERS)) {
        u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
        for (u64 k = start + warp; k < end; k += warps) {
            u32 v = frontier[k];
            const u32 *list = targets, *list_weights = weights;
            u64 first, last;
            u64 h = hubs ? gum_hub_index(hub_ids, hubs, v) : hubs;
            if (h < hubs) {
                list = hub_targets;
                list_weights = hub_weights;
                first = hub_offsets[h];
                last = hub_offsets[h + 1];
            } else {
                first = offsets[v];
                last = offsets[v + 1];
            }
            u32 value = values[v];
            if (sy_lane() == 0) {
                items++;
                edges += last - first;
            }
            for (u64 e = first + sy_lane(); e < last; e += 32) {
                u32 t = list[e];
                u32 candidate = value;
                if (rule == 0) candidate = value == 0xffffffffu ? value : value + 1;
                else if (rule == 1) {
                    u32 w = list_weights[e];
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
