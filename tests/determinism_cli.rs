//! `leaselab determinism` runs seeds of every tour row in two processes and compares digests.

mod common;

use common::bad_input::{check_all, Case};

#[test]
fn every_row_gives_the_same_digests_in_two_processes() {
    let case = Case::new(
        "fourteen seeds, one per row",
        &["determinism", "--seeds", "14", "--first-seed", "5"],
        0,
        &["14 runs (seeds 5..=18) compared across two processes: 0 mismatches"],
    );
    check_all(vec![case]);
}

#[test]
fn bad_seed_ranges_are_refused() {
    check_all(vec![
        Case::new(
            "no seeds",
            &["determinism", "--seeds", "0"],
            2,
            &["--seeds 0"],
        ),
        Case::new(
            "wrapping range",
            &[
                "determinism",
                "--seeds",
                "2",
                "--first-seed",
                "18446744073709551615",
            ],
            2,
            &["--first-seed"],
        ),
        Case::new(
            "unknown row",
            &["determinism", "--only", "step9"],
            2,
            &["step9", "step5-fencing"],
        ),
    ]);
}
