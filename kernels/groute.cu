// The Groute applications' kernels, with exactly the contracts of their Rust
// implementations in src/runtime/groute/{cc,filter}.rs (same buffers, scalars, outputs and
// counts). Where a parallel result may differ in shape from the sequential loop (the parent
// arrays left by hook and merge), tests/cuda_conformance.rs says what it compares.

// ------------------------------------------------- CC (src/runtime/groute/cc.rs)
// Parents only ever point to lower ids (parent[x] <= x), so a root is the smallest id of
// its tree. A pointer upwards breaks the contract: it is reported (it could make a walk
// loop forever) and the walk stops.

// The root of x, halving the path on the way (parent[x] = parent[parent[x]]: x is no
// root, so no hook ever writes parent[x], and an ancestor stays an ancestor). Sets `bad`
// (and reports) on a pointer upwards or outside the array.
__device__ u32 gcc_find(const SyArgs &a, volatile u32 *p, u32 x, bool &bad) {
    while (true) {
        u32 q = p[x];
        if (q == x) return x;
        if (q > x) {
            sy_fail(a, SY_ERR_UPWARD, x, q);
            bad = true;
            return x;
        }
        u32 g = p[q];
        if (g > q) {
            sy_fail(a, SY_ERR_UPWARD, q, g);
            bad = true;
            return q;
        }
        if (g != q) p[x] = g;
        x = g;
    }
}

// Joins the trees of u and v: the higher root is hooked under the lower one with a
// compare-and-swap, retried from the new roots when another thread changed the higher root
// first. A successful swap always joins two different trees (the lower root's tree has a
// root <= lower < higher), so the number of swaps equals the sequential hook count.
__device__ void gcc_hook(const SyArgs &a, u32 *parent, u32 u, u32 v, u64 &hooks) {
    volatile u32 *p = parent;
    while (true) {
        bool bad = false;
        u32 ru = gcc_find(a, p, u, bad);
        u32 rv = gcc_find(a, p, v, bad);
        if (bad || ru == rv) return;
        u32 hi = ru > rv ? ru : rv;
        u32 lo = ru > rv ? rv : ru;
        if (atomicCAS(&parent[hi], hi, lo) == hi) {
            hooks++;
            return;
        }
        u = lo;
        v = hi;
    }
}

// The root of x without changing anything (bad as in gcc_find).
__device__ u32 gcc_root(const SyArgs &a, volatile u32 *p, u32 x, bool &bad) {
    while (true) {
        u32 q = p[x];
        if (q == x) return x;
        if (q > x) {
            sy_fail(a, SY_ERR_UPWARD, x, q);
            bad = true;
            return x;
        }
        x = q;
    }
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_cc_init(const SyArgs a) {
    u32 *parent = sy_buf<u32>(a, 0);
    u64 n = a.len[0];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) parent[v] = (u32)v;
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? n : 0, 0, 0);
}

// Scalars: len u64 (elements of edges, even).
__device__ bool gcc_hook_ok(const SyArgs &a) {
    u64 len = sy_u64(a, 0);
    return len <= a.len[1] && len % 2 == 0;
}

extern "C" __global__ void groute_cc_hook__pre(const SyArgs a) {
    u64 len = sy_u64(a, 0);
    if (len > a.len[1]) sy_fail(a, SY_ERR_LEN, len, a.len[1]);
    else if (len % 2) sy_fail(a, SY_ERR_ODD, len, 0);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_cc_hook(const SyArgs a) {
    if (!gcc_hook_ok(a)) return;  // the pre-pass reported it
    u32 *parent = sy_buf<u32>(a, 0);
    const u32 *edges = sy_buf<const u32>(a, 1);
    u64 n = a.len[0];
    u64 pairs = sy_u64(a, 0) / 2;
    u64 edges_done = 0, hooks = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += stride) {
        u32 u = edges[2 * i], v = edges[2 * i + 1];
        if (u >= n || v >= n) {
            sy_fail(a, SY_ERR_VERTEX, u >= n ? u : v, n);
            continue;
        }
        edges_done++;
        gcc_hook(a, parent, u, v, hooks);
    }
    sy_count(a, 0, edges_done, hooks);
}

// Scalars: offset u64, len u64.
__device__ bool gcc_merge_ok(const SyArgs &a) {
    u64 offset = sy_u64(a, 0), len = sy_u64(a, 1);
    return len <= a.len[1] && offset + len <= a.len[0];
}

extern "C" __global__ void groute_cc_merge__pre(const SyArgs a) {
    u64 offset = sy_u64(a, 0), len = sy_u64(a, 1);
    if (len > a.len[1]) sy_fail(a, SY_ERR_LEN, len, a.len[1]);
    else if (offset + len > a.len[0]) sy_fail(a, SY_ERR_RANGE, offset + len, a.len[0]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_cc_merge(const SyArgs a) {
    if (!gcc_merge_ok(a)) return;  // the pre-pass reported it
    u32 *parent = sy_buf<u32>(a, 0);
    const u32 *packet = sy_buf<const u32>(a, 1);
    u64 n = a.len[0];
    u64 offset = sy_u64(a, 0), len = sy_u64(a, 1);
    u64 edges_done = 0, hooks = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        u32 p = packet[i];
        if (p >= n) {
            sy_fail(a, SY_ERR_VERTEX, p, n);
            continue;
        }
        edges_done++;
        gcc_hook(a, parent, (u32)(offset + i), p, hooks);
    }
    sy_count(a, 0, edges_done, hooks);
}

// Every vertex at its root: no hook runs meanwhile, so every thread that walks through a
// tree finds the same root, and the result is the sequential one exactly.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_cc_compress(const SyArgs a) {
    u32 *parent = sy_buf<u32>(a, 0);
    volatile u32 *p = parent;
    u64 n = a.len[0];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        bool bad = false;
        u32 q = p[v];
        u32 r = gcc_root(a, p, (u32)v, bad);
        if (!bad && r != q) p[v] = r;
    }
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? n : 0, 0, 0);
}

// Scalars: len u64. Every vertex on the path of an endpoint ends up at the root, as in the
// sequential loop (a walk stops at a vertex already at the root: whoever set it sets the
// rest of that path), so the result is the sequential one exactly.
extern "C" __global__ void groute_cc_compress_segment__pre(const SyArgs a) {
    u64 len = sy_u64(a, 0);
    if (len > a.len[1]) sy_fail(a, SY_ERR_LEN, len, a.len[1]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_cc_compress_segment(const SyArgs a) {
    u64 len = sy_u64(a, 0);
    if (len > a.len[1]) return;  // the pre-pass reported it
    u32 *parent = sy_buf<u32>(a, 0);
    volatile u32 *p = parent;
    const u32 *edges = sy_buf<const u32>(a, 1);
    u64 n = a.len[0];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        u32 x = edges[i];
        if (x >= n) {
            sy_fail(a, SY_ERR_VERTEX, x, n);
            continue;
        }
        bool bad = false;
        u32 r = gcc_root(a, p, x, bad);
        if (bad) continue;
        u32 y = x;
        while (y != r) {
            u32 next = p[y];
            if (next == r) break;
            p[y] = r;
            y = next;
        }
    }
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? len : 0, 0, 0);
}

// --------------------------------------------- filter (src/runtime/groute/filter.rs)
// Buffers [input, output, count[1]], scalars [len u64, kind u32, a u32, b u32]. The output
// keeps input order: the input is cut into tiles of GF_TILE elements; the main pass counts
// each tile's kept elements into the stream's scratch (the huge-vertex list, which no other
// kernel uses between this launch's passes), and the post-pass gives each tile its offset
// (the sum of the counts before it) and writes its kept elements in order with a block-wide
// scan per round of SY_BLOCK elements. Counts as the Rust model: items = len, atomics = the
// warps (aligned 32-element chunks, as the rounds lay them out) with a kept element, the
// atomic adds a warp-aggregated append would make; the ordered design needs none.

#define GF_ROUNDS 8
#define GF_TILE (GF_ROUNDS * SY_BLOCK)

__device__ __forceinline__ bool gf_keeps(u32 kind, u32 pa, u32 pb, u32 x) {
    return kind == 0 ? (x % pa == pb) : (x < pa);
}

__device__ bool gf_ok(const SyArgs &a) {
    u64 len = sy_u64(a, 0);
    u32 kind = sy_u32(a, 1), pa = sy_u32(a, 2);
    u64 tiles = (len + GF_TILE - 1) / GF_TILE;
    return ((kind == 0 && pa != 0) || kind == 1) && len <= a.len[0] && a.len[2] >= 1 &&
           tiles <= 3 * a.huge_cap;
}

extern "C" __global__ void groute_filter__pre(const SyArgs a) {
    u64 len = sy_u64(a, 0);
    u32 kind = sy_u32(a, 1), pa = sy_u32(a, 2);
    u64 tiles = (len + GF_TILE - 1) / GF_TILE;
    if (!((kind == 0 && pa != 0) || kind == 1)) sy_fail(a, SY_ERR_PREDICATE, kind, pa);
    else if (len > a.len[0]) sy_fail(a, SY_ERR_LEN, len, a.len[0]);
    else if (a.len[2] < 1) sy_fail(a, SY_ERR_LEN, 1, 0);
    else if (tiles > 3 * a.huge_cap) sy_fail(a, SY_ERR_LEN, len, 3 * a.huge_cap * GF_TILE);
    else if (len == 0) sy_buf<u32>(a, 2)[0] = 0;
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_filter(const SyArgs a) {
    if (!gf_ok(a)) return;  // the pre-pass reported it
    __shared__ u32 s_kept[SY_BLOCK / 32];
    const u32 *input = sy_buf<const u32>(a, 0);
    u64 len = sy_u64(a, 0);
    u32 kind = sy_u32(a, 1), pa = sy_u32(a, 2), pb = sy_u32(a, 3);
    u64 *scratch = a.huge + 1;
    u64 tiles = (len + GF_TILE - 1) / GF_TILE;
    u64 warps = 0;
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        u32 kept = 0;
        for (u32 r = 0; r < GF_ROUNDS; r++) {
            u64 i = t * GF_TILE + (u64)r * SY_BLOCK + threadIdx.x;
            bool keep = i < len && gf_keeps(kind, pa, pb, input[i]);
            u32 m = __ballot_sync(0xffffffffu, keep);
            if (sy_lane() == 0) {
                kept += __popc(m);
                warps += m != 0;
            }
        }
        if (sy_lane() == 0) s_kept[threadIdx.x >> 5] = kept;
        __syncthreads();
        if (threadIdx.x == 0) {
            u64 sum = 0;
            for (u32 w = 0; w < SY_BLOCK / 32; w++) sum += s_kept[w];
            scratch[t] = sum;
        }
        __syncthreads();
    }
    sy_count(a, (blockIdx.x == 0 && threadIdx.x == 0) ? len : 0, 0, warps);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) groute_filter__post(const SyArgs a) {
    if (!gf_ok(a)) return;
    __shared__ u64 s_sum[SY_BLOCK / 32];
    __shared__ u32 s_warp[SY_BLOCK / 32];
    const u32 *input = sy_buf<const u32>(a, 0);
    u32 *output = sy_buf<u32>(a, 1);
    u64 cap = a.len[1];
    u64 len = sy_u64(a, 0);
    u32 kind = sy_u32(a, 1), pa = sy_u32(a, 2), pb = sy_u32(a, 3);
    const u64 *scratch = a.huge + 1;
    u64 tiles = (len + GF_TILE - 1) / GF_TILE;
    u32 warp = threadIdx.x >> 5;
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        // The tile's offset: the kept counts of the tiles before it.
        u64 part = 0;
        for (u64 j = threadIdx.x; j < t; j += blockDim.x) part += scratch[j];
        for (int o = 16; o > 0; o >>= 1) part += __shfl_down_sync(0xffffffffu, part, o);
        if (sy_lane() == 0) s_sum[warp] = part;
        __syncthreads();
        u64 base = 0;
        for (u32 w = 0; w < SY_BLOCK / 32; w++) base += s_sum[w];
        __syncthreads();
        for (u32 r = 0; r < GF_ROUNDS; r++) {
            u64 i = t * GF_TILE + (u64)r * SY_BLOCK + threadIdx.x;
            u32 x = i < len ? input[i] : 0;
            bool keep = i < len && gf_keeps(kind, pa, pb, x);
            u32 m = __ballot_sync(0xffffffffu, keep);
            if (sy_lane() == 0) s_warp[warp] = __popc(m);
            __syncthreads();
            u32 before = 0, total = 0;
            for (u32 w = 0; w < SY_BLOCK / 32; w++) {
                if (w < warp) before += s_warp[w];
                total += s_warp[w];
            }
            if (keep) {
                u64 at = base + before + __popc(m & ((1u << sy_lane()) - 1));
                if (at < cap)
                    output[at] = x;
                else
                    sy_fail(a, SY_ERR_OUT_OVERFLOW, at, cap);
            }
            base += total;
            __syncthreads();
        }
        if (t == tiles - 1 && threadIdx.x == 0) sy_buf<u32>(a, 2)[0] = (u32)base;
    }
}
