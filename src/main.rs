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
    // Persistent kernels on several streams (Atos's workers, aggregators and watchdog reads,
    // per logical GPU) should not share a hardware queue: work queued behind a persistent
    // kernel on the same queue would never start. The driver's default of 8 queues is fewer
    // than four logical GPUs of three streams each; 32 is its maximum. A precaution: the
    // aggregated hang at 4 logical GPUs (first GPU run) ended with the atos2 kernels both
    // with 32 queues and with 8. Read when a context is created.
    if std::env::var_os("CUDA_DEVICE_MAX_CONNECTIONS").is_none() {
        // SAFETY: first thing in main, before any thread exists.
        unsafe { std::env::set_var("CUDA_DEVICE_MAX_CONNECTIONS", "32") };
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
