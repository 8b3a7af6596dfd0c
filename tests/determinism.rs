//! Determinism: the same seed gives a byte-identical report and trace, run after run, and
//! the small run's report and trace match their reviewed snapshots.

use std::path::PathBuf;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::trace::chrome_trace;
use switchyard::driver::{RunSpec, RuntimeKind, SimRun, SimSetup};
use switchyard::graph::{Csr, LoadOptions, load_graph};
use switchyard::runtime::bsp::BspOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// A real graph of the test data, in the repository (`tests/data/graphs/`, sources and
/// terms in the README there).
fn graph_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs").join(name)
}

fn chesapeake() -> Csr {
    load_graph(&graph_path("chesapeake.mtx"), &LoadOptions::default())
        .expect("chesapeake loads")
        .csr
}

fn config(algorithm: Algorithm, seed: u64, fidelity: Fidelity) -> SimRun {
    SimRun {
        spec: RunSpec {
            gpus: 2,
            runtime: RuntimeKind::Bsp,
            algorithm,
            params: AlgorithmParams::default(),
            partitioner: "random".into(),
            seed,
            bsp: BspOptions::default(),
            groute: Default::default(),
            gum: Default::default(),
            validate: true,
            command_line: vec!["switchyard".into(), "run".into(), "(determinism test)".into()],
        },
        sim: SimSetup {
            topology: Topology::bundled("dgx1-v100").expect("bundled"),
            fidelity,
            trace: true,
            jitter_ps: 0,
        },
    }
}

/// Report and trace as JSON text, with the build's git commit masked.
fn run_json(graph: &Csr, config: &SimRun) -> (String, String) {
    let mut output = config.run(graph, "chesapeake.mtx").expect("run succeeds");
    output.report.git_sha = "<masked>".into();
    let report = serde_json::to_string_pretty(&output.report).expect("report serialises");
    let trace =
        serde_json::to_string_pretty(&chrome_trace(output.trace.as_deref().unwrap_or_default()))
            .expect("trace serialises");
    (report, trace)
}

#[test]
fn same_seed_gives_byte_identical_reports_and_traces() {
    let graph = chesapeake();
    for algorithm in Algorithm::ALL {
        if algorithm.needs_weights() {
            continue;
        }
        for fidelity in [Fidelity::Flow, Fidelity::Packet] {
            let c = config(algorithm, 11, fidelity);
            let first = run_json(&graph, &c);
            let second = run_json(&graph, &c);
            assert_eq!(
                first.0,
                second.0,
                "{} {fidelity} report differs between runs",
                algorithm.name()
            );
            assert_eq!(
                first.1,
                second.1,
                "{} {fidelity} trace differs between runs",
                algorithm.name()
            );
        }
    }
}

#[test]
fn a_different_seed_changes_the_partition_and_the_report() {
    let graph = chesapeake();
    let a = run_json(&graph, &config(Algorithm::Bfs, 1, Fidelity::Flow));
    let b = run_json(&graph, &config(Algorithm::Bfs, 2, Fidelity::Flow));
    assert_ne!(a.0, b.0, "seeds 1 and 2 gave the same report");
}

#[test]
fn small_run_matches_its_snapshots() {
    let graph = chesapeake();
    let (report, trace) = run_json(&graph, &config(Algorithm::Bfs, 3, Fidelity::Flow));
    insta::assert_snapshot!("bfs_chesapeake_dgx1_2gpus_report", report);
    insta::assert_snapshot!("bfs_chesapeake_dgx1_2gpus_trace", trace);
}
