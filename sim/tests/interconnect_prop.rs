//! Property tests on random small fabrics (chains and stars of channels with random
//! bandwidths, latencies, payload sizes and headers, some GPU pairs without peer access):
//! every transfer completes, none beats its route's floor (latency floor plus payload at the
//! bottleneck bandwidth), completions come in (time, id) order, and a rerun is identical.
//! A failure prints the shrunk case; rerun with `PROPTEST_CASES` / the printed seed file.

use proptest::prelude::*;
use switchyard_sim::fabric::{
    Channel, ChannelId, Endpoint, EndpointId, EndpointKind, Fabric, Route,
};
use switchyard_sim::interconnect::{
    Completion, Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
    transfer_floor_ps,
};

#[derive(Clone, Debug)]
struct LinkSpec {
    bandwidth_bytes_per_s: u64,
    latency_ps: u64,
    max_payload_bytes: u32,
    header_bytes: u32,
}

fn link() -> impl Strategy<Value = LinkSpec> {
    (1u64..=400, 0u64..=3_000_000, prop::sample::select(vec![32u32, 256, 4096, 65536]), 0u32..=64)
        .prop_map(|(gb, latency_ps, max_payload_bytes, header_bytes)| LinkSpec {
            bandwidth_bytes_per_s: gb * 250_000_000,
            latency_ps,
            max_payload_bytes,
            header_bytes,
        })
}

fn push_channel(f: &mut Fabric, l: &LinkSpec) -> ChannelId {
    f.channels.push(Channel {
        name: format!("c{}", f.channels.len()),
        bandwidth_bytes_per_s: l.bandwidth_bytes_per_s,
        latency_ps: l.latency_ps,
        max_payload_bytes: l.max_payload_bytes,
        header_bytes: l.header_bytes,
    });
    ChannelId(f.channels.len() as u32 - 1)
}

/// GPUs 0..n and one host memory (endpoint n). `star`: every endpoint has an up and a down
/// channel to a central switch; route a->b = [up(a), down(b)]. Otherwise a chain
/// 0 - 1 - ... - n with a channel per direction per link; routes follow the chain.
/// `no_peer[i]` removes peer access between GPU i and GPU i+1 (copies are staged).
fn build(n: usize, star: bool, links: &[LinkSpec], engines: &[u32], no_peer: &[bool]) -> Fabric {
    let mut f = Fabric::default();
    for (i, &copy_engines) in engines.iter().enumerate().take(n) {
        f.endpoints.push(Endpoint {
            name: format!("gpu{i}"),
            kind: EndpointKind::Gpu { index: i as u32 },
            copy_engines,
        });
    }
    f.endpoints.push(Endpoint {
        name: "socket0".into(),
        kind: EndpointKind::HostMemory { socket: 0 },
        copy_engines: u32::MAX,
    });
    let m = n + 1;
    let route_of = |f: &mut Fabric| -> Vec<Vec<Vec<ChannelId>>> {
        let mut r = vec![vec![Vec::new(); m]; m];
        if star {
            let up: Vec<ChannelId> = (0..m).map(|i| push_channel(f, &links[2 * i])).collect();
            let down: Vec<ChannelId> = (0..m).map(|i| push_channel(f, &links[2 * i + 1])).collect();
            for a in 0..m {
                for b in 0..m {
                    r[a][b] = vec![up[a], down[b]];
                }
            }
        } else {
            let right: Vec<ChannelId> =
                (0..m - 1).map(|i| push_channel(f, &links[2 * i])).collect();
            let left: Vec<ChannelId> =
                (0..m - 1).map(|i| push_channel(f, &links[2 * i + 1])).collect();
            for a in 0..m {
                for b in 0..m {
                    r[a][b] = if a < b {
                        right[a..b].to_vec()
                    } else {
                        left[b..a].iter().rev().copied().collect()
                    };
                }
            }
        }
        r
    };
    let routes = route_of(&mut f);
    for a in 0..m {
        for b in 0..m {
            if a != b {
                let gpu_pair = a < n && b < n;
                let blocked = gpu_pair && a.abs_diff(b) == 1 && no_peer[a.min(b)];
                f.routes.insert(
                    (EndpointId(a as u32), EndpointId(b as u32)),
                    Route { channels: routes[a][b].clone(), peer_access: !blocked },
                );
            }
        }
    }
    f
}

#[derive(Clone, Debug)]
struct Sub {
    at_ps: u64,
    src: usize,
    dst: usize,
    bytes: u64,
    packet_bytes: Option<u64>,
}

fn scenario() -> impl Strategy<Value = (Fabric, Vec<Sub>)> {
    (2usize..=4, any::<bool>())
        .prop_flat_map(|(n, star)| {
            (
                Just(n),
                Just(star),
                prop::collection::vec(link(), 2 * (n + 1)),
                prop::collection::vec(1u32..=2, n),
                prop::collection::vec(any::<bool>(), n),
                prop::collection::vec(
                    (
                        0u64..2_000_000_000,
                        0..=n,
                        0..=n,
                        0u64..300_000,
                        prop::option::weighted(0.3, 1u64..100_000),
                    ),
                    1..8,
                ),
            )
        })
        .prop_map(|(n, star, links, engines, no_peer, raw)| {
            let f = build(n, star, &links, &engines, &no_peer);
            let mut subs: Vec<Sub> = raw
                .into_iter()
                .map(|(at_ps, src, dst, bytes, packet_bytes)| {
                    let dst = if src == dst { (dst + 1) % (n + 1) } else { dst };
                    Sub { at_ps, src, dst, bytes, packet_bytes }
                })
                .collect();
            subs.sort_by_key(|s| s.at_ps);
            (f, subs)
        })
}

fn request(s: &Sub) -> TransferRequest {
    TransferRequest {
        src: EndpointId(s.src as u32),
        dst: EndpointId(s.dst as u32),
        bytes: s.bytes,
        packet_bytes: s.packet_bytes,
    }
}

fn run(f: &Fabric, fidelity: Fidelity, subs: &[Sub]) -> Vec<Completion> {
    let mut m = InterconnectModel::new(f, fidelity);
    let mut out = Vec::new();
    let mut i = 0;
    while i < subs.len() || m.next_event_time().is_some() {
        let next_sub = subs.get(i).map(|s| s.at_ps);
        match (next_sub, m.next_event_time()) {
            (Some(s), n) if n.is_none_or(|n| s < n) => {
                m.advance_to(s, &mut out);
                m.submit(s, TransferId(i as u64), request(&subs[i])).expect("routable");
                i += 1;
            }
            (_, Some(n)) => m.advance_to(n, &mut out),
            _ => unreachable!(),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_transfer_completes_and_none_beats_its_floor((f, subs) in scenario()) {
        for fidelity in [Fidelity::Flow, Fidelity::Packet] {
            let log = run(&f, fidelity, &subs);
            prop_assert_eq!(log.len(), subs.len(), "{}: not every transfer completed", fidelity);
            prop_assert!(
                log.windows(2).all(|w| (w[0].time_ps, w[0].id) < (w[1].time_ps, w[1].id)),
                "{}: completions out of (time, id) order", fidelity
            );
            for c in &log {
                let s = &subs[c.id.0 as usize];
                let r = request(s);
                let floor = transfer_floor_ps(&f, r.src, r.dst, r.bytes).expect("routable");
                prop_assert!(
                    c.time_ps - s.at_ps >= floor,
                    "{}: transfer {} took {} ps, below its floor {} ps", fidelity, c.id.0,
                    c.time_ps - s.at_ps, floor
                );
            }
            prop_assert_eq!(&log, &run(&f, fidelity, &subs), "{}: rerun differs", fidelity);
        }
    }
}
