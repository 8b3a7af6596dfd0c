//! Sweeps over GPU counts, runtimes, algorithms and topologies: a table of rows, written as
//! CSV and JSON, and a scaling-curve plot (SVG and PNG).

use plotters::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The font plots are drawn with, embedded so plots look the same everywhere.
const PLOT_FONT: &[u8] = include_bytes!("../embedded/DejaVuSansMono.ttf");

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// Draws speedup over GPU count, one line per series, into `path` (SVG or PNG by extension).
pub fn plot_scaling(rows: &[SweepRow], title: &str, path: &Path) -> Result<(), PlotError> {
    let fail = |message: String| PlotError { path: path.display().to_string(), message };
    // Registering twice is harmless (the map entry is replaced).
    plotters::style::register_font("sans-serif", FontStyle::Normal, PLOT_FONT)
        .map_err(|_| fail("the embedded font is invalid".into()))?;
    let is_png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if is_png {
        let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
        draw(rows, title, root).map_err(|e| fail(e.to_string()))
    } else {
        let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
        draw(rows, title, root).map_err(|e| fail(e.to_string()))
    }
}

fn draw<DB: DrawingBackend>(
    rows: &[SweepRow],
    title: &str,
    root: DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), Box<dyn std::error::Error + 'static>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let mut series: BTreeMap<SeriesKey, Vec<(u32, f64)>> = BTreeMap::new();
    for r in rows {
        series.entry(series_key(r)).or_default().push((r.gpus, r.speedup));
    }
    let max_gpus = rows.iter().map(|r| r.gpus).max().unwrap_or(1).max(2);
    let max_speedup = rows.iter().map(|r| r.speedup).fold(1.0f64, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(1u32..max_gpus, 0f64..max_speedup)?;
    chart
        .configure_mesh()
        .x_desc("GPUs")
        .y_desc("speedup over 1 GPU")
        .label_style(("sans-serif", 14))
        .draw()?;
    for (i, ((graph, algorithm, runtime, topology), mut points)) in series.into_iter().enumerate() {
        points.sort_by_key(|p| p.0);
        let color = Palette99::pick(i).to_rgba();
        let label = format!("{algorithm} {runtime} {graph} ({topology})");
        chart
            .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
