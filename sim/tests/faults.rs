//! Injected link faults in the interconnect models: degraded links slow transfers from the
//! fault's time on, failed links reroute transfers (in flight or later) where another route
//! exists and fail them, naming the link, where none does. Expected times are computed by
//! hand from the channel parameters.

use switchyard_sim::SimError;
use switchyard_sim::fabric::EndpointId;
use switchyard_sim::fault::FaultSpec;
use switchyard_sim::interconnect::{
    Completion, Fidelity, Interconnect, InterconnectModel, TransferFailure, TransferId,
    TransferRequest,
};
use switchyard_sim::topology::Topology;

/// Two GPUs joined by one NVLink (10 GB/s, 1 us, no headers) and each on the socket by PCIe
/// (1 GB/s, 1 us): the NVLink is the route between them, PCIe through the socket the other.
const TWO_GPUS: &str = r#"name = "two"

[link_type.nv]
kind = "nvlink"
bandwidth_gb_s = 10.0
latency_ns = 1000.0
max_payload_bytes = 4096
header_bytes = 0

[link_type.pci]
kind = "pcie"
bandwidth_gb_s = 1.0
latency_ns = 1000.0
max_payload_bytes = 4096
header_bytes = 0

[[socket]]
name = "cpu0"
[[gpu]]
name = "gpu0"
model = "K40"
[[gpu]]
name = "gpu1"
model = "K40"

[[link]]
a = "gpu0"
b = "gpu1"
type = "nv"
lanes = 1
[[link]]
a = "cpu0"
b = "gpu0"
type = "pci"
lanes = 1
[[link]]
a = "cpu0"
b = "gpu1"
type = "pci"
lanes = 1
"#;

fn machine(faults: &[&str]) -> Topology {
    let specs: Vec<FaultSpec> = faults.iter().map(|f| f.parse().unwrap()).collect();
    Topology::from_str("two.toml", TWO_GPUS).unwrap().with_faults(&specs).unwrap()
}

fn model(topology: &Topology, fidelity: Fidelity) -> InterconnectModel {
    InterconnectModel::with_faults(topology.fabric(), fidelity, topology.faults().fabric_changes())
}

const G0: EndpointId = EndpointId(0);
const G1: EndpointId = EndpointId(1);
const HOST: EndpointId = EndpointId(2);

fn request(src: EndpointId, dst: EndpointId, bytes: u64) -> TransferRequest {
    TransferRequest { src, dst, bytes, packet_bytes: None }
}

/// Runs the model to idleness; returns completions and failures.
fn drain(net: &mut InterconnectModel) -> (Vec<Completion>, Vec<TransferFailure>) {
    let mut done = Vec::new();
    let mut failures = Vec::new();
    while let Some(t) = net.next_event_time() {
        net.advance_to(t, &mut done);
        failures.extend(net.take_failures());
    }
    (done, failures)
}

fn one_transfer(
    faults: &[&str],
    fidelity: Fidelity,
    bytes: u64,
) -> (Vec<Completion>, Vec<TransferFailure>) {
    let topology = machine(faults);
    let mut net = model(&topology, fidelity);
    net.submit(0, TransferId(1), request(G0, G1, bytes)).unwrap();
    drain(&mut net)
}

#[test]
fn a_degraded_link_slows_a_flow_from_the_fault_on() {
    // 1 MB at 10 GB/s: 500 kB by 50 us, the other 500 kB at 5 GB/s take 100 us; the flow's
    // 1 us latency was fixed when it started.
    let (done, failures) = one_transfer(
        &["link-degrade:link=gpu0-gpu1,bandwidth=0.5,latency_ns=2000,at_us=50"],
        Fidelity::Flow,
        1_000_000,
    );
    assert!(failures.is_empty());
    assert_eq!(done, vec![Completion { id: TransferId(1), time_ps: 151_000_000 }]);
    // Without the fault: 100 us + 1 us.
    let (healthy, _) = one_transfer(&[], Fidelity::Flow, 1_000_000);
    assert_eq!(healthy[0].time_ps, 101_000_000);
    // A transfer that starts after the fault sees both: 200 us at 5 GB/s + 3 us of latency.
    let topology = machine(&["link-degrade:link=gpu1-gpu0,bandwidth=0.5,latency_ns=2000,at_us=50"]);
    let mut net = model(&topology, Fidelity::Flow);
    net.submit(60_000_000, TransferId(2), request(G0, G1, 1_000_000)).unwrap();
    let (done, _) = drain(&mut net);
    assert_eq!(done[0].time_ps, 60_000_000 + 203_000_000);
}

#[test]
fn a_degraded_link_slows_packets_serialized_after_the_fault() {
    // 4096-byte packets at 10 GB/s take 409.6 ns each; from 50 us on, 819.2 ns.
    let (healthy, _) = one_transfer(&[], Fidelity::Packet, 1_000_000);
    let (slow, failures) = one_transfer(
        &["link-degrade:link=gpu0-gpu1,bandwidth=0.5,at_us=50"],
        Fidelity::Packet,
        1_000_000,
    );
    assert!(failures.is_empty());
    let (h, s) = (healthy[0].time_ps, slow[0].time_ps);
    assert!(h > 100_000_000 && h < 102_000_000, "healthy {h}");
    // Half the bytes after the fault at half the rate: about 50 us more.
    assert!(s > h + 49_000_000 && s < h + 51_000_000, "healthy {h}, degraded {s}");
}

#[test]
fn a_failed_link_reroutes_the_transfer_in_flight() {
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let topology = machine(&["link-fail:link=gpu0-gpu1,at_us=50"]);
        let mut net = model(&topology, fidelity);
        net.submit(0, TransferId(1), request(G0, G1, 1_000_000)).unwrap();
        let (done, failures) = drain(&mut net);
        assert!(failures.is_empty(), "{fidelity}: {failures:?}");
        // It restarts at 50 us over PCIe (two 1 GB/s hops): at least 1 ms more.
        let t = done[0].time_ps;
        assert!(t > 50_000_000 + 1_000_000_000, "{fidelity}: {t}");
        assert!(t < 50_000_000 + 1_010_000_000, "{fidelity}: {t}");
        let stats = net.channel_stats();
        // The NVLink (channel 0: gpu0->gpu1) carried about 500 kB before it failed; the PCIe
        // channels gpu0->cpu0 (3) and cpu0->gpu1 (4) the whole megabyte again.
        assert!(stats[0].bytes_carried < 600_000, "{fidelity}: {:?}", stats[0]);
        assert!(stats[3].bytes_carried >= 1_000_000 && stats[4].bytes_carried >= 1_000_000);
        // Later transfers take the new route too.
        net.submit(2_000_000_000, TransferId(2), request(G1, G0, 1000)).unwrap();
        let (done, _) = drain(&mut net);
        assert!(done[0].time_ps >= 2_000_000_000 + 2_000_000, "{fidelity}: over PCIe");
    }
}

#[test]
fn a_link_that_failed_while_idle_changes_later_routes() {
    let topology = machine(&["link-fail:link=gpu0-gpu1,at_ns=1"]);
    let mut net = model(&topology, Fidelity::Flow);
    // Nothing in flight: the fault is no event of its own.
    assert_eq!(net.next_event_time(), None);
    net.submit(5_000, TransferId(1), request(G0, G1, 1000)).unwrap();
    let (done, failures) = drain(&mut net);
    assert!(failures.is_empty());
    // 1000 bytes at 1 GB/s = 1 us per PCIe hop, store and forward by flow: one flow over
    // both hops at 1 GB/s (1 us) + 2 us latency.
    assert_eq!(done[0].time_ps, 5_000 + 3_000_000);
}

#[test]
fn a_failed_link_with_no_other_route_fails_its_transfers_by_name() {
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        // cpu0-gpu1 is gpu1's only way to host memory (GPUs never forward).
        let topology = machine(&["link-fail:link=cpu0-gpu1,at_us=10"]);
        let mut net = model(&topology, fidelity);
        net.submit(0, TransferId(1), request(HOST, G1, 1_000_000)).unwrap();
        net.submit(0, TransferId(2), request(G0, G1, 1_000_000)).unwrap();
        let (done, failures) = drain(&mut net);
        assert_eq!(
            done.iter().map(|c| c.id).collect::<Vec<_>>(),
            vec![TransferId(2)],
            "{fidelity}"
        );
        assert_eq!(failures.len(), 1, "{fidelity}");
        let f = &failures[0];
        assert_eq!((f.id, f.time_ps), (TransferId(1), 10_000_000));
        assert!(
            f.message.contains("link `cpu0`-`gpu1` (pci, 1 lane, two.toml line")
                && f.message.contains("failed at 10 us")
                && f.message.contains("no route from `cpu0` to `gpu1` avoids the failed links"),
            "{}",
            f.message
        );
        // A later transfer that needs it is refused with the same story.
        let e = net.submit(200_000_000, TransferId(3), request(HOST, G1, 8)).unwrap_err();
        assert!(matches!(e, SimError::LinkFault { transfer: 3, .. }), "{e}");
        assert!(e.to_string().contains("failed at 10 us"), "{e}");
        // The copy engines of the failed transfer are free again: gpu0 still sends.
        net.submit(200_000_000, TransferId(4), request(G0, HOST, 8)).unwrap();
        let (done, _) = drain(&mut net);
        assert_eq!(done.len(), 1);
    }
}

#[test]
fn staged_copies_take_over_when_a_peer_link_fails_and_qpi_is_left() {
    // The DGX-1: gpu0 and gpu4 share an NVLink; without it their route crosses QPI, which
    // has no peer access, so the copy is staged through host memory.
    let specs: Vec<FaultSpec> = vec!["link-fail:link=gpu0-gpu4,at_us=5".parse().unwrap()];
    let topology = Topology::bundled("dgx1-v100").unwrap().with_faults(&specs).unwrap();
    let (g0, g4) = (topology.gpu_endpoint(0).unwrap(), topology.gpu_endpoint(4).unwrap());
    let changes = topology.faults().fabric_changes();
    let switchyard_sim::fault::ChannelEffect::Fail { routes } = &changes[0].effect else {
        panic!("a failure")
    };
    assert!(!routes[&(g0, g4)].peer_access);
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let mut net = InterconnectModel::with_faults(topology.fabric(), fidelity, changes);
        net.submit(0, TransferId(1), request(g0, g4, 4_000_000)).unwrap();
        let (done, failures) = drain(&mut net);
        assert!(failures.is_empty() && done.len() == 1, "{fidelity}");
        // Staged over PCIe x16 (15.76 GB/s): 4 MB take at least 250 us after the fault.
        assert!(done[0].time_ps > 250_000_000, "{fidelity}: {}", done[0].time_ps);
    }
}

#[test]
fn faulted_runs_repeat_exactly() {
    let run = |fidelity| {
        let topology = machine(&[
            "link-degrade:link=gpu0-gpu1,bandwidth=0.3,at_us=3",
            "link-fail:link=gpu0-gpu1,at_us=40",
        ]);
        let mut net = model(&topology, fidelity);
        for i in 0..20u64 {
            let (s, d) = if i % 3 == 0 { (G1, G0) } else { (G0, G1) };
            net.submit(i * 7_000_000, TransferId(i), request(s, d, 50_000 + i * 1000)).unwrap();
        }
        drain(&mut net).0
    };
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let (a, b) = (run(fidelity), run(fidelity));
        assert_eq!(a.len(), 20);
        assert_eq!(a, b);
    }
}

#[test]
fn links_are_named_by_their_devices_and_checked() {
    let base = Topology::from_str("two.toml", TWO_GPUS).unwrap();
    let error = |spec: &str| {
        let spec: FaultSpec = spec.parse().unwrap();
        base.clone().with_faults(&[spec]).unwrap_err().to_string()
    };
    let e = error("link-fail:link=gpu0-gpu7");
    assert!(e.contains("has no devices named so") && e.contains("fix: name a link"), "{e}");
    let e = error("link-fail:link=cpu0-cpu0");
    assert!(e.contains("no [[link]] of topology `two` joins `cpu0` and `cpu0`"), "{e}");
    assert!(e.contains("`cpu0` is linked to gpu0, gpu1"), "{e}");
    let e = error("straggler:gpu=2,slowdown=2");
    assert!(e.contains("gpu=2, but topology `two` has 2 GPUs (0..=1)"), "{e}");
}
