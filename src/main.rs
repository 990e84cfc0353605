//! The `leaselab` command line. All logic lives in the library; see `src/cli/`.

/// Counts each thread's live bytes, so the PostgreSQL stand-in can stop a statement that would
/// hold more than its limit (`leaselab_model::memory`).
#[global_allocator]
static ALLOCATOR: leaselab::memory::CountingAlloc = leaselab::memory::CountingAlloc;

fn main() -> std::process::ExitCode {
    leaselab::cli::main()
}
