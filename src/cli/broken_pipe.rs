//! A closed standard output or error ends the process quietly, for every command at once.
//!
//! `leaselab show T.json | head -1` closes the pipe after one line. Rust ignores `SIGPIPE`, so
//! the next `println!` fails with `EPIPE` and panics ("failed printing to stdout: Broken
//! pipe"). Restoring `SIGPIPE`'s default disposition would fix that, but the same process also
//! talks to real servers over TCP (`serve`, the real mode's clients), where a peer that hangs up
//! must be an error the command reports, not a signal that kills it silently.
//!
//! So `SIGPIPE` stays ignored, and a panic hook recognises the one panic the standard library
//! raises for a broken standard stream and ends the process the way `cat` ends in the same
//! pipeline: killed by `SIGPIPE` (exit status 141 in a shell), with no text. Every other panic
//! goes to the previous hook unchanged.

use std::panic::PanicHookInfo;

/// Installs the hook. Call once, first thing in `main`.
pub fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_broken_standard_stream(info) {
            end_quietly();
        }
        previous(info);
    }));
}

/// True for the standard library's panic on writing to a closed stdout or stderr.
fn is_broken_standard_stream(info: &PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    is_broken_pipe_message(message)
}

/// The message `print!` and `eprint!` panic with when the stream's reader is gone.
fn is_broken_pipe_message(message: &str) -> bool {
    let stream = message.starts_with("failed printing to stdout")
        || message.starts_with("failed printing to stderr");
    let epipe = message.contains("Broken pipe") || message.contains("os error 32");
    stream && epipe
}

/// Ends the process like a program with the default `SIGPIPE` disposition.
fn end_quietly() -> ! {
    #[cfg(unix)]
    // SAFETY: resetting a signal's disposition and raising it are async-signal-safe calls
    // with valid arguments; the process ends in `raise`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Not reached on unix; elsewhere, the conventional status of a process ended by SIGPIPE.
    std::process::exit(128 + 13)
}

#[cfg(test)]
mod tests {
    use super::is_broken_pipe_message;

    #[test]
    fn only_the_standard_streams_broken_pipe_panic_is_recognised() {
        assert!(is_broken_pipe_message(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_broken_pipe_message(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_broken_pipe_message(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
        assert!(!is_broken_pipe_message("Broken pipe (os error 32)"));
        assert!(!is_broken_pipe_message("index out of bounds"));
    }
}
