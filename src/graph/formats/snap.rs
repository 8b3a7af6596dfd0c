//! SNAP edge lists: `# comment` lines, then one edge `u v [w]` per line, tokens separated
//! by any whitespace (CRLF files included).
//!
//! Vertex ids are arbitrary `u64` values. They are mapped to dense ids **in ascending file-id
//! order**, so a file whose ids already are `0..n` keeps them; the mapping (dense id -> file
//! id) is returned so results can be written in the file's own ids. When the leading comment
//! block says `Nodes: N` and every id is below `N`, the ids are kept as they are and the
//! graph has `N` vertices (isolated vertices survive a round trip). A leading comment
//! containing `Undirected` makes the graph undirected; otherwise it is directed. A leading
//! `Edges: M` must match the number of edge lines.
//!
//! An optional third column holds weights: integers, or floats if any weight is written as a
//! float.

use super::edges::{
    IdMap, RawEdgeChunk, WeightColumn, WeightSyntax, agree_on_weights, parse_weight,
};
use super::text::{
    Lines, Tokens, fast_pair, max_declared_vertices, parse_chunks, parse_error, parse_u64, show,
};
use super::{half_arcs, write_error};
use crate::graph::{Csr, EdgeWeights, GraphError, VertexId};
use rayon::prelude::*;
use std::io::Write;

/// What the leading comment block of a SNAP file says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapHeader {
    /// `Some(false)` when a comment says `Undirected`, `Some(true)` for `Directed`.
    pub directed: Option<bool>,
    /// `Nodes: N`.
    pub nodes: Option<u64>,
    /// `Edges: M`, with the line that says it.
    pub edges: Option<(u64, u64)>,
}

/// Reads the leading `#` comment block.
pub fn read_header(buf: &[u8]) -> SnapHeader {
    let mut header = SnapHeader::default();
    for (number, line) in Lines::new(buf, 1) {
        let trimmed =
            &line[line.iter().position(|&b| !super::text::is_space(b)).unwrap_or(line.len())..];
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.first() != Some(&b'#') {
            break;
        }
        let lower = trimmed.to_ascii_lowercase();
        if header.directed.is_none() {
            if find(&lower, b"undirected").is_some() {
                header.directed = Some(false);
            } else if find(&lower, b"directed").is_some() {
                header.directed = Some(true);
            }
        }
        if let Some(n) = number_after(&lower, b"nodes:") {
            header.nodes = Some(n);
        }
        if let Some(m) = number_after(&lower, b"edges:") {
            header.edges = Some((m, number));
        }
    }
    header
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn number_after(hay: &[u8], key: &[u8]) -> Option<u64> {
    let at = find(hay, key)? + key.len();
    Tokens::new(hay.get(at..)?).next().and_then(parse_u64)
}

/// Parses the edge lines of an edge list (SNAP, or an LDBC `.e` file), skipping blank lines
/// and lines starting with `#` or `%`.
pub(crate) fn parse_edge_lines(
    file: &str,
    buf: &[u8],
    syntax: WeightSyntax,
) -> Result<Vec<RawEdgeChunk>, GraphError> {
    parse_chunks(buf, 1, |chunk, first_line| {
        let mut out =
            RawEdgeChunk { edges: Vec::with_capacity(chunk.len() / 12), ..Default::default() };
        let mut pos = 0;
        let mut line_number = first_line;
        while pos < chunk.len() {
            if !matches!(out.first, Some((_, true)))
                && let Some((u, v, next)) = fast_pair(chunk, pos)
            {
                if out.first.is_none() {
                    out.first = Some((line_number, false));
                }
                out.edges.push((u, v));
                pos = next;
                line_number += 1;
                continue;
            }
            let end =
                chunk[pos..].iter().position(|&b| b == b'\n').map_or(chunk.len(), |p| pos + p);
            let line = &chunk[pos..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            parse_edge_line(file, line_number, line, syntax, &mut out)?;
            pos = end + 1;
            line_number += 1;
        }
        Ok(out)
    })
}

/// The general parser of one edge line (comments, weights, every error).
fn parse_edge_line(
    file: &str,
    line_number: u64,
    line: &[u8],
    syntax: WeightSyntax,
    out: &mut RawEdgeChunk,
) -> Result<(), GraphError> {
    let mut tokens = Tokens::new(line);
    let Some(first) = tokens.next() else { return Ok(()) };
    if first.first().is_some_and(|&b| b == b'#' || b == b'%') {
        return Ok(());
    }
    let id = |token: &[u8], what: &str| {
        parse_u64(token).ok_or_else(|| {
            parse_error(
                file,
                line_number,
                format!("a non-negative integer {what} id"),
                show(token),
                "edge lines are `source target [weight]`",
            )
        })
    };
    let u = id(first, "source")?;
    let Some(second) = tokens.next() else {
        return Err(parse_error(
            file,
            line_number,
            "a target vertex id",
            "end of line",
            "edge lines are `source target [weight]`",
        ));
    };
    let v = id(second, "target")?;
    let weight = tokens.next();
    if let Some(extra) = tokens.next() {
        return Err(parse_error(
            file,
            line_number,
            "at most 3 columns (source target weight)",
            format!("a 4th column {}", show(extra)),
            "remove the extra columns",
        ));
    }
    let weighted = weight.is_some();
    match out.first {
        None => out.first = Some((line_number, weighted)),
        Some((first_line, first_weighted)) if first_weighted != weighted => {
            let (want, got) = if first_weighted { ("3 columns", "2") } else { ("2 columns", "3") };
            return Err(parse_error(
                file,
                line_number,
                format!("{want} like the edge on line {first_line}"),
                format!("{got} columns"),
                "give every edge a weight or none",
            ));
        }
        Some(_) => {}
    }
    if let Some(w) = weight {
        out.weights.push(parse_weight(file, line_number, w, syntax)?);
    }
    out.edges.push((u, v));
    Ok(())
}

/// Result of parsing an edge list: dense edges, weights, vertex count and id mapping.
pub(crate) struct DenseEdges {
    pub(crate) edges: Vec<(VertexId, VertexId)>,
    pub(crate) weights: Option<EdgeWeights>,
    pub(crate) num_vertices: u64,
    pub(crate) original_ids: Option<Vec<u64>>,
}

/// Concatenates chunks and makes ids dense (see the module docs for the rule).
fn densify(
    file: &str,
    chunks: Vec<RawEdgeChunk>,
    nodes: Option<u64>,
    file_bytes: usize,
) -> Result<DenseEdges, GraphError> {
    let weighted = agree_on_weights(file, &chunks)?;
    let (edge_chunks, columns): (Vec<Vec<(u64, u64)>>, Vec<WeightColumn>) =
        chunks.into_iter().map(|c| (c.edges, c.weights)).unzip();
    let weights = weighted.then(|| WeightColumn::concat(columns));
    let max_id = edge_chunks.par_iter().flat_map_iter(|c| c.iter().map(|&(u, v)| u.max(v))).max();
    let Some(max_id) = max_id else {
        let num_vertices = nodes.filter(|&n| n <= max_declared_vertices(file_bytes)).unwrap_or(0);
        return Ok(DenseEdges { edges: Vec::new(), weights, num_vertices, original_ids: None });
    };
    if let Some(n) = nodes
        && max_id < n
        && n <= max_declared_vertices(file_bytes)
    {
        let edges = map_chunks(&edge_chunks, |id| id as VertexId);
        return Ok(DenseEdges { edges, weights, num_vertices: n, original_ids: None });
    }
    let total: usize = edge_chunks.iter().map(Vec::len).sum();
    let ids = edge_chunks.iter().flat_map(|c| c.iter().flat_map(|&(u, v)| [u, v]));
    let map = IdMap::from_ids(ids, total * 2);
    if map.len() > u32::MAX as usize {
        return Err(GraphError::Format {
            file: file.to_string(),
            problem: format!("{} distinct vertex ids exceed the u32 id space", map.len()),
            fix: "split the graph; switchyard graphs have at most 4294967295 vertices".into(),
        });
    }
    let num_vertices = map.len() as u64;
    if map.is_identity() {
        let edges = map_chunks(&edge_chunks, |id| id as VertexId);
        return Ok(DenseEdges { edges, weights, num_vertices, original_ids: None });
    }
    let edges = map_chunks(&edge_chunks, |id| map.lookup(id).unwrap_or(0));
    Ok(DenseEdges { edges, weights, num_vertices, original_ids: Some(map.into_original_ids()) })
}

/// Concatenates the chunks' edges with `f` applied to every id, writing each chunk's part of
/// the output in parallel (one pass, no intermediate copy).
fn map_chunks(
    chunks: &[Vec<(u64, u64)>],
    f: impl Fn(u64) -> VertexId + Sync,
) -> Vec<(VertexId, VertexId)> {
    let total: usize = chunks.iter().map(Vec::len).sum();
    let mut out = vec![(0, 0); total];
    let mut parts = Vec::with_capacity(chunks.len());
    let mut rest = out.as_mut_slice();
    for c in chunks {
        let (part, tail) = rest.split_at_mut(c.len());
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().zip(chunks.par_iter()).for_each(|(part, chunk)| {
        for (slot, &(u, v)) in part.iter_mut().zip(chunk) {
            *slot = (f(u), f(v));
        }
    });
    out
}

/// Parses a SNAP edge list; returns the dense edges and whether the header called the graph
/// directed.
pub(crate) fn parse(file: &str, buf: &[u8]) -> Result<(DenseEdges, Option<bool>), GraphError> {
    let header = read_header(buf);
    let chunks = parse_edge_lines(file, buf, WeightSyntax::Auto)?;
    let count: u64 = chunks.iter().map(|c| c.edges.len() as u64).sum();
    if let Some((m, line)) = header.edges
        && m != count
    {
        return Err(parse_error(
            file,
            line,
            format!("{m} edge lines as this comment says"),
            format!("{count} edge lines"),
            "correct or delete the `Edges:` comment (the file may be truncated)",
        ));
    }
    Ok((densify(file, chunks, header.nodes, buf.len())?, header.directed))
}

/// Writes a SNAP edge list: a comment header (`Directed`/`Undirected`, `Nodes`, `Edges`),
/// then `u<TAB>v[<TAB>w]` per edge (an undirected edge once, as `u <= v`), in file ids when
/// `original_ids` is given. Float weights are written in Rust's shortest round-trip form.
pub fn write<W: Write>(
    writer: W,
    csr: &Csr,
    original_ids: Option<&[u64]>,
    name: &str,
) -> Result<(), GraphError> {
    let mut w = std::io::BufWriter::new(writer);
    let id =
        |v: u32| original_ids.and_then(|ids| ids.get(v as usize).copied()).unwrap_or(u64::from(v));
    let arcs = half_arcs(csr, |u, v| u <= v);
    let kind = if csr.is_directed() { "Directed" } else { "Undirected" };
    let result = (|| -> std::io::Result<()> {
        writeln!(w, "# {kind} graph written by switchyard")?;
        writeln!(w, "# Nodes: {} Edges: {}", csr.num_vertices(), arcs.len())?;
        match csr.weights() {
            None => writeln!(w, "# FromNodeId\tToNodeId")?,
            Some(_) => writeln!(w, "# FromNodeId\tToNodeId\tWeight")?,
        }
        for &(u, v, arc) in &arcs {
            match csr.weights() {
                None => writeln!(w, "{}\t{}", id(u), id(v))?,
                Some(EdgeWeights::Int(ws)) => {
                    writeln!(w, "{}\t{}\t{}", id(u), id(v), ws.get(arc).copied().unwrap_or(0))?
                }
                Some(EdgeWeights::Float(ws)) => {
                    writeln!(w, "{}\t{}\t{:?}", id(u), id(v), ws.get(arc).copied().unwrap_or(0.0))?
                }
            }
        }
        w.flush()
    })();
    result.map_err(|e| write_error(name, e))
}
