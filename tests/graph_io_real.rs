//! The real graphs in `tests/data/graphs/` load as they are, with the counts their README
//! states, and each is detected as the right format.

use std::path::PathBuf;
use switchyard::graph::{Csr, GraphFormat, LoadOptions, load_graph};

/// A real graph of the test data, in the repository (`tests/data/graphs/`, sources and
/// terms in the README there).
fn graph_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs").join(name)
}

fn self_loops(csr: &Csr) -> u64 {
    (0..csr.num_vertices())
        .map(|v| csr.neighbors(v).iter().filter(|&&t| t == v).count() as u64)
        .sum()
}

/// Undirected edges stored in `csr` (each stored as two arcs, a self-loop as one).
fn undirected_edges(csr: &Csr) -> u64 {
    assert!(!csr.is_directed());
    (csr.num_arcs() + self_loops(csr)) / 2
}

fn check(name: &str, format: GraphFormat, vertices: u32, edges: u64, directed: bool) {
    let g =
        load_graph(&graph_path(name), &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.format, format, "{name}: detected format");
    assert_eq!(g.csr.num_vertices(), vertices, "{name}: vertices");
    assert_eq!(g.csr.is_directed(), directed, "{name}: directedness");
    let found = if directed { g.csr.num_arcs() } else { undirected_edges(&g.csr) };
    assert_eq!(found, edges, "{name}: edges");
}

#[test]
fn luxembourg_osm() {
    check("luxembourg_osm.mtx", GraphFormat::MatrixMarket, 114_599, 119_666, false);
}

#[test]
fn delaunay_n16() {
    check("delaunay_n16.mtx", GraphFormat::MatrixMarket, 65_536, 196_575, false);
}

#[test]
fn chesapeake() {
    check("chesapeake.mtx", GraphFormat::MatrixMarket, 39, 170, false);
}

#[test]
fn power_grid_metis() {
    check("power.graph", GraphFormat::Metis, 4_941, 6_594, false);
}

#[test]
fn wiki_vote_sparse_ids_are_remapped_and_kept() {
    check("wiki-Vote.txt", GraphFormat::Snap, 7_115, 103_689, true);
    let g = load_graph(&graph_path("wiki-Vote.txt"), &LoadOptions::default()).unwrap();
    let ids = g.original_ids.as_ref().expect("wiki-Vote ids are not contiguous");
    assert_eq!(ids.len(), 7_115);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "dense ids follow ascending file ids");
    // The file's first edge is `30 1412`: find it through the mapping.
    let d30 = ids.binary_search(&30).unwrap() as u32;
    let d1412 = ids.binary_search(&1412).unwrap() as u32;
    assert!(g.csr.neighbors(d30).contains(&d1412));
}

#[test]
fn facebook_is_an_edge_list_loaded_directed_unless_told() {
    check("facebook_combined.txt", GraphFormat::Snap, 4_039, 88_234, true);
    let options = LoadOptions { directed: Some(false), ..Default::default() };
    let g = load_graph(&graph_path("facebook_combined.txt"), &options).unwrap();
    assert_eq!(undirected_edges(&g.csr), 88_234);
    assert!(g.original_ids.is_none(), "0-based contiguous ids are kept as they are");
}

#[test]
fn cnr_2000_gzip() {
    check("cnr-2000.txt.gz", GraphFormat::Snap, 325_557, 3_216_152, true);
}
