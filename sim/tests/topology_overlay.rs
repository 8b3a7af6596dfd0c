//! Overlays: machines derived from a bundled one by a small TOML file (`base` plus edits),
//! what they change, and the errors for edits the base does not allow (the overlay's line
//! and the fix).

use switchyard_sim::SimError;
use switchyard_sim::topology::{PairClass, Topology};

fn derive(text: &str) -> Topology {
    Topology::from_str("whatif.toml", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The overlay's error: its line and `message | fix`.
fn error_of(text: &str) -> (usize, String) {
    match Topology::from_str("whatif.toml", text) {
        Ok(_) => panic!("accepted a bad overlay:\n{text}"),
        Err(SimError::Topology { file, line, message, fix }) => {
            assert_eq!(file, "whatif.toml", "the error names the overlay, not the derived file");
            assert!(!fix.is_empty());
            (line, format!("{message} | {fix}"))
        }
        Err(other) => panic!("wrong error kind: {other}"),
    }
}

fn lanes_between(t: &Topology, a: &str, b: &str) -> Option<u32> {
    let idx = |n: &str| t.devices.iter().position(|d| d.name == n).unwrap();
    let (x, y) = (idx(a), idx(b));
    t.links.iter().find(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x)).map(|l| l.lanes)
}

#[test]
fn second_lane_on_every_nvlink_pair() {
    let t = derive("base = \"dgx1-v100\"\n[[lanes]]\ntype = \"nvlink2\"\nlanes = 2\n");
    let base = Topology::bundled("dgx1-v100").unwrap();
    assert_eq!(t.name, "dgx1-v100+whatif");
    for a in 0..8 {
        for b in 0..8 {
            let (was, now) = (base.pair_class(a, b), t.pair_class(a, b));
            match was {
                PairClass::Nv(_) => assert_eq!(now, PairClass::Nv(2), "gpu{a}-gpu{b}"),
                other => assert_eq!(now, other, "gpu{a}-gpu{b}: a pair without NVLink stays so"),
            }
        }
    }
    let info = t.overlay.as_ref().unwrap();
    assert_eq!(info.base, "bundled:dgx1-v100");
    assert_eq!(info.changes, ["lanes of every nvlink2 link: 8 links 1 -> 2, 8 already 2"]);
    assert_ne!(t.source_hash, base.source_hash);
    // The canonical form loads as a plain topology file and is the same machine.
    let plain = Topology::from_str("derived.toml", &info.derived_toml).unwrap();
    assert_eq!(plain.fabric(), t.fabric());
    assert_eq!(plain.source_hash, t.source_hash);
}

#[test]
fn one_pair_up_one_pair_removed_one_pair_added() {
    let t = derive(
        r#"base = "dgx1-v100"
name = "edited"
[[lanes]]
a = "gpu0"
b = "gpu1"
lanes = 3
[[lanes]]
a = "gpu3"
b = "gpu0"
lanes = 0
[[lanes]]
a = "gpu0"
b = "gpu5"
type = "nvlink2"
lanes = 1
"#,
    );
    assert_eq!(t.name, "edited");
    assert_eq!(lanes_between(&t, "gpu0", "gpu1"), Some(3));
    assert_eq!(lanes_between(&t, "gpu0", "gpu3"), None);
    assert_eq!(lanes_between(&t, "gpu0", "gpu5"), Some(1));
    assert_eq!(t.pair_class(0, 5), PairClass::Nv(1));
    assert!(t.peer_access(0, 5), "a new NVLink gives peer access");
    assert_eq!(t.pair_class(0, 3), PairClass::Phb, "gpu0-gpu3 now meet at socket 0");
    let changes = &t.overlay.as_ref().unwrap().changes;
    assert_eq!(
        changes,
        &[
            "lanes gpu0-gpu1 (nvlink2): 1 -> 3",
            "lanes gpu3-gpu0 (nvlink2): 2 -> 0",
            "lanes gpu0-gpu5 (nvlink2): 0 -> 1 (new link)"
        ]
    );
}

#[test]
fn nvswitch_replaces_the_mesh_and_keeps_each_gpus_lanes() {
    let t = derive("base = \"dgx1-v100\"\n[nvswitch]\n");
    for a in 0..8 {
        for b in 0..8 {
            if a != b {
                assert_eq!(t.pair_class(a, b), PairClass::Nv(6), "gpu{a}-gpu{b}");
                assert!(t.peer_access(a, b));
            }
        }
    }
    let t = derive("base = \"dgx1-v100\"\n[nvswitch]\nlanes = 12\n");
    assert_eq!(t.pair_class(0, 7), PairClass::Nv(12));
    assert_eq!(
        t.overlay.unwrap().changes,
        [
            "nvswitch: removed 16 GPU-to-GPU NVLink links, added switch `nvswitch` with 12 lanes of nvlink2 to each of 8 GPUs"
        ]
    );
}

#[test]
fn gpu_model_and_link_rate() {
    let t = derive("base = \"dgx-h100x8\"\ngpu_model = \"H200-SXM-141GB\"\n");
    assert!(t.gpus.iter().all(|g| g.model.name == "H200-SXM-141GB"));
    let base = Topology::bundled("dgx-h100x8").unwrap();
    assert_eq!(t.fabric(), base.fabric(), "the interconnect is unchanged");

    let t = derive("base = \"summit-ib-x8\"\n[link_type.edr]\nbandwidth_gb_s = 25.0\n");
    let edr = t.link_types.iter().find(|l| l.name == "edr").unwrap();
    assert_eq!(edr.bandwidth_gb_s, 25.0);
    assert_eq!(t.overlay.unwrap().changes, ["link type edr: bandwidth_gb_s 12.5 -> 25"]);
}

#[test]
fn nodes_shrink_and_grow_a_cluster() {
    let t = derive("base = \"summit-ib-x8\"\nnodes = 3\n");
    assert_eq!(t.gpus.len(), 3);
    assert!(
        t.devices
            .iter()
            .all(|d| d.node.is_empty() || ["node0", "node1", "node2"].contains(&d.node.as_str()))
    );
    let t = derive("base = \"summit-ib-x8\"\nnodes = 16\n");
    assert_eq!(t.gpus.len(), 16);
    assert_eq!(t.gpus[8].name, "n0_gpu@node8");
    assert_eq!(t.pair_class(0, 15), t.pair_class(0, 7), "the new nodes are network peers too");
    assert_eq!(lanes_between(&t, "n0_hca@node8", "leaf0"), Some(2));
}

#[test]
fn overlays_in_the_repository_derive() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../topologies/overlays");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let t = Topology::open(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
            assert!(t.overlay.is_some());
            assert_eq!(t.name, path.file_stem().unwrap().to_string_lossy(), "name = file stem");
            n += 1;
        }
    }
    assert!(n >= 5);
}

#[test]
fn overlay_on_an_overlay_file() {
    let dir = std::env::temp_dir().join(format!("switchyard-overlay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("first.toml"), "base = \"dgx1-v100\"\n[nvswitch]\n").unwrap();
    std::fs::write(
        dir.join("second.toml"),
        "base = \"first.toml\"\ngpu_model = \"V100-SXM2-32GB\"\n",
    )
    .unwrap();
    let t = Topology::load(dir.join("second.toml")).unwrap();
    assert_eq!(t.pair_class(0, 7), PairClass::Nv(6));
    assert_eq!(t.gpus[0].model.name, "V100-SXM2-32GB");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- bad input: the overlay's line and the fix ----

#[test]
fn pair_the_machine_does_not_link() {
    let (line, msg) =
        error_of("base = \"dgx1-v100\"\n\n[[lanes]]\na = \"gpu0\"\nb = \"gpu5\"\nlanes = 2\n");
    assert_eq!(line, 3);
    assert!(msg.contains("no link of `dgx1-v100` joins `gpu0` and `gpu5`"), "{msg}");
    assert!(msg.contains("`gpu0` is linked to plx0, gpu1, gpu2, gpu3, gpu4"), "{msg}");
    assert!(msg.contains("add `type = \"NAME\"`"), "{msg}");
}

#[test]
fn device_the_machine_does_not_have() {
    let (line, msg) =
        error_of("base = \"dgx1-v100\"\n[[lanes]]\na = \"gpu0\"\nb = \"gpu9\"\nlanes = 2\n");
    assert_eq!(line, 4);
    assert!(msg.contains("`gpu9`, which is not a device of `dgx1-v100`"), "{msg}");
    assert!(msg.contains("use one of its devices: cpu0, cpu1"), "{msg}");
}

#[test]
fn link_type_the_machine_does_not_have() {
    let (line, msg) = error_of("base = \"dgx1-v100\"\n\n[link_type.edr]\nbandwidth_gb_s = 25.0\n");
    assert_eq!(line, 3);
    assert!(msg.contains("has no link type `edr`"), "{msg}");
    assert!(msg.contains("edit one of its link types: nvlink2, pcie3, qpi"), "{msg}");
    let (line, msg) = error_of("base = \"dgx1-v100\"\n[[lanes]]\ntype = \"nvlink3\"\nlanes = 2\n");
    assert_eq!(line, 3);
    assert!(msg.contains("link type `nvlink3`, which `dgx1-v100` does not have"), "{msg}");
}

#[test]
fn wrong_type_for_a_linked_pair() {
    let (line, msg) = error_of(
        "base = \"dgx1-v100\"\n[[lanes]]\na = \"gpu0\"\nb = \"plx0\"\ntype = \"nvlink2\"\nlanes = 2\n",
    );
    assert_eq!(line, 5);
    assert!(msg.contains("joined by a `pcie3` link, not `nvlink2`"), "{msg}");
}

#[test]
fn key_the_overlay_does_not_know() {
    let (line, msg) = error_of("base = \"dgx1-v100\"\n[[lanes]]\ntype = \"nvlink2\"\nlane = 2\n");
    assert_eq!(line, 4);
    assert!(msg.contains("unknown field `lane`"), "{msg}");
    assert!(msg.contains("check the key's spelling"), "{msg}");
    let (line, msg) = error_of("base = \"dgx1-v100\"\n[link_type.nvlink2]\nkind = \"pcie\"\n");
    assert_eq!(line, 3);
    assert!(msg.contains("unknown field `kind`"), "{msg}");
    let (line, msg) = error_of("base = \"dgx1-v100\"\ngpus = 4\n");
    assert_eq!(line, 2);
    assert!(msg.contains("unknown field `gpus`"), "{msg}");
}

#[test]
fn edit_that_makes_a_gpu_unreachable() {
    // gpu0's only links: PCIe to plx0 and NVLink to gpu1-gpu4; GPUs do not forward.
    let (line, msg) = error_of(
        "base = \"dgx1-v100\"\n[[lanes]]\na = \"gpu1\"\nb = \"gpu2\"\nlanes = 3\n\n[[lanes]]\na = \"gpu0\"\nb = \"plx0\"\nlanes = 0\n",
    );
    assert_eq!(line, 7, "the second edit cuts gpu0 off: {msg}");
    assert!(
        msg.starts_with("`[[lanes]]` is invalid: gpu `gpu5` has no route to gpu `gpu0`"),
        "{msg}"
    );
    assert!(msg.contains("keep a link that joins it to the rest of the machine"), "{msg}");
    // Every PCIe link gone: no GPU reaches host memory.
    let (line, msg) = error_of("base = \"dgx1-v100\"\n[[lanes]]\ntype = \"pcie3\"\nlanes = 0\n");
    assert_eq!(line, 2);
    assert!(msg.contains("has no route"), "{msg}");
}

#[test]
fn nvswitch_without_a_mesh_and_nodes_on_one_machine() {
    let (line, msg) = error_of("base = \"m60x8-pcie\"\n[nvswitch]\n");
    assert_eq!(line, 2);
    assert!(msg.contains("`m60x8-pcie` has no NVLink between GPUs to replace"), "{msg}");
    let (line, msg) = error_of("base = \"dgx1-v100\"\nnodes = 2\n");
    assert_eq!(line, 2);
    assert!(msg.contains("`dgx1-v100` is one machine"), "{msg}");
    assert!(msg.contains("use --gpus"), "{msg}");
}

#[test]
fn unknown_base_and_unknown_model() {
    let (line, msg) = error_of("# a what-if\nbase = \"dgx2\"\n");
    assert_eq!(line, 2);
    assert!(msg.contains("base `dgx2` is neither a bundled machine nor a readable file"), "{msg}");
    assert!(msg.contains("dgx1-v100"), "{msg}");
    let (line, msg) = error_of("base = \"dgx1-v100\"\ngpu_model = \"A100\"\n");
    assert_eq!(line, 2);
    assert!(msg.contains("`gpu_model` = `A100` is not a GPU model"), "{msg}");
    assert!(msg.contains("H100-SXM5-80GB"), "{msg}");
}

#[test]
fn out_of_range_value_is_reported_at_the_edit() {
    let (line, msg) = error_of("base = \"summit-ib-x8\"\n[link_type.edr]\nbandwidth_gb_s = -1.0\n");
    assert_eq!(line, 2);
    assert!(
        msg.contains("`[link_type.edr]` is invalid: `bandwidth_gb_s` must be a positive number"),
        "{msg}"
    );
}

/// A machine file of `topologies/calibrated/`, by name.
fn calibrated(file: &str) -> String {
    format!("{}/../topologies/calibrated/{file}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn calibrated_model_on_another_cards_memory() {
    let t = Topology::open(&calibrated("h200-nvswitch-x4.toml")).unwrap_or_else(|e| panic!("{e}"));
    let base = Topology::open(&calibrated("h100-nvswitch-x4.toml")).unwrap();
    assert_eq!(t.name, "h200-nvswitch-x4");
    assert_eq!(t.gpus.len(), 4);
    let (now, was) = (&t.gpus[0].model, &base.gpus[0].model);
    assert_eq!(now.memory_bytes, 143_771 << 20);
    assert_eq!(now.memory_bandwidth_bytes_per_s, 4_800_000_000_000);
    assert_ne!(was.memory_bandwidth_bytes_per_s, now.memory_bandwidth_bytes_per_s);
    // Everything else of the fit is kept: the host model and every kernel's cost.
    assert_eq!(now.host, was.host);
    assert!(!was.kernel_costs.is_empty());
    assert_eq!(now.kernel_costs, was.kernel_costs);
    assert_eq!(now.sync_overhead_ps, was.sync_overhead_ps);
    assert_eq!(t.fabric(), base.fabric());
    let info = t.overlay.as_ref().unwrap();
    assert_eq!(
        info.changes,
        ["gpu memory of calibrated-NVIDIA-H100-80GB-HBM3: 143771 MiB, 4800 GB/s"]
    );
}

#[test]
fn gpu_memory_needs_a_model_the_file_defines() {
    let (line, msg) = error_of("base = \"dgx-h100x8\"\n\n[gpu_memory]\nmib = 143771\n");
    assert_eq!(line, 3);
    assert!(msg.contains("its GPUs use the bundled model(s) H100-SXM5-80GB"), "{msg}");
    assert!(msg.contains("pick the other card with `gpu_model"), "{msg}");
    let (line, msg) = error_of("base = \"dgx-h100x8\"\n[gpu_memory]\n");
    assert_eq!(line, 2);
    assert!(msg.contains("`[gpu_memory]` changes nothing | give `mib`"), "{msg}");
}

#[test]
fn gpu_memory_values_out_of_range() {
    let base = calibrated("h100-nvswitch-x4.toml");
    for (edit, says) in [
        ("mib = 0", "mib = 0 is not a memory size"),
        ("bandwidth_gb_s = -1.0", "bandwidth_gb_s = -1 is not a bandwidth"),
    ] {
        let (line, msg) = error_of(&format!("base = \"{base}\"\n[gpu_memory]\n{edit}\n"));
        assert_eq!(line, 2, "{msg}");
        assert!(msg.contains(says), "{msg}");
    }
}
