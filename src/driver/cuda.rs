//! Runs on real GPUs: the same preparation, partition, bulk-synchronous runtime and
//! validation as [`super::run`], with the CUDA backend in place of the simulator.

use super::{RunConfig, RunError, RunOutput};
use crate::graph::Csr;
use crate::graph::summary::GraphSummary;

/// Runs `config` on `graph` on the first `config.gpus` GPUs of this machine. The topology
/// in `config` is not used (the machine is what it is); the report names the GPUs.
pub fn run_cuda(graph: &Csr, graph_name: &str, config: &RunConfig) -> Result<RunOutput, RunError> {
    run_cuda_with_summary(graph, graph_name, None, config)
}

/// In a build without the `cuda` feature: the one-line error that says so.
#[cfg(not(feature = "cuda"))]
pub fn run_cuda_with_summary(
    _: &Csr,
    _: &str,
    _: Option<&GraphSummary>,
    _: &RunConfig,
) -> Result<RunOutput, RunError> {
    Err(crate::backend::BackendError::Unavailable(crate::backend::cuda::UNAVAILABLE.into()).into())
}

/// [`run_cuda`] with the report's graph summary given (it must be that of the graph the
/// algorithm runs on, as [`super::run_with_summary`] says).
#[cfg(feature = "cuda")]
pub fn run_cuda_with_summary(
    graph: &Csr,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    config: &RunConfig,
) -> Result<RunOutput, RunError> {
    use super::algorithm;
    use super::report::{
        self, AlgorithmInfo, BackendInfo, GraphInfo, PartitionInfo, RunReport, RuntimeInfo,
        TopologyInfo,
    };
    use super::{bsp_options, builtin_kernels, git_sha};
    use crate::backend::Backend;
    use crate::backend::cuda::CudaBackend;
    use crate::graph::partition::{partition_metrics, partitioner_by_name};
    use crate::graph::summary::summarize;
    use crate::runtime::bsp;
    if config.runtime != super::RuntimeKind::Bsp {
        return Err(RunError::Options(format!(
            "--backend cuda runs the bsp runtime; the {} runtime's kernels have no CUDA \
             implementation yet: use --runtime bsp, or --backend sim",
            config.runtime.name()
        )));
    }
    algorithm::check(config.algorithm, &config.params, graph)?;
    let prepared = algorithm::prepare_graph(config.algorithm, graph);
    let graph = prepared.as_ref();
    let partition =
        partitioner_by_name(&config.partitioner, config.seed)?.partition(graph, config.gpus)?;
    let partition_metrics = partition_metrics(graph, &partition)?;
    let primitive = algorithm::primitive(config.algorithm, &config.params);
    let options = bsp_options(config.algorithm, config.bsp);
    let mut backend = CudaBackend::open(config.gpus, builtin_kernels())?;
    let outcome =
        bsp::run(&mut backend, graph, &partition.owner, config.gpus, primitive.as_ref(), &options)?;
    let validation = if config.validate {
        Some(algorithm::validate(
            config.algorithm,
            &config.params,
            graph,
            &outcome.values,
            outcome.aux.as_deref(),
        )?)
    } else {
        None
    };
    let stats = backend.stats();
    let time_ps = outcome.compute_time_ps;
    let seconds = time_ps as f64 / 1e12;
    let gpu_name = backend.device_info(crate::backend::DeviceId(0)).name;
    let report = RunReport {
        schema: report::SCHEMA,
        schema_version: report::SCHEMA_VERSION,
        command_line: config.command_line.clone(),
        git_sha: git_sha().to_string(),
        seed: config.seed,
        backend: BackendInfo {
            name: backend.name().to_string(),
            fidelity: None,
            events: stats.events,
            jitter_ps: 0,
        },
        topology: TopologyInfo {
            name: format!("{} x{}", gpu_name, config.gpus),
            source: "cuda:this machine".to_string(),
            hash: String::new(),
            gpus: config.gpus,
        },
        graph: GraphInfo {
            name: graph_name.to_string(),
            summary: summary.cloned().unwrap_or_else(|| summarize(graph)),
        },
        partition: PartitionInfo {
            partitioner: config.partitioner.clone(),
            metrics: serde_json::to_value(&partition_metrics).unwrap_or_default(),
        },
        runtime: RuntimeInfo {
            name: config.runtime.name().to_string(),
            bsp: Some(options),
            groute: None,
        },
        algorithm: AlgorithmInfo { name: config.algorithm, params: config.params },
        gpus: report::gpu_reports(&stats, time_ps),
        links: report::link_reports(&stats, time_ps),
        work: report::WorkReport {
            edges_visited: outcome.edges_visited,
            work_items: outcome.frontier_sizes.iter().sum(),
            messages: outcome.messages,
            bytes_sent: outcome.bytes_sent,
            frontier_sizes: outcome.frontier_sizes.clone(),
        },
        supersteps: outcome.supersteps,
        time_ps,
        gteps: if seconds > 0.0 { outcome.edges_visited as f64 / seconds / 1e9 } else { 0.0 },
        validation,
        groute: None,
    };
    Ok(RunOutput { report, trace: None, values: outcome.values })
}
