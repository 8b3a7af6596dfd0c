//! Random streams for generators: one ChaCha8 stream per (seed, purpose, chunk index).
//!
//! Architecture invariant: a generator splits its work into chunks of a fixed size that
//! does not depend on the thread count, and each chunk draws only from its own stream, so a
//! seed gives the same graph on 1 thread or 64.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What a stream is used for; different purposes of one seed never share a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Purpose {
    /// Edge endpoints.
    Edges = 1,
    /// Edge weights.
    Weights = 2,
    /// Vertex permutation.
    Permutation = 3,
    /// Per-level R-MAT noise.
    Noise = 4,
    /// Point coordinates (random geometric graphs).
    Points = 5,
}

/// The stream of chunk `chunk` for `purpose` under `seed`.
pub(crate) fn chunk_rng(seed: u64, purpose: Purpose, chunk: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&(purpose as u64).to_le_bytes());
    key[16..26].copy_from_slice(b"switchyard");
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(chunk);
    rng
}

/// A uniform float in `[0, 1)` from 53 random bits.
pub(crate) fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    use rand::Rng;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..bound` (`bound > 0`) by Lemire's multiply-shift with rejection.
pub(crate) fn below_u64(rng: &mut ChaCha8Rng, bound: u64) -> u64 {
    use rand::Rng;
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let x = rng.next_u64();
        let wide = u128::from(x) * u128::from(bound);
        if (wide as u64) >= threshold {
            return (wide >> 64) as u64;
        }
    }
}
