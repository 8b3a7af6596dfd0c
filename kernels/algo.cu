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
    // Whether this thread labels t (the CAS that sets its level once wins).
    __device__ __forceinline__ bool claim(u32 t) {
        return labels[t] == SY_UNREACHED && atomicCAS(&labels[t], SY_UNREACHED, level) == SY_UNREACHED;
    }
    __device__ void visit(u32, u32, u64 e) {
        u32 t = d->targets[e];
        if (claim(t)) sy_emit_unique(*a, *d, t);
    }
    // Writes the staged output frontier out (sy_expand's flush points).
    __device__ void flush(int how) { sy_stage_flush_frontier(how, *a, *d); }
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

// BFS that routes what it discovers (src/algo/bfs.rs `bfs_advance_routed`): the superstep's
// split done at discovery. A label is set once, by the CAS that wins, with its final value,
// so an owned vertex goes straight into frontier_out (length counters[1], marker stamp + 1
// as the split's), and a proxy straight into its owner's package as (id on the owner,
// level) (length counters[2 + owner]); proxies are not appended anywhere else. With bits
// set, a proxy sets bit (id on the owner) of its owner's bitmap instead of a pair (one bit
// per vertex: every value this superstep sends is the level), and counters[2 + owner] still
// counts them. Scalars: the advance's, then peers u32, bits u32. Buffers: the 14 fixed
// slots, then one package per peer, then (bits) one bitmap per peer.
// BfsOp's fields, prepare and claim, with its own visit and flush.
struct BfsRoutedOp : BfsOp {
    const u32 *owner;
    const u32 *owner_id;
    u32 peers;
    bool bits;
    __device__ void visit(u32, u32, u64 e) {
        u32 t = d->targets[e];
        if (!claim(t)) return;
        u32 home = owner[t];
        if (home == d->gpu) {
            d->marker[t] = d->stamp + 1;
            if (!sy_stage_put(0, t)) sy_push(*a, &d->counters[1], d->fout, d->fout_cap, t);
            return;
        }
        u32 id = owner_id[t];
        if (bits) {
            u32 *bitmap = sy_buf<u32>(*a, S_FIXED + peers + home);
            if ((u64)(id >> 5) < a->len[S_FIXED + peers + home])
                atomicOr(&bitmap[id >> 5], 1u << (id & 31));
            else
                sy_fail(*a, SY_ERR_PACKAGE_OVERFLOW, home, a->len[S_FIXED + peers + home]);
        }
        if (sy_stage_put(1 + home, id)) return;
        // The stage is full (or home is past its 32 packages): one atomic per peer per warp.
        u32 active = __activemask();
        u32 same = __match_any_sync(active, home);
        u32 leader = __ffs(same) - 1;
        u64 base = 0;
        if (sy_lane() == leader) base = atomicAdd(&d->counters[2 + home], (u64)__popc(same));
        base = __shfl_sync(same, base, leader);
        send(home, base + __popc(same & ((1u << sy_lane()) - 1)), id);
    }
    // Stores proxy `id` (on its owner `home`) at slot `at` of home's package as (id, level);
    // nothing with bits (the bit is set, the counter counts it).
    __device__ void send(u32 home, u64 at, u32 id) {
        if (bits) return;
        u32 *package = sy_buf<u32>(*a, S_FIXED + home);
        u64 cap = a->len[S_FIXED + home] / 2;
        if (at < cap) {
            package[2 * at] = id;
            package[2 * at + 1] = level;
        } else {
            sy_fail(*a, SY_ERR_PACKAGE_OVERFLOW, home, cap);
        }
    }
    // Destination 0 is frontier_out (counter 1), 1 + p the package of peer p (counter 2 + p).
    __device__ void flush(int how) {
        sy_stage_flush(
            how, 1 + peers, [&](u32 dest) { return &d->counters[1 + dest]; },
            [&](u32 dest, u64 at, u32 v) {
                if (dest == 0)
                    sy_flush_frontier(*a, *d, at, v);
                else
                    send(dest - 1, at, v);
            });
    }
};

__device__ BfsRoutedOp bfs_routed_op(const SyArgs &a, const Advance &d) {
    return BfsRoutedOp{{&a, &d, sy_buf<u32>(a, S_VALUES), d.superstep + 1, 0},
                       sy_buf<const u32>(a, S_OWNER),
                       sy_buf<const u32>(a, S_OWNER_ID),
                       sy_u32(a, 6),
                       sy_u32(a, 7) != 0};
}

extern "C" __global__ void bfs_advance_routed__pre(const SyArgs a) {
    sy_advance_pre(a);
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[1] = 0;
    for (u32 p = 0; p < sy_u32(a, 6); p++) counters[2 + p] = 0;
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bfs_advance_routed__post(const SyArgs a) {
    Advance d = sy_advance(a);
    BfsRoutedOp op = bfs_routed_op(a, d);
    sy_expand_huge(a, op);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bfs_advance_routed(const SyArgs a) {
    Advance d = sy_advance(a);
    BfsRoutedOp op = bfs_routed_op(a, d);
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, 0);
}

// The bulk-synchronous runtime's device-side loop on one GPU while the frontier is small
// (src/runtime/bsp/device_loop.rs; BspPrimitive::loop_kernel): one cooperative launch runs
// supersteps one after another, each expanding its input frontier exactly as the
// algorithm's advance does (same op, same stamps, so values and the marker end as the
// superstep path leaves them) into the other frontier buffer, then one grid barrier whose
// last block does the superstep's bookkeeping: it logs the input length, resets the next
// superstep's counters and decides whether to go on. A superstep with huge vertices takes a
// second barrier for their chunks. Slots: the 14 fixed ones, then 14: control (u64, device:
// see L_*), 15: log (u64, mapped host memory: [0] supersteps run, [1] length of the last
// output, [2] which buffer holds it (bit 0: 0 frontier_in, 1 frontier_out) | stop reason <<
// 1 (0 empty or superstep limit, 1 too many vertices, 2 too many arcs), [3 + i] input
// length of superstep i). Scalars: frontier_len u64, superstep u32, max_supersteps u32, most
// vertices u64, most arcs u64.
#define L_ARRIVE 0
#define L_GEN 1
#define L_OUT 2    // and 3: output length of even and odd supersteps
#define L_ARCS 4   // and 5: out-arcs of the output of even and odd supersteps
#define L_LEN 6    // the output length the leader saw
#define L_STOP 7   // 0 go on, else 1 + the log's stop reason
#define L_HUGE 8   // the superstep's huge chunks, as the first barrier saw them
#define L_WORDS 16
#define L_LOG 3

// Adds every thread's x to *target: one atomic per block. Every thread must call it.
__device__ void sy_block_add(u64 *target, u64 x) {
    __shared__ u64 s[SY_BLOCK / 32];
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if (sy_lane() == 0) s[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 sum = 0;
        for (u32 w = 0; w < blockDim.x / 32; w++) sum += s[w];
        if (sum) atomicAdd(target, sum);
    }
    __syncthreads();
}

// Pre-pass of every loop kernel: checks the buffers, resets the control words.
__device__ void sy_levels_pre(const SyArgs &a) {
    u64 *ctl = sy_buf<u64>(a, S_FIXED);
    if (a.len[S_FIXED] < L_WORDS) sy_fail(a, SY_ERR_LEN, L_WORDS, a.len[S_FIXED]);
    else if (a.len[S_FIXED + 1] < L_LOG + sy_u32(a, 2))
        sy_fail(a, SY_ERR_LEN, L_LOG + sy_u32(a, 2), a.len[S_FIXED + 1]);
    else
        for (int i = 0; i < L_WORDS; i++) ctl[i] = 0;
    a.huge[0] = 0;
    if (sy_u64(a, 0) > a.len[S_FIN]) sy_fail(a, SY_ERR_FRONTIER_LEN, sy_u64(a, 0), a.len[S_FIN]);
}

// The loop; make(d) gives the superstep's op (the advance's, bound to d); atomics: count
// one atomic per arc as the advance does.
template <class Make> __device__ void sy_levels(const SyArgs &a, Make make, bool atomics) {
    if (a.len[S_FIXED] < L_WORDS || a.len[S_FIXED + 1] < L_LOG + sy_u32(a, 2)) return;
    if (sy_u64(a, 0) > a.len[S_FIN]) return;  // the pre-pass reported them
    u64 *ctl = sy_buf<u64>(a, S_FIXED);
    volatile u64 *log = sy_buf<u64>(a, S_FIXED + 1);
    u32 first = sy_u32(a, 1);
    u32 max_levels = sy_u32(a, 2);
    u64 most_vertices = sy_u64(a, 3), most_arcs = sy_u64(a, 4);
    u32 *buf[2] = {sy_buf<u32>(a, S_FIN), sy_buf<u32>(a, S_FOUT)};
    u64 cap[2] = {a.len[S_FIN], a.len[S_FOUT]};
    Advance d = sy_advance(a);
    d.param = 0.0;
    d.gpu = 0;
    d.extra = 0.0;
    u64 out_arcs = 0;
    d.out_arcs = &out_arcs;
    u64 len = sy_u64(a, 0), items = 0, edges = 0;
    bool lead = blockIdx.x == 0 && threadIdx.x == 0;
    for (u32 i = 0;; i++) {
        u32 p = i & 1;
        d.frontier = buf[p];
        d.frontier_len = len;
        d.fout = buf[p ^ 1];
        d.fout_cap = cap[p ^ 1];
        d.counters = &ctl[L_OUT + p];
        d.superstep = first + i;
        d.stamp = 2 * d.superstep + 1;
        if (lead) items += len;
        auto op = make(d);
        sy_expand(a, d, op);
        // The bookkeeping, by one thread of the last block to arrive.
        auto keep = [&]() {
            if (threadIdx.x != 0) return;
            u64 next = ((volatile u64 *)ctl)[L_OUT + p];
            u64 arcs = ((volatile u64 *)ctl)[L_ARCS + p];
            log[L_LOG + i] = len;
            ctl[L_OUT + (p ^ 1)] = 0;
            ctl[L_ARCS + (p ^ 1)] = 0;
            a.huge[0] = 0;
            u64 why = next == 0 || i + 1 >= max_levels ? 0
                      : next > most_vertices          ? 1
                      : arcs > most_arcs              ? 2
                                                      : 3;
            ctl[L_LEN] = next;
            ctl[L_STOP] = why == 3 ? 0 : 1 + why;
        };
        sy_block_add(&ctl[L_ARCS + p], out_arcs);
        out_arcs = 0;
        sy_grid_sync(&ctl[L_ARRIVE], &ctl[L_GEN], [&]() {
            u64 huge = ((volatile u64 *)a.huge)[0];
            if (threadIdx.x == 0) ctl[L_HUGE] = huge;
            if (huge == 0) keep();
        });
        if (((volatile u64 *)ctl)[L_HUGE] != 0) {
            sy_expand_huge(a, op);
            sy_block_add(&ctl[L_ARCS + p], out_arcs);
            out_arcs = 0;
            sy_grid_sync(&ctl[L_ARRIVE], &ctl[L_GEN], keep);
        }
        edges += op.edges;
        u64 stop = ((volatile u64 *)ctl)[L_STOP];
        len = ((volatile u64 *)ctl)[L_LEN];
        if (stop != 0) {
            if (lead) {
                log[1] = len;
                log[2] = (u64)(p ^ 1) | ((stop - 1) << 1);
                log[0] = i + 1;
                __threadfence_system();
            }
            break;
        }
    }
    sy_count(a, items, edges, atomics ? edges : 0);
}

extern "C" __global__ void bfs_levels_fused__pre(const SyArgs a) { sy_levels_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) bfs_levels_fused(const SyArgs a) {
    u32 *labels = sy_buf<u32>(a, S_VALUES);
    sy_levels(a, [&](const Advance &d) { return BfsOp{&a, &d, labels, d.superstep + 1, 0}; }, false);
}

// ------------------------------------------------------------- SSSP (src/algo/sssp.rs)

// Integer weights (sssp_advance, a saturating add), or real ones (Real, sssp_advance_f32):
// distances and weights are then f32 bits; for non-negative floats the bits order as the
// numbers, so atomicMin on the bits is the float minimum, and unreached vertices
// (0xffffffff, a NaN pattern) are never expanded (nor counted).
template <bool Real> struct SsspOp {
    const SyArgs *a;
    const Advance *d;
    u32 *dist;
    const u32 *weights;
    u64 edges;
    __device__ bool prepare(u32 v, u64 arcs, u32 &state) {
        state = ((volatile u32 *)dist)[v];
        if (Real && state == SY_UNREACHED) return false;
        edges += arcs;
        return true;
    }
    __device__ void visit(u32, u32 dv, u64 e) {
        u32 t = d->targets[e];
        u32 w = weights[e];
        u32 nd = Real ? __float_as_uint(__fadd_rn(__uint_as_float(dv), __uint_as_float(w)))
                      : (dv + w < dv ? 0xffffffffu : dv + w);
        if (nd < ((volatile u32 *)dist)[t] && nd < atomicMin(&dist[t], nd))
            sy_emit<true>(*a, *d, t);
    }
    __device__ void flush(int how) { sy_stage_flush_frontier(how, *a, *d); }
};

// Whether the weights are one per arc (the pre-passes report it when not).
__device__ __forceinline__ bool sy_weights_ok(const SyArgs &a) {
    return a.len[S_WEIGHTS] == a.len[S_TARGETS];
}

__device__ void sy_check_weights(const SyArgs &a) {
    if (!sy_weights_ok(a)) sy_fail(a, SY_ERR_WEIGHTS, a.len[S_WEIGHTS], a.len[S_TARGETS]);
}

template <bool Real> __device__ void sssp_post(const SyArgs &a) {
    if (!sy_weights_ok(a)) return;
    Advance d = sy_advance(a);
    SsspOp<Real> op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand_huge(a, op);
}

template <bool Real> __device__ void sssp_main(const SyArgs &a) {
    if (!sy_weights_ok(a)) return;
    Advance d = sy_advance(a);
    SsspOp<Real> op{&a, &d, sy_buf<u32>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.edges);
}

extern "C" __global__ void sssp_advance__pre(const SyArgs a) {
    sy_advance_pre(a);
    sy_check_weights(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance__post(const SyArgs a) {
    sssp_post<false>(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance(const SyArgs a) {
    sssp_main<false>(a);
}

extern "C" __global__ void sssp_levels_fused__pre(const SyArgs a) {
    sy_levels_pre(a);
    sy_check_weights(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_levels_fused(const SyArgs a) {
    if (!sy_weights_ok(a)) return;  // the pre-pass reported it
    u32 *dist = sy_buf<u32>(a, S_VALUES);
    const u32 *weights = sy_buf<const u32>(a, S_WEIGHTS);
    sy_levels(a, [&](const Advance &d) { return SsspOp<false>{&a, &d, dist, weights, 0}; }, true);
}

extern "C" __global__ void sssp_advance_f32__pre(const SyArgs a) {
    sy_advance_pre(a);
    sy_check_weights(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance_f32__post(const SyArgs a) {
    sssp_post<true>(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) sssp_advance_f32(const SyArgs a) {
    sssp_main<true>(a);
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
        if (lv < ((volatile u32 *)labels)[t] && lv < atomicMin(&labels[t], lv))
            sy_emit<true>(*a, *d, t);
    }
    __device__ void flush(int how) { sy_stage_flush_frontier(how, *a, *d); }
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

extern "C" __global__ void cc_levels_fused__pre(const SyArgs a) { sy_levels_pre(a); }

extern "C" __global__ void __launch_bounds__(SY_BLOCK) cc_levels_fused(const SyArgs a) {
    u32 *labels = sy_buf<u32>(a, S_VALUES);
    sy_levels(a, [&](const Advance &d) { return CcOp{&a, &d, labels, 0}; }, true);
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

// The pull (PrDirection::Pull): every local vertex t sums the shares of the sources of its
// in-arcs on this GPU (the reverse slots hold the transpose of the local arcs) in f64 and
// stores the sum, without atomics. Rows of at least SY_HUGE arcs are set aside in chunks
// and summed by the post-pass with one f64 atomic add per chunk (their sum is stored as 0
// first, by the main pass); rows of at least SY_BLOCK arcs by the whole block, of at least 32 by a warp, the
// rest by the block's threads over the concatenation of their arcs (Merrill's gather) with
// a segmented warp sum and a shared accumulator per row. A share is rank / out-degree (f32)
// at superstep 0, then the shares buffer (the last buffer) the apply step wrote.
struct PullShares {
    const float *rank;
    const u32 *degree;
    const float *shares;
    bool first;
    // u has an arc here, so its out-degree is at least 1.
    __device__ __forceinline__ double of(u32 u) const {
        return first ? (double)(rank[u] / (float)degree[u]) : (double)shares[u];
    }
};

__device__ PullShares pr_pull_shares(const SyArgs &a) {
    return PullShares{sy_buf<const float>(a, S_AUX), sy_buf<const u32>(a, S_DEGREE),
                      sy_buf<const float>(a, (int)a.nbuffers - 1), sy_u32(a, 2) == 0};
}

extern "C" __global__ void pr_ldbc_pull__pre(const SyArgs a) {
    sy_advance_pre(a);
    if (a.len[S_ROFFSETS] != a.len[S_VALUES] + 1)
        sy_fail(a, SY_ERR_NO_REVERSE, a.len[S_ROFFSETS], a.len[S_VALUES]);
    else if (sy_u32(a, 2) != 0 && a.len[a.nbuffers - 1] != a.len[S_VALUES])
        sy_fail(a, SY_ERR_LEN, a.len[a.nbuffers - 1], a.len[S_VALUES]);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) pr_ldbc_pull__post(const SyArgs a) {
    const u32 *src = sy_buf<const u32>(a, S_RTARGETS);
    double *sums = sy_buf<double>(a, S_VALUES);
    PullShares sh = pr_pull_shares(a);
    sy_huge_chunks(a, [&](u32 t, u32, u64 first, u64 end) {
        double x = 0.0;
        for (u64 e = first + threadIdx.x; e < end; e += blockDim.x) x += sh.of(src[e]);
        x = sy_block_sum(x);
        if (threadIdx.x == 0 && end > first) atomicAdd(&sums[t], x);
        __syncthreads();
    });
}

// At most 32 registers, so 8 blocks fit an SM (37 gave 6, 57% achieved occupancy on R-MAT 24,
// H100: the kernel waits on its gathers).
extern "C" __global__ void __launch_bounds__(SY_BLOCK, 8) pr_ldbc_pull(const SyArgs a) {
    __shared__ u64 s_beg[SY_BLOCK];
    __shared__ double s_acc[SY_BLOCK];
    Advance d = sy_advance(a);
    const u64 *roff = sy_buf<const u64>(a, S_ROFFSETS);
    const u32 *src = sy_buf<const u32>(a, S_RTARGETS);
    double *sums = sy_buf<double>(a, S_VALUES);
    PullShares sh = pr_pull_shares(a);
    const u64 n = a.len[S_VALUES];
    const u32 lane = sy_lane(), warp = threadIdx.x >> 5;
    u64 edges = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x; base < n; base += stride) {
        u64 t = base + threadIdx.x;
        u64 beg = 0, end = 0;
        if (t < n) {
            beg = roff[t];
            end = roff[t + 1];
            edges += end - beg;
            // A row set aside is stored as 0 by the small rows' path below; the post-pass
            // adds its chunks.
            if (sy_set_aside(a, (u32)t, 0, beg, end)) end = beg;
        }
        const bool small = end - beg < 32;
        // Block-wide rows.
        while (true) {
            int o = sy_claim_wide(beg, end);
            if (o < 0) break;
            double x = 0.0;
            for (u64 e = sy_wide.beg + threadIdx.x; e < sy_wide.end; e += blockDim.x)
                x += sh.of(src[e]);
            x = sy_block_sum(x);
            if (threadIdx.x == 0) sums[base + o] = x;
            __syncthreads();
        }
        // Warp-wide rows.
        while (true) {
            SyRow r = sy_claim_warp(beg, end);
            if (r.owner < 0) break;
            double x = 0.0;
            for (u64 e = r.beg + lane; e < r.end; e += 32) x += sh.of(src[e]);
            x = sy_warp_sum(x);
            if (lane == 0) sums[base + warp * 32 + r.owner] = x;
        }
        // Small rows: the block's arcs end to end.
        s_beg[threadIdx.x] = beg;
        s_acc[threadIdx.x] = 0.0;
        const u32 total = sy_lay_rows(small ? (u32)(end - beg) : 0);
        for (u32 k0 = 0; k0 < total; k0 += SY_BLOCK) {
            u32 k = k0 + threadIdx.x;
            u32 row = 0xffffffffu;
            double x = 0.0;
            if (k < total) {
                u32 at;
                row = sy_row_of(k, at);
                x = sh.of(src[s_beg[row] + at]);
            }
            // Segmented sum toward each row's first lane (rows are contiguous in k).
            for (int o = 1; o < 32; o <<= 1) {
                double y = __shfl_down_sync(0xffffffffu, x, o);
                u32 r = __shfl_down_sync(0xffffffffu, row, o);
                if (lane + o < 32 && r == row) x += y;
            }
            u32 prev = __shfl_up_sync(0xffffffffu, row, 1);
            if (row != 0xffffffffu && (lane == 0 || prev != row)) atomicAdd(&s_acc[row], x);
        }
        __syncthreads();
        if (t < n && small) sums[t] = s_acc[threadIdx.x];
        __syncthreads();
    }
    // Every proxy is forwarded (see the Rust contract).
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride)
        if (owner[t] != d.gpu) sy_emit(a, d, (u32)t);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, edges, 0);
}

// Scalars: dangling f64, n u32, d f64, gpu u32.
extern "C" __global__ void pr_ldbc_apply__pre(const SyArgs a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[1] = 0;
    counters[a.len[S_COUNTERS] - 1] = 0;  // the reduction value (f64 bits), 0.0
    if (a.nbuffers > S_FIXED && a.len[S_FIXED] != a.len[S_VALUES])
        sy_fail(a, SY_ERR_LEN, a.len[S_FIXED], a.len[S_VALUES]);
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
    // The pull's shares buffer, if the launch has one after the fixed slots (its length is
    // checked by the pre-pass).
    float *shares = a.nbuffers > S_FIXED ? sy_buf<float>(a, S_FIXED) : nullptr;
    u64 len = a.len[S_VALUES];
    double base = (1.0 - damping) / n + damping * dangling / n;
    double local_dangling = 0.0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 first = (u64)blockIdx.x * blockDim.x; first < len; first += stride) {
        u64 v = first + threadIdx.x;
        bool mine = v < len && owner[v] == gpu;
        if (mine) {
            float r = (float)(base + damping * sums[v]);
            rank[v] = r;
            u32 deg = degree[v];
            if (deg == 0) local_dangling += (double)r;
            if (shares) shares[v] = deg == 0 ? 0.0f : r / (float)deg;
        }
        if (v < len) sums[v] = 0.0;
        sy_push_block(a, &counters[1], next, a.len[S_FIN], mine, (u32)v);
    }
    // One atomic add per block (one per thread serialised on the one counter).
    local_dangling = sy_block_sum(local_dangling);
    if (threadIdx.x == 0 && local_dangling != 0.0)
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

// ------------------------------------------------------------- CDLP (src/algo/cdlp.rs)
// Label-count tables: 2 slots per arc of the owned vertices (slots 2 offsets[v] ..
// 2 offsets[v+1] are v's), keys (label + 1, 0 = empty) and counts, the last two buffers.

__device__ __forceinline__ u64 cdlp_home(u32 label, u64 capacity) {
    return ((u64)label * 0x9E3779B1ull) % capacity;
}

extern "C" __global__ void cdlp_advance__pre(const SyArgs a) { sy_advance_pre(a); }

// One warp per frontier vertex: its lanes read (and empty) the table; the best (count,
// smallest label) wins as the largest key (count << 32 | ~label).
extern "C" __global__ void __launch_bounds__(SY_BLOCK) cdlp_advance(const SyArgs a) {
    Advance d = sy_advance(a);
    u32 *labels = sy_buf<u32>(a, S_VALUES);
    u32 *keys = sy_buf<u32>(a, (int)a.nbuffers - 2);
    u32 *counts = sy_buf<u32>(a, (int)a.nbuffers - 1);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    u64 edges = 0;
    if (d.superstep > 0) {
        const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
        for (u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < d.frontier_len;
             i += warps) {
            u32 v = d.frontier[i];
            u64 beg = 2 * d.offsets[v], end = 2 * d.offsets[v + 1];
            u64 best = 0;
            for (u64 s = beg + sy_lane(); s < end; s += 32) {
                u32 k = keys[s];
                if (k != 0) {
                    u64 c = ((u64)counts[s] << 32) | (u64)(0xffffffffu - (k - 1));
                    best = c > best ? c : best;
                    keys[s] = 0;
                    counts[s] = 0;
                }
            }
            for (int o = 16; o > 0; o >>= 1) {
                u64 other = __shfl_down_sync(0xffffffffu, best, o);
                best = other > best ? other : best;
            }
            if (sy_lane() == 0) {
                edges += (end - beg) / 2;
                if (best != 0) {
                    u32 label = 0xffffffffu - (u32)best;
                    if (label != labels[v]) {
                        labels[v] = label;
                        sy_emit(a, d, v);
                    }
                }
            }
        }
    }
    sy_count(a, items, edges, 0);
}

// Scalars: reduction f64, n u32, gpu u32. Buffers: the 14 fixed slots, keys, counts.
extern "C" __global__ void cdlp_apply__pre(const SyArgs a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[1] = 0;
    counters[a.len[S_COUNTERS] - 1] = 0;  // the reduction value (f64 bits), 0.0
}

// One thread per arc (the grid strides over all local arcs; on the runtime only owned
// vertices have any), its vertex found by binary search over the offsets; then the next
// frontier (every owned vertex), appended block by block.
extern "C" __global__ void __launch_bounds__(SY_BLOCK) cdlp_apply(const SyArgs a) {
    u32 gpu = sy_u32(a, 2);
    const u64 *offsets = sy_buf<const u64>(a, S_OFFSETS);
    const u32 *targets = sy_buf<const u32>(a, S_TARGETS);
    const u32 *labels = sy_buf<const u32>(a, S_VALUES);
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    u32 *next = sy_buf<u32>(a, S_FIN);
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    u32 *keys = sy_buf<u32>(a, (int)a.nbuffers - 2);
    u32 *counts = sy_buf<u32>(a, (int)a.nbuffers - 1);
    u64 n = a.len[S_VALUES];
    u64 arcs = a.len[S_TARGETS];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 edges = 0;
    for (u64 e = first; e < arcs; e += stride) {
        u64 lo = 0, hi = n - 1;  // the last vertex whose arcs start at or before e
        while (lo < hi) {
            u64 mid = (lo + hi + 1) >> 1;
            if (offsets[mid] <= e) lo = mid; else hi = mid - 1;
        }
        if (owner[lo] != gpu) continue;
        u64 base = 2 * offsets[lo];
        u64 capacity = 2 * (offsets[lo + 1] - offsets[lo]);
        u32 label = labels[targets[e]];
        u64 h = cdlp_home(label, capacity);
        while (true) {
            u32 k = atomicCAS(&keys[base + h], 0u, label + 1);
            if (k == 0 || k == label + 1) {
                atomicAdd(&counts[base + h], 1u);
                break;
            }
            h = h + 1 == capacity ? 0 : h + 1;
        }
        edges++;
    }
    // The owned vertices, block by block (one atomic per block, as pr_ldbc_apply).
    for (u64 b = (u64)blockIdx.x * blockDim.x; b < n; b += stride) {
        u64 v = b + threadIdx.x;
        sy_push_block(a, &counters[1], next, a.len[S_FIN], v < n && owner[v] == gpu, (u32)v);
    }
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? n : 0;
    sy_count(a, items, edges, edges);
}

// --------------------------------------------------------------- LCC (src/algo/lcc.rs)
// The neighbourhood graph: sorted targets, weights the 0/1 flags (1: the input has the arc).

// Position of x in the sorted targets[b, e), or e.
__device__ __forceinline__ u64 lcc_find(const u32 *targets, u64 b, u64 e, u32 x) {
    u64 lo = b, hi = e;
    while (lo < hi) {
        u64 mid = (lo + hi) >> 1;
        u32 t = targets[mid];
        if (t == x) return mid;
        if (t < x) lo = mid + 1; else hi = mid;
    }
    return e;
}

struct LccOp {
    const SyArgs *a;
    const Advance *d;
    double *counts;
    const u32 *flags;
    u64 edges;
    u64 atomics;
    __device__ bool prepare(u32, u64, u32 &) { return true; }
    __device__ void visit(u32 v, u32, u64 arc) {
        const u64 *off = d->offsets;
        const u32 *tg = d->targets;
        u32 u = tg[arc];
        u64 vb = off[v], ve = off[v + 1], ub = off[u], ue = off[u + 1];
        u64 count = 0;
        if (ue - ub <= ve - vb) {
            for (u64 i = ub; i < ue; i++)
                if (lcc_find(tg, vb, ve, tg[i]) != ve) count += flags[i];
            edges += 1 + (ue - ub);
        } else {
            for (u64 j = vb; j < ve; j++) {
                u64 p = lcc_find(tg, ub, ue, tg[j]);
                if (p != ue) count += flags[p];
            }
            edges += 1 + (ve - vb);
        }
        if (count != 0) {
            atomicAdd(&counts[v], (double)count);
            atomics++;
        }
    }
};

extern "C" __global__ void lcc_count__pre(const SyArgs a) {
    sy_advance_pre(a);
    sy_check_weights(a);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) lcc_count__post(const SyArgs a) {
    if (!sy_weights_ok(a)) return;
    Advance d = sy_advance(a);
    LccOp op{&a, &d, sy_buf<double>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0, 0};
    sy_expand_huge(a, op);
    sy_count(a, 0, op.edges, op.atomics);
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) lcc_count(const SyArgs a) {
    if (!sy_weights_ok(a)) return;  // the pre-pass reported it
    Advance d = sy_advance(a);
    LccOp op{&a, &d, sy_buf<double>(a, S_VALUES), sy_buf<const u32>(a, S_WEIGHTS), 0, 0};
    sy_expand(a, d, op);
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? d.frontier_len : 0;
    sy_count(a, items, op.edges, op.atomics);
}

// Scalars: reduction f64, n u32, gpu u32.
extern "C" __global__ void lcc_apply__pre(const SyArgs a) {
    u64 *counters = sy_buf<u64>(a, S_COUNTERS);
    counters[1] = 0;
    counters[a.len[S_COUNTERS] - 1] = 0;
}

extern "C" __global__ void __launch_bounds__(SY_BLOCK) lcc_apply(const SyArgs a) {
    u32 gpu = sy_u32(a, 2);
    const u64 *offsets = sy_buf<const u64>(a, S_OFFSETS);
    const double *counts = sy_buf<const double>(a, S_VALUES);
    float *lcc = sy_buf<float>(a, S_AUX);
    const u32 *owner = sy_buf<const u32>(a, S_OWNER);
    u64 n = a.len[S_VALUES];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        if (owner[v] != gpu) continue;
        double deg = (double)(offsets[v + 1] - offsets[v]);
        lcc[v] = deg >= 2.0 ? (float)__ddiv_rn(counts[v], __dmul_rn(deg, deg - 1.0)) : 0.0f;
    }
    u64 items = (blockIdx.x == 0 && threadIdx.x == 0) ? n : 0;
    sy_count(a, items, 0, 0);
}
