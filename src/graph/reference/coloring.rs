//! Graph colouring: a greedy reference and a validity check.

use crate::graph::{Csr, GraphError};
use serde::Serialize;

/// How many conflicting arcs a [`ColoringReport`] lists.
pub const CONFLICTS_LISTED_MAX: usize = 10;

/// Result of checking a colouring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ColoringReport {
    /// True when no arc joins two distinct vertices of equal colour.
    pub valid: bool,
    /// Number of distinct colours used.
    pub colors_used: u64,
    /// Number of conflicting arcs `u -> v` (`u != v`, equal colours).
    pub conflicts: u64,
    /// The first conflicting arcs as `(u, v, colour)`.
    pub first_conflicts: Vec<(u32, u32, u32)>,
}

/// Checks a colouring: every arc between two distinct vertices must join different
/// colours (self-loops are ignored: no colouring could satisfy them). `colors` holds one
/// colour per vertex.
pub fn check_coloring(csr: &Csr, colors: &[u32]) -> Result<ColoringReport, GraphError> {
    if colors.len() != csr.num_vertices() as usize {
        return Err(GraphError::InvalidArgument {
            what: "colouring to check".into(),
            found: format!("{} colours", colors.len()),
            expected: format!("one colour per vertex ({})", csr.num_vertices()),
        });
    }
    let mut conflicts = 0u64;
    let mut first_conflicts = Vec::new();
    for u in 0..csr.num_vertices() {
        for &v in csr.neighbors(u) {
            if u != v && colors[u as usize] == colors[v as usize] {
                conflicts += 1;
                if first_conflicts.len() < CONFLICTS_LISTED_MAX {
                    first_conflicts.push((u, v, colors[u as usize]));
                }
            }
        }
    }
    let mut distinct = colors.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    Ok(ColoringReport {
        valid: conflicts == 0,
        colors_used: distinct.len() as u64,
        conflicts,
        first_conflicts,
    })
}

/// Sequential greedy colouring in vertex-id order: each vertex takes the smallest colour
/// no already-coloured neighbour (in either arc direction) has. Uses at most `max degree + 1`
/// colours on an undirected graph.
pub fn greedy_coloring(csr: &Csr) -> Vec<u32> {
    let n = csr.num_vertices() as usize;
    let transpose = if csr.is_directed() { Some(csr.transpose()) } else { None };
    let mut colors = vec![u32::MAX; n];
    let mut taken: Vec<u32> = Vec::new(); // taken[c] == u + 1 marks colour c used by u's neighbours
    for u in 0..csr.num_vertices() {
        let incoming = transpose.as_ref().map(|t| t.neighbors(u)).unwrap_or(&[]);
        for &v in csr.neighbors(u).iter().chain(incoming) {
            let c = colors[v as usize];
            if v != u && c != u32::MAX {
                if taken.len() <= c as usize {
                    taken.resize(c as usize + 1, 0);
                }
                taken[c as usize] = u + 1;
            }
        }
        let color = taken.iter().position(|&mark| mark != u + 1).unwrap_or(taken.len());
        colors[u as usize] = color as u32;
    }
    colors
}
