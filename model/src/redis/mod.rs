//! An in-memory Redis 7 stand-in.
//!
//! The server's clock is passed into every call (`now_ms`, milliseconds on the server's own
//! wall clock); nothing here reads a real clock. Replies and error texts are those of Redis 7.
//!
//! - [`reply`]: the RESP reply values;
//! - [`command`]: the supported commands, parsed from an argument vector;
//! - [`server`]: the keyspace and command execution ([`Redis`]), in 16 databases as Redis's
//!   default (`SELECT` per connection, [`Session`]);
//! - [`glob`]: `KEYS`/`SCAN ... MATCH` patterns, as Redis's `stringmatchlen` matches them;
//! - [`collection`]: hashes, lists, sets and sorted sets as values, and sorted-set scores;
//! - [`lua`]: scripts run in Lua 5.1 as Redis 7.0 runs them (sandbox, conversions, errors);
//!   `lua_bit`, [`lua_cjson`], `lua_cmsgpack` and `lua_struct` are the `bit`, `cjson`,
//!   `cmsgpack` and `struct` libraries they see;
//! - [`scripts`]: the safeguards' own scripts, recognised by SHA1 and executed natively (proven
//!   equal to their Lua run);
//! - [`replication`]: the replication stream, replicas and promotion;
//! - [`aof`]: persistence, the append-only file and `appendfsync` (what a crash loses);
//! - [`cluster`]: Redis Cluster hash slots (`CROSSSLOT`).
//!
//! Replies and error texts were checked command by command against a real Redis 7.0.15
//! (`redis-cli`, a private replica pair and a private cluster node for `READONLY` and
//! `CROSSSLOT`). Differences kept on purpose:
//! - `DELEX key [IFEQ v | IFNE v]` follows Redis 8.4 (7.0 does not have it); the digest
//!   conditions are refused with a clear error.
//! - `CLIENT SETINFO` answers `+OK` as Redis 7.2+ does (7.0 says unknown subcommand).
//! - `HELLO 3` is refused with `NOPROTO unsupported protocol version`: RESP2 only.
//! - `PEXPIRE`'s `NX|XX|GT|LT` options are refused with a clear error.
//! - Scripts: see [`lua`] for what differs (a runaway script is
//!   stopped after an instruction budget instead of making the server `BUSY`).
//! - No active expiry cycle: expired keys are deleted when touched (clients cannot tell the
//!   difference; the `DEL` a replica receives comes later).
//! - Commands and subcommands outside the supported set get Redis's unknown command error.

pub mod aof;
pub mod cluster;
pub mod collection;
pub mod command;
pub mod glob;
pub mod lua;
mod lua_bit;
pub mod lua_cjson;
mod lua_cmsgpack;
mod lua_struct;
pub mod replication;
pub mod reply;
pub mod scripts;
pub mod server;
pub mod shebang;
pub mod split_args;

pub use command::{Command, Transaction};
pub use reply::Reply;
pub use scripts::ScriptId;
pub use server::{
    is_subscription_command, message_bytes, Redis, Session, PUBSUB_OUTPUT_LIMIT_BYTES,
};
