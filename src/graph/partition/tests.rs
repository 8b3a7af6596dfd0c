//! Partitioner tests: coverage, balance, metrics against brute force, locality ordering.

use super::*;
use crate::graph::BuildOptions;
use crate::graph::generate::{GeneratorSpec, generate};
use proptest::prelude::*;

fn small_graph() -> impl Strategy<Value = Csr> {
    (1u32..30, any::<bool>()).prop_flat_map(|(n, directed)| {
        prop::collection::vec((0..n, 0..n), 0..80).prop_map(move |edges| {
            Csr::from_edges(n, &edges, None, directed, BuildOptions::default()).unwrap()
        })
    })
}

fn grid(w: u32) -> Csr {
    generate(&GeneratorSpec::parse(&format!("grid2d:w={w},h={w}")).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every vertex gets exactly one owner below `parts`, part sizes add up to n, and the
    /// metrics agree with a brute-force count.
    #[test]
    fn partitions_cover_every_vertex_once(csr in small_graph(), parts in 1u32..6, seed in 0u64..1000) {
        let n = csr.num_vertices();
        for name in PARTITIONER_NAMES {
            let partitioner = partitioner_by_name(name, seed).unwrap();
            let result = partitioner.partition(&csr, parts);
            if parts > n {
                prop_assert!(result.is_err());
                continue;
            }
            let p = result.unwrap();
            prop_assert_eq!(p.owner.len(), n as usize, "{}", name);
            prop_assert!(p.owner.iter().all(|&o| o < parts), "{}", name);
            prop_assert_eq!(p.part_sizes().iter().sum::<u64>(), u64::from(n));
            let m = partition_metrics(&csr, &p).unwrap();
            // Brute force: cut arcs and, per part, the set of remote targets.
            let mut cut_arcs = 0u64;
            let mut border = std::collections::BTreeSet::new();
            for u in 0..n {
                for &v in csr.neighbors(u) {
                    let (pu, pv) = (p.owner[u as usize], p.owner[v as usize]);
                    if pu != pv {
                        cut_arcs += 1;
                        border.insert((pu, v));
                        if !csr.is_directed() {
                            border.insert((pv, u));
                        }
                    }
                }
            }
            let expected_cut = if csr.is_directed() { cut_arcs } else { cut_arcs / 2 };
            prop_assert_eq!(m.edge_cut, expected_cut, "{}", name);
            prop_assert_eq!(m.border_vertices, border.len() as u64, "{}", name);
            prop_assert_eq!(m.per_part.iter().map(|x| x.arcs).sum::<u64>(), csr.num_arcs());
        }
    }

    #[test]
    fn random_balances_exactly_and_seg_is_contiguous(csr in small_graph(), parts in 1u32..6) {
        prop_assume!(parts <= csr.num_vertices());
        let random = RandomPartitioner { seed: 3 }.partition(&csr, parts).unwrap();
        let sizes = random.part_sizes();
        prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        let seg = SegPartitioner.partition(&csr, parts).unwrap();
        prop_assert!(seg.owner.windows(2).all(|w| w[0] <= w[1]));
        prop_assert!(seg.part_sizes().iter().all(|&s| s > 0));
    }
}

#[test]
fn locality_ranks_metis_then_biased_then_random_on_a_grid() {
    // On a 60 x 60 grid, random cuts about 3/4 of the edges; biased random fewer; METIS a
    // few hundred at most (a 4-way split of a grid cuts ~2 * 60 edges at best).
    let g = grid(60);
    let metric = |name: &str| {
        let p = partitioner_by_name(name, 7).unwrap().partition(&g, 4).unwrap();
        partition_metrics(&g, &p).unwrap()
    };
    let (random, biased, metis, seg) =
        (metric("random"), metric("biased-random"), metric("metis"), metric("seg"));
    assert!(random.edge_cut_fraction > 0.7, "{random:?}");
    assert!(biased.border_vertices < random.border_vertices, "{biased:?}");
    assert!(metis.edge_cut < 400, "{metis:?}");
    assert!(metis.vertex_imbalance <= 1.04, "{metis:?}");
    assert!(biased.vertex_imbalance <= 1.06, "{biased:?}");
    // Seg cuts a grid into horizontal bands: 3 cuts of 60 vertical edges, plus 1 horizontal
    // edge wherever a band boundary falls inside a row.
    assert!((180..=183).contains(&seg.edge_cut), "{seg:?}");
}

#[test]
fn auto_is_metis_on_a_road_like_graph_and_random_on_a_hub() {
    let road = grid(30);
    let by = |name: &str, g: &Csr, parts| partitioner_by_name(name, 5).unwrap().partition(g, parts);
    assert_eq!(resolve_auto("auto", &road, 2), "metis");
    assert_eq!(by("auto", &road, 2).unwrap(), by("metis", &road, 2).unwrap());
    // One part needs no METIS run.
    assert_eq!(resolve_auto("auto", &road, 1), "random");
    // A star: one vertex of degree 40 (> AUTO_METIS_MAX_DEGREE).
    let edges: Vec<(u32, u32)> = (1..=40).map(|v| (0, v)).collect();
    let star = Csr::from_edges(41, &edges, None, false, BuildOptions::default()).unwrap();
    assert_eq!(resolve_auto("auto", &star, 2), "random");
    assert_eq!(by("auto", &star, 2).unwrap(), by("random", &star, 2).unwrap());
    // Other names stand for themselves.
    assert_eq!(resolve_auto("seg", &road, 2), "seg");
}

#[test]
fn deterministic_for_a_seed() {
    let g = grid(30);
    for name in PARTITIONER_NAMES {
        let a = partitioner_by_name(name, 11).unwrap().partition(&g, 3).unwrap();
        let b = partitioner_by_name(name, 11).unwrap().partition(&g, 3).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn bad_requests_are_errors() {
    let g = grid(3);
    let err = partitioner_by_name("kl", 1).err().unwrap().to_string();
    assert!(err.contains("random, biased-random, seg, hash, metis, auto"), "{err}");
    assert!(HashPartitioner.partition(&g, 0).is_err());
    assert!(HashPartitioner.partition(&g, 10).unwrap_err().to_string().contains("at most 9"));
    assert!(Partition::new(2, vec![0, 2]).is_err());
    let p = Partition::new(2, vec![0, 1]).unwrap();
    assert!(partition_metrics(&g, &p).is_err());
}
