//! The sans-IO interface every safeguard speaks.
//!
//! A safeguard never performs IO. A driver calls [`Machine::next`] with the reply to the last
//! step and the caller's current time; the machine answers with the next [`Step`]: a Redis
//! request, a SQL statement, a sleep, a pause point, or its final [`Outcome`]. The exhaustive
//! model, the turmoil simulation and the real-server runner are three such drivers.

use serde::{Deserialize, Serialize};

use crate::postgres::{PgError, QueryResult, Statement};
use crate::redis::{Command, Reply, ScriptId};

/// A request to Redis.
///
/// Serialised as `{"command": [argv...]}` (read back through [`Command::parse`], as Redis
/// parses it), `{"script": {"name": "release", "keys": [...], "args": [...]}}` or
/// `{"pipeline": [[argv...], ...]}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "RequestRepr", try_from = "RequestRepr")]
pub enum RedisRequest {
    /// A plain command.
    Command(Command),
    /// A script call. Drivers behave as real clients do: `EVALSHA`, and `EVAL` with the
    /// source on `NOSCRIPT`.
    Script {
        /// Which script.
        script: ScriptId,
        /// KEYS.
        keys: Vec<Vec<u8>>,
        /// ARGV.
        args: Vec<Vec<u8>>,
    },
    /// Commands sent back to back on one connection, answered as the array of their replies
    /// (e.g. `WATCH` then `GET`, or `MULTI`, `SET`, `EXEC`). Never empty.
    Pipeline(Vec<Command>),
}

/// The most commands one [`RedisRequest::Pipeline`] may hold.
pub const MAX_PIPELINE_COMMANDS: usize = 16;

impl RedisRequest {
    /// The request as a person reads it, e.g. `SET lock:{wallet:42} 00..1f NX PX 100` or
    /// `EVALSHA fenced-acquire lock:{wallet:42} fence:{wallet:42} ...` (scripts by name).
    pub fn describe(&self) -> String {
        let words = |parts: &[Vec<u8>]| {
            parts
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self {
            RedisRequest::Command(command) => words(&command.to_argv()),
            RedisRequest::Script { script, keys, args } => {
                format!("EVALSHA {} {} {}", script.name(), words(keys), words(args))
            }
            RedisRequest::Pipeline(commands) => commands
                .iter()
                .map(|command| words(&command.to_argv()))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

/// One command's argv inside a stored pipeline.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct ArgvRepr(#[serde(with = "crate::text_bytes::list")] Vec<Vec<u8>>);

/// How a [`RedisRequest`] is stored.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum RequestRepr {
    Command(#[serde(with = "crate::text_bytes::list")] Vec<Vec<u8>>),
    Script {
        name: String,
        /// The source of a user's script (a built-in one is known by its name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
        #[serde(with = "crate::text_bytes::list")]
        keys: Vec<Vec<u8>>,
        #[serde(with = "crate::text_bytes::list")]
        args: Vec<Vec<u8>>,
    },
    Pipeline(Vec<ArgvRepr>),
}

impl From<RedisRequest> for RequestRepr {
    fn from(request: RedisRequest) -> RequestRepr {
        match request {
            RedisRequest::Command(command) => RequestRepr::Command(command.to_argv()),
            RedisRequest::Script { script, keys, args } => RequestRepr::Script {
                name: script.name().to_string(),
                source: matches!(script, ScriptId::User(_)).then(|| script.source().to_string()),
                keys,
                args,
            },
            RedisRequest::Pipeline(commands) => RequestRepr::Pipeline(
                commands
                    .iter()
                    .map(|command| ArgvRepr(command.to_argv()))
                    .collect(),
            ),
        }
    }
}

impl TryFrom<RequestRepr> for RedisRequest {
    type Error = String;

    fn try_from(repr: RequestRepr) -> Result<RedisRequest, String> {
        match repr {
            RequestRepr::Command(argv) => Command::parse(&argv)
                .map(RedisRequest::Command)
                .map_err(|reply| format!("not a command Redis accepts: {}", reply.describe())),
            RequestRepr::Script {
                name,
                source: Some(source),
                keys,
                args,
            } => {
                let script = match ScriptId::from_source(source.as_bytes()) {
                    Some(known) => known,
                    None => crate::intern::intern(&name, &source)
                        .map(ScriptId::User)
                        .map_err(|error| error.to_string())?,
                };
                Ok(RedisRequest::Script { script, keys, args })
            }
            RequestRepr::Script {
                name,
                source: None,
                keys,
                args,
            } => {
                let script = ScriptId::ALL
                    .into_iter()
                    .find(|id| id.name() == name)
                    .ok_or_else(|| {
                        let known: Vec<&str> = ScriptId::ALL.iter().map(|id| id.name()).collect();
                        format!("unknown script {name:?}; known: {}", known.join(", "))
                    })?;
                Ok(RedisRequest::Script { script, keys, args })
            }
            RequestRepr::Pipeline(commands) => {
                if commands.is_empty() || commands.len() > MAX_PIPELINE_COMMANDS {
                    return Err(format!(
                        "a pipeline holds 1 to {MAX_PIPELINE_COMMANDS} commands, not {}",
                        commands.len()
                    ));
                }
                commands
                    .iter()
                    .enumerate()
                    .map(|(index, ArgvRepr(argv))| {
                        Command::parse(argv).map_err(|reply| {
                            format!(
                                "pipeline command {}: not a command Redis accepts: {}",
                                index + 1,
                                reply.describe()
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(RedisRequest::Pipeline)
            }
        }
    }
}

/// The node number of the one Redis server of the single-server safeguards (host `redis`).
/// Redlock's independent nodes are numbered from 1 (hosts `redis-1..N`).
pub const SINGLE_REDIS: u8 = 0;

/// A statement for PostgreSQL with its `bigint` parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SqlRequest {
    /// The statement.
    pub statement: Statement,
    /// `$1`, `$2`, ...
    pub params: Vec<i64>,
}

/// A named point in a caller's life where a fault (a GC pause) can be injected. Serialised
/// as its [`Point::name`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Point {
    /// Just after the lock was acquired.
    AfterAcquire,
    /// Just after the balance was read.
    AfterRead,
    /// Just before the balance is written.
    BeforeWrite,
    /// Just before the lock is released.
    BeforeRelease,
}

impl Point {
    /// Every point, in a caller's order.
    pub const ALL: [Point; 4] = [
        Point::AfterAcquire,
        Point::AfterRead,
        Point::BeforeWrite,
        Point::BeforeRelease,
    ];

    /// The name used on the command line and in traces, e.g. `after-acquire`.
    pub fn name(self) -> &'static str {
        match self {
            Point::AfterAcquire => "after-acquire",
            Point::AfterRead => "after-read",
            Point::BeforeWrite => "before-write",
            Point::BeforeRelease => "before-release",
        }
    }

    /// Parses a name produced by [`Point::name`].
    pub fn from_name(name: &str) -> Option<Point> {
        Point::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a caller wants done next.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// Send a request to Redis and pass back the reply. With a timeout, a reply that has not
    /// arrived after `timeout_ms` is given up on ([`Input::RedisTimeout`]).
    Redis {
        /// Which Redis server: [`SINGLE_REDIS`] for the one every single-server safeguard
        /// uses, 1..=N for the independent Redlock nodes `redis-1..N`.
        node: u8,
        /// The request.
        request: RedisRequest,
        /// Give up waiting after this long.
        timeout_ms: Option<u64>,
    },
    /// Run a statement on this caller's PostgreSQL connection.
    Sql(SqlRequest),
    /// Sleep for a duration drawn uniformly from `min_ms..=max_ms` (fixed when equal), but
    /// wake no later than `deadline_ms` (caller clock) when one is given.
    Sleep {
        /// Shortest sleep.
        min_ms: u64,
        /// Longest sleep.
        max_ms: u64,
        /// Wake at this time at the latest.
        deadline_ms: Option<u64>,
    },
    /// The caller reached a named point; the driver may pause it here, then answers
    /// [`Input::Resumed`].
    Reached(Point),
    /// The caller is finished.
    Done(Outcome),
}

/// What the driver hands back.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    /// The first call.
    Start,
    /// Redis answered.
    Redis(Reply),
    /// Redis did not answer within the step's timeout.
    RedisTimeout,
    /// PostgreSQL answered.
    Sql(Result<QueryResult, PgError>),
    /// The connection failed (reset, refused, closed); the text says how.
    ConnectionError(String),
    /// A sleep ended.
    Woke,
    /// The caller goes on after a [`Step::Reached`] point.
    Resumed,
}

/// How a caller's attempt to spend ended.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The spend was written and the caller reports success.
    Accepted {
        /// The balance the decision was based on (none for a single-statement debit, which
        /// reads nothing).
        read_balance: Option<i64>,
        /// The fencing token it wrote with, if any.
        fence: Option<i64>,
        /// The caller's clock when the write was acknowledged (orders spends for blame).
        write_acked_ms: u64,
    },
    /// The balance read was below the amount; nothing was written.
    InsufficientFunds {
        /// The balance read (none for a debit that updated 0 rows).
        read_balance: Option<i64>,
    },
    /// The storage refused the write (0 rows updated: stale fence or changed version).
    WriteRejected {
        /// The balance the decision was based on.
        read_balance: i64,
        /// The fencing token it wrote with, if any.
        fence: Option<i64>,
    },
    /// The caller gave up waiting for the lock (deadline passed, or no retry).
    GaveUp,
    /// The caller learned it had lost the lock before writing, and did not write.
    LostLock,
    /// An unexpected error; the text says what.
    Failed(String),
}

impl Outcome {
    /// A short name for tables and traces.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Accepted { .. } => "accepted",
            Outcome::InsufficientFunds { .. } => "insufficient-funds",
            Outcome::WriteRejected { .. } => "write-rejected",
            Outcome::GaveUp => "gave-up",
            Outcome::LostLock => "lost-lock",
            Outcome::Failed(_) => "failed",
        }
    }

    /// The outcome in words, e.g. `accepted (read 100, fence 33)`.
    pub fn describe(&self) -> String {
        let fence = |fence: &Option<i64>| match fence {
            Some(fence) => format!(", fence {fence}"),
            None => String::new(),
        };
        match self {
            Outcome::Accepted {
                read_balance,
                fence: token,
                ..
            } => match read_balance {
                Some(read) => format!("accepted (read {read}{})", fence(token)),
                None => format!("accepted{}", fence(token)),
            },
            Outcome::InsufficientFunds { read_balance } => match read_balance {
                Some(read) => format!("insufficient funds (read {read})"),
                None => "insufficient funds".to_string(),
            },
            Outcome::WriteRejected {
                read_balance,
                fence: token,
            } => format!("write rejected (read {read_balance}{})", fence(token)),
            Outcome::GaveUp => "gave up waiting for the lock".to_string(),
            Outcome::LostLock => "lost the lock before writing; did not write".to_string(),
            Outcome::Failed(error) => format!("failed: {error}"),
        }
    }
}

/// Counters a caller keeps along the way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallerStats {
    /// Attempts to acquire the lock that found it busy.
    pub busy_retries: u32,
    /// Releases refused because the lock had expired or changed hands.
    pub stale_releases_refused: u32,
    /// Watchdog refreshes that succeeded.
    pub refreshes: u32,
    /// Transactions PostgreSQL aborted with 40P01 `deadlock detected`, each rolled back and
    /// run again.
    pub deadlock_retries: u32,
    /// Transactions PostgreSQL aborted with 40001 `could not serialize access`, each rolled
    /// back and run again.
    pub serialization_retries: u32,
}

impl std::hash::Hash for CallerStats {
    /// The transaction retry counters are hashed only when one is not zero, so that the
    /// callers of the other safeguards hash as they did before the counters existed (the
    /// checker's state fingerprints, and with them its exploration order, stay the same).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.busy_retries.hash(state);
        self.stale_releases_refused.hash(state);
        self.refreshes.hash(state);
        if self.deadlock_retries != 0 || self.serialization_retries != 0 {
            self.deadlock_retries.hash(state);
            self.serialization_retries.hash(state);
        }
    }
}

/// A sans-IO safeguard state machine.
pub trait Machine {
    /// Given the caller's clock and the answer to the previous step, the next step.
    /// After [`Step::Done`] the machine must not be called again.
    fn next(&mut self, now_ms: u64, input: Input) -> Step;

    /// The counters so far.
    fn stats(&self) -> CallerStats;

    /// What the machine makes of `input` as the answer to its last step, without taking it:
    /// the same interpretation [`Machine::next`] acts on (acquired with fence N, busy, not
    /// held, refused, ...). None when the step had no answer to read (a sleep, a pause
    /// point). Drivers log it next to the reply.
    fn reading(&self, _input: &Input) -> Option<super::Reading> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Point;

    #[test]
    fn a_point_serialises_as_its_name_and_reads_back() {
        for point in Point::ALL {
            let json = serde_json::to_string(&point).expect("serialises");
            assert_eq!(json, format!("\"{}\"", point.name()));
            assert_eq!(serde_json::from_str::<Point>(&json).expect("reads"), point);
        }
        let error = serde_json::from_str::<Point>("\"after-lunch\"").unwrap_err();
        assert!(error.to_string().contains("after-lunch"), "{error}");
    }
}
