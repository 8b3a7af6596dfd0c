//! Fuzz the binary CSR reader: any bytes must give a graph or an error, never a panic.
//! Most random inputs die at the header checksum, so half the runs first repair the header
//! checksum (the fuzzer cannot compute it) to reach the section checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::graph::formats::GraphFormat;
use switchyard::graph::{LoadOptions, load_graph_from_bytes};

fuzz_target!(|data: &[u8]| {
    let options = LoadOptions { format: Some(GraphFormat::Binary), ..Default::default() };
    let _ = load_graph_from_bytes("fuzz", data, &options);
    let _ = load_graph_from_bytes("fuzz", data, &LoadOptions::default());
    let mut fixed = data.to_vec();
    if switchyard::graph::formats::binary::repair_header_checksum(&mut fixed) {
        let _ = load_graph_from_bytes("fuzz", &fixed, &options);
    }
});
