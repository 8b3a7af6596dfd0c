//! Vertex partitioners behind one trait, and the metrics that judge a partition.
//!
//! | name | what | seed 002 (Gunrock multi-GPU, section V-C) |
//! |---|---|---|
//! | `random` | random permutation cut into equal blocks: exact vertex balance, no locality | "random" |
//! | `biased-random` | vertices in random order, each to the part holding most of its already placed neighbours (capacity-bounded) | "biased random" |
//! | `seg` | contiguous id ranges balanced by arcs + vertices | (a common baseline) |
//! | `hash` | `v mod parts`: owner computable without a table | (a common baseline) |
//! | `metis` | METIS k-way (the `metis` crate, vendored C) on the undirected view | "Metis" |
//! | `auto` | `metis` on a road-like graph (largest degree at most [`AUTO_METIS_MAX_DEGREE`]), `random` otherwise ([`resolve_auto`]) | |
//!
//! [`partition_metrics`] reports the edge cut and, as seed 002 argues matters more for a
//! framework that communicates per-vertex values, the border: for each part the number of
//! distinct remote vertices its arcs point to.

mod metis_part;
mod metrics;
mod simple;

pub use metis_part::MetisPartitioner;
pub use metrics::{PartMetrics, PartitionMetrics, partition_metrics};
pub use simple::{BiasedRandomPartitioner, HashPartitioner, RandomPartitioner, SegPartitioner};

use super::{Csr, GraphError};

/// Owner of every vertex: `owner[v] < parts`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Partition {
    /// Number of parts.
    pub parts: u32,
    /// Part of each vertex.
    pub owner: Vec<u32>,
}

impl Partition {
    /// Checks that every owner is below `parts` and `parts >= 1`.
    pub fn new(parts: u32, owner: Vec<u32>) -> Result<Self, GraphError> {
        if parts == 0 {
            return Err(invalid("partition", "0 parts: use at least 1".into()));
        }
        if let Some(v) = owner.iter().position(|&p| p >= parts) {
            return Err(invalid(
                "partition",
                format!(
                    "vertex {v} is owned by part {} but there are only {parts} parts",
                    owner[v]
                ),
            ));
        }
        Ok(Partition { parts, owner })
    }

    /// Vertices owned by each part.
    pub fn part_sizes(&self) -> Vec<u64> {
        let mut sizes = vec![0u64; self.parts as usize];
        for &p in &self.owner {
            sizes[p as usize] += 1;
        }
        sizes
    }
}

/// A way to split a graph's vertices into parts.
pub trait Partitioner {
    /// The partitioner's name as the CLI spells it.
    fn name(&self) -> &'static str;
    /// Assigns every vertex of `csr` to one of `parts` parts.
    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError>;
}

/// Names accepted by [`partitioner_by_name`].
pub const PARTITIONER_NAMES: &[&str] = &["random", "biased-random", "seg", "hash", "metis", "auto"];

/// `auto` partitions with METIS a graph whose largest degree is at most this (road
/// networks, meshes, grids: where locality exists and METIS is fast), and randomly any
/// other. Groute partitions every graph with METIS but the scale-free ones (seed 000 section
/// 4.6.1, Table 3: METIS fails on kron21.sym and twitter); here METIS on R-MAT 20 takes
/// 28 s and balances vertices, not arcs (4.3x arc imbalance on 2 parts).
pub const AUTO_METIS_MAX_DEGREE: u64 = 32;

/// The partitioner `name` stands for on `csr` cut into `parts`: itself, or for `auto`,
/// `metis` on a road-like graph of several parts and `random` otherwise (one part needs no
/// METIS run).
pub fn resolve_auto<'a>(name: &'a str, csr: &Csr, parts: u32) -> &'a str {
    if name != "auto" {
        return name;
    }
    if parts > 1 && is_road_like(csr) { "metis" } else { "random" }
}

/// Whether every vertex of `csr` has at most [`AUTO_METIS_MAX_DEGREE`] arcs (road and mesh
/// graphs; scale-free graphs have hubs far above it).
pub fn is_road_like(csr: &Csr) -> bool {
    (0..csr.num_vertices()).all(|v| csr.degree(v) <= AUTO_METIS_MAX_DEGREE)
}

/// `auto` (see [`resolve_auto`]).
#[derive(Clone, Debug)]
pub struct AutoPartitioner {
    /// Seed of METIS or of the random partitioner.
    pub seed: u64,
}

impl Partitioner for AutoPartitioner {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError> {
        check_parts(self.name(), csr, parts)?;
        match resolve_auto("auto", csr, parts) {
            "metis" => MetisPartitioner { seed: self.seed }.partition(csr, parts),
            _ => RandomPartitioner { seed: self.seed }.partition(csr, parts),
        }
    }
}

/// The partitioner called `name`, seeded where it is random.
pub fn partitioner_by_name(name: &str, seed: u64) -> Result<Box<dyn Partitioner>, GraphError> {
    Ok(match name {
        "random" => Box::new(RandomPartitioner { seed }),
        "biased-random" | "biased_random" | "biasrandom" => {
            Box::new(BiasedRandomPartitioner { seed, slack: 0.05 })
        }
        "seg" => Box::new(SegPartitioner),
        "hash" => Box::new(HashPartitioner),
        "metis" => Box::new(MetisPartitioner { seed }),
        "auto" => Box::new(AutoPartitioner { seed }),
        other => {
            return Err(invalid(
                other,
                format!("no partitioner of that name: use one of {}", PARTITIONER_NAMES.join(", ")),
            ));
        }
    })
}

pub(crate) fn invalid(partitioner: &str, reason: String) -> GraphError {
    GraphError::Partition { partitioner: partitioner.to_string(), reason }
}

/// Checks a request before partitioning.
pub(crate) fn check_parts(name: &str, csr: &Csr, parts: u32) -> Result<(), GraphError> {
    if parts == 0 {
        return Err(invalid(name, "0 parts requested: use at least 1 (e.g. --parts 4)".into()));
    }
    if u64::from(parts) > u64::from(csr.num_vertices()).max(1) {
        return Err(invalid(
            name,
            format!(
                "{parts} parts for {} vertices would leave parts empty: use at most {} parts",
                csr.num_vertices(),
                csr.num_vertices().max(1)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
