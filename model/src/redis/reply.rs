//! RESP2 reply values, and the one way they are written for people ([`Reply::describe`]).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A reply as Redis sends it over RESP2.
///
/// Serialised tagged by kind, e.g. `{"status":"OK"}`, `{"integer":1}`, `"nil"`; a bulk
/// string as text when it is UTF-8.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reply {
    /// A simple string, e.g. `+OK`.
    Status(String),
    /// An error, the full text including its prefix, e.g. `ERR syntax error`.
    Error(String),
    /// An integer, e.g. `:1`.
    Integer(i64),
    /// A bulk string.
    Bulk(#[serde(with = "crate::text_bytes")] Vec<u8>),
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

    /// The reply on one line, as redis-cli shows it: `OK`, `(integer) 1`, `"100"`, `(nil)`,
    /// `(error) ERR ...`, arrays as `[a, b]`.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        self.describe_into(&mut text);
        text
    }

    fn describe_into(&self, out: &mut String) {
        match self {
            Reply::Status(status) => out.push_str(status),
            Reply::Error(error) => {
                let _ = write!(out, "(error) {error}");
            }
            Reply::Integer(value) => {
                let _ = write!(out, "(integer) {value}");
            }
            Reply::Bulk(bytes) => out.push_str(&escape_bytes(bytes)),
            Reply::Nil | Reply::NilArray => out.push_str("(nil)"),
            Reply::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push_str(", ");
                    }
                    item.describe_into(out);
                }
                out.push(']');
            }
        }
    }
}

/// A byte string quoted as redis-cli quotes it: printable ASCII as is, `\"`, `\\`, `\n`,
/// `\r`, `\t`, anything else as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() + 2);
    text.push('"');
    for &byte in bytes {
        match byte {
            b'"' => text.push_str("\\\""),
            b'\\' => text.push_str("\\\\"),
            b'\n' => text.push_str("\\n"),
            b'\r' => text.push_str("\\r"),
            b'\t' => text.push_str("\\t"),
            0x20..=0x7e => text.push(byte as char),
            _ => {
                let _ = write!(text, "\\x{byte:02x}");
            }
        }
    }
    text.push('"');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_described_like_redis_cli() {
        let reply = Reply::Array(vec![
            Reply::ok(),
            Reply::Nil,
            Reply::Integer(3),
            Reply::Bulk(b"v\n\xff".to_vec()),
            Reply::error("ERR x"),
            Reply::NilArray,
        ]);
        assert_eq!(
            reply.describe(),
            "[OK, (nil), (integer) 3, \"v\\n\\xff\", (error) ERR x, (nil)]"
        );
    }

    #[test]
    fn replies_serialise_tagged_and_read_back() {
        let reply = Reply::Array(vec![
            Reply::ok(),
            Reply::Nil,
            Reply::Integer(-2),
            Reply::Bulk(b"100".to_vec()),
            Reply::Bulk(vec![0xff, 0]),
            Reply::error("ERR x"),
        ]);
        let json = serde_json::to_string(&reply).unwrap();
        assert_eq!(
            json,
            r#"{"array":[{"status":"OK"},"nil",{"integer":-2},{"bulk":"100"},{"bulk":[255,0]},{"error":"ERR x"}]}"#
        );
        assert_eq!(serde_json::from_str::<Reply>(&json).unwrap(), reply);
    }
}
