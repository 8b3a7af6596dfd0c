//! Derived machines: a small TOML overlay, `base = "dgx1-v100"` plus edits, applied to a
//! bundled topology or a topology file (schema in `topologies/SCHEMA.md`, "Overlays").
//!
//! The edits are applied to the base's TOML tables in a fixed order (`nodes`, `[nvswitch]`,
//! `[[lanes]]` in file order, `[link_type.NAME]`, `gpu_model`, `[gpu_memory]`), and the machine is built
//! again after each, so an edit that leaves it invalid (a GPU no route reaches, a value out
//! of range) is reported at the overlay's line, with the fix in the overlay's terms. The
//! derived machine's canonical TOML is kept: its hash identifies the machine a run used.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use toml::{Spanned, Table, Value};

use super::source::{Source, fnv1a_64};
use crate::error::SimError;

/// How many overlays may stand on one another (`base` naming an overlay) before the chain
/// is taken for a cycle.
const MAX_DEPTH: usize = 8;

/// What an overlay did: recorded on the derived [`super::Topology`] and in run reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlayInfo {
    /// The base machine as loaded: `bundled:NAME` or a path.
    pub base: String,
    /// The overlay's text, as written.
    pub text: String,
    /// FNV-1a 64 of the overlay's text.
    pub text_hash: u64,
    /// One line per edit, saying what it changed.
    pub changes: Vec<String>,
    /// The derived machine as a plain topology file (its canonical form).
    pub derived_toml: String,
}

/// An overlay file, as parsed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverlay {
    base: Spanned<String>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    nodes: Option<Spanned<i64>>,
    #[serde(default)]
    nvswitch: Option<Spanned<RawNvswitch>>,
    #[serde(default)]
    lanes: Vec<Spanned<RawLanes>>,
    #[serde(default)]
    link_type: BTreeMap<String, Spanned<RawLinkTypeEdit>>,
    #[serde(default)]
    gpu_model: Option<Spanned<String>>,
    #[serde(default)]
    gpu_memory: Option<Spanned<RawGpuMemory>>,
}

/// `[gpu_memory]`: new memory size and bandwidth (datasheet numbers) for the GPU models the
/// machine file defines itself (a calibrated model on another card's memory, the rest of
/// its fit kept).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpuMemory {
    #[serde(default)]
    mib: Option<i64>,
    #[serde(default)]
    bandwidth_gb_s: Option<f64>,
}

/// `[nvswitch]`: replace the GPU-to-GPU NVLink mesh by one NVSwitch.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNvswitch {
    #[serde(default, rename = "type")]
    link_type: Option<Spanned<String>>,
    #[serde(default)]
    lanes: Option<Spanned<i64>>,
}

/// `[[lanes]]`: set the lanes of one pair's link, or of every link of a type.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLanes {
    #[serde(default)]
    a: Option<Spanned<String>>,
    #[serde(default)]
    b: Option<Spanned<String>>,
    #[serde(default, rename = "type")]
    link_type: Option<Spanned<String>>,
    lanes: Spanned<i64>,
}

/// `[link_type.NAME]`: new values for some of a link type's parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinkTypeEdit {
    #[serde(default)]
    bandwidth_gb_s: Option<f64>,
    #[serde(default)]
    latency_ns: Option<f64>,
    #[serde(default)]
    max_payload_bytes: Option<i64>,
    #[serde(default)]
    header_bytes: Option<i64>,
    #[serde(default)]
    peer_access: Option<bool>,
    #[serde(default)]
    setup_ns: Option<f64>,
}

/// Whether `text` is an overlay (a TOML table with a top-level `base`) rather than a
/// topology file. Text that is not TOML is not an overlay (the topology loader reports it).
pub(crate) fn is_overlay(text: &str) -> bool {
    toml::from_str::<Table>(text).is_ok_and(|t| t.contains_key("base"))
}

/// Derives the machine `text` (an overlay read from `file`) describes: the derived topology
/// file's text and what the overlay did. `dir` is where a relative `base` path is looked up.
pub(crate) fn derive(
    file: &str,
    text: &str,
    dir: Option<&Path>,
    depth: usize,
) -> Result<(String, OverlayInfo), SimError> {
    let src = Source { file: file.to_string(), text };
    let raw: RawOverlay = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    if depth >= MAX_DEPTH {
        return Err(src.error(
            raw.base.span(),
            format!("overlays stand on one another more than {MAX_DEPTH} deep"),
            "check that no overlay's `base` leads back to itself; derive from a bundled name",
        ));
    }
    let (base_source, base_text) = base_text(&src, &raw.base, dir, depth)?;
    let mut table: Table = toml::from_str(&base_text).map_err(|e| {
        src.error(
            raw.base.span(),
            format!("base `{}` is not valid TOML: {}", raw.base.get_ref(), e.message().trim()),
            "derive from a bundled name (`switchyard topo list`) or a topology file that loads",
        )
    })?;
    let base_name = table.get("name").and_then(Value::as_str).unwrap_or("base").to_string();
    let mut d = Derivation { src: &src, base: base_name.clone(), changes: Vec::new() };
    d.check(&table, 0..0, "the base machine")?;

    if let Some(nodes) = &raw.nodes {
        d.nodes(&mut table, nodes)?;
    }
    if let Some(nv) = &raw.nvswitch {
        d.nvswitch(&mut table, nv)?;
    }
    for edit in &raw.lanes {
        d.lanes(&mut table, edit)?;
    }
    for (name, edit) in &raw.link_type {
        d.link_type(&mut table, name, edit)?;
    }
    if let Some(model) = &raw.gpu_model {
        d.gpu_model(&mut table, model)?;
    }
    if let Some(memory) = &raw.gpu_memory {
        d.gpu_memory(&mut table, memory)?;
    }

    let stem = Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = match &raw.name {
        Some(n) => n.get_ref().clone(),
        None => format!("{base_name}+{}", stem.unwrap_or_else(|| "overlay".into())),
    };
    let description = raw
        .description
        .clone()
        .unwrap_or_else(|| format!("derived from {base_source}: {}", d.changes.join("; ")));
    table.insert("name".into(), Value::String(name));
    table.insert("description".into(), Value::String(description));
    d.check(&table, raw.base.span(), "the derived machine")?;
    let derived = serialize(&src, &table)?;
    let info = OverlayInfo {
        base: base_source,
        text: text.to_string(),
        text_hash: fnv1a_64(text.as_bytes()),
        changes: d.changes,
        derived_toml: derived.clone(),
    };
    Ok((derived, info))
}

/// The base's source label and plain topology text (an overlay base derived first).
fn base_text(
    src: &Source,
    base: &Spanned<String>,
    dir: Option<&Path>,
    depth: usize,
) -> Result<(String, String), SimError> {
    let name = base.get_ref();
    if let Some(text) = super::bundled::text(name) {
        return Ok((format!("bundled:{name}"), text.to_string()));
    }
    let path = match dir {
        Some(d) if Path::new(name).is_relative() => d.join(name),
        _ => Path::new(name).to_path_buf(),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        src.error(
            base.span(),
            format!("base `{name}` is neither a bundled machine nor a readable file ({e})"),
            format!(
                "use a bundled name ({}) or the path of a topology file (relative paths are \
                 taken from the overlay's folder)",
                super::bundled_names().join(", ")
            ),
        )
    })?;
    let label = path.display().to_string();
    if is_overlay(&text) {
        let (derived, _) = derive(&label, &text, path.parent(), depth + 1)?;
        return Ok((label, derived));
    }
    Ok((label, text))
}

fn serialize(src: &Source, table: &Table) -> Result<String, SimError> {
    toml::to_string(table).map_err(|e| {
        src.error(
            0..0,
            format!("the derived machine cannot be written as TOML: {e}"),
            "report this",
        )
    })
}

/// The edits' shared state: the overlay's text for errors, the base's name, the change log.
struct Derivation<'a> {
    src: &'a Source<'a>,
    base: String,
    changes: Vec<String>,
}

/// A device of the tables: its name and node.
struct DeviceRef {
    name: String,
    node: Option<String>,
}

const DEVICE_ARRAYS: [&str; 4] = ["socket", "switch", "nic", "gpu"];

fn array<'t>(table: &'t Table, key: &str) -> &'t [Value] {
    table.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn array_mut<'t>(table: &'t mut Table, key: &str) -> &'t mut Vec<Value> {
    let entry = table.entry(key.to_string()).or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    entry.as_array_mut().expect("made an array above")
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn lanes_of(v: &Value) -> i64 {
    v.get("lanes").and_then(Value::as_integer).unwrap_or(1)
}

fn devices(table: &Table) -> Vec<DeviceRef> {
    let mut out = Vec::new();
    for key in DEVICE_ARRAYS {
        for v in array(table, key) {
            out.push(DeviceRef {
                name: str_of(v, "name").to_string(),
                node: v.get("node").and_then(Value::as_str).map(str::to_string),
            });
        }
    }
    out
}

fn link_type_kind(table: &Table, name: &str) -> Option<String> {
    table
        .get("link_type")
        .and_then(|t| t.get(name))
        .and_then(|t| t.get("kind"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn link_type_names(table: &Table) -> Vec<String> {
    table
        .get("link_type")
        .and_then(Value::as_table)
        .map_or(Vec::new(), |t| t.keys().cloned().collect())
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

impl Derivation<'_> {
    /// Builds the machine as it stands; an error is reported at `span` of the overlay.
    fn check(
        &self,
        table: &Table,
        span: std::ops::Range<usize>,
        what: &str,
    ) -> Result<(), SimError> {
        let text = serialize(self.src, table)?;
        match super::build::build(&format!("{} (derived)", self.src.file), &text) {
            Ok(_) => Ok(()),
            Err(SimError::Topology { message, fix, .. }) => {
                let fix = if message.contains("has no route") {
                    "keep a link that joins it to the rest of the machine (lanes of at least 1), \
                     or drop this edit"
                        .to_string()
                } else {
                    format!("change this edit so that the machine loads (the loader says: {fix})")
                };
                Err(self.src.error(span, format!("{what} is invalid: {message}"), fix))
            }
            Err(e) => Err(e),
        }
    }

    fn error(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> SimError {
        self.src.error(span, message, fix)
    }

    fn device_names(&self, table: &Table) -> String {
        devices(table).into_iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
    }

    /// `nodes = N`: keep the first N nodes of a cluster, or add nodes copied from its own.
    fn nodes(&mut self, table: &mut Table, nodes: &Spanned<i64>) -> Result<(), SimError> {
        let span = nodes.span();
        let devs = devices(table);
        let mut order: Vec<String> = Vec::new();
        for d in &devs {
            if let Some(n) = &d.node
                && !order.contains(n)
            {
                order.push(n.clone());
            }
        }
        if order.is_empty() {
            return Err(self.error(
                span,
                format!("`nodes`: `{}` is one machine (no device has a `node`)", self.base),
                "drop `nodes` (use --gpus for fewer GPUs), or derive from a cluster such as \
                 summit-ib-x8",
            ));
        }
        let want = *nodes.get_ref();
        if !(1..=1024).contains(&want) {
            return Err(self.error(
                span,
                format!("`nodes` = {want} is out of range"),
                "give a node count from 1 to 1024",
            ));
        }
        let want = want as usize;
        let have = order.len();
        if want < have {
            let dropped: BTreeSet<&str> = order[want..].iter().map(String::as_str).collect();
            let gone: BTreeSet<String> = devs
                .iter()
                .filter(|d| d.node.as_deref().is_some_and(|n| dropped.contains(n)))
                .map(|d| d.name.clone())
                .collect();
            for key in DEVICE_ARRAYS {
                array_mut(table, key).retain(|v| !gone.contains(str_of(v, "name")));
            }
            let links = array_mut(table, "link");
            let before = links.len();
            links.retain(|l| !gone.contains(str_of(l, "a")) && !gone.contains(str_of(l, "b")));
            let removed = before - links.len();
            array_mut(table, "route").retain(|r| {
                !gone.contains(str_of(r, "from"))
                    && !gone.contains(str_of(r, "to"))
                    && r.get("via").and_then(Value::as_array).is_none_or(|via| {
                        via.iter().all(|v| !gone.contains(v.as_str().unwrap_or("")))
                    })
            });
            array_mut(table, "peer")
                .retain(|p| !gone.contains(str_of(p, "a")) && !gone.contains(str_of(p, "b")));
            self.changes.push(format!(
                "nodes {have} -> {want}: removed {} ({}, {})",
                order[want..].join(", "),
                plural(gone.len(), "device"),
                plural(removed, "link")
            ));
        } else if want > have {
            let mut taken: BTreeSet<String> = devs.iter().map(|d| d.name.clone()).collect();
            let mut node_names: BTreeSet<String> = order.iter().cloned().collect();
            let mut added_devices = 0;
            let mut added_links = 0;
            for k in have..want {
                let template = &order[k % have];
                let node = new_node_name(template, k, &node_names);
                node_names.insert(node.clone());
                let mut renamed: BTreeMap<String, String> = BTreeMap::new();
                for key in DEVICE_ARRAYS {
                    let copies: Vec<Value> = array(table, key)
                        .iter()
                        .filter(|v| v.get("node").and_then(Value::as_str) == Some(template))
                        .cloned()
                        .collect();
                    for mut v in copies {
                        let old = str_of(&v, "name").to_string();
                        let mut new = format!("{old}@{node}");
                        while taken.contains(&new) {
                            new.push('\'');
                        }
                        taken.insert(new.clone());
                        if let Value::Table(t) = &mut v {
                            t.insert("name".into(), Value::String(new.clone()));
                            t.insert("node".into(), Value::String(node.clone()));
                        }
                        renamed.insert(old, new);
                        array_mut(table, key).push(v);
                        added_devices += 1;
                    }
                }
                let node_of: BTreeMap<String, Option<String>> =
                    devices(table).into_iter().map(|d| (d.name, d.node)).collect();
                let copies: Vec<Value> = array(table, "link")
                    .iter()
                    .filter_map(|l| {
                        let (a, b) = (str_of(l, "a"), str_of(l, "b"));
                        let shared = |x: &str| node_of.get(x).is_some_and(Option::is_none);
                        let a2 = renamed.get(a).cloned().or_else(|| shared(a).then(|| a.into()))?;
                        let b2 = renamed.get(b).cloned().or_else(|| shared(b).then(|| b.into()))?;
                        if a2 == a && b2 == b {
                            return None;
                        }
                        let mut l = l.clone();
                        if let Value::Table(t) = &mut l {
                            t.insert("a".into(), Value::String(a2));
                            t.insert("b".into(), Value::String(b2));
                        }
                        Some(l)
                    })
                    .collect();
                added_links += copies.len();
                array_mut(table, "link").extend(copies);
            }
            self.changes.push(format!(
                "nodes {have} -> {want}: added {} copied from the base's nodes ({}, {}; \
                 links to shared switches copied with their lanes)",
                plural(want - have, "node"),
                plural(added_devices, "device"),
                plural(added_links, "link")
            ));
        } else {
            self.changes.push(format!("nodes {have} -> {want}: unchanged"));
        }
        self.check(table, span, "`nodes`")
    }

    /// `[nvswitch]`: every GPU-to-GPU NVLink removed, one NVSwitch linked to every GPU.
    fn nvswitch(&mut self, table: &mut Table, nv: &Spanned<RawNvswitch>) -> Result<(), SimError> {
        let span = nv.span();
        let nv = nv.get_ref();
        let gpus: Vec<String> =
            array(table, "gpu").iter().map(|g| str_of(g, "name").to_string()).collect();
        let is_gpu = |n: &str| gpus.iter().any(|g| g == n);
        let mesh: Vec<&Value> = array(table, "link")
            .iter()
            .filter(|l| {
                is_gpu(str_of(l, "a"))
                    && is_gpu(str_of(l, "b"))
                    && link_type_kind(table, str_of(l, "type")).as_deref() == Some("nvlink")
            })
            .collect();
        let mesh_types: BTreeSet<String> =
            mesh.iter().map(|l| str_of(l, "type").to_string()).collect();
        let link_type = match &nv.link_type {
            Some(t) => {
                let kind = link_type_kind(table, t.get_ref());
                if kind.is_none() {
                    return Err(self.error(
                        t.span(),
                        format!(
                            "`[nvswitch]` names link type `{}`, which `{}` does not have",
                            t.get_ref(),
                            self.base
                        ),
                        format!("use one of its link types: {}", link_type_names(table).join(", ")),
                    ));
                }
                if kind.as_deref() != Some("nvlink") {
                    return Err(self.error(
                        t.span(),
                        format!(
                            "`[nvswitch]` names link type `{}`, which is not NVLink",
                            t.get_ref()
                        ),
                        "GPUs reach an NVSwitch over NVLink: name a link type of kind `nvlink`",
                    ));
                }
                t.get_ref().clone()
            }
            None => match mesh_types.len() {
                1 => mesh_types.iter().next().cloned().unwrap_or_default(),
                0 => {
                    return Err(self.error(
                        span,
                        format!(
                            "`[nvswitch]`: `{}` has no NVLink between GPUs to replace",
                            self.base
                        ),
                        "an NVSwitch replaces a GPU-to-GPU NVLink mesh; derive from a machine \
                         with one (dgx1-v100, dgx-station-v100x4), or give `type` naming an \
                         NVLink link type of the base",
                    ));
                }
                _ => {
                    return Err(self.error(
                        span,
                        format!(
                            "`[nvswitch]`: the GPUs of `{}` are joined by several NVLink types ({})",
                            self.base,
                            mesh_types.iter().cloned().collect::<Vec<_>>().join(", ")
                        ),
                        "give `type` to say which link type joins GPUs to the NVSwitch",
                    ));
                }
            },
        };
        let mut per_gpu: BTreeMap<String, i64> = BTreeMap::new();
        for l in &mesh {
            for end in ["a", "b"] {
                *per_gpu.entry(str_of(l, end).to_string()).or_default() += lanes_of(l);
            }
        }
        let lanes = match &nv.lanes {
            Some(n) if *n.get_ref() < 1 => {
                return Err(self.error(
                    n.span(),
                    format!("`[nvswitch]` lanes = {} is not a lane count", n.get_ref()),
                    "give the lanes from each GPU to the switch, at least 1",
                ));
            }
            n => n.as_ref().map(|n| *n.get_ref()),
        };
        let removed = mesh.len();
        let taken: BTreeSet<String> = devices(table).into_iter().map(|d| d.name).collect();
        let mut switch = "nvswitch".to_string();
        while taken.contains(&switch) {
            switch.push('\'');
        }
        array_mut(table, "link").retain(|l| {
            !(is_gpu(str_of(l, "a"))
                && is_gpu(str_of(l, "b"))
                && mesh_types.contains(str_of(l, "type")))
        });
        let mut sw = Table::new();
        sw.insert("name".into(), Value::String(switch.clone()));
        sw.insert("kind".into(), Value::String("nvswitch".into()));
        array_mut(table, "switch").push(Value::Table(sw));
        let mut counts = Vec::new();
        for g in &gpus {
            let n = lanes.unwrap_or_else(|| per_gpu.get(g).copied().unwrap_or(0));
            if n == 0 {
                continue;
            }
            counts.push(n);
            let mut l = Table::new();
            l.insert("a".into(), Value::String(g.clone()));
            l.insert("b".into(), Value::String(switch.clone()));
            l.insert("type".into(), Value::String(link_type.clone()));
            l.insert("lanes".into(), Value::Integer(n));
            array_mut(table, "link").push(Value::Table(l));
        }
        let lanes_text = match (counts.iter().min(), counts.iter().max()) {
            (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
            (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
            _ => "0".into(),
        };
        self.changes.push(format!(
            "nvswitch: removed {} GPU-to-GPU NVLink {}, added switch `{switch}` with {lanes_text} \
             lanes of {link_type} to each of {}",
            removed,
            if removed == 1 { "link" } else { "links" },
            plural(counts.len(), "GPU")
        ));
        self.check(table, span, "`[nvswitch]`")
    }

    /// `[[lanes]]`: one pair's link, or every link of a type, set to `lanes` (0 removes).
    fn lanes(&mut self, table: &mut Table, edit: &Spanned<RawLanes>) -> Result<(), SimError> {
        let span = edit.span();
        let e = edit.get_ref();
        let lanes = *e.lanes.get_ref();
        if !(0..=1024).contains(&lanes) {
            return Err(self.error(
                e.lanes.span(),
                format!("`lanes` = {lanes} is out of range"),
                "give 0 (remove the link) to 1024 lanes",
            ));
        }
        if let Some(t) = &e.link_type
            && link_type_kind(table, t.get_ref()).is_none()
        {
            return Err(self.error(
                t.span(),
                format!(
                    "`[[lanes]]` names link type `{}`, which `{}` does not have",
                    t.get_ref(),
                    self.base
                ),
                format!("use one of its link types: {}", link_type_names(table).join(", ")),
            ));
        }
        match (&e.a, &e.b) {
            (Some(a), Some(b)) => {
                self.pair_lanes(table, span.clone(), a, b, e.link_type.as_ref(), lanes)?
            }
            (None, None) => {
                let Some(t) = &e.link_type else {
                    return Err(self.error(
                        span,
                        "`[[lanes]]` names neither a pair nor a link type",
                        "give `a` and `b` (a linked pair of devices) or `type` (every link of \
                         that type)",
                    ));
                };
                let links = array_mut(table, "link");
                let mut changed = 0;
                let mut same = 0;
                let mut from = BTreeSet::new();
                for l in links.iter_mut() {
                    if str_of(l, "type") != t.get_ref() {
                        continue;
                    }
                    let old = lanes_of(l);
                    if old == lanes {
                        same += 1;
                    } else {
                        changed += 1;
                        from.insert(old);
                    }
                    if let Value::Table(tl) = l {
                        tl.insert("lanes".into(), Value::Integer(lanes));
                    }
                }
                if changed + same == 0 {
                    return Err(self.error(
                        t.span(),
                        format!(
                            "`[[lanes]]`: no link of `{}` has type `{}`",
                            self.base,
                            t.get_ref()
                        ),
                        "name a link type that some [[link]] of the base uses",
                    ));
                }
                if lanes == 0 {
                    links.retain(|l| str_of(l, "type") != t.get_ref());
                }
                let from: Vec<String> = from.iter().map(i64::to_string).collect();
                self.changes.push(format!(
                    "lanes of every {} link: {} {} -> {lanes}{}",
                    t.get_ref(),
                    plural(changed, "link"),
                    if from.is_empty() { "-".into() } else { from.join("/") },
                    if same > 0 { format!(", {same} already {lanes}") } else { String::new() }
                ));
            }
            (Some(x), None) | (None, Some(x)) => {
                return Err(self.error(
                    x.span(),
                    "`[[lanes]]` names one end of a pair",
                    "give both `a` and `b`, or neither (with `type`, for every link of a type)",
                ));
            }
        }
        self.check(table, span, "`[[lanes]]`")
    }

    fn pair_lanes(
        &mut self,
        table: &mut Table,
        span: std::ops::Range<usize>,
        a: &Spanned<String>,
        b: &Spanned<String>,
        link_type: Option<&Spanned<String>>,
        lanes: i64,
    ) -> Result<(), SimError> {
        let names: BTreeSet<String> = devices(table).into_iter().map(|d| d.name).collect();
        for end in [a, b] {
            if !names.contains(end.get_ref()) {
                return Err(self.error(
                    end.span(),
                    format!(
                        "`[[lanes]]` names `{}`, which is not a device of `{}`",
                        end.get_ref(),
                        self.base
                    ),
                    format!("use one of its devices: {}", self.device_names(table)),
                ));
            }
        }
        if a.get_ref() == b.get_ref() {
            return Err(self.error(
                b.span(),
                "`[[lanes]]` names the same device twice",
                "a link joins two different devices",
            ));
        }
        let (a, b) = (a.get_ref().as_str(), b.get_ref().as_str());
        let joins = |l: &Value| {
            let (x, y) = (str_of(l, "a"), str_of(l, "b"));
            (x == a && y == b) || (x == b && y == a)
        };
        let links = array_mut(table, "link");
        match links.iter().position(joins) {
            Some(i) => {
                let ty = str_of(&links[i], "type").to_string();
                if let Some(t) = link_type
                    && t.get_ref() != &ty
                {
                    return Err(self.error(
                        t.span(),
                        format!(
                            "`{a}` and `{b}` are joined by a `{ty}` link, not `{}`",
                            t.get_ref()
                        ),
                        format!("drop `type` or write `type = \"{ty}\"`: a pair has one link"),
                    ));
                }
                let old = lanes_of(&links[i]);
                if lanes == 0 {
                    links.remove(i);
                } else if let Value::Table(t) = &mut links[i] {
                    t.insert("lanes".into(), Value::Integer(lanes));
                }
                self.changes.push(format!("lanes {a}-{b} ({ty}): {old} -> {lanes}"));
            }
            None => {
                let Some(t) = link_type else {
                    let linked: Vec<String> = links
                        .iter()
                        .filter_map(|l| {
                            let (x, y) = (str_of(l, "a"), str_of(l, "b"));
                            if x == a {
                                Some(y.to_string())
                            } else if y == a {
                                Some(x.to_string())
                            } else {
                                None
                            }
                        })
                        .collect();
                    return Err(self.error(
                        span,
                        format!("`[[lanes]]`: no link of `{}` joins `{a}` and `{b}`", self.base),
                        format!(
                            "name a linked pair (`{a}` is linked to {}), or add `type = \
                             \"NAME\"` ({}) to create a link of that type between them",
                            linked.join(", "),
                            link_type_names(table).join(", ")
                        ),
                    ));
                };
                if lanes == 0 {
                    self.changes.push(format!("lanes {a}-{b}: no link, none added"));
                    return Ok(());
                }
                let mut l = Table::new();
                l.insert("a".into(), Value::String(a.into()));
                l.insert("b".into(), Value::String(b.into()));
                l.insert("type".into(), Value::String(t.get_ref().clone()));
                l.insert("lanes".into(), Value::Integer(lanes));
                links.push(Value::Table(l));
                self.changes
                    .push(format!("lanes {a}-{b} ({}): 0 -> {lanes} (new link)", t.get_ref()));
            }
        }
        Ok(())
    }

    /// `[link_type.NAME]`: new parameter values for a link type of the base.
    fn link_type(
        &mut self,
        table: &mut Table,
        name: &str,
        edit: &Spanned<RawLinkTypeEdit>,
    ) -> Result<(), SimError> {
        let span = edit.span();
        let known = link_type_names(table);
        let Some(Value::Table(lt)) = table.get_mut("link_type").and_then(|t| t.get_mut(name))
        else {
            return Err(self.error(
                span,
                format!("`[link_type.{name}]`: `{}` has no link type `{name}`", self.base),
                format!("edit one of its link types: {}", known.join(", ")),
            ));
        };
        let e = edit.get_ref();
        let floats = [
            ("bandwidth_gb_s", e.bandwidth_gb_s),
            ("latency_ns", e.latency_ns),
            ("setup_ns", e.setup_ns),
        ];
        let ints = [("max_payload_bytes", e.max_payload_bytes), ("header_bytes", e.header_bytes)];
        let mut said = Vec::new();
        let show = |v: Option<&Value>| v.map_or("unset".to_string(), |v| v.to_string());
        for (key, v) in floats {
            if let Some(v) = v {
                said.push(format!("{key} {} -> {v}", show(lt.get(key))));
                lt.insert(key.into(), Value::Float(v));
            }
        }
        for (key, v) in ints {
            if let Some(v) = v {
                said.push(format!("{key} {} -> {v}", show(lt.get(key))));
                lt.insert(key.into(), Value::Integer(v));
            }
        }
        if let Some(v) = e.peer_access {
            said.push(format!("peer_access {} -> {v}", show(lt.get("peer_access"))));
            lt.insert("peer_access".into(), Value::Boolean(v));
        }
        if said.is_empty() {
            return Err(self.error(
                span,
                format!("`[link_type.{name}]` changes nothing"),
                "give at least one of bandwidth_gb_s, latency_ns, max_payload_bytes, \
                 header_bytes, peer_access, setup_ns",
            ));
        }
        self.changes.push(format!("link type {name}: {}", said.join(", ")));
        self.check(table, span, &format!("`[link_type.{name}]`"))
    }

    /// `gpu_model = "NAME"`: every GPU becomes this model.
    fn gpu_model(&mut self, table: &mut Table, model: &Spanned<String>) -> Result<(), SimError> {
        let mut known: BTreeSet<String> = toml::from_str::<Table>(super::bundled::GPU_MODELS)
            .ok()
            .and_then(|t| {
                t.get("gpu_model").and_then(Value::as_table).map(|m| m.keys().cloned().collect())
            })
            .unwrap_or_default();
        if let Some(own) = table.get("gpu_model").and_then(Value::as_table) {
            known.extend(own.keys().cloned());
        }
        if !known.contains(model.get_ref()) {
            return Err(self.error(
                model.span(),
                format!("`gpu_model` = `{}` is not a GPU model", model.get_ref()),
                format!("use one of: {}", known.into_iter().collect::<Vec<_>>().join(", ")),
            ));
        }
        let mut from: BTreeSet<String> = BTreeSet::new();
        let gpus = array_mut(table, "gpu");
        for g in gpus.iter_mut() {
            from.insert(str_of(g, "model").to_string());
            if let Value::Table(t) = g {
                t.insert("model".into(), Value::String(model.get_ref().clone()));
            }
        }
        let count = gpus.len();
        self.changes.push(format!(
            "gpu model {} -> {} ({})",
            from.into_iter().collect::<Vec<_>>().join("/"),
            model.get_ref(),
            plural(count, "GPU")
        ));
        self.check(table, model.span(), "`gpu_model`")
    }

    /// `[gpu_memory]`: `mib` and `bandwidth_gb_s` of every GPU model the machine's GPUs use,
    /// each defined in the machine file (`[gpu_model.NAME]`).
    fn gpu_memory(
        &mut self,
        table: &mut Table,
        edit: &Spanned<RawGpuMemory>,
    ) -> Result<(), SimError> {
        let span = edit.span();
        let RawGpuMemory { mib, bandwidth_gb_s } = edit.get_ref();
        if mib.is_none() && bandwidth_gb_s.is_none() {
            return Err(self.error(
                span,
                "`[gpu_memory]` changes nothing",
                "give `mib`, `bandwidth_gb_s` or both",
            ));
        }
        if let Some(m) = mib.filter(|&m| m <= 0) {
            return Err(self.error(
                span.clone(),
                format!("`[gpu_memory]` mib = {m} is not a memory size"),
                "give the GPU's memory in MiB, a positive integer (nvidia-smi's memory.total)",
            ));
        }
        if let Some(b) = bandwidth_gb_s.filter(|b| !(b.is_finite() && *b > 0.0)) {
            return Err(self.error(
                span.clone(),
                format!("`[gpu_memory]` bandwidth_gb_s = {b} is not a bandwidth"),
                "give the memory bandwidth in GB/s, a positive number (the datasheet's)",
            ));
        }
        let used: BTreeSet<String> =
            array_mut(table, "gpu").iter().map(|g| str_of(g, "model").to_string()).collect();
        let mut own = table.get_mut("gpu_model").and_then(Value::as_table_mut);
        let bundled: Vec<&str> = used
            .iter()
            .filter(|m| !own.as_ref().is_some_and(|own| own.contains_key(*m)))
            .map(String::as_str)
            .collect();
        if !bundled.is_empty() {
            return Err(self.error(
                span,
                format!(
                    "`[gpu_memory]` edits GPU models that `{}` defines itself, and its GPUs use \
                     the bundled model(s) {}",
                    self.base,
                    bundled.join(", ")
                ),
                "pick the other card with `gpu_model = \"NAME\"` (topologies/gpu_models.toml), \
                 or derive from a machine file with its own `[gpu_model.NAME]` table",
            ));
        }
        let mut said = Vec::new();
        for name in &used {
            let Some(Value::Table(m)) = own.as_mut().and_then(|own| own.get_mut(name)) else {
                continue;
            };
            if let Some(v) = mib {
                m.insert("memory_mib".into(), Value::Integer(*v));
            }
            if let Some(v) = bandwidth_gb_s {
                m.insert("memory_bandwidth_gb_s".into(), Value::Float(*v));
            }
        }
        if let Some(v) = mib {
            said.push(format!("{v} MiB"));
        }
        if let Some(v) = bandwidth_gb_s {
            said.push(format!("{v} GB/s"));
        }
        self.changes.push(format!(
            "gpu memory of {}: {}",
            used.into_iter().collect::<Vec<_>>().join("/"),
            said.join(", ")
        ));
        self.check(table, span, "`[gpu_memory]`")
    }
}

/// A name for added node `k` copied from `template`: its trailing number replaced by `k`
/// (`node0` -> `node8`), else `template-k`; primes added until unused.
fn new_node_name(template: &str, k: usize, taken: &BTreeSet<String>) -> String {
    let stem = template.trim_end_matches(|c: char| c.is_ascii_digit());
    let mut name =
        if stem.len() < template.len() { format!("{stem}{k}") } else { format!("{template}-{k}") };
    while taken.contains(&name) {
        name.push('\'');
    }
    name
}
