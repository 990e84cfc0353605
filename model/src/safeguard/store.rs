//! Where the balance lives, and how a caller reads and writes it.
//!
//! Steps 1–4 of the tutorial keep the balance in a Redis string and write it back with a plain
//! `SET`; steps 5–6 keep it in PostgreSQL and write it with a (possibly fenced) `UPDATE`.

use crate::postgres::{PgError, QueryResult, Statement, WriteGuard};
use crate::redis::{Command, Reply};

use super::step::{Input, RedisRequest, SqlRequest, Step, SINGLE_REDIS};
use super::user::{SqlStep, TxEffect};

/// The balance store of a lock-based safeguard.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Store {
    /// A Redis string at `key`, read with `GET` and written with `SET`.
    Redis {
        /// The balance key.
        key: Vec<u8>,
    },
    /// The `wallets` row `id` in PostgreSQL, read with `SELECT balance, fence` and written with
    /// `UPDATE wallets SET balance = $1, fence = $2 WHERE id = .. [guard]`.
    Postgres {
        /// The wallet id.
        id: i64,
        /// The write's fencing conditions.
        guard: WriteGuard,
    },
    /// A store described in a safeguard file.
    User(super::user::UserStore),
}

/// What a read returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Read {
    /// The balance.
    pub balance: i64,
    /// The stored fence (PostgreSQL only; 0 for Redis).
    pub fence: i64,
}

/// How a write ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Written {
    /// The write landed.
    Landed,
    /// The storage refused it (0 rows updated).
    Refused,
    /// Something unexpected.
    Failed(String),
}

impl Store {
    /// Request `at` of the read (a built-in store's read is one request, `at` 0).
    pub fn read_step(&self, at: u8) -> Step {
        match self {
            Store::Redis { key } => Step::Redis {
                node: SINGLE_REDIS,
                request: RedisRequest::Command(Command::Get(key.clone())),
                timeout_ms: None,
            },
            Store::Postgres { id, .. } => Step::Sql(SqlRequest {
                statement: Statement::Select {
                    id: *id,
                    lock: None,
                },
                params: vec![],
            }),
            Store::User(store) => store.read_step(at),
        }
    }

    /// How many requests a step sends (a file's SQL step may send several statements, one
    /// after the other on the caller's connection; everything else is one request).
    pub fn len(&self, step: SqlStep) -> u8 {
        match self {
            Store::User(store) => store.len(step),
            Store::Redis { .. } | Store::Postgres { .. } => 1,
        }
    }

    /// The write's request whose answer tells landed from refused.
    pub fn write_judged(&self) -> u8 {
        match self {
            Store::User(store) => store.write_judged(),
            Store::Redis { .. } | Store::Postgres { .. } => 0,
        }
    }

    /// What request `at` of a step does to the transaction block (none: not a statement
    /// of a file).
    pub fn effect(&self, step: SqlStep, at: u8) -> Option<TxEffect> {
        match self {
            Store::User(store) => store.effect(step, at),
            Store::Redis { .. } | Store::Postgres { .. } => None,
        }
    }

    /// True when a transaction block is open once request `at` of a step answered
    /// (`succeeded`: without an error); only a file's SQL steps open one.
    pub fn block_open(&self, step: SqlStep, at: u8, succeeded: bool) -> bool {
        match self {
            Store::User(store) => store.block_open(step, at, succeeded),
            Store::Redis { .. } | Store::Postgres { .. } => false,
        }
    }

    /// True when the read leaves a transaction block open for the write.
    pub fn read_leaves_block_open(&self) -> bool {
        match self {
            Store::User(store) => store.read_leaves_block_open(),
            Store::Redis { .. } | Store::Postgres { .. } => false,
        }
    }

    /// Judges the answer to a request of a step that is not the one the step is judged on.
    pub fn on_statement(&self, step: SqlStep, input: &Input) -> Result<(), Written> {
        match self {
            Store::User(store) => store.on_statement(step, input),
            Store::Redis { .. } | Store::Postgres { .. } => Ok(()),
        }
    }

    /// Interprets the answer to [`Store::read_step`]'s last request.
    pub fn on_read(&self, input: &Input) -> Result<Read, String> {
        match (self, input) {
            (Store::Redis { .. }, Input::Redis(Reply::Bulk(bytes))) => std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| text.parse::<i64>().ok())
                .map(|balance| Read { balance, fence: 0 })
                .ok_or_else(|| {
                    format!(
                        "balance is not an integer: {:?}",
                        String::from_utf8_lossy(bytes)
                    )
                }),
            (Store::Redis { .. }, Input::Redis(Reply::Nil)) => {
                Err("balance key is missing".to_string())
            }
            (Store::Postgres { .. }, Input::Sql(Ok(result))) => read_row(result),
            (Store::User(store), _) => store.on_read(input),
            _ => Err(unexpected("read", input)),
        }
    }

    /// Request `at` of the write of `new_balance`, carrying `fence` (the caller's token) and
    /// `seen_fence` (the version read). A built-in store's write is one request, `at` 0.
    pub fn write_step(&self, at: u8, new_balance: i64, fence: i64, seen_fence: i64) -> Step {
        match self {
            Store::Redis { key } => Step::Redis {
                node: SINGLE_REDIS,
                request: RedisRequest::Command(Command::Set {
                    key: key.clone(),
                    value: new_balance.to_string().into_bytes(),
                    condition: crate::redis::command::SetCondition::Always,
                    expiry: crate::redis::command::SetExpiry::Clear,
                    get: false,
                }),
                timeout_ms: None,
            },
            Store::Postgres { id, guard } => {
                let mut params = vec![new_balance, fence];
                params.extend(self.write_marks(fence, seen_fence).1);
                Step::Sql(SqlRequest {
                    statement: Statement::WriteFenced {
                        id: *id,
                        guard: *guard,
                    },
                    params,
                })
            }
            Store::User(store) => store.write_step(at, new_balance, fence, seen_fence),
        }
    }

    /// What a write of [`Store::write_step`] carries besides the balance: the fencing token
    /// and the version it requires (PostgreSQL only; the version with check-and-set only).
    pub fn write_marks(&self, fence: i64, seen_fence: i64) -> (Option<i64>, Option<i64>) {
        match self {
            Store::Redis { .. } => (None, None),
            Store::Postgres { guard, .. } => (
                Some(fence),
                matches!(
                    guard,
                    WriteGuard::FenceBelowAndEqual | WriteGuard::FenceEqual
                )
                .then_some(seen_fence),
            ),
            Store::User(store) => store.write_marks(fence, seen_fence),
        }
    }

    /// The fence a read reports: the row's (PostgreSQL), a file's query's second column
    /// when it has one (`input` is the answer read), none for a Redis balance.
    pub fn read_fence(&self, read: &Read, input: &Input) -> Option<i64> {
        match self {
            Store::Redis { .. } => None,
            Store::Postgres { .. } => Some(read.fence),
            Store::User(_) => match input {
                Input::Sql(Ok(result)) if result.rows.first().is_some_and(|row| row.len() == 2) => {
                    Some(read.fence)
                }
                _ => None,
            },
        }
    }

    /// Interprets the answer to [`Store::write_step`]'s judged request.
    pub fn on_write(&self, input: &Input) -> Written {
        match (self, input) {
            (Store::User(store), _) => store.on_write(input),
            (Store::Redis { .. }, Input::Redis(Reply::Status(status))) if status == "OK" => {
                Written::Landed
            }
            (Store::Postgres { .. }, Input::Sql(Ok(result))) => match result.rows_affected {
                0 => Written::Refused,
                1 => Written::Landed,
                n => Written::Failed(format!("UPDATE changed {n} rows, expected 0 or 1")),
            },
            _ => Written::Failed(unexpected("write", input)),
        }
    }
}

/// Reads `balance, fence` from a one-row result.
fn read_row(result: &QueryResult) -> Result<Read, String> {
    match result.rows.as_slice() {
        [row] if row.len() == 2 => Ok(Read {
            balance: row[0],
            fence: row[1],
        }),
        [] => Err("wallet row is missing".to_string()),
        _ => Err(format!("unexpected SELECT result: {:?}", result.rows)),
    }
}

/// Describes an answer a step did not expect.
pub(crate) fn unexpected(what: &str, input: &Input) -> String {
    match input {
        Input::Redis(Reply::Error(text)) => format!("{what}: Redis error: {text}"),
        Input::Sql(Err(PgError { code, message, .. })) => {
            format!("{what}: PostgreSQL error {code}: {message}")
        }
        Input::ConnectionError(text) => format!("{what}: connection error: {text}"),
        Input::RedisTimeout => format!("{what}: Redis did not answer in time"),
        other => format!("{what}: unexpected answer {other:?}"),
    }
}
