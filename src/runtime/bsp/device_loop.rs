//! The bulk-synchronous runtime's device-side loop on one GPU
//! ([`super::BspPrimitive::loop_kernel`]): while the frontier is small, one launch runs many
//! supersteps (on CUDA a cooperative grid with one grid barrier per superstep,
//! `sy_levels` in `kernels/algo.cu`), each exactly the advance of the superstep path with its
//! stamps, and logs every superstep's input frontier length to mapped host memory, which
//! the host reads once the launch ends. Here: the buffers, the launch and its log, and
//! [`sim_levels`], the simulator's loop for the min-combined push advances (BFS, SSSP, CC).

use super::kernels::FIXED_SLOTS;
use super::{
    BspOptions, GpuSlots, PHASE_LOOP, SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT, block_path, token,
};
use crate::backend::{
    Backend, BackendError, BufferId, DeviceId, ElemType, HostData, KernelContext, Launch, Scalar,
    StreamId,
};
use crate::runtime::{RuntimeError, wait_all};

/// Default of [`super::BspOptions::loop_frontier`].
pub const DEFAULT_LOOP_FRONTIER: u64 = 1 << 16;
/// Arcs per vertex of [`super::BspOptions::loop_frontier`] a device-side loop's output may have.
pub const LOOP_ARCS_PER_VERTEX: u64 = 16;
/// Words of a device-side loop's control buffer.
pub const LOOP_CONTROL_WORDS: usize = 16;
/// Most supersteps one launch of a device-side loop runs (the length of its log).
pub const LOOP_LEVELS: u32 = 1024;
/// Words of the log before the per-superstep input lengths.
const LOOP_LOG_HEADER: usize = 3;

/// The buffers of an algorithm's device-side loop on one GPU ([`super::BspPrimitive::loop_kernel`]).
pub(crate) struct DeviceLoop {
    kernel: &'static str,
    control: BufferId,
    log: BufferId,
}

/// What one launch of a device-side loop did.
pub(crate) struct LoopRun {
    /// The input frontier length of each superstep it ran (at least one).
    pub(crate) inputs: Vec<u64>,
    /// Whether it stopped because the frontier grew past the limits.
    pub(crate) grew: bool,
}

/// The GPU state a device-side loop runs on and leaves as the host path would: the stream,
/// the fixed slots (the two frontier slots swap when the loop's last output is in the
/// other), and the input frontier's length.
pub(crate) struct LoopFrontier<'a> {
    /// The GPU's compute stream.
    pub(crate) compute: StreamId,
    /// The fixed slots of `kernels::FIXED_SLOTS`' layout.
    pub(crate) fixed: &'a mut [BufferId],
    /// The input frontier's length, on return the next superstep's.
    pub(crate) frontier_len: &'a mut u64,
}

impl DeviceLoop {
    /// The loop's buffers on `device`, or `None` where the backend has no mapped host memory.
    pub(crate) fn new<B: Backend + ?Sized>(
        backend: &mut B,
        kernel: &'static str,
        device: DeviceId,
    ) -> Result<Option<DeviceLoop>, BackendError> {
        let log = LOOP_LOG_HEADER + LOOP_LEVELS as usize;
        let log = match backend.alloc_mapped(ElemType::U64, log, "device loop log") {
            Ok(log) => log,
            Err(BackendError::Unavailable(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let control =
            backend.alloc(device, ElemType::U64, LOOP_CONTROL_WORDS, "device loop control")?;
        Ok(Some(DeviceLoop { kernel, control, log }))
    }

    /// Runs up to `most` supersteps from `superstep` in one launch on `slots`' GPU and
    /// leaves its frontier as the host path would.
    pub(super) fn run<B: Backend + ?Sized>(
        &self,
        backend: &mut B,
        slots: &mut GpuSlots,
        superstep: u32,
        most: u32,
        options: &BspOptions,
    ) -> Result<LoopRun, RuntimeError> {
        let frontier = LoopFrontier {
            compute: slots.compute,
            fixed: &mut slots.fixed,
            frontier_len: &mut slots.frontier_len,
        };
        self.run_on(backend, frontier, superstep, most, options.loop_frontier)
    }

    /// [`DeviceLoop::run`] on any runtime's fixed slots (GUM's single worker): a frontier of
    /// at most `loop_frontier` vertices (and 16 arcs a vertex) stays in the loop;
    /// `token`'s superstep field names the launch.
    pub(crate) fn run_on<B: Backend + ?Sized>(
        &self,
        backend: &mut B,
        frontier: LoopFrontier<'_>,
        superstep: u32,
        most: u32,
        loop_frontier: u64,
    ) -> Result<LoopRun, RuntimeError> {
        let LoopFrontier { compute, fixed, frontier_len } = frontier;
        // A launch that fails before its end must not leave an earlier launch's count.
        backend.write_mapped(self.log, 0, HostData::U64(vec![0]))?;
        let buffers = fixed.iter().copied().chain([self.control, self.log]).collect();
        backend.launch(
            compute,
            Launch {
                kernel: self.kernel,
                buffers,
                scalars: vec![
                    Scalar::U64(*frontier_len),
                    Scalar::U32(superstep),
                    Scalar::U32(most),
                    Scalar::U64(loop_frontier),
                    Scalar::U64(loop_frontier.saturating_mul(LOOP_ARCS_PER_VERTEX)),
                ],
                work_items: *frontier_len,
            },
            None,
        )?;
        let t = token(PHASE_LOOP, superstep, 0, 0);
        backend.host_callback(compute, t)?;
        wait_all(backend, &[t])?;
        let HostData::U64(log) = backend.read_mapped(self.log)? else {
            return Err(BackendError::Usage("the device loop's log is not u64".into()).into());
        };
        let levels = log[0] as usize;
        if levels == 0 || levels > most as usize {
            return Err(BackendError::Kernel {
                kernel: self.kernel.into(),
                message: format!("reported {levels} supersteps run, asked for 1..={most}"),
            }
            .into());
        }
        *frontier_len = log[1];
        if log[2] & 1 == 1 {
            fixed.swap(SLOT_FRONTIER_IN, SLOT_FRONTIER_OUT);
        }
        let inputs = log[LOOP_LOG_HEADER..LOOP_LOG_HEADER + levels].to_vec();
        Ok(LoopRun { inputs, grew: log[2] >> 1 != 0 })
    }
}

/// The values an advance's GPU threads read of their frontier vertices. A wave of resident
/// threads reads its vertices' values at once, when it starts, so a value another thread of
/// the wave lowers is not seen until the next wave (or superstep). A min-combined advance run
/// one vertex after another would instead carry a label along a chain of ascending ids in one
/// superstep: the simulator's CC took 549 supersteps on the road grid where one H100 took
/// 9,198 (the grid's diameter), and 90 on delaunay_n16 against 110.
#[derive(Debug)]
pub struct WaveValues {
    wave: usize,
    start: usize,
    values: Vec<u32>,
}

impl WaveValues {
    /// Waves of `wave` threads (at least one), one frontier vertex each.
    pub fn new(wave: u64) -> WaveValues {
        let wave = usize::try_from(wave).unwrap_or(usize::MAX).max(1);
        WaveValues { wave, start: 0, values: Vec::new() }
    }

    /// The value of `frontier[k]` as its wave read it; `k` must ascend from 0 by one.
    pub fn get(&mut self, values: &[u32], frontier: &[u32], k: usize) -> u32 {
        if k >= self.start + self.values.len() {
            let end = k.saturating_add(self.wave).min(frontier.len());
            self.values = frontier[k..end].iter().map(|&v| values[v as usize]).collect();
            self.start = k;
        }
        self.values[k - self.start]
    }
}

/// The simulator's device-side loop of a min-combined push advance (`kernel`, for messages):
/// supersteps one after another as the contract of [`super::BspPrimitive::loop_kernel`]
/// says, each exactly the advance of the superstep path: every input vertex `v` offers
/// `relax(values, values[v] as read before its arcs, target, weight (0 without weights),
/// level = superstep + 1)` to each out-arc, and a target for which it returns true joins
/// the output once (by the superstep's stamp). `atomics`: count one atomic per arc.
/// `snapshot`: every input vertex offers its value as its wave of GPU threads read it
/// ([`WaveValues`]), instead of as lowered by input vertices before it in the superstep.
pub fn sim_levels(
    ctx: &mut KernelContext<'_>,
    kernel: &'static str,
    atomics: bool,
    snapshot: bool,
    relax: impl Fn(&mut [u32], u32, usize, u32, u32) -> bool,
) -> Result<(), BackendError> {
    let fail = |message: String| BackendError::Kernel { kernel: kernel.into(), message };
    let wave = ctx.resident_threads;
    let mut len = ctx.scalar_u64(0)? as usize;
    let first = ctx.scalar_u32(1)?;
    let most_levels = ctx.scalar_u32(2)?;
    let (most_vertices, most_arcs) = (ctx.scalar_u64(3)?, ctx.scalar_u64(4)?);
    let Some(
        [offsets, targets, weights, values, _, _, marker, fin, fout, _, _, _, _, _, control, log],
    ) = ctx.buffers.get_mut(..FIXED_SLOTS + 2)
    else {
        return Err(fail(format!("expects {} buffers", FIXED_SLOTS + 2)));
    };
    let log = log.as_u64_mut()?;
    if control.len() < LOOP_CONTROL_WORDS || log.len() < LOOP_LOG_HEADER + most_levels as usize {
        return Err(fail(format!(
            "control of {} words and log of {} for {most_levels} supersteps: too small",
            control.len(),
            log.len()
        )));
    }
    if most_levels == 0 || len > fin.len() {
        return Err(fail(format!("{most_levels} supersteps of frontier length {len} asked")));
    }
    let (offsets, targets, weights) = (offsets.as_u64()?, targets.as_u32()?, weights.as_u32()?);
    let (values, marker) = (values.as_u32_mut()?, marker.as_u32_mut()?);
    let (fin, fout) = (fin.as_u32_mut()?, fout.as_u32_mut()?);
    let (mut items, mut edges, mut written, mut i) = (0u64, 0u64, 0u64, 0u32);
    let (mut path_edges, mut huge_passes) = (0u64, 0u64);
    let (next, why) = loop {
        let superstep = first + i;
        let (stamp, level) = (2 * superstep + 1, superstep + 1);
        let (src, dst) = if i % 2 == 0 { (&**fin, &mut **fout) } else { (&**fout, &mut **fin) };
        let (mut next, mut arcs) = (0usize, 0u64);
        let mut begun = snapshot.then(|| WaveValues::new(wave));
        // The loop's frontier stays within its limit (65,536 vertices by default: 256
        // block-widths), which the fused grid (two blocks per SM) holds without wrapping.
        let path = block_path(&src[..len], offsets, u64::MAX);
        path_edges += path.arc_slots;
        huge_passes += u64::from(path.huge_pass);
        for (k, &v) in src[..len].iter().enumerate() {
            let range = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
            edges += range.len() as u64;
            let value = match begun.as_mut() {
                Some(b) => b.get(values, &src[..len], k),
                None => values[v as usize],
            };
            for e in range {
                let t = targets[e] as usize;
                let w = weights.get(e).copied().unwrap_or(0);
                if relax(values, value, t, w, level) && marker[t] != stamp {
                    marker[t] = stamp;
                    let slot = dst.get_mut(next).ok_or_else(|| {
                        fail(format!("output frontier overflows its {} slots", next))
                    })?;
                    *slot = t as u32;
                    next += 1;
                    arcs += offsets[t + 1] - offsets[t];
                }
            }
        }
        items += len as u64;
        written += next as u64;
        log[LOOP_LOG_HEADER + i as usize] = len as u64;
        i += 1;
        let why = if next == 0 || i >= most_levels {
            0
        } else if next as u64 > most_vertices {
            1
        } else if arcs > most_arcs {
            2
        } else {
            len = next;
            continue;
        };
        break (next, why);
    };
    log[0] = u64::from(i);
    log[1] = next as u64;
    log[2] = u64::from(i % 2) | (why << 1);
    let e = &mut ctx.effects;
    e.items = items;
    e.edges = edges;
    e.atomics = if atomics { edges } else { 0 };
    e.bytes_read = items * 20;
    e.bytes_written = written * 4;
    // A round that set huge vertices aside ran a second grid barrier (`sy_levels`).
    e.rounds = u64::from(i) + huge_passes;
    e.path_edges = path_edges;
    Ok(())
}
