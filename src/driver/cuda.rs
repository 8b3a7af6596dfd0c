//! Runs on real GPUs: the same [`execute`](super::execute) as on the simulator, with the
//! CUDA backend in place of the simulator (in a build without the `cuda` feature the
//! backend's stub answers that it is unavailable).

use super::report::{BackendInfo, TopologyInfo};
use super::{CudaSetup, Machine, Prepared, RunError, RunOutput, RunSpec};
use super::{builtin_kernels, execute, finish};
use crate::backend::cuda::{CudaBackend, CudaOptions};
use crate::backend::{Backend, DeviceId};
use crate::graph::summary::GraphSummary;

/// Runs the prepared graph on the first `spec.gpus` GPUs of this machine, or as many
/// logical GPUs on the machine's GPUs when `setup` allows it (the report and the table then
/// say the GPUs were shared, so nobody reads the times as scaling).
pub(crate) fn run_cuda(
    prepared: &Prepared<'_>,
    graph_name: &str,
    summary: Option<&GraphSummary>,
    spec: &RunSpec,
    setup: &CudaSetup,
) -> Result<RunOutput, RunError> {
    let options = if setup.logical_gpus {
        CudaOptions::logical(spec.gpus)
    } else {
        CudaOptions::new(spec.gpus)
    };
    let mut backend = CudaBackend::open_with(options, builtin_kernels())?;
    backend.check_memory_plan(&graph_bytes_per_gpu(prepared, spec.gpus))?;
    let outcome = execute(&mut backend, prepared, spec)?;
    let stats = backend.stats();
    let gpu_name = backend.device_info(DeviceId(0)).name;
    let (name, source) = if backend.is_shared() {
        let model = gpu_name.split(" (logical").next().unwrap_or(&gpu_name).to_string();
        (
            format!(
                "{model}: {} logical GPUs on {} (shared: times are not scaling)",
                spec.gpus,
                backend.physical_count()
            ),
            "cuda:this machine, logical GPUs".to_string(),
        )
    } else {
        (format!("{gpu_name} x{}", spec.gpus), "cuda:this machine".to_string())
    };
    let machine = Machine {
        backend: BackendInfo {
            name: backend.name().to_string(),
            fidelity: None,
            events: stats.events,
            jitter_ps: 0,
        },
        topology: TopologyInfo {
            name,
            source,
            hash: String::new(),
            gpus: spec.gpus,
            faults: Vec::new(),
        },
        stats,
        elapsed_ps: outcome.compute_time_ps,
    };
    finish(prepared, graph_name, summary, spec, outcome, machine)
}

/// A lower bound of the device memory each GPU's share of the graph takes (offsets over
/// every vertex, and the targets and weights of its owned vertices' arcs): enough to refuse,
/// before any work, logical GPUs that cannot fit their physical GPU together.
fn graph_bytes_per_gpu(prepared: &Prepared<'_>, gpus: u32) -> Vec<u64> {
    let graph = prepared.graph.as_ref();
    let arc_bytes = if graph.weights().is_some() { 8 } else { 4 };
    let mut bytes = vec![8 * (u64::from(graph.num_vertices()) + 1); gpus as usize];
    for (v, &owner) in prepared.partition.owner.iter().enumerate() {
        if let Some(b) = bytes.get_mut(owner as usize) {
            *b += arc_bytes * graph.degree(v as u32);
        }
    }
    bytes
}
