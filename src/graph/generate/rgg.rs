//! Road-like random geometric graphs: high diameter, low degree (like `luxembourg_osm`).
//!
//! A plain random geometric graph with mean degree 2-4 is far below its connectivity
//! threshold and falls apart into small pieces, which real road networks do not. So:
//! 1. place `n` points uniformly in the unit square (vertex ids in row-major cell order, so
//!    ids follow geography as in real road files);
//! 2. take the candidate edges of the geometric graph with connection radius for mean degree
//!    `max(2 * degree, 10)`;
//! 3. keep its Euclidean minimum spanning forest (Kruskal: degree 1-4, mostly 2, long
//!    paths: a road skeleton);
//! 4. add back a seeded random sample of the other candidates, preferring those at dead
//!    ends, until the mean degree is `degree` (local loops of all sizes, as road grids have).

use super::rng::{Purpose, below_u64, chunk_rng, unit_f64};
use super::{GENERATOR_CHUNK, allocate};
use crate::graph::GraphError;
use rayon::prelude::*;

/// The road-like edge list on `n` points with mean degree about `degree` (>= 2 gives a
/// spanning forest plus loops; below 2 only the forest, mean degree just under 2).
pub fn rgg_edges(n: u32, degree: f64, seed: u64) -> Result<Vec<(u32, u32)>, GraphError> {
    let n64 = u64::from(n);
    let mut points: Vec<(f64, f64)> = allocate(n64, "random geometric points")?;
    points.resize(n as usize, (0.0, 0.0));
    points.par_chunks_mut(GENERATOR_CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut rng = chunk_rng(seed, Purpose::Points, chunk as u64);
        for p in out.iter_mut() {
            *p = (unit_f64(&mut rng), unit_f64(&mut rng));
        }
    });
    let connect_degree = (2.0 * degree).max((n.max(2) as f64).ln() + 5.0);
    let radius = (connect_degree / (std::f64::consts::PI * n.max(1) as f64)).sqrt();
    let cells_per_side = ((1.0 / radius).floor() as usize).clamp(1, 1 << 15);
    let cell_of = |&(x, y): &(f64, f64)| {
        let cx = ((x * cells_per_side as f64) as usize).min(cells_per_side - 1);
        let cy = ((y * cells_per_side as f64) as usize).min(cells_per_side - 1);
        cy * cells_per_side + cx
    };
    // Renumber points in cell order (ties by draw order): ids follow geography.
    let mut keyed: Vec<(usize, u32)> =
        points.par_iter().enumerate().map(|(i, p)| (cell_of(p), i as u32)).collect();
    keyed.par_sort_unstable();
    let points: Vec<(f64, f64)> = keyed.par_iter().map(|&(_, i)| points[i as usize]).collect();
    let cell_count = cells_per_side * cells_per_side;
    let mut cell_start = vec![0usize; cell_count + 1];
    for &(cell, _) in &keyed {
        cell_start[cell + 1] += 1;
    }
    drop(keyed);
    for c in 0..cell_count {
        cell_start[c + 1] += cell_start[c];
    }
    let r2 = radius * radius;
    // Candidate pairs within the radius: each cell against itself and its E, S, SE, SW
    // neighbours (each pair of cells once).
    let mut candidates: Vec<(f64, u32, u32)> = (0..cell_count)
        .into_par_iter()
        .flat_map_iter(|cell| {
            let (cx, cy) = (cell % cells_per_side, cell / cells_per_side);
            let mut out = Vec::new();
            let own = cell_start[cell]..cell_start[cell + 1];
            for i in own.clone() {
                for j in i + 1..own.end {
                    push_if_close(&points, i, j, r2, &mut out);
                }
            }
            let offsets: [(isize, isize); 4] = [(1, 0), (-1, 1), (0, 1), (1, 1)];
            for (dx, dy) in offsets {
                let (nx, ny) = (cx as isize + dx, cy as isize + dy);
                if nx < 0
                    || ny < 0
                    || nx >= cells_per_side as isize
                    || ny >= cells_per_side as isize
                {
                    continue;
                }
                let other = ny as usize * cells_per_side + nx as usize;
                for i in own.clone() {
                    for j in cell_start[other]..cell_start[other + 1] {
                        push_if_close(&points, i, j, r2, &mut out);
                    }
                }
            }
            out
        })
        .collect();
    candidates
        .par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    // Kruskal, then a random sample of the leftovers.
    let mut sets = DisjointSets::new(n as usize);
    let mut edges = Vec::new();
    let mut leftovers = Vec::new();
    for &(_, u, v) in &candidates {
        if sets.union(u as usize, v as usize) {
            edges.push((u, v));
        } else {
            leftovers.push((u, v));
        }
    }
    drop(candidates);
    let wanted = (degree * n as f64 / 2.0).round() as usize;
    let extra = wanted.saturating_sub(edges.len()).min(leftovers.len());
    // A seeded random sample of the leftovers (lazy Fisher-Yates on one stream): local edges
    // that close loops of every size, as road grids have (the shortest leftovers would only
    // close triangles and leave the diameter tree-like). Among the first `8 * extra` drawn,
    // edges at a dead end (a forest leaf) are preferred: real road networks have few.
    let mut rng = chunk_rng(seed, Purpose::Edges, 0);
    let mut degree = vec![0u8; n as usize];
    for &(u, v) in &edges {
        degree[u as usize] = degree[u as usize].saturating_add(1);
        degree[v as usize] = degree[v as usize].saturating_add(1);
    }
    let scan_limit = extra.saturating_mul(8);
    let mut accepted = 0;
    let mut skipped = Vec::new();
    let mut i = 0;
    while accepted < extra && i < leftovers.len() {
        let j = i + below_u64(&mut rng, (leftovers.len() - i) as u64) as usize;
        leftovers.swap(i, j);
        let (u, v) = leftovers[i];
        i += 1;
        if degree[u as usize] == 1 || degree[v as usize] == 1 || i > scan_limit {
            edges.push((u, v));
            degree[u as usize] = degree[u as usize].saturating_add(1);
            degree[v as usize] = degree[v as usize].saturating_add(1);
            accepted += 1;
        } else {
            skipped.push((u, v));
        }
    }
    let short = extra - accepted;
    edges.extend(skipped.into_iter().take(short));
    Ok(edges)
}

fn push_if_close(
    points: &[(f64, f64)],
    i: usize,
    j: usize,
    r2: f64,
    out: &mut Vec<(f64, u32, u32)>,
) {
    let (a, b) = (points[i], points[j]);
    let d2 = (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2);
    if d2 <= r2 {
        let (u, v) = if i < j { (i, j) } else { (j, i) };
        out.push((d2, u as u32, v as u32));
    }
}

/// Union-find with path halving and union by size.
struct DisjointSets {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl DisjointSets {
    fn new(n: usize) -> Self {
        DisjointSets { parent: (0..n as u32).collect(), size: vec![1; n] }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let grand = self.parent[self.parent[x] as usize];
            self.parent[x] = grand;
            x = grand as usize;
        }
        x
    }

    /// Joins the sets of `a` and `b`; false when they were already one.
    fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra] < self.size[rb] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb] = ra as u32;
        self.size[ra] += self.size[rb];
        true
    }
}
