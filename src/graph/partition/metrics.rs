//! Partition quality: edge cut, border vertices, and vertex/arc balance per part.

use super::Partition;
use crate::graph::{Csr, GraphError};
use rayon::prelude::*;
use serde::Serialize;

/// Numbers of one part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartMetrics {
    /// Part id.
    pub part: u32,
    /// Vertices owned.
    pub vertices: u64,
    /// Out-arcs of owned vertices.
    pub arcs: u64,
    /// Out-arcs of owned vertices whose target is owned elsewhere.
    pub cut_arcs: u64,
    /// Distinct remote vertices this part's arcs point to: the values it must exchange
    /// (seed 002's "border").
    pub border_vertices: u64,
    /// Owned vertices with at least one arc (either direction) to another part.
    pub boundary_vertices: u64,
}

/// Quality of a partition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionMetrics {
    /// Number of parts.
    pub parts: u32,
    /// Edges whose endpoints lie in different parts (undirected: each edge once).
    pub edge_cut: u64,
    /// `edge_cut` over all edges.
    pub edge_cut_fraction: f64,
    /// Sum of the parts' border vertices.
    pub border_vertices: u64,
    /// Largest part's vertex count over the mean (1.0 = perfect).
    pub vertex_imbalance: f64,
    /// Largest part's arc count over the mean (1.0 = perfect).
    pub arc_imbalance: f64,
    /// Per-part numbers, by part id.
    pub per_part: Vec<PartMetrics>,
}

/// Measures `partition` on `csr`.
pub fn partition_metrics(csr: &Csr, partition: &Partition) -> Result<PartitionMetrics, GraphError> {
    let n = csr.num_vertices() as usize;
    if partition.owner.len() != n {
        return Err(super::invalid(
            "metrics",
            format!(
                "the partition covers {} vertices but the graph has {n}",
                partition.owner.len()
            ),
        ));
    }
    let k = partition.parts as usize;
    let owner = &partition.owner;
    let transpose = csr.is_directed().then(|| csr.transpose());
    let incoming = |v: u32| transpose.as_ref().map_or(csr.neighbors(v), |t| t.neighbors(v));
    // Per vertex v: its own counters, plus +1 border for each distinct remote part with an
    // arc into v.
    let zero = || (vec![0u64; k], vec![0u64; k], vec![0u64; k], vec![0u64; k], vec![0u64; k]);
    let (vertices, arcs, cut_arcs, border, boundary) = (0..csr.num_vertices())
        .into_par_iter()
        .fold(
            || (zero(), Vec::<u32>::new()),
            |((mut vs, mut ar, mut cut, mut bor, mut bnd), mut seen), v| {
                let p = owner[v as usize] as usize;
                vs[p] += 1;
                ar[p] += csr.degree(v);
                let out_cut =
                    csr.neighbors(v).iter().filter(|&&u| owner[u as usize] as usize != p).count();
                cut[p] += out_cut as u64;
                seen.clear();
                seen.extend(
                    incoming(v).iter().map(|&u| owner[u as usize]).filter(|&q| q as usize != p),
                );
                if out_cut > 0 || !seen.is_empty() {
                    bnd[p] += 1;
                }
                seen.sort_unstable();
                seen.dedup();
                for &q in &seen {
                    bor[q as usize] += 1;
                }
                ((vs, ar, cut, bor, bnd), seen)
            },
        )
        .map(|(acc, _)| acc)
        .reduce(zero, |a, b| {
            let add = |x: Vec<u64>, y: Vec<u64>| x.iter().zip(&y).map(|(a, b)| a + b).collect();
            (add(a.0, b.0), add(a.1, b.1), add(a.2, b.2), add(a.3, b.3), add(a.4, b.4))
        });
    let cut_total: u64 = cut_arcs.iter().sum();
    let self_loops = if csr.is_directed() {
        0
    } else {
        (0..csr.num_vertices())
            .into_par_iter()
            .map(|v| csr.neighbors(v).iter().filter(|&&u| u == v).count() as u64)
            .sum()
    };
    let (edge_cut, edges) = if csr.is_directed() {
        (cut_total, csr.num_arcs())
    } else {
        (cut_total / 2, (csr.num_arcs() + self_loops) / 2)
    };
    let imbalance = |xs: &[u64]| {
        let total: u64 = xs.iter().sum();
        if total == 0 {
            1.0
        } else {
            *xs.iter().max().unwrap_or(&0) as f64 * k as f64 / total as f64
        }
    };
    Ok(PartitionMetrics {
        parts: partition.parts,
        edge_cut,
        edge_cut_fraction: if edges == 0 { 0.0 } else { edge_cut as f64 / edges as f64 },
        border_vertices: border.iter().sum(),
        vertex_imbalance: imbalance(&vertices),
        arc_imbalance: imbalance(&arcs),
        per_part: (0..k)
            .map(|p| PartMetrics {
                part: p as u32,
                vertices: vertices[p],
                arcs: arcs[p],
                cut_arcs: cut_arcs[p],
                border_vertices: border[p],
                boundary_vertices: boundary[p],
            })
            .collect(),
    })
}
