//! LDBC Graphalytics graphs: a vertex file `NAME.v` (one vertex id per line), an edge file
//! `NAME.e` (`source target [weight]` per line) and `NAME.properties` (`key = value` lines:
//! `graph.NAME.directed`, `graph.NAME.bfs.source-vertex`, `graph.NAME.sssp.source-vertex`,
//! `graph.NAME.pr.damping-factor`, `graph.NAME.pr.num-iterations`, `graph.NAME.meta.vertices`,
//! `graph.NAME.meta.edges`, `graph.NAME.vertex-file`, `graph.NAME.edge-file`).
//!
//! Ids are mapped densely in ascending id order (as for SNAP); an edge whose endpoint is not
//! in the vertex file is an error naming the `.e` line. An undirected `.e` file lists each
//! edge once.

use super::edges::{IdMap, WeightColumn, WeightSyntax, agree_on_weights};
use super::text::{Lines, Tokens, parse_chunks, parse_error, parse_u64, show};
use super::{half_arcs, write_error};
use crate::graph::{BuildOptions, Csr, EdgeWeights, GraphError, VertexId};
use rayon::prelude::*;
use std::io::Write;

/// What an LDBC `.properties` file says about a graph and its benchmark parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LdbcProperties {
    /// The graph's name (the `NAME` in `graph.NAME.*`).
    pub name: String,
    /// `graph.NAME.directed`.
    pub directed: Option<bool>,
    /// `graph.NAME.bfs.source-vertex` (a file id).
    pub bfs_source_vertex: Option<u64>,
    /// `graph.NAME.sssp.source-vertex` (a file id).
    pub sssp_source_vertex: Option<u64>,
    /// `graph.NAME.pr.damping-factor`.
    pub pr_damping_factor: Option<f64>,
    /// `graph.NAME.pr.num-iterations`.
    pub pr_num_iterations: Option<u32>,
    /// `graph.NAME.cdlp.max-iterations`.
    pub cdlp_max_iterations: Option<u32>,
    /// `graph.NAME.meta.vertices`.
    pub meta_vertices: Option<u64>,
    /// `graph.NAME.meta.edges`.
    pub meta_edges: Option<u64>,
    /// `graph.NAME.vertex-file`.
    pub vertex_file: Option<String>,
    /// `graph.NAME.edge-file`.
    pub edge_file: Option<String>,
}

/// Whether a (trimmed) first line looks like a Graphalytics properties line.
pub(crate) fn looks_like_properties(line: &[u8]) -> bool {
    line.starts_with(b"graph.") && line.contains(&b'=')
}

/// Parses a `.properties` file. Unknown keys are ignored; known keys with bad values are
/// errors naming the line.
pub fn parse_properties(file: &str, buf: &[u8]) -> Result<LdbcProperties, GraphError> {
    let mut p = LdbcProperties::default();
    for (number, line) in Lines::new(buf, 1) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') || text.starts_with('!') {
            continue;
        }
        let Some((key, value)) = text.split_once('=') else {
            return Err(parse_error(
                file,
                number,
                "a `key = value` line",
                show(line),
                "properties lines are `graph.NAME.key = value`; comments start with `#`",
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        let Some(rest) = key.strip_prefix("graph.") else { continue };
        let bad = |what: &str| {
            parse_error(
                file,
                number,
                what.to_string(),
                show(value.as_bytes()),
                format!("fix the value of `{key}`"),
            )
        };
        const KEYS: [&str; 10] = [
            ".directed",
            ".bfs.source-vertex",
            ".sssp.source-vertex",
            ".pr.damping-factor",
            ".pr.num-iterations",
            ".cdlp.max-iterations",
            ".meta.vertices",
            ".meta.edges",
            ".vertex-file",
            ".edge-file",
        ];
        let Some(suffix) = KEYS.iter().find(|k| rest.ends_with(*k)) else { continue };
        let name = &rest[..rest.len() - suffix.len()];
        if p.name.is_empty() {
            p.name = name.to_string();
        }
        let int = || value.parse::<u64>().map_err(|_| bad("a non-negative integer"));
        match *suffix {
            ".directed" => {
                p.directed = Some(match value.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad("`true` or `false`")),
                })
            }
            ".bfs.source-vertex" => p.bfs_source_vertex = Some(int()?),
            ".sssp.source-vertex" => p.sssp_source_vertex = Some(int()?),
            ".pr.damping-factor" => {
                let d = value.parse::<f64>().map_err(|_| bad("a number in [0, 1]"))?;
                if !(0.0..=1.0).contains(&d) {
                    return Err(bad("a damping factor in [0, 1]"));
                }
                p.pr_damping_factor = Some(d);
            }
            ".pr.num-iterations" => {
                p.pr_num_iterations =
                    Some(u32::try_from(int()?).map_err(|_| bad("an iteration count below 2^32"))?)
            }
            ".cdlp.max-iterations" => {
                p.cdlp_max_iterations =
                    Some(u32::try_from(int()?).map_err(|_| bad("an iteration count below 2^32"))?)
            }
            ".meta.vertices" => p.meta_vertices = Some(int()?),
            ".meta.edges" => p.meta_edges = Some(int()?),
            ".vertex-file" => p.vertex_file = Some(value.to_string()),
            ".edge-file" => p.edge_file = Some(value.to_string()),
            _ => {}
        }
    }
    Ok(p)
}

/// Parsed LDBC graph.
pub(crate) struct Parsed {
    pub(crate) csr: Csr,
    pub(crate) original_ids: Option<Vec<u64>>,
}

/// Parses a vertex file into its ids, in file order.
fn parse_vertices(file: &str, buf: &[u8]) -> Result<Vec<u64>, GraphError> {
    let chunks = parse_chunks(buf, 1, |chunk, first_line| {
        let mut ids = Vec::with_capacity(chunk.len() / 8);
        for (number, line) in Lines::new(chunk, first_line) {
            let mut tokens = Tokens::new(line);
            let Some(t) = tokens.next() else { continue };
            if t.first() == Some(&b'#') {
                continue;
            }
            let id = parse_u64(t).ok_or_else(|| {
                parse_error(
                    file,
                    number,
                    "a vertex id (non-negative integer)",
                    show(t),
                    "vertex files hold one id per line",
                )
            })?;
            if let Some(extra) = tokens.next() {
                return Err(parse_error(
                    file,
                    number,
                    "one vertex id per line",
                    format!("an extra column {}", show(extra)),
                    "vertex properties are not supported; keep only the id",
                ));
            }
            ids.push((id, number));
        }
        Ok(ids)
    })?;
    let mut ids = Vec::new();
    let mut lines = Vec::new();
    for c in chunks {
        for (id, line) in c {
            ids.push(id);
            lines.push(line);
        }
    }
    match IdMap::from_vertex_list(&ids) {
        Ok(_) => Ok(ids),
        Err(i) => Err(parse_error(
            file,
            lines.get(i).copied().unwrap_or(0),
            "each vertex id once",
            format!("vertex {} again", ids.get(i).copied().unwrap_or(0)),
            "remove the duplicate line",
        )),
    }
}

/// Builds an LDBC graph from the contents of its three files (the properties file is
/// optional). `directed` overrides the properties; without either the graph is directed.
pub fn parse_parts(
    names: (&str, &str),
    vertex_bytes: &[u8],
    edge_bytes: &[u8],
    properties: Option<&LdbcProperties>,
    directed: Option<bool>,
    build: BuildOptions,
) -> Result<(Csr, Option<Vec<u64>>), GraphError> {
    let parsed = parse_graph(names, vertex_bytes, edge_bytes, properties, directed, build)?;
    Ok((parsed.csr, parsed.original_ids))
}

pub(crate) fn parse_graph(
    (v_name, e_name): (&str, &str),
    vertex_bytes: &[u8],
    edge_bytes: &[u8],
    properties: Option<&LdbcProperties>,
    directed: Option<bool>,
    build: BuildOptions,
) -> Result<Parsed, GraphError> {
    let ids = parse_vertices(v_name, vertex_bytes)?;
    if let Some(want) = properties.and_then(|p| p.meta_vertices)
        && want != ids.len() as u64
    {
        return Err(GraphError::Format {
            file: v_name.to_string(),
            problem: format!(
                "holds {} vertices, but the properties say meta.vertices = {want}",
                ids.len()
            ),
            fix: "fix meta.vertices or the vertex file".into(),
        });
    }
    if ids.len() > u32::MAX as usize {
        return Err(GraphError::Format {
            file: v_name.to_string(),
            problem: format!("{} vertices exceed the u32 id space", ids.len()),
            fix: "split the graph".into(),
        });
    }
    let map = IdMap::from_ids(ids.iter().copied(), ids.len());
    let chunks = super::snap::parse_edge_lines(e_name, edge_bytes, WeightSyntax::Auto)?;
    let weighted = agree_on_weights(e_name, &chunks)?;
    let count: u64 = chunks.iter().map(|c| c.edges.len() as u64).sum();
    if let Some(want) = properties.and_then(|p| p.meta_edges)
        && want != count
    {
        return Err(GraphError::Format {
            file: e_name.to_string(),
            problem: format!("holds {count} edges, but the properties say meta.edges = {want}"),
            fix: "fix meta.edges, or the edge file (is it truncated?)".into(),
        });
    }
    let mut edges: Vec<(VertexId, VertexId)> = Vec::with_capacity(count as usize);
    let mut missing: Option<u64> = None;
    for c in &chunks {
        let mapped: Vec<Option<(VertexId, VertexId)>> =
            c.edges.par_iter().map(|&(u, v)| Some((map.lookup(u)?, map.lookup(v)?))).collect();
        if let Some(i) = mapped.iter().position(Option::is_none) {
            missing = Some(edges.len() as u64 + i as u64);
            break;
        }
        edges.extend(mapped.into_iter().flatten());
    }
    if let Some(index) = missing {
        let (line_number, line) = Lines::new(edge_bytes, 1)
            .filter(|(_, l)| {
                Tokens::new(l)
                    .next()
                    .is_some_and(|t| t.first() != Some(&b'#') && t.first() != Some(&b'%'))
            })
            .nth(index as usize)
            .unwrap_or((0, b""));
        let mut tokens = Tokens::new(line);
        let u = tokens.next().and_then(parse_u64).unwrap_or(0);
        let v = tokens.next().and_then(parse_u64).unwrap_or(0);
        let absent = if map.lookup(u).is_none() { u } else { v };
        return Err(parse_error(
            e_name,
            line_number,
            format!("vertices listed in {v_name}"),
            format!("vertex {absent}, which {v_name} does not list"),
            format!("add {absent} to {v_name}, or remove this edge"),
        ));
    }
    let weights =
        weighted.then(|| WeightColumn::concat(chunks.into_iter().map(|c| c.weights).collect()));
    let directed = directed.or(properties.and_then(|p| p.directed)).unwrap_or(true);
    let csr = super::edges::build_csr(ids.len() as u64, &edges, weights, directed, build)?;
    let original_ids = (!map.is_identity()).then(|| map.into_original_ids());
    Ok(Parsed { csr, original_ids })
}

/// Writes the three LDBC files: vertex ids, edges (an undirected edge once, `u <= v`), and
/// properties (name, directedness, counts, file names, and any benchmark parameters given).
pub fn write<V: Write, E: Write, P: Write>(
    vertex_writer: V,
    edge_writer: E,
    properties_writer: P,
    csr: &Csr,
    original_ids: Option<&[u64]>,
    properties: &LdbcProperties,
) -> Result<(), GraphError> {
    let name = if properties.name.is_empty() { "graph" } else { properties.name.as_str() };
    let id =
        |v: u32| original_ids.and_then(|ids| ids.get(v as usize).copied()).unwrap_or(u64::from(v));
    let v_name = format!("{name}.v");
    let e_name = format!("{name}.e");
    let mut vw = std::io::BufWriter::new(vertex_writer);
    (|| -> std::io::Result<()> {
        for v in 0..csr.num_vertices() {
            writeln!(vw, "{}", id(v))?;
        }
        vw.flush()
    })()
    .map_err(|e| write_error(&v_name, e))?;
    let arcs = half_arcs(csr, |u, v| u <= v);
    let mut ew = std::io::BufWriter::new(edge_writer);
    (|| -> std::io::Result<()> {
        for &(u, v, arc) in &arcs {
            match csr.weights() {
                None => writeln!(ew, "{} {}", id(u), id(v))?,
                Some(EdgeWeights::Int(w)) => {
                    writeln!(ew, "{} {} {}", id(u), id(v), w.get(arc).copied().unwrap_or(0))?
                }
                Some(EdgeWeights::Float(w)) => {
                    writeln!(ew, "{} {} {:?}", id(u), id(v), w.get(arc).copied().unwrap_or(0.0))?
                }
            }
        }
        ew.flush()
    })()
    .map_err(|e| write_error(&e_name, e))?;
    let mut pw = std::io::BufWriter::new(properties_writer);
    (|| -> std::io::Result<()> {
        let g = format!("graph.{name}");
        writeln!(pw, "# written by switchyard")?;
        writeln!(pw, "{g}.vertex-file = {v_name}")?;
        writeln!(pw, "{g}.edge-file = {e_name}")?;
        writeln!(pw, "{g}.meta.vertices = {}", csr.num_vertices())?;
        writeln!(pw, "{g}.meta.edges = {}", arcs.len())?;
        writeln!(pw, "{g}.directed = {}", csr.is_directed())?;
        if csr.weights().is_some() {
            writeln!(pw, "{g}.edge-properties.names = weight")?;
            let kind =
                if matches!(csr.weights(), Some(EdgeWeights::Int(_))) { "int" } else { "real" };
            writeln!(pw, "{g}.edge-properties.types = {kind}")?;
        }
        if let Some(s) = properties.bfs_source_vertex {
            writeln!(pw, "{g}.bfs.source-vertex = {s}")?;
        }
        if let Some(s) = properties.sssp_source_vertex {
            writeln!(pw, "{g}.sssp.source-vertex = {s}")?;
            writeln!(pw, "{g}.sssp.weight-property = weight")?;
        }
        if let Some(d) = properties.pr_damping_factor {
            writeln!(pw, "{g}.pr.damping-factor = {d}")?;
        }
        if let Some(i) = properties.pr_num_iterations {
            writeln!(pw, "{g}.pr.num-iterations = {i}")?;
        }
        if let Some(i) = properties.cdlp_max_iterations {
            writeln!(pw, "{g}.cdlp.max-iterations = {i}")?;
        }
        pw.flush()
    })()
    .map_err(|e| write_error(&format!("{name}.properties"), e))
}
