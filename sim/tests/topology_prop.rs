//! Property tests on random topologies: every generated file loads, every route is a real
//! path that never transits a GPU, has the fewest hops and, among those, the widest
//! bottleneck (checked against brute force), and every transfer completes in the interconnect
//! no faster than its floor.

use proptest::prelude::*;
use switchyard_sim::fabric::EndpointId;
use switchyard_sim::interconnect::{
    Completion, Fidelity, Interconnect, InterconnectModel, TransferId, TransferRequest,
    transfer_floor_ps,
};
use switchyard_sim::topology::{DeviceKind, Topology};

/// A random machine: sockets (joined by QPI), a PCIe tree of switches, GPUs on it, and
/// random NVLinks between GPUs.
#[derive(Debug, Clone)]
struct Machine {
    sockets: usize,
    /// Parent of switch `i`: a socket (`< sockets`) or an earlier switch, and uplink lanes.
    switch_parent: Vec<(usize, u32)>,
    /// Extra PCIe links between sockets/switches (same numbering), making several paths.
    extra: Vec<(usize, usize, u32)>,
    /// Parent of GPU `i` (socket or switch, same numbering) and its PCIe lanes.
    gpu_parent: Vec<(usize, u32)>,
    /// NVLink pairs (a < b) with lanes.
    nvlinks: Vec<(usize, usize, u32)>,
    pcie_gb_s: f64,
    nvlink_gb_s: f64,
}

fn machine() -> impl Strategy<Value = Machine> {
    (1usize..=2, 0usize..=3, 1usize..=6).prop_flat_map(|(sockets, switches, gpus)| {
        let lanes = || prop_oneof![Just(4u32), Just(8), Just(16)];
        let switch_parent: Vec<BoxedStrategy<(usize, u32)>> =
            (0..switches).map(|i| (0..sockets + i, lanes()).boxed()).collect();
        let extra = proptest::collection::vec(
            (0..sockets + switches, 0..sockets + switches, lanes()),
            0..3,
        );
        let gpu_parent = proptest::collection::vec(
            (0..sockets + switches, prop_oneof![Just(4u32), Just(8), Just(16)]),
            gpus,
        );
        let nvlinks = proptest::collection::vec((0..gpus, 0..gpus, 1u32..=3), 0..6);
        (switch_parent, extra, gpu_parent, nvlinks, 0.5f64..4.0, 10.0f64..30.0).prop_map(
            move |(switch_parent, extra, gpu_parent, nvlinks, pcie_gb_s, nvlink_gb_s)| {
                let mut extras: Vec<(usize, usize, u32)> = Vec::new();
                for (a, b, l) in extra {
                    let (a, b) = (a.min(b), a.max(b));
                    let is_tree = |x: usize, y: usize| {
                        y >= sockets && switch_parent[y - sockets].0 == x
                            || (x, y) == (0, 1) && sockets == 2
                    };
                    if a != b && !is_tree(a, b) && !extras.iter().any(|&(x, y, _)| (x, y) == (a, b))
                    {
                        extras.push((a, b, l));
                    }
                }
                let mut pairs: Vec<(usize, usize, u32)> = Vec::new();
                for (a, b, l) in nvlinks {
                    let (a, b) = (a.min(b), a.max(b));
                    if a != b && !pairs.iter().any(|&(x, y, _)| (x, y) == (a, b)) {
                        pairs.push((a, b, l));
                    }
                }
                Machine {
                    sockets,
                    switch_parent,
                    extra: extras,
                    gpu_parent,
                    nvlinks: pairs,
                    pcie_gb_s,
                    nvlink_gb_s,
                }
            },
        )
    })
}

fn parent_name(m: &Machine, p: usize) -> String {
    if p < m.sockets { format!("cpu{p}") } else { format!("sw{}", p - m.sockets) }
}

fn to_toml(m: &Machine) -> String {
    let mut s = format!(
        "name = \"random\"\n\n[link_type.pcie]\nkind = \"pcie\"\nbandwidth_gb_s = {}\n\
         latency_ns = 150.0\nmax_payload_bytes = 256\nheader_bytes = 24\n\n\
         [link_type.nv]\nkind = \"nvlink\"\nbandwidth_gb_s = {}\nlatency_ns = 500.0\n\
         max_payload_bytes = 128\nheader_bytes = 16\n\n[link_type.qpi]\nkind = \"qpi\"\n\
         bandwidth_gb_s = 16.0\nlatency_ns = 100.0\nmax_payload_bytes = 64\nheader_bytes = 8\n\
         peer_access = false\n\n",
        m.pcie_gb_s, m.nvlink_gb_s
    );
    for i in 0..m.sockets {
        s += &format!("[[socket]]\nname = \"cpu{i}\"\n");
    }
    for i in 0..m.switch_parent.len() {
        s += &format!("[[switch]]\nname = \"sw{i}\"\nkind = \"pcie\"\n");
    }
    for i in 0..m.gpu_parent.len() {
        s += &format!("[[gpu]]\nname = \"gpu{i}\"\nmodel = \"V100-SXM2-16GB\"\n");
    }
    let link = |a: String, b: String, t: &str, lanes: u32| {
        format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\ntype = \"{t}\"\nlanes = {lanes}\n")
    };
    if m.sockets == 2 {
        s += &link("cpu0".into(), "cpu1".into(), "qpi", 2);
    }
    for (i, &(p, lanes)) in m.switch_parent.iter().enumerate() {
        s += &link(parent_name(m, p), format!("sw{i}"), "pcie", lanes);
    }
    for &(a, b, lanes) in &m.extra {
        s += &link(parent_name(m, a), parent_name(m, b), "pcie", lanes);
    }
    for (i, &(p, lanes)) in m.gpu_parent.iter().enumerate() {
        s += &link(parent_name(m, p), format!("gpu{i}"), "pcie", lanes);
    }
    for &(a, b, lanes) in &m.nvlinks {
        s += &link(format!("gpu{a}"), format!("gpu{b}"), "nv", lanes);
    }
    s
}

/// Fewest hops, then widest bottleneck, over all simple paths that transit no GPU.
fn brute_force(t: &Topology, src: usize, dst: usize) -> Option<(usize, u64)> {
    let n = t.devices.len();
    let mut adj: Vec<Vec<(usize, u64)>> = vec![Vec::new(); n];
    for (i, l) in t.links.iter().enumerate() {
        let bw = t.fabric().channels[2 * i].bandwidth_bytes_per_s;
        adj[l.a].push((l.b, bw));
        adj[l.b].push((l.a, bw));
    }
    fn dfs(
        t: &Topology,
        adj: &[Vec<(usize, u64)>],
        at: usize,
        dst: usize,
        seen: &mut Vec<bool>,
        (hops, width): (usize, u64),
        best: &mut Option<(usize, u64)>,
    ) {
        if at == dst {
            let better = match *best {
                None => true,
                Some((h, w)) => hops < h || (hops == h && width > w),
            };
            if better {
                *best = Some((hops, width));
            }
            return;
        }
        if hops > 0 && t.devices[at].kind == DeviceKind::Gpu {
            return;
        }
        for &(v, bw) in &adj[at] {
            if !seen[v] {
                seen[v] = true;
                dfs(t, adj, v, dst, seen, (hops + 1, width.min(bw)), best);
                seen[v] = false;
            }
        }
    }
    let mut seen = vec![false; n];
    seen[src] = true;
    let mut best = None;
    dfs(t, &adj, src, dst, &mut seen, (0, u64::MAX), &mut best);
    best
}

fn endpoint_device(t: &Topology, e: EndpointId) -> usize {
    t.gpus
        .iter()
        .find(|g| g.endpoint == e)
        .map(|g| g.device)
        .or_else(|| t.sockets.iter().find(|s| s.endpoint == e).map(|s| s.device))
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_topologies_route_by_the_documented_rule(m in machine()) {
        let text = to_toml(&m);
        let t = Topology::from_str("random.toml", &text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let f = t.fabric();
        let n = f.endpoints.len() as u32;
        for s in 0..n {
            for d in 0..n {
                if s == d {
                    continue;
                }
                let (se, de) = (EndpointId(s), EndpointId(d));
                let route = f.route(se, de).expect("every pair routed");
                let devs = t.route_devices(se, de).expect("device path");
                prop_assert_eq!(devs.len(), route.channels.len() + 1);
                for (k, c) in route.channels.iter().enumerate() {
                    let l = t.link_of_channel(*c);
                    let (from, to) = if c.0 % 2 == 0 { (l.a, l.b) } else { (l.b, l.a) };
                    prop_assert_eq!((from, to), (devs[k], devs[k + 1]), "channel follows the path");
                }
                for &inner in &devs[1..devs.len() - 1] {
                    prop_assert!(t.devices[inner].kind != DeviceKind::Gpu, "no GPU transit");
                }
                let (hops, width) =
                    brute_force(&t, endpoint_device(&t, se), endpoint_device(&t, de)).unwrap();
                prop_assert_eq!(route.channels.len(), hops, "fewest hops");
                prop_assert_eq!(f.bottleneck_bytes_per_s(route), width, "widest among those");
                let crosses_qpi = route.channels.iter().any(|&c| {
                    t.link_types[t.link_of_channel(c).link_type].name == "qpi"
                });
                let gpu_pair = (s as usize) < t.gpus.len() && (d as usize) < t.gpus.len();
                prop_assert_eq!(route.peer_access, !(gpu_pair && crosses_qpi));
            }
        }
    }

    #[test]
    fn random_topologies_complete_every_transfer_above_the_floor(
        m in machine(),
        bytes in 1u64..4_000_000,
    ) {
        let t = Topology::from_str("random.toml", &to_toml(&m)).unwrap();
        let f = t.fabric();
        let n = f.endpoints.len() as u32;
        let mut net = InterconnectModel::new(f, Fidelity::Flow);
        let mut expected = Vec::new();
        let mut id = 0;
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    let req = TransferRequest {
                        src: EndpointId(s), dst: EndpointId(d), bytes, packet_bytes: None,
                    };
                    net.submit(0, TransferId(id), req).unwrap();
                    expected.push((id, transfer_floor_ps(f, EndpointId(s), EndpointId(d), bytes).unwrap()));
                    id += 1;
                }
            }
        }
        let mut done: Vec<Completion> = Vec::new();
        while let Some(next) = net.next_event_time() {
            net.advance_to(next, &mut done);
        }
        prop_assert_eq!(done.len(), expected.len(), "every transfer completes");
        for c in &done {
            let floor = expected[c.id.0 as usize].1;
            prop_assert!(c.time_ps >= floor, "transfer {} at {} beats floor {}", c.id.0, c.time_ps, floor);
        }
    }
}
