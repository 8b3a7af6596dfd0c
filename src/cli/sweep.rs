//! `switchyard sweep` and the main job: runs over GPU counts, runtimes, algorithms and
//! topologies, validated, written as CSV, JSON and a scaling plot.

use super::graph_source::{GraphArgs, resolve_graph};
use super::run::RunOptions;
use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use switchyard::algo::{Algorithm, AlgorithmParams, prepare_graph};
use switchyard::driver::sweep::{SweepRow, fill_speedups, plot_scaling, to_csv, to_table};
use switchyard::driver::{BackendSetup, RuntimeKind, run_with_summary};
use switchyard::graph::Csr;
use switchyard::graph::summary::{GraphSummary, summarize};
use switchyard_sim::topology::Topology;

/// Arguments of `sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    options: RunOptions,
    /// Algorithms, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "bfs")]
    algos: Vec<Algorithm>,
    /// Runtimes, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "bsp")]
    runtimes: Vec<RuntimeKind>,
    /// Topologies (bundled names or files), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "dgx1-v100")]
    topologies: Vec<String>,
    /// GPU counts, comma-separated (default: 1 to each topology's GPU count).
    #[arg(long, value_delimiter = ',')]
    gpus: Option<Vec<u32>>,
    /// Output folder for sweep.csv, sweep.json, scaling.svg and scaling.png.
    #[arg(long, default_value = "reports/sweep")]
    out: PathBuf,
}

/// Runs `switchyard sweep`.
pub fn sweep_command(args: SweepArgs) -> anyhow::Result<()> {
    super::output::check_output_dir("--out", &args.out)?;
    let graph = resolve_graph(&args.graph, args.options.seed)?;
    // Each algorithm's parameters on this graph: --source as the file's id, the
    // .properties' defaults (said once per algorithm that used them).
    let mut params = BTreeMap::new();
    let mut lines = std::collections::BTreeSet::new();
    for &algorithm in &args.algos {
        let (p, line) = args.options.params(algorithm, &graph)?;
        lines.extend(line);
        params.insert((0, algorithm), p);
    }
    for line in lines {
        println!("{line}");
    }
    let topologies = args
        .topologies
        .iter()
        .map(|t| Topology::open(t).with_context(|| format!("opening topology `{t}`")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Faults name links and GPUs of every machine: checked before any run.
    for topology in &topologies {
        topology.clone().with_faults(&args.options.faults)?;
    }
    let plan = Plan {
        graphs: vec![(graph.csr, graph.name, None)],
        params,
        algorithms: args.algos,
        runtimes: args.runtimes,
        topologies,
        gpus: args.gpus,
        options: args.options,
    };
    let rows = plan.execute()?;
    write_outputs(&rows, &args.out, "switchyard sweep")
}

/// What a sweep runs: every combination of its lists.
pub struct Plan {
    /// Graphs with their names and, optionally, the BFS/SSSP source to use on each
    /// (otherwise the options' source).
    pub graphs: Vec<(Csr, String, Option<u32>)>,
    /// Algorithms.
    pub algorithms: Vec<Algorithm>,
    /// Runtimes.
    pub runtimes: Vec<RuntimeKind>,
    /// Machines.
    pub topologies: Vec<Topology>,
    /// GPU counts (`None`: 1 to each topology's count).
    pub gpus: Option<Vec<u32>>,
    /// Options shared by every run.
    pub options: RunOptions,
    /// Parameters of an algorithm on a graph (by graph index), where they were resolved
    /// against the graph (file ids, `.properties`); otherwise the options' own.
    pub params: BTreeMap<(usize, Algorithm), AlgorithmParams>,
}

impl Plan {
    /// Runs every combination with a progress bar; fails if any run fails validation.
    pub fn execute(&self) -> anyhow::Result<Vec<SweepRow>> {
        let mut jobs = Vec::new();
        for (graph_index, _) in self.graphs.iter().enumerate() {
            for &algorithm in &self.algorithms {
                for &runtime in &self.runtimes {
                    for topology in &self.topologies {
                        let max = topology.gpus.len() as u32;
                        let counts: Vec<u32> = match &self.gpus {
                            Some(list) => list.clone(),
                            None => (1..=max).collect(),
                        };
                        for gpus in counts {
                            if gpus == 0 || gpus > max {
                                bail!(
                                    "--gpus {gpus}: topology `{}` has {max} GPUs; give GPU \
                                     counts in 1..={max}",
                                    topology.name
                                );
                            }
                            jobs.push((graph_index, algorithm, runtime, topology, gpus));
                        }
                    }
                }
            }
        }
        let bar = ProgressBar::new(jobs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} runs {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let mut rows = Vec::with_capacity(jobs.len());
        let mut failures = Vec::new();
        // Graph summaries for the reports, once per (graph, prepared form).
        let mut summaries: BTreeMap<(usize, bool), GraphSummary> = BTreeMap::new();
        for (graph_index, algorithm, runtime, topology, gpus) in jobs {
            let (graph, name, source) = &self.graphs[graph_index];
            bar.set_message(format!("{} {} on {} x{gpus}", algorithm.name(), name, topology.name));
            let command_line = std::env::args().collect();
            let mut spec = match self.params.get(&(graph_index, algorithm)) {
                Some(&p) => self.options.spec_with(algorithm, runtime, gpus, p, command_line)?,
                None => self.options.spec(algorithm, runtime, gpus, command_line)?,
            };
            if let Some(source) = source {
                spec.params.source = *source;
            }
            let setup = BackendSetup::Sim(self.options.sim_setup(topology.clone(), gpus, false)?);
            let prepared = prepare_graph(algorithm.instance(&spec.params).as_ref(), graph);
            let is_prepared_copy = matches!(prepared, std::borrow::Cow::Owned(_));
            let summary = summaries
                .entry((graph_index, is_prepared_copy))
                .or_insert_with(|| summarize(&prepared));
            let output =
                run_with_summary(graph, name, Some(summary), &spec, &setup).with_context(|| {
                    format!("{} on {name}, {} with {gpus} GPUs", algorithm.name(), topology.name)
                })?;
            let r = &output.report;
            let validation = match &r.validation {
                None => "skipped",
                Some(v) if v.is_ok() => "passed",
                Some(v) => {
                    failures.push(format!(
                        "{} on {name}, {} x{gpus}: {v}",
                        algorithm.name(),
                        topology.name
                    ));
                    "failed"
                }
            };
            rows.push(SweepRow {
                graph: name.clone(),
                algorithm: algorithm.name().into(),
                runtime: r.runtime_label(),
                topology: topology.name.clone(),
                gpus,
                time_ms: r.time_ps as f64 / 1e9,
                speedup: 1.0,
                gteps: r.gteps,
                supersteps: r.supersteps,
                work_items: r.work.work_items,
                messages: r.work.messages,
                bytes_sent: r.work.bytes_sent,
                validation: validation.into(),
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        fill_speedups(&mut rows);
        if !failures.is_empty() {
            print!("{}", to_table(&rows));
            bail!("{} runs failed validation:\n{}", failures.len(), failures.join("\n"));
        }
        Ok(rows)
    }
}

/// Prints the table and writes CSV, JSON, SVG and PNG into `out`.
pub fn write_outputs(rows: &[SweepRow], out: &Path, title: &str) -> anyhow::Result<()> {
    print!("{}", to_table(rows));
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let csv = out.join("sweep.csv");
    std::fs::write(&csv, to_csv(rows)).with_context(|| format!("writing {}", csv.display()))?;
    let json = out.join("sweep.json");
    std::fs::write(&json, serde_json::to_string_pretty(rows)? + "\n")
        .with_context(|| format!("writing {}", json.display()))?;
    plot_scaling(rows, title, &out.join("scaling.svg"))?;
    plot_scaling(rows, title, &out.join("scaling.png"))?;
    println!(
        "wrote {}, {}, scaling.svg and scaling.png in {}",
        csv.file_name().map(|f| f.to_string_lossy()).unwrap_or_default(),
        json.file_name().map(|f| f.to_string_lossy()).unwrap_or_default(),
        out.display()
    );
    Ok(())
}
