//! Erdos-Renyi G(n, m): `m` edges with endpoints drawn uniformly (self-loops redrawn);
//! repeated pairs are dropped when the CSR is built, so slightly fewer than `m` edges may
//! remain (about `m^2 / n^2` of them for an undirected graph).

use super::rng::{Purpose, below_u64, chunk_rng};
use super::{GENERATOR_CHUNK, allocate};
use crate::graph::GraphError;
use rayon::prelude::*;

/// The G(n, m) edge list before duplicate removal. `n >= 2`.
pub fn er_edges(n: u32, m: u64, seed: u64) -> Result<Vec<(u32, u32)>, GraphError> {
    let mut edges: Vec<(u32, u32)> = allocate(m, "Erdos-Renyi edge list")?;
    edges.resize(m as usize, (0, 0));
    edges.par_chunks_mut(GENERATOR_CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut rng = chunk_rng(seed, Purpose::Edges, chunk as u64);
        for e in out.iter_mut() {
            loop {
                let u = below_u64(&mut rng, u64::from(n)) as u32;
                let v = below_u64(&mut rng, u64::from(n)) as u32;
                if u != v {
                    *e = (u, v);
                    break;
                }
            }
        }
    });
    Ok(edges)
}
