//! # leaselab-model
//!
//! The pure, IO-free semantics of leaselab:
//!
//! - [`redis`]: an in-memory Redis 7 stand-in (keyspace with expiry, scripts, replication);
//! - [`postgres`]: a PostgreSQL 15 stand-in for the `wallets` table (READ COMMITTED, row locks);
//! - [`safeguard`]: every lock safeguard of the tutorial as a sans-IO state machine;
//! - [`client`]: the client core around a safeguard machine (connections, deadlines,
//!   retries), sans-IO too;
//! - [`scenario`]: what a run is made of (balance, callers, TTL, work, safeguard);
//! - [`ledger`]: the invariant every run is judged by;
//! - [`world`]: an in-process driver that steps callers and stand-ins on one clock (the
//!   `leaselab-checker` crate explores it exhaustively);
//! - [`fingerprint`]: the platform-independent state hash the world and the checker use.
//!
//! Nothing in this crate reads a clock, opens a socket or draws unseeded randomness:
//! time is always passed in (`now_ms`), and randomness comes from the driver.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod fault;
pub mod fingerprint;
pub mod intern;
pub mod ledger;
pub mod memory;
pub mod postgres;
pub mod redis;
pub mod safeguard;
pub mod scenario;
pub mod text_bytes;
pub mod world;
