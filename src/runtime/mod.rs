//! Runtimes, written once against [`crate::backend::Backend`]. Architecture invariant: no
//! runtime knows which backend it runs on.

pub mod bsp;
pub mod groute;
pub mod gum;
mod outcome;

pub use outcome::{GrouteReport, Outcome, WorkReport};

use crate::backend::{Backend, BackendError, Completion, Token};

/// Errors of a runtime run.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The backend failed (out of memory, kernel error, deadlock...).
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Options that cannot work together or do not fit the input.
    #[error("{0}")]
    Options(String),
}

/// Waits until every token in `tokens` has completed and returns their completions in
/// completion order. Any other completion is an error (a runtime bug).
pub fn wait_all<B: Backend + ?Sized>(
    backend: &mut B,
    tokens: &[Token],
) -> Result<Vec<Completion>, RuntimeError> {
    let mut remaining: std::collections::BTreeSet<Token> = tokens.iter().copied().collect();
    let mut done = Vec::with_capacity(tokens.len());
    while !remaining.is_empty() {
        let Some(completion) = backend.next_completion()? else {
            return Err(BackendError::Deadlock(format!(
                "nothing is outstanding but {} operations never completed",
                remaining.len()
            ))
            .into());
        };
        if !remaining.remove(&completion.token) {
            return Err(BackendError::Usage(format!(
                "unexpected completion {:?}",
                completion.token
            ))
            .into());
        }
        done.push(completion);
    }
    Ok(done)
}
