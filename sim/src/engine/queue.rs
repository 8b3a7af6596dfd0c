//! The pending-event store: a radix heap of `(time, serial, payload)` entries.
//!
//! # Keys
//!
//! An entry's key is `(time_ps, serial)`, where `serial` counts scheduled events from 0:
//! comparing keys compares `(time, scheduling order)`, exactly the engine's dispatch order,
//! and a 64-bit serial never runs out. For bucketing, the key is read as the 128-bit number
//! `(time_ps << 64) | serial`.
//!
//! # Why a radix heap
//!
//! A discrete-event queue is *monotone*: every new key is larger than the last key popped
//! (its time is `>= now` and its serial is larger than every earlier one). A radix heap
//! exploits that. This one uses 8-bit digits: an entry lives in bucket `(level, digit)`,
//! where `level` is the highest 8-bit digit in which its key differs from the last popped
//! key and `digit` is the key's value there. Buckets in `(level, digit)` order hold
//! increasing key ranges; a level-0 bucket holds exactly one key. Pushing is an append;
//! popping takes the minimum of the lowest non-empty bucket and redistributes the rest of
//! that bucket into lower levels, so an entry moves at most 16 times and in practice two or
//! three (as many levels as the pending time span has digits), with sequential memory
//! access only. The payload travels with its key and there is no per-event side table, so
//! a pop touches no random memory. That is what makes a million pending events cheap (a
//! binary heap of that size spends its time in cache misses; a binary-digit radix heap
//! moves each entry about ten times; a payload slab costs a cache miss per pop).
//!
//! # Peeking and cancellation
//!
//! `peek_time` takes `&self`, so it finds the minimum by scanning the lowest non-empty
//! bucket without redistributing (redistributing would move the monotone bound past `now`)
//! and caches it. Cancellation is lazy and needs no per-event state: an event is still in
//! the queue iff its key is larger than the last key popped (keys leave in order), so
//! `cancel` checks that and records the serial in an ordered set; a cancelled entry is
//! dropped (and its serial forgotten) when it is popped.

use std::cell::Cell;
use std::collections::BTreeSet;

use super::TimePs;

/// A popped entry: time, serial number, payload.
pub(super) struct Popped<E> {
    pub time_ps: TimePs,
    pub serial: u64,
    pub event: E,
}

struct Entry<E> {
    time_ps: TimePs,
    serial: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> u128 {
        key(self.time_ps, self.serial)
    }
}

/// Bits per radix digit.
const DIGIT_BITS: u32 = 8;
/// Number of buckets: 16 levels (8-bit digits of a 128-bit key) x 256 digit values.
const BUCKETS: usize = 16 * 256;
/// Words of the non-empty bitmap.
const WORDS: usize = BUCKETS / 64;
/// Cache sentinel: minimum unknown. No real key equals it (serials stay below `u64::MAX`).
const UNKNOWN: u128 = u128::MAX;

/// Pending events ordered by (time, serial).
pub(super) struct EventQueue<E> {
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit `b` set iff `buckets[b]` is non-empty.
    nonempty: [u64; WORDS],
    /// Bit `w` set iff `nonempty[w] != 0`.
    summary: u64,
    /// The monotone bound: the last key popped. Every key still queued is larger (or equal
    /// before the first pop, when it is 0).
    last: u128,
    /// Whether anything was popped yet (before that, key 0 is still queued if pushed).
    popped_any: bool,
    /// The smallest live key, if known (`UNKNOWN` otherwise).
    min_cache: Cell<u128>,
    /// Serials of cancelled events still in the buckets.
    cancelled: BTreeSet<u64>,
    /// Entries in the buckets, cancelled ones included.
    entries: usize,
    /// Emptied bucket vectors, kept for reuse: recycling them keeps memory hot and stops
    /// every newly reached bucket from faulting in fresh pages.
    spare: Vec<Vec<Entry<E>>>,
}

fn key(time_ps: TimePs, serial: u64) -> u128 {
    ((time_ps as u128) << 64) | serial as u128
}

fn key_time(k: u128) -> TimePs {
    (k >> 64) as u64
}

/// Bucket of key `k` relative to the bound `last` (`k >= last`): `level * 256 + digit`.
fn bucket_of(k: u128, last: u128) -> usize {
    let x = k ^ last;
    let level = if x == 0 { 0 } else { (127 - x.leading_zeros()) / DIGIT_BITS };
    let digit = (k >> (level * DIGIT_BITS)) as usize & 0xff;
    level as usize * 256 + digit
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            nonempty: [0; WORDS],
            summary: 0,
            last: 0,
            popped_any: false,
            min_cache: Cell::new(UNKNOWN),
            cancelled: BTreeSet::new(),
            entries: 0,
            spare: Vec::new(),
        }
    }

    /// Number of live (not cancelled) pending events.
    pub fn len(&self) -> usize {
        self.entries - self.cancelled.len()
    }

    fn is_live(&self, serial: u64) -> bool {
        self.cancelled.is_empty() || !self.cancelled.contains(&serial)
    }

    fn put(&mut self, entry: Entry<E>) {
        let k = entry.key();
        debug_assert!(k >= self.last, "radix heap monotonicity violated");
        let b = bucket_of(k, self.last);
        if self.buckets[b].capacity() == 0
            && let Some(v) = self.spare.pop()
        {
            self.buckets[b] = v;
        }
        self.buckets[b].push(entry);
        self.nonempty[b >> 6] |= 1 << (b & 63);
        self.summary |= 1 << (b >> 6);
    }

    fn mark_empty(&mut self, b: usize) {
        self.nonempty[b >> 6] &= !(1 << (b & 63));
        if self.nonempty[b >> 6] == 0 {
            self.summary &= !(1 << (b >> 6));
        }
    }

    /// Index of the lowest non-empty bucket.
    fn lowest_nonempty(&self) -> Option<usize> {
        if self.summary == 0 {
            return None;
        }
        let w = self.summary.trailing_zeros() as usize;
        Some(w * 64 + self.nonempty[w].trailing_zeros() as usize)
    }

    /// Inserts an event. The caller guarantees monotonicity: `time_ps` is at least the time
    /// of the last pop and `serial` is larger than every serial pushed before.
    pub fn push(&mut self, time_ps: TimePs, serial: u64, event: E) {
        let k = key(time_ps, serial);
        let m = self.min_cache.get();
        if self.len() == 0 || (m != UNKNOWN && k < m) {
            self.min_cache.set(k);
        }
        self.put(Entry { time_ps, serial, event });
        self.entries += 1;
    }

    /// Time of the earliest live event.
    pub fn peek_time(&self) -> Option<TimePs> {
        self.min_live_key().map(key_time)
    }

    /// The smallest live key (cached).
    fn min_live_key(&self) -> Option<u128> {
        if self.len() == 0 {
            return None;
        }
        let m = self.min_cache.get();
        if m != UNKNOWN {
            return Some(m);
        }
        // Buckets are ordered: every key in bucket b is smaller than every key in b' > b.
        let mut words = self.nonempty;
        while let Some(b) = lowest_bit(&mut words) {
            let min =
                self.buckets[b].iter().filter(|e| self.is_live(e.serial)).map(|e| e.key()).min();
            if let Some(min) = min {
                self.min_cache.set(min);
                return Some(min);
            }
        }
        unreachable!("live events counted but no live key found")
    }

    /// Removes and returns the earliest live event.
    pub fn pop(&mut self) -> Option<Popped<E>> {
        if self.len() == 0 {
            return None;
        }
        // Pop entries in order until a live one comes out; any before it were cancelled.
        loop {
            let entry = self.pop_min_entry();
            self.entries -= 1;
            if self.cancelled.is_empty() || !self.cancelled.remove(&entry.serial) {
                self.min_cache.set(UNKNOWN);
                return Some(Popped {
                    time_ps: entry.time_ps,
                    serial: entry.serial,
                    event: entry.event,
                });
            }
        }
    }

    /// Removes the smallest entry from the buckets and makes its key the new bound. A
    /// level-0 bucket holds one entry; otherwise one pass finds the bucket's minimum and one
    /// redistributes the rest into lower levels.
    fn pop_min_entry(&mut self) -> Entry<E> {
        let b = self.lowest_nonempty().expect("pop_min_entry on an empty queue");
        self.popped_any = true;
        // A lone entry (always so at level 0, and the common case at the lowest time digit)
        // is the minimum: no scan, and the bucket keeps its vector.
        if self.buckets[b].len() == 1 {
            let min = self.buckets[b].pop().expect("one entry");
            self.mark_empty(b);
            self.last = min.key();
            return min;
        }
        debug_assert!(b >= 256, "a level-0 bucket holds one key");
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        self.mark_empty(b);
        // After a peek the minimum is known (and, with nothing cancelled, it is in this
        // bucket): extract it during the redistribution pass instead of scanning first.
        let known = self.min_cache.get();
        if known != UNKNOWN && self.cancelled.is_empty() {
            self.last = known;
            let mut min = None;
            for entry in bucket.drain(..) {
                if entry.key() == known {
                    min = Some(entry);
                } else {
                    self.put(entry);
                }
            }
            self.spare.push(bucket);
            return min.expect("the cached minimum is in the lowest bucket");
        }
        let (pos, _) = bucket
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| (e.time_ps, e.serial))
            .expect("non-empty bucket");
        let min = bucket.swap_remove(pos);
        self.last = min.key();
        for entry in bucket.drain(..) {
            self.put(entry);
        }
        self.spare.push(bucket);
        min
    }

    /// Cancels the event `(time_ps, serial)` if it is still queued and not cancelled.
    /// Returns whether it was cancelled.
    pub fn cancel(&mut self, time_ps: TimePs, serial: u64) -> bool {
        let k = key(time_ps, serial);
        // Keys leave in increasing order: a key at or below the bound has been popped.
        if (self.popped_any && k <= self.last) || self.entries == 0 {
            return false;
        }
        if !self.cancelled.insert(serial) {
            return false;
        }
        if self.min_cache.get() == k {
            self.min_cache.set(UNKNOWN);
        }
        true
    }
}

/// Clears and returns the lowest set bit index of a bitset.
fn lowest_bit(words: &mut [u64; WORDS]) -> Option<usize> {
    for (i, w) in words.iter_mut().enumerate() {
        if *w != 0 {
            let b = w.trailing_zeros() as usize;
            *w &= *w - 1;
            return Some(i * 64 + b);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    #[test]
    fn equal_times_pop_in_push_order_and_cancelled_are_skipped() {
        let mut q = EventQueue::new();
        for i in 0..6u64 {
            q.push(50 - i, i, i);
        }
        assert!(q.cancel(48, 2));
        assert!(!q.cancel(48, 2), "second cancel of the same event");
        let mut got = Vec::new();
        for i in 6..20u64 {
            q.push(10, i, i);
            let p = q.pop().unwrap();
            got.push((p.time_ps, p.event));
        }
        for i in 20..25u64 {
            q.push(10, i, i);
        }
        got.extend(std::iter::from_fn(|| q.pop().map(|p| (p.time_ps, p.event))));
        let mut expected: Vec<(u64, u64)> = (6..25).map(|i| (10, i)).collect();
        expected.extend([(45, 5), (46, 4), (47, 3), (49, 1), (50, 0)]);
        assert_eq!(got, expected);
        assert_eq!(q.len(), 0);
        // Popped events cannot be cancelled.
        assert!(!q.cancel(50, 0));
        q.push(60, 100, 100);
        assert!(!q.cancel(10, 24));
        assert!(q.cancel(60, 100));
        assert_eq!(q.len(), 0);
        assert_eq!(q.peek_time(), None);
    }

    /// Random pushes (monotone, as the engine guarantees), pops, cancels and peeks, checked
    /// against an ordered map keyed by (time, serial).
    #[test]
    fn matches_an_ordered_map_reference() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
            let mut handles: Vec<(u64, u64)> = Vec::new(); // serial, time
            let mut now = 0u64;
            let mut serial = 0u64;
            for _ in 0..5_000 {
                match rng.random_range(0..10u32) {
                    0..=4 => {
                        // Mostly near, sometimes far: exercises several radix levels.
                        let span = if rng.random_range(0..4u32) == 0 { 1 << 40 } else { 50 };
                        let t = now + rng.random_range(0..span);
                        q.push(t, serial, serial);
                        reference.insert((t, serial), ());
                        handles.push((serial, t));
                        serial += 1;
                    }
                    5..=7 => {
                        let expected = reference.pop_first();
                        let got = q.pop();
                        match (expected, got) {
                            (None, None) => {}
                            (Some(((t, s), _)), Some(p)) => {
                                assert_eq!((t, s), (p.time_ps, p.event), "seed {seed}");
                                now = t;
                            }
                            (e, g) => panic!("seed {seed}: {e:?} vs {:?}", g.map(|p| p.event)),
                        }
                    }
                    8 => {
                        if !handles.is_empty() {
                            let i = rng.random_range(0..handles.len());
                            let (s, t) = handles.swap_remove(i);
                            let was = reference.remove(&(t, s)).is_some();
                            assert_eq!(q.cancel(t, s), was, "seed {seed}");
                        }
                    }
                    _ => {
                        let expected = reference.keys().next().map(|(t, _)| *t);
                        assert_eq!(q.peek_time(), expected, "seed {seed}");
                    }
                }
                assert_eq!(q.len(), reference.len());
            }
        }
    }
}
