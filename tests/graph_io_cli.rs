//! `switchyard graph convert` end to end: formats chain through the CLI with the file's own
//! ids kept, the binary format is read only when named, and the input is never overwritten.

use std::process::Command;
use switchyard::graph::{GraphFormat, LoadOptions, load_graph};

fn convert(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(["graph", "convert"])
        .args(args)
        .output()
        .expect("switchyard runs")
}

fn arcs_in_file_ids(path: &std::path::Path, format: Option<GraphFormat>) -> Vec<(u64, u64)> {
    let g = load_graph(path, &LoadOptions { format, ..Default::default() }).unwrap();
    let mut arcs: Vec<(u64, u64)> = (0..g.csr.num_vertices())
        .flat_map(|u| g.csr.neighbors(u).iter().map(move |&v| (u, v)).collect::<Vec<_>>())
        .map(|(u, v)| (g.file_id(u), g.file_id(v)))
        .collect();
    arcs.sort_unstable();
    arcs
}

#[test]
fn snap_to_binary_to_ldbc_to_snap_keeps_file_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    std::fs::write(p("in.txt"), "# sparse ids\n10 20\n20 30\n30 10\n7 30\n").unwrap();
    let s = |path: std::path::PathBuf| path.to_string_lossy().into_owned();
    let steps: [(&str, Option<&str>, &str, &str); 3] = [
        ("in.txt", None, "g.bin", "binary"),
        ("g.bin", Some("binary"), "g", "ldbc"),
        ("g.properties", None, "out.txt.gz", "snap"),
    ];
    for (input, format, output, to) in steps {
        let mut args = vec![
            "--graph".to_string(),
            s(p(input)),
            "--output".into(),
            s(p(output)),
            "--to".into(),
            to.into(),
        ];
        if let Some(f) = format {
            args.extend(["--format".to_string(), f.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = convert(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let expected = vec![(7, 30), (10, 20), (20, 30), (30, 10)];
    assert_eq!(arcs_in_file_ids(&p("in.txt"), None), expected);
    assert_eq!(arcs_in_file_ids(&p("g.bin"), Some(GraphFormat::Binary)), expected);
    assert_eq!(arcs_in_file_ids(&p("out.txt.gz"), None), expected);
    assert!(!p("out.txt.gz.partial").exists());
}

#[test]
fn binary_input_needs_its_format_named_and_input_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.txt");
    let bin = dir.path().join("g.bin");
    std::fs::write(&input, "0 1\n1 2\n").unwrap();
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    // `--input` is the old spelling of `--graph`, kept as a hidden alias.
    assert!(
        convert(&["--input", &s(&input), "--output", &s(&bin), "--to", "binary"]).status.success()
    );
    let out = convert(&[
        "--graph",
        &s(&bin),
        "--output",
        &s(&dir.path().join("x.mtx")),
        "--to",
        "matrix-market",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("g.bin") && stderr.contains("--format binary"), "{stderr}");
    let out = convert(&["--graph", &s(&input), "--output", &s(&input), "--to", "snap"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the input file"));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "0 1\n1 2\n");
}
