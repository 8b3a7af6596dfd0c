//! `switchyard run`: one algorithm, one graph, one machine, validated and reported.

use super::graph_source::{GraphArgs, ResolvedGraph, resolve_graph};
use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{
    BackendSetup, CudaSetup, RunSpec, RuntimeKind, SimSetup, run, trace::chrome_trace,
};
use switchyard::runtime::bsp::{BspOptions, Communication, Duplication};
use switchyard::runtime::groute::worklist::{RingOrder, SendMode, WorklistOptions};
use switchyard::runtime::gum::GumOptions;
use switchyard::runtime::gum::planner::{SolverLimits, Triggers};
use switchyard_sim::fault::FaultSpec;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// The largest `--jitter-ns`: one virtual second.
const MAX_JITTER_NS: u64 = 1_000_000_000;

/// `--priority-delta`: a step, or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityDelta {
    /// Soft priority off, even where the runtime would turn it on.
    Off,
    /// Soft priority with this threshold step.
    Step(u64),
}

/// `--fused`: Groute's fused worker on, off, or chosen by the graph and algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FusedArg {
    /// Where the algorithm asks for it on a road-like graph (BFS).
    Auto,
    /// Always (`--fused` alone).
    On,
    /// Never: a launch per batch.
    Off,
}

/// `--groute-send`: when Groute's remote items leave, or chosen by the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GrouteSendArg {
    /// `async` with the fused worker for BFS and SSSP on several GPUs when the graph is not
    /// road-like and `--fused` is `auto`; `end` otherwise.
    Auto,
    /// At the end of each launch, through the ring router.
    End,
    /// While the fused worker runs (needs `--fused`).
    Async,
}

/// The largest `--gum-plan-round-trips-us`: the most microseconds whose picoseconds fit a
/// `u64` (`GumOptions::plan_round_trips_ps`).
const MAX_PLAN_ROUND_TRIPS_US: u64 = u64::MAX / 1_000_000;

/// `--gum-plan-round-trips-us`: whole microseconds that still fit in picoseconds.
fn parse_plan_round_trips_us(text: &str) -> Result<u64, String> {
    let us: u64 = text.parse().map_err(|_| {
        format!(
            "`{text}` is not a whole number of microseconds; give e.g. {} (the default) or 0 \
             (plans cost no round trips)",
            GumOptions::default().plan_round_trips_ps / 1_000_000
        )
    })?;
    if us > MAX_PLAN_ROUND_TRIPS_US {
        return Err(format!(
            "{us} us overflows when converted to picoseconds (at most \
             {MAX_PLAN_ROUND_TRIPS_US} us fit); give a smaller time"
        ));
    }
    Ok(us)
}

fn parse_priority_delta(text: &str) -> Result<PriorityDelta, String> {
    if text == "off" {
        return Ok(PriorityDelta::Off);
    }
    text.parse::<u64>().map(PriorityDelta::Step).map_err(|_| {
        format!("`{text}` is neither a threshold step (an integer, at least 1) nor `off`")
    })
}

/// Options every run takes (shared with `sweep`).
#[derive(clap::Args, Debug, Clone)]
pub struct RunOptions {
    /// Seed (partitioner, weights, simulator).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Source vertex of BFS and SSSP, as the graph file names it (1-based for Matrix Market,
    /// DIMACS and METIS; the listed ids for SNAP and LDBC; 0-based for generated graphs).
    /// Default: the LDBC `.properties` source, else the graph's first vertex.
    #[arg(long)]
    pub source: Option<u64>,
    /// Partitioner: random, biased-random, seg, hash, metis, or auto (METIS on a road-like
    /// graph, largest degree at most 32; random otherwise). Default: auto for --runtime
    /// groute and atos (Groute partitions with METIS, seed 000 section 4.6.1, and Atos's
    /// evaluation uses the same partitions, seed 003 section IV), random otherwise.
    #[arg(long)]
    pub partitioner: Option<String>,
    /// Vertex duplication (seed 002 section III-C).
    #[arg(long, value_enum, default_value = "one-hop")]
    pub duplication: DuplicationArg,
    /// Communication strategy (broadcast needs --duplication all).
    #[arg(long, value_enum, default_value = "selective")]
    pub communication: CommunicationArg,
    /// BSP on one GPU: run supersteps in the algorithm's device-side loop (BFS: one
    /// cooperative launch for many levels) while the frontier has at most this many
    /// vertices; 0 turns the loop off (every superstep through the host).
    #[arg(long, default_value_t = switchyard::runtime::bsp::DEFAULT_LOOP_FRONTIER)]
    pub bsp_loop_frontier: u64,
    /// GUM's single worker (one GPU, or OSteal's last after a re-upload move): run its
    /// supersteps in BSP's device-side loop while the frontier has at most this many
    /// vertices (BSP's default), leaving it where OSteal's Alg. 2 is due; 0 sends every
    /// superstep through the host.
    #[arg(long, default_value_t = switchyard::runtime::bsp::DEFAULT_LOOP_FRONTIER)]
    pub gum_loop_frontier: u64,
    /// BSP (and GUM) on several GPUs: how a superstep's packages reach their receivers;
    /// auto takes peer reads (one host round trip a superstep) where every pair of GPUs has
    /// peer access, copies (three) otherwise.
    #[arg(long, value_enum, default_value = "auto")]
    pub bsp_exchange: switchyard::runtime::bsp::Exchange,
    /// BSP and GUM on several GPUs: split each superstep's output in the advance itself where
    /// the algorithm can (BFS: what it discovers goes straight to the next frontier or its
    /// owner's package; GUM: in supersteps where nothing is stolen), or in a
    /// split kernel after every advance (seed 002's scheme).
    #[arg(long, value_enum, default_value = "in-advance")]
    pub bsp_split: switchyard::runtime::bsp::Split,
    /// BSP on several GPUs: what the routed advance sends its owners: `(id, value)` pairs,
    /// or one bit per vertex (BFS: every value of a level is the level), read and cleared
    /// by the owner's merge (fewer bytes, but slower on NVLink H100s).
    #[arg(long, value_enum, default_value = "pairs")]
    pub bsp_packages: switchyard::runtime::bsp::PackageForm,
    /// Interconnect fidelity of the simulator.
    #[arg(long, value_enum, default_value = "flow")]
    pub fidelity: FidelityArg,
    /// PageRank damping factor (default: the LDBC `.properties` value, else 0.85).
    #[arg(long)]
    pub damping: Option<f64>,
    /// Iterations of LDBC PageRank and CDLP (default: the LDBC `.properties` value,
    /// `pr.num-iterations` or `cdlp.max-iterations`, else 20).
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Residual PageRank tolerance (raw scale: each vertex starts with 1 - damping).
    #[arg(long, default_value_t = 1e-4)]
    pub epsilon: f64,
    /// Direction-optimizing BFS: pull once the frontier exceeds the unvisited vertices
    /// divided by this (larger: pull earlier; Beamer's is 14, 1000 measured best on R-MAT).
    #[arg(long, default_value_t = switchyard::algo::dobfs::DEFAULT_ALPHA)]
    pub dobfs_alpha: f64,
    /// Direction-optimizing BFS: push again once the frontier falls below the vertex count
    /// divided by this.
    #[arg(long, default_value_t = switchyard::algo::dobfs::DEFAULT_BETA)]
    pub dobfs_beta: f64,
    /// LDBC PageRank on the bulk-synchronous runtime and GUM: `pull` (each vertex sums its
    /// in-neighbours' shares, no atomics) or `push` (an f64 atomic add per arc). Both send
    /// the same messages.
    #[arg(long, value_enum, default_value = "pull")]
    pub pr_direction: switchyard::algo::pagerank::PrDirection,
    /// Skip validation against the references.
    #[arg(long)]
    pub no_validate: bool,
    /// Random extra delay (0..=N ns, from the seed) on every transfer and kernel, to
    /// exercise other interleavings.
    #[arg(long, default_value_t = 0)]
    pub jitter_ns: u64,
    /// Groute: work items per packet on the worklist router's links (8 bytes each).
    #[arg(long, default_value_t = 4096)]
    pub packet_size: usize,
    /// Groute: receive buffers per link (2 = double buffering).
    #[arg(long, default_value_t = 4)]
    pub buffers: u32,
    /// Groute: ring order of the worklist router.
    #[arg(long, value_enum, default_value = "index")]
    pub ring: RingOrder,
    /// Groute: soft-priority scheduling with this threshold step (levels for BFS, distance
    /// units for SSSP), or `off`. Default: BFS on several GPUs takes the runtime's own step
    /// (see `WorklistApp::auto_priority_delta`); everything else runs without.
    #[arg(long, value_parser = parse_priority_delta)]
    pub priority_delta: Option<PriorityDelta>,
    /// Groute: the fused worker (a persistent kernel) instead of a launch per batch: `on`
    /// (`--fused` alone), `off`, or `auto`: on for BFS and SSSP on a road-like graph (every
    /// vertex with at most 32 arcs; 3-5x faster there on real GPUs, slower on scale-free
    /// graphs).
    #[arg(long, value_enum, num_args = 0..=1, default_value = "auto", default_missing_value = "on")]
    pub fused: FusedArg,
    /// Groute: most items one work kernel (or fused round) takes. Default: sized to the
    /// graph with --out-items (a sixteenth of it, 65536..4194304); giving either size
    /// fixes both (the other then takes 65536 items per batch, 262144 of output).
    #[arg(long)]
    pub batch_items: Option<u64>,
    /// Groute: capacity of the work kernel's output in items (a batch's out-degrees must
    /// fit it; raised to the largest out-degree). Default: a quarter of a GPU's share of
    /// the arcs, 262144..67108864.
    #[arg(long)]
    pub out_items: Option<usize>,
    /// Groute: when remote items leave: `end` (at the end of each launch, through the ring
    /// router, whose every hop is a host round trip), `async` (while the fused worker runs:
    /// the host copies each published outbox segment straight to its destination's inbox,
    /// and the running worker there takes it; needs --fused), or `auto`: `async` with the
    /// fused worker for BFS and SSSP on several GPUs on a graph that is not road-like while
    /// --fused is `auto` (R-MAT 22 BFS on 4 H200s: 289.9 ms with `end`, 15.5 with `async`),
    /// `end` otherwise.
    #[arg(long, value_enum, default_value = "auto")]
    pub groute_send: GrouteSendArg,
    /// Groute: most rounds of one fused launch.
    #[arg(long, default_value_t = WorklistOptions::default().fused_max_rounds)]
    pub fused_max_rounds: u32,
    /// Groute: initial worklist capacity per GPU in items (it grows on demand).
    #[arg(long, default_value_t = WorklistOptions::default().initial_worklist_items)]
    pub worklist_items: usize,
    /// Atos options.
    #[command(flatten)]
    pub atos: super::atos_args::AtosArgs,
    /// GUM: frontier stealing (FSteal) on, off, or forced (a plan whenever t1 and t2 fire,
    /// executed whether or not it is predicted to pay: for checking the mechanism).
    #[arg(long, value_enum, default_value = "on")]
    pub gum_fsteal: FstealArg,
    /// GUM: ownership stealing (OSteal) on or off.
    #[arg(long, value_enum, default_value = "on")]
    pub gum_osteal: OnOff,
    /// GUM: how an OSteal move hands an evicted GPU's fragment to its survivor: `reupload`
    /// (values and frontier to the host, every fragment rebuilt and uploaded again) or
    /// `extended` (the paper's: the evicted GPU keeps its fragment's topology as extended
    /// memory, the fragment's values and residual frontier go to the survivor by a peer
    /// copy, and the survivor runs the fragment's kernels reading the topology through peer
    /// access; the evicted GPU runs nothing; only to hosts with peer access).
    #[arg(long, value_enum, default_value = "reupload")]
    pub gum_osteal_move: OstealMoveArg,
    /// GUM: supersteps between two runs of OSteal's Alg. 2 while the load stays within a
    /// factor of 2 of its last run.
    #[arg(long, default_value_t = GumOptions::default().osteal_interval)]
    pub gum_osteal_interval: u32,
    /// GUM t1: FSteal only when the busiest GPU has at least this many active edges.
    #[arg(long, default_value_t = Triggers::default().t1_min_max_edges)]
    pub gum_t1: u64,
    /// GUM t2: FSteal only when the busiest and idlest GPUs differ by at least this many
    /// edges.
    #[arg(long, default_value_t = Triggers::default().t2_min_imbalance_edges)]
    pub gum_t2: u64,
    /// GUM t3: OSteal only after a superstep shorter than this, in microseconds.
    #[arg(long, default_value_t = Triggers::default().t3_max_iteration_ps / 1_000_000)]
    pub gum_t3_us: u64,
    /// GUM t4: hub vertices have an in-degree above this.
    #[arg(long, default_value_t = Triggers::default().t4_hub_in_degree)]
    pub gum_t4: u32,
    /// GUM: largest stealing problem (GPUs) the LP solver is asked about.
    #[arg(long, default_value_t = SolverLimits::default().max_workers)]
    pub gum_solver_max_workers: usize,
    /// GUM: the LP solver's wall-clock guard in milliseconds (no stealing that superstep
    /// when it runs out, recorded in the report).
    #[arg(long, default_value_t = SolverLimits::default().time_limit_ms)]
    pub gum_solver_time_limit_ms: u64,
    /// GUM: whose Table I features the plan's `g(W)` is evaluated on: the superstep's whole
    /// frontier (`pooled`, one `g` for every fragment) or each fragment's (`per-fragment`,
    /// Eq. 2's `g(W_i)`).
    #[arg(long, value_enum, default_value = "pooled")]
    pub gum_cost_features: CostFeaturesArg,
    /// GUM: what a frontier-stealing plan costs once in host round trips (the cut's and the
    /// return's), in microseconds: a plan is solved and executed only if it is predicted to
    /// save more (`GumOptions::plan_round_trips_ps`; 0 counts none).
    #[arg(
        long,
        value_name = "US",
        value_parser = parse_plan_round_trips_us,
        default_value_t = GumOptions::default().plan_round_trips_ps / 1_000_000
    )]
    pub gum_plan_round_trips_us: u64,
    /// Inject a fault into the simulated machine (repeatable):
    /// `link-degrade:link=A-B[,bandwidth=F][,latency_ns=N][,at_us=T]`,
    /// `link-fail:link=A-B[,at_us=T]`, `straggler:gpu=I,slowdown=X[,at_us=T]`,
    /// `delay:max_ns=N[,p=P][,at_us=T]` (A, B: the devices at a link's ends; `at_ns=T` for
    /// nanoseconds). See README, "Faults".
    #[arg(long = "fault", value_name = "SPEC")]
    pub faults: Vec<FaultSpec>,
}

/// [`switchyard::runtime::gum::CostFeatures`] as the CLI spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CostFeaturesArg {
    /// The superstep's whole frontier.
    Pooled,
    /// Each fragment's own frontier.
    PerFragment,
}

/// `--gum-fsteal` as the CLI spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FstealArg {
    /// Plans where they are predicted to pay.
    On,
    /// No frontier stealing.
    Off,
    /// A plan, executed, whenever t1 and t2 fire.
    Forced,
}

/// `--gum-osteal-move` as the CLI spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OstealMoveArg {
    /// Rebuild and upload every fragment.
    Reupload,
    /// Evicted GPUs as extended memory.
    Extended,
}

/// A switch as the CLI spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

impl RunOptions {
    /// GUM's options from the command line (checked when the run starts).
    pub fn gum(&self) -> GumOptions {
        GumOptions {
            fsteal: self.gum_fsteal != FstealArg::Off,
            fsteal_forced: self.gum_fsteal == FstealArg::Forced,
            osteal: self.gum_osteal == OnOff::On,
            osteal_interval: self.gum_osteal_interval,
            triggers: Triggers {
                t1_min_max_edges: self.gum_t1,
                t2_min_imbalance_edges: self.gum_t2,
                t3_max_iteration_ps: self.gum_t3_us.saturating_mul(1_000_000),
                t4_hub_in_degree: self.gum_t4,
            },
            solver: SolverLimits {
                max_workers: self.gum_solver_max_workers,
                time_limit_ms: self.gum_solver_time_limit_ms,
            },
            exchange: self.bsp_exchange,
            split: self.bsp_split,
            loop_frontier: self.gum_loop_frontier,
            cost_features: match self.gum_cost_features {
                CostFeaturesArg::Pooled => switchyard::runtime::gum::CostFeatures::Pooled,
                CostFeaturesArg::PerFragment => switchyard::runtime::gum::CostFeatures::PerFragment,
            },
            // The parser keeps the product below 2^64.
            plan_round_trips_ps: self.gum_plan_round_trips_us.saturating_mul(1_000_000),
            osteal_move: match self.gum_osteal_move {
                OstealMoveArg::Reupload => switchyard::runtime::gum::OstealMove::Reupload,
                OstealMoveArg::Extended => switchyard::runtime::gum::OstealMove::Extended,
            },
            ..GumOptions::default()
        }
    }
}

/// Duplication strategy as the CLI spells it.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DuplicationArg {
    /// Proxies for immediate remote neighbours only.
    OneHop,
    /// A local copy of every vertex.
    All,
}

/// Communication strategy as the CLI spells it.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum CommunicationArg {
    /// Send updates to the owner only.
    Selective,
    /// Send every update to every GPU.
    Broadcast,
}

/// Backend as the CLI spells it.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum BackendArg {
    /// The deterministic simulator.
    Sim,
    /// Real GPUs through CUDA.
    Cuda,
}

/// Interconnect fidelity as the CLI spells it.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FidelityArg {
    /// Flow-level max-min fair sharing.
    Flow,
    /// Packet-level store-and-forward.
    Packet,
}

/// Arguments of `run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Algorithm.
    #[arg(long, value_enum, default_value = "bfs")]
    algo: Algorithm,
    /// Runtime.
    #[arg(long, value_enum, default_value = "bsp")]
    runtime: RuntimeKind,
    /// Backend: the simulator, or real GPUs through CUDA.
    #[arg(long, value_enum, default_value = "sim")]
    backend: BackendArg,
    #[command(flatten)]
    options: RunOptions,
    /// Topology: a bundled name (see `switchyard topo list`) or a TOML file.
    #[arg(long, default_value = "dgx1-v100")]
    topology: String,
    /// GPUs to use (the first N of the topology, or of the machine with --backend cuda).
    #[arg(long, default_value_t = 1)]
    gpus: u32,
    /// With --backend cuda: run --gpus logical GPUs on this machine's GPUs, several sharing
    /// one where it has fewer (validates multi-GPU code on one GPU; times are not scaling).
    #[arg(long)]
    logical_gpus: bool,
    /// Write the JSON run report here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write a Chrome/Perfetto trace here (simulator: kernels and transfers; CUDA: each
    /// kernel's span from CUDA events, the gaps between them being the GPU waiting).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Write the per-vertex result here in the LDBC Graphalytics output format (`vertex
    /// value` lines in the graph file's own ids).
    #[arg(long)]
    output: Option<PathBuf>,
}

impl RunOptions {
    /// What the run is: `algorithm` on `runtime` over `gpus` GPUs, with `--source` taken as
    /// a dense index and the options' parameters or their defaults (no `.properties`).
    pub fn spec(
        &self,
        algorithm: Algorithm,
        runtime: RuntimeKind,
        gpus: u32,
        command_line: Vec<String>,
    ) -> anyhow::Result<RunSpec> {
        let defaults = AlgorithmParams::default();
        let source = match self.source {
            None => 0,
            Some(s) => u32::try_from(s)
                .with_context(|| format!("--source {s}: vertex ids are below 2^32"))?,
        };
        let params = AlgorithmParams {
            source,
            damping: self.damping.unwrap_or(defaults.damping),
            iterations: self.iterations.unwrap_or(defaults.iterations),
            epsilon: self.epsilon,
            dobfs_alpha: self.dobfs_alpha,
            dobfs_beta: self.dobfs_beta,
            pr_direction: self.pr_direction,
        };
        self.spec_with(algorithm, runtime, gpus, params, command_line)
    }

    /// The parameters of `algorithm` on `graph`: each from its option, else from the
    /// graph's LDBC `.properties`, else the default; `--source` is the file's vertex id,
    /// mapped to the dense index. An option that contradicts the `.properties` is an error
    /// naming the file, the key and the option. Returns the parameters and, when any came
    /// from the `.properties`, the line that says which.
    pub fn params(
        &self,
        algorithm: Algorithm,
        graph: &ResolvedGraph,
    ) -> anyhow::Result<(AlgorithmParams, Option<String>)> {
        let (params, own) = self.params_from_file(algorithm, graph)?;
        let used: Vec<String> = graph.used.iter().cloned().chain(own).collect();
        let file = graph.properties.as_ref().map(|(f, _)| f.display().to_string());
        let line = (!used.is_empty())
            .then(|| format!("parameters from {}: {}", file.unwrap_or_default(), used.join(", ")));
        Ok((params, line))
    }

    /// [`RunOptions::params`] without the line: the parameters and the algorithm's own
    /// settings taken from the `.properties` (as `what value (key)`; the graph's own, such
    /// as its directedness, are in `graph.used`).
    pub fn params_from_file(
        &self,
        algorithm: Algorithm,
        graph: &ResolvedGraph,
    ) -> anyhow::Result<(AlgorithmParams, Vec<String>)> {
        let defaults = AlgorithmParams::default();
        let props = graph.properties.as_ref();
        let file = props.map(|(f, _)| f.display().to_string()).unwrap_or_default();
        let mut used = Vec::new();
        // One parameter: the option, else the file's value (recorded), else the default.
        fn pick<T: PartialEq + std::fmt::Display + Copy>(
            option: Option<T>,
            flag: &str,
            from_file: Option<T>,
            key: String,
            file: &str,
            used: &mut Vec<String>,
            what: &str,
        ) -> anyhow::Result<Option<T>> {
            match (option, from_file) {
                (Some(o), Some(f)) if o != f => bail!(
                    "{flag} {o} contradicts `{key} = {f}` in {file}; drop {flag} to use the \
                     file's value, or pass --ignore-properties to run with {flag} {o}"
                ),
                (Some(o), _) => Ok(Some(o)),
                (None, Some(f)) => {
                    used.push(format!("{what} {f} ({key})"));
                    Ok(Some(f))
                }
                (None, None) => Ok(None),
            }
        }
        let takes_source = algorithm.instance(&defaults).source().is_some();
        let source = if takes_source {
            let (key, from_file) = match algorithm {
                Algorithm::Sssp => {
                    ("sssp.source-vertex", props.and_then(|(_, p)| p.sssp_source_vertex))
                }
                _ => ("bfs.source-vertex", props.and_then(|(_, p)| p.bfs_source_vertex)),
            };
            let key = graph.key(key);
            let option_given = self.source.is_some();
            match pick(
                self.source,
                "--source",
                from_file,
                key.clone(),
                &file,
                &mut used,
                "source vertex",
            )? {
                Some(id) if option_given => {
                    graph.dense_vertex(id, &format!("--source {id}"), "give one of its ids")?
                }
                Some(id) => graph.dense_vertex(
                    id,
                    &format!("`{key} = {id}` in {file}"),
                    "fix the .properties, or pass --source ID with --ignore-properties",
                )?,
                None => 0,
            }
        } else {
            0
        };
        let pagerank = matches!(algorithm, Algorithm::Pr | Algorithm::PrResidual);
        let damping = if pagerank {
            let from_file = props.and_then(|(_, p)| p.pr_damping_factor);
            pick(
                self.damping,
                "--damping",
                from_file,
                graph.key("pr.damping-factor"),
                &file,
                &mut used,
                "damping",
            )?
        } else {
            self.damping
        };
        let iterations = match algorithm {
            Algorithm::Pr => pick(
                self.iterations,
                "--iterations",
                props.and_then(|(_, p)| p.pr_num_iterations),
                graph.key("pr.num-iterations"),
                &file,
                &mut used,
                "iterations",
            )?,
            Algorithm::Cdlp => pick(
                self.iterations,
                "--iterations",
                props.and_then(|(_, p)| p.cdlp_max_iterations),
                graph.key("cdlp.max-iterations"),
                &file,
                &mut used,
                "iterations",
            )?,
            _ => self.iterations,
        };
        let params = AlgorithmParams {
            source,
            damping: damping.unwrap_or(defaults.damping),
            iterations: iterations.unwrap_or(defaults.iterations),
            epsilon: self.epsilon,
            dobfs_alpha: self.dobfs_alpha,
            dobfs_beta: self.dobfs_beta,
            pr_direction: self.pr_direction,
        };
        Ok((params, used))
    }

    /// What the run is: `algorithm` with `params` on `runtime` over `gpus` GPUs.
    pub fn spec_with(
        &self,
        algorithm: Algorithm,
        runtime: RuntimeKind,
        gpus: u32,
        params: AlgorithmParams,
        command_line: Vec<String>,
    ) -> anyhow::Result<RunSpec> {
        let duplication = match self.duplication {
            DuplicationArg::OneHop => Duplication::OneHop,
            DuplicationArg::All => Duplication::All,
        };
        let communication = match self.communication {
            CommunicationArg::Selective => Communication::Selective,
            CommunicationArg::Broadcast => Communication::Broadcast,
        };
        self.check_groute_sizes()?;
        let defaults = WorklistOptions::default();
        if communication == Communication::Broadcast && duplication != Duplication::All {
            bail!(
                "--communication broadcast needs --duplication all (receivers index by global id)"
            );
        }
        Ok(RunSpec {
            gpus,
            runtime,
            algorithm,
            params,
            partitioner: self.partitioner.clone().unwrap_or_else(|| {
                let async_runtime = matches!(runtime, RuntimeKind::Groute | RuntimeKind::Atos);
                if async_runtime { "auto" } else { "random" }.to_string()
            }),
            seed: self.seed,
            bsp: BspOptions {
                duplication,
                communication,
                loop_frontier: self.bsp_loop_frontier,
                exchange: self.bsp_exchange,
                split: self.bsp_split,
                packages: self.bsp_packages,
                ..BspOptions::default()
            },
            groute: WorklistOptions {
                packet_items: self.packet_size,
                buffers: self.buffers,
                ring: self.ring,
                priority_delta: match self.priority_delta {
                    Some(PriorityDelta::Step(delta)) => Some(delta),
                    Some(PriorityDelta::Off) | None => None,
                },
                fused: self.fused == FusedArg::On,
                auto_fused: self.fused == FusedArg::Auto,
                batch_items: self.batch_items.unwrap_or(defaults.batch_items),
                out_items: self.out_items.unwrap_or(defaults.out_items),
                fused_max_rounds: self.fused_max_rounds,
                initial_worklist_items: self.worklist_items,
                auto_size: self.batch_items.is_none() && self.out_items.is_none(),
                auto_priority: self.priority_delta.is_none(),
                send: match self.groute_send {
                    GrouteSendArg::Async => SendMode::Async,
                    GrouteSendArg::Auto | GrouteSendArg::End => SendMode::End,
                },
                auto_send: self.groute_send == GrouteSendArg::Auto && self.fused == FusedArg::Auto,
            },
            atos: self.atos.options(),
            gum: self.gum(),
            validate: !self.no_validate,
            command_line,
        })
    }

    /// Refuses Groute sizes no run can use (zero, or beyond what a GPU could hold), naming
    /// the option and its range.
    fn check_groute_sizes(&self) -> anyhow::Result<()> {
        const ITEMS: u64 = 1 << 32;
        let checks: [(&str, u64, u64, u64, &str); 6] = [
            ("--packet-size", self.packet_size as u64, 1, 1 << 24, "work items per packet"),
            ("--buffers", u64::from(self.buffers), 1, 1024, "receive buffers per link"),
            ("--batch-items", self.batch_items.unwrap_or(1), 1, ITEMS, "items per work kernel"),
            (
                "--out-items",
                self.out_items.unwrap_or(0) as u64,
                0,
                ITEMS,
                "items of work-kernel output",
            ),
            ("--fused-max-rounds", u64::from(self.fused_max_rounds), 1, ITEMS, "rounds"),
            ("--worklist-items", self.worklist_items as u64, 0, ITEMS, "worklist items"),
        ];
        for (option, value, low, high, what) in checks {
            if !(low..=high).contains(&value) {
                bail!("{option} {value}: give {low}..={high} {what}");
            }
        }
        Ok(())
    }

    /// How the simulator is set up: `topology` with the `--fault`s, whose first `gpus` GPUs
    /// the run uses (a straggler on a GPU the run does not use changes nothing).
    pub fn sim_setup(
        &self,
        topology: Topology,
        gpus: u32,
        trace: bool,
    ) -> anyhow::Result<SimSetup> {
        let available = topology.gpus.len() as u32;
        if gpus == 0 || gpus > available {
            bail!(
                "--gpus {gpus}: topology `{}` has {available} GPUs; choose 1..={available}",
                topology.name
            );
        }
        let topology = topology.with_faults(&self.faults)?;
        if self.jitter_ns > MAX_JITTER_NS {
            bail!(
                "--jitter-ns {}: above the largest accepted jitter, {MAX_JITTER_NS} ns (one \
                 virtual second); give a delay bound in 0..={MAX_JITTER_NS}",
                self.jitter_ns
            );
        }
        Ok(SimSetup {
            topology,
            fidelity: match self.fidelity {
                FidelityArg::Flow => Fidelity::Flow,
                FidelityArg::Packet => Fidelity::Packet,
            },
            trace,
            jitter_ps: self.jitter_ns.saturating_mul(1000),
        })
    }
}

/// The backend setup `backend` names; checks before any work that it can run `gpus` GPUs.
pub fn backend_setup(
    backend: BackendArg,
    options: &RunOptions,
    topology: &str,
    gpus: u32,
    logical_gpus: bool,
    trace: bool,
) -> anyhow::Result<BackendSetup> {
    Ok(match backend {
        BackendArg::Sim => {
            if logical_gpus {
                bail!(
                    "--logical-gpus is for --backend cuda (the simulator has every GPU it models)"
                );
            }
            let topology = Topology::open(topology)
                .with_context(|| format!("opening topology `{topology}`"))?;
            let setup = options.sim_setup(topology, gpus, trace)?;
            setup.topology.faults().check_gpus(gpus)?;
            BackendSetup::Sim(setup)
        }
        BackendArg::Cuda => {
            if !options.faults.is_empty() {
                bail!(
                    "--fault injects faults into the simulated machine; drop it, or run with \
                     --backend sim"
                );
            }
            if gpus == 0 {
                bail!("--gpus 0: choose at least 1");
            }
            use switchyard::backend::cuda::{CudaOptions, check_available_with};
            let options =
                if logical_gpus { CudaOptions::logical(gpus) } else { CudaOptions::new(gpus) };
            check_available_with(&options)?;
            BackendSetup::Cuda(CudaSetup { logical_gpus, trace })
        }
    })
}

/// Runs `switchyard run`.
pub fn run_command(args: RunArgs) -> anyhow::Result<()> {
    if args.runtime != RuntimeKind::Groute
        && (args.options.priority_delta.is_some() || args.options.fused == FusedArg::On)
    {
        bail!("--priority-delta and --fused are Groute options: add --runtime groute");
    }
    if let Some(path) = &args.report {
        super::output::check_output_path("--report", path)?;
    }
    if let Some(path) = &args.trace {
        super::output::check_output_path("--trace", path)?;
    }
    if let Some(path) = &args.output {
        super::output::check_output_path("--output", path)?;
    }
    let setup = backend_setup(
        args.backend,
        &args.options,
        &args.topology,
        args.gpus,
        args.logical_gpus,
        args.trace.is_some(),
    )?;
    let graph = resolve_graph(&args.graph, args.options.seed)?;
    let (params, used) = args.options.params(args.algo, &graph)?;
    if let Some(line) = used {
        println!("{line}");
    }
    let spec = args.options.spec_with(
        args.algo,
        args.runtime,
        args.gpus,
        params,
        std::env::args().collect(),
    )?;
    let mut output = run(&graph.csr, &graph.name, &spec, &setup)?;
    if let Some(v) = output.report.validation.as_mut() {
        v.name_vertices(|d| u32::try_from(d).map_or(d, |d| graph.ids.file_id(d)));
    }
    if spec.algorithm.instance(&spec.params).source().is_some() && !graph.ids.is_identity() {
        println!(
            "source vertex {} ({}; index {})",
            graph.ids.file_id(spec.params.source),
            graph.ids.scheme(),
            spec.params.source
        );
    }
    print!("{}", output.report.summary_table());
    if let Some(path) = &args.output {
        let values = output.result_values(&graph.csr, &spec);
        let ids = graph.ids.all(graph.csr.num_vertices());
        super::output::write_file(path, false, |w| {
            Ok(switchyard::graph::write_vertex_values(
                w,
                &path.display().to_string(),
                Some(&ids),
                values,
            )?)
        })?;
        println!("wrote {} ({} vertices, Graphalytics format)", path.display(), ids.len());
    }
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&output.report)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing report {}", path.display()))?;
    }
    if let (Some(path), Some(spans)) = (&args.trace, &output.trace) {
        let json = serde_json::to_string(&chrome_trace(spans))?;
        std::fs::write(path, json).with_context(|| format!("writing trace {}", path.display()))?;
    }
    if output.report.failed_validation() {
        bail!("validation failed: the result differs from the reference (see the report)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The run options alone, as every subcommand flattens them.
    #[derive(Parser, Debug)]
    struct Options {
        #[command(flatten)]
        options: RunOptions,
    }

    fn gum(args: &[&str]) -> Result<GumOptions, String> {
        Options::try_parse_from(std::iter::once("switchyard").chain(args.iter().copied()))
            .map(|o| o.options.gum())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn gum_plan_round_trips_us_reaches_the_gum_options() {
        let defaults = gum(&[]).expect("no options parse");
        assert_eq!(defaults, GumOptions::default());
        assert_eq!(defaults.plan_round_trips_ps, 43_000_000, "the default stays 43 us");
        let flag = |us: &str| {
            gum(&["--gum-plan-round-trips-us", us]).expect("a valid round-trip time parses")
        };
        let seven = flag("7");
        assert_eq!(seven.plan_round_trips_ps, 7_000_000);
        // Nothing else moves.
        assert_eq!(GumOptions { plan_round_trips_ps: 43_000_000, ..seven }, GumOptions::default());
        assert_eq!(flag("0").plan_round_trips_ps, 0);
        let max = MAX_PLAN_ROUND_TRIPS_US;
        assert_eq!(flag(&max.to_string()).plan_round_trips_ps, max * 1_000_000);
    }

    #[test]
    fn gum_plan_round_trips_us_that_overflow_or_are_not_numbers_are_refused() {
        let too_big = (MAX_PLAN_ROUND_TRIPS_US + 1).to_string();
        let e = gum(&["--gum-plan-round-trips-us", &too_big]).expect_err("overflows");
        assert!(e.contains("--gum-plan-round-trips-us"), "{e}");
        assert!(
            e.contains(&format!("{too_big} us overflows when converted to picoseconds")),
            "{e}"
        );
        assert!(e.contains(&format!("at most {MAX_PLAN_ROUND_TRIPS_US} us")), "{e}");
        for bad in ["-1", "4.5", "x"] {
            let e = gum(&[&format!("--gum-plan-round-trips-us={bad}")]).expect_err("not a number");
            assert!(e.contains("is not a whole number of microseconds"), "{bad}: {e}");
        }
    }
}
