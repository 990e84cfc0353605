//! The `leaselab` commands. Each subcommand is one module with its `Args` and `execute`.

pub mod bench;
pub mod broken_pipe;
pub mod calibrate;
pub mod check;
pub mod compare;
pub mod determinism;
pub mod duration;
pub mod frontier;
pub mod matrix;
pub mod merge;
pub mod nodes;
pub mod replay;
pub mod run;
pub mod safeguard_file;
pub mod serve;
pub mod show;
pub mod shrink;
pub mod tour;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::exit::UsageError;

/// Deterministic simulation and model checking of distributed-lock safeguards.
///
/// leaselab runs the Redis-lock tutorial's safeguards against in-memory Redis and PostgreSQL
/// stand-ins under a simulated clock and network, injects faults, and checks the ledger:
/// final balance = initial − accepted × amount, never negative.
#[derive(Debug, Parser)]
#[command(
    name = "leaselab",
    version,
    about,
    long_about = None,
    propagate_version = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The exit-code contract, printed under every `--help`.
pub const EXIT_CODES: &str =
    "Exit codes: 0 every verdict OK/SAFE; 1 a violation was found (for tour and matrix, whose \
verdicts are the tutorial's claims: a row or pinned cell that disagrees with what the tutorial \
says; a BROKEN cell the tutorial predicts is a finding, not a failure); 2 bad usage or input; \
3 INCONCLUSIVE (a bound or limit stopped the work before a verdict, or no spend reached the \
storage, so the ledger was never put to the test).";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario on the simulated network and check the ledger.
    #[command(after_help = EXIT_CODES)]
    Run(Box<run::Args>),
    /// Every tutorial step with its variants, and the failover and partition scenarios, a few
    /// dozen seeds each, as one table.
    ///
    /// The safety section's other scenarios (aof-crash, evict-fence, wait-*, redlock-*,
    /// transfer-*, rmw-*) run one by one with `leaselab run NAME`; every safeguard under
    /// every fault is `leaselab matrix`.
    #[command(after_help = EXIT_CODES)]
    Tour(tour::Args),
    /// Every safeguard under every fault, decided exhaustively and by simulation, as one table.
    ///
    /// Each cell is decided twice: by the model checker (2 callers, its bound stated per cell;
    /// faults the model cannot express say so) and by N seeds of the fault's simulated
    /// scenario. A cell is SAFE, BROKEN (the shortest counterexample saved as a trace, with one
    /// sentence of why), INCONCLUSIVE or n/a. Cells are judged by the ledger (final = initial −
    /// amount × accepted, never negative).
    ///
    /// Examples: `leaselab matrix`; `leaselab matrix --html report.html`;
    /// `leaselab matrix --safeguard fenced --safeguard fenced-cas --fault ttl-1ms --json`.
    #[command(after_help = matrix::EXIT_STATUS)]
    Matrix(matrix::Args),
    /// Exhaustively check a safeguard (or a suite of checks) up to a bound.
    #[command(after_help = EXIT_CODES)]
    Check(check::Args),
    /// Sweep the pause bound, TTL and work: where a safeguard stops being safe.
    #[command(after_help = EXIT_CODES)]
    Frontier(frontier::Args),
    /// Show a trace as a timeline (terminal, SVG or HTML).
    #[command(after_help = EXIT_CODES)]
    Show(show::Args),
    /// Re-run trace files and report whether each still fails the same way.
    #[command(after_help = EXIT_CODES)]
    Replay(replay::Args),
    /// Shrink a failing trace to the smallest run that still breaks the ledger.
    #[command(after_help = EXIT_CODES)]
    Shrink(shrink::Args),
    /// Serve the Redis or PostgreSQL stand-in on a real TCP port (for redis-cli, psql, ...).
    #[command(after_help = EXIT_CODES)]
    Serve(serve::Args),
    /// Simulated runs per CPU second of step2 (50 callers), step5 and step6 (50 callers, 1 ms TTL), and the ratio to real servers when given.
    #[command(after_help = EXIT_CODES)]
    Bench(bench::Args),
    /// Run many seeds of every tour row in two processes and compare every event-log digest.
    #[command(after_help = EXIT_CODES)]
    Determinism(determinism::Args),
    /// Combine the `--json` outputs of a command's shards (`--shard K/N`) into one verdict.
    ///
    /// The inputs must be the shards 1..N of one command with the same parameters (`run
    /// --runs`, `tour`, `check --suite` or `matrix`), each once. The result is what the
    /// unsharded command prints, with its exit code.
    ///
    /// Example: `leaselab merge shard-1.json shard-2.json --json`.
    #[command(after_help = EXIT_CODES)]
    Merge(merge::Args),
    /// Every tour row N times simulated and N times against real servers: per counter, the
    /// simulated range next to the real one, and whether they overlap.
    #[command(after_help = compare::COMPARE_EXIT_CODES)]
    Compare(compare::Args),
    /// Measure the real servers' costs the simulation's timing models: the network latency
    /// (a caller's Redis round trips in real runs), and a PostgreSQL session's first
    /// statement and a commit that wrote (in real step 6 runs, and by a probe), over their
    /// round trips.
    ///
    /// Prints the `compare` flags that use them; `leaselab compare --calibrate` measures and
    /// uses them in one go. Example: `leaselab calibrate --samples 100`.
    #[command(after_help = calibrate::CALIBRATE_EXIT_CODES)]
    Calibrate(calibrate::Args),
}

/// Parses the command line, runs the command, prints errors, and maps the result to the exit
/// code: 0 all OK, 1 a violation, 2 bad usage or input, 3 inconclusive (see [`crate::exit`]).
/// A closed stdout or stderr (`leaselab ... | head`) ends the process quietly, as `cat` ends.
pub fn main() -> ExitCode {
    broken_pipe::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    // `serve` answers whatever its clients send; everywhere else a stopped script is the
    // safeguard's.
    let judges_scripts = !matches!(cli.command, Command::Serve(_));
    let outcome = run(cli);
    if judges_scripts {
        if let Some(stopped) = leaselab_model::redis::lua::first_stopped_script() {
            eprintln!("error: {}", stopped_script_text(stopped));
            return ExitCode::from(crate::exit::EXIT_USAGE);
        }
    }
    match outcome {
        Ok(status) => status.code(),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(crate::exit::EXIT_USAGE)
        }
    }
}

/// Refuses to go on once a safeguard's script was stopped (budget or memory limit): nothing
/// computed after it can stand, so the command stops before it prints a verdict. `main`
/// then prints why ([`stopped_script_text`]).
pub fn refuse_stopped_script() -> Result<(), UsageError> {
    match leaselab_model::redis::lua::first_stopped_script() {
        Some(stopped) => Err(UsageError::new(stopped_script_text(stopped))),
        None => Ok(()),
    }
}

/// Why no verdict stands when a safeguard's script had to be stopped.
fn stopped_script_text(stopped: &str) -> String {
    format!(
        "a safeguard's Lua {stopped}, so it was stopped; a real Redis would keep running it and \
         answer BUSY to every other client, so no verdict can stand. Make the script \
         finish within {} instructions and {} MiB (check its loops), then run again",
        leaselab_model::redis::lua::INSTRUCTION_BUDGET,
        leaselab_model::redis::lua::MEMORY_LIMIT >> 20
    )
}

fn run(cli: Cli) -> Result<crate::exit::Status, UsageError> {
    match cli.command {
        Command::Check(args) => check::execute(args),
        Command::Frontier(args) => frontier::execute(args),
        Command::Replay(args) => replay::execute(args),
        Command::Show(args) => show::execute(args),
        Command::Shrink(args) => shrink::execute(args),
        Command::Run(args) => run::execute(*args),
        Command::Tour(args) => tour::execute(args),
        Command::Matrix(args) => matrix::execute(args),
        Command::Bench(args) => bench::execute(args),
        Command::Serve(args) => serve::execute(&args),
        Command::Determinism(args) => determinism::execute(args),
        Command::Compare(args) => compare::execute(args),
        Command::Merge(args) => merge::execute(args),
        Command::Calibrate(args) => calibrate::execute(args),
    }
}
