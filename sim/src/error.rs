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
    #[error("{file}: cannot read topology file: {source}\n  fix: check the path, or run `switchyard topo list` for the bundled names")]
    TopologyIo {
        /// The path that was tried.
        file: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A bundled topology name that does not exist.
    #[error("no bundled topology named `{name}`\n  fix: use one of: {known}, or give the path of a .toml file")]
    UnknownTopology {
        /// The name asked for.
        name: String,
        /// The bundled names, comma-separated.
        known: String,
    },
}
