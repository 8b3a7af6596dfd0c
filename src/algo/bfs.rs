//! Breadth-first search: levels from a source (unreached vertices keep `u32::MAX`).

use super::{AtosApp, BspPrimitive, GraphAlgorithm, GrouteOperators, VertexResult};
use crate::backend::{BackendError, ElemType, HostData, KernelContext, KernelDef, KernelRegistry};
use crate::graph::reference::{self, ValidationReport, compare_exact};
use crate::graph::{Csr, GraphError};
use crate::runtime::bsp::{AdvanceArgs, Combiner, sim_levels};
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
    fn atos(&self) -> Option<Box<dyn AtosApp>> {
        Some(Box::new(self.clone()))
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
    fn routed_advance_kernel(&self) -> Option<&'static str> {
        Some("bfs_advance_routed")
    }
    fn uniform_value(&self, superstep: u32) -> Option<u32> {
        Some(superstep + 1)
    }
    fn loop_kernel(&self) -> Option<&'static str> {
        Some("bfs_levels")
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
    fn auto_priority_delta(&self) -> Option<u64> {
        Some(AUTO_PRIORITY_DELTA_LEVELS)
    }
    /// A road graph's BFS is thousands of levels of a few hundred vertices: one H200 ran
    /// luxembourg_osm in 13.4 ms fused against 63.1 ms with a launch per batch, the 4600^2
    /// road grid in 69.1 ms against 310.4 ms (reports/gpu_bench.md, 2026-11-23). On R-MAT 22
    /// a launch per batch wins (4.68 against 8.52 ms).
    fn fused_on_road_like(&self) -> bool {
        true
    }
    /// R-MAT 22 from the hub on 4 x H200 (c82): 289.9 ms with a launch per batch and the
    /// ring's end-of-launch send at 4 GPUs (5.2 on one), 15.5 ms fused with the
    /// asynchronous send; 27.4 against 9.8 ms at 2 GPUs.
    fn fused_async_on_several_gpus(&self) -> bool {
        true
    }
}

/// The soft-priority step of a BFS on several GPUs unless told otherwise. On the simulated
/// 4600 x 4600 road grid over 2 METIS parts (`grid2d:w=4600,h=4600,drop=0.1`, dgx1-v100,
/// fused): off, 273.9M work items and 257 ms; 16 levels, 21.16M items, 287 threshold
/// raises, 33.8 ms; 64 levels, 21.19M items, 71 raises, 25.0 ms; 256 levels, 21.60M items,
/// 17 raises, 25.2 ms; 1024 levels, 30.5M items (one GPU: 21.16M items, 23.8 ms). On
/// luxembourg_osm and the 1000 x 1000 grid 256 is faster than 64 at 2 and 4 GPUs (3.30 vs
/// 3.37 ms, 4.34 vs 4.86 ms at 2). On two real H100s 64 wins: the 4600 grid 110.3 ms at 64
/// (call c11; 71 raises, about 300 us of idle GPU each) against 119.6 at 256 (c13; 17 raises,
/// 21.62M items); luxembourg 18.8 ms at 64, 19.9 at 256, 20.6 at 1024 (c13). One GPU: 69.2
/// and 13.9 ms.
pub const AUTO_PRIORITY_DELTA_LEVELS: u64 = 64;

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

/// Registers `bfs_advance`, BFS's worklist kernels and its Atos worker.
pub fn register(registry: &mut KernelRegistry) {
    register_app::<BfsWorklist>(registry);
    atos_kernels::register_app::<BfsAtos>(registry);
    crate::runtime::atos::tiles::register(registry, BFS_TILES);
    crate::runtime::atos::tiles::register_peer(registry, BFS_TILES_PEER);
    registry.register(KernelDef {
        name: "bfs_advance",
        contract: "for every frontier vertex, label unvisited out-neighbours with superstep + 1 \
                   and append them (once) to frontier_out",
        sim: advance,
        cuda_name: Some("bfs_advance"),
        remote_args: &crate::runtime::bsp::kernels::TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "bfs_advance_routed",
        contract: "bfs_advance with the superstep's split done at discovery (a label is set \
                   once, with its final level): an owned vertex reached goes to frontier_out \
                   (length counters[1], marker stamp + 1), a proxy only into its owner's \
                   package as (owner_id, level) (length counters[2 + owner]), or with bits \
                   set only bit owner_id of its owner's bitmap (counters[2 + owner] still \
                   counts them); buffers: the 14 bsp slots, then one send package per peer, \
                   then (bits) one bitmap (u32 words) per peer; scalars: the advance's, then \
                   peers u32, bits u32",
        sim: advance_routed,
        cuda_name: Some("bfs_advance_routed"),
        remote_args: &crate::runtime::bsp::kernels::TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "bfs_levels",
        contract: "the bsp device-side loop (BspPrimitive::loop_kernel): bfs_advance's \
                   supersteps one after another, the output of one the input of the next \
                   (frontier_in and frontier_out alternate), until the output is empty, has \
                   more than most_vertices vertices or more than most_arcs out-arcs, or \
                   max_supersteps ran; buffers: the 14 bsp slots, control (u64), log (u64, \
                   mapped); scalars: frontier_len u64, superstep u32, max_supersteps u32, \
                   most_vertices u64, most_arcs u64",
        sim: levels_loop,
        cuda_name: Some("bfs_levels_fused"),
        remote_args: &[],
    });
}

/// The simulator's `bfs_levels`: BFS's advance, superstep after superstep.
fn levels_loop(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    sim_levels(ctx, "bfs_levels", false, false, |labels, _, t, _, level| {
        let unreached = labels[t] == UNREACHED;
        if unreached {
            labels[t] = level;
        }
        unreached
    })
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

/// The simulator's `bfs_advance_routed`.
fn advance_routed(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let peers = ctx.scalar_u32(6)? as usize;
    let bits = ctx.scalar_u32(7)? != 0;
    let stamp = ctx.scalar_u32(1)?;
    let kernel = ctx.kernel;
    let mut a = AdvanceArgs::from_context(ctx)?;
    let level = a.superstep + 1;
    let labels = a.values.as_u32_mut()?;
    let wanted = if bits { 2 * peers } else { peers };
    let Some(packages) = a.after_fixed.get_mut(..wanted) else {
        return Err(BackendError::Kernel {
            kernel: kernel.into(),
            message: format!(
                "expects a send package{} for each of its {peers} peers",
                if bits { " and a bitmap" } else { "" }
            ),
        });
    };
    // With bits, the bitmaps (after the packages) take the proxies.
    let packages = if bits { &mut packages[peers..] } else { packages };
    let mut packages: Vec<&mut Vec<u32>> =
        packages.iter_mut().map(HostData::as_u32_mut).collect::<Result<_, _>>()?;
    let mut sent = vec![0usize; peers];
    for i in 0..a.frontier_len {
        let v = a.frontier_in[i] as usize;
        let arcs = &a.targets[a.offsets[v] as usize..a.offsets[v + 1] as usize];
        a.effects.edges += arcs.len() as u64;
        for &t in arcs {
            let ti = t as usize;
            if labels[ti] != UNREACHED {
                continue;
            }
            labels[ti] = level;
            let home = a.owner[ti] as usize;
            if home == a.gpu as usize {
                a.out.append_marked(t, stamp + 1);
                continue;
            }
            let package = packages.get_mut(home).ok_or_else(|| BackendError::Kernel {
                kernel: kernel.into(),
                message: format!("vertex {t} is owned by gpu {home}, beyond its {peers} peers"),
            })?;
            if bits {
                let id = a.owner_id[ti];
                let Some(word) = package.get_mut((id >> 5) as usize) else {
                    return Err(BackendError::Kernel {
                        kernel: kernel.into(),
                        message: format!(
                            "bitmap for gpu {home} has no bit {id} ({} words)",
                            package.len()
                        ),
                    });
                };
                *word |= 1 << (id & 31);
                sent[home] += 1;
                continue;
            }
            let at = 2 * sent[home];
            let Some(pair) = package.get_mut(at..at + 2) else {
                return Err(BackendError::Kernel {
                    kernel: kernel.into(),
                    message: format!(
                        "package for gpu {home} overflows its {} slots",
                        package.len()
                    ),
                });
            };
            pair.copy_from_slice(&[a.owner_id[ti], level]);
            sent[home] += 1;
        }
    }
    let moved = sent.iter().sum::<usize>() as u64;
    a.effects.bytes_written += if bits { 4 * moved } else { 8 * moved };
    a.effects.outputs += moved;
    // Each labelled vertex's owner, and each proxy's id on it: scattered topology reads.
    let sector = crate::runtime::bsp::kernels::SECTOR_BYTES;
    a.effects.peer_read(10, sector * (moved + a.out.len() as u64));
    a.effects.peer_read(11, sector * moved);
    if a.counters.len() < 2 + peers {
        return Err(BackendError::Kernel {
            kernel: kernel.into(),
            message: format!("its counter block has no room for {peers} package lengths"),
        });
    }
    a.counters[0] = 0;
    for (p, &n) in sent.iter().enumerate() {
        a.counters[2 + p] = n as u64;
    }
    a.out.finish_at(a.counters, 1, a.effects);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Atos (seeds 003 and 004): speculative BFS (seed 004 Alg. 2). A task is a vertex; it
// reads its level when it starts and relaxes its out-neighbours with atomic min when it
// finishes, pushing every neighbour it improved. Tasks at different levels run at once, so
// a vertex may be expanded with a level later lowered: the re-expansion is the extra work.
// A remote neighbour gets a remote atomic min and is pushed to its owner's receive queue on
// improvement (seed 003 Listing 5); through the aggregator it travels as `(vertex, level)`.
// Either way only after the remote filter: a level not below one this GPU already sent
// that vertex stays home (Atos's own BFS keeps a local copy of every level for this).

use crate::runtime::atos::kernels::{
    self as atos_kernels, AtosKernels, AtosOperator, Emit, LocalState, Started,
};
use crate::runtime::atos::{AppInit, graph::AtosGraph};

impl AtosApp for Bfs {
    fn label(&self) -> &'static str {
        "BFS"
    }
    fn kernels(&self) -> AtosKernels {
        BfsAtos::KERNELS
    }
    fn tile_kernel(&self) -> Option<&'static str> {
        Some(BFS_TILES)
    }
    fn peer_tile_kernel(&self) -> Option<&'static str> {
        Some(BFS_TILES_PEER)
    }
    fn init(&self, ag: &AtosGraph, g: u32) -> AppInit {
        let n = ag.local_vertices(g) as usize;
        let mut value = vec![UNREACHED; n];
        let mut items = Vec::new();
        let s = ag.new_of[self.source as usize];
        let (lo, hi) = (ag.bases[g as usize], ag.bases[g as usize + 1]);
        if (lo..hi).contains(&s) {
            value[(s - lo) as usize] = 0;
            items.push(s - lo);
        }
        // On several GPUs, the remote filter: the smallest level sent to every vertex.
        let flags = (ag.gpus() > 1).then(|| vec![UNREACHED; ag.old_of.len()]);
        AppInit { value, aux: None, flags, items }
    }
    /// Each reachable vertex expanded once (a BSP or sequential BFS's work).
    fn ideal_visits(&self, graph: &Csr) -> (u64, &'static str) {
        let levels = reference::bfs_levels(graph, self.source).unwrap_or_default();
        (levels.iter().filter(|&&l| l != UNREACHED).count() as u64, "reachable vertices")
    }
}

/// BFS's on-chip tile kernel (`runtime::atos::tiles`; CUDA: `kernels/atos.cu`).
pub const BFS_TILES: &str = "atos_bfs_tiles";

/// BFS's on-chip tile kernel on several GPUs (`runtime::atos::tiles`; CUDA: `kernels/atos.cu`).
pub const BFS_TILES_PEER: &str = "atos_bfs_tiles_peer";

/// BFS's Atos operator (`kernels/atos.cu` has the CUDA functor).
pub struct BfsAtos;

impl AtosOperator for BfsAtos {
    const KERNELS: AtosKernels =
        AtosKernels { worker: "atos_bfs_worker", wide_worker: Some("atos_bfs_worker_wide") };
    const ON_CUDA: bool = true;
    const REMOTE_MIN: bool = true;
    fn start(st: &mut LocalState<'_>, item: u32) -> Option<Started> {
        let level = *st.value.get(item as usize)?;
        (level != UNREACHED).then(|| Started {
            carry: level,
            arcs: st.neighbors(item).len() as u64,
            visit: true,
        })
    }
    fn finish(st: &mut LocalState<'_>, item: u32, carry: u32, emit: &mut Emit) {
        let next = carry.saturating_add(1);
        for &t in st.neighbors(item) {
            emit.update(t, next);
        }
    }
    fn apply(st: &mut LocalState<'_>, v: u32, value: u32) -> Option<u32> {
        let slot = st.value.get_mut(v as usize)?;
        (value < *slot).then(|| {
            *slot = value;
            value
        })
    }
    fn priority(st: &LocalState<'_>, item: u32) -> u32 {
        st.value.get(item as usize).copied().unwrap_or(UNREACHED)
    }
}
