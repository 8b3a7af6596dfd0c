//! The bulk-synchronous multi-GPU runtime of Gunrock's multi-GPU framework (seed 002
//! section III), the baseline every other runtime is measured against.
//!
//! Per superstep, on every GPU: the algorithm's unmodified single-GPU advance kernel turns
//! the input frontier into an output frontier; the framework splits that frontier into the
//! local next frontier and per-peer packages of `(vertex, value)`, pushes the packages to
//! their peers (selective: to the owner only; broadcast: to everyone), merges what arrives
//! with the algorithm's combiner, and all-reduces the frontier sizes on the host: the run
//! stops when every frontier is empty (global stop condition) or after the algorithm's
//! superstep limit. The packages travel as the paper's copies (the host reads their counts
//! first) or, where every pair of GPUs has peer access, by peer reads: each receiver's merge
//! waits for its senders' splits on stream events and reads their packages where they lie,
//! so a superstep costs one host round trip instead of three ([`Exchange`]).

mod block_path;
mod device_loop;
pub mod kernels;
mod primitive;
mod subgraph;
mod upload;

pub use block_path::{BlockPath, EXPAND_BLOCK_THREADS, HUGE_VERTEX_ARCS, block_path};
pub use device_loop::{
    DEFAULT_LOOP_FRONTIER, LOOP_ARCS_PER_VERTEX, LOOP_CONTROL_WORDS, LOOP_LEVELS, WaveValues,
    sim_levels,
};
pub use kernels::{Combiner, reduce_counter};
pub use primitive::BspPrimitive;
pub use subgraph::{Duplication, Subgraph, build_subgraphs, build_subgraphs_with_all_arcs};

use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, Completion, CompletionKind, DeviceId, ElemType,
    EventId, HostData, KernelContext, KernelEffects, Launch, RemotePath, Scalar, StreamId,
    StreamPriority, Token,
};
use crate::graph::Csr;
use crate::runtime::{RuntimeError, wait_all};
pub(crate) use device_loop::{DeviceLoop, LoopFrontier};
use kernels::FIXED_SLOTS;
pub(crate) use upload::{PHASE_UPLOAD, Start, UploadedSlots, upload_slots, write_upload};

/// Where frontier updates are sent (seed 002 section III-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Communication {
    /// Only to the GPU that owns (or proxies) the vertex.
    Selective,
    /// The whole output frontier to every peer (requires duplicate-all).
    Broadcast,
}

/// How the packages of a superstep reach their receivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Exchange {
    /// Peer reads where every pair of GPUs has a peer path (and at most
    /// [`kernels::MERGE_PEER_MAX_PEERS`] GPUs), copies otherwise.
    Auto,
    /// The host reads every sender's package counts, copies the packages to the receivers
    /// and merges them there: three host round trips a superstep (seed 002's exchange).
    Copies,
    /// Every receiver's merge waits for its senders' splits (stream events) and reads their
    /// packages and counts through peer access: one host round trip a superstep. Refused
    /// where a pair lacks peer access.
    PeerReads,
}

/// Where a superstep's output is split into the next local frontier and the packages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Split {
    /// In the advance itself where the primitive has a routed advance
    /// ([`BspPrimitive::routed_advance_kernel`]; BFS) and packages go only to owners: no
    /// output frontier of proxies and no split pass. Otherwise as `kernel`.
    InAdvance,
    /// A split kernel after every advance (seed 002's scheme).
    Kernel,
}

/// What a routed advance sends its owners on several GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PackageForm {
    /// `(id on the owner, value)` pairs, 8 bytes per vertex sent.
    Pairs,
    /// One bit per local vertex of the owner (a primitive whose superstep sends one value:
    /// BFS), the bitmap read and cleared by the owner's merge: 3.3x fewer bytes on R-MAT 24
    /// at 2 GPUs, but slower on NVLink H100s (c24: 11.98 ms against 9.93 with pairs; the
    /// widest level's advance takes 8.07 ms against 6.49 for its random atomic ORs, and the
    /// merge is bound by its per-vertex atomics either way: 0.55 ms against 0.47).
    Bits,
}

/// Options of a bulk-synchronous run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BspOptions {
    /// Vertex duplication strategy.
    pub duplication: Duplication,
    /// Communication strategy.
    pub communication: Communication,
    /// Stop after this many supersteps (a safety net; algorithms have their own limits).
    pub max_supersteps: u32,
    /// On one GPU, run supersteps in the algorithm's device-side loop
    /// ([`BspPrimitive::loop_kernel`]) while the frontier has at most this many vertices
    /// (and its output at most [`LOOP_ARCS_PER_VERTEX`] times as many arcs); 0: never.
    pub loop_frontier: u64,
    /// How packages reach their receivers.
    pub exchange: Exchange,
    /// Where the output is split on several GPUs.
    pub split: Split,
    /// What a routed advance sends ([`Split::InAdvance`] only).
    pub packages: PackageForm,
}

impl Default for BspOptions {
    fn default() -> Self {
        BspOptions {
            duplication: Duplication::OneHop,
            communication: Communication::Selective,
            max_supersteps: 1_000_000,
            loop_frontier: DEFAULT_LOOP_FRONTIER,
            exchange: Exchange::Auto,
            split: Split::InAdvance,
            packages: PackageForm::Pairs,
        }
    }
}

/// What a bulk-synchronous run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct BspOutcome {
    /// Final value of every vertex, by global id (u32 values, or f32 bits).
    pub values: Vec<u32>,
    /// Final aux value of every vertex (PageRank ranks), if the algorithm has one.
    pub aux: Option<Vec<f32>>,
    /// Supersteps run.
    pub supersteps: u32,
    /// Sum of all GPUs' frontier sizes at the start of each superstep.
    pub frontier_sizes: Vec<u64>,
    /// Edges visited by advance kernels.
    pub edges_visited: u64,
    /// Vertex updates sent between GPUs.
    pub messages: u64,
    /// Bytes sent between GPUs (packages).
    pub bytes_sent: u64,
    /// Simulated or measured time of the computation (after the graph was loaded onto the
    /// GPUs), in picoseconds.
    pub compute_time_ps: u64,
}

impl From<BspOutcome> for crate::runtime::Outcome {
    fn from(outcome: BspOutcome) -> Self {
        crate::runtime::Outcome {
            gum: None,
            compute_time_ps: outcome.compute_time_ps,
            work: crate::runtime::WorkReport {
                edges_visited: outcome.edges_visited,
                work_items: outcome.frontier_sizes.iter().sum(),
                messages: outcome.messages,
                bytes_sent: outcome.bytes_sent,
                frontier_sizes: outcome.frontier_sizes,
            },
            supersteps: outcome.supersteps,
            groute: None,
            values: outcome.values,
            aux: outcome.aux,
            atos: None,
        }
    }
}

/// The arguments of an advance kernel, destructured from the bsp slot layout (see
/// [`kernels`]). Scalars: `frontier_len u64, stamp u32, superstep u32, param f64, gpu u32,
/// extra f64`.
pub struct AdvanceArgs<'a> {
    /// CSR offsets over local vertices.
    pub offsets: &'a [u64],
    /// CSR targets (local ids).
    pub targets: &'a [u32],
    /// Integer weights, if the graph has them.
    pub weights: Option<&'a [u32]>,
    /// Per-vertex values.
    pub values: &'a mut HostData,
    /// Per-vertex aux values (f32), or empty.
    pub aux: &'a mut HostData,
    /// Global out-degree of every local vertex.
    pub degree: &'a [u32],
    /// In-arcs of every vertex, as CSR offsets: over global ids for a primitive that
    /// [`BspPrimitive::needs_reverse`] (only owned vertices have in-arcs listed), over local
    /// ids for one that [`BspPrimitive::needs_local_transpose`]; empty otherwise.
    pub reverse_offsets: &'a [u64],
    /// Sources of the in-arcs (global or local ids, as the offsets).
    pub reverse_targets: &'a [u32],
    /// Owner GPU of every local vertex.
    pub owner: &'a [u32],
    /// Each local vertex's id on its owner.
    pub owner_id: &'a [u32],
    /// The buffers after the fixed slots: the send packages, one per peer, then the
    /// primitive's scratch buffers.
    pub after_fixed: &'a mut [HostData],
    /// Input frontier (only the first `frontier_len` entries are valid).
    pub frontier_in: &'a [u32],
    /// Number of valid input frontier entries.
    pub frontier_len: usize,
    /// Superstep number (0-based).
    pub superstep: u32,
    /// The algorithm's parameter (threshold).
    pub param: f64,
    /// The algorithm's second parameter (damping).
    pub extra: f64,
    /// This GPU.
    pub gpu: u32,
    /// Counters (`[0]` receives the output length).
    pub counters: &'a mut [u64],
    /// The output frontier being built.
    pub out: FrontierOut<'a>,
    /// Counts for the cost model.
    pub effects: &'a mut KernelEffects,
}

/// An output frontier with de-duplication by a per-vertex stamp.
pub struct FrontierOut<'a> {
    marker: &'a mut [u32],
    frontier: &'a mut [u32],
    stamp: u32,
    len: usize,
}

impl FrontierOut<'_> {
    /// Vertices appended so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was appended yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends local vertex `v` unless it is already in this output frontier.
    pub fn push(&mut self, v: u32) {
        let slot = &mut self.marker[v as usize];
        if *slot != self.stamp {
            *slot = self.stamp;
            self.frontier[self.len] = v;
            self.len += 1;
        }
    }

    /// Appends local vertex `v`, which the caller knows is not in the output yet, and marks
    /// it with `stamp` (a routed advance marks owned vertices as the split would).
    pub fn append_marked(&mut self, v: u32, stamp: u32) {
        self.marker[v as usize] = stamp;
        self.frontier[self.len] = v;
        self.len += 1;
    }

    /// Stores the output length in `counters[0]` and counts the appends for the cost model.
    pub fn finish(self, counters: &mut [u64], effects: &mut KernelEffects) {
        self.finish_at(counters, 0, effects);
    }

    /// Stores the output length in `counters[index]` and counts the appends.
    pub fn finish_at(self, counters: &mut [u64], index: usize, effects: &mut KernelEffects) {
        counters[index] = self.len as u64;
        effects.bytes_written += self.len as u64 * 4;
        effects.outputs += self.len as u64;
    }
}

impl<'a> AdvanceArgs<'a> {
    /// Destructures a kernel context laid out as the bsp slots.
    pub fn from_context(ctx: &'a mut KernelContext<'_>) -> Result<Self, BackendError> {
        let frontier_len = ctx.scalar_u64(0)? as usize;
        let stamp = ctx.scalar_u32(1)?;
        let superstep = ctx.scalar_u32(2)?;
        let param = ctx.scalar_f64(3)?;
        let gpu = ctx.scalar_u32(4)?;
        let extra = ctx.scalar_f64(5)?;
        let kernel = ctx.kernel;
        let KernelContext { buffers, effects, .. } = ctx;
        if buffers.len() < FIXED_SLOTS {
            return Err(BackendError::Kernel {
                kernel: kernel.into(),
                message: format!("expects at least {FIXED_SLOTS} buffers"),
            });
        }
        let (fixed, after_fixed) = buffers.split_at_mut(FIXED_SLOTS);
        let [
            offsets,
            targets,
            weights,
            values,
            aux,
            degree,
            marker,
            fin,
            fout,
            counters,
            owner,
            owner_id,
            reverse_offsets,
            reverse_targets,
        ] = fixed
        else {
            unreachable!("split at FIXED_SLOTS");
        };
        let weights = weights.as_u32()?;
        let frontier_in = fin.as_u32()?;
        if frontier_len > frontier_in.len() {
            return Err(BackendError::Kernel {
                kernel: kernel.into(),
                message: format!("frontier length {frontier_len} exceeds its buffer"),
            });
        }
        effects.items += frontier_len as u64;
        effects.bytes_read += frontier_len as u64 * 20;
        // The CUDA advance kernels cost more on a device with more local vertices whatever
        // the frontier (H100 spans of BSP BFS: 14 us a launch at 115k local vertices, 22 us
        // at 21M; reports/calibration.md): a per-kernel cost charges them per vertex.
        effects.vertices += owner.len() as u64;
        let offsets = offsets.as_u64()?;
        report_list_reads(effects, offsets, &frontier_in[..frontier_len], !weights.is_empty());
        Ok(AdvanceArgs {
            offsets,
            targets: targets.as_u32()?,
            weights: if weights.is_empty() { None } else { Some(weights) },
            values,
            aux,
            degree: degree.as_u32()?,
            reverse_offsets: reverse_offsets.as_u64()?,
            reverse_targets: reverse_targets.as_u32()?,
            owner: owner.as_u32()?,
            owner_id: owner_id.as_u32()?,
            after_fixed,
            frontier_in,
            frontier_len,
            superstep,
            param,
            extra,
            gpu,
            counters: counters.as_u64_mut()?,
            out: FrontierOut {
                marker: marker.as_u32_mut()?,
                frontier: fout.as_u32_mut()?,
                stamp,
                len: 0,
            },
            effects,
        })
    }
}

/// Reports what an advance reads of its fragment's topology (the offsets of every frontier
/// vertex, a scattered sector each; its adjacency list and weights, 4 bytes an arc each) as
/// peer reads: nothing where the slots are local, the bytes over the path where GUM's
/// extended-memory move left them on another GPU.
fn report_list_reads(
    effects: &mut KernelEffects,
    offsets: &[u64],
    frontier: &[u32],
    weighted: bool,
) {
    let arcs: u64 = frontier
        .iter()
        .map(|&v| {
            let at = |i: usize| offsets.get(i).copied().unwrap_or(0);
            at(v as usize + 1).saturating_sub(at(v as usize))
        })
        .sum();
    effects.peer_read(0, kernels::SECTOR_BYTES * frontier.len() as u64);
    effects.peer_read(1, 4 * arcs);
    if weighted {
        effects.peer_read(2, 4 * arcs);
    }
}

/// One GPU's buffers and streams.
pub(crate) struct GpuSlots {
    pub(crate) compute: StreamId,
    comm: StreamId,
    /// The fixed slots.
    pub(crate) fixed: Vec<BufferId>,
    /// Send package per peer (self: an empty buffer).
    send: Vec<BufferId>,
    /// Receive package per peer.
    recv: Vec<BufferId>,
    /// Send bitmap per peer ([`PackageForm::Bits`]; empty otherwise).
    bits: Vec<BufferId>,
    /// The primitive's scratch buffers (the last buffers of its advance and apply).
    scratch: Vec<BufferId>,
    pub(crate) frontier_len: u64,
}

/// An advance's scalars (`kernels::advance` contract) for one superstep.
pub(crate) struct AdvanceScalars {
    pub(crate) frontier_len: u64,
    pub(crate) stamp: u32,
    pub(crate) superstep: u32,
    pub(crate) param: f64,
}

impl AdvanceScalars {
    /// The scalars for GPU `gpu`: frontier length, stamp, superstep, param, gpu, the
    /// primitive's extra; a routed advance (`routed`: peers, bitmaps) adds the peer count
    /// and whether it sends bitmaps.
    pub(crate) fn of(
        &self,
        primitive: &dyn BspPrimitive,
        gpu: u32,
        routed: Option<(u32, bool)>,
    ) -> Vec<Scalar> {
        let mut scalars = vec![
            Scalar::U64(self.frontier_len),
            Scalar::U32(self.stamp),
            Scalar::U32(self.superstep),
            Scalar::F64(self.param),
            Scalar::U32(gpu),
            Scalar::F64(primitive.extra()),
        ];
        if let Some((peers, bits)) = routed {
            scalars.extend([Scalar::U32(peers), Scalar::U32(u32::from(bits))]);
        }
        scalars
    }
}

/// Token layout: phase in the top byte, then superstep, gpu, peer.
pub(crate) fn token(phase: u8, superstep: u32, gpu: u32, peer: u32) -> Token {
    Token(
        (u64::from(phase) << 56)
            | (u64::from(superstep & 0xff_ffff) << 32)
            | (u64::from(gpu & 0xffff) << 16)
            | u64::from(peer & 0xffff),
    )
}

fn gpu_of(t: Token) -> usize {
    ((t.0 >> 16) & 0xffff) as usize
}

/// The fixed slots of the input and output frontiers (see [`kernels`]).
pub(crate) const SLOT_FRONTIER_IN: usize = 7;
pub(crate) const SLOT_FRONTIER_OUT: usize = 8;
/// The fixed slot of the counter block (see [`kernels`]).
pub(crate) const SLOT_COUNTERS: usize = 9;

const PHASE_COUNTS: u8 = 2;
const PHASE_COPY: u8 = 3;
const PHASE_NEXT: u8 = 4;
const PHASE_GATHER: u8 = 5;
pub(crate) const PHASE_LOOP: u8 = 6;

/// Runs `primitive` on `graph` partitioned by `owner` (`owner[v]` = GPU of vertex `v`) over
/// the first `parts` devices of `backend`. `graph` must already be symmetrised when the
/// primitive needs it and carry integer weights when it needs them.
pub fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    primitive: &dyn BspPrimitive,
    options: &BspOptions,
) -> Result<BspOutcome, RuntimeError> {
    validate(backend, graph, owner, parts, primitive, options)?;
    let n = graph.num_vertices();
    let mut subgraphs = if primitive.needs_all_arcs() {
        build_subgraphs_with_all_arcs(graph, owner, parts)
    } else {
        build_subgraphs(graph, owner, parts, options.duplication)
    };
    let transpose = primitive.needs_reverse().then(|| graph.transpose());
    let broadcast = options.communication == Communication::Broadcast;
    let peers = parts as usize;

    // Allocation (just enough: packages sized by the borders the partition gives) and upload.
    // Package sizes per (sender, receiver): the proxies the sender holds of the receiver's
    // vertices, or everything it holds when broadcasting.
    let pairs: Vec<Vec<usize>> = subgraphs
        .iter()
        .enumerate()
        .map(|(g, sub)| {
            (0..parts)
                .map(|p| match (p as usize == g, broadcast) {
                    (true, _) => 0,
                    (false, true) => sub.local as usize,
                    (false, false) => sub.proxies_owned_by(g as u32, p),
                })
                .collect()
        })
        .collect();
    // Receivers that read their packages where they lie need no receive buffers.
    let peer_reads = peer_reads(backend, peers, options.exchange)?;
    let mut gpus = Vec::with_capacity(peers);
    let mut uploads = Vec::new();
    for (g, sub) in subgraphs.iter_mut().enumerate() {
        let incoming: Vec<usize> =
            pairs.iter().map(|row| if peer_reads { 0 } else { row[g] }).collect();
        let slots = upload(
            backend,
            g as u32,
            sub,
            (&pairs[g], &incoming),
            primitive,
            n,
            transpose.as_ref(),
            &mut uploads,
        )?;
        gpus.push(slots);
    }
    wait_all(backend, &uploads)?;
    let alone = peers == 1 && primitive.apply_kernel().is_none();
    let device_loop = match primitive.loop_kernel() {
        Some(kernel) if alone && options.loop_frontier > 0 => {
            DeviceLoop::new(backend, kernel, DeviceId(0))?
        }
        _ => None,
    };
    // On several GPUs with selective packages, a routed advance splits as it discovers.
    let routed = match primitive.routed_advance_kernel() {
        Some(kernel) if !alone && !broadcast && options.split == Split::InAdvance => Some(kernel),
        _ => None,
    };
    let bits = send_bits(primitive, options, alone, routed.is_some(), peer_reads)?;
    if bits {
        // GPU g's bitmap toward p has a bit for every local vertex of p.
        for (g, slots) in gpus.iter_mut().enumerate() {
            for (p, sub) in subgraphs.iter().enumerate() {
                let words = if p == g { 0 } else { (sub.local as usize).div_ceil(32) };
                slots.bits.push(backend.alloc(
                    DeviceId(g as u32),
                    ElemType::U32,
                    words,
                    "send bitmap",
                )?);
            }
        }
    }
    // Host set-up (O(n)) before the clock starts: the run's time is the GPUs' work.
    let mut reduction =
        primitive.initial_reduction(&(0..n).map(|v| graph.degree(v) as u32).collect::<Vec<_>>(), n);
    let start_ps = backend.now_ps();

    let mut outcome = BspOutcome {
        values: Vec::new(),
        aux: None,
        supersteps: 0,
        frontier_sizes: Vec::new(),
        edges_visited: 0,
        messages: 0,
        bytes_sent: 0,
        compute_time_ps: 0,
    };
    let max_supersteps = primitive.max_supersteps().unwrap_or(u32::MAX).min(options.max_supersteps);
    let combiner = primitive.combiner().code();
    // One GPU without an apply step sends nothing and its advance already de-duplicates
    // its output by the superstep's stamp, so split and merge would only copy the output
    // frontier into the next input: the two frontier buffers swap roles instead, and a
    // superstep is the advance and one counter read.
    let mut superstep = 0u32;
    // After a device-side loop stopped because its frontier grew, the next superstep goes
    // through the host (the loop would take it whatever its size).
    let mut grew = false;
    while superstep < max_supersteps {
        let total: u64 = gpus.iter().map(|g| g.frontier_len).sum();
        if total == 0 {
            break;
        }
        if let Some(device_loop) = &device_loop
            && !grew
            && total <= options.loop_frontier
        {
            let most = (max_supersteps - superstep).min(LOOP_LEVELS);
            let run = device_loop.run(backend, &mut gpus[0], superstep, most, options)?;
            outcome.frontier_sizes.extend(&run.inputs);
            superstep += run.inputs.len() as u32;
            grew = run.grew;
            continue;
        }
        grew = false;
        outcome.frontier_sizes.push(total);
        let param = primitive.advance_param(&outcome.frontier_sizes, n);
        // 1. advance + split, then read the package counters (one GPU sends nothing: no
        // round trip to the host for them).
        let mut reads = Vec::with_capacity(peers);
        for (g, slots) in gpus.iter().enumerate() {
            let g32 = g as u32;
            let stamp = 2 * superstep + 1;
            let buffers: Vec<BufferId> =
                slots.fixed.iter().chain(&slots.send).chain(&slots.bits).copied().collect();
            let with_scratch = buffers.iter().chain(&slots.scratch).copied().collect();
            let advance =
                AdvanceScalars { frontier_len: slots.frontier_len, stamp, superstep, param };
            let scalars = advance.of(primitive, g32, routed.map(|_| (parts, bits)));
            backend.launch(
                slots.compute,
                Launch {
                    kernel: routed.unwrap_or_else(|| primitive.advance_kernel()),
                    buffers: with_scratch,
                    scalars,
                    work_items: slots.frontier_len,
                },
                None,
            )?;
            if alone {
                continue;
            }
            if routed.is_none() {
                backend.launch(
                    slots.compute,
                    Launch {
                        kernel: "bsp_split",
                        buffers,
                        scalars: vec![
                            Scalar::U32(g32),
                            Scalar::U32(parts),
                            Scalar::U32(stamp + 1),
                            Scalar::U32(u32::from(broadcast)),
                            Scalar::U32(combiner),
                        ],
                        work_items: slots.frontier_len,
                    },
                    None,
                )?;
            }
            if peers > 1 && !peer_reads {
                reads.push(read_counters(
                    backend,
                    slots,
                    peers,
                    token(PHASE_COUNTS, superstep, g32, 0),
                )?);
            }
        }
        // With peer reads, each receiver's merge waits for every sender's split.
        let splits_done = if peer_reads {
            gpus.iter()
                .map(|slots| backend.record_event(slots.compute))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let mut sent = vec![vec![0u64; peers]; peers];
        for c in wait_all(backend, &reads)? {
            let (g, counters) = counters_of(c)?;
            sent[g].copy_from_slice(&counters[2..2 + peers]);
        }
        // 2. push packages to peers.
        let mut copies = Vec::new();
        for (g, slots) in gpus.iter().enumerate() {
            for (p, &len) in sent[g].iter().enumerate() {
                if p == g || len == 0 {
                    continue;
                }
                let t = token(PHASE_COPY, superstep, g as u32, p as u32);
                backend.copy(
                    slots.comm,
                    BufferSlice::new(slots.send[p], 0, 2 * len as usize),
                    BufferSlice::new(gpus[p].recv[g], 0, 2 * len as usize),
                    Some(t),
                )?;
                copies.push(t);
                outcome.messages += len;
                outcome.bytes_sent += 8 * len;
            }
        }
        wait_all(backend, &copies)?;
        // 3. merge (and apply), then read the next frontier sizes.
        let mut reads = Vec::with_capacity(peers);
        for g in 0..peers {
            let g32 = g as u32;
            if alone {
                gpus[g].fixed.swap(SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT);
                reads.push(read_counters(
                    backend,
                    &gpus[g],
                    peers,
                    token(PHASE_NEXT, superstep, g32, 0),
                )?);
                continue;
            }
            if routed.is_some() {
                // The advance's output is the owned part of the next frontier; the merge
                // appends to it.
                gpus[g].fixed.swap(SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT);
            }
            let stamp = 2 * superstep + 2;
            let scalars = vec![
                Scalar::U32(g32),
                Scalar::U32(parts),
                Scalar::U32(stamp),
                Scalar::U32(combiner),
                Scalar::F64(primitive.param()),
            ];
            let slots = &gpus[g];
            let packages = if bits {
                let value = primitive.uniform_value(superstep).ok_or_else(|| {
                    RuntimeError::Options(format!(
                        "{}: bitmap packages need one value per superstep",
                        primitive.name()
                    ))
                })?;
                let buffers = gpus.iter().map(|p| p.bits[g]).collect();
                Packages::Bits { buffers, splits_done: &splits_done, value }
            } else if peer_reads {
                let mut from_peers: Vec<BufferId> = gpus.iter().map(|p| p.send[g]).collect();
                from_peers.extend(gpus.iter().map(|p| p.fixed[SLOT_COUNTERS]));
                Packages::PeerReads { buffers: from_peers, splits_done: &splits_done }
            } else {
                Packages::Copied { recv: &slots.recv, sent: &sent }
            };
            launch_merge(backend, slots.compute, g, &slots.fixed, scalars, packages)?;
            if let Some(apply) = primitive.apply_kernel() {
                let mut scalars = vec![Scalar::F64(reduction), Scalar::U32(n)];
                scalars.extend(primitive.apply_scalars());
                scalars.push(Scalar::U32(g32));
                backend.launch(
                    slots.compute,
                    Launch {
                        kernel: apply,
                        buffers: slots.fixed.iter().chain(&slots.scratch).copied().collect(),
                        scalars,
                        work_items: u64::from(subgraphs[g].local),
                    },
                    None,
                )?;
            }
            reads.push(read_counters(backend, slots, peers, token(PHASE_NEXT, superstep, g32, 0))?);
        }
        let mut next_reduction = 0.0;
        for c in wait_all(backend, &reads)? {
            let (g, counters) = counters_of(c)?;
            // Alone, the advance's output (`[0]`) is the next frontier.
            gpus[g].frontier_len = counters[usize::from(!alone)];
            next_reduction += f64::from_bits(counters[reduce_counter(peers)]);
            if peer_reads {
                // What this GPU's split sent, as the receivers' merges read it (with bits:
                // every receiver reads its whole bitmap).
                let sent: u64 = (0..peers).filter(|&p| p != g).map(|p| counters[2 + p]).sum();
                outcome.messages += sent;
                outcome.bytes_sent += if bits {
                    (0..peers)
                        .filter(|&p| p != g)
                        .map(|p| 4 * u64::from(subgraphs[p].local).div_ceil(32))
                        .sum()
                } else {
                    8 * sent
                };
            }
        }
        reduction = next_reduction;
        superstep += 1;
    }
    outcome.supersteps = superstep;
    outcome.compute_time_ps = backend.now_ps() - start_ps;
    gather(backend, &gpus, &subgraphs, primitive, n, &mut outcome)?;
    outcome.edges_visited = backend.stats().devices.iter().map(|d| d.edges).sum();
    Ok(outcome)
}

/// Where GPU `g`'s merge finds this superstep's packages.
pub(crate) enum Packages<'a> {
    /// Copied into its receive buffers (one per peer); `sent[p][g]` pairs came from `p`.
    Copied { recv: &'a [BufferId], sent: &'a [Vec<u64>] },
    /// Read where they lie: every peer's package toward `g`, then every peer's counter
    /// block; the merge waits for the senders' splits (`splits_done`, one event per GPU).
    PeerReads { buffers: Vec<BufferId>, splits_done: &'a [EventId] },
    /// Every peer's bitmap toward `g`, read (and cleared) where it lies, each set bit
    /// carrying `value` (`bsp_merge_bits_peer`); the merge waits as for peer reads.
    Bits { buffers: Vec<BufferId>, splits_done: &'a [EventId], value: u32 },
}

/// Launches GPU `g`'s merge on `stream`: `bsp_merge` over copied packages or
/// `bsp_merge_peer` after its senders' splits. `scalars` are the five both kernels share
/// (gpu, peers, stamp, combiner, threshold).
pub(crate) fn launch_merge<B: Backend + ?Sized>(
    backend: &mut B,
    stream: StreamId,
    g: usize,
    fixed: &[BufferId],
    mut scalars: Vec<Scalar>,
    packages: Packages<'_>,
) -> Result<(), BackendError> {
    let launch = match packages {
        Packages::Copied { recv, sent } => {
            let incoming = |p: usize| if p == g { 0 } else { sent[p][g] };
            scalars.extend((0..sent.len()).map(|p| Scalar::U64(incoming(p))));
            Launch {
                kernel: "bsp_merge",
                buffers: fixed.iter().chain(recv).copied().collect(),
                scalars,
                work_items: (0..sent.len()).map(incoming).sum(),
            }
        }
        Packages::PeerReads { buffers, splits_done } => {
            wait_for_senders(backend, stream, g, splits_done)?;
            let buffers = fixed.iter().chain(&buffers).copied().collect();
            Launch { kernel: "bsp_merge_peer", buffers, scalars, work_items: 0 }
        }
        Packages::Bits { buffers, splits_done, value } => {
            wait_for_senders(backend, stream, g, splits_done)?;
            // gpu, peers, stamp, then the value in place of combiner and threshold.
            scalars.truncate(3);
            scalars.push(Scalar::U32(value));
            let buffers = fixed.iter().chain(&buffers).copied().collect();
            Launch { kernel: "bsp_merge_bits_peer", buffers, scalars, work_items: 0 }
        }
    };
    backend.launch(stream, launch, None)
}

/// Makes `stream` (GPU `g`'s) wait for every other GPU's split (`splits_done`, one event
/// per GPU) before a merge reads what they sent.
fn wait_for_senders<B: Backend + ?Sized>(
    backend: &mut B,
    stream: StreamId,
    g: usize,
    splits_done: &[EventId],
) -> Result<(), BackendError> {
    for (p, &event) in splits_done.iter().enumerate() {
        if p != g {
            backend.wait_event(stream, event)?;
        }
    }
    Ok(())
}

/// Whether a routed advance sends bitmaps ([`PackageForm`]); an error when they were asked
/// for on several GPUs and cannot be used.
fn send_bits(
    primitive: &dyn BspPrimitive,
    options: &BspOptions,
    alone: bool,
    routed: bool,
    peer_reads: bool,
) -> Result<bool, RuntimeError> {
    let able = routed && peer_reads && primitive.uniform_value(0).is_some();
    match options.packages {
        PackageForm::Pairs => Ok(false),
        PackageForm::Bits if able || alone => Ok(able),
        PackageForm::Bits => Err(RuntimeError::Options(format!(
            "--bsp-packages bits: {} on this machine cannot send bitmaps; they need a routed \
             advance (--bsp-split in-advance and an algorithm that has one: bfs), selective \
             communication and packages read through peer access (--bsp-exchange auto or \
             peer-reads, every pair of GPUs with a peer path); use --bsp-packages pairs",
            primitive.name()
        ))),
    }
}

/// Whether packages travel by peer reads ([`Exchange`]) on this machine; an error when
/// they were asked for and a pair of GPUs lacks a peer path (no peer access, or a network
/// such as InfiniBand, which kernels cannot load from).
pub(crate) fn peer_reads<B: Backend + ?Sized>(
    backend: &B,
    peers: usize,
    exchange: Exchange,
) -> Result<bool, RuntimeError> {
    if peers < 2 || exchange == Exchange::Copies {
        return Ok(false);
    }
    let missing = (0..peers).flat_map(|a| (0..peers).map(move |b| (a, b))).find(|&(a, b)| {
        a != b && backend.remote_path(DeviceId(a as u32), DeviceId(b as u32)) != RemotePath::Peer
    });
    let too_many = peers > kernels::MERGE_PEER_MAX_PEERS;
    match (exchange, missing, too_many) {
        (Exchange::PeerReads, Some((a, b)), _) => Err(RuntimeError::Options(format!(
            "--bsp-exchange peer-reads: gpu{a} has no peer access to gpu{b} on this machine \
             (kernels reach it {:?}); use --bsp-exchange copies (or auto)",
            backend.remote_path(DeviceId(a as u32), DeviceId(b as u32))
        ))),
        (Exchange::PeerReads, None, true) => Err(RuntimeError::Options(format!(
            "--bsp-exchange peer-reads takes at most {} GPUs ({peers} given); use \
             --bsp-exchange copies (or auto)",
            kernels::MERGE_PEER_MAX_PEERS
        ))),
        (_, missing, too_many) => Ok(missing.is_none() && !too_many),
    }
}

/// Reads GPU `slots`' counter block (frontier length, package counts, reduction) to the
/// host after the work queued on its compute stream; returns the read's token.
fn read_counters<B: Backend + ?Sized>(
    backend: &mut B,
    slots: &GpuSlots,
    peers: usize,
    t: Token,
) -> Result<Token, BackendError> {
    let counters = BufferSlice::new(slots.fixed[SLOT_COUNTERS], 0, peers + 3);
    backend.read_to_host(slots.compute, counters, t)?;
    Ok(t)
}

/// The GPU and counter words of a finished [`read_counters`].
fn counters_of(c: Completion) -> Result<(usize, Vec<u64>), BackendError> {
    let CompletionKind::HostRead(HostData::U64(counters)) = c.kind else {
        return Err(BackendError::Usage("counters read returned no u64 data".into()));
    };
    Ok((gpu_of(c.token), counters))
}

fn validate<B: Backend + ?Sized>(
    backend: &B,
    graph: &Csr,
    owner: &[u32],
    parts: u32,
    primitive: &dyn BspPrimitive,
    options: &BspOptions,
) -> Result<(), RuntimeError> {
    let fail = |m: String| Err(RuntimeError::Options(m));
    if parts == 0 || parts > backend.device_count() {
        return fail(format!(
            "{parts} GPUs asked for, the {} backend has {}; choose 1..={}",
            backend.name(),
            backend.device_count(),
            backend.device_count()
        ));
    }
    if graph.num_vertices() == 0 {
        return fail("the graph has no vertices; give a graph with at least one vertex".into());
    }
    if owner.len() != graph.num_vertices() as usize {
        return fail(format!(
            "the partition covers {} vertices, the graph has {}",
            owner.len(),
            graph.num_vertices()
        ));
    }
    if let Some(&p) = owner.iter().find(|&&p| p >= parts) {
        return fail(format!("the partition names part {p}, only {parts} parts exist"));
    }
    if primitive.needs_weights() && graph.weights().is_none() {
        return fail(format!(
            "{} needs edge weights and the graph has none; add --weights",
            primitive.name()
        ));
    }
    if primitive.needs_undirected() && graph.is_directed() {
        return fail(format!("{} needs the symmetrised graph", primitive.name()));
    }
    if primitive.needs_reverse()
        && (options.duplication != Duplication::All
            || options.communication != Communication::Broadcast)
    {
        return fail(format!(
            "{} pulls from in-neighbours and must broadcast (seed 002 section VI-A): use \
             --duplication all --communication broadcast",
            primitive.name()
        ));
    }
    if primitive.needs_reverse() && primitive.needs_local_transpose() {
        return fail(format!(
            "{} asks for both the whole graph's in-arcs and its GPUs' own transposed arcs, \
             which share the reverse slots: a primitive may pull one way only",
            primitive.name()
        ));
    }
    if primitive.needs_all_arcs() && options.duplication != Duplication::All {
        return fail(format!(
            "{} reads the arcs of its vertices' neighbours (two hops) and keeps the whole \
             graph on every GPU: use --duplication all",
            primitive.name()
        ));
    }
    if options.communication == Communication::Broadcast && options.duplication != Duplication::All
    {
        return fail(
            "broadcast communication needs duplicate-all (receivers index by global id); \
             use --duplication all or --communication selective"
                .into(),
        );
    }
    // Assignment hands owners' values to their copies: it needs every copy (duplicate-all)
    // and the owner's broadcast; selective packages would carry proxies to owners.
    if primitive.combiner() == Combiner::Assign && options.communication != Communication::Broadcast
    {
        return fail(format!(
            "{} sends each owner's new values to every copy of the vertex: use --duplication \
             all --communication broadcast",
            primitive.name()
        ));
    }
    // An additive combiner counts every update once per receiver: broadcast hands each
    // delta to every GPU, which adds it and forwards it again (found by the swarm: residual
    // pushes grew without bound). Only a primitive whose apply step rebuilds its values
    // from the sums each superstep may broadcast additive updates.
    if options.communication == Communication::Broadcast
        && primitive.combiner().is_additive()
        && primitive.apply_kernel().is_none()
    {
        return fail(format!(
            "{} combines updates by addition, and broadcast would add each one on every GPU: \
             use --communication selective",
            primitive.name()
        ));
    }
    Ok(())
}

/// Creates GPU `gpu`'s streams and uploads its slots ([`upload::upload_slots`]); the
/// reverse slots hold `reverse`'s in-arcs of its owned vertices where given, else the
/// transpose of its own arcs where the primitive pulls.
#[allow(clippy::too_many_arguments)]
fn upload<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: u32,
    sub: &mut Subgraph,
    pairs: (&[usize], &[usize]),
    primitive: &dyn BspPrimitive,
    n: u32,
    reverse: Option<&Csr>,
    tokens: &mut Vec<Token>,
) -> Result<GpuSlots, RuntimeError> {
    let device = DeviceId(gpu);
    let compute = backend.create_stream(device, StreamPriority::Normal)?;
    let comm = backend.create_stream(device, StreamPriority::Normal)?;
    let reverse = match reverse {
        Some(transpose) => sub.reverse_csr(gpu, transpose),
        None if primitive.needs_local_transpose() => sub.local_transpose(),
        None => (Vec::new(), Vec::new()),
    };
    let start = upload::Start::Initial;
    let slots = upload::upload_slots(
        backend, gpu, compute, sub, pairs, primitive, n, reverse, &start, false, tokens,
    )?;
    let upload::UploadedSlots { fixed, send, recv, scratch, frontier_len } = slots;
    Ok(GpuSlots { compute, comm, fixed, send, recv, bits: Vec::new(), scratch, frontier_len })
}

fn gather<B: Backend + ?Sized>(
    backend: &mut B,
    gpus: &[GpuSlots],
    subgraphs: &[Subgraph],
    primitive: &dyn BspPrimitive,
    n: u32,
    outcome: &mut BspOutcome,
) -> Result<(), RuntimeError> {
    let has_aux = primitive.initial_aux(0, n).is_some();
    let mut tokens = Vec::new();
    for (g, slots) in gpus.iter().enumerate() {
        let local = subgraphs[g].local as usize;
        let t = token(PHASE_GATHER, 0, g as u32, 0);
        backend.read_to_host(slots.compute, BufferSlice::new(slots.fixed[3], 0, local), t)?;
        tokens.push(t);
        if has_aux {
            let t = token(PHASE_GATHER, 1, g as u32, 0);
            backend.read_to_host(slots.compute, BufferSlice::new(slots.fixed[4], 0, local), t)?;
            tokens.push(t);
        }
    }
    let mut values = vec![0u32; n as usize];
    let mut aux = has_aux.then(|| vec![0f32; n as usize]);
    for c in wait_all(backend, &tokens)? {
        let g = gpu_of(c.token);
        let is_aux = (c.token.0 >> 32) & 0xff_ffff == 1;
        let sub = &subgraphs[g];
        let CompletionKind::HostRead(data) = c.kind else {
            return Err(BackendError::Usage("gather read returned no data".into()).into());
        };
        for v in 0..sub.local as usize {
            if sub.owner_of_local[v] != g as u32 {
                continue;
            }
            let global = sub.global_of_local[v] as usize;
            match (&data, is_aux, aux.as_mut()) {
                (HostData::F32(x), true, Some(aux)) => aux[global] = x[v],
                (HostData::F32(x), false, _) => values[global] = x[v].to_bits(),
                (HostData::F64(x), false, _) => values[global] = (x[v] as f32).to_bits(),
                (HostData::U32(x), false, _) => values[global] = x[v],
                _ => return Err(BackendError::Usage("gather: unexpected data type".into()).into()),
            }
        }
    }
    outcome.values = values;
    outcome.aux = aux;
    Ok(())
}
