//! Atos (seeds 003 and 004): a task-parallel runtime whose workers pop vertices from
//! per-GPU queues, process them without barriers (speculating where the algorithm allows),
//! and push new tasks into their own queue or, with one-sided operations from inside the
//! kernel, into the owner GPU's receive queue.
//!
//! What runs where:
//! - each GPU holds its vertices (renumbered into one contiguous range per GPU,
//!   [`graph::AtosGraph`]), a local queue, a low-priority queue (the distributed priority
//!   queue of seed 003: `threshold`, `threshold_delta`), a receive queue, and one
//!   aggregation queue per other GPU;
//! - the worker kernel ([`kernels`]) runs workers of thread, warp or CTA width (CTA workers
//!   fetch `FETCH_SIZE` items), either **persistent** (one launch until stopped) or
//!   **discrete** (one launch per batch of queued items, relaunched by the host);
//! - remote updates are remote atomics (BFS: atomic min, push on improvement) or pairs
//!   pushed into the owner's receive queue, directly or through the **aggregator** kernel
//!   running beside the workers on a slice of the GPU's SMs (`BATCH_SIZE` bytes, `WAIT_TIME`
//!   polls; eager mode is a small `WAIT_TIME`). Over InfiniBand all traffic must go through
//!   the aggregator (no remote atomic min there);
//! - the host detects termination from words in mapped host memory, which kernels write
//!   with plain stores ([`termination`]), and raises a stop flag; it never blocks on the OS (it polls with
//!   [`Backend::host_work`], charged in virtual time on the simulator).
//!
//! Architecture invariant: the runtime names no algorithm. An algorithm gives an
//! [`AtosApp`] (initial state, the worker kernel's name, the ideal work its extra work is
//! measured against) and registers an [`kernels::AtosOperator`] with
//! [`kernels::register_app`].

pub mod graph;
#[cfg(test)]
mod growth_tests;
pub mod kernels;
pub mod termination;
pub mod tiles;
pub mod watchdog;

use crate::backend::queue::{self, COUNTER_WORDS};
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    Launch, LaunchConfig, RemotePath, Scalar, StreamId, StreamPriority, Token,
};
use crate::graph::Csr;
use crate::runtime::{Outcome, RuntimeError, WorkReport, wait_all};
use graph::AtosGraph;
use kernels::{Slot, ctl, state};
use serde::Serialize;
use std::collections::BTreeMap;
use termination::{Detector, Wave};

/// Worker width (seed 004 sec. 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerWidth {
    /// One thread per worker.
    Thread,
    /// A warp (32 threads) per worker.
    Warp,
    /// A CTA per worker (its threads: `cta_threads`), fetching `fetch_size` items.
    Cta,
}

/// Kernel strategy (seed 004 sec. 3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelStrategy {
    /// One resident launch that sees work arrive until the host stops it.
    Persistent,
    /// One launch per batch of queued items, relaunched by the host.
    Discrete,
}

/// How many worker CTAs an SM holds, where the application has a worker compiled for two
/// (BFS: `atos_bfs_worker_wide`, held to 64 registers). One CTA an SM runs a level's few
/// tasks with no spills (road graphs); two keep twice the threads in flight for wide
/// frontiers. One H100, c63 (reports/atos.md, "One CTA an SM or two"): R-MAT 22 BFS 8.8-9.0
/// ms with two against 14.1-14.2 with one, cnr-2000 0.45-0.51 against 0.56-0.58;
/// luxembourg 3.1-3.3 against 2.8-2.9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CtasPerSm {
    /// Two when the graph has a vertex of out-degree [`CtasPerSm::WIDE_MIN_DEGREE`] or more
    /// (scale-free and web graphs), else one (road graphs and meshes).
    Auto,
    /// One CTA an SM.
    #[value(name = "1")]
    One,
    /// Two CTAs an SM (applications without a wide worker run their one worker).
    #[value(name = "2")]
    Two,
}

impl CtasPerSm {
    /// The largest out-degree from which `Auto` takes two CTAs an SM: road graphs and
    /// meshes stay far below it (luxembourg_osm 6, the road grid 4, delaunay_n16 17), R-MAT
    /// and web graphs far above (cnr-2000 18,280).
    pub const WIDE_MIN_DEGREE: u64 = 64;

    /// 1 or 2 for a run on `graph`.
    pub fn resolve(self, graph: &Csr) -> u32 {
        match self {
            CtasPerSm::One => 1,
            CtasPerSm::Two => 2,
            CtasPerSm::Auto => {
                let wide = graph.offsets().windows(2).any(|w| w[1] - w[0] >= Self::WIDE_MIN_DEGREE);
                if wide { 2 } else { 1 }
            }
        }
    }
}

/// How remote updates travel (seed 003 sec. III-A3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "mode")]
pub enum Comm {
    /// Direct on one GPU (nothing is remote); through the aggregator with seed 003's eager
    /// setting ([`Comm::EAGER`]) on several, over NVLink as over InfiniBand (which needs
    /// it, as multi-node Atos does). On 2 and 4 real H100s inside a node, BFS on R-MAT 22
    /// took 10.6 and 8.6 ms aggregated against 27.7 and 38.9 ms direct, and the road grid at
    /// 4 GPUs about 61 ms against 345; luxembourg_osm is 7-9 % slower aggregated
    /// (reports/gpu_bench.md, "Four real GPUs"). The run resolves it before it starts and
    /// reports what it chose.
    Auto,
    /// Straight from the worker (peer stores and atomics over NVLink).
    Direct,
    /// Through the aggregator.
    Aggregated {
        /// `BATCH_SIZE`: a batch goes when it holds this many bytes.
        batch_bytes: u64,
        /// `WAIT_TIME`: a partial batch goes after this many polls.
        wait_polls: u32,
    },
}

impl Comm {
    /// What `Auto` becomes on several GPUs: BATCH_SIZE 1 MiB, WAIT_TIME 4 (seed 003's eager
    /// mode for BFS).
    pub const EAGER: Comm = Comm::Aggregated { batch_bytes: 1 << 20, wait_polls: 4 };

    /// The CLI's name of the mode (`--atos-comm`).
    pub fn name(&self) -> &'static str {
        match self {
            Comm::Auto => "auto",
            Comm::Direct => "direct",
            Comm::Aggregated { .. } => "aggregated",
        }
    }
}

/// Atos options.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AtosOptions {
    /// Worker width.
    pub worker: WorkerWidth,
    /// Threads of a CTA worker (seed 003 runs 512).
    pub cta_threads: u32,
    /// Items a CTA worker fetches (`FETCH_SIZE`); 1 for thread and warp workers.
    pub fetch_size: u32,
    /// Persistent or discrete kernels.
    pub kernel: KernelStrategy,
    /// The distributed priority queue: `(threshold, threshold_delta)`; `None`: plain queues.
    pub priority: Option<(u32, u32)>,
    /// Direct or aggregated communication.
    pub comm: Comm,
    /// SMs the aggregator runs on, beside the workers.
    pub aggregator_sms: u32,
    /// Capacity of every queue, in items; `None`: sized from the graph.
    pub queue_capacity: Option<u64>,
    /// Vertices a sweep reserves (`Check_Size`, algorithms that sweep).
    pub check_size: u32,
    /// Host time between two reads of the termination counters, in nanoseconds.
    pub poll_ns: u64,
    /// Relabel vertex ids at random (seeded) before the run (seed 004 sec. 6.3: it cuts
    /// colouring's conflicts).
    pub permute_ids: bool,
    /// Worker CTAs an SM (the worker kernel the run launches).
    pub ctas_per_sm: CtasPerSm,
    /// On-chip tiles instead of the workers ([`tiles`]: BFS, each GPU the tiles of its part).
    pub tiles: tiles::TileMode,
    /// Vertices a tile holds at least (more where the graph needs them to fit the SMs).
    pub tile_vertices: u32,
}

impl Default for AtosOptions {
    fn default() -> Self {
        AtosOptions {
            worker: WorkerWidth::Cta,
            cta_threads: 512,
            fetch_size: 32,
            kernel: KernelStrategy::Persistent,
            priority: None,
            comm: Comm::Auto,
            aggregator_sms: 1,
            queue_capacity: None,
            check_size: 32,
            poll_ns: 2_000,
            permute_ids: false,
            ctas_per_sm: CtasPerSm::Auto,
            tiles: tiles::TileMode::Auto,
            tile_vertices: 1024,
        }
    }
}

/// Largest CTA a worker can be.
pub const MAX_CTA_THREADS: u32 = 1024;

impl AtosOptions {
    /// Threads per worker.
    pub fn width(&self) -> u32 {
        match self.worker {
            WorkerWidth::Thread => 1,
            WorkerWidth::Warp => 32,
            WorkerWidth::Cta => self.cta_threads,
        }
    }

    /// Items per worker.
    pub fn fetch(&self) -> u32 {
        match self.worker {
            WorkerWidth::Cta => self.fetch_size,
            _ => 1,
        }
    }

    /// Threads per block of the worker launch.
    pub fn block_threads(&self) -> u32 {
        match self.worker {
            WorkerWidth::Cta => self.cta_threads,
            _ => 256,
        }
    }

    /// What tables and legends call this configuration: `+persistent-cta32` (a CTA worker
    /// with its fetch size), `+discrete-warp`, then `+prio<delta>`, `+agg<WAIT_TIME>`,
    /// `+permuted`.
    pub fn label_suffix(&self) -> String {
        let kernel = match self.kernel {
            KernelStrategy::Persistent => "persistent",
            KernelStrategy::Discrete => "discrete",
        };
        let worker = match self.worker {
            WorkerWidth::Thread => "thread".to_string(),
            WorkerWidth::Warp => "warp".to_string(),
            WorkerWidth::Cta => format!("cta{}", self.fetch_size),
        };
        if self.tiles == tiles::TileMode::On {
            return "+tiles".to_string();
        }
        let mut s = format!("+{kernel}-{worker}");
        if let Some((_, delta)) = self.priority {
            s += &format!("+prio{delta}");
        }
        if let Comm::Aggregated { wait_polls, .. } = self.comm {
            s += &format!("+agg{wait_polls}");
        }
        if self.permute_ids {
            s += "+permuted";
        }
        s
    }

    /// The `switchyard run` flags that give these options (defaults left out).
    pub fn cli_args(&self) -> Vec<(&'static str, String)> {
        let d = AtosOptions::default();
        let mut a = Vec::new();
        let name = |w: WorkerWidth| match w {
            WorkerWidth::Thread => "thread",
            WorkerWidth::Warp => "warp",
            WorkerWidth::Cta => "cta",
        };
        a.push(("--atos-worker", name(self.worker).to_string()));
        if self.cta_threads != d.cta_threads {
            a.push(("--atos-cta-threads", self.cta_threads.to_string()));
        }
        if self.worker == WorkerWidth::Cta {
            a.push(("--atos-fetch-size", self.fetch_size.to_string()));
        }
        let kernel = match self.kernel {
            KernelStrategy::Persistent => "persistent",
            KernelStrategy::Discrete => "discrete",
        };
        a.push(("--atos-kernel", kernel.to_string()));
        if let Some((threshold, delta)) = self.priority {
            a.push(("--atos-threshold", threshold.to_string()));
            a.push(("--atos-threshold-delta", delta.to_string()));
        }
        if self.comm != d.comm {
            a.push(("--atos-comm", self.comm.name().to_string()));
        }
        if let Comm::Aggregated { batch_bytes, wait_polls } = self.comm {
            a.push(("--atos-batch-bytes", batch_bytes.to_string()));
            a.push(("--atos-wait-time", wait_polls.to_string()));
        }
        if self.aggregator_sms != d.aggregator_sms {
            a.push(("--atos-aggregator-sms", self.aggregator_sms.to_string()));
        }
        if let Some(c) = self.queue_capacity {
            a.push(("--atos-queue-capacity", c.to_string()));
        }
        if self.check_size != d.check_size {
            a.push(("--atos-check-size", self.check_size.to_string()));
        }
        if self.poll_ns != d.poll_ns {
            a.push(("--atos-poll-ns", self.poll_ns.to_string()));
        }
        if self.permute_ids {
            a.push(("--atos-permute", String::new()));
        }
        if self.ctas_per_sm != d.ctas_per_sm {
            let n = if self.ctas_per_sm == CtasPerSm::One { "1" } else { "2" };
            a.push(("--atos-ctas-per-sm", n.to_string()));
        }
        if self.tiles != d.tiles {
            let m = if self.tiles == tiles::TileMode::On { "on" } else { "off" };
            a.push(("--atos-tiles", m.to_string()));
        }
        if self.tile_vertices != d.tile_vertices {
            a.push(("--atos-tile-vertices", self.tile_vertices.to_string()));
        }
        a
    }

    /// These options with [`Comm::Auto`] resolved for a run on `gpus` GPUs.
    pub fn resolved(&self, gpus: u32) -> AtosOptions {
        if self.comm != Comm::Auto {
            return *self;
        }
        let comm = if gpus > 1 { Comm::EAGER } else { Comm::Direct };
        AtosOptions { comm, ..*self }
    }

    /// Checks the options, naming what to choose instead.
    pub fn check(&self) -> Result<(), RuntimeError> {
        let bad = |m: String| Err(RuntimeError::Options(m));
        if self.tile_vertices == 0 {
            return bad("--atos-tile-vertices 0: a tile holds at least one vertex; choose e.g. \
                        1024 (the default)"
                .into());
        }
        if self.worker == WorkerWidth::Cta
            && (self.cta_threads == 0
                || !self.cta_threads.is_multiple_of(32)
                || self.cta_threads > MAX_CTA_THREADS)
        {
            return bad(format!(
                "--atos-cta-threads {}: a CTA worker is a whole number of warps, 32 to \
                 {MAX_CTA_THREADS} threads; choose e.g. 512 (seed 003's)",
                self.cta_threads
            ));
        }
        if self.fetch_size == 0 {
            return bad("--atos-fetch-size 0: a worker must fetch at least one item; choose \
                        1 or more (CTA workers, e.g. 32)"
                .into());
        }
        if self.worker != WorkerWidth::Cta && self.fetch_size != 1 {
            return bad(format!(
                "--atos-fetch-size {} applies to CTA workers only (thread and warp workers \
                 fetch one item); use --atos-worker cta or drop --atos-fetch-size",
                self.fetch_size
            ));
        }
        if self.fetch_size > self.cta_threads.max(1) * 4 {
            return bad(format!(
                "--atos-fetch-size {} is more than 4 items per thread of a {}-thread CTA; \
                 choose at most {}",
                self.fetch_size,
                self.cta_threads,
                self.cta_threads * 4
            ));
        }
        if let Some((_, 0)) = self.priority {
            return bad("--atos-threshold-delta 0 would never raise the priority threshold; \
                        choose a positive step (e.g. 1 for BFS levels)"
                .into());
        }
        if let Comm::Aggregated { batch_bytes, wait_polls } = self.comm {
            if wait_polls == 0 {
                return bad("--atos-wait-time 0 with aggregation on would send every poll's \
                            partial batch: choose a WAIT_TIME of at least 1 (4 is seed 003's \
                            eager mode for BFS, 32 its PageRank setting) or turn aggregation \
                            off with --atos-comm direct"
                    .into());
            }
            if batch_bytes < 8 {
                return bad(format!(
                    "--atos-batch-bytes {batch_bytes} holds no (vertex, value) pair; choose \
                     at least 8 (seed 003 uses 1 MiB: 1048576)"
                ));
            }
            if self.aggregator_sms == 0 {
                return bad("--atos-aggregator-sms 0: the aggregator needs an SM; choose 1".into());
            }
        }
        if self.queue_capacity == Some(0) {
            return bad("--atos-queue-capacity 0 holds nothing; choose a capacity of at least \
                        the vertex count of a GPU, or leave it unset to size it from the graph"
                .into());
        }
        if self.poll_ns == 0 {
            return bad("--atos-poll-ns 0: the host needs time between two reads of the \
                        termination counters; choose e.g. 2000"
                .into());
        }
        Ok(())
    }
}

/// What an algorithm gives Atos.
pub trait AtosApp {
    /// Label for messages.
    fn label(&self) -> &'static str;
    /// Its worker kernel.
    fn kernels(&self) -> kernels::AtosKernels;
    /// Whether its tasks read other GPUs' values (colouring): needs peer paths.
    fn reads_peers(&self) -> bool {
        false
    }
    /// Initial state of GPU `g`'s vertices (new ids `ag.bases[g]..ag.bases[g + 1]`,
    /// original ids through `ag.old_of`): values, second values, flags, and the items its
    /// local queue starts with.
    fn init(&self, ag: &AtosGraph, g: u32) -> AppInit;
    /// Queue capacity (items per queue of GPU `g`) when the options do not set one.
    fn queue_capacity(&self, ag: &AtosGraph, g: u32) -> u64 {
        4 * u64::from(ag.local_vertices(g)) + 2 * ag.remote_arcs(g) + 1024
    }
    /// The tolerance and damping scalars the worker takes.
    fn epsilon_damping(&self) -> (f64, f64) {
        (0.0, 0.0)
    }
    /// The ideal number of visits on `graph` (the extra-work denominator) and what it is.
    fn ideal_visits(&self, graph: &Csr) -> (u64, &'static str);
    /// Its on-chip tile kernel ([`tiles`]), if it has one: labels that drop by one an arc.
    fn tile_kernel(&self) -> Option<&'static str> {
        None
    }
    /// Its on-chip tile kernel for several GPUs ([`tiles::register_peer`]), if it has one.
    fn peer_tile_kernel(&self) -> Option<&'static str> {
        None
    }
}

/// One GPU's initial state.
#[derive(Clone, Debug, Default)]
pub struct AppInit {
    /// `u32` per vertex.
    pub value: Vec<u32>,
    /// `f32` per vertex, if the algorithm has a second value.
    pub aux: Option<Vec<f32>>,
    /// `u32` flags per vertex, if the algorithm uses them.
    pub flags: Option<Vec<u32>>,
    /// Items of the local queue at the start.
    pub items: Vec<u32>,
}

/// What one GPU did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AtosGpuReport {
    /// Visits.
    pub visits: u64,
    /// Tasks started.
    pub tasks: u64,
    /// Arcs processed.
    pub edges: u64,
    /// Items pushed into its own queues.
    pub pushes: u64,
    /// Records sent to other GPUs.
    pub sent: u64,
    /// Pairs popped from its receive queue.
    pub received: u64,
    /// Priority threshold raises.
    pub threshold_raises: u64,
    /// Worker steps (simulator rounds; CUDA: 0).
    pub steps: u64,
    /// Worker kernel launches.
    pub launches: u64,
    /// Aggregator batches.
    pub batches: u64,
    /// Vertices swept.
    pub swept: u64,
    /// Items its local queue started with.
    pub initial: u64,
    /// Items popped from its local and low-priority queues (`initial + pushes` when no
    /// item was lost: the runtime checks it).
    pub popped: u64,
    /// Finished workers that waited a step for room in a full aggregation queue.
    pub blocked: u64,
    /// Aggregator polls that held a batch back until its target's receive queue consumed
    /// earlier ones (flow control).
    pub aggregator_waits: u64,
    /// Remote min-updates the remote filter kept home (see [`kernels::AtosOperator::REMOTE_MIN`]).
    pub filtered: u64,
}

/// Atos's own account of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AtosReport {
    /// The options it ran with.
    pub options: AtosOptions,
    /// Visits over all GPUs.
    pub visits: u64,
    /// The ideal visits (see [`AtosApp::ideal_visits`]).
    pub ideal_visits: u64,
    /// What the ideal is.
    pub ideal_is: &'static str,
    /// Extra work: visits over the ideal.
    pub extra_work: f64,
    /// Termination waves the host read.
    pub termination_waves: u64,
    /// Queue capacity per GPU, items.
    pub queue_capacity: Vec<u64>,
    /// Times the run started again with 4 times larger queues after an overflow at the
    /// capacity sized from the graph (its time counts from the first start).
    pub queue_growths: u32,
    /// Per GPU.
    pub per_gpu: Vec<AtosGpuReport>,
    /// What the on-chip tiles did, where the run took them ([`tiles`]).
    pub tiles: Option<tiles::TileReport>,
    /// Why `--atos-tiles auto` left this run on the workers (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles_declined: Option<String>,
}

/// Errors specific to Atos runs.
fn options_error(m: String) -> RuntimeError {
    RuntimeError::Options(m)
}

/// Buffers of one GPU.
struct GpuBuffers {
    all: Vec<BufferId>,
    recv: (BufferId, BufferId),
    value: BufferId,
    aux: BufferId,
    state: BufferId,
    queue_counters: [BufferId; 4],
}

/// Times a run whose default-sized queues overflowed starts again with queues 4 times as
/// large (an overflow stops a run with every refused item counted, so nothing is lost and
/// the restart computes the same result).
pub const MAX_QUEUE_GROWTHS: u32 = 2;

/// What one attempt of a run ended with.
enum Attempt {
    /// The outcome and when the attempt started.
    Done(Box<Outcome>, u64),
    /// A queue overflowed: the message, the largest capacity, when the attempt started.
    Overflowed(String, u64, u64),
}

/// Runs `app` with Atos on `backend`: `owner[v]` is the GPU of vertex `v`. Queues sized from
/// the graph grow on overflow (up to [`MAX_QUEUE_GROWTHS`] restarts, 4 times larger each,
/// while they fit the GPUs' memory); a capacity set in the options is kept, and an overflow
/// at it is an error with the capacity to choose. The time reported counts from the first
/// attempt's start.
pub fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    gpus: u32,
    app: &dyn AtosApp,
    options: &AtosOptions,
    seed: u64,
) -> Result<Outcome, RuntimeError> {
    options.check()?;
    let declined = match tiles::plan(backend, graph, owner, gpus, app, options)? {
        Ok(layout) => return tiles::run(backend, graph, app, options, &layout),
        Err(why) => (options.tiles == tiles::TileMode::Auto).then_some(why),
    };
    let mut scale = 1u64;
    let mut first_start = None;
    for growths in 0..=MAX_QUEUE_GROWTHS {
        match run_once(backend, graph, owner, gpus, app, options, seed, scale)? {
            Attempt::Done(mut out, start_ps) => {
                if let Some(first) = first_start {
                    out.compute_time_ps += start_ps.saturating_sub(first);
                }
                if let Some(a) = out.atos.as_mut() {
                    a.queue_growths = growths;
                    a.tiles_declined = declined.clone();
                }
                return Ok(*out);
            }
            Attempt::Overflowed(message, capacity, start_ps) => {
                first_start.get_or_insert(start_ps);
                let grown = capacity.saturating_mul(4);
                let fits = (0..gpus).all(|g| {
                    queue_bytes(grown, options, gpus as usize)
                        <= backend.device_info(DeviceId(g)).memory_bytes / 2
                });
                if options.queue_capacity.is_some() || growths == MAX_QUEUE_GROWTHS || !fits {
                    let grew = if growths > 0 {
                        format!(" (after growing the queues {growths} times from their default)")
                    } else {
                        String::new()
                    };
                    return Err(options_error(format!("{message}{grew}")));
                }
                scale = scale.saturating_mul(4);
            }
        }
    }
    unreachable!("the loop returns at its last growth")
}

/// Bytes of one GPU's queues at `capacity` items per queue (see `upload_gpu`).
fn queue_bytes(capacity: u64, options: &AtosOptions, k: usize) -> u64 {
    let c = capacity.max(1);
    let low = if options.priority.is_some() { c } else { 1 };
    let recv = if k > 1 { c.saturating_mul(2) } else { 2 };
    let agg = if k > 1 && matches!(options.comm, Comm::Aggregated { .. }) {
        c.saturating_mul(2)
    } else {
        2
    };
    c.saturating_add(low)
        .saturating_add(recv)
        .saturating_add(agg.saturating_mul(k as u64))
        .saturating_mul(ElemType::U32.size_bytes())
}

/// One attempt of [`run`], with default-sized queues `scale` times their size.
#[allow(clippy::too_many_arguments)]
fn run_once<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    owner: &[u32],
    gpus: u32,
    app: &dyn AtosApp,
    options: &AtosOptions,
    seed: u64,
    scale: u64,
) -> Result<Attempt, RuntimeError> {
    options.check()?;
    let k = gpus as usize;
    if k == 0 || k > kernels::MAX_GPUS || backend.device_count() < gpus {
        return Err(options_error(format!(
            "Atos runs on 1 to {} GPUs and this machine has {}; choose --gpus within both",
            kernels::MAX_GPUS,
            backend.device_count()
        )));
    }
    let options = &options.resolved(gpus);
    check_paths(backend, gpus, app, options)?;
    // Before the clock starts: on a road graph the degree scan reads every offset (0.15 ms
    // on luxembourg, c64/c65, when it ran inside the timed part).
    let kernel = app.kernels().worker_for(options.ctas_per_sm.resolve(graph));
    // Seed 004 sec. 6.3: a random permutation of the vertex ids (the order vertices are
    // numbered, queued and tie-broken in), composed into the renumbering so that the
    // application and the results still speak original ids.
    let ag = if options.permute_ids {
        let (permuted, perm) = crate::graph::relabel::relabel_random(graph, seed ^ 0xA705);
        let mut o = vec![0u32; owner.len()];
        for (v, &pv) in perm.iter().enumerate() {
            o[pv as usize] = owner[v];
        }
        AtosGraph::build(&permuted, &o, gpus).composed_with(&perm)
    } else {
        AtosGraph::build(graph, owner, gpus)
    };
    let aggregated = matches!(options.comm, Comm::Aggregated { .. }) && k > 1;
    let ctl_block = backend.alloc_mapped(ElemType::U64, ctl::len(k), "atos control block")?;
    let mut streams = Vec::with_capacity(k);
    let mut agg_streams = Vec::with_capacity(k);
    for g in 0..gpus {
        streams.push(backend.create_stream(DeviceId(g), StreamPriority::Normal)?);
        agg_streams.push(backend.create_stream(DeviceId(g), StreamPriority::High)?);
    }
    // The progress watchdog's streams (CUDA): reads of the queue counters and state blocks
    // beside the running workers. Without aggregation the aggregator's streams are idle and
    // carry them, so the runs validated on a GPU keep their streams as they were; with it
    // each GPU gets one more stream.
    let watch_limit = backend.progress_watchdog_ps();
    let mut monitor_streams = Vec::new();
    if watch_limit.is_some() {
        if aggregated {
            for g in 0..gpus {
                monitor_streams.push(backend.create_stream(DeviceId(g), StreamPriority::High)?);
            }
        } else {
            monitor_streams.clone_from(&agg_streams);
        }
    }
    let mut bufs = Vec::with_capacity(k);
    let mut capacities = Vec::with_capacity(k);
    let mut initial = Vec::with_capacity(k);
    let mut uploads = Vec::new();
    let mut token = 0u64;
    let mut next_token = || {
        token += 1;
        Token(token)
    };
    for g in 0..gpus {
        let init = app.init(&ag, g);
        initial.push(init.items.len() as u64);
        let cap = options
            .queue_capacity
            .unwrap_or_else(|| app.queue_capacity(&ag, g).saturating_mul(scale));
        capacities.push(cap);
        let (b, ups) =
            upload_gpu(backend, &ag, g, init, cap, options, streams[g as usize], &mut next_token)?;
        uploads.extend(ups);
        bufs.push(b);
    }
    let mut all_args: Vec<Vec<BufferId>> = Vec::with_capacity(k);
    for g in 0..k {
        let mut args = bufs[g].all.clone();
        args.push(ctl_block);
        for b in &bufs {
            args.extend([b.value, b.recv.0, b.recv.1]);
        }
        all_args.push(args);
    }
    wait_all(backend, &uploads)?;
    let start_ps = backend.now_ps();
    let (epsilon, damping) = app.epsilon_damping();
    let experiments = kernels::scalar::experiment_bits();
    let worker_scalars = |g: u32, persistent: bool| {
        vec![
            Scalar::U32(g),
            Scalar::U32(gpus),
            Scalar::U32(options.width()),
            Scalar::U32(options.fetch()),
            Scalar::U32(u32::from(persistent)),
            Scalar::U32(u32::from(aggregated)),
            Scalar::U32(options.priority.map_or(0, |p| p.1)),
            Scalar::U32(options.check_size),
            Scalar::F64(epsilon),
            Scalar::F64(damping),
            Scalar::U32(experiments),
        ]
    };
    // With aggregation, each GPU's workers leave `aggregator_sms` of ITS SMs to the
    // aggregator. GPUs may differ (Groute's K40c has 15 SMs, its M4000 13): a limit taken
    // from gpu0 alone left no SM for gpu1's aggregator, which then never started while the
    // workers waited for it (swarm atos seed 193).
    let mut worker_configs = Vec::with_capacity(k);
    for g in 0..gpus {
        let mut config = LaunchConfig::persistent(options.block_threads(), None);
        if aggregated {
            let sms = backend.device_info(DeviceId(g)).sm_count;
            if options.aggregator_sms >= sms {
                return Err(options_error(format!(
                    "--atos-aggregator-sms {} leaves no SM of gpu{g}'s {sms} for the workers; \
                     choose fewer",
                    options.aggregator_sms
                )));
            }
            config.sm_limit = Some(sms - options.aggregator_sms);
        }
        worker_configs.push(config);
    }
    let launch_worker = |backend: &mut B, g: u32, persistent: bool, token: Token| {
        let l = Launch {
            kernel,
            buffers: all_args[g as usize].clone(),
            scalars: worker_scalars(g, persistent),
            work_items: u64::from(ag.local_vertices(g)),
        };
        backend.launch_with(streams[g as usize], l, worker_configs[g as usize], Some(token))
    };
    let mut launches = vec![0u64; k];
    // Tokens: 1..=k workers (discrete relaunches reuse them), k+1..=2k aggregators, then
    // polls.
    let worker_token = |g: u32| Token(1_000_000 + u64::from(g));
    let agg_token = |g: u32| Token(2_000_000 + u64::from(g));
    let persistent = options.kernel == KernelStrategy::Persistent;
    let mut running = vec![false; k];
    for g in 0..gpus {
        launch_worker(backend, g, persistent, worker_token(g))?;
        running[g as usize] = true;
        launches[g as usize] += 1;
        if aggregated {
            let (batch_bytes, wait_polls) = match options.comm {
                Comm::Aggregated { batch_bytes, wait_polls } => (batch_bytes, wait_polls),
                Comm::Auto | Comm::Direct => (0, 0),
            };
            let l = Launch {
                kernel: kernels::AGGREGATOR,
                buffers: all_args[g as usize].clone(),
                scalars: vec![
                    Scalar::U32(g),
                    Scalar::U32(gpus),
                    Scalar::U64(batch_bytes),
                    Scalar::U32(wait_polls),
                    Scalar::U32(network_targets(backend, g, gpus)),
                ],
                work_items: 1,
            };
            let config = LaunchConfig::persistent(256, Some(options.aggregator_sms));
            backend.launch_with(agg_streams[g as usize], l, config, Some(agg_token(g)))?;
        }
    }
    let mut detector = Detector::default();
    let mut aggregators_running = if aggregated { k } else { 0 };
    let mut recv_at_launch: Vec<u64> = vec![0; k];
    let poll_ps = options.poll_ns * 1000;
    let poll_token = Token(3_000_000);
    let mut stopped = false;
    let mut poll_pending = false;
    let mut overflow: Option<u32> = None;
    let mut agg_running = vec![aggregated; k];
    let mut watch = watch_limit.map(|limit| watchdog::ProgressWatch::new(limit, start_ps));
    let mut monitor = Monitor::new(k, watch_limit, start_ps);
    loop {
        let workers_left = running.iter().filter(|&&r| r).count();
        if stopped && workers_left == 0 && aggregators_running == 0 && monitor.pending.is_empty() {
            break;
        }
        if !poll_pending && !stopped {
            backend.host_work(poll_ps, poll_token)?;
            poll_pending = true;
        }
        let Some(c) = backend.next_completion()? else {
            return Err(BackendError::Deadlock(
                "Atos: nothing outstanding but the run has not terminated".into(),
            )
            .into());
        };
        let ctl_now = mapped_u64(backend, ctl_block)?;
        let gpu_of = |t: Token, base: u64| (t.0 - base) as u32;
        match c.token {
            t if t == poll_token => {
                poll_pending = false;
                if stopped {
                    continue;
                }
                if let Some(g) =
                    (0..gpus).find(|&g| ctl_now[g as usize * ctl::STRIDE + ctl::OVERFLOW] != 0)
                {
                    overflow = Some(g);
                    stop(backend, ctl_block, k)?;
                    stopped = true;
                    continue;
                }
                // Discrete: relaunch GPUs that got work since their last launch.
                if !persistent {
                    for g in 0..gpus {
                        let i = g as usize;
                        let recv = ctl::sent_to(&ctl_now, k, i);
                        if !running[i] && recv != recv_at_launch[i] {
                            recv_at_launch[i] = recv;
                            launch_worker(backend, g, false, worker_token(g))?;
                            running[i] = true;
                            launches[i] += 1;
                        }
                    }
                }
                let all_quiet = persistent || running.iter().all(|&r| !r);
                if detector.observe(Wave::read(&ctl_now, k)) && all_quiet {
                    stop(backend, ctl_block, k)?;
                    stopped = true;
                    continue;
                }
                if let Some(w) = watch.as_mut() {
                    let now = backend.now_ps();
                    monitor.sample(backend, &monitor_streams, &bufs, now)?;
                    if let Some(still) = w.observe(&monitor.signature(&ctl_now), now) {
                        // Kernels that still poll STOP end, so the process can exit.
                        stop(backend, ctl_block, k)?;
                        let gpus_seen: Vec<watchdog::GpuSnapshot> = (0..k)
                            .map(|g| watchdog::GpuSnapshot {
                                ctl: ctl_now[g * ctl::STRIDE..(g + 1) * ctl::STRIDE].to_vec(),
                                queues: monitor.queues[g].clone(),
                                state: monitor.state[g].clone(),
                                worker_in_flight: running[g],
                                aggregator_in_flight: agg_running[g],
                            })
                            .collect();
                        return Err(BackendError::Limit(watchdog::stall_message(
                            kernel, persistent, aggregated, still, &gpus_seen,
                        ))
                        .into());
                    }
                }
            }
            t if t.0 >= 2_000_000 && t.0 < 2_000_000 + k as u64 => {
                aggregators_running -= 1;
                let g = gpu_of(t, 2_000_000);
                agg_running[g as usize] = false;
                if !stopped {
                    stop(backend, ctl_block, k)?;
                    return Err(ended_early(kernels::AGGREGATOR, g));
                }
            }
            t if monitor.pending.contains_key(&t) => {
                monitor.landed(t, c.kind)?;
            }
            t if t.0 >= 1_000_000 && t.0 < 1_000_000 + k as u64 => {
                let g = gpu_of(t, 1_000_000);
                let i = g as usize;
                running[i] = false;
                if persistent && !stopped {
                    stop(backend, ctl_block, k)?;
                    return Err(ended_early(kernel, g));
                }
                if !persistent && !stopped {
                    let idle = ctl_now[i * ctl::STRIDE + ctl::IDLE] == 1;
                    if ctl_now[i * ctl::STRIDE + ctl::OVERFLOW] != 0 {
                        overflow = Some(g);
                        stop(backend, ctl_block, k)?;
                        stopped = true;
                    } else if !idle {
                        recv_at_launch[i] = ctl::sent_to(&ctl_now, k, i);
                        launch_worker(backend, g, false, worker_token(g))?;
                        running[i] = true;
                        launches[i] += 1;
                    } else {
                        recv_at_launch[i] = ctl_now[i * ctl::STRIDE + ctl::SEEN];
                    }
                }
            }
            other => {
                return Err(
                    BackendError::Usage(format!("Atos: unexpected completion {other:?}")).into()
                );
            }
        }
    }
    // Drain the last poll.
    if poll_pending {
        while let Some(c) = backend.next_completion()? {
            if c.token == poll_token {
                break;
            }
        }
    }
    let end_ps = backend.now_ps();
    // Read the results back.
    let mut reads = Vec::new();
    let mut what: BTreeMap<Token, (usize, u8)> = BTreeMap::new();
    for g in 0..k {
        let n = ag.local_vertices(g as u32) as usize;
        let s = streams[g];
        let t = next_token();
        backend.read_to_host(s, BufferSlice::new(bufs[g].value, 0, n), t)?;
        what.insert(t, (g, 0));
        reads.push(t);
        let t = next_token();
        let (_, aux_len) = backend.buffer_shape(bufs[g].aux)?;
        backend.read_to_host(s, BufferSlice::new(bufs[g].aux, 0, aux_len), t)?;
        what.insert(t, (g, 1));
        reads.push(t);
        let t = next_token();
        backend.read_to_host(s, BufferSlice::new(bufs[g].state, 0, state::LEN), t)?;
        what.insert(t, (g, 2));
        reads.push(t);
        for (qi, &q) in bufs[g].queue_counters.iter().enumerate() {
            let t = next_token();
            let (_, len) = backend.buffer_shape(q)?;
            backend.read_to_host(s, BufferSlice::new(q, 0, len), t)?;
            what.insert(t, (g, 3 + qi as u8));
            reads.push(t);
        }
    }
    let mut values = vec![Vec::new(); k];
    let mut auxes = vec![Vec::new(); k];
    let mut states = vec![Vec::new(); k];
    let mut refused: Vec<(usize, &'static str, u64)> = Vec::new();
    for c in wait_all(backend, &reads)? {
        let (g, kind) = what[&c.token];
        let CompletionKind::HostRead(data) = c.kind else {
            return Err(BackendError::Usage("Atos: a read returned no data".into()).into());
        };
        match (kind, data) {
            (0, HostData::U32(v)) => values[g] = v,
            (1, HostData::F32(v)) => auxes[g] = v,
            (2, HostData::U64(v)) => states[g] = v,
            (q @ 3..=6, HostData::U64(v)) => {
                let name = ["local", "low-priority", "receive", "aggregation"][(q - 3) as usize];
                let over: u64 = v.chunks(COUNTER_WORDS).map(queue::overflowed).sum();
                if over > 0 {
                    refused.push((g, name, over));
                }
            }
            _ => return Err(BackendError::Usage("Atos: a read of the wrong type".into()).into()),
        }
    }
    if overflow.is_some() || !refused.is_empty() {
        let detail: Vec<String> = refused
            .iter()
            .map(|(g, name, n)| format!("gpu{g}'s {name} queue refused {n} items"))
            .collect();
        let capacity = capacities.iter().max().copied().unwrap_or(0);
        return Ok(Attempt::Overflowed(
            format!(
                "Atos queue overflow ({}; capacity {capacity} items per queue): the run stopped \
                 with every refused item counted, nothing was dropped silently; rerun with a \
                 larger --atos-queue-capacity (e.g. {})",
                if detail.is_empty() {
                    "reported by the workers".into()
                } else {
                    detail.join(", ")
                },
                capacity.saturating_mul(4)
            ),
            capacity,
            start_ps,
        ));
    }
    let values = ag.gather(&values);
    let has_aux =
        auxes.iter().zip(0..k).all(|(a, g)| a.len() == ag.local_vertices(g as u32) as usize);
    let aux = has_aux.then(|| ag.gather(&auxes));
    let per_gpu: Vec<AtosGpuReport> = states
        .iter()
        .zip(&launches)
        .zip(&initial)
        .map(|((s, &launches), &initial)| AtosGpuReport {
            visits: s[state::VISITS],
            tasks: s[state::TASKS],
            edges: s[state::EDGES],
            pushes: s[state::PUSHES],
            sent: s[state::SENT],
            received: s[state::RECEIVED],
            threshold_raises: s[state::RAISES],
            steps: s[state::STEPS],
            launches,
            batches: s[state::BATCHES],
            swept: s[state::SWEPT],
            initial,
            popped: s[state::POPPED],
            blocked: s[state::BLOCKED],
            aggregator_waits: s[state::AGG_WAITS],
            filtered: s[state::FILTERED],
        })
        .collect();
    if let Some((g, r)) = per_gpu.iter().enumerate().find(|(_, r)| r.initial + r.pushes != r.popped)
    {
        return Err(BackendError::Kernel {
            kernel: kernel.into(),
            message: format!(
                "gpu{g} lost work: {} items started in its queues and {} were pushed, but {} \
                 were popped",
                r.initial, r.pushes, r.popped
            ),
        }
        .into());
    }
    let visits: u64 = per_gpu.iter().map(|g| g.visits).sum();
    let (ideal, ideal_is) = app.ideal_visits(graph);
    let report = AtosReport {
        options: *options,
        visits,
        ideal_visits: ideal,
        ideal_is,
        extra_work: visits as f64 / ideal.max(1) as f64,
        termination_waves: detector.waves,
        queue_capacity: capacities,
        queue_growths: 0,
        per_gpu,
        tiles: None,
        tiles_declined: None,
    };
    let sent: u64 = report.per_gpu.iter().map(|g| g.sent).sum();
    let edges: u64 = report.per_gpu.iter().map(|g| g.edges).sum();
    Ok(Attempt::Done(
        Box::new(Outcome {
            values,
            aux,
            compute_time_ps: end_ps - start_ps,
            work: WorkReport {
                edges_visited: edges,
                work_items: visits,
                messages: sent,
                bytes_sent: sent * 8,
                frontier_sizes: Vec::new(),
            },
            supersteps: 0,
            groute: None,
            gum: None,
            atos: Some(report),
        }),
        start_ps,
    ))
}

/// The aggregator's [`kernels::scalar::NETWORK_TARGETS`] for `gpu`: bit `h` set when GPU
/// `h` is reached over a network.
fn network_targets<B: Backend + ?Sized>(backend: &B, gpu: u32, gpus: u32) -> u32 {
    (0..gpus)
        .filter(|&h| {
            h != gpu && backend.remote_path(DeviceId(gpu), DeviceId(h)) == RemotePath::Network
        })
        .fold(0, |bits, h| bits | (1 << h))
}

/// Refuses pairs the options cannot reach: remote atomic mins need a peer path (not
/// InfiniBand: route through the aggregator), colouring's peer reads need peer paths.
fn check_paths<B: Backend + ?Sized>(
    backend: &B,
    gpus: u32,
    app: &dyn AtosApp,
    options: &AtosOptions,
) -> Result<(), RuntimeError> {
    for a in 0..gpus {
        for b in (0..gpus).filter(|&b| b != a) {
            let path = backend.remote_path(DeviceId(a), DeviceId(b));
            if path == RemotePath::Unreachable {
                return Err(options_error(format!(
                    "Atos: gpu{a} cannot reach gpu{b}'s memory from inside a kernel (no peer \
                     path); use GPUs with peer access or fewer GPUs"
                )));
            }
            if app.reads_peers() && matches!(path, RemotePath::Network | RemotePath::Staged) {
                return Err(options_error(format!(
                    "Atos {}: its tasks read other GPUs' values with peer loads, which gpu{a} \
                     cannot do from gpu{b} ({}); run it on GPUs with peer access to each other \
                     (one node, e.g. --topology dgx-station-v100x4) or on one GPU",
                    app.label(),
                    if path == RemotePath::Network {
                        "they talk over InfiniBand"
                    } else {
                        "no peer path: copies are staged through the host"
                    }
                )));
            }
            if path == RemotePath::Network && options.comm == Comm::Direct {
                return Err(options_error(format!(
                    "Atos: gpu{a} and gpu{b} talk over InfiniBand, where Atos sends everything \
                     through its aggregator (no remote atomic min there, seed 003 sec. \
                     III-A3b); choose --atos-comm aggregated or auto (e.g. --atos-batch-bytes \
                     1048576 --atos-wait-time 4 for BFS's eager mode)"
                )));
            }
        }
    }
    Ok(())
}

/// A persistent kernel that ended before the host raised STOP: its work would be left
/// undone (an aggregator's pairs never sent) and the run would never terminate.
fn ended_early(kernel: &str, g: u32) -> RuntimeError {
    BackendError::Kernel {
        kernel: kernel.into(),
        message: format!(
            "gpu{g}'s persistent `{kernel}` ended before the host raised STOP, so the work it \
             holds would never be done; the host raised STOP and gave up. A launch that \
             fails its shape check ends at once (its error word names the check): rerun to \
             see whether it repeats, try --atos-kernel discrete or --atos-comm direct, and \
             report the options"
        ),
    }
    .into()
}

/// First token of the progress watchdog's reads.
const MONITOR_TOKENS: u64 = 4_000_000;

/// State words that count work (the watchdog's progress signal; the aggregator's poll and
/// wait counts, which grow while it is stuck, are left out).
const PROGRESS_STATE: [usize; 9] = [
    state::VISITS,
    state::TASKS,
    state::EDGES,
    state::PUSHES,
    state::SENT,
    state::RECEIVED,
    state::RAISES,
    state::BATCHES,
    state::POPPED,
];

/// The progress watchdog's reads of every GPU's queue counters and state block, on streams
/// of their own beside the workers (only where the backend asks for a progress watch).
struct Monitor {
    /// Per GPU, the counter blocks of its queues (`watchdog::QUEUE_NAMES`) as last read.
    queues: Vec<Vec<Vec<u64>>>,
    /// Per GPU, its state block as last read.
    state: Vec<Vec<u64>>,
    /// Reads in flight: token -> (GPU, 0..=3 a queue, 4 the state block).
    pending: BTreeMap<Token, (usize, usize)>,
    next_ps: u64,
    every_ps: u64,
    serial: u64,
}

impl Monitor {
    /// The first reads come a sixteenth of the limit after `start_ps`, so a run shorter
    /// than that (every benchmark) issues none inside its timed part.
    fn new(k: usize, limit_ps: Option<u64>, start_ps: u64) -> Monitor {
        let every_ps = limit_ps.map_or(u64::MAX, |l| (l / 16).max(1));
        Monitor {
            queues: vec![vec![Vec::new(); 4]; k],
            state: vec![Vec::new(); k],
            pending: BTreeMap::new(),
            next_ps: start_ps.saturating_add(every_ps),
            every_ps,
            serial: 0,
        }
    }

    /// Reads every GPU's counters again when the last reads have landed and a sixteenth of
    /// the limit has passed since the last.
    fn sample<B: Backend + ?Sized>(
        &mut self,
        backend: &mut B,
        streams: &[StreamId],
        bufs: &[GpuBuffers],
        now_ps: u64,
    ) -> Result<(), RuntimeError> {
        if !self.pending.is_empty() || now_ps < self.next_ps || streams.len() < bufs.len() {
            return Ok(());
        }
        self.next_ps = now_ps.saturating_add(self.every_ps);
        for (g, b) in bufs.iter().enumerate() {
            for (i, buf) in b.queue_counters.iter().copied().chain([b.state]).enumerate() {
                let (_, len) = backend.buffer_shape(buf)?;
                self.serial += 1;
                let t = Token(MONITOR_TOKENS + self.serial);
                backend.read_to_host(streams[g], BufferSlice::new(buf, 0, len), t)?;
                self.pending.insert(t, (g, i));
            }
        }
        Ok(())
    }

    /// Stores a read that landed.
    fn landed(&mut self, token: Token, kind: CompletionKind) -> Result<(), RuntimeError> {
        let Some((g, i)) = self.pending.remove(&token) else {
            return Ok(());
        };
        let CompletionKind::HostRead(HostData::U64(v)) = kind else {
            return Err(
                BackendError::Usage("Atos: a counter read returned no u64 data".into()).into()
            );
        };
        if i < 4 {
            self.queues[g][i] = v;
        } else {
            self.state[g] = v;
        }
        Ok(())
    }

    /// What the watchdog compares: the control block, every queue counter, the state
    /// words that count work.
    fn signature(&self, ctl_now: &[u64]) -> Vec<u64> {
        let mut sig = ctl_now.to_vec();
        for (queues, st) in self.queues.iter().zip(&self.state) {
            for q in queues {
                sig.extend_from_slice(q);
            }
            sig.extend(PROGRESS_STATE.iter().map(|&i| st.get(i).copied().unwrap_or(0)));
        }
        sig
    }
}

fn mapped_u64<B: Backend + ?Sized>(
    backend: &B,
    buffer: BufferId,
) -> Result<Vec<u64>, RuntimeError> {
    match backend.read_mapped(buffer)? {
        HostData::U64(v) => Ok(v),
        _ => Err(BackendError::Usage("Atos: the control block is not u64".into()).into()),
    }
}

fn stop<B: Backend + ?Sized>(
    backend: &mut B,
    ctl_block: BufferId,
    k: usize,
) -> Result<(), RuntimeError> {
    backend.write_mapped(ctl_block, ctl::stop(k), HostData::U64(vec![1]))?;
    Ok(())
}

/// Allocates and uploads GPU `g`'s buffers (the fixed slots; the control block and the
/// peers' buffers are appended by the caller).
#[allow(clippy::too_many_arguments)]
fn upload_gpu<B: Backend + ?Sized>(
    backend: &mut B,
    ag: &AtosGraph,
    g: u32,
    init: AppInit,
    capacity: u64,
    options: &AtosOptions,
    stream: StreamId,
    next_token: &mut impl FnMut() -> Token,
) -> Result<(GpuBuffers, Vec<Token>), RuntimeError> {
    let d = DeviceId(g);
    let k = ag.gpus() as usize;
    let n = ag.local_vertices(g) as usize;
    let gi = g as usize;
    let mut ups = Vec::new();
    let mut up = |backend: &mut B, label: &str, data: HostData| -> Result<BufferId, RuntimeError> {
        let b = backend.alloc(d, data.elem(), data.len().max(1), label)?;
        if !data.is_empty() {
            let t = next_token();
            backend.write_from_host(stream, b, 0, data, Some(t))?;
            ups.push(t);
        }
        Ok(b)
    };
    if init.value.len() != n {
        return Err(options_error(format!(
            "Atos: the application gave {} initial values for gpu{g}'s {n} vertices",
            init.value.len()
        )));
    }
    if n >= kernels::TAG as usize {
        return Err(options_error(format!(
            "Atos: gpu{g} owns {n} vertices; a queue item leaves 31 bits for a vertex: use \
             more GPUs"
        )));
    }
    // A capacity set by hand must fit the GPU's memory with every queue it sizes: a larger
    // one is refused here with the sizes, before the local queue is built on the host (a
    // capacity near 2^64 overflowed that allocation). Sized from the graph, the queues fit
    // the host; the device allocation says if they do not fit the GPU.
    let memory = backend.device_info(d).memory_bytes;
    let queue_bytes = queue_bytes(capacity, options, k);
    if options.queue_capacity.is_some() && queue_bytes > memory {
        return Err(options_error(format!(
            "--atos-queue-capacity {capacity}: gpu{g}'s queues would take {queue_bytes} \
             bytes, more than its {memory} bytes of memory; choose a smaller capacity, or \
             leave it unset to size it from the graph"
        )));
    }
    let cap = capacity.max(1) as usize;
    let offsets = up(backend, "atos offsets", HostData::U64(ag.offsets[gi].clone()))?;
    let targets = up(backend, "atos targets", HostData::U32(ag.targets[gi].clone()))?;
    let bases = up(backend, "atos bases", HostData::U32(ag.bases.clone()))?;
    let value = up(backend, "atos values", HostData::U32(init.value))?;
    let aux = up(backend, "atos aux", HostData::F32(init.aux.unwrap_or_else(|| vec![0.0])))?;
    let flags = up(backend, "atos flags", HostData::U32(init.flags.unwrap_or_else(|| vec![0])))?;
    let mut local_items = vec![0u32; cap];
    let mut local_counters = vec![0u64; COUNTER_WORDS];
    if init.items.len() > cap {
        return Err(options_error(format!(
            "Atos: gpu{g} starts with {} queued items, more than the queue capacity {cap}; \
             raise --atos-queue-capacity to at least {}",
            init.items.len(),
            init.items.len()
        )));
    }
    queue::push(&mut local_counters, &mut local_items, &init.items);
    let local_items = up(backend, "atos local queue", HostData::U32(local_items))?;
    let local_counters = up(backend, "atos local counters", HostData::U64(local_counters))?;
    let low_cap = if options.priority.is_some() { cap } else { 1 };
    let low_items = backend.alloc(d, ElemType::U32, low_cap, "atos low queue")?;
    let low_counters = backend.alloc(d, ElemType::U64, COUNTER_WORDS, "atos low counters")?;
    // Aggregated, every other GPU's aggregator gets an equal share of the receive queue for
    // its batches (flow control, see `kernels::RECV_COUNTER_WORDS`): room for one whole
    // aggregation queue each, with its batch headers.
    let aggregated = k > 1 && matches!(options.comm, Comm::Aggregated { .. });
    let recv_cap = match (k, aggregated) {
        (1, _) => 2,
        (_, true) => 2 * (k - 1) * (cap + 64),
        (_, false) => 2 * cap,
    };
    let recv_items = backend.alloc(d, ElemType::U32, recv_cap, "atos receive queue")?;
    let recv_counters =
        backend.alloc(d, ElemType::U64, kernels::RECV_COUNTER_WORDS, "atos receive counters")?;
    let agg_cap = if aggregated { 2 * cap } else { 2 };
    let agg_items = backend.alloc(d, ElemType::U32, agg_cap * k, "atos aggregation queues")?;
    let agg_counters =
        backend.alloc(d, ElemType::U64, COUNTER_WORDS * k, "atos aggregation counters")?;
    let resident = u64::from(backend.device_info(d).sm_count) * 2048;
    let workers = (resident / u64::from(options.width())).max(1);
    let workers = backend.alloc(
        d,
        ElemType::U32,
        kernels::table_words(workers, options.fetch()).max(2 * kernels::CUDA_SCRATCH_WORDS),
        "atos workers",
    )?;
    let mut st = vec![0u64; state::LEN];
    st[state::THRESHOLD] = options.priority.map_or(u64::MAX, |p| u64::from(p.0));
    let state_buf = up(backend, "atos state", HostData::U64(st))?;
    let mut all = vec![BufferId(0); kernels::SLOTS - 1];
    all[Slot::Offsets as usize] = offsets;
    all[Slot::Targets as usize] = targets;
    all[Slot::Bases as usize] = bases;
    all[Slot::Value as usize] = value;
    all[Slot::Aux as usize] = aux;
    all[Slot::Flags as usize] = flags;
    all[Slot::LocalItems as usize] = local_items;
    all[Slot::LocalCounters as usize] = local_counters;
    all[Slot::LowItems as usize] = low_items;
    all[Slot::LowCounters as usize] = low_counters;
    all[Slot::RecvItems as usize] = recv_items;
    all[Slot::RecvCounters as usize] = recv_counters;
    all[Slot::AggItems as usize] = agg_items;
    all[Slot::AggCounters as usize] = agg_counters;
    all[Slot::Workers as usize] = workers;
    all[Slot::State as usize] = state_buf;
    Ok((
        GpuBuffers {
            all,
            recv: (recv_items, recv_counters),
            value,
            aux,
            state: state_buf,
            queue_counters: [local_counters, low_counters, recv_counters, agg_counters],
        },
        ups,
    ))
}

#[cfg(test)]
mod ctas_per_sm_tests {
    use super::*;
    use crate::graph::BuildOptions;

    /// A star: vertex 0 joined to `leaves` others (undirected: out-degree `leaves`).
    fn star(leaves: u32) -> Csr {
        let edges: Vec<(u32, u32)> = (1..=leaves).map(|v| (0, v)).collect();
        Csr::from_edges(leaves + 1, &edges, None, false, BuildOptions::default()).unwrap()
    }

    #[test]
    fn auto_takes_two_ctas_an_sm_from_an_out_degree_of_64() {
        let below = star(CtasPerSm::WIDE_MIN_DEGREE as u32 - 1);
        let at = star(CtasPerSm::WIDE_MIN_DEGREE as u32);
        assert_eq!(CtasPerSm::Auto.resolve(&below), 1);
        assert_eq!(CtasPerSm::Auto.resolve(&at), 2);
        // A forced choice ignores the graph.
        assert_eq!(CtasPerSm::One.resolve(&at), 1);
        assert_eq!(CtasPerSm::Two.resolve(&below), 2);
    }

    #[test]
    fn only_an_application_with_a_wide_worker_runs_one() {
        use crate::algo::bfs::BfsAtos;
        use crate::algo::pagerank::PageRankAtos;
        use kernels::AtosOperator;
        assert_eq!(BfsAtos::KERNELS.worker_for(2), "atos_bfs_worker_wide");
        assert_eq!(BfsAtos::KERNELS.worker_for(1), "atos_bfs_worker");
        assert_eq!(PageRankAtos::KERNELS.worker_for(2), "atos_pr_worker");
    }
}
