//! The CUDA backend: real GPUs behind the same [`Backend`](super::Backend) trait as the
//! simulator. Built with the `cuda` cargo feature (on by default): cudarc's driver and
//! NVRTC bindings, loaded at run time, so nothing CUDA is needed to build, and a machine
//! without a driver gets a one-line message pointing to `--backend sim`. Kernels live in
//! `kernels/*.cu`, are embedded in the binary and compiled by NVRTC for each device
//! architecture at first use; [`kernels`] documents their ABI and launch configuration.
//!
//! # Logical GPUs
//! [`CudaOptions::share_physical`] opens more GPUs than the machine has, explicitly (without
//! it, asking for more is an error): logical GPU `l` runs on physical GPU `l % P`, where `P`
//! is `min(logical, GPUs present)` (every physical GPU is used). Each logical GPU has its own
//! streams, events, memory accounting and statistics. Between logical GPUs of one physical
//! GPU, a copy is a device-to-device copy, peer access is true, a kernel's remote buffer
//! argument is a plain pointer (a remote store is a plain store), and the path bandwidth is
//! the measured device-to-device copy bandwidth. Memory rule ([`memory_share`]): a physical
//! GPU shared by `k` logical GPUs gives each `free / k` bytes, `free` being its free memory
//! when the backend opens, unless [`CudaOptions::memory_per_gpu_bytes`] names the share (then
//! `k` shares must fit in `free`, checked at open); an allocation above the share fails with
//! [`BackendError::SharedOutOfMemory`], as does one
//! the physical GPU cannot hold. Shared GPUs' names say so (`NVIDIA H200 (logical 3 of 4 on
//! GPU 0)`); times measured on them are not scaling.

pub mod faults;
pub mod kernels;

#[cfg(feature = "cuda")]
mod backend;

#[cfg(feature = "cuda")]
pub use backend::{CudaBackend, DEFAULT_WATCHDOG_S, compile_for, gpus_present};

use crate::backend::{BackendError, DeviceId, StreamId};

/// What `--backend cuda` says on a machine without a CUDA driver.
pub const NO_DRIVER: &str = "no CUDA driver (libcuda.so) was found on this machine, so it \
                             cannot drive real GPUs; run on the simulator with --backend sim";

/// The message every CUDA entry point gives in a build without the `cuda` feature.
pub const UNAVAILABLE: &str = "this switchyard was built without the `cuda` feature, so it \
                               cannot drive real GPUs; run on the simulator with --backend sim";

/// How to open the CUDA backend ([`CudaBackend::open_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaOptions {
    /// GPUs to open (logical GPUs when `share_physical` is set).
    pub gpus: u32,
    /// Allow more GPUs than the machine has: logical GPU `l` runs on physical GPU `l % P`
    /// (see the module docs). Never implied: without it, `gpus` above the GPUs present is an
    /// error.
    pub share_physical: bool,
    /// The memory each logical GPU of a shared physical GPU may use; `None`: the physical
    /// GPU's free memory when opened, divided evenly among its logical GPUs.
    pub memory_per_gpu_bytes: Option<u64>,
    /// Keep a [`KernelSpan`] per kernel launch (for traces); busy time is measured either way.
    pub kernel_spans: bool,
}

impl CudaOptions {
    /// `gpus` physical GPUs, none shared.
    pub fn new(gpus: u32) -> CudaOptions {
        CudaOptions { gpus, share_physical: false, memory_per_gpu_bytes: None, kernel_spans: false }
    }

    /// `gpus` logical GPUs spread over the machine's physical GPUs.
    pub fn logical(gpus: u32) -> CudaOptions {
        CudaOptions { share_physical: true, ..CudaOptions::new(gpus) }
    }
}

/// Physical GPUs that `logical` logical GPUs use on a machine with `present` GPUs.
pub fn physical_used(logical: u32, present: u32) -> u32 {
    logical.min(present)
}

/// The physical GPU of logical GPU `logical` when `physical` physical GPUs are used.
pub fn physical_gpu_of(logical: u32, physical: u32) -> u32 {
    logical % physical.max(1)
}

/// Logical GPUs (of `logical`) that run on physical GPU `physical_gpu` of `physical` used.
pub fn sharers_of(physical_gpu: u32, logical: u32, physical: u32) -> u32 {
    (0..logical).filter(|&l| physical_gpu_of(l, physical) == physical_gpu).count() as u32
}

/// The memory rule for logical GPUs: each of `sharers` logical GPUs on one physical GPU may
/// use `free_bytes / sharers` (rounded down), `free_bytes` being the physical GPU's free
/// memory when the backend opens.
pub fn memory_share(free_bytes: u64, sharers: u32) -> u64 {
    free_bytes / u64::from(sharers.max(1))
}

/// The name of a logical GPU on a shared machine: `NVIDIA H200 (logical 3 of 4 on GPU 0)`.
pub fn logical_name(model: &str, logical: u32, of: u32, physical_gpu: u32) -> String {
    format!("{model} (logical {logical} of {of} on GPU {physical_gpu})")
}

/// One kernel launch on a real GPU, timed by CUDA events before its first pass and after its
/// last ([`CudaOptions::kernel_spans`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSpan {
    /// The (logical) GPU it ran on.
    pub device: DeviceId,
    /// The stream it ran on.
    pub stream: StreamId,
    /// Registered kernel name.
    pub kernel: &'static str,
    /// Start, picoseconds since the backend opened (to within a few microseconds).
    pub start_ps: u64,
    /// End, picoseconds since the backend opened.
    pub end_ps: u64,
}

/// Busy time of one GPU from kernel intervals that may overlap (concurrent streams) and
/// arrive out of order: the length of their union, exact over the last [`Self::RECENT`]
/// disjoint intervals; older ones are sealed, and a late interval starting before the seal
/// is clipped to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusyClock {
    sealed_ps: u64,
    sealed_until: u64,
    recent: Vec<(u64, u64)>,
}

impl BusyClock {
    /// Disjoint intervals kept unsealed.
    pub const RECENT: usize = 64;

    /// Adds the interval `start..end` (picoseconds).
    pub fn add(&mut self, start: u64, end: u64) {
        let (mut s, mut e) = (start.max(self.sealed_until), end);
        if e <= s {
            return;
        }
        self.recent.retain(|&(a, b)| {
            if b < s || a > e {
                true
            } else {
                s = s.min(a);
                e = e.max(b);
                false
            }
        });
        let at = self.recent.partition_point(|&(a, _)| a < s);
        self.recent.insert(at, (s, e));
        if self.recent.len() > Self::RECENT {
            let (a, b) = self.recent.remove(0);
            self.sealed_ps += b - a;
            self.sealed_until = b;
        }
    }

    /// Length of the union of the intervals added, in picoseconds.
    pub fn busy_ps(&self) -> u64 {
        self.sealed_ps + self.recent.iter().map(|&(a, b)| b - a).sum::<u64>()
    }
}

/// Checks, before any work, that `gpus` GPUs can be driven here: the one-line error says
/// what is missing and points to `--backend sim`.
pub fn check_available(gpus: u32) -> Result<(), BackendError> {
    check_available_with(&CudaOptions::new(gpus))
}

/// [`check_available`] for options: with [`CudaOptions::share_physical`], any number of
/// logical GPUs on at least one physical GPU.
pub fn check_available_with(options: &CudaOptions) -> Result<(), BackendError> {
    if !cfg!(feature = "cuda") {
        return Err(BackendError::Unavailable(UNAVAILABLE.to_string()));
    }
    #[cfg(feature = "cuda")]
    {
        // SAFETY: probing for the driver library has no preconditions.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(BackendError::Unavailable(NO_DRIVER.to_string()));
        }
    }
    gpu_count_error(options, gpus_present()).map_or(Ok(()), Err)
}

/// The error for asking `options.gpus` GPUs of a machine with `present`, if it is one.
pub(crate) fn gpu_count_error(options: &CudaOptions, present: u32) -> Option<BackendError> {
    let gpus = options.gpus;
    if present == 0 {
        return Some(BackendError::Unavailable(format!(
            "{gpus} GPUs asked for, this machine has none usable by CUDA; run on the simulator \
             with --backend sim"
        )));
    }
    if gpus == 0 {
        return Some(BackendError::Unavailable(format!(
            "0 GPUs asked for; choose --gpus 1..={present} (this machine has {present} usable by \
             CUDA)"
        )));
    }
    if gpus > present && !options.share_physical {
        return Some(BackendError::Unavailable(format!(
            "{gpus} GPUs asked for, this machine has {present} usable by CUDA; choose --gpus \
             1..={present}, run {gpus} logical GPUs sharing the {present} physical ones (an \
             explicit option: their times are not scaling), or run on the simulator with \
             --backend sim"
        )));
    }
    None
}

#[cfg(not(feature = "cuda"))]
mod stub {
    use super::{CudaOptions, KernelSpan, UNAVAILABLE};
    use crate::backend::{
        Backend, BackendError, BackendStats, BufferId, BufferSlice, Completion, DeviceId,
        DeviceInfo, ElemType, EventId, HostData, KernelRegistry, Launch, LaunchConfig, StreamId,
        StreamPriority, Token,
    };

    fn unavailable<T>() -> Result<T, BackendError> {
        Err(BackendError::Unavailable(UNAVAILABLE.to_string()))
    }

    /// Stand-in for the CUDA backend in builds without the `cuda` feature: it cannot be
    /// opened, and implements the whole [`Backend`] trait (every fallible method answers
    /// [`UNAVAILABLE`](super::UNAVAILABLE), the others neutral values) so code and tests can
    /// name every backend the build has.
    #[derive(Debug)]
    pub struct CudaBackend {
        _private: (),
    }

    impl CudaBackend {
        /// Opens the first `gpus` GPUs; in this build, always the error
        /// [`UNAVAILABLE`](super::UNAVAILABLE).
        pub fn open(gpus: u32, registry: KernelRegistry) -> Result<CudaBackend, BackendError> {
            Self::open_with(CudaOptions::new(gpus), registry)
        }

        /// Opens `logical` logical GPUs on the machine's GPUs; in this build, always the
        /// error [`UNAVAILABLE`](super::UNAVAILABLE).
        pub fn open_logical(
            logical: u32,
            registry: KernelRegistry,
        ) -> Result<CudaBackend, BackendError> {
            Self::open_with(CudaOptions::logical(logical), registry)
        }

        /// Opens GPUs as `options` says; in this build, always the error
        /// [`UNAVAILABLE`](super::UNAVAILABLE).
        pub fn open_with(
            options: CudaOptions,
            registry: KernelRegistry,
        ) -> Result<CudaBackend, BackendError> {
            let _ = (options, registry);
            unavailable()
        }

        /// The physical GPU a logical GPU runs on: none in this build.
        pub fn physical_of(&self, device: DeviceId) -> Option<u32> {
            let _ = device;
            None
        }

        /// Physical GPUs in use: none in this build.
        pub fn physical_count(&self) -> u32 {
            0
        }

        /// Whether any physical GPU runs several logical GPUs: never in this build.
        pub fn is_shared(&self) -> bool {
            false
        }

        /// Checks that a run needing `bytes_per_gpu` fits; in this build, the error
        /// [`UNAVAILABLE`](super::UNAVAILABLE).
        pub fn check_memory_plan(&self, bytes_per_gpu: &[u64]) -> Result<(), BackendError> {
            let _ = bytes_per_gpu;
            unavailable()
        }

        /// What every stream waits for: nothing, as nothing ever opens.
        pub fn fault_report(&self) -> String {
            String::new()
        }

        /// Turns the recording of kernel spans on or off (nothing to record in this build).
        pub fn set_kernel_spans(&mut self, on: bool) {
            let _ = on;
        }

        /// The kernel spans recorded so far: none in this build.
        pub fn take_kernel_spans(&mut self) -> Vec<KernelSpan> {
            Vec::new()
        }
    }

    impl Backend for CudaBackend {
        fn name(&self) -> &str {
            "cuda"
        }

        fn device_count(&self) -> u32 {
            0
        }

        fn device_info(&self, device: DeviceId) -> DeviceInfo {
            let _ = device;
            DeviceInfo { name: "unavailable".into(), memory_bytes: 0, sm_count: 0 }
        }

        fn peer_access(&self, a: DeviceId, b: DeviceId) -> bool {
            let _ = (a, b);
            false
        }

        fn path_bandwidth_bytes_per_s(&self, a: DeviceId, b: DeviceId) -> u64 {
            let _ = (a, b);
            0
        }

        fn now_ps(&self) -> u64 {
            0
        }

        fn alloc(
            &mut self,
            device: DeviceId,
            elem: ElemType,
            len: usize,
            label: &str,
        ) -> Result<BufferId, BackendError> {
            let _ = (device, elem, len, label);
            unavailable()
        }

        fn free(&mut self, buffer: BufferId) -> Result<(), BackendError> {
            let _ = buffer;
            unavailable()
        }

        fn memory_in_use_bytes(&self, device: DeviceId) -> u64 {
            let _ = device;
            0
        }

        fn buffer_shape(&self, buffer: BufferId) -> Result<(ElemType, usize), BackendError> {
            let _ = buffer;
            unavailable()
        }

        fn create_stream(
            &mut self,
            device: DeviceId,
            priority: StreamPriority,
        ) -> Result<StreamId, BackendError> {
            let _ = (device, priority);
            unavailable()
        }

        fn record_event(&mut self, stream: StreamId) -> Result<EventId, BackendError> {
            let _ = stream;
            unavailable()
        }

        fn wait_event(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError> {
            let _ = (stream, event);
            unavailable()
        }

        fn launch_with(
            &mut self,
            stream: StreamId,
            launch: Launch,
            config: LaunchConfig,
            token: Option<Token>,
        ) -> Result<(), BackendError> {
            let _ = (stream, launch, config, token);
            unavailable()
        }

        fn host_work(&mut self, cost_ps: u64, token: Token) -> Result<(), BackendError> {
            let _ = (cost_ps, token);
            unavailable()
        }

        fn copy(
            &mut self,
            stream: StreamId,
            src: BufferSlice,
            dst: BufferSlice,
            token: Option<Token>,
        ) -> Result<(), BackendError> {
            let _ = (stream, src, dst, token);
            unavailable()
        }

        fn write_from_host(
            &mut self,
            stream: StreamId,
            dst: BufferId,
            offset: usize,
            data: HostData,
            token: Option<Token>,
        ) -> Result<(), BackendError> {
            let _ = (stream, dst, offset, data, token);
            unavailable()
        }

        fn read_to_host(
            &mut self,
            stream: StreamId,
            src: BufferSlice,
            token: Token,
        ) -> Result<(), BackendError> {
            let _ = (stream, src, token);
            unavailable()
        }

        fn host_callback(&mut self, stream: StreamId, token: Token) -> Result<(), BackendError> {
            let _ = (stream, token);
            unavailable()
        }

        fn next_completion(&mut self) -> Result<Option<Completion>, BackendError> {
            unavailable()
        }

        fn stats(&self) -> BackendStats {
            BackendStats::default()
        }
    }

    /// GPUs this machine has that this build can use: none without the `cuda` feature.
    pub fn gpus_present() -> u32 {
        0
    }
}

#[cfg(not(feature = "cuda"))]
pub use stub::{CudaBackend, gpus_present};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::KernelRegistry;

    #[test]
    fn without_a_gpu_opening_says_what_to_do_instead() {
        if super::gpus_present() > 0 {
            eprintln!("skipped: this machine has a GPU");
            return;
        }
        let err = super::CudaBackend::open(1, KernelRegistry::new()).unwrap_err();
        let logical = super::CudaBackend::open_logical(4, KernelRegistry::new()).unwrap_err();
        let early = super::check_available(1).unwrap_err();
        let early_logical = check_available_with(&CudaOptions::logical(4)).unwrap_err();
        for text in
            [err.to_string(), logical.to_string(), early.to_string(), early_logical.to_string()]
        {
            assert!(text.contains("--backend sim"), "{text}");
            assert!(!text.contains('\n'), "one line: {text}");
        }
    }

    #[test]
    fn logical_gpus_map_round_robin_onto_every_physical_gpu() {
        assert_eq!(physical_used(4, 1), 1);
        assert_eq!(physical_used(8, 2), 2);
        assert_eq!(physical_used(1, 8), 1, "one logical GPU uses one physical GPU");
        let map: Vec<u32> = (0..5).map(|l| physical_gpu_of(l, physical_used(5, 2))).collect();
        assert_eq!(map, [0, 1, 0, 1, 0]);
        assert_eq!(sharers_of(0, 5, 2), 3);
        assert_eq!(sharers_of(1, 5, 2), 2);
        assert_eq!(sharers_of(0, 4, 1), 4);
        assert_eq!(sharers_of(3, 4, 4), 1, "one logical GPU per physical GPU: not shared");
    }

    #[test]
    fn each_sharer_gets_an_even_part_of_the_free_memory() {
        assert_eq!(memory_share(140 << 30, 4), 35 << 30);
        assert_eq!(memory_share(10, 3), 3, "rounded down: the sharers fit together");
        assert_eq!(memory_share(10, 0), 10);
        assert_eq!(logical_name("NVIDIA H200", 3, 4, 0), "NVIDIA H200 (logical 3 of 4 on GPU 0)");
    }

    #[test]
    fn asking_for_more_gpus_than_present_needs_the_explicit_option() {
        let plain = gpu_count_error(&CudaOptions::new(4), 1).expect("an error").to_string();
        assert!(plain.contains("4 GPUs asked for, this machine has 1"), "{plain}");
        assert!(plain.contains("logical GPUs"), "names the option: {plain}");
        assert!(!plain.contains('\n'));
        assert!(gpu_count_error(&CudaOptions::logical(4), 1).is_none());
        assert!(gpu_count_error(&CudaOptions::new(1), 1).is_none());
        assert!(gpu_count_error(&CudaOptions::logical(0), 1).is_some());
        let none = gpu_count_error(&CudaOptions::logical(4), 0).expect("an error").to_string();
        assert!(none.contains("--backend sim"), "{none}");
    }

    #[test]
    fn shared_out_of_memory_names_the_sizes_and_the_fix() {
        let e = BackendError::SharedOutOfMemory {
            device: 3,
            physical: 0,
            sharers: 4,
            physical_free_bytes: 4000,
            share_bytes: 1000,
            what: "allocating 1200 bytes for `labels` with 0 of its 1000 bytes in use".into(),
        }
        .to_string();
        for part in ["logical GPU 3", "4 sharing physical GPU 0", "4000", "1000 bytes each", "1200"]
        {
            assert!(e.contains(part), "{part}: {e}");
        }
        assert!(e.contains("fewer logical GPUs"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn busy_time_is_the_union_of_kernel_intervals() {
        let mut c = BusyClock::default();
        c.add(0, 10);
        c.add(5, 15); // overlaps: union 0..15
        c.add(20, 30);
        c.add(18, 19); // out of order
        c.add(30, 30); // empty
        assert_eq!(c.busy_ps(), 15 + 10 + 1);
        let mut many = BusyClock::default();
        for i in 0..1000u64 {
            many.add(i * 10, i * 10 + 4);
            many.add(i * 10 + 2, i * 10 + 6); // overlapping pairs: 6 each
        }
        assert_eq!(many.busy_ps(), 6000);
        many.add(0, 5); // long sealed: clipped to nothing
        assert_eq!(many.busy_ps(), 6000);
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn the_stub_implements_the_whole_backend_trait() {
        fn is_backend<B: crate::backend::Backend>() {}
        is_backend::<CudaBackend>();
    }
}
