//! No lock (tutorial step 1).
//!
//! **Guards against:** nothing. Each caller reads the balance, decides, works, and writes its
//! own new balance over whatever is there.
//!
//! **Relies on:** nobody else spending from the same wallet at the same time. Two callers that
//! read the same balance both write `balance - amount`: a lost update.
//!
//! The machine is [`LockedSpend`](super::locked::LockedSpend) with
//! [`Lock::Nothing`](super::lock::Lock::Nothing) and the balance in Redis.
