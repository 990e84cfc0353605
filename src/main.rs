//! The `leaselab` command line. All logic lives in the library; see `src/cli/`.

fn main() -> std::process::ExitCode {
    leaselab::cli::main()
}
