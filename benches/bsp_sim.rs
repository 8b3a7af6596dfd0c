//! Cost of simulating: an 8-GPU bulk-synchronous BFS and PageRank on R-MAT scale 20 (edge
//! factor 16) on the simulated DGX-1, against the project's own sequential CSR BFS and
//! PageRank on the same graph, timed side by side in one process. The ratio is (partition +
//! simulation) over the sequential run; target (issue 4): at most 4. The whole `run`
//! (graph summary and partition metrics for the report) is reported beside it. Prints a
//! table and writes `reports/bench/bsp_sim.json`.
//!
//!     cargo bench --bench bsp_sim            (SCALE=16 for a quick run, ALGO=pr for one)

use std::time::Instant;
use switchyard::algo::sequential;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::backend::sim::SimConfig;
use switchyard::driver::{RunSpec, RuntimeKind, SimRun, SimSetup, builtin_kernels, simulate};
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::partition::partitioner_by_name;
use switchyard::graph::summary::summarize;
use switchyard::runtime::bsp::BspOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

fn best_of<T>(repeats: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeats {
        let start = Instant::now();
        let out = f();
        best = best.min(start.elapsed().as_secs_f64());
        last = Some(out);
    }
    (best, last.expect("at least one repeat"))
}

fn main() {
    let scale: u32 = std::env::var("SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let spec = GeneratorSpec::parse(&format!("rmat:scale={scale},ef=16,seed=1")).expect("spec");
    let graph = generate(&spec).expect("generate");
    println!("graph {spec}: {} vertices, {} arcs", graph.num_vertices(), graph.num_arcs());
    let topology = Topology::bundled("dgx1-v100").expect("dgx1");
    let mut rows = Vec::new();
    // BFS from the highest-degree vertex: in the giant component (vertex 0 may be isolated).
    let source = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
    let only = std::env::var("ALGO").ok();
    for algorithm in [Algorithm::Bfs, Algorithm::Pr] {
        if only.as_deref().is_some_and(|a| a != algorithm.name()) {
            continue;
        }
        let params = AlgorithmParams { iterations: 10, source, ..AlgorithmParams::default() };
        let (baseline_s, _) = best_of(3, || match algorithm {
            Algorithm::Bfs => sequential::bfs_levels(&graph, source).len(),
            _ => sequential::pagerank_ldbc(&graph, 0.85, params.iterations).len(),
        });
        let config = SimRun {
            spec: RunSpec {
                gpus: 8,
                runtime: RuntimeKind::Bsp,
                algorithm,
                params,
                partitioner: "random".into(),
                seed: 1,
                bsp: BspOptions::default(),
                groute: Default::default(),
                gum: Default::default(),
                validate: false,
                command_line: vec!["bench".into()],
            },
            sim: SimSetup {
                topology: topology.clone(),
                fidelity: Fidelity::Flow,
                trace: false,
                jitter_ps: 0,
            },
        };
        let (partition_s, partition) = best_of(3, || {
            partitioner_by_name("random", 1)
                .and_then(|p| p.partition(&graph, 8))
                .expect("partition")
        });
        let primitive = algorithm.instance(&params).bsp().expect("a bulk-synchronous algorithm");
        let (simulate_s, _) = best_of(3, || {
            simulate(
                &graph,
                primitive.as_ref(),
                builtin_kernels(),
                &topology,
                8,
                &partition.owner,
                &BspOptions::default(),
                SimConfig::default(),
            )
            .expect("simulate")
        });
        let (summary_s, _) = best_of(1, || summarize(&graph));
        let (simulated_s, output) =
            best_of(3, || config.run(&graph, &spec.to_string()).expect("simulated run"));
        println!(
            "{:<4} phases: partition {partition_s:.3} s, simulate {simulate_s:.3} s, graph summary for the report {summary_s:.3} s",
            algorithm.name()
        );
        let events = output.report.backend.events;
        let simulation_s = partition_s + simulate_s;
        let ratio = simulation_s / baseline_s;
        println!(
            "{:<4} sequential {:>7.3} s | simulated 8 GPUs: partition + simulation {:>7.3} s (ratio {:>5.2}), whole run with report and validation off {:>7.3} s (ratio {:>5.2}) | {:>8.0} events/s | simulated time {:.3} ms",
            algorithm.name(),
            baseline_s,
            simulation_s,
            ratio,
            simulated_s,
            simulated_s / baseline_s,
            events as f64 / simulate_s,
            output.report.time_ps as f64 / 1e9
        );
        rows.push(serde_json::json!({
            "algorithm": algorithm.name(),
            "graph": spec.to_string(),
            "arcs": graph.num_arcs(),
            "sequential_s": baseline_s,
            "partition_s": partition_s,
            "simulate_s": simulate_s,
            "ratio": ratio,
            "target_ratio_max": 4.0,
            "whole_run_s": simulated_s,
            "whole_run_ratio": simulated_s / baseline_s,
            "graph_summary_s": summary_s,
            "events": events,
            "events_per_s": events as f64 / simulate_s,
            "simulated_time_ps": output.report.time_ps,
        }));
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/bench");
    std::fs::create_dir_all(&dir).expect("reports/bench");
    let json =
        serde_json::to_string_pretty(&serde_json::json!({ "benchmark": "bsp_sim", "rows": rows }))
            .expect("json");
    std::fs::write(dir.join("bsp_sim.json"), json + "\n").expect("write json");
}
