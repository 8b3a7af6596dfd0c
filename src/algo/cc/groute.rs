//! Topology-driven connected components (seed 000 section 5.1.4, Fig. 15): no worklist,
//! two routers.
//!
//! - The input is an edge list (each undirected edge once, each arc of a directed graph
//!   once; components are weak). Router `edges` scatters it from the host to the GPUs in
//!   segments of [`CcOptions::segment_edges`], each to the first GPU with a free receive
//!   buffer. The list lies in mapped (pinned) host memory, allocated and filled once
//!   before the clock starts as the other runtimes upload their graphs before theirs, so
//!   every packet is one DMA ([`Backend::copy`]) from it; a backend without mapped memory
//!   gets the packets as host writes instead ([`CcOutcome::edges_pinned`]).
//! - Every GPU keeps a parent array over all vertices (identity at the start) and applies
//!   Hook and Compress (Soman et al.'s pointer jumping, in its adaptive atomic form) to each
//!   segment as it arrives: `groute_cc_hook` joins the trees of every edge's endpoints by
//!   hooking the higher root under the lower one with a compare-and-swap (retrying when
//!   another thread got there first; finds halve paths as they go), so one pass converges
//!   the segment locally, and `groute_cc_compress_segment` points the segment's endpoints
//!   at their roots (pointer jumping over the vertices the segment touched: its cost
//!   follows the segment, not the vertex count). Parents only ever point to lower ids, so
//!   every tree's root is the smallest vertex id in it.
//! - When the edge router has shut down and a GPU's segments are done, `groute_cc_compress`
//!   points every vertex at its root, and the GPU merges through router `reduce`, whose
//!   [`Policy::Tree`] comes from [`reduction_tree`] over the path bandwidths: siblings are
//!   paired widest-link first. A child sends its (compressed) parent array to its parent
//!   GPU, which hooks `(v, parent_child[v])` as edges packet by packet (`groute_cc_merge`);
//!   a GPU compresses and sends upward once its own edges and all of its children are
//!   merged. GPU 0, the root, sends the labels to the host over a link.

use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, DeviceId, ElemType, HostData, KernelContext,
    KernelDef, KernelRegistry, Launch, Scalar, StreamId, StreamPriority, Token,
};
use crate::graph::Csr;
use crate::runtime::RuntimeError;
use crate::runtime::groute::context::{
    Context, Endpoint, Event, LinkConfig, LinkTraffic, Received, ReceivedData,
};
use crate::runtime::groute::context::{RouterId, Segment, SegmentData};
use crate::runtime::groute::policy::{Policy, reduction_tree};
use std::collections::BTreeMap;

/// Kernel: `parent[v] = v`.
pub const INIT_KERNEL: &str = "groute_cc_init";
/// Kernel: hook the trees of every edge of a segment.
pub const HOOK_KERNEL: &str = "groute_cc_hook";
/// Kernel: hook `(offset + i, packet[i])` for a packet of another GPU's parent array.
pub const MERGE_KERNEL: &str = "groute_cc_merge";
/// Kernel: point every vertex at its root.
pub const COMPRESS_KERNEL: &str = "groute_cc_compress";
/// Kernel: point the endpoints of a segment's edges at their roots.
pub const COMPRESS_SEGMENT_KERNEL: &str = "groute_cc_compress_segment";

/// Options of a CC run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcOptions {
    /// Edges per segment scattered to the GPUs.
    pub segment_edges: usize,
    /// Receive buffers per GPU link (2: double buffering).
    pub buffers: u32,
    /// Elements (vertices) per packet when parent arrays move between GPUs and to the host.
    pub merge_packet_elems: usize,
}

impl Default for CcOptions {
    /// 256 Ki edges (2 MiB) per segment, double buffering, 1 Mi-vertex merge packets.
    fn default() -> Self {
        CcOptions { segment_edges: 1 << 18, buffers: 2, merge_packet_elems: 1 << 20 }
    }
}

/// What a CC run produced and how it went.
#[derive(Clone, Debug, PartialEq)]
pub struct CcOutcome {
    /// Component label of every vertex: the smallest vertex id of its component.
    pub labels: Vec<u32>,
    /// From the start until the host holds the labels, in picoseconds.
    pub compute_time_ps: u64,
    /// Edge segments each GPU hooked.
    pub segments_per_gpu: Vec<u64>,
    /// Edges each GPU hooked.
    pub edges_per_gpu: Vec<u64>,
    /// Whether the edge segments moved by DMA from mapped (pinned) host memory; `false`
    /// when the backend has none and they went as host writes.
    pub edges_pinned: bool,
    /// Traffic of every link (`edges` outputs, `reduce` outputs, then GPU 0 to the host).
    pub traffic: Vec<LinkTraffic>,
    /// Rounds of the reduction tree (0 on one GPU).
    pub merge_rounds: u32,
    /// The reduction tree's `(child, parent)` pairs, round by round.
    pub merge_tree: Vec<Vec<(u32, u32)>>,
}

/// Registers the five CC kernels.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: INIT_KERNEL,
        contract: "buffers [parent u32[n]]: parent[v] = v for every v",
        sim: init_kernel,
        cuda_name: Some("groute_cc_init"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: HOOK_KERNEL,
        contract: "buffers [parent u32[n], edges u32[2m]], scalars [len u64 (elements, even)]: \
                   for every pair (u, v) of edges[0..len], find the roots ru, rv of u and v \
                   (path halving) and, until they are equal, hook max(ru, rv) under \
                   min(ru, rv) with a compare-and-swap on parent[max] (retry on failure); \
                   afterwards u and v share a root and parent[x] <= x for every x",
        sim: hook_kernel,
        cuda_name: Some("groute_cc_hook"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: MERGE_KERNEL,
        contract: "buffers [parent u32[n], packet u32[len]], scalars [offset u64, len u64]: \
                   hooks (offset + i, packet[i]) as an edge for every i < len, as \
                   groute_cc_hook (another GPU's parent array taken as a graph)",
        sim: merge_kernel,
        cuda_name: Some("groute_cc_merge"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: COMPRESS_KERNEL,
        contract: "buffers [parent u32[n]]: pointer jumping until every vertex points at its \
                   root (parent[v] = parent[parent[v]] until stable)",
        sim: compress_kernel,
        cuda_name: Some("groute_cc_compress"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: COMPRESS_SEGMENT_KERNEL,
        contract: "buffers [parent u32[n], edges u32[2m]], scalars [len u64]: for every \
                   endpoint x in edges[0..len], pointer jumping until parent[x] is a root \
                   (every vertex on the way is pointed at the root too)",
        sim: compress_segment_kernel,
        cuda_name: Some("groute_cc_compress_segment"),
        remote_args: &[],
    });
}

fn kernel_error(kernel: &str, message: String) -> BackendError {
    BackendError::Kernel { kernel: kernel.into(), message }
}

fn init_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let [parent] = ctx.buffers::<1>()?;
    let parent = parent.as_u32_mut()?;
    for (v, p) in parent.iter_mut().enumerate() {
        *p = v as u32;
    }
    let n = parent.len() as u64;
    ctx.effects.items = n;
    ctx.effects.bytes_written = 4 * n;
    Ok(())
}

/// Counts of hooking a batch of edges.
#[derive(Default)]
struct HookCounts {
    edges: u64,
    hooks: u64,
    hops: u64,
}

fn find(parent: &mut [u32], mut x: u32, counts: &mut HookCounts) -> u32 {
    loop {
        let p = parent[x as usize];
        if p == x {
            return x;
        }
        let gp = parent[p as usize];
        parent[x as usize] = gp; // path halving keeps parent[x] <= x
        counts.hops += 1;
        x = gp;
    }
}

/// Joins the trees of `u` and `v`, the higher root under the lower.
fn hook(parent: &mut [u32], u: u32, v: u32, counts: &mut HookCounts) {
    counts.edges += 1;
    let (ru, rv) = (find(parent, u, counts), find(parent, v, counts));
    if ru != rv {
        parent[ru.max(rv) as usize] = ru.min(rv);
        counts.hooks += 1;
    }
}

fn report(ctx: &mut KernelContext<'_>, counts: &HookCounts, edge_bytes: u64) {
    ctx.effects.edges = counts.edges;
    ctx.effects.atomics = counts.hooks;
    ctx.effects.bytes_read = edge_bytes * counts.edges + 4 * (2 * counts.edges + counts.hops);
    ctx.effects.bytes_written = 4 * (counts.hooks + counts.hops);
}

fn hook_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let len = ctx.scalar_u64(0)? as usize;
    let kernel = ctx.kernel;
    let [parent, edges] = ctx.buffers::<2>()?;
    let parent = parent.as_u32_mut()?;
    let n = parent.len();
    let edges = edges
        .as_u32()?
        .get(..len)
        .ok_or_else(|| kernel_error(kernel, format!("len {len} exceeds the edge buffer")))?;
    if !len.is_multiple_of(2) {
        return Err(kernel_error(kernel, format!("len {len} is odd: edges are pairs")));
    }
    let mut counts = HookCounts::default();
    for pair in edges.chunks_exact(2) {
        let (u, v) = (pair[0], pair[1]);
        if u as usize >= n || v as usize >= n {
            return Err(kernel_error(kernel, format!("edge ({u}, {v}) is outside {n} vertices")));
        }
        hook(parent, u, v, &mut counts);
    }
    report(ctx, &counts, 8);
    Ok(())
}

fn merge_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let offset = ctx.scalar_u64(0)? as usize;
    let len = ctx.scalar_u64(1)? as usize;
    let kernel = ctx.kernel;
    let [parent, packet] = ctx.buffers::<2>()?;
    let parent = parent.as_u32_mut()?;
    let n = parent.len();
    let packet = packet
        .as_u32()?
        .get(..len)
        .ok_or_else(|| kernel_error(kernel, format!("len {len} exceeds the packet buffer")))?;
    if offset + len > n {
        return Err(kernel_error(kernel, format!("{offset} + {len} exceeds {n} vertices")));
    }
    let mut counts = HookCounts::default();
    for (i, &p) in packet.iter().enumerate() {
        if p as usize >= n {
            return Err(kernel_error(kernel, format!("parent {p} is outside {n} vertices")));
        }
        hook(parent, (offset + i) as u32, p, &mut counts);
    }
    report(ctx, &counts, 4);
    Ok(())
}

fn compress_segment_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let len = ctx.scalar_u64(0)? as usize;
    let kernel = ctx.kernel;
    let [parent, edges] = ctx.buffers::<2>()?;
    let parent = parent.as_u32_mut()?;
    let n = parent.len();
    let edges = edges
        .as_u32()?
        .get(..len)
        .ok_or_else(|| kernel_error(kernel, format!("len {len} exceeds the edge buffer")))?;
    let (mut hops, mut written) = (0u64, 0u64);
    for &x in edges {
        if x as usize >= n {
            return Err(kernel_error(kernel, format!("vertex {x} is outside {n} vertices")));
        }
        let mut root = x;
        while parent[root as usize] != root {
            root = parent[root as usize];
            hops += 1;
        }
        let mut y = x;
        while parent[y as usize] != root && y != root {
            let next = parent[y as usize];
            parent[y as usize] = root;
            written += 1;
            y = next;
        }
    }
    ctx.effects.items = len as u64;
    ctx.effects.bytes_read = 4 * (len as u64 + hops);
    ctx.effects.bytes_written = 4 * written;
    Ok(())
}

fn compress_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let kernel = ctx.kernel;
    let [parent] = ctx.buffers::<1>()?;
    let parent = parent.as_u32_mut()?;
    let mut changed = 0u64;
    // parent[v] <= v, so in increasing order parent[parent[v]] is already a root.
    for v in 0..parent.len() {
        let p = parent[v] as usize;
        if p > v {
            return Err(kernel_error(kernel, format!("parent[{v}] = {p} points upwards")));
        }
        let root = parent[p];
        if root != parent[v] {
            parent[v] = root;
            changed += 1;
        }
    }
    let n = parent.len() as u64;
    ctx.effects.items = n;
    ctx.effects.bytes_read = 8 * n;
    ctx.effects.bytes_written = 4 * changed;
    Ok(())
}

/// The edge list the host scatters: `[u0, v0, u1, v1, ...]`, each undirected edge once
/// (`u < v`), each arc of a directed graph once, self-loops left out.
pub fn edge_list(graph: &Csr) -> Vec<u32> {
    let mut edges = Vec::new();
    for u in 0..graph.num_vertices() {
        for &v in graph.neighbors(u) {
            if u < v || (graph.is_directed() && u > v) {
                edges.push(u);
                edges.push(v);
            }
        }
    }
    edges
}

/// A GPU's state.
struct Gpu {
    stream: StreamId,
    parent: BufferId,
    /// Kernels in flight.
    in_flight: u32,
    input_closed: bool,
    /// Children whose arrays are not yet fully merged.
    children_left: u32,
    /// Hooked or merged since the last full compress.
    dirty: bool,
    /// Elements merged so far, per child.
    merged: BTreeMap<u32, usize>,
    sent: bool,
    segments: u64,
    edges: u64,
}

enum Pending {
    Init { gpu: usize },
    Hook { gpu: usize },
    CompressSegment { gpu: usize, received: Received },
    Merge { gpu: usize, child: u32, received: Received },
    Compress { gpu: usize },
}

/// Connected components of `graph` (weak for a directed graph) on all of `backend`'s GPUs
/// (see the module docs).
pub fn connected_components<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    options: &CcOptions,
) -> Result<CcOutcome, RuntimeError> {
    check(backend, graph, options)?;
    let n = graph.num_vertices() as usize;
    let gpus = backend.device_count() as usize;
    let tree = reduction_tree(gpus as u32, |a, b| {
        backend.path_bandwidth_bytes_per_s(DeviceId(a), DeviceId(b))
    });
    let pairs: Vec<(u32, u32)> = tree.iter().flatten().copied().collect();
    // Host set-up before the clock starts, as BSP and GUM upload their graphs before theirs:
    // the edge list goes into pinned host memory once, and the timed scatter is its DMAs.
    let (edges, edge_buffer) = pin_edges(backend, edge_list(graph))?;
    let start_ps = backend.now_ps();
    let mut ctx = Context::new(backend);
    let devices = ctx.devices();
    let mut pending: BTreeMap<Token, Pending> = BTreeMap::new();
    let mut state = Vec::with_capacity(gpus);
    for g in 0..gpus {
        let device = DeviceId(g as u32);
        let stream = ctx.backend.create_stream(device, StreamPriority::Normal)?;
        let parent = ctx.backend.alloc(device, ElemType::U32, n, "cc parent array")?;
        let t = ctx.token();
        ctx.backend.launch(stream, launch(INIT_KERNEL, vec![parent], vec![], n), Some(t))?;
        pending.insert(t, Pending::Init { gpu: g });
        let children = pairs.iter().filter(|&&(_, p)| p == g as u32).count() as u32;
        state.push(Gpu {
            stream,
            parent,
            in_flight: 1,
            input_closed: false,
            children_left: children,
            dirty: false,
            merged: BTreeMap::new(),
            sent: false,
            segments: 0,
            edges: 0,
        });
    }
    let edge_config = LinkConfig {
        elem: ElemType::U32,
        packet_elems: 2 * options.segment_edges,
        buffers: options.buffers,
    };
    let scatter = ctx.router(
        vec![Endpoint::Host],
        devices.clone(),
        edge_config,
        Box::new(Policy::AnyAvailable),
    )?;
    let edge_links: Vec<_> = devices.iter().map(|&d| ctx.router_link(scatter, d)).collect();
    let merge_config = LinkConfig {
        elem: ElemType::U32,
        packet_elems: options.merge_packet_elems,
        buffers: options.buffers,
    };
    let reduce = if gpus > 1 {
        let parent = pairs.iter().map(|&(c, p)| (Endpoint::gpu(c), Endpoint::gpu(p))).collect();
        let receivers: Vec<Endpoint> = devices
            .iter()
            .copied()
            .filter(|d| pairs.iter().any(|&(_, p)| Endpoint::gpu(p) == *d))
            .collect();
        Some(ctx.router(
            devices.clone(),
            receivers,
            merge_config,
            Box::new(Policy::Tree { parent }),
        )?)
    } else {
        None
    };
    let host_link = ctx.link(devices[0], Endpoint::Host, merge_config)?;

    ctx.route(scatter, Endpoint::Host, Segment::new(edges, 0))?;
    ctx.shutdown_input(scatter, Endpoint::Host)?;

    let mut labels = vec![u32::MAX; n];
    let mut delivered = 0usize;
    let mut done = false;
    let mut end_ps = start_ps;
    while let Some(event) = ctx.next_event()? {
        match event {
            Event::Received(r) if r.link == host_link => {
                let ReceivedData::Host(HostData::U32(values)) = r.data else {
                    return Err(unexpected("labels without u32 data"));
                };
                let slot = labels
                    .get_mut(r.offset..r.offset + values.len())
                    .ok_or_else(|| unexpected("labels beyond the vertex count"))?;
                slot.copy_from_slice(&values);
                delivered += values.len();
            }
            Event::Received(r) => {
                let g = ctx.link_destination(r.link).device().map_or(0, |d| d.0 as usize);
                let ReceivedData::Device(data) = r.data.clone() else {
                    return Err(unexpected("a GPU packet outside device memory"));
                };
                let s = &mut state[g];
                let t = ctx.token();
                if edge_links[g] == Some(r.link) {
                    s.segments += 1;
                    s.edges += r.len as u64 / 2;
                    let buffers = vec![s.parent, data.buffer];
                    let len = vec![Scalar::U64(r.len as u64)];
                    let l = launch(HOOK_KERNEL, buffers.clone(), len.clone(), r.len / 2);
                    ctx.backend.launch(s.stream, l, Some(t))?;
                    pending.insert(t, Pending::Hook { gpu: g });
                    let c = ctx.token();
                    let l = launch(COMPRESS_SEGMENT_KERNEL, buffers, len, r.len);
                    ctx.backend.launch(s.stream, l, Some(c))?;
                    pending.insert(c, Pending::CompressSegment { gpu: g, received: r });
                    s.in_flight += 2;
                    s.dirty = true;
                } else {
                    let child = r.source.device().map_or(0, |d| d.0);
                    let l = launch(
                        MERGE_KERNEL,
                        vec![s.parent, data.buffer],
                        vec![Scalar::U64(r.offset as u64), Scalar::U64(r.len as u64)],
                        r.len,
                    );
                    ctx.backend.launch(s.stream, l, Some(t))?;
                    pending.insert(t, Pending::Merge { gpu: g, child, received: r });
                    s.in_flight += 1;
                    s.dirty = true;
                }
            }
            Event::Completion(c) => {
                let gpu = match pending.remove(&c.token) {
                    Some(Pending::Init { gpu })
                    | Some(Pending::Compress { gpu })
                    | Some(Pending::Hook { gpu }) => gpu,
                    Some(Pending::CompressSegment { gpu, received }) => {
                        ctx.release(&received)?;
                        gpu
                    }
                    Some(Pending::Merge { gpu, child, received }) => {
                        ctx.release(&received)?;
                        let s = &mut state[gpu];
                        let merged = s.merged.entry(child).or_default();
                        *merged += received.len;
                        if *merged == n {
                            s.children_left -= 1;
                        }
                        gpu
                    }
                    None => return Err(unexpected("a completion CC never asked for")),
                };
                state[gpu].in_flight -= 1;
                send_up(&mut ctx, &mut state[gpu], gpu, n, reduce, host_link, &mut pending)?;
            }
            Event::Shutdown { link } if link == host_link => {
                done = true;
                end_ps = ctx.backend.now_ps();
            }
            Event::Shutdown { link } => {
                if let Some(g) = edge_links.iter().position(|&l| l == Some(link)) {
                    state[g].input_closed = true;
                    send_up(&mut ctx, &mut state[g], g, n, reduce, host_link, &mut pending)?;
                }
            }
            Event::Sent { .. } => {}
        }
    }
    if !done || delivered != n {
        return Err(BackendError::Deadlock(format!(
            "connected components stopped with {delivered} of {n} labels at the host"
        ))
        .into());
    }
    for s in &state {
        ctx.backend.free(s.parent)?;
    }
    if let Some(buffer) = edge_buffer {
        ctx.backend.free(buffer)?;
    }
    Ok(CcOutcome {
        labels,
        compute_time_ps: end_ps - start_ps,
        segments_per_gpu: state.iter().map(|s| s.segments).collect(),
        edges_per_gpu: state.iter().map(|s| s.edges).collect(),
        edges_pinned: edge_buffer.is_some(),
        traffic: ctx.traffic(),
        merge_rounds: tree.len() as u32,
        merge_tree: tree,
    })
}

/// The edge list as the data the scatter sends: in mapped (pinned) host memory, which the
/// packets leave by DMA, with that buffer to free afterwards; or, where the backend has no
/// mapped memory, as host data, each packet then a host write (staged on CUDA).
fn pin_edges<B: Backend + ?Sized>(
    backend: &mut B,
    edges: Vec<u32>,
) -> Result<(SegmentData, Option<BufferId>), RuntimeError> {
    let len = edges.len();
    let buffer = match backend.alloc_mapped(ElemType::U32, len, "cc edge list") {
        Ok(buffer) => buffer,
        Err(BackendError::Unavailable(_)) => {
            return Ok((SegmentData::Host(HostData::U32(edges)), None));
        }
        Err(e) => return Err(e.into()),
    };
    if let Err(e) = backend.write_mapped(buffer, 0, HostData::U32(edges)) {
        let _ = backend.free(buffer);
        return Err(e.into());
    }
    Ok((SegmentData::Device(BufferSlice::new(buffer, 0, len)), Some(buffer)))
}

fn check<B: Backend + ?Sized>(
    backend: &B,
    graph: &Csr,
    options: &CcOptions,
) -> Result<(), RuntimeError> {
    if backend.device_count() == 0 {
        return Err(RuntimeError::Options(
            "connected components need at least one GPU and the backend has none; choose 1 or \
             more GPUs"
                .into(),
        ));
    }
    if graph.num_vertices() == 0 {
        return Err(RuntimeError::Options(
            "the graph has no vertices: there are no components to label; load a graph with \
             at least one vertex"
                .into(),
        ));
    }
    if options.segment_edges == 0 || options.buffers == 0 || options.merge_packet_elems == 0 {
        return Err(RuntimeError::Options(format!(
            "CC segment size ({} edges), receive buffers ({}) and merge packet size ({} \
             vertices) must each be at least 1",
            options.segment_edges, options.buffers, options.merge_packet_elems
        )));
    }
    Ok(())
}

fn launch(
    kernel: &'static str,
    buffers: Vec<BufferId>,
    scalars: Vec<Scalar>,
    items: usize,
) -> Launch {
    Launch { kernel, buffers, scalars, work_items: items as u64 }
}

/// Compresses, then sends a GPU's converged parent array up the reduction tree (GPU 0: to
/// the host) once its edges are done and every child is merged.
#[allow(clippy::too_many_arguments)]
fn send_up<B: Backend + ?Sized>(
    ctx: &mut Context<'_, B>,
    s: &mut Gpu,
    gpu: usize,
    n: usize,
    reduce: Option<RouterId>,
    host_link: crate::runtime::groute::context::LinkId,
    pending: &mut BTreeMap<Token, Pending>,
) -> Result<(), RuntimeError> {
    if s.sent || !s.input_closed || s.in_flight > 0 || s.children_left > 0 {
        return Ok(());
    }
    if s.dirty {
        s.dirty = false;
        let t = ctx.token();
        ctx.backend.launch(
            s.stream,
            launch(COMPRESS_KERNEL, vec![s.parent], vec![], n),
            Some(t),
        )?;
        pending.insert(t, Pending::Compress { gpu });
        s.in_flight += 1;
        return Ok(());
    }
    s.sent = true;
    let me = Endpoint::gpu(gpu as u32);
    let data = SegmentData::Device(BufferSlice::new(s.parent, 0, n));
    if gpu == 0 {
        ctx.send(host_link, Segment::new(data, 0))?;
        ctx.shutdown(host_link)?;
    } else if let Some(reduce) = reduce {
        ctx.route(reduce, me, Segment::new(data, gpu as u64))?;
    }
    if let Some(reduce) = reduce {
        ctx.shutdown_input(reduce, me)?;
    }
    Ok(())
}

fn unexpected(what: &str) -> RuntimeError {
    BackendError::Usage(format!("connected components received {what} (a runtime bug)")).into()
}

impl From<CcOutcome> for crate::runtime::Outcome {
    fn from(outcome: CcOutcome) -> Self {
        let edges: u64 = outcome.edges_per_gpu.iter().sum();
        let per_gpu = outcome
            .edges_per_gpu
            .iter()
            .map(|&e| crate::runtime::groute::worklist::GpuWork {
                work_items: e,
                ..Default::default()
            })
            .collect();
        crate::runtime::Outcome {
            gum: None,
            compute_time_ps: outcome.compute_time_ps,
            work: crate::runtime::WorkReport {
                edges_visited: edges,
                work_items: edges,
                messages: outcome.segments_per_gpu.iter().sum(),
                bytes_sent: outcome.traffic.iter().map(|l| l.bytes).sum(),
                frontier_sizes: Vec::new(),
            },
            supersteps: 0,
            groute: Some(crate::runtime::GrouteReport {
                priority_raises: 0,
                priority_delta: None,
                dropped: 0,
                growths: Vec::new(),
                ring: Vec::new(),
                per_gpu,
                links: outcome.traffic,
            }),
            values: outcome.labels,
            aux: None,
            atos: None,
        }
    }
}

/// Groute's topology-driven CC as a program on the Groute runtime.
pub struct GrouteCc;

impl crate::runtime::groute::GrouteProgram for GrouteCc {
    fn run(
        &self,
        backend: &mut dyn crate::backend::Backend,
        graph: &Csr,
        _owner: &[u32],
        _gpus: u32,
        options: &crate::runtime::groute::worklist::WorklistOptions,
    ) -> Result<crate::runtime::Outcome, RuntimeError> {
        let options = CcOptions { buffers: options.buffers, ..CcOptions::default() };
        Ok(connected_components(backend, graph, &options)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BufferId, KernelEffects};

    fn call(
        f: crate::backend::kernel::SimKernelFn,
        buffers: &mut [HostData],
        scalars: &[Scalar],
    ) -> KernelEffects {
        let ids: Vec<BufferId> = (0..buffers.len() as u32).map(BufferId).collect();
        let mut ctx = KernelContext::new("test", buffers, &ids, scalars);
        f(&mut ctx).expect("kernel");
        std::mem::take(&mut ctx.effects)
    }

    #[test]
    fn hook_compress_and_merge_give_every_vertex_its_components_smallest_id() {
        let n = 8;
        let mut gpu_a = vec![HostData::zeros(ElemType::U32, n)];
        call(init_kernel, &mut gpu_a, &[]);
        // Edges 7-5, 5-6, 2-3 on one GPU; 6-2 and 0-1 on another.
        let edges = HostData::U32(vec![7, 5, 5, 6, 2, 3]);
        gpu_a.push(edges);
        let e = call(hook_kernel, &mut gpu_a, &[Scalar::U64(6)]);
        assert_eq!((e.edges, e.atomics), (3, 3));
        call(compress_segment_kernel, &mut gpu_a, &[Scalar::U64(6)]);
        gpu_a.truncate(1);
        call(compress_kernel, &mut gpu_a, &[]);
        assert_eq!(gpu_a[0].as_u32().expect("u32"), &[0, 1, 2, 2, 4, 5, 5, 5]);
        let mut gpu_b = vec![HostData::zeros(ElemType::U32, n)];
        call(init_kernel, &mut gpu_b, &[]);
        gpu_b.push(HostData::U32(vec![6, 2, 0, 1]));
        call(hook_kernel, &mut gpu_b, &[Scalar::U64(4)]);
        gpu_b.truncate(1);
        // Merge A's array into B in two packets.
        let a = gpu_a[0].as_u32().expect("u32").to_vec();
        for (offset, chunk) in [(0usize, &a[..5]), (5, &a[5..])] {
            gpu_b.push(HostData::U32(chunk.to_vec()));
            let scalars = [Scalar::U64(offset as u64), Scalar::U64(chunk.len() as u64)];
            call(merge_kernel, &mut gpu_b, &scalars);
            gpu_b.truncate(1);
        }
        call(compress_kernel, &mut gpu_b, &[]);
        assert_eq!(gpu_b[0].as_u32().expect("u32"), &[0, 0, 2, 2, 4, 2, 2, 2]);
    }

    #[test]
    fn kernels_reject_out_of_range_input() {
        let mut buffers = vec![HostData::zeros(ElemType::U32, 3), HostData::U32(vec![0, 9])];
        let ids = [BufferId(0), BufferId(1)];
        let scalars = [Scalar::U64(2)];
        let mut ctx = KernelContext::new(HOOK_KERNEL, &mut buffers, &ids, &scalars);
        let err = hook_kernel(&mut ctx).expect_err("vertex 9 of 3").to_string();
        assert!(err.contains("edge (0, 9) is outside 3 vertices"), "{err}");
        let scalars = [Scalar::U64(1)];
        ctx.scalars = &scalars;
        let err = hook_kernel(&mut ctx).expect_err("odd").to_string();
        assert!(err.contains("odd"), "{err}");
    }

    #[test]
    fn the_edge_list_holds_each_undirected_edge_once_and_every_directed_arc() {
        let undirected =
            Csr::from_edges(4, &[(0, 1), (1, 2), (3, 3)], None, false, Default::default())
                .expect("csr");
        assert_eq!(edge_list(&undirected), vec![0, 1, 1, 2]);
        let directed =
            Csr::from_edges(3, &[(2, 0), (0, 1), (1, 0)], None, true, Default::default())
                .expect("csr");
        assert_eq!(edge_list(&directed), vec![0, 1, 1, 0, 2, 0]);
    }
}
