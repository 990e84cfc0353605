//! The ledger invariant: the final balance equals the initial balance minus the accepted
//! spends, and is never negative — the tutorial's `Check`, plus blame and counters.

use serde::Serialize;

use crate::safeguard::{CallerStats, Outcome};

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// OK or BROKEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The balance matches the accepted spends.
    Ok,
    /// It does not, or it is negative.
    Broken,
}

impl Verdict {
    /// `OK` or `BROKEN`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Broken => "BROKEN",
        }
    }
}

/// An accepted spend computed from a balance that was no longer current when it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct StaleSpend {
    /// The caller (1-based).
    pub caller: u32,
    /// What it read.
    pub read_balance: i64,
    /// What the balance should have been at its write, by the accepted spends before it.
    pub current_balance: i64,
    /// Its fencing token, if any.
    pub fence: Option<i64>,
}

/// How one caller ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallerResult {
    /// The caller (1-based).
    pub caller: u32,
    /// How it ended (none: it never finished).
    pub outcome: Option<Outcome>,
    /// Its counters.
    pub stats: CallerStats,
    /// A write of its balance landed on the server, whatever the caller was told (known only
    /// where the driver sees the servers' side and replies can be lost: the World with reply
    /// faults; false elsewhere).
    pub write_landed: bool,
}

/// The ledger check of one run. Serialises as its numbers and blame; the verdict is left to
/// the report around it, which states it once with the tutorial's line.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Ledger {
    /// Starting balance.
    pub initial_balance: i64,
    /// Each spend's amount.
    pub amount: i64,
    /// Spends the callers were told succeeded.
    pub accepted: u32,
    /// The balance at the end.
    pub final_balance: i64,
    /// `initial − amount × accepted`.
    pub expected_balance: i64,
    /// OK or BROKEN.
    #[serde(skip)]
    pub verdict: Verdict,
    /// Writes the storage refused.
    pub rejected: u32,
    /// Callers that gave up waiting for the lock.
    pub gave_up: u32,
    /// Callers that found too little money.
    pub insufficient: u32,
    /// Callers whose watchdog saw the lock lost before the write.
    pub lost_lock: u32,
    /// Callers that failed with an error, or never finished.
    pub failed: u32,
    /// Callers whose write landed although they were not told it was accepted (its reply was
    /// lost): their spend happened, so it counts in the expected balance.
    #[serde(skip_serializing_if = "is_zero")]
    pub unacknowledged: u32,
    /// Releases refused because the lock had expired or changed hands.
    pub stale_releases_refused: u32,
    /// Retries while the lock was busy.
    pub busy_retries: u32,
    /// Accepted spends computed from a stale read (the blame), in write order.
    pub stale_spends: Vec<StaleSpend>,
}

impl Ledger {
    /// Judges a run from its callers' results and the final balance.
    ///
    /// The expected balance counts every spend that happened: the accepted ones and the
    /// writes that landed although their reply was lost ([`Ledger::unacknowledged`]). Counting
    /// only accepted spends would call a lost reply a broken ledger, and — worse — call a run
    /// OK where a stale write overwrote a landed one (the two errors cancel out).
    pub fn check(
        initial_balance: i64,
        amount: i64,
        results: &[CallerResult],
        final_balance: i64,
    ) -> Ledger {
        let mut ledger = Ledger {
            initial_balance,
            amount,
            accepted: 0,
            final_balance,
            expected_balance: initial_balance,
            verdict: Verdict::Ok,
            rejected: 0,
            gave_up: 0,
            insufficient: 0,
            lost_lock: 0,
            failed: 0,
            unacknowledged: 0,
            stale_releases_refused: 0,
            busy_retries: 0,
            stale_spends: Vec::new(),
        };
        let mut accepted_spends: Vec<(u64, u32, Option<i64>, Option<i64>)> = Vec::new();
        for result in results {
            ledger.stale_releases_refused += result.stats.stale_releases_refused;
            ledger.busy_retries += result.stats.busy_retries;
            match &result.outcome {
                Some(Outcome::Accepted {
                    read_balance,
                    fence,
                    write_acked_ms,
                }) => {
                    ledger.accepted += 1;
                    accepted_spends.push((*write_acked_ms, result.caller, *read_balance, *fence));
                }
                Some(Outcome::WriteRejected { .. }) => ledger.rejected += 1,
                Some(Outcome::GaveUp) => ledger.gave_up += 1,
                Some(Outcome::InsufficientFunds { .. }) => ledger.insufficient += 1,
                Some(Outcome::LostLock) => ledger.lost_lock += 1,
                Some(Outcome::Failed(_)) | None => ledger.failed += 1,
            }
            if result.write_landed && !matches!(result.outcome, Some(Outcome::Accepted { .. })) {
                ledger.unacknowledged += 1;
            }
        }
        ledger.expected_balance =
            initial_balance - amount * i64::from(ledger.accepted + ledger.unacknowledged);
        if final_balance != ledger.expected_balance || final_balance < 0 {
            ledger.verdict = Verdict::Broken;
        }
        accepted_spends.sort();
        let mut current_balance = initial_balance;
        for (_, caller, read_balance, fence) in accepted_spends {
            if let Some(read_balance) = read_balance {
                if read_balance != current_balance {
                    ledger.stale_spends.push(StaleSpend {
                        caller,
                        read_balance,
                        current_balance,
                        fence,
                    });
                }
            }
            current_balance -= amount;
        }
        ledger
    }

    /// The tutorial's line: `accepted=10 balance=0 expected=0 OK`.
    pub fn line(&self) -> String {
        format!(
            "accepted={} balance={} expected={} {}",
            self.accepted,
            self.final_balance,
            self.expected_balance,
            self.verdict.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(caller: u32, read: i64, at_ms: u64) -> CallerResult {
        CallerResult {
            caller,
            outcome: Some(Outcome::Accepted {
                read_balance: Some(read),
                fence: None,
                write_acked_ms: at_ms,
            }),
            stats: CallerStats::default(),
            write_landed: true,
        }
    }

    #[test]
    fn two_spends_from_the_same_read_break_the_ledger_and_blame_the_later() {
        let results = [accepted(1, 100, 5), accepted(2, 100, 7)];
        let ledger = Ledger::check(100, 10, &results, 90);
        assert_eq!(ledger.line(), "accepted=2 balance=90 expected=80 BROKEN");
        assert_eq!(ledger.stale_spends.len(), 1);
        assert_eq!(ledger.stale_spends[0].caller, 2);
        assert_eq!(ledger.stale_spends[0].current_balance, 90);
    }

    #[test]
    fn serial_spends_are_ok() {
        let results = [accepted(2, 90, 9), accepted(1, 100, 5)];
        let ledger = Ledger::check(100, 10, &results, 80);
        assert_eq!(ledger.verdict, Verdict::Ok);
        assert!(ledger.stale_spends.is_empty());
    }

    #[test]
    fn negative_balance_is_broken_even_when_it_matches() {
        let results: Vec<CallerResult> = (1..=11)
            .map(|i| accepted(i, 110 - 10 * i64::from(i), u64::from(i)))
            .collect();
        let ledger = Ledger::check(100, 10, &results, -10);
        assert_eq!(ledger.expected_balance, -10);
        assert_eq!(ledger.verdict, Verdict::Broken);
    }

    #[test]
    fn unfinished_callers_count_as_failed() {
        let results = [CallerResult {
            caller: 1,
            outcome: None,
            stats: CallerStats::default(),
            write_landed: false,
        }];
        assert_eq!(Ledger::check(100, 10, &results, 100).failed, 1);
    }

    fn landed_unanswered(caller: u32, read: i64) -> CallerResult {
        CallerResult {
            caller,
            outcome: Some(Outcome::Failed(format!(
                "write: Redis did not answer in time (read {read})"
            ))),
            stats: CallerStats::default(),
            write_landed: true,
        }
    }

    #[test]
    fn a_landed_write_whose_reply_was_lost_is_a_spend() {
        // It wrote 90 and was told nothing: the money moved, the ledger is right.
        let ledger = Ledger::check(100, 10, &[landed_unanswered(1, 100)], 90);
        assert_eq!(ledger.unacknowledged, 1);
        assert_eq!(ledger.failed, 1);
        assert_eq!(ledger.line(), "accepted=0 balance=90 expected=90 OK");
    }

    #[test]
    fn a_stale_write_over_a_landed_one_is_broken_though_it_matches_the_accepted_count() {
        // Caller 1's write landed (reply lost); caller 2 read before it and overwrote it.
        // Counting accepted spends only, 100 - 10 = 90 would look OK.
        let results = [landed_unanswered(1, 100), accepted(2, 100, 7)];
        let ledger = Ledger::check(100, 10, &results, 90);
        assert_eq!(ledger.line(), "accepted=1 balance=90 expected=80 BROKEN");
    }
}
