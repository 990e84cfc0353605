//! # leaselab
//!
//! Shows, with evidence anyone can replay, which distributed-lock safeguards prevent lost
//! updates, and under which faults they stop doing so.
//!
//! - [`cli`]: the `leaselab` commands, one module each;
//! - [`exit`]: exit codes and user-facing errors;
//! - [`trace`]: trace files: save, load, replay, shrink, show.
//!
//! The semantics live in `leaselab-model` (stand-ins, safeguards, ledger, exhaustive model);
//! the simulation in `leaselab-sim`.
#![warn(missing_docs)]

pub mod cli;
pub mod exit;
pub mod trace;
