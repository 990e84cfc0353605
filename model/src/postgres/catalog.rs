//! Table definitions and the expressions they and the statements use.

use super::advisory::AdvisoryFn;
use super::error::{sqlstate, PgError};
use super::random::VolatileFn;
use super::value::{check_range, Decimal, Float, SqlType, Value};

/// A table's definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableDef {
    /// The table name.
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<ColumnDef>,
    /// The primary-key column, if any.
    pub primary_key: Option<usize>,
    /// CHECK constraints, in the order PostgreSQL evaluates them (by name).
    pub checks: Vec<CheckDef>,
    /// Its indexes (`CREATE INDEX`), in the order they were made; the primary key's is not
    /// among them.
    pub indexes: Vec<super::index::IndexDef>,
}

/// A column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnDef {
    /// The column name.
    pub name: String,
    /// Its type.
    pub ty: SqlType,
    /// `NOT NULL` (or part of the primary key).
    pub not_null: bool,
    /// The `DEFAULT` expression (no columns, no parameters).
    pub default: Option<Expr>,
    /// What its declared type adds to `ty` (`numeric(12,2)`, `varchar(255)`).
    pub typmod: Option<Typmod>,
}

/// What a declared type adds to the stand-in's type of its values: `numeric(p, s)` rounds to
/// `s` digits and holds at most `p`; `varchar(n)` holds at most `n` characters. Applied where
/// a value is stored in a column ([`Typmod::store`]) and by an explicit cast
/// ([`Typmod::cast`]), as PostgreSQL's `apply_typmod` and `varchar` input do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Typmod {
    /// `numeric(precision, scale)`.
    Numeric {
        /// Significant digits (1 to 1000).
        precision: u32,
        /// Digits after the point (-1000 to 1000, as PostgreSQL 15 allows: past `precision`
        /// the value is a fraction below `10^(precision - scale)`; below 0 it is rounded to
        /// tens, hundreds, ...).
        scale: i32,
    },
    /// `varchar(n)` / `character varying(n)`.
    VarChar(u32),
}

impl Typmod {
    /// `value` stored in a column of this type: `numeric` rounded and checked (22003),
    /// `varchar` checked (22001, but spaces past the end are cut).
    pub fn store(self, value: Value) -> Result<Value, PgError> {
        match (self, value) {
            (Typmod::VarChar(length), Value::Text(text)) => {
                let chars = text.chars().count();
                if chars <= length as usize {
                    return Ok(Value::Text(text));
                }
                let cut: String = text.chars().take(length as usize).collect();
                if text[cut.len()..].chars().all(|c| c == ' ') {
                    return Ok(Value::Text(cut));
                }
                Err(PgError::error(
                    "22001",
                    format!("value too long for type character varying({length})"),
                ))
            }
            (typmod, value) => typmod.cast(value),
        }
    }

    /// `value::type` written with this modifier: as [`Typmod::store`], except that a
    /// `varchar` too long is cut, as an explicit cast cuts it.
    pub fn cast(self, value: Value) -> Result<Value, PgError> {
        Ok(match (self, value) {
            (Typmod::Numeric { precision, scale }, Value::Numeric(decimal)) => {
                let rounded = super::functions::cut_numeric(
                    decimal,
                    i64::from(scale),
                    super::functions::Cut::Round,
                )?;
                // |value| < 10^(precision - scale), the value being mantissa × 10^-its scale.
                let digits = i64::from(precision) - i64::from(scale);
                let fits = match u32::try_from(digits + i64::from(rounded.scale)) {
                    Ok(exponent) => 10i128
                        .checked_pow(exponent)
                        .is_none_or(|limit| rounded.mantissa.abs() < limit),
                    Err(_) => rounded.mantissa == 0,
                };
                if !fits {
                    let bound = if digits == 0 {
                        "1".to_string()
                    } else {
                        format!("10^{digits}")
                    };
                    return Err(PgError::error(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        "numeric field overflow",
                    )
                    .with_detail(format!(
                        "A field with precision {precision}, scale {scale} must round to an \
                         absolute value less than {bound}."
                    )));
                }
                Value::Numeric(rounded)
            }
            (Typmod::VarChar(length), Value::Text(text)) => {
                Value::Text(text.chars().take(length as usize).collect())
            }
            (_, other) => other,
        })
    }
}

/// A CHECK constraint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CheckDef {
    /// The constraint name, e.g. `wallets_balance_check`.
    pub name: String,
    /// The condition over the row.
    pub expr: Expr,
}

impl TableDef {
    /// The tutorial's `wallets` table.
    pub fn wallets() -> TableDef {
        let column = |name: &str, default: Option<Expr>| ColumnDef {
            name: name.to_string(),
            ty: SqlType::Int8,
            not_null: true,
            default,
            typmod: None,
        };
        TableDef {
            name: "wallets".to_string(),
            columns: vec![
                column("id", None),
                column("balance", None),
                column("fence", Some(Expr::Const(Value::Int(0), SqlType::Int4))),
            ],
            primary_key: Some(0),
            checks: vec![CheckDef {
                name: "wallets_balance_check".to_string(),
                expr: Expr::binary_node(
                    BinOp::Ge,
                    Expr::Column(1, SqlType::Int8),
                    Expr::Const(Value::Int(0), SqlType::Int4),
                ),
            }],
            indexes: Vec::new(),
        }
    }

    /// True when this is exactly the tutorial's `wallets` table, which the typed statements
    /// run on natively.
    pub fn is_canonical_wallets(&self) -> bool {
        *self == TableDef::wallets()
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// An operand of `||` as text: a boolean as its cast to text writes it (`true`, where its
/// output form is `t`), anything else in its output form.
/// A bound on the bytes of joining `values` (arrays' elements included) with a separator of
/// `separator_bytes` after each: a text counts its bytes, any other value 64 (the longest
/// text form of a number, time or `uuid` the stand-in keeps is shorter). What `concat_ws`,
/// `array_to_string` and `string_agg` would build, counted without building it.
fn joined_bytes(values: &[Value], separator_bytes: usize) -> usize {
    values.iter().fold(0usize, |total, value| {
        let own = match value {
            Value::Array(elements) => joined_bytes(elements, separator_bytes),
            Value::Text(text) => text.len().saturating_add(separator_bytes),
            _ => 64usize.saturating_add(separator_bytes),
        };
        total.saturating_add(own)
    })
}

fn concat_text(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        other => other.to_text().unwrap_or_default(),
    }
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `AND`
    And,
    /// `OR`
    Or,
    /// `||`
    Concat,
    /// `IS DISTINCT FROM`: `<>` with NULL a value like any other (never NULL itself).
    DistinctFrom,
}

/// A typed expression over a row (columns by index), the `excluded` row of `ON CONFLICT`
/// and the parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A constant of a type.
    Const(Value, SqlType),
    /// Parameter `$n` (0-based here) of a type.
    Param(usize, SqlType),
    /// A column of the row.
    Column(usize, SqlType),
    /// A column of `excluded` (the row `INSERT ... ON CONFLICT` proposed).
    Excluded(usize, SqlType),
    /// A binary operation with its result type (kept, not computed from the operands each
    /// time: a chain of a thousand operators would take a thousand steps per node).
    Binary(BinOp, Box<Expr>, Box<Expr>, SqlType),
    /// `NOT`.
    Not(Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `IS [NOT] NULL`.
    IsNull(Box<Expr>, bool),
    /// A conversion to a type (from an unknown literal or parameter, or between numbers).
    Cast(Box<Expr>, SqlType),
    /// `count(*)`: the number of rows (only in a select list).
    CountStar,
    /// `count(e)`, `sum(e)`, `min(e)`, `max(e)` over the selected rows, each value or each
    /// distinct one (only in a select list; see [`Expr::fold_aggregates`]), with the result
    /// type.
    Aggregate(Aggregate, Box<Expr>, SqlType),
    /// `coalesce(a, b, ...)`: the first argument that is not NULL, all of one type.
    Coalesce(Vec<Expr>, SqlType),
    /// A scalar function of its arguments (already converted to the types it takes), with
    /// its result type.
    Call(ScalarFn, Vec<Expr>, SqlType),
    /// An advisory lock function (`advisory.rs`) with its key arguments: run by the executor
    /// (it changes the server), never folded or evaluated as a value.
    Advisory(AdvisoryFn, Vec<Expr>),
    /// A volatile function (a sequence function, `sequence.rs`; `random`, `setseed`,
    /// `gen_random_uuid`, `random.rs`) with its arguments: it changes the server or reads the
    /// session, so the executor runs it ([`Expr::replace_volatile_calls`]); never folded,
    /// never evaluated as a value.
    VolatileCall(VolatileFn, Vec<Expr>),
    /// The next value of a column's sequence: the default of a `serial`/`bigserial` column or
    /// an identity column. Taken by the executor of `INSERT` from the table's counter
    /// (sequences are not transactional: a rolled-back or failed insert uses its numbers up);
    /// never folded, never evaluated as a value.
    Sequence {
        /// The column it numbers.
        column: usize,
        /// The column's type (`integer` or `bigint`).
        ty: SqlType,
        /// How the column was declared.
        kind: SequenceKind,
    },
    /// The result of the statement's uncorrelated subquery number `index` (scalar, `EXISTS`
    /// or `IN`): run before the statement, then put in its place
    /// ([`Expr::replace_subqueries`]); never folded, never evaluated itself.
    Subquery {
        /// Which subquery of the statement.
        index: usize,
        /// The type of its result.
        ty: SqlType,
    },
    /// A column (or a `USING`-merged column) of the statement a correlated subquery stands
    /// in, read from the statement's row the subquery runs for: replaced by that value before
    /// the subquery runs ([`Expr::bind_outer`]); never folded, never evaluated itself. Its
    /// expression is on the outer statement's row, so it has no parts here.
    Outer(Box<Expr>),
    /// A clock function: the server's clock when the statement's transaction or the
    /// statement started, put in place before the statement runs ([`Expr::stamp_clock`]);
    /// never folded, never evaluated itself.
    Clock(ClockFn),
    /// A function of the session (`current_user`, `current_database()`, `pg_backend_pid()`,
    /// ...): put in place before the statement runs, as the clock is ([`Expr::stamp_clock`]);
    /// never folded, never evaluated itself.
    Session(SessionFn),
    /// `CASE WHEN c THEN v ... ELSE e END` (the `CASE x WHEN v` form as `x = v` conditions):
    /// the value of the first condition that is true, else `otherwise` (NULL when absent).
    Case {
        /// Each condition (boolean) with its value.
        whens: Vec<(Expr, Expr)>,
        /// The `ELSE` value.
        otherwise: Box<Expr>,
        /// The common type of the values.
        ty: SqlType,
    },
}

/// The clock functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockFn {
    /// `now()`, `transaction_timestamp()`, `CURRENT_TIMESTAMP`: when the transaction
    /// started.
    Transaction,
    /// `statement_timestamp()`, and `clock_timestamp()` (a statement takes no time here):
    /// when the statement started.
    Statement,
    /// `LOCALTIMESTAMP`: when the transaction started, as a `timestamp` (in UTC).
    LocalTransaction,
}

impl ClockFn {
    /// The function a name calls, if it is a clock function.
    pub fn parse(name: &str) -> Option<ClockFn> {
        Some(match name {
            "now" | "transaction_timestamp" | "current_timestamp" => ClockFn::Transaction,
            "statement_timestamp" | "clock_timestamp" => ClockFn::Statement,
            "localtimestamp" => ClockFn::LocalTransaction,
            _ => return None,
        })
    }

    /// Its result type.
    pub fn ty(self) -> SqlType {
        match self {
            ClockFn::LocalTransaction => SqlType::Timestamp,
            _ => SqlType::TimestampTz,
        }
    }
}

/// The functions of the session that a statement reads once, before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionFn {
    /// `current_user`, `user`, `current_role`: the role it connected as (no `SET ROLE` here).
    CurrentUser,
    /// `session_user`.
    SessionUser,
    /// `current_database()`, `current_catalog`.
    CurrentDatabase,
    /// `current_schema`, `current_schema()`: `public`, the stand-in's one schema.
    CurrentSchema,
    /// `pg_backend_pid()`: the process id the wire server announced in `BackendKeyData`.
    BackendPid,
    /// `version()`: PostgreSQL's version line, naming the stand-in as its compiler (the
    /// version is `SHOW server_version`'s).
    Version,
    /// `txid_current()`: the transaction's number, given it if it has none
    /// (`Postgres::assign_txid`).
    TxidCurrent,
    /// `txid_current_if_assigned()`: the transaction's number, NULL if it has none.
    TxidCurrentIfAssigned,
}

impl SessionFn {
    /// The function a name calls, with whether it is written without parentheses
    /// (`current_user`) rather than with empty ones (`current_database()`); `current_schema`
    /// takes both.
    pub fn parse(name: &str) -> Option<(SessionFn, Parentheses)> {
        use Parentheses::{Never, Optional, Required};
        Some(match name {
            "current_user" | "user" | "current_role" => (SessionFn::CurrentUser, Never),
            "session_user" => (SessionFn::SessionUser, Never),
            "current_catalog" => (SessionFn::CurrentDatabase, Never),
            "current_database" => (SessionFn::CurrentDatabase, Required),
            "current_schema" => (SessionFn::CurrentSchema, Optional),
            "pg_backend_pid" => (SessionFn::BackendPid, Required),
            "version" => (SessionFn::Version, Required),
            "txid_current" => (SessionFn::TxidCurrent, Required),
            "txid_current_if_assigned" => (SessionFn::TxidCurrentIfAssigned, Required),
            _ => return None,
        })
    }

    /// Its result type (`name` in PostgreSQL for all but the pid: `text` here).
    pub fn ty(self) -> SqlType {
        match self {
            SessionFn::BackendPid => SqlType::Int4,
            SessionFn::TxidCurrent | SessionFn::TxidCurrentIfAssigned => SqlType::Int8,
            _ => SqlType::Text,
        }
    }

    /// Its value for a statement reading `reading`.
    fn value(self, reading: &StatementReading<'_>) -> Value {
        match self {
            SessionFn::CurrentUser | SessionFn::SessionUser => {
                Value::Text(reading.user.to_string())
            }
            SessionFn::CurrentDatabase => Value::Text(reading.database.to_string()),
            SessionFn::CurrentSchema => Value::Text("public".to_string()),
            SessionFn::BackendPid => Value::Int(i64::from(reading.pid)),
            SessionFn::Version => Value::Text(format!(
                "PostgreSQL {} on x86_64-pc-linux-gnu, compiled by the leaselab stand-in, 64-bit",
                super::settings::SERVER_VERSION
            )),
            SessionFn::TxidCurrent | SessionFn::TxidCurrentIfAssigned => {
                reading.txid.map_or(Value::Null, Value::Int)
            }
        }
    }
}

/// How a function without arguments is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parentheses {
    /// Only as a keyword (`current_user`; `current_user()` is a syntax error).
    Never,
    /// Only with them (`current_database()`; the bare name is a column).
    Required,
    /// Either way.
    Optional,
}

/// What a statement reads of its server and session before it runs: the clock, and who the
/// session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatementReading<'a> {
    /// The clock.
    pub clock: ClockReading,
    /// The role the session connected as.
    pub user: &'a str,
    /// The database it connected to.
    pub database: &'a str,
    /// Its backend process id.
    pub pid: i32,
    /// Its transaction's number, if it has one (given before the statement runs when it calls
    /// `txid_current()`).
    pub txid: Option<i64>,
}

/// The server's clock as a statement reads it: when its transaction started and when it
/// started (microseconds since 2000-01-01 UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    /// When the transaction started (the statement, outside a block).
    pub transaction: i64,
    /// When the statement started.
    pub statement: i64,
}

/// What runs a sequence function call for [`Expr::replace_volatile_calls`]: the function
/// and its arguments in, its value out.
pub type VolatileCaller<'a> = dyn FnMut(VolatileFn, &[Expr]) -> Result<Value, PgError> + 'a;

/// How a column numbered by a sequence was declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceKind {
    /// `serial` / `bigserial`: a default like any other.
    Serial,
    /// `GENERATED BY DEFAULT AS IDENTITY`: an `INSERT` may give its own value, and
    /// `OVERRIDING USER VALUE` ignores it.
    ByDefault,
    /// `GENERATED ALWAYS AS IDENTITY`: an `INSERT` may give its own value only with
    /// `OVERRIDING SYSTEM VALUE`; an `UPDATE` may not.
    Always,
}

/// A scalar function the stand-in computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarFn {
    /// `abs(number)`: the same type; the most negative integer overflows.
    Abs,
    /// `upper(text)`.
    Upper,
    /// `lower(text)`.
    Lower,
    /// `length(text)` / `char_length(text)`: characters, as `integer`.
    Length,
    /// `nullif(a, b)`, its arguments already in the types `=` compares them in: NULL when
    /// `a = b`, else `a` (evaluated once). The bool says they compare as type OIDs (both
    /// `regtype`).
    NullIf(bool),
    /// `greatest(a, b, ...)`: the largest argument that is not NULL.
    Greatest,
    /// `least(a, b, ...)`: the smallest argument that is not NULL.
    Least,
    /// `substr(text, start [, count])` / `substring(...)`: characters from `start` (1-based;
    /// positions before 1 count towards `count`); a negative `count` is 22011.
    Substr,
    /// `concat(a, ...)`: the arguments' text forms, NULLs skipped (never NULL itself).
    Concat,
    /// `text LIKE pattern` (`~~`), the pattern's escape being `\`.
    Like,
    /// `text ILIKE pattern` (`~~*`).
    ILike,
    /// `pattern ESCAPE e` rewritten with `\` as the escape (`like_escape`).
    LikeEscape,
    /// `text ~ pattern`: [`super::regexp::is_match`].
    RegexMatch,
    /// `text ~* pattern`: the same without regard to case.
    RegexIMatch,
    /// `round(numeric [, digits])` / `round(double precision)`.
    Round,
    /// `trunc(numeric [, digits])` / `trunc(double precision)`.
    Trunc,
    /// `floor(numeric | double precision)`.
    Floor,
    /// `ceil` / `ceiling(numeric | double precision)`.
    Ceil,
    /// `sign(numeric | double precision)`.
    Sign,
    /// `power(a, b)`, `pow(a, b)` and `a ^ b` on `double precision` (`dpow`).
    Power,
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`, every argument given
    /// (the analysis fills in the defaults, 0): `datetime::make_interval`.
    MakeInterval,
    /// `a & b` on integers of one type (`int4and`, ...).
    BitAnd,
    /// `a | b`.
    BitOr,
    /// `a # b` (exclusive or).
    BitXor,
    /// `~a`.
    BitNot,
    /// `a << n` on an integer of this many bits (16, 32, 64), as C shifts on x86-64: the
    /// count taken modulo 32 (64 for `bigint`), a `smallint` shifted as an `int` and cut.
    ShiftLeft(u8),
    /// `a >> n`, arithmetic, counted as `<<` counts.
    ShiftRight(u8),
    /// `replace(text, from, to)`.
    Replace,
    /// `strpos(text, needle)` and `position(needle IN text)`, as `integer`.
    Strpos,
    /// `btrim(text [, characters])` and `trim([BOTH] ...)`.
    Btrim,
    /// `ltrim(text [, characters])` and `trim(LEADING ...)`.
    Ltrim,
    /// `rtrim(text [, characters])` and `trim(TRAILING ...)`.
    Rtrim,
    /// `lpad(text, length [, fill])`.
    Lpad,
    /// `rpad(text, length [, fill])`.
    Rpad,
    /// `left(text, n)`.
    Left,
    /// `right(text, n)`.
    Right,
    /// `repeat(text, n)`.
    Repeat,
    /// `reverse(text)`.
    Reverse,
    /// `octet_length(text)`: bytes, as `integer`.
    OctetLength,
    /// `to_timestamp(double precision)`: seconds since 1970 as a `timestamp with time zone`.
    ToTimestamp,
    /// `extract(field FROM time)`, as `numeric`: called with the field's name (a text
    /// constant the analysis put first) and the value, [`super::time_part::extract`].
    Extract,
    /// `date_part(unit, time)`, as `double precision`: [`super::time_part::date_part`].
    DatePart,
    /// `date_trunc(unit, timestamp)`, of the timestamp's type.
    DateTrunc,
    /// `age(a, b)` of two timestamps of one type, as `interval`: [`super::datetime::age`]
    /// (`age(t)` is called with midnight of the statement's day first).
    Age,
    /// `hashtext(text)`: PostgreSQL's hash of the text, as `integer`.
    HashText,
    /// `hashtextextended(text, bigint)`: the 64-bit hash with a seed, as `bigint`.
    HashTextExtended,
    /// `md5(text)`: the digest in hex.
    Md5,
    /// `div(numeric, numeric)`: the quotient truncated toward zero, with no decimals.
    Div,
    /// `pg_typeof(any)`: the type of its argument as `regtype`. Called with the argument and
    /// the type's name (a constant the analysis put second); a stable function in
    /// PostgreSQL, so its argument is computed (and fails) when a row is.
    TypeOf,
    /// `split_part(text, delimiter, n)`: the `n`th field (from the end when negative).
    SplitPart,
    /// `format(formatstr, args...)`: [`super::functions::format`]; the arguments of any type,
    /// by their text forms.
    Format,
    /// `quote_ident(text)`: [`super::functions::quote_ident`].
    QuoteIdent,
    /// `quote_literal(value)`: [`super::functions::quote_literal`] of its text form.
    QuoteLiteral,
    /// `quote_nullable(value)`: as `quote_literal`, and `NULL` (the text) for NULL.
    QuoteNullable,
    /// `concat_ws(separator, a, ...)`: the arguments' text forms joined by the separator,
    /// NULLs skipped; NULL when the separator is.
    ConcatWs,
    /// `array_to_string(array, delimiter [, null_text])`.
    ArrayToString,
    /// `string_to_array(text, delimiter [, null_text])`, as `text[]`.
    StringToArray,
    /// `array_position(array, value)`: the 1-based index of the first element not distinct
    /// from the value, as `integer`.
    ArrayPosition,
    /// `array_remove(array, value)`: the elements not distinct from the value taken out.
    ArrayRemove,
    /// `ARRAY[a, b, ...]`: an array of its arguments (NULLs kept), all of the element type.
    MakeArray,
    /// `left op ANY (array)` (false) or `left op ALL (array)` (true), `op` a comparison:
    /// [`array::any_all`](super::array::any_all).
    AnyAll(BinOp, bool),
    /// `array[index]`: the element at a 1-based index, NULL outside.
    Subscript,
    /// `cardinality(array)`, as `integer`.
    Cardinality,
    /// `array_length(array, dimension)`, as `integer`.
    ArrayLength,
    /// `a || b` with an array on either side (true where the operand is an array, false
    /// where it is an element).
    ArrayConcat(bool, bool),
    /// A declared type's modifier (`numeric(10, 2)`, `varchar(3)`) applied to a
    /// value of the stand-in's type: by an explicit cast (true: [`Typmod::cast`]) or to a
    /// value assigned to a column (false: [`Typmod::store`]).
    Typmod(Typmod, bool),
}

impl ScalarFn {
    /// The function a name calls (`char_length` and `character_length` are `length`).
    pub fn parse(name: &str) -> Option<ScalarFn> {
        Some(match name {
            "abs" => ScalarFn::Abs,
            "upper" => ScalarFn::Upper,
            "lower" => ScalarFn::Lower,
            "length" | "char_length" | "character_length" => ScalarFn::Length,
            "greatest" => ScalarFn::Greatest,
            "least" => ScalarFn::Least,
            "substr" | "substring" => ScalarFn::Substr,
            "concat" => ScalarFn::Concat,
            "round" => ScalarFn::Round,
            "trunc" => ScalarFn::Trunc,
            "floor" => ScalarFn::Floor,
            "ceil" | "ceiling" => ScalarFn::Ceil,
            "sign" => ScalarFn::Sign,
            "power" | "pow" => ScalarFn::Power,
            "replace" => ScalarFn::Replace,
            "strpos" => ScalarFn::Strpos,
            "btrim" => ScalarFn::Btrim,
            "ltrim" => ScalarFn::Ltrim,
            "rtrim" => ScalarFn::Rtrim,
            "lpad" => ScalarFn::Lpad,
            "rpad" => ScalarFn::Rpad,
            "left" => ScalarFn::Left,
            "right" => ScalarFn::Right,
            "repeat" => ScalarFn::Repeat,
            "reverse" => ScalarFn::Reverse,
            "octet_length" => ScalarFn::OctetLength,
            "to_timestamp" => ScalarFn::ToTimestamp,
            "hashtext" => ScalarFn::HashText,
            "hashtextextended" => ScalarFn::HashTextExtended,
            "md5" => ScalarFn::Md5,
            "div" => ScalarFn::Div,
            "split_part" => ScalarFn::SplitPart,
            "quote_ident" => ScalarFn::QuoteIdent,
            _ => return None,
        })
    }

    fn apply(self, arguments: Vec<Value>, ty: SqlType) -> Result<Value, PgError> {
        if let ScalarFn::NullIf(as_oids) = self {
            let mut arguments = arguments.into_iter();
            let a = arguments.next().unwrap_or(Value::Null);
            let b = arguments.next().unwrap_or(Value::Null);
            let (l, r) = if as_oids {
                (regtype_as_oid(a.clone()), regtype_as_oid(b))
            } else {
                (a.clone(), b)
            };
            let equal = binary(BinOp::Eq, l, r, SqlType::Bool)? == Value::Bool(true);
            return Ok(if equal { Value::Null } else { a });
        }
        if let ScalarFn::Typmod(typmod, explicit) = self {
            let value = arguments.into_iter().next().unwrap_or(Value::Null);
            return if explicit {
                typmod.cast(value)
            } else {
                typmod.store(value)
            };
        }
        // At most every text given, each with a separator (and an array's NULLs with the
        // null text): refused before it is built.
        let text_len = |index: usize| match arguments.get(index) {
            Some(Value::Text(text)) => text.len(),
            _ => 0,
        };
        match self {
            ScalarFn::ConcatWs => super::functions::built_text_fits(joined_bytes(
                arguments.get(1..).unwrap_or_default(),
                text_len(0),
            ))?,
            ScalarFn::ArrayToString => super::functions::built_text_fits(joined_bytes(
                &arguments[..arguments.len().min(1)],
                text_len(1).saturating_add(text_len(2)),
            ))?,
            _ => {}
        }
        if let Some(value) = self.apply_array(&arguments) {
            return Ok(value);
        }
        if let Some(value) = self.apply_strict(&arguments) {
            return value;
        }
        let mut arguments = arguments.into_iter();
        if matches!(self, ScalarFn::Greatest | ScalarFn::Least) {
            let present = arguments.filter(|v| !v.is_null());
            let chosen = if self == ScalarFn::Greatest {
                present.max()
            } else {
                present.min()
            };
            return Ok(chosen.unwrap_or(Value::Null));
        }
        if self == ScalarFn::Concat {
            let texts: Vec<String> = arguments.filter_map(|v| v.to_text()).collect();
            super::functions::built_text_fits(texts.iter().map(String::len).sum())?;
            return Ok(Value::Text(texts.concat()));
        }
        if self == ScalarFn::TypeOf {
            return Ok(arguments.nth(1).unwrap_or(Value::Null));
        }
        if self == ScalarFn::Format {
            let Some(formatstr) = arguments.next().and_then(|v| v.to_text()) else {
                return Ok(Value::Null);
            };
            let texts: Vec<Option<String>> = arguments.map(|v| v.to_text()).collect();
            return super::functions::format(&formatstr, &texts).map(Value::Text);
        }
        if matches!(self, ScalarFn::QuoteLiteral | ScalarFn::QuoteNullable) {
            return Ok(match arguments.next().and_then(|v| v.to_text()) {
                Some(text) => Value::Text(super::functions::quote_literal(&text)),
                None if self == ScalarFn::QuoteNullable => Value::Text("NULL".to_string()),
                None => Value::Null,
            });
        }
        if self == ScalarFn::Substr {
            let arguments: Vec<Value> = arguments.collect();
            return substr(&arguments);
        }
        let argument = arguments.next().unwrap_or(Value::Null);
        Ok(match (self, argument) {
            (_, Value::Null) => Value::Null,
            (ScalarFn::Abs, Value::Int(v)) => {
                check_range(v.checked_abs().ok_or_else(|| overflow(ty))?, ty)?
            }
            (ScalarFn::Abs, Value::Numeric(d)) => Value::Numeric(Decimal {
                mantissa: d.mantissa.abs(),
                ..d
            }),
            (ScalarFn::Abs, Value::Float(f)) => Value::Float(Float(f.0.abs())),
            (ScalarFn::Upper, Value::Text(t)) => Value::Text(t.to_uppercase()),
            (ScalarFn::Lower, Value::Text(t)) => Value::Text(t.to_lowercase()),
            (ScalarFn::Length, Value::Text(t)) => Value::Int(t.chars().count() as i64),
            (_, other) => other,
        })
    }
}

impl ScalarFn {
    /// The array functions ([`array`](super::array)); None for the others.
    fn apply_array(self, arguments: &[Value]) -> Option<Value> {
        use super::array;
        let argument = |index: usize| arguments.get(index).unwrap_or(&Value::Null);
        Some(match self {
            ScalarFn::MakeArray => Value::Array(std::sync::Arc::new(arguments.to_vec())),
            ScalarFn::ConcatWs => match arguments.split_first() {
                Some((Value::Text(separator), rest)) => Value::Text(
                    rest.iter()
                        .filter_map(Value::to_text)
                        .collect::<Vec<_>>()
                        .join(separator),
                ),
                _ => Value::Null,
            },
            ScalarFn::ArrayToString => array::to_string(argument(0), argument(1), argument(2)),
            ScalarFn::StringToArray => array::from_string(argument(0), argument(1), argument(2)),
            ScalarFn::ArrayPosition => array::position(argument(0), argument(1)),
            ScalarFn::ArrayRemove => array::remove(argument(0), argument(1)),
            ScalarFn::AnyAll(op, all) => array::any_all(op, all, argument(0), argument(1)),
            ScalarFn::Subscript => array::subscript(argument(0), argument(1)),
            ScalarFn::Cardinality => array::cardinality(argument(0)),
            ScalarFn::ArrayLength => array::array_length(argument(0), argument(1)),
            ScalarFn::ArrayConcat(left, right) => {
                let mut values = arguments.iter().cloned();
                let a = values.next().unwrap_or(Value::Null);
                let b = values.next().unwrap_or(Value::Null);
                if a.is_null() && b.is_null() {
                    Value::Null
                } else {
                    array::concat(a, b, left, right)
                }
            }
            _ => return None,
        })
    }

    /// The functions of `functions.rs`, all strict (NULL for any NULL argument); None for
    /// the others.
    fn apply_strict(self, arguments: &[Value]) -> Option<Result<Value, PgError>> {
        use super::functions::{self as f, Cut, Ends};
        use ScalarFn::*;
        if !matches!(
            self,
            Like | ILike
                | LikeEscape
                | RegexMatch
                | RegexIMatch
                | Round
                | Trunc
                | Floor
                | Ceil
                | Sign
                | Power
                | MakeInterval
                | BitAnd
                | BitOr
                | BitXor
                | BitNot
                | ShiftLeft(_)
                | ShiftRight(_)
                | Replace
                | Strpos
                | Btrim
                | Ltrim
                | Rtrim
                | Lpad
                | Rpad
                | Left
                | Right
                | Repeat
                | Reverse
                | OctetLength
                | ToTimestamp
                | Extract
                | DatePart
                | DateTrunc
                | Age
                | HashText
                | HashTextExtended
                | Md5
                | Div
                | SplitPart
                | QuoteIdent
        ) {
            return None;
        }
        if arguments.iter().any(Value::is_null) {
            return Some(Ok(Value::Null));
        }
        let text = |index: usize| match arguments.get(index) {
            Some(Value::Text(t)) => t.as_str(),
            _ => "",
        };
        let int = |index: usize| match arguments.get(index) {
            Some(Value::Int(v)) => *v,
            _ => 0,
        };
        let cut = |how: Cut| -> Result<Value, PgError> {
            Ok(match arguments.first() {
                Some(Value::Numeric(d)) => {
                    let digits = if arguments.len() > 1 { int(1) } else { 0 };
                    Value::Numeric(f::cut_numeric(*d, digits, how)?)
                }
                Some(Value::Float(x)) => Value::Float(Float(match how {
                    Cut::Round => f::round_float(x.0),
                    Cut::Trunc => x.0.trunc(),
                    Cut::Floor => x.0.floor(),
                    Cut::Ceil => x.0.ceil(),
                })),
                _ => Value::Null,
            })
        };
        let trim_characters = || {
            if arguments.len() > 1 {
                text(1)
            } else {
                " "
            }
        };
        let fill = || {
            if arguments.len() > 2 {
                text(2)
            } else {
                " "
            }
        };
        Some(match self {
            ToTimestamp => to_timestamp(arguments.first().and_then(Value::as_f64).unwrap_or(0.0)),
            Extract => super::time_part::extract(text(0), arguments.get(1).unwrap_or(&Value::Null)),
            DatePart => {
                super::time_part::date_part(text(0), arguments.get(1).unwrap_or(&Value::Null))
            }
            DateTrunc => date_trunc(text(0), arguments.get(1).unwrap_or(&Value::Null)),
            Age => match (arguments.first(), arguments.get(1)) {
                (
                    Some(Value::TimestampTz(a) | Value::Timestamp(a)),
                    Some(Value::TimestampTz(b) | Value::Timestamp(b)),
                ) => super::datetime::age(*a, *b).map(Value::Interval),
                _ => Ok(Value::Null),
            },
            Like => f::like(text(0), text(1)).map(Value::Bool),
            ILike => f::ilike(text(0), text(1)).map(Value::Bool),
            LikeEscape => f::like_escape(text(0), text(1)).map(Value::Text),
            RegexMatch => super::regexp::is_match(text(0), text(1), false).map(Value::Bool),
            RegexIMatch => super::regexp::is_match(text(0), text(1), true).map(Value::Bool),
            Round => cut(Cut::Round),
            Trunc => cut(Cut::Trunc),
            Floor => cut(Cut::Floor),
            Ceil => cut(Cut::Ceil),
            Sign => Ok(match arguments.first() {
                Some(Value::Numeric(d)) => Value::Numeric(f::sign_numeric(*d)),
                Some(Value::Float(x)) => Value::Float(Float(f::sign_float(x.0))),
                _ => Value::Null,
            }),
            BitAnd => Ok(Value::Int(int(0) & int(1))),
            BitOr => Ok(Value::Int(int(0) | int(1))),
            BitXor => Ok(Value::Int(int(0) ^ int(1))),
            BitNot => Ok(Value::Int(!int(0))),
            ShiftLeft(bits) | ShiftRight(bits) => {
                let left = matches!(self, ShiftLeft(_));
                // The count as `int4shl`'s `int32` reaches the CPU, which keeps its low bits.
                let count = int(1) as i32 as u32;
                Ok(Value::Int(if bits == 64 {
                    let value = int(0);
                    if left {
                        value.wrapping_shl(count)
                    } else {
                        value.wrapping_shr(count)
                    }
                } else {
                    let value = int(0) as i32;
                    let shifted = if left {
                        value.wrapping_shl(count)
                    } else {
                        value.wrapping_shr(count)
                    };
                    if bits == 16 {
                        i64::from(shifted as i16)
                    } else {
                        i64::from(shifted)
                    }
                }))
            }
            MakeInterval => {
                let field = |index: usize| i32::try_from(int(index)).unwrap_or(0);
                let secs = arguments.get(6).and_then(Value::as_f64).unwrap_or(0.0);
                let fields = [0, 1, 2, 3, 4, 5].map(field);
                super::datetime::make_interval(fields, secs).map(Value::Interval)
            }
            Power => {
                let float = |index: usize| arguments.get(index).and_then(Value::as_f64);
                f::power(float(0).unwrap_or(0.0), float(1).unwrap_or(0.0))
                    .map(|v| Value::Float(Float(v)))
            }
            Replace => f::replace(text(0), text(1), text(2)).map(Value::Text),
            Strpos => Ok(Value::Int(f::strpos(text(0), text(1)))),
            Btrim => Ok(Value::Text(f::trim(text(0), trim_characters(), Ends::Both))),
            Ltrim => Ok(Value::Text(f::trim(
                text(0),
                trim_characters(),
                Ends::Leading,
            ))),
            Rtrim => Ok(Value::Text(f::trim(
                text(0),
                trim_characters(),
                Ends::Trailing,
            ))),
            Lpad => f::pad(text(0), int(1), fill(), true).map(Value::Text),
            Rpad => f::pad(text(0), int(1), fill(), false).map(Value::Text),
            Left => Ok(Value::Text(f::left(text(0), int(1)))),
            Right => Ok(Value::Text(f::right(text(0), int(1)))),
            Repeat => f::repeat(text(0), int(1)).map(Value::Text),
            Reverse => Ok(Value::Text(f::reverse(text(0)))),
            OctetLength => Ok(Value::Int(text(0).len() as i64)),
            HashText => Ok(Value::Int(i64::from(f::hashtext(text(0))))),
            HashTextExtended => Ok(Value::Int(f::hashtext_extended(text(0), int(1)))),
            Md5 => Ok(Value::Text(f::md5_hex(text(0)))),
            Div => match (arguments.first(), arguments.get(1)) {
                (Some(Value::Numeric(a)), Some(Value::Numeric(b))) => {
                    f::numeric_div_trunc(*a, *b).map(Value::Numeric)
                }
                _ => Ok(Value::Null),
            },
            SplitPart => super::array::split_part(text(0), text(1), int(2)).map(Value::Text),
            QuoteIdent => Ok(Value::Text(f::quote_ident(text(0)))),
            _ => return None,
        })
    }
}

/// `substr(text, start [, count])` as PostgreSQL computes it, in characters: from position
/// `start` to before `start + count` (to the end without `count`), positions before the
/// first character counting but giving nothing.
fn substr(arguments: &[Value]) -> Result<Value, PgError> {
    let (text, start, count) = match arguments {
        [Value::Text(text), Value::Int(start)] => (text, *start, None),
        [Value::Text(text), Value::Int(start), Value::Int(count)] => (text, *start, Some(*count)),
        _ => return Ok(Value::Null),
    };
    if count.is_some_and(|count| count < 0) {
        return Err(PgError::error(
            "22011",
            "negative substring length not allowed",
        ));
    }
    // Arguments are `integer`s: no sum of two overflows an i64.
    let end = count.map(|count| start + count);
    let from = usize::try_from(start.max(1) - 1).unwrap_or(usize::MAX);
    let taken = match end {
        Some(end) => usize::try_from((end - start.max(1)).max(0)).unwrap_or(0),
        None => usize::MAX,
    };
    Ok(Value::Text(text.chars().skip(from).take(taken).collect()))
}

/// An aggregate function the stand-in computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregateKind {
    /// `count(e)`: rows where `e` is not NULL.
    Count,
    /// `sum(e)`: NULL over no rows; `integer` sums to `bigint`, `bigint` to `numeric`.
    Sum,
    /// `min(e)`.
    Min,
    /// `max(e)`.
    Max,
    /// `avg(e)`: the sum divided by the count, as `numeric` division divides (or in `double
    /// precision`); NULL over no rows.
    Avg,
    /// `array_agg(e)`: the values in the order of the rows, NULLs kept; NULL over no rows.
    ArrayAgg,
    /// `string_agg(text, delimiter)`: the texts that are not NULL, each after the first
    /// preceded by its row's delimiter; NULL when there are none. Its argument is the pair
    /// `ARRAY[text, delimiter]`.
    StringAgg,
}

impl AggregateKind {
    /// The function's name.
    pub fn name(self) -> &'static str {
        match self {
            AggregateKind::Count => "count",
            AggregateKind::Sum => "sum",
            AggregateKind::Min => "min",
            AggregateKind::Max => "max",
            AggregateKind::Avg => "avg",
            AggregateKind::ArrayAgg => "array_agg",
            AggregateKind::StringAgg => "string_agg",
        }
    }

    /// The function by name.
    pub fn parse(name: &str) -> Option<AggregateKind> {
        [
            AggregateKind::Count,
            AggregateKind::Sum,
            AggregateKind::Min,
            AggregateKind::Max,
            AggregateKind::Avg,
            AggregateKind::ArrayAgg,
            AggregateKind::StringAgg,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }

    /// The result type for an argument type, or None when PostgreSQL has no such function.
    pub fn result_type(self, argument: SqlType) -> Option<SqlType> {
        use SqlType::*;
        match (self, argument) {
            (AggregateKind::Count, _) => Some(Int8),
            (AggregateKind::Sum, Int2 | Int4) => Some(Int8),
            (AggregateKind::Sum, Int8 | Numeric) => Some(Numeric),
            (AggregateKind::Sum, Float8) => Some(Float8),
            (AggregateKind::Sum, _) => None,
            (AggregateKind::Min | AggregateKind::Max, Bool | Uuid) => None,
            (AggregateKind::Avg, Int2 | Int4 | Int8 | Numeric) => Some(Numeric),
            (AggregateKind::Avg, Float8) => Some(Float8),
            (AggregateKind::Avg, _) => None,
            (AggregateKind::ArrayAgg, element) => element.array_of(),
            (AggregateKind::StringAgg, pair) => (pair.element() == Some(Text)).then_some(Text),
            (AggregateKind::Min | AggregateKind::Max, other) => Some(other),
        }
    }

    /// Folds the argument's values over the rows.
    fn over(self, values: Vec<Value>, result: SqlType) -> Result<Value, PgError> {
        if self == AggregateKind::StringAgg {
            // Each row's pair holds its text and the delimiter before it.
            super::functions::built_text_fits(joined_bytes(&values, 0))?;
            return Ok(super::array::string_agg(&values));
        }
        if self == AggregateKind::ArrayAgg {
            return Ok(if values.is_empty() {
                Value::Null
            } else {
                Value::Array(std::sync::Arc::new(values))
            });
        }
        let present = values.into_iter().filter(|v| !v.is_null());
        Ok(match self {
            AggregateKind::ArrayAgg | AggregateKind::StringAgg => {
                unreachable!("array_agg and string_agg are folded above")
            }
            AggregateKind::Count => Value::Int(present.count() as i64),
            AggregateKind::Min => present.min().unwrap_or(Value::Null),
            AggregateKind::Max => present.max().unwrap_or(Value::Null),
            AggregateKind::Sum => {
                let mut total: Option<Value> = None;
                for value in present {
                    let value = cast(value, result)?;
                    total = Some(match total {
                        None => value,
                        Some(sum) => binary(BinOp::Add, sum, value, result)?,
                    });
                }
                total.unwrap_or(Value::Null)
            }
            AggregateKind::Avg if result == SqlType::Float8 => {
                let mut values = Vec::new();
                for value in present {
                    values.push(cast(value, result)?.as_f64().unwrap_or(0.0));
                }
                float8_average(values.into_iter())?.map_or(Value::Null, |v| Value::Float(Float(v)))
            }
            AggregateKind::Avg => {
                let mut total: Option<Value> = None;
                let mut count = 0i64;
                for value in present {
                    let value = cast(value, result)?;
                    count += 1;
                    total = Some(match total {
                        None => value,
                        Some(sum) => binary(BinOp::Add, sum, value, result)?,
                    });
                }
                match total {
                    None => Value::Null,
                    Some(sum) => binary(BinOp::Div, sum, cast(Value::Int(count), result)?, result)?,
                }
            }
        })
    }
}

/// The `ORDER BY` inside an aggregate call (`array_agg(v ORDER BY k DESC)`): how many keys
/// follow the value in the call's argument, and per key (bit `i` for key `i`) whether it
/// sorts descending and NULLs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AggregateOrder {
    /// The number of keys (at most [`AGGREGATE_ORDER_KEYS`]).
    pub keys: u8,
    /// Bit `i`: key `i` descending.
    pub descending: u8,
    /// Bit `i`: key `i` puts NULLs first.
    pub nulls_first: u8,
}

/// The most keys an aggregate's `ORDER BY` may have here.
pub const AGGREGATE_ORDER_KEYS: usize = 8;

/// An aggregate call: the function, and whether it folds each distinct value once
/// (`count(DISTINCT e)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Aggregate {
    /// The function.
    pub kind: AggregateKind,
    /// `DISTINCT`: equal values (as `=` compares them) count once.
    pub distinct: bool,
    /// `ORDER BY` inside the call.
    pub order: Option<AggregateOrder>,
}

impl Aggregate {
    /// True when the call's argument is the array `ARRAY[value, key, ...]` (for `string_agg`
    /// always `ARRAY[text, delimiter, key, ...]`): for `array_agg` always (so that a row
    /// `FILTER` leaves out, a NULL array, is told apart from a NULL value), and for any
    /// aggregate with `ORDER BY`.
    pub fn wrapped(self) -> bool {
        self.kind == AggregateKind::ArrayAgg || self.order.is_some()
    }

    /// Folds the argument's values over the rows.
    fn over(self, mut values: Vec<Value>, result: SqlType) -> Result<Value, PgError> {
        use std::cmp::Ordering;
        if self.distinct {
            values.sort();
            values.dedup_by(|a, b| Ord::cmp(&*a, &*b) == Ordering::Equal);
        }
        if self.wrapped() {
            // A row FILTER left out is a NULL array: it takes no part.
            values.retain(|wrapper| !wrapper.is_null());
        }
        if let Some(order) = self.order {
            let lead = if self.kind == AggregateKind::StringAgg {
                2
            } else {
                1
            };
            // Stable: rows whose keys tie keep the order they were read in.
            values.sort_by(|a, b| {
                let (a, b) = (super::array::elements(a), super::array::elements(b));
                for key in 0..usize::from(order.keys) {
                    let (Some(x), Some(y)) = (a.get(lead + key), b.get(lead + key)) else {
                        return Ordering::Equal;
                    };
                    let nulls_first = order.nulls_first & (1 << key) != 0;
                    let ordering = match (x.is_null(), y.is_null()) {
                        (true, true) => Ordering::Equal,
                        (true, false) if nulls_first => Ordering::Less,
                        (true, false) => Ordering::Greater,
                        (false, true) if nulls_first => Ordering::Greater,
                        (false, true) => Ordering::Less,
                        (false, false) if order.descending & (1 << key) != 0 => y.cmp(x),
                        (false, false) => x.cmp(y),
                    };
                    if ordering != Ordering::Equal {
                        return ordering;
                    }
                }
                Ordering::Equal
            });
        }
        if self.wrapped() && self.kind != AggregateKind::StringAgg {
            values = values
                .into_iter()
                .filter_map(|wrapper| super::array::elements(&wrapper).first().cloned())
                .collect();
        }
        self.kind.over(values, result)
    }
}

/// What an expression reads besides its own constants.
pub struct EvalContext<'a> {
    /// The row.
    pub row: &'a [Value],
    /// The `excluded` row.
    pub excluded: Option<&'a [Value]>,
    /// The parameters.
    pub params: &'a [Value],
}

impl Expr {
    /// `left op right`, its type computed once from its operands'.
    pub fn binary_node(op: BinOp, left: Expr, right: Expr) -> Expr {
        let ty = binary_type(op, left.ty(), right.ty());
        Expr::Binary(op, Box::new(left), Box::new(right), ty)
    }

    /// The expression's type.
    pub fn ty(&self) -> SqlType {
        match self {
            Expr::Const(_, ty)
            | Expr::Param(_, ty)
            | Expr::Column(_, ty)
            | Expr::Excluded(_, ty)
            | Expr::Cast(_, ty)
            | Expr::Sequence { ty, .. }
            | Expr::Subquery { ty, .. } => *ty,
            Expr::Outer(inner) => inner.ty(),
            Expr::VolatileCall(function, _) => function.ty(),
            Expr::Binary(.., ty) => *ty,
            Expr::Not(_) | Expr::IsNull(..) => SqlType::Bool,
            Expr::Neg(inner) => inner.ty(),
            Expr::CountStar => SqlType::Int8,
            Expr::Aggregate(_, _, ty) | Expr::Coalesce(_, ty) | Expr::Call(_, _, ty) => *ty,
            Expr::Case { ty, .. } => *ty,
            Expr::Clock(function) => function.ty(),
            Expr::Session(function) => function.ty(),
            Expr::Advisory(function, _) => {
                if function.answers_boolean() {
                    SqlType::Bool
                } else {
                    SqlType::Void
                }
            }
        }
    }

    /// True when `found` holds for the expression or any part of it. Iterative: a chain of a
    /// thousand operators is a thousand levels deep.
    pub fn contains(&self, found: &dyn Fn(&Expr) -> bool) -> bool {
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            if found(expr) {
                return true;
            }
            pending.extend(expr.parts());
        }
        false
    }

    /// True when the expression calls an advisory lock function.
    pub fn has_advisory(&self) -> bool {
        self.contains(&|e| matches!(e, Expr::Advisory(..)))
    }

    /// Evaluates the expression.
    pub fn eval(&self, cx: &EvalContext<'_>) -> Result<Value, PgError> {
        PgError::check_statement_memory()?;
        Ok(match self {
            Expr::Const(value, _) => value.clone(),
            Expr::Param(index, _) => cx.params.get(*index).cloned().unwrap_or(Value::Null),
            Expr::Column(index, _) => cx.row.get(*index).cloned().unwrap_or(Value::Null),
            Expr::Excluded(index, _) => cx
                .excluded
                .and_then(|row| row.get(*index))
                .cloned()
                .unwrap_or(Value::Null),
            Expr::Cast(inner, ty) if inner.ty() == SqlType::RegType && ty.is_integer() => {
                cast(regtype_as_oid(inner.eval(cx)?), *ty)?
            }
            Expr::Cast(inner, ty) => cast(inner.eval(cx)?, *ty)?,
            Expr::Not(inner) => match inner.eval(cx)? {
                Value::Bool(b) => Value::Bool(!b),
                _ => Value::Null,
            },
            Expr::IsNull(inner, negated) => Value::Bool(inner.eval(cx)?.is_null() != *negated),
            Expr::Neg(inner) => match inner.eval(cx)? {
                Value::Int(v) => check_range(
                    v.checked_neg().ok_or_else(|| overflow(inner.ty()))?,
                    inner.ty(),
                )?,
                Value::Numeric(d) => Value::Numeric(Decimal {
                    mantissa: -d.mantissa,
                    ..d
                }),
                Value::Float(f) => Value::Float(Float(-f.0)),
                Value::Interval(i) => Value::Interval(i.negated()?),
                other => other,
            },
            Expr::Binary(BinOp::And, left, right, _) => {
                let l = left.eval(cx)?;
                if l == Value::Bool(false) {
                    return Ok(l);
                }
                match (l, right.eval(cx)?) {
                    (_, Value::Bool(false)) => Value::Bool(false),
                    (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            Expr::Binary(BinOp::Or, left, right, _) => {
                let l = left.eval(cx)?;
                if l == Value::Bool(true) {
                    return Ok(l);
                }
                match (l, right.eval(cx)?) {
                    (_, Value::Bool(true)) => Value::Bool(true),
                    (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            Expr::Binary(BinOp::DistinctFrom, left, right, _) => {
                match (left.eval(cx)?, right.eval(cx)?) {
                    (Value::Null, Value::Null) => Value::Bool(false),
                    (Value::Null, _) | (_, Value::Null) => Value::Bool(true),
                    (l, r) => Value::Bool(l.cmp(&r) != std::cmp::Ordering::Equal),
                }
            }
            Expr::Binary(op, left, right, _) => {
                let (mut l, mut r) = (left.eval(cx)?, right.eval(cx)?);
                if left.ty() == SqlType::RegType && right.ty() == SqlType::RegType {
                    // Types compare as their OIDs.
                    (l, r) = (regtype_as_oid(l), regtype_as_oid(r));
                }
                binary(*op, l, r, self.ty())?
            }
            Expr::CountStar | Expr::Aggregate(..) => Value::Null,
            Expr::Coalesce(arguments, _) => {
                for argument in arguments {
                    let value = argument.eval(cx)?;
                    if !value.is_null() {
                        return Ok(value);
                    }
                }
                Value::Null
            }
            Expr::Call(function, arguments, ty) => {
                let values = arguments
                    .iter()
                    .map(|a| a.eval(cx))
                    .collect::<Result<Vec<_>, _>>()?;
                function.apply(values, *ty)?
            }
            Expr::Case {
                whens, otherwise, ..
            } => {
                for (condition, value) in whens {
                    if condition.eval(cx)? == Value::Bool(true) {
                        return value.eval(cx);
                    }
                }
                otherwise.eval(cx)?
            }
            Expr::Advisory(..) => {
                return Err(PgError::unsupported_statement(
                    "an advisory lock function outside a SELECT list",
                ))
            }
            Expr::Sequence { .. } => {
                return Err(PgError::unsupported_statement(
                    "a sequence's next value outside the VALUES of an INSERT",
                ))
            }
            Expr::VolatileCall(function, _) => {
                return Err(PgError::unsupported_statement(&format!(
                    "{}() where the stand-in does not run it",
                    function.name()
                )))
            }
            Expr::Subquery { .. } => {
                return Err(PgError::unsupported_statement(
                    "a subquery whose result was not computed first",
                ))
            }
            Expr::Outer(..) => {
                return Err(PgError::unsupported_statement(
                    "an outer column of a correlated subquery not bound to its row",
                ))
            }
            Expr::Clock(..) => {
                return Err(PgError::unsupported_statement(
                    "a clock function in a CHECK constraint",
                ))
            }
            Expr::Session(..) => {
                return Err(PgError::unsupported_statement(
                    "a function of the session in a CHECK constraint",
                ))
            }
        })
    }

    /// Folds constants as PostgreSQL's planner does before it reads a row: every
    /// subexpression made of constants only is evaluated (the operators and functions here
    /// are immutable), so its error (a division by zero, an overflow) is the statement's
    /// whatever rows there are, and it comes before a query's row description. The arms a
    /// constant decides are dropped unevaluated, as the planner drops them: a `CASE` arm whose
    /// condition is false or NULL and everything after one that is true, `coalesce`'s
    /// arguments after a constant that is not NULL, an `AND`'s after a false, an `OR`'s after
    /// a true. Returns the expression's value when it is a constant, else None.
    pub fn fold(&self) -> Result<Option<Value>, PgError> {
        let constant = |expr: &Expr| {
            let cx = EvalContext {
                row: &[],
                excluded: None,
                params: &[],
            };
            expr.eval(&cx).map(Some)
        };
        match self {
            Expr::Const(value, _) => Ok(Some(value.clone())),
            Expr::Param(..)
            | Expr::Column(..)
            | Expr::Excluded(..)
            | Expr::CountStar
            | Expr::Sequence { .. }
            | Expr::Subquery { .. }
            | Expr::Clock(..)
            | Expr::Session(..)
            | Expr::Outer(..) => Ok(None),
            // Stable in PostgreSQL (it reads the session's time zone, or calls its arguments'
            // output functions as `format` does): its parts are folded, it is not, so its
            // error comes when a row is computed.
            stable
                if stable.reads_time_zone()
                    || matches!(stable, Expr::Call(ScalarFn::Format | ScalarFn::TypeOf, ..)) =>
            {
                for part in stable.parts() {
                    part.fold()?;
                }
                Ok(None)
            }
            // Volatile: its arguments are folded, the call is not.
            Expr::Advisory(_, arguments) | Expr::VolatileCall(_, arguments) => {
                for argument in arguments {
                    argument.fold()?;
                }
                Ok(None)
            }
            Expr::Aggregate(_, argument, _) => argument.fold().map(|_| None),
            Expr::Binary(op @ (BinOp::And | BinOp::Or), left, right, _) => {
                // A false decides an AND, a true an OR.
                let decides = Value::Bool(*op == BinOp::Or);
                let left = left.fold()?;
                if left.as_ref() == Some(&decides) {
                    return Ok(left);
                }
                let right = right.fold()?;
                if right.as_ref() == Some(&decides) {
                    return Ok(right);
                }
                match (left, right) {
                    (Some(_), Some(_)) => constant(self),
                    _ => Ok(None),
                }
            }
            Expr::Coalesce(arguments, _) => {
                let mut all_constant = true;
                for argument in arguments {
                    match argument.fold()? {
                        Some(Value::Null) => {}
                        Some(value) => return Ok(all_constant.then_some(value)),
                        None => all_constant = false,
                    }
                }
                Ok(all_constant.then_some(Value::Null))
            }
            Expr::Case {
                whens, otherwise, ..
            } => {
                let mut all_constant = true;
                for (condition, value) in whens {
                    match condition.fold()? {
                        Some(Value::Bool(true)) => {
                            let value = value.fold()?;
                            return Ok(value.filter(|_| all_constant));
                        }
                        Some(_) => {}
                        None => {
                            value.fold()?;
                            all_constant = false;
                        }
                    }
                }
                let value = otherwise.fold()?;
                Ok(value.filter(|_| all_constant))
            }
            _ => {
                let mut all_constant = true;
                for part in self.parts() {
                    all_constant &= part.fold()?.is_some();
                }
                if all_constant {
                    constant(self)
                } else {
                    Ok(None)
                }
            }
        }
    }

    /// The expressions this one is made of.
    pub fn parts(&self) -> Vec<&Expr> {
        match self {
            Expr::Const(..)
            | Expr::Param(..)
            | Expr::Column(..)
            | Expr::Excluded(..)
            | Expr::CountStar
            | Expr::Sequence { .. }
            | Expr::Subquery { .. }
            | Expr::Clock(..)
            | Expr::Session(..)
            | Expr::Outer(..) => Vec::new(),
            Expr::Binary(_, l, r, _) => vec![l, r],
            Expr::Not(e) | Expr::Neg(e) | Expr::IsNull(e, _) | Expr::Cast(e, _) => vec![e],
            Expr::Aggregate(_, e, _) => vec![e],
            Expr::Coalesce(arguments, _)
            | Expr::Call(_, arguments, _)
            | Expr::Advisory(_, arguments)
            | Expr::VolatileCall(_, arguments) => arguments.iter().collect(),
            Expr::Case {
                whens, otherwise, ..
            } => whens
                .iter()
                .flat_map(|(c, v)| [c, v])
                .chain([otherwise.as_ref()])
                .collect(),
        }
    }

    /// The expression with every aggregate replaced by its value over `rows` (so that it can
    /// then be evaluated on no row).
    pub fn fold_aggregates(&self, rows: &[Vec<Value>], params: &[Value]) -> Result<Expr, PgError> {
        let fold = |e: &Expr| e.fold_aggregates(rows, params).map(Box::new);
        Ok(match self {
            Expr::CountStar => Expr::Const(Value::Int(rows.len() as i64), SqlType::Int8),
            Expr::Aggregate(kind, argument, ty) => {
                let values = rows
                    .iter()
                    .map(|row| {
                        argument.eval(&EvalContext {
                            row,
                            excluded: None,
                            params,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Expr::Const(kind.over(values, *ty)?, *ty)
            }
            Expr::Binary(op, l, r, ty) => Expr::Binary(*op, fold(l)?, fold(r)?, *ty),
            Expr::Not(e) => Expr::Not(fold(e)?),
            Expr::Neg(e) => Expr::Neg(fold(e)?),
            Expr::IsNull(e, negated) => Expr::IsNull(fold(e)?, *negated),
            Expr::Cast(e, ty) => Expr::Cast(fold(e)?, *ty),
            Expr::Coalesce(arguments, ty) => Expr::Coalesce(
                arguments
                    .iter()
                    .map(|a| a.fold_aggregates(rows, params))
                    .collect::<Result<_, _>>()?,
                *ty,
            ),
            Expr::Call(function, arguments, ty) => Expr::Call(
                *function,
                arguments
                    .iter()
                    .map(|a| a.fold_aggregates(rows, params))
                    .collect::<Result<_, _>>()?,
                *ty,
            ),
            Expr::Case {
                whens,
                otherwise,
                ty,
            } => Expr::Case {
                whens: whens
                    .iter()
                    .map(|(c, v)| {
                        Ok((
                            c.fold_aggregates(rows, params)?,
                            v.fold_aggregates(rows, params)?,
                        ))
                    })
                    .collect::<Result<_, PgError>>()?,
                otherwise: fold(otherwise)?,
                ty: *ty,
            },
            other => other.clone(),
        })
    }

    /// The expressions this one is made of, to change in place (in [`Expr::parts`]'s order).
    pub fn parts_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Const(..)
            | Expr::Param(..)
            | Expr::Column(..)
            | Expr::Excluded(..)
            | Expr::CountStar
            | Expr::Sequence { .. }
            | Expr::Subquery { .. }
            | Expr::Clock(..)
            | Expr::Session(..)
            | Expr::Outer(..) => Vec::new(),
            Expr::Binary(_, l, r, _) => vec![l, r],
            Expr::Not(e) | Expr::Neg(e) | Expr::IsNull(e, _) | Expr::Cast(e, _) => vec![e],
            Expr::Aggregate(_, e, _) => vec![e],
            Expr::Coalesce(arguments, _)
            | Expr::Call(_, arguments, _)
            | Expr::Advisory(_, arguments)
            | Expr::VolatileCall(_, arguments) => arguments.iter_mut().collect(),
            Expr::Case {
                whens, otherwise, ..
            } => whens
                .iter_mut()
                .flat_map(|(c, v)| [c, v])
                .chain([otherwise.as_mut()])
                .collect(),
        }
    }

    /// Puts each parameter's value in its place (what planning a bound statement sees).
    pub fn bind_params(&mut self, values: &[Value]) {
        let mut pending: Vec<&mut Expr> = vec![self];
        while let Some(expr) = pending.pop() {
            if let Expr::Param(index, ty) = expr {
                if let Some(value) = values.get(*index) {
                    *expr = Expr::Const(value.clone(), *ty);
                }
                continue;
            }
            pending.extend(expr.parts_mut());
        }
    }

    /// Puts the clock's value in the place of every clock function call, and the session's
    /// facts in the place of every function of the session.
    pub fn stamp_clock(&mut self, reading: &StatementReading<'_>) {
        let clock = reading.clock;
        // Iterative: every statement's plan is stamped, a chain of a thousand operators
        // among them.
        let mut pending: Vec<&mut Expr> = vec![self];
        while let Some(expr) = pending.pop() {
            if let Expr::Session(function) = expr {
                *expr = Expr::Const(function.value(reading), function.ty());
                continue;
            }
            let Expr::Clock(function) = expr else {
                pending.extend(expr.parts_mut());
                continue;
            };
            *expr = match function {
                ClockFn::Transaction => {
                    Expr::Const(Value::TimestampTz(clock.transaction), SqlType::TimestampTz)
                }
                ClockFn::Statement => {
                    Expr::Const(Value::TimestampTz(clock.statement), SqlType::TimestampTz)
                }
                ClockFn::LocalTransaction => {
                    Expr::Const(Value::Timestamp(clock.transaction), SqlType::Timestamp)
                }
            };
        }
    }

    /// True for the operations on a `timestamp with time zone` that PostgreSQL marks stable
    /// rather than immutable, since they read the session's `TimeZone`: adding or taking an
    /// interval, comparing or casting it with a `timestamp` or `text`, `extract` from it.
    /// The planner does not fold them.
    fn reads_time_zone(&self) -> bool {
        use SqlType::{Interval, Text, Timestamp, TimestampTz};
        match self {
            Expr::Binary(op, left, right, _) => {
                let types = (left.ty(), right.ty());
                match op {
                    BinOp::Add | BinOp::Sub => {
                        matches!(types, (TimestampTz, Interval) | (Interval, TimestampTz))
                    }
                    _ => matches!(types, (TimestampTz, Timestamp) | (Timestamp, TimestampTz)),
                }
            }
            Expr::Cast(inner, to) => matches!(
                (inner.ty(), to),
                (TimestampTz, Timestamp | Text) | (Timestamp | Text, TimestampTz)
            ),
            Expr::Call(ScalarFn::Extract | ScalarFn::DatePart, arguments, _) => {
                arguments.get(1).is_some_and(|a| a.ty() == TimestampTz)
            }
            Expr::Call(ScalarFn::DateTrunc, _, ty) => *ty == TimestampTz,
            Expr::Call(ScalarFn::Age, arguments, _) => {
                arguments.first().is_some_and(|a| a.ty() == TimestampTz)
            }
            _ => false,
        }
    }

    /// Puts `results[index]` in the place of every [`Expr::Subquery`] `index` it holds.
    pub fn replace_subqueries(&mut self, results: &[Expr]) {
        if let Expr::Subquery { index, .. } = self {
            if let Some(result) = results.get(*index) {
                *self = result.clone();
            }
            return;
        }
        for part in self.parts_mut() {
            part.replace_subqueries(results);
        }
    }

    /// Puts in the place of every [`Expr::Outer`] its value on `row`, the outer statement's
    /// row a correlated subquery runs for.
    pub fn bind_outer(&mut self, row: &[Value], params: &[Value]) -> Result<(), PgError> {
        if let Expr::Outer(inner) = self {
            let value = inner.eval(&EvalContext {
                row,
                excluded: None,
                params,
            })?;
            *self = Expr::Const(value, inner.ty());
            return Ok(());
        }
        for part in self.parts_mut() {
            part.bind_outer(row, params)?;
        }
        Ok(())
    }

    /// True when the expression reads a column of an outer statement ([`Expr::Outer`]).
    pub fn has_outer(&self) -> bool {
        self.contains(&|e| matches!(e, Expr::Outer(..)))
    }

    /// True when the expression calls a volatile function ([`VolatileFn`]) that is not
    /// [stable](VolatileFn::is_stable) (those run before the statement).
    pub fn has_volatile_call(&self) -> bool {
        self.contains(&|e| matches!(e, Expr::VolatileCall(f, _) if !f.is_stable()))
    }

    /// Puts in the place of every volatile function call the value `call` gives it, left to
    /// right (`SELECT nextval('s'), nextval('s')` answers 1 and 2). The arms of a `CASE` are
    /// all visited: a call in an arm not taken still runs (a documented difference).
    pub fn replace_volatile_calls(&mut self, call: &mut VolatileCaller<'_>) -> Result<(), PgError> {
        if let Expr::VolatileCall(function, arguments) = self {
            let value = call(*function, arguments)?;
            *self = Expr::Const(value, function.ty());
            return Ok(());
        }
        for part in self.parts_mut() {
            part.replace_volatile_calls(call)?;
        }
        Ok(())
    }

    /// True when the expression holds an aggregate (`count(*)`, `sum(e)`, ...).
    pub fn is_aggregate(&self) -> bool {
        matches!(self, Expr::CountStar | Expr::Aggregate(..))
            || self.parts().into_iter().any(Expr::is_aggregate)
    }
}

/// The result type of `left op right`.
pub fn binary_type(op: BinOp, left: SqlType, right: SqlType) -> SqlType {
    use SqlType::*;
    match op {
        BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::And
        | BinOp::Or
        | BinOp::DistinctFrom => Bool,
        BinOp::Concat => Text,
        _ if left.is_time() || right.is_time() => {
            time_operator(op, left, right).unwrap_or(Interval)
        }
        _ => match (left, right) {
            (Float8, _) | (_, Float8) => Float8,
            (Numeric, _) | (_, Numeric) => Numeric,
            (Int8, _) | (_, Int8) => Int8,
            (Int4, Int4 | Int2) | (Int2, Int4) => Int4,
            (Int2, Int2) => Int2,
            (Unknown, other) | (other, Unknown) => other,
            _ => Int8,
        },
    }
}

/// `to_timestamp(seconds)` (`float8_timestamptz`).
fn to_timestamp(seconds: f64) -> Result<Value, PgError> {
    use super::datetime::{INFINITY, NEG_INFINITY, PG_EPOCH_UNIX_SECS};
    if seconds.is_nan() {
        return Err(PgError::error("22008", "timestamp cannot be NaN"));
    }
    if seconds.is_infinite() {
        let end = if seconds > 0.0 {
            INFINITY
        } else {
            NEG_INFINITY
        };
        return Ok(Value::TimestampTz(end));
    }
    // PostgreSQL's range: 4714-11-24 BC to 294277-01-01; the stand-in's starts at year 1.
    if !(-62_135_596_800.0..9_224_318_016_000.0).contains(&seconds) {
        return Err(PgError::error(
            "22008",
            format!(
                "timestamp out of range: \"{}\"",
                super::value::format_float(seconds)
            ),
        ));
    }
    let micros = ((seconds - PG_EPOCH_UNIX_SECS as f64) * 1e6).round_ties_even();
    Ok(Value::TimestampTz(micros as i64))
}

/// `date_trunc(unit, value)`: 22023 for a unit PostgreSQL does not know.
fn date_trunc(unit: &str, value: &Value) -> Result<Value, PgError> {
    use super::datetime::truncate;
    let (timestamp, ty) = match value {
        Value::TimestampTz(t) => (*t, SqlType::TimestampTz),
        Value::Timestamp(t) => (*t, SqlType::Timestamp),
        _ => return Ok(Value::Null),
    };
    let Some(cut) = truncate(timestamp, unit) else {
        return Err(PgError::error(
            "22023",
            format!("unit \"{unit}\" not recognized for type {}", ty.name()),
        ));
    };
    let cut = cut?;
    Ok(if ty == SqlType::TimestampTz {
        Value::TimestampTz(cut)
    } else {
        Value::Timestamp(cut)
    })
}

/// The result type of an arithmetic operator on a time type (PostgreSQL's operators:
/// `timestamp ± interval`, `interval + timestamp`, `timestamp - timestamp`, `interval ±
/// interval`, `interval * number`, `number * interval`, `interval / number`), None when
/// there is no such operator.
pub fn time_operator(op: BinOp, left: SqlType, right: SqlType) -> Option<SqlType> {
    use SqlType::*;
    Some(match (op, left, right) {
        (BinOp::Add | BinOp::Sub, ts, Interval) if ts.is_timestamp() => ts,
        (BinOp::Add, Interval, ts) if ts.is_timestamp() => ts,
        (BinOp::Sub, l, r) if l.is_timestamp() && r.is_timestamp() => Interval,
        (BinOp::Add | BinOp::Sub, Interval, Interval) => Interval,
        (BinOp::Mul, Interval, n) | (BinOp::Mul, n, Interval) if n.is_number() => Interval,
        (BinOp::Div, Interval, n) if n.is_number() => Interval,
        _ => return None,
    })
}

/// `l op r` on time values (types checked by [`time_operator`]).
fn time_arithmetic(op: BinOp, l: Value, r: Value) -> Result<Value, PgError> {
    use super::datetime::{add_interval, difference};
    let factor = |v: &Value| v.as_f64().unwrap_or(0.0);
    Ok(match (op, l, r) {
        (BinOp::Add, Value::TimestampTz(t), Value::Interval(i))
        | (BinOp::Add, Value::Interval(i), Value::TimestampTz(t)) => {
            Value::TimestampTz(add_interval(t, i)?)
        }
        (BinOp::Add, Value::Timestamp(t), Value::Interval(i))
        | (BinOp::Add, Value::Interval(i), Value::Timestamp(t)) => {
            Value::Timestamp(add_interval(t, i)?)
        }
        (BinOp::Sub, Value::TimestampTz(t), Value::Interval(i)) => {
            Value::TimestampTz(add_interval(t, i.negated()?)?)
        }
        (BinOp::Sub, Value::Timestamp(t), Value::Interval(i)) => {
            Value::Timestamp(add_interval(t, i.negated()?)?)
        }
        (
            BinOp::Sub,
            Value::TimestampTz(a) | Value::Timestamp(a),
            Value::TimestampTz(b) | Value::Timestamp(b),
        ) => Value::Interval(difference(a, b)?),
        (BinOp::Add, Value::Interval(a), Value::Interval(b)) => Value::Interval(a.checked_add(b)?),
        (BinOp::Sub, Value::Interval(a), Value::Interval(b)) => Value::Interval(a.checked_sub(b)?),
        (BinOp::Mul, Value::Interval(i), n) | (BinOp::Mul, n, Value::Interval(i)) => {
            Value::Interval(i.checked_mul(factor(&n))?)
        }
        (BinOp::Div, Value::Interval(i), n) => Value::Interval(i.checked_div(factor(&n))?),
        _ => Value::Null,
    })
}

/// `a op b` in `double precision` as PostgreSQL 15's `float8_pl`, `float8_mi`, `float8_mul`
/// and `float8_div` check it: 22003 when a result is infinite although no operand was
/// (`value out of range: overflow`), or zero although it should not be (`underflow`); a
/// division by zero is 22012 unless the dividend is NaN. (There is no `double precision %`.)
fn float8_arithmetic(op: BinOp, a: f64, b: f64) -> Result<f64, PgError> {
    let out_of_range = |what: &str| {
        PgError::error(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value out of range: {what}"),
        )
    };
    let (result, overflow, underflow) = match op {
        BinOp::Add | BinOp::Sub => {
            let result = if op == BinOp::Add { a + b } else { a - b };
            (result, !a.is_infinite() && !b.is_infinite(), false)
        }
        BinOp::Mul => (
            a * b,
            !a.is_infinite() && !b.is_infinite(),
            a != 0.0 && b != 0.0,
        ),
        BinOp::Div => {
            if b == 0.0 && !a.is_nan() {
                return Err(division_by_zero());
            }
            (a / b, !a.is_infinite(), a != 0.0 && !b.is_infinite())
        }
        // The analysis refuses `%` on `double precision` (PostgreSQL has no such operator).
        _ => (a % b, false, false),
    };
    if result.is_infinite() && overflow {
        return Err(out_of_range("overflow"));
    }
    if result == 0.0 && underflow {
        return Err(out_of_range("underflow"));
    }
    Ok(result)
}

/// `avg(double precision)` as PostgreSQL 15 folds it (`float8_accum`, the Youngs-Cramer
/// sums it keeps for the variance too, then `float8_avg`): 22003 when a sum overflows
/// although no value was infinite.
fn float8_average(values: impl Iterator<Item = f64>) -> Result<Option<f64>, PgError> {
    let (mut n, mut sum, mut squares) = (0.0f64, 0.0f64, 0.0f64);
    for value in values {
        let before = sum;
        n += 1.0;
        sum += value;
        if n > 1.0 {
            let deviation = value * n - sum;
            squares += deviation * deviation / (n * (n - 1.0));
            if sum.is_infinite() || squares.is_infinite() {
                if !before.is_infinite() && !value.is_infinite() {
                    return Err(PgError::error(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        "value out of range: overflow",
                    ));
                }
                squares = f64::NAN;
            }
        } else if value.is_nan() || value.is_infinite() {
            squares = f64::NAN;
        }
    }
    Ok((n > 0.0).then(|| sum / n))
}

fn overflow(ty: SqlType) -> PgError {
    match ty {
        SqlType::Int2 => PgError::smallint_out_of_range(),
        SqlType::Int4 => PgError::integer_out_of_range(),
        _ => PgError::bigint_out_of_range(),
    }
}

/// A `regtype` value as its type's OID (an `oid` is what a `regtype` is underneath).
fn regtype_as_oid(value: Value) -> Value {
    match &value {
        Value::Text(name) => {
            SqlType::regtype_oid(name).map_or(value, |oid| Value::Int(i64::from(oid)))
        }
        _ => value,
    }
}

/// Converts a value to `ty` as PostgreSQL's casts do.
pub fn cast(value: Value, ty: SqlType) -> Result<Value, PgError> {
    Ok(match (value, ty) {
        (Value::Null, _) => Value::Null,
        (Value::Text(text), ty) => Value::parse_input(&text, ty)?,
        (Value::Int(v), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => check_range(v, ty)?,
        (Value::Int(v), SqlType::Numeric) => Value::Numeric(Decimal::from_int(v)),
        (Value::Int(v), SqlType::Float8) => Value::Float(Float(v as f64)),
        // `bool(integer)` and `int4(boolean)`, the casts between them PostgreSQL has.
        (Value::Int(v), SqlType::Bool) => Value::Bool(v != 0),
        (Value::Bool(b), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => Value::Int(i64::from(b)),
        // `booltext`: the cast spells it out, where the output function gives `t`/`f`.
        (Value::Bool(b), SqlType::Text) => Value::Text(if b { "true" } else { "false" }.into()),
        (Value::Numeric(d), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            let v = d.to_i64().ok_or_else(|| overflow(ty))?;
            check_range(v, ty)?
        }
        (Value::Numeric(d), SqlType::Float8) => Value::Float(Float(d.to_f64())),
        (Value::Float(f), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            let rounded = f.0.round_ties_even();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&rounded) {
                return Err(overflow(ty));
            }
            check_range(rounded as i64, ty)?
        }
        (Value::Float(f), SqlType::Numeric) => Value::Numeric(
            Decimal::parse(&super::value::format_float(f.0))
                .ok_or_else(|| PgError::invalid_input(SqlType::Numeric, &f.0.to_string()))?,
        ),
        (Value::Array(elements), SqlType::Array(element)) => {
            let mut converted = Vec::with_capacity(elements.len());
            for value in elements.iter() {
                converted.push(cast(value.clone(), *element)?);
            }
            Value::Array(std::sync::Arc::new(converted))
        }
        (Value::Timestamp(t), SqlType::TimestampTz) => Value::TimestampTz(t),
        (Value::TimestampTz(t), SqlType::Timestamp) => Value::Timestamp(t),
        (value, SqlType::Text) => Value::Text(value.to_text().unwrap_or_default()),
        (value, _) => value,
    })
}

fn binary(op: BinOp, l: Value, r: Value, result: SqlType) -> Result<Value, PgError> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let compare = |ordering: std::cmp::Ordering| -> bool {
        use std::cmp::Ordering::*;
        match op {
            BinOp::Eq => ordering == Equal,
            BinOp::Ne => ordering != Equal,
            BinOp::Lt => ordering == Less,
            BinOp::Le => ordering != Greater,
            BinOp::Gt => ordering == Greater,
            _ => ordering != Less,
        }
    };
    Ok(match op {
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            Value::Bool(compare(l.cmp(&r)))
        }
        BinOp::Concat => {
            let (l, r) = (concat_text(&l), concat_text(&r));
            super::functions::built_text_fits(l.len().saturating_add(r.len()))?;
            Value::Text(l + &r)
        }
        BinOp::And | BinOp::Or | BinOp::DistinctFrom => {
            unreachable!("AND, OR and IS DISTINCT FROM are evaluated before")
        }
        arithmetic
            if matches!(
                (&l, &r),
                (
                    Value::TimestampTz(_) | Value::Timestamp(_) | Value::Interval(_),
                    _
                ) | (
                    _,
                    Value::TimestampTz(_) | Value::Timestamp(_) | Value::Interval(_)
                )
            ) =>
        {
            time_arithmetic(arithmetic, l, r)?
        }
        arithmetic => match result {
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => {
                let (Value::Int(a), Value::Int(b)) = (&l, &r) else {
                    return Ok(Value::Null);
                };
                let (a, b) = (*a, *b);
                let value = match arithmetic {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div | BinOp::Mod if b == 0 => return Err(division_by_zero()),
                    BinOp::Div => a.checked_div(b),
                    _ => a.checked_rem(b).or(Some(0)),
                }
                .ok_or_else(|| overflow(result))?;
                check_range(value, result).map_err(|_| overflow(result))?
            }
            SqlType::Float8 => {
                let (a, b) = (l.as_f64().unwrap_or(0.0), r.as_f64().unwrap_or(0.0));
                Value::Float(Float(float8_arithmetic(arithmetic, a, b)?))
            }
            _ => {
                let (Some(a), Some(b)) = (l.as_decimal(), r.as_decimal()) else {
                    return Ok(Value::Null);
                };
                let out_of_range = || {
                    PgError::error(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        "value overflows numeric format",
                    )
                };
                Value::Numeric(match arithmetic {
                    BinOp::Add => a.checked_add(b).ok_or_else(out_of_range)?,
                    BinOp::Sub => a.checked_sub(b).ok_or_else(out_of_range)?,
                    BinOp::Mul => a.checked_mul(b).ok_or_else(out_of_range)?,
                    BinOp::Div if b.mantissa == 0 => return Err(division_by_zero()),
                    BinOp::Div => a.checked_div(b).ok_or_else(out_of_range)?,
                    _ => {
                        // The remainder of the quotient truncated towards zero, exactly: both
                        // mantissas at the larger scale, then Rust's `%` (the dividend's sign).
                        if b.mantissa == 0 {
                            return Err(division_by_zero());
                        }
                        let scale = a.scale.max(b.scale);
                        let at_scale = |d: Decimal| {
                            10i128
                                .checked_pow(scale - d.scale)
                                .and_then(|factor| d.mantissa.checked_mul(factor))
                                .ok_or_else(out_of_range)
                        };
                        Decimal {
                            mantissa: at_scale(a)?.checked_rem(at_scale(b)?).unwrap_or(0),
                            scale,
                        }
                    }
                })
            }
        },
    })
}

/// 22012, as every division, modulo and `div` by zero reports it.
pub(super) fn division_by_zero() -> PgError {
    PgError::error(sqlstate::DIVISION_BY_ZERO, "division by zero")
}
