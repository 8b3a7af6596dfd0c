//! `switchyard graph ...`

use clap::Subcommand;

/// Graph subcommands.
#[derive(Subcommand, Debug)]
pub enum GraphCommand {
    /// Print a summary of a graph.
    Info,
}

/// Runs a graph subcommand.
pub fn run(command: GraphCommand) -> anyhow::Result<()> {
    match command {
        GraphCommand::Info => anyhow::bail!("graph info is not built yet"),
    }
}
