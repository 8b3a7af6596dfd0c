//! OSteal's reduction tree (GUM §IV-A, Fig. 4b): a fixed eviction order that keeps the
//! largest aggregate bandwidth among the surviving workers, so the worker sets `R(m)`,
//! m = n..1, are nested and Alg. 2 only has to try n of them.
//!
//! Built greedily from the bandwidth matrix: from all n workers, evict the one whose
//! removal leaves the largest sum of pairwise bandwidths among the rest (ties: the highest
//! id goes first), and repeat. The lowest id, the coordinator (§V-A), is never evicted.
//! The paper leaves open who takes an evicted fragment; here it is the surviving worker
//! with the widest path to the fragment's home (ties: lowest id).

/// The nested worker sets and the owners of evicted fragments.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReductionTree {
    /// `eviction[k]`: the worker evicted when going from `n - k` to `n - k - 1` workers.
    pub eviction: Vec<u32>,
    /// `bandwidth[a][b]` in bytes per second (the diagonal is unused).
    bandwidth: Vec<Vec<u64>>,
}

/// Errors building a tree.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TreeError {
    /// The matrix is not square or empty.
    #[error("the bandwidth matrix must be n x n with n >= 1, got {0}")]
    Shape(String),
    /// A pair of GPUs has no path.
    #[error(
        "GPU {a} cannot reach GPU {b} (path bandwidth 0 in the topology): GUM needs a path \
         between every pair of GPUs; fix the topology's links or run on fewer GPUs"
    )]
    Unreachable {
        /// One GPU.
        a: u32,
        /// The other.
        b: u32,
    },
}

impl ReductionTree {
    /// Builds the tree from a bandwidth matrix (bytes per second between every pair).
    pub fn build(bandwidth: Vec<Vec<u64>>) -> Result<ReductionTree, TreeError> {
        let n = bandwidth.len();
        if n == 0 || bandwidth.iter().any(|row| row.len() != n) {
            return Err(TreeError::Shape(format!("{n} rows")));
        }
        for (a, row) in bandwidth.iter().enumerate() {
            if let Some(b) = (0..n).find(|&b| a != b && row[b] == 0) {
                return Err(TreeError::Unreachable { a: a as u32, b: b as u32 });
            }
        }
        let pair_sum = |set: &[u32]| -> u128 {
            let mut s = 0u128;
            for (k, &a) in set.iter().enumerate() {
                for &b in &set[k + 1..] {
                    s += u128::from(bandwidth[a as usize][b as usize])
                        + u128::from(bandwidth[b as usize][a as usize]);
                }
            }
            s
        };
        let mut alive: Vec<u32> = (0..n as u32).collect();
        let mut eviction = Vec::with_capacity(n.saturating_sub(1));
        while alive.len() > 1 {
            let mut best: Option<(u128, u32)> = None;
            for &candidate in alive.iter().skip(1).rev() {
                let rest: Vec<u32> = alive.iter().copied().filter(|&g| g != candidate).collect();
                let s = pair_sum(&rest);
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, candidate));
                }
            }
            let Some((_, evicted)) = best else { break };
            alive.retain(|&g| g != evicted);
            eviction.push(evicted);
        }
        Ok(ReductionTree { eviction, bandwidth })
    }

    /// Number of GPUs.
    pub fn gpus(&self) -> usize {
        self.bandwidth.len()
    }

    /// `R(m)`: the `m` surviving workers, in id order.
    pub fn workers(&self, m: usize) -> Vec<u32> {
        let n = self.gpus();
        let gone = &self.eviction[..n - m.clamp(1, n)];
        (0..n as u32).filter(|g| !gone.contains(g)).collect()
    }

    /// The owner of fragment `fragment` when `m` workers remain: itself if it survives,
    /// else the survivor with the widest path to it.
    pub fn owner(&self, m: usize, fragment: u32) -> u32 {
        let workers = self.workers(m);
        if workers.contains(&fragment) {
            return fragment;
        }
        let f = fragment as usize;
        workers
            .iter()
            .copied()
            .fold(None::<u32>, |best, w| match best {
                Some(b) if self.bandwidth[f][b as usize] >= self.bandwidth[f][w as usize] => {
                    Some(b)
                }
                _ => Some(w),
            })
            .unwrap_or(0)
    }

    /// Sum of the pairwise path bandwidths among `R(m)`, in bytes per second.
    pub fn aggregate_bandwidth(&self, m: usize) -> u128 {
        let w = self.workers(m);
        let mut s = 0u128;
        for &a in &w {
            for &b in &w {
                if a != b {
                    s += u128::from(self.bandwidth[a as usize][b as usize]);
                }
            }
        }
        s
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The DGX-1 hybrid cube-mesh as lanes x 25 GB/s (the lane list of
    /// `topologies/dgx1-v100.toml`), with 10 GB/s where two GPUs have no NVLink (through
    /// the host).
    pub(crate) fn dgx1() -> Vec<Vec<u64>> {
        let lanes: &[(usize, usize, u64)] = &[
            (0, 3, 2),
            (0, 4, 2),
            (1, 2, 2),
            (1, 5, 2),
            (2, 3, 2),
            (4, 7, 2),
            (5, 6, 2),
            (6, 7, 2),
            (0, 1, 1),
            (0, 2, 1),
            (1, 3, 1),
            (2, 6, 1),
            (3, 7, 1),
            (4, 5, 1),
            (4, 6, 1),
            (5, 7, 1),
        ];
        let mut bw = vec![vec![10_000_000_000u64; 8]; 8];
        for &(a, b, l) in lanes {
            bw[a][b] = l * 25_000_000_000;
            bw[b][a] = l * 25_000_000_000;
        }
        bw
    }

    #[test]
    fn nested_sets_keep_the_widest_survivors() {
        let tree = ReductionTree::build(dgx1()).unwrap();
        assert_eq!(tree.eviction.len(), 7);
        for m in 1..8 {
            let big = tree.workers(m + 1);
            let small = tree.workers(m);
            assert_eq!(small.len(), m);
            assert!(small.iter().all(|g| big.contains(g)), "R({m}) not inside R({})", m + 1);
            assert!(small.contains(&0), "the coordinator survives");
        }
        // Two survivors: GPU 0 and a partner over two lanes (the widest pair it has).
        let pair = tree.workers(2);
        assert_eq!(dgx1()[pair[0] as usize][pair[1] as usize], 50_000_000_000);
        // Each step evicted the GPU whose loss keeps the most bandwidth.
        for m in 2..=8 {
            let before = tree.workers(m);
            let kept = tree.aggregate_bandwidth(m - 1);
            for &g in before.iter().skip(1) {
                let alt: Vec<u32> = before.iter().copied().filter(|&x| x != g).collect();
                let alt_sum: u128 = alt
                    .iter()
                    .flat_map(|&a| alt.iter().map(move |&b| (a, b)))
                    .filter(|(a, b)| a != b)
                    .map(|(a, b)| u128::from(dgx1()[a as usize][b as usize]))
                    .sum();
                assert!(kept >= alt_sum);
            }
        }
    }

    #[test]
    fn evicted_fragments_go_to_the_widest_survivor() {
        let tree = ReductionTree::build(dgx1()).unwrap();
        for m in 1..=8 {
            let workers = tree.workers(m);
            for f in 0..8u32 {
                let o = tree.owner(m, f);
                assert!(workers.contains(&o));
                let best = workers
                    .iter()
                    .map(|&w| if w == f { u64::MAX } else { dgx1()[f as usize][w as usize] })
                    .max()
                    .unwrap();
                let got = if o == f { u64::MAX } else { dgx1()[f as usize][o as usize] };
                assert_eq!(got, best);
            }
        }
    }

    #[test]
    fn unreachable_pairs_are_refused() {
        let mut bw = dgx1();
        bw[2][5] = 0;
        let err = ReductionTree::build(bw).unwrap_err();
        assert_eq!(err, TreeError::Unreachable { a: 2, b: 5 });
        assert!(err.to_string().contains("GPU 2 cannot reach GPU 5"));
    }
}
