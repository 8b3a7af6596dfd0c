//! Generator specs: `NAME:key=value,key=value`, parsed with errors that list the valid keys.

use super::RmatParams;
use crate::graph::GraphError;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Which generator, with its own parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum GeneratorKind {
    /// Graph500 Kronecker / R-MAT (`rmat:scale=..,ef=..,a=..,b=..,c=..,noise=..,permute=..,dedup=..`).
    Rmat(RmatParams),
    /// Erdos-Renyi G(n, m) (`er:n=..,m=..`).
    ErdosRenyi {
        /// Vertices.
        n: u32,
        /// Edges drawn.
        m: u64,
    },
    /// Erdos-Renyi G(n, p) (`er:n=..,p=..`).
    ErdosRenyiGnp {
        /// Vertices.
        n: u32,
        /// Probability of each pair.
        p: f64,
    },
    /// 2D grid (`grid2d:w=..,h=..,drop=..`).
    Grid2d {
        /// Width in vertices.
        w: u32,
        /// Height in vertices.
        h: u32,
        /// Probability of dropping each edge.
        drop: f64,
    },
    /// 3D grid (`grid3d:w=..,h=..,d=..,drop=..`).
    Grid3d {
        /// Width in vertices.
        w: u32,
        /// Height in vertices.
        h: u32,
        /// Depth in vertices.
        d: u32,
        /// Probability of dropping each edge.
        drop: f64,
    },
    /// Road-like random geometric graph (`rgg:n=..,degree=..`).
    Rgg {
        /// Vertices.
        n: u32,
        /// Target mean degree (arcs per vertex).
        degree: f64,
    },
}

/// A complete generator description: kind, seed, weights, direction.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratorSpec {
    /// The generator and its parameters.
    pub kind: GeneratorKind,
    /// Seed of every random stream.
    pub seed: u64,
    /// Uniform integer weights `lo..=hi` per edge, if any.
    pub weights: Option<(u32, u32)>,
    /// Directed output (R-MAT and Erdos-Renyi only; grids and RGGs are undirected).
    pub directed: bool,
}

const COMMON_KEYS: &[&str] = &["seed", "weights"];
const GENERATORS: &[(&str, &[&str])] = &[
    ("rmat", &["scale", "ef", "a", "b", "c", "noise", "permute", "dedup", "directed"]),
    ("er", &["n", "m", "p", "directed"]),
    ("grid2d", &["w", "h", "drop"]),
    ("grid3d", &["w", "h", "d", "drop"]),
    ("rgg", &["n", "degree"]),
];

/// Parsed `key=value` pairs that remember which keys were used.
struct Keys<'a> {
    spec: &'a str,
    values: BTreeMap<&'a str, &'a str>,
}

impl<'a> Keys<'a> {
    fn error(&self, reason: String) -> GraphError {
        GraphError::InvalidSpec { spec: self.spec.to_string(), reason }
    }

    fn get<T: FromStr>(
        &self,
        key: &str,
        default: Option<T>,
        expected: &str,
    ) -> Result<T, GraphError> {
        match self.values.get(key) {
            Some(raw) => raw
                .parse()
                .map_err(|_| self.error(format!("{key}={raw} is not valid: expected {expected}"))),
            None => default.ok_or_else(|| {
                self.error(format!("missing key `{key}` ({expected}); add `{key}=...`"))
            }),
        }
    }

    fn fraction(&self, key: &str, default: f64) -> Result<f64, GraphError> {
        let x: f64 = self.get(key, Some(default), "a number in [0, 1]")?;
        if !(0.0..=1.0).contains(&x) {
            return Err(
                self.error(format!("{key}={x} is out of range: expected a number in [0, 1]"))
            );
        }
        Ok(x)
    }

    fn positive_u32(&self, key: &str, default: Option<u32>) -> Result<u32, GraphError> {
        let x: u32 = self.get(key, default, "a positive integer below 2^32")?;
        if x == 0 {
            return Err(self.error(format!("{key}=0: expected a positive integer")));
        }
        Ok(x)
    }
}

impl GeneratorSpec {
    /// Parses `NAME:key=value,...`. Errors name the spec, the offending key or value and the
    /// valid keys.
    pub fn parse(spec: &str) -> Result<Self, GraphError> {
        let err = |reason: String| GraphError::InvalidSpec { spec: spec.to_string(), reason };
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let name = name.trim();
        let Some(&(_, own_keys)) = GENERATORS.iter().find(|(g, _)| *g == name) else {
            let names: Vec<&str> = GENERATORS.iter().map(|g| g.0).collect();
            return Err(err(format!(
                "unknown generator `{name}`: use one of {} (e.g. `rmat:scale=16,ef=16`)",
                names.join(", ")
            )));
        };
        let mut values = BTreeMap::new();
        for pair in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(err(format!("`{pair}` is not of the form key=value")));
            };
            let key = key.trim();
            if !own_keys.contains(&key) && !COMMON_KEYS.contains(&key) {
                let valid: Vec<&str> = own_keys.iter().chain(COMMON_KEYS).copied().collect();
                return Err(err(format!(
                    "unknown key `{key}` for {name}: valid keys are {}",
                    valid.join(", ")
                )));
            }
            if values.insert(key, value.trim()).is_some() {
                return Err(err(format!("key `{key}` is given twice; keep one")));
            }
        }
        let keys = Keys { spec, values };
        let seed = keys.get("seed", Some(1u64), "an unsigned 64-bit integer")?;
        let weights = match keys.values.get("weights") {
            None | Some(&"none") => None,
            Some(raw) => Some(parse_weights(raw).ok_or_else(|| {
                err(format!(
                    "weights={raw} is not valid: expected LO..HI with 1 <= LO <= HI (e.g. 1..64), \
                     HI alone for 1..HI, or none"
                ))
            })?),
        };
        let directed = keys.get("directed", Some(false), "true or false")?;
        let kind = match name {
            "rmat" => {
                let d = RmatParams::default();
                let params = RmatParams {
                    scale: keys.get("scale", None, "log2 of the vertex count, 1..=31")?,
                    edge_factor: keys.get("ef", Some(d.edge_factor), "edges per vertex")?,
                    a: keys.fraction("a", d.a)?,
                    b: keys.fraction("b", d.b)?,
                    c: keys.fraction("c", d.c)?,
                    noise: keys.get("noise", Some(d.noise), "a number (0 or e.g. 0.1)")?,
                    permute: keys.get("permute", Some(d.permute), "true or false")?,
                    dedup: keys.get("dedup", Some(d.dedup), "true or false")?,
                };
                params.validate().map_err(err)?;
                GeneratorKind::Rmat(params)
            }
            "er" => {
                let n = keys.positive_u32("n", None)?;
                match (keys.values.contains_key("m"), keys.values.contains_key("p")) {
                    (true, true) | (false, false) => {
                        return Err(err(
                            "give exactly one of m (edge count, G(n, m)) and p (pair probability, \
                             G(n, p))"
                                .into(),
                        ));
                    }
                    (true, false) => {
                        let m: u64 = keys.get("m", None, "the number of edges to draw")?;
                        if n < 2 && m > 0 {
                            return Err(err(format!(
                                "n={n} has no pairs of distinct vertices: use n >= 2"
                            )));
                        }
                        GeneratorKind::ErdosRenyi { n, m }
                    }
                    (false, true) => {
                        GeneratorKind::ErdosRenyiGnp { n, p: keys.fraction("p", 0.0)? }
                    }
                }
            }
            "grid2d" | "grid3d" => {
                let w = keys.positive_u32("w", None)?;
                let h = keys.positive_u32("h", None)?;
                let d = if name == "grid3d" { keys.positive_u32("d", None)? } else { 1 };
                let drop = keys.fraction("drop", 0.0)?;
                if u64::from(w) * u64::from(h) * u64::from(d) > u64::from(u32::MAX) {
                    return Err(err(format!(
                        "{w} x {h} x {d} vertices exceed the u32 id space; make the grid smaller"
                    )));
                }
                if name == "grid2d" {
                    GeneratorKind::Grid2d { w, h, drop }
                } else {
                    GeneratorKind::Grid3d { w, h, d, drop }
                }
            }
            _ => {
                let n = keys.positive_u32("n", None)?;
                let degree: f64 =
                    keys.get("degree", Some(3.0), "the target mean degree, e.g. 3")?;
                if !(degree > 0.0 && degree <= 32.0) {
                    return Err(err(format!(
                        "degree={degree} is out of range: road-like graphs use 2..4; accepted 0 < degree <= 32"
                    )));
                }
                GeneratorKind::Rgg { n, degree }
            }
        };
        if directed
            && !matches!(
                kind,
                GeneratorKind::Rmat(_)
                    | GeneratorKind::ErdosRenyi { .. }
                    | GeneratorKind::ErdosRenyiGnp { .. }
            )
        {
            return Err(err(format!("`directed` applies to rmat and er only, not {name}")));
        }
        Ok(GeneratorSpec { kind, seed, weights, directed })
    }
}

fn parse_weights(raw: &str) -> Option<(u32, u32)> {
    let (lo, hi) = match raw.split_once("..") {
        Some((lo, hi)) => (lo.parse().ok()?, hi.trim_start_matches('=').parse().ok()?),
        None => (1, raw.parse().ok()?),
    };
    (1 <= lo && lo <= hi).then_some((lo, hi))
}

impl FromStr for GeneratorSpec {
    type Err = GraphError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GeneratorSpec::parse(s)
    }
}

impl fmt::Display for GeneratorSpec {
    /// The canonical spec with every key spelled out; parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            GeneratorKind::Rmat(p) => write!(
                f,
                "rmat:scale={},ef={},a={},b={},c={},noise={},permute={},dedup={},directed={}",
                p.scale, p.edge_factor, p.a, p.b, p.c, p.noise, p.permute, p.dedup, self.directed
            )?,
            GeneratorKind::ErdosRenyi { n, m } => {
                write!(f, "er:n={n},m={m},directed={}", self.directed)?
            }
            GeneratorKind::ErdosRenyiGnp { n, p } => {
                write!(f, "er:n={n},p={p},directed={}", self.directed)?
            }
            GeneratorKind::Grid2d { w, h, drop } => write!(f, "grid2d:w={w},h={h},drop={drop}")?,
            GeneratorKind::Grid3d { w, h, d, drop } => {
                write!(f, "grid3d:w={w},h={h},d={d},drop={drop}")?
            }
            GeneratorKind::Rgg { n, degree } => write!(f, "rgg:n={n},degree={degree}")?,
        }
        write!(f, ",seed={}", self.seed)?;
        if let Some((lo, hi)) = self.weights {
            write!(f, ",weights={lo}..{hi}")?;
        }
        Ok(())
    }
}
