//! SSSP over real (`f32`) weights on the simulator: the bulk-synchronous runtime and
//! Groute's worklist against an independent `f32` Dijkstra written here (bit for bit: IEEE
//! addition is monotone, so Bellman-Ford in any order and Dijkstra settle on the same
//! smallest rounded path sums) and against the `f64` reference within the stated tolerance
//! (the run's own validation). Bad weights are refused before any work; both runtimes have
//! CUDA kernels for real weights.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use switchyard::algo::sssp::{SsspWeights, UNREACHED, float_tolerance};
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{
    BackendSetup, CudaSetup, RunSpec, RuntimeKind, SimSetup, check_on_cuda, run,
};
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::{BuildOptions, Csr, EdgeWeights};
use switchyard::runtime::bsp::BspOptions;
use switchyard::runtime::groute::worklist::WorklistOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// `graph` with deterministic, non-integral real weights in [0, 10) (some exactly 0).
fn with_real_weights(graph: &Csr) -> Csr {
    let mut edges = Vec::new();
    for u in 0..graph.num_vertices() {
        edges.extend(graph.neighbors(u).iter().map(|&v| (u, v)));
    }
    let weights = (0..edges.len() as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            if h % 17 == 0 { 0.0 } else { (h % 10_000) as f32 / 1000.0 + 0.001 }
        })
        .collect();
    Csr::from_edges(
        graph.num_vertices(),
        &edges,
        Some(EdgeWeights::Float(weights)),
        true,
        BuildOptions::default(),
    )
    .expect("valid graph")
}

/// Dijkstra in `f32` (distances as bits: non-negative floats order as their bits);
/// `u32::MAX` where unreachable.
fn dijkstra_f32(graph: &Csr, source: u32) -> Vec<u32> {
    let Some(EdgeWeights::Float(w)) = graph.weights() else { panic!("real weights") };
    let mut dist = vec![u32::MAX; graph.num_vertices() as usize];
    let mut heap = BinaryHeap::new();
    dist[source as usize] = 0.0f32.to_bits();
    heap.push(Reverse((0.0f32.to_bits(), source)));
    while let Some(Reverse((d, u))) = heap.pop() {
        if d > dist[u as usize] {
            continue;
        }
        let start = graph.offsets()[u as usize] as usize;
        for (i, &v) in graph.neighbors(u).iter().enumerate() {
            let nd = (f32::from_bits(d) + w[start + i]).to_bits();
            if nd < dist[v as usize] {
                dist[v as usize] = nd;
                heap.push(Reverse((nd, v)));
            }
        }
    }
    dist
}

fn spec(runtime: RuntimeKind, gpus: u32, source: u32) -> RunSpec {
    RunSpec {
        gpus,
        runtime,
        algorithm: Algorithm::Sssp,
        params: AlgorithmParams { source, ..AlgorithmParams::default() },
        partitioner: "random".into(),
        seed: 3,
        bsp: BspOptions::default(),
        groute: WorklistOptions::default(),
        atos: Default::default(),
        gum: Default::default(),
        validate: true,
        command_line: vec!["sssp_float".into()],
    }
}

fn sim() -> BackendSetup {
    let topology = Topology::bundled("dgx1-v100").expect("bundled topology");
    BackendSetup::Sim(SimSetup { topology, fidelity: Fidelity::Flow, trace: false, jitter_ps: 0 })
}

fn graphs() -> Vec<(&'static str, Csr)> {
    ["rmat:scale=10,ef=8,seed=5", "grid2d:w=30,h=20,drop=0.1,seed=2"]
        .into_iter()
        .map(|s| {
            let g = generate(&GeneratorSpec::parse(s).expect("spec")).expect("generates");
            (s, with_real_weights(&g))
        })
        .collect()
}

/// The runtimes that run SSSP.
fn sssp_runtimes() -> impl Iterator<Item = RuntimeKind> {
    RuntimeKind::ALL.into_iter().filter(|r| r.runs(Algorithm::Sssp))
}

#[test]
fn every_sssp_runtime_matches_an_f32_dijkstra_bit_for_bit_and_validate() {
    let mut runs = 0;
    for (name, graph) in graphs() {
        let source = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
        let expected = dijkstra_f32(&graph, source);
        let reached = expected.iter().filter(|&&d| d != u32::MAX).count();
        assert!(reached > 10, "{name}: the source reaches a real part of the graph");
        for runtime in sssp_runtimes() {
            for gpus in [1, 2, 4] {
                let out = run(&graph, name, &spec(runtime, gpus, source), &sim())
                    .unwrap_or_else(|e| panic!("{name} {runtime:?} {gpus}: {e}"));
                let validation = out.report.validation.as_ref().expect("validated");
                assert!(validation.is_ok(), "{name} {runtime:?} {gpus}: {validation:?}");
                assert_eq!(out.values.len(), expected.len());
                for (v, (&e, &a)) in expected.iter().zip(&out.values).enumerate() {
                    let a = if a == UNREACHED { u32::MAX } else { a };
                    assert_eq!(
                        e,
                        a,
                        "{name} {runtime:?} {gpus} GPUs vertex {v}: expected {}, found {}",
                        f32::from_bits(e),
                        f32::from_bits(a)
                    );
                }
                runs += 1;
            }
        }
    }
    assert_eq!(runs, sssp_runtimes().count() * 2 * 3);
}

#[test]
fn soft_priority_and_the_fused_worker_run_real_weights() {
    let (name, graph) = graphs().remove(1);
    let expected = dijkstra_f32(&graph, 0);
    let mut s = spec(RuntimeKind::Groute, 4, 0);
    s.groute.priority_delta = Some(5);
    s.groute.fused = true;
    let out = run(&graph, name, &s, &sim()).expect("runs");
    assert!(out.report.validation.as_ref().expect("validated").is_ok());
    assert_eq!(out.values, expected);
}

#[test]
fn the_tolerance_is_the_rounding_bound_of_the_longest_simple_path() {
    // One reached vertex: no addition, only the f64 reference's own rounding room.
    let t = float_tolerance(1);
    assert_eq!(t.abs, 0.0);
    let u32_ = f64::from(f32::EPSILON) / 2.0;
    assert!((float_tolerance(1001).rel - 1000.0 * u32_ / (1.0 - 1000.0 * u32_)).abs() < 1e-12);
    assert!(float_tolerance(1001).rel < 6.0e-5);
}

#[test]
fn integer_weights_keep_the_exact_integer_path() {
    let g = generate(&GeneratorSpec::parse("grid2d:w=10,h=10,seed=1").expect("spec")).unwrap();
    let g = switchyard::graph::generate::with_uniform_weights(&g, 1, 64, 1).unwrap();
    let algo = Algorithm::Sssp.instance_for(&AlgorithmParams::default(), &g);
    assert_eq!(algo.describe(), "sssp (integer weights)");
    assert_eq!(algo.bsp().expect("bsp").advance_kernel(), "sssp_advance");
    let out = run(&g, "grid", &spec(RuntimeKind::Bsp, 2, 0), &sim()).unwrap();
    let reference = switchyard::graph::reference::sssp_distances_int(&g, 0).unwrap();
    let got: Vec<u64> = out.values.iter().map(|&d| u64::from(d)).collect();
    assert_eq!(got, reference);
    let _ = SsspWeights::Int;
}

fn tiny(weights: Vec<f32>) -> Csr {
    Csr::from_edges(
        3,
        &[(0, 1), (1, 2)],
        Some(EdgeWeights::Float(weights)),
        true,
        BuildOptions::default(),
    )
    .expect("graph")
}

#[test]
fn negative_nan_and_huge_weights_are_refused_before_the_run() {
    for (w, says) in [
        (vec![1.0, -0.5], "has weight -0.5"),
        (vec![f32::NAN, 1.0], "has weight NaN"),
        (vec![f32::INFINITY, 1.0], "has weight inf"),
        (vec![3.0e38, 3.0e38], "beyond what f32 distances hold"),
    ] {
        let err = run(&tiny(w), "tiny", &spec(RuntimeKind::Bsp, 1, 0), &sim())
            .expect_err("refused")
            .to_string();
        assert!(err.contains("sssp") && err.contains(says), "{err}");
    }
    let err = run(&tiny(vec![1.0, -0.5]), "tiny", &spec(RuntimeKind::Bsp, 1, 0), &sim())
        .unwrap_err()
        .to_string();
    assert!(err.contains("from vertex 1 to vertex 2") && err.contains("fix or drop"), "{err}");
}

#[test]
fn an_unweighted_graph_says_what_it_lacks_and_the_fix() {
    let g = Csr::from_edges(2, &[(0, 1)], None, true, BuildOptions::default()).unwrap();
    let err = run(&g, "g", &spec(RuntimeKind::Bsp, 1, 0), &sim()).unwrap_err().to_string();
    assert!(
        err.contains("needs edge weights and the graph has none") && err.contains("--weights"),
        "{err}"
    );
}

#[test]
fn real_weights_run_on_cuda_on_every_runtime_that_has_cuda_kernels() {
    let g = tiny(vec![0.5, 0.25]);
    // Every runtime that runs on CUDA runs real weights there.
    for runtime in [RuntimeKind::Bsp, RuntimeKind::Groute, RuntimeKind::Gum] {
        check_on_cuda(&g, &spec(runtime, 1, 0))
            .unwrap_or_else(|e| panic!("{}: refused on CUDA: {e}", runtime.name()));
        // Where a GPU is present the run validates there (2 logical GPUs); elsewhere the
        // backend says it has none, and never that the kernels are missing.
        let setup = BackendSetup::Cuda(CudaSetup { logical_gpus: true, trace: false });
        match run(&g, "g", &spec(runtime, 2, 0), &setup) {
            Ok(output) => {
                let validation = output.report.validation.expect("validated");
                assert!(validation.is_ok(), "{}: {validation}", runtime.name());
            }
            Err(e) => {
                let e = e.to_string();
                assert!(switchyard::backend::cuda::gpus_present() == 0, "{e}");
                assert!(!e.contains("no CUDA kernels"), "{e}");
            }
        }
    }
    let ints = Csr::from_edges(
        2,
        &[(0, 1)],
        Some(EdgeWeights::Int(vec![3])),
        true,
        BuildOptions::default(),
    )
    .unwrap();
    check_on_cuda(&ints, &spec(RuntimeKind::Bsp, 1, 0)).expect("integer SSSP has CUDA kernels");
}

#[test]
fn the_f32_reference_is_this_files_dijkstra_and_within_the_bound_of_the_exact_distances() {
    use switchyard::graph::reference::{sssp_distances_f32, sssp_distances_float};
    for (name, graph) in graphs() {
        let mine = dijkstra_f32(&graph, 0);
        let library = sssp_distances_f32(&graph, 0).expect("reference");
        let library_bits: Vec<u32> =
            library.iter().map(|d| if d.is_finite() { d.to_bits() } else { u32::MAX }).collect();
        assert_eq!(library_bits, mine, "{name}: the two f32 Dijkstras differ");
        let exact = sssp_distances_float(&graph, 0).expect("reference");
        let reached = exact.iter().filter(|d| d.is_finite()).count() as u64;
        let rel = float_tolerance(reached).rel;
        for (v, (&e, &a)) in exact.iter().zip(&library).enumerate() {
            assert_eq!(e.is_finite(), a.is_finite(), "{name}: vertex {v} reached in one only");
            if e.is_finite() {
                assert!((f64::from(a) - e).abs() <= rel * e, "{name}: vertex {v}: {a} vs {e}");
            }
        }
    }
}
