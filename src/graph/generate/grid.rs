//! 2D and 3D grids (4- and 6-neighbourhoods) with every edge dropped independently with
//! probability `drop`. Vertex `(x, y, z)` has id `x + w * (y + h * z)`.

use super::GENERATOR_CHUNK;
use super::rng::{Purpose, chunk_rng, unit_f64};
use rayon::prelude::*;

/// Edges of a `w x h x d` grid (`d = 1` for 2D), each kept with probability `1 - drop`.
/// Each vertex proposes its +x, +y, +z edges; chunks of vertices draw from their own stream.
pub fn grid_edges(w: u32, h: u32, d: u32, drop: f64, seed: u64) -> Vec<(u32, u32)> {
    let (w64, h64, d64) = (u64::from(w), u64::from(h), u64::from(d));
    let n = w64 * h64 * d64;
    let chunks = n.div_ceil(GENERATOR_CHUNK as u64);
    let parts: Vec<Vec<(u32, u32)>> = (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            let mut rng = chunk_rng(seed, Purpose::Edges, chunk);
            let start = chunk * GENERATOR_CHUNK as u64;
            let end = (start + GENERATOR_CHUNK as u64).min(n);
            let mut out = Vec::with_capacity(((end - start) * 3) as usize);
            for id in start..end {
                let (x, y, z) = (id % w64, (id / w64) % h64, id / (w64 * h64));
                let neighbours = [
                    (x + 1 < w64).then(|| id + 1),
                    (y + 1 < h64).then(|| id + w64),
                    (z + 1 < d64).then(|| id + w64 * h64),
                ];
                for other in neighbours.into_iter().flatten() {
                    // Draw for every proposed edge so the stream position does not depend on
                    // earlier outcomes' values.
                    if unit_f64(&mut rng) >= drop {
                        out.push((id as u32, other as u32));
                    }
                }
            }
            out
        })
        .collect();
    parts.concat()
}
