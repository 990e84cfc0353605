//! What the exhaustive checker establishes for each safeguard, with small bounds: two callers
//! (three where it matters) spending 10 from 20, leases of 1–3 ticks.
//!
//! Every verdict is asserted, and so is the length of every shortest counterexample: a change
//! to a machine, a stand-in or the world that changes what can happen shows up here.

use leaselab_checker::bfs::Counters;
use leaselab_checker::{
    run, CheckConfig, CheckReport, LeaseModel, PropertyVerdict, RunOptions, ALL_FINISHED, LEDGER,
    MUTUAL_EXCLUSION, TX_RETRIED, WRITE_REJECTED,
};
use leaselab_model::postgres::{Isolation, WriteGuard};
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;

use PropertyVerdict::{Found, NotFound, Safe, Violated};

const LEASE: Safeguard = Safeguard::Lease {
    release: ReleaseVia::Script,
};
const FENCED: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelow,
};
const FENCED_CAS: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelowAndEqual,
};

fn check(safeguard: Safeguard, change: impl FnOnce(&mut CheckConfig)) -> CheckReport {
    let mut config = CheckConfig::new(safeguard);
    change(&mut config);
    let model = LeaseModel::new(config).expect("a valid check");
    run(&model, RunOptions::default(), &Counters::default())
}

/// Asserts a verdict, with the counterexample's length when there is one.
fn expect(report: &CheckReport, property: &str, verdict: PropertyVerdict, steps: Option<usize>) {
    let found = report
        .property(property)
        .unwrap_or_else(|| panic!("{property} is checked"));
    assert_eq!(
        (found.verdict, found.steps),
        (verdict, steps),
        "{property}: {}\n{}",
        found.basis,
        found.trace.join("\n")
    );
}

fn trace(report: &CheckReport, property: &str) -> String {
    report.property(property).unwrap().trace.join("\n")
}

#[test]
fn no_lock_loses_an_update() {
    let report = check(Safeguard::NoLock, |_| {});
    expect(&report, LEDGER, Violated, Some(9));
    assert!(
        report.property(MUTUAL_EXCLUSION).is_none(),
        "no lock, no exclusion to check"
    );
    let ledger = report.property(LEDGER).unwrap();
    assert!(
        ledger
            .outcome
            .contains(&"ledger: accepted=2 balance=10 expected=0 BROKEN".to_string()),
        "{:?}",
        ledger.outcome
    );
}

#[test]
fn setnx_del_holds_without_faults_but_a_failover_breaks_it() {
    let report = check(Safeguard::SetnxDel, |c| c.horizon_ticks = Some(6));
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
    let report = check(Safeguard::SetnxDel, |c| {
        c.failovers = 1;
        c.horizon_ticks = Some(2);
    });
    // The shortest way to lose money: the failover loses the balance write itself (Redis
    // acknowledged it before replicating); the lock fails too, as mutual exclusion shows.
    expect(&report, LEDGER, Violated, Some(11));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(5));
    assert!(trace(&report, MUTUAL_EXCLUSION).contains("failover"));
    assert!(report
        .property(LEDGER)
        .unwrap()
        .outcome
        .iter()
        .any(|line| line.contains("accepted=1 balance=20 expected=10 BROKEN")));
}

#[test]
fn lease_holds_while_work_and_pauses_fit_in_the_ttl() {
    let report = check(LEASE, |c| c.max_pause_ticks = Some(0));
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
    expect(&report, ALL_FINISHED, Found, Some(14));
}

#[test]
fn lease_breaks_once_work_exceeds_the_ttl() {
    let report = check(LEASE, |c| {
        c.ttl_ticks = 2;
        c.work_ticks = 3;
        c.max_pause_ticks = Some(0);
    });
    expect(&report, LEDGER, Violated, Some(18));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(8));
    assert!(trace(&report, LEDGER).contains("lease of caller 1 expires"));
}

#[test]
fn lease_breaks_once_a_pause_exceeds_what_the_ttl_leaves() {
    // TTL 2, work 1: a pause of 1 fits, a pause of 2 lets the lease expire mid-spend.
    let fits = check(LEASE, |c| {
        c.ttl_ticks = 2;
        c.max_pause_ticks = Some(1);
        c.horizon_ticks = Some(6);
    });
    expect(&fits, LEDGER, Safe, None);
    expect(&fits, MUTUAL_EXCLUSION, Safe, None);
    let breaks = check(LEASE, |c| {
        c.ttl_ticks = 2;
        c.max_pause_ticks = Some(2);
        c.horizon_ticks = Some(6);
    });
    expect(&breaks, LEDGER, Violated, Some(16));
    expect(&breaks, MUTUAL_EXCLUSION, Violated, Some(8));
    let unbounded = check(LEASE, |c| {
        c.ttl_ticks = 2;
        c.horizon_ticks = Some(5);
    });
    expect(&unbounded, LEDGER, Violated, Some(16));
}

#[test]
fn lease_breaks_when_a_failover_loses_the_lock() {
    let report = check(LEASE, |c| {
        c.ttl_ticks = 2;
        c.max_pause_ticks = Some(0);
        c.failovers = 1;
        c.horizon_ticks = Some(3);
    });
    expect(&report, LEDGER, Violated, Some(12));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(5));
}

#[test]
fn fencing_alone_lets_overlapping_holders_both_spend() {
    let report = check(FENCED, |c| {
        c.ttl_ticks = 1;
        c.horizon_ticks = Some(5);
    });
    expect(&report, LEDGER, Violated, Some(15));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(6));
    expect(&report, WRITE_REJECTED, Found, Some(13));
    let steps = trace(&report, LEDGER);
    assert!(steps.contains("acquires with fence 33"), "{steps}");
    assert!(steps.contains("lease of caller"), "{steps}");
    assert!(steps.contains("acquires with fence 34"), "{steps}");
}

#[test]
fn fenced_check_and_set_keeps_the_ledger_for_two_callers_with_unbounded_pauses() {
    let report = check(FENCED_CAS, |c| {
        c.ttl_ticks = 1;
        c.horizon_ticks = Some(6);
    });
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(6));
    expect(&report, ALL_FINISHED, Found, Some(14));
    expect(&report, WRITE_REJECTED, Found, Some(13));
    assert!(report.exhausted);
    assert!(trace(&report, WRITE_REJECTED).contains("REJECTED"));
}

#[test]
fn fenced_check_and_set_keeps_the_ledger_for_three_callers_with_unbounded_pauses() {
    let report = check(FENCED_CAS, |c| {
        c.callers = 3;
        c.ttl_ticks = 1;
        c.horizon_ticks = Some(4);
    });
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(6));
    expect(&report, ALL_FINISHED, Found, Some(18));
    assert!(report.exhausted);
}

#[test]
fn postgres_alone_keeps_the_ledger() {
    for safeguard in [Safeguard::PgDebit, Safeguard::PgForUpdate] {
        for callers in [2, 3] {
            let report = check(safeguard, |c| c.callers = callers);
            expect(&report, LEDGER, Safe, None);
            assert_eq!(report.verdict(ALL_FINISHED), Some(Found));
            assert!(report.exhausted);
        }
    }
}

/// Transfers between two wallets, one caller each way: with or without lock order money is
/// conserved in every interleaving; without order a deadlock is reachable (a transaction was
/// retried), with order it is not.
#[test]
fn transfers_conserve_money_and_only_the_unordered_ones_deadlock() {
    for (ordered, retried) in [(true, NotFound), (false, Found)] {
        let report = check(Safeguard::PgTransfer { ordered }, |_| {});
        expect(&report, LEDGER, Safe, None);
        assert_eq!(report.verdict(ALL_FINISHED), Some(Found));
        assert_eq!(
            report.verdict(TX_RETRIED),
            Some(retried),
            "ordered: {ordered}"
        );
        assert!(report.exhausted);
    }
    let unordered = check(Safeguard::PgTransfer { ordered: false }, |_| {});
    expect(&unordered, TX_RETRIED, Found, Some(TRANSFER_DEADLOCK_STEPS));
    let steps = trace(&unordered, TX_RETRIED);
    assert!(steps.contains("deadlock detected (40P01)"), "{steps}");
}

/// The shortest path to a deadlock: both callers begin and lock their first row, one asks for
/// the other's row and waits, the other asks for the first's and closes the cycle.
const TRANSFER_DEADLOCK_STEPS: usize = 7;

/// Read-modify-write of one balance: under READ COMMITTED two callers lose an update; under
/// REPEATABLE READ and SERIALIZABLE the second write fails with 40001, the caller retries,
/// and the ledger holds in every interleaving.
#[test]
fn isolation_levels_decide_whether_a_read_modify_write_loses_updates() {
    let committed = check(
        Safeguard::PgIsolation {
            isolation: Isolation::ReadCommitted,
        },
        |_| {},
    );
    expect(
        &committed,
        LEDGER,
        Violated,
        Some(READ_COMMITTED_LOST_UPDATE_STEPS),
    );
    for isolation in [Isolation::RepeatableRead, Isolation::Serializable] {
        let report = check(Safeguard::PgIsolation { isolation }, |_| {});
        expect(&report, LEDGER, Safe, None);
        // Both read, one writes and commits, the other's write fails with 40001.
        expect(&report, TX_RETRIED, Found, Some(11));
        assert_eq!(report.verdict(ALL_FINISHED), Some(Found));
        assert!(report.exhausted);
    }
}

/// Both callers begin and read 20, one writes 10 and commits, the other writes 10 over it.
const READ_COMMITTED_LOST_UPDATE_STEPS: usize = 13;

#[test]
fn watchdog_is_safe_exactly_while_the_pause_fits_between_refreshes() {
    // TTL 3: a refresh every tick, each for 3 ticks. Work of 4 outlives the TTL.
    let watchdog = |pause: Option<u64>| {
        check(Safeguard::LeaseWatchdog, |c| {
            c.work_ticks = 4;
            c.max_pause_ticks = pause;
            c.horizon_ticks = Some(8);
        })
    };
    let fits = watchdog(Some(2));
    expect(&fits, LEDGER, Safe, None);
    expect(&fits, MUTUAL_EXCLUSION, Safe, None);
    let breaks = watchdog(Some(3));
    expect(&breaks, LEDGER, Violated, Some(20));
    expect(&breaks, MUTUAL_EXCLUSION, Violated, Some(9));
    // The pause hits at the first refresh: when the caller resumes, its work is over and it
    // writes on an expired lease without refreshing.
    let steps = trace(&breaks, LEDGER);
    assert!(steps.contains("lease of caller 1 expires"), "{steps}");
    assert!(steps.contains("refused, lock not held"), "{steps}");
    assert!(trace(&fits, ALL_FINISHED).contains("refreshes the lease (watchdog)"));
}

/// `lease-wait` (`WAIT 1` after the acquire) under one failover, nobody pausing: the World
/// answers WAIT from its replica (1 once the lock replicated, else 0: the caller releases and
/// gives up), so no two callers ever trust the lock at once, where the plain lease loses its
/// lock in 5 steps. The ledger still breaks: the failover loses the balance write itself
/// (the balance is in Redis), which WAIT after the acquire cannot protect.
#[test]
fn wait_after_the_acquire_keeps_the_lock_through_a_failover_but_not_the_balance() {
    let failover = |c: &mut CheckConfig| {
        c.max_pause_ticks = Some(0);
        c.failovers = 1;
        c.horizon_ticks = Some(30);
    };
    let lease = check(LEASE, failover);
    expect(&lease, MUTUAL_EXCLUSION, Violated, Some(5));
    expect(&lease, LEDGER, Violated, Some(14));
    let waited = check(Safeguard::LeaseWait, failover);
    expect(&waited, MUTUAL_EXCLUSION, Safe, None);
    expect(&waited, LEDGER, Violated, Some(14));
    let ledger = trace(&waited, LEDGER);
    assert!(
        ledger.contains("runs WAIT: 1 replica(s) acknowledged the lock"),
        "{ledger}"
    );
    assert!(
        ledger.contains("failover: the replica is promoted"),
        "{ledger}"
    );
}

/// An eviction of the fence counter at any moment (`--evictions 1`): the counter starts
/// again from 1, and `fence < $2` refuses the small tokens until it passes the stored fence
/// (a write is rejected: availability, not a lost update); the ledger holds with 3 callers.
#[test]
fn an_evicted_fence_counter_costs_rejected_writes_not_the_ledger() {
    let evict = |c: &mut CheckConfig| {
        c.max_pause_ticks = Some(0);
        c.callers = 3;
        c.evictions = 1;
    };
    let fenced = check(FENCED, evict);
    expect(&fenced, LEDGER, Safe, None);
    expect(&fenced, WRITE_REJECTED, Found, Some(15));
    assert!(trace(&fenced, WRITE_REJECTED).contains("evicts the fence counter"));
    // Without the eviction nobody is refused at these bounds.
    let plain = check(FENCED, |c| {
        c.max_pause_ticks = Some(0);
        c.callers = 3;
    });
    expect(&plain, WRITE_REJECTED, NotFound, None);
}

/// A restart of the single Redis without persistence, at any moment (`--restarts 1`): the
/// fence counter starts over, so a token below the one already written comes out and the
/// `fence < $2` check lets the older holder's spend overwrite; check-and-set still refuses
/// it. A balance kept in Redis is simply gone. Not with a replica, not for PostgreSQL-only
/// safeguards.
#[test]
fn a_redis_restart_reissues_fences_past_the_fence_check_but_not_past_check_and_set() {
    let restart = |c: &mut CheckConfig| {
        c.max_pause_ticks = Some(0);
        c.restarts = 1;
    };
    let fenced = check(FENCED, restart);
    expect(&fenced, LEDGER, Violated, Some(14));
    assert!(
        trace(&fenced, LEDGER).contains("Redis restarts without persistence"),
        "{}",
        trace(&fenced, LEDGER)
    );
    let cas = check(FENCED_CAS, restart);
    expect(&cas, LEDGER, Safe, None);
    let lease = check(LEASE, restart);
    expect(&lease, LEDGER, Violated, Some(9));
    assert!(trace(&lease, LEDGER).contains("balance key is missing"));
    // Without the restart the same bounds hold the ledger: the restart is what breaks it.
    expect(
        &check(FENCED, |c| c.max_pause_ticks = Some(0)),
        LEDGER,
        Safe,
        None,
    );
    for (safeguard, failovers) in [
        (Safeguard::PgDebit, 0),
        (LEASE, 1),
        (Safeguard::LeaseWait, 0),
    ] {
        let mut config = CheckConfig::new(safeguard);
        config.restarts = 1;
        config.failovers = failovers;
        assert!(
            config.validate().is_err(),
            "{} with failovers {failovers}",
            safeguard.name()
        );
    }
}

/// A machine crash after which Redis reloads its append-only file (`--restarts 1
/// --restart-from-aof`). Under `everysec` (and `no`) the file was fsynced at the start and then
/// at moments the search picks; when the last fsync was at the start, the lock, the fence
/// counter and a balance kept in Redis go back to what they were then:
/// a lease's balance and `fence < $2` break, as with no persistence at all. Under `always`
/// every acknowledged write was fsynced: nothing is lost, and every safeguard keeps the
/// ledger it keeps without the crash.
#[test]
fn a_crash_loses_what_the_append_only_file_had_not_fsynced() {
    use leaselab_model::redis::aof::Appendfsync;
    let crash = |appendfsync: Appendfsync| {
        move |c: &mut CheckConfig| {
            c.ttl_ticks = 3;
            c.max_pause_ticks = Some(0);
            c.restarts = 1;
            c.restarts_from_aof = true;
            c.aof_appendfsync = appendfsync;
        }
    };
    for lossy in [Appendfsync::Everysec, Appendfsync::No] {
        let fenced_unchecked = check(
            Safeguard::Fenced {
                guard: WriteGuard::Unfenced,
            },
            crash(lossy),
        );
        expect(&fenced_unchecked, LEDGER, Violated, Some(14));
        assert!(
            trace(&fenced_unchecked, LEDGER).contains("last fsynced at the start"),
            "{}",
            trace(&fenced_unchecked, LEDGER)
        );
        expect(&check(LEASE, crash(lossy)), LEDGER, Violated, Some(14));
        expect(&check(FENCED, crash(lossy)), LEDGER, Safe, None);
    }
    for safeguard in [
        LEASE,
        FENCED,
        Safeguard::Fenced {
            guard: WriteGuard::Unfenced,
        },
    ] {
        let report = check(safeguard, crash(Appendfsync::Always));
        expect(&report, LEDGER, Safe, None);
        expect(&report, MUTUAL_EXCLUSION, Safe, None);
    }
    // `always` says when the file a crash reloads was fsynced: alone it is refused.
    let mut config = CheckConfig::new(LEASE);
    config.aof_appendfsync = Appendfsync::Always;
    assert!(config.validate().is_err());
    config.restarts = 1;
    assert!(config.validate().is_err());
    config.restarts_from_aof = true;
    assert!(config.validate().is_ok());
}

/// The safety section's "nobody steps the system clock", exhaustively: a jump of Redis's clock
/// past the lease (at any moment) hands the lock out twice and loses an update, watchdog or
/// not; the same correction slewed at NTP's 500 ppm changes nothing within a lease of ticks;
/// slewed at 50 % it eats the margin as a 50 % drift does. A lock without a TTL and
/// check-and-set keep the ledger under the jump.
#[test]
fn a_stepped_redis_clock_breaks_the_lease_and_a_slewed_one_keeps_it() {
    use leaselab_model::world::ClockFaults;
    let jump = |ttl_ticks: u64, jump_ms: u64| {
        move |c: &mut CheckConfig| {
            c.ttl_ticks = ttl_ticks;
            c.max_pause_ticks = Some(0);
            c.redis_clock = ClockFaults {
                jumps: 1,
                jump_ms,
                ..ClockFaults::default()
            };
        }
    };
    for safeguard in [LEASE, Safeguard::LeaseWatchdog] {
        let report = check(safeguard, jump(3, 4));
        expect(&report, MUTUAL_EXCLUSION, Violated, Some(5));
        expect(&report, LEDGER, Violated, Some(14));
        assert!(
            trace(&report, MUTUAL_EXCLUSION).contains("steps its clock forward by 4ms"),
            "{}",
            trace(&report, MUTUAL_EXCLUSION)
        );
    }
    // A jump shorter than what the watchdog keeps ahead of the lease is absorbed.
    let absorbed = check(Safeguard::LeaseWatchdog, |c| {
        jump(4, 3)(c);
        c.work_ticks = 2;
    });
    expect(&absorbed, LEDGER, Safe, None);
    expect(&absorbed, MUTUAL_EXCLUSION, Safe, None);
    let cas = check(FENCED_CAS, jump(3, 4));
    expect(&cas, MUTUAL_EXCLUSION, Violated, Some(5));
    expect(&cas, LEDGER, Safe, None);
    expect(&check(Safeguard::SetnxDel, jump(3, 4)), LEDGER, Safe, None);

    let slew = |rate_ppm: u32| {
        move |c: &mut CheckConfig| {
            c.ttl_ticks = 4;
            c.work_ticks = 3;
            c.max_pause_ticks = Some(0);
            c.redis_clock = ClockFaults {
                slews: 1,
                slew_ms: 4,
                slew_rate_ppm: rate_ppm,
                ..ClockFaults::default()
            };
        }
    };
    let ntp = check(LEASE, slew(500));
    expect(&ntp, LEDGER, Safe, None);
    expect(&ntp, MUTUAL_EXCLUSION, Safe, None);
    let fast = check(LEASE, slew(500_000));
    expect(&fast, MUTUAL_EXCLUSION, Violated, Some(10));
    expect(&fast, LEDGER, Violated, Some(20));
    assert!(
        trace(&fast, MUTUAL_EXCLUSION).contains("starts slewing its clock forward by 4ms"),
        "{}",
        trace(&fast, MUTUAL_EXCLUSION)
    );
}

/// A clock fault is refused where it means nothing or would claim more than was explored.
#[test]
fn redis_clock_faults_are_refused_where_they_mean_nothing() {
    use leaselab_model::world::ClockFaults;
    let refused = |safeguard: Safeguard, clock: ClockFaults, says: &str| {
        let mut config = CheckConfig::new(safeguard);
        config.redis_clock = clock;
        let error = config.validate().expect_err("refused").0;
        assert!(error.contains(says), "{error}");
    };
    let jump = ClockFaults {
        jumps: 1,
        jump_ms: 4,
        ..ClockFaults::default()
    };
    refused(Safeguard::PgDebit, jump, "keeps nothing in Redis");
    refused(
        Safeguard::Redlock {
            nodes: 3,
            cas: false,
        },
        jump,
        "--node-clock-jumps",
    );
    refused(
        LEASE,
        ClockFaults { jump_ms: 0, ..jump },
        "a jump of 0 changes nothing",
    );
    refused(LEASE, ClockFaults { jumps: 3, ..jump }, "at most 2");
    let slew = ClockFaults {
        slews: 1,
        slew_ms: 4,
        slew_rate_ppm: 500,
        ..ClockFaults::default()
    };
    refused(
        LEASE,
        ClockFaults { slews: 2, ..slew },
        "one offset at a time",
    );
    refused(
        LEASE,
        ClockFaults {
            slew_rate_ppm: 0,
            ..slew
        },
        "--slew-rate",
    );
    refused(
        LEASE,
        ClockFaults {
            slew_rate_ppm: 600_000,
            ..slew
        },
        "--slew-rate",
    );
    let mut fine = CheckConfig::new(LEASE);
    fine.redis_clock = slew;
    assert!(fine.validate().is_ok());
}

/// A partition cuts a caller off Redis for good at any moment: what it sends there is lost and
/// it waits for its timeout (past the horizon). A holder cut off before its release keeps the
/// lock in its own eyes after its lease ran out (two callers believe they hold it), but every
/// lock keeps the ledger: the cut-off caller's write had landed or never will. A write that
/// landed before the cut counts although its caller never finishes.
#[test]
fn a_partition_strands_the_holder_without_losing_an_update() {
    let partition = |c: &mut CheckConfig| {
        c.max_pause_ticks = Some(0);
        c.partitions = 1;
    };
    for safeguard in [LEASE, Safeguard::LeaseWatchdog, Safeguard::SetnxExpire] {
        let report = check(safeguard, partition);
        expect(&report, LEDGER, Safe, None);
        let steps = if safeguard == Safeguard::SetnxExpire {
            10
        } else {
            9
        };
        expect(&report, MUTUAL_EXCLUSION, Violated, Some(steps));
        assert!(
            trace(&report, MUTUAL_EXCLUSION).contains("is cut off from redis by a partition"),
            "{}",
            trace(&report, MUTUAL_EXCLUSION)
        );
    }
    for safeguard in [FENCED, FENCED_CAS, Safeguard::SetnxDel] {
        let report = check(safeguard, partition);
        expect(&report, LEDGER, Safe, None);
        expect(&report, MUTUAL_EXCLUSION, Safe, None);
    }
    let mut config = CheckConfig::new(Safeguard::PgDebit);
    config.partitions = 1;
    assert!(config
        .validate()
        .unwrap_err()
        .0
        .contains("sends nothing to Redis"));
    config = CheckConfig::new(LEASE);
    config.partitions = 3;
    assert!(config.validate().unwrap_err().0.contains("at most 2"));
}
