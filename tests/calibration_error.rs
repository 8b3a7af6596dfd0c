//! The simulator's published error against real GPUs must not regress (issue 22, item 3;
//! issue 23, item 4).
//!
//! `reports/bench/calib_h100_2026-11-27_c66.json` holds runs measured on one H100 (call c32:
//! every runtime and algorithm on luxembourg_osm, cnr-2000, delaunay_n16 and R-MAT 20; Atos's
//! rows re-measured in c66 on the kernels that ship, on which its BFS workers were refitted)
//! and the simulator's predictions of them with the calibrated model
//! (`reports/bench/gpu_calibrated_h100_2026-11-26.toml`, fitted on c32's kernel spans of four
//! graphs, its BFS, SSSP and CC kernels with the ramp of a launch below one block; its host
//! model starting a kernel `launch_lead_ns` into its launch);
//! `reports/bench/calib_h200_from_h100_fit_2026-11-27_host.json` the same graphs measured on one
//! H200 (c34) predicted by that H100 calibration with the H200's datasheet memory
//! (`reports/bench/gpu_h200_from_h100_fit_2026-11-27.toml`, an overlay: a machine the fit
//! never saw); `reports/bench/calib_h200x4_2026-11-27_c56_lux.json` Atos BFS on luxembourg on
//! 1, 2 and 4 real H200s predicted with `topologies/calibrated/h200-nvswitch-x4.toml` (the
//! H100 x4 machine below with the H200's datasheet memory);
//! `reports/bench/calib_h100_multi_2026-11-27_ramp_c15_lux.json` and `..._ramp_c19_lux.json`
//! luxembourg runs measured on 2 and 4 real H100s (NVSwitch) and their predictions with
//! `topologies/calibrated/h100-nvswitch-x4.toml` (the same GPU model; its host costs per
//! operation kind and per completion poll from the CUDA backend's host profile;
//! `bfs_advance_routed`'s cost fitted on a multi-GPU run's spans, as the file says);
//! `reports/bench/calib_h200_2026-11-28_c77_refit.json` every runtime on luxembourg_osm and
//! cnr-2000 measured on one H200 (c77B) and predicted with the H200 calibration
//! (`reports/bench/gpu_calibrated_h200_2026-11-28.toml`: the H200 transfer model with its
//! staged advance and loop kernels refitted on c77B's spans of three other graphs; its `ci` is
//! a list, one block per graph); `reports/bench/calib_h200_2026-11-28_c85_paths.json` the same
//! rows (Groute CC's re-measured at HEAD, c85B1) predicted with
//! `reports/bench/gpu_calibrated_h200_2026-11-28_paths.toml` (that calibration with its
//! device-side loops refitted on nine other graphs, each round priced by its busiest block);
//! all written by `scripts/calib_predict.py` (the files without `_ramp` or `_host` are the same
//! runs before the ramp, those with `_ramp` before the launch lead, `reports/calibration.md`;
//! the multi-GPU checks keep the `_ramp` bounds, which the launch lead did not tighten).
//! Each test re-predicts the runs on luxembourg_osm (or cnr-2000) its `ci` block names (the held-out runs
//! on one GPU; the runs on two real GPUs, or those of them its `runs` lists), small enough to
//! simulate in seconds, with the simulator at HEAD (deterministic: no GPU needed) and fails
//! when their error exceeds the bound recorded beside them.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use switchyard_sim::topology::Topology;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn held_out_runs_stay_within_the_recorded_error_bound() {
    check("reports/bench/calib_h100_2026-11-27_c66.json");
}

#[test]
fn runs_on_an_h200_predicted_from_the_h100_fit_stay_within_the_recorded_error_bound() {
    check("reports/bench/calib_h200_from_h100_fit_2026-11-27_host.json");
}

#[test]
fn runs_on_two_real_gpus_stay_within_the_recorded_error_bound() {
    check("reports/bench/calib_h100_multi_2026-11-27_ramp_c15_lux.json");
}

#[test]
fn atos_runs_on_two_real_h200s_stay_within_the_recorded_error_bound() {
    // c56 (eighth session): Atos BFS on luxembourg on 2 real H200s at main's kernels
    // (821b62a's receive cadence), predicted with topologies/calibrated/h200-nvswitch-x4.toml
    // (the H100 x4 machine with the H200's datasheet memory; nothing fitted on these runs).
    check("reports/bench/calib_h200x4_2026-11-27_c56_lux.json");
}

#[test]
fn runs_at_bsps_routed_advance_on_two_real_gpus_stay_within_the_recorded_error_bound() {
    // The c19 rows: measured with BSP's default split in the advance (`bfs_advance_routed`),
    // BFS on every runtime and BSP's SSSP and CC.
    check("reports/bench/calib_h100_multi_2026-11-27_ramp_c19_lux.json");
}

#[test]
fn every_runtimes_default_runs_on_two_real_h100s_stay_within_the_recorded_error_bound() {
    // c68 (tenth session): every runtime on luxembourg on 2 real H100s (NVLink) at main
    // e04dcf7, predicted with topologies/calibrated/h100-nvswitch-x4.toml (nothing fitted on
    // these runs). The 13 runs measured at the runtimes' defaults; Groute's fused BFS and SSSP
    // had options of their own, which one `ci` block cannot pass per run.
    check("reports/bench/calib_h100x2_2026-11-27_c68.json");
}

#[test]
fn held_out_runs_on_one_h200_with_the_h200_fit_stay_within_the_recorded_error_bound() {
    // c77B (thirteenth session): every runtime on luxembourg_osm and cnr-2000 on one H200 at
    // main 3473f2f (the staged advances), predicted with the H200 calibration of the
    // fourteenth session (reports/bench/gpu_calibrated_h200_2026-11-28.toml: its advance and
    // loop kernels refitted on c77B's spans of delaunay_n16 and R-MAT 20 and 22; nothing
    // fitted on these graphs). One block per graph, each with its own bounds.
    check("reports/bench/calib_h200_2026-11-28_c77_refit.json");
}

#[test]
fn held_out_runs_on_one_h200_with_the_loops_busiest_block_stay_within_the_recorded_error_bound() {
    // c77B's luxembourg_osm and cnr-2000 rows (Groute CC's re-measured at HEAD in c85B1, its
    // edge list in pinned memory) predicted with the H200 calibration whose device-side
    // loops are priced by their busiest block (fitted on nine other graphs).
    check("reports/bench/calib_h200_2026-11-28_c85_paths.json");
}

#[test]
fn every_runtime_on_two_real_h200s_stays_within_the_recorded_error_bound() {
    // c85X2: every runtime and algorithm on luxembourg_osm and BFS (and BSP PageRank) on the
    // road grid at 1 and 2 real H200s (issue 23 item 4), predicted with
    // topologies/calibrated/h200-nvswitch-x4.toml (not refitted on any multi-GPU run); the CI
    // block is luxembourg's 2-GPU rows.
    check("reports/bench/calib_h200x2_2026-11-28_c85.json");
}

#[test]
fn bsp_and_atos_runs_on_four_real_h100s_stay_within_the_recorded_error_bound() {
    // c75 (twelfth session): BSP BFS, SSSP and CC and Atos BFS, residual PageRank and
    // colouring on luxembourg on 4 real H100s (NVLink) at main 71a6cb1 (BSP's advances with
    // staged appends), predicted with topologies/calibrated/h100-nvswitch-x4.toml (nothing
    // fitted on these runs).
    check("reports/bench/calib_h100x4_2026-11-28_c75_lux.json");
}

/// The one-H100 calibration's machine file.
const ONE_H100: &str = "reports/bench/gpu_calibrated_h100_2026-11-26.toml";

/// A machine file of the repository, by its path from the root.
fn machine(path: &str) -> Topology {
    Topology::load(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_multi_gpu_machine_has_the_one_gpu_calibrations_gpu_model() {
    // "Not refitted on the multi-GPU runs": the machine file differs from the one-GPU
    // calibration only in its fabric.
    let one = machine(ONE_H100);
    let four = machine("topologies/calibrated/h100-nvswitch-x4.toml");
    assert_eq!(four.gpus.len(), 4);
    for gpu in &four.gpus {
        assert_eq!(gpu.model, one.gpus[0].model, "{}: not the calibrated GPU model", gpu.name);
    }
}

#[test]
fn the_h200_transfer_model_is_the_h100_fit_with_the_h200s_datasheet_memory() {
    // reports/bench/gpu_h200_from_h100_fit_2026-11-27.toml is an overlay of the one-H100
    // calibration (`[gpu_memory]`): only memory size and bandwidth may differ, and those must
    // be the H200 datasheet's (topologies/gpu_models.toml).
    let h100 = machine(ONE_H100);
    let h200 = machine("reports/bench/gpu_h200_from_h100_fit_2026-11-27.toml");
    let mut transfer = h200.gpus[0].model.clone();
    assert_eq!(transfer.memory_bandwidth_bytes_per_s, 4_800_000_000_000, "H200 datasheet 4.8 TB/s");
    assert_eq!(transfer.memory_bytes, 143_771 * 1024 * 1024, "H200 memory (nvidia-smi)");
    transfer.memory_bandwidth_bytes_per_s = h100.gpus[0].model.memory_bandwidth_bytes_per_s;
    transfer.memory_bytes = h100.gpus[0].model.memory_bytes;
    transfer.name.clone_from(&h100.gpus[0].model.name);
    assert_eq!(transfer, h100.gpus[0].model, "the transfer model left the H100 fit");
}

/// The one-H200 calibration's machine file (fourteenth session).
const ONE_H200: &str = "reports/bench/gpu_calibrated_h200_2026-11-28.toml";

/// The kernels whose costs the H200 calibration refitted on H200 spans (c77B): the staged
/// advances and their device-side loops.
const REFITTED_ON_H200: [&str; 6] =
    ["bfs_advance", "bfs_levels", "sssp_advance", "sssp_levels", "cc_advance", "cc_levels"];

#[test]
fn the_h200_calibration_is_the_transfer_model_with_its_staged_advances_refitted() {
    // reports/bench/gpu_calibrated_h200_2026-11-28.toml is a copy of the H200 transfer model
    // (the H100 fit with the H200 datasheet memory) under its own name, whose six BFS, SSSP
    // and CC advance and loop tables were refitted on c77B's H200 spans: every other number
    // (the host model, calibrate machine's, the other kernel tables) must be the transfer's.
    let transfer = machine("reports/bench/gpu_h200_from_h100_fit_2026-11-27.toml");
    let h200 = machine(ONE_H200);
    let (was, now) = (&transfer.gpus[0].model, &h200.gpus[0].model);
    assert_eq!(now.name, "calibrated-NVIDIA-H200");
    let mut costs = (*now.kernel_costs).clone();
    for kernel in REFITTED_ON_H200 {
        assert_ne!(costs.get(kernel), was.kernel_costs.get(kernel), "{kernel} was not refitted");
        costs.insert(kernel.to_string(), was.kernel_costs[kernel]);
    }
    assert_eq!(costs, *was.kernel_costs, "a table other than the six refitted ones changed");
    let mut same = now.clone();
    same.kernel_costs = was.kernel_costs.clone();
    same.name.clone_from(&was.name);
    assert_eq!(same, *was, "a number other than the refitted kernel tables changed");
}

#[test]
fn the_h100_transfer_model_is_the_h200_fit_with_the_h100s_datasheet_memory() {
    // reports/bench/gpu_h100_from_h200_fit_2026-11-28.toml is an overlay of the one-H200
    // calibration, derived as the H200 transfer model above was, the other way round.
    assert_is_h100_transfer_of(ONE_H200, "reports/bench/gpu_h100_from_h200_fit_2026-11-28.toml");
}

/// Asserts that the machine file `h100` is the one-H200 calibration `h200` with only memory
/// size and bandwidth changed, to the H100 SXM5 datasheet's (topologies/gpu_models.toml,
/// H100-SXM5-80GB), with the H200's SMs.
fn assert_is_h100_transfer_of(h200: &str, h100: &str) {
    let h200 = machine(h200);
    let h100 = machine(h100);
    let datasheet = Topology::bundled("dgx-h100x8").expect("the bundled DGX H100");
    let datasheet = &datasheet.gpus[0].model;
    assert_eq!(datasheet.name, "H100-SXM5-80GB");
    let mut transfer = h100.gpus[0].model.clone();
    assert_eq!(
        transfer.memory_bandwidth_bytes_per_s, 3_350_000_000_000,
        "H100 datasheet 3.35 TB/s"
    );
    assert_eq!(transfer.memory_bytes, 81_920 * 1024 * 1024, "H100 datasheet 80 GB");
    assert_eq!(
        (transfer.memory_bandwidth_bytes_per_s, transfer.memory_bytes, transfer.sm_count),
        (datasheet.memory_bandwidth_bytes_per_s, datasheet.memory_bytes, datasheet.sm_count),
        "topologies/gpu_models.toml's H100-SXM5-80GB"
    );
    transfer.memory_bandwidth_bytes_per_s = h200.gpus[0].model.memory_bandwidth_bytes_per_s;
    transfer.memory_bytes = h200.gpus[0].model.memory_bytes;
    assert_eq!(transfer, h200.gpus[0].model, "the transfer model left the H200 fit");
}

/// The one-H200 calibration with its device-side loops priced by their busiest block
/// (fifteenth session).
const ONE_H200_PATHS: &str = "reports/bench/gpu_calibrated_h200_2026-11-28_paths.toml";

#[test]
fn the_paths_calibration_is_the_h200_calibration_with_its_loops_refitted() {
    // gpu_calibrated_h200_2026-11-28_paths.toml is a copy of the H200 calibration whose three
    // loop tables were refitted (calib_fit.py --kernels) with the busiest block's arcs: every
    // other number must be the H200 calibration's, and each loop must price that path.
    let before = machine(ONE_H200);
    let after = machine(ONE_H200_PATHS);
    let (was, now) = (&before.gpus[0].model, &after.gpus[0].model);
    let mut costs = (*now.kernel_costs).clone();
    for kernel in ["bfs_levels", "sssp_levels", "cc_levels"] {
        assert!(now.kernel_costs[kernel].path_edge_ps > 0, "{kernel} prices no path");
        assert_eq!(was.kernel_costs[kernel].path_edge_ps, 0, "{kernel} priced a path before");
        costs.insert(kernel.to_string(), was.kernel_costs[kernel]);
    }
    assert_eq!(costs, *was.kernel_costs, "a table other than the three loops changed");
    let mut same = now.clone();
    same.kernel_costs = was.kernel_costs.clone();
    assert_eq!(same, *was, "a number other than the loops' tables changed");
    assert_is_h100_transfer_of(
        ONE_H200_PATHS,
        "reports/bench/gpu_h100_from_h200_paths_2026-11-28.toml",
    );
}

#[test]
fn the_h200_multi_gpu_machine_has_the_h200_transfer_model() {
    let one = machine("reports/bench/gpu_h200_from_h100_fit_2026-11-27.toml");
    let four = machine("topologies/calibrated/h200-nvswitch-x4.toml");
    let h100_four = machine("topologies/calibrated/h100-nvswitch-x4.toml");
    assert_eq!(four.gpus.len(), 4);
    for gpu in &four.gpus {
        assert_eq!(gpu.model, one.gpus[0].model, "{}: not the H200 transfer model", gpu.name);
    }
    assert_eq!(four.fabric(), h100_four.fabric(), "the H100 x4 machine's NVSwitch");
}

/// Re-predicts the CI runs of the calibration document at `path` and checks their error:
/// its `ci` block, or each block of a `ci` list (one per graph, each with its own bounds).
fn check(path: &str) {
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join(path))
            .expect("the calibration report's JSON is committed"),
    )
    .expect("valid JSON");
    match &doc["ci"] {
        Value::Array(blocks) => {
            assert!(!blocks.is_empty(), "{path}: an empty ci list");
            for ci in blocks {
                check_block(&doc, ci);
            }
        }
        ci => check_block(&doc, ci),
    }
}

/// Re-predicts the runs one CI block of the document `doc` names and checks their error.
fn check_block(doc: &Value, ci: &Value) {
    let set = ci["set"].as_str().unwrap_or("held-out");
    let gpus = ci["gpus"].as_u64().unwrap_or(1);
    let graph = ci["graph"].as_str().expect("ci.graph");
    let graph_args: Vec<String> = ci["graph_args"]
        .as_array()
        .expect("ci.graph_args")
        .iter()
        .map(|a| a.as_str().expect("string").to_string())
        .collect();
    // Options the measured runs had that are no longer the defaults (BSP's split kernel
    // before the routed BFS advance, Groute's launch per batch before the fused worker
    // became the default on road graphs): the simulator predicts what was measured.
    let run_args: Vec<String> = ci["run_args"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().expect("string").to_string()).collect())
        .unwrap_or_default();
    // Only these runs (`runtime/algo`) of the subset, where the block names them.
    let only: Option<Vec<&str>> =
        ci["runs"].as_array().map(|a| a.iter().map(|x| x.as_str().expect("string")).collect());
    let median_bound = ci["median_abs_error_bound"].as_f64().expect("median bound");
    let max_bound = ci["max_abs_error_bound"].as_f64().expect("max bound");
    let topology = root().join(doc["topology"].as_str().expect("topology"));

    // The CI runs (set, graph, GPU count), grouped by runtime (one simulator call each).
    let mut groups: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for row in doc["rows"].as_array().expect("rows") {
        let run = format!(
            "{}/{}",
            row["runtime"].as_str().unwrap_or_default(),
            row["algo"].as_str().unwrap_or_default()
        );
        let named = only.as_ref().is_none_or(|o| o.contains(&run.as_str()));
        if row["set"] == set && row["graph"] == graph && row["gpus"] == gpus && named {
            groups.entry(row["runtime"].as_str().expect("runtime").to_string()).or_default().push(
                (
                    row["algo"].as_str().expect("algo").to_string(),
                    row["measured_ms"].as_f64().expect("measured_ms"),
                ),
            );
        }
    }
    match &only {
        // A block that names its runs must find each of them.
        Some(named) => {
            for run in named {
                let (runtime, algo) = run.split_once('/').expect("runs: RUNTIME/ALGO");
                assert!(
                    groups.get(runtime).is_some_and(|r| r.iter().any(|(a, _)| a == algo)),
                    "the CI subset names {run} and has no such row: {groups:?}"
                );
            }
        }
        None => assert!(groups.len() >= 2, "the CI subset covers several runtimes: {groups:?}"),
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut errors = Vec::new();
    let mut table = String::new();
    for (runtime, runs) in &groups {
        let json = dir.path().join(format!("{runtime}.json"));
        let algos: Vec<&str> = runs.iter().map(|(a, _)| a.as_str()).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .current_dir(root())
            .args(["calibrate", "runs", "--backend", "sim", "--topology"])
            .arg(&topology)
            .args(&graph_args)
            .args(&run_args)
            .args(["--weights", "--runtime", runtime, "--algos", &algos.join(",")])
            .args(["--gpu-counts", &gpus.to_string(), "--validate", "none", "--json"])
            .arg(&json)
            .output()
            .expect("switchyard runs");
        assert!(out.status.success(), "{runtime}: {}", String::from_utf8_lossy(&out.stderr));
        let rows: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("rows")).expect("JSON");
        for (algo, measured) in runs {
            let predicted = rows
                .as_array()
                .expect("rows")
                .iter()
                .find(|r| r["algo"] == algo.as_str())
                .and_then(|r| r["time_ms"].as_f64())
                .unwrap_or_else(|| panic!("no prediction for {runtime} {algo}"));
            let error = (predicted - measured) / measured;
            table += &format!(
                "{runtime} {algo}: measured {measured:.3} ms, predicted {predicted:.3} ms, \
                 error {:+.1} %\n",
                100.0 * error
            );
            errors.push(error.abs());
        }
    }
    errors.sort_by(f64::total_cmp);
    let median = if errors.len() % 2 == 1 {
        errors[errors.len() / 2]
    } else {
        (errors[errors.len() / 2 - 1] + errors[errors.len() / 2]) / 2.0
    };
    let max = errors.last().copied().unwrap_or(0.0);
    assert!(
        median <= median_bound && max <= max_bound,
        "{set} error on {graph} at {gpus} GPU(s) regressed: median |error| {:.1} % (bound {:.1} %), \
         max {:.1} % (bound {:.1} %); the runs:\n{table}If a model change is meant to move these, refit \
         (scripts/calib_fit.py), re-predict (scripts/calib_predict.py) and publish the new \
         error in reports/calibration.md",
        100.0 * median,
        100.0 * median_bound,
        100.0 * max,
        100.0 * max_bound
    );
}
