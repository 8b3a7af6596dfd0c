//! Command-line front end: argument parsing and dispatch. Each subcommand lives in its own
//! module; errors become `anyhow` here, at the edge.

mod graph;
mod graph_analysis;
mod graph_io;
mod topo;

use clap::{Parser, Subcommand};

/// Asynchronous multi-GPU graph analytics on a deterministic simulator and on real GPUs.
#[derive(Parser, Debug)]
#[command(name = "switchyard", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Inspect, generate, convert and partition graphs.
    #[command(subcommand)]
    Graph(graph::GraphCommand),
    /// List, show, check and benchmark machine topologies.
    #[command(subcommand)]
    Topo(topo::TopoCommand),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Graph(command)) => graph::run(command),
        Some(Command::Topo(command)) => topo::run(command),
        None => {
            println!("switchyard: no command given; see `switchyard --help`");
            Ok(())
        }
    }
}
