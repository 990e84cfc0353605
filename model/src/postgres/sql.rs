//! The SQL front end: a query string split into statements and parsed with `sqlparser`'s
//! PostgreSQL dialect, every statement before any runs, with PostgreSQL's syntax errors
//! (`syntax error at or near "..."`, `syntax error at end of input`) and their positions.

use sqlparser::ast::Spanned;

/// The syntax tree type of a statement (`sqlparser`'s).
pub use sqlparser::ast::Statement as Ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use super::error::{sqlstate, PgError};
use super::statement::Statement;

/// How deep expressions may nest before the parser refuses them.
const RECURSION_LIMIT: usize = 64;

/// A statement for the general path: its syntax tree and where its text is in the query.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneralStatement {
    /// The syntax tree.
    pub ast: sqlparser::ast::Statement,
    /// The statement's text.
    pub text: String,
    /// How many characters of the query come before the statement.
    pub offset: u32,
}

impl GeneralStatement {
    /// The 1-based position in the query of a location in the statement's text.
    pub fn position(&self, location: Location) -> Option<u32> {
        if location.line == 0 {
            return None;
        }
        let mut line = 1;
        let mut column = 1;
        for (index, ch) in self.text.chars().enumerate() {
            if line == location.line && column == location.column {
                return Some(self.offset + index as u32 + 1);
            }
            if ch == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        Some(self.offset + self.text.chars().count() as u32 + 1)
    }

    /// The position of a syntax node.
    pub fn position_of(&self, node: &impl Spanned) -> Option<u32> {
        self.position(node.span().start)
    }
}

/// One statement of a query.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// A statement the safeguards send, run natively when possible.
    Typed(Statement, String),
    /// Any other statement.
    General(Box<GeneralStatement>),
}

impl Parsed {
    /// The statement's text.
    pub fn text(&self) -> &str {
        match self {
            Parsed::Typed(_, text) => text,
            Parsed::General(general) => &general.text,
        }
    }
}

/// Splits `sql` into statements and parses them all; the first error stops it (nothing
/// runs then). An empty list means an empty query.
pub fn parse_query(sql: &str) -> Result<Vec<Parsed>, PgError> {
    let pieces = split(sql)?;
    let mut parsed = Vec::with_capacity(pieces.len());
    for (text, offset) in pieces {
        let starts_with_start = text
            .split_whitespace()
            .next()
            .is_some_and(|word| word.eq_ignore_ascii_case("start"));
        if let Ok(statement) = Statement::parse(&text).map_err(|_| ()).and_then(|s| {
            // `START TRANSACTION` reports its own command tag: the general path runs it.
            if starts_with_start {
                Err(())
            } else {
                Ok(s)
            }
        }) {
            parsed.push(Parsed::Typed(statement, text));
            continue;
        }
        parsed.push(Parsed::General(Box::new(parse_piece(text, offset)?)));
    }
    Ok(parsed)
}

/// Parses text holding exactly one statement for the general path.
pub fn parse_general(sql: &str) -> Result<GeneralStatement, PgError> {
    let mut pieces = split(sql)?;
    if pieces.len() != 1 {
        return Err(PgError::error(
            sqlstate::SYNTAX_ERROR,
            "cannot insert multiple commands into a prepared statement",
        ));
    }
    let (text, offset) = pieces.remove(0);
    parse_piece(text, offset)
}

fn parse_piece(text: String, offset: u32) -> Result<GeneralStatement, PgError> {
    if let Some(general) = transaction_words(&text, offset) {
        return Ok(general);
    }
    let dialect = PostgreSqlDialect {};
    let statements = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(&text)
        .and_then(|mut parser| parser.parse_statements())
        .map_err(|error| syntax_error(&text, offset, &error.to_string()))?;
    let mut statements = statements.into_iter();
    let (Some(ast), None) = (statements.next(), statements.next()) else {
        return Err(syntax_error(&text, offset, "found: EOF"));
    };
    Ok(GeneralStatement { ast, text, offset })
}

/// `ABORT [WORK | TRANSACTION]`, which the dialect does not parse, as `ROLLBACK`.
fn transaction_words(text: &str, offset: u32) -> Option<GeneralStatement> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let is_abort = matches!(
        words
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["abort"] | ["abort", "work"] | ["abort", "transaction"]
    );
    is_abort.then(|| GeneralStatement {
        ast: sqlparser::ast::Statement::Rollback {
            chain: false,
            savepoint: None,
        },
        text: text.to_string(),
        offset,
    })
}

/// The statements' texts and offsets (in characters), split at top-level `;`. Pieces with no
/// tokens (white space, comments) are dropped.
fn split(sql: &str) -> Result<Vec<(String, u32)>, PgError> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|error| {
            let whole = GeneralStatement {
                ast: sqlparser::ast::Statement::Commit {
                    chain: false,
                    end: false,
                    modifier: None,
                },
                text: sql.to_string(),
                offset: 0,
            };
            let position = whole.position(error.location);
            let rest: String = sql
                .chars()
                .skip(position.map_or(0, |p| p as usize - 1))
                .collect();
            let message = if error.message.contains("Unterminated string") {
                format!("unterminated quoted string at or near \"{rest}\"")
            } else if error.message.contains("Unterminated") {
                format!("unterminated quoted identifier at or near \"{rest}\"")
            } else {
                format!(
                    "syntax error at or near \"{}\"",
                    rest.chars().next().unwrap_or(' ')
                )
            };
            PgError::error(sqlstate::SYNTAX_ERROR, message).at(position)
        })?;
    let char_index = CharIndex::new(sql);
    let mut pieces = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (char index of first token, byte index)
    let mut end_byte = 0;
    let mut flush = |start: &mut Option<(usize, usize)>, end_byte: usize| {
        if let Some((start_char, start_byte)) = start.take() {
            pieces.push((sql[start_byte..end_byte].to_string(), start_char as u32));
        }
    };
    for token in &tokens {
        match token.token {
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                flush(&mut start, end_byte);
            }
            _ => {
                if start.is_none() {
                    let (c, b) = char_index.locate(token.span.start);
                    start = Some((c, b));
                }
                end_byte = char_index.locate(token.span.end).1;
            }
        }
    }
    flush(&mut start, end_byte);
    Ok(pieces)
}

/// Maps (line, column) locations of a text to character and byte indexes.
struct CharIndex {
    /// For each line, the (char index, byte index) of its start.
    lines: Vec<(usize, usize)>,
    text: String,
}

impl CharIndex {
    fn new(text: &str) -> CharIndex {
        let mut lines = vec![(0, 0)];
        for (char_at, (byte_at, ch)) in text.char_indices().enumerate() {
            if ch == '\n' {
                lines.push((char_at + 1, byte_at + 1));
            }
        }
        CharIndex {
            lines,
            text: text.to_string(),
        }
    }

    fn locate(&self, location: Location) -> (usize, usize) {
        let line = (location.line.max(1) as usize - 1).min(self.lines.len() - 1);
        let (mut char_at, mut byte_at) = self.lines[line];
        let mut rest = self.text[byte_at..].chars();
        for _ in 1..location.column.max(1) {
            match rest.next() {
                Some(ch) => {
                    char_at += 1;
                    byte_at += ch.len_utf8();
                }
                None => break,
            }
        }
        (char_at, byte_at)
    }
}

/// PostgreSQL's syntax error for a `sqlparser` error message (`... found: X at Line: L,
/// Column: C`), pointing at the token the parser stopped at.
fn syntax_error(text: &str, offset: u32, message: &str) -> PgError {
    if message.contains("Recursion limit") || message.contains("recursion limit") {
        return PgError::error("54001", "stack depth limit exceeded");
    }
    let statement = GeneralStatement {
        ast: sqlparser::ast::Statement::Commit {
            chain: false,
            end: false,
            modifier: None,
        },
        text: text.to_string(),
        offset,
    };
    let found = message
        .rsplit_once("found: ")
        .map(|(_, rest)| rest)
        .unwrap_or("");
    let (token, location) = match found.rsplit_once(" at Line: ") {
        Some((token, at)) => {
            let mut numbers = at.split(", Column: ");
            let line = numbers.next().and_then(|n| n.trim().parse().ok());
            let column = numbers.next().and_then(|n| n.trim().parse().ok());
            match (line, column) {
                (Some(line), Some(column)) => (token, Some(Location { line, column })),
                _ => (token, None),
            }
        }
        None => (found, None),
    };
    let end = offset + text.chars().count() as u32 + 1;
    if token == "EOF" || token.is_empty() {
        return PgError::error(sqlstate::SYNTAX_ERROR, "syntax error at end of input")
            .at(Some(end));
    }
    let position = location.and_then(|l| statement.position(l));
    PgError::error(
        sqlstate::SYNTAX_ERROR,
        format!("syntax error at or near \"{token}\""),
    )
    .at(position.or(Some(end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_splits_into_statements_with_offsets() {
        let parsed = parse_query("BEGIN; SELECT 'a;b' ;; COMMIT").unwrap();
        let texts: Vec<&str> = parsed.iter().map(Parsed::text).collect();
        assert_eq!(texts, ["BEGIN", "SELECT 'a;b'", "COMMIT"]);
        assert!(matches!(parsed[0], Parsed::Typed(Statement::Begin, _)));
        let Parsed::General(select) = &parsed[1] else {
            panic!("{parsed:?}")
        };
        assert_eq!(select.offset, 7);
        assert!(parse_query(" ; -- nothing\n").unwrap().is_empty());
    }

    #[test]
    fn syntax_errors_name_the_token_and_its_position() {
        let error = parse_query("BEGIN; SELEC 1").unwrap_err();
        assert_eq!(error.code, "42601");
        assert_eq!(error.message, "syntax error at or near \"SELEC\"");
        assert_eq!(error.position, Some(8));
        let error = parse_query("SELECT balance FROM").unwrap_err();
        assert_eq!(error.message, "syntax error at end of input");
        assert_eq!(error.position, Some(20));
    }
}
