//! The `switchyard` command line.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`switchyard ... | head`) would
    // panic; a command-line tool should end quietly instead, as the shell expects.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", error_text(&error));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each cause once: a cause whose text the message already
/// quotes (many errors name their OS error themselves) is not repeated.
fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
