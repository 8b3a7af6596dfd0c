// The algorithms' advance and apply kernels, with exactly the contracts of their Rust
// implementations in src/algo/*.rs (same buffers, scalars, outputs and counts). Outputs
// whose order the contract leaves free (frontiers) come out in any order.

// ---------------------------------------------------------------- BFS (src/algo/bfs.rs)

struct BfsOp {
    const SyArgs *a;
    const Advance *d;
    u32 *labels;
    u32 level;
    u64 edges;
    __device__ bool prepare(u32, u64 arcs, u32 &) {
        edges += arcs;
        return true;
    }
    __device__ void visit(u32, u32, u64 e) {
        u32 t = d->targets[e];
        if (labels[t] == SY_UNREACHED && atomicCAS(&labels[t], SY_UNREACHED, level) == SY_UNREACHED)
            sy_emit(*a, *d, t);
    }
};

extern "C" __global__ void bfs_advance__pre(const SyArgs a) { sy_advance_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bfs_advance__post(const SyArgs a) {
    Advance d = sy_advance(a);
    BfsOp op{&a, &d, sy_buf<u32>(a, S_VALUES), d.superstep + 1, 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bfs_advance(const SyArgs a) {
    Advance d = sy_advance(a);
    BfsOp op{&a, &d, sy_buf<u32>(a, S_VALUES), d.superstep + 1, 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, 0);
}

// ------------------------------------------------------------- SSSP (src/algo/sssp.rs)

struct SsspOp {
    const SyArgs *a;
    const Advance *d;
    u32 *dist;
    const u32 *weights;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        edges += arcs;
        state = ((volatile u32 *)dist)[v];
        return true;
    }
    __device__ void visit(u32, u32 dv, u64 e) {
        u32 t = d->targets[e];
        u32 w = weights[e];
        u32 nd = dv + w < dv ? 0xffffffffu : dv + w;  // saturating add
        if (nd < ((volatile u32 *)dist)[t] && nd < atomicMin(&dist[t], nd)) sy_emit(*a, *d, t);
    }
};

extern "C" __global__ void sssp_advance__pre(const SyArgs a) {
    sy_advance_pre(a);
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS])
        sy_fail(a, SY_ERR_WEIGHTS, a.len[S_WEIGHTS], a.len[S_TARGETS]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance__post(const SyArgs a) {
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS]) return;
    Advance d = sy_advance(a);
    SsspOp op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance(const SyArgs a) {
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS]) return;  // the pre-pass reported it
    Advance d = sy_advance(a);
    SsspOp op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}

// Real weights (sssp_advance_f32): distances and weights are f32 bits; for non-negative
// floats the bits order as the numbers, so atomicMin on the bits is the float minimum.
// Unreached vertices (0xffffffff, a NaN pattern) are never expanded (nor counted).
struct SsspF32Op {
    const SyArgs *a;
    const Advance *d;
    u32 *dist;
    const u32 *weights;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        state = ((volatile u32 *)dist)[v];
        if (state == SY_UNREACHED) return false;
        edges += arcs;
        return true;
    }
    __device__ void visit(u32, u32 dv, u64 e) {
        u32 t = d->targets[e];
        u32 nd = __float_as_uint(__fadd_rn(__uint_as_float(dv), __uint_as_float(weights[e])));
        if (nd < ((volatile u32 *)dist)[t] && nd < atomicMin(&dist[t], nd)) sy_emit(*a, *d, t);
    }
};

extern "C" __global__ void sssp_advance_f32__pre(const SyArgs a) {
    sy_advance_pre(a);
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS])
        sy_fail(a, SY_ERR_WEIGHTS, a.len[S_WEIGHTS], a.len[S_TARGETS]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance_f32__post(const SyArgs a) {
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS]) return;
    Advance d = sy_advance(a);
    SsspF32Op op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance_f32(const SyArgs a) {
    if (a.len[S_WEIGHTS] != a.len[S_TARGETS]) return;  // the pre-pass reported it
    Advance d = sy_advance(a);
    SsspF32Op op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}

// ----------------------------------------------------------------- CC (src/algo/cc.rs)

struct CcOp {
    const SyArgs *a;
    const Advance *d;
    u32 *labels;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        edges += arcs;
        state = ((volatile u32 *)labels)[v];
        return true;
    }
    __device__ void visit(u32, u32 lv, u64 e) {
        u32 t = d->targets[e];
        if (lv < ((volatile u32 *)labels)[t] && lv < atomicMin(&labels[t], lv)) sy_emit(*a, *d, t);
    }
};

extern "C" __global__ void cc_advance__pre(const SyArgs a) { sy_advance_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) cc_advance__post(const SyArgs a) {
    Advance d = sy_advance(a);
    CcOp op{&a, &d, sy_buf<u32>(a, S_VALUES), 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) cc_advance(const SyArgs a) {
    Advance d = sy_advance(a);
    CcOp op{&a, &d, sy_buf<u32>(a, S_VALUES), 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}

// ------------------------------------------ Direction-optimizing BFS (src/algo/dobfs.rs)

extern "C" __global__ void dobfs_advance__pre(const SyArgs a) {
    sy_advance_pre(a);
    if (sy_f64(a, 3) != 0.0 && a.len[S_ROFFSETS] != a.len[S_VALUES] + 1)
        sy_fail(a, SY_ERR_NO_REVERSE, a.len[S_ROFFSETS], a.len[S_VALUES]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) dobfs_advance__post(const SyArgs a) {
    Advance d = sy_advance(a);
    if (d.param != 0.0) return;  // the pull step sets nothing aside
    BfsOp op{&a, &d, sy_buf<u32>(a, S_VALUES), d.superstep + 1, 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) dobfs_advance(const SyArgs a) {
    Advance d = sy_advance(a);
    u32 *labels = sy_buf<u32>(a, S_VALUES);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    if (d.param == 0.0) {
        BfsOp op{&a, &d, labels, d.superstep + 1, 0};
        sy_expand(a, d, op);
        sy_count(a, items, op.edges, 0);
        return;
    }
    u64 n = a.len[S_VALUES];
    if (a.len[S_ROFFSETS] != n + 1) return;  // the pre-pass reported it
    if (blockIdx.x == 0 && threadIdx.x == 0) items += n;
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    const u64 *roff = sy_buf<const u64>(a, S_ROFFSETS);
    const u32 *rtgt = sy_buf<const u32>(a, S_RTARGETS);
    u64 edges = 0;
    u32 level = d.superstep + 1;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x; base < n; base += stride) {
        u64 v = base + threadIdx.x;
        if (v < n && owner[v] == d.gpu && labels[v] == SY_UNREACHED) {
            for (u64 e = roff[v]; e < roff[v + 1]; e++) {
                edges++;
                if (((volatile u32 *)labels)[rtgt[e]] == d.superstep) {
                    labels[v] = level;
                    sy_emit(a, d, (u32)v);
                    break;
                }
            }
        }
    }
    sy_count(a, items, edges, 0);
}

// ------------------------------------------------- PageRank (src/algo/pagerank.rs)

// Partial sums are f64 (the f32 share rank / degree added with an f64 atomic): a hub's
// hundreds of thousands of f32 additions lost 0.29% on R-MAT 24 (see ldbc_tolerance).
struct LdbcPushOp {
    const SyArgs *a;
    const Advance *d;
    double *sums;
    const float *rank;
    const u32 *degree;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        u32 deg = degree[v];
        if (deg == 0) return false;
        state = __float_as_uint(rank[v] / (float)deg);
        edges += arcs;
        return true;
    }
    __device__ void visit(u32, u32 share, u64 e) {
        atomicAdd(&sums[d->targets[e]], (double)__uint_as_float(share));
    }
};

extern "C" __global__ void pr_ldbc_push__pre(const SyArgs a) { sy_advance_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_ldbc_push__post(const SyArgs a) {
    Advance d = sy_advance(a);
    LdbcPushOp op{&a, &d, sy_buf<double>(a, S_VALUES), sy_buf<const float>(a, S_AUX),
                  sy_buf<const u32>(a, S_DEGREE), 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_ldbc_push(const SyArgs a) {
    Advance d = sy_advance(a);
    LdbcPushOp op{&a, &d, sy_buf<double>(a, S_VALUES), sy_buf<const float>(a, S_AUX),
                  sy_buf<const u32>(a, S_DEGREE), 0};
    sy_expand(a, d, op);
    // Every proxy is forwarded (see the Rust contract).
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    u64 n = a.len[S_OWNER];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride)
        if (owner[t] != d.gpu) sy_emit(a, d, (u32)t);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}

// Scalars: dangling f64, n u32, d f64, gpu u32.
extern "C" __global__ void pr_ldbc_apply__pre(const SyArgs a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[1] = 0;
    counters[a.len[S_COUNTERS] - 1] = 0;  // the reduction value (f64 bits), 0.0
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_ldbc_apply(const SyArgs a) {
    double dangling = sy_f64(a, 0);
    double n = (double)sy_u32(a, 1);
    double damping = sy_f64(a, 2);
    u32 gpu = sy_u32(a, 3);
    double *sums = sy_buf<double>(a, S_VALUES);
    float *rank = sy_buf<float>(a, S_AUX);
    const u32 *degree = sy_buf<const u32>(a, S_DEGREE);
    u32 *next = sy_buf<u32>(a, S_FIN);
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    u64 len = a.len[S_VALUES];
    double base = (1.0 - damping) / n + damping * dangling / n;
    double local_dangling = 0.0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < len; v += stride) {
        if (owner[v] != gpu) {
            sums[v] = 0.0;
            continue;
        }
        float r = (float)(base + damping * sums[v]);
        rank[v] = r;
        sums[v] = 0.0;
        if (degree[v] == 0) local_dangling += (double)r;
        sy_push(a, &counters[1], next, a.len[S_FIN], (u32)v);
    }
    if (local_dangling != 0.0)
        atomicAdd((double *)&counters[a.len[S_COUNTERS] - 1], local_dangling);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? len : 0;
    sy_count(a, items, 0, 0);
}

struct ResidualOp {
    const SyArgs *a;
    const Advance *d;
    float *residual;
    float *rank;
    const u32 *degree;
    const u32 *owner;
    float damping;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        float r = atomicExch(&residual[v], 0.0f);
        rank[v] += r;
        u32 deg = degree[v];
        if (deg == 0) return false;
        state = __float_as_uint(damping * r / (float)deg);
        edges += arcs;
        return true;
    }
    __device__ void visit(u32, u32 share, u64 e) {
        u32 t = d->targets[e];
        float now = atomicAdd(&residual[t], __uint_as_float(share)) + __uint_as_float(share);
        if (owner[t] != d->gpu || (double)now > d->param) sy_emit(*a, *d, t);
    }
};

extern "C" __global__ void pr_residual_push__pre(const SyArgs a) { sy_advance_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_residual_push__post(const SyArgs a) {
    Advance d = sy_advance(a);
    ResidualOp op{&a, &d, sy_buf<float>(a, S_VALUES), sy_buf<float>(a, S_AUX),
                  sy_buf<const u32>(a, S_DEGREE), sy_buf<const u32>(a, S_OWNER),
                  (float)d.extra, 0};
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_residual_push(const SyArgs a) {
    Advance d = sy_advance(a);
    ResidualOp op{&a, &d, sy_buf<float>(a, S_VALUES), sy_buf<float>(a, S_AUX),
                  sy_buf<const u32>(a, S_DEGREE), sy_buf<const u32>(a, S_OWNER),
                  (float)d.extra, 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}
