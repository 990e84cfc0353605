//! Reading a file a user names as input: a regular file, up to a size, never waiting.
//!
//! Every command that reads a file it is given (a trace, a safeguard file, a shard's output)
//! reads it here, so none of them blocks on a fifo without a writer, reads a device such as
//! `/dev/zero` without end, or holds more than its limit.

use std::io::Read as _;
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// Opening or reading failed (the system's message).
    Io(String),
    /// A directory.
    Directory,
    /// Not a regular file: what it is instead ("a named pipe (fifo)", "a device", ...).
    NotAFile(&'static str),
    /// Larger than the limit: its size when the file said so, None when it grew while read.
    TooLarge {
        /// Its size, when the file said so; None when it grew while being read.
        bytes: Option<u64>,
        /// The limit.
        limit: u64,
    },
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Io(error) => write!(f, "cannot read it: {error}"),
            InputError::Directory => f.write_str("it is a directory, not a regular file"),
            InputError::NotAFile(kind) => write!(f, "it is {kind}, not a regular file"),
            InputError::TooLarge {
                bytes: Some(bytes),
                limit,
            } => write!(
                f,
                "{bytes} bytes, more than the {limit} this input may have"
            ),
            InputError::TooLarge { bytes: None, limit } => {
                write!(f, "more than the {limit} bytes this input may have")
            }
        }
    }
}

/// The bytes of the regular file at `path`, at most `limit` of them.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // Opening a fifo for reading blocks until a writer comes; non-blocking, it opens at
        // once and is refused below as not a regular file.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|error| InputError::Io(error.to_string()))?;
    let metadata = file
        .metadata()
        .map_err(|error| InputError::Io(error.to_string()))?;
    if metadata.is_dir() {
        return Err(InputError::Directory);
    }
    if !metadata.is_file() {
        return Err(InputError::NotAFile(kind_of(&metadata)));
    }
    if metadata.len() > limit {
        return Err(InputError::TooLarge {
            bytes: Some(metadata.len()),
            limit,
        });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| InputError::Io(error.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { bytes: None, limit }); // it grew while being read
    }
    Ok(bytes)
}

/// What a file that is not a regular file or a directory is, in words.
pub fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a named pipe (fifo)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    let _ = metadata;
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_a_directory_and_a_large_file_are_refused() {
        #[cfg(unix)]
        assert_eq!(
            read_regular(Path::new("/dev/zero"), 1024),
            Err(InputError::NotAFile("a device"))
        );
        let dir = std::env::temp_dir().join(format!("leaselab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(read_regular(&dir, 1024), Err(InputError::Directory));
        let file = dir.join("ten");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read_regular(&file, 10).unwrap(), b"0123456789");
        assert_eq!(
            read_regular(&file, 9),
            Err(InputError::TooLarge {
                bytes: Some(10),
                limit: 9
            })
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("leaselab-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            read_regular(&fifo, 1024),
            Err(InputError::NotAFile("a named pipe (fifo)"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
