//! Fuzz the MatrixMarket parser: any bytes, read as MatrixMarket (and through detection), must give a
//! graph or an error, never a panic; a graph that loads must write and load back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::graph::formats::GraphFormat;
use switchyard::graph::{LoadOptions, load_graph_from_bytes};

fuzz_target!(|data: &[u8]| {
    let options = LoadOptions { format: Some(GraphFormat::MatrixMarket), ..Default::default() };
    if let Ok(g) = load_graph_from_bytes("fuzz", data, &options) {
        assert!(g.csr.offsets().len() == g.csr.num_vertices() as usize + 1);
        let mut out = Vec::new();
        if switchyard::graph::formats::write_graph(
            &mut out,
            GraphFormat::MatrixMarket,
            &g.csr,
            g.original_ids.as_deref(),
            "fuzz",
        )
        .is_ok()
        {
            let again =
                load_graph_from_bytes("fuzz-again", &out, &options).expect("written graph loads");
            assert_eq!(again.csr.num_arcs(), g.csr.num_arcs());
        }
    }
    let _ = load_graph_from_bytes("fuzz", data, &LoadOptions::default());
});
