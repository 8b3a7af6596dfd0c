//! `switchyard gum repro --small`: the five reproductions run on the simulated DGX-1, every
//! run validates (a run that does not stops the reproduction), the outputs are
//! byte-identical from the library and from the CLI, and the shapes the measured small runs
//! reach are checked. Shapes they do not reach (FSteal's narrower gap under the random
//! partition, GUM's 3x over BSP on roads, GUM winning on scale-free graphs, strong scaling)
//! are recorded in `reports/gum.md`, not asserted here. FSteal's narrower gap and
//! starvation share under the biased-random partition is asserted at R-MAT 17 (the last
//! test: `--small` is too small for a plan to pay).

use std::collections::BTreeMap;
use std::path::Path;
use switchyard::driver::gum_repro::{Experiment, ReproOptions, run_repro, write_repro};

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("output folder")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("readable"))
        })
        .collect()
}

fn holds(e: &Experiment, id: &str) -> bool {
    e.finding(id).unwrap_or_else(|| panic!("{}: no finding {id}", e.id)).holds
}

#[test]
fn small_repro_is_deterministic_validated_and_reaches_its_shapes() {
    let options = ReproOptions { small: true, seed: 1 };
    let mut lines = Vec::new();
    let experiments =
        run_repro(options, &mut |l| lines.push(l.to_string())).expect("every run validates");
    assert!(lines.iter().filter(|l| l.contains("validated")).count() >= 60, "{lines:?}");

    // Library and CLI write the same bytes.
    let lib = tempfile::tempdir().expect("tempdir");
    write_repro(&experiments, options, lib.path()).expect("written");
    let cli = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(["gum", "repro", "--small", "--out"])
        .arg(cli.path())
        .output()
        .expect("the CLI runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (a, b) = (files(lib.path()), files(cli.path()));
    let names: Vec<&str> = a.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "README.md",
            "fig1_8.json",
            "fig1_8.md",
            "fig1_8.svg",
            "fig6.json",
            "fig6.md",
            "fig6.svg",
            "fig9.json",
            "fig9.md",
            "fig9.svg",
            "table3.json",
            "table3.md",
            "table4.json",
            "table4.md"
        ]
    );
    for (name, bytes) in &a {
        assert!(b.get(name) == Some(bytes), "{name} differs between two runs");
    }
    let json: serde_json::Value = serde_json::from_slice(&a["table3.json"]).expect("json");
    assert_eq!(json["data"].as_array().map(Vec::len), Some(8), "2 graphs x 4 algorithms");

    let by_id: BTreeMap<&str, &Experiment> = experiments.iter().map(|e| (e.id, e)).collect();
    // Table III: on the road-like graph GUM (OSteal down to one GPU) beats BSP and Groute on
    // BFS and SSSP, and Groute wins WCC there as in the paper.
    let t3 = by_id["table3"];
    assert!(holds(t3, "road_bfs_sssp_faster_than_bsp"), "{:?}", t3.findings);
    assert!(holds(t3, "road_bfs_sssp_faster_than_groute"), "{:?}", t3.findings);
    assert!(holds(t3, "groute_wins_road_wcc"), "{:?}", t3.findings);
    // Fig. 9: OSteal shrinks the road SSSP's tail to one GPU and the run gets faster.
    let f9 = by_id["fig9"];
    for id in ["osteal_shrinks_tail", "osteal_reaches_one_gpu", "osteal_faster"] {
        assert!(holds(f9, id), "{id}: {:?}", f9.findings);
    }
    let workers = f9.data["workers_per_superstep"].as_array().expect("workers");
    assert_eq!(workers.first().and_then(|w| w.as_u64()), Some(8), "the run starts on 8 GPUs");
    // Fig. 1/8: t1 and t2 fire on the scale-free SSSP, but no plan can pay for its decision
    // and stolen kernels there (the random partition balances R-MAT within a few per cent),
    // so FSteal plans nothing and costs nothing (before the fix it stole edges and made the
    // heavy supersteps slower).
    let f8 = by_id["fig1_8"];
    assert!(holds(f8, "fsteal_never_slower"), "{:?}", f8.findings);
    assert!(f8.data["summary"]["not_worth"].as_u64().unwrap_or(0) > 0, "{}", f8.data);
    // Table IV: on the road CC, the one case here where stealing pays, it saves more than
    // its decisions and moves cost.
    let t4 = by_id["table4"];
    let rows = t4.data.as_array().expect("rows");
    let road_cc = rows
        .iter()
        .find(|r| r["graph"] == "road-like" && r["algorithm"] == "cc")
        .expect("road cc row");
    assert!(road_cc["saved_over_overhead"].as_f64().unwrap_or(0.0) > 1.0, "{road_cc}");
    assert!(holds(t4, "stealing_pays_road_sssp"), "{:?}", t4.findings);
    // Decisions run only where they can pay: stealing never slows scale-free BFS (before
    // issue 21's second pass it made BFS and WCC 1.5-3x slower; SSSP's one late move, at
    // superstep 6 of 9, still costs 0.13 ms here). WCC is left out since the simulator's CC
    // reads labels per wave of GPU threads (2026-11-27): its supersteps now match the GPU's,
    // its scale-free tail is longer, and OSteal's one move there costs 0.30 ms (0.46 ->
    // 0.76 ms), a misprediction of Alg. 2's pay-back that is open in issue 21.
    let bfs = rows
        .iter()
        .find(|r| r["graph"] == "scale-free" && r["algorithm"] == "bfs")
        .expect("scale-free bfs row");
    assert!(bfs["saved_ms"].as_f64().unwrap_or(-1.0) >= 0.0, "{bfs}");
    // Fig. 6: every series has 8 points, the speedup of the 1-GPU point is 1.
    let f6 = by_id["fig6"];
    let points = f6.data.as_array().expect("rows");
    assert_eq!(points.len(), 2 * 3 * 8);
    assert!(points.iter().filter(|r| r["gpus"] == 1).all(|r| r["speedup"] == 1.0));
}

/// Fig. 1/8 at 8 GPUs of the DGX-1 on a setting the paper's argument supports (Fig. 11:
/// stealing helps under other partitioners than random): SSSP on R-MAT 17 under the
/// biased-random partition, whose locality puts most of the hub's neighbourhood on a few
/// GPUs. FSteal (OSteal off) narrows the slowest-fastest busy gap in every superstep it
/// plans and cuts the starvation share of the heavy supersteps. Its plans here save less
/// than the cut and return round trips each adds (`GumOptions::plan_round_trips_ps`), so
/// the mechanism is checked with the round trips left out of the pays check, and at the
/// defaults FSteal takes no plan: that run is exactly the run without FSteal, where the
/// plans made it slower. (At R-MAT 11, `--small`, no plan can pay for its decision; the
/// random partition balances R-MAT within what a plan costs: `reports/gum.md`.)
#[test]
fn fsteal_narrows_the_gap_and_starvation_on_a_skewed_partition_at_8_gpus() {
    use switchyard::algo::{Algorithm, AlgorithmParams};
    use switchyard::driver::{RunSpec, RuntimeKind, SimRun, SimSetup};
    use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
    use switchyard::runtime::gum::{FstealDecision, GumOptions, IterationRecord};
    use switchyard_sim::interconnect::Fidelity;
    use switchyard_sim::topology::Topology;

    let g = generate(&GeneratorSpec::parse("rmat:scale=17,ef=16,seed=4").expect("spec"))
        .and_then(|g| with_uniform_weights(&g, 1, 64, 1))
        .expect("generates");
    let hub = (0..g.num_vertices()).max_by_key(|&v| g.degree(v)).expect("vertices");
    let run = |fsteal: bool, plan_round_trips_ps: u64| {
        let gum = GumOptions { fsteal, osteal: false, plan_round_trips_ps, ..Default::default() };
        let spec = RunSpec {
            params: AlgorithmParams { source: hub, ..AlgorithmParams::default() },
            partitioner: "biased-random".into(),
            seed: 1,
            gum,
            ..RunSpec::new(Algorithm::Sssp, RuntimeKind::Gum, 8)
        };
        let sim = SimSetup {
            topology: Topology::bundled("dgx1-v100").expect("bundled"),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        };
        let out = SimRun { spec, sim }.run(&g, "rmat17").expect("run succeeds");
        assert!(out.report.validation.as_ref().expect("validated").is_ok());
        (out.report.gum.expect("a gum report").iterations, out.report.time_ps)
    };
    let round_trips = GumOptions::default().plan_round_trips_ps;
    let ((off, off_ps), (on, on_ps)) = (run(false, round_trips), run(true, 0));
    let (at_defaults, defaults_ps) = run(true, round_trips);
    assert!(
        at_defaults.iter().all(|r| r.fsteal != FstealDecision::Planned) && defaults_ps == off_ps,
        "with the round trips counted no plan pays: {:?}, {defaults_ps} ps against {off_ps}",
        at_defaults.iter().map(|r| &r.fsteal).collect::<Vec<_>>()
    );
    assert!(on_ps > off_ps, "the plans made the run faster ({on_ps} ps against {off_ps})");
    assert_eq!(off.len(), on.len(), "the same supersteps");
    let gap = |r: &IterationRecord| {
        r.busy_ps.iter().max().unwrap_or(&0) - r.busy_ps.iter().min().unwrap_or(&0)
    };
    let heavy = |r: &&IterationRecord| r.active_edges.iter().any(|&e| e >= 16_384);
    let planned: Vec<u32> =
        on.iter().filter(|r| r.fsteal == FstealDecision::Planned).map(|r| r.iteration).collect();
    assert!(!planned.is_empty(), "no plan: {:?}", on.iter().map(|r| &r.fsteal).collect::<Vec<_>>());
    for &k in &planned {
        let (a, b) = (&off[k as usize], &on[k as usize]);
        assert!(
            gap(b) * 4 < gap(a) * 3,
            "superstep {k}: gap {} ps with FSteal, {} without: not narrowed by a quarter",
            gap(b),
            gap(a)
        );
        assert!(b.stolen_edges > 0);
    }
    let starved = |rs: &[IterationRecord]| -> f64 {
        let (s, slots) = rs.iter().filter(heavy).fold((0u64, 0u64), |(s, t), r| {
            (s + r.starved_ps.iter().sum::<u64>(), t + r.compute_ps * r.busy_ps.len() as u64)
        });
        s as f64 / slots.max(1) as f64
    };
    let (share_off, share_on) = (starved(&off), starved(&on));
    assert!(share_off > 0.5, "no starvation to cut: {share_off:.3}");
    assert!(
        share_on < 0.8 * share_off,
        "starved share {share_on:.3} with FSteal, {share_off:.3} without"
    );
}
