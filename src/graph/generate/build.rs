//! Parallel CSR construction from a compact edge list, for generated graphs of hundreds of
//! millions of arcs: atomic degree counting, prefix sum, atomic placement, then each
//! vertex's arcs sorted by (target, weight) so the result does not depend on thread
//! scheduling.

use crate::graph::{BuildOptions, Csr, EdgeWeights, GraphError, VertexId};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Edges per parallel work item.
const EDGE_CHUNK: usize = 1 << 16;

/// Builds a CSR like [`Csr::from_edges`], in parallel, except that every vertex's arcs are
/// sorted by target (then weight) instead of kept in input order. With `drop_duplicates` the
/// first arc of each sorted run (the smallest weight) is kept. Deterministic for any thread
/// count. Integer weights only (generated graphs).
pub fn csr_from_edges_parallel(
    num_vertices: u32,
    edges: &[(VertexId, VertexId)],
    weights: Option<&[u32]>,
    directed: bool,
    options: BuildOptions,
) -> Result<Csr, GraphError> {
    let n = num_vertices as usize;
    if let Some(&(u, v)) =
        edges.par_iter().find_any(|&&(u, v)| u >= num_vertices || v >= num_vertices)
    {
        return Err(GraphError::InvalidCsr(format!(
            "edge ({u}, {v}) is out of range for {num_vertices} vertices"
        )));
    }
    if let Some(w) = weights
        && w.len() != edges.len()
    {
        return Err(GraphError::InvalidCsr(format!(
            "{} weights for {} edges",
            w.len(),
            edges.len()
        )));
    }
    let keep = |u: u32, v: u32| !(options.drop_self_loops && u == v);
    let both = |u: u32, v: u32| !directed && u != v;

    // 1. Degrees.
    let degree: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    edges.par_chunks(EDGE_CHUNK).for_each(|chunk| {
        for &(u, v) in chunk {
            if keep(u, v) {
                degree[u as usize].fetch_add(1, Ordering::Relaxed);
                if both(u, v) {
                    degree[v as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });
    // 2. Offsets; the degree counters become placement cursors.
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut total = 0u64;
    for d in &degree {
        let count = d.load(Ordering::Relaxed);
        d.store(total, Ordering::Relaxed);
        total += count;
        offsets.push(total);
    }
    let cursor = degree;
    let arcs = total as usize;
    // 3. Placement.
    let targets: Vec<AtomicU32> = (0..arcs).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    let arc_weights: Option<Vec<AtomicU32>> =
        weights.map(|_| (0..arcs).into_par_iter().map(|_| AtomicU32::new(0)).collect());
    edges.par_chunks(EDGE_CHUNK).enumerate().for_each(|(c, chunk)| {
        let place = |from: u32, to: u32, index: usize| {
            let slot = cursor[from as usize].fetch_add(1, Ordering::Relaxed) as usize;
            targets[slot].store(to, Ordering::Relaxed);
            if let (Some(dst), Some(src)) = (&arc_weights, weights) {
                dst[slot].store(src[index], Ordering::Relaxed);
            }
        };
        for (i, &(u, v)) in chunk.iter().enumerate() {
            if keep(u, v) {
                let index = c * EDGE_CHUNK + i;
                place(u, v, index);
                if both(u, v) {
                    place(v, u, index);
                }
            }
        }
    });
    drop(cursor);
    let mut targets: Vec<u32> = targets.into_iter().map(AtomicU32::into_inner).collect();
    let mut arc_weights: Option<Vec<u32>> =
        arc_weights.map(|w| w.into_iter().map(AtomicU32::into_inner).collect());
    // 4. Canonical order inside each vertex.
    sort_adjacency(&offsets, &mut targets, arc_weights.as_deref_mut());
    let csr = Csr::from_parts(offsets, targets, arc_weights.map(EdgeWeights::Int), directed)?;
    Ok(if options.drop_duplicates { dedup_sorted(&csr) } else { csr })
}

/// Vertex groups of roughly equal arc counts: `(first vertex, end vertex)`.
fn vertex_groups(offsets: &[u64]) -> Vec<(usize, usize)> {
    let n = offsets.len() - 1;
    let arcs = offsets[n];
    let target = (arcs / 4096).max(1 << 14);
    let mut groups = Vec::new();
    let mut start = 0;
    while start < n {
        let limit = offsets[start] + target;
        let end = offsets.partition_point(|&o| o <= limit).clamp(start + 1, n);
        groups.push((start, end));
        start = end;
    }
    groups
}

/// Splits `data` into the arc ranges of `groups` (contiguous, in order).
fn split_groups<'a, T>(
    offsets: &[u64],
    groups: &[(usize, usize)],
    mut data: &'a mut [T],
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(groups.len());
    for &(start, end) in groups {
        let len = (offsets[end] - offsets[start]) as usize;
        let (head, tail) = data.split_at_mut(len);
        out.push(head);
        data = tail;
    }
    out
}

fn sort_adjacency(offsets: &[u64], targets: &mut [u32], weights: Option<&mut [u32]>) {
    let groups = vertex_groups(offsets);
    let target_parts = split_groups(offsets, &groups, targets);
    match weights {
        None => {
            target_parts.into_par_iter().zip(&groups).for_each(|(part, &(start, end))| {
                let base = offsets[start];
                for v in start..end {
                    let range = (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize;
                    part[range].sort_unstable();
                }
            });
        }
        Some(weights) => {
            let weight_parts = split_groups(offsets, &groups, weights);
            target_parts.into_par_iter().zip(weight_parts).zip(&groups).for_each(
                |((tpart, wpart), &(start, end))| {
                    let base = offsets[start];
                    let mut pairs: Vec<(u32, u32)> = Vec::new();
                    for v in start..end {
                        let range = (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize;
                        pairs.clear();
                        pairs.extend(
                            tpart[range.clone()]
                                .iter()
                                .copied()
                                .zip(wpart[range.clone()].iter().copied()),
                        );
                        pairs.sort_unstable();
                        for (k, (t, w)) in range.zip(&pairs) {
                            tpart[k] = *t;
                            wpart[k] = *w;
                        }
                    }
                },
            );
        }
    }
}

/// Drops repeated targets from an adjacency whose lists are sorted (keeps the first arc).
fn dedup_sorted(csr: &Csr) -> Csr {
    let offsets = csr.offsets();
    let groups = vertex_groups(offsets);
    let int_weights = match csr.weights() {
        Some(EdgeWeights::Int(w)) => Some(w.as_slice()),
        _ => None,
    };
    let parts: Vec<(Vec<u64>, Vec<u32>, Vec<u32>)> = groups
        .par_iter()
        .map(|&(start, end)| {
            let mut degrees = Vec::with_capacity(end - start);
            let mut targets = Vec::new();
            let mut weights = Vec::new();
            for v in start..end {
                let before = targets.len();
                let mut last = None;
                for arc in offsets[v] as usize..offsets[v + 1] as usize {
                    let t = csr.targets()[arc];
                    if last != Some(t) {
                        last = Some(t);
                        targets.push(t);
                        if let Some(w) = int_weights {
                            weights.push(w[arc]);
                        }
                    }
                }
                degrees.push((targets.len() - before) as u64);
            }
            (degrees, targets, weights)
        })
        .collect();
    let mut new_offsets = Vec::with_capacity(offsets.len());
    new_offsets.push(0u64);
    let mut total = 0;
    for (degrees, _, _) in &parts {
        for d in degrees {
            total += d;
            new_offsets.push(total);
        }
    }
    let mut targets = Vec::with_capacity(total as usize);
    let mut weights = Vec::with_capacity(if int_weights.is_some() { total as usize } else { 0 });
    for (_, t, w) in parts {
        targets.extend_from_slice(&t);
        weights.extend_from_slice(&w);
    }
    let weights = int_weights.map(|_| EdgeWeights::Int(weights));
    Csr::from_parts(new_offsets, targets, weights, csr.is_directed())
        .expect("deduplicating a valid CSR keeps it valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Same arcs per vertex as the sequential builder, as multisets.
        #[test]
        fn matches_sequential_builder(
            n in 1u32..40,
            raw in prop::collection::vec((0u32..40, 0u32..40, 1u32..5), 0..200),
            directed in any::<bool>(),
            drop_self_loops in any::<bool>(),
            drop_duplicates in any::<bool>(),
        ) {
            let edges: Vec<(u32, u32)> = raw.iter().map(|&(u, v, _)| (u % n, v % n)).collect();
            let weights: Vec<u32> = raw.iter().map(|e| e.2).collect();
            let options = BuildOptions { drop_self_loops, drop_duplicates: false };
            let par = csr_from_edges_parallel(n, &edges, Some(&weights), directed, options).unwrap();
            let seq = Csr::from_edges(n, &edges, Some(EdgeWeights::Int(weights.clone())), directed, options).unwrap();
            prop_assert_eq!(par.offsets(), seq.offsets());
            let Some(EdgeWeights::Int(pw)) = par.weights() else { panic!("weights lost") };
            let Some(EdgeWeights::Int(sw)) = seq.weights() else { panic!("weights lost") };
            for v in 0..n {
                let mut a: Vec<(u32, u32)> = par.arc_range(v).map(|i| (par.targets()[i], pw[i])).collect();
                let mut b: Vec<(u32, u32)> = seq.arc_range(v).map(|i| (seq.targets()[i], sw[i])).collect();
                prop_assert!(a.windows(2).all(|w| w[0] <= w[1]), "not sorted");
                a.sort_unstable();
                b.sort_unstable();
                prop_assert_eq!(a, b);
            }
            let options = BuildOptions { drop_self_loops, drop_duplicates };
            let par = csr_from_edges_parallel(n, &edges, None, directed, options).unwrap();
            let seq = Csr::from_edges(n, &edges, None, directed, options).unwrap();
            if drop_duplicates {
                // Both keep one arc per distinct target, sorted.
                prop_assert_eq!(par, seq);
            } else {
                prop_assert_eq!(par.num_arcs(), seq.num_arcs());
            }
        }
    }

    #[test]
    fn out_of_range_edge_is_an_error() {
        let err = csr_from_edges_parallel(2, &[(0, 2)], None, true, BuildOptions::default());
        assert!(err.is_err());
    }
}
