//! The statements the safeguards send, as typed values and as SQL text.
//!
//! [`Statement::sql`] renders the canonical text (with `$n` placeholders) that clients send;
//! [`Statement::parse`] maps SQL text received over the wire back onto a statement, tolerant
//! of case and white space, and answers anything else with SQLSTATE 0A000 naming what is
//! unsupported.

use super::engine::Isolation;
use super::error::PgError;
use super::lexer::{tokenize, Token};

/// The row lock of a `SELECT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowLock {
    /// `FOR UPDATE`: wait for the row lock.
    ForUpdate,
    /// `FOR UPDATE NOWAIT`: fail with 55P03 if the row is locked.
    ForUpdateNowait,
    /// `FOR UPDATE SKIP LOCKED`: leave a locked row out.
    ForUpdateSkipLocked,
}

/// The extra conditions of the fenced write `UPDATE wallets SET balance = $1, fence = $2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteGuard {
    /// No condition: the write always lands (tutorial step 5 without fencing).
    Unfenced,
    /// `AND fence < $2`: refuse a token at or below the stored fence (step 5).
    FenceBelow,
    /// `AND fence < $2 AND fence = $3`: also require the version read (step 6 check-and-set).
    FenceBelowAndEqual,
    /// `AND fence = $3`: check-and-set alone, the version read must be unchanged; the write
    /// stores `$2` (a random token, `redlock-cas`) as the new version.
    FenceEqual,
}

/// A statement the stand-in executes. Parameters are `bigint`s, passed separately.
///
/// Serialised as its SQL text ([`Statement::sql`]) and read back with [`Statement::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Statement {
    /// `BEGIN`.
    Begin,
    /// `BEGIN ISOLATION LEVEL <level>`.
    BeginIsolated {
        /// The isolation level of the block.
        isolation: Isolation,
    },
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// `SELECT balance, fence FROM wallets WHERE id = <id> [FOR UPDATE [NOWAIT|SKIP LOCKED]]`.
    Select {
        /// The wallet id (a literal in the text).
        id: i64,
        /// The row lock, if any.
        lock: Option<RowLock>,
    },
    /// `UPDATE wallets SET balance = $1, fence = $2 WHERE id = <id> [guard]`.
    WriteFenced {
        /// The wallet id.
        id: i64,
        /// The fencing conditions.
        guard: WriteGuard,
    },
    /// `UPDATE wallets SET balance = $1 WHERE id = <id>` (inside a `FOR UPDATE` transaction).
    WriteBalance {
        /// The wallet id.
        id: i64,
    },
    /// `UPDATE wallets SET balance = balance - $1 WHERE id = <id> AND balance >= $1`:
    /// the single-statement conditional debit.
    Debit {
        /// The wallet id.
        id: i64,
    },
    /// Any other statement, from a user's safeguard file: its SQL text, interned (it runs
    /// through the general SQL path; its `$n` parameters are `bigint`s).
    Text(crate::intern::TextId),
}

impl Statement {
    /// The canonical SQL text, with `$1`, `$2`, ... placeholders.
    pub fn sql(&self) -> String {
        match *self {
            Statement::Begin => "BEGIN".to_string(),
            Statement::BeginIsolated { isolation } => {
                format!("BEGIN ISOLATION LEVEL {}", isolation.sql())
            }
            Statement::Commit => "COMMIT".to_string(),
            Statement::Rollback => "ROLLBACK".to_string(),
            Statement::Select { id, lock } => {
                let lock_clause = match lock {
                    None => "",
                    Some(RowLock::ForUpdate) => " FOR UPDATE",
                    Some(RowLock::ForUpdateNowait) => " FOR UPDATE NOWAIT",
                    Some(RowLock::ForUpdateSkipLocked) => " FOR UPDATE SKIP LOCKED",
                };
                format!("SELECT balance, fence FROM wallets WHERE id = {id}{lock_clause}")
            }
            Statement::WriteFenced { id, guard } => {
                let guard_clause = match guard {
                    WriteGuard::Unfenced => "",
                    WriteGuard::FenceBelow => " AND fence < $2",
                    WriteGuard::FenceBelowAndEqual => " AND fence < $2 AND fence = $3",
                    WriteGuard::FenceEqual => " AND fence = $3",
                };
                format!("UPDATE wallets SET balance = $1, fence = $2 WHERE id = {id}{guard_clause}")
            }
            Statement::WriteBalance { id } => {
                format!("UPDATE wallets SET balance = $1 WHERE id = {id}")
            }
            Statement::Debit { id } => format!(
                "UPDATE wallets SET balance = balance - $1 WHERE id = {id} AND balance >= $1"
            ),
            Statement::Text(id) => crate::intern::get(id).text.to_string(),
        }
    }

    /// How many `$n` parameters the statement takes.
    pub fn param_count(&self) -> usize {
        match self {
            Statement::Begin
            | Statement::BeginIsolated { .. }
            | Statement::Commit
            | Statement::Rollback => 0,
            Statement::Select { .. } => 0,
            Statement::WriteFenced { guard, .. } => match guard {
                WriteGuard::Unfenced | WriteGuard::FenceBelow => 2,
                WriteGuard::FenceBelowAndEqual | WriteGuard::FenceEqual => 3,
            },
            Statement::WriteBalance { .. } | Statement::Debit { .. } => 1,
            Statement::Text(id) => highest_param(crate::intern::get(*id).text),
        }
    }

    /// The statement `sql` stands for: a typed one when the text is one of them (so a user's
    /// file that spells a tutorial statement runs it exactly as the built-in safeguard does),
    /// else [`Statement::Text`].
    pub fn text(sql: &str) -> Result<Statement, String> {
        if let Ok(statement) = Statement::parse(sql) {
            if statement.sql() == sql {
                return Ok(statement);
            }
        }
        crate::intern::intern("sql", sql)
            .map(Statement::Text)
            .map_err(|error| error.to_string())
    }

    /// True for `COMMIT` and `ROLLBACK`, the only statements a failed transaction block
    /// accepts.
    pub fn ends_transaction(&self) -> bool {
        matches!(self, Statement::Commit | Statement::Rollback)
    }

    /// The wallet id the statement reads or writes, if any.
    pub fn wallet_id(&self) -> Option<i64> {
        match *self {
            Statement::Begin
            | Statement::BeginIsolated { .. }
            | Statement::Commit
            | Statement::Rollback => None,
            Statement::Select { id, .. }
            | Statement::WriteFenced { id, .. }
            | Statement::WriteBalance { id }
            | Statement::Debit { id } => Some(id),
            Statement::Text(_) => None,
        }
    }

    /// True when `sql` holds no statement at all (only white space, comments and `;`).
    /// PostgreSQL answers such a query with `EmptyQueryResponse` instead of a command tag or
    /// an error; a wire server should check this before [`Statement::parse`].
    pub fn is_empty_query(sql: &str) -> bool {
        tokenize(sql)
            .iter()
            .all(|token| *token == Token::Symbol(";"))
    }

    /// Maps SQL text onto a statement (case- and white-space-insensitive; an optional
    /// trailing `;`). Anything else: SQLSTATE 0A000 (`feature_not_supported`) naming it,
    /// or 42601 for text that is not SQL at all.
    ///
    /// Also accepted: `START TRANSACTION`, `BEGIN WORK`/`BEGIN TRANSACTION` as `BEGIN`;
    /// `END` and `COMMIT WORK`/`TRANSACTION` as `COMMIT`; `ABORT` and `ROLLBACK
    /// WORK`/`TRANSACTION` as `ROLLBACK`; comments; double-quoted `"wallets"`, `"balance"`,
    /// `"fence"` and `"id"`. Text that does not start with a SQL command keyword gets 42601
    /// `syntax error at or near "<first token>"` as on a real server; empty text gets 42601
    /// too (see [`Statement::is_empty_query`]).
    ///
    /// `START TRANSACTION` becomes [`Statement::Begin`], so its command tag is `BEGIN` where
    /// PostgreSQL reports `START TRANSACTION`.
    pub fn parse(sql: &str) -> Result<Statement, PgError> {
        let tokens = tokenize(sql);
        let body = strip_semicolons(&tokens);
        let Some(first) = body.first() else {
            return Err(PgError::empty_query());
        };
        if !starts_a_command(first) {
            return Err(PgError::syntax_error_near(&first.raw()));
        }
        parse_statement(body).ok_or_else(|| PgError::unsupported_statement(&normalize(sql)))
    }
}

/// Keywords a PostgreSQL statement can start with (`gram.y`'s `stmt` alternatives).
const COMMAND_KEYWORDS: &[&str] = &[
    "abort",
    "alter",
    "analyze",
    "analyse",
    "begin",
    "call",
    "checkpoint",
    "close",
    "cluster",
    "comment",
    "commit",
    "copy",
    "create",
    "deallocate",
    "declare",
    "delete",
    "discard",
    "do",
    "drop",
    "end",
    "execute",
    "explain",
    "fetch",
    "grant",
    "import",
    "insert",
    "listen",
    "load",
    "lock",
    "merge",
    "move",
    "notify",
    "prepare",
    "reassign",
    "refresh",
    "reindex",
    "release",
    "reset",
    "revoke",
    "rollback",
    "savepoint",
    "security",
    "select",
    "set",
    "show",
    "start",
    "table",
    "truncate",
    "unlisten",
    "update",
    "vacuum",
    "values",
    "with",
];

/// Identifiers that may also be written double-quoted.
const IDENTIFIERS: &[&str] = &["wallets", "balance", "fence", "id"];

/// True when `token` can start a SQL statement.
fn starts_a_command(token: &Token<'_>) -> bool {
    match token {
        Token::Word { folded, .. } => COMMAND_KEYWORDS.contains(&folded.as_str()),
        Token::Symbol(symbol) => *symbol == "(",
        _ => false,
    }
}

/// The tokens without leading and trailing `;`.
fn strip_semicolons<'t, 'a>(tokens: &'t [Token<'a>]) -> &'t [Token<'a>] {
    let semicolon = Token::Symbol(";");
    let start = tokens
        .iter()
        .position(|t| *t != semicolon)
        .unwrap_or(tokens.len());
    let end = tokens
        .iter()
        .rposition(|t| *t != semicolon)
        .map_or(start, |at| at + 1);
    &tokens[start..end]
}

/// The text with runs of white space collapsed and trailing `;` removed, for messages.
fn normalize(sql: &str) -> String {
    let collapsed = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.trim_end_matches([';', ' ']).to_string()
}

/// The statement the whole token list spells, if it is one the stand-in knows.
fn parse_statement(tokens: &[Token<'_>]) -> Option<Statement> {
    let parsers: [fn(&mut Cursor<'_, '_>) -> Option<Statement>; 3] =
        [transaction_control, select, update];
    parsers.iter().find_map(|parse| {
        let mut cursor = Cursor { tokens, pos: 0 };
        parse(&mut cursor).filter(|_| cursor.at_end())
    })
}

/// `BEGIN`, `START TRANSACTION`, `COMMIT`, `END`, `ROLLBACK`, `ABORT`.
fn transaction_control(c: &mut Cursor<'_, '_>) -> Option<Statement> {
    let statement = if c.expect("start transaction") {
        return Some(Statement::Begin);
    } else if c.expect("begin") {
        let _optional_noise_word = c.expect("work") || c.expect("transaction");
        if !c.expect("isolation level") {
            return Some(Statement::Begin);
        }
        let isolation = if c.expect("read committed") {
            Isolation::ReadCommitted
        } else if c.expect("repeatable read") {
            Isolation::RepeatableRead
        } else if c.expect("serializable") {
            Isolation::Serializable
        } else {
            return None;
        };
        return Some(Statement::BeginIsolated { isolation });
    } else if c.expect("commit") || c.expect("end") {
        Statement::Commit
    } else if c.expect("rollback") || c.expect("abort") {
        Statement::Rollback
    } else {
        return None;
    };
    let _optional_noise_word = c.expect("work") || c.expect("transaction");
    Some(statement)
}

/// `SELECT balance, fence FROM wallets WHERE id = <id> [FOR UPDATE [NOWAIT | SKIP LOCKED]]`.
fn select(c: &mut Cursor<'_, '_>) -> Option<Statement> {
    if !c.expect("select balance, fence from wallets where id =") {
        return None;
    }
    let id = c.integer()?;
    let lock = if !c.expect("for update") {
        None
    } else if c.expect("nowait") {
        Some(RowLock::ForUpdateNowait)
    } else if c.expect("skip locked") {
        Some(RowLock::ForUpdateSkipLocked)
    } else {
        Some(RowLock::ForUpdate)
    };
    Some(Statement::Select { id, lock })
}

/// The three `UPDATE wallets` shapes.
fn update(c: &mut Cursor<'_, '_>) -> Option<Statement> {
    if !c.expect("update wallets set balance =") {
        return None;
    }
    if c.expect("$1, fence = $2 where id =") {
        let id = c.integer()?;
        let guard = if c.expect("and fence = $3") {
            WriteGuard::FenceEqual
        } else if !c.expect("and fence < $2") {
            WriteGuard::Unfenced
        } else if c.expect("and fence = $3") {
            WriteGuard::FenceBelowAndEqual
        } else {
            WriteGuard::FenceBelow
        };
        Some(Statement::WriteFenced { id, guard })
    } else if c.expect("balance - $1 where id =") {
        let id = c.integer()?;
        c.expect("and balance >= $1")
            .then_some(Statement::Debit { id })
    } else if c.expect("$1 where id =") {
        let id = c.integer()?;
        Some(Statement::WriteBalance { id })
    } else {
        None
    }
}

/// A position in a token list.
struct Cursor<'t, 'a> {
    tokens: &'t [Token<'a>],
    pos: usize,
}

impl Cursor<'_, '_> {
    /// True when every token was consumed.
    fn at_end(&self) -> bool {
        self.pos == self.tokens.len()
    }

    /// Consumes the tokens of `pattern` if the input continues with them; otherwise consumes
    /// nothing.
    fn expect(&mut self, pattern: &str) -> bool {
        let wanted = tokenize(pattern);
        let Some(input) = self.tokens.get(self.pos..self.pos + wanted.len()) else {
            return false;
        };
        let matched = wanted
            .iter()
            .zip(input)
            .all(|(want, got)| token_matches(want, got));
        if matched {
            self.pos += wanted.len();
        }
        matched
    }

    /// A `bigint` literal, optionally signed.
    fn integer(&mut self) -> Option<i64> {
        let negative = if self.expect("-") {
            true
        } else {
            let _plus = self.expect("+");
            false
        };
        let Some(Token::Integer(digits)) = self.tokens.get(self.pos) else {
            return None;
        };
        let magnitude: i128 = digits.parse().ok()?;
        let value = i64::try_from(if negative { -magnitude } else { magnitude }).ok()?;
        self.pos += 1;
        Some(value)
    }
}

/// Whether input token `got` matches pattern token `want` (an identifier may be quoted).
fn token_matches(want: &Token<'_>, got: &Token<'_>) -> bool {
    match (want, got) {
        (Token::Word { folded: w, .. }, Token::Word { folded: g, .. }) => w == g,
        (Token::Word { folded: w, .. }, Token::QuotedIdent(g)) => {
            w == g && IDENTIFIERS.contains(&w.as_str())
        }
        (Token::Symbol(w), Token::Symbol(g)) => w == g,
        (Token::Param(w), Token::Param(g)) => w == g,
        _ => false,
    }
}

impl serde::Serialize for Statement {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.sql())
    }
}

impl<'de> serde::Deserialize<'de> for Statement {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Statement, D::Error> {
        let sql = String::deserialize(deserializer)?;
        Statement::parse(&sql).or_else(|error| {
            // A user's statement: a query or DML statement the front end parses.
            let verb = sql
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            let dml = ["select", "update", "insert", "delete", "with"].contains(&verb.as_str());
            if dml && super::sql::parse_general(&sql).is_ok() {
                return Statement::text(&sql).map_err(serde::de::Error::custom);
            }
            Err(serde::de::Error::custom(format!(
                "not a statement of the wallets table: {}",
                error.message
            )))
        })
    }
}

/// The highest `$n` in `sql` (0 when there is none).
fn highest_param(sql: &str) -> usize {
    tokenize(sql)
        .iter()
        .filter_map(|token| match token {
            Token::Param(n) => Some(*n as usize),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}
