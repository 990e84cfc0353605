//! Trace files: failing runs kept as evidence anyone can replay and read.
//!
//! - [`format`]: the versioned JSON document and the serde mirrors of the model's types;
//! - [`load`]: reading and validating a trace, with errors that name the file and field;
//! - [`save`]: writing a broken run under a name that is the same for the same failure;
//! - [`replay`]: re-running a trace and comparing verdict and digest.
//!
//! `traces/README.md` documents the format.

pub mod format;
pub mod load;
pub mod replay;
pub mod save;

pub use format::TraceFile;
pub use load::{load, Trace, TraceError};
pub use save::{save_trace, DEFAULT_DIR};
