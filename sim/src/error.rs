//! The simulator's error type. Shared by every module of the crate: add variants, do not
//! change existing ones. Every user-facing error names the file, the line and the fix.

use thiserror::Error;

/// Everything that can go wrong in the simulator that is the user's to fix.
#[derive(Debug, Error)]
pub enum SimError {
    /// A topology file is malformed or inconsistent.
    #[error("{file}:{line}: {message}\n  fix: {fix}")]
    Topology {
        /// The file (path, or `bundled:NAME` for an embedded topology).
        file: String,
        /// 1-based line of the offending text (1 when the problem is the whole file).
        line: usize,
        /// What is wrong.
        message: String,
        /// How to fix it.
        fix: String,
    },
    /// A topology file could not be read.
    #[error(
        "{file}: cannot read topology file: {source}\n  fix: check the path, or run `switchyard topo list` for the bundled names"
    )]
    TopologyIo {
        /// The path that was tried.
        file: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A bundled topology name that does not exist.
    #[error(
        "no bundled topology named `{name}`\n  fix: use one of: {known}, or give the path of a .toml file"
    )]
    UnknownTopology {
        /// The name asked for.
        name: String,
        /// The bundled names, comma-separated.
        known: String,
    },
    /// An event was scheduled (with `try_schedule_at`) at a time before the present.
    #[error(
        "cannot schedule an event at {at_ps} ps: virtual time is already {now_ps} ps\n  fix: schedule at or after `engine.now()`, or use `schedule_at`, which clamps to now"
    )]
    ScheduleInPast {
        /// The requested time in picoseconds.
        at_ps: u64,
        /// The engine's current time in picoseconds.
        now_ps: u64,
    },
    /// `advance_now` was asked to skip over a pending event.
    #[error(
        "cannot advance virtual time to {to_ps} ps: an event is pending at {next_event_ps} ps\n  fix: pop the pending events first (advance to at most `engine.peek_time()`)"
    )]
    AdvancePastPendingEvent {
        /// The requested time in picoseconds.
        to_ps: u64,
        /// Time of the earliest pending event in picoseconds.
        next_event_ps: u64,
    },
    /// `advance_now` was asked to go past the run's time limit.
    #[error(
        "cannot advance virtual time to {to_ps} ps: the run's time limit is {limit_ps} ps\n  fix: raise the limit with `set_time_limit`, or stop the run at the limit"
    )]
    AdvancePastTimeLimit {
        /// The requested time in picoseconds.
        to_ps: u64,
        /// The time limit in picoseconds.
        limit_ps: u64,
    },
    /// A transfer names an endpoint the fabric does not have.
    #[error(
        "transfer {transfer}: endpoint #{endpoint} does not exist (the machine has {count} endpoints)\n  fix: use an EndpointId from the loaded fabric (e.g. `fabric.gpu(i)`)"
    )]
    UnknownEndpoint {
        /// The transfer's id.
        transfer: u64,
        /// The endpoint index given.
        endpoint: u32,
        /// Number of endpoints in the fabric.
        count: usize,
    },
    /// A transfer between two endpoints with no route in the fabric.
    #[error(
        "transfer {transfer}: no route from `{src}` to `{dst}`\n  fix: add a link path between them in the topology file, or send via an endpoint both can reach"
    )]
    NoRoute {
        /// The transfer's id.
        transfer: u64,
        /// Source endpoint name.
        src: String,
        /// Destination endpoint name.
        dst: String,
    },
    /// A GPU pair without peer access, and no host memory both can reach to stage through.
    #[error(
        "transfer {transfer}: `{src}` and `{dst}` have no peer access and no host memory endpoint reachable from both to stage the copy through\n  fix: add a host memory (socket) with routes to both GPUs in the topology file, or give the pair peer access"
    )]
    NoStagingPath {
        /// The transfer's id.
        transfer: u64,
        /// Source endpoint name.
        src: String,
        /// Destination endpoint name.
        dst: String,
    },
    /// A transfer from an endpoint to itself.
    #[error(
        "transfer {transfer}: source and destination are both `{endpoint}`\n  fix: a device-local copy is a memory operation, not an interconnect transfer: cost it with the GPU model"
    )]
    SelfTransfer {
        /// The transfer's id.
        transfer: u64,
        /// The endpoint name.
        endpoint: String,
    },
    /// A transfer id that is already in flight.
    #[error(
        "transfer {transfer}: this id is already in flight\n  fix: give every transfer a fresh TransferId (e.g. a counter)"
    )]
    DuplicateTransfer {
        /// The transfer's id.
        transfer: u64,
    },
    /// An application-level packet size of zero.
    #[error(
        "transfer {transfer}: packet_bytes is 0\n  fix: use None for an unpacketized transfer, or a packet size of at least 1 byte"
    )]
    ZeroPacketSize {
        /// The transfer's id.
        transfer: u64,
    },
    /// A transfer submitted at a time before one the model was already advanced to.
    #[error(
        "transfer {transfer}: submitted at {at_ps} ps but the interconnect model is already at {clock_ps} ps\n  fix: submit at or after the last time passed to `advance_to` (drive the model in time order)"
    )]
    SubmitInPast {
        /// The transfer's id.
        transfer: u64,
        /// The submission time in picoseconds.
        at_ps: u64,
        /// The model's current time in picoseconds.
        clock_ps: u64,
    },
    /// A transfer whose source endpoint has no copy engine, so it could never start.
    #[error(
        "transfer {transfer}: endpoint `{endpoint}` has copy_engines = 0, so it can never send\n  fix: give the endpoint at least one copy engine in the topology (GPUs default to 2)"
    )]
    NoCopyEngine {
        /// The transfer's id.
        transfer: u64,
        /// The endpoint's name.
        endpoint: String,
    },
    /// A fault (`--fault`) that is malformed or does not fit the machine.
    #[error("fault `{spec}`: {message}\n  fix: {fix}")]
    FaultSpec {
        /// The fault as written.
        spec: String,
        /// What is wrong.
        message: String,
        /// How to fix it.
        fix: String,
    },
    /// A transfer that an injected link failure left without a route.
    #[error("transfer {transfer}: {message}")]
    LinkFault {
        /// The transfer's id.
        transfer: u64,
        /// The failed links and the endpoints no route joins any more.
        message: String,
    },
}
