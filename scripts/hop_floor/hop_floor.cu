// Latency floor of a BFS hop on this GPU: one thread, dependent accesses, data in L2.
// Build and run on a GPU machine: nvcc -O3 -arch=sm_90 hop_floor.cu -o hop_floor && ./hop_floor
// (reports/atos.md, "What a BFS hop costs on an H200").
#include <cstdio>
#include <cstdint>
#include <vector>
#include <random>
#include <algorithm>
typedef unsigned long long u64;
typedef unsigned int u32;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

__global__ void chase_ld(const u32 *next, u32 hops, u64 *out) {
  u32 i = 0; u64 t0 = gt();
  for (u32 h = 0; h < hops; h++) i = __ldcg(next + i);
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = i;
}
__global__ void chase_ldca(const u32 *next, u32 hops, u64 *out) {
  u32 i = 0; u64 t0 = gt();
  for (u32 h = 0; h < hops; h++) i = next[i];
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = i;
}
__global__ void chase_atom(u32 *next, u32 hops, u64 *out) {
  u32 i = 0; u64 t0 = gt();
  for (u32 h = 0; h < hops; h++) i = atomicMin(next + i, 0xffffffffu);
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = i;
}
__global__ void chase_shared_cas(u32 hops, u64 *out) {
  __shared__ u32 s[1024];
  for (int k = 0; k < 1024; k++) s[k] = (k * 97 + 13) & 1023;
  u32 i = 0; u64 t0 = gt();
  for (u32 h = 0; h < hops; h++) i = atomicCAS(s + i, 0xfffffffeu, 0u);
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = i;
}
// A BFS along a path graph (CSR): offsets -> targets -> atomicMin on the level.
__global__ void bfs_path_atom(const u64 *off, const u32 *tg, u32 *val, u32 n, u64 *out) {
  u32 v = 0, lvl = 0; u64 t0 = gt(); u32 hops = 0;
  val[0] = 0;
  while (true) {
    u64 b = off[v], e = off[v + 1];
    u32 nxt = 0xffffffffu;
    for (u64 k = b; k < e; k++) {
      u32 t = tg[k];
      u32 old = atomicMin(val + t, lvl + 1);
      if (lvl + 1 < old) nxt = t;
    }
    if (nxt == 0xffffffffu) break;
    v = nxt; lvl++; hops++;
  }
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = hops;
}
// Same, with the bounds loaded beside the atomic (the chain's two round trips).
__global__ void bfs_path_atom2(const u64 *off, const u32 *tg, u32 *val, u32 n, u64 *out) {
  u32 v = 0, lvl = 0; u64 t0 = gt(); u32 hops = 0;
  val[0] = 0;
  u64 b = off[0], e = off[1];
  while (true) {
    u32 nxt = 0xffffffffu; u64 nb = 0, ne = 0;
    u32 t0_ = b < e ? __ldcg(tg + b) : 0, t1_ = b + 1 < e ? __ldcg(tg + b + 1) : 0;
    if (b < e) { u32 old = atomicMin(val + t0_, lvl + 1); u64 x = off[t0_], y = off[t0_ + 1]; if (lvl + 1 < old) { nxt = t0_; nb = x; ne = y; } }
    if (b + 1 < e) { u32 old = atomicMin(val + t1_, lvl + 1); u64 x = off[t1_], y = off[t1_ + 1]; if (lvl + 1 < old) { nxt = t1_; nb = x; ne = y; } }
    if (nxt == 0xffffffffu) break;
    v = nxt; b = nb; e = ne; lvl++; hops++;
  }
  u64 t1 = gt(); out[0] = (t1 - t0); out[1] = hops;
}
#define CK(x) do { cudaError_t r = (x); if (r != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(r)); return 1; } } while (0)
int main() {
  const u32 N = 1 << 18, HOPS = 20000;
  std::vector<u32> perm(N); for (u32 i = 0; i < N; i++) perm[i] = i;
  std::mt19937 rng(1); std::shuffle(perm.begin() + 1, perm.end(), rng);
  std::vector<u32> next(N); for (u32 i = 0; i < N; i++) next[perm[i]] = perm[(i + 1) % N];
  u32 *dn; u64 *dout; CK(cudaMalloc(&dn, N * 4)); CK(cudaMalloc(&dout, 16));
  CK(cudaMemcpy(dn, next.data(), N * 4, cudaMemcpyHostToDevice));
  u64 o[2];
  auto report = [&](const char *name, u32 hops) { cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost); printf("%-28s %8.1f ns/hop\n", name, (double)o[0] / hops); };
  for (int rep = 0; rep < 2; rep++) {
    chase_ld<<<1, 1>>>(dn, HOPS, dout); CK(cudaDeviceSynchronize()); report("chase ld.cg (L2)", HOPS);
    chase_ldca<<<1, 1>>>(dn, HOPS, dout); CK(cudaDeviceSynchronize()); report("chase ld (L1 allowed)", HOPS);
    chase_atom<<<1, 1>>>(dn, HOPS, dout); CK(cudaDeviceSynchronize()); report("chase atomicMin (L2)", HOPS);
    chase_shared_cas<<<1, 1>>>(HOPS, dout); CK(cudaDeviceSynchronize()); report("chase shared CAS", HOPS);
  }
  // Path graph of P vertices, ids shuffled (as a real graph's would be), undirected CSR.
  const u32 P = 2000;
  std::vector<u32> id(P); for (u32 i = 0; i < P; i++) id[i] = i; std::shuffle(id.begin() + 1, id.end(), rng);
  std::vector<std::vector<u32>> adj(P);
  for (u32 i = 0; i + 1 < P; i++) { adj[id[i]].push_back(id[i + 1]); adj[id[i + 1]].push_back(id[i]); }
  std::vector<u64> off(P + 1, 0); std::vector<u32> tg;
  for (u32 v = 0; v < P; v++) { off[v] = tg.size(); for (u32 t : adj[v]) tg.push_back(t); } off[P] = tg.size();
  u64 *doff; u32 *dtg, *dval; CK(cudaMalloc(&doff, (P + 1) * 8)); CK(cudaMalloc(&dtg, tg.size() * 4)); CK(cudaMalloc(&dval, P * 4));
  CK(cudaMemcpy(doff, off.data(), (P + 1) * 8, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dtg, tg.data(), tg.size() * 4, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; rep++) {
    CK(cudaMemset(dval, 0xff, P * 4));
    bfs_path_atom<<<1, 1>>>(doff, dtg, dval, P, dout); CK(cudaDeviceSynchronize()); cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost);
    printf("bfs path, 1 thread, atomicMin %8.1f ns/hop (%llu hops)\n", (double)o[0] / o[1], o[1]);
    CK(cudaMemset(dval, 0xff, P * 4));
    bfs_path_atom2<<<1, 1>>>(doff, dtg, dval, P, dout); CK(cudaDeviceSynchronize()); cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost);
    printf("bfs path, bounds beside atom  %8.1f ns/hop (%llu hops)\n", (double)o[0] / o[1], o[1]);
  }
  return 0;
}
