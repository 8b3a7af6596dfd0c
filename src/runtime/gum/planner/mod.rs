//! GUM's stealing planner (seed 001 §III-IV), pure functions of counts and costs: FSteal's
//! min-max problem ([`milp`]), Alg. 1's vertex ranges ([`ranges`]), OSteal's reduction tree
//! ([`reduction_tree`]) and Alg. 2 ([`osteal`]), the triggers t1..t4 ([`Triggers`]).
//! Nothing here touches a backend; the runtime feeds it what it measured and counted.

pub mod milp;
pub mod osteal;
pub mod ranges;
pub mod reduction_tree;

pub use milp::{
    SolveError, SolverLimits, StealPlan, makespan, makespan_with_ranges, solve_min_max,
};
pub use osteal::{MoveCost, OstealChoice, WorkerEstimate, choose_workers};
pub use ranges::{VertexRange, prefix_sums, select_ranges};
pub use reduction_tree::{ReductionTree, TreeError};

/// The thresholds of §V-B (Ex. 5 and 6). The paper gives no values; these defaults are
/// ours, stated with their reasons.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Triggers {
    /// t1: FSteal runs only if the busiest worker has at least this many active edges.
    /// Default 16384: below about a tenth of one wave of a V100 (80 SMs x 2048 threads)
    /// a kernel's time is its latency floor, which stealing cannot shorten.
    pub t1_min_max_edges: u64,
    /// t2: FSteal runs only if the busiest and idlest workers differ by at least this many
    /// edges. Default 8192, half of t1: smaller gaps do not repay a solve and a round trip.
    pub t2_min_imbalance_edges: u64,
    /// t3: OSteal (Alg. 2) runs only if the previous iteration took less than this, in
    /// picoseconds; while fewer than all workers own fragments it runs every iteration so
    /// that ownership is handed back when work grows. Default 500 us: the long tail's
    /// latency-bound iterations take tens of microseconds, busy ones milliseconds.
    pub t3_max_iteration_ps: u64,
    /// t4: vertices with in-degree above this are hubs whose adjacency lists every GPU
    /// caches up front (Ex. 6). Default 4096.
    pub t4_hub_in_degree: u32,
}

impl Default for Triggers {
    fn default() -> Self {
        Triggers {
            t1_min_max_edges: 16_384,
            t2_min_imbalance_edges: 8_192,
            t3_max_iteration_ps: 500_000_000,
            t4_hub_in_degree: 4_096,
        }
    }
}

impl Triggers {
    /// Checks the thresholds; an error names the option and the fix.
    pub fn check(&self) -> Result<(), String> {
        if self.t1_min_max_edges == 0 {
            return Err("--gum-t1 must be at least 1 edge (0 would solve a plan for an \
                        iteration with no work); the default is 16384"
                .into());
        }
        if self.t2_min_imbalance_edges > self.t1_min_max_edges.saturating_mul(1024) {
            return Err(format!(
                "--gum-t2 {} is over 1024 x --gum-t1 {}: FSteal could never run; lower t2",
                self.t2_min_imbalance_edges, self.t1_min_max_edges
            ));
        }
        if self.t4_hub_in_degree == 0 {
            return Err("--gum-t4 must be at least 1 (0 would cache every vertex's list on \
                        every GPU); the default is 4096"
                .into());
        }
        Ok(())
    }

    /// Whether FSteal runs for these per-worker loads (t1 and t2).
    pub fn fsteal_fires(&self, loads: &[u64]) -> bool {
        let max = loads.iter().copied().max().unwrap_or(0);
        let min = loads.iter().copied().min().unwrap_or(0);
        max >= self.t1_min_max_edges && max - min >= self.t2_min_imbalance_edges
    }

    /// Whether OSteal runs (t3), given the previous iteration's time and whether some
    /// fragments are owned by other workers now.
    pub fn osteal_fires(&self, previous_iteration_ps: Option<u64>, shrunk: bool) -> bool {
        shrunk || previous_iteration_ps.is_some_and(|t| t < self.t3_max_iteration_ps)
    }

    /// Hub vertices: in-degree above t4.
    pub fn hubs(&self, in_degree: &[u32]) -> Vec<bool> {
        in_degree.iter().map(|&d| d > self.t4_hub_in_degree).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_fire_as_documented() {
        let t =
            Triggers { t1_min_max_edges: 100, t2_min_imbalance_edges: 50, ..Default::default() };
        assert!(!t.fsteal_fires(&[99, 0]));
        assert!(t.fsteal_fires(&[100, 50]));
        assert!(!t.fsteal_fires(&[100, 51]));
        assert!(t.osteal_fires(Some(1), false));
        assert!(!t.osteal_fires(Some(t.t3_max_iteration_ps), false));
        assert!(t.osteal_fires(Some(t.t3_max_iteration_ps), true));
        assert!(!t.osteal_fires(None, false));
        assert_eq!(
            Triggers { t4_hub_in_degree: 2, ..t }.hubs(&[1, 2, 3]),
            vec![false, false, true]
        );
    }

    #[test]
    fn bad_thresholds_are_named() {
        let t = Triggers { t1_min_max_edges: 0, ..Default::default() };
        assert!(t.check().unwrap_err().contains("--gum-t1"));
        let t = Triggers { t4_hub_in_degree: 0, ..Default::default() };
        assert!(t.check().unwrap_err().contains("--gum-t4"));
        let t =
            Triggers { t1_min_max_edges: 1, t2_min_imbalance_edges: 2000, ..Default::default() };
        assert!(t.check().unwrap_err().contains("--gum-t2"));
        assert!(Triggers::default().check().is_ok());
    }
}
