//! A small SQL lexer: enough of PostgreSQL's token rules to compare statements regardless of
//! case, white space and comments.

/// One token of SQL text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// A keyword or unquoted identifier, folded to lower case as PostgreSQL folds it.
    Word {
        /// The folded text.
        folded: String,
        /// The text as written.
        raw: &'a str,
    },
    /// A double-quoted identifier (kept as written, without the quotes).
    QuotedIdent(String),
    /// An unsigned run of decimal digits.
    Integer(&'a str),
    /// A positional parameter `$n`.
    Param(u32),
    /// An operator or punctuation: `>=`, `<=`, `<>`, `!=` or a single character.
    Symbol(&'a str),
    /// Anything else (string literals, stray characters): never matches a pattern.
    Other(&'a str),
}

impl Token<'_> {
    /// The text as written, for error messages.
    pub(crate) fn raw(&self) -> String {
        match self {
            Token::Word { raw, .. } => (*raw).to_string(),
            Token::QuotedIdent(name) => format!("\"{name}\""),
            Token::Integer(raw) | Token::Symbol(raw) | Token::Other(raw) => (*raw).to_string(),
            Token::Param(n) => format!("${n}"),
        }
    }
}

/// Splits `sql` into tokens, dropping white space and `--`/`/* */` comments.
pub(crate) fn tokenize(sql: &str) -> Vec<Token<'_>> {
    let bytes = sql.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let (token, next) = next_token(sql, pos);
        debug_assert!(next > pos, "the lexer always advances");
        if let Some(token) = token {
            tokens.push(token);
        }
        pos = next;
    }
    tokens
}

/// The token starting at byte `start` (None for white space or a comment) and the position
/// after it.
fn next_token(sql: &str, start: usize) -> (Option<Token<'_>>, usize) {
    let bytes = sql.as_bytes();
    let c = bytes[start];
    let rest = &bytes[start..];
    if c.is_ascii_whitespace() {
        return (None, start + 1);
    }
    if rest.starts_with(b"--") {
        let end = find_from(bytes, start, b"\n").map_or(bytes.len(), |at| at + 1);
        return (None, end);
    }
    if rest.starts_with(b"/*") {
        return (None, block_comment_end(bytes, start));
    }
    if c.is_ascii_alphabetic() || c == b'_' || !c.is_ascii() {
        return word(sql, start);
    }
    if c.is_ascii_digit() {
        let end = scan_while(bytes, start, |b| b.is_ascii_digit());
        return (Some(Token::Integer(&sql[start..end])), end);
    }
    if c == b'$' {
        let end = scan_while(bytes, start + 1, |b| b.is_ascii_digit());
        let number = sql[start + 1..end].parse::<u32>().ok();
        return match number {
            Some(n) if end > start + 1 => (Some(Token::Param(n)), end),
            _ => (Some(Token::Other(&sql[start..start + 1])), start + 1),
        };
    }
    if c == b'"' {
        return quoted_ident(sql, start);
    }
    if c == b'\'' {
        let end = find_from(bytes, start + 1, b"'").map_or(bytes.len(), |at| at + 1);
        return (Some(Token::Other(&sql[start..end])), end);
    }
    for pair in [">=", "<=", "<>", "!="] {
        if rest.starts_with(pair.as_bytes()) {
            return (Some(Token::Symbol(&sql[start..start + 2])), start + 2);
        }
    }
    (Some(Token::Symbol(&sql[start..start + 1])), start + 1)
}

/// A keyword or identifier (letters, digits, `_`, `$`; non-ASCII characters count as letters).
fn word(sql: &str, start: usize) -> (Option<Token<'_>>, usize) {
    let end = scan_while(sql.as_bytes(), start, |b| {
        b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || !b.is_ascii()
    });
    let raw = &sql[start..end];
    let folded = raw.to_ascii_lowercase();
    (Some(Token::Word { folded, raw }), end)
}

/// A `"quoted identifier"` with `""` standing for one quote.
fn quoted_ident(sql: &str, start: usize) -> (Option<Token<'_>>, usize) {
    let bytes = sql.as_bytes();
    let mut name = String::new();
    let mut pos = start + 1;
    let mut segment_start = pos;
    while pos < bytes.len() {
        if bytes[pos] == b'"' {
            name.push_str(&sql[segment_start..pos]);
            if bytes.get(pos + 1) == Some(&b'"') {
                name.push('"');
                pos += 2;
                segment_start = pos;
                continue;
            }
            return (Some(Token::QuotedIdent(name)), pos + 1);
        }
        pos += 1;
    }
    (Some(Token::Other(&sql[start..])), bytes.len())
}

/// The position after a (nested) `/* */` comment starting at `start`.
fn block_comment_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut pos = start;
    while pos < bytes.len() {
        if bytes[pos..].starts_with(b"/*") {
            depth += 1;
            pos += 2;
        } else if bytes[pos..].starts_with(b"*/") {
            depth -= 1;
            pos += 2;
            if depth == 0 {
                return pos;
            }
        } else {
            pos += 1;
        }
    }
    bytes.len()
}

/// The first position at or after `from` where `pattern` starts.
fn find_from(bytes: &[u8], from: usize, pattern: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(pattern.len())
        .position(|window| window == pattern)
        .map(|at| from + at)
}

/// The first position at or after `from` whose byte does not satisfy `keep`.
fn scan_while(bytes: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    let mut pos = from;
    while pos < bytes.len() && keep(bytes[pos]) {
        pos += 1;
    }
    pos
}
