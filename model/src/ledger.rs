//! The ledger invariant: the final balance equals the initial balance minus the accepted
//! spends, and is never negative — the tutorial's `Check`, plus blame and counters.
//!
//! Transfers between two wallets ([`Ledger::check_transfers`]) keep the same numbers for the
//! two wallets together (the balance is their sum, and a transfer spends nothing from it, so
//! the expected sum is the initial one) and each wallet's own in [`Ledger::wallets`]: money is
//! conserved, and no wallet goes negative.

use serde::{Deserialize, Serialize};

use crate::safeguard::{CallerStats, Outcome};

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// OK or BROKEN (serialised as `"OK"` / `"BROKEN"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
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
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// The wallets of a transfer run, each with its balance before and after.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalletBalance {
    /// `wallets.id`.
    pub id: i64,
    /// The balance before the run.
    pub initial_balance: i64,
    /// The balance at the end.
    pub final_balance: i64,
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

/// The ledger check of one run: its verdict, numbers and blame. One schema for reports and
/// traces; a ledger read back is checked with [`Ledger::inconsistency`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ledger {
    /// OK or BROKEN.
    pub verdict: Verdict,
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
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unacknowledged: u32,
    /// Releases refused because the lock had expired or changed hands.
    pub stale_releases_refused: u32,
    /// Retries while the lock was busy.
    pub busy_retries: u32,
    /// Accepted spends computed from a stale read (the blame), in write order.
    pub stale_spends: Vec<StaleSpend>,
    /// Transactions PostgreSQL aborted with 40P01 `deadlock detected` that the callers rolled
    /// back and ran again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deadlock_retries: u32,
    /// Transactions PostgreSQL aborted with 40001 `could not serialize access` that the
    /// callers rolled back and ran again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub serialization_retries: u32,
    /// Transfers between wallets: each wallet's balances (the numbers above are their sums).
    /// Empty for spends from one wallet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wallets: Vec<WalletBalance>,
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
            deadlock_retries: 0,
            serialization_retries: 0,
            wallets: Vec::new(),
        };
        let mut accepted_spends: Vec<(u64, u32, Option<i64>, Option<i64>)> = Vec::new();
        for result in results {
            ledger.stale_releases_refused += result.stats.stale_releases_refused;
            ledger.busy_retries += result.stats.busy_retries;
            ledger.deadlock_retries += result.stats.deadlock_retries;
            ledger.serialization_retries += result.stats.serialization_retries;
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
        ledger.expected_balance = ledger.expected();
        ledger.verdict = ledger.judge();
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

    /// Judges a run of transfers between `wallets` (each `(id, initial, final)`; a missing
    /// final balance is `i64::MIN`): the balance is the wallets' sum, which transfers leave
    /// unchanged, and no wallet may end negative. The counters are as in [`Ledger::check`];
    /// no spend is blamed (a transfer's read is of two rows, not one balance).
    pub fn check_transfers(
        wallets: &[(i64, i64, i64)],
        amount: i64,
        results: &[CallerResult],
    ) -> Ledger {
        assert!(wallets.len() >= 2, "a transfer involves two wallets");
        let initial = wallets
            .iter()
            .try_fold(0i64, |sum, w| sum.checked_add(w.1))
            .expect("initial balances add up");
        let final_sum = wallets
            .iter()
            .try_fold(0i64, |sum, w| sum.checked_add(w.2))
            .unwrap_or(i64::MIN);
        let mut ledger = Ledger::check(initial, amount, results, final_sum);
        ledger.stale_spends.clear();
        ledger.wallets = wallets
            .iter()
            .map(|&(id, initial_balance, final_balance)| WalletBalance {
                id,
                initial_balance,
                final_balance,
            })
            .collect();
        ledger.expected_balance = ledger.expected();
        ledger.verdict = ledger.judge();
        ledger
    }

    /// `initial − amount × (accepted + unacknowledged)`, from the numbers; for transfers the
    /// initial sum.
    pub fn expected(&self) -> i64 {
        if !self.wallets.is_empty() {
            return self.initial_balance;
        }
        self.initial_balance
            - self.amount * i64::from(self.accepted.saturating_add(self.unacknowledged))
    }

    /// The verdict the numbers give: BROKEN when the final balance is not the expected one,
    /// or is negative, or (transfers) a wallet ends negative.
    pub fn judge(&self) -> Verdict {
        let negative_wallet = self.wallets.iter().any(|w| w.final_balance < 0);
        if self.final_balance != self.expected_balance || self.final_balance < 0 || negative_wallet
        {
            Verdict::Broken
        } else {
            Verdict::Ok
        }
    }

    /// A wallet that ended negative, if any.
    pub fn negative_wallet(&self) -> Option<&WalletBalance> {
        self.wallets.iter().find(|w| w.final_balance < 0)
    }

    /// For a ledger read back from a file: the first field that does not follow from the
    /// others, and why; none when they agree.
    pub fn inconsistency(&self) -> Option<(&'static str, String)> {
        if !self.wallets.is_empty() {
            let initial: Option<i64> = self
                .wallets
                .iter()
                .try_fold(0i64, |sum, w| sum.checked_add(w.initial_balance));
            if initial != Some(self.initial_balance) {
                return Some((
                    "initial_balance",
                    format!(
                        "{} is not the sum of the wallets' initial balances",
                        self.initial_balance
                    ),
                ));
            }
            let final_sum: Option<i64> = self
                .wallets
                .iter()
                .try_fold(0i64, |sum, w| sum.checked_add(w.final_balance));
            if final_sum.is_some_and(|sum| sum != self.final_balance) {
                return Some((
                    "final_balance",
                    format!(
                        "{} is not the sum of the wallets' final balances",
                        self.final_balance
                    ),
                ));
            }
        }
        if self.expected_balance != self.expected() {
            return Some((
                "expected_balance",
                format!(
                    "{} does not follow from the other numbers; expected initial_balance - amount x (accepted + unacknowledged) = {}",
                    self.expected_balance,
                    self.expected()
                ),
            ));
        }
        if self.verdict != self.judge() {
            return Some((
                "verdict",
                format!(
                    "\"{}\" does not match the numbers (final_balance {}, expected_balance {}); expected \"{}\"",
                    self.verdict.as_str(),
                    self.final_balance,
                    self.expected_balance,
                    self.judge().as_str()
                ),
            ));
        }
        None
    }

    /// The tutorial's line: `accepted=10 balance=0 expected=0 OK`. Transfers:
    /// `transfers=7 total=200 expected=200 (42: 110, 43: 90) deadlocks=3 OK`.
    pub fn line(&self) -> String {
        self.line_with(self.verdict.as_str())
    }

    /// [`Ledger::line`] with another last word (a run's `INCONCLUSIVE`).
    pub fn line_with(&self, verdict: &str) -> String {
        if self.wallets.is_empty() {
            return format!(
                "accepted={} balance={} expected={} {verdict}",
                self.accepted,
                balance_text(self.final_balance),
                self.expected_balance,
            );
        }
        let wallets: Vec<String> = self
            .wallets
            .iter()
            .map(|w| format!("{}: {}", w.id, balance_text(w.final_balance)))
            .collect();
        let mut line = format!(
            "transfers={} total={} expected={} ({})",
            self.accepted,
            self.final_balance,
            self.expected_balance,
            wallets.join(", ")
        );
        if self.deadlock_retries > 0 {
            line.push_str(&format!(" deadlocks={}", self.deadlock_retries));
        }
        line.push(' ');
        line.push_str(verdict);
        line
    }
}

/// A final balance for people: `missing` for the sentinel of a balance that was gone or
/// unreadable at the end (`i64::MIN`), the number otherwise.
pub fn balance_text(balance: i64) -> String {
    if balance == i64::MIN {
        "missing".to_string()
    } else {
        balance.to_string()
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

    fn transfer(caller: u32, deadlocks: u32) -> CallerResult {
        CallerResult {
            caller,
            outcome: Some(Outcome::Accepted {
                read_balance: Some(100),
                fence: None,
                write_acked_ms: 1,
            }),
            stats: CallerStats {
                deadlock_retries: deadlocks,
                ..CallerStats::default()
            },
            write_landed: true,
        }
    }

    #[test]
    fn transfers_conserve_the_sum_and_count_deadlocks() {
        let results = [transfer(1, 0), transfer(2, 1)];
        let ledger = Ledger::check_transfers(&[(42, 100, 100), (43, 100, 100)], 10, &results);
        assert_eq!(
            ledger.line(),
            "transfers=2 total=200 expected=200 (42: 100, 43: 100) deadlocks=1 OK"
        );
        assert_eq!(ledger.inconsistency(), None);
        let lost = Ledger::check_transfers(&[(42, 100, 90), (43, 100, 100)], 10, &results);
        assert_eq!(lost.verdict, Verdict::Broken);
        let negative = Ledger::check_transfers(&[(42, 100, -10), (43, 100, 210)], 10, &results);
        assert_eq!(negative.final_balance, 200);
        assert_eq!(negative.verdict, Verdict::Broken);
        assert_eq!(negative.negative_wallet().map(|w| w.id), Some(42));
    }

    #[test]
    fn a_transfer_ledger_read_back_names_a_sum_that_does_not_add_up() {
        let mut ledger = Ledger::check_transfers(&[(42, 100, 100), (43, 100, 100)], 10, &[]);
        ledger.final_balance = 190;
        assert_eq!(
            ledger.inconsistency().map(|(field, _)| field),
            Some("final_balance")
        );
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
