//! Scenarios (in progress).
