//! Counterexamples in the tutorial's words: "caller 2 acquires with fence 34", "clock reaches
//! 4: lease of caller 1 expires", "caller 1 writes balance 10 with fence 33: REJECTED".

use leaselab_model::postgres::{
    describe_result, PgError, QueryResult, RowLock, Statement, WriteGuard,
};
use leaselab_model::redis::command::{Command, SetExpiry};
use leaselab_model::redis::Reply;
use leaselab_model::safeguard::{Input, Outcome, Reading, RedisRequest, SqlRequest};
use leaselab_model::world::{Action, Event, Reload, SlotState, World};

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
    let cut_off = !world.all_done() && world.now_ms >= world.config().horizon_ms && world.stuck();
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
            reading,
            node,
        } if *node != leaselab_model::safeguard::SINGLE_REDIS => {
            let what = match reading {
                Some(reading) => reading.describe(),
                None => reply.describe(),
            };
            let verb = match request {
                RedisRequest::Script { .. } => "releases on",
                RedisRequest::Command(_) | RedisRequest::Pipeline(_) => "asks",
            };
            format!("caller {} {verb} node {node}: {what}", caller + 1)
        }
        Event::Redis {
            caller,
            request,
            reply,
            reading,
            ..
        } => redis_phrase(before, *caller, request, reply, reading.as_ref(), after),
        Event::Node { node, fault } => format!("node {node} {}", fault.describe()),
        Event::Sql {
            caller,
            request,
            result,
            reading,
        } => sql_phrase(*caller, request, result, reading.as_ref()),
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
        Event::FenceEvicted => {
            "an allkeys-* policy evicts the fence counter: the next INCR starts again from 1".into()
        }
        Event::RedisRestarted {
            reloaded: Reload::Nothing,
        } => "Redis restarts without persistence: the lock, the fence counter and the balance \
              kept there are gone"
            .into(),
        Event::RedisRestarted {
            reloaded: Reload::FromStart,
        } => "the machine running Redis crashes; Redis reloads its append-only file, last \
              fsynced at the start: the lock, the fence counter and the balance kept there are \
              as they were then"
            .into(),
        Event::RedisRestarted {
            reloaded: Reload::EveryWrite,
        } => "the machine running Redis crashes; Redis reloads its append-only file, fsynced \
              before every reply: every key is as it was, but the script cache is empty and \
              every connection is new"
            .into(),
        Event::Fault { caller, fault } => format!("caller {} {}", caller + 1, fault.describe()),
        Event::RedisClock { fault } => format!("Redis {}", fault.describe()),
        Event::AofFsynced { .. } => {
            "Redis fsyncs its append-only file: a crash from now on reloads the keys as they are \
             now"
            .into()
        }
        Event::RedisRestarted {
            reloaded: Reload::FromFsync { at_ms },
        } => format!(
            "the machine running Redis crashes; Redis reloads its append-only file, last fsynced \
             at t={at_ms}: the lock, the fence counter and the balance kept there are as they \
             were then"
        ),
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

fn redis_phrase(
    before: &World,
    caller: usize,
    request: &RedisRequest,
    reply: &Reply,
    reading: Option<&Reading>,
    after: &World,
) -> String {
    let who = format!("caller {}", caller + 1);
    let expires = || match after.lock_holder_at(after.now_ms) {
        Some(_) => format!(" (lease until t={})", lease_end(after)),
        None => String::new(),
    };
    let by_del = matches!(request, RedisRequest::Command(Command::Del(_)));
    match reading {
        Some(Reading::Acquired { fence: Some(fence) }) => {
            format!("{who} acquires with fence {fence}{}", expires())
        }
        Some(Reading::Acquired { fence: None }) => match request {
            RedisRequest::Command(Command::SetNx(..)) => {
                format!("{who} acquires the lock (SETNX, no expiry)")
            }
            RedisRequest::Command(Command::Set {
                expiry: SetExpiry::Millis(ttl),
                ..
            }) => format!("{who} acquires the lock for {ttl}ms{}", expires()),
            _ => format!("{who} obtains the lock{}", expires()),
        },
        Some(Reading::Busy) => format!("{who} finds the lock {}", holder_text(before)),
        Some(Reading::Replicated { replicas: 0 }) => {
            format!("{who} runs WAIT: no replica has the lock, so it does not trust it")
        }
        Some(Reading::Replicated { replicas }) => {
            format!("{who} runs WAIT: {replicas} replica(s) acknowledged the lock")
        }
        Some(Reading::ExpirySet) => match request {
            RedisRequest::Command(Command::PExpire(_, ttl)) => {
                format!("{who} sets the lock to expire in {ttl}ms{}", expires())
            }
            _ => format!("{who} sets the lock to expire{}", expires()),
        },
        Some(Reading::BalanceRead { balance, .. }) => format!("{who} reads balance {balance}"),
        Some(Reading::Wrote { balance, .. }) => format!("{who} writes balance {balance}"),
        Some(Reading::Refreshed) => {
            format!("{who} refreshes the lease (watchdog){}", expires())
        }
        Some(Reading::LeaseLost) => {
            format!("{who} fails to refresh the lease (watchdog): the lock is lost")
        }
        Some(Reading::Released) if by_del => match before.lock_holder_at(before.now_ms) {
            Some(holder) if holder != caller => format!(
                "{who} releases with DEL, deleting caller {}'s lock",
                holder + 1
            ),
            _ => format!("{who} releases the lock (DEL)"),
        },
        Some(Reading::Released) => format!("{who} releases the lock"),
        Some(Reading::NotHeld) if by_del => {
            format!("{who} releases with DEL: no lock there any more")
        }
        Some(Reading::NotHeld) => format!(
            "{who} tries to release: refused, lock not held (expired or taken by someone else)"
        ),
        _ => format!("{who}: {} -> {}", request.describe(), reply.describe()),
    }
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

fn sql_phrase(
    caller: usize,
    request: &SqlRequest,
    result: &Result<QueryResult, PgError>,
    reading: Option<&Reading>,
) -> String {
    let who = format!("caller {}", caller + 1);
    let sql = request.statement.sql();
    let Some(reading) = reading else {
        return format!("{who}: {sql} -> {}", describe_result(result));
    };
    match (reading, request.statement) {
        (Reading::Begun, _) => format!("{who}: BEGIN"),
        (Reading::Committed, _) => format!("{who}: COMMIT"),
        (Reading::RolledBack, _) => format!("{who}: ROLLBACK"),
        (Reading::BalanceRead { balance, fence }, Statement::Select { lock, .. }) => {
            let row = match fence {
                Some(fence) => format!("balance {balance} (fence {fence})"),
                None => format!("balance {balance}"),
            };
            match lock {
                None => format!("{who} reads {row}"),
                Some(RowLock::ForUpdate) => format!("{who} locks the row and reads {row}"),
                Some(_) => format!("{who} reads {row} ({sql})"),
            }
        }
        (
            Reading::Wrote {
                balance,
                fence,
                seen,
            }
            | Reading::WriteRefused {
                balance,
                fence,
                seen,
            },
            Statement::WriteFenced { guard, .. },
        ) => {
            let condition = match (guard, seen) {
                (WriteGuard::Unfenced, _) => " (unchecked)".to_string(),
                (WriteGuard::FenceBelowAndEqual | WriteGuard::FenceEqual, Some(seen)) => {
                    format!(" if the fence is still {seen}")
                }
                _ => String::new(),
            };
            let verdict = match reading {
                Reading::WriteRefused { .. } => ": REJECTED",
                _ => "",
            };
            let fence = fence
                .map(|f| format!(" with fence {f}"))
                .unwrap_or_default();
            format!("{who} writes balance {balance}{fence}{condition}{verdict}")
        }
        // A safeguard file's statements: the query that read the balance, and the COMMIT
        // at which its write landed (or was told refused).
        (Reading::BalanceRead { balance, fence }, _) => match fence {
            Some(fence) => format!("{who}: {sql} -> balance {balance} (version {fence})"),
            None => format!("{who}: {sql} -> balance {balance}"),
        },
        (Reading::Wrote { balance, .. }, Statement::Commit) => {
            format!("{who}: COMMIT: balance {balance} written")
        }
        (Reading::WriteRefused { .. }, Statement::Commit) => {
            format!("{who}: COMMIT: the write changed nothing: REJECTED")
        }
        (Reading::WriteRefused { .. }, _) => {
            format!("{who}: {sql} -> {}: REJECTED", describe_result(result))
        }
        (Reading::Wrote { balance, .. }, _) => format!("{who} writes balance {balance}"),
        (Reading::Debited { amount }, _) => {
            format!("{who} debits {amount} (balance >= {amount})")
        }
        (Reading::DebitRefused { amount }, _) => {
            format!("{who} debits {amount}: refused, too little money")
        }
        (Reading::MustRetry { .. }, _) => format!("{who}: {sql} -> {}", reading.describe()),
        _ => format!("{who}: {sql} -> {}", describe_result(result)),
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
