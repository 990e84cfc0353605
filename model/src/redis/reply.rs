//! RESP2 reply values.

/// A reply as Redis sends it over RESP2.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reply {
    /// A simple string, e.g. `+OK`.
    Status(String),
    /// An error, the full text including its prefix, e.g. `ERR syntax error`.
    Error(String),
    /// An integer, e.g. `:1`.
    Integer(i64),
    /// A bulk string.
    Bulk(Vec<u8>),
    /// The null bulk string (`$-1`), what redis-cli shows as `(nil)`.
    Nil,
    /// An array of replies.
    Array(Vec<Reply>),
    /// The null array (`*-1`): what `EXEC` answers when a watched key was touched.
    NilArray,
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Status("OK".to_string())
    }

    /// An error reply with the given full text.
    pub fn error(text: impl Into<String>) -> Reply {
        Reply::Error(text.into())
    }

    /// True for an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}
