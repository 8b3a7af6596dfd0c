//! The CUDA backend proper: the driver API through cudarc's raw bindings (loaded at run
//! time), kernels compiled by NVRTC.
//!
//! Design decisions:
//! - **One primary context per GPU**, made current before each operation on that GPU.
//!   Logical GPUs (see the parent module) on one physical GPU share its context and
//!   module; each has its own streams, events, memory accounting and statistics.
//! - **Memory from `cuMemAlloc`, not the stream-ordered pool.** The runtimes allocate once
//!   up front, so a pool buys nothing, and pool memory needs `cuMemPoolSetAccess` per peer
//!   besides `cuCtxEnablePeerAccess` (without it peer stores fault and peer copies crawl,
//!   see DESIGN.md). Plain allocations are reachable by every peer once
//!   `cuCtxEnablePeerAccess` has run, which [`CudaBackend::open`] does for every pair that
//!   can. Capacity is checked with `cuMemGetInfo` before each allocation.
//! - **Copies**: same GPU `cuMemcpyDtoDAsync`; between GPUs `cuMemcpyPeerAsync`, which goes
//!   over the peer path where one exists and is staged by the driver through pinned host
//!   memory where none does. Host writes and reads go through pinned staging blocks (kept
//!   in a pool and reused), so they are truly asynchronous.
//! - **Completions**: every operation that carries a token (and every host write, whose
//!   staging block must outlive it) records an event after itself; [`Backend::
//!   next_completion`] polls those events in submission order. Host callbacks are events
//!   too: a completion when the stream reaches them, with no driver thread calling into
//!   Rust. A watchdog turns a wait with no progress into [`BackendError::Limit`].
//! - **Counts**: kernels add items, edges and atomics to per-stream device counters; a
//!   kernel with a token gets the difference of two snapshots around it, and
//!   [`Backend::stats`] sums the counters of every stream of a GPU. Link statistics are the
//!   bytes copied per ordered GPU pair, without busy time.
//! - **Kernel busy time**: two timing events (from a per-GPU pool) around every launch,
//!   before its first pass and after its last; [`Backend::next_completion`] polls them
//!   (launches without a token too) and adds each kernel's interval to its GPU's
//!   [`BusyClock`] (the union, so kernels overlapping on concurrent streams count once).
//!   With [`CudaOptions::kernel_spans`] each interval is also kept as a [`KernelSpan`].
//! - **Kernel errors**: kernels write a code into a host-mapped error word, checked at every
//!   poll, and name their launch so the message says which kernel failed.

use super::kernels::{self, COUNTERS, HUGE_CAP, SyArgs};
use super::{BusyClock, CudaOptions, KernelSpan};

/// Bytes of a stream's huge-vertex list.
const HUGE_BYTES: usize = (1 + 3 * HUGE_CAP) * 8;
use crate::backend::{
    Backend, BackendError, BackendStats, BufferId, BufferSlice, Completion, CompletionKind,
    DeviceId, DeviceInfo, DeviceStats, ElemType, EventId, HostData, KernelCountsReport,
    KernelRegistry, Launch, LaunchConfig, LinkStats, StreamId, StreamPriority, Token,
};
use cudarc::driver::sys;
use cudarc::nvrtc::sys as nvrtc;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::{CStr, CString, c_void};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Small pinned blocks made per GPU when the backend opens (see `prewarm_pinned`).
const PINNED_PREWARM_PER_GPU: usize = 16;
/// Their size: a counter read or a kernel's two counter snapshots (64 bytes) up to four
/// times that, the pool's reuse rule.
const PINNED_PREWARM_BYTES: usize = 256;
/// The most bytes the pool of free pinned blocks keeps: a block returned beyond it frees
/// the oldest blocks (large host writes and reads would otherwise leave one page-locked
/// block per size class for the backend's lifetime).
const PINNED_FREE_MAX_BYTES: usize = 1 << 30;

/// Seconds without any finished operation after which a wait fails, and without any
/// change of the watched counters after which a runtime polling persistent kernels gives
/// up ([`Backend::progress_watchdog_ps`]); override with the environment variable
/// `SWITCHYARD_CUDA_WATCHDOG_S`.
pub const DEFAULT_WATCHDOG_S: u64 = 120;

mod host_profile;
mod probe;

fn driver_error(r: sys::CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the driver writes static strings for any error code.
    unsafe {
        sys::cuGetErrorName(r, &mut name);
        sys::cuGetErrorString(r, &mut text);
    }
    let s = |p: *const std::ffi::c_char| {
        if p.is_null() {
            format!("{r:?}")
        } else {
            // SAFETY: non-null pointers from the driver point at NUL-terminated strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    format!("{} ({})", s(name), s(text))
}

/// Turns a driver result into a backend error that says what was being done.
/// Zeroes `bytes` bytes at `ptr` and waits until it is done. `cuMemsetD8` runs on the legacy
/// default stream and returns before the memset has run; the backend's streams are
/// non-blocking, so they do not wait for it: a copy or kernel issued next on one of them
/// could run first and have its writes zeroed afterwards (on H100s: half of a graph's arcs
/// gone before BFS ran, and pairs of a Groute pass-through buffer, allocated on demand with
/// three or more GPUs, arriving as `(0, 0)`). Waiting on the legacy stream waits for the
/// memset alone: no other work of the backend goes there.
///
/// # Safety
/// `ptr` is a live allocation of at least `bytes` bytes in the current context.
unsafe fn zero_now(
    ptr: sys::CUdeviceptr,
    bytes: usize,
    what: impl Fn() -> String,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract; the legacy stream (null) always exists.
    unsafe {
        ck(sys::cuMemsetD8_v2(ptr, 0, bytes), &what)?;
        ck(sys::cuStreamSynchronize(std::ptr::null_mut()), &what)
    }
}

/// Loads every kernel of `module` onto its GPU now and returns them by name.
///
/// CUDA loads kernels lazily by default (`CUDA_MODULE_LOADING=LAZY`): the first launch of
/// each kernel would otherwise pay its loading inside the timed run (milliseconds per
/// kernel, the same on every GPU count), which a benchmark must not count.
fn load_every_function(
    module: sys::CUmodule,
    ordinal: i32,
) -> Result<HashMap<String, sys::CUfunction>, BackendError> {
    let what = |s: &str| format!("{s} of GPU {ordinal}'s kernel module");
    let mut count: std::ffi::c_uint = 0;
    // SAFETY: a loaded module and a valid out pointer.
    ck(unsafe { sys::cuModuleGetFunctionCount(&mut count, module) }, || {
        what("counting the kernels")
    })?;
    let mut functions = vec![std::ptr::null_mut(); count as usize];
    // SAFETY: the array holds `count` entries for the driver to fill.
    ck(unsafe { sys::cuModuleEnumerateFunctions(functions.as_mut_ptr(), count, module) }, || {
        what("listing the kernels")
    })?;
    let mut by_name = HashMap::with_capacity(functions.len());
    for f in functions {
        let mut name: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: `f` is a function of the loaded module; the driver returns a
        // NUL-terminated name that lives as long as the module.
        let name = unsafe {
            ck(sys::cuFuncGetName(&mut name, f), || what("naming a kernel"))?;
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        // SAFETY: as above.
        ck(unsafe { sys::cuFuncLoad(f) }, || what(&format!("loading kernel `{name}`")))?;
        by_name.insert(name, f);
    }
    Ok(by_name)
}

fn ck(r: sys::CUresult, what: impl FnOnce() -> String) -> Result<(), BackendError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(BackendError::Device(format!("{}: {}", what(), driver_error(r))))
    }
}

/// A pinned host block (page-locked, so copies to and from it are asynchronous).
struct Pinned {
    ptr: *mut u8,
    cap: usize,
}

/// A (logical) GPU. Without logical GPUs, one per physical GPU.
struct Dev {
    /// The physical GPU's ordinal (= its index among the physical GPUs used).
    ordinal: i32,
    /// The first logical GPU on its physical GPU: owns the context retain, the module and
    /// the reference event, and releases them.
    owner: bool,
    /// Logical GPUs on this physical GPU (1: not shared).
    sharers: u32,
    /// The physical GPU's free memory when opened (shared GPUs only; 0 otherwise).
    physical_free: u64,
    /// The memory this logical GPU may use, when its physical GPU is shared.
    share: Option<u64>,
    ctx: sys::CUcontext,
    info: DeviceInfo,
    arch: (i32, i32),
    module: sys::CUmodule,
    functions: HashMap<String, sys::CUfunction>,
    l2_bytes: u64,
    in_use: u64,
    peak: u64,
    kernels: u64,
    free_events: Vec<sys::CUevent>,
    /// Timing-enabled events for kernel busy time, reused.
    timing_events: Vec<sys::CUevent>,
    /// Recorded at open on the physical GPU: the zero of kernel spans.
    reference: sys::CUevent,
    busy: BusyClock,
}

impl Dev {
    /// Another logical GPU on the same physical GPU: shared context and module, fresh
    /// accounting.
    fn logical_sibling(&self) -> Dev {
        Dev {
            ordinal: self.ordinal,
            owner: false,
            sharers: self.sharers,
            physical_free: self.physical_free,
            share: self.share,
            ctx: self.ctx,
            info: self.info.clone(),
            arch: self.arch,
            module: self.module,
            functions: self.functions.clone(),
            l2_bytes: self.l2_bytes,
            in_use: 0,
            peak: 0,
            kernels: 0,
            free_events: Vec::new(),
            timing_events: Vec::new(),
            reference: self.reference,
            busy: BusyClock::default(),
        }
    }
}

/// A launch's timing events, waiting for the kernel to finish.
struct Timed {
    kernel: &'static str,
    start: sys::CUevent,
    end: sys::CUevent,
}

struct Buf {
    device: u32,
    ptr: u64,
    elem: ElemType,
    len: usize,
    /// The host address of mapped host memory (`ptr` is then its device address, valid in
    /// every context); `None` for device memory.
    mapped: Option<*mut u8>,
}

struct Strm {
    device: u32,
    raw: sys::CUstream,
    /// Device counters of this stream (`COUNTERS` u64).
    counters: u64,
    /// The stream's huge-vertex list (`1 + 3 * HUGE_CAP` u64).
    huge: u64,
    pending: VecDeque<Pending>,
    /// Kernels launched on this stream whose busy time is not yet counted, in order.
    timed: VecDeque<Timed>,
}

enum PendingKind {
    Kernel { snapshots: Pinned },
    Copy { bytes: u64 },
    Read { block: Pinned, elem: ElemType, len: usize },
    Write { block: Pinned, bytes: u64 },
    Callback,
}

struct Pending {
    seq: u64,
    token: Option<Token>,
    event: sys::CUevent,
    kind: PendingKind,
}

/// Compiled images by compute capability.
type CubinCache = Mutex<HashMap<(i32, i32), Vec<u8>>>;

/// Compiled programs per device architecture (a process compiles each once).
fn cubin_cache() -> &'static CubinCache {
    static CACHE: OnceLock<CubinCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn nvrtc_ck(r: nvrtc::nvrtcResult, what: &str) -> Result<(), BackendError> {
    if r == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(BackendError::Device(format!("NVRTC {what}: {r:?}")))
    }
}

/// Compiles the kernel program for `sm_{major}{minor}` with NVRTC (cached per architecture).
pub fn compile_for(arch: (i32, i32)) -> Result<Vec<u8>, BackendError> {
    if let Some(c) = cubin_cache().lock().map_err(|_| poisoned())?.get(&arch) {
        return Ok(c.clone());
    }
    let on_disk = disk_cache_path(arch);
    if let Some(cubin) = on_disk.as_ref().and_then(|p| std::fs::read(p).ok()) {
        cubin_cache().lock().map_err(|_| poisoned())?.insert(arch, cubin.clone());
        return Ok(cubin);
    }
    let cubin = compile_with_nvrtc(arch)?;
    cubin_cache().lock().map_err(|_| poisoned())?.insert(arch, cubin.clone());
    if let Some(path) = on_disk {
        // Best effort: a cache that cannot be written only costs the next process a compile.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::create_dir_all(path.parent().unwrap_or(std::path::Path::new(".")))
            .and_then(|()| std::fs::write(&tmp, &cubin))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(cubin)
}

/// Where a process finds the cubin another process compiled for `arch` from the same
/// kernel sources: `$SWITCHYARD_CACHE_DIR` (or `$XDG_CACHE_HOME/switchyard`, or
/// `~/.cache/switchyard`), named by the sources' FNV-1a hash, so an edited kernel is never
/// served stale. `SWITCHYARD_CACHE_DIR=off` turns the cache off.
fn disk_cache_path(arch: (i32, i32)) -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("SWITCHYARD_CACHE_DIR") {
        Some(d) if d == "off" => return None,
        Some(d) => std::path::PathBuf::from(d),
        None => match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
            (Some(x), _) => std::path::PathBuf::from(x).join("switchyard"),
            (None, Some(h)) => std::path::PathBuf::from(h).join(".cache/switchyard"),
            (None, None) => return None,
        },
    };
    let hash = switchyard_sim::topology::fnv1a_64(kernels::program_source().as_bytes());
    Some(dir.join(format!("kernels-{hash:016x}-sm{}{}.cubin", arch.0, arch.1)))
}

/// Compiles every kernel for `arch` with NVRTC.
fn compile_with_nvrtc(arch: (i32, i32)) -> Result<Vec<u8>, BackendError> {
    // SAFETY: probing for the library has no preconditions.
    if !unsafe { nvrtc::is_culib_present() } {
        return Err(BackendError::Unavailable(
            "NVRTC (libnvrtc.so.13) was not found, so the CUDA kernels cannot be compiled: \
             install the CUDA 13 toolkit's NVRTC or put it on LD_LIBRARY_PATH, or run with \
             --backend sim"
                .into(),
        ));
    }
    let source = CString::new(kernels::program_source())
        .map_err(|_| BackendError::Device("kernel source holds a NUL byte".into()))?;
    let options: Vec<CString> = [
        format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
        "-lineinfo".into(),
    ]
    .into_iter()
    .map(|o| CString::new(o).expect("options hold no NUL"))
    .collect();
    let option_ptrs: Vec<*const std::ffi::c_char> = options.iter().map(|o| o.as_ptr()).collect();
    let mut prog: nvrtc::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: plain FFI calls with valid NUL-terminated strings; the program is destroyed
    // before returning.
    unsafe {
        nvrtc_ck(
            nvrtc::nvrtcCreateProgram(
                &mut prog,
                source.as_ptr(),
                c"switchyard_kernels.cu".as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            ),
            "create program",
        )?;
        let r = nvrtc::nvrtcCompileProgram(prog, option_ptrs.len() as i32, option_ptrs.as_ptr());
        if r != nvrtc::nvrtcResult::NVRTC_SUCCESS {
            let mut size = 0usize;
            nvrtc::nvrtcGetProgramLogSize(prog, &mut size);
            let mut log = vec![0u8; size.max(1)];
            nvrtc::nvrtcGetProgramLog(prog, log.as_mut_ptr().cast());
            nvrtc::nvrtcDestroyProgram(&mut prog);
            let log = String::from_utf8_lossy(&log).trim_end_matches('\0').to_string();
            return Err(BackendError::Device(format!(
                "NVRTC could not compile kernels/*.cu for sm_{}{}: {r:?}\n{log}",
                arch.0, arch.1
            )));
        }
        let mut size = 0usize;
        nvrtc_ck(nvrtc::nvrtcGetCUBINSize(prog, &mut size), "cubin size")?;
        let mut cubin = vec![0u8; size];
        nvrtc_ck(nvrtc::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()), "get cubin")?;
        nvrtc::nvrtcDestroyProgram(&mut prog);
        Ok(cubin)
    }
}

fn poisoned() -> BackendError {
    BackendError::Device("the kernel cache lock was poisoned by a panic".into())
}

/// Real GPUs through CUDA.
pub struct CudaBackend {
    registry: KernelRegistry,
    devices: Vec<Dev>,
    buffers: Vec<Option<Buf>>,
    streams: Vec<Strm>,
    events: Vec<(u32, sys::CUevent)>,
    pinned_free: Vec<Pinned>,
    /// Host-mapped error word: code, detail, detail, launch id.
    error_host: *mut u64,
    error_dev: u64,
    launches: Vec<&'static str>,
    start: Instant,
    watchdog: Duration,
    links: BTreeMap<(u32, u32), u64>,
    peer: Vec<Vec<bool>>,
    path_bw: Vec<Vec<u64>>,
    /// Device-to-device copy bandwidth of each GPU (read + write bytes per second).
    local_bw: Vec<u64>,
    /// Completions that need no GPU event (host work).
    ready: VecDeque<Completion>,
    seq: u64,
    polls: u64,
    /// The physical GPU whose context is current on this thread.
    current: Cell<Option<i32>>,
    probe_streams: HashMap<u32, StreamId>,
    /// Physical GPUs used.
    physical: u32,
    /// Kernel spans kept for traces, when asked for.
    spans: Option<Vec<KernelSpan>>,
    /// A kernel fault to inject (`SWITCHYARD_CUDA_FAULT`), and whether it happened.
    injection: Option<super::faults::Injection>,
    injected: bool,
    /// The memory each physical GPU offers at most (`SWITCHYARD_CUDA_MEMORY_CAP_MIB`).
    memory_cap: Option<u64>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("devices", &self.devices.iter().map(|d| &d.info.name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Whether this machine has a CUDA driver and at least one GPU (tests skip without).
pub fn gpus_present() -> u32 {
    // SAFETY: probing and initialising the driver have no preconditions.
    unsafe {
        if !sys::is_culib_present() || sys::cuInit(0) != sys::CUresult::CUDA_SUCCESS {
            return 0;
        }
        let mut n = 0;
        if sys::cuDeviceGetCount(&mut n) != sys::CUresult::CUDA_SUCCESS {
            return 0;
        }
        n.max(0) as u32
    }
}

impl CudaBackend {
    /// Opens the first `gpus` GPUs of this machine, enables peer access between every pair
    /// that has it, and compiles the kernels of `registry` for their architecture. More GPUs
    /// than the machine has is an error; [`CudaBackend::open_logical`] shares them instead.
    pub fn open(gpus: u32, registry: KernelRegistry) -> Result<CudaBackend, BackendError> {
        Self::open_with(CudaOptions::new(gpus), registry)
    }

    /// Opens `logical` logical GPUs on this machine's GPUs: logical GPU `l` runs on physical
    /// GPU `l % P`, `P = min(logical, GPUs present)`; memory is shared as
    /// [`memory_share`](super::memory_share) says. See the parent module's docs.
    pub fn open_logical(
        logical: u32,
        registry: KernelRegistry,
    ) -> Result<CudaBackend, BackendError> {
        Self::open_with(CudaOptions::logical(logical), registry)
    }

    /// Opens GPUs as `options` says (physical ones, or logical ones sharing them).
    pub fn open_with(
        options: CudaOptions,
        registry: KernelRegistry,
    ) -> Result<CudaBackend, BackendError> {
        // SAFETY: probing for the driver library has no preconditions.
        if !unsafe { sys::is_culib_present() } {
            return Err(BackendError::Unavailable(super::NO_DRIVER.to_string()));
        }
        // SAFETY: cuInit may be called any number of times.
        let r = unsafe { sys::cuInit(0) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(BackendError::Unavailable(format!(
                "the CUDA driver did not start ({}): no usable GPU here; run on the simulator \
                 with --backend sim",
                driver_error(r)
            )));
        }
        let mut count = 0;
        // SAFETY: the driver is initialised.
        ck(unsafe { sys::cuDeviceGetCount(&mut count) }, || "counting GPUs".into())?;
        let count = count.max(0) as u32;
        if let Some(e) = super::gpu_count_error(&options, count) {
            return Err(e);
        }
        let gpus = options.gpus;
        let physical = super::physical_used(gpus, count);
        let watchdog = std::env::var("SWITCHYARD_CUDA_WATCHDOG_S")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_WATCHDOG_S);
        let injection = super::faults::Injection::from_env()?;
        let memory_cap = super::faults::memory_cap_from_env()?;
        let mut backend = CudaBackend {
            registry,
            devices: Vec::new(),
            buffers: Vec::new(),
            streams: Vec::new(),
            events: Vec::new(),
            pinned_free: Vec::new(),
            error_host: std::ptr::null_mut(),
            error_dev: 0,
            launches: Vec::new(),
            start: Instant::now(),
            watchdog: Duration::from_secs(watchdog),
            links: BTreeMap::new(),
            peer: Vec::new(),
            path_bw: Vec::new(),
            local_bw: Vec::new(),
            ready: VecDeque::new(),
            seq: 0,
            polls: 0,
            current: Cell::new(None),
            probe_streams: HashMap::new(),
            physical,
            spans: options.kernel_spans.then(Vec::new),
            injection,
            injected: false,
            memory_cap,
        };
        for g in 0..physical {
            let mut dev = Self::open_device(g as i32)?;
            dev.sharers = super::sharers_of(g, gpus, physical);
            // Pushed first, so that an error below releases the GPU (in `Drop`).
            backend.devices.push(dev);
            let last = backend.devices.len() - 1;
            if backend.devices[last].sharers > 1 {
                Self::plan_share(&mut backend.devices[last], &options, memory_cap)?;
            }
        }
        for l in physical..gpus {
            let sibling =
                backend.devices[super::physical_gpu_of(l, physical) as usize].logical_sibling();
            backend.devices.push(sibling);
        }
        if backend.is_shared() {
            for (l, d) in backend.devices.iter_mut().enumerate() {
                d.info.name = super::logical_name(&d.info.name, l as u32, gpus, d.ordinal as u32);
            }
        }
        backend.current.set(None);
        backend.make_current(0)?;
        // The error word: pinned, mapped into every context (portable), written by kernels.
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out pointer; flags ask for a portable, device-mapped block.
        unsafe {
            ck(
                sys::cuMemHostAlloc(
                    &mut p,
                    4 * 8,
                    sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP,
                ),
                || "allocating the host-mapped error word".into(),
            )?;
            std::ptr::write_bytes(p.cast::<u8>(), 0, 32);
            let mut d: sys::CUdeviceptr = 0;
            ck(sys::cuMemHostGetDevicePointer_v2(&mut d, p, 0), || {
                "mapping the error word".into()
            })?;
            backend.error_host = p.cast();
            backend.error_dev = d;
        }
        backend.enable_peers()?;
        backend.path_bw = backend.measure_paths()?;
        backend.local_bw = backend.measure_local_bandwidth()?;
        // The probes are not the run's traffic or memory.
        backend.links.clear();
        for d in &mut backend.devices {
            d.peak = d.in_use;
        }
        backend.record_references()?;
        backend.prewarm_pinned()?;
        backend.start = Instant::now();
        Ok(backend)
    }

    /// Sets the memory share of a shared physical GPU's first logical GPU (its siblings copy
    /// it): the free memory now divided among the sharers, or the share asked for if the
    /// sharers fit in the free memory together.
    fn plan_share(
        dev: &mut Dev,
        options: &CudaOptions,
        memory_cap: Option<u64>,
    ) -> Result<(), BackendError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out pointers; `open_device` left this GPU's context current.
        ck(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) }, || {
            format!("reading free memory of GPU {}", dev.ordinal)
        })?;
        let (free, _) = super::faults::capped(free as u64, total as u64, memory_cap, 0);
        dev.physical_free = free;
        let share = match options.memory_per_gpu_bytes {
            None => super::memory_share(free, dev.sharers),
            Some(asked) => {
                let together = asked.saturating_mul(u64::from(dev.sharers));
                if together > free {
                    return Err(BackendError::SharedOutOfMemory {
                        device: dev.ordinal as u32,
                        physical: dev.ordinal as u32,
                        sharers: dev.sharers,
                        physical_free_bytes: free,
                        share_bytes: asked,
                        what: format!(
                            "{} shares of {asked} bytes need {together} bytes together, more \
                             than the {free} bytes free",
                            dev.sharers
                        ),
                    });
                }
                asked
            }
        };
        dev.share = Some(share);
        dev.info.memory_bytes = share;
        Ok(())
    }

    /// Records each physical GPU's reference event (the zero of kernel spans) and waits for
    /// it, so that spans and [`Backend::now_ps`] share an origin to within microseconds.
    fn record_references(&mut self) -> Result<(), BackendError> {
        for g in 0..self.devices.len() {
            if !self.devices[g].owner {
                continue;
            }
            self.make_current(g as u32)?;
            let mut e: sys::CUevent = std::ptr::null_mut();
            // SAFETY: valid out pointer; the GPU's context is current; the null stream
            // belongs to it.
            unsafe {
                ck(sys::cuEventCreate(&mut e, 0), || "creating the reference event".into())?;
                ck(sys::cuEventRecord(e, std::ptr::null_mut()), || {
                    "recording the reference event".into()
                })?;
                ck(sys::cuEventSynchronize(e), || "waiting for the reference event".into())?;
            }
            let ordinal = self.devices[g].ordinal;
            for d in self.devices.iter_mut().filter(|d| d.ordinal == ordinal) {
                d.reference = e;
            }
        }
        Ok(())
    }

    fn open_device(ordinal: i32) -> Result<Dev, BackendError> {
        let what = |s: &str| format!("{s} of GPU {ordinal}");
        let mut dev: sys::CUdevice = 0;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        let mut name = [0 as std::ffi::c_char; 256];
        let mut total = 0usize;
        let attr = |a: sys::CUdevice_attribute, dev: sys::CUdevice| -> Result<i32, BackendError> {
            let mut v = 0;
            // SAFETY: valid out pointer and device handle.
            ck(unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) }, || {
                format!("reading attribute {a:?} of GPU {ordinal}")
            })?;
            Ok(v)
        };
        // SAFETY: valid out pointers; the driver is initialised.
        unsafe {
            ck(sys::cuDeviceGet(&mut dev, ordinal), || what("opening"))?;
            ck(sys::cuDevicePrimaryCtxRetain(&mut ctx, dev), || what("retaining the context"))?;
            ck(sys::cuCtxSetCurrent(ctx), || what("making current the context"))?;
            ck(sys::cuDeviceGetName(name.as_mut_ptr(), 255, dev), || what("the name"))?;
            ck(sys::cuDeviceTotalMem_v2(&mut total, dev), || what("the memory size"))?;
        }
        use sys::CUdevice_attribute as A;
        let sm_count = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)? as u32;
        let l2_bytes = attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)?.max(0) as u64;
        let arch = (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)?,
        );
        let cubin = compile_for(arch)?;
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete image produced by NVRTC for this architecture.
        ck(unsafe { sys::cuModuleLoadData(&mut module, cubin.as_ptr().cast()) }, || {
            what("loading the kernels into the context")
        })?;
        let functions = load_every_function(module, ordinal)?;
        // SAFETY: the driver wrote a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        Ok(Dev {
            ordinal,
            owner: true,
            sharers: 1,
            physical_free: 0,
            share: None,
            ctx,
            info: DeviceInfo { name, memory_bytes: total as u64, sm_count },
            arch,
            module,
            functions,
            l2_bytes,
            in_use: 0,
            peak: 0,
            kernels: 0,
            free_events: Vec::new(),
            timing_events: Vec::new(),
            reference: std::ptr::null_mut(),
            busy: BusyClock::default(),
        })
    }

    fn make_current(&mut self, device: u32) -> Result<(), BackendError> {
        self.set_context(device)
    }

    /// Makes the context of `device`'s physical GPU current (a no-op if it is).
    fn set_context(&self, device: u32) -> Result<(), BackendError> {
        let d = self.device(device)?;
        if self.current.get() != Some(d.ordinal) {
            // SAFETY: the context was retained in `open` and is alive.
            ck(unsafe { sys::cuCtxSetCurrent(d.ctx) }, || format!("switching to gpu{device}"))?;
            self.current.set(Some(d.ordinal));
        }
        Ok(())
    }

    fn device(&self, device: u32) -> Result<&Dev, BackendError> {
        self.devices.get(device as usize).ok_or_else(|| {
            BackendError::Usage(format!(
                "gpu{device} does not exist; this backend has {} GPUs",
                self.devices.len()
            ))
        })
    }

    /// Whether GPUs `a` and `b` are (logical GPUs on) the same physical GPU.
    fn same_physical(&self, a: u32, b: u32) -> bool {
        self.devices[a as usize].ordinal == self.devices[b as usize].ordinal
    }

    /// The physical GPU that (logical) GPU `device` runs on; `None` if it does not exist.
    pub fn physical_of(&self, device: DeviceId) -> Option<u32> {
        self.devices.get(device.0 as usize).map(|d| d.ordinal as u32)
    }

    /// Physical GPUs in use.
    pub fn physical_count(&self) -> u32 {
        self.physical
    }

    /// Whether any physical GPU runs several logical GPUs: then times are not scaling, and
    /// reports should say that GPUs were shared.
    pub fn is_shared(&self) -> bool {
        self.devices.iter().any(|d| d.sharers > 1)
    }

    /// Checks, before any work, that a run needing `bytes_per_gpu[g]` bytes on each GPU `g`
    /// fits: each logical GPU within its share, the sharers of a physical GPU together within
    /// its free memory, and an unshared GPU within its free memory. The errors give the sizes.
    pub fn check_memory_plan(&self, bytes_per_gpu: &[u64]) -> Result<(), BackendError> {
        if bytes_per_gpu.len() != self.devices.len() {
            return Err(BackendError::Usage(format!(
                "a memory plan for {} GPUs given to a backend of {}; give one size per GPU",
                bytes_per_gpu.len(),
                self.devices.len()
            )));
        }
        for (g, &need) in bytes_per_gpu.iter().enumerate() {
            let d = &self.devices[g];
            let free = self.free_bytes(g as u32)?;
            let shared_error = |share: u64, what: String| BackendError::SharedOutOfMemory {
                device: g as u32,
                physical: d.ordinal as u32,
                sharers: d.sharers,
                physical_free_bytes: d.physical_free,
                share_bytes: share,
                what,
            };
            match d.share {
                Some(share) if need > share => {
                    return Err(shared_error(
                        share,
                        format!("the run needs {need} bytes on it, more than its share"),
                    ));
                }
                Some(share) if d.owner => {
                    let sharers: Vec<usize> = (0..self.devices.len())
                        .filter(|&h| self.same_physical(g as u32, h as u32))
                        .collect();
                    let together: u64 = sharers.iter().map(|&h| bytes_per_gpu[h]).sum();
                    if together > free {
                        let each: Vec<String> = sharers
                            .iter()
                            .map(|&h| format!("gpu{h} {}", bytes_per_gpu[h]))
                            .collect();
                        return Err(shared_error(
                            share,
                            format!(
                                "the run needs {together} bytes on them together ({}), more \
                                 than the {free} bytes free now",
                                each.join(", ")
                            ),
                        ));
                    }
                }
                Some(_) => {}
                None if need > free => {
                    let cap = if self.memory_cap.is_some() {
                        format!(", capped by {}", super::faults::MEMORY_CAP_ENV)
                    } else {
                        String::new()
                    };
                    return Err(BackendError::OutOfMemory {
                        device: g as u32,
                        label: format!(
                            "the graph's share of this GPU (CSR offsets and its owned arcs; \
                             {free} bytes free{cap}), before any work"
                        ),
                        requested_bytes: need,
                        in_use_bytes: d.in_use,
                        capacity_bytes: free + d.in_use,
                    });
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Free memory of `device`'s physical GPU now (`cuMemGetInfo`).
    fn free_bytes(&self, device: u32) -> Result<u64, BackendError> {
        self.set_context(device)?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out pointers; the device's context is current.
        ck(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) }, || {
            format!("reading free memory of gpu{device}")
        })?;
        Ok(self.capped_memory(device, free as u64, total as u64).0)
    }

    /// Free and total bytes of `device`'s physical GPU under the memory cap, if one is set.
    fn capped_memory(&self, device: u32, free: u64, total: u64) -> (u64, u64) {
        let ordinal = self.devices[device as usize].ordinal;
        let in_use = self.devices.iter().filter(|d| d.ordinal == ordinal).map(|d| d.in_use).sum();
        super::faults::capped(free, total, self.memory_cap, in_use)
    }

    /// What every stream waits for (kernels in flight, operations the host waits for),
    /// from the backend's own books, without asking the driver: for the message of a run
    /// stopped by the watchdog or a device fault.
    pub fn fault_report(&self) -> String {
        let waits: Vec<super::faults::StreamWait> = self
            .streams
            .iter()
            .enumerate()
            .map(|(i, s)| super::faults::StreamWait {
                stream: i,
                device: s.device,
                kernels: s.timed.iter().map(|t| t.kernel).collect(),
                pending: s
                    .pending
                    .iter()
                    .map(|p| match p.kind {
                        PendingKind::Kernel { .. } => "kernel",
                        PendingKind::Copy { .. } => "copy",
                        PendingKind::Read { .. } => "read",
                        PendingKind::Write { .. } => "write",
                        PendingKind::Callback => "callback",
                    })
                    .collect(),
            })
            .collect();
        super::faults::waiting_report(&waits, 8)
    }

    fn enable_peers(&mut self) -> Result<(), BackendError> {
        let n = self.devices.len();
        self.peer = vec![vec![false; n]; n];
        for a in 0..n {
            for b in 0..n {
                if self.same_physical(a as u32, b as u32) {
                    // One context: every pointer of it is directly usable.
                    self.peer[a][b] = true;
                    continue;
                }
                let mut can = 0;
                let (da, db) = (self.devices[a].ordinal, self.devices[b].ordinal);
                // SAFETY: valid out pointer and device ordinals.
                ck(unsafe { sys::cuDeviceCanAccessPeer(&mut can, da, db) }, || {
                    format!("asking whether gpu{a} can reach gpu{b}")
                })?;
                if can == 0 {
                    continue;
                }
                self.make_current(a as u32)?;
                // SAFETY: both contexts are alive; `a`'s is current.
                let r = unsafe { sys::cuCtxEnablePeerAccess(self.devices[b].ctx, 0) };
                if r != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                    ck(r, || format!("enabling peer access from gpu{a} to gpu{b}"))?;
                }
                self.peer[a][b] = true;
            }
        }
        Ok(())
    }

    /// L2 cache size of a device in bytes.
    pub fn l2_bytes(&self, device: DeviceId) -> u64 {
        self.devices.get(device.0 as usize).map_or(0, |d| d.l2_bytes)
    }

    /// The compute capability of a device.
    pub fn arch(&self, device: DeviceId) -> Option<(i32, i32)> {
        self.devices.get(device.0 as usize).map(|d| d.arch)
    }

    fn stream(&self, stream: StreamId) -> Result<&Strm, BackendError> {
        self.streams
            .get(stream.0 as usize)
            .ok_or_else(|| BackendError::Usage(format!("stream {} does not exist", stream.0)))
    }

    fn buffer(&self, id: BufferId) -> Result<&Buf, BackendError> {
        self.buffers.get(id.0 as usize).and_then(Option::as_ref).ok_or_else(|| {
            BackendError::Usage(format!("buffer {} does not exist or was freed", id.0))
        })
    }

    /// A device buffer for a stream-ordered host read or write (mapped memory is read and
    /// written with `read_mapped`/`write_mapped`, or copied to and from device memory with
    /// `copy`, as on the simulator).
    fn stream_buffer(&self, id: BufferId) -> Result<&Buf, BackendError> {
        let b = self.buffer(id)?;
        if b.mapped.is_some() {
            return Err(BackendError::Usage(format!(
                "buffer {} is mapped host memory: read and write it with read_mapped and \
                 write_mapped (or copy between it and device memory), not with stream reads \
                 and writes",
                id.0
            )));
        }
        Ok(b)
    }

    /// Fills the pinned pool with small blocks before the run: a superstep's counter reads
    /// and kernel snapshots (64 bytes each, one or more per GPU in flight at once) would
    /// otherwise allocate pinned memory inside the first supersteps. On 4 H200s (call c16)
    /// the trace of BSP BFS on R-MAT 22 shows the third and fourth GPUs' first merges starting
    /// 1.7 and 3.2 ms after their senders' splits while the first two, whose reads found
    /// recycled blocks, waited 0.2 ms.
    fn prewarm_pinned(&mut self) -> Result<(), BackendError> {
        let blocks = PINNED_PREWARM_PER_GPU * self.devices.len();
        let small = self.pinned_free.iter().filter(|p| p.cap <= PINNED_PREWARM_BYTES).count();
        for _ in small..blocks {
            let block = self.take_pinned_new(PINNED_PREWARM_BYTES)?;
            self.pinned_free.push(block);
        }
        Ok(())
    }

    fn take_pinned(&mut self, bytes: usize) -> Result<Pinned, BackendError> {
        let bytes = bytes.max(64);
        if let Some(i) =
            self.pinned_free.iter().position(|p| p.cap >= bytes && p.cap <= bytes.saturating_mul(4))
        {
            // `remove`, not `swap_remove`: the pool stays oldest first (see `return_pinned`).
            return Ok(self.pinned_free.remove(i));
        }
        self.take_pinned_new(bytes)
    }

    /// Puts a block whose operation finished back into the pool, freeing the oldest blocks
    /// while the pool holds more than [`PINNED_FREE_MAX_BYTES`] (never the small blocks of
    /// `prewarm_pinned`).
    fn return_pinned(&mut self, block: Pinned) {
        self.pinned_free.push(block);
        let caps: Vec<usize> = self.pinned_free.iter().map(|p| p.cap).collect();
        let release = pinned_to_release(&caps, PINNED_PREWARM_BYTES, PINNED_FREE_MAX_BYTES);
        for i in release.into_iter().rev() {
            let p = self.pinned_free.remove(i);
            // SAFETY: a pooled block is used by no operation (it came back after its
            // operation's event completed); a failure leaves a leak, not a fault.
            unsafe { sys::cuMemFreeHost(p.ptr.cast()) };
        }
    }

    /// A new pinned block of `bytes`.
    fn take_pinned_new(&mut self, bytes: usize) -> Result<Pinned, BackendError> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out pointer; portable so any context's stream may use it.
        ck(unsafe { sys::cuMemHostAlloc(&mut p, bytes, sys::CU_MEMHOSTALLOC_PORTABLE) }, || {
            format!("allocating {bytes} bytes of pinned host memory")
        })?;
        Ok(Pinned { ptr: p.cast(), cap: bytes })
    }

    fn event_after(&mut self, stream: StreamId) -> Result<sys::CUevent, BackendError> {
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        let ev = match self.devices[device as usize].free_events.pop() {
            Some(e) => e,
            None => {
                let mut e: sys::CUevent = std::ptr::null_mut();
                // SAFETY: valid out pointer; the device's context is current.
                ck(
                    unsafe {
                        sys::cuEventCreate(
                            &mut e,
                            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
                        )
                    },
                    || format!("creating an event on gpu{device}"),
                )?;
                e
            }
        };
        // SAFETY: event and stream belong to the current context.
        ck(unsafe { sys::cuEventRecord(ev, raw) }, || {
            format!("recording an event on gpu{device}")
        })?;
        Ok(ev)
    }

    fn push_pending(
        &mut self,
        stream: StreamId,
        token: Option<Token>,
        kind: PendingKind,
    ) -> Result<(), BackendError> {
        let event = self.event_after(stream)?;
        self.seq += 1;
        let seq = self.seq;
        self.streams[stream.0 as usize].pending.push_back(Pending { seq, token, event, kind });
        Ok(())
    }

    fn check_kernel_error(&self) -> Result<(), BackendError> {
        // SAFETY: the error word is a live pinned block of four u64 written by kernels.
        let code = unsafe { std::ptr::read_volatile(self.error_host) };
        if code == 0 {
            return Ok(());
        }
        // SAFETY: as above.
        let (d1, d2, launch) = unsafe {
            (
                std::ptr::read_volatile(self.error_host.add(1)),
                std::ptr::read_volatile(self.error_host.add(2)),
                std::ptr::read_volatile(self.error_host.add(3)),
            )
        };
        let kernel = self.launches.get(launch as usize).copied().unwrap_or("unknown");
        Err(BackendError::Kernel {
            kernel: kernel.into(),
            message: kernels::error_message(code, d1, d2),
        })
    }

    /// Kernel `name` of `device`'s module (every kernel was loaded and named at open).
    fn function(&self, device: u32, name: &str) -> Option<sys::CUfunction> {
        self.devices[device as usize].functions.get(name).copied()
    }

    fn finish(&mut self, p: Pending) -> Result<Option<Completion>, BackendError> {
        let time_ps = self.now_ps();
        let kind = match p.kind {
            PendingKind::Kernel { snapshots } => {
                let s = snapshots.ptr.cast::<u64>();
                // SAFETY: the block holds two snapshots of COUNTERS u64, both copied by now.
                let (before, after) = unsafe {
                    (
                        std::slice::from_raw_parts(s, COUNTERS).to_vec(),
                        std::slice::from_raw_parts(s.add(COUNTERS), COUNTERS).to_vec(),
                    )
                };
                self.return_pinned(snapshots);
                let d = |i: usize| after[i].wrapping_sub(before[i]);
                Some(CompletionKind::Kernel(KernelCountsReport {
                    items: d(0),
                    edges: d(1),
                    atomics: d(2),
                    remote_ops: d(3),
                }))
            }
            PendingKind::Copy { bytes } => Some(CompletionKind::Copy { bytes }),
            PendingKind::Read { block, elem, len } => {
                let mut data = HostData::zeros(elem, len);
                // SAFETY: the read copied `len` elements of `elem` into the block.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        block.ptr,
                        host_ptr_mut(&mut data),
                        len * elem.size_bytes() as usize,
                    );
                }
                self.return_pinned(block);
                Some(CompletionKind::HostRead(data))
            }
            PendingKind::Write { block, bytes } => {
                self.return_pinned(block);
                Some(CompletionKind::Copy { bytes })
            }
            PendingKind::Callback => Some(CompletionKind::Callback),
        };
        Ok(match (p.token, kind) {
            (Some(token), Some(kind)) => Some(Completion { token, time_ps, kind }),
            _ => None,
        })
    }

    /// Retires finished operations that carry no token (staging blocks go back to the pool).
    fn reap_untokened(&mut self) -> Result<(), BackendError> {
        for s in 0..self.streams.len() {
            while let Some(front) = self.streams[s].pending.front() {
                if front.token.is_some() {
                    break;
                }
                // SAFETY: the event was recorded on a live stream.
                let r = unsafe { sys::cuEventQuery(front.event) };
                if r == sys::CUresult::CUDA_ERROR_NOT_READY {
                    break;
                }
                ck(r, || format!("waiting for an operation on stream {s}"))?;
                let p = self.streams[s].pending.pop_front().expect("front exists");
                let device = self.streams[s].device as usize;
                self.devices[device].free_events.push(p.event);
                self.finish(p)?;
            }
        }
        Ok(())
    }

    /// Sum of every stream's device counters of `device` (waits for the GPU to be idle).
    fn device_counters(&self, device: u32) -> [u64; COUNTERS] {
        let mut total = [0u64; COUNTERS];
        if self.set_context(device).is_err() {
            return total;
        }
        for s in self.streams.iter().filter(|s| s.device == device) {
            let mut c = [0u64; COUNTERS];
            // SAFETY: the counters are a live device allocation of COUNTERS u64; the
            // context is made current and synchronised first. Failures leave zeros.
            unsafe {
                if sys::cuCtxSynchronize() != sys::CUresult::CUDA_SUCCESS
                    || sys::cuMemcpyDtoH_v2(c.as_mut_ptr().cast(), s.counters, COUNTERS * 8)
                        != sys::CUresult::CUDA_SUCCESS
                {
                    continue;
                }
            }
            for (t, v) in total.iter_mut().zip(c) {
                *t += v;
            }
        }
        total
    }

    /// Records a timing event (from `device`'s pool) on `raw`, whose context is current.
    fn kernel_timer_start(
        &mut self,
        device: u32,
        raw: sys::CUstream,
    ) -> Result<sys::CUevent, BackendError> {
        let e = match self.devices[device as usize].timing_events.pop() {
            Some(e) => e,
            None => {
                let mut e: sys::CUevent = std::ptr::null_mut();
                // SAFETY: valid out pointer; the device's context is current.
                ck(unsafe { sys::cuEventCreate(&mut e, 0) }, || {
                    format!("creating a timing event on gpu{device}")
                })?;
                e
            }
        };
        // SAFETY: event and stream belong to the current context.
        ck(unsafe { sys::cuEventRecord(e, raw) }, || {
            format!("recording a timing event on gpu{device}")
        })?;
        Ok(e)
    }

    /// Records the end of a kernel started with [`Self::kernel_timer_start`] on `stream` and
    /// queues its interval for [`Self::poll_kernel_timings`].
    fn kernel_timer_end(
        &mut self,
        stream: StreamId,
        kernel: &'static str,
        start: sys::CUevent,
    ) -> Result<(), BackendError> {
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        let end = self.kernel_timer_start(device, raw)?;
        self.streams[stream.0 as usize].timed.push_back(Timed { kernel, start, end });
        Ok(())
    }

    /// The interval of a finished kernel in picoseconds since the backend opened; `None`
    /// while it runs.
    fn timed_interval(&self, device: u32, t: &Timed) -> Result<Option<(u64, u64)>, BackendError> {
        // SAFETY: the event was recorded on a live stream.
        let r = unsafe { sys::cuEventQuery(t.end) };
        if r == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(None);
        }
        ck(r, || format!("a kernel `{}` on gpu{device} failed", t.kernel))?;
        let reference = self.devices[device as usize].reference;
        let (mut from_zero, mut length) = (0f32, 0f32);
        // SAFETY: all three events belong to the device's context and have completed
        // (`start` precedes `end` on one stream; the reference was waited for at open).
        unsafe {
            ck(sys::cuEventElapsedTime_v2(&mut length, t.start, t.end), || {
                format!("timing kernel `{}` on gpu{device}", t.kernel)
            })?;
            if !reference.is_null() {
                ck(sys::cuEventElapsedTime_v2(&mut from_zero, reference, t.start), || {
                    format!("timing kernel `{}` on gpu{device}", t.kernel)
                })?;
            }
        }
        let ps = |ms: f32| (f64::from(ms.max(0.0)) * 1e9) as u64;
        let start = ps(from_zero);
        Ok(Some((start, start + ps(length))))
    }

    /// Counts the busy time of every finished kernel (with a token or not) and returns its
    /// events to the pool.
    fn poll_kernel_timings(&mut self) -> Result<(), BackendError> {
        for s in 0..self.streams.len() {
            let device = self.streams[s].device;
            while let Some(front) = self.streams[s].timed.front() {
                let Some((start, end)) = self.timed_interval(device, front)? else { break };
                let t = self.streams[s].timed.pop_front().expect("front exists");
                let d = &mut self.devices[device as usize];
                d.busy.add(start, end);
                d.timing_events.push(t.start);
                d.timing_events.push(t.end);
                if let Some(spans) = &mut self.spans {
                    spans.push(KernelSpan {
                        device: DeviceId(device),
                        stream: StreamId(s as u32),
                        kernel: t.kernel,
                        start_ps: start,
                        end_ps: end,
                    });
                }
            }
        }
        Ok(())
    }

    /// Kernel busy time of `device` so far, counting finished kernels not yet polled.
    fn busy_ps(&self, device: u32) -> u64 {
        let Some(d) = self.devices.get(device as usize) else { return 0 };
        let mut busy = d.busy.clone();
        for s in self.streams.iter().filter(|s| s.device == device) {
            for t in &s.timed {
                match self.timed_interval(device, t) {
                    Ok(Some((start, end))) => busy.add(start, end),
                    _ => break,
                }
            }
        }
        busy.busy_ps()
    }

    /// Turns the recording of [`KernelSpan`]s on or off (off drops those recorded).
    pub fn set_kernel_spans(&mut self, on: bool) {
        if !on {
            self.spans = None;
        } else if self.spans.is_none() {
            self.spans = Some(Vec::new());
        }
    }

    /// The kernel spans recorded since the last call (finished kernels already polled by
    /// [`Backend::next_completion`]), in the order they were polled.
    pub fn take_kernel_spans(&mut self) -> Vec<KernelSpan> {
        let _ = self.poll_kernel_timings();
        self.spans.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Events polled so far.
    pub fn polls(&self) -> u64 {
        self.polls
    }
}

/// Which free pinned blocks to free (indices into `caps`, their sizes in bytes, oldest
/// first; ascending): the oldest of those larger than `small_bytes` until the pool holds at
/// most `max_bytes`. Small blocks are kept (the pool's prewarmed counter blocks).
fn pinned_to_release(caps: &[usize], small_bytes: usize, max_bytes: usize) -> Vec<usize> {
    let mut total: usize = caps.iter().sum();
    let mut release = Vec::new();
    for (i, &cap) in caps.iter().enumerate() {
        if total <= max_bytes {
            break;
        }
        if cap > small_bytes {
            total -= cap;
            release.push(i);
        }
    }
    release
}

/// The error for a stream or mapped operation on the wrong kind of buffer.
/// What [`Backend::next_completion`] delivers next on CUDA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextSource {
    /// The finished head of this stream (the earliest-submitted finished one).
    Stream(usize),
    /// The oldest host-work completion.
    Ready,
    /// Nothing is outstanding: `None`.
    Nothing,
    /// GPU work is outstanding and none of it has finished: poll again.
    Wait,
}

/// The order of completions on CUDA: a GPU operation found finished goes before host work.
///
/// Host work ([`Backend::host_work`]) completes at once on CUDA, so a runtime that keeps
/// one poll outstanding (Atos's host loop: a poll, read the mapped counters, the next poll)
/// always has one ready. Delivering ready host work first, as this backend once did, starved
/// every GPU completion behind an endless chain of polls: a discrete Atos launch that had
/// ended was never reported, the host never relaunched it or saw it quiet, and the run spun
/// forever with the GPU idle (and the watchdog, reset by every poll, never fired). A finished
/// operation ended before now, so it comes first, as in the simulator, which orders both by
/// time; host work is delivered when nothing finished is waiting.
pub(crate) fn next_source(
    finished_stream: Option<usize>,
    ready: bool,
    outstanding: usize,
) -> NextSource {
    match (finished_stream, ready) {
        (Some(s), _) => NextSource::Stream(s),
        (None, true) => NextSource::Ready,
        (None, false) if outstanding == 0 => NextSource::Nothing,
        (None, false) => NextSource::Wait,
    }
}

fn not_mapped(buffer: BufferId) -> BackendError {
    BackendError::Usage(format!(
        "buffer {} is device memory, not mapped host memory: use read_to_host/write_from_host",
        buffer.0
    ))
}

/// Reads `out.len()` elements of `out`'s type from mapped host memory at `host`, each with
/// one volatile load of its own width. A GPU stores a mapped word whole (the asynchronous
/// send's counters are `u64`), so a load of the same width sees it old or new; a byte-wise
/// read could mix the low bytes of the old value with the high bytes of the new one, which
/// reads a counter crossing a multiple of 256 (say 0x0ff to 0x100) as 0x1ff, above both:
/// the Groute host would route outbox pairs not yet written.
///
/// # Safety
/// `host` points at a live block of at least `out.len()` elements of `out`'s type,
/// aligned for it.
unsafe fn read_mapped_elements(host: *const u8, out: &mut HostData) {
    /// # Safety
    /// As the outer function's.
    unsafe fn read<T: Copy>(host: *const u8, out: &mut [T]) {
        let host = host.cast::<T>();
        for (i, x) in out.iter_mut().enumerate() {
            // SAFETY: the caller's contract: `i` is inside the aligned block.
            *x = unsafe { std::ptr::read_volatile(host.add(i)) };
        }
    }
    // SAFETY: the caller's contract.
    unsafe {
        match out {
            HostData::U32(v) => read(host, v),
            HostData::U64(v) => read(host, v),
            HostData::F32(v) => read(host, v),
            HostData::F64(v) => read(host, v),
        }
    }
}

/// Writes `data` into mapped host memory at element `offset` of `host`, each element with
/// one volatile store of its own width (a GPU reading the word sees it old or new).
///
/// # Safety
/// `host` points at a live block of at least `offset + data.len()` elements of `data`'s
/// type, aligned for it.
unsafe fn write_mapped_elements(host: *mut u8, offset: usize, data: &HostData) {
    /// # Safety
    /// As the outer function's.
    unsafe fn write<T: Copy>(host: *mut u8, offset: usize, data: &[T]) {
        let host = host.cast::<T>();
        for (i, &x) in data.iter().enumerate() {
            // SAFETY: the caller's contract: `offset + i` is inside the aligned block.
            unsafe { std::ptr::write_volatile(host.add(offset + i), x) };
        }
    }
    // SAFETY: the caller's contract.
    unsafe {
        match data {
            HostData::U32(v) => write(host, offset, v),
            HostData::U64(v) => write(host, offset, v),
            HostData::F32(v) => write(host, offset, v),
            HostData::F64(v) => write(host, offset, v),
        }
    }
}

fn host_ptr(data: &HostData) -> *const u8 {
    match data {
        HostData::U32(v) => v.as_ptr().cast(),
        HostData::U64(v) => v.as_ptr().cast(),
        HostData::F32(v) => v.as_ptr().cast(),
        HostData::F64(v) => v.as_ptr().cast(),
    }
}

fn host_ptr_mut(data: &mut HostData) -> *mut u8 {
    match data {
        HostData::U32(v) => v.as_mut_ptr().cast(),
        HostData::U64(v) => v.as_mut_ptr().cast(),
        HostData::F32(v) => v.as_mut_ptr().cast(),
        HostData::F64(v) => v.as_mut_ptr().cast(),
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }

    fn device_count(&self) -> u32 {
        self.devices.len() as u32
    }

    fn device_info(&self, device: DeviceId) -> DeviceInfo {
        self.devices[device.0 as usize].info.clone()
    }

    fn peer_access(&self, a: DeviceId, b: DeviceId) -> bool {
        self.peer.get(a.0 as usize).and_then(|r| r.get(b.0 as usize)).copied().unwrap_or(false)
    }

    fn physical_gpu(&self, device: DeviceId) -> u32 {
        self.physical_of(device).unwrap_or(device.0)
    }

    fn path_bandwidth_bytes_per_s(&self, a: DeviceId, b: DeviceId) -> u64 {
        if a == b {
            return 0;
        }
        self.path_bw.get(a.0 as usize).and_then(|r| r.get(b.0 as usize)).copied().unwrap_or(0)
    }

    fn memory_bandwidth_bytes_per_s(&self, device: DeviceId) -> u64 {
        self.local_bw.get(device.0 as usize).copied().unwrap_or(0)
    }

    fn host_work(&mut self, cost_ps: u64, token: Token) -> Result<(), BackendError> {
        // The runtime did the work on this thread already: its real time has passed.
        let _ = cost_ps;
        let time_ps = self.now_ps();
        self.ready.push_back(Completion { token, time_ps, kind: CompletionKind::HostWork });
        Ok(())
    }

    fn progress_watchdog_ps(&self) -> Option<u64> {
        Some(
            u64::try_from(self.watchdog.as_nanos()).unwrap_or(u64::MAX / 1000).saturating_mul(1000),
        )
    }

    fn alloc_mapped(
        &mut self,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError> {
        let _span = host_profile::span("alloc_mapped");
        let bytes = (len as u64 * elem.size_bytes()).max(8) as usize;
        self.make_current(0)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        let mut d: sys::CUdeviceptr = 0;
        // SAFETY: valid out pointers; a portable, device-mapped block of `bytes`, zeroed
        // before any kernel can see it.
        unsafe {
            ck(
                sys::cuMemHostAlloc(
                    &mut p,
                    bytes,
                    sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP,
                ),
                || format!("allocating {bytes} bytes of mapped host memory for `{label}`"),
            )?;
            std::ptr::write_bytes(p.cast::<u8>(), 0, bytes);
            ck(sys::cuMemHostGetDevicePointer_v2(&mut d, p, 0), || {
                format!("mapping `{label}` into the GPUs")
            })?;
        }
        self.buffers.push(Some(Buf { device: 0, ptr: d, elem, len, mapped: Some(p.cast()) }));
        Ok(BufferId(self.buffers.len() as u32 - 1))
    }

    fn read_mapped(&self, buffer: BufferId) -> Result<HostData, BackendError> {
        let _span = host_profile::span("read_mapped");
        let b = self.buffer(buffer)?;
        let host = b.mapped.ok_or_else(|| not_mapped(buffer))?;
        let mut out = HostData::zeros(b.elem, b.len);
        // SAFETY: `host` is a live mapped block of `b.len` elements of `b.elem`, page-aligned
        // (cuMemHostAlloc); each element is read once with a volatile load of its width.
        unsafe { read_mapped_elements(host, &mut out) };
        Ok(out)
    }

    fn write_mapped(
        &mut self,
        buffer: BufferId,
        offset: usize,
        data: HostData,
    ) -> Result<(), BackendError> {
        let _span = host_profile::span("write_mapped");
        let b = self.buffer(buffer)?;
        let host = b.mapped.ok_or_else(|| not_mapped(buffer))?;
        if data.elem() != b.elem || offset + data.len() > b.len {
            return Err(BackendError::Usage(format!(
                "mapped write of {} {:?} elements at {offset} into buffer {} ({:?}, {})",
                data.len(),
                data.elem(),
                buffer.0,
                b.elem,
                b.len
            )));
        }
        // SAFETY: the range was checked against the block (same element type, aligned);
        // volatile stores of whole elements, then a fence so the GPUs see them in order.
        unsafe { write_mapped_elements(host, offset, &data) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn now_ps(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64 * 1000
    }

    fn alloc(
        &mut self,
        device: DeviceId,
        elem: ElemType,
        len: usize,
        label: &str,
    ) -> Result<BufferId, BackendError> {
        let _span = host_profile::span("alloc");
        self.device(device.0)?;
        self.make_current(device.0)?;
        let bytes = len as u64 * elem.size_bytes();
        let mut ptr: sys::CUdeviceptr = 0;
        if bytes > 0 {
            let (mut free, mut total) = (0usize, 0usize);
            // SAFETY: valid out pointers; the device's context is current.
            ck(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) }, || {
                format!("reading free memory of gpu{}", device.0)
            })?;
            let (free, total) = self.capped_memory(device.0, free as u64, total as u64);
            let d = &self.devices[device.0 as usize];
            if let Some(share) = d.share {
                // A logical GPU of a shared physical GPU: its share, then what the sharers
                // leave free together.
                let shared_error = |what: String| BackendError::SharedOutOfMemory {
                    device: device.0,
                    physical: d.ordinal as u32,
                    sharers: d.sharers,
                    physical_free_bytes: d.physical_free,
                    share_bytes: share,
                    what,
                };
                if d.in_use + bytes > share {
                    return Err(shared_error(format!(
                        "allocating {bytes} bytes for `{label}` with {} of its {share} bytes \
                         in use",
                        d.in_use
                    )));
                }
                if bytes > free {
                    let together: u64 = self
                        .devices
                        .iter()
                        .filter(|o| o.ordinal == d.ordinal)
                        .map(|o| o.in_use)
                        .sum();
                    return Err(shared_error(format!(
                        "allocating {bytes} bytes for `{label}`: its sharers use {together} bytes \
                         together and the physical GPU has {free} bytes free"
                    )));
                }
            }
            if bytes > free {
                return Err(BackendError::OutOfMemory {
                    device: device.0,
                    label: label.to_string(),
                    requested_bytes: bytes,
                    in_use_bytes: total.saturating_sub(free),
                    capacity_bytes: d.info.memory_bytes.min(total),
                });
            }
            // SAFETY: valid out pointer; size checked above.
            unsafe {
                ck(sys::cuMemAlloc_v2(&mut ptr, bytes as usize), || {
                    format!("allocating {bytes} bytes for `{label}` on gpu{}", device.0)
                })?;
                zero_now(ptr, bytes as usize, || format!("zeroing `{label}` on gpu{}", device.0))?;
            }
        }
        let d = &mut self.devices[device.0 as usize];
        d.in_use += bytes;
        d.peak = d.peak.max(d.in_use);
        self.buffers.push(Some(Buf { device: device.0, ptr, elem, len, mapped: None }));
        Ok(BufferId(self.buffers.len() as u32 - 1))
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), BackendError> {
        let _span = host_profile::span("free");
        let b =
            self.buffers.get_mut(buffer.0 as usize).and_then(Option::take).ok_or_else(|| {
                BackendError::Usage(format!("buffer {} freed twice or never allocated", buffer.0))
            })?;
        if let Some(host) = b.mapped {
            // SAFETY: every GPU is drained first, so no kernel uses the block.
            unsafe {
                for d in 0..self.devices.len() as u32 {
                    self.make_current(d)?;
                    ck(sys::cuCtxSynchronize(), || format!("finishing gpu{d} work"))?;
                }
                ck(sys::cuMemFreeHost(host.cast()), || {
                    format!("freeing mapped buffer {}", buffer.0)
                })?;
            }
            return Ok(());
        }
        self.make_current(b.device)?;
        if b.ptr != 0 {
            // SAFETY: every stream of the device is drained first, so nothing uses it.
            unsafe {
                ck(sys::cuCtxSynchronize(), || format!("finishing gpu{} work", b.device))?;
                ck(sys::cuMemFree_v2(b.ptr), || format!("freeing buffer {}", buffer.0))?;
            }
        }
        self.devices[b.device as usize].in_use -= b.len as u64 * b.elem.size_bytes();
        Ok(())
    }

    fn memory_in_use_bytes(&self, device: DeviceId) -> u64 {
        self.devices.get(device.0 as usize).map_or(0, |d| d.in_use)
    }

    fn buffer_shape(&self, buffer: BufferId) -> Result<(ElemType, usize), BackendError> {
        let b = self.buffer(buffer)?;
        Ok((b.elem, b.len))
    }

    fn create_stream(
        &mut self,
        device: DeviceId,
        priority: StreamPriority,
    ) -> Result<StreamId, BackendError> {
        let _span = host_profile::span("create_stream");
        self.device(device.0)?;
        self.make_current(device.0)?;
        let (mut least, mut greatest) = (0, 0);
        let mut raw: sys::CUstream = std::ptr::null_mut();
        let mut counters: sys::CUdeviceptr = 0;
        let mut huge: sys::CUdeviceptr = 0;
        // SAFETY: valid out pointers; the device's context is current.
        unsafe {
            ck(sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest), || {
                "reading stream priorities".into()
            })?;
            let p = if priority == StreamPriority::High { greatest } else { least };
            ck(
                sys::cuStreamCreateWithPriority(
                    &mut raw,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    p,
                ),
                || format!("creating a stream on gpu{}", device.0),
            )?;
            ck(sys::cuMemAlloc_v2(&mut counters, COUNTERS * 8), || "allocating counters".into())?;
            zero_now(counters, COUNTERS * 8, || "zeroing counters".into())?;
            ck(sys::cuMemAlloc_v2(&mut huge, HUGE_BYTES), || "allocating the huge list".into())?;
            zero_now(huge, HUGE_BYTES, || "zeroing the huge list".into())?;
        }
        self.streams.push(Strm {
            device: device.0,
            raw,
            counters,
            huge,
            pending: VecDeque::new(),
            timed: VecDeque::new(),
        });
        Ok(StreamId(self.streams.len() as u32 - 1))
    }

    // One CUDA event per call, kept until the backend is dropped: an EventId stays valid for
    // the backend's life (Groute's routed segments carry their `ready` event and are waited
    // on later), and re-recording a pooled event would make an old id wait for a later point
    // of its stream, which can close a cycle between streams. Reuse needs the trait to say
    // when an id is released.
    fn record_event(&mut self, stream: StreamId) -> Result<EventId, BackendError> {
        let _span = host_profile::span("record_event");
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out pointer; stream and event share the current context.
        unsafe {
            ck(
                sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32),
                || "creating an event".into(),
            )?;
            ck(sys::cuEventRecord(e, raw), || "recording an event".into())?;
        }
        self.events.push((device, e));
        Ok(EventId(self.events.len() as u32 - 1))
    }

    fn wait_event(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError> {
        let _span = host_profile::span("wait_event");
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        let &(_, e) = self
            .events
            .get(event.0 as usize)
            .ok_or_else(|| BackendError::Usage(format!("event {} was never recorded", event.0)))?;
        self.make_current(device)?;
        // SAFETY: both handles are alive; cross-device waits are allowed.
        ck(unsafe { sys::cuStreamWaitEvent(raw, e, 0) }, || "waiting for an event".into())
    }

    fn launch_with(
        &mut self,
        stream: StreamId,
        launch: Launch,
        config: LaunchConfig,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        let _span = host_profile::span("launch_with");
        let def = self.registry.get(launch.kernel)?.clone();
        if config.sm_limit == Some(0) || config.block_threads == Some(0) || config.blocks == Some(0)
        {
            return Err(BackendError::Usage(format!(
                "kernel `{}`: a launch of 0 SMs, 0 threads per block or 0 blocks runs nothing; \
                 leave the field unset for the default",
                launch.kernel
            )));
        }
        let cuda_name = def.cuda_name.ok_or_else(|| BackendError::Kernel {
            kernel: launch.kernel.to_string(),
            message: "has no CUDA implementation (cuda_name is None); run it on --backend sim"
                .into(),
        })?;
        let (device, raw, counters, huge) = {
            let s = self.stream(stream)?;
            (s.device, s.raw, s.counters, s.huge)
        };
        let mut buffers = Vec::with_capacity(launch.buffers.len());
        for (i, &id) in launch.buffers.iter().enumerate() {
            let b = self.buffer(id)?;
            if b.mapped.is_none() && b.device != device {
                if !def.remote_args.contains(&i) {
                    return Err(BackendError::Kernel {
                        kernel: launch.kernel.to_string(),
                        message: format!(
                            "buffer argument {i} lives on gpu{}, the kernel runs on gpu{device}",
                            b.device
                        ),
                    });
                }
                if !self.peer_access(DeviceId(device), DeviceId(b.device)) {
                    return Err(BackendError::Kernel {
                        kernel: launch.kernel.to_string(),
                        message: format!(
                            "buffer argument {i} lives on gpu{}, which gpu{device} has no peer \
                             path to: device-initiated operations need one on CUDA (the \
                             simulator stages them through the host); use GPUs with peer access",
                            b.device
                        ),
                    });
                }
            }
            buffers.push((b.ptr, b.len as u64));
        }
        let launch_id = self.launches.len() as u64;
        self.launches.push(launch.kernel);
        let mut args = kernels::pack_args(&launch, &buffers, counters, self.error_dev)?;
        args.launch = launch_id;
        args.huge = huge;
        args.huge_cap = HUGE_CAP as u64;
        let main = self.function(device, cuda_name).ok_or_else(|| BackendError::Kernel {
            kernel: launch.kernel.to_string(),
            message: format!("kernels/*.cu defines no `{cuda_name}`"),
        })?;
        let pre = self.function(device, &format!("{cuda_name}__pre"));
        let plan = self.function(device, &format!("{cuda_name}__plan"));
        let post = self.function(device, &format!("{cuda_name}__post"));
        let sm_count = self.devices[device as usize].info.sm_count;
        let full_grid = kernels::grid_blocks(u64::MAX, sm_count);
        let mut items = launch.work_items;
        if kernels::sweeps_vertices(cuda_name) {
            items = items.max(buffers.get(3).map_or(0, |b| b.1));
        }
        if kernels::full_grid(cuda_name) {
            items = u64::MAX;
        }
        // The groute fused worker (cooperative, by name) or a launch configured persistent.
        let persistent = kernels::is_persistent(cuda_name);
        let block = config.block_threads.unwrap_or(kernels::BLOCK);
        let shared = config.shared_bytes;
        let sms = config.sm_limit.map_or(sm_count, |l| l.min(sm_count));
        let occupancy = |main| -> Result<u32, BackendError> {
            let mut per_sm: std::ffi::c_int = 0;
            // SAFETY: a function of this device's module, a valid out pointer.
            ck(
                unsafe {
                    sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        &mut per_sm,
                        main,
                        block as std::ffi::c_int,
                        shared as usize,
                    )
                },
                || format!("occupancy of `{cuda_name}` ({block} threads) on gpu{device}"),
            )?;
            Ok(per_sm.max(0) as u32)
        };
        // Only a launch that sets its block can pass the kernel's bound (the default block
        // is within every kernel's), so launches without one skip the driver query.
        let mut max_threads: std::ffi::c_int = std::ffi::c_int::MAX;
        if config.block_threads.is_some() {
            // SAFETY: a function of this device's module, a valid out pointer.
            ck(
                unsafe {
                    sys::cuFuncGetAttribute(
                        &mut max_threads,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                        main,
                    )
                },
                || format!("the block limit of `{cuda_name}` on gpu{device}"),
            )?;
        }
        if block > max_threads.max(0) as u32 {
            return Err(BackendError::Kernel {
                kernel: launch.kernel.to_string(),
                message: format!(
                    "takes blocks of at most {max_threads} threads on CUDA (its launch bound, \
                     which keeps its registers from spilling); this launch asked for {block}: \
                     choose {max_threads} or fewer"
                ),
            });
        }
        let blocks = if persistent {
            let cap = std::env::var("SWITCHYARD_FUSED_BLOCKS_PER_SM")
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(kernels::FUSED_BLOCKS_PER_SM);
            kernels::fused_blocks(occupancy(main)?, cap, sm_count)
        } else if config.persistent {
            // Resident on its SMs: what the occupancy query allows for this block and
            // shared memory, or fewer if the launch asks.
            let per_sm = occupancy(main)?;
            if per_sm == 0 {
                return Err(BackendError::Kernel {
                    kernel: launch.kernel.to_string(),
                    message: format!(
                        "no block of {block} threads and {shared} bytes of shared memory fits \
                         on an SM of gpu{device}; use smaller blocks or less shared memory"
                    ),
                });
            }
            // Logical GPUs sharing this physical GPU each get their share of it, so that all
            // of their persistent grids are resident at once (a grid that waited for another
            // to end would never start: both run until the host stops them).
            let sharers = self.devices[device as usize].sharers;
            let resident = kernels::persistent_blocks(per_sm, sms, sharers);
            config.blocks.map_or(resident, |b| b.min(resident))
        } else if let Some(b) = config.blocks {
            b
        } else {
            let grid = kernels::grid_blocks(items, sm_count);
            grid.min(sms * kernels::BLOCKS_PER_SM)
        };
        let snapshots =
            if token.is_some() { Some(self.take_pinned(2 * COUNTERS * 8)?) } else { None };
        // A fault drill (`SWITCHYARD_CUDA_FAULT`): once, after this kernel, on its stream.
        let inject = match &self.injection {
            Some(i) if !self.injected && i.kernel == launch.kernel => {
                let (function, spin_ns) = (i.cuda_function(), i.spin_ns());
                let f = self.function(device, function).ok_or_else(|| {
                    BackendError::Device(format!("kernels/common.cuh defines no `{function}`"))
                })?;
                self.injected = true;
                let mut a = args;
                a.scalar[0] = spin_ns;
                Some((f, a))
            }
            _ => None,
        };
        self.make_current(device)?;
        let mut params: [*mut c_void; 1] = [(&mut args as *mut SyArgs).cast()];
        // SAFETY: functions of this context's module, an argument block matching the
        // kernels' `SyArgs`, pointers of live allocations; snapshot copies target a live
        // pinned block kept until the kernel's event completes.
        unsafe {
            if let Some(s) = &snapshots {
                ck(sys::cuMemcpyDtoHAsync_v2(s.ptr.cast(), counters, COUNTERS * 8, raw), || {
                    "snapshotting counters".into()
                })?;
            }
            // Kernel busy time: a timing event before the first pass.
            let timer = self.kernel_timer_start(device, raw)?;
            if let Some(pre) = pre {
                ck(
                    sys::cuLaunchKernel(
                        pre,
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        raw,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    || format!("launching `{cuda_name}__pre` on gpu{device}"),
                )?;
            }
            if let Some(plan) = plan {
                ck(
                    sys::cuLaunchKernel(
                        plan,
                        full_grid,
                        1,
                        1,
                        kernels::BLOCK,
                        1,
                        1,
                        0,
                        raw,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    || format!("launching `{cuda_name}__plan` on gpu{device}"),
                )?;
            }
            let r = if persistent {
                // Every block resident at once (the kernel has grid-wide barriers).
                sys::cuLaunchCooperativeKernel(
                    main,
                    blocks,
                    1,
                    1,
                    block,
                    1,
                    1,
                    shared,
                    raw,
                    params.as_mut_ptr(),
                )
            } else {
                sys::cuLaunchKernel(
                    main,
                    blocks,
                    1,
                    1,
                    block,
                    1,
                    1,
                    shared,
                    raw,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            ck(r, || format!("launching `{cuda_name}` ({blocks} blocks) on gpu{device}"))?;
            if let Some(post) = post {
                ck(
                    sys::cuLaunchKernel(
                        post,
                        full_grid,
                        1,
                        1,
                        kernels::BLOCK,
                        1,
                        1,
                        0,
                        raw,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    || format!("launching `{cuda_name}__post` on gpu{device}"),
                )?;
            }
            if let Some((f, mut a)) = inject {
                let mut p: [*mut c_void; 1] = [(&mut a as *mut SyArgs).cast()];
                ck(
                    sys::cuLaunchKernel(
                        f,
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        raw,
                        p.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    || format!("launching the fault drill after `{cuda_name}` on gpu{device}"),
                )?;
            }
            // Kernel busy time: a timing event after the last pass.
            self.kernel_timer_end(stream, launch.kernel, timer)?;
            if let Some(s) = &snapshots {
                ck(
                    sys::cuMemcpyDtoHAsync_v2(
                        s.ptr.add(COUNTERS * 8).cast(),
                        counters,
                        COUNTERS * 8,
                        raw,
                    ),
                    || "snapshotting counters".into(),
                )?;
            }
        }
        self.devices[device as usize].kernels += 1;
        if let Some(snapshots) = snapshots {
            self.push_pending(stream, token, PendingKind::Kernel { snapshots })?;
        }
        Ok(())
    }

    fn copy(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        dst: BufferSlice,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        let _span = host_profile::span("copy");
        // One side may be mapped host memory (pinned, `cuMemHostAlloc`): a DMA between it
        // and device memory, with no staging copy.
        let (sb, db) = (self.buffer(src.buffer)?, self.buffer(dst.buffer)?);
        if sb.mapped.is_some() && db.mapped.is_some() {
            return Err(BackendError::Usage(format!(
                "copy from buffer {} to buffer {}: both are mapped host memory; a copy needs \
                 device memory on at least one side (use read_mapped and write_mapped)",
                src.buffer.0, dst.buffer.0
            )));
        }
        if sb.elem != db.elem
            || src.len != dst.len
            || src.offset + src.len > sb.len
            || dst.offset + dst.len > db.len
        {
            return Err(BackendError::Usage(format!(
                "copy of {} elements from buffer {} ({:?}, {}) at {} to buffer {} ({:?}, {}) at \
                 {}: types differ or a range is out of bounds",
                src.len,
                src.buffer.0,
                sb.elem,
                sb.len,
                src.offset,
                dst.buffer.0,
                db.elem,
                db.len,
                dst.offset
            )));
        }
        let size = sb.elem.size_bytes();
        let bytes = src.len as u64 * size;
        let (sdev, ddev) = (sb.device, db.device);
        let (sp, dp) = (sb.ptr + src.offset as u64 * size, db.ptr + dst.offset as u64 * size);
        // Host addresses of mapped sides, at the copied range.
        let at = |host: Option<*mut u8>, offset: usize| {
            // SAFETY: the range was checked against the block above, so the offset is inside.
            host.map(|h| unsafe { h.add(offset * size as usize) })
        };
        let (src_host, dst_host) = (at(sb.mapped, src.offset), at(db.mapped, dst.offset));
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        // Logical GPUs of one physical GPU share its context: a device-to-device copy.
        let local = self.same_physical(sdev, ddev);
        if bytes > 0 {
            // SAFETY: ranges checked above; contexts alive; the stream's context is current;
            // a mapped block is pinned and stays allocated until `free`, which drains every
            // GPU first.
            unsafe {
                if let Some(h) = src_host {
                    ck(sys::cuMemcpyHtoDAsync_v2(dp, h.cast(), bytes as usize, raw), || {
                        format!("copying {bytes} bytes from mapped host memory to gpu{ddev}")
                    })?;
                } else if let Some(h) = dst_host {
                    ck(sys::cuMemcpyDtoHAsync_v2(h.cast(), sp, bytes as usize, raw), || {
                        format!("copying {bytes} bytes from gpu{sdev} to mapped host memory")
                    })?;
                } else if local {
                    ck(sys::cuMemcpyDtoDAsync_v2(dp, sp, bytes as usize, raw), || {
                        format!("copying {bytes} bytes from gpu{sdev} to gpu{ddev}")
                    })?;
                } else {
                    let (sc, dc) =
                        (self.devices[sdev as usize].ctx, self.devices[ddev as usize].ctx);
                    ck(sys::cuMemcpyPeerAsync(dp, dc, sp, sc, bytes as usize, raw), || {
                        format!("copying {bytes} bytes from gpu{sdev} to gpu{ddev}")
                    })?;
                }
            }
            // Link statistics are per GPU pair: a mapped side is the host, not GPU 0.
            if sdev != ddev && src_host.is_none() && dst_host.is_none() {
                *self.links.entry((sdev, ddev)).or_default() += bytes;
            }
        }
        if token.is_some() {
            self.push_pending(stream, token, PendingKind::Copy { bytes })?;
        }
        Ok(())
    }

    fn write_from_host(
        &mut self,
        stream: StreamId,
        dst: BufferId,
        offset: usize,
        data: HostData,
        token: Option<Token>,
    ) -> Result<(), BackendError> {
        let _span = host_profile::span("write_from_host");
        let b = self.stream_buffer(dst)?;
        if b.elem != data.elem() || offset + data.len() > b.len {
            return Err(BackendError::Usage(format!(
                "host write of {} {:?} elements at {offset} into buffer {} ({:?}, {})",
                data.len(),
                data.elem(),
                dst.0,
                b.elem,
                b.len
            )));
        }
        let bytes = data.size_bytes() as usize;
        let dp = b.ptr + offset as u64 * b.elem.size_bytes();
        let block = self.take_pinned(bytes)?;
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        // SAFETY: the block holds at least `bytes`; the destination range was checked; the
        // block stays out of the pool until the write's event completes.
        unsafe {
            std::ptr::copy_nonoverlapping(host_ptr(&data), block.ptr, bytes);
            if bytes > 0 {
                ck(sys::cuMemcpyHtoDAsync_v2(dp, block.ptr.cast(), bytes, raw), || {
                    format!("writing {bytes} bytes to gpu{device}")
                })?;
            }
        }
        self.push_pending(stream, token, PendingKind::Write { block, bytes: bytes as u64 })
    }

    fn read_to_host(
        &mut self,
        stream: StreamId,
        src: BufferSlice,
        token: Token,
    ) -> Result<(), BackendError> {
        let _span = host_profile::span("read_to_host");
        let b = self.stream_buffer(src.buffer)?;
        if src.offset + src.len > b.len {
            return Err(BackendError::Usage(format!(
                "host read of elements {}..{} from buffer {} of {}",
                src.offset,
                src.offset + src.len,
                src.buffer.0,
                b.len
            )));
        }
        let elem = b.elem;
        let bytes = src.len * elem.size_bytes() as usize;
        let sp = b.ptr + src.offset as u64 * elem.size_bytes();
        let block = self.take_pinned(bytes)?;
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        if bytes > 0 {
            // SAFETY: the block holds at least `bytes`; the source range was checked.
            ck(unsafe { sys::cuMemcpyDtoHAsync_v2(block.ptr.cast(), sp, bytes, raw) }, || {
                format!("reading {bytes} bytes from gpu{device}")
            })?;
        }
        self.push_pending(stream, Some(token), PendingKind::Read { block, elem, len: src.len })
    }

    fn host_callback(&mut self, stream: StreamId, token: Token) -> Result<(), BackendError> {
        self.push_pending(stream, Some(token), PendingKind::Callback)
    }

    fn next_completion(&mut self) -> Result<Option<Completion>, BackendError> {
        let _span = host_profile::span("next_completion");
        let mut last_progress = Instant::now();
        let mut spins = 0u32;
        loop {
            // The host's own work of one pass (queries, timings, retiring a completion),
            // apart from the spinning and sleeping between passes: a pass that finds a
            // finished operation is its host cost (the simulator's `poll_issue_ns`); one
            // that finds none is time the host waits anyway.
            let mut pass = host_profile::span("next_completion.found");
            let polls_before = self.polls;
            self.check_kernel_error()?;
            self.poll_kernel_timings()?;
            // The earliest-submitted finished head among the streams.
            let mut best: Option<(u64, usize)> = None;
            let mut outstanding = 0usize;
            for (s, strm) in self.streams.iter().enumerate() {
                outstanding += strm.pending.len();
                let Some(front) = strm.pending.front() else { continue };
                self.polls += 1;
                // SAFETY: the event was recorded on a live stream.
                let r = unsafe { sys::cuEventQuery(front.event) };
                if r == sys::CUresult::CUDA_ERROR_NOT_READY {
                    continue;
                }
                ck(r, || format!("an operation on gpu{} failed", strm.device))?;
                if best.is_none_or(|(seq, _)| front.seq < seq) {
                    best = Some((front.seq, s));
                }
            }
            let queried = self.polls - polls_before;
            match next_source(best.map(|(_, s)| s), !self.ready.is_empty(), outstanding) {
                NextSource::Stream(s) => {
                    host_profile::count("next_completion.found_queries", queried);
                    let p = self.streams[s].pending.pop_front().expect("front exists");
                    let device = self.streams[s].device as usize;
                    self.devices[device].free_events.push(p.event);
                    self.check_kernel_error()?;
                    if let Some(c) = self.finish(p)? {
                        return Ok(Some(c));
                    }
                    last_progress = Instant::now();
                    continue;
                }
                NextSource::Ready => {
                    host_profile::count("next_completion.found_queries", queried);
                    return Ok(self.ready.pop_front());
                }
                NextSource::Nothing => return Ok(None),
                NextSource::Wait => pass.rename("next_completion.empty"),
            }
            drop(pass);
            if last_progress.elapsed() > self.watchdog {
                return Err(BackendError::Limit(format!(
                    "watchdog: no GPU operation finished in {} s with {outstanding} outstanding; \
                     a kernel may hang or the work is longer than the watchdog (set \
                     SWITCHYARD_CUDA_WATCHDOG_S to allow more); waiting: {}",
                    self.watchdog.as_secs(),
                    self.fault_report()
                )));
            }
            spins += 1;
            if spins > 2000 {
                std::thread::sleep(Duration::from_micros(20));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn kernel_busy_ps(&self) -> Vec<u64> {
        (0..self.devices.len() as u32).map(|g| self.busy_ps(g)).collect()
    }

    fn stats(&self) -> BackendStats {
        let devices = (0..self.devices.len() as u32)
            .map(|g| {
                let c = self.device_counters(g);
                let d = &self.devices[g as usize];
                DeviceStats {
                    kernel_busy_ps: self.busy_ps(g),
                    kernels: d.kernels,
                    edges: c[1],
                    memory_peak_bytes: d.peak,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .map(|(&(a, b), &bytes)| LinkStats {
                name: format!("gpu{a}->gpu{b}"),
                bytes,
                busy_ps: 0,
            })
            .collect();
        BackendStats { devices, links, events: self.polls }
    }
}

impl CudaBackend {
    /// Waits until every stream is idle, at most `limit`; false when one is still busy
    /// then. A stream whose query fails (a faulted context) counts as idle: nothing more
    /// will run on it.
    fn streams_idle_within(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        for s in &self.streams {
            let ctx = self.devices[s.device as usize].ctx;
            loop {
                // SAFETY: a live stream of a live context, made current first.
                let r = unsafe {
                    sys::cuCtxSetCurrent(ctx);
                    sys::cuStreamQuery(s.raw)
                };
                if r != sys::CUresult::CUDA_ERROR_NOT_READY {
                    break;
                }
                if Instant::now() >= deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        true
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        host_profile::report();
        // A kernel that never ends (a persistent kernel a watchdog gave up on, which did not
        // heed STOP) must not keep the process from exiting: wait at most the watchdog, then
        // leave everything to the driver, which ends the kernels and frees the memory when
        // the process exits. Releasing handles a running kernel uses is not allowed.
        if !self.streams_idle_within(self.watchdog) {
            eprintln!(
                "switchyard: GPU work was still running {} s after the run ended (a kernel \
                 that never ends); its resources are left to the driver, which releases them \
                 at exit",
                self.watchdog.as_secs()
            );
            return;
        }
        // Best effort: wait for the GPUs, then release what was created.
        // SAFETY: every handle below was created by this backend and is released once.
        unsafe {
            for d in &self.devices {
                sys::cuCtxSetCurrent(d.ctx);
                sys::cuCtxSynchronize();
            }
            for s in &self.streams {
                sys::cuCtxSetCurrent(self.devices[s.device as usize].ctx);
                for p in &s.pending {
                    sys::cuEventDestroy_v2(p.event);
                }
                for t in &s.timed {
                    sys::cuEventDestroy_v2(t.start);
                    sys::cuEventDestroy_v2(t.end);
                }
                sys::cuStreamDestroy_v2(s.raw);
                sys::cuMemFree_v2(s.counters);
                sys::cuMemFree_v2(s.huge);
            }
            for &(device, e) in &self.events {
                sys::cuCtxSetCurrent(self.devices[device as usize].ctx);
                sys::cuEventDestroy_v2(e);
            }
            for b in self.buffers.iter().flatten() {
                if let Some(host) = b.mapped {
                    sys::cuMemFreeHost(host.cast());
                } else if b.ptr != 0 {
                    sys::cuCtxSetCurrent(self.devices[b.device as usize].ctx);
                    sys::cuMemFree_v2(b.ptr);
                }
            }
            for d in &self.devices {
                sys::cuCtxSetCurrent(d.ctx);
                for &e in d.free_events.iter().chain(&d.timing_events) {
                    sys::cuEventDestroy_v2(e);
                }
                // Logical siblings share the module and the reference event of the owner.
                if d.owner {
                    if !d.reference.is_null() {
                        sys::cuEventDestroy_v2(d.reference);
                    }
                    sys::cuModuleUnload(d.module);
                }
            }
            for p in &self.pinned_free {
                sys::cuMemFreeHost(p.ptr.cast());
            }
            for s in &self.streams {
                for p in &s.pending {
                    match &p.kind {
                        PendingKind::Kernel { snapshots: b }
                        | PendingKind::Read { block: b, .. }
                        | PendingKind::Write { block: b, .. } => {
                            sys::cuMemFreeHost(b.ptr.cast());
                        }
                        _ => {}
                    }
                }
            }
            if !self.error_host.is_null() {
                sys::cuMemFreeHost(self.error_host.cast());
            }
            for d in self.devices.iter().filter(|d| d.owner) {
                let mut dev = 0;
                if sys::cuDeviceGet(&mut dev, d.ordinal) == sys::CUresult::CUDA_SUCCESS {
                    sys::cuDevicePrimaryCtxRelease_v2(dev);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CudaBackend, CudaOptions};
    use crate::backend::{
        Backend, BackendError, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
        KernelContext, KernelDef, KernelRegistry, Launch, StreamPriority, Token,
    };

    fn no_sim(_: &mut KernelContext<'_>) -> Result<(), BackendError> {
        Ok(())
    }

    #[test]
    fn the_pinned_pool_frees_its_oldest_blocks_beyond_its_bound() {
        use super::pinned_to_release;
        let none: Vec<usize> = Vec::new();
        assert_eq!(pinned_to_release(&[], 5, 100), none);
        assert_eq!(pinned_to_release(&[40, 30, 30], 5, 100), none, "at the bound: keep all");
        assert_eq!(pinned_to_release(&[40, 30, 31], 5, 100), vec![0], "the oldest goes first");
        assert_eq!(pinned_to_release(&[10, 10, 90], 5, 100), vec![0]);
        assert_eq!(pinned_to_release(&[4, 50, 4, 60], 5, 100), vec![1], "small blocks stay");
        assert_eq!(pinned_to_release(&[4, 200], 5, 100), vec![1], "a block above the bound");
    }

    #[test]
    fn a_finished_gpu_operation_is_delivered_before_ready_host_work() {
        use super::{NextSource, next_source};
        // Atos's host loop always has a poll ready on CUDA: a finished kernel must still
        // come out (the discrete-launch hang was this starvation).
        assert_eq!(next_source(Some(3), true, 5), NextSource::Stream(3));
        assert_eq!(next_source(Some(0), false, 1), NextSource::Stream(0));
        // Host work when nothing has finished, whether or not GPU work is outstanding.
        assert_eq!(next_source(None, true, 2), NextSource::Ready);
        assert_eq!(next_source(None, true, 0), NextSource::Ready);
        assert_eq!(next_source(None, false, 0), NextSource::Nothing);
        assert_eq!(next_source(None, false, 4), NextSource::Wait);
    }

    /// A mapped word that a GPU stores while the host reads it comes back whole: old or
    /// new, never the low bytes of one and the high bytes of the other (Groute's host read
    /// its workers' `u64` counters byte by byte, and a torn read can exceed both values).
    /// Another thread stands in for the GPU, storing whole words.
    #[test]
    fn mapped_words_are_read_and_written_whole() {
        use super::{read_mapped_elements, write_mapped_elements};
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let mut block = vec![0u64; 4];
        // SAFETY: a live, aligned block of four u64.
        unsafe { write_mapped_elements(block.as_mut_ptr().cast(), 1, &HostData::U64(vec![7, 9])) };
        let mut out = HostData::zeros(ElemType::U64, 4);
        // SAFETY: as above.
        unsafe { read_mapped_elements(block.as_ptr().cast(), &mut out) };
        assert_eq!(out, HostData::U64(vec![0, 7, 9, 0]));

        let word = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let torn = std::thread::scope(|s| {
            s.spawn(|| {
                let mut v = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    v = !v;
                    word.store(v, Ordering::Relaxed);
                }
            });
            let mut torn = 0u32;
            for _ in 0..200_000 {
                let mut out = HostData::zeros(ElemType::U64, 1);
                // SAFETY: one aligned u64, stored whole by the other thread.
                unsafe { read_mapped_elements(word.as_ptr().cast_const().cast(), &mut out) };
                if !matches!(out, HostData::U64(ref v) if v[0] == 0 || v[0] == u64::MAX) {
                    torn += 1;
                }
            }
            stop.store(true, Ordering::Relaxed);
            torn
        });
        assert_eq!(torn, 0, "{torn} of 200000 reads mixed two stores");
    }

    /// `groute_cc_init` (`parent[v] = v`) with its one buffer allowed on another GPU.
    fn iota_registry() -> KernelRegistry {
        let mut r = KernelRegistry::new();
        r.register(KernelDef {
            name: "test_iota",
            contract: "buffers: parent (u32, may be remote); parent[v] = v",
            sim: no_sim,
            cuda_name: Some("groute_cc_init"),
            remote_args: &[0],
        });
        r
    }

    /// Drains the completions; returns the host reads by token.
    fn drain(b: &mut CudaBackend) -> Vec<(Token, HostData)> {
        let mut reads = Vec::new();
        while let Some(c) = b.next_completion().expect("completion") {
            if let CompletionKind::HostRead(d) = c.kind {
                reads.push((c.token, d));
            }
        }
        reads
    }

    #[test]
    fn a_write_right_after_an_allocation_is_never_zeroed_by_the_allocations_memset() {
        if super::gpus_present() == 0 {
            eprintln!("skipped: no CUDA GPU on this machine");
            return;
        }
        // A fresh buffer is zeroed; a host write issued next on one of the backend's
        // (non-blocking) streams must land after that zeroing, never before it. Large
        // buffers make the memset long enough for the race to show (it did on H100s).
        let mut b = CudaBackend::open(1, iota_registry()).expect("open");
        let stream = b.create_stream(DeviceId(0), StreamPriority::Normal).expect("stream");
        let len = 64 << 20; // 256 MiB of u32
        let pattern: Vec<u32> = (1..=4096).collect();
        for round in 0..8u64 {
            let buffer = b.alloc(DeviceId(0), ElemType::U32, len, "race probe").expect("alloc");
            b.write_from_host(stream, buffer, len - 4096, HostData::U32(pattern.clone()), None)
                .expect("write");
            b.write_from_host(stream, buffer, 0, HostData::U32(pattern.clone()), None)
                .expect("write");
            b.read_to_host(stream, BufferSlice::new(buffer, 0, 4096), Token(2 * round))
                .expect("read");
            b.read_to_host(
                stream,
                BufferSlice::new(buffer, len - 4096, 4096),
                Token(2 * round + 1),
            )
            .expect("read");
            for (token, data) in drain(&mut b) {
                assert_eq!(data, HostData::U32(pattern.clone()), "round {round}, read {token:?}");
            }
            b.free(buffer).expect("free");
        }
    }

    #[test]
    fn logical_gpus_share_a_physical_gpu_with_their_own_memory_and_busy_time() {
        let present = super::gpus_present();
        if present == 0 {
            eprintln!("skipped: no CUDA GPU on this machine");
            return;
        }
        // Without the option, more GPUs than present stays an error that names the option.
        let err = CudaBackend::open(present + 1, iota_registry()).expect_err("too many GPUs");
        assert!(err.to_string().contains("logical GPUs"), "{err}");

        let options = CudaOptions { kernel_spans: true, ..CudaOptions::logical(4) };
        let mut b = CudaBackend::open_with(options, iota_registry()).expect("open 4 logical");
        let p = b.physical_count();
        assert_eq!(b.device_count(), 4);
        assert_eq!(p, present.min(4));
        for l in 0..4 {
            assert_eq!(b.physical_of(DeviceId(l)), Some(l % p));
            eprintln!(
                "gpu{l}: {} ({} bytes), path to gpu{} {} B/s",
                b.device_info(DeviceId(l)).name,
                b.device_info(DeviceId(l)).memory_bytes,
                (l + 1) % 4,
                b.path_bandwidth_bytes_per_s(DeviceId(l), DeviceId((l + 1) % 4))
            );
        }
        if p == 4 {
            eprintln!("4 physical GPUs: nothing is shared; the shared checks are skipped");
            assert!(!b.is_shared());
            return;
        }
        assert!(b.is_shared());
        // Logical GPU p shares physical GPU 0 with logical GPU 0.
        let (g0, gp) = (DeviceId(0), DeviceId(p));
        let name = b.device_info(gp).name;
        assert!(name.contains(&format!("(logical {p} of 4 on GPU 0)")), "{name}");
        assert!(b.peer_access(g0, gp) && b.peer_access(gp, g0));
        let d2d = b.path_bandwidth_bytes_per_s(g0, gp);
        assert!(d2d > 0, "measured device-to-device bandwidth");
        if p == 1 {
            assert_eq!(b.path_bandwidth_bytes_per_s(DeviceId(2), DeviceId(3)), d2d, "reused");
        }
        let share = b.device_info(g0).memory_bytes;
        assert_eq!(b.device_info(gp).memory_bytes, share);

        // Memory: each logical GPU its own accounting.
        let mib = 1usize << 20;
        let mut bufs = Vec::new();
        for l in 0..4u32 {
            let len = (l as usize + 1) * mib / 4;
            bufs.push(b.alloc(DeviceId(l), ElemType::U32, len, "per-gpu").expect("alloc"));
            assert_eq!(b.memory_in_use_bytes(DeviceId(l)), (l as u64 + 1) << 20);
        }
        for l in 0..4u32 {
            assert_eq!(b.memory_in_use_bytes(DeviceId(l)), (l as u64 + 1) << 20, "gpu{l}");
        }

        // A copy between co-located logical GPUs, and a kernel on one writing the other's
        // buffer (a remote store is a plain store).
        let n = mib / 4;
        let s0 = b.create_stream(g0, StreamPriority::Normal).expect("stream");
        let sp = b.create_stream(gp, StreamPriority::High).expect("stream");
        let data: Vec<u32> = (0..n as u32).map(|v| v.wrapping_mul(2654435761)).collect();
        b.write_from_host(s0, bufs[0], 0, HostData::U32(data.clone()), None).expect("write");
        let dst = bufs[p as usize];
        b.copy(s0, BufferSlice::new(bufs[0], 0, n), BufferSlice::new(dst, 0, n), Some(Token(1)))
            .expect("copy");
        b.read_to_host(s0, BufferSlice::new(dst, 0, n), Token(2)).expect("read");
        let reads = drain(&mut b);
        assert_eq!(reads, vec![(Token(2), HostData::U32(data))], "copied between logical GPUs");
        let launch = |buffer| Launch {
            kernel: "test_iota",
            buffers: vec![buffer],
            scalars: vec![],
            work_items: n as u64,
        };
        b.launch(sp, launch(bufs[0]), Some(Token(3))).expect("remote launch");
        b.launch(s0, launch(dst), None).expect("launch without a token");
        b.read_to_host(sp, BufferSlice::new(bufs[0], 0, n), Token(4)).expect("read");
        b.host_callback(s0, Token(5)).expect("callback");
        let reads = drain(&mut b);
        let iota = HostData::U32((0..n as u32).collect());
        assert_eq!(reads, vec![(Token(4), iota)], "a kernel on gpu{p} filled gpu0's buffer");
        let stats = b.stats();
        for (g, d) in stats.devices.iter().enumerate() {
            eprintln!("gpu{g}: {d:?}");
        }
        assert!(stats.devices[p as usize].kernel_busy_ps > 0, "busy time measured");
        assert!(stats.devices[0].kernel_busy_ps > 0, "busy time without a token measured");
        assert_eq!(stats.devices[p as usize].kernels, 1);
        assert!(stats.links.iter().any(|l| l.name == format!("gpu0->gpu{p}")));
        let spans = b.take_kernel_spans();
        eprintln!("spans: {spans:?}");
        assert_eq!(spans.len(), 2);
        assert!(spans.iter().all(|s| s.kernel == "test_iota" && s.end_ps > s.start_ps));

        // Out of memory: above the share, with the sizes.
        let too_big = (share / 4) as usize + 1;
        let err = b.alloc(DeviceId(3), ElemType::U32, too_big, "too big").expect_err("over");
        let text = err.to_string();
        eprintln!("{text}");
        assert!(matches!(err, BackendError::SharedOutOfMemory { device: 3, .. }), "{text}");
        assert!(!text.contains("  ") && !text.contains('\n'), "one plain line: {text}");
        assert!(text.contains(&share.to_string()) && text.contains("`too big`"), "{text}");
        let plan = b.check_memory_plan(&[share + 1, 0, 0, 0]).expect_err("over the share");
        eprintln!("{plan}");
        assert!(plan.to_string().contains(&(share + 1).to_string()));
        b.check_memory_plan(&[1 << 20; 4]).expect("a small plan fits");

        for buf in bufs {
            b.free(buf).expect("free");
        }
        for l in 0..4 {
            assert_eq!(b.memory_in_use_bytes(DeviceId(l)), 0);
        }
        assert_eq!(b.stats().devices[3].memory_peak_bytes, 4 << 20);

        // Asking for shares that do not fit together: refused at open, with the sizes.
        let greedy =
            CudaOptions { memory_per_gpu_bytes: Some(share * 2), ..CudaOptions::logical(4) };
        drop(b);
        let err = CudaBackend::open_with(greedy, iota_registry()).expect_err("shares too big");
        eprintln!("{err}");
        assert!(matches!(err, BackendError::SharedOutOfMemory { .. }), "{err}");
    }

    #[test]
    fn the_kernels_compile_with_nvrtc_for_hopper_and_ampere() {
        // SAFETY: probing for the library has no preconditions.
        if !unsafe { super::nvrtc::is_culib_present() } {
            eprintln!("skipped: no NVRTC (libnvrtc.so.13) on this machine");
            return;
        }
        for arch in [(9, 0), (8, 0)] {
            match super::compile_with_nvrtc(arch) {
                Ok(cubin) => assert!(cubin.len() > 1000, "sm_{}{}: tiny image", arch.0, arch.1),
                Err(e) => panic!("{e}"),
            }
        }
    }
}
