//! Validation of a parsed topology file and its resolution into a [`Topology`].

use std::collections::BTreeMap;

use toml::Spanned;

use super::routing;
use super::schema::{RawGpuModel, RawGpuModelsFile, RawLinkType, RawTopology};
use super::source::{Source, fnv1a_64};
use super::{Device, DeviceKind, GpuSpec, Link, LinkKind, LinkType, SocketSpec, Topology};
use crate::error::SimError;
use crate::fabric::{Channel, Endpoint, EndpointId, EndpointKind, Fabric};
use crate::gpu::{GpuModel, HostIssue, KernelCost};

/// File name used in errors about the shared GPU model file.
const GPU_MODELS_FILE: &str = "topologies/gpu_models.toml";

/// Copy engines of a GPU when neither its model nor its `[[gpu]]` entry says (seed 000
/// section 2: "multiple memory copy engines, enabling ... two-way memory transfer").
const DEFAULT_COPY_ENGINES: u32 = 2;

/// Parses, validates and resolves a topology file.
pub(crate) fn build(file: &str, text: &str) -> Result<Topology, SimError> {
    let src = Source { file: file.to_string(), text };
    let raw: RawTopology = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let models = gpu_models(&src, &raw)?;
    let (link_types, link_type_index) = link_types(&src, &raw)?;
    let devices = devices(&src, &raw)?;
    let by_name: BTreeMap<&str, usize> =
        devices.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    let links = links(&src, &raw, &by_name, &link_type_index)?;

    let mut gpus = Vec::new();
    for (i, g) in raw.gpu.iter().enumerate() {
        let g = g.get_ref();
        let model = models.get(g.model.get_ref().as_str()).cloned().ok_or_else(|| {
            let known: Vec<&str> = models.keys().map(String::as_str).collect();
            src.error(
                g.model.span(),
                format!("unknown GPU model `{}` for gpu `{}`", g.model.get_ref(), g.name.get_ref()),
                format!(
                    "use one of the models in {GPU_MODELS_FILE} ({}) or define \
                     [gpu_model.{}] in this file",
                    known.join(", "),
                    g.model.get_ref()
                ),
            )
        })?;
        let copy_engines = match &g.copy_engines {
            Some(c) => positive_int(&src, c, "copy_engines")?,
            None => model.copy_engines,
        };
        gpus.push(GpuSpec {
            index: i as u32,
            name: g.name.get_ref().clone(),
            model,
            copy_engines,
            endpoint: EndpointId(i as u32),
            device: by_name[g.name.get_ref().as_str()],
            home_socket: 0,
        });
    }
    if gpus.is_empty() {
        return Err(src.error(
            0..0,
            "the topology has no GPUs",
            "add at least one [[gpu]] table with `name` and `model`",
        ));
    }
    if raw.socket.is_empty() {
        return Err(src.error(
            0..0,
            "the topology has no socket, so its GPUs have no host memory to load graphs from \
             or stage copies through",
            "add a [[socket]] table with a `name` and a [[link]] from it to the GPUs (directly \
             or through switches)",
        ));
    }
    let sockets: Vec<SocketSpec> = raw
        .socket
        .iter()
        .enumerate()
        .map(|(i, s)| SocketSpec {
            index: i as u32,
            name: s.get_ref().name.get_ref().clone(),
            endpoint: EndpointId((gpus.len() + i) as u32),
            device: by_name[s.get_ref().name.get_ref().as_str()],
        })
        .collect();

    let mut endpoints: Vec<Endpoint> = gpus
        .iter()
        .map(|g| Endpoint {
            name: g.name.clone(),
            kind: EndpointKind::Gpu { index: g.index },
            copy_engines: g.copy_engines,
        })
        .collect();
    endpoints.extend(sockets.iter().map(|s| Endpoint {
        name: s.name.clone(),
        kind: EndpointKind::HostMemory { socket: s.index },
        copy_engines: u32::MAX,
    }));
    let channels = channels(&devices, &links, &link_types);

    let endpoint_devices: Vec<usize> =
        gpus.iter().map(|g| g.device).chain(sockets.iter().map(|s| s.device)).collect();
    let graph = routing::Graph::new(&devices, &links, &channels);
    let mut routes = BTreeMap::new();
    let mut route_devices = BTreeMap::new();
    for (si, &sd) in endpoint_devices.iter().enumerate() {
        let tree = graph.shortest_widest(sd);
        for (di, &dd) in endpoint_devices.iter().enumerate() {
            if si == di {
                continue;
            }
            let Some((chans, devs)) = tree.path_to(dd) else {
                let d = &devices[dd];
                let s = &devices[sd];
                return Err(SimError::Topology {
                    file: src.file.clone(),
                    line: d.line,
                    message: format!(
                        "{} `{}` has no route to {} `{}`",
                        d.kind.as_str(),
                        d.name,
                        s.kind.as_str(),
                        s.name
                    ),
                    fix: format!(
                        "add a [[link]] that connects `{}` to the rest of the machine \
                         (routes pass through sockets and switches, never through a GPU)",
                        d.name
                    ),
                });
            };
            route_devices.insert((EndpointId(si as u32), EndpointId(di as u32)), devs);
            routes.insert((EndpointId(si as u32), EndpointId(di as u32)), chans);
        }
    }
    // Explicit overrides.
    for r in &raw.route {
        let r = r.get_ref();
        let path = override_path(&src, r, &by_name, &graph)?;
        let from = endpoint_of(&src, &r.from, &by_name, &endpoint_devices)?;
        let to = endpoint_of(&src, &r.to, &by_name, &endpoint_devices)?;
        let mut insert = |from: usize, to: usize, devs: Vec<usize>| {
            let chans = graph.channels_along(&devs).expect("checked by override_path");
            routes.insert((EndpointId(from as u32), EndpointId(to as u32)), chans);
            route_devices.insert((EndpointId(from as u32), EndpointId(to as u32)), devs);
        };
        insert(from, to, path.clone());
        if r.both_directions.unwrap_or(true) {
            insert(to, from, path.into_iter().rev().collect());
        }
    }
    // Peer access: no link on the route forbids it; host memory is always accessible.
    let mut fabric_routes = BTreeMap::new();
    for (&(s, d), chans) in &routes {
        let both_gpus = (s.0 as usize) < gpus.len() && (d.0 as usize) < gpus.len();
        let peer_access = !both_gpus
            || chans.iter().all(|c: &crate::fabric::ChannelId| {
                link_types[links[c.0 as usize / 2].link_type].peer_access
            });
        fabric_routes.insert((s, d), crate::fabric::Route { channels: chans.clone(), peer_access });
    }
    for p in &raw.peer {
        let p = p.get_ref();
        let a = gpu_endpoint_of(&src, &p.a, &gpus)?;
        let b = gpu_endpoint_of(&src, &p.b, &gpus)?;
        for key in [(a, b), (b, a)] {
            if let Some(r) = fabric_routes.get_mut(&key) {
                r.peer_access = p.access;
            }
        }
    }
    // Home socket: nearest by hops, then lowest index.
    for g in &mut gpus {
        g.home_socket = sockets
            .iter()
            .filter_map(|s| {
                route_devices.get(&(g.endpoint, s.endpoint)).map(|p| (p.len(), s.index))
            })
            .min()
            .map_or(0, |(_, i)| i);
    }

    Ok(Topology {
        name: raw.name.get_ref().clone(),
        description: raw.description.trim().to_string(),
        measured_on: raw.measured_on.clone(),
        source: file.to_string(),
        source_hash: fnv1a_64(text.as_bytes()),
        gpus,
        sockets,
        devices,
        link_types,
        links,
        route_devices,
        fabric: Fabric { endpoints, channels, routes: fabric_routes },
        faults: Default::default(),
        overlay: None,
    })
}

/// Shared models from the bundled `gpu_models.toml`, then the file's own (which win).
fn gpu_models(src: &Source, raw: &RawTopology) -> Result<BTreeMap<String, GpuModel>, SimError> {
    let shared_src = Source { file: GPU_MODELS_FILE.to_string(), text: super::bundled::GPU_MODELS };
    let shared: RawGpuModelsFile =
        toml::from_str(shared_src.text).map_err(|e| shared_src.toml_error(&e))?;
    let mut models = BTreeMap::new();
    for (name, m) in &shared.gpu_model {
        models.insert(name.clone(), gpu_model(&shared_src, name, m.get_ref())?);
    }
    for (name, m) in &raw.gpu_model {
        models.insert(name.clone(), gpu_model(src, name, m.get_ref())?);
    }
    Ok(models)
}

fn gpu_model(src: &Source, name: &str, m: &RawGpuModel) -> Result<GpuModel, SimError> {
    let ps = |v: &Spanned<f64>, key: &str, scale: f64| -> Result<u64, SimError> {
        Ok((non_negative(src, v, key)? * scale).round() as u64)
    };
    let memory_mib = positive_int(src, &m.memory_mib, "memory_mib")?;
    Ok(GpuModel {
        name: name.to_string(),
        sm_count: positive_int(src, &m.sm_count, "sm_count")?,
        resident_threads_per_sm: positive_int(
            src,
            &m.resident_threads_per_sm,
            "resident_threads_per_sm",
        )?,
        memory_bytes: u64::from(memory_mib) << 20,
        memory_bandwidth_bytes_per_s: (positive(
            src,
            &m.memory_bandwidth_gb_s,
            "memory_bandwidth_gb_s",
        )? * 1e9)
            .round() as u64,
        launch_overhead_ps: ps(&m.launch_overhead_ns, "launch_overhead_ns", 1e3)?,
        sync_overhead_ps: ps(&m.sync_overhead_ns, "sync_overhead_ns", 1e3)?,
        kernel_min_ps: ps(&m.kernel_min_ns, "kernel_min_ns", 1e3)?,
        dependent_access_ps: ps(&m.dependent_access_ns, "dependent_access_ns", 1e3)?,
        item_ps: ps(&m.item_ps, "item_ps", 1.0)?,
        edge_ps: ps(&m.edge_ps, "edge_ps", 1.0)?,
        atomic_ps: ps(&m.atomic_ps, "atomic_ps", 1.0)?,
        copy_setup_ps: ps(&m.copy_setup_ns, "copy_setup_ns", 1e3)?,
        host: host_issue(src, m)?,
        copy_engines: match &m.copy_engines {
            Some(c) => positive_int(src, c, "copy_engines")?,
            None => DEFAULT_COPY_ENGINES,
        },
        kernel_costs: std::sync::Arc::new(kernel_costs(src, m)?),
    })
}

/// `[gpu_model.NAME.kernel_cost.KERNEL]` tables (absent per-count keys cost 0).
/// The host model: `launch_issue_ns` opts in, and each other kind's `*_issue_ns` defaults to
/// it (`poll_query_ns`, polling for a completion rather than issuing an operation, to 0;
/// `launch_lead_ns`, the part of a launch before its kernel can start, to the whole launch);
/// a kind's cost without `launch_issue_ns` is an error, and so is a lead longer than the
/// launch.
fn host_issue(src: &Source, m: &RawGpuModel) -> Result<Option<HostIssue>, SimError> {
    let kinds = [
        (&m.copy_issue_ns, "copy_issue_ns"),
        (&m.read_issue_ns, "read_issue_ns"),
        (&m.write_issue_ns, "write_issue_ns"),
        (&m.record_issue_ns, "record_issue_ns"),
        (&m.wait_issue_ns, "wait_issue_ns"),
    ];
    let Some(launch) = &m.launch_issue_ns else {
        let poll = [(&m.poll_query_ns, "poll_query_ns"), (&m.launch_lead_ns, "launch_lead_ns")];
        if let Some((Some(v), key)) = kinds.iter().chain(&poll).find(|(v, _)| v.is_some()) {
            return Err(src.error(
                v.span(),
                format!("`{key}` is given without `launch_issue_ns`"),
                "a host cost per operation kind belongs to the host model, which \
                 `launch_issue_ns` opts into: add `launch_issue_ns` (the host time of a kernel \
                 launch) to this GPU model, or remove this key",
            ));
        }
        return Ok(None);
    };
    let ns = |v: &Spanned<f64>, key: &str| -> Result<u64, SimError> {
        Ok((non_negative(src, v, key)? * 1e3).round() as u64)
    };
    let launch_ps = ns(launch, "launch_issue_ns")?;
    let mut cost = [launch_ps; 5];
    for (slot, (v, key)) in cost.iter_mut().zip(kinds) {
        if let Some(v) = v {
            *slot = ns(v, key)?;
        }
    }
    let [copy_ps, read_ps, write_ps, record_ps, wait_ps] = cost;
    let poll_query_ps = match &m.poll_query_ns {
        Some(v) => ns(v, "poll_query_ns")?,
        None => 0,
    };
    let launch_lead_ps = match &m.launch_lead_ns {
        Some(v) => {
            let lead = ns(v, "launch_lead_ns")?;
            if lead > launch_ps {
                return Err(src.error(
                    v.span(),
                    format!(
                        "`launch_lead_ns` ({} ns) is longer than `launch_issue_ns` ({} ns)",
                        lead as f64 / 1e3,
                        launch_ps as f64 / 1e3
                    ),
                    "the lead is the part of a launch's host time before its kernel can start: \
                     give at most `launch_issue_ns`, or remove the key (the whole launch)",
                ));
            }
            lead
        }
        None => launch_ps,
    };
    Ok(Some(HostIssue {
        launch_ps,
        launch_lead_ps,
        copy_ps,
        read_ps,
        write_ps,
        record_ps,
        wait_ps,
        poll_query_ps,
    }))
}

fn kernel_costs(src: &Source, m: &RawGpuModel) -> Result<BTreeMap<String, KernelCost>, SimError> {
    let ps = |v: &Option<Spanned<f64>>, key: &str, scale: f64| -> Result<u64, SimError> {
        match v {
            Some(v) => Ok((non_negative(src, v, key)? * scale).round() as u64),
            None => Ok(0),
        }
    };
    let mut out = BTreeMap::new();
    for (kernel, c) in &m.kernel_cost {
        let c = c.get_ref();
        if c.source.get_ref().trim().is_empty() {
            return Err(src.error(
                c.source.span(),
                format!("[kernel_cost.{kernel}] has an empty `source`"),
                "say where the numbers come from (a fit's input files, a measurement, a paper)",
            ));
        }
        let (ramp_item_ps, ramp_items) = match (&c.ramp_item_ps, &c.ramp_items) {
            (None, None) => (0, 0),
            (Some(ps), Some(items)) => (
                (non_negative(src, ps, "ramp_item_ps")?).round() as u64,
                u64::from(positive_int(src, items, "ramp_items")?),
            ),
            (Some(v), None) => {
                return Err(src.error(
                    v.span(),
                    format!("[kernel_cost.{kernel}] has `ramp_item_ps` without `ramp_items`"),
                    "add `ramp_items` (the items per launch or round the ramp is charged \
                     for, e.g. 256: one thread block) or remove `ramp_item_ps`",
                ));
            }
            (None, Some(v)) => {
                return Err(src.error(
                    v.span(),
                    format!("[kernel_cost.{kernel}] has `ramp_items` without `ramp_item_ps`"),
                    "add `ramp_item_ps` (the cost per item of the ramp) or remove `ramp_items`",
                ));
            }
        };
        out.insert(
            kernel.clone(),
            KernelCost {
                fixed_ps: (non_negative(src, &c.fixed_ns, "fixed_ns")? * 1e3).round() as u64,
                item_ps: ps(&c.item_ps, "item_ps", 1.0)?,
                edge_ps: ps(&c.edge_ps, "edge_ps", 1.0)?,
                atomic_ps: ps(&c.atomic_ps, "atomic_ps", 1.0)?,
                vertex_ps: ps(&c.vertex_ps, "vertex_ps", 1.0)?,
                output_ps: ps(&c.output_ps, "output_ps", 1.0)?,
                round_ps: ps(&c.round_ns, "round_ns", 1e3)?,
                ramp_item_ps,
                ramp_items,
                path_edge_ps: ps(&c.path_edge_ps, "path_edge_ps", 1.0)?,
            },
        );
    }
    Ok(out)
}

type LinkTypes = (Vec<LinkType>, BTreeMap<String, usize>);

fn link_types(src: &Source, raw: &RawTopology) -> Result<LinkTypes, SimError> {
    let mut out = Vec::new();
    let mut index = BTreeMap::new();
    for (name, lt) in &raw.link_type {
        index.insert(name.clone(), out.len());
        out.push(link_type(src, name, lt.get_ref())?);
    }
    Ok((out, index))
}

fn link_type(src: &Source, name: &str, lt: &RawLinkType) -> Result<LinkType, SimError> {
    let kind = match lt.kind.get_ref().as_str() {
        "pcie" => LinkKind::Pcie,
        "nvlink" => LinkKind::Nvlink,
        "smp" | "qpi" | "upi" | "xbus" => LinkKind::Smp,
        "infiniband" => LinkKind::Infiniband,
        other => {
            return Err(src.error(
                lt.kind.span(),
                format!("unknown link kind `{other}` in [link_type.{name}]"),
                "use one of: pcie, nvlink, smp (QPI/UPI/X-Bus; also accepted as qpi, upi, \
                 xbus), infiniband",
            ));
        }
    };
    Ok(LinkType {
        name: name.to_string(),
        kind,
        bandwidth_gb_s: positive(src, &lt.bandwidth_gb_s, "bandwidth_gb_s")?,
        latency_ns: non_negative(src, &lt.latency_ns, "latency_ns")?,
        max_payload_bytes: positive_int(src, &lt.max_payload_bytes, "max_payload_bytes")?,
        header_bytes: non_negative_int(src, &lt.header_bytes, "header_bytes")?,
        peer_access: lt.peer_access.unwrap_or(true),
        setup_ns: match &lt.setup_ns {
            Some(s) => non_negative(src, s, "setup_ns")?,
            None => 0.0,
        },
    })
}

fn devices(src: &Source, raw: &RawTopology) -> Result<Vec<Device>, SimError> {
    let mut out: Vec<Device> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut add =
        |name: &Spanned<String>, kind: DeviceKind, node: &Option<String>| -> Result<(), SimError> {
            let line = src.line_of(name.span().start);
            if name.get_ref().is_empty() {
                return Err(src.error(name.span(), "empty device name", "give the device a name"));
            }
            if let Some(first) = seen.get(name.get_ref()) {
                return Err(src.error(
                    name.span(),
                    format!(
                        "duplicate device name `{}` (first declared at line {first})",
                        name.get_ref()
                    ),
                    "give every socket, switch, NIC and GPU a unique name",
                ));
            }
            seen.insert(name.get_ref().clone(), line);
            out.push(Device {
                name: name.get_ref().clone(),
                kind,
                node: node.clone().unwrap_or_default(),
                line,
            });
            Ok(())
        };
    for s in &raw.socket {
        add(&s.get_ref().name, DeviceKind::Socket, &s.get_ref().node)?;
    }
    for s in &raw.switch {
        let s = s.get_ref();
        let kind = match s.kind.get_ref().as_str() {
            "pcie" => DeviceKind::PcieSwitch,
            "nvswitch" => DeviceKind::NvSwitch,
            "infiniband" => DeviceKind::IbSwitch,
            other => {
                return Err(src.error(
                    s.kind.span(),
                    format!("unknown switch kind `{other}` for switch `{}`", s.name.get_ref()),
                    "use one of: pcie, nvswitch, infiniband",
                ));
            }
        };
        add(&s.name, kind, &s.node)?;
    }
    for n in &raw.nic {
        add(&n.get_ref().name, DeviceKind::Nic, &n.get_ref().node)?;
    }
    for g in &raw.gpu {
        add(&g.get_ref().name, DeviceKind::Gpu, &g.get_ref().node)?;
    }
    Ok(out)
}

fn links(
    src: &Source,
    raw: &RawTopology,
    by_name: &BTreeMap<&str, usize>,
    link_type_index: &BTreeMap<String, usize>,
) -> Result<Vec<Link>, SimError> {
    let mut out: Vec<Link> = Vec::new();
    let mut seen: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let known_names = || by_name.keys().copied().collect::<Vec<_>>().join(", ");
    for l in &raw.link {
        let line = src.line_of(l.span().start);
        let l = l.get_ref();
        let end = |n: &Spanned<String>| -> Result<usize, SimError> {
            by_name.get(n.get_ref().as_str()).copied().ok_or_else(|| {
                src.error(
                    n.span(),
                    format!("link to `{}`, which is not declared", n.get_ref()),
                    format!(
                        "declare it as a [[socket]], [[switch]], [[nic]] or [[gpu]], or use \
                         one of: {}",
                        known_names()
                    ),
                )
            })
        };
        let a = end(&l.a)?;
        let b = end(&l.b)?;
        if a == b {
            return Err(src.error(
                l.b.span(),
                format!("link from `{}` to itself", l.a.get_ref()),
                "a link joins two different devices",
            ));
        }
        let link_type = link_type_index.get(l.link_type.get_ref()).copied().ok_or_else(|| {
            src.error(
                l.link_type.span(),
                format!("unknown link type `{}`", l.link_type.get_ref()),
                format!(
                    "define [link_type.{}] in this file, or use one of: {}",
                    l.link_type.get_ref(),
                    link_type_index.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let lanes = match &l.lanes {
            Some(n) => positive_int(src, n, "lanes")?,
            None => 1,
        };
        let key = (a.min(b), a.max(b));
        if let Some(first) = seen.get(&key) {
            return Err(src.error(
                l.a.span(),
                format!(
                    "duplicate link between `{}` and `{}` (first at line {first})",
                    l.a.get_ref(),
                    l.b.get_ref()
                ),
                "declare each pair once and give the total in `lanes`",
            ));
        }
        seen.insert(key, line);
        out.push(Link { a, b, link_type, lanes, line });
    }
    Ok(out)
}

fn channels(devices: &[Device], links: &[Link], link_types: &[LinkType]) -> Vec<Channel> {
    let mut out = Vec::with_capacity(links.len() * 2);
    for l in links {
        let lt = &link_types[l.link_type];
        let bandwidth = (lt.bandwidth_gb_s * 1e9 * f64::from(l.lanes)).round() as u64;
        for (x, y) in [(l.a, l.b), (l.b, l.a)] {
            let lanes = if l.lanes == 1 { "lane" } else { "lanes" };
            out.push(Channel {
                name: format!(
                    "{} {}->{} ({} {lanes})",
                    lt.name, devices[x].name, devices[y].name, l.lanes
                ),
                bandwidth_bytes_per_s: bandwidth.max(1),
                latency_ps: (lt.latency_ns * 1e3).round() as u64,
                max_payload_bytes: lt.max_payload_bytes,
                header_bytes: lt.header_bytes,
            });
        }
    }
    out
}

fn override_path(
    src: &Source,
    r: &super::schema::RawRoute,
    by_name: &BTreeMap<&str, usize>,
    graph: &routing::Graph,
) -> Result<Vec<usize>, SimError> {
    if r.from.get_ref() == r.to.get_ref() {
        return Err(src.error(
            r.to.span(),
            format!("route from `{}` to itself", r.from.get_ref()),
            "a [[route]] joins two different GPUs or sockets",
        ));
    }
    let mut names: Vec<&str> = vec![r.from.get_ref().as_str()];
    names.extend(r.via.get_ref().iter().map(String::as_str));
    names.push(r.to.get_ref().as_str());
    let mut path = Vec::new();
    for n in &names {
        let d = by_name.get(n).copied().ok_or_else(|| {
            src.error(
                r.via.span(),
                format!("route names `{n}`, which is not declared"),
                "list declared device names in `from`, `via` and `to`",
            )
        })?;
        path.push(d);
    }
    for w in path.windows(2) {
        if graph.channel_between(w[0], w[1]).is_none() {
            return Err(src.error(
                r.via.span(),
                format!(
                    "route from `{}` to `{}` steps from `{}` to `{}`, which no [[link]] joins",
                    r.from.get_ref(),
                    r.to.get_ref(),
                    graph.name(w[0]),
                    graph.name(w[1])
                ),
                "list in `via` the devices the path passes, in order, each linked to the next",
            ));
        }
    }
    Ok(path)
}

fn endpoint_of(
    src: &Source,
    name: &Spanned<String>,
    by_name: &BTreeMap<&str, usize>,
    endpoint_devices: &[usize],
) -> Result<usize, SimError> {
    by_name
        .get(name.get_ref().as_str())
        .and_then(|d| endpoint_devices.iter().position(|e| e == d))
        .ok_or_else(|| {
            src.error(
                name.span(),
                format!("`{}` is not a GPU or a socket", name.get_ref()),
                "routes and peer entries join GPUs and sockets (host memory)",
            )
        })
}

fn gpu_endpoint_of(
    src: &Source,
    name: &Spanned<String>,
    gpus: &[GpuSpec],
) -> Result<EndpointId, SimError> {
    gpus.iter().find(|g| &g.name == name.get_ref()).map(|g| g.endpoint).ok_or_else(|| {
        src.error(
            name.span(),
            format!("`{}` is not a declared GPU", name.get_ref()),
            "[[peer]] entries name two declared GPUs",
        )
    })
}

/// The range a numeric key may take: outside it a file describes no real machine, and
/// virtual-time arithmetic on its numbers could overflow. Units are in the keys' names.
fn accepted_range(key: &str) -> (f64, f64, &'static str) {
    match key {
        k if k.ends_with("_gb_s") => (1e-6, 1e6, "1 kB/s to 1 PB/s"),
        k if k.ends_with("_ns") => (0.0, 1e9, "at most one second"),
        k if k.ends_with("_ps") => (0.0, 1e9, "at most one millisecond"),
        "lanes" | "copy_engines" => (0.0, 1024.0, "at most 1024"),
        "max_payload_bytes" | "header_bytes" => (0.0, 1_048_576.0, "at most 1 MiB"),
        "sm_count" | "resident_threads_per_sm" => (0.0, 1e6, "at most 1,000,000"),
        "memory_mib" => (0.0, 1_073_741_824.0, "at most 1 PiB"),
        _ => (0.0, f64::from(u32::MAX), "a 32-bit number"),
    }
}

/// Checks that `x` (given for `key`) lies in the key's accepted range.
fn in_range(src: &Source, span: std::ops::Range<usize>, key: &str, x: f64) -> Result<(), SimError> {
    let (low, high, what) = accepted_range(key);
    if x > high || (x > 0.0 && x < low) {
        return Err(src.error(
            span,
            format!(
                "`{key}` = {} is out of range: this simulator accepts {what} ({low} to {high})",
                if x >= 1e15 { format!("{x:e}") } else { x.to_string() }
            ),
            format!("set `{key}` to a value in {low}..={high} (the unit is in the key's name)"),
        ));
    }
    Ok(())
}

fn positive(src: &Source, v: &Spanned<f64>, key: &str) -> Result<f64, SimError> {
    let x = *v.get_ref();
    if x.is_finite() && x > 0.0 {
        in_range(src, v.span(), key, x)?;
        Ok(x)
    } else {
        Err(src.error(
            v.span(),
            format!("`{key}` must be a positive number, got {x}"),
            format!("set `{key}` to a value above zero"),
        ))
    }
}

fn non_negative(src: &Source, v: &Spanned<f64>, key: &str) -> Result<f64, SimError> {
    let x = *v.get_ref();
    if x.is_finite() && x >= 0.0 {
        in_range(src, v.span(), key, x)?;
        Ok(x)
    } else {
        Err(src.error(
            v.span(),
            format!("`{key}` must be zero or positive, got {x}"),
            format!("set `{key}` to a finite value of zero or more"),
        ))
    }
}

fn positive_int(src: &Source, v: &Spanned<i64>, key: &str) -> Result<u32, SimError> {
    let x = *v.get_ref();
    if x > 0 && x <= i64::from(u32::MAX) {
        in_range(src, v.span(), key, x as f64)?;
        Ok(x as u32)
    } else {
        Err(src.error(
            v.span(),
            format!("`{key}` must be a positive integer, got {x}"),
            format!("set `{key}` to a whole number of at least 1"),
        ))
    }
}

fn non_negative_int(src: &Source, v: &Spanned<i64>, key: &str) -> Result<u32, SimError> {
    let x = *v.get_ref();
    if (0..=i64::from(u32::MAX)).contains(&x) {
        in_range(src, v.span(), key, x as f64)?;
        Ok(x as u32)
    } else {
        Err(src.error(
            v.span(),
            format!("`{key}` must be a whole number of zero or more, got {x}"),
            format!("set `{key}` to 0 or more"),
        ))
    }
}
