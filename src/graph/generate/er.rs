//! Erdos-Renyi graphs. G(n, m) ([`er_edges`]): `m` edges with endpoints drawn uniformly (self-loops redrawn);
//! repeated pairs are dropped when the CSR is built, so slightly fewer than `m` edges may
//! remain (about `m^2 / n^2` of them for an undirected graph). G(n, p) ([`gnp_edges`]): every
//! pair with probability `p`, exactly.

use super::rng::{Purpose, below_u64, chunk_rng, unit_f64};
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

/// Rows (source vertices) per random stream in [`gnp_edges`].
const GNP_ROWS: u64 = 1024;

/// Erdos-Renyi G(n, p): every pair independently with probability `p` (undirected: pairs
/// `u < v`; directed: ordered pairs `u != v`), by geometric skipping (Batagelj and Brandes,
/// 2005): time proportional to the edges drawn, not to `n^2`. Rows come in fixed chunks of
/// `GNP_ROWS` (1024) with their own streams.
pub fn gnp_edges(n: u32, p: f64, directed: bool, seed: u64) -> Result<Vec<(u32, u32)>, GraphError> {
    let n64 = u64::from(n);
    let pairs =
        if directed { n64 * n64.saturating_sub(1) } else { n64 * n64.saturating_sub(1) / 2 };
    let expected = p * pairs as f64;
    if expected > 4.0e9 {
        return Err(GraphError::TooLarge {
            what: "G(n, p) edge list".into(),
            reason: format!("about {expected:.3e} edges expected; lower n or p"),
        });
    }
    let log_q = (1.0 - p).ln();
    let parts: Vec<Vec<(u32, u32)>> = (0..n64.div_ceil(GNP_ROWS))
        .into_par_iter()
        .map(|chunk| {
            let mut rng = chunk_rng(seed, Purpose::Edges, chunk);
            let mut out = Vec::new();
            for u in chunk * GNP_ROWS..((chunk + 1) * GNP_ROWS).min(n64) {
                // Candidates of row u, as positions 0..len: v = u + 1 + pos (undirected) or
                // v = pos, skipping u (directed).
                let len = if directed { n64 - 1 } else { n64 - u - 1 };
                let target = |pos: u64| {
                    if directed { if pos >= u { pos + 1 } else { pos } } else { u + 1 + pos }
                };
                if p >= 1.0 {
                    out.extend((0..len).map(|pos| (u as u32, target(pos) as u32)));
                    continue;
                }
                if p <= 0.0 {
                    continue;
                }
                let mut pos: i64 = -1;
                loop {
                    let r = unit_f64(&mut rng);
                    let skip = ((1.0 - r).ln() / log_q).floor();
                    pos += 1 + skip.min(len as f64) as i64;
                    if pos as u64 >= len {
                        break;
                    }
                    out.push((u as u32, target(pos as u64) as u32));
                }
            }
            out
        })
        .collect();
    Ok(parts.concat())
}
