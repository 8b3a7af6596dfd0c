//! The test harness for users' own algorithms: "run this on every topology and GPU count,
//! with N seeds" in one call. A failing case names the command-line-free reproduction:
//! the topology, GPU count and seed.

use super::{RunError, simulate};
use crate::backend::KernelRegistry;
use crate::backend::sim::SimConfig;
use crate::graph::Csr;
use crate::graph::partition::partitioner_by_name;
use crate::runtime::bsp::BspPrimitive;
use crate::runtime::bsp::{BspOptions, BspOutcome};
use switchyard_sim::topology::Topology;

/// One case of a harness run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Topology name.
    pub topology: String,
    /// GPUs used.
    pub gpus: u32,
    /// Seed (partitioner and simulator).
    pub seed: u64,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "topology={} gpus={} seed={}", self.topology, self.gpus, self.seed)
    }
}

/// A failed case: what went wrong and how to reproduce it.
#[derive(Debug, thiserror::Error)]
#[error("case {case} failed: {message} (reproduce this case alone with `harness.only(&case)`)")]
pub struct CaseFailure {
    /// The case.
    pub case: Case,
    /// What went wrong.
    pub message: String,
}

/// Which configurations to run.
#[derive(Clone, Debug)]
pub struct Harness {
    /// Machines to run on.
    pub topologies: Vec<Topology>,
    /// GPU counts; `None` runs every count from 1 to the topology's GPU count.
    pub gpu_counts: Option<Vec<u32>>,
    /// Seeds to run.
    pub seeds: std::ops::Range<u64>,
    /// Partitioner name.
    pub partitioner: String,
    /// Bulk-synchronous options.
    pub options: BspOptions,
}

impl Harness {
    /// Every bundled topology, every GPU count, `seeds` seeds, random partitioning.
    pub fn everywhere(seeds: u64) -> Result<Harness, RunError> {
        let topologies = switchyard_sim::topology::bundled_names()
            .iter()
            .map(|name| Topology::bundled(name))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| RunError::Options(e.to_string()))?;
        Ok(Harness {
            topologies,
            gpu_counts: None,
            seeds: 0..seeds,
            partitioner: "random".into(),
            options: BspOptions::default(),
        })
    }

    /// The same harness narrowed to one case (to reproduce a failure).
    pub fn only(&self, case: &Case) -> Harness {
        Harness {
            topologies: self
                .topologies
                .iter()
                .filter(|t| t.name == case.topology)
                .cloned()
                .collect(),
            gpu_counts: Some(vec![case.gpus]),
            seeds: case.seed..case.seed + 1,
            partitioner: self.partitioner.clone(),
            options: self.options,
        }
    }

    /// All cases this harness runs, in order.
    pub fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        for topology in &self.topologies {
            let max = topology.gpus.len() as u32;
            let counts: Vec<u32> = match &self.gpu_counts {
                Some(counts) => counts.iter().copied().filter(|&c| c >= 1 && c <= max).collect(),
                None => (1..=max).collect(),
            };
            for gpus in counts {
                for seed in self.seeds.clone() {
                    cases.push(Case { topology: topology.name.clone(), gpus, seed });
                }
            }
        }
        cases
    }

    /// Runs `primitive` (whose kernels are in `registry`) on `graph` in every case and
    /// calls `check` on each outcome; stops at the first failure.
    pub fn run(
        &self,
        graph: &Csr,
        registry: &KernelRegistry,
        primitive: &dyn BspPrimitive,
        mut check: impl FnMut(&Case, &BspOutcome) -> Result<(), String>,
    ) -> Result<usize, CaseFailure> {
        let cases = self.cases();
        for case in &cases {
            let fail = |message: String| CaseFailure { case: case.clone(), message };
            let topology = self
                .topologies
                .iter()
                .find(|t| t.name == case.topology)
                .ok_or_else(|| fail("topology vanished".into()))?;
            let partition = partitioner_by_name(&self.partitioner, case.seed)
                .and_then(|p| p.partition(graph, case.gpus))
                .map_err(|e| fail(e.to_string()))?;
            let config = SimConfig { seed: case.seed, ..SimConfig::default() };
            let (outcome, _) = simulate(
                graph,
                primitive,
                registry.clone(),
                topology,
                case.gpus,
                &partition.owner,
                &self.options,
                config,
            )
            .map_err(|e| fail(e.to_string()))?;
            check(case, &outcome).map_err(fail)?;
        }
        Ok(cases.len())
    }
}
