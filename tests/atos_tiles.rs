//! Atos's on-chip tiles (`runtime::atos::tiles`) on the simulator: exact BFS levels against
//! petgraph on road-like graphs (paths, grids with holes, several components, a real road
//! network), on one GPU and on several (each GPU the tiles of its part), `auto` taking tiles
//! only where they pay, a layout that covers every vertex and arc once and keeps each tile on
//! one GPU, determinism, and the options refused with what to choose.

use switchyard::algo::{Algorithm, AlgorithmParams};
use switchyard::driver::{BackendSetup, RunOutput, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::Csr;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::load::{LoadOptions, load_graph};
use switchyard::graph::reference::bfs_levels;
use switchyard::runtime::atos::AtosOptions;
use switchyard::runtime::atos::tiles::{REMOTE, TileLayout, TileMode};
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

fn graph(spec: &str) -> Csr {
    generate(&GeneratorSpec::parse(spec).expect("spec")).expect("generates")
}

fn luxembourg() -> Csr {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphs/luxembourg_osm.mtx");
    load_graph(&path, &LoadOptions::default()).expect("luxembourg loads").csr
}

fn machine() -> BackendSetup {
    let topology = Topology::bundled("dgx-station-v100x4").expect("bundled topology");
    BackendSetup::Sim(SimSetup { topology, fidelity: Fidelity::Flow, trace: false, jitter_ps: 0 })
}

fn spec(gpus: u32, source: u32, atos: AtosOptions, seed: u64) -> RunSpec {
    RunSpec {
        params: AlgorithmParams { source, ..AlgorithmParams::default() },
        seed,
        atos,
        command_line: vec!["atos_tiles".into()],
        ..RunSpec::new(Algorithm::Bfs, RuntimeKind::Atos, gpus)
    }
}

fn tiles(mode: TileMode, tile_vertices: u32) -> AtosOptions {
    AtosOptions { tiles: mode, tile_vertices, ..AtosOptions::default() }
}

/// Runs BFS on one simulated GPU and checks the levels against petgraph's BFS.
fn run_exact(g: &Csr, name: &str, source: u32, o: AtosOptions) -> RunOutput {
    let out = run(g, name, &spec(1, source, o, 5), &machine())
        .unwrap_or_else(|e| panic!("{name} from {source}: {e}"));
    let expected = bfs_levels(g, source).expect("reference BFS");
    assert_eq!(out.values, expected, "{name} from {source}: levels differ from petgraph's");
    let v = out.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{name}: {v}");
    out
}

fn took_tiles(out: &RunOutput) -> bool {
    out.report.atos.as_ref().expect("an atos report").tiles.is_some()
}

#[test]
fn tiles_give_petgraphs_levels_on_road_like_graphs() {
    let cases = [
        ("grid2d:w=2000,h=1", 0), // a path: one level a round, two tiles
        ("grid2d:w=2000,h=1", 1999),
        ("grid2d:w=48,h=40,drop=0.1,seed=2", 977),
        ("grid2d:w=60,h=60,drop=0.35,seed=4", 0), // holes that cut it into components
        ("grid2d:w=120,h=90,drop=0.1,seed=1", 5000),
    ];
    for (name, source) in cases {
        let g = graph(name);
        // Small tiles: many tiles and many messages between them.
        for tile_vertices in [16, 1024] {
            let out = run_exact(&g, name, source, tiles(TileMode::On, tile_vertices));
            let atos = out.report.atos.as_ref().expect("an atos report");
            let t = atos.tiles.as_ref().expect("a tile report");
            assert!(atos.extra_work >= 1.0, "{name}: {atos:?}");
            if tile_vertices == 16 && g.num_vertices() > 100 {
                assert!(t.tiles > 10 && t.messages > 0, "{name}: {t:?}");
            }
        }
    }
    let lux = luxembourg();
    for source in [0, 57_000] {
        let out = run_exact(&lux, "luxembourg_osm", source, AtosOptions::default());
        assert!(took_tiles(&out), "auto takes tiles on a road network on one GPU");
    }
}

#[test]
fn auto_takes_tiles_only_for_road_like_graphs_that_fit() {
    let road = graph("grid2d:w=48,h=40,drop=0.1,seed=2");
    let out = run_exact(&road, "grid", 3, AtosOptions::default());
    assert!(took_tiles(&out));
    assert!(out.report.runtime_label().contains("+tiles"), "{}", out.report.runtime_label());
    // A scale-free graph (many arcs a vertex) stays on the workers.
    let rmat = graph("rmat:scale=11,ef=8,seed=3");
    assert!(!took_tiles(&run_exact(&rmat, "rmat", 0, AtosOptions::default())));
    // Off is off.
    assert!(!took_tiles(&run_exact(&road, "grid", 3, tiles(TileMode::Off, 1024))));
    // Two GPUs: tiles on the road grid, the workers on R-MAT; both validated.
    let two = run_gpus(&road, "grid", 2, 3, AtosOptions::default(), "metis");
    let t = two.report.atos.as_ref().expect("atos").tiles.as_ref().expect("tiles at 2 GPUs");
    assert_eq!(t.per_gpu.len(), 2, "{t:?}");
    assert!(t.per_gpu.iter().all(|g| g.tiles > 0), "{t:?}");
    let out = run_gpus(&rmat, "rmat", 2, 0, AtosOptions::default(), "metis");
    let atos = out.report.atos.as_ref().expect("atos");
    assert!(atos.tiles.is_none());
    let why = atos.tiles_declined.as_deref().expect("auto says why not");
    assert!(why.contains("not road-like"), "{why}");
}

/// Runs BFS on `gpus` simulated GPUs partitioned by `partitioner` and checks the levels.
fn run_gpus(g: &Csr, name: &str, gpus: u32, source: u32, o: AtosOptions, part: &str) -> RunOutput {
    let s = RunSpec { partitioner: part.into(), ..spec(gpus, source, o, 5) };
    let out = run(g, name, &s, &machine())
        .unwrap_or_else(|e| panic!("{name} from {source} on {gpus} GPUs: {e}"));
    let expected = bfs_levels(g, source).expect("reference BFS");
    assert_eq!(out.values, expected, "{name} from {source} on {gpus} GPUs: levels differ");
    let v = out.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{name} on {gpus} GPUs: {v}");
    out
}

#[test]
fn tiles_on_several_gpus_give_petgraphs_levels() {
    let cases = [
        ("grid2d:w=2000,h=1", 0, 1024), // a path
        ("grid2d:w=2000,h=1", 1999, 64),
        ("grid2d:w=60,h=60,drop=0.35,seed=4", 0, 16), // holes: several components
        ("grid2d:w=120,h=90,drop=0.1,seed=1", 5000, 64),
    ];
    for (name, source, tile_vertices) in cases {
        let g = graph(name);
        for gpus in [2, 3, 4] {
            for part in ["metis", "random"] {
                let out =
                    run_gpus(&g, name, gpus, source, tiles(TileMode::On, tile_vertices), part);
                let atos = out.report.atos.as_ref().expect("an atos report");
                let t = atos.tiles.as_ref().expect("a tile report");
                assert_eq!(t.per_gpu.len(), gpus as usize, "{name}: {t:?}");
                let sum: u32 = t.per_gpu.iter().map(|p| p.tiles).sum();
                assert_eq!(sum, t.tiles, "{name}: {t:?}");
                let crossed: u64 = t.per_gpu.iter().map(|p| p.cross_gpu_messages).sum();
                assert_eq!(crossed, t.cross_gpu_messages, "{name}: {t:?}");
                assert!(t.cross_gpu_arcs > 0, "{name} on {gpus} GPUs ({part}): {t:?}");
                assert_eq!(out.report.atos.as_ref().unwrap().per_gpu.len(), gpus as usize);
            }
        }
    }
    let lux = luxembourg();
    for gpus in [2, 3, 4] {
        let out = run_gpus(&lux, "luxembourg_osm", gpus, 1, AtosOptions::default(), "metis");
        let t = out.report.atos.as_ref().unwrap().tiles.as_ref().expect("auto takes tiles");
        assert!(t.cross_gpu_messages > 0, "{t:?}");
    }
}

#[test]
fn the_layout_of_several_gpus_keeps_each_tile_on_one_gpu() {
    let g = graph("grid2d:w=70,h=50,drop=0.2,seed=9");
    let n = g.num_vertices() as usize;
    let owner: Vec<u32> = (0..n as u32).map(|v| (v * 7 / 3) % 3).collect();
    let layout = TileLayout::build_parts(&g, &owner, &[64, 32, 100]);
    assert_eq!(layout.gpus(), 3);
    let mut old_of = vec![0u32; n];
    for (old, &new) in layout.new_of.iter().enumerate() {
        old_of[new as usize] = old as u32;
    }
    let mut cross = 0;
    for gpu in 0..3u32 {
        let cap = [64, 32, 100][gpu as usize];
        for t in layout.gpu_tiles[gpu as usize]..layout.gpu_tiles[gpu as usize + 1] {
            let (a, b) = (layout.start[t as usize], layout.start[t as usize + 1]);
            assert!(a < b && b - a <= cap, "tile {t} of gpu {gpu}: {}", b - a);
            for new in a..b {
                assert_eq!(owner[old_of[new as usize] as usize], gpu, "tile {t} spans GPUs");
            }
        }
        let v = layout.gpu_vertices(gpu);
        let want = owner.iter().filter(|&&o| o == gpu).count() as u32;
        assert_eq!(v.end - v.start, want, "gpu {gpu}'s vertices");
    }
    for v in 0..n as u32 {
        cross += g.neighbors(v).iter().filter(|&&w| owner[w as usize] != owner[v as usize]).count();
    }
    assert_eq!(cross as u64, layout.cross_gpu_arcs);
    // One part is the one-GPU layout.
    assert_eq!(TileLayout::build_parts(&g, &vec![0; n], &[64]), TileLayout::build(&g, 64));
}

#[test]
fn the_layout_holds_every_vertex_and_arc_once() {
    let g = graph("grid2d:w=70,h=50,drop=0.2,seed=9");
    let layout = TileLayout::build(&g, 64);
    let n = g.num_vertices() as usize;
    let mut old_of = vec![u32::MAX; n];
    for (old, &new) in layout.new_of.iter().enumerate() {
        assert_eq!(old_of[new as usize], u32::MAX, "two vertices numbered {new}");
        old_of[new as usize] = old as u32;
    }
    assert!(layout.max_vertices <= 64);
    let mut remote = 0;
    for t in 0..layout.tiles() as usize {
        let (a, b) = (layout.start[t], layout.start[t + 1]);
        assert!(a < b, "tile {t} is empty");
        for new in a..b {
            let old = old_of[new as usize];
            let arcs = &layout.cols
                [layout.rows[new as usize] as usize..layout.rows[new as usize + 1] as usize];
            let targets: Vec<u32> = arcs
                .iter()
                .map(|&c| {
                    let w = if c & REMOTE != 0 {
                        remote += 1;
                        let w = c & !REMOTE;
                        assert!(!(a..b).contains(&w), "a remote arc inside tile {t}");
                        w
                    } else {
                        a + c
                    };
                    old_of[w as usize]
                })
                .collect();
            assert_eq!(targets, g.neighbors(old), "vertex {old}'s arcs");
        }
    }
    assert_eq!(remote, layout.remote_arcs);
    // The same graph gives the same layout.
    assert_eq!(layout, TileLayout::build(&g, 64));
}

#[test]
fn a_tile_run_is_a_pure_function_of_its_inputs() {
    let g = graph("grid2d:w=90,h=40,drop=0.1,seed=3");
    let json = |o: &RunOutput| serde_json::to_string(&o.report).expect("serialises");
    for gpus in [1, 2, 3] {
        let s =
            RunSpec { partitioner: "metis".into(), ..spec(gpus, 7, tiles(TileMode::On, 32), 11) };
        let a = run(&g, "grid", &s, &machine()).expect("runs");
        let b = run(&g, "grid", &s, &machine()).expect("runs");
        assert_eq!(json(&a), json(&b), "{gpus} GPUs");
    }
}

#[test]
fn tile_options_that_cannot_run_are_refused_with_what_to_choose() {
    let road = graph("grid2d:w=48,h=40,drop=0.1,seed=2");
    let err = |s: &RunSpec, g: &Csr| match run(g, "g", s, &machine()) {
        Ok(_) => panic!("{:?} was accepted", s.atos),
        Err(e) => e.to_string(),
    };
    // Several GPUs without a peer path between every pair (two nodes over InfiniBand).
    let ib = Topology::bundled("summit-ib-x8").expect("bundled topology");
    let ib = BackendSetup::Sim(SimSetup {
        topology: ib,
        fidelity: Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let e = match run(&road, "g", &spec(8, 0, tiles(TileMode::On, 1024), 1), &ib) {
        Ok(_) => panic!("tiles over InfiniBand were accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("--atos-tiles on") && e.contains("peer access") && e.contains("auto or off"),
        "{e}"
    );
    // Auto there: the workers, validated.
    let out = run(&road, "g", &spec(8, 0, AtosOptions::default(), 1), &ib).expect("runs");
    assert!(!took_tiles(&out));
    let why = out.report.atos.as_ref().and_then(|a| a.tiles_declined.as_deref()).expect("why");
    assert!(why.contains("peer access"), "{why}");
    assert_eq!(out.values, bfs_levels(&road, 0).expect("reference"));
    let e = err(&spec(1, 0, tiles(TileMode::On, 0), 1), &road);
    assert!(e.contains("--atos-tile-vertices 0") && e.contains("1024"), "{e}");
    // A graph too large for the 80 SMs' shared memory (tiles grow to fit the SMs, and then
    // their rows do not fit a CTA).
    let big = graph("grid2d:w=1000,h=1000");
    let e = err(&spec(1, 0, tiles(TileMode::On, 1024), 1), &big);
    assert!(e.contains("--atos-tiles on") && e.contains("do not fit"), "{e}");
    // Two GPUs halve it and still do not fit: the message names more GPUs.
    let e = err(&spec(2, 0, tiles(TileMode::On, 1024), 1), &big);
    assert!(e.contains("gpu0") && e.contains("do not fit") && e.contains("more GPUs"), "{e}");
    let e =
        err(&spec(1, 0, AtosOptions { permute_ids: true, ..tiles(TileMode::On, 1024) }, 1), &road);
    assert!(e.contains("--atos-permute"), "{e}");
}

#[test]
fn a_full_inbox_stops_the_run_with_every_refused_message_counted() {
    let g = graph("grid2d:w=60,h=60,drop=0.1,seed=4");
    let o = AtosOptions { queue_capacity: Some(1), ..tiles(TileMode::On, 16) };
    let e = match run(&g, "grid", &spec(1, 0, o, 1), &machine()) {
        Ok(_) => panic!("inboxes of one entry held every message"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("inboxes of 1 entries refused") && e.contains("--atos-queue-capacity"),
        "{e}"
    );
    // Large enough, the same run validates.
    let o = AtosOptions { queue_capacity: Some(4096), ..tiles(TileMode::On, 16) };
    run_exact(&g, "grid", 0, o);
}
