//! Speculative greedy graph colouring (seed 004 sec. 5.3, Algorithms 5 and 6; Gebremedhin
//! and Manne): every vertex takes the smallest colour none of its neighbours has *as it
//! reads them*, which may be stale while neighbours are coloured at the same time; a check
//! then finds the conflicts and the losers colour again. The colouring is of the undirected
//! graph (a directed input is symmetrised). Colours are `u32` from 0; [`UNCOLORED`] marks a
//! vertex not coloured yet.
//!
//! Who recolours on a conflict: the one that loses in [`wins`], a fixed total order that
//! looks random (a mix of the id, ties by id). The papers' pseudocode recolours both ends,
//! which never ends on two adjacent vertices that are always coloured together (both read
//! the other's old colour, both pick the same new one); a total order ends it: the first
//! vertex of every conflict keeps its colour, so each round of conflicts colours at least
//! one vertex for good. Ordering by plain id instead makes chains as long as the graph when
//! ids follow its geometry (a grid numbered row by row took 30 bulk-synchronous rounds of
//! the whole graph at 128 x 128); the mixed order keeps them short, as Jones-Plassmann's
//! random priorities do.
//!
//! - Bulk-synchronous (Alg. 5, the baseline): each superstep `color_assign` colours the
//!   frontier reading the colours as they were at the kernel's start (a snapshot: vertices of
//!   one frontier do not see each other's new colours, as on a GPU), owners broadcast the new
//!   colours to every copy (the assignment combiner, duplicate-all), and `color_check` (the
//!   apply step, when every copy is current) keeps in the next frontier the vertices of this
//!   frontier that lost a conflict. Simulator only: no CUDA kernels.
//! - Atos (Alg. 6, fused): one worker kernel runs both tasks. An item without the tag
//!   ([`crate::runtime::atos::kernels::TAG`], a bit, not a sign, so vertex 0 can carry it)
//!   assigns: it reads its neighbours' colours when it starts (remote ones through peer
//!   loads) and, when it finishes, writes its colour and queues its own check. A tagged item
//!   checks: on a conflict with a neighbour that wins it queues its vertex's assignment
//!   again; on a conflict with one that loses it asks that neighbour's owner to reassign it (a local push, or
//!   a `(vertex, request)` pair into the owner's receive queue). Extra work is assignments
//!   over vertices (seed 004 Table 4).
//!
//! Why the Atos version ends proper: take a conflict `(w, z)` left at the end, `w` the one
//! whose last assignment finished later. Its check started after that, so it read both final
//! colours, saw the conflict and either reassigned `w` or asked `z`'s owner to reassign `z`:
//! a later assignment, a contradiction.

use super::{AtosApp, BspPrimitive, GraphAlgorithm, Needs, VertexResult};
use crate::backend::{BackendError, ElemType, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, Mismatch, ValidationReport};
use crate::graph::{Csr, GraphError, ResultValue};
use crate::runtime::atos::kernels::{
    self as atos_kernels, AtosKernels, AtosOperator, Emit, LocalState, Started, TAG,
};
use crate::runtime::atos::{AppInit, graph::AtosGraph};
use crate::runtime::bsp::{AdvanceArgs, Combiner, kernels::FIXED_SLOTS, reduce_counter};

/// The colour of a vertex not coloured yet.
pub const UNCOLORED: u32 = u32::MAX;

/// Speculative greedy colouring.
#[derive(Clone, Debug, Default)]
pub struct Coloring;

/// Whether vertex `a` keeps its colour against an adjacent `b` of the same colour: a
/// fixed total order that looks random (a 32-bit mix of the id, ties by id), so that
/// conflicts do not chain along ids that follow the graph's geometry.
pub fn wins(a: u32, b: u32) -> bool {
    fn mix(x: u32) -> u32 {
        let mut x = x ^ 0x9E37_79B9;
        x ^= x >> 16;
        x = x.wrapping_mul(0x85EB_CA6B);
        x ^= x >> 13;
        x = x.wrapping_mul(0xC2B2_AE35);
        x ^ (x >> 16)
    }
    (mix(a), a) < (mix(b), b)
}

/// The smallest colour not in `taken` (`taken[c]` marks colour `c`), which holds the
/// colours of `taken.len() - 1` neighbours or fewer, so the answer is below its length.
fn smallest_free(taken: &[bool]) -> u32 {
    taken.iter().position(|&t| !t).unwrap_or(taken.len()) as u32
}

/// Marks the colours of `neighbours` (as `colour_of` reads them) in a table of `deg + 1`.
fn forbidden(v: u32, neighbours: &[u32], mut colour_of: impl FnMut(u32) -> u32) -> Vec<bool> {
    let mut taken = vec![false; neighbours.len() + 1];
    for &u in neighbours {
        if u == v {
            continue;
        }
        let c = colour_of(u) as usize;
        if let Some(slot) = taken.get_mut(c) {
            *slot = true;
        }
    }
    taken
}

/// A colouring's check as a validation report: conflicts are the mismatches (vertex `u`,
/// expected "not `c`" because of neighbour `v`), uncoloured vertices are problems, and the
/// rule names the colours used.
pub fn coloring_validation(graph: &Csr, colors: &[u32]) -> Result<ValidationReport, GraphError> {
    let report = reference::check_coloring(graph, colors)?;
    let uncolored = colors.iter().filter(|&&c| c == UNCOLORED).count();
    let mut problems = Vec::new();
    if uncolored > 0 {
        problems.push(format!("{uncolored} vertices were never coloured"));
    }
    Ok(ValidationReport {
        what: "colouring".into(),
        rule: format!(
            "proper: no edge joins two equal colours; {} colours used",
            report.colors_used
        ),
        checked: u64::from(graph.num_vertices()),
        mismatches: report.conflicts,
        first_mismatches: report
            .first_conflicts
            .iter()
            .map(|&(u, v, c)| Mismatch {
                vertex: u64::from(u),
                file_id: None,
                expected: format!("a colour other than {c} (neighbour {v} has it)"),
                actual: c.to_string(),
            })
            .collect(),
        problems,
    })
}

impl GraphAlgorithm for Coloring {
    fn name(&self) -> &'static str {
        "color"
    }
    /// The undirected graph: a colouring constrains both ends of every arc.
    fn needs(&self) -> Needs {
        Needs { undirected: true, ..Needs::default() }
    }
    /// A proper colouring ([`reference::check_coloring`]); any number of colours.
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        coloring_validation(graph, result.values)
    }
    fn result_values(&self, result: VertexResult<'_>) -> Vec<ResultValue> {
        result.values.iter().map(|&c| ResultValue::Int(i64::from(c))).collect()
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
    fn atos(&self) -> Option<Box<dyn AtosApp>> {
        Some(Box::new(self.clone()))
    }
}

// ---------------------------------------------------------------------------------------
// Bulk-synchronous (Alg. 5).

impl BspPrimitive for Coloring {
    fn name(&self) -> &'static str {
        "color"
    }
    fn advance_kernel(&self) -> &'static str {
        "color_assign"
    }
    fn apply_kernel(&self) -> Option<&'static str> {
        Some("color_check")
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    /// Owners broadcast their vertices' new colours; copies take them.
    fn combiner(&self) -> Combiner {
        Combiner::Assign
    }
    fn needs_undirected(&self) -> bool {
        true
    }
    fn initial_value(&self, _v: u32, _n: u32) -> u32 {
        UNCOLORED
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
}

fn bsp_assign(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let mut a = AdvanceArgs::from_context(ctx)?;
    let colors = a.values.as_u32_mut()?;
    // Read every frontier vertex's neighbours first (the snapshot), then write.
    let mut chosen = Vec::with_capacity(a.frontier_len);
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i];
        let arcs = &a.targets[a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        chosen.push((v, smallest_free(&forbidden(v, arcs, |u| colors[u as usize]))));
    }
    for (v, c) in chosen {
        colors[v as usize] = c;
        a.out.push(v);
    }
    a.out.finish(a.counters, a.effects);
    Ok(())
}

/// Global ids are local ids under duplicate-all (the runtime forces it for the assignment
/// combiner), so [`wins`] means the same on every GPU.
fn bsp_check(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let [offsets, targets, _, colors, _, _, _, frontier, _, counters, ..] =
        &mut ctx.buffers[..FIXED_SLOTS]
    else {
        return Err(BackendError::Usage("color_check: wrong buffer count".into()));
    };
    let (offsets, targets) = (offsets.as_u64()?, targets.as_u32()?);
    let (colors, frontier, counters) =
        (colors.as_u32()?, frontier.as_u32_mut()?, counters.as_u64_mut()?);
    let len = (counters[1] as usize).min(frontier.len());
    let mut kept = 0;
    let mut edges = 0u64;
    for i in 0..len {
        let v = frontier[i];
        let arcs = &targets[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
        edges += arcs.len() as u64;
        let c = colors[v as usize];
        if arcs.iter().any(|&u| wins(u, v) && colors[u as usize] == c) {
            frontier[kept] = v;
            kept += 1;
        }
    }
    let peers = counters.len() - 3;
    counters[1] = kept as u64;
    counters[reduce_counter(peers)] = 0f64.to_bits();
    ctx.effects.items = len as u64;
    ctx.effects.edges = edges;
    ctx.effects.bytes_read = edges * 8 + len as u64 * 4;
    ctx.effects.bytes_written = kept as u64 * 4;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Atos (Alg. 6, fused).

/// What a reassignment request carries (any word: the owner reassigns the vertex).
const REASSIGN: u32 = 0;

/// `flags` bit: an assignment of the vertex is queued and not started (so requests and
/// lost checks queue it once: the queue never holds more than two items per vertex).
const ASSIGN_QUEUED: u32 = 1;
/// `flags` bit: a check of the vertex is queued and not started.
const CHECK_QUEUED: u32 = 2;

/// Sets `bit` of `v`'s flags; whether it was clear (the task is to be queued).
fn mark(st: &mut LocalState<'_>, v: u32, bit: u32) -> bool {
    match st.flags.get_mut(v as usize) {
        Some(f) if *f & bit == 0 => {
            *f |= bit;
            true
        }
        _ => false,
    }
}

impl AtosApp for Coloring {
    fn label(&self) -> &'static str {
        "colouring"
    }
    fn kernels(&self) -> AtosKernels {
        ColoringAtos::KERNELS
    }
    fn reads_peers(&self) -> bool {
        true
    }
    fn init(&self, ag: &AtosGraph, g: u32) -> AppInit {
        let n = ag.local_vertices(g) as usize;
        AppInit {
            value: vec![UNCOLORED; n],
            aux: None,
            flags: Some(vec![ASSIGN_QUEUED; n]),
            items: (0..n as u32).collect(),
        }
    }
    /// Every vertex assigned once.
    fn ideal_visits(&self, graph: &Csr) -> (u64, &'static str) {
        (u64::from(graph.num_vertices()), "vertices")
    }
}

/// Colouring's Atos operator (`kernels/atos.cu` has the CUDA functor).
pub struct ColoringAtos;

impl AtosOperator for ColoringAtos {
    const KERNELS: AtosKernels = AtosKernels { worker: "atos_color_worker", wide_worker: None };
    const ON_CUDA: bool = true;
    const REMOTE_MIN: bool = false;
    fn start(st: &mut LocalState<'_>, item: u32) -> Option<Started> {
        let v = item & !TAG;
        let base = st.base();
        let neighbours = st.neighbors(v).to_vec();
        let arcs = neighbours.len() as u64;
        let bit = if item & TAG != 0 { CHECK_QUEUED } else { ASSIGN_QUEUED };
        if let Some(f) = st.flags.get_mut(v as usize) {
            *f &= !bit;
        }
        if item & TAG != 0 {
            return Some(Started { carry: 0, arcs, visit: false });
        }
        let taken = forbidden(base + v, &neighbours, |u| st.value_of(u));
        st.counts.bytes_read += arcs * 8;
        Some(Started { carry: smallest_free(&taken), arcs, visit: true })
    }
    fn finish(st: &mut LocalState<'_>, item: u32, carry: u32, emit: &mut Emit) {
        let v = item & !TAG;
        if item & TAG == 0 {
            if let Some(slot) = st.value.get_mut(v as usize) {
                *slot = carry;
            }
            if mark(st, v, CHECK_QUEUED) {
                emit.push(v | TAG, 0);
            }
            return;
        }
        let me = st.base() + v;
        let c = st.value.get(v as usize).copied().unwrap_or(UNCOLORED);
        let neighbours = st.neighbors(v).to_vec();
        let mut losers = Vec::new();
        for u in neighbours {
            if u == me || st.value_of(u) != c {
                continue;
            }
            if wins(u, me) {
                // A neighbour that wins has our colour: we colour again (and the others then need
                // nothing).
                if mark(st, v, ASSIGN_QUEUED) {
                    emit.push(v, 0);
                }
                return;
            }
            losers.push(u);
        }
        for u in losers {
            emit.update(u, REASSIGN);
        }
    }
    /// A reassignment request for own vertex `v`: queue its assignment unless one is queued.
    fn apply(st: &mut LocalState<'_>, v: u32, _value: u32) -> Option<u32> {
        mark(st, v, ASSIGN_QUEUED).then_some(0)
    }
    fn priority(_st: &LocalState<'_>, _item: u32) -> u32 {
        0
    }
}

/// Registers the colouring kernels (bulk-synchronous assign and check, the Atos worker).
pub fn register(registry: &mut KernelRegistry) {
    atos_kernels::register_app::<ColoringAtos>(registry);
    registry.register(KernelDef {
        name: "color_assign",
        contract: "for every frontier vertex, the smallest colour (u32 from 0; u32::MAX is \
                   uncoloured) none of its neighbours has as the values were at the kernel's \
                   start; written to values, the vertex appended to frontier_out",
        sim: bsp_assign,
        cuda_name: None,
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "color_check",
        contract: "apply step (every copy current): of the owned vertices the split left in the \
                   next frontier (slot 7, counters[1]: this superstep's assignments), keep those \
                   with a neighbour that wins (coloring::wins on global ids) and equal colour; \
                   reduction 0",
        sim: bsp_check,
        cuda_name: None,
        remote_args: &[],
    });
}
