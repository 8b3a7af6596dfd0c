//! Fuzz generator specs (`--generate`): any text must parse to a spec or give an error that
//! names the spec, never a panic; a spec that parses prints back to text that parses to the
//! same spec, and a small one generates a well-formed graph.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::graph::generate::{GeneratorKind, GeneratorSpec, generate};

/// Vertices and edges a spec asks for, if it is small enough to generate in a fuzz run.
fn small(spec: &GeneratorSpec) -> bool {
    let (n, m) = match &spec.kind {
        GeneratorKind::Rmat(p) => (1u64 << p.scale.min(40), (1u64 << p.scale.min(40)) * u64::from(p.edge_factor)),
        GeneratorKind::ErdosRenyi { n, m } => (u64::from(*n), *m),
        GeneratorKind::ErdosRenyiGnp { n, p } => (u64::from(*n), (f64::from(*n).powi(2) * p) as u64),
        GeneratorKind::Grid2d { w, h, .. } => (u64::from(*w) * u64::from(*h), 2 * u64::from(*w) * u64::from(*h)),
        GeneratorKind::Grid3d { w, h, d, .. } => {
            let n = u64::from(*w) * u64::from(*h) * u64::from(*d);
            (n, 3 * n)
        }
        GeneratorKind::Rgg { n, degree } => (u64::from(*n), (f64::from(*n) * degree) as u64),
    };
    n <= 4096 && m <= 32_768
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match GeneratorSpec::parse(text) {
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("generator spec `"), "{message}");
        }
        Ok(spec) => {
            let printed = spec.to_string();
            let again = GeneratorSpec::parse(&printed).expect("a printed spec parses");
            assert_eq!(again, spec, "`{text}` printed as `{printed}`");
            if small(&spec)
                && let Ok(csr) = generate(&spec)
            {
                assert_eq!(csr.offsets().len(), csr.num_vertices() as usize + 1);
                assert_eq!(*csr.offsets().last().unwrap_or(&0), csr.num_arcs());
            }
        }
    }
});
