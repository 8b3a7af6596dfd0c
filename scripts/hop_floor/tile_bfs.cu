// On-chip tiled BFS: an experiment for issue 20's luxembourg target (2 ms on one H200).
//
// The graph is cut into compact tiles (balls grown by BFS, no dependence on the source), one
// persistent CTA a tile, every CTA resident at once. A CTA copies its tile's rows into shared
// memory and runs its part of the BFS there (labels, rows, frontier: shared-memory latency, not
// L2's). An arc to another tile lowers that vertex's label in global memory with atomicMin and,
// if it lowered it, pushes (vertex, label) into the owning tile's inbox. Labels are corrected
// asynchronously (a later, smaller label re-expands a vertex), so the result is exact.
//
// Termination: one global counter of tokens. The source's CTA starts with one. A message adds
// one (by its sender, before the message is visible); a CTA that consumed messages holds their
// tokens and gives them back when it runs out of work. The counter reaches 0 only when no
// message is in flight and no CTA holds work.
//
// Build: nvcc -O3 -arch=sm_90 tile_bfs.cu -o tile_bfs
// Run:   ./tile_bfs GRAPH.mtx [source=0] [tile_vertices=512] [block=256] [repeats=5] [poll_every=1]
//        [sleep_ns=64]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

typedef unsigned int u32;
typedef unsigned long long u64;
#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static const u32 INF = 0xffffffffu;
static const u32 REMOTE = 0x80000000u;
static const u64 EMPTY = ~0ull;

struct Dev {
  const u32 *tile_start; // T+1: tile t holds vertices [tile_start[t], tile_start[t+1])
  const u32 *rowptr;     // n+1, over renumbered ids
  const u32 *cols;       // m: local id, or REMOTE | global id
  u32 *glab;             // n: labels of remote targets (and the result)
  u64 *inbox;            // T * inbox_cap entries: (label << 32) | local id, EMPTY when unwritten
  u32 *tail;             // T: entries reserved in each inbox
  u32 *work;             // tokens outstanding
  u32 *overflow;         // set if an inbox overflowed
  u64 *stats;            // [0] expansions, [1] messages, [2] max iterations of a CTA
  u32 T, inbox_cap, src;
  u32 poll_every; // a busy CTA reads its inbox's tail every this many iterations
  u32 sleep_ns;   // an idle CTA's pause between polls
};

__device__ __forceinline__ u32 vload(const u32 *p) { return *(volatile const u32 *)p; }
__device__ __forceinline__ u64 vload64(const u64 *p) { return *(volatile const u64 *)p; }

__device__ __forceinline__ u32 owner_tile(const u32 *s_start, u32 T, u32 g) {
  u32 lo = 0, hi = T; // largest t with s_start[t] <= g
  while (hi - lo > 1) {
    u32 mid = (lo + hi) >> 1;
    if (s_start[mid] <= g) lo = mid; else hi = mid;
  }
  return lo;
}

extern __shared__ u32 smem[];

__global__ void __launch_bounds__(1024) tile_bfs(Dev d) {
  const u32 t = blockIdx.x, T = d.T;
  const u32 base = d.tile_start[t], nv = d.tile_start[t + 1] - base;
  const u32 ebase = d.rowptr[base], ne = d.rowptr[base + nv] - ebase;
  u32 *s_start = smem;            // T+1
  u32 *s_row = s_start + T + 1;   // nv+1 (relative)
  u32 *s_lab = s_row + nv + 1;    // nv
  u32 *s_flag = s_lab + nv;       // nv: iteration stamp of the list a vertex is in
  u32 *s_cur = s_flag + nv;       // nv
  u32 *s_next = s_cur + nv;       // nv
  u32 *s_col = s_next + nv;       // ne
  __shared__ u32 s_ncur, s_nnext, s_head, s_tail, s_tokens, s_done;
  for (u32 i = threadIdx.x; i <= T; i += blockDim.x) s_start[i] = d.tile_start[i];
  for (u32 i = threadIdx.x; i <= nv; i += blockDim.x) s_row[i] = d.rowptr[base + i] - ebase;
  for (u32 i = threadIdx.x; i < nv; i += blockDim.x) { s_lab[i] = INF; s_flag[i] = 0; }
  for (u32 i = threadIdx.x; i < ne; i += blockDim.x) s_col[i] = d.cols[ebase + i];
  const bool mine = d.src >= base && d.src < base + nv;
  if (threadIdx.x == 0) {
    s_ncur = 0; s_nnext = 0; s_head = 0; s_tail = 0; s_done = 0;
    s_tokens = mine ? 1 : 0;
  }
  __syncthreads();
  if (mine && threadIdx.x == 0) { s_lab[d.src - base] = 0; s_cur[0] = d.src - base; s_ncur = 1; s_flag[d.src - base] = 1; }
  __syncthreads();
  u64 *inbox = d.inbox + (u64)t * d.inbox_cap;
  u32 iter = 1;
  u64 expansions = 0, messages = 0;
  while (true) {
    // Thread 0 issues the inbox poll now; its value is used after the level's work.
    u32 tail_seen = s_tail;
    if (threadIdx.x == 0 && iter % d.poll_every == 0) tail_seen = vload(d.tail + t);
    const u32 ncur = s_ncur;
    // Expand the current list.
    for (u32 k = threadIdx.x; k < ncur; k += blockDim.x) {
      const u32 v = s_cur[k];
      const u32 nl = s_lab[v] + 1;
      expansions++;
      for (u32 e = s_row[v], end = s_row[v + 1]; e < end; e++) {
        const u32 c = s_col[e];
        if (!(c & REMOTE)) {
          if (nl < s_lab[c] && atomicMin(&s_lab[c], nl) > nl &&
              atomicExch(&s_flag[c], iter + 1) != iter + 1)
            s_next[atomicAdd(&s_nnext, 1)] = c;
        } else {
          const u32 g = c & ~REMOTE;
          if (nl < vload(d.glab + g) && atomicMin(d.glab + g, nl) > nl) {
            // The token first, visible before the message is.
            atomicAdd(d.work, 1);
            __threadfence();
            const u32 o = owner_tile(s_start, T, g);
            const u32 slot = atomicAdd(d.tail + o, 1);
            if (slot < d.inbox_cap) {
              ((volatile u64 *)d.inbox)[(u64)o * d.inbox_cap + slot] = ((u64)nl << 32) | (g - s_start[o]);
            } else {
              // Lost: flag it and take the token back so that the run still ends.
              atomicExch(d.overflow, 1);
              atomicSub(d.work, 1);
            }
            messages++;
          }
        }
      }
    }
    if (threadIdx.x == 0) s_tail = min(tail_seen, d.inbox_cap);
    __syncthreads();
    // Take the inbox's new entries.
    u32 head = s_head, tl = s_tail;
    for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
      u64 x;
      do { x = vload64(inbox + k); } while (x == EMPTY);
      const u32 l = (u32)x, lab = (u32)(x >> 32);
      if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
          atomicExch(&s_flag[l], iter + 1) != iter + 1)
        s_next[atomicAdd(&s_nnext, 1)] = l;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      s_tokens += tl - head;
      s_head = tl;
      s_ncur = s_nnext;
      s_nnext = 0;
      if (s_ncur == 0) {
        // Out of work: give the tokens back, then wait for a message or the end.
        if (s_tokens) { atomicSub(d.work, s_tokens); s_tokens = 0; }
        while (true) {
          const u32 tnow = min(vload(d.tail + t), d.inbox_cap);
          if (tnow > s_head) { s_tail = tnow; break; }
          if (vload(d.work) == 0) { s_done = 1; break; }
          __nanosleep(d.sleep_ns);
        }
      }
    }
    __syncthreads();
    const bool done = s_done;
    const bool woken = s_ncur == 0;
    if (done) break;
    { u32 *x = s_cur; s_cur = s_next; s_next = x; }
    iter++;
    if (woken) {
      // Woken by a message: take it as the next level's list.
      __syncthreads(); // every thread has read s_ncur
      head = s_head; tl = s_tail;
      for (u32 k = head + threadIdx.x; k < tl; k += blockDim.x) {
        u64 x;
        do { x = vload64(inbox + k); } while (x == EMPTY);
        const u32 l = (u32)x, lab = (u32)(x >> 32);
        if (lab < s_lab[l] && atomicMin(&s_lab[l], lab) > lab &&
            atomicExch(&s_flag[l], iter) != iter)
          s_cur[atomicAdd(&s_ncur, 1)] = l;
      }
      __syncthreads();
      if (threadIdx.x == 0) { s_tokens += tl - head; s_head = tl; }
      __syncthreads();
    }
  }
  for (u32 i = threadIdx.x; i < nv; i += blockDim.x) d.glab[base + i] = s_lab[i];
  atomicAdd(&d.stats[0], expansions);
  atomicAdd(&d.stats[1], messages);
  if (threadIdx.x == 0) atomicMax(&d.stats[2], (u64)iter);
}

// ---------------------------------------------------------------- host
static void read_mtx(const char *path, u32 &n, std::vector<std::pair<u32, u32>> &edges) {
  FILE *f = fopen(path, "r");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  char line[1024];
  bool size_seen = false;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '%') continue;
    unsigned long a, b;
    if (!size_seen) { unsigned long r, c, nz; sscanf(line, "%lu %lu %lu", &r, &c, &nz); n = (u32)r; size_seen = true; continue; }
    if (sscanf(line, "%lu %lu", &a, &b) == 2 && a != b) edges.push_back({(u32)(a - 1), (u32)(b - 1)});
  }
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s GRAPH.mtx [source] [tile_vertices] [block] [repeats] [poll_every] [sleep_ns]\n", argv[0]); return 2; }
  const u32 src0 = argc > 2 ? atoi(argv[2]) : 0;
  const u32 tile_target = argc > 3 ? atoi(argv[3]) : 512;
  const u32 block = argc > 4 ? atoi(argv[4]) : 256;
  const int repeats = argc > 5 ? atoi(argv[5]) : 5;
  const u32 poll_every = argc > 6 ? atoi(argv[6]) : 1;
  const u32 sleep_ns = argc > 7 ? atoi(argv[7]) : 64;
  u32 n = 0;
  std::vector<std::pair<u32, u32>> edges;
  read_mtx(argv[1], n, edges);
  // Undirected CSR over the file's ids.
  std::vector<u32> deg(n + 1, 0);
  for (auto &e : edges) { deg[e.first]++; deg[e.second]++; }
  std::vector<u32> off(n + 1, 0);
  for (u32 v = 0; v < n; v++) off[v + 1] = off[v] + deg[v];
  std::vector<u32> adj(off[n]);
  { std::vector<u32> pos(off.begin(), off.end() - 1);
    for (auto &e : edges) { adj[pos[e.first]++] = e.second; adj[pos[e.second]++] = e.first; } }
  // Compact tiles: balls grown by BFS from a seed next to the previous ball.
  std::vector<u32> tile_of(n, INF), order;
  order.reserve(n);
  u32 T = 0;
  {
    std::vector<u32> ring;   // unassigned neighbours of earlier balls: the next seeds
    u32 next_id = 0;
    while (order.size() < n) {
      u32 count = 0;
      std::vector<u32> q;
      while (count < tile_target && order.size() < n) {
        u32 seed = INF;
        while (!ring.empty() && seed == INF) { u32 c = ring.back(); ring.pop_back(); if (tile_of[c] == INF) seed = c; }
        while (seed == INF) { if (tile_of[next_id] == INF) seed = next_id; next_id++; }
        q.assign(1, seed);
        tile_of[seed] = T; order.push_back(seed); count++;
        for (size_t h = 0; h < q.size() && count < tile_target; h++) {
          u32 v = q[h];
          for (u32 e = off[v]; e < off[v + 1] && count < tile_target; e++) {
            u32 w = adj[e];
            if (tile_of[w] == INF) { tile_of[w] = T; order.push_back(w); q.push_back(w); count++; }
          }
        }
        for (u32 v : q) for (u32 e = off[v]; e < off[v + 1]; e++) if (tile_of[adj[e]] == INF) ring.push_back(adj[e]);
      }
      T++;
    }
  }
  std::vector<u32> new_of(n);
  for (u32 i = 0; i < n; i++) new_of[order[i]] = i;
  std::vector<u32> tile_start(T + 1, 0);
  for (u32 v = 0; v < n; v++) tile_start[tile_of[v] + 1]++;
  for (u32 t = 0; t < T; t++) tile_start[t + 1] += tile_start[t];
  std::vector<u32> rowptr(n + 1, 0), cols(off[n]);
  u64 remote_arcs = 0;
  u32 max_nv = 0, max_ne = 0;
  for (u32 i = 0; i < n; i++) rowptr[i + 1] = rowptr[i] + deg[order[i]];
  for (u32 i = 0; i < n; i++) {
    u32 v = order[i], t = tile_of[v];
    u32 k = rowptr[i];
    for (u32 e = off[v]; e < off[v + 1]; e++) {
      u32 w = new_of[adj[e]];
      if (tile_of[adj[e]] == t) cols[k++] = w - tile_start[t];
      else { cols[k++] = REMOTE | w; remote_arcs++; }
    }
  }
  std::vector<u32> in_remote(T, 0);
  for (u32 i = 0; i < n; i++) for (u32 e = rowptr[i]; e < rowptr[i + 1]; e++) if (cols[e] & REMOTE) {
    u32 w = cols[e] & ~REMOTE; in_remote[tile_of[order[w]]]++; }
  u32 max_in = 0;
  for (u32 t = 0; t < T; t++) {
    max_nv = std::max(max_nv, tile_start[t + 1] - tile_start[t]);
    max_ne = std::max(max_ne, rowptr[tile_start[t + 1]] - rowptr[tile_start[t]]);
    max_in = std::max(max_in, in_remote[t]);
  }
  const u32 inbox_cap = max_in * 16 + 1024;
  const size_t shmem = sizeof(u32) * ((T + 1) + (max_nv + 1) + 4 * max_nv + max_ne);
  // Reference BFS.
  const u32 src = src0;
  std::vector<u32> ref(n, INF);
  { std::vector<u32> q{src}; ref[src] = 0;
    for (size_t h = 0; h < q.size(); h++) { u32 v = q[h]; for (u32 e = off[v]; e < off[v + 1]; e++) if (ref[adj[e]] == INF) { ref[adj[e]] = ref[v] + 1; q.push_back(adj[e]); } } }
  u32 depth = 0; for (u32 x : ref) if (x != INF) depth = std::max(depth, x);
  printf("graph %s: n %u, arcs %u, depth %u from %u | tiles %u (target %u, max %u vertices, %u arcs), remote arcs %llu (%.1f %%), shared %zu B, block %u\n",
         argv[1], n, off[n], depth, src, T, tile_target, max_nv, max_ne, remote_arcs, 100.0 * remote_arcs / off[n], shmem, block);
  fflush(stdout);
  int dev = 0, sms = 0, occ = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaFuncSetAttribute(tile_bfs, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tile_bfs, block, shmem));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, dev));
  printf("device %s: resident %d x %d = %d CTAs\n", prop.name, occ, sms, occ * sms);
  if ((u64)occ * sms < T) { printf("FAIL: %u tiles do not fit the %d resident CTAs\n", T, occ * sms); return 1; }
  u32 *d_start, *d_row, *d_cols, *d_glab, *d_tail, *d_work, *d_over; u64 *d_inbox, *d_stats;
  CK(cudaMalloc(&d_start, 4 * (T + 1))); CK(cudaMalloc(&d_row, 4 * (n + 1))); CK(cudaMalloc(&d_cols, 4ull * off[n]));
  CK(cudaMalloc(&d_glab, 4ull * n)); CK(cudaMalloc(&d_tail, 4 * T)); CK(cudaMalloc(&d_work, 4)); CK(cudaMalloc(&d_over, 4));
  CK(cudaMalloc(&d_inbox, 8ull * T * inbox_cap)); CK(cudaMalloc(&d_stats, 8 * 3));
  CK(cudaMemcpy(d_start, tile_start.data(), 4 * (T + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_row, rowptr.data(), 4 * (n + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_cols, cols.data(), 4ull * off[n], cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const u32 src_new = new_of[src];
  int failures = 0;
  for (int r = 0; r < repeats; r++) {
    auto h0 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(e0));
    CK(cudaMemsetAsync(d_glab, 0xff, 4ull * n));
    CK(cudaMemsetAsync(d_inbox, 0xff, 8ull * T * inbox_cap));
    CK(cudaMemsetAsync(d_tail, 0, 4 * T));
    CK(cudaMemsetAsync(d_over, 0, 4));
    CK(cudaMemsetAsync(d_stats, 0, 24));
    u32 one = 1; CK(cudaMemcpyAsync(d_work, &one, 4, cudaMemcpyHostToDevice));
    cudaEvent_t ek; CK(cudaEventCreate(&ek)); CK(cudaEventRecord(ek));
    Dev d{d_start, d_row, d_cols, d_glab, d_inbox, d_tail, d_work, d_over, d_stats, T, inbox_cap, src_new, poll_every, sleep_ns};
    tile_bfs<<<T, block, shmem>>>(d);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    auto h1 = std::chrono::steady_clock::now();
    float all_ms = 0, kern_ms = 0;
    CK(cudaEventElapsedTime(&all_ms, e0, e1)); CK(cudaEventElapsedTime(&kern_ms, ek, e1));
    std::vector<u32> lab(n); u64 st[3]; u32 over;
    CK(cudaMemcpy(lab.data(), d_glab, 4ull * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(st, d_stats, 24, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&over, d_over, 4, cudaMemcpyDeviceToHost));
    u32 wrong = 0;
    for (u32 v = 0; v < n; v++) if (lab[new_of[v]] != ref[v]) wrong++;
    if (wrong || over) failures++;
    printf("run %d: kernel %.3f ms (with resets %.3f, host %.3f) | %s (%u wrong%s) | expansions %llu (%.3f of reached), messages %llu, max iterations of a CTA %llu\n",
           r, kern_ms, all_ms, std::chrono::duration<double, std::milli>(h1 - h0).count(), wrong || over ? "FAIL" : "valid", wrong, over ? ", inbox overflow" : "",
           st[0], (double)st[0] / n, st[1], st[2]);
    CK(cudaEventDestroy(ek));
  }
  return failures ? 1 : 0;
}
