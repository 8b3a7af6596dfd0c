//! FSteal's min-max problem (GUM §III-A, Eq. 1): choose `x_ij`, the active edges of GPU `i`
//! that GPU `j` processes, minimising `z` with `z >= sum_i c_ij x_ij` for every worker `j`
//! and `sum_j x_ij = l_i` for every fragment `i`.
//!
//! The paper solves the MILP with SCIP and rounds a fractional solution up (§III-C). Here
//! the linear relaxation is solved by `good_lp` with `microlp`, a pure-Rust simplex (no C
//! library to build or find at run time; the n x n problem has n^2 + 1 variables, tiny for
//! a simplex), then rounded up with the row sums kept exact ([`round_up_rows`]). A cost of
//! `f64::INFINITY` forbids a pair (an evicted worker, OSteal §V-A step 3).
//!
//! Guards: at most [`SolverLimits::max_workers`] workers (a size guard, deterministic) and
//! a wall-clock time limit handed to the solver (a safety net only: a relaxation of 8 x 8
//! solves in well under a millisecond). Either failing is a [`SolveError`]; the runtime's
//! documented fallback is no stealing that iteration, recorded in the run report.

use good_lp::{
    Expression, ProblemVariables, Solution, SolverModel, Variable, WithTimeLimit, microlp, variable,
};

/// The guards of one solve.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SolverLimits {
    /// Largest number of workers (GPUs) the solver is asked about.
    pub max_workers: usize,
    /// Wall-clock limit handed to the solver, in milliseconds.
    pub time_limit_ms: u64,
}

impl Default for SolverLimits {
    fn default() -> Self {
        SolverLimits { max_workers: 64, time_limit_ms: 1000 }
    }
}

/// Why no plan came out.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// More workers than the size guard allows.
    #[error(
        "the stealing problem has {workers} workers, more than the solver's guard of {max}; \
         raise --gum-solver-max-workers or run on fewer GPUs"
    )]
    TooLarge {
        /// Workers in the problem.
        workers: usize,
        /// The guard.
        max: usize,
    },
    /// The inputs do not describe a problem (shapes, negative or NaN costs).
    #[error("malformed stealing problem: {0}")]
    Malformed(String),
    /// A fragment has edges but no worker may process them.
    #[error("fragment {fragment} has {edges} active edges and no worker may process them")]
    NoWorker {
        /// The fragment.
        fragment: usize,
        /// Its active edges.
        edges: u64,
    },
    /// The solver failed or ran out of time.
    #[error("the LP solver failed: {0}")]
    Solver(String),
}

/// A solved stealing problem.
#[derive(Clone, Debug, PartialEq)]
pub struct StealPlan {
    /// `edges[i][j]`: edges of fragment `i` that worker `j` processes (rows sum to the loads).
    pub edges: Vec<Vec<u64>>,
    /// The relaxation's optimum `z` (a lower bound of the integer optimum), in cost units.
    pub relaxed_makespan: f64,
    /// `z` of the rounded plan, in cost units.
    pub makespan: f64,
}

/// The makespan `max_j sum_i cost[i][j] * edges[i][j]` of an integer plan (forbidden pairs
/// with no edges cost nothing).
pub fn makespan(cost: &[Vec<f64>], edges: &[Vec<u64>]) -> f64 {
    let n = cost.len();
    (0..n)
        .map(|j| {
            (0..n)
                .filter(|&i| edges[i][j] > 0)
                .map(|i| cost[i][j] * edges[i][j] as f64)
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// The makespan of an integer plan when every stolen range (an `edges[i][j] > 0` with
/// `i != j`) also costs its worker `per_range` (its separate kernel, §V-A step 4, which
/// the paper leaves outside the cost model).
pub fn makespan_with_ranges(cost: &[Vec<f64>], edges: &[Vec<u64>], per_range: f64) -> f64 {
    let n = cost.len();
    (0..n)
        .map(|j| {
            (0..n)
                .filter(|&i| edges[i][j] > 0)
                .map(|i| cost[i][j] * edges[i][j] as f64 + if i == j { 0.0 } else { per_range })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// Solves the min-max problem of Eq. 1 for `cost` (n x n, per edge, `INFINITY` = forbidden)
/// and `loads` (active edges per fragment).
pub fn solve_min_max(
    cost: &[Vec<f64>],
    loads: &[u64],
    limits: &SolverLimits,
) -> Result<StealPlan, SolveError> {
    let n = loads.len();
    if cost.len() != n || cost.iter().any(|row| row.len() != n) {
        return Err(SolveError::Malformed(format!(
            "{n} loads need an {n} x {n} cost matrix, got {} rows",
            cost.len()
        )));
    }
    if let Some((i, j)) = pairs(n).find(|&(i, j)| cost[i][j].is_nan() || cost[i][j] <= 0.0) {
        return Err(SolveError::Malformed(format!(
            "cost[{i}][{j}] = {} must be positive (or infinite to forbid the pair)",
            cost[i][j]
        )));
    }
    if n > limits.max_workers {
        return Err(SolveError::TooLarge { workers: n, max: limits.max_workers });
    }
    if let Some(i) = (0..n).find(|&i| loads[i] > 0 && cost[i].iter().all(|c| c.is_infinite())) {
        return Err(SolveError::NoWorker { fragment: i, edges: loads[i] });
    }
    let mut edges = vec![vec![0u64; n]; n];
    if loads.iter().all(|&l| l == 0) {
        return Ok(StealPlan { edges, relaxed_makespan: 0.0, makespan: 0.0 });
    }
    // Scale both to order one: the simplex's tolerances are absolute.
    let load_scale = *loads.iter().max().unwrap_or(&1) as f64;
    let cost_scale = pairs(n)
        .map(|(i, j)| cost[i][j])
        .filter(|c| c.is_finite())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let allowed = |i: usize, j: usize| loads[i] > 0 && cost[i][j].is_finite();
    let mut vars = ProblemVariables::new();
    let z = vars.add(variable().min(0.0));
    let x: Vec<Vec<Option<Variable>>> = (0..n)
        .map(|i| (0..n).map(|j| allowed(i, j).then(|| vars.add(variable().min(0.0)))).collect())
        .collect();
    let mut model =
        vars.minimise(z).using(microlp).with_time_limit(limits.time_limit_ms as f64 / 1000.0);
    for (i, row) in x.iter().enumerate() {
        if loads[i] == 0 {
            continue;
        }
        let sum: Expression = row.iter().flatten().copied().sum();
        model = model.with(sum.eq(loads[i] as f64 / load_scale));
    }
    for j in 0..n {
        let column: Expression =
            (0..n).filter_map(|i| x[i][j].map(|v| (cost[i][j] / cost_scale) * v)).sum();
        model = model.with(column.leq(z));
    }
    let solution = model.solve().map_err(|e| SolveError::Solver(e.to_string()))?;
    let relaxed: Vec<Vec<f64>> = x
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| v.map_or(0.0, |v| (solution.value(v) * load_scale).max(0.0)))
                .collect()
        })
        .collect();
    let relaxed_makespan = solution.value(z) * load_scale * cost_scale;
    for i in 0..n {
        if loads[i] > 0 {
            edges[i] = round_up_rows(&relaxed[i], loads[i], i, |j| allowed(i, j));
        }
    }
    let makespan = makespan(cost, &edges);
    Ok(StealPlan { edges, relaxed_makespan, makespan })
}

/// Rounds one row of a fractional plan to integers that sum to `load` exactly (§III-C:
/// "we round up the results"): every allowed entry other than an absorbing one is rounded
/// up; the absorbing entry (the fragment's own GPU when it may work, else the largest
/// allowed entry) takes what is left. Where the round-ups exceed the load, the entries
/// rounded up the most give one edge back each, in turn.
pub fn round_up_rows(
    relaxed: &[f64],
    load: u64,
    own: usize,
    allowed: impl Fn(usize) -> bool,
) -> Vec<u64> {
    let n = relaxed.len();
    let mut out = vec![0u64; n];
    let columns: Vec<usize> = (0..n).filter(|&j| allowed(j)).collect();
    let Some(&first) = columns.first() else { return out };
    let absorber = if allowed(own) {
        own
    } else {
        columns
            .iter()
            .copied()
            .fold(first, |best, j| if relaxed[j] > relaxed[best] { j } else { best })
    };
    // A solver's zero can come back as 1e-12: round up what is above noise only.
    const NOISE: f64 = 1e-6;
    let mut others = 0u64;
    for &j in columns.iter().filter(|&&j| j != absorber) {
        out[j] = ((relaxed[j] - NOISE).max(0.0).ceil() as u64).min(load);
        others += out[j];
    }
    let mut excess = others.saturating_sub(load);
    if excess > 0 {
        // Give back from the entries rounded up the most (ties: lower column first).
        let mut order: Vec<usize> =
            columns.iter().copied().filter(|&j| j != absorber && out[j] > 0).collect();
        order.sort_by(|&a, &b| {
            let up = |j: usize| out[j] as f64 - relaxed[j];
            up(b).total_cmp(&up(a)).then(a.cmp(&b))
        });
        while excess > 0 {
            for &j in &order {
                if excess > 0 && out[j] > 0 {
                    out[j] -= 1;
                    excess -= 1;
                }
            }
        }
        others = load;
    }
    out[absorber] = load - others.min(load);
    out
}

fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (0..n).map(move |j| (i, j)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The integer optimum by enumeration (tiny instances only): every way to split each
    /// row's load over its allowed columns.
    fn brute_force(cost: &[Vec<f64>], loads: &[u64]) -> f64 {
        fn splits(load: u64, columns: &[usize], n: usize) -> Vec<Vec<u64>> {
            let Some((&last, rest)) = columns.split_last() else {
                return if load == 0 { vec![vec![0; n]] } else { vec![] };
            };
            let mut out = Vec::new();
            for take in 0..=load {
                for mut row in splits(load - take, rest, n) {
                    row[last] = take;
                    out.push(row);
                }
            }
            out
        }
        let n = loads.len();
        let rows: Vec<Vec<Vec<u64>>> = (0..n)
            .map(|i| {
                let cols: Vec<usize> = (0..n).filter(|&j| cost[i][j].is_finite()).collect();
                splits(loads[i], &cols, n)
            })
            .collect();
        let mut best = f64::INFINITY;
        let mut pick = vec![0usize; n];
        loop {
            let plan: Vec<Vec<u64>> = (0..n).map(|i| rows[i][pick[i]].clone()).collect();
            best = best.min(makespan(cost, &plan));
            let mut k = 0;
            while k < n {
                pick[k] += 1;
                if pick[k] < rows[k].len() {
                    break;
                }
                pick[k] = 0;
                k += 1;
            }
            if k == n {
                return best;
            }
        }
    }

    fn instance(max_n: usize, max_load: u64) -> impl Strategy<Value = (Vec<Vec<f64>>, Vec<u64>)> {
        (1..=max_n).prop_flat_map(move |n| {
            (
                proptest::collection::vec(
                    proptest::collection::vec(
                        prop_oneof![8 => (1u32..=20).prop_map(f64::from), 1 => Just(f64::INFINITY)],
                        n,
                    ),
                    n,
                ),
                proptest::collection::vec(0..=max_load, n),
            )
                .prop_map(|(mut cost, loads)| {
                    // Every fragment may at least work on itself.
                    for (i, row) in cost.iter_mut().enumerate() {
                        if row[i].is_infinite() {
                            row[i] = 5.0;
                        }
                    }
                    (cost, loads)
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Feasible: rows sum to the loads, forbidden pairs get nothing, and the reported
        /// makespan is the plan's.
        #[test]
        fn plans_are_feasible((cost, loads) in instance(6, 1_000_000)) {
            let plan = solve_min_max(&cost, &loads, &SolverLimits::default()).unwrap();
            for i in 0..loads.len() {
                prop_assert_eq!(plan.edges[i].iter().sum::<u64>(), loads[i]);
                for (c, &x) in cost[i].iter().zip(&plan.edges[i]) {
                    if c.is_infinite() {
                        prop_assert_eq!(x, 0);
                    }
                }
            }
            prop_assert!((plan.makespan - makespan(&cost, &plan.edges)).abs() < 1e-9);
        }

        /// Optimal: the relaxation is a lower bound of the integer optimum found by brute
        /// force, the rounded plan is no better than it, and rounding loses at most one edge
        /// per entry and column (the bound of rounding up).
        #[test]
        fn relaxation_bounds_the_brute_force_optimum((cost, loads) in instance(3, 5)) {
            let plan = solve_min_max(&cost, &loads, &SolverLimits::default()).unwrap();
            let best = brute_force(&cost, &loads);
            let n = loads.len() as f64;
            let cmax = cost.iter().flatten().filter(|c| c.is_finite()).fold(0.0, |a: f64, &b| a.max(b));
            prop_assert!(plan.relaxed_makespan <= best + 1e-6, "{} > {}", plan.relaxed_makespan, best);
            prop_assert!(plan.makespan >= best - 1e-6);
            prop_assert!(plan.makespan <= plan.relaxed_makespan + n * n * cmax + 1e-6);
        }

        /// Rounding keeps every row's sum, never goes negative and moves each entry by less
        /// than the row's number of columns.
        #[test]
        fn rounding_keeps_sums(parts in proptest::collection::vec(0.0f64..1000.0, 1..8), own in 0usize..8) {
            let load = parts.iter().sum::<f64>().round() as u64;
            let total: f64 = parts.iter().sum();
            let relaxed: Vec<f64> = parts.iter().map(|p| p * load as f64 / total.max(1e-9)).collect();
            let own = own % relaxed.len();
            let out = round_up_rows(&relaxed, load, own, |_| true);
            prop_assert_eq!(out.iter().sum::<u64>(), load);
            for (o, r) in out.iter().zip(&relaxed) {
                prop_assert!((*o as f64 - r).abs() <= relaxed.len() as f64 + 1e-6);
            }
        }
    }

    #[test]
    fn balances_two_equal_workers() {
        let cost = vec![vec![1.0, 2.0], vec![2.0, 1.0]];
        let plan = solve_min_max(&cost, &[900, 0], &SolverLimits::default()).unwrap();
        // z = 900 - x = 2x  =>  x = 300 edges stolen by GPU 1.
        assert_eq!(plan.edges[0], vec![600, 300]);
        assert!((plan.relaxed_makespan - 600.0).abs() < 1e-6);
    }

    #[test]
    fn forbidden_workers_get_nothing_and_errors_are_clear() {
        let inf = f64::INFINITY;
        let cost = vec![vec![inf, 1.0], vec![inf, 1.0]];
        let plan = solve_min_max(&cost, &[10, 10], &SolverLimits::default()).unwrap();
        assert_eq!(plan.edges, vec![vec![0, 10], vec![0, 10]]);
        let err = solve_min_max(&[vec![inf]], &[3], &SolverLimits::default()).unwrap_err();
        assert_eq!(err, SolveError::NoWorker { fragment: 0, edges: 3 });
        let limits = SolverLimits { max_workers: 1, ..Default::default() };
        let err = solve_min_max(&cost, &[1, 1], &limits).unwrap_err();
        assert!(err.to_string().contains("more than the solver's guard of 1"), "{err}");
        let err = solve_min_max(&[vec![0.0]], &[1], &SolverLimits::default()).unwrap_err();
        assert!(err.to_string().contains("must be positive"), "{err}");
    }

    #[test]
    fn every_stolen_range_costs_its_thief() {
        let cost = vec![vec![1.0, 2.0], vec![2.0, 1.0]];
        // Worker 1 takes 10 of fragment 0's edges: 10 x 2 + 90 x 1 = 110, plus one range.
        let edges = vec![vec![100, 10], vec![0, 90]];
        assert_eq!(makespan(&cost, &edges), 110.0);
        assert_eq!(makespan_with_ranges(&cost, &edges, 50.0), 160.0);
        // The victim's own range costs nothing extra.
        assert_eq!(makespan_with_ranges(&cost, &[vec![100, 0], vec![0, 90]], 50.0), 100.0);
    }
}
