//! `switchyard plot`: one metric of one or more sweeps over the GPU count, so that runs of
//! different sweeps (soft priority on and off, two runtimes) share one figure.

use anyhow::{Context, bail};
use std::path::PathBuf;
use switchyard::driver::sweep::{Metric, SweepRow, plot_metric};

/// Arguments of `plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// The sweeps' `sweep.json` files, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    sweeps: Vec<PathBuf>,
    /// What to plot.
    #[arg(long, value_enum, default_value = "speedup")]
    metric: Metric,
    /// Keep only the rows of this algorithm.
    #[arg(long)]
    algo: Option<String>,
    /// Title of the figure.
    #[arg(long, default_value = "switchyard")]
    title: String,
    /// Output file (`.svg` or `.png`).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `switchyard plot`.
pub fn plot_command(args: PlotArgs) -> anyhow::Result<()> {
    super::output::check_output_path("--out", &args.out)?;
    let mut rows: Vec<SweepRow> = Vec::new();
    for path in &args.sweeps {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "--sweeps {}: cannot be read; give the sweep.json that `switchyard sweep --out \
                 DIR` wrote in DIR",
                path.display()
            )
        })?;
        let mut these: Vec<SweepRow> = serde_json::from_str(&text).with_context(|| {
            format!("{}: not a sweep.json written by `switchyard sweep`", path.display())
        })?;
        rows.append(&mut these);
    }
    if let Some(algo) = &args.algo {
        rows.retain(|r| &r.algorithm == algo);
    }
    if rows.is_empty() {
        bail!(
            "no rows to plot: the sweeps are empty{}; give sweeps with rows{}",
            args.algo.as_ref().map(|a| format!(" or none is of --algo {a}")).unwrap_or_default(),
            if args.algo.is_some() { ", or another --algo" } else { "" }
        );
    }
    plot_metric(&rows, &args.title, &args.out, args.metric)?;
    println!("wrote {}", args.out.display());
    Ok(())
}
