//! Graph file formats: one module per format (a parser and a writer each), content-based
//! format detection, and the writer dispatch used by `switchyard graph convert`.
//!
//! Text parsers work on a byte buffer (a memory map, or the decompressed bytes of a gzip
//! file), read the header sequentially, then split the body at newlines into chunks that
//! rayon parses in parallel with hand-written integer parsing (`text`).

pub mod binary;
pub mod dimacs;
pub(crate) mod edges;
pub mod ldbc;
pub mod matrix_market;
pub mod metis;
pub mod snap;
pub(crate) mod text;

use crate::graph::{Csr, GraphError};
use std::fmt;
use std::io::Write;
use std::str::FromStr;

/// A graph file format switchyard reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum GraphFormat {
    /// Matrix Market coordinate (`%%MatrixMarket matrix coordinate ...`).
    #[value(name = "matrix-market", alias = "mtx")]
    MatrixMarket,
    /// SNAP edge list (`# comments`, `u v [w]` per line).
    #[value(name = "snap", alias = "edge-list")]
    Snap,
    /// DIMACS 9th challenge shortest-path `.gr` (`p sp n m`, `a u v w`).
    #[value(name = "dimacs")]
    Dimacs,
    /// METIS `.graph` adjacency format.
    #[value(name = "metis")]
    Metis,
    /// LDBC Graphalytics `.v` + `.e` + `.properties`.
    #[value(name = "ldbc")]
    Ldbc,
    /// switchyard's binary CSR (written by `graph convert`, read only when named).
    #[value(name = "binary")]
    Binary,
}

impl GraphFormat {
    /// Every format, in a fixed order.
    pub const ALL: [GraphFormat; 6] = [
        GraphFormat::MatrixMarket,
        GraphFormat::Snap,
        GraphFormat::Dimacs,
        GraphFormat::Metis,
        GraphFormat::Ldbc,
        GraphFormat::Binary,
    ];

    /// The name used on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::MatrixMarket => "matrix-market",
            GraphFormat::Snap => "snap",
            GraphFormat::Dimacs => "dimacs",
            GraphFormat::Metis => "metis",
            GraphFormat::Ldbc => "ldbc",
            GraphFormat::Binary => "binary",
        }
    }
}

impl fmt::Display for GraphFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GraphFormat {
    type Err = GraphError;

    fn from_str(s: &str) -> Result<Self, GraphError> {
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "matrix-market" | "matrixmarket" | "mtx" | "mm" => Ok(GraphFormat::MatrixMarket),
            "snap" | "edge-list" | "edgelist" => Ok(GraphFormat::Snap),
            "dimacs" | "gr" => Ok(GraphFormat::Dimacs),
            "metis" | "graph" => Ok(GraphFormat::Metis),
            "ldbc" | "graphalytics" => Ok(GraphFormat::Ldbc),
            "binary" | "bin" | "csr" => Ok(GraphFormat::Binary),
            _ => Err(GraphError::Format {
                file: s.to_string(),
                problem: "is not a graph format name".into(),
                fix: "use one of matrix-market, snap, dimacs, metis, ldbc, binary".into(),
            }),
        }
    }
}

/// Guesses the format of (already decompressed) file content. `Binary` is returned for the
/// binary magic, but the loader reads it only when the caller named that format.
///
/// Rules, in order: the binary magic; a `%%MatrixMarket` banner; a first line other than
/// `#` comments of the form `graph.NAME.key = value` (an LDBC `.properties` file); a first line starting
/// with `c`, `p` or `a` (DIMACS); with `%` (METIS comment); with `#` (SNAP comment); otherwise a
/// numeric first line `n m [fmt [ncon]]` followed by exactly `n` adjacency lines is METIS,
/// and anything else numeric is a SNAP edge list.
pub fn detect_format(bytes: &[u8]) -> Option<GraphFormat> {
    if bytes.starts_with(&binary::MAGIC) {
        return Some(GraphFormat::Binary);
    }
    let head = &bytes[..bytes.len().min(14)];
    if head.eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Some(GraphFormat::MatrixMarket);
    }
    let trim = |l: &'_ [u8]| -> usize { l.iter().position(|&b| !text::is_space(b)).unwrap_or(0) };
    let mut lines = text::Lines::new(bytes, 1).filter(|(_, l)| !text::is_blank(l));
    let (_, first) = lines.next()?;
    let first = &first[trim(first)..];
    let first_data = std::iter::once(first)
        .chain(lines.map(|(_, l)| l))
        .map(|l| &l[trim(l)..])
        .find(|l| l.first() != Some(&b'#'));
    if first_data.is_some_and(ldbc::looks_like_properties) {
        return Some(GraphFormat::Ldbc);
    }
    match first.first()? {
        // `a` too: an arc line first (before the problem line) is still DIMACS, and its
        // parser says what is missing.
        b'c' | b'p' | b'a' => return Some(GraphFormat::Dimacs),
        b'%' => return Some(GraphFormat::Metis),
        b'#' => return Some(GraphFormat::Snap),
        _ => {}
    }
    if metis::looks_like_metis(bytes) { Some(GraphFormat::Metis) } else { Some(GraphFormat::Snap) }
}

/// Writes `csr` in a single-file `format` (every format but LDBC, which needs three files:
/// see [`ldbc::write`]). `original_ids` (dense id -> file id) is used by the formats that
/// can carry arbitrary ids (SNAP, binary); the others write dense ids.
pub fn write_graph<W: Write>(
    writer: W,
    format: GraphFormat,
    csr: &Csr,
    original_ids: Option<&[u64]>,
    name: &str,
) -> Result<(), GraphError> {
    match format {
        GraphFormat::MatrixMarket => matrix_market::write(writer, csr, name),
        GraphFormat::Snap => snap::write(writer, csr, original_ids, name),
        GraphFormat::Dimacs => dimacs::write(writer, csr, name),
        GraphFormat::Metis => metis::write(writer, csr, None, name),
        GraphFormat::Binary => binary::write(writer, csr, original_ids, name),
        GraphFormat::Ldbc => Err(GraphError::Format {
            file: name.to_string(),
            problem: "LDBC needs three files (.v, .e, .properties), not one stream".into(),
            fix: "call formats::ldbc::write, or `graph convert --to ldbc --output BASENAME`".into(),
        }),
    }
}

/// Maps an I/O error while writing `name` to a `GraphError`.
pub(crate) fn write_error(name: &str, source: std::io::Error) -> GraphError {
    GraphError::Io { path: name.to_string(), action: "writing", source }
}

/// Arcs to write, as `(u, v, arc index)` in vertex order: every arc of a directed graph;
/// for an undirected graph each edge once, as the arc `u -> v` with `keep(u, v)` (callers
/// pass `u <= v` or `u >= v`; a self-loop is stored, and written, once).
pub(crate) fn half_arcs(csr: &Csr, keep: impl Fn(u32, u32) -> bool) -> Vec<(u32, u32, usize)> {
    let undirected = !csr.is_directed();
    let mut out = Vec::with_capacity(if undirected {
        csr.num_arcs() as usize / 2 + 1
    } else {
        csr.num_arcs() as usize
    });
    for u in 0..csr.num_vertices() {
        for (arc, &v) in csr.arc_range(u).zip(csr.neighbors(u)) {
            if !undirected || keep(u, v) {
                out.push((u, v, arc));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in GraphFormat::ALL {
            assert_eq!(f.name().parse::<GraphFormat>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        let e = "tsv".parse::<GraphFormat>().unwrap_err().to_string();
        assert!(e.contains("tsv") && e.contains("matrix-market"), "{e}");
    }

    #[test]
    fn detection_by_content() {
        assert_eq!(
            detect_format(b"%%MatrixMarket matrix coordinate pattern general\n"),
            Some(GraphFormat::MatrixMarket)
        );
        assert_eq!(detect_format(b"c hello\np sp 2 1\na 1 2 3\n"), Some(GraphFormat::Dimacs));
        assert_eq!(detect_format(b"p sp 2 1\na 1 2 3\n"), Some(GraphFormat::Dimacs));
        assert_eq!(detect_format(b"# c\n0 1\n"), Some(GraphFormat::Snap));
        assert_eq!(detect_format(b"0 1\n1 2\n2 0\n"), Some(GraphFormat::Snap));
        assert_eq!(detect_format(b"3 2\n2\n1 3\n2\n"), Some(GraphFormat::Metis));
        assert_eq!(detect_format(b"3 2 0\n2\n1 3\n2\n\n"), Some(GraphFormat::Metis));
        assert_eq!(detect_format(b"% metis\n3 2\n2\n1 3\n2\n"), Some(GraphFormat::Metis));
        assert_eq!(detect_format(b"graph.g.directed = true\n"), Some(GraphFormat::Ldbc));
        assert_eq!(detect_format(b"# c\n\ngraph.g.directed = true\n"), Some(GraphFormat::Ldbc));
        assert_eq!(detect_format(&binary::MAGIC), Some(GraphFormat::Binary));
        assert_eq!(detect_format(b""), None);
        assert_eq!(detect_format(b"\n \n"), None);
    }
}
