//! The bulk-synchronous runtime end to end on the simulator: every algorithm on every
//! topology at 1, 2 and the maximum GPU count on every real graph, validated against the
//! references; random small graphs x topologies x GPU counts x partitioners (proptest);
//! options that cannot work give clear errors.

use proptest::prelude::*;
use std::path::PathBuf;
use switchyard::algo::pagerank::PrDirection;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{RunError, RunSpec, RuntimeKind, SimRun, SimSetup};
use switchyard::graph::generate::with_uniform_weights;
use switchyard::graph::{BuildOptions, Csr, LoadOptions, load_graph};
use switchyard::runtime::bsp::{BspOptions, Communication, Duplication, Exchange, PackageForm};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::{Topology, bundled_names};

/// A real graph of the test data, in the repository (`tests/data/graphs/`, sources and
/// terms in the README there).
fn graph_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs").join(name)
}

fn real_graph(name: &str) -> Csr {
    load_graph(&graph_path(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .csr
}

fn config(topology: &Topology, gpus: u32, algorithm: Algorithm) -> SimRun {
    SimRun {
        spec: RunSpec {
            gpus,
            runtime: RuntimeKind::Bsp,
            algorithm,
            params: AlgorithmParams { epsilon: 1e-3, ..AlgorithmParams::default() },
            partitioner: "random".into(),
            seed: 7,
            bsp: BspOptions::default(),
            groute: Default::default(),
            atos: Default::default(),
            gum: Default::default(),
            validate: true,
            command_line: vec!["test".into()],
        },
        sim: SimSetup {
            topology: topology.clone(),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        },
    }
}

fn check(graph: &Csr, name: &str, config: &SimRun) {
    let output = config.run(graph, name).unwrap_or_else(|e| {
        panic!(
            "{} on {name}, {} x{}: {e}",
            config.spec.algorithm.name(),
            config.sim.topology.name,
            config.spec.gpus
        )
    });
    let v = output.report.validation.as_ref().expect("validated");
    assert!(
        v.is_ok(),
        "{} on {name}, {} x{} (seed {}): {v}",
        config.spec.algorithm.name(),
        config.sim.topology.name,
        config.spec.gpus,
        config.spec.seed
    );
}

/// Calls `f` for every bundled topology at 1, 2 and its maximum GPU count.
fn for_every_topology_and_gpu_count(mut f: impl FnMut(&Topology, u32)) {
    for topology_name in bundled_names() {
        let topology = Topology::bundled(topology_name).expect("bundled");
        let max = topology.gpus.len() as u32;
        let mut counts = vec![1, 2.min(max), max];
        counts.dedup();
        for gpus in counts {
            f(&topology, gpus);
        }
    }
}

/// Every algorithm on every topology at 1, 2 and the maximum GPU count, BFS and SSSP from
/// `source`.
fn every_topology(graph: &Csr, name: &str, algorithms: &[Algorithm], source: u32) {
    let weighted = with_uniform_weights(graph, 1, 64, 3).expect("weights");
    for_every_topology_and_gpu_count(|topology, gpus| {
        for &algorithm in algorithms {
            let g = if algorithm.needs_weights() { &weighted } else { graph };
            let mut c = config(topology, gpus, algorithm);
            c.spec.params.source = source;
            check(g, name, &c);
        }
    });
}

#[test]
fn every_algorithm_on_every_topology_on_small_real_graphs() {
    for name in ["chesapeake.mtx", "power.graph", "facebook_combined.txt", "wiki-Vote.txt"] {
        every_topology(&real_graph(name), name, &Algorithm::ALL, 0);
    }
}

#[test]
fn every_algorithm_on_every_topology_on_the_road_and_mesh_graphs() {
    for name in ["luxembourg_osm.mtx", "delaunay_n16.mtx"] {
        every_topology(&real_graph(name), name, &Algorithm::ALL, 0);
    }
}

/// The web crawl (3.2M arcs): one test per algorithm so the test runner spreads them over
/// the cores; BFS and SSSP start at the highest-degree vertex (vertex 0 reaches little).
fn web_crawl(algorithm: Algorithm) {
    let graph = real_graph("cnr-2000.txt.gz");
    let source = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
    every_topology(&graph, "cnr-2000", &[algorithm], source);
}

#[test]
fn web_crawl_bfs_on_every_topology() {
    web_crawl(Algorithm::Bfs);
}

#[test]
fn web_crawl_dobfs_on_every_topology() {
    web_crawl(Algorithm::Dobfs);
}

#[test]
fn web_crawl_sssp_on_every_topology() {
    web_crawl(Algorithm::Sssp);
}

#[test]
fn web_crawl_cc_on_every_topology() {
    web_crawl(Algorithm::Cc);
}

#[test]
fn web_crawl_pagerank_on_every_topology() {
    web_crawl(Algorithm::Pr);
}

#[test]
fn web_crawl_residual_pagerank_on_every_topology() {
    web_crawl(Algorithm::PrResidual);
}

#[test]
fn broadcast_with_duplicate_all_gives_the_same_answers() {
    let graph = real_graph("facebook_combined.txt");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    for algorithm in [Algorithm::Bfs, Algorithm::Cc, Algorithm::Pr] {
        for communication in [Communication::Selective, Communication::Broadcast] {
            let mut c = config(&dgx1, 4, algorithm);
            c.spec.bsp = BspOptions {
                duplication: Duplication::All,
                communication,
                ..BspOptions::default()
            };
            check(&graph, "facebook", &c);
        }
    }
}

#[test]
fn peer_reads_match_copies_and_take_less_time_and_memory() {
    let graph = real_graph("facebook_combined.txt");
    let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        let g = if algorithm.needs_weights() { &weighted } else { &graph };
        let run = |exchange| {
            let mut c = config(&dgx1, 4, algorithm);
            c.spec.bsp.exchange = exchange;
            check(g, "facebook", &c);
            c.run(g, "facebook").expect("runs")
        };
        let (copies, peer) = (run(Exchange::Copies), run(Exchange::PeerReads));
        let name = algorithm.name();
        assert_eq!(copies.values, peer.values, "{name}: values differ");
        assert_eq!(copies.report.supersteps, peer.report.supersteps, "{name}");
        assert_eq!(copies.report.work.messages, peer.report.work.messages, "{name}: messages");
        assert!(copies.report.work.messages > 0, "{name}: four GPUs exchange something");
        // Nor do they allocate receive packages.
        for (c, p) in copies.report.gpus.iter().zip(&peer.report.gpus) {
            assert!(
                p.memory_peak_bytes < c.memory_peak_bytes,
                "{name}: peer reads peak {} B, copies {} B",
                p.memory_peak_bytes,
                c.memory_peak_bytes
            );
        }
        // Two host round trips fewer a superstep.
        assert!(
            peer.report.time_ps < copies.report.time_ps,
            "{name}: peer reads {} ps, copies {} ps",
            peer.report.time_ps,
            copies.report.time_ps
        );
    }
}

#[test]
fn bfs_bitmaps_give_the_pairs_answers() {
    // facebook (hubs) and the power grid (degrees at most 19), at 2, 3 and 4 GPUs of the
    // DGX-1 (peer reads: its first four are fully connected by NVLink).
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    for (name, source) in [("facebook_combined.txt", 0), ("power.graph", 3)] {
        let graph = real_graph(name);
        for gpus in [2, 3, 4] {
            let run = |packages| {
                let mut c = config(&dgx1, gpus, Algorithm::Bfs);
                c.spec.params.source = source;
                c.spec.bsp.packages = packages;
                check(&graph, name, &c);
                c.run(&graph, name).expect("runs")
            };
            let (pairs, bits) = (run(PackageForm::Pairs), run(PackageForm::Bits));
            let what = format!("{name} x{gpus}");
            assert_eq!(pairs.values, bits.values, "{what}: levels differ");
            assert_eq!(pairs.report.supersteps, bits.report.supersteps, "{what}");
            assert_eq!(pairs.report.work.messages, bits.report.work.messages, "{what}");
            assert!(pairs.report.work.messages > 0, "{what}: the GPUs exchange something");
            // The bitmaps went: each receiver reads whole bitmaps, not 8 bytes a vertex.
            assert_ne!(pairs.report.work.bytes_sent, bits.report.work.bytes_sent, "{what}");
        }
    }
}

#[test]
fn pagerank_pull_gives_the_push_answers_and_messages() {
    // facebook (hubs of up to 1,045 arcs) and the power grid, on 1 to 4 GPUs of the DGX-1,
    // one-hop proxies, and duplicate-all with broadcast at 3.
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    for name in ["facebook_combined.txt", "power.graph"] {
        let graph = real_graph(name);
        for (gpus, all) in [(1, false), (2, false), (3, false), (4, false), (3, true)] {
            let run = |direction| {
                let mut c = config(&dgx1, gpus, Algorithm::Pr);
                c.spec.params.pr_direction = direction;
                if all {
                    c.spec.bsp.duplication = Duplication::All;
                    c.spec.bsp.communication = Communication::Broadcast;
                }
                check(&graph, name, &c);
                c.run(&graph, name).expect("runs")
            };
            let (push, pull) = (run(PrDirection::Push), run(PrDirection::Pull));
            let what = format!("{name} x{gpus} duplicate-all {all}");
            // The simulator sums each vertex's shares in the same order both ways (sources
            // ascending), so the ranks are the same to the bit.
            assert_eq!(push.aux, pull.aux, "{what}: ranks differ");
            assert_eq!(push.report.supersteps, pull.report.supersteps, "{what}");
            assert_eq!(push.report.work.messages, pull.report.work.messages, "{what}");
            assert_eq!(push.report.work.bytes_sent, pull.report.work.bytes_sent, "{what}");
            assert_eq!(push.report.work.edges_visited, pull.report.work.edges_visited, "{what}");
        }
    }
}

#[test]
fn bitmaps_for_an_algorithm_without_one_value_per_superstep_are_refused() {
    let graph = with_uniform_weights(&real_graph("chesapeake.mtx"), 1, 9, 1).expect("weights");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut c = config(&dgx1, 2, Algorithm::Sssp);
    c.spec.bsp.packages = PackageForm::Bits;
    let e = c.run(&graph, "chesapeake").expect_err("sssp sends distances, not one value");
    let text = e.to_string();
    for needle in ["--bsp-packages bits", "sssp", "use --bsp-packages pairs"] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    // One GPU sends nothing: bitmaps asked for there are no error.
    let mut c = config(&dgx1, 1, Algorithm::Sssp);
    c.spec.bsp.packages = PackageForm::Bits;
    check(&graph, "chesapeake", &c);
}

#[test]
fn peer_reads_without_peer_access_are_refused_with_the_fix() {
    let graph = real_graph("chesapeake.mtx");
    let summit = Topology::bundled("summit-ib-x8").unwrap();
    let mut c = config(&summit, 8, Algorithm::Bfs);
    c.spec.bsp.exchange = Exchange::PeerReads;
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("has no peer access to"), "{err}");
    assert!(err.contains("--bsp-exchange copies"), "{err}");
    // Auto falls back to copies there.
    c.spec.bsp.exchange = Exchange::Auto;
    check(&graph, "chesapeake", &c);
}

#[test]
fn packet_level_fidelity_gives_the_same_answers() {
    let graph = real_graph("power.graph");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut c = config(&dgx1, 8, Algorithm::Bfs);
    c.sim.fidelity = Fidelity::Packet;
    check(&graph, "power", &c);
}

#[test]
fn more_gpus_than_the_topology_has_is_an_error() {
    let graph = real_graph("chesapeake.mtx");
    let station = Topology::bundled("dgx-station-v100x4").unwrap();
    let err = config(&station, 5, Algorithm::Bfs).run(&graph, "chesapeake").unwrap_err();
    assert!(err.to_string().contains("has 4 GPUs"), "{err}");
}

#[test]
fn sssp_without_weights_is_an_error_that_names_the_fix() {
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let err = config(&dgx1, 2, Algorithm::Sssp).run(&graph, "chesapeake").unwrap_err();
    assert!(matches!(err, RunError::Graph(_)), "{err:?}");
    assert!(err.to_string().contains("--weights"), "{err}");
}

#[test]
fn a_source_out_of_range_is_an_error() {
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut c = config(&dgx1, 2, Algorithm::Bfs);
    c.spec.params.source = 39;
    let err = c.run(&graph, "chesapeake").unwrap_err();
    assert!(err.to_string().contains("bfs source (--source) 39 is out of range"), "{err}");
}

#[test]
fn additive_updates_without_an_apply_step_are_refused_with_broadcast() {
    // Found by the swarm: broadcast added each residual delta on every GPU.
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut c = config(&dgx1, 2, Algorithm::PrResidual);
    c.spec.bsp = BspOptions {
        duplication: Duplication::All,
        communication: Communication::Broadcast,
        ..BspOptions::default()
    };
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("broadcast would add each one on every GPU"), "{err}");
    assert!(err.contains("--communication selective"), "{err}");
}

#[test]
fn broadcast_without_duplicate_all_is_an_error() {
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut c = config(&dgx1, 2, Algorithm::Bfs);
    c.spec.bsp.communication = Communication::Broadcast;
    let err = c.run(&graph, "chesapeake").unwrap_err();
    assert!(err.to_string().contains("needs duplicate-all"), "{err}");
}

#[test]
fn a_graph_that_does_not_fit_gets_the_out_of_memory_error_of_a_real_gpu() {
    // A machine whose GPUs have 1 MiB: the graph's arrays do not fit.
    let toml = include_str!("data/tiny-memory.toml");
    let tiny = Topology::from_str("tiny-memory.toml", toml).expect("tiny topology loads");
    let graph = real_graph("delaunay_n16.mtx");
    let err = config(&tiny, 1, Algorithm::Bfs).run(&graph, "delaunay").unwrap_err();
    assert!(err.to_string().contains("out of device memory on GPU 0"), "{err}");
}

fn small_graph() -> impl Strategy<Value = Csr> {
    (2u32..40, proptest::collection::vec((0u32..40, 0u32..40), 0..120), any::<bool>()).prop_map(
        |(n, edges, directed)| {
            let edges: Vec<(u32, u32)> = edges.into_iter().map(|(u, v)| (u % n, v % n)).collect();
            Csr::from_edges(n, &edges, None, directed, BuildOptions::default()).unwrap()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_graphs_topologies_gpu_counts_and_partitioners_validate(
        graph in small_graph(),
        topology_index in 0usize..9,
        gpu_pick in 0u32..8,
        partitioner in prop::sample::select(vec!["random", "biased-random", "seg", "hash"]),
        algorithm in prop::sample::select(Algorithm::ALL.to_vec()),
        seed in 0u64..1000,
    ) {
        let names = bundled_names();
        let topology = Topology::bundled(names[topology_index % names.len()]).unwrap();
        let gpus = 1 + gpu_pick % (topology.gpus.len() as u32).min(graph.num_vertices());
        let graph = if algorithm.needs_weights() { with_uniform_weights(&graph, 1, 64, seed).unwrap() } else { graph };
        let mut c = config(&topology, gpus, algorithm);
        c.spec.partitioner = partitioner.into();
        c.spec.seed = seed;
        let output = c.run(&graph, "random").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let v = output.report.validation.unwrap();
        prop_assert!(v.is_ok(), "{} on {} x{gpus} ({partitioner}, seed {seed}): {v}", algorithm.name(), topology.name);
    }
}

#[test]
fn direction_optimizing_bfs_skips_edges_on_a_social_graph() {
    let graph = real_graph("facebook_combined.txt");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let edges = |algorithm| {
        let output = config(&dgx1, 4, algorithm).run(&graph, "facebook").unwrap();
        assert!(output.report.validation.as_ref().unwrap().is_ok());
        (
            output.report.work.edges_visited,
            output.report.runtime.bsp.expect("a bsp run reports its options"),
        )
    };
    let (bfs_edges, _) = edges(Algorithm::Bfs);
    let (dobfs_edges, options) = edges(Algorithm::Dobfs);
    assert!(dobfs_edges < bfs_edges, "dobfs visited {dobfs_edges} edges, bfs {bfs_edges}");
    assert_eq!(options.communication, Communication::Broadcast, "dobfs must broadcast");
}

#[test]
fn a_pulling_primitive_without_broadcast_is_refused_by_the_runtime() {
    use switchyard::algo::dobfs::DirectionOptimizingBfs;
    use switchyard::backend::sim::{SimBackend, SimConfig};
    use switchyard::driver::builtin_kernels;
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut backend = SimBackend::new(dgx1, 2, builtin_kernels(), SimConfig::default()).unwrap();
    let owner: Vec<u32> = (0..graph.num_vertices()).map(|v| v % 2).collect();
    let err = switchyard::runtime::bsp::run(
        &mut backend,
        &graph,
        &owner,
        2,
        &DirectionOptimizingBfs::new(0),
        &BspOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("must broadcast (seed 002 section VI-A)"), "{err}");
}

#[test]
fn a_primitive_that_pulls_both_ways_is_refused_by_the_runtime() {
    use switchyard::backend::ElemType;
    use switchyard::backend::sim::{SimBackend, SimConfig};
    use switchyard::driver::builtin_kernels;
    use switchyard::runtime::bsp::{BspPrimitive, Combiner};
    // A user's primitive asking for the whole graph's in-arcs and for its GPUs' own
    // transposed arcs, which would share the reverse slots.
    struct BothWays;
    impl BspPrimitive for BothWays {
        fn name(&self) -> &'static str {
            "both-ways"
        }
        fn advance_kernel(&self) -> &'static str {
            "pr_ldbc_pull"
        }
        fn value_elem(&self) -> ElemType {
            ElemType::F64
        }
        fn combiner(&self) -> Combiner {
            Combiner::AddF64
        }
        fn initial_value(&self, _v: u32, _n: u32) -> u32 {
            0
        }
        fn initially_active(&self, _v: u32) -> bool {
            true
        }
        fn needs_reverse(&self) -> bool {
            true
        }
        fn needs_local_transpose(&self) -> bool {
            true
        }
    }
    let graph = real_graph("chesapeake.mtx");
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut backend = SimBackend::new(dgx1, 2, builtin_kernels(), SimConfig::default()).unwrap();
    let owner: Vec<u32> = (0..graph.num_vertices()).map(|v| v % 2).collect();
    let options = BspOptions {
        duplication: Duplication::All,
        communication: Communication::Broadcast,
        ..BspOptions::default()
    };
    let err = switchyard::runtime::bsp::run(&mut backend, &graph, &owner, 2, &BothWays, &options)
        .unwrap_err()
        .to_string();
    for needle in ["both-ways", "may pull one way only"] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
}

#[test]
fn results_hold_under_jittered_latencies_and_kernel_times() {
    let graph = with_uniform_weights(&real_graph("facebook_combined.txt"), 1, 64, 5).unwrap();
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::PrResidual] {
        let mut times = std::collections::BTreeSet::new();
        for seed in 0..8 {
            let mut c = config(&dgx1, 4, algorithm);
            c.spec.seed = seed;
            // A seed-independent partition: timing differences come from the jitter alone.
            c.spec.partitioner = "seg".into();
            c.sim.jitter_ps = 2_000_000;
            let output = c.run(&graph, "facebook").unwrap();
            let v = output.report.validation.as_ref().unwrap();
            assert!(v.is_ok(), "{} seed {seed} with jitter: {v}", algorithm.name());
            times.insert(output.report.time_ps);
            let again = c.run(&graph, "facebook").unwrap();
            assert_eq!(again.report.time_ps, output.report.time_ps, "seed {seed} not reproducible");
        }
        assert!(times.len() > 1, "{}: jitter changed no timing", algorithm.name());
    }
}

/// `primitive` on one GPU through the runtime directly: the outcome and the kernels launched.
fn alone(
    graph: &Csr,
    primitive: &dyn switchyard::runtime::bsp::BspPrimitive,
    loop_frontier: u64,
) -> (switchyard::runtime::bsp::BspOutcome, u64) {
    use switchyard::backend::Backend;
    use switchyard::backend::sim::{SimBackend, SimConfig};
    use switchyard::driver::builtin_kernels;
    let dgx1 = Topology::bundled("dgx1-v100").unwrap();
    let mut backend = SimBackend::new(dgx1, 1, builtin_kernels(), SimConfig::default()).unwrap();
    let owner = vec![0; graph.num_vertices() as usize];
    let options = BspOptions { loop_frontier, ..BspOptions::default() };
    let outcome =
        switchyard::runtime::bsp::run(&mut backend, graph, &owner, 1, primitive, &options).unwrap();
    let kernels = backend.stats().devices[0].kernels;
    (outcome, kernels)
}

fn bfs_alone(
    graph: &Csr,
    source: u32,
    loop_frontier: u64,
) -> (switchyard::runtime::bsp::BspOutcome, u64) {
    alone(graph, &switchyard::algo::bfs::Bfs { source }, loop_frontier)
}

#[test]
fn one_gpu_bfs_runs_its_supersteps_in_a_device_loop_with_the_same_answers() {
    let graph = real_graph("luxembourg_osm.mtx");
    let expected = switchyard::graph::reference::bfs_levels(&graph, 0).unwrap();
    let (host, host_kernels) = bfs_alone(&graph, 0, 0);
    assert_eq!(host.values, expected, "supersteps through the host");
    // Alone, a superstep is one advance: no split, no merge.
    assert_eq!(host_kernels, u64::from(host.supersteps), "one launch per superstep");
    assert!(host.supersteps > 1000, "luxembourg is deep: {} levels", host.supersteps);
    // The default limit keeps luxembourg's frontier in the loop: one launch per LOOP_LEVELS.
    // A limit of 40 vertices makes it leave and come back many times.
    for limit in [switchyard::runtime::bsp::DEFAULT_LOOP_FRONTIER, 40] {
        let (looped, kernels) = bfs_alone(&graph, 0, limit);
        assert_eq!(looped.values, expected, "loop up to {limit} vertices");
        assert_eq!(looped.supersteps, host.supersteps);
        assert_eq!(looped.frontier_sizes, host.frontier_sizes);
        assert_eq!(looped.edges_visited, host.edges_visited);
        assert!(kernels < host_kernels, "{kernels} launches, {host_kernels} without the loop");
        assert!(
            looped.compute_time_ps < host.compute_time_ps,
            "simulated {} ps with the loop, {} without",
            looped.compute_time_ps,
            host.compute_time_ps
        );
        let leaves = looped.frontier_sizes.iter().filter(|&&f| f > limit).count() as u64;
        if limit == 40 {
            assert!(leaves > 10 && kernels > leaves, "{leaves} supersteps above {limit}");
        } else {
            let launches = looped.supersteps.div_ceil(switchyard::runtime::bsp::LOOP_LEVELS);
            assert_eq!(kernels, u64::from(launches), "{} levels", looped.supersteps);
        }
    }
}

#[test]
fn the_device_loop_hands_a_growing_frontier_back_to_the_host() {
    // A social graph's frontier grows past a small limit at once: the loop runs a superstep
    // or two, the host takes the big ones, and the loop takes the tail again.
    let graph = real_graph("facebook_combined.txt");
    let expected = switchyard::graph::reference::bfs_levels(&graph, 0).unwrap();
    let (host, _) = bfs_alone(&graph, 0, 0);
    let (looped, kernels) = bfs_alone(&graph, 0, 16);
    assert_eq!(looped.values, expected);
    assert_eq!(looped.frontier_sizes, host.frontier_sizes);
    assert!(kernels >= 2, "{kernels} launches");
}

#[test]
fn sssp_and_cc_on_one_gpu_give_the_same_supersteps_with_the_device_loop() {
    use switchyard::algo::cc::ConnectedComponents;
    use switchyard::algo::sssp::{Sssp, SsspWeights};
    let graph = with_uniform_weights(&real_graph("luxembourg_osm.mtx"), 1, 64, 3).unwrap();
    let sssp = Sssp { source: 0, weights: SsspWeights::Int };
    let expected: Vec<u32> = switchyard::graph::reference::sssp_distances_int(&graph, 0)
        .unwrap()
        .into_iter()
        .map(|d| u32::try_from(d).unwrap_or(u32::MAX))
        .collect();
    for primitive in [&sssp as &dyn switchyard::runtime::bsp::BspPrimitive, &ConnectedComponents] {
        let (host, host_kernels) = alone(&graph, primitive, 0);
        if primitive.name() == "sssp" {
            assert_eq!(host.values, expected, "sssp distances");
        }
        for limit in [switchyard::runtime::bsp::DEFAULT_LOOP_FRONTIER, 40] {
            let (looped, kernels) = alone(&graph, primitive, limit);
            let what = format!("{} with the loop up to {limit}", primitive.name());
            assert_eq!(looped.values, host.values, "{what}");
            assert_eq!(looped.frontier_sizes, host.frontier_sizes, "{what}");
            assert_eq!(looped.edges_visited, host.edges_visited, "{what}");
            assert!(kernels < host_kernels, "{what}: {kernels} launches, {host_kernels} without");
        }
    }
}
