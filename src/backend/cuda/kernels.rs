//! The CUDA side of the kernel contracts: the sources in `kernels/*.cu` (embedded in the
//! binary), the argument ABI every kernel shares, the launch configuration, and the error
//! codes kernels report. Compilation by NVRTC lives in the backend (`backend.rs`); what is
//! here needs no GPU and is tested everywhere.
//!
//! # ABI
//! Every kernel `NAME` in `kernels/*.cu` is `extern "C" __global__ void NAME(const SyArgs)`:
//! one argument, [`SyArgs`] by value (704 bytes, well under the 4 KiB parameter limit), with
//! the launch's buffer pointers in contract order, their lengths, then the scalars as raw
//! bits in contract order, then the work descriptor; then what the backend owns: the
//! stream's device counters (items, edges, atomics, remote operations; cumulative), a
//! host-mapped error word, and the stream's huge-vertex list. A kernel may have a pre-pass
//! `NAME__pre` (one thread, same arguments, same stream, launched first) that resets the
//! counters it appends to and checks the contract's preconditions, and a post-pass
//! `NAME__post` (full grid, launched after it) that expands the vertices of at least 4096
//! arcs the main pass set aside, in chunks of 4096 arcs that the blocks share out.
//!
//! A kernel may also have a plan pass `NAME__plan` (full grid, launched after `NAME__pre` and
//! before `NAME`): the Groute work kernels compute their batch there (the longest prefix of
//! the candidates whose degrees fit Out: per-tile degree sums, and the last block to finish
//! scans them), since the main pass must know it before any block starts.
//!
//! # Launch configuration
//! [`BLOCK`] threads per block; every kernel walks its items with a grid-stride loop, so the
//! grid is `ceil(items / BLOCK)` blocks capped at [`BLOCKS_PER_SM`] per multiprocessor,
//! where `items` is the launch's `work_items`, or the vertex count for kernels that sweep
//! every local vertex (see [`sweeps_vertices`]), or the full grid for kernels whose work is
//! only known on the device (see [`full_grid`]).
//!
//! Persistent kernels (CUDA names ending in `_fused`: the Groute fused worker) synchronise
//! their whole grid between rounds, so every block must be resident at once: their grid is
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor` x multiprocessors (at most
//! [`FUSED_BLOCKS_PER_SM`] per multiprocessor, fewer blocks make a cheaper grid barrier), and
//! they are launched with `cuLaunchCooperativeKernel`, which refuses a grid that could not
//! be co-resident rather than let it deadlock ([`is_persistent`], [`fused_blocks`]).

use crate::backend::{BackendError, Launch, Scalar};

/// Buffer arguments a launch may carry (14 fixed bsp slots plus one package per peer).
pub const MAX_BUFFERS: usize = 32;
/// Scalar arguments a launch may carry (5 plus one length per peer for `bsp_merge`).
pub const MAX_SCALARS: usize = 16;
/// Threads per block.
pub const BLOCK: u32 = 256;
/// Resident blocks aimed for per multiprocessor (grid-stride loops cover the rest).
pub const BLOCKS_PER_SM: u32 = 8;
/// Number of per-stream device counters kernels add to.
pub const COUNTERS: usize = 4;

/// The shared header (ABI, load-balanced expansion, warp-aggregated pushes).
pub const COMMON_SOURCE: &str = include_str!("../../../kernels/common.cuh");
/// The bulk-synchronous runtime's split and merge.
pub const BSP_SOURCE: &str = include_str!("../../../kernels/bsp.cu");
/// The algorithms' advance and apply kernels.
pub const ALGO_SOURCE: &str = include_str!("../../../kernels/algo.cu");
/// The Groute applications' kernels (connected components, predicate-based filtering).
pub const GROUTE_SOURCE: &str = include_str!("../../../kernels/groute.cu");

/// Groute's distributed-worklist kernels (work, split_send, split_receive, promote, fused
/// for BFS, SSSP and residual PageRank; the worklist's growth).
pub const GROUTE_WORKLIST_SOURCE: &str = include_str!("../../../kernels/groute_worklist.cu");

/// GUM's framework kernels (frontier statistics, Alg. 1's cut, stolen ranges, returns).
pub const GUM_SOURCE: &str = include_str!("../../../kernels/gum.cu");

/// Atos's workers (BFS, residual PageRank, colouring) and its aggregator.
pub const ATOS_SOURCE: &str = include_str!("../../../kernels/atos.cu");

/// The whole program NVRTC compiles: the header, then every kernel file.
pub fn program_source() -> String {
    format!(
        "{COMMON_SOURCE}\n{BSP_SOURCE}\n{ALGO_SOURCE}\n{GROUTE_SOURCE}\n{GROUTE_WORKLIST_SOURCE}\n\
         {GUM_SOURCE}\n{ATOS_SOURCE}\n"
    )
}

/// Whether the CUDA program defines `extern "C"` kernel `name`.
pub fn source_defines(source: &str, name: &str) -> bool {
    source.lines().any(|l| {
        l.starts_with("extern \"C\" __global__")
            && l.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == name)
    })
}

/// The kernel argument block; layout shared with `struct SyArgs` in `kernels/common.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyArgs {
    /// Device pointers of the buffer arguments, in contract order.
    pub ptr: [u64; MAX_BUFFERS],
    /// Their lengths in elements.
    pub len: [u64; MAX_BUFFERS],
    /// Scalars as raw bits, in contract order.
    pub scalar: [u64; MAX_SCALARS],
    /// The launch's work descriptor.
    pub work_items: u64,
    /// Number of buffer arguments.
    pub nbuffers: u64,
    /// Number of scalar arguments.
    pub nscalars: u64,
    /// The backend's number for this launch (kernels report it with an error).
    pub launch: u64,
    /// Device pointer of the stream's counters.
    pub stats: u64,
    /// Device-visible pointer of the host-mapped error word.
    pub error: u64,
    /// Device pointer of the stream's huge-vertex list (`[0]` count, then entries).
    pub huge: u64,
    /// Entries the huge-vertex list holds.
    pub huge_cap: u64,
}

/// Entries of each stream's huge-vertex list: chunks of 4096 arcs of the vertices with at
/// least that many (a vertex whose chunks do not fit is expanded by its block instead).
pub const HUGE_CAP: usize = 1 << 18;

/// A scalar's raw bits as the ABI passes them.
pub fn scalar_bits(s: Scalar) -> u64 {
    match s {
        Scalar::U32(v) => u64::from(v),
        Scalar::U64(v) => v,
        Scalar::F32(v) => u64::from(v.to_bits()),
        Scalar::F64(v) => v.to_bits(),
    }
}

/// Packs a launch's arguments; `buffers` are `(device pointer, length)` in contract order.
pub fn pack_args(
    launch: &Launch,
    buffers: &[(u64, u64)],
    stats: u64,
    error: u64,
) -> Result<SyArgs, BackendError> {
    if buffers.len() > MAX_BUFFERS || launch.scalars.len() > MAX_SCALARS {
        return Err(BackendError::Kernel {
            kernel: launch.kernel.to_string(),
            message: format!(
                "{} buffers and {} scalars given; the CUDA ABI takes at most {MAX_BUFFERS} \
                 and {MAX_SCALARS} (a kernel that takes one buffer per peer limits the GPU \
                 count: use fewer GPUs)",
                buffers.len(),
                launch.scalars.len(),
            ),
        });
    }
    let mut args = SyArgs {
        ptr: [0; MAX_BUFFERS],
        len: [0; MAX_BUFFERS],
        scalar: [0; MAX_SCALARS],
        work_items: launch.work_items,
        nbuffers: buffers.len() as u64,
        nscalars: launch.scalars.len() as u64,
        launch: 0,
        stats,
        error,
        huge: 0,
        huge_cap: 0,
    };
    for (i, &(p, l)) in buffers.iter().enumerate() {
        args.ptr[i] = p;
        args.len[i] = l;
    }
    for (i, &s) in launch.scalars.iter().enumerate() {
        args.scalar[i] = scalar_bits(s);
    }
    Ok(args)
}

/// Kernels whose threads sweep every local vertex (slot 3's length) besides their work
/// items: the grid is sized for the larger of the two.
pub fn sweeps_vertices(kernel: &str) -> bool {
    matches!(
        kernel,
        "pr_ldbc_push" | "pr_ldbc_pull" | "pr_ldbc_apply" | "dobfs_advance" | "bsp_split"
    )
}

/// Kernels whose work is only known on the device (the Groute work kernel's batch is
/// planned there, split_send routes what the work kernel left in Out, bsp_merge_peer reads
/// its packages' lengths from the senders' counters, bsp_merge_bits_peer scans bitmaps
/// whose set bits only the device knows): the full grid.
pub fn full_grid(kernel: &str) -> bool {
    kernel == "bsp_merge_peer"
        || kernel == "bsp_merge_bits_peer"
        || kernel.starts_with("groute_")
            && (kernel.ends_with("_work") || kernel.ends_with("_split_send"))
}

/// Most blocks per multiprocessor of a persistent kernel: its rounds end in grid barriers
/// whose cost grows with the blocks, and most rounds of the latency-bound runs it is for are
/// small (BFS on luxembourg_osm on an H200: 13.5 ms with 2 per multiprocessor, 21 ms with 4
/// or 8). `SWITCHYARD_FUSED_BLOCKS_PER_SM` overrides it (the occupancy still caps it).
pub const FUSED_BLOCKS_PER_SM: u32 = 2;

/// Persistent kernels: the whole grid must be resident (cooperative launch).
pub fn is_persistent(kernel: &str) -> bool {
    kernel.ends_with("_fused")
}

/// The grid of a persistent kernel: `per_sm` resident blocks (by occupancy) capped at
/// `cap_per_sm`, times the multiprocessors; at least one block.
pub fn fused_blocks(per_sm: u32, cap_per_sm: u32, sm_count: u32) -> u32 {
    per_sm.min(cap_per_sm).max(1) * sm_count.max(1)
}

/// The grid of a launch configured persistent ([`crate::backend::LaunchConfig::persistent`]):
/// `per_sm` resident blocks (by occupancy) on each of its `sms` multiprocessors, divided
/// among the `sharers` logical GPUs of its physical GPU (rounded down, at least one block),
/// so that every sharer's persistent grid is resident at once.
pub fn persistent_blocks(per_sm: u32, sms: u32, sharers: u32) -> u32 {
    (per_sm.max(1) * sms.max(1) / sharers.max(1)).max(1)
}

/// Blocks of [`BLOCK`] threads for `items` items on a GPU of `sm_count` multiprocessors.
pub fn grid_blocks(items: u64, sm_count: u32) -> u32 {
    let wanted = items.div_ceil(u64::from(BLOCK)).max(1);
    let cap = u64::from(sm_count.max(1) * BLOCKS_PER_SM);
    wanted.min(cap) as u32
}

/// The message for error `code` with details `d1`, `d2`, reported by a kernel of `kernel`.
pub fn error_message(code: u64, d1: u64, d2: u64) -> String {
    match code {
        1 => format!("input frontier length {d1} exceeds its buffer of {d2}"),
        2 => format!("an output queue overflowed: slot {d1} of {d2}"),
        3 => format!("package for gpu {d1} overflows its {d2} slots"),
        4 => format!("{d2} items announced from gpu {d1}, more than its package holds"),
        5 => format!("{d1} weights for {d2} arcs: the graph needs integer weights"),
        6 => format!(
            "pull step without the reverse CSR of every vertex ({d1} offsets, {d2} vertices)"
        ),
        7 => format!("output frontier length {d1} exceeds its buffer of {d2}"),
        8 => format!("length {d1} exceeds its buffer of {d2}"),
        9 => format!("vertex {d1} is outside {d2} vertices"),
        10 => format!("parent[{d1}] = {d2} points upwards"),
        11 => format!("len {d1} is odd: edges are pairs"),
        12 => format!("{d1} (offset + len) exceeds {d2} vertices"),
        13 => format!("predicate kind {d1} with a = {d2} is not one of 0 (modulus >= 1), 1"),
        14 => {
            format!("the work output buffer of {d2} items cannot hold the first item's {d1} arcs")
        }
        15 => format!(
            "injected fault ({}, a failure drill; unset it to run normally)",
            super::faults::FAULT_ENV
        ),
        16 => format!("launched with {d1} blocks; it needs exactly {d2}, all resident at once"),
        17 => format!(
            "block {d2} waited {d1} ns for work or the end and stopped the run (a lost token or \
             a block that never ran); rerun, and report it with the graph and options"
        ),
        _ => format!("unknown kernel error code {code} ({d1}, {d2})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BufferId;

    #[test]
    fn the_abi_block_has_the_layout_of_the_cuda_struct() {
        // 32 + 32 + 16 u64 arrays, then eight u64 fields, no padding.
        assert_eq!(std::mem::size_of::<SyArgs>(), (32 + 32 + 16 + 8) * 8);
        assert_eq!(std::mem::offset_of!(SyArgs, scalar), 64 * 8);
        assert_eq!(std::mem::offset_of!(SyArgs, work_items), 80 * 8);
        assert_eq!(std::mem::offset_of!(SyArgs, error), 85 * 8);
        assert_eq!(std::mem::offset_of!(SyArgs, huge_cap), 87 * 8);
        assert!(COMMON_SOURCE.contains("#define SY_MAX_BUFFERS 32"));
        assert!(COMMON_SOURCE.contains("#define SY_MAX_SCALARS 16"));
        assert!(COMMON_SOURCE.contains(&format!("#define SY_BLOCK {BLOCK}")));
    }

    #[test]
    fn arguments_are_packed_in_contract_order_with_scalars_as_raw_bits() {
        let launch = Launch {
            kernel: "k",
            buffers: vec![BufferId(0), BufferId(1)],
            scalars: vec![Scalar::U32(7), Scalar::F64(0.5), Scalar::F32(1.0), Scalar::U64(1 << 40)],
            work_items: 99,
        };
        let a = pack_args(&launch, &[(0x1000, 3), (0x2000, 5)], 0xaa, 0xbb).unwrap();
        assert_eq!(&a.ptr[..3], &[0x1000, 0x2000, 0]);
        assert_eq!(&a.len[..3], &[3, 5, 0]);
        assert_eq!(a.scalar[0], 7);
        assert_eq!(f64::from_bits(a.scalar[1]), 0.5);
        assert_eq!(a.scalar[2], u64::from(1f32.to_bits()));
        assert_eq!(a.scalar[3], 1 << 40);
        assert_eq!(
            (a.work_items, a.nbuffers, a.nscalars, a.stats, a.error),
            (99, 2, 4, 0xaa, 0xbb)
        );
    }

    #[test]
    fn too_many_arguments_are_refused_with_the_limit() {
        let launch = Launch { kernel: "k", buffers: vec![], scalars: vec![], work_items: 0 };
        let err = pack_args(&launch, &[(0, 0); 33], 0, 0).unwrap_err();
        assert!(err.to_string().contains("at most 32"), "{err}");
    }

    #[test]
    fn grids_cover_the_work_up_to_eight_blocks_per_multiprocessor() {
        assert_eq!(grid_blocks(0, 132), 1);
        assert_eq!(grid_blocks(256, 132), 1);
        assert_eq!(grid_blocks(257, 132), 2);
        assert_eq!(grid_blocks(1 << 30, 132), 132 * 8);
    }

    #[test]
    fn every_registered_kernel_with_a_cuda_name_is_in_the_program() {
        let source = program_source();
        let registry = crate::driver::builtin_kernels();
        let mut named = 0;
        for def in registry.iter() {
            if let Some(name) = def.cuda_name {
                named += 1;
                assert!(source_defines(&source, name), "kernels/*.cu lacks `{name}`");
            }
        }
        assert!(named >= 9, "only {named} kernels have CUDA names");
        assert!(!source_defines(&source, "no_such_kernel"));
    }

    #[test]
    fn worklist_kernels_get_the_full_grid_and_fused_workers_a_resident_one() {
        assert!(full_grid("groute_bfs_work") && full_grid("groute_pr_split_send"));
        assert!(!full_grid("groute_bfs_split_receive") && !full_grid("bfs_advance"));
        assert!(is_persistent("groute_sssp_fused") && !is_persistent("groute_sssp_work"));
        // Occupancy 6, capped at 2, on 132 multiprocessors; never zero blocks.
        assert_eq!(fused_blocks(6, FUSED_BLOCKS_PER_SM, 132), 2 * 132);
        assert_eq!(fused_blocks(1, 8, 132), 132);
        assert_eq!(fused_blocks(0, 8, 0), 1);
    }

    #[test]
    fn persistent_grids_share_a_physical_gpu_among_its_logical_gpus() {
        assert_eq!(persistent_blocks(4, 132, 1), 528);
        assert_eq!(persistent_blocks(4, 131, 4), 131);
        assert_eq!(persistent_blocks(8, 1, 4), 2);
        assert_eq!(persistent_blocks(1, 1, 4), 1, "never zero blocks");
        assert_eq!(persistent_blocks(0, 0, 0), 1);
    }

    #[test]
    fn kernel_errors_read_as_sentences() {
        assert_eq!(error_message(3, 2, 10), "package for gpu 2 overflows its 10 slots");
        assert!(error_message(99, 0, 0).contains("unknown"));
    }
}
