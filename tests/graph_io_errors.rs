//! Bad input gives an error naming the file, the line, what was expected and what was found
//! (and never a panic).

use std::io::Write;
use switchyard::graph::formats::{self, GraphFormat};
use switchyard::graph::{
    BuildOptions, Csr, EdgeWeights, LoadOptions, load_graph, load_graph_from_bytes,
};

fn error(name: &str, text: &[u8], format: Option<GraphFormat>) -> String {
    let options = LoadOptions { format, ..Default::default() };
    match load_graph_from_bytes(name, text, &options) {
        Ok(g) => panic!("{name} loaded ({} vertices) but should fail", g.csr.num_vertices()),
        Err(e) => e.to_string(),
    }
}

fn assert_has(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "message lacks {p:?}: {message}");
    }
}

#[test]
fn empty_file() {
    assert_has(&error("e.txt", b"", None), &["e.txt:1", "empty file"]);
    assert_has(
        &error("e.mtx", b"", Some(GraphFormat::MatrixMarket)),
        &["e.mtx:1", "banner", "empty file"],
    );
    assert_has(&error("e.gr", b"", Some(GraphFormat::Dimacs)), &["e.gr:1", "p sp", "empty file"]);
    assert_has(
        &error("e.graph", b"", Some(GraphFormat::Metis)),
        &["e.graph:1", "header", "empty file"],
    );
}

#[test]
fn matrix_market_missing_or_wrong_banner() {
    let m = error("a.mtx", b"3 3 1\n1 2\n", Some(GraphFormat::MatrixMarket));
    assert_has(&m, &["a.mtx:1", "expected the banner `%%MatrixMarket`", "found '3 3 1'"]);
    let m = error("b.mtx", b"%%MatrixMarket matrix array real general\n3 3\n", None);
    assert_has(&m, &["b.mtx:1", "coordinate", "found 'array'"]);
    let m = error("c.mtx", b"%%MatrixMarket matrix coordinate complex general\n", None);
    assert_has(&m, &["c.mtx:1", "field", "found 'complex'"]);
    let m = error("d.mtx", b"%%MatrixMarket matrix coordinate real hermitian\n", None);
    assert_has(&m, &["d.mtx:1", "symmetry", "found 'hermitian'"]);
}

#[test]
fn matrix_market_truncated_and_counts() {
    let text = b"%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 4\n1 2\n2 3\n";
    assert_has(
        &error("t.mtx", text, None),
        &["t.mtx:5", "expected 4 entries", "line 3", "found 2 entries"],
    );
    let text = b"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n";
    assert_has(&error("x.mtx", text, None), &["x.mtx:4", "only 1 entries", "entry number 2"]);
    let text = b"%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n";
    assert_has(&error("r.mtx", text, None), &["r.mtx:2", "square", "3 rows and 4 columns"]);
    let text = b"%%MatrixMarket matrix coordinate pattern general\n% only comments\n";
    assert_has(&error("s.mtx", text, None), &["s.mtx:2", "size line", "end of the file"]);
}

#[test]
fn matrix_market_ids_out_of_range_and_bad_values() {
    let text = b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n5 1\n";
    assert_has(&error("o.mtx", text, None), &["o.mtx:4", "row index in 1..=3", "found 5"]);
    let text = b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n0 1\n";
    assert_has(&error("z.mtx", text, None), &["z.mtx:3", "1..=3", "found 0"]);
    let text = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.5\n2 3 NaN\n";
    assert_has(&error("n.mtx", text, None), &["n.mtx:4", "finite non-negative", "'NaN'"]);
    let text = b"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 -7\n";
    assert_has(&error("i.mtx", text, None), &["i.mtx:3", "non-negative", "'-7'"]);
    let text = b"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n";
    assert_has(&error("f.mtx", text, None), &["f.mtx:3", "integer weight", "'1.5'"]);
    let text = b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n";
    assert_has(&error("v.mtx", text, None), &["v.mtx:3", "value", "end of line"]);
}

#[test]
fn snap_non_numeric_tokens_and_columns() {
    assert_has(&error("s.txt", b"# c\n0 1\n1 x\n", None), &["s.txt:3", "target id", "found 'x'"]);
    assert_has(&error("s.txt", b"0 1\n-1 2\n", None), &["s.txt:2", "source id", "found '-1'"]);
    assert_has(&error("s.txt", b"0 1\n7\n", None), &["s.txt:2", "target vertex id", "end of line"]);
    assert_has(
        &error("s.txt", b"0 1 2\n1 2\n", None),
        &["s.txt:2", "3 columns like the edge on line 1"],
    );
    assert_has(&error("s.txt", b"0 1 2 3\n", None), &["s.txt:1", "at most 3 columns", "'3'"]);
    assert_has(&error("s.txt", b"0 1 -2\n", None), &["s.txt:1", "non-negative", "'-2'"]);
    let text = b"# Nodes: 3 Edges: 5\n0 1\n1 2\n";
    assert_has(&error("h.txt", text, None), &["h.txt:1", "5 edge lines", "found 2 edge lines"]);
}

#[test]
fn errors_deep_in_a_big_file_name_the_right_line() {
    // Several parallel chunks: the bad token sits on line 250_001.
    let mut text = Vec::new();
    for i in 0..250_000u32 {
        writeln!(text, "{i}\t{}", i + 1).unwrap();
    }
    text.extend_from_slice(b"17 1x\n");
    for i in 0..50_000u32 {
        writeln!(text, "{i}\t{}", i + 1).unwrap();
    }
    assert_has(&error("big.txt", &text, None), &["big.txt:250001:", "found '1x'"]);
}

#[test]
fn dimacs_errors() {
    let m = error("d.gr", b"c x\na 1 2 3\n", Some(GraphFormat::Dimacs));
    assert_has(&m, &["d.gr:2", "problem line", "found 'a 1 2 3'"]);
    let m = error("d.gr", b"p sp 3 2\na 1 2 3\n", None);
    assert_has(&m, &["d.gr:2", "2 arcs as the problem line (line 1) says", "found 1 arc lines"]);
    let m = error("d.gr", b"p sp 3 1\na 1 4 3\n", None);
    assert_has(&m, &["d.gr:2", "target vertex in 1..=3", "found 4"]);
    let m = error("d.gr", b"p sp 3 1\na 1 2 -3\n", None);
    assert_has(&m, &["d.gr:2", "non-negative", "'-3'"]);
    let m = error("d.gr", b"p max 3 1\n", None);
    assert_has(&m, &["d.gr:1", "problem type `sp`", "'max'"]);
    let m = error("d.gr", b"p sp 3 1\na 1 2\n", None);
    assert_has(&m, &["d.gr:2", "weight", "end of line"]);
}

#[test]
fn metis_errors() {
    let m = error("m.graph", b"3 2\n2\n1 3\n", Some(GraphFormat::Metis));
    assert_has(
        &m,
        &["m.graph:4", "3 vertex lines as the header (line 1) says", "found 2 vertex lines"],
    );
    let m = error("m.graph", b"3 3\n2\n1 3\n2\n", Some(GraphFormat::Metis));
    assert_has(&m, &["m.graph:1", "6 neighbour entries", "found 4 neighbour entries"]);
    let m = error("m.graph", b"3 2 2\n2\n1 3\n2\n", Some(GraphFormat::Metis));
    assert_has(&m, &["m.graph:1", "fmt", "found '2'"]);
    let m = error("m.graph", b"3 2 1\n2 5\n1 5 3\n2\n", Some(GraphFormat::Metis));
    assert_has(&m, &["m.graph:3", "edge weight after neighbour 3", "end of line"]);
    let m = error("m.graph", b"3 2\n2\n1 4\n2\n", Some(GraphFormat::Metis));
    assert_has(&m, &["m.graph:3", "neighbour in 1..=3", "found 4"]);
    let m = error("m.graph", b"3 2\n2\n1\n2 2\n", Some(GraphFormat::Metis));
    assert_has(
        &m,
        &["m.graph:3", "vertex 2 to list neighbour 3, as vertex 3 does on line 4", "no such entry"],
    );
    let m = error("m.graph", b"3 2 1\n2 4\n1 4 3 5\n2 6\n", Some(GraphFormat::Metis));
    assert_has(
        &m,
        &[
            "m.graph:4",
            "vertex 3 to list neighbour 2 with edge weight 5",
            "as vertex 2 does on line 3",
        ],
    );
    let m = error("m.graph", b"3 2\n2\n1 3\n2\n9 9\n", Some(GraphFormat::Metis));
    assert_has(&m, &["m.graph:5", "end of the file after 3 vertex lines", "'9 9'"]);
}

#[test]
fn binary_is_refused_unless_named_and_checked_when_named() {
    let csr = Csr::from_edges(
        3,
        &[(0, 1), (1, 2)],
        Some(EdgeWeights::Int(vec![4, 5])),
        true,
        BuildOptions::default(),
    )
    .unwrap();
    let mut bytes = Vec::new();
    formats::write_graph(&mut bytes, GraphFormat::Binary, &csr, None, "g.bin").unwrap();
    assert_has(
        &error("g.bin", &bytes, None),
        &["g.bin", "read only when asked", "--format binary"],
    );
    let ok = load_graph_from_bytes(
        "g.bin",
        &bytes,
        &LoadOptions { format: Some(GraphFormat::Binary), ..Default::default() },
    )
    .unwrap();
    assert_eq!(ok.csr, csr);
    let truncated = &bytes[..bytes.len() - 3];
    assert_has(
        &error("g.bin", truncated, Some(GraphFormat::Binary)),
        &["g.bin", "bytes long", "needs"],
    );
    let mut corrupt = bytes.clone();
    let last = corrupt.len() - 9;
    corrupt[last] ^= 0x40;
    assert_has(&error("g.bin", &corrupt, Some(GraphFormat::Binary)), &["g.bin", "checksum"]);
    let mut header = bytes.clone();
    header[20] ^= 1;
    assert_has(
        &error("g.bin", &header, Some(GraphFormat::Binary)),
        &["g.bin", "header", "checksum"],
    );
    assert_has(
        &error("g.bin", b"0 1\n", Some(GraphFormat::Binary)),
        &["g.bin", "shorter than the 64-byte"],
    );
}

#[test]
fn truncated_gzip() {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for i in 0..1000 {
        writeln!(enc, "{i} {}", i + 1).unwrap();
    }
    let gz = enc.finish().unwrap();
    assert!(load_graph_from_bytes("ok.gz", &gz, &LoadOptions::default()).is_ok());
    assert_has(&error("t.txt.gz", &gz[..gz.len() / 2], None), &["t.txt.gz", "does not decompress"]);
}

#[test]
fn ldbc_vertex_file_missing_a_vertex() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("g");
    std::fs::write(base.with_extension("v"), "1\n2\n3\n").unwrap();
    std::fs::write(base.with_extension("e"), "1 2\n2 3\n3 7\n").unwrap();
    std::fs::write(base.with_extension("properties"), "graph.g.directed = true\n").unwrap();
    let e = load_graph(&base.with_extension("properties"), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert_has(&e, &["g.e:3", "vertices listed in", "vertex 7, which", "g.v does not list"]);
    std::fs::write(base.with_extension("v"), "1\n2\n3\n2\n").unwrap();
    let e = load_graph(
        &base.with_extension("e"),
        &LoadOptions { format: Some(GraphFormat::Ldbc), ..Default::default() },
    )
    .unwrap_err()
    .to_string();
    assert_has(&e, &["g.v:4", "each vertex id once", "vertex 2 again"]);
    std::fs::write(base.with_extension("properties"), "graph.g.directed = maybe\n").unwrap();
    let e = load_graph(&base.with_extension("properties"), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert_has(&e, &["g.properties:1", "`true` or `false`", "'maybe'"]);
}

#[test]
fn missing_file_names_the_path() {
    let e = load_graph(std::path::Path::new("/nonexistent/graph.mtx"), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert_has(&e, &["/nonexistent/graph.mtx", "reading"]);
}

#[test]
fn absurd_vertex_counts_are_refused_before_allocating() {
    let m = error(
        "big.mtx",
        b"%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 0\n",
        None,
    );
    assert_has(&m, &["big.mtx:2", "vertices for a file of 73 bytes", "found 4000000000 vertices"]);
    let m = error("big.gr", b"p sp 99999999999 0\n", None);
    assert_has(&m, &["big.gr:1", "at most 4294967295 vertices", "found 99999999999"]);
    let m = error("big.graph", b"3000000000 0\n", Some(GraphFormat::Metis));
    assert_has(&m, &["big.graph:1", "vertices for a file of 13 bytes"]);
    // A SNAP `Nodes:` comment that large is ignored: ids are remapped instead.
    let g = load_graph_from_bytes("n.txt", b"# Nodes: 3000000000\n0 1\n", &LoadOptions::default())
        .unwrap();
    assert_eq!(g.csr.num_vertices(), 2);
}

/// Loads `path` with `options`, expecting an error; returns its message.
fn path_error(path: &std::path::Path, options: &LoadOptions) -> String {
    match load_graph(path, options) {
        Ok(g) => {
            panic!("{} loaded ({} vertices) but should fail", path.display(), g.csr.num_vertices())
        }
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_directory_as_a_graph_says_so_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().display().to_string();
    for format in
        [None, Some(GraphFormat::Binary), Some(GraphFormat::Ldbc), Some(GraphFormat::Snap)]
    {
        let e = path_error(dir.path(), &LoadOptions { format, ..Default::default() });
        assert_has(&e, &[&name, "is a directory, not a graph file", "name a graph file inside it"]);
        assert!(!e.contains("os error"), "{format:?}: {e}");
    }
}

#[test]
#[cfg(unix)]
fn a_fifo_as_a_graph_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("graph.fifo");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        other => {
            println!("skipping: mkfifo is unavailable ({other:?})");
            return;
        }
    }
    let name = fifo.display().to_string();
    // Opening a FIFO with no writer would block: the test would hang, not fail, if the
    // loader opened it. Each format's path is checked.
    for format in [None, Some(GraphFormat::Binary), Some(GraphFormat::Ldbc)] {
        let e = path_error(&fifo, &LoadOptions { format, ..Default::default() });
        assert_has(
            &e,
            &[&name, "is a named pipe (FIFO)", "regular files only", &format!("cat {name} >")],
        );
    }
}

#[test]
#[cfg(unix)]
fn an_unreadable_file_names_the_path_and_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.mtx");
    std::fs::write(&path, "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
        .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&path).is_ok() {
        // Root (or CAP_DAC_OVERRIDE) reads a mode-000 file: nothing to refuse here.
        println!("skipping: this process reads a mode-000 file (running as root?)");
        return;
    }
    let name = path.display().to_string();
    for format in [None, Some(GraphFormat::Binary), Some(GraphFormat::MatrixMarket)] {
        let e = path_error(&path, &LoadOptions { format, ..Default::default() });
        assert_has(&e, &[&name, "cannot be read: permission denied", &format!("chmod u+r {name}")]);
    }
}

#[test]
#[cfg(unix)]
fn a_device_as_a_graph_is_not_a_regular_file() {
    let null = std::path::Path::new("/dev/null");
    if !null.exists() {
        return;
    }
    let e = path_error(null, &LoadOptions::default());
    assert_has(
        &e,
        &["/dev/null", "is a socket or a device, not a regular file", "regular graph file"],
    );
}
