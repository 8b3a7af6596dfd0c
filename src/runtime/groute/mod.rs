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
//! - [`collectives`]: packetized ring broadcast vs direct one-to-all copies (Fig. 2d).

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

/// Registers the Groute runtime's own kernels (the applications' kernels are registered
/// by their algorithms in `crate::algo`).
pub fn register(registry: &mut crate::backend::KernelRegistry) {
    worklist::kernels::register(registry);
    filter::register(registry);
}

/// What an algorithm gives the Groute runtime.
pub enum GrouteOperators {
    /// An application of the distributed worklist (seed 000 sections 4.3-4.6).
    Worklist(Box<dyn worklist::WorklistApp>),
    /// A whole program on Groute's constructs (endpoints, links, routers), such as
    /// topology-driven connected components (section 5.1.4).
    Program(Box<dyn GrouteProgram>),
}

/// A program written on Groute's constructs that the driver runs as the Groute runtime.
pub trait GrouteProgram {
    /// Runs on the first `gpus` devices of `backend`, vertex `v` owned by `owner[v]` where
    /// the program partitions by vertex.
    fn run(
        &self,
        backend: &mut dyn crate::backend::Backend,
        graph: &crate::graph::Csr,
        owner: &[u32],
        gpus: u32,
        options: &worklist::WorklistOptions,
    ) -> Result<crate::runtime::Outcome, crate::runtime::RuntimeError>;
}
