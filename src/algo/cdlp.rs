//! Community detection by label propagation (CDLP), the LDBC Graphalytics definition: every
//! vertex starts with its own id as its label; each iteration, synchronously, a vertex takes
//! the most frequent label among its neighbours, counting in- and out-neighbours (a
//! neighbour reached by arcs both ways counts twice), the smallest label on a tie; a vertex
//! without neighbours keeps its label. A fixed number of iterations (`.properties`
//! `cdlp.max-iterations`, `--iterations`); stopping early when nothing changes gives the
//! same labels, as the labels are then a fixed point.
//!
//! Labels are dense ids, which order as the file's ids do (loaders number vertices in
//! ascending file-id order), so "smallest label" is the specification's.
//!
//! On the bulk-synchronous runtime: the graph is the neighbour multiset `G'` (every arc
//! `u -> v` both ways, duplicates kept: [`neighbour_multiset`]), so a vertex's out-arcs in
//! `G'` are exactly the neighbours it counts. Each owned vertex keeps a label-count hash
//! table (2 slots per arc, in scratch). `cdlp_apply` (after the merge, when every copy of
//! every label is current) fills the tables from the neighbours' labels; the next
//! superstep's `cdlp_advance` takes each table's most frequent label, empties it, and
//! emits the vertices whose label changed; owners broadcast them, and the assignment
//! combiner overwrites the copies (duplicate-all and broadcast, as direction-optimizing
//! BFS). Superstep 0 only builds the first tables, so a run of `I` iterations takes `I + 1`
//! supersteps.

use super::{BspPrimitive, GraphAlgorithm, VertexResult};
use crate::backend::{BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{BuildOptions, Csr, GraphError, ResultValue};
use crate::runtime::bsp::{AdvanceArgs, Combiner, kernels::FIXED_SLOTS, reduce_counter};
use std::borrow::Cow;

/// CDLP with a fixed number of iterations.
#[derive(Clone, Debug)]
pub struct Cdlp {
    /// Iterations.
    pub iterations: u32,
}

/// The neighbour multiset of every vertex as out-arcs: for a directed graph every arc
/// `u -> v` becomes `u -> v` and `v -> u` (both kept when both arcs exist, so such a
/// neighbour counts twice); an undirected graph already stores both arcs of every edge.
pub fn neighbour_multiset(graph: &Csr) -> Cow<'_, Csr> {
    if !graph.is_directed() {
        return Cow::Borrowed(graph);
    }
    let mut edges = Vec::with_capacity(2 * graph.num_arcs() as usize);
    for u in 0..graph.num_vertices() {
        for &v in graph.neighbors(u) {
            edges.push((u, v));
            edges.push((v, u));
        }
    }
    Cow::Owned(
        Csr::from_edges(graph.num_vertices(), &edges, None, true, BuildOptions::default())
            .expect("arcs of a valid CSR are in range"),
    )
}

impl GraphAlgorithm for Cdlp {
    fn name(&self) -> &'static str {
        "cdlp"
    }
    /// The neighbour multiset ([`neighbour_multiset`]).
    fn prepare<'g>(&self, graph: &'g Csr) -> Cow<'g, Csr> {
        neighbour_multiset(graph)
    }
    /// Labels compared exactly with the sequential reference (Graphalytics validates CDLP
    /// by exact match).
    fn validate(
        &self,
        graph: &Csr,
        result: VertexResult<'_>,
    ) -> Result<ValidationReport, GraphError> {
        let expected = reference::cdlp_labels(graph, self.iterations);
        Ok(compare_exact("cdlp labels", &expected, result.values))
    }
    /// Labels are vertex ids: written as the file's id of that vertex.
    fn result_values(&self, result: VertexResult<'_>) -> Vec<ResultValue> {
        result.values.iter().map(|&l| ResultValue::Vertex(l)).collect()
    }
    fn bsp(&self) -> Option<Box<dyn BspPrimitive>> {
        Some(Box::new(self.clone()))
    }
}

impl BspPrimitive for Cdlp {
    fn name(&self) -> &'static str {
        "cdlp"
    }
    fn advance_kernel(&self) -> &'static str {
        "cdlp_advance"
    }
    fn apply_kernel(&self) -> Option<&'static str> {
        Some("cdlp_apply")
    }
    fn value_elem(&self) -> ElemType {
        ElemType::U32
    }
    /// Owners broadcast their new labels; copies take them.
    fn combiner(&self) -> Combiner {
        Combiner::Assign
    }
    fn initial_value(&self, v: u32, _n: u32) -> u32 {
        v
    }
    fn initially_active(&self, _v: u32) -> bool {
        true
    }
    /// Superstep 0 builds the first tables; each later one is an iteration.
    fn max_supersteps(&self) -> Option<u32> {
        Some(self.iterations.saturating_add(1))
    }
    /// The label-count tables: keys (label + 1, 0 = empty) and counts, 2 slots per arc.
    fn scratch(&self, _local: u32, local_arcs: usize) -> Vec<(ElemType, usize, &'static str)> {
        vec![
            (ElemType::U32, 2 * local_arcs, "cdlp table keys"),
            (ElemType::U32, 2 * local_arcs, "cdlp table counts"),
        ]
    }
}

/// Registers `cdlp_advance` and `cdlp_apply`.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "cdlp_advance",
        contract: "at superstep 0 nothing (the tables are not built yet); after it, for every \
                   frontier vertex v: the most frequent label of its table (slots 2 \
                   offsets[v]..2 offsets[v+1] of the keys (label + 1, 0 empty) and counts \
                   scratch, the last two buffers), the smallest on a tie; the table emptied; \
                   a vertex with no arcs keeps its label; a changed label is written to \
                   values and the vertex goes to frontier_out",
        sim: advance,
        cuda_name: Some("cdlp_advance"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "cdlp_apply",
        contract: "for every owned vertex v and arc v -> u, count values[u] in v's table \
                   (open addressing from slot (label * 0x9E3779B1) mod 2 deg(v), linear \
                   probing); next frontier = every owned vertex; reduction 0; scalars: \
                   reduction f64, n u32, gpu u32; buffers: the fixed slots, keys, counts",
        sim: apply,
        cuda_name: Some("cdlp_apply"),
        remote_args: &[],
    });
}

/// The first slot a label probes in a table of `capacity` slots.
fn home_slot(label: u32, capacity: u64) -> u64 {
    (u64::from(label) * 0x9E37_79B1) % capacity
}

/// Takes the last two buffers of `ctx` (the tables) out as `u32` vectors.
fn take_tables(ctx: &mut KernelContext<'_>) -> Result<(Vec<u32>, Vec<u32>), BackendError> {
    let len = ctx.buffers.len();
    if len < FIXED_SLOTS + 2 {
        return Err(BackendError::Kernel {
            kernel: ctx.kernel.into(),
            message: format!("expects the fixed slots and two tables, got {len} buffers"),
        });
    }
    let keys = std::mem::replace(&mut ctx.buffers[len - 2], HostData::U32(Vec::new()));
    let counts = std::mem::replace(&mut ctx.buffers[len - 1], HostData::U32(Vec::new()));
    match (keys, counts) {
        (HostData::U32(k), HostData::U32(c)) if k.len() == c.len() => Ok((k, c)),
        _ => Err(BackendError::Kernel {
            kernel: ctx.kernel.into(),
            message: "the tables must be two u32 buffers of one length".into(),
        }),
    }
}

fn put_tables(ctx: &mut KernelContext<'_>, keys: Vec<u32>, counts: Vec<u32>) {
    let len = ctx.buffers.len();
    ctx.buffers[len - 2] = HostData::U32(keys);
    ctx.buffers[len - 1] = HostData::U32(counts);
}

fn advance(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let (mut keys, mut counts) = take_tables(ctx)?;
    let mut a = AdvanceArgs::from_context(ctx)?;
    if a.superstep > 0 {
        let labels = a.values.as_u32_mut()?;
        for i in 0..a.frontier_len {
            let v = a.frontier_in[i] as usize;
            let slots = 2 * a.offsets[v] as usize..2 * a.offsets[v + 1] as usize;
            a.effects.edges += (slots.len() / 2) as u64;
            // (count, label): more first, then the smaller label.
            let mut best: Option<(u32, u32)> = None;
            for s in slots {
                if keys[s] == 0 {
                    continue;
                }
                let candidate = (counts[s], keys[s] - 1);
                if best
                    .is_none_or(|(c, l)| candidate.0 > c || (candidate.0 == c && candidate.1 < l))
                {
                    best = Some(candidate);
                }
                keys[s] = 0;
                counts[s] = 0;
            }
            if let Some((_, label)) = best
                && label != labels[v]
            {
                labels[v] = label;
                a.out.push(v as u32);
            }
        }
    }
    a.out.finish(a.counters, a.effects);
    put_tables(ctx, keys, counts);
    Ok(())
}

fn apply(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let gpu = ctx.scalar_u32(2)?;
    let (mut keys, mut counts) = take_tables(ctx)?;
    let Some([offsets, targets, _, values, _, _, _, next, _, counters, owner, _, _, _]) =
        ctx.buffers.get_mut(..FIXED_SLOTS)
    else {
        return Err(BackendError::Usage("cdlp_apply: wrong buffer count".into()));
    };
    let (offsets, targets, labels) = (offsets.as_u64()?, targets.as_u32()?, values.as_u32()?);
    let (next, counters, owner) = (next.as_u32_mut()?, counters.as_u64_mut()?, owner.as_u32()?);
    if keys.len() as u64 != 2 * offsets.last().copied().unwrap_or(0) {
        return Err(BackendError::Kernel {
            kernel: "cdlp_apply".into(),
            message: format!("tables of {} slots for {} arcs", keys.len(), targets.len()),
        });
    }
    let mut next_len = 0;
    let mut arcs = 0u64;
    for v in 0..labels.len() {
        if owner[v] != gpu {
            continue;
        }
        next[next_len] = v as u32;
        next_len += 1;
        let (first, end) = (offsets[v], offsets[v + 1]);
        let (base, capacity) = (2 * first, 2 * (end - first));
        for &u in &targets[first as usize..end as usize] {
            let label = labels[u as usize];
            let mut h = home_slot(label, capacity);
            loop {
                let s = (base + h) as usize;
                if keys[s] == 0 || keys[s] == label + 1 {
                    keys[s] = label + 1;
                    counts[s] += 1;
                    break;
                }
                h = if h + 1 == capacity { 0 } else { h + 1 };
            }
        }
        arcs += end - first;
    }
    let peers = counters.len() - 3;
    counters[1] = next_len as u64;
    counters[reduce_counter(peers)] = 0f64.to_bits();
    ctx.effects.items = labels.len() as u64;
    ctx.effects.vertices = labels.len() as u64;
    ctx.effects.edges = arcs;
    ctx.effects.atomics = arcs;
    ctx.effects.bytes_read = arcs * 16;
    ctx.effects.bytes_written = arcs * 8 + next_len as u64 * 4;
    put_tables(ctx, keys, counts);
    Ok(())
}
