//! Breadth-first search: levels from a source (unreached vertices keep `u32::MAX`).

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, VertexResult};
use crate::backend::{BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner};
use crate::runtime::groute::worklist::kernels::{
    Counts, Out, Visit, WorklistKernels, WorklistOperator, register_app,
};
use crate::runtime::groute::worklist::{Start, WorklistApp};

/// Level of a vertex BFS never reached.
pub const UNREACHED: u32 = u32::MAX;

/// BFS from `source`.
#[derive(Clone, Debug)]
pub struct Bfs {
    /// Source vertex (global id).
    pub source: u32,
}

impl GraphAlgorithm for Bfs {
    fn name(&self) -> &'static str {
        "bfs"
    }
    fn source(&self) -> Option<u32> {
        Some(self.source)
    }
    /// Levels are integers: compared exactly.
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected = reference::bfs_levels(graph, self.source)?;
        Ok(compare_exact("bfs levels", &expected, result.values))
    }
    /// Levels; unreached as Graphalytics' `9223372036854775807`.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<crate::graph::ResultValue> {
        super::bfs::levels(result.values)
    }
    /// GUM: see `algo/gum.rs`.
    fn gum(&self) -> Option<super::GumOperators> {
        super::gum::bfs(self)
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    fn groute(&self) -> Option<GrouteOperators> {
        Some(GrouteOperators::Worklist(Box::new(self.clone())))
    }
}

impl BspPrimitive for Bfs {
    fn name(&self) -> &'static str {
        "bfs"
    }
    fn advance_kernel(&self) -> &'static str {
        "bfs_advance"
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    fn combiner(&self) -> Combiner {
        Combiner::MinU32
    }
    fn initial_value(&self, v: u32, _n: u32) -> u32 {
        if v == self.source { 0 } else { UNREACHED }
    }
    fn initially_active(&self, v: u32) -> bool {
        v == self.source
    }
}

/// BFS on Groute's distributed worklist (seed 000 section 4.5): a vertex's level pushed to
/// its out-neighbours with atomic min; GetPrio is the level.
impl WorklistApp for Bfs {
    fn label(&self) -> &'static str {
        "BFS"
    }
    fn kernels(&self) -> WorklistKernels {
        BfsWorklist::KERNELS
    }
    fn initial_values(&self, owner: &[u32], _gpu: u32) -> HostData {
        HostData::U32(vec![UNREACHED; owner.len()])
    }
    fn start(&self) -> Start {
        Start::Source(self.source)
    }
}

/// BFS's worklist callbacks (`kernels/groute_worklist.cu` has the CUDA functor).
pub struct BfsWorklist;

impl WorklistOperator for BfsWorklist {
    const KERNELS: WorklistKernels = WorklistKernels {
        work: "groute_bfs_work",
        split_send: "groute_bfs_split_send",
        split_receive: "groute_bfs_split_receive",
        promote: "groute_bfs_promote",
        fused: "groute_bfs_fused",
    };
    const PREPEND_OWN: bool = true;
    fn visit(
        visit: &Visit<'_>,
        values: &mut HostData,
        _rank: &mut HostData,
        out: &mut Out<'_>,
        _counts: &mut Counts,
    ) -> Result<u64, BackendError> {
        let level = values.as_u32_mut()?;
        let next = level[visit.v as usize].saturating_add(1);
        for &t in visit.targets {
            if next < level[t as usize] {
                level[t as usize] = next;
                out.push(t);
            }
        }
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
        min_improves(values, v, value)
    }
    fn priority(values: &HostData, v: u32) -> Result<u64, BackendError> {
        Ok(u64::from(values.as_u32()?[v as usize]))
    }
}

/// OnReceive of the min-combined applications (BFS, SSSP): lower the value and take the
/// vertex if `value` improves it.
pub(crate) fn min_improves(
    values: &mut HostData,
    v: u32,
    value: u32,
) -> Result<bool, BackendError> {
    let x = values.as_u32_mut()?;
    let improved = value < x[v as usize];
    if improved {
        x[v as usize] = value;
    }
    Ok(improved)
}

/// BFS levels as result values (unreached: none).
pub(crate) fn levels(values: &[u32]) -> Vec<crate::graph::ResultValue> {
    values
        .iter()
        .map(|&l| crate::graph::ResultValue::level((l != UNREACHED).then_some(u64::from(l))))
        .collect()
}

/// Registers `bfs_advance` and BFS's worklist kernels.
pub fn register(registry: &mut KernelRegistry) {
    register_app::<BfsWorklist>(registry);
    registry.register(KernelDef {
        name: "bfs_advance",
        contract: "for every frontier vertex, label unvisited out-neighbours with superstep + 1 \
                   and append them (once) to frontier_out",
        sim: advance,
        cuda_name: Some("bfs_advance"),
        remote_args: &[],
    });
}

fn advance(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let level = a.superstep + 1;
    let labels = a.values.as_u32_mut()?;
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i];
        let arcs = &a.targets[a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        for &t in arcs {
            let t = t as usize;
            if labels[t] == UNREACHED {
                labels[t] = level;
                a.out.push(t as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}
