//! Bad input to `leaselab check` and `leaselab frontier`: values that are malformed, absurd,
//! or bounds too small to mean anything, and searches that run into their limits. Each case
//! asserts the exit code (2: refused before running; 3: INCONCLUSIVE), that no panic text
//! appears, and that the output names the problem.

mod common;

use common::bad_input::{check_all, run, Case};

#[test]
fn check_refuses_bad_values_and_empty_bounds_and_stops_runaways_at_its_limits() {
    check_all(vec![
        Case::new(
            "a Redis drift for a safeguard that keeps nothing in Redis",
            &["check", "--safeguard", "pg-debit", "--redis-drift", "+50%"],
            2,
            &["--redis-drift +50%", "keeps nothing in Redis"],
        ),
        Case::new(
            "a Redis drift for Redlock, whose nodes drift with --node-drift",
            &["check", "--safeguard", "redlock", "--redis-drift", "+50%"],
            2,
            &["--redis-drift +50%", "--node-drift"],
        ),
        Case::new(
            "a Redis drift that is no clock",
            &["check", "--safeguard", "lease", "--redis-drift", "-100%"],
            2,
            &["--redis-drift -100%", "-99% to +1000%"],
        ),
        Case::new(
            "what a restart reloads, without any restart",
            &["check", "--safeguard", "fenced", "--restart-from-aof"],
            2,
            &["--restart-from-aof", "--restarts K"],
        ),
        Case::new(
            "when the file was fsynced, without any crash reloading it",
            &[
                "check",
                "--safeguard",
                "fenced",
                "--restarts",
                "1",
                "--appendfsync",
                "always",
            ],
            2,
            &["--appendfsync always", "--restart-from-aof"],
        ),
        Case::new(
            "an fsync policy Redis does not have",
            &[
                "check",
                "--safeguard",
                "fenced",
                "--appendfsync",
                "sometimes",
            ],
            2,
            &["'sometimes'", "always, everysec or no"],
        ),
        Case::new(
            "a node count said twice, differently",
            &[
                "frontier",
                "--safeguard",
                "redlock-5-nodes",
                "--redis-nodes",
                "3",
            ],
            2,
            &["the name already says 5 nodes"],
        ),
        Case::new(
            "horizon 0: nothing can be written",
            &["check", "--safeguard", "no-lock", "--horizon", "0"],
            2,
            &["--horizon 0", "smallest meaningful horizon is 1"],
        ),
        Case::new(
            "horizon shorter than the work",
            &[
                "check",
                "--safeguard",
                "lease",
                "--work",
                "10",
                "--horizon",
                "3",
            ],
            2,
            &["--horizon 3", "smallest meaningful horizon is 10"],
        ),
        Case::new(
            "horizon 1 with a lock and work 2",
            &[
                "check",
                "--safeguard",
                "fenced",
                "--work",
                "2",
                "--horizon",
                "1",
            ],
            2,
            &["--horizon 1", "smallest meaningful horizon is 2"],
        ),
        Case::new(
            "horizon lets one caller write but not both: inconclusive",
            &[
                "check",
                "--safeguard",
                "pg-for-update",
                "--horizon",
                "1",
                "--no-save-traces",
            ],
            3,
            &["INCONCLUSIVE", "vacuous", "--horizon 2"],
        ),
        Case::new(
            "horizon beyond the limit",
            &["check", "--safeguard", "lease", "--horizon", "10001"],
            2,
            &["--horizon 10001", "at most 10000"],
        ),
        Case::new(
            "horizon that overflows",
            &[
                "check",
                "--safeguard",
                "lease",
                "--horizon",
                "99999999999999999999999",
            ],
            2,
            &["99999999999999999999999"],
        ),
        Case::new(
            "callers zero",
            &["check", "--safeguard", "lease", "--callers", "0"],
            2,
            &["--callers 0"],
        ),
        Case::new(
            "one caller: nothing can overlap",
            &["check", "--safeguard", "lease", "--callers", "1"],
            2,
            &["--callers 1", "nothing can overlap"],
        ),
        Case::new(
            "callers beyond what the checker explores",
            &["check", "--safeguard", "lease", "--callers", "9"],
            2,
            &["--callers 9", "limited to 8"],
        ),
        Case::new(
            "callers beyond a 32-bit number",
            &["check", "--safeguard", "lease", "--callers", "4294967296"],
            2,
            &["4294967296"],
        ),
        Case::new(
            "negative callers",
            &["check", "--safeguard", "lease", "--callers", "-1"],
            2,
            &["-1"],
        ),
        Case::new(
            "huge TTL",
            &[
                "check",
                "--safeguard",
                "lease",
                "--ttl",
                "18446744073709551615",
            ],
            2,
            &["--ttl 18446744073709551615"],
        ),
        Case::new(
            "negative work",
            &["check", "--safeguard", "lease", "--work", "-3"],
            2,
            &["-3"],
        ),
        Case::new(
            "negative pause",
            &["check", "--safeguard", "lease", "--max-pause", "-1"],
            2,
            &["-1"],
        ),
        Case::new(
            "a restart for a safeguard without Redis",
            &["check", "--safeguard", "pg-debit", "--restarts", "1"],
            2,
            &["--restarts 1", "keeps nothing in Redis"],
        ),
        Case::new(
            "a restart with a replica",
            &[
                "check",
                "--safeguard",
                "lease",
                "--restarts",
                "1",
                "--failovers",
                "1",
            ],
            2,
            &["--restarts 1", "replica"],
        ),
        Case::new(
            "too many restarts",
            &["check", "--safeguard", "lease", "--restarts", "4"],
            2,
            &["--restarts 4", "at most 3"],
        ),
        Case::new(
            "two failovers: only one can ever strike",
            &["check", "--safeguard", "lease", "--failovers", "2"],
            2,
            &["--failovers 2", "at most 1 failover"],
        ),
        Case::new(
            "a failover for a safeguard without Redis",
            &["check", "--safeguard", "pg-debit", "--failovers", "1"],
            2,
            &["--failovers 1", "nothing in Redis"],
        ),
        Case::new(
            "a balance nobody can spend from",
            &["check", "--safeguard", "lease", "--balance", "5"],
            2,
            &["--balance 5", "no caller can afford"],
        ),
        Case::new(
            "amounts that overflow the ledger",
            &[
                "check",
                "--safeguard",
                "no-lock",
                "--balance",
                "9223372036854775807",
                "--amount",
                "9223372036854775807",
            ],
            2,
            &["overflow"],
        ),
        Case::new(
            "amount zero",
            &["check", "--safeguard", "lease", "--amount", "0"],
            2,
            &["--amount 0"],
        ),
        Case::new(
            "state limit zero",
            &["check", "--safeguard", "lease", "--max-states", "0"],
            2,
            &["--max-states 0"],
        ),
        Case::new(
            "memory limit too small",
            &["check", "--safeguard", "lease", "--max-memory", "1KiB"],
            2,
            &["1KiB", "16MiB"],
        ),
        Case::new(
            "memory limit not a size",
            &["check", "--safeguard", "lease", "--max-memory", "lots"],
            2,
            &["lots", "512MiB"],
        ),
        Case::new(
            "threads zero",
            &["check", "--safeguard", "lease", "--threads", "0"],
            2,
            &["--threads 0"],
        ),
        Case::new(
            "runaway bound stopped by the state limit",
            &[
                "check",
                "--safeguard",
                "fenced",
                "--callers",
                "8",
                "--horizon",
                "10000",
                "--max-states",
                "2000",
                "--gate",
                "ledger",
                "--no-save-traces",
            ],
            3,
            &["INCONCLUSIVE", "state limit (2000 states)", "--max-states"],
        ),
        Case::new(
            "runaway bound as JSON",
            &[
                "check",
                "--safeguard",
                "fenced-cas",
                "--callers",
                "8",
                "--horizon",
                "10000",
                "--max-states",
                "2000",
                "--gate",
                "ledger",
                "--json",
                "--no-save-traces",
            ],
            3,
            &[
                "\"verdict\": \"INCONCLUSIVE\"",
                "\"reason\": \"stopped by the state limit",
            ],
        ),
        Case::new(
            "a violation outranks a search cut short",
            &[
                "check",
                "--safeguard",
                "fenced",
                "--callers",
                "8",
                "--horizon",
                "10000",
                "--max-states",
                "2000",
                "--no-save-traces",
            ],
            1,
            &["mutual exclusion", "VIOLATED", "INCONCLUSIVE"],
        ),
        Case::new(
            "a suite cut short by the state limit",
            &[
                "check",
                "--suite",
                "smoke",
                "--max-states",
                "100",
                "--no-save-traces",
            ],
            3,
            &["inconclusive", "state limit"],
        ),
        Case::new(
            "a suite given a bound of its own, which its checks would ignore",
            &[
                "check",
                "--suite",
                "smoke",
                "--restarts",
                "1",
                "--restart-from-aof",
            ],
            2,
            &["--suite", "cannot be used with"],
        ),
        Case::new(
            "an append-only file for Redlock's nodes, which restart without persistence",
            &[
                "check",
                "--safeguard",
                "redlock",
                "--node-restarts",
                "1",
                "--restart-from-aof",
            ],
            2,
            &["--restart-from-aof", "single Redis", "--node-restarts"],
        ),
    ]);
}

#[test]
fn frontier_refuses_bad_ranges_and_marks_cells_it_cannot_establish() {
    check_all(vec![
        Case::new(
            "reversed range",
            &["frontier", "--safeguard", "lease", "--ttl", "6..3"],
            2,
            &["6..3"],
        ),
        Case::new(
            "empty list",
            &["frontier", "--safeguard", "lease", "--work", ""],
            2,
            &["--work"],
        ),
        Case::new(
            "open range",
            &["frontier", "--safeguard", "lease", "--ttl", "3.."],
            2,
            &["3.."],
        ),
        Case::new(
            "negative TTL",
            &["frontier", "--safeguard", "lease", "--ttl", "-3..3"],
            2,
            &["-3"],
        ),
        Case::new(
            "TTL zero under a lock",
            &["frontier", "--safeguard", "lease", "--ttl", "0..2"],
            2,
            &["--ttl 0"],
        ),
        Case::new(
            "horizon 0: nothing can be written in any cell",
            &[
                "frontier",
                "--safeguard",
                "no-lock",
                "--ttl",
                "3",
                "--work",
                "1",
                "--horizon",
                "0",
            ],
            2,
            &["--horizon 0", "smallest meaningful horizon is 1"],
        ),
        Case::new(
            "horizon shorter than one cell's work",
            &[
                "frontier",
                "--safeguard",
                "lease",
                "--ttl",
                "3",
                "--work",
                "1,8",
                "--horizon",
                "6",
            ],
            2,
            &["--work 8", "smallest meaningful horizon is 8"],
        ),
        Case::new(
            "too many cells",
            &[
                "frontier",
                "--safeguard",
                "lease",
                "--ttl",
                "1..65",
                "--work",
                "1..65",
            ],
            2,
            &["4225 cells", "--max-cells 100"],
        ),
        Case::new(
            "callers beyond what the checker explores",
            &["frontier", "--safeguard", "lease", "--callers", "9"],
            2,
            &["--callers 9"],
        ),
        Case::new(
            "state limit zero",
            &["frontier", "--safeguard", "lease", "--max-states", "0"],
            2,
            &["--max-states 0"],
        ),
        Case::new(
            "a cell stopped by the state limit",
            &[
                "frontier",
                "--safeguard",
                "lease",
                "--ttl",
                "3",
                "--work",
                "1",
                "--max-states",
                "20",
            ],
            3,
            &["INCONCLUSIVE", "1 of 1 cells", "state limit"],
        ),
        Case::new(
            "a cell whose horizon lets no run settle",
            &[
                "frontier",
                "--safeguard",
                "lease",
                "--ttl",
                "3",
                "--work",
                "2",
                "--horizon",
                "3",
            ],
            3,
            &["INCONCLUSIVE", "vacuous"],
        ),
        Case::new(
            "an inconclusive cell in JSON",
            &[
                "frontier",
                "--safeguard",
                "lease",
                "--ttl",
                "3",
                "--work",
                "1",
                "--max-states",
                "20",
                "--json",
            ],
            3,
            &[
                "\"verdict\": \"INCONCLUSIVE\"",
                "\"kind\": \"inconclusive\"",
                "\"exit_code\": 3",
            ],
        ),
    ]);
}

#[test]
fn a_frontier_with_an_inconclusive_cell_never_says_safe_in_every_cell() {
    // fenced-cas is safe whatever the pauses where a cell can be established; the second
    // cell's horizon lets no run settle both callers.
    let case = Case::new(
        "safe cells beside a vacuous one",
        &[
            "frontier",
            "--safeguard",
            "fenced-cas",
            "--ttl",
            "1",
            "--work",
            "1,2",
            "--horizon",
            "3",
        ],
        3,
        &[],
    );
    let outcome = run(&case);
    assert_eq!(
        outcome.code,
        Some(3),
        "{}\n{}",
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stdout.contains("INCONCLUSIVE"),
        "{}",
        outcome.stdout
    );
    assert!(
        !outcome.stdout.contains("safe in every cell"),
        "{}",
        outcome.stdout
    );
}
