//! Local clustering coefficient (LCC), the LDBC Graphalytics definition: with `N(v)` the
//! set of `v`'s neighbours (in- and out-neighbours for a directed graph, `v` itself left
//! out), `LCC(v)` is the number of arcs `u -> w` with `u, w` in `N(v)` over `|N(v)| (|N(v)|
//! - 1)`, and 0 when `|N(v)| < 2`. For an undirected graph every edge is two arcs, so this
//! is the usual edges-among-neighbours over `|N(v)| (|N(v)| - 1) / 2`.
//!
//! On the bulk-synchronous runtime the graph is the neighbourhood graph ([`neighbourhoods`]:
//! every `N(v)` as sorted out-arcs, each arc `v -> u` carrying a flag, 1 when `v -> u` is an
//! arc of the input), so `LCC(v)`'s numerator is the sum over `u` in `N(v)` of the flags of
//! `u`'s arcs into `N(v)`: an intersection of two sorted lists per arc. That reads `N(u)`
//! for every neighbour `u` (two hops), so every GPU holds the whole neighbourhood graph
//! (`BspPrimitive::needs_all_arcs`) and counts its owned vertices; nothing travels between
//! GPUs. `lcc_count` adds each arc's count into an `f64` per vertex (exact: a count is an
//! integer below 2^53 for `|N(v)|` below 94,906,266, which `check_params` enforces) and
//! `lcc_apply` divides in `f64` and stores an `f32` (as PageRank's ranks) in `aux`.

use super::{BspPrimitive, GraphAlgorithm, VertexResult};
use crate::backend::{BackendError, ElemType, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, FloatTolerance, ValidationReport, compare_float};
use crate::graph::{BuildOptions, Csr, EdgeWeights, GraphError, ResultValue};
use crate::runtime::bsp::{AdvanceArgs, Combiner, kernels::FIXED_SLOTS, reduce_counter};
use std::borrow::Cow;

/// Local clustering coefficients.
#[derive(Clone, Debug, Default)]
pub struct Lcc;

/// Largest `|N(v)|` whose count `|N(v)| (|N(v)| - 1)` is an integer below 2^53 (exact in
/// `f64`).
pub const NEIGHBOURS_MAX: u64 = 94_906_265;

/// The neighbourhood graph: for every vertex `v`, `N(v)` (out- and in-neighbours, without
/// `v`, each once) as out-arcs sorted by target, with integer weights 1 where `v -> u` is an
/// arc of `graph` and 0 where only `u -> v` is. Directed, whatever `graph` is.
pub fn neighbourhoods(graph: &Csr) -> Csr {
    let n = graph.num_vertices();
    let out = graph.without_duplicate_arcs();
    let inn =
        if graph.is_directed() { Some(out.transpose().without_duplicate_arcs()) } else { None };
    let mut edges = Vec::with_capacity(2 * out.num_arcs() as usize);
    let mut flags = Vec::with_capacity(2 * out.num_arcs() as usize);
    for v in 0..n {
        let outs = out.neighbors(v);
        let ins = inn.as_ref().map_or(&[][..], |t| t.neighbors(v));
        // Merge of two sorted lists: the union, flagged by membership of the out-list.
        let (mut i, mut j) = (0, 0);
        while i < outs.len() || j < ins.len() {
            let (u, flag) = match (outs.get(i), ins.get(j)) {
                (Some(&a), Some(&b)) if a == b => {
                    i += 1;
                    j += 1;
                    (a, 1)
                }
                (Some(&a), Some(&b)) if a < b => {
                    i += 1;
                    (a, 1)
                }
                (Some(&a), None) => {
                    i += 1;
                    (a, 1)
                }
                (_, Some(&b)) => {
                    j += 1;
                    (b, 0)
                }
                (None, None) => unreachable!("the loop runs while a list has items"),
            };
            if u != v {
                edges.push((v, u));
                flags.push(flag);
            }
        }
    }
    Csr::from_edges(n, &edges, Some(EdgeWeights::Int(flags)), true, BuildOptions::default())
        .expect("arcs of a valid CSR are in range")
}

/// The input's arcs back from a neighbourhood graph (the arcs flagged 1), for validation.
fn flagged_arcs(neighbourhoods: &Csr) -> Result<Csr, GraphError> {
    let Some(EdgeWeights::Int(flags)) = neighbourhoods.weights() else {
        return Err(GraphError::InvalidCsr("lcc: the neighbourhood graph has no flags".into()));
    };
    let mut edges = Vec::new();
    for v in 0..neighbourhoods.num_vertices() {
        for arc in neighbourhoods.arc_range(v) {
            if flags[arc] == 1 {
                edges.push((v, neighbourhoods.targets()[arc]));
            }
        }
    }
    Csr::from_edges(neighbourhoods.num_vertices(), &edges, None, true, BuildOptions::default())
}

/// The tolerance of LCC against the `f64` reference, from the arithmetic: the numerator is
/// an exact integer (sums of 0/1 flags in `f64`, below 2^53) and so is `|N(v)| (|N(v)| -
/// 1)`; the device divides them in `f64` (one correctly rounded operation, as the
/// reference does, so both hold the same `f64`) and stores the quotient as an `f32`, one
/// more rounding to nearest: within `2^-24` of the reference relatively. Zero stays zero.
pub fn tolerance() -> FloatTolerance {
    FloatTolerance { abs: 0.0, rel: f64::from(f32::EPSILON) / 2.0 }
}

impl GraphAlgorithm for Lcc {
    fn name(&self) -> &'static str {
        "lcc"
    }
    /// The neighbourhood graph ([`neighbourhoods`]).
    fn prepare<'g>(&self, graph: &'g Csr) -> Cow<'g, Csr> {
        Cow::Owned(neighbourhoods(graph))
    }
    /// `|N(v)|` at most [`NEIGHBOURS_MAX`] (counts stay exact in `f64`).
    fn check_params(&self, graph: &Csr) -> Result<(), GraphError> {
        let mut degree: Vec<u64> = (0..graph.num_vertices()).map(|v| graph.degree(v)).collect();
        if graph.is_directed() {
            for &t in graph.targets() {
                degree[t as usize] += 1;
            }
        }
        match degree.iter().position(|&d| d > NEIGHBOURS_MAX) {
            None => Ok(()),
            Some(v) => Err(GraphError::InvalidArgument {
                what: "lcc".into(),
                found: format!("vertex {v} with up to {} neighbours", degree[v]),
                expected: format!(
                    "at most {NEIGHBOURS_MAX} neighbours per vertex (counts exact in f64); \
                     drop the vertex's edges or split the graph"
                ),
            }),
        }
    }
    /// Against the sequential reference on the input's arcs within [`tolerance`].
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected = reference::local_clustering_coefficients(&flagged_arcs(graph)?);
        let actual: Vec<f64> =
            result.aux.unwrap_or_default().iter().map(|&x| f64::from(x)).collect();
        Ok(compare_float("lcc", &expected, &actual, tolerance()))
    }
    /// Coefficients (the `f32` aux values) as floats.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<ResultValue> {
        result.aux.unwrap_or_default().iter().map(|&x| ResultValue::Float(f64::from(x))).collect()
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
}

impl BspPrimitive for Lcc {
    fn name(&self) -> &'static str {
        "lcc"
    }
    fn advance_kernel(&self) -> &'static str {
        "lcc_count"
    }
    fn apply_kernel(&self) -> Option<&'static str> {
        Some("lcc_apply")
    }
    /// Counts, exact integers in `f64`.
    fn value_elem(&self) -> ElemType {
        ElemType::F64
    }
    /// Nothing is sent (every GPU holds the whole graph); sums if it were.
    fn combiner(&self) -> Combiner {
        Combiner::AddF64
    }
    fn needs_all_arcs(&self) -> bool {
        true
    }
    fn initial_value(&self, _v: u32, _n: u32) -> u32 {
        0f32.to_bits()
    }
    fn initial_aux(&self, _v: u32, _n: u32) -> Option<f32> {
        Some(0.0)
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
    fn max_supersteps(&self) -> Option<u32> {
        Some(1)
    }
}

/// Registers `lcc_count` and `lcc_apply`.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "lcc_count",
        contract: "for every frontier vertex v and arc v -> u of the neighbourhood graph \
                   (sorted targets, weights the 0/1 flags): the sum of the flags of u's arcs \
                   to targets in N(v), found by walking the shorter of N(u) and N(v) (N(u) \
                   on a tie) and binary search in the other, added to values[v] (f64); edges \
                   1 + that length per arc, one atomic per arc with a nonzero sum; no output",
        sim: count,
        cuda_name: Some("lcc_count"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "lcc_apply",
        contract: "aux[v] = values[v] / (d (d - 1)) in f64, stored as f32 (0 when d < 2), d \
                   the arcs of v, for every owned vertex; next frontier empty, reduction 0; \
                   scalars: reduction f64, n u32, gpu u32",
        sim: apply,
        cuda_name: Some("lcc_apply"),
        remote_args: &[],
    });
}

/// The flag sum of arc `v -> u` and the length walked (see the `lcc_count` contract).
fn arc_count(offsets: &[u64], targets: &[u32], flags: &[u32], v: usize, u: usize) -> (u64, u64) {
    let nv = offsets[v] as usize..offsets[v + 1] as usize;
    let nu = offsets[u] as usize..offsets[u + 1] as usize;
    let mut count = 0u64;
    if nu.len() <= nv.len() {
        let within = &targets[nv];
        for arc in nu.clone() {
            if within.binary_search(&targets[arc]).is_ok() {
                count += u64::from(flags[arc]);
            }
        }
        (count, nu.len() as u64)
    } else {
        let among = &targets[nu.clone()];
        for &w in &targets[nv.clone()] {
            if let Ok(at) = among.binary_search(&w) {
                count += u64::from(flags[nu.start + at]);
            }
        }
        (count, nv.len() as u64)
    }
}

fn count(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let a = AdvanceArgs::from_context(ctx)?;
    let flags = a.weights.unwrap_or(&[]);
    if flags.len() != a.targets.len() {
        return Err(BackendError::Kernel {
            kernel: "lcc_count".into(),
            message: format!(
                "{} flags for {} arcs: lcc runs on its neighbourhood graph",
                flags.len(),
                a.targets.len()
            ),
        });
    }
    let counts = a.values.as_f64_mut()?;
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        for arc in a.offsets[v] as usize..a.offsets[v + 1] as usize {
            let u = a.targets[arc] as usize;
            let (c, walked) = arc_count(a.offsets, a.targets, flags, v, u);
            a.effects.edges += 1 + walked;
            if c > 0 {
                counts[v] += c as f64;
                a.effects.atomics += 1;
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

fn apply(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let gpu = ctx.scalar_u32(2)?;
    let Some([offsets, _, _, values, aux, _, _, _, _, counters, owner, _, _, _]) =
        ctx.buffers.get_mut(..FIXED_SLOTS)
    else {
        return Err(BackendError::Usage("lcc_apply: wrong buffer count".into()));
    };
    let (offsets, counts, owner) = (offsets.as_u64()?, values.as_f64()?, owner.as_u32()?);
    let (lcc, counters) = (aux.as_f32_mut()?, counters.as_u64_mut()?);
    for v in 0..counts.len() {
        if owner[v] != gpu {
            continue;
        }
        let d = (offsets[v + 1] - offsets[v]) as f64;
        lcc[v] = if d >= 2.0 { (counts[v] / (d * (d - 1.0))) as f32 } else { 0.0 };
    }
    let peers = counters.len() - 3;
    counters[1] = 0;
    counters[reduce_counter(peers)] = 0f64.to_bits();
    ctx.effects.items = counts.len() as u64;
    ctx.effects.vertices = counts.len() as u64;
    ctx.effects.bytes_read = counts.len() as u64 * 20;
    ctx.effects.bytes_written = counts.len() as u64 * 4;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbourhoods_are_sorted_unions_flagged_by_direction() {
        // 0 -> 1, 1 -> 0, 1 -> 2, 2 -> 2 (a self-loop), 1 -> 2 again.
        let g = Csr::from_edges(
            3,
            &[(0, 1), (1, 0), (1, 2), (2, 2), (1, 2)],
            None,
            true,
            BuildOptions::default(),
        )
        .unwrap();
        let h = neighbourhoods(&g);
        assert_eq!(h.neighbors(0), &[1]);
        assert_eq!(h.neighbors(1), &[0, 2]);
        assert_eq!(h.neighbors(2), &[1]);
        let Some(EdgeWeights::Int(flags)) = h.weights() else { panic!("flags") };
        // 0->1 yes; 1->0 yes, 1->2 yes; 2->1 no.
        assert_eq!(flags, &vec![1, 1, 1, 0]);
        let back = flagged_arcs(&h).unwrap();
        assert_eq!(back.num_arcs(), 3);
    }
}
