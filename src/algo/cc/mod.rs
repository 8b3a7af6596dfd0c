//! Connected components by minimum-label propagation over the symmetrised graph (weakly
//! connected components of a directed graph). Labels are global vertex ids.

pub mod groute;

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, Needs, VertexResult};
use crate::backend::{BackendError, ElemType, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_components};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner, WaveValues, sim_levels};

/// Weakly connected components.
#[derive(Clone, Debug, Default)]
pub struct ConnectedComponents;

impl GraphAlgorithm for ConnectedComponents {
    fn name(&self) -> &'static str {
        "cc"
    }
    fn needs(&self) -> Needs {
        Needs { undirected: true, ..Needs::default() }
    }
    /// Components are compared as partitions (labels may differ, groupings may not).
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected = reference::weakly_connected_components(graph);
        Ok(compare_components(&expected, result.values))
    }
    /// Labels are vertex ids: written as the file's id of that vertex.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<crate::graph::ResultValue> {
        result.values.iter().map(|&l| crate::graph::ResultValue::Vertex(l)).collect()
    }
    /// GUM: see `algo/gum.rs`.
    fn gum(&self) -> Option<crate::algo::GumOperators> {
        crate::algo::gum::cc(self)
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    /// Groute's CC is topology-driven (seed 000 section 5.1.4): a program of its own.
    fn groute(&self) -> Option<GrouteOperators> {
        Some(GrouteOperators::Program(Box::new(groute::GrouteCc)))
    }
}

impl BspPrimitive for ConnectedComponents {
    fn name(&self) -> &'static str {
        "cc"
    }
    fn advance_kernel(&self) -> &'static str {
        "cc_advance"
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    fn combiner(&self) -> Combiner {
        Combiner::MinU32
    }
    fn needs_undirected(&self) -> bool {
        true
    }
    fn initial_value(&self, v: u32, _n: u32) -> u32 {
        v
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
    fn loop_kernel(&self) -> Option<&'static str> {
        Some("cc_levels")
    }
}

/// Registers `cc_advance` and Groute's CC kernels.
pub fn register(registry: &mut KernelRegistry) {
    groute::register(registry);
    registry.register(KernelDef {
        name: "cc_advance",
        contract: "for every frontier vertex, lower each neighbour's label to its own with \
                   atomic min and append lowered neighbours (once) to frontier_out",
        sim: advance,
        cuda_name: Some("cc_advance"),
        remote_args: &crate::runtime::bsp::kernels::TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "cc_levels",
        contract: "the bsp device-side loop (BspPrimitive::loop_kernel) of cc_advance: its \
                   supersteps one after another, frontier_in and frontier_out alternating; \
                   buffers and scalars as bfs_levels",
        sim: levels_loop,
        cuda_name: Some("cc_levels_fused"),
        remote_args: &[],
    });
}

fn advance(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let wave = ctx.resident_threads;
    let mut a = AdvanceArgs::from_context(ctx)?;
    let labels = a.values.as_u32_mut()?;
    let frontier = &a.frontier_in[..a.frontier_len];
    let mut begun = WaveValues::new(wave);
    for (k, &v) in frontier.iter().enumerate() {
        let lv = begun.get(labels, frontier, k);
        let v = v as usize;
        let arcs = &a.targets[a.offsets[v] as usize..a.offsets[v + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        a.effects.atomics += arcs.len() as u64;
        for &t in arcs {
            let t = t as usize;
            if lv < labels[t] {
                labels[t] = lv;
                a.out.push(t as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

/// The simulator's `cc_levels`: CC's advance, superstep after superstep.
fn levels_loop(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    sim_levels(ctx, "cc_levels", true, true, |labels, lv, t, _, _| {
        let lower = lv < labels[t];
        if lower {
            labels[t] = lv;
        }
        lower
    })
}
