//! Runs: one algorithm on one graph on one machine with one runtime, validated and
//! reported. The CLI's `run` and `sweep`, the main job, the tests and the user harness all
//! go through [`run`].

pub mod algorithm;
pub mod cuda;
pub mod harness;
pub mod report;
pub mod sweep;
pub mod trace;

use crate::backend::sim::{SimBackend, SimConfig, TraceSpan};
use crate::backend::{Backend, BackendError, KernelRegistry};
use crate::graph::partition::{partition_metrics, partitioner_by_name};
use crate::graph::summary::{GraphSummary, summarize};
use crate::graph::{Csr, GraphError};
use crate::runtime::RuntimeError;
use crate::runtime::bsp::{self, BspOptions};
use crate::runtime::groute::cc;
use crate::runtime::groute::worklist::{self, GpuWork, Problem, WorklistOptions};
use algorithm::{Algorithm, AlgorithmParams};
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
}

impl RuntimeKind {
    /// Name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Bsp => "bsp",
            RuntimeKind::Groute => "groute",
        }
    }
}

/// Everything that defines a run besides the graph.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The machine.
    pub topology: Topology,
    /// GPUs used (the first `gpus` of the topology).
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
    /// Interconnect fidelity.
    pub fidelity: Fidelity,
    /// Record a trace.
    pub trace: bool,
    /// Random extra delay bound for transfers and kernels (see [`SimConfig::jitter_ps`]).
    pub jitter_ps: u64,
    /// Validate against the references.
    pub validate: bool,
    /// The command line, for the report.
    pub command_line: Vec<String>,
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The report.
    pub report: RunReport,
    /// The trace, if recorded.
    pub trace: Option<Vec<TraceSpan>>,
    /// Final per-vertex values (u32 or f32 bits), by global id.
    pub values: Vec<u32>,
}

/// The kernel registry of every built-in algorithm and runtime.
pub fn builtin_kernels() -> KernelRegistry {
    let mut registry = KernelRegistry::new();
    bsp::kernels::register(&mut registry);
    crate::algo::register(&mut registry);
    crate::runtime::groute::register(&mut registry);
    registry
}

/// Git commit the binary was built from.
pub fn git_sha() -> &'static str {
    env!("SWITCHYARD_GIT_SHA")
}

/// Runs `config` on `graph` (named `graph_name` in the report) on the simulator.
pub fn run(graph: &Csr, graph_name: &str, config: &RunConfig) -> Result<RunOutput, RunError> {
    run_with_summary(graph, graph_name, None, config)
}

/// [`run`] with the report's graph summary given (sweeps compute it once per graph rather
/// than once per run). It must be the summary of the graph the algorithm runs on, i.e. of
/// [`algorithm::prepare_graph`]'s result.
pub fn run_with_summary(
    graph: &Csr,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    config: &RunConfig,
) -> Result<RunOutput, RunError> {
    let prepared = prepare(graph, config)?;
    let graph = prepared.graph.as_ref();
    let owner = &prepared.partition.owner;
    let sim_config = SimConfig {
        fidelity: config.fidelity,
        seed: config.seed,
        trace: config.trace,
        jitter_ps: config.jitter_ps,
        ..SimConfig::default()
    };
    let mut backend =
        SimBackend::new(config.topology.clone(), config.gpus, builtin_kernels(), sim_config)?;
    let executed = match config.runtime {
        RuntimeKind::Bsp => {
            let primitive = algorithm::primitive(config.algorithm, &config.params);
            let bsp = bsp_options(config.algorithm, config.bsp);
            let outcome =
                bsp::run(&mut backend, graph, owner, config.gpus, primitive.as_ref(), &bsp)?;
            Executed::from_bsp(outcome, bsp)
        }
        RuntimeKind::Groute if config.algorithm == Algorithm::Cc => {
            let options = cc::CcOptions { buffers: config.groute.buffers, ..Default::default() };
            let outcome = cc::connected_components(&mut backend, graph, &options)?;
            Executed::from_groute_cc(outcome, config.groute)
        }
        RuntimeKind::Groute => {
            let problem = groute_problem(config.algorithm, &config.params)?;
            let outcome =
                worklist::run(&mut backend, graph, owner, config.gpus, problem, &config.groute)?;
            Executed::from_groute(outcome, config.groute)
        }
    };
    let machine = Machine {
        backend: BackendInfo {
            name: backend.name().to_string(),
            fidelity: Some(format!("{:?}", config.fidelity).to_lowercase()),
            events: backend.events_processed(),
            jitter_ps: config.jitter_ps,
        },
        topology: TopologyInfo {
            name: config.topology.name.clone(),
            source: config.topology.source.clone(),
            hash: format!("{:016x}", config.topology.source_hash),
            gpus: config.gpus,
        },
        stats: backend.stats(),
        elapsed_ps: backend.now_ps(),
    };
    let mut output = finish(&prepared, graph_name, summary, config, executed, machine)?;
    output.trace = config.trace.then(|| backend.trace().to_vec());
    Ok(output)
}

/// A graph made ready for a run: checked, prepared for the algorithm, partitioned.
pub(crate) struct Prepared<'g> {
    /// The graph the algorithm runs on.
    pub graph: std::borrow::Cow<'g, Csr>,
    /// Its partition over the run's GPUs.
    pub partition: crate::graph::partition::Partition,
    /// Edge cut, borders and balance of the partition.
    pub metrics: crate::graph::partition::PartitionMetrics,
}

/// Checks the parameters, prepares the graph for the algorithm and partitions it.
pub(crate) fn prepare<'g>(graph: &'g Csr, config: &RunConfig) -> Result<Prepared<'g>, RunError> {
    algorithm::check(config.algorithm, &config.params, graph)?;
    let graph = algorithm::prepare_graph(config.algorithm, graph);
    let partition = partitioner_by_name(&config.partitioner, config.seed)?
        .partition(graph.as_ref(), config.gpus)?;
    let metrics = partition_metrics(graph.as_ref(), &partition)?;
    Ok(Prepared { graph, partition, metrics })
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
    config: &RunConfig,
    executed: Executed,
    machine: Machine,
) -> Result<RunOutput, RunError> {
    let graph = prepared.graph.as_ref();
    let Executed { values, aux, time_ps, work, supersteps, runtime, groute } = executed;
    let validation = if config.validate {
        Some(algorithm::validate(config.algorithm, &config.params, graph, &values, aux.as_deref())?)
    } else {
        None
    };
    let seconds = time_ps as f64 / 1e12;
    let report = RunReport {
        schema: report::SCHEMA,
        schema_version: report::SCHEMA_VERSION,
        command_line: config.command_line.clone(),
        git_sha: git_sha().to_string(),
        seed: config.seed,
        backend: machine.backend,
        topology: machine.topology,
        graph: GraphInfo {
            name: graph_name.to_string(),
            summary: summary.cloned().unwrap_or_else(|| summarize(graph)),
        },
        partition: PartitionInfo {
            partitioner: config.partitioner.clone(),
            metrics: serde_json::to_value(&prepared.metrics).unwrap_or_default(),
        },
        runtime: RuntimeInfo { name: config.runtime.name().to_string(), ..runtime },
        algorithm: AlgorithmInfo { name: config.algorithm, params: config.params },
        gpus: report::gpu_reports(&machine.stats, time_ps),
        links: report::link_reports(&machine.stats, machine.elapsed_ps),
        gteps: if seconds > 0.0 { work.edges_visited as f64 / seconds / 1e9 } else { 0.0 },
        work,
        supersteps,
        time_ps,
        validation,
        groute,
    };
    Ok(RunOutput { report, trace: None, values })
}

/// What a runtime produced, in the shape the report needs.
pub(crate) struct Executed {
    values: Vec<u32>,
    aux: Option<Vec<f32>>,
    time_ps: u64,
    work: report::WorkReport,
    supersteps: u32,
    runtime: RuntimeInfo,
    groute: Option<report::GrouteReport>,
}

impl Executed {
    pub(crate) fn from_bsp(outcome: bsp::BspOutcome, bsp: BspOptions) -> Executed {
        Executed {
            time_ps: outcome.compute_time_ps,
            work: report::WorkReport {
                edges_visited: outcome.edges_visited,
                work_items: outcome.frontier_sizes.iter().sum(),
                messages: outcome.messages,
                bytes_sent: outcome.bytes_sent,
                frontier_sizes: outcome.frontier_sizes,
            },
            supersteps: outcome.supersteps,
            runtime: RuntimeInfo { name: String::new(), bsp: Some(bsp), groute: None },
            groute: None,
            values: outcome.values,
            aux: outcome.aux,
        }
    }

    fn from_groute(outcome: worklist::WorklistOutcome, options: WorklistOptions) -> Executed {
        Executed {
            time_ps: outcome.compute_time_ps,
            work: report::WorkReport {
                edges_visited: outcome.edges,
                work_items: outcome.work_items,
                messages: outcome.messages,
                bytes_sent: outcome.traffic.iter().map(|l| l.bytes).sum(),
                frontier_sizes: Vec::new(),
            },
            supersteps: 0,
            runtime: RuntimeInfo { name: String::new(), bsp: None, groute: Some(options) },
            groute: Some(report::GrouteReport {
                priority_raises: outcome.priority_raises,
                dropped: outcome.dropped,
                growths: outcome.growths,
                ring: outcome.ring,
                per_gpu: outcome.per_gpu,
                links: outcome.traffic,
            }),
            values: outcome.values,
            aux: outcome.ranks,
        }
    }
}

impl Executed {
    /// Groute's topology-driven connected components (no worklist: an edge-scattering
    /// router and a reduction router).
    fn from_groute_cc(outcome: cc::CcOutcome, options: WorklistOptions) -> Executed {
        let edges: u64 = outcome.edges_per_gpu.iter().sum();
        let per_gpu = outcome
            .edges_per_gpu
            .iter()
            .map(|&e| GpuWork { work_items: e, ..GpuWork::default() })
            .collect();
        Executed {
            time_ps: outcome.compute_time_ps,
            work: report::WorkReport {
                edges_visited: edges,
                work_items: edges,
                messages: outcome.segments_per_gpu.iter().sum(),
                bytes_sent: outcome.traffic.iter().map(|l| l.bytes).sum(),
                frontier_sizes: Vec::new(),
            },
            supersteps: 0,
            runtime: RuntimeInfo { name: String::new(), bsp: None, groute: Some(options) },
            groute: Some(report::GrouteReport {
                priority_raises: 0,
                dropped: 0,
                growths: Vec::new(),
                ring: Vec::new(),
                per_gpu,
                links: outcome.traffic,
            }),
            values: outcome.labels,
            aux: None,
        }
    }
}

/// The worklist problem Groute runs for `algorithm`.
fn groute_problem(algorithm: Algorithm, params: &AlgorithmParams) -> Result<Problem, RunError> {
    match algorithm {
        Algorithm::Bfs => Ok(Problem::Bfs { source: params.source }),
        Algorithm::Sssp => Ok(Problem::Sssp { source: params.source }),
        Algorithm::PrResidual => {
            Ok(Problem::PageRank { damping: params.damping, epsilon: params.epsilon })
        }
        other => Err(RunError::Options(format!(
            "--runtime groute runs bfs, sssp, pr-residual (seed 000 sections 4.5-4.6) and cc \
             (section 5.1.4); {} is bulk-synchronous: use --runtime bsp",
            other.name()
        ))),
    }
}

/// The bulk-synchronous options a run of `algorithm` uses: direction-optimizing BFS must
/// broadcast and keep a copy of every vertex (seed 002 section VI-A), whatever was asked.
pub fn bsp_options(algorithm: Algorithm, asked: BspOptions) -> BspOptions {
    if algorithm == Algorithm::Dobfs {
        BspOptions {
            duplication: bsp::Duplication::All,
            communication: bsp::Communication::Broadcast,
            ..asked
        }
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
    primitive: &dyn crate::algo::BspPrimitive,
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
