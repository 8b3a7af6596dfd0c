//! Alg. 1 lines 9-18 (GUM §III-C): which frontier vertices each worker takes. The frontier's
//! out-degrees are prefix-summed (`D`), the fragment's row of the plan `X_i` is
//! prefix-summed (`F`), and a sorted search of `F` in `D` cuts the frontier into consecutive
//! ranges, one per worker with edges to take, in worker order. Adjacency lists are never
//! split: a vertex goes to the worker whose share its first edge falls in, so a worker's
//! edges differ from `x_ij` by less than one maximal degree.

/// A consecutive range of a fragment's frontier handed to one worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VertexRange {
    /// The worker that processes it.
    pub worker: u32,
    /// First frontier position.
    pub start: usize,
    /// One past the last frontier position.
    pub end: usize,
    /// Out-edges of the vertices in the range.
    pub edges: u64,
}

/// Cuts a frontier with inclusive degree prefix sums `prefix` (`prefix[k]` = out-edges of
/// frontier positions `0..=k`) by the plan row `row` (`row[j]` = edges worker `j` takes).
/// Workers with no edges get no range; trailing zero-degree vertices join the last range;
/// a frontier without edges goes whole to `fallback`. Empty ranges are left out.
pub fn select_ranges(prefix: &[u64], row: &[u64], fallback: u32) -> Vec<VertexRange> {
    let len = prefix.len();
    if len == 0 {
        return Vec::new();
    }
    let edges_in = |start: usize, end: usize| -> u64 {
        if end == start {
            0
        } else {
            prefix[end - 1] - if start == 0 { 0 } else { prefix[start - 1] }
        }
    };
    let takers: Vec<usize> = (0..row.len()).filter(|&j| row[j] > 0).collect();
    if takers.is_empty() {
        return vec![VertexRange { worker: fallback, start: 0, end: len, edges: edges_in(0, len) }];
    }
    let mut ranges = Vec::with_capacity(takers.len());
    let mut cut = 0u64;
    let mut start = 0usize;
    for (t, &j) in takers.iter().enumerate() {
        cut += row[j];
        let end = if t + 1 == takers.len() { len } else { boundary(prefix, cut).max(start) };
        if end > start {
            ranges.push(VertexRange { worker: j as u32, start, end, edges: edges_in(start, end) });
        }
        start = end;
    }
    ranges
}

/// The sorted search of Alg. 1 line 15: the first frontier position whose first edge lies
/// at or beyond `cut` (the exclusive start of position `k` is `prefix[k - 1]`; starts are
/// non-decreasing, so a binary search).
pub fn boundary(prefix: &[u64], cut: u64) -> usize {
    partition_point(0, prefix.len(), |k| exclusive_start(prefix, k) < cut)
}

/// Edges before frontier position `k`.
pub fn exclusive_start(prefix: &[u64], k: usize) -> u64 {
    if k == 0 { 0 } else { prefix[k - 1] }
}

/// The number of positions `k` in `from..to` with `pred(k)` true, for a predicate that is
/// true then false (binary search).
fn partition_point(from: usize, to: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (from, to);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo - from
}

/// Inclusive prefix sums of `degrees`.
pub fn prefix_sums(degrees: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut total = 0u64;
    degrees
        .into_iter()
        .map(|d| {
            total += d;
            total
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A frontier's degrees and a plan row that splits exactly its edges.
    fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>)> {
        (proptest::collection::vec(0u64..50, 0..200), 1usize..9).prop_flat_map(|(degrees, n)| {
            let total: u64 = degrees.iter().sum();
            (Just(degrees), proptest::collection::vec(0u64..=total.max(1), n - 1)).prop_map(
                move |(degrees, mut cuts)| {
                    cuts.iter_mut().for_each(|c| *c = (*c).min(total));
                    cuts.sort_unstable();
                    let mut row = Vec::with_capacity(cuts.len() + 1);
                    let mut prev = 0;
                    for c in cuts.iter().copied().chain([total]) {
                        row.push(c - prev);
                        prev = c;
                    }
                    (degrees, row)
                },
            )
        })
    }

    proptest! {
        /// The ranges are consecutive, cover every frontier vertex once (so exactly the
        /// frontier's edges), go only to workers the row gives edges (or to the fallback),
        /// in worker order, and each worker's edges are within one maximal degree of its
        /// share.
        #[test]
        fn ranges_cover_exactly_the_assigned_edges((degrees, row) in case()) {
            let prefix = prefix_sums(degrees.iter().copied());
            let fallback = (row.len() - 1) as u32;
            let ranges = select_ranges(&prefix, &row, fallback);
            let mut next = 0;
            let mut covered = 0u64;
            let mut last_worker = None;
            for r in &ranges {
                prop_assert_eq!(r.start, next);
                prop_assert!(r.end > r.start);
                prop_assert_eq!(r.edges, degrees[r.start..r.end].iter().sum::<u64>());
                prop_assert!(row[r.worker as usize] > 0 || r.worker == fallback);
                prop_assert!(last_worker < Some(r.worker));
                last_worker = Some(r.worker);
                next = r.end;
                covered += r.edges;
            }
            prop_assert_eq!(next, degrees.len());
            prop_assert_eq!(covered, degrees.iter().sum::<u64>());
            let max_degree = degrees.iter().copied().max().unwrap_or(0);
            let total: u64 = row.iter().sum();
            if total > 0 {
                for (j, &share) in row.iter().enumerate() {
                    let got: u64 = ranges.iter().filter(|r| r.worker as usize == j).map(|r| r.edges).sum();
                    prop_assert!(got.abs_diff(share) <= max_degree, "worker {j}: {got} vs {share}");
                }
            }
        }
    }

    #[test]
    fn splits_the_paper_example() {
        // Fig. 3: GPU0's frontier v1, v2, v3 with 3, 2, 3 edges; GPU1 takes 3 edges: v3.
        let prefix = prefix_sums([3, 2, 3]);
        let ranges = select_ranges(&prefix, &[5, 3], 0);
        assert_eq!(
            ranges,
            vec![
                VertexRange { worker: 0, start: 0, end: 2, edges: 5 },
                VertexRange { worker: 1, start: 2, end: 3, edges: 3 },
            ]
        );
        assert_eq!(select_ranges(&prefix_sums([0, 0]), &[0, 0], 1).len(), 1);
    }
}
