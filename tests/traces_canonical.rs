//! The canonical failures `traces/` ships with, listed in `traces/canonical.txt` with the
//! command that finds each (`scripts/regenerate-traces.sh` runs them).

use std::path::{Path, PathBuf};

use clap::Parser;
use leaselab::cli::{Cli, Command};
use leaselab::trace::format::Origin;
use leaselab::trace::{self, Trace};

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

/// (directory, command words) per line of `traces/canonical.txt`.
fn canonical() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(traces_dir().join("canonical.txt")).expect("the list");
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_string);
            let dir = words.next().expect("a directory");
            (dir, words.collect())
        })
        .collect()
}

fn shipped(dir: &str) -> Vec<Trace> {
    trace::files(&[traces_dir().join(dir)])
        .expect("readable")
        .iter()
        .map(|path| trace::load(path).expect("shipped traces load"))
        .collect()
}

#[test]
fn every_canonical_failure_is_shipped() {
    let list = canonical();
    assert!(list.len() >= 8, "the list names the canonical failures");
    for (dir, words) in list {
        let line = words.join(" ");
        let cli = Cli::try_parse_from(std::iter::once("leaselab".to_string()).chain(words))
            .unwrap_or_else(|e| panic!("`leaselab {line}` parses: {e}"));
        let traces = shipped(&dir);
        let found = match cli.command {
            Command::Run(args) if args.shrink => traces.iter().any(|t| {
                matches!(
                    t.file.origin,
                    Origin::Simulation {
                        shrunk_from: Some(_)
                    }
                ) && t.scenario.name.starts_with(&args.scenario)
            }),
            Command::Run(args) => {
                let scenario = args.scenario().expect("a valid scenario");
                traces
                    .iter()
                    .any(|t| t.scenario == scenario && t.file.seed == args.seed)
            }
            Command::Check(args) => {
                let config = args.config().expect("a valid check");
                traces
                    .iter()
                    .any(|t| t.model.as_ref().is_some_and(|m| m.config == config))
            }
            Command::Matrix(args) => {
                let rows = leaselab::cli::matrix::rows(&args.safeguard).expect("known safeguards");
                let columns = leaselab::cli::matrix::columns(&args.fault).expect("known faults");
                rows.iter().all(|row| {
                    columns.iter().all(|column| {
                        let scenario = column.scenario(row);
                        traces
                            .iter()
                            .any(|t| t.scenario == scenario && t.file.seed == args.seed)
                    })
                })
            }
            other => panic!("`leaselab {line}`: {other:?} makes no traces"),
        };
        assert!(
            found,
            "traces/{dir} has no trace of `leaselab {line}`; run scripts/regenerate-traces.sh"
        );
    }
}

#[test]
fn shrinking_made_step1_smaller() {
    let shrunk = shipped("shrunk");
    let step1 = shrunk
        .iter()
        .find(|t| t.scenario.name.starts_with("step1-race"))
        .expect("the shrunk step 1 trace");
    assert!(step1.scenario.callers < 50, "{}", step1.scenario.callers);
    assert_eq!(step1.ledger.verdict.as_str(), "BROKEN");
}
