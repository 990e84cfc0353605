//! # leaselab-checker
//!
//! The exhaustive model checker over [`World`](leaselab_model::world::World), the in-process
//! driver of `leaselab-model`.
//!
//! - [`config`]: what a check is about (safeguard, callers, TTL, work, pauses, bounds);
//! - [`model`]: the stateright [`Model`](stateright::Model) over [`World`](leaselab_model::world::World)
//!   and its properties;
//! - [`bfs`]: a level-synchronous breadth-first checker for stateright models;
//! - [`intern`]: one shared copy of each distinct caller and stand-in among the stored worlds;
//! - [`fingerprint`]: the platform-independent state hash it uses (defined in `leaselab-model`,
//!   which hashes worlds with it);
//! - [`run`](mod@run): runs a check and judges each property;
//! - [`narrate`]: counterexamples in the tutorial's words;
//! - [`frontier`]: sweeps of the pause bound, TTL and work;
//! - [`pause_search`]: one search that finds a frontier cell's least breaking pause;
//! - [`suite`]: the named sets of checks (the nightly suite).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bfs;
pub mod config;
pub mod frontier;
pub mod intern;
pub mod model;
pub mod narrate;
pub mod pause_search;
pub mod run;
pub mod suite;

pub use leaselab_model::fingerprint;

pub use config::CheckConfig;
pub use model::{
    LeaseModel, PropertySet, ALL_FINISHED, LEDGER, LOCK_CHANGED_BY_HOLDER, MUTUAL_EXCLUSION,
    SETTLED, TX_RETRIED, WRITE_REJECTED,
};
pub use run::{run, CheckReport, PropertyReport, PropertyVerdict, RunOptions, Strategy};
