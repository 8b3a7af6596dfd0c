//! Figures of sweep rows over the GPU count: one panel per value of the chosen fields (by
//! default one per algorithm and machine), one line per series in each, colour by one field
//! (by default the runtime) and marker by the rest, and the legend in a column of its own to
//! the right of the panels, so it never covers a line.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

use super::sweep::{Metric, PlotError, SweepRow, compact_number, register_plot_font};

/// A field of a sweep row that panels, colours and markers are chosen by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    /// The algorithm.
    Algorithm,
    /// The runtime label.
    Runtime,
    /// The machine.
    Topology,
    /// The graph.
    Graph,
}

impl Field {
    const ALL: [Field; 4] = [Field::Algorithm, Field::Runtime, Field::Topology, Field::Graph];

    fn of(self, r: &SweepRow) -> &str {
        match self {
            Field::Algorithm => &r.algorithm,
            Field::Runtime => &r.runtime,
            Field::Topology => &r.topology,
            Field::Graph => &r.graph,
        }
    }
}

/// How a figure is laid out.
#[derive(Clone, Debug)]
pub struct Layout {
    /// One panel per distinct combination of these fields (none: one panel).
    pub panels: Vec<Field>,
    /// Lines of one colour share this field's value.
    pub color: Field,
    /// What is plotted.
    pub metric: Metric,
    /// A logarithmic value axis (for times that differ by orders of magnitude).
    pub log_y: bool,
    /// Panels per row of the figure (0: up to 3, as fits).
    pub columns: usize,
}

impl Default for Layout {
    /// Panels per algorithm and machine, colour per runtime, speedup.
    fn default() -> Layout {
        Layout {
            panels: vec![Field::Algorithm, Field::Topology],
            color: Field::Runtime,
            metric: Metric::Speedup,
            log_y: false,
            columns: 0,
        }
    }
}

/// Colours in order (Tableau 10): distinct in print and for common colour blindness.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draws `rows` as `layout` says into `path` (SVG or PNG by extension).
pub fn plot_rows(
    rows: &[SweepRow],
    title: &str,
    path: &Path,
    layout: &Layout,
) -> Result<(), PlotError> {
    let fail = |message: String| PlotError { path: path.display().to_string(), message };
    register_plot_font().map_err(|e| fail(e.into()))?;
    let figure = Figure::new(rows, layout);
    let size = figure.size();
    let is_png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if is_png {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        figure.draw(title, root).map_err(|e| fail(e.to_string()))
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        figure.draw(title, root).map_err(|e| fail(e.to_string()))
    }
}

/// A panel's series: (colour index, marker index) -> points (GPUs, value).
type Series = BTreeMap<(usize, usize), Vec<(u32, f64)>>;

/// Series grouped into panels, with their colours and markers.
struct Figure<'a> {
    layout: &'a Layout,
    /// Panel title -> series (colour index, marker index) -> points.
    panels: BTreeMap<String, Series>,
    colors: Vec<String>,
    markers: Vec<String>,
    max_gpus: u32,
}

impl<'a> Figure<'a> {
    fn new(rows: &[SweepRow], layout: &'a Layout) -> Figure<'a> {
        let rest: Vec<Field> = Field::ALL
            .into_iter()
            .filter(|f| !layout.panels.contains(f) && *f != layout.color)
            .collect();
        let varies = |f: Field| rows.iter().any(|r| f.of(r) != f.of(&rows[0]));
        let marker_fields: Vec<Field> = rest.into_iter().filter(|&f| varies(f)).collect();
        let key = |fields: &[Field], r: &SweepRow| {
            fields.iter().map(|f| f.of(r)).collect::<Vec<_>>().join(" ")
        };
        let mut colors: Vec<String> = Vec::new();
        let mut markers: Vec<String> = Vec::new();
        let mut panels: BTreeMap<String, Series> = BTreeMap::new();
        let index_of = |list: &mut Vec<String>, v: String| {
            list.iter().position(|x| *x == v).unwrap_or_else(|| {
                list.push(v);
                list.len() - 1
            })
        };
        for r in rows {
            let c = index_of(&mut colors, layout.color.of(r).to_string());
            let m = index_of(&mut markers, key(&marker_fields, r));
            let panel = match layout.panels.as_slice() {
                [Field::Algorithm, Field::Topology] => format!("{} on {}", r.algorithm, r.topology),
                fields => key(fields, r),
            };
            panels
                .entry(panel)
                .or_default()
                .entry((c, m))
                .or_default()
                .push((r.gpus, layout.metric.value(r)));
        }
        for series in panels.values_mut() {
            for points in series.values_mut() {
                points.sort_by_key(|p| p.0);
            }
        }
        let max_gpus = rows.iter().map(|r| r.gpus).max().unwrap_or(1).max(2);
        Figure { layout, panels, colors, markers, max_gpus }
    }

    fn columns(&self) -> usize {
        let n = self.panels.len().max(1);
        match self.layout.columns {
            0 => n.min(if n == 4 { 2 } else { 3 }),
            c => c.min(n),
        }
    }

    fn legend_width(&self) -> u32 {
        let longest = self.colors.iter().chain(&self.markers).map(|s| s.chars().count()).max();
        (48 + 8 * longest.unwrap_or(8) as u32).clamp(160, 460)
    }

    fn size(&self) -> (u32, u32) {
        let cols = self.columns() as u32;
        let rows = self.panels.len().max(1).div_ceil(self.columns()) as u32;
        (cols * 460 + self.legend_width(), rows * 340 + 44)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        title: &str,
        root: DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error + 'static>>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 22))?;
        let (w, _) = root.dim_in_pixel();
        let (plots, legend) = root.split_horizontally(w - self.legend_width());
        let cols = self.columns();
        let rows = self.panels.len().max(1).div_ceil(cols);
        let areas = plots.split_evenly((rows, cols));
        for ((name, series), area) in self.panels.iter().zip(areas.iter()) {
            self.panel(name, series, area)?;
        }
        self.legend(&legend)?;
        root.present()?;
        Ok(())
    }

    fn panel<DB: DrawingBackend>(
        &self,
        name: &str,
        series: &Series,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error + 'static>>
    where
        DB::ErrorType: 'static,
    {
        let values = series.values().flatten().map(|p| p.1);
        let max = values.clone().fold(f64::MIN, f64::max).max(1e-9);
        let x_range = 1u32..self.max_gpus;
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(name, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(58);
        let metric = self.layout.metric;
        // The mesh and the lines, the same on a log and a linear y axis (their chart types
        // differ, so a macro rather than a function).
        macro_rules! draw_mesh_and_lines {
            ($chart:expr) => {{
                let chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc("GPUs")
                    .y_desc(metric.axis())
                    .y_label_formatter(&|v| compact_number(*v))
                    .label_style(("sans-serif", 12))
                    .draw()?;
                for (&(c, m), points) in series {
                    let color = COLORS[c % COLORS.len()];
                    chart.draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(2),
                    ))?;
                    chart.draw_series(points.iter().map(|&p| marker(m, p, color)))?;
                }
            }};
        }
        if self.layout.log_y {
            let min = values.filter(|v| *v > 0.0).fold(f64::MAX, f64::min).min(max);
            let mut chart =
                builder.build_cartesian_2d(x_range, ((min / 1.5)..(max * 1.5)).log_scale())?;
            draw_mesh_and_lines!(&mut chart);
        } else {
            let mut chart = builder.build_cartesian_2d(x_range, 0f64..max * 1.1)?;
            draw_mesh_and_lines!(&mut chart);
        }
        Ok(())
    }

    fn legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error + 'static>>
    where
        DB::ErrorType: 'static,
    {
        let font = ("sans-serif", 13).into_font();
        let mut y = 40;
        let heading = |area: &DrawingArea<DB, Shift>, text: &str, y: i32| {
            area.draw(&Text::new(
                text.to_string(),
                (8, y),
                ("sans-serif", 13).into_font().color(&BLACK),
            ))
        };
        heading(area, &field_name(self.layout.color), y)?;
        y += 20;
        for (i, label) in self.colors.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            area.draw(&PathElement::new(vec![(10, y + 7), (34, y + 7)], color.stroke_width(2)))?;
            area.draw(&Circle::new((22, y + 7), 3, color.filled()))?;
            area.draw(&Text::new(label.clone(), (42, y), font.clone()))?;
            y += 20;
        }
        if self.markers.len() > 1 || self.markers.first().is_some_and(|m| !m.is_empty()) {
            y += 12;
            heading(area, "marker", y)?;
            y += 20;
            for (i, label) in self.markers.iter().enumerate() {
                area.draw(&marker(i, (22, y + 7), BLACK))?;
                area.draw(&Text::new(label.clone(), (42, y), font.clone()))?;
                y += 20;
            }
        }
        Ok(())
    }
}

fn field_name(f: Field) -> String {
    match f {
        Field::Algorithm => "algorithm",
        Field::Runtime => "runtime",
        Field::Topology => "machine",
        Field::Graph => "graph",
    }
    .to_string()
}

/// The `m`-th marker shape at `at`: filled circle, triangle, cross, hollow circle, repeated.
fn marker<DB: DrawingBackend, Coord: Clone + 'static>(
    m: usize,
    at: Coord,
    color: RGBColor,
) -> DynElement<'static, DB, Coord> {
    match m % 4 {
        0 => Circle::new(at, 4, color.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, color.filled()).into_dyn(),
        2 => Cross::new(at, 4, color.stroke_width(2)).into_dyn(),
        _ => Circle::new(at, 4, color.stroke_width(2)).into_dyn(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(algorithm: &str, runtime: &str, graph: &str, gpus: u32, time_ms: f64) -> SweepRow {
        SweepRow {
            graph: graph.into(),
            algorithm: algorithm.into(),
            runtime: runtime.into(),
            topology: "dgx1-v100".into(),
            gpus,
            time_ms,
            speedup: 1.0,
            gteps: 0.0,
            supersteps: 1,
            work_items: 1,
            messages: 0,
            bytes_sent: 0,
            validation: "passed".into(),
        }
    }

    fn rows() -> Vec<SweepRow> {
        let mut rows = Vec::new();
        for gpus in 1..=8 {
            for (i, rt) in ["bsp", "groute", "gum", "atos"].into_iter().enumerate() {
                for g in ["power", "rmat"] {
                    rows.push(row("bfs", rt, g, gpus, 1.0 + gpus as f64 * (i + 1) as f64));
                }
            }
            rows.push(row("pr", "bsp", "power", gpus, 10.0 / gpus as f64));
        }
        super::super::sweep::fill_speedups(&mut rows);
        rows
    }

    #[test]
    fn panels_per_algorithm_and_machine_colours_per_runtime_markers_per_graph() {
        let rows = rows();
        let layout = Layout::default();
        let f = Figure::new(&rows, &layout);
        let panels: Vec<&String> = f.panels.keys().collect();
        assert_eq!(panels, ["bfs on dgx1-v100", "pr on dgx1-v100"]);
        assert_eq!(f.colors, ["bsp", "groute", "gum", "atos"]);
        assert_eq!(f.markers, ["power", "rmat"]);
        assert_eq!(f.panels["bfs on dgx1-v100"].len(), 8, "4 runtimes x 2 graphs");
        assert_eq!(f.panels["pr on dgx1-v100"].len(), 1);
    }

    /// Numbers following `key="` at every occurrence in `s`.
    fn attrs<'s>(s: &'s str, key: &str) -> Vec<&'s str> {
        s.match_indices(&format!("{key}=\""))
            .map(|(i, m)| {
                let rest = &s[i + m.len()..];
                &rest[..rest.find('"').unwrap_or(0)]
            })
            .collect()
    }

    #[test]
    fn legend_lies_beside_the_panels_never_over_a_line() {
        let rows = rows();
        let layout = Layout::default();
        let dir = std::env::temp_dir().join(format!("switchyard-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.svg");
        plot_rows(&rows, "t", &path, &layout).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let f = Figure::new(&rows, &layout);
        let split = (f.size().0 - f.legend_width()) as i64;
        // Every legend label is right of the split.
        for label in ["bsp", "groute", "gum", "atos", "power", "rmat"] {
            let at = svg
                .find(&format!(">\n{label}\n</text>"))
                .or_else(|| svg.find(&format!(">{label}</text>")));
            let at = at.unwrap_or_else(|| panic!("legend label {label} missing"));
            let open = svg[..at].rfind("<text").unwrap();
            let x: i64 = attrs(&svg[open..at], "x")[0].parse().unwrap();
            assert!(x >= split, "label {label} at x {x}, left of the legend column at {split}");
        }
        // Every thick line (series or legend sample) lies wholly on one side of the split.
        let mut data_lines = 0;
        for element in svg.split("<polyline").skip(1) {
            let element = &element[..element.find("/>").unwrap()];
            if !element.contains("stroke-width=\"2\"") {
                continue;
            }
            let xs: Vec<i64> = attrs(element, "points")[0]
                .split_whitespace()
                .map(|p| p.split(',').next().unwrap().parse().unwrap())
                .collect();
            let left = xs.iter().all(|&x| x < split);
            assert!(
                left || xs.iter().all(|&x| x >= split),
                "a line crosses into the legend: {xs:?}"
            );
            data_lines += usize::from(left && xs.len() == 8);
        }
        assert_eq!(
            data_lines, 9,
            "the eight BFS series and the PageRank one are drawn in the panels"
        );
    }
}
