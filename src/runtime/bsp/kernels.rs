//! The framework kernels of the bulk-synchronous runtime (seed 002 section III-B): split
//! the output frontier into local and remote parts and package remote vertices with their
//! values; merge received packages with the algorithm's combiner.
//!
//! Buffer layout shared by every bsp kernel (the per-GPU "slots"):
//! `0 offsets u64 | 1 targets u32 | 2 weights u32 | 3 values (u32 or f32) | 4 aux f32 |
//!  5 degree u32 | 6 marker u32 | 7 frontier_in u32 | 8 frontier_out u32 | 9 counters u64 |
//!  10 owner u32 | 11 owner_local_id u32 | 12 reverse offsets u64 | 13 reverse targets u32 |
//!  14.. send or receive packages u32, one per peer`. The reverse CSR (in-arcs of owned
//! vertices, global ids) exists only for primitives that pull (direction-optimizing BFS).
//!
//! Counters: `[0]` output frontier length, `[1]` next frontier length, `[2 + p]` items packed
//! for peer `p`, `[2 + peers]` the bits of the local reduction value (`f64`).
//!
//! A package is a sequence of `(id on the receiver, value bits)` pairs of `u32`.

use crate::backend::{BackendError, HostData, KernelContext, KernelDef, KernelRegistry};

/// Number of fixed buffer slots before the per-peer packages.
pub const FIXED_SLOTS: usize = 14;

/// The fixed slots no kernel writes (a fragment's topology: offsets, targets, weights,
/// degrees, owners, owner ids, the reverse CSR). GUM's extended-memory move leaves them on
/// the fragment's own GPU while a survivor runs its kernels: every kernel that takes the
/// fixed slots lists them in its `remote_args` and reports what it reads from them.
pub const TOPOLOGY_SLOTS: [usize; 8] = [0, 1, 2, 5, 10, 11, 12, 13];

/// Bytes a scattered read of a peer's memory costs on the wire (one 32-byte sector).
pub const SECTOR_BYTES: u64 = 32;

/// Index into the counters of the reduction value, for `peers` GPUs.
pub fn reduce_counter(peers: usize) -> usize {
    2 + peers
}

/// Combines received values with local ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combiner {
    /// `u32` minimum (BFS levels, SSSP distances, CC labels); a vertex whose value drops
    /// joins the next frontier.
    MinU32,
    /// `f32` sum (PageRank residuals); a vertex whose value passes the threshold joins the
    /// next frontier; proxies are zeroed once sent.
    AddF32,
    /// `f64` sum (LDBC PageRank's partial sums): values are `f64`; a package carries each
    /// proxy's partial sum rounded once to `f32` (a relative error of at most 2^-24 on a
    /// positive partial, added in `f64` by the receiver); otherwise as [`Combiner::AddF32`].
    AddF64,
    /// Assignment: a received value replaces the local one and activates nothing. For
    /// owners that broadcast their vertices' new values to every copy (duplicate-all and
    /// broadcast only: with selective communication proxies would overwrite owners).
    Assign,
}

impl Combiner {
    /// The combiner's code in the `bsp_split` and `bsp_merge` scalars.
    pub fn code(self) -> u32 {
        match self {
            Combiner::MinU32 => 0,
            Combiner::AddF32 => 1,
            Combiner::AddF64 => 2,
            Combiner::Assign => 3,
        }
    }

    /// Whether received values are added (each update must then reach one owner once).
    pub fn is_additive(self) -> bool {
        matches!(self, Combiner::AddF32 | Combiner::AddF64)
    }
}

/// Registers the framework kernels.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "bsp_split",
        contract: "split frontier_out into the next local frontier (owned vertices) and one \
                   package per peer (proxies, or every vertex when broadcasting); scalars: \
                   gpu u32, peers u32, stamp u32, broadcast u32, combiner u32 (Combiner::code: 0 min, \
                   1 add f32, 2 add f64 with f32 packages, 3 assign)",
        sim: split,
        cuda_name: Some("bsp_split"),
        remote_args: &TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "bsp_merge",
        contract: "combine every received package into values; owned vertices that improve \
                   (min) or pass the threshold (add) join the next frontier (assign: none); scalars: \
                   gpu u32, peers u32, stamp u32, combiner u32 (as bsp_split), threshold f64, \
                   then one u64 length per peer",
        sim: merge,
        cuda_name: Some("bsp_merge"),
        remote_args: &TOPOLOGY_SLOTS,
    });
    registry.register(KernelDef {
        name: "bsp_merge_peer",
        contract: "bsp_merge reading every peer's package where it lies: buffers the 14 fixed \
                   slots, then per peer p its send package toward this GPU (read through peer \
                   access; this GPU's own slot is not read), then per peer p its counter block \
                   ([2 + gpu] is the package's length, as bsp_split wrote it); scalars gpu u32, \
                   peers u32, stamp u32, combiner u32, threshold f64",
        sim: merge_peer,
        cuda_name: Some("bsp_merge_peer"),
        remote_args: &MERGE_PEER_ARGS,
    });
    register_merge_bits(registry);
}

/// Registers `bsp_merge_bits_peer` (see [`merge_bits_peer`]).
fn register_merge_bits(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "bsp_merge_bits_peer",
        contract: "for a superstep whose values are all `value` (BFS: the level): every set bit \
                   v of each peer's bitmap toward this GPU (read and cleared through peer \
                   access) is combined as min(values[v], value); owned vertices that improve \
                   join frontier_in (length counters[1], marker stamp); buffers: the 14 fixed \
                   slots, then per peer p its bitmap (u32 words) toward this GPU (this GPU's \
                   own slot is not read); scalars gpu u32, peers u32, stamp u32, value u32",
        sim: merge_bits_peer,
        cuda_name: Some("bsp_merge_bits_peer"),
        remote_args: &MERGE_PEER_ARGS,
    });
}

/// The fixed slots a merge writes: the values, and the next frontier it appends improved
/// owned vertices to (marked `stamp`, so each joins once; its length in `counters[1]`).
struct MergeTarget<'a> {
    kernel: &'a str,
    gpu: usize,
    stamp: u32,
    values: &'a mut HostData,
    marker: &'a mut [u32],
    next: &'a mut [u32],
    owner: &'a [u32],
    counters: &'a mut [u64],
    next_len: usize,
}

impl<'a> MergeTarget<'a> {
    /// Takes the merge's slots out of the fixed ones.
    fn new(
        fixed: &'a mut [HostData],
        kernel: &'a str,
        gpu: usize,
        stamp: u32,
    ) -> Result<Self, BackendError> {
        let [_, _, _, values, _, _, marker, next, _, counters, owner, _, _, _] = fixed else {
            return Err(BackendError::Usage(format!("{kernel}: wrong buffer count")));
        };
        let counters = counters.as_u64_mut()?;
        let next_len = counters[1] as usize;
        Ok(MergeTarget {
            kernel,
            gpu,
            stamp,
            values,
            marker: marker.as_u32_mut()?,
            next: next.as_u32_mut()?,
            owner: owner.as_u32()?,
            counters,
            next_len,
        })
    }

    /// Appends `v` to the next frontier if this GPU owns it and it has not joined yet.
    fn activate(&mut self, v: usize) -> Result<(), BackendError> {
        if self.owner[v] as usize != self.gpu || self.marker[v] == self.stamp {
            return Ok(());
        }
        self.marker[v] = self.stamp;
        let Some(slot) = self.next.get_mut(self.next_len) else {
            return Err(BackendError::Kernel {
                kernel: self.kernel.into(),
                message: format!("next frontier overflows its {} slots", self.next_len),
            });
        };
        *slot = v as u32;
        self.next_len += 1;
        Ok(())
    }

    /// Stores the next frontier's length.
    fn finish(self) {
        self.counters[1] = self.next_len as u64;
    }
}

/// The simulator's `bsp_merge_bits_peer`.
fn merge_bits_peer(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    const KERNEL: &str = "bsp_merge_bits_peer";
    let gpu = ctx.scalar_u32(0)? as usize;
    let peers = ctx.scalar_u32(1)? as usize;
    let stamp = ctx.scalar_u32(2)?;
    let value = ctx.scalar_u32(3)?;
    if peers > MERGE_PEER_MAX_PEERS || ctx.buffers.len() != FIXED_SLOTS + peers {
        return Err(BackendError::Usage(format!(
            "{KERNEL}: {peers} peers need {} buffers (at most {MERGE_PEER_MAX_PEERS} peers), \
             {} given",
            FIXED_SLOTS + peers,
            ctx.buffers.len()
        )));
    }
    let (fixed, bitmaps) = ctx.buffers.split_at_mut(FIXED_SLOTS);
    let mut target = MergeTarget::new(fixed, KERNEL, gpu, stamp)?;
    let (mut items, mut words_read) = (0u64, Vec::with_capacity(peers));
    for (p, bitmap) in bitmaps.iter_mut().enumerate() {
        if p == gpu {
            words_read.push(0);
            continue;
        }
        let bitmap = bitmap.as_u32_mut()?;
        words_read.push(bitmap.len() as u64);
        for (i, word) in bitmap.iter_mut().enumerate() {
            let mut w = std::mem::take(word);
            items += u64::from(w.count_ones());
            while w != 0 {
                let v = 32 * i + w.trailing_zeros() as usize;
                w &= w - 1;
                let values = target.values.as_u32_mut()?;
                let Some(x) = values.get_mut(v) else {
                    return Err(BackendError::Kernel {
                        kernel: KERNEL.into(),
                        message: format!(
                            "bit {v} from gpu {p} is beyond its {} vertices",
                            values.len()
                        ),
                    });
                };
                if value < *x {
                    *x = value;
                    target.activate(v)?;
                }
            }
        }
    }
    target.finish();
    ctx.effects.items = items;
    ctx.effects.atomics = items;
    ctx.effects.bytes_written = items * 4;
    ctx.effects.peer_read(10, SECTOR_BYTES * items);
    for (p, &words) in words_read.iter().enumerate().filter(|(p, _)| *p != gpu) {
        ctx.effects.peer_read(FIXED_SLOTS + p, 4 * words);
    }
    Ok(())
}

/// Most peers a `bsp_merge_peer` launch takes (two buffers per peer beside the fixed
/// slots, within the CUDA ABI's 32 buffers).
pub const MERGE_PEER_MAX_PEERS: usize = (32 - FIXED_SLOTS) / 2;

/// The buffer positions of `bsp_merge_peer` that may lie on other GPUs: the topology
/// slots, then every peer's package and counter block.
const MERGE_PEER_ARGS: [usize; TOPOLOGY_SLOTS.len() + 2 * MERGE_PEER_MAX_PEERS] = {
    let mut args = [0; TOPOLOGY_SLOTS.len() + 2 * MERGE_PEER_MAX_PEERS];
    let mut i = 0;
    while i < args.len() {
        args[i] = if i < TOPOLOGY_SLOTS.len() {
            TOPOLOGY_SLOTS[i]
        } else {
            FIXED_SLOTS + i - TOPOLOGY_SLOTS.len()
        };
        i += 1;
    }
    args
};

/// The split kernel's arrays, destructured once (the loop is generic over the value type so
/// that no per-vertex match on the buffer's element type remains).
struct SplitArrays<'a> {
    gpu: u32,
    stamp: u32,
    broadcast: bool,
    marker: &'a mut [u32],
    next: &'a mut [u32],
    out: &'a [u32],
    owner: &'a [u32],
    owner_id: &'a [u32],
    packages: Vec<&'a mut Vec<u32>>,
}

/// Splits the output frontier; `zero` is the value a proxy is reset to once sent (sums).
fn split_values<T: Copy>(
    arrays: &mut SplitArrays<'_>,
    values: &mut [T],
    bits: impl Fn(T) -> u32,
    zero: Option<T>,
) -> Result<(usize, Vec<usize>), BackendError> {
    let peers = arrays.packages.len();
    let mut next_len = 0usize;
    let mut sent = vec![0usize; peers];
    let SplitArrays { gpu, stamp, broadcast, .. } = *arrays;
    for &v in arrays.out {
        let vi = v as usize;
        let home = arrays.owner[vi];
        if home == gpu {
            if arrays.marker[vi] != stamp {
                arrays.marker[vi] = stamp;
                arrays.next[next_len] = v;
                next_len += 1;
            }
            if !broadcast {
                continue;
            }
        }
        let pair = [arrays.owner_id[vi], bits(values[vi])];
        let targets = if broadcast { 0..peers } else { home as usize..home as usize + 1 };
        for p in targets.filter(|&p| p as u32 != gpu) {
            let at = 2 * sent[p];
            let package = &mut arrays.packages[p];
            let Some(slot) = package.get_mut(at..at + 2) else {
                return Err(BackendError::Kernel {
                    kernel: "bsp_split".into(),
                    message: format!("package for gpu {p} overflows its {} slots", package.len()),
                });
            };
            slot.copy_from_slice(&pair);
            sent[p] += 1;
        }
        if let Some(zero) = zero
            && home != gpu
        {
            values[vi] = zero;
        }
    }
    Ok((next_len, sent))
}

fn split(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let gpu = ctx.scalar_u32(0)?;
    let stamp = ctx.scalar_u32(2)?;
    let broadcast = ctx.scalar_u32(3)? != 0;
    let peers = ctx.scalar_u32(1)? as usize;
    let combiner = ctx.scalar_u32(4)?;
    let add = combiner == Combiner::AddF32.code() || combiner == Combiner::AddF64.code();
    let (fixed, packages) = ctx.buffers.split_at_mut(FIXED_SLOTS);
    // The packages, one per peer (an algorithm's scratch buffers may follow them).
    let packages: Vec<&mut Vec<u32>> =
        packages.iter_mut().take(peers).map(HostData::as_u32_mut).collect::<Result<_, _>>()?;
    let [_, _, _, values, _, _, marker, next, frontier_out, counters, owner, owner_id, _, _] =
        fixed
    else {
        return Err(BackendError::Usage("bsp_split: wrong buffer count".into()));
    };
    let counters = counters.as_u64_mut()?;
    let out_len = counters[0] as usize;
    let out = frontier_out.as_u32()?;
    let out = out.get(..out_len).ok_or_else(|| BackendError::Kernel {
        kernel: "bsp_split".into(),
        message: format!("output frontier length {out_len} exceeds its buffer"),
    })?;
    let mut arrays = SplitArrays {
        gpu,
        stamp,
        broadcast,
        marker: marker.as_u32_mut()?,
        next: next.as_u32_mut()?,
        out,
        owner: owner.as_u32()?,
        owner_id: owner_id.as_u32()?,
        packages,
    };
    let (next_len, sent) = match values {
        HostData::U32(x) => split_values(&mut arrays, x, |v| v, None)?,
        HostData::F32(x) => split_values(&mut arrays, x, f32::to_bits, add.then_some(0.0))?,
        // f64 partial sums travel rounded to f32 (see Combiner::AddF64).
        HostData::F64(x) => {
            split_values(&mut arrays, x, |v| (v as f32).to_bits(), add.then_some(0.0))?
        }
        other => {
            return Err(BackendError::Usage(format!(
                "bsp_split: values must be u32, f32 or f64, found {:?}",
                other.elem()
            )));
        }
    };
    counters[1] = next_len as u64;
    for (p, &s) in sent.iter().enumerate() {
        counters[2 + p] = s as u64;
    }
    let moved: u64 = sent.iter().map(|&s| s as u64).sum();
    let items = out_len as u64;
    ctx.effects.items = items;
    ctx.effects.bytes_read = items * 12;
    ctx.effects.bytes_written = moved * 8 + next_len as u64 * 4;
    // Each output vertex's owner, and each proxy's id on it: scattered topology reads.
    ctx.effects.peer_read(10, SECTOR_BYTES * items);
    ctx.effects.peer_read(11, SECTOR_BYTES * moved);
    Ok(())
}

fn merge(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let peers = ctx.scalar_u32(1)? as usize;
    let lengths: Vec<usize> =
        (0..peers).map(|p| ctx.scalar_u64(5 + p).map(|l| l as usize)).collect::<Result<_, _>>()?;
    merge_packages(ctx, "bsp_merge", &lengths)
}

/// `bsp_merge` with each package's length read from its sender's counter block, and the
/// packages read where they lie (peer reads, overlapped with the kernel).
fn merge_peer(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let gpu = ctx.scalar_u32(0)? as usize;
    let peers = ctx.scalar_u32(1)? as usize;
    if peers > MERGE_PEER_MAX_PEERS || ctx.buffers.len() != FIXED_SLOTS + 2 * peers {
        return Err(BackendError::Usage(format!(
            "bsp_merge_peer: {peers} peers need {} buffers (at most {MERGE_PEER_MAX_PEERS} peers), \
             {} given",
            FIXED_SLOTS + 2 * peers,
            ctx.buffers.len()
        )));
    }
    let mut lengths = vec![0usize; peers];
    for (p, len) in lengths.iter_mut().enumerate().filter(|(p, _)| *p != gpu) {
        let counters = ctx.buffers[FIXED_SLOTS + peers + p].as_u64()?;
        *len = counters.get(2 + gpu).copied().unwrap_or(0) as usize;
    }
    merge_packages(ctx, "bsp_merge_peer", &lengths)?;
    for (p, &len) in lengths.iter().enumerate().filter(|(p, _)| *p != gpu) {
        ctx.effects.peer_read(FIXED_SLOTS + peers + p, 8);
        ctx.effects.peer_read(FIXED_SLOTS + p, 8 * len as u64);
    }
    Ok(())
}

/// Combines the packages after the fixed slots (`lengths[p]` pairs from peer `p`) into the
/// values; owned vertices that improve or pass the threshold join the next frontier.
fn merge_packages(
    ctx: &mut KernelContext<'_>,
    kernel: &str,
    lengths: &[usize],
) -> Result<(), BackendError> {
    let gpu = ctx.scalar_u32(0)?;
    let peers = lengths.len();
    let stamp = ctx.scalar_u32(2)?;
    let combiner = ctx.scalar_u32(3)?;
    let threshold = ctx.scalar_f64(4)?;
    let (fixed, packages) = ctx.buffers.split_at_mut(FIXED_SLOTS);
    let mut target = MergeTarget::new(fixed, kernel, gpu as usize, stamp)?;
    let mut items = 0u64;
    for (p, package) in packages.iter().enumerate().take(peers) {
        let package = package.as_u32()?;
        let len = lengths[p];
        if 2 * len > package.len() {
            return Err(BackendError::Kernel {
                kernel: kernel.into(),
                message: format!(
                    "{len} items announced from gpu {p}, room for {}",
                    package.len() / 2
                ),
            });
        }
        for pair in package[..2 * len].chunks_exact(2) {
            items += 1;
            let (v, bits) = (pair[0] as usize, pair[1]);
            let activates = match (&mut *target.values, combiner) {
                (HostData::U32(x), 0) => {
                    if bits < x[v] {
                        x[v] = bits;
                        true
                    } else {
                        false
                    }
                }
                (HostData::F32(x), 1) => {
                    x[v] += f32::from_bits(bits);
                    f64::from(x[v]) > threshold
                }
                (HostData::F64(x), 2) => {
                    x[v] += f64::from(f32::from_bits(bits));
                    x[v] > threshold
                }
                (HostData::U32(x), 3) => {
                    x[v] = bits;
                    false
                }
                _ => {
                    return Err(BackendError::Usage(format!(
                        "{kernel}: combiner does not match the value type"
                    )));
                }
            };
            if activates {
                target.activate(v)?;
            }
        }
    }
    target.finish();
    ctx.effects.items = items;
    ctx.effects.atomics = items;
    ctx.effects.bytes_read = items * 8;
    ctx.effects.bytes_written = items * 4;
    // Each received vertex's owner (whether it joins the next frontier): a scattered read.
    ctx.effects.peer_read(10, SECTOR_BYTES * items);
    Ok(())
}
