//! A closed pipe ends any command quietly, the way `cat` ends in `cat FILE | head -1`: no
//! panic text, no exit code 101. Each command runs with its stdout (or stderr) connected to a
//! pipe whose reading end is already closed, so its first write fails for certain.

#![cfg(unix)]

use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A pipe whose reading end is closed: writing to the returned end fails with EPIPE.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe` writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "a pipe");
    // SAFETY: both descriptors were just opened by `pipe` and are owned here only.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

fn step5() -> PathBuf {
    traces().join("tutorial/step5-fencing-unfenced-5cead0d2686e.json")
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("traces-pipes");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `leaselab ARGS` with stdout into a closed pipe; stderr is captured.
fn with_closed_stdout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .current_dir(scratch())
        .stdin(Stdio::null())
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .expect("leaselab starts")
}

/// Quiet: no panic text, and either killed by SIGPIPE (like `cat`) or ended normally with an
/// exit code of the contract — never 101.
fn assert_quiet(what: &str, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{what}: {stderr}"
    );
    let status = output.status;
    let by_sigpipe = status.signal() == Some(libc::SIGPIPE);
    let by_contract = matches!(status.code(), Some(0..=3));
    assert!(
        by_sigpipe || by_contract,
        "{what}: ended with {status:?}\n{stderr}"
    );
}

#[test]
fn show_and_replay_end_quietly_when_stdout_is_closed() {
    let file = step5();
    let file = file.to_str().unwrap();
    let output = with_closed_stdout(&["show", file]);
    assert_quiet("show", &output);
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "show writes the timeline, so it meets the closed pipe"
    );
    let all = traces();
    let output = with_closed_stdout(&["replay", all.to_str().unwrap()]);
    assert_quiet("replay", &output);
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE));
}

#[test]
fn run_and_check_end_quietly_when_stdout_is_closed() {
    // `run` ignores a closed stdout itself and still exits with its verdict (1: BROKEN).
    let output = with_closed_stdout(&["run", "step1-race", "--no-save-traces"]);
    assert_quiet("run", &output);
    assert!(
        output.status.signal() == Some(libc::SIGPIPE) || output.status.code() == Some(1),
        "{:?}",
        output.status
    );
    let output = with_closed_stdout(&["check", "--safeguard", "fenced", "--no-save-traces"]);
    assert_quiet("check", &output);
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE));
}

#[test]
fn help_ends_quietly_when_stdout_is_closed() {
    for args in [&["--help"][..], &["show", "--help"], &["--version"]] {
        let output = with_closed_stdout(args);
        assert_quiet(&args.join(" "), &output);
    }
}

#[test]
fn a_closed_stderr_does_not_panic_either() {
    // The error message goes to a closed stderr: the process ends by SIGPIPE, not with 101.
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(["show", "no-such-trace.json"])
        .current_dir(scratch())
        .stdout(Stdio::null())
        .stderr(Stdio::from(closed_pipe()))
        .output()
        .unwrap();
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}",
        output.status
    );
}

#[test]
fn with_open_pipes_the_whole_output_arrives() {
    // The hook only swallows the broken-pipe panic; a normal run with open pipes prints its
    // output in full and exits by the contract (here 0: the trace shows).
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(["show", step5().to_str().unwrap(), "--width", "80"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("step5-fencing --unfenced"), "{stdout}");
}
