//! `switchyard graph convert`.

/// Arguments of `graph convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {}

/// Runs `graph convert`.
pub fn convert(_args: ConvertArgs) -> anyhow::Result<()> {
    anyhow::bail!("graph convert is not built yet")
}
