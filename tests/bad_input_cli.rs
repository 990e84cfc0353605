//! Bad input on the command line: unknown commands and flags, malformed values. Each case
//! asserts the exit code, that no panic text appears, and that stderr names the problem.

mod common;

use common::bad_input::{check_all, Case};

#[test]
fn careless_command_lines_get_exit_2_and_a_message_naming_the_problem() {
    check_all(vec![
        Case::new("no command", &[], 2, &["usage"]),
        Case::new("unknown command", &["frobnicate"], 2, &["frobnicate"]),
        Case::new(
            "unknown flag",
            &["run", "step2-lock", "--frob"],
            2,
            &["--frob"],
        ),
        Case::new(
            "unknown scenario",
            &["run", "step9-nope"],
            2,
            &["step9-nope"],
        ),
        Case::new(
            "ttl zero",
            &["run", "step2-lock", "--ttl", "0"],
            2,
            &["ttl"],
        ),
        Case::new(
            "ttl without unit",
            &["run", "step2-lock", "--ttl", "5"],
            2,
            &["5"],
        ),
        Case::new(
            "negative work",
            &["run", "step2-lock", "--work", "-3ms"],
            2,
            &["-3"],
        ),
        Case::new(
            "callers zero",
            &["run", "step2-lock", "--callers", "0"],
            2,
            &["callers"],
        ),
        Case::new(
            "unknown safeguard",
            &["run", "step2-lock", "--safeguard", "magic"],
            2,
            &["magic"],
        ),
        Case::new(
            "check unknown safeguard",
            &["check", "--safeguard", "magic"],
            2,
            &["magic"],
        ),
    ]);
}
