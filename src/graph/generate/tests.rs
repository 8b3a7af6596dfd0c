//! Generator tests: determinism across seeds and thread counts, sizes, spec parsing.

use super::*;
use crate::graph::summary::summarize;

fn build_graph(spec: &str) -> Csr {
    generate(&GeneratorSpec::parse(spec).unwrap()).unwrap()
}

fn on_threads(threads: usize, spec: &str) -> Csr {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| build_graph(spec))
}

const SPECS: &[&str] = &[
    "rmat:scale=12,ef=8,seed=3,weights=1..64",
    "rmat:scale=11,ef=4,noise=0.1,directed=true,seed=3",
    "er:n=3000,m=20000,seed=5,weights=64",
    "er:n=3000,p=0.004,directed=true,seed=5",
    "grid2d:w=300,h=250,drop=0.2,seed=7",
    "grid3d:w=20,h=30,d=15,drop=0.1,seed=7,weights=1..64",
    "rgg:n=70000,degree=3,seed=9",
];

#[test]
fn same_seed_same_graph_on_one_and_two_threads() {
    for spec in SPECS {
        let one = on_threads(1, spec);
        let two = on_threads(2, spec);
        assert!(one == two, "{spec}: 1 and 2 threads differ");
        let reseeded = spec.replace("seed=", "seed=1");
        assert!(build_graph(&reseeded) != one, "{spec}: another seed gives the same graph");
    }
}

#[test]
fn rmat_sizes_and_skew() {
    let csr = build_graph("rmat:scale=12,ef=8,seed=3");
    let s = summarize(&csr);
    assert_eq!(s.vertices, 4096);
    // 8 * 4096 generated edges; undirected: two arcs per edge, one per self-loop.
    assert_eq!(s.arcs, 2 * 8 * 4096 - s.self_loops);
    // Scale-free: the largest degree is far above the mean, and the Gini is high.
    assert!(s.degree_max as f64 > 20.0 * s.degree_mean, "{s:?}");
    assert!(s.degree_gini > 0.5, "{s:?}");
    let directed = build_graph("rmat:scale=10,ef=4,directed=true");
    assert_eq!(directed.num_arcs(), 4 * 1024);
    assert!(directed.is_directed());
    let clean = summarize(&build_graph("rmat:scale=12,ef=8,seed=3,dedup=true"));
    assert_eq!((clean.self_loops, clean.duplicate_arcs), (0, 0));
    assert!(clean.arcs < s.arcs - s.duplicate_arcs);
}

#[test]
fn rmat_quadrant_probabilities_reach_the_edges() {
    // With permute=false, a = 1 puts every edge at (0, 0); d = 1 at (n-1, n-1).
    let top = build_graph("rmat:scale=5,ef=2,a=1,b=0,c=0,permute=false");
    assert_eq!(top.neighbors(0).len() as u64, top.num_arcs());
    let bottom = build_graph("rmat:scale=5,ef=2,a=0,b=0,c=0,permute=false");
    assert_eq!(bottom.degree(31), bottom.num_arcs());
}

#[test]
fn grid_edge_counts() {
    // A w x h grid has w(h-1) + h(w-1) edges; 3D adds the third direction.
    let g = build_graph("grid2d:w=7,h=5");
    assert_eq!(g.num_arcs(), 2 * (7 * 4 + 5 * 6));
    let g3 = build_graph("grid3d:w=4,h=3,d=2");
    assert_eq!(g3.num_arcs(), 2 * (3 * 3 * 2 + 4 * 2 * 2 + 4 * 3));
    assert_eq!(build_graph("grid2d:w=7,h=5,drop=1").num_arcs(), 0);
    let dropped = build_graph("grid2d:w=200,h=200,drop=0.25");
    let full = 2.0 * (2.0 * 200.0 * 199.0);
    let kept = dropped.num_arcs() as f64 / full;
    assert!((kept - 0.75).abs() < 0.01, "kept fraction {kept}");
}

#[test]
fn er_has_about_m_edges_without_loops() {
    let s = summarize(&build_graph("er:n=2000,m=10000,seed=2"));
    assert_eq!(s.self_loops, 0);
    assert_eq!(s.duplicate_arcs, 0);
    // Expected duplicates ~ m^2 / n^2 = 25 of 10000.
    assert!(s.edges <= 10_000 && s.edges > 9_900, "{s:?}");
}

#[test]
fn gnp_edge_counts() {
    // p = 1 gives the complete graph; p = 0 none.
    assert_eq!(build_graph("er:n=30,p=1").num_arcs(), 30 * 29);
    assert_eq!(build_graph("er:n=30,p=1,directed=true").num_arcs(), 30 * 29);
    assert_eq!(build_graph("er:n=30,p=0").num_arcs(), 0);
    // Undirected: expected p n(n-1)/2 = 0.01 * 4000 * 3999 / 2 = 79,980 edges, standard
    // deviation ~ 281; 5 sigma.
    let s = summarize(&build_graph("er:n=4000,p=0.01,seed=3"));
    assert!((s.edges as f64 - 79_980.0).abs() < 1_410.0, "{s:?}");
    assert_eq!((s.self_loops, s.duplicate_arcs), (0, 0));
    let msg = GeneratorSpec::parse("er:n=5,m=3,p=0.1").unwrap_err().to_string();
    assert!(msg.contains("exactly one of m"), "{msg}");
}

#[test]
fn rgg_is_road_like() {
    let s = summarize(&build_graph("rgg:n=20000,degree=2.5,seed=4"));
    assert!((s.degree_mean - 2.5).abs() < 0.05, "{s:?}");
    assert!(s.degree_max <= 10, "{s:?}");
    // Nearly connected, and far wider than a random graph (ER diameter ~ ln n ~ 10).
    assert!(s.largest_component_vertices as f64 > 0.95 * 20000.0, "{s:?}");
    assert!(s.diameter_approx > 100, "{s:?}");
    assert_eq!((s.self_loops, s.duplicate_arcs), (0, 0));
}

#[test]
fn weights_in_range_and_symmetric() {
    let csr = build_graph("grid2d:w=30,h=30,seed=2,weights=1..64");
    let Some(EdgeWeights::Int(w)) = csr.weights() else { panic!("no weights") };
    assert!(w.iter().all(|&x| (1..=64).contains(&x)));
    assert!(w.contains(&1) && w.contains(&64));
    let loaded = build_graph("grid2d:w=30,h=30,seed=2");
    for csr in [csr.clone(), with_uniform_weights(&loaded, 1, 64, 5).unwrap()] {
        let Some(EdgeWeights::Int(w)) = csr.weights() else { panic!("no weights") };
        for u in 0..csr.num_vertices() {
            for a in csr.arc_range(u) {
                let v = csr.targets()[a];
                let back = csr.arc_range(v).find(|&b| csr.targets()[b] == u).unwrap();
                assert_eq!(w[a], w[back], "arc {u}->{v}");
            }
        }
    }
    assert!(with_uniform_weights(&loaded, 0, 64, 5).is_err());
}

#[test]
fn spec_errors_name_the_problem() {
    let msg = |s: &str| GeneratorSpec::parse(s).unwrap_err().to_string();
    assert!(msg("rmat:scale=10,foo=1").contains("valid keys are scale, ef, a, b, c"));
    assert!(msg("kron:scale=3").contains("use one of rmat, er, grid2d, grid3d, rgg"));
    assert!(msg("rmat:ef=3").contains("missing key `scale`"));
    assert!(msg("rmat:scale=x").contains("scale=x is not valid"));
    assert!(msg("rmat:scale=40").contains("1..=31"));
    assert!(msg("rmat:scale=4,a=0.6,b=0.3,c=0.3").contains("a + b + c <= 1"));
    assert!(msg("grid2d:w=3,h=3,drop=2").contains("[0, 1]"));
    assert!(msg("grid2d:w=3,h=3,directed=true").contains("unknown key `directed` for grid2d"));
    assert!(msg("er:n=5,m=3,n=6").contains("given twice"));
    assert!(msg("er:n=5,m=3,weights=0..3").contains("LO..HI"));
    assert!(msg("rgg:n=5,degree=-1").contains("out of range"));
}

#[test]
fn spec_display_round_trips() {
    for spec in SPECS {
        let parsed = GeneratorSpec::parse(spec).unwrap();
        let again = GeneratorSpec::parse(&parsed.to_string()).unwrap();
        assert_eq!(parsed, again, "{spec}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Any string gives a spec or an error, never a panic; a parsed spec prints to a string
    /// that parses back to itself.
    #[test]
    fn spec_parser_never_panics(
        name in "(rmat|er|grid2d|grid3d|rgg|x)",
        pairs in proptest::collection::vec(
            ("(scale|ef|a|b|c|d|noise|permute|dedup|directed|n|m|p|w|h|drop|degree|seed|weights|)",
             "(-?[0-9]{0,3}(\\.[0-9]{0,2})?|true|false|1\\.\\.64|0\\.\\.1|x|)"),
            0..6,
        ),
    ) {
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let text = format!("{name}:{}", body.join(","));
        if let Ok(spec) = GeneratorSpec::parse(&text) {
            let again = GeneratorSpec::parse(&spec.to_string()).unwrap();
            proptest::prop_assert_eq!(spec, again);
        }
    }
}
