//! The safeguard file: a lock protocol in TOML, compiled to a [`UserSpec`].
//!
//! ```toml
//! name = "my-lease"
//! balance = "redis"                 # or "postgres" (the wallets row)
//!
//! [acquire]                         # leave out for no lock
//! command = ["SET", "{lock_key}", "{token}", "NX", "PX", "{ttl_ms}"]
//! got = "OK"                        # reply patterns: nil, integer, 1, bulk, array, error,
//! busy = "nil"                      # any, or a status word; a list for several
//!
//! [release]
//! script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
//! keys = ["{lock_key}"]
//! args = ["{token}"]
//! released = "1"
//! not_held = "0"
//!
//! [read]
//! command = ["GET", "{balance_key}"]
//!
//! [write]
//! command = ["SET", "{balance_key}", "{new_balance}"]
//! landed = "OK"
//!
//! [retry]
//! strategy = "jittered"             # none, jittered (5–15 ms), uniform, linear, exponential
//! ```
//!
//! Any Redis step may instead send a `pipeline`: commands back to back on the caller's one
//! connection, e.g. `[read] pipeline = [["WATCH", "{balance_key}"], ["GET", "{balance_key}"]]`
//! and `[write] pipeline = [["MULTI"], ["SET", "{balance_key}", "{new_balance}"], ["EXEC"]]`
//! with `landed = "array"`, `refused = "nil"`; its patterns judge the last command's reply.
//!
//! A SQL step may send several statements, in order, on the caller's one PostgreSQL
//! connection: `[read] sql = ["BEGIN", "SELECT balance FROM wallets WHERE id = {wallet_id}
//! FOR UPDATE"]` and `[write] sql = ["UPDATE wallets SET balance = $1 WHERE id =
//! {wallet_id}", "COMMIT"]` hold the row lock from the read to the commit. The read is judged
//! on its last statement (the query), the write on its one statement that changes the row;
//! the write's outcome is known when its last statement answered (its change lands at
//! `COMMIT`). A transaction begun must be committed by the end of the write; `ROLLBACK` and
//! `AND CHAIN` are refused: a caller that does not write (too little money, a lost lock, a
//! failed statement) sends `ROLLBACK` itself. PostgreSQL refusing the transaction (40001,
//! 40P01) is a refused write.
//!
//! Variables: `{lock_key}`, `{fence_key}`, `{balance_key}`, `{token}`, `{ttl_ms}`,
//! `{wallet_id}`, `{amount}`, and in the write only `{new_balance}` and `{fence}` (the
//! caller's fencing token, 0 without one). A SQL read returns one row of
//! `balance[, version]`; a SQL write names its `$n` in `params` (`new_balance`, `balance`,
//! `amount`, `fence`, `version`, `wallet_id`) and landed when it changed 1 row, was refused
//! when it changed 0. `[acquire] fence = "reply"` takes an integer "got" reply as the
//! fencing token. `[refresh]` (with `refreshed = ...`) makes a watchdog refresh the lease
//! every TTL/3 while the caller works.
//!
//! Every error names the file, line, column and field, e.g.
//! `my.toml:4:7: [acquire] got: "O K" is not a reply pattern ...`.

use serde::Deserialize;
use toml::Spanned;

use crate::postgres::Statement;
use crate::redis::command::BLOCKING_COMMANDS;
use crate::redis::{Command, ScriptId};

use super::retry::Retry;
use super::step::MAX_PIPELINE_COMMANDS;
use super::user::{
    AcquireSpec, Pattern, Piece, ReadSpec, RefreshSpec, ReleaseSpec, RequestTemplate, SqlParam,
    SqlSpec, SqlStatementSpec, Template, TxEffect, UserSpec, Var, Vars, WriteSpec,
    MAX_SQL_STATEMENTS,
};
use super::{BalanceIn, Keys};

/// The largest safeguard file read (bytes).
pub const MAX_FILE_BYTES: usize = 256 * 1024;

/// The longest wait a `[retry]` field may name (ms): one hour.
pub const MAX_RETRY_MS: u64 = 3_600_000;

/// A file that does not describe a safeguard: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The file, as named on the command line.
    pub file: String,
    /// 1-based line (0 when the error is about the whole file).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field, e.g. `[acquire] got`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}: {}", self.file, self.field, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}: {}",
                self.file, self.line, self.column, self.field, self.message
            )
        }
    }
}

impl std::error::Error for SpecError {}

/// One reply pattern or several.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "not a reply pattern: write one in quotes (e.g. \"OK\", \"nil\", \"1\") or a list of them"
)]
enum Patterns {
    One(String),
    Many(Vec<String>),
}

/// One SQL statement or several, sent in order.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "not SQL: write one statement in quotes, or a list of them in order (e.g. [\"BEGIN\", \"SELECT ...\"])"
)]
enum SqlText {
    One(String),
    Many(Vec<String>),
}

impl SqlText {
    fn statements(&self) -> Vec<&str> {
        match self {
            SqlText::One(one) => vec![one.as_str()],
            SqlText::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    name: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    about: Option<String>,
    balance: Spanned<String>,
    acquire: Option<Spanned<AcquireRepr>>,
    release: Option<Spanned<ReleaseRepr>>,
    refresh: Option<Spanned<RefreshRepr>>,
    read: Spanned<ReadRepr>,
    write: Spanned<WriteRepr>,
    retry: Option<Spanned<RetryRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AcquireRepr {
    command: Option<Spanned<Vec<String>>>,
    pipeline: Option<Spanned<Vec<Vec<String>>>>,
    script: Option<Spanned<String>>,
    keys: Option<Spanned<Vec<String>>>,
    args: Option<Spanned<Vec<String>>>,
    got: Spanned<Patterns>,
    busy: Spanned<Patterns>,
    fence: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseRepr {
    command: Option<Spanned<Vec<String>>>,
    pipeline: Option<Spanned<Vec<Vec<String>>>>,
    script: Option<Spanned<String>>,
    keys: Option<Spanned<Vec<String>>>,
    args: Option<Spanned<Vec<String>>>,
    released: Spanned<Patterns>,
    not_held: Spanned<Patterns>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RefreshRepr {
    command: Option<Spanned<Vec<String>>>,
    pipeline: Option<Spanned<Vec<Vec<String>>>>,
    script: Option<Spanned<String>>,
    keys: Option<Spanned<Vec<String>>>,
    args: Option<Spanned<Vec<String>>>,
    refreshed: Spanned<Patterns>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadRepr {
    command: Option<Spanned<Vec<String>>>,
    pipeline: Option<Spanned<Vec<Vec<String>>>>,
    sql: Option<Spanned<SqlText>>,
    #[serde(default)]
    params: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteRepr {
    command: Option<Spanned<Vec<String>>>,
    pipeline: Option<Spanned<Vec<Vec<String>>>>,
    script: Option<Spanned<String>>,
    keys: Option<Spanned<Vec<String>>>,
    args: Option<Spanned<Vec<String>>>,
    landed: Option<Spanned<Patterns>>,
    refused: Option<Spanned<Patterns>>,
    sql: Option<Spanned<SqlText>>,
    params: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryRepr {
    strategy: Spanned<String>,
    min_ms: Option<Spanned<u64>>,
    max_ms: Option<Spanned<u64>>,
    backoff_ms: Option<Spanned<u64>>,
    #[serde(default)]
    jitter: bool,
    acquire_timeout_ms: Option<Spanned<u64>>,
}

/// Where things are in the file, for errors.
struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl Source<'_> {
    fn at(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> SpecError {
        let start = span.start.min(self.text.len());
        let before = &self.text.as_bytes()[..start];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        SpecError {
            file: self.file.to_string(),
            line,
            column,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// The field a TOML error points at: the `[table]` above it and the key on its line.
    fn field_at(&self, offset: usize) -> String {
        let offset = offset.min(self.text.len());
        let text = &self.text.as_bytes()[..offset];
        let head = String::from_utf8_lossy(text);
        let table = head
            .lines()
            .rev()
            .map(str::trim)
            .find(|line| line.starts_with('[') && line.ends_with(']'))
            .unwrap_or("");
        let line_start = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let rest = String::from_utf8_lossy(&self.text.as_bytes()[line_start..]);
        let line = rest.lines().next().unwrap_or("");
        let key = line
            .split_once('=')
            .map(|(key, _)| key.trim().to_string())
            .filter(|key| !key.is_empty() && !key.starts_with('['))
            .unwrap_or_default();
        match (table.is_empty(), key.is_empty()) {
            (true, true) => "(file)".to_string(),
            (true, false) => key,
            (false, true) => table.to_string(),
            (false, false) => format!("{table} {key}"),
        }
    }
}

/// Sample values the file's commands are checked with when it is loaded.
fn sample_vars(keys: &Keys) -> Vars<'_> {
    Vars {
        keys,
        token: b"0123456789abcdef0123456789abcdef",
        ttl_ms: 100,
        wallet_id: 42,
        amount: 10,
        new_balance: Some(90),
        fence: Some(33),
    }
}

/// Compiles a safeguard file; `file` names it in errors.
pub fn compile(file: &str, text: &str) -> Result<UserSpec, SpecError> {
    let source = Source { file, text };
    if text.len() > MAX_FILE_BYTES {
        return Err(SpecError {
            file: file.to_string(),
            line: 0,
            column: 0,
            field: "(file)".to_string(),
            message: format!(
                "the file has {} bytes; a safeguard file may have at most {MAX_FILE_BYTES}",
                text.len()
            ),
        });
    }
    let repr: FileRepr = toml::from_str(text).map_err(|error| {
        let message = error.message().trim().to_string();
        let span = error.span().unwrap_or(0..0);
        // A table or key missing from the whole file: TOML points at the file's start, which
        // is no field of it.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'));
        if let (Some(name), 0) = (missing, span.start) {
            let field = if ["read", "write"].contains(&name) {
                format!("[{name}]")
            } else {
                name.to_string()
            };
            return SpecError {
                file: file.to_string(),
                line: 0,
                column: 0,
                field: field.clone(),
                message: format!(
                    "missing: every safeguard file has `name`, `balance`, a [read] and a \
                     [write]; add {field}"
                ),
            };
        }
        let field = source.field_at(span.start);
        source.at(span, &field, message)
    })?;
    let keys = Keys::for_wallet("", 42);
    let vars = sample_vars(&keys);

    let name = repr.name.get_ref().trim().to_string();
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.+".contains(&b));
    if !name_ok {
        return Err(source.at(
            repr.name.span(),
            "name",
            "a name of 1 to 64 letters, digits, '-', '_', '.' or '+' (it is used on the \
             command line and in file names)",
        ));
    }
    // Any name the built-in parser takes (`redlock-3-nodes`, `lease+jitter`, ...), not only
    // the catalogue's: a file must never stand in for a built-in row.
    if super::Safeguard::catalogue()
        .iter()
        .any(|s| s.name() == name)
        || matches!(super::Safeguard::parse(&name), Ok(found) if !matches!(found, super::Safeguard::User(_)))
    {
        return Err(source.at(
            repr.name.span(),
            "name",
            format!("{name:?} is a built-in safeguard's name; choose another"),
        ));
    }
    let balance_in = match repr.balance.get_ref().as_str() {
        "redis" => BalanceIn::Redis,
        "postgres" => BalanceIn::Postgres,
        other => {
            return Err(source.at(
                repr.balance.span(),
                "balance",
                format!("{other:?}: where the balance lives is \"redis\" or \"postgres\""),
            ))
        }
    };

    let acquire = match &repr.acquire {
        None => None,
        Some(acquire) => {
            let a = acquire.get_ref();
            let request = request(
                &source,
                "[acquire]",
                acquire.span(),
                &a.command,
                &a.pipeline,
                &a.script,
                &a.keys,
                &a.args,
                &vars,
            )?;
            let fence_from_reply = match &a.fence {
                None => false,
                Some(fence) if fence.get_ref() == "reply" => true,
                Some(fence) => {
                    return Err(source.at(
                        fence.span(),
                        "[acquire] fence",
                        "the only fence source is \"reply\" (an integer \"got\" reply)",
                    ))
                }
            };
            let got = reply_patterns(&source, "[acquire] got", &a.got, &request)?;
            let busy = reply_patterns(&source, "[acquire] busy", &a.busy, &request)?;
            Some(AcquireSpec {
                request,
                got,
                busy,
                fence_from_reply,
            })
        }
    };
    let release = match &repr.release {
        None => None,
        Some(release) => {
            let r = release.get_ref();
            let request = request(
                &source,
                "[release]",
                release.span(),
                &r.command,
                &r.pipeline,
                &r.script,
                &r.keys,
                &r.args,
                &vars,
            )?;
            let released = reply_patterns(&source, "[release] released", &r.released, &request)?;
            let not_held = reply_patterns(&source, "[release] not_held", &r.not_held, &request)?;
            Some(ReleaseSpec {
                request,
                released,
                not_held,
            })
        }
    };
    let refresh = match &repr.refresh {
        None => None,
        Some(refresh) => {
            let r = refresh.get_ref();
            let request = request(
                &source,
                "[refresh]",
                refresh.span(),
                &r.command,
                &r.pipeline,
                &r.script,
                &r.keys,
                &r.args,
                &vars,
            )?;
            let refreshed = reply_patterns(&source, "[refresh] refreshed", &r.refreshed, &request)?;
            Some(RefreshSpec { request, refreshed })
        }
    };
    match (&acquire, &repr.release, &repr.refresh) {
        (Some(_), None, _) => {
            let span = repr.acquire.as_ref().map_or(0..0, Spanned::span);
            return Err(source.at(
                span,
                "[release]",
                "a lock that is acquired must be released: add a [release] table",
            ));
        }
        (None, Some(release), _) => {
            return Err(source.at(
                release.span(),
                "[release]",
                "there is no [acquire]: a release needs a lock to give back",
            ))
        }
        (None, _, Some(refresh)) => {
            return Err(source.at(
                refresh.span(),
                "[refresh]",
                "there is no [acquire]: a refresh needs a lock to extend",
            ))
        }
        _ => {}
    }

    // The fencing token exists from the acquire's reply on, and only the write is told it (a
    // script's source is not a template: only its keys and args are).
    let fence_at = |table: &str,
                    command: &Option<Spanned<Vec<String>>>,
                    pipeline: &Option<Spanned<Vec<Vec<String>>>>,
                    keys: &Option<Spanned<Vec<String>>>,
                    args: &Option<Spanned<Vec<String>>>|
     -> Result<(), SpecError> {
        let names = |words: &[String]| words.iter().any(|w| w.contains("{fence}"));
        let found = [
            (
                "command",
                command
                    .as_ref()
                    .filter(|c| names(c.get_ref()))
                    .map(Spanned::span),
            ),
            (
                "pipeline",
                pipeline
                    .as_ref()
                    .filter(|p| p.get_ref().iter().any(|c| names(c)))
                    .map(Spanned::span),
            ),
            (
                "keys",
                keys.as_ref()
                    .filter(|k| names(k.get_ref()))
                    .map(Spanned::span),
            ),
            (
                "args",
                args.as_ref()
                    .filter(|a| names(a.get_ref()))
                    .map(Spanned::span),
            ),
        ]
        .into_iter()
        .find_map(|(field, span)| span.map(|span| (field, span)));
        match found {
            Some((field, span)) => Err(source.at(
                span,
                &format!("{table} {field}"),
                "{fence} is the caller's fencing token, known to the [write] only; the fence \
                 counter's key is {fence_key}",
            )),
            None => Ok(()),
        }
    };
    if let Some(a) = &repr.acquire {
        let a = a.get_ref();
        fence_at("[acquire]", &a.command, &a.pipeline, &a.keys, &a.args)?;
    }
    if let Some(r) = &repr.release {
        let r = r.get_ref();
        fence_at("[release]", &r.command, &r.pipeline, &r.keys, &r.args)?;
    }
    if let Some(r) = &repr.refresh {
        let r = r.get_ref();
        fence_at("[refresh]", &r.command, &r.pipeline, &r.keys, &r.args)?;
    }
    {
        let r = repr.read.get_ref();
        fence_at("[read]", &r.command, &r.pipeline, &None, &None)?;
    }

    let read = {
        let r = repr.read.get_ref();
        let redis = r.command.is_some() || r.pipeline.is_some();
        match (redis, &r.sql) {
            (true, None) => {
                if balance_in != BalanceIn::Redis {
                    let (span, field) = match (&r.command, &r.pipeline) {
                        (Some(command), _) => (command.span(), "[read] command"),
                        (None, Some(pipeline)) => (pipeline.span(), "[read] pipeline"),
                        (None, None) => (repr.read.span(), "[read]"),
                    };
                    return Err(source.at(
                        span,
                        field,
                        "the balance is in postgres: read it with `sql = \"SELECT ...\"`",
                    ));
                }
                ReadSpec::Redis(request(
                    &source,
                    "[read]",
                    repr.read.span(),
                    &r.command,
                    &r.pipeline,
                    &None,
                    &None,
                    &None,
                    &vars,
                )?)
            }
            (false, Some(sql)) => {
                if balance_in != BalanceIn::Postgres {
                    return Err(source.at(
                        sql.span(),
                        "[read] sql",
                        "the balance is in redis: read it with `command = [\"GET\", \"{balance_key}\"]`",
                    ));
                }
                ReadSpec::Sql(sql_spec(&source, "[read]", sql, &r.params, false)?)
            }
            _ => {
                return Err(source.at(
                    repr.read.span(),
                    "[read]",
                    "give either `command` or `pipeline` (a Redis balance) or `sql` (a PostgreSQL \
                     balance)",
                ))
            }
        }
    };
    let write = {
        let w = repr.write.get_ref();
        let redis = w.command.is_some() || w.script.is_some() || w.pipeline.is_some();
        match (redis, &w.sql) {
            (true, None) => {
                if balance_in != BalanceIn::Redis {
                    return Err(source.at(
                        repr.write.span(),
                        "[write]",
                        "the balance is in postgres: write it with `sql = \"UPDATE ...\"`",
                    ));
                }
                let request = request(
                    &source,
                    "[write]",
                    repr.write.span(),
                    &w.command,
                    &w.pipeline,
                    &w.script,
                    &w.keys,
                    &w.args,
                    &vars,
                )?;
                let landed = match &w.landed {
                    Some(landed) => reply_patterns(&source, "[write] landed", landed, &request)?,
                    None => {
                        let default = vec![Pattern::Status("OK".to_string())];
                        can_match(
                            &source,
                            "[write] landed",
                            repr.write.span(),
                            &request,
                            &default,
                            true,
                        )?;
                        default
                    }
                };
                let refused = match &w.refused {
                    Some(refused) => reply_patterns(&source, "[write] refused", refused, &request)?,
                    None => Vec::new(),
                };
                WriteSpec::Redis {
                    request,
                    landed,
                    refused,
                }
            }
            (false, Some(sql)) => {
                if balance_in != BalanceIn::Postgres {
                    return Err(source.at(
                        sql.span(),
                        "[write] sql",
                        "the balance is in redis: write it with `command = [\"SET\", \"{balance_key}\", \"{new_balance}\"]`",
                    ));
                }
                for (field, value) in [("landed", &w.landed), ("refused", &w.refused)] {
                    if let Some(value) = value {
                        return Err(source.at(
                            value.span(),
                            &format!("[write] {field}"),
                            "a SQL write landed when it changed 1 row and was refused when it \
                             changed 0; patterns are for Redis replies",
                        ));
                    }
                }
                WriteSpec::Sql(sql_spec(&source, "[write]", sql, &w.params, true)?)
            }
            _ => {
                return Err(source.at(
                    repr.write.span(),
                    "[write]",
                    "give either `command`/`pipeline`/`script` (a Redis balance) or `sql` (a \
                     PostgreSQL balance)",
                ))
            }
        }
    };

    if let (ReadSpec::Sql(read_sql), WriteSpec::Sql(write_sql)) = (&read, &write) {
        let span = |sql: &Option<Spanned<SqlText>>| sql.as_ref().map_or(0..0, Spanned::span);
        check_blocks(
            &source,
            (read_sql, span(&repr.read.get_ref().sql)),
            (write_sql, span(&repr.write.get_ref().sql)),
        )?;
    }
    if let (Some(retry), None) = (&repr.retry, &repr.acquire) {
        return Err(source.at(
            retry.span(),
            "[retry]",
            "there is no [acquire]: the retry policy is how callers wait for a busy lock",
        ));
    }
    if let Some(retry) = &repr.retry {
        // A field the strategy does not read is a mistake, not a setting.
        let r = retry.get_ref();
        let uses: &[&str] = match r.strategy.get_ref().as_str() {
            "uniform" | "exponential" => &["min_ms", "max_ms"],
            "linear" => &["backoff_ms"],
            _ => &[],
        };
        for (field, value) in [
            ("min_ms", &r.min_ms),
            ("max_ms", &r.max_ms),
            ("backoff_ms", &r.backoff_ms),
        ] {
            if let Some(value) = value {
                if !uses.contains(&field) {
                    return Err(source.at(
                        value.span(),
                        &format!("[retry] {field}"),
                        format!(
                            "the {:?} strategy does not use `{field}`; uniform and exponential \
                             take min_ms and max_ms, linear takes backoff_ms",
                            r.strategy.get_ref()
                        ),
                    ));
                }
            }
        }
    }
    // A write that names the fencing token needs an acquire that hands one out.
    let write_names_fence = match &write {
        WriteSpec::Redis { request, .. } => request.uses(Var::Fence),
        WriteSpec::Sql(sql) => sql.params.contains(&SqlParam::Fence),
    };
    let fence_source = acquire.as_ref().is_some_and(|a| a.fence_from_reply);
    if write_names_fence && !fence_source {
        return Err(source.at(
            repr.write.span(),
            "[write]",
            "the write names the fencing token ({fence} or the `fence` parameter), but no \
             acquire hands one out: add `fence = \"reply\"` to an [acquire] whose \"got\" \
             reply is the token",
        ));
    }

    let (retry, jitter, acquire_timeout_ms) = match &repr.retry {
        None => (Retry::Jittered5To15, false, None),
        Some(retry) => {
            let r = retry.get_ref();
            let need = |value: &Option<Spanned<u64>>, field: &str| {
                let Some(value) = value else {
                    return Err(source.at(
                        r.strategy.span(),
                        &format!("[retry] {field}"),
                        format!("the {:?} strategy needs `{field}`", r.strategy.get_ref()),
                    ));
                };
                if *value.get_ref() > MAX_RETRY_MS {
                    return Err(source.at(
                        value.span(),
                        &format!("[retry] {field}"),
                        format!(
                            "{} ms is more than a run can wait; at most {MAX_RETRY_MS} (one hour)",
                            value.get_ref()
                        ),
                    ));
                }
                Ok(*value.get_ref())
            };
            let strategy = match r.strategy.get_ref().as_str() {
                "none" => Retry::NoRetry,
                "jittered" => Retry::Jittered5To15,
                "uniform" => {
                    let (min_ms, max_ms) = (need(&r.min_ms, "min_ms")?, need(&r.max_ms, "max_ms")?);
                    if min_ms == 0 || min_ms > max_ms {
                        return Err(source.at(
                            r.min_ms.as_ref().map_or(r.strategy.span(), Spanned::span),
                            "[retry] min_ms",
                            format!("need 1 <= min_ms <= max_ms (got {min_ms} and {max_ms})"),
                        ));
                    }
                    Retry::Uniform { min_ms, max_ms }
                }
                "linear" => {
                    let backoff_ms = need(&r.backoff_ms, "backoff_ms")?;
                    if backoff_ms == 0 {
                        return Err(source.at(
                            r.backoff_ms
                                .as_ref()
                                .map_or(r.strategy.span(), Spanned::span),
                            "[retry] backoff_ms",
                            "a linear backoff of 0 ms never waits; for no retry at all write \
                             strategy = \"none\"",
                        ));
                    }
                    Retry::Linear { backoff_ms }
                }
                "exponential" => Retry::Exponential {
                    min_ms: need(&r.min_ms, "min_ms")?,
                    max_ms: need(&r.max_ms, "max_ms")?,
                    count: 0,
                },
                other => {
                    return Err(source.at(
                        r.strategy.span(),
                        "[retry] strategy",
                        format!(
                            "{other:?}: the strategies are none, jittered (5 to 15 ms), uniform \
                             (min_ms, max_ms), linear (backoff_ms), exponential (min_ms, max_ms)"
                        ),
                    ))
                }
            };
            let timeout = r.acquire_timeout_ms.as_ref().map(|t| *t.get_ref());
            if let Some(t) = &r.acquire_timeout_ms {
                if *t.get_ref() == 0 || *t.get_ref() > MAX_RETRY_MS {
                    return Err(source.at(
                        t.span(),
                        "[retry] acquire_timeout_ms",
                        "between 1 and 3600000 ms",
                    ));
                }
            }
            (strategy, r.jitter, timeout)
        }
    };

    Ok(UserSpec {
        name,
        file_text: text.to_string(),
        balance_in,
        acquire,
        release,
        refresh,
        read,
        write,
        retry,
        jitter,
        acquire_timeout_ms,
    })
}

fn patterns(
    source: &Source<'_>,
    field: &str,
    value: &Spanned<Patterns>,
) -> Result<Vec<Pattern>, SpecError> {
    let texts: Vec<&String> = match value.get_ref() {
        Patterns::One(one) => vec![one],
        Patterns::Many(many) => many.iter().collect(),
    };
    if texts.is_empty() {
        return Err(source.at(value.span(), field, "give at least one reply pattern"));
    }
    texts
        .into_iter()
        .map(|text| Pattern::parse(text).map_err(|error| source.at(value.span(), field, error)))
        .collect()
}

/// A field's reply patterns, refused when `request`'s judged reply can never match one.
fn reply_patterns(
    source: &Source<'_>,
    field: &str,
    value: &Spanned<Patterns>,
    request: &RequestTemplate,
) -> Result<Vec<Pattern>, SpecError> {
    let parsed = patterns(source, field, value)?;
    can_match(source, field, value.span(), request, &parsed, false)?;
    Ok(parsed)
}

/// Commands whose reply is always an integer (or an error).
const INTEGER_REPLIES: [&str; 22] = [
    "WAIT",
    "INCR",
    "INCRBY",
    "DECR",
    "DECRBY",
    "DEL",
    "UNLINK",
    "EXISTS",
    "EXPIRE",
    "PEXPIRE",
    "EXPIREAT",
    "PEXPIREAT",
    "PERSIST",
    "TTL",
    "PTTL",
    "SETNX",
    "HSET",
    "HINCRBY",
    "HEXISTS",
    "HDEL",
    "PUBLISH",
    "SPUBLISH",
];

/// Refuses a pattern that the judged reply of `request` can never match: the reply of a
/// command (or a pipeline's last command, outside a transaction) that always answers an
/// integer cannot be `nil`, a bulk string, an array or a status word. `default` says the
/// pattern is the one taken when the field is not given.
fn can_match(
    source: &Source<'_>,
    field: &str,
    span: std::ops::Range<usize>,
    request: &RequestTemplate,
    patterns: &[Pattern],
    default: bool,
) -> Result<(), SpecError> {
    let judged = match request {
        RequestTemplate::Command(argv) => argv.first(),
        RequestTemplate::Pipeline(commands) => {
            if commands
                .iter()
                .any(|argv| argv.first().is_some_and(|word| word.is_word("multi")))
            {
                return Ok(());
            }
            commands.last().and_then(|argv| argv.first())
        }
        RequestTemplate::Script { .. } => None,
    };
    let Some(name) =
        judged.and_then(|word| INTEGER_REPLIES.into_iter().find(|name| word.is_word(name)))
    else {
        return Ok(());
    };
    let never = patterns.iter().find(|pattern| {
        matches!(
            pattern,
            Pattern::Nil | Pattern::AnyBulk | Pattern::Array | Pattern::Status(_)
        )
    });
    match never {
        None => Ok(()),
        Some(pattern) => Err(source.at(
            span,
            field,
            format!(
                "{name} always answers an integer (or an error), so the pattern {}{} can never \
                 match its reply; use `integer`, an integer such as 1, `error` or `any`",
                pattern.describe(),
                if default {
                    " (taken when the field is not given)"
                } else {
                    ""
                }
            ),
        )),
    }
}

/// Splits `{var}`s out of a word.
fn template(
    source: &Source<'_>,
    field: &str,
    span: std::ops::Range<usize>,
    word: &str,
) -> Result<Template, SpecError> {
    let mut pieces = Vec::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        match Var::ALL.iter().find(|(_, n)| *n == name) {
            Some((var, _)) => {
                if open > 0 {
                    pieces.push(Piece::Text(rest[..open].to_string()));
                }
                pieces.push(Piece::Var(*var));
            }
            None if name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                && !name.is_empty() =>
            {
                let known: Vec<String> = Var::ALL.iter().map(|(_, n)| format!("{{{n}}}")).collect();
                return Err(source.at(
                    span,
                    field,
                    format!("unknown variable {{{name}}}; known: {}", known.join(", ")),
                ));
            }
            // Not a variable (a hash tag such as `{wallet:42}`): literal text.
            None => pieces.push(Piece::Text(rest[..open + close + 1].to_string())),
        }
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(Template(pieces))
}

fn words(
    source: &Source<'_>,
    field: &str,
    value: &Spanned<Vec<String>>,
) -> Result<Vec<Template>, SpecError> {
    value
        .get_ref()
        .iter()
        .map(|word| template(source, field, value.span(), word))
        .collect()
}

fn command_template(
    source: &Source<'_>,
    field: &str,
    command: &Spanned<Vec<String>>,
    vars: &Vars<'_>,
) -> Result<RequestTemplate, SpecError> {
    command_words(source, field, command, vars).map(RequestTemplate::Command)
}

/// A command's words, checked by Redis's parser with sample values.
fn command_words(
    source: &Source<'_>,
    field: &str,
    command: &Spanned<Vec<String>>,
    vars: &Vars<'_>,
) -> Result<Vec<Template>, SpecError> {
    if command.get_ref().is_empty() {
        return Err(source.at(command.span(), field, "an empty command"));
    }
    let argv = words(source, field, command)?;
    let rendered: Vec<Vec<u8>> = argv.iter().map(|w| w.render(vars)).collect();
    let whole_server = match Command::parse(&rendered) {
        Ok(
            Command::FlushAll | Command::FlushDb | Command::ScriptFlush | Command::Housekeeping(_),
        ) => true,
        Ok(Command::Strings(argv)) => argv[0].eq_ignore_ascii_case(b"swapdb"),
        // Subscribing turns the connection into a listener; `PUBSUB` reads the whole server.
        Ok(Command::PubSub(argv)) => !argv[0].eq_ignore_ascii_case(b"spublish"),
        _ => false,
    };
    if whole_server {
        return Err(source.at(
            command.span(),
            field,
            format!(
                "{} acts on the connection or the whole server, not on the run's keys; a \
                 safeguard file may not send it (in real mode it would reach your Redis)",
                String::from_utf8_lossy(&rendered[0]).to_uppercase()
            ),
        ));
    }
    let blocking = BLOCKING_COMMANDS
        .iter()
        .any(|name| rendered[0].eq_ignore_ascii_case(name.as_bytes()));
    if blocking {
        return Err(source.at(
            command.span(),
            field,
            format!(
                "{} blocks its connection until another client pushes; a safeguard's step must \
                 be answered at once (use LPOP/RPOP, LMOVE or ZPOPMIN/ZPOPMAX, and a retry \
                 policy to wait)",
                String::from_utf8_lossy(&rendered[0]).to_uppercase()
            ),
        ));
    }
    if let Err(reply) = Command::parse(&rendered) {
        return Err(source.at(
            command.span(),
            field,
            format!(
                "not a command the stand-in runs: {} (commands: GET, SET, SETNX, DEL, INCR, \
                 PEXPIRE, EXPIRE, PERSIST, GETDEL, INCRBY, DECRBY, DELEX, EVAL, ...; use `script` \
                 for Lua)",
                reply.describe()
            ),
        ));
    }
    Ok(argv)
}

#[allow(clippy::too_many_arguments)]
fn request(
    source: &Source<'_>,
    table: &str,
    span: std::ops::Range<usize>,
    command: &Option<Spanned<Vec<String>>>,
    pipeline: &Option<Spanned<Vec<Vec<String>>>>,
    script: &Option<Spanned<String>>,
    keys: &Option<Spanned<Vec<String>>>,
    args: &Option<Spanned<Vec<String>>>,
    vars: &Vars<'_>,
) -> Result<RequestTemplate, SpecError> {
    if let Some(pipeline) = pipeline {
        if command.is_some() || script.is_some() {
            return Err(source.at(
                pipeline.span(),
                &format!("{table} pipeline"),
                "give one of `command`, `pipeline` or `script`, not several",
            ));
        }
        for (name, value) in [("keys", keys), ("args", args)] {
            if let Some(value) = value {
                return Err(source.at(
                    value.span(),
                    &format!("{table} {name}"),
                    "KEYS and ARGV are for a `script`; a pipeline lists each command's words",
                ));
            }
        }
        return pipeline_template(source, &format!("{table} pipeline"), pipeline, vars);
    }
    match (command, script) {
        (Some(command), None) => {
            for (name, value) in [("keys", keys), ("args", args)] {
                if let Some(value) = value {
                    return Err(source.at(
                        value.span(),
                        &format!("{table} {name}"),
                        "KEYS and ARGV are for a `script`; a command lists its words in `command`",
                    ));
                }
            }
            command_template(source, &format!("{table} command"), command, vars)
        }
        (None, Some(script)) => {
            let text = script.get_ref();
            let field = format!("{table} script");
            let lower = text.to_ascii_lowercase();
            if let Some(word) = ["flushall", "flushdb"].iter().find(|w| lower.contains(*w)) {
                return Err(source.at(
                    script.span(),
                    &field,
                    format!(
                        "the script names {}, which empties the whole server, not the run's \
                         keys; a safeguard file may not (in real mode it would reach your Redis)",
                        word.to_uppercase()
                    ),
                ));
            }
            let builtin = ScriptId::ALL
                .into_iter()
                .find(|id| id.source().as_bytes() == text.as_bytes());
            let script_id = match builtin {
                Some(id) => id,
                None => {
                    if let Err(reply) = crate::redis::lua::compile(text.as_bytes(), "user_script") {
                        return Err(source.at(
                            script.span(),
                            &field,
                            format!("Lua does not compile it: {}", reply.describe()),
                        ));
                    }
                    let name = format!("{}{}", table.trim_matches(['[', ']']), "");
                    crate::intern::intern(&name, text)
                        .map(ScriptId::User)
                        .map_err(|error| source.at(script.span(), &field, error.to_string()))?
                }
            };
            let none = Spanned::new(0..0, Vec::new());
            let keys = words(
                source,
                &format!("{table} keys"),
                keys.as_ref().unwrap_or(&none),
            )?;
            let args = words(
                source,
                &format!("{table} args"),
                args.as_ref().unwrap_or(&none),
            )?;
            Ok(RequestTemplate::Script {
                script: script_id,
                keys,
                args,
            })
        }
        _ => Err(source.at(
            span,
            table,
            "give either `command = [\"WORD\", ...]`, `pipeline = [[\"WORD\", ...], ...]` or \
             `script = \"...Lua...\"` (with `keys` and `args`)",
        )),
    }
}

/// Commands sent back to back on one connection (`MULTI`/`EXEC`, `WATCH` before a read); the
/// reply patterns judge the last command's reply.
fn pipeline_template(
    source: &Source<'_>,
    field: &str,
    pipeline: &Spanned<Vec<Vec<String>>>,
    vars: &Vars<'_>,
) -> Result<RequestTemplate, SpecError> {
    let commands = pipeline.get_ref();
    if commands.is_empty() || commands.len() > MAX_PIPELINE_COMMANDS {
        return Err(source.at(
            pipeline.span(),
            field,
            format!(
                "a pipeline holds 1 to {MAX_PIPELINE_COMMANDS} commands, not {}",
                commands.len()
            ),
        ));
    }
    let mut templates = Vec::with_capacity(commands.len());
    for (index, command) in commands.iter().enumerate() {
        let one = Spanned::new(pipeline.span(), command.clone());
        let field = format!("{field} command {}", index + 1);
        templates.push(command_words(source, &field, &one, vars)?);
    }
    Ok(RequestTemplate::Pipeline(templates))
}

fn sql_spec(
    source: &Source<'_>,
    table: &str,
    sql: &Spanned<SqlText>,
    params: &Option<Spanned<Vec<String>>>,
    is_write: bool,
) -> Result<SqlSpec, SpecError> {
    let field = format!("{table} sql");
    let texts = sql.get_ref().statements();
    if texts.is_empty() || texts.len() > MAX_SQL_STATEMENTS {
        return Err(source.at(
            sql.span(),
            &field,
            format!(
                "a SQL step sends 1 to {MAX_SQL_STATEMENTS} statements, not {}",
                texts.len()
            ),
        ));
    }
    let keys = Keys::for_wallet("", 42);
    let mut statements = Vec::with_capacity(texts.len());
    let mut highest = 0;
    for (index, text) in texts.iter().enumerate() {
        let field = statement_field(table, texts.len(), index);
        let template = template(source, &field, sql.span(), text)?;
        for piece in &template.0 {
            if let Piece::Var(var) = piece {
                if *var != Var::WalletId {
                    return Err(source.at(
                        sql.span(),
                        &field,
                        "SQL names its values as $1, $2, ... (listed in `params`); the only \
                         {variable} in SQL text is {wallet_id}",
                    ));
                }
            }
        }
        let rendered = String::from_utf8_lossy(&template.render(&sample_vars(&keys))).into_owned();
        let parsed = match crate::postgres::parse_general(&rendered) {
            Ok(parsed) => parsed,
            Err(error) if error.message.contains("multiple commands") => {
                return Err(source.at(
                    sql.span(),
                    &field,
                    "one statement per entry (this one holds none, or several): list them in \
                     order, e.g. sql = [\"BEGIN\", \"SELECT balance FROM wallets WHERE id = \
                     {wallet_id} FOR UPDATE\"]",
                ))
            }
            Err(error) => {
                return Err(source.at(sql.span(), &field, format!("not SQL: {}", error.message)))
            }
        };
        let effect = tx_effect(&parsed.ast).map_err(|why| source.at(sql.span(), &field, why))?;
        match Statement::text(&rendered) {
            Ok(statement) => highest = highest.max(statement.param_count()),
            Err(error) => return Err(source.at(sql.span(), &field, error)),
        }
        statements.push(SqlStatementSpec {
            sql: template,
            effect,
        });
    }
    let data = statements
        .iter()
        .filter(|s| s.effect == TxEffect::Data)
        .count();
    if !is_write && statements.last().map(|s| s.effect) != Some(TxEffect::Data) {
        let field = statement_field(table, statements.len(), statements.len() - 1);
        return Err(source.at(
            sql.span(),
            &field,
            "the read's last statement is the query whose row is balance[, version]; a \
             transaction statement (BEGIN, COMMIT, SAVEPOINT, SET, LOCK) cannot end it",
        ));
    }
    if is_write && data != 1 {
        return Err(source.at(
            sql.span(),
            &field,
            format!(
                "the write is judged on its one statement that changes the row (landed when it \
                 changed 1 row, refused when 0); this write has {data} such statements besides \
                 BEGIN, COMMIT, SAVEPOINT, SET and LOCK"
            ),
        ));
    }
    let mut names = Vec::new();
    if let Some(params) = params {
        for name in params.get_ref() {
            match SqlParam::ALL.iter().find(|(_, n)| n == name) {
                Some((param, _)) => names.push(*param),
                None => {
                    let known: Vec<&str> = SqlParam::ALL.iter().map(|(_, n)| *n).collect();
                    return Err(source.at(
                        params.span(),
                        &format!("{table} params"),
                        format!("unknown parameter {name:?}; known: {}", known.join(", ")),
                    ));
                }
            }
        }
        if !is_write
            && names.iter().any(|p| {
                matches!(
                    p,
                    SqlParam::NewBalance | SqlParam::Balance | SqlParam::Fence | SqlParam::Version
                )
            })
        {
            return Err(source.at(
                params.span(),
                &format!("{table} params"),
                "the read comes before the balance, fence and version are known: only amount \
                 and wallet_id",
            ));
        }
    }
    if highest != names.len() {
        let span = params.as_ref().map_or(sql.span(), Spanned::span);
        return Err(source.at(
            span,
            &format!("{table} params"),
            format!(
                "the statements use ${highest} as their highest parameter but `params` names {}",
                names.len()
            ),
        ));
    }
    Ok(SqlSpec {
        statements,
        params: names,
    })
}

/// The field an error about statement `index` (of `count`) of a SQL step names: the
/// statement when there are several, e.g. `[read] sql statement 2`.
fn statement_field(table: &str, count: usize, index: usize) -> String {
    match count {
        1 => format!("{table} sql"),
        _ => format!("{table} sql statement {}", index + 1),
    }
}

/// What a statement does to the transaction block; refused: statements that would undo or
/// outlive the caller's own transaction.
fn tx_effect(ast: &sqlparser::ast::Statement) -> Result<TxEffect, String> {
    use sqlparser::ast::Statement as S;
    Ok(match ast {
        S::StartTransaction { .. } => TxEffect::Begins,
        S::Commit { chain: false, .. } => TxEffect::Ends,
        S::Commit { chain: true, .. } | S::Rollback { chain: true, .. } => {
            return Err(
                "AND CHAIN opens a new transaction the caller never ends; leave it out".to_string(),
            )
        }
        S::Rollback {
            savepoint: None, ..
        } => {
            return Err(
                "ROLLBACK would undo the caller's own write; the caller rolls back by \
                        itself when it does not write (too little money, a lost lock, an error)"
                    .to_string(),
            )
        }
        S::Rollback { .. }
        | S::Savepoint { .. }
        | S::ReleaseSavepoint { .. }
        | S::Set(_)
        | S::Reset(_)
        | S::Lock(_) => TxEffect::Control,
        _ => TxEffect::Data,
    })
}

/// The transaction blocks of the read and the write, in order: every `BEGIN` is ended by a
/// `COMMIT` before the write is done, none begins inside another, none ends what is not open.
fn check_blocks(
    source: &Source<'_>,
    read: (&SqlSpec, std::ops::Range<usize>),
    write: (&SqlSpec, std::ops::Range<usize>),
) -> Result<(), SpecError> {
    let mut open: Option<String> = None;
    for (table, (spec, span)) in [("[read]", &read), ("[write]", &write)] {
        for (index, statement) in spec.statements.iter().enumerate() {
            let here = statement_field(table, spec.statements.len(), index);
            match (statement.effect, &open) {
                (TxEffect::Begins, Some(began)) => {
                    return Err(source.at(
                        span.clone(),
                        &here,
                        format!(
                            "begins a transaction inside the one {began} began (PostgreSQL \
                             only warns and goes on); remove one of them"
                        ),
                    ))
                }
                (TxEffect::Begins, None) => open = Some(here),
                (TxEffect::Ends, None) => {
                    return Err(source.at(
                        span.clone(),
                        &here,
                        "ends a transaction that is not open: add \"BEGIN\" before it (in the \
                         read, to hold what the read locked until the write) or remove it",
                    ))
                }
                (TxEffect::Ends, Some(_)) => open = None,
                (TxEffect::Control | TxEffect::Data, _) => {}
            }
        }
    }
    match open {
        Some(began) => Err(source.at(
            write.1,
            "[write] sql",
            format!("the transaction {began} begins is never ended: end the write with \"COMMIT\""),
        )),
        None => Ok(()),
    }
}
