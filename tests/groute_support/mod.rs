//! What the Groute worklist tests share (`tests/groute_worklist.rs`,
//! `tests/groute_async_send.rs`): the repository's real graphs, a simulated run of one
//! application with the library's defaults, the command line that reproduces a run, and a
//! run that must validate. Each test file uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{RunOutput, RunSpec, RuntimeKind, SimRun, SimSetup};
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::{Csr, LoadOptions, load_graph};
use switchyard::runtime::bsp::BspOptions;
use switchyard::runtime::groute::worklist::{RingOrder, SendMode, WorklistOptions};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// BFS, SSSP and residual PageRank: the worklist applications.
pub const APPS: [Algorithm; 3] = [Algorithm::Bfs, Algorithm::Sssp, Algorithm::PrResidual];

/// A real graph of the test data, in the repository (`tests/data/graphs/`, sources and
/// terms in the README there).
pub fn real_graph(name: &str) -> Csr {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs").join(name);
    load_graph(&path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}")).csr
}

/// A generated graph.
pub fn generated(spec: &str) -> Csr {
    generate(&GeneratorSpec::parse(spec).expect("spec")).expect("generate")
}

/// A Groute run of `algorithm` on `gpus` GPUs of the bundled `topology`, with the library's
/// worklist defaults (random partition, seed 7, no jitter).
pub fn config(topology: &str, gpus: u32, algorithm: Algorithm) -> SimRun {
    SimRun {
        spec: RunSpec {
            gpus,
            runtime: RuntimeKind::Groute,
            algorithm,
            params: AlgorithmParams { epsilon: 1e-3, ..AlgorithmParams::default() },
            partitioner: "random".into(),
            seed: 7,
            bsp: BspOptions::default(),
            groute: WorklistOptions::default(),
            atos: Default::default(),
            gum: Default::default(),
            validate: true,
            command_line: vec!["test".into()],
        },
        sim: SimSetup {
            topology: Topology::bundled(topology).expect("bundled"),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        },
    }
}

/// The `switchyard run` command line that reproduces `c` on the graph argument `source`.
pub fn reproduce(source: &str, c: &SimRun) -> String {
    let g = &c.spec.groute;
    let defaults = WorklistOptions::default();
    // `--source` takes the file's vertex id: the index + 1 for the 1-based formats.
    let one_based = [".mtx", ".graph", ".gr"].iter().any(|e| source.ends_with(e));
    let mut cmd = format!(
        "switchyard run --runtime groute --algo {} {source} --topology {} --gpus {} --seed {} \
         --partitioner {} --source {} --epsilon {} --jitter-ns {} --packet-size {} --buffers {}",
        c.spec.algorithm.name(),
        c.sim.topology.name,
        c.spec.gpus,
        c.spec.seed,
        c.spec.partitioner,
        u64::from(c.spec.params.source) + u64::from(one_based),
        c.spec.params.epsilon,
        c.sim.jitter_ps / 1000,
        g.packet_items,
        g.buffers,
    );
    if c.spec.algorithm.needs_weights() {
        cmd += " --weights";
    }
    // Absent, the CLI would choose a step itself (`auto_priority`).
    match g.priority_delta {
        Some(delta) => cmd += &format!(" --priority-delta {delta}"),
        None if !g.auto_priority => cmd += " --priority-delta off",
        None => {}
    }
    // Absent, the CLI would choose the worker by the graph (`auto_fused`).
    if !g.auto_fused {
        cmd += if g.fused { " --fused on" } else { " --fused off" };
    }
    if g.fused_max_rounds != defaults.fused_max_rounds {
        cmd += &format!(" --fused-max-rounds {}", g.fused_max_rounds);
    }
    if g.send == SendMode::Async {
        cmd += " --groute-send async";
    }
    if g.ring == RingOrder::Widest {
        cmd += " --ring widest";
    }
    if !g.auto_size {
        cmd += &format!(
            " --batch-items {} --out-items {} --worklist-items {}",
            g.batch_items, g.out_items, g.initial_worklist_items
        );
    }
    cmd
}

/// Runs and checks validation; a failure names the command that reproduces it.
pub fn check(graph: &Csr, source: &str, c: &SimRun) -> RunOutput {
    let output = c
        .run(graph, source)
        .unwrap_or_else(|e| panic!("{e}\nreproduce with: {}", reproduce(source, c)));
    let v = output.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{v}\nreproduce with: {}", reproduce(source, c));
    output
}
