//! What the tests against real servers share: reading the server URL from the environment
//! (or saying in one line why a test is skipped), reporting past cargo's output capture, the
//! number of generated cases, and a tokio runtime.

#![allow(dead_code)]

pub mod bad_input;

use std::io::Write as _;

/// The URL in `var`, or `None` after printing one line saying why `test` is skipped;
/// `example` shows a URL to set, `server` names what is not compared.
pub fn server_url(var: &str, test: &str, example: &str, server: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            report(&format!(
                "{test}: skipped: {var} is not set (e.g. {example}); the stand-in is not compared with a real {server}"
            ));
            None
        }
    }
}

/// Prints a line on the real stderr, which cargo's output capture does not swallow (so that
/// a skip or a summary shows in every run), in one piece even while other tests print.
pub fn report(line: &str) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("{line}\n").as_bytes());
}

/// The number of generated cases: `PROPTEST_CASES` if set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

/// A current-thread tokio runtime with time and IO.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Runs the `leaselab` binary with `args` in `dir`, failing the test if it panicked.
pub fn leaselab_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("leaselab runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    output
}
