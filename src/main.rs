//! The `leaselab` command line. All logic lives in the library; see `src/cli/`.

/// Counts each thread's live bytes, so the PostgreSQL stand-in can stop a statement that would
/// hold more than its limit (`leaselab_model::memory`).
#[global_allocator]
static ALLOCATOR: leaselab::memory::CountingAlloc = leaselab::memory::CountingAlloc;

fn main() -> std::process::ExitCode {
    // The heap on huge pages (`src/huge_pages.rs`): a new start with the C library told so.
    leaselab::huge_pages::start_on_huge_pages();
    leaselab::cli::main()
}
