//! Runs on real GPUs: the same [`execute`](super::execute) as on the simulator, with the
//! CUDA backend in place of the simulator.

use super::{CudaSetup, Prepared, RunError, RunOutput, RunSpec};
use crate::graph::summary::GraphSummary;

/// In a build without the `cuda` feature: the one-line error that says so.
#[cfg(not(feature = "cuda"))]
pub(crate) fn run_cuda(
    _: &Prepared<'_>,
    _: &str,
    _: Option<&GraphSummary>,
    _: &RunSpec,
    _: &CudaSetup,
) -> Result<RunOutput, RunError> {
    Err(crate::backend::BackendError::Unavailable(crate::backend::cuda::UNAVAILABLE.into()).into())
}

/// Runs the prepared graph on the first `spec.gpus` GPUs of this machine (or as many
/// logical GPUs on the machine's GPUs, when `setup` allows it). The report names the GPUs.
#[cfg(feature = "cuda")]
pub(crate) fn run_cuda(
    prepared: &Prepared<'_>,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    spec: &RunSpec,
    setup: &CudaSetup,
) -> Result<RunOutput, RunError> {
    use super::report::{BackendInfo, TopologyInfo};
    use super::{Machine, builtin_kernels, execute, finish};
    use crate::backend::Backend;
    use crate::backend::cuda::CudaBackend;
    let _ = setup;
    let mut backend = CudaBackend::open(spec.gpus, builtin_kernels())?;
    let outcome = execute(&mut backend, prepared, spec)?;
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
            name: format!("{} x{}", gpu_name, spec.gpus),
            source: "cuda:this machine".to_string(),
            hash: String::new(),
            gpus: spec.gpus,
        },
        stats,
        elapsed_ps: outcome.compute_time_ps,
    };
    finish(prepared, graph_name, summary, spec, outcome, machine)
}
