//! Trace files: failing runs kept as evidence anyone can replay and read.
//!
//! - [`mod@files`]: finding trace files under directories, reading one safely, writing outputs
//!   atomically and never over an input;
//! - [`format`](mod@format): the versioned JSON document and the serde mirrors of the model's types;
//! - [`load`](mod@load): reading and validating a trace, with errors that name the file and field;
//! - [`save`]: writing a broken run under a name that is the same for the same failure;
//! - [`model`]: model counterexamples turned into simulated schedules;
//! - [`replay`]: re-running a trace and comparing verdict and digest;
//! - [`shrink`]: the smallest variant of a failing run that still fails;
//! - [`story`]: what the event log means, lane by lane, and the write the ledger blames;
//! - [`text`]: the terminal timeline; [`svg`]: the same as an SVG picture or HTML page.
//!
//! `traces/README.md` documents the format.

pub mod compare;
pub mod files;
pub mod format;
pub mod load;
pub mod model;
pub mod replay;
pub mod save;
pub mod shrink;
pub mod story;
pub mod svg;
pub mod text;

pub use format::TraceFile;
pub use load::{load, Trace, TraceError};
pub use save::{save_trace, SaveArgs, DEFAULT_DIR};

use std::path::PathBuf;

/// The trace files named by `paths` (see [`files::find`]): files as given, directories
/// searched recursively for `*.json`, each real directory and file once, skipping `new/`
/// subdirectories. An error names every path that could not be searched.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let found = files::find(paths);
    if found.problems.is_empty() {
        Ok(found.files)
    } else {
        Err(found.problems.join("\n"))
    }
}
