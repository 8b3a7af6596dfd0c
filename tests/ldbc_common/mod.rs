//! What the LDBC tests share: the hand-built graphs in `tests/data/ldbc/`, the binary, and
//! references computed here from the raw `.v`/`.e` text (they share no code with the
//! product): BFS, SSSP, PageRank, components, CDLP and LCC.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Output;

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ldbc").join(name)
}

pub fn switchyard(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

pub fn err(out: &Output) -> String {
    assert!(!out.status.success(), "should fail: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "lacks {p:?}:\n{text}");
    }
}

/// A graph read from its raw text: ids, and `(u, v, w)` arcs (both ways if undirected).
pub struct Raw {
    pub ids: Vec<u64>,
    pub arcs: Vec<(u64, u64, f32)>,
    pub props: BTreeMap<String, String>,
}

pub fn raw(name: &str) -> Raw {
    let text = |ext: &str| std::fs::read_to_string(data(&format!("{name}{ext}"))).unwrap();
    let props: BTreeMap<String, String> = text(".properties")
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.trim().trim_start_matches(&format!("graph.{name}.")).to_string(), v.trim().into())
        })
        .collect();
    let ids = text(".v").lines().map(|l| l.trim().parse().unwrap()).collect();
    let directed = props["directed"] == "true";
    let mut arcs = Vec::new();
    for line in text(".e").lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        let (u, v, w) = (t[0].parse().unwrap(), t[1].parse().unwrap(), t[2].parse().unwrap());
        arcs.push((u, v, w));
        if !directed {
            arcs.push((v, u, w));
        }
    }
    Raw { ids, arcs, props }
}

impl Raw {
    pub fn out(&self, u: u64) -> impl Iterator<Item = &(u64, u64, f32)> {
        self.arcs.iter().filter(move |a| a.0 == u)
    }

    pub fn bfs(&self, s: u64) -> BTreeMap<u64, Option<u64>> {
        let mut level: BTreeMap<u64, Option<u64>> = self.ids.iter().map(|&v| (v, None)).collect();
        level.insert(s, Some(0));
        let mut queue = VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            let next = level[&u].map(|l| l + 1);
            for &(_, v, _) in self.out(u) {
                if level[&v].is_none() {
                    level.insert(v, next);
                    queue.push_back(v);
                }
            }
        }
        level
    }

    /// Bellman-Ford to a fixed point in f32 (any order reaches the same distances, since
    /// f32 addition is monotone).
    pub fn sssp(&self, s: u64) -> BTreeMap<u64, f32> {
        let mut d: BTreeMap<u64, f32> = self.ids.iter().map(|&v| (v, f32::INFINITY)).collect();
        d.insert(s, 0.0);
        loop {
            let mut changed = false;
            for &(u, v, w) in &self.arcs {
                let nd = d[&u] + w;
                if nd < d[&v] {
                    d.insert(v, nd);
                    changed = true;
                }
            }
            if !changed {
                return d;
            }
        }
    }

    /// LDBC Graphalytics PageRank (dangling vertices' rank spread over all vertices).
    pub fn pagerank(&self, damping: f64, iterations: u32) -> BTreeMap<u64, f64> {
        let n = self.ids.len() as f64;
        let mut pr: BTreeMap<u64, f64> = self.ids.iter().map(|&v| (v, 1.0 / n)).collect();
        let outdeg = |u: u64| self.out(u).count() as f64;
        for _ in 0..iterations {
            let dangling: f64 = self.ids.iter().filter(|&&v| outdeg(v) == 0.0).map(|v| pr[v]).sum();
            let mut next = BTreeMap::new();
            for &v in &self.ids {
                let incoming: f64 =
                    self.arcs.iter().filter(|a| a.1 == v).map(|a| pr[&a.0] / outdeg(a.0)).sum();
                next.insert(v, (1.0 - damping) / n + damping * (incoming + dangling / n));
            }
            pr = next;
        }
        pr
    }

    /// Whether the `.properties` says directed.
    pub fn directed(&self) -> bool {
        self.props["directed"] == "true"
    }

    /// CDLP by the Graphalytics specification: a vertex counts the labels of its
    /// out-neighbours and (directed) in-neighbours, once per arc; the most frequent label
    /// wins, the smallest on a tie; without neighbours it keeps its label.
    pub fn cdlp(&self, iterations: u32) -> BTreeMap<u64, u64> {
        let mut label: BTreeMap<u64, u64> = self.ids.iter().map(|&v| (v, v)).collect();
        for _ in 0..iterations {
            let mut next = label.clone();
            for &v in &self.ids {
                let mut count: BTreeMap<u64, u32> = BTreeMap::new();
                for &(a, b, _) in &self.arcs {
                    if a == v {
                        *count.entry(label[&b]).or_default() += 1;
                    }
                    if self.directed() && b == v {
                        *count.entry(label[&a]).or_default() += 1;
                    }
                }
                let most = count.values().copied().max();
                if let Some(most) = most {
                    let smallest = count.iter().find(|&(_, &c)| c == most).map(|(&l, _)| l);
                    next.insert(v, smallest.expect("a label has the maximum"));
                }
            }
            label = next;
        }
        label
    }

    /// LCC by the Graphalytics specification: arcs among the neighbours (in and out, v
    /// left out) over |N| (|N| - 1); 0 below two neighbours.
    pub fn lcc(&self) -> BTreeMap<u64, f64> {
        let mut lcc = BTreeMap::new();
        for &v in &self.ids {
            let hood: BTreeSet<u64> = self
                .arcs
                .iter()
                .filter_map(|&(a, b, _)| match (a == v, b == v) {
                    (true, false) => Some(b),
                    (false, true) => Some(a),
                    _ => None,
                })
                .collect();
            let d = hood.len() as f64;
            let among =
                self.arcs.iter().filter(|(a, b, _)| hood.contains(a) && hood.contains(b)).count()
                    as f64;
            lcc.insert(v, if hood.len() < 2 { 0.0 } else { among / (d * (d - 1.0)) });
        }
        lcc
    }

    pub fn components(&self) -> BTreeSet<BTreeSet<u64>> {
        let mut left: BTreeSet<u64> = self.ids.iter().copied().collect();
        let mut parts = BTreeSet::new();
        while let Some(&s) = left.iter().next() {
            let mut part = BTreeSet::from([s]);
            let mut stack = vec![s];
            while let Some(u) = stack.pop() {
                for &(a, b, _) in &self.arcs {
                    for (x, y) in [(a, b), (b, a)] {
                        if x == u && part.insert(y) {
                            stack.push(y);
                        }
                    }
                }
            }
            left.retain(|v| !part.contains(v));
            parts.insert(part);
        }
        parts
    }
}

/// An output file as `(id, value text)` lines, checked to list every vertex once in the
/// `.v` file's order.
pub fn output(path: &Path, g: &Raw) -> Vec<(u64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<(u64, String)> = text
        .lines()
        .map(|l| {
            let (id, value) = l.split_once(' ').expect("`id value`");
            (id.parse().expect("a file id"), value.to_string())
        })
        .collect();
    let mut sorted = g.ids.clone();
    sorted.sort_unstable();
    assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), sorted, "{}", path.display());
    lines
}

pub fn run_to(graph: &str, args: &[&str], out: &Path) -> String {
    let props = data(&format!("{graph}.properties"));
    let mut all =
        vec!["run", "--graph", props.to_str().unwrap(), "--output", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ok(&switchyard(&all))
}
