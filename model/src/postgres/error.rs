//! Errors as PostgreSQL reports them: severity, SQLSTATE, message, detail.

/// An error response.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PgError {
    /// `ERROR` (or `FATAL`).
    pub severity: &'static str,
    /// The five-character SQLSTATE, e.g. `23514`.
    pub code: &'static str,
    /// The primary message, exactly as PostgreSQL words it.
    pub message: String,
    /// The DETAIL line, if any.
    pub detail: Option<String>,
}
