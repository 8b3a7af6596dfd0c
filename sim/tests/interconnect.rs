//! Interconnect models on hand-built fabrics: fairness, fidelity agreement, copy engines,
//! staging, errors and determinism. Expected numbers are computed by hand in comments.

use switchyard_sim::SimError;
use switchyard_sim::fabric::{
    Channel, ChannelId, Endpoint, EndpointId, EndpointKind, Fabric, Route,
};
use switchyard_sim::interconnect::{
    Completion, Fidelity, Interconnect, InterconnectModel, ModelLogEntry, TransferId,
    TransferRequest, transfer_floor_ps,
};

const GB: u64 = 1_000_000_000;
const PS_PER_S: u64 = 1_000_000_000_000;

/// Builds fabrics by hand.
#[derive(Default)]
struct Builder {
    f: Fabric,
}

impl Builder {
    fn gpu(&mut self, engines: u32) -> EndpointId {
        let index = self.f.gpu_count();
        self.f.endpoints.push(Endpoint {
            name: format!("gpu{index}"),
            kind: EndpointKind::Gpu { index },
            copy_engines: engines,
        });
        EndpointId(self.f.endpoints.len() as u32 - 1)
    }
    fn host(&mut self, socket: u32) -> EndpointId {
        self.f.endpoints.push(Endpoint {
            name: format!("socket{socket}"),
            kind: EndpointKind::HostMemory { socket },
            copy_engines: u32::MAX,
        });
        EndpointId(self.f.endpoints.len() as u32 - 1)
    }
    fn channel(
        &mut self,
        bandwidth_bytes_per_s: u64,
        latency_ps: u64,
        payload: u32,
        header: u32,
    ) -> ChannelId {
        let id = self.f.channels.len();
        self.f.channels.push(Channel {
            name: format!("c{id}"),
            bandwidth_bytes_per_s,
            latency_ps,
            max_payload_bytes: payload,
            header_bytes: header,
        });
        ChannelId(id as u32)
    }
    fn route(
        &mut self,
        src: EndpointId,
        dst: EndpointId,
        channels: &[ChannelId],
        peer_access: bool,
    ) {
        self.f.routes.insert((src, dst), Route { channels: channels.to_vec(), peer_access });
    }
}

fn req(src: EndpointId, dst: EndpointId, bytes: u64) -> TransferRequest {
    TransferRequest { src, dst, bytes, packet_bytes: None }
}

/// Submits `(time, request)` in order (ids 0, 1, ...) and runs to the end; returns the
/// completion log in delivery order.
fn run(fabric: &Fabric, fidelity: Fidelity, subs: &[(u64, TransferRequest)]) -> Vec<Completion> {
    let mut m = InterconnectModel::new(fabric, fidelity);
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let next_sub = subs.get(i).map(|s| s.0);
        match (next_sub, m.next_event_time()) {
            (Some(s), n) if n.is_none_or(|n| s < n) => {
                m.advance_to(s, &mut out);
                m.submit(s, TransferId(i as u64), subs[i].1).unwrap();
                i += 1;
            }
            (_, Some(n)) => m.advance_to(n, &mut out),
            (None, None) => break,
            (Some(_), None) => unreachable!(),
        }
    }
    assert_eq!(m.in_flight(), 0);
    out
}

/// Like [`run`], with the model's event log switched on.
fn run_logged(
    fabric: &Fabric,
    fidelity: Fidelity,
    subs: &[(u64, TransferRequest)],
) -> (Vec<Completion>, Vec<ModelLogEntry>) {
    let mut m = InterconnectModel::new(fabric, fidelity);
    m.enable_event_log();
    let mut out = Vec::new();
    for (i, (t, r)) in subs.iter().enumerate() {
        m.advance_to(*t, &mut out);
        m.submit(*t, TransferId(i as u64), *r).unwrap();
    }
    m.advance_to(u64::MAX, &mut out);
    assert_eq!(out, run(fabric, fidelity, subs), "logging changes nothing");
    (out, m.event_log().to_vec())
}

fn time_of(log: &[Completion], id: u64) -> u64 {
    log.iter().find(|c| c.id == TransferId(id)).expect("transfer completed").time_ps
}

#[test]
fn two_flows_sharing_one_link_get_half_each() {
    // gpu0 -> gpu2 and gpu1 -> gpu2 share c2 (10 GB/s); c0, c1 are 100 GB/s. No headers.
    // Each gets 5 GB/s: 1 GB takes 0.2 s; alone it would take 0.1 s. Latency 1 us + 1 us.
    let mut b = Builder::default();
    let (g0, g1, g2) = (b.gpu(2), b.gpu(2), b.gpu(2));
    let c0 = b.channel(100 * GB, 1_000_000, 4096, 0);
    let c1 = b.channel(100 * GB, 1_000_000, 4096, 0);
    let c2 = b.channel(10 * GB, 1_000_000, 4096, 0);
    b.route(g0, g2, &[c0, c2], true);
    b.route(g1, g2, &[c1, c2], true);
    let log = run(&b.f, Fidelity::Flow, &[(0, req(g0, g2, GB)), (0, req(g1, g2, GB))]);
    let expected = PS_PER_S / 5 + 2_000_000;
    assert_eq!(time_of(&log, 0), expected);
    assert_eq!(time_of(&log, 1), expected);
    let alone = run(&b.f, Fidelity::Flow, &[(0, req(g0, g2, GB))]);
    assert_eq!(time_of(&alone, 0), PS_PER_S / 10 + 2_000_000);
}

#[test]
fn water_filling_gives_the_classic_three_flow_answer() {
    // Link L = 12 GB/s carries A, B and C; C also crosses M = 2 GB/s. No latency, no headers.
    // Progressive filling: all rise together; L would saturate at 4 each, but M saturates
    // first at 2 (C alone on it), so C = 2 GB/s; A and B split the remaining 10: 5 each.
    // (An equal split of L, 4 each, would finish A and B at 0.25 s.)
    // A, B: 1 GB at 5 GB/s -> 0.2 s. C: 0.4 GB sent by 0.2 s, then alone: 0.6 GB at
    // min(12, 2) = 2 GB/s -> 0.3 s more -> 0.5 s.
    let mut b = Builder::default();
    let (g0, g1, g2, g3) = (b.gpu(2), b.gpu(2), b.gpu(2), b.gpu(2));
    let l = b.channel(12 * GB, 0, 4096, 0);
    let m = b.channel(2 * GB, 0, 4096, 0);
    b.route(g0, g3, &[l], true);
    b.route(g1, g3, &[l], true);
    b.route(g2, g3, &[m, l], true);
    let log = run(
        &b.f,
        Fidelity::Flow,
        &[(0, req(g0, g3, GB)), (0, req(g1, g3, GB)), (0, req(g2, g3, GB))],
    );
    assert_eq!(time_of(&log, 0), PS_PER_S / 5);
    assert_eq!(time_of(&log, 1), PS_PER_S / 5);
    assert_eq!(time_of(&log, 2), PS_PER_S / 2);
}

#[test]
fn a_flow_joining_later_slows_the_first() {
    // One 10 GB/s link. A (1 GB) starts at 0; B (1 GB) at 0.05 s. A alone sends 0.5 GB by
    // 0.05 s; then both at 5 GB/s: A's remaining 0.5 GB takes 0.1 s -> A at 0.15 s, having
    // let B send 0.5 GB; B alone sends its last 0.5 GB at 10 GB/s -> 0.05 s -> 0.2 s.
    let mut b = Builder::default();
    let (g0, g1, g2) = (b.gpu(2), b.gpu(2), b.gpu(2));
    let l = b.channel(10 * GB, 0, 4096, 0);
    b.route(g0, g2, &[l], true);
    b.route(g1, g2, &[l], true);
    let log = run(&b.f, Fidelity::Flow, &[(0, req(g0, g2, GB)), (PS_PER_S / 20, req(g1, g2, GB))]);
    assert_eq!(time_of(&log, 0), PS_PER_S * 15 / 100);
    assert_eq!(time_of(&log, 1), PS_PER_S / 5);
}

#[test]
fn packet_headers_cost_bandwidth_in_the_flow_model() {
    // 1000 bytes payload + 24 header per packet: wire = 1.024 x payload. 1,024,000 bytes =
    // 1024 packets -> 1,048,576 wire bytes at 1 GB/s -> 1,048,576 ns; effective payload rate
    // 10^9 x 1000/1024 = 976,562,500 B/s exactly.
    let mut b = Builder::default();
    let (g0, g1) = (b.gpu(2), b.gpu(2));
    let c = b.channel(GB, 0, 1000, 24);
    b.route(g0, g1, &[c], true);
    let mut m = InterconnectModel::new(&b.f, Fidelity::Flow);
    m.submit(0, TransferId(7), req(g0, g1, 1_024_000)).unwrap();
    let mut log = Vec::new();
    m.advance_to(u64::MAX, &mut log);
    assert_eq!(log, vec![Completion { id: TransferId(7), time_ps: 1_048_576_000 }]);
    let s = m.channel_stats()[0];
    assert_eq!((s.bytes_carried, s.packets, s.busy_ps), (1_048_576, 1024, 1_048_576_000));
}

/// A three-hop chain with different bandwidths, latencies and headers.
fn chain() -> (Fabric, EndpointId, EndpointId, Vec<ChannelId>) {
    let mut b = Builder::default();
    let (g0, g1) = (b.gpu(2), b.gpu(2));
    let c0 = b.channel(25 * GB, 1_000_000, 4096, 64);
    let c1 = b.channel(12_500_000_000, 500_000, 4096, 32);
    let c2 = b.channel(50 * GB, 200_000, 4096, 16);
    b.route(g0, g1, &[c0, c1, c2], true);
    (b.f, g0, g1, vec![c0, c1, c2])
}

#[test]
fn packet_and_flow_agree_on_a_lone_bulk_transfer() {
    // Flow: bytes x (4096+32)/4096 at 12.5 GB/s (the bottleneck c1, whose weight decides)
    // plus 1.7 us of latency. Packet: the same bytes through the bottleneck, plus pipeline
    // fill and drain: one packet's serialization on each other hop (c0 and c2), plus up to
    // 1 ps of rounding per packet per hop. That sum is the tolerance.
    let (f, g0, g1, chans) = chain();
    let bytes = 64 * 1024 * 1024 + 123;
    let flow = time_of(&run(&f, Fidelity::Flow, &[(0, req(g0, g1, bytes))]), 0);
    let packet = time_of(&run(&f, Fidelity::Packet, &[(0, req(g0, g1, bytes))]), 0);
    let packets = bytes.div_ceil(4096);
    let one_packet = |c: ChannelId| {
        let ch = &f.channels[c.0 as usize];
        (4096 + ch.header_bytes as u64) * PS_PER_S / ch.bandwidth_bytes_per_s
    };
    let tolerance = one_packet(chans[0]) + one_packet(chans[2]) + 3 * packets;
    let diff = flow.abs_diff(packet);
    eprintln!(
        "lone bulk: flow {flow} ps, packet {packet} ps, diff {diff} ps, tolerance {tolerance} ps"
    );
    assert!(
        diff <= tolerance,
        "flow {flow} ps vs packet {packet} ps: differ by {diff} ps > tolerance {tolerance} ps"
    );
    // And both respect the floor (latency + payload at the bottleneck, no headers).
    let floor = transfer_floor_ps(&f, g0, g1, bytes).unwrap();
    assert!(flow >= floor && packet >= floor);
    // The flow time is what the formula says, to the picosecond.
    let wire = bytes + packets * 32;
    let rate = (12_500_000_000u128 * bytes as u128 / wire as u128) as u64; // floored
    let expected = (bytes as u128 * PS_PER_S as u128).div_ceil(rate as u128) as u64 + 1_700_000;
    assert!(flow.abs_diff(expected) <= 1, "flow {flow} vs formula {expected}");
}

#[test]
fn packet_model_counts_packets_and_headers_per_hop() {
    let (f, g0, g1, _) = chain();
    let bytes = 10 * 4096 + 1;
    let mut m = InterconnectModel::new(&f, Fidelity::Packet);
    m.submit(0, TransferId(0), req(g0, g1, bytes)).unwrap();
    let mut log = Vec::new();
    m.advance_to(u64::MAX, &mut log);
    let s = m.channel_stats();
    assert_eq!(s[0].packets, 11);
    assert_eq!(s[0].bytes_carried, bytes + 11 * 64);
    assert_eq!(s[1].bytes_carried, bytes + 11 * 32);
    assert_eq!(s[2].bytes_carried, bytes + 11 * 16);
}

/// gpu0 (1 or 2 engines) sends to gpu1 and gpu2 over disjoint 10 GB/s channels.
fn fan_out(engines: u32) -> (Fabric, EndpointId, EndpointId, EndpointId) {
    let mut b = Builder::default();
    let (g0, g1, g2) = (b.gpu(engines), b.gpu(2), b.gpu(2));
    let c0 = b.channel(10 * GB, 0, 4096, 0);
    let c1 = b.channel(10 * GB, 0, 4096, 0);
    b.route(g0, g1, &[c0], true);
    b.route(g0, g2, &[c1], true);
    (b.f, g0, g1, g2)
}

#[test]
fn copy_engine_limit_serializes_transfers() {
    // 1 GB at 10 GB/s = 0.1 s each. One engine: the second waits for the first (FIFO);
    // two engines: both at once.
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let (f, g0, g1, g2) = fan_out(1);
        let subs = [(0, req(g0, g1, GB / 10)), (0, req(g0, g2, GB / 10))];
        let log = run(&f, fidelity, &subs);
        let (t0, t1) = (time_of(&log, 0), time_of(&log, 1));
        assert!((PS_PER_S / 100..PS_PER_S / 100 + 1_000_000).contains(&t0), "{fidelity}: {t0}");
        assert_eq!(t1, 2 * t0, "{fidelity}: the second transfer waits for the engine");
        let (f2, g0, g1, g2) = fan_out(2);
        let log = run(&f2, fidelity, &[(0, req(g0, g1, GB / 10)), (0, req(g0, g2, GB / 10))]);
        assert_eq!(time_of(&log, 0), t0, "{fidelity}");
        assert_eq!(time_of(&log, 1), t0, "{fidelity}: two engines, no waiting");
    }
}

/// gpu0 and gpu1 without peer access, both reach host memory.
fn no_peer() -> (Fabric, EndpointId, EndpointId, ChannelId, ChannelId) {
    let mut b = Builder::default();
    let (g0, g1, h) = (b.gpu(2), b.gpu(2), b.host(0));
    let up = b.channel(10 * GB, 1_000_000, 4096, 0);
    let down = b.channel(5 * GB, 2_000_000, 4096, 0);
    b.route(g0, h, &[up], true);
    b.route(h, g1, &[down], true);
    b.route(g0, g1, &[up, down], false);
    (b.f, g0, g1, up, down)
}

#[test]
fn staged_copy_takes_both_legs() {
    // Leg 1: 1 GB at 10 GB/s + 1 us; leg 2 starts when leg 1 ends: 1 GB at 5 GB/s + 2 us.
    // Total 0.1 s + 1 us + 0.2 s + 2 us.
    let (f, g0, g1, up, down) = no_peer();
    let mut m = InterconnectModel::new(&f, Fidelity::Flow);
    m.submit(0, TransferId(0), req(g0, g1, GB)).unwrap();
    let mut log = Vec::new();
    m.advance_to(u64::MAX, &mut log);
    assert_eq!(log[0].time_ps, PS_PER_S / 10 + 1_000_000 + PS_PER_S / 5 + 2_000_000);
    let s = m.channel_stats();
    assert_eq!(s[up.0 as usize].bytes_carried, GB);
    assert_eq!(s[down.0 as usize].bytes_carried, GB);
    // With application-level packets the legs pipeline: faster than the two legs in turn,
    // never faster than the floor over both legs.
    let mut p = TransferRequest { packet_bytes: Some(GB / 10), ..req(g0, g1, GB) };
    let log = run(&f, Fidelity::Flow, &[(0, p)]);
    let floor = transfer_floor_ps(&f, g0, g1, GB).unwrap();
    assert!(time_of(&log, 0) < PS_PER_S * 3 / 10, "pipelined: {}", time_of(&log, 0));
    assert!(time_of(&log, 0) >= floor);
    // Packet fidelity stages the same way.
    p.packet_bytes = None;
    let log = run(&f, Fidelity::Packet, &[(0, p)]);
    assert!(time_of(&log, 0) >= PS_PER_S * 3 / 10);
}

#[test]
fn application_packets_pay_the_latency_per_packet() {
    // 10 packets of 0.1 GB at 10 GB/s, each a separate copy with 1 us latency: 0.1 s + 10 us.
    let (f, g0, g1, _) = fan_out(2);
    let p = TransferRequest { packet_bytes: Some(GB / 10), ..req(g0, g1, GB) };
    let mut b = Builder { f };
    let c = b.channel(10 * GB, 1_000_000, 4096, 0);
    b.route(g0, g1, &[c], true);
    let log = run(&b.f, Fidelity::Flow, &[(0, p)]);
    assert_eq!(time_of(&log, 0), PS_PER_S / 10 + 10 * 1_000_000);
}

#[test]
fn bad_submissions_are_refused_with_a_fix() {
    let (f, g0, g1, _) = fan_out(1);
    let h = EndpointId(99);
    let mut m = InterconnectModel::new(&f, Fidelity::Flow);
    let e = m.submit(0, TransferId(0), req(g0, h, 1)).unwrap_err();
    assert!(matches!(e, SimError::UnknownEndpoint { endpoint: 99, .. }), "{e}");
    let e = m.submit(0, TransferId(0), req(g1, g0, 1)).unwrap_err();
    assert!(matches!(e, SimError::NoRoute { .. }), "{e}");
    assert!(e.to_string().contains("gpu1") && e.to_string().contains("fix:"), "{e}");
    let e = m.submit(0, TransferId(0), req(g0, g0, 1)).unwrap_err();
    assert!(matches!(e, SimError::SelfTransfer { .. }), "{e}");
    let zero = TransferRequest { packet_bytes: Some(0), ..req(g0, g1, 1) };
    assert!(matches!(m.submit(0, TransferId(0), zero), Err(SimError::ZeroPacketSize { .. })));
    m.submit(0, TransferId(0), req(g0, g1, 1000)).unwrap();
    let e = m.submit(0, TransferId(0), req(g0, g1, 1)).unwrap_err();
    assert!(matches!(e, SimError::DuplicateTransfer { transfer: 0 }), "{e}");
    let mut out = Vec::new();
    m.advance_to(1_000, &mut out);
    let e = m.submit(500, TransferId(1), req(g0, g1, 1)).unwrap_err();
    assert!(matches!(e, SimError::SubmitInPast { .. }), "{e}");
    assert_eq!(m.in_flight(), 1, "refused submissions change nothing");
    let (mut f0, g0, g1, _) = fan_out(1);
    f0.endpoints[g0.0 as usize].copy_engines = 0;
    let mut m = InterconnectModel::new(&f0, Fidelity::Packet);
    let e = m.submit(0, TransferId(0), req(g0, g1, 1)).unwrap_err();
    assert!(matches!(e, SimError::NoCopyEngine { .. }), "{e}");
}

#[test]
fn zero_byte_transfers_take_the_latency() {
    let (f, g0, _, _) = chain();
    let g1 = EndpointId(1);
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let log = run(&f, fidelity, &[(5, req(g0, g1, 0))]);
        assert_eq!(log[0].time_ps, 5 + 1_700_000, "{fidelity}");
    }
}

/// A contended scenario on the chain plus staging: many transfers at staggered times.
fn busy_scenario() -> (Fabric, Vec<(u64, TransferRequest)>) {
    let mut b = Builder::default();
    let gpus: Vec<EndpointId> = (0..4).map(|_| b.gpu(2)).collect();
    let h = b.host(0);
    let sw_up: Vec<ChannelId> =
        (0..4).map(|i| b.channel((i + 1) * 4 * GB, 500_000, 256, 24)).collect();
    let sw_down: Vec<ChannelId> =
        (0..4).map(|i| b.channel((4 - i) * 4 * GB, 500_000, 256, 24)).collect();
    let host_up = b.channel(8 * GB, 1_000_000, 256, 24);
    let host_down = b.channel(8 * GB, 1_000_000, 256, 24);
    for (i, &a) in gpus.iter().enumerate() {
        for (j, &d) in gpus.iter().enumerate() {
            if i != j {
                b.route(a, d, &[sw_up[i], sw_down[j]], (i < 2) == (j < 2));
            }
        }
        b.route(a, h, &[sw_up[i], host_down], true);
        b.route(h, a, &[host_up, sw_down[i]], true);
    }
    let mut subs = Vec::new();
    for k in 0..24u64 {
        let (i, j) = ((k % 4) as usize, ((k * 3 + 1) % 4) as usize);
        let j = if i == j { (j + 1) % 4 } else { j };
        let packet_bytes = if k % 3 == 0 { Some(64 * 1024) } else { None };
        subs.push((
            k * 7_000_000,
            TransferRequest {
                src: gpus[i],
                dst: gpus[j],
                bytes: 100_000 + k * 37_001,
                packet_bytes,
            },
        ));
    }
    (b.f, subs)
}

#[test]
fn same_scenario_twice_gives_identical_completion_and_event_logs() {
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let (f, subs) = busy_scenario();
        let (a, log_a) = run_logged(&f, fidelity, &subs);
        let (b, log_b) = run_logged(&f, fidelity, &subs);
        assert!(log_a.len() > 2 * subs.len(), "{fidelity}: the log records chunks");
        assert!(log_a.iter().any(|e| matches!(e, ModelLogEntry::EngineWait { .. })));
        assert_eq!(log_a, log_b, "{fidelity}: event logs differ between runs");
        assert_eq!(a.len(), subs.len());
        assert_eq!(a, b, "{fidelity}: completion logs differ between runs");
        // Delivered in (time, id) order.
        assert!(a.windows(2).all(|w| (w[0].time_ps, w[0].id) < (w[1].time_ps, w[1].id)));
        for (i, (t, r)) in subs.iter().enumerate() {
            let floor = transfer_floor_ps(&f, r.src, r.dst, r.bytes).unwrap();
            assert!(time_of(&a, i as u64) - t >= floor, "{fidelity}: transfer {i} beat its floor");
        }
    }
}

#[test]
fn advance_to_returns_only_completions_up_to_the_given_time() {
    let (f, g0, g1, g2) = fan_out(2);
    let mut m = InterconnectModel::new(&f, Fidelity::Flow);
    m.submit(0, TransferId(1), req(g0, g1, GB)).unwrap(); // 0.1 s
    m.submit(0, TransferId(0), req(g0, g2, GB / 2)).unwrap(); // 0.05 s
    let mut out = Vec::new();
    m.advance_to(PS_PER_S / 20 - 1, &mut out);
    assert!(out.is_empty());
    assert_eq!(m.next_event_time(), Some(PS_PER_S / 20));
    m.advance_to(PS_PER_S, &mut out);
    assert_eq!(
        out,
        vec![
            Completion { id: TransferId(0), time_ps: PS_PER_S / 20 },
            Completion { id: TransferId(1), time_ps: PS_PER_S / 10 }
        ]
    );
    assert_eq!(m.next_event_time(), None);
}

#[test]
fn every_channel_frames_in_its_own_packets_in_both_models() {
    // NVLink-like hop (128 B payload, 16 B header) then IB-like (4096 B, 42 B). 10,000
    // bytes go as units of 4096 (the route's largest payload): 4096 + 4096 + 1808.
    // On the 128 B hop: 32 + 32 + 15 = 79 packets -> 10,000 + 79 x 16 = 11,264 wire bytes.
    // On the 4096 B hop: 3 packets -> 10,000 + 3 x 42 = 10,126 wire bytes.
    let mut b = Builder::default();
    let (g0, g1) = (b.gpu(2), b.gpu(2));
    let nv = b.channel(25 * GB, 1_000_000, 128, 16);
    let ib = b.channel(12_500_000_000, 1_000_000, 4096, 42);
    b.route(g0, g1, &[nv, ib], true);
    for fidelity in [Fidelity::Flow, Fidelity::Packet] {
        let mut m = InterconnectModel::new(&b.f, fidelity);
        m.submit(0, TransferId(0), req(g0, g1, 10_000)).unwrap();
        let mut log = Vec::new();
        m.advance_to(u64::MAX, &mut log);
        let s = m.channel_stats();
        assert_eq!((s[0].packets, s[0].bytes_carried), (79, 11_264), "{fidelity}");
        assert_eq!((s[1].packets, s[1].bytes_carried), (3, 10_126), "{fidelity}");
    }
}

#[test]
fn packet_fidelity_shows_head_of_line_blocking_that_flow_fidelity_does_not() {
    // A: gpu0 -> gpu2 over fast c0 (100 GB/s) into slow c2 (10 GB/s); 1 MB at t = 0.
    // c0 delivers A's units into c2's FIFO ten times faster than c2 drains them: by
    // t = 10 us all 1 MB waits there; c2 needs 100 us in all. B: gpu1 -> gpu2 over c1 into
    // c2; 4 KB at t = 50 us. Packet model: B's units queue behind the ~0.5 MB of A still
    // in c2's FIFO: about 50 us of waiting. Flow model: B gets half of c2 at once (5 GB/s):
    // 4 KB in 0.8 us. No latency, no headers.
    let mut b = Builder::default();
    let (g0, g1, g2) = (b.gpu(2), b.gpu(2), b.gpu(2));
    let c0 = b.channel(100 * GB, 0, 4096, 0);
    let c1 = b.channel(100 * GB, 0, 4096, 0);
    let c2 = b.channel(10 * GB, 0, 4096, 0);
    b.route(g0, g2, &[c0, c2], true);
    b.route(g1, g2, &[c1, c2], true);
    let subs = [(0, req(g0, g2, 1_000_000)), (50_000_000, req(g1, g2, 4_000))];
    let flow_b = time_of(&run(&b.f, Fidelity::Flow, &subs), 1) - 50_000_000;
    let packet_b = time_of(&run(&b.f, Fidelity::Packet, &subs), 1) - 50_000_000;
    assert!(flow_b <= 1_000_000, "flow: B took {flow_b} ps");
    assert!(packet_b >= 45_000_000, "packet: B took {packet_b} ps, expected ~50 us of queueing");
}

#[test]
fn models_and_engines_can_move_between_threads() {
    // Parameter sweeps run independent simulations on worker threads.
    fn assert_send<T: Send>() {}
    assert_send::<InterconnectModel>();
    assert_send::<switchyard_sim::engine::Engine<u64>>();
}

#[test]
fn an_absurdly_large_flow_transfer_does_not_overflow() {
    // u64::MAX bytes at 1 GB/s would take ~585 years, beyond the ~213 days of virtual time
    // a u64 of picoseconds holds: the completion saturates at the end of time, no panic.
    let mut b = Builder::default();
    let (g0, g1) = (b.gpu(2), b.gpu(2));
    let c = b.channel(GB, 1_000, 256, 24);
    b.route(g0, g1, &[c], true);
    let mut m = InterconnectModel::new(&b.f, Fidelity::Flow);
    m.submit(0, TransferId(0), req(g0, g1, u64::MAX)).unwrap();
    let mut out = Vec::new();
    m.advance_to(u64::MAX, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].time_ps, u64::MAX);
}
