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

pub mod answer;
pub mod engine;
pub mod error;
mod lexer;
pub mod statement;

pub use answer::{describe_result, Answer};
pub use engine::{Exec, Executed, Postgres, QueryResult, SessionId, TxStatus, Wallet};
pub use error::{PgError, PgNotice};
pub use statement::{RowLock, Statement, WriteGuard};
