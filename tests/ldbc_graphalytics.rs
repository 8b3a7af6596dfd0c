//! `switchyard graphalytics`: the six Graphalytics algorithms on the hand-built graphs in
//! `tests/data/ldbc/`, their output files read back (`graph::read_vertex_values`) and
//! checked against the references written from the raw text in `ldbc_common`; the JSON
//! report (schema, vertex and edge counts, EVPS = (n + m) / T_p); the same command twice
//! gives the same files; SSSP skipped on an unweighted graph; bad inputs stop it before any
//! algorithm runs.

mod ldbc_common;

use ldbc_common::{Raw, data, err, has, ok, raw, switchyard};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SIX: [&str; 6] = ["BFS", "PR", "WCC", "CDLP", "LCC", "SSSP"];

fn graphalytics(graph: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args =
        vec!["graphalytics", "--graph", graph.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    switchyard(&args)
}

/// An output file read back with the product's reader: ids in ascending order (the `.v`
/// file's order), each once.
fn read_back(path: &Path, g: &Raw) -> BTreeMap<u64, f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let pairs = switchyard::graph::read_vertex_values(&path.display().to_string(), &text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sorted = g.ids.clone();
    sorted.sort_unstable();
    assert_eq!(pairs.iter().map(|p| p.0).collect::<Vec<_>>(), sorted, "{}", path.display());
    pairs.into_iter().collect()
}

/// Checks the six files of `name` in `out` against the references.
fn check_outputs(name: &str, out: &Path) {
    let g = raw(name);
    let file = |suffix: &str| out.join(format!("{name}-{suffix}"));
    let prop = |key: &str| g.props[key].parse::<u64>().unwrap();
    // BFS: levels, unreachable as Long.MAX_VALUE.
    let bfs = g.bfs(prop("bfs.source-vertex"));
    for (id, level) in read_back(&file("BFS"), &g) {
        let want = bfs[&id].map_or(i64::MAX as f64, |l| l as f64);
        assert_eq!(level, want, "{name} BFS vertex {id}");
    }
    // PR within Graphalytics' own epsilon (1e-4).
    let pr =
        g.pagerank(g.props["pr.damping-factor"].parse().unwrap(), prop("pr.num-iterations") as u32);
    for (id, rank) in read_back(&file("PR"), &g) {
        assert!((rank - pr[&id]).abs() <= 1e-4 * pr[&id], "{name} PR vertex {id}: {rank}");
    }
    // WCC: the same partition, labels that are file ids.
    let mut parts: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for (id, label) in read_back(&file("WCC"), &g) {
        assert!(g.ids.contains(&(label as u64)), "{name} WCC label {label} is a file id");
        parts.entry(label as u64).or_default().insert(id);
    }
    assert_eq!(parts.into_values().collect::<BTreeSet<_>>(), g.components(), "{name} WCC");
    // CDLP: exact, with the .properties' iterations.
    let cdlp = g.cdlp(prop("cdlp.max-iterations") as u32);
    for (id, label) in read_back(&file("CDLP"), &g) {
        assert_eq!(label as u64, cdlp[&id], "{name} CDLP vertex {id}");
    }
    // LCC within one f32 rounding (algo::lcc::tolerance).
    let lcc = g.lcc();
    for (id, c) in read_back(&file("LCC"), &g) {
        assert!((c - lcc[&id]).abs() <= lcc[&id] * 6e-8, "{name} LCC vertex {id}: {c}");
    }
    // SSSP: the device's f32 distances exactly; unreachable as infinity.
    let sssp = g.sssp(prop("sssp.source-vertex"));
    for (id, d) in read_back(&file("SSSP"), &g) {
        assert_eq!(d as f32, sssp[&id], "{name} SSSP vertex {id}");
    }
}

#[test]
fn the_six_algorithms_validate_and_write_graphalytics_outputs_and_a_report() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["dir", "undir", "recip"] {
        let g = raw(name);
        let out = dir.path().join(name);
        let stdout =
            ok(&graphalytics(&data(&format!("{name}.properties")), &out, &["--gpus", "2"]));
        for suffix in SIX {
            let row = stdout
                .lines()
                .find(|l| l.starts_with(&format!("{suffix} ")))
                .unwrap_or_else(|| panic!("{name}: no {suffix} row:\n{stdout}"));
            has(row, &["passed", &format!("{name}-{suffix}")]);
        }
        has(
            &stdout,
            &[&format!("graph.{name}.cdlp.max-iterations"), &format!("graph.{name}.directed")],
        );
        check_outputs(name, &out);
        // The report: Graphalytics' counts (an undirected edge once) and EVPS = (n + m) / T_p.
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("graphalytics.json")).unwrap())
                .unwrap();
        assert_eq!(json["schema"], "switchyard.graphalytics");
        let (n, m) = (g.ids.len() as f64, g.props["meta.edges"].parse::<f64>().unwrap());
        assert_eq!(json["vertices"].as_f64(), Some(n), "{name}");
        assert_eq!(json["edges"].as_f64(), Some(m), "{name}");
        let jobs = json["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 6);
        for (job, suffix) in jobs.iter().zip(SIX) {
            assert_eq!(job["algorithm"], suffix);
            assert_eq!(job["validation"], "passed", "{name} {suffix}");
            let t = job["processing_time_s"].as_f64().unwrap();
            let evps = job["evps"].as_f64().unwrap();
            assert!(t > 0.0 && ((n + m) / t - evps).abs() <= 1e-9 * evps, "{name} {suffix}");
        }
        assert_eq!(jobs[0]["source"].as_u64(), g.props["bfs.source-vertex"].parse().ok());
    }
}

#[test]
fn the_same_command_writes_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let props = data("recip.properties");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    ok(&graphalytics(&props, &a, &["--gpus", "3"]));
    ok(&graphalytics(&props, &b, &["--gpus", "3"]));
    for suffix in SIX {
        let read = |d: &Path| std::fs::read(d.join(format!("recip-{suffix}"))).unwrap();
        assert_eq!(read(&a), read(&b), "recip-{suffix}");
    }
    let jobs = |d: &Path| {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("graphalytics.json")).unwrap())
                .unwrap();
        let mut jobs = json["jobs"].clone();
        for job in jobs.as_array_mut().unwrap() {
            job.as_object_mut().unwrap().remove("output");
        }
        jobs
    };
    assert_eq!(jobs(&a), jobs(&b));
}

#[test]
fn sssp_is_skipped_on_an_unweighted_graph_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("u.v"), "1\n2\n3\n").unwrap();
    std::fs::write(dir.path().join("u.e"), "1 2\n2 3\n").unwrap();
    std::fs::write(
        dir.path().join("u.properties"),
        "graph.u.vertex-file = u.v\ngraph.u.edge-file = u.e\ngraph.u.directed = false\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let stdout = ok(&graphalytics(&dir.path().join("u.properties"), &out, &[]));
    let row = stdout.lines().find(|l| l.starts_with("SSSP ")).expect("an SSSP row");
    has(row, &["skipped", "no edge weights"]);
    assert!(!out.join("u-SSSP").exists());
    for suffix in ["BFS", "PR", "WCC", "CDLP", "LCC"] {
        assert!(out.join(format!("u-{suffix}")).exists(), "u-{suffix}");
    }
}

#[test]
fn bad_inputs_stop_it_before_any_algorithm_runs() {
    let dir = tempfile::tempdir().unwrap();
    let props = data("dir.properties");
    // --out names a file.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let run = graphalytics(&props, &file, &[]);
    has(&err(&run), &["--out", "is a file"]);
    assert!(String::from_utf8_lossy(&run.stdout).is_empty(), "nothing ran");
    // An option that contradicts the .properties: named, and nothing written.
    let out = dir.path().join("out");
    let run = graphalytics(&props, &out, &["--iterations", "9"]);
    has(&err(&run), &["--iterations 9", "graph.dir.pr.num-iterations = 7", "--ignore-properties"]);
    assert!(!out.join("dir-BFS").exists(), "nothing written");
    // A source the graph lacks.
    let run = graphalytics(&props, &out, &["--source", "3", "--ignore-properties"]);
    has(&err(&run), &["--source 3", "vertex 3 is not in"]);
    assert!(!out.join("dir-BFS").exists(), "nothing written");
}
