//! The heap on huge pages: the binary starts itself again, once, with the C library told to
//! ask Linux for transparent huge pages for the memory it takes (`GLIBC_TUNABLES=
//! glibc.malloc.hugetlb=1`).
//!
//! Why: the exhaustive checker probes its visited set (tens of megabytes) and the callers and
//! stand-ins its stored worlds share at random, several times per state generated. On 4 KiB
//! pages nearly every such probe also misses the TLB; on 2 MiB pages a few hundred entries
//! cover the heap. Debian's Linux backs anonymous memory with huge pages only where a program
//! asks (`/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`), and the C library asks
//! only when its tunable says so, which it reads once, when the process starts: hence the new
//! start. Measured in docs/speed.md ("The heap on huge pages"): about a sixth off the 3-caller
//! proof's CPU time; no change to the simulation.
//!
//! Nothing else changes: the same arguments (and `argv[0]`), the same process (an `exec`, not
//! a child), the same environment plus the variable. A `GLIBC_TUNABLES` already set is the
//! user's choice and left alone (no new start), and where the new start fails the run goes on
//! as it was. Other C libraries and systems: nothing happens.
//!
//! This file is also compiled into the checker's bench (`checker/benches/check.rs`), so that
//! the bench measures what the binary runs with.

/// The environment variable glibc reads its tunables from.
pub const TUNABLES_VARIABLE: &str = "GLIBC_TUNABLES";

/// The tunable that makes glibc's `malloc` advise huge pages for the memory it maps and for
/// the heap as it grows.
pub const HUGE_PAGE_TUNABLE: &str = "glibc.malloc.hugetlb=1";

/// Starts this program again with [`HUGE_PAGE_TUNABLE`] set, unless `GLIBC_TUNABLES` is set
/// already (then, or when the new start fails, it returns and the program goes on). Call it
/// first thing in `main`, before any thread starts or anything is printed.
pub fn start_on_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(TUNABLES_VARIABLE).is_some() {
            return;
        }
        let Ok(program) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(program);
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        // `exec` returns only when the new start failed: go on with the library's defaults.
        let _failed = command
            .args(args)
            .env(TUNABLES_VARIABLE, HUGE_PAGE_TUNABLE)
            .exec();
    }
}
