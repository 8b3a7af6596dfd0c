//! The optional event log: what the engine scheduled, cancelled and dispatched, in order.
//! Off by default; determinism tests switch it on and compare two runs.

use super::{EventId, TimePs};

/// One entry of the event log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogEntry {
    /// At virtual time `now_ps`, event `id` was scheduled for `at_ps`.
    Scheduled { now_ps: TimePs, id: EventId, at_ps: TimePs },
    /// At virtual time `now_ps`, event `id` was cancelled.
    Cancelled { now_ps: TimePs, id: EventId },
    /// Event `id` was dispatched (popped) at virtual time `at_ps`.
    Dispatched { id: EventId, at_ps: TimePs },
}

/// FNV-1a over the log entries: a short fingerprint to print or compare.
pub(super) fn digest(entries: &[LogEntry]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for e in entries {
        match *e {
            LogEntry::Scheduled { now_ps, id, at_ps } => {
                mix(1);
                mix(now_ps);
                mix(id.serial());
                mix(at_ps);
            }
            LogEntry::Cancelled { now_ps, id } => {
                mix(2);
                mix(now_ps);
                mix(id.serial());
            }
            LogEntry::Dispatched { id, at_ps } => {
                mix(3);
                mix(id.serial());
                mix(at_ps);
            }
        }
    }
    h
}
