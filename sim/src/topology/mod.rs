//! Machine topologies: loaded from TOML files (`topologies/*.toml`, schema in
//! `topologies/SCHEMA.md`), validated, and resolved to a [`Fabric`] of directed channels and
//! routes that the interconnect models consume.
//!
//! # Routing rule
//!
//! Between every ordered pair of endpoints (GPUs and host memories) the route is the path
//! with the **fewest hops**; among those, the one with the **highest bottleneck bandwidth**;
//! among those, at every hop the **lowest-numbered channel** (channels are numbered in the
//! file's `[[link]]` order, two per link: `a->b` then `b->a`). GPUs are not routers: a route
//! never passes *through* a GPU unless a `[[route]]` override in the file says so. Sockets,
//! PCIe switches, NVSwitches, NICs and InfiniBand switches forward.
//!
//! # Peer access
//!
//! A GPU pair has peer access (a direct DMA between them) unless its route crosses a link
//! type with `peer_access = false` (QPI on a PCIe tree: seed 000 section 2.1); such copies
//! are staged through host memory. `[[peer]]` entries override this per pair. Host memory
//! is reachable from every GPU.

pub mod bench;
mod build;
mod bundled;
mod overlay;
mod render;
mod routing;
mod schema;
mod source;

use std::path::Path;

pub use bundled::{bundled_names, text as bundled_text};
pub use overlay::OverlayInfo;
pub use render::PairClass;
pub use source::fnv1a_64;

use crate::error::SimError;
use crate::fabric::{EndpointId, Fabric, Route};
use crate::fault::{FaultSpec, Faults};
use crate::gpu::GpuModel;
use crate::time::TimePs;
use std::collections::{BTreeMap, BTreeSet};

/// What kind of device a node of the topology graph is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceKind {
    /// A CPU socket with its root complex and host memory.
    Socket,
    /// A PCIe switch (PLX/PEX), including the bridge on a dual-GPU board.
    PcieSwitch,
    /// An NVSwitch (all NVSwitch chips of a baseboard may be modelled as one).
    NvSwitch,
    /// An InfiniBand switch.
    IbSwitch,
    /// A network interface (InfiniBand HCA).
    Nic,
    /// A GPU.
    Gpu,
}

impl DeviceKind {
    /// Whether routes may pass through a device of this kind (all but GPUs).
    pub fn forwards(self) -> bool {
        self != DeviceKind::Gpu
    }

    /// The name used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Socket => "socket",
            DeviceKind::PcieSwitch => "pcie switch",
            DeviceKind::NvSwitch => "nvswitch",
            DeviceKind::IbSwitch => "infiniband switch",
            DeviceKind::Nic => "nic",
            DeviceKind::Gpu => "gpu",
        }
    }
}

/// One device (node of the topology graph).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Unique name from the file.
    pub name: String,
    /// What it is.
    pub kind: DeviceKind,
    /// The machine (node of a cluster) it belongs to; empty for single-machine files.
    pub node: String,
    /// Line of its declaration in the file.
    pub line: usize,
}

/// Family of a link, which decides how `topo show` labels GPU pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// PCI Express.
    Pcie,
    /// NVLink (to a GPU, a CPU or an NVSwitch).
    Nvlink,
    /// A CPU-to-CPU link: QPI, UPI, X-Bus.
    Smp,
    /// InfiniBand.
    Infiniband,
}

impl LinkKind {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Pcie => "pcie",
            LinkKind::Nvlink => "nvlink",
            LinkKind::Smp => "smp",
            LinkKind::Infiniband => "infiniband",
        }
    }
}

/// Parameters of a kind of link, per lane and per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkType {
    /// Name from the file (`[link_type.NAME]`).
    pub name: String,
    /// Family.
    pub kind: LinkKind,
    /// Bandwidth of one lane in one direction, GB/s (10^9 bytes per second).
    pub bandwidth_gb_s: f64,
    /// One-way latency of a hop over this link, ns.
    pub latency_ns: f64,
    /// Largest payload of one packet, bytes.
    pub max_payload_bytes: u32,
    /// Header and framing bytes per packet, bytes.
    pub header_bytes: u32,
    /// Whether GPU peer access works across this link.
    pub peer_access: bool,
    /// Per-transfer setup cost of a transfer whose route crosses this link (e.g. posting an
    /// InfiniBand work request), ns.
    pub setup_ns: f64,
}

/// A physical link between two devices.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Index into [`Topology::devices`] of the `a` end.
    pub a: usize,
    /// Index into [`Topology::devices`] of the `b` end.
    pub b: usize,
    /// Index into [`Topology::link_types`].
    pub link_type: usize,
    /// Lanes (bricks, PCIe lanes, rails) aggregated into this link.
    pub lanes: u32,
    /// Line of the `[[link]]` in the file.
    pub line: usize,
}

/// A GPU of the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuSpec {
    /// GPU number, 0-based, in file order.
    pub index: u32,
    /// Name from the file.
    pub name: String,
    /// Its performance model.
    pub model: GpuModel,
    /// Copy engines: how many transfers it sources at once.
    pub copy_engines: u32,
    /// Its endpoint in the fabric.
    pub endpoint: EndpointId,
    /// Index into [`Topology::devices`].
    pub device: usize,
    /// The socket whose host memory stages its copies when peer access is missing (the
    /// nearest one by route hops, then lowest index).
    pub home_socket: u32,
}

/// A CPU socket with its host memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketSpec {
    /// Socket number, 0-based, in file order.
    pub index: u32,
    /// Name from the file.
    pub name: String,
    /// The endpoint of its host memory in the fabric.
    pub endpoint: EndpointId,
    /// Index into [`Topology::devices`].
    pub device: usize,
}

/// A validated machine topology.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Name from the file's `name` key.
    pub name: String,
    /// Free-text description from the file.
    pub description: String,
    /// Where it was loaded from: a path, or `bundled:NAME`.
    pub source: String,
    /// For a calibrated file: the GPU it was measured on, as the driver names it (the
    /// file's `measured_on` key; `None` for hand-written machines).
    pub measured_on: Option<String>,
    /// FNV-1a 64 of the file's bytes (see [`fnv1a_64`]).
    pub source_hash: u64,
    /// GPUs in file order; `gpus[i].index == i`.
    pub gpus: Vec<GpuSpec>,
    /// Sockets in file order; `sockets[i].index == i`.
    pub sockets: Vec<SocketSpec>,
    /// All devices: sockets, switches, NICs, GPUs, in that order and file order within.
    pub devices: Vec<Device>,
    /// Link types by name order.
    pub link_types: Vec<LinkType>,
    /// Links in file order; link `i` owns fabric channels `2i` (a->b) and `2i+1` (b->a).
    pub links: Vec<Link>,
    /// Device path of every route, parallel to `fabric.routes` (devices from source to
    /// destination, both included).
    route_devices: std::collections::BTreeMap<(EndpointId, EndpointId), Vec<usize>>,
    fabric: Fabric,
    /// Faults injected during a run (none unless [`Topology::with_faults`] added them).
    faults: Faults,
    /// The overlay this machine was derived by, if it was (`source` is then the overlay's
    /// path and `source_hash` the hash of the derived machine's canonical TOML).
    pub overlay: Option<OverlayInfo>,
}

impl Topology {
    /// Loads and validates a topology file.
    pub fn load(path: impl AsRef<Path>) -> Result<Topology, SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|source| SimError::TopologyIo { file: file.clone(), source })?;
        Topology::build_any(&file, &text, path.parent())
    }

    /// Parses and validates topology text, or an overlay (a table with `base`: see
    /// `topologies/SCHEMA.md`, whose relative `base` path is taken from the current
    /// folder); `name` is what error messages call the file.
    pub fn from_str(name: &str, text: &str) -> Result<Topology, SimError> {
        Topology::build_any(name, text, None)
    }

    /// A topology file, or an overlay derived against its base.
    fn build_any(file: &str, text: &str, dir: Option<&Path>) -> Result<Topology, SimError> {
        if !overlay::is_overlay(text) {
            return build::build(file, text);
        }
        let (derived, info) = overlay::derive(file, text, dir, 0)?;
        let mut t = build::build(&format!("{file} (derived)"), &derived)?;
        t.source = file.to_string();
        t.source_hash = fnv1a_64(derived.as_bytes());
        t.overlay = Some(info);
        Ok(t)
    }

    /// One of the topologies embedded in the binary (see [`bundled_names`]).
    pub fn bundled(name: &str) -> Result<Topology, SimError> {
        let text = bundled::text(name).ok_or_else(|| SimError::UnknownTopology {
            name: name.to_string(),
            known: bundled_names().join(", "),
        })?;
        build::build(&format!("bundled:{name}"), text)
    }

    /// Names of the bundled topologies, sorted (same as [`bundled_names`]).
    pub fn bundled_names() -> Vec<&'static str> {
        bundled_names()
    }

    /// A bundled name, or else a path to a file.
    pub fn open(name_or_path: &str) -> Result<Topology, SimError> {
        if bundled::text(name_or_path).is_some() {
            Topology::bundled(name_or_path)
        } else if Path::new(name_or_path).exists() || name_or_path.ends_with(".toml") {
            Topology::load(name_or_path)
        } else {
            Topology::bundled(name_or_path)
        }
    }

    /// A warning when this is a calibrated file (`measured_on`) and `device` (the GPU it is
    /// now used with, as the driver names it) is another GPU: its constants describe the
    /// machine it was measured on. `None` for hand-written files and for the same GPU.
    pub fn calibration_mismatch(&self, device: &str) -> Option<String> {
        let measured = self.measured_on.as_deref()?;
        (!device.trim().starts_with(measured.trim())).then(|| {
            format!(
                "warning: topology `{}` ({}) was calibrated on `{measured}`, but this run uses                  `{device}`: its kernel costs and overheads describe the other GPU; run                  `switchyard calibrate machine` here for a file of this machine",
                self.name, self.source
            )
        })
    }

    /// The resolved interconnect: endpoints, directed channels, routes.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The same machine with `specs` injected during runs on it (replacing any faults it
    /// had): links named by their devices, GPUs by index, checked here. See
    /// [`crate::fault`].
    pub fn with_faults(mut self, specs: &[FaultSpec]) -> Result<Topology, SimError> {
        self.faults = crate::fault::resolve(&self, specs)?;
        Ok(self)
    }

    /// The faults injected during runs on this machine (empty unless
    /// [`Topology::with_faults`] added some).
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The routes between endpoints when the links in `failed` (indices into
    /// [`Topology::links`]) carry nothing: a route that avoids them is kept, any other is
    /// chosen again by the loader's rule (fewest hops, widest, GPUs never forward), and a pair
    /// no route joins any more is left out. Peer access follows the link types of the new
    /// route, unless a `[[peer]]` entry had overridden it.
    pub fn routes_avoiding(
        &self,
        failed: &BTreeSet<usize>,
    ) -> BTreeMap<(EndpointId, EndpointId), Route> {
        let graph =
            routing::Graph::without(&self.devices, &self.links, &self.fabric.channels, failed);
        let endpoint_devices: Vec<usize> = self
            .gpus
            .iter()
            .map(|g| g.device)
            .chain(self.sockets.iter().map(|s| s.device))
            .collect();
        let types_allow_peer = |channels: &[crate::fabric::ChannelId]| {
            channels.iter().all(|c| self.link_types[self.link_of_channel(*c).link_type].peer_access)
        };
        let gpus = self.gpus.len();
        let mut routes = BTreeMap::new();
        for (si, &sd) in endpoint_devices.iter().enumerate() {
            let tree = graph.shortest_widest(sd);
            for (di, &dd) in endpoint_devices.iter().enumerate() {
                if si == di {
                    continue;
                }
                let key = (EndpointId(si as u32), EndpointId(di as u32));
                let old = self.fabric.routes.get(&key);
                if let Some(old) = old
                    && old.channels.iter().all(|c| !failed.contains(&(c.0 as usize / 2)))
                {
                    routes.insert(key, old.clone());
                    continue;
                }
                let Some((channels, _)) = tree.path_to(dd) else { continue };
                let both_gpus = si < gpus && di < gpus;
                let overridden =
                    old.is_some_and(|o| o.peer_access != types_allow_peer(&o.channels));
                let peer_access = match old {
                    Some(o) if overridden => o.peer_access,
                    _ => !both_gpus || types_allow_peer(&channels),
                };
                routes.insert(key, Route { channels, peer_access });
            }
        }
        routes
    }

    /// Fabric endpoint of GPU `index`.
    pub fn gpu_endpoint(&self, index: u32) -> Option<EndpointId> {
        self.gpus.get(index as usize).map(|g| g.endpoint)
    }

    /// Fabric endpoint of the host memory of socket `index`.
    pub fn host_endpoint(&self, socket: u32) -> Option<EndpointId> {
        self.sockets.get(socket as usize).map(|s| s.endpoint)
    }

    /// The host memory that stages copies from or to GPU `index` (its home socket's).
    pub fn staging_host(&self, gpu: u32) -> Option<EndpointId> {
        let g = self.gpus.get(gpu as usize)?;
        self.host_endpoint(g.home_socket)
    }

    /// Whether GPUs `a` and `b` have peer access (true for `a == b`).
    pub fn peer_access(&self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        match (self.gpu_endpoint(a), self.gpu_endpoint(b)) {
            (Some(x), Some(y)) => self.fabric.route(x, y).is_some_and(|r| r.peer_access),
            _ => false,
        }
    }

    /// Devices a route passes, source and destination included.
    pub fn route_devices(&self, src: EndpointId, dst: EndpointId) -> Option<&[usize]> {
        self.route_devices.get(&(src, dst)).map(Vec::as_slice)
    }

    /// The link a fabric channel belongs to.
    pub fn link_of_channel(&self, channel: crate::fabric::ChannelId) -> &Link {
        &self.links[channel.0 as usize / 2]
    }

    /// Setup cost of one transfer from `src` to `dst`, paid before its first byte moves.
    ///
    /// A transfer whose route crosses a link type with `setup_ns > 0` (InfiniBand: the NIC
    /// drives it, GPUDirect RDMA) pays the largest such `setup_ns`. Any other transfer is
    /// executed by a GPU copy engine and pays that GPU's model `copy_setup_ns` (the source
    /// GPU's, or the destination GPU's for a host-to-GPU copy); host-to-host pays nothing.
    pub fn transfer_setup_ps(&self, src: EndpointId, dst: EndpointId) -> TimePs {
        let link_setup = self.fabric.route(src, dst).map_or(0, |r| {
            r.channels
                .iter()
                .map(|&c| {
                    let lt = &self.link_types[self.link_of_channel(c).link_type];
                    (lt.setup_ns * 1000.0).round() as TimePs
                })
                .max()
                .unwrap_or(0)
        });
        if link_setup > 0 {
            return link_setup;
        }
        let gpu_of = |e: EndpointId| self.gpus.iter().find(|g| g.endpoint == e);
        gpu_of(src).or_else(|| gpu_of(dst)).map_or(0, |g| g.model.copy_setup_ps)
    }

    /// How GPUs `a` and `b` are connected, in `nvidia-smi topo -m` terms.
    pub fn pair_class(&self, a: u32, b: u32) -> PairClass {
        render::pair_class(self, a, b)
    }

    /// The GPU link matrix in the style of `nvidia-smi topo -m`, with a legend.
    pub fn matrix(&self) -> String {
        render::matrix(self)
    }

    /// An SVG drawing of the machine.
    pub fn svg(&self) -> String {
        render::svg(self)
    }
}
