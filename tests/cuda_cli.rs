//! The CUDA-facing command line without a GPU: `--backend cuda` and `calibrate machine`
//! say in one line what is missing and point to the simulator, and `calibrate runs` on the
//! simulator writes the rows the GPU benchmark and the calibration report are made of.

use std::process::Command;

fn switchyard(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard")).args(args).output().expect("run binary")
}

fn has_gpu() -> bool {
    switchyard::backend::cuda::gpus_present() > 0
}

#[test]
fn without_a_gpu_cuda_commands_fail_in_one_line_pointing_to_the_simulator() {
    if has_gpu() {
        println!("skipped: this machine has a GPU");
        return;
    }
    for args in [
        &["run", "--backend", "cuda", "--generate", "rmat:scale=8,ef=4"][..],
        &["calibrate", "machine", "--topology-out", "/dev/null"][..],
        &["calibrate", "runs", "--generate", "rmat:scale=8,ef=4", "--json", "/dev/null"][..],
    ] {
        let out = switchyard(args);
        assert!(!out.status.success(), "{args:?} succeeded without a GPU");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(err.contains("--backend sim"), "{args:?}: {err}");
    }
}

#[test]
fn calibrate_runs_on_the_simulator_writes_validated_rows_with_floors_and_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rows.json");
    let out = switchyard(&[
        "calibrate",
        "runs",
        "--backend",
        "sim",
        "--topology",
        "hgx-h200x4",
        "--generate",
        "rmat:scale=10,ef=8",
        "--weights",
        "--hub-source",
        "--algos",
        "bfs,sssp,pr",
        "--gpu-counts",
        "1,2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.len(), 6, "three algorithms on 1 and 2 GPUs");
    for r in &rows {
        assert_eq!(r["validation"], "passed", "{r}");
        assert!(r["time_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["floor_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["edges_visited"].as_u64().unwrap() > 0, "{r}");
        let two = r["gpus"] == 2;
        assert_eq!(r["bytes_sent"].as_u64().unwrap() > 0, two, "{r}");
        // Peer traffic crosses the NVSwitch only when there is a peer.
        let peer_bytes: u64 = r["links"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l[0].as_str().unwrap().contains("nvswitch"))
            .map(|l| l[1].as_u64().unwrap())
            .sum();
        assert_eq!(peer_bytes > 0, two, "{r}");
    }
    let pr = rows.iter().find(|r| r["algo"] == "pr" && r["gpus"] == 1).unwrap();
    assert!(pr["per_iteration_ms"].as_f64().unwrap() > 0.0);
    // The printed table has a row per run.
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(table.lines().filter(|l| l.contains("passed")).count(), 6, "{table}");
}

#[test]
fn run_checks_its_outputs_and_logical_gpu_options_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder/report.json");
    let missing = missing.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["run", "--generate", "rmat:scale=8,ef=4", "--report", missing], "--report"),
        (vec!["run", "--generate", "rmat:scale=8,ef=4", "--trace", folder], "--trace"),
        (vec!["run", "--generate", "rmat:scale=8,ef=4", "--logical-gpus"], "--logical-gpus"),
        (
            vec![
                "run",
                "--generate",
                "rmat:scale=8,ef=4",
                "--runtime",
                "groute",
                "--algo",
                "dobfs",
            ],
            "--runtime groute has no operators for dobfs",
        ),
    ] {
        let out = switchyard(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("validation"), "{args:?} ran before failing: {stdout}");
    }
}

#[test]
fn graph500_on_the_simulator_validates_every_search_and_reports_the_harmonic_mean() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let json = dir.path().join(name);
        let out = switchyard(&[
            "calibrate",
            "graph500",
            "--backend",
            "sim",
            "--generate",
            "rmat:scale=9,ef=8",
            "--gpus",
            "2",
            "--roots",
            "16",
            "--seed",
            seed,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        report
    };
    let a = run("3", "a.json");
    let searches = a["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 16);
    let mut roots: Vec<u64> = searches.iter().map(|s| s["root"].as_u64().unwrap()).collect();
    assert!(searches.iter().all(|s| s["validation"] == "passed"), "{a}");
    // The harmonic mean recomputed from the rows: it lies between min and max and equals
    // n / sum(1/teps).
    let teps: Vec<f64> = searches.iter().map(|s| s["teps"].as_f64().unwrap()).collect();
    let expected = teps.len() as f64 / teps.iter().map(|t| 1.0 / t).sum::<f64>();
    let hm = a["summary"]["harmonic_mean"].as_f64().unwrap();
    assert!((hm - expected).abs() <= 1e-9 * expected, "{hm} vs {expected}");
    roots.sort_unstable();
    roots.dedup();
    assert_eq!(roots.len(), 16, "search keys repeat");
    // The same seed draws the same keys; the simulator gives the same times.
    let b = run("3", "b.json");
    assert_eq!(a["searches"], b["searches"]);
    let c = run("4", "c.json");
    assert_ne!(a["searches"][0]["root"], c["searches"][0]["root"]);
}
