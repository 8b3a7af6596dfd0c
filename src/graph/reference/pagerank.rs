//! PageRank in the two definitions the product needs.
//!
//! **(a) LDBC Graphalytics** ([`pagerank_ldbc`]): `PR_0(v) = 1/n` and, for a fixed number
//! of iterations,
//! `PR_i(v) = (1-d)/n + d * sum_{u->v} PR_{i-1}(u)/out(u) + (d/n) * sum_{w: out(w)=0} PR_{i-1}(w)`:
//! dangling vertices' rank is spread over all vertices, so ranks always sum to 1.
//!
//! **(b) Residual push** ([`pagerank_residual`], Groute section 5 / Atos): every vertex
//! starts with residual `1-d` and rank 0; popping `v` moves its residual into its rank and
//! pushes `d * residual / out(v)` to each out-neighbour; a vertex is (re)queued when its
//! residual exceeds the tolerance. Dangling vertices push nothing, so the raw ranks `y`
//! solve `y = (1-d) 1 + d P^T y` (mass is lost at dangling vertices).
//!
//! Why (b) converges to (a)'s fixed point after normalising: (a)'s fixed point satisfies
//! `x = c 1 + d P^T x` with the scalar `c = (1-d)/n + (d/n) * dangling_mass(x)`, so
//! `x = c (I - d P^T)^{-1} 1`, which is proportional to `y = (1-d)(I - d P^T)^{-1} 1`; (a)'s
//! ranks sum to 1, hence `x = y / sum(y)`. [`ResidualPageRank::ranks`] is that normalised
//! vector.

use crate::graph::{Csr, GraphError};
use std::collections::VecDeque;

/// Result of the residual push reference.
#[derive(Clone, Debug, PartialEq)]
pub struct ResidualPageRank {
    /// Raw ranks on Groute's scale (every vertex starts with residual `1 - damping`).
    pub ranks_raw: Vec<f64>,
    /// Raw ranks divided by their sum: comparable with [`pagerank_ldbc`].
    pub ranks: Vec<f64>,
    /// Number of vertex pops that moved residual (the work a runtime would do).
    pub pushes: u64,
}

fn check_damping(damping: f64) -> Result<(), GraphError> {
    if !(damping > 0.0 && damping < 1.0) {
        return Err(GraphError::InvalidArgument {
            what: "PageRank damping factor".into(),
            found: damping.to_string(),
            expected: "a number strictly between 0 and 1 (LDBC and the papers use 0.85)".into(),
        });
    }
    Ok(())
}

/// LDBC Graphalytics PageRank: `iterations` synchronous rounds from `1/n`, dangling rank
/// spread over all vertices. Returns one rank per vertex (sum 1 up to rounding).
pub fn pagerank_ldbc(csr: &Csr, damping: f64, iterations: u32) -> Result<Vec<f64>, GraphError> {
    check_damping(damping)?;
    let n = csr.num_vertices() as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    let n_f = n as f64;
    let mut rank = vec![1.0 / n_f; n];
    let mut next = vec![0.0; n];
    for _ in 0..iterations {
        let mut dangling = 0.0;
        next.iter_mut().for_each(|x| *x = 0.0);
        for u in 0..csr.num_vertices() {
            let degree = csr.degree(u);
            if degree == 0 {
                dangling += rank[u as usize];
                continue;
            }
            let share = rank[u as usize] / degree as f64;
            for &v in csr.neighbors(u) {
                next[v as usize] += share;
            }
        }
        let base = (1.0 - damping) / n_f + damping * dangling / n_f;
        for (r, &incoming) in rank.iter_mut().zip(&next) {
            *r = base + damping * incoming;
        }
    }
    Ok(rank)
}

/// Residual push PageRank (Groute/Atos) run until every residual is at most `tolerance`
/// (on the raw scale, where each vertex starts with `1 - damping`). FIFO worklist, vertices
/// in id order first: deterministic.
///
/// Error bound: the raw ranks miss `(I - d P^T)^{-1} r` for the final residuals `r`, at most
/// `n * tolerance / (1 - d)` in L1 norm, against a raw sum of at least `n (1 - d)`: the
/// normalised ranks are within about `2 tolerance / (1 - d)^2` in L1 of (a)'s fixed point.
pub fn pagerank_residual(
    csr: &Csr,
    damping: f64,
    tolerance: f64,
) -> Result<ResidualPageRank, GraphError> {
    check_damping(damping)?;
    if !(tolerance > 0.0 && tolerance.is_finite()) {
        return Err(GraphError::InvalidArgument {
            what: "residual PageRank tolerance".into(),
            found: tolerance.to_string(),
            expected: "a positive number such as 1e-9".into(),
        });
    }
    let n = csr.num_vertices() as usize;
    let mut rank = vec![0.0; n];
    let mut residual = vec![1.0 - damping; n];
    let mut queued = vec![true; n];
    let mut worklist: VecDeque<u32> = (0..csr.num_vertices()).collect();
    let mut pushes = 0u64;
    while let Some(v) = worklist.pop_front() {
        queued[v as usize] = false;
        let r = std::mem::take(&mut residual[v as usize]);
        if r == 0.0 {
            continue;
        }
        pushes += 1;
        rank[v as usize] += r;
        let degree = csr.degree(v);
        if degree == 0 {
            continue;
        }
        let share = damping * r / degree as f64;
        for &u in csr.neighbors(v) {
            let slot = &mut residual[u as usize];
            *slot += share;
            if *slot > tolerance && !queued[u as usize] {
                queued[u as usize] = true;
                worklist.push_back(u);
            }
        }
    }
    // Residuals at or below the tolerance stay unapplied, as in the papers.
    let sum: f64 = rank.iter().sum();
    let ranks = if sum > 0.0 { rank.iter().map(|r| r / sum).collect() } else { rank.clone() };
    Ok(ResidualPageRank { ranks_raw: rank, ranks, pushes })
}
