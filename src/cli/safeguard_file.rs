//! `--safeguard-file FILE`: a safeguard described in TOML (`leaselab_model::safeguard::spec`),
//! loaded, checked and registered so that `run`, `check`, `frontier` and `matrix` drive it
//! like a built-in one.

use std::io::Read as _;
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
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // A fifo opens at once and is refused below instead of waiting for a writer.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|error| error.to_string())?;
    let metadata = file.metadata().map_err(|error| error.to_string())?;
    if !metadata.is_file() {
        return Err("not a regular file".to_string());
    }
    let limit = spec::MAX_FILE_BYTES as u64;
    if metadata.len() > limit {
        return Err(format!(
            "{} bytes; a safeguard file may have at most {limit}",
            metadata.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| error.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("more than {limit} bytes"));
    }
    String::from_utf8(bytes).map_err(|error| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            error.utf8_error().valid_up_to()
        )
    })
}
