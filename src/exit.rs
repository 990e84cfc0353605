//! Exit codes and user-facing errors.
//!
//! Every command exits 0 when every verdict is OK/SAFE, 1 when it found a violation, and 2 on
//! bad usage or input.

use std::process::ExitCode;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every verdict OK / SAFE.
    Ok,
    /// Some run BROKEN, some property violated, some trace not reproduced.
    Violation,
}

impl Status {
    /// `Violation` if any is, else `Ok`.
    pub fn worst(self, other: Status) -> Status {
        if self == Status::Violation || other == Status::Violation {
            Status::Violation
        } else {
            Status::Ok
        }
    }

    /// 0 or 1.
    pub fn code(self) -> ExitCode {
        match self {
            Status::Ok => ExitCode::from(0),
            Status::Violation => ExitCode::from(1),
        }
    }
}

/// Bad usage or input: what went wrong, where, and how to fix it. Exit code 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError {
    /// The message, ready to print after `error: `.
    pub message: String,
}

impl UsageError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UsageError {}

impl From<leaselab_model::safeguard::ParamError> for UsageError {
    fn from(error: leaselab_model::safeguard::ParamError) -> UsageError {
        UsageError::new(error.0)
    }
}

/// What a command returns.
pub type CommandResult = Result<Status, UsageError>;
