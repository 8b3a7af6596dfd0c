//! Every bundled topology file loads, validates and resolves to a complete fabric.

use switchyard_sim::fabric::EndpointId;
use switchyard_sim::topology::{PairClass, Topology, bundled_names};

#[test]
fn every_bundled_topology_loads_and_routes_every_pair() {
    let names = bundled_names();
    assert_eq!(names.len(), 9, "{names:?}");
    for name in names {
        let t = Topology::bundled(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(t.name, name, "the file's `name` matches its file name");
        let f = t.fabric();
        let n = f.endpoints.len() as u32;
        assert_eq!(f.gpu_count() as usize, t.gpus.len());
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    let r = f.route(EndpointId(s), EndpointId(d));
                    let r = r.unwrap_or_else(|| panic!("{name}: no route {s}->{d}"));
                    assert!(!r.channels.is_empty());
                    assert!(f.bottleneck_bytes_per_s(r) > 0);
                }
            }
        }
    }
}

#[test]
fn every_topology_file_on_disk_is_bundled_and_identical() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../topologies");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "gpu_models")
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, bundled_names());
    for name in on_disk {
        let from_disk = Topology::load(format!("{dir}/{name}.toml")).unwrap();
        let bundled = Topology::bundled(&name).unwrap();
        assert_eq!(from_disk.source_hash, bundled.source_hash);
        assert_eq!(from_disk.fabric(), bundled.fabric());
    }
}

#[test]
fn dgx1_routes_nvlink_pairs_over_nvlink_and_others_staged_across_qpi() {
    let t = Topology::bundled("dgx1-v100").unwrap();
    let two = [(0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (4, 7), (5, 6), (6, 7)];
    let one = [(0, 1), (0, 2), (1, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7)];
    let mut no_link = 0;
    for a in 0..8u32 {
        for b in 0..8u32 {
            if a == b {
                continue;
            }
            let key = (a.min(b), a.max(b));
            let class = t.pair_class(a, b);
            let route = t.fabric().route(t.gpu_endpoint(a).unwrap(), t.gpu_endpoint(b).unwrap());
            let route = route.unwrap();
            if two.contains(&key) {
                assert_eq!(class, PairClass::Nv(2), "{a}-{b}");
                assert_eq!(route.channels.len(), 1, "one NVLink hop, not PCIe");
                assert_eq!(t.fabric().bottleneck_bytes_per_s(route), 50_000_000_000);
                assert!(route.peer_access);
            } else if one.contains(&key) {
                assert_eq!(class, PairClass::Nv(1), "{a}-{b}");
                assert_eq!(t.fabric().bottleneck_bytes_per_s(route), 25_000_000_000);
                assert!(route.peer_access);
            } else {
                no_link += 1;
                assert_eq!(class, PairClass::Sys, "{a}-{b}");
                assert!(!route.peer_access, "{a}-{b} crosses QPI: staged");
            }
        }
    }
    assert_eq!(no_link, 24, "12 unordered pairs without NVLink");
}

#[test]
fn m60_tree_has_peer_access_within_a_quadruplet_only() {
    let t = Topology::bundled("m60x8-pcie").unwrap();
    assert_eq!(t.pair_class(0, 1), PairClass::Pix);
    assert_eq!(t.pair_class(0, 2), PairClass::Pxb);
    assert_eq!(t.pair_class(0, 4), PairClass::Sys);
    for a in 0..8u32 {
        for b in 0..8u32 {
            assert_eq!(t.peer_access(a, b), a / 4 == b / 4, "{a}-{b}");
        }
    }
    // Staging goes through the GPU's own socket.
    assert_eq!(t.gpus[0].home_socket, 0);
    assert_eq!(t.gpus[5].home_socket, 1);
    let r = t.fabric().route(t.gpu_endpoint(4).unwrap(), t.gpu_endpoint(0).unwrap()).unwrap();
    assert_eq!(r.channels.len(), 7, "gpu4-board2-plx1-cpu1-cpu0-plx0-board0-gpu0");
}

#[test]
fn nvswitch_machines_show_nv18_everywhere() {
    for name in ["hgx-h200x4", "dgx-h100x8"] {
        let t = Topology::bundled(name).unwrap();
        let n = t.gpus.len() as u32;
        for a in 0..n {
            for b in 0..n {
                let want = if a == b { PairClass::SelfPair } else { PairClass::Nv(18) };
                assert_eq!(t.pair_class(a, b), want, "{name} {a}-{b}");
                assert!(t.peer_access(a, b));
            }
        }
    }
}

#[test]
fn summit_pairs_across_sockets_are_sys_and_ib_pairs_net() {
    let t = Topology::bundled("summit-node").unwrap();
    assert_eq!(t.pair_class(0, 1), PairClass::Nv(2));
    assert_eq!(t.pair_class(0, 3), PairClass::Sys);
    assert!(t.peer_access(0, 3));
    let t = Topology::bundled("summit-ib-x8").unwrap();
    assert_eq!(t.pair_class(0, 7), PairClass::Net);
    let r = t.fabric().route(t.gpu_endpoint(0).unwrap(), t.gpu_endpoint(7).unwrap()).unwrap();
    assert_eq!(t.fabric().bottleneck_bytes_per_s(r), 25_000_000_000, "dual-rail EDR");
}

#[test]
fn source_hash_is_stable() {
    let a = Topology::bundled("dgx1-v100").unwrap();
    let b = Topology::bundled("dgx1-v100").unwrap();
    assert_eq!(a.source_hash, b.source_hash);
    assert_ne!(a.source_hash, Topology::bundled("m60x8-pcie").unwrap().source_hash);
}

#[test]
fn route_override_replaces_the_rule_in_both_directions() {
    let base = r#"name = "two-paths"
[link_type.fast]
kind = "pcie"
bandwidth_gb_s = 2.0
latency_ns = 100.0
max_payload_bytes = 256
header_bytes = 24
[link_type.slow]
kind = "pcie"
bandwidth_gb_s = 1.0
latency_ns = 100.0
max_payload_bytes = 256
header_bytes = 24
[[socket]]
name = "cpu0"
[[switch]]
name = "sw0"
kind = "pcie"
[[gpu]]
name = "gpu0"
model = "K40"
[[gpu]]
name = "gpu1"
model = "K40"
[[link]]
a = "gpu0"
b = "cpu0"
type = "slow"
[[link]]
a = "gpu1"
b = "cpu0"
type = "slow"
[[link]]
a = "gpu0"
b = "sw0"
type = "fast"
[[link]]
a = "gpu1"
b = "sw0"
type = "fast"
"#;
    let names = |t: &Topology, s: u32, d: u32| -> Vec<String> {
        let path = t.route_devices(t.gpu_endpoint(s).unwrap(), t.gpu_endpoint(d).unwrap());
        path.unwrap().iter().map(|&i| t.devices[i].name.clone()).collect()
    };
    // Rule: both paths have two hops; the switch path is wider.
    let t = Topology::from_str("two.toml", base).unwrap();
    assert_eq!(names(&t, 0, 1), ["gpu0", "sw0", "gpu1"]);
    let text = format!("{base}[[route]]\nfrom = \"gpu0\"\nto = \"gpu1\"\nvia = [\"cpu0\"]\n");
    let t = Topology::from_str("two.toml", &text).unwrap();
    assert_eq!(names(&t, 0, 1), ["gpu0", "cpu0", "gpu1"]);
    assert_eq!(names(&t, 1, 0), ["gpu1", "cpu0", "gpu0"]);
    let r = t.fabric().route(t.gpu_endpoint(0).unwrap(), t.gpu_endpoint(1).unwrap()).unwrap();
    assert_eq!(t.fabric().bottleneck_bytes_per_s(r), 1_000_000_000);
    let one_way = format!("{text}both_directions = false\n");
    let t = Topology::from_str("two.toml", &one_way).unwrap();
    assert_eq!(names(&t, 1, 0), ["gpu1", "sw0", "gpu0"]);
}

#[test]
fn copy_engines_default_to_two_and_host_memory_is_unlimited() {
    let t = Topology::bundled("m60x8-pcie").unwrap();
    for g in &t.gpus {
        assert_eq!(g.copy_engines, 2);
        assert_eq!(t.fabric().endpoints[g.endpoint.0 as usize].copy_engines, 2);
    }
    for s in &t.sockets {
        assert_eq!(t.fabric().endpoints[s.endpoint.0 as usize].copy_engines, u32::MAX);
    }
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/hetero-k40c-m4000.toml"
    ))
    .unwrap()
    .replacen("model = \"K40c\"\n", "model = \"K40c\"\ncopy_engines = 1\n", 1);
    let t = Topology::from_str("one-engine.toml", &text).unwrap();
    assert_eq!(t.gpus[0].copy_engines, 1);
    assert_eq!(t.gpus[1].copy_engines, 2);
}

#[test]
fn transfer_setup_is_the_gpu_copy_setup_or_the_network_setup() {
    let t = Topology::bundled("hgx-h200x4").unwrap();
    let (g0, g1) = (t.gpu_endpoint(0).unwrap(), t.gpu_endpoint(1).unwrap());
    let host = t.staging_host(0).unwrap();
    let copy = t.gpus[0].model.copy_setup_ps;
    assert_eq!(copy, 7_100_000, "H200 copy setup, gpu_models.toml");
    assert_eq!(t.transfer_setup_ps(g0, g1), copy);
    assert_eq!(t.transfer_setup_ps(host, g0), copy, "host-to-GPU copies use the GPU's engine");
    // Across InfiniBand the NIC drives the transfer: the link's setup_ns, not the GPU's.
    let t = Topology::bundled("summit-ib-x8").unwrap();
    let (a, b) = (t.gpu_endpoint(0).unwrap(), t.gpu_endpoint(7).unwrap());
    assert_eq!(t.transfer_setup_ps(a, b), 5_000_000);
    let local_host = t.staging_host(0).unwrap();
    assert_eq!(t.transfer_setup_ps(a, local_host), t.gpus[0].model.copy_setup_ps);
}
