//! The critical path of one expansion of a frontier on a GPU: the arc slots the busiest
//! thread block goes through ([`block_path`]), which the simulator's device-side loops report
//! as [`KernelEffects::path_edges`](crate::backend::KernelEffects::path_edges).
//!
//! The CUDA expansion (`sy_expand` in `kernels/common.cuh`) hands frontier entries to blocks
//! a block-width at a time (entries `[k * SY_BLOCK, (k + 1) * SY_BLOCK)` to block
//! `k % grid`), and each block expands the arcs of its own entries with its threads, a
//! block-width of arcs at a time; a vertex of at least `SY_HUGE` arcs is set aside instead,
//! and after the main pass the grid shares its chunks of `SY_HUGE` arcs, one chunk per block
//! at a time (`sy_expand_huge`). A round whose frontier fills few blocks (a road network's
//! BFS: about a hundred vertices a level) therefore takes as long as its busiest block, not
//! as its arcs spread over the GPU: one H200 (c77B) took 7.9 us a level on luxembourg_osm
//! (about 110 vertices and 240 arcs a level, one block) and 16.5 us on delaunay_n16 (about
//! 600 vertices and 3,600 arcs in three blocks, the busiest about 1,500).

/// Threads of a block of the expansion kernels (`SY_BLOCK` of `kernels/common.cuh`).
pub const EXPAND_BLOCK_THREADS: usize = 256;
/// Threads of a warp, which expands a vertex of [`WARP_THREADS`] to
/// [`EXPAND_BLOCK_THREADS`] arcs on its own.
const WARP_THREADS: u64 = 32;
/// Arcs of a vertex from which the expansion sets it aside for the whole grid, and the
/// size of its chunks (`SY_HUGE` of `kernels/common.cuh`).
pub const HUGE_VERTEX_ARCS: u64 = 4096;

/// The critical path of one expansion ([`block_path`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockPath {
    /// Arc slots the busiest block goes through: its block-wide steps (every thread one
    /// arc) times [`EXPAND_BLOCK_THREADS`], each vertex's arcs rounded up to the threads
    /// that expand them, plus its share of the huge vertices' chunks.
    pub arc_slots: u64,
    /// Whether some vertex was set aside as huge: the grid then expands the chunks after a
    /// second grid barrier.
    pub huge_pass: bool,
}

/// The critical path of expanding `frontier` (CSR row offsets `offsets`) on a
/// `grid_blocks`-block grid (0 is taken as 1), as `sy_expand` does it: each block takes
/// a block-width of entries at a time and, for them, expands every vertex of
/// [`EXPAND_BLOCK_THREADS`] arcs or more with the whole block, one after another
/// (`ceil(arcs / 256)` steps each), every vertex of 32 to 255 arcs with the warp that holds
/// it (the block's eight warps side by side: the busiest warp's `ceil(arcs / 32)` steps),
/// and the other arcs laid end to end over the block (`ceil(sum / 256)` steps). Vertices of
/// [`HUGE_VERTEX_ARCS`] or more are set aside: each block then takes at most
/// `ceil(chunks / grid_blocks)` chunks of up to [`HUGE_VERTEX_ARCS`] arcs.
pub fn block_path(frontier: &[u32], offsets: &[u64], grid_blocks: u64) -> BlockPath {
    let grid = grid_blocks.max(1);
    let block = EXPAND_BLOCK_THREADS as u64;
    let chunks_used = (frontier.len().div_ceil(EXPAND_BLOCK_THREADS) as u64).min(grid);
    let mut steps = vec![0u64; chunks_used as usize];
    let mut huge_chunks = 0u64;
    for (k, chunk) in frontier.chunks(EXPAND_BLOCK_THREADS).enumerate() {
        let (mut wide, mut small) = (0u64, 0u64);
        let mut warps = [0u64; EXPAND_BLOCK_THREADS / WARP_THREADS as usize];
        for (i, &v) in chunk.iter().enumerate() {
            let v = v as usize;
            let arcs = offsets.get(v + 1).zip(offsets.get(v)).map_or(0, |(e, b)| e - b);
            if arcs >= HUGE_VERTEX_ARCS {
                huge_chunks += arcs.div_ceil(HUGE_VERTEX_ARCS);
            } else if arcs >= block {
                wide += arcs.div_ceil(block);
            } else if arcs >= WARP_THREADS {
                warps[i / WARP_THREADS as usize] += arcs.div_ceil(WARP_THREADS);
            } else {
                small += arcs;
            }
        }
        let busiest_warp = warps.into_iter().max().unwrap_or(0);
        steps[(k as u64 % grid) as usize] += wide + busiest_warp + small.div_ceil(block);
    }
    let busiest = steps.into_iter().max().unwrap_or(0);
    BlockPath {
        arc_slots: busiest * block + huge_chunks.div_ceil(grid) * HUGE_VERTEX_ARCS,
        huge_pass: huge_chunks > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row offsets of vertices with these arc counts.
    fn offsets(degrees: &[u64]) -> Vec<u64> {
        let mut o = vec![0];
        for d in degrees {
            o.push(o.last().copied().unwrap_or(0) + d);
        }
        o
    }

    #[test]
    fn the_constants_are_the_cuda_kernels_own() {
        let common = include_str!("../../../kernels/common.cuh");
        assert!(common.contains(&format!("#define SY_BLOCK {EXPAND_BLOCK_THREADS}\n")));
        assert!(common.contains(&format!("#define SY_HUGE {HUGE_VERTEX_ARCS}\n")));
    }

    #[test]
    fn a_block_width_of_entries_goes_to_each_block_and_the_busiest_block_counts() {
        // 600 vertices of 6 arcs: blocks of 256, 256 and 88 entries, 1,536 arcs in 6 steps
        // for each full block.
        let o = offsets(&[6; 600]);
        let frontier: Vec<u32> = (0..600).collect();
        let path = |f: &[u32], grid| block_path(f, &o, grid);
        assert_eq!(path(&frontier, 1_000), BlockPath { arc_slots: 6 * 256, huge_pass: false });
        // One block for the whole grid: 1,536 + 1,536 + 528 arcs, 6 + 6 + 3 steps.
        assert_eq!(path(&frontier, 1).arc_slots, 15 * 256);
        // Two blocks: block 0 takes entries 0..256 and 512..600 (6 + 3 steps).
        assert_eq!(path(&frontier, 2).arc_slots, 9 * 256);
        assert_eq!(path(&frontier, 0).arc_slots, 15 * 256);
        assert_eq!(path(&[], 2), BlockPath::default());
    }

    #[test]
    fn wide_vertices_take_the_block_and_medium_ones_their_warp() {
        // Vertex 0: 1,000 arcs (4 block steps); vertices 1 and 2 (warp 0): 33 and 64 arcs
        // (2 + 2 warp steps); vertex 40 (warp 1): 100 arcs (4 warp steps); the other 252
        // vertices 1 arc each (252 arcs laid end to end: 1 step).
        let mut degrees = vec![1u64; 256];
        degrees[0] = 1_000;
        degrees[1] = 33;
        degrees[2] = 64;
        degrees[40] = 100;
        let o = offsets(&degrees);
        let frontier: Vec<u32> = (0..256).collect();
        assert_eq!(block_path(&frontier, &o, 1_000).arc_slots, (4 + 4 + 1) * 256);
    }

    #[test]
    fn huge_vertices_are_shared_by_the_grid_in_chunks_after_a_second_barrier() {
        // Vertex 0 has 10,000 arcs (3 chunks), vertex 1 has 4,096 (1 chunk), vertex 2 has 5.
        let o = offsets(&[10_000, 4_096, 5]);
        let path = |grid| block_path(&[0, 1, 2], &o, grid);
        assert_eq!(path(1_000), BlockPath { arc_slots: 256 + HUGE_VERTEX_ARCS, huge_pass: true });
        assert_eq!(path(2).arc_slots, 256 + 2 * HUGE_VERTEX_ARCS);
        assert_eq!(path(0).arc_slots, 256 + 4 * HUGE_VERTEX_ARCS);
        assert!(!block_path(&[2], &o, 1).huge_pass);
    }
}
