//! GPU cost model: turns the counts a kernel reports into virtual time.
//!
//! # Cost function
//!
//! A kernel launch costs the host [`GpuModel::launch_overhead_ps`] to issue (back-to-back
//! launches cannot come faster than that), then occupies the GPU for
//! [`GpuModel::kernel_time_ps`]:
//!
//! ```text
//! units      = max(items, edges, atomics)             parallel work units
//! waves      = ceil(units / (sm_count * resident_threads_per_sm))
//! memory     = (bytes_read + bytes_written) / memory_bandwidth
//! throughput = items * item_ps + edges * edge_ps + atomics * atomic_ps
//! latency    = waves * dependent_access_ps             one thread's chain of dependent loads
//! kernel     = kernel_min_ps + max(memory, throughput, latency)
//! ```
//!
//! The `latency` term is the small-frontier problem of seed 004: a launch too small to fill
//! the GPU cannot hide memory latency, so it costs at least one wave of a thread's
//! dependent accesses however little work it has; for large launches the throughput and
//! memory terms dominate. Where a model has a host model ([`GpuModel::host`]: the
//! calibrated machines), the one host thread spends its cost for the operation's kind
//! ([`HostIssue`]) issuing each stream operation, one after another whatever GPU it goes to
//! (a kernel starts [`HostIssue::launch_lead_ps`] into its launch), and a host that waits for a kernel
//! (or a copy) sees it [`GpuModel::sync_overhead_ps`] after completion and then spends
//! [`HostIssue::poll_query_ps`] per stream with work outstanding taking it; without one (the
//! bundled machines) the host issues and observes instantly.
//!
//! Where each constant comes from is stated next to it in `topologies/gpu_models.toml`
//! (datasheets, the project's H200 measurements in `DESIGN.md`, the seeds' tables) and
//! marked "estimate" where it is one.

use crate::time::TimePs;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a kernel did, as counted by its functional (Rust) implementation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCounts {
    /// Work items processed (e.g. frontier vertices).
    pub items: u64,
    /// Edges traversed.
    pub edges: u64,
    /// Atomic operations issued to global memory.
    pub atomics: u64,
    /// Bytes read from device memory.
    pub bytes_read: u64,
    /// Bytes written to device memory.
    pub bytes_written: u64,
    /// Local vertices (owned and proxies) the kernel's grid sweeps whatever its work items
    /// (a pass over every vertex of the device); charged only by a [`KernelCost`].
    pub vertices: u64,
    /// Vertices appended to an output frontier (each a claim of the vertex and an append
    /// to a length every thread shares: atomics that serialise on a GPU whatever its
    /// size); charged only by a [`KernelCost`].
    pub outputs: u64,
    /// Grid-wide rounds of a persistent kernel (0 or 1: an ordinary kernel). Each round
    /// after the first costs a grid barrier (`kernel_min`) and at least one dependent
    /// access, but no launch.
    pub rounds: u64,
    /// Arcs on the launch's critical path: per grid-wide round, the arc slots the busiest
    /// thread block goes through (its block-wide steps times the block's threads: its own
    /// frontier vertices' arcs, each rounded up to the threads that expand it, plus its
    /// share of the chunks of the vertices set aside as huge), summed over the rounds. A
    /// round whose frontier fills few blocks takes as long as its busiest block; charged
    /// only by a [`KernelCost`].
    pub path_edges: u64,
}

/// The cost of one kernel contract on one GPU model (all picoseconds), fitted from
/// measured launches; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCost {
    /// Time of a launch with no work (grid start and drain, pre- and post-passes).
    pub fixed_ps: TimePs,
    /// Per work item.
    pub item_ps: TimePs,
    /// Per edge.
    pub edge_ps: TimePs,
    /// Per global atomic.
    pub atomic_ps: TimePs,
    /// Per local vertex swept.
    pub vertex_ps: TimePs,
    /// Per vertex appended to an output frontier.
    pub output_ps: TimePs,
    /// Per grid-wide round of a persistent kernel after its first (a grid barrier and the
    /// host-visible bookkeeping of a device-side loop); 0 charges `fixed_ps` instead.
    pub round_ps: TimePs,
    /// Per work item of the first [`Self::ramp_items`] items of a launch, or of each of its
    /// grid-wide rounds: the ramp of a launch (or a device-side loop's round) that does
    /// not fill one thread block, whose cost grows with its items until the block is full
    /// and then stays (one H100, c32: `bfs_advance` 14-16 us for up to 32 frontier
    /// vertices, 23-25 us from 256 on). A launch's rounds share its items evenly:
    /// `min(items, max(rounds, 1) * ramp_items)` items pay it. Not scaled by a share of
    /// the SMs ([`GpuModel::on_sms`]): one block's latency does not depend on how many SMs
    /// the others have.
    pub ramp_item_ps: TimePs,
    /// Items per launch or round that [`Self::ramp_item_ps`] is charged for (0: no ramp).
    pub ramp_items: u64,
    /// Per arc on the launch's critical path ([`KernelCounts::path_edges`]): one block's
    /// arcs, each a block-width of dependent accesses. Not scaled by a share of the SMs
    /// ([`GpuModel::on_sms`]): one block's latency does not depend on how many SMs the
    /// others have.
    pub path_edge_ps: TimePs,
}

impl KernelCost {
    /// What `counts` cost at this kernel's per-count costs (no fixed cost, no rounds), the
    /// ramp ([`Self::ramp_ps`]) and the critical path included.
    pub fn work_ps(&self, counts: &KernelCounts) -> TimePs {
        counts
            .items
            .saturating_mul(self.item_ps)
            .saturating_add(counts.edges.saturating_mul(self.edge_ps))
            .saturating_add(counts.atomics.saturating_mul(self.atomic_ps))
            .saturating_add(counts.vertices.saturating_mul(self.vertex_ps))
            .saturating_add(counts.outputs.saturating_mul(self.output_ps))
            .saturating_add(counts.path_edges.saturating_mul(self.path_edge_ps))
            .saturating_add(self.ramp_ps(counts))
    }

    /// The ramp of a launch that does not fill a block: [`Self::ramp_item_ps`] for each of
    /// `min(items, max(rounds, 1) * ramp_items)` items (0 without a ramp).
    pub fn ramp_ps(&self, counts: &KernelCounts) -> TimePs {
        let cap = counts.rounds.max(1).saturating_mul(self.ramp_items);
        counts.items.min(cap).saturating_mul(self.ramp_item_ps)
    }

    /// One grid-wide round after a launch's first: `round_ps`, or `fixed_ps` without one.
    pub fn round_or_fixed_ps(&self) -> TimePs {
        if self.round_ps > 0 { self.round_ps } else { self.fixed_ps }
    }
}

/// The host's time to issue one stream operation of each kind to a GPU (the host model of a
/// calibrated machine; `launch_issue_ns` and the `*_issue_ns` keys of its TOML). The CUDA
/// backend's calls cost the host differently per kind (`SWITCHYARD_CUDA_HOST_PROFILE`): a
/// kernel launch packs arguments, records timing events and may snapshot counters; an event
/// record is one driver call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostIssue {
    /// A kernel launch.
    pub launch_ps: TimePs,
    /// Of [`Self::launch_ps`], the host time before the launch's kernel can start. The CUDA
    /// backend's `launch_with` records the kernel's start timing event before its
    /// `cuLaunchKernel` calls (pre-pass, kernel, post-pass) and its end event, so a measured
    /// kernel span, and a kernel cost fitted on spans, already holds the rest of the
    /// launch's host time whenever the GPU waited for it: the kernel joins its stream this
    /// long after the host began issuing it, while the host's one thread stays busy for the
    /// whole `launch_ps` (what it issues next queues behind all of it). At most `launch_ps`;
    /// equal to it (the kernel joins once its launch is issued) where a model does not give
    /// `launch_lead_ns`.
    pub launch_lead_ps: TimePs,
    /// A copy between device buffers (on one GPU or between peers).
    pub copy_ps: TimePs,
    /// A read of a device buffer into host memory.
    pub read_ps: TimePs,
    /// A write of host data into a device buffer.
    pub write_ps: TimePs,
    /// An event record; also a host callback (a completion after the stream's work), which
    /// the CUDA backend's `host_callback` issues as one event record.
    pub record_ps: TimePs,
    /// A stream's wait for an event.
    pub wait_ps: TimePs,
    /// One event query of a completion poll. The CUDA backend's `next_completion` finds a
    /// finished operation by querying the oldest outstanding operation of every stream
    /// that has one, so the host's one thread spends this once per stream with
    /// operations outstanding (the finished one's included) on every completion it takes,
    /// before acting on it; waiting for a completion that has not happened yet is not
    /// part of it.
    pub poll_query_ps: TimePs,
}

/// The performance model of one GPU type. All times in picoseconds, sizes in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuModel {
    /// Model name as the topology files spell it, e.g. `V100-SXM2-16GB`.
    pub name: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Threads an SM keeps resident at full occupancy (2048 on Kepler through Hopper).
    pub resident_threads_per_sm: u32,
    /// Device memory capacity in bytes.
    pub memory_bytes: u64,
    /// Device memory bandwidth in bytes per second.
    pub memory_bandwidth_bytes_per_s: u64,
    /// Host-side cost of issuing one kernel launch.
    pub launch_overhead_ps: TimePs,
    /// Host-side cost of observing a completion (stream/event synchronize wake-up).
    pub sync_overhead_ps: TimePs,
    /// Time an empty kernel occupies the GPU (grid start and drain).
    pub kernel_min_ps: TimePs,
    /// Latency of one thread's chain of dependent global-memory accesses for one work unit;
    /// the floor of a wave that does not fill the GPU.
    pub dependent_access_ps: TimePs,
    /// Cost per work item at full occupancy.
    pub item_ps: TimePs,
    /// Cost per edge at full occupancy.
    pub edge_ps: TimePs,
    /// Cost per global atomic at full occupancy.
    pub atomic_ps: TimePs,
    /// Per-copy software/driver setup cost before a copy's first byte moves (stream
    /// operation issue, DMA descriptor set-up).
    pub copy_setup_ps: TimePs,
    /// The host model, where the model has one (`launch_issue_ns` in its TOML): the host
    /// time to issue each kind of stream operation to this GPU. One host thread issues every
    /// GPU's operations one after another, so on several GPUs they queue behind each other,
    /// and the host observes a completion [`Self::sync_overhead_ps`] after it happened.
    /// `None` (every bundled model): the host issues and observes instantly, as the bundled
    /// machines' shape tests were set against.
    pub host: Option<HostIssue>,
    /// Copy engines a GPU of this model has unless the topology says otherwise.
    pub copy_engines: u32,
    /// Costs of named kernel contracts that replace the generic per-count costs (empty:
    /// every kernel uses the generic ones).
    pub kernel_costs: Arc<BTreeMap<String, KernelCost>>,
}

impl GpuModel {
    /// Time the GPU is busy executing a kernel with these counts (excludes the launch
    /// overhead, see the module docs for the formula).
    pub fn kernel_time_ps(&self, counts: &KernelCounts) -> TimePs {
        let units = counts.items.max(counts.edges).max(counts.atomics);
        let slots = u64::from(self.sm_count) * u64::from(self.resident_threads_per_sm);
        let waves = units.div_ceil(slots.max(1));
        let bytes = u128::from(counts.bytes_read) + u128::from(counts.bytes_written);
        let memory_ps = (bytes * 1_000_000_000_000)
            .div_ceil(u128::from(self.memory_bandwidth_bytes_per_s.max(1)))
            .min(u128::from(u64::MAX)) as u64;
        let throughput_ps = counts
            .items
            .saturating_mul(self.item_ps)
            .saturating_add(counts.edges.saturating_mul(self.edge_ps))
            .saturating_add(counts.atomics.saturating_mul(self.atomic_ps));
        let latency_ps = waves.max(counts.rounds).saturating_mul(self.dependent_access_ps);
        let barriers_ps = counts.rounds.saturating_sub(1).saturating_mul(self.kernel_min_ps);
        self.kernel_min_ps
            .saturating_add(barriers_ps)
            .saturating_add(memory_ps.max(throughput_ps).max(latency_ps))
    }

    /// Time the GPU is busy executing kernel `name` with these counts: its
    /// [`KernelCost`] where the model has one, else [`Self::kernel_time_ps`].
    pub fn named_kernel_time_ps(&self, name: &str, counts: &KernelCounts) -> TimePs {
        self.kernel_fixed_ps(name).saturating_add(self.kernel_body_ps(name, counts))
    }

    /// The part of a launch that does not depend on its counts: the kernel's fitted fixed
    /// cost, else [`Self::kernel_min_ps`].
    pub fn kernel_fixed_ps(&self, name: &str) -> TimePs {
        self.kernel_costs.get(name).map_or(self.kernel_min_ps, |c| c.fixed_ps)
    }

    /// What a launch of `name` costs beyond [`Self::kernel_fixed_ps`] (a persistent
    /// kernel's step pays this alone).
    pub fn kernel_body_ps(&self, name: &str, counts: &KernelCounts) -> TimePs {
        let Some(c) = self.kernel_costs.get(name) else {
            return self.kernel_time_ps(counts) - self.kernel_min_ps;
        };
        let units = counts.items.max(counts.edges).max(counts.atomics);
        let waves = units.div_ceil(self.resident_threads().max(1));
        let work_ps = c.work_ps(counts);
        let latency_ps = waves.max(counts.rounds).saturating_mul(self.dependent_access_ps);
        let round_ps = c.round_or_fixed_ps();
        let barriers_ps = counts.rounds.saturating_sub(1).saturating_mul(round_ps);
        barriers_ps.saturating_add(work_ps.max(latency_ps))
    }

    /// One step of persistent kernel `name` when the model has a [`KernelCost`] for it
    /// (`None` otherwise: the caller keeps the generic per-step charge). A fitted persistent
    /// kernel is one span per launch, fitted as `fixed + (rounds - 1) * round + linear
    /// terms` over the launch's summed counts, where a launch's rounds are its steps (a step
    /// reporting several grid-wide rounds counts each); so step `step` pays exactly its share
    /// of that: `fixed` on the first, a round for each of its rounds after the launch's
    /// first, and its counts at the per-count costs, with no latency floor (the round is the
    /// floor the fit measured). A ramp ([`KernelCost::ramp_ps`]) is charged on the step's
    /// own items and rounds.
    pub fn persistent_step_ps(
        &self,
        name: &str,
        counts: &KernelCounts,
        step: u64,
    ) -> Option<TimePs> {
        let c = self.kernel_costs.get(name)?;
        let rounds = counts.rounds.max(1) - u64::from(step == 0);
        let round_ps = c.round_or_fixed_ps();
        let work_ps = c.work_ps(counts);
        let first_ps = if step == 0 { c.fixed_ps } else { 0 };
        // At least a picosecond: virtual time moves on every step, whatever the fit gave.
        Some(
            first_ps.saturating_add(rounds.saturating_mul(round_ps)).saturating_add(work_ps).max(1),
        )
    }

    /// One grid barrier of kernel `name`'s device-side loop: its fitted `round_ps`, else
    /// its `fixed_ps`, else [`Self::kernel_min_ps`] (what [`Self::kernel_body_ps`] charges
    /// per round after the first).
    pub fn round_barrier_ps(&self, name: &str) -> TimePs {
        match self.kernel_costs.get(name) {
            Some(c) => c.round_or_fixed_ps(),
            None => self.kernel_min_ps,
        }
    }

    /// This model restricted to `sms` of its SMs (a kernel sharing the GPU): memory
    /// bandwidth and the per-count kernel costs scale with the share (a
    /// [`KernelCost::ramp_item_ps`] and [`KernelCost::path_edge_ps`], one block's latency,
    /// do not).
    pub fn on_sms(&self, sms: u32) -> GpuModel {
        let full = self.sm_count.max(1);
        let mut part = self.clone();
        part.sm_count = sms;
        part.memory_bandwidth_bytes_per_s = (u128::from(self.memory_bandwidth_bytes_per_s)
            * u128::from(sms)
            / u128::from(full)) as u64;
        if !part.kernel_costs.is_empty() {
            let scale = |ps: TimePs| {
                (u128::from(ps) * u128::from(full)).div_ceil(u128::from(sms.max(1))) as TimePs
            };
            for c in Arc::make_mut(&mut part.kernel_costs).values_mut() {
                c.item_ps = scale(c.item_ps);
                c.edge_ps = scale(c.edge_ps);
                c.atomic_ps = scale(c.atomic_ps);
                c.vertex_ps = scale(c.vertex_ps);
                c.output_ps = scale(c.output_ps);
            }
        }
        part
    }

    /// Host-side cost of issuing one kernel launch.
    pub fn launch_overhead_ps(&self) -> TimePs {
        self.launch_overhead_ps
    }

    /// Host-side cost of observing a completion.
    pub fn sync_overhead_ps(&self) -> TimePs {
        self.sync_overhead_ps
    }

    /// Per-copy setup cost paid before a copy sourced by this GPU starts moving data.
    pub fn copy_setup_ps(&self) -> TimePs {
        self.copy_setup_ps
    }

    /// Device memory capacity in bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }

    /// Parallel work units that fill the GPU (one wave).
    pub fn resident_threads(&self) -> u64 {
        u64::from(self.sm_count) * u64::from(self.resident_threads_per_sm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> GpuModel {
        GpuModel {
            name: "test".into(),
            sm_count: 10,
            resident_threads_per_sm: 100,
            memory_bytes: 1 << 30,
            memory_bandwidth_bytes_per_s: 1_000_000_000_000, // 1 byte per ps
            launch_overhead_ps: 3_000_000,
            sync_overhead_ps: 4_000_000,
            kernel_min_ps: 1_000_000,
            dependent_access_ps: 500_000,
            item_ps: 10,
            edge_ps: 20,
            atomic_ps: 40,
            copy_setup_ps: 5_000_000,
            host: None,
            copy_engines: 2,
            kernel_costs: Arc::default(),
        }
    }

    #[test]
    fn empty_kernel_costs_the_minimum() {
        assert_eq!(model().kernel_time_ps(&KernelCounts::default()), 1_000_000);
    }

    #[test]
    fn small_launch_pays_one_wave_of_latency() {
        let m = model();
        let one = m.kernel_time_ps(&KernelCounts { edges: 1, ..Default::default() });
        let full = m.kernel_time_ps(&KernelCounts { edges: 1000, ..Default::default() });
        assert_eq!(one, 1_000_000 + 500_000);
        assert_eq!(one, full, "anything up to one wave costs the same latency");
        let two = m.kernel_time_ps(&KernelCounts { edges: 1001, ..Default::default() });
        assert_eq!(two, 1_000_000 + 2 * 500_000);
    }

    #[test]
    fn large_launch_is_throughput_or_memory_bound() {
        // A million resident threads: ten waves of latency (5 us) hide under the work.
        let m = GpuModel { resident_threads_per_sm: 100_000, ..model() };
        let edges = 10_000_000;
        let t = m.kernel_time_ps(&KernelCounts { edges, ..Default::default() });
        assert_eq!(t, 1_000_000 + edges * 20);
        let t = m.kernel_time_ps(&KernelCounts {
            edges,
            bytes_read: 1_000_000_000,
            ..Default::default()
        });
        assert_eq!(t, 1_000_000 + 1_000_000_000, "memory-bound: 1 GB at 1 TB/s is 1 ms");
    }

    #[test]
    fn a_kernel_with_a_cost_entry_uses_it_and_others_keep_the_generic_costs() {
        let mut m = model();
        let cost =
            KernelCost { fixed_ps: 7_000_000, edge_ps: 3, vertex_ps: 2, ..Default::default() };
        Arc::make_mut(&mut m.kernel_costs).insert("sweep".into(), cost);
        let counts = KernelCounts { edges: 10_000, vertices: 50_000, ..Default::default() };
        // 7 us fixed, then the larger of 130 ns of work (30 ns of edges, 100 ns of swept
        // vertices) and ten waves of dependent accesses (5 us).
        assert_eq!(m.named_kernel_time_ps("sweep", &counts), 7_000_000 + 5_000_000);
        let big = KernelCounts { edges: 10_000, vertices: 5_000_000, ..Default::default() };
        assert_eq!(m.named_kernel_time_ps("sweep", &big), 7_000_000 + 30_000 + 10_000_000);
        assert_eq!(m.kernel_fixed_ps("sweep"), 7_000_000);
        // Output appends are charged by an entry that prices them.
        let out = KernelCost { output_ps: 700, ..cost };
        Arc::make_mut(&mut m.kernel_costs).insert("append".into(), out);
        let appends = KernelCounts { outputs: 100_000, ..big };
        assert_eq!(
            m.named_kernel_time_ps("append", &appends),
            m.named_kernel_time_ps("sweep", &big) + 100_000 * 700
        );
        // Vertices and outputs are not charged without an entry; other kernels keep the
        // formula.
        assert_eq!(m.named_kernel_time_ps("other", &appends), m.kernel_time_ps(&big));
        assert_eq!(m.named_kernel_time_ps("other", &big), m.kernel_time_ps(&big));
        assert_eq!(m.kernel_fixed_ps("other"), m.kernel_min_ps);
    }

    #[test]
    fn path_edges_are_charged_per_arc_and_not_scaled_on_a_share_of_the_sms() {
        let mut m = model();
        let plain = KernelCost { fixed_ps: 10_000_000, edge_ps: 2_000, ..Default::default() };
        let path = KernelCost { path_edge_ps: 9_000, ..plain };
        Arc::make_mut(&mut m.kernel_costs).insert("plain".into(), plain);
        Arc::make_mut(&mut m.kernel_costs).insert("path".into(), path);
        let counts = KernelCounts { edges: 4_000, path_edges: 1_500, ..Default::default() };
        assert_eq!(
            m.named_kernel_time_ps("path", &counts) - m.named_kernel_time_ps("plain", &counts),
            1_500 * 9_000
        );
        // Without a per-kernel cost the generic formula ignores them.
        let none = KernelCounts { path_edges: 0, ..counts };
        assert_eq!(m.named_kernel_time_ps("other", &counts), m.kernel_time_ps(&none));
        let half = m.on_sms(5);
        assert_eq!(half.kernel_costs["path"].path_edge_ps, 9_000);
        assert_eq!(half.kernel_costs["path"].edge_ps, 4_000);
    }

    #[test]
    fn a_ramp_charges_items_up_to_its_cap_per_launch_or_round() {
        let mut m = model();
        let plain = KernelCost { fixed_ps: 10_000_000, edge_ps: 2_000, ..Default::default() };
        let ramp = KernelCost { ramp_item_ps: 30_000, ramp_items: 256, ..plain };
        Arc::make_mut(&mut m.kernel_costs).insert("plain".into(), plain);
        Arc::make_mut(&mut m.kernel_costs).insert("ramp".into(), ramp);
        let time = |name: &str, items: u64, rounds: u64| {
            let counts = KernelCounts { items, edges: 4 * items, rounds, ..Default::default() };
            m.named_kernel_time_ps(name, &counts)
        };
        // Below one block the ramp grows with the items; from the cap on it stays.
        assert_eq!(time("ramp", 100, 1) - time("plain", 100, 1), 100 * 30_000);
        assert_eq!(time("ramp", 256, 1) - time("plain", 256, 1), 256 * 30_000);
        assert_eq!(time("ramp", 5_000, 1) - time("plain", 5_000, 1), 256 * 30_000);
        // A loop's rounds share its items: 10 rounds of 110 items pay 1,100 items, 10 of 600
        // pay 10 caps; the plain cost is the same formula without the ramp.
        assert_eq!(time("ramp", 1_100, 10) - time("plain", 1_100, 10), 1_100 * 30_000);
        assert_eq!(time("ramp", 6_000, 10) - time("plain", 6_000, 10), 2_560 * 30_000);
        assert_eq!(
            time("plain", 6_000, 10),
            10_000_000 + 9 * 10_000_000 + 24_000 * 2_000,
            "a cost without ramp keys is charged as before"
        );
        // Not scaled on a share of the SMs (the per-count costs are).
        let half = m.on_sms(5);
        assert_eq!(half.kernel_costs["ramp"].ramp_item_ps, 30_000);
        assert_eq!(half.kernel_costs["ramp"].edge_ps, 4_000);
        // A persistent kernel's step pays the ramp of its own items.
        let step = KernelCounts { items: 1_000, ..Default::default() };
        assert_eq!(
            m.persistent_step_ps("ramp", &step, 1).expect("fitted")
                - m.persistent_step_ps("plain", &step, 1).expect("fitted"),
            256 * 30_000
        );
    }

    #[test]
    fn a_persistent_kernel_pays_a_barrier_per_extra_round_but_no_launch() {
        let m = model();
        let one_round = KernelCounts { edges: 10, ..Default::default() };
        let single = m.kernel_time_ps(&one_round);
        let rounds = m.kernel_time_ps(&KernelCounts { edges: 40, rounds: 4, ..Default::default() });
        // Three extra grid barriers (kernel_min each) and four dependent accesses.
        assert_eq!(rounds, 4 * 1_000_000 + 4 * 500_000);
        assert!(rounds < 4 * (single + m.launch_overhead_ps()), "cheaper than four launches");
    }

    #[test]
    fn a_fitted_persistent_kernels_steps_add_up_to_its_fitted_launch_cost() {
        let mut m = model();
        let cost = KernelCost {
            fixed_ps: 9_000_000,
            round_ps: 3_000_000,
            edge_ps: 5,
            ..Default::default()
        };
        Arc::make_mut(&mut m.kernel_costs).insert("worker".into(), cost);
        // Three steps: one round each, then one reporting two rounds.
        let steps = [
            KernelCounts { edges: 100, ..Default::default() },
            KernelCounts { edges: 0, ..Default::default() },
            KernelCounts { edges: 1_000, rounds: 2, ..Default::default() },
        ];
        let total: u64 = steps
            .iter()
            .enumerate()
            .map(|(i, c)| m.persistent_step_ps("worker", c, i as u64).expect("fitted"))
            .sum();
        // The fit's form over the launch: fixed + (4 rounds - 1) * round + 1,100 edges.
        assert_eq!(total, 9_000_000 + 3 * 3_000_000 + 1_100 * 5);
        // No entry: the caller keeps the generic charge.
        assert_eq!(m.persistent_step_ps("other", &steps[0], 0), None);
        // Without a round cost, a round costs the fixed cost (as for a device-side loop).
        let no_round = KernelCost { round_ps: 0, ..cost };
        Arc::make_mut(&mut m.kernel_costs).insert("worker".into(), no_round);
        assert_eq!(m.persistent_step_ps("worker", &steps[1], 1), Some(9_000_000));
    }
}
