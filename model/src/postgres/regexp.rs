//! `~`, `~*`, `!~` and `!~*`: PostgreSQL's advanced regular expressions (AREs), read as
//! PostgreSQL's `regcomp` reads them and matched by the `regex` crate.
//!
//! The pattern is translated, character by character, into the crate's syntax: literals and
//! bracket expressions are written out as escaped code points (so `[a&&b]`, `[[]` or `#` mean
//! what they mean to PostgreSQL, not to the crate), `.` matches a newline (PostgreSQL's
//! default is not newline-sensitive), `\b` is a backspace and `\B` a backslash, `\m`, `\M`,
//! `\y`, `\Y` are the word constraints, `\Z` the end; the director prefixes `***=` (a literal)
//! and `***:`, and embedded options at the start (`(?i)`, `(?c)`, `(?s)`, `(?x)`, `(?t)`,
//! `(?q)`), are honoured. What the crate cannot match (back-references, lookahead and
//! lookbehind constraints, collating elements, equivalence classes, the newline-sensitive and
//! BRE/ERE options) is 0A000 naming it; a pattern PostgreSQL refuses is 2201B `invalid regular
//! expression: ...` with PostgreSQL's own reason where the two engines agree on one. Matching
//! is linear in the text (the crate has no backtracking), and a compiled pattern is limited to
//! [`REGEX_SIZE_LIMIT_BYTES`].

use std::cell::RefCell;
use std::fmt::Write as _;

use regex::{Regex, RegexBuilder};

use super::error::{sqlstate, PgError};

/// The most memory one compiled pattern may take; past it the pattern is 2201B `regular
/// expression is too complex` (PostgreSQL's `REG_ETOOBIG`).
pub const REGEX_SIZE_LIMIT_BYTES: usize = 1 << 20;
/// The largest repetition count PostgreSQL reads (`DUPMAX`).
const DUPMAX: u32 = 255;
/// Compiled patterns kept per thread (a statement compares every row with one pattern).
const CACHE_LIMIT: usize = 32;

thread_local! {
    static COMPILED: RefCell<Vec<(String, bool, Regex)>> = const { RefCell::new(Vec::new()) };
}

/// `text ~ pattern` (`~*` with `case_insensitive`).
pub fn is_match(text: &str, pattern: &str, case_insensitive: bool) -> Result<bool, PgError> {
    let cached = COMPILED.with(|compiled| {
        compiled
            .borrow()
            .iter()
            .find(|(p, ci, _)| p == pattern && *ci == case_insensitive)
            .map(|(_, _, regex)| regex.clone())
    });
    let regex = match cached {
        Some(regex) => regex,
        None => {
            let regex = compile(pattern, case_insensitive)?;
            COMPILED.with(|compiled| {
                let mut compiled = compiled.borrow_mut();
                if compiled.len() >= CACHE_LIMIT {
                    compiled.clear();
                }
                compiled.push((pattern.to_string(), case_insensitive, regex.clone()));
            });
            regex
        }
    };
    Ok(regex.is_match(text))
}

/// 2201B `invalid regular expression: <reason>`.
fn invalid(reason: &str) -> PgError {
    PgError::error("2201B", format!("invalid regular expression: {reason}"))
}

/// 0A000 for what PostgreSQL matches and the stand-in does not.
fn not_run(what: &str) -> PgError {
    PgError::error(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("{what} in a regular expression are not run by this stand-in"),
    )
}

const PARENTHESES: &str = "parentheses () not balanced";
const BRACKETS: &str = "brackets [] not balanced";
const BRACES: &str = "braces {} not balanced";
const ESCAPE: &str = "invalid escape \\ sequence";
const QUANTIFIER: &str = "quantifier operand invalid";
const COUNT: &str = "invalid repetition count(s)";
const RANGE: &str = "invalid character range";

fn compile(pattern: &str, case_insensitive: bool) -> Result<Regex, PgError> {
    let (translated, case_insensitive) = translate(pattern, case_insensitive)?;
    RegexBuilder::new(&translated)
        .case_insensitive(case_insensitive)
        .dot_matches_new_line(true)
        .size_limit(REGEX_SIZE_LIMIT_BYTES)
        .build()
        .map_err(|error| match error {
            regex::Error::CompiledTooBig(_) => invalid("regular expression is too complex"),
            _ => invalid(&reason_of(&translated)),
        })
}

/// PostgreSQL's reason for a pattern the crate refused, read off the crate's parse error.
fn reason_of(translated: &str) -> String {
    use regex_syntax::ast::ErrorKind as K;
    match regex_syntax::ast::parse::Parser::new().parse(translated) {
        Err(error) => match error.kind() {
            K::GroupUnclosed | K::GroupUnopened => PARENTHESES,
            K::ClassUnclosed => BRACKETS,
            K::ClassRangeInvalid | K::ClassRangeLiteral => RANGE,
            K::RepetitionMissing => QUANTIFIER,
            K::RepetitionCountInvalid => COUNT,
            K::RepetitionCountUnclosed | K::RepetitionCountDecimalEmpty => BRACES,
            K::EscapeUnrecognized | K::EscapeUnexpectedEof | K::EscapeHexEmpty => ESCAPE,
            _ => "invalid regexp (reg version 0.8)",
        }
        .to_string(),
        // The crate's parser took it and its compiler did not (a nested repetition).
        Ok(_) => QUANTIFIER.to_string(),
    }
}

/// The pattern in the crate's syntax, and whether it matches without regard to case.
fn translate(pattern: &str, mut case_insensitive: bool) -> Result<(String, bool), PgError> {
    if let Some(literal) = pattern.strip_prefix("***=") {
        return Ok((regex::escape(literal), case_insensitive));
    }
    let mut rest = pattern.strip_prefix("***:").unwrap_or(pattern);
    let mut expanded = false;
    // Embedded options are letters (`(?i)`); `(?:`, `(?=`, ... at the start are groups and
    // constraints, read below.
    let options = rest
        .strip_prefix("(?")
        .filter(|after| after.starts_with(|c: char| c.is_ascii_alphabetic()));
    if let Some(options) = options {
        let Some(end) = options.find(')') else {
            return Err(invalid("invalid embedded option"));
        };
        for option in options[..end].chars() {
            match option {
                'i' => case_insensitive = true,
                'c' => case_insensitive = false,
                's' => {}
                'x' => expanded = true,
                't' => expanded = false,
                'q' => return Ok((regex::escape(&options[end + 1..]), case_insensitive)),
                'n' | 'm' | 'p' | 'w' => return Err(not_run("newline-sensitive options")),
                'b' | 'e' => return Err(not_run("basic and extended (non-ARE) options")),
                _ => return Err(invalid("invalid embedded option")),
            }
        }
        rest = &options[end + 1..];
    }
    let chars: Vec<char> = rest.chars().collect();
    let mut out = String::with_capacity(rest.len() * 2);
    // Whether what came last can take a quantifier (an atom), and whether it was a quantifier
    // that may still be made non-greedy by one `?`.
    let mut atom_before = false;
    let mut greedy_quantifier = false;
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        let quantifier = matches!(c, '*' | '+' | '?')
            || (c == '{' && chars.get(at).is_some_and(char::is_ascii_digit));
        if quantifier {
            if c == '?' && greedy_quantifier {
                out.push('?');
                greedy_quantifier = false;
                continue;
            }
            if !atom_before {
                return Err(invalid(QUANTIFIER));
            }
            if c == '{' {
                let (piece, next) = bound(&chars, at)?;
                out.push_str(&piece);
                at = next;
            } else {
                out.push(c);
            }
            atom_before = false;
            greedy_quantifier = true;
            continue;
        }
        greedy_quantifier = false;
        match c {
            '\\' => {
                let constraint = matches!(chars.get(at), Some('A' | 'Z' | 'm' | 'M' | 'y' | 'Y'));
                let (piece, next) = escape(&chars, at, false)?;
                out.push_str(&piece);
                at = next;
                atom_before = !constraint;
            }
            '[' => {
                let (piece, next) = bracket(&chars, at)?;
                out.push_str(&piece);
                at = next;
                // `[[:<:]]` and `[[:>:]]` are constraints.
                atom_before = !piece.starts_with("\\b");
            }
            '(' if chars.get(at) == Some(&'?') => {
                let after: String = chars[at + 1..].iter().take(3).collect();
                if after.starts_with(':') {
                    out.push_str("(?:");
                    at += 2;
                    atom_before = false;
                } else if after.starts_with('=')
                    || after.starts_with('!')
                    || after.starts_with("<=")
                    || after.starts_with("<!")
                {
                    return Err(not_run("lookahead and lookbehind constraints"));
                } else {
                    return Err(invalid(QUANTIFIER));
                }
            }
            '(' | '|' | '^' | '$' => {
                out.push(c);
                atom_before = false;
            }
            ')' | '.' => {
                out.push(c);
                atom_before = true;
            }
            ' ' | '\t' | '\n' | '\r' | '\x0B' | '\x0C' if expanded => {}
            '#' if expanded => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
            }
            other => {
                literal(&mut out, other);
                atom_before = true;
            }
        }
    }
    Ok((out, case_insensitive))
}

/// A character as an escaped code point, whatever it means to the crate.
fn literal(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
    }
}

/// The escape after a backslash at `at` (inside a bracket expression when `in_bracket`), and
/// where the pattern goes on.
fn escape(chars: &[char], at: usize, in_bracket: bool) -> Result<(String, usize), PgError> {
    let Some(&c) = chars.get(at) else {
        return Err(invalid(ESCAPE));
    };
    let mut out = String::new();
    let mut next = at + 1;
    let hex = |from: usize, most: usize| -> (Option<u32>, usize) {
        let digits: String = chars[from..]
            .iter()
            .take(most)
            .take_while(|d| d.is_ascii_hexdigit())
            .collect();
        (u32::from_str_radix(&digits, 16).ok(), from + digits.len())
    };
    let code = |value: u32| -> Result<String, PgError> {
        let c = char::from_u32(value).ok_or_else(|| invalid(ESCAPE))?;
        let mut out = String::new();
        literal(&mut out, c);
        Ok(out)
    };
    match c {
        'a' => out = code(0x07)?,
        'b' => out = code(0x08)?,
        'B' => out = code(u32::from('\\'))?,
        'e' => out = code(0x1B)?,
        'f' => out = code(0x0C)?,
        'n' => out = code(0x0A)?,
        'r' => out = code(0x0D)?,
        't' => out = code(0x09)?,
        'v' => out = code(0x0B)?,
        'd' | 'D' | 's' | 'S' | 'w' | 'W' => {
            out.push('\\');
            out.push(c);
        }
        'x' => {
            let (value, end) = hex(next, usize::MAX);
            out = code(value.ok_or_else(|| invalid(ESCAPE))?)?;
            next = end;
        }
        'u' | 'U' => {
            let want = if c == 'u' { 4 } else { 8 };
            let (value, end) = hex(next, want);
            if end - next != want {
                return Err(invalid(ESCAPE));
            }
            out = code(value.ok_or_else(|| invalid(ESCAPE))?)?;
            next = end;
        }
        'c' => {
            let Some(&control) = chars.get(next) else {
                return Err(invalid(ESCAPE));
            };
            out = code(u32::from(control) & 0x1F)?;
            next += 1;
        }
        '0' => {
            let digits: String = chars[next..]
                .iter()
                .take(2)
                .take_while(|d| ('0'..='7').contains(d))
                .collect();
            next += digits.len();
            out = code(u32::from_str_radix(&format!("0{digits}"), 8).unwrap_or(0))?;
        }
        '1'..='9' if in_bracket => return Err(invalid(ESCAPE)),
        '1'..='9' => return Err(not_run("back-references")),
        'A' | 'Z' | 'm' | 'M' | 'y' | 'Y' if in_bracket => return Err(invalid(ESCAPE)),
        'A' => out.push_str("\\A"),
        'Z' => out.push_str("\\z"),
        'm' => out.push_str("\\b{start}"),
        'M' => out.push_str("\\b{end}"),
        'y' => out.push_str("\\b"),
        'Y' => out.push_str("\\B"),
        other if other.is_alphanumeric() => return Err(invalid(ESCAPE)),
        other => literal(&mut out, other),
    }
    Ok((out, next))
}

/// A bracket expression whose `[` was just read: each member written out as an escaped code
/// point or a class, so that nothing in it means more to the crate than to PostgreSQL.
fn bracket(chars: &[char], mut at: usize) -> Result<(String, usize), PgError> {
    // `[[:<:]]` and `[[:>:]]`: the start and end of a word.
    let ahead: String = chars[at..].iter().take(6).collect();
    if ahead == "[:<:]]" {
        return Ok(("\\b{start}".to_string(), at + 6));
    }
    if ahead == "[:>:]]" {
        return Ok(("\\b{end}".to_string(), at + 6));
    }
    let mut out = String::from("[");
    if chars.get(at) == Some(&'^') {
        out.push('^');
        at += 1;
    }
    let mut first = true;
    // The previous member when it was a single character, for a range.
    let mut last_single: Option<char> = None;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err(invalid(BRACKETS));
        };
        at += 1;
        if c == ']' && !first {
            break;
        }
        first = false;
        let member: Option<char> = match c {
            '[' if matches!(chars.get(at), Some(':')) => {
                let close = find_close(chars, at + 1, ':').ok_or_else(|| invalid(BRACKETS))?;
                let name: String = chars[at + 1..close].iter().collect();
                const CLASSES: [&str; 12] = [
                    "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print",
                    "punct", "space", "upper", "xdigit",
                ];
                if !CLASSES.contains(&name.as_str()) {
                    return Err(invalid("invalid character class"));
                }
                let _ = write!(out, "[:{name}:]");
                at = close + 2;
                None
            }
            '[' if matches!(chars.get(at), Some('.' | '=')) => {
                return Err(not_run("collating elements and equivalence classes"))
            }
            '\\' => {
                let next_char = chars.get(at).copied();
                let (piece, next) = escape(chars, at, true)?;
                at = next;
                out.push_str(&piece);
                match next_char {
                    Some('d' | 'D' | 's' | 'S' | 'w' | 'W') => None,
                    _ => char_of(&piece),
                }
            }
            '-' if last_single.is_some() && chars.get(at).is_some_and(|n| *n != ']') => {
                // A range from the previous character to the next.
                let from = last_single.take().unwrap_or('\0');
                let (to, next) = match chars[at] {
                    '\\' => {
                        let (piece, next) = escape(chars, at + 1, true)?;
                        (char_of(&piece).ok_or_else(|| invalid(RANGE))?, next)
                    }
                    '[' => return Err(invalid(RANGE)),
                    other => (other, at + 1),
                };
                if to < from {
                    return Err(invalid(RANGE));
                }
                at = next;
                out.push('-');
                literal(&mut out, to);
                continue;
            }
            other => {
                literal(&mut out, other);
                Some(other)
            }
        };
        last_single = member;
    }
    out.push(']');
    Ok((out, at))
}

/// Where `[:name:]`'s closing `:]` starts, looking from `from`.
fn find_close(chars: &[char], from: usize, mark: char) -> Option<usize> {
    (from..chars.len().saturating_sub(1)).find(|&i| chars[i] == mark && chars[i + 1] == ']')
}

/// The one character an escaped piece stands for (`\x{41}` is `A`, `a` is `a`).
fn char_of(piece: &str) -> Option<char> {
    if let Some(hex) = piece.strip_prefix("\\x{").and_then(|p| p.strip_suffix('}')) {
        return u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
    }
    let mut chars = piece.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// A bound `{m}`, `{m,}` or `{m,n}` whose `{` was just read (each count at most 255, `m`
/// not above `n`).
fn bound(chars: &[char], at: usize) -> Result<(String, usize), PgError> {
    let close = chars[at..]
        .iter()
        .position(|c| *c == '}')
        .map(|p| at + p)
        .ok_or_else(|| invalid(BRACES))?;
    let inside: String = chars[at..close].iter().collect();
    let number = |text: &str| -> Result<u32, PgError> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(COUNT));
        }
        match text.parse::<u32>() {
            Ok(n) if n <= DUPMAX => Ok(n),
            _ => Err(invalid(COUNT)),
        }
    };
    let piece = match inside.split_once(',') {
        None => format!("{{{}}}", number(&inside)?),
        Some((low, "")) => format!("{{{},}}", number(low)?),
        Some((low, high)) => {
            let (low, high) = (number(low)?, number(high)?);
            if low > high {
                return Err(invalid(COUNT));
            }
            format!("{{{low},{high}}}")
        }
    };
    Ok((piece, close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(text: &str, pattern: &str) -> Result<bool, String> {
        is_match(text, pattern, false).map_err(|e| format!("{} {}", e.code, e.message))
    }

    #[test]
    fn patterns_mean_what_they_mean_to_postgres() {
        assert_eq!(matches("lock:42", "^lock:[0-9]+$"), Ok(true));
        assert_eq!(matches("a\nb", "a.b"), Ok(true), "a dot matches a newline");
        assert_eq!(matches("a&b", "[&]"), Ok(true), "& is a plain member");
        assert_eq!(matches("[", "[[]"), Ok(true), "[ is a plain member");
        assert_eq!(matches("a#b", "a#b"), Ok(true));
        assert_eq!(matches("a\u{8}b", "a\\bb"), Ok(true), "\\b is a backspace");
        assert_eq!(matches("a\\b", "a\\Bb"), Ok(true), "\\B is a backslash");
        assert_eq!(matches("the cat", "\\mcat\\M"), Ok(true));
        assert_eq!(matches("concat", "\\mcat"), Ok(false));
        assert_eq!(matches("a.b", "***=a.b"), Ok(true));
        assert_eq!(matches("axb", "***=a.b"), Ok(false));
        assert_eq!(matches("ABC", "(?i)abc"), Ok(true));
        assert_eq!(
            matches("abc", "(?:ab)c"),
            Ok(true),
            "a group at the start is no option"
        );
        assert_eq!(is_match("ABC", "(?c)abc", true), Ok(false));
        assert_eq!(matches("ab", "(?x) a  b # comment"), Ok(true));
        assert_eq!(matches("]", "[]a]"), Ok(true));
        assert_eq!(matches("-", "[a-]"), Ok(true));
        assert_eq!(matches("x9", "[[:alpha:]][[:digit:]]"), Ok(true));
        assert_eq!(
            matches("a{", "a{"),
            Ok(true),
            "a brace without a digit is a literal"
        );
        assert_eq!(matches("a{,2}", "^a{,2}$"), Ok(true));
        assert_eq!(matches("aaa", "^a{2,3}$"), Ok(true));
    }

    #[test]
    fn refused_patterns_say_why_as_postgres_does() {
        let refused = |pattern: &str| matches("x", pattern).unwrap_err();
        assert_eq!(
            refused("(a"),
            "2201B invalid regular expression: parentheses () not balanced"
        );
        assert_eq!(
            refused("[a"),
            "2201B invalid regular expression: brackets [] not balanced"
        );
        assert_eq!(
            refused("*a"),
            "2201B invalid regular expression: quantifier operand invalid"
        );
        assert_eq!(
            refused("a{300}"),
            "2201B invalid regular expression: invalid repetition count(s)"
        );
        assert_eq!(
            refused("a{3,2}"),
            "2201B invalid regular expression: invalid repetition count(s)"
        );
        assert_eq!(
            refused("[z-a]"),
            "2201B invalid regular expression: invalid character range"
        );
        assert_eq!(
            refused("\\q"),
            "2201B invalid regular expression: invalid escape \\ sequence"
        );
        for pattern in ["a**", "a+*", "a{1}{2}", "??", "a|*", "^*", "(*a)"] {
            assert_eq!(
                refused(pattern),
                "2201B invalid regular expression: quantifier operand invalid",
                "{pattern}"
            );
        }
        assert_eq!(
            refused("a{3,x}"),
            "2201B invalid regular expression: invalid repetition count(s)"
        );
        assert_eq!(
            refused("a{3"),
            "2201B invalid regular expression: braces {} not balanced"
        );
        assert_eq!(
            refused("[]"),
            "2201B invalid regular expression: brackets [] not balanced"
        );
        assert_eq!(
            refused("(?z)a"),
            "2201B invalid regular expression: invalid embedded option"
        );
        assert!(refused("(a)\\1").starts_with("0A000 back-references"));
        assert!(refused("a(?=b)").starts_with("0A000 lookahead"));
        assert!(refused("(?=b)a").starts_with("0A000 lookahead"));
        assert!(refused("(?n)a").starts_with("0A000 newline-sensitive"));
    }

    #[test]
    fn a_pattern_too_big_to_compile_is_refused_not_built() {
        let huge = "(a{255}){255}".repeat(8);
        let error = matches("a", &huge).unwrap_err();
        assert_eq!(
            error,
            "2201B invalid regular expression: regular expression is too complex"
        );
    }
}
