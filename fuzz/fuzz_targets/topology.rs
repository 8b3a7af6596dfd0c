//! Fuzz the topology loader: any bytes, read as a topology TOML file, must give a machine
//! or an error that names the file and a line, never a panic. A machine that loads must
//! render (matrix, SVG), reroute around each of its links failing, and time a transfer
//! between two of its endpoints on both interconnect fidelities.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeSet;
use switchyard_sim::SimError;
use switchyard_sim::interconnect::{
    Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
};
use switchyard_sim::topology::Topology;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Topology::from_str("fuzz.toml", text) {
        Err(SimError::Topology { file, line, fix, .. }) => {
            assert_eq!(file, "fuzz.toml");
            assert!(line >= 1 || text.is_empty() || line == 0);
            assert!(!fix.is_empty());
        }
        Err(other) => panic!("a topology error of another kind: {other}"),
        Ok(t) => {
            let _ = t.matrix();
            let _ = t.svg();
            for link in 0..t.links.len().min(4) {
                let _ = t.routes_avoiding(&BTreeSet::from([link]));
            }
            let fabric = t.fabric();
            if fabric.endpoints.len() >= 2 && fabric.endpoints.len() <= 64 {
                for fidelity in [Fidelity::Flow, Fidelity::Packet] {
                    let mut net = InterconnectModel::new(fabric, fidelity);
                    let (src, dst) = (
                        switchyard_sim::fabric::EndpointId(0),
                        switchyard_sim::fabric::EndpointId(fabric.endpoints.len() as u32 - 1),
                    );
                    let request = TransferRequest { src, dst, bytes: 4096, packet_bytes: None };
                    if net.submit(0, TransferId(0), request).is_ok() {
                        let mut done = Vec::new();
                        let mut steps = 0;
                        while let Some(time) = net.next_event_time() {
                            net.advance_to(time, &mut done);
                            steps += 1;
                            assert!(steps < 1_000_000, "a 4 KiB transfer never finishes");
                        }
                        assert_eq!(done.len(), 1, "the transfer completes once");
                    }
                }
            }
        }
    }
});
