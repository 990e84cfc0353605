//! `leaselab matrix`: its cells agree with the tutorial where the tutorial speaks, its BROKEN
//! cells' traces replay, its exit codes follow the contract, and its HTML report renders in a
//! headless browser.

use std::path::{Path, PathBuf};
use std::process::Command;

use leaselab::matrix::{
    run_cell, Cell, CheckCache, Column, DirSaver, NoSaver, Options, Row, Verdict,
};
use leaselab::trace::{self, replay::replay};
use leaselab_model::fault::Fault;
use leaselab_model::safeguard::{Point, Safeguard};

const OPTIONS: Options = Options {
    first_seed: 1,
    runs: 4,
    max_states: 5_000_000,
    timing: None,
    threads: 2,
};

fn row(name: &str) -> Row {
    Row::builtin(Safeguard::parse(name).expect("a known safeguard"))
}

fn cell(name: &str, column: Column) -> Cell {
    run_cell(
        &row(name),
        column,
        OPTIONS,
        &mut CheckCache::default(),
        &mut NoSaver,
    )
    .expect("the cell runs")
}

/// Asserts both halves of a cell, and that it is not flagged as disagreeing.
fn assert_cell(cell: &Cell, exhaustive: Option<Verdict>, simulated: Verdict) {
    let at = format!("{} × {}", cell.row, cell.column);
    assert_eq!(cell.simulated.verdict, simulated, "{at}: simulated");
    if let Some(exhaustive) = exhaustive {
        assert_eq!(cell.exhaustive.verdict, exhaustive, "{at}: exhaustive");
    }
    assert!(
        !cell.unexpected,
        "{at} is flagged as not as the tutorial says"
    );
    if simulated == Verdict::Broken {
        let found = cell
            .simulated
            .counterexample
            .as_ref()
            .expect("a counterexample");
        assert!(!found.why.is_empty(), "{at}: a sentence of why");
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leaselab-matrix-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

#[test]
fn step3_the_lease_breaks_when_work_outlives_it_and_the_watchdog_holds() {
    use Verdict::{Broken, Safe};
    let lease = cell("lease", Column::WorkOverTtl);
    assert_cell(&lease, Some(Broken), Broken);
    assert_eq!(lease.simulated.broken, OPTIONS.runs, "every run breaks");
    assert_cell(
        &cell("lease-watchdog", Column::WorkOverTtl),
        Some(Safe),
        Safe,
    );
}

#[test]
fn step5_a_checked_fence_survives_the_pause_and_an_unchecked_one_does_not() {
    let fenced = cell("fenced", Column::Pause(Point::AfterRead));
    assert_cell(&fenced, None, Verdict::Safe);
    // The paused holder's write is the one refused, in every run.
    assert_eq!(fenced.simulated.cost.rejected, OPTIONS.runs);
    let unchecked = cell("fenced-unchecked", Column::Pause(Point::AfterRead));
    assert_cell(&unchecked, Some(Verdict::Broken), Verdict::Broken);
    let why = &unchecked.simulated.counterexample.as_ref().unwrap().why;
    assert!(why.contains("fencing token 33"), "{why}");
}

#[test]
fn step6_fencing_alone_breaks_under_a_1ms_ttl_and_check_and_set_holds() {
    use Verdict::{Broken, Safe};
    assert_cell(&cell("fenced", Column::ShortTtl), Some(Broken), Broken);
    let cas = cell("fenced-cas", Column::ShortTtl);
    assert_cell(&cas, Some(Safe), Safe);
    assert!(
        cas.simulated.cost.rejected > 0,
        "check-and-set refuses writes"
    );
}

#[test]
fn safety_a_failover_breaks_every_lease_only_lock() {
    let lease_only = [
        "setnx-del",
        "setnx-expire",
        "lease",
        "lease-delex",
        "lease-watchdog",
        "redislock-no-retry",
        "redislock-exponential-16ms-128ms",
        "redislock-exponential-16ms-128ms+jitter",
    ];
    let mut cache = CheckCache::default();
    for name in lease_only {
        let cell = run_cell(
            &row(name),
            Column::Failover,
            OPTIONS,
            &mut cache,
            &mut NoSaver,
        )
        .expect("the cell runs");
        assert_cell(&cell, Some(Verdict::Broken), Verdict::Broken);
    }
}

#[test]
fn safety_fencing_limits_a_reissued_token_to_one_win() {
    let fenced = cell("fenced", Column::Failover);
    assert_cell(&fenced, Some(Verdict::Safe), Verdict::Safe);
    // The failover reissued a token in every run, and its second write was refused.
    assert!(fenced.simulated.tokens_reissued >= OPTIONS.runs);
    assert!(fenced.simulated.cost.rejected >= OPTIONS.runs);
    let unchecked = cell("fenced-unchecked", Column::Failover);
    assert_cell(&unchecked, None, Verdict::Broken);
    let why = &unchecked.simulated.counterexample.as_ref().unwrap().why;
    assert!(why.contains("issued twice"), "{why}");
}

#[test]
fn redis_faults_are_na_for_postgres_only_safeguards_and_a_restart_is_decided_both_ways() {
    let pg = cell("pg-for-update", Column::Failover);
    assert_eq!(pg.verdict(), Verdict::NotApplicable);
    assert_eq!(pg.simulated.runs, 0, "nothing runs for an n/a cell");
    // A restart without persistence resets the fence counter: a lower token wins, both ways.
    let restart = cell("fenced", Column::Restart);
    assert_cell(&restart, Some(Verdict::Broken), Verdict::Broken);
    assert!(restart.exhaustive.bound.contains("1 Redis restart"));
    // Check-and-set keeps the ledger through it.
    assert_cell(
        &cell("fenced-cas", Column::Restart),
        Some(Verdict::Safe),
        Verdict::Safe,
    );
    // With the balance in Redis the restart wipes the balance too. The simulated lease is
    // SAFE only because the caller after the restart fails and the paused holder writes the
    // balance back; the checker's restart at any moment finds the money gone for good.
    let lease = cell("lease", Column::Restart);
    assert_eq!(lease.simulated.verdict, Verdict::Safe);
    assert_eq!(lease.simulated.cost.failed, OPTIONS.runs);
    assert_eq!(lease.exhaustive.verdict, Verdict::Broken);
    assert!(
        lease
            .why()
            .is_some_and(|why| why.contains("balance itself was gone")),
        "{:?}",
        lease.why()
    );
    // lease-wait has a replica, which the checker's restart does not model.
    let wait = cell("lease-wait", Column::Restart);
    assert_eq!(wait.exhaustive.verdict, Verdict::NotExpressible);
}

/// The safety section's PostgreSQL rows: transfers keep the ledger with or without lock
/// order (the unordered ones' deadlocks are retried); read-modify-write loses updates under
/// READ COMMITTED only. Redis faults and TTL faults are n/a, each with its reason.
#[test]
fn transfers_and_isolation_levels_are_decided_both_ways_and_redis_faults_are_na() {
    for name in [
        "pg-transfer-ordered",
        "pg-transfer-unordered",
        "pg-repeatable-read",
        "pg-serializable",
    ] {
        for column in [Column::None, Column::Pause(Point::AfterAcquire)] {
            assert_cell(&cell(name, column), Some(Verdict::Safe), Verdict::Safe);
        }
    }
    let deadlocks = cell("pg-transfer-unordered", Column::None);
    assert!(deadlocks.simulated.runs > 0);
    for column in [Column::None, Column::Pause(Point::AfterRead)] {
        let lost = cell("pg-read-committed", column);
        assert_cell(&lost, Some(Verdict::Broken), Verdict::Broken);
        assert!(lost.why().is_some_and(|why| why.contains("overwrote")));
    }
    for (name, column, reason) in [
        (
            "pg-transfer-unordered",
            Column::Failover,
            "keeps nothing in Redis",
        ),
        ("pg-serializable", Column::ShortTtl, "no lease TTL"),
    ] {
        let na = cell(name, column);
        assert_eq!(na.verdict(), Verdict::NotApplicable);
        let text = format!("{na:?}");
        assert!(text.contains(reason), "{text}");
    }
}

#[test]
fn safety_redlock_breaks_under_a_node_restart_or_clock_jump_and_check_and_set_holds() {
    use Verdict::{Broken, NotApplicable, NotExpressible, Safe};
    let rows = Row::all();
    let redlock = rows
        .iter()
        .find(|r| r.name == "redlock-3-nodes")
        .expect("the matrix has a redlock row");
    let cas = rows
        .iter()
        .find(|r| r.name == "redlock-cas-3-nodes")
        .expect("the matrix has a redlock-cas row");
    let mut cache = CheckCache::default();
    let mut decide = |row: &Row, column| {
        run_cell(row, column, OPTIONS, &mut cache, &mut NoSaver).expect("the cell runs")
    };
    for column in [Column::Restart, Column::ClockJump] {
        let broken = decide(redlock, column);
        assert_cell(&broken, Some(Broken), Broken);
        assert!(broken.expected.is_some(), "{column:?} is pinned");
        assert_eq!(broken.simulated.broken, OPTIONS.runs, "every run breaks");
        assert_cell(&decide(cas, column), Some(Safe), Safe);
    }
    // A pause past the validity: simulated only (the search outgrows the matrix's limit).
    let paused = decide(redlock, Column::Pause(Point::AfterRead));
    assert_cell(&paused, None, Broken);
    assert_eq!(paused.exhaustive.verdict, NotExpressible);
    assert_cell(&decide(cas, Column::Pause(Point::AfterRead)), None, Safe);
    // The single Redis's faults do not apply to independent nodes, and say why.
    for column in [Column::Failover, Column::AofCrash, Column::EvictFence] {
        let cell = decide(redlock, column);
        assert_eq!(cell.verdict(), NotApplicable, "{column:?}");
        assert_eq!(cell.simulated.runs, 0);
        assert!(
            cell.simulated.seeds.contains("redlock-3-nodes"),
            "{column:?}"
        );
    }
}

#[test]
fn every_broken_cells_traces_replay() {
    let dir = temp_dir("replay");
    let mut saver = DirSaver(dir.clone());
    let mut cache = CheckCache::default();
    let cells = [
        ("fenced", Column::Restart),
        ("lease", Column::ClockJump),
        ("lease-watchdog", Column::Failover),
        ("fenced", Column::ShortTtl),
    ];
    let mut saved = Vec::new();
    for (name, column) in cells {
        let cell = run_cell(&row(name), column, OPTIONS, &mut cache, &mut saver).unwrap();
        assert_eq!(
            cell.verdict(),
            Verdict::Broken,
            "{name} × {}",
            column.name()
        );
        for found in [
            &cell.exhaustive.counterexample,
            &cell.simulated.counterexample,
        ]
        .into_iter()
        .flatten()
        {
            let path = found.trace.clone().unwrap_or_else(|| {
                panic!("{name}: no trace: {:?}", found.trace_note);
            });
            saved.push(path);
        }
    }
    assert!(saved.len() >= 6, "{saved:?}");
    for path in &saved {
        let loaded = trace::load(path).unwrap();
        let result = replay(&loaded).unwrap();
        assert!(
            result.reproduced(),
            "{}: {}",
            path.display(),
            result.describe(&loaded)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn leaselab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .output()
        .expect("leaselab runs")
}

#[test]
fn the_command_prints_json_and_follows_the_exit_code_contract() {
    let output = leaselab(&[
        "matrix",
        "--safeguard",
        "fenced-cas",
        "--safeguard",
        "lease",
        "--fault",
        "none",
        "--fault",
        "ttl1",
        "--runs",
        "2",
        "--no-save-traces",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    let lease_ttl = cells
        .iter()
        .find(|c| c["row"] == "lease" && c["column"] == "ttl-1ms")
        .unwrap();
    assert_eq!(lease_ttl["simulated"]["verdict"], "BROKEN");
    assert_eq!(lease_ttl["exhaustive"]["verdict"], "BROKEN");
    assert!(lease_ttl["exhaustive"]["bound"]
        .as_str()
        .unwrap()
        .contains("2 callers"));

    // The table fits 100 columns. (Two seeds: in seed 1 every one of pg-transfer-unordered's
    // 50 callers times out behind the deadlocks, so that seed alone spends nothing and decides
    // nothing; seed 2 does.)
    let output = leaselab(&[
        "matrix",
        "--fault",
        "none",
        "--runs",
        "2",
        "--no-save-traces",
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too wide: {line}");
    }
    assert!(text.contains("redislock-exponential-16ms-128ms+jitter"));

    // A state limit too small to decide is INCONCLUSIVE: exit 3.
    let output = leaselab(&[
        "matrix",
        "--safeguard",
        "lease",
        "--fault",
        "none",
        "--runs",
        "1",
        "--max-states",
        "10",
        "--no-save-traces",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("INCONCLUSIVE: lease × none"), "{stdout}");
    // And says why, in the terminal too.
    assert!(
        stdout.contains("lease × none: exhaustive INCONCLUSIVE:")
            && stdout.contains("--max-states"),
        "{stdout}"
    );

    // More seeds than a matrix can use are refused before any work.
    let output = leaselab(&["matrix", "--runs", "18446744073709551615"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at most 100000"));

    // The exit status is explained under --help.
    let output = leaselab(&["matrix", "--help"]);
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("1 a pinned cell disagrees"), "{help}");

    // An HTML report into a directory that does not exist is refused before any work.
    let output = leaselab(&["matrix", "--html", "/nonexistent-dir/report.html"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent-dir cannot be used"));

    // Bad input: exit 2, naming the known faults.
    let output = leaselab(&["matrix", "--fault", "meteor"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--fault meteor") && stderr.contains("pause-after-read"),
        "{stderr}"
    );
}

/// The browser: `chromium` (Debian's package), or `$LEASELAB_CHROMIUM`.
fn chromium() -> PathBuf {
    if let Ok(path) = std::env::var("LEASELAB_CHROMIUM") {
        return PathBuf::from(path);
    }
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "no headless browser for the HTML report test: install one with \
         `apt-get install -y chromium` (.ci/run does) or point LEASELAB_CHROMIUM at it"
    );
}

#[test]
fn the_html_report_is_self_contained_and_renders_in_a_headless_browser() {
    let dir = temp_dir("html");
    let html = dir.join("report.html");
    let traces = dir.join("traces");
    let output = leaselab(&[
        "matrix",
        "--safeguard",
        "lease",
        "--safeguard",
        "fenced",
        "--safeguard",
        "pg-debit",
        "--fault",
        "pause-after-read",
        "--fault",
        "failover",
        "--runs",
        "2",
        "--save-traces",
        traces.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for external in ["<script", "<link", "src=", "@import", "url(http"] {
        assert!(
            !page.contains(external),
            "the report loads something: {external}"
        );
    }
    // Each BROKEN cell links to its section, with its timeline.
    assert!(page.contains("href=\"#cell-lease-pause-after-read\""));
    assert!(page.contains("id=\"cell-lease-pause-after-read\""));
    assert!(page.matches("<svg").count() >= 2, "timelines are inlined");

    let shot = dir.join("report.png");
    let status = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,900",
        ])
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    assert_eq!((info.width, info.height), (1200, 900));
    let channels = info.color_type.samples();
    let pixels = &pixels[..info.buffer_size()];
    let colours: std::collections::BTreeSet<&[u8]> = pixels.chunks(channels).collect();
    assert!(
        colours.len() >= 16,
        "a blank page: {} colours",
        colours.len()
    );
    // The SAFE cells' green and the BROKEN cells' red are on the first screen.
    let near = |want: [u8; 3]| {
        pixels.chunks(channels).any(|p| {
            p.iter()
                .zip(want)
                .all(|(have, want)| have.abs_diff(want) <= 6)
        })
    };
    assert!(near([0xc7, 0xec, 0xc7]), "no SAFE cell shows");
    assert!(near([0xf7, 0xb6, 0xb6]), "no BROKEN cell shows");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_status_is_1_for_a_disagreeing_cell_3_for_an_undecided_one_and_0_otherwise() {
    use leaselab::cli::matrix::status;
    use leaselab::exit::Status;
    let rows = [row("lease")];
    let columns = [Column::WorkOverTtl];
    let mut matrix =
        leaselab::matrix::run(&rows, &columns, OPTIONS, None, &mut NoSaver, |_, _| {}).unwrap();
    // BROKEN as step 3 says: a finding, exit 0.
    assert_eq!(matrix.cells[0].verdict(), Verdict::Broken);
    assert_eq!(status(&matrix), Status::Ok);
    matrix.cells[0].exhaustive.verdict = Verdict::Inconclusive;
    assert_eq!(status(&matrix), Status::Inconclusive);
    matrix.cells[0].unexpected = true;
    assert_eq!(status(&matrix), Status::Violation);
}

/// `lease-wait` (WAIT 1 after the acquire) is a row of its own: its cells run with a replica
/// (5 ms behind), and WAIT changes nothing against a pause, while the failover column runs
/// the `wait-failover` preset, where the resent WAIT is answered for a connection that wrote
/// nothing: BROKEN both ways, as the safety section says.
#[test]
fn lease_wait_is_a_row_and_wait_does_not_save_it_from_a_pause_or_a_failover() {
    let rows = Row::all();
    assert!(
        rows.iter().any(|r| r.name == "lease-wait"),
        "no lease-wait row"
    );
    let none = cell("lease-wait", Column::None);
    assert_cell(&none, Some(Verdict::Safe), Verdict::Safe);
    assert_eq!(
        none.simulated.cost.gave_up, 0,
        "WAIT was answered 0: {none:?}"
    );
    assert!(none
        .note
        .as_deref()
        .is_some_and(|n| n.contains("5ms behind")));
    let paused = cell("lease-wait", Column::Pause(Point::AfterRead));
    assert_cell(&paused, Some(Verdict::Broken), Verdict::Broken);
    let failover = cell("lease-wait", Column::Failover);
    assert_cell(&failover, Some(Verdict::Broken), Verdict::Broken);
    assert!(failover.expected.is_some(), "the failover cell is pinned");
    assert!(failover
        .note
        .as_deref()
        .is_some_and(|n| n.contains("wait-failover")));
    assert_eq!(
        cell("lease-wait", Column::AofCrash).verdict(),
        Verdict::NotApplicable
    );
}

/// The same forward correction of Redis's clock breaks the leases when it is stepped and
/// keeps them when it is slewed at 500 ppm (the safety section's "nobody steps the system
/// clock"), both ways: the simulation's +3s against a 2s lease, the checker's TTL + 1 ticks at
/// any moment; for Redlock the correction strikes one node. Check-and-set keeps the ledger
/// under the jump.
#[test]
fn a_stepped_clock_breaks_the_lease_and_the_same_correction_slewed_keeps_it() {
    for name in ["lease", "lease-watchdog", "fenced", "redlock-3-nodes"] {
        let jumped = cell(name, Column::ClockJump);
        assert_cell(&jumped, Some(Verdict::Broken), Verdict::Broken);
        let slewed = cell(name, Column::ClockSlew);
        assert_cell(&slewed, Some(Verdict::Safe), Verdict::Safe);
        assert!(slewed.expected.is_some(), "{name} × clock-slew is pinned");
        assert_eq!(slewed.simulated.cost.failed, 0, "{name}: {slewed:?}");
    }
    assert_cell(
        &cell("fenced-cas", Column::ClockJump),
        Some(Verdict::Safe),
        Verdict::Safe,
    );
    // A partition cutting the holder off Redis: the checker cuts any caller off at any
    // moment; the watchdog keeps the ledger both ways.
    let cut = cell("lease-watchdog", Column::Partition);
    assert_cell(&cut, Some(Verdict::Safe), Verdict::Safe);
    assert!(
        cut.expected.is_some(),
        "lease-watchdog × partition is pinned"
    );
    let scenario = Column::ClockSlew.scenario(&row("redlock-3-nodes"));
    assert!(
        scenario
            .faults
            .iter()
            .any(|f| matches!(f, Fault::ClockSlew { rate_ppm: 500, .. })),
        "{scenario:?}"
    );
}

/// The reply-fault columns: a retried token-less release breaks the ledger both ways (the
/// checker with 3 callers), a compare-and-delete release holds; a duplicated acquire and a
/// lost release reply cost availability only. Both halves name their fault.
#[test]
fn reply_fault_columns_break_only_the_token_less_release() {
    for name in ["setnx-del", "setnx-expire"] {
        let retried = cell(name, Column::RetriedRelease);
        assert_cell(&retried, Some(Verdict::Broken), Verdict::Broken);
        assert!(
            retried.expected.is_some(),
            "{name} × retried-release is pinned"
        );
    }
    for name in ["lease", "fenced", "redlock-3-nodes"] {
        for column in [
            Column::DuplicatedAcquire,
            Column::RetriedRelease,
            Column::LostReleaseReply,
        ] {
            assert_cell(&cell(name, column), Some(Verdict::Safe), Verdict::Safe);
        }
    }
    let check = Column::RetriedRelease
        .check(&row("setnx-del"))
        .expect("expressible");
    assert_eq!(check.callers, 3);
    assert_eq!(check.reply_faults.dropped_connections, 1);
    let scenario = Column::LostReleaseReply.scenario(&row("lease"));
    assert!(
        scenario
            .faults
            .iter()
            .any(|f| matches!(f, Fault::LostReply { caller: 1, .. })),
        "{scenario:?}"
    );
    assert_eq!(
        cell("pg-debit", Column::RetriedRelease).verdict(),
        Verdict::NotApplicable
    );
}

/// A token-less lock without a TTL whose acquire is duplicated is held for good by the
/// duplicate: in every seed every caller gives up, nothing is spent, and the ledger holding
/// says nothing about the lock. The simulated half is INCONCLUSIVE with every run untested,
/// not SAFE; the same column with a lock whose callers do spend (`lease`) is SAFE.
#[test]
fn a_cell_in_which_no_seed_spends_anything_is_inconclusive_not_safe() {
    let stuck = cell("setnx-del", Column::DuplicatedAcquire);
    let simulated = &stuck.simulated;
    assert_eq!(simulated.verdict, Verdict::Inconclusive, "{simulated:?}");
    assert_eq!(simulated.untested, simulated.runs, "{simulated:?}");
    assert_eq!(simulated.inconclusive, 0, "no run hit its time limit");
    assert!(simulated.cost.gave_up > 0, "{simulated:?}");
    assert_eq!(stuck.verdict(), Verdict::Inconclusive);
    let spending = cell("lease", Column::DuplicatedAcquire);
    assert_eq!(spending.simulated.untested, 0, "{:?}", spending.simulated);
    assert_eq!(spending.simulated.verdict, Verdict::Safe);

    // The command exits 3 for it and says why, in the text and in the HTML cell's title.
    let html = temp_dir("untested").join("report.html");
    let output = leaselab(&[
        "matrix",
        "--safeguard",
        "setnx-del",
        "--fault",
        "dacq",
        "--runs",
        "2",
        "--no-save-traces",
        "--html",
        html.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains("in none of its 2 runs did a spend reach"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("2 spent nothing (no spend reached the storage)"),
        "the cell's title says why"
    );
}

/// Redis's clock 2% fast against a lease sized with a 0.5% margin: the lease expires under
/// its holder (the same scenario without the drift holds), the watchdog's refresh and
/// check-and-set keep the ledger; on Redlock every node's clock drifts. The checker, whose
/// whole ticks cannot show 2%, runs the clock 50% fast against a 4-tick lease and 3 ticks of
/// work and finds the same verdicts; with an exact clock that check is SAFE for every row.
#[test]
fn a_fast_clock_expires_a_lease_without_margin_and_the_watchdog_holds() {
    for (name, verdict) in [
        ("lease", Verdict::Broken),
        ("fenced", Verdict::Broken),
        ("redlock-3-nodes", Verdict::Broken),
        ("lease-watchdog", Verdict::Safe),
        ("fenced-cas", Verdict::Safe),
    ] {
        let drifted = cell(name, Column::ClockDrift);
        assert_eq!(drifted.simulated.verdict, verdict, "{name} × clock-drift");
        assert_eq!(drifted.exhaustive.verdict, verdict, "{name} exhaustive");
        let mut exact = Column::ClockDrift.check(&row(name)).expect("expressible");
        exact.redis_drift_percent = 0;
        exact.node_faults.drift_percent = 0;
        let report = leaselab_checker::run(
            &leaselab_checker::LeaseModel::new(exact).expect("valid"),
            leaselab_checker::RunOptions::default(),
            &leaselab_checker::bfs::Counters::default(),
        );
        assert_eq!(
            report.verdict(leaselab_checker::LEDGER),
            Some(leaselab_checker::PropertyVerdict::Safe),
            "{name} on an exact clock"
        );
    }
    let mut calm = Column::ClockDrift.scenario(&row("lease"));
    assert!(calm.faults.iter().any(|f| matches!(
        f,
        Fault::ClockDrift {
            rate_ppm: 20_000,
            ..
        }
    )));
    calm.faults.clear();
    for seed in 1..=4 {
        let report = leaselab_sim::run::run(&calm, seed).expect("it runs");
        assert!(!report.broken(), "seed {seed}: {}", report.ledger.line());
    }
    let nodes = Column::ClockDrift.scenario(&row("redlock-3-nodes"));
    assert_eq!(nodes.faults.len(), 3, "{:?}", nodes.faults);
}

/// The tutorial's safeguards written as files get the same matrix as the built-ins: the same
/// columns apply (a file's lock has a TTL when it names `{ttl_ms}`, a fence counter when it
/// names `{fence_key}`, a watchdog when it has a `[refresh]`), with the same notes, and the
/// cells where applicability once differed give the same verdicts.
#[test]
fn the_tutorial_files_get_the_built_in_rows_columns_and_verdicts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, builtin) in [
        ("setnx-del", "setnx-del"),
        ("lease", "lease"),
        ("lease-watchdog", "lease-watchdog"),
        ("fenced", "fenced"),
        ("fenced-cas", "fenced-cas"),
    ] {
        let path = root.join(format!("safeguards/tutorial/{file}.toml"));
        let text = std::fs::read_to_string(&path).expect("shipped");
        let spec = leaselab_model::safeguard::spec::compile(file, &text)
            .unwrap_or_else(|error| panic!("{error}"));
        let id = leaselab_model::safeguard::user::register(spec).expect("registers");
        let from_file = Row::builtin(Safeguard::User(id));
        let built_in = row(builtin);
        for column in Column::all() {
            assert_eq!(
                column.applies(&from_file).is_ok(),
                column.applies(&built_in).is_ok(),
                "{file} × {}: applies",
                column.name()
            );
            assert_eq!(
                column.note(&from_file).is_some(),
                column.note(&built_in).is_some(),
                "{file} × {}: note",
                column.name()
            );
        }
        for column in [Column::ShortTtl, Column::EvictFence, Column::WorkOverTtl] {
            if column.applies(&built_in).is_err() {
                continue;
            }
            let run = |row: &Row| {
                run_cell(
                    row,
                    column,
                    OPTIONS,
                    &mut CheckCache::default(),
                    &mut NoSaver,
                )
                .expect("the cell runs")
            };
            let (a, b) = (run(&from_file), run(&built_in));
            assert_eq!(
                a.simulated.verdict,
                b.simulated.verdict,
                "{file} × {}",
                column.name()
            );
            assert_eq!(
                a.exhaustive.verdict,
                b.exhaustive.verdict,
                "{file} × {}: exhaustive",
                column.name()
            );
        }
    }
}

/// Redlock keeps the ledger, and hands no lock out twice, when one of its three nodes is
/// lost: the two left are a majority. The column does not apply to a lock on one Redis.
#[test]
fn losing_one_redlock_node_of_three_is_safe() {
    for name in ["redlock-3-nodes", "redlock-cas-3-nodes"] {
        let found = cell(name, Column::NodeLoss);
        assert_cell(&found, Some(Verdict::Safe), Verdict::Safe);
        assert!(found.expected.is_some(), "{name}: pinned");
        assert!(found.simulated.cost.gave_up == 0, "{name}: nobody gave up");
    }
    assert_eq!(
        cell("lease", Column::NodeLoss).verdict(),
        Verdict::NotApplicable
    );
}

/// A machine crash with Redis reloading its AOF (fsynced at the start, then at moments the
/// search picks) is decided by the
/// checker too: the fence counter comes back lower, so tokens are issued again; `fence < $2`
/// refuses the stale one and keeps the ledger, an unchecked fence does not.
#[test]
fn a_crash_reloading_the_aof_is_decided_both_ways() {
    let fenced = cell("fenced", Column::AofCrash);
    assert_cell(&fenced, Some(Verdict::Safe), Verdict::Safe);
    let unchecked = cell("fenced-unchecked", Column::AofCrash);
    assert_cell(&unchecked, Some(Verdict::Broken), Verdict::Broken);
    let config = Column::AofCrash.check(&row("fenced")).expect("expressible");
    assert!(
        config.restarts == 1 && config.restarts_from_aof,
        "{config:?}"
    );
}
