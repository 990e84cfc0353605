//! An in-process driver: callers and stand-ins on one discrete clock.
//!
//! [`World`] is the state the model checker explores and the random-interleaving property
//! tests drive. Requests are answered at once (atomically) by the stand-ins; what makes runs
//! differ is the schedule: which caller steps next, when the clock advances, when a replica
//! catches up, when a failover strikes. A ready caller that is not scheduled while time
//! passes is a paused caller; [`WorldConfig::max_pause_ms`] bounds how long that may last
//! (`None`: unbounded, the asynchronous model).

use crate::ledger::{CallerResult, Ledger};
use crate::postgres::{Exec, Postgres, SessionId, Wallet};
use crate::redis::command::Command;
use crate::redis::replication::Effect;
use crate::redis::{Redis, Reply};
use crate::safeguard::{
    BalanceIn, Caller, Input, Machine, Outcome, ParamError, RedisRequest, SqlRequest, Step,
};
use crate::scenario::Scenario;

/// Something that can happen next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Caller `n` (0-based) takes its next step.
    Step(u8),
    /// The clock advances one millisecond.
    Tick,
    /// The replica applies the oldest effect it has not applied yet.
    Replicate,
    /// The primary dies; the replica is promoted, losing what had not replicated.
    Failover,
}

/// Where a caller is, between steps.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlotState {
    /// Starts at this time.
    NotStarted {
        /// Start time.
        start_ms: u64,
    },
    /// Ready to take this input.
    Ready(Input),
    /// Asleep until this time.
    Sleeping {
        /// Wake time.
        wake_ms: u64,
    },
    /// Waiting for a row lock held by `by`; the statement is re-executed when it is free.
    Blocked {
        /// The waiting statement.
        request: SqlRequest,
        /// The session holding the lock.
        by: SessionId,
    },
    /// Finished.
    Done,
}

/// One caller with its connection state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot {
    /// The safeguard machine.
    pub machine: Caller,
    /// Where it is.
    pub state: SlotState,
    /// Its PostgreSQL session.
    pub session: SessionId,
    /// Since when it has been ready (for the pause bound).
    pub ready_since_ms: u64,
    /// How it ended.
    pub outcome: Option<Outcome>,
}

/// A Redis replica with the effects it has not applied yet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replica {
    /// The replica.
    pub redis: Redis,
    /// Effects in flight from the primary, oldest first.
    pub backlog: Vec<Effect>,
}

/// Bounds and faults of a [`World`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorldConfig {
    /// How long a ready caller may go unscheduled while time passes (`None`: unbounded).
    pub max_pause_ms: Option<u64>,
    /// Time stops here.
    pub horizon_ms: u64,
    /// Keep a replica and allow this many failovers.
    pub failovers: u32,
}

/// Callers, stand-ins and a clock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World {
    /// The clock, shared by everyone.
    pub now_ms: u64,
    /// The Redis primary.
    pub redis: Redis,
    /// The replica, when failovers are allowed.
    pub replica: Option<Replica>,
    /// PostgreSQL.
    pub postgres: Postgres,
    /// The callers.
    pub slots: Vec<Slot>,
    /// Failovers still allowed.
    pub failovers_left: u32,
    /// Bounds.
    pub config: WorldConfig,
    initial_balance: i64,
    amount: i64,
    balance_in: BalanceIn,
    balance_key: Vec<u8>,
    wallet_id: i64,
}

impl World {
    /// A world for `scenario`, one token per caller.
    pub fn new(
        scenario: &Scenario,
        tokens: &[u128],
        config: WorldConfig,
    ) -> Result<World, ParamError> {
        scenario.validate()?;
        assert_eq!(
            tokens.len(),
            scenario.callers as usize,
            "one token per caller"
        );
        assert!(
            scenario.callers <= u32::from(u8::MAX),
            "the world steps at most 255 callers"
        );
        let mut redis = Redis::new();
        let mut postgres = Postgres::new();
        let keys = &scenario.params.keys;
        match scenario.balance_in() {
            BalanceIn::Redis => redis.seed(
                &keys.balance,
                scenario.initial_balance.to_string().as_bytes(),
            ),
            BalanceIn::Postgres => postgres.seed_wallet(
                scenario.params.wallet_id,
                Wallet {
                    balance: scenario.initial_balance,
                    fence: 0,
                },
            ),
        }
        if scenario.initial_fence_counter != 0 {
            redis.seed(
                &keys.fence,
                scenario.initial_fence_counter.to_string().as_bytes(),
            );
        }
        redis.drain_effects();
        let mut slots = Vec::with_capacity(tokens.len());
        for (index, token) in tokens.iter().enumerate() {
            let machine = scenario.safeguard.build(&scenario.params, *token)?;
            let session = postgres.connect();
            let start_ms = scenario.start_offset_ms(index);
            let state = if start_ms == 0 {
                SlotState::Ready(Input::Start)
            } else {
                SlotState::NotStarted { start_ms }
            };
            slots.push(Slot {
                machine,
                state,
                session,
                ready_since_ms: 0,
                outcome: None,
            });
        }
        let replica = (config.failovers > 0).then(|| {
            // A replica that has completed its initial sync: it holds the seeded keys.
            let mut copy = Redis::replica();
            if scenario.balance_in() == BalanceIn::Redis {
                copy.apply_effect(&Effect::Set {
                    key: keys.balance.clone(),
                    value: scenario.initial_balance.to_string().into_bytes(),
                    expire_at_ms: None,
                });
            }
            if scenario.initial_fence_counter != 0 {
                copy.apply_effect(&Effect::Set {
                    key: keys.fence.clone(),
                    value: scenario.initial_fence_counter.to_string().into_bytes(),
                    expire_at_ms: None,
                });
            }
            Replica {
                redis: copy,
                backlog: Vec::new(),
            }
        });
        Ok(World {
            now_ms: 0,
            redis,
            replica,
            postgres,
            slots,
            failovers_left: config.failovers,
            config,
            initial_balance: scenario.initial_balance,
            amount: scenario.params.amount,
            balance_in: scenario.balance_in(),
            balance_key: keys.balance.clone(),
            wallet_id: scenario.params.wallet_id,
        })
    }

    /// True when every caller has finished.
    pub fn all_done(&self) -> bool {
        self.slots.iter().all(|slot| slot.state == SlotState::Done)
    }

    /// The actions enabled now, in a fixed order.
    pub fn actions(&self, actions: &mut Vec<Action>) {
        for (index, slot) in self.slots.iter().enumerate() {
            let enabled = match &slot.state {
                SlotState::Ready(_) => true,
                SlotState::Blocked { by, .. } => !self.postgres.in_transaction(*by),
                _ => false,
            };
            if enabled {
                actions.push(Action::Step(index as u8));
            }
        }
        if self.tick_enabled() {
            actions.push(Action::Tick);
        }
        if let Some(replica) = &self.replica {
            if !replica.backlog.is_empty() {
                actions.push(Action::Replicate);
            }
            if self.failovers_left > 0 && !self.all_done() {
                actions.push(Action::Failover);
            }
        }
    }

    fn tick_enabled(&self) -> bool {
        if self.all_done() || self.now_ms >= self.config.horizon_ms {
            return false;
        }
        match self.config.max_pause_ms {
            None => true,
            Some(max_pause_ms) => self.slots.iter().all(|slot| match slot.state {
                SlotState::Ready(_) => self.now_ms - slot.ready_since_ms < max_pause_ms,
                _ => true,
            }),
        }
    }

    /// Performs an enabled action.
    pub fn apply(&mut self, action: Action) {
        self.apply_logged(action, None);
    }

    /// Performs an enabled action, appending a line per thing that happened to `log`.
    pub fn apply_logged(&mut self, action: Action, mut log: Option<&mut Vec<String>>) {
        match action {
            Action::Step(index) => self.step(usize::from(index), &mut log),
            Action::Tick => self.tick(&mut log),
            Action::Replicate => {
                let replica = self.replica.as_mut().expect("replicate needs a replica");
                let effect = replica.backlog.remove(0);
                replica.redis.apply_effect(&effect);
                note(&mut log, || format!("replica applies {effect:?}"));
            }
            Action::Failover => {
                let replica = self.replica.take().expect("failover needs a replica");
                let lost = replica.backlog.len();
                self.redis = replica.redis;
                self.redis.promote();
                // The old primary is gone; no new replica joins within a run.
                self.replica = None;
                self.failovers_left -= 1;
                note(&mut log, || {
                    format!("failover: the replica is promoted; {lost} unreplicated change(s) lost")
                });
            }
        }
    }

    fn tick(&mut self, log: &mut Option<&mut Vec<String>>) {
        self.now_ms += 1;
        let now_ms = self.now_ms;
        for (index, slot) in self.slots.iter_mut().enumerate() {
            let wake = match slot.state {
                SlotState::Sleeping { wake_ms } => wake_ms <= now_ms,
                SlotState::NotStarted { start_ms } => start_ms <= now_ms,
                _ => false,
            };
            if wake {
                let input = if matches!(slot.state, SlotState::NotStarted { .. }) {
                    Input::Start
                } else {
                    Input::Woke
                };
                note(log, || format!("t={now_ms} caller {} wakes", index + 1));
                slot.state = SlotState::Ready(input);
                slot.ready_since_ms = now_ms;
            }
        }
    }

    fn step(&mut self, index: usize, log: &mut Option<&mut Vec<String>>) {
        let now_ms = self.now_ms;
        let state = std::mem::replace(&mut self.slots[index].state, SlotState::Done);
        let step = match state {
            SlotState::Ready(input) => self.slots[index].machine.next(now_ms, input),
            SlotState::Blocked { request, .. } => {
                self.run_sql(index, request, log);
                return;
            }
            other => panic!("caller {index} stepped while {other:?}"),
        };
        match step {
            Step::Redis { request, .. } => {
                let reply = self.run_redis(&request);
                note(log, || {
                    format!(
                        "t={now_ms} caller {}: {} -> {}",
                        index + 1,
                        describe_request(&request),
                        describe_reply(&reply)
                    )
                });
                self.ready(index, Input::Redis(reply));
            }
            Step::Sql(request) => self.run_sql(index, request, log),
            Step::Sleep {
                min_ms,
                deadline_ms,
                ..
            } => {
                let mut wake_ms = now_ms + min_ms;
                if let Some(deadline_ms) = deadline_ms {
                    wake_ms = wake_ms.min(deadline_ms.max(now_ms));
                }
                if wake_ms <= now_ms {
                    self.ready(index, Input::Woke);
                } else {
                    note(log, || {
                        format!("t={now_ms} caller {} sleeps until {wake_ms}", index + 1)
                    });
                    self.slots[index].state = SlotState::Sleeping { wake_ms };
                }
            }
            Step::Reached(point) => {
                note(log, || {
                    format!("t={now_ms} caller {} at {}", index + 1, point.name())
                });
                self.ready(index, Input::Resumed);
            }
            Step::Done(outcome) => {
                note(log, || {
                    format!("t={now_ms} caller {} done: {outcome:?}", index + 1)
                });
                let session = self.slots[index].session;
                self.postgres.disconnect(session);
                self.slots[index].outcome = Some(outcome);
            }
        }
    }

    fn ready(&mut self, index: usize, input: Input) {
        let slot = &mut self.slots[index];
        slot.state = SlotState::Ready(input);
        slot.ready_since_ms = self.now_ms;
    }

    fn run_sql(&mut self, index: usize, request: SqlRequest, log: &mut Option<&mut Vec<String>>) {
        let session = self.slots[index].session;
        let now_ms = self.now_ms;
        match self
            .postgres
            .execute(session, &request.statement, &request.params)
        {
            Exec::Done(result) => {
                note(log, || {
                    let answer = match &result {
                        Ok(ok) => ok.tag.clone(),
                        Err(error) => format!("ERROR {} {}", error.code, error.message),
                    };
                    format!(
                        "t={now_ms} caller {}: {} {:?} -> {answer}",
                        index + 1,
                        request.statement.sql(),
                        request.params
                    )
                });
                self.ready(index, Input::Sql(result));
            }
            Exec::Blocked { by } => {
                note(log, || {
                    format!(
                        "t={now_ms} caller {}: {} waits for a row lock",
                        index + 1,
                        request.statement.sql()
                    )
                });
                self.slots[index].state = SlotState::Blocked { request, by };
            }
        }
    }

    /// Runs a request as a client library does (scripts: `EVALSHA`, then `EVAL` on
    /// `NOSCRIPT`), and queues the primary's effects for the replica.
    fn run_redis(&mut self, request: &RedisRequest) -> Reply {
        let now_ms = self.now_ms;
        let reply = match request {
            RedisRequest::Command(command) => self.redis.apply(command, now_ms),
            RedisRequest::Script { script, keys, args } => {
                let evalsha = Command::EvalSha {
                    sha1: script.sha1_hex(),
                    keys: keys.clone(),
                    args: args.clone(),
                };
                match self.redis.apply(&evalsha, now_ms) {
                    Reply::Error(text) if text.starts_with("NOSCRIPT") => {
                        let eval = Command::Eval {
                            script: script.source().as_bytes().to_vec(),
                            keys: keys.clone(),
                            args: args.clone(),
                        };
                        self.redis.apply(&eval, now_ms)
                    }
                    other => other,
                }
            }
        };
        let effects = self.redis.drain_effects();
        if let Some(replica) = &mut self.replica {
            replica.backlog.extend(effects);
        }
        reply
    }

    /// How many callers believe they hold the lock right now.
    pub fn believed_holders(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.state != SlotState::Done && slot.machine.believes_it_holds())
            .count()
    }

    /// The committed balance now (none when it is missing or unreadable).
    pub fn balance(&self) -> Option<i64> {
        match self.balance_in {
            BalanceIn::Redis => self
                .redis
                .peek(&self.balance_key, self.now_ms)
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .and_then(|text| text.parse().ok()),
            BalanceIn::Postgres => self
                .postgres
                .wallet(self.wallet_id)
                .map(|wallet| wallet.balance),
        }
    }

    /// Callers' results so far.
    pub fn results(&self) -> Vec<CallerResult> {
        self.slots
            .iter()
            .enumerate()
            .map(|(index, slot)| CallerResult {
                caller: index as u32 + 1,
                outcome: slot.outcome.clone(),
                stats: slot.machine.stats(),
            })
            .collect()
    }

    /// The ledger check of the run as it stands.
    pub fn ledger(&self) -> Ledger {
        let balance = self.balance().unwrap_or(i64::MIN);
        Ledger::check(self.initial_balance, self.amount, &self.results(), balance)
    }
}

fn note(log: &mut Option<&mut Vec<String>>, line: impl FnOnce() -> String) {
    if let Some(log) = log.as_deref_mut() {
        log.push(line());
    }
}

/// A request as a person reads it, e.g. `SET lock:{wallet:42} 00..1f NX PX 100` or
/// `EVALSHA fenced-acquire lock:{wallet:42} fence:{wallet:42} ...`.
pub fn describe_request(request: &RedisRequest) -> String {
    let words = |parts: &[Vec<u8>]| {
        parts
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    match request {
        RedisRequest::Command(command) => words(&command.to_argv()),
        RedisRequest::Script { script, keys, args } => {
            format!("EVALSHA {} {} {}", script.name(), words(keys), words(args))
        }
    }
}

/// A reply as redis-cli shows it.
pub fn describe_reply(reply: &Reply) -> String {
    match reply {
        Reply::Status(text) => text.clone(),
        Reply::Error(text) => format!("(error) {text}"),
        Reply::Integer(n) => format!("(integer) {n}"),
        Reply::Bulk(bytes) => format!("\"{}\"", String::from_utf8_lossy(bytes)),
        Reply::Nil => "(nil)".to_string(),
        Reply::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(describe_reply)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
