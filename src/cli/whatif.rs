//! `switchyard whatif`: the what-if studies of `reports/whatif.md`, each a figure (SVG) and
//! its rows (JSON), and `numbers.md`, the tables the report's paragraphs quote. Machines
//! that are not bundled are overlays in `topologies/overlays/`, embedded here so the command
//! runs from any folder.

use anyhow::Context as _;
use clap::Parser;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use switchyard::algo::Algorithm;
use switchyard::driver::RuntimeKind;
use switchyard::driver::plot::{Field, Layout, plot_rows};
use switchyard::driver::sweep::{Metric, SweepRow, fill_speedups};
use switchyard::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use switchyard::graph::{Csr, LoadOptions, load_graph_from_bytes};
use switchyard_sim::topology::Topology;

use super::run::RunOptions;
use super::sweep::Plan;

/// The overlays the studies derive machines with (`topologies/overlays/`).
const OVERLAYS: &[(&str, &str)] = &[
    ("dgx1-v100-2lanes.toml", include_str!("../../topologies/overlays/dgx1-v100-2lanes.toml")),
    ("dgx1-v100-nvswitch.toml", include_str!("../../topologies/overlays/dgx1-v100-nvswitch.toml")),
    ("dgx-h200x8.toml", include_str!("../../topologies/overlays/dgx-h200x8.toml")),
    ("summit-ib-hdr.toml", include_str!("../../topologies/overlays/summit-ib-hdr.toml")),
];

/// The studies, in report order.
const STUDIES: [&str; 6] =
    ["dgx1-links", "dgx1-links-large", "machines", "summit", "h100-h200", "winners"];

/// Arguments of `whatif`.
#[derive(clap::Args, Debug)]
pub struct WhatifArgs {
    /// Output folder for each study's SVG and JSON and numbers.md.
    #[arg(long, default_value = "reports/whatif")]
    out: PathBuf,
    /// R-MAT scale of the scale-free graph; the road-like and uniform graphs get as many
    /// vertices (2^scale).
    #[arg(long, default_value_t = 14)]
    scale: u32,
    /// Studies to run, comma-separated (default: all): dgx1-links, dgx1-links-large (R-MAT
    /// scale + 3, bulk-synchronous only), machines, summit, h100-h200, winners.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// Default run options, parsed from an empty command line so they match the CLI's.
#[derive(Parser, Debug)]
struct Defaults {
    #[command(flatten)]
    options: RunOptions,
}

/// A graph of a study with its name and BFS source (the highest-degree vertex).
struct Graph {
    csr: Csr,
    name: String,
    source: u32,
}

impl Graph {
    fn new(csr: Csr, name: String) -> Graph {
        let source = (0..csr.num_vertices()).max_by_key(|&v| csr.degree(v)).unwrap_or(0);
        Graph { csr, name, source }
    }
}

/// Runs `switchyard whatif`.
pub fn whatif_command(args: WhatifArgs) -> anyhow::Result<()> {
    super::output::check_output_dir("--out", &args.out)?;
    for s in &args.only {
        anyhow::ensure!(
            STUDIES.contains(&s.as_str()),
            "--only {s}: no such study; give some of {}",
            STUDIES.join(", ")
        );
    }
    anyhow::ensure!((8..=22).contains(&args.scale), "--scale {}: give 8 to 22", args.scale);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let started = std::time::Instant::now();
    let wanted = |s: &str| args.only.is_empty() || args.only.iter().any(|o| o == s);
    let s = args.scale;
    let rmat = format!("rmat:scale={s},ef=16,seed=1");
    let scale_free = Graph::new(generate(&GeneratorSpec::parse(&rmat)?)?, rmat.clone());
    let mut numbers = format!(
        "# What-if numbers\n\nWritten by `switchyard whatif --scale {s}` (commit {}); times are \
         virtual milliseconds of the simulator. The report's paragraphs (`reports/whatif.md`) \
         read these tables.\n",
        switchyard::driver::git_sha()
    );
    let all = RuntimeKind::ALL.to_vec();
    // Atos's residual PageRank is left out: its speculation does about 100x the ideal work
    // (reports/atos.md), so a simulated run of 2^14 vertices takes over ten minutes.
    let no_atos = vec![RuntimeKind::Bsp, RuntimeKind::Groute, RuntimeKind::Gum];
    let bfs_pr = [(Algorithm::Bfs, all.clone()), (Algorithm::PrResidual, no_atos.clone())];

    if wanted("dgx1-links") {
        let machines =
            machines(&["dgx1-v100", "dgx1-v100-2lanes.toml", "dgx1-v100-nvswitch.toml"])?;
        let rows = study(&[&scale_free], &bfs_pr, &machines, None)?;
        let layout = layout(&[Field::Algorithm, Field::Runtime], Field::Topology, false);
        finish(
            &args.out,
            "dgx1-links",
            "DGX-1: hybrid cube mesh vs a second lane on every NVLink pair vs an NVSwitch",
            &rows,
            &layout,
        )?;
        numbers += &ratio_table(
            "dgx1-links: time on the DGX-1 over time on each variant (gain; >1 is faster)",
            &rows,
            "dgx1-v100",
            &[2, 4, 8],
        );
    }
    write_numbers(&args.out, &numbers)?;
    if wanted("dgx1-links-large") {
        // Eight times the vertices, on the two bulk-synchronous runtimes only (Groute's and
        // Atos's runs of this size take minutes each on the simulator).
        let spec = format!("rmat:scale={},ef=16,seed=1", s + 3);
        let large = Graph::new(generate(&GeneratorSpec::parse(&spec)?)?, spec);
        let machines =
            machines(&["dgx1-v100", "dgx1-v100-2lanes.toml", "dgx1-v100-nvswitch.toml"])?;
        let bulk = vec![RuntimeKind::Bsp, RuntimeKind::Gum];
        let rows = study(
            &[&large],
            &[(Algorithm::Bfs, bulk.clone()), (Algorithm::Pr, bulk)],
            &machines,
            None,
        )?;
        let layout = layout(&[Field::Algorithm, Field::Runtime], Field::Topology, false);
        finish(
            &args.out,
            "dgx1-links-large",
            "DGX-1 links on a graph 8x larger: mesh vs second lane vs NVSwitch",
            &rows,
            &layout,
        )?;
        numbers += &ratio_table(
            "dgx1-links-large: time on the DGX-1 over time on each variant, R-MAT scale + 3",
            &rows,
            "dgx1-v100",
            &[2, 4, 8],
        );
        numbers += &time_table("dgx1-links-large: time (ms) and speedup", &rows, &[1, 8]);
    }
    write_numbers(&args.out, &numbers)?;
    if wanted("machines") {
        let machines = machines(&["m60x8-pcie", "dgx1-v100", "dgx-h100x8"])?;
        let rows = study(&[&scale_free], &bfs_pr, &machines, None)?;
        let layout = layout(&[Field::Algorithm, Field::Runtime], Field::Topology, true);
        finish(
            &args.out,
            "machines",
            "M60 PCIe tree vs DGX-1 vs DGX H100, every runtime",
            &rows,
            &layout,
        )?;
        numbers += &time_table("machines: time (ms) and speedup over 1 GPU", &rows, &[1, 8]);
    }
    write_numbers(&args.out, &numbers)?;
    if wanted("summit") {
        let machines = machines(&["summit-ib-x8", "summit-ib-hdr.toml"])?;
        let rows = study(&[&scale_free], &bfs_pr, &machines, None)?;
        let layout = layout(&[Field::Algorithm, Field::Runtime], Field::Topology, false);
        finish(
            &args.out,
            "summit",
            "Summit over InfiniBand, 1 to 8 nodes: EDR vs HDR",
            &rows,
            &layout,
        )?;
        numbers += &time_table("summit: time (ms) and speedup over 1 node", &rows, &[1, 2, 4, 8]);
        numbers +=
            &ratio_table("summit: time on EDR over time on HDR", &rows, "summit-ib-x8", &[2, 8]);
    }
    write_numbers(&args.out, &numbers)?;
    if wanted("h100-h200") {
        let machines = machines(&["dgx-h100x8", "dgx-h200x8.toml"])?;
        let rows = study(&[&scale_free], &bfs_pr, &machines, None)?;
        let layout = layout(&[Field::Algorithm, Field::Runtime], Field::Topology, false);
        finish(&args.out, "h100-h200", "DGX H100 vs the same machine with H200s", &rows, &layout)?;
        numbers += &ratio_table(
            "h100-h200: time on H100s over time on H200s",
            &rows,
            "dgx-h100x8",
            &[1, 2, 4, 8],
        );
    }
    write_numbers(&args.out, &numbers)?;
    if wanted("winners") {
        let power = load_graph_from_bytes(
            "embedded:power.graph",
            super::graph_source::EMBEDDED_POWER,
            &LoadOptions::default(),
        )?;
        let n = 1u64 << s;
        let road = format!("rgg:n={n},degree=3");
        let uniform = format!("er:n={n},m={}", 8 * n);
        let graphs = [
            scale_free,
            Graph::new(generate(&GeneratorSpec::parse(&road)?)?, road),
            Graph::new(generate(&GeneratorSpec::parse(&uniform)?)?, uniform),
            Graph::new(power.csr, "power-grid (real)".into()),
        ];
        let weighted: Vec<Graph> = graphs
            .iter()
            .map(|g| {
                Ok(Graph {
                    csr: with_uniform_weights(&g.csr, 1, 64, 1)?,
                    name: g.name.clone(),
                    source: g.source,
                })
            })
            .collect::<anyhow::Result<_>>()?;
        let plain: Vec<&Graph> = graphs.iter().collect();
        let weighted: Vec<&Graph> = weighted.iter().collect();
        let machine = machines(&["dgx1-v100"])?;
        let gpus = Some(vec![1, 2, 4, 8]);
        let mut rows = study(
            &plain,
            &[
                (Algorithm::Bfs, all.clone()),
                (Algorithm::Cc, no_atos.clone()),
                (Algorithm::PrResidual, no_atos.clone()),
            ],
            &machine,
            gpus.clone(),
        )?;
        rows.extend(study(&weighted, &[(Algorithm::Sssp, no_atos)], &machine, gpus)?);
        let layout = Layout {
            columns: 4,
            ..layout(&[Field::Graph, Field::Algorithm], Field::Runtime, true)
        };
        finish(
            &args.out,
            "winners",
            "Which runtime wins where: graph class x algorithm on the DGX-1",
            &rows,
            &layout,
        )?;
        numbers += &winner_table(
            "winners: the fastest runtime (and its margin over the next) on the DGX-1",
            &rows,
        );
    }
    write_numbers(&args.out, &numbers)?;
    println!(
        "wrote {} in {:.0} s",
        args.out.join("numbers.md").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Writes `numbers.md` (after every study, so a run stopped part-way keeps what it did).
fn write_numbers(out: &Path, numbers: &str) -> anyhow::Result<()> {
    let path = out.join("numbers.md");
    std::fs::write(&path, numbers).with_context(|| format!("writing {}", path.display()))
}

/// Opens bundled machines by name and the studies' overlays by file name.
fn machines(names: &[&str]) -> anyhow::Result<Vec<Topology>> {
    names
        .iter()
        .map(|n| match OVERLAYS.iter().find(|(f, _)| f == n) {
            Some((file, text)) => Topology::from_str(&format!("topologies/overlays/{file}"), text)
                .with_context(|| format!("deriving {file}")),
            None => Topology::bundled(n).with_context(|| format!("opening {n}")),
        })
        .collect()
}

/// Runs every graph x (algorithm, its runtimes) x machine x GPU count, validated.
fn study(
    graphs: &[&Graph],
    algorithms: &[(Algorithm, Vec<RuntimeKind>)],
    topologies: &[Topology],
    gpus: Option<Vec<u32>>,
) -> anyhow::Result<Vec<SweepRow>> {
    let mut rows = Vec::new();
    for (algorithm, runtimes) in algorithms {
        let plan = Plan {
            graphs: graphs
                .iter()
                .map(|g| (g.csr.clone(), g.name.clone(), Some(g.source)))
                .collect(),
            algorithms: vec![*algorithm],
            runtimes: runtimes.clone(),
            topologies: topologies.to_vec(),
            gpus: gpus.clone(),
            options: Defaults::parse_from(["switchyard"]).options,
            params: Default::default(),
        };
        rows.extend(plan.execute()?);
    }
    fill_speedups(&mut rows);
    Ok(rows)
}

fn layout(panels: &[Field], color: Field, log_y: bool) -> Layout {
    Layout { panels: panels.to_vec(), color, metric: Metric::Time, log_y, columns: 4 }
}

/// Writes a study's rows (JSON) and figure (SVG).
fn finish(
    out: &Path,
    name: &str,
    title: &str,
    rows: &[SweepRow],
    layout: &Layout,
) -> anyhow::Result<()> {
    let json = out.join(format!("{name}.json"));
    std::fs::write(&json, serde_json::to_string_pretty(rows)? + "\n")
        .with_context(|| format!("writing {}", json.display()))?;
    let svg = out.join(format!("{name}.svg"));
    plot_rows(rows, title, &svg, layout)?;
    println!("{name}: {} runs, wrote {} and {}", rows.len(), json.display(), svg.display());
    Ok(())
}

/// A row's series without its machine: (graph, algorithm, runtime).
fn series(r: &SweepRow) -> (String, String, String) {
    (r.graph.clone(), r.algorithm.clone(), r.runtime.clone())
}

/// Per series and GPU count: the time on `base` over the time on each other machine.
fn ratio_table(title: &str, rows: &[SweepRow], base: &str, gpus: &[u32]) -> String {
    let time: BTreeMap<_, f64> =
        rows.iter().map(|r| ((series(r), r.topology.clone(), r.gpus), r.time_ms)).collect();
    let others: BTreeSet<&str> =
        rows.iter().map(|r| r.topology.as_str()).filter(|t| *t != base).collect();
    let mut out = format!("\n## {title}\n\n| algorithm | runtime | machine |");
    for g in gpus {
        let _ = write!(out, " {g} GPUs |");
    }
    out += "\n|---|---|---|";
    out += &"---:|".repeat(gpus.len());
    out += "\n";
    let keys: BTreeSet<_> = rows.iter().map(series).collect();
    for key in &keys {
        for other in &others {
            let _ = write!(out, "| {} | {} | {other} |", key.1, key.2);
            for &g in gpus {
                match (
                    time.get(&(key.clone(), base.to_string(), g)),
                    time.get(&(key.clone(), other.to_string(), g)),
                ) {
                    (Some(b), Some(o)) if *o > 0.0 => {
                        let _ = write!(out, " {:.2} |", b / o);
                    }
                    _ => out += " - |",
                }
            }
            out += "\n";
        }
    }
    out
}

/// Per series and machine: time at each of `gpus` and the speedup at the last.
fn time_table(title: &str, rows: &[SweepRow], gpus: &[u32]) -> String {
    let at: BTreeMap<_, &SweepRow> =
        rows.iter().map(|r| ((series(r), r.topology.clone(), r.gpus), r)).collect();
    let mut out = format!("\n## {title}\n\n| algorithm | runtime | machine |");
    for g in gpus {
        let _ = write!(out, " {g} GPU ms |");
    }
    let last = gpus.last().copied().unwrap_or(1);
    let _ = writeln!(out, " speedup at {last} |");
    out += "|---|---|---|";
    out += &"---:|".repeat(gpus.len() + 1);
    out += "\n";
    let keys: BTreeSet<_> = rows.iter().map(|r| (series(r), r.topology.clone())).collect();
    for (key, machine) in &keys {
        let _ = write!(out, "| {} | {} | {machine} |", key.1, key.2);
        for &g in gpus {
            match at.get(&(key.clone(), machine.clone(), g)) {
                Some(r) => {
                    let _ = write!(out, " {:.3} |", r.time_ms);
                }
                None => out += " - |",
            }
        }
        match at.get(&(key.clone(), machine.clone(), last)) {
            Some(r) => {
                let _ = writeln!(out, " {:.2} |", r.speedup);
            }
            None => out += " - |\n",
        }
    }
    out
}

/// Per graph, algorithm and GPU count: the fastest runtime and its margin over the next.
fn winner_table(title: &str, rows: &[SweepRow]) -> String {
    let mut groups: BTreeMap<(String, String, u32), Vec<&SweepRow>> = BTreeMap::new();
    for r in rows {
        groups.entry((r.graph.clone(), r.algorithm.clone(), r.gpus)).or_default().push(r);
    }
    let mut out = format!(
        "\n## {title}\n\n| graph | algorithm | GPUs | fastest | ms | next | x slower |\n|---|---|---:|---|---:|---|---:|\n"
    );
    for ((graph, algorithm, gpus), mut group) in groups {
        group.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
        let best = group[0];
        let (next, ratio) = match group.get(1) {
            Some(n) => (n.runtime.as_str(), format!("{:.2}", n.time_ms / best.time_ms.max(1e-12))),
            None => ("-", "-".into()),
        };
        let _ = writeln!(
            out,
            "| {graph} | {algorithm} | {gpus} | {} | {:.3} | {next} | {ratio} |",
            best.runtime, best.time_ms
        );
    }
    out
}
