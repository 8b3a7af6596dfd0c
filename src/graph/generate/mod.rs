//! Seeded graph generators: Graph500 Kronecker/R-MAT, Erdos-Renyi G(n, m) and G(n, p), 2D/3D grids
//! with random edge removal, and road-like random geometric graphs; optional uniform
//! integer weights (the papers' SSSP setting is `weights=1..64`).
//!
//! A generator is named by a [`GeneratorSpec`] string such as
//! `rmat:scale=20,ef=16,a=0.57,b=0.19,c=0.19,seed=1`, `er:n=1000,m=5000`, `er:n=1000,p=0.01`,
//! `grid2d:w=100,h=100,drop=0.1`, `grid3d:w=20,h=20,d=20` or `rgg:n=100000,degree=3`.
//! Keys every generator takes: `seed` (default 1) and `weights` (`LO..HI` or `HI` for
//! `1..HI`; default none). R-MAT and Erdos-Renyi also take `directed` (default false).
//!
//! Architecture invariant: output depends only on the spec. Work is split into chunks of
//! [`GENERATOR_CHUNK`] items, each drawing from its own ChaCha8 stream keyed by (seed,
//! purpose, chunk index), never by thread; the CSR is built with
//! [`csr_from_edges_parallel`], a chunked radix sort whose result equals `Csr::from_edges`
//! (arcs of a vertex in input order). A seed gives the same
//! CSR on any number of threads.
//!
//! How close the generated graphs come to the real ones in `tests/data/graphs/` is measured and
//! tabulated in `README.md` next to this file.

mod build;
mod er;
mod grid;
mod rgg;
mod rmat;
mod rng;
mod spec;

pub use build::csr_from_edges_parallel;
pub use er::{er_edges, gnp_edges};
pub use grid::grid_edges;
pub use rgg::rgg_edges;
pub use rmat::{RmatParams, rmat_edges};
pub use spec::{GeneratorKind, GeneratorSpec};

use super::{BuildOptions, Csr, EdgeWeights, GraphError};
use rand::Rng;
use rayon::prelude::*;

/// Items (edges, vertices, points) per random stream. Fixed: changing it changes every
/// generated graph.
pub const GENERATOR_CHUNK: usize = 1 << 16;

/// Generates the graph a spec names.
pub fn generate(spec: &GeneratorSpec) -> Result<Csr, GraphError> {
    let seed = spec.seed;
    let (n, edges, directed, options) = match &spec.kind {
        GeneratorKind::Rmat(p) => {
            let n = 1u64 << p.scale;
            let n = u32::try_from(n).map_err(|_| GraphError::InvalidSpec {
                spec: spec.to_string(),
                reason: "scale 32 exceeds u32 vertex ids: use scale <= 31".into(),
            })?;
            let options = BuildOptions { drop_self_loops: p.dedup, drop_duplicates: p.dedup };
            (n, rmat_edges(p, seed)?, spec.directed, options)
        }
        GeneratorKind::ErdosRenyi { n, m } => {
            let dedup = BuildOptions { drop_self_loops: true, drop_duplicates: true };
            (*n, er_edges(*n, *m, seed)?, spec.directed, dedup)
        }
        GeneratorKind::ErdosRenyiGnp { n, p } => {
            (*n, gnp_edges(*n, *p, spec.directed, seed)?, spec.directed, BuildOptions::default())
        }
        GeneratorKind::Grid2d { w, h, drop } => {
            (w * h, grid_edges(*w, *h, 1, *drop, seed), false, BuildOptions::default())
        }
        GeneratorKind::Grid3d { w, h, d, drop } => {
            (w * h * d, grid_edges(*w, *h, *d, *drop, seed), false, BuildOptions::default())
        }
        GeneratorKind::Rgg { n, degree } => {
            (*n, rgg_edges(*n, *degree, seed)?, false, BuildOptions::default())
        }
    };
    if let Some((lo, hi)) = spec.weights {
        check_weight_range(lo, hi)?;
    }
    let weights = spec.weights.map(|(lo, hi)| uniform_weights(edges.len() as u64, lo, hi, seed));
    csr_from_edges_parallel(n, &edges, weights.as_deref(), directed, options)
}

/// Adds integer weights in `lo..=hi` to a loaded graph: the weight of arc `u -> v` is a
/// seeded hash of the edge (of `{min, max}` for an undirected graph, so both arcs of an edge
/// agree; of `(u, v)` for a directed one), uniform up to a bias below `2^-32`. Deterministic,
/// O(1) per arc, independent of the arc order.
pub fn with_uniform_weights(csr: &Csr, lo: u32, hi: u32, seed: u64) -> Result<Csr, GraphError> {
    check_weight_range(lo, hi)?;
    let span = u64::from(hi - lo) + 1;
    let directed = csr.is_directed();
    let weights: Vec<u32> = (0..csr.num_vertices())
        .into_par_iter()
        .flat_map_iter(|u| {
            csr.neighbors(u).iter().map(move |&v| {
                let (a, b) = if directed || u <= v { (u, v) } else { (v, u) };
                let h = splitmix64(
                    splitmix64(seed ^ 0x005e_ed0f_ed9e) ^ (u64::from(a) << 32 | u64::from(b)),
                );
                lo + (((h >> 32) * span) >> 32) as u32
            })
        })
        .collect();
    let mut out = csr.clone();
    out.set_weights(Some(EdgeWeights::Int(weights)))?;
    Ok(out)
}

/// Checks a weight range `lo..=hi`.
pub(crate) fn check_weight_range(lo: u32, hi: u32) -> Result<(), GraphError> {
    if lo == 0 || lo > hi {
        return Err(GraphError::InvalidArgument {
            what: "weight range".into(),
            found: format!("{lo}..{hi}"),
            expected: "LO..HI with 1 <= LO <= HI, e.g. 1..64 (the papers' SSSP setting)".into(),
        });
    }
    Ok(())
}

/// SplitMix64 finaliser: a well-mixed 64-bit hash.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `count` weights uniform in `lo..=hi`, chunked streams.
fn uniform_weights(count: u64, lo: u32, hi: u32, seed: u64) -> Vec<u32> {
    let span = u64::from(hi - lo) + 1;
    let mut out = vec![0u32; count as usize];
    out.par_chunks_mut(GENERATOR_CHUNK).enumerate().for_each(|(chunk, part)| {
        let mut rng = rng::chunk_rng(seed, rng::Purpose::Weights, chunk as u64);
        for w in part {
            *w = lo + ((u64::from(rng.next_u32()) * span) >> 32) as u32;
        }
    });
    out
}

/// An empty vector with room for `count` items, or a clear error when memory is short.
pub(crate) fn allocate<T>(count: u64, what: &str) -> Result<Vec<T>, GraphError> {
    let bytes = count.saturating_mul(std::mem::size_of::<T>() as u64);
    let too_large = || GraphError::TooLarge {
        what: what.to_string(),
        reason: format!(
            "{count} items ({:.1} GiB) could not be allocated; use a smaller scale or size",
            bytes as f64 / (1u64 << 30) as f64
        ),
    };
    let count = usize::try_from(count).map_err(|_| too_large())?;
    let mut v = Vec::new();
    v.try_reserve_exact(count).map_err(|_| too_large())?;
    Ok(v)
}

#[cfg(test)]
mod tests;
