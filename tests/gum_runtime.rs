//! GUM on the simulator: every algorithm it has operators for validates against the
//! sequential references on 1-8 GPUs of the DGX-1, reports are byte-identical for a seed,
//! every superstep leaves a consistent record, and bad options are refused by name.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{RunOutput, RunSpec, RuntimeKind, SimRun, SimSetup};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::runtime::bsp::{DEFAULT_LOOP_FRONTIER, Split};
use switchyard::runtime::gum::balance::BusyGap;
use switchyard::runtime::gum::planner::{ReductionTree, Triggers};
use switchyard::runtime::gum::{FstealDecision, GumOptions, GumReport, OstealDecision, OstealMove};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

fn graph(spec: &str) -> Csr {
    let g = generate(&GeneratorSpec::parse(spec).expect("spec")).expect("generates");
    with_uniform_weights(&g, 1, 64, 3).expect("weights")
}

fn config(algorithm: Algorithm, gpus: u32, gum: GumOptions, seed: u64) -> SimRun {
    config_on("dgx1-v100", algorithm, gpus, gum, seed)
}

/// The run on bundled machine `topology`.
fn config_on(
    topology: &str,
    algorithm: Algorithm,
    gpus: u32,
    gum: GumOptions,
    seed: u64,
) -> SimRun {
    SimRun {
        spec: RunSpec {
            gpus,
            runtime: RuntimeKind::Gum,
            algorithm,
            params: AlgorithmParams { iterations: 5, ..AlgorithmParams::default() },
            partitioner: "random".into(),
            seed,
            bsp: Default::default(),
            groute: Default::default(),
            gum,
            atos: Default::default(),
            validate: true,
            command_line: vec!["switchyard".into(), "run".into(), "(gum test)".into()],
        },
        sim: SimSetup {
            topology: Topology::bundled(topology).expect("bundled"),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        },
    }
}

fn no_steal() -> GumOptions {
    GumOptions { fsteal: false, osteal: false, ..GumOptions::default() }
}

#[test]
fn every_algorithm_validates_on_one_to_eight_gpus() {
    let g = graph("rmat:scale=10,ef=8,seed=2");
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        for (gpus, gum) in
            [(1, no_steal()), (3, no_steal()), (8, no_steal()), (8, Default::default())]
        {
            let out = config(algorithm, gpus, gum, 5)
                .run(&g, "rmat10")
                .unwrap_or_else(|e| panic!("{algorithm:?} on {gpus} GPUs: {e}"));
            let validation = out.report.validation.as_ref().expect("validated");
            assert!(validation.is_ok(), "{algorithm:?} on {gpus} GPUs: {validation:?}");
            let gum = out.report.gum.as_ref().expect("a gum report");
            assert_eq!(gum.iterations.len() as u32, out.report.supersteps);
        }
    }
}

#[test]
fn records_are_consistent_and_reports_deterministic() {
    let g = graph("grid2d:w=40,h=40,drop=0.1,seed=1");
    let run = || {
        let mut out =
            config(Algorithm::Sssp, 4, no_steal(), 9).run(&g, "grid").expect("run succeeds");
        out.report.git_sha = "<masked>".into();
        out
    };
    let (a, b) = (run(), run());
    let text = |o: &switchyard::driver::RunOutput| serde_json::to_string(&o.report).unwrap();
    assert_eq!(text(&a), text(&b), "same seed, same report");
    let gum = a.report.gum.as_ref().unwrap();
    let mut total_frontier = 0u64;
    for (k, r) in gum.iterations.iter().enumerate() {
        assert_eq!(r.iteration as usize, k);
        assert_eq!(r.fsteal, FstealDecision::Off);
        assert_eq!(r.stolen_edges, 0);
        assert_eq!(r.decision_ps, 0);
        for g in 0..4 {
            // Busy and starved time add up to the compute phase on every GPU.
            assert_eq!(r.busy_ps[g] + r.starved_ps[g], r.compute_ps.max(r.busy_ps[g]));
            assert_eq!(r.processed_edges[g], r.active_edges[g]);
        }
        assert!(r.time_ps >= r.compute_ps);
        total_frontier += r.frontier.iter().sum::<u64>();
    }
    assert_eq!(total_frontier, a.report.work.frontier_sizes.iter().sum::<u64>());
}

#[test]
fn bad_options_are_refused_by_name() {
    let g = graph("rmat:scale=8,ef=4,seed=1");
    let bad = |gum: GumOptions| {
        config(Algorithm::Bfs, 2, gum, 1).run(&g, "rmat8").expect_err("refused").to_string()
    };
    let t = Triggers { t1_min_max_edges: 0, ..Triggers::default() };
    assert!(bad(GumOptions { triggers: t, ..GumOptions::default() }).contains("--gum-t1"));
    let t = Triggers { t4_hub_in_degree: 0, ..Triggers::default() };
    assert!(bad(GumOptions { triggers: t, ..GumOptions::default() }).contains("--gum-t4"));
    let mut o = GumOptions::default();
    o.solver.max_workers = 0;
    assert!(bad(o).contains("--gum-solver-max-workers"));
    let o = GumOptions { osteal_interval: 0, ..GumOptions::default() };
    assert!(bad(o).contains("--gum-osteal-interval"));
}

/// Stealing on the simulator: a thief reads the victim's lists through peer access, which
/// the simulator supports from the backend trait commit on (Atos's milestone); until that
/// commit is merged the simulator hands the kernel empty peer buffers.
#[test]

fn stealing_moves_edges_and_still_validates() {
    let g = graph("rmat:scale=12,ef=16,seed=4");
    let triggers =
        Triggers { t1_min_max_edges: 1, t2_min_imbalance_edges: 1, ..Triggers::default() };
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc] {
        let gum =
            GumOptions { triggers, osteal: false, fsteal_forced: true, ..GumOptions::default() };
        let out = config(algorithm, 8, gum, 3).run(&g, "rmat12").expect("run succeeds");
        assert!(out.report.validation.as_ref().unwrap().is_ok());
        let report = out.report.gum.unwrap();
        assert!(report.stolen_edges > 0, "{algorithm:?} stole nothing");
        assert!(report.planned > 0);
        // A thief reads its victim through peer access: never across the DGX-1's QPI pairs
        // (no NVLink, 15.76 GB/s over PCIe, no peer access).
        for r in &report.iterations {
            for (victim, range) in r.ranges.iter().filter(|(v, r)| *v != r.worker) {
                let b = report.bandwidth_bytes_per_s[*victim as usize][range.worker as usize];
                assert!(b >= 25_000_000_000, "{victim} -> {}: {b} B/s", range.worker);
            }
        }
    }
}

/// Every record's owners follow the reduction tree: the GPUs that own fragments are
/// `R(m)` for the record's worker count, every fragment is on itself or on a survivor, and
/// evicted GPUs process nothing.
fn check_ownership(report: &GumReport) {
    let tree = ReductionTree::build(
        report
            .bandwidth_bytes_per_s
            .iter()
            .enumerate()
            .map(|(a, row)| {
                row.iter().enumerate().map(|(b, &x)| if a == b { 1 } else { x }).collect()
            })
            .collect(),
    )
    .expect("tree");
    for r in &report.iterations {
        let m = r.workers as usize;
        let survivors = tree.workers(m);
        let mut owners: Vec<u32> = r.hosts.clone();
        owners.sort_unstable();
        owners.dedup();
        assert_eq!(owners, survivors, "superstep {}", r.iteration);
        for (f, &h) in r.hosts.iter().enumerate() {
            assert_eq!(h, tree.owner(m, f as u32), "superstep {}: fragment {f}", r.iteration);
        }
        for g in 0..r.hosts.len() as u32 {
            if !survivors.contains(&g) {
                assert_eq!(r.processed_edges[g as usize], 0, "evicted GPU {g} worked");
                assert_eq!(r.busy_ps[g as usize], 0, "evicted GPU {g} ran kernels");
            }
        }
    }
}

#[test]
fn osteal_shrinks_a_road_like_long_tail_and_still_validates() {
    let g = graph("rgg:n=20000,degree=3,seed=7");
    let gum = GumOptions { fsteal: false, ..GumOptions::default() };
    let run = || {
        let mut out = config(Algorithm::Sssp, 8, gum, 2).run(&g, "rgg").expect("run succeeds");
        out.report.git_sha = "<masked>".into();
        out
    };
    let (out, again) = (run(), run());
    let text = |o: &switchyard::driver::RunOutput| serde_json::to_string(&o.report).unwrap();
    assert_eq!(text(&out), text(&again), "same seed, same report");
    assert!(out.report.validation.as_ref().unwrap().is_ok());
    let report = out.report.gum.as_ref().unwrap();
    assert!(report.osteal_runs > 0 && report.ownership_moves > 0, "no move: {report:?}");
    let shrunk = report.iterations.iter().filter(|r| r.workers < 8).count();
    assert!(shrunk * 2 > report.iterations.len(), "the tail ran on 8 GPUs: {shrunk} shrunk");
    assert!(
        report
            .iterations
            .iter()
            .any(|r| matches!(r.osteal, OstealDecision::Moved { from: 8, to } if to < 8))
    );
    check_ownership(report);
    // The decisions and moves are charged and accounted.
    let moves: u64 = report.iterations.iter().map(|r| r.move_ps).sum();
    assert_eq!(moves, report.move_ps);
    assert!(report.move_ps > 0);
}

/// A path of 300 vertices into a dense random blob (20,000 vertices, 400,000 arcs, directed).
fn lollipop() -> Csr {
    let (path, blob, arcs) = (300u32, 20_000u32, 400_000usize);
    let mut edges: Vec<(u32, u32)> = (0..path).map(|v| (v, v + 1)).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        path + (state % u64::from(blob)) as u32
    };
    for _ in 0..arcs {
        edges.push((next(), next()));
    }
    Csr::from_edges(path + blob, &edges, None, true, Default::default()).expect("csr")
}

/// The lollipop: BFS's first 300 supersteps hold one vertex each (OSteal evicts GPUs), then
/// the blob's frontier explodes (ownership goes back).
#[test]
fn ownership_is_handed_back_when_work_grows() {
    let g = lollipop();
    for fsteal in [false, true] {
        let gum = GumOptions { fsteal, ..GumOptions::default() };
        let out = config(Algorithm::Bfs, 8, gum, 4).run(&g, "lollipop").expect("run succeeds");
        assert!(out.report.validation.as_ref().unwrap().is_ok());
        let report = out.report.gum.as_ref().unwrap();
        check_ownership(report);
        let moves = ownership_moves(report);
        let shrink = moves.iter().position(|&(a, b)| b < a).expect("a shrink");
        assert!(moves[shrink..].iter().any(|&(a, b)| b > a), "no hand-back: {moves:?}");
    }
}

/// Seed 001 Fig. 1/8 in shape: on a skewed (biased-random) partition of a scale-free graph
/// the slowest GPU's busy time per superstep is far above the fastest's, and FSteal narrows
/// the gap. The run's `busy_gap` (what `switchyard run` prints as `gum balance:` on either
/// backend) is the one its superstep records give.
#[test]
fn fsteal_narrows_the_busy_gap_on_a_skewed_partition() {
    let g = graph("rmat:scale=16,ef=16,seed=4");
    let hub = (0..g.num_vertices()).max_by_key(|&v| g.degree(v)).expect("vertices");
    let run = |fsteal: bool| {
        // Without the round trips in the pays check: R-MAT 16's plans save less than them
        // (`pays.rs`), and the mechanism's effect on the gap is what is checked here.
        let gum =
            GumOptions { fsteal, osteal: false, plan_round_trips_ps: 0, ..GumOptions::default() };
        let mut c = config(Algorithm::Sssp, 4, gum, 1);
        c.spec.partitioner = "biased-random".into();
        c.spec.params.source = hub;
        let out = c.run(&g, "rmat16").expect("run succeeds");
        assert!(out.report.validation.as_ref().expect("validated").is_ok());
        let gum = out.report.gum.expect("a gum report");
        assert_eq!(gum.busy_gap, BusyGap::over(&gum.iterations), "fsteal {fsteal}");
        (gum.busy_gap, gum.planned)
    };
    let ((off, _), (on, plans)) = (run(false), run(true));
    assert!(off.supersteps > 2 && off.weighted_gap > 0.3, "no skew to narrow: {off:?}");
    assert!(plans > 0, "FSteal made no plan: {on:?}");
    assert!(
        on.weighted_gap < 0.8 * off.weighted_gap,
        "FSteal's gap {:.3} vs {:.3} without: not narrowed by a fifth",
        on.weighted_gap,
        off.weighted_gap
    );
}

// GUM's OSteal with the paper's move (`--gum-osteal-move extended`, issue 21, §IV-B and
// §V-A step 2): an evicted GPU stays as extended memory (its fragment's topology stays
// there), the fragment's values and residual frontier go to the survivor by a peer copy,
// and the survivor runs the fragment's kernels reading that topology through peer access.
// The evicted GPU launches nothing. Every GUM algorithm validates with it, ownership goes
// back when work grows, a seed gives a byte-identical report, and a move costs far less
// simulated time than the re-upload's.

/// A run on the DGX H100 (NVSwitch: every pair has peer access, so a move may go anywhere).
fn run(g: &Csr, algorithm: Algorithm, gpus: u32, gum: GumOptions, seed: u64) -> RunOutput {
    let config = config_on("dgx-h100x8", algorithm, gpus, gum, seed);
    let mut out = config.run(g, "g").unwrap_or_else(|e| panic!("{algorithm:?}: {e}"));
    out.report.git_sha = "<masked>".into();
    out
}

fn options(fsteal: bool, osteal_move: OstealMove) -> GumOptions {
    GumOptions { fsteal, osteal_move, ..GumOptions::default() }
}

fn moved(report: &GumReport) -> bool {
    report
        .iterations
        .iter()
        .any(|r| matches!(r.osteal, OstealDecision::Moved { from, to } if to < from))
}

/// Every superstep: the workers are the GPUs hosting their own fragment, every other
/// fragment is hosted by a worker, a GPU hosting nothing launches no kernel at all (no
/// kernel-busy time over the whole superstep) and processes no edge, and every active
/// edge is processed once (by its fragment's host or a thief).
fn check_extended(report: &GumReport) {
    for r in &report.iterations {
        let peers = r.hosts.len();
        let survivors: Vec<u32> = (0..peers as u32).filter(|&g| r.hosts[g as usize] == g).collect();
        assert_eq!(survivors.len() as u32, r.workers, "superstep {}", r.iteration);
        for g in 0..peers {
            if r.hosts[g] == g as u32 {
                continue;
            }
            assert!(survivors.contains(&r.hosts[g]), "superstep {}: host of {g}", r.iteration);
            assert_eq!(r.processed_edges[g], 0, "superstep {}: evicted GPU {g}", r.iteration);
            assert_eq!(r.kernel_ps[g], 0, "superstep {}: evicted GPU {g} ran", r.iteration);
        }
        let processed: u64 = r.processed_edges.iter().sum();
        let active: u64 = r.active_edges.iter().sum();
        assert_eq!(processed, active, "superstep {}: every edge processed once", r.iteration);
    }
}

#[test]
fn every_algorithm_validates_with_the_extended_move() {
    let g = graph("rgg:n=6000,degree=3,seed=7");
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc, Algorithm::Pr] {
        for fsteal in [false, true] {
            let out = run(&g, algorithm, 8, options(fsteal, OstealMove::Extended), 2);
            let validation = out.report.validation.as_ref().expect("validated");
            assert!(validation.is_ok(), "{algorithm:?} fsteal {fsteal}: {validation:?}");
            let report = out.report.gum.as_ref().expect("a gum report");
            if algorithm != Algorithm::Pr {
                // PageRank's additive values never move (OSteal is off for it).
                assert!(moved(report), "{algorithm:?} fsteal {fsteal}: no move");
                check_extended(report);
            }
        }
    }
}

/// FSteal forced (every superstep's triggers fire) on the DGX-1, where the extended move
/// reaches only worker counts whose hosts have peer access to their fragments (8 -> 4):
/// plans are made among the survivors beside hosted fragments and every algorithm still
/// validates.
#[test]
fn fsteal_plans_beside_hosted_fragments() {
    let g = graph("rgg:n=6000,degree=3,seed=7");
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc] {
        let triggers =
            Triggers { t1_min_max_edges: 1, t2_min_imbalance_edges: 1, ..Triggers::default() };
        let gum =
            GumOptions { fsteal_forced: true, triggers, ..options(true, OstealMove::Extended) };
        let out = config(algorithm, 8, gum, 5).run(&g, "rgg").expect("run");
        assert!(out.report.validation.as_ref().unwrap().is_ok(), "{algorithm:?}");
        let report = out.report.gum.as_ref().unwrap();
        check_extended(report);
        let hosted_plans = report
            .iterations
            .iter()
            .filter(|r| r.plan.is_some() && r.hosts.iter().enumerate().any(|(f, &h)| h != f as u32))
            .count();
        assert!(hosted_plans > 0, "{algorithm:?}: no plan beside a hosted fragment");
    }
}

#[test]
fn the_extended_move_is_deterministic() {
    let g = graph("rgg:n=6000,degree=3,seed=7");
    let once = || {
        let out = run(&g, Algorithm::Sssp, 8, options(true, OstealMove::Extended), 3);
        serde_json::to_string(&out.report).expect("json")
    };
    assert_eq!(once(), once(), "same seed, same report");
}

/// A move copies a fragment's values and frontier (a few hundred kilobytes over NVLink):
/// far less simulated time than gathering everything and uploading every fragment again.
#[test]
fn the_extended_move_costs_far_less_than_the_reupload() {
    let g = graph("rgg:n=20000,degree=3,seed=7");
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc] {
        let per_move = |m: OstealMove| {
            let out = run(&g, algorithm, 8, options(false, m), 2);
            assert!(out.report.validation.as_ref().unwrap().is_ok());
            let r = out.report.gum.as_ref().unwrap().clone();
            assert!(r.ownership_moves > 0, "{algorithm:?} {m:?}: no move");
            (r.move_ps as f64 / f64::from(r.ownership_moves), r, out.report.time_ps)
        };
        let (reupload, r_re, t_re) = per_move(OstealMove::Reupload);
        let (extended, r_ex, t_ex) = per_move(OstealMove::Extended);
        check_extended(&r_ex);
        let ratio = extended / reupload;
        eprintln!(
            "{algorithm:?}: a move {extended:.0} ps extended, {reupload:.0} ps re-uploaded \
             (ratio {ratio:.4}); moves {} / {}; runs {t_ex} / {t_re} ps",
            r_ex.ownership_moves, r_re.ownership_moves
        );
        assert!(ratio < 0.5, "{algorithm:?}: extended {extended} ps, re-upload {reupload} ps");
    }
}

/// The lollipop (a path into a dense blob): BFS's path supersteps evict GPUs through the
/// extended move, then the blob's frontier grows on the survivor and ownership goes back
/// (fragments' values and frontiers copied home); the run validates and evicted GPUs run
/// nothing while evicted.
#[test]
fn the_extended_move_hands_ownership_back_when_work_grows() {
    let g = lollipop();
    for fsteal in [false, true] {
        let out = run(&g, Algorithm::Bfs, 8, options(fsteal, OstealMove::Extended), 4);
        assert!(out.report.validation.as_ref().unwrap().is_ok(), "fsteal {fsteal}");
        let report = out.report.gum.as_ref().unwrap();
        check_extended(report);
        let moves = ownership_moves(report);
        let shrink = moves.iter().position(|&(a, b)| b < a).expect("a shrink");
        assert!(
            moves[shrink..].iter().any(|&(a, b)| b > a),
            "fsteal {fsteal}: no hand-back: {moves:?}"
        );
    }
}

// A single worker (one GPU, or OSteal's last) runs its supersteps in the bulk-synchronous
// runtime's device-side loop (`GumOptions::loop_frontier`, BSP's default frontier) instead of one
// host round trip each: same answers and supersteps, far less time on a long, narrow graph.

/// GUM on one GPU with the loop (the default) and without it (`loop_frontier` 0).
#[test]
fn one_gpu_runs_its_supersteps_in_the_device_loop() {
    let g = with_uniform_weights(&graph("grid2d:w=600,h=2,seed=1"), 1, 64, 7).expect("weights");
    for algorithm in [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Cc] {
        let run = |loop_frontier: u64| {
            let gum = GumOptions { loop_frontier, ..GumOptions::default() };
            let out = config(algorithm, 1, gum, 1).run(&g, "ladder").expect("run succeeds");
            assert!(out.report.validation.as_ref().expect("validated").is_ok(), "{algorithm:?}");
            out
        };
        let (host, looped) = (run(0), run(DEFAULT_LOOP_FRONTIER));
        assert_eq!(looped.report.work.frontier_sizes, host.report.work.frontier_sizes);
        let records = &looped.report.gum.as_ref().expect("a gum report").iterations;
        assert_eq!(records.len(), looped.report.work.frontier_sizes.len(), "{algorithm:?}");
        for (k, r) in records.iter().enumerate() {
            assert_eq!(r.iteration as usize, k);
            assert_eq!(r.frontier[0], looped.report.work.frontier_sizes[k]);
        }
        let in_loop = records.iter().filter(|r| r.device_loop).count();
        assert!(in_loop * 10 >= records.len() * 9, "{algorithm:?}: {in_loop} of {}", records.len());
        assert!(host.report.gum.expect("a gum report").iterations.iter().all(|r| !r.device_loop));
        assert!(
            2 * looped.report.time_ps < host.report.time_ps,
            "{algorithm:?}: {} ps with the loop, {} ps without",
            looped.report.time_ps,
            host.report.time_ps
        );
    }
}

/// OSteal's last worker loops too, and leaves the loop where Alg. 2 is due: on the lollipop
/// the path's supersteps run in the loop after the shrink, and ownership still goes back.
#[test]
fn osteals_last_worker_loops_and_still_hands_ownership_back() {
    let g = lollipop();
    let gum = GumOptions { loop_frontier: DEFAULT_LOOP_FRONTIER, ..GumOptions::default() };
    let out = config(Algorithm::Bfs, 8, gum, 4).run(&g, "lollipop").expect("run");
    assert!(out.report.validation.as_ref().expect("validated").is_ok());
    let report = out.report.gum.as_ref().expect("a gum report");
    check_ownership(report);
    let looped: Vec<_> = report.iterations.iter().filter(|r| r.device_loop).collect();
    assert!(looped.len() > 100, "{} supersteps in the loop", looped.len());
    for r in &looped {
        assert_eq!(r.workers, 1);
        assert!(r.frontier.iter().filter(|&&f| f > 0).count() <= 1);
    }
    let interval = GumOptions::default().osteal_interval as usize;
    // No run of looped supersteps is longer than OSteal's interval: Alg. 2 sees the host.
    let longest = report.iterations.split(|r| !r.device_loop).map(<[_]>::len).max().unwrap_or(0);
    assert!(longest <= interval, "{longest} looped supersteps in a row");
    let moved_back = report
        .iterations
        .iter()
        .any(|r| matches!(r.osteal, OstealDecision::Moved { from, to } if to > from));
    assert!(moved_back, "no hand-back");
}

/// PageRank on GUM pulls by default, as on the bulk-synchronous runtime (each fragment
/// carries the transpose of its own arcs), and pushes when asked: the same ranks to the bit,
/// supersteps and messages either way, validated on 1-3 GPUs, and the pull faster on one
/// GPU of a scale-free graph (no atomic per arc).
#[test]
fn pagerank_pulls_or_pushes_as_asked_with_the_same_ranks() {
    use switchyard::algo::pagerank::PrDirection;
    let g = graph("rmat:scale=11,ef=8,seed=4");
    for gpus in 1..=3 {
        let run = |direction| {
            let mut c = config(Algorithm::Pr, gpus, GumOptions::default(), 1);
            c.spec.params.pr_direction = direction;
            let out = c.run(&g, "rmat11").expect("runs");
            assert!(out.report.validation.as_ref().expect("validated").is_ok(), "{direction:?}");
            out
        };
        let (push, pull) = (run(PrDirection::Push), run(PrDirection::Pull));
        assert_eq!(push.aux, pull.aux, "{gpus} GPUs: ranks differ");
        assert_eq!(push.report.supersteps, pull.report.supersteps);
        assert_eq!(push.report.work.messages, pull.report.work.messages);
        assert_eq!(push.report.work.bytes_sent, pull.report.work.bytes_sent);
        if gpus == 1 {
            assert!(
                pull.report.time_ps < push.report.time_ps,
                "pull {} ps, push {} ps",
                pull.report.time_ps,
                push.report.time_ps
            );
        }
    }
}

/// BFS splits at discovery (the routed advance, no split kernel) in supersteps where nothing
/// is stolen or delegated, with the same levels, supersteps and messages as with a split
/// kernel after every advance; with FSteal forced, supersteps with plans fall back to the
/// split and the run still validates.
#[test]
fn bfs_splits_in_the_advance_when_nothing_is_stolen() {
    let g = graph("rmat:scale=11,ef=8,seed=4");
    for gpus in 2..=3 {
        let run = |split, gum: GumOptions| {
            let out = config(Algorithm::Bfs, gpus, GumOptions { split, ..gum }, 1)
                .run(&g, "rmat11")
                .expect("runs");
            assert!(out.report.validation.as_ref().expect("validated").is_ok(), "{split:?}");
            out
        };
        let plain = GumOptions { osteal: false, fsteal: false, ..GumOptions::default() };
        let (kernel, routed) = (run(Split::Kernel, plain), run(Split::InAdvance, plain));
        assert_eq!(kernel.values, routed.values, "{gpus} GPUs: levels differ");
        assert_eq!(kernel.report.supersteps, routed.report.supersteps);
        assert_eq!(kernel.report.work.messages, routed.report.work.messages);
        let launched = |o: &RunOutput| o.report.gpus.iter().map(|g| g.kernels).sum::<u64>();
        // One split fewer per GPU and superstep.
        assert_eq!(
            launched(&kernel) - launched(&routed),
            u64::from(gpus * kernel.report.supersteps),
            "{gpus} GPUs"
        );
        let triggers =
            Triggers { t1_min_max_edges: 1, t2_min_imbalance_edges: 1, ..Triggers::default() };
        let forced = GumOptions { triggers, fsteal_forced: true, ..plain };
        let stealing = run(Split::InAdvance, GumOptions { fsteal: true, ..forced });
        assert!(stealing.report.gum.expect("GUM report").planned > 0, "{gpus} GPUs: no plan");
    }
}

/// Every ownership move of a run, `(workers before, workers after)`, in superstep order.
fn ownership_moves(report: &GumReport) -> Vec<(u32, u32)> {
    report
        .iterations
        .iter()
        .filter_map(|r| match r.osteal {
            OstealDecision::Moved { from, to } => Some((from, to)),
            _ => None,
        })
        .collect()
}
