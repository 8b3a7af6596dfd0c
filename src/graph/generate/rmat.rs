//! Graph500 Kronecker / R-MAT edges: each edge descends `scale` levels of the 2x2
//! probability matrix `[[a, b], [c, d]]`, optionally with per-level noise (the "noisy SKG"
//! of Seshadhri, Pinar and Kolda, which smooths the degree distribution's oscillations) and
//! a seeded vertex permutation as the Graph500 generator applies (computed by a Feistel
//! network instead of a stored table).

use super::rng::{Purpose, chunk_rng, unit_f64};
use super::{GENERATOR_CHUNK, allocate};
use crate::graph::GraphError;
use rand::Rng;
use rayon::prelude::*;

/// R-MAT parameters (`d = 1 - a - b - c`).
#[derive(Clone, Debug, PartialEq)]
pub struct RmatParams {
    /// log2 of the vertex count (1..=31).
    pub scale: u32,
    /// Edges per vertex: the graph has `edge_factor * 2^scale` generated edges.
    pub edge_factor: u32,
    /// Probability of the top-left quadrant.
    pub a: f64,
    /// Probability of the top-right quadrant.
    pub b: f64,
    /// Probability of the bottom-left quadrant.
    pub c: f64,
    /// Per-level noise amplitude (0 = plain R-MAT; 0.1 is the NSKG suggestion).
    pub noise: f64,
    /// Relabel vertices by a seeded pseudo-random permutation (Graph500 relabels randomly).
    pub permute: bool,
    /// Drop self-loops and repeated edges when building the CSR (Graph500 keeps them in the
    /// edge list; its kernels ignore them).
    pub dedup: bool,
}

impl Default for RmatParams {
    /// Graph500 defaults at scale 16.
    fn default() -> Self {
        RmatParams {
            scale: 16,
            edge_factor: 16,
            a: 0.57,
            b: 0.19,
            c: 0.19,
            noise: 0.0,
            permute: true,
            dedup: false,
        }
    }
}

impl RmatParams {
    /// Probability of the bottom-right quadrant.
    pub fn d(&self) -> f64 {
        1.0 - self.a - self.b - self.c
    }

    /// Checks the parameters; the message lists the valid range.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=31).contains(&self.scale) {
            return Err(format!(
                "scale={} is out of range: use 1..=31 (u32 vertex ids)",
                self.scale
            ));
        }
        if self.edge_factor == 0 {
            return Err(
                "ef=0 gives no edges: use an edge factor of at least 1 (Graph500: 16)".into()
            );
        }
        let probs = [self.a, self.b, self.c];
        if probs.iter().any(|p| !(0.0..=1.0).contains(p)) || self.d() < -1e-12 {
            return Err(format!(
                "a={}, b={}, c={} must each lie in [0, 1] with a + b + c <= 1 (d = 1 - a - b - c)",
                self.a, self.b, self.c
            ));
        }
        let noise_max = ((self.a + self.d()) / 2.0).min(self.b).min(self.c);
        if !(0.0..=noise_max).contains(&self.noise) {
            return Err(format!(
                "noise={} is out of range: use 0..={noise_max:.4} (min((a + d) / 2, b, c))",
                self.noise
            ));
        }
        Ok(())
    }

    /// Number of generated edges.
    pub fn edge_count(&self) -> u64 {
        u64::from(self.edge_factor) << self.scale
    }
}

/// Per-level cumulative thresholds on the u32 scale: quadrant 0 if `r < t[0]`, 1 if
/// `r < t[1]`, 2 if `r < t[2]`, else 3.
fn level_thresholds(p: &RmatParams, seed: u64) -> Vec<[u64; 3]> {
    let mut rng = chunk_rng(seed, Purpose::Noise, 0);
    let d = p.d().max(0.0);
    (0..p.scale)
        .map(|_| {
            let (mut a, mut b, mut c) = (p.a, p.b, p.c);
            if p.noise > 0.0 {
                let mu = p.noise * (2.0 * unit_f64(&mut rng) - 1.0);
                a -= 2.0 * mu * p.a / (p.a + d);
                b += mu;
                c += mu;
            }
            let scale = 4_294_967_296.0;
            [(a * scale) as u64, ((a + b) * scale) as u64, ((a + b + c) * scale) as u64]
        })
        .collect()
}

/// A seeded pseudo-random permutation of `0..2^scale`, computed rather than stored: a
/// 4-round Feistel network over `2 * ceil(scale / 2)` bits, walking the cycle back into
/// range when `scale` is odd. Graph500 stores a shuffled table instead; computing it saves
/// two cache misses per edge on large scales (a 64 MiB table at scale 24).
#[derive(Clone, Debug)]
struct VertexPermutation {
    half_bits: u32,
    n: u64,
    keys: [u64; 4],
}

impl VertexPermutation {
    fn new(scale: u32, seed: u64) -> Self {
        let mut rng = chunk_rng(seed, Purpose::Permutation, 0);
        let keys = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
        VertexPermutation { half_bits: scale.div_ceil(2), n: 1u64 << scale, keys }
    }

    fn apply(&self, v: u32) -> u32 {
        let mask = (1u64 << self.half_bits) - 1;
        let mut x = u64::from(v);
        loop {
            let (mut left, mut right) = (x >> self.half_bits, x & mask);
            for &key in &self.keys {
                let f = splitmix64(right ^ key) & mask;
                (left, right) = (right, left ^ f);
            }
            x = (left << self.half_bits) | right;
            if x < self.n {
                return x as u32;
            }
        }
    }
}

/// SplitMix64 finaliser.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The R-MAT edge list (`edge_factor * 2^scale` edges, self-loops and duplicates included,
/// as Graph500 generates them).
pub fn rmat_edges(p: &RmatParams, seed: u64) -> Result<Vec<(u32, u32)>, GraphError> {
    let thresholds = level_thresholds(p, seed);
    let perm = p.permute.then(|| VertexPermutation::new(p.scale, seed));
    let m = p.edge_count();
    let mut edges: Vec<(u32, u32)> = allocate(m, "R-MAT edge list")?;
    edges.resize(m as usize, (0, 0));
    edges.par_chunks_mut(GENERATOR_CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut rng = chunk_rng(seed, Purpose::Edges, chunk as u64);
        for e in out.iter_mut() {
            let (mut u, mut v) = (0u32, 0u32);
            // One 64-bit draw feeds two levels (32 bits each).
            let mut bits = 0u64;
            for (level, t) in thresholds.iter().enumerate() {
                if level % 2 == 0 {
                    bits = rng.next_u64();
                }
                let r = bits & 0xffff_ffff;
                bits >>= 32;
                let quadrant = u32::from(r >= t[0]) + u32::from(r >= t[1]) + u32::from(r >= t[2]);
                u = (u << 1) | (quadrant >> 1);
                v = (v << 1) | (quadrant & 1);
            }
            *e = match &perm {
                Some(perm) => (perm.apply(u), perm.apply(v)),
                None => (u, v),
            };
        }
    });
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_permutation_is_a_bijection() {
        for scale in [1, 2, 5, 8, 11] {
            let perm = VertexPermutation::new(scale, 42);
            let mut seen = vec![false; 1 << scale];
            for v in 0..1u32 << scale {
                let p = perm.apply(v) as usize;
                assert!(!seen[p], "scale {scale}: {p} hit twice");
                seen[p] = true;
            }
            // Not the identity (for scales with room to move).
            if scale >= 5 {
                assert!((0..1u32 << scale).any(|v| perm.apply(v) != v));
            }
        }
    }
}
