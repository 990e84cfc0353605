//! An in-memory Redis 7 stand-in.
//!
//! The server's clock is passed into every call (`now_ms`, milliseconds on the server's own
//! wall clock); nothing here reads a real clock. Replies and error texts are those of Redis 7.
//!
//! - [`reply`]: the RESP reply values;
//! - [`command`]: the supported commands, parsed from an argument vector;
//! - [`server`]: the keyspace and command execution ([`Redis`]);
//! - [`scripts`]: the Lua scripts recognised by SHA1 and executed natively;
//! - [`replication`]: the replication stream, replicas and promotion;
//! - [`cluster`]: Redis Cluster hash slots (`CROSSSLOT`).

pub mod cluster;
pub mod command;
pub mod replication;
pub mod reply;
pub mod scripts;
pub mod server;

pub use command::Command;
pub use reply::Reply;
pub use scripts::ScriptId;
pub use server::Redis;
