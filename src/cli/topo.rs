//! `switchyard topo list | show | check | bench`: inspect and validate machine topologies.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context as _;
use clap::Subcommand;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::{Topology, bundled_names};

/// Topology subcommands.
#[derive(Subcommand, Debug)]
pub enum TopoCommand {
    /// List the bundled topologies.
    List,
    /// Print a topology's GPU link matrix (nvidia-smi topo -m style) and optionally draw it;
    /// for an overlay, what it changed and the base's matrix beside the derived one.
    Show {
        /// A bundled name (see `topo list`), the path of a .toml file, or of an overlay.
        topology: String,
        /// Write an SVG drawing of the machine to this file.
        #[arg(long, value_name = "OUT")]
        svg: Option<std::path::PathBuf>,
        /// Print the machine as a plain topology file instead (an overlay's derived machine).
        #[arg(long)]
        toml: bool,
    },
    /// Validate topology files (or bundled names); one verdict line per input.
    Check {
        /// Bundled names or paths of .toml files.
        #[arg(required = true)]
        topologies: Vec<String>,
    },
    /// Run the validation microbenchmarks that apply to a topology.
    Bench {
        /// A bundled name or the path of a .toml file.
        topology: String,
        /// Interconnect model: `flow` (max-min fair flows) or `packet` (store-and-forward).
        #[arg(long, default_value = "flow", value_parser = ["flow", "packet"])]
        fidelity: String,
    },
}

/// Runs a topology subcommand.
pub fn run(command: TopoCommand) -> anyhow::Result<()> {
    match command {
        TopoCommand::List => list(),
        TopoCommand::Show { topology, svg, toml } => show(&topology, svg.as_deref(), toml),
        TopoCommand::Check { topologies } => check(&topologies),
        TopoCommand::Bench { topology, fidelity } => bench(&topology, fidelity),
    }
}

fn list() -> anyhow::Result<()> {
    let mut o = String::new();
    let width = bundled_names().iter().map(|n| n.len()).max().unwrap_or(0);
    for name in bundled_names() {
        let t = Topology::bundled(name)?;
        writeln!(o, "{name:width$}  {:>2} GPUs  {}", t.gpus.len(), t.description)?;
    }
    emit(&o)
}

fn show(name: &str, svg: Option<&std::path::Path>, toml: bool) -> anyhow::Result<()> {
    if let Some(out) = svg {
        super::output::check_output_path("--svg", out)?;
    }
    let t = Topology::open(name)?;
    if toml {
        return match &t.overlay {
            Some(o) => emit(&o.derived_toml),
            None => emit(
                switchyard_sim::topology::bundled_text(name)
                    .map_or_else(
                        || std::fs::read_to_string(name).unwrap_or_default(),
                        str::to_string,
                    )
                    .as_str(),
            ),
        };
    }
    let mut o = String::new();
    writeln!(o, "{} ({}, fnv1a {:016x})", t.name, t.source, t.source_hash)?;
    if !t.description.is_empty() {
        writeln!(o, "{}", t.description)?;
    }
    if let Some(overlay) = &t.overlay {
        writeln!(
            o,
            "derived from {} by an overlay (fnv1a {:016x} of its text):",
            overlay.base, overlay.text_hash
        )?;
        for change in &overlay.changes {
            writeln!(o, "  - {change}")?;
        }
    }
    writeln!(o)?;
    for g in &t.gpus {
        writeln!(
            o,
            "{:<8} {:<16} {:>4} SMs  {:>7} MiB  {:>6.0} GB/s  {} copy engines",
            g.name,
            g.model.name,
            g.model.sm_count,
            g.model.memory_bytes >> 20,
            g.model.memory_bandwidth_bytes_per_s as f64 / 1e9,
            g.copy_engines
        )?;
    }
    writeln!(o)?;
    o.push_str(&t.matrix());
    if let Some(overlay) = &t.overlay {
        // The base's matrix, so that the pairs the overlay changed can be compared.
        let base = overlay.base.strip_prefix("bundled:").unwrap_or(&overlay.base);
        if let Ok(b) = Topology::open(base) {
            writeln!(o, "\nbase {} for comparison:", b.name)?;
            o.push_str(&b.matrix());
        }
    }
    if let Some(out) = svg {
        std::fs::write(out, t.svg())
            .with_context(|| format!("--svg {}: writing the drawing failed", out.display()))?;
        writeln!(o, "\nwrote {}", out.display())?;
    }
    emit(&o)
}

fn check(inputs: &[String]) -> anyhow::Result<()> {
    let mut o = String::new();
    let mut failed = 0;
    for input in inputs {
        match Topology::open(input) {
            Ok(t) => {
                let plural =
                    |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                writeln!(
                    o,
                    "ok    {input}: `{}`, {}, {}, {}, {}, fnv1a {:016x}",
                    t.name,
                    plural(t.gpus.len(), "GPU"),
                    plural(t.sockets.len(), "socket"),
                    plural(t.links.len(), "link"),
                    plural(t.fabric().routes.len(), "route"),
                    t.source_hash
                )?
            }
            Err(e) => {
                failed += 1;
                // The error already names file, line and fix; keep the verdict on one line.
                writeln!(o, "FAIL  {}", e.to_string().replace("\n  fix: ", "; fix: "))?;
            }
        }
    }
    emit(&o)?;
    if failed > 0 {
        anyhow::bail!("{failed} of {} topologies failed the check", inputs.len());
    }
    Ok(())
}

fn bench(name: &str, fidelity: String) -> anyhow::Result<()> {
    let t = Topology::open(name)?;
    let fidelity = if fidelity == "packet" { Fidelity::Packet } else { Fidelity::Flow };
    let mut o = String::new();
    writeln!(o, "{}: validation microbenchmarks, {fidelity} fidelity", t.name)?;
    let results = switchyard_sim::topology::bench::run(&t, fidelity)?;
    if results.is_empty() {
        writeln!(o, "no validation microbenchmark applies to `{}`", t.name)?;
        return emit(&o);
    }
    let mut failed = 0;
    for r in &results {
        writeln!(o, "{r}")?;
        if !r.pass {
            failed += 1;
        }
    }
    emit(&o)?;
    if failed > 0 {
        anyhow::bail!("{failed} of {} checks outside their targets", results.len());
    }
    Ok(())
}

/// Writes command output to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}
