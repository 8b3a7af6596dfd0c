//! The compute phase's balance over the GPUs, superstep by superstep: the gap between the
//! slowest and the fastest GPU's kernel busy time (seed 001 Fig. 1: "the slowest worker takes
//! 2.6x the fastest"; Fig. 8: FSteal narrows it).
//!
//! Read from the [`IterationRecord`]s' `busy_ps`, which every backend fills the same way
//! (`Backend::kernel_busy_ps` around the compute phase: virtual kernel time in the
//! simulator, CUDA events around each launch on real GPUs), so a simulated and a real run
//! of the same command give figures of the same meaning.

use super::IterationRecord;
use serde::Serialize;

/// The busy-time gap over a run's supersteps that had two or more workers (GPUs owning a
/// fragment); a superstep on one worker has no gap and is not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct BusyGap {
    /// Supersteps counted: two or more workers, and some busy time on the slowest.
    pub supersteps: u32,
    /// Mean over those supersteps of `(slowest - fastest) / slowest` busy time (0: every
    /// worker equally busy; 1: one worker ran nothing).
    pub mean_gap: f64,
    /// `sum(slowest - fastest) / sum(slowest)` over those supersteps: the gap weighted by
    /// each superstep's length, which the long (skewed) supersteps dominate.
    pub weighted_gap: f64,
    /// Sum over those supersteps of the slowest minus the fastest busy time, ps.
    pub gap_ps: u64,
    /// Sum over those supersteps of the slowest worker's busy time, ps.
    pub slowest_ps: u64,
}

impl BusyGap {
    /// Adds one superstep: every GPU's busy time and the GPU hosting each fragment (a GPU
    /// hosting none is not a worker). Nothing is added when it had fewer than two workers
    /// or no busy time.
    pub fn add(&mut self, busy_ps: &[u64], hosts: &[u32]) {
        let busy = busy_ps.iter().enumerate();
        let workers = busy.filter(|(g, _)| hosts.iter().any(|&h| h as usize == *g));
        let (mut slowest, mut fastest, mut count) = (0u64, u64::MAX, 0u32);
        for (_, &b) in workers {
            slowest = slowest.max(b);
            fastest = fastest.min(b);
            count += 1;
        }
        if count < 2 || slowest == 0 {
            return;
        }
        let gap = slowest - fastest;
        self.supersteps += 1;
        self.mean_gap += (gap as f64 / slowest as f64 - self.mean_gap) / f64::from(self.supersteps);
        self.gap_ps += gap;
        self.slowest_ps += slowest;
        self.weighted_gap = self.gap_ps as f64 / self.slowest_ps as f64;
    }

    /// The gap over `records`.
    pub fn over(records: &[IterationRecord]) -> Self {
        let mut gap = Self::default();
        for r in records {
            gap.add(&r.busy_ps, &r.hosts);
        }
        gap
    }

    /// One line for the run's summary (`gum balance: ...`), which scripts read.
    pub fn summary_line(&self) -> String {
        format!(
            "gum balance: {} supersteps on 2+ workers; slowest - fastest GPU busy: mean \
             {:.3}, weighted {:.3} of the slowest ({:.3} of {:.3} ms)",
            self.supersteps,
            self.mean_gap,
            self.weighted_gap,
            self.gap_ps as f64 / 1e9,
            self.slowest_ps as f64 / 1e9,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_counts_workers_only_and_weights_by_length() {
        let mut g = BusyGap::default();
        // One worker (GPU 1 hosts both fragments): no gap to count.
        g.add(&[0, 500], &[1, 1]);
        // Nothing ran.
        g.add(&[0, 0], &[0, 1]);
        assert_eq!(g, BusyGap::default());
        // 100 vs 50: gap 0.5; GPU 2 hosts nothing and is ignored.
        g.add(&[100, 50, 0], &[0, 1]);
        // 1000 vs 1000: no gap.
        g.add(&[1000, 1000, 7], &[0, 1]);
        assert_eq!(g.supersteps, 2);
        assert!((g.mean_gap - 0.25).abs() < 1e-12, "{g:?}");
        assert_eq!((g.gap_ps, g.slowest_ps), (50, 1100));
        assert!((g.weighted_gap - 50.0 / 1100.0).abs() < 1e-12, "{g:?}");
        // An idle worker is the whole gap.
        g.add(&[0, 300], &[0, 1]);
        assert!((g.mean_gap - 0.5).abs() < 1e-12, "{g:?}");
        assert!(g.summary_line().starts_with("gum balance: 3 supersteps"), "{}", g.summary_line());
    }
}
