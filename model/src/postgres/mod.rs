//! A PostgreSQL 15 stand-in for the tutorial's `wallets` table.
//!
//! ```sql
//! CREATE TABLE wallets (
//!     id      bigint PRIMARY KEY,
//!     balance bigint NOT NULL CHECK (balance >= 0),
//!     fence   bigint NOT NULL DEFAULT 0
//! );
//! ```
//!
//! - [`statement`]: the statements the safeguards use, parsed from SQL text;
//! - [`error`]: errors with SQLSTATE codes and PostgreSQL's messages;
//! - [`engine`]: sessions, transactions, READ COMMITTED row locks ([`Postgres`]).

pub mod catalog;
pub mod engine;
pub mod error;
pub mod exec;
mod lexer;
pub mod sql;
pub mod statement;
pub mod value;

pub use engine::{Exec, Executed, Isolation, Postgres, QueryResult, SessionId, TxStatus, Wallet};
pub use error::{PgError, PgNotice};
pub use exec::{Description, SqlExec, SqlExecuted, SqlResult};
pub use sql::{parse_general, parse_query, GeneralStatement, Parsed};
pub use statement::{RowLock, Statement, WriteGuard};
pub use value::{SqlType, Value};
