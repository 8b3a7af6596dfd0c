//! The shapes `reports/atos.md` reproduces, one test each, on graphs small enough for
//! seconds in a debug build (the report runs the same configurations larger:
//! `cargo run --release --example atos_shapes`). Every run is validated.
//!
//! - seed 004 Table 4: on one V100 32 GB, persistent warp workers do more BFS extra work
//!   than persistent CTA workers (512 threads, FETCH_SIZE 8) on a scale-free graph;
//! - seed 004 Table 4 / sec. 6.3: randomly permuted vertex ids cut colouring extra work,
//!   below 1.5;
//! - seed 003 Table III: on the 4-GPU DGX Station, the priority queue cuts BFS extra work
//!   on a scale-free graph (CTA workers of 512 threads, FETCH_SIZE 32) by more than half;
//! - seed 004 Table 1: on one V100, persistent CTA workers run BFS on a road-like graph at
//!   least 5 times faster than the bulk-synchronous runtime with every superstep launched
//!   from the host, as the paper's baseline (virtual time); its other
//!   shape (discrete kernels at least as fast as persistent ones on residual PageRank) is
//!   not reached at the report's scale and not asserted;
//! - seed 003 Table II: on the 4-GPU DGX Station, Atos (persistent CTA workers, remote
//!   updates through the aggregator) runs BFS on a road-like graph faster than the
//!   bulk-synchronous runtime and Groute.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::report::RunReport;
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::runtime::atos::tiles::TileMode;
use switchyard::runtime::atos::{AtosOptions, Comm, KernelStrategy, WorkerWidth};
use switchyard::runtime::bsp::BspOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

fn graph(spec: &str) -> Csr {
    generate(&GeneratorSpec::parse(spec).expect("spec")).expect("generates")
}

fn hub(g: &Csr) -> u32 {
    (0..g.num_vertices()).max_by_key(|&v| g.degree(v)).unwrap_or(0)
}

/// The DGX Station of seed 003 (4 x V100 32 GB); its first GPU is seed 004's one V100.
fn station() -> BackendSetup {
    let topology = Topology::bundled("dgx-station-v100x4").expect("bundled");
    BackendSetup::Sim(SimSetup { topology, fidelity: Fidelity::Flow, trace: false, jitter_ps: 0 })
}

/// Workers of `worker` width; CTA workers (512 threads) fetch `fetch` items.
fn atos(worker: WorkerWidth, kernel: KernelStrategy, fetch: u32) -> AtosOptions {
    AtosOptions {
        worker,
        kernel,
        fetch_size: if worker == WorkerWidth::Cta { fetch } else { 1 },
        // The papers' workers, not the on-chip tiles.
        tiles: TileMode::Off,
        ..AtosOptions::default()
    }
}

/// Mean Atos extra work over seeds 1..=3, every run validated.
fn extra(g: &Csr, name: &str, algorithm: Algorithm, gpus: u32, source: u32, o: AtosOptions) -> f64 {
    let reports = runs(g, name, RuntimeKind::Atos, algorithm, gpus, source, o);
    let sum: f64 = reports.iter().map(|r| r.atos.as_ref().expect("atos report").extra_work).sum();
    sum / reports.len() as f64
}

/// Mean virtual time in milliseconds over seeds 1..=3, every run validated.
fn time_ms(
    g: &Csr,
    name: &str,
    runtime: RuntimeKind,
    algorithm: Algorithm,
    gpus: u32,
    source: u32,
    o: AtosOptions,
) -> f64 {
    let reports = runs(g, name, runtime, algorithm, gpus, source, o);
    let sum_ps: u64 = reports.iter().map(|r| r.time_ps).sum();
    sum_ps as f64 / reports.len() as f64 / 1e9
}

/// The validated reports of seeds 1..=3 (`o` is used by Atos runs only).
fn runs(
    g: &Csr,
    name: &str,
    runtime: RuntimeKind,
    algorithm: Algorithm,
    gpus: u32,
    source: u32,
    o: AtosOptions,
) -> Vec<RunReport> {
    let setup = station();
    let mut reports = Vec::new();
    for seed in 1..=3u64 {
        let spec = RunSpec {
            params: AlgorithmParams { source, ..AlgorithmParams::default() },
            seed,
            atos: o,
            // The papers' bulk-synchronous baseline (Gunrock) launches every superstep from
            // the host: BSP's one-GPU device loop is not what they measured.
            bsp: BspOptions { loop_frontier: 0, ..BspOptions::default() },
            command_line: vec!["atos_paper_shapes".into()],
            ..RunSpec::new(algorithm, runtime, gpus)
        };
        let case = format!(
            "{name} (reproduce: switchyard run --generate {name} --topology dgx-station-v100x4 \
             --partitioner random --runtime {} --algo {} --gpus {gpus} --source {source} \
             --seed {seed} {})",
            runtime.name(),
            algorithm.name(),
            if runtime == RuntimeKind::Atos {
                o.cli_args().iter().map(|(f, v)| format!("{f} {v}")).collect::<Vec<_>>().join(" ")
            } else {
                String::new()
            }
        );
        let out = run(g, name, &spec, &setup).unwrap_or_else(|e| panic!("{case}: {e}"));
        let v = out.report.validation.as_ref().expect("validated");
        assert!(v.is_ok(), "{case}: {v}");
        reports.push(out.report);
    }
    reports
}

#[test]
fn warp_workers_do_more_bfs_extra_work_than_cta_workers_on_one_v100() {
    let name = "rmat:scale=11,ef=16,seed=3";
    let g = graph(name);
    let s = hub(&g);
    let warp = extra(
        &g,
        name,
        Algorithm::Bfs,
        1,
        s,
        atos(WorkerWidth::Warp, KernelStrategy::Persistent, 1),
    );
    let cta = extra(
        &g,
        name,
        Algorithm::Bfs,
        1,
        s,
        atos(WorkerWidth::Cta, KernelStrategy::Persistent, 8),
    );
    assert!(warp > cta, "persistent warp {warp:.3} vs persistent CTA {cta:.3}");
    assert!(cta < 1.2, "CTA workers stay near the ideal (paper: 1.00-1.19): {cta:.3}");
}

#[test]
fn permuting_vertex_ids_cuts_colouring_extra_work_below_one_and_a_half() {
    // A grid numbered row by row: consecutive ids (popped together) are neighbours.
    let name = "grid2d:w=150,h=150,drop=0.1,seed=2";
    let g = graph(name);
    for kernel in [KernelStrategy::Persistent, KernelStrategy::Discrete] {
        let plain = atos(WorkerWidth::Warp, kernel, 1);
        let permuted = AtosOptions { permute_ids: true, ..plain };
        let a = extra(&g, name, Algorithm::Color, 1, 0, plain);
        let b = extra(&g, name, Algorithm::Color, 1, 0, permuted);
        assert!(b < a, "{kernel:?} warp: permuted {b:.3} vs as generated {a:.3}");
        assert!(b < 1.5, "{kernel:?} warp: permuted ids (paper: < 1.5): {b:.3}");
    }
}

#[test]
fn the_priority_queue_cuts_bfs_extra_work_on_a_scale_free_graph_at_four_gpus() {
    let name = "rmat:scale=12,ef=8,seed=3";
    let g = graph(name);
    let s = hub(&g);
    let plain = atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32);
    let prio = AtosOptions { priority: Some((0, 1)), ..plain };
    let a = extra(&g, name, Algorithm::Bfs, 4, s, plain);
    let b = extra(&g, name, Algorithm::Bfs, 4, s, prio);
    assert!(a > 1.01, "without priority there is extra work to cut: {a:.3}");
    assert!(b - 1.0 < (a - 1.0) / 2.0, "priority queue {b:.3} vs none {a:.3}: less than half");
}

/// The centre of a `side`-square grid numbered row by row.
fn centre(side: u32) -> u32 {
    (side / 2) * side + side / 2
}

#[test]
fn persistent_cta_bfs_is_at_least_five_times_faster_than_bsp_on_a_road_like_graph() {
    let name = "grid2d:w=64,h=64,drop=0.1,seed=2";
    let g = graph(name);
    let s = centre(64);
    let o = atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32);
    let bsp = time_ms(&g, name, RuntimeKind::Bsp, Algorithm::Bfs, 1, s, o);
    let persistent = time_ms(&g, name, RuntimeKind::Atos, Algorithm::Bfs, 1, s, o);
    assert!(
        bsp >= 5.0 * persistent,
        "BSP {bsp:.3} ms vs persistent CTA {persistent:.3} ms (paper: 12.8x on road_usa)"
    );
}

#[test]
fn aggregated_atos_bfs_beats_bsp_and_groute_on_a_road_like_graph_at_four_gpus() {
    // Through the aggregator only: with direct remote updates Atos wins on 64 x 64 and
    // 128 x 128 grids but loses to BSP on 256 x 256 (reports/atos.md), so that is not
    // asserted.
    let name = "grid2d:w=64,h=64,drop=0.1,seed=2";
    let g = graph(name);
    let s = centre(64);
    let direct = atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32);
    let aggregated = AtosOptions { comm: Comm::EAGER, ..direct };
    let bsp = time_ms(&g, name, RuntimeKind::Bsp, Algorithm::Bfs, 4, s, direct);
    let groute = time_ms(&g, name, RuntimeKind::Groute, Algorithm::Bfs, 4, s, direct);
    let atos_ms = time_ms(&g, name, RuntimeKind::Atos, Algorithm::Bfs, 4, s, aggregated);
    assert!(atos_ms < bsp, "Atos aggregated {atos_ms:.3} ms vs BSP {bsp:.3} ms");
    assert!(atos_ms < groute, "Atos aggregated {atos_ms:.3} ms vs Groute {groute:.3} ms");
}
