//! Atos's progress watchdog: a hang becomes an error.
//!
//! A persistent kernel that never ends is invisible to a wait-based watchdog (the CUDA
//! backend's fires when no operation finishes for a while) because the host's polls keep
//! completing. So, where the backend asks for it
//! ([`Backend::progress_watchdog_ps`](crate::backend::Backend::progress_watchdog_ps); CUDA:
//! `SWITCHYARD_CUDA_WATCHDOG_S`), the host loop watches what the GPUs publish: the mapped
//! control block at every poll, and every sixteenth of the limit each GPU's queue counters
//! and state block, read on a stream beside the workers.
//! When none of it changes for the limit, the host raises STOP (persistent kernels that
//! still poll it end) and fails with what was in flight, every counter, and what the
//! counters suggest. [`ProgressWatch`] and [`stall_message`] are the pure parts, tested
//! without a GPU.

use super::kernels::{ctl, state};
use crate::backend::queue;

/// Watches a vector of counters for change.
#[derive(Clone, Debug)]
pub struct ProgressWatch {
    limit_ps: u64,
    last: Vec<u64>,
    since_ps: u64,
}

impl ProgressWatch {
    /// A watch that fails after `limit_ps` without change, starting at `now_ps`.
    pub fn new(limit_ps: u64, now_ps: u64) -> ProgressWatch {
        ProgressWatch { limit_ps, last: Vec::new(), since_ps: now_ps }
    }

    /// Takes the counters as read at `now_ps`: `Some(still_ps)` (how long they have not
    /// changed) once that reaches the limit, else `None`. Any change restarts the clock.
    pub fn observe(&mut self, counters: &[u64], now_ps: u64) -> Option<u64> {
        if counters != self.last.as_slice() {
            self.last.clear();
            self.last.extend_from_slice(counters);
            self.since_ps = now_ps;
            return None;
        }
        let still = now_ps.saturating_sub(self.since_ps);
        (still >= self.limit_ps).then_some(still)
    }

    /// The limit, picoseconds.
    pub fn limit_ps(&self) -> u64 {
        self.limit_ps
    }
}

/// Names of the queues whose counters the watchdog reads, in slot order.
pub const QUEUE_NAMES: [&str; 4] = ["local", "low-priority", "receive", "aggregation"];

/// What one GPU showed when the run stalled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuSnapshot {
    /// Its words of the mapped control block (`ctl::STRIDE` of them).
    pub ctl: Vec<u64>,
    /// The counter blocks of its queues ([`QUEUE_NAMES`]; the aggregation block holds one
    /// queue per target GPU); empty when never read.
    pub queues: Vec<Vec<u64>>,
    /// Its state block; empty when never read.
    pub state: Vec<u64>,
    /// Its worker kernel is in flight.
    pub worker_in_flight: bool,
    /// Its aggregator kernel is in flight.
    pub aggregator_in_flight: bool,
}

/// The error message of a stalled run: what was in flight, every counter, what they
/// suggest, and what to do.
pub fn stall_message(
    worker: &str,
    persistent: bool,
    aggregated: bool,
    still_ps: u64,
    gpus: &[GpuSnapshot],
) -> String {
    let secs = still_ps as f64 / 1e12;
    let mut in_flight = Vec::new();
    for (g, s) in gpus.iter().enumerate() {
        if s.worker_in_flight {
            in_flight.push(format!(
                "gpu{g} `{worker}` ({})",
                if persistent { "persistent" } else { "discrete" }
            ));
        }
        if s.aggregator_in_flight {
            in_flight.push(format!("gpu{g} `{}`", super::kernels::AGGREGATOR));
        }
    }
    let in_flight =
        if in_flight.is_empty() { "no kernel".to_string() } else { in_flight.join(", ") };
    let mut counters = Vec::new();
    for (g, s) in gpus.iter().enumerate() {
        let c = |i: usize| s.ctl.get(i).copied().unwrap_or(0);
        let sent: u64 = (0..gpus.len()).map(|h| c(ctl::SENT_TO + h)).sum();
        let sent_here: u64 =
            gpus.iter().map(|y| y.ctl.get(ctl::SENT_TO + g).copied().unwrap_or(0)).sum();
        let mut line = format!(
            "gpu{g}: sent {sent} sent here {sent_here} idle {} seen {} overflow {}",
            c(ctl::IDLE),
            c(ctl::SEEN),
            c(ctl::OVERFLOW)
        );
        for (name, block) in QUEUE_NAMES.iter().zip(&s.queues) {
            for (h, q) in block.chunks(queue::COUNTER_WORDS).enumerate() {
                let w = |i: usize| q.get(i).copied().unwrap_or(0);
                if w(queue::END_ALLOC) == 0 {
                    continue;
                }
                let to = if *name == "aggregation" { format!(" to gpu{h}") } else { String::new() };
                line += &format!(
                    "; {name} queue{to} start {} end {} end_alloc {}",
                    w(queue::START),
                    w(queue::END),
                    w(queue::END_ALLOC)
                );
            }
        }
        if let (Some(p), Some(b)) = (s.state.get(state::POPPED), s.state.get(state::BATCHES)) {
            line += &format!("; popped {p}, aggregator batches {b}");
        }
        if s.queues.iter().all(|q| q.is_empty()) && s.state.is_empty() {
            line += "; queue counters and state not read yet (the reads on a stream of their \
                     own have not landed: they may be queued behind a persistent kernel)";
        }
        counters.push(line);
    }
    let hints = stall_hints(aggregated, gpus);
    format!(
        "Atos made no progress for {secs:.1} s: the mapped control block and the queue \
         counters did not change while the host kept polling (in flight: {in_flight}). \
         Counters: {}. {}The host raised STOP so that kernels still polling it end. If the \
         run is merely slow, allow more with SWITCHYARD_CUDA_WATCHDOG_S (seconds); else \
         check the same options on --backend sim, or try --atos-kernel persistent and \
         --atos-comm direct, and report these counters",
        counters.join(" | "),
        if hints.is_empty() { String::new() } else { format!("Suggests: {}. ", hints.join("; ")) }
    )
}

/// What the counters of a stalled run suggest (empty when nothing stands out).
pub fn stall_hints(aggregated: bool, gpus: &[GpuSnapshot]) -> Vec<String> {
    let mut hints = Vec::new();
    if gpus.iter().all(|s| !s.worker_in_flight && !s.aggregator_in_flight) {
        hints.push(
            "no kernel is in flight, yet the host has not seen the run terminate: the host \
             missed a kernel's end or its published idleness (a host-side bug)"
                .to_string(),
        );
    }
    for (g, s) in gpus.iter().enumerate() {
        for (name, block) in QUEUE_NAMES.iter().zip(&s.queues) {
            for (h, q) in block.chunks(queue::COUNTER_WORDS).enumerate() {
                let w = |i: usize| q.get(i).copied().unwrap_or(0);
                let (start, end, alloc) = (w(queue::START), w(queue::END), w(queue::END_ALLOC));
                let which = if *name == "aggregation" {
                    format!("gpu{g}'s aggregation queue to gpu{h}")
                } else {
                    format!("gpu{g}'s {name} queue")
                };
                if alloc > end {
                    hints.push(format!(
                        "{which} has {} slots reserved but never published (end {end} < \
                         end_alloc {alloc}): a push did not finish",
                        alloc - end
                    ));
                }
                if end > start {
                    if *name == "aggregation" {
                        let batches = s.state.get(state::BATCHES).copied().unwrap_or(0);
                        if aggregated && batches == 0 {
                            hints.push(format!(
                                "{which} holds {} pairs and gpu{g}'s aggregator has sent no \
                                 batch: it may never have started (its grid not resident \
                                 beside the workers, or its stream queued behind a \
                                 persistent kernel)",
                                (end - start) / 2
                            ));
                        } else {
                            hints.push(format!(
                                "{which} holds {} pairs its aggregator does not send",
                                (end - start) / 2
                            ));
                        }
                    } else if s.worker_in_flight {
                        hints.push(format!(
                            "{which} holds {} items that gpu{g}'s workers do not pop",
                            end - start
                        ));
                    } else {
                        hints.push(format!(
                            "{which} holds {} items and no worker of gpu{g} is in flight",
                            end - start
                        ));
                    }
                }
            }
        }
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    #[test]
    fn a_watch_fires_only_after_the_limit_without_change() {
        let mut w = ProgressWatch::new(100 * MS, 0);
        assert_eq!(w.observe(&[1, 2], 0), None, "the first read is a change");
        assert_eq!(w.observe(&[1, 2], 99 * MS), None);
        assert_eq!(w.observe(&[1, 2], 100 * MS), Some(100 * MS));
        // Any change restarts the clock.
        assert_eq!(w.observe(&[1, 3], 150 * MS), None);
        assert_eq!(w.observe(&[1, 3], 249 * MS), None);
        assert_eq!(w.observe(&[1, 3, 0], 250 * MS), None, "a longer vector is a change");
        assert_eq!(w.observe(&[1, 3, 0], 400 * MS), Some(150 * MS));
    }

    fn counters(start: u64, end: u64, alloc: u64) -> Vec<u64> {
        let mut c = vec![0; queue::COUNTER_WORDS];
        c[queue::START] = start;
        c[queue::END] = end;
        c[queue::END_ALLOC] = alloc;
        c
    }

    fn snapshot(agg: Vec<u64>, batches: u64) -> GpuSnapshot {
        let mut st = vec![0; state::LEN];
        st[state::BATCHES] = batches;
        st[state::POPPED] = 7;
        let mut ctl_words = vec![0; ctl::STRIDE];
        ctl_words[ctl::SENT_TO] = 1;
        ctl_words[ctl::SENT_TO + 1] = 2;
        GpuSnapshot {
            ctl: ctl_words,
            queues: vec![counters(5, 5, 5), counters(0, 0, 0), counters(0, 0, 0), agg],
            state: st,
            worker_in_flight: true,
            aggregator_in_flight: true,
        }
    }

    #[test]
    fn an_aggregator_that_never_sent_is_named_with_its_waiting_pairs() {
        // gpu1's aggregation queue to gpu0 holds 3 pairs, no batch was ever sent.
        let mut agg = vec![0; 2 * queue::COUNTER_WORDS];
        agg[..queue::COUNTER_WORDS].copy_from_slice(&counters(0, 6, 6));
        let gpus = vec![snapshot(vec![0; 2 * queue::COUNTER_WORDS], 0), snapshot(agg, 0)];
        let hints = stall_hints(true, &gpus);
        assert_eq!(hints.len(), 1, "{hints:?}");
        assert!(hints[0].contains("gpu1's aggregation queue to gpu0 holds 3 pairs"), "{hints:?}");
        assert!(hints[0].contains("never have started"), "{hints:?}");
        let m = stall_message("atos_bfs_worker", true, true, 120_000 * MS, &gpus);
        for want in [
            "no progress for 120.0 s",
            "gpu0 `atos_bfs_worker` (persistent)",
            "gpu1 `atos_aggregator`",
            "gpu1: sent 3 sent here 4 idle 0 seen 0 overflow 0",
            "aggregation queue to gpu0 start 0 end 6 end_alloc 6",
            "popped 7, aggregator batches 0",
            "SWITCHYARD_CUDA_WATCHDOG_S",
            "--atos-comm direct",
        ] {
            assert!(m.contains(want), "missing {want:?} in {m}");
        }
    }

    #[test]
    fn unpublished_pushes_and_a_host_that_missed_the_end_are_named() {
        let mut s = snapshot(vec![0; queue::COUNTER_WORDS], 0);
        s.queues[0] = counters(4, 4, 6);
        s.worker_in_flight = false;
        s.aggregator_in_flight = false;
        let hints = stall_hints(false, std::slice::from_ref(&s));
        assert!(hints.iter().any(|h| h.contains("no kernel is in flight")), "{hints:?}");
        assert!(
            hints.iter().any(|h| h.contains(
                "gpu0's local queue has 2 slots reserved but never \
                                             published"
            )),
            "{hints:?}"
        );
        let unread = GpuSnapshot { ctl: vec![0; ctl::STRIDE], ..GpuSnapshot::default() };
        let m = stall_message("atos_bfs_worker", false, false, MS, &[s, unread]);
        assert!(
            m.contains(
                "gpu1: sent 0 sent here 2 idle 0 seen 0 overflow 0; queue counters and \
                            state not read yet"
            ),
            "{m}"
        );
        assert!(m.contains("in flight: no kernel"), "{m}");
        // A healthy-looking GPU suggests nothing.
        assert!(stall_hints(false, &[snapshot(vec![0; queue::COUNTER_WORDS], 0)]).is_empty());
    }
}
