//! Matrix Market coordinate files: the banner
//! `%%MatrixMarket matrix coordinate <pattern|integer|real> <general|symmetric>` (required),
//! `%` comments, a size line `rows cols entries` (rows must equal cols), then one 1-based
//! entry `row col [value]` per line. Entry `(i, j)` is the arc `i-1 -> j-1`. `general` files
//! are directed graphs; `symmetric` files store one triangle of an undirected graph.
//! `integer` values become integer weights, `real` values float weights.

use super::edges::{WeightColumn, WeightSyntax, parse_weight};
use super::text::{
    Lines, Tokens, check_vertex_count, find_header_end, last_line_number, one_based_id,
    parse_chunks, parse_error, parse_u64, show,
};
use super::{half_arcs, write_error};
use crate::graph::{Csr, EdgeWeights, GraphError, VertexId};
use std::io::Write;

/// Value field of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// No values: an unweighted graph.
    Pattern,
    /// Integer values: integer weights.
    Integer,
    /// Real values: float weights.
    Real,
}

/// Parsed banner and size line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Value field.
    pub field: Field,
    /// `symmetric` (one triangle stored, undirected graph).
    pub symmetric: bool,
    /// Rows = columns = vertices.
    pub num_vertices: u64,
    /// Declared number of entries.
    pub num_entries: u64,
}

const BANNER_FIX: &str = "the first line must be `%%MatrixMarket matrix coordinate <pattern|integer|real> <general|symmetric>`";

fn parse_banner(file: &str, line: &[u8]) -> Result<(Field, bool), GraphError> {
    let words: Vec<Vec<u8>> = Tokens::new(line).map(|t| t.to_ascii_lowercase()).collect();
    let word = |i: usize| words.get(i).map(|w| w.as_slice());
    let found = |i: usize| words.get(i).map_or_else(|| "end of line".to_string(), |w| show(w));
    if word(0) != Some(b"%%matrixmarket") {
        return Err(parse_error(file, 1, "the banner `%%MatrixMarket`", show(line), BANNER_FIX));
    }
    if word(1) != Some(b"matrix") {
        return Err(parse_error(file, 1, "object `matrix`", found(1), BANNER_FIX));
    }
    if word(2) != Some(b"coordinate") {
        return Err(parse_error(
            file,
            1,
            "format `coordinate` (dense `array` files are not graphs)",
            found(2),
            BANNER_FIX,
        ));
    }
    let field = match word(3) {
        Some(b"pattern") => Field::Pattern,
        Some(b"integer") => Field::Integer,
        Some(b"real") | Some(b"double") => Field::Real,
        _ => {
            return Err(parse_error(
                file,
                1,
                "field `pattern`, `integer` or `real`",
                found(3),
                BANNER_FIX,
            ));
        }
    };
    let symmetric = match word(4) {
        Some(b"general") => false,
        Some(b"symmetric") => true,
        _ => {
            return Err(parse_error(
                file,
                1,
                "symmetry `general` or `symmetric`",
                found(4),
                BANNER_FIX,
            ));
        }
    };
    Ok((field, symmetric))
}

/// Edges of one chunk.
#[derive(Default)]
struct Chunk {
    edges: Vec<(VertexId, VertexId)>,
    weights: WeightColumn,
}

/// Parsed graph content.
pub(crate) struct Parsed {
    pub(crate) header: Header,
    pub(crate) edges: Vec<(VertexId, VertexId)>,
    pub(crate) weights: Option<EdgeWeights>,
}

/// Parses a Matrix Market file.
pub(crate) fn parse(file: &str, buf: &[u8]) -> Result<Parsed, GraphError> {
    if buf.iter().all(|&b| super::text::is_space(b)) {
        return Err(parse_error(
            file,
            1,
            "the banner `%%MatrixMarket matrix coordinate ...`",
            "an empty file",
            BANNER_FIX,
        ));
    }
    let mut banner = None;
    let mut size = None;
    let header_end = find_header_end(buf, |number, line| {
        if number == 1 {
            banner = Some(parse_banner(file, line)?);
            return Ok(false);
        }
        let mut tokens = Tokens::new(line);
        let Some(first) = tokens.next() else { return Ok(false) };
        if first.first() == Some(&b'%') {
            return Ok(false);
        }
        let mut numbers = [0u64; 3];
        let names = ["the row count", "the column count", "the entry count"];
        for (i, slot) in numbers.iter_mut().enumerate() {
            let token = if i == 0 { Some(first) } else { tokens.next() };
            let token = token.ok_or_else(|| {
                parse_error(
                    file,
                    number,
                    format!("{} on the size line `rows cols entries`", names[i]),
                    "end of line",
                    "the line after the comments must be `rows cols entries`",
                )
            })?;
            *slot = parse_u64(token).ok_or_else(|| {
                parse_error(
                    file,
                    number,
                    format!("{} (a non-negative integer)", names[i]),
                    show(token),
                    "the line after the comments must be `rows cols entries`",
                )
            })?;
        }
        if let Some(extra) = tokens.next() {
            return Err(parse_error(
                file,
                number,
                "3 numbers `rows cols entries`",
                format!("a 4th token {}", show(extra)),
                "remove the extra token",
            ));
        }
        if numbers[0] != numbers[1] {
            return Err(parse_error(
                file,
                number,
                "a square matrix (rows = columns = vertices)",
                format!("{} rows and {} columns", numbers[0], numbers[1]),
                "a graph's adjacency matrix is square; fix the size line",
            ));
        }
        check_vertex_count(file, number, numbers[0], buf.len())?;
        size = Some((number, numbers[0], numbers[2]));
        Ok(true)
    })?;
    let (field, symmetric) =
        banner.ok_or_else(|| parse_error(file, 1, "the banner", "nothing", BANNER_FIX))?;
    let (Some((body_start, first_body_line)), Some((size_line, n, nnz))) = (header_end, size)
    else {
        return Err(parse_error(
            file,
            last_line_number(buf),
            "the size line `rows cols entries` after the banner and comments",
            "the end of the file",
            "the file is truncated; add the size line and the entries",
        ));
    };
    let header = Header { field, symmetric, num_vertices: n, num_entries: nnz };
    let syntax = if field == Field::Integer { WeightSyntax::Int } else { WeightSyntax::Float };
    let want_tokens = if field == Field::Pattern { 2 } else { 3 };
    let body = &buf[body_start..];
    let chunks = parse_chunks(body, first_body_line, |chunk, first_line| {
        let mut out = Chunk { edges: Vec::with_capacity(chunk.len() / 12), ..Default::default() };
        for (line_number, line) in Lines::new(chunk, first_line) {
            let mut tokens = Tokens::new(line);
            let Some(first) = tokens.next() else { continue };
            if first.first() == Some(&b'%') {
                continue;
            }
            let index = |token: Option<&[u8]>, what: &str| -> Result<VertexId, GraphError> {
                let token = token.ok_or_else(|| {
                    parse_error(
                        file,
                        line_number,
                        format!("a {what} index"),
                        "end of line",
                        format!(
                            "entries are `row col{}`",
                            if want_tokens == 3 { " value" } else { "" }
                        ),
                    )
                })?;
                one_based_id(
                    token,
                    n,
                    (file, line_number),
                    &format!("{what} index"),
                    || format!("indices are 1-based and at most {n} (size line {size_line})"),
                    "entries hold numbers only",
                )
            };
            let u = index(Some(first), "row")?;
            let v = index(tokens.next(), "column")?;
            if want_tokens == 3 {
                let Some(w) = tokens.next() else {
                    return Err(parse_error(
                        file,
                        line_number,
                        "a value (third column)",
                        "end of line",
                        "this file's banner declares values; give every entry one",
                    ));
                };
                out.weights.push(parse_weight(file, line_number, w, syntax)?);
            }
            if let Some(extra) = tokens.next() {
                return Err(parse_error(
                    file,
                    line_number,
                    format!("{want_tokens} columns"),
                    format!("an extra column {}", show(extra)),
                    "remove the extra column (complex values are not supported)",
                ));
            }
            out.edges.push((u, v));
        }
        Ok(out)
    })?;
    let count: u64 = chunks.iter().map(|c| c.edges.len() as u64).sum();
    if count < nnz {
        return Err(parse_error(
            file,
            last_line_number(buf),
            format!("{nnz} entries as the size line (line {size_line}) says"),
            format!("{count} entries when the file ends"),
            "the file is truncated, or the size line is wrong",
        ));
    }
    if count > nnz {
        let extra_line = Lines::new(body, first_body_line)
            .filter(|(_, l)| Tokens::new(l).next().is_some_and(|t| t.first() != Some(&b'%')))
            .nth(nnz as usize)
            .map_or(0, |(number, _)| number);
        return Err(parse_error(
            file,
            extra_line,
            format!("only {nnz} entries as the size line (line {size_line}) says"),
            format!("entry number {} (the file has {count})", nnz + 1),
            "fix the entry count on the size line",
        ));
    }
    let mut edges = Vec::with_capacity(count as usize);
    let mut columns = Vec::new();
    for c in chunks {
        edges.extend_from_slice(&c.edges);
        columns.push(c.weights);
    }
    let weights = match field {
        Field::Pattern => None,
        Field::Integer => Some(WeightColumn::concat(columns)),
        Field::Real => Some(match WeightColumn::concat(columns) {
            EdgeWeights::Int(v) => EdgeWeights::Float(v.into_iter().map(|i| i as f32).collect()),
            f => f,
        }),
    };
    Ok(Parsed { header, edges, weights })
}

/// Writes a Matrix Market coordinate file: `general` for a directed graph, `symmetric`
/// (lower triangle, `row >= col`) for an undirected one; `pattern`, `integer` or `real`
/// after the weights. Ids are dense, 1-based.
pub fn write<W: Write>(writer: W, csr: &Csr, name: &str) -> Result<(), GraphError> {
    let mut w = std::io::BufWriter::new(writer);
    let arcs = half_arcs(csr, |u, v| u >= v);
    let field = match csr.weights() {
        None => "pattern",
        Some(EdgeWeights::Int(_)) => "integer",
        Some(EdgeWeights::Float(_)) => "real",
    };
    let symmetry = if csr.is_directed() { "general" } else { "symmetric" };
    let n = csr.num_vertices();
    let result = (|| -> std::io::Result<()> {
        writeln!(w, "%%MatrixMarket matrix coordinate {field} {symmetry}")?;
        writeln!(w, "% written by switchyard")?;
        writeln!(w, "{n} {n} {}", arcs.len())?;
        for &(u, v, arc) in &arcs {
            match csr.weights() {
                None => writeln!(w, "{} {}", u + 1, v + 1)?,
                Some(EdgeWeights::Int(ws)) => {
                    writeln!(w, "{} {} {}", u + 1, v + 1, ws.get(arc).copied().unwrap_or(0))?
                }
                Some(EdgeWeights::Float(ws)) => {
                    writeln!(w, "{} {} {:?}", u + 1, v + 1, ws.get(arc).copied().unwrap_or(0.0))?
                }
            }
        }
        w.flush()
    })();
    result.map_err(|e| write_error(name, e))
}
