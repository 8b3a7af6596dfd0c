//! Runs on real GPUs: the same [`execute`](super::execute) as on the simulator, with the
//! CUDA backend in place of the simulator (in a build without the `cuda` feature the
//! backend's stub answers that it is unavailable).

use super::report::{BackendInfo, TopologyInfo};
use super::{CudaSetup, Machine, Prepared, RunError, RunOutput, RunSpec};
use super::{builtin_kernels, execute, finish};
use crate::backend::cuda::{CudaBackend, CudaOptions, KernelSpan};
use crate::backend::sim::TraceSpan;
use crate::backend::{Backend, BackendError, DeviceId};
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
    let options = CudaOptions {
        kernel_spans: setup.trace,
        ..if setup.logical_gpus {
            CudaOptions::logical(spec.gpus)
        } else {
            CudaOptions::new(spec.gpus)
        }
    };
    let mut backend = CudaBackend::open_with(options, builtin_kernels())?;
    backend.check_memory_plan(&graph_bytes_per_gpu(prepared, spec.gpus))?;
    let outcome = execute(&mut backend, prepared, spec)
        .map_err(|e| with_kernels_in_flight(e, || backend.fault_report()))?;
    let stats = backend.stats();
    let trace = setup.trace.then(|| kernel_trace(backend.take_kernel_spans()));
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
            overlay: None,
            gpus: spec.gpus,
            faults: Vec::new(),
        },
        stats,
        elapsed_ps: outcome.compute_time_ps,
    };
    let mut output = finish(prepared, graph_name, summary, spec, outcome, machine)?;
    output.trace = trace;
    Ok(output)
}

/// Kernel spans as trace spans: one track per (logical) GPU and stream, times since the
/// backend opened; what lies between them on a track is the GPU waiting for the host.
fn kernel_trace(spans: Vec<KernelSpan>) -> Vec<TraceSpan> {
    spans
        .into_iter()
        .map(|s| TraceSpan {
            name: s.kernel.to_string(),
            track: format!("gpu{}/stream{}", s.device.0, s.stream.0),
            start_ps: s.start_ps,
            duration_ps: s.end_ps.saturating_sub(s.start_ps),
            amount: 0,
            counts: None,
        })
        .collect()
}

/// Driver error codes of a device fault: sticky, so whichever call comes next reports it,
/// often not the one of the kernel that faulted.
const DEVICE_FAULTS: [&str; 9] = [
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
];

/// A device fault surfaces asynchronously, at whatever call comes next: its error gets the
/// kernels that were in flight (`report`, from the backend's books), which include the one
/// that faulted. Other errors pass unchanged.
fn with_kernels_in_flight(error: RunError, report: impl FnOnce() -> String) -> RunError {
    let text = error.to_string();
    match DEVICE_FAULTS.iter().find(|code| text.contains(*code)) {
        Some(code) => {
            let text = text.strip_prefix("GPU error: ").unwrap_or(&text);
            RunError::Backend(BackendError::Device(format!(
                "device fault ({code}): {text}; the GPU context is lost; kernels in flight \
                 when it was found: {}",
                report()
            )))
        }
        None => error,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::{Algorithm, AlgorithmParams};
    use crate::graph::Csr;
    use crate::runtime::RuntimeError;

    #[test]
    fn device_faults_name_the_kernels_in_flight_and_other_errors_pass() {
        let fault = RunError::Runtime(RuntimeError::Backend(BackendError::Device(
            "launching `bsp_split` on gpu0: CUDA_ERROR_ILLEGAL_INSTRUCTION (an illegal \
             instruction was encountered)"
                .into(),
        )));
        let report = || "stream 2 on gpu0: kernels `bfs_advance` in flight".to_string();
        let text = with_kernels_in_flight(fault, report).to_string();
        assert!(text.starts_with("GPU error: device fault (CUDA_ERROR_ILLEGAL_INSTRUCTION)"));
        assert!(
            text.contains(
                "kernels in flight when it was found: stream 2 on gpu0: kernels `bfs_advance`"
            ),
            "{text}"
        );
        assert!(!text.contains("GPU error: GPU error"), "{text}");
        let other = RunError::Options("no".into());
        assert_eq!(with_kernels_in_flight(other, || unreachable!()).to_string(), "no");
    }

    #[test]
    fn the_memory_plan_counts_offsets_and_owned_arcs() {
        // A path 0-1-2-3 (6 arcs), weighted; vertices 0 and 1 on gpu0, 2 and 3 on gpu1.
        let edges = [(0, 1), (1, 2), (2, 3)];
        let graph = Csr::from_edges(4, &edges, None, false, Default::default()).expect("graph");
        let graph = crate::graph::generate::with_uniform_weights(&graph, 1, 1, 0).expect("w");
        let spec = super::super::RunSpec {
            gpus: 2,
            runtime: super::super::RuntimeKind::Bsp,
            algorithm: Algorithm::Bfs,
            params: AlgorithmParams::default(),
            partitioner: "seg".into(),
            seed: 1,
            bsp: Default::default(),
            groute: Default::default(),
            gum: Default::default(),
            atos: Default::default(),
            validate: true,
            command_line: Vec::new(),
        };
        let prepared = super::super::prepare(&graph, &spec).expect("prepared");
        let owner = &prepared.partition.owner;
        let mut expected = [8 * 5u64; 2];
        for v in 0..4u32 {
            expected[owner[v as usize] as usize] += 8 * graph.degree(v);
        }
        assert_eq!(graph_bytes_per_gpu(&prepared, 2), expected.to_vec());
        assert_eq!(expected.iter().sum::<u64>(), 2 * 40 + 8 * 6);
    }
}
