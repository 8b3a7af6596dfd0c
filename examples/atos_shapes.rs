//! The numbers of `reports/atos.md`: Atos's extra-work and virtual-time findings of seeds
//! 003 and 004 reproduced in shape on the simulator, every run validated.
//!
//! - seed 004 Table 4 (one V100 32 GB: the first GPU of `dgx-station-v100x4`): BFS extra
//!   work of persistent warp, persistent CTA and discrete CTA workers; colouring extra
//!   work of BSP, persistent warp, persistent CTA and discrete warp, with and without
//!   randomly permuted vertex ids;
//! - seed 003 Table III (the 4-GPU DGX Station): BFS extra work with and without the
//!   distributed priority queue (threshold 0, delta 1);
//! - seed 004 Table 1 (one V100): BFS virtual time of persistent CTA workers against the
//!   bulk-synchronous runtime (BSP); residual PageRank virtual time of persistent and
//!   discrete CTA workers;
//! - seed 003 Table II (the 4-GPU DGX Station): BFS virtual time of BSP, Groute and Atos
//!   (persistent CTA workers, remote updates direct or through the aggregator).
//!
//!     cargo run --release --example atos_shapes [-- SCALE [times]]
//!
//! `SCALE` (default 16) sets the graphs: R-MAT `scale=SCALE,ef=16` (scale-free) and a
//! `2^(SCALE/2)`-square grid with 10 % of its edges dropped (road-like). BFS starts at the
//! R-MAT's highest-degree vertex and at the grid's centre. Each cell is the mean over seeds
//! 1, 2 and 3 (the seed draws the partition and the simulator's schedule).
//! `times` prints only the virtual-time tables (seed 004 Table 1, seed 003 Table II).

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::runtime::atos::tiles::TileMode;
use switchyard::runtime::atos::{AtosOptions, Comm, KernelStrategy, WorkerWidth};
use switchyard::runtime::bsp::BspOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

const SEEDS: [u64; 3] = [1, 2, 3];

fn spec(
    runtime: RuntimeKind,
    algorithm: Algorithm,
    gpus: u32,
    source: u32,
    atos: AtosOptions,
    seed: u64,
) -> RunSpec {
    RunSpec {
        params: AlgorithmParams { source, ..AlgorithmParams::default() },
        seed,
        atos,
        // The papers' bulk-synchronous baseline launches every superstep from the host.
        bsp: BspOptions { loop_frontier: 0, ..BspOptions::default() },
        command_line: vec!["atos_shapes".into()],
        ..RunSpec::new(algorithm, runtime, gpus)
    }
}

/// Mean extra work over the seeds (Atos: visits over the ideal; BSP colouring: the
/// frontiers' sum over the vertices), every run validated.
fn extra(graph: &Csr, name: &str, setup: &BackendSetup, make: impl Fn(u64) -> RunSpec) -> f64 {
    let mut sum = 0.0;
    for seed in SEEDS {
        let s = make(seed);
        let out = run(graph, name, &s, setup).unwrap_or_else(|e| panic!("{name} {s:?}: {e}"));
        let v = out.report.validation.as_ref().expect("validated");
        assert!(v.is_ok(), "{name}: {v}");
        sum += match &out.report.atos {
            Some(a) => a.extra_work,
            None => {
                out.report.work.frontier_sizes.iter().sum::<u64>() as f64
                    / f64::from(graph.num_vertices())
            }
        };
    }
    sum / SEEDS.len() as f64
}

/// Mean virtual time in milliseconds over the seeds, every run validated.
fn time_ms(graph: &Csr, name: &str, setup: &BackendSetup, make: impl Fn(u64) -> RunSpec) -> f64 {
    let mut sum_ps = 0u64;
    for seed in SEEDS {
        let s = make(seed);
        let out = run(graph, name, &s, setup).unwrap_or_else(|e| panic!("{name} {s:?}: {e}"));
        let v = out.report.validation.as_ref().expect("validated");
        assert!(v.is_ok(), "{name}: {v}");
        sum_ps += out.report.time_ps;
    }
    sum_ps as f64 / SEEDS.len() as f64 / 1e9
}

/// Workers of `worker` width; CTA workers (512 threads) fetch `fetch` items.
fn atos(worker: WorkerWidth, kernel: KernelStrategy, fetch: u32, permute_ids: bool) -> AtosOptions {
    AtosOptions {
        worker,
        kernel,
        fetch_size: if worker == WorkerWidth::Cta { fetch } else { 1 },
        permute_ids,
        // The papers' workers, not the on-chip tiles (a different mechanism).
        tiles: TileMode::Off,
        ..AtosOptions::default()
    }
}

fn main() {
    let scale: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let times_only = std::env::args().nth(2).as_deref() == Some("times");
    let side = 1u32 << (scale / 2);
    let specs = [
        format!("grid2d:w={side},h={side},drop=0.1,seed=2"),
        format!("rmat:scale={scale},ef=16,seed=3"),
    ];
    let topology = Topology::bundled("dgx-station-v100x4").expect("bundled");
    let setup = BackendSetup::Sim(SimSetup {
        topology,
        fidelity: Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let graphs: Vec<(String, Csr, u32)> = specs
        .iter()
        .map(|s| {
            let g = generate(&GeneratorSpec::parse(s).expect("spec")).expect("generates");
            let source = if s.starts_with("grid2d") {
                (side / 2) * side + side / 2
            } else {
                (0..g.num_vertices()).max_by_key(|&v| g.degree(v)).unwrap_or(0)
            };
            (s.clone(), g, source)
        })
        .collect();
    for (name, g, source) in &graphs {
        println!(
            "graph {name}: {} vertices, {} arcs, BFS source {source}",
            g.num_vertices(),
            g.num_arcs()
        );
    }

    if !times_only {
        extra_work_tables(&graphs, &setup);
    }

    println!("\n## Seed 004 Table 1, BFS (1 x V100 32 GB): virtual time in ms, mean of seeds 1-3");
    println!(
        "| graph | BSP | persistent CTA (FETCH 8) | persistent CTA (FETCH 32) | BSP / persistent CTA (FETCH 32) |"
    );
    println!("|---|---|---|---|---|");
    for (name, g, source) in &graphs {
        let bsp = time_ms(g, name, &setup, |seed| {
            spec(RuntimeKind::Bsp, Algorithm::Bfs, 1, *source, AtosOptions::default(), seed)
        });
        let cells: Vec<f64> = [8, 32]
            .into_iter()
            .map(|fetch| {
                let o = atos(WorkerWidth::Cta, KernelStrategy::Persistent, fetch, false);
                time_ms(g, name, &setup, |seed| {
                    spec(RuntimeKind::Atos, Algorithm::Bfs, 1, *source, o, seed)
                })
            })
            .collect();
        println!(
            "| {name} | {bsp:.3} | {:.3} | {:.3} | {:.1}x |",
            cells[0],
            cells[1],
            bsp / cells[1]
        );
    }

    println!(
        "\n## Seed 004 Table 1, residual PageRank (1 x V100 32 GB): virtual time in ms, mean of seeds 1-3"
    );
    println!(
        "| graph | persistent CTA (FETCH 8) | discrete CTA (FETCH 8) | persistent CTA (FETCH 32) | discrete CTA (FETCH 32) |"
    );
    println!("|---|---|---|---|---|");
    for (name, g, _) in &graphs {
        let cells: Vec<String> = [
            (KernelStrategy::Persistent, 8),
            (KernelStrategy::Discrete, 8),
            (KernelStrategy::Persistent, 32),
            (KernelStrategy::Discrete, 32),
        ]
        .into_iter()
        .map(|(kernel, fetch)| {
            let o = atos(WorkerWidth::Cta, kernel, fetch, false);
            let t = time_ms(g, name, &setup, |seed| {
                spec(RuntimeKind::Atos, Algorithm::PrResidual, 1, 0, o, seed)
            });
            format!("{t:.3}")
        })
        .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }

    println!(
        "\n## Seed 003 Table II, BFS (DGX Station, 4 x V100): virtual time in ms, mean of seeds 1-3"
    );
    println!(
        "| graph | BSP | Groute | Atos persistent CTA (FETCH 32), direct | Atos, aggregated (1 MiB, WAIT_TIME 4) |"
    );
    println!("|---|---|---|---|---|");
    for (name, g, source) in &graphs {
        let direct = atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32, false);
        // Seed 003's eager aggregation (BATCH_SIZE 1 MiB, WAIT_TIME 4).
        let aggregated = AtosOptions { comm: Comm::EAGER, ..direct };
        let cells: Vec<String> = [
            (RuntimeKind::Bsp, direct),
            (RuntimeKind::Groute, direct),
            (RuntimeKind::Atos, direct),
            (RuntimeKind::Atos, aggregated),
        ]
        .into_iter()
        .map(|(runtime, o)| {
            let t =
                time_ms(g, name, &setup, |seed| spec(runtime, Algorithm::Bfs, 4, *source, o, seed));
            format!("{t:.3}")
        })
        .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
}

/// Seed 004 Table 4's and seed 003 Table III's extra work.
fn extra_work_tables(graphs: &[(String, Csr, u32)], setup: &BackendSetup) {
    println!("\n## Seed 004 Table 4, BFS (1 x V100 32 GB): extra work, mean of seeds 1-3");
    println!(
        "| graph | persistent warp | persistent CTA (FETCH 8) | persistent CTA (FETCH 32) | discrete CTA (FETCH 8) |"
    );
    println!("|---|---|---|---|---|");
    for (name, g, source) in graphs {
        let cells: Vec<String> = [
            atos(WorkerWidth::Warp, KernelStrategy::Persistent, 1, false),
            atos(WorkerWidth::Cta, KernelStrategy::Persistent, 8, false),
            atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32, false),
            atos(WorkerWidth::Cta, KernelStrategy::Discrete, 8, false),
        ]
        .into_iter()
        .map(|o| {
            let e = extra(g, name, setup, |seed| {
                spec(RuntimeKind::Atos, Algorithm::Bfs, 1, *source, o, seed)
            });
            format!("{e:.3}")
        })
        .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }

    println!(
        "\n## Seed 004 Table 4, colouring (1 x V100 32 GB): extra work (assignments / vertices), mean of seeds 1-3"
    );
    println!("| graph | ids | BSP | persistent warp | persistent CTA (FETCH 8) | discrete warp |");
    println!("|---|---|---|---|---|---|");
    for (name, g, _) in graphs {
        for permute in [false, true] {
            let mut cells = Vec::new();
            if permute {
                cells.push("-".to_string());
            } else {
                let e = extra(g, name, setup, |seed| {
                    spec(RuntimeKind::Bsp, Algorithm::Color, 1, 0, AtosOptions::default(), seed)
                });
                cells.push(format!("{e:.3}"));
            }
            for (w, k) in [
                (WorkerWidth::Warp, KernelStrategy::Persistent),
                (WorkerWidth::Cta, KernelStrategy::Persistent),
                (WorkerWidth::Warp, KernelStrategy::Discrete),
            ] {
                let o = atos(w, k, 8, permute);
                let e = extra(g, name, setup, |seed| {
                    spec(RuntimeKind::Atos, Algorithm::Color, 1, 0, o, seed)
                });
                cells.push(format!("{e:.3}"));
            }
            let ids = if permute { "permuted" } else { "as generated" };
            println!("| {name} | {ids} | {} |", cells.join(" | "));
        }
    }

    println!("\n## Seed 003 Table III, BFS (DGX Station, 4 x V100): extra work, mean of seeds 1-3");
    println!("| graph | persistent CTA (FETCH 32) | + priority queue (threshold 0, delta 1) |");
    println!("|---|---|---|");
    for (name, g, source) in graphs {
        let plain = atos(WorkerWidth::Cta, KernelStrategy::Persistent, 32, false);
        let prio = AtosOptions { priority: Some((0, 1)), ..plain };
        let a = extra(g, name, setup, |seed| {
            spec(RuntimeKind::Atos, Algorithm::Bfs, 4, *source, plain, seed)
        });
        let b = extra(g, name, setup, |seed| {
            spec(RuntimeKind::Atos, Algorithm::Bfs, 4, *source, prio, seed)
        });
        println!("| {name} | {a:.3} | {b:.3} |");
    }
}
