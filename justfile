# switchyard recipes

# Run the main job
run:
    cargo run --release

# Run the tests
test:
    cargo nextest run --workspace --no-fail-fast
