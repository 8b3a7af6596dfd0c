//! switchyard-sim: a deterministic discrete-event simulator of multi-GPU machines.
//!
//! It knows nothing of graphs or runtimes: it models virtual time, events, interconnects
//! (flow-level and packet-level) and GPU costs, and loads machines from TOML topology files.

pub mod engine;
pub mod error;
pub mod fabric;
pub mod fault;
pub mod gpu;
pub mod interconnect;
pub mod time;
pub mod topology;

pub use error::SimError;
pub use time::TimePs;
