//! Breadth-first search: levels from a source (unreached vertices keep `u32::MAX`).

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, VertexResult};
use crate::backend::{BackendError, ElemType, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner};
use crate::runtime::groute::worklist::Problem;

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
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    fn groute(&self) -> Option<GrouteOperators> {
        Some(GrouteOperators::Worklist(Problem::Bfs { source: self.source }))
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

/// Registers `bfs_advance`.
pub fn register(registry: &mut KernelRegistry) {
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
