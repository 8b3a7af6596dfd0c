//! Failure drills for real GPUs, switched on by environment variables so that the code that
//! reports a real failure is the code the drill exercises (there is no test-only build):
//!
//! - `SWITCHYARD_CUDA_MEMORY_CAP_MIB=N`: each physical GPU offers at most `N` MiB, as if it
//!   had that little memory free. A graph that does not fit is refused by the run's memory
//!   plan before any work, with the sizes (`BackendError::OutOfMemory`).
//! - `SWITCHYARD_CUDA_FAULT=MODE:KERNEL[:SECONDS]`: right after the first launch of the
//!   registered kernel `KERNEL` (e.g. `bfs_advance`), the backend launches an injection
//!   kernel on the same stream, attributed to that launch:
//!   - `error`: writes the kernels' error word (code [`INJECTED_ERROR_CODE`]), so the run
//!     stops with ``kernel `KERNEL` failed: injected fault``, as a kernel that detects a
//!     broken contract does;
//!   - `trap`: executes `__trap()`, a real device fault that destroys the context; the run
//!     stops with a device fault that names the kernels in flight on that GPU;
//!   - `hang`: spins for `SECONDS` (default 30) of GPU time; the watchdog
//!     (`SWITCHYARD_CUDA_WATCHDOG_S`) stops the run and names what every stream waits for.

use crate::backend::BackendError;

/// The variable that injects a kernel fault.
pub const FAULT_ENV: &str = "SWITCHYARD_CUDA_FAULT";
/// The variable that caps each physical GPU's memory.
pub const MEMORY_CAP_ENV: &str = "SWITCHYARD_CUDA_MEMORY_CAP_MIB";
/// The error-word code of an injected `error` fault (`SY_ERR_INJECTED` in
/// `kernels/common.cuh`).
pub const INJECTED_ERROR_CODE: u64 = 15;

/// How an injected fault shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectMode {
    /// The kernel reports an error through the error word.
    Error,
    /// The kernel traps: a device fault.
    Trap,
    /// The kernel spins for this many seconds.
    Hang {
        /// Seconds of GPU time it spins.
        seconds: u64,
    },
}

/// A kernel fault to inject (from [`FAULT_ENV`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injection {
    /// How it shows.
    pub mode: InjectMode,
    /// The registered kernel after whose first launch it happens.
    pub kernel: String,
}

impl Injection {
    /// Parses `MODE:KERNEL[:SECONDS]`.
    pub fn parse(text: &str) -> Result<Injection, BackendError> {
        let bad = |why: &str| {
            BackendError::Unavailable(format!(
                "{FAULT_ENV}={text}: {why}; give error:KERNEL, trap:KERNEL or \
                 hang:KERNEL[:SECONDS] with a registered kernel name (e.g. trap:bfs_advance), \
                 or unset it"
            ))
        };
        let mut parts = text.trim().split(':');
        let mode = parts.next().unwrap_or_default();
        let kernel = parts.next().filter(|k| !k.is_empty()).ok_or_else(|| bad("no kernel"))?;
        let seconds = parts.next();
        if parts.next().is_some() {
            return Err(bad("too many `:` parts"));
        }
        let mode = match (mode, seconds) {
            ("error", None) => InjectMode::Error,
            ("trap", None) => InjectMode::Trap,
            ("hang", None) => InjectMode::Hang { seconds: 30 },
            ("hang", Some(s)) => match s.parse::<u64>() {
                Ok(seconds @ 1..=3600) => InjectMode::Hang { seconds },
                _ => return Err(bad("SECONDS is not a whole number in 1..=3600")),
            },
            ("error" | "trap", Some(_)) => return Err(bad("only hang takes SECONDS")),
            _ => return Err(bad("unknown mode")),
        };
        Ok(Injection { mode, kernel: kernel.to_string() })
    }

    /// The injection [`FAULT_ENV`] asks for, if any.
    pub fn from_env() -> Result<Option<Injection>, BackendError> {
        match std::env::var(FAULT_ENV) {
            Ok(text) if !text.trim().is_empty() => Injection::parse(&text).map(Some),
            _ => Ok(None),
        }
    }

    /// The CUDA function that carries it out (in `kernels/common.cuh`).
    pub fn cuda_function(&self) -> &'static str {
        match self.mode {
            InjectMode::Error => "sy_inject_error",
            InjectMode::Trap => "sy_inject_trap",
            InjectMode::Hang { .. } => "sy_inject_hang",
        }
    }

    /// The injection kernel's scalar 0: nanoseconds to spin (0 unless `hang`).
    pub fn spin_ns(&self) -> u64 {
        match self.mode {
            InjectMode::Hang { seconds } => seconds * 1_000_000_000,
            _ => 0,
        }
    }
}

/// The memory cap [`MEMORY_CAP_ENV`] asks for, in bytes, if any.
pub fn memory_cap_from_env() -> Result<Option<u64>, BackendError> {
    match std::env::var(MEMORY_CAP_ENV) {
        Ok(text) if !text.trim().is_empty() => match text.trim().parse::<u64>() {
            Ok(mib @ 1..=16_777_216) => Ok(Some(mib << 20)),
            _ => Err(BackendError::Unavailable(format!(
                "{MEMORY_CAP_ENV}={text}: give the memory each GPU offers as a whole number of \
                 MiB in 1..=16777216, or unset it"
            ))),
        },
        _ => Ok(None),
    }
}

/// Free and total bytes of a physical GPU under a cap: the GPU offers at most `cap` bytes,
/// of which `in_use` (this process's allocations on it) are taken.
pub fn capped(free: u64, total: u64, cap: Option<u64>, in_use: u64) -> (u64, u64) {
    match cap {
        None => (free, total),
        Some(cap) => (free.min(cap.saturating_sub(in_use)), total.min(cap)),
    }
}

/// What one stream waits for, for a watchdog or device-fault message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamWait {
    /// The stream's index.
    pub stream: usize,
    /// Its GPU.
    pub device: u32,
    /// Kernels launched on it and not known to have finished, oldest first.
    pub kernels: Vec<&'static str>,
    /// Operations whose completion the host waits for (kernel, copy, read, write,
    /// callback), oldest first.
    pub pending: Vec<&'static str>,
}

/// `stream 3 on gpu0: kernels `a`, `b` in flight; waits for kernel, copy` per stream that
/// waits for anything, at most `shown` streams (then how many more).
pub fn waiting_report(waits: &[StreamWait], shown: usize) -> String {
    let busy: Vec<String> = waits
        .iter()
        .filter(|w| !w.kernels.is_empty() || !w.pending.is_empty())
        .map(|w| {
            let mut parts = Vec::new();
            if !w.kernels.is_empty() {
                let names: Vec<String> = w.kernels.iter().map(|k| format!("`{k}`")).collect();
                parts.push(format!("kernels {} in flight", names.join(", ")));
            }
            if !w.pending.is_empty() {
                parts.push(format!("waits for {}", w.pending.join(", ")));
            }
            format!("stream {} on gpu{}: {}", w.stream, w.device, parts.join("; "))
        })
        .collect();
    if busy.is_empty() {
        return "no stream has work outstanding".into();
    }
    let more = busy.len().saturating_sub(shown);
    let mut text = busy.into_iter().take(shown).collect::<Vec<_>>().join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more streams"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injections_parse_with_clear_errors() {
        let i = Injection::parse("trap:bfs_advance").unwrap();
        assert_eq!((i.mode, i.kernel.as_str()), (InjectMode::Trap, "bfs_advance"));
        assert_eq!(i.cuda_function(), "sy_inject_trap");
        let i = Injection::parse("hang:bsp_split:5").unwrap();
        assert_eq!(i.mode, InjectMode::Hang { seconds: 5 });
        assert_eq!(i.spin_ns(), 5_000_000_000);
        assert_eq!(Injection::parse("hang:x").unwrap().mode, InjectMode::Hang { seconds: 30 });
        assert_eq!(Injection::parse("error:x").unwrap().cuda_function(), "sy_inject_error");
        for (text, why) in [
            ("boom:x", "unknown mode"),
            ("trap", "no kernel"),
            ("trap:", "no kernel"),
            ("trap:x:3", "only hang takes SECONDS"),
            ("hang:x:0", "SECONDS is not a whole number in 1..=3600"),
            ("hang:x:y", "SECONDS is not a whole number"),
            ("hang:x:1:2", "too many"),
        ] {
            let e = Injection::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("SWITCHYARD_CUDA_FAULT={text}: {why}")), "{e}");
            assert!(e.contains("or unset it"), "{e}");
        }
    }

    #[test]
    fn a_cap_limits_free_and_total_memory() {
        let gib = 1u64 << 30;
        assert_eq!(capped(100 * gib, 141 * gib, None, 0), (100 * gib, 141 * gib));
        assert_eq!(capped(100 * gib, 141 * gib, Some(gib), 0), (gib, gib));
        assert_eq!(capped(100 * gib, 141 * gib, Some(gib), gib / 4), (3 * gib / 4, gib));
        assert_eq!(capped(100, 141 * gib, Some(gib), 0), (100, gib));
        assert_eq!(capped(100 * gib, 141 * gib, Some(gib), 2 * gib), (0, gib));
    }

    #[test]
    fn the_waiting_report_names_kernels_and_operations() {
        let waits = vec![
            StreamWait { stream: 0, device: 0, kernels: vec![], pending: vec![] },
            StreamWait {
                stream: 2,
                device: 1,
                kernels: vec!["bfs_advance", "bsp_split"],
                pending: vec!["kernel", "read"],
            },
            StreamWait { stream: 3, device: 1, kernels: vec![], pending: vec!["copy"] },
        ];
        assert_eq!(
            waiting_report(&waits, 8),
            "stream 2 on gpu1: kernels `bfs_advance`, `bsp_split` in flight; waits for kernel, \
             read, stream 3 on gpu1: waits for copy"
        );
        assert_eq!(
            waiting_report(&waits, 1),
            "stream 2 on gpu1: kernels `bfs_advance`, `bsp_split` in flight; waits for kernel, \
             read and 1 more streams"
        );
        assert_eq!(waiting_report(&waits[..1], 8), "no stream has work outstanding");
    }
}
