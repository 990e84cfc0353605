//! An in-process driver: callers and stand-ins on one discrete clock.
//!
//! [`World`] is the state the model checker explores and the random-interleaving property
//! tests drive. Requests are answered at once (atomically) by the stand-ins; what makes runs
//! differ is the schedule: which caller steps next, when the clock advances, when a replica
//! catches up, when a failover strikes. A ready caller that is not scheduled while time
//! passes is a paused caller; [`WorldConfig::max_pause_ms`] bounds how long that may last in
//! all, per caller (`None`: unbounded, the asynchronous model).
//!
//! Some waiting is not a pause: a caller may start at any time within
//! [`WorldConfig::arrival_window_ms`], and a random sleep (a retry backoff of 5–14 ms) may end
//! at any time in its range. Both show as [`Slot::slack_ms`].
//!
//! A caller that reaches a named point ([`Step::Reached`]) goes on in the same step: pausing
//! there is the same as pausing just before the step that reached it, because reaching a
//! point never depends on the clock. This keeps the state space small without losing any
//! behaviour.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::ledger::{CallerResult, Ledger};
use crate::postgres::{Exec, PgError, Postgres, QueryResult, SessionId};
use crate::redis::command::Command;
use crate::redis::replication::Effect;
use crate::redis::{Redis, Reply};
use crate::safeguard::lock::token_text;
use crate::safeguard::{
    BalanceIn, Caller, Input, Machine, Outcome, ParamError, Point, Reading, RedisRequest,
    SqlRequest, Step,
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
    /// Asleep until this time (the earliest wake-up; see [`Slot::slack_ms`]).
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
    /// How long it has been paused so far, in all (counted only when pauses are bounded).
    pub paused_ms: u64,
    /// How long it may still wait while ready without that counting as a pause: what is left
    /// of its arrival window before it starts, or of the random part of a sleep (a sleep of
    /// 5–14 ms wakes at 5 with 9 ms of slack). Counted only when pauses are bounded.
    pub slack_ms: u64,
    /// How it ended.
    pub outcome: Option<Outcome>,
    /// What symmetry reduction remembers about this slot; forgotten on every change.
    canon: symmetry::SlotCanon,
}

/// The slot to change, copied if shared, with what was derived from it forgotten. Every
/// change to a slot goes through here.
fn slot_mut(slot: &mut Arc<Slot>) -> &mut Slot {
    let slot = Arc::make_mut(slot);
    slot.canon = symmetry::SlotCanon::default();
    slot
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
    /// How long, in all, each caller may be left unscheduled while it is ready and time
    /// passes (`None`: unbounded, the asynchronous model). One GC pause of this length, or
    /// several adding up to it.
    pub max_pause_ms: Option<u64>,
    /// Time stops here.
    pub horizon_ms: u64,
    /// Keep a replica and allow this many failovers.
    pub failovers: u32,
    /// A caller may start at any time up to this long after it could (its requests arrive
    /// at arbitrary moments) without that counting as a pause. Only meaningful when pauses
    /// are bounded: an unbounded pause already covers any arrival time.
    pub arrival_window_ms: u64,
}

impl WorldConfig {
    /// The asynchronous model up to `horizon_ms`: unbounded pauses, no failovers.
    pub fn asynchronous(horizon_ms: u64) -> WorldConfig {
        WorldConfig {
            max_pause_ms: None,
            horizon_ms,
            failovers: 0,
            arrival_window_ms: 0,
        }
    }
}

mod symmetry;

/// What a run is made of that never changes while it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setup {
    initial_balance: i64,
    amount: i64,
    balance_in: BalanceIn,
    balance_key: Vec<u8>,
    lock_key: Vec<u8>,
    wallet_id: i64,
    /// Each caller's token as it appears in Redis.
    tokens: Vec<Vec<u8>>,
    /// Hash worlds up to a renaming of callers.
    symmetric: bool,
}

/// Callers, stand-ins and a clock.
///
/// Equal worlds hash equal; the hash leaves out what never changes during a run (the
/// configuration and the scenario's constants), which equal worlds share anyway. With
/// [`World::set_symmetry`], worlds that differ only by which caller is which hash equal too.
///
/// The stand-ins and the callers sit behind `Arc`s and are copied on write, so cloning a
/// world and taking one step copies only the caller that stepped and the stand-in it used —
/// what makes exploring millions of states affordable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// The clock, shared by everyone.
    pub now_ms: u64,
    /// The Redis primary.
    pub redis: Arc<Redis>,
    /// The replica, when failovers are allowed.
    pub replica: Option<Arc<Replica>>,
    /// PostgreSQL.
    pub postgres: Arc<Postgres>,
    /// The callers.
    pub slots: Vec<Arc<Slot>>,
    /// Failovers still allowed.
    pub failovers_left: u32,
    /// Bounds.
    pub config: WorldConfig,
    setup: Arc<Setup>,
}

impl Hash for World {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if self.setup.symmetric {
            return self.hash_canonical(state);
        }
        self.now_ms.hash(state);
        self.redis.hash(state);
        self.replica.hash(state);
        self.postgres.hash(state);
        self.slots.hash(state);
        self.failovers_left.hash(state);
    }
}

/// One thing that happened while an [`Action`] was applied. Callers are 0-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A caller sent a request to Redis and got this reply.
    Redis {
        /// The caller.
        caller: usize,
        /// The request.
        request: RedisRequest,
        /// The reply.
        reply: Reply,
        /// What the caller's machine makes of it.
        reading: Option<Reading>,
    },
    /// A caller ran a statement and got this result.
    Sql {
        /// The caller.
        caller: usize,
        /// The statement.
        request: SqlRequest,
        /// The result.
        result: Result<QueryResult, PgError>,
        /// What the caller's machine makes of it.
        reading: Option<Reading>,
    },
    /// A caller's statement waits for a row lock.
    SqlBlocked {
        /// The caller.
        caller: usize,
        /// The statement.
        request: SqlRequest,
        /// The session holding the lock.
        by: SessionId,
    },
    /// A caller went to sleep.
    Sleep {
        /// The caller.
        caller: usize,
        /// When it wakes at the earliest.
        wake_ms: u64,
        /// When it wakes at the latest (a random sleep).
        latest_ms: u64,
        /// True for a backoff (the sleep has a deadline), false for work or a watchdog wait.
        backoff: bool,
    },
    /// A caller reached a named point where it may be paused.
    Reached {
        /// The caller.
        caller: usize,
        /// The point.
        point: Point,
    },
    /// A caller finished.
    Done {
        /// The caller.
        caller: usize,
        /// How.
        outcome: Outcome,
    },
    /// The clock advanced to `now_ms`.
    Tick {
        /// The new time.
        now_ms: u64,
    },
    /// A sleeping caller woke, or a caller with a start offset started.
    Wake {
        /// The caller.
        caller: usize,
        /// True when it is its start.
        start: bool,
    },
    /// The replica applied an effect.
    Replicated {
        /// The effect.
        effect: Effect,
    },
    /// The replica was promoted; `lost` effects had not reached it.
    Failover {
        /// How many.
        lost: usize,
    },
}

type Sink<'a> = Option<&'a mut Vec<Event>>;

fn emit(sink: &mut Sink<'_>, event: impl FnOnce() -> Event) {
    if let Some(events) = sink.as_deref_mut() {
        events.push(event());
    }
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
        let (mut redis, mut postgres) = scenario.seeded_stand_ins();
        let keys = &scenario.params.keys;
        redis.drain_effects();
        let bounded = config.max_pause_ms.is_some();
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
            let slack_ms = if bounded && start_ms == 0 {
                config.arrival_window_ms
            } else {
                0
            };
            slots.push(Arc::new(Slot {
                machine,
                state,
                session,
                paused_ms: 0,
                slack_ms,
                outcome: None,
                canon: symmetry::SlotCanon::default(),
            }));
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
            Arc::new(Replica {
                redis: copy,
                backlog: Vec::new(),
            })
        });
        Ok(World {
            now_ms: 0,
            redis: Arc::new(redis),
            replica,
            postgres: Arc::new(postgres),
            slots,
            failovers_left: config.failovers,
            config,
            setup: Arc::new(Setup {
                initial_balance: scenario.initial_balance,
                amount: scenario.params.amount,
                balance_in: scenario.balance_in(),
                balance_key: keys.balance.clone(),
                lock_key: keys.lock.clone(),
                wallet_id: scenario.params.wallet_id,
                tokens: tokens.iter().map(|t| token_text(*t)).collect(),
                symmetric: false,
            }),
        })
    }

    /// Makes the hash ignore which caller is which (symmetry reduction for a model checker):
    /// the world is hashed with callers in a canonical order and every token and PostgreSQL
    /// session renamed after its owner's rank, in the machines and in both stand-ins.
    /// Equality is unchanged.
    pub fn set_symmetry(&mut self, on: bool) {
        Arc::make_mut(&mut self.setup).symmetric = on;
    }

    /// True when the hash ignores which caller is which.
    pub fn symmetric(&self) -> bool {
        self.setup.symmetric
    }

    /// True when every caller has finished.
    pub fn all_done(&self) -> bool {
        self.slots.iter().all(|slot| slot.state == SlotState::Done)
    }

    /// True when nothing can happen any more: no caller can step, the clock cannot advance,
    /// no replication or failover is pending.
    pub fn stuck(&self) -> bool {
        let mut actions = Vec::new();
        self.actions(&mut actions);
        actions.is_empty()
    }

    /// True when caller `index` can take a step now: it is ready, or the row lock it waits
    /// for has been released.
    pub fn enabled(&self, index: usize) -> bool {
        match &self.slots[index].state {
            SlotState::Ready(_) => true,
            SlotState::Blocked { by, .. } => !self.postgres.in_transaction(*by),
            _ => false,
        }
    }

    /// The actions enabled now, in a fixed order: callers by number, then the clock, then
    /// replication and failover.
    pub fn actions(&self, actions: &mut Vec<Action>) {
        for index in 0..self.slots.len() {
            if self.enabled(index) {
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

    /// True when the clock may advance: before the horizon, while someone is unfinished, and
    /// (with bounded pauses) when every caller that could step has slack or pause left.
    pub fn tick_enabled(&self) -> bool {
        if self.all_done() || self.now_ms >= self.config.horizon_ms {
            return false;
        }
        match self.config.max_pause_ms {
            None => true,
            Some(max_pause_ms) => (0..self.slots.len()).all(|index| {
                let slot = &self.slots[index];
                !self.enabled(index) || slot.slack_ms > 0 || slot.paused_ms < max_pause_ms
            }),
        }
    }

    /// Performs an enabled action.
    pub fn apply(&mut self, action: Action) {
        self.apply_to(action, &mut None);
    }

    /// Performs an enabled action and says what happened.
    pub fn apply_events(&mut self, action: Action) -> Vec<Event> {
        let mut events = Vec::new();
        self.apply_to(action, &mut Some(&mut events));
        events
    }

    /// Performs an enabled action, appending a line per thing that happened to `log`.
    pub fn apply_logged(&mut self, action: Action, log: Option<&mut Vec<String>>) {
        match log {
            None => self.apply(action),
            Some(log) => {
                let now_ms = self.now_ms;
                for event in self.apply_events(action) {
                    log.push(log_line(now_ms, &event));
                }
            }
        }
    }

    /// True when `action` is one of [`World::actions`] now.
    pub fn is_enabled(&self, action: Action) -> bool {
        match action {
            Action::Step(index) => {
                usize::from(index) < self.slots.len() && self.enabled(usize::from(index))
            }
            Action::Tick => self.tick_enabled(),
            Action::Replicate => self
                .replica
                .as_ref()
                .is_some_and(|replica| !replica.backlog.is_empty()),
            Action::Failover => {
                self.replica.is_some() && self.failovers_left > 0 && !self.all_done()
            }
        }
    }

    fn apply_to(&mut self, action: Action, sink: &mut Sink<'_>) {
        // A disabled action would silently explore a state the protocol cannot reach (a caller
        // stepping while blocked, time passing beyond the horizon): every verdict built on it
        // would mislead, so it is a bug in the caller of `apply`, not a state to explore.
        assert!(
            self.is_enabled(action),
            "World::apply of a disabled action {action:?} at t={}",
            self.now_ms
        );
        match action {
            Action::Step(index) => self.step(usize::from(index), sink),
            Action::Tick => self.tick(sink),
            Action::Replicate => {
                let replica = self.replica.as_mut().expect("replicate needs a replica");
                let replica = Arc::make_mut(replica);
                let effect = replica.backlog.remove(0);
                replica.redis.apply_effect(&effect);
                emit(sink, || Event::Replicated { effect });
            }
            Action::Failover => {
                let replica = self.replica.take().expect("failover needs a replica");
                let lost = replica.backlog.len();
                let mut redis = replica.redis.clone();
                redis.promote();
                self.redis = Arc::new(redis);
                // The old primary is gone; no new replica joins within a run.
                self.replica = None;
                self.failovers_left -= 1;
                emit(sink, || Event::Failover { lost });
            }
        }
    }

    fn tick(&mut self, sink: &mut Sink<'_>) {
        if self.config.max_pause_ms.is_some() {
            for index in 0..self.slots.len() {
                if self.enabled(index) {
                    let slot = slot_mut(&mut self.slots[index]);
                    if slot.slack_ms > 0 {
                        slot.slack_ms -= 1;
                    } else {
                        slot.paused_ms += 1;
                    }
                }
            }
        }
        self.now_ms += 1;
        let now_ms = self.now_ms;
        emit(sink, || Event::Tick { now_ms });
        let arrival_window_ms = if self.config.max_pause_ms.is_some() {
            self.config.arrival_window_ms
        } else {
            0
        };
        for (index, slot) in self.slots.iter_mut().enumerate() {
            let (input, slack_ms) = match slot.state {
                SlotState::Sleeping { wake_ms } if wake_ms <= now_ms => {
                    (Input::Woke, slot.slack_ms)
                }
                SlotState::NotStarted { start_ms } if start_ms <= now_ms => {
                    (Input::Start, arrival_window_ms)
                }
                _ => continue,
            };
            let start = input == Input::Start;
            emit(sink, || Event::Wake {
                caller: index,
                start,
            });
            let slot = slot_mut(slot);
            slot.state = SlotState::Ready(input);
            slot.slack_ms = slack_ms;
        }
    }

    fn step(&mut self, index: usize, sink: &mut Sink<'_>) {
        let now_ms = self.now_ms;
        let slot = slot_mut(&mut self.slots[index]);
        let state = std::mem::replace(&mut slot.state, SlotState::Done);
        let mut step = match state {
            SlotState::Ready(input) => slot.machine.next(now_ms, input),
            SlotState::Blocked { request, .. } => {
                self.run_sql(index, request, sink);
                return;
            }
            other => panic!("caller {index} stepped while {other:?}"),
        };
        // A named point resumes at once: a pause there is time passing before the step that
        // reached it, which is the same (reaching a point never depends on the clock).
        while let Step::Reached(point) = step {
            emit(sink, || Event::Reached {
                caller: index,
                point,
            });
            step = slot_mut(&mut self.slots[index])
                .machine
                .next(now_ms, Input::Resumed);
        }
        match step {
            Step::Redis { request, .. } => {
                let (request, reply) = self.run_redis(request);
                if sink.is_some() {
                    let machine = &self.slots[index].machine;
                    let reading = machine.reading(&Input::Redis(reply.clone()));
                    let reply = reply.clone();
                    emit(sink, || Event::Redis {
                        caller: index,
                        request,
                        reply,
                        reading,
                    });
                }
                self.ready(index, Input::Redis(reply));
            }
            Step::Sql(request) => self.run_sql(index, request, sink),
            Step::Sleep {
                min_ms,
                max_ms,
                deadline_ms,
            } => {
                let mut wake_ms = now_ms + min_ms;
                let mut latest_ms = now_ms + max_ms.max(min_ms);
                if let Some(deadline_ms) = deadline_ms {
                    wake_ms = wake_ms.min(deadline_ms.max(now_ms));
                    latest_ms = latest_ms.min(deadline_ms.max(now_ms));
                }
                emit(sink, || Event::Sleep {
                    caller: index,
                    wake_ms,
                    latest_ms,
                    backoff: deadline_ms.is_some(),
                });
                let slack_ms = if self.config.max_pause_ms.is_some() {
                    latest_ms - wake_ms
                } else {
                    0
                };
                let slot = slot_mut(&mut self.slots[index]);
                slot.slack_ms = slack_ms;
                if wake_ms <= now_ms {
                    slot.state = SlotState::Ready(Input::Woke);
                } else {
                    slot.state = SlotState::Sleeping { wake_ms };
                }
            }
            Step::Reached(_) => unreachable!("points resume above"),
            Step::Done(outcome) => {
                let session = self.slots[index].session;
                Arc::make_mut(&mut self.postgres).disconnect(session);
                let slot = slot_mut(&mut self.slots[index]);
                slot.slack_ms = 0;
                if sink.is_some() {
                    let outcome = outcome.clone();
                    emit(sink, || Event::Done {
                        caller: index,
                        outcome,
                    });
                }
                slot.outcome = Some(outcome);
            }
        }
    }

    fn ready(&mut self, index: usize, input: Input) {
        let slot = slot_mut(&mut self.slots[index]);
        slot.state = SlotState::Ready(input);
        slot.slack_ms = 0;
    }

    fn run_sql(&mut self, index: usize, request: SqlRequest, sink: &mut Sink<'_>) {
        let session = self.slots[index].session;
        match Arc::make_mut(&mut self.postgres).execute(
            session,
            &request.statement,
            &request.params,
        ) {
            Exec::Done(result) => {
                if sink.is_some() {
                    let machine = &self.slots[index].machine;
                    let reading = machine.reading(&Input::Sql(result.clone()));
                    let result = result.clone();
                    emit(sink, || Event::Sql {
                        caller: index,
                        request,
                        result,
                        reading,
                    });
                }
                self.ready(index, Input::Sql(result));
            }
            Exec::Blocked { by } => {
                if sink.is_some() {
                    let request = request.clone();
                    emit(sink, || Event::SqlBlocked {
                        caller: index,
                        request,
                        by,
                    });
                }
                let slot = slot_mut(&mut self.slots[index]);
                slot.state = SlotState::Blocked { request, by };
                slot.slack_ms = 0;
            }
        }
    }

    /// Runs a request as a client library does (scripts: `EVALSHA`, then `EVAL` on
    /// `NOSCRIPT`), and queues the primary's effects for the replica. Hands the request back.
    fn run_redis(&mut self, request: RedisRequest) -> (RedisRequest, Reply) {
        let now_ms = self.now_ms;
        let redis = Arc::make_mut(&mut self.redis);
        let (request, reply) = match request {
            RedisRequest::Command(command) => {
                let reply = redis.apply(&command, now_ms);
                (RedisRequest::Command(command), reply)
            }
            RedisRequest::Script { script, keys, args } => {
                let evalsha = Command::EvalSha {
                    sha1: script.sha1_hex(),
                    keys,
                    args,
                };
                let reply = redis.apply(&evalsha, now_ms);
                let Command::EvalSha { keys, args, .. } = evalsha else {
                    unreachable!("built above")
                };
                match reply {
                    Reply::Error(text) if text.starts_with("NOSCRIPT") => {
                        let eval = Command::Eval {
                            script: script.source().as_bytes().to_vec(),
                            keys,
                            args,
                        };
                        let reply = redis.apply(&eval, now_ms);
                        let Command::Eval { keys, args, .. } = eval else {
                            unreachable!("built above")
                        };
                        (RedisRequest::Script { script, keys, args }, reply)
                    }
                    other => (RedisRequest::Script { script, keys, args }, other),
                }
            }
        };
        let effects = redis.drain_effects();
        if let Some(replica) = &mut self.replica {
            if !effects.is_empty() {
                Arc::make_mut(replica).backlog.extend(effects);
            }
        }
        (request, reply)
    }

    /// How many callers believe they hold the lock right now.
    pub fn believed_holders(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.state != SlotState::Done && slot.machine.believes_it_holds())
            .count()
    }

    /// The callers (0-based) that believe they hold the lock right now.
    pub fn believers(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&index| {
                let slot = &self.slots[index];
                slot.state != SlotState::Done && slot.machine.believes_it_holds()
            })
            .collect()
    }

    /// The caller (0-based) whose token the Redis primary holds in the lock key at `at_ms`.
    pub fn lock_holder_at(&self, at_ms: u64) -> Option<usize> {
        let value = self.redis.peek(&self.setup.lock_key, at_ms)?;
        self.setup.tokens.iter().position(|token| token == value)
    }

    /// The balance every caller started from.
    pub fn initial_balance(&self) -> i64 {
        self.setup.initial_balance
    }

    /// How much each caller spends.
    pub fn amount(&self) -> i64 {
        self.setup.amount
    }

    /// The committed balance now (none when it is missing or unreadable).
    pub fn balance(&self) -> Option<i64> {
        match self.setup.balance_in {
            BalanceIn::Redis => self
                .redis
                .peek(&self.setup.balance_key, self.now_ms)
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .and_then(|text| text.parse().ok()),
            BalanceIn::Postgres => self
                .postgres
                .wallet(self.setup.wallet_id)
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
        Ledger::check(
            self.setup.initial_balance,
            self.setup.amount,
            &self.results(),
            balance,
        )
    }
}

/// The line [`World::apply_logged`] writes for an event that happened at `now_ms`.
fn log_line(now_ms: u64, event: &Event) -> String {
    match event {
        Event::Redis {
            caller,
            request,
            reply,
            ..
        } => format!(
            "t={now_ms} caller {}: {} -> {}",
            caller + 1,
            request.describe(),
            reply.describe()
        ),
        Event::Sql {
            caller,
            request,
            result,
            ..
        } => {
            let answer = crate::postgres::describe_result(result);
            format!(
                "t={now_ms} caller {}: {} {:?} -> {answer}",
                caller + 1,
                request.statement.sql(),
                request.params
            )
        }
        Event::SqlBlocked {
            caller, request, ..
        } => format!(
            "t={now_ms} caller {}: {} waits for a row lock",
            caller + 1,
            request.statement.sql()
        ),
        Event::Sleep {
            caller, wake_ms, ..
        } => format!("t={now_ms} caller {} sleeps until {wake_ms}", caller + 1),
        Event::Reached { caller, point } => {
            format!("t={now_ms} caller {} at {}", caller + 1, point.name())
        }
        Event::Done { caller, outcome } => {
            format!("t={now_ms} caller {} done: {outcome:?}", caller + 1)
        }
        Event::Tick { now_ms } => format!("t={now_ms}"),
        Event::Wake { caller, .. } => format!("t={} caller {} wakes", now_ms + 1, caller + 1),
        Event::Replicated { effect } => format!("replica applies {effect:?}"),
        Event::Failover { lost } => {
            format!("failover: the replica is promoted; {lost} unreplicated change(s) lost")
        }
    }
}
