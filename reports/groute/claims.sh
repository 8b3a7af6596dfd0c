#!/usr/bin/env bash
# Reproduces the sweeps behind reports/groute.md (claims 1, 4 and 5 of the Groute issue) on
# the simulator. Usage: bash reports/groute/claims.sh [path/to/switchyard]
# Each sweep writes sweep.csv, sweep.json, scaling.svg and scaling.png under reports/groute/.
set -euo pipefail
bin=${1:-target/release/switchyard}
out=reports/groute
road="rgg:n=200000,degree=3,seed=1"
sweep() { local name=$1; shift; echo "== $name"; "$bin" sweep "$@" --out "$out/$name" | tail -n +1; }

# Claim 1: soft priority and SSSP work items on a road-like graph, M60 tree.
for part in random metis; do
  sweep "c1-sssp-$part" --generate "$road" --weights --algos sssp --runtimes groute \
    --topologies m60x8-pcie --gpus 1,2,4,8 --partitioner "$part"
  sweep "c1-sssp-$part-prio" --generate "$road" --weights --algos sssp --runtimes groute \
    --topologies m60x8-pcie --gpus 1,2,4,8 --partitioner "$part" --priority-delta 512
done

# Claim 4: Groute vs bulk-synchronous BFS and SSSP on a road graph, M60 tree, METIS.
sweep c4-luxembourg --graph tests/data/graphs/luxembourg_osm.mtx --weights --algos bfs,sssp \
  --runtimes bsp,groute --topologies m60x8-pcie --partitioner metis
sweep c4-luxembourg-fused --graph tests/data/graphs/luxembourg_osm.mtx --weights --algos bfs,sssp \
  --runtimes groute --topologies m60x8-pcie --partitioner metis --fused

# Claim 5: DGX-1, ring order and odd GPU counts, on a scale-free graph.
for ring in index widest; do
  sweep "c5-dgx1-$ring" --generate rmat:scale=16,ef=16,seed=1 --weights \
    --algos bfs,sssp,pr-residual --runtimes groute --topologies dgx1-v100 --ring "$ring"
done
sweep c5-dgx1-bsp --generate rmat:scale=16,ef=16,seed=1 --weights \
  --algos bfs,sssp,pr-residual --runtimes bsp --topologies dgx1-v100
for ring in index widest; do
  sweep "c5-dgx1-$ring-metis" --generate rmat:scale=16,ef=16,seed=1 --weights --algos bfs,sssp \
    --runtimes groute --topologies dgx1-v100 --ring "$ring" --partitioner metis
  sweep "c5-dgx1-$ring-rmat19" --generate rmat:scale=19,ef=16,seed=1 --algos bfs \
    --runtimes groute --topologies dgx1-v100 --gpus 1,2,3,4,5,8 --ring "$ring"
done
sweep c5-dgx1-bsp-rmat19 --generate rmat:scale=19,ef=16,seed=1 --algos bfs --runtimes bsp \
  --topologies dgx1-v100 --gpus 1,2,3,4,5,8

# Figures
plot() { "$bin" plot "$@"; }
plot --sweeps "$out/c1-sssp-random/sweep.json,$out/c1-sssp-random-prio/sweep.json" --metric work-items \
  --title "Claim 1: SSSP work items, road-like RGG 200K, M60, random partition" --out "$out/claim1-work-random.svg"
plot --sweeps "$out/c1-sssp-metis/sweep.json,$out/c1-sssp-metis-prio/sweep.json" --metric work-items \
  --title "Claim 1: SSSP work items, road-like RGG 200K, M60, METIS" --out "$out/claim1-work-metis.svg"
for a in bfs sssp; do
  plot --sweeps "$out/c4-luxembourg/sweep.json,$out/c4-luxembourg-fused/sweep.json" --algo "$a" --metric time \
    --title "Claim 4: $a on luxembourg_osm, M60 tree, METIS" --out "$out/claim4-$a-time.svg"
done
for a in bfs sssp pr-residual; do
  plot --sweeps "$out/c5-dgx1-index/sweep.json,$out/c5-dgx1-widest/sweep.json,$out/c5-dgx1-bsp/sweep.json" \
    --algo "$a" --metric time --title "Claim 5: $a on R-MAT 16, DGX-1, random partition" --out "$out/claim5-$a-time.svg"
done
