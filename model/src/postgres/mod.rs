//! A PostgreSQL 15 stand-in: a small row store of many tables behind a real SQL front end.
//!
//! The tutorial's table, which [`Postgres::new`] starts with:
//!
//! ```sql
//! CREATE TABLE wallets (
//!     id      bigint PRIMARY KEY,
//!     balance bigint NOT NULL CHECK (balance >= 0),
//!     fence   bigint NOT NULL DEFAULT 0
//! );
//! ```
//!
//! - [`sql`]: a query string split and parsed whole (`sqlparser`, PostgreSQL dialect);
//! - [`exec`]: statements analysed against the catalogue and executed ([`Postgres::execute_sql`]);
//! - [`catalog`], [`value`]: table definitions, typed expressions, values and `numeric`;
//! - [`array`]: one-dimensional arrays: their text form both ways, `ANY`/`ALL`, subscripts;
//! - [`datetime`]: `timestamp with time zone`, `timestamp` and `interval`: text forms, input,
//!   arithmetic (the clock functions read the server's clock, [`Postgres::set_clock`]);
//! - [`time_part`]: `extract` and `date_part`: unit names as PostgreSQL reads them, each part
//!   of a timestamp or an interval as `numeric` or `double precision`;
//! - [`statement`]: the statements the safeguards send, typed, run natively by
//!   [`Postgres::execute`] (a fast path equal to the general one);
//! - [`error`]: errors with SQLSTATE codes and PostgreSQL's messages, hints and positions;
//! - [`answer`]: an answer as the event log stores it, and its one rendering;
//! - [`functions`]: `LIKE`/`ILIKE`, the rounding family and the text functions, as
//!   PostgreSQL computes them;
//! - [`regexp`]: `~`, `~*`, `!~`, `!~*`: PostgreSQL's regular expressions, translated for the
//!   `regex` crate;
//! - [`settings`]: `SET`, `RESET`, `SHOW`: the isolation settings run, parameters without
//!   effect kept, time limits refused unless 0;
//! - [`index`]: `CREATE INDEX`/`DROP INDEX`: names in the catalogue, chosen as PostgreSQL
//!   chooses them;
//! - [`sequence`]: `CREATE SEQUENCE`/`DROP SEQUENCE`, `nextval`, `currval`, `setval`,
//!   `lastval`;
//! - [`advisory`]: advisory locks (`pg_advisory_lock` and its family);
//! - [`engine`]: the row store, sessions, transactions, READ COMMITTED row locks ([`Postgres`]).

pub mod advisory;
pub mod answer;
pub mod array;
pub mod catalog;
mod catalog_names;
pub mod datetime;
mod ddl;
pub mod engine;
pub mod error;
pub mod exec;
pub mod functions;
pub mod index;
mod lexer;
pub mod random;
pub mod regexp;
pub mod sequence;
pub mod settings;
pub mod sql;
pub mod statement;
pub mod table_lock;
pub mod time_part;
pub mod value;

pub use answer::{describe_result, Answer};
pub use engine::{
    DeadlockCheck, Exec, Executed, Isolation, Postgres, QueryResult, SessionId, TxStatus, Wallet,
    WalletView,
};
pub use error::{ErrorObject, PgError, PgNotice};
pub use exec::{Description, SqlExec, SqlExecuted, SqlResult, JOIN_PAIR_LIMIT};
pub use sql::{parse_general, parse_query, GeneralStatement, Parsed};
pub use statement::{RowLock, Statement, WriteGuard};
pub use value::{SqlType, Value};
