//! GUM's framework kernels (Rust for the simulator; CUDA in `kernels/gum.cu`, one contract
//! with a conformance case each in `tests/cuda_conformance.rs`):
//!
//! - `gum_frontier_stats`: degree statistics of a frontier (Table I's inputs, see
//!   [`super::cost_model::FrontierStats`]) and the out-degree sum of each of its chunks
//!   ([`PREFIX_CHUNKS`]), over the whole grid, in the supersteps where a decision uses them.
//! - `gum_frontier_prefix`: the inclusive prefix sums of the frontier's out-degrees (Alg. 1
//!   line 12) from the chunk sums; only when a plan needs cuts.
//! - `gum_cut`: Alg. 1's sorted search: for each cut point (cumulative edges of the
//!   workers before it), the first frontier position at or beyond it, and the edges before
//!   that position.
//! - `gum_steal_min`: a thief processes a consecutive range of a victim's frontier,
//!   reading the victim's adjacency lists, weights, values and frontier through peer access
//!   while it runs (§III: fetch on demand; a hub's list from the thief's own cache when it
//!   is given one, [`super::hub_cache`]), and writes `(victim-local id, value)` pairs
//!   that improve on the victim's values as it read them (min-combined algorithms).
//! - `gum_merge_return`: the victim combines returned pairs into its values (min) and
//!   appends improved vertices, once, to its output frontier before the split.

use super::cost_model::{FrontierStats, HISTOGRAM_BUCKETS};
use crate::backend::{BackendError, KernelContext, KernelDef, KernelRegistry};
use crate::runtime::bsp::EXPAND_BLOCK_THREADS;

/// Words of the statistics: 8 scalars, then the histogram.
pub const STATS_WORDS: usize = 8 + 2 * HISTOGRAM_BUCKETS;
/// Bytes a scattered read through a peer path moves: one 32-byte sector (the unit of a GPU's
/// memory requests and of NVLink's read responses, seed 003 Fig. 2), whatever the 4 or 8 bytes
/// used. `gum_steal_min` charges its scattered peer reads (a stolen vertex's offsets and
/// value, every stolen edge's target value) at this size; runs of consecutive words
/// (targets, weights, frontier ids) at their own size.
pub const REMOTE_SECTOR_BYTES: u64 = crate::runtime::bsp::kernels::SECTOR_BYTES;

/// Most workers a cut handles (the stats buffer holds two words per cut after the
/// statistics).
pub const MAX_CUTS: usize = 64;
/// Where the stats buffer's accumulator starts: the CUDA kernel's blocks add their sums
/// there ([`STATS_WORDS`] words, minima complemented, then a ticket word) and the last block
/// moves them into the statistics and clears them, so it is zero between launches.
pub const ACC_AT: usize = STATS_WORDS + 2 * MAX_CUTS;
/// Where the chunk sums start: word `TOTALS_AT + c` is chunk `c`'s out-degree sum.
pub const TOTALS_AT: usize = ACC_AT + STATS_WORDS + 1;
/// Most chunks of a frontier: `len` items make `min(len, PREFIX_CHUNKS)` chunks of
/// `ceil(len / that)` items (the last may be shorter), the unit both kernels split by.
pub const PREFIX_CHUNKS: usize = 1024;
/// Words of the stats buffer: statistics, cuts, accumulator and chunk sums.
pub const STATS_BUFFER_WORDS: usize = TOTALS_AT + PREFIX_CHUNKS;

/// Items per chunk of a frontier of `len` items (see [`PREFIX_CHUNKS`]).
pub fn chunk_items(len: usize) -> usize {
    len.div_ceil(len.clamp(1, PREFIX_CHUNKS)).max(1)
}

/// The work items a launch of the chunked kernels (`gum_frontier_stats`,
/// `gum_frontier_prefix`) asks for on a frontier of `len` items: a block of
/// [`EXPAND_BLOCK_THREADS`] threads per chunk, so that no block walks many small chunks one
/// after another (each with two block barriers). A grid sized by the frontier's items
/// instead gave a road graph's frontier of about 4,000 vertices 16 blocks for its 1,000
/// chunks of 4: 123 us a launch on an H200, 565 of GUM's 751 ms of kernels per GPU on the
/// road grid at 2 logical GPUs (c85T).
pub fn chunked_launch_items(len: u64) -> u64 {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let chunks = len.div_ceil(chunk_items(len));
    (chunks as u64).saturating_mul(EXPAND_BLOCK_THREADS as u64)
}

/// How a stolen edge turns its source's value into a candidate for its target (a
/// min-combined relaxation; the algorithm chooses, the runtime never names one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StealRule {
    /// `value + 1` (levels).
    MinPlusOne,
    /// `value + weight` (integer distances, saturating).
    MinPlusWeight,
    /// `value` (labels).
    MinCopy,
}

impl StealRule {
    /// Its code in the kernels' scalar.
    pub fn code(self) -> u32 {
        match self {
            StealRule::MinPlusOne => 0,
            StealRule::MinPlusWeight => 1,
            StealRule::MinCopy => 2,
        }
    }
}

/// Registers GUM's framework kernels.
pub fn register(registry: &mut KernelRegistry) {
    registry.register(KernelDef {
        name: "gum_frontier_stats",
        contract: "buffers degree u32, in_degree u32, frontier u32, counters u64 (bsp layout: \
                   [1] the frontier length), stats u64 (STATS_BUFFER_WORDS, accumulator zero), \
                   prefix u64 (untouched): stats of the frontier's degrees (stats[0] its \
                   length), stats[TOTALS_AT + c] the out-degree sum of chunk c",
        sim: frontier_stats,
        cuda_name: Some("gum_frontier_stats"),
        // A fragment's degrees stay on its GPU when OSteal's extended move hosts it elsewhere.
        remote_args: &[0, 1],
    });
    registry.register(KernelDef {
        name: "gum_frontier_prefix",
        contract: "buffers degree u32, frontier u32, counters u64 ([1] the frontier length), \
                   stats u64 (chunk sums as gum_frontier_stats left them), prefix u64: the \
                   inclusive prefix sums of the frontier's out-degrees",
        sim: frontier_prefix,
        cuda_name: Some("gum_frontier_prefix"),
        remote_args: &[0],
    });
    registry.register(KernelDef {
        name: "gum_cut",
        contract: "buffers prefix u64, stats u64; scalars frontier_len u64, cuts u32, then one \
                   u64 cut per worker boundary: stats[STATS_WORDS + c] = first position whose \
                   first edge is at or beyond cut c, stats[STATS_WORDS + MAX_CUTS + c] = the \
                   edges before it",
        sim: cut,
        cuda_name: Some("gum_cut"),
        remote_args: &[],
    });
    registry.register(KernelDef {
        name: "gum_steal_min",
        contract: "buffers offsets u64, targets u32, weights u32, values u32, frontier u32 (all \
                   the victim's, read through peer access), out u32 pairs, out_len u64, and \
                   optionally the thief's cache of the victim's hub lists (hub ids u32 \
                   ascending, hub offsets u64 (one more), hub targets u32, hub weights u32); \
                   scalars start u64, end u64, rule u32, remote_mask u32: for the victim's \
                   frontier positions start..end, every edge of the vertex's list (a cached \
                   hub's from the cache, any other the victim's) whose candidate improves the \
                   target's value as read appends (target, candidate)",
        sim: steal_min,
        cuda_name: Some("gum_steal_min"),
        remote_args: &[0, 1, 2, 3, 4],
    });
    registry.register(KernelDef {
        name: "gum_merge_return",
        contract: "buffers values u32, marker u32, frontier_out u32, counters u64, then one \
                   returned package of u32 pairs per thief; scalars stamp u32, then one u64 \
                   pair count per package: min-combine, and append improved vertices once to \
                   frontier_out (counters[0] is its length)",
        sim: merge_return,
        cuda_name: Some("gum_merge_return"),
        remote_args: &[],
    });
}

fn kernel_error(kernel: &str, message: String) -> BackendError {
    BackendError::Kernel { kernel: kernel.into(), message }
}

fn frontier_stats(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let [degree, in_degree, frontier, counters, stats, _prefix] = ctx.buffers::<6>()?;
    let len = counters.as_u64()?.get(1).copied().unwrap_or(0) as usize;
    let (degree, in_degree, frontier) = (degree.as_u32()?, in_degree.as_u32()?, frontier.as_u32()?);
    let stats = stats.as_u64_mut()?;
    if len > frontier.len() || stats.len() < STATS_BUFFER_WORDS {
        return Err(kernel_error("gum_frontier_stats", format!("frontier of {len} does not fit")));
    }
    let s = FrontierStats::from_degrees(
        frontier[..len]
            .iter()
            .map(|&v| (u64::from(degree[v as usize]), u64::from(in_degree[v as usize]))),
    );
    write_stats(&s, stats);
    for (c, part) in frontier[..len].chunks(chunk_items(len)).enumerate() {
        stats[TOTALS_AT + c] = part.iter().map(|&v| u64::from(degree[v as usize])).sum();
    }
    ctx.effects.items = len as u64;
    ctx.effects.bytes_read = len as u64 * 12;
    ctx.effects.atomics = len as u64 / 32;
    // The degrees, scattered reads of the fragment's topology (remote while it is hosted
    // elsewhere).
    ctx.effects.peer_read(0, REMOTE_SECTOR_BYTES * len as u64);
    ctx.effects.peer_read(1, REMOTE_SECTOR_BYTES * len as u64);
    Ok(())
}

fn frontier_prefix(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let [degree, frontier, counters, stats, prefix] = ctx.buffers::<5>()?;
    let len = counters.as_u64()?.get(1).copied().unwrap_or(0) as usize;
    let (degree, frontier, prefix) = (degree.as_u32()?, frontier.as_u32()?, prefix.as_u64_mut()?);
    if len > frontier.len() || len > prefix.len() || stats.as_u64()?.len() < STATS_BUFFER_WORDS {
        return Err(kernel_error("gum_frontier_prefix", format!("frontier of {len} does not fit")));
    }
    let mut total = 0u64;
    for (k, &v) in frontier[..len].iter().enumerate() {
        total += u64::from(degree[v as usize]);
        prefix[k] = total;
    }
    ctx.effects.items = len as u64;
    ctx.effects.bytes_read = len as u64 * 8;
    ctx.effects.bytes_written = len as u64 * 8;
    ctx.effects.peer_read(0, REMOTE_SECTOR_BYTES * len as u64);
    Ok(())
}

/// Lays `s` out in the stats buffer.
pub fn write_stats(s: &FrontierStats, stats: &mut [u64]) {
    stats[..8].copy_from_slice(&[
        s.vertices,
        s.out_edges,
        s.in_edges,
        s.out_min,
        s.out_max,
        s.in_min,
        s.in_max,
        s.out_d_ln_d.to_bits(),
    ]);
    stats[8..8 + HISTOGRAM_BUCKETS].copy_from_slice(&s.bucket_vertices);
    stats[8 + HISTOGRAM_BUCKETS..STATS_WORDS].copy_from_slice(&s.bucket_edges);
}

/// Reads the stats buffer back.
pub fn read_stats(stats: &[u64]) -> FrontierStats {
    FrontierStats {
        vertices: stats[0],
        out_edges: stats[1],
        in_edges: stats[2],
        out_min: stats[3],
        out_max: stats[4],
        in_min: stats[5],
        in_max: stats[6],
        out_d_ln_d: f64::from_bits(stats[7]),
        bucket_vertices: stats[8..8 + HISTOGRAM_BUCKETS].to_vec(),
        bucket_edges: stats[8 + HISTOGRAM_BUCKETS..STATS_WORDS].to_vec(),
    }
}

fn cut(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let len = ctx.scalar_u64(0)? as usize;
    let cuts = ctx.scalar_u32(1)? as usize;
    let points: Vec<u64> = (0..cuts).map(|c| ctx.scalar_u64(2 + c)).collect::<Result<_, _>>()?;
    let [prefix, stats] = ctx.buffers::<2>()?;
    let (prefix, stats) = (prefix.as_u64()?, stats.as_u64_mut()?);
    if cuts > MAX_CUTS || len > prefix.len() || stats.len() < STATS_WORDS + 2 * MAX_CUTS {
        return Err(kernel_error("gum_cut", format!("{cuts} cuts over {len} positions")));
    }
    let prefix = &prefix[..len];
    for (c, &point) in points.iter().enumerate() {
        let b = super::planner::ranges::boundary(prefix, point);
        stats[STATS_WORDS + c] = b as u64;
        stats[STATS_WORDS + MAX_CUTS + c] = super::planner::ranges::exclusive_start(prefix, b);
    }
    ctx.effects.items = cuts as u64;
    ctx.effects.bytes_read = cuts as u64 * 8 * (64 - (len as u64).leading_zeros() as u64 + 1);
    Ok(())
}

fn steal_min(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let start = ctx.scalar_u64(0)? as usize;
    let end = ctx.scalar_u64(1)? as usize;
    let rule = ctx.scalar_u32(2)?;
    let remote = ctx.scalar_u32(3)?;
    let KernelContext { buffers, effects, .. } = ctx;
    let (buffers, cache) = match buffers.len() {
        7 => (&mut buffers[..], None),
        11 => {
            let (b, c) = buffers.split_at_mut(7);
            let [ids, offsets, targets, weights] = c else { unreachable!("4 of 11") };
            (b, Some((ids.as_u32()?, offsets.as_u64()?, targets.as_u32()?, weights.as_u32()?)))
        }
        n => {
            return Err(kernel_error(
                "gum_steal_min",
                format!("expects 7 buffers, or 11 with a hub cache; got {n}"),
            ));
        }
    };
    let [offsets, targets, weights, values, frontier, out, out_len] = buffers else {
        unreachable!("7 buffers")
    };
    let (offsets, targets, weights) = (offsets.as_u64()?, targets.as_u32()?, weights.as_u32()?);
    let (values, frontier) = (values.as_u32()?, frontier.as_u32()?);
    let (out, out_len) = (out.as_u32_mut()?, out_len.as_u64_mut()?);
    if let Some((ids, o, _, _)) = cache
        && o.len() != ids.len() + 1
    {
        return Err(kernel_error(
            "gum_steal_min",
            format!(
                "hub cache of {} ids has {} offsets, not one more (build it with HubLists::of)",
                ids.len(),
                o.len()
            ),
        ));
    }
    let short =
        [Some((weights.len(), targets.len())), cache.map(|(_, _, t, w)| (w.len(), t.len()))];
    if let Some((w, t)) = short.into_iter().flatten().find(|&(w, t)| rule == 1 && w < t) {
        return Err(kernel_error(
            "gum_steal_min",
            format!("{w} weights for {t} arcs: the graph needs integer weights"),
        ));
    }
    let range = frontier.get(start..end).ok_or_else(|| {
        kernel_error(
            "gum_steal_min",
            format!(
                "range {start}..{end} outside the victim's frontier of {} (its buffers must be \
                 readable through peer access)",
                frontier.len()
            ),
        )
    })?;
    let mut pushed = 0usize;
    let (mut edges, mut hubs, mut hub_edges) = (0u64, 0u64, 0u64);
    for &v in range {
        // A cached hub's list is read from the thief's copy (Ex. 6), any other through the
        // victim's peer path.
        let hub = cache.and_then(|(ids, o, t, w)| {
            let k = ids.binary_search(&v).ok()?;
            let (a, b) = (o[k] as usize, o[k + 1] as usize);
            Some((&t[a..b], if rule == 1 { &w[a..b] } else { &[][..] }))
        });
        let (a, b) = (offsets[v as usize] as usize, offsets[v as usize + 1] as usize);
        let (list, list_weights) = match hub {
            Some(lists) => {
                hubs += 1;
                hub_edges += lists.0.len() as u64;
                lists
            }
            None => (&targets[a..b], if rule == 1 { &weights[a..b] } else { &[][..] }),
        };
        let value = values[v as usize];
        for (k, &t) in list.iter().enumerate() {
            let t = t as usize;
            let candidate = match rule {
                0 => value.saturating_add(1),
                1 => value.saturating_add(list_weights[k]),
                _ => value,
            };
            if candidate < values[t] {
                let slot = out.get_mut(2 * pushed..2 * pushed + 2).ok_or_else(|| {
                    kernel_error("gum_steal_min", format!("output of {} pairs overflows", pushed))
                })?;
                slot.copy_from_slice(&[t as u32, candidate]);
                pushed += 1;
            }
        }
        edges += list.len() as u64;
    }
    out_len[0] = pushed as u64;
    let vertices = range.len() as u64;
    let weighted = u64::from(rule == 1);
    // Bytes per argument: a vertex's offsets and value, and an edge's target value, are
    // scattered reads of a sector each ([`REMOTE_SECTOR_BYTES`]); targets and weights (4 per
    // edge each) and frontier ids (4 per vertex) are read in runs. A cached hub's offsets,
    // targets and weights are local, and so is every vertex's look-up in the cache.
    let own = edges - hub_edges;
    let sector = REMOTE_SECTOR_BYTES;
    let bytes = [
        (vertices - hubs) * sector,
        own * 4,
        own * 4 * weighted,
        (vertices + edges) * sector,
        vertices * 4,
    ];
    for (arg, &b) in bytes.iter().enumerate() {
        if remote & (1 << arg) != 0 {
            effects.peer_read(arg, b);
        } else {
            effects.bytes_read += b;
        }
    }
    if cache.is_some() {
        effects.bytes_read += vertices * 4 + hubs * 16 + hub_edges * 4 * (1 + weighted);
    }
    effects.items = vertices;
    effects.edges = edges;
    effects.bytes_written = pushed as u64 * 8;
    effects.atomics = pushed as u64;
    Ok(())
}

fn merge_return(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let stamp = ctx.scalar_u32(0)?;
    let packages = ctx.buffers.len().saturating_sub(4);
    let lengths: Vec<usize> = (0..packages)
        .map(|p| ctx.scalar_u64(1 + p).map(|l| l as usize))
        .collect::<Result<_, _>>()?;
    let (fixed, returned) = ctx.buffers.split_at_mut(4);
    let [values, marker, frontier_out, counters] = fixed else {
        return Err(kernel_error("gum_merge_return", "expects at least 4 buffers".into()));
    };
    let (values, marker) = (values.as_u32_mut()?, marker.as_u32_mut()?);
    let (frontier_out, counters) = (frontier_out.as_u32_mut()?, counters.as_u64_mut()?);
    let mut len = counters[0] as usize;
    let mut items = 0u64;
    for (package, &pairs) in returned.iter().zip(&lengths) {
        let package = package.as_u32()?;
        let Some(package) = package.get(..2 * pairs) else {
            return Err(kernel_error(
                "gum_merge_return",
                format!("{pairs} pairs announced, room for {}", package.len() / 2),
            ));
        };
        for pair in package.chunks_exact(2) {
            items += 1;
            let (v, value) = (pair[0] as usize, pair[1]);
            if value < values[v] {
                values[v] = value;
                if marker[v] != stamp {
                    marker[v] = stamp;
                    frontier_out[len] = v as u32;
                    len += 1;
                }
            }
        }
    }
    counters[0] = len as u64;
    ctx.effects.items = items;
    ctx.effects.atomics = items;
    ctx.effects.bytes_read = items * 8;
    ctx.effects.bytes_written = items * 4;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BufferId, HostData, Scalar};

    #[test]
    fn a_chunked_launch_asks_for_a_block_per_chunk() {
        let block = EXPAND_BLOCK_THREADS as u64;
        // 4,000 items: 1,000 chunks of 4 (not 16 blocks walking 62 chunks each).
        assert_eq!(chunk_items(4_000), 4);
        assert_eq!(chunked_launch_items(4_000), 1_000 * block);
        // Fewer items than chunks: a chunk (and a block) per item; none: no chunk.
        assert_eq!(chunked_launch_items(10), 10 * block);
        assert_eq!(chunked_launch_items(0), 0);
        // A large frontier: at most PREFIX_CHUNKS chunks (the last may be shorter).
        assert_eq!(chunked_launch_items(21_000_000), PREFIX_CHUNKS as u64 * block);
        assert_eq!(chunked_launch_items(1_025), 513 * block);
    }

    fn run(
        name: &'static str,
        f: fn(&mut KernelContext<'_>) -> Result<(), BackendError>,
        buffers: &mut [HostData],
        scalars: &[Scalar],
    ) -> crate::backend::KernelEffects {
        let ids: Vec<BufferId> = (0..buffers.len() as u32).map(BufferId).collect();
        let mut ctx = KernelContext::new(name, buffers, &ids, scalars);
        f(&mut ctx).unwrap();
        ctx.effects
    }

    #[test]
    fn steal_and_merge_relax_like_a_sequential_pass() {
        // Victim: 0 -> 1 (w 5), 0 -> 2 (w 1), 2 -> 1 (w 1); frontier [0, 2]; values 0, 9, 1.
        let offsets = HostData::U64(vec![0, 2, 2, 3]);
        let targets = HostData::U32(vec![1, 2, 1]);
        let weights = HostData::U32(vec![5, 1, 1]);
        let values = HostData::U32(vec![0, 9, 1]);
        let frontier = HostData::U32(vec![0, 2]);
        let mut bufs = vec![
            offsets,
            targets,
            weights,
            values.clone(),
            frontier,
            HostData::U32(vec![0; 6]),
            HostData::U64(vec![0]),
        ];
        let effects = run(
            "gum_steal_min",
            steal_min,
            &mut bufs,
            &[Scalar::U64(0), Scalar::U64(2), Scalar::U32(1), Scalar::U32(0b11111)],
        );
        assert_eq!(bufs[6].as_u64().unwrap()[0], 2);
        assert_eq!(&bufs[5].as_u32().unwrap()[..4], &[1, 5, 1, 2]);
        assert_eq!(effects.edges, 3);
        // The victim merges them: 1 drops to 2 and joins frontier_out once.
        let package = bufs[5].clone();
        let mut m = vec![
            values,
            HostData::U32(vec![0; 3]),
            HostData::U32(vec![0; 3]),
            HostData::U64(vec![0; 4]),
            package,
        ];
        run("gum_merge_return", merge_return, &mut m, &[Scalar::U32(7), Scalar::U64(2)]);
        assert_eq!(m[0].as_u32().unwrap(), &[0, 2, 1]);
        assert_eq!(m[3].as_u64().unwrap()[0], 1);
        assert_eq!(m[2].as_u32().unwrap()[0], 1);
    }

    #[test]
    fn a_cached_hub_gives_the_same_pairs_and_is_read_locally() {
        // Victim: 0 -> 1 (w 5), 0 -> 2 (w 1), 2 -> 1 (w 1); frontier [0, 2]; vertex 0 a hub.
        let victim = || {
            vec![
                HostData::U64(vec![0, 2, 2, 3]),
                HostData::U32(vec![1, 2, 1]),
                HostData::U32(vec![5, 1, 1]),
                HostData::U32(vec![0, 9, 1]),
                HostData::U32(vec![0, 2]),
                HostData::U32(vec![0; 6]),
                HostData::U64(vec![0]),
            ]
        };
        let scalars = [Scalar::U64(0), Scalar::U64(2), Scalar::U32(1), Scalar::U32(0b11111)];
        let mut plain = victim();
        let remote = run("gum_steal_min", steal_min, &mut plain, &scalars);
        let mut cached = victim();
        cached.extend([
            HostData::U32(vec![0]),
            HostData::U64(vec![0, 2]),
            HostData::U32(vec![1, 2]),
            HostData::U32(vec![5, 1]),
        ]);
        let local = run("gum_steal_min", steal_min, &mut cached, &scalars);
        assert_eq!(cached[5], plain[5], "the same pairs");
        assert_eq!(cached[6], plain[6]);
        assert_eq!(local.edges, remote.edges);
        let peer =
            |e: &crate::backend::KernelEffects| e.peer_reads.iter().map(|r| r.bytes).sum::<u64>();
        // The hub's two targets and weights (16 bytes) and its offsets (a sector) are local.
        assert_eq!(peer(&remote) - peer(&local), 16 + REMOTE_SECTOR_BYTES);
        assert!(local.bytes_read > remote.bytes_read);
        // Any other buffer count is refused by name.
        let mut short = victim();
        short.pop();
        let ids: Vec<BufferId> = (0..short.len() as u32).map(BufferId).collect();
        let mut ctx = KernelContext::new("gum_steal_min", &mut short, &ids, &scalars);
        let err = steal_min(&mut ctx).expect_err("6 buffers").to_string();
        assert!(err.contains("expects 7 buffers, or 11"), "{err}");
        // A cache whose offsets are not one more than its ids, or whose weights are short
        // when the rule adds them, is refused (the CUDA pre-pass refuses the same).
        let refused = |cache: [HostData; 4]| {
            let mut bufs = victim();
            bufs.extend(cache);
            let ids: Vec<BufferId> = (0..bufs.len() as u32).map(BufferId).collect();
            let mut ctx = KernelContext::new("gum_steal_min", &mut bufs, &ids, &scalars);
            steal_min(&mut ctx).expect_err("a bad cache").to_string()
        };
        let err = refused([
            HostData::U32(vec![0]),
            HostData::U64(vec![2]),
            HostData::U32(vec![1, 2]),
            HostData::U32(vec![5, 1]),
        ]);
        assert!(err.contains("hub cache of 1 ids has 1 offsets"), "{err}");
        let err = refused([
            HostData::U32(vec![0]),
            HostData::U64(vec![0, 2]),
            HostData::U32(vec![1, 2]),
            HostData::U32(vec![]),
        ]);
        assert!(err.contains("0 weights for 2 arcs"), "{err}");
    }

    #[test]
    fn stats_and_cuts_follow_alg_1() {
        let degree = HostData::U32(vec![3, 2, 3, 0]);
        let in_degree = HostData::U32(vec![1, 1, 1, 5]);
        let frontier = HostData::U32(vec![0, 1, 2, 3]);
        let counters = HostData::U64(vec![0, 4, 0]);
        let mut bufs = vec![
            degree.clone(),
            in_degree,
            frontier.clone(),
            counters.clone(),
            HostData::U64(vec![0; STATS_BUFFER_WORDS]),
            HostData::U64(vec![0; 4]),
        ];
        run("gum_frontier_stats", frontier_stats, &mut bufs, &[]);
        assert_eq!(bufs[5].as_u64().unwrap(), &[0; 4], "the stats kernel leaves the prefix");
        let stats = bufs[4].clone();
        let s = read_stats(stats.as_u64().unwrap());
        assert_eq!((s.vertices, s.out_edges, s.in_edges, s.out_max, s.in_max), (4, 8, 8, 3, 5));
        // Four items make four chunks of one: the chunk sums are the out-degrees.
        assert_eq!(&stats.as_u64().unwrap()[TOTALS_AT..TOTALS_AT + 5], &[3, 2, 3, 0, 0]);
        let mut p = vec![degree, frontier, counters, stats.clone(), HostData::U64(vec![0; 4])];
        run("gum_frontier_prefix", frontier_prefix, &mut p, &[]);
        assert_eq!(p[4].as_u64().unwrap(), &[3, 5, 8, 8]);
        let mut c = vec![p[4].clone(), stats];
        run("gum_cut", cut, &mut c, &[Scalar::U64(4), Scalar::U32(1), Scalar::U64(5)]);
        let stats = c[1].as_u64().unwrap();
        assert_eq!(stats[STATS_WORDS], 2);
        assert_eq!(stats[STATS_WORDS + MAX_CUTS], 5);
    }

    #[test]
    fn chunks_cover_the_frontier_in_at_most_the_chunk_count() {
        for len in [0usize, 1, 5, 1023, 1024, 1025, 4_000_000] {
            let chunk = chunk_items(len);
            assert!(chunk >= 1);
            assert!(len.div_ceil(chunk) <= PREFIX_CHUNKS, "{len}");
            assert!(chunk * PREFIX_CHUNKS.min(len.max(1)) >= len, "{len}");
        }
    }
}
