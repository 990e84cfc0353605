//! Exit codes and user-facing errors.
//!
//! The exit-code contract, held by every command:
//!
//! | code | meaning |
//! |---:|---|
//! | 0 | a verdict was reached and every verdict is OK / SAFE |
//! | 1 | a violation was found (a BROKEN run, a violated property, a trace that no longer fails; for `tour` and `matrix`, whose verdicts are the tutorial's claims, a row or pinned cell that disagrees with it) |
//! | 2 | bad usage or input; the message says what, where and how to fix it |
//! | 3 | INCONCLUSIVE: a bound or limit stopped the work before a verdict (a horizon too short for any caller to finish or for a second spend to overlap the first, the checker's state limit, a run that hit its time limit) |
//!
//! A violation outranks an inconclusive result, which outranks OK: a command that found a
//! violation in one run and could not decide another exits 1.

use std::process::ExitCode;

/// The exit code for bad usage or input.
pub const EXIT_USAGE: u8 = 2;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Every verdict OK / SAFE.
    Ok,
    /// A bound or limit stopped the work before a verdict was reached.
    Inconclusive,
    /// Some run BROKEN, some property violated, some trace not reproduced.
    Violation,
}

impl Status {
    /// The worse of the two: a violation outranks an inconclusive result, which outranks OK.
    pub fn worst(self, other: Status) -> Status {
        self.max(other)
    }

    /// The exit code: 0, 3 or 1.
    pub fn code(self) -> ExitCode {
        ExitCode::from(self.exit_code())
    }

    /// The exit code as a number: 0 (OK), 1 (violation), 3 (inconclusive).
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Violation => 1,
            Status::Inconclusive => 3,
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

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn a_violation_outranks_inconclusive_which_outranks_ok() {
        assert_eq!(Status::Ok.worst(Status::Inconclusive), Status::Inconclusive);
        assert_eq!(Status::Inconclusive.worst(Status::Ok), Status::Inconclusive);
        assert_eq!(
            Status::Inconclusive.worst(Status::Violation),
            Status::Violation
        );
        assert_eq!(Status::Violation.worst(Status::Ok), Status::Violation);
        assert_eq!(Status::Ok.worst(Status::Ok), Status::Ok);
        let codes: Vec<u8> = [Status::Ok, Status::Violation, Status::Inconclusive]
            .iter()
            .map(|s| s.exit_code())
            .collect();
        assert_eq!(codes, vec![0, 1, 3]);
    }
}
