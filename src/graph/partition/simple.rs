//! Random, biased-random, seg and hash partitioners.

use super::{Partition, Partitioner, check_parts};
use crate::graph::Csr;
use crate::graph::GraphError;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A random permutation of `0..n` from one seeded stream.
fn shuffled(n: u32, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<u32> = (0..n).collect();
    for i in (1..order.len()).rev() {
        let j = ((u64::from(rng.next_u32()) * (i as u64 + 1)) >> 32) as usize;
        order.swap(i, j);
    }
    order
}

/// Random: vertices in a seeded random order, cut into `parts` equal blocks, so part sizes
/// differ by at most one and locality is ignored.
#[derive(Clone, Debug)]
pub struct RandomPartitioner {
    /// Seed of the permutation.
    pub seed: u64,
}

impl Partitioner for RandomPartitioner {
    fn name(&self) -> &'static str {
        "random"
    }

    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError> {
        check_parts(self.name(), csr, parts)?;
        let n = csr.num_vertices();
        let mut owner = vec![0u32; n as usize];
        for (rank, &v) in shuffled(n, self.seed).iter().enumerate() {
            owner[v as usize] = (rank as u64 * u64::from(parts) / u64::from(n)) as u32;
        }
        Partition::new(parts, owner)
    }
}

/// Biased random (seed 002 section V-C): like random, but each vertex, taken in a seeded
/// random order, goes to the part that already holds most of its neighbours (in- and
/// out-arcs), among parts below `ceil(n / parts * (1 + slack))` vertices; ties go to the
/// smaller part, then to the lower part id. The random order keeps it random; the bias
/// shrinks the border.
#[derive(Clone, Debug)]
pub struct BiasedRandomPartitioner {
    /// Seed of the vertex order.
    pub seed: u64,
    /// Allowed vertex imbalance above the mean (0.05 = 5 %).
    pub slack: f64,
}

impl Partitioner for BiasedRandomPartitioner {
    fn name(&self) -> &'static str {
        "biased-random"
    }

    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError> {
        check_parts(self.name(), csr, parts)?;
        let n = csr.num_vertices();
        let capacity = ((f64::from(n) / f64::from(parts)) * (1.0 + self.slack.max(0.0)))
            .ceil()
            .max(1.0) as u64;
        let transpose = csr.is_directed().then(|| csr.transpose());
        const UNASSIGNED: u32 = u32::MAX;
        let mut owner = vec![UNASSIGNED; n as usize];
        let mut sizes = vec![0u64; parts as usize];
        let mut counts = vec![0u64; parts as usize];
        for v in shuffled(n, self.seed) {
            counts.iter_mut().for_each(|c| *c = 0);
            let incoming = transpose.as_ref().map_or(&[][..], |t| t.neighbors(v));
            for &u in csr.neighbors(v).iter().chain(incoming) {
                let p = owner[u as usize];
                if p != UNASSIGNED {
                    counts[p as usize] += 1;
                }
            }
            let best = (0..parts as usize)
                .filter(|&p| sizes[p] < capacity)
                .max_by_key(|&p| (counts[p], std::cmp::Reverse(sizes[p]), std::cmp::Reverse(p)))
                .unwrap_or(0);
            owner[v as usize] = best as u32;
            sizes[best] += 1;
        }
        Partition::new(parts, owner)
    }
}

/// Seg: contiguous id ranges, cut so each part holds about the same number of arcs plus
/// vertices (`offsets[v] + v`), so parts balance edges on skewed graphs and vertices on
/// sparse ones.
#[derive(Clone, Debug)]
pub struct SegPartitioner;

impl Partitioner for SegPartitioner {
    fn name(&self) -> &'static str {
        "seg"
    }

    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError> {
        check_parts(self.name(), csr, parts)?;
        let n = csr.num_vertices() as usize;
        let offsets = csr.offsets();
        let total = offsets[n] + n as u64;
        let mut owner = vec![0u32; n];
        let mut start = 0usize;
        for p in 0..parts {
            let end = if p + 1 == parts {
                n
            } else {
                let goal = total * u64::from(p + 1) / u64::from(parts);
                // First vertex whose cumulative weight reaches the goal, leaving at least one
                // vertex for every later part.
                let cut = (start..n).find(|&v| offsets[v] + v as u64 >= goal).unwrap_or(n);
                cut.max(start + 1).min(n - (parts - p - 1) as usize)
            };
            owner[start..end].iter_mut().for_each(|o| *o = p);
            start = end;
        }
        Partition::new(parts, owner)
    }
}

/// Hash: `owner = v mod parts`. Any GPU computes any vertex's owner without a table.
#[derive(Clone, Debug)]
pub struct HashPartitioner;

impl Partitioner for HashPartitioner {
    fn name(&self) -> &'static str {
        "hash"
    }

    fn partition(&self, csr: &Csr, parts: u32) -> Result<Partition, GraphError> {
        check_parts(self.name(), csr, parts)?;
        Partition::new(parts, (0..csr.num_vertices()).map(|v| v % parts).collect())
    }
}
