//! The Groute runtime (seed 000): asynchronous multi-GPU programming with low-latency
//! messages between GPUs instead of global barriers, written once against the backend
//! trait.
//!
//! - [`context`]: endpoints, segments, links with pipelined receivers, routers with a
//!   segmenter, a routing policy and a multiplexer, socket-like shutdown, and the event
//!   loop ([`context::Context`]).
//! - [`policy`]: routing policies (any available, ring, broadcast, scatter, gather, tree
//!   reduction pairing siblings by the topology).
//! - [`worklist`]: the distributed worklist and its applications (BFS, SSSP, residual
//!   PageRank), with soft-priority scheduling and the fused worker.
//! - [`filter`]: predicate-based filtering (Figs. 5-6, Table 5).
//! - [`cc`]: topology-driven connected components over an edge list (Fig. 15).
//! - [`collectives`]: packetized ring broadcast vs direct one-to-all copies (Fig. 2d).

pub mod cc;
pub mod collectives;
pub mod context;
pub mod filter;
pub mod policy;
pub mod worklist;

pub use context::{
    Context, Endpoint, Event, LinkConfig, LinkId, LinkTraffic, Received, ReceivedData, RouterId,
    Segment, SegmentData,
};
pub use policy::{
    Policy, Route, RouteMode, RoutingPolicy, SegmentInfo, reduction_tree, widest_chain, widest_ring,
};

/// Registers every Groute kernel.
pub fn register(registry: &mut crate::backend::KernelRegistry) {
    worklist::kernels::register(registry);
    filter::register(registry);
    cc::register(registry);
}
