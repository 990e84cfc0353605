//! # leaselab-sim
//!
//! The stand-ins of `leaselab-model` served on turmoil's simulated network over RESP and the
//! PostgreSQL wire protocol, callers that drive safeguard state machines through the real
//! `redis` and `tokio-postgres` clients, and fault injection.
#![warn(missing_docs)]

// turmoil seeds tokio's scheduler (and `select!`) from the simulation seed only when tokio is
// built with this cfg (`.cargo/config.toml`). A RUSTFLAGS that replaces that file's flags would
// silently break byte-exact replay, so refuse to build without it.
#[cfg(not(tokio_unstable))]
compile_error!(
    "leaselab-sim needs `--cfg tokio_unstable` for deterministic replay: keep .cargo/config.toml's \
     rustflags, or add `--cfg tokio_unstable` to your RUSTFLAGS"
);

mod accept;
pub mod calibrate;
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
