//! Whether an FSteal plan pays (seed 001 Ex. 5, "cover the overhead", in predicted time):
//! before solving, whether the most a plan can save covers the least it costs; after
//! solving, whether the plan's makespan with everything executing it costs beats not
//! stealing. What a plan costs beyond its edges: its decision (host work), a separate kernel
//! per stolen range (§V-A step 4) and two host round trips that every plan adds to its
//! superstep, whatever its size: the cut (the victims' prefix and cut kernels and the read
//! of their cuts, before the compute phase) and the return (the thieves' pair counts read,
//! the packages copied and merged, after it).

use super::planner::makespan_with_ranges;

/// What executing a plan costs beyond its edges, in ps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanOverhead {
    /// The decision (features, inference, the solve), charged as host work.
    pub decision_ps: f64,
    /// Each stolen range on its thief: the separate kernel and its count read.
    pub per_range_ps: f64,
    /// The cut and return round trips, once per plan.
    pub round_trips_ps: f64,
}

impl PlanOverhead {
    /// Whether a plan is worth solving: the most it can save, the busiest worker's predicted
    /// time (`own`, each active worker's own edges at its own cost) over a perfect balance,
    /// covers the least a plan costs (its decision, one stolen range and the round trips).
    pub fn worth_solving(&self, own: &[f64]) -> bool {
        if own.is_empty() {
            return false;
        }
        let alone = own.iter().copied().fold(0.0, f64::max);
        let balanced = own.iter().sum::<f64>() / own.len() as f64;
        alone - balanced >= self.decision_ps + self.per_range_ps + self.round_trips_ps
    }

    /// Whether a solved plan pays: its makespan (`cost` per edge, `edges[i][j]` of fragment
    /// `i` on worker `j`) with each stolen range's kernel, plus the round trips, beats
    /// `alone`, the busiest worker's predicted time without stealing. The decision is spent
    /// by then and not counted.
    pub fn pays(&self, cost: &[Vec<f64>], edges: &[Vec<u64>], alone: f64) -> bool {
        makespan_with_ranges(cost, edges, self.per_range_ps) + self.round_trips_ps < alone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OVERHEAD: PlanOverhead =
        PlanOverhead { decision_ps: 40.0, per_range_ps: 10.0, round_trips_ps: 43.0 };

    #[test]
    fn a_plan_saving_less_than_the_round_trips_is_not_taken() {
        // Two workers at 1 ps an edge locally, 2 remotely; worker 0 has 1000 edges, 1 none.
        let cost = vec![vec![1.0, 2.0], vec![2.0, 1.0]];
        let alone = 1000.0;
        // 300 stolen: worker 0 at 700, worker 1 at 600 + 10 for the range; saves 300.
        let good = vec![vec![700, 300], vec![0, 0]];
        assert!(OVERHEAD.pays(&cost, &good, alone));
        // 25 stolen: 975, saving 25 (15 with the range's kernel), under the 43 of round trips:
        // it would pay if the round trips were not counted.
        let small = vec![vec![975, 25], vec![0, 0]];
        assert!(makespan_with_ranges(&cost, &small, 10.0) < alone);
        assert!(!OVERHEAD.pays(&cost, &small, alone));
        assert!(PlanOverhead { round_trips_ps: 0.0, ..OVERHEAD }.pays(&cost, &small, alone));
    }

    #[test]
    fn worth_solving_needs_the_imbalance_to_cover_decision_range_and_round_trips() {
        // Busiest 200 over a balance of 110: 90 to save against 40 + 10 + 43 = 93.
        assert!(!OVERHEAD.worth_solving(&[200.0, 20.0]));
        assert!(PlanOverhead { round_trips_ps: 40.0, ..OVERHEAD }.worth_solving(&[200.0, 20.0]));
        assert!(OVERHEAD.worth_solving(&[300.0, 20.0]));
        assert!(!OVERHEAD.worth_solving(&[]));
        assert!(!OVERHEAD.worth_solving(&[500.0]), "one worker has nobody to balance with");
    }
}
