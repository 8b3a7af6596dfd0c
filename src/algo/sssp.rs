//! Single-source shortest paths (Bellman-Ford over frontiers): distances from a source,
//! unreachable vertices keep [`UNREACHED`].
//!
//! Two weight kinds, one set of mechanisms. Integer weights run the exact integer path
//! (`u32` distances, saturating sums). Real weights (`EdgeWeights::Float`, as Graphalytics
//! graphs carry) run the same runtimes with `f32` distances held as their IEEE-754 bits in
//! the `u32` value slots: SSSP refuses negative and NaN weights, and for non-negative
//! floats (and `+inf`) the bit patterns order exactly as the numbers do, so the runtimes'
//! `u32` minimum (the bulk-synchronous `MinU32` combiner, Groute's OnReceive, a device's
//! atomic min) is the float minimum without any new mechanism. [`UNREACHED`] (`u32::MAX`,
//! a NaN pattern above every non-negative float's bits) marks an unreached vertex in both.
//! Both kinds run on both backends (`sssp_advance_f32` in `kernels/algo.cu`, the
//! `GwSsspF32` functor in `kernels/groute_worklist.cu`).

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, Needs, VertexResult};
use crate::backend::{BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, FloatTolerance, ValidationReport, compare_exact};
use crate::graph::{Csr, EdgeWeights, GraphError, ResultValue};
use crate::runtime::bsp::{AdvanceArgs, Combiner, sim_levels};
use crate::runtime::groute::worklist::kernels::{
    Counts, Out, Visit, WorklistKernels, WorklistOperator, register_app,
};
use crate::runtime::groute::worklist::{Start, WorklistApp};

/// Distance of a vertex SSSP never reached (both weight kinds).
pub const UNREACHED: u32 = u32::MAX;

/// The kind of weights an SSSP run relaxes, which picks its kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsspWeights {
    /// Integer weights: `u32` distances, exact.
    #[default]
    Int,
    /// Real weights: `f32` distances held as their bits (see the module docs).
    Float,
}

/// SSSP from `source`.
#[derive(Clone, Debug)]
pub struct Sssp {
    /// Source vertex (global id).
    pub source: u32,
    /// The weights it relaxes.
    pub weights: SsspWeights,
}

impl Sssp {
    /// SSSP from `source` over the kind of weights `graph` carries (integer when it has
    /// none: [`crate::algo::check`] then refuses the run).
    pub fn for_graph(source: u32, graph: &Csr) -> Self {
        let weights = match graph.weights() {
            Some(EdgeWeights::Float(_)) => SsspWeights::Float,
            _ => SsspWeights::Int,
        };
        Sssp { source, weights }
    }
}

/// `d + w` on distance bits and weight bits for real weights: IEEE round-to-nearest `f32`
/// addition (monotone in `d`, and never below `d` for `w >= 0`).
#[inline]
pub fn relax_f32(d: u32, w: u32) -> u32 {
    (f32::from_bits(d) + f32::from_bits(w)).to_bits()
}

/// A distance as a result value: `None` where unreached, else the number (`f32` bits
/// widened exactly for real weights).
pub fn distance(weights: SsspWeights, bits: u32) -> Option<f64> {
    match (bits, weights) {
        (UNREACHED, _) => None,
        (d, SsspWeights::Int) => Some(f64::from(d)),
        (d, SsspWeights::Float) => Some(f64::from(f32::from_bits(d))),
    }
}

/// The relative tolerance of float SSSP against the `f64` reference, from the arithmetic.
///
/// The device sums `f32` weights along a path left to right, each addition rounding to
/// nearest (unit roundoff `u = 2^-24`); as addition is monotone, the distance it settles on
/// is the smallest such rounded sum over all paths, and a smallest one is a simple path,
/// of at most `k = reached - 1` arcs. A rounded sum of `k` non-negative terms is within
/// `gamma_k = k u / (1 - k u)` of the exact sum (Higham, Accuracy and Stability of
/// Numerical Algorithms, eq. 4.4 with all terms non-negative), so the device's distance is
/// within `gamma_k` of the exact shortest distance relative to it; the `f64` reference adds
/// its own `gamma_k` with `u = 2^-53`. The bound grows with the number of reached vertices:
/// it is what can be promised, not what is typically seen (usually a few ulps).
pub fn float_tolerance(reached: u64) -> FloatTolerance {
    let k = reached.saturating_sub(1).max(1) as f64;
    let gamma = |u: f64| if k * u < 1.0 { k * u / (1.0 - k * u) } else { f64::INFINITY };
    FloatTolerance {
        abs: 0.0,
        rel: gamma(f64::from(f32::EPSILON) / 2.0) + gamma(f64::EPSILON / 2.0),
    }
}

impl GraphAlgorithm for Sssp {
    fn name(&self) -> &'static str {
        "sssp"
    }
    fn describe(&self) -> String {
        match self.weights {
            SsspWeights::Int => "sssp (integer weights)".into(),
            SsspWeights::Float => "sssp (real-valued f32 weights)".into(),
        }
    }
    fn needs(&self) -> Needs {
        Needs { weights: true, ..Needs::default() }
    }
    fn source(&self) -> Option<u32> {
        Some(self.source)
    }
    /// Real weights must be finite and non-negative (the parsers refuse others; a graph
    /// built in code is checked here), and their total must stay inside `f32`'s range so
    /// no path sum overflows to infinity.
    fn check_params(&self, graph: &Csr) -> Result<(), GraphError> {
        let Some(EdgeWeights::Float(w)) = graph.weights() else { return Ok(()) };
        if let Some(arc) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
            let from = graph.offsets().partition_point(|&o| o <= arc as u64).saturating_sub(1);
            return Err(GraphError::WrongWeights {
                algorithm: "sssp".into(),
                reason: format!(
                    "the arc from vertex {from} to vertex {} has weight {}; shortest paths need finite non-negative weights: fix or drop that edge in the input",
                    graph.targets()[arc],
                    w[arc]
                ),
            });
        }
        let total: f64 = w.iter().map(|&x| f64::from(x)).sum();
        if total > f64::from(f32::MAX) / 2.0 {
            return Err(GraphError::WrongWeights {
                algorithm: "sssp".into(),
                reason: format!(
                    "the real weights sum to {total:e}, beyond what f32 distances hold (about 3.4e38); scale the weights down"
                ),
            });
        }
        Ok(())
    }
    /// Integer distances are compared exactly (unreached as the reference's marker); real
    /// ones exactly too, against the Dijkstra that adds in `f32` as the kernels do (unreached:
    /// infinity). How far those are from the exact (`f64`) distances is bounded by
    /// [`float_tolerance`], which `tests/sssp_float.rs` checks.
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        match self.weights {
            SsspWeights::Int => {
                let expected: Vec<u64> = reference::sssp_distances_int(graph, self.source)?;
                let actual: Vec<u64> =
                    result
                        .values
                        .iter()
                        .map(|&d| {
                            if d == UNREACHED {
                                reference::SSSP_UNREACHED_INT
                            } else {
                                u64::from(d)
                            }
                        })
                        .collect();
                Ok(compare_exact("sssp distances", &expected, &actual))
            }
            SsspWeights::Float => {
                // The run adds in f32 and keeps the minimum: its fixpoint is the f32
                // Dijkstra's, exactly (see reference::sssp_distances_f32).
                let expected = reference::sssp_distances_f32(graph, self.source)?;
                let actual: Vec<f32> = result
                    .values
                    .iter()
                    .map(|&d| if d == UNREACHED { f32::INFINITY } else { f32::from_bits(d) })
                    .collect();
                Ok(compare_exact("sssp distances (f32 arithmetic)", &expected, &actual))
            }
        }
    }
    /// Distances as floats (integer ones too, as Graphalytics writes SSSP); unreached as
    /// `Infinity`.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<ResultValue> {
        result.values.iter().map(|&d| ResultValue::distance(distance(self.weights, d))).collect()
    }
    /// GUM: see `algo/gum.rs`.
    fn gum(&self) -> Option<super::GumOperators> {
        super::gum::sssp(self)
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
        match self.weights {
            SsspWeights::Int => "sssp_advance",
            SsspWeights::Float => "sssp_advance_f32",
        }
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
    fn loop_kernel(&self) -> Option<&'static str> {
        match self.weights {
            SsspWeights::Int => Some("sssp_levels"),
            SsspWeights::Float => None,
        }
    }
}

/// SSSP on Groute's distributed worklist (seed 000 section 4.5): distances relaxed with
/// atomic min; GetPrio is the distance (soft priority, section 4.4; for real weights the
/// distance rounded down, so `--priority-delta` stays in distance units).
impl WorklistApp for Sssp {
    fn label(&self) -> &'static str {
        "SSSP"
    }
    fn kernels(&self) -> WorklistKernels {
        match self.weights {
            SsspWeights::Int => SsspWorklist::KERNELS,
            SsspWeights::Float => SsspFloatWorklist::KERNELS,
        }
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
    /// As BFS: one H200 ran luxembourg_osm in 13.6 ms fused against 64.9 ms with a launch
    /// per batch, the road grid in 11.1 s against 33.4 s (reports/gpu_bench.md, 2026-11-23);
    /// on R-MAT 22 a launch per batch wins (16.2 against 32.5 ms).
    fn fused_on_road_like(&self) -> bool {
        true
    }
    /// R-MAT 22 from the hub on 4 x H200 (c82): 709.8 ms with a launch per batch and the
    /// ring's end-of-launch send at 4 GPUs (17.6 on one), 26.5 ms fused with the
    /// asynchronous send; 66.9 against 29.7 ms at 2 GPUs.
    fn fused_async_on_several_gpus(&self) -> bool {
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

/// SSSP's worklist callbacks for real weights: distances and weights are `f32` bits (see
/// the module docs); `kernels/groute_worklist.cu` has the CUDA functor (`GwSsspF32`).
pub struct SsspFloatWorklist;

impl WorklistOperator for SsspFloatWorklist {
    const KERNELS: WorklistKernels = WorklistKernels {
        work: "groute_sssp_f32_work",
        split_send: "groute_sssp_f32_split_send",
        split_receive: "groute_sssp_f32_split_receive",
        promote: "groute_sssp_f32_promote",
        fused: "groute_sssp_f32_fused",
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
                    "{} weights for the {} arcs of vertex {}: the graph needs real weights",
                    visit.weights.len(),
                    visit.targets.len(),
                    visit.v
                ),
            });
        }
        let dist = values.as_u32_mut()?;
        let d = dist[visit.v as usize];
        if d == UNREACHED {
            return Ok(0);
        }
        for (&t, &w) in visit.targets.iter().zip(visit.weights) {
            let nd = relax_f32(d, w);
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
        // Saturating: an unreached vertex (NaN bits) has priority 0, never deferred.
        Ok(f32::from_bits(values.as_u32()?[v as usize]) as u64)
    }
}

/// Registers `sssp_advance`, `sssp_advance_f32` and SSSP's worklist kernels.
pub fn register(registry: &mut KernelRegistry) {
    register_app::<SsspWorklist>(registry);
    register_app::<SsspFloatWorklist>(registry);
    registry.register(KernelDef {
        name: "sssp_advance_f32",
        contract: "sssp_advance over real weights: values and weights are f32 bits; relax \
                   with f32 round-to-nearest addition and atomic min on the bits (order- \
                   preserving for non-negative floats); unreached (0xffffffff) vertices are \
                   never expanded",
        sim: advance_f32,
        cuda_name: Some("sssp_advance_f32"),
        remote_args: &crate::runtime::bsp::kernels::TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "sssp_advance",
        contract: "for every frontier vertex, relax its out-arcs with atomic min and append \
                   improved targets (once) to frontier_out",
        sim: advance,
        cuda_name: Some("sssp_advance"),
        remote_args: &crate::runtime::bsp::kernels::TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "sssp_levels",
        contract: "the bsp device-side loop (BspPrimitive::loop_kernel) of sssp_advance: its \
                   supersteps one after another, frontier_in and frontier_out alternating; \
                   buffers and scalars as bfs_levels",
        sim: levels_loop,
        cuda_name: Some("sssp_levels_fused"),
        remote_args: &[],
    });
}

/// The simulator's `sssp_levels`: SSSP's advance (integer weights), superstep after superstep.
fn levels_loop(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    if ctx.buffers.get(2).map_or(0, HostData::len) != ctx.buffers.get(1).map_or(0, HostData::len) {
        return Err(BackendError::Kernel {
            kernel: "sssp_levels".into(),
            message: "the graph needs integer weights, one per arc".into(),
        });
    }
    sim_levels(ctx, "sssp_levels", true, false, |dist, dv, t, w, _| {
        let nd = dv.saturating_add(w);
        let better = nd < dist[t];
        if better {
            dist[t] = nd;
        }
        better
    })
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

fn advance_f32(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let weights = a.weights.unwrap_or(&[]);
    if weights.len() != a.targets.len() {
        return Err(BackendError::Kernel {
            kernel: "sssp_advance_f32".into(),
            message: format!(
                "{} weights for {} arcs: the graph needs real weights",
                weights.len(),
                a.targets.len()
            ),
        });
    }
    let dist = a.values.as_u32_mut()?;
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        let dv = dist[v];
        if dv == UNREACHED {
            continue;
        }
        let arcs = a.offsets[v] as usize..a.offsets[v + 1] as usize;
        a.effects.edges += arcs.len() as u64;
        a.effects.atomics += arcs.len() as u64;
        for (&t, &w) in a.targets[arcs.clone()].iter().zip(&weights[arcs]) {
            let t = t as usize;
            let nd = relax_f32(dv, w);
            if nd < dist[t] {
                dist[t] = nd;
                a.out.push(t as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}
