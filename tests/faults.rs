//! Injected faults on every runtime (`RuntimeKind::ALL`, so a runtime that lands later is
//! covered by these bodies): degraded and failed links, stragglers and delayed deliveries.
//! Each run either finishes with a result validated against the sequential reference or
//! stops with an error that names the fault; a run held up by a fault ends at the virtual
//! time or event limit with what each stream waits for. The fault hooks are the backend's
//! and the interconnect model's, never a runtime's.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::backend::sim::{SimBackend, SimConfig};
use switchyard::backend::{
    Backend, BackendError, BufferSlice, CompletionKind, DeviceId, ElemType, StreamPriority, Token,
};
use switchyard::driver::{
    BackendSetup, RunError, RunOutput, RunSpec, RuntimeKind, SimSetup, builtin_kernels, execute,
    prepare, run,
};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::runtime::bsp::BspOptions;
use switchyard::runtime::groute::worklist::WorklistOptions;
use switchyard_sim::fault::FaultSpec;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

fn graph() -> Csr {
    let g =
        generate(&GeneratorSpec::parse("rmat:scale=9,ef=8,seed=5").expect("spec")).expect("rmat");
    with_uniform_weights(&g, 1, 64, 3).expect("weights")
}

fn hub(g: &Csr) -> u32 {
    (0..g.num_vertices()).max_by_key(|&v| g.degree(v)).unwrap_or(0)
}

fn spec(runtime: RuntimeKind, algorithm: Algorithm, gpus: u32, source: u32, seed: u64) -> RunSpec {
    RunSpec {
        gpus,
        runtime,
        algorithm,
        params: AlgorithmParams { source, ..AlgorithmParams::default() },
        partitioner: "random".into(),
        seed,
        bsp: BspOptions::default(),
        groute: WorklistOptions::default(),
        gum: Default::default(),
        atos: Default::default(),
        validate: true,
        command_line: vec!["faults".into()],
    }
}

fn machine(name: &str, faults: &[String]) -> Topology {
    let specs: Vec<FaultSpec> =
        faults.iter().map(|f| f.parse().unwrap_or_else(|e| panic!("{f}: {e}"))).collect();
    Topology::bundled(name).expect("bundled").with_faults(&specs).expect("faults resolve")
}

fn run_on(
    topology: Topology,
    fidelity: Fidelity,
    spec: &RunSpec,
    graph: &Csr,
) -> Result<RunOutput, RunError> {
    let setup = BackendSetup::Sim(SimSetup { topology, fidelity, trace: false, jitter_ps: 0 });
    run(graph, "rmat:scale=9,ef=8,seed=5", spec, &setup)
}

/// The algorithms every runtime is checked with: BFS and SSSP (both run on every runtime).
fn algorithms(runtime: RuntimeKind) -> Vec<Algorithm> {
    [Algorithm::Bfs, Algorithm::Sssp].into_iter().filter(|&a| runtime.runs(a)).collect()
}

fn assert_valid(output: &RunOutput, case: &str) {
    let v = output.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{case}: {v}");
}

#[test]
fn degraded_links_slow_runs_that_still_validate() {
    let g = graph();
    // On the H200 machine every GPU pair crosses the GPUs' NVSwitch links.
    let faults: Vec<String> = (0..4)
        .map(|i| format!("link-degrade:link=gpu{i}-nvswitch,bandwidth=0.001,latency_ns=20000"))
        .collect();
    for runtime in RuntimeKind::ALL {
        for algorithm in algorithms(runtime) {
            for fidelity in [Fidelity::Flow, Fidelity::Packet] {
                let case = format!("{} {} {fidelity}", runtime.name(), algorithm.name());
                let spec = spec(runtime, algorithm, 4, hub(&g), 1);
                let healthy = run_on(machine("hgx-h200x4", &[]), fidelity, &spec, &g).unwrap();
                let slow = run_on(machine("hgx-h200x4", &faults), fidelity, &spec, &g)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_valid(&slow, &case);
                assert_eq!(slow.report.topology.faults, faults, "{case}: the report lists them");
                assert!(
                    slow.report.time_ps > healthy.report.time_ps,
                    "{case}: {} ps degraded, {} ps healthy",
                    slow.report.time_ps,
                    healthy.report.time_ps
                );
            }
        }
    }
}

#[test]
fn failed_links_reroute_traffic_and_runs_validate() {
    let g = graph();
    // DGX-1 NVLinks of GPUs 0-3; their pairs fall back to PCIe, or stage through host
    // memory over QPI where they have no other peer path.
    let links = ["gpu0-gpu3", "gpu0-gpu1", "gpu1-gpu2", "gpu2-gpu3", "gpu0-gpu4"];
    for runtime in RuntimeKind::ALL {
        for algorithm in algorithms(runtime) {
            for fidelity in [Fidelity::Flow, Fidelity::Packet] {
                let case = format!("{} {} {fidelity}", runtime.name(), algorithm.name());
                let spec = spec(runtime, algorithm, 8, hub(&g), 2);
                let healthy = run_on(machine("dgx1-v100", &[]), fidelity, &spec, &g).unwrap();
                // From the start: the failed links carry nothing.
                let at_start: Vec<String> =
                    links.iter().map(|l| format!("link-fail:link={l}")).collect();
                let out = run_on(machine("dgx1-v100", &at_start), fidelity, &spec, &g)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_valid(&out, &case);
                for link in &out.report.links {
                    for l in links {
                        let (a, b) = l.split_once('-').unwrap();
                        assert!(
                            !link.name.contains(&format!("{a}->{b} "))
                                && !link.name.contains(&format!("{b}->{a} ")),
                            "{case}: failed link carried {} bytes: {}",
                            link.bytes,
                            link.name
                        );
                    }
                }
                // Half-way through: transfers in flight restart on the new routes.
                let half_ns = healthy.report.time_ps / 2000;
                let mid_run: Vec<String> =
                    links.iter().map(|l| format!("link-fail:link={l},at_ns={half_ns}")).collect();
                let out = run_on(machine("dgx1-v100", &mid_run), fidelity, &spec, &g)
                    .unwrap_or_else(|e| panic!("{case} (mid-run): {e}"));
                assert_valid(&out, &format!("{case} (mid-run)"));
            }
        }
    }
}

#[test]
fn a_link_failure_that_cuts_a_gpu_off_stops_the_run_naming_the_link() {
    let g = graph();
    // On Summit each GPU reaches the rest of the machine only through its socket.
    for runtime in RuntimeKind::ALL {
        for at in ["at_ns=0", "at_us=20"] {
            let case = format!("{} {at}", runtime.name());
            let spec = spec(runtime, Algorithm::Bfs, 4, hub(&g), 3);
            let faults = vec![format!("link-fail:link=n1_cpu-n1_gpu,{at}")];
            let error = run_on(machine("summit-ib-x8", &faults), Fidelity::Flow, &spec, &g)
                .map(|o| o.report.time_ps)
                .expect_err(&case);
            let text = error.to_string();
            assert!(text.contains("simulated fault: "), "{case}: {text}");
            assert!(
                text.contains("link `n1_cpu`-`n1_gpu` (nvlink2, 2 lanes, bundled:summit-ib-x8"),
                "{case}: {text}"
            );
            assert!(text.contains("no route from `n1_cpu` to `n1_gpu`"), "{case}: {text}");
        }
    }
}

#[test]
fn a_straggler_slows_its_gpu_and_runs_validate() {
    let g = graph();
    for runtime in RuntimeKind::ALL {
        for algorithm in algorithms(runtime) {
            let case = format!("{} {}", runtime.name(), algorithm.name());
            let mut spec = spec(runtime, algorithm, 4, hub(&g), 4);
            // GUM's OSteal counts the straggler's slow supersteps as synchronisation cost and
            // may evict it sooner than the healthy run shrinks, after which it runs no
            // kernels: its kernel time would not compare. The fault is checked without it.
            spec.gum.osteal = false;
            let healthy = run_on(machine("dgx1-v100", &[]), Fidelity::Flow, &spec, &g).unwrap();
            let faults = vec!["straggler:gpu=2,slowdown=20".to_string()];
            let slow = run_on(machine("dgx1-v100", &faults), Fidelity::Flow, &spec, &g)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_valid(&slow, &case);
            let kernel = |o: &RunOutput, gpu: usize| o.report.gpus[gpu].kernel_ps;
            assert!(slow.report.time_ps > healthy.report.time_ps, "{case}");
            // Its kernels took far longer than on the healthy run; the others' did not.
            assert!(kernel(&slow, 2) > 5 * kernel(&healthy, 2), "{case}");
            assert!(kernel(&slow, 0) < 2 * kernel(&healthy, 0), "{case}");
        }
    }
}

#[test]
fn delayed_deliveries_change_the_schedule_and_runs_validate_reproducibly() {
    let g = graph();
    let faults = vec!["delay:max_ns=20000,p=0.5".to_string()];
    for runtime in RuntimeKind::ALL {
        for algorithm in algorithms(runtime) {
            for seed in [1, 2] {
                let case = format!("{} {} seed {seed}", runtime.name(), algorithm.name());
                let spec = spec(runtime, algorithm, 4, hub(&g), seed);
                let healthy = run_on(machine("dgx1-v100", &[]), Fidelity::Flow, &spec, &g).unwrap();
                let delayed = || {
                    run_on(machine("dgx1-v100", &faults), Fidelity::Flow, &spec, &g)
                        .unwrap_or_else(|e| panic!("{case}: {e}"))
                };
                let (a, b) = (delayed(), delayed());
                assert_valid(&a, &case);
                assert!(a.report.time_ps > healthy.report.time_ps, "{case}");
                let json = |o: &RunOutput| serde_json::to_string(&o.report).unwrap();
                assert_eq!(json(&a), json(&b), "{case}: the same seed gives the same report");
            }
        }
    }
}

/// Copies on two streams of gpu0 to gpu1 under `faults`: the tokens in delivery order.
fn deliveries(faults: &[String], seed: u64) -> Vec<u64> {
    let topology = machine("dgx1-v100", faults);
    let config = SimConfig { seed, ..SimConfig::default() };
    let mut b = SimBackend::new(topology, 2, builtin_kernels(), config).unwrap();
    let src = b.alloc(DeviceId(0), ElemType::U32, 1024, "src").unwrap();
    let dst = b.alloc(DeviceId(1), ElemType::U32, 1024, "dst").unwrap();
    let streams = [
        b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap(),
        b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap(),
    ];
    for i in 0..4u64 {
        for (s, &stream) in streams.iter().enumerate() {
            let slice = BufferSlice { buffer: src, offset: 0, len: 1024 };
            let to = BufferSlice { buffer: dst, offset: 0, len: 1024 };
            b.copy(stream, slice, to, Some(Token(10 * s as u64 + i))).unwrap();
        }
    }
    let mut order = Vec::new();
    while let Some(c) = b.next_completion().unwrap() {
        assert!(matches!(c.kind, CompletionKind::Copy { .. }));
        order.push(c.token.0);
    }
    order
}

#[test]
fn delays_reorder_streams_but_never_one_streams_operations() {
    let healthy = deliveries(&[], 0);
    assert_eq!(healthy, vec![0, 10, 1, 11, 2, 12, 3, 13], "the two streams alternate");
    let faults = vec!["delay:max_ns=50000".to_string()];
    let mut reordered = 0;
    for seed in 0..20 {
        let order = deliveries(&faults, seed);
        assert_eq!(order.len(), 8);
        for stream in [0, 10] {
            let mine: Vec<u64> = order.iter().copied().filter(|t| t / 10 * 10 == stream).collect();
            assert_eq!(mine, (stream..stream + 4).collect::<Vec<_>>(), "seed {seed}: {order:?}");
        }
        reordered += u32::from(order != healthy);
    }
    assert!(reordered >= 10, "only {reordered} of 20 seeds interleaved the streams otherwise");
}

/// Runs `spec` on `topology` with `config` (which carries the limits).
fn run_limited(
    topology: Topology,
    spec: &RunSpec,
    graph: &Csr,
    config: SimConfig,
) -> Result<(), RunError> {
    let prepared = prepare(graph, spec)?;
    let mut backend = SimBackend::new(topology, spec.gpus, builtin_kernels(), config)?;
    execute(&mut backend, &prepared, spec).map(|_| ())
}

#[test]
fn limits_end_runs_held_up_by_faults_and_say_what_waits() {
    let g = graph();
    let faults = vec!["straggler:gpu=1,slowdown=1000000".to_string()];
    for runtime in RuntimeKind::ALL {
        let spec = spec(runtime, Algorithm::Bfs, 4, hub(&g), 5);
        let config = SimConfig { seed: 5, time_limit_ps: 1_000_000_000, ..SimConfig::default() };
        let e = run_limited(machine("dgx1-v100", &faults), &spec, &g, config)
            .expect_err("a virtual millisecond is not enough");
        let text = e.to_string();
        assert!(text.contains("limit reached: virtual time limit of 1000000000 ps"), "{text}");
        assert!(text.contains("on gpu1: kernel `") && text.contains("running"), "{text}");
        assert!(text.contains("faults: straggler:gpu=1,slowdown=1000000"), "{text}");
        let config = SimConfig { seed: 5, event_limit: 50, ..SimConfig::default() };
        let e = run_limited(machine("dgx1-v100", &[]), &spec, &g, config)
            .expect_err("50 events are not enough");
        let text = e.to_string();
        assert!(text.contains("limit reached: event limit of 50 reached at"), "{text}");
        assert!(text.contains("stream ") || text.contains("transfers in flight"), "{text}");
        assert!(matches!(e, RunError::Runtime(_) | RunError::Backend(BackendError::Limit(_))));
    }
}
