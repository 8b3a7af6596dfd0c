//! Swarm testing: per seed, a whole configuration drawn at random (machine, GPU count,
//! runtime, algorithm, partitioner, fidelity, Groute and BSP options, jitter, graph), run on
//! the simulator and validated; many seeds on every core, reported in seed order.
//!
//! In the manner of TigerBeetle's simulator and madsim: the configuration is a pure function
//! of the seed (a `ChaCha8Rng` seeded by it), so a failing seed is its own reproduction, and
//! each case also prints the one `switchyard run` line that reruns it. Seeds run on worker
//! threads fed through `crossbeam-channel`; results are gathered by seed, so the summary and
//! the JSON report are identical whatever the number of workers.
//!
//! A run fails when it does not validate, returns an error, panics, or runs past
//! [`SwarmOptions::hang_after`] of wall-clock time (reported as hung; its thread is
//! abandoned and a fresh worker replaces it). The configuration drawn for a seed changes when
//! this module's drawing code changes: the regression file keeps each failing seed with its
//! configuration as a `switchyard run` line.

use super::{RunError, RunOutput, RunSpec, RuntimeKind, SimSetup, prepare, run_prepared_sim};
use crate::algo::{Algorithm, AlgorithmParams, GrouteOperators};
use crate::backend::BackendError;
use crate::backend::sim::SimConfig;
use crate::graph::generate::{GeneratorSpec, generate, with_uniform_weights};
use crate::graph::{Csr, GraphError, LoadOptions, load_graph_from_bytes};
use crate::runtime::RuntimeError;
use crate::runtime::atos::{AtosOptions, Comm, KernelStrategy, WorkerWidth};
use crate::runtime::bsp::{BspOptions, Communication, Duplication};
use crate::runtime::groute::worklist::{RingOrder, WorklistOptions};
use crate::runtime::gum::GumOptions;
use crate::runtime::gum::planner::Triggers;
use crossbeam_channel::{RecvTimeoutError, unbounded};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchyard_sim::fault::{FaultKind, FaultSpec};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::{Topology, bundled_names, bundled_text, fnv1a_64};

/// Schema name of the swarm's JSON report.
pub const SCHEMA: &str = "switchyard.swarm-report";
/// Schema version of the swarm's JSON report.
pub const SCHEMA_VERSION: u32 = 1;

/// Default virtual time past which a swarm run stops with the simulator's time-limit error
/// (which names what each agent waits for). Almost every swarm run takes well under a
/// virtual second; a few valid but slow configurations (Groute with 1-8 item packets, or
/// one-item batches) take longer and are reported at this limit: raise it
/// ([`SwarmOptions::virtual_time_limit_ps`], `--time-limit-ms`) to tell them from hangs.
pub const VIRTUAL_TIME_LIMIT_PS: u64 = 1_000_000_000_000;

/// The second chance of a run that reached its first limits
/// ([`SwarmOptions::slow_limit_factor`], `--slow-limit-factor`): it runs again from the start with no virtual
/// time limit, this many times the event limit and a fresh wall-clock allowance. Finishing
/// there, validated, it is [`Verdict::Slow`] (a pass); reaching the event limit again, it
/// fails as [`Verdict::Error`] with the simulator's report of what every stream and transfer
/// waits for.
///
/// Why events and not virtual time tell a hang: in a discrete-event simulation a run that
/// never ends either runs out of events while something still waits (reported at once as a
/// deadlock) or processes events without end; virtual time only moves with events, and a run
/// can need much of it with few events (a straggler 40x slower than its peers, a link at a
/// fifth of its bandwidth: seed 104 of the groute soak took 139 virtual seconds in 7 M
/// events). The first, virtual time limit ends most long runs early and cheaply.
pub const SLOW_LIMIT_FACTOR: u64 = 32;

/// Simulator events a swarm run may process before its first limit
/// ([`SwarmOptions::event_limit`]; times [`SLOW_LIMIT_FACTOR`] on its second chance): bounds
/// the wall-clock time of a run that is slow to simulate, so that it ends at a limit that
/// names what it waits for instead of at the wall-clock hang limit. Swarm runs that finish
/// take well under ten million events; 40 M take some seconds on one core.
pub const EVENT_LIMIT: u64 = 40_000_000;

/// Where a swarm's derived machines are written when a run fails (the `switchyard run`
/// reproduction names the file there).
pub const DEFAULT_ARTIFACTS: &str = "target/swarm";

/// The real graphs a swarm draws from: the path the reproduction names (relative to the
/// repository root) and the bytes, embedded so that the binary needs no checkout.
const REAL_GRAPHS: &[(&str, &[u8])] = &[
    ("tests/data/graphs/chesapeake.mtx", include_bytes!("../../tests/data/graphs/chesapeake.mtx")),
    ("src/embedded/power.graph", include_bytes!("../embedded/power.graph")),
];

/// The partitioners a swarm draws from.
pub const PARTITIONERS: [&str; 5] = ["random", "biased-random", "seg", "hash", "metis"];

/// Errors of a swarm (not of its runs: those are [`Verdict`]s).
#[derive(Debug, thiserror::Error)]
pub enum SwarmError {
    /// A seed range that is empty or malformed.
    #[error("--seeds {found}: expected A..B with A < B (e.g. 0..1000), or one seed N")]
    Seeds {
        /// What was given.
        found: String,
    },
    /// The drawn graph could not be made (a bug in the drawing code: report the seed).
    #[error("seed {seed}: drawing the graph `{graph}` failed: {source}")]
    Graph {
        /// The seed.
        seed: u64,
        /// The graph drawn.
        graph: String,
        /// Why.
        source: Box<GraphError>,
    },
    /// A derived machine did not load (a bug in the drawing code: report the seed).
    #[error("seed {seed}: the derived machine from `{base}` does not load: {reason}")]
    Topology {
        /// The seed.
        seed: u64,
        /// The bundled machine it derives from.
        base: String,
        /// Why.
        reason: String,
    },
}

/// Parses a seed range: `A..B` (B exclusive) or a single seed `N` (meaning `N..N+1`).
pub fn parse_seeds(text: &str) -> Result<Range<u64>, SwarmError> {
    let bad = || SwarmError::Seeds { found: text.to_string() };
    let range = match text.trim().split_once("..") {
        Some((a, b)) => {
            let a: u64 = a.trim().parse().map_err(|_| bad())?;
            let b: u64 = b.trim().parse().map_err(|_| bad())?;
            a..b
        }
        None => {
            let a: u64 = text.trim().parse().map_err(|_| bad())?;
            a..a.checked_add(1).ok_or_else(bad)?
        }
    };
    if range.start >= range.end {
        return Err(bad());
    }
    Ok(range)
}

/// The machine a case runs on.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MachineDraw {
    /// The bundled machine (or the one a derived machine comes from).
    pub base: String,
    /// How the machine was derived from `base`, if it was.
    pub derived: Option<Derivation>,
}

/// A machine derived from a bundled one by scaling its link types and changing lane counts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Derivation {
    /// Per link type: (name, bandwidth factor, latency factor).
    pub link_types: Vec<(String, f64, f64)>,
    /// Per changed link (index in file order): (old lanes, new lanes).
    pub lanes: Vec<(usize, i64, i64)>,
    /// The TOML text of the derived machine.
    #[serde(skip)]
    pub toml: String,
}

/// Where a case's graph comes from.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphDraw {
    /// A generator spec (`--generate`).
    Generate(String),
    /// A real graph (`--graph`, a path relative to the repository root).
    File(String),
}

impl GraphDraw {
    /// The class of graph, for the summary: the generator name or `real`.
    pub fn class(&self) -> &str {
        match self {
            GraphDraw::Generate(spec) => spec.split(':').next().unwrap_or(spec),
            GraphDraw::File(_) => "real",
        }
    }
}

/// A whole configuration drawn from one seed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SwarmCase {
    /// The seed it was drawn from (also the run's `--seed`).
    pub seed: u64,
    /// The runtime filter it was drawn under (part of its reproduction).
    pub runtime_filter: Option<RuntimeKind>,
    /// The machine.
    pub machine: MachineDraw,
    /// GPUs used.
    pub gpus: u32,
    /// The runtime.
    pub runtime: RuntimeKind,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Its parameters (the source resolved against the graph).
    pub params: AlgorithmParams,
    /// The graph.
    pub graph: GraphDraw,
    /// Uniform weights 1..=64 drawn with the run's seed (`--weights`).
    pub weights: bool,
    /// Vertices and arcs of the graph as loaded (before the algorithm's preparation).
    pub vertices: u32,
    /// Arcs of the graph as loaded.
    pub arcs: u64,
    /// Partitioner name.
    pub partitioner: String,
    /// Interconnect fidelity: `flow` or `packet`.
    pub fidelity: String,
    /// Jitter bound in nanoseconds (`--jitter-ns`).
    pub jitter_ns: u64,
    /// Bulk-synchronous options (used when the runtime is `bsp`).
    pub bsp: BspOptions,
    /// Groute options (used when the runtime is `groute`).
    pub groute: WorklistOptions,
    /// Atos options (used when the runtime is `atos`).
    pub atos: AtosOptions,
    /// GUM options (used when the runtime is `gum`).
    pub gum: GumOptions,
    /// Faults injected into the machine (`--fault`), as canonical specs; drawn for about a
    /// quarter of the seeds (see [`draw_faults`]).
    pub faults: Vec<String>,
}

/// What a swarm draws under.
#[derive(Clone, Debug, Default)]
pub struct SwarmOptions {
    /// Only this runtime (else every runtime).
    pub runtime: Option<RuntimeKind>,
    /// Wall-clock time after which a run is reported as hung (default 120 s).
    pub hang_after: Option<Duration>,
    /// Virtual time limit of each run (default [`VIRTUAL_TIME_LIMIT_PS`]).
    pub virtual_time_limit_ps: Option<u64>,
    /// The second chance of a run that reaches its limits: no virtual time limit and the
    /// event limit times this (default [`SLOW_LIMIT_FACTOR`]; 1: no second chance, a run at
    /// a limit fails).
    pub slow_limit_factor: Option<u64>,
    /// Event limit of each run's first try (default [`EVENT_LIMIT`]).
    pub event_limit: Option<u64>,
}

/// Picks one element.
fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// A number in `lo..=hi` rounded to `digits` decimals (so it prints and parses back exactly
/// as the command line spells it).
fn rounded(rng: &mut ChaCha8Rng, lo: f64, hi: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    let x = lo + (hi - lo) * rng.random::<f64>();
    (x * scale).round() / scale
}

/// Draws the graph's generator spec or real file.
fn draw_graph(rng: &mut ChaCha8Rng) -> GraphDraw {
    let seed = rng.random_range(0..1000u32);
    let directed = rng.random_bool(0.3);
    let spec = match rng.random_range(0..20u32) {
        0..=4 => {
            let scale = rng.random_range(5..=11u32);
            let ef = rng.random_range(1..=16u32);
            format!("rmat:scale={scale},ef={ef},directed={directed},seed={seed}")
        }
        5..=7 => {
            let n = rng.random_range(16..=3000u32);
            let m = u64::from(n) * rng.random_range(1..=16u64) / 2;
            format!("er:n={n},m={m},directed={directed},seed={seed}")
        }
        8 => {
            let n = rng.random_range(16..=800u32);
            let degree = rounded(rng, 0.5, 8.0, 1);
            let p = degree / f64::from(n);
            format!("er:n={n},p={p},directed={directed},seed={seed}")
        }
        9..=11 => {
            let (w, h) = (rng.random_range(2..=60u32), rng.random_range(2..=60u32));
            let drop = if rng.random_bool(0.5) { 0.0 } else { rounded(rng, 0.0, 0.4, 2) };
            format!("grid2d:w={w},h={h},drop={drop},seed={seed}")
        }
        12..=13 => {
            let (w, h, d) = (
                rng.random_range(2..=14u32),
                rng.random_range(2..=14u32),
                rng.random_range(2..=14u32),
            );
            let drop = if rng.random_bool(0.5) { 0.0 } else { rounded(rng, 0.0, 0.4, 2) };
            format!("grid3d:w={w},h={h},d={d},drop={drop},seed={seed}")
        }
        14..=16 => {
            let n = rng.random_range(50..=3000u32);
            let degree = rounded(rng, 1.5, 6.0, 1);
            format!("rgg:n={n},degree={degree},seed={seed}")
        }
        17 => {
            // Tiny graphs: fewer vertices than GPUs, isolated vertices, no edges at all.
            let n = rng.random_range(1..=12u32);
            let m = if n < 2 { 0 } else { rng.random_range(0..=2 * u64::from(n)) };
            format!("er:n={n},m={m},directed={directed},seed={seed}")
        }
        _ => return GraphDraw::File(pick(rng, REAL_GRAPHS).0.to_string()),
    };
    GraphDraw::Generate(spec)
}

/// Makes the graph a case names, exactly as `switchyard run` does (weights 1..=64 drawn with
/// the run's seed where asked and the graph has none).
pub fn make_graph(graph: &GraphDraw, weights: bool, seed: u64) -> Result<Csr, GraphError> {
    let csr = match graph {
        GraphDraw::Generate(spec) => generate(&GeneratorSpec::parse(spec)?)?,
        GraphDraw::File(path) => {
            let bytes =
                REAL_GRAPHS.iter().find(|(p, _)| p == path).map(|(_, b)| *b).ok_or_else(|| {
                    GraphError::InvalidArgument {
                        what: "swarm graph".into(),
                        found: path.clone(),
                        expected: "one of the swarm's embedded real graphs".into(),
                    }
                })?;
            load_graph_from_bytes(path, bytes, &LoadOptions::default())?.csr
        }
    };
    if weights && csr.weights().is_none() {
        return with_uniform_weights(&csr, 1, 64, seed);
    }
    Ok(csr)
}

/// Derives a machine from bundled `base`: every link type's bandwidth scaled by 1/4..4 and
/// latency by 1/4..8, and about a third of the links given another lane count.
fn derive_machine(
    rng: &mut ChaCha8Rng,
    seed: u64,
    base: &str,
) -> Result<(Topology, Derivation), SwarmError> {
    let fail = |reason: String| SwarmError::Topology { seed, base: base.to_string(), reason };
    let text = bundled_text(base).ok_or_else(|| fail("not a bundled machine".into()))?;
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| fail(e.to_string()))?;
    let mut derivation =
        Derivation { link_types: Vec::new(), lanes: Vec::new(), toml: String::new() };
    if let Some(toml::Value::Table(types)) = table.get_mut("link_type") {
        for (name, value) in types.iter_mut() {
            let bandwidth = 2f64.powf(rounded(rng, -2.0, 2.0, 2));
            let latency = 2f64.powf(rounded(rng, -2.0, 3.0, 2));
            if let toml::Value::Table(t) = value {
                for (key, factor) in [("bandwidth_gb_s", bandwidth), ("latency_ns", latency)] {
                    if let Some(x) =
                        t.get(key).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                    {
                        t.insert(key.into(), toml::Value::Float(x * factor));
                    }
                }
            }
            derivation.link_types.push((name.clone(), bandwidth, latency));
        }
    }
    if let Some(toml::Value::Array(links)) = table.get_mut("link") {
        for (i, link) in links.iter_mut().enumerate() {
            if let toml::Value::Table(t) = link
                && rng.random_bool(0.3)
            {
                let old = t.get("lanes").and_then(toml::Value::as_integer).unwrap_or(1);
                let new = rng.random_range(1..=(2 * old).max(2));
                t.insert("lanes".into(), toml::Value::Integer(new));
                derivation.lanes.push((i, old, new));
            }
        }
    }
    let name = format!("{base}-swarm-{seed}");
    table.insert("name".into(), toml::Value::String(name.clone()));
    table.insert(
        "description".into(),
        toml::Value::String(format!(
            "derived by `switchyard swarm` seed {seed} from {base}: link types scaled, lanes changed"
        )),
    );
    let toml = toml::to_string(&table).map_err(|e| fail(e.to_string()))?;
    let topology =
        Topology::from_str(&format!("swarm:{name}"), &toml).map_err(|e| fail(e.to_string()))?;
    derivation.toml = toml;
    Ok((topology, derivation))
}

/// The stream (derived from the seed) that draws whether a seed runs a runtime that joined
/// the swarm after its first regression seeds were recorded.
const LATER_RUNTIME_STREAM: u64 = 0x5_7A7E;

/// A runtime that joined the swarm later, for a share of the seeds (one part in `2 + n` for
/// each of the `n` later runtimes), or `None` (the seed runs the runtime of the main
/// stream). Drawn from a stream of its own, so a seed that runs BSP or Groute draws exactly
/// the configuration it drew before.
fn later_runtime(seed: u64) -> Option<RuntimeKind> {
    const LATER: [RuntimeKind; 2] = [RuntimeKind::Gum, RuntimeKind::Atos];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(LATER_RUNTIME_STREAM);
    let share = LATER.len() as f64 / (LATER.len() + 2) as f64;
    rng.random_bool(share).then(|| *pick(&mut rng, &LATER))
}

/// The random stream (of a seed's ChaCha8 generator) that faults are drawn from: apart from
/// the configuration's main stream, so that drawing faults changed no seed's configuration.
const FAULT_STREAM: u64 = 0xFA_0175;

/// Draws the faults of `seed` on `topology` (the first `gpus` GPUs used). About a quarter
/// of the seeds draw one to three of: a degraded link (any link; bandwidth x 2^U(-8, 0),
/// latency up to 20 us more), a failed link (any link: the run validates over another
/// route, or stops with an error naming the link), a straggler among the GPUs used
/// (slowdown 2^U(0, 6)) and delayed deliveries (p 0.05..1, up to 2^U(0, 15) ns); each from
/// virtual time 0 (30 %) or a log-uniform time up to about a virtual millisecond.
pub fn draw_faults(seed: u64, topology: &Topology, gpus: u32) -> Vec<FaultSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(FAULT_STREAM);
    if !rng.random_bool(0.25) {
        return Vec::new();
    }
    let count = rng.random_range(1..=3u32);
    let mut faults = Vec::new();
    for _ in 0..count {
        let at_ps = if rng.random_bool(0.3) {
            0
        } else {
            2f64.powf(rounded(&mut rng, 0.0, 20.0, 2)).round() as u64 * 1000
        };
        let link = |rng: &mut ChaCha8Rng| {
            let l = pick(rng, &topology.links);
            format!("{}-{}", topology.devices[l.a].name, topology.devices[l.b].name)
        };
        let kind = match rng.random_range(0..4u32) {
            0 => {
                let bandwidth_factor = 2f64.powf(rounded(&mut rng, -8.0, 0.0, 2));
                let bandwidth_factor = (bandwidth_factor * 1e4).round() / 1e4;
                let latency_ns =
                    if rng.random_bool(0.5) { 0 } else { rng.random_range(1..=20_000) };
                let bandwidth_factor = if latency_ns == 0 && bandwidth_factor >= 1.0 {
                    0.5
                } else {
                    bandwidth_factor.max(1e-4)
                };
                FaultKind::LinkDegrade {
                    link: link(&mut rng),
                    bandwidth_factor,
                    extra_latency_ps: latency_ns * 1000,
                }
            }
            1 => FaultKind::LinkFail { link: link(&mut rng) },
            2 => FaultKind::Straggler {
                gpu: rng.random_range(0..gpus.max(1)),
                slowdown: (2f64.powf(rounded(&mut rng, 0.0, 6.0, 2)) * 100.0).round().max(100.0)
                    / 100.0,
            },
            _ => FaultKind::Delay {
                probability: rounded(&mut rng, 0.05, 1.0, 2),
                max_delay_ps: 2f64.powf(rounded(&mut rng, 0.0, 15.0, 2)).round().max(1.0) as u64
                    * 1000,
            },
        };
        // Canonical text, so the `switchyard run` line gives the identical spec.
        let spec = FaultSpec { at_ps, kind };
        if let Ok(parsed) = spec.to_string().parse::<FaultSpec>() {
            faults.push(parsed);
        }
    }
    faults
}

/// Draws the whole configuration of `seed` and makes its machine and graph.
pub fn draw(seed: u64, options: &SwarmOptions) -> Result<(SwarmCase, Topology, Csr), SwarmError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Machine.
    let names = bundled_names();
    let base = pick(&mut rng, &names).to_string();
    let (topology, derived) = if rng.random_bool(0.3) {
        let (topology, derivation) = derive_machine(&mut rng, seed, &base)?;
        (topology, Some(derivation))
    } else {
        let topology = Topology::bundled(&base).map_err(|e| SwarmError::Topology {
            seed,
            base: base.clone(),
            reason: e.to_string(),
        })?;
        (topology, None)
    };
    let gpus = rng.random_range(1..=topology.gpus.len() as u32);
    // Runtime (drawn even when filtered, so the rest of the stream starts at the same place).
    // The draw is over the runtimes the swarm had when its regression seeds were recorded,
    // so every recorded seed still draws the same configuration; the runtimes that joined
    // later (GUM, Atos) come from a stream of their own (`later_runtime`).
    let drawn = *pick(&mut rng, &[RuntimeKind::Bsp, RuntimeKind::Groute]);
    let runtime = options.runtime.unwrap_or_else(|| later_runtime(seed).unwrap_or(drawn));
    let algorithms: Vec<Algorithm> =
        Algorithm::ALL.into_iter().filter(|&a| runtime.runs(a)).collect();
    let algorithm = *pick(&mut rng, &algorithms);
    // Graph.
    let graph = draw_graph(&mut rng);
    let weights = algorithm.needs_weights() || rng.random_bool(0.25);
    let csr = make_graph(&graph, weights, seed).map_err(|source| SwarmError::Graph {
        seed,
        graph: format!("{graph:?}"),
        source: Box::new(source),
    })?;
    let n = csr.num_vertices();
    // Partitioners refuse more parts than vertices (a clear error, not a bug): tiny graphs
    // run on at most one GPU per vertex.
    let gpus = gpus.min(n.max(1));
    let hub = (0..n).max_by_key(|&v| csr.degree(v)).unwrap_or(0);
    let source = if rng.random_bool(0.5) || n == 0 { hub } else { rng.random_range(0..n) };
    let params = AlgorithmParams {
        source,
        damping: if rng.random_bool(0.8) { 0.85 } else { rounded(&mut rng, 0.5, 0.95, 2) },
        iterations: rng.random_range(1..=30),
        epsilon: *pick(&mut rng, &[1e-3, 1e-4]),
        ..AlgorithmParams::default()
    };
    // Parameters the algorithm does not use keep their defaults (as on a `switchyard run`
    // line that does not name them).
    let d = AlgorithmParams::default();
    let params = match algorithm {
        Algorithm::Bfs | Algorithm::Dobfs | Algorithm::Sssp => {
            AlgorithmParams { source: params.source, ..d }
        }
        Algorithm::Cc | Algorithm::Lcc | Algorithm::Color => d,
        Algorithm::Pr => {
            AlgorithmParams { damping: params.damping, iterations: params.iterations, ..d }
        }
        Algorithm::Cdlp => AlgorithmParams { iterations: params.iterations, ..d },
        Algorithm::PrResidual => {
            AlgorithmParams { damping: params.damping, epsilon: params.epsilon, ..d }
        }
    };
    let partitioner = pick(&mut rng, &PARTITIONERS).to_string();
    let fidelity = if rng.random_bool(0.6) { "flow" } else { "packet" }.to_string();
    let jitter_ns = if rng.random_bool(0.5) {
        0
    } else {
        // Log-uniform from 1 ns to 8 µs.
        2f64.powf(rounded(&mut rng, 0.0, 13.0, 2)).round() as u64
    };
    // Bulk-synchronous options.
    let duplication = if rng.random_bool(0.5) { Duplication::OneHop } else { Duplication::All };
    let broadcast_drawn = duplication == Duplication::All && rng.random_bool(0.5);
    // The runtime refuses broadcast for additive updates without an apply step (residual
    // PageRank): such a draw runs selective (the draw is kept, so other seeds are unchanged).
    let additive = algorithm
        .instance(&params)
        .bsp()
        .is_some_and(|p| p.combiner().is_additive() && p.apply_kernel().is_none());
    let communication = if broadcast_drawn && !additive {
        Communication::Broadcast
    } else {
        Communication::Selective
    };
    let bsp = BspOptions { duplication, communication, ..BspOptions::default() };
    // Groute options.
    let has_priority = match algorithm.instance(&params).groute() {
        Some(GrouteOperators::Worklist(app)) => app.has_priority(),
        _ => false,
    };
    let defaults = WorklistOptions::default();
    let packet_items = match rng.random_range(0..4u32) {
        0 => rng.random_range(1..=8),
        1 => rng.random_range(9..=256),
        2 => rng.random_range(257..=8192),
        _ => defaults.packet_items,
    };
    let priority_delta = (has_priority && rng.random_bool(0.5)).then(|| {
        if algorithm.needs_weights() { rng.random_range(1..=256) } else { rng.random_range(1..=4) }
    });
    let groute = WorklistOptions {
        packet_items,
        buffers: rng.random_range(1..=8),
        ring: if rng.random_bool(0.5) { RingOrder::Index } else { RingOrder::Widest },
        priority_delta,
        fused: rng.random_bool(0.5),
        batch_items: if rng.random_bool(0.5) {
            defaults.batch_items
        } else {
            rng.random_range(1..=512)
        },
        out_items: if rng.random_bool(0.5) {
            defaults.out_items
        } else {
            rng.random_range(1..=256)
        },
        fused_max_rounds: if rng.random_bool(0.5) {
            defaults.fused_max_rounds
        } else {
            rng.random_range(1..=8)
        },
        initial_worklist_items: if rng.random_bool(0.5) {
            defaults.initial_worklist_items
        } else {
            rng.random_range(1..=1024)
        },
        // The command line names both sizes, which fixes them, and the priority step
        // (or `off`).
        auto_size: false,
        auto_priority: false,
        send: crate::runtime::groute::worklist::SendMode::End,
        auto_fused: false,
        auto_send: false,
    };
    // GUM options, drawn last and only for GUM cases (the other draws stay as they were):
    // low thresholds so that small graphs steal.
    let gum = if runtime == RuntimeKind::Gum {
        let t1 = *pick(&mut rng, &[1u64, 64, 16_384]);
        let triggers = Triggers {
            t1_min_max_edges: t1,
            t2_min_imbalance_edges: *pick(&mut rng, &[1u64, 32, t1]),
            ..Triggers::default()
        };
        // Forced: every plan t1 and t2 allow is executed, so the stealing path is exercised
        // whether or not it would pay.
        let fsteal = rng.random_bool(0.8);
        GumOptions { fsteal, fsteal_forced: fsteal, triggers, ..GumOptions::default() }
    } else {
        GumOptions::default()
    };
    // Atos options, likewise drawn only for Atos cases.
    let atos = if runtime == RuntimeKind::Atos {
        draw_atos(&mut rng, algorithm)
    } else {
        AtosOptions::default()
    };
    // Atos colouring reads other GPUs' colours with peer loads: on GPUs without peer access
    // to each other (or across InfiniBand) it is refused, so such draws run on one GPU.
    let gpus = if runtime == RuntimeKind::Atos
        && algorithm == Algorithm::Color
        && !peer_loads_reach(&topology, gpus)
    {
        1
    } else {
        gpus
    };
    let faults = draw_faults(seed, &topology, gpus);
    let topology = topology.with_faults(&faults).map_err(|e| SwarmError::Topology {
        seed,
        base: base.clone(),
        reason: e.to_string(),
    })?;
    let case = SwarmCase {
        seed,
        runtime_filter: options.runtime,
        machine: MachineDraw { base, derived },
        gpus,
        runtime,
        algorithm,
        params,
        graph,
        weights,
        vertices: n,
        arcs: csr.num_arcs(),
        partitioner,
        fidelity,
        jitter_ns,
        bsp,
        groute,
        gum,
        atos,
        faults: faults.iter().map(ToString::to_string).collect(),
    };
    Ok((case, topology, csr))
}

/// Whether every pair of the first `gpus` GPUs of `topology` has peer access on a route
/// without InfiniBand (what a kernel's peer loads need).
fn peer_loads_reach(topology: &Topology, gpus: u32) -> bool {
    let fabric = topology.fabric();
    (0..gpus).all(|a| {
        (0..gpus).all(|b| {
            if a == b {
                return true;
            }
            let (Some(x), Some(y)) = (topology.gpu_endpoint(a), topology.gpu_endpoint(b)) else {
                return false;
            };
            fabric.route(x, y).is_some_and(|r| {
                r.peer_access
                    && r.channels.iter().all(|&c| {
                        let link = topology.link_of_channel(c);
                        topology.link_types[link.link_type].kind
                            != switchyard_sim::topology::LinkKind::Infiniband
                    })
            })
        })
    })
}

/// Atos options: every worker width and kernel strategy, the priority queue, the aggregator
/// (eager or batched), small queues' and sweeps' edges.
fn draw_atos(rng: &mut ChaCha8Rng, algorithm: Algorithm) -> AtosOptions {
    let d = AtosOptions::default();
    let worker = *pick(rng, &[WorkerWidth::Thread, WorkerWidth::Warp, WorkerWidth::Cta]);
    let cta_threads = *pick(rng, &[64, 256, 512, 1024]);
    let fetch_size = if worker == WorkerWidth::Cta { *pick(rng, &[1, 4, 32, 128]) } else { 1 };
    let kernel =
        if rng.random_bool(0.5) { KernelStrategy::Persistent } else { KernelStrategy::Discrete };
    let priority = (algorithm == Algorithm::Bfs && rng.random_bool(0.4))
        .then(|| (rng.random_range(0..=4), rng.random_range(1..=3)));
    // One-pair batches (8 bytes) only for BFS: PageRank's and colouring's traffic in
    // one-pair messages is millions of simulator events for a small graph (seed 149).
    let batches: &[u64] = if algorithm == Algorithm::Bfs {
        &[8, 256, 4096, 1 << 20]
    } else {
        &[64, 256, 4096, 1 << 20]
    };
    let comm = if rng.random_bool(0.4) {
        Comm::Aggregated { batch_bytes: *pick(rng, batches), wait_polls: *pick(rng, &[1, 4, 32]) }
    } else {
        Comm::Auto
    };
    AtosOptions {
        worker,
        cta_threads,
        fetch_size,
        kernel,
        priority,
        comm,
        check_size: *pick(rng, &[1, 8, 32, 256]),
        permute_ids: rng.random_bool(0.25),
        ..d
    }
}

impl SwarmCase {
    /// The file a derived machine is written to under `artifacts` for its reproduction.
    pub fn topology_file(&self, artifacts: &str) -> Option<String> {
        self.machine.derived.as_ref().map(|_| format!("{artifacts}/seed-{}.toml", self.seed))
    }

    /// The `switchyard swarm` command that reruns this seed.
    pub fn swarm_command(&self) -> String {
        let filter =
            self.runtime_filter.map(|r| format!(" --runtime {}", r.name())).unwrap_or_default();
        format!("switchyard swarm --seeds {}..{}{filter}", self.seed, self.seed + 1)
    }

    /// The arguments of the `switchyard run` that reruns this case (derived machines are
    /// named as the file [`SwarmCase::topology_file`] gives under `artifacts`).
    pub fn run_args(&self, artifacts: &str) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |k: &str, v: String| {
            a.push(k.to_string());
            if !v.is_empty() {
                a.push(v);
            }
        };
        match &self.graph {
            GraphDraw::Generate(spec) => push("--generate", spec.clone()),
            GraphDraw::File(path) => push("--graph", path.clone()),
        }
        if self.weights {
            push("--weights", String::new());
        }
        let topology = self.topology_file(artifacts).unwrap_or_else(|| self.machine.base.clone());
        push("--topology", topology);
        push("--gpus", self.gpus.to_string());
        push("--runtime", self.runtime.name().into());
        push("--algo", self.algorithm.name().into());
        push("--seed", self.seed.to_string());
        push("--partitioner", self.partitioner.clone());
        push("--fidelity", self.fidelity.clone());
        push("--jitter-ns", self.jitter_ns.to_string());
        let p = &self.params;
        match self.algorithm {
            Algorithm::Bfs | Algorithm::Dobfs | Algorithm::Sssp => {
                // `--source` is the file's own id: the swarm's real graphs (Matrix Market,
                // METIS) number vertices from 1; generated graphs from 0.
                let one_based = matches!(self.graph, GraphDraw::File(_));
                push("--source", (u64::from(p.source) + u64::from(one_based)).to_string())
            }
            Algorithm::Cc | Algorithm::Lcc | Algorithm::Color => {}
            Algorithm::Cdlp => push("--iterations", p.iterations.to_string()),
            Algorithm::Pr => {
                push("--damping", p.damping.to_string());
                push("--iterations", p.iterations.to_string());
            }
            Algorithm::PrResidual => {
                push("--damping", p.damping.to_string());
                push("--epsilon", p.epsilon.to_string());
            }
        }
        match self.runtime {
            RuntimeKind::Bsp => {
                let dup = match self.bsp.duplication {
                    Duplication::OneHop => "one-hop",
                    Duplication::All => "all",
                };
                let comm = match self.bsp.communication {
                    Communication::Selective => "selective",
                    Communication::Broadcast => "broadcast",
                };
                push("--duplication", dup.into());
                push("--communication", comm.into());
            }
            RuntimeKind::Groute => {
                let g = &self.groute;
                push("--packet-size", g.packet_items.to_string());
                push("--buffers", g.buffers.to_string());
                let ring = match g.ring {
                    RingOrder::Index => "index",
                    RingOrder::Widest => "widest",
                };
                push("--ring", ring.into());
                // Absent, the CLI would choose a step itself (`auto_priority`), which the
                // swarm's own spec does not.
                let delta = g.priority_delta.map_or("off".to_string(), |d| d.to_string());
                push("--priority-delta", delta);
                // Absent, the CLI would choose the worker by the graph (`auto_fused`).
                push("--fused", if g.fused { "on" } else { "off" }.into());
                push("--batch-items", g.batch_items.to_string());
                push("--out-items", g.out_items.to_string());
                push("--fused-max-rounds", g.fused_max_rounds.to_string());
                push("--worklist-items", g.initial_worklist_items.to_string());
            }
            RuntimeKind::Gum => {
                let g = &self.gum;
                let fsteal = match (g.fsteal, g.fsteal_forced) {
                    (false, _) => "off",
                    (true, false) => "on",
                    (true, true) => "forced",
                };
                push("--gum-fsteal", fsteal.into());
                push("--gum-t1", g.triggers.t1_min_max_edges.to_string());
                push("--gum-t2", g.triggers.t2_min_imbalance_edges.to_string());
            }
            RuntimeKind::Atos => {
                for (flag, value) in self.atos.cli_args() {
                    push(flag, value);
                }
            }
        }
        for fault in &self.faults {
            push("--fault", fault.clone());
        }
        a
    }

    /// The `switchyard run` command line that reruns this case.
    pub fn run_command(&self, artifacts: &str) -> String {
        format!("switchyard run {}", self.run_args(artifacts).join(" "))
    }

    /// What the run is.
    pub fn spec(&self) -> RunSpec {
        let mut command_line = vec!["switchyard".to_string(), "run".to_string()];
        command_line.extend(self.run_args(DEFAULT_ARTIFACTS));
        RunSpec {
            gpus: self.gpus,
            runtime: self.runtime,
            algorithm: self.algorithm,
            params: self.params,
            partitioner: self.partitioner.clone(),
            seed: self.seed,
            bsp: self.bsp,
            groute: self.groute,
            gum: self.gum,
            atos: self.atos,
            validate: true,
            command_line,
        }
    }

    /// How the simulator is set up for it on `topology`.
    pub fn sim_setup(&self, topology: Topology) -> SimSetup {
        SimSetup {
            topology,
            fidelity: if self.fidelity == "packet" { Fidelity::Packet } else { Fidelity::Flow },
            trace: false,
            jitter_ps: self.jitter_ns.saturating_mul(1000),
        }
    }

    /// The name its graph has in the run report (as `switchyard run` names it).
    pub fn graph_name(&self) -> String {
        match &self.graph {
            GraphDraw::Generate(spec) => {
                GeneratorSpec::parse(spec).map(|s| s.to_string()).unwrap_or_else(|_| spec.clone())
            }
            GraphDraw::File(path) => path.clone(),
        }
    }
}

/// How a seed's run ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "message")]
pub enum Verdict {
    /// Finished and validated.
    Passed,
    /// Finished with a result that differs from the reference.
    Invalid(String),
    /// Stopped with an error.
    Error(String),
    /// Panicked.
    Panic(String),
    /// Ran past the wall-clock limit (its thread was abandoned).
    Hung(String),
    /// The configuration could not be drawn (a bug in the swarm itself).
    Draw(String),
    /// Stopped, as it must, with an error naming a link failure that left a transfer without
    /// a route (only for a case that fails links): not a failure.
    Faulted(String),
    /// Reached the first virtual time or event limit, then finished and validated on its
    /// second chance (see [`SLOW_LIMIT_FACTOR`]): slow but not hung (a pass).
    Slow(String),
}

impl Verdict {
    /// Whether the run passed: validated, or stopped by the link failure it injected.
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Passed | Verdict::Faulted(_) | Verdict::Slow(_))
    }

    /// The message of a verdict other than [`Verdict::Passed`] (empty for it).
    pub fn message(&self) -> &str {
        match self {
            Verdict::Passed => "",
            Verdict::Invalid(m)
            | Verdict::Error(m)
            | Verdict::Panic(m)
            | Verdict::Hung(m)
            | Verdict::Draw(m)
            | Verdict::Faulted(m)
            | Verdict::Slow(m) => m,
        }
    }

    /// A one-word name.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Invalid(_) => "invalid",
            Verdict::Error(_) => "error",
            Verdict::Panic(_) => "panic",
            Verdict::Hung(_) => "hung",
            Verdict::Draw(_) => "draw",
            Verdict::Faulted(_) => "faulted",
            Verdict::Slow(_) => "slow",
        }
    }
}

/// One seed's result.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SeedResult {
    /// The seed.
    pub seed: u64,
    /// What it drew (absent if drawing failed).
    pub case: Option<SwarmCase>,
    /// How it ended.
    pub verdict: Verdict,
    /// Virtual time of the run, in picoseconds, if it finished.
    pub time_ps: Option<u64>,
    /// Simulator events processed, if it finished.
    pub events: Option<u64>,
    /// FNV-1a 64 of the run report's JSON with the git commit masked, if it finished: equal
    /// digests mean identical reports.
    pub report_digest: Option<String>,
}

impl SeedResult {
    /// The commands that reproduce it: `switchyard swarm ...` and, if the case was drawn,
    /// `switchyard run ...`.
    pub fn reproduce(&self, runtime_filter: Option<RuntimeKind>, artifacts: &str) -> Vec<String> {
        match &self.case {
            Some(case) => vec![case.swarm_command(), case.run_command(artifacts)],
            None => {
                let filter =
                    runtime_filter.map(|r| format!(" --runtime {}", r.name())).unwrap_or_default();
                vec![format!("switchyard swarm --seeds {}..{}{filter}", self.seed, self.seed + 1)]
            }
        }
    }
}

thread_local! {
    /// The last panic's message and location on this thread (see [`capture_panics`]).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether this thread is inside a swarm run (panics are captured, not printed).
    static IN_RUN: RefCell<bool> = const { RefCell::new(false) };
}

/// Installs a panic hook that records a swarm run's panic (message and location) for its
/// verdict instead of printing it; panics elsewhere go to the previous hook. Idempotent.
pub fn capture_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_RUN.with(|r| *r.borrow()) {
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
}

/// The JSON of a run report with the git commit masked.
pub fn masked_report_json(report: &super::report::RunReport) -> String {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Some(sha) = value.get_mut("git_sha") {
        *sha = serde_json::Value::String("(masked)".into());
    }
    value.to_string()
}

/// Runs a drawn case on its machine and graph (as [`draw`] made them), with the swarm's
/// virtual time limit `time_limit_ps` and event limit `event_limit`.
pub fn run_case(
    case: &SwarmCase,
    topology: Topology,
    graph: &Csr,
    time_limit_ps: u64,
    event_limit: u64,
) -> Result<RunOutput, RunError> {
    let spec = case.spec();
    let sim = case.sim_setup(topology);
    let prepared = prepare(graph, &spec)?;
    let config = SimConfig {
        fidelity: sim.fidelity,
        seed: spec.seed,
        trace: false,
        time_limit_ps,
        jitter_ps: sim.jitter_ps,
        event_limit,
    };
    run_prepared_sim(&prepared, &case.graph_name(), None, &spec, &sim, config)
}

/// Draws and runs one seed (on this thread); panics are caught into the verdict. A run that
/// reaches its limits gets a second chance (see [`SLOW_LIMIT_FACTOR`]); `second_chance` is
/// told before it starts (the caller restarts its wall-clock allowance).
pub fn run_seed_with(
    seed: u64,
    options: &SwarmOptions,
    second_chance: &mut dyn FnMut(),
) -> SeedResult {
    let (case, topology, graph) = match draw(seed, options) {
        Ok(drawn) => drawn,
        Err(e) => {
            return SeedResult {
                seed,
                case: None,
                verdict: Verdict::Draw(e.to_string()),
                time_ps: None,
                events: None,
                report_digest: None,
            };
        }
    };
    let time_limit_ps = options.virtual_time_limit_ps.unwrap_or(VIRTUAL_TIME_LIMIT_PS);
    let event_limit = options.event_limit.unwrap_or(EVENT_LIMIT);
    let factor = options.slow_limit_factor.unwrap_or(SLOW_LIMIT_FACTOR).max(1);
    let (mut result, at_limit) =
        judge(seed, &case, topology.clone(), &graph, time_limit_ps, event_limit);
    if factor > 1 && at_limit {
        let first = first_line(result.verdict.message()).to_string();
        second_chance();
        let events = event_limit.saturating_mul(factor);
        let (mut again, again_at_limit) = judge(seed, &case, topology, &graph, u64::MAX, events);
        again.verdict = match again.verdict {
            Verdict::Passed => Verdict::Slow(format!(
                "finished and validated at {} ps of virtual time after {} events, on its \
                 second chance (no time limit, {factor}x the event limit); first: {first}",
                again.time_ps.unwrap_or(0),
                again.events.unwrap_or(0)
            )),
            Verdict::Error(m) if again_at_limit => Verdict::Error(format!(
                "{m}\n(reached the event limit again on its second chance, with no time limit \
                 and {factor}x the event limit: a livelock, or a run more than {factor}x too \
                 slow to simulate; first: {first})"
            )),
            other => other,
        };
        result = again;
    }
    result
}

/// Draws and runs one seed (on this thread), with a second chance for a run at its limits.
pub fn run_seed(seed: u64, options: &SwarmOptions) -> SeedResult {
    run_seed_with(seed, options, &mut || {})
}

/// Whether a run stopped at the simulator's virtual time or event limit.
fn at_limit(error: &RunError) -> bool {
    matches!(
        error,
        RunError::Runtime(RuntimeError::Backend(BackendError::Limit(_)))
            | RunError::Backend(BackendError::Limit(_))
    )
}

/// Runs a drawn case once under the given limits and judges it (panics are caught); also
/// says whether it stopped at a limit.
fn judge(
    seed: u64,
    case: &SwarmCase,
    topology: Topology,
    graph: &Csr,
    time_limit_ps: u64,
    event_limit: u64,
) -> (SeedResult, bool) {
    IN_RUN.with(|r| *r.borrow_mut() = true);
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_case(case, topology, graph, time_limit_ps, event_limit)
    }));
    IN_RUN.with(|r| *r.borrow_mut() = false);
    let mut result = SeedResult {
        seed,
        case: Some(case.clone()),
        verdict: Verdict::Passed,
        time_ps: None,
        events: None,
        report_digest: None,
    };
    let mut limited = false;
    match outcome {
        Ok(Ok(output)) => {
            let report = &output.report;
            result.time_ps = Some(report.time_ps);
            result.events = Some(report.backend.events);
            result.report_digest =
                Some(format!("{:016x}", fnv1a_64(masked_report_json(report).as_bytes())));
            result.verdict = match &report.validation {
                Some(v) if v.is_ok() => Verdict::Passed,
                Some(v) => Verdict::Invalid(v.to_string()),
                None => Verdict::Invalid("the run was not validated".into()),
            };
        }
        Ok(Err(e)) => {
            limited = at_limit(&e);
            let message = e.to_string();
            let cut_off = case.faults.iter().any(|f| f.starts_with("link-fail:"))
                && message.contains("simulated fault: ");
            result.verdict =
                if cut_off { Verdict::Faulted(message) } else { Verdict::Error(message) };
        }
        Err(payload) => {
            let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
            let message = recorded.unwrap_or_else(|| {
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic with a non-text payload".into())
            });
            result.verdict = Verdict::Panic(message);
        }
    }
    (result, limited)
}

/// Messages from workers to the collector.
enum Message {
    Started(u64),
    Finished(Box<SeedResult>),
}

/// Runs `seeds` on `jobs` worker threads (at least 1) and returns the results in seed order;
/// `progress` sees each result as it arrives (in completion order). A run still going after
/// [`SwarmOptions::hang_after`] is reported [`Verdict::Hung`], its thread abandoned and a
/// new worker started in its place.
pub fn run_seeds(
    seeds: Range<u64>,
    options: &SwarmOptions,
    jobs: usize,
    progress: &mut dyn FnMut(&SeedResult),
) -> Vec<SeedResult> {
    capture_panics();
    let hang_after = options.hang_after.unwrap_or(Duration::from_secs(120));
    let options = Arc::new(options.clone());
    let (seed_tx, seed_rx) = unbounded::<u64>();
    let (msg_tx, msg_rx) = unbounded::<Message>();
    for seed in seeds.clone() {
        // The receiver is alive (held here): sending cannot fail.
        let _ = seed_tx.send(seed);
    }
    drop(seed_tx);
    let spawn = || {
        let (seed_rx, msg_tx, options) = (seed_rx.clone(), msg_tx.clone(), Arc::clone(&options));
        std::thread::spawn(move || {
            for seed in seed_rx.iter() {
                if msg_tx.send(Message::Started(seed)).is_err() {
                    return;
                }
                let restart = msg_tx.clone();
                let result = run_seed_with(seed, &options, &mut || {
                    let _ = restart.send(Message::Started(seed));
                });
                if msg_tx.send(Message::Finished(Box::new(result))).is_err() {
                    return;
                }
            }
        })
    };
    let mut workers: Vec<std::thread::JoinHandle<()>> = (0..jobs.max(1)).map(|_| spawn()).collect();
    let total = (seeds.end - seeds.start) as usize;
    let mut results: BTreeMap<u64, SeedResult> = BTreeMap::new();
    let mut running: BTreeMap<u64, Instant> = BTreeMap::new();
    while results.len() < total {
        match msg_rx.recv_timeout(Duration::from_millis(500)) {
            // A seed already declared hung whose abandoned run reaches its second chance says
            // Started again: it stays abandoned (before, it was timed anew and declared hung a
            // second time, with a second replacement worker: more workers than --jobs).
            Ok(Message::Started(seed)) if !results.contains_key(&seed) => {
                running.insert(seed, Instant::now());
            }
            Ok(Message::Started(_)) => {}
            Ok(Message::Finished(result)) => {
                running.remove(&result.seed);
                // A result arriving after its seed was declared hung is dropped.
                if let std::collections::btree_map::Entry::Vacant(slot) = results.entry(result.seed)
                {
                    progress(&result);
                    slot.insert(*result);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        let hung: Vec<u64> = running
            .iter()
            .filter(|&(_, &started)| now.duration_since(started) > hang_after)
            .map(|(&seed, _)| seed)
            .collect();
        for seed in hung {
            running.remove(&seed);
            let mut result = run_draw_only(seed, &options);
            result.verdict = Verdict::Hung(format!(
                "still running after {} s of wall-clock time (the simulator loops without \
                 advancing past its virtual time limit)",
                hang_after.as_secs()
            ));
            progress(&result);
            results.insert(seed, result);
            workers.push(spawn());
        }
    }
    drop(msg_rx);
    // Join the workers that finished (the seed queue is empty); hung ones are left behind.
    for worker in workers {
        if worker.is_finished() {
            let _ = worker.join();
        }
    }
    results.into_values().collect()
}

/// A result with only the drawn case (for a hung run).
fn run_draw_only(seed: u64, options: &SwarmOptions) -> SeedResult {
    let (case, verdict) = match draw(seed, options) {
        Ok((case, _, _)) => (Some(case), Verdict::Passed),
        Err(e) => (None, Verdict::Draw(e.to_string())),
    };
    SeedResult { seed, case, verdict, time_ps: None, events: None, report_digest: None }
}

/// Runs and failures of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Runs.
    pub runs: u64,
    /// Runs that did not pass.
    pub failed: u64,
}

/// A failure with its reproduction.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// How it ended (`invalid`, `error`, `panic`, `hung`, `draw`).
    pub verdict: String,
    /// The message.
    pub message: String,
    /// The commands that reproduce it.
    pub reproduce: Vec<String>,
}

/// A swarm's summary: identical for the same seeds whatever the number of workers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SwarmSummary {
    /// The seed range, `A..B`.
    pub seeds: String,
    /// The runtime filter, if any.
    pub runtime: Option<RuntimeKind>,
    /// Runs.
    pub runs: u64,
    /// Runs that passed.
    pub passed: u64,
    /// Per `runtime/algorithm`.
    pub by_runtime_algorithm: BTreeMap<String, Counts>,
    /// Per machine (derived machines as `base (derived)`).
    pub by_machine: BTreeMap<String, Counts>,
    /// Per GPU count.
    pub by_gpus: BTreeMap<u32, Counts>,
    /// Per partitioner.
    pub by_partitioner: BTreeMap<String, Counts>,
    /// Per graph class (generator name or `real`).
    pub by_graph: BTreeMap<String, Counts>,
    /// Per fidelity.
    pub by_fidelity: BTreeMap<String, Counts>,
    /// Per option that was on: `jitter`, `bsp:duplicate-all`, `bsp:broadcast`,
    /// `groute:fused`, `groute:priority`, `groute:widest-ring`, `groute:small-packets` (at
    /// most 8 items), `groute:small-worklist` (grown on demand), `weights`.
    pub by_option: BTreeMap<String, Counts>,
    /// Runs that stopped, as they must, with an error naming the link failure they injected
    /// (counted as passed).
    pub faulted: u64,
    /// Seeds that reached the first limits and finished, validated, on their second chance
    /// (counted as passed; [`Verdict::Slow`]).
    pub slow: Vec<u64>,
    /// Every failure, in seed order.
    pub failures: Vec<Failure>,
}

impl SwarmSummary {
    /// Summarises results (in seed order) of a swarm over `seeds` under `runtime`.
    pub fn new(
        seeds: &Range<u64>,
        runtime: Option<RuntimeKind>,
        results: &[SeedResult],
        artifacts: &str,
    ) -> Self {
        let mut s = SwarmSummary {
            seeds: format!("{}..{}", seeds.start, seeds.end),
            runtime,
            runs: 0,
            passed: 0,
            by_runtime_algorithm: BTreeMap::new(),
            by_machine: BTreeMap::new(),
            by_gpus: BTreeMap::new(),
            by_partitioner: BTreeMap::new(),
            by_graph: BTreeMap::new(),
            by_fidelity: BTreeMap::new(),
            by_option: BTreeMap::new(),
            faulted: 0,
            slow: Vec::new(),
            failures: Vec::new(),
        };
        for r in results {
            let failed = u64::from(!r.verdict.passed());
            let add = |map: &mut BTreeMap<String, Counts>, key: String| {
                let c = map.entry(key).or_default();
                c.runs += 1;
                c.failed += failed;
            };
            s.runs += 1;
            s.passed += 1 - failed;
            if let Some(c) = &r.case {
                add(
                    &mut s.by_runtime_algorithm,
                    format!("{}/{}", c.runtime.name(), c.algorithm.name()),
                );
                let machine = if c.machine.derived.is_some() {
                    format!("{} (derived)", c.machine.base)
                } else {
                    c.machine.base.clone()
                };
                add(&mut s.by_machine, machine);
                let g = s.by_gpus.entry(c.gpus).or_default();
                g.runs += 1;
                g.failed += failed;
                add(&mut s.by_partitioner, c.partitioner.clone());
                add(&mut s.by_graph, c.graph.class().to_string());
                add(&mut s.by_fidelity, c.fidelity.clone());
                let mut on = Vec::new();
                if c.jitter_ns > 0 {
                    on.push("jitter");
                }
                if c.weights {
                    on.push("weights");
                }
                match c.runtime {
                    RuntimeKind::Bsp => {
                        if c.bsp.duplication == Duplication::All {
                            on.push("bsp:duplicate-all");
                        }
                        if c.bsp.communication == Communication::Broadcast {
                            on.push("bsp:broadcast");
                        }
                    }
                    RuntimeKind::Gum => {
                        if c.gum.fsteal {
                            on.push("gum:fsteal");
                        }
                    }
                    RuntimeKind::Groute => {
                        let d = WorklistOptions::default();
                        if c.groute.fused {
                            on.push("groute:fused");
                        }
                        if c.groute.priority_delta.is_some() {
                            on.push("groute:priority");
                        }
                        if c.groute.ring == RingOrder::Widest {
                            on.push("groute:widest-ring");
                        }
                        if c.groute.packet_items <= 8 {
                            on.push("groute:small-packets");
                        }
                        if c.groute.initial_worklist_items < d.initial_worklist_items {
                            on.push("groute:small-worklist");
                        }
                    }
                    RuntimeKind::Atos => {
                        on.push(match c.atos.worker {
                            WorkerWidth::Thread => "atos:thread",
                            WorkerWidth::Warp => "atos:warp",
                            WorkerWidth::Cta => "atos:cta",
                        });
                        if c.atos.kernel == KernelStrategy::Discrete {
                            on.push("atos:discrete");
                        }
                        if c.atos.priority.is_some() {
                            on.push("atos:priority");
                        }
                        if matches!(c.atos.comm, Comm::Aggregated { .. }) {
                            on.push("atos:aggregated");
                        }
                        if c.atos.permute_ids {
                            on.push("atos:permuted");
                        }
                    }
                }
                for o in on {
                    add(&mut s.by_option, o.to_string());
                }
                let kinds: std::collections::BTreeSet<&str> =
                    c.faults.iter().filter_map(|f| f.split(':').next()).collect();
                for kind in kinds {
                    add(&mut s.by_option, format!("fault:{kind}"));
                }
                if matches!(r.verdict, Verdict::Faulted(_)) {
                    s.faulted += 1;
                }
                if matches!(r.verdict, Verdict::Slow(_)) {
                    s.slow.push(r.seed);
                }
            }
            if failed == 1 {
                let message = r.verdict.message().to_string();
                s.failures.push(Failure {
                    seed: r.seed,
                    verdict: r.verdict.name().to_string(),
                    message,
                    reproduce: r.reproduce(runtime, artifacts),
                });
            }
        }
        s
    }

    /// Runs that did not pass.
    pub fn failed(&self) -> u64 {
        self.runs - self.passed
    }

    /// The summary as text (deterministic: no wall-clock times).
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let filter = self.runtime.map(|r| format!(", runtime {}", r.name())).unwrap_or_default();
        let mut notes = Vec::new();
        if self.faulted > 0 {
            notes.push(format!(
                "{} of them stopped by an injected link failure, naming it",
                self.faulted
            ));
        }
        if !self.slow.is_empty() {
            notes.push(format!(
                "{} slow: past the first limits, finished on the second chance",
                self.slow.len()
            ));
        }
        let faulted =
            if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
        let _ = writeln!(
            out,
            "swarm: seeds {}{filter}: {} runs, {} passed{faulted}, {} failed",
            self.seeds,
            self.runs,
            self.passed,
            self.failed()
        );
        let table = |out: &mut String, title: &str, rows: Vec<(String, &Counts)>| {
            let _ = write!(out, "  {title}:");
            for (key, c) in rows {
                if c.failed > 0 {
                    let _ = write!(out, " {key} {} ({} failed);", c.runs, c.failed);
                } else {
                    let _ = write!(out, " {key} {};", c.runs);
                }
            }
            out.pop();
            out.push('\n');
        };
        let rows = |m: &BTreeMap<String, Counts>| -> Vec<(String, Counts)> {
            m.iter().map(|(k, c)| (k.clone(), c.clone())).collect()
        };
        let groups: [(&str, Vec<(String, Counts)>); 7] = [
            ("runtime/algorithm", rows(&self.by_runtime_algorithm)),
            ("machine", rows(&self.by_machine)),
            ("gpus", self.by_gpus.iter().map(|(k, c)| (k.to_string(), c.clone())).collect()),
            ("partitioner", rows(&self.by_partitioner)),
            ("graph", rows(&self.by_graph)),
            ("fidelity", rows(&self.by_fidelity)),
            ("options on", rows(&self.by_option)),
        ];
        for (title, group) in &groups {
            table(&mut out, title, group.iter().map(|(k, c)| (k.clone(), c)).collect());
        }
        if !self.slow.is_empty() {
            let seeds: Vec<String> = self.slow.iter().map(u64::to_string).collect();
            let _ = writeln!(out, "  slow seeds: {}", seeds.join(" "));
        }
        for f in &self.failures {
            let _ =
                writeln!(out, "FAILED seed {} ({}): {}", f.seed, f.verdict, first_line(&f.message));
            for command in &f.reproduce {
                let _ = writeln!(out, "  reproduce: {command}");
            }
        }
        out
    }
}

/// The first line of a message (validation reports and panics span several).
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// The swarm's JSON report: the summary and every seed's result, in seed order.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SwarmReport<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Git commit of the binary.
    pub git_sha: &'static str,
    /// The virtual time limit of each run, in picoseconds.
    pub virtual_time_limit_ps: u64,
    /// The summary.
    pub summary: &'a SwarmSummary,
    /// Every seed's result.
    pub results: &'a [SeedResult],
}

impl<'a> SwarmReport<'a> {
    /// The report of `summary` and `results` (runs limited to `virtual_time_limit_ps`).
    pub fn new(
        summary: &'a SwarmSummary,
        results: &'a [SeedResult],
        virtual_time_limit_ps: u64,
    ) -> Self {
        SwarmReport {
            schema: SCHEMA,
            schema_version: SCHEMA_VERSION,
            git_sha: super::git_sha(),
            virtual_time_limit_ps,
            summary,
            results,
        }
    }
}

/// Whether a regression seed's bug is fixed (the seed must pass) or still open (the seed
/// must still fail the way it was recorded, so the test says when a fix lands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegressionStatus {
    /// Fixed: the seed passes.
    Fixed,
    /// Open: the seed still fails with the recorded verdict.
    Open,
}

/// One line of a regression file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regression {
    /// The seed.
    pub seed: u64,
    /// The runtime filter it was found under.
    pub runtime: Option<RuntimeKind>,
    /// Fixed or open.
    pub status: RegressionStatus,
    /// The verdict it failed with (`invalid`, `error`, `panic`, `hung`, `draw`).
    pub verdict: String,
}

/// Parses a regression file: one seed per line, `SEED [runtime=R] status=fixed|open
/// verdict=V  # free text` (the configuration it drew as a `switchyard run` line, why it
/// failed, what fixed it); blank lines and `#` comments are skipped. Errors name the line.
pub fn parse_regressions(text: &str) -> Result<Vec<Regression>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}: `{line}`", i + 1);
        let mut tokens = line.split_whitespace();
        let seed = tokens
            .next()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| bad("expected a seed first"))?;
        let mut r = Regression {
            seed,
            runtime: None,
            status: RegressionStatus::Fixed,
            verdict: String::new(),
        };
        for token in tokens {
            match token.split_once('=') {
                Some(("runtime", name)) => {
                    r.runtime = Some(
                        RuntimeKind::ALL
                            .into_iter()
                            .find(|k| k.name() == name)
                            .ok_or_else(|| bad("unknown runtime"))?,
                    )
                }
                Some(("status", "fixed")) => r.status = RegressionStatus::Fixed,
                Some(("status", "open")) => r.status = RegressionStatus::Open,
                Some(("verdict", v)) => r.verdict = v.to_string(),
                _ => return Err(bad("expected runtime=R, status=fixed|open or verdict=V")),
            }
        }
        out.push(r);
    }
    Ok(out)
}

/// The regression file line of a failure.
pub fn regression_line(result: &SeedResult, runtime: Option<RuntimeKind>) -> String {
    let filter = runtime.map(|r| format!(" runtime={}", r.name())).unwrap_or_default();
    let run = result.case.as_ref().map(|c| c.run_command(DEFAULT_ARTIFACTS)).unwrap_or_default();
    format!("{}{filter} status=open verdict={}  # {run}", result.seed, result.verdict.name())
}
