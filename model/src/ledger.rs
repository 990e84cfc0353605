//! The ledger invariant (in progress).
