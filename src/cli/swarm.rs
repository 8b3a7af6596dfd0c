//! `switchyard swarm`: swarm testing over a range of seeds on every core (see
//! [`switchyard::driver::swarm`]).

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use switchyard::driver::RuntimeKind;
use switchyard::driver::swarm::{
    DEFAULT_ARTIFACTS, SLOW_LIMIT_FACTOR, SwarmOptions, SwarmReport, SwarmSummary, parse_seeds,
    regression_line, run_seeds,
};

/// Arguments of `swarm`.
#[derive(clap::Args, Debug)]
pub struct SwarmArgs {
    /// Seeds to run: `A..B` (B exclusive) or one seed `N`. Each seed draws a whole
    /// configuration (machine, GPUs, runtime, algorithm, partitioner, fidelity, options,
    /// jitter, graph), runs it on the simulator and validates it.
    #[arg(long, default_value = "0..100")]
    seeds: String,
    /// Only this runtime (the rest of each configuration is still drawn).
    #[arg(long, value_enum)]
    runtime: Option<RuntimeKind>,
    /// Worker threads (default: every core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Write the JSON report (summary and every seed's configuration and result) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Append each failing seed, with the `switchyard run` line of its configuration, to
    /// this regression file (e.g. tests/data/swarm-regressions.txt, which a test replays).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Folder where a failing run's derived machine is written (its `switchyard run`
    /// reproduction names the file there).
    #[arg(long, default_value = DEFAULT_ARTIFACTS)]
    artifacts: PathBuf,
    /// Report a run still going after this many wall-clock seconds as hung.
    #[arg(long, default_value_t = 120)]
    hang_after_s: u64,
    /// Virtual time limit of each run, in milliseconds (a run past it fails with the
    /// simulator's time-limit error; a few valid Groute configurations with tiny packets or
    /// batches need more than the default).
    #[arg(long, default_value_t = 1000)]
    time_limit_ms: u64,
    /// A run that reaches the virtual time limit (or the event limit, 40 M events) runs
    /// again with no time limit and this many times the event limit: finishing there,
    /// validated, it is `slow` (a pass); reaching the event limit again, it fails (a
    /// livelock, or too slow to simulate). 1: no second chance.
    #[arg(long, default_value_t = SLOW_LIMIT_FACTOR)]
    slow_limit_factor: u64,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `switchyard swarm`.
pub fn swarm_command(args: SwarmArgs) -> anyhow::Result<()> {
    let seeds = parse_seeds(&args.seeds)?;
    if let Some(path) = &args.out {
        super::output::check_output_path("--out", path)?;
    }
    if let Some(path) = &args.record {
        super::output::check_output_path("--record", path)?;
    }
    super::output::check_output_dir("--artifacts", &args.artifacts)?;
    if args.time_limit_ms == 0 {
        bail!("--time-limit-ms 0: no run can finish in no virtual time; give at least 1");
    }
    if args.slow_limit_factor == 0 {
        bail!("--slow-limit-factor 0: the second chance would have no time; give 1 (none) or more");
    }
    if args.hang_after_s == 0 {
        bail!("--hang-after-s 0: every run would count as hung; give at least 1 second");
    }
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs 0: choose at least 1 worker"),
        Some(n) => n,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let artifacts = args.artifacts.display().to_string();
    let options = SwarmOptions {
        runtime: args.runtime,
        hang_after: Some(std::time::Duration::from_secs(args.hang_after_s)),
        virtual_time_limit_ps: Some(args.time_limit_ms.saturating_mul(1_000_000_000)),
        slow_limit_factor: Some(args.slow_limit_factor),
        event_limit: None,
    };
    let total = seeds.end - seeds.start;
    eprintln!("swarm: seeds {}..{} ({total}) on {jobs} workers", seeds.start, seeds.end);
    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(total) };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} seeds, {msg} [{elapsed} / ~{eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message("0 failed");
    let started = std::time::Instant::now();
    let mut failed = 0u64;
    let mut progress = |result: &switchyard::driver::swarm::SeedResult| {
        if !result.verdict.passed() {
            failed += 1;
            bar.set_message(format!("{failed} failed"));
            let first = result.verdict.message().lines().next().unwrap_or("");
            let line = format!("seed {} {}: {first}", result.seed, result.verdict.name());
            if bar.is_hidden() { eprintln!("{line}") } else { bar.println(line) }
        }
        bar.inc(1);
    };
    let results = run_seeds(seeds.clone(), &options, jobs, &mut progress);
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let summary = SwarmSummary::new(&seeds, args.runtime, &results, &artifacts);
    print!("{}", summary.text());
    println!(
        "{} runs in {wall:.1} s on {jobs} workers ({:.1} runs/s)",
        summary.runs,
        summary.runs as f64 / wall.max(1e-9)
    );
    // Derived machines of failing runs, for their `switchyard run` reproduction.
    for result in results.iter().filter(|r| !r.verdict.passed()) {
        if let Some(case) = &result.case
            && let (Some(file), Some(derived)) =
                (case.topology_file(&artifacts), &case.machine.derived)
        {
            std::fs::create_dir_all(&args.artifacts)
                .with_context(|| format!("creating {}", args.artifacts.display()))?;
            std::fs::write(&file, &derived.toml).with_context(|| format!("writing {file}"))?;
        }
    }
    if let Some(path) = &args.record {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        for result in results.iter().filter(|r| !r.verdict.passed()) {
            writeln!(file, "{}", regression_line(result, args.runtime))
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if let Some(path) = &args.out {
        let json = serde_json::to_string_pretty(&SwarmReport::new(
            &summary,
            &results,
            args.time_limit_ms.saturating_mul(1_000_000_000),
        ))?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing report {}", path.display()))?;
    }
    if summary.failed() > 0 {
        bail!("{} of {} swarm runs failed (reproductions above)", summary.failed(), summary.runs);
    }
    Ok(())
}
