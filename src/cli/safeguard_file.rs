//! `--safeguard-file FILE`: a safeguard described in TOML (`leaselab_model::safeguard::spec`),
//! loaded, checked and registered so that `run`, `check`, `frontier` and `matrix` drive it
//! like a built-in one.

use std::path::Path;

use leaselab_model::safeguard::{spec, user, Safeguard};

use crate::exit::UsageError;

/// Reads, compiles and registers the safeguard file at `path`.
pub fn load(path: &Path) -> Result<Safeguard, UsageError> {
    let shown = path.display().to_string();
    let text = read(path).map_err(|why| {
        UsageError::new(format!(
            "--safeguard-file {shown}: {why} (expected a TOML safeguard file; see README \
             \"Your own safeguard\")"
        ))
    })?;
    load_text(&shown, &text)
}

/// Compiles and registers a safeguard file's text; `shown` names it in errors.
pub fn load_text(shown: &str, text: &str) -> Result<Safeguard, UsageError> {
    let compiled =
        spec::compile(shown, text).map_err(|error| UsageError::new(error.to_string()))?;
    let id = user::register(compiled)
        .map_err(|error| UsageError::new(format!("{shown}: name: {error}")))?;
    Ok(Safeguard::User(id))
}

/// The file's text: a regular file of at most [`spec::MAX_FILE_BYTES`], in UTF-8.
fn read(path: &Path) -> Result<String, String> {
    let bytes = crate::input::read_regular(path, spec::MAX_FILE_BYTES as u64)
        .map_err(|error| error.to_string())?;
    String::from_utf8(bytes).map_err(|error| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            error.utf8_error().valid_up_to()
        )
    })
}
