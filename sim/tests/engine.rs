//! Engine behaviour: ordering, cancellation, time limit, stall reporting, determinism.

use rand::RngExt;
use switchyard_sim::SimError;
use switchyard_sim::engine::{Engine, LogEntry, RunOutcome};

#[test]
fn events_run_in_time_order_and_fifo_within_a_time() {
    let mut e: Engine<u32> = Engine::new(1);
    e.schedule_at(30, 0);
    e.schedule_at(10, 1);
    e.schedule_at(20, 2);
    e.schedule_at(10, 3);
    e.schedule_at(10, 4);
    let order: Vec<(u64, u32)> = std::iter::from_fn(|| e.pop()).collect();
    assert_eq!(order, vec![(10, 1), (10, 3), (10, 4), (20, 2), (30, 0)]);
    assert_eq!(e.now(), 30);
    assert_eq!(e.events_processed(), 5);
    assert_eq!(e.outcome(), RunOutcome::Quiescent);
}

#[test]
fn schedule_at_in_the_past_clamps_to_now_and_try_schedule_at_errors() {
    let mut e: Engine<&str> = Engine::new(1);
    e.schedule_at(100, "a");
    assert_eq!(e.pop(), Some((100, "a")));
    let id = e.schedule_at(50, "late");
    assert_eq!(id.time_ps(), 100, "clamped to now");
    let err = e.try_schedule_at(50, "late").unwrap_err();
    assert!(matches!(err, SimError::ScheduleInPast { at_ps: 50, now_ps: 100 }));
    assert!(err.to_string().contains("fix:"), "{err}");
    assert_eq!(e.pop(), Some((100, "late")));
}

#[test]
fn cancel_removes_pending_events_only() {
    let mut e: Engine<u32> = Engine::new(1);
    let a = e.schedule_at(10, 1);
    let b = e.schedule_at(20, 2);
    let c = e.schedule_at(10, 3);
    assert_eq!(e.pending(), 3);
    assert!(e.cancel(a));
    assert!(!e.cancel(a), "cancelling twice");
    assert_eq!(e.pending(), 2);
    assert_eq!(e.peek_time(), Some(10), "event 3 is still at 10");
    assert_eq!(e.pop(), Some((10, 3)));
    assert!(!e.cancel(c), "already dispatched");
    assert!(e.cancel(b));
    assert_eq!(e.peek_time(), None);
    assert_eq!(e.pop(), None);
    assert_eq!(e.events_processed(), 1);
}

#[test]
fn time_limit_stops_before_later_events_and_reports_it() {
    let mut e: Engine<u32> = Engine::new(1);
    e.set_time_limit(100);
    e.schedule_at(50, 1);
    e.schedule_at(100, 2);
    e.schedule_at(101, 3);
    let got: Vec<u32> = std::iter::from_fn(|| e.pop().map(|(_, x)| x)).collect();
    assert_eq!(got, vec![1, 2]);
    assert_eq!(e.outcome(), RunOutcome::TimeLimit);
    assert_eq!(e.pending(), 1);
    assert_eq!(e.now(), 100);
    assert!(matches!(e.advance_now(150), Err(SimError::AdvancePastPendingEvent { .. })));
}

#[test]
fn a_wait_nobody_satisfies_is_reported_as_a_stall() {
    let mut e: Engine<&str> = Engine::new(1);
    let w0 = e.wait("gpu0", "termination token");
    let _w1 = e.wait("router", "segment 7 from gpu3");
    e.schedule_at(5, "token");
    let outcome = e.run(|e, ev| {
        if ev == "token" {
            assert!(e.satisfy(w0));
        }
    });
    assert_eq!(
        outcome,
        RunOutcome::Stalled {
            waiting: vec![("router".to_string(), "segment 7 from gpu3".to_string())]
        }
    );
    assert_eq!(e.satisfy_agent("router"), 1);
    assert_eq!(e.outcome(), RunOutcome::Quiescent);
}

#[test]
fn advance_now_moves_time_without_skipping_events() {
    let mut e: Engine<u32> = Engine::new(1);
    e.schedule_at(100, 1);
    e.advance_now(40).unwrap();
    assert_eq!(e.now(), 40);
    assert!(matches!(e.advance_now(30), Err(SimError::ScheduleInPast { .. })));
    assert!(e.advance_now(101).is_err());
    e.advance_now(100).unwrap();
    assert_eq!(e.pop(), Some((100, 1)));
}

#[test]
fn derived_streams_depend_only_on_seed_and_stream() {
    let mut a: Engine<()> = Engine::new(9);
    let b: Engine<()> = Engine::new(9);
    let _ = a.rng().random::<u64>(); // draws from the main stream do not disturb streams
    let xa: Vec<u64> = (0..4).map(|_| 0).scan(a.derive_rng(3), |r, _| Some(r.random())).collect();
    let xb: Vec<u64> = (0..4).map(|_| 0).scan(b.derive_rng(3), |r, _| Some(r.random())).collect();
    assert_eq!(xa, xb);
    let other: Vec<u64> =
        (0..4).map(|_| 0).scan(b.derive_rng(4), |r, _| Some(r.random())).collect();
    assert_ne!(xa, other);
}

/// A small randomized scenario: agents that reschedule themselves with random delays and
/// sometimes cancel each other's events. Returns (event log, dispatch order).
fn scenario(seed: u64) -> (Vec<LogEntry>, Vec<(u64, u32)>, u64) {
    let mut e: Engine<u32> = Engine::new(seed);
    e.enable_event_log();
    let mut pending = Vec::new();
    for agent in 0..8u32 {
        let d = e.rng().random_range(0..1_000u64);
        pending.push(e.schedule_in(d, agent));
    }
    let mut order = Vec::new();
    while let Some((t, agent)) = e.pop() {
        order.push((t, agent));
        if order.len() >= 2_000 {
            break;
        }
        let d = e.rng().random_range(0..1_000u64);
        pending.push(e.schedule_in(d, agent));
        if e.rng().random_range(0..10u32) == 0 {
            let i = e.rng().random_range(0..pending.len());
            let id = pending.swap_remove(i);
            if e.cancel(id) {
                let d = e.rng().random_range(0..1_000u64);
                pending.push(e.schedule_in(d, agent));
            }
        }
    }
    (e.event_log().to_vec(), order, e.event_log_digest())
}

#[test]
fn same_seed_gives_identical_event_logs() {
    for seed in [0u64, 1, 0xdead_beef] {
        let (log_a, order_a, digest_a) = scenario(seed);
        let (log_b, order_b, digest_b) = scenario(seed);
        assert!(log_a.len() > 4_000, "the scenario ran: {} entries", log_a.len());
        assert_eq!(log_a, log_b, "SEED={seed}: event logs differ");
        assert_eq!(order_a, order_b);
        assert_eq!(digest_a, digest_b);
        assert!(log_a.iter().any(|e| matches!(e, LogEntry::Cancelled { .. })));
    }
    assert_ne!(scenario(1).2, scenario(2).2, "different seeds give different runs");
}

#[test]
fn event_log_is_off_by_default() {
    let mut e: Engine<u32> = Engine::new(1);
    e.schedule_at(1, 1);
    e.pop();
    assert!(e.event_log().is_empty());
}
