//! The device queue every backend shares: Atos's lock-free FIFO (seed 003 sec. III-A2,
//! Listing 6) as a `u32` item buffer and a `u64` counter block, each counter on its own
//! 128-byte cache line so that atomics on different counters do not serialise.
//!
//! Push (a warp or CTA leader for its whole batch): `idx = atomicAdd(end_alloc, n)`; write
//! the items at `idx..idx + n`; `atomicMax(end_max, idx + n)`; fence; if
//! `atomicAdd(end_count, n) + n == end_max` then `atomicMax(end, end_max)`. Items below `end`
//! are valid, so a queue can be popped while it is being filled. A batch that would pass the
//! capacity is not written: its size is added to `overflow` (the runtime reports it; work is
//! never dropped silently) and `end` stops there.
//!
//! Pop: `idx = atomicAdd(start, n)`; items `idx..min(idx + n, end)` are the worker's (the
//! simulator's pop below takes them at once; CUDA's persistent teams reserve with
//! [`START_ALLOC`] and take a reservation as `end` reaches it).
//!
//! The functions here are the functional (simulator) implementation: a simulated kernel step
//! and the simulator's remote pushes apply a whole batch at once, so after each call
//! `end == end_alloc` unless the queue overflowed. The CUDA kernels that use queues implement
//! the same layout and protocol for concurrent pushers.

/// `u64` words per cache line (128 bytes).
pub const LINE_WORDS: usize = 16;

/// Index of `start` (pop reservations) in the counter block.
pub const START: usize = 0;
/// Index of `end` (items below are valid).
pub const END: usize = LINE_WORDS;
/// Index of `end_alloc` (push reservations).
pub const END_ALLOC: usize = 2 * LINE_WORDS;
/// Index of `end_max` (highest reserved end whose items were written).
pub const END_MAX: usize = 3 * LINE_WORDS;
/// Index of `end_count` (items written).
pub const END_COUNT: usize = 4 * LINE_WORDS;
/// Index of `overflow` (items refused because the queue was full).
pub const OVERFLOW: usize = 5 * LINE_WORDS;
/// CUDA kernels whose queues are circular (Atos's): the highest popped end whose items
/// were read (in the overflow line, which is rarely written; the simulator leaves it 0).
pub const POP_MAX: usize = OVERFLOW + 1;
/// CUDA: items read after their pop (see [`POP_MAX`]).
pub const POP_COUNT: usize = OVERFLOW + 2;
/// CUDA: slots below this were popped and read, so pushes may reuse them (`POP_COUNT`
/// level with `POP_MAX` raises it, as `END_COUNT` level with `END_MAX` raises `END`).
pub const FREED: usize = OVERFLOW + 3;
/// CUDA kernels whose persistent teams pop by reservation (Atos's `start_alloc`): indices
/// reserved ahead with one `atomicAdd` each; `start` then counts the items taken (still at
/// most `end`). The simulator pops by `start` alone and leaves this 0.
pub const START_ALLOC: usize = OVERFLOW + 4;
/// Words of a counter block.
pub const COUNTER_WORDS: usize = 6 * LINE_WORDS;

/// What a push did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushOutcome {
    /// The items were written at this index.
    Stored(u64),
    /// The queue had no room; the items were counted in `overflow`.
    Overflowed,
}

/// Appends `values` to the queue by the counter protocol.
pub fn push(counters: &mut [u64], items: &mut [u32], values: &[u32]) -> PushOutcome {
    let n = values.len() as u64;
    if n == 0 || counters.len() < COUNTER_WORDS {
        return PushOutcome::Stored(counters.get(END).copied().unwrap_or(0));
    }
    let at = counters[END_ALLOC];
    counters[END_ALLOC] = at + n;
    let (start, stop) = (at as usize, (at + n) as usize);
    let Some(slots) = items.get_mut(start..stop) else {
        counters[OVERFLOW] += n;
        return PushOutcome::Overflowed;
    };
    slots.copy_from_slice(values);
    counters[END_MAX] = counters[END_MAX].max(at + n);
    counters[END_COUNT] += n;
    if counters[END_COUNT] == counters[END_MAX] {
        counters[END] = counters[END].max(counters[END_MAX]);
    }
    PushOutcome::Stored(at)
}

/// Reserves up to `max` valid items from the front; returns their index range.
pub fn pop(counters: &mut [u64], max: u64) -> std::ops::Range<u64> {
    if counters.len() < COUNTER_WORDS {
        return 0..0;
    }
    let (start, end) = (counters[START], counters[END]);
    let take = end.saturating_sub(start).min(max);
    counters[START] = start + take;
    start..start + take
}

/// Valid items not yet popped.
pub fn pending(counters: &[u64]) -> u64 {
    match (counters.get(END), counters.get(START)) {
        (Some(&end), Some(&start)) => end.saturating_sub(start),
        _ => 0,
    }
}

/// Items refused because the queue was full.
pub fn overflowed(counters: &[u64]) -> u64 {
    counters.get(OVERFLOW).copied().unwrap_or(0)
}

/// Empties the queue (all counters to 0): the host does this between launches once every
/// item was consumed, so a queue's capacity bounds the items in it, not the items ever pushed.
pub fn reset(counters: &mut [u64]) {
    counters.iter_mut().for_each(|c| *c = 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_and_pops_follow_the_counter_protocol() {
        let mut c = vec![0u64; COUNTER_WORDS];
        let mut items = vec![0u32; 5];
        assert_eq!(push(&mut c, &mut items, &[1, 2, 3]), PushOutcome::Stored(0));
        assert_eq!((c[END], c[END_ALLOC], c[END_MAX], c[END_COUNT]), (3, 3, 3, 3));
        assert_eq!(pop(&mut c, 2), 0..2);
        assert_eq!(pending(&c), 1);
        assert_eq!(push(&mut c, &mut items, &[4, 5]), PushOutcome::Stored(3));
        assert_eq!(&items, &[1, 2, 3, 4, 5]);
        assert_eq!(pop(&mut c, 10), 2..5);
        assert_eq!(pop(&mut c, 10), 5..5, "an empty queue pops nothing");
    }

    #[test]
    fn a_batch_that_does_not_fit_is_counted_not_written() {
        let mut c = vec![0u64; COUNTER_WORDS];
        let mut items = vec![0u32; 4];
        push(&mut c, &mut items, &[7, 7, 7]);
        assert_eq!(push(&mut c, &mut items, &[8, 8]), PushOutcome::Overflowed);
        assert_eq!(overflowed(&c), 2);
        assert_eq!(c[END], 3, "end stops before the refused batch");
        assert_eq!(&items, &[7, 7, 7, 0]);
        reset(&mut c);
        assert_eq!(pending(&c) + overflowed(&c), 0);
    }
}
