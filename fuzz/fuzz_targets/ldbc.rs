//! Fuzz the LDBC parsers: the input is split at the first two 0xFF bytes into a properties
//! file, a vertex file and an edge file; any bytes must give a graph or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::graph::BuildOptions;
use switchyard::graph::formats::ldbc;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let properties = parts.next().unwrap_or_default();
    let vertices = parts.next().unwrap_or_default();
    let edges = parts.next().unwrap_or_default();
    let props = ldbc::parse_properties("fuzz.properties", properties).ok();
    let _ = ldbc::parse_parts(
        ("fuzz.v", "fuzz.e"),
        vertices,
        edges,
        props.as_ref(),
        None,
        BuildOptions::default(),
    );
});
