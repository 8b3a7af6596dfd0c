// The bulk-synchronous runtime's framework kernels (src/runtime/bsp/kernels.rs): split the
// output frontier into the next local frontier and per-peer packages of (id on the
// receiver, value bits) pairs, and merge received packages with the combiner. Package
// contents come out in any order (the contract leaves it free); lengths and sets are those
// of the Rust implementation.

// Combiner codes (Combiner::code): 0 min u32, 1 add f32, 2 add f64 (values f64, packages
// carry each partial rounded to f32), 3 assign u32 (owners' broadcast values to copies).
#define SY_MIN 0
#define SY_ADD_F32 1
#define SY_ADD_F64 2
#define SY_ASSIGN 3

// Scalars: gpu u32, peers u32, stamp u32, broadcast u32, combiner u32.
// Buffers: the 14 fixed slots, then one send package per peer.
#define BSP_SPLIT_MAX_PEERS 32
extern "C" __global__ void bsp_split__pre(const SyArgs a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    u32 peers = sy_u32(a, 1);
    if (counters[0] > a.len[S_FOUT]) sy_fail(a, SY_ERR_OUT_LEN, counters[0], a.len[S_FOUT]);
    if (peers > BSP_SPLIT_MAX_PEERS) sy_fail(a, SY_ERR_LEN, peers, BSP_SPLIT_MAX_PEERS);
    counters[1] = 0;
    for (u32 p = 0; p < peers; p++) counters[2 + p] = 0;
}

// Every thread of the block calls it together: those with `send` put (id, bits) into the
// package toward `dest`. The lanes of a warp with one destination count themselves into
// shared memory together, then one global atomic per destination per block reserves the
// block's slots, where a warp-aggregated reservation took one per warp on the same counter
// (GUM's BFS on R-MAT 24 at 2 H200s: 1.91-1.93 ms of split per GPU before, 0.66-0.68 after).
__device__ __forceinline__ void bsp_split_send(const SyArgs &a, u64 *counters, u32 peers,
                                               bool send, u32 dest, u32 id, u32 bits) {
    __shared__ u32 s_count[BSP_SPLIT_MAX_PEERS];
    __shared__ u64 s_base[BSP_SPLIT_MAX_PEERS];
    if (threadIdx.x < peers) s_count[threadIdx.x] = 0;
    __syncthreads();
    u32 offset = 0;
    u32 sending = __ballot_sync(0xffffffffu, send);
    if (send) {
        u32 same = __match_any_sync(sending, dest);
        u32 leader = __ffs(same) - 1;
        u32 at = 0;
        if (sy_lane() == leader) at = atomicAdd(&s_count[dest], (u32)__popc(same));
        at = __shfl_sync(same, at, leader);
        offset = at + __popc(same & ((1u << sy_lane()) - 1));
    }
    __syncthreads();
    if (threadIdx.x < peers) {
        u32 c = s_count[threadIdx.x];
        s_base[threadIdx.x] = c ? atomicAdd(&counters[2 + threadIdx.x], (u64)c) : 0;
    }
    __syncthreads();
    if (send) {
        u32 *package = sy_buf<u32>(a, S_FIXED + dest);
        u64 cap = a.len[S_FIXED + dest] / 2;
        u64 slot = s_base[dest] + offset;
        if (slot < cap) {
            package[2 * slot] = id;
            package[2 * slot + 1] = bits;
        } else {
            sy_fail(a, SY_ERR_PACKAGE_OVERFLOW, dest, cap);
        }
    }
}

// The block walks the output frontier a block-width at a time (every thread of the block
// takes part in each step, since the appends are block-aggregated): owned vertices join
// the next frontier once (marker stamp), the others (broadcast: every vertex) go into the
// packages of their owner (broadcast: of every peer).
extern "C" __global__ void __launch_bounds__(SY_BLOCK) bsp_split(const SyArgs a) {
    u32 gpu = sy_u32(a, 0);
    u32 peers = sy_u32(a, 1);
    u32 stamp = sy_u32(a, 2);
    bool broadcast = sy_u32(a, 3) != 0;
    u32 combiner = sy_u32(a, 4);
    bool add = combiner == SY_ADD_F32 || combiner == SY_ADD_F64;
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    u64 out_len = counters[0];
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? out_len : 0;
    if (out_len > a.len[S_FOUT] || peers > BSP_SPLIT_MAX_PEERS) out_len = 0;  // the pre-pass reported it
    u32 *values = sy_buf<u32>(a, S_VALUES);
    u32 *marker = sy_buf<u32>(a, S_MARKER);
    u32 *next = sy_buf<u32>(a, S_FIN);
    const u32 *out = sy_buf<const u32>(a, S_FOUT);
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    const u32 *owner_id = sy_buf<const u32>(a, S_OWNER_ID);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x; base < out_len; base += stride) {
        u64 i = base + threadIdx.x;
        bool have = i < out_len;
        u32 v = have ? out[i] : 0;
        u32 home = have ? owner[v] : gpu;
        bool keep = have && home == gpu && atomicExch(&marker[v], stamp) != stamp;
        sy_push_block(a, &counters[1], next, a.len[S_FIN], keep, v);
        bool sends = have && (broadcast || home != gpu);
        u32 bits = 0, id = 0;
        if (sends) {
            bits = combiner == SY_ADD_F64 ? __float_as_uint((float)((double *)values)[v])
                                          : values[v];
            id = owner_id[v];
        }
        if (broadcast) {
            for (u32 p = 0; p < peers; p++)
                if (p != gpu) bsp_split_send(a, counters, peers, sends, p, id, bits);
        } else {
            bsp_split_send(a, counters, peers, sends, home, id, bits);
        }
        if (add && sends && home != gpu) {  // a proxy's sum, once sent
            if (combiner == SY_ADD_F64)
                ((double *)values)[v] = 0.0;
            else
                values[v] = 0;  // 0.0f
        }
    }
    sy_count(a, items, 0, 0);
}

// Scalars: gpu u32, peers u32, stamp u32, combiner u32, threshold f64, one u64 length per
// peer. Buffers: the 14 fixed slots, then one receive package per peer.
extern "C" __global__ void bsp_merge__pre(const SyArgs a) {
    u32 peers = sy_u32(a, 1);
    for (u32 p = 0; p < peers; p++)
        if (2 * sy_u64(a, 5 + p) > a.len[S_FIXED + p])
            sy_fail(a, SY_ERR_MERGE_ROOM, p, sy_u64(a, 5 + p));
}

// What every merge kernel needs to let the vertices it changes join the next frontier
// (scalars gpu 0, stamp 2).
struct BspMerge {
    const SyArgs *a;
    u32 gpu, stamp;
    u32 *values, *marker, *next;
    u64 *counters;
    const u32 *owner;
    // v joins the next frontier (length counters[1]) if this GPU owns it and the stamp is
    // not on it yet.
    __device__ __forceinline__ void join(u32 v) const {
        if (owner[v] == gpu && atomicExch(&marker[v], stamp) != stamp)
            sy_push(*a, &counters[1], next, a->len[S_FIN], v);
    }
};

__device__ BspMerge bsp_merge_of(const SyArgs &a) {
    return BspMerge{&a, sy_u32(a, 0), sy_u32(a, 2), sy_buf<u32>(a, S_VALUES),
                    sy_buf<u32>(a, S_MARKER), sy_buf<u32>(a, S_FIN), sy_buf<u64>(a, S_COUNTERS),
                    sy_buf<const u32>(a, S_OWNER)};
}

// One package of len (id, value bits) pairs into values; owned vertices that improve (min)
// or pass the threshold (add) join the next frontier. Returns the pairs this thread took.
__device__ u64 bsp_merge_package(const SyArgs &a, const u32 *package, u64 len) {
    const BspMerge m = bsp_merge_of(a);
    u32 *values = m.values;
    u32 combiner = sy_u32(a, 3);
    double threshold = sy_f64(a, 4);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 items = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        items++;
        u32 v = package[2 * i];
        u32 bits = package[2 * i + 1];
        bool activates;
        if (combiner == SY_ADD_F32) {
            float now = atomicAdd((float *)&values[v], __uint_as_float(bits)) + __uint_as_float(bits);
            activates = (double)now > threshold;
        } else if (combiner == SY_ADD_F64) {
            double x = (double)__uint_as_float(bits);
            activates = atomicAdd((double *)values + v, x) + x > threshold;
        } else if (combiner == SY_ASSIGN) {
            values[v] = bits;  // only the owner sends a vertex: one writer
            activates = false;
        } else {
            // Most received values do not improve (the receiver reached the vertex itself
            // at least as early): a plain read spares their atomic.
            activates = bits < ((volatile u32 *)values)[v] && bits < atomicMin(&values[v], bits);
        }
        if (activates) m.join(v);
    }
    return items;
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bsp_merge(const SyArgs a) {
    u32 peers = sy_u32(a, 1);
    u64 items = 0;
    for (u32 p = 0; p < peers; p++) {
        u64 len = sy_u64(a, 5 + p);
        if (2 * len > a.len[S_FIXED + p]) continue;  // the pre-pass reported it
        items += bsp_merge_package(a, sy_buf<const u32>(a, S_FIXED + p), len);
    }
    sy_count(a, items, 0, items);
}

// Scalars: gpu u32, peers u32, stamp u32, combiner u32, threshold f64. Buffers: the 14
// fixed slots, then per peer p its send package toward this GPU (in p's memory, read
// through peer access; this GPU's own slot is not read), then per peer p its counter block
// ([2 + gpu] the package's length, written by p's bsp_split, which the stream waited for).
extern "C" __global__ void bsp_merge_peer__pre(const SyArgs a) {
    u32 gpu = sy_u32(a, 0);
    u32 peers = sy_u32(a, 1);
    for (u32 p = 0; p < peers; p++) {
        if (p == gpu) continue;
        u64 len = sy_buf<const u64>(a, S_FIXED + peers + p)[2 + gpu];
        if (2 * len > a.len[S_FIXED + p]) sy_fail(a, SY_ERR_MERGE_ROOM, p, len);
    }
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bsp_merge_peer(const SyArgs a) {
    u32 gpu = sy_u32(a, 0);
    u32 peers = sy_u32(a, 1);
    u64 items = 0;
    for (u32 p = 0; p < peers; p++) {
        if (p == gpu) continue;
        u64 len = sy_buf<const u64>(a, S_FIXED + peers + p)[2 + gpu];
        if (2 * len > a.len[S_FIXED + p]) continue;  // the pre-pass reported it
        items += bsp_merge_package(a, sy_buf<const u32>(a, S_FIXED + p), len);
    }
    sy_count(a, items, 0, items);
}

// Bitmaps in place of packages, for a superstep whose values are all one value (BFS: the
// level): every set bit v of a peer's bitmap toward this GPU (id on this GPU) is combined
// as min(values[v], value); owned vertices that improve join the next frontier (marker
// stamp, as bsp_merge). The words read are cleared, so the sender's next superstep starts
// from an empty bitmap. Scalars: gpu u32, peers u32, stamp u32, value u32. Buffers: the 14
// fixed slots, then per peer p its bitmap toward this GPU (in p's memory, read and cleared
// through peer access; this GPU's own slot is not read).
extern "C" __global__ void __launch_bounds__(SY_BLOCK) bsp_merge_bits_peer(const SyArgs a) {
    const BspMerge m = bsp_merge_of(a);
    u32 *values = m.values;
    u32 peers = sy_u32(a, 1);
    u32 value = sy_u32(a, 3);
    const u64 n = a.len[S_VALUES];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 items = 0;
    for (u32 p = 0; p < peers; p++) {
        if (p == m.gpu) continue;
        u32 *bitmap = sy_buf<u32>(a, S_FIXED + p);
        u64 words = a.len[S_FIXED + p];
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
            u32 w = bitmap[i];
            if (w == 0) continue;
            bitmap[i] = 0;
            items += __popc(w);
            while (w != 0) {
                u32 b = __ffs(w) - 1;
                w &= w - 1;
                u64 v = 32 * i + b;
                if (v >= n) {
                    sy_fail(a, SY_ERR_VERTEX, v, n);
                    break;
                }
                if (value < ((volatile u32 *)values)[v] && value < atomicMin(&values[v], value))
                    m.join((u32)v);
            }
        }
    }
    sy_count(a, items, 0, items);
}
