//! Errors as PostgreSQL reports them: severity, SQLSTATE, message, detail.
//!
//! Every message the stand-in produces is built here, worded exactly as PostgreSQL 15 words it
//! (checked against a real server), so the wire layer can forward it unchanged.

/// An error response (or, with severity `WARNING`, a notice; see [`PgNotice`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PgError {
    /// `ERROR` (or `FATAL`).
    pub severity: &'static str,
    /// The five-character SQLSTATE, e.g. `23514`.
    pub code: &'static str,
    /// The primary message, exactly as PostgreSQL words it.
    pub message: String,
    /// The DETAIL line, if any.
    pub detail: Option<String>,
    /// The HINT line, if any.
    pub hint: Option<String>,
    /// The error's position in the query text (1-based, in characters), if any.
    pub position: Option<u32>,
    /// The table (and column or constraint) a constraint violation is about, sent as
    /// PostgreSQL's schema, table, column and constraint fields (`s`, `t`, `c`, `n`), which
    /// clients expose (e.g. tokio-postgres's `DbError::constraint`).
    pub object: Option<Box<ErrorObject>>,
    /// The rows a query had sent before it failed: PostgreSQL streams a query's rows, so an
    /// error raised by one of them comes after the rows read before it. Empty for any other
    /// error (`None`; boxed, so that the error stays small).
    pub rows_before: Option<Box<Vec<Vec<super::value::Value>>>>,
}

/// What a constraint violation names besides its message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorObject {
    /// The schema: always `public` in the stand-in.
    pub schema: String,
    /// The table.
    pub table: String,
    /// The column (a NOT NULL violation).
    pub column: Option<String>,
    /// The constraint (`<table>_pkey`, a CHECK's name).
    pub constraint: Option<String>,
}

impl std::hash::Hash for PgError {
    /// Hint and position are hashed only when present, so that an error without them hashes
    /// as it did before they existed (state fingerprints of the checker stay the same).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.severity.hash(state);
        self.code.hash(state);
        self.message.hash(state);
        self.detail.hash(state);
        if self.hint.is_some() || self.position.is_some() {
            self.hint.hash(state);
            self.position.hash(state);
        }
        if let Some(object) = &self.object {
            object.hash(state);
        }
        if let Some(rows) = &self.rows_before {
            rows.hash(state);
        }
    }
}

/// A notice such as PostgreSQL's `WARNING:  there is no transaction in progress`: the same
/// fields as an error, with severity `WARNING`; the statement still succeeds.
pub type PgNotice = PgError;

/// SQLSTATEs the stand-in reports, named as in PostgreSQL's `errcodes.txt`.
pub mod sqlstate {
    /// `feature_not_supported`: a statement the stand-in does not know.
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    /// `syntax_error`.
    pub const SYNTAX_ERROR: &str = "42601";
    /// `protocol_violation`: a Bind with the wrong number of parameters.
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    /// `connection_does_not_exist`.
    pub const CONNECTION_DOES_NOT_EXIST: &str = "08003";
    /// `numeric_value_out_of_range`.
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    /// `invalid_text_representation`.
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    /// `invalid_parameter_value` (a bad `format()` specification, ...).
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    /// `null_value_not_allowed` (`format('%I', NULL)`).
    pub const NULL_VALUE_NOT_ALLOWED: &str = "22004";
    /// `division_by_zero`.
    pub const DIVISION_BY_ZERO: &str = "22012";
    /// `not_null_violation`.
    pub const NOT_NULL_VIOLATION: &str = "23502";
    /// `unique_violation`.
    pub const UNIQUE_VIOLATION: &str = "23505";
    /// `undefined_table`.
    pub const UNDEFINED_TABLE: &str = "42P01";
    /// `undefined_column`.
    pub const UNDEFINED_COLUMN: &str = "42703";
    /// `ambiguous_column`.
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    /// `undefined_object`: a type (or another object) that does not exist.
    pub const UNDEFINED_OBJECT: &str = "42704";
    /// `duplicate_alias`: a table name or alias given twice in one `FROM`.
    pub const DUPLICATE_ALIAS: &str = "42712";
    /// `duplicate_table`.
    pub const DUPLICATE_TABLE: &str = "42P07";
    /// `duplicate_column`.
    pub const DUPLICATE_COLUMN: &str = "42701";
    /// `datatype_mismatch`.
    pub const DATATYPE_MISMATCH: &str = "42804";
    /// `undefined_function` (also an operator that does not exist).
    pub const UNDEFINED_FUNCTION: &str = "42883";
    /// `invalid_table_definition`.
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    /// `s_e_invalid_specification` (savepoint).
    pub const INVALID_SAVEPOINT_SPECIFICATION: &str = "3B001";
    /// `serialization_failure`.
    pub const SERIALIZATION_FAILURE: &str = "40001";
    /// `undefined_parameter`.
    pub const UNDEFINED_PARAMETER: &str = "42P02";
    /// `check_violation`.
    pub const CHECK_VIOLATION: &str = "23514";
    /// `active_sql_transaction` (a warning: `BEGIN` inside a transaction block).
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    /// `no_active_sql_transaction` (a warning: `COMMIT`/`ROLLBACK` outside one).
    pub const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
    /// `in_failed_sql_transaction`.
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    /// `deadlock_detected`.
    pub const DEADLOCK_DETECTED: &str = "40P01";
    /// `lock_not_available`.
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    /// `invalid_escape_sequence` (a `LIKE` pattern or escape string).
    pub const INVALID_ESCAPE_SEQUENCE: &str = "22025";
    /// `program_limit_exceeded`.
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    /// `out_of_memory`.
    pub const OUT_OF_MEMORY: &str = "53200";
}

impl PgError {
    /// An `ERROR` with no detail.
    pub fn error(code: &'static str, message: impl Into<String>) -> PgError {
        debug_assert_eq!(code.len(), 5, "a SQLSTATE has five characters");
        PgError {
            severity: "ERROR",
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            object: None,
            rows_before: None,
        }
    }

    /// A `WARNING` notice with no detail.
    pub fn warning(code: &'static str, message: impl Into<String>) -> PgNotice {
        PgError {
            severity: "WARNING",
            ..PgError::error(code, message)
        }
    }

    /// The same error with a DETAIL line.
    pub fn with_detail(self, detail: impl Into<String>) -> PgError {
        PgError {
            detail: Some(detail.into()),
            ..self
        }
    }

    /// The same error with a HINT line.
    pub fn with_hint(self, hint: impl Into<String>) -> PgError {
        PgError {
            hint: Some(hint.into()),
            ..self
        }
    }

    /// The same error about a table's constraint or column (schema `public`).
    pub fn on(self, table: &str, column: Option<&str>, constraint: Option<&str>) -> PgError {
        PgError {
            object: Some(Box::new(ErrorObject {
                schema: "public".into(),
                table: table.into(),
                column: column.map(Into::into),
                constraint: constraint.map(Into::into),
            })),
            ..self
        }
    }

    /// The same error at a position of the query text (1-based, in characters).
    pub fn at(self, position: Option<u32>) -> PgError {
        PgError { position, ..self }
    }

    /// 53200 `out of memory` when the running statement holds more than
    /// [`crate::memory::STATEMENT_MEMORY_LIMIT_BYTES`], `Ok` otherwise. The executor asks as it
    /// evaluates, so a statement that would gather rows without bound stops instead.
    pub fn check_statement_memory() -> Result<(), PgError> {
        match crate::memory::statement_over_limit() {
            None => Ok(()),
            Some(held_bytes) => Err(PgError::error(sqlstate::OUT_OF_MEMORY, "out of memory")
                .with_detail(format!(
                    "The statement held {} MiB at once, past the {} MiB one statement may hold \
                     in this stand-in.",
                    held_bytes >> 20,
                    crate::memory::STATEMENT_MEMORY_LIMIT_BYTES >> 20
                ))
                .with_hint(
                    "PostgreSQL would spill a sort or aggregate this large to disk; the stand-in \
                     keeps every row in memory. Read fewer or smaller rows.",
                )),
        }
    }

    /// 22P02 `invalid input syntax for type <type>: "<text>"`.
    pub fn invalid_input(ty: super::value::SqlType, text: &str) -> PgError {
        PgError::error(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {}: \"{text}\"", ty.name()),
        )
    }

    /// 22003 `value "<text>" is out of range for type <type>`.
    pub fn out_of_range_input(ty: super::value::SqlType, text: &str) -> PgError {
        PgError::error(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{text}\" is out of range for type {}", ty.name()),
        )
    }

    /// 22003 `smallint out of range`.
    pub fn smallint_out_of_range() -> PgError {
        PgError::error(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "smallint out of range",
        )
    }

    /// 22003 `integer out of range`.
    pub fn integer_out_of_range() -> PgError {
        PgError::error(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
    }

    /// 0A000 for SQL text the stand-in does not execute, naming the statement (white space
    /// collapsed, cut after 200 characters).
    pub fn unsupported_statement(normalized_sql: &str) -> PgError {
        const MAX_CHARS: usize = 200;
        let shown: String = if normalized_sql.chars().count() > MAX_CHARS {
            let cut: String = normalized_sql.chars().take(MAX_CHARS).collect();
            format!("{cut}...")
        } else {
            normalized_sql.to_string()
        };
        PgError::error(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("leaselab stand-in does not support this statement: {shown}"),
        )
    }

    /// 42601 `syntax error at or near "<token>"`, as PostgreSQL reports text that does not
    /// start with a SQL command.
    pub fn syntax_error_near(token: &str) -> PgError {
        PgError::error(
            sqlstate::SYNTAX_ERROR,
            format!("syntax error at or near \"{token}\""),
        )
    }

    /// 42601 for empty text. PostgreSQL raises no error for an empty query (it answers
    /// `EmptyQueryResponse`); see [`Statement::is_empty_query`](super::Statement::is_empty_query).
    pub fn empty_query() -> PgError {
        PgError::error(
            sqlstate::SYNTAX_ERROR,
            "leaselab stand-in: empty query (PostgreSQL answers it with EmptyQueryResponse)",
        )
    }

    /// 08P01 for a Bind whose parameter count differs from the statement's.
    pub fn wrong_parameter_count(supplied: usize, required: usize) -> PgError {
        PgError::error(
            sqlstate::PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {supplied} parameters, but prepared statement \"\" requires {required}"
            ),
        )
    }

    /// 08003 for a session that is not (or no longer) connected.
    pub fn connection_does_not_exist() -> PgError {
        PgError::error(
            sqlstate::CONNECTION_DOES_NOT_EXIST,
            "connection does not exist",
        )
    }

    /// 22003 `bigint out of range`.
    pub fn bigint_out_of_range() -> PgError {
        PgError::error(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
    }

    /// 23514 for a row whose `balance` is negative, with PostgreSQL's DETAIL
    /// `Failing row contains (<id>, <balance>, <fence>).`
    pub fn balance_check_violation(id: i64, balance: i64, fence: i64) -> PgError {
        PgError::error(
            sqlstate::CHECK_VIOLATION,
            "new row for relation \"wallets\" violates check constraint \"wallets_balance_check\"",
        )
        .with_detail(format!("Failing row contains ({id}, {balance}, {fence})."))
        .on("wallets", None, Some("wallets_balance_check"))
    }

    /// 25P02: a statement other than `COMMIT`/`ROLLBACK` in a failed transaction block.
    pub fn in_failed_transaction() -> PgError {
        PgError::error(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    }

    /// 55P03: `FOR UPDATE NOWAIT` found the row locked.
    pub fn row_lock_not_available() -> PgError {
        PgError::error(
            sqlstate::LOCK_NOT_AVAILABLE,
            "could not obtain lock on row in relation \"wallets\"",
        )
    }

    /// 40P01 `deadlock detected`, with a DETAIL line per wait in the cycle:
    /// `Process <pid> waits for ShareLock on transaction <xid>; blocked by process <pid>.`
    /// PostgreSQL 15 adds the HINT `See server log for query details.` (the queries are in the
    /// server log only).
    pub fn deadlock_detected(detail: String) -> PgError {
        PgError::error(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
            .with_detail(detail)
            .with_hint("See server log for query details.")
    }

    /// The warning for `BEGIN` inside a transaction block (25001).
    pub fn already_in_transaction() -> PgNotice {
        PgError::warning(
            sqlstate::ACTIVE_SQL_TRANSACTION,
            "there is already a transaction in progress",
        )
    }

    /// The warning for `COMMIT` or `ROLLBACK` outside a transaction block (25P01).
    pub fn no_transaction_in_progress() -> PgNotice {
        PgError::warning(
            sqlstate::NO_ACTIVE_SQL_TRANSACTION,
            "there is no transaction in progress",
        )
    }
}

impl std::fmt::Display for PgError {
    /// `ERROR:  <message> (SQLSTATE <code>)`, then `DETAIL:  <detail>` on the next line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:  {} (SQLSTATE {})",
            self.severity, self.message, self.code
        )?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL:  {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT:  {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PgError {}
