//! Sweeps over GPU counts, runtimes, algorithms and topologies: a table of rows, written as
//! CSV and JSON, and a scaling-curve plot (SVG and PNG).

use plotters::prelude::FontStyle;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The font plots are drawn with, embedded so plots look the same everywhere.
const PLOT_FONT: &[u8] = include_bytes!("../embedded/DejaVuSansMono.ttf");

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SweepRow {
    /// Graph name.
    pub graph: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Runtime name.
    pub runtime: String,
    /// Topology name.
    pub topology: String,
    /// GPUs used.
    pub gpus: u32,
    /// Time of the computation in milliseconds (virtual on the simulator).
    pub time_ms: f64,
    /// Time on one GPU over this time (same graph, algorithm, runtime, topology).
    pub speedup: f64,
    /// Billions of edges visited per second.
    pub gteps: f64,
    /// Supersteps.
    pub supersteps: u32,
    /// Work items (bsp: frontier entries; groute: items the work kernels processed).
    pub work_items: u64,
    /// Vertex updates sent between GPUs.
    pub messages: u64,
    /// Bytes sent between GPUs.
    pub bytes_sent: u64,
    /// `passed`, `failed` or `skipped`.
    pub validation: String,
}

/// Fills in every row's speedup against the 1-GPU row of its series (1.0 where the series
/// has no 1-GPU row).
pub fn fill_speedups(rows: &mut [SweepRow]) {
    let mut base: BTreeMap<SeriesKey, f64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.gpus == 1) {
        base.insert(series_key(r), r.time_ms);
    }
    for r in rows.iter_mut() {
        r.speedup = match base.get(&series_key(r)) {
            Some(&t1) if r.time_ms > 0.0 => t1 / r.time_ms,
            _ => 1.0,
        };
    }
}

/// Identifies a scaling series: graph, algorithm, runtime, topology.
type SeriesKey = (String, String, String, String);

fn series_key(r: &SweepRow) -> SeriesKey {
    (r.graph.clone(), r.algorithm.clone(), r.runtime.clone(), r.topology.clone())
}

/// The rows as CSV (header first).
pub fn to_csv(rows: &[SweepRow]) -> String {
    let mut out = String::from(
        "graph,algorithm,runtime,topology,gpus,time_ms,speedup,gteps,supersteps,work_items,messages,bytes_sent,validation\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.6},{:.4},{:.6},{},{},{},{},{}",
            r.graph.replace(',', ";"),
            r.algorithm,
            r.runtime,
            r.topology,
            r.gpus,
            r.time_ms,
            r.speedup,
            r.gteps,
            r.supersteps,
            r.work_items,
            r.messages,
            r.bytes_sent,
            r.validation
        );
    }
    out
}

/// The rows as a fixed-width table.
pub fn to_table(rows: &[SweepRow]) -> String {
    let mut out = format!(
        "{:<28} {:<11} {:<22} {:<18} {:>4} {:>11} {:>8} {:>9} {:>6} {:>9}\n",
        "graph",
        "algorithm",
        "runtime",
        "topology",
        "gpus",
        "time ms",
        "speedup",
        "GTEPS",
        "steps",
        "valid"
    );
    for r in rows {
        let graph: String = r.graph.chars().take(28).collect();
        let _ = writeln!(
            out,
            "{:<28} {:<11} {:<22} {:<18} {:>4} {:>11.4} {:>8.2} {:>9.4} {:>6} {:>9}",
            graph,
            r.algorithm,
            r.runtime,
            r.topology,
            r.gpus,
            r.time_ms,
            r.speedup,
            r.gteps,
            r.supersteps,
            r.validation
        );
    }
    out
}

/// Errors writing plots.
#[derive(Debug, thiserror::Error)]
#[error("drawing the scaling plot {path}: {message}")]
pub struct PlotError {
    /// Output file.
    pub path: String,
    /// What failed.
    pub message: String,
}

/// What a plot shows over the GPU count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Time on one GPU over the time on N.
    Speedup,
    /// Time of the computation, in milliseconds.
    Time,
    /// Work items processed.
    WorkItems,
}

impl Metric {
    pub(crate) fn value(self, r: &SweepRow) -> f64 {
        match self {
            Metric::Speedup => r.speedup,
            Metric::Time => r.time_ms,
            Metric::WorkItems => r.work_items as f64,
        }
    }

    pub(crate) fn axis(self) -> &'static str {
        match self {
            Metric::Speedup => "speedup over 1 GPU",
            Metric::Time => "time (ms)",
            Metric::WorkItems => "work items",
        }
    }
}

/// Registers the embedded font as plots' `sans-serif` (registering twice is harmless: the
/// map entry is replaced).
pub(crate) fn register_plot_font() -> Result<(), &'static str> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, PLOT_FONT)
        .map_err(|_| "the embedded font is invalid")
}

/// Draws speedup over GPU count, one line per series, into `path` (SVG or PNG by extension).
pub fn plot_scaling(rows: &[SweepRow], title: &str, path: &Path) -> Result<(), PlotError> {
    plot_metric(rows, title, path, Metric::Speedup)
}

/// Draws `metric` over GPU count into `path` (SVG or PNG by extension): a panel per
/// algorithm and machine, a colour per runtime, the legend beside the panels
/// ([`super::plot::plot_rows`] lays out other figures).
pub fn plot_metric(
    rows: &[SweepRow],
    title: &str,
    path: &Path,
    metric: Metric,
) -> Result<(), PlotError> {
    let layout = super::plot::Layout { metric, ..Default::default() };
    super::plot::plot_rows(rows, title, path, &layout)
}

/// A tick label short enough for the axis: `25M`, `512K`, `3.5`.
pub(crate) fn compact_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}K", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod label_tests {
    #[test]
    fn tick_labels_are_compact() {
        assert_eq!(super::compact_number(25_000_000.0), "25.0M");
        assert_eq!(super::compact_number(512_000.0), "512K");
        assert_eq!(super::compact_number(3.5), "3.50");
        assert_eq!(super::compact_number(2_500_000_000.0), "2.5G");
    }
}
