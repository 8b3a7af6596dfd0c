//! The discrete-event engine: virtual time, a pending-event queue, the run's random stream,
//! a virtual-time limit, and a registry of what agents wait for.
//!
//! # Model
//!
//! * **Virtual time** is an integer number of picoseconds ([`TimePs`]); it only moves when
//!   an event is popped (or by [`Engine::advance_now`]), never backwards.
//! * **Order**: events are dispatched by `(time, sequence number)`; the sequence number is
//!   the order of scheduling, so events scheduled for the same instant run first-in
//!   first-out. Nothing else (no addresses, no hashes, no wall clock) influences order.
//! * **Randomness**: one [`ChaCha8Rng`] seeded from the run's seed ([`Engine::rng`]);
//!   [`Engine::derive_rng`] gives independent, reproducible streams for sub-models.
//! * **Quiescence**: when no event is pending the run is over. If agents declared waits
//!   ([`Engine::wait`]) that nobody satisfied, the outcome is
//!   [`RunOutcome::Stalled`] with who waits for what; otherwise [`RunOutcome::Quiescent`].
//! * **Time limit**: [`Engine::set_time_limit`]; [`Engine::pop`] does not dispatch events
//!   later than the limit (they stay pending) and the outcome is [`RunOutcome::TimeLimit`].
//!
//! # Driving it
//!
//! Either call [`Engine::run`] with a handler, or write the loop yourself (the backend
//! does, to merge the engine with the interconnect model's own event times):
//!
//! ```
//! use switchyard_sim::engine::{Engine, RunOutcome};
//! let mut engine: Engine<&str> = Engine::new(7);
//! engine.schedule_in(1_000, "ping");
//! while let Some((t, ev)) = engine.pop() {
//!     assert_eq!((t, ev), (1_000, "ping"));
//! }
//! assert_eq!(engine.outcome(), RunOutcome::Quiescent);
//! ```
//!
//! # Performance
//!
//! The queue is a radix heap of `(time, serial, payload)` entries (see `queue.rs`: DES keys
//! are monotone, which a radix heap exploits). Payloads move with their keys a few times
//! each, so keep `E` small (tens of bytes; box anything large). `sim/benches/engine.rs`
//! measures the hold model with a million pending events: about 14.5 million events/s on
//! an idle Xeon core, 9-13 million per on-CPU second on the shared 2-core build machine
//! (`reports/bench/engine.json`).

mod log;
mod queue;
mod wait;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

pub use log::LogEntry;
pub use wait::{AgentName, WaitId};

use crate::error::SimError;
use queue::EventQueue;
use wait::WaitRegistry;

/// Virtual time (and durations) in picoseconds; the crate-wide definition.
pub use crate::time::TimePs;

/// Handle to a scheduled event, for [`Engine::cancel`]. Unique within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId {
    time_ps: TimePs,
    serial: u64,
}

impl EventId {
    /// The event's serial number: 0 for the first event scheduled in the run, then 1, ...
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The virtual time the event is scheduled for, in picoseconds.
    pub fn time_ps(&self) -> TimePs {
        self.time_ps
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// No event pending and no agent waiting: the run finished.
    Quiescent,
    /// No event pending but agents still wait for something that can now never happen.
    Stalled {
        /// `(agent, what it waits for)`, in the order the waits were declared.
        waiting: Vec<(AgentName, String)>,
    },
    /// Events are still pending but the next one is later than the time limit.
    TimeLimit,
}

/// A discrete-event engine over event payloads of type `E`.
pub struct Engine<E> {
    queue: EventQueue<E>,
    now_ps: TimePs,
    time_limit_ps: TimePs,
    next_serial: u64,
    events_processed: u64,
    seed: u64,
    rng: ChaCha8Rng,
    waits: WaitRegistry,
    log: Option<Vec<LogEntry>>,
}

impl<E> Engine<E> {
    /// A new engine at time 0, no time limit, with its random stream seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Engine {
            queue: EventQueue::new(),
            now_ps: 0,
            time_limit_ps: TimePs::MAX,
            next_serial: 0,
            events_processed: 0,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            waits: WaitRegistry::default(),
            log: None,
        }
    }

    /// Current virtual time in picoseconds.
    pub fn now(&self) -> TimePs {
        self.now_ps
    }

    /// The seed this run's random streams derive from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Schedules `event` at absolute time `at`.
    ///
    /// **Clamps**: a time in the past (`at < now`) is scheduled at `now` (it then runs after
    /// the events already scheduled for `now`). Use [`Engine::try_schedule_at`] to get an
    /// error instead.
    pub fn schedule_at(&mut self, at: TimePs, event: E) -> EventId {
        let at = at.max(self.now_ps);
        let serial = self.next_serial;
        self.next_serial += 1;
        self.queue.push(at, serial, event);
        let id = EventId { time_ps: at, serial };
        if let Some(log) = &mut self.log {
            log.push(LogEntry::Scheduled { now_ps: self.now_ps, id, at_ps: at });
        }
        id
    }

    /// Schedules `event` at absolute time `at`, or fails if `at` is in the past.
    pub fn try_schedule_at(&mut self, at: TimePs, event: E) -> Result<EventId, SimError> {
        if at < self.now_ps {
            return Err(SimError::ScheduleInPast { at_ps: at, now_ps: self.now_ps });
        }
        Ok(self.schedule_at(at, event))
    }

    /// Schedules `event` `delay_ps` after now (saturating at `TimePs::MAX`).
    pub fn schedule_in(&mut self, delay_ps: TimePs, event: E) -> EventId {
        self.schedule_at(self.now_ps.saturating_add(delay_ps), event)
    }

    /// Cancels a pending event. Returns `false` if it already ran or was cancelled.
    pub fn cancel(&mut self, id: EventId) -> bool {
        let done = self.queue.cancel(id.time_ps, id.serial);
        if done && let Some(log) = &mut self.log {
            log.push(LogEntry::Cancelled { now_ps: self.now_ps, id });
        }
        done
    }

    /// Time of the next pending event, whether or not it is past the time limit.
    pub fn peek_time(&self) -> Option<TimePs> {
        self.queue.peek_time()
    }

    /// Pops the next event and advances `now` to its time. Returns `None` when nothing is
    /// pending or the next event is later than the time limit (see [`Engine::outcome`]).
    pub fn pop(&mut self) -> Option<(TimePs, E)> {
        if self.time_limit_ps != TimePs::MAX && self.queue.peek_time()? > self.time_limit_ps {
            return None;
        }
        let popped = self.queue.pop()?;
        self.now_ps = popped.time_ps;
        self.events_processed += 1;
        if let Some(log) = &mut self.log {
            let id = EventId { time_ps: popped.time_ps, serial: popped.serial };
            log.push(LogEntry::Dispatched { id, at_ps: popped.time_ps });
        }
        Some((popped.time_ps, popped.event))
    }

    /// Moves virtual time forward to `time` without dispatching anything, for a driver that
    /// merges this engine with another event source (e.g. the interconnect model).
    ///
    /// Fails if `time` is in the past, later than the next pending event, or past the
    /// time limit.
    pub fn advance_now(&mut self, time: TimePs) -> Result<(), SimError> {
        if time < self.now_ps {
            return Err(SimError::ScheduleInPast { at_ps: time, now_ps: self.now_ps });
        }
        if let Some(next) = self.queue.peek_time()
            && time > next
        {
            return Err(SimError::AdvancePastPendingEvent { to_ps: time, next_event_ps: next });
        }
        if time > self.time_limit_ps {
            return Err(SimError::AdvancePastTimeLimit {
                to_ps: time,
                limit_ps: self.time_limit_ps,
            });
        }
        self.now_ps = time;
        Ok(())
    }

    /// The run's random stream. Every random draw of a simulated run must come from here
    /// (or from [`Engine::derive_rng`]).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// An independent random stream for a sub-model, reproducible from the run's seed and
    /// `stream` (ChaCha stream selection): the same `(seed, stream)` always gives the same
    /// sequence, whatever else the run drew.
    pub fn derive_rng(&self, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream.wrapping_add(1));
        rng
    }

    /// Number of pending (scheduled, not cancelled, not yet dispatched) events.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Sets the virtual-time limit: events later than `limit` are not dispatched.
    pub fn set_time_limit(&mut self, limit: TimePs) {
        self.time_limit_ps = limit;
    }

    /// The virtual-time limit (`TimePs::MAX` when none was set).
    pub fn time_limit(&self) -> TimePs {
        self.time_limit_ps
    }

    /// Number of events dispatched so far.
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Declares that `agent` waits for `what` (free text, e.g. "termination token from
    /// gpu2"). Reported by [`Engine::outcome`] if the run goes quiet before it is satisfied.
    pub fn wait(&mut self, agent: impl Into<AgentName>, what: impl Into<String>) -> WaitId {
        self.waits.wait(agent.into(), what.into())
    }

    /// Marks a wait satisfied. Returns `false` if it was already satisfied.
    pub fn satisfy(&mut self, id: WaitId) -> bool {
        self.waits.satisfy(id)
    }

    /// Satisfies every outstanding wait of `agent`; returns how many there were.
    pub fn satisfy_agent(&mut self, agent: &str) -> usize {
        self.waits.satisfy_agent(agent)
    }

    /// Outstanding waits, `(agent, what)`, in declaration order.
    pub fn waiting(&self) -> Vec<(AgentName, String)> {
        self.waits.outstanding()
    }

    /// The run's state as an outcome: meaningful once [`Engine::pop`] returned `None`.
    /// Pending events (necessarily past the time limit) give `TimeLimit`; otherwise
    /// outstanding waits give `Stalled`; otherwise `Quiescent`.
    pub fn outcome(&self) -> RunOutcome {
        if self.queue.len() > 0 {
            RunOutcome::TimeLimit
        } else if self.waits.len() > 0 {
            RunOutcome::Stalled { waiting: self.waits.outstanding() }
        } else {
            RunOutcome::Quiescent
        }
    }

    /// Runs to quiescence or the time limit, calling `handler(engine, event)` for every
    /// event (`engine.now()` is the event's time). Returns [`Engine::outcome`].
    pub fn run(&mut self, mut handler: impl FnMut(&mut Self, E)) -> RunOutcome {
        while let Some((_, event)) = self.pop() {
            handler(self, event);
        }
        self.outcome()
    }

    /// Switches the event log on (it starts empty). Off by default: it costs memory and
    /// time per event.
    pub fn enable_event_log(&mut self) {
        if self.log.is_none() {
            self.log = Some(Vec::new());
        }
    }

    /// The event log so far (empty if it is off).
    pub fn event_log(&self) -> &[LogEntry] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// A 64-bit fingerprint (FNV-1a) of the event log, for printing and comparing runs.
    pub fn event_log_digest(&self) -> u64 {
        log::digest(self.event_log())
    }
}
