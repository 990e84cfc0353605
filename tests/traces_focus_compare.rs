//! `leaselab show` on a large trace focuses on the blamed write (its caller and the callers it
//! overwrote get lanes, the rest fold into one); `--all` shows everything; `show A --compare
//! B` names what differs and where the two runs' stories first part.

use std::path::{Path, PathBuf};
use std::process::Command;

use leaselab::trace::{self, compare, story};
use leaselab_model::scenario::{Scenario, Variant};

fn shipped(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    trace::files(&[dir])
        .unwrap()
        .into_iter()
        .find(|p| p.to_string_lossy().contains(name))
        .unwrap_or_else(|| panic!("a shipped trace named {name}"))
}

fn leaselab(args: &[&str], files: &[&Path]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .args(files)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn a_fifty_caller_trace_is_focused_on_the_blamed_write_and_those_it_overwrote() {
    let path = shipped("tutorial/step6-verify-ttl-1ms");
    let trace = trace::load(&path).unwrap();
    let events = trace.events().unwrap();
    let full = story::build(&trace.scenario, &trace.ledger, &events);
    let focused = story::focus(&full).expect("a blamed write");
    let folded = focused.folded.clone().unwrap();
    let blamed = trace.ledger.stale_spends.first().unwrap().caller;
    assert!(folded.shown.contains(&blamed), "{folded:?}");
    assert!(folded.shown.len() < 6, "{folded:?}");
    assert_eq!(folded.folded_callers as usize + folded.shown.len(), 50);
    // Every other caller shown wrote (accepted) between the blamed caller's read and write.
    let blamed_row = full
        .rows
        .iter()
        .position(|r| r.mark.blame.is_some())
        .unwrap();
    let read_us = full.rows[..blamed_row]
        .iter()
        .rev()
        .find(|r| {
            r.mark.lane == story::Lane::Caller(blamed)
                && matches!(r.mark.kind, story::Kind::Read { .. })
        })
        .unwrap()
        .mark
        .t_us;
    let write_us = full.rows[blamed_row].mark.t_us;
    for &caller in folded.shown.iter().filter(|&&c| c != blamed) {
        assert!(
            full.rows
                .iter()
                .any(|r| r.mark.lane == story::Lane::Caller(caller)
                    && matches!(r.mark.kind, story::Kind::Write { accepted: true, .. })
                    && (read_us..=write_us).contains(&r.mark.t_us)),
            "app-{caller} did not write between the read at {read_us} and the write at {write_us}"
        );
    }
    // The focused story keeps the blame, and its rows are within the window.
    assert!(focused.rows.iter().any(|r| r.mark.blame.is_some()));
    assert!(focused
        .rows
        .iter()
        .all(|r| (folded.from_us..=folded.to_us).contains(&r.mark.t_us)));
    assert!(
        focused.rows.len() < full.rows.len() / 4,
        "{}",
        focused.rows.len()
    );

    // On the terminal: the blame is on the first screen; --all draws all 50 lanes.
    let (code, out) = leaselab(&["show", "--width", "160"], &[&path]);
    assert_eq!(code, 0);
    let first_screen: Vec<&str> = out.lines().take(40).collect();
    assert!(first_screen.iter().any(|l| l.contains("╰─ BLAME")), "{out}");
    assert!(out.contains("--all shows everything"), "{out}");
    assert!(!out.lines().next_line_has("app-50"));
    let (code, all) = leaselab(&["show", "--all", "--width", "160"], &[&path]);
    assert_eq!(code, 0);
    assert!(all.contains("app-50"), "--all shows every lane");
    assert!(!all.contains("--all shows everything"));
}

trait LinesExt {
    fn next_line_has(self, text: &str) -> bool;
}

impl<'a, I: Iterator<Item = &'a str>> LinesExt for I {
    /// True when the timeline's heading (the first line starting with "time") names `text`.
    fn next_line_has(mut self, text: &str) -> bool {
        self.find(|l| l.trim_start().starts_with("time"))
            .is_some_and(|l| l.contains(text))
    }
}

#[test]
fn a_small_trace_is_shown_whole() {
    let path = shipped("tutorial/step5-fencing-unfenced");
    let (code, out) = leaselab(&["show", "--width", "150"], &[&path]);
    assert_eq!(code, 0);
    assert!(!out.contains("focused on"), "{out}");
}

#[test]
fn an_ok_and_a_broken_run_side_by_side_name_their_difference_and_first_divergence() {
    let broken = shipped("tutorial/step5-fencing-unfenced");
    // The same scenario with fencing on, saved as a trace although it is OK.
    let fenced = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let seed = trace::load(&broken).unwrap().file.seed;
    let report = leaselab_sim::run::run(&fenced, seed).unwrap();
    assert_eq!(report.ledger.verdict, leaselab_model::ledger::Verdict::Ok);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ok = trace::save::save_trace(&report, &dir).unwrap();

    let (left, right) = (trace::load(&ok).unwrap(), trace::load(&broken).unwrap());
    let story_of =
        |t: &trace::load::Trace| story::build(&t.scenario, &t.ledger, &t.events().unwrap());
    let (left_story, right_story) = (story_of(&left), story_of(&right));
    let comparison = compare::compare(&left, &left_story, &right, &right_story);
    let names: Vec<&str> = comparison
        .differences
        .iter()
        .map(|d| d.0.as_str())
        .collect();
    assert!(names.contains(&"safeguard"), "{names:?}");
    let divergence = comparison.divergence.clone().expect("the stories part");
    // Up to the divergence both tell the same story; there they differ.
    assert!(divergence.index > 0);
    for i in 0..divergence.index {
        assert_eq!(
            left_story.rows[i].mark.text, right_story.rows[i].mark.text,
            "mark {i}"
        );
    }
    let (l, r) = (divergence.left.unwrap(), divergence.right.unwrap());
    assert_ne!((l.t_us, &l.lane, &l.text), (r.t_us, &r.lane, &r.text));
    // They part at the first write: PostgreSQL checks the fence on the left only.
    assert_eq!(l.lane, "postgres");
    assert!(r.text.contains("unchecked"), "{l:?} / {r:?}");
    // And later the fenced run refuses the stale write the unfenced one accepts.
    let refused = |s: &story::Story| {
        s.rows.iter().any(|r| {
            matches!(
                r.mark.kind,
                story::Kind::Write {
                    accepted: false,
                    ..
                }
            )
        })
    };
    assert!(refused(&left_story) && !refused(&right_story));

    let html = dir.join("side.html");
    let (code, out) = leaselab(
        &["show", "--width", "150", "--html", html.to_str().unwrap()],
        &[&ok, Path::new("--compare"), &broken],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("what differs:"), "{out}");
    assert!(
        out.contains("safeguard: fenced  →  fenced-unchecked"),
        "{out}"
    );
    assert!(out.contains("first divergence after"), "{out}");
    assert!(out.contains(&l.text) && out.contains(&r.text), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<svg").count(), 2);
    assert!(page.contains("First divergence"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Step 6 with fenced-cas (OK) beside fenced (BROKEN): their first writes differ only in the
/// version the check-and-set write expects, which no mark's text shows, so the divergence
/// named is the first one a reader can see (a refused write against an accepted one), never
/// two identical lines.
#[test]
fn the_divergence_named_is_one_a_reader_can_see() {
    use leaselab_model::postgres::statement::WriteGuard;
    use leaselab_model::safeguard::Safeguard;
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default()).unwrap();
    step6.params.ttl_ms = 1;
    let with = |guard| Scenario {
        safeguard: Safeguard::Fenced { guard },
        ..step6.clone()
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("compare-visible-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ok = leaselab_sim::run::run(&with(WriteGuard::FenceBelowAndEqual), 1).unwrap();
    let broken = leaselab_sim::run::run(&with(WriteGuard::FenceBelow), 1).unwrap();
    assert_eq!(ok.ledger.verdict, leaselab_model::ledger::Verdict::Ok);
    assert_eq!(
        broken.ledger.verdict,
        leaselab_model::ledger::Verdict::Broken
    );
    let ok = trace::save::save_trace(&ok, &dir).unwrap();
    let broken = trace::save::save_trace(&broken, &dir).unwrap();
    let (left, right) = (trace::load(&ok).unwrap(), trace::load(&broken).unwrap());
    let story_of =
        |t: &trace::load::Trace| story::build(&t.scenario, &t.ledger, &t.events().unwrap());
    let comparison = compare::compare(&left, &story_of(&left), &right, &story_of(&right));
    let divergence = comparison.divergence.expect("the stories part");
    let (l, r) = (divergence.left.unwrap(), divergence.right.unwrap());
    assert_ne!(
        (l.t_us, &l.lane, &l.text),
        (r.t_us, &r.lane, &r.text),
        "two identical lines named as the divergence"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 50-caller run that kept the ledger is focused too: the callers that stand out (a refused
/// write, insufficient funds) in lanes of their own, the others folded, and the whole picture
/// within the width asked for.
#[test]
fn a_fifty_caller_ok_trace_is_focused_and_fits_the_width() {
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default()).unwrap();
    step6.params.ttl_ms = 1;
    step6.safeguard = leaselab_model::safeguard::Safeguard::Fenced {
        guard: leaselab_model::postgres::statement::WriteGuard::FenceBelowAndEqual,
    };
    let report = leaselab_sim::run::run(&step6, 1).unwrap();
    assert_eq!(report.ledger.verdict, leaselab_model::ledger::Verdict::Ok);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("focus-ok-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ok = trace::save::save_trace(&report, &dir).unwrap();
    let loaded = trace::load(&ok).unwrap();
    let full = story::build(&loaded.scenario, &loaded.ledger, &loaded.events().unwrap());
    let focused = story::focus(&full).expect("50 callers fold");
    let folded = focused.folded.as_ref().unwrap();
    assert_eq!(folded.shown.len(), story::FOCUS_OK_CALLERS);
    assert_eq!(folded.folded_callers, 50 - story::FOCUS_OK_CALLERS as u32);
    // A caller whose write was refused is among those shown.
    let refused = full
        .rows
        .iter()
        .find_map(|r| match (r.mark.lane, &r.mark.kind) {
            (
                story::Lane::Caller(n),
                story::Kind::Write {
                    accepted: false, ..
                },
            ) => Some(n),
            _ => None,
        });
    assert!(folded.shown.contains(&refused.expect("a refused write")));

    for width in [100, 160] {
        let (code, out) = leaselab(&["show", "--width", &width.to_string()], &[&ok]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("46 other caller(s) folded"), "{out}");
        for line in out.lines() {
            // The legend under the picture is one fixed line of 101 columns.
            assert!(
                line.chars().count() <= width.max(101),
                "wider than {width}: {line}"
            );
        }
    }
    // A folded caller is named app-N in the words, never by a letter no lane introduced.
    let (_, out) = leaselab(&["show", "--width", "160"], &[&ok]);
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("redis: the lease of ") {
            let name = rest.split_whitespace().next().unwrap();
            if name.len() == 1 {
                let caller = u32::from(name.as_bytes()[0] - b'A') + 1;
                assert!(folded.shown.contains(&caller), "{name} has no lane: {line}");
            }
        }
    }
    let (code, out) = leaselab(&["show", "--all", "--width", "100"], &[&ok]);
    assert_eq!(code, 0);
    assert!(!out.contains("folded"), "--all folds nothing");
    assert!(
        out.contains("this picture needs"),
        "--all says it is wider than asked"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
