//! The JSON run report (schema `switchyard.run-report`, version 1; documented in
//! `reports/SCHEMA.md`) and its human summary table.

use crate::algo::{Algorithm, AlgorithmParams};
use crate::backend::BackendStats;
use crate::graph::reference::ValidationReport;
use crate::graph::summary::GraphSummary;
use crate::runtime::bsp::BspOptions;
use crate::runtime::groute::worklist::WorklistOptions;
pub use crate::runtime::{GrouteReport, WorkReport};
use serde::Serialize;
use std::fmt::Write as _;

/// Schema name written into every report.
pub const SCHEMA: &str = "switchyard.run-report";
/// Schema version; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything one run produced.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The command line that produced the run.
    pub command_line: Vec<String>,
    /// Git commit of the build (`unknown` outside a checkout).
    pub git_sha: String,
    /// Seed of the run.
    pub seed: u64,
    /// Backend (`sim` or `cuda`) and, for the simulator, the interconnect fidelity.
    pub backend: BackendInfo,
    /// The machine.
    pub topology: TopologyInfo,
    /// The graph the algorithm ran on.
    pub graph: GraphInfo,
    /// How the graph was partitioned.
    pub partition: PartitionInfo,
    /// The runtime and its parameters.
    pub runtime: RuntimeInfo,
    /// The algorithm and its parameters.
    pub algorithm: AlgorithmInfo,
    /// Per-GPU time and memory.
    pub gpus: Vec<GpuReport>,
    /// Per-link traffic (simulator: per direction of every link that carried bytes).
    pub links: Vec<LinkReport>,
    /// Work done.
    pub work: WorkReport,
    /// Supersteps (bulk-synchronous iterations).
    pub supersteps: u32,
    /// Time of the computation (after the upload), in picoseconds of virtual time on the
    /// simulator, measured time on real GPUs.
    pub time_ps: u64,
    /// Edges visited per second, in billions.
    pub gteps: f64,
    /// Validation against the references (`None` when switched off).
    pub validation: Option<ValidationReport>,
    /// What the Groute runtime did (only for `groute` runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groute: Option<GrouteReport>,
    /// What the Atos runtime did (only for `atos` runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atos: Option<crate::runtime::atos::AtosReport>,
    /// What GUM did (only for `gum` runs): per-superstep records, stealing, decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gum: Option<crate::runtime::gum::GumReport>,
}

/// Backend facts.
#[derive(Clone, Debug, Serialize)]
pub struct BackendInfo {
    /// `sim` or `cuda`.
    pub name: String,
    /// `flow` or `packet` on the simulator.
    pub fidelity: Option<String>,
    /// Events processed.
    pub events: u64,
    /// Bound of the random delay added to transfers and kernels (0: none).
    pub jitter_ps: u64,
}

/// Topology facts.
#[derive(Clone, Debug, Serialize)]
pub struct TopologyInfo {
    /// Topology name.
    pub name: String,
    /// Where it came from (`bundled:NAME` or a path).
    pub source: String,
    /// FNV-1a 64 hash of the topology file (of a derived machine: of its canonical TOML),
    /// hexadecimal.
    pub hash: String,
    /// The overlay the machine was derived by (absent for a plain topology).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayRecord>,
    /// GPUs used.
    pub gpus: u32,
    /// Faults injected into the simulated machine (`--fault`), as given; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

/// A derived machine's overlay, so that a report says which machine it ran on.
#[derive(Clone, Debug, Serialize)]
pub struct OverlayRecord {
    /// The base machine (`bundled:NAME` or a path).
    pub base: String,
    /// The overlay's text, as written.
    pub text: String,
    /// FNV-1a 64 hash of the overlay's text, hexadecimal.
    pub text_hash: String,
    /// What each edit changed.
    pub changes: Vec<String>,
}

impl OverlayRecord {
    /// The record of `topology`'s overlay, if it was derived by one.
    pub fn of(topology: &switchyard_sim::topology::Topology) -> Option<OverlayRecord> {
        topology.overlay.as_ref().map(|o| OverlayRecord {
            base: o.base.clone(),
            text: o.text.clone(),
            text_hash: format!("{:016x}", o.text_hash),
            changes: o.changes.clone(),
        })
    }
}

/// Graph facts.
#[derive(Clone, Debug, Serialize)]
pub struct GraphInfo {
    /// File name or generator spec.
    pub name: String,
    /// Summary statistics.
    pub summary: GraphSummary,
}

/// Partition facts.
#[derive(Clone, Debug, Serialize)]
pub struct PartitionInfo {
    /// Partitioner name.
    pub partitioner: String,
    /// Edge cut, border vertices and balance, as the partitioner reports them.
    pub metrics: serde_json::Value,
}

/// Runtime facts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RuntimeInfo {
    /// Runtime name.
    pub name: String,
    /// Bulk-synchronous options (bsp runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bsp: Option<BspOptions>,
    /// Distributed-worklist options (groute runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groute: Option<WorklistOptions>,
    /// Atos options (atos runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atos: Option<crate::runtime::atos::AtosOptions>,
    /// GUM options (gum runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gum: Option<crate::runtime::gum::GumOptions>,
}

/// Algorithm facts.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmInfo {
    /// Algorithm.
    pub name: Algorithm,
    /// Its parameters.
    pub params: AlgorithmParams,
}

/// One GPU's time and memory.
#[derive(Clone, Debug, Serialize)]
pub struct GpuReport {
    /// GPU number.
    pub gpu: u32,
    /// Time its compute was busy with kernels, in picoseconds.
    pub kernel_ps: u64,
    /// Time it was idle during the computation, in picoseconds.
    pub idle_ps: u64,
    /// Kernels launched.
    pub kernels: u64,
    /// Edges its kernels visited.
    pub edges: u64,
    /// Peak device memory, in bytes.
    pub memory_peak_bytes: u64,
}

/// One link direction's traffic.
#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    /// Link name.
    pub name: String,
    /// Bytes carried.
    pub bytes: u64,
    /// Busy fraction of the run's whole time (upload included).
    pub utilisation: f64,
}

/// Per-GPU reports from backend statistics over a computation of `time_ps` (the kernel time
/// counted includes the upload phase's kernels, of which there are none in bsp).
pub fn gpu_reports(stats: &BackendStats, time_ps: u64) -> Vec<GpuReport> {
    stats
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| GpuReport {
            gpu: i as u32,
            kernel_ps: d.kernel_busy_ps,
            idle_ps: time_ps.saturating_sub(d.kernel_busy_ps),
            kernels: d.kernels,
            edges: d.edges,
            memory_peak_bytes: d.memory_peak_bytes,
        })
        .collect()
}

/// Per-link reports; utilisation relative to `total_ps`, the run's whole virtual time.
pub fn link_reports(stats: &BackendStats, total_ps: u64) -> Vec<LinkReport> {
    stats
        .links
        .iter()
        .map(|l| LinkReport {
            name: l.name.clone(),
            bytes: l.bytes,
            utilisation: if total_ps == 0 { 0.0 } else { l.busy_ps as f64 / total_ps as f64 },
        })
        .collect()
}

impl RunReport {
    /// Whether validation ran and failed.
    pub fn failed_validation(&self) -> bool {
        self.validation.as_ref().is_some_and(|v| !v.is_ok())
    }

    /// The runtime with the options that change its behaviour, for tables and plot
    /// legends: `bsp`, `groute`, `groute+prio64`, `groute+fused`, `groute+fused+async`,
    /// `groute+widest-ring`,
    /// `atos+persistent-cta32`, `atos+discrete-warp+prio1+agg`.
    pub fn runtime_label(&self) -> String {
        let mut label = self.runtime.name.clone();
        if let Some(g) = &self.runtime.groute {
            if let Some(delta) = g.priority_delta {
                label += &format!("+prio{delta}");
            }
            // What `--groute-send auto` picks by the GPU count (the fused worker with the
            // asynchronous send on several GPUs) stays out of the label, so that a scaling
            // series keeps one name from one GPU up; the report's options say what ran.
            let async_send = g.send == crate::runtime::groute::worklist::SendMode::Async;
            let by_gpu_count = g.auto_send && async_send;
            if g.fused && !by_gpu_count {
                label += "+fused";
            }
            if async_send && !by_gpu_count {
                label += "+async";
            }
            if g.ring == crate::runtime::groute::worklist::RingOrder::Widest {
                label += "+widest-ring";
            }
        }
        if let Some(a) = &self.runtime.atos {
            label += &a.label_suffix();
        }
        label
    }

    /// A short human summary.
    pub fn summary_table(&self) -> String {
        let mut out = String::new();
        let validation = match &self.validation {
            None => "skipped".to_string(),
            Some(v) if v.is_ok() => format!("passed ({} vertices, {})", v.checked, v.rule),
            Some(v) => format!("FAILED: {v}"),
        };
        let _ = writeln!(
            out,
            "{} on {} ({} GPU{}, {} runtime, {} backend)",
            self.algorithm.name.name(),
            self.topology.name,
            self.topology.gpus,
            if self.topology.gpus == 1 { "" } else { "s" },
            self.runtime.name,
            self.backend.name
        );
        if let Some(o) = &self.topology.overlay {
            let _ = writeln!(
                out,
                "machine derived from {} by {} (fnv1a {}): {}",
                o.base,
                self.topology.source,
                self.topology.hash,
                o.changes.join("; ")
            );
        }
        if !self.topology.faults.is_empty() {
            let _ = writeln!(out, "faults: {}", self.topology.faults.join("; "));
        }
        let _ = writeln!(
            out,
            "graph {}: {} vertices, {} edges; partition {}",
            self.graph.name,
            self.graph.summary.vertices,
            self.graph.summary.edges,
            self.partition.partitioner
        );
        let _ = writeln!(
            out,
            "time {:.3} ms, {} supersteps, {:.3} GTEPS, {} edges visited, {} messages ({} bytes)",
            self.time_ps as f64 / 1e9,
            self.supersteps,
            self.gteps,
            self.work.edges_visited,
            self.work.messages,
            self.work.bytes_sent
        );
        if let Some(gum) = &self.gum {
            let _ = writeln!(out, "{}", gum.summary_line());
            let _ = writeln!(out, "{}", gum.busy_gap.summary_line());
        }
        let _ = writeln!(
            out,
            "{:>4} {:>12} {:>12} {:>8} {:>12}",
            "gpu", "kernel ms", "idle ms", "kernels", "peak MiB"
        );
        for g in &self.gpus {
            let _ = writeln!(
                out,
                "{:>4} {:>12.3} {:>12.3} {:>8} {:>12.1}",
                g.gpu,
                g.kernel_ps as f64 / 1e9,
                g.idle_ps as f64 / 1e9,
                g.kernels,
                g.memory_peak_bytes as f64 / (1024.0 * 1024.0)
            );
        }
        if let Some(g) = &self.groute {
            let _ = writeln!(
                out,
                "groute: {} work items, {} dropped on receipt, {} priority raises{}, ring {:?}",
                self.work.work_items,
                g.dropped,
                g.priority_raises,
                g.priority_delta.map_or(String::new(), |d| format!(" (delta {d})")),
                g.ring
            );
            for growth in &g.growths {
                let _ = writeln!(
                    out,
                    "note: the {} of gpu{} grew from {} to {} items (nothing was lost)",
                    growth.buffer, growth.gpu, growth.from_items, growth.to_items
                );
            }
        }
        if let Some(a) = &self.atos {
            let _ = writeln!(
                out,
                "atos: {} visits, {} {} ideal, extra work {:.3}; termination after {} waves",
                a.visits, a.ideal_visits, a.ideal_is, a.extra_work, a.termination_waves
            );
            if let Some(t) = &a.tiles {
                let _ = writeln!(
                    out,
                    "atos: on-chip tiles: {} tiles (at most {} vertices, {} arcs), {} arcs \
                     between them, {} messages, {} rounds of the busiest CTA",
                    t.tiles, t.max_vertices, t.max_arcs, t.remote_arcs, t.messages, t.rounds
                );
                if t.per_gpu.len() > 1 {
                    let per: Vec<String> = t.per_gpu.iter().map(|g| g.tiles.to_string()).collect();
                    let _ = writeln!(
                        out,
                        "atos: tiles a GPU {}; {} arcs and {} messages between GPUs",
                        per.join("/"),
                        t.cross_gpu_arcs,
                        t.cross_gpu_messages
                    );
                }
            } else if let Some(why) = &a.tiles_declined {
                let _ = writeln!(out, "atos: no on-chip tiles ({why})");
            }
            if a.queue_growths > 0 {
                let _ = writeln!(
                    out,
                    "atos: the queues overflowed and the run started again {} times with 4 \
                     times larger queues ({} items per queue; time counts from the first start)",
                    a.queue_growths,
                    a.queue_capacity.iter().max().copied().unwrap_or(0)
                );
            }
        }
        let _ = writeln!(out, "validation: {validation}");
        out
    }
}
