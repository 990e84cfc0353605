//! What one exhaustive check is about: the safeguard, the callers, the timing assumptions
//! and the bounds.

use crate::postgres::WriteGuard;
use crate::safeguard::{ParamError, Safeguard};
use crate::scenario::Scenario;
use crate::world::WorldConfig;

/// The fence counter's starting value, as in the tutorial: tokens are 33, 34, ...
pub const INITIAL_FENCE_COUNTER: i64 = 32;

/// The parameters of a check. Times are in ticks of the model's clock; 1 tick = 1 ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CheckConfig {
    /// The safeguard every caller runs.
    pub safeguard: Safeguard,
    /// How many callers.
    pub callers: u32,
    /// The balance before the run.
    pub initial_balance: i64,
    /// How much each caller spends.
    pub amount: i64,
    /// The lease.
    pub ttl_ms: u64,
    /// The work between read and write.
    pub work_ms: u64,
    /// How long, in all, a caller may be stopped while time passes (none: unbounded).
    pub max_pause_ms: Option<u64>,
    /// How many Redis failovers may strike (each loses what had not replicated).
    pub failovers: u32,
    /// Time stops here (none: [`CheckConfig::default_horizon_ms`]).
    pub horizon_ms: Option<u64>,
    /// Treat worlds that differ only by which caller is which as one state.
    pub symmetry: bool,
}

impl CheckConfig {
    /// Two callers spending 10 from 20, a 3-tick lease, 1 tick of work, unbounded pauses,
    /// no failovers, symmetry reduced.
    pub fn new(safeguard: Safeguard) -> CheckConfig {
        CheckConfig {
            safeguard,
            callers: 2,
            initial_balance: 20,
            amount: 10,
            ttl_ms: 3,
            work_ms: 1,
            max_pause_ms: None,
            failovers: 0,
            horizon_ms: None,
            symmetry: true,
        }
    }

    /// Long enough for a holder to work, have its lease expire (`TTL + 1` ticks after the
    /// acquire or the last refresh), and for another caller to take the lock, work and
    /// finish: `2 × work + 2 × TTL + 4`.
    pub fn default_horizon_ms(&self) -> u64 {
        2 * self.work_ms + 2 * self.ttl_ms + 4
    }

    /// The horizon in force.
    pub fn horizon(&self) -> u64 {
        self.horizon_ms.unwrap_or_else(|| self.default_horizon_ms())
    }

    /// The scenario the check runs: every caller starts at 0 (and may arrive later), the
    /// fence counter hands out 33 first.
    pub fn scenario(&self) -> Scenario {
        let mut scenario = Scenario::new("check", self.safeguard);
        scenario.callers = self.callers;
        scenario.initial_balance = self.initial_balance;
        scenario.initial_fence_counter = INITIAL_FENCE_COUNTER;
        scenario.params.amount = self.amount;
        scenario.params.ttl_ms = self.ttl_ms;
        scenario.params.work_ms = self.work_ms;
        scenario
    }

    /// The world's bounds: callers may arrive at any time before the horizon.
    pub fn world_config(&self) -> WorldConfig {
        WorldConfig {
            max_pause_ms: self.max_pause_ms,
            horizon_ms: self.horizon(),
            failovers: self.failovers,
            arrival_window_ms: self.horizon(),
        }
    }

    /// The callers' tokens: 1, 2, 3, ... as 32 hex digits.
    pub fn tokens(&self) -> Vec<u128> {
        (1..=u128::from(self.callers)).collect()
    }

    /// True when the safeguard can refuse a write (a fenced `UPDATE`).
    pub fn can_reject(&self) -> bool {
        matches!(
            self.safeguard,
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelow | WriteGuard::FenceBelowAndEqual
            }
        )
    }

    /// Checks the parameters; the error says which one, what is wrong and how to fix it.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.callers == 0 {
            return Err(ParamError(
                "--callers 0: a check needs at least 1 caller; use --callers 2".into(),
            ));
        }
        if self.callers > 8 {
            return Err(ParamError(format!(
                "--callers {}: an exhaustive check is limited to 8 callers (the state space \
                 grows exponentially); use 2 or 3",
                self.callers
            )));
        }
        if self.safeguard.uses_lock() && self.ttl_ms == 0 {
            return Err(ParamError(
                "--ttl 0: TTL must be at least 1ms (1 tick); use --ttl 3".into(),
            ));
        }
        if self.amount <= 0 {
            return Err(ParamError(format!(
                "--amount {}: the amount must be positive",
                self.amount
            )));
        }
        if self.initial_balance < 0 {
            return Err(ParamError(format!(
                "--balance {}: the initial balance cannot be negative",
                self.initial_balance
            )));
        }
        let horizon = self.horizon();
        if horizon > 10_000 {
            return Err(ParamError(format!(
                "--horizon {horizon}: at most 10000 ticks; exhaustive checks need small bounds"
            )));
        }
        self.scenario().validate()
    }

    /// The bound this check is exhaustive to, in words.
    pub fn bound_text(&self) -> String {
        let pause = match self.max_pause_ms {
            None => "unbounded pauses".to_string(),
            Some(p) => format!("pauses up to {p} ticks per caller"),
        };
        let failovers = match self.failovers {
            0 => String::new(),
            1 => ", 1 failover".to_string(),
            n => format!(", {n} failovers"),
        };
        let symmetry = if self.symmetry {
            ", callers up to symmetry"
        } else {
            ""
        };
        format!(
            "{} callers, horizon {} ticks, {pause}{failovers}{symmetry}",
            self.callers,
            self.horizon()
        )
    }
}
