//! The Atos runtime's options as `run`, `sweep` and `calibrate runs` take them.

use switchyard::runtime::atos::tiles::TileMode;
use switchyard::runtime::atos::{AtosOptions, Comm, CtasPerSm, KernelStrategy, WorkerWidth};

/// `--atos-comm` as the CLI spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CommArg {
    /// Direct on one GPU, aggregated (eager: 1 MiB, 4 polls) on several.
    Auto,
    /// From the workers, over peer paths.
    Direct,
    /// Through the aggregator.
    Aggregated,
}

/// Atos options (used with `--runtime atos`).
#[derive(clap::Args, Debug, Clone)]
pub struct AtosArgs {
    /// Atos: worker width (seed 004 sec. 3.2).
    #[arg(long, value_enum, default_value = "cta")]
    pub atos_worker: WorkerWidth,
    /// Atos: threads of a CTA worker (a multiple of 32, at most 1024; BFS on CUDA at most 512,
    /// its kernel's launch bound; seed 003 uses 512).
    #[arg(long, default_value_t = AtosOptions::default().cta_threads)]
    pub atos_cta_threads: u32,
    /// Atos: items a CTA worker fetches (FETCH_SIZE); thread and warp workers fetch one.
    #[arg(long)]
    pub atos_fetch_size: Option<u32>,
    /// Atos: persistent kernels (one launch that sees work arrive) or discrete ones.
    #[arg(long, value_enum, default_value = "persistent")]
    pub atos_kernel: KernelStrategy,
    /// Atos: the distributed priority queue's first threshold (seed 003; BFS levels). On
    /// with --atos-threshold-delta.
    #[arg(long, default_value_t = 1)]
    pub atos_threshold: u32,
    /// Atos: the priority threshold's step (threshold_delta); the priority queue is off
    /// without it.
    #[arg(long)]
    pub atos_threshold_delta: Option<u32>,
    /// Atos: how remote updates travel: `direct` (peer stores and atomics from the workers),
    /// `aggregated` (through the aggregator kernel; required over InfiniBand) or `auto`
    /// (direct on one GPU; aggregated with BATCH_SIZE 1 MiB and WAIT_TIME 4 on several,
    /// measured faster on NVLink too).
    #[arg(long, value_enum, default_value = "auto")]
    pub atos_comm: CommArg,
    /// Atos: the aggregator's BATCH_SIZE in bytes (seed 003: 1 MiB).
    #[arg(long, default_value_t = 1 << 20)]
    pub atos_batch_bytes: u64,
    /// Atos: the aggregator's WAIT_TIME in polls (seed 003: 4 for BFS's eager mode, 32 for
    /// PageRank).
    #[arg(long, default_value_t = 4)]
    pub atos_wait_time: u32,
    /// Atos: SMs the aggregator runs on beside the workers.
    #[arg(long, default_value_t = AtosOptions::default().aggregator_sms)]
    pub atos_aggregator_sms: u32,
    /// Atos: capacity of every queue in items (default: sized from the graph).
    #[arg(long)]
    pub atos_queue_capacity: Option<u64>,
    /// Atos: vertices a sweep reserves (PageRank's Check_Size).
    #[arg(long, default_value_t = AtosOptions::default().check_size)]
    pub atos_check_size: u32,
    /// Atos: host time between two reads of the termination counters, in nanoseconds.
    #[arg(long, default_value_t = AtosOptions::default().poll_ns)]
    pub atos_poll_ns: u64,
    /// Atos: relabel the vertices at random first (seed 004 sec. 6.3).
    #[arg(long)]
    pub atos_permute: bool,
    /// Atos: worker CTAs an SM on CUDA, where the algorithm has a worker compiled for two
    /// (BFS): `1` for road graphs (no register spills), `2` for wide frontiers; `auto` takes 2
    /// when some vertex has out-degree 64 or more.
    #[arg(long, value_enum, default_value = "auto")]
    pub atos_ctas_per_sm: CtasPerSm,
    /// Atos: BFS on on-chip tiles (a CTA owns a tile of the graph in its shared memory; on
    /// several GPUs each GPU the tiles of its part, messages between GPUs through peer
    /// pointers): `auto` where every GPU's part fits its SMs (logical GPUs split their GPU's)
    /// and the graph is road-like (at most 4 arcs a vertex on average), `on` (an error where it
    /// cannot), `off` (the workers).
    #[arg(long, value_enum, default_value = "auto")]
    pub atos_tiles: TileMode,
    /// Atos: vertices a tile holds at least (more where the graph needs them to fit one tile
    /// an SM).
    #[arg(long, default_value_t = AtosOptions::default().tile_vertices)]
    pub atos_tile_vertices: u32,
}

impl AtosArgs {
    /// The options these flags give (checked by the runtime when it runs).
    pub fn options(&self) -> AtosOptions {
        let d = AtosOptions::default();
        let fetch_size = self.atos_fetch_size.unwrap_or(match self.atos_worker {
            WorkerWidth::Cta => d.fetch_size,
            _ => 1,
        });
        AtosOptions {
            worker: self.atos_worker,
            cta_threads: self.atos_cta_threads,
            fetch_size,
            kernel: self.atos_kernel,
            priority: self.atos_threshold_delta.map(|delta| (self.atos_threshold, delta)),
            comm: match self.atos_comm {
                CommArg::Auto => Comm::Auto,
                CommArg::Direct => Comm::Direct,
                CommArg::Aggregated => Comm::Aggregated {
                    batch_bytes: self.atos_batch_bytes,
                    wait_polls: self.atos_wait_time,
                },
            },
            aggregator_sms: self.atos_aggregator_sms,
            queue_capacity: self.atos_queue_capacity,
            check_size: self.atos_check_size,
            poll_ns: self.atos_poll_ns,
            permute_ids: self.atos_permute,
            ctas_per_sm: self.atos_ctas_per_sm,
            tiles: self.atos_tiles,
            tile_vertices: self.atos_tile_vertices,
        }
    }
}
