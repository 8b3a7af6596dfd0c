# switchyard recipes. The README's two set-up commands are `just run` and `just test`.

# Run the main job (DGX-1 sweep, validated, plot in reports/latest/)
run:
    cargo run --release

# Run the tests (CI runs fmt and clippy first: see .ci/run)
test:
    cargo nextest run --workspace --no-fail-fast

# Run the benchmarks; each writes JSON under reports/bench/
bench:
    cargo bench -p switchyard-sim --bench engine
    cargo bench --bench bsp_sim
    cargo bench --bench graph_load
    cargo bench --bench generate

# A scaling sweep on a generated graph over several machines
sweep graph="rmat:scale=18,ef=16" algos="bfs,pr":
    cargo run --release -- sweep --generate {{graph}} --algos {{algos}} --topologies dgx1-v100,m60x8-pcie,dgx-h100x8 --out reports/sweep

# One validated run with its report and trace in reports/latest/
report algo="bfs" gpus="4":
    mkdir -p reports/latest
    cargo run --release -- run --generate rmat:scale=16,ef=16 --algo {{algo}} --gpus {{gpus}} --report reports/latest/run.json --trace reports/latest/trace.json

# The GPU tests (kernel conformance against the Rust contracts, NVRTC compilation, the
# no-driver message, every runtime x algorithm on logical GPUs) and validated runs on real
# GPUs; on a machine without a GPU the
# GPU halves skip with a message. The full benchmark: scripts/gpu_bench.sh (see its header).
gpu:
    cargo test --release --test cuda_conformance -- --nocapture
    cargo test --release --lib backend::cuda -- --nocapture
    SWITCHYARD_MATRIX_BACKENDS=cuda cargo test --release --test runtime_matrix -- --test-threads 1
    cargo run --release -- run --backend cuda --generate rmat:scale=18,ef=16 --algo bfs
    cargo run --release -- run --backend cuda --logical-gpus --gpus 4 --runtime groute --generate rmat:scale=18,ef=16 --algo sssp --weights

# Every Groute application under 200 seeds of jittered latencies and message order
groute-seeds seeds="200":
    GROUTE_SEEDS={{seeds}} cargo nextest run --release --test groute_worklist --test groute_filter_cc jitter

# Swarm testing: per seed a whole configuration drawn, run and validated, on every core;
# failures print their reproduction and are appended to the regression file
swarm seeds="0..1000" runtime="":
    cargo run --release -- swarm --seeds {{seeds}} {{ if runtime != "" { "--runtime " + runtime } else { "" } }} --out reports/swarm.json --record tests/data/swarm-regressions.txt
