//! DIMACS 9th Implementation Challenge shortest-path graphs (`.gr`): `c` comment lines, one
//! problem line `p sp n m` before any arc, then `m` arc lines `a u v w` with 1-based vertex
//! ids and non-negative integer weights. Always a directed graph with integer weights.

use super::edges::{Weight, WeightColumn, WeightSyntax, parse_weight};
use super::text::{
    Lines, Tokens, check_vertex_count, find_header_end, last_line_number, one_based_id,
    parse_chunks, parse_error, parse_u64, show,
};
use super::write_error;
use crate::graph::{Csr, EdgeWeights, GraphError, VertexId};
use std::io::Write;

const PROBLEM_FIX: &str =
    "a DIMACS shortest-path file needs the problem line `p sp <vertices> <arcs>` before its arcs";

/// Parsed graph content.
pub(crate) struct Parsed {
    pub(crate) num_vertices: u64,
    pub(crate) edges: Vec<(VertexId, VertexId)>,
    pub(crate) weights: EdgeWeights,
}

fn is_comment(line: &[u8]) -> bool {
    matches!(Tokens::new(line).next(), None | Some(b"c"))
        || line.first() == Some(&b'c') && line.get(1).is_none_or(|&b| super::text::is_space(b))
}

/// Parses a DIMACS `.gr` file.
pub(crate) fn parse(file: &str, buf: &[u8]) -> Result<Parsed, GraphError> {
    let mut problem = None;
    let header_end = find_header_end(buf, |number, line| {
        if is_comment(line) {
            return Ok(false);
        }
        let mut tokens = Tokens::new(line);
        let first = tokens.next().unwrap_or_default();
        if first != b"p" {
            return Err(parse_error(
                file,
                number,
                "the problem line `p sp <vertices> <arcs>`",
                show(line),
                PROBLEM_FIX,
            ));
        }
        let kind = tokens.next();
        if kind != Some(b"sp") {
            return Err(parse_error(
                file,
                number,
                "problem type `sp`",
                kind.map_or("end of line".into(), show),
                PROBLEM_FIX,
            ));
        }
        let mut count = |what: &str| -> Result<u64, GraphError> {
            let token = tokens.next().ok_or_else(|| {
                parse_error(file, number, format!("the {what} count"), "end of line", PROBLEM_FIX)
            })?;
            parse_u64(token).ok_or_else(|| {
                parse_error(
                    file,
                    number,
                    format!("the {what} count (a non-negative integer)"),
                    show(token),
                    PROBLEM_FIX,
                )
            })
        };
        let n = count("vertex")?;
        let m = count("arc")?;
        check_vertex_count(file, number, n, buf.len())?;
        problem = Some((number, n, m));
        Ok(true)
    })?;
    let (Some((body_start, first_body_line)), Some((p_line, n, m))) = (header_end, problem) else {
        let found = if buf.is_empty() {
            "an empty file".to_string()
        } else {
            "the end of the file".to_string()
        };
        return Err(parse_error(
            file,
            last_line_number(buf),
            "the problem line `p sp <vertices> <arcs>`",
            found,
            PROBLEM_FIX,
        ));
    };
    let chunks = parse_chunks(&buf[body_start..], first_body_line, |chunk, first_line| {
        let mut edges = Vec::with_capacity(chunk.len() / 16);
        let mut weights = Vec::with_capacity(chunk.len() / 16);
        for (line_number, line) in Lines::new(chunk, first_line) {
            if is_comment(line) {
                continue;
            }
            let mut tokens = Tokens::new(line);
            let tag = tokens.next().unwrap_or_default();
            if tag != b"a" {
                let fix = if tag == b"p" {
                    "a file has one problem line; remove this one"
                } else {
                    "arc lines are `a <from> <to> <weight>`; comments start with `c`"
                };
                return Err(parse_error(
                    file,
                    line_number,
                    "an arc line `a u v w`",
                    show(line),
                    fix,
                ));
            }
            let mut vertex = |what: &str| -> Result<VertexId, GraphError> {
                let token = tokens.next().ok_or_else(|| {
                    parse_error(
                        file,
                        line_number,
                        format!("the {what} vertex"),
                        "end of line",
                        "arc lines are `a <from> <to> <weight>`",
                    )
                })?;
                one_based_id(
                    token,
                    n,
                    (file, line_number),
                    &format!("{what} vertex"),
                    || format!("vertex ids are 1-based and at most {n} (problem line {p_line})"),
                    "arc lines hold numbers only",
                )
            };
            let u = vertex("source")?;
            let v = vertex("target")?;
            let Some(w) = tokens.next() else {
                return Err(parse_error(
                    file,
                    line_number,
                    "a weight (fourth column)",
                    "end of line",
                    "arc lines are `a <from> <to> <weight>`",
                ));
            };
            let Weight::Int(w) = parse_weight(file, line_number, w, WeightSyntax::Int)? else {
                return Err(parse_error(
                    file,
                    line_number,
                    "an integer weight",
                    show(w),
                    "DIMACS weights are integers",
                ));
            };
            if let Some(extra) = tokens.next() {
                return Err(parse_error(
                    file,
                    line_number,
                    "4 columns `a u v w`",
                    format!("an extra column {}", show(extra)),
                    "remove the extra column",
                ));
            }
            edges.push((u, v));
            weights.push(w);
        }
        Ok((edges, weights))
    })?;
    let count: u64 = chunks.iter().map(|c| c.0.len() as u64).sum();
    if count != m {
        return Err(parse_error(
            file,
            if count < m { last_line_number(buf) } else { p_line },
            format!("{m} arcs as the problem line (line {p_line}) says"),
            format!("{count} arc lines"),
            "the file is truncated, or the problem line's arc count is wrong",
        ));
    }
    let mut edges = Vec::with_capacity(count as usize);
    let mut columns = Vec::with_capacity(chunks.len());
    for (e, w) in chunks {
        edges.extend_from_slice(&e);
        columns.push(WeightColumn::Int(w));
    }
    Ok(Parsed { num_vertices: n, edges, weights: WeightColumn::concat(columns) })
}

/// Writes a DIMACS `.gr` file: every arc (an undirected graph's edges both ways), 1-based.
/// An unweighted graph gets weight 1; float weights are refused unless all are integers.
pub fn write<W: Write>(writer: W, csr: &Csr, name: &str) -> Result<(), GraphError> {
    let weights: Vec<u32> = match csr.weights() {
        None => vec![1; csr.num_arcs() as usize],
        Some(EdgeWeights::Int(w)) => w.clone(),
        Some(EdgeWeights::Float(w)) => {
            if let Some(bad) =
                w.iter().find(|x| x.fract() != 0.0 || **x < 0.0 || **x > u32::MAX as f32)
            {
                return Err(GraphError::Format {
                    file: name.to_string(),
                    problem: format!(
                        "DIMACS weights are non-negative integers, but the graph has weight {bad}"
                    ),
                    fix: "write to matrix-market, snap or ldbc, which keep float weights".into(),
                });
            }
            w.iter().map(|&x| x as u32).collect()
        }
    };
    let mut w = std::io::BufWriter::new(writer);
    let result = (|| -> std::io::Result<()> {
        writeln!(w, "c written by switchyard")?;
        writeln!(w, "p sp {} {}", csr.num_vertices(), csr.num_arcs())?;
        for u in 0..csr.num_vertices() {
            let range = csr.arc_range(u);
            for (arc, &v) in range.clone().zip(csr.neighbors(u)) {
                writeln!(w, "a {} {} {}", u + 1, v + 1, weights.get(arc).copied().unwrap_or(1))?;
            }
        }
        w.flush()
    })();
    result.map_err(|e| write_error(name, e))
}
