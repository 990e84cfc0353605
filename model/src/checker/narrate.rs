//! Counterexamples in the tutorial's words: "caller 2 acquires with fence 34", "clock reaches
//! 4: lease of caller 1 expires", "caller 1 writes balance 10 with fence 33: REJECTED".

use crate::postgres::{PgError, QueryResult, RowLock, Statement, WriteGuard};
use crate::redis::command::{Command, DelexCondition, SetCondition, SetExpiry};
use crate::redis::{Reply, ScriptId};
use crate::safeguard::{Input, Outcome, RedisRequest, SqlRequest};
use crate::world::{describe_reply, describe_request, Action, Event, SlotState, World};

/// One line per action of `actions`, numbered from 1, replayed from `init`; then what the
/// last state shows (the ledger line, who believes it holds the lock).
pub fn narrate(init: &World, actions: &[Action]) -> Vec<String> {
    let mut world = init.clone();
    let mut lines = Vec::with_capacity(actions.len() + 2);
    for (number, action) in actions.iter().enumerate() {
        let before = world.clone();
        let events = world.apply_events(*action);
        let text = describe_step(&before, &events, &world).join("; ");
        lines.push(format!("{}. {text}", number + 1));
    }
    lines
}

/// What the last state of a path shows: the ledger when everyone finished, the balance, and
/// who believes it holds the lock.
pub fn summary(world: &World) -> Vec<String> {
    let mut lines = Vec::new();
    let cut_off = !world.all_done() && world.now_ms >= world.config.horizon_ms && world.stuck();
    if world.all_done() || cut_off {
        let ledger = world.ledger();
        if cut_off {
            lines.push(format!(
                "ledger when time runs out (unfinished callers never wrote): {}",
                ledger.line()
            ));
        } else {
            lines.push(format!("ledger: {}", ledger.line()));
        }
        for stale in &ledger.stale_spends {
            let fence = stale
                .fence
                .map(|f| format!(" with fence {f}"))
                .unwrap_or_default();
            lines.push(format!(
                "caller {} spent from balance {} when it was already {}{fence}: a lost update",
                stale.caller, stale.read_balance, stale.current_balance
            ));
        }
    } else if let Some(balance) = world.balance() {
        lines.push(format!("balance now {balance}"));
    }
    let believers = world.believers();
    if believers.len() > 1 {
        let all = if believers.len() == 2 { "both" } else { "all" };
        lines.push(format!(
            "{} {all} believe they hold the lock",
            callers_text(&believers)
        ));
    }
    lines
}

/// A world at a glance: the time, the balance, the lock, and each caller.
pub fn describe_world(world: &World) -> String {
    let mut lines = vec![format!("t={}", world.now_ms)];
    lines.push(match world.balance() {
        Some(balance) => format!("balance {balance}"),
        None => "balance missing".into(),
    });
    lines.push(match world.lock_holder_at(world.now_ms) {
        Some(holder) => format!(
            "lock held by caller {} (until t={})",
            holder + 1,
            lease_end(world)
        ),
        None => "lock free".into(),
    });
    for (index, slot) in world.slots.iter().enumerate() {
        let mut text = match &slot.state {
            SlotState::NotStarted { start_ms } => format!("starts at t={start_ms}"),
            SlotState::Ready(Input::Start) => "not started yet".into(),
            SlotState::Ready(_) => "ready".into(),
            SlotState::Sleeping { wake_ms } => format!("asleep until t={wake_ms}"),
            SlotState::Blocked { .. } => "waiting for the row lock".into(),
            SlotState::InFlight { .. } => "its reply is on its way".into(),
            SlotState::Awaiting { deadline_ms } => {
                format!("waits for a lost reply until t={deadline_ms}")
            }
            SlotState::Done => match &slot.outcome {
                Some(outcome) => format!("finished: {}", outcome_phrase(outcome)),
                None => "finished".into(),
            },
        };
        if slot.state != SlotState::Done && slot.client.machine().believes_it_holds() {
            text.push_str(", believes it holds the lock");
        }
        if slot.paused_ms > 0 {
            text.push_str(&format!(", paused {} tick(s) so far", slot.paused_ms));
        }
        lines.push(format!("caller {}: {text}", index + 1));
    }
    if let Some(replica) = &world.replica {
        lines.push(format!(
            "replica {} change(s) behind",
            replica.backlog.len()
        ));
    }
    lines.join("\n")
}

fn callers_text(callers: &[usize]) -> String {
    let numbers: Vec<String> = callers.iter().map(|c| (c + 1).to_string()).collect();
    match numbers.as_slice() {
        [one] => format!("caller {one}"),
        [first @ .., last] => format!("callers {} and {last}", first.join(", ")),
        [] => "no caller".into(),
    }
}

/// The phrases for one action: `before` is the world before it, `after` after it.
pub fn describe_step(before: &World, events: &[Event], after: &World) -> Vec<String> {
    if let Some(Event::Tick { now_ms }) = events.first() {
        let woke: Vec<String> = events[1..]
            .iter()
            .map(|event| describe_event(before, event, after))
            .collect();
        return vec![tick_phrase(before, *now_ms, after, woke)];
    }
    // "caller 1 reaches after-read, works until t=1": one subject per run of phrases.
    let mut phrases: Vec<String> = Vec::new();
    let mut subject: Option<String> = None;
    for event in events {
        let phrase = describe_event(before, event, after);
        let this = phrase_subject(&phrase);
        match (&subject, &this) {
            (Some(previous), Some(current)) if previous == current => {
                let rest = phrase[current.len()..].trim_start().to_string();
                if let Some(last) = phrases.last_mut() {
                    last.push_str(", ");
                    last.push_str(&rest);
                }
            }
            _ => phrases.push(phrase),
        }
        subject = this;
    }
    phrases
}

/// `caller N` when a phrase starts with it (and goes on with a verb).
fn phrase_subject(phrase: &str) -> Option<String> {
    let rest = phrase.strip_prefix("caller ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || !rest[digits.len()..].starts_with(' ') {
        return None;
    }
    Some(format!("caller {digits}"))
}

fn describe_event(before: &World, event: &Event, after: &World) -> String {
    match event {
        Event::Redis {
            caller,
            request,
            reply,
        } => redis_phrase(before, *caller, request, reply, after),
        Event::Sql {
            caller,
            request,
            result,
        } => sql_phrase(*caller, request, result),
        Event::SqlBlocked { caller, by, .. } => {
            let holder = before
                .slots
                .iter()
                .position(|slot| slot.session == *by)
                .map(|c| format!("caller {}", c + 1))
                .unwrap_or_else(|| format!("session {}", by.0));
            format!(
                "caller {} waits for the row lock held by {holder}",
                caller + 1
            )
        }
        Event::Sleep {
            caller,
            wake_ms,
            latest_ms,
            backoff,
        } => {
            let until = if latest_ms > wake_ms {
                format!("t={wake_ms}..{latest_ms}")
            } else {
                format!("t={wake_ms}")
            };
            if *backoff {
                format!("caller {} backs off until {until}", caller + 1)
            } else {
                format!("caller {} works until {until}", caller + 1)
            }
        }
        Event::Reached { caller, point } => {
            format!("caller {} reaches {}", caller + 1, point.name())
        }
        Event::Done { caller, outcome } => {
            format!(
                "caller {} finishes: {}",
                caller + 1,
                outcome_phrase(outcome)
            )
        }
        Event::Tick { now_ms } => tick_phrase(before, *now_ms, after, Vec::new()),
        Event::Wake { caller, start } => {
            if *start {
                format!("caller {} starts", caller + 1)
            } else {
                format!("caller {} wakes", caller + 1)
            }
        }
        Event::Replicated { effect } => format!("replica catches up: {}", effect.describe()),
        Event::Failover { lost } => {
            format!("failover: the replica is promoted, {lost} unreplicated change(s) lost")
        }
        Event::Fault { caller, fault } => format!("caller {} {}", caller + 1, fault.describe()),
    }
}

fn tick_phrase(before: &World, now_ms: u64, after: &World, woke: Vec<String>) -> String {
    let mut notes = Vec::new();
    if let Some(holder) = before.lock_holder_at(before.now_ms) {
        if after.lock_holder_at(now_ms) != Some(holder) {
            notes.push(format!("lease of caller {} expires", holder + 1));
        }
    }
    for (index, slot) in before.slots.iter().enumerate() {
        if !before.enabled(index) {
            continue;
        }
        let note = match &slot.state {
            SlotState::Ready(Input::Start) => format!("caller {} has not started yet", index + 1),
            SlotState::Ready(Input::Woke) if slot.slack_ms > 0 => {
                format!("caller {} sleeps on (random backoff)", index + 1)
            }
            _ => format!("caller {} is paused", index + 1),
        };
        notes.push(note);
    }
    notes.extend(woke);
    if notes.is_empty() {
        format!("clock reaches {now_ms}")
    } else {
        format!("clock reaches {now_ms}: {}", notes.join(", "))
    }
}

fn holder_text(world: &World) -> String {
    match world.lock_holder_at(world.now_ms) {
        Some(holder) => format!("held by caller {}", holder + 1),
        None => "held".into(),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn redis_phrase(
    before: &World,
    caller: usize,
    request: &RedisRequest,
    reply: &Reply,
    after: &World,
) -> String {
    let who = format!("caller {}", caller + 1);
    let expires = || match after.lock_holder_at(after.now_ms) {
        Some(_) => format!(" (lease until t={})", lease_end(after)),
        None => String::new(),
    };
    let phrase = match (request, reply) {
        (_, Reply::Error(error)) => Some(format!(
            "{who}: {} -> (error) {error}",
            describe_request(request)
        )),
        (
            RedisRequest::Command(Command::Set {
                condition: SetCondition::IfMissing,
                expiry: SetExpiry::Millis(ttl),
                ..
            }),
            _,
        ) => Some(match reply {
            Reply::Nil => format!("{who} finds the lock {}", holder_text(before)),
            _ => format!("{who} acquires the lock for {ttl}ms{}", expires()),
        }),
        (RedisRequest::Command(Command::SetNx(..)), Reply::Integer(n)) => Some(if *n == 1 {
            format!("{who} acquires the lock (SETNX, no expiry)")
        } else {
            format!("{who} finds the lock {}", holder_text(before))
        }),
        (RedisRequest::Command(Command::PExpire(_, ttl)), Reply::Integer(_)) => Some(format!(
            "{who} sets the lock to expire in {ttl}ms{}",
            expires()
        )),
        (RedisRequest::Command(Command::Get(_)), Reply::Bulk(value)) => {
            Some(format!("{who} reads balance {}", text(value)))
        }
        (RedisRequest::Command(Command::Get(_)), Reply::Nil) => {
            Some(format!("{who} reads the balance: missing"))
        }
        (
            RedisRequest::Command(Command::Set {
                condition: SetCondition::Always,
                value,
                ..
            }),
            _,
        ) => Some(format!("{who} writes balance {}", text(value))),
        (RedisRequest::Command(Command::Del(_)), Reply::Integer(n)) => {
            Some(match before.lock_holder_at(before.now_ms) {
                Some(holder) if holder != caller && *n == 1 => format!(
                    "{who} releases with DEL, deleting caller {}'s lock",
                    holder + 1
                ),
                _ if *n == 1 => format!("{who} releases the lock (DEL)"),
                _ => format!("{who} releases with DEL: no lock there any more"),
            })
        }
        (RedisRequest::Command(Command::DelEx(_, DelexCondition::IfEqual(_))), _)
        | (
            RedisRequest::Script {
                script: ScriptId::Release | ScriptId::RedislockRelease,
                ..
            },
            _,
        ) => Some(release_phrase(&who, reply)),
        (
            RedisRequest::Script {
                script: ScriptId::Refresh | ScriptId::RedislockRefresh,
                ..
            },
            _,
        ) => Some(if *reply == Reply::Integer(1) || *reply == Reply::ok() {
            format!("{who} refreshes the lease (watchdog){}", expires())
        } else {
            format!("{who} fails to refresh the lease (watchdog): the lock is lost")
        }),
        (
            RedisRequest::Script {
                script: ScriptId::FencedAcquire,
                ..
            },
            Reply::Integer(fence),
        ) => Some(format!("{who} acquires with fence {fence}{}", expires())),
        (
            RedisRequest::Script {
                script: ScriptId::FencedAcquire | ScriptId::RedislockObtain,
                ..
            },
            Reply::Nil,
        ) => Some(format!("{who} finds the lock {}", holder_text(before))),
        (
            RedisRequest::Script {
                script: ScriptId::RedislockObtain,
                ..
            },
            _,
        ) => Some(format!("{who} obtains the lock{}", expires())),
        _ => None,
    };
    phrase.unwrap_or_else(|| {
        format!(
            "{who}: {} -> {}",
            describe_request(request),
            describe_reply(reply)
        )
    })
}

/// When the lock key expires, as far as the primary says (its holder's lease end).
fn lease_end(world: &World) -> String {
    // The world can only peek at values, not TTLs: find the last tick the key is still there.
    let mut end = world.now_ms;
    let limit = world.now_ms + 100_000;
    while end < limit && world.lock_holder_at(end + 1).is_some() {
        end += 1;
    }
    if end >= limit {
        "no expiry".into()
    } else {
        end.to_string()
    }
}

fn release_phrase(who: &str, reply: &Reply) -> String {
    match reply {
        Reply::Integer(1) => format!("{who} releases the lock"),
        Reply::Integer(0) => format!(
            "{who} tries to release: refused, lock not held (expired or taken by someone else)"
        ),
        other => format!("{who} tries to release: {}", describe_reply(other)),
    }
}

fn sql_phrase(
    caller: usize,
    request: &SqlRequest,
    result: &Result<QueryResult, PgError>,
) -> String {
    let who = format!("caller {}", caller + 1);
    let result = match result {
        Ok(result) => result,
        Err(error) => {
            return format!(
                "{who}: {} -> ERROR {} {}",
                request.statement.sql(),
                error.code,
                error.message
            )
        }
    };
    let param = |i: usize| request.params.get(i).copied().unwrap_or_default();
    let landed = result.rows_affected == 1;
    match request.statement {
        Statement::Begin => format!("{who}: BEGIN"),
        Statement::Commit => format!("{who}: {}", result.tag),
        Statement::Rollback => format!("{who}: ROLLBACK"),
        Statement::Select { lock, .. } => {
            let row = match result.rows.as_slice() {
                [row] if row.len() == 2 => format!("balance {} (fence {})", row[0], row[1]),
                _ => "no row".into(),
            };
            match lock {
                None => format!("{who} reads {row}"),
                Some(RowLock::ForUpdate) => format!("{who} locks the row and reads {row}"),
                Some(_) => format!("{who} reads {row} ({})", request.statement.sql()),
            }
        }
        Statement::WriteFenced { guard, .. } => {
            let condition = match guard {
                WriteGuard::Unfenced => " (unchecked)".to_string(),
                WriteGuard::FenceBelow => String::new(),
                WriteGuard::FenceBelowAndEqual => format!(" if the fence is still {}", param(2)),
            };
            let verdict = if landed { "" } else { ": REJECTED" };
            format!(
                "{who} writes balance {} with fence {}{condition}{verdict}",
                param(0),
                param(1)
            )
        }
        Statement::WriteBalance { .. } => format!("{who} writes balance {}", param(0)),
        Statement::Debit { .. } => {
            if landed {
                format!("{who} debits {} (balance >= {})", param(0), param(0))
            } else {
                format!("{who} debits {}: refused, too little money", param(0))
            }
        }
    }
}

fn outcome_phrase(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Accepted { .. } => "spend accepted".into(),
        Outcome::InsufficientFunds { read_balance } => match read_balance {
            Some(balance) => format!("insufficient funds (read {balance})"),
            None => "insufficient funds".into(),
        },
        Outcome::WriteRejected { .. } => "write rejected, nothing spent".into(),
        Outcome::GaveUp => "gave up waiting for the lock".into(),
        Outcome::LostLock => "its watchdog lost the lock, nothing written".into(),
        Outcome::Failed(error) => format!("failed: {error}"),
    }
}
