//! References against independent brute-force implementations on small random graphs.

use super::*;
use crate::graph::{BuildOptions, EdgeWeights};
use proptest::prelude::*;

/// Small random graph: (n, edges, integer weights 1..=64, directed).
fn small_graph() -> impl Strategy<Value = Csr> {
    (1u32..12, any::<bool>()).prop_flat_map(|(n, directed)| {
        prop::collection::vec((0..n, 0..n, 1u32..=64), 0..40).prop_map(move |edges| {
            let pairs: Vec<(u32, u32)> = edges.iter().map(|&(u, v, _)| (u, v)).collect();
            let weights = EdgeWeights::Int(edges.iter().map(|e| e.2).collect());
            Csr::from_edges(n, &pairs, Some(weights), directed, BuildOptions::default())
                .expect("valid small graph")
        })
    })
}

fn arcs(csr: &Csr) -> Vec<(usize, usize, u64)> {
    let mut out = Vec::new();
    for u in 0..csr.num_vertices() {
        for a in csr.arc_range(u) {
            let w = csr.weights().map_or(1.0, |w| w.get_f64(a)) as u64;
            out.push((u as usize, csr.targets()[a] as usize, w));
        }
    }
    out
}

/// Bellman-Ford: relax every arc n times.
fn brute_distances(csr: &Csr, source: usize, unit: bool) -> Vec<u64> {
    let n = csr.num_vertices() as usize;
    let mut d = vec![u64::MAX; n];
    d[source] = 0;
    for _ in 0..n {
        for &(u, v, w) in &arcs(csr) {
            let w = if unit { 1 } else { w };
            if d[u] != u64::MAX && d[u] + w < d[v] {
                d[v] = d[u] + w;
            }
        }
    }
    d
}

/// Minimum-label propagation over arcs in both directions until nothing changes.
fn brute_components(csr: &Csr) -> Vec<u32> {
    let mut label: Vec<u32> = (0..csr.num_vertices()).collect();
    loop {
        let mut changed = false;
        for &(u, v, _) in &arcs(csr) {
            let m = label[u].min(label[v]);
            if label[u] != m || label[v] != m {
                label[u] = m;
                label[v] = m;
                changed = true;
            }
        }
        if !changed {
            return label;
        }
    }
}

/// LDBC PageRank fixed point by Gaussian elimination on the dense system
/// `x_v - d sum_{u->v} x_u/out(u) - (d/n) sum_{dangling w} x_w = (1-d)/n`.
fn brute_pagerank_fixed_point(csr: &Csr, d: f64) -> Vec<f64> {
    let n = csr.num_vertices() as usize;
    let mut a = vec![vec![0.0f64; n + 1]; n];
    for (v, row) in a.iter_mut().enumerate() {
        row[v] += 1.0;
        row[n] = (1.0 - d) / n as f64;
    }
    for u in 0..n {
        let deg = csr.degree(u as u32);
        if deg == 0 {
            for row in a.iter_mut() {
                row[u] -= d / n as f64;
            }
        } else {
            for &v in csr.neighbors(u as u32) {
                a[v as usize][u] -= d / deg as f64;
            }
        }
    }
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .expect("non-empty");
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (row, values) in a.iter_mut().enumerate() {
            if row != col {
                let f = values[col] / pivot_row[col];
                for (x, p) in values.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..n).map(|i| a[i][n] / a[i][i]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bfs_matches_brute_force(csr in small_graph(), s in 0u32..12) {
        let s = s % csr.num_vertices();
        let levels = bfs_levels(&csr, s).unwrap();
        let brute: Vec<u32> = brute_distances(&csr, s as usize, true)
            .iter()
            .map(|&d| if d == u64::MAX { BFS_UNREACHED } else { d as u32 })
            .collect();
        let report = compare_exact("bfs levels", &brute, &levels);
        prop_assert!(report.is_ok(), "{}", report);
    }

    #[test]
    fn sssp_matches_brute_force(csr in small_graph(), s in 0u32..12) {
        let s = s % csr.num_vertices();
        let brute = brute_distances(&csr, s as usize, false);
        let int = sssp_distances_int(&csr, s).unwrap();
        let report = compare_exact("sssp", &brute, &int);
        prop_assert!(report.is_ok(), "{}", report);
        let float = sssp_distances_float(&csr, s).unwrap();
        let brute_f: Vec<f64> =
            brute.iter().map(|&d| if d == u64::MAX { f64::INFINITY } else { d as f64 }).collect();
        let report = compare_float("sssp", &brute_f, &float, FloatTolerance { abs: 0.0, rel: 0.0 });
        prop_assert!(report.is_ok(), "{}", report);
    }

    #[test]
    fn wcc_matches_brute_force(csr in small_graph()) {
        let labels = weakly_connected_components(&csr);
        let brute = brute_components(&csr);
        // Both use the smallest id as label, so they agree as values too; the comparison
        // used by runtimes is the partition one.
        prop_assert_eq!(&labels, &brute);
        prop_assert!(compare_components(&brute, &labels).is_ok());
        prop_assert_eq!(component_count(&labels), component_count(&brute));
    }

    /// (a) with 200 iterations reaches the fixed point (error <= 0.85^200 ~ 8e-15) and (b)
    /// with tolerance 1e-12 is within 2e-12/0.15^2 ~ 1e-10 in L1 of it; 1e-9 absolute
    /// per vertex leaves room for rounding.
    #[test]
    fn pagerank_definitions_agree_with_fixed_point(csr in small_graph()) {
        let exact = brute_pagerank_fixed_point(&csr, 0.85);
        let ldbc = pagerank_ldbc(&csr, 0.85, 200).unwrap();
        let tol = FloatTolerance { abs: 1e-9, rel: 0.0 };
        let report = compare_float("ldbc pagerank", &exact, &ldbc, tol);
        prop_assert!(report.is_ok(), "{}", report);
        let residual = pagerank_residual(&csr, 0.85, 1e-12).unwrap();
        let report = compare_float("residual pagerank", &ldbc, &residual.ranks, tol);
        prop_assert!(report.is_ok(), "{}", report);
        let sum: f64 = ldbc.iter().sum();
        prop_assert!((sum - 1.0).abs() < 1e-9);
    }

    #[test]
    fn coloring_check_matches_pairwise_check(csr in small_graph(), seed_colors in prop::collection::vec(0u32..3, 12)) {
        let greedy = greedy_coloring(&csr);
        let report = check_coloring(&csr, &greedy).unwrap();
        prop_assert!(report.valid, "{:?}", report);
        let max_degree = (0..csr.num_vertices()).map(|v| csr.degree(v)).max().unwrap_or(0);
        // Directed graphs: a vertex's in- and out-neighbours both constrain it.
        prop_assert!(report.colors_used <= 2 * max_degree + 1 || !csr.is_directed() && report.colors_used <= max_degree + 1);
        let colors = &seed_colors[..csr.num_vertices() as usize];
        let brute_conflicts = arcs(&csr)
            .iter()
            .filter(|&&(u, v, _)| u != v && colors[u] == colors[v])
            .count() as u64;
        let report = check_coloring(&csr, colors).unwrap();
        prop_assert_eq!(report.conflicts, brute_conflicts);
        prop_assert_eq!(report.valid, brute_conflicts == 0);
    }
}

#[test]
fn residual_pagerank_converges_on_a_larger_graph() {
    // A directed graph with dangling vertices: 0->1, 1->2, 2->0, 2->3, 4->3 (3 dangling).
    let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (4, 3)];
    let csr = Csr::from_edges(5, &edges, None, true, BuildOptions::default()).unwrap();
    let ldbc = pagerank_ldbc(&csr, 0.85, 300).unwrap();
    let loose = pagerank_residual(&csr, 0.85, 1e-3).unwrap();
    let tight = pagerank_residual(&csr, 0.85, 1e-12).unwrap();
    let err = |r: &[f64]| ldbc.iter().zip(r).map(|(a, b)| (a - b).abs()).sum::<f64>();
    assert!(err(&tight.ranks) < 1e-10, "tight error {}", err(&tight.ranks));
    assert!(err(&tight.ranks) < err(&loose.ranks));
    assert!(tight.pushes > loose.pushes);
}

#[test]
fn bad_inputs_are_errors() {
    let csr = Csr::from_edges(3, &[(0, 1)], None, false, BuildOptions::default()).unwrap();
    assert!(matches!(bfs_levels(&csr, 3), Err(GraphError::VertexOutOfRange { .. })));
    assert!(matches!(sssp_distances_int(&csr, 0), Err(GraphError::WrongWeights { .. })));
    assert!(pagerank_ldbc(&csr, 1.5, 10).is_err());
    assert!(pagerank_residual(&csr, 0.85, 0.0).is_err());
    assert!(check_coloring(&csr, &[0, 1]).is_err());
    let float = Csr::from_edges(
        2,
        &[(0, 1)],
        Some(EdgeWeights::Float(vec![-1.0])),
        true,
        BuildOptions::default(),
    )
    .unwrap();
    let err = sssp_distances_float(&float, 0).unwrap_err().to_string();
    assert!(err.contains("non-negative"), "{err}");
}

/// The `recip` graph of `tests/data/ldbc` in dense ids (10, 20, 30, 40, 50 -> 0..5).
fn recip() -> Csr {
    let arcs = [(0, 1), (0, 2), (1, 2), (2, 0), (2, 3), (3, 0), (4, 3)];
    Csr::from_edges(5, &arcs, None, true, BuildOptions::default()).expect("recip")
}

#[test]
fn cdlp_counts_a_reciprocal_neighbour_twice_and_breaks_ties_by_the_smallest_label() {
    // Worked by hand in tests/ldbc_files.rs: one iteration gives 10->30, 20->10, 30->10,
    // 40->10, 50->40; the second makes every vertex 10, which is then a fixed point.
    assert_eq!(cdlp_labels(&recip(), 1), vec![2, 0, 0, 0, 3]);
    assert_eq!(cdlp_labels(&recip(), 2), vec![0; 5]);
    assert_eq!(cdlp_labels(&recip(), 9), vec![0; 5]);
    // No neighbours: the label stays.
    let lone = Csr::from_edges(3, &[(0, 1)], None, true, BuildOptions::default()).unwrap();
    assert_eq!(cdlp_labels(&lone, 1), vec![1, 0, 2]);
}

#[test]
fn lcc_counts_arcs_among_in_and_out_neighbours() {
    let third = 1.0 / 3.0;
    assert_eq!(local_clustering_coefficients(&recip()), vec![third, 1.0, third, third, 0.0]);
    // Undirected triangle with a pendant: each edge is two arcs.
    let g =
        Csr::from_edges(4, &[(0, 1), (1, 2), (0, 2), (2, 3)], None, false, BuildOptions::default())
            .unwrap();
    assert_eq!(local_clustering_coefficients(&g), vec![1.0, 1.0, third, 0.0]);
}
