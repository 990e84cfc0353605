//! Real mode against a real Redis and PostgreSQL: the tutorial's verdicts hold outside the
//! simulation, and every run leaves nothing behind.
//!
//! Needs `LEASELAB_REDIS_URL` (e.g. `redis://127.0.0.1:6379`) and `LEASELAB_DATABASE_URL`
//! (e.g. `postgres://postgres@127.0.0.1:5432/test`); without them every test that talks to the
//! servers prints one line saying it was skipped and passes. The tests of this file run one at
//! a time, so that each can check that no key or schema of this process is left over.

use std::io::Write as _;
use std::process::Command;
use std::sync::Mutex;

use leaselab_model::fault::Fault;
use leaselab_model::safeguard::Point;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::real::{self, RealConfig, RealError};
use leaselab_sim::run::RunReport;

const REDIS_VAR: &str = "LEASELAB_REDIS_URL";
const DATABASE_VAR: &str = "LEASELAB_DATABASE_URL";

/// One real test at a time (each checks the servers are clean afterwards).
static SERIAL: Mutex<()> = Mutex::new(());

/// Prints a line on the real stderr, which cargo's output capture does not swallow.
fn report(line: &str) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("{line}\n").as_bytes());
}

/// The real servers, or `None` after printing one line saying why the test is skipped.
fn servers(test: &str) -> Option<RealConfig> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    match (var(REDIS_VAR), var(DATABASE_VAR)) {
        (Some(redis), Some(postgres)) => Some(RealConfig::new(Some(redis), Some(postgres))),
        _ => {
            report(&format!(
                "{test}: skipped: set {REDIS_VAR} and {DATABASE_VAR} (e.g. redis://127.0.0.1:6379 \
                 and postgres://postgres@127.0.0.1:5432/test) to run against real servers"
            ));
            None
        }
    }
}

/// The real servers and this file's lock (its tests run one at a time), or `None` after
/// printing why the test is skipped.
fn servers_one_at_a_time(test: &str) -> Option<(RealConfig, std::sync::MutexGuard<'static, ()>)> {
    let config = servers(test)?;
    let serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Some((config, serial))
}

fn tutorial(step: &str, variant: Variant) -> Scenario {
    Scenario::tutorial(step, variant).expect("a tutorial preset")
}

fn run_seeds(
    scenario: &Scenario,
    seeds: std::ops::Range<u64>,
    config: &RealConfig,
) -> Vec<RunReport> {
    seeds
        .map(|seed| {
            real::run(scenario, seed, config)
                .unwrap_or_else(|error| panic!("{} seed {seed}: {error}", scenario.name))
        })
        .collect()
}

/// Keys under `leaselab:<pid>:` and schemas `leaselab_<pid>_*` still on the servers.
fn leftovers(config: &RealConfig, pid: u32) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut found = Vec::new();
        let url = config.redis_url.as_deref().expect("a Redis URL");
        let mut connection = leaselab_sim::clients::redis_url(url, None)
            .await
            .expect("connect to Redis");
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("leaselab:{pid}:*"))
            .query_async(&mut connection)
            .await
            .expect("KEYS");
        found.extend(keys);
        let url = config.postgres_url.as_deref().expect("a PostgreSQL URL");
        let client = leaselab_sim::clients::postgres_url(url)
            .await
            .expect("connect to PostgreSQL");
        let rows = client
            .query(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1",
                &[&format!("leaselab\\_{pid}\\_%")],
            )
            .await
            .expect("list schemas");
        found.extend(rows.iter().map(|row| row.get::<_, String>(0)));
        found
    })
}

fn assert_clean(config: &RealConfig) {
    let left = leftovers(config, std::process::id());
    assert!(left.is_empty(), "left behind on the servers: {left:?}");
}

/// Runs the CLI with `args` and the servers' URLs (`--redis`, `--postgres`), stdout captured:
/// its process id (the namespace it works under) and its output.
fn leaselab_against(config: &RealConfig, args: &[&str]) -> (u32, std::process::Output) {
    let redis = config.redis_url.clone().expect("a Redis URL");
    let postgres = config.postgres_url.clone().expect("a PostgreSQL URL");
    let child = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .args(["--redis", &redis, "--postgres", &postgres])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run leaselab");
    let pid = child.id();
    (pid, child.wait_with_output().expect("leaselab ends"))
}

#[test]
fn step2_lock_keeps_the_balance_right_for_real() {
    let Some((config, _serial)) =
        servers_one_at_a_time("step2_lock_keeps_the_balance_right_for_real")
    else {
        return;
    };
    let mut scenario = tutorial("step2-lock", Variant::default());
    scenario.callers = 10;
    for report in run_seeds(&scenario, 1..4, &config) {
        assert!(!report.broken(), "{}", report.ledger.line());
        assert!(report.finished);
        assert_eq!(report.ledger.accepted, 10, "{}", report.ledger.line());
        assert_eq!(report.ledger.final_balance, 0);
        assert!(!report.lock_left_behind);
        assert_eq!(report.callers.len(), 10);
    }
    assert_clean(&config);
}

#[test]
fn step5_fencing_rejects_the_stale_writer_for_real() {
    let Some((config, _serial)) =
        servers_one_at_a_time("step5_fencing_rejects_the_stale_writer_for_real")
    else {
        return;
    };
    let scenario = tutorial("step5-fencing", Variant::default());
    for report in run_seeds(&scenario, 1..3, &config) {
        assert!(!report.broken(), "{}", report.ledger.line());
        assert_eq!(report.ledger.accepted, 1);
        assert_eq!(report.ledger.rejected, 1);
        assert_eq!(report.ledger.final_balance, 90);
        assert_eq!(report.final_fence, Some(34));
        assert_eq!(report.tokens_issued, vec![33, 34]);
        // The pause is a real sleep: A writes after 250 ms.
        assert!(report.elapsed_ms >= 250, "{}", report.elapsed_ms);
    }
    assert_clean(&config);
}

/// The client drops a fenced acquire's reply itself (the connection breaks after the script
/// ran on the real server): the retry finds the caller's own key, the caller waits out its
/// own lease, and the real fence counter ends one past the callers' tokens, as simulated
/// (`sim/tests/reply_faults.rs`).
#[test]
fn a_dropped_connection_on_a_fenced_acquire_skips_a_token_for_real() {
    let Some((config, _serial)) =
        servers_one_at_a_time("a_dropped_connection_on_a_fenced_acquire_skips_a_token_for_real")
    else {
        return;
    };
    let mut scenario = tutorial("step5-fencing", Variant::default());
    scenario.faults = vec![Fault::DroppedConnection {
        caller: 1,
        on: leaselab_model::world::FaultsOn::Acquire,
    }];
    scenario.start_offsets_ms = vec![0, 50];
    for report in run_seeds(&scenario, 1..2, &config) {
        assert_eq!(report.ledger.line(), "accepted=2 balance=80 expected=80 OK");
        assert_eq!(report.final_fence, Some(35));
        assert!(report
            .events
            .iter()
            .any(|e| matches!(e.what, leaselab_sim::events::What::ConnectionDropped)));
    }
    assert_clean(&config);
}

#[test]
fn step5_unfenced_loses_an_update_for_real() {
    let Some((config, _serial)) = servers_one_at_a_time("step5_unfenced_loses_an_update_for_real")
    else {
        return;
    };
    let scenario = tutorial(
        "step5-fencing",
        Variant {
            unfenced: true,
            ..Variant::default()
        },
    );
    for report in run_seeds(&scenario, 1..3, &config) {
        assert!(report.broken(), "{}", report.ledger.line());
        assert_eq!(report.ledger.accepted, 2);
        assert_eq!(report.ledger.final_balance, 90);
        assert_eq!(report.final_fence, Some(33));
    }
    assert_clean(&config);
}

/// Two opposite transfers, each pausing 50 ms once it holds its first row: without lock
/// order each then waits for the other's row, the real PostgreSQL aborts one with 40P01
/// (after its `deadlock_timeout`), and that caller rolls back and retries; with lock order the
/// second waits for the first. Either way money is conserved.
#[test]
fn transfers_deadlock_without_lock_order_and_retry_for_real() {
    let Some((config, _serial)) =
        servers_one_at_a_time("transfers_deadlock_without_lock_order_and_retry_for_real")
    else {
        return;
    };
    for (name, deadlocks) in [("transfer-unordered", 1), ("transfer-ordered", 0)] {
        let mut scenario = Scenario::safety(name).expect("a safety preset");
        scenario.callers = 2;
        scenario.faults = (1..=2)
            .map(|caller| Fault::Pause {
                caller,
                at: Point::AfterAcquire,
                pause_ms: 50,
            })
            .collect();
        for report in run_seeds(&scenario, 1..2, &config) {
            let line = report.ledger.line();
            assert!(!report.broken(), "{name}: {line}");
            assert!(report.finished, "{name}: {line}");
            assert_eq!(report.ledger.accepted, 2, "{name}: {line}");
            // Without lock order at least one deadlock (on a loaded machine the retry can
            // meet the other transfer again and deadlock once more); with it none.
            if deadlocks == 0 {
                assert_eq!(report.ledger.deadlock_retries, 0, "{name}: {line}");
            } else {
                assert!(
                    report.ledger.deadlock_retries >= deadlocks,
                    "{name}: {line}"
                );
            }
            let balances: Vec<i64> = report
                .ledger
                .wallets
                .iter()
                .map(|w| w.final_balance)
                .collect();
            assert_eq!(balances, vec![100, 100], "{name}: {line}");
        }
    }
    assert_clean(&config);
}

/// Ten callers read-modify-write one balance: under READ COMMITTED updates are lost; under
/// REPEATABLE READ and SERIALIZABLE the real server's 40001 makes the callers retry and the
/// ledger holds.
#[test]
fn isolation_levels_keep_or_lose_updates_for_real() {
    let Some((config, _serial)) =
        servers_one_at_a_time("isolation_levels_keep_or_lose_updates_for_real")
    else {
        return;
    };
    for name in ["rmw-repeatable-read", "rmw-serializable"] {
        let scenario = Scenario::safety(name).expect("a safety preset");
        for report in run_seeds(&scenario, 1..3, &config) {
            let line = report.ledger.line();
            assert!(!report.broken(), "{name}: {line}");
            assert_eq!(report.ledger.accepted, 10, "{name}: {line}");
            assert_eq!(report.ledger.final_balance, 0, "{name}: {line}");
        }
    }
    // Two callers, the first pausing 50 ms after its read: the second's spend is lost.
    let mut scenario = Scenario::safety("rmw-read-committed").expect("a safety preset");
    scenario.callers = 2;
    scenario.faults = vec![Fault::Pause {
        caller: 1,
        at: Point::AfterRead,
        pause_ms: 50,
    }];
    scenario.start_offsets_ms = vec![0, 10];
    for report in run_seeds(&scenario, 1..2, &config) {
        assert!(report.broken(), "{}", report.ledger.line());
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN"
        );
    }
    assert_clean(&config);
}

#[test]
fn the_cli_runs_for_real_and_exits_with_the_verdict() {
    let Some((config, _serial)) =
        servers_one_at_a_time("the_cli_runs_for_real_and_exits_with_the_verdict")
    else {
        return;
    };
    let (pid, output) = leaselab_against(&config, &["run", "step5-fencing", "--unfenced"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("accepted=2 balance=90 expected=80 BROKEN"),
        "{stdout}"
    );
    assert!(stdout.contains("fence=33"), "{stdout}");
    assert!(stdout.contains("not reproducible"), "{stdout}");
    // The child process cleaned up its own namespace.
    let left = leftovers(&config, pid);
    assert!(left.is_empty(), "the CLI left behind: {left:?}");
}

#[test]
fn compare_puts_simulated_and_real_ranges_side_by_side() {
    let Some((config, _serial)) =
        servers_one_at_a_time("compare_puts_simulated_and_real_ranges_side_by_side")
    else {
        return;
    };
    let (pid, output) = leaselab_against(
        &config,
        &["compare", "--only", "step5", "--runs", "2", "--json"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let rows = document["rows"].as_array().expect("rows");
    // step5-fencing and its --unfenced variant.
    assert_eq!(rows.len(), 2, "{stdout}");
    let mut apart = 0;
    for row in rows {
        let counters = row["counters"].as_array().expect("counters");
        assert_eq!(counters.len(), 10, "{row}");
        for counter in counters {
            let (sim, real) = (&counter["sim"], &counter["real"]);
            let overlap =
                sim[0].as_i64() <= real[2].as_i64() && real[0].as_i64() <= sim[2].as_i64();
            assert_eq!(counter["overlap"].as_bool(), Some(overlap), "{counter}");
            apart += usize::from(!overlap);
        }
        // The verdict-bearing counters are the tutorial's in both worlds.
        let value = |name: &str, side: &str| {
            counters
                .iter()
                .find(|c| c["counter"] == name)
                .map(|c| c[side].clone())
                .expect("the counter")
        };
        let broken = if row["variant"] == "--unfenced" { 1 } else { 0 };
        for side in ["sim", "real"] {
            assert_eq!(
                value("BROKEN", side),
                serde_json::json!([broken, broken, broken])
            );
            assert_eq!(
                value("final balance", side),
                serde_json::json!([90, 90, 90])
            );
        }
    }
    assert_eq!(document["apart"].as_array().map(Vec::len), Some(apart));
    let expected = if apart == 0 { 0 } else { 1 };
    assert_eq!(output.status.code(), Some(expected), "{stdout}");
    let left = leftovers(&config, pid);
    assert!(left.is_empty(), "compare left behind: {left:?}");
}

#[test]
fn faults_that_need_the_simulator_are_refused_before_anything_runs() {
    // No server is contacted: the URLs point nowhere.
    let config = RealConfig::new(
        Some("redis://127.0.0.1:1".into()),
        Some("postgres://nobody@127.0.0.1:1/none".into()),
    );
    let failover = leaselab_sim::faults::fault_scenario("failover-fencing", false).unwrap();
    let error = real::run(&failover, 1, &config).unwrap_err();
    let RealError::Refused(message) = error else {
        panic!("expected a refusal, got {error:?}");
    };
    assert!(message.contains("failover at 20ms"), "{message}");
    assert!(message.contains("replica"), "{message}");

    let partition = leaselab_sim::faults::fault_scenario("partition-watchdog", false).unwrap();
    let message = real::run(&partition, 1, &config).unwrap_err().to_string();
    assert!(message.contains("partition app-1 <-> redis"), "{message}");

    // A pause is fine: the refusal is about the server, not the scenario.
    let step5 = tutorial("step5-fencing", Variant::default());
    assert!(real::validate(&step5, &config).is_ok());
    let error = real::run(&step5, 1, &config).unwrap_err();
    assert!(matches!(error, RealError::Server(_)), "{error:?}");
    assert!(error.to_string().contains("cannot reach Redis"), "{error}");
}

/// Keys of this process left in Redis database `db` of the `--redis` server (a Redlock node's,
/// in real mode).
fn leftovers_in_db(config: &RealConfig, db: i64) -> Vec<String> {
    leftovers_at(config.redis_url.as_deref().expect("a Redis URL"), db)
}

/// Keys of this process left in database `db` of the Redis server at `url`.
fn leftovers_at(url: &str, db: i64) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut connection = leaselab_sim::clients::redis_url_in_db(url, db)
            .await
            .expect("connect to Redis");
        redis::cmd("KEYS")
            .arg(format!("leaselab:{}:*", std::process::id()))
            .query_async(&mut connection)
            .await
            .expect("KEYS")
    })
}

/// `redlock-pause` on `config`'s nodes: A pauses 1.5 s past its validity (TTL 1 s), its keys
/// expire on every node and B takes the lock, so `redlock` loses an update and `redlock-cas`
/// refuses the stale write. Returns the BROKEN run and the scenario (now `redlock-cas`).
fn redlock_pause_breaks_and_cas_holds(config: &RealConfig) -> (RunReport, Scenario) {
    let mut scenario = leaselab_sim::faults::fault_scenario("redlock-pause", false).unwrap();
    let broken = run_seeds(&scenario, 1..2, config);
    assert_eq!(
        broken[0].ledger.line(),
        "accepted=2 balance=90 expected=80 BROKEN"
    );
    scenario.safeguard = leaselab_model::safeguard::Safeguard::Redlock {
        nodes: 3,
        cas: true,
    };
    let held = run_seeds(&scenario, 1..2, config);
    assert_eq!(
        held[0].ledger.line(),
        "accepted=1 balance=90 expected=90 OK"
    );
    assert_eq!(held[0].ledger.rejected, 1);
    let broken = broken.into_iter().next().expect("one run");
    (broken, scenario)
}

#[test]
fn redlock_on_three_logical_nodes_breaks_under_a_long_pause_and_redlock_cas_holds() {
    let Some((config, _serial)) =
        servers_one_at_a_time("redlock_on_three_logical_nodes_breaks_under_a_long_pause")
    else {
        return;
    };
    // Real mode's nodes are databases 1..=3 of the one server.
    let (_, mut scenario) = redlock_pause_breaks_and_cas_holds(&config);
    // Without the pause both spend in turn.
    scenario.faults.clear();
    let calm = run_seeds(&scenario, 1..2, &config);
    assert_eq!(
        calm[0].ledger.line(),
        "accepted=2 balance=80 expected=80 OK"
    );
    assert_clean(&config);
    for db in 1..=3 {
        let left = leftovers_in_db(&config, db);
        assert!(left.is_empty(), "left behind in database {db}: {left:?}");
    }
}

const NODES_VAR: &str = "LEASELAB_REDIS_NODE_URLS";

#[test]
fn redlock_on_three_separate_servers_breaks_under_a_long_pause_and_redlock_cas_holds() {
    let test = "redlock_on_three_separate_servers";
    let Some(mut config) = servers(test) else {
        return;
    };
    let Some(nodes) = std::env::var(NODES_VAR)
        .ok()
        .filter(|value| !value.trim().is_empty())
    else {
        report(&format!(
            "{test}: skipped: set {NODES_VAR} to three Redis URLs, comma-separated (e.g. \
             redis://127.0.0.1:6380,redis://127.0.0.1:6381,redis://127.0.0.1:6382)"
        ));
        return;
    };
    config.redis_node_urls = nodes.split(',').map(|url| url.trim().to_string()).collect();
    assert_eq!(config.redis_node_urls.len(), 3, "{NODES_VAR}={nodes}");
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Each node is its own process.
    let (broken, scenario) = redlock_pause_breaks_and_cas_holds(&config);
    // Every node saw both callers' acquires: the lock really lived on the three servers.
    for node in 1..=3u8 {
        let requests = broken
            .events
            .iter()
            .filter(|event| {
                matches!(
                    event.what,
                    leaselab_sim::events::What::RedisRequest { node: Some(n), .. } if n == node
                )
            })
            .count();
        assert!(requests >= 2, "redis-{node}: {requests} requests logged");
    }
    assert_clean(&config);
    for url in &config.redis_node_urls {
        let left = leftovers_at(url, 0);
        assert!(left.is_empty(), "left behind on {url}: {left:?}");
    }
    // Nothing of the run went to the --redis server's node databases.
    for db in 1..=3 {
        let left = leftovers_in_db(&config, db);
        assert!(left.is_empty(), "left behind in database {db}: {left:?}");
    }

    // A count that does not match the nodes is refused before anything runs.
    config.redis_node_urls.pop();
    let message = real::run(&scenario, 1, &config).unwrap_err().to_string();
    assert!(
        message.contains("locks on 3 Redis nodes but 2 --redis-node-url URLs were given"),
        "{message}"
    );
}

#[test]
fn calibrate_refuses_bad_usage_and_unreachable_servers() {
    let leaselab = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_leaselab"))
            .args(args)
            .output()
            .expect("run leaselab")
    };
    for args in [
        &["calibrate", "--samples", "0"][..],
        &["calibrate", "--samples", "1001"],
        &["calibrate", "--load-callers", "1001"],
        // --samples and --load-callers belong to --calibrate.
        &["compare", "--samples", "5"],
        &["compare", "--load-callers", "5"],
    ] {
        let output = leaselab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    // Nothing listens on port 1: the error names the URL, exit 2, no panic.
    let output = leaselab(&[
        "calibrate",
        "--redis",
        "redis://127.0.0.1:1",
        "--postgres",
        "postgres://postgres@127.0.0.1:1/test",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("redis://127.0.0.1:1"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn calibrate_measures_postgres_as_a_caller_meets_it_and_cleans_up() {
    let Some((config, _serial)) =
        servers_one_at_a_time("calibrate_measures_postgres_as_a_caller_meets_it_and_cleans_up")
    else {
        return;
    };
    let (pid, output) = leaselab_against(
        &config,
        &[
            "calibrate",
            "--samples",
            "7",
            "--load-callers",
            "3",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let calibration = &document["calibration"];
    assert_eq!(calibration["samples"], 7);
    assert_eq!(calibration["load_callers"], 3);
    let median = |path: &[&str]| {
        let mut value = calibration;
        for part in path {
            value = &value[part];
        }
        let [min, p10, median, p90, max] =
            ["min_us", "p10_us", "median_us", "p90_us", "max_us"].map(|k| value[k].as_u64());
        let summary = [min, p10, median, p90, max].map(|v| v.expect("a number"));
        assert!(summary.windows(2).all(|w| w[0] <= w[1]), "{value}");
        assert!(summary[0] > 0, "a real round trip takes time: {value}");
        summary[2]
    };
    median(&["redis_round_trip"]);
    median(&["postgres", "warm_statement"]);
    median(&["postgres", "first_statement"]);
    median(&["postgres", "write"]);
    // The simulation takes the network latency from a caller's round trips in real runs, and
    // PostgreSQL's costs from the statements of real step6 runs, over the two round trips it
    // charges for a statement (client CPU 20 + tick 100 µs on the localhost timing, plus two
    // latencies).
    median(&["caller_round_trip"]);
    let caller = &calibration["caller_round_trip"];
    let latency = (
        one_way(caller["p10_us"].as_u64().expect("p10")),
        one_way(caller["p90_us"].as_u64().expect("p90")),
    );
    let latency = (latency.0, latency.1.max(latency.0));
    assert_eq!(
        document["latency_us"],
        serde_json::json!([latency.0, latency.1])
    );
    assert_eq!(calibration["in_run"]["runs"], 1, "7 writes: one step6 run");
    let first = median(&["in_run", "first_statement"]);
    let first_p90 = calibration["in_run"]["first_statement"]["p90_us"]
        .as_u64()
        .expect("p90");
    let write = median(&["in_run", "write"]);
    let round_trip = 20 + 100 + latency.0 + latency.1;
    let (fixed, tail) = fixed_and_tail(extra_of(first, round_trip), first, first_p90);
    assert_eq!(document["pg_first_statement_us"].as_u64(), Some(fixed));
    assert_eq!(document["pg_first_statement_tail_us"].as_u64(), Some(tail));
    assert_eq!(
        document["median_only"]["pg_first_statement_us"].as_u64(),
        Some(extra_of(first, round_trip))
    );
    assert_eq!(
        document["pg_commit_us"].as_u64(),
        Some(extra_of(write, round_trip))
    );
    let left = leftovers(&config, pid);
    assert!(left.is_empty(), "calibrate left behind: {left:?}");

    // compare --calibrate simulates with what it measured, unless a flag says otherwise.
    let (_, output) = leaselab_against(
        &config,
        &[
            "compare",
            "--only",
            "step5-fencing",
            "--runs",
            "1",
            "--calibrate",
            "--samples",
            "3",
            "--pg-commit-us",
            "123",
            "--latency-us",
            "40-60",
            "--json",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let calibration = &document["calibration"];
    assert_eq!(calibration["samples"], 3, "{stdout}");
    // --latency-us wins over the measured latency, and the costs are taken over it.
    assert_eq!(
        document["latency_us"],
        serde_json::json!([40, 60]),
        "{stdout}"
    );
    let first = calibration["in_run"]["first_statement"]["median_us"]
        .as_u64()
        .expect("first");
    let first_p90 = calibration["in_run"]["first_statement"]["p90_us"]
        .as_u64()
        .expect("p90");
    let round_trip = 20 + 100 + 40 + 60;
    let (fixed, tail) = fixed_and_tail(extra_of(first, round_trip), first, first_p90);
    assert_eq!(document["pg_first_statement_us"].as_u64(), Some(fixed));
    assert_eq!(document["pg_first_statement_tail_us"].as_u64(), Some(tail));
    assert_eq!(document["pg_commit_us"].as_u64(), Some(123));
}

/// The one-way latency for a measured round trip, computed apart from the code under test:
/// what is left after client CPU 20 and a tick of 100 µs, halved, rounded to 10 µs.
fn one_way(round_trip_us: u64) -> u64 {
    (round_trip_us.saturating_sub(120) / 2 + 5) / 10 * 10
}

/// The first statement's fit, computed apart from the code under test: an exponential tail
/// of mean (p90 − median) / ln 5 and a fixed part that keeps the median's extra, both
/// rounded to 10 µs.
fn fixed_and_tail(extra: u64, median: u64, p90: u64) -> (u64, u64) {
    let round = |us: f64| (us / 10.0).round() as u64 * 10;
    let tail = round((p90 - median) as f64 / 5f64.ln());
    let fixed = round((extra as f64 - tail as f64 * 2f64.ln()).max(0.0));
    (fixed, tail)
}

/// What the simulation does not charge already of a measured median: two round trips, the
/// rest rounded to 10 µs.
fn extra_of(total: u64, warm: u64) -> u64 {
    (total.saturating_sub(2 * warm) + 5) / 10 * 10
}
