//! Bad trace files: each gets an error naming the file, the line or field and what was
//! expected, and the commands exit 2 without panicking.

use std::path::{Path, PathBuf};
use std::process::Command;

use leaselab::trace::{self, load::Problem};

fn step5() -> (PathBuf, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/tutorial");
    let path = trace::files(&[dir])
        .unwrap()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("step5-fencing-unfenced"))
        .expect("the step 5 trace is shipped");
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

/// Writes `text` to a fresh file and runs `leaselab ARGS FILE`; returns (exit code, stderr).
fn cli(name: &str, text: &str, args: &[&str]) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("leaselab-trace-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (output.status.code().unwrap_or(-1), stderr)
}

fn parse(text: &str) -> trace::TraceError {
    trace::load::parse(Path::new("bad.json"), text).expect_err("the trace is refused")
}

#[test]
fn the_shipped_trace_parses() {
    let (path, text) = step5();
    trace::load::parse(&path, &text).expect("valid");
}

#[test]
fn malformed_json_names_the_line() {
    let (_, text) = step5();
    let cut = &text[..text.len() / 2];
    let error = parse(cut);
    assert!(matches!(error.problem, Problem::Syntax { .. }), "{error}");
    let message = error.to_string();
    assert!(message.starts_with("bad.json: line "), "{message}");
    assert!(message.contains("not valid JSON"), "{message}");
    let (code, stderr) = cli("cut.json", cut, &["show"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cut.json: line "), "{stderr}");
}

#[test]
fn a_field_of_the_wrong_type_names_field_line_and_expectation() {
    let (_, text) = step5();
    let bad = text.replacen("\"seed\": 1,", "\"seed\": \"one\",", 1);
    let message = parse(&bad).to_string();
    assert!(message.contains("field `seed`"), "{message}");
    let line = bad.lines().position(|l| l.contains("\"seed\"")).unwrap() + 1;
    assert!(message.contains(&format!("line {line}")), "{message}");
    assert!(message.contains("expected u64"), "{message}");
    let (code, stderr) = cli("seed.json", &bad, &["replay"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("field `seed`"), "{stderr}");
}

#[test]
fn a_missing_or_unknown_field_is_named() {
    let (_, text) = step5();
    let missing = text.replacen("\"ttl_ms\": 100,", "", 1);
    let message = parse(&missing).to_string();
    assert!(message.contains("missing field `ttl_ms`"), "{message}");
    assert!(message.contains("field `scenario`"), "{message}");
    let unknown = text.replacen("\"ttl_ms\": 100,", "\"ttl_ms\": 100, \"tll\": 3,", 1);
    let message = parse(&unknown).to_string();
    assert!(message.contains("unknown field `tll`"), "{message}");
}

#[test]
fn an_invalid_value_names_the_field_and_how_to_fix_it() {
    let (_, text) = step5();
    let bad = text.replacen("\"ttl_ms\": 100,", "\"ttl_ms\": 0,", 1);
    let message = parse(&bad).to_string();
    assert!(message.contains("field `scenario`"), "{message}");
    assert!(message.contains("TTL must be at least 1ms"), "{message}");
}

#[test]
fn a_newer_format_version_says_so_and_names_it() {
    let (_, text) = step5();
    let newer = text
        .replacen("\"format_version\": 3,", "\"format_version\": 7,", 1)
        .replacen("\"scenario\": {", "\"scenario_v7\": {", 1);
    let error = parse(&newer);
    assert!(
        matches!(error.problem, Problem::NewerVersion { version: 7, .. }),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains("format version 7"), "{message}");
    assert!(message.contains("reads versions up to 3"), "{message}");
    let (code, stderr) = cli("newer.json", &newer, &["replay"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("format version 7"), "{stderr}");
}

#[test]
fn a_ledger_whose_verdict_or_expected_balance_contradicts_its_numbers_is_refused() {
    let (_, text) = step5();
    let flipped = text.replacen("\"verdict\": \"BROKEN\",", "\"verdict\": \"OK\",", 1);
    assert_ne!(flipped, text);
    let message = parse(&flipped).to_string();
    assert!(message.contains("ledger.verdict"), "{message}");
    assert!(message.contains("expected \"BROKEN\""), "{message}");
    let expected = text.replacen("\"expected_balance\": 80,", "\"expected_balance\": 90,", 1);
    assert_ne!(expected, text);
    let message = parse(&expected).to_string();
    assert!(message.contains("ledger.expected_balance"), "{message}");
    let unknown = text.replacen(
        "\"verdict\": \"BROKEN\",",
        "\"verdict\": \"BROKEN\", \"mood\": 1,",
        1,
    );
    let message = parse(&unknown).to_string();
    assert!(message.contains("mood"), "{message}");
}

#[test]
fn an_older_format_version_names_it_and_how_to_get_a_new_trace() {
    let (_, text) = step5();
    let older = text.replacen("\"format_version\": 3,", "\"format_version\": 1,", 1);
    let error = parse(&older);
    assert!(
        matches!(error.problem, Problem::OlderVersion { version: 1 }),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains("format version 1"), "{message}");
    assert!(message.contains("reads format version 3 only"), "{message}");
    assert!(message.contains("leaselab run"), "{message}");
    let version_2 = text.replacen("\"format_version\": 3,", "\"format_version\": 2,", 1);
    assert!(
        matches!(
            parse(&version_2).problem,
            Problem::OlderVersion { version: 2 }
        ),
        "outcomes were text in version 2"
    );
    let (code, stderr) = cli("older.json", &older, &["show"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("format version 1"), "{stderr}");
}

#[test]
fn a_scenario_that_no_longer_exists_says_which() {
    let (_, text) = step5();
    let gone = text.replacen(
        "\"safeguard\": \"fenced-unchecked\"",
        "\"safeguard\": \"quantum-lock\"",
        1,
    );
    let error = parse(&gone);
    assert!(
        matches!(error.problem, Problem::UnknownScenario { .. }),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains("no longer exists"), "{message}");
    assert!(message.contains("step5-fencing --unfenced"), "{message}");
    assert!(message.contains("quantum-lock"), "{message}");
    assert!(message.contains("field `scenario.safeguard`"), "{message}");
    let point = text.replacen("\"at\": \"after-read\"", "\"at\": \"mid-flight\"", 1);
    let message = parse(&point).to_string();
    assert!(
        message.contains("field `scenario.faults[0].at`"),
        "{message}"
    );
    assert!(message.contains("mid-flight"), "{message}");
    let (code, stderr) = cli("gone.json", &gone, &["show"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("quantum-lock"), "{stderr}");
}

#[test]
fn an_edited_event_log_fails_its_digest() {
    let (_, text) = step5();
    let edited = text.replacen("[[100,0]]", "[[1000,0]]", 1);
    assert_ne!(edited, text);
    let error = parse(&edited);
    assert!(
        matches!(error.problem, Problem::DigestMismatch { .. }),
        "{error}"
    );
}

#[test]
fn something_else_is_not_a_trace() {
    let message = parse("{\"hello\": 1}").to_string();
    assert!(message.contains("not a leaselab trace"), "{message}");
    let (code, stderr) = cli("other.json", "[1, 2]", &["replay"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a leaselab trace"), "{stderr}");
}

#[test]
fn a_missing_file_is_named() {
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(["show", "no/such/trace.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no/such/trace.json: cannot read the trace"),
        "{stderr}"
    );
}

#[test]
fn an_event_this_leaselab_cannot_read_still_replays_but_show_names_it() {
    let (_, text) = step5();
    let mut file: leaselab::trace::TraceFile = serde_json::from_str(&text).unwrap();
    let index = file
        .events
        .iter()
        .position(|e| e.text().contains("\"event\":\"released\""))
        .unwrap();
    let changed = file.events[index]
        .text()
        .replace("\"event\":\"released\"", "\"event\":\"teleported\"");
    file.events[index] = leaselab::trace::format::RawEvent(
        serde_json::value::RawValue::from_string(changed).unwrap(),
    );
    file.digest = leaselab::trace::format::digest_lines(&file.events);
    let loaded = trace::load::parse(Path::new("old.json"), &file.to_text()).expect("it loads");
    let replayed = leaselab::trace::replay::replay(&loaded).unwrap();
    assert!(
        replayed.describe(&loaded).starts_with("behaviour changed"),
        "{}",
        replayed.describe(&loaded)
    );
    let message = loaded.events().unwrap_err().to_string();
    assert!(
        message.contains(&format!("field `events[{index}]")),
        "{message}"
    );
    assert!(message.contains("teleported"), "{message}");
    let (code, stderr) = cli("old.json", &file.to_text(), &["show"]);
    assert_eq!(code, 2, "{stderr}");
}
