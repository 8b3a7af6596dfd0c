//! Termination detection for Atos (neither paper specifies one; this is ours).
//!
//! Every GPU `g` keeps, in mapped host memory the host reads without stream order:
//! - `SENT[g]`: remote records it issued (counted before they leave);
//! - `RECV[g]`: remote records resolved at `g` (incremented *after* a pushed batch is visible
//!   in its receive queue, or when a remote atomic aimed at it changed nothing);
//! - `IDLE[g]`, `SEEN[g]`: it found no queued item, no busy worker, nothing waiting in its
//!   aggregation queues (and, for a sweeping algorithm, a clean sweep of all its vertices),
//!   having read `RECV[g] = SEEN[g]` *before* looking at its queues.
//!
//! The host reads all of them twice (two "waves"), some time apart, and declares
//! termination when both waves are identical, every GPU is idle with `SEEN == RECV`, and
//! `sum SENT == sum RECV`. Then it raises the stop flag.
//!
//! Why this is safe (all counters only grow): let `T` be the instant between the waves.
//! Work only appears at a GPU through its receive queue (its own queues are empty and no
//! worker of it is busy when idle, and a GPU with nothing creates nothing), and every arrival
//! raises its `RECV` after the items are visible. `RECV[g]` equal in both waves means nothing
//! arrived at `g` in between, and `SEEN[g] == RECV[g]` means `g` found itself idle after its
//! last arrival (it read `RECV` before checking its queues, so an arrival it missed would
//! show as `SEEN < RECV`); hence `g` was idle throughout the interval, at `T` included. At
//! `T` the records in flight are `sum SENT - sum RECV` (their `SENT` equal in both waves too)
//! `= 0`. So at `T` no GPU has work and nothing is in flight: nothing can ever create work
//! again. Conversely, once the computation has finished every GPU publishes idle with its
//! final `RECV` and every record resolves, so two later waves agree: the detector fires.

use super::kernels::ctl;

/// One read of every GPU's counters: `(sent, recv, idle, seen)` per GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wave(pub Vec<[u64; 4]>);

impl Wave {
    /// Reads a wave from the mapped control block of `gpus` GPUs.
    pub fn read(ctl_block: &[u64], gpus: usize) -> Wave {
        Wave(
            (0..gpus)
                .map(|g| {
                    let at = |i: usize| ctl_block.get(g * ctl::STRIDE + i).copied().unwrap_or(0);
                    [at(ctl::SENT), at(ctl::RECV), at(ctl::IDLE), at(ctl::SEEN)]
                })
                .collect(),
        )
    }

    /// Whether this wave alone looks terminated (all idle with nothing missed, nothing in
    /// flight).
    pub fn looks_done(&self) -> bool {
        let sent: u64 = self.0.iter().map(|g| g[0]).sum();
        let recv: u64 = self.0.iter().map(|g| g[1]).sum();
        sent == recv && self.0.iter().all(|g| g[2] == 1 && g[3] == g[1])
    }
}

/// The host's detector: feed it waves as it polls.
#[derive(Clone, Debug, Default)]
pub struct Detector {
    last: Option<Wave>,
    /// Waves read.
    pub waves: u64,
}

impl Detector {
    /// Takes a new wave; true when it and the previous one prove termination.
    pub fn observe(&mut self, wave: Wave) -> bool {
        self.waves += 1;
        let done = wave.looks_done() && self.last.as_ref() == Some(&wave);
        self.last = Some(wave);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(gpus: &[[u64; 4]]) -> Vec<u64> {
        let mut b = vec![0; ctl::len(gpus.len())];
        for (g, v) in gpus.iter().enumerate() {
            b[g * ctl::STRIDE + ctl::SENT] = v[0];
            b[g * ctl::STRIDE + ctl::RECV] = v[1];
            b[g * ctl::STRIDE + ctl::IDLE] = v[2];
            b[g * ctl::STRIDE + ctl::SEEN] = v[3];
        }
        b
    }

    #[test]
    fn two_identical_quiet_waves_are_needed() {
        let mut d = Detector::default();
        let quiet = block(&[[3, 2, 1, 2], [2, 3, 1, 3]]);
        assert!(!d.observe(Wave::read(&quiet, 2)), "one wave is not enough");
        assert!(d.observe(Wave::read(&quiet, 2)));
    }

    #[test]
    fn in_flight_records_missed_arrivals_and_busy_gpus_block_it() {
        for gpus in [
            [[3, 2, 1, 2], [2, 2, 1, 2]], // one record in flight
            [[3, 2, 1, 2], [2, 3, 1, 2]], // gpu 1 went idle before its last arrival
            [[3, 2, 1, 2], [2, 3, 0, 3]], // gpu 1 busy
        ] {
            let b = block(&gpus);
            let mut d = Detector::default();
            assert!(!d.observe(Wave::read(&b, 2)) && !d.observe(Wave::read(&b, 2)), "{gpus:?}");
        }
        // A change between the waves restarts the count.
        let mut d = Detector::default();
        d.observe(Wave::read(&block(&[[1, 1, 1, 1]]), 1));
        assert!(!d.observe(Wave::read(&block(&[[2, 2, 1, 2]]), 1)));
        assert!(d.observe(Wave::read(&block(&[[2, 2, 1, 2]]), 1)));
    }
}
