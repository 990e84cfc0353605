//! What a trace's event log means, lane by lane: the marks a timeline draws.
//!
//! The simulation logs requests and replies; a reader wants "app-1 got the lock, fence 33",
//! "app-1 read balance 100", "lease of app-1 expired", "app-1 wrote 90 with fence 33". This
//! module turns the log into such [`Mark`]s, one lane per caller, Redis and PostgreSQL, keeps
//! track of who holds the lease and who is paused (for the lanes' bars), and finds the one
//! write the ledger blames.

use leaselab_model::ledger::Ledger;
use leaselab_model::postgres::{Answer, RowLock, Statement, WriteGuard};
use leaselab_model::redis::{Command, Reply, ScriptId};
use leaselab_model::safeguard::{Outcome, Point, Reading, RedisRequest};
use leaselab_model::scenario::Scenario;
use leaselab_sim::events::{Event, What};

/// A lane of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// Caller `n` (1-based), host `app-n`.
    Caller(u32),
    /// Redis (the lock, its lease, the fence counter, faults of Redis).
    Redis,
    /// PostgreSQL (the wallet row).
    Postgres,
    /// The callers a focused story folds away ([`focus`]): their notable marks in the window.
    Others {
        /// How many callers it stands for.
        callers: u32,
    },
}

impl Lane {
    /// The lane's heading: `app-1 (A)`, `redis`, `postgres`.
    pub fn title(self) -> String {
        match self {
            Lane::Caller(n) => match letter(n) {
                Some(letter) => format!("app-{n} ({letter})"),
                None => format!("app-{n}"),
            },
            Lane::Redis => "redis".into(),
            Lane::Postgres => "postgres".into(),
            Lane::Others { callers } => format!("{callers} others"),
        }
    }
}

/// The tutorial's names for the first callers: A, B, C, ...
pub fn letter(caller: u32) -> Option<char> {
    (1..=26)
        .contains(&caller)
        .then(|| char::from(b'A' + (caller - 1) as u8))
}

/// What a mark shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The caller starts.
    Start,
    /// It took the lock (with its fencing token, when fenced).
    Acquire {
        /// The token.
        fence: Option<i64>,
    },
    /// It found the lock busy (`count` times in a row).
    Busy {
        /// How many attempts were merged into this mark.
        count: u32,
        /// The last one's time, µs.
        until_us: i64,
    },
    /// It read the balance.
    Read {
        /// The balance seen.
        balance: i64,
        /// The row's fence seen (PostgreSQL).
        fence: Option<i64>,
    },
    /// It works (sleeps) before writing.
    Work {
        /// For how long.
        ms: u64,
    },
    /// It froze.
    Pause {
        /// Where.
        point: Point,
        /// How long.
        ms: u64,
    },
    /// It came back from a pause.
    Resume,
    /// It wrote the balance.
    Write {
        /// The new balance.
        balance: i64,
        /// Its fencing token, if the write carries one.
        fence: Option<i64>,
        /// The version it requires (check-and-set).
        seen: Option<i64>,
        /// The write landed.
        accepted: bool,
    },
    /// Its watchdog refreshed the lease.
    Refresh {
        /// The refresh was accepted.
        ok: bool,
    },
    /// It released the lock.
    Release {
        /// Redis deleted the key (false: not held any more, refused).
        ok: bool,
    },
    /// It finished.
    Done {
        /// How the spend ended.
        outcome: Outcome,
    },
    /// An error, timeout or anything else worth showing.
    Note,
    /// Redis: the lock key now holds a caller's token.
    LockTaken {
        /// `app-N`.
        holder: String,
    },
    /// Redis: a command deleted the lock.
    LockDeleted {
        /// Whose it was.
        holder: String,
    },
    /// Redis: the lease ran out.
    LeaseExpired {
        /// Whose it was.
        holder: String,
    },
    /// PostgreSQL: a write landed.
    RowWritten {
        /// The new balance.
        balance: i64,
        /// The new fence.
        fence: Option<i64>,
    },
    /// PostgreSQL: a write was refused.
    RowRefused,
    /// A fault struck.
    Fault,
}

/// One mark on the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When, µs after the release.
    pub t_us: i64,
    /// Where.
    pub lane: Lane,
    /// What.
    pub kind: Kind,
    /// The mark in words, as the tutorial says it: "got the lock, fence 33".
    pub text: String,
    /// Set on the one write that made the ledger wrong: why it is to blame.
    pub blame: Option<String>,
}

/// What a lane shows between marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bar {
    /// Nothing: not started, or finished.
    Idle,
    /// Running without the lock.
    Running,
    /// Holding a lease the server still has.
    Holding,
    /// Believing it holds the lock, which the server no longer has for it.
    Stale,
    /// Frozen.
    Paused,
}

/// The state of every lane right after a mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The mark.
    pub mark: Mark,
    /// Each caller's bar after it (index 0 = caller 1).
    pub bars: Vec<Bar>,
    /// The caller whose token the lock key holds after it (1-based).
    pub lock_holder: Option<u32>,
}

/// The timeline of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Story {
    /// The lanes, callers first.
    pub lanes: Vec<Lane>,
    /// The marks in time order, with the lanes' state after each.
    pub rows: Vec<Row>,
    /// The tutorial's final line.
    pub ledger_line: String,
    /// The blame in words, if the ledger blames a write.
    pub blame: Option<String>,
    /// Set when the story is focused on the blamed write ([`focus`]): what was left out.
    pub folded: Option<Folded>,
}

/// What a focused story leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folded {
    /// The callers shown in their own lanes (the blamed writer and those it overwrote, or
    /// those of a run without a violation that stand out).
    pub shown: Vec<u32>,
    /// How many callers were folded into the summary lane.
    pub folded_callers: u32,
    /// The window shown, µs after the release.
    pub from_us: i64,
    /// Its end.
    pub to_us: i64,
    /// Marks of the whole run left out.
    pub marks_hidden: usize,
    /// The folded callers' outcomes in words, e.g. `40 gave up, 3 accepted`.
    pub outcomes: String,
}

impl Folded {
    /// One line saying what the focused view leaves out.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self
            .shown
            .iter()
            .map(|n| Lane::Caller(*n).title())
            .collect();
        format!(
            "focused on {} from {} to {}: {} other caller(s) folded into one lane ({}), {} mark(s) \
             outside the window hidden; --all shows everything",
            shown.join(", "),
            time_text(self.from_us),
            time_text(self.to_us),
            self.folded_callers,
            self.outcomes,
            self.marks_hidden
        )
    }
}

/// Callers above which `show` focuses on the blamed write by default.
pub const FOCUS_ABOVE_CALLERS: u32 = 6;

/// The story as the views draw it by default: [`focus`]ed when the run has more than
/// [`FOCUS_ABOVE_CALLERS`] callers, whole otherwise.
pub fn shown(story: &Story, callers: u32) -> Story {
    match focus(story) {
        Some(focused) if callers > FOCUS_ABOVE_CALLERS => focused,
        _ => story.clone(),
    }
}

/// How many callers a focused view of a run without a violation keeps in lanes of their own.
pub const FOCUS_OK_CALLERS: usize = 4;

/// The story narrowed to what matters. With a violation: the blamed write's caller and the
/// callers whose accepted writes it overwrote (those that wrote between its read and its
/// write), from the first of their acquires to the blamed caller's end. Without one: the
/// callers whose spend did not simply go through (a refused write, a lost lease, giving up)
/// first, then the first to start, [`FOCUS_OK_CALLERS`] in all, over the whole run. The
/// other callers fold into one lane that keeps their acquires, writes and ends inside that
/// window. None when there is nothing to fold.
pub fn focus(story: &Story) -> Option<Story> {
    match story.rows.iter().position(|r| r.mark.blame.is_some()) {
        Some(blamed) => focus_on_blame(story, blamed),
        None => focus_without_blame(story),
    }
}

/// The callers of a run without a violation worth their own lanes.
fn focus_without_blame(story: &Story) -> Option<Story> {
    let callers: Vec<u32> = story
        .lanes
        .iter()
        .filter_map(|lane| match lane {
            Lane::Caller(n) => Some(*n),
            _ => None,
        })
        .collect();
    if callers.len() <= FOCUS_OK_CALLERS {
        return None;
    }
    let mut notable: Vec<u32> = Vec::new();
    let mut first: Vec<u32> = Vec::new();
    for row in &story.rows {
        let Lane::Caller(n) = row.mark.lane else {
            continue;
        };
        let stands_out = match &row.mark.kind {
            Kind::Write { accepted, .. } => !accepted,
            Kind::Done { outcome } => !matches!(outcome, Outcome::Accepted { .. }),
            Kind::Refresh { ok } | Kind::Release { ok } => !ok,
            Kind::Pause { .. } => true,
            _ => false,
        };
        if stands_out && !notable.contains(&n) {
            notable.push(n);
        }
        if matches!(row.mark.kind, Kind::Start) && !first.contains(&n) {
            first.push(n);
        }
    }
    let mut shown: Vec<u32> = notable.into_iter().take(FOCUS_OK_CALLERS).collect();
    for n in first.into_iter().chain(callers) {
        if shown.len() >= FOCUS_OK_CALLERS {
            break;
        }
        if !shown.contains(&n) {
            shown.push(n);
        }
    }
    let from_us = story.rows.first().map_or(0, |r| r.mark.t_us);
    let to_us = story.rows.last().map_or(0, |r| r.mark.t_us);
    Some(fold(story, shown, from_us, to_us))
}

/// `story` narrowed as `like` was: the same callers in lanes of their own, the same window
/// (so two runs side by side line up).
pub fn focus_like(story: &Story, like: &Folded) -> Story {
    fold(story, like.shown.clone(), like.from_us, like.to_us)
}

/// The blamed write's caller and those it overwrote.
fn focus_on_blame(story: &Story, blamed: usize) -> Option<Story> {
    let Lane::Caller(writer) = story.rows[blamed].mark.lane else {
        return None;
    };
    let write_us = story.rows[blamed].mark.t_us;
    let last_before = |caller: u32, until: usize, want: &dyn Fn(&Kind) -> bool| {
        story.rows[..until]
            .iter()
            .rposition(|r| r.mark.lane == Lane::Caller(caller) && want(&r.mark.kind))
    };
    let is_read = |k: &Kind| matches!(k, Kind::Read { .. });
    let read = last_before(writer, blamed, &is_read).unwrap_or(0);
    let read_us = story.rows[read].mark.t_us;
    // The accepted writes the blamed one overwrote: between its read and its write.
    let mut shown = vec![writer];
    let mut starts = vec![read];
    for (index, row) in story.rows.iter().enumerate().take(blamed).skip(read) {
        if let (Lane::Caller(other), Kind::Write { accepted: true, .. }) =
            (row.mark.lane, &row.mark.kind)
        {
            if other != writer && row.mark.t_us >= read_us && !shown.contains(&other) {
                shown.push(other);
                starts.push(last_before(other, index, &is_read).unwrap_or(index));
            }
        }
    }
    // Each shown caller from its acquire (or start) before that read.
    let is_acquire = |k: &Kind| matches!(k, Kind::Acquire { .. } | Kind::Start);
    let from = shown
        .iter()
        .zip(&starts)
        .map(|(&caller, &start)| last_before(caller, start + 1, &is_acquire).unwrap_or(start))
        .min()
        .unwrap_or(read);
    let from_us = story.rows[from].mark.t_us;
    let to_us = story.rows[blamed..]
        .iter()
        .find(|r| r.mark.lane == Lane::Caller(writer) && matches!(r.mark.kind, Kind::Done { .. }))
        .map_or(write_us, |r| r.mark.t_us);
    Some(fold(story, shown, from_us, to_us))
}

/// `story` with the callers in `shown` in lanes of their own and the others folded into one
/// lane, between `from_us` and `to_us`.
fn fold(story: &Story, mut shown: Vec<u32>, from_us: i64, to_us: i64) -> Story {
    shown.sort_unstable();
    let callers = story
        .lanes
        .iter()
        .filter(|l| matches!(l, Lane::Caller(_)))
        .count() as u32;
    let folded_callers = callers.saturating_sub(shown.len() as u32);
    let others = Lane::Others {
        callers: folded_callers,
    };
    let mut outcomes: std::collections::BTreeMap<&'static str, u32> = Default::default();
    let mut rows = Vec::new();
    for row in &story.rows {
        let in_window = (from_us..=to_us).contains(&row.mark.t_us);
        match row.mark.lane {
            Lane::Caller(n) if !shown.contains(&n) => {
                if let Kind::Done { outcome } = &row.mark.kind {
                    *outcomes.entry(outcome.name()).or_default() += 1;
                }
                let notable = matches!(
                    row.mark.kind,
                    Kind::Acquire { .. } | Kind::Write { .. } | Kind::Done { .. }
                );
                if in_window && notable {
                    let mut folded = row.clone();
                    folded.mark.lane = others;
                    folded.mark.text = format!("app-{n}: {}", row.mark.text);
                    rows.push(folded);
                }
            }
            _ if in_window => rows.push(row.clone()),
            _ => {}
        }
    }
    let mut lanes: Vec<Lane> = shown.iter().map(|&n| Lane::Caller(n)).collect();
    if folded_callers > 0 {
        lanes.push(others);
    }
    lanes.push(Lane::Redis);
    lanes.push(Lane::Postgres);
    let outcomes = if outcomes.is_empty() {
        "none finished".to_string()
    } else {
        outcomes
            .iter()
            .map(|(name, count)| format!("{count} {name}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let marks_hidden = story.rows.len() - rows.len();
    Story {
        lanes,
        rows,
        ledger_line: story.ledger_line.clone(),
        blame: story.blame.clone(),
        folded: Some(Folded {
            shown,
            folded_callers,
            from_us,
            to_us,
            marks_hidden,
            outcomes,
        }),
    }
}

/// What the story knows of one caller between its events.
#[derive(Clone, Debug, Default)]
struct CallerTrack {
    started: bool,
    done: bool,
    paused: bool,
    believes: bool,
    /// What it asked for, until the reply arrives.
    pending: Option<Pending>,
    /// Some(shown) between a read and the write: the work shows once.
    working: Option<bool>,
    /// The row of its "lock busy" mark while busy replies keep coming (they merge into it).
    last_busy: Option<usize>,
}

/// What a caller asked for, until the reply arrives.
#[derive(Clone, Debug)]
enum Pending {
    /// A Redis request, and the Redlock node it went to (none: the single Redis).
    Redis(RedisRequest, Option<u8>),
    Sql(Statement),
}

fn caller_of(host: &str) -> Option<u32> {
    host.strip_prefix("app-").and_then(|n| n.parse().ok())
}

/// Time as people read it: `0ms`, `150ms`, `2.5ms`.
pub fn time_text(t_us: i64) -> String {
    if t_us % 1_000 == 0 {
        format!("{}ms", t_us / 1_000)
    } else {
        format!("{:.1}ms", t_us as f64 / 1_000.0)
    }
}

/// Reads the story of a run from its events.
pub fn build(scenario: &Scenario, ledger: &Ledger, events: &[Event]) -> Story {
    let mut reader = Reader {
        scenario,
        callers: vec![CallerTrack::default(); scenario.callers as usize],
        holder: None,
        rows: Vec::new(),
        stored_fence: 0,
    };
    for event in events.iter().filter(|e| e.t_us >= 0) {
        let marks = match caller_of(&event.host).filter(|c| (1..=scenario.callers).contains(c)) {
            Some(caller) => reader.caller_event(caller, event),
            None => reader.world_event(event),
        };
        reader.push(marks);
    }
    let mut lanes: Vec<Lane> = (1..=scenario.callers).map(Lane::Caller).collect();
    lanes.push(Lane::Redis);
    lanes.push(Lane::Postgres);
    let mut rows = reader.rows;
    let blame = mark_blame(&mut rows, ledger);
    Story {
        lanes,
        rows,
        ledger_line: ledger.line(),
        blame,
        folded: None,
    }
}

/// The story so far, read event by event.
struct Reader<'a> {
    scenario: &'a Scenario,
    callers: Vec<CallerTrack>,
    /// The caller whose token the lock key holds (1-based).
    holder: Option<u32>,
    rows: Vec<Row>,
    /// The wallet row's fence as the accepted writes left it.
    stored_fence: i64,
}

fn mark(event: &Event, lane: Lane, kind: Kind, text: String) -> Mark {
    Mark {
        t_us: event.t_us,
        lane,
        kind,
        text,
        blame: None,
    }
}

impl Reader<'_> {
    /// The marks of what caller `caller` did.
    fn caller_event(&mut self, caller: u32, event: &Event) -> Vec<Mark> {
        let index = caller as usize - 1;
        let lane = Lane::Caller(caller);
        let track = &mut self.callers[index];
        let one = |kind: Kind, text: String| vec![mark(event, lane, kind, text)];
        match &event.what {
            What::Started => {
                track.started = true;
                one(Kind::Start, "starts".into())
            }
            What::RedisRequest { request, node, .. } => {
                track.pending = Some(Pending::Redis(request.clone(), *node));
                vec![]
            }
            What::SqlRequest { statement, .. } => {
                track.pending = Some(Pending::Sql(*statement));
                vec![]
            }
            What::RedisReply { reply, reading } => match track.pending.take() {
                Some(Pending::Redis(request, node)) => {
                    self.redis_reply(index, event, (&request, node), reply, reading.as_ref())
                }
                _ => vec![],
            },
            What::SqlReply { answer, reading } => match track.pending.take() {
                Some(Pending::Sql(statement)) => {
                    track.last_busy = None;
                    self.sql_reply(index, event, statement, answer, reading.as_ref())
                }
                _ => vec![],
            },
            What::RedisTimeout { after_ms } => {
                track.pending = None;
                one(Kind::Note, format!("redis: no answer after {after_ms}ms"))
            }
            What::ConnectionError { server, error } => {
                one(Kind::Note, format!("{server}: {error}"))
            }
            What::ReplyLost => one(
                Kind::Note,
                "FAULT: the reply is lost (the request ran)".into(),
            ),
            What::ConnectionDropped => one(
                Kind::Note,
                "FAULT: the connection drops, the reply in flight (the request ran)".into(),
            ),
            What::Sleep { .. } if track.working == Some(false) => {
                track.working = Some(true);
                let ms = self.scenario.params.work_ms;
                one(Kind::Work { ms }, format!("works {ms}ms"))
            }
            What::PauseStart { point, ms } => {
                track.paused = true;
                one(
                    Kind::Pause {
                        point: *point,
                        ms: *ms,
                    },
                    format!("PAUSED {ms}ms ({})", point.name()),
                )
            }
            What::PauseEnd { .. } => {
                track.paused = false;
                one(Kind::Resume, "wakes up, carries on".into())
            }
            What::Done { outcome } => {
                track.done = true;
                track.believes = false;
                one(
                    Kind::Done {
                        outcome: outcome.clone(),
                    },
                    format!("done: {}", outcome.describe()),
                )
            }
            _ => vec![],
        }
    }

    /// The mark of a Redis reply to caller `index`; busy replies in a row merge into one.
    fn redis_reply(
        &mut self,
        index: usize,
        event: &Event,
        (request, node): (&RedisRequest, Option<u8>),
        reply: &Reply,
        reading: Option<&Reading>,
    ) -> Vec<Mark> {
        let Some((kind, text)) = redis_mark(request, reply, reading) else {
            return vec![];
        };
        // A Redlock node's answer names its node.
        let text = match (node, reading) {
            (Some(_), Some(Reading::NodeGranted { .. } | Reading::NodeRefused { .. }))
            | (None, _) => text,
            (Some(node), _) => format!("redis-{node}: {text}"),
        };
        let track = &mut self.callers[index];
        match &kind {
            Kind::Acquire { .. } => track.believes = true,
            Kind::Release { .. } => track.believes = false,
            Kind::Read { .. } => track.working = Some(false),
            Kind::Write { .. } => track.working = None,
            _ => {}
        }
        if !matches!(kind, Kind::Busy { .. }) {
            track.last_busy = None;
        } else if let Some(at) = track.last_busy {
            if let Kind::Busy { count, until_us } = &mut self.rows[at].mark.kind {
                *count += 1;
                *until_us = event.t_us;
                self.rows[at].mark.text = format!("lock busy, retried {count}x");
            }
            return vec![];
        } else {
            track.last_busy = Some(self.rows.len());
        }
        vec![mark(event, Lane::Caller(index as u32 + 1), kind, text)]
    }

    /// The marks of a PostgreSQL answer to caller `index`: the caller's, and the row's when
    /// a write landed or was refused.
    fn sql_reply(
        &mut self,
        index: usize,
        event: &Event,
        statement: Statement,
        answer: &Answer,
        reading: Option<&Reading>,
    ) -> Vec<Mark> {
        let Some((kind, text)) = sql_mark(statement, answer, reading) else {
            return vec![];
        };
        match &kind {
            Kind::Read { .. } => self.callers[index].working = Some(false),
            Kind::Write { .. } => self.callers[index].working = None,
            _ => {}
        }
        let row_mark = self.row_mark(event, statement, &kind);
        let mut marks = vec![mark(event, Lane::Caller(index as u32 + 1), kind, text)];
        marks.extend(row_mark);
        marks
    }

    /// What a write did to the wallet row, on the PostgreSQL lane.
    fn row_mark(&mut self, event: &Event, statement: Statement, kind: &Kind) -> Option<Mark> {
        let stored = self.stored_fence;
        let (kind, text) = match kind {
            Kind::Write {
                balance,
                fence,
                accepted: true,
                ..
            } => {
                let unchecked = match statement {
                    Statement::WriteFenced {
                        guard: WriteGuard::Unfenced,
                        ..
                    } => ", unchecked",
                    _ => "",
                };
                if let Some(f) = fence {
                    self.stored_fence = *f;
                }
                let text = match fence {
                    Some(f) => format!("set {balance}, fence {f}{unchecked}"),
                    None => format!("set {balance}"),
                };
                (
                    Kind::RowWritten {
                        balance: *balance,
                        fence: *fence,
                    },
                    text,
                )
            }
            Kind::Write {
                fence,
                seen,
                accepted: false,
                ..
            } => {
                let why = match (fence, seen) {
                    (Some(f), _) if *f <= stored => format!("fence {f} <= {stored}"),
                    (_, Some(v)) if *v != stored => format!("version {v} != {stored}"),
                    _ => "0 rows".to_string(),
                };
                (Kind::RowRefused, format!("refused: {why}"))
            }
            _ => return None,
        };
        Some(mark(event, Lane::Postgres, kind, text))
    }

    /// The marks of what Redis, the network or the simulation did.
    fn world_event(&mut self, event: &Event) -> Vec<Mark> {
        let fault = |text: String| vec![mark(event, Lane::Redis, Kind::Fault, text)];
        let arrow = |one_way: bool| if one_way { "->" } else { "<->" };
        match &event.what {
            What::LockTaken { holder: who, .. } => {
                self.holder = caller_of(who);
                let text = format!("lock: {who}, {}ms", self.scenario.params.ttl_ms);
                let kind = Kind::LockTaken {
                    holder: who.clone(),
                };
                vec![mark(event, Lane::Redis, kind, text)]
            }
            What::LockReleased { holder: who } => {
                self.holder = None;
                let kind = Kind::LockDeleted {
                    holder: who.clone(),
                };
                vec![mark(
                    event,
                    Lane::Redis,
                    kind,
                    format!("lock of {who} deleted"),
                )]
            }
            What::LeaseExpired { holder: who } => {
                self.holder = None;
                let kind = Kind::LeaseExpired {
                    holder: who.clone(),
                };
                vec![mark(
                    event,
                    Lane::Redis,
                    kind,
                    format!("LEASE of {who} EXPIRED"),
                )]
            }
            What::Failover {
                lost,
                lock_holder,
                fence_counter,
            } => {
                self.holder = lock_holder.as_deref().and_then(caller_of);
                fault(format!(
                    "FAILOVER: {} change(s) lost; lock {}{}",
                    lost.len(),
                    lock_holder.as_deref().unwrap_or("free"),
                    fence_counter
                        .as_deref()
                        .map(|c| format!(", fence counter {c}"))
                        .unwrap_or_default()
                ))
            }
            What::RedisRestart => {
                self.holder = None;
                fault("RESTART, keyspace lost".into())
            }
            What::ReplicaRestart => fault("REPLICA RESTART, empty until its resync loads".into()),
            What::RedisCrashAof {
                appendfsync,
                lost,
                lock_holder,
                fence_counter,
            } => {
                self.holder = lock_holder.as_deref().and_then(caller_of);
                fault(format!(
                    "CRASH, AOF {appendfsync}: {} change(s) lost; lock {}{}",
                    lost.len(),
                    lock_holder.as_deref().unwrap_or("free"),
                    fence_counter
                        .as_deref()
                        .map(|c| format!(", fence counter {c}"))
                        .unwrap_or_default()
                ))
            }
            What::Evicted { key, .. } => fault(format!("EVICTED {key}")),
            What::Partition { a, b, one_way } => {
                fault(format!("PARTITION {a} {} {b}", arrow(*one_way)))
            }
            What::Heal { a, b, one_way } => fault(format!("healed {a} {} {b}", arrow(*one_way))),
            What::ClockJump { server, jump_ms } => {
                fault(format!("CLOCK of {server} jumps {jump_ms:+}ms"))
            }
            What::NodeRestart { node, down_ms: 0 } => {
                fault(format!("RESTART of redis-{node}, keyspace lost"))
            }
            What::NodeRestart { node, down_ms } => fault(format!(
                "CRASH of redis-{node}, keyspace lost; back in {down_ms}ms"
            )),
            What::NodeBack { node } => fault(format!("redis-{node} back, empty")),
            What::Horizon { unfinished } => vec![mark(
                event,
                Lane::Redis,
                Kind::Note,
                format!("horizon: {unfinished} caller(s) unfinished"),
            )],
            _ => vec![],
        }
    }

    /// Adds the marks as rows, each with every lane's bar after it.
    fn push(&mut self, marks: Vec<Mark>) {
        for mark in marks {
            let bars = self
                .callers
                .iter()
                .enumerate()
                .map(|(index, track)| {
                    // A caller whose release is on its way no longer counts on the lock.
                    let releasing =
                        matches!(&track.pending, Some(Pending::Redis(r, _)) if is_release(r));
                    bar(track, self.holder == Some(index as u32 + 1) || releasing)
                })
                .collect();
            self.rows.push(Row {
                mark,
                bars,
                lock_holder: self.holder,
            });
        }
    }
}

/// A request that gives the lock back.
fn is_release(request: &RedisRequest) -> bool {
    matches!(
        request,
        RedisRequest::Script {
            script: ScriptId::Release | ScriptId::RedislockRelease,
            ..
        } | RedisRequest::Command(Command::Del(_) | Command::DelEx(..))
    )
}

fn bar(state: &CallerTrack, holds: bool) -> Bar {
    if !state.started || state.done {
        Bar::Idle
    } else if state.paused {
        Bar::Paused
    } else if state.believes && holds {
        Bar::Holding
    } else if state.believes {
        Bar::Stale
    } else {
        Bar::Running
    }
}

/// Marks the write the ledger blames: the first stale spend's accepted write.
fn mark_blame(rows: &mut [Row], ledger: &Ledger) -> Option<String> {
    let stale = ledger.stale_spends.first()?;
    let row = rows.iter_mut().rev().find(|row| {
        row.mark.lane == Lane::Caller(stale.caller)
            && matches!(row.mark.kind, Kind::Write { accepted: true, .. })
    })?;
    let name = match letter(stale.caller) {
        Some(l) => format!("app-{} ({l})", stale.caller),
        None => format!("app-{}", stale.caller),
    };
    let fence = stale
        .fence
        .map(|f| format!(" with fence {f}"))
        .unwrap_or_default();
    let why = format!(
        "BLAME: {name} wrote {}{fence}, computed from balance {} it read before; by then the accepted spends had left {}: one spend is lost",
        stale.read_balance - ledger.amount,
        stale.read_balance,
        stale.current_balance,
    );
    row.mark.blame = Some(why.clone());
    Some(why)
}

/// The mark of a Redis reply: what the caller's machine read in it.
fn redis_mark(
    request: &RedisRequest,
    reply: &Reply,
    reading: Option<&Reading>,
) -> Option<(Kind, String)> {
    let text = reading.map(Reading::describe).unwrap_or_default();
    let kind = match reading {
        Some(Reading::Acquired { fence }) => {
            let text = match request {
                RedisRequest::Command(Command::SetNx(..)) => "got the lock (no expiry)".into(),
                _ => text,
            };
            return Some((Kind::Acquire { fence: *fence }, text));
        }
        Some(Reading::Busy) => Kind::Busy {
            count: 1,
            until_us: 0,
        },
        Some(Reading::Replicated { .. }) => return Some((Kind::Note, text)),
        Some(Reading::ExpirySet) => {
            let text = match request {
                RedisRequest::Command(Command::PExpire(_, ttl)) => {
                    format!("lock set to expire in {ttl}ms")
                }
                _ => text,
            };
            return Some((Kind::Note, text));
        }
        Some(Reading::BalanceRead { balance, fence }) => Kind::Read {
            balance: *balance,
            fence: *fence,
        },
        Some(Reading::Wrote {
            balance,
            fence,
            seen,
        }) => Kind::Write {
            balance: *balance,
            fence: *fence,
            seen: *seen,
            accepted: true,
        },
        Some(Reading::WriteRefused {
            balance,
            fence,
            seen,
        }) => Kind::Write {
            balance: *balance,
            fence: *fence,
            seen: *seen,
            accepted: false,
        },
        Some(Reading::Refreshed) => Kind::Refresh { ok: true },
        Some(Reading::LeaseLost) => Kind::Refresh { ok: false },
        Some(Reading::Released) => Kind::Release { ok: true },
        Some(Reading::NotHeld) => Kind::Release { ok: false },
        Some(Reading::Failed { error }) => return Some((Kind::Note, error.clone())),
        // A Redlock node's vote: the one that completes a majority takes the lock (the
        // round still checks the validity), the others are notes.
        Some(Reading::NodeGranted {
            votes, majority, ..
        }) if votes >= majority => Kind::Acquire { fence: None },
        Some(Reading::NodeGranted { .. } | Reading::NodeRefused { .. }) => Kind::Note,
        _ if reply.is_error() => {
            let text = format!("{}: {}", request.describe(), reply.describe());
            return Some((Kind::Note, text));
        }
        _ => return None,
    };
    Some((kind, text))
}

/// The mark of a PostgreSQL answer: what the caller's machine read in it.
fn sql_mark(
    statement: Statement,
    answer: &Answer,
    reading: Option<&Reading>,
) -> Option<(Kind, String)> {
    if let Answer::Error { .. } = answer {
        return Some((Kind::Note, format!("postgres: {}", answer.describe())));
    }
    let mark = match reading? {
        Reading::BalanceRead { balance, fence } => {
            let text = match (fence, statement) {
                (
                    Some(f),
                    Statement::Select {
                        lock: Some(RowLock::ForUpdate),
                        ..
                    },
                ) => format!("locked the row, read balance {balance} (fence {f})"),
                _ => format!("read balance {balance}"),
            };
            (
                Kind::Read {
                    balance: *balance,
                    fence: *fence,
                },
                text,
            )
        }
        reading @ (Reading::Wrote {
            balance,
            fence,
            seen,
        }
        | Reading::WriteRefused {
            balance,
            fence,
            seen,
        }) => (
            Kind::Write {
                balance: *balance,
                fence: *fence,
                seen: *seen,
                accepted: matches!(reading, Reading::Wrote { .. }),
            },
            reading.describe(),
        ),
        reading @ (Reading::Debited { .. }
        | Reading::DebitRefused { .. }
        | Reading::Begun
        | Reading::Committed
        | Reading::RolledBack
        | Reading::Ran { .. }
        | Reading::Failed { .. }) => (Kind::Note, reading.describe()),
        _ => return None,
    };
    Some(mark)
}
