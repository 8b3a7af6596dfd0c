#!/usr/bin/env bash
# Regenerates reports/whatif/ (every figure and numbers.md of reports/whatif.md) on the
# simulator: builds the release binary and runs `switchyard whatif`. Needs no GPU.
#
#   scripts/whatif.sh            # R-MAT scale 14 (2^14 vertices per graph; the large
#                                # DGX-1 study 2^17); about 20 min on 2 busy cores
#   SCALE=12 scripts/whatif.sh   # smaller and faster
#   ONLY=summit,winners scripts/whatif.sh
#
# After the simulator's cost model changes (calibration), rerun it and reread the paragraphs
# of reports/whatif.md against the new numbers.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${SCALE:-14}"
cargo build --release --locked --bin switchyard
args=(whatif --scale "$SCALE" --out reports/whatif)
if [[ -n "${ONLY:-}" ]]; then args+=(--only "$ONLY"); fi
# A bound on memory, so that a run that blows up stops with an error instead of the OOM
# killer picking a process (Atos's residual PageRank grew past 20 GB at scale 14).
ulimit -v 8000000
time ./target/release/switchyard "${args[@]}"
