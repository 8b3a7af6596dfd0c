//! The logs GUM's cost model is fitted on, and the fit (`switchyard gum fit`): GUM runs
//! without stealing on the simulated DGX-1 (so each GPU's compute phase is its own advance
//! kernel), one [`Sample`] per GPU and superstep with enough edges: the Table I features of
//! its frontier and its kernel time per edge less the bytes over its memory bandwidth
//! (`g(W)` is what `c_ij = bytes / B_ij + g(W)` adds to the transfer term).

use super::{BackendSetup, RunError, RunSpec, RuntimeKind, SimSetup, run};
use crate::algo::{Algorithm, AlgorithmParams};
use crate::graph::Csr;
use crate::runtime::gum::GumOptions;
use crate::runtime::gum::cost_model::{CostModel, CostModelError, FitOptions, Sample};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// Supersteps of a GPU with fewer active edges than this are left out: below a wave of the
/// GPU a kernel costs its latency floor whatever the frontier looks like, and FSteal does
/// not run there (t1).
pub const MIN_SAMPLE_EDGES: u64 = 4096;

/// The algorithms the logs cover (the paper's BFS, SSSP, PR and CC).
pub const FIT_ALGORITHMS: [Algorithm; 4] =
    [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Pr, Algorithm::Cc];

/// Runs every algorithm on `graph` (weighted for SSSP) with GUM on `gpus` GPUs of
/// `topology` without stealing and returns the samples its supersteps give.
pub fn log_samples(
    graph: &Csr,
    graph_name: &str,
    topology: &Topology,
    gpus: u32,
    seed: u64,
) -> Result<Vec<Sample>, RunError> {
    let mut samples = Vec::new();
    for algorithm in FIT_ALGORITHMS {
        let hub = (0..graph.num_vertices()).max_by_key(|&v| graph.degree(v)).unwrap_or(0);
        let spec = RunSpec {
            params: AlgorithmParams { source: hub, iterations: 5, ..AlgorithmParams::default() },
            seed,
            gum: GumOptions { fsteal: false, osteal: false, ..GumOptions::default() },
            ..RunSpec::new(algorithm, RuntimeKind::Gum, gpus)
        };
        let setup = BackendSetup::Sim(SimSetup {
            topology: topology.clone(),
            fidelity: Fidelity::Flow,
            trace: false,
            jitter_ps: 0,
        });
        let output = run(graph, graph_name, &spec, &setup)?;
        if output.report.validation.as_ref().is_some_and(|v| !v.is_ok()) {
            return Err(RunError::Options(format!(
                "{} on {graph_name} did not validate; no samples from a wrong run",
                algorithm.name()
            )));
        }
        let Some(gum) = output.report.gum else { continue };
        let bytes_per_edge = if algorithm == Algorithm::Sssp { 8.0 } else { 4.0 };
        for record in &gum.iterations {
            for g in 0..record.active_edges.len() {
                let edges = record.active_edges[g];
                if edges < MIN_SAMPLE_EDGES {
                    continue;
                }
                let local = gum.bandwidth_bytes_per_s[g][g] as f64;
                let per_edge = record.busy_ps[g] as f64 / edges as f64;
                let ps_per_edge = (per_edge - bytes_per_edge * 1e12 / local).max(per_edge / 20.0);
                samples.push(Sample {
                    algorithm: algorithm.name().into(),
                    graph: graph_name.into(),
                    features: record.features[g],
                    edges,
                    ps_per_edge,
                });
            }
        }
    }
    Ok(samples)
}

/// Fits the model on `samples`.
pub fn fit(samples: &[Sample], options: FitOptions) -> Result<CostModel, CostModelError> {
    CostModel::fit(samples, options)
}
