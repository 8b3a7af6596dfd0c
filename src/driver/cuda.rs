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
    use super::report::{BackendInfo, TopologyInfo};
    use super::{Executed, Machine, bsp_options, builtin_kernels, finish, prepare};
    use crate::backend::Backend;
    use crate::backend::cuda::CudaBackend;
    use crate::runtime::bsp;
    let groute = config.runtime == super::RuntimeKind::Groute;
    if groute && config.algorithm == super::algorithm::Algorithm::Cc {
        return Err(RunError::Options(
            "--backend cuda runs Groute's distributed worklist (bfs, sssp, pr-residual); \
             Groute's cc is not wired to CUDA yet: use --runtime bsp, or --backend sim"
                .into(),
        ));
    }
    let prepared = prepare(graph, config)?;
    let mut backend = CudaBackend::open(config.gpus, builtin_kernels())?;
    let (executed, elapsed_ps) = if groute {
        // The distributed worklist, as `super::run` does on the simulator.
        let problem = super::groute_problem(config.algorithm, &config.params)?;
        let outcome = crate::runtime::groute::worklist::run(
            &mut backend,
            prepared.graph.as_ref(),
            &prepared.partition.owner,
            config.gpus,
            problem,
            &config.groute,
        )?;
        let elapsed = outcome.compute_time_ps;
        (Executed::from_groute(outcome, config.groute), elapsed)
    } else {
        let primitive = super::algorithm::primitive(config.algorithm, &config.params);
        let options = bsp_options(config.algorithm, config.bsp);
        let outcome = bsp::run(
            &mut backend,
            prepared.graph.as_ref(),
            &prepared.partition.owner,
            config.gpus,
            primitive.as_ref(),
            &options,
        )?;
        let elapsed = outcome.compute_time_ps;
        (Executed::from_bsp(outcome, options), elapsed)
    };
    let stats = backend.stats();
    let gpu_name = backend.device_info(crate::backend::DeviceId(0)).name;
    let machine = Machine {
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
        stats,
        elapsed_ps,
    };
    finish(&prepared, graph_name, summary, config, executed, machine)
}
