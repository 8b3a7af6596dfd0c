//! `switchyard graph info | generate | partition` end to end through the binary.

use std::process::Command;

fn switchyard(args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_switchyard")).args(args).output().expect("run binary");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn generate_then_info_and_partition() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("grid.txt");
    let file = file.to_str().unwrap();
    let (ok, _, err) = switchyard(&["graph", "generate", "grid2d:w=20,h=10", "--output", file]);
    assert!(ok, "{err}");
    let (ok, out, err) = switchyard(&["graph", "info", "--graph", file, "--json"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // A 20 x 10 grid: 200 vertices, 20*9 + 10*19 = 370 edges, diameter 19 + 9 = 28.
    assert_eq!(json["vertices"], 200);
    assert_eq!(json["edges"], 370);
    assert_eq!(json["diameter_approx"], 28);
    // The hub (degree 4) is an interior vertex, named by its id in the file.
    let hub = json["hub_id"].as_u64().unwrap();
    assert!((1..=18).contains(&(hub % 20)) && (1..=8).contains(&(hub / 20)), "hub {hub}");
    let (ok, out, err) = switchyard(&[
        "graph",
        "partition",
        "--graph",
        file,
        "--parts",
        "2",
        "--partitioner",
        "seg",
        "--json",
    ]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Seg splits the 10 rows into two bands of 5: the cut is the 20 vertical edges between.
    assert_eq!(json["edge_cut"], 20);
    assert_eq!(json["per_part"][0]["vertices"], 100);
}

#[test]
fn bad_input_is_a_clear_error() {
    let (ok, _, err) = switchyard(&["graph", "info", "--generate", "rmat:scale=4,edges=3"]);
    assert!(!ok);
    assert!(err.contains("unknown key `edges`") && err.contains("valid keys are"), "{err}");
    let (ok, _, err) = switchyard(&[
        "graph",
        "partition",
        "--generate",
        "er:n=10,m=20",
        "--parts",
        "2",
        "--partitioner",
        "kl",
    ]);
    assert!(!ok);
    assert!(err.contains("use one of random, biased-random, seg, hash, metis"), "{err}");
    let (ok, _, err) =
        switchyard(&["graph", "generate", "er:n=10,m=20", "--output", "/tmp/x", "--to", "binary"]);
    assert!(!ok);
    assert!(err.contains("graph convert"), "{err}");
}
