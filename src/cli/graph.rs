//! `switchyard graph ...`: the subcommand enum; each subcommand's arguments and body live
//! in `graph_io` (convert) and `graph_analysis` (info, generate, partition).

use super::{graph_analysis, graph_io};
use clap::Subcommand;

/// Graph subcommands.
#[derive(Subcommand, Debug)]
pub enum GraphCommand {
    /// Print a summary of a graph (text or JSON).
    Info(graph_analysis::InfoArgs),
    /// Generate a graph (R-MAT, Erdos-Renyi, grid, random geometric) and write it.
    Generate(graph_analysis::GenerateArgs),
    /// Convert a graph between formats (the binary CSR format is written only here).
    Convert(graph_io::ConvertArgs),
    /// Partition a graph and report edge cut, border vertices and balance.
    Partition(graph_analysis::PartitionArgs),
}

/// Runs a graph subcommand.
pub fn run(command: GraphCommand) -> anyhow::Result<()> {
    match command {
        GraphCommand::Info(args) => graph_analysis::info(args),
        GraphCommand::Generate(args) => graph_analysis::generate(args),
        GraphCommand::Convert(args) => graph_io::convert(args),
        GraphCommand::Partition(args) => graph_analysis::partition(args),
    }
}
