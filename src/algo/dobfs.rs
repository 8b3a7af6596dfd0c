//! Direction-optimizing BFS (Beamer et al., as seed 002 section VI-A maps it onto multiple
//! GPUs): supersteps push from the frontier while it is small and pull into unvisited
//! vertices (stopping at the first parent found) while it is large. A pull step needs every
//! GPU to know the whole frontier, so the runtime broadcasts newly discovered vertices and
//! keeps a copy of every vertex (duplicate-all); that broadcast is why its multi-GPU scaling
//! is flat in the paper.
//!
//! Direction rule, from sizes the runtime already has (the all-reduced frontier sizes; the
//! unvisited count is the vertex count minus every frontier so far, since each vertex is
//! discovered once): start forward; switch to backward when `frontier > unvisited /
//! alpha`; switch back when `frontier < vertices / beta`; switch to backward at most once,
//! as the paper does, because each switch scans every vertex. `alpha = 14`, `beta = 24`
//! (Beamer's defaults).

use super::bfs::UNREACHED;
use super::{BspPrimitive, GraphAlgorithm, VertexResult};
use crate::backend::{BackendError, ElemType, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner};

/// Default push-to-pull divisor (`--dobfs-alpha`): Beamer's 14, kept until measured.
pub const DEFAULT_ALPHA: f64 = 14.0;
/// Default pull-to-push divisor (`--dobfs-beta`): Beamer's 24.
pub const DEFAULT_BETA: f64 = 24.0;

/// Direction-optimizing BFS from `source`.
#[derive(Clone, Debug)]
pub struct DirectionOptimizingBfs {
    /// Source vertex (global id).
    pub source: u32,
    /// Push-to-pull threshold divisor.
    pub alpha: f64,
    /// Pull-to-push threshold divisor.
    pub beta: f64,
}

impl DirectionOptimizingBfs {
    /// With Beamer's defaults.
    pub fn new(source: u32) -> Self {
        DirectionOptimizingBfs { source, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA }
    }

    /// Whether each superstep pulls, replaying the rule over the frontier sizes so far.
    pub fn directions(&self, frontier_sizes: &[u64], num_vertices: u32) -> Vec<bool> {
        let n = f64::from(num_vertices);
        let mut pulling = false;
        let mut switched = false;
        let mut visited = 0u64;
        let mut out = Vec::with_capacity(frontier_sizes.len());
        for &frontier in frontier_sizes {
            visited += frontier;
            let unvisited = n - visited as f64;
            let frontier = frontier as f64;
            if !pulling && !switched && frontier > unvisited / self.alpha {
                pulling = true;
                switched = true;
            } else if pulling && frontier < n / self.beta {
                pulling = false;
            }
            out.push(pulling);
        }
        out
    }
}

impl GraphAlgorithm for DirectionOptimizingBfs {
    fn name(&self) -> &'static str {
        "dobfs"
    }
    fn source(&self) -> Option<u32> {
        Some(self.source)
    }
    fn check_params(&self, _graph: &Csr) -> Result<(), GraphError> {
        for (what, x) in [("--dobfs-alpha", self.alpha), ("--dobfs-beta", self.beta)] {
            if !(x.is_finite() && x > 0.0) {
                return Err(GraphError::InvalidArgument {
                    what: what.into(),
                    found: x.to_string(),
                    expected: "a positive number (Beamer's defaults: alpha 14, beta 24)".into(),
                });
            }
        }
        Ok(())
    }
    /// Levels are integers: compared exactly with BFS's reference.
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
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
}

impl BspPrimitive for DirectionOptimizingBfs {
    fn name(&self) -> &'static str {
        "dobfs"
    }
    fn advance_kernel(&self) -> &'static str {
        "dobfs_advance"
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    fn combiner(&self) -> Combiner {
        Combiner::MinU32
    }
    fn needs_reverse(&self) -> bool {
        true
    }
    fn initial_value(&self, v: u32, _n: u32) -> u32 {
        if v == self.source { 0 } else { UNREACHED }
    }
    fn initially_active(&self, v: u32) -> bool {
        v == self.source
    }
    fn advance_param(&self, frontier_sizes: &[u64], num_vertices: u32) -> f64 {
        let pull = self.directions(frontier_sizes, num_vertices).last().copied().unwrap_or(false);
        if pull { 1.0 } else { 0.0 }
    }
}

/// Registers `dobfs_advance`.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "dobfs_advance",
        contract: "param 0: push as bfs_advance; param 1: every owned unvisited vertex looks \
                   for an in-neighbour at the previous level, stops at the first, and joins \
                   frontier_out",
        sim: advance,
        cuda_name: Some("dobfs_advance"),
        remote_args: &[],
    });
}

fn advance(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let level = a.superstep + 1;
    let labels = a.values.as_u32_mut()?;
    if a.param == 0.0 {
        for &v in &a.frontier_in[..a.frontier_len] {
            let arcs =
                &a.targets[a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize];
            a.effects.edges += arcs.len() as u64;
            for &t in arcs {
                if labels[t as usize] == UNREACHED {
                    labels[t as usize] = level;
                    a.out.push(t);
                }
            }
        }
    } else {
        if a.reverse_offsets.len() != labels.len() + 1 {
            return Err(BackendError::Kernel {
                kernel: "dobfs_advance".into(),
                message: "pull step without the reverse CSR of every vertex".into(),
            });
        }
        a.effects.items += labels.len() as u64;
        for v in 0..labels.len() {
            if a.owner[v] != a.gpu || labels[v] != UNREACHED {
                continue;
            }
            let parents = &a.reverse_targets
                [a.reverse_offsets[v] as usize..a.reverse_offsets[v + 1] as usize];
            for &u in parents {
                a.effects.edges += 1;
                if labels[u as usize] == a.superstep {
                    labels[v] = level;
                    a.out.push(v as u32);
                    break;
                }
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_to_pull_once_when_the_frontier_is_large_and_back_when_small() {
        let p = DirectionOptimizingBfs::new(0);
        // 1000 vertices: 1, 10, 200 (> 789 / 14: pull), 500, 30 (< 1000 / 24: push), 5, 200.
        let d = p.directions(&[1, 10, 200, 500, 30, 5, 200], 1000);
        assert_eq!(d, vec![false, false, true, true, false, false, false]);
    }

    #[test]
    fn a_larger_alpha_pulls_earlier() {
        // 1000 vertices: after 1 and 10, 989 unvisited; 10 > 989 / 100 pulls at alpha 100
        // and not at 14 (989 / 14 = 70.6).
        let eager = DirectionOptimizingBfs { alpha: 100.0, ..DirectionOptimizingBfs::new(0) };
        let d = eager.directions(&[1, 10, 200], 1000);
        assert_eq!(d, vec![false, true, true]);
        let beamer = DirectionOptimizingBfs::new(0);
        assert_eq!(beamer.directions(&[1, 10, 200], 1000), vec![false, false, true]);
    }
}
