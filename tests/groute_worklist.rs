//! Groute's distributed worklist end to end on the simulator: BFS, SSSP and residual
//! PageRank validated on every topology at 1, 2 and the maximum GPU count, with soft
//! priority and the fused worker; many seeds of jittered latencies and message order; the
//! growth of full worklists; determinism; bad options; and the paper's claims 1 and 4.
//!
//! The many-seed test runs `GROUTE_SEEDS` seeds (20 by default; `just groute-seeds` runs
//! 200). A failing run prints the command that reproduces it.

use switchyard::algo::Algorithm;
use switchyard::driver::RuntimeKind;
use switchyard::graph::Csr;
use switchyard::graph::generate::with_uniform_weights;
use switchyard::runtime::groute::worklist::{RingOrder, WorklistOptions};
use switchyard_sim::topology::{Topology, bundled_names};

mod groute_support;
use groute_support::{APPS, check, config, generated, real_graph, reproduce};

fn every_topology(graph: &Csr, source_arg: &str, partitioner: &str) {
    let weighted = with_uniform_weights(graph, 1, 64, 3).expect("weights");
    for name in bundled_names() {
        let max = Topology::bundled(name).expect("bundled").gpus.len() as u32;
        let mut counts = vec![1, 2.min(max), max];
        counts.dedup();
        for gpus in counts {
            for algorithm in APPS {
                let g = if algorithm.needs_weights() { &weighted } else { graph };
                let mut c = config(name, gpus, algorithm);
                c.spec.partitioner = partitioner.into();
                check(g, source_arg, &c);
            }
        }
    }
}

#[test]
fn every_application_on_every_topology_on_small_real_graphs() {
    for name in ["chesapeake.mtx", "power.graph", "wiki-Vote.txt"] {
        every_topology(&real_graph(name), &format!("--graph {name}"), "random");
    }
}

#[test]
fn every_application_on_every_topology_on_the_social_graph() {
    let name = "facebook_combined.txt";
    every_topology(&real_graph(name), &format!("--graph {name}"), "random");
}

#[test]
fn every_application_on_every_topology_on_the_road_and_mesh_graphs() {
    // Groute partitions with METIS (section 4.6.1); random partitions of a road graph make
    // every BFS level a message around the ring.
    for name in ["luxembourg_osm.mtx", "delaunay_n16.mtx"] {
        every_topology(&real_graph(name), &format!("--graph {name}"), "metis");
    }
}

#[test]
fn soft_priority_fused_worker_and_the_widest_ring_give_the_same_answers() {
    let graph = real_graph("facebook_combined.txt");
    let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
    for (topology, gpus) in [("dgx1-v100", 5), ("m60x8-pcie", 8)] {
        for algorithm in APPS {
            let g = if algorithm.needs_weights() { &weighted } else { &graph };
            for (priority, fused, ring) in [
                (true, false, RingOrder::Index),
                (false, true, RingOrder::Widest),
                (true, true, RingOrder::Index),
            ] {
                if priority && algorithm == Algorithm::PrResidual {
                    continue;
                }
                let mut c = config(topology, gpus, algorithm);
                c.spec.groute.priority_delta = priority.then_some(match algorithm {
                    Algorithm::Bfs => 1,
                    _ => 64,
                });
                c.spec.groute.fused = fused;
                c.spec.groute.ring = ring;
                let out = check(g, "--graph facebook_combined.txt", &c);
                let groute = out.report.groute.expect("groute report");
                assert_eq!(groute.priority_raises > 0, priority, "{}", reproduce("", &c));
            }
        }
    }
}

/// `GROUTE_SEEDS` seeds (default 20) per application and variant, each with jittered
/// transfer and kernel times, on an odd and an even GPU count.
#[test]
fn every_application_validates_and_terminates_under_many_seeds_of_jitter() {
    let seeds: u64 = std::env::var("GROUTE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let graph = real_graph("power.graph");
    let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
    let variants = [(None, false), (Some(64), false), (None, true)];
    for seed in 0..seeds {
        for (topology, gpus) in [("dgx1-v100", 3), ("m60x8-pcie", 4)] {
            for algorithm in APPS {
                for (delta, fused) in variants {
                    if delta.is_some() && algorithm == Algorithm::PrResidual {
                        continue;
                    }
                    let g = if algorithm.needs_weights() { &weighted } else { &graph };
                    let mut c = config(topology, gpus, algorithm);
                    c.spec.seed = seed;
                    c.sim.jitter_ps = 2_000_000; // up to 2 us on every transfer and kernel
                    c.spec.params.source = (seed * 7919 % 4941) as u32;
                    c.spec.groute.priority_delta =
                        delta.map(|d| if algorithm == Algorithm::Bfs { 1 } else { d });
                    c.spec.groute.fused = fused;
                    c.spec.groute.packet_items = 64; // many small packets: more interleavings
                    check(g, "--graph power.graph", &c);
                }
            }
        }
    }
}

#[test]
fn the_same_seed_gives_a_byte_identical_report_and_another_seed_another_schedule() {
    let graph = with_uniform_weights(&real_graph("power.graph"), 1, 64, 3).expect("weights");
    let json = |seed: u64| {
        let mut c = config("dgx1-v100", 4, Algorithm::Sssp);
        c.spec.seed = seed;
        c.spec.partitioner = "hash".into(); // the same partition for every seed
        c.sim.jitter_ps = 1_000_000;
        serde_json::to_string(&check(&graph, "power", &c).report).expect("json")
    };
    assert_eq!(json(11), json(11));
    assert_ne!(json(11), json(12), "jitter from another seed changes the schedule");
}

#[test]
fn a_full_worklist_grows_and_says_so_without_losing_work() {
    let graph = real_graph("facebook_combined.txt");
    for algorithm in APPS {
        for fused in [false, true] {
            let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
            let g = if algorithm.needs_weights() { &weighted } else { &graph };
            let mut c = config("dgx1-v100", 2, algorithm);
            c.spec.groute.initial_worklist_items = 8;
            c.spec.groute.out_items = 8; // raised to the largest out-degree
            c.spec.groute.auto_size = false;
            c.spec.groute.fused = fused;
            let out = check(g, "--graph facebook_combined.txt", &c);
            let groute = out.report.groute.as_ref().expect("groute report");
            if algorithm != Algorithm::PrResidual {
                // PageRank starts with every owned vertex: its worklist is sized for them.
                assert!(!groute.growths.is_empty(), "{}: no growth", algorithm.name());
            }
            assert!(out.report.summary_table().contains("grew") || groute.growths.is_empty());
        }
    }
}

#[test]
fn bad_groute_options_are_errors_that_say_what_to_do() {
    let graph = real_graph("chesapeake.mtx");
    let mut c = config("dgx1-v100", 2, Algorithm::Bfs);
    c.spec.groute.priority_delta = Some(0);
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("--priority-delta must be at least 1"), "{err}");
    let mut c = config("dgx1-v100", 2, Algorithm::PrResidual);
    c.spec.groute.priority_delta = Some(4);
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("PageRank has no priority"), "{err}");
    let mut c = config("dgx1-v100", 2, Algorithm::Bfs);
    c.spec.groute.packet_items = 0;
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("--packet-size (0)"), "{err}");
    let c = config("dgx1-v100", 2, Algorithm::Dobfs);
    let err = c.run(&graph, "chesapeake").unwrap_err().to_string();
    assert!(err.contains("use --runtime bsp"), "{err}");
}

/// Claim 1 (seed 000 section 5.2): soft priorities cut SSSP work items on a road-like graph
/// by at least 10x at 4 GPUs.
#[test]
fn claim_1_soft_priority_cuts_sssp_work_on_a_road_like_graph_tenfold_at_4_gpus() {
    let spec = "rgg:n=30000,degree=3,seed=1,weights=1..64";
    let graph = generated(spec);
    let work = |delta: Option<u64>| {
        let mut c = config("m60x8-pcie", 4, Algorithm::Sssp);
        c.spec.groute.priority_delta = delta;
        check(&graph, &format!("--generate {spec}"), &c).report.work.work_items
    };
    let (plain, prioritised) = (work(None), work(Some(128)));
    assert!(
        plain >= 10 * prioritised,
        "work items without soft priority {plain}, with {prioritised}: less than 10x"
    );
}

/// Claim 4: Groute beats the bulk-synchronous runtime for BFS and SSSP on a road graph at 2
/// or more GPUs on the M60 tree (both partitioned with METIS, as Groute's paper does; Groute
/// with its own worker choice, the CLI's default: the fused worker on a road graph).
#[test]
fn claim_4_groute_beats_bulk_synchronous_bfs_and_sssp_on_a_road_graph_on_the_m60() {
    let graph = real_graph("luxembourg_osm.mtx");
    let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
    for gpus in [2, 4, 8] {
        for algorithm in [Algorithm::Bfs, Algorithm::Sssp] {
            let g = if algorithm.needs_weights() { &weighted } else { &graph };
            let time = |runtime| {
                let mut c = config("m60x8-pcie", gpus, algorithm);
                c.spec.runtime = runtime;
                c.spec.partitioner = "metis".into();
                c.spec.groute.auto_fused = true;
                check(g, "--graph luxembourg_osm.mtx", &c).report.time_ps
            };
            let (groute, bsp) = (time(RuntimeKind::Groute), time(RuntimeKind::Bsp));
            assert!(groute < bsp, "{} x{gpus}: groute {groute} ps, bsp {bsp} ps", algorithm.name());
        }
    }
}

/// Issue 23: on a road grid, two GPUs with the old defaults (random partition, no soft
/// priority) did many times the one-GPU BFS work, in hundreds of launches, each a host round
/// trip (on two real H100s: 69 ms on one GPU, 24 s on two). With Groute's own defaults
/// (`auto`: METIS on a road-like graph; soft priority on for BFS on several GPUs) two GPUs do
/// about the one-GPU work in a tenth of the launches and a fraction of the time.
#[test]
fn groute_defaults_keep_bfs_on_two_gpus_of_a_road_grid_near_the_one_gpu_work() {
    let spec = "grid2d:w=300,h=300,drop=0.1";
    let graph = generated(spec);
    let run = |gpus, partitioner: &str, auto_priority| {
        let mut c = config("dgx1-v100", gpus, Algorithm::Bfs);
        c.spec.params.source = 150 * 300; // row 150, column 0
        c.spec.partitioner = partitioner.into();
        c.spec.groute.fused = true;
        c.spec.groute.fused_max_rounds = 100_000;
        c.spec.groute.auto_priority = auto_priority;
        check(&graph, &format!("--generate {spec}"), &c).report
    };
    let launches =
        |r: &switchyard::driver::report::RunReport| r.gpus.iter().map(|g| g.kernels).sum::<u64>();
    let one = run(1, "auto", true);
    let old = run(2, "random", false);
    let new = run(2, "auto", true);
    let groute = new.groute.as_ref().expect("groute report");
    assert_eq!(new.partition.partitioner, "metis");
    assert_eq!(groute.priority_delta, Some(switchyard::algo::bfs::AUTO_PRIORITY_DELTA_LEVELS));
    assert_eq!(one.groute.as_ref().expect("groute report").priority_delta, None, "one GPU");
    let items = |r: &switchyard::driver::report::RunReport| r.work.work_items;
    assert!(items(&old) >= 5 * items(&one), "old {} vs one GPU {}", items(&old), items(&one));
    assert!(
        items(&new) * 100 <= items(&one) * 110,
        "new {} vs one GPU {}: more than 10 % extra work",
        items(&new),
        items(&one)
    );
    assert!(
        launches(&new) * 5 <= launches(&old),
        "launches: new {} vs old {}",
        launches(&new),
        launches(&old)
    );
    assert!(new.time_ps * 4 <= old.time_ps, "new {} ps vs old {} ps", new.time_ps, old.time_ps);
}

#[test]
fn topology_driven_cc_runs_through_the_driver_on_every_gpu_count() {
    let graph = real_graph("delaunay_n16.mtx");
    for gpus in 1..=8 {
        let out =
            check(&graph, "--graph delaunay_n16.mtx", &config("dgx1-v100", gpus, Algorithm::Cc));
        assert_eq!(out.report.runtime.name, "groute");
        assert!(out.report.work.edges_visited > 0);
    }
}

#[test]
fn every_application_at_every_gpu_count_of_every_topology() {
    let graph = real_graph("power.graph");
    let weighted = with_uniform_weights(&graph, 1, 64, 3).expect("weights");
    for name in bundled_names() {
        let max = Topology::bundled(name).expect("bundled").gpus.len() as u32;
        for gpus in 1..=max {
            for algorithm in APPS.into_iter().chain([Algorithm::Cc]) {
                let g = if algorithm.needs_weights() { &weighted } else { &graph };
                check(g, "--graph power.graph", &config(name, gpus, algorithm));
            }
        }
    }
}

#[test]
fn a_worklist_run_gives_back_all_the_device_memory_it_took() {
    use switchyard::algo::{Algorithm, AlgorithmParams, GrouteOperators};
    use switchyard::backend::sim::{SimBackend, SimConfig};
    use switchyard::backend::{Backend, DeviceId};
    use switchyard::runtime::groute::worklist::run as run_worklist;
    let graph = with_uniform_weights(&real_graph("power.graph"), 1, 64, 3).expect("weights");
    let topology = Topology::bundled("dgx1-v100").expect("bundled");
    let mut backend =
        SimBackend::new(topology, 4, switchyard::driver::builtin_kernels(), SimConfig::default())
            .expect("backend");
    let owner: Vec<u32> = (0..graph.num_vertices()).map(|v| v % 4).collect();
    let params = AlgorithmParams { epsilon: 1e-3, ..AlgorithmParams::default() };
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::PrResidual] {
        let Some(GrouteOperators::Worklist(app)) = algorithm.instance(&params).groute() else {
            panic!("{} has worklist operators", algorithm.name());
        };
        run_worklist(&mut backend, &graph, &owner, 4, app.as_ref(), &WorklistOptions::default())
            .expect("run");
        for d in 0..4 {
            let name = algorithm.name();
            assert_eq!(backend.memory_in_use_bytes(DeviceId(d)), 0, "{name} on gpu{d}");
        }
    }
}
