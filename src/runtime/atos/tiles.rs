//! On-chip tiles: Atos's persistent CTA workers, each owning a tile of the graph in its
//! shared memory, for BFS on one GPU where the whole graph fits the SMs.
//!
//! A road network is a long chain of small levels (luxembourg_osm: 1,034 levels of 111
//! vertices on average), so BFS on it is bound by the latency of a level, not by bandwidth.
//! Atos's CTA workers pay a few L2 round trips and about ten block barriers a level
//! (reports/atos.md: 2.8 ms on luxembourg on one H200, 2.7 us a level). Here the graph is cut
//! into compact tiles (balls grown by BFS from seeds next to the previous ball; no
//! dependence on the source), one CTA a tile, every CTA resident at once. A CTA copies its
//! tile's rows into shared memory and runs its part of the BFS there: labels, rows and
//! frontier at shared-memory latency. An arc to another tile lowers that vertex's label in
//! global memory with an atomic min and, if it lowered it, pushes `(vertex, label)` into the
//! owning tile's inbox. Labels are corrected asynchronously (a later, smaller label expands a
//! vertex again: extra work), so the result is exact.
//!
//! Termination: one word of tokens. Each CTA that starts with a labelled vertex holds one; a
//! message adds one (its sender, before the message is visible); a CTA that consumed messages
//! holds their tokens and gives them back when it runs out of work. The word is 0 only when
//! no message is in flight and no CTA holds work, and then every CTA ends.
//!
//! The CUDA kernel is `atos_bfs_tiles` in `kernels/atos.cu`; the simulator runs the same
//! algorithm in lockstep rounds ([`tiles_kernel`]): in a round every tile expands its list and
//! takes the messages sent in earlier rounds.
//!
//! Several GPUs (real, or logical GPUs sharing one: [`peer`]): each GPU tiles its own part of
//! the run's partition ([`TileLayout::build_parts`]: a tile never spans GPUs) and launches
//! `atos_bfs_tiles_peer`, one CTA a tile of its own, every CTA of every GPU resident at once
//! (one an SM; logical GPUs split their physical GPU's SMs, [`sm_rooms`]). A tile's labels,
//! inbox and tail live in its GPU's memory; an arc to another GPU's tile does the atomic min
//! and the push there through peer pointers (the launch's remote buffer arguments, as the
//! workers' pushes), with system-scope atomics and fences; one token word on GPU 0 serves
//! every GPU (the termination argument is in the kernel's comment). The simulator's copy on
//! each GPU runs the whole lockstep run and keeps its part, charging a message to another GPU
//! as the peer atomics and store it costs over the link ([`register_peer`]).

use super::{AtosApp, AtosGpuReport, AtosOptions, AtosReport, graph::AtosGraph};
use crate::backend::{
    AtomicOp, Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, Fetch,
    HostData, KernelContext, KernelDef, KernelRegistry, Launch, LaunchConfig, RemoteOp, Scalar,
    StreamPriority, Token, Word,
};
use crate::graph::Csr;
use crate::runtime::{Outcome, RuntimeError, WorkReport, wait_all};
use serde::Serialize;

mod peer;

/// Whether Atos runs BFS on on-chip tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TileMode {
    /// For an algorithm with a tile kernel, when every GPU's part of the graph fits its SMs
    /// (one tile a CTA, one CTA an SM; logical GPUs split their GPU's SMs, every pair of GPUs
    /// with a peer path) and the graph is road-like (at most [`ROAD_MAX_MEAN_DEGREE`] arcs a vertex
    /// on average: deep, narrow levels). One H200 (c77, reports/atos.md): luxembourg_osm
    /// 1.46-1.52 ms with tiles against 2.81-2.86 with the CTA workers; delaunay_n16 (a mesh,
    /// 6 arcs a vertex, 109 levels) 0.99-1.06 against 0.51-0.55, so meshes stay on the
    /// workers.
    Auto,
    /// Always (an error where the run cannot: no tile kernel, GPUs without peer paths or
    /// more than [`MAX_TILE_GPUS`], a graph that does not fit).
    On,
    /// Never.
    Off,
}

/// The most arcs a vertex may have on average for [`TileMode::Auto`] to take tiles.
pub const ROAD_MAX_MEAN_DEGREE: f64 = 4.0;
/// Threads of a tile's CTA.
pub const BLOCK_THREADS: u32 = 256;
/// Shared memory a tile's CTA may use, bytes (what every CUDA GPU gives a block without
/// opting in to more).
pub const SHARED_LIMIT_BYTES: u64 = 48 * 1024;
/// An arc whose target is in another tile: the bit set on its column, the rest the target's
/// tile-ordered id.
pub const REMOTE: u32 = 1 << 31;
/// An inbox entry not yet written.
pub const EMPTY: u64 = u64::MAX;
/// How long a CUDA tile CTA waits for a message or the end before it stops the run with an
/// error (`AT_TILE_STALL_NS` in `kernels/atos.cu`): a run that fits on chip ends in
/// milliseconds, so a wait this long means a lost token or a CTA that never ran.
pub const STALL_NS: u64 = 10_000_000_000;
/// Shared memory the tile kernel keeps for its own words (counters, sums), bytes, left out
/// of [`SHARED_LIMIT_BYTES`] for the tile.
pub const STATIC_SHARED_MARGIN_BYTES: u64 = 1024;

/// Buffer slots of the tile kernel.
pub mod slot {
    /// `tiles + 1` words: tile `t` holds the tile-ordered ids `start[t]..start[t + 1]`.
    pub const START: usize = 0;
    /// `n + 1` arc offsets over tile-ordered ids.
    pub const ROWS: usize = 1;
    /// Arc targets: the target's index in its own tile, or [`super::REMOTE`] | its id.
    pub const COLS: usize = 2;
    /// Labels by tile-ordered id: the initial labels in, the result out.
    pub const LABELS: usize = 3;
    /// `tiles x capacity` inbox entries (`label << 32 | index in the tile`), [`super::EMPTY`]
    /// until written.
    pub const INBOX: usize = 4;
    /// Entries reserved in each tile's inbox.
    pub const TAILS: usize = 5;
    /// `[0]` tokens outstanding (the host sets one a CTA), `[1]` inbox entries refused
    /// (full), `[2]` set when a CTA waited [`super::STALL_NS`] for work or the end (CUDA).
    pub const CTL: usize = 6;
    /// `[0]` expansions, `[1]` messages, `[2]` the most rounds of a CTA, `[3]` arcs.
    pub const STATS: usize = 7;
    /// Buffers of the kernel.
    pub const COUNT: usize = 8;
}

/// The graph cut into tiles, renumbered so that each tile's vertices are contiguous.
#[derive(Clone, Debug, PartialEq)]
pub struct TileLayout {
    /// First tile-ordered id of every tile, then the vertex count.
    pub start: Vec<u32>,
    /// Arc offsets over tile-ordered ids.
    pub rows: Vec<u32>,
    /// Arc targets, encoded (see [`slot::COLS`]).
    pub cols: Vec<u32>,
    /// Tile-ordered id of every original vertex.
    pub new_of: Vec<u32>,
    /// Most vertices of a tile.
    pub max_vertices: u32,
    /// Most arcs of a tile.
    pub max_arcs: u32,
    /// Arcs between tiles.
    pub remote_arcs: u64,
    /// Arcs into each tile from other tiles.
    pub remote_in: Vec<u32>,
    /// First tile of every GPU, then the tile count (`gpus + 1` entries): GPU `g` owns tiles
    /// `gpu_tiles[g]..gpu_tiles[g + 1]`, so its vertices are the tile-ordered ids
    /// `start[gpu_tiles[g]]..start[gpu_tiles[g + 1]]`.
    pub gpu_tiles: Vec<u32>,
    /// Arcs whose target is on another GPU.
    pub cross_gpu_arcs: u64,
}

impl TileLayout {
    /// Cuts `graph` into tiles of at most `tile_vertices` vertices: a ball grown by BFS
    /// (over out-arcs, ids in order) from a seed, the next ball from a vertex next to the
    /// last one (so tiles are compact), a ball that runs out of reachable vertices goes on
    /// from the next seed.
    pub fn build(graph: &Csr, tile_vertices: u32) -> TileLayout {
        let owner = vec![0u32; graph.num_vertices() as usize];
        TileLayout::build_parts(graph, &owner, &[tile_vertices])
    }

    /// Cuts each GPU's part of `graph` (`owner[v]`: the GPU of vertex `v`, GPU `g` taking
    /// tiles of at most `tile_vertices[g]` vertices) into tiles as [`TileLayout::build`]
    /// does, balls growing only over the part's own vertices, so that a tile never spans
    /// GPUs; GPU 0's tiles first, then GPU 1's, and so on. One part is [`TileLayout::build`].
    pub fn build_parts(graph: &Csr, owner: &[u32], tile_vertices: &[u32]) -> TileLayout {
        let n = graph.num_vertices() as usize;
        let gpus = tile_vertices.len().max(1);
        let part = |v: u32| (owner[v as usize] as usize).min(gpus - 1);
        let mut in_part = vec![0usize; gpus];
        for v in 0..n as u32 {
            in_part[part(v)] += 1;
        }
        const NONE: u32 = u32::MAX;
        let mut tile_of = vec![NONE; n];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut ring: Vec<u32> = Vec::new();
        let mut tiles = 0u32;
        let mut ball: Vec<u32> = Vec::new();
        let mut gpu_tiles = vec![0u32; gpus + 1];
        for g in 0..gpus {
            let cap = tile_vertices.get(g).copied().unwrap_or(1).max(1);
            let mine = |v: u32| part(v) == g;
            let (mut placed, mut next_id) = (0usize, 0usize);
            ring.clear();
            while placed < in_part[g] {
                let mut count = 0u32;
                while count < cap && placed < in_part[g] {
                    let mut seed = NONE;
                    while let Some(c) = ring.pop() {
                        if tile_of[c as usize] == NONE {
                            seed = c;
                            break;
                        }
                    }
                    while seed == NONE {
                        if tile_of[next_id] == NONE && mine(next_id as u32) {
                            seed = next_id as u32;
                        }
                        next_id += 1;
                    }
                    ball.clear();
                    ball.push(seed);
                    tile_of[seed as usize] = tiles;
                    order.push(seed);
                    count += 1;
                    placed += 1;
                    let mut head = 0;
                    while head < ball.len() && count < cap {
                        let v = ball[head];
                        head += 1;
                        for &w in graph.neighbors(v) {
                            if count >= cap {
                                break;
                            }
                            if tile_of[w as usize] == NONE && mine(w) {
                                tile_of[w as usize] = tiles;
                                order.push(w);
                                ball.push(w);
                                count += 1;
                                placed += 1;
                            }
                        }
                    }
                    for &v in &ball {
                        ring.extend(
                            graph
                                .neighbors(v)
                                .iter()
                                .filter(|&&w| tile_of[w as usize] == NONE && mine(w)),
                        );
                    }
                }
                tiles += 1;
            }
            gpu_tiles[g + 1] = tiles;
        }
        let mut new_of = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            new_of[v as usize] = i as u32;
        }
        let mut start = vec![0u32; tiles as usize + 1];
        for &t in &tile_of {
            start[t as usize + 1] += 1;
        }
        for t in 0..tiles as usize {
            start[t + 1] += start[t];
        }
        let mut rows = vec![0u32; n + 1];
        for (i, &v) in order.iter().enumerate() {
            rows[i + 1] = rows[i] + graph.neighbors(v).len() as u32;
        }
        let mut cols = Vec::with_capacity(graph.num_arcs() as usize);
        let (mut remote_arcs, mut cross_gpu_arcs) = (0u64, 0u64);
        let mut remote_in = vec![0u32; tiles as usize];
        for &v in &order {
            let t = tile_of[v as usize];
            for &w in graph.neighbors(v) {
                let (tw, nw) = (tile_of[w as usize], new_of[w as usize]);
                if tw == t {
                    cols.push(nw - start[t as usize]);
                } else {
                    cols.push(REMOTE | nw);
                    remote_arcs += 1;
                    remote_in[tw as usize] += 1;
                    cross_gpu_arcs += u64::from(part(v) != part(w));
                }
            }
        }
        let (mut max_vertices, mut max_arcs) = (0, 0);
        for t in 0..tiles as usize {
            max_vertices = max_vertices.max(start[t + 1] - start[t]);
            max_arcs = max_arcs.max(rows[start[t + 1] as usize] - rows[start[t] as usize]);
        }
        TileLayout {
            start,
            rows,
            cols,
            new_of,
            max_vertices,
            max_arcs,
            remote_arcs,
            remote_in,
            gpu_tiles,
            cross_gpu_arcs,
        }
    }

    /// GPUs the tiles are spread over.
    pub fn gpus(&self) -> u32 {
        self.gpu_tiles.len() as u32 - 1
    }

    /// Tiles of GPU `g`.
    pub fn gpu_tile_count(&self, g: u32) -> u32 {
        self.gpu_tiles[g as usize + 1] - self.gpu_tiles[g as usize]
    }

    /// The tile-ordered ids GPU `g` owns.
    pub fn gpu_vertices(&self, g: u32) -> std::ops::Range<u32> {
        self.start[self.gpu_tiles[g as usize] as usize]
            ..self.start[self.gpu_tiles[g as usize + 1] as usize]
    }

    /// Tiles.
    pub fn tiles(&self) -> u32 {
        self.start.len() as u32 - 1
    }

    /// Shared memory a tile's CTA needs, bytes: the tile starts, its rows, four words a
    /// vertex (label, list stamp, two lists) and its arcs.
    pub fn shared_bytes(&self) -> u64 {
        4 * (u64::from(self.tiles())
            + 1
            + u64::from(self.max_vertices)
            + 1
            + 4 * u64::from(self.max_vertices)
            + u64::from(self.max_arcs))
    }

    /// Inbox entries per tile at growth `scale` (1, 4, 16): 16 per arc into the tile from
    /// another (a vertex is sent a label again each time it drops) and 1,024 more.
    pub fn inbox_capacity(&self, scale: u64) -> u64 {
        let most = self.remote_in.iter().copied().max().unwrap_or(0);
        (16 * u64::from(most) + 1024).saturating_mul(scale)
    }

    /// Why the layout cannot run on a GPU of `sm_count` SMs, if it cannot: every tile needs
    /// its CTA resident at once (one an SM) and its rows in shared memory.
    pub fn misfit(&self, sm_count: u32) -> Option<String> {
        if self.tiles() > sm_count {
            return Some(format!(
                "{} tiles of at most {} vertices need {} resident CTAs, one an SM, and the GPU \
                 has {sm_count} SMs",
                self.tiles(),
                self.max_vertices,
                self.tiles()
            ));
        }
        self.shared_misfit()
    }

    /// Why a tile's rows do not fit its CTA's shared memory, if they do not.
    pub fn shared_misfit(&self) -> Option<String> {
        let bytes = self.shared_bytes();
        let room = SHARED_LIMIT_BYTES - STATIC_SHARED_MARGIN_BYTES;
        (bytes > room).then(|| {
            format!(
                "a tile of {} vertices and {} arcs needs {bytes} bytes of shared memory, more \
                 than the {room} a CTA has for it",
                self.max_vertices, self.max_arcs
            )
        })
    }
}

impl TileLayout {
    /// The tile kernel's launch: one CTA a tile, all resident at once (the kernel ends itself,
    /// on the tokens), the tile in dynamic shared memory. Persistent: the simulator runs it as
    /// one step and charges its fitted rounds with no latency floor per round (its rounds are
    /// in shared memory).
    pub fn launch_config(&self) -> LaunchConfig {
        LaunchConfig {
            block_threads: Some(BLOCK_THREADS),
            blocks: Some(self.tiles()),
            shared_bytes: self.shared_bytes() as u32,
            persistent: true,
            sm_limit: None,
        }
    }

    /// The buffers a launch starts from, after the layout's own three ([`slot::LABELS`] on):
    /// the starting labels by tile-ordered id, `cap` empty entries an inbox, the tails, the
    /// control words and the stats.
    pub fn run_buffers(&self, labels: &[u32], cap: u64) -> [(&'static str, HostData); 5] {
        let tiles = self.tiles();
        [
            ("atos tile labels", HostData::U32(labels.to_vec())),
            ("atos tile inboxes", HostData::U64(vec![EMPTY; (u64::from(tiles) * cap) as usize])),
            ("atos tile tails", HostData::U32(vec![0; tiles as usize])),
            // Every CTA starts holding one token: a CTA's starting labels may already carry
            // an early message of a neighbour (whose own token the sender added), so a token
            // per CTA that starts with a label would be miscounted.
            ("atos tile control", HostData::U32(vec![tiles, 0, 0])),
            ("atos tile stats", HostData::U64(vec![0; 4])),
        ]
    }
}

/// Vertices a tile gets on a GPU of `sm_count` SMs: `tile_vertices`, or more so that the
/// tiles fit one an SM.
pub fn tile_size(graph: &Csr, sm_count: u32, tile_vertices: u32) -> u32 {
    tile_vertices.max(graph.num_vertices().div_ceil(sm_count.max(1)))
}

/// Registers the simulator's tile kernel under `name` (the CUDA kernel of the same name
/// is in `kernels/atos.cu`). Labels drop by one an arc: BFS.
pub fn register(registry: &mut KernelRegistry, name: &'static str) {
    registry.register(KernelDef {
        name,
        contract: "Atos on-chip tiles (runtime::atos::tiles): one CTA a tile, all resident; \
                   each round a tile expands its list in shared memory (label + 1 along every \
                   arc, an atomic min, a vertex listed once a round), lowers a remote target's \
                   global label with an atomic min and on improvement pushes (index, label) \
                   into the owner tile's inbox, then takes its inbox's new entries; token \
                   termination; labels out by tile-ordered id, stats [expansions, messages, \
                   most rounds, arcs], ctl [tokens, refused]. Scalars: tiles, inbox capacity",
        sim: tiles_kernel,
        cuda_name: Some(name),
        remote_args: &[],
    });
}

/// Buffer slots of the tile kernel on several GPUs (one launch a GPU, `gpu` its scalar): the
/// layout and the starting labels whole on every GPU, the GPU's statistics, the control
/// words on GPU 0, then every GPU's labels, inboxes and tails (peer pointers).
pub mod peer_slot {
    /// `tiles + 1` words, every GPU's tiles (see [`super::slot::START`]).
    pub const START: usize = 0;
    /// `n + 1` arc offsets over tile-ordered ids.
    pub const ROWS: usize = 1;
    /// Arc targets, encoded (see [`super::slot::COLS`]).
    pub const COLS: usize = 2;
    /// The starting labels of every tile-ordered id (read only).
    pub const INIT: usize = 3;
    /// `gpus + 1` words: the first tile of every GPU, then the tile count.
    pub const GPU_TILES: usize = 4;
    /// This GPU's `u64` stats: `[0]` expansions, `[1]` messages, `[2]` the most rounds of a
    /// CTA, `[3]` arcs, `[4]` messages to other GPUs.
    pub const STATS: usize = 5;
    /// GPU 0's control words, for every GPU (see [`super::slot::CTL`]): the one token word.
    pub const CTL: usize = 6;
    /// GPU `h`'s labels (its tile-ordered ids, from its first) at `PEERS + 3h`, its inboxes
    /// (`tiles_h x capacity`) at `PEERS + 3h + 1`, its tails at `PEERS + 3h + 2`.
    pub const PEERS: usize = 7;
    /// Stats words.
    pub const STATS_WORDS: usize = 5;
}

/// Most GPUs the tile kernel spreads over: [`peer_slot::PEERS`] and three buffers a GPU
/// within the CUDA ABI's 32 buffer arguments.
pub const MAX_TILE_GPUS: u32 = 8;

/// Positions of the peer kernel that may be other GPUs' buffers.
const PEER_TILE_ARGS: [usize; 1 + 3 * MAX_TILE_GPUS as usize] = {
    let mut a = [0usize; 1 + 3 * MAX_TILE_GPUS as usize];
    a[0] = peer_slot::CTL;
    let mut i = 1;
    while i < a.len() {
        a[i] = peer_slot::PEERS + i - 1;
        i += 1;
    }
    a
};

/// Registers the simulator's tile kernel for several GPUs under `name` (the CUDA kernel of
/// the same name is in `kernels/atos.cu`).
pub fn register_peer(registry: &mut KernelRegistry, name: &'static str) {
    registry.register(KernelDef {
        name,
        contract: "Atos on-chip tiles on several GPUs (runtime::atos::tiles), one launch a GPU: \
                   one CTA a tile of this GPU, every CTA of every GPU resident; the tile kernel's \
                   algorithm, with a remote target's label, inbox and tail in its owner GPU's \
                   memory (peer pointers) and one token word on GPU 0. Labels out in this \
                   GPU's labels, stats [expansions, messages, most rounds, arcs, messages to \
                   other GPUs], ctl [tokens, refused, stalled] (GPU 0). Scalars: gpu, gpus, \
                   inbox capacity",
        sim: peer_kernel,
        cuda_name: Some(name),
        remote_args: &PEER_TILE_ARGS,
    });
}

/// The simulator's tile kernel on GPU `gpu` of several: every GPU's launch runs the whole
/// run's lockstep rounds (a pure function of the layout and the starting labels, so every
/// GPU's copy agrees) and keeps its own part: its labels, inboxes and tails as the run leaves
/// them, its counts; GPU 0's sets the control words. A message it sent to another GPU is
/// charged over the link as the CUDA kernel pays it: a peer read of the label, an atomic min
/// on it, an atomic on the tail (a max to the slot's end: idempotent, since the owner's own
/// launch writes the final tails too), the entry's store and, from a GPU other than 0, the
/// token's atomic on GPU 0 (an add of 0: the lockstep rounds count the tokens themselves).
fn peer_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let kernel = ctx.kernel;
    let bad = |m: String| BackendError::Kernel { kernel: kernel.to_string(), message: m };
    let me = ctx.scalar_u32(0)? as usize;
    let gpus = ctx.scalar_u32(1)? as usize;
    let cap = ctx.scalar_u32(2)? as usize;
    if me >= gpus || ctx.buffers.len() != peer_slot::PEERS + 3 * gpus {
        return Err(bad(format!(
            "gpu {me} of {gpus}: {} buffers, want {}",
            ctx.buffers.len(),
            peer_slot::PEERS + 3 * gpus
        )));
    }
    let ids = ctx.buffer_ids.to_vec();
    let b = &mut *ctx.buffers;
    let start = b[peer_slot::START].as_u32()?.to_vec();
    let rows = b[peer_slot::ROWS].as_u32()?.to_vec();
    let cols = b[peer_slot::COLS].as_u32()?.to_vec();
    let mut glab = b[peer_slot::INIT].as_u32()?.to_vec();
    let gpu_tiles = b[peer_slot::GPU_TILES].as_u32()?.to_vec();
    let tiles = start.len().saturating_sub(1);
    let n = glab.len();
    if tiles == 0
        || rows.len() != n + 1
        || start[tiles] as usize != n
        || gpu_tiles.len() != gpus + 1
        || gpu_tiles[gpus] as usize != tiles
        || gpu_tiles.windows(2).any(|w| w[0] > w[1])
    {
        return Err(bad(format!(
            "{} tile starts, {} row offsets, {n} labels, GPU tiles {gpu_tiles:?}",
            start.len(),
            rows.len()
        )));
    }
    let mut gpu_of_tile = vec![0u32; tiles];
    for h in 0..gpus {
        for t in gpu_tiles[h]..gpu_tiles[h + 1] {
            gpu_of_tile[t as usize] = h as u32;
        }
    }
    let mut inbox = vec![EMPTY; tiles * cap];
    let mut tails = vec![0u32; tiles];
    let lanes =
        Lanes { start: &start, rows: &rows, cols: &cols, gpu_of_tile: &gpu_of_tile, gpus, cap };
    let run = lockstep(lanes, &mut glab, &mut inbox, &mut tails);
    // This GPU's part.
    let (t0, t1) = (gpu_tiles[me] as usize, gpu_tiles[me + 1] as usize);
    let (v0, v1) = (start[t0] as usize, start[t1] as usize);
    let mine = peer_slot::PEERS + 3 * me;
    let short = |what: &str, have: usize, want: usize| {
        bad(format!("gpu {me}: {have} {what}, want at least {want}"))
    };
    let labels = b[mine].as_u32_mut()?;
    if labels.len() < v1 - v0 {
        return Err(short("labels", labels.len(), v1 - v0));
    }
    labels[..v1 - v0].copy_from_slice(&glab[v0..v1]);
    let own_inbox = b[mine + 1].as_u64_mut()?;
    if own_inbox.len() < (t1 - t0) * cap {
        return Err(short("inbox entries", own_inbox.len(), (t1 - t0) * cap));
    }
    own_inbox[..(t1 - t0) * cap].copy_from_slice(&inbox[t0 * cap..t1 * cap]);
    let own_tails = b[mine + 2].as_u32_mut()?;
    if own_tails.len() < t1 - t0 {
        return Err(short("tails", own_tails.len(), t1 - t0));
    }
    own_tails[..t1 - t0].copy_from_slice(&tails[t0..t1]);
    let crossed = run.crossings.iter().filter(|c| c.from as usize == me).count() as u64;
    let stats = b[peer_slot::STATS].as_u64_mut()?;
    if stats.len() < peer_slot::STATS_WORDS {
        return Err(short("stats words", stats.len(), peer_slot::STATS_WORDS));
    }
    stats[0] += run.expansions[me];
    stats[1] += run.messages[me];
    stats[2] = stats[2].max(run.rounds);
    stats[3] += run.arcs[me];
    stats[4] += crossed;
    if me == 0 {
        let ctl = b[peer_slot::CTL].as_u32_mut()?;
        if ctl.len() < 2 {
            return Err(short("control words", ctl.len(), 2));
        }
        ctl[0] = 0;
        ctl[1] = ctl[1].saturating_add(run.refused);
    }
    let local_messages = run.messages[me] - crossed;
    let arcs_here = u64::from(rows[v1] - rows[v0]);
    let e = &mut ctx.effects;
    e.items = run.expansions[me];
    e.edges = run.arcs[me];
    e.atomics = 3 * local_messages;
    e.rounds = run.rounds;
    e.bytes_read = 4 * ((v1 - v0) as u64 + 1 + arcs_here + tiles as u64);
    e.bytes_written = 4 * (v1 - v0) as u64 + 8 * local_messages;
    for h in (0..gpus).filter(|&h| h != me) {
        e.peer_read(peer_slot::PEERS + 3 * h, 4 * run.peer_checks[me * gpus + h]);
    }
    for c in run.crossings.iter().filter(|c| c.from as usize == me) {
        let h = c.to as usize;
        let (vbase, tbase) = (start[gpu_tiles[h] as usize], gpu_tiles[h]);
        let slot = |k: usize| ids[peer_slot::PEERS + 3 * h + k];
        if me != 0 {
            e.remote.push(RemoteOp::Atomic {
                buffer: ids[peer_slot::CTL],
                index: 0,
                op: AtomicOp::Add,
                value: Word::U32(0),
                fetch: Fetch::Discard,
                notify: None,
            });
        }
        e.remote.push(RemoteOp::atomic_min_u32(slot(0), (c.vertex - vbase) as usize, c.label));
        e.remote.push(RemoteOp::Atomic {
            buffer: slot(2),
            index: (c.tile - tbase) as usize,
            op: AtomicOp::Max,
            value: Word::U32(c.slot + 1),
            fetch: Fetch::Discard,
            notify: None,
        });
        if (c.slot as usize) < cap {
            let entry = (u64::from(c.label) << 32) | u64::from(c.vertex - start[c.tile as usize]);
            e.remote.push(RemoteOp::Store {
                buffer: slot(1),
                offset: (c.tile - tbase) as usize * cap + c.slot as usize,
                data: HostData::U64(vec![entry]),
            });
        }
    }
    Ok(())
}

/// The simulator's tile kernel: lockstep rounds (see the module docs).
fn tiles_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let kernel = ctx.kernel;
    let bad = |m: String| BackendError::Kernel { kernel: kernel.to_string(), message: m };
    let tiles = ctx.scalar_u32(0)? as usize;
    let cap = ctx.scalar_u32(1)? as usize;
    let [start, rows, cols, labels, inbox, tails, ctl, stats] = ctx.buffers::<{ slot::COUNT }>()?;
    let start = start.as_u32()?.to_vec();
    let rows = rows.as_u32()?;
    let cols = cols.as_u32()?;
    let glab = labels.as_u32_mut()?;
    let inbox = inbox.as_u64_mut()?;
    let tails = tails.as_u32_mut()?;
    let ctl = ctl.as_u32_mut()?;
    let stats = stats.as_u64_mut()?;
    if start.len() != tiles + 1 || tails.len() < tiles || inbox.len() < tiles * cap {
        return Err(bad(format!(
            "{} tile starts, {} tails, {} inbox entries for {tiles} tiles of capacity {cap}",
            start.len(),
            tails.len(),
            inbox.len()
        )));
    }
    let n = glab.len();
    if rows.len() != n + 1 || start[tiles] as usize != n || ctl.len() < 2 || stats.len() < 4 {
        return Err(bad(format!(
            "{} row offsets and {} labels (want one more offset than labels), {} control \
             words (at least 2), {} stats words (at least 4)",
            rows.len(),
            n,
            ctl.len(),
            stats.len()
        )));
    }
    let run = lockstep(
        Lanes { start: &start, rows, cols, gpu_of_tile: &vec![0; tiles], gpus: 1, cap },
        glab,
        inbox,
        tails,
    );
    let (expansions, messages, arcs, rounds) =
        (run.expansions[0], run.messages[0], run.arcs[0], run.rounds);
    ctl[0] = 0;
    ctl[1] = ctl[1].saturating_add(run.refused);
    stats[0] += expansions;
    stats[1] += messages;
    stats[2] = stats[2].max(rounds);
    stats[3] += arcs;
    let read_words = n as u64 + 1 + cols.len() as u64 + tiles as u64;
    let e = &mut ctx.effects;
    e.items = expansions;
    e.edges = arcs;
    e.atomics = 3 * messages;
    e.rounds = rounds;
    e.bytes_read = 4 * read_words;
    e.bytes_written = 4 * n as u64 + 8 * messages;
    Ok(())
}

/// What the lockstep rounds run over: the layout's arrays, the GPU of every tile, the inbox
/// capacity.
struct Lanes<'a> {
    start: &'a [u32],
    rows: &'a [u32],
    cols: &'a [u32],
    gpu_of_tile: &'a [u32],
    gpus: usize,
    cap: usize,
}

/// A message from a tile of one GPU to a tile of another.
struct Crossing {
    from: u32,
    to: u32,
    /// Tile-ordered id of the target, its new label, its tile, the inbox slot reserved.
    vertex: u32,
    label: u32,
    tile: u32,
    slot: u32,
}

/// What the lockstep rounds did, per GPU where it says so.
struct Lockstep {
    expansions: Vec<u64>,
    /// Messages sent (to any other tile).
    messages: Vec<u64>,
    arcs: Vec<u64>,
    /// `gpus x gpus`: arcs from a tile of GPU `g` to GPU `h != g` whose check read the
    /// target's label in `h`'s memory, at `g * gpus + h`.
    peer_checks: Vec<u64>,
    /// Messages to another GPU, in the order sent.
    crossings: Vec<Crossing>,
    refused: u32,
    rounds: u64,
}

/// The on-chip tiles' BFS in lockstep rounds (see the module docs): in a round every tile
/// expands its list and takes the inbox entries sent in earlier rounds. `glab` (labels by
/// tile-ordered id: the starting ones in, the result out), `inbox` (`tiles x cap` entries)
/// and `tails` end as the CUDA kernel leaves them.
fn lockstep(l: Lanes<'_>, glab: &mut [u32], inbox: &mut [u64], tails: &mut [u32]) -> Lockstep {
    let Lanes { start, rows, cols, gpu_of_tile, gpus, cap } = l;
    let tiles = start.len() - 1;
    let owner = |g: u32| start.partition_point(|&s| s <= g) - 1;
    // Per tile: labels, current list, consumed inbox entries.
    let mut lab: Vec<Vec<u32>> = Vec::with_capacity(tiles);
    let mut cur: Vec<Vec<u32>> = Vec::with_capacity(tiles);
    for t in 0..tiles {
        let (a, b) = (start[t] as usize, start[t + 1] as usize);
        let l = glab[a..b].to_vec();
        cur.push((0..(b - a) as u32).filter(|&i| l[i as usize] != u32::MAX).collect());
        lab.push(l);
    }
    let mut head = vec![0usize; tiles];
    let mut listed: Vec<Vec<bool>> = lab.iter().map(|l| vec![false; l.len()]).collect();
    let mut run = Lockstep {
        expansions: vec![0; gpus],
        messages: vec![0; gpus],
        arcs: vec![0; gpus],
        peer_checks: vec![0; gpus * gpus],
        crossings: Vec::new(),
        refused: 0,
        rounds: 0,
    };
    loop {
        let visible: Vec<usize> = (0..tiles).map(|t| (tails[t] as usize).min(cap)).collect();
        if cur.iter().all(Vec::is_empty) && (0..tiles).all(|t| head[t] == visible[t]) {
            break;
        }
        run.rounds += 1;
        for t in 0..tiles {
            let base = start[t];
            let me = gpu_of_tile[t] as usize;
            let mut next: Vec<u32> = Vec::new();
            for &v in &cur[t] {
                run.expansions[me] += 1;
                let nl = lab[t][v as usize].saturating_add(1);
                let g = (base + v) as usize;
                for &c in &cols[rows[g] as usize..rows[g + 1] as usize] {
                    run.arcs[me] += 1;
                    if c & REMOTE == 0 {
                        let c = c as usize;
                        if nl < lab[t][c] {
                            lab[t][c] = nl;
                            if !listed[t][c] {
                                listed[t][c] = true;
                                next.push(c as u32);
                            }
                        }
                    } else {
                        let w = c & !REMOTE;
                        let o = owner(w);
                        let to = gpu_of_tile[o] as usize;
                        if to != me {
                            run.peer_checks[me * gpus + to] += 1;
                        }
                        if nl < glab[w as usize] {
                            glab[w as usize] = nl;
                            run.messages[me] += 1;
                            let s = tails[o] as usize;
                            tails[o] += 1;
                            if to != me {
                                run.crossings.push(Crossing {
                                    from: me as u32,
                                    to: to as u32,
                                    vertex: w,
                                    label: nl,
                                    tile: o as u32,
                                    slot: s as u32,
                                });
                            }
                            if s < cap {
                                inbox[o * cap + s] =
                                    (u64::from(nl) << 32) | u64::from(w - start[o]);
                            } else {
                                run.refused += 1;
                            }
                        }
                    }
                }
            }
            for k in head[t]..visible[t] {
                let e = inbox[t * cap + k];
                let (l, label) = ((e & 0xffff_ffff) as usize, (e >> 32) as u32);
                if label < lab[t][l] {
                    lab[t][l] = label;
                    if !listed[t][l] {
                        listed[t][l] = true;
                        next.push(l as u32);
                    }
                }
            }
            head[t] = visible[t];
            for &v in &next {
                listed[t][v as usize] = false;
            }
            cur[t] = next;
        }
    }
    for t in 0..tiles {
        let a = start[t] as usize;
        glab[a..a + lab[t].len()].copy_from_slice(&lab[t]);
    }
    run
}

/// Whether this run takes tiles: `Ok(Ok(layout))` to run them, `Ok(Err(why))` for the
/// workers (why not tiles, for [`AtosReport::tiles_declined`]), an error where `--atos-tiles
/// on` cannot be honoured. On several GPUs (`owner[v]`:
/// the GPU of vertex `v`) each GPU tiles its own part; every GPU's tiles must fit its SMs, one
/// tile an SM, the SMs of a GPU shared by logical GPUs split evenly among them.
pub fn plan<B: Backend + ?Sized>(
    backend: &B,
    graph: &Csr,
    owner: &[u32],
    gpus: u32,
    app: &dyn AtosApp,
    options: &AtosOptions,
) -> Result<Result<TileLayout, String>, RuntimeError> {
    let on = match options.tiles {
        TileMode::Off => return Ok(Err("--atos-tiles off".into())),
        TileMode::On => true,
        TileMode::Auto => false,
    };
    let refuse = |why: String| {
        if on {
            Err(RuntimeError::Options(format!(
                "--atos-tiles on: {why}; choose --atos-tiles auto or off"
            )))
        } else {
            Ok(Err(why))
        }
    };
    if app.tile_kernel().is_none() {
        return refuse(format!("Atos {} has no tile kernel (BFS has)", app.label()));
    }
    if gpus > 1 && app.peer_tile_kernel().is_none() {
        return refuse(format!(
            "Atos {} has no tile kernel for several GPUs (BFS has); run it on one GPU",
            app.label()
        ));
    }
    if gpus > MAX_TILE_GPUS {
        return refuse(format!(
            "tiles spread over at most {MAX_TILE_GPUS} GPUs and this run has {gpus}; choose \
             --gpus {MAX_TILE_GPUS} or fewer"
        ));
    }
    if options.permute_ids || options.priority.is_some() {
        return refuse("tiles take neither --atos-permute nor the priority queue".into());
    }
    let n = graph.num_vertices();
    if n == 0 {
        return refuse("the graph has no vertex".into());
    }
    let mean = graph.num_arcs() as f64 / f64::from(n);
    if !on && mean > ROAD_MAX_MEAN_DEGREE {
        return Ok(Err(format!(
            "not road-like: {mean:.1} arcs a vertex on average, more than {ROAD_MAX_MEAN_DEGREE}"
        )));
    }
    if gpus <= 1 {
        let sms = backend.device_info(DeviceId(0)).sm_count;
        // Refuse before building: more vertices than the SMs can hold at the shared limit.
        let most = u64::from(sms) * SHARED_LIMIT_BYTES / 20;
        if u64::from(n) > most {
            return refuse(format!(
                "{n} vertices do not fit {sms} SMs' shared memory (about {most} at most)"
            ));
        }
        let layout = TileLayout::build(graph, tile_size(graph, sms, options.tile_vertices));
        return match layout.misfit(sms) {
            Some(why) => refuse(why),
            None => Ok(Ok(layout)),
        };
    }
    for a in 0..gpus {
        for b in (0..gpus).filter(|&b| b != a) {
            let path = backend.remote_path(DeviceId(a), DeviceId(b));
            if path != crate::backend::RemotePath::Peer {
                return refuse(format!(
                    "tiles on several GPUs write each other's labels and inboxes through peer \
                     pointers, and gpu{a} reaches gpu{b} by {path:?}; use GPUs with peer access \
                     (NVLink or PCIe peer-to-peer)"
                ));
            }
        }
    }
    let mut in_part = vec![0u32; gpus as usize];
    for &o in owner {
        in_part[(o as usize).min(gpus as usize - 1)] += 1;
    }
    // One tile an SM: a GPU's SMs, split among the logical GPUs that share them.
    let sms: Vec<u32> = (0..gpus).map(|g| backend.device_info(DeviceId(g)).sm_count).collect();
    let physical: Vec<u32> = (0..gpus).map(|g| backend.physical_gpu(DeviceId(g))).collect();
    let rooms = sm_rooms(&sms, &physical);
    let mut budget = Vec::with_capacity(gpus as usize);
    let mut sizes = Vec::with_capacity(gpus as usize);
    for g in 0..gpus {
        let (sms, room) = (sms[g as usize], rooms[g as usize]);
        let sharers = physical.iter().filter(|&&p| p == physical[g as usize]).count();
        let shared = if sharers > 1 {
            format!(" (its {sms} SMs shared by {sharers} logical GPUs)")
        } else {
            String::new()
        };
        let vertices = in_part[g as usize];
        if vertices == 0 {
            return refuse(format!("gpu{g} owns no vertex of the partition"));
        }
        if room == 0 {
            return refuse(format!("gpu{g} has no SM of its own for a tile{shared}"));
        }
        let most = u64::from(room) * SHARED_LIMIT_BYTES / 20;
        if u64::from(vertices) > most {
            let more = if sharers > 1 { "fewer logical GPUs a physical GPU" } else { "more GPUs" };
            return refuse(format!(
                "gpu{g}'s {vertices} vertices do not fit {room} SMs' shared memory (about {most} \
                 at most){shared}; choose {more}"
            ));
        }
        let fix = if sharers > 1 {
            "choose fewer logical GPUs a physical GPU or a larger --atos-tile-vertices"
        } else {
            "choose a larger --atos-tile-vertices or more GPUs"
        };
        budget.push((room, shared, fix));
        sizes.push(options.tile_vertices.max(vertices.div_ceil(room)));
    }
    let layout = TileLayout::build_parts(graph, owner, &sizes);
    for (g, (room, shared, fix)) in budget.iter().enumerate() {
        let t = layout.gpu_tile_count(g as u32);
        if t > *room {
            return refuse(format!(
                "gpu{g}'s {t} tiles need {t} resident CTAs, one an SM, and it has {room}{shared}; \
                 {fix}"
            ));
        }
    }
    if let Some(why) = layout.shared_misfit() {
        return refuse(why);
    }
    Ok(Ok(layout))
}

/// The SMs each GPU's tiles may take, one tile an SM, all resident at once: GPU `g` has
/// `sms[g]` SMs and runs on physical GPU `physical[g]`; the logical GPUs that share a
/// physical GPU split its SMs evenly (rounded down).
pub fn sm_rooms(sms: &[u32], physical: &[u32]) -> Vec<u32> {
    physical
        .iter()
        .zip(sms)
        .map(|(p, &s)| s / (physical.iter().filter(|&q| q == p).count() as u32).max(1))
        .collect()
}

/// What a run on tiles did (in [`AtosReport::tiles`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileReport {
    /// Tiles (CTAs).
    pub tiles: u32,
    /// Most vertices of a tile.
    pub max_vertices: u32,
    /// Most arcs of a tile.
    pub max_arcs: u32,
    /// Arcs between tiles.
    pub remote_arcs: u64,
    /// `(vertex, label)` messages between tiles.
    pub messages: u64,
    /// Rounds of the CTA that ran the most (the simulator: lockstep rounds).
    pub rounds: u64,
    /// Entries of each tile's inbox.
    pub inbox_capacity: u64,
    /// Arcs between GPUs (0 on one GPU).
    pub cross_gpu_arcs: u64,
    /// Messages sent to another GPU's tile (peer stores and atomics).
    pub cross_gpu_messages: u64,
    /// Per GPU.
    pub per_gpu: Vec<TileGpuReport>,
}

/// What one GPU's tiles did (in [`TileReport::per_gpu`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileGpuReport {
    /// Its tiles (CTAs).
    pub tiles: u32,
    /// Its vertices.
    pub vertices: u32,
    /// Expansions of its tiles.
    pub expansions: u64,
    /// Messages its tiles sent (to tiles of any GPU).
    pub messages: u64,
    /// Of those, messages to another GPU.
    pub cross_gpu_messages: u64,
}

/// Times a run whose inboxes overflowed starts again with inboxes 4 times as large.
pub const MAX_INBOX_GROWTHS: u32 = 2;

/// What one launch on tiles left behind.
struct Attempt {
    labels: Vec<u32>,
    refused: u32,
    stats: Vec<u64>,
    start_ps: u64,
    end_ps: u64,
}

/// Runs `app` on tiles (on several GPUs: [`peer`]; see [`plan`]). Inboxes sized from the layout grow 4 times
/// on overflow (up to [`MAX_INBOX_GROWTHS`] restarts, the time counted from the first start);
/// `--atos-queue-capacity` sets their size and an overflow at it is an error.
pub fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    app: &dyn AtosApp,
    options: &AtosOptions,
    layout: &TileLayout,
) -> Result<Outcome, RuntimeError> {
    if layout.gpus() > 1 {
        return peer::run(backend, graph, app, options, layout);
    }
    let Some(kernel) = app.tile_kernel() else {
        return Err(RuntimeError::Options(format!("Atos {} has no tile kernel", app.label())));
    };
    let n = graph.num_vertices() as usize;
    let owner = vec![0u32; n];
    let ag = AtosGraph::build(graph, &owner, 1);
    let init = app.init(&ag, 0);
    let mut labels = vec![u32::MAX; n];
    for (new, &value) in init.value.iter().enumerate() {
        labels[layout.new_of[ag.old_of[new] as usize] as usize] = value;
    }
    let device = DeviceId(0);
    let stream = backend.create_stream(device, StreamPriority::Normal)?;
    let fixed = [
        ("atos tile starts", HostData::U32(layout.start.clone())),
        ("atos tile rows", HostData::U32(layout.rows.clone())),
        ("atos tile arcs", HostData::U32(layout.cols.clone())),
    ];
    let mut bufs: Vec<BufferId> = Vec::new();
    let uploaded = upload(backend, stream, fixed, &mut bufs, 0);
    let job = Job { stream, kernel, layout, labels: &labels, fixed: &bufs };
    let result = uploaded.and_then(|()| attempts(backend, &job, options));
    for b in bufs {
        backend.free(b)?;
    }
    let (attempt, growth, cap) = result?;
    let values: Vec<u32> = (0..n).map(|v| attempt.labels[layout.new_of[v] as usize]).collect();
    let (expansions, messages, rounds, arcs) =
        (attempt.stats[0], attempt.stats[1], attempt.stats[2], attempt.stats[3]);
    let (ideal, ideal_is) = app.ideal_visits(graph);
    let mut resolved = *options;
    resolved.tiles = TileMode::On;
    let report = AtosReport {
        options: resolved,
        visits: expansions,
        ideal_visits: ideal,
        ideal_is,
        extra_work: expansions as f64 / ideal.max(1) as f64,
        termination_waves: 0,
        queue_capacity: vec![cap],
        queue_growths: growth,
        per_gpu: vec![AtosGpuReport {
            visits: expansions,
            tasks: expansions,
            edges: arcs,
            steps: rounds,
            launches: 1,
            ..AtosGpuReport::default()
        }],
        tiles_declined: None,
        tiles: Some(TileReport {
            tiles: layout.tiles(),
            max_vertices: layout.max_vertices,
            max_arcs: layout.max_arcs,
            remote_arcs: layout.remote_arcs,
            messages,
            rounds,
            inbox_capacity: cap,
            cross_gpu_arcs: 0,
            cross_gpu_messages: 0,
            per_gpu: vec![TileGpuReport {
                tiles: layout.tiles(),
                vertices: n as u32,
                expansions,
                messages,
                cross_gpu_messages: 0,
            }],
        }),
    };
    Ok(Outcome {
        values,
        aux: None,
        compute_time_ps: attempt.end_ps - attempt.start_ps,
        work: WorkReport {
            edges_visited: arcs,
            work_items: expansions,
            messages: 0,
            bytes_sent: 0,
            frontier_sizes: Vec::new(),
        },
        supersteps: 0,
        groute: None,
        gum: None,
        atos: Some(report),
    })
}

/// Allocates and uploads `data` on gpu0, appending the buffers to `bufs` (which the caller
/// frees, also on error); tokens from `first_token` on.
fn upload<B: Backend + ?Sized, const N: usize>(
    backend: &mut B,
    stream: crate::backend::StreamId,
    data: [(&str, HostData); N],
    bufs: &mut Vec<BufferId>,
    first_token: u64,
) -> Result<(), RuntimeError> {
    upload_to(backend, DeviceId(0), stream, data, bufs, first_token)
}

/// [`upload`] on `device` (`stream` one of its streams).
fn upload_to<B: Backend + ?Sized, const N: usize>(
    backend: &mut B,
    device: DeviceId,
    stream: crate::backend::StreamId,
    data: [(&str, HostData); N],
    bufs: &mut Vec<BufferId>,
    first_token: u64,
) -> Result<(), RuntimeError> {
    let mut ups = Vec::with_capacity(N);
    for (i, (label, d)) in data.into_iter().enumerate() {
        let b = backend.alloc(device, d.elem(), d.len().max(1), label)?;
        bufs.push(b);
        let t = Token(first_token + i as u64 + 1);
        backend.write_from_host(stream, b, 0, d, Some(t))?;
        ups.push(t);
    }
    wait_all(backend, &ups)?;
    Ok(())
}

/// What every launch of a run shares.
struct Job<'a> {
    stream: crate::backend::StreamId,
    kernel: &'static str,
    layout: &'a TileLayout,
    /// Starting labels by tile-ordered id.
    labels: &'a [u32],
    /// The layout's buffers on gpu0 (starts, rows, arcs).
    fixed: &'a [BufferId],
}

/// Launches until the inboxes hold every message: the attempt, the growths it took and the
/// inbox capacity it ran with. Time counts from the first launch.
fn attempts<B: Backend + ?Sized>(
    backend: &mut B,
    job: &Job<'_>,
    options: &AtosOptions,
) -> Result<(Attempt, u32, u64), RuntimeError> {
    grow_inboxes(backend, job.layout, options, |backend, cap, mine| {
        let attempt = launch(backend, job, cap, mine)?;
        Ok((attempt.refused, attempt.start_ps, attempt))
    })
    .map(|(mut attempt, start_ps, growth, cap)| {
        attempt.start_ps = start_ps;
        (attempt, growth, cap)
    })
}

/// The growth loop of one GPU's and several GPUs' runs: launches (`launch(backend, cap,
/// mine)`, one attempt with inboxes of `cap` entries, its buffers put into `mine` and freed
/// here, giving its refused messages, its start and itself) until the inboxes hold every
/// message. Inboxes sized from the layout grow 4 times on overflow, at most
/// [`MAX_INBOX_GROWTHS`] times; `--atos-queue-capacity` fixes them, and an overflow at it is
/// an error. Every GPU's inboxes must fit half its memory. Gives the last attempt, the first
/// attempt's start (time counts from it), the growths and the capacity.
pub(super) fn grow_inboxes<B: Backend + ?Sized, A>(
    backend: &mut B,
    layout: &TileLayout,
    options: &AtosOptions,
    mut launch: impl FnMut(&mut B, u64, &mut Vec<BufferId>) -> Result<(u32, u64, A), RuntimeError>,
) -> Result<(A, u64, u32, u64), RuntimeError> {
    let mut first_start = None;
    for growth in 0..=MAX_INBOX_GROWTHS {
        let cap = options.queue_capacity.unwrap_or_else(|| layout.inbox_capacity(4u64.pow(growth)));
        for g in 0..layout.gpus() {
            let tiles = layout.gpu_tile_count(g);
            let inbox_len = u64::from(tiles).saturating_mul(cap);
            let memory = backend.device_info(DeviceId(g)).memory_bytes;
            if cap == 0 || cap > u64::from(u32::MAX) || inbox_len.saturating_mul(8) > memory / 2 {
                return Err(RuntimeError::Options(format!(
                    "Atos tiles: gpu{g}'s {tiles} inboxes of {cap} entries cannot be held (it has \
                     {memory} bytes); choose another --atos-queue-capacity, or --atos-tiles off"
                )));
            }
        }
        let mut mine = Vec::new();
        let attempt = launch(backend, cap, &mut mine);
        for b in mine {
            backend.free(b)?;
        }
        let (refused, start_ps, attempt) = attempt?;
        let first = *first_start.get_or_insert(start_ps);
        if refused == 0 {
            return Ok((attempt, first, growth, cap));
        }
        if options.queue_capacity.is_some() || growth == MAX_INBOX_GROWTHS {
            return Err(RuntimeError::Options(format!(
                "Atos tiles: inboxes of {cap} entries refused {refused} messages (counted, \
                 nothing dropped silently; {growth} growths); choose a larger \
                 --atos-queue-capacity (e.g. {}), or --atos-tiles off",
                cap.saturating_mul(4)
            )));
        }
    }
    unreachable!("the last growth returns")
}

/// One launch with inboxes of `cap` entries; its buffers go into `mine` (freed by the caller).
fn launch<B: Backend + ?Sized>(
    backend: &mut B,
    job: &Job<'_>,
    cap: u64,
    mine: &mut Vec<BufferId>,
) -> Result<Attempt, RuntimeError> {
    upload(backend, job.stream, job.layout.run_buffers(job.labels, cap), mine, 100)?;
    let mut buffers = job.fixed.to_vec();
    buffers.extend_from_slice(mine);
    let start_ps = backend.now_ps();
    let l = Launch {
        kernel: job.kernel,
        buffers: buffers.clone(),
        scalars: vec![Scalar::U32(job.layout.tiles()), Scalar::U32(cap as u32)],
        work_items: job.labels.len() as u64,
    };
    let done = Token(200);
    backend.launch_with(job.stream, l, job.layout.launch_config(), Some(done))?;
    wait_all(backend, &[done])?;
    let end_ps = backend.now_ps();
    let reads = [slot::LABELS, slot::CTL, slot::STATS];
    let tokens: Vec<Token> = (0..reads.len()).map(|i| Token(300 + i as u64)).collect();
    for (&s, &t) in reads.iter().zip(&tokens) {
        let (_, len) = backend.buffer_shape(buffers[s])?;
        backend.read_to_host(job.stream, BufferSlice::new(buffers[s], 0, len), t)?;
    }
    let mut by_token = std::collections::BTreeMap::new();
    for c in wait_all(backend, &tokens)? {
        let CompletionKind::HostRead(data) = c.kind else {
            return Err(BackendError::Usage("Atos tiles: a read returned no data".into()).into());
        };
        by_token.insert(c.token, data);
    }
    let mut take = |t: &Token| {
        by_token
            .remove(t)
            .ok_or_else(|| BackendError::Usage("Atos tiles: a read did not complete".into()))
    };
    match (take(&tokens[0])?, take(&tokens[1])?, take(&tokens[2])?) {
        (HostData::U32(labels), HostData::U32(ctl), HostData::U64(stats)) if stats.len() >= 4 => {
            Ok(Attempt {
                labels,
                refused: ctl.get(1).copied().unwrap_or(0),
                stats,
                start_ps,
                end_ps,
            })
        }
        _ => Err(BackendError::Usage("Atos tiles: a read of the wrong type".into()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::sm_rooms;

    #[test]
    fn logical_gpus_split_their_physical_gpus_sms() {
        // Two real GPUs: each its own SMs.
        assert_eq!(sm_rooms(&[132, 132], &[0, 1]), vec![132, 132]);
        // Two logical GPUs on one: half each, so that every tile of both is resident.
        assert_eq!(sm_rooms(&[132, 132], &[0, 0]), vec![66, 66]);
        // Three on one, rounded down; four over two physical GPUs.
        assert_eq!(sm_rooms(&[132; 3], &[0, 0, 0]), vec![44, 44, 44]);
        assert_eq!(sm_rooms(&[132; 4], &[0, 1, 0, 1]), vec![66; 4]);
    }
}
