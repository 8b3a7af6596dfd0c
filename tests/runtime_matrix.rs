//! Runtime tests written once, run on every backend this build and machine have: every
//! runtime x every algorithm it has operators for x 1, 2, 4 and 8 GPUs, on small real and
//! generated graphs, each result validated against its reference.
//!
//! The simulator always runs them (CI). Where a GPU is present the same bodies run on the
//! CUDA backend with logical GPUs sharing the machine's GPUs (`just gpu`), so multi-GPU
//! paths (peer copies, routers, termination across devices) are checked on real CUDA with
//! one GPU. On a machine with several GPUs, `cuda-real` runs the same bodies on real GPUs
//! (peer memory and peer copies between devices) for every GPU count the machine has; it
//! runs only when asked for. `SWITCHYARD_MATRIX_BACKENDS=sim`, `=cuda` or `=cuda-real`
//! (comma-separated) narrows the list.

use std::path::PathBuf;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{
    BackendSetup, CudaSetup, RunSpec, RuntimeKind, SimSetup, check_on_cuda, run,
};
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::graph::{Csr, LoadOptions, load_graph};
use switchyard::runtime::bsp::BspOptions;
use switchyard::runtime::groute::worklist::WorklistOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// The backends to run on, by name.
fn backends() -> Vec<(&'static str, BackendSetup)> {
    let wanted = std::env::var("SWITCHYARD_MATRIX_BACKENDS").unwrap_or_default();
    let want = |name: &str| wanted.is_empty() || wanted.split(',').any(|w| w == name);
    let mut backends = Vec::new();
    if want("sim") {
        let topology = Topology::bundled("dgx1-v100").expect("bundled topology");
        let sim = SimSetup { topology, fidelity: Fidelity::Flow, trace: false, jitter_ps: 0 };
        backends.push(("sim", BackendSetup::Sim(sim)));
    }
    if want("cuda") && switchyard::backend::cuda::gpus_present() > 0 {
        backends.push(("cuda", BackendSetup::Cuda(CudaSetup { logical_gpus: true, trace: false })));
    } else if want("cuda") {
        eprintln!("cuda: skipped (no GPU usable by CUDA on this machine)");
    }
    // Real GPUs only when named: the default list stays what CI and one-GPU machines run.
    if wanted.split(',').any(|w| w == "cuda-real") {
        assert!(
            switchyard::backend::cuda::gpus_present() >= 2,
            "SWITCHYARD_MATRIX_BACKENDS=cuda-real needs a machine with at least two GPUs"
        );
        backends.push((
            "cuda-real",
            BackendSetup::Cuda(CudaSetup { logical_gpus: false, trace: false }),
        ));
    }
    backends
}

/// Small graphs of different classes, each with integer weights (SSSP needs them): the
/// command-line option that loads each, and the graph.
fn graphs() -> Vec<(String, Csr)> {
    let power = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/embedded/power.graph");
    let power = load_graph(&power, &LoadOptions::default()).expect("power grid loads").csr;
    let rmat = generate(&GeneratorSpec::parse("rmat:scale=11,ef=8,seed=3").expect("spec"))
        .expect("rmat generates");
    let grid = generate(&GeneratorSpec::parse("grid2d:w=40,h=30,drop=0.1,seed=2").expect("spec"))
        .expect("grid generates");
    [
        ("--graph src/embedded/power.graph", power),
        ("--generate rmat:scale=11,ef=8,seed=3", rmat),
        ("--generate grid2d:w=40,h=30,drop=0.1,seed=2", grid),
    ]
    .into_iter()
    .map(|(name, g)| (name.to_string(), with_uniform_weights(&g, 1, 64, 7).expect("weights")))
    .collect()
}

fn spec(runtime: RuntimeKind, algorithm: Algorithm, gpus: u32, source: u32) -> RunSpec {
    RunSpec {
        gpus,
        runtime,
        algorithm,
        params: AlgorithmParams { source, epsilon: 1e-3, ..AlgorithmParams::default() },
        partitioner: "random".into(),
        seed: 7,
        bsp: BspOptions::default(),
        groute: WorklistOptions::default(),
        atos: Default::default(),
        gum: Default::default(),
        validate: true,
        command_line: vec!["runtime_matrix".into()],
    }
}

#[test]
fn every_runtime_validates_every_algorithm_it_runs_on_every_backend() {
    let graphs = graphs();
    let mut cases = 0;
    for (backend_name, setup) in backends() {
        for (graph_name, graph) in &graphs {
            let hub = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
            for runtime in RuntimeKind::ALL {
                for algorithm in Algorithm::ALL.into_iter().filter(|&a| runtime.runs(a)) {
                    for gpus in [1, 2, 4, 8] {
                        if backend_name == "cuda-real"
                            && gpus > switchyard::backend::cuda::gpus_present()
                        {
                            continue;
                        }
                        let spec = spec(runtime, algorithm, gpus, hub);
                        // `--source` takes the file's id: 1-based for the METIS power grid.
                        let file_source = hub + u32::from(graph_name.starts_with("--graph"));
                        let case = format!(
                            "{backend_name}: {} on {} x{gpus} GPUs, {graph_name} (reproduce: \
                             switchyard run {graph_name} --weights \
                             --runtime {} --algo {} --gpus {gpus} --source {file_source} --seed 7 \
                             --epsilon 1e-3{})",
                            algorithm.name(),
                            runtime.name(),
                            runtime.name(),
                            algorithm.name(),
                            match backend_name {
                                "cuda" => " --backend cuda --logical-gpus",
                                "cuda-real" => " --backend cuda",
                                _ => " --backend sim",
                            },
                        );
                        if backend_name != "sim" && check_on_cuda(graph, &spec).is_err() {
                            // No CUDA kernels for this pair yet (Atos, colouring): the run
                            // is refused before any work.
                            let refused = run(graph, graph_name, &spec, &setup).err();
                            let message = refused.map(|e| e.to_string()).unwrap_or_default();
                            assert!(
                                message.contains("has no CUDA kernels yet"),
                                "{case}: {message}"
                            );
                            continue;
                        }
                        if runtime == RuntimeKind::Atos && gpus > 5 && backend_name != "sim" {
                            // Atos's kernels take three buffers per GPU of the run: the CUDA
                            // ABI's 32 buffer arguments hold 5 GPUs; refused with the limit.
                            let refused = run(graph, graph_name, &spec, &setup).err();
                            let message = refused.map(|e| e.to_string()).unwrap_or_default();
                            assert!(message.contains("use fewer GPUs"), "{case}: {message}");
                            continue;
                        }
                        if runtime == RuntimeKind::Atos
                            && algorithm == Algorithm::Color
                            && gpus > 4
                            && backend_name == "sim"
                        {
                            // Atos colouring reads neighbours' colours with peer loads; the
                            // DGX-1's 8 GPUs include pairs without a peer path: refused
                            // before any work, naming the pair and the fix.
                            let refused = run(graph, graph_name, &spec, &setup).err();
                            let message = refused.map(|e| e.to_string()).unwrap_or_default();
                            assert!(message.contains("peer loads"), "{case}: {message}");
                            continue;
                        }
                        let output = run(graph, graph_name, &spec, &setup)
                            .unwrap_or_else(|e| panic!("{case}: {e}"));
                        let validation = output.report.validation.expect("validated");
                        assert!(validation.is_ok(), "{case}: {validation}");
                        assert_eq!(output.report.topology.gpus, gpus, "{case}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert!(cases >= 3 * 10 * 4, "only {cases} cases ran");
}

#[test]
fn a_runtime_without_operators_for_an_algorithm_is_refused_before_any_work() {
    let graph = generate(&GeneratorSpec::parse("rmat:scale=6,ef=4").expect("spec")).expect("rmat");
    let topology = Topology::bundled("dgx1-v100").expect("bundled topology");
    let setup = BackendSetup::Sim(SimSetup {
        topology,
        fidelity: Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let err = run(&graph, "rmat", &spec(RuntimeKind::Groute, Algorithm::Dobfs, 2, 0), &setup)
        .expect_err("groute has no dobfs");
    let text = err.to_string();
    assert!(text.contains("--runtime groute has no operators for dobfs"), "{text}");
    assert!(text.contains("use --runtime bsp"), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
}
