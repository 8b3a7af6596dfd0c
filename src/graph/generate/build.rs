//! Parallel CSR construction from a compact edge list, for generated graphs of hundreds of
//! millions of arcs, as a two-level radix sort:
//!
//! 1. the edges are cut into at most [`CHUNKS_MAX`] chunks (a count fixed by the edge count,
//!    not the thread count); each chunk counts its arcs per vertex block of
//!    `2^BLOCK_BITS` vertices;
//! 2. from those counts every (chunk, block) pair gets its own output range, and the chunks
//!    scatter their arcs (target, weight, vertex-in-block) into place in parallel: each
//!    block's arcs end up contiguous, in input order;
//! 3. each block (a cache-sized range of vertices) counting-sorts its own arcs by vertex in
//!    a small buffer, stably.
//!
//! The result equals [`Csr::from_edges`] exactly (arcs of a vertex in input order), for any
//! thread count. Random writes go to at most [`CHUNKS_MAX`] x blocks sequential streams
//! instead of one random place per arc.

use crate::graph::{BuildOptions, Csr, EdgeWeights, GraphError, VertexId};
use rayon::prelude::*;

/// Vertices per block: `2^BLOCK_BITS` (the vertex-in-block id fits a `u16`).
const BLOCK_BITS: u32 = 14;
/// Most edge chunks in pass 1 (bounds the count table at `CHUNKS_MAX * blocks` entries).
const CHUNKS_MAX: usize = 256;
/// Fewest edges per chunk.
const CHUNK_EDGES_MIN: usize = 1 << 16;

/// A slice that several threads write at disjoint indices.
struct DisjointWriter<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: threads only write through `write`, at indices that the (chunk, block) layout
// gives to exactly one writer; the slice outlives the parallel section that uses it.
unsafe impl<T: Send> Send for DisjointWriter<T> {}
unsafe impl<T: Send> Sync for DisjointWriter<T> {}

impl<T> DisjointWriter<T> {
    fn new(slice: &mut [T]) -> Self {
        DisjointWriter { ptr: slice.as_mut_ptr(), len: slice.len() }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// No other thread may read or write `index` during the parallel section.
    unsafe fn write(&self, index: usize, value: T) {
        assert!(index < self.len, "scatter index {index} out of {}", self.len);
        // SAFETY: in bounds (checked above) and exclusive by the caller's contract.
        unsafe { self.ptr.add(index).write(value) }
    }
}

/// Builds exactly the CSR [`Csr::from_edges`] builds (integer weights only), in parallel:
/// deterministic for any thread count.
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
    let blocks = n.div_ceil(1 << BLOCK_BITS).max(1);
    let chunk_edges = edges.len().div_ceil(CHUNKS_MAX).max(CHUNK_EDGES_MIN);

    // Pass 1: arcs per (chunk, block).
    let mut cursors: Vec<Vec<u64>> = edges
        .par_chunks(chunk_edges)
        .map(|chunk| {
            let mut counts = vec![0u64; blocks];
            for &(u, v) in chunk {
                if keep(u, v) {
                    counts[(u >> BLOCK_BITS) as usize] += 1;
                    if both(u, v) {
                        counts[(v >> BLOCK_BITS) as usize] += 1;
                    }
                }
            }
            counts
        })
        .collect();
    // Block b's arcs occupy block_start[b]..block_start[b + 1]; within it chunk c writes
    // from cursors[c][b] on.
    let mut block_start = vec![0u64; blocks + 1];
    for b in 0..blocks {
        let mut at = block_start[b];
        for counts in cursors.iter_mut() {
            let count = counts[b];
            counts[b] = at;
            at += count;
        }
        block_start[b + 1] = at;
    }
    let arcs = usize::try_from(block_start[blocks]).map_err(|_| GraphError::TooLarge {
        what: "CSR".into(),
        reason: "more arcs than this machine can address".into(),
    })?;

    // Pass 2: scatter.
    let mut targets = super::allocate::<u32>(arcs as u64, "CSR targets")?;
    targets.resize(arcs, 0);
    let mut local = super::allocate::<u16>(arcs as u64, "CSR build buffer")?;
    local.resize(arcs, 0);
    let mut arc_weights = match weights {
        Some(_) => {
            let mut w = super::allocate::<u32>(arcs as u64, "CSR weights")?;
            w.resize(arcs, 0);
            Some(w)
        }
        None => None,
    };
    {
        let target_out = DisjointWriter::new(&mut targets);
        let local_out = DisjointWriter::new(&mut local);
        let weight_out = arc_weights.as_deref_mut().map(DisjointWriter::new);
        let mask = (1u32 << BLOCK_BITS) - 1;
        edges.par_chunks(chunk_edges).zip(cursors.par_iter_mut()).enumerate().for_each(
            |(c, (chunk, cursor))| {
                let mut place = |from: u32, to: u32, index: usize| {
                    let slot = &mut cursor[(from >> BLOCK_BITS) as usize];
                    let at = *slot as usize;
                    *slot += 1;
                    // SAFETY: `at` lies in this chunk's own range of `from`'s block.
                    unsafe {
                        target_out.write(at, to);
                        local_out.write(at, (from & mask) as u16);
                        if let (Some(out), Some(src)) = (&weight_out, weights) {
                            out.write(at, src[index]);
                        }
                    }
                };
                for (i, &(u, v)) in chunk.iter().enumerate() {
                    if keep(u, v) {
                        let index = c * chunk_edges + i;
                        place(u, v, index);
                        if both(u, v) {
                            place(v, u, index);
                        }
                    }
                }
            },
        );
    }
    drop(cursors);

    // Pass 3: counting sort by vertex inside each block.
    let block_ranges: Vec<(usize, usize)> =
        (0..blocks).map(|b| (block_start[b] as usize, block_start[b + 1] as usize)).collect();
    let target_parts = split_ranges(&block_ranges, &mut targets);
    let weight_parts: Vec<Option<&mut [u32]>> = match arc_weights.as_deref_mut() {
        Some(w) => split_ranges(&block_ranges, w).into_iter().map(Some).collect(),
        None => (0..blocks).map(|_| None).collect(),
    };
    let local_parts: Vec<&[u16]> = block_ranges.iter().map(|&(s, e)| &local[s..e]).collect();
    let block_degrees: Vec<Vec<u64>> = target_parts
        .into_par_iter()
        .zip(weight_parts)
        .zip(local_parts)
        .enumerate()
        .map(|(b, ((tpart, wpart), lpart))| {
            let first = b << BLOCK_BITS;
            let count = (n - first).min(1 << BLOCK_BITS);
            let mut start = vec![0u64; count + 1];
            for &l in lpart {
                start[l as usize + 1] += 1;
            }
            for l in 0..count {
                start[l + 1] += start[l];
            }
            let mut cursor: Vec<u64> = start[..count].to_vec();
            let t_copy = tpart.to_vec();
            for (i, &l) in lpart.iter().enumerate() {
                let at = cursor[l as usize] as usize;
                cursor[l as usize] += 1;
                tpart[at] = t_copy[i];
            }
            if let Some(wpart) = wpart {
                let w_copy = wpart.to_vec();
                let mut cursor: Vec<u64> = start[..count].to_vec();
                for (i, &l) in lpart.iter().enumerate() {
                    let at = cursor[l as usize] as usize;
                    cursor[l as usize] += 1;
                    wpart[at] = w_copy[i];
                }
            }
            start
        })
        .collect();
    drop(local);
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    for (b, starts) in block_degrees.iter().enumerate() {
        offsets.extend(starts[1..].iter().map(|&s| block_start[b] + s));
    }
    let mut csr = Csr::from_parts(offsets, targets, arc_weights.map(EdgeWeights::Int), directed)?;
    if options.drop_duplicates {
        let (offsets, mut targets, weights, directed) = csr.into_parts();
        let mut int_weights = match weights {
            Some(EdgeWeights::Int(w)) => Some(w),
            _ => None,
        };
        sort_adjacency(&offsets, &mut targets, int_weights.as_deref_mut());
        csr = Csr::from_parts(offsets, targets, int_weights.map(EdgeWeights::Int), directed)?;
        csr = dedup_sorted(&csr);
    }
    Ok(csr)
}

/// Splits `data` into the given contiguous, ordered, gap-free ranges.
fn split_ranges<'a, T>(ranges: &[(usize, usize)], mut data: &'a mut [T]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    for &(start, end) in ranges {
        let (head, tail) = data.split_at_mut(end - start);
        out.push(head);
        data = tail;
    }
    out
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

/// Sorts each vertex's arcs by target, stably: equal targets keep their input order, so
/// [`dedup_sorted`] then keeps the first arc, as [`Csr::without_duplicate_arcs`] does.
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
                        pairs.sort_by_key(|p| p.0);
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
        /// Exactly the sequential builder's CSR, weights included, for every option.
        #[test]
        fn equals_sequential_builder(
            n in 1u32..40,
            raw in prop::collection::vec((0u32..40, 0u32..40, 1u32..5), 0..200),
            directed in any::<bool>(),
            drop_self_loops in any::<bool>(),
            drop_duplicates in any::<bool>(),
        ) {
            let edges: Vec<(u32, u32)> = raw.iter().map(|&(u, v, _)| (u % n, v % n)).collect();
            let weights: Vec<u32> = raw.iter().map(|e| e.2).collect();
            let options = BuildOptions { drop_self_loops, drop_duplicates };
            let par = csr_from_edges_parallel(n, &edges, Some(&weights), directed, options).unwrap();
            let seq = Csr::from_edges(n, &edges, Some(EdgeWeights::Int(weights.clone())), directed, options).unwrap();
            prop_assert_eq!(par, seq);
            let par = csr_from_edges_parallel(n, &edges, None, directed, options).unwrap();
            let seq = Csr::from_edges(n, &edges, None, directed, options).unwrap();
            prop_assert_eq!(par, seq);
        }
    }

    /// Several vertex blocks and edge chunks (the proptest's graphs fit in one of each).
    #[test]
    fn equals_sequential_builder_across_blocks_and_chunks() {
        let n = 3 << BLOCK_BITS;
        let edges: Vec<(u32, u32)> = (0..300_000u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                ((h >> 20) as u32 % n, (h >> 44) as u32 % n)
            })
            .collect();
        let weights: Vec<u32> = (0..edges.len() as u32).map(|i| i % 64 + 1).collect();
        for directed in [false, true] {
            let options = BuildOptions::default();
            let par =
                csr_from_edges_parallel(n, &edges, Some(&weights), directed, options).unwrap();
            let seq = Csr::from_edges(
                n,
                &edges,
                Some(EdgeWeights::Int(weights.clone())),
                directed,
                options,
            )
            .unwrap();
            assert!(par == seq, "directed={directed}");
        }
    }

    #[test]
    fn empty_graphs() {
        for n in [0, 1, 5] {
            let par =
                csr_from_edges_parallel(n, &[], None, false, BuildOptions::default()).unwrap();
            let seq = Csr::from_edges(n, &[], None, false, BuildOptions::default()).unwrap();
            assert_eq!(par, seq);
        }
    }

    #[test]
    fn out_of_range_edge_is_an_error() {
        let err = csr_from_edges_parallel(2, &[(0, 2)], None, true, BuildOptions::default());
        assert!(err.is_err());
    }
}
