//! The work counts the papers' multi-GPU findings are read from (issue 23 item 5) against an
//! independent count. On a tree every reached vertex has one path from the source, so its
//! value improves exactly once whatever the schedule: Atos's BFS visits and Groute's SSSP
//! work items each equal the reached vertices, and Groute's relaxations (edges visited) the
//! sum of their degrees, with and without the priority scheduling each finding compares, on
//! 1, 2 and 4 GPUs. A count that books a task twice, or misses the items of a remote GPU,
//! fails here. Both backends take these counts from the same device counters read by the
//! same host code (`AtosReport::visits`, `WorkReport::work_items`).

use std::collections::VecDeque;
use switchyard::algo::Algorithm;
use switchyard::driver::report::RunReport;
use switchyard::driver::{BackendSetup, RunSpec, RuntimeKind, SimSetup, run};
use switchyard::graph::generate::with_uniform_weights;
use switchyard::graph::{BuildOptions, Csr};
use switchyard::runtime::atos::AtosOptions;
use switchyard_sim::interconnect::Fidelity;
use switchyard_sim::topology::Topology;

/// A seeded random tree on `n` vertices (vertex `i > 0` hangs under a vertex below it),
/// plus a path of three vertices nothing in the tree reaches.
fn tree(n: u32) -> Csr {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut edges: Vec<(u32, u32)> = (1..n)
        .map(|i| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (i, ((state >> 33) % u64::from(i)) as u32)
        })
        .collect();
    edges.extend([(n, n + 1), (n + 1, n + 2)]);
    let g = Csr::from_edges(n + 3, &edges, None, false, BuildOptions::default()).expect("tree");
    with_uniform_weights(&g, 1, 64, 3).expect("weights")
}

/// Reached vertices from `source` and the sum of their degrees (a plain BFS).
fn reached(g: &Csr, source: u32) -> (u64, u64) {
    let mut seen = vec![false; g.num_vertices() as usize];
    let mut queue = VecDeque::from([source]);
    seen[source as usize] = true;
    let (mut vertices, mut degrees) = (0u64, 0u64);
    while let Some(v) = queue.pop_front() {
        vertices += 1;
        degrees += g.degree(v);
        for &w in g.neighbors(v) {
            if !seen[w as usize] {
                seen[w as usize] = true;
                queue.push_back(w);
            }
        }
    }
    (vertices, degrees)
}

fn validated(g: &Csr, spec: &RunSpec, case: &str) -> RunReport {
    let topology = Topology::bundled("dgx1-v100").expect("bundled");
    let setup = BackendSetup::Sim(SimSetup {
        topology,
        fidelity: Fidelity::Flow,
        trace: false,
        jitter_ps: 0,
    });
    let out = run(g, "tree", spec, &setup).unwrap_or_else(|e| panic!("{case}: {e}"));
    let v = out.report.validation.as_ref().expect("validated");
    assert!(v.is_ok(), "{case}: {v}");
    out.report
}

#[test]
fn atos_bfs_visits_equal_the_reached_vertices_on_a_tree() {
    let g = tree(3000);
    let (vertices, _) = reached(&g, 0);
    assert_eq!(vertices, 3000);
    for gpus in [1, 2, 4] {
        for priority in [None, Some((1, 1))] {
            let case = format!("{gpus} GPUs, priority {priority:?}");
            let spec = RunSpec {
                atos: AtosOptions { priority, ..AtosOptions::default() },
                partitioner: "random".into(),
                ..RunSpec::new(Algorithm::Bfs, RuntimeKind::Atos, gpus)
            };
            let report = validated(&g, &spec, &case);
            let atos = report.atos.as_ref().expect("atos report");
            assert_eq!(atos.visits, vertices, "{case}: {atos:?}");
            assert_eq!(atos.ideal_visits, vertices, "{case}");
            assert_eq!(report.work.work_items, vertices, "{case}");
        }
    }
}

#[test]
fn groute_sssp_work_items_equal_the_reached_vertices_on_a_tree() {
    let g = tree(3000);
    let (vertices, degrees) = reached(&g, 0);
    for gpus in [1, 2, 4] {
        for delta in [None, Some(16)] {
            let case = format!("{gpus} GPUs, priority delta {delta:?}");
            let mut spec = RunSpec {
                partitioner: "random".into(),
                ..RunSpec::new(Algorithm::Sssp, RuntimeKind::Groute, gpus)
            };
            spec.groute.priority_delta = delta;
            let report = validated(&g, &spec, &case);
            assert_eq!(report.work.work_items, vertices, "{case}");
            assert_eq!(report.work.edges_visited, degrees, "{case}");
            let groute = report.groute.as_ref().expect("groute report");
            assert_eq!(groute.priority_raises > 0, delta.is_some(), "{case}");
        }
    }
}
