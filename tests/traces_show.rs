//! `leaselab show`: the step 5 trace reads like the tutorial's story, in lanes and in words;
//! the SVG/HTML picture marks the blamed write; the HTML renders in a real browser.

use std::path::{Path, PathBuf};
use std::process::Command;

use leaselab::trace::{self, story, svg, text};
use leaselab_model::scenario::{Scenario, Variant};

fn shipped(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    trace::files(&[dir])
        .unwrap()
        .into_iter()
        .find(|p| p.to_string_lossy().contains(name))
        .unwrap_or_else(|| panic!("a shipped trace named {name}"))
}

fn show(path: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(["show", "--width", "150"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn step5_reads_like_the_tutorial() {
    let out = show(&shipped("tutorial/step5-fencing-unfenced"));
    // The tutorial's story, line for line.
    for line in [
        "A: got the lock, fence 33, read balance 100",
        "A: paused for 250ms at after-read",
        "the lease of A expires while A still believes it holds the lock",
        "B: got the lock, fence 34, read balance 100",
        "B: wrote balance 90 with fence 34",
        "A: wakes up and carries on",
        "A: wrote balance 90 with fence 33   <- BLAME",
        "A: release: lock not held",
        "final: accepted=2 balance=90 expected=80 BROKEN",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    // In order.
    let at = |s: &str| out.rfind(s).unwrap();
    assert!(at("A: got the lock") < at("B: got the lock"));
    assert!(at("B: wrote balance 90") < at("A: wakes up"));
    // The lanes, the marks, and the one blamed write.
    for mark in [
        "app-1 (A)",
        "app-2 (B)",
        "redis",
        "postgres",
        "LEASE of app-1 EXPIRED",
        "PAUSED 250ms (after-read)",
        "set 90, fence 33, unchecked",
        "✗ wrote balance 90 with fence 33",
        "╰─ BLAME: app-1 (A) wrote 90 with fence 33",
    ] {
        assert!(out.contains(mark), "missing {mark:?} in\n{out}");
    }
    assert_eq!(out.matches("╰─ BLAME").count(), 1, "{out}");
}

#[test]
fn with_the_fence_checked_the_stale_write_is_rejected_and_nobody_is_blamed() {
    let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let report = leaselab_sim::run::run(&scenario, 1).unwrap();
    assert!(!report.broken());
    let story = story::build(&scenario, &report.ledger, &report.events);
    let lanes = text::timeline(&story, 150);
    let words = text::words(&story);
    assert!(words.contains("A: write with fence 33 REJECTED"), "{words}");
    assert!(lanes.contains("refused: fence 33 <= 34"), "{lanes}");
    assert!(!lanes.contains("BLAME"), "{lanes}");
    assert!(story.blame.is_none());
}

#[test]
fn the_picture_has_lanes_arrows_lease_bars_and_a_red_blame_mark() {
    let loaded = trace::load(&shipped("tutorial/step5-fencing-unfenced")).unwrap();
    let events = loaded.events().unwrap();
    let story = story::build(&loaded.scenario, &loaded.ledger, &events);
    let picture = svg::svg(&loaded, &story);
    assert!(picture.starts_with("<svg "), "{picture}");
    assert!(picture.trim_end().ends_with("</svg>"));
    for part in [
        ">app-1 (A)</text>",
        ">redis</text>",
        ">postgres</text>",
        "marker-end=\"url(#arrow)\"",
        "marker-end=\"url(#arrow-red)\"",
        "<title>holds the lease</title>",
        "<title>paused</title>",
        "LEASE of app-1 EXPIRED",
        "BLAME: this write made the ledger wrong",
        "accepted=2 balance=90 expected=80 BROKEN",
    ] {
        assert!(picture.contains(part), "missing {part:?}");
    }
    let page = svg::html(&loaded, &story);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(&picture));
    assert!(page.contains("A: wakes up and carries on"));
}

/// bsm/redislock's `release.lua` answers `OK` (or nil when the lock is gone), not a count of
/// deleted keys: B's release, after its own write, is a success; only A's, after its lease
/// expired under the pause, is refused.
#[test]
fn redislock_releases_are_drawn_as_the_machine_read_them() {
    let loaded = trace::load(&shipped("tutorial/step4-redislock")).unwrap();
    let events = loaded.events().unwrap();
    let story = story::build(&loaded.scenario, &loaded.ledger, &events);
    let releases: Vec<(u32, bool)> = story
        .rows
        .iter()
        .filter_map(|row| match (row.mark.lane, &row.mark.kind) {
            (story::Lane::Caller(caller), story::Kind::Release { ok }) => Some((caller, *ok)),
            _ => None,
        })
        .collect();
    assert_eq!(releases, [(2, true), (1, false)], "{:#?}", story.rows);
    let out = show(&shipped("tutorial/step4-redislock"));
    assert!(out.contains("B: wrote balance 90"), "{out}");
    assert_eq!(out.matches("released the lock").count(), 1, "{out}");
    assert_eq!(out.matches("release: lock not held").count(), 2, "{out}");
    let picture = svg::svg(&loaded, &story);
    assert_eq!(picture.matches("released the lock").count(), 1, "{picture}");
    assert_eq!(picture.matches("release: lock not held").count(), 1);
}

#[test]
fn the_html_renders_in_a_headless_browser() {
    let installed = ["chromium", "chromium-browser"].iter().any(|name| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !installed {
        println!("skipped: chromium is not installed (apt-get install -y chromium)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let png = std::env::temp_dir().join(format!("leaselab-show-{}.png", std::process::id()));
    let output = Command::new(root.join("scripts/check-html.sh"))
        .arg(shipped("tutorial/step5-fencing-unfenced"))
        .arg(&png)
        .env("LEASELAB", env!("CARGO_BIN_EXE_leaselab"))
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1400, 900));
}

#[test]
fn a_trace_cannot_send_escape_sequences_to_the_terminal() {
    let text = std::fs::read_to_string(shipped("step5-fencing-unfenced")).unwrap();
    let from = "\"name\": \"step5-fencing --unfenced\",";
    assert!(text.contains(from), "the trace names its scenario");
    // A scenario name that would clear the screen and set the window title.
    let hostile = text.replacen(
        from,
        "\"name\": \"step5 \\u001b[2J\\u001b]0;owned\\u0007 --unfenced\",",
        1,
    );
    let dir = std::env::temp_dir().join(format!("leaselab-escape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("escape.json");
    std::fs::write(&path, hostile).unwrap();
    let shown = show(&path);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "control characters reached the terminal: {shown:?}"
    );
    assert!(shown.contains("\\u{1b}[2J"), "{shown}");
    std::fs::remove_dir_all(&dir).unwrap();
}
