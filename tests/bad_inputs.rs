//! Every bad input, through the binary: malformed, extreme and contradictory graph files of
//! every format, LDBC `.properties`, topology files, generator specs, fault specs and
//! command-line options of every subcommand. Each must end with exit code 1 (an error of
//! ours) or 2 (a usage error from the argument parser), an `error:` message that names the
//! input and says how to fix it, and no panic; an output path that cannot be written stops
//! the command before any work. The corpus is `tests/data/bad/` (see its README).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bad_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad")
}

fn switchyard(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// One bad input: the arguments, the exit code, and what the message must say (the input's
/// name, what is wrong, the fix).
struct Case {
    args: &'static [&'static str],
    code: i32,
    says: &'static [&'static str],
}

const fn error(args: &'static [&'static str], says: &'static [&'static str]) -> Case {
    Case { args, code: 1, says }
}

const fn usage(args: &'static [&'static str], says: &'static [&'static str]) -> Case {
    Case { args, code: 2, says }
}

/// Runs every case in `dir`; returns the failures (all cases run, then the test reports).
fn check(dir: &Path, cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let out = switchyard(dir, case.args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let shown = format!("switchyard {}", case.args.join(" "));
        let mut wrong = Vec::new();
        if out.status.code() != Some(case.code) {
            wrong.push(format!("exit code {:?}, expected {}", out.status.code(), case.code));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            wrong.push("panicked".to_string());
        }
        if !stderr.starts_with("error:") {
            wrong.push("stderr does not start with `error:`".to_string());
        }
        for fragment in case.says {
            if !stderr.contains(fragment) {
                wrong.push(format!("message lacks `{fragment}`"));
            }
        }
        // Nothing ran: no result table, no validation line.
        if stdout.contains("validation:") {
            wrong.push("the command did work before failing".to_string());
        }
        if !wrong.is_empty() {
            failures.push(format!("{shown}\n  {}\n  stderr: {stderr}", wrong.join("; ")));
        }
    }
    failures
}

fn assert_all(dir: &Path, cases: &[Case]) {
    let failures = check(dir, cases);
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn malformed_graph_files_of_every_format() {
    const R: &str = "run";
    assert_all(
        &bad_dir(),
        &[
            // Matrix Market.
            error(
                &[R, "--graph", "graphs/mtx_index_out_of_range.mtx"],
                &["graphs/mtx_index_out_of_range.mtx:4", "row index in 1..=3", "found 4"],
            ),
            error(
                &[R, "--graph", "graphs/mtx_truncated.mtx"],
                &["mtx_truncated.mtx:3", "expected 5 entries", "truncated"],
            ),
            error(
                &[R, "--graph", "graphs/mtx_dense_array.mtx"],
                &["mtx_dense_array.mtx:1", "`array`", "coordinate"],
            ),
            error(
                &[R, "--graph", "graphs/mtx_negative_size.mtx"],
                &["mtx_negative_size.mtx:2", "found '-3'", "rows cols entries"],
            ),
            error(
                &[R, "--graph", "graphs/mtx_nan_weight.mtx", "--algo", "sssp"],
                &["mtx_nan_weight.mtx:3", "found 'nan'", "finite non-negative"],
            ),
            error(
                &[R, "--graph", "graphs/mtx_too_many_vertices.mtx"],
                &["mtx_too_many_vertices.mtx:2", "4294967296", "split the graph"],
            ),
            // SNAP edge lists.
            error(
                &[R, "--graph", "graphs/snap_not_a_number.txt"],
                &[
                    "snap_not_a_number.txt:2",
                    "found 'x'",
                    "edge lines are `source target [weight]`",
                ],
            ),
            error(
                &[R, "--graph", "graphs/snap_negative_id.txt"],
                &["snap_negative_id.txt:2", "found '-3'"],
            ),
            error(
                &[R, "--graph", "graphs/snap_id_overflow.txt"],
                &["snap_id_overflow.txt:2", "99999999999999999999999"],
            ),
            error(
                &[R, "--graph", "graphs/snap_negative_weight.txt", "--algo", "sssp"],
                &["snap_negative_weight.txt:2", "found '-7'", "non-negative"],
            ),
            error(
                &[R, "--graph", "graphs/snap_missing_weight.txt"],
                &[
                    "snap_missing_weight.txt:2",
                    "expected 3 columns",
                    "give every edge a weight or none",
                ],
            ),
            error(
                &[R, "--graph", "graphs/only_comments.txt"],
                &["graphs/only_comments.txt has no vertices", "at least one vertex"],
            ),
            error(
                &[R, "--graph", "graphs/empty.txt"],
                &["graphs/empty.txt:1", "an empty file", "complete"],
            ),
            // DIMACS.
            error(
                &[R, "--graph", "graphs/dimacs_target_out_of_range.gr"],
                &["dimacs_target_out_of_range.gr:3", "found 9", "1-based"],
            ),
            error(
                &[R, "--graph", "graphs/dimacs_arc_before_problem_line.gr"],
                &[
                    "dimacs_arc_before_problem_line.gr:1",
                    "problem line `p sp <vertices> <arcs>`",
                    "found 'a 1 2 5'",
                ],
            ),
            error(
                &[R, "--graph", "graphs/dimacs_negative_weight.gr"],
                &["dimacs_negative_weight.gr:2", "found '-5'", "fix or drop this edge"],
            ),
            error(
                &[R, "--graph", "graphs/dimacs_fewer_arcs.gr"],
                &["dimacs_fewer_arcs.gr:2", "expected 4 arcs", "truncated"],
            ),
            // METIS.
            error(
                &[R, "--graph", "graphs/metis_edge_count.graph"],
                &["metis_edge_count.graph:1", "6 neighbour entries", "fix the header's edge count"],
            ),
            error(
                &[R, "--graph", "graphs/metis_neighbour_out_of_range.graph"],
                &["metis_neighbour_out_of_range.graph:3", "found 7", "1-based"],
            ),
            error(
                &[R, "--graph", "graphs/metis_asymmetric.graph"],
                &["metis_asymmetric.graph", "neighbour entries"],
            ),
            error(
                &[R, "--graph", "graphs/metis_bad_fmt.graph"],
                &["metis_bad_fmt.graph:1", "found 'x'"],
            ),
            // Binary CSR and other binary data.
            error(
                &[R, "--graph", "graphs/binary_too_short.bin"],
                &["binary_too_short.bin", "binary data (NUL bytes)", "--format binary"],
            ),
            error(
                &[R, "--graph", "graphs/binary_too_short.bin", "--format", "binary"],
                &[
                    "binary_too_short.bin",
                    "shorter than the 64-byte binary CSR header",
                    "graph convert --to binary",
                ],
            ),
            error(
                &[R, "--graph", "graphs/binary_corrupt.bin"],
                &["binary_corrupt.bin", "read only when asked for", "--format binary"],
            ),
            error(
                &[R, "--graph", "graphs/binary_corrupt.bin", "--format", "binary"],
                &["binary_corrupt.bin", "checksum does not match", "write it again"],
            ),
            error(
                &[R, "--graph", "graphs/binary_bad_header.bin", "--format", "binary"],
                &["binary_bad_header.bin", "version 0", "this build reads version 1"],
            ),
            // A format forced on the wrong content.
            error(
                &[R, "--graph", "graphs/snap_not_a_number.txt", "--format", "dimacs"],
                &["snap_not_a_number.txt:1", "problem line"],
            ),
            // Not a graph file at all.
            error(
                &[R, "--graph", "graphs"],
                &["graphs: is a directory", "name a graph file inside it"],
            ),
            error(
                &[R, "--graph", "graphs/no_such_file.txt"],
                &["graphs/no_such_file.txt", "No such file", "check the path"],
            ),
        ],
    );
}

#[test]
fn fifos_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    assert_all(
        dir.path(),
        &[error(
            &["run", "--graph", "pipe"],
            &["pipe: is a named pipe (FIFO)", "save the stream to a file first"],
        )],
    );
}

#[test]
fn malformed_and_contradictory_ldbc_properties() {
    const R: &str = "run";
    assert_all(
        &bad_dir(),
        &[
            error(
                &[R, "--graph", "ldbc/bad_directed.properties"],
                &[
                    "ldbc/bad_directed.properties:5",
                    "found 'maybe'",
                    "`graph.bad_directed.directed`",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/bad_source.properties"],
                &[
                    "ldbc/bad_source.properties:8",
                    "found 'abc'",
                    "`graph.bad_source.bfs.source-vertex`",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/unknown_source.properties"],
                &[
                    "`graph.unknown_source.bfs.source-vertex = 999999` in ldbc/unknown_source.properties",
                    "is not in",
                    "--ignore-properties",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/missing_edge_file.properties"],
                &[
                    "ldbc/missing.e: does not exist",
                    "`graph.missing_edge_file.edge-file = missing.e`",
                    "fix `graph.missing_edge_file.edge-file`",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/no_vertex_file.properties"],
                &[
                    "ldbc/no_vertex_file.v: does not exist",
                    "sets no `graph.x.vertex-file`",
                    "add `graph.x.vertex-file = FILE`",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/meta_mismatch.properties"],
                &["ldbc/g.v: holds 8 vertices", "meta.vertices = 9", "fix meta.vertices"],
            ),
            error(
                &[R, "--graph", "ldbc/bad_damping.properties", "--algo", "pr"],
                &[
                    "ldbc/bad_damping.properties:11",
                    "found '7'",
                    "`graph.bad_damping.pr.damping-factor`",
                ],
            ),
            error(
                &[R, "--graph", "ldbc/negative_iterations.properties", "--algo", "pr"],
                &["ldbc/negative_iterations.properties:12", "found '-3'", "pr.num-iterations"],
            ),
            error(
                &[R, "--graph", "ldbc/no_equals.properties"],
                &["ldbc/no_equals.properties:5", "`key = value`", "graph.no_equals.directed true"],
            ),
            error(
                &[R, "--graph", "ldbc/garbage.properties"],
                &["ldbc/garbage.properties", "no LDBC properties file", "pass --format"],
            ),
            // Options that contradict a sound .properties.
            error(
                &[R, "--graph", "../ldbc/dir.properties", "--directed", "false"],
                &[
                    "--directed false contradicts `graph.dir.directed = true` in ../ldbc/dir.properties",
                    "--ignore-properties",
                ],
            ),
            error(
                &[R, "--graph", "../ldbc/dir.properties", "--source", "5"],
                &[
                    "--source 5 contradicts `graph.dir.bfs.source-vertex = 2`",
                    "--ignore-properties",
                ],
            ),
            error(
                &[R, "--graph", "../ldbc/dir.properties", "--algo", "pr", "--damping", "0.5"],
                &["--damping 0.5 contradicts `graph.dir.pr.damping-factor = 0.8`"],
            ),
            error(
                &[R, "--graph", "../ldbc/dir.properties", "--algo", "pr", "--iterations", "3"],
                &["--iterations 3 contradicts `graph.dir.pr.num-iterations = 7`"],
            ),
            error(
                &[R, "--graph", "../ldbc/dir.properties", "--source", "3", "--ignore-properties"],
                &["--source 3", "is not in", "2, 5, 7"],
            ),
        ],
    );
}

#[test]
fn malformed_and_extreme_topology_files() {
    const G: &str = "--generate";
    const S: &str = "rmat:scale=4";
    const T: &str = "--topology";
    assert_all(
        &bad_dir(),
        &[
            error(
                &["run", G, S, T, "topologies/negative_bandwidth.toml"],
                &[
                    "topologies/negative_bandwidth.toml:5",
                    "`bandwidth_gb_s` must be a positive number",
                    "fix:",
                ],
            ),
            error(
                &["run", G, S, T, "topologies/huge_latency.toml"],
                &["topologies/huge_latency.toml:6", "`latency_ns` = 1e300 is out of range", "fix:"],
            ),
            error(
                &["run", G, S, T, "topologies/huge_lanes.toml"],
                &["topologies/huge_lanes.toml:25", "`lanes` = 4294967295 is out of range", "fix:"],
            ),
            error(
                &["run", G, S, T, "topologies/unknown_model.toml"],
                &["topologies/unknown_model.toml:15", "unknown GPU model `K41`", "[gpu_model.K41]"],
            ),
            error(
                &["run", G, S, T, "topologies/unknown_key.toml"],
                &["topologies/unknown_key.toml:5", "unknown field `speed`", "fix:"],
            ),
            error(
                &["run", G, S, T, "topologies/syntax_error.toml"],
                &["topologies/syntax_error.toml:1", "fix: correct the TOML"],
            ),
            error(
                &["run", G, S, T, "topologies/link_to_unknown_device.toml"],
                &[
                    "topologies/link_to_unknown_device.toml:29",
                    "`gpu9`, which is not declared",
                    "cpu0, gpu0, gpu1",
                ],
            ),
            error(
                &["run", G, S, T, "topologies/no_socket.toml"],
                &["topologies/no_socket.toml:1", "has no socket", "add a [[socket]]"],
            ),
            error(
                &["run", G, S, T, "topologies/no_gpus.toml"],
                &["topologies/no_gpus.toml:1", "has no GPUs", "add at least one [[gpu]]"],
            ),
            error(
                &["run", G, S, T, "topologies/disconnected_gpu.toml"],
                &["topologies/disconnected_gpu.toml:18", "`gpu1` has no route", "add a [[link]]"],
            ),
            error(
                &["run", G, S, T, "topologies/empty.toml"],
                &["topologies/empty.toml:1", "missing field `name`"],
            ),
            error(
                &["run", G, S, T, "topologies/no_such.toml"],
                &["topologies/no_such.toml", "cannot read topology file", "switchyard topo list"],
            ),
            error(&["run", G, S, T, "topologies"], &["topologies", "Is a directory"]),
            error(&["run", G, S, T, "dgx9"], &["no bundled topology named `dgx9`", "dgx1-v100"]),
            error(
                &["topo", "check", "topologies/huge_lanes.toml"],
                &["1 of 1 topologies failed the check"],
            ),
            error(&["topo", "show", "topologies/no_socket.toml"], &["has no socket"]),
            error(
                &[
                    "sweep",
                    G,
                    S,
                    "--topologies",
                    "dgx1-v100,topologies/unknown_model.toml",
                    "--out",
                    ".",
                ],
                &["unknown GPU model `K41`"],
            ),
        ],
    );
}

#[test]
fn malformed_extreme_and_contradictory_generator_specs() {
    const R: &str = "run";
    const G: &str = "--generate";
    assert_all(
        &bad_dir(),
        &[
            error(
                &[R, G, "foo:x=1"],
                &[
                    "generator spec `foo:x=1`",
                    "unknown generator `foo`",
                    "rmat, er, grid2d, grid3d, rgg",
                ],
            ),
            error(&[R, G, ":scale=5"], &["unknown generator ``"]),
            error(
                &[R, G, "rmat"],
                &["generator spec `rmat`", "missing key `scale`", "add `scale=...`"],
            ),
            error(&[R, G, "rmat:scale"], &["`scale` is not of the form key=value"]),
            error(&[R, G, "rmat:scale=500"], &["scale=500 is out of range", "1..=31"]),
            error(&[R, G, "rmat:scale=5,ef=0"], &["ef=0 gives no edges"]),
            error(&[R, G, "rmat:scale=5,a=0.9,b=0.9"], &["a + b + c <= 1"]),
            error(
                &[R, G, "rmat:scale=5,bogus=1"],
                &["unknown key `bogus` for rmat", "valid keys are"],
            ),
            error(&[R, G, "rmat:scale=5,scale=6"], &["key `scale` is given twice"]),
            error(
                &[R, G, "rmat:scale=5,weights=1..0"],
                &["weights=1..0 is not valid", "1 <= LO <= HI"],
            ),
            error(&[R, G, "er:n=10"], &["give exactly one of m", "and p"]),
            error(&[R, G, "er:n=10,m=5,p=0.1"], &["give exactly one of m"]),
            error(&[R, G, "er:n=0,m=0"], &["n=0: expected a positive integer"]),
            error(&[R, G, "grid2d:w=0,h=3"], &["w=0: expected a positive integer"]),
            error(&[R, G, "grid2d:w=3,h=3,drop=1.5"], &["drop=1.5 is out of range"]),
            error(
                &[R, G, "grid2d:w=100000,h=100000"],
                &["exceed the u32 id space", "make the grid smaller"],
            ),
            error(&[R, G, "rgg:n=10,degree=-1"], &["degree=-1 is out of range"]),
            // Valid, but larger than any machine's memory: refused before generating.
            error(
                &[R, G, "rmat:scale=31"],
                &["GiB of memory to generate", "GiB available", "generate a smaller graph"],
            ),
            error(
                &["graph", "generate", "rmat:scale=31", "--output", "x.mtx", "--to", "snap"],
                &["GiB of memory to generate"],
            ),
            // A generated graph has no file format, directedness override or .properties.
            usage(
                &[R, G, "rmat:scale=4", "--format", "snap"],
                &["'--generate <GENERATE>' cannot be used with '--format <FORMAT>'"],
            ),
            usage(
                &[R, G, "rmat:scale=4", "--directed", "true"],
                &["cannot be used with '--directed <DIRECTED>'"],
            ),
            usage(&[R, G, "rmat:scale=4", "--graph", "graphs/empty.txt"], &["cannot be used with"]),
        ],
    );
}

#[test]
fn bad_fault_specs() {
    const R: &str = "run";
    const G: &str = "--generate";
    const S: &str = "rmat:scale=4";
    assert_all(
        &bad_dir(),
        &[
            usage(
                &[R, G, S, "--fault", "x"],
                &[
                    "invalid value 'x' for '--fault <SPEC>'",
                    "unknown fault kind `x`",
                    "fix: use link-degrade",
                ],
            ),
            usage(&[R, G, S, "--fault", "link-fail"], &["link-fail needs link=...", "fix: e.g."]),
            usage(
                &[R, G, S, "--fault", "link-degrade:link=gpu0-gpu1"],
                &["the fault changes nothing"],
            ),
            usage(&[R, G, S, "--fault", "delay:max_ns=10,p=2"], &["p=2 is outside (0, 1]"]),
            usage(
                &[R, G, S, "--fault", "straggler:gpu=1,slowdown=0.5"],
                &["slowdown=0.5 is outside"],
            ),
            error(
                &[R, G, S, "--fault", "link-fail:link=gpu0-gpu9"],
                &[
                    "fault `link-fail:link=gpu0-gpu9`",
                    "has no devices named so",
                    "fix: name a link",
                ],
            ),
            error(
                &[R, G, S, "--fault", "link-fail:link=gpu0-gpu5"],
                &[
                    "no [[link]] of topology `dgx1-v100` joins `gpu0` and `gpu5`",
                    "`gpu0` is linked to",
                ],
            ),
            error(
                &[R, G, S, "--gpus", "2", "--fault", "straggler:gpu=3,slowdown=2"],
                &["gpu=3, but the run uses 2 GPUs (0..=1)"],
            ),
            error(
                &[R, G, S, "--fault", "straggler:gpu=8,slowdown=2"],
                &["gpu=8, but topology `dgx1-v100` has 8 GPUs"],
            ),
            error(
                &[R, G, S, "--backend", "cuda", "--fault", "delay:max_ns=5"],
                &["--fault injects faults into the simulated machine", "--backend sim"],
            ),
            error(
                &["sweep", G, S, "--fault", "link-fail:link=a-b", "--out", "."],
                &["fault `link-fail:link=a-b`", "has no devices named so"],
            ),
            // A link failure that cuts a GPU off stops the run, naming the link.
            error(
                &[
                    R,
                    G,
                    S,
                    "--topology",
                    "summit-ib-x8",
                    "--gpus",
                    "2",
                    "--fault",
                    "link-fail:link=n1_cpu-n1_gpu",
                ],
                &[
                    "simulated fault: ",
                    "link `n1_cpu`-`n1_gpu`",
                    "no route from `n1_cpu` to `n1_gpu`",
                ],
            ),
        ],
    );
}

#[test]
fn bad_run_options() {
    const R: &str = "run";
    const G: &str = "--generate";
    const S: &str = "rmat:scale=4";
    assert_all(
        &bad_dir(),
        &[
            error(&[R, G, S, "--gpus", "0"], &["--gpus 0", "choose 1..=8"]),
            error(
                &[R, G, S, "--gpus", "9"],
                &["--gpus 9: topology `dgx1-v100` has 8 GPUs; choose 1..=8"],
            ),
            error(
                &[R, G, S, "--gpus", "17", "--partitioner", "seg"],
                &["--gpus 17", "choose 1..=8"],
            ),
            error(
                &[
                    R,
                    G,
                    S,
                    "--topology",
                    "hgx-h200x4",
                    "--gpus",
                    "4",
                    "--partitioner",
                    "random",
                    "--algo",
                    "bfs",
                    "--source",
                    "16",
                ],
                &["--source 16", "0..=15"],
            ),
            error(
                &[R, G, S, "--source", "18446744073709551615"],
                &["--source 18446744073709551615", "give one of its ids"],
            ),
            error(
                &[R, G, S, "--algo", "pr", "--damping", "1.5"],
                &["--damping", "found 1.5", "strictly between 0 and 1"],
            ),
            error(&[R, G, S, "--algo", "pr", "--damping", "nan"], &["--damping", "found NaN"]),
            error(
                &[R, G, S, "--algo", "pr-residual", "--epsilon", "0"],
                &["--epsilon", "found 0", "positive tolerance"],
            ),
            error(&[R, G, S, "--algo", "pr-residual", "--epsilon=-1"], &["--epsilon", "found -1"]),
            error(
                &[R, G, S, "--algo", "dobfs", "--dobfs-alpha", "0"],
                &["--dobfs-alpha", "found 0", "a positive number"],
            ),
            error(
                &[R, G, S, "--algo", "dobfs", "--dobfs-beta", "inf"],
                &["--dobfs-beta", "found inf", "a positive number"],
            ),
            error(&[R, G, S, "--algo", "sssp"], &["sssp: needs edge weights", "add --weights"]),
            error(
                &[R, G, S, "--partitioner", "foo"],
                &["partitioner foo", "random, biased-random, seg, hash, metis"],
            ),
            error(
                &[R, G, S, "--jitter-ns", "99999999999999999"],
                &["--jitter-ns 99999999999999999", "0..=1000000000"],
            ),
            error(
                &[R, G, S, "--priority-delta", "3"],
                &["--priority-delta and --fused are Groute options", "--runtime groute"],
            ),
            error(&[R, G, S, "--fused"], &["Groute options"]),
            error(
                &[R, G, S, "--communication", "broadcast"],
                &["--communication broadcast needs --duplication all"],
            ),
            error(&[R, G, S, "--logical-gpus"], &["--logical-gpus is for --backend cuda"]),
            error(
                &[R, G, S, "--runtime", "groute", "--algo", "dobfs"],
                &["--runtime groute has no operators for dobfs", "use --runtime bsp"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--priority-delta", "0"],
                &["--priority-delta must be at least 1"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--packet-size", "0"],
                &["--packet-size 0", "1..=16777216"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--packet-size", "18446744073709551615"],
                &["--packet-size 18446744073709551615", "1..=16777216"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--buffers", "0"],
                &["--buffers 0", "1..=1024"],
            ),
            error(&[R, G, S, "--runtime", "groute", "--batch-items", "0"], &["--batch-items 0"]),
            error(
                &[R, G, S, "--runtime", "groute", "--fused", "--fused-max-rounds", "0"],
                &["--fused-max-rounds 0"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--worklist-items", "18446744073709551615"],
                &["--worklist-items 18446744073709551615"],
            ),
            error(
                &[R, G, S, "--runtime", "groute", "--out-items", "18446744073709551615"],
                &["--out-items 18446744073709551615"],
            ),
            // Atos's queues are built on the host: a capacity near 2^64 overflowed that
            // allocation (a panic) before it was checked against the GPU's memory.
            error(
                &[R, G, S, "--runtime", "atos", "--atos-queue-capacity", "18446744073709551615"],
                &[
                    "--atos-queue-capacity 18446744073709551615",
                    "more than its",
                    "bytes of memory",
                    "leave it unset",
                ],
            ),
            error(
                &[R, G, S, "--runtime", "atos", "--atos-queue-capacity", "0"],
                &["--atos-queue-capacity 0 holds nothing", "leave it unset"],
            ),
            error(
                &[R, G, S, "--runtime", "atos", "--atos-cta-threads", "33"],
                &["--atos-cta-threads 33", "32 to 1024 threads"],
            ),
            error(
                &[R, G, S, "--runtime", "atos", "--atos-poll-ns", "0"],
                &["--atos-poll-ns 0", "choose e.g. 2000"],
            ),
            error(
                &[R, G, S, "--runtime", "gum", "--gum-t1", "0"],
                &["--gum-t1 must be at least 1 edge", "the default is 16384"],
            ),
            error(
                &[R, G, S, "--runtime", "gum", "--gum-solver-max-workers", "0"],
                &["--gum-solver-max-workers", "must be at least 1"],
            ),
            // Microseconds whose picoseconds do not fit a u64 (the product saturated silently).
            usage(
                &[R, G, S, "--runtime", "gum", "--gum-plan-round-trips-us", "18446744073710"],
                &[
                    "'--gum-plan-round-trips-us <US>'",
                    "18446744073710 us overflows when converted to picoseconds",
                    "at most 18446744073709 us",
                ],
            ),
            usage(
                &[R, G, S, "--algo", "nope"],
                &["invalid value 'nope' for '--algo <ALGO>'", "bfs"],
            ),
            usage(
                &[R, G, S, "--runtime", "nope"],
                &["invalid value 'nope' for '--runtime <RUNTIME>'"],
            ),
            usage(&[R, G, S, "--seed=-1"], &["invalid value '-1' for '--seed <SEED>'"]),
            usage(&[R, G, S, "--gpus", "x"], &["invalid value 'x' for '--gpus <GPUS>'"]),
            usage(&[R, G, S, "--fidelity", "exact"], &["possible values: flow, packet"]),
            usage(&[R, "--format", "snap"], &["--graph <GRAPH>"]),
            usage(&[R, "--bogus"], &["unexpected argument '--bogus'"]),
        ],
    );
}

#[test]
fn outputs_are_checked_before_any_work() {
    const G: &str = "--generate";
    const S: &str = "rmat:scale=4";
    assert_all(
        &bad_dir(),
        &[
            error(
                &["run", G, S, "--report", "no/such/dir/r.json"],
                &[
                    "--report no/such/dir/r.json",
                    "directory no/such/dir does not exist",
                    "mkdir -p no/such/dir",
                ],
            ),
            error(
                &["run", G, S, "--trace", "graphs"],
                &["--trace graphs", "is a directory", "name a file"],
            ),
            error(
                &["run", G, S, "--output", "graphs/empty.txt/x"],
                &["--output graphs/empty.txt/x", "graphs/empty.txt is a file, not a directory"],
            ),
            usage(&["run", G, S, "--report", ""], &["a value is required for '--report <REPORT>'"]),
            error(
                &["sweep", G, S, "--out", "graphs/empty.txt"],
                &["--out graphs/empty.txt", "is a file, and this option writes a folder"],
            ),
            error(
                &[
                    "graph",
                    "convert",
                    "--graph",
                    "graphs/empty.txt",
                    "--output",
                    "graphs/empty.txt",
                    "--to",
                    "snap",
                ],
                &["--output graphs/empty.txt is the input file", "choose another output path"],
            ),
            error(
                &[
                    "graph",
                    "convert",
                    "--graph",
                    "graphs/snap_not_a_number.txt",
                    "--output",
                    "no/dir/x.bin",
                    "--to",
                    "binary",
                ],
                &["--output no/dir/x.bin", "does not exist"],
            ),
            error(
                &["graph", "generate", S, "--output", "no/dir/x.mtx", "--to", "snap"],
                &["--output no/dir/x.mtx", "does not exist"],
            ),
            error(
                &["graph", "partition", G, S, "--parts", "2", "--output", "no/dir/p.txt"],
                &["--output no/dir/p.txt", "does not exist"],
            ),
            error(
                &["topo", "show", "dgx1-v100", "--svg", "no/dir/m.svg"],
                &["--svg no/dir/m.svg", "does not exist"],
            ),
            error(
                &["plot", "--sweeps", "graphs/empty.txt", "--out", "no/dir/p.svg"],
                &["--out no/dir/p.svg", "does not exist"],
            ),
            error(
                &["plot", "--sweeps", "no_such_sweep.json", "--out", "p.svg"],
                &["--sweeps no_such_sweep.json: cannot be read", "switchyard sweep --out"],
            ),
            error(
                &["plot", "--sweeps", "ldbc/g.v", "--out", "p.svg"],
                &["ldbc/g.v: not a sweep.json written by `switchyard sweep`"],
            ),
            error(
                &["swarm", "--seeds", "0..2", "--out", "no/dir/s.json"],
                &["--out no/dir/s.json", "does not exist"],
            ),
            error(
                &["swarm", "--seeds", "0..2", "--record", "graphs"],
                &["--record graphs", "is a directory"],
            ),
            error(
                &["swarm", "--seeds", "0..2", "--artifacts", "graphs/empty.txt"],
                &["--artifacts graphs/empty.txt", "is a file"],
            ),
            error(
                &["calibrate", "runs", G, S, "--json", "no/dir/c.json"],
                &["--json no/dir/c.json", "does not exist"],
            ),
        ],
    );
    // Nothing was created by the refused commands.
    assert!(!bad_dir().join("p.svg").exists() && !bad_dir().join("x.mtx").exists());
}

#[test]
fn bad_options_of_the_other_commands() {
    const G: &str = "--generate";
    const S: &str = "rmat:scale=4";
    assert_all(
        &bad_dir(),
        &[
            error(
                &["sweep", G, S, "--gpus", "0", "--out", "."],
                &["--gpus 0: topology `dgx1-v100` has 8 GPUs", "1..=8"],
            ),
            error(&["sweep", G, S, "--gpus", "9", "--out", "."], &["--gpus 9", "1..=8"]),
            usage(
                &["sweep", G, S, "--algos", "foo"],
                &["invalid value 'foo' for '--algos <ALGOS>'"],
            ),
            error(
                &["graph", "partition", G, S, "--parts", "0"],
                &["0 parts requested", "use at least 1"],
            ),
            error(
                &["graph", "partition", G, S, "--parts", "100"],
                &["100 parts for 16 vertices", "at most 16 parts"],
            ),
            error(
                &["graph", "partition", G, S, "--parts", "2", "--partitioner", "nope"],
                &["partitioner nope"],
            ),
            error(
                &["graph", "info", "--graph", "graphs/mtx_truncated.mtx"],
                &["mtx_truncated.mtx:3"],
            ),
            error(
                &["graph", "generate", S, "--output", "x.bin", "--to", "binary"],
                &["--to binary", "graph convert"],
            ),
            // `calibrate runs --source` is the file's vertex id, as for `run`.
            error(
                &[
                    "calibrate",
                    "runs",
                    "--backend",
                    "sim",
                    "--graph",
                    "../graphs/chesapeake.mtx",
                    "--source",
                    "0",
                    "--json",
                    "c.json",
                ],
                &["--source 0: vertex 0 is not in ../graphs/chesapeake.mtx", "1-based"],
            ),
            error(&["topo", "show", "nosuch"], &["no bundled topology named `nosuch`"]),
            error(&["topo", "bench", "nosuch"], &["no bundled topology named `nosuch`"]),
            error(&["swarm", "--seeds", "5..2"], &["--seeds 5..2", "A < B"]),
            error(&["swarm", "--seeds", "abc"], &["--seeds abc"]),
            error(&["swarm", "--seeds", "0..2", "--jobs", "0"], &["--jobs 0", "at least 1 worker"]),
            error(
                &["swarm", "--seeds", "0..2", "--time-limit-ms", "0"],
                &["--time-limit-ms 0", "at least 1"],
            ),
            error(
                &["swarm", "--seeds", "0..2", "--hang-after-s", "0"],
                &["--hang-after-s 0", "at least 1 second"],
            ),
            usage(
                &["swarm", "--runtime", "nope"],
                &["invalid value 'nope' for '--runtime <RUNTIME>'"],
            ),
            usage(
                &["plot", "--sweeps", "a.json", "--metric", "nope", "--out", "p.svg"],
                &["possible values: speedup, time, work-items"],
            ),
            usage(&["nosuchcommand"], &["unrecognized subcommand 'nosuchcommand'"]),
        ],
    );
}
