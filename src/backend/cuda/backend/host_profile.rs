//! Where the host's time goes in a CUDA run, per backend call, when
//! `SWITCHYARD_CUDA_HOST_PROFILE=1` is set: calls and wall time of each trait method
//! (launches, copies, events, reads, waiting for completions), printed to stderr when the
//! backend is dropped. A diagnostic for runs whose GPUs idle between kernels (real GPUs only:
//! the simulator never reads a clock).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("SWITCHYARD_CUDA_HOST_PROFILE").is_ok_and(|v| v == "1"))
}

/// Calls and nanoseconds per method name.
static TOTALS: Mutex<BTreeMap<&'static str, (u64, u128)>> = Mutex::new(BTreeMap::new());

/// Adds the time from its creation to its drop to `name`'s total (when profiling is on).
pub(super) struct Span {
    name: &'static str,
    start: Option<Instant>,
}

/// Starts timing one call of `name`.
pub(super) fn span(name: &'static str) -> Span {
    Span { name, start: enabled().then(Instant::now) }
}

impl Span {
    /// Counts this call under `name` instead (known only at its end).
    pub(super) fn rename(&mut self, name: &'static str) {
        self.name = name;
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            let ns = start.elapsed().as_nanos();
            let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
            let entry = totals.entry(self.name).or_default();
            entry.0 += 1;
            entry.1 += ns;
        }
    }
}

/// Adds `count` calls of no time to `name` (a count beside the timed calls, e.g. the event
/// queries of a pass; when profiling is on).
pub(super) fn count(name: &'static str, count: u64) {
    if enabled() {
        let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
        totals.entry(name).or_default().0 += count;
    }
}

/// Prints and clears the totals (when profiling is on).
pub(super) fn report() {
    if !enabled() {
        return;
    }
    let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!("host profile (SWITCHYARD_CUDA_HOST_PROFILE): call, count, total ms, mean us");
    for (name, (count, ns)) in totals.iter() {
        eprintln!(
            "  {name:<22} {count:>9} {:>10.3} {:>9.2}",
            *ns as f64 / 1e6,
            *ns as f64 / 1e3 / (*count).max(1) as f64
        );
    }
    totals.clear();
}
