//! Termination detection for Atos (neither paper specifies one; this is ours).
//!
//! Every GPU `g` publishes, in mapped host memory the host reads without stream order, with
//! plain stores (it is the only writer of its words; no kernel applies an atomic to host
//! memory, which PCIe hosts do not support from the GPU):
//! - `SENT_TO[g][h]`: remote records it sent to GPU `h`, published *before* they are counted
//!   at `h`;
//! - `IDLE[g]`, `SEEN[g]`: it found no queued item, no busy worker, nothing waiting in its
//!   aggregation queues (and, for a sweeping algorithm, a clean sweep of all its vertices),
//!   having read its arrival count `ARRIVED[g] = SEEN[g]` *before* looking at its queues.
//!
//! `ARRIVED[g]` (`kernels::RECV_ARRIVED`, in `g`'s device memory) is raised by a sender after
//! its records are visible at `g` (pushed into its receive queue, or applied by a remote
//! atomic) and after the sender published them in `SENT_TO`. The host reads the block twice
//! (two "waves"), some time apart, and declares termination when both waves are identical,
//! every GPU is idle, and every GPU's `SEEN[g]` equals `sum_y SENT_TO[y][g]`. Then it raises
//! the stop flag.
//!
//! Why this is safe. Suppose the host fires but some GPU has work at an instant `T` between
//! the waves. A GPU with nothing to do creates nothing, and work only appears at a GPU through
//! an arrival (its own queues were empty and no worker of it busy when it found itself
//! idle). So some GPU got an arrival after the idleness check it published; take the
//! earliest such arrival, a record `R` from `y` to `x`. `x`'s check missed `R`, so `R` is not
//! in `SEEN[x]` (`x` read `ARRIVED[x]` before its queues, and `R` is counted there only after
//! it is visible). `R` is in `SENT_TO[y][x]` as the host read it: `y` publishes before it
//! counts and, in the CUDA workers, a team keeps a unit of work open from its first
//! uncounted operation until it has counted it, so `y`'s published check came after that
//! publication (had `y` sent `R` after its check, `y` would have had work after it, hence an
//! earlier arrival). For `SEEN[x]` to equal the sum, some record `R'` to `x` must be in
//! `SEEN[x]` but not in its sender `y'`'s published `SENT_TO[y'][x]`; but `y'` publishes
//! before it counts, so `y'` published after its published check, which needs work of `y'`
//! after that check: an arrival at `y'` before `R'` was counted, so before `x`'s check, so
//! before `R`. That contradicts `R` being the earliest. Conversely, once the computation has
//! finished every sender publishes, every GPU counts what it received and publishes idle with
//! it, so two later waves agree and the detector fires.
//!
//! Late counting (the CUDA workers). A team keeps its remote operations' counts in shared
//! memory while it finds work and publishes and counts them only when it runs out of work or
//! every 16 rounds (a few system-scope fences and stores then, instead of per round); the unit it
//! keeps open meanwhile (`X_OPENED` / `X_CLOSED` in `kernels/atos.cu`) is what the argument
//! above needs. Uncounted operations only delay termination: every team flushes before it
//! idles.

use super::kernels::ctl;

/// One read of every GPU's words: per GPU `(records it sent, records sent to it, idle,
/// seen)`, the sums over the `SENT_TO` matrix as published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wave(pub Vec<[u64; 4]>);

impl Wave {
    /// Reads a wave from the mapped control block of `gpus` GPUs.
    pub fn read(ctl_block: &[u64], gpus: usize) -> Wave {
        Wave(
            (0..gpus)
                .map(|g| {
                    let at = |i: usize| ctl_block.get(g * ctl::STRIDE + i).copied().unwrap_or(0);
                    [
                        ctl::sent_by(ctl_block, gpus, g),
                        ctl::sent_to(ctl_block, gpus, g),
                        at(ctl::IDLE),
                        at(ctl::SEEN),
                    ]
                })
                .collect(),
        )
    }

    /// Whether this wave alone looks terminated: every GPU idle, having seen every record
    /// published as sent to it.
    pub fn looks_done(&self) -> bool {
        self.0.iter().all(|g| g[2] == 1 && g[3] == g[1])
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

    /// A control block: `sent[y][h]` records from `y` to `h`, then `(idle, seen)` per GPU.
    fn block(sent: &[&[u64]], state: &[[u64; 2]]) -> Vec<u64> {
        let mut b = vec![0; ctl::len(state.len())];
        for (g, v) in state.iter().enumerate() {
            b[g * ctl::STRIDE + ctl::IDLE] = v[0];
            b[g * ctl::STRIDE + ctl::SEEN] = v[1];
            for (h, &n) in sent[g].iter().enumerate() {
                b[g * ctl::STRIDE + ctl::SENT_TO + h] = n;
            }
        }
        b
    }

    #[test]
    fn two_identical_quiet_waves_are_needed() {
        let mut d = Detector::default();
        // gpu0 sent 3 records to gpu1, gpu1 sent 2 to gpu0; both saw them.
        let quiet = block(&[&[0, 3], &[2, 0]], &[[1, 2], [1, 3]]);
        assert_eq!(Wave::read(&quiet, 2).0, vec![[3, 2, 1, 2], [2, 3, 1, 3]]);
        assert!(!d.observe(Wave::read(&quiet, 2)), "one wave is not enough");
        assert!(d.observe(Wave::read(&quiet, 2)));
    }

    #[test]
    fn unseen_records_and_busy_gpus_block_it() {
        for (sent, state) in [
            // gpu1 went idle before the last of gpu0's records arrived.
            ([[0u64, 3], [2, 0]], [[1, 2], [1, 2]]),
            // gpu1 busy.
            ([[0, 3], [2, 0]], [[1, 2], [0, 3]]),
            // The totals agree but not per GPU: gpu0 saw one record less than it was sent
            // and gpu1 one more (the proof needs the per-GPU equality, not the totals).
            ([[0, 1], [1, 0]], [[1, 0], [1, 2]]),
        ] {
            let s: Vec<&[u64]> = sent.iter().map(|r| &r[..]).collect();
            let b = block(&s, &state);
            let mut d = Detector::default();
            assert!(!d.observe(Wave::read(&b, 2)) && !d.observe(Wave::read(&b, 2)), "{state:?}");
        }
        // A change between the waves restarts the count.
        let mut d = Detector::default();
        let before = block(&[&[0, 1], &[0, 0]], &[[1, 0], [1, 0]]);
        let done = block(&[&[0, 1], &[0, 0]], &[[1, 0], [1, 1]]);
        assert!(!d.observe(Wave::read(&before, 2)));
        assert!(!d.observe(Wave::read(&done, 2)), "the wave before differs");
        assert!(d.observe(Wave::read(&done, 2)));
    }
}
