//! METIS `.graph` files: `%` comment lines, a header `n m [fmt [ncon]]`, then exactly `n`
//! vertex lines (a blank line is a vertex without neighbours). `fmt` is up to three binary
//! digits: hundreds = vertex sizes, tens = `ncon` vertex weights (default 1), ones = edge
//! weights. A vertex line holds `[size] [w_1 .. w_ncon] (neighbour [edge weight])*` with
//! 1-based neighbours. The graph is undirected and `m` counts each edge once, so the lines
//! hold `2m` neighbour entries in all. Self-loops are refused (METIS forbids them).
//!
//! Parsed sequentially: vertex lines must be numbered in order, and METIS files are small
//! next to edge lists of the same graph.

use super::text::{Lines, Tokens, check_vertex_count, parse_error, parse_u64, show};
use super::write_error;
use crate::graph::{Csr, EdgeWeights, GraphError};
use rayon::prelude::*;
use std::io::Write;

/// Per-vertex data of a METIS file beyond the adjacency.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetisVertexData {
    /// Vertex sizes (`fmt` hundreds digit), one per vertex.
    pub sizes: Option<Vec<u64>>,
    /// Vertex weights (`fmt` tens digit), `ncon` per vertex, vertex-major.
    pub weights: Option<Vec<u64>>,
    /// Number of weights per vertex.
    pub ncon: usize,
}

/// Whether a buffer that starts with a numeric line looks like METIS: its first line holds
/// 2 to 4 integers `n m [fmt [ncon]]` and exactly `n` lines follow it (ignoring `%` comments
/// and trailing blank lines).
pub(crate) fn looks_like_metis(buf: &[u8]) -> bool {
    let mut lines = Lines::new(buf, 1).filter(|(_, l)| l.first() != Some(&b'%'));
    let Some((_, first)) = lines.next() else { return false };
    let tokens: Vec<&[u8]> = Tokens::new(first).collect();
    if !(2..=4).contains(&tokens.len()) || tokens.iter().any(|t| parse_u64(t).is_none()) {
        return false;
    }
    let Some(n) = tokens.first().and_then(|t| parse_u64(t)) else { return false };
    let m = tokens.get(1).and_then(|t| parse_u64(t)).unwrap_or(u64::MAX);
    if m > n.saturating_mul(n) {
        return false;
    }
    let mut count = 0u64;
    let mut trailing_blank = 0u64;
    for (_, line) in lines {
        if super::text::is_blank(line) {
            trailing_blank += 1;
        } else {
            trailing_blank = 0;
        }
        count += 1;
        if count > n + trailing_blank {
            return false;
        }
    }
    count - trailing_blank <= n && n <= count
}

/// Parsed graph content.
pub(crate) struct Parsed {
    pub(crate) offsets: Vec<u64>,
    pub(crate) targets: Vec<u32>,
    pub(crate) weights: Option<EdgeWeights>,
    pub(crate) vertex_data: Option<MetisVertexData>,
}

const HEADER_FIX: &str =
    "the first line after `%` comments must be `<vertices> <edges> [fmt [ncon]]`";

/// Parses a METIS file.
pub(crate) fn parse(file: &str, buf: &[u8]) -> Result<Parsed, GraphError> {
    let mut lines = Lines::new(buf, 1).filter(|(_, l)| l.first() != Some(&b'%'));
    let header = loop {
        match lines.next() {
            None => {
                return Err(parse_error(
                    file,
                    1,
                    "the header `<vertices> <edges> [fmt [ncon]]`",
                    if buf.is_empty() { "an empty file" } else { "no header line" },
                    HEADER_FIX,
                ));
            }
            Some((_, l)) if super::text::is_blank(l) => continue,
            Some(h) => break h,
        }
    };
    let (header_line, header_text) = header;
    let tokens: Vec<&[u8]> = Tokens::new(header_text).collect();
    if tokens.len() < 2 || tokens.len() > 4 {
        return Err(parse_error(
            file,
            header_line,
            "2 to 4 numbers `<vertices> <edges> [fmt [ncon]]`",
            format!("{} tokens", tokens.len()),
            HEADER_FIX,
        ));
    }
    let number = |i: usize, what: &str| -> Result<u64, GraphError> {
        let t = tokens.get(i).copied().unwrap_or_default();
        parse_u64(t).ok_or_else(|| {
            parse_error(
                file,
                header_line,
                format!("{what} (a non-negative integer)"),
                show(t),
                HEADER_FIX,
            )
        })
    };
    let n = number(0, "the vertex count")?;
    let m = number(1, "the edge count")?;
    check_vertex_count(file, header_line, n, buf.len())?;
    let fmt = tokens.get(2).copied().unwrap_or(b"0");
    let fmt_ok = fmt.len() <= 3 && fmt.iter().all(|&b| b == b'0' || b == b'1');
    if !fmt_ok {
        return Err(parse_error(
            file,
            header_line,
            "fmt of up to three 0/1 digits (0, 1, 10, 11, 100, 101, 110, 111)",
            show(fmt),
            HEADER_FIX,
        ));
    }
    let digit = |place: usize| fmt.len() > place && fmt[fmt.len() - 1 - place] == b'1';
    let (has_edge_weights, has_vertex_weights, has_sizes) = (digit(0), digit(1), digit(2));
    let ncon = match tokens.get(3) {
        Some(_) => number(3, "ncon")? as usize,
        None => usize::from(has_vertex_weights),
    };
    if ncon > 0 && !has_vertex_weights {
        return Err(parse_error(
            file,
            header_line,
            "ncon only together with vertex weights (fmt tens digit 1)",
            format!("ncon {ncon} with fmt {}", String::from_utf8_lossy(fmt)),
            HEADER_FIX,
        ));
    }
    if ncon > 1024 {
        return Err(parse_error(
            file,
            header_line,
            "ncon of at most 1024",
            ncon.to_string(),
            HEADER_FIX,
        ));
    }
    let capacity = usize::try_from(m.saturating_mul(2)).unwrap_or(0).min(buf.len() / 2 + 1);
    let mut offsets = Vec::with_capacity((n as usize).min(buf.len()) + 1);
    offsets.push(0u64);
    let mut targets: Vec<u32> = Vec::with_capacity(capacity);
    let mut edge_weights: Vec<u32> = Vec::new();
    let mut sizes = Vec::new();
    let mut vertex_weights = Vec::new();
    let mut last_line = header_line;
    let mut vertex_lines = Vec::with_capacity((n as usize).min(buf.len()));
    for vertex in 0..n {
        let Some((line_number, line)) = lines.next() else {
            return Err(parse_error(
                file,
                last_line + 1,
                format!("{n} vertex lines as the header (line {header_line}) says"),
                format!("{vertex} vertex lines when the file ends"),
                "the file is truncated, or the header's vertex count is wrong",
            ));
        };
        last_line = line_number;
        vertex_lines.push(line_number);
        let mut tokens = Tokens::new(line);
        let mut read = |what: &str| -> Result<u64, GraphError> {
            let t = tokens.next().ok_or_else(|| {
                parse_error(
                    file,
                    line_number,
                    what.to_string(),
                    "end of line",
                    "fmt in the header says which per-vertex fields each line starts with",
                )
            })?;
            parse_u64(t).ok_or_else(|| {
                parse_error(
                    file,
                    line_number,
                    format!("{what} (a non-negative integer)"),
                    show(t),
                    "vertex lines hold numbers only",
                )
            })
        };
        if has_sizes {
            sizes.push(read("a vertex size")?);
        }
        for _ in 0..ncon {
            vertex_weights.push(read("a vertex weight")?);
        }
        while let Some(t) = tokens.next() {
            let v = match parse_u64(t) {
                Some(v) if v >= 1 && v <= n => v,
                Some(v) => {
                    return Err(parse_error(
                        file,
                        line_number,
                        format!("a neighbour in 1..={n}"),
                        v.to_string(),
                        "neighbours are 1-based vertex numbers",
                    ));
                }
                None => {
                    return Err(parse_error(
                        file,
                        line_number,
                        "a neighbour (positive integer)",
                        show(t),
                        "vertex lines hold numbers only",
                    ));
                }
            };
            if v - 1 == vertex {
                return Err(parse_error(
                    file,
                    line_number,
                    "no self-loop",
                    format!("vertex {v} lists itself"),
                    "METIS forbids self-loops; remove it",
                ));
            }
            targets.push((v - 1) as u32);
            if has_edge_weights {
                let t = tokens.next().ok_or_else(|| {
                    parse_error(
                        file,
                        line_number,
                        format!("an edge weight after neighbour {v}"),
                        "end of line",
                        "fmt says edges are weighted: write `neighbour weight` pairs",
                    )
                })?;
                let w = parse_u64(t).ok_or_else(|| {
                    parse_error(
                        file,
                        line_number,
                        "a non-negative integer edge weight",
                        show(t),
                        "METIS edge weights are non-negative integers",
                    )
                })?;
                let w = u32::try_from(w).map_err(|_| {
                    parse_error(
                        file,
                        line_number,
                        "an edge weight of at most 4294967295",
                        w.to_string(),
                        "scale the weights down",
                    )
                })?;
                edge_weights.push(w);
            }
        }
        offsets.push(targets.len() as u64);
    }
    for (line_number, line) in lines {
        if !super::text::is_blank(line) {
            return Err(parse_error(
                file,
                line_number,
                format!("the end of the file after {n} vertex lines"),
                show(line),
                "the header's vertex count is too small, or there is stray text at the end",
            ));
        }
    }
    if targets.len() as u64 != m.saturating_mul(2) {
        return Err(parse_error(
            file,
            header_line,
            format!(
                "{} neighbour entries (2 x {m} edges, as the header says)",
                m.saturating_mul(2)
            ),
            format!("{} neighbour entries in the vertex lines", targets.len()),
            "fix the header's edge count (METIS counts each undirected edge once), or the adjacency lines",
        ));
    }
    let weight_slice = has_edge_weights.then_some(edge_weights.as_slice());
    check_symmetric(file, &offsets, &targets, weight_slice, &vertex_lines)?;
    let vertex_data = (has_sizes || ncon > 0).then(|| MetisVertexData {
        sizes: has_sizes.then_some(sizes),
        weights: (ncon > 0).then_some(vertex_weights),
        ncon,
    });
    let weights = has_edge_weights.then_some(EdgeWeights::Int(edge_weights));
    Ok(Parsed { offsets, targets, weights, vertex_data })
}

/// Checks that every arc `u -> v` (with weight `w`) is matched by an arc `v -> u` with the
/// same weight, as many times: METIS lists each undirected edge in both vertices' lines.
fn check_symmetric(
    file: &str,
    offsets: &[u64],
    targets: &[u32],
    weights: Option<&[u32]>,
    vertex_lines: &[u64],
) -> Result<(), GraphError> {
    let mut forward: Vec<(u32, u32, u32)> = Vec::with_capacity(targets.len());
    for (u, range) in offsets.windows(2).enumerate() {
        for arc in range[0] as usize..range[1] as usize {
            let w = weights.and_then(|w| w.get(arc).copied()).unwrap_or(0);
            forward.push((u as u32, targets.get(arc).copied().unwrap_or(0), w));
        }
    }
    let mut backward: Vec<(u32, u32, u32)> = forward.iter().map(|&(u, v, w)| (v, u, w)).collect();
    forward.par_sort_unstable();
    backward.par_sort_unstable();
    let Some((a, b)) = forward.iter().zip(&backward).find(|(a, b)| a != b) else { return Ok(()) };
    // The smaller of the first differing pair occurs more often in its list: if it is a
    // forward arc `u -> v`, `v` lacks `u`; if a backward one `(v, u)`, `u` lacks `v`.
    let (u, v, w) = if a < b { *a } else { (b.1, b.0, b.2) };
    let line = |x: u32| vertex_lines.get(x as usize).copied().unwrap_or(0);
    let with = if weights.is_some() { format!(" with edge weight {w}") } else { String::new() };
    Err(parse_error(
        file,
        line(v),
        format!(
            "vertex {} to list neighbour {}{with}, as vertex {} does on line {}",
            v + 1,
            u + 1,
            u + 1,
            line(u)
        ),
        "no such entry (or fewer of them)".to_string(),
        "METIS lists every undirected edge in both endpoints' lines with the same weight; add the missing entry or remove the other",
    ))
}

/// Writes a METIS file. The graph must be undirected, without self-loops, with integer
/// weights if any; `vertex_data` adds vertex sizes and weights.
pub fn write<W: Write>(
    writer: W,
    csr: &Csr,
    vertex_data: Option<&MetisVertexData>,
    name: &str,
) -> Result<(), GraphError> {
    let refuse = |problem: String, fix: &str| {
        Err(GraphError::Format { file: name.to_string(), problem, fix: fix.to_string() })
    };
    if csr.is_directed() {
        return refuse(
            "METIS holds undirected graphs only, and this graph is directed".into(),
            "load it with `--directed false`, or write another format",
        );
    }
    if let Some(v) = (0..csr.num_vertices()).find(|&v| csr.neighbors(v).contains(&v)) {
        return refuse(
            format!("METIS forbids self-loops, and vertex {v} has one"),
            "drop self-loops while loading (BuildOptions::drop_self_loops)",
        );
    }
    let weights: Option<&[u32]> = match csr.weights() {
        None => None,
        Some(EdgeWeights::Int(w)) => Some(w),
        Some(EdgeWeights::Float(_)) => {
            return refuse(
                "METIS edge weights are integers, and this graph has float weights".into(),
                "write to matrix-market, snap or ldbc",
            );
        }
    };
    let data = vertex_data.filter(|d| d.sizes.is_some() || d.weights.is_some());
    let has_sizes = data.is_some_and(|d| d.sizes.is_some());
    let ncon = data.and_then(|d| d.weights.as_ref().map(|_| d.ncon)).unwrap_or(0);
    let fmt =
        format!("{}{}{}", u8::from(has_sizes), u8::from(ncon > 0), u8::from(weights.is_some()));
    let mut w = std::io::BufWriter::new(writer);
    let result = (|| -> std::io::Result<()> {
        writeln!(w, "% written by switchyard")?;
        if ncon > 1 {
            writeln!(w, "{} {} {fmt} {ncon}", csr.num_vertices(), csr.num_arcs() / 2)?;
        } else {
            writeln!(w, "{} {} {fmt}", csr.num_vertices(), csr.num_arcs() / 2)?;
        }
        for u in 0..csr.num_vertices() {
            let mut first = true;
            let mut sep = |w: &mut std::io::BufWriter<W>| -> std::io::Result<()> {
                if !first {
                    w.write_all(b" ")?;
                }
                first = false;
                Ok(())
            };
            if let Some(s) = data.and_then(|d| d.sizes.as_ref()) {
                sep(&mut w)?;
                write!(w, "{}", s.get(u as usize).copied().unwrap_or(1))?;
            }
            if let Some(vw) = data.and_then(|d| d.weights.as_ref()) {
                for c in 0..ncon {
                    sep(&mut w)?;
                    write!(w, "{}", vw.get(u as usize * ncon + c).copied().unwrap_or(1))?;
                }
            }
            for (arc, &v) in csr.arc_range(u).zip(csr.neighbors(u)) {
                sep(&mut w)?;
                write!(w, "{}", v + 1)?;
                if let Some(ws) = weights {
                    write!(w, " {}", ws.get(arc).copied().unwrap_or(1))?;
                }
            }
            writeln!(w)?;
        }
        w.flush()
    })();
    result.map_err(|e| write_error(name, e))
}
