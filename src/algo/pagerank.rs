//! PageRank in the two definitions the product validates against:
//! - [`PageRankLdbc`]: the LDBC Graphalytics definition, a fixed number of iterations with
//!   dangling vertices' rank spread over all vertices (push of `rank / degree` along
//!   out-arcs, remote partial sums combined by addition, then an apply step per vertex);
//! - [`PageRankResidual`]: residual push PageRank to a tolerance (Groute and Atos): a vertex
//!   is active while its residual exceeds `epsilon`; remote residuals are always forwarded
//!   to the owner, which accumulates them.

use super::{BspPrimitive, GraphAlgorithm, GrouteOperators, VertexResult, check_damping};
use crate::backend::{
    BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry, Scalar,
};
use crate::graph::reference::{self, FloatTolerance, ValidationReport, compare_float};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner, kernels::FIXED_SLOTS, reduce_counter};
use crate::runtime::groute::worklist::kernels::{
    Counts, Out, Visit, WorklistKernels, WorklistOperator, register_app,
};
use crate::runtime::groute::worklist::{Start, WorklistApp};

/// LDBC Graphalytics PageRank.
#[derive(Clone, Debug)]
pub struct PageRankLdbc {
    /// Damping factor `d` (0.85 in LDBC's data sets).
    pub damping: f64,
    /// Number of iterations.
    pub iterations: u32,
    /// How a bulk-synchronous superstep gathers the shares.
    pub direction: PrDirection,
}

/// How LDBC PageRank's bulk-synchronous superstep gathers the shares (`--pr-direction`).
/// Both send the same partial sums of proxies to their owners, so supersteps, messages and
/// bytes are the same; only the GPU's work differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PrDirection {
    /// Every owned vertex adds its share to each out-neighbour's `f64` partial sum: an
    /// atomic add per arc into a random place of the sums.
    Push,
    /// Every local vertex sums the shares of its in-neighbours on this GPU (the transpose
    /// of the GPU's own arcs, built before the clock starts) without atomics; the shares
    /// are computed once per vertex by the apply step.
    #[default]
    Pull,
}

/// Residual push PageRank to a tolerance.
#[derive(Clone, Debug)]
pub struct PageRankResidual {
    /// Damping factor `d`.
    pub damping: f64,
    /// A vertex is active while its residual exceeds this.
    pub epsilon: f64,
}

/// The tolerance of LDBC PageRank against the `f64` reference, from the arithmetic (`u =
/// 2^-24`, `w = 2^-53` the `f32` and `f64` unit roundoffs).
///
/// Every quantity PageRank computes is positive (ranks, shares, sums, the dangling mass), so
/// relative errors never grow through its additions: a sum of positive terms that each
/// carry a factor in `[1 - e, 1 + e]` carries one too, and a recursive sum of `k` positive
/// terms in any order (atomics included) is within `gamma_k = k w / (1 - k w)` of its exact
/// value (Higham, Accuracy and Stability of Numerical Algorithms, eq. 4.4). Per iteration
/// the runtimes (both backends) compute:
/// - each share `rank / degree` in `f32` from an `f32` rank: the degree's conversion (exact
///   below 2^24) and the quotient, `(1 + u)^2`;
/// - partial sums in `f64` (atomic adds on the device), a remote partial rounded once to
///   `f32` in its package, `(1 + u)`, and added into the owner's `f64` sum; with the
///   dangling mass (an `f64` sum over `f32` ranks, per GPU and then over GPUs) no sum has
///   more than `arcs + n + 64` terms: `(1 + gamma)`;
/// - `(1 - d) / n + d * (dangling / n) + d * sum` in `f64`, at most 8 roundings:
///   `(1 + w)^8`, stored as an `f32` rank, `(1 + u)`.
///
/// So after `I` iterations from `1 / n` (an `f32` quotient of `n` rounded to `f32`: `(1 +
/// u)^2`), a rank is within `e_dev = (1 + u)^2 ((1 + u)^4 (1 + gamma) (1 + w)^8)^I - 1` of
/// the exact one relatively, and the `f64` reference (shares, sums and the update in `f64`)
/// within `e_ref = (1 + w) ((1 + gamma) (1 + w)^9)^I - 1`; the two differ by at most `(e_dev
/// + e_ref) / (1 - e_ref)` of the reference's value. For 20 iterations on R-MAT 24 (2^24
/// vertices, 2^28 arcs) that is about 6.2e-6 (82 u, and 21 u from the `f64` sums); `f32` sums instead lose up to `gamma_k` in `f32` on a vertex with `k` in-arcs,
/// 0.1% at 10^5 equal terms (R-MAT 24's hub on one H200 was 0.29% off). No absolute part:
/// every rank is at least `(1 - d) / n`, far above `f32`'s smallest normal.
pub fn ldbc_tolerance(iterations: u32, num_vertices: u32, num_arcs: u64) -> FloatTolerance {
    let u = f64::from(f32::EPSILON) / 2.0;
    let w = f64::EPSILON / 2.0;
    let terms = num_arcs as f64 + f64::from(num_vertices) + 64.0;
    let gamma = if terms * w < 1.0 { terms * w / (1.0 - terms * w) } else { f64::INFINITY };
    let i = f64::from(iterations);
    let device_step = (1.0 + u).powi(4) * (1.0 + gamma) * (1.0 + w).powi(8);
    let device = (1.0 + u).powi(2) * device_step.powf(i) - 1.0;
    let reference = (1.0 + w) * ((1.0 + gamma) * (1.0 + w).powi(9)).powf(i) - 1.0;
    FloatTolerance { abs: 0.0, rel: (device + reference) / (1.0 - reference) }
}

impl GraphAlgorithm for PageRankLdbc {
    fn name(&self) -> &'static str {
        "pr"
    }
    fn check_params(&self, _graph: &Csr) -> Result<(), GraphError> {
        check_damping(self.damping)
    }
    /// Ranks (`f32`, partial sums in `f64`) against the `f64` reference within
    /// [`ldbc_tolerance`].
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected = reference::pagerank_ldbc(graph, self.damping, self.iterations)?;
        let actual: Vec<f64> =
            result.aux.unwrap_or_default().iter().map(|&r| f64::from(r)).collect();
        Ok(compare_float(
            "pagerank (ldbc)",
            &expected,
            &actual,
            ldbc_tolerance(self.iterations, graph.num_vertices(), graph.num_arcs()),
        ))
    }
    /// Ranks (the `f32` aux values) as floats.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<crate::graph::ResultValue> {
        let ranks = result.aux.unwrap_or_default();
        ranks.iter().map(|&r| crate::graph::ResultValue::Float(f64::from(r))).collect()
    }
    /// GUM: see `algo/gum.rs`.
    fn gum(&self) -> Option<super::GumOperators> {
        super::gum::pagerank(self)
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
}

impl GraphAlgorithm for PageRankResidual {
    fn name(&self) -> &'static str {
        "pr-residual"
    }
    fn check_params(&self, _graph: &Csr) -> Result<(), GraphError> {
        check_damping(self.damping)?;
        if self.epsilon > 0.0 && self.epsilon.is_finite() {
            Ok(())
        } else {
            Err(GraphError::InvalidArgument {
                what: "--epsilon".into(),
                found: self.epsilon.to_string(),
                expected: "a positive tolerance such as 1e-4".into(),
            })
        }
    }
    /// Ranks are normalised (divided by their sum) and compared with the residual
    /// reference run to a 100x tighter tolerance, within `20 * epsilon / ((1 - d) * n) +
    /// 2e-3 * |expected|`: each leftover residual below `epsilon` changes a raw rank by at
    /// most `epsilon / (1 - d)`.
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let n = f64::from(graph.num_vertices().max(1));
        let expected = reference::pagerank_residual(graph, self.damping, self.epsilon / 100.0)?;
        let raw: Vec<f64> = result.aux.unwrap_or_default().iter().map(|&r| f64::from(r)).collect();
        let sum: f64 = raw.iter().sum();
        let actual: Vec<f64> = raw.iter().map(|r| r / sum.max(f64::MIN_POSITIVE)).collect();
        let abs = 20.0 * self.epsilon / ((1.0 - self.damping) * n);
        Ok(compare_float(
            "pagerank (residual, normalised)",
            &expected.ranks,
            &actual,
            FloatTolerance { abs, rel: 2e-3 },
        ))
    }
    /// Ranks normalised to sum 1, as validated.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<crate::graph::ResultValue> {
        let raw: Vec<f64> = result.aux.unwrap_or_default().iter().map(|&r| f64::from(r)).collect();
        let sum: f64 = raw.iter().sum();
        raw.iter()
            .map(|r| crate::graph::ResultValue::Float(r / sum.max(f64::MIN_POSITIVE)))
            .collect()
    }
    /// GUM: see `algo/gum.rs`.
    fn gum(&self) -> Option<super::GumOperators> {
        super::gum::pagerank_residual(self)
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    fn groute(&self) -> Option<GrouteOperators> {
        Some(GrouteOperators::Worklist(Box::new(self.clone())))
    }
    fn atos(&self) -> Option<Box<dyn super::AtosApp>> {
        Some(Box::new(self.clone()))
    }
}

impl BspPrimitive for PageRankLdbc {
    fn name(&self) -> &'static str {
        "pr"
    }
    fn advance_kernel(&self) -> &'static str {
        match self.direction {
            PrDirection::Push => "pr_ldbc_push",
            PrDirection::Pull => "pr_ldbc_pull",
        }
    }
    fn needs_local_transpose(&self) -> bool {
        self.direction == PrDirection::Pull
    }
    /// Pull: each owned vertex's share `rank / out-degree` (`f32`, 0 without out-arcs),
    /// written by the apply step for the next superstep's pull.
    fn scratch(
        &self,
        local_vertices: u32,
        _local_arcs: usize,
    ) -> Vec<(ElemType, usize, &'static str)> {
        match self.direction {
            PrDirection::Push => Vec::new(),
            PrDirection::Pull => vec![(ElemType::F32, local_vertices as usize, "pagerank shares")],
        }
    }
    /// Partial sums in `f64` (see [`ldbc_tolerance`]).
    fn value_elem(&self) -> ElemType {
        ElemType::F64
    }
    fn combiner(&self) -> Combiner {
        Combiner::AddF64
    }
    fn initial_value(&self, _v: u32, _n: u32) -> u32 {
        0f32.to_bits()
    }
    fn initial_aux(&self, _v: u32, n: u32) -> Option<f32> {
        Some(1.0 / n as f32)
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
    fn param(&self) -> f64 {
        f64::INFINITY
    }
    fn apply_kernel(&self) -> Option<&'static str> {
        Some("pr_ldbc_apply")
    }
    fn initial_reduction(&self, degrees: &[u32], n: u32) -> f64 {
        degrees.iter().filter(|&&d| d == 0).count() as f64 / f64::from(n)
    }
    fn max_supersteps(&self) -> Option<u32> {
        Some(self.iterations)
    }
    fn apply_scalars(&self) -> Vec<Scalar> {
        vec![Scalar::F64(self.damping)]
    }
}

impl BspPrimitive for PageRankResidual {
    fn name(&self) -> &'static str {
        "pr-residual"
    }
    fn advance_kernel(&self) -> &'static str {
        "pr_residual_push"
    }
    fn value_elem(&self) -> ElemType {
        ElemType::F32
    }
    fn combiner(&self) -> Combiner {
        Combiner::AddF32
    }
    fn initial_value(&self, _v: u32, _n: u32) -> u32 {
        ((1.0 - self.damping) as f32).to_bits()
    }
    fn initial_aux(&self, _v: u32, _n: u32) -> Option<f32> {
        Some(0.0)
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
    fn param(&self) -> f64 {
        self.epsilon
    }
    fn extra(&self) -> f64 {
        self.damping
    }
}

/// Residual PageRank on Groute's distributed worklist (seed 000 section 4.6.3): every
/// vertex starts queued with residual `1 - d`; a worked vertex moves its residual into its
/// rank and pushes `d * residual / degree` to each out-neighbour; remote residuals are
/// always forwarded (accumulated in the halo, sent on the first contribution), and the
/// owner queues a vertex when its residual passes epsilon. Residuals and ranks are `f64`: a
/// hub's residual grows large while it waits in the worklist, and the small shares pushed
/// into it fall below an `f32` ulp (a single-GPU R-MAT-16 run lost 2.6% of the hub's rank
/// in `f32`). It appends its own production, so a residual keeps accumulating while its
/// vertex waits (prepending made a 1-GPU R-MAT-16 run push 12.5x the edges of the
/// bulk-synchronous version). No priority.
impl WorklistApp for PageRankResidual {
    fn label(&self) -> &'static str {
        "residual PageRank"
    }
    fn kernels(&self) -> WorklistKernels {
        PageRankWorklist::KERNELS
    }
    fn initial_values(&self, owner: &[u32], gpu: u32) -> HostData {
        let start = 1.0 - self.damping;
        HostData::F64(owner.iter().map(|&o| if o == gpu { start } else { 0.0 }).collect())
    }
    fn initial_ranks(&self, n: usize) -> Option<HostData> {
        Some(HostData::F64(vec![0.0; n]))
    }
    fn start(&self) -> Start {
        Start::EveryOwnedVertex
    }
    fn tolerance_and_damping(&self) -> (f64, f64) {
        (self.epsilon, self.damping)
    }
    fn has_priority(&self) -> bool {
        false
    }
}

/// Residual PageRank's worklist callbacks (`kernels/groute_worklist.cu` has the CUDA
/// functor).
pub struct PageRankWorklist;

impl WorklistOperator for PageRankWorklist {
    const KERNELS: WorklistKernels = WorklistKernels {
        work: "groute_pr_work",
        split_send: "groute_pr_split_send",
        split_receive: "groute_pr_split_receive",
        promote: "groute_pr_promote",
        fused: "groute_pr_fused",
    };
    const PREPEND_OWN: bool = false;
    fn visit(
        visit: &Visit<'_>,
        values: &mut HostData,
        rank: &mut HostData,
        out: &mut Out<'_>,
        counts: &mut Counts,
    ) -> Result<u64, BackendError> {
        let residual = values.as_f64_mut()?;
        let rank = rank.as_f64_mut()?;
        let v = visit.v as usize;
        let r = std::mem::take(&mut residual[v]);
        rank[v] += r;
        counts.bytes_written += 16;
        if r == 0.0 || visit.targets.is_empty() {
            return Ok(0);
        }
        let share = visit.damping * r / visit.targets.len() as f64;
        for &t in visit.targets {
            let slot = &mut residual[t as usize];
            let old = *slot;
            *slot += share;
            let owned = visit.owner[t as usize] == visit.gpu;
            // Owned: schedule when the residual passes epsilon. Remote: always forward,
            // once per accumulation in the halo.
            if (owned && old <= visit.epsilon && *slot > visit.epsilon) || (!owned && old == 0.0) {
                out.push(t);
            }
        }
        Ok(visit.targets.len() as u64)
    }
    /// The halo's accumulated residual travels as `f32` (a delta, not a total), and the
    /// halo is emptied.
    fn pack(values: &mut HostData, v: u32) -> Result<u32, BackendError> {
        Ok((std::mem::take(&mut values.as_f64_mut()?[v as usize]) as f32).to_bits())
    }
    fn on_receive(
        values: &mut HostData,
        v: u32,
        value: u32,
        epsilon: f64,
    ) -> Result<bool, BackendError> {
        let x = &mut values.as_f64_mut()?[v as usize];
        let old = *x;
        *x += f64::from(f32::from_bits(value));
        Ok(old <= epsilon && *x > epsilon)
    }
    fn priority(_values: &HostData, _v: u32) -> Result<u64, BackendError> {
        Ok(0)
    }
}

// ---------------------------------------------------------------------------------------
// Atos (seed 003 sec. IV, seed 004 Alg. 4): asynchronous residual PageRank. Every vertex
// starts queued with residual `1 - d`. A task takes its vertex's residual (atomicExch to 0)
// into its rank when it starts and, when it finishes, adds `d * residual / degree` to each
// out-neighbour's residual, queueing nothing (Alg. 4 line 10): the sweep queues, so that
// residuals accumulate until it comes round (`Check_Size` vertices reserved by every
// finished task and by idle workers, seed 003's "if the pop fails"). A remote neighbour
// gets an `f32` remote atomic add in direct mode; through the aggregator its residual
// travels as a `(vertex, residual)` pair its owner adds. Residuals are `f32` bits in the `u32` value words, ranks the `f32` aux
// values, `flags` marks "queued" (so a vertex is queued at most once: the local queue never
// holds more than the GPU's vertices). Extra work: tasks over the pushes of the sequential
// FIFO reference at the same epsilon.

use crate::runtime::atos::kernels::{
    self as atos_kernels, AtosKernels, AtosOperator, Emit, LocalState, Started,
};
use crate::runtime::atos::{AppInit, AtosApp, graph::AtosGraph};

impl AtosApp for PageRankResidual {
    fn label(&self) -> &'static str {
        "residual PageRank"
    }
    fn kernels(&self) -> AtosKernels {
        PageRankAtos::KERNELS
    }
    fn init(&self, ag: &AtosGraph, g: u32) -> AppInit {
        let n = ag.local_vertices(g) as usize;
        AppInit {
            value: vec![((1.0 - self.damping) as f32).to_bits(); n],
            aux: Some(vec![0.0; n]),
            flags: Some(vec![1; n]),
            items: (0..n as u32).collect(),
        }
    }
    /// The local queue holds each vertex at most once; the receive and aggregation queues
    /// hold a pair per remote arc of every vertex pushed since they were last drained.
    fn queue_capacity(&self, ag: &AtosGraph, g: u32) -> u64 {
        4 * u64::from(ag.local_vertices(g)) + 4 * ag.remote_arcs(g) + 4096
    }
    fn epsilon_damping(&self) -> (f64, f64) {
        (self.epsilon, self.damping)
    }
    /// The pushes of the sequential FIFO residual PageRank at the same epsilon.
    fn ideal_visits(&self, graph: &Csr) -> (u64, &'static str) {
        let pushes = reference::pagerank_residual(graph, self.damping, self.epsilon)
            .map(|r| r.pushes)
            .unwrap_or_default();
        (pushes, "pushes of the sequential FIFO residual PageRank at the same epsilon")
    }
}

/// Residual PageRank's Atos operator (`kernels/atos.cu` has the CUDA functor).
pub struct PageRankAtos;

fn residual_of(st: &LocalState<'_>, v: u32) -> f32 {
    st.value.get(v as usize).map_or(0.0, |&b| f32::from_bits(b))
}

impl AtosOperator for PageRankAtos {
    const KERNELS: AtosKernels = AtosKernels { worker: "atos_pr_worker", wide_worker: None };
    const ON_CUDA: bool = true;
    const REMOTE_MIN: bool = false;
    const REMOTE_ADD_F32: bool = true;
    const SWEEPS: bool = true;
    fn start(st: &mut LocalState<'_>, item: u32) -> Option<Started> {
        let v = item as usize;
        *st.flags.get_mut(v)? = 0;
        let r = f32::from_bits(std::mem::take(st.value.get_mut(v)?));
        st.aux[v] += r;
        st.counts.atomics += 2;
        st.counts.bytes_written += 8;
        (r != 0.0).then(|| Started {
            carry: r.to_bits(),
            arcs: st.neighbors(item).len() as u64,
            visit: true,
        })
    }
    fn finish(st: &mut LocalState<'_>, item: u32, carry: u32, emit: &mut Emit) {
        let degree = st.neighbors(item).len();
        if degree == 0 {
            return;
        }
        let share = (st.damping * f64::from(f32::from_bits(carry)) / degree as f64) as f32;
        for &t in st.neighbors(item) {
            emit.update(t, share.to_bits());
        }
    }
    /// Adds the residual and queues nothing (Alg. 4 line 10): the sweep queues the vertex,
    /// so its residual accumulates until the sweep reaches it.
    fn apply(st: &mut LocalState<'_>, v: u32, value: u32) -> Option<u32> {
        let slot = st.value.get_mut(v as usize)?;
        *slot = (f32::from_bits(*slot) + f32::from_bits(value)).to_bits();
        None
    }
    fn priority(_st: &LocalState<'_>, _item: u32) -> u32 {
        0
    }
    fn sweep(st: &mut LocalState<'_>, v: u32) -> bool {
        let over = f64::from(residual_of(st, v)) > st.epsilon;
        match st.flags.get_mut(v as usize) {
            Some(queued) if over && *queued == 0 => {
                *queued = 1;
                true
            }
            _ => false,
        }
    }
}

/// Registers the PageRank kernels (both definitions, residual PageRank's worklist kernels
/// and its Atos worker).
pub fn register(registry: &mut KernelRegistry) {
    register_app::<PageRankWorklist>(registry);
    atos_kernels::register_app::<PageRankAtos>(registry);
    registry.register(KernelDef {
        name: "pr_ldbc_push",
        contract: "for every owned vertex, add its share rank / out-degree (an f32 quotient) \
                   to each out-neighbour's f64 partial sum (atomic add); every proxy goes to \
                   frontier_out to be forwarded; values f64, aux f32 ranks",
        sim: ldbc_push,
        cuda_name: Some("pr_ldbc_push"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "pr_ldbc_pull",
        contract: "for every local vertex, its f64 partial sum = the sum over its in-arcs in \
                   the reverse slots (the transpose of this GPU's arcs, local ids) of the \
                   source's share: rank / out-degree (an f32 quotient) at superstep 0, else \
                   the f32 shares buffer (the last buffer, written by pr_ldbc_apply); no \
                   atomics but for vertices of at least 4096 in-arcs (summed in chunks by \
                   the post-pass); every proxy goes to frontier_out to be forwarded",
        sim: ldbc_pull,
        cuda_name: Some("pr_ldbc_pull"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "pr_ldbc_apply",
        contract: "rank = (1 - d) / n + d * (sum + dangling / n) in f64 for every owned \
                   vertex, stored as f32; f64 sums reset, next frontier = all owned vertices, \
                   local dangling rank reduced (f64); with one buffer after the fixed slots \
                   (of the local vertices' length), each owned vertex's share rank / out-degree (f32, 0 without out-arcs) \
                   is stored there for the pull; scalars: dangling f64, n u32, d f64",
        sim: ldbc_apply,
        cuda_name: Some("pr_ldbc_apply"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "pr_residual_push",
        contract: "for every frontier vertex, move its residual into its rank and push d * \
                   residual / out-degree to each out-neighbour (atomic add); proxies touched \
                   and owned vertices whose residual passes epsilon go to frontier_out",
        sim: residual_push,
        cuda_name: Some("pr_residual_push"),
        remote_args: &[],
    });
}

fn ldbc_push(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let sums = a.values.as_f64_mut()?;
    let rank = a.aux.as_f32()?;
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        let degree = a.degree[v];
        if degree == 0 {
            continue;
        }
        let share = rank[v] / degree as f32;
        let arcs = &a.targets[a.offsets[v] as usize..a.offsets[v + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        a.effects.atomics += arcs.len() as u64;
        for &t in arcs {
            sums[t as usize] += f64::from(share);
        }
    }
    // Every proxy is the target of an owned vertex's arc, and every rank is positive, so
    // every proxy received a partial sum: all of them are forwarded (one pass, not one
    // check per arc).
    for (t, &home) in a.owner.iter().enumerate() {
        if home != a.gpu {
            a.out.push(t as u32);
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

fn ldbc_pull(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let local = a.owner.len();
    if a.reverse_offsets.len() != local + 1 {
        return Err(BackendError::Kernel {
            kernel: "pr_ldbc_pull".into(),
            message: format!(
                "pull without the transpose of the local arcs: {} reverse offsets for {local} \
                 local vertices",
                a.reverse_offsets.len()
            ),
        });
    }
    let rank = a.aux.as_f32()?;
    let shares = match (a.superstep, a.after_fixed.last()) {
        (0, _) => None,
        (_, Some(shares)) if shares.len() == local => Some(shares.as_f32()?),
        _ => {
            return Err(BackendError::Kernel {
                kernel: "pr_ldbc_pull".into(),
                message: "no shares buffer of the local vertices after the packages".into(),
            });
        }
    };
    let sums = a.values.as_f64_mut()?;
    for (t, sum) in sums.iter_mut().enumerate().take(local) {
        let sources =
            &a.reverse_targets[a.reverse_offsets[t] as usize..a.reverse_offsets[t + 1] as usize];
        a.effects.edges += sources.len() as u64;
        *sum = sources
            .iter()
            .map(|&u| {
                let u = u as usize;
                f64::from(shares.map_or_else(|| rank[u] / a.degree[u] as f32, |s| s[u]))
            })
            .sum();
    }
    // As the push: every proxy has an in-arc here, so every one is forwarded.
    for (t, &home) in a.owner.iter().enumerate() {
        if home != a.gpu {
            a.out.push(t as u32);
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

fn ldbc_apply(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let dangling = ctx.scalar_f64(0)?;
    let n = f64::from(ctx.scalar_u32(1)?);
    let damping = ctx.scalar_f64(2)?;
    let gpu = ctx.scalar_u32(3)?;
    if ctx.buffers.len() < FIXED_SLOTS {
        return Err(BackendError::Usage("pr_ldbc_apply: wrong buffer count".into()));
    }
    let (fixed, scratch) = ctx.buffers.split_at_mut(FIXED_SLOTS);
    let [_, _, _, sums, rank, degree, _, next, _, counters, owner, _, _, _] = fixed else {
        unreachable!("split at FIXED_SLOTS");
    };
    let mut shares = match scratch.first_mut() {
        Some(shares) if shares.len() == sums.len() => Some(shares.as_f32_mut()?),
        Some(other) => {
            return Err(BackendError::Kernel {
                kernel: "pr_ldbc_apply".into(),
                message: format!(
                    "the shares buffer after the fixed slots holds {} entries for {} vertices",
                    other.len(),
                    sums.len()
                ),
            });
        }
        None => None,
    };
    let (sums, rank, degree) = (sums.as_f64_mut()?, rank.as_f32_mut()?, degree.as_u32()?);
    let (next, counters, owner) = (next.as_u32_mut()?, counters.as_u64_mut()?, owner.as_u32()?);
    let base = (1.0 - damping) / n + damping * dangling / n;
    let mut next_len = 0;
    let mut local_dangling = 0f64;
    for v in 0..sums.len() {
        if owner[v] != gpu {
            sums[v] = 0.0;
            continue;
        }
        rank[v] = (base + damping * sums[v]) as f32;
        sums[v] = 0.0;
        if degree[v] == 0 {
            local_dangling += f64::from(rank[v]);
        }
        if let Some(shares) = shares.as_deref_mut() {
            shares[v] = if degree[v] == 0 { 0.0 } else { rank[v] / degree[v] as f32 };
        }
        next[next_len] = v as u32;
        next_len += 1;
    }
    let peers = counters.len() - 3;
    counters[1] = next_len as u64;
    counters[reduce_counter(peers)] = local_dangling.to_bits();
    ctx.effects.items = sums.len() as u64;
    ctx.effects.vertices = sums.len() as u64;
    ctx.effects.bytes_read = sums.len() as u64 * 16;
    ctx.effects.bytes_written = sums.len() as u64 * 16;
    Ok(())
}

fn residual_push(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let damping = a.extra as f32;
    let epsilon = a.param;
    let residual = a.values.as_f32_mut()?;
    let HostData::F32(rank) = a.aux else {
        return Err(BackendError::Usage("pr_residual_push: aux must hold f32 ranks".into()));
    };
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        let r = residual[v];
        residual[v] = 0.0;
        rank[v] += r;
        let degree = a.degree[v];
        if degree == 0 {
            continue;
        }
        let share = damping * r / degree as f32;
        let arcs = &a.targets[a.offsets[v] as usize..a.offsets[v + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        a.effects.atomics += arcs.len() as u64;
        for &t in arcs {
            let t = t as usize;
            residual[t] += share;
            if a.owner[t] != a.gpu || f64::from(residual[t]) > epsilon {
                a.out.push(t as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}
