//! Single-source shortest paths (Bellman-Ford over frontiers, integer weights): distances
//! from a source, unreachable vertices keep `u32::MAX`.

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, Needs, VertexResult};
use crate::backend::{BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner};
use crate::runtime::groute::worklist::kernels::{
    Counts, Out, Visit, WorklistKernels, WorklistOperator, register_app,
};
use crate::runtime::groute::worklist::{Start, WorklistApp};

/// Distance of a vertex SSSP never reached.
pub const UNREACHED: u32 = u32::MAX;

/// SSSP from `source`.
#[derive(Clone, Debug)]
pub struct Sssp {
    /// Source vertex (global id).
    pub source: u32,
}

impl GraphAlgorithm for Sssp {
    fn name(&self) -> &'static str {
        "sssp"
    }
    fn needs(&self) -> Needs {
        Needs { weights: true, ..Needs::default() }
    }
    fn source(&self) -> Option<u32> {
        Some(self.source)
    }
    /// Distances are integer sums: compared exactly (unreached as the reference's marker).
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected: Vec<u64> = reference::sssp_distances_int(graph, self.source)?;
        let actual: Vec<u64> = result
            .values
            .iter()
            .map(|&d| if d == UNREACHED { reference::SSSP_UNREACHED_INT } else { u64::from(d) })
            .collect();
        Ok(compare_exact("sssp distances", &expected, &actual))
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    fn groute(&self) -> Option<GrouteOperators> {
        Some(GrouteOperators::Worklist(Box::new(self.clone())))
    }
}

impl BspPrimitive for Sssp {
    fn name(&self) -> &'static str {
        "sssp"
    }
    fn advance_kernel(&self) -> &'static str {
        "sssp_advance"
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    fn combiner(&self) -> Combiner {
        Combiner::MinU32
    }
    fn needs_weights(&self) -> bool {
        true
    }
    fn initial_value(&self, v: u32, _n: u32) -> u32 {
        if v == self.source { 0 } else { UNREACHED }
    }
    fn initially_active(&self, v: u32) -> bool {
        v == self.source
    }
}

/// SSSP on Groute's distributed worklist (seed 000 section 4.5): distances relaxed with
/// atomic min over integer weights; GetPrio is the distance (soft priority, section 4.4).
impl WorklistApp for Sssp {
    fn label(&self) -> &'static str {
        "SSSP"
    }
    fn kernels(&self) -> WorklistKernels {
        SsspWorklist::KERNELS
    }
    fn initial_values(&self, owner: &[u32], _gpu: u32) -> HostData {
        HostData::U32(vec![UNREACHED; owner.len()])
    }
    fn start(&self) -> Start {
        Start::Source(self.source)
    }
    fn uses_weights(&self) -> bool {
        true
    }
}

/// SSSP's worklist callbacks (`kernels/groute_worklist.cu` has the CUDA functor).
pub struct SsspWorklist;

impl WorklistOperator for SsspWorklist {
    const KERNELS: WorklistKernels = WorklistKernels {
        work: "groute_sssp_work",
        split_send: "groute_sssp_split_send",
        split_receive: "groute_sssp_split_receive",
        promote: "groute_sssp_promote",
        fused: "groute_sssp_fused",
    };
    const PREPEND_OWN: bool = true;
    fn visit(
        visit: &Visit<'_>,
        values: &mut HostData,
        _rank: &mut HostData,
        out: &mut Out<'_>,
        counts: &mut Counts,
    ) -> Result<u64, BackendError> {
        if visit.weights.len() != visit.targets.len() {
            return Err(BackendError::Kernel {
                kernel: Self::KERNELS.work.into(),
                message: format!(
                    "{} weights for the {} arcs of vertex {}: the graph needs integer weights",
                    visit.weights.len(),
                    visit.targets.len(),
                    visit.v
                ),
            });
        }
        let dist = values.as_u32_mut()?;
        let d = dist[visit.v as usize];
        for (&t, &w) in visit.targets.iter().zip(visit.weights) {
            let nd = d.saturating_add(w);
            if nd < dist[t as usize] {
                dist[t as usize] = nd;
                out.push(t);
            }
        }
        counts.bytes_read += 4 * visit.targets.len() as u64;
        Ok(visit.targets.len() as u64)
    }
    fn pack(values: &mut HostData, v: u32) -> Result<u32, BackendError> {
        Ok(values.as_u32()?[v as usize])
    }
    fn on_receive(
        values: &mut HostData,
        v: u32,
        value: u32,
        _epsilon: f64,
    ) -> Result<bool, BackendError> {
        super::bfs::min_improves(values, v, value)
    }
    fn priority(values: &HostData, v: u32) -> Result<u64, BackendError> {
        Ok(u64::from(values.as_u32()?[v as usize]))
    }
}

/// Registers `sssp_advance` and SSSP's worklist kernels.
pub fn register(registry: &mut KernelRegistry) {
    register_app::<SsspWorklist>(registry);
    registry.register(KernelDef {
        name: "sssp_advance",
        contract: "for every frontier vertex, relax its out-arcs with atomic min and append \
                   improved targets (once) to frontier_out",
        sim: advance,
        cuda_name: Some("sssp_advance"),
        remote_args: &[],
    });
}

fn advance(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let weights = a.weights.unwrap_or(&[]);
    if weights.len() != a.targets.len() {
        return Err(BackendError::Kernel {
            kernel: "sssp_advance".into(),
            message: format!(
                "{} weights for {} arcs: the graph needs integer weights",
                weights.len(),
                a.targets.len()
            ),
        });
    }
    let dist = a.values.as_u32_mut()?;
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        let dv = dist[v];
        let arcs = a.offsets[v] as usize..a.offsets[v + 1] as usize;
        a.effects.edges += arcs.len() as u64;
        a.effects.atomics += arcs.len() as u64;
        for (&t, &w) in a.targets[arcs.clone()].iter().zip(&weights[arcs]) {
            let t = t as usize;
            let nd = dv.saturating_add(w);
            if nd < dist[t] {
                dist[t] = nd;
                a.out.push(t as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}
