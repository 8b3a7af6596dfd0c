//! The backend trait: the one interface every runtime (bsp, groute, gum, atos) is written
//! against, and that the simulator and CUDA backends implement.
//!
//! Architecture invariant: runtime code is backend-blind and never blocks on the OS. It
//! *submits* work (kernel launches, copies, host reads and writes, callbacks, host work)
//! tagged with a [`Token`], and reacts to the [`Completion`]s the backend hands back from
//! [`Backend::next_completion`]. The backend owns the event loop: the simulator pops its
//! event queue, the CUDA backend polls its events.
//!
//! # The trait covers what all four systems need
//! Each capability is designed once, for every runtime; where a backend lacks one the trait
//! gives a default (stated per method) instead of a runtime-side `if cuda`.
//!
//! - Device memory with capacity: [`Backend::alloc`], [`Backend::memory_in_use_bytes`].
//! - Streams (high-priority ones too) and events: [`Backend::create_stream`],
//!   [`Backend::record_event`], [`Backend::wait_event`].
//! - Kernel launches with a work descriptor and a launch configuration:
//!   [`Backend::launch`] / [`Backend::launch_with`] with a [`Launch`] and a
//!   [`LaunchConfig`] (threads per block, blocks, dynamic shared memory, persistent or not,
//!   how many SMs it may occupy).
//! - **Concurrent kernels on one GPU** (Atos's aggregator beside its workers): a launch with
//!   [`LaunchConfig::sm_limit`] occupies at most that many SMs, and kernels on different
//!   streams of a GPU run at once while their SMs fit. Without a limit a kernel takes the
//!   whole GPU and runs alone (every existing runtime). Simulator: each kernel is costed on
//!   its SMs (and that share of the memory bandwidth); CUDA: the grid is capped at the
//!   limit's resident blocks and the hardware co-schedules the streams.
//! - **Persistent kernels that see work arriving while they run**
//!   ([`LaunchConfig::persistent`]). Simulator: the kernel's Rust implementation runs in
//!   *steps*; each step sees memory as it is at the step's start (including remote
//!   operations that landed before it), reports its counts (costed without a launch) and a
//!   [`kernel::StepNext`] (`Continue`, `Idle` until something changes on its device, or
//!   `Done`); its remote operations leave at the step's end, so their arrivals are visible to
//!   the target's *later* steps. CUDA: one launch of a resident grid sized from the
//!   occupancy query for the configured block and shared memory, running until the kernel
//!   returns (it polls a mapped stop flag).
//! - **Intra-GPU concurrency where results depend on it**: a kernel learns the width of one
//!   wave of its workers ([`KernelContext::resident_threads`]) and a per-launch, per-step
//!   seed ([`KernelContext::seed`]); simulated kernels that speculate run their workers in
//!   deterministic waves that read a snapshot, so extra work shows and depends on the seed.
//! - Host<->device and peer copies (staged through the host where no peer path exists):
//!   [`Backend::write_from_host`], [`Backend::read_to_host`], [`Backend::copy`].
//! - **Kernels that read a peer's buffers while they run** (GUM's on-demand fetch): the
//!   positions in [`KernelDef::remote_args`] may name other devices' buffers; the kernel
//!   reads them and reports the bytes ([`kernel::PeerRead`]). Simulator: the bytes move over
//!   the path from the owner, overlapped with the kernel (it ends when both are done), so
//!   `1 / B_ij` shows in the times; CUDA: plain loads through peer access (between logical
//!   GPUs on one physical GPU, local loads).
//! - **Device-initiated one-sided operations** ([`RemoteOp`], issued through
//!   [`KernelContext::effects`]): atomic add/min/max/CAS/exchange on `u32`, `u64`, `f32`
//!   with the old value discarded, returned into a buffer, or acted on (`Fetch::IfChanged`:
//!   e.g. push on improvement); queue pushes by Atos's counter protocol ([`queue`]); puts.
//!   How a pair is reached is [`Backend::remote_path`]: over a peer path they are peer
//!   stores and atomics; over InfiniBand ([`RemotePath::Network`]) each message pays the
//!   link's set-up cost and remote min/max and float atomics are errors (NVSHMEM over IB has
//!   none: seed 003 sec. III-A3b); with no peer path the simulator stages them through host
//!   memory and the CUDA backend refuses the launch.
//! - **Host-visible flags read without stream order** (termination): mapped host memory,
//!   [`Backend::alloc_mapped`], usable as a kernel argument on every device and read or
//!   written by the host at once with [`Backend::read_mapped`] / [`Backend::write_mapped`],
//!   and a source or destination of [`Backend::copy`] (a DMA from or to pinned host memory,
//!   e.g. Groute CC's edge list). Default: unavailable.
//! - Host callbacks: [`Backend::host_callback`].
//! - **Host work that costs time** (GUM's stealing decision or model inference, Atos's
//!   termination polls): [`Backend::host_work`] with the cost the runtime's deterministic
//!   model states. Simulator: it completes that much virtual time later (no wall clock ever
//!   enters a simulated run); CUDA: the work already took its real (measured) time on the
//!   host, so it completes at once.
//! - Topology introspection: [`Backend::peer_access`], [`Backend::path_bandwidth_bytes_per_s`]
//!   (`B_ij`), [`Backend::memory_bandwidth_bytes_per_s`] (`B_ii`; simulator: the GPU model's;
//!   CUDA: measured at open with a device-to-device copy; default 0: unknown),
//!   [`Backend::remote_path`].
//! - Time: [`Backend::now_ps`] (virtual or wall); statistics: [`Backend::stats`].

pub mod cuda;
pub mod kernel;
pub mod queue;
pub mod sim;

use std::fmt;

pub use kernel::{
    AtomicOp, Fetch, KernelContext, KernelDef, KernelEffects, KernelRegistry, Notify, PeerRead,
    QueueRef, RemoteOp, Scalar, StepNext, Word,
};

/// A device (GPU) of a backend, numbered `0..device_count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId(pub u32);

/// A stream: an in-order queue of operations on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u32);

/// A device buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(pub u32);

/// A recorded point in a stream that other streams can wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u32);

/// A runtime-chosen tag returned with the completion of the operation it was attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub u64);

/// Scheduling priority of a stream (Groute's SplitReceive runs on a high-priority stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamPriority {
    /// Ordinary stream.
    Normal,
    /// Served before normal streams when both have work ready on the same device.
    High,
}

/// Element type of a device buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ElemType {
    /// 32-bit unsigned integer (vertex ids, levels, labels, distances).
    U32,
    /// 64-bit unsigned integer (edge offsets, counters).
    U64,
    /// 32-bit float (ranks, residuals).
    F32,
    /// 64-bit float.
    F64,
}

impl ElemType {
    /// Size of one element in bytes.
    pub fn size_bytes(self) -> u64 {
        match self {
            ElemType::U32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::F64 => 8,
        }
    }
}

/// Typed host-side data: what is written to or read from a device buffer.
#[derive(Clone, Debug, PartialEq)]
pub enum HostData {
    /// `u32` elements.
    U32(Vec<u32>),
    /// `u64` elements.
    U64(Vec<u64>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
}

impl HostData {
    /// A zero-filled vector of `len` elements of `elem`.
    pub fn zeros(elem: ElemType, len: usize) -> HostData {
        match elem {
            ElemType::U32 => HostData::U32(vec![0; len]),
            ElemType::U64 => HostData::U64(vec![0; len]),
            ElemType::F32 => HostData::F32(vec![0.0; len]),
            ElemType::F64 => HostData::F64(vec![0.0; len]),
        }
    }

    /// Element type.
    pub fn elem(&self) -> ElemType {
        match self {
            HostData::U32(_) => ElemType::U32,
            HostData::U64(_) => ElemType::U64,
            HostData::F32(_) => ElemType::F32,
            HostData::F64(_) => ElemType::F64,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostData::U32(v) => v.len(),
            HostData::U64(v) => v.len(),
            HostData::F32(v) => v.len(),
            HostData::F64(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.len() as u64 * self.elem().size_bytes()
    }

    /// Copies `len` elements from `src[src_offset..]` into `self[dst_offset..]`.
    /// Both must have the same element type and the ranges must be in bounds.
    pub fn copy_range_from(
        &mut self,
        dst_offset: usize,
        src: &HostData,
        src_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        fn go<T: Copy>(d: &mut [T], doff: usize, s: &[T], soff: usize, len: usize) -> bool {
            match (d.get_mut(doff..doff + len), s.get(soff..soff + len)) {
                (Some(d), Some(s)) => {
                    d.copy_from_slice(s);
                    true
                }
                _ => false,
            }
        }
        let ok = match (self, src) {
            (HostData::U32(d), HostData::U32(s)) => go(d, dst_offset, s, src_offset, len),
            (HostData::U64(d), HostData::U64(s)) => go(d, dst_offset, s, src_offset, len),
            (HostData::F32(d), HostData::F32(s)) => go(d, dst_offset, s, src_offset, len),
            (HostData::F64(d), HostData::F64(s)) => go(d, dst_offset, s, src_offset, len),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(BackendError::Usage(format!(
                "copy of {len} elements from offset {src_offset} to offset {dst_offset}: element \
                 types differ or a range is out of bounds"
            )))
        }
    }

    /// A copy of `len` elements starting at `offset` (one pass over them: no zero fill).
    pub fn slice(&self, offset: usize, len: usize) -> Result<HostData, BackendError> {
        fn go<T: Copy>(s: &[T], offset: usize, len: usize) -> Option<Vec<T>> {
            s.get(offset..offset.checked_add(len)?).map(<[T]>::to_vec)
        }
        let out = match self {
            HostData::U32(s) => go(s, offset, len).map(HostData::U32),
            HostData::U64(s) => go(s, offset, len).map(HostData::U64),
            HostData::F32(s) => go(s, offset, len).map(HostData::F32),
            HostData::F64(s) => go(s, offset, len).map(HostData::F64),
        };
        out.ok_or_else(|| {
            BackendError::Usage(format!(
                "slice of {len} elements at offset {offset} of {} elements",
                self.len()
            ))
        })
    }
}

/// A range of elements of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSlice {
    /// The buffer.
    pub buffer: BufferId,
    /// First element.
    pub offset: usize,
    /// Number of elements.
    pub len: usize,
}

impl BufferSlice {
    /// Elements `offset..offset + len` of `buffer`.
    pub fn new(buffer: BufferId, offset: usize, len: usize) -> Self {
        BufferSlice { buffer, offset, len }
    }
}

/// A kernel launch: the kernel's registered name, the buffers it works on (in the order its
/// contract gives), scalar arguments, and a work descriptor (how many items it covers).
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Registered kernel name (see [`KernelRegistry`]).
    pub kernel: &'static str,
    /// Buffer arguments, in the kernel contract's order. Buffers of other devices are
    /// allowed where the contract says so (peer pointers for one-sided operations).
    pub buffers: Vec<BufferId>,
    /// Scalar arguments, in the kernel contract's order.
    pub scalars: Vec<Scalar>,
    /// Work descriptor: the number of work items (threads' logical items) it covers.
    pub work_items: u64,
}

/// How a kernel is launched: its grid and block, and how it shares the GPU. The default is
/// an ordinary kernel: the backend sizes the grid from the work descriptor, and the kernel
/// takes the whole GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Threads per block; `None`: the backend's default (256 on CUDA).
    pub block_threads: Option<u32>,
    /// Blocks; `None`: from the work descriptor, or for a persistent kernel as many as can
    /// be resident on its SMs (the occupancy query on CUDA).
    pub blocks: Option<u32>,
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
    /// A persistent kernel: it stays resident and sees work that arrives while it runs
    /// (see the module docs for how each backend runs it).
    pub persistent: bool,
    /// Most SMs the kernel occupies; `None`: the whole GPU (it runs alone). Kernels with a
    /// limit run beside each other while their SMs fit.
    pub sm_limit: Option<u32>,
}

impl LaunchConfig {
    /// A persistent kernel of `block_threads`-thread blocks on at most `sm_limit` SMs
    /// (`None`: all), with as many blocks as can be resident.
    pub fn persistent(block_threads: u32, sm_limit: Option<u32>) -> LaunchConfig {
        LaunchConfig {
            block_threads: Some(block_threads),
            persistent: true,
            sm_limit,
            ..LaunchConfig::default()
        }
    }
}

/// How a device reaches another device's memory for one-sided operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemotePath {
    /// The same device.
    Local,
    /// A peer path (NVLink, PCIe peer-to-peer, NVSwitch, or logical GPUs sharing one
    /// physical GPU): peer loads, stores and atomics from inside kernels.
    Peer,
    /// A network (InfiniBand): one-sided put, get, integer add/CAS/swap; every message pays
    /// the link's set-up cost; no remote min/max and no float atomics.
    Network,
    /// No peer path; the simulator stages each message through host memory.
    Staged,
    /// No peer path and the backend cannot stage device-initiated operations (CUDA).
    Unreachable,
}

/// Device facts a runtime may plan with.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// Model name, e.g. `Tesla V100-SXM2-16GB`.
    pub name: String,
    /// Device memory capacity in bytes.
    pub memory_bytes: u64,
    /// Streaming multiprocessors.
    pub sm_count: u32,
}

/// What finished.
#[derive(Clone, Debug, PartialEq)]
pub enum CompletionKind {
    /// A kernel finished; its counts (items, edges, atomics, bytes) as the kernel reported.
    Kernel(KernelCountsReport),
    /// A copy (peer, staged or host<->device) finished.
    Copy {
        /// Bytes moved.
        bytes: u64,
    },
    /// A device-to-host read finished; here is the data.
    HostRead(HostData),
    /// A host callback's stream point was reached.
    Callback,
    /// Host work submitted with [`Backend::host_work`] finished.
    HostWork,
}

/// Counts a kernel reported, as delivered with its completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCountsReport {
    /// Work items processed.
    pub items: u64,
    /// Edges visited.
    pub edges: u64,
    /// Atomic operations.
    pub atomics: u64,
    /// Remote one-sided operations issued.
    pub remote_ops: u64,
}

/// A finished operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The token the operation was submitted with.
    pub token: Token,
    /// Time it finished, in picoseconds since the run began (virtual or wall).
    pub time_ps: u64,
    /// What finished.
    pub kind: CompletionKind,
}

/// Per-device statistics.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DeviceStats {
    /// Time the device's compute was busy with kernels, in picoseconds (on the simulator the
    /// steps a kernel ran: a persistent kernel parked waiting for work is not busy).
    pub kernel_busy_ps: u64,
    /// Kernels launched.
    pub kernels: u64,
    /// Edges visited by kernels, as they reported.
    pub edges: u64,
    /// Peak device memory in use, in bytes.
    pub memory_peak_bytes: u64,
}

/// Per-link statistics (one direction of one physical link).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LinkStats {
    /// Link name.
    pub name: String,
    /// Bytes carried (payload and headers).
    pub bytes: u64,
    /// Time the link was busy, in picoseconds.
    pub busy_ps: u64,
}

/// Statistics a backend keeps while it runs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BackendStats {
    /// One entry per device.
    pub devices: Vec<DeviceStats>,
    /// One entry per link direction that carried traffic (simulator) or per GPU pair (CUDA).
    pub links: Vec<LinkStats>,
    /// Events the backend processed (simulator) or polled (CUDA).
    pub events: u64,
}

/// Errors a backend reports.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// A device allocation would exceed the device memory, as on a real GPU.
    #[error(
        "out of device memory on GPU {device}: allocating {requested_bytes} bytes for \
         `{label}` with {in_use_bytes} of {capacity_bytes} bytes in use; use more GPUs, a \
         smaller graph, or a GPU model with more memory"
    )]
    OutOfMemory {
        /// Device.
        device: u32,
        /// What the allocation was for.
        label: String,
        /// Bytes asked for.
        requested_bytes: u64,
        /// Bytes already in use.
        in_use_bytes: u64,
        /// Device capacity.
        capacity_bytes: u64,
    },
    /// Logical GPUs sharing one physical GPU (CUDA backend) would not fit its memory: an
    /// allocation above a logical GPU's share, or the sharers' needs together above what the
    /// physical GPU has free.
    #[error(
        "out of device memory on logical GPU {device}, one of {sharers} sharing physical GPU \
         {physical} ({physical_free_bytes} bytes free when opened, {share_bytes} bytes each): \
         {what}; open fewer logical GPUs per physical GPU, use a smaller graph, or give each \
         logical GPU a memory share that fits"
    )]
    SharedOutOfMemory {
        /// The logical GPU.
        device: u32,
        /// The physical GPU it runs on.
        physical: u32,
        /// Logical GPUs on that physical GPU.
        sharers: u32,
        /// The physical GPU's free memory when the backend was opened.
        physical_free_bytes: u64,
        /// The memory each logical GPU on it may use.
        share_bytes: u64,
        /// What did not fit, with its sizes.
        what: String,
    },
    /// An operation referred to something that does not exist or was used wrongly.
    #[error("backend misuse: {0}")]
    Usage(String),
    /// A kernel's contract was violated or the kernel failed.
    #[error("kernel `{kernel}` failed: {message}")]
    Kernel {
        /// Kernel name.
        kernel: String,
        /// What went wrong.
        message: String,
    },
    /// The run stopped making progress: streams wait on something that can never happen.
    #[error("deadlock: {0}")]
    Deadlock(String),
    /// A limit (virtual time, watchdog) was hit.
    #[error("limit reached: {0}")]
    Limit(String),
    /// The backend is not available in this build or on this machine.
    #[error("{0}")]
    Unavailable(String),
    /// A real device (CUDA driver or NVRTC) reported an error.
    #[error("GPU error: {0}")]
    Device(String),
}

/// The interface every runtime is written against. See the module docs for the contract.
pub trait Backend {
    /// Backend name (`sim` or `cuda`).
    fn name(&self) -> &str;
    /// Number of devices.
    fn device_count(&self) -> u32;
    /// Facts about a device.
    fn device_info(&self, device: DeviceId) -> DeviceInfo;
    /// Whether `a` can access `b`'s memory directly (else copies are staged via the host).
    fn peer_access(&self, a: DeviceId, b: DeviceId) -> bool;
    /// The physical GPU `device` runs on: devices with the same number share its SMs (CUDA's
    /// logical GPUs, see [`cuda`]'s module docs). Default: every device is its own GPU.
    fn physical_gpu(&self, device: DeviceId) -> u32 {
        device.0
    }
    /// Topology introspection: the bandwidth of the path from `a` to `b` in bytes per
    /// second (the narrowest link on the route; through the host where there is no peer
    /// path). Routers use it to pair siblings and order rings; 0 when `a == b`.
    fn path_bandwidth_bytes_per_s(&self, a: DeviceId, b: DeviceId) -> u64;
    /// The device's memory bandwidth `B_ii` in bytes per second (simulator: its GPU model;
    /// CUDA: measured at open). Default: 0, unknown.
    fn memory_bandwidth_bytes_per_s(&self, device: DeviceId) -> u64 {
        let _ = device;
        0
    }
    /// How `a`'s kernels reach `b`'s memory with one-sided operations. Default: from
    /// [`Backend::peer_access`] (no networks, no staging).
    fn remote_path(&self, a: DeviceId, b: DeviceId) -> RemotePath {
        if a == b {
            RemotePath::Local
        } else if self.peer_access(a, b) {
            RemotePath::Peer
        } else {
            RemotePath::Unreachable
        }
    }
    /// Current time in picoseconds since the run began.
    fn now_ps(&self) -> u64;

    /// Allocates a zero-filled buffer of `len` elements on `device`; fails like a real GPU
    /// when the device memory is exhausted.
    fn alloc(
        &mut self,
        device: DeviceId,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError>;
    /// Frees a buffer.
    fn free(&mut self, buffer: BufferId) -> Result<(), BackendError>;
    /// Bytes of device memory in use on `device`.
    fn memory_in_use_bytes(&self, device: DeviceId) -> u64;
    /// Length in elements and element type of a buffer.
    fn buffer_shape(&self, buffer: BufferId) -> Result<(ElemType, usize), BackendError>;

    /// Creates a stream on `device`.
    fn create_stream(
        &mut self,
        device: DeviceId,
        priority: StreamPriority,
    ) -> Result<StreamId, BackendError>;
    /// Records an event at the current end of `stream`.
    fn record_event(&mut self, stream: StreamId) -> Result<EventId, BackendError>;
    /// Makes `stream` wait until `event` is reached.
    fn wait_event(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError>;

    /// Enqueues an ordinary kernel launch on `stream` ([`LaunchConfig::default`]).
    fn launch(
        &mut self,
        stream: StreamId,
        launch: Launch,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        self.launch_with(stream, launch, LaunchConfig::default(), token)
    }
    /// Enqueues a kernel launch on `stream` with a launch configuration (grid, block,
    /// shared memory, persistent, SM limit).
    fn launch_with(
        &mut self,
        stream: StreamId,
        launch: Launch,
        config: LaunchConfig,
        token: Option<Token>,
    ) -> Result<(), BackendError>;
    /// Enqueues a copy between two buffers (same device, peer, or staged via the host when
    /// the devices have no peer access). One side (not both) may be mapped host memory
    /// ([`Backend::alloc_mapped`]): then it is a DMA between pinned host memory and the
    /// stream's device over its host link, with no staging copy (the simulator charges it
    /// as a host write or read of the same bytes).
    fn copy(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        dst: BufferSlice,
        token: Option<Token>,
    ) -> Result<(), BackendError>;
    /// Enqueues a host-to-device write of `data` into `dst` starting at element `offset`.
    fn write_from_host(
        &mut self,
        stream: StreamId,
        dst: BufferId,
        offset: usize,
        data: HostData,
        token: Option<Token>,
    ) -> Result<(), BackendError>;
    /// Enqueues a device-to-host read; the data arrives with the completion.
    fn read_to_host(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        token: Token,
    ) -> Result<(), BackendError>;
    /// Enqueues a host callback: a completion with `token` when the stream reaches it.
    fn host_callback(&mut self, stream: StreamId, token: Token) -> Result<(), BackendError>;

    /// Host-side work of the runtime (a stealing decision, a model's inference, a poll of
    /// mapped flags) that costs `cost_ps` by the runtime's deterministic model: a
    /// [`CompletionKind::HostWork`] completion with `token` once it is done. Not ordered
    /// with any stream. Simulator: `cost_ps` of virtual time later. CUDA: at once, since the
    /// runtime already spent the real (measured) time doing it.
    fn host_work(&mut self, cost_ps: u64, token: Token) -> Result<(), BackendError>;

    /// How long, in [`Backend::now_ps`] time, a runtime that polls persistent kernels may
    /// see none of the counters it watches change before it gives up with an error naming
    /// what is in flight. A persistent kernel that never ends is invisible to a wait-based
    /// watchdog when the host's polls keep completing, so such runtimes watch progress
    /// themselves. `None` (the default, and the simulator, whose virtual time and event
    /// limits stop a hung run): no such watch. CUDA: `SWITCHYARD_CUDA_WATCHDOG_S`.
    fn progress_watchdog_ps(&self) -> Option<u64> {
        None
    }

    /// Allocates `len` zeroed elements of mapped host memory: usable as a kernel argument
    /// on every device, read and written by the host at once, without stream order
    /// ([`Backend::read_mapped`], [`Backend::write_mapped`]); not counted as device memory.
    /// Default: unavailable.
    fn alloc_mapped(
        &mut self,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError> {
        let _ = (elem, len);
        Err(BackendError::Unavailable(format!(
            "the {} backend has no mapped host memory (for `{label}`)",
            self.name()
        )))
    }
    /// The current contents of a mapped buffer (kernels may be writing it: each element is
    /// read once, as a GPU's volatile load would). Default: unavailable.
    fn read_mapped(&self, buffer: BufferId) -> Result<HostData, BackendError> {
        Err(BackendError::Unavailable(format!(
            "the {} backend has no mapped host memory (buffer {})",
            self.name(),
            buffer.0
        )))
    }
    /// Writes `data` into a mapped buffer at element `offset`, visible to running kernels
    /// (the simulator wakes idle persistent kernels). Default: unavailable.
    fn write_mapped(
        &mut self,
        buffer: BufferId,
        offset: usize,
        data: HostData,
    ) -> Result<(), BackendError> {
        let _ = (offset, data);
        Err(BackendError::Unavailable(format!(
            "the {} backend has no mapped host memory (buffer {})",
            self.name(),
            buffer.0
        )))
    }

    /// The next finished operation that carried a token, in completion order; `None` when
    /// nothing is outstanding. This is the event loop: the backend advances (virtual) time.
    fn next_completion(&mut self) -> Result<Option<Completion>, BackendError>;

    /// Statistics so far.
    fn stats(&self) -> BackendStats;

    /// Each device's kernel busy time so far, ps: `stats()`'s `kernel_busy_ps` alone, for
    /// runtimes that take it every superstep (on CUDA `stats()` also reads the device
    /// counters, a synchronisation and a copy per stream).
    fn kernel_busy_ps(&self) -> Vec<u64> {
        self.stats().devices.iter().map(|d| d.kernel_busy_ps).collect()
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gpu{}", self.0)
    }
}
