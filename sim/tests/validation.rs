//! Validation microbenchmarks: the simulator against the seeds' figures and the project's
//! H200 measurements (targets and tolerances in `switchyard_sim::topology::bench`).

use switchyard_sim::gpu::KernelCounts;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;
use switchyard_sim::topology::bench::{self, BenchResult};

fn check(results: &[BenchResult], expected: usize) {
    for r in results {
        println!("{r}");
    }
    assert_eq!(results.len(), expected, "every scenario reported");
    let failed: Vec<String> = results.iter().filter(|r| !r.pass).map(|r| r.to_string()).collect();
    assert!(failed.is_empty(), "outside target:\n{}", failed.join("\n"));
}

#[test]
fn m60_packetization_overhead_and_ring_broadcast_flow() {
    let t = Topology::bundled("m60x8-pcie").unwrap();
    check(&bench::run(&t, Fidelity::Flow).unwrap(), 4);
}

#[test]
fn m60_packetization_overhead_packet() {
    let t = Topology::bundled("m60x8-pcie").unwrap();
    let make =
        || switchyard_sim::interconnect::InterconnectModel::new(t.fabric(), Fidelity::Packet);
    check(&bench::m60_packetization(&t, make).unwrap(), 2);
}

#[test]
fn nvlink_above_and_pcie_below_half_efficiency_at_32_bytes() {
    let nv = bench::payload_efficiency(&Topology::bundled("dgx1-v100").unwrap());
    let pcie = bench::payload_efficiency(&Topology::bundled("m60x8-pcie").unwrap());
    let h200 = bench::payload_efficiency(&Topology::bundled("hgx-h200x4").unwrap());
    check(&nv, 1);
    check(&pcie, 1);
    check(&h200, 1);
    assert!(nv[0].measured > 50.0 && pcie[0].measured < 50.0);
}

#[test]
fn infiniband_bandwidth_rises_with_message_size() {
    let t = Topology::bundled("summit-ib-x8").unwrap();
    check(&bench::run(&t, Fidelity::Flow).unwrap(), 4);
}

#[test]
fn h200_peer_copies_match_measurements() {
    let t = Topology::bundled("hgx-h200x4").unwrap();
    check(&bench::run(&t, Fidelity::Flow).unwrap(), 4);
}

#[test]
fn h200_small_copy_matches_at_packet_fidelity() {
    let t = Topology::bundled("hgx-h200x4").unwrap();
    let make =
        || switchyard_sim::interconnect::InterconnectModel::new(t.fabric(), Fidelity::Packet);
    check(&[bench::h200_small_copy(&t, make).unwrap()], 1);
}

#[test]
fn h200_kernel_launch_costs_match_measurements() {
    let t = Topology::bundled("hgx-h200x4").unwrap();
    let m = &t.gpus[0].model;
    // DESIGN.md: empty kernel back to back 2.6-3.2 us; launch + synchronize 7-8.5 us.
    let launch_us = m.launch_overhead_ps() as f64 / 1e6;
    assert!((2.6..=3.2).contains(&launch_us), "{launch_us}");
    let empty = m.kernel_time_ps(&KernelCounts::default());
    let launch_sync_us = (m.launch_overhead_ps() + empty + m.sync_overhead_ps()) as f64 / 1e6;
    assert!((7.0..=8.5).contains(&launch_sync_us), "{launch_sync_us}");
    // Memory-bound kernel: reading 4.8 GB takes about a millisecond at 4.8 TB/s.
    let big = m.kernel_time_ps(&KernelCounts { bytes_read: 4_800_000_000, ..Default::default() });
    assert!((1.0e9..1.01e9).contains(&(big as f64)), "{big}");
}

#[test]
fn hetero_node_k40c_is_about_four_times_faster_per_item() {
    // Seed 000 Table 5: Groute's first-available routing gives the K40c ~4x the segments.
    let t = Topology::bundled("hetero-k40c-m4000").unwrap();
    let items = KernelCounts { items: 1_000_000, ..Default::default() };
    let k40c = t.gpus[0].model.kernel_time_ps(&items) as f64;
    let m4000 = t.gpus[1].model.kernel_time_ps(&items) as f64;
    let ratio = m4000 / k40c;
    assert!((3.5..=5.0).contains(&ratio), "{ratio}");
}

#[test]
fn k40_peer_copy_latency_matches_gunrock() {
    let t = Topology::bundled("k40x6-pcie").unwrap();
    check(&bench::run(&t, Fidelity::Flow).unwrap(), 2);
}

#[test]
fn infiniband_bandwidth_rises_with_message_size_packet() {
    let t = Topology::bundled("summit-ib-x8").unwrap();
    let make =
        || switchyard_sim::interconnect::InterconnectModel::new(t.fabric(), Fidelity::Packet);
    check(&bench::ib_message_sizes(&t, make).unwrap(), 3);
}
