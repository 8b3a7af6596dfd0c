//! `switchyard topo ...`

use clap::Subcommand;

/// Topology subcommands.
#[derive(Subcommand, Debug)]
pub enum TopoCommand {
    /// List the bundled topologies.
    List,
}

/// Runs a topology subcommand.
pub fn run(command: TopoCommand) -> anyhow::Result<()> {
    match command {
        TopoCommand::List => anyhow::bail!("topo list is not built yet"),
    }
}
