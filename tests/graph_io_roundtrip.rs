//! Random graphs round-trip through every writer/loader pair, and content detection picks
//! the format each writer wrote.

use proptest::prelude::*;
use switchyard::graph::formats::ldbc::{self, LdbcProperties};
use switchyard::graph::formats::metis::{self, MetisVertexData};
use switchyard::graph::formats::{self, GraphFormat, detect_format};
use switchyard::graph::{
    BuildOptions, Csr, EdgeWeights, LoadOptions, LoadedGraph, load_graph_from_bytes,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum W {
    None,
    Int(u32),
    Float(u32),
}

/// The arcs of a graph as a sorted multiset `(source, target, weight)`, in `ids` space.
fn arcs(csr: &Csr, ids: Option<&[u64]>) -> Vec<(u64, u64, W)> {
    let id = |v: u32| ids.map_or(u64::from(v), |ids| ids[v as usize]);
    let mut out = Vec::new();
    for u in 0..csr.num_vertices() {
        for (arc, &v) in csr.arc_range(u).zip(csr.neighbors(u)) {
            let w = match csr.weights() {
                None => W::None,
                Some(EdgeWeights::Int(w)) => W::Int(w[arc]),
                Some(EdgeWeights::Float(w)) => W::Float(w[arc].to_bits()),
            };
            out.push((id(u), id(v), w));
        }
    }
    out.sort();
    out
}

#[derive(Clone, Copy, Debug)]
enum WeightKind {
    None,
    Int,
    Float,
}

fn graph_strategy(allow_float: bool) -> impl Strategy<Value = Csr> {
    let kinds = if allow_float {
        prop_oneof![Just(WeightKind::None), Just(WeightKind::Int), Just(WeightKind::Float)].boxed()
    } else {
        prop_oneof![Just(WeightKind::None), Just(WeightKind::Int)].boxed()
    };
    (1u32..25, any::<bool>(), kinds).prop_flat_map(|(n, directed, kind)| {
        let edges = proptest::collection::vec((0..n, 0..n), 0..60);
        (Just(n), Just(directed), Just(kind), edges, proptest::collection::vec(any::<u32>(), 60))
            .prop_map(|(n, directed, kind, edges, raw)| {
                let m = edges.len();
                let weights = match kind {
                    WeightKind::None => None,
                    WeightKind::Int => {
                        Some(EdgeWeights::Int(raw[..m].iter().map(|r| r % 1000).collect()))
                    }
                    // Finite, non-negative floats of every magnitude, from raw bits.
                    WeightKind::Float => Some(EdgeWeights::Float(
                        raw[..m].iter().map(|&r| f32::from_bits(r & 0x7F7F_FFFF)).collect(),
                    )),
                };
                Csr::from_edges(n, &edges, weights, directed, BuildOptions::default()).unwrap()
            })
    })
}

/// The undirected graph with an edge for every arc of `csr` (weights kept).
fn undirected(csr: &Csr) -> Csr {
    if !csr.is_directed() {
        return csr.clone();
    }
    let edges: Vec<(u32, u32)> = (0..csr.num_vertices())
        .flat_map(|u| csr.neighbors(u).iter().map(move |&v| (u, v)))
        .collect();
    Csr::from_edges(
        csr.num_vertices(),
        &edges,
        csr.weights().cloned(),
        false,
        BuildOptions::default(),
    )
    .unwrap()
}

fn write(format: GraphFormat, csr: &Csr, ids: Option<&[u64]>) -> Vec<u8> {
    let mut out = Vec::new();
    formats::write_graph(&mut out, format, csr, ids, "g").unwrap();
    out
}

fn load(bytes: &[u8], format: Option<GraphFormat>) -> LoadedGraph {
    load_graph_from_bytes("g", bytes, &LoadOptions { format, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}"))
}

fn sorted_ids() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::btree_set(any::<u64>(), 25).prop_map(|s| s.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matrix_market_round_trip(csr in graph_strategy(true)) {
        let bytes = write(GraphFormat::MatrixMarket, &csr, None);
        prop_assert_eq!(detect_format(&bytes), Some(GraphFormat::MatrixMarket));
        let g = load(&bytes, None);
        prop_assert_eq!(g.csr.num_vertices(), csr.num_vertices());
        prop_assert_eq!(g.csr.is_directed(), csr.is_directed());
        prop_assert_eq!(arcs(&g.csr, None), arcs(&csr, None));
    }

    #[test]
    fn snap_round_trip(csr in graph_strategy(true), ids in sorted_ids()) {
        let bytes = write(GraphFormat::Snap, &csr, None);
        prop_assert_eq!(detect_format(&bytes), Some(GraphFormat::Snap));
        let g = load(&bytes, None);
        prop_assert_eq!(g.csr.num_vertices(), csr.num_vertices());
        prop_assert_eq!(g.csr.is_directed(), csr.is_directed());
        prop_assert_eq!(arcs(&g.csr, None), arcs(&csr, None));
        // Sparse file ids come back through the mapping (isolated vertices are not in an
        // edge list, so only the arcs are compared).
        let ids = &ids[..csr.num_vertices() as usize];
        let bytes = write(GraphFormat::Snap, &csr, Some(ids));
        let g = load(&bytes, None);
        prop_assert_eq!(arcs(&g.csr, g.original_ids.as_deref()), arcs(&csr, Some(ids)));
    }

    #[test]
    fn dimacs_round_trip(csr in graph_strategy(false)) {
        let bytes = write(GraphFormat::Dimacs, &csr, None);
        prop_assert_eq!(detect_format(&bytes), Some(GraphFormat::Dimacs));
        let g = load(&bytes, None);
        prop_assert!(g.csr.is_directed());
        prop_assert_eq!(g.csr.num_vertices(), csr.num_vertices());
        let unit = |a: Vec<(u64, u64, W)>| a.into_iter().map(|(u, v, w)| (u, v, if w == W::None { W::Int(1) } else { w })).collect::<Vec<_>>();
        prop_assert_eq!(arcs(&g.csr, None), unit(arcs(&csr, None)));
    }

    #[test]
    fn metis_round_trip(csr in graph_strategy(false), vertex_weights in proptest::collection::vec(0u64..100, 50)) {
        let csr = undirected(&csr);
        let has_loop = (0..csr.num_vertices()).any(|v| csr.neighbors(v).contains(&v));
        let mut bytes = Vec::new();
        let n = csr.num_vertices() as usize;
        let data = MetisVertexData { sizes: Some(vertex_weights[..n].to_vec()), weights: Some(vertex_weights[..2 * n].to_vec()), ncon: 2 };
        let written = metis::write(&mut bytes, &csr, Some(&data), "g");
        if has_loop {
            prop_assert!(written.is_err());
            return Ok(());
        }
        written.unwrap();
        prop_assert_eq!(detect_format(&bytes), Some(GraphFormat::Metis));
        let g = load(&bytes, None);
        prop_assert!(!g.csr.is_directed());
        prop_assert_eq!(g.csr.num_vertices(), csr.num_vertices());
        prop_assert_eq!(arcs(&g.csr, None), arcs(&csr, None));
        prop_assert_eq!(g.metis, Some(data));
    }

    #[test]
    fn ldbc_round_trip(csr in graph_strategy(true), ids in sorted_ids(), sparse in any::<bool>()) {
        let ids = sparse.then(|| ids[..csr.num_vertices() as usize].to_vec());
        let props = LdbcProperties { name: "g".into(), bfs_source_vertex: Some(3), pr_damping_factor: Some(0.85), pr_num_iterations: Some(10), ..Default::default() };
        let (mut v, mut e, mut p) = (Vec::new(), Vec::new(), Vec::new());
        ldbc::write(&mut v, &mut e, &mut p, &csr, ids.as_deref(), &props).unwrap();
        prop_assert_eq!(detect_format(&p), Some(GraphFormat::Ldbc));
        let parsed = ldbc::parse_properties("g.properties", &p).unwrap();
        prop_assert_eq!(parsed.directed, Some(csr.is_directed()));
        prop_assert_eq!(parsed.pr_damping_factor, Some(0.85));
        prop_assert_eq!(parsed.pr_num_iterations, Some(10));
        prop_assert_eq!(parsed.bfs_source_vertex, Some(3));
        let (g, back) = ldbc::parse_parts(("g.v", "g.e"), &v, &e, Some(&parsed), None, BuildOptions::default()).unwrap();
        prop_assert_eq!(g.num_vertices(), csr.num_vertices());
        prop_assert_eq!(g.is_directed(), csr.is_directed());
        prop_assert_eq!(&back, &ids);
        prop_assert_eq!(arcs(&g, back.as_deref()), arcs(&csr, ids.as_deref()));
    }

    #[test]
    fn binary_round_trip_is_exact(csr in graph_strategy(true), ids in sorted_ids(), with_ids in any::<bool>()) {
        let ids = with_ids.then(|| ids[..csr.num_vertices() as usize].to_vec());
        let bytes = write(GraphFormat::Binary, &csr, ids.as_deref());
        prop_assert_eq!(detect_format(&bytes), Some(GraphFormat::Binary));
        let g = load(&bytes, Some(GraphFormat::Binary));
        prop_assert_eq!(&g.csr, &csr);
        prop_assert_eq!(g.original_ids, ids);
    }

    #[test]
    fn gzip_is_transparent(csr in graph_strategy(true)) {
        use std::io::Write;
        let bytes = write(GraphFormat::MatrixMarket, &csr, None);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&bytes).unwrap();
        let g = load(&enc.finish().unwrap(), None);
        prop_assert_eq!(arcs(&g.csr, None), arcs(&csr, None));
    }

    #[test]
    fn parsers_never_panic_on_garbage(bytes in proptest::collection::vec(any::<u8>(), 0..300), format in 0usize..6) {
        let format = GraphFormat::ALL[format];
        let _ = load_graph_from_bytes("junk", &bytes, &LoadOptions { format: Some(format), ..Default::default() });
        let _ = load_graph_from_bytes("junk", &bytes, &LoadOptions::default());
    }
}

#[test]
fn file_level_binary_and_ldbc_paths_load() {
    let dir = tempfile::tempdir().unwrap();
    let csr = Csr::from_edges(
        4,
        &[(0, 1), (1, 2), (3, 3)],
        Some(EdgeWeights::Float(vec![0.5, 1.5, 2.0])),
        false,
        BuildOptions::default(),
    )
    .unwrap();
    let bin = dir.path().join("g.gr");
    std::fs::write(&bin, write(GraphFormat::Binary, &csr, None)).unwrap();
    let options = LoadOptions { format: Some(GraphFormat::Binary), ..Default::default() };
    assert_eq!(switchyard::graph::load_graph(&bin, &options).unwrap().csr, csr);
    assert!(switchyard::graph::load_graph(&bin, &LoadOptions::default()).is_err());
    let base = dir.path().join("h");
    let (mut v, mut e, mut p) = (Vec::new(), Vec::new(), Vec::new());
    let props = LdbcProperties { name: "h".into(), ..Default::default() };
    ldbc::write(&mut v, &mut e, &mut p, &csr, Some(&[10, 20, 30, 40]), &props).unwrap();
    std::fs::write(base.with_extension("v"), v).unwrap();
    std::fs::write(base.with_extension("e"), e).unwrap();
    std::fs::write(base.with_extension("properties"), p).unwrap();
    // The properties file is recognised by its content; the `.v` and `.e` files look like
    // edge lists, so they need the format named.
    for (entry, format) in
        [("properties", None), ("e", Some(GraphFormat::Ldbc)), ("v", Some(GraphFormat::Ldbc))]
    {
        let options = LoadOptions { format, ..Default::default() };
        let g = switchyard::graph::load_graph(&base.with_extension(entry), &options).unwrap();
        assert_eq!(g.format, GraphFormat::Ldbc);
        assert_eq!(arcs(&g.csr, g.original_ids.as_deref()), arcs(&csr, Some(&[10, 20, 30, 40])));
        assert_eq!(g.ldbc.as_ref().map(|p| p.name.as_str()), Some("h"));
    }
    let g =
        switchyard::graph::load_graph(&base.with_extension("e"), &LoadOptions::default()).unwrap();
    assert_eq!(g.format, GraphFormat::Snap);
}

#[test]
fn results_come_out_in_the_file_ids() {
    use switchyard::graph::{ResultValue, write_vertex_values};
    let snap = load(b"100 7\n7 300\n", None);
    let dimacs = load(b"p sp 3 1\na 1 3 5\n", None);
    let mut out = Vec::new();
    let levels = [Some(0), None, Some(1)].map(ResultValue::level);
    write_vertex_values(&mut out, "bfs", Some(&snap.file_ids()), levels).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "7 0\n100 9223372036854775807\n300 1\n");
    let mut out = Vec::new();
    let distances = [Some(0.0), None, Some(5.0)].map(ResultValue::distance);
    write_vertex_values(&mut out, "sssp", Some(&dimacs.file_ids()), distances).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "1 0.000000000000000e+00\n2 Infinity\n3 5.000000000000000e+00\n"
    );
}
