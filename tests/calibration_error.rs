//! The simulator's published error against real GPUs must not regress (issue 22, item 3).
//!
//! `reports/bench/calib_h100_2026-11-26.json` holds runs measured on one H100 and the
//! simulator's predictions of them with the calibrated model
//! (`reports/bench/gpu_calibrated_h100_2026-11-26.toml`), written by
//! `scripts/calib_predict.py`. This test re-predicts the held-out runs on luxembourg_osm (a
//! graph the fit never saw, small enough to simulate in seconds) with the simulator at HEAD
//! (deterministic: no GPU needed) and fails when their error exceeds the bound recorded
//! beside them (`ci`).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn held_out_runs_stay_within_the_recorded_error_bound() {
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("reports/bench/calib_h100_2026-11-26.json"))
            .expect("the calibration report's JSON is committed"),
    )
    .expect("valid JSON");
    let ci = &doc["ci"];
    let graph = ci["graph"].as_str().expect("ci.graph");
    let graph_args: Vec<String> = ci["graph_args"]
        .as_array()
        .expect("ci.graph_args")
        .iter()
        .map(|a| a.as_str().expect("string").to_string())
        .collect();
    let median_bound = ci["median_abs_error_bound"].as_f64().expect("median bound");
    let max_bound = ci["max_abs_error_bound"].as_f64().expect("max bound");
    let topology = root().join(doc["topology"].as_str().expect("topology"));

    // The held-out runs on the CI graph, grouped by runtime (one simulator call each).
    let mut groups: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for row in doc["rows"].as_array().expect("rows") {
        if row["set"] == "held-out" && row["graph"] == graph && row["gpus"] == 1 {
            groups.entry(row["runtime"].as_str().expect("runtime").to_string()).or_default().push(
                (
                    row["algo"].as_str().expect("algo").to_string(),
                    row["measured_ms"].as_f64().expect("measured_ms"),
                ),
            );
        }
    }
    assert!(groups.len() >= 2, "the CI subset covers several runtimes: {groups:?}");
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
            .args(["--weights", "--runtime", runtime, "--algos", &algos.join(",")])
            .args(["--gpu-counts", "1", "--validate", "none", "--json"])
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
        "held-out error on {graph} regressed: median |error| {:.1} % (bound {:.1} %), max {:.1} % \
         (bound {:.1} %); the runs:\n{table}If a model change is meant to move these, refit \
         (scripts/calib_fit.py), re-predict (scripts/calib_predict.py) and publish the new \
         error in reports/calibration.md",
        100.0 * median,
        100.0 * median_bound,
        100.0 * max,
        100.0 * max_bound
    );
}
