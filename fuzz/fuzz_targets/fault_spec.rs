//! Fuzz fault specs (`--fault`): any text must parse to a fault or give an error that names
//! it and a fix, never a panic; a fault that parses prints back to itself, and resolves
//! against a machine (or is refused with a message) without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use switchyard_sim::fault::FaultSpec;
use switchyard_sim::topology::Topology;

fn machine() -> &'static Topology {
    static MACHINE: OnceLock<Topology> = OnceLock::new();
    MACHINE.get_or_init(|| Topology::bundled("dgx1-v100").expect("bundled machine"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match text.parse::<FaultSpec>() {
        Err(e) => assert!(e.to_string().contains("fix: "), "{e}"),
        Ok(spec) => {
            let printed = spec.to_string();
            let again: FaultSpec = printed.parse().expect("a printed fault parses");
            assert_eq!(again, spec, "`{text}` printed as `{printed}`");
            if let Ok(t) = machine().clone().with_faults(&[spec]) {
                let _ = t.faults().check_gpus(8);
                let _ = t.faults().kernel_time_ps(0, u64::MAX, u64::MAX);
            }
        }
    }
});
