//! Human-facing renderings of a topology: the `nvidia-smi topo -m` style GPU matrix and an
//! SVG drawing. Deterministic: the same topology gives byte-identical output.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::{DeviceKind, LinkKind, Topology};

/// How two GPUs are connected, in `nvidia-smi topo -m` terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PairClass {
    /// The GPU itself.
    SelfPair,
    /// NVLink with this many lanes (directly, or through NVSwitch: the smaller of the two
    /// GPUs' lane counts).
    Nv(u32),
    /// Through a single PCIe switch.
    Pix,
    /// Through several PCIe switches, not a host bridge.
    Pxb,
    /// Through a PCIe host bridge (a CPU socket).
    Phb,
    /// Across the link between CPU sockets (QPI/UPI/X-Bus).
    Sys,
    /// Across the network (InfiniBand).
    Net,
}

impl fmt::Display for PairClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairClass::SelfPair => f.write_str("X"),
            PairClass::Nv(n) => write!(f, "NV{n}"),
            PairClass::Pix => f.write_str("PIX"),
            PairClass::Pxb => f.write_str("PXB"),
            PairClass::Phb => f.write_str("PHB"),
            PairClass::Sys => f.write_str("SYS"),
            PairClass::Net => f.write_str("NET"),
        }
    }
}

pub(crate) fn pair_class(t: &Topology, a: u32, b: u32) -> PairClass {
    if a == b {
        return PairClass::SelfPair;
    }
    let (Some(x), Some(y)) = (t.gpu_endpoint(a), t.gpu_endpoint(b)) else {
        return PairClass::Net;
    };
    let (Some(route), Some(devs)) = (t.fabric().route(x, y), t.route_devices(x, y)) else {
        return PairClass::Net;
    };
    let links: Vec<_> = route.channels.iter().map(|&c| t.link_of_channel(c)).collect();
    let kinds: Vec<LinkKind> = links.iter().map(|l| t.link_types[l.link_type].kind).collect();
    let inner = &devs[1..devs.len().saturating_sub(1)];
    let inner_kind = |k: DeviceKind| inner.iter().filter(|&&d| t.devices[d].kind == k).count();
    if kinds.iter().all(|&k| k == LinkKind::Nvlink)
        && inner_kind(DeviceKind::NvSwitch) == inner.len()
    {
        return PairClass::Nv(links.iter().map(|l| l.lanes).min().unwrap_or(0));
    }
    if kinds.contains(&LinkKind::Infiniband) {
        PairClass::Net
    } else if kinds.contains(&LinkKind::Smp) || !route.peer_access {
        PairClass::Sys
    } else if inner_kind(DeviceKind::Socket) > 0 {
        PairClass::Phb
    } else if inner_kind(DeviceKind::PcieSwitch) > 1 {
        PairClass::Pxb
    } else {
        PairClass::Pix
    }
}

pub(crate) fn matrix(t: &Topology) -> String {
    let n = t.gpus.len() as u32;
    let width = t.gpus.iter().map(|g| g.name.len()).max().unwrap_or(4).max(5) + 2;
    let mut s = String::new();
    let _ = write!(s, "{:width$}", "");
    for g in &t.gpus {
        let _ = write!(s, "{:<width$}", g.name);
    }
    let _ = writeln!(s, "{:<10}Peer access", "Host");
    for a in 0..n {
        let _ = write!(s, "{:<width$}", t.gpus[a as usize].name);
        let mut no_peer = Vec::new();
        for b in 0..n {
            let _ = write!(s, "{:<width$}", t.pair_class(a, b).to_string());
            if !t.peer_access(a, b) {
                no_peer.push(t.gpus[b as usize].name.as_str());
            }
        }
        let home = &t.sockets.get(t.gpus[a as usize].home_socket as usize);
        let _ = write!(s, "{:<10}", home.map_or("-", |h| h.name.as_str()));
        if no_peer.is_empty() {
            let _ = writeln!(s, "all");
        } else {
            let _ = writeln!(s, "staged to {}", no_peer.join(","));
        }
    }
    s.push_str(
        "\nLegend:\n  X    = self\n  NV#  = NVLink with # lanes (through NVSwitch: the \
         smaller lane count)\n  PIX  = through a single PCIe switch\n  PXB  = through \
         several PCIe switches, no host bridge\n  PHB  = through a PCIe host bridge (CPU \
         socket)\n  SYS  = across the CPU-to-CPU link (QPI/UPI/X-Bus)\n  NET  = across \
         the network (InfiniBand)\n",
    );
    s
}

const BOX_W: i64 = 104;
const BOX_H: i64 = 40;
const COL_W: i64 = 120;
const ROW_H: i64 = 110;
const MARGIN: i64 = 40;

fn color(kind: LinkKind) -> &'static str {
    match kind {
        LinkKind::Pcie => "#7f7f7f",
        LinkKind::Nvlink => "#2ca02c",
        LinkKind::Smp => "#1f77b4",
        LinkKind::Infiniband => "#ff7f0e",
    }
}

fn fill(kind: DeviceKind) -> &'static str {
    match kind {
        DeviceKind::Socket => "#dbe9f6",
        DeviceKind::PcieSwitch => "#eeeeee",
        DeviceKind::NvSwitch => "#d9f2d9",
        DeviceKind::IbSwitch => "#ffe5cc",
        DeviceKind::Nic => "#fff2cc",
        DeviceKind::Gpu => "#c7e9c0",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Row of every device: InfiniBand switches on top (spines above leaves), then sockets, then
/// each switch or NIC by its hop distance from the nearest socket, GPUs at the bottom.
fn rows(t: &Topology) -> Vec<usize> {
    let n = t.devices.len();
    let mut adj = vec![Vec::new(); n];
    for l in &t.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    let bfs = |starts: Vec<usize>, through: &dyn Fn(DeviceKind) -> bool| {
        let mut dist = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for s in starts {
            dist[s] = 0;
            queue.push_back(s);
        }
        while let Some(u) = queue.pop_front() {
            for &v in &adj[u] {
                if dist[v] == usize::MAX && through(t.devices[v].kind) {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        dist
    };
    let kind_of = |k: DeviceKind| (0..n).filter(|&i| t.devices[i].kind == k).collect::<Vec<_>>();
    let ib = bfs(kind_of(DeviceKind::Nic), &|k| k == DeviceKind::IbSwitch);
    let ib_levels =
        (0..n).filter(|&i| t.devices[i].kind == DeviceKind::IbSwitch && ib[i] != usize::MAX);
    let ib_max = ib_levels.map(|i| ib[i]).max().unwrap_or(0);
    let host = bfs(kind_of(DeviceKind::Socket), &|k| {
        !matches!(k, DeviceKind::Gpu | DeviceKind::IbSwitch | DeviceKind::Socket)
    });
    let has_ib = t.devices.iter().any(|d| d.kind == DeviceKind::IbSwitch);
    // With a network, NICs get their own row between the switches and the sockets.
    let host_row = if has_ib { ib_max + 2 } else { ib_max + 1 };
    let mut row = vec![0usize; n];
    let mut deepest = ib_max;
    for i in 0..n {
        let d = &t.devices[i];
        row[i] = match d.kind {
            DeviceKind::IbSwitch => ib_max - ib[i].min(ib_max),
            DeviceKind::Nic if has_ib => ib_max + 1,
            DeviceKind::Gpu => 0,
            _ => host_row + if host[i] == usize::MAX { 1 } else { host[i] },
        };
        if d.kind != DeviceKind::Gpu {
            deepest = deepest.max(row[i]);
        }
    }
    for (r, d) in row.iter_mut().zip(&t.devices) {
        if d.kind == DeviceKind::Gpu {
            *r = deepest + 1;
        }
    }
    row
}

pub(crate) fn svg(t: &Topology) -> String {
    let row = rows(t);
    let mut by_row: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &r) in row.iter().enumerate() {
        by_row.entry(r).or_default().push(i);
    }
    let cols = by_row.values().map(Vec::len).max().unwrap_or(1) as i64;
    let width = 2 * MARGIN + cols * COL_W;
    let rows_n = by_row.keys().next_back().map_or(1, |&r| r as i64 + 1);
    let height = 2 * MARGIN + rows_n * ROW_H + 60 + 20 * 5;
    let mut pos = vec![(0i64, 0i64); t.devices.len()];
    for (&r, devs) in &by_row {
        let offset = (cols - devs.len() as i64) * COL_W / 2;
        for (k, &d) in devs.iter().enumerate() {
            pos[d] =
                (MARGIN + offset + k as i64 * COL_W + COL_W / 2, MARGIN + 30 + r as i64 * ROW_H);
        }
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(s, "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"{MARGIN}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        MARGIN - 10,
        escape(&t.name)
    );
    // A dashed frame around the devices of each named node (machine of a cluster).
    let mut nodes: BTreeMap<&str, (i64, i64, i64, i64)> = BTreeMap::new();
    for (i, d) in t.devices.iter().enumerate() {
        if d.node.is_empty() {
            continue;
        }
        let (x, y) = pos[i];
        let e = nodes.entry(d.node.as_str()).or_insert((x, y, x, y));
        *e = (e.0.min(x), e.1.min(y), e.2.max(x), e.3.max(y));
    }
    for (name, (x0, y0, x1, y1)) in &nodes {
        let (x, y) = (x0 - BOX_W / 2 - 6, y0 - BOX_H / 2 - 18);
        let (w, h) = (x1 - x0 + BOX_W + 12, y1 - y0 + BOX_H + 24);
        let _ = writeln!(
            s,
            "<rect class=\"node\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"8\" \
             fill=\"none\" stroke=\"#999\" stroke-dasharray=\"4 3\"/><text x=\"{}\" y=\"{}\" \
             font-size=\"9\" fill=\"#666\">{}</text>",
            x + 4,
            y + 11,
            escape(name)
        );
    }
    for l in &t.links {
        let lt = &t.link_types[l.link_type];
        let (ax, ay) = pos[l.a];
        let (bx, by) = pos[l.b];
        let stroke = 1 + (32 - l.lanes.leading_zeros()) as i64;
        let c = color(lt.kind);
        let gbs = lt.bandwidth_gb_s * f64::from(l.lanes);
        let title = format!(
            "{} {} - {}: {} x {} GB/s",
            lt.name, t.devices[l.a].name, t.devices[l.b].name, l.lanes, lt.bandwidth_gb_s
        );
        let (mx, my);
        if ay == by {
            // Same row (GPU-to-GPU): an arc below the row, deeper for farther pairs.
            let depth = BOX_H / 2 + 12 + (ax - bx).abs() / 6;
            let cy = ay + depth * 2;
            mx = (ax + bx) / 2;
            my = ay + depth;
            let _ = writeln!(
                s,
                "<path d=\"M {ax} {} Q {mx} {cy} {bx} {}\" fill=\"none\" stroke=\"{c}\" \
                 stroke-width=\"{stroke}\" opacity=\"0.8\"><title>{}</title></path>",
                ay + BOX_H / 2,
                by + BOX_H / 2,
                escape(&title)
            );
        } else {
            mx = (ax + bx) / 2;
            my = (ay + by) / 2;
            let _ = writeln!(
                s,
                "<line x1=\"{ax}\" y1=\"{ay}\" x2=\"{bx}\" y2=\"{by}\" stroke=\"{c}\" \
                 stroke-width=\"{stroke}\" opacity=\"0.8\"><title>{}</title></line>",
                escape(&title)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{mx}\" y=\"{my}\" text-anchor=\"middle\" fill=\"{c}\" font-size=\"9\" \
             stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
            format_gbs(gbs)
        );
    }
    for (i, d) in t.devices.iter().enumerate() {
        let (x, y) = pos[i];
        let sub = match d.kind {
            DeviceKind::Gpu => t
                .gpus
                .iter()
                .find(|g| g.device == i)
                .map_or(String::new(), |g| g.model.name.clone()),
            k => k.as_str().to_string(),
        };
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"5\" fill=\"{}\" \
             stroke=\"#333\"/>",
            x - BOX_W / 2,
            y - BOX_H / 2,
            fill(d.kind)
        );
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>",
            y - 3,
            escape(&d.name)
        );
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-size=\"9\">{}</text>",
            y + 11,
            escape(&sub)
        );
    }
    let mut ly = height - MARGIN - 20 * 4;
    for kind in [LinkKind::Pcie, LinkKind::Nvlink, LinkKind::Smp, LinkKind::Infiniband] {
        let _ = writeln!(
            s,
            "<line x1=\"{MARGIN}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{}\" \
             stroke-width=\"3\"/><text x=\"{}\" y=\"{}\">{}</text>",
            MARGIN + 30,
            color(kind),
            MARGIN + 38,
            ly + 4,
            kind.as_str()
        );
        ly += 18;
    }
    s.push_str("</svg>\n");
    s
}

fn format_gbs(gbs: f64) -> String {
    if gbs >= 100.0 || gbs.fract() == 0.0 {
        format!("{gbs:.0} GB/s")
    } else {
        format!("{gbs:.1} GB/s")
    }
}
