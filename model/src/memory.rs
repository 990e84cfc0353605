//! How much memory one statement of the PostgreSQL stand-in holds at once.
//!
//! PostgreSQL spills a large sort or aggregate to disk; the stand-in keeps everything in
//! memory, so a short query over many rows (`SELECT repeat('x', 10000000) FROM
//! generate_series(1, 10000) ORDER BY 1`) could take all of it. Every statement therefore runs
//! inside a [`StatementScope`], and the executor asks [`statement_over_limit`] as it evaluates:
//! once the statement holds more than [`STATEMENT_MEMORY_LIMIT_BYTES`] more than when it
//! started, the statement fails with PostgreSQL's own 53200 `out of memory`.
//!
//! The bytes are counted by the process's global allocator, which tells this module of every
//! allocation and release on the current thread ([`note_allocated`], [`note_freed`]). The
//! `leaselab` binary installs such an allocator (`leaselab::memory::CountingAlloc`); a program
//! that does not counts nothing, and no statement is stopped. A statement runs on one thread
//! from start to end (no `await` inside it), so what the thread allocates meanwhile is the
//! statement's own. The count is a pure function of what the statement does, so the same
//! statement stops at the same point in every run.

use std::cell::Cell;

/// The most one statement may hold beyond what its thread held when it started, in bytes.
pub const STATEMENT_MEMORY_LIMIT_BYTES: usize = 512 << 20;

thread_local! {
    /// Bytes allocated minus bytes freed on this thread (it may go below zero when a thread
    /// frees what another allocated).
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    /// Nesting depth of statement scopes on this thread, and `LIVE_BYTES` when the outermost
    /// one began.
    static SCOPE: Cell<(u32, isize)> = const { Cell::new((0, 0)) };
}

/// Called by the global allocator after it handed out `bytes`. Never allocates.
#[inline]
pub fn note_allocated(bytes: usize) {
    // A `Layout`'s size is at most `isize::MAX`, so the cast keeps it; a thread-local with a
    // constant initialiser and no destructor is always there, so `with` cannot fail.
    LIVE_BYTES.with(|live| live.set(live.get().wrapping_add(bytes as isize)));
}

/// Called by the global allocator after it took back `bytes`. Never allocates.
#[inline]
pub fn note_freed(bytes: usize) {
    LIVE_BYTES.with(|live| live.set(live.get().wrapping_sub(bytes as isize)));
}

/// Bytes allocated and not yet freed on this thread, as the global allocator reported them
/// (0 when it reports nothing).
pub fn live_bytes() -> isize {
    LIVE_BYTES.with(Cell::get)
}

/// A statement in progress on this thread: the memory it holds is measured from when the
/// outermost scope began. Scopes nest (a statement planned inside another's execution counts
/// toward the outer one); dropping the outermost ends the measurement.
#[must_use = "the scope measures only while it lives"]
pub struct StatementScope {
    /// Not `Send`: a scope belongs to its thread's count.
    _thread: std::marker::PhantomData<*const ()>,
}

impl StatementScope {
    /// Starts (or joins) the measurement of the statement running on this thread.
    pub fn enter() -> Self {
        let live = live_bytes();
        SCOPE.with(|scope| {
            let (depth, baseline) = scope.get();
            let baseline = if depth == 0 { live } else { baseline };
            scope.set((depth.saturating_add(1), baseline));
        });
        StatementScope {
            _thread: std::marker::PhantomData,
        }
    }
}

impl Drop for StatementScope {
    fn drop(&mut self) {
        SCOPE.with(|scope| {
            let (depth, baseline) = scope.get();
            debug_assert!(depth > 0, "a statement scope ends that never began");
            scope.set((depth.saturating_sub(1), baseline));
        });
    }
}

/// The bytes the running statement holds when that is past [`STATEMENT_MEMORY_LIMIT_BYTES`];
/// `None` when it is within the limit or no statement is running on this thread.
pub fn statement_over_limit() -> Option<usize> {
    let (depth, baseline) = SCOPE.with(Cell::get);
    if depth == 0 {
        return None;
    }
    let held = usize::try_from(live_bytes().wrapping_sub(baseline)).unwrap_or(0);
    (held > STATEMENT_MEMORY_LIMIT_BYTES).then_some(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_measured_from_its_start_and_only_while_it_runs() {
        note_allocated(1 << 40);
        assert_eq!(statement_over_limit(), None, "no statement is running");
        {
            let _outer = StatementScope::enter();
            assert_eq!(
                statement_over_limit(),
                None,
                "what came before is not the statement's"
            );
            note_allocated(STATEMENT_MEMORY_LIMIT_BYTES);
            assert_eq!(statement_over_limit(), None, "at the limit is within it");
            {
                let _inner = StatementScope::enter();
                note_allocated(1);
                assert_eq!(
                    statement_over_limit(),
                    Some(STATEMENT_MEMORY_LIMIT_BYTES + 1),
                    "a nested scope counts from the outermost start"
                );
            }
            assert!(
                statement_over_limit().is_some(),
                "the outer statement still runs"
            );
            note_freed(2);
            assert_eq!(
                statement_over_limit(),
                None,
                "what is freed is no longer held"
            );
        }
        assert_eq!(statement_over_limit(), None, "the statement is over");
        note_freed((1 << 40) + STATEMENT_MEMORY_LIMIT_BYTES - 1);
    }
}
