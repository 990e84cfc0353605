//! `--threads K` on the commands that run batches of simulated seeds: the runs go side by side,
//! and what the command prints and saves is the same for any K.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn leaselab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("leaselab runs")
}

/// A fresh directory for one invocation.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leaselab-threads-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `dir` with its bytes, by path relative to `dir`, in order.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

/// What one invocation gave: its exit code, stdout and the files it wrote.
type Outcome = (i32, Vec<u8>, Vec<(String, Vec<u8>)>);

/// Runs `args` with each thread count in its own directory; asserts the exit code, stdout and
/// every file written are the same as with one thread, and returns the one-thread stdout.
fn same_for_any_thread_count(name: &str, args: &[&str], counts: &[&str]) -> String {
    let mut first: Option<Outcome> = None;
    for threads in counts {
        let dir = scratch(&format!("{name}-{threads}"));
        let mut line = args.to_vec();
        line.extend(["--threads", threads]);
        let output = leaselab(&dir, &line);
        let code = output.status.code().expect("an exit code");
        assert!(
            [0, 1].contains(&code),
            "{line:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let written = files(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        match &first {
            None => first = Some((code, output.stdout, written)),
            Some((first_code, first_stdout, first_written)) => {
                assert_eq!(code, *first_code, "{line:?}: exit code");
                assert_eq!(
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(first_stdout),
                    "{line:?}: stdout"
                );
                assert_eq!(
                    written.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                    first_written.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                    "{line:?}: files written"
                );
                assert!(written == *first_written, "{line:?}: a file's bytes differ");
            }
        }
    }
    String::from_utf8(first.expect("at least one count").1).expect("UTF-8")
}

#[test]
fn a_batch_prints_and_saves_the_same_with_any_thread_count() {
    // step 6 with a 1 ms TTL breaks in most seeds: every broken run is saved, so the order in
    // which the runs are handed on shows in the files as well as in the per-seed JSON lines.
    let stdout = same_for_any_thread_count(
        "run",
        &[
            "run",
            "step6-verify",
            "--ttl",
            "1ms",
            "--callers",
            "8",
            "--runs",
            "24",
            "--json",
            "--save-all-traces",
        ],
        &["1", "2", "3", "7"],
    );
    assert!(
        stdout.contains("\"seed\": 24") || stdout.contains("\"seed\":24"),
        "{stdout}"
    );
}

#[test]
fn the_tour_prints_the_same_with_any_thread_count() {
    same_for_any_thread_count(
        "tour",
        &["tour", "--runs", "3", "--json", "--no-save-traces"],
        &["1", "2"],
    );
}

#[test]
fn a_thread_count_the_batch_cannot_use_is_refused() {
    let dir = scratch("refused");
    for threads in ["0", "257"] {
        let output = leaselab(
            &dir,
            &["run", "step2-lock", "--runs", "3", "--threads", threads],
        );
        assert_eq!(output.status.code(), Some(2), "--threads {threads}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("--threads {threads}: use between 1 and 256")),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
