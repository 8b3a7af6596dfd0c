//! GUM (seed 001): bulk-synchronous multi-GPU graph processing with frontier stealing
//! (FSteal, §III); the planner also holds ownership stealing (OSteal, §IV).
//!
//! A fragment per GPU with its inner vertices and outer copies of the remote vertices its
//! edges reach (the bulk-synchronous runtime's one-hop subgraphs): updates to an outer
//! copy are combined on the device and only the changed copies are sent, once per
//! superstep (early message aggregation, §V-A). Each superstep, the coordinator (the host,
//! for GPU 0) follows §V-A:
//!
//! 1. every GPU's frontier statistics are already on the host (the stats kernel ran at the
//!    end of the last superstep): the loads `l_i` and the Table I features;
//! 2. FSteal, when t1 and t2 fire: the cost matrix `c_ij = bytes/B_ij + g(W_i)` from the
//!    backend's bandwidths and the cost model, the min-max plan (Eq. 1), its decision cost
//!    charged as host work by [`DecisionCost`]; a solver failure means no stealing that
//!    superstep, recorded;
//! 3. Alg. 1 on the victims' devices: the prefix sums and the sorted search give each
//!    worker a consecutive range of the victim's frontier (the victim's own range first);
//! 4. each GPU runs the algorithm's advance on its own range, and a separate kernel per
//!    stolen range that reads the victim's adjacency lists and values through peer access
//!    while it runs; stolen results return to the victim and are merged before the split;
//! 5. split (in the advance itself, BFS's routed advance, where nothing was stolen:
//!    [`GumOptions::split`]), exchange, merge (and the algorithm's apply), then the next
//!    statistics.
//!
//! OSteal (Alg. 2, before FSteal) moves ownership of fragments to fewer workers and back
//! ([`OstealMove`]): by rebuilding and uploading the fragments, or by the paper's
//! extended-memory move, where a fragment keeps its topology on its own GPU and its host
//! runs its kernels through peer access.
//!
//! Every superstep leaves an [`IterationRecord`] (per-GPU busy and starved time, loads,
//! stolen edges, the plan, the decision and its cost) in the run's [`GumReport`].

pub mod balance;
pub mod compat;
pub mod cost_model;
pub mod hub_cache;
pub mod kernels;
pub mod pays;
pub mod planner;

use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    Launch, Scalar, StreamId, StreamPriority, Token,
};
use crate::graph::Csr;
use crate::runtime::bsp::{
    AdvanceScalars, BspPrimitive, Combiner, DeviceLoop, Duplication, Exchange, LOOP_LEVELS,
    LoopFrontier, PHASE_UPLOAD, Packages, SLOT_COUNTERS, SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT,
    Split, Start, Subgraph, UploadedSlots, build_subgraphs, launch_merge, peer_reads, upload_slots,
    write_upload,
};
use crate::runtime::{RuntimeError, wait_all};
use cost_model::{CostModel, Features, FrontierStats};
use hub_cache::{HubCache, HubLists};
use kernels::{MAX_CUTS, STATS_BUFFER_WORDS, STATS_WORDS, StealRule, read_stats};
use planner::{ReductionTree, SolverLimits, Triggers, VertexRange};
use serde::Serialize;

/// What an algorithm gives GUM: its bulk-synchronous operators and, for min-combined
/// algorithms, how a stolen edge relaxes (no rule: FSteal never runs for it).
pub struct GumOperators {
    /// Advance, combiner, apply: the bulk-synchronous primitive.
    pub primitive: Box<dyn BspPrimitive>,
    /// The relaxation of stolen edges.
    pub steal: Option<StealRule>,
}

/// The host-side cost of a stealing decision, a deterministic model (the simulator charges
/// it as host work; never wall clock). Constants are estimates for a Xeon of the DGX-1's
/// generation: feature assembly and inference of the 210-term polynomial per fragment, and
/// a dense simplex whose work grows with variables x constraints.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DecisionCost {
    /// Fixed cost of a decision (gathering counts, broadcasting the policy), in ps.
    pub base_ps: u64,
    /// Per fragment: features and `g(W)`, in ps.
    pub per_fragment_ps: u64,
    /// Per LP solve, fixed, in ps.
    pub per_solve_ps: u64,
    /// Per LP solve, per variable x constraint, in ps.
    pub per_cell_ps: u64,
}

impl Default for DecisionCost {
    fn default() -> Self {
        DecisionCost {
            base_ps: 5_000_000,
            per_fragment_ps: 1_000_000,
            per_solve_ps: 10_000_000,
            per_cell_ps: 20_000,
        }
    }
}

impl DecisionCost {
    /// Cost of one FSteal decision over `n` fragments.
    pub fn fsteal_ps(&self, n: usize) -> u64 {
        let cells = ((n * n + 1) * 2 * n) as u64;
        self.base_ps
            + self.per_fragment_ps * n as u64
            + self.per_solve_ps
            + self.per_cell_ps * cells
    }

    /// Cost of one OSteal decision (Alg. 2) over `n` fragments: one solve per `m = 1..n`,
    /// the `m`-th with `n x m` free variables.
    pub fn osteal_ps(&self, n: usize) -> u64 {
        let solves: u64 = (1..=n)
            .map(|m| self.per_solve_ps + self.per_cell_ps * ((n * m + 1) * 2 * n) as u64)
            .sum();
        self.base_ps + self.per_fragment_ps * n as u64 + solves
    }
}

/// Options of a GUM run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GumOptions {
    /// Frontier stealing on (when the algorithm has a steal rule and t1, t2 fire).
    pub fsteal: bool,
    /// FSteal plans and executes whenever t1 and t2 fire, without asking whether the plan
    /// pays ([`FstealDecision::NotWorth`], [`FstealDecision::Rejected`]): for tests and
    /// checks of the stealing mechanism, not for speed.
    pub fsteal_forced: bool,
    /// Ownership stealing on (min-combined algorithms without aux values, when t3 fires).
    pub osteal: bool,
    /// OSteal: supersteps between two runs of Alg. 2 while the total load stays within a
    /// factor of 2 of the load at the last run (a load that doubles or halves runs it at
    /// once). Ours: the paper runs Alg. 2 after every short iteration, which in a long tail
    /// of hundreds of supersteps would cost more host time than the synchronisation it saves.
    pub osteal_interval: u32,
    /// The thresholds t1..t4.
    pub triggers: Triggers,
    /// The solver's guards.
    pub solver: SolverLimits,
    /// The decision's cost model.
    pub decision: DecisionCost,
    /// Local memory bandwidth used for `B_ii` when the backend does not know it, bytes/s.
    pub memory_bandwidth_fallback_bytes_per_s: u64,
    /// Whose Table I features `g(W)` is evaluated on when a plan is made.
    pub cost_features: CostFeatures,
    /// What one stolen range costs its thief beyond its edges, in ps: the separate kernel
    /// of §V-A step 4 (a launch) and the read of its pair count. The paper leaves this
    /// "outside our cost model"; ours charges it when deciding whether a plan pays (a plan
    /// is executed only if its makespan plus these costs beats not stealing). Default
    /// 10 us: a V100 launch and its minimum kernel (about 6 us on the simulated one) and a
    /// device-to-host read.
    pub steal_range_overhead_ps: u64,
    /// What a plan costs once, whatever its size, beyond its decision and its ranges, in ps:
    /// the cut's host round trip (the victims' prefix and cut kernels and the read of the
    /// cuts) and the return's (the thieves' pair counts read, the packages copied and merged
    /// before the split); a plan is solved and executed only if it saves more
    /// ([`pays::PlanOverhead`]). Default 43 us, measured on the simulated DGX-1: superstep 1
    /// of SSSP on R-MAT 18 under the biased-random partition spent 305 us outside its
    /// compute phase with a plan and 219 without, less the 43.8 us decision
    /// (`reports/gum.md`, Fig. 1/8).
    pub plan_round_trips_ps: u64,
    /// Stop after this many supersteps.
    pub max_supersteps: u32,
    /// How a superstep's packages reach their receivers (as the bulk-synchronous
    /// runtime's; peer reads only while every GPU works).
    pub exchange: Exchange,
    /// Where a superstep splits its output among the owners, as the bulk-synchronous
    /// runtime's: with [`Split::InAdvance`], a superstep in which no GPU steals runs the
    /// primitive's routed advance where it has one (BFS), which writes owned vertices to
    /// the next frontier and proxies to their owners' packages as it discovers them, and no
    /// split kernel; otherwise a split after the advance.
    pub split: Split,
    /// How OSteal hands an evicted GPU's fragment to its survivor.
    pub osteal_move: OstealMove,
    /// A single worker (one GPU, or OSteal's last worker after a re-upload move) runs its
    /// supersteps in the bulk-synchronous runtime's device-side loop while the frontier
    /// has at most this many vertices (0: never; algorithms with a loop kernel and no apply
    /// step: BFS, SSSP, WCC; the default is BSP's,
    /// [`crate::runtime::bsp::DEFAULT_LOOP_FRONTIER`]). OSteal's last worker leaves the loop where Alg. 2 is due (its
    /// interval after the last run, or the frontier twice the load it last decided on),
    /// so that ownership can be handed back as on the host path.
    pub loop_frontier: u64,
}

/// How OSteal's move hands an evicted GPU's fragment to its survivor (`--gum-osteal-move`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OstealMove {
    /// Values and residual frontier come to the host; every fragment is rebuilt there and
    /// uploaded again (the evicted GPUs keep nothing and run nothing).
    #[default]
    Reupload,
    /// The paper's move (§IV-B, §V-A step 2): an evicted GPU stays as extended memory.
    /// Its fragment's topology (offsets, targets, weights, degrees, owners) stays where it
    /// is; its mutable state (values, frontier, marker, counters, packages, statistics)
    /// goes to the survivor by a peer copy of the values, the residual frontier, the
    /// counters and the statistics, and from then on every kernel of the fragment
    /// (advance, split, merge, statistics) runs on streams of its own on the survivor
    /// (whose fragments' kernels take turns on its SMs), reading the topology through peer
    /// access. Packages still go to fragments by id. The evicted GPU runs nothing and takes
    /// no part in the barrier. A hand-back copies the same state home, where the
    /// fragment's own buffers waited. Alg. 2 chooses only worker counts whose hosts have
    /// peer access to the fragments they host.
    Extended,
}

impl Default for GumOptions {
    fn default() -> Self {
        GumOptions {
            fsteal: true,
            fsteal_forced: false,
            osteal: true,
            osteal_interval: 16,
            triggers: Triggers::default(),
            solver: SolverLimits::default(),
            decision: DecisionCost::default(),
            memory_bandwidth_fallback_bytes_per_s: 900_000_000_000,
            cost_features: CostFeatures::Pooled,
            steal_range_overhead_ps: 10_000_000,
            plan_round_trips_ps: 43_000_000,
            max_supersteps: 1_000_000,
            exchange: Exchange::Auto,
            split: Split::InAdvance,
            osteal_move: OstealMove::Reupload,
            loop_frontier: crate::runtime::bsp::DEFAULT_LOOP_FRONTIER,
        }
    }
}

/// Whose Table I features the plan's `g(W)` is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostFeatures {
    /// The superstep's whole frontier (every fragment's statistics pooled): one `g` for
    /// every fragment. The default: the polynomial's error (RMSRE 0.30) is mostly noise
    /// between fragments whose frontiers cost the same per edge (a random partition), and
    /// the min-max plan treats that noise as real differences (measured on R-MAT 18 SSSP,
    /// superstep 2: `g` from 97 to 156 ps per edge over fragments that all took 178, and a
    /// plan moving 273,828 edges for a spread of 131,264).
    Pooled,
    /// Each fragment's own frontier, `g(W_i)` as Eq. 2 writes it.
    PerFragment,
}

/// What FSteal did in one superstep.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FstealDecision {
    /// Off, one GPU, or the algorithm has no steal rule.
    Off,
    /// t1 or t2 did not fire.
    NotTriggered,
    /// t1 and t2 fired, but the predicted imbalance (the busiest worker's predicted time
    /// over the perfectly balanced one) is below what a plan costs (its decision, one
    /// stolen range and the cut and return round trips), or the busiest frontier is one
    /// adjacency list (Alg. 1 never splits one): no plan is solved and nothing is charged.
    NotWorth,
    /// A plan was solved, but with its stolen ranges' kernels and the round trips its
    /// makespan does not beat not stealing: the decision is charged, the plan is not
    /// executed.
    Rejected,
    /// A plan was solved and executed.
    Planned,
    /// The solver failed: no stealing this superstep (the documented fallback).
    Fallback(String),
}

/// What OSteal did in one superstep.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OstealDecision {
    /// Off, one GPU, or the algorithm cannot move ownership (additive or aux values).
    Off,
    /// t3 or the interval did not fire.
    NotTriggered,
    /// t3 fired, but no worker count can pay for Alg. 2's decision: the best any other
    /// count could save over the supersteps a move must pay back in (a lower bound of each
    /// count's `E` against an upper bound of the current one's) is below the decision's
    /// cost. Nothing is charged; when no count can gain at all the check, like a run,
    /// waits for the interval or a load that doubles or halves before it is made again.
    NotWorth,
    /// Alg. 2 ran and kept the worker count.
    Kept,
    /// Alg. 2 ran and ownership moved: evicted GPUs' fragments went to survivors, or
    /// fragments went back to their GPUs.
    Moved {
        /// Workers before.
        from: u32,
        /// Workers after.
        to: u32,
    },
    /// The solver failed: ownership stays as it is (the documented fallback).
    Fallback(String),
}

/// One superstep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationRecord {
    /// Superstep number.
    pub iteration: u32,
    /// Frontier vertices per fragment (fragment `i` is GPU `i`'s; `hosts` says where it ran).
    pub frontier: Vec<u64>,
    /// Active edges `l_i` per fragment.
    pub active_edges: Vec<u64>,
    /// Table I features of each fragment's frontier.
    pub features: Vec<Features>,
    /// Kernel-busy time per GPU in the compute phase (advance and stolen ranges), ps.
    pub busy_ps: Vec<u64>,
    /// Compute phase length minus busy time, per GPU, ps.
    pub starved_ps: Vec<u64>,
    /// Kernel-busy time per GPU over the whole superstep (every kernel: advance, stolen
    /// ranges, split, merge, statistics, a re-upload's statistics), ps: a GPU OSteal
    /// evicted reads 0. A device-side loop's is shared evenly among its supersteps.
    pub kernel_ps: Vec<u64>,
    /// Edges each GPU processed (its own fragment's, those of the fragments it hosts, and
    /// stolen ones).
    pub processed_edges: Vec<u64>,
    /// Edges processed by a GPU other than their fragment's.
    pub stolen_edges: u64,
    /// The plan (`edges[i][j]`), when one ran.
    pub plan: Option<Vec<Vec<u64>>>,
    /// The ranges each victim handed out.
    pub ranges: Vec<(u32, VertexRange)>,
    /// What FSteal did.
    pub fsteal: FstealDecision,
    /// What OSteal did (before FSteal).
    pub osteal: OstealDecision,
    /// Alg. 2's estimate `E = z + p m` for every m tried, when it ran.
    pub osteal_estimates: Vec<planner::WorkerEstimate>,
    /// The GPU that owns each fragment in this superstep (after OSteal).
    pub hosts: Vec<u32>,
    /// Workers (GPUs owning at least one fragment) in this superstep.
    pub workers: u32,
    /// Time spent moving ownership (residual state out, fragments rebuilt), ps.
    pub move_ps: u64,
    /// Modelled host time of the decisions (OSteal and FSteal), ps (charged as host work).
    pub decision_ps: u64,
    /// The decisions' time as the backend's clock saw it, ps: on the simulator the charged
    /// model (virtual time); on CUDA the real host time of the solves.
    pub decision_time_ps: u64,
    /// GPUs with work in the compute phase.
    pub active_gpus: u32,
    /// Compute phase length (slowest GPU), ps.
    pub compute_ps: u64,
    /// Whether this superstep ran without frontier statistics (no decision could use
    /// them): its active and processed edges and features read 0.
    pub stats_skipped: bool,
    /// Whether a single worker ran this superstep inside a device-side loop
    /// ([`GumOptions::loop_frontier`]): only its frontier is known (busy, starved and
    /// processed edges read 0, no statistics); its time and compute phase are the loop
    /// launch's shared evenly among the supersteps it ran.
    pub device_loop: bool,
    /// The whole superstep, ps.
    pub time_ps: u64,
}

/// GUM's own account of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GumReport {
    /// Options.
    pub options: GumOptions,
    /// The steal rule the algorithm gave, if any.
    pub steal_rule: Option<StealRule>,
    /// `B_ij` as used, bytes per second (the diagonal: `B_ii`).
    pub bandwidth_bytes_per_s: Vec<Vec<u64>>,
    /// The reduction tree's eviction order (OSteal; for the record).
    pub eviction_order: Vec<u32>,
    /// Every superstep.
    pub iterations: Vec<IterationRecord>,
    /// Sum of stolen edges.
    pub stolen_edges: u64,
    /// Supersteps with a plan.
    pub planned: u32,
    /// Supersteps that fell back to no stealing.
    pub fallbacks: u32,
    /// Runs of Alg. 2.
    pub osteal_runs: u32,
    /// Ownership moves (shrinks and hand-backs).
    pub ownership_moves: u32,
    /// Sum of the time spent moving ownership, ps.
    pub move_ps: u64,
    /// Sum of decision costs, ps.
    pub decision_ps: u64,
    /// Sum of the decisions' time by the backend's clock, ps (see
    /// [`IterationRecord::decision_time_ps`]).
    pub decision_time_ps: u64,
    /// Supersteps in which a decision ran (FSteal or OSteal).
    pub decisions: u32,
    /// The gap between the slowest and the fastest worker's busy time over the supersteps.
    pub busy_gap: balance::BusyGap,
}

impl GumReport {
    /// One line for the run's summary: what the stealing did and what its decisions cost.
    pub fn summary_line(&self) -> String {
        let per_decision_us = if self.decisions == 0 {
            0.0
        } else {
            self.decision_time_ps as f64 / 1e6 / f64::from(self.decisions)
        };
        format!(
            "gum: fsteal {} plans ({} stolen edges, {} fallbacks); osteal {} runs, {} ownership \
             moves ({:.3} ms), {} workers at the end; decisions in {} supersteps, {:.3} ms \
             ({:.1} us host time per decision superstep, {:.3} ms modelled)",
            self.planned,
            self.stolen_edges,
            self.fallbacks,
            self.osteal_runs,
            self.ownership_moves,
            self.move_ps as f64 / 1e9,
            self.iterations.last().map_or(0, |r| r.workers),
            self.decisions,
            self.decision_time_ps as f64 / 1e9,
            per_decision_us,
            self.decision_ps as f64 / 1e9,
        )
    }
}

/// What a GUM run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct GumOutcome {
    /// Final value of every vertex, by global id.
    pub values: Vec<u32>,
    /// Final aux value of every vertex, if any.
    pub aux: Option<Vec<f32>>,
    /// Supersteps.
    pub supersteps: u32,
    /// Edges visited by kernels.
    pub edges_visited: u64,
    /// Vertex updates sent between GPUs (packages and stolen returns).
    pub messages: u64,
    /// Bytes sent between GPUs.
    pub bytes_sent: u64,
    /// Total frontier per superstep.
    pub frontier_sizes: Vec<u64>,
    /// Time after upload, ps.
    pub compute_time_ps: u64,
    /// GUM's account.
    pub report: GumReport,
}

impl From<GumOutcome> for crate::runtime::Outcome {
    fn from(o: GumOutcome) -> Self {
        crate::runtime::Outcome {
            values: o.values,
            aux: o.aux,
            compute_time_ps: o.compute_time_ps,
            work: crate::runtime::WorkReport {
                edges_visited: o.edges_visited,
                work_items: o.frontier_sizes.iter().sum(),
                messages: o.messages,
                bytes_sent: o.bytes_sent,
                frontier_sizes: o.frontier_sizes,
            },
            supersteps: o.supersteps,
            groute: None,
            gum: Some(o.report),
            atos: None,
        }
    }
}

/// Bytes a worker reads per edge of a fragment whose frontier has `stats`, wherever the
/// fragment lives: what the stolen-range kernel reads from the victim (per vertex its
/// offsets, 16 bytes or a `scattered_bytes` read if larger, its value and its frontier id 4;
/// per edge the target 4, its weight 4 for a weighted rule, and the target's value, each
/// scattered value read costing `scattered_bytes`). `c_ij` divides it by `B_ij`. `hub_share`
/// of the edges leave hubs whose lists the thief caches (§V-B Ex. 6): their target and
/// weight are read locally. FSteal passes [`kernels::REMOTE_SECTOR_BYTES`], what its kernel
/// is charged (until scattered reads were charged a sector, the simulator made stolen edges
/// 3-6x cheaper than two H100s did, `reports/findings_sim.md` (a)) and so does OSteal with
/// the extended move (a host reads its fragments' topology through the peer path); OSteal
/// with the re-upload passes 4, the bytes used: its survivors never read an evicted
/// fragment through the peer path (and a sector there turned 4 into 8 moves on the road CC).
pub fn bytes_per_edge(
    stats: &FrontierStats,
    rule: Option<StealRule>,
    hub_share: f64,
    scattered_bytes: f64,
) -> f64 {
    let weighted = if rule == Some(StealRule::MinPlusWeight) { 4.0 } else { 0.0 };
    let edges = stats.out_edges.max(1) as f64;
    let list = (4.0 + weighted) * (1.0 - hub_share.clamp(0.0, 1.0));
    let vertex = scattered_bytes.max(16.0) + scattered_bytes + 4.0;
    list + scattered_bytes + vertex * stats.vertices as f64 / edges
}

/// The features `g(W)` is evaluated on for each fragment (see [`CostFeatures`]).
fn plan_features(gpus: &[Gpu], which: CostFeatures) -> Vec<Features> {
    match which {
        CostFeatures::PerFragment => gpus.iter().map(|g| g.stats_now.features()).collect(),
        CostFeatures::Pooled => {
            let all: Vec<FrontierStats> = gpus.iter().map(|g| g.stats_now.clone()).collect();
            vec![FrontierStats::pooled(&all).features(); gpus.len()]
        }
    }
}

/// Who reads a fragment's edges in a plan: an FSteal thief or the host of a fragment under
/// the extended move (through the peer path, scattered reads a sector each, cached hubs
/// locally) or an OSteal survivor after a re-upload (bytes as used: see [`bytes_per_edge`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reader {
    Thief,
    Survivor,
}

/// The per-edge costs `c_ij` of this superstep's plan.
fn plan_costs(
    gpus: &[Gpu],
    bandwidth: &[Vec<u64>],
    model: &CostModel,
    options: &GumOptions,
    rule: Option<StealRule>,
    reader: Reader,
) -> Vec<Vec<f64>> {
    let features = plan_features(gpus, options.cost_features);
    let scattered_bytes = match reader {
        Reader::Thief => kernels::REMOTE_SECTOR_BYTES as f64,
        Reader::Survivor => 4.0,
    };
    let bytes: Vec<f64> = (0..gpus.len())
        .map(|i| {
            // A victim's hubs are cached on every thief, or on none.
            let cached = reader == Reader::Thief
                && gpus.iter().any(|g| g.hubs.get(i).is_some_and(Option::is_some));
            let t4 = options.triggers.t4_hub_in_degree;
            let share =
                if cached { hub_cache::hub_edge_share(&gpus[i].stats_now, t4) } else { 0.0 };
            bytes_per_edge(&gpus[i].stats_now, rule, share, scattered_bytes)
        })
        .collect();
    cost_matrix(bandwidth, &features, model, &bytes)
}

/// A growable device buffer of `u32` pairs with its length counter.
struct PairBuffer {
    pairs: BufferId,
    len: BufferId,
    capacity: usize,
}

struct Gpu {
    device: u32,
    compute: StreamId,
    comm: StreamId,
    fixed: Vec<BufferId>,
    send: Vec<BufferId>,
    recv: Vec<BufferId>,
    /// The primitive's scratch buffers (PageRank's pull: its shares), the last buffers of
    /// its advance and apply.
    scratch: Vec<BufferId>,
    in_degree: BufferId,
    stats: BufferId,
    prefix: BufferId,
    empty: BufferId,
    /// Stolen output per victim (on this thief).
    steal_out: Vec<Option<PairBuffer>>,
    /// Returned pairs per thief (on this victim).
    returned: Vec<Option<(BufferId, usize)>>,
    /// Every other fragment's hub lists, by victim (none for its own or a fragment without
    /// hubs; none at all when FSteal is off).
    hubs: Vec<Option<HubCache>>,
    frontier_len: u64,
    stats_now: FrontierStats,
    /// The largest out-degree of the vertices this GPU owns (bounds its frontier's edges).
    max_out_degree: u64,
    /// Whether this fragment has work to run (a re-upload move empties the evicted GPUs'
    /// fragments: they sit out every kernel and every synchronisation until ownership is
    /// handed back; with the extended move every fragment stays active, on its host).
    active: bool,
    /// The streams of this fragment's own GPU (its kernels' while it is at home; `compute`
    /// and `comm` are its host's).
    home_streams: (StreamId, StreamId),
    /// Streams of its own on each GPU that has hosted it (the extended move), by device:
    /// a host's fragments serialise on its SMs (each kernel takes the whole GPU) while one
    /// fragment's reads and copies overlap another's kernels.
    hosted_streams: Vec<Option<(StreamId, StreamId)>>,
    /// While the extended move hosts the fragment on another GPU: its mutable buffers left
    /// on its own GPU, used again when it comes back.
    parked: Option<Mutable>,
}

/// The fixed slots a fragment's kernels write (values, aux, marker, the two frontiers, the
/// counters): what the extended move puts on the fragment's host.
const MUTABLE_SLOTS: [usize; 6] = [3, 4, 6, SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT, SLOT_COUNTERS];

/// A fragment's mutable buffers (everything but its topology and in-degrees), on one device.
struct Mutable {
    /// The buffers of [`MUTABLE_SLOTS`], in that order.
    slots: Vec<BufferId>,
    send: Vec<BufferId>,
    recv: Vec<BufferId>,
    scratch: Vec<BufferId>,
    /// Frontier statistics, prefix sums, the empty placeholder.
    own: [BufferId; 3],
}

impl Mutable {
    /// `gpu`'s mutable buffers as they are now.
    fn of(gpu: &Gpu) -> Mutable {
        Mutable {
            slots: MUTABLE_SLOTS.iter().map(|&s| gpu.fixed[s]).collect(),
            send: gpu.send.clone(),
            recv: gpu.recv.clone(),
            scratch: gpu.scratch.clone(),
            own: [gpu.stats, gpu.prefix, gpu.empty],
        }
    }

    /// Makes these `gpu`'s mutable buffers.
    fn install(self, gpu: &mut Gpu) {
        for (&s, b) in MUTABLE_SLOTS.iter().zip(self.slots) {
            gpu.fixed[s] = b;
        }
        (gpu.send, gpu.recv, gpu.scratch) = (self.send, self.recv, self.scratch);
        [gpu.stats, gpu.prefix, gpu.empty] = self.own;
    }

    /// Every buffer, in a fixed order.
    fn buffers(&self) -> impl Iterator<Item = BufferId> + '_ {
        let lists = self.slots.iter().chain(&self.send).chain(&self.recv).chain(&self.scratch);
        lists.chain(&self.own).copied()
    }

    /// Buffers of the same shapes on `device`, zeroed.
    fn alloc_like<B: Backend + ?Sized>(
        &self,
        backend: &mut B,
        device: DeviceId,
    ) -> Result<Mutable, RuntimeError> {
        let mut like = |b: &BufferId| -> Result<BufferId, RuntimeError> {
            let (elem, len) = backend.buffer_shape(*b)?;
            Ok(backend.alloc(device, elem, len, "hosted fragment state")?)
        };
        let mut list = |l: &[BufferId]| l.iter().map(&mut like).collect::<Result<Vec<_>, _>>();
        let (slots, send, recv, scratch) =
            (list(&self.slots)?, list(&self.send)?, list(&self.recv)?, list(&self.scratch)?);
        let own = list(&self.own)?;
        Ok(Mutable { slots, send, recv, scratch, own: [own[0], own[1], own[2]] })
    }
}

fn token(phase: u8, step: u32, gpu: u32, peer: u32) -> Token {
    Token(
        (u64::from(phase) << 56)
            | (u64::from(step & 0xff_ffff) << 32)
            | (u64::from(gpu & 0xffff) << 16)
            | u64::from(peer & 0xffff),
    )
}

fn gpu_of(t: Token) -> usize {
    ((t.0 >> 16) & 0xffff) as usize
}

fn peer_of(t: Token) -> usize {
    (t.0 & 0xffff) as usize
}

const STATS: u8 = 2;
const DECIDE: u8 = 3;
const CUT: u8 = 4;
const STOLEN: u8 = 5;
const RETURN: u8 = 6;
const COUNTS: u8 = 7;
const COPY: u8 = 8;
const NEXT: u8 = 9;
const GATHER: u8 = 10;
const MOVE: u8 = 11;

fn host_u64(kind: CompletionKind) -> Result<Vec<u64>, RuntimeError> {
    match kind {
        CompletionKind::HostRead(HostData::U64(v)) => Ok(v),
        _ => Err(BackendError::Usage("a counter read returned no u64 data".into()).into()),
    }
}

/// Runs `operators` on `graph` partitioned by `owner` over the first `parts` devices.
pub fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    operators: &GumOperators,
    options: &GumOptions,
    model: &CostModel,
) -> Result<GumOutcome, RuntimeError> {
    let primitive = operators.primitive.as_ref();
    validate(backend, graph, owner, parts, operators, options)?;
    let n = graph.num_vertices();
    let peers = parts as usize;
    let bandwidth = bandwidth_matrix(backend, peers, options);
    let peer: Vec<Vec<bool>> = (0..peers)
        .map(|i| {
            (0..peers)
                .map(|j| i == j || backend.peer_access(DeviceId(j as u32), DeviceId(i as u32)))
                .collect()
        })
        .collect();
    let tree = ReductionTree::build(
        (0..peers)
            .map(|a| (0..peers).map(|b| if a == b { 1 } else { bandwidth[a][b] }).collect())
            .collect(),
    )
    .map_err(|e| RuntimeError::Options(e.to_string()))?;
    let in_degree_global = in_degrees(graph);
    // Hub caching (Ex. 6) only where FSteal can steal.
    let hub_t4 = (options.fsteal && operators.steal.is_some() && peers > 1)
        .then_some(options.triggers.t4_hub_in_degree);
    let fragments = Fragments { graph, parts, primitive, in_degree: &in_degree_global, hub_t4 };
    // Host set-up (O(n)) before the clock starts: the run's time is the GPUs' work.
    let mut reduction =
        primitive.initial_reduction(&(0..n).map(|v| graph.degree(v) as u32).collect::<Vec<_>>(), n);
    let upload_start = backend.now_ps();
    let (mut subgraphs, mut gpus) = fragments.upload(backend, owner, None, &Start::Initial)?;
    let start_ps = backend.now_ps();
    // What a move of ownership costs: the upload's time until the first move is measured
    // (a move gathers the values and uploads the fragments again).
    let mut move_estimate_ps = start_ps - upload_start;
    let rule = operators.steal.filter(|_| options.fsteal && peers > 1);
    let mut report = GumReport {
        options: *options,
        steal_rule: operators.steal,
        bandwidth_bytes_per_s: bandwidth.clone(),
        eviction_order: tree.eviction.clone(),
        iterations: Vec::new(),
        stolen_edges: 0,
        planned: 0,
        fallbacks: 0,
        decision_ps: 0,
        decision_time_ps: 0,
        decisions: 0,
        osteal_runs: 0,
        ownership_moves: 0,
        move_ps: 0,
        busy_gap: balance::BusyGap::default(),
    };
    let mut outcome = GumOutcome {
        values: Vec::new(),
        aux: None,
        supersteps: 0,
        edges_visited: 0,
        messages: 0,
        bytes_sent: 0,
        frontier_sizes: Vec::new(),
        compute_time_ps: 0,
        report: report.clone(),
    };
    // The first superstep's frontier statistics feed only FSteal (OSteal needs a previous
    // superstep) and, with stealing off, the records: skipped when FSteal cannot fire.
    let first_fsteal_may = rule.is_some()
        && gpus.iter().any(|g| {
            g.frontier_len.saturating_mul(g.max_out_degree) >= options.triggers.t1_min_max_edges
        });
    let mut stats_skipped = (options.fsteal || options.osteal) && !first_fsteal_may;
    if stats_skipped {
        for gpu in gpus.iter_mut() {
            gpu.stats_now =
                FrontierStats { vertices: gpu.frontier_len, ..FrontierStats::from_degrees([]) };
        }
    } else {
        collect_stats(backend, &mut gpus, 0)?;
    }
    let max_supersteps = primitive.max_supersteps().unwrap_or(u32::MAX).min(options.max_supersteps);
    let add = primitive.combiner().code();
    // OSteal moves a fragment's values and residual frontier: min-combined u32 values only
    // (additive values would need their partial sums moved with them).
    let can_move = options.osteal
        && peers > 1
        && primitive.combiner() == Combiner::MinU32
        && primitive.value_elem() == ElemType::U32
        && primitive.initial_aux(0, n).is_none();
    let mut hosts: Vec<u32> = (0..parts).collect();
    // The extended-memory move (`OstealMove::Extended`): fragments keep their topology
    // where it is and their mutable state goes to their host.
    let extended = can_move && options.osteal_move == OstealMove::Extended;
    if extended {
        // Until a move is measured: the peer copy of every fragment's state (the supersteps'
        // remote topology reads are in Alg. 2's cost matrix, a thief's peer reads).
        move_estimate_ps = extended_move_estimate_ps(backend, &gpus, &bandwidth)?;
    }
    // The worker counts the extended move cannot reach: a host reads its fragments'
    // topology through peer access (the DGX-1's pairs across QPI have none).
    let unreachable: u64 = (1..=peers.min(63))
        .filter(|&m| extended && (0..parts).any(|f| !peer[f as usize][tree.owner(m, f) as usize]))
        .fold(0, |bits, m| bits | 1 << m);
    // One worker that hosts every fragment (one GPU, or OSteal's last worker) steals
    // nothing and sends nothing, and its advance already de-duplicates its output by the
    // superstep's stamp: as in the bulk-synchronous runtime, the frontier buffers swap roles
    // instead of a split and a merge, and the superstep is the advance and one counter read
    // (no barrier: the read ends the phase). Not with an apply step (it runs after the
    // merge), nor with stealing off (the records' statistics, every superstep, follow the
    // merged frontier).
    let may_run_alone = primitive.apply_kernel().is_none() && (options.fsteal || options.osteal);
    // The single worker's device-side loop, one per GPU that has been the single worker
    // (`None` inside: the backend has no mapped memory for the loop's log).
    let loop_kernel =
        primitive.loop_kernel().filter(|_| may_run_alone && options.loop_frontier > 0);
    let mut device_loops: Vec<Option<Option<DeviceLoop>>> = (0..peers).map(|_| None).collect();
    // After a device-side loop stopped because its frontier grew or Alg. 2 is due, the next
    // superstep goes through the host (where OSteal may hand ownership back).
    let mut grew = false;
    let may_read_peers = peer_reads(backend, peers, options.exchange)?;
    // The previous superstep's length, ps.
    let mut previous: Option<u64> = None;
    // The latest synchronisation time (a superstep less its compute phase, decisions and
    // moves) seen with each worker count, ps: `p` of Eq. 4 is their slope.
    let mut sync_by_workers: std::collections::BTreeMap<usize, u64> = Default::default();
    // With the extended move: what each fragment a host runs adds to a superstep, ps (the
    // latest superstep in which a GPU hosted several, its time less decisions and moves
    // over the most fragments one GPU ran; 0 until one has), Alg. 2's
    // `MoveCost::per_hosted_fragment_ps`.
    let mut per_hosted_fragment_ps = 0.0f64;
    // The superstep and total load of Alg. 2's last run.
    let mut last_osteal: Option<(u32, u64)> = None;
    let mut step = 0u32;
    while step < max_supersteps {
        let total: u64 = gpus.iter().map(|g| g.frontier_len).sum();
        if total == 0 {
            break;
        }
        // The device-side loop runs one fragment: never while a GPU hosts several (the
        // extended move keeps every fragment active, and co-hosted fragments still
        // exchange their proxies every superstep, which the loop kernel does not do).
        let mut active_now = (0..peers).filter(|&g| gpus[g].active);
        let alone = match (active_now.next(), active_now.next()) {
            (Some(w), None) => Some(w),
            _ => None,
        };
        // OSteal's last worker: Alg. 2 must see the supersteps where it is due (the interval
        // after its last run, or the load doubled), so the loop stops before them.
        let (limit, cap) = match last_osteal.filter(|_| can_move) {
            Some((s, t)) => (
                options.loop_frontier.min(t.saturating_mul(2).saturating_sub(1)),
                s.saturating_add(options.osteal_interval).saturating_sub(step),
            ),
            None => (options.loop_frontier, u32::MAX),
        };
        if let (Some(kernel), Some(w)) = (loop_kernel, alone)
            && !grew
            && total <= limit
            && cap >= 2
        {
            let device = DeviceId(gpus[w].device);
            let slot = &mut device_loops[w];
            if slot.is_none() {
                *slot = Some(DeviceLoop::new(backend, kernel, device)?);
            }
            if let Some(Some(device_loop)) = slot {
                let started = backend.now_ps();
                let kernels_before = kernel_busy(backend, peers);
                let most = (max_supersteps - step).min(LOOP_LEVELS).min(cap);
                let gpu = &mut gpus[w];
                let frontier = LoopFrontier {
                    compute: gpu.compute,
                    fixed: &mut gpu.fixed,
                    frontier_len: &mut gpu.frontier_len,
                };
                let run = device_loop.run_on(backend, frontier, step, most, limit)?;
                let levels = run.inputs.len() as u64;
                // Grown, or at Alg. 2's next check: the next superstep goes through the host.
                grew = run.grew || levels >= u64::from(cap);
                let loop_ps = backend.now_ps() - started;
                let loop_kernels = since(&kernels_before, &kernel_busy(backend, peers));
                for (i, &input) in run.inputs.iter().enumerate() {
                    // The launch's time shared evenly; the last superstep takes the remainder.
                    let last = i as u64 + 1 == levels;
                    let share = loop_ps / levels + if last { loop_ps % levels } else { 0 };
                    let kernel_ps = loop_kernels
                        .iter()
                        .map(|&k| k / levels + if last { k % levels } else { 0 })
                        .collect();
                    report.iterations.push(IterationRecord {
                        iteration: step + i as u32,
                        frontier: (0..peers).map(|g| if g == w { input } else { 0 }).collect(),
                        active_edges: vec![0; peers],
                        features: vec![Features::default(); peers],
                        busy_ps: vec![0; peers],
                        starved_ps: vec![0; peers],
                        kernel_ps,
                        processed_edges: vec![0; peers],
                        stolen_edges: 0,
                        plan: None,
                        ranges: Vec::new(),
                        fsteal: if rule.is_some() {
                            FstealDecision::NotTriggered
                        } else {
                            FstealDecision::Off
                        },
                        osteal: if can_move {
                            OstealDecision::NotTriggered
                        } else {
                            OstealDecision::Off
                        },
                        osteal_estimates: Vec::new(),
                        hosts: hosts.clone(),
                        workers: 1,
                        move_ps: 0,
                        decision_ps: 0,
                        decision_time_ps: 0,
                        active_gpus: 1,
                        compute_ps: share,
                        stats_skipped: true,
                        device_loop: true,
                        time_ps: share,
                    });
                }
                outcome.frontier_sizes.extend(&run.inputs);
                step += levels as u32;
                previous = Some(loop_ps / levels);
                // The next superstep's loads: statistics where OSteal may hand ownership
                // back (a frontier grown past the loop), else the length alone.
                let len = gpus[w].frontier_len;
                stats_skipped = len == 0 || !can_move;
                if stats_skipped {
                    gpus[w].stats_now =
                        FrontierStats { vertices: len, ..FrontierStats::from_degrees([]) };
                } else {
                    write_frontier_counter(backend, &gpus[w])?;
                    collect_stats(backend, &mut gpus, step)?;
                }
                continue;
            }
        }
        grew = false;
        let iteration_start = backend.now_ps();
        let kernels_before = kernel_busy(backend, peers);
        let mut skipped_now = stats_skipped;
        outcome.frontier_sizes.push(total);
        let mut loads: Vec<u64> = gpus.iter().map(|g| g.stats_now.out_edges).collect();
        let mut features: Vec<Features> = gpus.iter().map(|g| g.stats_now.features()).collect();
        // 1. OSteal (Alg. 2) before FSteal (§V-A step 2).
        let decisions_start = backend.now_ps();
        let workers = (0..peers).filter(|&g| gpus[g].active && at_home(&gpus[g], g)).count();
        let due = last_osteal.is_none_or(|(s, t)| {
            step >= s.saturating_add(options.osteal_interval) || total >= 2 * t || 2 * total <= t
        });
        let mut osteal = if can_move { OstealDecision::NotTriggered } else { OstealDecision::Off };
        let mut osteal_estimates = Vec::new();
        let (mut move_ps, mut osteal_ps) = (0u64, 0u64);
        if let Some(previous_ps) = previous.filter(|_| can_move && due)
            && options.triggers.osteal_fires(Some(previous_ps), workers < peers)
        {
            // Alg. 2's survivors get the evicted fragments uploaded (no scattered peer reads),
            // or, with the extended-memory move, read their topology through the peer path
            // (priced as a thief's reads).
            let reader = if extended { Reader::Thief } else { Reader::Survivor };
            let cost = plan_costs(&gpus, &bandwidth, model, options, operators.steal, reader);
            let per_worker_ps = sync_per_worker_ps(&sync_by_workers);
            // A move must pay for itself within as many supersteps as the run has taken so
            // far (the expected rest of a run of unknown length): none at the start of a
            // run whose frontier is about to grow, cheap ones deep in a long tail.
            let horizon = f64::from(step.max(1));
            let moving = planner::MoveCost {
                current: workers,
                penalty_ps: move_estimate_ps as f64 / horizon,
                per_hosted_fragment_ps,
                unreachable,
            };
            let decision_ps = options.decision.osteal_ps(peers);
            let gain = planner::osteal::may_pay(&cost, &loads, &tree, per_worker_ps, moving);
            let pays = gain * horizon > decision_ps as f64;
            // When no count could gain even with a free move, the next check waits for the
            // interval or for the load to double or halve, as after a run of Alg. 2 (a
            // frontier of the same class asks the same question again); a gain that the
            // move's amortised cost or the short horizon eats is checked again next
            // superstep, when the horizon is longer.
            let free = planner::MoveCost { penalty_ps: 0.0, ..moving };
            let could_ever =
                planner::osteal::may_pay(&cost, &loads, &tree, per_worker_ps, free) > 0.0;
            if pays || !could_ever {
                last_osteal = Some((step, total));
            }
            if pays {
                report.osteal_runs += 1;
                osteal_ps = decision_ps;
                charge_host_work(backend, osteal_ps, token(DECIDE, step, 0, 1))?;
            }
            let choice = pays.then(|| {
                planner::choose_workers(
                    &cost,
                    &loads,
                    &tree,
                    per_worker_ps,
                    moving,
                    &options.solver,
                )
            });
            match choice {
                None => osteal = OstealDecision::NotWorth,
                Some(Err(e)) => osteal = OstealDecision::Fallback(e.to_string()),
                Some(Ok(choice)) if choice.workers == workers => {
                    osteal = OstealDecision::Kept;
                    osteal_estimates = choice.estimates;
                }
                Some(Ok(choice)) => {
                    osteal_estimates = choice.estimates;
                    hosts = (0..parts).map(|f| tree.owner(choice.workers, f)).collect();
                    let moved_at = backend.now_ps();
                    if extended {
                        move_extended(backend, &mut gpus, &hosts, step)?;
                    } else {
                        move_ownership(
                            backend,
                            &fragments,
                            (&mut gpus, &mut subgraphs),
                            owner,
                            &hosts,
                            step,
                        )?;
                    }
                    move_ps = backend.now_ps() - moved_at;
                    // The re-upload read every fragment's statistics again.
                    skipped_now &= extended;
                    move_estimate_ps = move_ps;
                    osteal =
                        OstealDecision::Moved { from: workers as u32, to: choice.workers as u32 };
                    report.ownership_moves += 1;
                    loads = gpus.iter().map(|g| g.stats_now.out_edges).collect();
                    features = gpus.iter().map(|g| g.stats_now.features()).collect();
                }
            }
        }
        let frontier_now: Vec<u64> = gpus.iter().map(|g| g.frontier_len).collect();
        let active: Vec<u32> = (0..parts).filter(|&g| gpus[g as usize].active).collect();
        // The workers: GPUs hosting their own fragment (and, with the extended move, the
        // fragments of the GPUs they evicted).
        let working: Vec<u32> =
            active.iter().copied().filter(|&g| at_home(&gpus[g as usize], g as usize)).collect();
        // FSteal plans among the workers and steals from their own fragments only: a hosted
        // fragment's frontier runs whole on its host (its load is not in the plan).
        let fsteal_loads: Vec<u64> =
            (0..peers).map(|g| if at_home(&gpus[g], g) { loads[g] } else { 0 }).collect();
        let single_worker = may_run_alone && active.len() == 1;
        // Peer reads while every GPU works (an idle GPU's counters are stale).
        let read_peers = may_read_peers && active.len() == peers;
        // 2. FSteal among the workers OSteal left (c_ij infinite for evicted j, step 3).
        let (decision, plan, fsteal_ps) = match rule {
            None => (FstealDecision::Off, None, 0),
            Some(_) if working.len() < 2 => (FstealDecision::Off, None, 0),
            Some(_) if !options.triggers.fsteal_fires(&active_loads(&fsteal_loads, &working)) => {
                (FstealDecision::NotTriggered, None, 0)
            }
            Some(r) => {
                let cost = plan_costs(&gpus, &bandwidth, model, options, Some(r), Reader::Thief);
                let cost = planner::osteal::restrict(&cost, &working);
                // A thief reads its victim's lists through peer access: no stealing between
                // GPUs without it (the DGX-1's pairs across QPI).
                let cost = without_peerless(cost, &peer);
                let ps = options.decision.fsteal_ps(active.len());
                let overhead = pays::PlanOverhead {
                    decision_ps: ps as f64,
                    per_range_ps: options.steal_range_overhead_ps as f64,
                    round_trips_ps: options.plan_round_trips_ps as f64,
                };
                // Example 5's "cover the overhead", in time (`pays.rs`).
                let own: Vec<f64> = working
                    .iter()
                    .map(|&j| cost[j as usize][j as usize] * fsteal_loads[j as usize] as f64)
                    .collect();
                let alone = own.iter().copied().fold(0.0, f64::max);
                let busiest = working
                    .iter()
                    .zip(&own)
                    .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(&j, _)| j as usize);
                let splittable = busiest.is_some_and(|b| gpus[b].stats_now.vertices > 1);
                let worth = splittable && overhead.worth_solving(&own);
                if !worth && !options.fsteal_forced {
                    (FstealDecision::NotWorth, None, 0)
                } else {
                    match planner::solve_min_max(&cost, &fsteal_loads, &options.solver) {
                        Ok(plan)
                            if options.fsteal_forced
                                || overhead.pays(&cost, &plan.edges, alone) =>
                        {
                            (FstealDecision::Planned, Some(plan.edges), ps)
                        }
                        Ok(_) => (FstealDecision::Rejected, None, ps),
                        Err(e) => (FstealDecision::Fallback(e.to_string()), None, ps),
                    }
                }
            }
        };
        charge_host_work(backend, fsteal_ps, token(DECIDE, step, 0, 0))?;
        let decision_ps = osteal_ps + fsteal_ps;
        let decision_time_ps = (backend.now_ps() - decisions_start).saturating_sub(move_ps);
        let plan = plan.filter(|p| (0..peers).any(|i| (0..peers).any(|j| i != j && p[i][j] > 0)));
        // 3. Alg. 1 on every victim: own range first, then the thieves in id order.
        let ranges = match &plan {
            Some(p) => cut_ranges(backend, &gpus, p, step)?,
            None => Vec::new(),
        };
        // 4. Compute phase.
        let busy_before: Vec<u64> = backend.kernel_busy_ps().into_iter().take(peers).collect();
        let phase_start = backend.now_ps();
        let own_len: Vec<u64> = (0..peers)
            .map(|g| {
                if plan.is_none() {
                    return gpus[g].frontier_len;
                }
                ranges
                    .iter()
                    .find(|(v, r)| *v as usize == g && r.worker as usize == g)
                    .map_or(0, |(_, r)| r.end as u64)
            })
            .collect();
        let stamp = 2 * step + 1;
        let param = primitive.advance_param(&outcome.frontier_sizes, n);
        // Split at discovery when nothing is stolen this superstep (stolen results merged
        // into a victim's output need a split).
        let routed = match primitive.routed_advance_kernel() {
            Some(kernel)
                if options.split == Split::InAdvance && !single_worker && plan.is_none() =>
            {
                Some(kernel)
            }
            _ => None,
        };
        let mut processed = vec![0u64; peers];
        for (g, gpu) in gpus.iter().enumerate().filter(|(_, gpu)| gpu.active) {
            let buffers: Vec<BufferId> =
                gpu.fixed.iter().chain(&gpu.send).chain(&gpu.scratch).copied().collect();
            let advance =
                AdvanceScalars { frontier_len: own_len[g], stamp, superstep: step, param };
            // A routed advance sends pairs, not bitmaps.
            let scalars = advance.of(primitive, g as u32, routed.map(|_| (parts, false)));
            backend.launch(
                gpu.compute,
                Launch {
                    kernel: routed.unwrap_or_else(|| primitive.advance_kernel()),
                    buffers,
                    scalars,
                    work_items: own_len[g],
                },
                None,
            )?;
            // Processed by the fragment's host.
            processed[gpu.device as usize] += if plan.is_none() {
                gpu.stats_now.out_edges
            } else {
                ranges
                    .iter()
                    .filter(|(v, r)| *v as usize == g && r.worker as usize == g)
                    .map(|(_, r)| r.edges)
                    .sum::<u64>()
            };
        }
        let mut reads = Vec::new();
        let mut stolen = 0u64;
        for &(victim, r) in ranges.iter().filter(|(v, r)| *v != r.worker) {
            let (v, t) = (victim as usize, r.worker as usize);
            ensure_steal_out(backend, &mut gpus[t], v, r.edges as usize)?;
            let out = gpus[t].steal_out[v].as_ref().map(|b| (b.pairs, b.len));
            let Some((pairs_buf, len_buf)) = out else { continue };
            let vf = &gpus[v].fixed;
            let mut buffers = vec![vf[0], vf[1], vf[2], vf[3], vf[7], pairs_buf, len_buf];
            if let Some(cache) = gpus[t].hubs[v] {
                buffers.extend(cache.buffers);
            }
            backend.launch(
                gpus[t].compute,
                Launch {
                    kernel: "gum_steal_min",
                    buffers,
                    scalars: vec![
                        Scalar::U64(r.start as u64),
                        Scalar::U64(r.end as u64),
                        Scalar::U32(operators.steal.map_or(0, StealRule::code)),
                        Scalar::U32(0b11111),
                    ],
                    work_items: (r.end - r.start) as u64,
                },
                None,
            )?;
            let tk = token(STOLEN, step, t as u32, v as u32);
            backend.read_to_host(gpus[t].compute, BufferSlice::new(len_buf, 0, 1), tk)?;
            reads.push(tk);
            processed[t] += r.edges;
            stolen += r.edges;
        }
        // Every fragment's compute stream drains before the phase ends (the barrier; a
        // hosted fragment's stream is on its host, an evicted GPU has nothing to drain).
        for (g, gpu) in gpus.iter().enumerate().filter(|(_, gpu)| gpu.active && !single_worker) {
            let tk = token(STOLEN, step, g as u32, 0xffff);
            backend.host_callback(gpu.compute, tk)?;
            reads.push(tk);
        }
        let mut returned: Vec<(usize, usize, u64)> = Vec::new();
        let mut phase_end = phase_start;
        for c in wait_all(backend, &reads)? {
            phase_end = phase_end.max(c.time_ps);
            if peer_of(c.token) == 0xffff {
                continue;
            }
            let len = host_u64(c.kind)?[0];
            if len > 0 {
                returned.push((peer_of(c.token), gpu_of(c.token), len));
            }
        }
        returned.sort_unstable();
        let mut busy_after: Vec<u64> = backend.kernel_busy_ps().into_iter().take(peers).collect();
        let mut compute_ps = phase_end - phase_start;
        // Stolen results go back to their victims and are merged before the split.
        let mut copies = Vec::new();
        for &(v, t, len) in &returned {
            let dst = ensure_returned(backend, &mut gpus[v], t, len as usize)?;
            let Some(src) = gpus[t].steal_out[v].as_ref().map(|b| b.pairs) else { continue };
            let tk = token(RETURN, step, t as u32, v as u32);
            backend.copy(
                gpus[t].comm,
                BufferSlice::new(src, 0, 2 * len as usize),
                BufferSlice::new(dst, 0, 2 * len as usize),
                Some(tk),
            )?;
            copies.push(tk);
            outcome.messages += len;
            outcome.bytes_sent += 8 * len;
        }
        wait_all(backend, &copies)?;
        for (v, gpu) in gpus.iter().enumerate() {
            let mine: Vec<&(usize, usize, u64)> = returned.iter().filter(|r| r.0 == v).collect();
            if mine.is_empty() {
                continue;
            }
            let f = &gpu.fixed;
            let mut buffers = vec![f[3], f[6], f[8], f[9]];
            let mut scalars = vec![Scalar::U32(stamp)];
            for &&(_, t, len) in &mine {
                buffers.push(gpu.returned[t].map_or(gpu.empty, |r| r.0));
                scalars.push(Scalar::U64(len));
            }
            let items = mine.iter().map(|r| r.2).sum();
            backend.launch(
                gpu.compute,
                Launch { kernel: "gum_merge_return", buffers, scalars, work_items: items },
                None,
            )?;
        }
        // 5. Split, exchange, merge, apply, statistics.
        let mut reads = Vec::with_capacity(peers);
        for (g, gpu) in gpus.iter().enumerate().filter(|(_, gpu)| gpu.active && !single_worker) {
            if routed.is_none() {
                let buffers: Vec<BufferId> = gpu.fixed.iter().chain(&gpu.send).copied().collect();
                backend.launch(
                    gpu.compute,
                    Launch {
                        kernel: "bsp_split",
                        buffers,
                        scalars: vec![
                            Scalar::U32(g as u32),
                            Scalar::U32(parts),
                            Scalar::U32(stamp + 1),
                            Scalar::U32(0),
                            Scalar::U32(add),
                        ],
                        work_items: gpu.frontier_len,
                    },
                    None,
                )?;
            }
            // One GPU sends nothing: its package counters need no read; with peer reads the
            // receivers read them.
            if peers > 1 && !read_peers {
                let tk = token(COUNTS, step, g as u32, 0);
                let counters = BufferSlice::new(gpu.fixed[SLOT_COUNTERS], 0, peers + 3);
                backend.read_to_host(gpu.compute, counters, tk)?;
                reads.push(tk);
            }
        }
        let splits_done = if read_peers {
            gpus.iter().map(|gpu| backend.record_event(gpu.compute)).collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let mut sent = vec![vec![0u64; peers]; peers];
        for c in wait_all(backend, &reads)? {
            let g = gpu_of(c.token);
            sent[g].copy_from_slice(&host_u64(c.kind)?[2..2 + peers]);
        }
        let mut copies = Vec::new();
        for (g, gpu) in gpus.iter().enumerate() {
            for (p, &len) in sent[g].iter().enumerate() {
                if p == g || len == 0 {
                    continue;
                }
                let tk = token(COPY, step, g as u32, p as u32);
                backend.copy(
                    gpu.comm,
                    BufferSlice::new(gpu.send[p], 0, 2 * len as usize),
                    BufferSlice::new(gpus[p].recv[g], 0, 2 * len as usize),
                    Some(tk),
                )?;
                copies.push(tk);
                outcome.messages += len;
                outcome.bytes_sent += 8 * len;
            }
        }
        wait_all(backend, &copies)?;
        // With peer reads, GPU g merges every peer p's package toward it (`send[g]` of p)
        // with its length from p's counter block.
        let mut peer_args: Vec<Vec<BufferId>> = if read_peers {
            (0..peers)
                .map(|g| {
                    let sends = gpus.iter().map(|p| p.send[g]);
                    sends.chain(gpus.iter().map(|p| p.fixed[SLOT_COUNTERS])).collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut reads = Vec::with_capacity(peers);
        for (g, gpu) in gpus.iter_mut().enumerate().filter(|(_, gpu)| gpu.active) {
            if single_worker {
                gpu.fixed.swap(SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT);
            } else {
                if routed.is_some() {
                    // The routed advance's output is the owned part of the next frontier
                    // (where a split would have put it); the merge appends to it.
                    gpu.fixed.swap(SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT);
                }
                let scalars = vec![
                    Scalar::U32(g as u32),
                    Scalar::U32(parts),
                    Scalar::U32(stamp + 1),
                    Scalar::U32(add),
                    Scalar::F64(primitive.param()),
                ];
                let packages = if read_peers {
                    let buffers = std::mem::take(&mut peer_args[g]);
                    Packages::PeerReads { buffers, splits_done: &splits_done }
                } else {
                    Packages::Copied { recv: &gpu.recv, sent: &sent }
                };
                launch_merge(backend, gpu.compute, g, &gpu.fixed, scalars, packages)?;
                if let Some(apply) = primitive.apply_kernel() {
                    let mut scalars = vec![Scalar::F64(reduction), Scalar::U32(n)];
                    scalars.extend(primitive.apply_scalars());
                    scalars.push(Scalar::U32(g as u32));
                    backend.launch(
                        gpu.compute,
                        Launch {
                            kernel: apply,
                            buffers: gpu.fixed.iter().chain(&gpu.scratch).copied().collect(),
                            scalars,
                            work_items: u64::from(subgraphs[g].local),
                        },
                        None,
                    )?;
                }
            }
            let tk = token(NEXT, step, g as u32, 0);
            backend.read_to_host(
                gpu.compute,
                BufferSlice::new(gpu.fixed[SLOT_COUNTERS], 0, peers + 3),
                tk,
            )?;
            reads.push(tk);
        }
        let mut next_reduction = 0.0;
        let mut next_len = vec![0u64; peers];
        for c in wait_all(backend, &reads)? {
            let g = gpu_of(c.token);
            let counters = host_u64(c.kind)?;
            // With a single worker, the advance's output (`[0]`) is the next frontier, and the read ends
            // the compute phase.
            next_len[g] = counters[usize::from(!single_worker)];
            next_reduction += f64::from_bits(counters[crate::runtime::bsp::reduce_counter(peers)]);
            if single_worker {
                compute_ps = c.time_ps - phase_start;
            }
            if read_peers {
                // What this GPU's split sent, as the receivers' merges read it.
                let sent: u64 = (0..peers).filter(|&p| p != g).map(|p| counters[2 + p]).sum();
                outcome.messages += sent;
                outcome.bytes_sent += 8 * sent;
            }
        }
        if single_worker {
            busy_after = backend.kernel_busy_ps().into_iter().take(peers).collect();
        }
        let busy: Vec<u64> = (0..peers).map(|g| busy_after[g] - busy_before[g]).collect();
        reduction = next_reduction;
        // The next superstep's frontier statistics (a kernel and a read on every worker)
        // feed only the decisions (t1, t2, the cost model, Alg. 2) and the records: they are
        // skipped when stealing is on but no decision can run next superstep (every
        // frontier's length times its fragment's largest out-degree below t1, and Alg. 2
        // not due), and after the last superstep. With stealing off they are kept for the
        // records (`switchyard gum fit` learns from them).
        let next_total: u64 = next_len.iter().sum();
        let fsteal_may = rule.is_some()
            && working.len() > 1
            && working.iter().any(|&g| {
                next_len[g as usize].saturating_mul(gpus[g as usize].max_out_degree)
                    >= options.triggers.t1_min_max_edges
            });
        let osteal_may = can_move
            && last_osteal.is_none_or(|(s, t)| {
                step + 1 >= s.saturating_add(options.osteal_interval)
                    || next_total >= 2 * t
                    || 2 * next_total <= t
            })
            && options
                .triggers
                .osteal_fires(Some(backend.now_ps() - iteration_start), working.len() < peers);
        stats_skipped =
            next_total == 0 || ((options.fsteal || options.osteal) && !fsteal_may && !osteal_may);
        if stats_skipped {
            for &g in &active {
                let gpu = &mut gpus[g as usize];
                gpu.frontier_len = next_len[g as usize];
                gpu.stats_now =
                    FrontierStats { vertices: gpu.frontier_len, ..FrontierStats::from_degrees([]) };
            }
        } else {
            // The statistics kernel's grid is sized from the frontier length it is launched
            // with: the new one, not the superstep's (a hub's one-vertex frontier had its
            // neighbours' statistics computed by a single block).
            for &g in &active {
                let gpu = &mut gpus[g as usize];
                gpu.frontier_len = next_len[g as usize];
                if single_worker {
                    write_frontier_counter(backend, gpu)?;
                }
            }
            collect_stats(backend, &mut gpus, step + 1)?;
        }
        let record = IterationRecord {
            iteration: step,
            frontier: frontier_now,
            active_edges: loads.clone(),
            features,
            starved_ps: busy.iter().map(|&b| compute_ps.saturating_sub(b)).collect(),
            kernel_ps: since(&kernels_before, &kernel_busy(backend, peers)),
            busy_ps: busy,
            active_gpus: processed.iter().filter(|&&e| e > 0).count() as u32,
            processed_edges: processed,
            stolen_edges: stolen,
            plan: plan.clone(),
            ranges,
            fsteal: decision,
            osteal,
            osteal_estimates,
            hosts: hosts.clone(),
            workers: working.len() as u32,
            move_ps,
            decision_ps,
            decision_time_ps,
            compute_ps,
            stats_skipped: skipped_now,
            device_loop: false,
            time_ps: backend.now_ps() - iteration_start,
        };
        let sync_ps = record.time_ps.saturating_sub(compute_ps + decision_ps + move_ps);
        // Synchronisation per worker count where each worker runs one fragment; what more
        // fragments on one GPU cost is measured apart.
        let hosted = most_hosted(&gpus);
        if hosted > 1 {
            let ps = record.time_ps.saturating_sub(decision_ps + move_ps);
            per_hosted_fragment_ps = ps as f64 / hosted as f64;
        } else {
            sync_by_workers.insert(working.len(), sync_ps);
        }
        previous = Some(record.time_ps);
        report.move_ps += move_ps;
        report.stolen_edges += stolen;
        report.planned += u32::from(record.fsteal == FstealDecision::Planned);
        report.fallbacks += u32::from(matches!(record.fsteal, FstealDecision::Fallback(_)));
        report.decision_ps += decision_ps;
        report.decision_time_ps += decision_time_ps;
        report.decisions += u32::from(decision_ps > 0);
        report.busy_gap.add(&record.busy_ps, &record.hosts);
        report.iterations.push(record);
        step += 1;
    }
    outcome.supersteps = step;
    outcome.compute_time_ps = backend.now_ps() - start_ps;
    let (values, aux) = gather(backend, &gpus, &subgraphs, primitive, n)?;
    outcome.values = values;
    outcome.aux = aux;
    outcome.edges_visited = backend.stats().devices.iter().map(|d| d.edges).sum();
    outcome.report = report;
    Ok(outcome)
}

/// `p` of Eq. 4, the synchronisation cost per worker, ps: the slope of the latest
/// synchronisation times between the fewest and the most workers seen (a superstep's
/// synchronisation has a part every worker pays at once, which the slope leaves out); with
/// one worker count seen, its time per worker.
fn sync_per_worker_ps(sync_by_workers: &std::collections::BTreeMap<usize, u64>) -> f64 {
    let (Some((&m0, &s0)), Some((&m1, &s1))) =
        (sync_by_workers.first_key_value(), sync_by_workers.last_key_value())
    else {
        return 0.0;
    };
    if m1 > m0 && s1 > s0 { (s1 - s0) as f64 / (m1 - m0) as f64 } else { s1 as f64 / m1 as f64 }
}

/// The loads of the workers in `active`.
fn active_loads(loads: &[u64], active: &[u32]) -> Vec<u64> {
    active.iter().map(|&g| loads[g as usize]).collect()
}

/// Charges `cost_ps` of host work (nothing when 0) and waits for it.
fn charge_host_work<B: Backend + ?Sized>(
    backend: &mut B,
    cost_ps: u64,
    t: Token,
) -> Result<(), RuntimeError> {
    if cost_ps > 0 && compat::host_work(backend, cost_ps, t)? {
        wait_all(backend, &[t])?;
    }
    Ok(())
}

/// OSteal's move (§IV): fragment `f` now belongs to GPU `hosts[f]`. The values the run
/// reached and the residual frontier come to the host; the fragments of the new partition
/// (vertex `v` on `hosts[base_owner[v]]`) are rebuilt and uploaded with them; evicted GPUs
/// keep no fragment and sit out every kernel and exchange until ownership is handed back.
fn move_ownership<B: Backend + ?Sized>(
    backend: &mut B,
    fragments: &Fragments<'_>,
    (gpus, subgraphs): (&mut Vec<Gpu>, &mut Vec<Subgraph>),
    base_owner: &[u32],
    hosts: &[u32],
    step: u32,
) -> Result<(), RuntimeError> {
    let n = fragments.graph.num_vertices();
    let (values, _) = gather(backend, gpus, subgraphs, fragments.primitive, n)?;
    let mut reads = Vec::new();
    for (g, gpu) in gpus.iter().enumerate().filter(|(_, gpu)| gpu.frontier_len > 0) {
        let tk = token(MOVE, step, g as u32, 0);
        let slice = BufferSlice::new(gpu.fixed[7], 0, gpu.frontier_len as usize);
        backend.read_to_host(gpu.compute, slice, tk)?;
        reads.push(tk);
    }
    let mut frontier = vec![false; n as usize];
    for c in wait_all(backend, &reads)? {
        let sub = &subgraphs[gpu_of(c.token)];
        let CompletionKind::HostRead(HostData::U32(local)) = c.kind else {
            return Err(BackendError::Usage("a frontier read returned no u32 data".into()).into());
        };
        for v in local {
            frontier[sub.global_of_local[v as usize] as usize] = true;
        }
    }
    let streams: Vec<(StreamId, StreamId)> = gpus.iter().map(|g| (g.compute, g.comm)).collect();
    for gpu in gpus.drain(..) {
        release(backend, gpu)?;
    }
    let owner: Vec<u32> = base_owner.iter().map(|&f| hosts[f as usize]).collect();
    let start = Start::Resume { values: &values, frontier: &frontier };
    let (new_subgraphs, new_gpus) = fragments.upload(backend, &owner, Some(streams), &start)?;
    *gpus = new_gpus;
    *subgraphs = new_subgraphs;
    for (g, gpu) in gpus.iter_mut().enumerate() {
        gpu.active = hosts.contains(&(g as u32));
    }
    collect_stats(backend, gpus, step)
}

/// Every one of the first `peers` GPUs' kernel-busy time so far, ps.
fn kernel_busy<B: Backend + ?Sized>(backend: &B, peers: usize) -> Vec<u64> {
    let mut busy: Vec<u64> = backend.kernel_busy_ps().into_iter().take(peers).collect();
    busy.resize(peers, 0);
    busy
}

/// `after - before`, element by element.
fn since(before: &[u64], after: &[u64]) -> Vec<u64> {
    before.iter().zip(after).map(|(&b, &a)| a.saturating_sub(b)).collect()
}

/// The most active fragments one GPU runs.
fn most_hosted(gpus: &[Gpu]) -> usize {
    let mut hosted = vec![0usize; gpus.len()];
    for gpu in gpus.iter().filter(|g| g.active) {
        hosted[gpu.device as usize] += 1;
    }
    hosted.into_iter().max().unwrap_or(0)
}

/// Whether fragment `f` runs on its own GPU.
fn at_home(gpu: &Gpu, f: usize) -> bool {
    gpu.device as usize == f
}

/// The extended move before any was measured: every fragment's values, frontier and
/// counters over its slowest link to another GPU, one after another, ps.
fn extended_move_estimate_ps<B: Backend + ?Sized>(
    backend: &B,
    gpus: &[Gpu],
    bandwidth: &[Vec<u64>],
) -> Result<u64, RuntimeError> {
    let mut total = 0.0;
    for (f, gpu) in gpus.iter().enumerate() {
        let slowest = (0..gpus.len())
            .filter(|&j| j != f && bandwidth[f][j] > 0)
            .map(|j| bandwidth[f][j])
            .min()
            .unwrap_or(1);
        let bytes = state_bytes(backend, gpu)?;
        total += bytes as f64 * 1e12 / slowest as f64;
    }
    Ok(total as u64)
}

/// Bytes the extended move copies for `gpu`'s fragment: values, aux, the residual
/// frontier, the counters and the frontier statistics.
fn state_bytes<B: Backend + ?Sized>(backend: &B, gpu: &Gpu) -> Result<u64, RuntimeError> {
    let mut bytes = 4 * gpu.frontier_len + 8 * STATS_BUFFER_WORDS as u64;
    for slot in [3, 4, SLOT_COUNTERS] {
        let (elem, len) = backend.buffer_shape(gpu.fixed[slot])?;
        bytes += elem.size_bytes() * len as u64;
    }
    Ok(bytes)
}

/// The extended move (§IV-B, §V-A step 2): every fragment `f` not on `hosts[f]` goes there
/// ([`relocate`]). Waits for the copies and frees the state a GPU no longer hosts.
fn move_extended<B: Backend + ?Sized>(
    backend: &mut B,
    gpus: &mut [Gpu],
    hosts: &[u32],
    step: u32,
) -> Result<(), RuntimeError> {
    let mut copies = Vec::new();
    let mut unused = Vec::new();
    for (f, gpu) in gpus.iter_mut().enumerate() {
        let to = hosts[f];
        if gpu.device != to {
            let streams = streams_on(backend, gpu, f, to)?;
            unused.extend(relocate(backend, gpu, f, (to, streams), step, &mut copies)?);
        }
    }
    wait_all(backend, &copies)?;
    for b in unused.iter().flat_map(Mutable::buffers) {
        backend.free(b)?;
    }
    Ok(())
}

/// Fragment `f`'s streams on device `to`: its own GPU's, or a pair of its own there
/// (created the first time `to` hosts it).
fn streams_on<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &mut Gpu,
    f: usize,
    to: u32,
) -> Result<(StreamId, StreamId), RuntimeError> {
    if to as usize == f {
        return Ok(gpu.home_streams);
    }
    if let Some(streams) = gpu.hosted_streams[to as usize] {
        return Ok(streams);
    }
    let device = DeviceId(to);
    let streams = (
        backend.create_stream(device, StreamPriority::Normal)?,
        backend.create_stream(device, StreamPriority::Normal)?,
    );
    gpu.hosted_streams[to as usize] = Some(streams);
    Ok(streams)
}

/// Moves fragment `f`'s mutable state to device `to` (whose streams are `streams`): fresh
/// buffers there, or the fragment's own parked ones when it comes home; the values, aux,
/// residual frontier, counters and frontier statistics (a cut reads its victim's) are
/// copied on the fragment's current compute stream (tokens into `copies`; the rest is
/// rebuilt every superstep). Returns the state left
/// behind when it is not the fragment's own (for the caller to free once the copies are
/// done); the fragment's own is parked.
fn relocate<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &mut Gpu,
    f: usize,
    (to, streams): (u32, (StreamId, StreamId)),
    step: u32,
    copies: &mut Vec<Token>,
) -> Result<Option<Mutable>, RuntimeError> {
    let from = Mutable::of(gpu);
    let dest = match gpu.parked.take() {
        Some(own) if to as usize == f => own,
        parked => {
            gpu.parked = parked;
            from.alloc_like(backend, DeviceId(to))?
        }
    };
    for (k, &slot) in MUTABLE_SLOTS.iter().enumerate() {
        let len = match slot {
            SLOT_FRONTIER_IN => gpu.frontier_len as usize,
            3 | 4 | SLOT_COUNTERS => backend.buffer_shape(from.slots[k])?.1,
            _ => 0,
        };
        if len > 0 {
            let tk = token(MOVE, step, f as u32, k as u32);
            let (src, dst) = (from.slots[k], dest.slots[k]);
            backend.copy(
                gpu.compute,
                BufferSlice::new(src, 0, len),
                BufferSlice::new(dst, 0, len),
                Some(tk),
            )?;
            copies.push(tk);
        }
    }
    let tk = token(MOVE, step, f as u32, MUTABLE_SLOTS.len() as u32);
    let stats = BufferSlice::new(from.own[0], 0, STATS_BUFFER_WORDS);
    backend.copy(
        gpu.compute,
        stats,
        BufferSlice::new(dest.own[0], 0, STATS_BUFFER_WORDS),
        Some(tk),
    )?;
    copies.push(tk);
    let leaving_home = at_home(gpu, f);
    dest.install(gpu);
    gpu.device = to;
    (gpu.compute, gpu.comm) = streams;
    if leaving_home {
        gpu.parked = Some(from);
        return Ok(None);
    }
    Ok(Some(from))
}

/// `B_ij` between the first `peers` devices (the diagonal: the device's memory bandwidth).
fn bandwidth_matrix<B: Backend + ?Sized>(
    backend: &B,
    peers: usize,
    options: &GumOptions,
) -> Vec<Vec<u64>> {
    (0..peers)
        .map(|a| {
            (0..peers)
                .map(|b| {
                    let (da, db) = (DeviceId(a as u32), DeviceId(b as u32));
                    if a == b {
                        compat::memory_bandwidth(
                            backend,
                            da,
                            options.memory_bandwidth_fallback_bytes_per_s,
                        )
                    } else {
                        backend.path_bandwidth_bytes_per_s(db, da)
                    }
                })
                .collect()
        })
        .collect()
}

/// `cost` with `c_ij` infinite where thief `j` has no peer access to victim `i`'s memory
/// (`peer[i][j]`).
fn without_peerless(mut cost: Vec<Vec<f64>>, peer: &[Vec<bool>]) -> Vec<Vec<f64>> {
    for (row, ok) in cost.iter_mut().zip(peer) {
        for (c, &ok) in row.iter_mut().zip(ok) {
            if !ok {
                *c = f64::INFINITY;
            }
        }
    }
    cost
}

/// `c_ij = bytes_i / B_ij + g(W_i)` in picoseconds per edge (§III-B), `bytes_i` the bytes
/// a worker reads per edge of fragment `i`.
pub fn cost_matrix(
    bandwidth: &[Vec<u64>],
    features: &[Features],
    model: &CostModel,
    bytes_per_edge: &[f64],
) -> Vec<Vec<f64>> {
    let n = bandwidth.len();
    (0..n)
        .map(|i| {
            let g = model.predict_ps(&features[i]);
            (0..n)
                .map(|j| {
                    let b = bandwidth[i][j] as f64;
                    if b > 0.0 { bytes_per_edge[i] * 1e12 / b + g } else { f64::INFINITY }
                })
                .collect()
        })
        .collect()
}

/// In-degree of every vertex.
fn in_degrees(graph: &Csr) -> Vec<u32> {
    let mut d = vec![0u32; graph.num_vertices() as usize];
    for v in 0..graph.num_vertices() {
        for &t in graph.neighbors(v) {
            d[t as usize] = d[t as usize].saturating_add(1);
        }
    }
    d
}

/// Runs the stats kernel on every GPU and reads the frontier lengths and statistics.
fn collect_stats<B: Backend + ?Sized>(
    backend: &mut B,
    gpus: &mut [Gpu],
    step: u32,
) -> Result<(), RuntimeError> {
    let mut reads = Vec::with_capacity(gpus.len());
    for (g, gpu) in gpus.iter().enumerate().filter(|(_, gpu)| gpu.active) {
        reads.push(launch_stats(backend, gpu, g, step)?);
    }
    for c in wait_all(backend, &reads)? {
        store_stats(gpus, c)?;
    }
    Ok(())
}

/// Writes `gpu`'s frontier length into the merged frontier's counter word ([1]), where the
/// statistics kernel reads it: a single worker's next frontier is its advance's output (or
/// its device-side loop's), which that word does not count.
fn write_frontier_counter<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &Gpu,
) -> Result<(), RuntimeError> {
    let len = HostData::U64(vec![gpu.frontier_len]);
    backend.write_from_host(gpu.compute, gpu.fixed[SLOT_COUNTERS], 1, len, None)?;
    Ok(())
}

/// Launches the stats kernel on GPU `g` and the read of its statistics; returns the read's
/// token (phase `STATS`).
fn launch_stats<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &Gpu,
    g: usize,
    step: u32,
) -> Result<Token, RuntimeError> {
    backend.launch(
        gpu.compute,
        Launch {
            kernel: "gum_frontier_stats",
            buffers: vec![
                gpu.fixed[5],
                gpu.in_degree,
                gpu.fixed[7],
                gpu.fixed[SLOT_COUNTERS],
                gpu.stats,
                gpu.prefix,
            ],
            scalars: vec![],
            work_items: kernels::chunked_launch_items(gpu.frontier_len),
        },
        None,
    )?;
    let tk = token(STATS, step, g as u32, 0);
    backend.read_to_host(gpu.compute, BufferSlice::new(gpu.stats, 0, STATS_WORDS), tk)?;
    Ok(tk)
}

/// Stores a completed statistics read: the GPU's frontier length and statistics.
fn store_stats(gpus: &mut [Gpu], c: crate::backend::Completion) -> Result<(), RuntimeError> {
    let g = gpu_of(c.token);
    let stats = read_stats(&host_u64(c.kind)?);
    gpus[g].frontier_len = stats.vertices;
    gpus[g].stats_now = stats;
    Ok(())
}

/// Alg. 1 on the victims' devices: the cut kernel finds each worker's range of the victim's
/// frontier; returns `(victim, range)` for every non-empty range.
fn cut_ranges<B: Backend + ?Sized>(
    backend: &mut B,
    gpus: &[Gpu],
    plan: &[Vec<u64>],
    step: u32,
) -> Result<Vec<(u32, VertexRange)>, RuntimeError> {
    let n = plan.len();
    let mut takers_of = Vec::with_capacity(n);
    let mut reads = Vec::new();
    for (v, row) in plan.iter().enumerate() {
        let order: Vec<usize> =
            std::iter::once(v).chain((0..n).filter(|&j| j != v)).filter(|&j| row[j] > 0).collect();
        if order.len() > MAX_CUTS + 1 {
            return Err(RuntimeError::Options(format!(
                "{} workers exceed {MAX_CUTS}",
                order.len()
            )));
        }
        if order.len() > 1 {
            let mut cut = 0u64;
            let mut scalars =
                vec![Scalar::U64(gpus[v].frontier_len), Scalar::U32(order.len() as u32 - 1)];
            for &j in &order[..order.len() - 1] {
                cut += row[j];
                scalars.push(Scalar::U64(cut));
            }
            // The prefix sums only the cuts need (the stats kernel left the chunk sums).
            backend.launch(
                gpus[v].compute,
                Launch {
                    kernel: "gum_frontier_prefix",
                    buffers: vec![
                        gpus[v].fixed[5],
                        gpus[v].fixed[7],
                        gpus[v].fixed[SLOT_COUNTERS],
                        gpus[v].stats,
                        gpus[v].prefix,
                    ],
                    scalars: vec![],
                    work_items: kernels::chunked_launch_items(gpus[v].frontier_len),
                },
                None,
            )?;
            backend.launch(
                gpus[v].compute,
                Launch {
                    kernel: "gum_cut",
                    buffers: vec![gpus[v].prefix, gpus[v].stats],
                    scalars,
                    work_items: order.len() as u64,
                },
                None,
            )?;
            let tk = token(CUT, step, v as u32, 0);
            backend.read_to_host(
                gpus[v].compute,
                BufferSlice::new(gpus[v].stats, 0, STATS_WORDS + 2 * MAX_CUTS),
                tk,
            )?;
            reads.push(tk);
        }
        takers_of.push(order);
    }
    let mut tails = vec![Vec::new(); n];
    for c in wait_all(backend, &reads)? {
        tails[gpu_of(c.token)] = host_u64(c.kind)?;
    }
    let mut ranges = Vec::new();
    for (v, order) in takers_of.iter().enumerate() {
        let len = gpus[v].frontier_len as usize;
        let total = gpus[v].stats_now.out_edges;
        if order.len() <= 1 {
            let worker = order.first().copied().unwrap_or(v) as u32;
            if len > 0 {
                ranges.push((v as u32, VertexRange { worker, start: 0, end: len, edges: total }));
            }
            continue;
        }
        let tail = &tails[v];
        let (mut start, mut start_edges) = (0usize, 0u64);
        for (k, &j) in order.iter().enumerate() {
            let (end, end_edges) = if k + 1 == order.len() {
                (len, total)
            } else {
                (
                    (tail[STATS_WORDS + k] as usize).max(start),
                    tail[STATS_WORDS + MAX_CUTS + k].max(start_edges),
                )
            };
            if end > start {
                let r =
                    VertexRange { worker: j as u32, start, end, edges: end_edges - start_edges };
                ranges.push((v as u32, r));
            }
            (start, start_edges) = (end, end_edges);
        }
    }
    Ok(ranges)
}

fn ensure_steal_out<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &mut Gpu,
    victim: usize,
    edges: usize,
) -> Result<(), RuntimeError> {
    let need = edges.max(1);
    if gpu.steal_out[victim].as_ref().is_some_and(|b| b.capacity >= need) {
        return Ok(());
    }
    let device = DeviceId(gpu.device);
    if let Some(old) = gpu.steal_out[victim].take() {
        backend.free(old.pairs)?;
        backend.free(old.len)?;
    }
    let capacity = need.next_power_of_two();
    let pairs = backend.alloc(device, ElemType::U32, 2 * capacity, "stolen output")?;
    let len = backend.alloc(device, ElemType::U64, 1, "stolen output length")?;
    gpu.steal_out[victim] = Some(PairBuffer { pairs, len, capacity });
    Ok(())
}

fn ensure_returned<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: &mut Gpu,
    thief: usize,
    pairs: usize,
) -> Result<BufferId, RuntimeError> {
    if let Some((b, cap)) = gpu.returned[thief]
        && cap >= pairs
    {
        return Ok(b);
    }
    if let Some((old, _)) = gpu.returned[thief].take() {
        backend.free(old)?;
    }
    let cap = pairs.next_power_of_two();
    let b = backend.alloc(DeviceId(gpu.device), ElemType::U32, 2 * cap, "returned pairs")?;
    gpu.returned[thief] = Some((b, cap));
    Ok(b)
}

fn validate<B: Backend + ?Sized>(
    backend: &B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    operators: &GumOperators,
    options: &GumOptions,
) -> Result<(), RuntimeError> {
    let fail = |m: String| Err(RuntimeError::Options(m));
    let primitive = operators.primitive.as_ref();
    if parts == 0 || parts > backend.device_count() {
        return fail(format!(
            "{parts} GPUs asked for, the {} backend has {}; choose 1..={}",
            backend.name(),
            backend.device_count(),
            backend.device_count()
        ));
    }
    if graph.num_vertices() == 0 {
        return fail("the graph has no vertices; give a graph with at least one vertex".into());
    }
    if owner.len() != graph.num_vertices() as usize || owner.iter().any(|&p| p >= parts) {
        return fail(format!("the partition does not map the graph's vertices to 0..{parts}"));
    }
    if primitive.needs_weights() && graph.weights().is_none() {
        return fail(format!("{} needs edge weights; add --weights", primitive.name()));
    }
    if primitive.needs_undirected() && graph.is_directed() {
        return fail(format!("{} needs the symmetrised graph", primitive.name()));
    }
    if primitive.needs_reverse()
        || primitive.needs_all_arcs()
        || primitive.combiner() == Combiner::Assign
    {
        return fail(format!(
            "{} needs broadcast or every vertex on every GPU; GUM's fragments keep one-hop \
             outer copies: use --runtime bsp",
            primitive.name()
        ));
    }
    if operators.steal.is_some() && primitive.combiner() != Combiner::MinU32 {
        return fail(format!("{}: a steal rule needs the min combiner", primitive.name()));
    }
    options.triggers.check().map_err(RuntimeError::Options)?;
    if options.osteal_interval == 0 {
        return fail(
            "--gum-osteal-interval must be at least 1 superstep; the default is 16".into(),
        );
    }
    if options.solver.max_workers == 0 || options.solver.time_limit_ms == 0 {
        return fail(
            "--gum-solver-max-workers and --gum-solver-time-limit-ms must be at least 1".into(),
        );
    }
    Ok(())
}

/// Uploads fragment `gpu` ([`upload_slots`], on `streams` when the GPU has them already),
/// with GUM's own buffers: in-degrees, the frontier statistics and the degree prefix sums.
#[allow(clippy::too_many_arguments)]
fn upload<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: u32,
    sub: &mut Subgraph,
    pairs: (&[usize], &[usize]),
    primitive: &dyn BspPrimitive,
    n: u32,
    in_degree_global: &[u32],
    tokens: &mut Vec<Token>,
    streams: Option<(StreamId, StreamId)>,
    start: &Start<'_>,
) -> Result<Gpu, RuntimeError> {
    let device = DeviceId(gpu);
    let peers = pairs.0.len();
    let local = sub.local as usize;
    let (compute, comm) = match streams {
        Some(s) => s,
        None => (
            backend.create_stream(device, StreamPriority::Normal)?,
            backend.create_stream(device, StreamPriority::Normal)?,
        ),
    };
    let in_degree: Vec<u32> =
        sub.global_of_local.iter().map(|&v| in_degree_global[v as usize]).collect();
    let max_out_degree = sub
        .global_degree
        .iter()
        .zip(&sub.owner_of_local)
        .filter(|&(_, &home)| home == gpu)
        .map(|(&d, _)| u64::from(d))
        .max()
        .unwrap_or(0);
    // PageRank's pull reads the transpose of this GPU's own arcs (no primitive GUM runs
    // asks for the whole graph's in-arcs).
    let reverse =
        if primitive.needs_local_transpose() { sub.local_transpose() } else { Default::default() };
    let UploadedSlots { fixed, send, recv, scratch, frontier_len } = upload_slots(
        backend, gpu, compute, sub, pairs, primitive, n, reverse, start, true, tokens,
    )?;
    let in_degree_buf = backend.alloc(device, ElemType::U32, local, "in-degree")?;
    write_upload(backend, compute, in_degree_buf, HostData::U32(in_degree), tokens)?;
    let stats = backend.alloc(device, ElemType::U64, STATS_BUFFER_WORDS, "frontier stats")?;
    let prefix = backend.alloc(device, ElemType::U64, local.max(1), "degree prefix sums")?;
    let empty = backend.alloc(device, ElemType::U32, 0, "empty")?;
    Ok(Gpu {
        device: gpu,
        compute,
        comm,
        fixed,
        send,
        recv,
        scratch,
        in_degree: in_degree_buf,
        stats,
        prefix,
        empty,
        steal_out: (0..peers).map(|_| None).collect(),
        returned: vec![None; peers],
        hubs: vec![None; peers],
        frontier_len,
        stats_now: FrontierStats::default(),
        max_out_degree,
        active: true,
        home_streams: (compute, comm),
        hosted_streams: vec![None; peers],
        parked: None,
    })
}

/// What every upload of the fragments needs (the first, and each ownership move).
struct Fragments<'a> {
    graph: &'a Csr,
    parts: u32,
    primitive: &'a dyn BspPrimitive,
    in_degree: &'a [u32],
    /// t4 when hub lists are cached (FSteal on), else `None`.
    hub_t4: Option<u32>,
}

impl Fragments<'_> {
    /// Builds the fragments of partition `owner` and uploads them (on `streams` when the
    /// GPUs already have them), starting from `start`; waits until they are on the devices.
    fn upload<B: Backend + ?Sized>(
        &self,
        backend: &mut B,
        owner: &[u32],
        streams: Option<Vec<(StreamId, StreamId)>>,
        start: &Start<'_>,
    ) -> Result<(Vec<Subgraph>, Vec<Gpu>), RuntimeError> {
        let parts = self.parts;
        let mut subgraphs = build_subgraphs(self.graph, owner, parts, Duplication::OneHop);
        let pairs: Vec<Vec<usize>> = subgraphs
            .iter()
            .enumerate()
            .map(|(g, sub)| (0..parts).map(|p| sub.proxies_owned_by(g as u32, p)).collect())
            .collect();
        let hubs: Vec<HubLists> = match self.hub_t4 {
            Some(t4) => subgraphs
                .iter()
                .enumerate()
                .map(|(g, sub)| HubLists::of(sub, g as u32, self.in_degree, t4))
                .collect(),
            None => Vec::new(),
        };
        let mut gpus = Vec::with_capacity(parts as usize);
        let mut tokens = Vec::new();
        for (g, sub) in subgraphs.iter_mut().enumerate() {
            let incoming: Vec<usize> = pairs.iter().map(|row| row[g]).collect();
            let gpu = upload(
                backend,
                g as u32,
                sub,
                (&pairs[g], &incoming),
                self.primitive,
                self.graph.num_vertices(),
                self.in_degree,
                &mut tokens,
                streams.as_ref().map(|s| s[g]),
                start,
            )?;
            gpus.push(gpu);
        }
        // Every fragment's hub lists go to every other GPU, up front (Ex. 6).
        for (j, gpu) in gpus.iter_mut().enumerate() {
            for (i, lists) in hubs.iter().enumerate().filter(|(i, l)| *i != j && !l.is_empty()) {
                let device = DeviceId(gpu.device);
                gpu.hubs[i] = Some(HubCache::upload(
                    backend,
                    device,
                    gpu.compute,
                    lists,
                    &mut tokens,
                    PHASE_UPLOAD,
                )?);
            }
        }
        wait_all(backend, &tokens)?;
        Ok((subgraphs, gpus))
    }
}

/// Frees every buffer of `gpu` (its streams stay for the fragment that replaces it).
fn release<B: Backend + ?Sized>(backend: &mut B, gpu: Gpu) -> Result<(), RuntimeError> {
    let steal = gpu.steal_out.into_iter().flatten().flat_map(|b| [b.pairs, b.len]);
    let returned = gpu.returned.into_iter().flatten().map(|(b, _)| b);
    let fixed = gpu.fixed.into_iter().chain(gpu.send).chain(gpu.recv).chain(gpu.scratch);
    let own = [gpu.in_degree, gpu.stats, gpu.prefix, gpu.empty];
    let hubs = gpu.hubs.into_iter().flatten().flat_map(|c| c.buffers);
    let parked: Vec<BufferId> = gpu.parked.iter().flat_map(Mutable::buffers).collect();
    for b in fixed.chain(own).chain(steal).chain(returned).chain(hubs).chain(parked) {
        backend.free(b)?;
    }
    Ok(())
}

type Gathered = (Vec<u32>, Option<Vec<f32>>);

fn gather<B: Backend + ?Sized>(
    backend: &mut B,
    gpus: &[Gpu],
    subgraphs: &[Subgraph],
    primitive: &dyn BspPrimitive,
    n: u32,
) -> Result<Gathered, RuntimeError> {
    let has_aux = primitive.initial_aux(0, n).is_some();
    let mut tokens = Vec::new();
    for (g, gpu) in gpus.iter().enumerate() {
        let local = subgraphs[g].local as usize;
        if local == 0 {
            continue;
        }
        let t = token(GATHER, 0, g as u32, 0);
        backend.read_to_host(gpu.compute, BufferSlice::new(gpu.fixed[3], 0, local), t)?;
        tokens.push(t);
        if has_aux {
            let t = token(GATHER, 0, g as u32, 1);
            backend.read_to_host(gpu.compute, BufferSlice::new(gpu.fixed[4], 0, local), t)?;
            tokens.push(t);
        }
    }
    let mut values = vec![0u32; n as usize];
    let mut aux = has_aux.then(|| vec![0f32; n as usize]);
    for c in wait_all(backend, &tokens)? {
        let g = gpu_of(c.token);
        let is_aux = peer_of(c.token) == 1;
        let sub = &subgraphs[g];
        let CompletionKind::HostRead(data) = c.kind else {
            return Err(BackendError::Usage("gather read returned no data".into()).into());
        };
        for v in 0..sub.local as usize {
            if sub.owner_of_local[v] != g as u32 {
                continue;
            }
            let global = sub.global_of_local[v] as usize;
            match (&data, is_aux, aux.as_mut()) {
                (HostData::F32(x), true, Some(aux)) => aux[global] = x[v],
                (HostData::F32(x), false, _) => values[global] = x[v].to_bits(),
                (HostData::F64(x), false, _) => values[global] = (x[v] as f32).to_bits(),
                (HostData::U32(x), false, _) => values[global] = x[v],
                _ => return Err(BackendError::Usage("gather: unexpected data type".into()).into()),
            }
        }
    }
    Ok((values, aux))
}
