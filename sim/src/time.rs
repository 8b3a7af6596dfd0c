//! Virtual time. One definition for the whole simulator: integer picoseconds.

/// A point in, or a span of, virtual time in picoseconds.
pub type TimePs = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: TimePs = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: TimePs = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: TimePs = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: TimePs = 1_000_000_000_000;
