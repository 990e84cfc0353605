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

/// Operators one statement may hold. A chain `1 + 1 + ...` (or `SELECT 1 UNION SELECT 1
/// ...`) nests one level per operator without any parenthesis, and the stand-in analyses,
/// evaluates and drops expressions recursively; past this many it answers as PostgreSQL does when its stack runs out (which
/// PostgreSQL 15 does at about 4,000) instead of overflowing its own.
pub const OPERATOR_LIMIT: usize = 1000;

/// A statement for the general path: its syntax tree and where its text is in the query.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneralStatement {
    /// The syntax tree.
    pub ast: sqlparser::ast::Statement,
    /// The statement's text.
    pub text: String,
    /// How many characters of the query come before the statement.
    pub offset: u32,
    /// The character index at which each line of `text` starts, and the number of characters
    /// (so that a position costs a look-up, not a scan of the text).
    lines: (Vec<u32>, u32),
    /// Its locking clauses' strengths, which the SQL parser does not read.
    pub locks: LockStrengths,
}

/// The weaker row locks of a statement's locking clauses: `FOR NO KEY UPDATE` and `FOR KEY
/// SHARE`, which the SQL parser lacks, are parsed as `FOR UPDATE` and `FOR SHARE` and marked
/// here (a statement mixing `FOR UPDATE` with `FOR NO KEY UPDATE`, or `FOR SHARE` with `FOR
/// KEY SHARE`, is 0A000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStrengths {
    /// Its `FOR UPDATE` clauses are `FOR NO KEY UPDATE`.
    pub no_key_update: bool,
    /// Its `FOR SHARE` clauses are `FOR KEY SHARE`.
    pub key_share: bool,
}

impl GeneralStatement {
    /// A statement's tree with its text and offset.
    pub fn new(ast: sqlparser::ast::Statement, text: String, offset: u32) -> GeneralStatement {
        let mut starts = vec![0u32];
        let mut count = 0u32;
        for ch in text.chars() {
            count += 1;
            if ch == '\n' {
                starts.push(count);
            }
        }
        GeneralStatement {
            ast,
            text,
            offset,
            lines: (starts, count),
            locks: LockStrengths::default(),
        }
    }

    /// The 1-based position in the query of a location in the statement's text (past the
    /// end when the location is not in it).
    pub fn position(&self, location: Location) -> Option<u32> {
        if location.line == 0 {
            return None;
        }
        let (starts, count) = (&self.lines.0, self.lines.1);
        let end = Some(self.offset + count + 1);
        let Ok(line) = usize::try_from(location.line - 1) else {
            return end;
        };
        let Some(&start) = starts.get(line) else {
            return end;
        };
        // The line's characters, its line feed included.
        let length = starts.get(line + 1).map_or(count, |&next| next) - start;
        match u32::try_from(location.column) {
            Ok(column) if column >= 1 && column - 1 < length => Some(self.offset + start + column),
            _ => end,
        }
    }

    /// The position of a syntax node.
    pub fn position_of(&self, node: &impl Spanned) -> Option<u32> {
        self.position(node.span().start)
    }

    /// The position of `word` (any case) where it ends just before `position` with only
    /// white space and one opening parenthesis between: a function's name before its first
    /// argument (`substr(` before `12345`). `None` when the text is not so.
    pub fn word_before(&self, position: u32, word: &str) -> Option<u32> {
        self.word_ending_before(position, word, true)
    }

    /// The position of `word` (any case) where it ends just before `position` with only white
    /// space between: a keyword before its operand (`DEFAULT` before `5`).
    pub fn keyword_before(&self, position: u32, word: &str) -> Option<u32> {
        self.word_ending_before(position, word, false)
    }

    /// The position of the last `word` (any case) that starts before `position`: the
    /// `extract` of `extract(field FROM value)` before its value.
    pub fn last_word_before(&self, position: u32, word: &str) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let before: String = self.text.chars().take(index).collect();
        let found = before
            .to_ascii_lowercase()
            .rfind(&word.to_ascii_lowercase())?;
        let found_chars = u32::try_from(before[..found].chars().count()).ok()?;
        Some(self.offset + found_chars + 1)
    }

    /// The position of the first `needle` at or after `position` (a cast's `::` after its
    /// operand).
    pub fn text_from(&self, position: u32, needle: &str) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let rest: String = self.text.chars().skip(index).collect();
        let found = rest.find(needle)?;
        let found_chars = u32::try_from(rest[..found].chars().count()).ok()?;
        Some(position + found_chars)
    }

    /// Where what follows an operand starts: the operand starts at `start` and its span
    /// says it ends at `after`, but the SQL parser's spans of a call or a parenthesised
    /// expression stop before their closing parentheses; so past every parenthesis the operand
    /// opened (quotes skipped), then past white space.
    pub fn past_operand(&self, start: u32, after: u32) -> Option<u32> {
        let from = usize::try_from(start.checked_sub(self.offset + 1)?).ok()?;
        let until = usize::try_from(after.checked_sub(self.offset + 1)?).ok()?;
        let (mut depth, mut quote, mut index) = (0i64, None, from);
        for c in self.text.chars().skip(from) {
            if index >= until && depth <= 0 && quote.is_none() {
                break;
            }
            match quote {
                Some(open) if c == open => quote = None,
                Some(_) => {}
                None => match c {
                    '\'' | '"' => quote = Some(c),
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                },
            }
            index += 1;
        }
        self.next_word_at(self.offset + 1 + u32::try_from(index).ok()?)
    }

    /// The position of the `[` at `position` or just before it (only white space between):
    /// where an array constructor opens, its first element's span starting at or after it.
    pub fn bracket_at_or_before(&self, position: u32) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let chars: Vec<char> = self.text.chars().take(index + 1).collect();
        let mut at = chars.len();
        while at > 0 {
            at -= 1;
            match chars[at] {
                '[' => return Some(self.offset + u32::try_from(at).ok()? + 1),
                c if c.is_whitespace() || at + 1 == chars.len() => {}
                _ => return None,
            }
        }
        None
    }

    /// The position of the first character at or after `position` that is not white space.
    pub fn next_word_at(&self, position: u32) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let skipped = self
            .text
            .chars()
            .skip(index)
            .position(|c| !c.is_whitespace())?;
        Some(position + u32::try_from(skipped).ok()?)
    }

    /// The position of what follows the `::` casts that start at `position` (white space
    /// skipped): past each type name's words (`double precision`, `timestamp with time
    /// zone`), its modifiers in parentheses and its `[]`s. `None` when no `::` starts there.
    pub fn after_casts(&self, position: u32) -> Option<u32> {
        const LATER_WORDS: [&str; 6] = ["precision", "varying", "with", "without", "time", "zone"];
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let chars: Vec<char> = self.text.chars().collect();
        let is = |at: usize, c: char| chars.get(at) == Some(&c);
        let skip_space = |mut at: usize| {
            while chars.get(at).is_some_and(|c| c.is_whitespace()) {
                at += 1;
            }
            at
        };
        // Past the next `close` (a parsed statement closes what it opens; at the end of the
        // text either way).
        let skip_to = |mut at: usize, close: char| {
            while chars.get(at).is_some_and(|&c| c != close) {
                at += 1;
            }
            (at + 1).min(chars.len())
        };
        let mut at = index;
        if !(is(at, ':') && is(at + 1, ':')) {
            return None;
        }
        while is(at, ':') && is(at + 1, ':') {
            at += 2;
            let mut words = 0;
            loop {
                at = skip_space(at);
                let start = at;
                if is(at, '"') {
                    at = skip_to(at + 1, '"');
                } else {
                    while chars
                        .get(at)
                        .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                    {
                        at += 1;
                    }
                }
                let word: String = chars[start..at].iter().collect::<String>().to_lowercase();
                if at == start || (words > 0 && !LATER_WORDS.contains(&word.as_str())) {
                    at = start;
                    break;
                }
                words += 1;
            }
            loop {
                at = skip_space(at);
                if is(at, '(') {
                    at = skip_to(at, ')');
                } else if is(at, '[') {
                    at = skip_to(at, ']');
                } else {
                    break;
                }
            }
        }
        Some(u32::try_from(at).ok()? + self.offset + 1)
    }

    /// The position of the opening parenthesis before `position` with only white space
    /// between (a subquery's, before its `SELECT`); `None` when there is none.
    pub fn opening_parenthesis_before(&self, position: u32) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let before: Vec<char> = self.text.chars().take(index).collect();
        let at = before.iter().rposition(|c| !c.is_whitespace())?;
        let at_u32 = u32::try_from(at).ok()?;
        (before[at] == '(').then(|| self.offset + at_u32 + 1)
    }

    fn word_ending_before(&self, position: u32, word: &str, parenthesis: bool) -> Option<u32> {
        let index = usize::try_from(position.checked_sub(self.offset + 1)?).ok()?;
        let chars: Vec<char> = self.text.chars().take(index).collect();
        let skip_space = |mut end: usize| {
            while end > 0 && chars[end - 1].is_whitespace() {
                end -= 1;
            }
            end
        };
        let mut end = skip_space(chars.len());
        if parenthesis {
            end = skip_space(end.checked_sub(1).filter(|&at| chars[at] == '(')?);
        }
        let start = end.checked_sub(word.chars().count())?;
        let found: String = chars[start..end].iter().collect();
        let start = u32::try_from(start).ok()?;
        found
            .eq_ignore_ascii_case(word)
            .then(|| self.offset + start + 1)
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

/// How many texts each thread remembers, for each of [`parse_query`] and [`parse_general`].
const REMEMBERED_QUERIES: usize = 32;

/// The longest query text remembered, in bytes.
const REMEMBERED_QUERY_BYTES: usize = 1024;

/// The last few texts parsed, by text, most recent last.
type Remembered<T> = std::cell::RefCell<std::collections::VecDeque<(String, T)>>;

thread_local! {
    /// The last few queries parsed (a safeguard's SQL is sent over and over, by every caller,
    /// in every run and every state of a check): parsing is a pure function of the text, so a
    /// remembered parse is the parse, and copying a syntax tree costs a small part of parsing
    /// it again. Errors are not kept.
    static REMEMBERED: Remembered<Vec<Parsed>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
    /// The same for [`parse_general`] (a safeguard file's statements, one at a time).
    static REMEMBERED_GENERAL: Remembered<GeneralStatement> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// `parse(sql)`, or the copy of it `remembered` holds (texts up to
/// [`REMEMBERED_QUERY_BYTES`] only).
fn remembered_parse<T: Clone + 'static>(
    remembered: &'static std::thread::LocalKey<Remembered<T>>,
    sql: &str,
    parse: impl FnOnce(&str) -> Result<T, PgError>,
) -> Result<T, PgError> {
    if sql.len() > REMEMBERED_QUERY_BYTES {
        return parse(sql);
    }
    let hit = remembered.with(|remembered| {
        let remembered = remembered.borrow();
        remembered
            .iter()
            .find(|(text, _)| text == sql)
            .map(|(_, parsed)| parsed.clone())
    });
    if let Some(parsed) = hit {
        return Ok(parsed);
    }
    let parsed = parse(sql)?;
    remembered.with(|remembered| {
        let mut remembered = remembered.borrow_mut();
        if remembered.len() == REMEMBERED_QUERIES {
            remembered.pop_front();
        }
        remembered.push_back((sql.to_string(), parsed.clone()));
    });
    Ok(parsed)
}

/// Splits `sql` into statements and parses them all; the first error stops it (nothing
/// runs then). An empty list means an empty query.
pub fn parse_query(sql: &str) -> Result<Vec<Parsed>, PgError> {
    remembered_parse(&REMEMBERED, sql, parse_query_afresh)
}

/// [`parse_query`] without the remembered parses.
fn parse_query_afresh(sql: &str) -> Result<Vec<Parsed>, PgError> {
    // The parsed statements are held together until they have all run: a query of many
    // thousands of statements is bound like one statement (53200 past the limit).
    let _scope = crate::memory::StatementScope::enter();
    let pieces = split(sql)?;
    let mut parsed = Vec::with_capacity(pieces.len());
    for (text, offset) in pieces {
        PgError::check_statement_memory()?;
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
    remembered_parse(&REMEMBERED_GENERAL, sql, parse_general_afresh)
}

/// [`parse_general`] without the remembered parses.
fn parse_general_afresh(sql: &str) -> Result<GeneralStatement, PgError> {
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
    if operators_in(&text) > OPERATOR_LIMIT {
        return Err(stack_depth_exceeded());
    }
    let (parsed_text, locks) = weaker_locks(&text)?;
    let dialect = PostgreSqlDialect {};
    let statements = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(parsed_text.as_deref().unwrap_or(&text))
        .and_then(|mut parser| parser.parse_statements())
        .map_err(|error| syntax_error(&text, offset, &error.to_string()))?;
    let mut statements = statements.into_iter();
    let (Some(ast), None) = (statements.next(), statements.next()) else {
        return Err(syntax_error(&text, offset, "found: EOF"));
    };
    let mut statement = GeneralStatement::new(ast, text, offset);
    statement.locks = locks;
    Ok(statement)
}

/// `text` with the words `NO KEY` of `FOR NO KEY UPDATE` and `KEY` of `FOR KEY SHARE` blanked
/// out (each character a space, so positions stay), for the SQL parser, and what they were;
/// `None` when it has neither.
fn weaker_locks(text: &str) -> Result<(Option<String>, LockStrengths), PgError> {
    let lowered = text.to_ascii_lowercase();
    if !lowered.contains("key") {
        return Ok((None, LockStrengths::default()));
    }
    let dialect = PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, text).tokenize_with_location() else {
        return Ok((None, LockStrengths::default()));
    };
    let words: Vec<(String, sqlparser::tokenizer::Span)> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => (w.value.to_ascii_lowercase(), t.span),
            _ => (String::new(), t.span),
        })
        .collect();
    let char_index = CharIndex::new(text);
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let (mut update, mut no_key_update, mut share, mut key_share) = (false, false, false, false);
    for (at, (word, _)) in words.iter().enumerate() {
        if word != "for" {
            continue;
        }
        let next: Vec<&str> = words[at + 1..]
            .iter()
            .take(3)
            .map(|(w, _)| w.as_str())
            .collect();
        match next.as_slice() {
            ["no", "key", "update", ..] => {
                no_key_update = true;
                blank.extend([at + 1, at + 2].map(|i| {
                    let span = words[i].1;
                    (
                        char_index.locate(span.start).1,
                        char_index.locate(span.end).1,
                    )
                }));
            }
            ["key", "share", ..] => {
                key_share = true;
                let span = words[at + 1].1;
                blank.push((
                    char_index.locate(span.start).1,
                    char_index.locate(span.end).1,
                ));
            }
            ["update", ..] => update = true,
            ["share", ..] => share = true,
            _ => {}
        }
    }
    if blank.is_empty() {
        return Ok((None, LockStrengths::default()));
    }
    if (update && no_key_update) || (share && key_share) {
        return Err(PgError::unsupported_statement(text));
    }
    let mut bytes = text.as_bytes().to_vec();
    for (start, end) in blank {
        bytes[start..end].fill(b' ');
    }
    let blanked = String::from_utf8(bytes).expect("ASCII words blanked in UTF-8 text");
    Ok((
        Some(blanked),
        LockStrengths {
            no_key_update,
            key_share,
        },
    ))
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
    is_abort.then(|| {
        GeneralStatement::new(
            sqlparser::ast::Statement::Rollback {
                chain: false,
                savepoint: None,
            },
            text.to_string(),
            offset,
        )
    })
}

/// The statements' texts and offsets (in characters), split at top-level `;`. Pieces with no
/// tokens (white space, comments) are dropped.
fn split(sql: &str) -> Result<Vec<(String, u32)>, PgError> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|error| {
            let whole = GeneralStatement::new(
                sqlparser::ast::Statement::Commit {
                    chain: false,
                    end: false,
                    modifier: None,
                },
                sql.to_string(),
                0,
            );
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
    // Where the piece's last token ends, located only when the piece ends.
    let mut last_end: Option<Location> = None;
    let mut flush = |start: &mut Option<(usize, usize)>, end_byte: usize| {
        if let Some((start_char, start_byte)) = start.take() {
            pieces.push((sql[start_byte..end_byte].to_string(), start_char as u32));
        }
    };
    for token in &tokens {
        match token.token {
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                if let Some(end) = last_end.take() {
                    end_byte = char_index.locate(end).1;
                }
                flush(&mut start, end_byte);
            }
            // PostgreSQL's lexer refuses `""` wherever it stands, before anything runs.
            Token::Word(ref word) if word.quote_style == Some('"') && word.value.is_empty() => {
                let at = char_index.locate(token.span.start).0 as u32 + 1;
                return Err(PgError::error(
                    sqlstate::SYNTAX_ERROR,
                    "zero-length delimited identifier at or near \"\"\"\"",
                )
                .at(Some(at)));
            }
            _ => {
                if start.is_none() {
                    let (c, b) = char_index.locate(token.span.start);
                    start = Some((c, b));
                }
                last_end = Some(token.span.end);
            }
        }
    }
    if let Some(end) = last_end.take() {
        end_byte = char_index.locate(end).1;
    }
    flush(&mut start, end_byte);
    Ok(pieces)
}

/// Maps (line, column) locations of a text to character and byte indexes.
struct CharIndex {
    /// For each line, the (char index, byte index) of its start.
    lines: Vec<(usize, usize)>,
    text: String,
    /// The last location found (line, column, char index, byte index): locations asked for in
    /// order along one long line go on from it instead of from the line's start.
    last: std::cell::Cell<(u64, u64, usize, usize)>,
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
            last: std::cell::Cell::new((0, 0, 0, 0)),
        }
    }

    fn locate(&self, location: Location) -> (usize, usize) {
        let line = (location.line.max(1) as usize - 1).min(self.lines.len() - 1);
        let column = location.column.max(1);
        let (last_line, last_column, last_char, last_byte) = self.last.get();
        let (mut char_at, mut byte_at, mut reached) =
            if last_line == line as u64 && last_column >= 1 && last_column <= column {
                (last_char, last_byte, last_column)
            } else {
                let (c, b) = self.lines[line];
                (c, b, 1)
            };
        let mut rest = self.text[byte_at..].chars();
        while reached < column {
            match rest.next() {
                Some(ch) => {
                    char_at += 1;
                    byte_at += ch.len_utf8();
                    reached += 1;
                }
                None => break,
            }
        }
        self.last.set((line as u64, reached, char_at, byte_at));
        (char_at, byte_at)
    }
}

/// PostgreSQL's syntax error for a `sqlparser` error message (`... found: X at Line: L,
/// Column: C`), pointing at the token the parser stopped at.
/// The parser's "START specified more than once" (a `CREATE SEQUENCE` option given twice) as
/// PostgreSQL's 42601 `conflicting or redundant options`, pointing at the second one's
/// keyword (found as the option's first word, the second time it is written).
fn repeated_option(text: &str, offset: u32, message: &str) -> Option<PgError> {
    let name = message.split_once(" specified more than once")?.0;
    let name = name.rsplit_once(": ").map_or(name, |(_, name)| name);
    let keyword = name.split_whitespace().next()?.to_ascii_uppercase();
    let chars: Vec<char> = text.chars().collect();
    let is_word = |c: &char| c.is_alphanumeric() || *c == '_';
    let mut seen = 0;
    let mut at = None;
    let mut index = 0;
    while index < chars.len() {
        if !is_word(&chars[index]) {
            index += 1;
            continue;
        }
        let start = index;
        while index < chars.len() && is_word(&chars[index]) {
            index += 1;
        }
        let word: String = chars[start..index].iter().collect();
        if word.eq_ignore_ascii_case(&keyword) {
            seen += 1;
            if seen == 2 {
                at = u32::try_from(start).ok().map(|start| offset + start + 1);
                break;
            }
        }
    }
    Some(PgError::error(sqlstate::SYNTAX_ERROR, "conflicting or redundant options").at(at))
}

fn syntax_error(text: &str, offset: u32, message: &str) -> PgError {
    if message.contains("Recursion limit") || message.contains("recursion limit") {
        return stack_depth_exceeded();
    }
    if let Some(error) = repeated_option(text, offset, message) {
        return error;
    }
    let statement = GeneralStatement::new(
        sqlparser::ast::Statement::Commit {
            chain: false,
            end: false,
            modifier: None,
        },
        text.to_string(),
        offset,
    );
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

/// PostgreSQL's error when an expression nests deeper than its stack allows.
pub(super) fn stack_depth_exceeded() -> PgError {
    PgError::error("54001", "stack depth limit exceeded").with_hint(
        "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after \
         ensuring the platform's stack depth limit is adequate.",
    )
}

/// How many operators (each a possible level of nesting) `text` holds.
fn operators_in(text: &str) -> usize {
    use super::lexer::Token as Lexed;
    super::lexer::tokenize(text)
        .iter()
        .filter(|token| match token {
            Lexed::Symbol(symbol) => matches!(
                *symbol,
                "+" | "-"
                    | "*"
                    | "/"
                    | "%"
                    | "^"
                    | "|"
                    | "="
                    | "<"
                    | ">"
                    | "<="
                    | ">="
                    | "<>"
                    | "!="
            ),
            Lexed::Word { folded, .. } => {
                matches!(
                    folded.as_str(),
                    "and"
                        | "or"
                        | "not"
                        | "is"
                        | "between"
                        | "like"
                        | "union"
                        | "intersect"
                        | "except"
                )
            }
            _ => false,
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_parse_is_the_parse() {
        let texts = [
            "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 42 AND fence < $2",
            "BEGIN; SELECT balance FROM wallets WHERE id = 42 FOR UPDATE",
            "SELECT 1 FROM wallets WHERE id = 42 AND",
            "SELECT upper(owner) AS o FROM spend GROUP BY o",
        ];
        for _ in 0..3 {
            for text in texts {
                let fresh = parse_query_afresh(text);
                assert_eq!(parse_query(text), fresh, "{text}");
                assert_eq!(parse_general(text), parse_general_afresh(text), "{text}");
            }
        }
        // More texts than are remembered: the first ones are parsed afresh again, the same.
        for n in 0..(REMEMBERED_QUERIES as u64 + 8) {
            let text = format!("SELECT balance FROM wallets WHERE id = {n}");
            assert_eq!(parse_query(&text), parse_query_afresh(&text));
        }
        assert!(REMEMBERED.with(|r| r.borrow().len()) <= REMEMBERED_QUERIES);
    }

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
