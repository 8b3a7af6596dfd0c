//! Kernel contracts and their registry.
//!
//! Every kernel has one contract (its buffer and scalar arguments, what it computes) and two
//! implementations: a Rust function that the simulator executes, reporting the counts the
//! GPU cost model turns into time, and a CUDA function in `kernels/*.cu` named by
//! [`KernelDef::cuda_name`]. Users register their own kernels the same way.

use super::{BackendError, BufferId, DeviceId, ElemType, HostData};
use std::collections::BTreeMap;

/// A scalar kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// Unsigned 32-bit.
    U32(u32),
    /// Unsigned 64-bit.
    U64(u64),
    /// 32-bit float.
    F32(f32),
    /// 64-bit float.
    F64(f64),
}

/// A word a remote atomic operates on: the element type of the target buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Word {
    /// Unsigned 32-bit.
    U32(u32),
    /// Unsigned 64-bit.
    U64(u64),
    /// 32-bit float.
    F32(f32),
}

impl Word {
    /// The element type a target buffer must have.
    pub fn elem(self) -> ElemType {
        match self {
            Word::U32(_) => ElemType::U32,
            Word::U64(_) => ElemType::U64,
            Word::F32(_) => ElemType::F32,
        }
    }

    /// Whether this is a float (no remote float atomics over InfiniBand).
    pub fn is_float(self) -> bool {
        matches!(self, Word::F32(_))
    }
}

/// What a remote atomic does to `target` with operand `value`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AtomicOp {
    /// `target = target + value` (wrapping for integers).
    Add,
    /// `target = min(target, value)` (floats by IEEE order; NaN operands are ignored).
    Min,
    /// `target = max(target, value)`.
    Max,
    /// `target = value` if `target == expected` (compare-and-swap).
    Cas {
        /// The value the target must hold for the swap to happen.
        expected: Word,
    },
    /// `target = value` (exchange).
    Exch,
}

impl AtomicOp {
    /// Whether InfiniBand's one-sided atomics (NVSHMEM over IB: integer fetch-add,
    /// compare-and-swap, swap) can carry it for `value`: no remote min/max over IB (seed 003
    /// sec. III-A3b) and no float atomics.
    pub fn supported_over_network(self, value: Word) -> bool {
        !value.is_float() && matches!(self, AtomicOp::Add | AtomicOp::Cas { .. } | AtomicOp::Exch)
    }
}

/// What happens to the value a remote atomic found (the "old" value a GPU atomic returns).
#[derive(Clone, Debug, PartialEq)]
pub enum Fetch {
    /// Not returned (a reduction: `red.*` on a GPU); no reply travels back.
    Discard,
    /// Written into `buffer[index]` on the issuing device when the reply arrives (a round
    /// trip after the issue). `buffer` must hold the operand's element type.
    Into {
        /// A buffer of the issuing device.
        buffer: BufferId,
        /// Element index.
        index: usize,
    },
    /// When the atomic changed the target, the issuing thread sees the old value after the
    /// round trip and issues `then` (e.g. Atos BFS: remote atomicMin, and on improvement a
    /// push into the owner's receive queue). Costs a reply and a second message.
    IfChanged(Box<RemoteOp>),
}

/// A device queue as kernels and the backend see it: an item buffer (`u32` words) and its
/// counter block (`u64`, laid out by [`super::queue`]). Pushes follow Atos's counter
/// protocol (`end_alloc`, `end_max`, `end_count`, `end`), so items below `end` are valid
/// while others still push.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueRef {
    /// Item storage (`u32`).
    pub items: BufferId,
    /// Counter block (`u64`, [`super::queue::COUNTER_WORDS`] elements).
    pub counters: BufferId,
}

/// A counter a remote operation increments once it is resolved (Atos's remote counter
/// update after a batch; a termination protocol counts arrivals with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notify {
    /// A `u64` buffer on the target device (not mapped host memory: kernels apply no atomics
    /// to it, see [`RemoteOp`]).
    pub buffer: BufferId,
    /// Element index.
    pub index: usize,
    /// What is added (e.g. the records a push carries).
    pub amount: u64,
}

/// A one-sided operation a kernel issues into another device's memory (Atos's PGAS pushes
/// and remote atomics, seed 003 sec. III-A). The simulator delivers it over its
/// interconnect (a message per step and target, arriving after the path's latency and
/// bytes; over InfiniBand each message also pays the link's set-up cost); on a real GPU it
/// is a store or atomic through a peer pointer from inside the kernel.
///
/// Where a pair has no peer path the simulator stages the message through host memory (two
/// legs) and the CUDA backend refuses the launch (see [`super::RemotePath`]); a remote
/// min/max or float atomic over InfiniBand is an error on both. An atomic, push or
/// notification may not land in mapped host memory (a host on PCIe has no native atomics with
/// the GPU): the simulator refuses it; a [`RemoteOp::Store`] there is fine.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoteOp {
    /// An atomic on one element of a remote buffer.
    Atomic {
        /// Target buffer (on another device).
        buffer: BufferId,
        /// Element index.
        index: usize,
        /// The operation.
        op: AtomicOp,
        /// Operand (its type must match the buffer's, except that an `f32` may target a
        /// `u32` buffer whose words hold `f32` bits: device memory is untyped).
        value: Word,
        /// What becomes of the old value.
        fetch: Fetch,
        /// A counter incremented once the operation is complete with nothing following it
        /// (any fetch but `IfChanged`, or an `IfChanged` that changed nothing; a follow-up
        /// carries its own): how a termination protocol counts operations that resolved
        /// without a push.
        notify: Option<Notify>,
    },
    /// Appends `items` to a remote queue by the counter protocol (one reservation for the
    /// whole batch, as a warp or CTA leader does); `notify` is incremented once they are
    /// visible. A push that does not fit is counted in the queue's overflow counter and its
    /// items are not written (the runtime turns that into an error; nothing vanishes
    /// unreported); `notify` still resolves, so a count of operations in flight drains.
    Push {
        /// The target queue.
        queue: QueueRef,
        /// Items (`u32` words; multi-word records are consecutive words).
        items: Vec<u32>,
        /// Counter to bump once the push is resolved (after the items are visible).
        notify: Option<Notify>,
    },
    /// A one-sided put of contiguous elements (NVSHMEM `put`, a peer store).
    Store {
        /// Target buffer.
        buffer: BufferId,
        /// First element written.
        offset: usize,
        /// The data (its type must match the buffer's).
        data: HostData,
    },
}

impl RemoteOp {
    /// `buffer[index] = min(buffer[index], value)` on `u32`, old value discarded.
    pub fn atomic_min_u32(buffer: BufferId, index: usize, value: u32) -> RemoteOp {
        RemoteOp::Atomic {
            buffer,
            index,
            op: AtomicOp::Min,
            value: Word::U32(value),
            fetch: Fetch::Discard,
            notify: None,
        }
    }

    /// `buffer[index] += value` on `f32`, old value discarded.
    pub fn atomic_add_f32(buffer: BufferId, index: usize, value: f32) -> RemoteOp {
        RemoteOp::Atomic {
            buffer,
            index,
            op: AtomicOp::Add,
            value: Word::F32(value),
            fetch: Fetch::Discard,
            notify: None,
        }
    }

    /// A push of `items` into `queue` without an arrival counter.
    pub fn push(queue: QueueRef, items: Vec<u32>) -> RemoteOp {
        RemoteOp::Push { queue, items, notify: None }
    }

    /// The buffer the operation lands in (which decides its target device).
    pub fn target(&self) -> BufferId {
        match self {
            RemoteOp::Atomic { buffer, .. } | RemoteOp::Store { buffer, .. } => *buffer,
            RemoteOp::Push { queue, .. } => queue.items,
        }
    }

    /// Payload bytes the operation puts on the wire (the simulator's charge): an atomic is
    /// one 32-byte sector (the smallest NVLink payload, seed 003 Fig. 2); a push carries its
    /// items plus the three counter atomics of the protocol; a store its data.
    pub fn wire_bytes(&self) -> u64 {
        match self {
            RemoteOp::Atomic { .. } => ATOMIC_WIRE_BYTES,
            RemoteOp::Push { items, notify, .. } => {
                4 * items.len() as u64
                    + 3 * ATOMIC_WIRE_BYTES
                    + if notify.is_some() { ATOMIC_WIRE_BYTES } else { 0 }
            }
            RemoteOp::Store { data, .. } => data.size_bytes().max(ATOMIC_WIRE_BYTES),
        }
    }
}

/// Bytes one remote atomic costs on the wire (one 32-byte sector).
pub const ATOMIC_WIRE_BYTES: u64 = 32;

/// Bytes a kernel read from a buffer of another device while it ran (GUM's on-demand fetch
/// of a victim's adjacency lists). The simulator moves them over the path from the owner
/// and overlaps them with the kernel: it ends when both its compute and these reads are
/// done. On CUDA they are plain loads through peer access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerRead {
    /// Buffer argument position (one of [`KernelDef::remote_args`]).
    pub arg: usize,
    /// Bytes read from it.
    pub bytes: u64,
}

/// How a persistent kernel goes on after a step (see [`super::LaunchConfig::persistent`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepNext {
    /// The kernel is finished (the only value an ordinary kernel may report).
    #[default]
    Done,
    /// Run another step right after this one.
    Continue,
    /// Nothing to do now: run the next step when something may have changed on its device
    /// (a remote operation landed in its memory, another kernel on it finished a step or a
    /// launch, the host wrote to it or to mapped memory). A GPU's persistent worker polling
    /// an empty queue, without spinning the simulator's clock.
    Idle,
}

/// What a simulated kernel did besides writing its buffers: the counts the GPU cost model
/// needs and the one-sided operations it issued.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelEffects {
    /// Work items processed (vertices, frontier entries).
    pub items: u64,
    /// Edges visited.
    pub edges: u64,
    /// Atomic operations on device memory.
    pub atomics: u64,
    /// Bytes read from device memory.
    pub bytes_read: u64,
    /// Bytes written to device memory.
    pub bytes_written: u64,
    /// Grid-wide rounds a persistent kernel ran internally (0 or 1: an ordinary kernel).
    pub rounds: u64,
    /// Local vertices (owned and proxies) of the device when the CUDA kernel's time grows
    /// with them whatever its work items (a sweep over every vertex, such as PageRank
    /// forwarding every proxy, or per-vertex set-up); only a per-kernel cost charges them.
    pub vertices: u64,
    /// Vertices appended to an output frontier (the CUDA kernel claims each and appends it
    /// with atomics on a shared length); only a per-kernel cost charges them.
    pub outputs: u64,
    /// Arcs on the launch's critical path: per grid-wide round, the arc slots the busiest
    /// thread block goes through ([`crate::runtime::bsp::block_path`]), summed over the rounds
    /// (the device-side loops report them: their rounds often fill a few blocks); only a
    /// per-kernel cost charges them.
    pub path_edges: u64,
    /// One-sided operations into other devices' memory.
    pub remote: Vec<RemoteOp>,
    /// Bytes read from other devices' buffers while the kernel ran.
    pub peer_reads: Vec<PeerRead>,
    /// What a persistent kernel does after this step ([`StepNext::Done`] ends it).
    pub next: StepNext,
}

impl KernelEffects {
    /// Reports `bytes` read from buffer argument `arg` of another device while the kernel
    /// ran (the simulator moves them over the path, overlapped with the kernel).
    pub fn peer_read(&mut self, arg: usize, bytes: u64) {
        if bytes > 0 {
            self.peer_reads.push(PeerRead { arg, bytes });
        }
    }
}

/// The arguments a simulated kernel sees: its buffers (in contract order, taken out of device
/// memory for the duration of the kernel) and its scalars.
pub struct KernelContext<'a> {
    /// Kernel name, for error messages.
    pub kernel: &'static str,
    /// Buffer arguments in contract order. Buffers of other devices (at
    /// [`KernelDef::remote_args`]) are lent for reading: write to them through
    /// [`KernelEffects::remote`].
    pub buffers: &'a mut [HostData],
    /// Buffer ids in contract order (to address remote operations).
    pub buffer_ids: &'a [BufferId],
    /// Scalar arguments in contract order.
    pub scalars: &'a [Scalar],
    /// Counts and remote operations, filled by the kernel.
    pub effects: KernelEffects,
    /// The device the kernel runs on.
    pub device: DeviceId,
    /// Step of a persistent kernel (0 for the first and for ordinary kernels).
    pub step: u64,
    /// Threads of the launch's resident grid (blocks x threads per block, at most what the
    /// device keeps resident on the SMs the launch may use): the width of one wave of
    /// workers. Kernels that model intra-GPU concurrency run their workers in waves of this
    /// many threads, each wave reading a snapshot of what the previous waves wrote.
    pub resident_threads: u64,
    /// A seed for this launch and step, derived from the run's seed (the simulator) so that
    /// schedules that depend on it are reproducible; 0 where no seed exists.
    pub seed: u64,
}

impl<'a> KernelContext<'a> {
    /// A context for a kernel on device 0, step 0, with no seed and one wave of
    /// `u64::MAX` threads (tests and host-side reuse of a kernel's Rust implementation).
    pub fn new(
        kernel: &'static str,
        buffers: &'a mut [HostData],
        buffer_ids: &'a [BufferId],
        scalars: &'a [Scalar],
    ) -> Self {
        KernelContext {
            kernel,
            buffers,
            buffer_ids,
            scalars,
            effects: KernelEffects::default(),
            device: DeviceId(0),
            step: 0,
            resident_threads: u64::MAX,
            seed: 0,
        }
    }
}

impl KernelContext<'_> {
    /// The buffers as an array of `N` (the contract's arity), for destructuring into
    /// disjoint mutable references.
    pub fn buffers<const N: usize>(&mut self) -> Result<&mut [HostData; N], BackendError> {
        let found = self.buffers.len();
        let kernel = self.kernel;
        <&mut [HostData; N]>::try_from(&mut *self.buffers).map_err(|_| BackendError::Kernel {
            kernel: kernel.to_string(),
            message: format!("expects {N} buffer arguments, got {found}"),
        })
    }

    /// Scalar `i` as `u32`.
    pub fn scalar_u32(&self, i: usize) -> Result<u32, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::U32(v)) => Ok(*v),
            other => Err(self.scalar_error(i, "u32", other)),
        }
    }

    /// Scalar `i` as `u64`.
    pub fn scalar_u64(&self, i: usize) -> Result<u64, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::U64(v)) => Ok(*v),
            other => Err(self.scalar_error(i, "u64", other)),
        }
    }

    /// Scalar `i` as `f64` (accepts f32 and f64).
    pub fn scalar_f64(&self, i: usize) -> Result<f64, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::F64(v)) => Ok(*v),
            Some(Scalar::F32(v)) => Ok(f64::from(*v)),
            other => Err(self.scalar_error(i, "f64", other)),
        }
    }

    fn scalar_error(&self, i: usize, want: &str, found: Option<&Scalar>) -> BackendError {
        BackendError::Kernel {
            kernel: self.kernel.to_string(),
            message: format!("scalar argument {i} must be {want}, found {found:?}"),
        }
    }
}

macro_rules! typed_access {
    ($get:ident, $get_mut:ident, $variant:ident, $t:ty) => {
        /// The elements, if this buffer holds this type.
        pub fn $get(&self) -> Result<&[$t], BackendError> {
            match self {
                HostData::$variant(v) => Ok(v),
                other => Err(BackendError::Usage(format!(
                    "buffer holds {:?}, expected {}",
                    other.elem(),
                    stringify!($t)
                ))),
            }
        }

        /// The elements, mutably, if this buffer holds this type.
        pub fn $get_mut(&mut self) -> Result<&mut Vec<$t>, BackendError> {
            match self {
                HostData::$variant(v) => Ok(v),
                other => Err(BackendError::Usage(format!(
                    "buffer holds {:?}, expected {}",
                    other.elem(),
                    stringify!($t)
                ))),
            }
        }
    };
}

impl HostData {
    typed_access!(as_u32, as_u32_mut, U32, u32);
    typed_access!(as_u64, as_u64_mut, U64, u64);
    typed_access!(as_f32, as_f32_mut, F32, f32);
    typed_access!(as_f64, as_f64_mut, F64, f64);
}

/// The Rust implementation of a kernel, executed by the simulator.
pub type SimKernelFn = fn(&mut KernelContext<'_>) -> Result<(), BackendError>;

/// One kernel: its contract's name, the simulator implementation and the CUDA function.
#[derive(Clone, Debug)]
pub struct KernelDef {
    /// Registered name, used in [`super::Launch::kernel`].
    pub name: &'static str,
    /// One line on what it computes and its arguments.
    pub contract: &'static str,
    /// Rust implementation run by the simulator.
    pub sim: SimKernelFn,
    /// Name of the CUDA implementation in `kernels/*.cu`, if written.
    pub cuda_name: Option<&'static str>,
    /// Buffer argument positions that may live on another device (peer pointers). The
    /// kernel may read them while it runs (reporting the bytes as [`PeerRead`]s) and
    /// address them in [`RemoteOp`]s; it writes them only through remote operations.
    pub remote_args: &'static [usize],
}

/// All kernels a run can launch, by name.
#[derive(Clone, Debug, Default)]
pub struct KernelRegistry {
    kernels: BTreeMap<&'static str, KernelDef>,
}

impl KernelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a kernel; a second kernel of the same name replaces the first.
    pub fn register(&mut self, def: KernelDef) {
        self.kernels.insert(def.name, def);
    }

    /// Looks a kernel up.
    pub fn get(&self, name: &str) -> Result<&KernelDef, BackendError> {
        self.kernels.get(name).ok_or_else(|| {
            BackendError::Usage(format!(
                "no kernel named `{name}` is registered; registered: {}",
                self.kernels.keys().copied().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// Registered kernels in name order.
    pub fn iter(&self) -> impl Iterator<Item = &KernelDef> {
        self.kernels.values()
    }
}
