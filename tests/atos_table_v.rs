//! Seed 003 Table V in shape on `summit-ib-x8` (one V100 per node, dual-rail EDR
//! InfiniBand), on graphs small enough for seconds in a debug build; `reports/atos.md`
//! ("Seed 003 Table V") runs the same settings larger (`cargo run --release --example
//! table_v`). Every run validated; the simulator is deterministic, so one seed a case.
//!
//! - residual PageRank (R-MAT 12, epsilon 1e-2) through the aggregator with the paper's
//!   PageRank setting (`BATCH_SIZE` 1 MiB, `WAIT_TIME` 32) is faster on 8 nodes than on 1;
//! - at 8 nodes it beats eager mode (`WAIT_TIME` 4), which floods the receivers with small
//!   batches (R-MAT 10: the eager run at R-MAT 12 takes too long for a test);
//! - BFS on a road-like grid needs eager mode: at 8 nodes eager beats aggregated.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::runtime::atos::{AtosOptions, Comm};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

const EAGER: Comm = Comm::EAGER;
const AGGREGATED: Comm = Comm::Aggregated { batch_bytes: 1 << 20, wait_polls: 32 };

/// Virtual time in ms of Atos `algorithm` on `name` over the first `nodes` Summit nodes,
/// validated.
fn time_ms(name: &str, algorithm: Algorithm, nodes: u32, comm: Comm, source: u32) -> f64 {
    let g = generate(&GeneratorSpec::parse(name).expect("spec")).expect("generates");
    let topology = Topology::bundled("summit-ib-x8").expect("bundled");
    let setup = BackendSetup::Sim(SimSetup {
        topology,
        fidelity: Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let atos = AtosOptions { comm, ..AtosOptions::default() };
    let spec = RunSpec {
        params: AlgorithmParams { source, epsilon: 1e-2, ..AlgorithmParams::default() },
        partitioner: "auto".into(),
        atos,
        ..RunSpec::new(algorithm, RuntimeKind::Atos, nodes)
    };
    let case = format!(
        "switchyard run --generate {name} --topology summit-ib-x8 --gpus {nodes} --runtime atos \
         --algo {} --source {source} --epsilon 0.01 {}",
        algorithm.name(),
        atos.cli_args().iter().map(|(f, v)| format!("{f} {v}")).collect::<Vec<_>>().join(" ")
    );
    let out = run(&g, name, &spec, &setup).unwrap_or_else(|e| panic!("{case}: {e}"));
    let v = out.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{case}: {v}");
    out.report.time_ps as f64 / 1e9
}

#[test]
fn aggregated_pagerank_is_faster_on_eight_nodes_than_on_one() {
    let name = "rmat:scale=12,ef=16,seed=3";
    let one = time_ms(name, Algorithm::PrResidual, 1, AGGREGATED, 0);
    let eight = time_ms(name, Algorithm::PrResidual, 8, AGGREGATED, 0);
    assert!(eight < one, "aggregated PageRank: 8 nodes {eight:.3} ms vs 1 node {one:.3} ms");
}

#[test]
fn aggregated_pagerank_beats_eager_on_eight_nodes() {
    let name = "rmat:scale=10,ef=16,seed=3";
    let eager = time_ms(name, Algorithm::PrResidual, 8, EAGER, 0);
    let aggregated = time_ms(name, Algorithm::PrResidual, 8, AGGREGATED, 0);
    assert!(
        2.0 * aggregated < eager,
        "PageRank at 8 nodes: aggregated {aggregated:.3} ms vs eager {eager:.3} ms"
    );
}

#[test]
fn bfs_on_a_road_like_graph_needs_eager_mode_on_eight_nodes() {
    let name = "grid2d:w=128,h=128,drop=0.1,seed=2";
    let centre = 64 * 128 + 64;
    let eager = time_ms(name, Algorithm::Bfs, 8, EAGER, centre);
    let aggregated = time_ms(name, Algorithm::Bfs, 8, AGGREGATED, centre);
    assert!(
        eager < aggregated,
        "BFS at 8 nodes: eager {eager:.3} ms vs aggregated {aggregated:.3} ms"
    );
}
