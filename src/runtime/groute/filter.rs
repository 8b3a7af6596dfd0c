//! Predicate-based filtering (PBF, seed 000 section 3, Figs. 5-6, and section 5.3, Table 5):
//! the host cuts a large array into segments and sends them through router `h2gpus` to the
//! GPUs; each GPU's worker filters a segment with a kernel, releases the input buffer and
//! sends what it kept back through router `gpus2h` to the host, which assembles the output.
//!
//! - **First available** ([`FilterMode::FirstAvailable`], the paper's "Groute" rows): the
//!   whole input goes into `h2gpus` as one send (Fig. 6 line 21); the router's segmenter
//!   cuts it into packets of [`FilterOptions::segment_elems`] and its multiplexer gives each
//!   packet to the first GPU with a free receive buffer, so a faster GPU takes more.
//! - **Static** ([`FilterMode::Static`], the paper's "Static" rows): one equal contiguous
//!   chunk per GPU through a [`Policy::Scatter`] router; the chunks are still cut into packets
//!   of the same size, so transfers and kernels pipeline exactly as in the dynamic mode and
//!   only the assignment differs.
//!
//! Every GPU link has [`FilterOptions::buffers`] receive buffers (the paper: double
//! buffering). The paper's host-to-router link is single-buffered; here the host's input
//! array is the send buffer and the router queues its packets, so the host
//! side adds no buffering to model. Each worker owns as many output buffers as it has
//! receive buffers; it reads the kept count back on a second stream, after an event, so the
//! next kernel need not wait for it (the host must know a segment's size to
//! send it), then sends the kept elements tagged with the input position, and the host
//! orders the output by that tag, so the output equals the sequential filter's.

use super::context::{Context, Endpoint, Event, LinkConfig, LinkTraffic, Received, ReceivedData};
use super::context::{Segment, SegmentData};
use super::policy::Policy;
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    KernelContext, KernelDef, KernelRegistry, Launch, Scalar, StreamId, StreamPriority, Token,
};
use crate::runtime::RuntimeError;
use std::collections::{BTreeMap, VecDeque};

/// Name of the filter kernel.
pub const FILTER_KERNEL: &str = "groute_filter";

/// What an element must satisfy to be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `x % modulus == remainder`.
    Modulo {
        /// Divisor (at least 1).
        modulus: u32,
        /// Remainder kept (below `modulus`).
        remainder: u32,
    },
    /// `x < threshold`.
    LessThan {
        /// Exclusive upper bound.
        threshold: u32,
    },
}

impl Predicate {
    /// Whether `x` is kept.
    pub fn keeps(self, x: u32) -> bool {
        match self {
            Predicate::Modulo { modulus, remainder } => modulus != 0 && x % modulus == remainder,
            Predicate::LessThan { threshold } => x < threshold,
        }
    }

    /// The kernel's scalars `[kind, a, b]`.
    fn scalars(self) -> [u32; 3] {
        match self {
            Predicate::Modulo { modulus, remainder } => [0, modulus, remainder],
            Predicate::LessThan { threshold } => [1, threshold, 0],
        }
    }

    fn from_scalars(kind: u32, a: u32, b: u32) -> Option<Predicate> {
        match kind {
            0 if a != 0 => Some(Predicate::Modulo { modulus: a, remainder: b }),
            1 => Some(Predicate::LessThan { threshold: a }),
            _ => None,
        }
    }

    fn check(self) -> Result<(), RuntimeError> {
        if let Predicate::Modulo { modulus, remainder } = self
            && (modulus == 0 || remainder >= modulus)
        {
            return Err(RuntimeError::Options(format!(
                "filter predicate x % {modulus} == {remainder} keeps nothing or divides by \
                 zero: the modulus must be at least 1 and the remainder below it"
            )));
        }
        Ok(())
    }
}

/// The sequential filter: the reference the runtime is validated against.
pub fn filter_sequential(input: &[u32], predicate: Predicate) -> Vec<u32> {
    input.iter().copied().filter(|&x| predicate.keeps(x)).collect()
}

/// How segments are assigned to GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterMode {
    /// Groute's "first available device" routing policy (load balancing by availability).
    FirstAvailable,
    /// One equal contiguous chunk per GPU (the paper's static scheduling).
    Static,
}

/// Options of a filtering run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterOptions {
    /// Elements per segment (the links' packet size).
    pub segment_elems: usize,
    /// Receive buffers per GPU link (2: double buffering, as in the paper).
    pub buffers: u32,
    /// Segment assignment.
    pub mode: FilterMode,
}

impl Default for FilterOptions {
    /// 1 Mi elements (4 MiB) per segment, double buffering, first available.
    fn default() -> Self {
        FilterOptions { segment_elems: 1 << 20, buffers: 2, mode: FilterMode::FirstAvailable }
    }
}

/// What a filtering run produced and how it went.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterOutcome {
    /// The kept elements, in input order.
    pub output: Vec<u32>,
    /// Segments (packets) each GPU filtered.
    pub segments_per_gpu: Vec<u64>,
    /// Input elements each GPU filtered.
    pub elements_per_gpu: Vec<u64>,
    /// Time each GPU's compute was busy with filter kernels, in picoseconds.
    pub busy_ps_per_gpu: Vec<u64>,
    /// When each GPU's last output had reached the host (its last send completed), in
    /// picoseconds from the start.
    pub finish_ps_per_gpu: Vec<u64>,
    /// From the start until the host holds the whole output, in picoseconds.
    pub total_time_ps: u64,
    /// Traffic of every link (`h2gpus` outputs first, then `gpus2h`).
    pub traffic: Vec<LinkTraffic>,
}

/// Registers [`FILTER_KERNEL`].
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: FILTER_KERNEL,
        contract: "buffers [input u32, output u32, count u32[1]], scalars [len u64, kind u32, \
                   a u32, b u32]: copies the elements of input[0..len] that satisfy the \
                   predicate (kind 0: x % a == b, kind 1: x < a) to output[0..k] in input \
                   order and sets count[0] = k; atomics count the warps (aligned chunks of 32 \
                   elements) with a kept element, the adds of a warp-aggregated append; CUDA \
                   design: per-tile kept counts, then an ordered block scan per tile (input \
                   order kept, no append atomics)",
        sim: filter_kernel,
        cuda_name: Some("groute_filter"),
        remote_args: &[],
    });
}

fn filter_kernel(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let len = ctx.scalar_u64(0)? as usize;
    let (kind, a, b) = (ctx.scalar_u32(1)?, ctx.scalar_u32(2)?, ctx.scalar_u32(3)?);
    let kernel = ctx.kernel;
    let predicate = Predicate::from_scalars(kind, a, b).ok_or_else(|| BackendError::Kernel {
        kernel: kernel.into(),
        message: format!("predicate kind {kind} with a = {a} is not one of 0 (modulus >= 1), 1"),
    })?;
    let [input, output, count] = ctx.buffers::<3>()?;
    let input = input.as_u32()?.get(..len).ok_or_else(|| BackendError::Kernel {
        kernel: kernel.into(),
        message: format!("len {len} exceeds the input buffer"),
    })?;
    let output = output.as_u32_mut()?;
    let mut kept = 0usize;
    let mut warps_with_match = 0u64;
    for warp in input.chunks(32) {
        let before = kept;
        for &x in warp {
            if predicate.keeps(x) {
                let slot = output.get_mut(kept).ok_or_else(|| BackendError::Kernel {
                    kernel: kernel.into(),
                    message: "the output buffer is shorter than the input".into(),
                })?;
                *slot = x;
                kept += 1;
            }
        }
        warps_with_match += u64::from(kept > before);
    }
    let slot = count.as_u32_mut()?.first_mut().ok_or_else(|| BackendError::Kernel {
        kernel: kernel.into(),
        message: "the count buffer is empty".into(),
    })?;
    *slot = kept as u32;
    ctx.effects.items = len as u64;
    ctx.effects.atomics = warps_with_match;
    ctx.effects.bytes_read = 4 * len as u64;
    ctx.effects.bytes_written = 4 * kept as u64 + 4;
    Ok(())
}

/// A GPU worker (Fig. 6 lines 37-51).
struct Worker {
    /// Filter kernels.
    stream: StreamId,
    /// Kept-count reads, each after its kernel (so the next kernel need not wait for it).
    readback: StreamId,
    /// Output buffers and their count buffers; `free` lists the unused ones.
    outputs: Vec<(BufferId, BufferId)>,
    free: Vec<usize>,
    /// Received input packets waiting for an output buffer.
    waiting: VecDeque<Received>,
    /// Kernels and count reads in flight.
    in_flight: u32,
    input_closed: bool,
    output_closed: bool,
    segments: u64,
    elements: u64,
    finish_ps: u64,
}

enum Pending {
    Kernel { gpu: usize, received: Received },
    Count { gpu: usize, slot: usize, position: u64 },
}

/// Filters `input` by `predicate` on all of `backend`'s GPUs (see the module docs).
pub fn filter<B: Backend + ?Sized>(
    backend: &mut B,
    input: &[u32],
    predicate: Predicate,
    options: &FilterOptions,
) -> Result<FilterOutcome, RuntimeError> {
    check(backend, input, predicate, options)?;
    let gpus = backend.device_count() as usize;
    let start_ps = backend.now_ps();
    let busy_before: Vec<u64> = backend.kernel_busy_ps();
    let mut ctx = Context::new(backend);
    let devices = ctx.devices();
    let config = LinkConfig {
        elem: ElemType::U32,
        packet_elems: options.segment_elems,
        buffers: options.buffers,
    };
    let policy = match options.mode {
        FilterMode::FirstAvailable => Policy::AnyAvailable,
        FilterMode::Static => Policy::Scatter,
    };
    let h2gpus = ctx.router(vec![Endpoint::Host], devices.clone(), config, Box::new(policy))?;
    let gpus2h = ctx.router(
        devices.clone(),
        vec![Endpoint::Host],
        config,
        Box::new(Policy::Gather { to: Endpoint::Host }),
    )?;
    let host_link = ctx
        .router_link(gpus2h, Endpoint::Host)
        .ok_or_else(|| RuntimeError::Options("router gpus2h has no link to the host".into()))?;
    let mut input_links = Vec::with_capacity(gpus);
    let mut workers = Vec::with_capacity(gpus);
    for (g, &dev) in devices.iter().enumerate() {
        input_links.push(
            ctx.router_link(h2gpus, dev).ok_or_else(|| {
                RuntimeError::Options(format!("router h2gpus has no link to {dev}"))
            })?,
        );
        let device = DeviceId(g as u32);
        let stream = ctx.backend.create_stream(device, StreamPriority::Normal)?;
        let readback = ctx.backend.create_stream(device, StreamPriority::Normal)?;
        let mut outputs = Vec::new();
        for slot in 0..options.buffers {
            let out = ctx.backend.alloc(
                device,
                ElemType::U32,
                options.segment_elems,
                &format!("pbf output buffer {slot}"),
            )?;
            let count = ctx.backend.alloc(device, ElemType::U32, 1, "pbf output count")?;
            outputs.push((out, count));
        }
        workers.push(Worker {
            stream,
            readback,
            free: (0..outputs.len()).rev().collect(),
            outputs,
            waiting: VecDeque::new(),
            in_flight: 0,
            input_closed: false,
            output_closed: false,
            segments: 0,
            elements: 0,
            finish_ps: 0,
        });
    }

    // Distribute (Fig. 6 lines 21-22): segment tags index `starts`.
    let starts: Vec<usize> = match options.mode {
        FilterMode::FirstAvailable => {
            let data = SegmentData::Host(HostData::U32(input.to_vec()));
            ctx.route(h2gpus, Endpoint::Host, Segment::new(data, 0))?;
            vec![0]
        }
        FilterMode::Static => {
            let chunk = input.len().div_ceil(gpus);
            let starts: Vec<usize> = (0..gpus).map(|g| (g * chunk).min(input.len())).collect();
            for (g, &s) in starts.iter().enumerate() {
                let e = (s + chunk).min(input.len());
                let data = SegmentData::Host(HostData::U32(input[s..e].to_vec()));
                ctx.route(h2gpus, Endpoint::Host, Segment::new(data, g as u64))?;
            }
            starts
        }
    };
    ctx.shutdown_input(h2gpus, Endpoint::Host)?;

    let mut pending: BTreeMap<Token, Pending> = BTreeMap::new();
    let mut in_use: BTreeMap<(usize, u64), usize> = BTreeMap::new();
    let mut pieces: BTreeMap<(u64, usize), Vec<u32>> = BTreeMap::new();
    let mut host_closed = false;
    let mut end_ps = start_ps;
    while let Some(event) = ctx.next_event()? {
        match event {
            Event::Received(r) if r.link == host_link => {
                let ReceivedData::Host(HostData::U32(values)) = r.data else {
                    return Err(unexpected("a host packet without u32 data"));
                };
                pieces.insert((r.tag, r.offset), values);
            }
            Event::Received(r) => {
                let gpu = ctx.link_destination(r.link).device().map_or(0, |d| d.0 as usize);
                workers[gpu].waiting.push_back(r);
                start_filters(&mut ctx, &mut workers[gpu], gpu, predicate, &starts, &mut pending)?;
            }
            Event::Completion(c) => match pending.remove(&c.token) {
                Some(Pending::Kernel { gpu, received }) => {
                    workers[gpu].in_flight -= 1;
                    ctx.release(&received)?;
                }
                Some(Pending::Count { gpu, slot, position }) => {
                    let CompletionKind::HostRead(HostData::U32(count)) = c.kind else {
                        return Err(unexpected("a count read without u32 data"));
                    };
                    let kept = count.first().copied().unwrap_or(0) as usize;
                    let w = &mut workers[gpu];
                    w.in_flight -= 1;
                    let data = SegmentData::Device(BufferSlice::new(w.outputs[slot].0, 0, kept));
                    in_use.insert((gpu, position), slot);
                    ctx.route(gpus2h, devices[gpu], Segment::new(data, position))?;
                    close_if_done(&mut ctx, &mut workers[gpu], devices[gpu], gpus2h)?;
                }
                None => return Err(unexpected("a completion the filter never asked for")),
            },
            Event::Sent { source: Endpoint::Host, .. } => {}
            Event::Sent { source, tag } => {
                let gpu = source.device().map_or(0, |d| d.0 as usize);
                let slot =
                    in_use.remove(&(gpu, tag)).ok_or_else(|| unexpected("an output sent twice"))?;
                workers[gpu].free.push(slot);
                workers[gpu].finish_ps = ctx.backend.now_ps() - start_ps;
                start_filters(&mut ctx, &mut workers[gpu], gpu, predicate, &starts, &mut pending)?;
                close_if_done(&mut ctx, &mut workers[gpu], devices[gpu], gpus2h)?;
            }
            Event::Shutdown { link } if link == host_link => {
                host_closed = true;
                end_ps = ctx.backend.now_ps();
            }
            Event::Shutdown { link } => {
                let gpu = input_links
                    .iter()
                    .position(|&l| l == link)
                    .ok_or_else(|| unexpected("a shutdown of a link the filter does not know"))?;
                workers[gpu].input_closed = true;
                close_if_done(&mut ctx, &mut workers[gpu], devices[gpu], gpus2h)?;
            }
        }
    }
    if !host_closed {
        return Err(BackendError::Deadlock(
            "filtering stopped before every GPU shut its output down".into(),
        )
        .into());
    }
    let traffic = ctx.traffic();
    for &(out, count) in workers.iter().flat_map(|w| &w.outputs) {
        ctx.backend.free(out)?;
        ctx.backend.free(count)?;
    }
    let busy_after: Vec<u64> = ctx.backend.kernel_busy_ps();
    let output: Vec<u32> = pieces.into_values().flatten().collect();
    Ok(FilterOutcome {
        output,
        segments_per_gpu: workers.iter().map(|w| w.segments).collect(),
        elements_per_gpu: workers.iter().map(|w| w.elements).collect(),
        busy_ps_per_gpu: busy_after.iter().zip(&busy_before).map(|(a, b)| a - b).collect(),
        finish_ps_per_gpu: workers.iter().map(|w| w.finish_ps).collect(),
        total_time_ps: end_ps - start_ps,
        traffic,
    })
}

fn check<B: Backend + ?Sized>(
    backend: &B,
    input: &[u32],
    predicate: Predicate,
    options: &FilterOptions,
) -> Result<(), RuntimeError> {
    if backend.device_count() == 0 {
        return Err(RuntimeError::Options(
            "filtering needs at least one GPU and the backend has none; choose 1 or more GPUs"
                .into(),
        ));
    }
    if input.is_empty() {
        return Err(RuntimeError::Options(
            "the filter input is empty: there is nothing to send to the GPUs; pass at least \
             one element"
                .into(),
        ));
    }
    if options.segment_elems == 0 || options.buffers == 0 {
        return Err(RuntimeError::Options(format!(
            "filter segment size ({} elements) and receive buffers per GPU ({}) must each be \
             at least 1; the paper uses megabyte segments and 2 buffers",
            options.segment_elems, options.buffers
        )));
    }
    if u32::try_from(options.segment_elems).is_err() {
        return Err(RuntimeError::Options(format!(
            "filter segment size {} exceeds the kernel's u32 count; use at most {} elements",
            options.segment_elems,
            u32::MAX
        )));
    }
    predicate.check()
}

/// Launches the filter on every waiting packet for which an output buffer is free (Fig. 6
/// lines 45-48: synchronize, filter, release, send; the send waits for the kept count).
fn start_filters<B: Backend + ?Sized>(
    ctx: &mut Context<'_, B>,
    w: &mut Worker,
    gpu: usize,
    predicate: Predicate,
    starts: &[usize],
    pending: &mut BTreeMap<Token, Pending>,
) -> Result<(), RuntimeError> {
    while !w.waiting.is_empty() {
        let Some(slot) = w.free.pop() else { break };
        let Some(r) = w.waiting.pop_front() else { break };
        let ReceivedData::Device(input) = r.data else {
            return Err(unexpected("a GPU packet outside device memory"));
        };
        let (out, count) = w.outputs[slot];
        let [kind, a, b] = predicate.scalars();
        let kernel_token = ctx.token();
        ctx.backend.launch(
            w.stream,
            Launch {
                kernel: FILTER_KERNEL,
                buffers: vec![input.buffer, out, count],
                scalars: vec![
                    Scalar::U64(r.len as u64),
                    Scalar::U32(kind),
                    Scalar::U32(a),
                    Scalar::U32(b),
                ],
                work_items: r.len as u64,
            },
            Some(kernel_token),
        )?;
        let filtered = ctx.backend.record_event(w.stream)?;
        ctx.backend.wait_event(w.readback, filtered)?;
        let count_token = ctx.token();
        ctx.backend.read_to_host(w.readback, BufferSlice::new(count, 0, 1), count_token)?;
        let start = starts.get(r.tag as usize).copied().unwrap_or(0);
        let position = (start + r.offset) as u64;
        w.in_flight += 2;
        w.segments += 1;
        w.elements += r.len as u64;
        pending.insert(count_token, Pending::Count { gpu, slot, position });
        pending.insert(kernel_token, Pending::Kernel { gpu, received: r });
    }
    Ok(())
}

/// Shuts the worker's output down once its input has shut down and everything it received
/// was filtered and sent (Fig. 6 line 50).
fn close_if_done<B: Backend + ?Sized>(
    ctx: &mut Context<'_, B>,
    w: &mut Worker,
    endpoint: Endpoint,
    gpus2h: super::context::RouterId,
) -> Result<(), RuntimeError> {
    if w.input_closed && !w.output_closed && w.in_flight == 0 && w.waiting.is_empty() {
        w.output_closed = true;
        ctx.shutdown_input(gpus2h, endpoint)?;
    }
    Ok(())
}

fn unexpected(what: &str) -> RuntimeError {
    BackendError::Usage(format!("predicate-based filtering received {what} (a runtime bug)")).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::KernelEffects;

    fn run(input: Vec<u32>, len: usize, p: Predicate) -> (Vec<u32>, u32, KernelEffects) {
        let n = input.len();
        let mut buffers = vec![
            HostData::U32(input),
            HostData::zeros(ElemType::U32, n),
            HostData::zeros(ElemType::U32, 1),
        ];
        let [kind, a, b] = p.scalars();
        let scalars = [Scalar::U64(len as u64), Scalar::U32(kind), Scalar::U32(a), Scalar::U32(b)];
        let ids = [BufferId(0), BufferId(1), BufferId(2)];
        let mut ctx = KernelContext::new(FILTER_KERNEL, &mut buffers, &ids, &scalars);
        filter_kernel(&mut ctx).expect("kernel");
        let effects = std::mem::take(&mut ctx.effects);
        let count = buffers[2].as_u32().expect("u32")[0];
        let out = buffers[1].as_u32().expect("u32")[..count as usize].to_vec();
        (out, count, effects)
    }

    #[test]
    fn the_filter_kernel_keeps_matches_in_order_and_counts_one_atomic_per_warp_with_a_match() {
        let input: Vec<u32> = (0..100).collect();
        let (out, count, effects) =
            run(input.clone(), 100, Predicate::Modulo { modulus: 40, remainder: 3 });
        assert_eq!(out, vec![3, 43, 83]);
        assert_eq!(count, 3);
        // Elements 3 (warp 0), 43 (warp 1), 83 (warp 2); warp 3 (96..100) has none.
        assert_eq!(effects.atomics, 3);
        assert_eq!((effects.items, effects.bytes_read, effects.bytes_written), (100, 400, 16));
        // Only the first `len` elements count.
        let (out, _, _) = run(input, 50, Predicate::LessThan { threshold: 1000 });
        assert_eq!(out, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn predicates_check_their_arguments() {
        assert!(Predicate::Modulo { modulus: 3, remainder: 3 }.check().is_err());
        assert!(Predicate::Modulo { modulus: 3, remainder: 2 }.check().is_ok());
        assert!(!Predicate::LessThan { threshold: 0 }.keeps(0));
        assert_eq!(Predicate::from_scalars(0, 0, 0), None);
        assert_eq!(Predicate::from_scalars(7, 1, 0), None);
    }
}
