//! Injected faults: links that degrade or fail, GPUs that slow down (stragglers), and
//! deliveries that arrive late, each from a virtual time on.
//!
//! A fault is written as `KIND:KEY=VALUE,...` ([`FaultSpec`], [`SYNTAX`]); a list of them is
//! resolved against a machine ([`crate::topology::Topology::with_faults`]) into [`Faults`]:
//!
//! * `link-degrade`: every channel of the named link keeps `bandwidth` x its bandwidth and
//!   gains `latency_ns` of latency per hop, for transfers (flow model: rates are recomputed
//!   at the fault; packet model: every packet serialized after it).
//! * `link-fail`: the link carries nothing more. Routes are recomputed without it (the same
//!   rule as the topology loader's: fewest hops, widest, GPUs never forward), transfers in
//!   flight over it restart their current chunk on the new route, and a transfer whose
//!   endpoints no route joins any more fails with an error that names the failed links
//!   (see [`crate::interconnect::TransferFailure`]).
//! * `straggler`: every kernel that starts on that GPU takes `slowdown` x as long.
//! * `delay`: each transfer that completes is delivered with probability `p` up to `max_ns`
//!   later (uniform, from the run's seeded stream), and a delivery never overtakes an earlier
//!   one of the same **order key** ([`DeliveryDelays`]): the simulator backend keys a
//!   stream's operations by the stream (they never reorder, as on a GPU) and one-sided
//!   operations by the GPU pair, so what reorders is what hardware may reorder: operations
//!   of different streams and different GPU pairs.
//!
//! Everything is deterministic: fault times are virtual times, the delay draws come from a
//! stream derived from the run's seed, and ties are broken by plan order.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::error::SimError;
use crate::fabric::{ChannelId, EndpointId, Route};
use crate::time::TimePs;
use crate::topology::Topology;

/// The fault syntax, for help texts and error messages.
pub const SYNTAX: &str = "link-degrade:link=A-B[,bandwidth=F][,latency_ns=N][,at_us=T] | \
                          link-fail:link=A-B[,at_us=T] | straggler:gpu=I,slowdown=X[,at_us=T] | \
                          delay:max_ns=N[,p=P][,at_us=T] (A, B: device names of a [[link]]; \
                          at_ns=T instead of at_us=T for nanoseconds)";

/// Longest extra latency or delivery delay a fault may add: one virtual second.
const MAX_DELAY_NS: u64 = 1_000_000_000;
/// Largest straggler slowdown.
const MAX_SLOWDOWN: f64 = 1e6;

/// One fault as written: what happens and from when.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpec {
    /// Virtual time it takes effect, in picoseconds (whole nanoseconds).
    pub at_ps: TimePs,
    /// What happens.
    pub kind: FaultKind,
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// A link keeps a fraction of its bandwidth and gains latency.
    LinkDegrade {
        /// The link, as `A-B` (device names of its two ends).
        link: String,
        /// Fraction of the bandwidth it keeps, in `(0, 1]`.
        bandwidth_factor: f64,
        /// Latency added to each hop over it, in picoseconds.
        extra_latency_ps: TimePs,
    },
    /// A link carries nothing more.
    LinkFail {
        /// The link, as `A-B`.
        link: String,
    },
    /// A GPU's kernels take `slowdown` times as long.
    Straggler {
        /// The GPU's index.
        gpu: u32,
        /// Factor on every kernel's duration, at least 1.
        slowdown: f64,
    },
    /// Deliveries arrive late.
    Delay {
        /// Probability that a delivery is delayed, in `(0, 1]`.
        probability: f64,
        /// Longest delay, in picoseconds (whole nanoseconds).
        max_delay_ps: TimePs,
    },
}

impl FaultKind {
    /// The kind's name as written (`link-degrade`, `link-fail`, `straggler`, `delay`).
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::LinkDegrade { .. } => "link-degrade",
            FaultKind::LinkFail { .. } => "link-fail",
            FaultKind::Straggler { .. } => "straggler",
            FaultKind::Delay { .. } => "delay",
        }
    }
}

/// A time for messages: whole microseconds as `N us`, else `N ns`.
pub fn format_time_ps(ps: TimePs) -> String {
    if ps.is_multiple_of(1_000_000) {
        format!("{} us", ps / 1_000_000)
    } else if ps.is_multiple_of(1000) {
        format!("{} ns", ps / 1000)
    } else {
        format!("{ps} ps")
    }
}

impl fmt::Display for FaultSpec {
    /// The canonical spelling, which parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.kind.name())?;
        let mut parts = Vec::new();
        match &self.kind {
            FaultKind::LinkDegrade { link, bandwidth_factor, extra_latency_ps } => {
                parts.push(format!("link={link}"));
                if *bandwidth_factor != 1.0 {
                    parts.push(format!("bandwidth={bandwidth_factor}"));
                }
                if *extra_latency_ps != 0 {
                    parts.push(format!("latency_ns={}", extra_latency_ps / 1000));
                }
            }
            FaultKind::LinkFail { link } => parts.push(format!("link={link}")),
            FaultKind::Straggler { gpu, slowdown } => {
                parts.push(format!("gpu={gpu}"));
                parts.push(format!("slowdown={slowdown}"));
            }
            FaultKind::Delay { probability, max_delay_ps } => {
                parts.push(format!("max_ns={}", max_delay_ps / 1000));
                if *probability != 1.0 {
                    parts.push(format!("p={probability}"));
                }
            }
        }
        if self.at_ps != 0 {
            parts.push(format!("at_ns={}", self.at_ps / 1000));
        }
        f.write_str(&parts.join(","))
    }
}

/// Keys each fault kind takes.
fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "link-degrade" => &["link", "bandwidth", "latency_ns", "at_ns", "at_us"],
        "link-fail" => &["link", "at_ns", "at_us"],
        "straggler" => &["gpu", "slowdown", "at_ns", "at_us"],
        "delay" => &["max_ns", "p", "at_ns", "at_us"],
        _ => return None,
    })
}

impl FromStr for FaultSpec {
    type Err = SimError;

    fn from_str(text: &str) -> Result<Self, SimError> {
        let bad = |message: String, fix: String| SimError::FaultSpec {
            spec: text.to_string(),
            message,
            fix,
        };
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim();
        let allowed = keys_of(kind).ok_or_else(|| {
            bad(
                format!("unknown fault kind `{kind}`"),
                "use link-degrade, link-fail, straggler or delay, e.g. \
                 link-fail:link=gpu0-gpu1,at_us=10"
                    .into(),
            )
        })?;
        let mut keys: BTreeMap<&str, &str> = BTreeMap::new();
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(bad(
                    format!("`{part}` is not KEY=VALUE"),
                    format!("{kind} takes {}", allowed.join(", ")),
                ));
            };
            let key = key.trim();
            if !allowed.contains(&key) {
                return Err(bad(
                    format!("{kind} has no key `{key}`"),
                    format!("{kind} takes {}", allowed.join(", ")),
                ));
            }
            if keys.insert(key, value.trim()).is_some() {
                return Err(bad(format!("`{key}` is given twice"), "give each key once".into()));
            }
        }
        let int = |key: &str, max: u64| -> Result<Option<u64>, SimError> {
            let Some(v) = keys.get(key) else { return Ok(None) };
            match v.parse::<u64>() {
                Ok(n) if n <= max => Ok(Some(n)),
                _ => Err(bad(
                    format!("{key}={v} is not a whole number in 0..={max}"),
                    format!("give {key} as a whole number, e.g. {key}=100"),
                )),
            }
        };
        let real = |key: &str| -> Result<Option<f64>, SimError> {
            let Some(v) = keys.get(key) else { return Ok(None) };
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(bad(
                    format!("{key}={v} is not a finite number"),
                    format!("give {key} as a number, e.g. {key}=0.5"),
                )),
            }
        };
        let required = |key: &str| -> Result<&str, SimError> {
            keys.get(key).copied().ok_or_else(|| {
                bad(format!("{kind} needs {key}=..."), format!("e.g. {}", example(kind)))
            })
        };
        let at_ps = match (int("at_ns", u64::MAX / 1000)?, int("at_us", u64::MAX / 1_000_000)?) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "both at_ns and at_us are given".into(),
                    "give the fault's start time once".into(),
                ));
            }
            (Some(ns), None) => ns * 1000,
            (None, Some(us)) => us * 1_000_000,
            (None, None) => 0,
        };
        let link = || -> Result<String, SimError> {
            let link = required("link")?;
            if link.is_empty() || !link.contains('-') {
                return Err(bad(
                    format!("link={link} does not name two devices"),
                    "name a link by the devices at its ends, e.g. link=gpu0-gpu1 \
                     (`switchyard topo show` lists them)"
                        .into(),
                ));
            }
            Ok(link.to_string())
        };
        let kind = match kind {
            "link-degrade" => {
                let bandwidth_factor = real("bandwidth")?.unwrap_or(1.0);
                if !(bandwidth_factor > 0.0 && bandwidth_factor <= 1.0) {
                    return Err(bad(
                        format!("bandwidth={bandwidth_factor} is outside (0, 1]"),
                        "give the fraction of its bandwidth the link keeps (e.g. 0.25); for \
                         a link that carries nothing use link-fail"
                            .into(),
                    ));
                }
                let latency_ns = int("latency_ns", MAX_DELAY_NS)?.unwrap_or(0);
                if bandwidth_factor == 1.0 && latency_ns == 0 {
                    return Err(bad(
                        "the fault changes nothing".into(),
                        "give bandwidth=F below 1 or latency_ns=N above 0".into(),
                    ));
                }
                FaultKind::LinkDegrade {
                    link: link()?,
                    bandwidth_factor,
                    extra_latency_ps: latency_ns * 1000,
                }
            }
            "link-fail" => FaultKind::LinkFail { link: link()? },
            "straggler" => {
                let gpu = required("gpu")?;
                let gpu = gpu.parse::<u32>().map_err(|_| {
                    bad(
                        format!("gpu={gpu} is not a GPU index"),
                        "give the GPU's 0-based index, e.g. gpu=1".into(),
                    )
                })?;
                required("slowdown")?;
                let slowdown = real("slowdown")?.unwrap_or(1.0);
                if !(1.0..=MAX_SLOWDOWN).contains(&slowdown) {
                    return Err(bad(
                        format!("slowdown={slowdown} is outside 1..={MAX_SLOWDOWN}"),
                        "give how many times longer its kernels take, e.g. slowdown=4".into(),
                    ));
                }
                FaultKind::Straggler { gpu, slowdown }
            }
            _ => {
                required("max_ns")?;
                let max_ns = int("max_ns", MAX_DELAY_NS)?.unwrap_or(0);
                if max_ns == 0 {
                    return Err(bad(
                        "max_ns=0 delays nothing".into(),
                        format!("give the longest delay in 1..={MAX_DELAY_NS} ns"),
                    ));
                }
                let probability = real("p")?.unwrap_or(1.0);
                if !(probability > 0.0 && probability <= 1.0) {
                    return Err(bad(
                        format!("p={probability} is outside (0, 1]"),
                        "give the probability that a delivery is delayed, e.g. p=0.5".into(),
                    ));
                }
                FaultKind::Delay { probability, max_delay_ps: max_ns * 1000 }
            }
        };
        Ok(FaultSpec { at_ps, kind })
    }
}

/// An example of a fault kind, for error messages.
fn example(kind: &str) -> &'static str {
    match kind {
        "link-degrade" => "link-degrade:link=gpu0-gpu1,bandwidth=0.25,latency_ns=500,at_us=10",
        "link-fail" => "link-fail:link=gpu0-gpu1,at_us=10",
        "straggler" => "straggler:gpu=1,slowdown=4,at_us=0",
        _ => "delay:max_ns=5000,p=0.5",
    }
}

/// What a fabric change does to its channels.
#[derive(Clone, Debug, PartialEq)]
pub enum ChannelEffect {
    /// Bandwidth x `bandwidth_factor` (floored to whole bytes per second, at least 1) and
    /// `extra_latency_ps` more latency.
    Degrade {
        /// Fraction of the bandwidth kept.
        bandwidth_factor: f64,
        /// Added latency per hop, in picoseconds.
        extra_latency_ps: TimePs,
    },
    /// The channels carry nothing; `routes` are the machine's routes from then on (every
    /// link failed so far avoided; pairs no route joins any more are absent).
    Fail {
        /// The routes that avoid every failed link.
        routes: BTreeMap<(EndpointId, EndpointId), Route>,
    },
}

/// A change of the interconnect at a virtual time (a resolved link fault).
#[derive(Clone, Debug, PartialEq)]
pub struct FabricChange {
    /// When it happens, in picoseconds.
    pub at_ps: TimePs,
    /// For messages: the link and what happened, e.g. ``link `gpu0`-`gpu3` (nvlink2, 2
    /// lanes, bundled:dgx1-v100 line 88) failed at 10 us``.
    pub description: String,
    /// The channels it changes (both directions of each link).
    pub channels: Vec<ChannelId>,
    /// What it does.
    pub effect: ChannelEffect,
}

/// A resolved straggler.
#[derive(Clone, Debug, PartialEq)]
struct Straggler {
    gpu: u32,
    at_ps: TimePs,
    /// Slowdown in thousandths (exact integer arithmetic on kernel times).
    slowdown_milli: u64,
}

/// A resolved delay fault.
#[derive(Clone, Debug, PartialEq)]
struct DelayFault {
    at_ps: TimePs,
    probability: f64,
    max_delay_ps: TimePs,
}

/// A fault plan resolved against one machine. Empty by default (no faults).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    specs: Vec<FaultSpec>,
    changes: Vec<FabricChange>,
    stragglers: Vec<Straggler>,
    delays: Vec<DelayFault>,
}

impl Faults {
    /// Whether there are no faults.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The faults as given, in plan order.
    pub fn specs(&self) -> &[FaultSpec] {
        &self.specs
    }

    /// The link faults, in time order (plan order at equal times).
    pub fn fabric_changes(&self) -> &[FabricChange] {
        &self.changes
    }

    /// Whether the plan fails a link.
    pub fn fails_links(&self) -> bool {
        self.changes.iter().any(|c| matches!(c.effect, ChannelEffect::Fail { .. }))
    }

    /// Checks that every straggler names one of the run's `gpus` GPUs.
    pub fn check_gpus(&self, gpus: u32) -> Result<(), SimError> {
        for (spec, s) in self.specs.iter().filter_map(|spec| match spec.kind {
            FaultKind::Straggler { gpu, .. } => Some((spec, gpu)),
            _ => None,
        }) {
            if s >= gpus {
                return Err(SimError::FaultSpec {
                    spec: spec.to_string(),
                    message: format!("gpu={s}, but the run uses {gpus} GPUs (0..={})", gpus - 1),
                    fix: "name one of the GPUs the run uses, or run on more GPUs".into(),
                });
            }
        }
        Ok(())
    }

    /// The duration of a kernel that starts on `gpu` at `now` and takes `base_ps` on a
    /// healthy GPU: scaled by the latest straggler fault of that GPU in effect (rounded up).
    pub fn kernel_time_ps(&self, gpu: u32, now: TimePs, base_ps: TimePs) -> TimePs {
        let active = self
            .stragglers
            .iter()
            .filter(|s| s.gpu == gpu && s.at_ps <= now)
            .max_by_key(|s| s.at_ps);
        match active {
            None => base_ps,
            Some(s) => {
                let scaled = (u128::from(base_ps) * u128::from(s.slowdown_milli)).div_ceil(1000);
                scaled.min(u128::from(TimePs::MAX)) as TimePs
            }
        }
    }

    /// The delivery delays of this plan over the random stream `rng` (from the run's seed).
    pub fn delivery_delays(&self, rng: ChaCha8Rng) -> Option<DeliveryDelays> {
        (!self.delays.is_empty()).then(|| DeliveryDelays {
            delays: self.delays.clone(),
            rng,
            last_ps: BTreeMap::new(),
        })
    }

    /// One line per fault, as given, for reports.
    pub fn describe(&self) -> Vec<String> {
        self.specs.iter().map(ToString::to_string).collect()
    }
}

/// Delivery times under a plan's `delay` faults (see the module docs).
#[derive(Clone, Debug)]
pub struct DeliveryDelays {
    delays: Vec<DelayFault>,
    rng: ChaCha8Rng,
    /// Latest delivery time per order key.
    last_ps: BTreeMap<u64, TimePs>,
}

impl DeliveryDelays {
    /// When a transfer that completed at `arrived_ps` is delivered: with the probability of
    /// the latest delay fault in effect, up to its `max_delay_ps` later (uniform); never
    /// before a delivery already given for the same `order_key`.
    pub fn delivery_ps(&mut self, arrived_ps: TimePs, order_key: u64) -> TimePs {
        let active = self.delays.iter().filter(|d| d.at_ps <= arrived_ps).max_by_key(|d| d.at_ps);
        let mut at = arrived_ps;
        if let Some(d) = active
            && self.rng.random_bool(d.probability)
        {
            at = at.saturating_add(self.rng.random_range(0..=d.max_delay_ps));
        }
        let last = self.last_ps.entry(order_key).or_insert(0);
        at = at.max(*last);
        *last = at;
        at
    }
}

/// The links named `name` (`A-B`, in either order): every `[[link]]` joining the two devices.
/// A name with several dashes is split where both sides are device names.
fn find_links(topology: &Topology, spec: &FaultSpec, name: &str) -> Result<Vec<usize>, SimError> {
    let bad =
        |message: String, fix: String| SimError::FaultSpec { spec: spec.to_string(), message, fix };
    let device = |n: &str| topology.devices.iter().position(|d| d.name == n);
    let splits: Vec<(usize, usize)> = name
        .match_indices('-')
        .filter_map(|(i, _)| Some((device(&name[..i])?, device(&name[i + 1..])?)))
        .collect();
    let (a, b) = match splits.as_slice() {
        [one] => *one,
        [] => {
            return Err(bad(
                format!("link={name}: topology `{}` has no devices named so", topology.name),
                format!(
                    "name a link by its two devices, e.g. link={}-{} (`switchyard topo show {}` \
                     lists the machine)",
                    topology.devices[topology.links[0].a].name,
                    topology.devices[topology.links[0].b].name,
                    topology.name
                ),
            ));
        }
        _ => {
            return Err(bad(
                format!("link={name} splits into device names in more than one way"),
                "rename the devices in the topology file so that no name joined by `-` \
                 to another is itself a device name"
                    .into(),
            ));
        }
    };
    let found: Vec<usize> = topology
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
        .map(|(i, _)| i)
        .collect();
    if found.is_empty() {
        let neighbours: Vec<&str> = topology
            .links
            .iter()
            .filter_map(|l| match (l.a == a, l.b == a) {
                (true, _) => Some(topology.devices[l.b].name.as_str()),
                (_, true) => Some(topology.devices[l.a].name.as_str()),
                _ => None,
            })
            .collect();
        let (na, nb) = (&topology.devices[a].name, &topology.devices[b].name);
        return Err(bad(
            format!("no [[link]] of topology `{}` joins `{na}` and `{nb}`", topology.name),
            format!("`{na}` is linked to {}; name one of those links", neighbours.join(", ")),
        ));
    }
    Ok(found)
}

/// Resolves `specs` against `topology` (see [`Topology::with_faults`]).
pub(crate) fn resolve(topology: &Topology, specs: &[FaultSpec]) -> Result<Faults, SimError> {
    let mut faults = Faults { specs: specs.to_vec(), ..Faults::default() };
    let mut link_faults: Vec<(TimePs, usize, Vec<usize>, &FaultSpec)> = Vec::new();
    for (order, spec) in specs.iter().enumerate() {
        match &spec.kind {
            FaultKind::LinkDegrade { link, .. } | FaultKind::LinkFail { link } => {
                link_faults.push((spec.at_ps, order, find_links(topology, spec, link)?, spec));
            }
            FaultKind::Straggler { gpu, slowdown } => {
                let count = topology.gpus.len() as u32;
                if *gpu >= count {
                    return Err(SimError::FaultSpec {
                        spec: spec.to_string(),
                        message: format!(
                            "gpu={gpu}, but topology `{}` has {count} GPUs (0..={})",
                            topology.name,
                            count - 1
                        ),
                        fix: "name one of its GPUs by its 0-based index".into(),
                    });
                }
                faults.stragglers.push(Straggler {
                    gpu: *gpu,
                    at_ps: spec.at_ps,
                    slowdown_milli: (slowdown * 1000.0).round() as u64,
                });
            }
            FaultKind::Delay { probability, max_delay_ps } => faults.delays.push(DelayFault {
                at_ps: spec.at_ps,
                probability: *probability,
                max_delay_ps: *max_delay_ps,
            }),
        }
    }
    link_faults.sort_by_key(|&(at, order, _, _)| (at, order));
    let mut failed: BTreeSet<usize> = BTreeSet::new();
    for (at_ps, _, links, spec) in link_faults {
        let channels: Vec<ChannelId> = links
            .iter()
            .flat_map(|&l| [ChannelId(2 * l as u32), ChannelId(2 * l as u32 + 1)])
            .collect();
        let names: Vec<String> = links.iter().map(|&l| describe_link(topology, l)).collect();
        let (effect, what) = match &spec.kind {
            FaultKind::LinkDegrade { bandwidth_factor, extra_latency_ps, .. } => (
                ChannelEffect::Degrade {
                    bandwidth_factor: *bandwidth_factor,
                    extra_latency_ps: *extra_latency_ps,
                },
                format!(
                    "degraded (bandwidth x {bandwidth_factor}, latency + {})",
                    format_time_ps(*extra_latency_ps)
                ),
            ),
            _ => {
                failed.extend(links.iter().copied());
                (ChannelEffect::Fail { routes: topology.routes_avoiding(&failed) }, "failed".into())
            }
        };
        faults.changes.push(FabricChange {
            at_ps,
            description: format!("{} {what} at {}", names.join(" and "), format_time_ps(at_ps)),
            channels,
            effect,
        });
    }
    Ok(faults)
}

/// A link for messages: its ends, type, lanes and where the file declares it.
fn describe_link(topology: &Topology, link: usize) -> String {
    let l = &topology.links[link];
    format!(
        "link `{}`-`{}` ({}, {} lane{}, {} line {})",
        topology.devices[l.a].name,
        topology.devices[l.b].name,
        topology.link_types[l.link_type].name,
        l.lanes,
        if l.lanes == 1 { "" } else { "s" },
        topology.source,
        l.line
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FaultSpec, String> {
        text.parse::<FaultSpec>().map_err(|e| e.to_string())
    }

    #[test]
    fn every_kind_parses_and_prints_back() {
        for text in [
            "link-degrade:link=gpu0-gpu3,bandwidth=0.25,latency_ns=500,at_ns=100000",
            "link-degrade:link=gpu0-gpu3,latency_ns=1",
            "link-fail:link=gpu0-plx0,at_ns=5",
            "straggler:gpu=2,slowdown=4.5,at_ns=1000",
            "delay:max_ns=8000,p=0.3",
            "delay:max_ns=1",
        ] {
            let spec = parse(text).unwrap();
            assert_eq!(spec.to_string(), text);
            assert_eq!(parse(&spec.to_string()).unwrap(), spec);
        }
        let spec = parse(" link-fail : link = gpu0-gpu1 , at_us = 7 ").unwrap();
        assert_eq!(spec.at_ps, 7_000_000);
        assert_eq!(spec.kind, FaultKind::LinkFail { link: "gpu0-gpu1".into() });
    }

    #[test]
    fn bad_specs_say_what_and_how_to_fix() {
        for (text, expected) in [
            ("link-break:link=a-b", "unknown fault kind `link-break`"),
            ("link-fail", "link-fail needs link=..."),
            ("link-fail:link=gpu0", "does not name two devices"),
            ("link-fail:gpu=1", "link-fail has no key `gpu`"),
            ("link-fail:link=a-b,at_us=1,at_ns=1", "both at_ns and at_us"),
            ("link-fail:link=a-b,at_us=-1", "at_us=-1 is not a whole number"),
            ("link-fail:link=a-b,link=c-d", "`link` is given twice"),
            ("link-fail:link=a-b,oops", "`oops` is not KEY=VALUE"),
            ("link-degrade:link=a-b", "changes nothing"),
            ("link-degrade:link=a-b,bandwidth=0", "bandwidth=0 is outside (0, 1]"),
            ("link-degrade:link=a-b,bandwidth=2", "outside (0, 1]"),
            ("link-degrade:link=a-b,bandwidth=nan", "not a finite number"),
            ("straggler:gpu=1", "straggler needs slowdown=..."),
            ("straggler:gpu=x,slowdown=2", "gpu=x is not a GPU index"),
            ("straggler:gpu=1,slowdown=0.5", "slowdown=0.5 is outside"),
            ("delay:p=0.5", "delay needs max_ns=..."),
            ("delay:max_ns=0", "max_ns=0 delays nothing"),
            ("delay:max_ns=10,p=1.5", "p=1.5 is outside (0, 1]"),
            ("delay:max_ns=99999999999", "not a whole number in 0..=1000000000"),
        ] {
            let message = parse(text).unwrap_err();
            assert!(message.contains(expected), "{text}: {message}");
            assert!(message.contains(&format!("fault `{text}`")), "{text}: {message}");
            assert!(message.contains("fix:"), "{text}: {message}");
        }
    }

    #[test]
    fn stragglers_scale_kernels_from_their_time_on() {
        let topology = Topology::bundled("dgx1-v100").unwrap();
        let specs = vec![
            parse("straggler:gpu=1,slowdown=4,at_ns=10").unwrap(),
            parse("straggler:gpu=1,slowdown=2.5,at_ns=20").unwrap(),
        ];
        let faults = resolve(&topology, &specs).unwrap();
        assert_eq!(faults.kernel_time_ps(1, 9_999, 1000), 1000);
        assert_eq!(faults.kernel_time_ps(1, 10_000, 1000), 4000);
        assert_eq!(faults.kernel_time_ps(1, 25_000, 1001), 2503);
        assert_eq!(faults.kernel_time_ps(0, 25_000, 1000), 1000);
        assert!(faults.check_gpus(2).is_ok());
        let e = faults.check_gpus(1).unwrap_err().to_string();
        assert!(e.contains("gpu=1, but the run uses 1 GPUs (0..=0)"), "{e}");
    }

    #[test]
    fn delays_never_reorder_one_order_key() {
        let topology = Topology::bundled("dgx1-v100").unwrap();
        let faults = resolve(&topology, &[parse("delay:max_ns=1000").unwrap()]).unwrap();
        let rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
        let mut d = faults.delivery_delays(rng).unwrap();
        let mut last = 0;
        let mut delayed = 0;
        for i in 0..200u64 {
            let arrived = i * 100_000;
            let at = d.delivery_ps(arrived, 7);
            assert!(at >= last && at >= arrived && at <= arrived.max(last) + 1_000_000);
            delayed += u64::from(at > arrived);
            last = at;
        }
        assert!(delayed > 100, "p=1 delays almost every delivery: {delayed}");
    }
}
