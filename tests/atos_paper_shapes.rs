//! The shapes `reports/atos.md` reproduces, one test each, on graphs small enough for
//! seconds in a debug build (the report runs the same configurations larger:
//! `cargo run --release --example atos_shapes`). Every run is validated.
//!
//! - seed 004 Table 4: on one V100 32 GB, persistent warp workers do more BFS extra work
//!   than persistent CTA workers (512 threads, FETCH_SIZE 8) on a scale-free graph;
//! - seed 004 Table 4 / sec. 6.3: randomly permuted vertex ids cut colouring extra work,
//!   below 1.5;
//! - seed 003 Table III: on the 4-GPU DGX Station, the priority queue cuts BFS extra work
//!   on a scale-free graph (CTA workers of 512 threads, FETCH_SIZE 32) by more than half.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::runtime::atos::{AtosOptions, KernelStrategy, WorkerWidth};
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
        ..AtosOptions::default()
    }
}

/// Mean Atos extra work over seeds 1..=3, every run validated.
fn extra(g: &Csr, name: &str, algorithm: Algorithm, gpus: u32, source: u32, o: AtosOptions) -> f64 {
    let setup = station();
    let mut sum = 0.0;
    for seed in 1..=3u64 {
        let spec = RunSpec {
            gpus,
            runtime: RuntimeKind::Atos,
            algorithm,
            params: AlgorithmParams { source, ..AlgorithmParams::default() },
            partitioner: "random".into(),
            seed,
            bsp: Default::default(),
            groute: Default::default(),
            gum: Default::default(),
            atos: o,
            validate: true,
            command_line: vec!["atos_paper_shapes".into()],
        };
        let case = format!(
            "{name} (reproduce: switchyard run --generate {name} --topology dgx-station-v100x4 \
             --runtime atos --algo {} --gpus {gpus} --source {source} --seed {seed} {})",
            algorithm.name(),
            o.cli_args().iter().map(|(f, v)| format!("{f} {v}")).collect::<Vec<_>>().join(" ")
        );
        let out = run(g, name, &spec, &setup).unwrap_or_else(|e| panic!("{case}: {e}"));
        let v = out.report.validation.as_ref().expect("validated");
        assert!(v.is_ok(), "{case}: {v}");
        sum += out.report.atos.as_ref().expect("atos report").extra_work;
    }
    sum / 3.0
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
