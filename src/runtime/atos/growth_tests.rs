//! Queues sized from the graph grow on overflow and the run gives the same result; a
//! capacity set by hand stops the run with advice instead.

use super::{AppInit, AtosApp, AtosGraph, AtosOptions, MAX_QUEUE_GROWTHS, kernels, run};
use crate::algo::bfs::Bfs;
use crate::backend::sim::{SimBackend, SimConfig};
use crate::driver::builtin_kernels;
use crate::graph::Csr;
use crate::graph::generate::{GeneratorSpec, generate};
use switchyard_sim::topology::Topology;

/// BFS whose default queues hold only `capacity` items.
struct Tiny {
    bfs: Bfs,
    capacity: u64,
}

impl AtosApp for Tiny {
    fn label(&self) -> &'static str {
        self.bfs.label()
    }
    fn kernels(&self) -> kernels::AtosKernels {
        self.bfs.kernels()
    }
    fn init(&self, ag: &AtosGraph, g: u32) -> AppInit {
        self.bfs.init(ag, g)
    }
    fn queue_capacity(&self, _ag: &AtosGraph, _g: u32) -> u64 {
        self.capacity
    }
    fn ideal_visits(&self, graph: &Csr) -> (u64, &'static str) {
        self.bfs.ideal_visits(graph)
    }
}

fn levels(g: &Csr, source: u32) -> Vec<u32> {
    let mut level = vec![u32::MAX; g.num_vertices() as usize];
    level[source as usize] = 0;
    let mut frontier = vec![source];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for v in frontier {
            for &t in g.neighbors(v) {
                if level[t as usize] == u32::MAX {
                    level[t as usize] = level[v as usize] + 1;
                    next.push(t);
                }
            }
        }
        frontier = next;
    }
    level
}

fn backend() -> SimBackend {
    let topology = Topology::bundled("dgx-station-v100x4").expect("bundled topology");
    SimBackend::new(topology, 1, builtin_kernels(), SimConfig::default()).expect("a simulator")
}

#[test]
fn default_sized_queues_grow_on_overflow_and_the_levels_are_exact() {
    let g = generate(&GeneratorSpec::parse("grid2d:w=40,h=40,drop=0.1,seed=2").expect("spec"))
        .expect("generates");
    let source = 820;
    let app = Tiny { bfs: Bfs { source }, capacity: 32 };
    let owner = vec![0u32; g.num_vertices() as usize];
    let options = AtosOptions::default();
    let out = run(&mut backend(), &g, &owner, 1, &app, &options, 7).expect("grows and runs");
    let atos = out.atos.as_ref().expect("an atos report");
    assert!(atos.queue_growths >= 1 && atos.queue_growths <= MAX_QUEUE_GROWTHS, "{atos:?}");
    assert_eq!(atos.queue_capacity[0], 32 * 4u64.pow(atos.queue_growths));
    assert_eq!(out.values, levels(&g, source));
}

#[test]
fn a_capacity_set_by_hand_is_kept_and_its_overflow_names_a_larger_one() {
    let g = generate(&GeneratorSpec::parse("grid2d:w=40,h=40,drop=0.1,seed=2").expect("spec"))
        .expect("generates");
    let app = Tiny { bfs: Bfs { source: 820 }, capacity: 8 };
    let owner = vec![0u32; g.num_vertices() as usize];
    let options = AtosOptions { queue_capacity: Some(8), ..AtosOptions::default() };
    let err = run(&mut backend(), &g, &owner, 1, &app, &options, 7).expect_err("overflows");
    let text = err.to_string();
    assert!(
        text.contains("queue overflow") && text.contains("--atos-queue-capacity (e.g. 32)"),
        "{text}"
    );
    assert!(!text.contains("after growing"), "{text}");
}
