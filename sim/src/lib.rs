//! # leaselab-sim
//!
//! The stand-ins of `leaselab-model` served on turmoil's simulated network over RESP and the
//! PostgreSQL wire protocol, callers that drive safeguard state machines through the real
//! `redis` and `tokio-postgres` clients, and fault injection.
#![warn(missing_docs)]

mod accept;
pub mod caller;
pub mod clients;
pub mod clock;
mod driver;
pub mod events;
pub mod faults;
pub mod observer;
pub mod pg_server;
pub mod pg_wire;
pub mod real;
pub mod redis_server;
pub mod replication;
pub mod resp;
pub mod run;
