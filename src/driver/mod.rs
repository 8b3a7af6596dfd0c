//! Runs: one algorithm on one graph on one machine with one runtime, validated and
//! reported. The CLI's `run` and `sweep`, the main job, the tests and the user harness all
//! go through [`run`].

pub mod cuda;
pub mod gum_fit;
pub mod gum_repro;
pub mod harness;
pub mod plot;
pub mod report;
pub mod swarm;
pub mod sweep;
pub mod trace;

use crate::algo::{self, Algorithm, AlgorithmParams, GraphAlgorithm, VertexResult};
use crate::backend::sim::{SimBackend, SimConfig};
use crate::backend::{Backend, BackendError, KernelRegistry};
use crate::graph::partition::{partition_metrics, partitioner_by_name, resolve_auto};
use crate::graph::summary::{GraphSummary, summarize};
use crate::graph::{Csr, GraphError};
use crate::runtime::atos::tiles::TileMode;
use crate::runtime::atos::{self, AtosOptions};
use crate::runtime::bsp::{self, BspOptions, BspPrimitive};
use crate::runtime::groute::GrouteOperators;
use crate::runtime::groute::worklist::{self, SendMode, WorklistApp, WorklistOptions};
use crate::runtime::gum::{self, GumOptions};
use crate::runtime::{Outcome, RuntimeError};
use report::{
    AlgorithmInfo, BackendInfo, GraphInfo, PartitionInfo, RunReport, RuntimeInfo, TopologyInfo,
};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The graph or an algorithm parameter is unusable.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The runtime or backend failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The backend could not be set up.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Options that contradict each other.
    #[error("{0}")]
    Options(String),
}

/// The runtimes a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeKind {
    /// Gunrock-style bulk-synchronous baseline (seed 002).
    Bsp,
    /// Groute's asynchronous distributed worklist (seed 000).
    Groute,
    /// GUM: bulk-synchronous with frontier stealing (seed 001).
    Gum,
    /// Atos's task-parallel queues, persistent or discrete kernels (seeds 003, 004).
    Atos,
}

impl RuntimeKind {
    /// All runtimes, in CLI order.
    pub const ALL: [RuntimeKind; 4] =
        [RuntimeKind::Bsp, RuntimeKind::Groute, RuntimeKind::Gum, RuntimeKind::Atos];

    /// Name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Bsp => "bsp",
            RuntimeKind::Groute => "groute",
            RuntimeKind::Gum => "gum",
            RuntimeKind::Atos => "atos",
        }
    }

    /// Whether `algorithm` has operators for this runtime.
    pub fn runs(self, algorithm: Algorithm) -> bool {
        let instance = algorithm.instance(&AlgorithmParams::default());
        match self {
            RuntimeKind::Bsp => instance.bsp().is_some(),
            RuntimeKind::Groute => instance.groute().is_some(),
            RuntimeKind::Gum => instance.gum().is_some(),
            RuntimeKind::Atos => instance.atos().is_some(),
        }
    }
}

/// What a run is, whatever it runs on: the algorithm, the runtime, the partition, the
/// validation.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// GPUs used (the first `gpus` of the machine).
    pub gpus: u32,
    /// The runtime.
    pub runtime: RuntimeKind,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Its parameters.
    pub params: AlgorithmParams,
    /// Partitioner name (see [`crate::graph::partition`]).
    pub partitioner: String,
    /// Seed of the run (partitioner and simulator streams derive from it).
    pub seed: u64,
    /// Bulk-synchronous options.
    pub bsp: BspOptions,
    /// Groute distributed-worklist options.
    pub groute: WorklistOptions,
    /// GUM options.
    pub gum: GumOptions,
    /// Atos options.
    pub atos: AtosOptions,
    /// Validate against the references.
    pub validate: bool,
    /// The command line, for the report.
    pub command_line: Vec<String>,
}

impl RunSpec {
    /// `algorithm` on `runtime` over `gpus` GPUs with everything else at its default:
    /// default parameters, a random partition, seed 1, each runtime's default options,
    /// validation on, no command line. Set what differs with struct update syntax.
    pub fn new(algorithm: Algorithm, runtime: RuntimeKind, gpus: u32) -> RunSpec {
        RunSpec {
            gpus,
            runtime,
            algorithm,
            params: AlgorithmParams::default(),
            partitioner: "random".into(),
            seed: 1,
            bsp: BspOptions::default(),
            groute: WorklistOptions::default(),
            gum: GumOptions::default(),
            atos: AtosOptions::default(),
            validate: true,
            command_line: Vec::new(),
        }
    }
}

/// How the simulator is set up for a run.
#[derive(Clone, Debug)]
pub struct SimSetup {
    /// The machine.
    pub topology: Topology,
    /// Interconnect fidelity.
    pub fidelity: Fidelity,
    /// Record a trace.
    pub trace: bool,
    /// Random extra delay bound for transfers and kernels (see [`SimConfig::jitter_ps`]).
    pub jitter_ps: u64,
}

/// How the CUDA backend is set up for a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaSetup {
    /// Run `gpus` logical GPUs on the machine's physical GPUs (several may share one) when
    /// it has fewer: multi-GPU code validated on one GPU. Never implicit: without it, more
    /// GPUs than the machine has is an error.
    pub logical_gpus: bool,
    /// Record every kernel's span (CUDA events around each launch) for a trace.
    pub trace: bool,
}

/// The backend a run uses and how it is set up (one value per run: its size does not
/// matter).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum BackendSetup {
    /// The deterministic simulator.
    Sim(SimSetup),
    /// Real GPUs.
    Cuda(CudaSetup),
}

/// A run on the simulator: what the run is and the simulated machine it runs on.
#[derive(Clone, Debug)]
pub struct SimRun {
    /// What the run is.
    pub spec: RunSpec,
    /// The simulated machine.
    pub sim: SimSetup,
}

impl SimRun {
    /// Runs it on `graph` (named `graph_name` in the report).
    pub fn run(&self, graph: &Csr, graph_name: &str) -> Result<RunOutput, RunError> {
        run(graph, graph_name, &self.spec, &BackendSetup::Sim(self.sim.clone()))
    }
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The report.
    pub report: RunReport,
    /// The trace, if recorded.
    pub trace: Option<Vec<crate::backend::sim::TraceSpan>>,
    /// Final per-vertex values (u32 or f32 bits), by global id.
    pub values: Vec<u32>,
    /// Second per-vertex values (PageRank ranks), where the algorithm has them.
    pub aux: Option<Vec<f32>>,
}

impl RunOutput {
    /// The per-vertex result of `spec`'s run on `graph` in Graphalytics output terms (see
    /// [`GraphAlgorithm::result_values`]), for writing with
    /// [`crate::graph::write_vertex_values`].
    pub fn result_values(&self, graph: &Csr, spec: &RunSpec) -> Vec<crate::graph::ResultValue> {
        let algorithm = spec.algorithm.instance_for(&spec.params, graph);
        algorithm.result_values(VertexResult { values: &self.values, aux: self.aux.as_deref() })
    }
}

/// The kernel registry of every built-in algorithm and runtime.
pub fn builtin_kernels() -> KernelRegistry {
    let mut registry = KernelRegistry::new();
    bsp::kernels::register(&mut registry);
    gum::kernels::register(&mut registry);
    crate::runtime::groute::register(&mut registry);
    atos::kernels::register(&mut registry);
    algo::register(&mut registry);
    registry
}

/// Git commit the binary was built from.
pub fn git_sha() -> &'static str {
    env!("SWITCHYARD_GIT_SHA")
}

/// Runs `spec` on `graph` (named `graph_name` in the report) on the backend `setup` says.
pub fn run(
    graph: &Csr,
    graph_name: &str,
    spec: &RunSpec,
    setup: &BackendSetup,
) -> Result<RunOutput, RunError> {
    run_with_summary(graph, graph_name, None, spec, setup)
}

/// [`run`] with the report's graph summary given (sweeps compute it once per graph rather
/// than once per run). It must be the summary of the graph the algorithm runs on, i.e. of
/// [`algo::prepare_graph`]'s result.
pub fn run_with_summary(
    graph: &Csr,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    spec: &RunSpec,
    setup: &BackendSetup,
) -> Result<RunOutput, RunError> {
    if let BackendSetup::Cuda(_) = setup {
        check_on_cuda(graph, spec)?;
    }
    let prepared = prepare(graph, spec)?;
    match setup {
        BackendSetup::Sim(sim) => {
            let config = SimConfig {
                fidelity: sim.fidelity,
                seed: spec.seed,
                trace: sim.trace,
                jitter_ps: sim.jitter_ps,
                ..SimConfig::default()
            };
            run_prepared_sim(&prepared, graph_name, summary, spec, sim, config)
        }
        BackendSetup::Cuda(cuda) => cuda::run_cuda(&prepared, graph_name, summary, spec, cuda),
    }
}

/// Runs a prepared graph on the simulator `sim` describes with the simulator configuration
/// `config` (which must carry the setup's fidelity, trace and jitter and the spec's seed; the
/// swarm adds a virtual time limit).
pub(crate) fn run_prepared_sim(
    prepared: &Prepared<'_>,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    spec: &RunSpec,
    sim: &SimSetup,
    config: SimConfig,
) -> Result<RunOutput, RunError> {
    let mut backend = SimBackend::new(sim.topology.clone(), spec.gpus, builtin_kernels(), config)?;
    let outcome = execute(&mut backend, prepared, spec)?;
    let machine = Machine {
        backend: BackendInfo {
            name: backend.name().to_string(),
            fidelity: Some(format!("{:?}", sim.fidelity).to_lowercase()),
            events: backend.events_processed(),
            jitter_ps: sim.jitter_ps,
        },
        topology: TopologyInfo {
            name: sim.topology.name.clone(),
            source: sim.topology.source.clone(),
            hash: format!("{:016x}", sim.topology.source_hash),
            overlay: report::OverlayRecord::of(&sim.topology),
            gpus: spec.gpus,
            faults: sim.topology.faults().describe(),
        },
        stats: backend.stats(),
        elapsed_ps: backend.now_ps(),
    };
    let mut output = finish(prepared, graph_name, summary, spec, outcome, machine)?;
    output.trace = sim.trace.then(|| backend.trace().to_vec());
    Ok(output)
}

/// A graph made ready for a run: checked, prepared for the algorithm, partitioned.
pub struct Prepared<'g> {
    /// The algorithm with its parameters.
    pub algorithm: Box<dyn GraphAlgorithm>,
    /// The graph the algorithm runs on.
    pub graph: std::borrow::Cow<'g, Csr>,
    /// Its partition over the run's GPUs.
    pub partition: crate::graph::partition::Partition,
    /// The partitioner that made it (`auto` resolved: see
    /// [`crate::graph::partition::resolve_auto`]).
    pub partitioner: String,
    /// Edge cut, borders and balance of the partition.
    pub metrics: crate::graph::partition::PartitionMetrics,
    /// Groute's worklist options with `auto_fused` resolved (see [`groute_options`]).
    pub groute: WorklistOptions,
}

/// Checks the parameters, prepares the graph for the algorithm and partitions it; refuses a
/// runtime that has no operators for the algorithm before any work.
pub fn prepare<'g>(graph: &'g Csr, spec: &RunSpec) -> Result<Prepared<'g>, RunError> {
    if !spec.runtime.runs(spec.algorithm) {
        let runs: Vec<&str> =
            Algorithm::ALL.iter().filter(|&&a| spec.runtime.runs(a)).map(|a| a.name()).collect();
        let others: Vec<&str> =
            RuntimeKind::ALL.iter().filter(|r| r.runs(spec.algorithm)).map(|r| r.name()).collect();
        return Err(RunError::Options(format!(
            "--runtime {} has no operators for {} (it runs {}); use --runtime {}",
            spec.runtime.name(),
            spec.algorithm.name(),
            runs.join(", "),
            others.join(" or --runtime ")
        )));
    }
    let algorithm = spec.algorithm.instance_for(&spec.params, graph);
    algo::check(algorithm.as_ref(), graph)?;
    let graph = algo::prepare_graph(algorithm.as_ref(), graph);
    let partitioner = resolve_auto(&spec.partitioner, graph.as_ref(), spec.gpus).to_string();
    let partition =
        partitioner_by_name(&partitioner, spec.seed)?.partition(graph.as_ref(), spec.gpus)?;
    let metrics = partition_metrics(graph.as_ref(), &partition)?;
    let groute = match algorithm.groute() {
        Some(GrouteOperators::Worklist(app)) => {
            groute_options(app.as_ref(), graph.as_ref(), spec.gpus, spec.groute)
        }
        _ => spec.groute,
    };
    Ok(Prepared { algorithm, graph, partition, partitioner, metrics, groute })
}

/// Refuses, before any work, a run on real GPUs whose operators launch a kernel that has no
/// CUDA implementation (a simulator-only variant, such as SSSP over real weights), naming
/// the variant, the kernel and the fix.
pub fn check_on_cuda(graph: &Csr, spec: &RunSpec) -> Result<(), RunError> {
    let algorithm = spec.algorithm.instance_for(&spec.params, graph);
    let kernels: Vec<&'static str> = match spec.runtime {
        RuntimeKind::Bsp => algorithm
            .bsp()
            .map(|p| {
                [Some(p.advance_kernel()), p.routed_advance_kernel(), p.apply_kernel()]
                    .into_iter()
                    .flatten()
                    .collect()
            })
            .unwrap_or_default(),
        RuntimeKind::Groute => match algorithm.groute() {
            Some(GrouteOperators::Worklist(app)) => {
                let k = app.kernels();
                vec![k.work, k.split_send, k.split_receive, k.promote, k.fused]
            }
            _ => Vec::new(),
        },
        RuntimeKind::Atos => algorithm
            .atos()
            .map(|app| vec![app.kernels().worker, atos::kernels::AGGREGATOR])
            .unwrap_or_default(),
        RuntimeKind::Gum => algorithm
            .gum()
            .map(|o| {
                let p = &o.primitive;
                [Some(p.advance_kernel()), p.apply_kernel()]
                    .into_iter()
                    .flatten()
                    .chain([
                        "gum_frontier_stats",
                        "gum_frontier_prefix",
                        "gum_cut",
                        "gum_steal_min",
                        "gum_merge_return",
                    ])
                    .collect()
            })
            .unwrap_or_default(),
    };
    let registry = builtin_kernels();
    let missing =
        kernels.into_iter().find(|&k| registry.get(k).is_ok_and(|d| d.cuda_name.is_none()));
    match missing {
        None => Ok(()),
        Some(kernel) => Err(RunError::Options(format!(
            "--backend cuda: {} has no CUDA kernels yet (`{kernel}` runs on the simulator \
             only); run it with --backend sim{}",
            algorithm.describe(),
            if graph.weights().is_some_and(|w| w.is_float()) {
                ", or load the graph with integer weights"
            } else {
                ""
            }
        ))),
    }
}

/// Groute's worklist options for `app` on `graph` over `gpus` GPUs, as asked with
/// [`WorklistOptions::auto_fused`] and [`WorklistOptions::auto_send`] resolved: the fused
/// worker where the application asks for it on a road-like graph
/// ([`crate::graph::partition::is_road_like`]); on several GPUs and any other graph, the
/// fused worker with the asynchronous send (all-to-all, no pass-through hops) where the
/// application asks for it ([`WorklistApp::fused_async_on_several_gpus`]).
fn groute_options(
    app: &dyn WorklistApp,
    graph: &Csr,
    gpus: u32,
    asked: WorklistOptions,
) -> WorklistOptions {
    let road_like = crate::graph::partition::is_road_like(graph);
    let fused = asked.fused || asked.auto_fused && app.fused_on_road_like() && road_like;
    let send_async = asked.auto_send
        && asked.auto_fused
        && app.fused_async_on_several_gpus()
        && !road_like
        && gpus > 1
        && gpus as usize <= worklist::kernels::MAX_PARTS;
    if send_async {
        return WorklistOptions { fused: true, send: SendMode::Async, ..asked };
    }
    WorklistOptions { fused, ..asked }
}

/// Runs the prepared graph with the runtime `spec` names on `backend`: the one entry point
/// of every runtime on every backend.
pub fn execute<B: Backend>(
    backend: &mut B,
    prepared: &Prepared<'_>,
    spec: &RunSpec,
) -> Result<Outcome, RunError> {
    let graph = prepared.graph.as_ref();
    let owner = &prepared.partition.owner;
    let refused = || {
        RunError::Options(format!(
            "--runtime {} has no operators for {}",
            spec.runtime.name(),
            spec.algorithm.name()
        ))
    };
    Ok(match spec.runtime {
        RuntimeKind::Bsp => {
            let primitive = prepared.algorithm.bsp().ok_or_else(refused)?;
            let options = bsp_options(primitive.as_ref(), spec.bsp);
            bsp::run(backend, graph, owner, spec.gpus, primitive.as_ref(), &options)?.into()
        }
        RuntimeKind::Groute => match prepared.algorithm.groute().ok_or_else(refused)? {
            GrouteOperators::Worklist(app) => {
                worklist::run(backend, graph, owner, spec.gpus, app.as_ref(), &prepared.groute)?
                    .into()
            }
            GrouteOperators::Program(program) => {
                program.run(backend, graph, owner, spec.gpus, &prepared.groute)?
            }
        },
        RuntimeKind::Atos => {
            let app = prepared.algorithm.atos().ok_or_else(refused)?;
            atos::run(backend, graph, owner, spec.gpus, app.as_ref(), &spec.atos, spec.seed)?
        }
        RuntimeKind::Gum => {
            let operators = prepared.algorithm.gum().ok_or_else(refused)?;
            let model = crate::runtime::gum::cost_model::CostModel::embedded()
                .map_err(|e| RunError::Options(e.to_string()))?;
            gum::run(backend, graph, owner, spec.gpus, &operators, &spec.gum, &model)?.into()
        }
    })
}

/// The machine side of a report: which backend ran, on what, and what it counted.
pub(crate) struct Machine {
    /// Backend facts.
    pub backend: BackendInfo,
    /// The machine.
    pub topology: TopologyInfo,
    /// The backend's statistics.
    pub stats: crate::backend::BackendStats,
    /// Time the links' utilisation is measured over, in picoseconds.
    pub elapsed_ps: u64,
}

/// Validates a runtime's result and assembles the report (every backend shares this).
pub(crate) fn finish(
    prepared: &Prepared<'_>,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    spec: &RunSpec,
    outcome: Outcome,
    machine: Machine,
) -> Result<RunOutput, RunError> {
    let graph = prepared.graph.as_ref();
    let Outcome { values, aux, compute_time_ps: time_ps, work, supersteps, groute, gum, atos } =
        outcome;
    let validation = if spec.validate {
        let result = VertexResult { values: &values, aux: aux.as_deref() };
        Some(prepared.algorithm.validate(graph, result)?)
    } else {
        None
    };
    let runtime = match spec.runtime {
        RuntimeKind::Bsp => RuntimeInfo {
            name: String::new(),
            bsp: prepared.algorithm.bsp().map(|p| bsp_options(p.as_ref(), spec.bsp)),
            ..RuntimeInfo::default()
        },
        RuntimeKind::Groute => {
            RuntimeInfo { groute: Some(prepared.groute), ..RuntimeInfo::default() }
        }
        RuntimeKind::Gum => RuntimeInfo { gum: Some(spec.gum), ..RuntimeInfo::default() },
        RuntimeKind::Atos => {
            // What ran: `--atos-tiles auto` that took the on-chip tiles reads `on`.
            let tiles = atos.as_ref().and_then(|a| a.tiles.as_ref()).map(|_| TileMode::On);
            let asked = AtosOptions { tiles: tiles.unwrap_or(spec.atos.tiles), ..spec.atos };
            RuntimeInfo { atos: Some(asked), ..RuntimeInfo::default() }
        }
    };
    let seconds = time_ps as f64 / 1e12;
    let report = RunReport {
        schema: report::SCHEMA,
        schema_version: report::SCHEMA_VERSION,
        command_line: spec.command_line.clone(),
        git_sha: git_sha().to_string(),
        seed: spec.seed,
        backend: machine.backend,
        topology: machine.topology,
        graph: GraphInfo {
            name: graph_name.to_string(),
            summary: summary.cloned().unwrap_or_else(|| summarize(graph)),
        },
        partition: PartitionInfo {
            partitioner: prepared.partitioner.clone(),
            metrics: serde_json::to_value(&prepared.metrics).unwrap_or_default(),
        },
        runtime: RuntimeInfo { name: spec.runtime.name().to_string(), ..runtime },
        algorithm: AlgorithmInfo { name: spec.algorithm, params: spec.params },
        gpus: report::gpu_reports(&machine.stats, time_ps),
        links: report::link_reports(&machine.stats, machine.elapsed_ps),
        gteps: if seconds > 0.0 { work.edges_visited as f64 / seconds / 1e9 } else { 0.0 },
        work,
        supersteps,
        time_ps,
        validation,
        groute,
        gum,
        atos,
    };
    Ok(RunOutput { report, trace: None, values, aux })
}

/// The bulk-synchronous options a run of `primitive` uses, whatever was asked: a primitive
/// that pulls (direction-optimizing BFS) or whose owners hand new values to every copy
/// (the assignment combiner: CDLP) must broadcast and keep a copy of every vertex (seed
/// 002 section VI-A); one that reads two hops (LCC) keeps a copy of every vertex and arc.
pub fn bsp_options(primitive: &dyn BspPrimitive, asked: BspOptions) -> BspOptions {
    if primitive.needs_reverse() || primitive.combiner() == bsp::Combiner::Assign {
        BspOptions {
            duplication: bsp::Duplication::All,
            communication: bsp::Communication::Broadcast,
            ..asked
        }
    } else if primitive.needs_all_arcs() {
        BspOptions { duplication: bsp::Duplication::All, ..asked }
    } else {
        asked
    }
}

/// Runs a bulk-synchronous primitive on the simulated `topology` with the first `gpus` GPUs,
/// `owner[v]` giving the GPU of vertex `v`. The lower-level entry point for users' own
/// algorithms (see [`harness`]).
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    graph: &Csr,
    primitive: &dyn BspPrimitive,
    registry: KernelRegistry,
    topology: &Topology,
    gpus: u32,
    owner: &[u32],
    options: &BspOptions,
    sim_config: SimConfig,
) -> Result<(bsp::BspOutcome, SimBackend), RunError> {
    let mut backend = SimBackend::new(topology.clone(), gpus, registry, sim_config)?;
    let outcome = bsp::run(&mut backend, graph, owner, gpus, primitive, options)?;
    Ok((outcome, backend))
}
