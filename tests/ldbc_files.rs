//! LDBC Graphalytics files in and out through `switchyard run`: hand-built graphs in
//! `tests/data/ldbc/` (directed and undirected, sparse ids, isolated and unreachable
//! vertices, real weights); `--output` files in the file's own ids checked against
//! references written here from the raw `.v`/`.e` text (they share no code with the
//! product); every `.properties` default honoured; bad inputs refused with their message.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Output;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ldbc").join(name)
}

fn switchyard(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn err(out: &Output) -> String {
    assert!(!out.status.success(), "should fail: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "lacks {p:?}:\n{text}");
    }
}

/// A graph read from its raw text: ids, and `(u, v, w)` arcs (both ways if undirected).
struct Raw {
    ids: Vec<u64>,
    arcs: Vec<(u64, u64, f32)>,
    props: BTreeMap<String, String>,
}

fn raw(name: &str) -> Raw {
    let text = |ext: &str| std::fs::read_to_string(data(&format!("{name}{ext}"))).unwrap();
    let props: BTreeMap<String, String> = text(".properties")
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.trim().trim_start_matches(&format!("graph.{name}.")).to_string(), v.trim().into())
        })
        .collect();
    let ids = text(".v").lines().map(|l| l.trim().parse().unwrap()).collect();
    let directed = props["directed"] == "true";
    let mut arcs = Vec::new();
    for line in text(".e").lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        let (u, v, w) = (t[0].parse().unwrap(), t[1].parse().unwrap(), t[2].parse().unwrap());
        arcs.push((u, v, w));
        if !directed {
            arcs.push((v, u, w));
        }
    }
    Raw { ids, arcs, props }
}

impl Raw {
    fn out(&self, u: u64) -> impl Iterator<Item = &(u64, u64, f32)> {
        self.arcs.iter().filter(move |a| a.0 == u)
    }

    fn bfs(&self, s: u64) -> BTreeMap<u64, Option<u64>> {
        let mut level: BTreeMap<u64, Option<u64>> = self.ids.iter().map(|&v| (v, None)).collect();
        level.insert(s, Some(0));
        let mut queue = VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            let next = level[&u].map(|l| l + 1);
            for &(_, v, _) in self.out(u) {
                if level[&v].is_none() {
                    level.insert(v, next);
                    queue.push_back(v);
                }
            }
        }
        level
    }

    /// Bellman-Ford to a fixed point in f32 (any order reaches the same distances, since
    /// f32 addition is monotone).
    fn sssp(&self, s: u64) -> BTreeMap<u64, f32> {
        let mut d: BTreeMap<u64, f32> = self.ids.iter().map(|&v| (v, f32::INFINITY)).collect();
        d.insert(s, 0.0);
        loop {
            let mut changed = false;
            for &(u, v, w) in &self.arcs {
                let nd = d[&u] + w;
                if nd < d[&v] {
                    d.insert(v, nd);
                    changed = true;
                }
            }
            if !changed {
                return d;
            }
        }
    }

    /// LDBC Graphalytics PageRank (dangling vertices' rank spread over all vertices).
    fn pagerank(&self, damping: f64, iterations: u32) -> BTreeMap<u64, f64> {
        let n = self.ids.len() as f64;
        let mut pr: BTreeMap<u64, f64> = self.ids.iter().map(|&v| (v, 1.0 / n)).collect();
        let outdeg = |u: u64| self.out(u).count() as f64;
        for _ in 0..iterations {
            let dangling: f64 = self.ids.iter().filter(|&&v| outdeg(v) == 0.0).map(|v| pr[v]).sum();
            let mut next = BTreeMap::new();
            for &v in &self.ids {
                let incoming: f64 =
                    self.arcs.iter().filter(|a| a.1 == v).map(|a| pr[&a.0] / outdeg(a.0)).sum();
                next.insert(v, (1.0 - damping) / n + damping * (incoming + dangling / n));
            }
            pr = next;
        }
        pr
    }

    fn components(&self) -> BTreeSet<BTreeSet<u64>> {
        let mut left: BTreeSet<u64> = self.ids.iter().copied().collect();
        let mut parts = BTreeSet::new();
        while let Some(&s) = left.iter().next() {
            let mut part = BTreeSet::from([s]);
            let mut stack = vec![s];
            while let Some(u) = stack.pop() {
                for &(a, b, _) in &self.arcs {
                    for (x, y) in [(a, b), (b, a)] {
                        if x == u && part.insert(y) {
                            stack.push(y);
                        }
                    }
                }
            }
            left.retain(|v| !part.contains(v));
            parts.insert(part);
        }
        parts
    }
}

/// An output file as `(id, value text)` lines, checked to list every vertex once in the
/// `.v` file's order.
fn output(path: &Path, g: &Raw) -> Vec<(u64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<(u64, String)> = text
        .lines()
        .map(|l| {
            let (id, value) = l.split_once(' ').expect("`id value`");
            (id.parse().expect("a file id"), value.to_string())
        })
        .collect();
    let mut sorted = g.ids.clone();
    sorted.sort_unstable();
    assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), sorted, "{}", path.display());
    lines
}

fn run_to(graph: &str, args: &[&str], out: &Path) -> String {
    let props = data(&format!("{graph}.properties"));
    let mut all =
        vec!["run", "--graph", props.to_str().unwrap(), "--output", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ok(&switchyard(&all))
}

#[test]
fn bfs_and_sssp_outputs_match_independent_references_in_the_files_ids() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["dir", "undir"] {
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
    for name in ["dir", "undir"] {
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
