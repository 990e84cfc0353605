//! The harness of the bad-input suites (`tests/bad_input_*.rs`): run the `leaselab` binary with
//! hostile or careless input and assert what a user must see — the documented exit code, no
//! panic text, a message on stderr that names the problem — within a deadline (a hang fails the
//! case instead of hanging the suite).

#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One bad input and what the user must see.
pub struct Case {
    /// A short name for failure messages.
    pub name: &'static str,
    /// The arguments after `leaselab`.
    pub args: Vec<String>,
    /// Bytes on standard input (none: stdin is closed).
    pub stdin: Option<Vec<u8>>,
    /// The exit code the contract demands (0, 1, 2 or 3).
    pub code: i32,
    /// Text stderr (or, for exit 0/1/3, stdout or stderr) must contain, case-insensitive; each
    /// must appear.
    pub says: Vec<&'static str>,
    /// How long the command may take before the case fails as a hang.
    pub deadline: Duration,
    /// The directory to run in (None: a fresh temporary directory, so no traces land in the
    /// work tree).
    pub dir: Option<PathBuf>,
}

impl Case {
    /// A case: `leaselab ARGS` must exit with `code` and say each of `says`.
    pub fn new(name: &'static str, args: &[&str], code: i32, says: &[&'static str]) -> Case {
        Case {
            name,
            args: args.iter().map(|a| a.to_string()).collect(),
            stdin: None,
            code,
            says: says.to_vec(),
            deadline: Duration::from_secs(60),
            dir: None,
        }
    }

    /// The same case with owned arguments (paths made at run time).
    pub fn with_args(mut self, args: Vec<String>) -> Case {
        self.args = args;
        self
    }

    /// The same case with these bytes on stdin.
    pub fn stdin(mut self, bytes: &[u8]) -> Case {
        self.stdin = Some(bytes.to_vec());
        self
    }

    /// The same case run in `dir`.
    pub fn in_dir(mut self, dir: PathBuf) -> Case {
        self.dir = Some(dir);
        self
    }

    /// The same case with another deadline.
    pub fn deadline(mut self, deadline: Duration) -> Case {
        self.deadline = deadline;
        self
    }
}

/// What one run of the binary gave.
pub struct Outcome {
    /// The exit code (None: killed by a signal or at the deadline).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// True when the deadline killed it.
    pub timed_out: bool,
}

/// A fresh scratch directory under the target directory, removed by nobody in particular (the
/// target directory is scratch space).
pub fn scratch(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad-input");
    let dir = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// Runs `leaselab` as the case says, killing it at the deadline.
pub fn run(case: &Case) -> Outcome {
    let dir = case.dir.clone().unwrap_or_else(|| scratch(case.name));
    let mut child = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(&case.args)
        .current_dir(&dir)
        .env_remove("LEASELAB_REDIS_URL")
        .env_remove("LEASELAB_DATABASE_URL")
        .env("NO_COLOR", "1")
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the leaselab binary starts");
    if let Some(bytes) = &case.stdin {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let _ = stdin.write_all(bytes);
    }
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait on leaselab") {
            break Some(status);
        }
        if started.elapsed() > case.deadline {
            let _ = child.kill();
            let _ = child.wait();
            timed_out = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    Outcome {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
        timed_out,
    }
}

/// Runs the case and returns a description of every way it broke the contract (empty: held).
pub fn violations(case: &Case) -> Vec<String> {
    let outcome = run(case);
    let mut problems = Vec::new();
    let shown = format!(
        "`leaselab {}`\n--- stdout ---\n{}\n--- stderr ---\n{}",
        case.args.join(" "),
        tail(&outcome.stdout),
        tail(&outcome.stderr)
    );
    if outcome.timed_out {
        problems.push(format!(
            "{}: still running after {:?} (a hang)\n{shown}",
            case.name, case.deadline
        ));
        return problems;
    }
    for text in [&outcome.stdout, &outcome.stderr] {
        if text.contains("panicked") || text.contains("RUST_BACKTRACE") {
            problems.push(format!("{}: panic text in the output\n{shown}", case.name));
        }
    }
    if outcome.code != Some(case.code) {
        problems.push(format!(
            "{}: exit code {:?}, expected {}\n{shown}",
            case.name, outcome.code, case.code
        ));
    }
    let said = if case.code == 2 {
        outcome.stderr.to_lowercase()
    } else {
        format!("{}\n{}", outcome.stdout, outcome.stderr).to_lowercase()
    };
    for needle in &case.says {
        if !said.contains(&needle.to_lowercase()) {
            problems.push(format!(
                "{}: the output does not say {needle:?}\n{shown}",
                case.name
            ));
        }
    }
    problems
}

/// Runs every case (all of them, even after a failure) and fails with every violation listed.
pub fn check_all(cases: Vec<Case>) {
    assert!(!cases.is_empty(), "a bad-input suite with no case");
    let total = cases.len();
    let mut problems = Vec::new();
    for case in &cases {
        problems.extend(violations(case));
    }
    assert!(
        problems.is_empty(),
        "{} of {total} bad-input cases broke the contract:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(2000);
    let mut start = start;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
