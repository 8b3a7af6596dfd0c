//! Interconnect models: how long a transfer between two endpoints of a [`Fabric`](crate::fabric::Fabric) takes,
//! given everything else in flight.
//!
//! Two fidelities behind one API ([`Interconnect`]), chosen by [`Fidelity`]:
//!
//! * [`Fidelity::Flow`]: every transfer is a fluid flow over its route's channels; rates are
//!   max-min fair (progressive filling) and recomputed whenever a flow starts or finishes.
//!   Fast: events per transfer, not per packet. See `flow.rs`.
//! * [`Fidelity::Packet`]: every transfer is cut into packets that are stored and forwarded
//!   hop by hop through a FIFO per channel direction, so packetization overhead and
//!   head-of-line blocking appear by themselves. See `packet.rs`.
//!
//! Both share the front end in [`InterconnectModel`], which handles what does not depend on
//! fidelity (see `model.rs`):
//!
//! * **Copy engines**: an endpoint with `copy_engines = k` sources at most `k` transfer
//!   legs at once; further legs from it wait in FIFO (submission) order.
//! * **Staging**: a GPU pair whose route has `peer_access == false` is copied GPU -> host
//!   memory -> GPU (seed 000 section 2.1, "indirect copy"); the copy completes when the
//!   second leg does. The host memory is the one nearest the source (see [`bounds::plan_legs`]).
//! * **Application-level packets** ([`TransferRequest::packet_bytes`], Groute's links): the
//!   transfer is sent as a sequence of separate copies of at most that many bytes, one after
//!   the other on the engine, each paying the route latency; on a staged copy the two legs
//!   pipeline chunk by chunk.
//!
//! The model is **passive**: it owns no event loop. The driver (the simulator backend)
//! merges [`Interconnect::next_event_time`] with its own queue and calls
//! [`Interconnect::advance_to`], which returns the completions in `(time, id)` order:
//!
//! ```
//! use switchyard_sim::engine::Engine;
//! use switchyard_sim::fabric::*;
//! use switchyard_sim::interconnect::*;
//!
//! // Two GPUs, one 10 GB/s channel each way, 1 us latency.
//! let mut fabric = Fabric::default();
//! for i in 0..2 {
//!     let kind = EndpointKind::Gpu { index: i };
//!     fabric.endpoints.push(Endpoint { name: format!("gpu{i}"), kind, copy_engines: 2 });
//!     fabric.channels.push(Channel {
//!         name: format!("link{i}"),
//!         bandwidth_bytes_per_s: 10_000_000_000,
//!         latency_ps: 1_000_000,
//!         max_payload_bytes: 4096,
//!         header_bytes: 0,
//!     });
//! }
//! let (g0, g1) = (EndpointId(0), EndpointId(1));
//! fabric.routes.insert((g0, g1), Route { channels: vec![ChannelId(0)], peer_access: true });
//! fabric.routes.insert((g1, g0), Route { channels: vec![ChannelId(1)], peer_access: true });
//!
//! enum Ev { Send(u64) }
//! let mut engine: Engine<Ev> = Engine::new(42);
//! let mut net = InterconnectModel::new(&fabric, Fidelity::Flow);
//! engine.schedule_at(0, Ev::Send(1_000_000));
//! let mut done = Vec::new();
//! loop {
//!     // Whichever comes first: the engine's next event or the network's.
//!     match (engine.peek_time(), net.next_event_time()) {
//!         (Some(e), n) if n.is_none_or(|n| e <= n) => {
//!             let (now, Ev::Send(bytes)) = engine.pop().unwrap();
//!             let req = TransferRequest { src: g0, dst: g1, bytes, packet_bytes: None };
//!             net.submit(now, TransferId(0), req).unwrap();
//!         }
//!         (_, Some(n)) => {
//!             engine.advance_now(n).unwrap();
//!             net.advance_to(n, &mut done); // react to completions here
//!         }
//!         _ => break, // both idle
//!     }
//! }
//! // 1 MB at 10 GB/s = 100 us, plus 1 us of latency.
//! assert_eq!(done, vec![Completion { id: TransferId(0), time_ps: 101_000_000 }]);
//! ```
//!
//! # Determinism
//!
//! Same fabric, same submissions, same fidelity: same completion times, on every run and
//! platform. Times are integer picoseconds rounded up; the flow model's fair shares are
//! computed in `f64` with a fixed operation order (IEEE basic operations only, no fused or
//! transcendental functions, so every platform rounds identically) and then floored to whole
//! bytes per second, after which all progress arithmetic is exact integers; all collections
//! whose order matters are ordered (`BTreeMap`, `Vec`).

pub mod bounds;
mod flow;
mod model;
mod packet;
mod transport;

pub use bounds::{LegPlan, plan_legs, transfer_floor_ps};
pub use model::{InterconnectModel, ModelLogEntry};

use crate::error::SimError;
use crate::fabric::EndpointId;
use crate::time::TimePs;

/// Identifies a transfer; chosen by the caller, unique among transfers in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransferId(pub u64);

/// A copy to perform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferRequest {
    /// Source endpoint.
    pub src: EndpointId,
    /// Destination endpoint.
    pub dst: EndpointId,
    /// Payload bytes.
    pub bytes: u64,
    /// Application-level packetization (Groute links): send as separate copies of at most
    /// this many bytes, one after the other. `None`: one copy.
    pub packet_bytes: Option<u64>,
}

/// A finished transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Completion {
    /// Which transfer.
    pub id: TransferId,
    /// When its last byte arrived, in picoseconds of virtual time.
    pub time_ps: TimePs,
}

/// A transfer that an injected link failure left without a route (see [`crate::fault`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferFailure {
    /// Which transfer.
    pub id: TransferId,
    /// When it failed, in picoseconds of virtual time.
    pub time_ps: TimePs,
    /// The failed links and the endpoints no route joins any more.
    pub message: String,
}

/// Traffic counters of one directed channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Bytes put on the wire, packet headers included.
    pub bytes_carried: u64,
    /// Time the channel was transmitting, in picoseconds. Packet model: the sum of packet
    /// serialization times. Flow model: time during which at least one flow was
    /// transmitting on it (for utilisation, prefer `bytes_carried` over bandwidth x time).
    pub busy_ps: TimePs,
    /// Packets carried (the flow model counts the packets the transfer would be cut into).
    pub packets: u64,
}

impl ChannelStats {
    /// Fraction of `bandwidth_bytes_per_s x elapsed_ps` that was used (0 when `elapsed_ps`
    /// is 0).
    pub fn utilisation(&self, bandwidth_bytes_per_s: u64, elapsed_ps: TimePs) -> f64 {
        let capacity = bandwidth_bytes_per_s as f64 * elapsed_ps as f64 / 1e12;
        if capacity > 0.0 { self.bytes_carried as f64 / capacity } else { 0.0 }
    }
}

/// Which interconnect model a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fidelity {
    /// Flow-level max-min fair sharing.
    Flow,
    /// Packet-level store-and-forward with a FIFO per channel direction.
    Packet,
}

impl Fidelity {
    /// Lower-case name, as printed in reports (`flow`, `packet`).
    pub fn name(&self) -> &'static str {
        match self {
            Fidelity::Flow => "flow",
            Fidelity::Packet => "packet",
        }
    }
}

impl std::fmt::Display for Fidelity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A passive interconnect model: transfers are submitted and complete as events that the
/// driver collects with [`Interconnect::advance_to`].
pub trait Interconnect {
    /// Starts transfer `id` at virtual time `now`. Errors (and changes nothing) when an
    /// endpoint does not exist, there is no route, the id is in flight, `now` is earlier
    /// than a time already advanced to, or the packet size is 0.
    fn submit(
        &mut self,
        now: TimePs,
        id: TransferId,
        request: TransferRequest,
    ) -> Result<(), SimError>;

    /// Time of the next internal event (a completion or a rate/queue change), if any.
    fn next_event_time(&self) -> Option<TimePs>;

    /// Processes everything up to and including `time` and appends every completion with
    /// `time_ps <= time`, in `(time_ps, id)` order.
    fn advance_to(&mut self, time: TimePs, completed: &mut Vec<Completion>);

    /// Per-channel counters, indexed like [`Fabric::channels`](crate::fabric::Fabric::channels).
    fn channel_stats(&self) -> &[ChannelStats];

    /// Transfers that failed since the last call (injected link failures; see
    /// [`InterconnectModel::with_faults`]). A failed transfer never completes.
    fn take_failures(&mut self) -> Vec<TransferFailure> {
        Vec::new()
    }
}
