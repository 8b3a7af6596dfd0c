//! The one outcome every runtime's run ends in, whatever the runtime and the backend: the
//! per-vertex result, the time, the work done, and the runtime's own account.

use super::groute::LinkTraffic;
use super::groute::worklist::{GpuWork, Growth};
use serde::Serialize;

/// What a run of any runtime produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Final value of every vertex, by global id (u32 values, or f32 bits).
    pub values: Vec<u32>,
    /// Final second value of every vertex (PageRank ranks), if the algorithm has one.
    pub aux: Option<Vec<f32>>,
    /// Time of the computation after the graph was loaded onto the GPUs, in picoseconds
    /// (virtual on the simulator, measured on real GPUs).
    pub compute_time_ps: u64,
    /// Work done.
    pub work: WorkReport,
    /// Supersteps (bulk-synchronous runtimes; 0 for asynchronous ones).
    pub supersteps: u32,
    /// Groute's own account (Groute runs only).
    pub groute: Option<GrouteReport>,
    /// Atos's own account (Atos runs only).
    pub atos: Option<super::atos::AtosReport>,
    /// GUM's own account (GUM runs only).
    pub gum: Option<super::gum::GumReport>,
}

/// Work done.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkReport {
    /// Edges visited by advance kernels.
    pub edges_visited: u64,
    /// Work items: the sum of every superstep's frontier sizes, or the items the
    /// asynchronous workers consumed.
    pub work_items: u64,
    /// Vertex updates sent between GPUs.
    pub messages: u64,
    /// Bytes sent between GPUs.
    pub bytes_sent: u64,
    /// Total frontier size at the start of every superstep (bulk-synchronous runs).
    pub frontier_sizes: Vec<u64>,
}

/// The Groute runtime's own account of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GrouteReport {
    /// Soft-priority threshold raises (consensus rounds).
    pub priority_raises: u32,
    /// The soft-priority step the run used (`None`: off), given or chosen by the runtime.
    pub priority_delta: Option<u64>,
    /// Received work items dropped because they improved nothing.
    pub dropped: u64,
    /// Worklists that grew (a full buffer never loses work: it grows, and says so here).
    pub growths: Vec<Growth>,
    /// Ring order of the worklist's router.
    pub ring: Vec<u32>,
    /// Work per GPU.
    pub per_gpu: Vec<GpuWork>,
    /// Packets, elements and bytes per router link.
    pub links: Vec<LinkTraffic>,
}
