//! The file system side of traces: finding the trace files under directories, reading one
//! safely, and writing outputs without ever losing a file.
//!
//! - [`find`]: every real directory is walked once and every real file listed once, so links
//!   that loop (`a/b -> ..`) end instead of multiplying; `new/` subdirectories are skipped;
//! - [`read_text`]: regular files only (a fifo is refused without blocking on it, a device or
//!   a directory too), at most [`MAX_TRACE_BYTES`], UTF-8 with the position of the first bad
//!   byte;
//! - [`Outputs`]: output paths resolved through links and `./`, refused when one names an
//!   input or two name the same file, before any work;
//! - [`write_atomic`]: a temporary file in the same directory, renamed over the target, so a
//!   failure never leaves a half-written file.

use crate::input::InputError;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::load::Problem;

/// The largest trace file read: far above any real trace (the shipped ones are under 1 MiB),
/// small enough that a wrong file (a disk image, a log) is refused instead of filling memory.
pub const MAX_TRACE_BYTES: u64 = 64 * 1024 * 1024;

/// What [`find`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The trace files, each real file once, in the order given (directories sorted).
    pub files: Vec<PathBuf>,
    /// What could not be searched, each naming the path: an unreadable directory, a
    /// directory with no trace in it, a link that loops.
    pub problems: Vec<String>,
}

/// The trace files named by `paths`: files as given (whatever their name), directories
/// searched recursively for `*.json`, following links to directories but walking each real
/// directory once, and skipping `new/` subdirectories (fresh, unreviewed traces). A directory
/// with no trace file in it is a problem: it is probably not the directory meant.
pub fn find(paths: &[PathBuf]) -> Found {
    let mut walk = Walk::default();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => {
                let problems = walk.found.problems.len();
                let has_json = walk.directory(path);
                if !has_json && walk.found.problems.len() == problems {
                    walk.found.problems.push(format!(
                        "{}: no trace files in this directory (traces are *.json files; new/ subdirectories are skipped)",
                        path.display()
                    ));
                }
            }
            // A file, or something that cannot be read: loading it says what is wrong.
            _ => walk.file(path),
        }
    }
    walk.found
}

#[derive(Default)]
struct Walk {
    found: Found,
    /// Each real directory walked (or being walked), and whether `*.json` entries are under it.
    directories: BTreeMap<PathBuf, bool>,
    files: BTreeSet<PathBuf>,
}

impl Walk {
    fn file(&mut self, path: &Path) {
        // A path that cannot be resolved (a dangling link) is kept as given: loading it
        // reports the problem under its name.
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.files.insert(real) {
            self.found.files.push(path.to_path_buf());
        }
    }

    /// Walks `dir` unless its real directory was walked already; true when `*.json` entries
    /// are under it (listed now or before).
    fn directory(&mut self, dir: &Path) -> bool {
        let real = match std::fs::canonicalize(dir) {
            Ok(real) => real,
            Err(error) => {
                self.found.problems.push(format!(
                    "{}: cannot read the directory: {error}",
                    dir.display()
                ));
                return false;
            }
        };
        if let Some(has_json) = self.directories.get(&real) {
            return *has_json; // walked already (or being walked: a link back up)
        }
        self.directories.insert(real.clone(), false);
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.found.problems.push(format!(
                    "{}: cannot read the directory: {error}",
                    dir.display()
                ));
                return false;
            }
        };
        let mut paths = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => paths.push(entry.path()),
                Err(error) => self.found.problems.push(format!(
                    "{}: cannot read an entry of the directory: {error}",
                    dir.display()
                )),
            }
        }
        paths.sort();
        let mut has_json = false;
        for path in paths {
            let is_json = path.extension().is_some_and(|ext| ext == "json");
            match std::fs::metadata(&path) {
                // A subdirectory (`new/` holds fresh, unreviewed traces: skipped).
                Ok(metadata)
                    if metadata.is_dir() && path.file_name().is_some_and(|n| n != "new") =>
                {
                    has_json |= self.directory(&path);
                }
                Ok(metadata) if metadata.is_dir() => {}
                // Files, special files and dangling links named *.json are listed: loading
                // one that is not a readable trace names it and says why.
                _ if is_json => {
                    has_json = true;
                    self.file(&path);
                }
                _ => {}
            }
        }
        self.directories.insert(real, has_json);
        has_json
    }
}

/// Reads the trace file at `path` as text: a regular file of at most [`MAX_TRACE_BYTES`],
/// holding UTF-8 that is not only whitespace. A fifo is refused without waiting for a writer.
pub fn read_text(path: &Path) -> Result<String, Problem> {
    let bytes = crate::input::read_regular(path, MAX_TRACE_BYTES).map_err(|error| match error {
        InputError::Io(error) => Problem::Io(error),
        InputError::Directory => Problem::NotAFile(
            "it is a directory; expected a trace file (`leaselab replay DIR` replays every trace in a directory)".into(),
        ),
        InputError::NotAFile(kind) => Problem::NotAFile(format!(
            "it is {kind}, not a regular file; expected a trace file"
        )),
        InputError::TooLarge { bytes, .. } => Problem::TooLarge { bytes },
    })?;
    if bytes.is_empty() {
        return Err(Problem::Empty { whitespace: false });
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        // `valid` is UTF-8 by definition; count its lines and the characters of the last.
        let valid = std::str::from_utf8(valid).unwrap_or("");
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        Problem::NotUtf8 {
            line,
            column,
            byte: valid.len(),
        }
    })?;
    if text.trim().is_empty() {
        return Err(Problem::Empty { whitespace: true });
    }
    Ok(text)
}

/// The identity of an existing file: its real path and, on unix, its device and inode (so
/// two hard links to one file are the same file).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    real: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn same_file(&self, other: &Identity) -> bool {
        self.real == other.real || (self.inode.is_some() && self.inode == other.inode)
    }
}

fn inode(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Where an output named `path` really goes: the real path of the file if it exists (through
/// links), else the real path of its directory joined with its name. Refuses a directory, a
/// special file, a link to nowhere and a directory that does not exist.
fn resolve_output(path: &Path) -> Result<Identity, String> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(_) => {
            let real = std::fs::canonicalize(path).map_err(|error| {
                format!("{shown}: cannot write there: it is a link that does not resolve ({error}); give a file path")
            })?;
            let metadata = std::fs::metadata(&real)
                .map_err(|error| format!("{shown}: cannot write there: {error}"))?;
            if metadata.is_dir() {
                return Err(format!(
                    "{shown}: is a directory; give a file path for the output"
                ));
            }
            if !metadata.is_file() {
                return Err(format!(
                    "{shown}: is {}, not a regular file; give a file path for the output",
                    crate::input::kind_of(&metadata)
                ));
            }
            Ok(Identity {
                inode: inode(&real),
                real,
            })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let name = path
                .file_name()
                .ok_or_else(|| format!("{shown}: not a file name; give a file path"))?;
            let parent = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            let real_parent = std::fs::canonicalize(parent).map_err(|error| {
                format!(
                    "{shown}: cannot write there: the directory {} cannot be used ({error})",
                    parent.display()
                )
            })?;
            if !real_parent.is_dir() {
                return Err(format!(
                    "{shown}: cannot write there: {} is not a directory",
                    parent.display()
                ));
            }
            Ok(Identity {
                real: real_parent.join(name),
                inode: None,
            })
        }
        Err(error) => Err(format!("{shown}: cannot write there: {error}")),
    }
}

/// The files a command reads and the files it will write, checked before any work: no
/// output may be an input (through links, `./x` against `x`, hard links), and no two outputs
/// may be one file.
#[derive(Debug, Default)]
pub struct Outputs {
    inputs: Vec<(PathBuf, Identity)>,
    outputs: Vec<(String, PathBuf, Identity)>,
}

impl Outputs {
    /// No inputs or outputs yet.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// An input. One that does not exist is ignored here (reading it reports it).
    pub fn input(&mut self, path: &Path) -> &mut Outputs {
        if let Ok(real) = std::fs::canonicalize(path) {
            let identity = Identity {
                inode: inode(&real),
                real,
            };
            self.inputs.push((path.to_path_buf(), identity));
        }
        self
    }

    /// An output, named in messages as `label` (e.g. `--svg`). Refused at once when it
    /// cannot be written, is an input, or is an output already given.
    pub fn output(&mut self, label: &str, path: &Path) -> Result<&mut Outputs, String> {
        let identity = resolve_output(path).map_err(|error| format!("{label} {error}"))?;
        if let Some((input, _)) = self.inputs.iter().find(|(_, i)| i.same_file(&identity)) {
            return Err(format!(
                "{label} {}: that is the input trace {}; writing there would destroy it. Give the output another name",
                path.display(),
                input.display()
            ));
        }
        if let Some((other, other_path, _)) =
            self.outputs.iter().find(|(_, _, o)| o.same_file(&identity))
        {
            return Err(format!(
                "{label} {} and {other} {} are the same file; give each output its own path",
                path.display(),
                other_path.display()
            ));
        }
        self.outputs
            .push((label.to_string(), path.to_path_buf(), identity));
        Ok(self)
    }
}

/// True when `a` and `b` are one existing file (same real path, or hard links to one inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(ra), Ok(rb)) => {
            ra == rb || {
                let (ia, ib) = (inode(&ra), inode(&rb));
                ia.is_some() && ia == ib
            }
        }
        _ => false,
    }
}

/// Writes `bytes` to `path` atomically: into a new temporary file in the same directory,
/// flushed to disk, then renamed over `path`. On any failure the temporary file is removed
/// and `path` is as it was. A `path` that is a link to a file writes the file it names.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut attempt = 0u32;
    let (temporary, mut file) = loop {
        let temporary = dir.join(format!(
            ".{}.{}-{attempt}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => break (temporary, file),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temporary, &target)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "leaselab-trace-files-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary() {
        let dir = scratch("atomic");
        let path = dir.join("out.svg");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let missing = dir.join("no/such/dir/out.svg");
        assert!(write_atomic(&missing, b"x").is_err());
    }

    #[test]
    fn an_output_that_is_an_input_or_another_output_is_refused() {
        let dir = scratch("outputs");
        let input = dir.join("t.json");
        std::fs::write(&input, "{}").unwrap();
        let mut outputs = Outputs::new();
        outputs.input(&input);
        let same = dir.join(".").join("t.json");
        let error = outputs.output("--svg", &same).unwrap_err();
        assert!(error.contains("input trace"), "{error}");
        outputs.output("--svg", &dir.join("a.svg")).unwrap();
        let error = outputs.output("--html", &dir.join("./a.svg")).unwrap_err();
        assert!(error.contains("same file"), "{error}");
        let error = outputs.output("--html", &dir).unwrap_err();
        assert!(error.contains("is a directory"), "{error}");
    }

    #[test]
    fn linked_directories_are_walked_once() {
        let dir = scratch("walk");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/t.json"), "{}").unwrap();
        std::fs::write(dir.join("a/notes.txt"), "x").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("..", dir.join("a/b/up")).unwrap();
            std::os::unix::fs::symlink(".", dir.join("a/here")).unwrap();
        }
        let found = find(&[dir.join("a"), dir.join("a/b")]);
        assert_eq!(found.files, vec![dir.join("a/b/t.json")]);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        let found = find(&[dir.join("empty")]);
        assert!(found.files.is_empty());
        assert!(found.problems[0].contains("no trace files"), "{found:?}");
    }
}
