//! # leaselab
//!
//! Shows, with evidence anyone can replay, which distributed-lock safeguards prevent lost
//! updates, and under which faults they stop doing so.
//!
//! - [`cli`]: the `leaselab` commands, one module each;
//! - [`exit`]: exit codes and user-facing errors;
//! - [`matrix`]: every safeguard under every fault, decided exhaustively and by simulation;
//! - [`memory`]: the binary's allocator, which lets a statement's memory be bounded;
//! - [`parallel`]: seeds run side by side, their results handed on in seed order;
//! - [`shard`]: `--shard K/N`, one part of a command's work;
//! - [`trace`]: trace files: save, load, replay, shrink, show.
//!
//! The semantics live in `leaselab-model` (stand-ins, safeguards, ledger, exhaustive model);
//! the simulation in `leaselab-sim`.
#![warn(missing_docs)]

pub mod cli;
pub mod exit;
pub mod huge_pages;
pub mod input;
pub mod matrix;
pub mod memory;
pub mod parallel;
pub mod shard;
pub mod trace;
