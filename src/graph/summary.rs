//! Graph summary: sizes, degree statistics, the GUM cost-model features (Gini coefficient
//! and degree-distribution entropy, seed 001 Table I), approximate diameter, weakly
//! connected components, self-loops and duplicate arcs.
//!
//! Definitions (GUM Table I, after Kunegis and Preusse, "Fairness on the web", 2012):
//! with the degrees `d(1) <= ... <= d(n)` sorted ascending and `D = sum d(u)`,
//!
//! * Gini `G = 2 sum_u u d(u) / (n D) - (n + 1) / n` (0 when all degrees are equal, towards
//!   1 when few vertices hold all arcs);
//! * entropy `H_er = (1 / ln n) sum_u -(d(u)/D) ln(d(u)/D)` (1 when all degrees are equal,
//!   terms with `d(u) = 0` count 0). The paper writes `2|E|` for `D`, which it is for an
//!   undirected graph without self-loops.
//!
//! `d(u)` is the arc count of `u` for an undirected graph (its neighbour count) and in-degree
//! plus out-degree for a directed one. `degree_min/max/mean` are out-degrees (arcs per vertex,
//! what kernels walk).

use super::Csr;
use super::reference::{component_count, weakly_connected_components};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::VecDeque;

/// Double-sweep BFS rounds for the diameter estimate.
const DIAMETER_SWEEPS: usize = 4;

/// Summary of a graph; serialises to JSON for `graph info --json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphSummary {
    /// Number of vertices.
    pub vertices: u64,
    /// Number of edges: arcs for a directed graph, `(arcs + self_loops) / 2` for undirected.
    pub edges: u64,
    /// Number of stored arcs.
    pub arcs: u64,
    /// Whether the graph is directed.
    pub directed: bool,
    /// Whether the graph has edge weights.
    pub weighted: bool,
    /// Smallest out-degree.
    pub degree_min: u64,
    /// Largest out-degree.
    pub degree_max: u64,
    /// Dense index of a vertex with the largest out-degree (the lowest such index); `None`
    /// for a graph without vertices. The hub is the usual BFS and SSSP source of scale-free
    /// benchmarks.
    pub hub_vertex: Option<u32>,
    /// Mean out-degree (arcs / vertices).
    pub degree_mean: f64,
    /// Gini coefficient of the degree distribution (GUM Table I).
    pub degree_gini: f64,
    /// Degree-distribution entropy normalised by `ln n` (GUM Table I).
    pub degree_entropy: f64,
    /// Lower bound on the diameter of the largest weakly connected component (arcs taken as
    /// undirected), from repeated double-sweep BFS.
    pub diameter_approx: u64,
    /// Number of weakly connected components.
    pub weak_components: u64,
    /// Vertices in the largest weakly connected component.
    pub largest_component_vertices: u64,
    /// Arcs `(v, v)`.
    pub self_loops: u64,
    /// Arcs repeating an earlier arc `(u, v)` of the same vertex (an undirected duplicate
    /// edge counts twice).
    pub duplicate_arcs: u64,
}

/// Computes the summary of `csr`. Linear in the graph size apart from sorting each vertex's
/// neighbours once (duplicates) and sorting the degrees (Gini).
pub fn summarize(csr: &Csr) -> GraphSummary {
    let n = csr.num_vertices();
    let out_degrees: Vec<u64> = (0..n).into_par_iter().map(|v| csr.degree(v)).collect();
    let degrees = feature_degrees(csr, &out_degrees);
    let (self_loops, duplicate_arcs) = loops_and_duplicates(csr);
    let labels = weakly_connected_components(csr);
    let (largest_label, largest_size) = largest_component(&labels);
    let undirected_in = if csr.is_directed() { Some(csr.transpose()) } else { None };
    let diameter_approx = match largest_label {
        Some(label) => {
            let start = (0..n)
                .filter(|&v| labels[v as usize] == label)
                .max_by_key(|&v| (out_degrees[v as usize], std::cmp::Reverse(v)))
                .unwrap_or(label);
            double_sweep(csr, undirected_in.as_ref(), start)
        }
        None => 0,
    };
    let arcs = csr.num_arcs();
    GraphSummary {
        vertices: u64::from(n),
        edges: if csr.is_directed() { arcs } else { (arcs + self_loops) / 2 },
        arcs,
        directed: csr.is_directed(),
        weighted: csr.weights().is_some(),
        degree_min: out_degrees.iter().copied().min().unwrap_or(0),
        degree_max: out_degrees.iter().copied().max().unwrap_or(0),
        hub_vertex: (0..n).max_by_key(|&v| (out_degrees[v as usize], std::cmp::Reverse(v))),
        degree_mean: if n == 0 { 0.0 } else { arcs as f64 / f64::from(n) },
        degree_gini: gini(&degrees),
        degree_entropy: degree_entropy(&degrees),
        diameter_approx,
        weak_components: component_count(&labels),
        largest_component_vertices: largest_size,
        self_loops,
        duplicate_arcs,
    }
}

/// The degrees the GUM features use: out-degree (= neighbour count) for undirected graphs,
/// in + out for directed ones.
fn feature_degrees(csr: &Csr, out_degrees: &[u64]) -> Vec<u64> {
    let mut degrees = out_degrees.to_vec();
    if csr.is_directed() {
        for &t in csr.targets() {
            degrees[t as usize] += 1;
        }
    }
    degrees
}

/// Gini coefficient of non-negative values (GUM Table I); 0 for an empty or all-zero input.
pub fn gini(values: &[u64]) -> f64 {
    let n = values.len() as f64;
    let total: f64 = values.iter().map(|&d| d as f64).sum();
    if values.is_empty() || total == 0.0 {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.par_sort_unstable();
    let weighted: f64 = sorted.iter().enumerate().map(|(i, &d)| (i as f64 + 1.0) * d as f64).sum();
    2.0 * weighted / (n * total) - (n + 1.0) / n
}

/// Degree-distribution entropy normalised by `ln n` (GUM Table I); 0 for fewer than two
/// vertices or no arcs.
pub fn degree_entropy(values: &[u64]) -> f64 {
    let total: f64 = values.iter().map(|&d| d as f64).sum();
    if values.len() < 2 || total == 0.0 {
        return 0.0;
    }
    let h: f64 = values
        .iter()
        .filter(|&&d| d > 0)
        .map(|&d| {
            let p = d as f64 / total;
            -p * p.ln()
        })
        .sum();
    h / (values.len() as f64).ln()
}

/// Counts self-loop arcs and arcs that repeat an earlier `(u, v)`.
fn loops_and_duplicates(csr: &Csr) -> (u64, u64) {
    (0..csr.num_vertices())
        .into_par_iter()
        .map_init(Vec::new, |buffer: &mut Vec<u32>, v| {
            let neighbors = csr.neighbors(v);
            let loops = neighbors.iter().filter(|&&t| t == v).count() as u64;
            buffer.clear();
            buffer.extend_from_slice(neighbors);
            buffer.sort_unstable();
            let dups = buffer.windows(2).filter(|w| w[0] == w[1]).count() as u64;
            (loops, dups)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Label and size of the largest component (smallest label on ties).
fn largest_component(labels: &[u32]) -> (Option<u32>, u64) {
    let mut sizes = vec![0u64; labels.len()];
    for &l in labels {
        sizes[l as usize] += 1;
    }
    sizes
        .iter()
        .enumerate()
        .max_by_key(|&(l, &s)| (s, std::cmp::Reverse(l)))
        .filter(|&(_, &s)| s > 0)
        .map_or((None, 0), |(l, &s)| (Some(l as u32), s))
}

/// Repeated double sweep: BFS from `start`, then from the farthest vertex found, keeping the
/// largest eccentricity seen. A lower bound on the diameter of `start`'s component.
fn double_sweep(csr: &Csr, transpose: Option<&Csr>, start: u32) -> u64 {
    let mut best = 0;
    let mut from = start;
    let mut dist = vec![u32::MAX; csr.num_vertices() as usize];
    for _ in 0..DIAMETER_SWEEPS {
        let (far, ecc) = bfs_farthest(csr, transpose, from, &mut dist);
        if ecc <= best && best > 0 {
            break;
        }
        best = best.max(ecc);
        from = far;
    }
    best
}

/// BFS over arcs in both directions; returns the farthest vertex (smallest id on ties) and
/// its distance.
fn bfs_farthest(csr: &Csr, transpose: Option<&Csr>, source: u32, dist: &mut [u32]) -> (u32, u64) {
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    dist[source as usize] = 0;
    let mut queue = VecDeque::from([source]);
    let mut far = (source, 0u32);
    while let Some(u) = queue.pop_front() {
        let du = dist[u as usize];
        if du > far.1 || (du == far.1 && u < far.0) {
            far = (u, du);
        }
        let incoming = transpose.map_or(&[][..], |t| t.neighbors(u));
        for &v in csr.neighbors(u).iter().chain(incoming) {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = du + 1;
                queue.push_back(v);
            }
        }
    }
    (far.0, u64::from(far.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::BuildOptions;

    fn undirected(n: u32, edges: &[(u32, u32)]) -> Csr {
        Csr::from_edges(n, edges, None, false, BuildOptions::default()).unwrap()
    }

    #[test]
    fn path_of_five() {
        // 0-1-2-3-4: degrees 1,2,2,2,1, D = 8, n = 5.
        // Gini: sorted 1,1,2,2,2 -> sum i*d = 1+2+6+8+10 = 27; 2*27/(5*8) - 6/5 = 1.35 - 1.2 = 0.15.
        // Entropy: 2 * -(1/8)ln(1/8) + 3 * -(2/8)ln(2/8) = 0.25*ln8 + 0.75*ln4 = 2.25 ln2 / ln5.
        // Diameter 4, one component, no loops or duplicates.
        let s = summarize(&undirected(5, &[(0, 1), (1, 2), (2, 3), (3, 4)]));
        assert_eq!((s.vertices, s.edges, s.arcs), (5, 4, 8));
        assert_eq!((s.degree_min, s.degree_max), (1, 2));
        assert_eq!(s.hub_vertex, Some(1), "the lowest of the degree-2 vertices 1, 2, 3");
        assert!((s.degree_mean - 1.6).abs() < 1e-12);
        assert!((s.degree_gini - 0.15).abs() < 1e-12, "{}", s.degree_gini);
        let h = 2.25 * 2f64.ln() / 5f64.ln();
        assert!((s.degree_entropy - h).abs() < 1e-12, "{}", s.degree_entropy);
        assert_eq!(s.diameter_approx, 4);
        assert_eq!((s.weak_components, s.largest_component_vertices), (1, 5));
        assert_eq!((s.self_loops, s.duplicate_arcs), (0, 0));
    }

    #[test]
    fn star_of_five() {
        // Centre 0 with leaves 1..4: degrees 4,1,1,1,1, D = 8.
        // Gini: sorted 1,1,1,1,4 -> sum i*d = 1+2+3+4+20 = 30; 60/40 - 1.2 = 0.3 = (n-2)/(2n).
        // Entropy: -(1/2)ln(1/2) - 4*(1/8)ln(1/8) = 0.5 ln2 + 1.5 ln2 = 2 ln2, over ln5.
        let s = summarize(&undirected(5, &[(0, 1), (0, 2), (0, 3), (0, 4)]));
        assert!((s.degree_gini - 0.3).abs() < 1e-12);
        assert!((s.degree_entropy - 2.0 * 2f64.ln() / 5f64.ln()).abs() < 1e-12);
        assert_eq!(s.diameter_approx, 2);
        assert_eq!((s.degree_min, s.degree_max), (1, 4));
    }

    #[test]
    fn cycle_with_loop_duplicate_and_isolated_vertex() {
        // Cycle 0-1-2-3-4-5-0 (6 vertices, diameter 3), plus the duplicate edge (0,1), the
        // self-loop (2,2) and the isolated vertex 6.
        // Arcs: 12 (cycle) + 2 (duplicate) + 1 (loop) = 15; edges (15 + 1) / 2 = 8.
        // Components: {0..5}, {6}. Duplicate arcs: 0->1 and 1->0 once more = 2.
        let mut edges: Vec<(u32, u32)> = (0..6).map(|i| (i, (i + 1) % 6)).collect();
        edges.push((0, 1));
        edges.push((2, 2));
        let s = summarize(&undirected(7, &edges));
        assert_eq!((s.arcs, s.edges), (15, 8));
        assert_eq!((s.self_loops, s.duplicate_arcs), (1, 2));
        assert_eq!((s.weak_components, s.largest_component_vertices), (2, 6));
        assert_eq!(s.diameter_approx, 3);
        assert_eq!(s.degree_min, 0);
    }

    #[test]
    fn regular_cycle_has_zero_gini_and_unit_entropy() {
        // Every degree is 2: Gini 0 and entropy ln(n)/ln(n) = 1 by the definitions.
        let edges: Vec<(u32, u32)> = (0..10).map(|i| (i, (i + 1) % 10)).collect();
        let s = summarize(&undirected(10, &edges));
        assert!(s.degree_gini.abs() < 1e-12);
        assert!((s.degree_entropy - 1.0).abs() < 1e-12);
        assert_eq!(s.diameter_approx, 5);
    }

    #[test]
    fn directed_uses_both_directions_for_diameter_and_features() {
        // 0->1->2 directed: undirected diameter 2; feature degrees in+out = 1,2,1.
        let csr =
            Csr::from_edges(3, &[(0, 1), (1, 2)], None, true, BuildOptions::default()).unwrap();
        let s = summarize(&csr);
        assert_eq!(s.diameter_approx, 2);
        assert_eq!(s.edges, 2);
        assert_eq!((s.degree_min, s.degree_max), (0, 1));
        // Sorted 1,1,2, D = 4: 2*(1+2+6)/(3*4) - 4/3 = 1.5 - 1.3333 = 1/6.
        assert!((s.degree_gini - 1.0 / 6.0).abs() < 1e-12);
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"degree_gini\""));
    }
}
