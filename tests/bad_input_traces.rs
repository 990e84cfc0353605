//! Hostile trace files and output paths for `show`, `replay` and `shrink`: each case asserts
//! the exit code, that no panic text appears, and that stderr names the file and the problem.
//! The files are made at test time in a scratch directory, from a committed trace (with
//! fields edited) and from garbage.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::bad_input::{check_all, scratch, Case};

const STEP5: &str = "traces/tutorial/step5-fencing-unfenced-5cead0d2686e.json";

fn step5_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(STEP5)).unwrap()
}

/// The committed trace with `from` replaced by `to` (which must change it).
fn edited(from: &str, to: &str) -> String {
    let text = step5_text();
    assert!(text.contains(from), "the trace holds {from:?}");
    text.replacen(from, to, 1)
}

/// Builds the scratch directory every case runs in.
fn workspace() -> PathBuf {
    let dir = scratch("traces");
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    write("t.json", step5_text().as_bytes());
    write("empty.json", b"");
    write("blank.json", b"  \n\t\n  ");
    write(
        "binary.json",
        b"{\n  \"format\": \"leaselab-trace\xff\xfe\"\n}",
    );
    write("array.json", b"[1, 2, 3]");
    write("deep.json", "[".repeat(100_000).as_bytes());
    write("notes.txt", b"these are notes, not JSON");
    write(
        "seed.json",
        edited("\"seed\": 1,", "\"seed\": 1e30,").as_bytes(),
    );
    write(
        "callers.json",
        edited("\"callers\": 2,", "\"callers\": -2,").as_bytes(),
    );
    write(
        "toomany.json",
        edited("\"callers\": 2,", "\"callers\": 99999999,").as_bytes(),
    );
    // A work of 2^64 - 1 ms: replayed, it ran away to gigabytes (the clock overflowed).
    write(
        "longwork.json",
        edited("\"work_ms\": 0,", "\"work_ms\": 18446744073709551615,").as_bytes(),
    );
    // A work of about 31 years: allowed, but the run stops at its time limit unfinished.
    write(
        "yearswork.json",
        edited("\"work_ms\": 0,", "\"work_ms\": 999999999999,").as_bytes(),
    );
    write(
        "newer.json",
        edited("\"format_version\": 3,", "\"format_version\": 9,").as_bytes(),
    );
    write(
        "digest.json",
        edited("\"t_us\":0,", "\"t_us\":1,").as_bytes(),
    );
    write(
        "unknown.json",
        edited("\"seed\": 1,", "\"seed\": 1, \"colour\": \"red\",").as_bytes(),
    );
    write(
        "nodigest.json",
        step5_text()
            .lines()
            .filter(|l| !l.trim_start().starts_with("\"digest\""))
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    );
    // 65 MiB without writing them: a sparse file over the size limit.
    std::fs::File::create(dir.join("huge.json"))
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    std::fs::create_dir_all(dir.join("emptydir")).unwrap();
    std::fs::create_dir_all(dir.join("dir.json")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    // A directory whose links loop: every level links back to the top and to itself, which
    // a walk that follows links naively explores exponentially (or forever).
    let looped = dir.join("looped/a/b/c");
    std::fs::create_dir_all(&looped).unwrap();
    std::fs::write(looped.join("t.json"), step5_text()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        for (at, up) in [
            ("looped", "."),
            ("looped/a", ".."),
            ("looped/a/b", "../.."),
            ("looped/a/b/c", "../../.."),
        ] {
            for n in 0..4 {
                symlink(up, dir.join(at).join(format!("up{n}"))).unwrap();
            }
            symlink(".", dir.join(at).join("self")).unwrap();
        }
        symlink("t.json", dir.join("link.json")).unwrap();
        symlink("loop2.json", dir.join("loop1.json")).unwrap();
        symlink("loop1.json", dir.join("loop2.json")).unwrap();
        std::fs::hard_link(dir.join("t.json"), dir.join("hard.json")).unwrap();
        // Fifos: opening one for reading blocks until a writer comes.
        for fifo in ["fifo.json", "fifodir/x.json"] {
            let path = dir.join(fifo);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
    }
    dir
}

fn case(name: &'static str, args: &[&str], code: i32, says: &[&'static str], dir: &Path) -> Case {
    Case::new(name, args, code, says)
        .in_dir(dir.to_path_buf())
        .deadline(Duration::from_secs(30))
}

#[test]
fn hostile_traces_and_outputs_get_exit_2_and_a_message_naming_them() {
    let dir = workspace();
    let d = dir.as_path();
    // The line the edited `seed` is on, as the message must name it.
    let seed_line: &'static str = step5_text()
        .lines()
        .position(|line| line.starts_with("  \"seed\":"))
        .map(|index| format!("line {}", index + 1).leak())
        .expect("a seed line");
    let mut cases = vec![
        // Files that are not traces.
        case(
            "zero bytes",
            &["show", "empty.json"],
            2,
            &["empty.json", "empty (0 bytes)"],
            d,
        ),
        case(
            "only whitespace",
            &["show", "blank.json"],
            2,
            &["blank.json", "only whitespace"],
            d,
        ),
        case(
            "not utf-8",
            &["show", "binary.json"],
            2,
            &["binary.json", "line 2", "not UTF-8"],
            d,
        ),
        case(
            "an array",
            &["replay", "array.json"],
            2,
            &["array.json", "is an array"],
            d,
        ),
        case(
            "nested too deep",
            &["show", "deep.json"],
            2,
            &["deep.json", "recursion limit"],
            d,
        ),
        case(
            "garbage text",
            &["shrink", "notes.txt"],
            2,
            &["notes.txt", "not valid JSON"],
            d,
        ),
        // Fields out of range, unknown, missing; a newer version; an edited log.
        case(
            "seed 1e30",
            &["show", "seed.json"],
            2,
            &["seed.json", seed_line, "field `seed`"],
            d,
        ),
        case(
            "negative callers",
            &["replay", "callers.json"],
            2,
            &["callers.json", "field `scenario.callers`", "-2"],
            d,
        ),
        case(
            "absurd callers",
            &["replay", "toomany.json"],
            2,
            &["toomany.json", "at most 10000 callers"],
            d,
        ),
        case(
            "newer format",
            &["shrink", "newer.json"],
            2,
            &["newer.json", "format version 9", "upgrade leaselab"],
            d,
        ),
        case(
            "digest mismatch",
            &["show", "digest.json"],
            2,
            &["digest.json", "field `digest`", "edited or damaged"],
            d,
        ),
        case(
            "unknown field",
            &["replay", "unknown.json"],
            2,
            &["unknown.json", "unknown field `colour`"],
            d,
        ),
        case(
            "no digest",
            &["show", "nodigest.json"],
            2,
            &["nodigest.json", "missing field `digest`"],
            d,
        ),
        // Paths that are not trace files.
        case(
            "nonexistent",
            &["show", "no-such.json"],
            2,
            &["no-such.json", "no such file"],
            d,
        ),
        case(
            "a directory to show",
            &["show", "dir.json"],
            2,
            &["dir.json", "is a directory"],
            d,
        ),
        case(
            "a directory to shrink",
            &["shrink", "emptydir"],
            2,
            &["emptydir", "is a directory"],
            d,
        ),
        case(
            "too large",
            &["show", "huge.json"],
            2,
            &["huge.json", "64 MiB"],
            d,
        ),
        case(
            "a link loop as a file",
            &["show", "loop1.json"],
            2,
            &["loop1.json", "symbolic links"],
            d,
        ),
        case(
            "replay an empty directory",
            &["replay", "emptydir"],
            2,
            &["emptydir", "no trace files"],
            d,
        ),
        case(
            "replay finds a link loop",
            &["replay", "loop1.json", "t.json"],
            2,
            &["loop1.json", "1 trace file cannot be read"],
            d,
        ),
        // Output paths that would lose a file.
        case(
            "svg over the input",
            &["show", "t.json", "--svg", "t.json"],
            2,
            &["--svg t.json", "input trace"],
            d,
        ),
        case(
            "svg over the input via ./",
            &["show", "./t.json", "--svg", "t.json"],
            2,
            &["--svg t.json", "input trace ./t.json"],
            d,
        ),
        case(
            "a work longer than the command line takes",
            &["replay", "longwork.json"],
            2,
            &[
                "longwork.json",
                "scenario.work_ms",
                "longer than leaselab runs",
            ],
            d,
        ),
        case(
            "a replay that reaches no verdict",
            &["replay", "yearswork.json"],
            3,
            &["yearswork.json", "INCONCLUSIVE", "1 inconclusive"],
            d,
        ),
        case(
            "html over the trace compared with",
            &[
                "show",
                "t.json",
                "--compare",
                "hard.json",
                "--html",
                "hard.json",
            ],
            2,
            &["--html hard.json", "input trace"],
            d,
        ),
        case(
            "html over the input via a link",
            &["show", "t.json", "--html", "link.json"],
            2,
            &["--html link.json", "input trace"],
            d,
        ),
        case(
            "svg over the input via a hard link",
            &["show", "t.json", "--svg", "hard.json"],
            2,
            &["--svg hard.json", "input trace"],
            d,
        ),
        case(
            "two outputs, one file",
            &["show", "t.json", "--svg", "x.svg", "--html", "./x.svg"],
            2,
            &["same file"],
            d,
        ),
        case(
            "two outputs through a directory",
            &[
                "show",
                "t.json",
                "--svg",
                "out/p.svg",
                "--html",
                "out/../out/p.svg",
            ],
            2,
            &["same file"],
            d,
        ),
        case(
            "output into a missing directory",
            &["show", "t.json", "--svg", "nowhere/p.svg"],
            2,
            &["nowhere/p.svg", "cannot write there"],
            d,
        ),
        case(
            "output is a directory",
            &["show", "t.json", "--html", "out"],
            2,
            &["--html out", "is a directory"],
            d,
        ),
        case(
            "shrink --out a file",
            &["shrink", "t.json", "--out", "t.json"],
            2,
            &["--out t.json", "not a directory"],
            d,
        ),
        // Widths.
        case(
            "width 0",
            &["show", "t.json", "--width", "0"],
            2,
            &["--width", "40 to 1000"],
            d,
        ),
        case(
            "width absurd",
            &["show", "t.json", "--width", "1000000000000"],
            2,
            &["40 to 1000"],
            d,
        ),
        case(
            "width negative",
            &["show", "t.json", "--width=-3"],
            2,
            &["40 to 1000"],
            d,
        ),
        case(
            "width not a number",
            &["show", "t.json", "--width", "wide"],
            2,
            &["number of columns"],
            d,
        ),
        // Links that loop under a directory: each real directory once, each file once.
        case(
            "replay through looping links",
            &["replay", "looped"],
            0,
            &["1 trace(s): 1 reproduced"],
            d,
        ),
    ];
    #[cfg(unix)]
    cases.extend([
        case(
            "show a fifo",
            &["show", "fifo.json"],
            2,
            &["fifo.json", "fifo"],
            d,
        ),
        case(
            "output is a fifo",
            &["show", "t.json", "--svg", "fifo.json"],
            2,
            &["fifo.json", "not a regular file"],
            d,
        ),
        case(
            "replay a directory holding a fifo",
            &["replay", "fifodir"],
            2,
            &["fifodir/x.json", "fifo"],
            d,
        ),
    ]);
    check_all(cases);
    // Nothing refused above touched the input or left a file behind.
    assert_eq!(
        std::fs::read_to_string(dir.join("t.json")).unwrap(),
        step5_text()
    );
    for name in ["x.svg", "out/p.svg", "nowhere"] {
        assert!(!dir.join(name).exists(), "{name} was written");
    }
}
