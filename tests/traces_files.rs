//! What the trace commands write: never over an input, atomically, and a shrunk trace keeps
//! the link to the original run; `replay` names each unreadable trace once.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use leaselab::trace::{self, format::Origin};

fn committed(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn scratch(name: &str) -> PathBuf {
    common::bad_input::scratch(&format!("traces-files-{name}"))
}

fn leaselab(dir: &Path, args: &[&str]) -> Output {
    common::leaselab_in(dir, args)
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn show_writes_its_pictures_whole_and_leaves_no_temporary_file() {
    let dir = scratch("show");
    std::fs::copy(
        committed("traces/tutorial/step5-fencing-unfenced-5cead0d2686e.json"),
        dir.join("t.json"),
    )
    .unwrap();
    std::fs::write(dir.join("old.svg"), "an older picture").unwrap();
    let output = leaselab(
        &dir,
        &["show", "t.json", "--svg", "old.svg", "--html", "p.html"],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(names(&dir), ["old.svg", "p.html", "t.json"]);
    let svg = std::fs::read_to_string(dir.join("old.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{svg:.80}"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    // Refused: the picture over the trace, even spelt differently.
    let before = std::fs::read(dir.join("t.json")).unwrap();
    let output = leaselab(&dir, &["show", "t.json", "--svg", "./t.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "refused before showing anything");
    assert_eq!(std::fs::read(dir.join("t.json")).unwrap(), before);
}

#[test]
fn shrinking_a_shrunk_trace_keeps_the_link_to_the_original_run_and_its_input() {
    let dir = scratch("shrink");
    // Step 1 with 50 callers, marked as shrunk from an (imagined) original run: the origin
    // is not part of the event log's digest, so the trace stays valid.
    let original = "0123456789abcdef0123456789abcdef01234567";
    let text =
        std::fs::read_to_string(committed("traces/tutorial/step1-race-a10959063b71.json")).unwrap();
    let marked = text.replacen(
        "\"kind\": \"simulation\"",
        &format!("\"kind\": \"simulation\",\n    \"shrunk_from\": \"{original}\""),
        1,
    );
    assert_ne!(marked, text);
    let input = dir.join("step1-race-shrunk-e7164fb1074e.json");
    std::fs::write(&input, &marked).unwrap();
    let output = leaselab(
        &dir,
        &["shrink", input.file_name().unwrap().to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("shrunk from the run with digest 0123456789ab"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&input).unwrap(),
        marked,
        "input untouched"
    );
    let written: Vec<PathBuf> = trace::files(std::slice::from_ref(&dir))
        .unwrap()
        .into_iter()
        .filter(|p| *p != input)
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let shrunk = trace::load(&written[0]).unwrap();
    assert!(shrunk.scenario.callers < 50);
    assert_eq!(
        shrunk.file.origin,
        Origin::Simulation {
            shrunk_from: Some(original.to_string())
        }
    );
    // Shrinking the result again finds nothing smaller and writes nothing.
    let again = written[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let before = std::fs::read(&written[0]).unwrap();
    let output = leaselab(&dir, &["shrink", &again]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("nothing written"), "{stdout}");
    assert_eq!(std::fs::read(&written[0]).unwrap(), before);
    assert_eq!(names(&dir).len(), 2);
}

#[test]
fn replay_names_each_unreadable_trace_once() {
    let dir = scratch("replay");
    std::fs::write(dir.join("broken.json"), "{ not json").unwrap();
    let output = leaselab(&dir, &["replay", "broken.json"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("broken.json").count(), 1, "{stderr}");
    assert!(stderr.contains("not valid JSON"), "{stderr}");
}

#[test]
fn a_walk_lists_each_real_file_once() {
    let dir = scratch("walk");
    let t = committed("traces/tutorial/step5-fencing-unfenced-5cead0d2686e.json");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::copy(&t, dir.join("a/t.json")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("a", dir.join("b")).unwrap();
    let found = trace::files(&[dir.join("a"), dir.join("b"), dir.clone()]).unwrap();
    assert_eq!(found, vec![dir.join("a/t.json")]);
}

/// The step 5 trace with its first event moved by 1 µs and the digest made to match: a trace
/// whose run behaves differently now (replay says "behaviour changed").
fn stale_step5() -> String {
    use sha1::{Digest as _, Sha1};
    let text = std::fs::read_to_string(committed(
        "traces/tutorial/step5-fencing-unfenced-5cead0d2686e.json",
    ))
    .unwrap();
    let text = text.replacen("{\"t_us\":0,", "{\"t_us\":1,", 1);
    let events: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.contains("\"events\": ["))
        .skip(1)
        .take_while(|line| line.trim() != "]")
        .map(|line| line.trim().trim_end_matches(','))
        .collect();
    assert!(events.len() > 10, "the trace's events were found");
    let mut hasher = Sha1::new();
    for event in &events {
        hasher.update(event.as_bytes());
        hasher.update(b"\n");
    }
    let digest = hex::encode(hasher.finalize());
    let old = text
        .lines()
        .find(|line| line.trim_start().starts_with("\"digest\""))
        .unwrap()
        .to_string();
    text.replacen(&old, &format!("  \"digest\": \"{digest}\","), 1)
}

#[test]
fn replay_update_never_writes_over_another_trace() {
    let dir = scratch("update");
    let updated_name = "step5-fencing-unfenced-5cead0d2686e.json";
    std::fs::write(dir.join("a.json"), stale_step5()).unwrap();
    // Another trace already sits under the name the update would take.
    let other = std::fs::read(committed("traces/tutorial/step1-race-a10959063b71.json")).unwrap();
    std::fs::write(dir.join(updated_name), &other).unwrap();
    let output = leaselab(&dir, &["replay", "--update", "a.json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds another trace"), "{stderr}");
    assert_eq!(std::fs::read(dir.join(updated_name)).unwrap(), other);
    assert!(dir.join("a.json").exists(), "the stale trace stays");
    // With the name free, the update is written and the stale trace goes.
    std::fs::remove_file(dir.join(updated_name)).unwrap();
    let output = leaselab(&dir, &["replay", "--update", "a.json"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("updated"), "{stdout}");
    assert_eq!(names(&dir), vec![updated_name.to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();
}
