//! One-dimensional arrays (`bigint[]`, `text[]`, ...): their text form both ways, as
//! PostgreSQL 15's `array_out` writes it and `array_in` reads it, and the operations on them
//! (`op ANY/ALL (array)`, subscripts, `cardinality`, `array_length`, `||`).
//!
//! An array here has one dimension and lower bound 1 (what clients send for a list and what
//! `ARRAY[...]`, `array_agg` and `'{...}'` make); a literal of several dimensions or with
//! explicit bounds is refused with 0A000.

use std::cmp::Ordering;
use std::sync::Arc;

use super::catalog::BinOp;
use super::error::{sqlstate, PgError};
use super::value::{SqlType, Value};

/// The text form of an array's elements: `{1,2,NULL}`, an element quoted when it is empty,
/// is `NULL` in any case, or holds a brace, comma, quote, backslash or white space, with `"`
/// and `\` escaped by a backslash.
pub fn array_text(elements: &[Value]) -> String {
    let mut out = String::from("{");
    for (i, element) in elements.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(text) = element.to_text() else {
            out.push_str("NULL");
            continue;
        };
        let quoted = text.is_empty()
            || text.eq_ignore_ascii_case("NULL")
            || text
                .chars()
                .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || is_array_space(c));
        if !quoted {
            out.push_str(&text);
            continue;
        }
        out.push('"');
        for c in text.chars() {
            if matches!(c, '"' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push('}');
    out
}

/// White space as `array_in` skips it.
fn is_array_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{b}' | '\u{c}')
}

/// 22P02 `malformed array literal` with PostgreSQL's DETAIL.
fn malformed(text: &str, detail: &str) -> PgError {
    PgError::error(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{text}\""),
    )
    .with_detail(detail)
}

/// Reads an array's text form (`{1, 2, NULL, "a b"}`) into a value of `element`'s array
/// type: 22P02 `malformed array literal` with `array_in`'s DETAIL, or the element type's own
/// input error.
pub fn parse_array(text: &str, element: SqlType) -> Result<Value, PgError> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    while at < chars.len() && is_array_space(chars[at]) {
        at += 1;
    }
    match chars.get(at) {
        Some('{') => at += 1,
        Some('[') => {
            return Err(PgError::unsupported_statement(
                "an array literal with explicit bounds",
            ))
        }
        _ => {
            return Err(malformed(
                text,
                "Array value must start with \"{\" or dimension information.",
            ))
        }
    }
    // Each element's text, None for an unquoted NULL.
    let mut items: Vec<Option<String>> = Vec::new();
    let mut closed = false;
    loop {
        while at < chars.len() && is_array_space(chars[at]) {
            at += 1;
        }
        let Some(&c) = chars.get(at) else {
            return Err(malformed(text, "Unexpected end of input."));
        };
        match c {
            '}' if items.is_empty() => {
                at += 1;
                closed = true;
            }
            '{' => return Err(PgError::unsupported_statement("a multidimensional array")),
            ',' => return Err(malformed(text, "Unexpected \",\" character.")),
            '}' => return Err(malformed(text, "Unexpected \"}\" character.")),
            _ => {}
        }
        if closed {
            break;
        }
        // One element, quoted or not.
        let mut value = String::new();
        let mut quoted_anywhere = false;
        // Length of `value` up to its last character that was quoted or escaped (trailing
        // white space after it is cut from an unquoted element).
        let mut kept = 0;
        let mut in_quotes = false;
        loop {
            let Some(&c) = chars.get(at) else {
                return Err(malformed(text, "Unexpected end of input."));
            };
            match c {
                '\\' => {
                    let Some(&next) = chars.get(at + 1) else {
                        return Err(malformed(text, "Unexpected end of input."));
                    };
                    value.push(next);
                    kept = value.len();
                    at += 2;
                    continue;
                }
                '"' if in_quotes => {
                    in_quotes = false;
                    kept = value.len();
                    at += 1;
                    continue;
                }
                '"' => {
                    if !value.trim_end_matches(is_array_space).is_empty() || quoted_anywhere {
                        return Err(malformed(text, "Unexpected array element."));
                    }
                    value.clear();
                    in_quotes = true;
                    quoted_anywhere = true;
                    at += 1;
                    continue;
                }
                _ if in_quotes => {
                    value.push(c);
                    kept = value.len();
                    at += 1;
                    continue;
                }
                ',' | '}' => break,
                '{' => return Err(malformed(text, "Unexpected \"{\" character.")),
                _ if quoted_anywhere && !is_array_space(c) => {
                    return Err(malformed(text, "Unexpected array element."));
                }
                _ => {
                    value.push(c);
                    if !is_array_space(c) {
                        kept = value.len();
                    }
                    at += 1;
                }
            }
        }
        value.truncate(kept);
        if !quoted_anywhere && value.eq_ignore_ascii_case("NULL") {
            items.push(None);
        } else {
            items.push(Some(value));
        }
        let c = chars[at];
        at += 1;
        if c == '}' {
            break;
        }
        // After a comma: an element must follow.
        while at < chars.len() && is_array_space(chars[at]) {
            at += 1;
        }
        match chars.get(at) {
            None => return Err(malformed(text, "Unexpected end of input.")),
            Some('}') => return Err(malformed(text, "Unexpected \"}\" character.")),
            Some(',') => return Err(malformed(text, "Unexpected \",\" character.")),
            _ => {}
        }
    }
    if chars[at..].iter().any(|&c| !is_array_space(c)) {
        return Err(malformed(text, "Junk after closing right brace."));
    }
    let mut elements = Vec::with_capacity(items.len());
    for item in items {
        elements.push(match item {
            None => Value::Null,
            Some(item) => Value::parse_input(&item, element)?,
        });
    }
    Ok(Value::Array(Arc::new(elements)))
}

/// `left op ANY (array)` (`all` false) or `left op ALL (array)`: true when some (every)
/// element compares true, NULL when none decides it and a NULL took part, as PostgreSQL's
/// `ScalarArrayOpExpr` answers.
pub fn any_all(op: BinOp, all: bool, left: &Value, array: &Value) -> Value {
    let Value::Array(elements) = array else {
        return Value::Null;
    };
    if elements.is_empty() {
        return Value::Bool(all);
    }
    if left.is_null() {
        return Value::Null;
    }
    let mut saw_null = false;
    for element in elements.iter() {
        if element.is_null() {
            saw_null = true;
            continue;
        }
        let ordering = left.cmp(element);
        let holds = match op {
            BinOp::Eq => ordering == Ordering::Equal,
            BinOp::Ne => ordering != Ordering::Equal,
            BinOp::Lt => ordering == Ordering::Less,
            BinOp::Le => ordering != Ordering::Greater,
            BinOp::Gt => ordering == Ordering::Greater,
            _ => ordering != Ordering::Less,
        };
        if holds != all {
            return Value::Bool(holds);
        }
    }
    if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    }
}

/// `array[index]`: the element at 1-based `index`, NULL outside the array.
pub fn subscript(array: &Value, index: &Value) -> Value {
    match (array, index) {
        (Value::Array(elements), Value::Int(i)) if *i >= 1 => usize::try_from(*i - 1)
            .ok()
            .and_then(|i| elements.get(i))
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// `cardinality(array)`: its number of elements.
pub fn cardinality(array: &Value) -> Value {
    match array {
        Value::Array(elements) => Value::Int(elements.len() as i64),
        _ => Value::Null,
    }
}

/// `array_length(array, dimension)`: the number of elements along the dimension, NULL for
/// an empty array or a dimension it has not.
pub fn array_length(array: &Value, dimension: &Value) -> Value {
    match (array, dimension) {
        (Value::Array(elements), Value::Int(1)) if !elements.is_empty() => {
            Value::Int(elements.len() as i64)
        }
        _ => Value::Null,
    }
}

/// `a || b` where either is an array of the other's element type or both are arrays of one
/// type: the elements of both in order (a NULL array adds nothing; a NULL element is one).
pub fn concat(left: Value, right: Value, left_is_array: bool, right_is_array: bool) -> Value {
    let mut out = Vec::new();
    for (value, is_array) in [(left, left_is_array), (right, right_is_array)] {
        match (value, is_array) {
            (Value::Array(elements), true) => out.extend(elements.iter().cloned()),
            (Value::Null, true) => {}
            (value, _) => out.push(value),
        }
    }
    Value::Array(Arc::new(out))
}

/// `array_to_string(array, delimiter [, null_text])`: the elements' text forms joined, a
/// NULL element skipped, or written as `null_text` when that is given and not NULL.
pub fn to_string(array: &Value, delimiter: &Value, null_text: &Value) -> Value {
    let (Value::Array(elements), Value::Text(delimiter)) = (array, delimiter) else {
        return Value::Null;
    };
    let null_text = match null_text {
        Value::Text(text) => Some(text.as_str()),
        _ => None,
    };
    let texts: Vec<String> = elements
        .iter()
        .filter_map(|element| element.to_text().or_else(|| null_text.map(str::to_string)))
        .collect();
    Value::Text(texts.join(delimiter))
}

/// `string_to_array(text, delimiter [, null_text])`: the fields between delimiters (each
/// character when the delimiter is NULL, the whole text when it is empty; no fields in an
/// empty text), a field equal to `null_text` made NULL.
pub fn from_string(text: &Value, delimiter: &Value, null_text: &Value) -> Value {
    let Value::Text(text) = text else {
        return Value::Null;
    };
    let fields: Vec<String> = if text.is_empty() {
        Vec::new()
    } else {
        match delimiter {
            Value::Text(d) if d.is_empty() => vec![text.clone()],
            Value::Text(d) => text.split(d.as_str()).map(str::to_string).collect(),
            _ => text.chars().map(String::from).collect(),
        }
    };
    let elements = fields
        .into_iter()
        .map(|field| match null_text {
            Value::Text(null_text) if *null_text == field => Value::Null,
            _ => Value::Text(field),
        })
        .collect();
    Value::Array(Arc::new(elements))
}

/// `array_position(array, value)`: the 1-based index of the first element not distinct from
/// the value (a NULL finds a NULL).
pub fn position(array: &Value, value: &Value) -> Value {
    let Value::Array(elements) = array else {
        return Value::Null;
    };
    elements
        .iter()
        .position(|element| element.cmp(value) == Ordering::Equal)
        .map_or(Value::Null, |i| Value::Int(i as i64 + 1))
}

/// `array_remove(array, value)`: the elements not distinct from the value taken out.
pub fn remove(array: &Value, value: &Value) -> Value {
    let Value::Array(elements) = array else {
        return Value::Null;
    };
    let kept = elements
        .iter()
        .filter(|element| element.cmp(&value) != Ordering::Equal)
        .cloned()
        .collect();
    Value::Array(Arc::new(kept))
}

/// `split_part(text, delimiter, n)`: the `n`th field, counted from the end when `n` is
/// negative, empty past the last; an empty delimiter makes the text one field. 22023 for 0.
pub fn split_part(text: &str, delimiter: &str, n: i64) -> Result<String, PgError> {
    if n == 0 {
        return Err(PgError::error("22023", "field position must not be zero"));
    }
    let fields: Vec<&str> = if delimiter.is_empty() {
        vec![text]
    } else {
        text.split(delimiter).collect()
    };
    let index = if n > 0 {
        usize::try_from(n - 1).ok()
    } else {
        usize::try_from(n.unsigned_abs())
            .ok()
            .and_then(|back| fields.len().checked_sub(back))
    };
    Ok(index
        .and_then(|i| fields.get(i))
        .map_or_else(String::new, |field| field.to_string()))
}

/// `string_agg` over its rows' `ARRAY[text, delimiter]` pairs ([`AggregateKind::StringAgg`](
/// super::catalog::AggregateKind::StringAgg)): NULL texts skipped, a NULL delimiter empty.
pub fn string_agg(pairs: &[Value]) -> Value {
    let mut out: Option<String> = None;
    for pair in pairs {
        let [text, delimiter, ..] = elements(pair) else {
            continue;
        };
        let Value::Text(text) = text else {
            continue;
        };
        match &mut out {
            None => out = Some(text.clone()),
            Some(joined) => {
                if let Value::Text(delimiter) = delimiter {
                    joined.push_str(delimiter);
                }
                joined.push_str(text);
            }
        }
    }
    out.map_or(Value::Null, Value::Text)
}

/// The elements of an array value (none for NULL).
pub fn elements(array: &Value) -> &[Value] {
    match array {
        Value::Array(elements) => elements,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<String, String> {
        parse_array(text, SqlType::Text)
            .map(|v| v.to_text().unwrap_or_default())
            .map_err(|e| format!("{} {}", e.message, e.detail.unwrap_or_default()))
    }

    #[test]
    fn text_form_round_trips_quoting_what_needs_it() {
        let cases = [
            (
                "{a,\"b c\",\"\",x\\,y,\"q\\\"r\"}",
                "{a,\"b c\",\"\",\"x,y\",\"q\\\"r\"}",
            ),
            ("{NULL,null,\"NULL\"}", "{NULL,NULL,\"NULL\"}"),
            ("{  a  b  }", "{\"a  b\"}"),
            (" { 1 , 2 } ", "{1,2}"),
            ("{}", "{}"),
            ("{\"\\\\\"}", "{\"\\\\\"}"),
        ];
        for (input, output) in cases {
            assert_eq!(parse(input).as_deref(), Ok(output), "{input}");
            // What array_out writes, array_in reads back to the same.
            assert_eq!(parse(output).as_deref(), Ok(output), "{output}");
        }
    }

    #[test]
    fn malformed_literals_say_what_postgres_says() {
        let cases = [
            (
                "1,2",
                "Array value must start with \"{\" or dimension information.",
            ),
            ("{1,2", "Unexpected end of input."),
            ("{1,,2}", "Unexpected \",\" character."),
            ("{1,2}x", "Junk after closing right brace."),
            ("{1,2}}", "Junk after closing right brace."),
            ("{,1}", "Unexpected \",\" character."),
            ("{1,}", "Unexpected \"}\" character."),
            ("{\"a\"b}", "Unexpected array element."),
        ];
        for (input, detail) in cases {
            let error = parse(input).expect_err(input);
            assert!(error.ends_with(detail), "{input}: {error}");
        }
    }

    #[test]
    fn split_part_counts_from_either_end() {
        assert_eq!(split_part("a.b.c", ".", 2).as_deref(), Ok("b"));
        assert_eq!(split_part("a.b.c", ".", -1).as_deref(), Ok("c"));
        assert_eq!(split_part("a.b.c", ".", -3).as_deref(), Ok("a"));
        assert_eq!(split_part("a.b.c", ".", -4).as_deref(), Ok(""));
        assert_eq!(split_part("a.b.c", ".", i64::MAX).as_deref(), Ok(""));
        assert_eq!(split_part("a.b.c", ".", i64::MIN).as_deref(), Ok(""));
        assert_eq!(split_part("abc", "", 1).as_deref(), Ok("abc"));
        assert_eq!(split_part("abc", ".", 0).unwrap_err().code, "22023");
    }

    #[test]
    fn text_and_arrays_convert_both_ways() {
        let text = |t: &str| Value::Text(t.to_string());
        let fields = from_string(&text("a,*,,b"), &text(","), &text("*"));
        assert_eq!(fields.to_text().as_deref(), Some("{a,NULL,\"\",b}"));
        assert_eq!(
            to_string(&fields, &text("-"), &Value::Null)
                .to_text()
                .as_deref(),
            Some("a--b")
        );
        assert_eq!(
            to_string(&fields, &text("-"), &text("?"))
                .to_text()
                .as_deref(),
            Some("a-?--b")
        );
        let chars = from_string(&text("ab"), &Value::Null, &Value::Null);
        assert_eq!(chars.to_text().as_deref(), Some("{a,b}"));
        assert_eq!(position(&fields, &Value::Null), Value::Int(2));
        assert_eq!(
            remove(&fields, &text("a")).to_text().as_deref(),
            Some("{NULL,\"\",b}")
        );
        let pair = |t: Value, d: &str| Value::Array(Arc::new(vec![t, text(d)]));
        let rows = [
            pair(text("x"), ","),
            pair(Value::Null, ";"),
            pair(text("y"), "+"),
        ];
        assert_eq!(string_agg(&rows), text("x+y"));
        assert_eq!(string_agg(&rows[1..2]), Value::Null);
    }

    #[test]
    fn any_and_all_answer_null_only_when_no_element_decides() {
        let array = |v: &[Value]| Value::Array(Arc::new(v.to_vec()));
        let one_null = array(&[Value::Int(1), Value::Null]);
        assert_eq!(
            any_all(BinOp::Eq, false, &Value::Int(1), &one_null),
            Value::Bool(true)
        );
        assert_eq!(
            any_all(BinOp::Eq, false, &Value::Int(3), &one_null),
            Value::Null
        );
        assert_eq!(
            any_all(BinOp::Gt, true, &Value::Int(2), &one_null),
            Value::Null
        );
        assert_eq!(
            any_all(BinOp::Gt, true, &Value::Int(0), &one_null),
            Value::Bool(false)
        );
        assert_eq!(
            any_all(BinOp::Eq, false, &Value::Int(1), &array(&[])),
            Value::Bool(false)
        );
        assert_eq!(
            any_all(BinOp::Eq, true, &Value::Null, &array(&[])),
            Value::Bool(true)
        );
        assert_eq!(
            any_all(BinOp::Eq, false, &Value::Int(1), &Value::Null),
            Value::Null
        );
    }
}
