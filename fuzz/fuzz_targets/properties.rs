//! Fuzz the LDBC Graphalytics `.properties` parser on its own: any bytes must give the
//! properties or an error that names the file and a line, never a panic; the values it
//! accepts are in their documented ranges.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::graph::GraphError;
use switchyard::graph::formats::ldbc;

fuzz_target!(|data: &[u8]| {
    match ldbc::parse_properties("fuzz.properties", data) {
        Ok(p) => {
            if let Some(d) = p.pr_damping_factor {
                assert!((0.0..=1.0).contains(&d), "damping {d}");
            }
        }
        Err(GraphError::Parse { file, line, .. }) => {
            assert_eq!(file, "fuzz.properties");
            assert!(line >= 1);
        }
        Err(GraphError::Format { file, .. }) => assert_eq!(file, "fuzz.properties"),
        Err(other) => panic!("a properties error of another kind: {other}"),
    }
});
