//! LDBC Graphalytics files in and out through `switchyard run`: hand-built graphs in
//! `tests/data/ldbc/` (directed and undirected, sparse ids, isolated and unreachable
//! vertices, real weights); `--output` files in the file's own ids checked against
//! references written here from the raw `.v`/`.e` text (they share no code with the
//! product); every `.properties` default honoured; bad inputs refused with their message.

mod ldbc_common;

use ldbc_common::{data, err, has, ok, output, raw, run_to, switchyard};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn bfs_and_sssp_outputs_match_independent_references_in_the_files_ids() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["dir", "undir", "recip"] {
        let g = raw(name);
        let bfs_source: u64 = g.props["bfs.source-vertex"].parse().unwrap();
        let sssp_source: u64 = g.props["sssp.source-vertex"].parse().unwrap();
        for runtime in ["bsp", "groute"] {
            for gpus in ["1", "3"] {
                let path = dir.path().join(format!("{name}-{runtime}-{gpus}-bfs"));
                let stdout =
                    run_to(name, &["--algo", "bfs", "--runtime", runtime, "--gpus", gpus], &path);
                has(
                    &stdout,
                    &[&format!("source vertex {bfs_source} (graph.{name}.bfs.source-vertex)")],
                );
                let expected = g.bfs(bfs_source);
                for (id, value) in output(&path, &g) {
                    let want =
                        expected[&id].map_or("9223372036854775807".into(), |l| l.to_string());
                    assert_eq!(value, want, "{name} bfs vertex {id}");
                }
                let path = dir.path().join(format!("{name}-{runtime}-{gpus}-sssp"));
                let stdout =
                    run_to(name, &["--algo", "sssp", "--runtime", runtime, "--gpus", gpus], &path);
                has(
                    &stdout,
                    &[&format!("source vertex {sssp_source} (graph.{name}.sssp.source-vertex)")],
                );
                let expected = g.sssp(sssp_source);
                for (id, value) in output(&path, &g) {
                    let want = expected[&id];
                    if want.is_infinite() {
                        assert_eq!(value, "Infinity", "{name} sssp vertex {id}");
                    } else {
                        // The file round-trips the device's f32 exactly.
                        let got: f64 = value.parse().unwrap();
                        assert_eq!(got as f32, want, "{name} sssp vertex {id}: {value}");
                        assert!(value.contains('e'), "Graphalytics' %.15e form: {value}");
                    }
                }
            }
        }
    }
}

#[test]
fn pagerank_and_components_honour_the_properties_and_write_file_ids() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["dir", "undir", "recip"] {
        let g = raw(name);
        let damping: f64 = g.props["pr.damping-factor"].parse().unwrap();
        let iterations: u32 = g.props["pr.num-iterations"].parse().unwrap();
        let path = dir.path().join(format!("{name}-pr"));
        let report = dir.path().join(format!("{name}-pr.json"));
        let stdout = run_to(
            name,
            &["--algo", "pr", "--gpus", "2", "--report", report.to_str().unwrap()],
            &path,
        );
        has(
            &stdout,
            &[
                &format!("damping {damping} (graph.{name}.pr.damping-factor)"),
                &format!("iterations {iterations} (graph.{name}.pr.num-iterations)"),
                &format!("(graph.{name}.directed)"),
            ],
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(json["algorithm"]["params"]["damping"], damping);
        assert_eq!(json["algorithm"]["params"]["iterations"], iterations);
        let expected = g.pagerank(damping, iterations);
        for (id, value) in output(&path, &g) {
            let got: f64 = value.parse().unwrap();
            let want = expected[&id];
            assert!((got - want).abs() <= 1e-4 * want, "{name} pr vertex {id}: {got} vs {want}");
        }
        // Component labels are vertices, written in the file's ids: the same partition.
        let path = dir.path().join(format!("{name}-cc"));
        run_to(name, &["--algo", "cc", "--gpus", "2"], &path);
        let mut parts: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for (id, label) in output(&path, &g) {
            let label: u64 = label.parse().unwrap();
            assert!(g.ids.contains(&label), "label {label} is a file id");
            parts.entry(label).or_default().insert(id);
        }
        assert_eq!(parts.into_values().collect::<BTreeSet<_>>(), g.components(), "{name} cc");
    }
}

#[test]
fn an_option_that_agrees_is_accepted_and_ignore_properties_frees_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let stdout = run_to("dir", &["--algo", "bfs", "--source", "2", "--directed", "true"], &out);
    assert!(!stdout.contains("source vertex 2 (graph"), "the option was used: {stdout}");
    // Another source with --ignore-properties: 7 reaches 11, 13 and 2.
    run_to("dir", &["--algo", "bfs", "--source", "7", "--ignore-properties"], &out);
    let lines = output(&out, &raw("dir"));
    assert!(lines.contains(&(7, "0".into())) && lines.contains(&(2, "2".into())), "{lines:?}");
}

#[test]
fn options_that_contradict_the_properties_are_errors_naming_file_key_and_option() {
    let props = data("dir.properties");
    let g = props.to_str().unwrap();
    let file = props.display().to_string();
    for (args, key, option) in [
        (vec!["--algo", "bfs", "--source", "7"], "graph.dir.bfs.source-vertex", "--source 7"),
        (vec!["--algo", "sssp", "--source", "5"], "graph.dir.sssp.source-vertex", "--source 5"),
        (
            vec!["--algo", "pr", "--damping", "0.85"],
            "graph.dir.pr.damping-factor",
            "--damping 0.85",
        ),
        (
            vec!["--algo", "pr", "--iterations", "20"],
            "graph.dir.pr.num-iterations",
            "--iterations 20",
        ),
        (vec!["--algo", "bfs", "--directed", "false"], "graph.dir.directed", "--directed false"),
    ] {
        let mut all = vec!["run", "--graph", g];
        all.extend(args);
        let e = err(&switchyard(&all));
        has(&e, &[&file, key, option, "contradicts", "--ignore-properties"]);
    }
}

#[test]
fn a_source_id_the_graph_lacks_names_the_id_the_file_and_the_fix() {
    let props = data("undir.properties");
    let e = err(&switchyard(&[
        "run",
        "--graph",
        props.to_str().unwrap(),
        "--algo",
        "bfs",
        "--source",
        "3",
        "--ignore-properties",
    ]));
    has(
        &e,
        &[
            "--source 3",
            "vertex 3 is not in",
            &props.display().to_string(),
            "100, 200, 300, ..., 900",
            "give one of its ids",
        ],
    );
    // 1-based formats: Matrix Market vertex 0 does not exist, vertex 1 is the first.
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("g.mtx");
    std::fs::write(&mtx, "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n")
        .unwrap();
    let m = mtx.to_str().unwrap();
    let e = err(&switchyard(&["run", "--graph", m, "--algo", "bfs", "--source", "0"]));
    has(&e, &["vertex 0 is not in", "1-based Matrix Market", "1..=3"]);
    let out = dir.path().join("levels");
    let stdout = ok(&switchyard(&[
        "run",
        "--graph",
        m,
        "--algo",
        "bfs",
        "--source",
        "2",
        "--output",
        out.to_str().unwrap(),
    ]));
    has(&stdout, &["source vertex 2 (1-based Matrix Market"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "1 9223372036854775807\n2 0\n3 1\n");
}

#[test]
fn negative_and_nan_weights_are_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (bad, says) in [("-0.5", "-0.5"), ("NaN", "NaN")] {
        std::fs::write(dir.path().join("w.v"), "1\n2\n").unwrap();
        std::fs::write(dir.path().join("w.e"), format!("1 2 {bad}\n")).unwrap();
        std::fs::write(
            dir.path().join("w.properties"),
            "graph.w.vertex-file = w.v\ngraph.w.edge-file = w.e\ngraph.w.directed = true\n",
        )
        .unwrap();
        let p = dir.path().join("w.properties");
        let e = err(&switchyard(&["run", "--graph", p.to_str().unwrap(), "--algo", "sssp"]));
        has(&e, &["w.e:1", says, "non-negative"]);
    }
}

#[test]
fn an_output_path_that_cannot_be_written_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let props = data("dir.properties");
    let missing = dir.path().join("no/such/out.txt");
    let out = switchyard(&[
        "run",
        "--graph",
        props.to_str().unwrap(),
        "--algo",
        "bfs",
        "--output",
        missing.to_str().unwrap(),
    ]);
    let e = err(&out);
    has(&e, &["--output", "does not exist", "mkdir -p"]);
    assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "nothing ran");
    let e = err(&switchyard(&[
        "run",
        "--graph",
        props.to_str().unwrap(),
        "--output",
        dir.path().to_str().unwrap(),
    ]));
    has(&e, &["--output", "is a directory"]);
}

#[test]
fn unweighted_sssp_says_what_the_graph_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("g.txt");
    std::fs::write(&snap, "10 20\n20 30\n").unwrap();
    let e = err(&switchyard(&[
        "run",
        "--graph",
        snap.to_str().unwrap(),
        "--algo",
        "sssp",
        "--source",
        "10",
    ]));
    has(&e, &["sssp", "needs edge weights and the graph has none", "--weights"]);
}

#[test]
fn real_weighted_sssp_has_cuda_kernels_on_both_runtimes() {
    use switchyard::algo::{Algorithm, AlgorithmParams};
    use switchyard::driver::{RunSpec, RuntimeKind, check_on_cuda};
    let loaded = switchyard::graph::load_graph(
        &data("dir.properties"),
        &switchyard::graph::LoadOptions::default(),
    )
    .unwrap();
    assert!(loaded.csr.weights().is_some_and(|w| w.is_float()), "dir has real weights");
    for runtime in [RuntimeKind::Bsp, RuntimeKind::Groute] {
        let spec = RunSpec {
            gpus: 2,
            runtime,
            algorithm: Algorithm::Sssp,
            params: AlgorithmParams::default(),
            partitioner: "random".into(),
            seed: 1,
            bsp: Default::default(),
            groute: Default::default(),
            gum: Default::default(),
            validate: true,
            command_line: Vec::new(),
        };
        check_on_cuda(&loaded.csr, &spec).unwrap_or_else(|e| {
            panic!("{}: real-weighted sssp refused on CUDA: {e}", runtime.name())
        });
    }
    // Without a GPU the CLI says so in one line, before any work.
    if switchyard::backend::cuda::gpus_present() == 0 {
        let props = data("dir.properties");
        let out = switchyard(&[
            "run",
            "--graph",
            props.to_str().unwrap(),
            "--algo",
            "sssp",
            "--backend",
            "cuda",
        ]);
        let e = err(&out);
        assert!(e.contains("CUDA") && !e.contains("simulator only"), "{e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn the_references_give_the_hand_worked_cdlp_and_lcc_values() {
    // dir (3 iterations). Neighbour multisets (out, then in): 2 [5 7 13 31], 5 [11 2],
    // 7 [11 13 2], 11 [13 5 7], 13 [2 11 7], 20 [31], 31 [2 20], 40 [].
    // L1: 2->5 (all once: smallest), 5->2, 7->2, 11->5, 13->2, 20->31, 31->2, 40 keeps 40.
    // L2: 2->2 (5,7,13,31 all hold 2), 5->5, 7->5 (5 twice), 11->2, 13->5, 20->2, 31->5.
    // L3: 2->5, 5->2, 7->2, 11->5, 13->2, 20->5, 31->2, 40->40.
    let expected: BTreeMap<u64, u64> =
        [(2, 5), (5, 2), (7, 2), (11, 5), (13, 2), (20, 5), (31, 2), (40, 40)].into();
    assert_eq!(raw("dir").cdlp(3), expected);
    // recip (1 iteration): 10 counts [20 30 30 40] (30 by both arcs) -> 30; 20 [30 10] -> 10;
    // 30 [10 40 10 20] -> 10; 40 [10 30 50] -> 10; 50 [40] -> 40.
    let expected: BTreeMap<u64, u64> = [(10, 30), (20, 10), (30, 10), (40, 10), (50, 40)].into();
    assert_eq!(raw("recip").cdlp(1), expected);
    // undir (5 iterations): 100..400 settle on 100 by L2; 500 and 600 swap every iteration.
    let expected: BTreeMap<u64, u64> =
        [(100, 100), (200, 100), (300, 100), (400, 100), (500, 600), (600, 500), (900, 900)].into();
    assert_eq!(raw("undir").cdlp(5), expected);
    // LCC. dir: N(2) = {5, 7, 13, 31} holds one arc (7->13) of 12 pairs; N(7) = {2, 11, 13}
    // holds 11->13 and 13->2; N(11) = {5, 7, 13} holds 7->13; N(13) = {2, 7, 11} holds 2->7
    // and 7->11; the others have fewer than two neighbours or no arcs among them.
    let third = 1.0 / 3.0;
    let expected: BTreeMap<u64, f64> = [
        (2, 1.0 / 12.0),
        (5, 0.0),
        (7, third),
        (11, 1.0 / 6.0),
        (13, third),
        (20, 0.0),
        (31, 0.0),
        (40, 0.0),
    ]
    .into();
    assert_eq!(raw("dir").lcc(), expected);
    // recip: N(10) = {20, 30, 40} holds 20->30, 30->40; N(20) = {10, 30} holds both ways;
    // N(30) = {10, 20, 40} holds 10->20, 40->10; N(40) = {10, 30, 50} holds 10->30, 30->10.
    let expected: BTreeMap<u64, f64> =
        [(10, third), (20, 1.0), (30, third), (40, third), (50, 0.0)].into();
    assert_eq!(raw("recip").lcc(), expected);
    // undir: the triangle 100-200-300 (300 also has 400); each edge is two arcs.
    let expected: BTreeMap<u64, f64> =
        [(100, 1.0), (200, 1.0), (300, third), (400, 0.0), (500, 0.0), (600, 0.0), (900, 0.0)]
            .into();
    assert_eq!(raw("undir").lcc(), expected);
}

#[test]
fn cdlp_and_lcc_outputs_match_the_references_and_honour_the_properties() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["dir", "undir", "recip"] {
        let g = raw(name);
        let iterations: u32 = g.props["cdlp.max-iterations"].parse().unwrap();
        let labels = g.cdlp(iterations);
        let lcc = g.lcc();
        for gpus in ["1", "3"] {
            let path = dir.path().join(format!("{name}-{gpus}-cdlp"));
            let stdout = run_to(name, &["--algo", "cdlp", "--gpus", gpus], &path);
            has(&stdout, &[&format!("iterations {iterations} (graph.{name}.cdlp.max-iterations)")]);
            for (id, value) in output(&path, &g) {
                assert_eq!(value, labels[&id].to_string(), "{name} cdlp vertex {id} ({gpus} GPUs)");
            }
            let path = dir.path().join(format!("{name}-{gpus}-lcc"));
            run_to(name, &["--algo", "lcc", "--gpus", gpus], &path);
            for (id, value) in output(&path, &g) {
                let got: f64 = value.parse().unwrap();
                let want = lcc[&id];
                // The stated tolerance (algo::lcc::tolerance): one f32 rounding.
                assert!(
                    (got - want).abs() <= want * f64::from(f32::EPSILON) / 2.0,
                    "{name} lcc vertex {id} ({gpus} GPUs): {value} vs {want}"
                );
                assert!(value.contains('e'), "Graphalytics' %.15e form: {value}");
            }
        }
    }
    // --iterations that contradicts cdlp.max-iterations is an error naming both.
    let props = data("dir.properties");
    let e = err(&switchyard(&[
        "run",
        "--graph",
        props.to_str().unwrap(),
        "--algo",
        "cdlp",
        "--iterations",
        "4",
    ]));
    has(&e, &["--iterations 4", "graph.dir.cdlp.max-iterations = 3", "--ignore-properties"]);
}
