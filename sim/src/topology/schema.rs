//! The TOML schema of topology files, as parsed (before validation). Documented for users in
//! `topologies/SCHEMA.md`; keep the two in step. Every table denies unknown keys so that a
//! typo is an error, not a silently ignored setting.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A whole topology file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTopology {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub measured_on: Option<String>,
    #[serde(default)]
    pub link_type: BTreeMap<String, Spanned<RawLinkType>>,
    #[serde(default)]
    pub gpu_model: BTreeMap<String, Spanned<RawGpuModel>>,
    #[serde(default)]
    pub socket: Vec<Spanned<RawDevice>>,
    #[serde(default)]
    pub switch: Vec<Spanned<RawSwitch>>,
    #[serde(default)]
    pub nic: Vec<Spanned<RawDevice>>,
    #[serde(default)]
    pub gpu: Vec<Spanned<RawGpu>>,
    #[serde(default)]
    pub link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    pub route: Vec<Spanned<RawRoute>>,
    #[serde(default)]
    pub peer: Vec<Spanned<RawPeer>>,
}

/// `topologies/gpu_models.toml`: only GPU models.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGpuModelsFile {
    #[serde(default)]
    pub gpu_model: BTreeMap<String, Spanned<RawGpuModel>>,
}

/// `[link_type.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLinkType {
    pub kind: Spanned<String>,
    pub bandwidth_gb_s: Spanned<f64>,
    pub latency_ns: Spanned<f64>,
    pub max_payload_bytes: Spanned<i64>,
    pub header_bytes: Spanned<i64>,
    #[serde(default)]
    pub peer_access: Option<bool>,
    #[serde(default)]
    pub setup_ns: Option<Spanned<f64>>,
}

/// `[gpu_model.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGpuModel {
    pub sm_count: Spanned<i64>,
    pub resident_threads_per_sm: Spanned<i64>,
    pub memory_mib: Spanned<i64>,
    pub memory_bandwidth_gb_s: Spanned<f64>,
    pub launch_overhead_ns: Spanned<f64>,
    pub sync_overhead_ns: Spanned<f64>,
    pub kernel_min_ns: Spanned<f64>,
    pub dependent_access_ns: Spanned<f64>,
    pub item_ps: Spanned<f64>,
    pub edge_ps: Spanned<f64>,
    pub atomic_ps: Spanned<f64>,
    pub copy_setup_ns: Spanned<f64>,
    #[serde(default)]
    pub copy_engines: Option<Spanned<i64>>,
    #[serde(default)]
    pub launch_issue_ns: Option<Spanned<f64>>,
    /// Of `launch_issue_ns`, the host time before the launch's kernel can start (default
    /// `launch_issue_ns`; only with it, and at most it).
    #[serde(default)]
    pub launch_lead_ns: Option<Spanned<f64>>,
    /// The host model's cost per kind of stream operation other than a launch (each
    /// defaults to `launch_issue_ns`; only with it).
    #[serde(default)]
    pub copy_issue_ns: Option<Spanned<f64>>,
    #[serde(default)]
    pub read_issue_ns: Option<Spanned<f64>>,
    #[serde(default)]
    pub write_issue_ns: Option<Spanned<f64>>,
    #[serde(default)]
    pub record_issue_ns: Option<Spanned<f64>>,
    #[serde(default)]
    pub wait_issue_ns: Option<Spanned<f64>>,
    /// The host model's cost of one event query of a completion poll (default 0; only with
    /// `launch_issue_ns`).
    #[serde(default)]
    pub poll_query_ns: Option<Spanned<f64>>,
    /// `[gpu_model.NAME.kernel_cost.KERNEL]`: per-kernel costs (calibrated models only).
    #[serde(default)]
    pub kernel_cost: BTreeMap<String, Spanned<RawKernelCost>>,
}

/// `[gpu_model.NAME.kernel_cost.KERNEL]`: one kernel contract's fitted cost.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawKernelCost {
    pub fixed_ns: Spanned<f64>,
    #[serde(default)]
    pub item_ps: Option<Spanned<f64>>,
    #[serde(default)]
    pub edge_ps: Option<Spanned<f64>>,
    #[serde(default)]
    pub atomic_ps: Option<Spanned<f64>>,
    #[serde(default)]
    pub vertex_ps: Option<Spanned<f64>>,
    #[serde(default)]
    pub output_ps: Option<Spanned<f64>>,
    #[serde(default)]
    pub round_ns: Option<Spanned<f64>>,
    /// Per item of the first `ramp_items` items of a launch or round (with `ramp_items`).
    #[serde(default)]
    pub ramp_item_ps: Option<Spanned<f64>>,
    /// Items per launch or round that `ramp_item_ps` is charged for (with `ramp_item_ps`).
    #[serde(default)]
    pub ramp_items: Option<Spanned<i64>>,
    /// Per arc on a launch's critical path (the busiest block's arcs, summed over rounds).
    #[serde(default)]
    pub path_edge_ps: Option<Spanned<f64>>,
    /// Where the numbers come from (free text; required so that none is unsourced).
    pub source: Spanned<String>,
}

/// `[[socket]]` and `[[nic]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDevice {
    pub name: Spanned<String>,
    #[serde(default)]
    pub node: Option<String>,
}

/// `[[switch]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSwitch {
    pub name: Spanned<String>,
    pub kind: Spanned<String>,
    #[serde(default)]
    pub node: Option<String>,
}

/// `[[gpu]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGpu {
    pub name: Spanned<String>,
    pub model: Spanned<String>,
    #[serde(default)]
    pub copy_engines: Option<Spanned<i64>>,
    #[serde(default)]
    pub node: Option<String>,
}

/// `[[link]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLink {
    pub a: Spanned<String>,
    pub b: Spanned<String>,
    #[serde(rename = "type")]
    pub link_type: Spanned<String>,
    #[serde(default)]
    pub lanes: Option<Spanned<i64>>,
}

/// `[[route]]`: an explicit path override.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRoute {
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub via: Spanned<Vec<String>>,
    #[serde(default)]
    pub both_directions: Option<bool>,
}

/// `[[peer]]`: a peer-access override for a GPU pair.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPeer {
    pub a: Spanned<String>,
    pub b: Spanned<String>,
    pub access: bool,
}
