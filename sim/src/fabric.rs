//! The resolved interconnect of a machine: directed channels and the route between every
//! pair of endpoints. The topology loader (`topology`) produces a `Fabric`; the interconnect
//! models (`interconnect`) consume one. This is the contract between the two.

use std::collections::BTreeMap;

/// Index of an endpoint (a GPU, a host memory, a NIC...) in [`Fabric::endpoints`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointId(pub u32);

/// Index of a directed channel in [`Fabric::channels`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChannelId(pub u32);

/// What an endpoint is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointKind {
    /// GPU number `index` (0-based, in the topology file's order).
    Gpu { index: u32 },
    /// Host memory attached to CPU socket `socket`.
    HostMemory { socket: u32 },
}

/// An endpoint of the fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Name as given in the topology file (e.g. `gpu3`, `socket0`).
    pub name: String,
    /// What it is.
    pub kind: EndpointKind,
    /// Number of copy engines: how many transfers it can source at once (a GPU transmits
    /// to one destination per engine at a time). Host memory uses `u32::MAX`.
    pub copy_engines: u32,
}

/// One direction of a physical link, with all its lanes aggregated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// Human-readable name, e.g. `nvlink gpu0->gpu3 (2 lanes)`.
    pub name: String,
    /// Bandwidth in this direction, all lanes together, in bytes per second.
    pub bandwidth_bytes_per_s: u64,
    /// One-way latency of this hop in picoseconds.
    pub latency_ps: u64,
    /// Largest payload one packet carries on this hop, in bytes.
    pub max_payload_bytes: u32,
    /// Header/framing bytes added to every packet on this hop.
    pub header_bytes: u32,
}

/// The path data takes from one endpoint to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Channels crossed, in order.
    pub channels: Vec<ChannelId>,
    /// Whether the two endpoints have peer access (a direct DMA between them). A GPU pair
    /// without it is staged through host memory: the copy is two transfers, GPU->host and
    /// host->GPU, each taking its own route.
    pub peer_access: bool,
}

/// A machine's interconnect, resolved to channels and routes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fabric {
    /// All endpoints.
    pub endpoints: Vec<Endpoint>,
    /// All directed channels.
    pub channels: Vec<Channel>,
    /// Route for every ordered pair of distinct endpoints that can reach each other.
    pub routes: BTreeMap<(EndpointId, EndpointId), Route>,
}

impl Fabric {
    /// Route from `src` to `dst`, if there is one.
    pub fn route(&self, src: EndpointId, dst: EndpointId) -> Option<&Route> {
        self.routes.get(&(src, dst))
    }

    /// Endpoint id of GPU `index`, if the machine has it.
    pub fn gpu(&self, index: u32) -> Option<EndpointId> {
        self.endpoints
            .iter()
            .position(|e| e.kind == EndpointKind::Gpu { index })
            .map(|p| EndpointId(p as u32))
    }

    /// Number of GPUs.
    pub fn gpu_count(&self) -> u32 {
        self.endpoints.iter().filter(|e| matches!(e.kind, EndpointKind::Gpu { .. })).count() as u32
    }

    /// Bottleneck bandwidth of a route in bytes per second (0 for an empty route).
    pub fn bottleneck_bytes_per_s(&self, route: &Route) -> u64 {
        route
            .channels
            .iter()
            .map(|c| self.channels[c.0 as usize].bandwidth_bytes_per_s)
            .min()
            .unwrap_or(0)
    }

    /// Sum of the hop latencies of a route in picoseconds.
    pub fn latency_ps(&self, route: &Route) -> u64 {
        route.channels.iter().map(|c| self.channels[c.0 as usize].latency_ps).sum()
    }
}
