//! Safeguard files (`--safeguard-file`): the tutorial's safeguards written as TOML run byte
//! for byte as the built-in ones, in the simulation and in the checker; the shipped examples
//! run; bad files get an error naming file, line and field, and no input panics.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use leaselab_checker::bfs::Counters;
use leaselab_checker::{run as check, CheckConfig, LeaseModel, RunOptions};
use leaselab_model::ledger::Verdict;
use leaselab_model::safeguard::{spec, user, Safeguard};
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::run::run;
use proptest::prelude::*;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Loads and registers a shipped file.
fn load(path: &str) -> Safeguard {
    let text = std::fs::read_to_string(repo(path)).expect("the file is shipped");
    let spec = spec::compile(path, &text).unwrap_or_else(|error| panic!("{error}"));
    Safeguard::User(user::register(spec).expect("registers"))
}

fn tutorial(step: &str, variant: Variant) -> Scenario {
    Scenario::tutorial(step, variant).expect("a tutorial step")
}

/// The same scenario with another safeguard.
fn with(scenario: &Scenario, safeguard: Safeguard) -> Scenario {
    Scenario {
        safeguard,
        ..scenario.clone()
    }
}

/// The exhaustive check of `safeguard` with two callers to a horizon of 6 ticks (and
/// `max_pause_ticks`), as its report.
fn check_two_callers(
    safeguard: Safeguard,
    max_pause_ticks: Option<u64>,
) -> leaselab_checker::CheckReport {
    let mut config = CheckConfig::new(safeguard);
    config.horizon_ticks = Some(6);
    config.max_pause_ticks = max_pause_ticks;
    check(
        &LeaseModel::new(config).expect("valid"),
        RunOptions::default(),
        &Counters::default(),
    )
}

/// Each tutorial file, the built-in safeguard it spells, and a scenario to run both in.
fn pairs() -> Vec<(&'static str, Safeguard, Scenario)> {
    let step2 = tutorial("step2-lock", Variant::default());
    let step3 = tutorial("step3-ttl", Variant::default());
    let step5 = tutorial("step5-fencing", Variant::default());
    let step6 = tutorial("step6-verify", Variant::default());
    vec![
        (
            "safeguards/tutorial/setnx-del.toml",
            Safeguard::SetnxDel,
            with(&step2, Safeguard::SetnxDel),
        ),
        (
            "safeguards/tutorial/lease.toml",
            step2.safeguard,
            step2.clone(),
        ),
        ("safeguards/tutorial/lease.toml", step3.safeguard, step3),
        (
            "safeguards/tutorial/lease-watchdog.toml",
            Safeguard::LeaseWatchdog,
            tutorial(
                "step3-ttl",
                Variant {
                    watchdog: true,
                    ..Variant::default()
                },
            ),
        ),
        ("safeguards/tutorial/fenced.toml", step5.safeguard, step5),
        (
            "safeguards/tutorial/fenced.toml",
            step6.safeguard,
            step6.clone(),
        ),
        (
            "safeguards/tutorial/fenced-cas.toml",
            Safeguard::parse("fenced-cas").unwrap(),
            with(&step6, Safeguard::parse("fenced-cas").unwrap()),
        ),
    ]
}

#[test]
fn the_tutorial_files_run_byte_for_byte_as_the_built_in_safeguards() {
    for (file, builtin, scenario) in pairs() {
        assert_eq!(scenario.safeguard, builtin);
        let user = load(file);
        assert_ne!(user, builtin);
        for seed in 1..=3 {
            let expected = run(&scenario, seed).expect("runs");
            let got = run(&with(&scenario, user), seed).expect("runs");
            let what = format!(
                "{file} vs {} in {} seed {seed}",
                builtin.name(),
                scenario.name
            );
            assert_eq!(got.digest(), expected.digest(), "{what}");
            assert_eq!(got.ledger, expected.ledger, "{what}");
            let outcomes = |r: &leaselab_sim::run::RunReport| {
                r.callers
                    .iter()
                    .map(|c| format!("{:?}", c.outcome))
                    .collect::<Vec<_>>()
            };
            assert_eq!(outcomes(&got), outcomes(&expected), "{what}");
        }
    }
}

#[test]
fn the_tutorial_files_give_the_checker_the_same_states_and_verdicts() {
    for (file, builtin) in [
        ("safeguards/tutorial/setnx-del.toml", Safeguard::SetnxDel),
        (
            "safeguards/tutorial/lease.toml",
            Safeguard::parse("lease").unwrap(),
        ),
        (
            "safeguards/tutorial/fenced.toml",
            Safeguard::parse("fenced").unwrap(),
        ),
        (
            "safeguards/tutorial/fenced-cas.toml",
            Safeguard::parse("fenced-cas").unwrap(),
        ),
    ] {
        let user = load(file);
        let config = |safeguard| {
            let mut config = CheckConfig::new(safeguard);
            config.ttl_ticks = 1;
            config.horizon_ticks = Some(5);
            config
        };
        let report = |safeguard| {
            check(
                &LeaseModel::new(config(safeguard)).expect("valid"),
                RunOptions::default(),
                &Counters::default(),
            )
        };
        let (expected, got) = (report(builtin), report(user));
        assert_eq!(got.unique_states, expected.unique_states, "{file}");
        assert_eq!(got.states_generated, expected.states_generated, "{file}");
        let verdicts = |r: &leaselab_checker::CheckReport| {
            r.properties
                .iter()
                .map(|p| (p.name, p.verdict, p.steps))
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts(&got), verdicts(&expected), "{file}");
    }
}

#[test]
fn redsync_keeps_the_ledger_and_its_extend_covers_long_work() {
    let redsync = load("safeguards/redsync.toml");
    let step2 = with(&tutorial("step2-lock", Variant::default()), redsync);
    let step3 = with(&tutorial("step3-ttl", Variant::default()), redsync);
    for scenario in [step2, step3] {
        for seed in 1..=3 {
            let report = run(&scenario, seed).expect("runs");
            assert_eq!(
                report.ledger.verdict,
                Verdict::Ok,
                "{} seed {seed}",
                scenario.name
            );
            assert!(report.ledger.accepted > 0, "{} seed {seed}", scenario.name);
        }
    }
    // The watchdog (its touch script) refreshed the lease during step 3's 300 ms of work.
    let report = run(
        &with(&tutorial("step3-ttl", Variant::default()), redsync),
        1,
    )
    .unwrap();
    let refreshes: u32 = report.callers.iter().map(|c| c.stats.refreshes).sum();
    assert!(refreshes > 0, "no refresh in {:?}", report.callers);
}

#[test]
fn the_version_column_alone_keeps_the_ledger_and_refuses_conflicts() {
    let version = load("safeguards/version-column.toml");
    let race = with(&tutorial("step1-race", Variant::default()), version);
    let mut refused = 0;
    for seed in 1..=3 {
        let report = run(&race, seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Ok, "seed {seed}");
        refused += report.ledger.rejected;
    }
    assert!(refused > 0, "50 racing callers never conflicted");
    // And exhaustively, for two callers.
    let report = check_two_callers(version, None);
    assert_eq!(
        report.verdict(leaselab_checker::LEDGER),
        Some(leaselab_checker::PropertyVerdict::Safe)
    );
}

/// The version column written as a user might write it with a subquery in `FROM` and a
/// `WITH` query (`UPDATE ... FROM` the row whose version still matches): the same states
/// and verdicts as the plain file, in the checker and the simulation (the statement's own
/// relations leave nothing in a state). Without its version test, the same shape loses
/// updates.
#[test]
fn a_version_column_written_with_subqueries_explores_the_same_states() {
    let text = std::fs::read_to_string(repo("safeguards/version-column.toml")).unwrap();
    let read = "SELECT balance, fence FROM wallets WHERE id = {wallet_id}";
    let write =
        "UPDATE wallets SET balance = $1, fence = fence + 1 WHERE id = {wallet_id} AND fence = $2";
    assert!(
        text.contains(read) && text.contains(write),
        "the file's statements"
    );
    let through = |name: &str, write_as: &str, params: &str| {
        let text = text
            .replace("name = \"version-column\"", &format!("name = \"{name}\""))
            .replace(
                read,
                "SELECT balance, fence FROM (SELECT * FROM wallets) w WHERE id = {wallet_id}",
            )
            .replace(write, write_as)
            .replace("params = [\"new_balance\", \"version\"]", params);
        let spec = spec::compile(&format!("{name}.toml"), &text).unwrap_or_else(|e| panic!("{e}"));
        Safeguard::User(user::register(spec).expect("registers"))
    };
    let cte = through(
        "version-cte",
        "WITH cur AS (SELECT id FROM wallets WHERE id = {wallet_id} AND fence = $2) UPDATE wallets SET balance = $1, fence = fence + 1 FROM cur WHERE wallets.id = cur.id",
        "params = [\"new_balance\", \"version\"]",
    );
    let plain = load("safeguards/version-column.toml");
    let (got, expected) = (check_two_callers(cte, None), check_two_callers(plain, None));
    assert_eq!(got.unique_states, expected.unique_states);
    assert_eq!(
        got.verdict(leaselab_checker::LEDGER),
        Some(leaselab_checker::PropertyVerdict::Safe)
    );
    for property in [leaselab_checker::LEDGER, leaselab_checker::WRITE_REJECTED] {
        assert_eq!(
            got.verdict(property),
            expected.verdict(property),
            "{property}"
        );
    }
    let race = tutorial("step1-race", Variant::default());
    for seed in 1..=2 {
        let (a, b) = (
            run(&with(&race, cte), seed).expect("runs"),
            run(&with(&race, plain), seed).expect("runs"),
        );
        assert_eq!(a.ledger.verdict, Verdict::Ok, "seed {seed}");
        assert_eq!(
            (a.ledger.accepted, a.ledger.rejected),
            (b.ledger.accepted, b.ledger.rejected),
            "seed {seed}"
        );
    }
    let unchecked = through(
        "unversioned-cte",
        "WITH cur AS (SELECT id FROM wallets WHERE id = {wallet_id}) UPDATE wallets SET balance = $1 FROM cur WHERE wallets.id = cur.id",
        "params = [\"new_balance\"]",
    );
    assert_eq!(
        check_two_callers(unchecked, None).verdict(leaselab_checker::LEDGER),
        Some(leaselab_checker::PropertyVerdict::Violated)
    );
}

/// A write that reads the clock (`now()`) reads the run's time in the simulation and the
/// world's in the checker, both counted from the simulation's epoch (2024-01-01 UTC): the
/// version it stamps is the write's millisecond, so a search reaches more states than with a
/// constant stamp (a frozen clock would reach as many), and the simulation's last write
/// leaves its time in the row.
#[test]
fn a_write_that_reads_the_clock_sees_the_time_of_the_run() {
    let text = std::fs::read_to_string(repo("safeguards/version-column.toml")).unwrap();
    let bump = "fence = fence + 1";
    assert!(text.contains(bump), "the file's write");
    let stamped_by = |name: &str, stamp: &str| {
        let text = text
            .replace("name = \"version-column\"", &format!("name = \"{name}\""))
            .replace(bump, &format!("fence = {stamp}"));
        let spec = spec::compile(&format!("{name}.toml"), &text).unwrap_or_else(|e| panic!("{e}"));
        Safeguard::User(user::register(spec).expect("registers"))
    };
    let clock = stamped_by(
        "clock-stamped",
        "(extract(epoch from now() - timestamptz '2024-01-01 00:00:00+00') * 1000)::bigint + 1",
    );
    let constant = stamped_by("constant-stamped", "1");
    let (timed, fixed) = (
        check_two_callers(clock, None),
        check_two_callers(constant, None),
    );
    assert!(
        timed.unique_states > fixed.unique_states,
        "the clock reaches the checker: {} states against {} with a constant stamp",
        timed.unique_states,
        fixed.unique_states
    );
    let race = tutorial("step1-race", Variant::default());
    let report = run(&with(&race, clock), 1).expect("runs");
    let fence = report.final_fence.expect("the wallet's row");
    // The simulation's clock starts before the callers do (they connect first), so the
    // stamp is past 0 but within the run's first seconds.
    assert!(
        fence > 1 && fence < 10_000,
        "the last write's millisecond since the epoch, {}",
        fence - 1
    );
}

#[test]
fn watch_multi_alone_keeps_the_ledger_and_refuses_conflicts() {
    let watch = load("safeguards/watch-multi.toml");
    let race = with(&tutorial("step1-race", Variant::default()), watch);
    let mut refused = 0;
    for seed in 1..=3 {
        let report = run(&race, seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Ok, "seed {seed}");
        assert!(report.ledger.accepted > 0, "seed {seed}: nothing landed");
        refused += report.ledger.rejected;
    }
    assert!(refused > 0, "50 racing callers never conflicted");
    // Exhaustively, for two callers, with and without pauses: every interleaving of the two
    // pipelines keeps the ledger, and some EXEC answers nil.
    for max_pause_ticks in [Some(0), None] {
        let report = check_two_callers(watch, max_pause_ticks);
        assert_eq!(
            report.verdict(leaselab_checker::LEDGER),
            Some(leaselab_checker::PropertyVerdict::Safe),
            "pauses {max_pause_ticks:?}"
        );
        assert_eq!(
            report.verdict(leaselab_checker::WRITE_REJECTED),
            Some(leaselab_checker::PropertyVerdict::Found),
            "pauses {max_pause_ticks:?}"
        );
    }
}

#[test]
fn without_its_watch_the_same_transaction_loses_updates() {
    // The same file with the WATCH left out: MULTI/EXEC alone is atomic but checks nothing.
    let text = std::fs::read_to_string(repo("safeguards/watch-multi.toml")).unwrap();
    let text = text
        .replace(
            "pipeline = [[\"WATCH\", \"{balance_key}\"], [\"GET\", \"{balance_key}\"]]",
            "pipeline = [[\"GET\", \"{balance_key}\"]]",
        )
        .replace("name = \"watch-multi\"", "name = \"multi-without-watch\"");
    assert!(!text.contains("WATCH\""), "the edit applied");
    let spec = spec::compile("multi-without-watch.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let unwatched = Safeguard::User(user::register(spec).expect("registers"));
    let race = with(&tutorial("step1-race", Variant::default()), unwatched);
    let report = run(&race, 1).expect("runs");
    assert_eq!(report.ledger.verdict, Verdict::Broken);
    let report = check_two_callers(unwatched, None);
    assert_eq!(
        report.verdict(leaselab_checker::LEDGER),
        Some(leaselab_checker::PropertyVerdict::Violated)
    );
}

#[test]
fn a_redis_write_checks_the_fence_it_is_given() {
    // Step 5: the paused holder's write carries an older token and is refused. Were `{fence}`
    // rendered as anything but the caller's token, both writes would carry the same value
    // and land.
    let fenced = load("safeguards/redis-fenced.toml");
    let step5 = with(&tutorial("step5-fencing", Variant::default()), fenced);
    for seed in 1..=3 {
        let report = run(&step5, seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Ok, "seed {seed}");
        assert_eq!(
            report.ledger.rejected, 1,
            "seed {seed}: the stale write is refused"
        );
    }
    let unfenced = with(
        &tutorial("step5-fencing", Variant::default()),
        load("safeguards/tutorial/lease.toml"),
    );
    assert_eq!(run(&unfenced, 1).unwrap().ledger.verdict, Verdict::Broken);
    // `{fence}` before the write is refused: the token is not known there yet.
    let text = std::fs::read_to_string(repo("safeguards/redis-fenced.toml")).unwrap();
    let early = text.replacen(
        "args = [\"{token}\", \"{ttl_ms}\"]",
        "args = [\"{token}\", \"{fence}\"]",
        1,
    );
    let error = spec::compile("early.toml", &early).expect_err("{fence} in the acquire");
    assert_eq!(error.field, "[acquire] args", "{error}");
    let line = early
        .lines()
        .position(|l| l.contains("args = [\"{token}\", \"{fence}\"]"))
        .map(|i| i + 1);
    assert_eq!(Some(error.line), line, "{error}");
    assert!(
        error.to_string().contains("known to the [write] only"),
        "{error}"
    );
}

#[test]
fn a_lease_released_with_a_plain_del_loses_updates_when_work_outlives_the_ttl() {
    let plain = load("safeguards/lease-plain-del.toml");
    let step3 = with(&tutorial("step3-ttl", Variant::default()), plain);
    let broken = (1..=8)
        .filter(|&seed| run(&step3, seed).expect("runs").ledger.verdict == Verdict::Broken)
        .count();
    assert!(broken > 0, "no seed of 8 lost an update");
}

/// A file with one line replaced.
fn lease_with(replace: &str, by: &str) -> String {
    let text = std::fs::read_to_string(repo("safeguards/tutorial/lease.toml")).unwrap();
    assert!(text.contains(replace), "{replace}");
    text.replacen(replace, by, 1)
        .replace("name = \"file-lease\"", "name = \"bad-lease\"")
}

#[test]
fn a_bad_file_is_refused_naming_its_line_and_field() {
    let line_of = |text: &str, needle: &str| {
        text.lines()
            .position(|l| l.contains(needle))
            .map(|i| i + 1)
            .unwrap()
    };
    let cases: Vec<(String, &str, &str, &str)> = vec![
        (
            lease_with("got = \"OK\"", "got = \"O K\""),
            "got = ",
            "[acquire] got",
            "not a reply pattern",
        ),
        (
            // A pipeline is judged by its last command's reply: WAIT's is an integer.
            lease_with(
                "command = [\"SET\", \"{lock_key}\", \"{token}\", \"NX\", \"PX\", \"{ttl_ms}\"]",
                "pipeline = [[\"SET\", \"{lock_key}\", \"{token}\", \"NX\", \"PX\", \"{ttl_ms}\"], [\"WAIT\", \"1\", \"50\"]]",
            ),
            "got = ",
            "[acquire] got",
            "WAIT always answers an integer (or an error), so the pattern OK can never match",
        ),
        (
            lease_with(
                "command = [\"SET\", \"{balance_key}\", \"{new_balance}\"]",
                "command = [\"INCRBY\", \"{balance_key}\", \"-10\"]",
            ),
            "landed = ",
            "[write] landed",
            "INCRBY always answers an integer",
        ),
        (
            lease_with("busy = \"nil\"", "bussy = \"nil\""),
            "bussy",
            "[acquire] bussy",
            "unknown field",
        ),
        (
            lease_with(
                "command = [\"GET\", \"{balance_key}\"]",
                "command = [\"GETT\", \"{balance_key}\"]",
            ),
            "GETT",
            "[read] command",
            "unknown command",
        ),
        (
            lease_with(
                "strategy = \"jittered\"",
                "strategy = \"uniform\"\nmin_ms = 18446744073709551615\nmax_ms = 18446744073709551615",
            ),
            "min_ms = ",
            "[retry] min_ms",
            "at most 3600000",
        ),
        (
            lease_with(
                "strategy = \"jittered\"",
                "strategy = \"linear\"\nbackoff_ms = 3600001",
            ),
            "backoff_ms = ",
            "[retry] backoff_ms",
            "at most 3600000",
        ),
        (
            lease_with("\"{token}\", \"NX\"", "\"{tokn}\", \"NX\""),
            "{tokn}",
            "[acquire] command",
            "unknown variable {tokn}",
        ),
        (
            lease_with("return 0\"\"\"", "return 0 end end\"\"\""),
            "script = ",
            "[release] script",
            "Lua does not compile",
        ),
        (
            lease_with("balance = \"redis\"", "balance = \"mongo\""),
            "balance = ",
            "balance",
            "\"redis\" or \"postgres\"",
        ),
        (
            lease_with("strategy = \"jittered\"", "strategy = \"sometimes\""),
            "strategy",
            "[retry] strategy",
            "the strategies are",
        ),
        (
            lease_with("name = \"file-lease\"", "name = \"lease\""),
            "name = ",
            "name",
            "built-in",
        ),
    ];
    for (text, needle, field, says) in cases {
        let error = spec::compile("bad.toml", &text).expect_err(needle);
        let shown = error.to_string();
        assert_eq!(error.file, "bad.toml");
        assert_eq!(error.line, line_of(&text, needle), "{shown}");
        assert!(error.field.contains(field), "field {field:?} in {shown}");
        assert!(shown.contains(says), "{says:?} in {shown}");
        assert!(
            shown.starts_with(&format!("bad.toml:{}:", error.line)),
            "{shown}"
        );
    }
    // Names the built-in parser takes are the built-ins', whatever the catalogue lists.
    for taken in [
        "redlock-3-nodes",
        "redlock-cas",
        "redislock-linear-5ms",
        "redislock-linear-5ms+jitter",
    ] {
        let text = lease_with("name = \"file-lease\"", &format!("name = \"{taken}\""));
        let error = spec::compile("bad.toml", &text).expect_err(taken);
        assert_eq!(error.field, "name", "{error}");
        assert!(error.message.contains("built-in"), "{error}");
    }
    // Commands that reach beyond the run's keys are refused, in a command, a pipeline or a
    // script.
    for (replace, by) in [
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "command = [\"FLUSHALL\"]",
        ),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "command = [\"FLUSHDB\"]",
        ),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "command = [\"SWAPDB\", \"0\", \"1\"]",
        ),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "pipeline = [[\"SELECT\", \"1\"], [\"GET\", \"{balance_key}\"]]",
        ),
        ("return 0\"\"\"", "redis.call('FLUSHDB') return 0\"\"\""),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "command = [\"SUBSCRIBE\", \"{balance_key}\"]",
        ),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "pipeline = [[\"psubscribe\", \"*\"], [\"GET\", \"{balance_key}\"]]",
        ),
        (
            "command = [\"GET\", \"{balance_key}\"]",
            "command = [\"PUBSUB\", \"CHANNELS\"]",
        ),
    ] {
        let text = lease_with(replace, by);
        assert!(text.contains(by), "the edit applied: {by}");
        let error = spec::compile("bad.toml", &text).expect_err(by);
        assert!(
            error.message.contains("whole server") || error.message.contains("connection or"),
            "{error}"
        );
    }
    // A blocking pop would hold the caller's connection: refused, in a command and a pipeline.
    for by in [
        "command = [\"BLPOP\", \"{balance_key}\", \"0\"]",
        "pipeline = [[\"brpop\", \"{balance_key}\", \"1\"], [\"GET\", \"{balance_key}\"]]",
    ] {
        let text = lease_with("command = [\"GET\", \"{balance_key}\"]", by);
        assert!(text.contains(by), "the edit applied: {by}");
        let error = spec::compile("bad.toml", &text).expect_err(by);
        assert!(error.message.contains("blocks its connection"), "{error}");
    }
    // Retry fields that do nothing are mistakes.
    for (by, field) in [
        (
            "strategy = \"linear\"\nbackoff_ms = 0",
            "[retry] backoff_ms",
        ),
        ("strategy = \"none\"\nmin_ms = 5", "[retry] min_ms"),
        (
            "strategy = \"linear\"\nbackoff_ms = 5\nmax_ms = 9",
            "[retry] max_ms",
        ),
    ] {
        let text = lease_with("strategy = \"jittered\"", by);
        let error = spec::compile("bad.toml", &text).expect_err(by);
        assert_eq!(error.field, field, "{error}");
    }
    // A write that names the token needs an acquire that hands one out.
    let redsync = std::fs::read_to_string(repo("safeguards/redsync.toml")).unwrap();
    let no_token = redsync.replace(
        "command = [\"SET\", \"{balance_key}\", \"{new_balance}\"]",
        "command = [\"SET\", \"{balance_key}\", \"{fence}\"]",
    );
    let error = spec::compile("bad.toml", &no_token).expect_err("no fence source");
    assert_eq!(error.field, "[write]", "{error}");
    assert!(error.message.contains("fence = \"reply\""), "{error}");

    // A table missing from the whole file is named as such, not blamed on the first line.
    let no_write = lease_with("[write]", "[not_write]").replace("[not_write]\n", "");
    let no_write = no_write
        .split("[retry]")
        .next()
        .unwrap()
        .replace("landed = \"OK\"", "")
        .replace(
            "command = [\"SET\", \"{balance_key}\", \"{new_balance}\"]",
            "",
        );
    let error = spec::compile("bad.toml", &no_write).expect_err("no [write]");
    assert_eq!(error.field, "[write]", "{error}");
    assert!(error.to_string().contains("add [write]"), "{error}");
    // A pattern of the wrong type says what a pattern is.
    let error = spec::compile("bad.toml", &lease_with("got = \"OK\"", "got = 5.5")).unwrap_err();
    assert_eq!(error.field, "[acquire] got", "{error}");
    assert!(error.message.contains("not a reply pattern"), "{error}");

    let sql = std::fs::read_to_string(repo("safeguards/tutorial/fenced-cas.toml")).unwrap();
    let sql = sql.replace(
        "params = [\"new_balance\", \"fence\", \"version\"]",
        "params = [\"new_balance\", \"fence\"]",
    );
    let error = spec::compile("cas.toml", &sql).unwrap_err();
    assert_eq!(error.field, "[write] params", "{error}");
    assert!(error.to_string().contains("$3"), "{error}");
}

/// The shipped row-lock file with its read and write replaced (and its own name).
fn row_lock_with(name: &str, replace: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(repo("safeguards/row-lock.toml")).unwrap();
    assert!(text.contains("name = \"row-lock\""));
    text = text.replace("name = \"row-lock\"", &format!("name = \"{name}\""));
    for (from, to) in replace {
        assert!(text.contains(from), "the file has {from:?}");
        text = text.replace(from, to);
    }
    text
}

fn register(name: &str, text: &str) -> Safeguard {
    let spec = spec::compile(&format!("{name}.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    Safeguard::User(user::register(spec).expect("registers"))
}

/// A transaction written as a list of statements, read and write on the caller's one
/// connection: with the row locked by `FOR UPDATE` nothing is lost (50 racing callers spend
/// exactly the 100, the 40 who find too little money roll back and let the row go), the same
/// transaction without the row lock loses updates under READ COMMITTED, and under REPEATABLE
/// READ the second writer is refused with 40001 and rolls back: in the simulation and in the
/// checker alike.
#[test]
fn a_transaction_across_the_read_and_the_write_holds_the_row_lock_until_its_commit() {
    let race = tutorial("step1-race", Variant::default());
    let row_lock = load("safeguards/row-lock.toml");
    let unlocked = register(
        "tx-unlocked",
        &row_lock_with("tx-unlocked", &[(" FOR UPDATE", "")]),
    );
    let repeatable = register(
        "tx-repeatable",
        &row_lock_with(
            "tx-repeatable",
            &[
                (" FOR UPDATE", ""),
                ("\"BEGIN\"", "\"BEGIN ISOLATION LEVEL REPEATABLE READ\""),
            ],
        ),
    );
    for seed in 1..=3 {
        let report = run(&with(&race, row_lock), seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Ok, "seed {seed}");
        assert!(report.finished, "seed {seed}: no caller is left waiting");
        assert_eq!(
            (
                report.ledger.accepted,
                report.ledger.insufficient,
                report.ledger.failed
            ),
            (10, 40, 0),
            "seed {seed}: every spend serialised by the row lock"
        );
        assert_eq!(report.ledger.final_balance, 0, "seed {seed}");
        // Each caller that found too little money rolled its transaction back at once.
        assert_eq!(rollbacks(&report), 40, "seed {seed}");

        let report = run(&with(&race, unlocked), seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Broken, "seed {seed}");

        let report = run(&with(&race, repeatable), seed).expect("runs");
        assert_eq!(report.ledger.verdict, Verdict::Ok, "seed {seed}");
        assert!(
            report.ledger.rejected > 0,
            "seed {seed}: 40001 refuses writes"
        );
        assert_eq!(report.ledger.failed, 0, "seed {seed}");
    }
    let verdict = |safeguard| {
        let report = check_two_callers(safeguard, None);
        (
            report.verdict(leaselab_checker::LEDGER),
            report.verdict(leaselab_checker::WRITE_REJECTED),
        )
    };
    use leaselab_checker::PropertyVerdict::{Found, NotFound, Safe, Violated};
    assert_eq!(verdict(row_lock), (Some(Safe), Some(NotFound)));
    assert_eq!(verdict(unlocked).0, Some(Violated));
    assert_eq!(verdict(repeatable), (Some(Safe), Some(Found)));
}

/// A statement that fails inside the transaction rolls it back before the caller ends: the
/// row lock it took goes with it, so every caller in turn gets the row, fails the same way,
/// and nothing is written.
#[test]
fn a_failed_statement_rolls_the_transaction_back_and_lets_the_row_go() {
    let failing = register(
        "tx-failing",
        &row_lock_with(
            "tx-failing",
            &[(
                "SET balance = $1 WHERE",
                "SET balance = $1 / (balance - balance) WHERE",
            )],
        ),
    );
    let race = tutorial("step1-race", Variant::default());
    let report = run(&with(&race, failing), 1).expect("runs");
    assert!(report.finished, "no caller is left waiting for the row");
    assert_eq!(report.ledger.failed, 50, "{:?}", report.ledger);
    assert_eq!(report.ledger.accepted, 0);
    assert_eq!(report.ledger.final_balance, 100);
    let failure = report
        .callers
        .iter()
        .find_map(|c| match &c.outcome {
            Some(leaselab_model::safeguard::Outcome::Failed(error)) => Some(error.clone()),
            _ => None,
        })
        .expect("a failure");
    assert!(failure.contains("22012"), "{failure}");
    assert_eq!(
        rollbacks(&report),
        50,
        "each failed transaction is rolled back"
    );
}

/// How many `ROLLBACK`s the callers sent and saw answered.
fn rollbacks(report: &leaselab_sim::run::RunReport) -> usize {
    report
        .events
        .iter()
        .filter(|event| {
            matches!(
                &event.what,
                leaselab_sim::events::What::SqlReply {
                    reading: Some(leaselab_model::safeguard::reading::Reading::RolledBack),
                    ..
                }
            )
        })
        .count()
}

/// The statement lists are checked as one protocol when the file is read: every transaction
/// begun is committed by the end of the write, none inside another, no ROLLBACK or AND CHAIN,
/// one statement per entry, the read ends with its query, the write has one change.
#[test]
fn a_file_whose_transaction_does_not_add_up_is_refused() {
    /// Replacements in the file, the field named and words of the message.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case<'_>; 8] = [
        (
            &[("  \"COMMIT\",\n", "")],
            "[write] sql",
            "is never ended: end the write with \"COMMIT\"",
        ),
        (
            &[("  \"BEGIN\",\n", "")],
            "[write] sql statement 2",
            "ends a transaction that is not open",
        ),
        (
            &[("\"COMMIT\"", "\"ROLLBACK\"")],
            "[write] sql statement 2",
            "ROLLBACK would undo the caller's own write",
        ),
        (
            &[("\"COMMIT\"", "\"COMMIT AND CHAIN\"")],
            "[write] sql statement 2",
            "AND CHAIN",
        ),
        (
            &[("  \"BEGIN\",\n", "  \"BEGIN\",\n  \"START TRANSACTION\",\n")],
            "[read] sql statement 2",
            "inside the one [read] sql statement 1 began",
        ),
        (
            &[("  \"BEGIN\",\n  \"SELECT", "  \"BEGIN; SELECT")],
            "[read] sql",
            "one statement per entry",
        ),
        (
            &[("FOR UPDATE\",\n", "FOR UPDATE\",\n  \"SAVEPOINT s\",\n")],
            "[read] sql statement 3",
            "the read's last statement is the query",
        ),
        (
            &[(
                "  \"COMMIT\",\n",
                "  \"INSERT INTO wallets (id, balance) VALUES (7, 1)\",\n  \"COMMIT\",\n",
            )],
            "[write] sql",
            "has 2 such statements",
        ),
    ];
    for (replace, field, message) in cases {
        let text = row_lock_with("tx-bad", replace);
        let error = spec::compile("tx-bad.toml", &text).expect_err(field);
        assert_eq!(error.field, field, "{error}");
        assert!(error.message.contains(message), "{error}");
        assert!(error.line > 0, "{error}: points into the file");
    }
}

/// redsync's file with its release script made to never end (Redis would block on it
/// forever), written into `dir`.
fn endless_redsync(dir: &Path) -> PathBuf {
    let source = std::fs::read_to_string(repo("safeguards/redsync.toml")).unwrap();
    let looped = source.replace(
        r#"return redis.call(\"DEL\", KEYS[1])"#,
        "while true do end",
    );
    assert_ne!(looped, source, "the release script was not found");
    let endless = dir.join("endless.toml");
    std::fs::write(&endless, looped).unwrap();
    endless
}

/// redsync's file with `matcher` (Lua that calls a pattern function on a large string, for
/// a very long time) before its release, written into `dir` as `name`.
fn matching_redsync(dir: &Path, name: &str, matcher: &str) -> PathBuf {
    let source = std::fs::read_to_string(repo("safeguards/redsync.toml")).unwrap();
    let release = r#"return redis.call(\"DEL\", KEYS[1])"#;
    let slow = source.replace(release, &format!("{matcher} {release}"));
    assert_ne!(slow, source, "the release script was not found");
    let path = dir.join(name);
    std::fs::write(&path, slow).unwrap();
    path
}

#[test]
fn a_pattern_match_that_would_run_for_hours_is_stopped_with_exit_2() {
    use common::bad_input::{check_all, scratch, Case};
    let dir = scratch("safeguard-files-patterns");
    // Backtracking: about n^5 steps for n = 100,000; caught by pcall in the second.
    let gsub = matching_redsync(
        &dir,
        "gsub.toml",
        "string.gsub(string.rep('a', 100000), 'a*a*a*a*a*b', '')",
    );
    let caught = matching_redsync(
        &dir,
        "caught.toml",
        "pcall(string.match, string.rep('a', 100000), '(a-)(a-)(a-)(a-)b')",
    );
    // A plain find that compares a million bytes at each of millions of places.
    let find = matching_redsync(
        &dir,
        "find.toml",
        "string.find(string.rep('a', 4000000), string.rep('a', 1000000) .. 'b', 1, true)",
    );
    let stopped = [
        "ran past 100000000 pattern-matching steps",
        "BUSY",
        "no verdict",
    ];
    let mut cases = Vec::new();
    for (what, file) in [
        ("gsub, simulated", &gsub),
        ("a caught match, simulated", &caught),
        ("a plain find, simulated", &find),
    ] {
        cases.push(
            Case::new(what, &[], 2, &stopped)
                .with_args(vec![
                    "run".into(),
                    "step2-lock".into(),
                    "--callers".into(),
                    "2".into(),
                    "--safeguard-file".into(),
                    file.display().to_string(),
                ])
                .deadline(Duration::from_secs(120)),
        );
    }
    cases.push(
        Case::new("gsub, checked", &[], 2, &stopped)
            .with_args(vec![
                "check".into(),
                "--safeguard-file".into(),
                gsub.display().to_string(),
            ])
            .deadline(Duration::from_secs(120)),
    );
    check_all(cases);
}

#[test]
fn the_cli_runs_a_file_and_refuses_a_bad_one_with_exit_2() {
    use common::bad_input::{check_all, scratch, Case};
    let dir = scratch("safeguard-files");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, lease_with("got = \"OK\"", "got = \"O K\"")).unwrap();
    let redsync = repo("safeguards/redsync.toml");
    let endless = endless_redsync(&dir);
    let stopped = ["ran past 10000000 Lua instructions", "BUSY", "no verdict"];
    check_all(vec![
        Case::new("a script that never ends, simulated", &[], 2, &stopped).with_args(vec![
            "run".into(),
            "step2-lock".into(),
            "--safeguard-file".into(),
            endless.display().to_string(),
        ]),
        Case::new("a script that never ends, checked", &[], 2, &stopped).with_args(vec![
            "check".into(),
            "--safeguard-file".into(),
            endless.display().to_string(),
        ]),
        Case::new("a script that never ends, in the matrix", &[], 2, &stopped)
            .with_args(vec![
                "matrix".into(),
                "--safeguard".into(),
                "redsync".into(),
                "--safeguard-file".into(),
                endless.display().to_string(),
            ])
            .deadline(Duration::from_secs(60)),
        Case::new("a script that never ends, on a frontier", &[], 2, &stopped)
            .with_args(vec![
                "frontier".into(),
                "--ttl".into(),
                "3..4".into(),
                "--work".into(),
                "2".into(),
                "--safeguard-file".into(),
                endless.display().to_string(),
            ])
            .deadline(Duration::from_secs(60)),
        Case::new("bad file", &[], 2, &["bad.toml:8:7:", "[acquire] got"]).with_args(vec![
            "run".into(),
            "step2-lock".into(),
            "--safeguard-file".into(),
            bad.display().to_string(),
        ]),
        Case::new("missing file", &[], 2, &["--safeguard-file", "nope.toml"]).with_args(vec![
            "check".into(),
            "--safeguard-file".into(),
            dir.join("nope.toml").display().to_string(),
        ]),
        Case::new("a directory", &[], 2, &["not a regular file"]).with_args(vec![
            "run".into(),
            "step2-lock".into(),
            "--safeguard-file".into(),
            dir.display().to_string(),
        ]),
        Case::new("redsync runs", &[], 0, &["redsync"]).with_args(vec![
            "run".into(),
            "step2-lock".into(),
            "--safeguard-file".into(),
            redsync.display().to_string(),
        ]),
    ]);
}

#[test]
fn a_stopped_script_leaves_no_verdict_on_stdout() {
    use common::bad_input::{run, scratch, Case};
    let dir = scratch("stopped-script-output");
    let file = endless_redsync(&dir).display().to_string();
    for args in [
        vec!["run", "step2-lock", "--json", "--safeguard-file", &file],
        vec![
            "run",
            "step2-lock",
            "--runs",
            "5",
            "--json",
            "--safeguard-file",
            &file,
        ],
        vec!["check", "--json", "--safeguard-file", &file],
        vec!["check", "--safeguard-file", &file],
    ] {
        let case = Case::new("stopped", &[], 2, &[])
            .with_args(args.iter().map(|a| a.to_string()).collect());
        let outcome = run(&case);
        assert_eq!(outcome.code, Some(2), "{args:?}: {}", outcome.stderr);
        for word in ["verdict", "SAFE", "VIOLATED", "OK", "BROKEN"] {
            assert!(
                !outcome.stdout.contains(word),
                "{args:?} printed {word:?} although its script was stopped:\n{}",
                outcome.stdout
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(256)))]

    #[test]
    fn no_bytes_make_the_compiler_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = spec::compile("fuzz.toml", &text);
    }

    #[test]
    fn no_edit_of_a_valid_file_makes_the_compiler_panic(
        file in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..6),
    ) {
        let files = [
            "safeguards/tutorial/lease.toml",
            "safeguards/tutorial/fenced-cas.toml",
            "safeguards/redsync.toml",
            "safeguards/version-column.toml",
            "safeguards/watch-multi.toml",
            "safeguards/row-lock.toml",
        ];
        let mut chars: Vec<char> = std::fs::read_to_string(repo(files[file])).unwrap().chars().collect();
        for (at, kind, c) in edits {
            if chars.is_empty() {
                break;
            }
            let i = at.index(chars.len());
            match kind {
                0 => { chars.remove(i); }
                1 => chars.insert(i, c),
                2 => chars[i] = c,
                _ => { chars.truncate(i); }
            }
        }
        let text: String = chars.into_iter().collect();
        if let Err(error) = spec::compile("edit.toml", &text) {
            prop_assert!(!error.message.is_empty());
            prop_assert!(error.line <= text.lines().count() + 1);
        }
    }
}

#[test]
fn the_shipped_files_run_against_the_real_servers() {
    let test = "the_shipped_files_run_against_the_real_servers";
    let Some(redis) = common::server_url(
        "LEASELAB_REDIS_URL",
        test,
        "redis://127.0.0.1:6379",
        "Redis",
    ) else {
        return;
    };
    let Some(postgres) = common::server_url(
        "LEASELAB_DATABASE_URL",
        test,
        "postgres://postgres@127.0.0.1:5432/test",
        "PostgreSQL",
    ) else {
        return;
    };
    for (scenario, file) in [
        ("step2-lock", "safeguards/redsync.toml"),
        ("step1-race", "safeguards/version-column.toml"),
        ("step1-race", "safeguards/watch-multi.toml"),
        ("step1-race", "safeguards/row-lock.toml"),
        ("step5-fencing", "safeguards/redis-fenced.toml"),
        ("step6-verify", "safeguards/tutorial/fenced-cas.toml"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_leaselab"))
            .args(["run", scenario, "--safeguard-file"])
            .arg(repo(file))
            .args(["--redis", &redis, "--postgres", &postgres])
            .output()
            .expect("leaselab runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{file}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains(" OK"), "{file}: {stdout}");
    }
}

/// A pipeline that sends `WAIT` blocks on the server until the replica acknowledges; the
/// exhaustive check runs a pipeline in one step, so no replication could come before the
/// `WAIT` answers (it would always say 0). The check refuses such a file, naming it and the
/// simulation as the place to run it; the simulation runs it (its server blocks on `WAIT`).
#[test]
fn a_pipeline_that_waits_for_the_replica_is_refused_by_the_check_and_run_by_the_simulation() {
    let text = r#"
name = "lease-wait-pipelined"
balance = "redis"

[acquire]
pipeline = [["SET", "{lock_key}", "{token}", "NX", "PX", "{ttl_ms}"], ["wait", "1", "50"]]
got = "1"
busy = "0"

[release]
script = '''
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
else
  return 0
end
'''
keys = ["{lock_key}"]
args = ["{token}"]
released = "1"
not_held = "0"

[read]
command = ["GET", "{balance_key}"]

[write]
command = ["SET", "{balance_key}", "{new_balance}"]
"#;
    let spec = spec::compile("lease-wait-pipelined.toml", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.pipelines_wait(), Some("[acquire]"));
    let safeguard = Safeguard::User(user::register(spec).expect("registers"));
    let error = CheckConfig::new(safeguard)
        .validate()
        .expect_err("the check refuses a pipelined WAIT");
    assert!(error.0.contains("lease-wait-pipelined"), "{}", error.0);
    assert!(error.0.contains("WAIT"), "{}", error.0);
    assert!(error.0.contains("leaselab run"), "{}", error.0);
    assert!(error.0.contains("[acquire] pipeline"), "{}", error.0);
    // Without a replica the lone server answers WAIT with 0 at once in the simulation: every
    // caller finds the lock "busy" until it gives up, and the ledger holds (nothing spent).
    let mut scenario = with(&tutorial("step2-lock", Variant::default()), safeguard);
    scenario.callers = 2;
    let report = run(&scenario, 1).expect("the simulation runs it");
    assert_eq!(report.ledger.verdict, Verdict::Ok, "{}", report.line());
    // The same file without the WAIT is checked as usual.
    let plain = text
        .replace("lease-wait-pipelined", "lease-pipelined")
        .replace(r#", ["wait", "1", "50"]]"#, "]")
        .replace("got = \"1\"\nbusy = \"0\"", "got = \"OK\"\nbusy = \"nil\"");
    let plain = spec::compile("lease-pipelined.toml", &plain).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.pipelines_wait(), None);
    let plain = Safeguard::User(user::register(plain).expect("registers"));
    assert!(CheckConfig::new(plain).validate().is_ok());
}
