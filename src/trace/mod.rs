//! Trace files: failing runs kept as evidence anyone can replay and read.
//!
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
pub use save::{save_broken, save_trace, SaveArgs, DEFAULT_DIR};

use std::path::{Path, PathBuf};

/// The trace files named by `paths`: files as given, directories searched recursively for
/// `*.json`, skipping their `new/` subdirectories (fresh, unreviewed traces). Sorted.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut found).map_err(|error| format!("{}: {error}", path.display()))?;
        } else {
            found.push(path.clone());
        }
    }
    Ok(found)
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "new") {
                collect(&path, found)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "json") {
            found.push(path);
        }
    }
    Ok(())
}
