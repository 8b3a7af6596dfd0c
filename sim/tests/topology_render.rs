//! `topo show` renderings: the link matrix and the SVG drawing.

use switchyard_sim::topology::Topology;

#[test]
fn dgx1_matrix_has_the_expected_cells() {
    let t = Topology::bundled("dgx1-v100").unwrap();
    let m = t.matrix();
    let rows: Vec<Vec<&str>> = m.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0][..8], ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]);
    // Row of gpu0: X NV1 NV1 NV2 NV2 SYS SYS SYS, home socket, peer access.
    assert_eq!(
        rows[1][..10],
        ["gpu0", "X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS", "cpu0"]
    );
    assert_eq!(rows[1][10..], ["staged", "to", "gpu5,gpu6,gpu7"]);
    assert_eq!(
        rows[8][..10],
        ["gpu7", "SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X", "cpu1"]
    );
    assert!(m.contains("Legend:"));
}

#[test]
fn m60_matrix_distinguishes_pix_pxb_sys() {
    let m = Topology::bundled("m60x8-pcie").unwrap().matrix();
    let row: Vec<&str> = m.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..9], ["gpu0", "X", "PIX", "PXB", "PXB", "SYS", "SYS", "SYS", "SYS"]);
}

#[test]
fn svg_draws_every_device_and_link_deterministically() {
    for name in ["dgx1-v100", "summit-ib-x8", "m60x8-pcie"] {
        let t = Topology::bundled(name).unwrap();
        let svg = t.svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{name}");
        assert!(svg.trim_end().ends_with("</svg>"), "{name}");
        // One box per device, one frame per named node, plus the background.
        let nodes: std::collections::BTreeSet<&str> =
            t.devices.iter().map(|d| d.node.as_str()).filter(|n| !n.is_empty()).collect();
        assert_eq!(svg.matches("<rect class=\"node\"").count(), nodes.len(), "{name}");
        assert_eq!(svg.matches("<rect ").count(), t.devices.len() + nodes.len() + 1, "{name}");
        // One line or arc per link, plus the four legend lines.
        let strokes = svg.matches("<line ").count() + svg.matches("<path ").count();
        assert_eq!(strokes, t.links.len() + 4, "{name}");
        for d in &t.devices {
            assert!(svg.contains(&format!(">{}</text>", d.name)), "{name}: {}", d.name);
        }
        assert_eq!(svg, Topology::bundled(name).unwrap().svg(), "{name}: deterministic");
    }
}

#[test]
fn cluster_svg_frames_each_node() {
    let svg = Topology::bundled("summit-ib-x8").unwrap().svg();
    for n in 0..8 {
        assert!(svg.contains(&format!(">node{n}</text>")), "node{n}");
    }
}

#[test]
fn dgx1_svg_draws_nvlink_lanes_as_bandwidth() {
    let svg = Topology::bundled("dgx1-v100").unwrap().svg();
    // 8 dual-lane and 8 single-lane NVLink pairs.
    assert_eq!(svg.matches(">50 GB/s</text>").count(), 8);
    assert_eq!(svg.matches(">25 GB/s</text>").count(), 8);
}
