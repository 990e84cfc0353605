//! In-process driver (in progress).
