//! `leaselab merge`: one verdict from the `--json` outputs of a command's shards.
//!
//! ```text
//! leaselab run step5-fencing --unfenced --runs 40 --shard 1/2 --json > s1.json
//! leaselab run step5-fencing --unfenced --runs 40 --shard 2/2 --json > s2.json
//! leaselab merge s1.json s2.json          # what `--runs 40` alone prints
//! ```
//!
//! Every input must be a shard of the same command with the same parameters; each shard
//! 1..N exactly once. The result is what the unsharded command prints (text, or `--json`),
//! with its exit code. The kinds: `run` (`run --runs`), `tour`, `check-suite`
//! (`check --suite`) and `matrix`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use serde_json::Value;

use crate::exit::{CommandResult, UsageError};
use crate::shard::Shard;

/// The largest shard output read (bytes).
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Combine the `--json` outputs of a command's shards into the unsharded result.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The shards' `--json` outputs, one file per shard, in any order.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the merged result as JSON (as the unsharded command's `--json`).
    #[arg(long)]
    pub json: bool,
}

/// One shard's output, read and checked to be a shard.
#[derive(Debug)]
pub struct ShardFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Which shard it is.
    pub shard: Shard,
    /// Its JSON.
    pub value: Value,
}

impl ShardFile {
    /// A field of the output, or an error naming the file and the field.
    pub fn field(&self, name: &str) -> Result<&Value, UsageError> {
        self.value.get(name).ok_or_else(|| {
            self.error(format!(
                "no field '{name}': not a complete shard output of this command"
            ))
        })
    }

    /// A field that must be an unsigned integer.
    pub fn u64_field(&self, name: &str) -> Result<u64, UsageError> {
        self.field(name)?
            .as_u64()
            .ok_or_else(|| self.error(format!("field '{name}' is not a whole number")))
    }

    /// A field that must be an array.
    pub fn array_field(&self, name: &str) -> Result<&Vec<Value>, UsageError> {
        self.field(name)?
            .as_array()
            .ok_or_else(|| self.error(format!("field '{name}' is not an array")))
    }

    /// A field read into `T`.
    pub fn typed_field<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, UsageError> {
        serde_json::from_value(self.field(name)?.clone())
            .map_err(|error| self.error(format!("field '{name}': {error}")))
    }

    /// An error about this file.
    pub fn error(&self, what: impl std::fmt::Display) -> UsageError {
        UsageError::new(format!("merge: {}: {what}", self.path.display()))
    }
}

/// Runs `leaselab merge`.
pub fn execute(args: Args) -> CommandResult {
    let files = read_shards(&args.files)?;
    let kind = files[0]
        .value
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match kind.as_str() {
        "run" => super::run::merge(&files, args.json),
        "check-suite" => super::check::merge_suite(&files, args.json),
        "tour" => super::tour::merge(&files, args.json),
        "matrix" => super::matrix::merge(&files, args.json),
        _ => Err(files[0].error(format!(
            "field 'command' is '{kind}', which merge does not know (run, tour, check-suite, \
             matrix)"
        ))),
    }
}

/// Reads every file, checks each is a shard output (`command`, `shard`), that they are of
/// one command and one shard count, and that each shard 1..N is there once; returns them in
/// shard order.
pub fn read_shards(paths: &[PathBuf]) -> Result<Vec<ShardFile>, UsageError> {
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        files.push(read_shard(path)?);
    }
    let first = &files[0];
    for file in &files[1..] {
        same_field(first, file, "command")?;
        if file.shard.count != first.shard.count {
            return Err(file.error(format!(
                "field 'shard' is {}, but {} is {}: give the shards of one split (the same N)",
                file.shard.text(),
                first.path.display(),
                first.shard.text()
            )));
        }
    }
    let mut by_index: BTreeMap<u64, &Path> = BTreeMap::new();
    for file in &files {
        if let Some(other) = by_index.insert(file.shard.index, &file.path) {
            return Err(file.error(format!(
                "shard {} is given twice (also {}); give each shard once",
                file.shard.text(),
                other.display()
            )));
        }
    }
    let count = first.shard.count;
    let missing: Vec<String> = (1..=count)
        .filter(|index| !by_index.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(UsageError::new(format!(
            "merge: shard(s) {} missing: give all {count} shards' outputs",
            missing.join(", ")
        )));
    }
    files.sort_by_key(|file| file.shard.index);
    Ok(files)
}

fn read_shard(path: &Path) -> Result<ShardFile, UsageError> {
    let refuse = |what: String| UsageError::new(format!("merge: {}: {what}", path.display()));
    let bytes = crate::input::read_regular(path, MAX_INPUT_BYTES)
        .map_err(|error| refuse(format!("{error}; expected a shard's --json output")))?;
    let text = String::from_utf8(bytes).map_err(|error| {
        refuse(format!(
            "not UTF-8 text (invalid byte at offset {}); give the output of a command run with --shard K/N --json",
            error.utf8_error().valid_up_to()
        ))
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        refuse(format!(
            "not JSON ({error}); give the output of a command run with --shard K/N --json"
        ))
    })?;
    let not_a_shard = || {
        refuse(
            "no 'command' and 'shard' fields: not the output of a command run with --shard K/N \
             --json"
                .to_string(),
        )
    };
    let command = value.get("command").and_then(Value::as_str);
    let shard = value.get("shard").and_then(Value::as_str);
    let (Some(_), Some(shard)) = (command, shard) else {
        return Err(not_a_shard());
    };
    let shard = Shard::parse(shard).map_err(|error| refuse(format!("field 'shard': {error}")))?;
    Ok(ShardFile {
        path: path.to_path_buf(),
        shard,
        value,
    })
}

/// Refuses `file` unless its field `name` equals `first`'s.
pub fn same_field(first: &ShardFile, file: &ShardFile, name: &str) -> Result<(), UsageError> {
    let a = first.value.get(name).unwrap_or(&Value::Null);
    let b = file.value.get(name).unwrap_or(&Value::Null);
    if a == b {
        return Ok(());
    }
    Err(file.error(format!(
        "field '{name}' is {b}, but {} has {a}: merge the shards of one command with the same \
         parameters",
        first.path.display()
    )))
}

/// Refuses any file whose fields `names` differ from the first file's.
pub fn same_fields(files: &[ShardFile], names: &[&str]) -> Result<(), UsageError> {
    for file in &files[1..] {
        for name in names {
            same_field(&files[0], file, name)?;
        }
    }
    Ok(())
}
