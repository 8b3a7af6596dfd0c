// Bisecting a BFS hop: the bare single-thread hop, then the pieces a worker CTA adds.
// Build and run on a GPU machine: nvcc -O3 -arch=sm_90 hop_bisect.cu -o hop_bisect && ./hop_bisect
// (reports/atos.md, "What a BFS hop costs on an H200").
#include <cstdio>
#include <vector>
#include <random>
#include <algorithm>
typedef unsigned long long u64;
typedef unsigned int u32;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
struct G { const u64 *off; const u32 *tg; u32 *val; };
__device__ __forceinline__ u32 hop(const G &g, u32 v, u32 lvl) {
  u64 b = g.off[v], e = g.off[v + 1];
  u32 nxt = 0xffffffffu;
  for (u64 k = b; k < e; k++) { u32 t = g.tg[k]; u32 old = atomicMin(g.val + t, lvl + 1); if (lvl + 1 < old) nxt = t; }
  return nxt;
}
// mode 0: thread 0 alone hops; the others exit.  1: the others spin on a shared flag with
// nanosleep(32).  2: every hop is 4 block barriers (thread 0 hops, broadcasts).  3: as 2 plus
// a block-wide scan and a __syncthreads_or each hop.  4: the graph pointers read from a
// shared struct each hop (thread 0 alone).  5: as 2 with __threadfence() each hop.
__global__ void walk(G g0, int mode, u64 *out) {
  __shared__ G sg;
  __shared__ volatile int s_done;
  __shared__ u32 s_v, s_lvl, s_warp[32];
  if (threadIdx.x == 0) { sg = g0; s_done = 0; s_v = 0; s_lvl = 0; g0.val[0] = 0; }
  __syncthreads();
  u64 t0 = gt(); u32 hops = 0;
  if (mode == 0 || mode == 4 || mode == 1) {
    if (threadIdx.x == 0) {
      u32 v = 0, lvl = 0;
      while (true) { u32 n = mode == 4 ? hop(sg, v, lvl) : hop(g0, v, lvl); if (n == 0xffffffffu) break; v = n; lvl++; hops++; }
      s_done = 1;
    } else if (mode == 1) {
      while (!s_done) __nanosleep(32);
    }
  } else {
    while (true) {
      __syncthreads();
      u32 v = s_v, lvl = s_lvl;
      __syncthreads();
      u32 n = 0;
      if (threadIdx.x == 0) { n = hop(g0, v, lvl); if (mode == 5) __threadfence(); }
      if (mode == 3) {
        u32 x = threadIdx.x == 0 ? 1 : 0;
        for (int o = 1; o < 32; o <<= 1) { u32 y = __shfl_up_sync(0xffffffffu, x, o); if ((threadIdx.x & 31) >= o) x += y; }
        if ((threadIdx.x & 31) == 31) s_warp[threadIdx.x >> 5] = x;
        __syncthreads();
        if (threadIdx.x < 32) { u32 w = threadIdx.x < blockDim.x / 32 ? s_warp[threadIdx.x] : 0; for (int o = 1; o < 32; o <<= 1) { u32 y = __shfl_up_sync(0xffffffffu, w, o); if (threadIdx.x >= o) w += y; } s_warp[threadIdx.x] = w; }
        __syncthreads();
        if (!__syncthreads_or(threadIdx.x == 0 && n != 0xffffffffu)) {}
      }
      if (threadIdx.x == 0) { s_v = n; s_lvl = lvl + 1; }
      __syncthreads();
      if (s_v == 0xffffffffu) break;
      hops++;
      __syncthreads();
    }
  }
  u64 t1 = gt();
  if (threadIdx.x == 0) { out[0] = t1 - t0; out[1] = hops; }
}
#define CK(x) do { cudaError_t r = (x); if (r != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(r)); return 1; } } while (0)
int main() {
  const u32 P = 2000;
  std::mt19937 rng(1);
  std::vector<u32> id(P); for (u32 i = 0; i < P; i++) id[i] = i; std::shuffle(id.begin() + 1, id.end(), rng);
  std::vector<std::vector<u32>> adj(P);
  for (u32 i = 0; i + 1 < P; i++) { adj[id[i]].push_back(id[i + 1]); adj[id[i + 1]].push_back(id[i]); }
  std::vector<u64> off(P + 1, 0); std::vector<u32> tg;
  for (u32 v = 0; v < P; v++) { off[v] = tg.size(); for (u32 t : adj[v]) tg.push_back(t); } off[P] = tg.size();
  G g; u64 *dout;
  CK(cudaMalloc((void **)&g.off, (P + 1) * 8)); CK(cudaMalloc((void **)&g.tg, tg.size() * 4)); CK(cudaMalloc((void **)&g.val, P * 4)); CK(cudaMalloc(&dout, 16));
  CK(cudaMemcpy((void *)g.off, off.data(), (P + 1) * 8, cudaMemcpyHostToDevice)); CK(cudaMemcpy((void *)g.tg, tg.data(), tg.size() * 4, cudaMemcpyHostToDevice));
  const char *names[] = {"bare, 1 thread", "512 threads, 511 spinning", "512 threads, 4 barriers per hop", "barriers + block scan + sync_or", "pointers from shared struct", "4 barriers + __threadfence"};
  int widths[] = {1, 512, 512, 512, 1, 512};
  for (int rep = 0; rep < 2; rep++)
    for (int m = 0; m < 6; m++) {
      CK(cudaMemset(g.val, 0xff, P * 4));
      walk<<<1, widths[m]>>>(g, m, dout); CK(cudaDeviceSynchronize());
      u64 o[2]; cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost);
      printf("%-36s %7.1f ns/hop (%llu hops)\n", names[m], (double)o[0] / (o[1] ? o[1] : 1), o[1]);
    }
  for (int m = 2; m < 4; m++) {
    CK(cudaMemset(g.val, 0xff, P * 4));
    walk<<<1, 1024>>>(g, m, dout); CK(cudaDeviceSynchronize());
    u64 o[2]; cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost);
    printf("1024 threads: %-22s %7.1f ns/hop\n", names[m], (double)o[0] / (o[1] ? o[1] : 1));
  }
  return 0;
}
