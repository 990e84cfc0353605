//! The global allocator of the `leaselab` binary: the system's, telling
//! `leaselab_model::memory` of every allocation and release on the current thread, so that a
//! statement of the PostgreSQL stand-in that would hold more than its limit stops with 53200
//! (`leaselab_model::memory::STATEMENT_MEMORY_LIMIT_BYTES`) instead of taking all of memory.
//!
//! A test binary that wants the same limit installs it too:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: leaselab::memory::CountingAlloc = leaselab::memory::CountingAlloc;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

use leaselab_model::memory::{note_allocated, note_freed};

/// The system allocator, counting live bytes per thread (a thread-local addition per call:
/// no lock, no shared counter).
pub struct CountingAlloc;

// SAFETY: every call is passed to `System` unchanged; the counting only reads the sizes and
// never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            note_allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            note_allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        note_freed(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`, and `new_size` meets `realloc`'s contract by the caller's.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            note_freed(layout.size());
            note_allocated(new_size);
        }
        moved
    }
}
