//! Both interconnect fidelities on every bundled topology: every GPU pair can copy, alone
//! and all at once, no copy beats its floor, and reruns are identical.

use switchyard_sim::fabric::EndpointId;
use switchyard_sim::interconnect::bounds::{
    bottleneck_bytes_per_s, latency_floor_ps, serialization_ps,
};
use switchyard_sim::interconnect::{
    Completion, Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest, plan_legs,
    transfer_floor_ps,
};
use switchyard_sim::topology::{Topology, bundled_names};

fn gpu_pairs(t: &Topology) -> Vec<(EndpointId, EndpointId)> {
    let f = t.fabric();
    let n = f.gpu_count();
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if a != b {
                pairs.push((f.gpu(a).unwrap(), f.gpu(b).unwrap()));
            }
        }
    }
    pairs
}

fn drain(m: &mut InterconnectModel) -> Vec<Completion> {
    let mut out = Vec::new();
    while let Some(t) = m.next_event_time() {
        m.advance_to(t, &mut out);
    }
    out
}

#[test]
fn every_gpu_pair_copies_alone_no_faster_than_its_floor() {
    for name in bundled_names() {
        let t = Topology::bundled(name).unwrap();
        let f = t.fabric();
        for fidelity in [Fidelity::Flow, Fidelity::Packet] {
            let bytes = if fidelity == Fidelity::Flow { 64 << 20 } else { 256 << 10 };
            for (i, &(src, dst)) in gpu_pairs(&t).iter().enumerate() {
                let mut m = InterconnectModel::new(f, fidelity);
                let req = TransferRequest { src, dst, bytes, packet_bytes: None };
                m.submit(0, TransferId(i as u64), req).unwrap();
                let log = drain(&mut m);
                assert_eq!(
                    log.len(),
                    1,
                    "{name} {fidelity}: pair {src:?}->{dst:?} did not complete"
                );
                let floor = transfer_floor_ps(f, src, dst, bytes).unwrap();
                assert!(
                    log[0].time_ps >= floor,
                    "{name} {fidelity}: {src:?}->{dst:?} took {} ps < floor {floor} ps",
                    log[0].time_ps
                );
                // Alone on the machine, the flow model takes each leg (two when staged)
                // in turn at its bottleneck, up to header overhead (at most 100% extra
                // at 32 B payloads) and rounding.
                if fidelity == Fidelity::Flow {
                    let legs = plan_legs(f, 0, src, dst).unwrap();
                    let ceiling: u64 = legs
                        .iter()
                        .map(|l| {
                            latency_floor_ps(f, &l.channels)
                                + 2 * serialization_ps(
                                    bytes,
                                    bottleneck_bytes_per_s(f, &l.channels),
                                )
                                + 1
                        })
                        .sum();
                    assert!(
                        log[0].time_ps <= ceiling,
                        "{name}: {src:?}->{dst:?} took {} ps > {ceiling} ps",
                        log[0].time_ps
                    );
                }
            }
        }
    }
}

#[test]
fn all_to_all_copies_complete_identically_on_rerun() {
    for name in bundled_names() {
        let t = Topology::bundled(name).unwrap();
        let f = t.fabric();
        for fidelity in [Fidelity::Flow, Fidelity::Packet] {
            let bytes = if fidelity == Fidelity::Flow { 16 << 20 } else { 64 << 10 };
            let run = || {
                let mut m = InterconnectModel::new(f, fidelity);
                for (i, &(src, dst)) in gpu_pairs(&t).iter().enumerate() {
                    let req = TransferRequest { src, dst, bytes, packet_bytes: None };
                    m.submit(0, TransferId(i as u64), req).unwrap();
                }
                (drain(&mut m), m.channel_stats().to_vec())
            };
            let (a, stats_a) = run();
            let (b, stats_b) = run();
            assert_eq!(a.len(), gpu_pairs(&t).len(), "{name} {fidelity}");
            assert_eq!(a, b, "{name} {fidelity}: completion logs differ");
            assert_eq!(stats_a, stats_b, "{name} {fidelity}: channel stats differ");
            for c in &a {
                let (src, dst) = gpu_pairs(&t)[c.id.0 as usize];
                assert!(c.time_ps >= transfer_floor_ps(f, src, dst, bytes).unwrap());
            }
        }
    }
}
