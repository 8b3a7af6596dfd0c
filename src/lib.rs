//! switchyard: asynchronous multi-GPU graph analytics on a deterministic simulator and on real GPUs.
//!
//! See `ARCHITECTURE.md` for the code map and the invariants.

pub mod algo;
pub mod backend;
pub mod driver;
pub mod graph;
pub mod runtime;
