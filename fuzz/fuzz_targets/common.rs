//! The body shared by the text-format fuzz targets: any bytes, read as `format` (and through
//! detection), must give a graph or an error, never a panic; a graph that loads must write
//! and load back with the same arc count.

use switchyard::graph::formats::{GraphFormat, write_graph};
use switchyard::graph::{LoadOptions, load_graph_from_bytes};

/// Runs one fuzz input through `format`'s parser, writer and parser again.
pub fn parse_write_parse(data: &[u8], format: GraphFormat) {
    let options = LoadOptions { format: Some(format), ..Default::default() };
    if let Ok(g) = load_graph_from_bytes("fuzz", data, &options) {
        assert!(g.csr.offsets().len() == g.csr.num_vertices() as usize + 1);
        let mut out = Vec::new();
        if write_graph(&mut out, format, &g.csr, g.original_ids.as_deref(), "fuzz").is_ok() {
            let again =
                load_graph_from_bytes("fuzz-again", &out, &options).expect("written graph loads");
            assert_eq!(again.csr.num_arcs(), g.csr.num_arcs());
        }
    }
    let _ = load_graph_from_bytes("fuzz", data, &LoadOptions::default());
}
