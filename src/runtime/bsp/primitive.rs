//! What one algorithm tells the bulk-synchronous framework (seed 002 section III-B: the
//! advance kernel, the data to communicate, the combiner, the stop condition). Algorithms
//! implement it in `crate::algo`; the runtime never names one.

use super::Combiner;
use crate::backend::{ElemType, Scalar};

/// What one algorithm tells the bulk-synchronous framework.
pub trait BspPrimitive {
    /// Algorithm name as the CLI spells it.
    fn name(&self) -> &'static str;
    /// Registered name of its advance kernel (contract: the bsp slot layout, scalars
    /// `frontier_len u64, stamp u32, superstep u32, param f64, gpu u32`).
    fn advance_kernel(&self) -> &'static str;
    /// Value element type: `U32` with [`Combiner::MinU32`] and [`Combiner::Assign`], `F32`
    /// with [`Combiner::AddF32`], `F64` with [`Combiner::AddF64`].
    fn value_elem(&self) -> ElemType;
    /// How received values are combined.
    fn combiner(&self) -> Combiner;
    /// Whether it needs edge weights (uploaded as 32-bit words: integers, or `f32` bits for
    /// real weights; its advance kernel knows which it reads).
    fn needs_weights(&self) -> bool {
        false
    }
    /// Whether it must run on the symmetrised graph (weakly connected components).
    fn needs_undirected(&self) -> bool {
        false
    }
    /// Initial value bits of global vertex `v` (u32, or f32 bits; `f64` values start from
    /// these f32 bits widened).
    fn initial_value(&self, v: u32, num_vertices: u32) -> u32;
    /// Initial aux value of global vertex `v` (f32), if the algorithm uses aux.
    fn initial_aux(&self, _v: u32, _num_vertices: u32) -> Option<f32> {
        None
    }
    /// Whether global vertex `v` is in the first frontier.
    fn initially_active(&self, v: u32) -> bool;
    /// The per-algorithm scalar `param` passed to advance and merge (threshold for add).
    fn param(&self) -> f64 {
        0.0
    }
    /// Whether its advance pulls from in-neighbours (direction-optimizing BFS): the runtime
    /// then uploads the in-arcs of owned vertices, which needs duplicate-all and broadcast.
    fn needs_reverse(&self) -> bool {
        false
    }
    /// Whether its advance gathers over the transpose of each GPU's own arcs (LDBC
    /// PageRank's pull): the runtime then uploads, in the reverse slots, for every local
    /// vertex the owned vertices with an arc to it (local ids, ascending), under any
    /// duplication. Not with [`BspPrimitive::needs_reverse`], which fills the same slots.
    fn needs_local_transpose(&self) -> bool {
        false
    }
    /// The `param` scalar of the advance of the superstep whose total frontier size is the
    /// last entry of `frontier_sizes` (earlier entries: earlier supersteps). Defaults to
    /// [`BspPrimitive::param`]; direction-optimizing BFS chooses its direction here.
    fn advance_param(&self, frontier_sizes: &[u64], num_vertices: u32) -> f64 {
        let _ = (frontier_sizes, num_vertices);
        self.param()
    }
    /// An advance kernel that does the split itself, for a primitive whose values are
    /// final when a vertex is discovered (BFS): on several GPUs with selective packages the
    /// runtime launches it instead of the advance and the split. Its contract: the
    /// advance's, plus a last scalar `peers u32` and the send packages after the fixed
    /// slots; owned vertices it reaches go to frontier_out (length `counters[1]`, marked
    /// `stamp + 1`), proxies only into their owner's package (length `counters[2 + owner]`).
    fn routed_advance_kernel(&self) -> Option<&'static str> {
        None
    }
    /// The one value every vertex its routed advance sends at `superstep` carries, if
    /// there is one (BFS: the level `superstep + 1`): the runtime may then send bitmaps
    /// instead of `(id, value)` pairs ([`super::PackageForm`]).
    fn uniform_value(&self, superstep: u32) -> Option<u32> {
        let _ = superstep;
        None
    }
    /// The algorithm's second scalar passed to advance (`extra`; the damping factor).
    fn extra(&self) -> f64 {
        0.0
    }
    /// An apply kernel run on every GPU after each merge (LDBC PageRank's rank update), with
    /// its all-reduced input value; it rebuilds the next frontier itself.
    fn apply_kernel(&self) -> Option<&'static str> {
        None
    }
    /// Initial value of the all-reduced quantity given to the apply kernel.
    fn initial_reduction(&self, _degrees: &[u32], _num_vertices: u32) -> f64 {
        0.0
    }
    /// Whether its kernels read the arcs of its vertices' neighbours (two hops: local
    /// clustering coefficients): every GPU then holds the whole graph (duplicate-all of the
    /// arcs as well as the vertices; see `build_subgraphs_with_all_arcs`).
    fn needs_all_arcs(&self) -> bool {
        false
    }
    /// Scratch buffers its kernels need on each GPU, as `(element type, length, label)`,
    /// given the GPU's local vertices and local arcs: allocated zero-filled once, and passed
    /// as the last buffers of every advance and apply launch (after the packages for the
    /// advance, after the fixed slots for the apply), in this order.
    fn scratch(
        &self,
        _local_vertices: u32,
        _local_arcs: usize,
    ) -> Vec<(ElemType, usize, &'static str)> {
        Vec::new()
    }
    /// A kernel that runs several supersteps in one launch on one GPU (a device-side loop
    /// of grid-wide rounds) while the frontier stays small, if the algorithm has one. Its
    /// contract: the fixed slots, then a control buffer of [`super::LOOP_CONTROL_WORDS`]
    /// `u64` (device memory) and a log of `u64` in mapped host memory (`[0]` supersteps run,
    /// `[1]` the last output length, `[2]` bit 0: which frontier buffer holds that output (0
    /// frontier_in, 1 frontier_out), higher bits: why it stopped (0 empty or the superstep
    /// limit, 1 too many vertices, 2 too many arcs), `[3 + i]` the input length of its
    /// superstep `i`); scalars `frontier_len u64, superstep u32, max_supersteps u32,
    /// most_vertices u64, most_arcs u64`. Each of its supersteps must do exactly what the
    /// advance kernel does, with the same stamps.
    fn loop_kernel(&self) -> Option<&'static str> {
        None
    }
    /// Stop after this many supersteps even if the frontier is not empty.
    fn max_supersteps(&self) -> Option<u32> {
        None
    }
    /// Extra scalars for the apply kernel (after `reduction f64, num_vertices u32`).
    fn apply_scalars(&self) -> Vec<Scalar> {
        Vec::new()
    }
}
