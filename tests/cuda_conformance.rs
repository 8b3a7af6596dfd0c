//! Kernel conformance: every registered kernel that has a CUDA implementation runs on the
//! simulator (its Rust implementation) and on a GPU with the same random inputs, and the
//! outputs are compared: exactly where the contract fixes them, as sets where it leaves
//! the order free (frontiers, packages), within float tolerance where atomic additions
//! may come in any order. Without a GPU the GPU half is skipped with a message; the
//! simulator half (inputs are well formed, the Rust kernels accept them) always runs.
//!
//! Inputs where a parallel kernel could legitimately differ from the sequential Rust loop
//! are avoided, not papered over: frontiers of relaxing kernels (sssp, cc, residual
//! PageRank) are independent sets, so no frontier vertex's value changes while the kernel
//! runs.
//!
//! The Groute CC kernels `groute_cc_hook` and `groute_cc_merge` hook with compare-and-swap
//! in whatever order the threads get there, so the parent array they leave may differ in
//! shape from the sequential one; what is order-independent is compared: every vertex's
//! root (the smallest id of its tree, reached by following parents), which must be equal
//! for every vertex, and `parent[x] <= x` everywhere ([`Cmp::Roots`]). Their counts are
//! exact: edges are the pairs hooked and atomics the successful hooks, and every
//! successful hook joins two different trees, so their number is the drop in the tree
//! count in either order. The compress kernels and `groute_cc_init` are compared exactly
//! (every path they shorten ends at the same root whatever the order), and so is
//! `groute_filter`, whose CUDA version keeps input order (per-tile counts and an ordered
//! scan); its atomics are the model's count (warps with a kept element), reported as such.

use std::collections::BTreeSet;
use switchyard::algo::bfs::{BFS_TILES, BFS_TILES_PEER};
use switchyard::backend::sim::{SimBackend, SimConfig};
use switchyard::backend::{
    Backend, BufferId, BufferSlice, CompletionKind, DeviceId, HostData, KernelCountsReport, Launch,
    LaunchConfig, Scalar, StreamPriority, Token,
};
use switchyard::driver::builtin_kernels;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::runtime::atos::tiles::TileLayout;
use switchyard_sim::topology::Topology;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A random local graph in the bsp slot layout, with a few vertices of degree >= 256 (block
/// expansion), some of 32..255 (warp expansion) and many small ones.
struct Case {
    n: usize,
    offsets: Vec<u64>,
    targets: Vec<u32>,
    weights: Vec<u32>,
}

fn graph(rng: &mut Rng, n: usize) -> Case {
    let mut offsets = vec![0u64];
    let mut targets = Vec::new();
    for v in 0..n {
        let degree = match v % 97 {
            0 if v % 5 == 0 => 4096 + rng.below(4000),
            0 => 300 + rng.below(400),
            1..=6 => 32 + rng.below(200),
            7..=9 => 0,
            _ => rng.below(12),
        };
        for _ in 0..degree {
            targets.push(rng.below(n as u64) as u32);
        }
        offsets.push(targets.len() as u64);
    }
    let weights = (0..targets.len()).map(|_| 1 + rng.below(100) as u32).collect();
    Case { n, offsets, targets, weights }
}

/// The same graph with real weights: the f32 bits of uniform reals in [0, 100), a few of
/// them 0 (Graphalytics allows zero weights).
fn graph_with_real_weights(c: &Case, rng: &mut Rng) -> Case {
    let weights = (0..c.targets.len())
        .map(|_| if rng.below(50) == 0 { 0f32 } else { rng.unit() * 100.0 }.to_bits())
        .collect();
    Case { n: c.n, offsets: c.offsets.clone(), targets: c.targets.clone(), weights }
}

/// LCC's neighbourhood graph of `c` (the product's own builder: the kernels' input).
fn lcc_case(c: &Case) -> Case {
    let mut edges = Vec::new();
    for v in 0..c.n {
        edges.extend(c.out(v).iter().map(|&t| (v as u32, t)));
    }
    let csr = switchyard::graph::Csr::from_edges(
        c.n as u32,
        &edges,
        None,
        true,
        switchyard::graph::BuildOptions::default(),
    )
    .unwrap();
    let hood = switchyard::algo::lcc::neighbourhoods(&csr);
    let Some(switchyard::graph::EdgeWeights::Int(flags)) = hood.weights() else { panic!("flags") };
    Case {
        n: c.n,
        offsets: hood.offsets().to_vec(),
        targets: hood.targets().to_vec(),
        weights: flags.clone(),
    }
}

impl Case {
    fn out(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// A random set of vertices none of which is an out-neighbour of another (nor itself).
    fn independent_frontier(&self, rng: &mut Rng, want: usize) -> Vec<u32> {
        let mut chosen = BTreeSet::new();
        let mut blocked = vec![false; self.n];
        for _ in 0..want * 4 {
            let v = rng.below(self.n as u64) as usize;
            if blocked[v] || chosen.contains(&(v as u32)) {
                continue;
            }
            if self.out(v).iter().any(|&t| chosen.contains(&t) || t as usize == v) {
                continue;
            }
            chosen.insert(v as u32);
            for &t in self.out(v) {
                blocked[t as usize] = true;
            }
            if chosen.len() == want {
                break;
            }
        }
        chosen.into_iter().collect()
    }

    fn reverse(&self) -> (Vec<u64>, Vec<u32>) {
        let mut ins = vec![Vec::new(); self.n];
        for v in 0..self.n {
            for &t in self.out(v) {
                ins[t as usize].push(v as u32);
            }
        }
        let mut off = vec![0u64];
        let mut tgt = Vec::new();
        for list in ins {
            tgt.extend(list);
            off.push(tgt.len() as u64);
        }
        (off, tgt)
    }
}

/// The 14 fixed slots plus `packages`, with everything a kernel may read filled in.
struct Slots {
    data: Vec<HostData>,
}

impl Slots {
    #[allow(clippy::too_many_arguments)]
    fn new(
        c: &Case,
        values: HostData,
        aux: Vec<f32>,
        frontier: &[u32],
        owner: Vec<u32>,
        reverse: bool,
        peers: usize,
        packages: Vec<Vec<u32>>,
    ) -> Slots {
        let n = c.n;
        let degree: Vec<u32> = (0..n).map(|v| c.out(v).len() as u32).collect();
        let mut fin = vec![0u32; n];
        fin[..frontier.len()].copy_from_slice(frontier);
        let (ro, rt) = if reverse { c.reverse() } else { (Vec::new(), Vec::new()) };
        let mut data = vec![
            HostData::U64(c.offsets.clone()),
            HostData::U32(c.targets.clone()),
            HostData::U32(c.weights.clone()),
            values,
            HostData::F32(aux),
            HostData::U32(degree),
            HostData::U32(vec![0; n]),
            HostData::U32(fin),
            HostData::U32(vec![0; n]),
            HostData::U64(vec![0; peers + 3]),
            HostData::U32(owner),
            HostData::U32((0..n as u32).map(|v| v * 7 + 1).collect()),
            HostData::U64(ro),
            HostData::U32(rt),
        ];
        data.extend(packages.into_iter().map(HostData::U32));
        Slots { data }
    }
}

/// Runs one launch over `inputs` on `backend`, returning every buffer afterwards and the
/// kernel's counts.
fn run_one(
    backend: &mut dyn Backend,
    inputs: &[HostData],
    kernel: &'static str,
    scalars: Vec<Scalar>,
    work_items: u64,
) -> (Vec<HostData>, KernelCountsReport) {
    run_one_with(backend, inputs, kernel, scalars, work_items, LaunchConfig::default())
}

/// [`run_one`] with a launch configuration (grid, block, shared memory).
fn run_one_with(
    backend: &mut dyn Backend,
    inputs: &[HostData],
    kernel: &'static str,
    scalars: Vec<Scalar>,
    work_items: u64,
    config: LaunchConfig,
) -> (Vec<HostData>, KernelCountsReport) {
    let stream = backend.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
    let mut ids: Vec<BufferId> = Vec::new();
    let mut tokens = 0u64;
    for data in inputs {
        let id = backend.alloc(DeviceId(0), data.elem(), data.len(), "input").unwrap();
        if !data.is_empty() {
            backend.write_from_host(stream, id, 0, data.clone(), None).unwrap();
        }
        ids.push(id);
    }
    backend
        .launch_with(
            stream,
            Launch { kernel, buffers: ids.clone(), scalars, work_items },
            config,
            Some(Token(1)),
        )
        .unwrap();
    for (i, &id) in ids.iter().enumerate() {
        if !inputs[i].is_empty() {
            backend
                .read_to_host(
                    stream,
                    BufferSlice::new(id, 0, inputs[i].len()),
                    Token(100 + i as u64),
                )
                .unwrap();
            tokens += 1;
        }
    }
    let mut out: Vec<HostData> = inputs.to_vec();
    let mut counts = None;
    while let Some(c) = backend.next_completion().unwrap() {
        match c.kind {
            CompletionKind::Kernel(k) => counts = Some(k),
            CompletionKind::HostRead(d) => {
                out[(c.token.0 - 100) as usize] = d;
                tokens -= 1;
            }
            _ => {}
        }
    }
    assert_eq!(tokens, 0, "{kernel}: reads missing");
    (out, counts.expect("kernel completion"))
}

fn sim() -> SimBackend {
    let topology = Topology::bundled("dgx1-v100").unwrap();
    SimBackend::new(topology, 1, builtin_kernels(), SimConfig::default()).unwrap()
}

#[cfg(feature = "cuda")]
fn gpu() -> Option<switchyard::backend::cuda::CudaBackend> {
    if switchyard::backend::cuda::gpus_present() == 0 {
        return None;
    }
    Some(switchyard::backend::cuda::CudaBackend::open(1, builtin_kernels()).expect("open GPU 0"))
}

#[cfg(not(feature = "cuda"))]
fn gpu() -> Option<SimBackend> {
    None
}

/// How one output buffer is compared.
#[derive(Clone, Copy, Debug)]
enum Cmp {
    Exact,
    /// The first `counters[index]` entries (of the expected run) as sets.
    SetPrefix {
        counter: usize,
        from: usize,
    },
    /// Pairs `(id, bits)` of the first `counters[index]` pairs, as sets.
    PairSet {
        counter: usize,
    },
    /// f32 values within a relative tolerance.
    Close,
    /// Counters: exact except the listed f64 entries (compared within tolerance).
    CountersExceptF64(usize),
    /// A parent array (u32, `parent[x] <= x`): the root of every vertex, exactly.
    Roots,
    /// Worklist layout: the first `ctl[index]` entries as a multiset (ctl in slot 7).
    CtlPrefix {
        index: usize,
    },
    /// Worklist layout: the first `ctl[index]` pairs as a multiset of pairs.
    CtlPairs {
        index: usize,
    },
    /// Worklist layout: the live items `[START, END)` of the circular worklist as a
    /// multiset (the order of prepended and appended items is free; slots outside the live
    /// region are scratch).
    WlLive,
    /// f64 values within a relative tolerance of 1e-12.
    Close64,
    /// CDLP label-count tables (this buffer the keys, buffer `counts` the counts): per
    /// vertex `v` of the graph in slot 0, the slots `2 offsets[v]..2 offsets[v + 1]` as a
    /// multiset of (key, count) (where a label lands in a table depends on the order of the
    /// inserts; what the table holds does not).
    Tables {
        counts: usize,
    },
    /// A device-side loop's frontier buffer (slot 7 or 8): by the loop's log (slot 15, of
    /// the expected run), the last output's entries as a set in the buffer that holds it,
    /// the last input's in the other (what lies past them is scratch).
    LoopFrontier,
    /// Pairs `(id, bits)` as a multiset, as many as `buffers[len_buffer][0]` says (u64).
    PairsCounted {
        len_buffer: usize,
    },
    /// The first `from` entries exactly, then up to `buffers[len_buffer][index]` (u64) as a
    /// set.
    SetCounted {
        len_buffer: usize,
        index: usize,
        from: usize,
    },
    /// Not compared (scratch the contract leaves unspecified).
    Ignore,
    /// u64 words: only the listed indices, exactly (the rest is one backend's own scratch).
    Words(&'static [usize]),
    /// u32 words holding f32 bits, within a relative tolerance.
    CloseBits,
}

/// The root of every vertex of a parent array, checking that parents never point upwards.
fn roots(kernel: &str, d: &HostData) -> Vec<u32> {
    let p = d.as_u32().unwrap();
    (0..p.len())
        .map(|v| {
            let mut x = v;
            while p[x] as usize != x {
                assert!((p[x] as usize) < x, "{kernel}: parent[{x}] = {} points upwards", p[x]);
                x = p[x] as usize;
            }
            x as u32
        })
        .collect()
}

fn set_prefix(d: &HostData, len: usize) -> Vec<u32> {
    let mut v = d.as_u32().unwrap()[..len].to_vec();
    v.sort_unstable();
    v
}

fn compare(kernel: &str, rule: &[(usize, Cmp)], want: &[HostData], got: &[HostData]) {
    let counters = || want[9].as_u64().unwrap();
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let cmp = rule.iter().find(|(j, _)| *j == i).map_or(Cmp::Exact, |r| r.1);
        match cmp {
            Cmp::Exact => assert_eq!(w, g, "{kernel}: buffer {i} differs"),
            Cmp::SetPrefix { counter, from } => {
                let len = counters()[counter] as usize;
                assert_eq!(
                    &w.as_u32().unwrap()[..from],
                    &g.as_u32().unwrap()[..from],
                    "{kernel}: buffer {i} prefix"
                );
                assert_eq!(set_prefix(w, len), set_prefix(g, len), "{kernel}: buffer {i} as a set");
            }
            Cmp::PairSet { counter } => {
                let len = counters()[counter] as usize;
                let pairs = |d: &HostData| {
                    let mut p: Vec<(u32, u32)> =
                        d.as_u32().unwrap()[..2 * len].chunks(2).map(|c| (c[0], c[1])).collect();
                    p.sort_unstable();
                    p
                };
                assert_eq!(pairs(w), pairs(g), "{kernel}: package {i} as a set of pairs");
            }
            Cmp::Close => {
                let (w, g) = (w.as_f32().unwrap(), g.as_f32().unwrap());
                for (j, (a, b)) in w.iter().zip(g).enumerate() {
                    let tol = 1e-5 * a.abs().max(b.abs()).max(1e-6);
                    assert!((a - b).abs() <= tol, "{kernel}: buffer {i}[{j}] {a} vs {b}");
                }
            }
            Cmp::Roots => {
                assert_eq!(roots(kernel, w), roots(kernel, g), "{kernel}: buffer {i} roots");
            }
            Cmp::CtlPrefix { index } => {
                let len = want[WL_CTL].as_u64().unwrap()[index] as usize;
                assert_eq!(set_prefix(w, len), set_prefix(g, len), "{kernel}: buffer {i} as a set");
            }
            Cmp::CtlPairs { index } => {
                let len = want[WL_CTL].as_u64().unwrap()[index] as usize;
                let pairs = |d: &HostData| {
                    let mut p: Vec<(u32, u32)> =
                        d.as_u32().unwrap()[..2 * len].chunks(2).map(|c| (c[0], c[1])).collect();
                    p.sort_unstable();
                    p
                };
                assert_eq!(pairs(w), pairs(g), "{kernel}: buffer {i} as a set of pairs");
            }
            Cmp::WlLive => {
                let live = |d: &HostData, c: &HostData| {
                    let (wl, c) = (d.as_u32().unwrap(), c.as_u64().unwrap());
                    let cap = wl.len() as u64;
                    let mut items: Vec<u32> =
                        (c[0]..c[1]).map(|p| wl[(p % cap) as usize]).collect();
                    items.sort_unstable();
                    items
                };
                assert_eq!(
                    live(w, &want[WL_CTL]),
                    live(g, &got[WL_CTL]),
                    "{kernel}: live worklist items"
                );
            }
            Cmp::LoopFrontier => {
                let log = want[15].as_u64().unwrap();
                let (levels, last) = (log[0] as usize, log[1] as usize);
                let holds_last = 7 + (log[2] & 1) as usize == i;
                let len = if holds_last { last } else { log[2 + levels] as usize };
                assert_eq!(
                    set_prefix(w, len),
                    set_prefix(g, len),
                    "{kernel}: frontier {i} as a set"
                );
            }
            Cmp::Close64 => {
                let (w, g) = (w.as_f64().unwrap(), g.as_f64().unwrap());
                for (j, (a, b)) in w.iter().zip(g).enumerate() {
                    let tol = 1e-12 * a.abs().max(b.abs()).max(1e-300);
                    assert!((a - b).abs() <= tol, "{kernel}: buffer {i}[{j}] {a} vs {b}");
                }
            }
            Cmp::Tables { counts } => {
                let offsets = want[0].as_u64().unwrap();
                let tables = |keys: &HostData, counts: &HostData| -> Vec<Vec<(u32, u32)>> {
                    let (k, c) = (keys.as_u32().unwrap(), counts.as_u32().unwrap());
                    offsets
                        .windows(2)
                        .map(|o| {
                            let mut t: Vec<(u32, u32)> = (2 * o[0] as usize..2 * o[1] as usize)
                                .filter(|&s| k[s] != 0)
                                .map(|s| (k[s], c[s]))
                                .collect();
                            t.sort_unstable();
                            t
                        })
                        .collect()
                };
                assert_eq!(
                    tables(w, &want[counts]),
                    tables(g, &got[counts]),
                    "{kernel}: label-count tables"
                );
            }
            Cmp::PairsCounted { len_buffer } => {
                let len = want[len_buffer].as_u64().unwrap()[0] as usize;
                let pairs = |d: &HostData| {
                    let mut p: Vec<(u32, u32)> =
                        d.as_u32().unwrap()[..2 * len].chunks(2).map(|c| (c[0], c[1])).collect();
                    p.sort_unstable();
                    p
                };
                assert_eq!(pairs(w), pairs(g), "{kernel}: buffer {i} as a multiset of pairs");
            }
            Cmp::SetCounted { len_buffer, index, from } => {
                let len = want[len_buffer].as_u64().unwrap()[index] as usize;
                assert_eq!(
                    &w.as_u32().unwrap()[..from],
                    &g.as_u32().unwrap()[..from],
                    "{kernel}: buffer {i} prefix"
                );
                assert_eq!(set_prefix(w, len), set_prefix(g, len), "{kernel}: buffer {i} as a set");
            }
            Cmp::Ignore => {}
            Cmp::Words(indices) => {
                let (w, g) = (w.as_u64().unwrap(), g.as_u64().unwrap());
                for &j in indices {
                    assert_eq!(w[j], g[j], "{kernel}: buffer {i} word {j}");
                }
            }
            Cmp::CloseBits => {
                let (w, g) = (w.as_u32().unwrap(), g.as_u32().unwrap());
                for (j, (&a, &b)) in w.iter().zip(g).enumerate() {
                    let (a, b) = (f32::from_bits(a), f32::from_bits(b));
                    let tol = 1e-5 * a.abs().max(b.abs()).max(1e-6);
                    assert!((a - b).abs() <= tol, "{kernel}: buffer {i}[{j}] {a} vs {b}");
                }
            }
            Cmp::CountersExceptF64(k) => {
                let (w, g) = (w.as_u64().unwrap(), g.as_u64().unwrap());
                for j in 0..w.len() {
                    if j == k {
                        let (a, b) = (f64::from_bits(w[j]), f64::from_bits(g[j]));
                        assert!((a - b).abs() <= 1e-6 * a.abs().max(1e-9), "{kernel}: {a} vs {b}");
                    } else {
                        assert_eq!(w[j], g[j], "{kernel}: counter {j}");
                    }
                }
            }
        }
    }
}

struct Check {
    kernel: &'static str,
    inputs: Vec<HostData>,
    scalars: Vec<Scalar>,
    work_items: u64,
    rule: Vec<(usize, Cmp)>,
}

fn advance_scalars(frontier: usize, superstep: u32, param: f64, extra: f64) -> Vec<Scalar> {
    vec![
        Scalar::U64(frontier as u64),
        Scalar::U32(2 * superstep + 1),
        Scalar::U32(superstep),
        Scalar::F64(param),
        Scalar::U32(0),
        Scalar::F64(extra),
    ]
}

/// Output frontier as a set; marker exact.
fn advance_rule() -> Vec<(usize, Cmp)> {
    vec![(8, Cmp::SetPrefix { counter: 0, from: 0 })]
}

fn checks() -> Vec<Check> {
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    let c = graph(&mut rng, 3000);
    let n = c.n;
    let mut checks = Vec::new();
    let no_aux = Vec::new();
    let one_gpu = vec![0u32; n];
    let two_gpus: Vec<u32> = (0..n).map(|_| (rng.below(4) == 0) as u32).collect();

    // BFS and the push half of DOBFS: superstep 2, frontier = vertices at level 2.
    let mut labels = vec![u32::MAX; n];
    let mut frontier = Vec::new();
    for (v, label) in labels.iter_mut().enumerate() {
        match rng.below(10) {
            0 | 1 => *label = rng.below(2) as u32,
            2 | 3 => {
                *label = 2;
                frontier.push(v as u32);
            }
            _ => {}
        }
    }
    for (kernel, reverse, param) in
        [("bfs_advance", false, 0.0), ("dobfs_advance", true, 0.0), ("dobfs_advance", true, 1.0)]
    {
        let slots = Slots::new(
            &c,
            HostData::U32(labels.clone()),
            no_aux.clone(),
            &frontier,
            one_gpu.clone(),
            reverse,
            1,
            vec![vec![]],
        );
        checks.push(Check {
            kernel,
            inputs: slots.data,
            scalars: advance_scalars(frontier.len(), 2, param, 0.0),
            work_items: frontier.len() as u64,
            rule: advance_rule(),
        });
    }

    // BFS routing what it discovers: gpu 0 of three; owned vertices into frontier_out
    // (counter 1), proxies into the packages of gpus 1 and 2 (counters 3 and 4).
    let owners: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
    let mut scalars = advance_scalars(frontier.len(), 2, 0.0, 0.0);
    scalars.push(Scalar::U32(3));
    scalars.push(Scalar::U32(0));
    let routed_slots = |packages| {
        Slots::new(
            &c,
            HostData::U32(labels.clone()),
            no_aux.clone(),
            &frontier,
            owners.clone(),
            false,
            3,
            packages,
        )
        .data
    };
    checks.push(Check {
        kernel: "bfs_advance_routed",
        inputs: routed_slots(vec![vec![], vec![0; 2 * n], vec![0; 2 * n]]),
        scalars: scalars.clone(),
        work_items: frontier.len() as u64,
        rule: vec![
            (8, Cmp::SetPrefix { counter: 1, from: 0 }),
            (15, Cmp::PairSet { counter: 3 }),
            (16, Cmp::PairSet { counter: 4 }),
        ],
    });
    // The same with bitmaps: proxies set bits of their owners' bitmaps (slots 18 and 19;
    // the packages stay untouched), counters 3 and 4 still count them. Slots gives vertex
    // v the id 7 v + 1 on its owner.
    let words = (7 * n + 1).div_ceil(32);
    scalars[7] = Scalar::U32(1);
    checks.push(Check {
        kernel: "bfs_advance_routed",
        inputs: routed_slots(vec![
            vec![],
            vec![0; 2 * n],
            vec![0; 2 * n],
            vec![],
            vec![0; words],
            vec![0; words],
        ]),
        scalars,
        work_items: frontier.len() as u64,
        rule: vec![
            (8, Cmp::SetPrefix { counter: 1, from: 0 }),
            (9, Cmp::Exact),
            (15, Cmp::Exact),
            (18, Cmp::Exact),
            (19, Cmp::Exact),
        ],
    });

    // SSSP and CC: an independent frontier.
    let independent = c.independent_frontier(&mut rng, 400);
    let dist: Vec<u32> =
        (0..n).map(|_| if rng.below(3) == 0 { u32::MAX } else { rng.below(500) as u32 }).collect();
    let cc: Vec<u32> = (0..n).map(|v| (v as u32).min(rng.below(n as u64) as u32)).collect();
    for (kernel, values) in [("sssp_advance", dist), ("cc_advance", cc)] {
        let slots = Slots::new(
            &c,
            HostData::U32(values),
            no_aux.clone(),
            &independent,
            one_gpu.clone(),
            false,
            1,
            vec![vec![]],
        );
        checks.push(Check {
            kernel,
            inputs: slots.data,
            scalars: advance_scalars(independent.len(), 3, 0.0, 0.0),
            work_items: independent.len() as u64,
            rule: advance_rule(),
        });
    }

    // The device-side loops (slots 14 control, 15 log; scalars frontier_len, superstep,
    // max_supersteps, most_vertices, most_arcs). BFS: levels from the frontier at level 2
    // until it empties, and again with limits that stop it once the frontier grows; SSSP and
    // CC: one superstep of the independent frontier (more would depend on the order).
    let loop_rule = || vec![(7, Cmp::LoopFrontier), (8, Cmp::LoopFrontier), (14, Cmp::Ignore)];
    let loop_slots = |values: HostData, frontier: &[u32]| {
        let mut slots =
            Slots::new(&c, values, no_aux.clone(), frontier, one_gpu.clone(), false, 1, vec![])
                .data;
        slots.push(HostData::U64(vec![0; switchyard::runtime::bsp::LOOP_CONTROL_WORDS]));
        slots.push(HostData::U64(vec![0; 3 + 64]));
        slots
    };
    for (most_vertices, most_arcs) in [(u64::MAX, u64::MAX), (50, 5000)] {
        checks.push(Check {
            kernel: "bfs_levels",
            inputs: loop_slots(HostData::U32(labels.clone()), &frontier),
            scalars: vec![
                Scalar::U64(frontier.len() as u64),
                Scalar::U32(2),
                Scalar::U32(64),
                Scalar::U64(most_vertices),
                Scalar::U64(most_arcs),
            ],
            work_items: frontier.len() as u64,
            rule: loop_rule(),
        });
    }
    let dist: Vec<u32> =
        (0..n).map(|_| if rng.below(3) == 0 { u32::MAX } else { rng.below(500) as u32 }).collect();
    let cc: Vec<u32> = (0..n).map(|v| (v as u32).min(rng.below(n as u64) as u32)).collect();
    for (kernel, values) in [("sssp_levels", dist), ("cc_levels", cc)] {
        checks.push(Check {
            kernel,
            inputs: loop_slots(HostData::U32(values), &independent),
            scalars: vec![
                Scalar::U64(independent.len() as u64),
                Scalar::U32(3),
                Scalar::U32(1),
                Scalar::U64(u64::MAX),
                Scalar::U64(u64::MAX),
            ],
            work_items: independent.len() as u64,
            rule: loop_rule(),
        });
    }

    // SSSP over real weights: f32 bits for distances (a third unreached) and weights.
    let real = graph_with_real_weights(&c, &mut rng);
    let dist: Vec<u32> = (0..n)
        .map(|_| if rng.below(3) == 0 { u32::MAX } else { (rng.unit() * 500.0).to_bits() })
        .collect();
    let slots = Slots::new(
        &real,
        HostData::U32(dist),
        no_aux.clone(),
        &independent,
        one_gpu.clone(),
        false,
        1,
        vec![vec![]],
    );
    checks.push(Check {
        kernel: "sssp_advance_f32",
        inputs: slots.data,
        scalars: advance_scalars(independent.len(), 3, 0.0, 0.0),
        work_items: independent.len() as u64,
        rule: advance_rule(),
    });

    // PageRank LDBC push over every owned vertex, with proxies (owner 1) forwarded.
    let owned: Vec<u32> = (0..n as u32).filter(|&v| two_gpus[v as usize] == 0).collect();
    let rank: Vec<f32> = (0..n).map(|_| rng.unit() / n as f32 + 1e-7).collect();
    // Partial sums are f64: atomic adds in another order differ by far less than 1e-12.
    let slots = Slots::new(
        &c,
        HostData::F64(vec![0.0; n]),
        rank.clone(),
        &owned,
        two_gpus.clone(),
        false,
        2,
        vec![vec![], vec![]],
    );
    checks.push(Check {
        kernel: "pr_ldbc_push",
        inputs: slots.data,
        scalars: advance_scalars(owned.len(), 0, f64::INFINITY, 0.85),
        work_items: owned.len() as u64,
        rule: vec![(3, Cmp::Close64), (8, Cmp::SetPrefix { counter: 0, from: 0 })],
    });

    // PageRank LDBC apply (the runtime passes no packages to it): alone here, with the
    // pull's shares buffer below. `peers` sizes the counters.
    let pr_apply = |rng: &mut Rng, peers: usize, shares: Option<Vec<f32>>| {
        let sums: Vec<f64> = (0..n).map(|_| f64::from(rng.unit()) / n as f64).collect();
        let mut slots = Slots::new(
            &c,
            HostData::F64(sums),
            rank.clone(),
            &[],
            two_gpus.clone(),
            false,
            peers,
            vec![],
        );
        let mut rule = vec![
            (4, Cmp::Close),
            (7, Cmp::SetPrefix { counter: 1, from: 0 }),
            (9, Cmp::CountersExceptF64(4)),
        ];
        if let Some(shares) = shares {
            slots.data.push(HostData::F32(shares));
            rule.push((14, Cmp::Close));
        }
        Check {
            kernel: "pr_ldbc_apply",
            inputs: slots.data,
            scalars: vec![
                Scalar::F64(0.01),
                Scalar::U32(n as u32),
                Scalar::F64(0.85),
                Scalar::U32(0),
            ],
            work_items: n as u64,
            rule,
        }
    };
    checks.push(pr_apply(&mut rng, 2, None));

    // PageRank LDBC pull, at superstep 0 (shares from rank and degree) and 1 (from the
    // shares buffer after the packages), over the transpose of `c` so that in-degrees are
    // skewed: a few rows of at least 4096 in-arcs (the post-pass's chunks), some of block
    // and warp size, many small; proxies (owner 1) forwarded.
    let transposed = {
        let (offsets, targets) = c.reverse();
        Case { n, offsets, targets, weights: Vec::new() }
    };
    let shares: Vec<f32> = (0..n).map(|_| rng.unit() / n as f32).collect();
    for superstep in [0, 1] {
        let mut slots = Slots::new(
            &transposed,
            HostData::F64((0..n).map(|_| f64::from(rng.unit())).collect()),
            rank.clone(),
            &owned,
            two_gpus.clone(),
            true,
            2,
            vec![vec![], vec![]],
        );
        slots.data.push(HostData::F32(shares.clone()));
        checks.push(Check {
            kernel: "pr_ldbc_pull",
            inputs: slots.data,
            scalars: advance_scalars(owned.len(), superstep, f64::INFINITY, 0.85),
            work_items: owned.len() as u64,
            rule: vec![(3, Cmp::Close64), (8, Cmp::SetPrefix { counter: 0, from: 0 })],
        });
    }

    // PageRank LDBC apply with the pull's shares buffer after the fixed slots.
    checks.push(pr_apply(&mut rng, 0, Some(vec![0.5; n])));

    // Residual PageRank push from an independent frontier.
    let residual: Vec<f32> = (0..n).map(|_| rng.unit() * 0.1).collect();
    let slots = Slots::new(
        &c,
        HostData::F32(residual),
        rank.clone(),
        &independent,
        two_gpus.clone(),
        false,
        2,
        vec![vec![], vec![]],
    );
    checks.push(Check {
        kernel: "pr_residual_push",
        inputs: slots.data,
        scalars: advance_scalars(independent.len(), 0, 0.01, 0.85),
        work_items: independent.len() as u64,
        rule: vec![(3, Cmp::Close), (4, Cmp::Close), (8, Cmp::SetPrefix { counter: 0, from: 0 })],
    });

    // CDLP: tables filled from random labels (apply; owner 1's vertices left out), then
    // read and emptied for a frontier (advance at superstep 1).
    let cdlp_labels: Vec<u32> = (0..n).map(|_| rng.below(40) as u32 * 7).collect();
    let arcs = c.targets.len();
    let mut slots = Slots::new(
        &c,
        HostData::U32(cdlp_labels.clone()),
        no_aux.clone(),
        &[],
        two_gpus.clone(),
        false,
        1,
        vec![],
    );
    slots.data.extend([HostData::U32(vec![0; 2 * arcs]), HostData::U32(vec![0; 2 * arcs])]);
    checks.push(Check {
        kernel: "cdlp_apply",
        inputs: slots.data,
        scalars: vec![Scalar::F64(0.0), Scalar::U32(n as u32), Scalar::U32(0)],
        work_items: n as u64,
        rule: vec![
            (7, Cmp::SetPrefix { counter: 1, from: 0 }),
            (14, Cmp::Tables { counts: 15 }),
            (15, Cmp::Ignore),
        ],
    });
    let (mut keys, mut counts) = (vec![0u32; 2 * arcs], vec![0u32; 2 * arcs]);
    for v in 0..n {
        for &u in c.out(v) {
            let key = cdlp_labels[u as usize] + 1;
            let table = 2 * c.offsets[v] as usize..2 * c.offsets[v + 1] as usize;
            let s = table.clone().find(|&s| keys[s] == 0 || keys[s] == key).expect("room");
            keys[s] = key;
            counts[s] += 1;
        }
    }
    let frontier: Vec<u32> = (0..n as u32).filter(|_| rng.below(3) != 0).collect();
    let mut slots = Slots::new(
        &c,
        HostData::U32(cdlp_labels),
        no_aux.clone(),
        &frontier,
        one_gpu.clone(),
        false,
        1,
        vec![vec![]],
    );
    slots.data.extend([HostData::U32(keys), HostData::U32(counts)]);
    checks.push(Check {
        kernel: "cdlp_advance",
        inputs: slots.data,
        scalars: advance_scalars(frontier.len(), 1, 0.0, 0.0),
        work_items: frontier.len() as u64,
        rule: advance_rule(),
    });

    // LCC on the neighbourhood graph of the random graph (sorted targets, 0/1 flags).
    let hood = lcc_case(&c);
    let owned: Vec<u32> = (0..n as u32).filter(|&v| two_gpus[v as usize] == 0).collect();
    let slots = Slots::new(
        &hood,
        HostData::F64(vec![0.0; n]),
        vec![0.0; n],
        &owned,
        two_gpus.clone(),
        false,
        2,
        vec![vec![], vec![]],
    );
    checks.push(Check {
        kernel: "lcc_count",
        inputs: slots.data,
        scalars: advance_scalars(owned.len(), 0, 0.0, 0.0),
        work_items: owned.len() as u64,
        // Counts are integers: f64 sums in any order are exact.
        rule: advance_rule(),
    });
    let counts: Vec<f64> = (0..n)
        .map(|v| {
            let d = hood.out(v).len() as u64;
            (rng.below(d * d.saturating_sub(1) + 1)) as f64
        })
        .collect();
    let slots = Slots::new(
        &hood,
        HostData::F64(counts),
        vec![0.0; n],
        &[],
        two_gpus.clone(),
        false,
        2,
        vec![vec![], vec![]],
    );
    checks.push(Check {
        kernel: "lcc_apply",
        inputs: slots.data,
        scalars: vec![Scalar::F64(0.0), Scalar::U32(n as u32), Scalar::U32(0)],
        work_items: n as u64,
        rule: vec![],
    });

    // Split: three GPUs, this is gpu 0; selective and broadcast, min and add.
    let three: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
    let mut out: Vec<u32> = (0..n as u32).filter(|_| rng.below(3) == 0).collect();
    out.reverse();
    // Combiners: 0 min, 1 add f32, 2 add f64 (f32 packages), 3 assign (broadcast).
    for (broadcast, add) in [(0u32, 0u32), (1, 0), (0, 1), (0, 2), (1, 3)] {
        let values = match add {
            1 => HostData::F32((0..n).map(|_| rng.unit()).collect()),
            2 => HostData::F64((0..n).map(|_| f64::from(rng.unit()) / 3.0).collect()),
            _ => HostData::U32((0..n).map(|_| rng.below(1000) as u32).collect()),
        };
        let room = 2 * n;
        let mut slots = Slots::new(
            &c,
            values,
            no_aux.clone(),
            &[],
            three.clone(),
            false,
            3,
            vec![vec![0; room], vec![0; room], vec![0; room]],
        );
        let mut fout = vec![0u32; n];
        fout[..out.len()].copy_from_slice(&out);
        slots.data[8] = HostData::U32(fout);
        slots.data[9] = HostData::U64(vec![out.len() as u64, 0, 0, 0, 0, 0]);
        checks.push(Check {
            kernel: "bsp_split",
            inputs: slots.data,
            scalars: vec![
                Scalar::U32(0),
                Scalar::U32(3),
                Scalar::U32(9),
                Scalar::U32(broadcast),
                Scalar::U32(add),
            ],
            work_items: out.len() as u64,
            rule: vec![
                (7, Cmp::SetPrefix { counter: 1, from: 0 }),
                (14, Cmp::Exact),
                (15, Cmp::PairSet { counter: 3 }),
                (16, Cmp::PairSet { counter: 4 }),
            ],
        });
    }

    // Merge: packages from gpus 1 and 2 into gpu 0, min and add; the next frontier
    // continues after 5 entries the split left.
    // Assign (3): every receiver holds only copies of the sender's vertices, each sent once.
    for add in [0u32, 1, 2, 3] {
        let mut packages = vec![vec![]];
        let mut lengths = vec![Scalar::U64(0)];
        let mut sent = BTreeSet::new();
        for p in 1..3 {
            // Assign: fewer pairs than the sender owns vertices (about n / 3).
            let len = if add == 3 { 300 } else { 500 } + rng.below(300) as usize;
            let mut package = Vec::new();
            while package.len() < 2 * len {
                let v = rng.below(n as u64) as u32;
                if add == 3 && (three[v as usize] != p || !sent.insert(v)) {
                    continue;
                }
                package.push(v);
                package.push(match add {
                    1 | 2 => (rng.unit() * 0.01).to_bits(),
                    _ => rng.below(1000) as u32,
                });
            }
            let mut p = package;
            p.extend(std::iter::repeat_n(0, 20));
            packages.push(p);
            lengths.push(Scalar::U64(len as u64));
        }
        let values = match add {
            1 => HostData::F32((0..n).map(|_| rng.unit() * 0.01).collect()),
            2 => HostData::F64((0..n).map(|_| f64::from(rng.unit()) * 0.01).collect()),
            _ => HostData::U32((0..n).map(|_| rng.below(1000) as u32).collect()),
        };
        let mut slots =
            Slots::new(&c, values, no_aux.clone(), &[], three.clone(), false, 3, packages);
        let mut fin = vec![0u32; n];
        for (i, v) in fin.iter_mut().enumerate().take(5) {
            *v = 10 + i as u32;
        }
        slots.data[7] = HostData::U32(fin);
        slots.data[9] = HostData::U64(vec![0, 5, 0, 0, 0, 0]);
        let mut scalars = vec![
            Scalar::U32(0),
            Scalar::U32(3),
            Scalar::U32(10),
            Scalar::U32(add),
            Scalar::F64(if add == 1 || add == 2 { 0.012 } else { 0.0 }),
        ];
        let incoming = lengths.iter().map(|s| if let Scalar::U64(l) = s { *l } else { 0 }).sum();
        let rule = vec![
            (
                3,
                match add {
                    1 => Cmp::Close,
                    2 => Cmp::Close64,
                    _ => Cmp::Exact,
                },
            ),
            (7, Cmp::SetPrefix { counter: 1, from: 5 }),
        ];
        // The same merge reading each sender's count from its counter block ([2 + gpu]);
        // the receiver's own block announces 999 pairs in its empty slot: read, it would fail.
        let mut peer_inputs = slots.data.clone();
        for l in &lengths {
            let Scalar::U64(len) = *l else { unreachable!("lengths are u64") };
            let len = if len == 0 { 999 } else { len };
            peer_inputs.push(HostData::U64(vec![0, 0, len, 0, 0, 0]));
        }
        checks.push(Check {
            kernel: "bsp_merge_peer",
            inputs: peer_inputs,
            scalars: scalars.clone(),
            work_items: 0,
            rule: rule.clone(),
        });
        scalars.extend(lengths);
        checks.push(Check {
            kernel: "bsp_merge",
            inputs: slots.data,
            scalars,
            work_items: incoming,
            rule,
        });
    }
    // Bitmaps from gpus 1 and 2 into gpu 0: each set bit is min(value, 500); owned vertices
    // that improve join the next frontier after the 5 entries already there; the bitmaps
    // read come back cleared, and gpu 0's own slot (all ones) is neither read nor cleared.
    let words = n.div_ceil(32);
    let mut bitmaps = vec![vec![u32::MAX; words]];
    for _ in 1..3 {
        bitmaps.push(
            (0..words).map(|_| rng.below(1 << 32) as u32 & rng.below(1 << 32) as u32).collect(),
        );
    }
    if !n.is_multiple_of(32) {
        for b in &mut bitmaps[1..] {
            b[words - 1] &= (1u32 << (n % 32)) - 1;
        }
    }
    let values: Vec<u32> =
        (0..n).map(|_| if rng.below(3) == 0 { u32::MAX } else { rng.below(1000) as u32 }).collect();
    let mut slots = Slots::new(
        &c,
        HostData::U32(values),
        no_aux.clone(),
        &[],
        three.clone(),
        false,
        3,
        bitmaps,
    );
    let mut fin = vec![0u32; n];
    for (i, v) in fin.iter_mut().enumerate().take(5) {
        *v = 10 + i as u32;
    }
    slots.data[7] = HostData::U32(fin);
    slots.data[9] = HostData::U64(vec![0, 5, 0, 0, 0, 0]);
    checks.push(Check {
        kernel: "bsp_merge_bits_peer",
        inputs: slots.data,
        scalars: vec![Scalar::U32(0), Scalar::U32(3), Scalar::U32(10), Scalar::U32(500)],
        work_items: 0,
        rule: vec![
            (3, Cmp::Exact),
            (7, Cmp::SetPrefix { counter: 1, from: 5 }),
            (14, Cmp::Exact),
            (15, Cmp::Exact),
            (16, Cmp::Exact),
        ],
    });
    groute_checks(&mut rng, &mut checks);
    worklist_checks(&mut rng, &mut checks);
    gum_checks(&mut rng, &c, &mut checks);
    atos_checks(&mut rng, &c, &mut checks);
    checks
}

/// A random forest over `n` vertices with `parent[v] <= v`: chains of a few steps down.
fn forest(rng: &mut Rng, n: usize) -> Vec<u32> {
    (0..n)
        .map(|v| {
            if v == 0 || rng.below(4) == 0 {
                v as u32
            } else {
                v.saturating_sub(1 + rng.below(5) as usize) as u32
            }
        })
        .collect()
}

/// Random edge endpoints, `len` of them, then a tail the kernels must not read (out of
/// range: reading it would fail the run).
fn endpoints(rng: &mut Rng, n: usize, len: usize) -> Vec<u32> {
    let mut e: Vec<u32> = (0..len).map(|_| rng.below(n as u64) as u32).collect();
    e.extend(std::iter::repeat_n(u32::MAX, 7));
    e
}

/// The Groute CC and filter kernels.
fn groute_checks(rng: &mut Rng, checks: &mut Vec<Check>) {
    let n = 20_000;
    checks.push(Check {
        kernel: "groute_cc_init",
        inputs: vec![HostData::U32((0..n as u32).map(|v| v ^ 0x55).collect())],
        scalars: vec![],
        work_items: n as u64,
        rule: vec![],
    });
    // Hook: sparse (many components left) and dense (heavy compare-and-swap contention).
    for pairs in [6_000usize, 60_000] {
        let len = 2 * pairs;
        checks.push(Check {
            kernel: "groute_cc_hook",
            inputs: vec![HostData::U32(forest(rng, n)), HostData::U32(endpoints(rng, n, len))],
            scalars: vec![Scalar::U64(len as u64)],
            work_items: pairs as u64,
            rule: vec![(0, Cmp::Roots)],
        });
    }
    // Merge: a packet of another GPU's (compressed) parent array at an offset.
    let (offset, len) = (3_000usize, 12_000usize);
    let mut packet: Vec<u32> =
        (0..len).map(|i| rng.below((offset + i + 1) as u64) as u32).collect();
    packet.extend(std::iter::repeat_n(u32::MAX, 5));
    checks.push(Check {
        kernel: "groute_cc_merge",
        inputs: vec![HostData::U32(forest(rng, n)), HostData::U32(packet)],
        scalars: vec![Scalar::U64(offset as u64), Scalar::U64(len as u64)],
        work_items: len as u64,
        rule: vec![(0, Cmp::Roots)],
    });
    checks.push(Check {
        kernel: "groute_cc_compress",
        inputs: vec![HostData::U32(forest(rng, n))],
        scalars: vec![],
        work_items: n as u64,
        rule: vec![],
    });
    let len = 9_001;
    checks.push(Check {
        kernel: "groute_cc_compress_segment",
        inputs: vec![HostData::U32(forest(rng, n)), HostData::U32(endpoints(rng, n, len))],
        scalars: vec![Scalar::U64(len as u64)],
        work_items: len as u64,
        rule: vec![],
    });
    // Filter: a length that is no multiple of a warp or a tile, a tail that is not read,
    // a count that must be overwritten; modulo (sparse) and less-than (dense).
    let len = 100_003;
    let input: Vec<u32> = (0..len + 97).map(|_| rng.below(1000) as u32).collect();
    for (kind, a, b) in [(0u32, 7u32, 3u32), (1, 600, 0), (0, 1000, 999)] {
        checks.push(Check {
            kernel: "groute_filter",
            inputs: vec![
                HostData::U32(input.clone()),
                HostData::U32(vec![0; input.len()]),
                HostData::U32(vec![12_345]),
            ],
            scalars: vec![
                Scalar::U64(len as u64),
                Scalar::U32(kind),
                Scalar::U32(a),
                Scalar::U32(b),
            ],
            work_items: len as u64,
            rule: vec![],
        });
    }
}

#[test]
fn every_cuda_kernel_matches_its_rust_contract() {
    let registry = builtin_kernels();
    let checks = checks();
    // Every kernel with a CUDA implementation is covered, except those that cannot run in
    // isolation: Atos's aggregator runs until the host raises STOP (checked by the runtime's
    // aggregated runs, `gpu_bench.sh atos`).
    let covered: BTreeSet<&str> = checks.iter().map(|c| c.kernel).collect();
    // The on-chip tiles need their launch configuration: `atos_tiles_match_their_rust_contract`;
    // on several GPUs, one launch a GPU: `atos_tiles_on_two_logical_gpus_give_petgraphs_levels`.
    let not_isolated = [switchyard::runtime::atos::kernels::AGGREGATOR, BFS_TILES, BFS_TILES_PEER];
    for def in registry.iter().filter(|d| d.cuda_name.is_some() && !not_isolated.contains(&d.name))
    {
        assert!(covered.contains(def.name), "no conformance check for `{}`", def.name);
    }
    // GUM's kernels run in their own test (one a GPU script can pick by name).
    conform(checks.iter().filter(|c| !is_gum(c)));
}

/// Atos's on-chip tiles (`runtime::atos::tiles`) on a grid with holes from vertex 0: one
/// tile (level-synchronous inside the CTA: the counts are deterministic and must match) and
/// many tiles (asynchronous between tiles: the levels must match, the counts may not).
#[test]
fn atos_tiles_match_their_rust_contract() {
    let spec = GeneratorSpec::parse("grid2d:w=40,h=30,drop=0.1,seed=3").unwrap();
    let g = generate(&spec).unwrap();
    let n = g.num_vertices() as usize;
    let expected = switchyard::graph::reference::bfs_levels(&g, 0).unwrap();
    let mut gpu = gpu();
    // 1,200 vertices: one tile of 2,048, or 30-odd of 40.
    for (tile_vertices, counts_match) in [(2048, true), (40, false)] {
        let layout = TileLayout::build(&g, tile_vertices);
        let tiles = layout.tiles();
        assert_eq!(tiles == 1, counts_match, "{tiles} tiles of at most {tile_vertices}");
        let cap = layout.inbox_capacity(1);
        let mut labels = vec![u32::MAX; n];
        labels[layout.new_of[0] as usize] = 0;
        let mut inputs = vec![
            HostData::U32(layout.start.clone()),
            HostData::U32(layout.rows.clone()),
            HostData::U32(layout.cols.clone()),
        ];
        inputs.extend(layout.run_buffers(&labels, cap).map(|(_, data)| data));
        let config = layout.launch_config();
        let scalars = vec![Scalar::U32(tiles), Scalar::U32(cap as u32)];
        let levels = |out: &[HostData]| -> Vec<u32> {
            let by_tile = out[3].as_u32().unwrap();
            (0..n).map(|v| by_tile[layout.new_of[v] as usize]).collect()
        };
        let (want, want_counts) =
            run_one_with(&mut sim(), &inputs, BFS_TILES, scalars.clone(), n as u64, config);
        assert_eq!(levels(&want), expected, "{tiles} tiles: the simulator's levels");
        assert_eq!(
            want[6].as_u32().unwrap(),
            &[0, 0, 0],
            "{tiles} tiles: tokens, refused, stalled"
        );
        if tiles > 1 {
            assert!(want[7].as_u64().unwrap()[1] > 0, "{tiles} tiles send no message");
        }
        let Some(g) = gpu.as_mut() else {
            println!(
                "cuda conformance: no GPU here, the GPU half is skipped (simulator half runs)"
            );
            continue;
        };
        let (got, got_counts) =
            run_one_with(g, &inputs, BFS_TILES, scalars.clone(), n as u64, config);
        assert_eq!(levels(&got), expected, "{tiles} tiles: the GPU's levels");
        assert_eq!(
            got[6].as_u32().unwrap(),
            &[0, 0, 0],
            "{tiles} tiles on the GPU: tokens, refused, stalled"
        );
        if counts_match {
            assert_eq!(want_counts.items, got_counts.items, "one tile: expansions");
            assert_eq!(want_counts.edges, got_counts.edges, "one tile: arcs");
            assert_eq!(want_counts.atomics, got_counts.atomics, "one tile: messages");
        }
        println!("cuda conformance: {BFS_TILES} matches on {tiles} tiles ({got_counts:?})");
    }
}

/// The peer tile kernel (`atos_bfs_tiles_peer`) as one GPU of one (its peer pointers are
/// its own buffers), so that it runs in isolation: the same grid with holes, one tile (the
/// counts must match the simulator's) and many (the levels must).
#[test]
fn atos_peer_tiles_on_one_gpu_match_their_rust_contract() {
    let spec = GeneratorSpec::parse("grid2d:w=40,h=30,drop=0.1,seed=3").unwrap();
    let g = generate(&spec).unwrap();
    let n = g.num_vertices() as usize;
    let expected = switchyard::graph::reference::bfs_levels(&g, 0).unwrap();
    let mut gpu = gpu();
    for (tile_vertices, counts_match) in [(2048, true), (40, false)] {
        let layout = TileLayout::build(&g, tile_vertices);
        let tiles = layout.tiles();
        let cap = layout.inbox_capacity(1);
        let mut labels = vec![u32::MAX; n];
        labels[layout.new_of[0] as usize] = 0;
        let inputs = vec![
            HostData::U32(layout.start.clone()),
            HostData::U32(layout.rows.clone()),
            HostData::U32(layout.cols.clone()),
            HostData::U32(labels.clone()),
            HostData::U32(layout.gpu_tiles.clone()),
            HostData::U64(vec![0; 5]),
            HostData::U32(vec![tiles, 0, 0]),
            HostData::U32(labels),
            HostData::U64(vec![u64::MAX; (u64::from(tiles) * cap) as usize]),
            HostData::U32(vec![0; tiles as usize]),
        ];
        let config = layout.launch_config();
        let scalars = vec![Scalar::U32(0), Scalar::U32(1), Scalar::U32(cap as u32)];
        let levels = |out: &[HostData]| -> Vec<u32> {
            let by_tile = out[7].as_u32().unwrap();
            (0..n).map(|v| by_tile[layout.new_of[v] as usize]).collect()
        };
        let (want, want_counts) =
            run_one_with(&mut sim(), &inputs, BFS_TILES_PEER, scalars.clone(), n as u64, config);
        assert_eq!(levels(&want), expected, "{tiles} tiles: the simulator's levels");
        assert_eq!(want[6].as_u32().unwrap(), &[0, 0, 0], "{tiles} tiles: tokens, refused");
        assert_eq!(want[5].as_u64().unwrap()[4], 0, "one GPU sends nothing to another");
        let Some(g) = gpu.as_mut() else {
            println!(
                "cuda conformance: no GPU here, the GPU half is skipped (simulator half runs)"
            );
            continue;
        };
        let (got, got_counts) =
            run_one_with(g, &inputs, BFS_TILES_PEER, scalars.clone(), n as u64, config);
        assert_eq!(levels(&got), expected, "{tiles} tiles: the GPU's levels");
        assert_eq!(
            got[6].as_u32().unwrap(),
            &[0, 0, 0],
            "{tiles} tiles on the GPU: tokens, refused, stalled"
        );
        if counts_match {
            assert_eq!(want_counts.items, got_counts.items, "one tile: expansions");
            assert_eq!(want_counts.edges, got_counts.edges, "one tile: arcs");
            assert_eq!(want_counts.atomics, got_counts.atomics, "one tile: messages");
        }
        println!("cuda conformance: {BFS_TILES_PEER} matches on {tiles} tiles ({got_counts:?})");
    }
}

/// Atos's on-chip tiles on two GPUs (`atos_bfs_tiles_peer`, one launch a GPU, all resident
/// at once, messages between GPUs through peer pointers), through the runtime: the levels of
/// the simulator's and of two logical GPUs (on one physical GPU, or two where the machine has
/// them) must equal petgraph's, on a grid with holes cut into many small tiles and on
/// luxembourg_osm.
#[test]
fn atos_tiles_on_two_logical_gpus_give_petgraphs_levels() {
    use switchyard::algo::{Algorithm, AlgorithmParams};
    use switchyard::driver::{BackendSetup, CudaSetup, RunSpec, RuntimeKind, SimSetup, run};
    use switchyard::runtime::atos::AtosOptions;
    use switchyard::runtime::atos::tiles::TileMode;
    let grid =
        generate(&GeneratorSpec::parse("grid2d:w=40,h=30,drop=0.1,seed=3").unwrap()).unwrap();
    let lux_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphs/luxembourg_osm.mtx");
    let lux = switchyard::graph::load::load_graph(&lux_path, &Default::default()).unwrap().csr;
    let sim_machine = BackendSetup::Sim(SimSetup {
        topology: Topology::bundled("hgx-h200x4").expect("bundled topology"),
        fidelity: switchyard_sim::interconnect::Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let on_gpu = switchyard::backend::cuda::gpus_present() > 0;
    if !on_gpu {
        println!("cuda conformance: no GPU here, the GPU half is skipped (simulator half runs)");
    }
    for (name, g, source, tile_vertices) in [("grid", &grid, 0, 40), ("luxembourg", &lux, 1, 1024)]
    {
        let expected = switchyard::graph::reference::bfs_levels(g, source).unwrap();
        let spec = RunSpec {
            params: AlgorithmParams { source, ..AlgorithmParams::default() },
            partitioner: "metis".into(),
            atos: AtosOptions { tiles: TileMode::On, tile_vertices, ..AtosOptions::default() },
            command_line: vec!["cuda_conformance".into()],
            ..RunSpec::new(Algorithm::Bfs, RuntimeKind::Atos, 2)
        };
        let mut machines = vec![("simulator", sim_machine.clone())];
        if on_gpu {
            let cuda = BackendSetup::Cuda(CudaSetup { logical_gpus: true, trace: false });
            machines.push(("2 logical GPUs", cuda));
        }
        for (machine, setup) in machines {
            let out =
                run(g, name, &spec, &setup).unwrap_or_else(|e| panic!("{name}, {machine}: {e}"));
            assert_eq!(out.values, expected, "{name}, {machine}: the levels");
            let t = out.report.atos.as_ref().and_then(|a| a.tiles.as_ref()).expect("tiles");
            assert_eq!(t.per_gpu.len(), 2, "{name}, {machine}: {t:?}");
            assert!(t.cross_gpu_messages > 0, "{name}, {machine}: {t:?}");
            println!("cuda conformance: {BFS_TILES_PEER} on {name}, {machine}: {t:?}");
        }
    }
}

/// Whether a check is of one of GUM's framework kernels.
fn is_gum(check: &Check) -> bool {
    check.kernel.starts_with("gum_")
}

#[test]
fn gum_kernels_match_their_rust_contract() {
    let checks = checks();
    let gum: Vec<&Check> = checks.iter().filter(|c| is_gum(c)).collect();
    // The cached lists differ from the victim's, so each rule's pairs with the cache differ
    // from its pairs without: a kernel that ignored the cache could not pass both.
    let steal: Vec<&&Check> = gum.iter().filter(|c| c.kernel == "gum_steal_min").collect();
    let pairs = |c: &Check| {
        let (out, _) = run_one(&mut sim(), &c.inputs, c.kernel, c.scalars.clone(), c.work_items);
        let len = out[6].as_u64().unwrap()[0] as usize;
        let mut p: Vec<(u32, u32)> =
            out[5].as_u32().unwrap()[..2 * len].chunks(2).map(|x| (x[0], x[1])).collect();
        p.sort_unstable();
        p
    };
    let (plain, cached): (Vec<&&Check>, Vec<&&Check>) =
        steal.iter().partition(|c| c.inputs.len() == 7);
    assert_eq!((plain.len(), cached.len()), (3, 3), "each rule without and with a hub cache");
    for (p, c) in plain.iter().zip(&cached) {
        assert_eq!(p.scalars, c.scalars, "the same range and rule");
        assert_ne!(pairs(p), pairs(c), "rule {:?}: the cache changes no pair", p.scalars[2]);
    }
    conform(gum);
}

/// Runs every check on the simulator and, where there is one, on the GPU, comparing the
/// outputs and counts; a mismatch is recorded and the remaining checks still run.
fn conform<'a>(checks: impl IntoIterator<Item = &'a Check>) {
    let mut gpu = gpu();
    let mut failures: Vec<&str> = Vec::new();
    if gpu.is_none() {
        println!("cuda conformance: no GPU here, the GPU half is skipped (simulator half runs)");
    }
    for check in checks {
        let (want, want_counts) = run_one(
            &mut sim(),
            &check.inputs,
            check.kernel,
            check.scalars.clone(),
            check.work_items,
        );
        assert!(
            want_counts.items + want_counts.edges > 0,
            "{}: the check gives the kernel no work",
            check.kernel
        );
        if let Some(g) = gpu.as_mut() {
            // A mismatch is recorded and the remaining checks still run, so one GPU run
            // says which kernels conform.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let (got, got_counts) = run_one(
                    g,
                    &check.inputs,
                    check.kernel,
                    check.scalars.clone(),
                    check.work_items,
                );
                compare(check.kernel, &check.rule, &want, &got);
                assert_eq!(want_counts.edges, got_counts.edges, "{}: edges", check.kernel);
                assert_eq!(want_counts.items, got_counts.items, "{}: items", check.kernel);
                assert_eq!(want_counts.atomics, got_counts.atomics, "{}: atomics", check.kernel);
                got_counts
            }));
            match outcome {
                Ok(got_counts) => {
                    println!("cuda conformance: {} matches ({:?})", check.kernel, got_counts)
                }
                Err(e) => {
                    let message = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    println!("cuda conformance: {} MISMATCH: {message}", check.kernel);
                    failures.push(check.kernel);
                }
            }
        }
    }
    assert!(failures.is_empty(), "kernels that do not conform: {failures:?}");
}

// ------------------------------------------------ the Groute distributed-worklist kernels

/// The control block's slot in the worklist layout (`worklist::kernels::Slot::Ctl`).
const WL_CTL: usize = 7;
const ORIGIN: u64 = 1 << 40;

/// A random forest: every vertex has at most one in-arc, so no two arcs of a batch update
/// the same vertex and a round's result does not depend on the order of the updates; with
/// a few huge vertices (chunks over the grid), some of block and warp size, many small.
struct Forest {
    n: usize,
    offsets: Vec<u64>,
    targets: Vec<u32>,
    weights: Vec<u32>,
    parent: Vec<u32>,
}

fn wl_forest(rng: &mut Rng, n: usize) -> Forest {
    let degree = |v: usize, rng: &mut Rng| -> usize {
        match v {
            7 => 10_000,
            1001 => 5_000,
            _ if v % 2000 == 3 => 300 + rng.below(500) as usize,
            _ if v % 200 == 5 => 32 + rng.below(100) as usize,
            _ => (rng.below(3) == 0) as usize + (rng.below(9) == 0) as usize,
        }
    };
    // Children get consecutive ids above their parent, then every id is relabelled.
    let mut children = vec![Vec::new(); n];
    let mut next = 1usize;
    for (v, list) in children.iter_mut().enumerate() {
        next = next.max(v + 1);
        let d = degree(v, rng).min(n - next);
        list.extend((next..next + d).map(|c| c as u32));
        next += d;
    }
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut lists = vec![Vec::new(); n];
    let mut parent = vec![u32::MAX; n];
    for (v, list) in children.iter().enumerate() {
        let pv = perm[v];
        for &c in list {
            let pc = perm[c as usize];
            lists[pv as usize].push(pc);
            parent[pc as usize] = pv;
        }
    }
    let mut offsets = vec![0u64];
    let mut targets = Vec::new();
    for list in lists {
        targets.extend(list);
        offsets.push(targets.len() as u64);
    }
    let weights = (0..targets.len()).map(|_| 1 + rng.below(100) as u32).collect();
    Forest { n, offsets, targets, weights, parent }
}

impl Forest {
    fn degree(&self, v: u32) -> u64 {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }

    /// Distinct owned vertices, no two of them parent and child; `first` lead the list.
    fn batch(&self, rng: &mut Rng, owner: &[u32], first: &[u32], want: usize) -> Vec<u32> {
        let mut chosen: Vec<u32> = Vec::new();
        let mut taken = BTreeSet::new();
        let candidates =
            first.iter().copied().chain((0..want * 8).map(|_| rng.below(self.n as u64) as u32));
        for v in candidates {
            let p = self.parent[v as usize];
            let clash = taken.contains(&v)
                || (p != u32::MAX && taken.contains(&p))
                || self.out(v).iter().any(|t| taken.contains(t));
            if owner[v as usize] != 0 || clash {
                continue;
            }
            taken.insert(v);
            chosen.push(v);
            if chosen.len() == want {
                break;
            }
        }
        chosen
    }

    fn out(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }
}

/// Which application a worklist check runs.
#[derive(Clone, Copy, PartialEq)]
enum WlApp {
    Bfs,
    Sssp,
    /// SSSP over real weights (distances and weights as f32 bits).
    SsspF32,
    Pr,
}

impl WlApp {
    fn name(self, which: &str) -> &'static str {
        let prefix = match self {
            WlApp::Bfs => "groute_bfs",
            WlApp::Sssp => "groute_sssp",
            WlApp::SsspF32 => "groute_sssp_f32",
            WlApp::Pr => "groute_pr",
        };
        Box::leak(format!("{prefix}_{which}").into_boxed_str())
    }
}

/// The thirteen worklist buffers (`worklist::kernels::Slot` order; the last, the asynchronous
/// send's mapped block, empty: these launches send at launch end) for `app` on `f`.
struct WlState {
    values: HostData,
    rank: HostData,
    wl: Vec<u32>,
    ctl: Vec<u64>,
    out: Vec<u32>,
    deferred: Vec<u32>,
    message: Vec<u32>,
    pass: Vec<u32>,
}

impl WlState {
    fn new(rng: &mut Rng, app: WlApp, f: &Forest, cap: usize, out: usize, pairs: usize) -> Self {
        let n = f.n;
        let values =
            match app {
                WlApp::Bfs => HostData::U32(
                    (0..n)
                        .map(|_| if rng.below(3) == 0 { rng.below(20) as u32 } else { u32::MAX })
                        .collect(),
                ),
                WlApp::Sssp => HostData::U32(
                    (0..n)
                        .map(|_| if rng.below(3) == 0 { rng.below(2000) as u32 } else { u32::MAX })
                        .collect(),
                ),
                WlApp::SsspF32 => HostData::U32(
                    (0..n)
                        .map(|_| {
                            if rng.below(3) == 0 {
                                (rng.unit() * 2000.0).to_bits()
                            } else {
                                u32::MAX
                            }
                        })
                        .collect(),
                ),
                WlApp::Pr => HostData::F64(
                    (0..n)
                        .map(|_| match rng.below(4) {
                            0 => 0.0,
                            1 => f64::from(rng.unit()) * 0.005,
                            _ => f64::from(rng.unit()) * 0.1,
                        })
                        .collect(),
                ),
            };
        let rank = match app {
            WlApp::Pr => HostData::F64((0..n).map(|_| f64::from(rng.unit())).collect()),
            _ => HostData::F64(Vec::new()),
        };
        let mut ctl = vec![0u64; 32];
        // Start a few slots before the buffer's end: the live items wrap around.
        let start = ORIGIN + (cap as u64 - ORIGIN % cap as u64) - 5;
        for i in [0, 1, 4, 5] {
            ctl[i] = start;
        }
        WlState {
            values,
            rank,
            wl: vec![0; cap],
            ctl,
            out: vec![0; out],
            deferred: vec![0; cap],
            message: vec![0; 2 * pairs],
            pass: vec![0; 2 * pairs],
        }
    }

    /// Appends `items` to the live region.
    fn push(&mut self, items: &[u32]) {
        let cap = self.wl.len() as u64;
        for &v in items {
            self.wl[(self.ctl[1] % cap) as usize] = v;
            self.ctl[1] += 1;
        }
        self.ctl[4] = self.ctl[1];
        self.ctl[5] = self.ctl[1];
    }

    fn inputs(self, app: WlApp, f: &Forest, owner: &[u32]) -> Vec<HostData> {
        vec![
            HostData::U64(f.offsets.clone()),
            HostData::U32(f.targets.clone()),
            HostData::U32(match app {
                WlApp::Sssp => f.weights.clone(),
                WlApp::SsspF32 => f.weights.iter().map(|&w| (w as f32 / 7.0).to_bits()).collect(),
                _ => Vec::new(),
            }),
            HostData::U32(owner.to_vec()),
            self.values,
            self.rank,
            HostData::U32(self.wl),
            HostData::U64(self.ctl),
            HostData::U32(self.out),
            HostData::U32(self.deferred),
            HostData::U32(self.message),
            HostData::U32(self.pass),
            HostData::U64(Vec::new()),
        ]
    }
}

fn wl_scalars(
    count: u64,
    threshold: u64,
    max_rounds: u32,
    flush_pairs: u64,
    push_budget: u64,
) -> Vec<Scalar> {
    vec![
        Scalar::U32(0),
        Scalar::U64(count),
        Scalar::U64(threshold),
        Scalar::F64(0.01),
        Scalar::F64(0.85),
        Scalar::U32(max_rounds),
        Scalar::U64(flush_pairs),
        Scalar::U64(push_budget),
        Scalar::U64(0),
        Scalar::U32(2),
    ]
}

/// How the worklist buffers are compared: values exactly (BFS, SSSP) or within 1e-12
/// (PageRank's residuals and ranks: with one in-arc per vertex every residual receives one
/// addition, so they are in fact exact); the control block exactly; outputs as multisets.
fn wl_rule(app: WlApp, out: Cmp) -> Vec<(usize, Cmp)> {
    let values = if app == WlApp::Pr { Cmp::Close64 } else { Cmp::Exact };
    vec![
        (4, values),
        (5, Cmp::Close64),
        (6, Cmp::WlLive),
        (8, out),
        (9, Cmp::CtlPrefix { index: 2 }),
        (10, Cmp::CtlPairs { index: 11 }),
        (11, Cmp::CtlPairs { index: 19 }),
    ]
}

/// Work, SplitSend, SplitReceive, promote and the fused worker of every application, and
/// the worklist's growth. Inputs make the result independent of thread interleaving: the
/// graph is a forest (one in-arc per vertex), batches hold no parent-child pair, received
/// and deferred vertices are distinct; the fused worker's rounds take the whole worklist
/// (so a round is a set of independent vertices, see [`Forest`]).
fn worklist_checks(rng: &mut Rng, checks: &mut Vec<Check>) {
    let f = wl_forest(rng, 120_000);
    let n = f.n;
    let owner: Vec<u32> = (0..n).map(|_| (rng.below(4) == 0) as u32).collect();
    let mut owned_huge: Vec<u32> = Vec::new();
    for v in 0..n as u32 {
        if f.degree(v) >= 4096 && owner[v as usize] == 0 {
            owned_huge.push(v);
        }
    }
    let cap = 1 << 17;
    let budget = 1u64 << 40;
    // A small distance of each application's kind (integer, or the bits of a real).
    let small = |app: WlApp, rng: &mut Rng, below: u64| match app {
        WlApp::SsspF32 => (rng.below(below * 8) as f32 / 8.0 + 0.25).to_bits(),
        _ => rng.below(below) as u32,
    };
    for app in [WlApp::Bfs, WlApp::Sssp, WlApp::SsspF32, WlApp::Pr] {
        // Work: everything fits Out; then Out cuts the batch in the middle of a tile.
        let batch = f.batch(rng, &owner, &owned_huge, 3000);
        let arcs: Vec<u64> = batch.iter().map(|&v| f.degree(v)).collect();
        let total: u64 = arcs.iter().sum();
        let k = 1500;
        let cut: u64 = arcs[..k].iter().sum::<u64>() + arcs[k] / 2;
        for (out, count) in
            [(total as usize + 17, batch.len() as u64 - 10), (cut as usize, 1 << 20)]
        {
            let mut st = WlState::new(rng, app, &f, cap, out, 16);
            if let HostData::U32(values) = &mut st.values {
                for &v in &batch {
                    values[v as usize] = small(app, rng, 8);
                }
            }
            st.push(&batch);
            checks.push(Check {
                kernel: app.name("work"),
                inputs: st.inputs(app, &f, &owner),
                scalars: wl_scalars(count, u64::MAX, 1, 0, budget),
                work_items: count,
                rule: wl_rule(app, Cmp::CtlPrefix { index: 3 }),
            });
        }
        // SplitSend: distinct vertices in Out, owned and remote, some deferred.
        let mut seen = BTreeSet::new();
        let out_items: Vec<u32> =
            (0..20_000).map(|_| rng.below(n as u64) as u32).filter(|v| seen.insert(*v)).collect();
        let mut st = WlState::new(rng, app, &f, cap, 30_000, 30_000);
        st.push(&out_items[..100]);
        st.out[..out_items.len()].copy_from_slice(&out_items);
        st.ctl[3] = out_items.len() as u64;
        st.ctl[8] = 777;
        st.ctl[14] = 999;
        let threshold = if app == WlApp::Pr { u64::MAX } else { 10 };
        checks.push(Check {
            kernel: app.name("split_send"),
            inputs: st.inputs(app, &f, &owner),
            scalars: wl_scalars(out_items.len() as u64, threshold, 1, 0, budget),
            work_items: out_items.len() as u64,
            rule: wl_rule(app, Cmp::Exact),
        });
        // SplitReceive: a packet of distinct vertices, owned (improving or not) and passed.
        let mut seen = BTreeSet::new();
        let mut packet = Vec::new();
        for _ in 0..5000 {
            let v = rng.below(n as u64) as u32;
            if !seen.insert(v) {
                continue;
            }
            let value = match app {
                WlApp::Pr => (rng.unit() * 0.02).to_bits(),
                _ => small(app, rng, 40),
            };
            packet.extend([v, value]);
        }
        let pairs = packet.len() / 2;
        let mut st = WlState::new(rng, app, &f, cap, 16, pairs + 3);
        st.push(&out_items[..50]);
        st.message[..packet.len()].copy_from_slice(&packet);
        checks.push(Check {
            kernel: app.name("split_receive"),
            inputs: st.inputs(app, &f, &owner),
            scalars: wl_scalars(pairs as u64, threshold, 1, 0, budget),
            work_items: pairs as u64,
            rule: wl_rule(app, Cmp::Exact),
        });
        // Promote: distinct deferred vertices, a threshold in the middle of their values.
        let mut st = WlState::new(rng, app, &f, cap, 16, 16);
        st.push(&out_items[..300]);
        let bag = &out_items[300..12_300];
        st.deferred[..bag.len()].copy_from_slice(bag);
        st.ctl[2] = bag.len() as u64;
        checks.push(Check {
            kernel: app.name("promote"),
            inputs: st.inputs(app, &f, &owner),
            scalars: wl_scalars(
                bag.len() as u64,
                if app == WlApp::Pr { 1 } else { 12 },
                1,
                0,
                budget,
            ),
            work_items: bag.len() as u64,
            rule: wl_rule(app, Cmp::Exact),
        });
        // Fused: 3 rounds, then to exhaustion, with soft priority (BFS, SSSP) and remote
        // targets; every round takes the whole worklist.
        for (max_rounds, threshold) in
            [(3u32, u64::MAX), (64, if app == WlApp::Pr { u64::MAX } else { 15 })]
        {
            let batch = f.batch(rng, &owner, &owned_huge, 800);
            let mut st = WlState::new(rng, app, &f, cap, n, 2 * n + 16);
            if let HostData::U32(values) = &mut st.values {
                for &v in &batch {
                    values[v as usize] = small(app, rng, 8);
                }
            }
            st.push(&batch);
            checks.push(Check {
                kernel: app.name("fused"),
                inputs: st.inputs(app, &f, &owner),
                scalars: wl_scalars(1 << 20, threshold, max_rounds, 1 << 40, budget),
                work_items: 1 << 20,
                rule: wl_rule(app, Cmp::Ignore),
            });
        }
    }
    // Growth: live items that wrap in the old buffer.
    let old_cap = 50_000usize;
    let old: Vec<u32> = (0..old_cap).map(|_| rng.below(1 << 30) as u32).collect();
    let start = ORIGIN + (old_cap as u64 - ORIGIN % old_cap as u64) - 7_000;
    let mut ctl = vec![0u64; 32];
    ctl[0] = start;
    for i in [1, 4, 5] {
        ctl[i] = start + 31_000;
    }
    checks.push(Check {
        kernel: "groute_wl_grow",
        inputs: vec![HostData::U32(old), HostData::U64(ctl), HostData::U32(vec![0; 4 * old_cap])],
        scalars: vec![],
        work_items: 31_000,
        rule: vec![],
    });
}

// ------------------------------------------------------------------ GUM's framework kernels

/// GUM (seed 001): the frontier statistics and prefix sums, Alg. 1's cuts, a stolen range
/// under each relaxation rule (without and with a hub cache), and the victim's merge of two
/// returned packages.
fn gum_checks(rng: &mut Rng, c: &Case, checks: &mut Vec<Check>) {
    use switchyard::runtime::gum::kernels::{STATS_BUFFER_WORDS as STATS, TOTALS_AT, chunk_items};
    let n = c.n;
    let degree: Vec<u32> = (0..n).map(|v| c.out(v).len() as u32).collect();
    let in_degree: Vec<u32> = (0..n).map(|_| rng.below(5000) as u32).collect();
    let mut frontier: Vec<u32> = (0..n as u32).filter(|_| rng.below(2) == 0).collect();
    frontier.push(0); // a huge vertex (v % 97 == 0, v % 5 == 0)
    let len = frontier.len();
    let mut padded = frontier.clone();
    padded.resize(n, 0);
    checks.push(Check {
        kernel: "gum_frontier_stats",
        inputs: vec![
            HostData::U32(degree.clone()),
            HostData::U32(in_degree),
            HostData::U32(padded.clone()),
            HostData::U64(vec![0, len as u64, 0]),
            HostData::U64(vec![0; STATS]),
            HostData::U64(vec![0; n]),
        ],
        scalars: vec![],
        work_items: len as u64,
        rule: vec![(4, Cmp::CountersExceptF64(7))],
    });

    // The prefix sums from the chunk sums the stats kernel leaves (computed here).
    let mut stats = vec![0u64; STATS];
    for (k, part) in frontier.chunks(chunk_items(len)).enumerate() {
        stats[TOTALS_AT + k] = part.iter().map(|&v| u64::from(degree[v as usize])).sum();
    }
    checks.push(Check {
        kernel: "gum_frontier_prefix",
        inputs: vec![
            HostData::U32(degree.clone()),
            HostData::U32(padded.clone()),
            HostData::U64(vec![0, len as u64, 0]),
            HostData::U64(stats),
            HostData::U64(vec![0; n]),
        ],
        scalars: vec![],
        work_items: len as u64,
        rule: vec![],
    });

    let mut prefix = Vec::with_capacity(n);
    let mut total = 0u64;
    for &v in &frontier {
        total += u64::from(degree[v as usize]);
        prefix.push(total);
    }
    prefix.resize(n, 0);
    let mut cuts: Vec<u64> = (0..6).map(|_| rng.below(total + 1)).collect();
    cuts.sort_unstable();
    let mut scalars = vec![Scalar::U64(len as u64), Scalar::U32(cuts.len() as u32)];
    scalars.extend(cuts.iter().map(|&x| Scalar::U64(x)));
    checks.push(Check {
        kernel: "gum_cut",
        inputs: vec![HostData::U64(prefix), HostData::U64(vec![0; STATS])],
        scalars,
        work_items: cuts.len() as u64,
        rule: vec![],
    });

    // A thief's range of the victim's frontier: values as read, every improving arc.
    let values: Vec<u32> =
        (0..n).map(|_| if rng.below(4) == 0 { u32::MAX } else { rng.below(400) as u32 }).collect();
    let stolen: Vec<u32> = (0..n as u32).filter(|&v| values[v as usize] != u32::MAX).collect();
    let (start, end) = (50usize, stolen.len().min(1200));
    let arcs: usize = stolen[start..end].iter().map(|&v| c.out(v as usize).len()).sum();
    let mut stolen_padded = stolen.clone();
    stolen_padded.resize(n, 0);
    // The thief's cache of the victim's hub lists (seed 001 Ex. 6): every vertex of the range
    // with a list of a warp or more (the huge one of block expansion among them), every
    // seventh of the others, and two vertices outside the range. Their cached lists are NOT
    // the victim's (targets shifted by one, other weights, the same lengths), so a kernel
    // that read a cached hub's list through the peer path would return other pairs.
    let hubs: Vec<u32> = stolen[start..end]
        .iter()
        .enumerate()
        .filter(|&(i, &v)| c.out(v as usize).len() >= 32 || i % 7 == 3)
        .map(|(_, &v)| v)
        .chain([stolen[0]])
        .chain(stolen.get(end).copied())
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let mut cache = (vec![0u64], Vec::new(), Vec::new());
    for &h in &hubs {
        let (a, b) = (c.offsets[h as usize] as usize, c.offsets[h as usize + 1] as usize);
        cache.1.extend(c.targets[a..b].iter().map(|&t| (t + 1) % n as u32));
        cache.2.extend(c.weights[a..b].iter().map(|&w| 101 - w));
        cache.0.push(cache.1.len() as u64);
    }
    assert!(hubs.iter().any(|&h| c.out(h as usize).len() >= 4096), "no huge hub in the range");
    for (rule, cached) in (0..3u32).flat_map(|r| [(r, false), (r, true)]) {
        let mut inputs = vec![
            HostData::U64(c.offsets.clone()),
            HostData::U32(c.targets.clone()),
            HostData::U32(c.weights.clone()),
            HostData::U32(values.clone()),
            HostData::U32(stolen_padded.clone()),
            HostData::U32(vec![0; 2 * arcs + 2]),
            HostData::U64(vec![0]),
        ];
        if cached {
            inputs.extend([
                HostData::U32(hubs.clone()),
                HostData::U64(cache.0.clone()),
                HostData::U32(cache.1.clone()),
                HostData::U32(cache.2.clone()),
            ]);
        }
        checks.push(Check {
            kernel: "gum_steal_min",
            inputs,
            scalars: vec![
                Scalar::U64(start as u64),
                Scalar::U64(end as u64),
                Scalar::U32(rule),
                Scalar::U32(0b11111),
            ],
            work_items: (end - start) as u64,
            rule: vec![(5, Cmp::PairsCounted { len_buffer: 6 })],
        });
    }

    // The victim merges two packages (repeated vertices, some already on its frontier).
    let stamp = 9u32;
    let marker: Vec<u32> = (0..n).map(|_| if rng.below(10) == 0 { stamp } else { 3 }).collect();
    let mut fout = vec![0u32; n];
    let already: Vec<u32> = (0..n as u32).filter(|&v| marker[v as usize] == stamp).collect();
    let head = already.len().min(10);
    fout[..head].copy_from_slice(&already[..head]);
    let mut inputs = vec![
        HostData::U32(values),
        HostData::U32(marker),
        HostData::U32(fout),
        HostData::U64(vec![head as u64]),
    ];
    let mut scalars = vec![Scalar::U32(stamp)];
    for len in [700usize, 450] {
        let mut package = Vec::with_capacity(2 * len + 8);
        for _ in 0..len {
            package.push(rng.below(n as u64 / 3) as u32);
            package.push(rng.below(600) as u32);
        }
        package.extend([0; 8]);
        inputs.push(HostData::U32(package));
        scalars.push(Scalar::U64(len as u64));
    }
    checks.push(Check {
        kernel: "gum_merge_return",
        inputs,
        scalars,
        work_items: 1150,
        rule: vec![(2, Cmp::SetCounted { len_buffer: 3, index: 0, from: head })],
    });
}

// ------------------------------------------------ Atos's workers

/// One discrete launch of an Atos worker on one GPU with warp workers (a warp per item, so
/// every item whose degree is at most 32 finishes in the simulator's first step): the local
/// queue holds an independent `frontier`, so no task reads a value another task of the
/// launch writes and the result does not depend on the order tasks finish in.
#[allow(clippy::too_many_arguments)]
fn atos_check(
    c: &Case,
    kernel: &'static str,
    value: Vec<u32>,
    aux: Vec<f32>,
    flags: Vec<u32>,
    frontier: &[u32],
    epsilon_damping: (f64, f64),
    value_rule: Cmp,
) -> Check {
    use switchyard::backend::queue::{self, COUNTER_WORDS};
    use switchyard::runtime::atos::kernels::{RECV_COUNTER_WORDS, ctl, state};
    let n = c.n;
    let mut local_items = vec![0u32; 2 * n];
    let mut local_counters = vec![0u64; COUNTER_WORDS];
    queue::push(&mut local_counters, &mut local_items, frontier);
    let mut st = vec![0u64; state::LEN];
    st[state::THRESHOLD] = u64::MAX;
    let recv_counters = HostData::U64(vec![0; RECV_COUNTER_WORDS]);
    let inputs = vec![
        HostData::U64(c.offsets.clone()),
        HostData::U32(c.targets.clone()),
        HostData::U32(vec![0, n as u32]),
        HostData::U32(value.clone()),
        HostData::F32(aux),
        HostData::U32(flags),
        HostData::U32(local_items),
        HostData::U64(local_counters),
        HostData::U32(vec![0]),
        HostData::U64(vec![0; COUNTER_WORDS]),
        HostData::U32(vec![0; 2]),
        recv_counters.clone(),
        HostData::U32(vec![0; 2]),
        HostData::U64(vec![0; COUNTER_WORDS]),
        HostData::U32(vec![0; 4096 + 4 * frontier.len()]),
        HostData::U64(st),
        HostData::U64(vec![0; ctl::len(1)]),
        HostData::U32(value),
        HostData::U32(vec![0; 2]),
        recv_counters,
    ];
    let counters: &'static [usize] = &[
        queue::START,
        queue::END,
        queue::END_ALLOC,
        queue::END_MAX,
        queue::END_COUNT,
        queue::OVERFLOW,
    ];
    let states: &'static [usize] = &[
        state::THRESHOLD,
        state::CHECK,
        state::VISITS,
        state::TASKS,
        state::EDGES,
        state::PUSHES,
        state::SENT,
        state::RECEIVED,
        state::RAISES,
        state::LIMIT_LOCAL,
        state::LIMIT_LOW,
        state::LIMIT_RECV,
        state::SWEPT,
        state::POPPED,
        state::LAST_RECV,
    ];
    Check {
        kernel,
        inputs,
        scalars: vec![
            Scalar::U32(0),
            Scalar::U32(1),
            Scalar::U32(32),
            Scalar::U32(1),
            Scalar::U32(0),
            Scalar::U32(0),
            Scalar::U32(0),
            Scalar::U32(0),
            Scalar::F64(epsilon_damping.0),
            Scalar::F64(epsilon_damping.1),
            Scalar::U32(0),
        ],
        work_items: 32 * frontier.len() as u64,
        rule: vec![
            (3, value_rule),
            (6, Cmp::SetCounted { len_buffer: 7, index: queue::END, from: frontier.len() }),
            (7, Cmp::Words(counters)),
            (14, Cmp::Ignore),
            (15, Cmp::Words(states)),
        ],
    }
}

fn atos_checks(rng: &mut Rng, c: &Case, checks: &mut Vec<Check>) {
    let n = c.n;
    let frontier: Vec<u32> = c
        .independent_frontier(rng, 600)
        .into_iter()
        .filter(|&v| (1..=32).contains(&c.out(v as usize).len()))
        .collect();
    assert!(frontier.len() > 50, "too small a frontier: {}", frontier.len());
    // BFS: frontier at level 5, other vertices unreached or at random levels.
    let mut level: Vec<u32> = (0..n)
        .map(|_| if rng.below(3) == 0 { 3 + rng.below(6) as u32 } else { u32::MAX })
        .collect();
    for &v in &frontier {
        level[v as usize] = 5;
    }
    // Both BFS workers (one CTA an SM, and two: `--atos-ctas-per-sm`), the same contract.
    for kernel in ["atos_bfs_worker", "atos_bfs_worker_wide"] {
        checks.push(atos_check(
            c,
            kernel,
            level.clone(),
            vec![0.0],
            vec![0],
            &frontier,
            (0.0, 0.0),
            Cmp::Exact,
        ));
    }
    // Residual PageRank (Check_Size 0: no sweep): residuals move into the ranks and out to
    // the neighbours as f32 atomic adds.
    let residual: Vec<u32> = (0..n).map(|_| (0.01 + rng.unit() * 0.2).to_bits()).collect();
    let mut flags = vec![0u32; n];
    for &v in &frontier {
        flags[v as usize] = 1;
    }
    checks.push(atos_check(
        c,
        "atos_pr_worker",
        residual,
        (0..n).map(|_| rng.unit()).collect(),
        flags,
        &frontier,
        (1e-3, 0.85),
        Cmp::CloseBits,
    ));
    // Colouring's assignments: the smallest colour no neighbour has, then the check queued.
    let colours: Vec<u32> =
        (0..n).map(|_| if rng.below(4) == 0 { u32::MAX } else { rng.below(6) as u32 }).collect();
    let mut flags = vec![0u32; n];
    for &v in &frontier {
        flags[v as usize] = 1;
    }
    checks.push(atos_check(
        c,
        "atos_color_worker",
        colours,
        vec![0.0],
        flags,
        &frontier,
        (0.0, 0.0),
        Cmp::Exact,
    ));
}
