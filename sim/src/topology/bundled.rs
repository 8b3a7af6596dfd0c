//! Topology files embedded in the binary, so that it works without the repository.

/// The shared GPU model file, `topologies/gpu_models.toml`.
pub(crate) const GPU_MODELS: &str = include_str!("../../../topologies/gpu_models.toml");

/// `(name, text)` of every bundled topology, sorted by name.
const BUNDLED: &[(&str, &str)] = &[
    ("dgx-h100x8", include_str!("../../../topologies/dgx-h100x8.toml")),
    ("dgx-station-v100x4", include_str!("../../../topologies/dgx-station-v100x4.toml")),
    ("dgx1-v100", include_str!("../../../topologies/dgx1-v100.toml")),
    ("hetero-k40c-m4000", include_str!("../../../topologies/hetero-k40c-m4000.toml")),
    ("hgx-h200x4", include_str!("../../../topologies/hgx-h200x4.toml")),
    ("k40x6-pcie", include_str!("../../../topologies/k40x6-pcie.toml")),
    ("m60x8-pcie", include_str!("../../../topologies/m60x8-pcie.toml")),
    ("summit-ib-x8", include_str!("../../../topologies/summit-ib-x8.toml")),
    ("summit-node", include_str!("../../../topologies/summit-node.toml")),
];

/// Names of the bundled topologies, sorted.
pub fn bundled_names() -> Vec<&'static str> {
    BUNDLED.iter().map(|&(n, _)| n).collect()
}

/// The TOML text of a bundled topology (to derive other machines from it).
pub fn text(name: &str) -> Option<&'static str> {
    BUNDLED.iter().find(|&&(n, _)| n == name).map(|&(_, t)| t)
}
