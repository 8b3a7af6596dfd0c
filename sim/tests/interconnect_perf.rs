//! Cost of the interconnect models (ignored by default; run in release):
//! `cargo test --release -p switchyard-sim --test interconnect_perf -- --ignored --nocapture`

use std::time::Instant;

use switchyard_sim::interconnect::{
    Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
};
use switchyard_sim::topology::Topology;

fn drain(m: &mut InterconnectModel) -> usize {
    let mut out = Vec::new();
    while let Some(t) = m.next_event_time() {
        m.advance_to(t, &mut out);
    }
    out.len()
}

#[test]
#[ignore = "timing; run in release"]
fn packet_model_256_mib_copy() {
    let t = Topology::bundled("hgx-h200x4").unwrap();
    let f = t.fabric();
    let (a, b) = (f.gpu(0).unwrap(), f.gpu(1).unwrap());
    let route = f.route(a, b).unwrap();
    let units: Vec<u32> =
        route.channels.iter().map(|c| f.channels[c.0 as usize].max_payload_bytes).collect();
    let mut m = InterconnectModel::new(f, Fidelity::Packet);
    let req = TransferRequest { src: a, dst: b, bytes: 256 << 20, packet_bytes: None };
    let start = Instant::now();
    m.submit(0, TransferId(0), req).unwrap();
    assert_eq!(drain(&mut m), 1);
    let s = start.elapsed().as_secs_f64();
    let packets: u64 = m.channel_stats().iter().map(|c| c.packets).sum();
    println!(
        "packet model, hgx-h200x4 gpu0->gpu1 256 MiB ({} hops, max payloads {units:?}): {s:.3} s wall, {packets} link packets",
        route.channels.len()
    );
}

#[test]
#[ignore = "timing; run in release"]
fn flow_model_many_concurrent_flows() {
    let t = Topology::bundled("dgx1-v100").unwrap();
    let f = t.fabric();
    let n = f.gpu_count();
    let mut m = InterconnectModel::new(f, Fidelity::Flow);
    let start = Instant::now();
    let mut id = 0;
    for round in 0..20u64 {
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    let req = TransferRequest {
                        src: f.gpu(a).unwrap(),
                        dst: f.gpu(b).unwrap(),
                        bytes: (1 << 20) + round * 4096,
                        packet_bytes: None,
                    };
                    m.submit(0, TransferId(id), req).unwrap();
                    id += 1;
                }
            }
        }
    }
    assert_eq!(drain(&mut m), id as usize);
    println!(
        "flow model, dgx1-v100, {id} copies submitted at once: {:.3} s wall",
        start.elapsed().as_secs_f64()
    );
}
