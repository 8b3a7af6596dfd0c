//! `switchyard graph info | generate | partition`.

/// Arguments of `graph info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {}

/// Arguments of `graph generate`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {}

/// Arguments of `graph partition`.
#[derive(clap::Args, Debug)]
pub struct PartitionArgs {}

/// Runs `graph info`.
pub fn info(_args: InfoArgs) -> anyhow::Result<()> {
    anyhow::bail!("graph info is not built yet")
}

/// Runs `graph generate`.
pub fn generate(_args: GenerateArgs) -> anyhow::Result<()> {
    anyhow::bail!("graph generate is not built yet")
}

/// Runs `graph partition`.
pub fn partition(_args: PartitionArgs) -> anyhow::Result<()> {
    anyhow::bail!("graph partition is not built yet")
}
