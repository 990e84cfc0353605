//! PostgreSQL's answer to a statement as data that can be stored and read back (a trace's
//! event log), and the one way it is written for people ([`Answer::describe`],
//! [`PgError::describe`]).

use serde::{Deserialize, Serialize};

use super::engine::QueryResult;
use super::error::PgError;

/// What a statement got back: its command tag and rows, or an error.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// It ran.
    Ok {
        /// The command tag, e.g. `UPDATE 1`, `SELECT 1`, `BEGIN`.
        tag: String,
        /// The rows returned (empty for statements that return none).
        rows: Vec<Vec<i64>>,
    },
    /// PostgreSQL refused it.
    Error {
        /// `ERROR` (or `FATAL`).
        severity: String,
        /// The SQLSTATE.
        code: String,
        /// The message.
        message: String,
    },
}

impl Answer {
    /// The answer to keep of a statement's result.
    pub fn of(result: &Result<QueryResult, PgError>) -> Answer {
        match result {
            Ok(ok) => Answer::Ok {
                tag: ok.tag.clone(),
                rows: ok.rows.clone(),
            },
            Err(error) => Answer::Error {
                severity: error.severity.to_string(),
                code: error.code.to_string(),
                message: error.message.clone(),
            },
        }
    }

    /// The answer on one line: the command tag, or `ERROR 23514 new row ...`. Rows are not
    /// included.
    pub fn describe(&self) -> String {
        match self {
            Answer::Ok { tag, .. } => tag.clone(),
            Answer::Error {
                severity,
                code,
                message,
            } => describe_error(severity, code, message),
        }
    }
}

impl PgError {
    /// The error on one line: `ERROR 40P01 deadlock detected`.
    pub fn describe(&self) -> String {
        describe_error(self.severity, self.code, &self.message)
    }
}

/// A statement's result on one line, as [`Answer::describe`] writes it.
pub fn describe_result(result: &Result<QueryResult, PgError>) -> String {
    match result {
        Ok(ok) => ok.tag.clone(),
        Err(error) => error.describe(),
    }
}

fn describe_error(severity: &str, code: &str, message: &str) -> String {
    format!("{severity} {code} {message}")
}
