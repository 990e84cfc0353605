//! Sequences, as PostgreSQL 15 runs them: `CREATE SEQUENCE` with its options, `DROP
//! SEQUENCE`, and the functions `nextval`, `currval`, `setval` and `lastval` (a fencing token
//! taken from a database sequence is `SELECT nextval('fence')`).
//!
//! A sequence is not transactional: a number `nextval` gave stays used when its transaction
//! rolls back or its statement fails. `currval` and `lastval` are the session's own: the last
//! value `nextval` (or `setval` with `is_called`) gave this session. The sequences of `serial`
//! and identity columns are kept with their tables (`engine.rs`), not here.
//!
//! Where the functions run is in `exec.rs` (`sequence_call`); this module holds the
//! definitions, their checks and the arithmetic, with PostgreSQL's messages.

use sqlparser::ast;

use super::error::{sqlstate, PgError};

/// A sequence function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceFn {
    /// `nextval(regclass)`: advances the sequence and answers the new value.
    NextVal,
    /// `currval(regclass)`: the value this session's last `nextval` of it gave.
    CurrVal,
    /// `setval(regclass, bigint [, is_called boolean])`.
    SetVal,
    /// `lastval()`: `currval` of the sequence this session's last `nextval` advanced.
    LastVal,
}

impl SequenceFn {
    /// The function a name calls.
    pub fn parse(name: &str) -> Option<SequenceFn> {
        Some(match name {
            "nextval" => SequenceFn::NextVal,
            "currval" => SequenceFn::CurrVal,
            "setval" => SequenceFn::SetVal,
            "lastval" => SequenceFn::LastVal,
            _ => return None,
        })
    }

    /// Its name, as PostgreSQL writes it in messages.
    pub fn name(self) -> &'static str {
        match self {
            SequenceFn::NextVal => "nextval",
            SequenceFn::CurrVal => "currval",
            SequenceFn::SetVal => "setval",
            SequenceFn::LastVal => "lastval",
        }
    }

    /// True for the functions that change the sequence (refused in a read-only transaction).
    pub fn writes(self) -> bool {
        matches!(self, SequenceFn::NextVal | SequenceFn::SetVal)
    }
}

/// The type a sequence counts in (`AS smallint | integer | bigint`, bigint by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceType {
    /// `smallint`.
    Smallint,
    /// `integer`.
    Integer,
    /// `bigint`.
    Bigint,
}

impl SequenceType {
    fn range(self) -> (i64, i64) {
        match self {
            SequenceType::Smallint => (i64::from(i16::MIN), i64::from(i16::MAX)),
            SequenceType::Integer => (i64::from(i32::MIN), i64::from(i32::MAX)),
            SequenceType::Bigint => (i64::MIN, i64::MAX),
        }
    }

    fn name(self) -> &'static str {
        match self {
            SequenceType::Smallint => "smallint",
            SequenceType::Integer => "integer",
            SequenceType::Bigint => "bigint",
        }
    }
}

/// A sequence: its definition and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sequence {
    /// Its name (for messages).
    pub name: String,
    /// The type it counts in.
    pub ty: SequenceType,
    /// `INCREMENT BY` (never 0).
    pub increment: i64,
    /// `MINVALUE`.
    pub min: i64,
    /// `MAXVALUE` (greater than `min`).
    pub max: i64,
    /// `CYCLE`: past an end it starts again at the other.
    pub cycle: bool,
    /// The last value given (or, before the first `nextval`, the start).
    pub last_value: i64,
    /// False until the first `nextval` (or after `setval(.., false)`): the next `nextval`
    /// answers `last_value` itself.
    pub is_called: bool,
}

/// `conflicting or redundant options` (42601) for an option given twice.
fn conflicting() -> PgError {
    PgError::error(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

fn invalid(message: String) -> PgError {
    PgError::error(INVALID_PARAMETER_VALUE, message)
}

/// `invalid_parameter_value`, the class of a sequence definition's errors.
const INVALID_PARAMETER_VALUE: &str = "22023";

/// An option's value: an integer constant, possibly negative (22003 past bigint, as
/// PostgreSQL reads it).
fn option_value(expr: &ast::Expr) -> Result<i64, PgError> {
    signed_option_value(expr, false)
}

fn signed_option_value(expr: &ast::Expr, negated: bool) -> Result<i64, PgError> {
    let unsupported = || PgError::unsupported_statement(&format!("sequence option {expr}"));
    match expr {
        ast::Expr::Value(value) => match &value.value {
            ast::Value::Number(text, _) if text.bytes().all(|b| b.is_ascii_digit()) => {
                let signed = if negated {
                    format!("-{text}")
                } else {
                    text.clone()
                };
                signed.parse::<i64>().map_err(|_| {
                    PgError::error(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("value \"{signed}\" is out of range for type bigint"),
                    )
                })
            }
            _ => Err(unsupported()),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } if !negated => signed_option_value(expr, true),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => signed_option_value(expr, negated),
        _ => Err(unsupported()),
    }
}

impl Sequence {
    /// The sequence `CREATE SEQUENCE name options` defines, checked in PostgreSQL's order
    /// (`init_params`): the type, the increment, the bounds against the type, against each
    /// other, the start against the bounds, the cache. (An option given twice never gets
    /// here: the parser refuses it, `sql.rs` says so as PostgreSQL does.)
    pub fn define(name: &str, options: &[ast::SequenceOptions]) -> Result<Sequence, PgError> {
        use ast::SequenceOptions as O;
        let mut ty = None;
        let mut increment = None;
        let mut min = None;
        let mut max = None;
        let mut start = None;
        let mut cache = None;
        let mut cycle = None;
        /// Sets an option's slot; 42601 when it was set before.
        fn once<T>(slot: &mut Option<T>, value: T) -> Result<(), PgError> {
            if slot.is_some() {
                return Err(conflicting());
            }
            *slot = Some(value);
            Ok(())
        }
        for option in options {
            match option {
                O::DataType(data_type) => {
                    let parsed = match data_type {
                        ast::DataType::SmallInt(_) | ast::DataType::Int2(_) => {
                            SequenceType::Smallint
                        }
                        ast::DataType::Int(_)
                        | ast::DataType::Integer(_)
                        | ast::DataType::Int4(_) => SequenceType::Integer,
                        ast::DataType::BigInt(_) | ast::DataType::Int8(_) => SequenceType::Bigint,
                        _ => {
                            return Err(invalid(
                                "sequence type must be smallint, integer, or bigint".to_string(),
                            ))
                        }
                    };
                    once(&mut ty, parsed)?;
                }
                O::IncrementBy(expr, _) => once(&mut increment, option_value(expr)?)?,
                O::MinValue(expr) => once(&mut min, expr.as_ref().map(option_value).transpose()?)?,
                O::MaxValue(expr) => once(&mut max, expr.as_ref().map(option_value).transpose()?)?,
                O::StartWith(expr, _) => once(&mut start, option_value(expr)?)?,
                O::Cache(expr) => once(&mut cache, option_value(expr)?)?,
                O::Cycle(no) => once(&mut cycle, !*no)?,
                O::OwnedBy(_) => {
                    return Err(PgError::unsupported_statement(
                        "CREATE SEQUENCE ... OWNED BY",
                    ))
                }
            }
        }
        let ty = ty.unwrap_or(SequenceType::Bigint);
        let (type_min, type_max) = ty.range();
        let increment = increment.unwrap_or(1);
        if increment == 0 {
            return Err(invalid("INCREMENT must not be zero".to_string()));
        }
        let max = match max.flatten() {
            Some(max) if max < type_min || max > type_max => {
                return Err(invalid(format!(
                    "MAXVALUE ({max}) is out of range for sequence data type {}",
                    ty.name()
                )))
            }
            Some(max) => max,
            None if increment > 0 => type_max,
            None => -1,
        };
        let min = match min.flatten() {
            Some(min) if min < type_min || min > type_max => {
                return Err(invalid(format!(
                    "MINVALUE ({min}) is out of range for sequence data type {}",
                    ty.name()
                )))
            }
            Some(min) => min,
            None if increment > 0 => 1,
            None => type_min,
        };
        if min >= max {
            return Err(invalid(format!(
                "MINVALUE ({min}) must be less than MAXVALUE ({max})"
            )));
        }
        let start = start.unwrap_or(if increment > 0 { min } else { max });
        if start < min {
            return Err(invalid(format!(
                "START value ({start}) cannot be less than MINVALUE ({min})"
            )));
        }
        if start > max {
            return Err(invalid(format!(
                "START value ({start}) cannot be greater than MAXVALUE ({max})"
            )));
        }
        if let Some(cache) = cache.filter(|&c| c <= 0) {
            return Err(invalid(format!(
                "CACHE ({cache}) must be greater than zero"
            )));
        }
        Ok(Sequence {
            name: name.to_string(),
            ty,
            increment,
            min,
            max,
            cycle: cycle.unwrap_or(false),
            last_value: start,
            is_called: false,
        })
    }

    /// `nextval`: the next value, or 2200H past an end of a sequence without `CYCLE`.
    pub fn advance(&mut self) -> Result<i64, PgError> {
        debug_assert!(self.min < self.max && self.increment != 0);
        if !self.is_called {
            self.is_called = true;
            return Ok(self.last_value);
        }
        let last = self.last_value;
        let next = match last.checked_add(self.increment) {
            Some(next) if next >= self.min && next <= self.max => next,
            _ if self.cycle => {
                if self.increment > 0 {
                    self.min
                } else {
                    self.max
                }
            }
            _ => {
                let (end, bound) = if self.increment > 0 {
                    ("maximum", self.max)
                } else {
                    ("minimum", self.min)
                };
                return Err(PgError::error(
                    "2200H",
                    format!(
                        "nextval: reached {end} value of sequence \"{}\" ({bound})",
                        self.name
                    ),
                ));
            }
        };
        self.last_value = next;
        Ok(next)
    }

    /// `setval(value, is_called)`: 22003 outside the bounds.
    pub fn set(&mut self, value: i64, is_called: bool) -> Result<(), PgError> {
        if value < self.min || value > self.max {
            return Err(PgError::error(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                    self.name, self.min, self.max
                ),
            ));
        }
        self.last_value = value;
        self.is_called = is_called;
        Ok(())
    }
}

/// The relation a `regclass` text names (`nextval('fence')`), as PostgreSQL reads it: blanks
/// around it dropped, an unquoted name in lower case, a double-quoted one as written (`""` a
/// quote). A schema-qualified name is refused as unsupported; an empty one is 42602.
pub fn relation_name(text: &str) -> Result<String, PgError> {
    let invalid = || PgError::error("42602", "invalid name syntax");
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if let Some(quoted) = text.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = quoted.chars();
        loop {
            match chars.next() {
                None => return Err(invalid()),
                Some('"') => {
                    let rest = chars.as_str();
                    if let Some(after) = rest.strip_prefix('"') {
                        name.push('"');
                        chars = after.chars();
                    } else if rest
                        .trim_matches(|c: char| c.is_ascii_whitespace())
                        .is_empty()
                        && !name.is_empty()
                    {
                        return Ok(name);
                    } else if rest.trim_start().starts_with('.') {
                        return Err(schema_qualified(text));
                    } else {
                        return Err(invalid());
                    }
                }
                Some(c) => name.push(c),
            }
        }
    }
    if text.is_empty() || text.contains(|c: char| c == '"' || c.is_ascii_whitespace()) {
        return Err(invalid());
    }
    if text.contains('.') {
        return Err(schema_qualified(text));
    }
    Ok(truncated(text.to_ascii_lowercase()))
}

/// PostgreSQL keeps at most 63 bytes of a name (`NAMEDATALEN - 1`), cut at a character.
pub(super) fn truncated(mut name: String) -> String {
    if name.len() > 63 {
        let mut end = 63;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

fn schema_qualified(text: &str) -> PgError {
    PgError::unsupported_statement(&format!(
        "the schema-qualified sequence name '{text}' (the stand-in has one schema)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn define(sql: &str) -> Result<Sequence, PgError> {
        let statements =
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
                .expect("parses");
        let ast::Statement::CreateSequence {
            sequence_options, ..
        } = &statements[0]
        else {
            panic!("not CREATE SEQUENCE")
        };
        Sequence::define("s", sequence_options)
    }

    #[test]
    fn counts_from_its_start_and_stops_at_its_end() {
        let mut s = define("CREATE SEQUENCE s AS smallint START 32766").unwrap();
        assert_eq!(s.advance().unwrap(), 32766);
        assert_eq!(s.advance().unwrap(), 32767);
        let error = s.advance().unwrap_err();
        assert_eq!(error.code, "2200H");
        assert_eq!(
            error.message,
            "nextval: reached maximum value of sequence \"s\" (32767)"
        );
    }

    #[test]
    fn a_descending_cycle_wraps_to_its_maximum() {
        let mut s =
            define("CREATE SEQUENCE d INCREMENT BY -2 START WITH 5 MINVALUE 0 MAXVALUE 10 CYCLE")
                .unwrap();
        let values: Vec<i64> = (0..5).map(|_| s.advance().unwrap()).collect();
        assert_eq!(values, [5, 3, 1, 10, 8]);
    }

    #[test]
    fn the_largest_bigint_is_given_once() {
        let mut s = define("CREATE SEQUENCE b START 9223372036854775807").unwrap();
        assert_eq!(s.advance().unwrap(), i64::MAX);
        assert_eq!(s.advance().unwrap_err().code, "2200H");
    }

    #[test]
    fn definitions_are_checked_in_postgres_order() {
        let message = |sql: &str| define(sql).unwrap_err().message;
        assert_eq!(
            message("CREATE SEQUENCE s INCREMENT 0"),
            "INCREMENT must not be zero"
        );
        assert_eq!(
            message("CREATE SEQUENCE s MINVALUE 5 MAXVALUE 5"),
            "MINVALUE (5) must be less than MAXVALUE (5)"
        );
        assert_eq!(
            message("CREATE SEQUENCE s START 0"),
            "START value (0) cannot be less than MINVALUE (1)"
        );
        assert_eq!(
            message("CREATE SEQUENCE s AS integer MAXVALUE 3000000000"),
            "MAXVALUE (3000000000) is out of range for sequence data type integer"
        );
        assert_eq!(
            message("CREATE SEQUENCE s CACHE 0"),
            "CACHE (0) must be greater than zero"
        );
    }

    #[test]
    fn an_option_given_twice_points_at_the_second() {
        let error =
            crate::postgres::parse_general("CREATE SEQUENCE s START 1 start 2").unwrap_err();
        assert_eq!(error.code, "42601");
        assert_eq!(error.message, "conflicting or redundant options");
        assert_eq!(error.position, Some(27));
    }

    #[test]
    fn setval_keeps_to_the_bounds() {
        let mut s = define("CREATE SEQUENCE s").unwrap();
        assert_eq!(s.set(0, true).unwrap_err().code, "22003");
        s.set(20, false).unwrap();
        assert_eq!(s.advance().unwrap(), 20);
        assert_eq!(s.advance().unwrap(), 21);
    }

    #[test]
    fn relation_names_read_as_regclass_reads_them() {
        assert_eq!(relation_name(" Fence ").unwrap(), "fence");
        assert_eq!(relation_name("\"Fence\"").unwrap(), "Fence");
        assert_eq!(relation_name("\"a\"\"b\"").unwrap(), "a\"b");
        assert_eq!(relation_name("").unwrap_err().code, "42602");
        assert_eq!(relation_name("a b").unwrap_err().code, "42602");
        assert_eq!(relation_name("public.s").unwrap_err().code, "0A000");
        assert_eq!(relation_name(&"A".repeat(100)).unwrap(), "a".repeat(63));
    }
}
