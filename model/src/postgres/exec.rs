//! The general path: any statement of the supported SQL, analysed against the catalogue
//! (names, types, parameters) and executed on the row store with the same transaction
//! blocks, row locks and waiting as the typed statements.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast::{
    self, AssignmentTarget, BinaryOperator, ColumnOption, DataType, FromTable, FunctionArgExpr,
    FunctionArguments, InsertOverriding, LimitClause, LockType, NonBlock, ObjectName, ObjectType,
    OnConflictAction, OnInsert, OrderByKind, SelectItem, SetExpr, TableConstraint, TableFactor,
    TableObject, TimezoneInfo, TransactionMode, UnaryOperator,
};
use sqlparser::ast::{CharacterLength, ExactNumberInfo};

use super::advisory::{AdvisoryAction, AdvisoryFn, AdvisoryKey, AdvisoryMode, CallOutcome};
use super::array;
use super::catalog::{
    cast, time_operator, Aggregate, AggregateKind, AggregateOrder, BinOp, CheckDef, ClockFn,
    ColumnDef, EvalContext, Expr, Parentheses, ScalarFn, SequenceKind, SessionFn, StatementReading,
    TableDef, Typmod, AGGREGATE_ORDER_KEYS,
};
use super::datetime::Interval;
use super::ddl::{CatalogUndo, DdlHold, TableChange};
use super::engine::{
    lock_row_in, lock_row_in_as, Exec, Executed, Isolation, Postgres, Row, Savepoint, SessionId,
    Table, TxStatus, Written,
};
use super::error::{sqlstate, PgError, PgNotice};
use super::index::{self, Clash, IndexDef};
use super::random::{self, RandomFn, VolatileFn};
use super::sequence::{relation_name, Sequence, SequenceFn};
use super::settings::{self, SetPlan, SettingFn};
use super::sql::GeneralStatement;
use super::table_lock::{self, TableLockMode, TableWait};
use super::value::{Decimal, Float, SqlType, Value};

/// A general statement's result: typed columns and rows of values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlResult {
    /// Column names and types (empty for statements that return no rows).
    pub columns: Vec<(String, SqlType)>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
    /// The command tag.
    pub tag: String,
    /// Rows affected or returned.
    pub rows_affected: u64,
}

/// What executing a general statement did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlExec {
    /// It finished.
    Done(Result<SqlResult, PgError>),
    /// It waits for a lock held by another session (no effect; execute it again later).
    Blocked {
        /// The lock holder.
        by: SessionId,
    },
}

/// A general statement's outcome with the notice sent alongside, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlExecuted {
    /// The result.
    pub exec: SqlExec,
    /// A `WARNING` or `NOTICE` sent before the result.
    pub notice: Option<PgNotice>,
}

/// What a statement takes and returns, as a Describe reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// Parameter types.
    pub params: Vec<SqlType>,
    /// Result columns.
    pub columns: Vec<(String, SqlType)>,
    /// A query with a `WITH` query that changes data: PostgreSQL runs it whole before it
    /// sends the row description (an error comes without one).
    pub changes_data: bool,
}

/// A row lock a `SELECT` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LockMode {
    Update,
    NoKeyUpdate,
    Share,
    KeyShare,
}

impl LockMode {
    /// How strong the lock is: `FOR KEY SHARE` the weakest, `FOR UPDATE` the strongest.
    fn strength(self) -> u8 {
        match self {
            LockMode::KeyShare => 0,
            LockMode::Share => 1,
            LockMode::NoKeyUpdate => 2,
            LockMode::Update => 3,
        }
    }

    /// The clause as PostgreSQL names it in errors.
    fn name(self) -> &'static str {
        match self {
            LockMode::Update => "FOR UPDATE",
            LockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
            LockMode::Share => "FOR SHARE",
            LockMode::KeyShare => "FOR KEY SHARE",
        }
    }

    /// PostgreSQL's 0A000 for this locking clause beside `clause` (`GROUP BY clause`, ...).
    fn not_allowed_with(self, clause: &str) -> PgError {
        let mode = self.name();
        PgError::error(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("{mode} is not allowed with {clause}"),
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Block,
    Nowait,
    Skip,
}

#[derive(Clone)]
enum Plan {
    /// `BEGIN`: its isolation level and access mode (`READ ONLY`: true), if named.
    Begin(Option<Isolation>, Option<bool>, &'static str),
    Commit,
    Rollback,
    Savepoint(String),
    Release(String),
    RollbackTo(String),
    CreateTable(TableDef, bool),
    DropTable(Vec<String>, bool),
    /// `CREATE SEQUENCE [IF NOT EXISTS]`.
    CreateSequence(Sequence, bool),
    /// `DROP SEQUENCE [IF EXISTS] names [CASCADE]`.
    DropSequence(Vec<String>, bool, bool),
    /// The tables, and whether their sequences start again (`RESTART IDENTITY`).
    Truncate(Vec<String>, bool),
    /// `CREATE INDEX`, resolved when it runs (as PostgreSQL resolves a utility statement).
    CreateIndex(CreateIndexPlan),
    /// `DROP INDEX [IF EXISTS] names`.
    DropIndex(Vec<String>, bool),
    /// `LOCK [TABLE] names [IN mode MODE] [NOWAIT]` (`table_lock.rs`): the tables, the mode,
    /// and `NOWAIT`.
    LockTables(Vec<Arc<str>>, TableLockMode, bool),
    /// `SHOW name` (its value is read when it runs).
    Show(String),
    /// `SET`, `RESET`, `SET TRANSACTION ...`, with the command tag.
    Set(SetPlan, &'static str),
    Select(Box<SelectPlan>),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// `UNION`, `INTERSECT` or `EXCEPT` of two relations of the statement (only ever the plan
    /// of a [`SubqueryKind::Relation`]).
    SetOperation(SetOperationPlan),
    /// A `WITH RECURSIVE` query (only ever the plan of a [`SubqueryKind::Relation`]).
    Recursive(RecursivePlan),
    /// `generate_series(start, stop [, step])` in `FROM` (only ever the plan of a
    /// [`SubqueryKind::Relation`]).
    Series(SeriesPlan),
    /// `unnest(array, ...)` in `FROM`: the arrays' elements side by side (only ever the plan
    /// of a [`SubqueryKind::Relation`]).
    Unnest(Vec<Expr>),
    /// A query or change with uncorrelated subqueries: each runs first, in order (a subquery
    /// inside another comes before it), and its result takes the place of its
    /// [`Expr::Subquery`] in the later ones and in the plan.
    WithSubqueries(Vec<Subquery>, Box<Plan>),
}

/// `WITH RECURSIVE`'s query: `base`'s rows, then the rows `step` makes from the last round's
/// (put in the table `working`) until a round makes none new.
#[derive(Clone)]
struct RecursivePlan {
    base: String,
    working: String,
    step: Box<SelectPlan>,
    /// `UNION ALL` (else a row already made is not made again).
    all: bool,
    types: Vec<SqlType>,
}

/// `generate_series(start, stop [, step])` of integers: its bounds and step (1 when absent),
/// converted to the series' type (`integer` or `bigint`).
#[derive(Clone)]
struct SeriesPlan {
    start: Expr,
    stop: Expr,
    step: Option<Expr>,
}

/// The most rows `generate_series` in `FROM` may make: its rows are made before the
/// statement reads them (PostgreSQL makes them as they are read), so past it the statement
/// fails with 54000 rather than fill the memory.
const SERIES_ROW_LIMIT: u64 = 100_000;

/// The most rows a `VALUES` list read as a query may have: it becomes a chain of `UNION ALL`s
/// as long as the list, whose cost grows with the square of its length (1,000 rows take a
/// fifth of a second).
const VALUES_ROW_LIMIT: usize = 1_000;

/// The most rows a `WITH RECURSIVE` query may make (so also rounds it may run): past it the
/// statement fails with 54000, where PostgreSQL would go on (or stop early for a `LIMIT`
/// outside, since it makes rows only as they are read).
pub const RECURSIVE_ROW_LIMIT: usize = 100_000;

/// `left UNION right` and the others: the rows of two relations of the statement (their
/// tables' names), each value cast to its column's common type.
#[derive(Clone)]
struct SetOperationPlan {
    operator: SetOperator,
    /// `ALL`: rows as many times as they come (else each distinct row once).
    all: bool,
    left: String,
    right: String,
    types: Vec<SqlType>,
}

/// The set operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SetOperator {
    Union,
    Intersect,
    Except,
}

impl SetOperator {
    fn name(self) -> &'static str {
        match self {
            SetOperator::Union => "UNION",
            SetOperator::Intersect => "INTERSECT",
            SetOperator::Except => "EXCEPT",
        }
    }
}

/// The rows of `left OPERATOR [ALL] right`, PostgreSQL's multiset semantics (rows equal when
/// every value is, NULLs equal to NULLs): `UNION ALL` both lists, `INTERSECT ALL` each row as
/// often as in both, `EXCEPT ALL` as often as in `left` beyond `right`; without `ALL` each
/// resulting row once. Rows come in `left`'s order, then `right`'s (PostgreSQL's order is
/// unspecified without `ORDER BY`).
fn combine(
    operator: SetOperator,
    all: bool,
    left: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut seen: BTreeSet<Vec<Value>> = BTreeSet::new();
    let mut keep = |row: Vec<Value>, out: &mut Vec<Vec<Value>>| {
        if all || seen.insert(row.clone()) {
            out.push(row);
        }
    };
    if operator == SetOperator::Union {
        for row in left.into_iter().chain(right) {
            keep(row, &mut out);
        }
        return out;
    }
    let mut in_right: BTreeMap<Vec<Value>, usize> = BTreeMap::new();
    for row in right {
        *in_right.entry(row).or_default() += 1;
    }
    match operator {
        SetOperator::Union => unreachable!("combined above"),
        SetOperator::Intersect => {
            for row in left {
                let count = in_right.get_mut(&row);
                if let Some(count) = count.filter(|c| **c > 0) {
                    if all {
                        *count -= 1;
                    }
                    keep(row, &mut out);
                }
            }
        }
        SetOperator::Except => {
            for row in left {
                match in_right.get_mut(&row) {
                    Some(count) if *count > 0 => {
                        if all {
                            *count -= 1;
                        }
                    }
                    _ => keep(row, &mut out),
                }
            }
        }
    }
    out
}

/// The table that holds a relation's rows for a statement (or a round of a recursive one):
/// rows numbered in order, all committed, none locked.
fn table_of_rows(def: Arc<TableDef>, rows: Vec<Vec<Value>>) -> Table {
    let rows = (0i64..)
        .zip(rows)
        .map(|(number, tuple)| {
            let row = Row {
                committed: Some(tuple),
                lock: None,
                shared: Vec::new(),
                key_only: Vec::new(),
                waiters: Vec::new(),
            };
            (Value::Int(number), row)
        })
        .collect();
    Table {
        def,
        rows,
        next_seq: 1,
        sequences: BTreeMap::new(),
        canonical: false,
    }
}

/// A relation's row with each value cast to its column's type.
fn cast_row(tuple: Vec<Value>, types: &[SqlType]) -> Result<Vec<Value>, PgError> {
    tuple
        .into_iter()
        .zip(types)
        .map(|(value, ty)| cast(value, *ty))
        .collect()
}

/// `ALL` (true) or `DISTINCT`/nothing (false) after a set operator.
fn is_all(quantifier: &ast::SetQuantifier) -> Result<bool, PgError> {
    match quantifier {
        ast::SetQuantifier::All => Ok(true),
        ast::SetQuantifier::None | ast::SetQuantifier::Distinct => Ok(false),
        other => Err(unsupported(&other.to_string())),
    }
}

/// One uncorrelated subquery of a statement: its `SELECT` and what its result becomes.
#[derive(Clone)]
struct Subquery {
    kind: SubqueryKind,
    /// Always a [`Plan::Select`].
    plan: Box<Plan>,
}

#[derive(Clone)]
enum SubqueryKind {
    /// `(SELECT one column)` as a value: NULL for no row, 21000 for more than one.
    Scalar(SqlType),
    /// `EXISTS (SELECT ...)`.
    Exists,
    /// `left IN (SELECT one column)`: `left = v` for some row's `v`, with SQL's NULLs.
    In(Box<Expr>, SqlType),
    /// A relation the statement reads like a table: a subquery in `FROM` or a `WITH` query.
    /// Its rows are made once, before the statement, into a table of the statement's own
    /// named `def.name` (see [`derived_table_name`]), gone when the statement is over. `used`:
    /// some `FROM` reads it (a `WITH` query nothing reads is not run, as in PostgreSQL, nor
    /// are the subqueries inside it, from `first` on).
    Relation {
        def: Arc<TableDef>,
        used: bool,
        first: usize,
    },
}

/// The name of the table that holds the rows of a statement's `index`th subquery, a
/// [`SubqueryKind::Relation`]: it starts with a zero byte, which no name a client sends can
/// hold, so it never meets a table of the catalogue.
fn derived_table_name(index: usize) -> String {
    format!("\0relation {index}")
}

/// Whether `table` names a statement's own relation ([`derived_table_name`]).
pub(super) fn is_derived_table(table: &str) -> bool {
    table.starts_with('\0')
}

/// How a joined table's rows meet the rows before it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum JoinKind {
    /// `JOIN`, `INNER JOIN`, `CROSS JOIN`, a comma: the pairs that pass `ON`.
    Inner,
    /// `LEFT JOIN`: also each row before it that met none, with NULLs for this table.
    Left,
    /// `RIGHT JOIN`: also each row of this table that met none, with NULLs before it.
    Right,
    /// `FULL JOIN`: both.
    Full,
}

/// A table joined to the rows before it (`SelectPlan::joins`).
#[derive(Clone)]
struct JoinPlan {
    table: String,
    kind: JoinKind,
    /// The `ON` condition (or `USING`'s equalities) on a row of the columns before and this
    /// table's; None: every pair.
    on: Option<Expr>,
    /// How many columns a row has before this table's, and how many this table has.
    left_width: usize,
    width: usize,
    /// The first table of a later item of the `FROM` list (after a comma, or of an
    /// `UPDATE ... FROM`/`DELETE ... USING` list): the item's rows are made on their own (its
    /// joins' conditions see only its tables) and paired with every row before it.
    starts_item: bool,
}

/// The most pairs of rows one join of a `SELECT` may consider (rows so far × rows of the
/// joined table): past it the statement fails with 54000 before it pairs any, rather than
/// take time and memory without bound. PostgreSQL has no such limit.
pub const JOIN_PAIR_LIMIT: usize = 1_000_000;

#[derive(Clone)]
struct SelectPlan {
    table: Option<String>,
    /// The tables joined to `table`, in order.
    joins: Vec<JoinPlan>,
    /// Under locking clauses, the tables whose rows they lock (0 for `table`, n for the nth
    /// join), in that order, each with its lock and its way of waiting: the strongest lock of
    /// the clauses naming it, `NOWAIT` if any says so, else `SKIP LOCKED` if any does.
    lock_tables: Vec<(usize, LockMode, Wait)>,
    filter: Option<Expr>,
    items: Vec<(String, Expr)>,
    order: Vec<(Expr, bool, bool)>,
    limit: Option<Expr>,
    offset: Option<Expr>,
    /// The first locking clause's lock and way of waiting (it names the lock in errors
    /// about the query); what each table takes is in `lock_tables`.
    lock: Option<(LockMode, Wait)>,
    /// Aggregates, `GROUP BY` or `HAVING`: rows are made per group (one group of every row
    /// without `GROUP BY`), `items` and `order` evaluated on each group.
    aggregate: bool,
    /// The `GROUP BY` expressions.
    group_by: Vec<Expr>,
    /// The `HAVING` condition.
    having: Option<Expr>,
    /// `SELECT DISTINCT`: equal result rows once (as groups of the select list when there is
    /// no aggregate).
    distinct: bool,
    /// Its correlated subqueries: run for each row before `WHERE`, their values put after the
    /// row's columns (where the plan's expressions read them).
    correlated: Vec<Subquery>,
}

#[derive(Clone)]
enum Conflict {
    Error,
    Nothing,
    Update(Vec<(usize, Expr)>, Option<Expr>),
}

#[derive(Clone)]
struct InsertPlan {
    table: String,
    /// Each row's values, one expression per column of the table. With `source`, one row
    /// whose expressions read a row of the source.
    rows: Vec<Vec<Expr>>,
    /// `INSERT ... SELECT`: the table of the statement's own that holds the query's rows
    /// (a [`SubqueryKind::Relation`]); a row is inserted for each of them.
    source: Option<String>,
    conflict: Conflict,
    /// Which unique indexes `ON CONFLICT` is about (its arbiters).
    arbiter: Arbiter,
    returning: Vec<(String, Expr)>,
}

/// The unique indexes whose conflicts `ON CONFLICT` handles (PostgreSQL's arbiter indexes);
/// a conflict on any other is 23505.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arbiter {
    /// Every one (`ON CONFLICT DO NOTHING` without a target), or none (no `ON CONFLICT`).
    All,
    /// The primary key.
    PrimaryKey,
    /// The unique index at this position of the table's `indexes`.
    Index(usize),
}

impl Arbiter {
    /// Whether conflicts on the unique index at `index` (none: the primary key) are handled.
    fn covers(self, index: Option<usize>) -> bool {
        match (self, index) {
            (Arbiter::All, _) => true,
            (Arbiter::PrimaryKey, None) => true,
            (Arbiter::Index(arbiter), Some(index)) => arbiter == index,
            _ => false,
        }
    }
}

#[derive(Clone)]
struct UpdatePlan {
    table: String,
    /// `UPDATE ... FROM`'s tables, joined to the target's rows (which come first in a row).
    joins: Vec<JoinPlan>,
    assignments: Vec<(usize, Expr)>,
    filter: Option<Expr>,
    returning: Vec<(String, Expr)>,
    /// Correlated subqueries, as [`SelectPlan::correlated`].
    correlated: Vec<Subquery>,
}

#[derive(Clone)]
struct DeletePlan {
    table: String,
    /// `DELETE ... USING`'s tables, joined to the target's rows (which come first in a row).
    joins: Vec<JoinPlan>,
    filter: Option<Expr>,
    returning: Vec<(String, Expr)>,
    /// Correlated subqueries, as [`SelectPlan::correlated`].
    correlated: Vec<Subquery>,
}

/// Names in scope while analysing an expression.
struct Scope<'a> {
    table: Option<&'a TableDef>,
    alias: Option<String>,
    /// The tables joined to `table` (`FROM a JOIN b ON ...`, `FROM a, b`), in order: a joined
    /// row holds `table`'s columns, then each of theirs.
    joined: Vec<Joined<'a>>,
    /// How many of the first tables are out of reach: while a later `FROM` item's join
    /// conditions are read, the items before it (PostgreSQL: "cannot be referenced from this
    /// part of the query").
    hidden: usize,
    /// The statement this one is a subquery of: a name it does not have is looked for there
    /// (a correlated subquery).
    outer: Option<Rc<OuterScope>>,
    excluded: bool,
    /// An `INSERT`'s `RETURNING`: the system column `xmax` is in reach, as a column after
    /// the table's (0 for a row inserted, the transaction's id for one `ON CONFLICT DO
    /// UPDATE` changed: `RETURNING (xmax = 0) AS inserted`).
    insert_returning: bool,
    /// An `INSERT ... ON CONFLICT DO UPDATE`'s `RETURNING`: `excluded` is a table of the
    /// statement there, out of reach (42P01 with PostgreSQL's hint, not "missing").
    excluded_out_of_reach: bool,
    statement: &'a GeneralStatement,
}

/// What a subquery sees of the statement it stands in ([`Scope::outer`]): its tables and the
/// columns its `FROM` items offer by name, as [`Scope::sources`] and [`Scope::items`] give them.
struct OuterScope {
    sources: Vec<(TableDef, String, usize)>,
    items: Vec<Vec<(String, Expr)>>,
}

/// A joined row: the key of its row in each table (None where an outer join put NULLs),
/// and its values.
type JoinedRow = (Vec<Option<Value>>, Vec<Value>);

/// What a `USING` or `NATURAL` join makes: the merged columns by name, and the condition.
type Using = (Vec<(String, Expr)>, Option<Expr>);

/// A table joined into a [`Scope`].
struct Joined<'a> {
    def: &'a TableDef,
    alias: Option<String>,
    /// The columns its `USING` (or `NATURAL`) merged with the tables before it: an
    /// unqualified name reads the merged column, and `*` lists it first.
    merged: Vec<(String, Expr)>,
    /// The first table of a later `FROM` item: it merges nothing with the tables before.
    starts_item: bool,
}

/// What a `READ ONLY` transaction may not run in `plan`, as PostgreSQL names it in 25006
/// (`INSERT`, `SELECT FOR UPDATE`, `CREATE TABLE`, ...); None when it only reads.
fn writes(plan: &Plan) -> Option<&'static str> {
    // Named by the first locking clause as written (PostgreSQL's first row mark).
    let locking = |select: &SelectPlan| match select.lock {
        Some((LockMode::Update, _)) => Some("SELECT FOR UPDATE"),
        Some((LockMode::NoKeyUpdate, _)) => Some("SELECT FOR NO KEY UPDATE"),
        Some((LockMode::Share, _)) => Some("SELECT FOR SHARE"),
        Some((LockMode::KeyShare, _)) => Some("SELECT FOR KEY SHARE"),
        None => None,
    };
    match plan {
        Plan::Insert(_) => Some("INSERT"),
        Plan::Update(_) => Some("UPDATE"),
        Plan::Delete(_) => Some("DELETE"),
        Plan::CreateTable(..) => Some("CREATE TABLE"),
        Plan::DropTable(..) => Some("DROP TABLE"),
        Plan::CreateSequence(..) => Some("CREATE SEQUENCE"),
        Plan::DropSequence(..) => Some("DROP SEQUENCE"),
        Plan::Truncate(..) => Some("TRUNCATE TABLE"),
        Plan::CreateIndex(..) => Some("CREATE INDEX"),
        Plan::DropIndex(..) => Some("DROP INDEX"),
        Plan::Select(select) => locking(select).or_else(|| {
            select
                .correlated
                .iter()
                .find_map(|subquery| writes(&subquery.plan))
        }),
        // A query with a `WITH` query that changes data is named as the query ("cannot
        // execute SELECT"), as PostgreSQL names it.
        Plan::WithSubqueries(subqueries, inner) => writes(inner).or_else(|| {
            subqueries
                .iter()
                .find_map(|subquery| match subquery.plan.as_ref() {
                    Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) => Some("SELECT"),
                    other => writes(other),
                })
        }),
        _ => None,
    }
}

/// Every expression of a `SELECT` plan but those of its correlated subqueries, to change in
/// place.
fn select_exprs_mut(select: &mut SelectPlan) -> Vec<&mut Expr> {
    let mut exprs: Vec<&mut Expr> = Vec::new();
    exprs.extend(select.joins.iter_mut().filter_map(|j| j.on.as_mut()));
    exprs.extend(select.items.iter_mut().map(|(_, e)| e));
    exprs.extend(select.order.iter_mut().map(|(e, _, _)| e));
    exprs.extend(select.group_by.iter_mut());
    exprs.extend(select.filter.iter_mut());
    exprs.extend(select.having.iter_mut());
    exprs.extend(select.offset.iter_mut());
    exprs.extend(select.limit.iter_mut());
    exprs
}

/// The correlated subqueries of a query or change plan, to change in place.
fn correlated_mut(plan: &mut Plan) -> &mut [Subquery] {
    match plan {
        Plan::Select(select) => &mut select.correlated,
        Plan::Update(update) => &mut update.correlated,
        Plan::Delete(delete) => &mut delete.correlated,
        _ => &mut [],
    }
}

/// Puts the results of the statement's uncorrelated subqueries in place in `plan` and in its
/// correlated subqueries, however deep.
fn replace_subqueries_in(plan: &mut Plan, results: &[Expr]) {
    for expr in plan_exprs_mut(plan) {
        expr.replace_subqueries(results);
    }
    for correlated in correlated_mut(plan) {
        if let SubqueryKind::In(left, _) = &mut correlated.kind {
            left.replace_subqueries(results);
        }
        replace_subqueries_in(&mut correlated.plan, results);
    }
}

/// Calls `change` on every expression of a statement's plan: its subqueries' and relations'
/// too, and the column defaults an `INSERT` took (what is put in place before it runs).
fn change_exprs_in(plan: &mut Plan, change: &mut dyn FnMut(&mut Expr)) {
    match plan {
        Plan::WithSubqueries(subqueries, inner) => {
            for subquery in subqueries {
                if let SubqueryKind::In(left, _) = &mut subquery.kind {
                    change(left);
                }
                change_exprs_in(&mut subquery.plan, change);
            }
            change_exprs_in(inner, change);
        }
        Plan::Recursive(recursive) => {
            let mut step = Plan::Select(recursive.step.clone());
            change_exprs_in(&mut step, change);
            if let Plan::Select(changed) = step {
                recursive.step = changed;
            }
        }
        _ => {
            for expr in plan_exprs_mut(plan) {
                change(expr);
            }
            for correlated in correlated_mut(plan) {
                if let SubqueryKind::In(left, _) = &mut correlated.kind {
                    change(left);
                }
                change_exprs_in(&mut correlated.plan, change);
            }
        }
    }
}

/// Puts the clock's value in the place of every clock function call of a statement's plan,
/// and the session's facts in the place of every function of the session.
fn stamp_clock_in(plan: &mut Plan, reading: &StatementReading<'_>) {
    change_exprs_in(plan, &mut |expr| expr.stamp_clock(reading));
}

/// Whether a statement's plan calls `function` (`txid_current()`, which numbers the
/// transaction before the statement runs).
fn calls_session_fn(plan: &mut Plan, function: SessionFn) -> bool {
    let mut found = false;
    change_exprs_in(plan, &mut |expr| {
        found = found || expr.contains(&|e| matches!(e, Expr::Session(f) if *f == function));
    });
    found
}

/// Whether `expr` is made of constants and parameters only (it reads no row, runs nothing).
fn reads_no_row(expr: &Expr) -> bool {
    !expr.contains(&|e| {
        !matches!(
            e,
            Expr::Const(..)
                | Expr::Param(..)
                | Expr::Cast(..)
                | Expr::Binary(..)
                | Expr::Not(_)
                | Expr::Neg(_)
                | Expr::IsNull(..)
                | Expr::Coalesce(..)
                | Expr::Call(..)
        )
    })
}

/// Whether a statement's text may call `current_setting` or `set_config` (so that others
/// skip looking for them in their plans).
fn mentions_settings_functions(text: &str) -> bool {
    let mentions = |word: &[u8]| {
        text.as_bytes()
            .windows(word.len())
            .any(|window| window.eq_ignore_ascii_case(word))
    };
    mentions(b"_setting") || mentions(b"set_config")
}

/// Whether a settings function only reads (`current_setting`).
fn function_is_stable(function: SettingFn) -> bool {
    VolatileFn::Setting(function).is_stable()
}

/// Whether a statement's plan calls `set_config` (which changes the session's settings
/// where it stands).
fn calls_set_config(plan: &mut Plan) -> bool {
    let mut found = false;
    change_exprs_in(plan, &mut |expr| {
        found = found
            || expr.contains(&|e| {
                matches!(
                    e,
                    Expr::VolatileCall(VolatileFn::Setting(SettingFn::SetConfig), _)
                )
            });
    });
    found
}

/// Puts the parameters' values in the place of the parameters of a statement's plan.
fn bind_params_in(plan: &mut Plan, values: &[Value]) {
    change_exprs_in(plan, &mut |expr| expr.bind_params(values));
}

/// The correlated subqueries of a query or change plan.
fn correlated_of(plan: &Plan) -> &[Subquery] {
    match plan {
        Plan::Select(select) => &select.correlated,
        Plan::Update(update) => &update.correlated,
        Plan::Delete(delete) => &delete.correlated,
        _ => &[],
    }
}

/// Every expression of a query or change plan, to change in place.
fn plan_exprs_mut(plan: &mut Plan) -> Vec<&mut Expr> {
    let mut exprs: Vec<&mut Expr> = Vec::new();
    match plan {
        Plan::Select(select) => exprs.extend(select_exprs_mut(select)),
        Plan::Insert(insert) => {
            exprs.extend(insert.rows.iter_mut().flatten());
            exprs.extend(insert.returning.iter_mut().map(|(_, e)| e));
            if let Conflict::Update(assignments, filter) = &mut insert.conflict {
                exprs.extend(assignments.iter_mut().map(|(_, e)| e));
                exprs.extend(filter.iter_mut());
            }
        }
        Plan::Update(update) => {
            exprs.extend(update.assignments.iter_mut().map(|(_, e)| e));
            exprs.extend(update.returning.iter_mut().map(|(_, e)| e));
            exprs.extend(update.joins.iter_mut().filter_map(|j| j.on.as_mut()));
            exprs.extend(update.filter.iter_mut());
        }
        Plan::Delete(delete) => {
            exprs.extend(delete.returning.iter_mut().map(|(_, e)| e));
            exprs.extend(delete.joins.iter_mut().filter_map(|j| j.on.as_mut()));
            exprs.extend(delete.filter.iter_mut());
        }
        _ => {}
    }
    exprs
}

/// The width of a row of `def` joined with `joins`: where correlated subqueries' values start.
fn width_of(def: &TableDef, joins: &[JoinPlan]) -> usize {
    joins
        .last()
        .map_or(def.columns.len(), |j| j.left_width + j.width)
}

/// Whether `expr` reads a correlated subquery's value (a row position past `width`).
fn reads_correlated(expr: &Expr, width: usize) -> bool {
    expr.contains(&|part| matches!(part, Expr::Column(i, _) if *i >= width))
}

/// Whether a join condition reads a correlated subquery's value (past `width`).
fn correlated_in(joins: &[JoinPlan], width: usize, correlated: &[Subquery]) -> bool {
    !correlated.is_empty()
        && joins
            .iter()
            .filter_map(|j| j.on.as_ref())
            .any(|e| reads_correlated(e, width))
}

/// 0A000 for a correlated subquery where rows are grouped: they run before grouping.
fn correlated_in_groups() -> PgError {
    unsupported(
        "a correlated subquery outside the WHERE clause of a query with aggregates, GROUP BY or DISTINCT",
    )
}

/// Whether a subquery's plan reads its outer statement's row ([`Expr::Outer`]) anywhere but
/// in its own correlated subqueries (which read its rows).
fn reads_outer(select: &SelectPlan) -> bool {
    select
        .items
        .iter()
        .map(|(_, e)| e)
        .chain(select_clauses(select))
        .chain(select.correlated.iter().filter_map(|c| match &c.kind {
            SubqueryKind::In(left, _) => Some(left.as_ref()),
            _ => None,
        }))
        .any(Expr::has_outer)
}

/// What a subquery's result rows make in its statement: a scalar's one value (NULL for no
/// row, 21000 for more), `EXISTS`'s truth, or `IN`'s test (`left = v1 OR left = v2 ...`, with
/// the results of the subqueries before it, `results`, in place in `left`).
fn subquery_result(
    kind: &SubqueryKind,
    rows: Vec<Vec<Value>>,
    results: &[Expr],
) -> Result<Expr, PgError> {
    Ok(match kind {
        SubqueryKind::Scalar(ty) => match rows.as_slice() {
            [] => Expr::Const(Value::Null, *ty),
            [row] => Expr::Const(row.first().cloned().unwrap_or(Value::Null), *ty),
            _ => {
                return Err(PgError::error(
                    "21000",
                    "more than one row returned by a subquery used as an expression",
                ))
            }
        },
        SubqueryKind::Exists => Expr::Const(Value::Bool(!rows.is_empty()), SqlType::Bool),
        // Read as a table, never as a value.
        SubqueryKind::Relation { .. } => no_value(),
        SubqueryKind::In(left, ty) => {
            let mut left = (**left).clone();
            left.replace_subqueries(results);
            let tests: Vec<Expr> = rows
                .into_iter()
                .map(|row| {
                    let value = row.into_iter().next().unwrap_or(Value::Null);
                    Expr::binary_node(BinOp::Eq, left.clone(), Expr::Const(value, *ty))
                })
                .collect();
            balanced(BinOp::Or, tests).unwrap_or(Expr::Const(Value::Bool(false), SqlType::Bool))
        }
    })
}

/// What stands in a statement's list of subquery results for one that gives no value (a
/// relation, read as a table; a subquery that does not run).
fn no_value() -> Expr {
    Expr::Const(Value::Null, SqlType::Unknown)
}

/// The command a part of a statement that changes data runs, None for a query.
fn command_of(part: &Plan) -> Option<&'static str> {
    match part {
        Plan::Insert(_) => Some("INSERT"),
        Plan::Update(_) => Some("UPDATE"),
        Plan::Delete(_) => Some("DELETE"),
        _ => None,
    }
}

/// A statement that has to wait for a lock: it waits and runs again from the start, unless a
/// part of it already changed rows (`changed` names its command). PostgreSQL would
/// wait holding those changes; the stand-in runs a waiting statement again from the start,
/// which would make them twice, so that is 0A000 (the transaction's changes are rolled back
/// with it, as after any error).
fn waiting_after(changed: Option<&str>, waiting: Outcome) -> Result<Outcome, PgError> {
    match changed {
        None => Ok(waiting),
        Some(command) => Err(unsupported(&format!(
            "a statement with a WITH query that changes data waiting for a lock after its {command} changed rows (the stand-in runs a waiting statement again from the start)"
        ))),
    }
}

/// The tables of the catalogue a query or change reads or changes: its own, its joins',
/// and those of its correlated subqueries (however deep). The statement's own relations
/// are left out.
fn tables_of(plan: &Plan, out: &mut Vec<String>) {
    let mut add = |table: &str| {
        if !is_derived_table(table) && !out.iter().any(|t| t == table) {
            out.push(table.to_string());
        }
    };
    match plan {
        Plan::Select(select) => {
            select.table.iter().for_each(|t| add(t));
            select.joins.iter().for_each(|j| add(&j.table));
        }
        // A plain `INSERT` reads nothing of its table (a row another part inserted is found
        // by its key there too: 23505); `ON CONFLICT` reads it.
        Plan::Insert(insert) if matches!(insert.conflict, Conflict::Error) => {}
        Plan::Insert(insert) => add(&insert.table),
        Plan::Recursive(recursive) => {
            tables_of(&Plan::Select(recursive.step.clone()), out);
            return;
        }
        Plan::Update(update) => {
            add(&update.table);
            update.joins.iter().for_each(|j| add(&j.table));
        }
        Plan::Delete(delete) => {
            add(&delete.table);
            delete.joins.iter().for_each(|j| add(&j.table));
        }
        _ => {}
    }
    for correlated in correlated_of(plan) {
        tables_of(&correlated.plan, out);
    }
}

/// 0A000 when a table that a `WITH` query (or the statement) changes is read or changed by
/// a part of the statement that runs after it (a later subquery, the statement itself, a
/// `WITH` query that changes data and runs after the statement). PostgreSQL runs every part
/// on the statement's one snapshot, so that part would not see the change; here the parts run
/// one after another and it would. Parts before it see the table as PostgreSQL does.
fn check_data_changing_relations(subqueries: &[Subquery], plan: &Plan) -> Result<(), PgError> {
    // The parts in the order they run: the subqueries, the statement, then the `WITH`
    // queries that change data and that nothing reads.
    let order: Vec<&Plan> = (subqueries.iter())
        .filter(|s| !runs_after_statement(s))
        .map(|s| s.plan.as_ref())
        .chain(std::iter::once(plan))
        .chain(
            (subqueries.iter())
                .filter(|s| runs_after_statement(s))
                .map(|s| s.plan.as_ref()),
        )
        .collect();
    for (index, part) in order.iter().enumerate() {
        let changed = match part {
            Plan::Insert(InsertPlan { table, .. })
            | Plan::Update(UpdatePlan { table, .. })
            | Plan::Delete(DeletePlan { table, .. })
                if index + 1 < order.len() =>
            {
                table
            }
            _ => continue,
        };
        let mut later = Vec::new();
        for after in &order[index + 1..] {
            tables_of(after, &mut later);
        }
        if later.contains(changed) {
            return Err(unsupported(&format!(
                "a WITH query that changes \"{changed}\" in a statement that reads or changes it after that (PostgreSQL reads it there as it was before the statement)"
            )));
        }
    }
    Ok(())
}

/// Which of a statement's subqueries do not run: a `WITH` query nothing reads, and the
/// subqueries inside it (PostgreSQL drops it before planning).
fn skipped_subqueries(subqueries: &[Subquery]) -> Vec<bool> {
    let mut skipped = vec![false; subqueries.len()];
    for (index, subquery) in subqueries.iter().enumerate() {
        if let SubqueryKind::Relation {
            used: false, first, ..
        } = subquery.kind
        {
            if !changes_data(subquery) {
                skipped[first..=index].fill(true);
            }
        }
    }
    skipped
}

/// Whether a subquery is a `WITH` query that changes data (`INSERT`, `UPDATE`, `DELETE`).
fn changes_data(subquery: &Subquery) -> bool {
    command_of(&subquery.plan).is_some()
}

/// Whether a subquery runs after its statement: a `WITH` query that changes data and that
/// nothing reads (PostgreSQL runs those once the statement is done, and not at all if it
/// failed).
fn runs_after_statement(subquery: &Subquery) -> bool {
    changes_data(subquery) && matches!(subquery.kind, SubqueryKind::Relation { used: false, .. })
}

/// Folds the plan's constants as PostgreSQL's planner does ([`Expr::fold`]), in the order it
/// works through a query: the target list (a `SELECT`'s items, `ORDER BY` and `GROUP BY`; an
/// `UPDATE`'s assignments; an `INSERT`'s single row), `RETURNING`, `WHERE`, `HAVING`,
/// `OFFSET`, `LIMIT`, `ON CONFLICT`, then a multi-row `VALUES` list. The first error is the
/// statement's, before any row is read.
fn fold_constants(plan: &Plan) -> Result<(), PgError> {
    fn named(list: &[(String, Expr)]) -> impl Iterator<Item = &Expr> {
        list.iter().map(|(_, e)| e)
    }
    if let Plan::WithSubqueries(subqueries, inner) = plan {
        for (subquery, skip) in subqueries.iter().zip(skipped_subqueries(subqueries)) {
            if skip {
                continue;
            }
            fold_constants(&subquery.plan)?;
            if let SubqueryKind::In(left, _) = &subquery.kind {
                left.fold()?;
            }
        }
        return fold_constants(inner);
    }
    let mut exprs: Vec<&Expr> = Vec::new();
    match plan {
        Plan::Select(select) => {
            exprs.extend(select.joins.iter().filter_map(|j| j.on.as_ref()));
            exprs.extend(named(&select.items));
            exprs.extend(select.order.iter().map(|(e, _, _)| e));
            exprs.extend(&select.group_by);
            exprs.extend(&select.filter);
            exprs.extend(&select.having);
            exprs.extend(&select.offset);
            exprs.extend(&select.limit);
        }
        Plan::Insert(insert) => {
            let single = insert.rows.len() == 1;
            if single {
                exprs.extend(insert.rows.iter().flatten());
            }
            exprs.extend(named(&insert.returning));
            if let Conflict::Update(assignments, filter) = &insert.conflict {
                exprs.extend(assignments.iter().map(|(_, e)| e));
                exprs.extend(filter);
            }
            if !single {
                exprs.extend(insert.rows.iter().flatten());
            }
        }
        Plan::Update(update) => {
            exprs.extend(update.assignments.iter().map(|(_, e)| e));
            exprs.extend(named(&update.returning));
            exprs.extend(update.joins.iter().filter_map(|j| j.on.as_ref()));
            exprs.extend(&update.filter);
        }
        Plan::Delete(delete) => {
            exprs.extend(named(&delete.returning));
            exprs.extend(delete.joins.iter().filter_map(|j| j.on.as_ref()));
            exprs.extend(&delete.filter);
        }
        _ => {}
    }
    check_advisory_placement(plan)?;
    check_volatile_call_placement(plan)?;
    for expr in exprs {
        expr.fold()?;
    }
    check_correlated_placement(plan)
}

/// The placement rules of [`check_advisory_placement`] and [`check_volatile_call_placement`]
/// in correlated subqueries, however deep. (Their constants are not folded with the
/// statement: PostgreSQL drops an `EXISTS` subquery's select list unevaluated, and the others
/// raise their errors when they run.)
fn check_correlated_placement(plan: &Plan) -> Result<(), PgError> {
    for subquery in correlated_of(plan) {
        check_advisory_placement(&subquery.plan)?;
        check_volatile_call_placement(&subquery.plan)?;
        check_correlated_placement(&subquery.plan)?;
    }
    Ok(())
}

/// A `SELECT` without `FROM`, `WHERE`, grouping, ordering, `LIMIT`, `OFFSET`, `DISTINCT` or a
/// locking clause: where calls that change the server may run in its select list.
fn is_plain_select(select: &SelectPlan) -> bool {
    select.table.is_none()
        && select.filter.is_none()
        && select.order.is_empty()
        && select.group_by.is_empty()
        && select.having.is_none()
        && select.limit.is_none()
        && select.offset.is_none()
        && select.lock.is_none()
        && !select.distinct
}

/// Every expression of a `SELECT` but its select list.
fn select_clauses(select: &SelectPlan) -> impl Iterator<Item = &Expr> {
    select
        .joins
        .iter()
        .filter_map(|j| j.on.as_ref())
        .chain(&select.filter)
        .chain(&select.having)
        .chain(&select.limit)
        .chain(&select.offset)
        .chain(&select.group_by)
        .chain(select.order.iter().map(|(e, _, _)| e))
}

/// The `RETURNING` list, the join conditions of `FROM`/`USING` and the `WHERE` of an
/// `UPDATE` or `DELETE`.
fn returning_and_filter<'a>(
    returning: &'a [(String, Expr)],
    joins: &'a [JoinPlan],
    filter: &'a Option<Expr>,
) -> impl Iterator<Item = &'a Expr> {
    returning
        .iter()
        .map(|(_, e)| e)
        .chain(joins.iter().filter_map(|j| j.on.as_ref()))
        .chain(filter)
}

/// An `INSERT`'s `ON CONFLICT DO UPDATE` assignments and `WHERE`.
fn conflict_exprs(insert: &InsertPlan) -> Vec<&Expr> {
    match &insert.conflict {
        Conflict::Update(assignments, filter) => {
            assignments.iter().map(|(_, e)| e).chain(filter).collect()
        }
        _ => Vec::new(),
    }
}

/// Volatile functions (sequence functions, `random`, `setseed`, `gen_random_uuid`,
/// `pg_sleep`, `set_config`; `current_setting` runs before the statement, anywhere) run in the
/// select list of a plain `SELECT` ([`is_plain_select`]), in the `VALUES` of an `INSERT` (a
/// column's `DEFAULT nextval(..)` or `DEFAULT gen_random_uuid()` among them) and in the
/// values an `UPDATE` sets: where lock and ledger users call them. Anywhere else they are
/// 0A000.
fn check_volatile_call_placement(plan: &Plan) -> Result<(), PgError> {
    let misplaced = |what: &str| {
        unsupported(&format!(
            "a volatile function in {what}: the stand-in runs nextval, currval, setval, \
             lastval, random, setseed, gen_random_uuid, pg_sleep and set_config only in the \
             select list of a SELECT without FROM, WHERE, GROUP BY, ORDER BY, LIMIT, DISTINCT \
             or FOR UPDATE, in the VALUES of an INSERT and in the values an UPDATE sets"
        ))
    };
    let calls = Expr::has_volatile_call;
    match plan {
        Plan::Select(select) => {
            if !is_plain_select(select) && select.items.iter().any(|(_, e)| calls(e)) {
                return Err(misplaced("a SELECT list"));
            }
            if select_clauses(select).any(calls) {
                return Err(misplaced("a clause of SELECT"));
            }
        }
        Plan::Insert(insert) => {
            if insert.returning.iter().any(|(_, e)| calls(e)) {
                return Err(misplaced("RETURNING"));
            }
            if conflict_exprs(insert).into_iter().any(calls) {
                return Err(misplaced("ON CONFLICT"));
            }
        }
        Plan::Update(update)
            if returning_and_filter(&update.returning, &update.joins, &update.filter)
                .any(calls) =>
        {
            return Err(misplaced("the WHERE or RETURNING of an UPDATE"));
        }
        Plan::Delete(delete)
            if returning_and_filter(&delete.returning, &delete.joins, &delete.filter)
                .any(calls) =>
        {
            return Err(misplaced("a DELETE"));
        }
        _ => {}
    }
    Ok(())
}

/// Advisory lock functions run as whole items of a `SELECT` list without `FROM`, `WHERE`,
/// grouping, ordering, `LIMIT`, `DISTINCT` or a locking clause (how lock users call them);
/// anywhere else they are 0A000.
fn check_advisory_placement(plan: &Plan) -> Result<(), PgError> {
    let misplaced = |what: &str| {
        unsupported(&format!(
            "{what}: the stand-in runs advisory lock functions only as items of a SELECT \
             list without FROM, WHERE, GROUP BY, ORDER BY, LIMIT, DISTINCT or FOR UPDATE"
        ))
    };
    let calls = Expr::has_advisory;
    let nested = |expr: &Expr| expr.parts().into_iter().any(calls);
    match plan {
        Plan::Select(select) => {
            let plain = is_plain_select(select);
            for (name, expr) in &select.items {
                if nested(expr) || (!plain && calls(expr)) {
                    return Err(misplaced(name));
                }
            }
            if select_clauses(select).any(calls) {
                return Err(misplaced("a clause of SELECT"));
            }
        }
        Plan::Insert(insert) => {
            let mut all = insert
                .rows
                .iter()
                .flatten()
                .chain(insert.returning.iter().map(|(_, e)| e))
                .chain(conflict_exprs(insert));
            if all.any(calls) {
                return Err(misplaced("INSERT"));
            }
        }
        Plan::Update(update) => {
            let mut all = update
                .assignments
                .iter()
                .map(|(_, e)| e)
                .chain(returning_and_filter(
                    &update.returning,
                    &update.joins,
                    &update.filter,
                ));
            if all.any(calls) {
                return Err(misplaced("UPDATE"));
            }
        }
        Plan::Delete(delete)
            if returning_and_filter(&delete.returning, &delete.joins, &delete.filter)
                .any(calls) =>
        {
            return Err(misplaced("DELETE"));
        }
        _ => {}
    }
    Ok(())
}

/// What a Describe reports of a planned statement: its parameter types (an untyped one as
/// `text`) and result columns.
fn description(plan: &Plan, params: Vec<SqlType>) -> Description {
    let changes_data = matches!(plan, Plan::WithSubqueries(subqueries, _)
        if subqueries.iter().any(changes_data));
    let plan = match plan {
        Plan::WithSubqueries(_, inner) => inner.as_ref(),
        other => other,
    };
    let columns = match plan {
        Plan::Select(select) => columns_of(&select.items),
        Plan::Insert(InsertPlan { returning, .. })
        | Plan::Update(UpdatePlan { returning, .. })
        | Plan::Delete(DeletePlan { returning, .. }) => columns_of(returning),
        Plan::Show(name) => vec![(settings::column_name(name), SqlType::Text)],
        _ => Vec::new(),
    };
    let params = params
        .into_iter()
        .map(|ty| {
            if ty == SqlType::Unknown {
                SqlType::Text
            } else {
                ty
            }
        })
        .collect();
    Description {
        params,
        columns,
        changes_data,
    }
}

/// PostgreSQL's 42883 for a function no overload of which takes these argument types.
fn undefined_function(name: &str, types: &[SqlType], position: Option<u32>) -> PgError {
    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
    PgError::error(
        sqlstate::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", names.join(", ")),
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add \
         explicit type casts.",
    )
    .at(position)
}

/// `-a ^ b * c` (or with `+`) as PostgreSQL reads it, `((-a) ^ b) * c`: its unary minus binds
/// more tightly than any binary operator, where the SQL parser lets it take a chain of `^`,
/// `*`, `/` and `%` (`-((a ^ b) * c)`). The sign goes to the chain's leftmost operand, which
/// changes the value where a `^` is in the chain (`-2 ^ 2` is 4) and the type where the
/// operand is a number only its negation fits (`-9223372036854775808 * 1` is a `bigint`);
/// `None` when `operand` is no such chain (a parenthesised one is `Nested` and stays).
fn unary_into_power(op: &UnaryOperator, operand: &ast::Expr) -> Option<ast::Expr> {
    if !heads_power_chain(op, operand) {
        return None;
    }
    // Down the chain's left spine without recursion (a chain may be long).
    let mut links = Vec::new();
    let mut leftmost = operand;
    while let ast::Expr::BinaryOp { left, op, right } = leftmost {
        if !binds_like_power(op) {
            break;
        }
        links.push((op, right));
        leftmost = left;
    }
    let mut built = ast::Expr::UnaryOp {
        op: *op,
        expr: Box::new(leftmost.clone()),
    };
    for (op, right) in links.into_iter().rev() {
        built = ast::Expr::BinaryOp {
            left: Box::new(built),
            op: op.clone(),
            right: right.clone(),
        };
    }
    Some(built)
}

/// 0A000 for a power of `numeric` (`^`, `power` or `pow`): the stand-in raises `double
/// precision` only.
fn numeric_power_refused(what: &str) -> PgError {
    unsupported(&format!(
        "{what} (the stand-in raises double precision only)"
    ))
}

/// Whether a unary `op` before `operand` is a sign the SQL parser let take a chain of `^`,
/// `*`, `/` and `%` (what `unary_into_power` moves).
fn heads_power_chain(op: &UnaryOperator, operand: &ast::Expr) -> bool {
    matches!(op, UnaryOperator::Minus | UnaryOperator::Plus)
        && matches!(operand, ast::Expr::BinaryOp { op, .. } if binds_like_power(op))
}

/// `^`, `*`, `/` and `%`: the operators the SQL parser binds more tightly than a sign.
fn binds_like_power(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::PGExp
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Modulo
    )
}

/// Whether `ty` is `smallint`, `integer` or `bigint`.
fn integer_type(ty: SqlType) -> bool {
    matches!(ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
}

/// 42725 `operator is not unique: <operands>` with PostgreSQL's hint: untyped operands fit
/// several of the operator's signatures.
fn operator_not_unique(operands: &str, position: Option<u32>) -> PgError {
    PgError::error("42725", format!("operator is not unique: {operands}"))
        .with_hint(
            "Could not choose a best candidate operator. You might need to add explicit type casts.",
        )
        .at(position)
}

/// 42725 `function <signature> is not unique` with PostgreSQL's hint: an argument of
/// unknown type fits several of the function's signatures.
fn ambiguous_function(signature: &str, position: Option<u32>) -> PgError {
    PgError::error(
        "42725",
        format!("function {signature} is not unique"),
    )
    .with_hint(
        "Could not choose a best candidate function. You might need to add explicit type casts.",
    )
    .at(position)
}

/// 42883 `operator does not exist: <left> <symbol> <right>` with PostgreSQL's hint.
/// 42883 `operator does not exist: <symbol> <type>` for a prefix operator, with
/// PostgreSQL's hint.
fn undefined_prefix_operator(symbol: &str, operand: SqlType, position: Option<u32>) -> PgError {
    PgError::error(
        sqlstate::UNDEFINED_FUNCTION,
        format!("operator does not exist: {symbol} {}", operand.name()),
    )
    .with_hint(
        "No operator matches the given name and argument type. You might need to add an \
         explicit type cast.",
    )
    .at(position)
}

fn undefined_operator(
    left: SqlType,
    symbol: &str,
    right: SqlType,
    position: Option<u32>,
) -> PgError {
    PgError::error(
        sqlstate::UNDEFINED_FUNCTION,
        format!(
            "operator does not exist: {} {symbol} {}",
            left.name(),
            right.name()
        ),
    )
    .with_hint(
        "No operator matches the given name and argument types. You might need to add \
         explicit type casts.",
    )
    .at(position)
}

/// The argument types each function of `functions.rs` takes, with the type it answers, in
/// PostgreSQL's order of preference; empty for the functions analysed elsewhere.
fn signatures(function: ScalarFn) -> &'static [(&'static [SqlType], SqlType)] {
    use SqlType::{Float8, Int2, Int4, Int8, Interval, Numeric, Text};
    match function {
        // An unknown literal takes the numeric category's preferred type.
        ScalarFn::Abs => &[
            (&[Float8], Float8),
            (&[Int2], Int2),
            (&[Int4], Int4),
            (&[Int8], Int8),
            (&[Numeric], Numeric),
        ],
        ScalarFn::Upper | ScalarFn::Lower => &[(&[Text], Text)],
        ScalarFn::Length => &[(&[Text], Int4)],
        ScalarFn::Round | ScalarFn::Trunc => &[
            (&[Float8], Float8),
            (&[Numeric], Numeric),
            (&[Numeric, Int4], Numeric),
        ],
        ScalarFn::Floor | ScalarFn::Ceil | ScalarFn::Sign => {
            &[(&[Float8], Float8), (&[Numeric], Numeric)]
        }
        // `power(numeric, numeric)` is not run here: `signature_call` refuses it.
        ScalarFn::Power => &[(&[Float8, Float8], Float8)],
        // Called only by `make_interval_call`, which fills in its defaults.
        ScalarFn::MakeInterval => &[(&[Int4, Int4, Int4, Int4, Int4, Int4, Float8], Interval)],
        ScalarFn::Replace => &[(&[Text, Text, Text], Text)],
        ScalarFn::Strpos => &[(&[Text, Text], Int4)],
        ScalarFn::Btrim | ScalarFn::Ltrim | ScalarFn::Rtrim => {
            &[(&[Text], Text), (&[Text, Text], Text)]
        }
        ScalarFn::Lpad | ScalarFn::Rpad => &[(&[Text, Int4], Text), (&[Text, Int4, Text], Text)],
        ScalarFn::Left | ScalarFn::Right | ScalarFn::Repeat => &[(&[Text, Int4], Text)],
        ScalarFn::Reverse => &[(&[Text], Text)],
        ScalarFn::OctetLength | ScalarFn::HashText => &[(&[Text], Int4)],
        ScalarFn::HashTextExtended => &[(&[Text, Int8], Int8)],
        ScalarFn::Md5 => &[(&[Text], Text)],
        ScalarFn::Div => &[(&[Numeric, Numeric], Numeric)],
        ScalarFn::SplitPart => &[(&[Text, Text, Int4], Text)],
        ScalarFn::QuoteIdent => &[(&[Text], Text)],
        ScalarFn::LikeEscape => &[(&[Text, Text], Text)],
        ScalarFn::ToTimestamp => &[(&[Float8], SqlType::TimestampTz)],
        _ => &[],
    }
}

/// The next value of column `column`'s sequence (recorded in `sequences`), or PostgreSQL's
/// 2200H once it would pass the column type's largest value.
fn next_in_sequence(
    sequences: &mut BTreeMap<usize, i64>,
    column: usize,
    def: &TableDef,
) -> Result<i64, PgError> {
    let max = column_sequence_max(def, column);
    let next = match sequences.get(&column) {
        None => 1,
        Some(&last) if last < max => last + 1,
        Some(_) => {
            return Err(PgError::error(
                "2200H",
                format!(
                    "nextval: reached maximum value of sequence \"{}\" ({max})",
                    sequence_name(def, column)
                ),
            ))
        }
    };
    sequences.insert(column, next);
    Ok(next)
}

/// The name PostgreSQL gives a `serial` or identity column's sequence: `table_column_seq`,
/// the longer of the two names shortened first until it fits in 63 bytes (`makeObjectName`,
/// at character boundaries).
fn sequence_name(def: &TableDef, column: usize) -> String {
    index::object_name(&def.name, &def.columns[column].name, "seq")
}

/// The `serial` or identity column of `tables` whose sequence is called `name`: its table and
/// column.
fn column_sequence(tables: &BTreeMap<Arc<str>, Table>, name: &str) -> Option<(Arc<str>, usize)> {
    tables.iter().find_map(|(table_name, table)| {
        let def = &table.def;
        (0..def.columns.len())
            .find(|&column| {
                matches!(def.columns[column].default, Some(Expr::Sequence { .. }))
                    && sequence_name(def, column) == name
            })
            .map(|column| (table_name.clone(), column))
    })
}

/// Which kind of sequence a sequence function's name found.
enum SequenceTarget {
    /// One made by `CREATE SEQUENCE` (in `Postgres::sequences`).
    Created,
    /// A `serial` or identity column's: its table and column, whose counter is the table's.
    Column(Arc<str>, usize),
}

/// The largest value a `serial` or identity column's sequence gives: its column type's.
fn column_sequence_max(def: &TableDef, column: usize) -> i64 {
    match def.columns[column].ty {
        SqlType::Int2 => i64::from(i16::MAX),
        SqlType::Int4 => i64::from(i32::MAX),
        _ => i64::MAX,
    }
}

/// `DEFAULT` written as a value (in `VALUES` or `SET col = DEFAULT`): the parser reads it as
/// a name, which PostgreSQL reserves.
fn is_default_keyword(node: &ast::Expr) -> bool {
    matches!(node, ast::Expr::Identifier(ident)
        if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("default"))
}

/// PostgreSQL's 428C9 for a value given to a `GENERATED ALWAYS` identity column.
fn generated_always(column: &str, message: String) -> PgError {
    PgError::error("428C9", message).with_detail(format!(
        "Column \"{column}\" is an identity column defined as GENERATED ALWAYS."
    ))
}

/// The rows of `generate_series(start, stop [, step])`: none when an argument is NULL;
/// 22023 for a step of zero; 54000 past [`SERIES_ROW_LIMIT`] rows.
fn series_rows(plan: &SeriesPlan, params: &[Value]) -> Result<SqlResult, PgError> {
    let cx = EvalContext {
        row: &[],
        excluded: None,
        params,
    };
    let start = plan.start.eval(&cx)?;
    let stop = plan.stop.eval(&cx)?;
    let step = match &plan.step {
        Some(step) => step.eval(&cx)?,
        None => Value::Int(1),
    };
    let mut rows = Vec::new();
    if let (Value::Int(start), Value::Int(stop), Value::Int(step)) = (start, stop, step) {
        if step == 0 {
            return Err(PgError::error("22023", "step size cannot equal zero"));
        }
        // Counted in 128 bits: no bound or step of a bigint overflows it.
        let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
        let count = if (step > 0 && start <= stop) || (step < 0 && start >= stop) {
            (stop - start) / step + 1
        } else {
            0
        };
        if count > i128::from(SERIES_ROW_LIMIT) {
            return Err(PgError::error(
                "54000",
                format!(
                    "generate_series would make {count} rows; the stand-in makes at most \
                     {SERIES_ROW_LIMIT} (it makes them all before the statement reads them)"
                ),
            ));
        }
        let mut value = start;
        for _ in 0..count {
            rows.push(vec![Value::Int(value as i64)]);
            value += step;
        }
    }
    Ok(SqlResult {
        columns: Vec::new(),
        tag: format!("SELECT {}", rows.len()),
        rows_affected: rows.len() as u64,
        rows,
    })
}

/// The values of `exprs`, in order, on `row` (the first error stops it).
fn eval_each(exprs: &[Expr], row: &[Value], params: &[Value]) -> Result<Vec<Value>, PgError> {
    let cx = EvalContext {
        row,
        excluded: None,
        params,
    };
    exprs.iter().map(|expr| expr.eval(&cx)).collect()
}

/// The rows of `unnest(array, ...)`: the arrays' elements side by side, a shorter one
/// padded with NULLs (a NULL array has no elements).
fn unnest_rows(arrays: &[Expr], params: &[Value]) -> Result<SqlResult, PgError> {
    let values = eval_each(arrays, &[], params)?;
    let count = values
        .iter()
        .map(|v| array::elements(v).len())
        .max()
        .unwrap_or(0);
    let rows: Vec<Vec<Value>> = (0..count)
        .map(|i| {
            values
                .iter()
                .map(|v| array::elements(v).get(i).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect();
    Ok(SqlResult {
        columns: Vec::new(),
        tag: format!("SELECT {}", rows.len()),
        rows_affected: rows.len() as u64,
        rows,
    })
}

/// `expr` (already of `column`'s type) assigned to `column`: its declared modifier applied as
/// PostgreSQL's assignment coercion applies it, as a function of the value, folded at planning
/// when the value is a constant or parameter (so an error in it comes at Bind). Every value an
/// `INSERT`, `UPDATE` or `ON CONFLICT` stores comes through here (and a column's default).
fn with_modifier_of(column: &ColumnDef, expr: Expr) -> Expr {
    match column.typmod {
        Some(typmod) => Expr::Call(ScalarFn::Typmod(typmod, false), vec![expr], column.ty),
        None => expr,
    }
}

/// A function's arguments when each is a plain expression (none named, no `*`).
fn plain_arguments(arguments: &[ast::FunctionArg]) -> Option<Vec<&ast::Expr>> {
    arguments
        .iter()
        .map(|arg| match arg {
            ast::FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect()
}

/// Whether PostgreSQL casts `from` to `to` implicitly (among the number types).
fn implicitly_castable(from: SqlType, to: SqlType) -> bool {
    use SqlType::{Float8, Int2, Int4, Int8, Numeric};
    matches!(
        (from, to),
        (Int2, Int4 | Int8 | Numeric | Float8)
            | (Int4, Int8 | Numeric | Float8)
            | (Int8, Numeric | Float8)
            | (Numeric, Float8)
    )
}

/// The highest parameter number a statement may use: a Bind message counts its values in 16
/// bits. (PostgreSQL takes `$N` up to 536,870,911 in a Parse and sizes its type list by it;
/// past 65,535 such a statement can never be executed.)
pub const MAX_PARAMETERS: usize = 65_535;

fn unsupported(what: &str) -> PgError {
    PgError::unsupported_statement(what)
}

fn ident_name(ident: &ast::Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

fn object_name(name: &ObjectName) -> Result<String, PgError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|part| match part {
            ast::ObjectNamePart::Identifier(ident) => Ok(ident_name(ident)),
            other => Err(unsupported(&other.to_string())),
        })
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [name] => Ok(name.clone()),
        [schema, name] if schema == "public" => Ok(name.clone()),
        _ => Err(unsupported(&name.to_string())),
    }
}

/// PostgreSQL's "Perhaps you meant" hint for a column `wanted` that no table in reach has
/// (its `updateFuzzyAttrMatchState`): the columns of all `tables` closest by edit distance,
/// at most 3 edits and half of `wanted`'s length; one or two of them at that distance are
/// named, three or more none. A `qualifier` (`w` in `w.balanse`) adds its distance to each
/// table's name, so a column of another table may still be hinted.
fn fuzzy_hint(
    wanted: &str,
    qualifier: Option<&str>,
    tables: &[(&TableDef, &str, usize)],
) -> Option<String> {
    fn distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut previous: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut current = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let cost = usize::from(ca != cb);
                current.push(
                    (previous[j] + cost)
                        .min(previous[j + 1] + 1)
                        .min(current[j] + 1),
                );
            }
            previous = current;
        }
        previous[b.len()]
    }
    const MAX_FUZZY_DISTANCE: usize = 3;
    let limit = wanted.chars().count() / 2;
    let mut best = MAX_FUZZY_DISTANCE + 1;
    let mut matches: Vec<String> = Vec::new();
    let mut dropped = false;
    for (def, shown, _) in tables {
        let penalty = qualifier.map_or(0, |q| distance(q, shown));
        if penalty > best {
            continue;
        }
        for column in &def.columns {
            let d = distance(wanted, &column.name);
            if d > limit {
                continue;
            }
            let d = d + penalty;
            let named = format!("\"{shown}.{}\"", column.name);
            if d < best {
                best = d;
                matches = vec![named];
                dropped = false;
            } else if d == best && !dropped {
                matches.push(named);
                if matches.len() > 2 {
                    matches.clear();
                    dropped = true;
                }
            }
        }
    }
    match matches.as_slice() {
        [one] => Some(format!("Perhaps you meant to reference the column {one}.")),
        [one, two] => Some(format!(
            "Perhaps you meant to reference the column {one} or the column {two}."
        )),
        _ => None,
    }
}

/// PostgreSQL's largest `varchar(n)` (`MaxAttrSize`, 10 MB).
const VARCHAR_MAX_LENGTH: u64 = 10_485_760;

/// What a declared type adds to its [`data_type`] ([`Typmod`]): a `numeric`'s precision and
/// scale, a `varchar`'s length, `smallint`'s range. A modifier the stand-in does not apply
/// (a `numeric` scale outside 0 to its precision, a length in bytes) is 0A000, never ignored.
fn type_modifier(ty: &DataType) -> Result<Option<Typmod>, PgError> {
    let refused = || unsupported(&format!("type {ty}"));
    Ok(match ty {
        DataType::Numeric(info) | DataType::Decimal(info) => match *info {
            ExactNumberInfo::None => None,
            ExactNumberInfo::Precision(precision) => Some((precision, 0)),
            ExactNumberInfo::PrecisionAndScale(precision, scale) => Some((precision, scale)),
        }
        .map(|(precision, scale)| {
            if !(1..=1000).contains(&precision) {
                return Err(PgError::error(
                    "22023",
                    format!("NUMERIC precision {precision} must be between 1 and 1000"),
                ));
            }
            if !(-1000..=1000).contains(&scale) {
                return Err(PgError::error(
                    "22023",
                    format!("NUMERIC scale {scale} must be between -1000 and 1000"),
                ));
            }
            Ok(Typmod::Numeric {
                precision: precision as u32,
                scale: scale as i32,
            })
        })
        .transpose()?,
        DataType::Varchar(length) | DataType::CharacterVarying(length) => match length {
            None => None,
            Some(CharacterLength::IntegerLength { length, unit: None }) => {
                if *length == 0 {
                    return Err(PgError::error(
                        "22023",
                        "length for type varchar must be at least 1",
                    ));
                }
                if *length > VARCHAR_MAX_LENGTH {
                    return Err(PgError::error(
                        "22023",
                        format!("length for type varchar cannot exceed {VARCHAR_MAX_LENGTH}"),
                    ));
                }
                Some(Typmod::VarChar(
                    u32::try_from(*length).map_err(|_| refused())?,
                ))
            }
            Some(_) => return Err(refused()),
        },
        _ => None,
    })
}

fn data_type(ty: &DataType) -> Result<SqlType, PgError> {
    // An integer type takes no modifier: PostgreSQL's grammar stops at the parenthesis.
    if let DataType::BigInt(Some(_))
    | DataType::Int8(Some(_))
    | DataType::Int(Some(_))
    | DataType::Integer(Some(_))
    | DataType::Int4(Some(_))
    | DataType::SmallInt(Some(_))
    | DataType::Int2(Some(_)) = ty
    {
        return Err(PgError::error(
            sqlstate::SYNTAX_ERROR,
            "syntax error at or near \"(\"",
        ));
    }
    Ok(match ty {
        DataType::BigInt(_) | DataType::Int8(_) => SqlType::Int8,
        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => SqlType::Int4,
        DataType::SmallInt(_) | DataType::Int2(_) => SqlType::Int2,
        DataType::Text
        | DataType::Varchar(_)
        | DataType::CharacterVarying(_)
        | DataType::String(_) => SqlType::Text,
        DataType::Boolean | DataType::Bool => SqlType::Bool,
        DataType::Numeric(_) | DataType::Decimal(_) => SqlType::Numeric,
        // `real` (`float4`) is refused: its values are rounded to 24 bits and written with
        // fewer digits, which a double would silently not do.
        DataType::DoublePrecision | DataType::Float8 | DataType::Double(_) => SqlType::Float8,
        DataType::Timestamp(None, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => {
            SqlType::TimestampTz
        }
        DataType::Timestamp(None, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        DataType::Interval {
            fields: None,
            precision: None,
        } => SqlType::Interval,
        DataType::Uuid => SqlType::Uuid,
        DataType::Custom(name, modifiers)
            if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("regtype") =>
        {
            SqlType::RegType
        }
        DataType::Custom(name, modifiers)
            if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("xid") =>
        {
            SqlType::Xid
        }
        DataType::Array(
            ast::ArrayElemTypeDef::SquareBracket(element, _)
            | ast::ArrayElemTypeDef::Qualified(element, _),
        ) => match data_type(element)?.array_of() {
            Some(array) => array,
            None => return Err(unsupported(&format!("type {ty}"))),
        },
        // A name PostgreSQL has no type of is the user's mistake (42704; the caller places
        // it); one it has that is not kept here is 0A000.
        DataType::Custom(name, _) if !is_known_type_name(name) => {
            return Err(PgError::error(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{}\" does not exist", qualified_type_name(name)),
            ))
        }
        other => return Err(unsupported(&format!("type {other}"))),
    })
}

/// The name of a type as PostgreSQL looks it up: the last part, folded to lower case unless
/// quoted.
fn type_name_of(name: &ast::ObjectName) -> String {
    name.0
        .last()
        .and_then(|part| part.as_ident())
        .map(ident_name)
        .unwrap_or_default()
}

/// A type's name as PostgreSQL's error shows it: every part, each folded as an identifier.
fn qualified_type_name(name: &ast::ObjectName) -> String {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|part| part.as_ident().map(ident_name).unwrap_or_default())
        .collect();
    parts.join(".")
}

/// Whether PostgreSQL has a type of this name (in `pg_catalog`; a qualified name outside it
/// is not looked at).
fn is_known_type_name(name: &ast::ObjectName) -> bool {
    let schema_ok = match name.0.len() {
        1 => true,
        2 => name.0[0]
            .as_ident()
            .is_some_and(|schema| ident_name(schema) == "pg_catalog"),
        _ => false,
    };
    !schema_ok || super::catalog_names::is_builtin_type(&type_name_of(name))
}

/// The type a parameter passed as a value (not through the protocol) is declared as: its
/// value's own (`bigint` for any integer; an array's from its first element that is not
/// NULL, `text[]` when it has none).
fn declared_type(value: &Value) -> SqlType {
    match value {
        Value::Null => SqlType::Unknown,
        Value::Int(_) => SqlType::Int8,
        Value::Text(_) => SqlType::Text,
        Value::Bool(_) => SqlType::Bool,
        Value::Numeric(_) => SqlType::Numeric,
        Value::Float(_) => SqlType::Float8,
        Value::TimestampTz(_) => SqlType::TimestampTz,
        Value::Timestamp(_) => SqlType::Timestamp,
        Value::Interval(_) => SqlType::Interval,
        Value::Uuid(_) => SqlType::Uuid,
        Value::Array(elements) => elements
            .iter()
            .find(|e| !e.is_null())
            .map_or(SqlType::Text, declared_type)
            .array_of()
            .unwrap_or(SqlType::Unknown),
    }
}

/// The type an untyped operand (a quoted literal, a parameter) of `op` takes beside one of
/// type `known`: `known`, but where PostgreSQL has no operator on two of it:
/// `timestamp + '5 minutes'` reads an interval, `interval * '2'` a double.
fn untyped_operand_type(op: BinOp, known: SqlType) -> SqlType {
    match (op, known) {
        (BinOp::Add, ts) if ts.is_timestamp() => SqlType::Interval,
        (BinOp::Mul | BinOp::Div, SqlType::Interval) => SqlType::Float8,
        // `anyarray || anyarray`: the untyped side is the array.
        (BinOp::Concat, array) if array.element().is_some() => array,
        // `text || anynonarray` and `anynonarray || text`: the untyped side is text.
        (BinOp::Concat, _) => SqlType::Text,
        _ => known,
    }
}

/// 42846 for a cast PostgreSQL has not: between a time type and a number or a boolean, or
/// between a timestamp and an interval.
fn castable(from: SqlType, to: SqlType, position: Option<u32>) -> Result<(), PgError> {
    let other = |ty: SqlType| ty.is_number() || ty == SqlType::Bool;
    // Between a boolean and a number only `integer` has a cast (`int4(boolean)`,
    // `bool(integer)`); `bigint`, `smallint`, `numeric` and `double precision` have none.
    let boolean_and_number = (from == SqlType::Bool && to.is_number() && to != SqlType::Int4)
        || (to == SqlType::Bool && from.is_number() && from != SqlType::Int4);
    let textual = |ty: SqlType| matches!(ty, SqlType::Text | SqlType::Unknown);
    if let (Some(from_element), Some(to_element)) = (from.element(), to.element()) {
        // Element by element: refused where the elements' cast is.
        return castable(from_element, to_element, position).map_err(|_| {
            PgError::error(
                "42846",
                format!("cannot cast type {} to {}", from.name(), to.name()),
            )
            .at(position)
        });
    }
    let array_and_scalar = (from.element().is_some() && to != SqlType::Text)
        || (to.element().is_some() && !textual(from));
    let refused = array_and_scalar
        || boolean_and_number
        || (from.is_time() && other(to))
        || (other(from) && to.is_time())
        || (from == SqlType::Uuid && !textual(to) && to != SqlType::Uuid)
        || (to == SqlType::Uuid && !textual(from) && from != SqlType::Uuid)
        || (from == SqlType::RegType && !textual(to) && to != SqlType::RegType && !to.is_integer())
        || (to == SqlType::RegType && !textual(from) && from != SqlType::RegType)
        || (from == SqlType::Xid && !textual(to) && to != SqlType::Xid)
        || (to == SqlType::Xid && !textual(from) && from != SqlType::Xid)
        || (from.is_timestamp() && to == SqlType::Interval)
        || (from == SqlType::Interval && to.is_timestamp());
    if refused {
        return Err(PgError::error(
            "42846",
            format!("cannot cast type {} to {}", from.name(), to.name()),
        )
        .at(position));
    }
    Ok(())
}

/// One table of a `FROM` list ([`Analyzer::entries_of_from`]).
struct FromEntry<'q> {
    def: Arc<TableDef>,
    alias: Option<String>,
    kind: JoinKind,
    constraint: &'q ast::JoinConstraint,
    /// The first table of an item of the list (none of the tables before it joins it).
    starts_item: bool,
}

/// 42712 when two tables of a statement go by the same name (their alias, else their own).
fn unique_names<'t>(
    tables: impl Iterator<Item = (&'t TableDef, Option<&'t str>)>,
) -> Result<(), PgError> {
    let mut names: Vec<&str> = Vec::new();
    for (def, alias) in tables {
        let name = alias.unwrap_or(&def.name);
        if names.contains(&name) {
            return Err(PgError::error(
                sqlstate::DUPLICATE_ALIAS,
                format!("table name \"{name}\" specified more than once"),
            ));
        }
        names.push(name);
    }
    Ok(())
}

impl<'a> Scope<'a> {
    /// The scope of one table (or none), without an alias, joins or an outer statement.
    fn plain(table: Option<&'a TableDef>, statement: &'a GeneralStatement) -> Scope<'a> {
        Scope {
            table,
            alias: None,
            joined: Vec::new(),
            hidden: 0,
            outer: None,
            excluded: false,
            insert_returning: false,
            excluded_out_of_reach: false,
            statement,
        }
    }
}

impl Scope<'_> {
    /// The tables of the scope in row order: each definition, the name the statement calls
    /// it by (its alias, else its name) and where its columns start in a row.
    fn sources(&self) -> Vec<(&TableDef, &str, usize)> {
        let mut out = Vec::new();
        let mut offset = 0;
        let first = self.table.map(|def| (def, self.alias.as_deref()));
        for (def, alias) in first
            .into_iter()
            .chain(self.joined.iter().map(|j| (j.def, j.alias.as_deref())))
        {
            out.push((def, alias.unwrap_or(&def.name), offset));
            offset += def.columns.len();
        }
        out
    }

    /// Whether an unqualified `name` reads a column of the scope.
    fn has_column(&self, name: &str) -> bool {
        self.items()
            .iter()
            .flatten()
            .any(|(column, _)| column == name)
    }

    /// The columns each visible `FROM` item offers by name, in order: its tables' columns,
    /// except that a `USING` (or `NATURAL`) join puts the columns it merged first, once, in
    /// place of both tables' own (PostgreSQL's join namespace). `*` lists them all; an
    /// unqualified name that more than one of them has is ambiguous.
    fn items(&self) -> Vec<Vec<(String, Expr)>> {
        let columns = |def: &TableDef, offset: usize| -> Vec<(String, Expr)> {
            def.columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), Expr::Column(offset + i, c.ty)))
                .collect()
        };
        let mut items: Vec<Vec<(String, Expr)>> = Vec::new();
        // `joined[i]` is source `i + 1`.
        for (index, (def, _, offset)) in self.sources().into_iter().enumerate() {
            let joined = index.checked_sub(1).map(|i| &self.joined[i]);
            let right = columns(def, offset);
            match joined {
                Some(joined) if !joined.starts_item && index > self.hidden => {
                    let star = items.pop().expect("an item before a join");
                    let is_merged = |name: &str| joined.merged.iter().any(|(m, _)| m == name);
                    let mut next = joined.merged.clone();
                    next.extend(star.into_iter().filter(|(name, _)| !is_merged(name)));
                    next.extend(right.into_iter().filter(|(name, _)| !is_merged(name)));
                    items.push(next);
                }
                _ if index >= self.hidden => items.push(right),
                _ => {}
            }
        }
        items
    }

    /// What `*` lists: the columns of every visible `FROM` item ([`Scope::items`]).
    fn star(&self) -> Vec<(String, Expr)> {
        self.items().into_iter().flatten().collect()
    }

    /// The name a row position is shown by in an error: its table's name (or alias) and
    /// the column's.
    fn column_at(&self, index: usize) -> Option<(String, String)> {
        self.sources().into_iter().find_map(|(def, shown, offset)| {
            let column = def.columns.get(index.checked_sub(offset)?)?;
            Some((shown.to_string(), column.name.clone()))
        })
    }

    /// The table the statement calls `qualifier` (`w` in `w.balance`, `w.*`): 42P01 when
    /// none is in reach, with PostgreSQL's hints (its `errorMissingRTE`) when the name is a
    /// table's hidden by its alias or one out of reach here.
    fn source(
        &self,
        qualifier: &str,
        position: Option<u32>,
    ) -> Result<(&TableDef, &str, usize), PgError> {
        let sources = self.sources();
        let reachable = |index: usize| index >= self.hidden;
        let by_shown = sources.iter().position(|(_, shown, _)| *shown == qualifier);
        if by_shown.is_none() && qualifier == "excluded" && self.excluded_out_of_reach {
            return Err(PgError::error(
                sqlstate::UNDEFINED_TABLE,
                "invalid reference to FROM-clause entry for table \"excluded\"",
            )
            .with_hint(
                "There is an entry for table \"excluded\", but it cannot be referenced from \
                 this part of the query.",
            )
            .at(position));
        }
        if let Some(index) = by_shown.filter(|&index| reachable(index)) {
            return Ok(sources[index]);
        }
        let entry = by_shown.or_else(|| {
            sources
                .iter()
                .position(|(def, _, _)| &*def.name == qualifier)
        });
        Err(match entry {
            Some(index) => {
                let (_, shown, _) = sources[index];
                let error = PgError::error(
                    sqlstate::UNDEFINED_TABLE,
                    format!("invalid reference to FROM-clause entry for table \"{qualifier}\""),
                );
                if shown != qualifier && reachable(index) {
                    error.with_hint(format!(
                        "Perhaps you meant to reference the table alias \"{shown}\"."
                    ))
                } else {
                    error.with_hint(format!(
                        "There is an entry for table \"{shown}\", but it cannot be referenced from this part of the query."
                    ))
                }
            }
            None => missing_from(qualifier),
        }
        .at(position))
    }

    /// A column of the statement this one is a subquery of ([`Scope::outer`]), read as
    /// [`Expr::Outer`]: None when it has no such name.
    fn outer_column(
        &self,
        qualifier: Option<&str>,
        name: &str,
        position: Option<u32>,
    ) -> Result<Option<Expr>, PgError> {
        let Some(outer) = &self.outer else {
            return Ok(None);
        };
        let found: Vec<Expr> = match qualifier {
            Some(q) => {
                let Some((def, _, offset)) = outer.sources.iter().find(|(_, shown, _)| shown == q)
                else {
                    return Ok(None);
                };
                let found: Vec<Expr> = (def.columns.iter().enumerate())
                    .filter(|(_, c)| c.name == name)
                    .map(|(i, c)| Expr::Column(offset + i, c.ty))
                    .collect();
                if found.is_empty() {
                    return Err(missing_column(&format!("{q}.{name}"), None).at(position));
                }
                found
            }
            None => outer
                .items
                .iter()
                .flatten()
                .filter(|(column, _)| column == name)
                .map(|(_, expr)| expr.clone())
                .collect(),
        };
        match found.as_slice() {
            [] => Ok(None),
            [only] => Ok(Some(Expr::Outer(Box::new(only.clone())))),
            _ => Err(ambiguous("column reference", name, position)),
        }
    }

    fn column(
        &self,
        qualifier: Option<&str>,
        name: &str,
        node: &ast::Expr,
    ) -> Result<Expr, PgError> {
        let position = self.statement.position_of(node);
        if qualifier == Some("excluded") && self.excluded {
            let table = self.table.expect("excluded has a table");
            return match table.column(name) {
                Some(i) => Ok(Expr::Excluded(i, table.columns[i].ty)),
                None => Err(missing_column(&format!("excluded.{name}"), None).at(position)),
            };
        }
        let sources = self.sources();
        if sources.is_empty() {
            if let Some(outer) = self.outer_column(qualifier, name, position)? {
                return Ok(outer);
            }
            return Err(match qualifier {
                Some(q) => missing_from(q).at(position),
                None => missing_column(&format!("\"{name}\""), None).at(position),
            });
        }
        let (found, shown): (Vec<Expr>, String) = match qualifier {
            Some(q) => match self.source(q, position) {
                // A subquery in `FROM` may have two columns of one name: ambiguous.
                Ok((def, _, offset)) => (
                    (def.columns.iter().enumerate())
                        .filter(|(_, c)| c.name == name)
                        .map(|(i, c)| Expr::Column(offset + i, c.ty))
                        .collect(),
                    format!("{q}.{name}"),
                ),
                Err(error) => {
                    return match self.outer_column(qualifier, name, position)? {
                        Some(outer) => Ok(outer),
                        None => Err(error),
                    }
                }
            },
            None => (
                self.items()
                    .into_iter()
                    .flatten()
                    .filter(|(column, _)| column == name)
                    .map(|(_, expr)| expr)
                    .collect(),
                format!("\"{name}\""),
            ),
        };
        if found.is_empty() && qualifier.is_none() {
            if let Some(outer) = self.outer_column(None, name, position)? {
                return Ok(outer);
            }
        }
        // In `ON CONFLICT ... DO UPDATE` the row proposed for insertion is in reach as
        // `excluded`, with the target's columns: a bare name of one of them is ambiguous.
        let proposed_too = self.excluded
            && qualifier.is_none()
            && self.table.is_some_and(|table| table.column(name).is_some());
        match found.as_slice() {
            [_] if proposed_too => Err(ambiguous("column reference", name, position)),
            [only] => Ok(only.clone()),
            // Every table has PostgreSQL's system columns (`xmax = 0` tells an upsert's insert
            // from its update): there, but not kept here.
            [] if name == "xmax" && self.insert_returning => {
                let table = self.table.expect("an INSERT has its table");
                Ok(Expr::Column(table.columns.len(), SqlType::Xid))
            }
            [] if SYSTEM_COLUMNS.contains(&name) => {
                Err(unsupported(&format!("the system column {name}")))
            }
            [] => {
                // PostgreSQL looks through every table of the statement, in reach or not
                // (its `searchRangeTableForCol`): an exact match out of reach is named as
                // such, else the closest columns are hinted.
                let out_of_reach = sources.iter().find(|(def, shown, _)| {
                    qualifier.is_none_or(|q| q == *shown) && def.column(name).is_some()
                });
                let hint = match out_of_reach {
                    Some((_, table, _)) => Some(format!(
                        "There is a column named \"{name}\" in table \"{table}\", but it cannot be referenced from this part of the query."
                    )),
                    None => fuzzy_hint(name, qualifier, &sources),
                };
                Err(missing_column(&shown, hint).at(position))
            }
            _ => Err(ambiguous("column reference", name, position)),
        }
    }
}

/// 42702: `<what> "name" is ambiguous` (`column reference`, `GROUP BY`, `ORDER BY`).
fn ambiguous(what: &str, name: &str, position: Option<u32>) -> PgError {
    PgError::error(
        sqlstate::AMBIGUOUS_COLUMN,
        format!("{what} \"{name}\" is ambiguous"),
    )
    .at(position)
}

/// The select-list item a bare `name` in `GROUP BY` or `ORDER BY` names
/// (PostgreSQL's `findTargetlistEntrySQL92`): `None` if no item has that name, `Err` if two
/// that differ do.
fn select_list_item<'i>(items: &'i [(String, Expr)], name: &str) -> Result<Option<&'i Expr>, ()> {
    let mut named = items
        .iter()
        .filter(|(item, _)| item == name)
        .map(|(_, e)| e);
    let Some(first) = named.next() else {
        return Ok(None);
    };
    if named.any(|other| other != first) {
        return Err(());
    }
    Ok(Some(first))
}

/// Whether `expr` reads column `index` of its row.
fn mentions_column(expr: &Expr, index: usize) -> bool {
    matches!(expr, Expr::Column(at, _) if *at == index)
        || expr
            .parts()
            .into_iter()
            .any(|part| mentions_column(part, index))
}

/// The system columns every PostgreSQL table has.
const SYSTEM_COLUMNS: [&str; 6] = ["tableoid", "xmin", "cmin", "xmax", "cmax", "ctid"];

fn missing_column(shown: &str, hint: Option<String>) -> PgError {
    let error = PgError::error(
        sqlstate::UNDEFINED_COLUMN,
        format!("column {shown} does not exist"),
    );
    match hint {
        Some(hint) => error.with_hint(hint),
        None => error,
    }
}

fn missing_from(table: &str) -> PgError {
    PgError::error(
        sqlstate::UNDEFINED_TABLE,
        format!("missing FROM-clause entry for table \"{table}\""),
    )
}

/// 42809 for `DROP TABLE` of a sequence and `DROP SEQUENCE` of a table.
fn wrong_object_type(name: &str, wanted: &str, hint: &str) -> PgError {
    let article = if wanted.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    PgError::error("42809", format!("\"{name}\" is not {article} {wanted}"))
        .with_hint(format!("Use {hint}."))
}

/// What a relation's name names ([`Postgres::relation`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Relation {
    Table,
    Sequence,
    /// An index of `table`: one made by `CREATE INDEX`, or a constraint's (its primary key's
    /// or a `UNIQUE` constraint's: `constraint`).
    Index {
        table: Arc<str>,
        constraint: bool,
    },
}

/// What the relation `name` is among `tables` and `sequences` (see [`Postgres::relation`]).
fn relation_in(
    tables: &BTreeMap<Arc<str>, Table>,
    sequences: &BTreeMap<Arc<str>, Sequence>,
    name: &str,
) -> Option<Relation> {
    if tables.contains_key(name) {
        return Some(Relation::Table);
    }
    if sequences.contains_key(name) || column_sequence(tables, name).is_some() {
        return Some(Relation::Sequence);
    }
    tables.iter().find_map(|(table_name, table)| {
        let def = &table.def;
        let primary = def.primary_key.is_some() && index::primary_key_name(&def.name) == name;
        let constraint = primary
            || def
                .indexes
                .iter()
                .find(|index| index.name == name)?
                .constraint;
        Some(Relation::Index {
            table: table_name.clone(),
            constraint,
        })
    })
}

/// Whether `assignments` (an `UPDATE`'s or `ON CONFLICT DO UPDATE`'s) set a key column of
/// `def` ([`index::is_key_column`]): its lock on a row it has not changed yet is then `FOR
/// UPDATE`'s, else `FOR NO KEY UPDATE`'s (PostgreSQL's `ExecUpdateLockMode`).
fn assigns_key(def: &TableDef, assignments: &[(usize, Expr)]) -> bool {
    assignments
        .iter()
        .any(|&(column, _)| index::is_key_column(def, column))
}

/// Whether `new`, a changed version of the row at `own.0` (whose values were `own.1`), may
/// stand beside the other rows of `table` under each of its unique indexes whose columns it
/// changed (an unchanged key is not checked again, as PostgreSQL inserts no index entry for
/// it): `None` if so, a wait for the transaction it depends on, or 23505.
fn unique_check(
    table: &Table,
    def: &TableDef,
    new: &[Value],
    own: Option<(&Value, &[Value])>,
    session: SessionId,
) -> Result<Option<Outcome>, PgError> {
    for unique in def.indexes.iter().filter(|index| index.unique) {
        if let Some((_, old)) = own {
            // A partial index's row may enter it with its key unchanged: checked then.
            if unique.columns.iter().all(|&c| new[c] == old[c]) && unique.keyed(old)? {
                continue;
            }
        }
        match index::clash(table, unique, new, session, own.map(|(key, _)| key))? {
            Clash::None => {}
            Clash::Wait(holder) => return Ok(Some(Outcome::Wait(holder, None))),
            Clash::Row(_) => return Err(index::violation(def, unique, new)),
        }
    }
    Ok(None)
}

/// The columns a `PRIMARY KEY` or `UNIQUE` constraint of `def` names (`kind`: `primary key`
/// or `unique`), in order: 42703 for one the table lacks, 42701 for one named twice, both
/// at the constraint's `start`.
fn key_columns(
    def: &TableDef,
    columns: &[ast::IndexColumn],
    kind: &str,
    start: impl Fn() -> Option<u32>,
) -> Result<Vec<usize>, PgError> {
    let mut found = Vec::with_capacity(columns.len());
    for column in columns {
        let ast::Expr::Identifier(ident) = &column.column.expr else {
            return Err(unsupported(&column.to_string()));
        };
        let name = ident_name(ident);
        let Some(index) = def.column(&name) else {
            return Err(PgError::error(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{name}\" named in key does not exist"),
            )
            .at(start()));
        };
        if found.contains(&index) {
            return Err(PgError::error(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{name}\" appears twice in {kind} constraint"),
            )
            .at(start()));
        }
        found.push(index);
    }
    Ok(found)
}

/// Where a table constraint starts (`CONSTRAINT name`, else its first keyword), found back
/// from its first column: PostgreSQL's position for a column it names that does not exist.
fn constraint_start(
    statement: &GeneralStatement,
    name: Option<&ast::Ident>,
    columns: &[ast::IndexColumn],
    keywords: &[&str],
) -> Option<u32> {
    if let Some(name) = name {
        let at = statement.position(name.span.start)?;
        return statement.keyword_before(at, "constraint");
    }
    let ast::Expr::Identifier(first) = &columns.first()?.column.expr else {
        return None;
    };
    let (last, before) = keywords.split_last()?;
    let mut at = statement.word_before(statement.position(first.span.start)?, last)?;
    for keyword in before.iter().rev() {
        at = statement.keyword_before(at, keyword)?;
    }
    Some(at)
}

/// A `UNIQUE` constraint the stand-in keeps: plain columns, not deferrable. Answers whether
/// its NULLs are not distinct.
fn unique_constraint_supported(unique: &ast::UniqueConstraint) -> Result<bool, PgError> {
    if unique.characteristics.is_some()
        || !unique.include.is_empty()
        || !unique.index_options.is_empty()
        || unique.index_name.is_some()
        || unique.index_type.is_some()
    {
        return Err(unsupported(&format!("constraint {unique}")));
    }
    Ok(unique.nulls_distinct == ast::NullsDistinctOption::NotDistinct)
}

/// `CREATE INDEX` as written: what it names is looked up when it runs.
#[derive(Clone, Debug)]
struct CreateIndexPlan {
    /// The name given, if any (else PostgreSQL chooses one, [`index::choose_name`]).
    name: Option<String>,
    table: String,
    columns: Vec<String>,
    if_not_exists: bool,
    concurrently: bool,
    unique: bool,
    /// `WHERE`, analysed over the table's columns (when the table was there to analyse it
    /// with; when it was not, running the plan finds it missing).
    predicate: Option<Expr>,
    nulls_not_distinct: bool,
}

/// A `CREATE [UNIQUE] INDEX` the stand-in runs: a B-tree or hash index on columns, partial or
/// not, NULLs distinct or not. Expressions, included columns, storage parameters and operator
/// classes are refused as unsupported. The predicate is analysed by the caller
/// ([`Analyzer::index_predicate`]).
fn create_index_plan(create: &ast::CreateIndex) -> Result<CreateIndexPlan, PgError> {
    let method = create
        .using
        .as_ref()
        .map(|using| using.to_string().to_ascii_lowercase());
    if let Some(method) = method.filter(|m| m != "btree" && m != "hash") {
        return Err(unsupported(&format!("an index using {method}")));
    }
    let refused = if !create.include.is_empty() {
        Some("INCLUDE in an index")
    } else if !create.with.is_empty() || !create.index_options.is_empty() {
        Some("index storage parameters")
    } else if create.r#async || !create.alter_options.is_empty() {
        Some("this form of CREATE INDEX")
    } else {
        None
    };
    if let Some(what) = refused {
        return Err(unsupported(what));
    }
    let mut columns = Vec::with_capacity(create.columns.len());
    for column in &create.columns {
        match &column.column.expr {
            ast::Expr::Identifier(ident)
                if column.operator_class.is_none() && column.column.with_fill.is_none() =>
            {
                columns.push(ident_name(ident))
            }
            other => return Err(unsupported(&format!("an index on {other}"))),
        }
    }
    Ok(CreateIndexPlan {
        name: create.name.as_ref().map(object_name).transpose()?,
        table: object_name(&create.table_name)?,
        columns,
        if_not_exists: create.if_not_exists,
        concurrently: create.concurrently,
        unique: create.unique,
        predicate: None,
        nulls_not_distinct: create.nulls_distinct == Some(false),
    })
}

/// Where PostgreSQL places the first subquery of `node` (its `SubLink`'s location): a scalar
/// subquery at its parenthesis, `EXISTS` at the keyword, `IN` at `IN` (`NOT IN` at `NOT`).
fn first_subquery_at(statement: &GeneralStatement, node: &ast::Expr) -> Option<u32> {
    use ast::Expr as E;
    let parenthesis =
        |query: &ast::Query| statement.opening_parenthesis_before(statement.position_of(query)?);
    match node {
        E::Subquery(query) => parenthesis(query),
        E::Exists { subquery, .. } => statement.keyword_before(parenthesis(subquery)?, "exists"),
        E::In {
            target: ast::InTarget::Subquery(subquery),
            negated,
            ..
        } => {
            let at = statement.keyword_before(parenthesis(subquery)?, "in")?;
            if *negated {
                statement.keyword_before(at, "not")
            } else {
                Some(at)
            }
        }
        E::BinaryOp { left, right, .. } => {
            first_subquery_at(statement, left).or_else(|| first_subquery_at(statement, right))
        }
        E::UnaryOp { expr, .. } | E::Nested(expr) | E::IsNull(expr) | E::IsNotNull(expr) => {
            first_subquery_at(statement, expr)
        }
        _ => None,
    }
}

/// Where the first argument of a call is written.
fn position_of_first(analyzer: &Analyzer<'_>, arguments: &[&ast::Expr]) -> Option<u32> {
    arguments
        .first()
        .and_then(|node| analyzer.statement.position_of(*node))
}

/// The NOTICE of a `DROP ... IF EXISTS` whose `kind` (`table`, `sequence`, `index`) named
/// `name` is not there.
fn skipped(kind: &str, name: &str) -> PgError {
    PgError {
        severity: "NOTICE",
        ..PgError::error(
            "00000",
            format!("{kind} \"{name}\" does not exist, skipping"),
        )
    }
}

/// `result`, with the NOTICE sent before it, if any.
fn with_notice(result: SqlResult, notice: Option<PgError>) -> Outcome {
    match notice {
        Some(notice) => Outcome::Notice(result, notice),
        None => Outcome::Done(result),
    }
}

fn missing_relation(name: &str) -> PgError {
    // A view or table of PostgreSQL's catalogue (`pg_locks`, `pg_stat_activity`) is there in
    // PostgreSQL: not run here, rather than missing.
    let unqualified = name.strip_prefix("pg_catalog.").unwrap_or(name);
    if super::catalog_names::is_catalog_relation(unqualified) {
        return unsupported(&format!("the catalogue relation {unqualified}"));
    }
    PgError::error(
        sqlstate::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    )
}

/// A statement analysed (or planned) and the types of its parameters, or why it is not.
type Planned = Result<(Plan, Vec<SqlType>), PgError>;

/// The analysis of one statement: the catalogue and the parameter types found so far.
struct Analyzer<'a> {
    tables: &'a BTreeMap<Arc<str>, Table>,
    /// The relations other sessions' open blocks hold by DDL (`ddl.rs`), as the session
    /// whose statement this is sees them (none when no session is named).
    ddl_holds: Vec<(Arc<str>, DdlHold)>,
    /// The session the statement has to wait for: it named a relation that session's block
    /// changed by DDL.
    waits_for: &'a Cell<Option<SessionId>>,
    /// The sequences (`CREATE SEQUENCE`), relations beside the tables.
    sequences: &'a BTreeMap<Arc<str>, Sequence>,
    params: Vec<SqlType>,
    statement: &'a GeneralStatement,
    /// Where the first aggregate call of the statement is (for 42803 in a WHERE).
    aggregate_at: Option<Option<u32>>,
    /// The parameter types are those of the values a statement runs with (every integer a
    /// `bigint`), not those its client declared.
    typed_by_values: bool,
    /// The statement's uncorrelated subqueries, in the order they must run.
    subqueries: Vec<Subquery>,
    /// The correlated subqueries of the query being read (each query keeps its own).
    correlated: Vec<Subquery>,
    /// The scope the next query read is a subquery of.
    outer: Option<Rc<OuterScope>>,
    /// The `WITH` queries in reach, the innermost last: each name and the index of its
    /// [`SubqueryKind::Relation`] in `subqueries`.
    ctes: Vec<(String, usize)>,
    /// The query (its address) whose select list keeps its untyped literals and parameters
    /// untyped: the source of an `INSERT ... SELECT` ([`Analyzer::insert_source`]).
    untyped_items_of: Option<usize>,
    /// How many queries are being read, one inside another: a `WITH` query that changes data
    /// is allowed only on the statement's own `WITH` (at most one open).
    queries_open: usize,
    /// The names of `WITH` queries being read that are not in reach yet: the one being read
    /// and those after it in its list (for 42P01's DETAIL).
    ahead: Vec<String>,
}

impl Analyzer<'_> {
    fn table(&self, name: &ObjectName) -> Result<Arc<TableDef>, PgError> {
        let table = object_name(name)?;
        let held = self.ddl_holds.iter().find(|(held, _)| **held == *table);
        if let Some((_, hold)) = held {
            if hold.created {
                return Err(missing_relation(&table).at(self.statement.position_of(name)));
            }
            if self.waits_for.get().is_none() {
                self.waits_for.set(Some(hold.holder));
            }
        }
        if self.sequences.contains_key(table.as_str())
            || column_sequence(self.tables, &table).is_some()
        {
            return Err(unsupported(&format!(
                "reading the sequence \"{table}\" as a table (call nextval, currval or setval)"
            )));
        }
        self.tables
            .get(table.as_str())
            .map(|t| t.def.clone())
            .ok_or_else(|| missing_relation(&table).at(self.statement.position_of(name)))
    }

    /// The table `LOCK TABLE` names: 42809 for a sequence or an index, 42P01 (without a
    /// position, as PostgreSQL reports it there) for no relation.
    fn lockable_table(&self, name: &ObjectName) -> Result<Arc<str>, PgError> {
        let table = object_name(name)?;
        let kind = match relation_in(self.tables, self.sequences, &table) {
            Some(Relation::Sequence) => Some("sequences"),
            Some(Relation::Index { .. }) => Some("indexes"),
            Some(Relation::Table) | None => None,
        };
        if let Some(kind) = kind {
            return Err(
                PgError::error("42809", format!("cannot lock relation \"{table}\""))
                    .with_detail(format!("This operation is not supported for {kind}.")),
            );
        }
        let def = self.table(name).map_err(|error| error.at(None))?;
        let key = self.tables.get_key_value(def.name.as_str());
        Ok(key.map_or_else(|| Arc::from(def.name.as_str()), |(key, _)| key.clone()))
    }

    /// The definition of the table named `name` in a plan: one of the catalogue, or one of
    /// the statement's own relations.
    fn def_named(&self, name: &str) -> Option<Arc<TableDef>> {
        if let Some(table) = self.tables.get(name) {
            return Some(table.def.clone());
        }
        self.subqueries
            .iter()
            .find_map(|subquery| match &subquery.kind {
                SubqueryKind::Relation { def, .. } if def.name == name => Some(def.clone()),
                _ => None,
            })
    }

    fn param_type(&mut self, index: usize, wanted: SqlType) -> SqlType {
        if self.params.len() <= index {
            self.params.resize(index + 1, SqlType::Unknown);
        }
        if self.params[index] == SqlType::Unknown {
            self.params[index] = wanted;
        }
        self.params[index]
    }

    /// An expression, with unknown-typed literals and parameters resolved against `hint`.
    /// The operators, the links of deep chains, are here; the rest is `expr_other`.
    fn expr(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        hint: SqlType,
    ) -> Result<Expr, PgError> {
        Ok(match node {
            ast::Expr::BinaryOp { left, op, right } => {
                let op = match op {
                    BinaryOperator::Plus => BinOp::Add,
                    BinaryOperator::Minus => BinOp::Sub,
                    BinaryOperator::Multiply => BinOp::Mul,
                    BinaryOperator::Divide => BinOp::Div,
                    BinaryOperator::Modulo => BinOp::Mod,
                    BinaryOperator::Eq => BinOp::Eq,
                    BinaryOperator::NotEq => BinOp::Ne,
                    BinaryOperator::Lt => BinOp::Lt,
                    BinaryOperator::LtEq => BinOp::Le,
                    BinaryOperator::Gt => BinOp::Gt,
                    BinaryOperator::GtEq => BinOp::Ge,
                    BinaryOperator::And => BinOp::And,
                    BinaryOperator::Or => BinOp::Or,
                    BinaryOperator::StringConcat => BinOp::Concat,
                    BinaryOperator::PGExp => return self.power_operator(scope, left, right),
                    BinaryOperator::BitwiseAnd
                    | BinaryOperator::BitwiseOr
                    | BinaryOperator::PGBitwiseXor
                    | BinaryOperator::PGBitwiseShiftLeft
                    | BinaryOperator::PGBitwiseShiftRight => {
                        return self.bitwise_operator(scope, left, op, right)
                    }
                    BinaryOperator::PGRegexMatch
                    | BinaryOperator::PGRegexIMatch
                    | BinaryOperator::PGRegexNotMatch
                    | BinaryOperator::PGRegexNotIMatch => {
                        return self.regex_operator(scope, left, right, op);
                    }
                    other => return Err(unsupported(&format!("operator {other}"))),
                };
                if matches!(op, BinOp::And | BinOp::Or) {
                    let l = self.expr(scope, left, SqlType::Bool)?;
                    let r = self.expr(scope, right, SqlType::Bool)?;
                    let name = if op == BinOp::And { "AND" } else { "OR" };
                    let l = self.boolean(l, name, self.statement.position_of(left.as_ref()))?;
                    let r = self.boolean(r, name, self.statement.position_of(right.as_ref()))?;
                    return Ok(Expr::binary_node(op, l, r));
                }
                let (l, r) = self.typed_operands(scope, left, right, op)?;
                // The operator's position: just after the left operand.
                let op_position = self.operator_after(left);
                self.binary(op, l, r, op_position)?
            }
            _ => self.expr_other(scope, node, hint)?,
        })
    }

    /// Every expression but an operator chain's links ([`Analyzer::expr`]). Never inlined:
    /// its locals would grow the frame of `expr`, which a chain of a thousand operators
    /// stacks a thousand times.
    #[inline(never)]
    fn expr_other(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        hint: SqlType,
    ) -> Result<Expr, PgError> {
        let position = || self.statement.position_of(node);
        Ok(match node {
            // Keywords of PostgreSQL's grammar that the parser reads as names.
            ast::Expr::Identifier(ident)
                if ident.quote_style.is_none()
                    && ["current_role", "current_schema"]
                        .iter()
                        .any(|keyword| ident.value.eq_ignore_ascii_case(keyword)) =>
            {
                let name = ident.value.to_lowercase();
                let (function, _) = SessionFn::parse(&name).expect("a function of the session");
                Expr::Session(function)
            }
            ast::Expr::Identifier(ident) => scope.column(None, &ident_name(ident), node)?,
            ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [table, column] => {
                    scope.column(Some(&ident_name(table)), &ident_name(column), node)?
                }
                _ => return Err(unsupported(&node.to_string())),
            },
            ast::Expr::Nested(inner) => self.expr(scope, inner, hint)?,
            ast::Expr::Value(value) => self.literal(&value.value, hint, position())?,
            ast::Expr::UnaryOp { op, expr } if heads_power_chain(op, expr) => {
                let reassociated = unary_into_power(op, expr).expect("a chain, just checked");
                self.expr(scope, &reassociated, hint)?
            }
            ast::Expr::UnaryOp { op, expr } => {
                let inner = self.expr(scope, expr, hint)?;
                match op {
                    UnaryOperator::Not => {
                        Expr::Not(Box::new(self.boolean(inner, "NOT", position())?))
                    }
                    UnaryOperator::Minus => match inner {
                        // A minus before a number literal makes a negative literal (so
                        // `-2147483648` is an `integer`); before a cast (`-3::bigint`) it is
                        // an operator on the cast's type.
                        Expr::Const(Value::Int(v), _) if is_number_literal(expr) => {
                            int_literal(-i128::from(v))
                        }
                        // Digits past bigint's largest are `numeric`, but negated they may
                        // fit (`-9223372036854775808` is a `bigint`), as PostgreSQL's
                        // grammar negates the literal before typing it.
                        Expr::Const(Value::Numeric(d), _) if is_integer_literal(expr) => {
                            int_literal(-d.mantissa)
                        }
                        Expr::Const(Value::Numeric(d), ty) => Expr::Const(
                            Value::Numeric(Decimal {
                                mantissa: -d.mantissa,
                                ..d
                            }),
                            ty,
                        ),
                        other if other.ty().is_timestamp() => {
                            return Err(undefined_prefix_operator(
                                "-",
                                other.ty(),
                                position()
                                    .map(|at| self.statement.keyword_before(at, "-").unwrap_or(at)),
                            ))
                        }
                        other => Expr::Neg(Box::new(other)),
                    },
                    UnaryOperator::Plus => inner,
                    UnaryOperator::BitwiseNot => {
                        // The node starts at its operand; PostgreSQL points at `~`.
                        let at = position()
                            .map(|at| self.statement.keyword_before(at, "~").unwrap_or(at));
                        match inner.ty() {
                            ty if integer_type(ty) => Expr::Call(ScalarFn::BitNot, vec![inner], ty),
                            SqlType::Unknown => return Err(operator_not_unique("~ unknown", at)),
                            other => return Err(undefined_prefix_operator("~", other, at)),
                        }
                    }
                    other => return Err(unsupported(&format!("operator {other}"))),
                }
            }
            ast::Expr::IsNull(inner) => {
                Expr::IsNull(Box::new(self.expr(scope, inner, SqlType::Unknown)?), false)
            }
            ast::Expr::IsNotNull(inner) => {
                Expr::IsNull(Box::new(self.expr(scope, inner, SqlType::Unknown)?), true)
            }
            ast::Expr::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.like(
                scope,
                expr,
                pattern,
                escape_char.as_deref(),
                *negated,
                false,
            )?,
            ast::Expr::ILike {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.like(scope, expr, pattern, escape_char.as_deref(), *negated, true)?,
            ast::Expr::Subquery(query) => {
                // PostgreSQL points at the opening parenthesis, the node starts after it.
                let at = self
                    .statement
                    .position_of(node)
                    .map(|at| self.statement.keyword_before(at, "(").unwrap_or(at));
                let one_column = Some(("subquery must return only one column", at));
                let (plan, ty) = self.subquery(scope, query, one_column)?;
                self.add_subquery(scope, SubqueryKind::Scalar(ty), plan, ty)
            }
            ast::Expr::Exists { subquery, negated } => {
                let (plan, _) = self.subquery(scope, subquery, None)?;
                let exists = self.add_subquery(scope, SubqueryKind::Exists, plan, SqlType::Bool);
                negated_if(*negated, exists)
            }
            ast::Expr::In {
                expr,
                target: ast::InTarget::Subquery(subquery),
                negated,
                global: false,
            } => {
                let in_at = self.operator_after(expr);
                let one_column = Some(("subquery has too many columns", in_at));
                let (plan, ty) = self.subquery(scope, subquery, one_column)?;
                let left = self.expr(scope, expr, ty)?;
                // The comparison as `=` types it (an unknown literal takes the column's type).
                let test = self.binary(
                    BinOp::Eq,
                    left,
                    Expr::Const(Value::Null, ty),
                    self.statement.position_of(node),
                )?;
                let Expr::Binary(_, left, _, _) = test else {
                    unreachable!("binary gives a binary operation")
                };
                let member =
                    self.add_subquery(scope, SubqueryKind::In(left, ty), plan, SqlType::Bool);
                negated_if(*negated, member)
            }
            ast::Expr::IsDistinctFrom(left, right) => {
                self.distinct_from(scope, left, right, false)?
            }
            ast::Expr::IsNotDistinctFrom(left, right) => {
                self.distinct_from(scope, left, right, true)?
            }
            ast::Expr::Ceil { expr, field } | ast::Expr::Floor { expr, field } => {
                let (function, name) = if matches!(node, ast::Expr::Ceil { .. }) {
                    (ScalarFn::Ceil, "ceil")
                } else {
                    (ScalarFn::Floor, "floor")
                };
                let scale = match field {
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => None,
                    ast::CeilFloorKind::Scale(value) => Some(ast::Expr::Value(value.clone())),
                    ast::CeilFloorKind::DateTimeField(_) => {
                        return Err(unsupported(&node.to_string()))
                    }
                };
                let mut arguments: Vec<&ast::Expr> = vec![expr];
                arguments.extend(scale.as_ref());
                // The node may start at its argument; PostgreSQL points at the name.
                let position = self
                    .statement
                    .position_of(node)
                    .map(|at| self.statement.word_before(at, name).unwrap_or(at));
                self.signature_call(scope, function, name, &arguments, position)?
            }
            ast::Expr::Position { expr, r#in } => {
                let position = self.statement.position_of(node);
                let arguments: [&ast::Expr; 2] = [r#in, expr];
                self.signature_call(scope, ScalarFn::Strpos, "strpos", &arguments, position)?
            }
            ast::Expr::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                let (function, name) = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => (ScalarFn::Btrim, "btrim"),
                    Some(ast::TrimWhereField::Leading) => (ScalarFn::Ltrim, "ltrim"),
                    Some(ast::TrimWhereField::Trailing) => (ScalarFn::Rtrim, "rtrim"),
                };
                let mut arguments: Vec<&ast::Expr> = vec![expr];
                arguments.extend(trim_what.as_deref());
                arguments.extend(trim_characters.iter().flatten());
                let position = self.statement.position_of(node);
                self.signature_call(scope, function, name, &arguments, position)?
            }
            ast::Expr::IsTrue(inner)
            | ast::Expr::IsNotTrue(inner)
            | ast::Expr::IsFalse(inner)
            | ast::Expr::IsNotFalse(inner)
            | ast::Expr::IsUnknown(inner)
            | ast::Expr::IsNotUnknown(inner) => self.boolean_test(scope, node, inner)?,
            ast::Expr::In {
                expr,
                target: ast::InTarget::List(list),
                negated,
                ..
            } => {
                let mut tests = Vec::with_capacity(list.len());
                // Once: the span of a long list takes as long to find as the list is. An
                // operator's error points at `IN` (or `NOT`), as PostgreSQL's does.
                let at = self.operator_after(expr).or_else(position);
                // `NOT IN` is `<> ALL`, as PostgreSQL reads it (its errors name `<>`).
                let (test, join) = if *negated {
                    (BinOp::Ne, BinOp::And)
                } else {
                    (BinOp::Eq, BinOp::Or)
                };
                for item in list {
                    let left = self.expr(scope, expr, SqlType::Unknown)?;
                    let right = self.expr(scope, item, left.ty())?;
                    tests.push(self.binary(test, left, right, at)?);
                }
                // A balanced tree: a list of any length nests only log2(n) deep.
                balanced(join, tests).ok_or_else(|| unsupported(&node.to_string()))?
            }
            // The element type comes from the elements (a cast around it gives its own).
            ast::Expr::Array(ast::Array { elem, .. }) => {
                self.array_constructor(scope, elem, SqlType::Unknown, position())?
            }
            ast::Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.any_all(scope, node, left, compare_op, right, false)?,
            ast::Expr::AllOp {
                left,
                compare_op,
                right,
            } => self.any_all(scope, node, left, compare_op, right, true)?,
            ast::Expr::CompoundFieldAccess { root, access_chain } => {
                self.subscript(scope, node, root, access_chain)?
            }
            ast::Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let value = self.expr(scope, expr, SqlType::Unknown)?;
                let ty = value.ty();
                let low = self.expr(scope, low, ty)?;
                let high = self.expr(scope, high, ty)?;
                let ge = self.binary(BinOp::Ge, value.clone(), low, position())?;
                let le = self.binary(BinOp::Le, value, high, position())?;
                let both = Expr::binary_node(BinOp::And, ge, le);
                negated_if(*negated, both)
            }
            ast::Expr::Cast {
                expr,
                data_type: ty,
                kind,
                ..
            } => {
                let target = data_type(ty).map_err(|error| match (error.code, kind) {
                    // PostgreSQL points at the type's name, after `::`.
                    (sqlstate::UNDEFINED_OBJECT, ast::CastKind::DoubleColon) => {
                        let at = self.double_colon_after(expr).map(|at| at + 2);
                        error.at(at.and_then(|at| self.statement.next_word_at(at)))
                    }
                    _ => error,
                })?;
                let inner = match array_constructor_of(expr) {
                    // PostgreSQL gives the cast's type to `ARRAY[...]` (so `ARRAY[]::int[]`
                    // is an empty `integer[]`).
                    Some(elements) if target.element().is_some() => {
                        self.array_constructor(scope, elements, target, position())?
                    }
                    _ => self.expr(scope, expr, target)?,
                };
                // PostgreSQL points at `::`, or at `CAST`.
                let cast_at = match kind {
                    ast::CastKind::DoubleColon => self.double_colon_after(expr),
                    _ => position().map(|at| self.statement.word_before(at, "cast").unwrap_or(at)),
                };
                match (inner.ty().element(), target.element()) {
                    // PostgreSQL casts `ARRAY[...]`'s elements one by one: its error names
                    // their types.
                    (Some(from), Some(to)) if array_constructor_of(expr).is_some() => {
                        let first = array_constructor_of(expr)
                            .and_then(|elements| elements.first())
                            .and_then(|first| self.statement.position_of(first));
                        castable(from, to, first.or(cast_at))?
                    }
                    _ => castable(inner.ty(), target, cast_at)?,
                }
                let converted = self.convert(inner, target, position())?;
                // A modifier out of range: PostgreSQL points at the type, after `::`.
                let type_at = match kind {
                    ast::CastKind::DoubleColon => cast_at.map(|at| at + 2),
                    _ => None,
                };
                match type_modifier(ty).map_err(|error| match type_at {
                    Some(at) if error.code != sqlstate::FEATURE_NOT_SUPPORTED => error.at(Some(at)),
                    _ => error,
                })? {
                    Some(typmod) => {
                        Expr::Call(ScalarFn::Typmod(typmod, true), vec![converted], target)
                    }
                    None => converted,
                }
            }
            ast::Expr::Substring {
                expr,
                substring_from,
                substring_for,
                shorthand,
                ..
            } => {
                let name = if *shorthand { "substr" } else { "substring" };
                let mut arguments: Vec<&ast::Expr> = vec![expr];
                arguments.extend(substring_from.as_deref());
                arguments.extend(substring_for.as_deref());
                if substring_from.is_none() {
                    return Err(unsupported(&node.to_string()));
                }
                // The node starts at its first argument; PostgreSQL points at the name.
                let position = self
                    .statement
                    .position_of(node)
                    .map(|at| self.statement.word_before(at, name).unwrap_or(at));
                self.substr_call(scope, name, &arguments, position)?
            }
            ast::Expr::Interval(interval) => {
                let text = match (
                    interval.value.as_ref(),
                    &interval.leading_field,
                    &interval.last_field,
                ) {
                    (ast::Expr::Value(v), None, None) => match &v.value {
                        ast::Value::SingleQuotedString(text) => text.clone(),
                        _ => return Err(unsupported(&node.to_string())),
                    },
                    _ => return Err(unsupported(&node.to_string())),
                };
                let at = self.statement.position_of(interval.value.as_ref());
                let value = Interval::parse(&text).map_err(|e| e.at(at))?;
                Expr::Const(Value::Interval(value), SqlType::Interval)
            }
            ast::Expr::TypedString(typed) => {
                let target = data_type(&typed.data_type)?;
                let text = match &typed.value.value {
                    ast::Value::SingleQuotedString(text) => text.clone(),
                    _ => return Err(unsupported(&node.to_string())),
                };
                let literal = Expr::Const(Value::Text(text), SqlType::Unknown);
                self.convert(literal, target, position())?
            }
            ast::Expr::Extract { field, expr, .. } => {
                let value = self.expr(scope, expr, SqlType::Unknown)?;
                // The field as PostgreSQL passes it on: a word (any case; `time_part` reads
                // it) or a quoted name or string.
                let name = match field {
                    ast::DateTimeField::Custom(ident) => ident.value.clone(),
                    ast::DateTimeField::Week(Some(_)) => {
                        return Err(unsupported(&node.to_string()))
                    }
                    field => field.to_string(),
                };
                let unit = Expr::Const(Value::Text(name), SqlType::Unknown);
                let at = self
                    .statement
                    .position_of(expr.as_ref())
                    .and_then(|p| self.statement.last_word_before(p, "extract"));
                self.time_part_call(ScalarFn::Extract, unit, value, at)?
            }
            ast::Expr::Function(function) => {
                let name = object_name(&function.name)?;
                let star = matches!(&function.args, FunctionArguments::List(list)
                    if list.args.len() == 1 && matches!(&list.args[0],
                        ast::FunctionArg::Unnamed(FunctionArgExpr::Wildcard)));
                // `count(*) OVER (...)` is a window function: not run here (below, refused).
                let star = star && function.over.is_none() && function.within_group.is_empty();
                if name == "count" && star && function.filter.is_some() {
                    // `count(*) FILTER (WHERE w)` counts the rows where `w` holds.
                    let one = Expr::Const(Value::Int(1), SqlType::Int4);
                    let argument = self.filtered(scope, function, one)?;
                    self.aggregate_at.get_or_insert(position());
                    let count = Aggregate {
                        kind: AggregateKind::Count,
                        distinct: false,
                        order: None,
                    };
                    Expr::Aggregate(count, Box::new(argument), SqlType::Int8)
                } else if name == "count" && star {
                    self.aggregate_at.get_or_insert(position());
                    Expr::CountStar
                } else {
                    self.function(scope, node, function, &name, hint)?
                }
            }
            ast::Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(
                scope,
                operand.as_deref(),
                conditions,
                else_result.as_deref(),
                hint,
            )?,
            other => return Err(unsupported(&other.to_string())),
        })
    }

    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`: each condition boolean (or, with an
    /// operand, compared with it by `=`), the values of one common type.
    #[inline(never)]
    fn case(
        &mut self,
        scope: &Scope<'_>,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        otherwise: Option<&ast::Expr>,
        hint: SqlType,
    ) -> Result<Expr, PgError> {
        let mut tests = Vec::with_capacity(conditions.len());
        for when in conditions {
            let position = self.statement.position_of(&when.condition);
            let test = match operand {
                Some(operand) => {
                    let left = self.expr(scope, operand, SqlType::Unknown)?;
                    let right = self.expr(scope, &when.condition, left.ty())?;
                    self.binary(BinOp::Eq, left, right, position)?
                }
                None => {
                    let test = self.expr(scope, &when.condition, SqlType::Bool)?;
                    self.boolean(test, "CASE/WHEN", position)?
                }
            };
            tests.push(test);
        }
        let mut results: Vec<&ast::Expr> = conditions.iter().map(|when| &when.result).collect();
        results.extend(otherwise);
        let (mut values, ty) = self.common_type(scope, &results, hint, "CASE")?;
        let otherwise = match otherwise {
            Some(_) => values.pop().expect("the ELSE value"),
            None => Expr::Const(Value::Null, ty),
        };
        Ok(Expr::Case {
            whens: tests.into_iter().zip(values).collect(),
            otherwise: Box::new(otherwise),
            ty,
        })
    }

    /// The arguments analysed and converted to their common type (PostgreSQL's
    /// `select_common_type` for these types: the first known type, widened among numbers;
    /// all unknown: `hint`, else `text`), or 42804 naming `what` (`COALESCE`, `CASE`, ...).
    #[inline(never)]
    fn common_type(
        &mut self,
        scope: &Scope<'_>,
        arguments: &[&ast::Expr],
        hint: SqlType,
        what: &str,
    ) -> Result<(Vec<Expr>, SqlType), PgError> {
        let mut ty = SqlType::Unknown;
        let mut analysed = Vec::with_capacity(arguments.len());
        for argument in arguments {
            let e = self.expr(scope, argument, SqlType::Unknown)?;
            let t = e.ty();
            analysed.push(e);
            if ty == SqlType::Unknown
                || (ty.is_number() && t.is_number() && number_rank(t) > number_rank(ty))
            {
                ty = t;
            }
        }
        if ty == SqlType::Unknown {
            ty = if hint == SqlType::Unknown {
                SqlType::Text
            } else {
                hint
            };
        }
        let mut converted = Vec::with_capacity(arguments.len());
        for (argument, first) in arguments.iter().zip(analysed) {
            // Analysed again with the common type only when it had none of its own (an
            // untyped literal, NULL, a parameter): analysing every argument twice doubled the
            // work at every level of nested COALESCE, GREATEST or CASE.
            let e = if first.ty() == SqlType::Unknown {
                self.expr(scope, argument, ty)?
            } else {
                first
            };
            if e.ty() != ty && e.ty() != SqlType::Unknown && !(e.ty().is_number() && ty.is_number())
            {
                return Err(PgError::error(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "{what} types {} and {} cannot be matched",
                        ty.name(),
                        e.ty().name()
                    ),
                )
                .at(self.statement.position_of(*argument)));
            }
            converted.push(self.convert(e, ty, None)?);
        }
        Ok((converted, ty))
    }

    /// Where PostgreSQL points for an expression: at the `ARRAY` keyword of `ARRAY[...]` (the
    /// node's span starts at its first element), else at the node.
    fn array_aware_position(&self, node: &ast::Expr) -> Option<u32> {
        let at = self.statement.position_of(node)?;
        if !matches!(node, ast::Expr::Array(array) if !array.elem.is_empty()) {
            return Some(at);
        }
        let bracket = self.statement.bracket_at_or_before(at)?;
        Some(
            self.statement
                .keyword_before(bracket, "array")
                .unwrap_or(at),
        )
    }

    /// `ARRAY[a, b, ...]`: the elements in their common type (42804 where two cannot be
    /// matched); an empty one takes its type from a cast around it, else 42P18.
    #[inline(never)]
    fn array_constructor(
        &mut self,
        scope: &Scope<'_>,
        elements: &[ast::Expr],
        hint: SqlType,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        if elements.is_empty() {
            return match hint.element() {
                Some(_) => Ok(Expr::Const(Value::Array(Arc::new(Vec::new())), hint)),
                None => Err(
                    PgError::error("42P18", "cannot determine type of empty array")
                        .with_hint(
                            "Explicitly cast to the desired type, for example ARRAY[]::integer[].",
                        )
                        .at(position),
                ),
            };
        }
        let element_hint = hint.element().unwrap_or(SqlType::Unknown);
        let nodes: Vec<&ast::Expr> = elements.iter().collect();
        let (converted, element) = self.common_type(scope, &nodes, element_hint, "ARRAY")?;
        let Some(ty) = element.array_of() else {
            return Err(unsupported(&format!("an array of {}", element.name())));
        };
        Ok(Expr::Call(ScalarFn::MakeArray, converted, ty))
    }

    /// `left op ANY (array)` and `left op ALL (array)` (`op` a comparison): the array typed
    /// from the left side (an untyped literal or parameter becomes its array type), 42809
    /// when the right side is not an array. With a subquery, `= ANY` is `IN` and `<> ALL`
    /// `NOT IN`.
    #[inline(never)]
    fn any_all(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        left: &ast::Expr,
        compare_op: &BinaryOperator,
        right: &ast::Expr,
        all: bool,
    ) -> Result<Expr, PgError> {
        let op = match compare_op {
            BinaryOperator::Eq => BinOp::Eq,
            BinaryOperator::NotEq => BinOp::Ne,
            BinaryOperator::Lt => BinOp::Lt,
            BinaryOperator::LtEq => BinOp::Le,
            BinaryOperator::Gt => BinOp::Gt,
            BinaryOperator::GtEq => BinOp::Ge,
            _ => return Err(unsupported(&node.to_string())),
        };
        let op_at = self.operator_after(left);
        if let ast::Expr::Subquery(query) = right {
            let negated = match (op, all) {
                (BinOp::Eq, false) => false,
                (BinOp::Ne, true) => true,
                _ => return Err(unsupported(&node.to_string())),
            };
            let membership = ast::Expr::In {
                expr: Box::new(left.clone()),
                target: ast::InTarget::Subquery(query.clone()),
                negated,
                global: false,
            };
            return self.expr(scope, &membership, SqlType::Bool);
        }
        let l = self.expr(scope, left, SqlType::Unknown)?;
        let array_hint = l.ty().array_of().unwrap_or(SqlType::Unknown);
        // Typed on its own first, as PostgreSQL types it: only an untyped literal or
        // parameter takes the left side's array type.
        let mut r = self.expr(scope, right, SqlType::Unknown)?;
        if r.ty() == SqlType::Unknown {
            let target = match array_hint {
                SqlType::Unknown => SqlType::Text.array_of().unwrap_or(SqlType::Unknown),
                known => known,
            };
            r = self.convert(r, target, self.statement.position_of(right))?;
        }
        let Some(element) = r.ty().element() else {
            return Err(
                PgError::error("42809", "op ANY/ALL (array) requires array on right side")
                    .at(op_at),
            );
        };
        let l = if l.ty() == SqlType::Unknown {
            self.expr(scope, left, element)?
        } else {
            l
        };
        // Typed as `left op element` would be (42883 where there is no such operator).
        let test = self.binary(op, l, Expr::Const(Value::Null, element), op_at)?;
        let Expr::Binary(_, l, _, _) = test else {
            unreachable!("a comparison gives a binary operation")
        };
        Ok(Expr::Call(
            ScalarFn::AnyAll(op, all),
            vec![*l, r],
            SqlType::Bool,
        ))
    }

    /// `array[index]`: the element (NULL outside the array); an index of another integer or
    /// a `numeric` is converted as an assignment converts it.
    #[inline(never)]
    fn subscript(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
    ) -> Result<Expr, PgError> {
        let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
            return Err(unsupported(&node.to_string()));
        };
        let array = self.expr(scope, root, SqlType::Unknown)?;
        let Some(element) = array.ty().element() else {
            return Err(PgError::error(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    array.ty().name()
                ),
            )
            .at(self.statement.position_of(root)));
        };
        let at = self.statement.position_of(index);
        let i = self.expr(scope, index, SqlType::Int4)?;
        if !(i.ty().is_number() && i.ty() != SqlType::Float8) && i.ty() != SqlType::Unknown {
            return Err(PgError::error(
                sqlstate::DATATYPE_MISMATCH,
                "array subscript must have type integer",
            )
            .at(at));
        }
        let i = self.convert(i, SqlType::Int4, at)?;
        Ok(Expr::Call(ScalarFn::Subscript, vec![array, i], element))
    }

    /// An aggregate call over its analysed arguments: typed as PostgreSQL types it (42883
    /// where it has no such function), its argument wrapped with the `ORDER BY` keys where
    /// [`Aggregate::wrapped`], then `FILTER`ed.
    fn aggregate_call(
        &mut self,
        scope: &Scope<'_>,
        function: &ast::Function,
        aggregate: Aggregate,
        analysed: Vec<Expr>,
        keys: Vec<Expr>,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let name = aggregate.kind.name();
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        // An untyped argument fits several of `sum`'s, `avg`'s and `array_agg`'s signatures,
        // and PostgreSQL refuses to choose; `count(any)` leaves an untyped parameter untyped
        // (42P18 once the statement is read) unless `DISTINCT` needs it compared.
        let untyped = types.first() == Some(&SqlType::Unknown);
        if untyped
            && matches!(
                aggregate.kind,
                AggregateKind::Sum | AggregateKind::Avg | AggregateKind::ArrayAgg
            )
        {
            return Err(ambiguous_function(&format!("{name}(unknown)"), position));
        }
        let mut parts = Vec::with_capacity(analysed.len() + keys.len());
        for value in analysed {
            let left_untyped = aggregate.kind == AggregateKind::Count
                && !aggregate.distinct
                && matches!(value, Expr::Param(..));
            parts.push(if value.ty() == SqlType::Unknown && !left_untyped {
                self.convert(value, SqlType::Text, None)?
            } else {
                value
            });
        }
        let ty = if aggregate.kind == AggregateKind::StringAgg {
            if !types
                .iter()
                .all(|ty| matches!(ty, SqlType::Text | SqlType::Unknown))
            {
                return Err(undefined_function(name, &types, position));
            }
            SqlType::Text
        } else {
            match aggregate.kind.result_type(parts[0].ty()) {
                Some(ty) => ty,
                None => return Err(undefined_function(name, &[parts[0].ty()], position)),
            }
        };
        let argument = if aggregate.wrapped() || aggregate.kind == AggregateKind::StringAgg {
            let Some(wrapper) = parts[0].ty().array_of() else {
                return Err(unsupported(&format!("{name}(...): an aggregate of arrays")));
            };
            parts.extend(keys);
            Expr::Call(ScalarFn::MakeArray, parts, wrapper)
        } else {
            parts.swap_remove(0)
        };
        let argument = self.filtered(scope, function, argument)?;
        Ok(Expr::Aggregate(aggregate, Box::new(argument), ty))
    }

    /// An aggregate call's `ORDER BY`: its keys (analysed over the rows, untyped ones as
    /// text) and how each sorts; none without one. With `DISTINCT` every key must be one of
    /// the arguments (42P10, as PostgreSQL says); more than [`AGGREGATE_ORDER_KEYS`] keys are
    /// 0A000.
    fn aggregate_order(
        &mut self,
        scope: &Scope<'_>,
        order_by: &[ast::OrderByExpr],
        (distinct, arguments): (bool, &[&ast::Expr]),
        node: &ast::Expr,
    ) -> Result<(Option<AggregateOrder>, Vec<Expr>), PgError> {
        if order_by.is_empty() {
            return Ok((None, Vec::new()));
        }
        if order_by.len() > AGGREGATE_ORDER_KEYS {
            return Err(unsupported(&format!(
                "{node}: an aggregate's ORDER BY with more than {AGGREGATE_ORDER_KEYS} keys"
            )));
        }
        if distinct {
            if let Some(stray) = order_by
                .iter()
                .find(|key| !arguments.iter().any(|argument| **argument == key.expr))
            {
                return Err(PgError::error(
                    "42P10",
                    "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
                )
                .at(self.statement.position_of(&stray.expr)));
            }
        }
        let mut order = AggregateOrder {
            keys: 0,
            descending: 0,
            nulls_first: 0,
        };
        let mut keys = Vec::with_capacity(order_by.len());
        for (i, key) in order_by.iter().enumerate() {
            let descending = match &key.options.sort {
                None | Some(ast::OrderBySort::Asc) => false,
                Some(ast::OrderBySort::Desc) => true,
                Some(ast::OrderBySort::Using(_)) => return Err(unsupported(&key.to_string())),
            };
            // NULLs sort as the largest values unless told otherwise.
            let nulls_first = key.options.nulls_first.unwrap_or(descending);
            order.descending |= u8::from(descending) << i;
            order.nulls_first |= u8::from(nulls_first) << i;
            let expr = self.expr(scope, &key.expr, SqlType::Unknown)?;
            keys.push(if expr.ty() == SqlType::Unknown {
                self.convert(expr, SqlType::Text, None)?
            } else {
                expr
            });
        }
        order.keys = u8::try_from(keys.len()).unwrap_or(u8::MAX);
        Ok((Some(order), keys))
    }

    /// `concat_ws`, `array_to_string`, `string_to_array`, `array_position`, `array_remove`,
    /// `cardinality`, `array_length`: their arguments checked and converted as PostgreSQL resolves them (42883 naming the
    /// types where none fits; a value looked for in an array read as its element type).
    fn list_text_call(
        &mut self,
        scope: &Scope<'_>,
        name: &str,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let mut values = self.arguments(scope, arguments)?;
        let types: Vec<SqlType> = values.iter().map(Expr::ty).collect();
        let textual = |ty: &SqlType| matches!(ty, SqlType::Text | SqlType::Unknown);
        let texts = SqlType::Text.array_of().unwrap_or(SqlType::Text);
        let (function, ty) = match (name, types.as_slice()) {
            ("concat_ws", [separator, _, ..]) if textual(separator) => {
                (ScalarFn::ConcatWs, SqlType::Text)
            }
            ("array_to_string", [array, rest @ ..])
                if array.element().is_some()
                    && (1..=2).contains(&rest.len())
                    && rest.iter().all(textual) =>
            {
                (ScalarFn::ArrayToString, SqlType::Text)
            }
            ("string_to_array", all @ [_, _, ..]) if all.len() <= 3 && all.iter().all(textual) => {
                (ScalarFn::StringToArray, texts)
            }
            ("array_position", [array, _]) if array.element().is_some() => {
                (ScalarFn::ArrayPosition, SqlType::Int4)
            }
            ("array_remove", [array, _]) if array.element().is_some() => {
                (ScalarFn::ArrayRemove, *array)
            }
            ("cardinality", [array]) if array.element().is_some() => {
                (ScalarFn::Cardinality, SqlType::Int4)
            }
            ("array_length", [array, dimension])
                if array.element().is_some()
                    && matches!(dimension, SqlType::Int2 | SqlType::Int4 | SqlType::Unknown) =>
            {
                (ScalarFn::ArrayLength, SqlType::Int4)
            }
            _ => return Err(undefined_function(name, &types, position)),
        };
        if matches!(function, ScalarFn::ArrayPosition | ScalarFn::ArrayRemove) {
            let element = types[0].element().unwrap_or(SqlType::Text);
            let value = self.expr(scope, arguments[1], element)?;
            // Compared as `=` compares them (42883 naming the function where there is no
            // such operator).
            let value_type = value.ty();
            let test = self
                .binary(
                    BinOp::Eq,
                    Expr::Const(Value::Null, element),
                    value,
                    position,
                )
                .map_err(|_| undefined_function(name, &[types[0], value_type], position))?;
            let Expr::Binary(_, _, value, _) = test else {
                unreachable!("a comparison gives a binary operation")
            };
            values[1] = *value;
        } else if function == ScalarFn::ArrayLength {
            values[1] = self.convert(values[1].clone(), SqlType::Int4, position)?;
        } else {
            for value in values.iter_mut() {
                if value.ty() == SqlType::Unknown {
                    *value = self.convert(value.clone(), SqlType::Text, None)?;
                }
            }
        }
        Ok(Expr::Call(function, values, ty))
    }

    /// `a || b` with an array on one side: two arrays of one type, or an array and a value of
    /// its element type (an untyped one read as the element); None where neither fits.
    fn array_concat(
        &mut self,
        l: Expr,
        r: Expr,
        position: Option<u32>,
    ) -> Result<Option<Expr>, PgError> {
        let (lt, rt) = (l.ty(), r.ty());
        let (left_is_array, right_is_array, ty) = match (lt.element(), rt.element()) {
            (Some(_), Some(_)) if lt == rt => (true, true, lt),
            (Some(element), None)
                if element == rt
                    || rt == SqlType::Unknown
                    || (element.is_number() && rt.is_number()) =>
            {
                (true, false, lt)
            }
            (None, Some(element))
                if element == lt
                    || lt == SqlType::Unknown
                    || (element.is_number() && lt.is_number()) =>
            {
                (false, true, rt)
            }
            _ => return Ok(None),
        };
        let element = ty.element().unwrap_or(SqlType::Unknown);
        let l = if left_is_array {
            l
        } else {
            self.convert(l, element, position)?
        };
        let r = if right_is_array {
            r
        } else {
            self.convert(r, element, position)?
        };
        Ok(Some(Expr::Call(
            ScalarFn::ArrayConcat(left_is_array, right_is_array),
            vec![l, r],
            ty,
        )))
    }

    /// `nullif(a, b)`: NULL when `a = b`, else `a`, typed as PostgreSQL types it: `a` as the
    /// `=` operator takes it (promoted to `numeric` or `double precision` to meet `b`; the
    /// integer types compare across sizes unpromoted).
    fn nullif(
        &mut self,
        scope: &Scope<'_>,
        a: &ast::Expr,
        b: &ast::Expr,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        // As for `a = b`: a literal takes the other side's type, where it stands.
        let mut l = self.expr(scope, a, SqlType::Unknown)?;
        let r = self.expr(scope, b, l.ty())?;
        if l.ty() == SqlType::Unknown && r.ty() != SqlType::Unknown {
            l = self.expr(scope, a, r.ty())?;
        }
        let test = self.binary(BinOp::Eq, l, r, position)?;
        let Expr::Binary(_, l, r, _) = &test else {
            unreachable!("binary() makes a binary expression");
        };
        let (lt, rt) = (l.ty(), r.ty());
        let integer = SqlType::is_integer;
        let ty = if lt.is_number() && rt.is_number() && !(integer(lt) && integer(rt)) {
            if lt == SqlType::Float8 || rt == SqlType::Float8 {
                SqlType::Float8
            } else {
                SqlType::Numeric
            }
        } else {
            lt
        };
        // One node that evaluates `a` once (a CASE would hold it twice, and nested NULLIFs
        // would double at every level).
        let as_oids = lt == SqlType::RegType && rt == SqlType::RegType;
        let Expr::Binary(_, l, r, _) = test else {
            unreachable!("binary() makes a binary expression");
        };
        let nullif = Expr::Call(ScalarFn::NullIf(as_oids), vec![*l, *r], lt);
        self.convert(nullif, ty, position)
    }

    /// A function's arguments, each analysed with no type expected.
    fn arguments(
        &mut self,
        scope: &Scope<'_>,
        arguments: &[&ast::Expr],
    ) -> Result<Vec<Expr>, PgError> {
        arguments
            .iter()
            .map(|argument| self.expr(scope, argument, SqlType::Unknown))
            .collect()
    }

    /// The functions that take their arguments by their text forms, whatever their types:
    /// `concat(values...)`, `format(formatstr, args...)` (the format a `text`),
    /// `quote_literal(value)` and `quote_nullable(value)`; an untyped literal is `text`. None
    /// for any other name; no arguments, other counts or a format of another type are
    /// PostgreSQL's 42883.
    fn text_of_any_call(
        &mut self,
        scope: &Scope<'_>,
        name: &str,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Option<Expr>, PgError> {
        let function = match name {
            "concat" => ScalarFn::Concat,
            "format" => ScalarFn::Format,
            "quote_literal" => ScalarFn::QuoteLiteral,
            "quote_nullable" => ScalarFn::QuoteNullable,
            _ => return Ok(None),
        };
        let analysed = self.arguments(scope, arguments)?;
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        let fits = match function {
            ScalarFn::Concat => !types.is_empty(),
            ScalarFn::Format => types
                .first()
                .is_some_and(|ty| matches!(ty, SqlType::Text | SqlType::Unknown)),
            _ => types.len() == 1,
        };
        if !fits {
            return Err(undefined_function(name, &types, position));
        }
        let mut converted = Vec::with_capacity(analysed.len());
        for argument in analysed {
            converted.push(if argument.ty() == SqlType::Unknown {
                self.convert(argument, SqlType::Text, None)?
            } else {
                argument
            });
        }
        Ok(Some(Expr::Call(function, converted, SqlType::Text)))
    }

    /// `substr(text, start [, count])` (also written `substring(...)`, with `FROM`/`FOR`):
    /// a text and one or two `integer`s, else PostgreSQL's 42883 naming the types.
    fn substr_call(
        &mut self,
        scope: &Scope<'_>,
        name: &str,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let analysed = self.arguments(scope, arguments)?;
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        // `substring` also takes a pattern (`substring(t FROM 'a.c')`): not run here.
        if name == "substring" && matches!(types.get(1), Some(SqlType::Text | SqlType::Unknown)) {
            return Err(unsupported(&format!(
                "substring with a pattern: {}",
                arguments
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let fits = matches!(types.len(), 2 | 3)
            && matches!(types[0], SqlType::Text | SqlType::Unknown)
            && types[1..]
                .iter()
                .all(|t| matches!(t, SqlType::Int2 | SqlType::Int4 | SqlType::Unknown));
        if !fits {
            return Err(undefined_function(name, &types, position));
        }
        let mut converted = Vec::with_capacity(analysed.len());
        for (index, argument) in analysed.into_iter().enumerate() {
            let ty = if index == 0 {
                SqlType::Text
            } else {
                SqlType::Int4
            };
            converted.push(self.convert(argument, ty, None)?);
        }
        Ok(Expr::Call(ScalarFn::Substr, converted, SqlType::Text))
    }

    /// An advisory lock function (`advisory.rs`): no argument for `pg_advisory_unlock_all`,
    /// else one `bigint` or two `integer`s (an unknown literal or parameter takes the type),
    /// else PostgreSQL's 42883 naming the types. Never inlined: it would grow the frame of the
    /// recursive `expr` that calls it.
    #[inline(never)]
    fn advisory_call(
        &mut self,
        scope: &Scope<'_>,
        function: AdvisoryFn,
        name: &str,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let wanted = match (function.action, arguments.len()) {
            (AdvisoryAction::UnlockAll, 0) => None,
            (AdvisoryAction::UnlockAll, _) => Some(SqlType::Unknown),
            (_, 1) => Some(SqlType::Int8),
            (_, 2) => Some(SqlType::Int4),
            _ => Some(SqlType::Unknown),
        };
        let mut analysed = Vec::with_capacity(arguments.len());
        for argument in arguments {
            analysed.push(self.expr(scope, argument, wanted.unwrap_or(SqlType::Unknown))?);
        }
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        // An `integer` parameter arrives here as `bigint` when the statement is planned again
        // to run (the values carry no narrower type); its declared type was checked when the
        // statement was parsed.
        let fits = |expr: &Expr| match (wanted, expr.ty()) {
            (Some(SqlType::Int8), ty) => ty.is_integer() || ty == SqlType::Unknown,
            (Some(SqlType::Int4), SqlType::Int2 | SqlType::Int4 | SqlType::Unknown) => true,
            (Some(SqlType::Int4), SqlType::Int8) => {
                self.typed_by_values && matches!(expr, Expr::Param(..))
            }
            _ => false,
        };
        if wanted == Some(SqlType::Unknown) || !analysed.iter().all(fits) {
            return Err(undefined_function(name, &types, position));
        }
        let mut converted = Vec::with_capacity(analysed.len());
        for (argument, node) in analysed.into_iter().zip(arguments) {
            let at = self.statement.position_of(*node);
            converted.push(self.convert(argument, wanted.unwrap_or(SqlType::Int8), at)?);
        }
        Ok(Expr::Advisory(function, converted))
    }

    /// A function of the session (`current_user`, `current_database()`, ...), written as it
    /// may be: `current_user()` is PostgreSQL's syntax error at the parenthesis,
    /// `pg_backend_pid(1)` its 42883.
    fn session_function(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        function: &ast::Function,
        session_fn: SessionFn,
        parentheses: Parentheses,
    ) -> Result<Expr, PgError> {
        let position = self.statement.position_of(node);
        let plain = function.over.is_none()
            && function.within_group.is_empty()
            && function.filter.is_none()
            && matches!(function.parameters, FunctionArguments::None);
        let list = match &function.args {
            FunctionArguments::None if plain && parentheses != Parentheses::Required => {
                return Ok(Expr::Session(session_fn));
            }
            FunctionArguments::List(list) if plain && list.clauses.is_empty() => list,
            _ => return Err(unsupported(&node.to_string())),
        };
        if parentheses == Parentheses::Never {
            let name_bytes = u32::try_from(function.name.to_string().len()).unwrap_or(0);
            return Err(PgError::syntax_error_near("(").at(position.map(|p| p + name_bytes)));
        }
        let Some(arguments) = plain_arguments(&list.args) else {
            return Err(unsupported(&node.to_string()));
        };
        if !arguments.is_empty() || list.duplicate_treatment.is_some() {
            let types: Vec<SqlType> = self
                .arguments(scope, &arguments)?
                .iter()
                .map(Expr::ty)
                .collect();
            let name = function.name.to_string().to_lowercase();
            return Err(undefined_function(&name, &types, position));
        }
        Ok(Expr::Session(session_fn))
    }

    /// `nextval(regclass)`, `currval(regclass)`, `setval(regclass, bigint [, boolean])`,
    /// `lastval()`. A name written as a literal is looked up now, as PostgreSQL reads a
    /// `regclass` constant while it analyses the statement (42P01 pointing at it); one given
    /// as a parameter when the call runs.
    fn sequence_call(
        &mut self,
        scope: &Scope<'_>,
        function: SequenceFn,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let wanted: &[SqlType] = match (function, arguments.len()) {
            (SequenceFn::LastVal, 0) => &[],
            (SequenceFn::NextVal | SequenceFn::CurrVal, 1) => &[SqlType::Text],
            (SequenceFn::SetVal, 2) => &[SqlType::Text, SqlType::Int8],
            (SequenceFn::SetVal, 3) => &[SqlType::Text, SqlType::Int8, SqlType::Bool],
            _ => {
                let analysed = self.arguments(scope, arguments)?;
                let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
                return Err(undefined_function(function.name(), &types, position));
            }
        };
        let mut converted = Vec::with_capacity(arguments.len());
        for (node, ty) in arguments.iter().zip(wanted) {
            let at = self.statement.position_of(*node);
            let analysed = self.expr(scope, node, *ty)?;
            let fits = match ty {
                SqlType::Text => matches!(analysed.ty(), SqlType::Text | SqlType::Unknown),
                SqlType::Int8 => analysed.ty().is_integer() || analysed.ty() == SqlType::Unknown,
                _ => matches!(analysed.ty(), SqlType::Bool | SqlType::Unknown),
            };
            if !fits {
                let types: Vec<SqlType> = converted
                    .iter()
                    .map(Expr::ty)
                    .chain([analysed.ty()])
                    .collect();
                return Err(undefined_function(function.name(), &types, position));
            }
            converted.push(self.convert(analysed, *ty, at)?);
        }
        if let Some(Expr::Const(Value::Text(text), _)) = converted.first() {
            let name = relation_name(text).map_err(|e| e.at(position_of_first(self, arguments)))?;
            if !self.sequences.contains_key(name.as_str())
                && !self.tables.contains_key(name.as_str())
                && column_sequence(self.tables, &name).is_none()
            {
                return Err(missing_relation(&name).at(position_of_first(self, arguments)));
            }
        }
        Ok(Expr::VolatileCall(
            VolatileFn::Sequence(function),
            converted,
        ))
    }

    /// `random()`, `setseed(double precision)`, `gen_random_uuid()`, `pg_sleep(double
    /// precision)` (`random.rs`), `current_setting` and `set_config` (`settings.rs`): 42883
    /// for other arguments, as for any function without a match.
    fn volatile_call(
        &mut self,
        scope: &Scope<'_>,
        function: VolatileFn,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let wanted = function.parameters();
        let analysed = self.arguments(scope, arguments)?;
        let fits = analysed.len() == wanted.len()
            && analysed.iter().zip(wanted).all(|(argument, ty)| {
                let from = argument.ty();
                from == *ty || from == SqlType::Unknown || implicitly_castable(from, *ty)
            });
        if !fits {
            let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
            return Err(undefined_function(function.name(), &types, position));
        }
        let mut converted = Vec::with_capacity(analysed.len());
        for ((argument, ty), node) in analysed.into_iter().zip(wanted).zip(arguments) {
            let at = self.statement.position_of(*node);
            converted.push(self.convert(argument, *ty, at)?);
        }
        // A stable call runs before the statement, so its arguments cannot read a row.
        if function.is_stable() && !converted.iter().all(reads_no_row) {
            return Err(unsupported(&format!(
                "{}() with an argument that is not a constant or a parameter",
                function.name()
            )));
        }
        Ok(Expr::VolatileCall(function, converted))
    }

    /// `make_interval(years, months, weeks, days, hours, mins, secs)` with its arguments by
    /// position or by name (`make_interval(secs => 30)`), the ones not given 0: integers but
    /// for `secs`, `double precision`; 42883 naming what was given otherwise, as PostgreSQL
    /// names it (`make_interval(days => numeric)`).
    fn make_interval_call(
        &mut self,
        scope: &Scope<'_>,
        arguments: &[ast::FunctionArg],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        const NAMES: [&str; 7] = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
        let mut slots: [Option<Expr>; 7] = Default::default();
        // What was given, for the 42883 message; the names given, to refuse a repeat.
        let mut given: Vec<String> = Vec::new();
        let mut names_given: Vec<String> = Vec::new();
        let mut fits = true;
        for (index, argument) in arguments.iter().enumerate() {
            let (slot, node, label) = match argument {
                ast::FunctionArg::Unnamed(FunctionArgExpr::Expr(node)) => {
                    (Some(index).filter(|&i| i < NAMES.len()), node, None)
                }
                // `name => value` or `name := value`.
                ast::FunctionArg::Named {
                    name,
                    arg: FunctionArgExpr::Expr(node),
                    operator:
                        ast::FunctionArgOperator::RightArrow | ast::FunctionArgOperator::Assignment,
                }
                | ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(name),
                    arg: FunctionArgExpr::Expr(node),
                    operator:
                        ast::FunctionArgOperator::RightArrow | ast::FunctionArgOperator::Assignment,
                } => {
                    let label = ident_name(name);
                    if names_given.contains(&label) {
                        let at = self.statement.position(name.span.start);
                        return Err(PgError::error(
                            "42601",
                            format!("argument name \"{label}\" used more than once"),
                        )
                        .at(at));
                    }
                    names_given.push(label.clone());
                    (NAMES.iter().position(|n| *n == label), node, Some(label))
                }
                _ => return Err(unsupported(&format!("make_interval({argument})"))),
            };
            let analysed = self.expr(scope, node, SqlType::Unknown)?;
            let ty = analysed.ty();
            given.push(match &label {
                Some(label) => format!("{label} => {}", ty.name()),
                None => ty.name().to_string(),
            });
            let want = if slot == Some(6) {
                SqlType::Float8
            } else {
                SqlType::Int4
            };
            let fits_slot = ty == want || ty == SqlType::Unknown || implicitly_castable(ty, want);
            match slot {
                Some(slot) if fits_slot && slots[slot].is_none() => {
                    let at = self.statement.position_of(node);
                    slots[slot] = Some(self.convert(analysed, want, at)?);
                }
                _ => fits = false,
            }
        }
        if !fits {
            let error = undefined_function("make_interval", &[], position);
            return Err(PgError {
                message: format!(
                    "function make_interval({}) does not exist",
                    given.join(", ")
                ),
                ..error
            });
        }
        let zero = |slot: usize| {
            if slot == 6 {
                Expr::Const(Value::Float(Float(0.0)), SqlType::Float8)
            } else {
                Expr::Const(Value::Int(0), SqlType::Int4)
            }
        };
        let arguments: Vec<Expr> = slots
            .into_iter()
            .enumerate()
            .map(|(slot, given)| given.unwrap_or_else(|| zero(slot)))
            .collect();
        Ok(Expr::Call(
            ScalarFn::MakeInterval,
            arguments,
            SqlType::Interval,
        ))
    }

    /// `age(a, b)` or `age(t)` (from midnight of the statement's day, `current_date` read as
    /// the argument's type): two timestamps of one type, an untyped one read as the other's
    /// (two untyped as `timestamptz`, PostgreSQL's preferred type), a `timestamp` beside a
    /// `timestamptz` read as the latter. `age(xid)` is not run here.
    fn age_call(&mut self, values: &mut Vec<Expr>, position: Option<u32>) -> Result<Expr, PgError> {
        use SqlType::{Timestamp, TimestampTz, Unknown};
        let types: Vec<SqlType> = values.iter().map(Expr::ty).collect();
        let fits = |ty: SqlType| ty.is_timestamp() || ty == Unknown;
        if !types.iter().all(|&ty| fits(ty)) {
            if types.contains(&SqlType::Xid) {
                return Err(unsupported("age(xid)"));
            }
            return Err(undefined_function("age", &types, position));
        }
        if types == [Unknown] {
            return Err(ambiguous_function("age(unknown)", position));
        }
        let ty = if types.contains(&Timestamp) && !types.contains(&TimestampTz) {
            Timestamp
        } else {
            TimestampTz
        };
        if values.len() == 1 {
            let clock = if ty == Timestamp {
                ClockFn::LocalTransaction
            } else {
                ClockFn::Transaction
            };
            let day = Expr::Const(Value::Text("day".to_string()), SqlType::Text);
            let midnight = Expr::Call(ScalarFn::DateTrunc, vec![day, Expr::Clock(clock)], ty);
            values.insert(0, midnight);
        }
        let mut converted = Vec::with_capacity(2);
        for value in values.drain(..) {
            converted.push(self.convert(value, ty, position)?);
        }
        Ok(Expr::Call(ScalarFn::Age, converted, SqlType::Interval))
    }

    /// `extract(field FROM value)` (`ScalarFn::Extract`, `numeric`) or `date_part(unit,
    /// value)` (`ScalarFn::DatePart`, `double precision`) of a timestamp or an interval: the
    /// unit is read when a row is (its errors are the row's, as PostgreSQL's are).
    fn time_part_call(
        &mut self,
        function: ScalarFn,
        unit: Expr,
        value: Expr,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let (name, ty) = match function {
            ScalarFn::Extract => ("pg_catalog.extract", SqlType::Numeric),
            _ => ("date_part", SqlType::Float8),
        };
        let types = [unit.ty(), value.ty()];
        if value.ty() == SqlType::Unknown {
            let signature = format!("{name}({}, unknown)", types[0].name());
            return Err(ambiguous_function(&signature, position));
        }
        let timelike = value.ty().is_timestamp() || value.ty() == SqlType::Interval;
        if !matches!(unit.ty(), SqlType::Text | SqlType::Unknown) || !timelike {
            return Err(undefined_function(name, &types, position));
        }
        let unit = self.convert(unit, SqlType::Text, None)?;
        Ok(Expr::Call(function, vec![unit, value], ty))
    }

    /// Where the `::` of a cast of `expr` stands: the first one after `expr`, and after a
    /// cast `expr` is itself (`3::bigint::boolean`: its span ends before its type), the first
    /// one after that cast's own `::`.
    fn double_colon_after(&self, expr: &ast::Expr) -> Option<u32> {
        if let ast::Expr::Cast {
            expr: inner,
            kind: ast::CastKind::DoubleColon,
            data_type,
            ..
        } = expr
        {
            if !matches!(data_type, DataType::Array(_)) {
                let inner_at = self.double_colon_after(inner)?;
                return self.statement.text_from(inner_at + 2, "::");
            }
        }
        self.operator_after(expr)
            .and_then(|after| self.statement.text_from(after.saturating_sub(1), "::"))
    }

    /// Where an operator written after `left` is (PostgreSQL's position of `+`, `LIKE`,
    /// `IN`, ...): one character past the end of its left operand.
    fn operator_after(&self, left: &ast::Expr) -> Option<u32> {
        if let ast::Expr::Nested(inner) = left {
            // What follows the inner operand is this level's `)`; the operator follows it.
            let closing = self.operator_after(inner)?;
            return match self.statement.text_from(closing, ")") {
                Some(at) if at == closing => self.statement.next_word_at(closing + 1),
                _ => Some(closing),
            };
        }
        let after = self
            .statement
            .position(ast::Spanned::span(left).end)
            .map(|p| p + 1)?;
        if let ast::Expr::Cast {
            kind: ast::CastKind::DoubleColon,
            data_type,
            ..
        } = left
        {
            if !matches!(data_type, DataType::Array(_)) {
                // The span stops before `::type`: the operator follows the type's name.
                // (The span of a quoted literal ends one character later than others'.)
                let starts_cast = |at: u32| self.statement.text_from(at, "::") == Some(at);
                return [after.saturating_sub(1), after]
                    .into_iter()
                    .filter_map(|at| self.statement.next_word_at(at))
                    .find(|&at| starts_cast(at))
                    .and_then(|at| self.statement.after_casts(at))
                    .or(Some(after));
            }
        }
        if !matches!(
            left,
            ast::Expr::Cast {
                kind: ast::CastKind::DoubleColon,
                data_type: DataType::Array(_),
                ..
            } | ast::Expr::Array(_)
        ) {
            let start = self.statement.position(ast::Spanned::span(left).start);
            let past = start.and_then(|start| self.statement.past_operand(start, after));
            return past.or(Some(after));
        }
        // `ARRAY[...]` or a cast to an array type: the span stops before the closing
        // bracket, and before `::type[]`.
        let starts_with = |at: u32, text: &str| self.statement.text_from(at, text) == Some(at);
        // (The span of a quoted literal ends one character later than others'.)
        let mut at = if starts_with(after.saturating_sub(1), "::") {
            after - 1
        } else {
            after
        };
        for _ in 0..4 {
            at = self.statement.next_word_at(at)?;
            if starts_with(at, "]") {
                at += 1;
            } else if starts_with(at, "::") && matches!(left, ast::Expr::Cast { .. }) {
                at = self.statement.text_from(at, "]")? + 1;
            } else {
                break;
            }
        }
        Some(at)
    }

    /// A function of [`signatures`]: the first signature the argument types match exactly
    /// (an unknown literal or parameter matches any type), else the first they reach by
    /// implicit casts (`integer` → `bigint` → `numeric` → `double precision`), which puts
    /// `double precision` first where PostgreSQL prefers it; else 42883 naming the types.
    fn signature_call(
        &mut self,
        scope: &Scope<'_>,
        function: ScalarFn,
        name: &str,
        arguments: &[&ast::Expr],
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let analysed = self.arguments(scope, arguments)?;
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        // PostgreSQL also has `trunc(macaddr)` and `trunc(macaddr8)`: an unknown literal
        // alone fits types of two categories, which it refuses to choose between.
        if function == ScalarFn::Trunc && types == [SqlType::Unknown] {
            return Err(ambiguous_function(&format!("{name}(unknown)"), position));
        }
        let candidates = signatures(function);
        let matching = |fits: &dyn Fn(SqlType, SqlType) -> bool| {
            candidates.iter().find(|(takes, _)| {
                takes.len() == types.len()
                    && takes
                        .iter()
                        .zip(&types)
                        .all(|(&want, &have)| have == SqlType::Unknown || fits(have, want))
            })
        };
        if function == ScalarFn::Power && types.contains(&SqlType::Numeric) {
            // PostgreSQL would choose `power(numeric, numeric)`.
            return Err(numeric_power_refused(&format!("{name}(numeric, numeric)")));
        }
        let chosen = matching(&|have, want| have == want)
            .or_else(|| matching(&|have, want| have == want || implicitly_castable(have, want)));
        let Some((takes, answers)) = chosen else {
            return Err(undefined_function(name, &types, position));
        };
        let mut converted = Vec::with_capacity(analysed.len());
        for ((argument, node), &ty) in analysed.into_iter().zip(arguments).zip(takes.iter()) {
            let at = self.statement.position_of(*node);
            converted.push(self.convert(argument, ty, at)?);
        }
        Ok(Expr::Call(function, converted, *answers))
    }

    /// A subquery's plan and the type of its one column (`one_column`: a scalar or `IN`
    /// subquery must have one, else 42601 with this message and position). It may read the
    /// columns of the statement it stands in (correlated, [`Expr::Outer`]); one that reads a
    /// statement further out is 0A000.
    #[inline(never)]
    fn subquery(
        &mut self,
        scope: &Scope<'_>,
        query: &ast::Query,
        one_column: Option<(&str, Option<u32>)>,
    ) -> Result<(Plan, SqlType), PgError> {
        let outer_aggregate = self.aggregate_at.take();
        let before = self.outer.replace(Rc::new(OuterScope {
            sources: scope
                .sources()
                .into_iter()
                .map(|(def, shown, offset)| (def.clone(), shown.to_string(), offset))
                .collect(),
            items: scope.items(),
        }));
        let analysed = self.query(query);
        self.outer = before;
        self.aggregate_at = outer_aggregate;
        let plan = analysed.map_err(|error| {
            // A column the subquery does not have, or a table qualifier it does not know
            // (`j.id`), that the outer statement has: a correlated subquery.
            let missing = error.message.split('"').nth(1).unwrap_or_default();
            let outer_reference = match error.code {
                sqlstate::UNDEFINED_COLUMN => scope.has_column(missing),
                sqlstate::UNDEFINED_TABLE => {
                    error.message.starts_with("missing FROM-clause entry")
                        && scope
                            .sources()
                            .iter()
                            .any(|(def, shown, _)| *shown == missing || &*def.name == missing)
                }
                _ => false,
            };
            if outer_reference {
                unsupported(&format!(
                    "a subquery that reads the columns of a statement two levels out: ({query})"
                ))
            } else {
                error
            }
        })?;
        let ty = match (plan.items.as_slice(), one_column) {
            ([(_, only)], _) => only.ty(),
            (_, None) => SqlType::Bool,
            (_, Some((message, at))) => {
                return Err(PgError::error(sqlstate::SYNTAX_ERROR, message).at(at))
            }
        };
        let ty = if ty == SqlType::Unknown {
            SqlType::Text
        } else {
            ty
        };
        Ok((Plan::Select(Box::new(plan)), ty))
    }

    /// Records a subquery: an uncorrelated one to run before the statement, a correlated one
    /// (it reads the statement's row) to run for each row of the statement, its value put
    /// after the row's columns, where the returned expression reads it. Its place in an
    /// expression.
    fn add_subquery(
        &mut self,
        scope: &Scope<'_>,
        kind: SubqueryKind,
        plan: Plan,
        ty: SqlType,
    ) -> Expr {
        let Plan::Select(select) = plan else {
            unreachable!("a subquery is a SELECT")
        };
        if reads_outer(&select) {
            let width: usize = scope
                .sources()
                .iter()
                .map(|(def, _, _)| def.columns.len())
                .sum();
            self.correlated.push(Subquery {
                kind,
                plan: Box::new(Plan::Select(select)),
            });
            return Expr::Column(width + self.correlated.len() - 1, ty);
        }
        self.subqueries.push(Subquery {
            kind,
            plan: Box::new(Plan::Select(select)),
        });
        Expr::Subquery {
            index: self.subqueries.len() - 1,
            ty,
        }
    }

    /// `value [NOT] LIKE pattern [ESCAPE e]` and `ILIKE`: text on both sides (an unknown
    /// literal or parameter becomes text), else 42883 naming the operator (`~~`, `!~~`,
    /// `~~*`, `!~~*`) as PostgreSQL does.
    #[inline(never)]
    fn like(
        &mut self,
        scope: &Scope<'_>,
        value: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        negated: bool,
        case_insensitive: bool,
    ) -> Result<Expr, PgError> {
        let symbol = match (negated, case_insensitive) {
            (false, false) => "~~",
            (true, false) => "!~~",
            (false, true) => "~~*",
            (true, true) => "!~~*",
        };
        let (left, mut right) = self.text_operands(scope, value, pattern, symbol)?;
        if let Some(escape) = escape {
            let position = self.statement.position_of(escape);
            right = self.signature_call(
                scope,
                ScalarFn::LikeEscape,
                "like_escape",
                &[pattern, escape],
                position,
            )?;
        }
        let function = if case_insensitive {
            ScalarFn::ILike
        } else {
            ScalarFn::Like
        };
        let test = Expr::Call(function, vec![left, right], SqlType::Bool);
        Ok(negated_if(negated, test))
    }

    /// The two operands of a text operator (`LIKE` as `~~`, `~`, ...), each analysed alone and
    /// then read as text (an unknown literal too); 42883 at the operator naming `symbol` when
    /// either is of another type.
    fn text_operands(
        &mut self,
        scope: &Scope<'_>,
        value: &ast::Expr,
        pattern: &ast::Expr,
        symbol: &str,
    ) -> Result<(Expr, Expr), PgError> {
        let text = |t: SqlType| matches!(t, SqlType::Text | SqlType::Unknown);
        let left = self.expr(scope, value, SqlType::Unknown)?;
        let right = self.expr(scope, pattern, SqlType::Unknown)?;
        if !(text(left.ty()) && text(right.ty())) {
            let at = self.operator_after(value);
            return Err(undefined_operator(left.ty(), symbol, right.ty(), at));
        }
        let left = self.convert(left, SqlType::Text, self.statement.position_of(value))?;
        let right = self.convert(right, SqlType::Text, self.statement.position_of(pattern))?;
        Ok((left, right))
    }

    /// `value ~ pattern` and its kin (`~*`, `!~`, `!~*`): both sides text (an unknown literal
    /// read as text), else 42883 naming the operator as `LIKE`'s is named.
    fn regex_operator(
        &mut self,
        scope: &Scope<'_>,
        value: &ast::Expr,
        pattern: &ast::Expr,
        op: &BinaryOperator,
    ) -> Result<Expr, PgError> {
        let (left, right) = self.text_operands(scope, value, pattern, &op.to_string())?;
        let (function, negated) = match op {
            BinaryOperator::PGRegexIMatch => (ScalarFn::RegexIMatch, false),
            BinaryOperator::PGRegexNotMatch => (ScalarFn::RegexMatch, true),
            BinaryOperator::PGRegexNotIMatch => (ScalarFn::RegexIMatch, true),
            _ => (ScalarFn::RegexMatch, false),
        };
        let test = Expr::Call(function, vec![left, right], SqlType::Bool);
        Ok(negated_if(negated, test))
    }

    /// `a ^ b`: `double precision` when neither operand is `numeric` (integers and untyped
    /// literals become `double precision`, its category's preferred type); `numeric ^` is
    /// 0A000; anything else 42883 at the operator.
    #[inline(never)]
    fn power_operator(
        &mut self,
        scope: &Scope<'_>,
        left: &ast::Expr,
        right: &ast::Expr,
    ) -> Result<Expr, PgError> {
        // An untyped literal is read as `double precision` where it stands (its 22P02 points
        // at it).
        let mut l = self.expr(scope, left, SqlType::Unknown)?;
        if l.ty() == SqlType::Unknown {
            l = self.convert(l, SqlType::Float8, self.statement.position_of(left))?;
        }
        let mut r = self.expr(scope, right, SqlType::Unknown)?;
        if r.ty() == SqlType::Unknown {
            r = self.convert(r, SqlType::Float8, self.statement.position_of(right))?;
        }
        let at = self.operator_after(left);
        let (lt, rt) = (l.ty(), r.ty());
        // Untyped operands are `double precision` by now.
        if !lt.is_number() || !rt.is_number() {
            return Err(undefined_operator(lt, "^", rt, at));
        }
        if lt == SqlType::Numeric || rt == SqlType::Numeric {
            return Err(numeric_power_refused("numeric ^ numeric"));
        }
        let l = self.convert(l, SqlType::Float8, at)?;
        let r = self.convert(r, SqlType::Float8, at)?;
        Ok(Expr::Call(ScalarFn::Power, vec![l, r], SqlType::Float8))
    }

    /// The integer bit operators: `&`, `|` and `#` on the wider of two `smallint`, `integer`
    /// or `bigint` operands (an untyped one takes the other's type; two are 42725), `<<` and
    /// `>>` on the left operand's type with an `integer` count (an untyped operand is an
    /// `integer`); anything else 42883 at the operator.
    #[inline(never)]
    fn bitwise_operator(
        &mut self,
        scope: &Scope<'_>,
        left: &ast::Expr,
        op: &BinaryOperator,
        right: &ast::Expr,
    ) -> Result<Expr, PgError> {
        let symbol = op.to_string();
        let shift = matches!(
            op,
            BinaryOperator::PGBitwiseShiftLeft | BinaryOperator::PGBitwiseShiftRight
        );
        let mut l = self.expr(scope, left, SqlType::Unknown)?;
        let mut r = self.expr(scope, right, SqlType::Unknown)?;
        let at = self.operator_after(left);
        // An untyped operand is read as the type it takes where it stands (its 22P02 points
        // at it).
        let left_at = self.statement.position_of(left);
        let right_at = self.statement.position_of(right);
        if shift {
            if l.ty() == SqlType::Unknown {
                l = self.convert(l, SqlType::Int4, left_at)?;
            }
            if r.ty() == SqlType::Unknown {
                r = self.convert(r, SqlType::Int4, right_at)?;
            }
        } else {
            match (l.ty(), r.ty()) {
                (SqlType::Unknown, SqlType::Unknown) => {
                    return Err(operator_not_unique(
                        &format!("unknown {symbol} unknown"),
                        at,
                    ));
                }
                (SqlType::Unknown, ty) if integer_type(ty) => l = self.convert(l, ty, left_at)?,
                (ty, SqlType::Unknown) if integer_type(ty) => r = self.convert(r, ty, right_at)?,
                _ => {}
            }
        }
        let (lt, rt) = (l.ty(), r.ty());
        let fits = if shift {
            integer_type(lt) && matches!(rt, SqlType::Int2 | SqlType::Int4)
        } else {
            integer_type(lt) && integer_type(rt)
        };
        if !fits {
            return Err(undefined_operator(lt, &symbol, rt, at));
        }
        let bits = |ty: SqlType| match ty {
            SqlType::Int2 => 16,
            SqlType::Int4 => 32,
            _ => 64,
        };
        let (function, ty) = match op {
            BinaryOperator::PGBitwiseShiftLeft => (ScalarFn::ShiftLeft(bits(lt)), lt),
            BinaryOperator::PGBitwiseShiftRight => (ScalarFn::ShiftRight(bits(lt)), lt),
            _ => {
                let wider = if bits(lt) >= bits(rt) { lt } else { rt };
                let function = match op {
                    BinaryOperator::BitwiseAnd => ScalarFn::BitAnd,
                    BinaryOperator::BitwiseOr => ScalarFn::BitOr,
                    _ => ScalarFn::BitXor,
                };
                (function, wider)
            }
        };
        let (l, r) = if shift {
            (l, self.convert(r, SqlType::Int4, at)?)
        } else {
            (self.convert(l, ty, at)?, self.convert(r, ty, at)?)
        };
        Ok(Expr::Call(function, vec![l, r], ty))
    }

    /// A binary operator's two operands, typed as PostgreSQL types them: the left one alone
    /// (an unknown literal stays unknown), the right one by the left's type, then an unknown
    /// left one again by the right's. Inlined: it runs inside the recursive `expr`, whose frame
    /// a deep chain of operators stacks once per level.
    #[inline(always)]
    fn typed_operands(
        &mut self,
        scope: &Scope<'_>,
        left: &ast::Expr,
        right: &ast::Expr,
        op: BinOp,
    ) -> Result<(Expr, Expr), PgError> {
        let mut l = self.expr(scope, left, SqlType::Unknown)?;
        let r = self.expr(scope, right, untyped_operand_type(op, l.ty()))?;
        if l.ty() == SqlType::Unknown && r.ty() != SqlType::Unknown {
            l = self.expr(scope, left, untyped_operand_type(op, r.ty()))?;
        }
        Ok((l, r))
    }

    #[inline(never)]
    /// `IS [NOT] TRUE`, `IS [NOT] FALSE`, `IS [NOT] UNKNOWN` (`node`) of `inner`: never NULL
    /// (`NULL IS TRUE` is false), as `IS [NOT] DISTINCT FROM` a boolean constant or `IS [NOT]
    /// NULL`; the argument must be a boolean (42804 at it).
    fn boolean_test(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        inner: &ast::Expr,
    ) -> Result<Expr, PgError> {
        let (name, constant, negated) = match node {
            ast::Expr::IsTrue(_) => ("IS TRUE", Some(true), false),
            ast::Expr::IsNotTrue(_) => ("IS NOT TRUE", Some(true), true),
            ast::Expr::IsFalse(_) => ("IS FALSE", Some(false), false),
            ast::Expr::IsNotFalse(_) => ("IS NOT FALSE", Some(false), true),
            ast::Expr::IsUnknown(_) => ("IS UNKNOWN", None, false),
            _ => ("IS NOT UNKNOWN", None, true),
        };
        let e = self.expr(scope, inner, SqlType::Bool)?;
        let e = self.boolean(e, name, self.statement.position_of(inner))?;
        Ok(match constant {
            Some(constant) => {
                let test = Expr::binary_node(
                    BinOp::DistinctFrom,
                    e,
                    Expr::Const(Value::Bool(constant), SqlType::Bool),
                );
                negated_if(!negated, test)
            }
            None => Expr::IsNull(Box::new(e), negated),
        })
    }

    fn distinct_from(
        &mut self,
        scope: &Scope<'_>,
        left: &ast::Expr,
        right: &ast::Expr,
        negated: bool,
    ) -> Result<Expr, PgError> {
        let (l, r) = self.typed_operands(scope, left, right, BinOp::DistinctFrom)?;
        let op_position = self.operator_after(left);
        let test = self.binary(BinOp::DistinctFrom, l, r, op_position)?;
        Ok(negated_if(negated, test))
    }

    /// `count(e)`, `sum(e)`, `min(e)`, `max(e)`, `coalesce(...)`, `greatest(...)`,
    /// `least(...)`, `abs`, `upper`, `lower`, `length`; any other function is refused as
    /// unsupported (0A000 naming it). Never inlined into the recursive `expr`, whose frame
    /// every level of a deep expression pays.
    #[inline(never)]
    fn function(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        function: &ast::Function,
        name: &str,
        hint: SqlType,
    ) -> Result<Expr, PgError> {
        let position = self.statement.position_of(node);
        let plain = function.over.is_none()
            && function.within_group.is_empty()
            && matches!(function.parameters, FunctionArguments::None);
        if let Some(clock) = ClockFn::parse(name) {
            // `CURRENT_TIMESTAMP` and `LOCALTIMESTAMP` come without parentheses, the others
            // with empty ones; a precision (`CURRENT_TIMESTAMP(3)`) is not kept here.
            let no_arguments = match &function.args {
                FunctionArguments::None => true,
                FunctionArguments::List(list) => list.args.is_empty() && list.clauses.is_empty(),
                FunctionArguments::Subquery(_) => false,
            };
            if plain && no_arguments {
                return Ok(Expr::Clock(clock));
            }
            return Err(unsupported(&node.to_string()));
        }
        if let Some((session_fn, parentheses)) = SessionFn::parse(name) {
            return self.session_function(scope, node, function, session_fn, parentheses);
        }
        let distinct = matches!(&function.args, FunctionArguments::List(list)
            if list.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct));
        if AggregateKind::parse(name).is_none() {
            let clause = if distinct {
                Some("DISTINCT")
            } else if function.filter.is_some() {
                Some("FILTER")
            } else {
                None
            };
            if let Some(clause) = clause {
                return Err(PgError::error(
                    "42809",
                    format!("{clause} specified, but {name} is not an aggregate function"),
                )
                .at(position));
            }
        }
        if name == "make_interval" && plain {
            if let FunctionArguments::List(list) = &function.args {
                if list.duplicate_treatment.is_none() && list.clauses.is_empty() {
                    return self.make_interval_call(scope, &list.args, position);
                }
            }
        }
        // An aggregate's `ORDER BY` (no other clause inside the parentheses is run).
        let mut order_by: &[ast::OrderByExpr] = &[];
        let arguments: Option<Vec<&ast::Expr>> = match &function.args {
            FunctionArguments::List(list)
                if plain
                    && (list.duplicate_treatment.is_none()
                        || AggregateKind::parse(name).is_some()) =>
            {
                match list.clauses.as_slice() {
                    [] => plain_arguments(&list.args),
                    [ast::FunctionArgumentClause::OrderBy(keys)]
                        if AggregateKind::parse(name).is_some() =>
                    {
                        order_by = keys;
                        plain_arguments(&list.args)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(arguments) = arguments else {
            return Err(unsupported(&node.to_string()));
        };
        if name == "count" && arguments.is_empty() {
            return Err(PgError::error(
                "42809",
                "count(*) must be used to call a parameterless aggregate function",
            )
            .at(position));
        }
        if let Some(kind) = AggregateKind::parse(name) {
            let expected = if kind == AggregateKind::StringAgg {
                2
            } else {
                1
            };
            // The arguments and the ORDER BY keys are inside the call: an aggregate in them
            // is nested.
            let outer = self.aggregate_at.take();
            let analysed = self.arguments(scope, &arguments)?;
            if analysed.len() != expected {
                let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
                return Err(undefined_function(name, &types, position));
            }
            let (order, keys) =
                self.aggregate_order(scope, order_by, (distinct, &arguments), node)?;
            if self.aggregate_at.is_some() {
                return Err(
                    PgError::error("42803", "aggregate function calls cannot be nested")
                        .at(self.aggregate_at.flatten()),
                );
            }
            self.aggregate_at = Some(outer.unwrap_or(position));
            let aggregate = Aggregate {
                kind,
                distinct,
                order,
            };
            return self.aggregate_call(scope, function, aggregate, analysed, keys, position);
        }
        if let Some(advisory) = AdvisoryFn::parse(name) {
            return self.advisory_call(scope, advisory, name, &arguments, position);
        }
        if let Some(function) = SequenceFn::parse(name) {
            return self.sequence_call(scope, function, &arguments, position);
        }
        if let Some(function) = RandomFn::parse(name) {
            return self.volatile_call(scope, VolatileFn::Random(function), &arguments, position);
        }
        if name == "pg_sleep" {
            return self.volatile_call(scope, VolatileFn::Sleep, &arguments, position);
        }
        if let Some(function) = SettingFn::parse(name, arguments.len()) {
            return self.volatile_call(scope, VolatileFn::Setting(function), &arguments, position);
        }
        if let Some(call) = self.text_of_any_call(scope, name, &arguments, position)? {
            return Ok(call);
        }
        if let ("date_trunc", [unit, value]) = (name, arguments.as_slice()) {
            let unit = self.expr(scope, unit, SqlType::Unknown)?;
            let value = self.expr(scope, value, SqlType::Unknown)?;
            let types = [unit.ty(), value.ty()];
            if value.ty() == SqlType::Unknown {
                return Err(ambiguous_function(
                    &format!("date_trunc({}, unknown)", types[0].name()),
                    position,
                ));
            }
            if !matches!(unit.ty(), SqlType::Text | SqlType::Unknown) || !value.ty().is_timestamp()
            {
                return Err(undefined_function(name, &types, position));
            }
            let unit = self.convert(unit, SqlType::Text, None)?;
            let ty = value.ty();
            return Ok(Expr::Call(ScalarFn::DateTrunc, vec![unit, value], ty));
        }
        if let ("date_part", [unit, value]) = (name, arguments.as_slice()) {
            let unit = self.expr(scope, unit, SqlType::Unknown)?;
            let value = self.expr(scope, value, SqlType::Unknown)?;
            return self.time_part_call(ScalarFn::DatePart, unit, value, position);
        }
        if let ("age", [_] | [_, _]) = (name, arguments.as_slice()) {
            let mut values = self.arguments(scope, &arguments)?;
            return self.age_call(&mut values, position);
        }
        if let ("nullif", [a, b]) = (name, arguments.as_slice()) {
            return self.nullif(scope, a, b, position);
        }
        if let ("mod", [a, b]) = (name, arguments.as_slice()) {
            let l = self.expr(scope, a, SqlType::Unknown)?;
            let r = self.expr(scope, b, SqlType::Unknown)?;
            let types = [l.ty(), r.ty()];
            if types == [SqlType::Unknown; 2] {
                return Err(ambiguous_function("mod(unknown, unknown)", position));
            }
            if types
                .iter()
                .any(|t| !t.is_number() && *t != SqlType::Unknown)
            {
                return Err(undefined_function(name, &types, position));
            }
            return self.binary(BinOp::Mod, l, r, position);
        }
        if let ("array_append" | "array_prepend" | "array_cat", [a, b]) =
            (name, arguments.as_slice())
        {
            let mut l = self.expr(scope, a, SqlType::Unknown)?;
            let mut r = self.expr(scope, b, SqlType::Unknown)?;
            let types = [l.ty(), r.ty()];
            let (left_array, right_array) = match name {
                "array_append" => (true, false),
                "array_prepend" => (false, true),
                _ => (true, true),
            };
            if name == "array_cat" {
                // An untyped side is read as the other's array type.
                if l.ty() == SqlType::Unknown && r.ty().element().is_some() {
                    l = self.convert(l, r.ty(), position)?;
                } else if r.ty() == SqlType::Unknown && l.ty().element().is_some() {
                    r = self.convert(r, l.ty(), position)?;
                }
            }
            let fits = l.ty().element().is_some() == left_array
                && r.ty().element().is_some() == right_array;
            if fits {
                if let Some(call) = self.array_concat(l, r, position)? {
                    return Ok(call);
                }
            }
            return Err(undefined_function(name, &types, position));
        }
        if matches!(
            name,
            "concat_ws"
                | "array_to_string"
                | "string_to_array"
                | "array_position"
                | "array_remove"
                | "cardinality"
                | "array_length"
        ) {
            return self.list_text_call(scope, name, &arguments, position);
        }
        if name == "pg_typeof" {
            let analysed = self.arguments(scope, &arguments)?;
            let [argument] = <[Expr; 1]>::try_from(analysed).map_err(|analysed| {
                let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
                undefined_function(name, &types, position)
            })?;
            let type_name = Value::Text(argument.ty().name().to_string());
            return Ok(Expr::Call(
                ScalarFn::TypeOf,
                vec![argument, Expr::Const(type_name, SqlType::Text)],
                SqlType::RegType,
            ));
        }
        if name == "coalesce" && !arguments.is_empty() {
            let (converted, ty) = self.common_type(scope, &arguments, hint, "COALESCE")?;
            return Ok(Expr::Coalesce(converted, ty));
        }
        match ScalarFn::parse(name) {
            Some(function @ (ScalarFn::Greatest | ScalarFn::Least)) if !arguments.is_empty() => {
                let what = name.to_ascii_uppercase();
                let (converted, ty) = self.common_type(scope, &arguments, hint, &what)?;
                if !(ty.is_number() || matches!(ty, SqlType::Text | SqlType::Bool)) {
                    return Err(unsupported(&node.to_string()));
                }
                return Ok(Expr::Call(function, converted, ty));
            }
            Some(function) if !signatures(function).is_empty() => {
                return self.signature_call(scope, function, name, &arguments, position);
            }
            _ => {}
        }
        // A name PostgreSQL has no function of is the user's mistake: its 42883, naming the
        // arguments' types. One it has that is not run here is 0A000.
        if !super::catalog_names::is_builtin_function(name) {
            let analysed = self.arguments(scope, &arguments)?;
            let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
            return Err(undefined_function(name, &types, position));
        }
        Err(unsupported(&node.to_string()))
    }

    #[inline(never)]
    fn literal(
        &mut self,
        value: &ast::Value,
        hint: SqlType,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        Ok(match value {
            ast::Value::Number(text, _) => match text.parse::<i128>() {
                Ok(v) if !text.contains(['.', 'e', 'E']) => int_literal(v),
                _ => match Decimal::parse(text) {
                    Some(decimal) => Expr::Const(Value::Numeric(decimal), SqlType::Numeric),
                    // PostgreSQL's `numeric` constant, made `double precision` (`1e300::float8`):
                    // `numeric_float8` converts through the number's text, so reading the text
                    // as a `double precision` gives what PostgreSQL gives.
                    None if hint == SqlType::Float8 => Expr::Const(
                        Value::Float(Float(
                            super::value::parse_float8(text).map_err(|e| e.at(position))?,
                        )),
                        SqlType::Float8,
                    ),
                    None => {
                        return Err(unsupported(&format!(
                            "the numeric constant {text}: the stand-in's numeric keeps 38 \
                             digits and 60 decimals"
                        )))
                    }
                },
            },
            ast::Value::SingleQuotedString(text)
            | ast::Value::EscapedStringLiteral(text)
            | ast::Value::DollarQuotedString(ast::DollarQuotedString { value: text, .. }) => {
                let unknown = Expr::Const(Value::Text(text.clone()), SqlType::Unknown);
                if hint != SqlType::Unknown && hint != SqlType::Text {
                    self.convert(unknown, hint, position)?
                } else {
                    unknown
                }
            }
            ast::Value::Boolean(b) => Expr::Const(Value::Bool(*b), SqlType::Bool),
            ast::Value::Null => Expr::Const(Value::Null, SqlType::Unknown),
            ast::Value::Placeholder(name) => {
                let index: usize = name
                    .trim_start_matches('$')
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| unsupported(name))?;
                if index > MAX_PARAMETERS {
                    // A Bind carries at most this many values, so no such parameter can ever
                    // be given (and its type list would be all of memory).
                    return Err(PgError::error(
                        sqlstate::UNDEFINED_PARAMETER,
                        format!("there is no parameter {name}"),
                    )
                    .at(position));
                }
                let ty = self.param_type(index - 1, hint);
                Expr::Param(index - 1, ty)
            }
            other => return Err(unsupported(&other.to_string())),
        })
    }

    /// `expr` converted to `ty` (literals at once, so that their errors point at them).
    #[inline(never)]
    fn convert(&mut self, expr: Expr, ty: SqlType, position: Option<u32>) -> Result<Expr, PgError> {
        if expr.ty() == ty {
            return Ok(expr);
        }
        match expr {
            Expr::Const(value, from) => {
                // Only input syntax errors of quoted literals point at the literal.
                let converted = cast(value, ty).map_err(|e| {
                    if from == SqlType::Unknown {
                        e.at(position)
                    } else {
                        e
                    }
                })?;
                Ok(Expr::Const(converted, ty))
            }
            Expr::Param(index, SqlType::Unknown) => {
                let resolved = self.param_type(index, ty);
                Ok(Expr::Cast(Box::new(Expr::Param(index, resolved)), ty))
            }
            other => Ok(Expr::Cast(Box::new(other), ty)),
        }
    }

    #[inline(never)]
    fn boolean(
        &mut self,
        expr: Expr,
        context: &str,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        match expr.ty() {
            SqlType::Bool => Ok(expr),
            SqlType::Unknown => self.convert(expr, SqlType::Bool, position),
            other => Err(PgError::error(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "argument of {context} must be type boolean, not type {}",
                    other.name()
                ),
            )
            .at(position)),
        }
    }

    #[inline(never)]
    fn binary(
        &mut self,
        op: BinOp,
        l: Expr,
        r: Expr,
        position: Option<u32>,
    ) -> Result<Expr, PgError> {
        let (lt, rt) = (l.ty(), r.ty());
        let (l, r) = match (lt, rt) {
            (SqlType::Unknown, SqlType::Unknown) => {
                let l = self.convert(l, SqlType::Text, position)?;
                let r = self.convert(r, SqlType::Text, position)?;
                (l, r)
            }
            (SqlType::Unknown, other) => (
                self.convert(l, untyped_operand_type(op, other), position)?,
                r,
            ),
            (other, SqlType::Unknown) => {
                let r = self.convert(r, untyped_operand_type(op, other), position)?;
                (l, r)
            }
            _ => (l, r),
        };
        let (lt, rt) = (l.ty(), r.ty());
        let arrays = lt.element().is_some() || rt.element().is_some();
        if arrays && op == BinOp::Concat {
            if let Some(concatenated) = self.array_concat(l.clone(), r.clone(), position)? {
                return Ok(concatenated);
            }
        }
        let xid = |ty: SqlType| ty == SqlType::Xid;
        let ok = match op {
            // `xid = xid`, `xid = integer` and their `<>` are all the operators on `xid`.
            _ if xid(lt) || xid(rt) => {
                let other = if xid(lt) { rt } else { lt };
                matches!(op, BinOp::Eq | BinOp::Ne | BinOp::DistinctFrom)
                    && matches!(other, SqlType::Xid | SqlType::Int4 | SqlType::Int2)
            }
            // Arrays compare with arrays of their own type only.
            _ if arrays => {
                !matches!(
                    op,
                    BinOp::Concat | BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod
                ) && lt == rt
            }
            BinOp::Concat => lt == SqlType::Text || rt == SqlType::Text,
            // PostgreSQL has no `double precision %`.
            BinOp::Mod if lt == SqlType::Float8 || rt == SqlType::Float8 => false,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                (lt.is_number() && rt.is_number()) || time_operator(op, lt, rt).is_some()
            }
            _ => {
                lt == rt
                    || (lt.is_number() && rt.is_number())
                    || (lt.is_timestamp() && rt.is_timestamp())
            }
        };
        if !ok {
            let symbol = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::Mod => "%",
                BinOp::Eq | BinOp::DistinctFrom => "=",
                BinOp::Ne => "<>",
                BinOp::Lt => "<",
                BinOp::Le => "<=",
                BinOp::Gt => ">",
                BinOp::Ge => ">=",
                BinOp::Concat => "||",
                _ => "?",
            };
            return Err(undefined_operator(lt, symbol, rt, position));
        }
        Ok(Expr::binary_node(op, l, r))
    }

    /// An expression assigned to a column: converted to the column's type, or 42804.
    fn assigned(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        column: &ColumnDef,
    ) -> Result<Expr, PgError> {
        let expr = self.expr(scope, node, column.ty)?;
        let position = self.array_aware_position(node);
        assignable(column, expr.ty(), position)?;
        let converted = self.convert(expr, column.ty, position)?;
        Ok(with_modifier_of(column, converted))
    }

    /// A select list, its untyped literals and parameters read as text (PostgreSQL's
    /// `resolveTargetListUnknowns`).
    fn select_items(
        &mut self,
        scope: &Scope<'_>,
        items: &[SelectItem],
    ) -> Result<Vec<(String, Expr)>, PgError> {
        let mut out = self.select_items_untyped(scope, items)?;
        for (_, expr) in &mut out {
            if expr.ty() == SqlType::Unknown {
                *expr = self.convert(expr.clone(), SqlType::Text, None)?;
            }
        }
        Ok(out)
    }

    /// A select list with its untyped literals and parameters left so: an `INSERT ... SELECT`
    /// reads them as its columns' types.
    fn select_items_untyped(
        &mut self,
        scope: &Scope<'_>,
        items: &[SelectItem],
    ) -> Result<Vec<(String, Expr)>, PgError> {
        let mut out = Vec::new();
        for item in items {
            match item {
                SelectItem::Wildcard(_) => {
                    if scope.table.is_none() {
                        return Err(PgError::error(
                            sqlstate::SYNTAX_ERROR,
                            "SELECT * with no tables specified is not valid",
                        ));
                    }
                    out.extend(scope.star());
                }
                SelectItem::QualifiedWildcard(
                    ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                    options,
                ) if options.opt_exclude.is_none()
                    && options.opt_ilike.is_none()
                    && options.opt_alias.is_none()
                    && options.opt_except.is_none()
                    && options.opt_replace.is_none()
                    && options.opt_rename.is_none() =>
                {
                    let qualifier = object_name(name)?;
                    let (def, _, offset) =
                        scope.source(&qualifier, self.statement.position_of(name))?;
                    for (i, column) in def.columns.iter().enumerate() {
                        out.push((column.name.clone(), Expr::Column(offset + i, column.ty)));
                    }
                }
                SelectItem::UnnamedExpr(node) => {
                    let expr = self.expr(scope, node, SqlType::Unknown)?;
                    out.push((column_name(node), expr));
                }
                SelectItem::ExprWithAlias { expr: node, alias } => {
                    let expr = self.expr(scope, node, SqlType::Unknown)?;
                    out.push((ident_name(alias), expr));
                }
                other => return Err(unsupported(&other.to_string())),
            }
        }
        Ok(out)
    }
}

/// How wide a number type is, for the common type of several (PostgreSQL's preferred-type
/// order among these: `integer` < `bigint` < `numeric` < `double precision`).
fn number_rank(ty: SqlType) -> u8 {
    match ty {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        SqlType::Int8 => 2,
        SqlType::Numeric => 3,
        SqlType::Float8 => 4,
        _ => 5,
    }
}

/// 42804 when a value of type `ty` cannot be assigned to `column` (PostgreSQL's assignment
/// casts among these types: numbers to numbers, anything to text, an untyped literal to
/// anything).
fn assignable(column: &ColumnDef, ty: SqlType, position: Option<u32>) -> Result<(), PgError> {
    let compatible = ty == column.ty
        || ty == SqlType::Unknown
        || (ty.is_number() && column.ty.is_number())
        || (ty.is_timestamp() && column.ty.is_timestamp())
        || column.ty == SqlType::Text
        || ty
            .element()
            .zip(column.ty.element())
            .is_some_and(|(from, to)| {
                (from.is_number() && to.is_number()) || (from.is_timestamp() && to.is_timestamp())
            });
    if compatible {
        return Ok(());
    }
    Err(PgError::error(
        sqlstate::DATATYPE_MISMATCH,
        format!(
            "column \"{}\" is of type {} but expression is of type {}",
            column.name,
            column.ty.name(),
            ty.name()
        ),
    )
    .with_hint("You will need to rewrite or cast the expression.")
    .at(position))
}

/// A side of a set operation that is a plain `SELECT` (or `VALUES`, `TABLE`) as a query of
/// its own.
fn query_of(body: &SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body.clone()),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// Where the first item of a set operation's side stands (PostgreSQL's position for its
/// errors about the two sides).
fn first_item_position(statement: &GeneralStatement, side: &SetExpr) -> Option<u32> {
    item_position(statement, side, 0)
}

/// Where the item `at` of a set operation's side stands, when that side is a `SELECT` (of
/// the left-most `SELECT` of a side that is a set operation itself).
fn item_position(statement: &GeneralStatement, side: &SetExpr, at: usize) -> Option<u32> {
    let mut side = side;
    loop {
        side = match side {
            SetExpr::Select(select) => {
                return match select.projection.get(at) {
                    Some(
                        SelectItem::UnnamedExpr(node)
                        | SelectItem::ExprWithAlias { expr: node, .. },
                    ) => statement.position_of(node),
                    _ => None,
                }
            }
            SetExpr::Query(query) => &query.body,
            SetExpr::SetOperation { left, .. } => left,
            _ => return None,
        };
    }
}

/// The name PostgreSQL gives an unnamed result column (its `FigureColname`).
fn column_name(node: &ast::Expr) -> String {
    if let Some(name) = strong_name(node) {
        return name;
    }
    match node {
        ast::Expr::Nested(inner) => column_name(inner),
        // A name as strong as a type's (`ARRAY[...]`, `CASE`, `EXISTS`) is kept through a cast.
        ast::Expr::Cast { expr, .. } if cast_keeps_name(expr) => column_name(expr),
        ast::Expr::Cast {
            data_type: DataType::Array(ast::ArrayElemTypeDef::SquareBracket(element, _)),
            expr,
            kind,
            format,
        } => column_name(&ast::Expr::Cast {
            data_type: element.as_ref().clone(),
            expr: expr.clone(),
            kind: kind.clone(),
            format: format.clone(),
        }),
        ast::Expr::Cast { data_type, .. } => match data_type {
            DataType::BigInt(_) | DataType::Int8(_) => "int8".to_string(),
            DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => "int4".to_string(),
            DataType::Boolean | DataType::Bool => "bool".to_string(),
            DataType::Text => "text".to_string(),
            DataType::Numeric(_) | DataType::Decimal(_) => "numeric".to_string(),
            DataType::DoublePrecision | DataType::Float8 | DataType::Double(_) => {
                "float8".to_string()
            }
            DataType::SmallInt(_) | DataType::Int2(_) => "int2".to_string(),
            DataType::Varchar(_) | DataType::CharacterVarying(_) => "varchar".to_string(),
            other => time_type_name(other).unwrap_or("?column?").to_string(),
        },
        ast::Expr::TypedString(typed) => time_type_name(&typed.data_type)
            .unwrap_or("?column?")
            .to_string(),
        ast::Expr::Interval(_) => "interval".to_string(),
        ast::Expr::Array(_) => "array".to_string(),
        ast::Expr::CompoundFieldAccess { root, .. } => column_name(root),
        ast::Expr::Value(v) if matches!(v.value, ast::Value::Boolean(_)) => "bool".to_string(),
        ast::Expr::Case { .. } => "case".to_string(),
        ast::Expr::Exists { negated: false, .. } => "exists".to_string(),
        _ => "?column?".to_string(),
    }
}

/// The elements of `ARRAY[...]` (in parentheses or not).
fn array_constructor_of(node: &ast::Expr) -> Option<&[ast::Expr]> {
    match node {
        ast::Expr::Nested(inner) => array_constructor_of(inner),
        ast::Expr::Array(array) => Some(&array.elem),
        _ => None,
    }
}

/// True for an expression whose column name outranks the type name of a cast around it.
fn cast_keeps_name(node: &ast::Expr) -> bool {
    match node {
        ast::Expr::Nested(inner) => cast_keeps_name(inner),
        ast::Expr::Array(_) | ast::Expr::Case { .. } => true,
        ast::Expr::Exists { negated, .. } => !negated,
        _ => false,
    }
}

/// The name PostgreSQL's parser gives a time type, `regtype` or `xid` (a column named after a
/// cast to it).
fn time_type_name(ty: &DataType) -> Option<&'static str> {
    Some(match ty {
        DataType::Timestamp(_, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => "timestamptz",
        DataType::Timestamp(..) => "timestamp",
        DataType::Interval { .. } => "interval",
        DataType::Uuid => "uuid",
        DataType::Custom(name, modifiers)
            if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("regtype") =>
        {
            "regtype"
        }
        DataType::Custom(name, modifiers)
            if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("xid") =>
        {
            "xid"
        }
        _ => return None,
    })
}

/// A column name taken from the expression itself (a column, a function, or through a cast,
/// or a `CASE`'s `ELSE`), which outranks a type name or `case`.
fn strong_name(node: &ast::Expr) -> Option<String> {
    match node {
        ast::Expr::Identifier(ident) => Some(ident_name(ident)),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name),
        ast::Expr::Nested(inner) => strong_name(inner),
        ast::Expr::CompoundFieldAccess { root, .. } => strong_name(root),
        ast::Expr::Function(f) => object_name(&f.name).ok(),
        ast::Expr::Substring { shorthand, .. } => {
            Some(if *shorthand { "substr" } else { "substring" }.to_string())
        }
        ast::Expr::Position { .. } => Some("position".to_string()),
        ast::Expr::Extract { .. } => Some("extract".to_string()),
        // A scalar subquery is named after its one column.
        ast::Expr::Subquery(query) => match query.body.as_ref() {
            SetExpr::Select(select) => match select.projection.as_slice() {
                [SelectItem::ExprWithAlias { alias, .. }] => Some(ident_name(alias)),
                [SelectItem::UnnamedExpr(inner)] => Some(column_name(inner)),
                _ => None,
            },
            _ => None,
        },
        ast::Expr::Ceil { .. } => Some("ceil".to_string()),
        ast::Expr::Floor { .. } => Some("floor".to_string()),
        ast::Expr::Trim { trim_where, .. } => Some(
            match trim_where {
                None | Some(ast::TrimWhereField::Both) => "btrim",
                Some(ast::TrimWhereField::Leading) => "ltrim",
                Some(ast::TrimWhereField::Trailing) => "rtrim",
            }
            .to_string(),
        ),
        ast::Expr::Cast { expr, .. } => strong_name(expr),
        ast::Expr::Case { else_result, .. } => else_result.as_deref().and_then(strong_name),
        _ => None,
    }
}

/// A number written as such, in parentheses or not.
fn is_number_literal(node: &ast::Expr) -> bool {
    match node {
        ast::Expr::Nested(inner) => is_number_literal(inner),
        ast::Expr::Value(value) => matches!(value.value, ast::Value::Number(..)),
        _ => false,
    }
}

/// A number literal of digits only (no point, no exponent), in parentheses or not.
fn is_integer_literal(node: &ast::Expr) -> bool {
    match node {
        ast::Expr::Nested(inner) => is_integer_literal(inner),
        ast::Expr::Value(value) => matches!(
            &value.value,
            ast::Value::Number(text, _) if text.bytes().all(|b| b.is_ascii_digit())
        ),
        _ => false,
    }
}

fn int_literal(v: i128) -> Expr {
    if let Ok(small) = i32::try_from(v) {
        Expr::Const(Value::Int(i64::from(small)), SqlType::Int4)
    } else if let Ok(big) = i64::try_from(v) {
        Expr::Const(Value::Int(big), SqlType::Int8)
    } else {
        Expr::Const(
            Value::Numeric(Decimal {
                mantissa: v,
                scale: 0,
            }),
            SqlType::Numeric,
        )
    }
}

/// The text of a tuple in `Failing row contains (...)`.
fn failing_row(tuple: &[Value]) -> String {
    let shown: Vec<String> = tuple.iter().map(Value::detail_text).collect();
    format!("Failing row contains ({}).", shown.join(", "))
}

impl Postgres {
    /// Describes a general statement: its parameter types (those declared, the rest
    /// inferred) and result columns.
    pub fn describe_sql(
        &self,
        statement: &GeneralStatement,
        declared: &[SqlType],
    ) -> Result<Description, PgError> {
        let _memory = crate::memory::StatementScope::enter();
        let (plan, params) = self.analyze_in(None, statement, declared, false).0?;
        Ok(description(&plan, params))
    }

    /// Checks a statement as PostgreSQL's planner does before it runs, and describes it:
    /// analysed, then its constants folded ([`Expr::fold`]), so that a constant's error
    /// (`SELECT 1/0`) is known before anything is described or run. A Bind plans its
    /// statement this way, and so does a simple query before it describes its rows.
    pub fn plan_sql(
        &self,
        statement: &GeneralStatement,
        declared: &[SqlType],
    ) -> Result<Description, PgError> {
        let _memory = crate::memory::StatementScope::enter();
        let (plan, params) = self.plan_in(None, statement, declared, false).0?;
        Ok(description(&plan, params))
    }

    /// [`Postgres::plan_sql`] for `session`: a `SELECT ... FOR UPDATE` (or `FOR SHARE`) in a
    /// `READ ONLY` transaction is also refused here (25006), since PostgreSQL starts a
    /// query's executor, which refuses it, before it describes the rows (and, in the extended
    /// protocol, at the Bind); a change is refused when it runs.
    pub fn plan_sql_in(
        &self,
        session: SessionId,
        statement: &GeneralStatement,
        declared: &[SqlType],
    ) -> Result<Description, PgError> {
        let _memory = crate::memory::StatementScope::enter();
        let (plan, params) = self.plan_in(Some(session), statement, declared, false).0?;
        if mentions_settings_functions(&statement.text) {
            self.estimate_settings(session, &plan)?;
        }
        self.described(session, plan, params)
    }

    /// PostgreSQL's planner reads a `current_setting` of constants in a `WHERE` (or join
    /// condition) while it estimates how many rows the condition keeps, so an error of it is
    /// the planning's, before any row is described: the same here.
    fn estimate_settings(&self, session: SessionId, plan: &Plan) -> Result<(), PgError> {
        let Some(state) = self.sessions.get(&session) else {
            return Ok(());
        };
        let (joins, filter) = match plan {
            Plan::WithSubqueries(_, inner) => return self.estimate_settings(session, inner),
            Plan::Select(select) => (&select.joins, &select.filter),
            Plan::Update(update) => (&update.joins, &update.filter),
            Plan::Delete(delete) => (&delete.joins, &delete.filter),
            _ => return Ok(()),
        };
        let conditions: Vec<&Expr> = joins
            .iter()
            .filter_map(|j| j.on.as_ref())
            .chain(filter)
            .collect();
        // The estimate is of a column compared with an expression: that expression is read.
        let column = |e: &Expr| match e {
            Expr::Cast(inner, _) => matches!(**inner, Expr::Column(..)),
            other => matches!(other, Expr::Column(..)),
        };
        let mut estimated: Vec<&Expr> = Vec::new();
        let mut pending = conditions;
        while let Some(expr) = pending.pop() {
            if let Expr::Binary(op, left, right, _) = expr {
                let compares = matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                );
                if compares && column(left) {
                    estimated.push(right);
                } else if compares && column(right) {
                    estimated.push(left);
                }
            }
            pending.extend(expr.parts());
        }
        while let Some(expr) = estimated.pop() {
            if let Expr::VolatileCall(VolatileFn::Setting(function), arguments) = expr {
                let constants = arguments.iter().all(|a| matches!(a, Expr::Const(..)));
                if function_is_stable(*function) && constants {
                    settings::read(state, &eval_each(arguments, &[], &[])?)?;
                }
                continue;
            }
            estimated.extend(expr.parts());
        }
        Ok(())
    }

    /// The description of a planned statement, or 25006 for a query that would write in a
    /// `READ ONLY` transaction.
    fn described(
        &self,
        session: SessionId,
        plan: Plan,
        params: Vec<SqlType>,
    ) -> Result<Description, PgError> {
        let query = match &plan {
            Plan::WithSubqueries(_, inner) => matches!(inner.as_ref(), Plan::Select(_)),
            other => matches!(other, Plan::Select(_)),
        };
        if let Some(refusal) = self.read_only_refusal(session, &plan).filter(|_| query) {
            return Err(refusal);
        }
        Ok(description(&plan, params))
    }

    /// What a Bind of `statement` with parameter `values` does: plans it as
    /// [`Postgres::plan_sql_in`] does, then folds its constants with the parameters' values
    /// in place, as PostgreSQL's custom plan for those values does (so an error of an
    /// expression of constants and parameters alone, `$1::numeric(6, 2)` out of range, is
    /// the Bind's, not the Execute's).
    pub fn bind_sql_in(
        &self,
        session: SessionId,
        statement: &GeneralStatement,
        declared: &[SqlType],
        values: &[Value],
    ) -> Result<Description, PgError> {
        let _memory = crate::memory::StatementScope::enter();
        if values.is_empty() {
            return self.plan_sql_in(session, statement, declared);
        }
        let (plan, params) = self
            .analyze_in(Some(session), statement, declared, false)
            .0?;
        let mut bound = plan.clone();
        bind_params_in(&mut bound, values);
        fold_constants(&bound)?;
        if mentions_settings_functions(&statement.text) {
            self.estimate_settings(session, &bound)?;
        }
        self.described(session, plan, params)
    }

    /// 25006 when `session`'s transaction is `READ ONLY` and `plan` writes.
    fn read_only_refusal(&self, session: SessionId, plan: &Plan) -> Option<PgError> {
        let read_only = self.sessions.get(&session).is_some_and(|s| s.read_only);
        let what = writes(plan).filter(|_| read_only)?;
        Some(PgError::error(
            "25006",
            format!("cannot execute {what} in a read-only transaction"),
        ))
    }

    /// Analyses the statement as [`Postgres::analyze_in`] does and folds its constants (with
    /// the session that has to be waited for first, if any). `typed_by_values`: the
    /// parameter types are those of the values the statement is about to run with (every
    /// integer a `bigint`), not those its client declared.
    fn plan_in(
        &self,
        viewer: Option<SessionId>,
        statement: &GeneralStatement,
        declared: &[SqlType],
        typed_by_values: bool,
    ) -> (Planned, Option<SessionId>) {
        let (analysis, waits_for) = self.analyze_in(viewer, statement, declared, typed_by_values);
        let planned = analysis.and_then(|(plan, params)| {
            fold_constants(&plan)?;
            Ok((plan, params))
        });
        (planned, waits_for)
    }

    /// Resolves names and types (what a Parse does; constants are not folded yet), with the
    /// catalogue as session `viewer` sees it (`ddl.rs`; everything without one): a
    /// relation another session's open block created is not there, and one such a block
    /// changed makes the statement wait for that session (the second value, which comes
    /// before any error: PostgreSQL waits for the lock when it looks the name up).
    fn analyze_in(
        &self,
        viewer: Option<SessionId>,
        statement: &GeneralStatement,
        declared: &[SqlType],
        typed_by_values: bool,
    ) -> (Planned, Option<SessionId>) {
        let waits_for = Cell::new(None);
        let analyzer = Analyzer {
            ddl_holds: viewer.map(|s| self.ddl_holds(s)).unwrap_or_default(),
            waits_for: &waits_for,
            aggregate_at: None,
            typed_by_values,
            tables: &self.tables,
            sequences: &self.sequences,
            params: declared.to_vec(),
            statement,
            subqueries: Vec::new(),
            correlated: Vec::new(),
            outer: None,
            ctes: Vec::new(),
            ahead: Vec::new(),
            untyped_items_of: None,
            queries_open: 0,
        };
        let result = analyzed(analyzer);
        (result, waits_for.get())
    }
}

/// The rest of [`Postgres::analyze_in`]: the statement read whole, then what PostgreSQL
/// checks of it as a whole.
fn analyzed(mut analyzer: Analyzer<'_>) -> Planned {
    let statement = analyzer.statement;
    let mut plan = analyzer.statement()?;
    if !analyzer.subqueries.is_empty() {
        if !matches!(
            plan,
            Plan::Select(_) | Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_)
        ) {
            return Err(unsupported(&format!("a subquery in {}", statement.text)));
        }
        check_data_changing_relations(&analyzer.subqueries, &plan)?;
        plan = Plan::WithSubqueries(std::mem::take(&mut analyzer.subqueries), Box::new(plan));
    }
    // Aggregates are computed only over a SELECT's rows; anywhere else PostgreSQL refuses
    // them (and evaluating one on a single row would answer NULL).
    if let Some(at) = analyzer.aggregate_at {
        let in_returning =
            |returning: &[(String, Expr)]| returning.iter().any(|(_, e)| e.is_aggregate());
        let inner = match &plan {
            Plan::WithSubqueries(_, inner) => inner.as_ref(),
            other => other,
        };
        let place = match inner {
            Plan::Select(_) => None,
            Plan::Insert(insert) if !in_returning(&insert.returning) => Some("VALUES"),
            Plan::Update(update) if !in_returning(&update.returning) => Some("UPDATE"),
            Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) => Some("RETURNING"),
            _ => Some("this statement"),
        };
        if let Some(place) = place {
            return Err(PgError::error(
                "42803",
                format!("aggregate functions are not allowed in {place}"),
            )
            .at(at));
        }
    }
    // A parameter nothing gave a type (`$1 IS NULL`, `count($1)`, one the statement does not
    // use) is PostgreSQL's 42P18 once the statement is read (`check_variable_parameters`).
    if !analyzer.typed_by_values {
        if let Some(at) = analyzer
            .params
            .iter()
            .position(|ty| *ty == SqlType::Unknown)
        {
            return Err(PgError::error(
                "42P18",
                format!("could not determine data type of parameter ${}", at + 1),
            ));
        }
    }
    Ok((plan, analyzer.params))
}

impl Postgres {
    /// Executes a general statement in `session` with typed parameter values, each
    /// parameter declared as its value's type (`bigint` for an integer).
    pub fn execute_sql(
        &mut self,
        session: SessionId,
        statement: &GeneralStatement,
        params: &[Value],
    ) -> SqlExecuted {
        let declared: Vec<SqlType> = params.iter().map(declared_type).collect();
        self.execute_prepared(session, statement, &declared, params)
    }

    /// Executes a prepared general statement in `session`: its parameters keep the types
    /// its Parse gave them (`declared`, one per value), as PostgreSQL's do, so an `integer`
    /// parameter is not read as `bigint` when the statement runs.
    pub fn execute_prepared(
        &mut self,
        session: SessionId,
        statement: &GeneralStatement,
        declared: &[SqlType],
        params: &[Value],
    ) -> SqlExecuted {
        assert_eq!(declared.len(), params.len(), "one declared type per value");
        let _memory = crate::memory::StatementScope::enter();
        self.requested_sleep.0 = None;
        let executed = self.dispatch_sql(session, statement, declared, params);
        self.note_block_start(session);
        if let SqlExec::Done(_) = executed.exec {
            self.leave_lock_queues(session);
            if let Some(state) = self.sessions.get_mut(&session) {
                if state.status == TxStatus::Idle {
                    // The implicit transaction is over.
                    state.snapshot = None;
                    self.leave_transaction_behind(session);
                }
            }
        }
        self.debug_check_invariants();
        executed
    }

    fn dispatch_sql(
        &mut self,
        session: SessionId,
        statement: &GeneralStatement,
        declared: &[SqlType],
        params: &[Value],
    ) -> SqlExecuted {
        let Some(state) = self.sessions.get_mut(&session) else {
            return done(Err(PgError::connection_does_not_exist()));
        };
        state.waiting_on = None;
        state.waited_advisory = None;
        state.waited_table = None;
        let resuming = std::mem::take(&mut state.resuming);
        let waited_row = state.waited_row.take().filter(|_| resuming);
        let failed = state.status == TxStatus::Failed;
        let (planned, waits_for) = self.plan_in(Some(session), statement, declared, true);
        if let (Some(holder), false) = (waits_for, failed) {
            return from_typed(self.wait_for(session, holder));
        }
        let mut plan = match planned {
            Ok((plan, used)) => {
                if failed && !matches!(plan, Plan::Commit | Plan::Rollback | Plan::RollbackTo(_)) {
                    return done(Err(PgError::in_failed_transaction()));
                }
                if used.len() > params.len() {
                    let error = PgError::error(
                        sqlstate::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${}", params.len() + 1),
                    );
                    return self.fail_sql(session, error);
                }
                plan
            }
            Err(error) if failed => {
                let _ = error;
                return done(Err(PgError::in_failed_transaction()));
            }
            Err(error) => return self.fail_sql(session, error),
        };
        if let Some(refusal) = self.read_only_refusal(session, &plan) {
            return self.fail_sql(session, refusal);
        }
        if let Some(holder) = self.ddl_conflict(session, &plan) {
            return from_typed(self.wait_for(session, holder));
        }
        let requests = self.table_lock_requests(&plan);
        if let Err(wait) = self.take_table_locks(session, &requests) {
            return from_typed(self.wait_for_table(session, wait));
        }
        let txid = if calls_session_fn(&mut plan, SessionFn::TxidCurrent) {
            self.assign_txid(session)
        } else {
            self.sessions.get(&session).and_then(|state| state.txid)
        };
        let (user, database) = self.identity_of(session);
        let reading = StatementReading {
            clock: self.clock_reading(session),
            user,
            database,
            pid: session.pid(),
            txid,
        };
        stamp_clock_in(&mut plan, &reading);
        // `current_setting` reads the settings as the statement starts, unless a
        // `set_config` in it may change them first: then they run left to right, where the
        // volatile functions run.
        let settings_fns = mentions_settings_functions(&statement.text);
        let sets_config = settings_fns && calls_set_config(&mut plan);
        if settings_fns && !sets_config {
            if let Err(error) = self.resolve_stable_calls(session, &mut plan, params) {
                return self.fail_sql(session, error);
            }
        }
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        let query = matches!(
            plan,
            Plan::Select(_)
                | Plan::Insert(_)
                | Plan::Update(_)
                | Plan::Delete(_)
                | Plan::WithSubqueries(..)
        );
        if query && in_block {
            self.session_mut(session).queried = true;
        }
        // Outside a block the statement is a transaction of its own, at the default level:
        // at REPEATABLE READ or SERIALIZABLE it keeps one snapshot, also while it waits.
        if query {
            self.take_snapshot_if_needed(session);
        }
        // A statement that waits runs again from the start when it resumes: the numbers its
        // sequence calls took are given back first, but for an UPDATE's, which PostgreSQL
        // also takes again (its recheck of the row it waited for computes the new row anew).
        let inner = match &plan {
            Plan::WithSubqueries(_, inner) => inner.as_ref(),
            other => other,
        };
        let sequences_before = (matches!(inner, Plan::Insert(_))
            || (!self.sequences.is_empty() && matches!(inner, Plan::Select(_))))
        .then(|| {
            let state = &self.sessions[&session];
            (
                self.sequences.clone(),
                state.sequence_values.clone(),
                state.last_sequence.clone(),
            )
        });
        // A statement of its own that fails undoes what its `set_config` calls set, as its
        // transaction's end undoes them in PostgreSQL (a block's failure ends the block).
        let settings_before =
            (!in_block && sets_config).then(|| self.sessions[&session].settings.clone());
        let outcome = match plan {
            Plan::Begin(isolation, read_only, tag) => {
                return from_typed(self.begin(session, isolation, read_only, tag))
            }
            Plan::Commit => return from_typed(self.commit(session)),
            Plan::Rollback => return from_typed(self.rollback(session)),
            Plan::Savepoint(name) => self.savepoint(session, name),
            Plan::Release(name) => self.release(session, &name),
            Plan::RollbackTo(name) => self.rollback_to(session, &name),
            Plan::CreateTable(def, if_not_exists) => {
                return self.create(session, def, if_not_exists)
            }
            Plan::DropTable(names, if_exists) => self.drop_tables(session, names, if_exists),
            Plan::CreateSequence(sequence, if_not_exists) => {
                self.create_sequence(session, sequence, if_not_exists)
            }
            Plan::DropSequence(names, if_exists, cascade) => {
                self.drop_sequences(session, names, if_exists, cascade)
            }
            Plan::Truncate(names, restart) => self.truncate(session, names, restart),
            Plan::CreateIndex(index) => self.create_index(session, index),
            Plan::DropIndex(names, if_exists) => self.drop_indexes(session, names, if_exists),
            Plan::LockTables(tables, mode, nowait) => {
                return match self.lock_tables(session, &tables, mode, nowait) {
                    Ok(()) => done(Ok(tag_only("LOCK TABLE"))),
                    Err(Ok(wait)) => from_typed(self.wait_for_table(session, wait)),
                    Err(Err(error)) => self.fail_sql(session, error),
                };
            }
            Plan::Show(name) => self.show(session, &name).map(|value| {
                Outcome::Done(SqlResult {
                    columns: vec![(settings::column_name(&name), SqlType::Text)],
                    rows: vec![vec![Value::Text(value)]],
                    tag: "SHOW".to_string(),
                    rows_affected: 1,
                })
            }),
            Plan::Set(set, tag) => self.set(session, set, tag),
            Plan::Select(select) => self.select(session, &select, params, waited_row),
            Plan::Insert(insert) => self.insert(session, &insert, params),
            Plan::Update(update) => {
                self.update_rows(session, &update, params, resuming, waited_row)
            }
            Plan::Delete(delete) => self.delete_rows(session, &delete, params, waited_row),
            Plan::WithSubqueries(subqueries, plan) => {
                self.with_subqueries(session, &subqueries, *plan, params, resuming, waited_row)
            }
            Plan::SetOperation(_) | Plan::Recursive(_) | Plan::Series(_) | Plan::Unnest(_) => {
                unreachable!("only a relation of a statement")
            }
        };
        if let (Ok(Outcome::Wait(..) | Outcome::WaitAdvisory(..)), Some(before)) =
            (&outcome, sequences_before)
        {
            let (sequences, values, last) = before;
            self.sequences = sequences;
            let state = self.session_mut(session);
            state.sequence_values = values;
            state.last_sequence = last;
        }
        match outcome {
            Ok(Outcome::Done(result)) => done(Ok(result)),
            Ok(Outcome::Notice(result, notice)) => SqlExecuted {
                exec: SqlExec::Done(Ok(result)),
                notice: Some(notice),
            },
            Ok(Outcome::WaitAdvisory(holder, key, mode)) => {
                let executed = self.wait_for(session, holder);
                if matches!(executed.exec, Exec::Blocked { .. }) {
                    self.session_mut(session).waited_advisory = Some((key, mode));
                }
                from_typed(executed)
            }
            Ok(Outcome::Wait(holder, row)) => {
                let executed = match &row {
                    Some((table, key)) => self.wait_for_row(session, holder, table, key),
                    None => self.wait_for(session, holder),
                };
                if matches!(executed.exec, Exec::Blocked { .. }) {
                    self.session_mut(session).waited_row = row;
                }
                from_typed(executed)
            }
            Err(error) => {
                if let Some(before) = settings_before {
                    settings::restore(&mut self.session_mut(session).settings, before);
                }
                self.fail_sql(session, error)
            }
        }
    }

    /// Runs a statement's subqueries in order, each with the results before it in place, then
    /// the statement with all of them in place. A subquery that has to wait for a row lock
    /// makes the whole statement wait (it runs again from the start).
    fn with_subqueries(
        &mut self,
        session: SessionId,
        subqueries: &[Subquery],
        plan: Plan,
        params: &[Value],
        resuming: bool,
        waited_row: Option<(String, Value)>,
    ) -> Result<Outcome, PgError> {
        let mut derived: Vec<Arc<str>> = Vec::new();
        // A statement whose `WITH` query changes data is undone whole if it fails after that
        // change, as PostgreSQL undoes a failed statement (all but the numbers its sequences
        // gave, which are never given back).
        let changes = subqueries.iter().any(changes_data);
        let before = changes.then(|| self.clone());
        let outcome = self.run_with_subqueries(
            session,
            subqueries,
            plan,
            params,
            (resuming, waited_row),
            &mut derived,
        );
        if let (Err(_), Some(before)) = (&outcome, before) {
            self.undo_failed_statement(session, before);
            return outcome;
        }
        // The statement's own relations are gone once it is over, however it ended.
        if !derived.is_empty() {
            let tables = self.tables_mut();
            for name in &derived {
                tables.remove(name);
            }
        }
        outcome
    }

    /// Puts the server back as it was `before` a statement that failed, but for what its
    /// sequences gave (`CREATE SEQUENCE` ones, `serial` and identity columns', and the
    /// session's `currval`/`lastval`), which PostgreSQL never gives back.
    fn undo_failed_statement(&mut self, session: SessionId, before: Postgres) {
        let failed = std::mem::replace(self, before);
        self.sequences = failed.sequences.clone();
        for (name, table) in failed.tables.iter() {
            let kept = self.tables.get(name).map(|t| &t.sequences);
            if kept.is_some_and(|kept| *kept != table.sequences) {
                if let Some(mine) = self.tables_mut().get_mut(name) {
                    mine.sequences = table.sequences.clone();
                }
            }
        }
        if let Some(state) = failed.sessions.get(&session) {
            let (values, last) = (state.sequence_values.clone(), state.last_sequence.clone());
            let mine = self.session_mut(session);
            mine.sequence_values = values;
            mine.last_sequence = last;
        }
    }

    /// [`Postgres::with_subqueries`]: each relation's rows put in a table of the statement's
    /// own, named in `derived` as it is made.
    fn run_with_subqueries(
        &mut self,
        session: SessionId,
        subqueries: &[Subquery],
        mut plan: Plan,
        params: &[Value],
        (resuming, waited_row): (bool, Option<(String, Value)>),
        derived: &mut Vec<Arc<str>>,
    ) -> Result<Outcome, PgError> {
        let mut results: Vec<Expr> = Vec::with_capacity(subqueries.len());
        // A `WITH` query that changed data: the statement may not wait after it.
        let mut changed: Option<&str> = None;
        let mut after_statement: Vec<Plan> = Vec::new();
        for (subquery, skip) in subqueries.iter().zip(skipped_subqueries(subqueries)) {
            if skip {
                results.push(no_value());
                continue;
            }
            let mut part = (*subquery.plan).clone();
            replace_subqueries_in(&mut part, &results);
            if runs_after_statement(subquery) {
                after_statement.push(part);
                results.push(no_value());
                continue;
            }
            let rows = match self.run_part(session, &part, params, resuming, &waited_row)? {
                Outcome::Done(result) | Outcome::Notice(result, _) => result.rows,
                waiting => return waiting_after(changed, waiting),
            };
            changed = changed.or_else(|| command_of(&part));
            if let SubqueryKind::Relation { def, .. } = &subquery.kind {
                let name: Arc<str> = def.name.as_str().into();
                self.tables_mut()
                    .insert(name.clone(), table_of_rows(def.clone(), rows));
                derived.push(name);
                results.push(no_value());
                continue;
            }
            results.push(subquery_result(&subquery.kind, rows, &results)?);
        }
        replace_subqueries_in(&mut plan, &results);
        let outcome = match self.run_part(session, &plan, params, resuming, &waited_row)? {
            done @ (Outcome::Done(_) | Outcome::Notice(..)) => done,
            waiting => return waiting_after(changed, waiting),
        };
        changed = changed.or_else(|| command_of(&plan));
        for part in &after_statement {
            match self.run_part(session, part, params, resuming, &waited_row)? {
                Outcome::Done(_) | Outcome::Notice(..) => {}
                waiting => return waiting_after(changed, waiting),
            }
            changed = changed.or_else(|| command_of(part));
        }
        Ok(outcome)
    }

    /// One part of a statement: a query or a change.
    fn run_part(
        &mut self,
        session: SessionId,
        part: &Plan,
        params: &[Value],
        resuming: bool,
        waited_row: &Option<(String, Value)>,
    ) -> Result<Outcome, PgError> {
        let waited = waited_row.clone();
        match part {
            Plan::Select(select) => self.select(session, select, params, waited),
            Plan::Insert(insert) => self.insert(session, insert, params),
            Plan::Update(update) => self.update_rows(session, update, params, resuming, waited),
            Plan::Delete(delete) => self.delete_rows(session, delete, params, waited),
            Plan::SetOperation(operation) => Ok(Outcome::Done(self.set_operation(operation)?)),
            Plan::Recursive(recursive) => Ok(Outcome::Done(
                self.recursive_rows(session, recursive, params)?,
            )),
            Plan::Series(series) => Ok(Outcome::Done(series_rows(series, params)?)),
            Plan::Unnest(arrays) => Ok(Outcome::Done(unnest_rows(arrays, params)?)),
            _ => unreachable!("a part of a statement is a query or a change"),
        }
    }

    /// The rows of a `WITH RECURSIVE` query: its base's (made before it), then round after
    /// round the rows its step makes from the last round's new rows, put in its working
    /// table for that round (and taken out again however the round ends), until a round
    /// makes none new; 54000 past [`RECURSIVE_ROW_LIMIT`] rows.
    fn recursive_rows(
        &mut self,
        session: SessionId,
        plan: &RecursivePlan,
        params: &[Value],
    ) -> Result<SqlResult, PgError> {
        let cast_row = |tuple: Vec<Value>| cast_row(tuple, &plan.types);
        let mut made: Vec<Vec<Value>> = Vec::new();
        let mut seen: BTreeSet<Vec<Value>> = BTreeSet::new();
        let mut fresh: Vec<Vec<Value>> = Vec::new();
        for tuple in self.relation_rows(&plan.base) {
            let row = cast_row(tuple)?;
            if plan.all || seen.insert(row.clone()) {
                fresh.push(row);
            }
        }
        let working = Arc::new(TableDef {
            name: plan.working.clone(),
            columns: self.tables[plan.base.as_str()].def.columns.clone(),
            primary_key: None,
            checks: Vec::new(),
            indexes: Vec::new(),
        });
        // Each round makes a row at least, so the rows bound the rounds too.
        while !fresh.is_empty() {
            made.extend(fresh.iter().cloned());
            if made.len() > RECURSIVE_ROW_LIMIT {
                return Err(PgError::error(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!(
                        "a recursive query that makes more than {RECURSIVE_ROW_LIMIT} rows is more than this stand-in runs"
                    ),
                ));
            }
            let table = table_of_rows(working.clone(), std::mem::take(&mut fresh));
            self.tables_mut()
                .insert(plan.working.as_str().into(), table);
            let round = self.select(session, &plan.step, params, None);
            self.tables_mut().remove(plan.working.as_str());
            let rows = match round? {
                Outcome::Done(result) | Outcome::Notice(result, _) => result.rows,
                _ => return Err(unsupported("a recursive query that waits")),
            };
            for tuple in rows {
                let row = cast_row(tuple)?;
                if plan.all || seen.insert(row.clone()) {
                    fresh.push(row);
                }
            }
        }
        Ok(SqlResult {
            columns: Vec::new(),
            tag: format!("SELECT {}", made.len()),
            rows_affected: made.len() as u64,
            rows: made,
        })
    }

    /// The rows of one of the statement's relations, in order ([`table_of_rows`]).
    fn relation_rows(&self, name: &str) -> Vec<Vec<Value>> {
        self.tables[name]
            .rows
            .values()
            .filter_map(|row| row.committed.clone())
            .collect()
    }

    /// The rows of a set operation, from its two relations' tables (each made before it).
    fn set_operation(&self, operation: &SetOperationPlan) -> Result<SqlResult, PgError> {
        let rows_of = |table: &str| -> Result<Vec<Vec<Value>>, PgError> {
            (self.relation_rows(table).into_iter())
                .map(|tuple| cast_row(tuple, &operation.types))
                .collect()
        };
        let (left, right) = (rows_of(&operation.left)?, rows_of(&operation.right)?);
        let rows = combine(operation.operator, operation.all, left, right);
        Ok(SqlResult {
            columns: Vec::new(),
            tag: format!("SELECT {}", rows.len()),
            rows_affected: rows.len() as u64,
            rows,
        })
    }

    /// `SHOW name`.
    fn show(&self, session: SessionId, name: &str) -> Result<String, PgError> {
        let state = self.sessions.get(&session).expect("connected");
        settings::show(state, name)
    }

    /// `SET` / `RESET` (`settings.rs`).
    fn set(&mut self, session: SessionId, plan: SetPlan, tag: &str) -> Result<Outcome, PgError> {
        Ok(match settings::apply(self.session_mut(session), plan)? {
            Some(warning) => Outcome::Notice(tag_only(tag), warning),
            None => Outcome::Done(tag_only(tag)),
        })
    }

    fn fail_sql(&mut self, session: SessionId, error: PgError) -> SqlExecuted {
        from_typed(self.fail(session, error))
    }

    fn take_snapshot_if_needed(&mut self, session: SessionId) {
        let state = self.sessions.get(&session).expect("connected");
        if state.isolation == Isolation::ReadCommitted || state.snapshot.is_some() {
            return;
        }
        let snapshot: BTreeMap<String, BTreeMap<Value, Vec<Value>>> = self
            .tables
            .iter()
            .map(|(name, table)| {
                let rows = table
                    .rows
                    .iter()
                    .filter_map(|(key, row)| row.committed.clone().map(|t| (key.clone(), t)))
                    .collect();
                (name.to_string(), rows)
            })
            .collect();
        self.session_mut(session).snapshot = Some(Arc::new(snapshot));
    }

    /// The tuple of row `key` of `table` that `session` sees.
    fn visible(
        &self,
        session: SessionId,
        table: &str,
        key: &Value,
        row: Option<&Row>,
    ) -> Option<Vec<Value>> {
        if let Some(row) = row {
            if let Some(lock) = &row.lock {
                if lock.holder == session {
                    if let Some(written) = &lock.uncommitted {
                        return match written {
                            Written::Row(t) => Some(t.clone()),
                            Written::Deleted => None,
                        };
                    }
                }
            }
        }
        match self
            .sessions
            .get(&session)
            .and_then(|s| s.snapshot.as_ref())
            .filter(|_| !is_derived_table(table))
        {
            Some(snapshot) => snapshot.get(table)?.get(key).cloned(),
            None => row?.committed.clone(),
        }
    }

    /// The keys of `table` a scan visits (rows now, and rows of the session's snapshot).
    fn scan_keys(&self, session: SessionId, table: &str) -> Vec<Value> {
        let mut keys: Vec<Value> = self
            .tables
            .get(table)
            .map(|t| t.rows.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(snapshot) = self
            .sessions
            .get(&session)
            .and_then(|s| s.snapshot.as_ref())
        {
            if let Some(rows) = snapshot.get(table) {
                keys.extend(rows.keys().cloned());
                keys.sort();
                keys.dedup();
            }
        }
        keys
    }

    /// Under REPEATABLE READ: 40001 when row `key` changed since the snapshot.
    fn serialization_check(
        &self,
        session: SessionId,
        table: &str,
        key: &Value,
    ) -> Result<(), PgError> {
        let Some(snapshot) = self
            .sessions
            .get(&session)
            .and_then(|s| s.snapshot.as_ref())
        else {
            return Ok(());
        };
        let seen = snapshot.get(table).and_then(|rows| rows.get(key));
        let row = self.tables.get(table).and_then(|t| t.rows.get(key));
        let own = row
            .and_then(|r| r.lock.as_ref())
            .is_some_and(|l| l.holder == session && l.uncommitted.is_some());
        if own {
            return Ok(());
        }
        let now = row.and_then(|r| r.committed.as_ref());
        if seen.is_some() && now != seen {
            let what = if now.is_none() { "delete" } else { "update" };
            return Err(PgError::error(
                sqlstate::SERIALIZATION_FAILURE,
                format!("could not serialize access due to concurrent {what}"),
            ));
        }
        Ok(())
    }

    fn matching(
        &self,
        session: SessionId,
        table: &str,
        filter: Option<&Expr>,
        params: &[Value],
    ) -> Result<Vec<(Value, Vec<Value>)>, PgError> {
        let mut out = Vec::new();
        let rows = self.tables.get(table).map(|t| &t.rows);
        for key in self.scan_keys(session, table) {
            let row = rows.and_then(|r| r.get(&key));
            let Some(tuple) = self.visible(session, table, &key, row) else {
                continue;
            };
            PgError::check_statement_memory()?;
            if passes(filter, &tuple, None, params)? {
                out.push((key, tuple));
            }
        }
        Ok(out)
    }

    /// The rows of `table` joined, one table after another, as `joins` says (a nested loop:
    /// for each row so far, every row of the joined table in key order, at most
    /// [`JOIN_PAIR_LIMIT`] pairs a join), then those that pass `filter`. A later item of a
    /// `FROM` list is joined on its own first, then paired with every row before it. Each row
    /// comes with the key of its row in every table (None where an outer join put NULLs), for
    /// a locking clause or the row an `UPDATE`/`DELETE` changes. The rows' order is the
    /// nested loop's, which PostgreSQL's planner need not follow: without `ORDER BY` it is
    /// unspecified there.
    fn joined(
        &self,
        session: SessionId,
        table: &str,
        joins: &[JoinPlan],
        filter: Option<&Expr>,
        params: &[Value],
    ) -> Result<Vec<JoinedRow>, PgError> {
        let first = |table: &str, width: usize| -> Result<Vec<JoinedRow>, PgError> {
            Ok(self
                .matching(session, table, None, params)?
                .into_iter()
                .map(|(key, tuple)| {
                    // Rows of a later `FROM` item start with NULLs for the items before it.
                    let mut row = vec![Value::Null; width];
                    row.extend(tuple);
                    (vec![Some(key)], row)
                })
                .collect())
        };
        let mut rows = first(table, 0)?;
        let mut index = 0;
        while index < joins.len() {
            let join = &joins[index];
            if !join.starts_item {
                // The first table and every join before this one.
                rows = self.join_one(session, rows, index + 1, join, params)?;
                index += 1;
                continue;
            }
            let end = joins[index + 1..]
                .iter()
                .position(|j| j.starts_item)
                .map_or(joins.len(), |p| index + 1 + p);
            let mut item = first(&join.table, join.left_width)?;
            for (at, inner) in joins.iter().enumerate().take(end).skip(index + 1) {
                item = self.join_one(session, item, at - index, inner, params)?;
            }
            check_pairs(rows.len(), item.len())?;
            let mut out = Vec::with_capacity(rows.len() * item.len());
            for (keys, left) in &rows {
                for (item_keys, right) in &item {
                    PgError::check_statement_memory()?;
                    let mut keys = keys.clone();
                    keys.extend_from_slice(item_keys);
                    let mut row = left.clone();
                    row.extend_from_slice(&right[join.left_width..]);
                    out.push((keys, row));
                }
            }
            rows = out;
            index = end;
        }
        let mut out = Vec::new();
        for (keys, row) in rows {
            if passes(filter, &row, None, params)? {
                out.push((keys, row));
            }
        }
        Ok(out)
    }

    /// `rows` (each with the keys of its `tables_before`) joined with `join`'s table.
    fn join_one(
        &self,
        session: SessionId,
        rows: Vec<JoinedRow>,
        tables_before: usize,
        join: &JoinPlan,
        params: &[Value],
    ) -> Result<Vec<JoinedRow>, PgError> {
        let right = self.matching(session, &join.table, None, params)?;
        check_pairs(rows.len(), right.len())?;
        let mut right_met = vec![false; right.len()];
        let mut out: Vec<JoinedRow> = Vec::new();
        let mut pair: Vec<Value> = Vec::with_capacity(join.left_width + join.width);
        for (keys, left) in &rows {
            let mut met = false;
            for (index, (key, other)) in right.iter().enumerate() {
                PgError::check_statement_memory()?;
                pair.clear();
                pair.extend_from_slice(left);
                pair.extend_from_slice(other);
                if passes(join.on.as_ref(), &pair, None, params)? {
                    met = true;
                    right_met[index] = true;
                    let mut keys = keys.clone();
                    keys.push(Some(key.clone()));
                    out.push((keys, pair.clone()));
                }
            }
            if !met && matches!(join.kind, JoinKind::Left | JoinKind::Full) {
                let mut row = left.clone();
                row.resize(join.left_width + join.width, Value::Null);
                let mut keys = keys.clone();
                keys.push(None);
                out.push((keys, row));
            }
        }
        if matches!(join.kind, JoinKind::Right | JoinKind::Full) {
            for ((key, other), met) in right.iter().zip(&right_met) {
                if !met {
                    let mut row = vec![Value::Null; join.left_width];
                    row.extend_from_slice(other);
                    let mut keys = vec![None; tables_before];
                    keys.push(Some(key.clone()));
                    out.push((keys, row));
                }
            }
        }
        Ok(out)
    }

    /// About how many rows one run of `select` reads: the product of its tables' row counts,
    /// times what its own correlated subqueries read for each.
    fn rows_read(&self, select: &SelectPlan) -> usize {
        let count = |name: &str| self.tables.get(name).map_or(1, |t| t.rows.len().max(1));
        let tables = select
            .table
            .iter()
            .map(|t| count(t))
            .chain(select.joins.iter().map(|j| count(&j.table)))
            .fold(1usize, usize::saturating_mul);
        let nested =
            select
                .correlated
                .iter()
                .fold(0usize, |sum, subquery| match subquery.plan.as_ref() {
                    Plan::Select(inner) => sum.saturating_add(self.rows_read(inner)),
                    _ => sum,
                });
        tables.saturating_mul(nested.saturating_add(1))
    }

    /// `rows` with the values of the statement's `correlated` subqueries put after each row's
    /// columns (each run for that row, its outer columns bound to the row's values), and then
    /// only those that pass `filter`; or the outcome of a subquery that has to wait for a row
    /// lock (the statement waits, and runs again from the start). PostgreSQL runs a subquery
    /// only where its expression is evaluated; here each runs for every row before `WHERE`,
    /// so a subquery's error (21000, a division by zero) may come for a row `WHERE` excludes.
    #[allow(clippy::type_complexity)]
    fn with_correlated<K>(
        &mut self,
        session: SessionId,
        rows: Vec<(K, Vec<Value>)>,
        correlated: &[Subquery],
        filter: Option<&Expr>,
        params: &[Value],
    ) -> Result<Result<Vec<(K, Vec<Value>)>, Outcome>, PgError> {
        // Rows the subqueries would read in all, nested ones included: bounded as a join is.
        let per_row = correlated.iter().fold(0usize, |sum, subquery| {
            let Plan::Select(select) = subquery.plan.as_ref() else {
                unreachable!("a subquery is a SELECT")
            };
            sum.saturating_add(self.rows_read(select))
        });
        if rows.len().saturating_mul(per_row) > JOIN_PAIR_LIMIT {
            return Err(PgError::error(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "correlated subqueries that would read {} rows for each of {} rows are more than this stand-in runs (at most {JOIN_PAIR_LIMIT} rows in all)",
                    per_row,
                    rows.len()
                ),
            ));
        }
        let mut out = Vec::with_capacity(rows.len());
        for (key, mut row) in rows {
            let mut values = Vec::with_capacity(correlated.len());
            for subquery in correlated {
                let mut plan = (*subquery.plan).clone();
                let Plan::Select(select) = &mut plan else {
                    unreachable!("a subquery is a SELECT")
                };
                for expr in select_exprs_mut(select) {
                    expr.bind_outer(&row, params)?;
                }
                for nested in &mut select.correlated {
                    if let SubqueryKind::In(left, _) = &mut nested.kind {
                        left.bind_outer(&row, params)?;
                    }
                }
                let rows = match self.select(session, select, params, None)? {
                    Outcome::Done(result) => result.rows,
                    waiting => return Ok(Err(waiting)),
                };
                let result = subquery_result(&subquery.kind, rows, &[])?;
                values.push(result.eval(&EvalContext {
                    row: &row,
                    excluded: None,
                    params,
                })?);
            }
            row.extend(values);
            if passes(filter, &row, None, params)? {
                out.push((key, row));
            }
        }
        Ok(Ok(out))
    }

    fn select(
        &mut self,
        session: SessionId,
        plan: &SelectPlan,
        params: &[Value],
        waited: Option<(String, Value)>,
    ) -> Result<Outcome, PgError> {
        if plan
            .items
            .iter()
            .any(|(_, e)| e.has_advisory() || e.has_volatile_call())
        {
            return self.select_advisory(session, plan, params);
        }
        if plan.lock.is_none() && !plan.aggregate && plan.correlated.is_empty() {
            if let Some(descending) = self.read_in_key_order(plan) {
                return self.select_streaming(session, plan, params, descending);
            }
        }
        let mut join_keys: Vec<Vec<Option<Value>>> = Vec::new();
        // With correlated subqueries, `WHERE` is read once their values are in each row.
        let filter = if plan.correlated.is_empty() {
            plan.filter.as_ref()
        } else {
            None
        };
        let mut rows = match &plan.table {
            Some(table) if plan.joins.is_empty() => {
                self.matching(session, table, filter, params)?
            }
            Some(table) => {
                // A joined row's key is its place in `join_keys`.
                let joined = self.joined(session, table, &plan.joins, filter, params)?;
                let mut rows = Vec::with_capacity(joined.len());
                for (index, (keys, row)) in joined.into_iter().enumerate() {
                    join_keys.push(keys);
                    rows.push((Value::Int(index as i64), row));
                }
                rows
            }
            None => {
                if passes(filter, &[], None, params)? {
                    vec![(Value::Null, Vec::new())]
                } else {
                    Vec::new()
                }
            }
        };
        if !plan.correlated.is_empty() {
            let filter = plan.filter.as_ref();
            rows = match self.with_correlated(session, rows, &plan.correlated, filter, params)? {
                Ok(rows) => rows,
                Err(waiting) => return Ok(waiting),
            };
        }
        if plan.aggregate {
            return self.select_groups(plan, rows, params);
        }
        if !plan.order.is_empty() {
            // PostgreSQL computes the select list of every row below its Sort, so a row's
            // error comes before any row is returned, also from a row past the LIMIT.
            for (_, tuple) in &rows {
                project(&plan.items, tuple, None, params)?;
            }
        }
        sort_rows(&mut rows, &plan.order, params)?;
        let (limit, offset) = limit_and_offset(plan, params)?;
        // PostgreSQL locks the rows OFFSET skips too (its LockRows runs below its Limit).
        let limit = limit.map(|l| l.saturating_add(offset));
        let mut accepted = Vec::new();
        if let (Some(_), Some(table)) = (plan.lock, &plan.table) {
            let names: Vec<&str> = std::iter::once(table.as_str())
                .chain(plan.joins.iter().map(|j| j.table.as_str()))
                .collect();
            // Each locked table's lock and way of waiting.
            let lock_of = |source: usize| {
                let found = plan.lock_tables.iter().find(|(s, _, _)| *s == source);
                let &(_, mode, wait) = found.expect("a target is a locked table");
                (mode, wait)
            };
            // The rows a result row locks: its table's, or under a join the row of each table
            // the clauses name that the row came from.
            let targets_of = |key: &Value| -> Vec<(usize, Value)> {
                if plan.joins.is_empty() {
                    return vec![(0, key.clone())];
                }
                let Value::Int(index) = key else {
                    unreachable!("a joined row's key is its index")
                };
                let keys = &join_keys[*index as usize];
                plan.lock_tables
                    .iter()
                    .filter_map(|&(source, _, _)| keys[source].clone().map(|k| (source, k)))
                    .collect()
            };
            let mut locked: Vec<(usize, Value)> = Vec::new();
            'rows: for (key, tuple) in rows {
                if limit.is_some_and(|l| accepted.len() >= l) {
                    break;
                }
                let targets = targets_of(&key);
                for (source, target) in &targets {
                    let table = names[*source];
                    let (mode, wait) = lock_of(*source);
                    let row = self.tables[table].rows.get(target);
                    let blocker = row.and_then(|r| match mode {
                        LockMode::Update => r.locked_by_other(session),
                        LockMode::NoKeyUpdate => r.locked_by_other_no_key(session),
                        LockMode::Share => r.exclusively_locked_by_other(session),
                        LockMode::KeyShare => r.key_locked_by_other(session),
                    });
                    if let Some(holder) = blocker {
                        match wait {
                            Wait::Block => {
                                return Ok(Outcome::Wait(
                                    holder,
                                    Some((table.to_string(), target.clone())),
                                ))
                            }
                            Wait::Nowait => {
                                return Err(PgError::error(
                                    sqlstate::LOCK_NOT_AVAILABLE,
                                    format!("could not obtain lock on row in relation \"{table}\""),
                                ))
                            }
                            Wait::Skip => continue 'rows,
                        }
                    }
                }
                for (source, target) in &targets {
                    self.serialization_check(session, names[*source], target)?;
                }
                locked.extend(targets);
                accepted.push((key, tuple));
            }
            let _ = waited;
            if self.status(session) == Some(TxStatus::InBlock) {
                let tables = self.tables_mut();
                for (source, key) in &locked {
                    let (mode, _) = lock_of(*source);
                    let rows = &mut tables.get_mut(names[*source]).expect("table").rows;
                    if let Some(row) = rows.get_mut(key) {
                        match mode {
                            LockMode::Update => lock_row_in(row, session, None),
                            LockMode::NoKeyUpdate => lock_row_in_as(row, session, None, true),
                            LockMode::Share => row.share_with(session, false),
                            LockMode::KeyShare => row.share_with(session, true),
                        }
                    }
                }
            }
        } else {
            accepted = rows;
            if let Some(l) = limit {
                accepted.truncate(l);
            }
        }
        let out: Vec<Vec<Value>> = accepted
            .iter()
            .skip(offset)
            .map(|(_, tuple)| project(&plan.items, tuple, None, params))
            .collect::<Result<_, _>>()?;
        let count = out.len() as u64;
        Ok(Outcome::Done(SqlResult {
            columns: columns_of(&plan.items),
            rows: out,
            tag: format!("SELECT {count}"),
            rows_affected: count,
        }))
    }

    /// Whether PostgreSQL would read this unlocked, ungrouped `SELECT` as a stream in the
    /// primary key's order (its rows come in that order anyway): without `ORDER BY`
    /// (`Some(false)`), or ordered by the primary key alone with a `LIMIT` and without
    /// `WHERE`, which its planner reads by an index scan, forwards or backwards
    /// (`Some(descending)`; without the `LIMIT` its choice depends on the table's width, and
    /// this takes the sort). `None`: it sorts.
    /// A `SELECT` of advisory lock calls (and other items, computed on no row): the calls
    /// run left to right. When one has to wait, the ones before it are undone (they run again
    /// when the statement resumes).
    fn select_advisory(
        &mut self,
        session: SessionId,
        plan: &SelectPlan,
        params: &[Value],
    ) -> Result<Outcome, PgError> {
        let before = self.advisory.clone();
        let cx = EvalContext {
            row: &[],
            excluded: None,
            params,
        };
        let mut row = Vec::with_capacity(plan.items.len());
        let mut warning = None;
        for (_, expr) in &plan.items {
            let Expr::Advisory(function, arguments) = expr else {
                let resolved = self.resolve_volatile_calls(session, expr, &[], params)?;
                row.push(resolved.as_ref().unwrap_or(expr).eval(&cx)?);
                continue;
            };
            let values = eval_each(arguments, &[], params)?;
            let key = match values.as_slice() {
                [Value::Int(key)] => Some(AdvisoryKey::Big(*key)),
                [Value::Int(a), Value::Int(b)] => match (i32::try_from(*a), i32::try_from(*b)) {
                    (Ok(a), Ok(b)) => Some(AdvisoryKey::Pair(a, b)),
                    _ => None,
                },
                _ => None,
            };
            if key.is_none() && function.action != AdvisoryAction::UnlockAll {
                // A NULL argument: the functions are strict.
                row.push(Value::Null);
                continue;
            }
            match self.advisory_call(session, *function, key) {
                CallOutcome::Done(value, notice) => {
                    row.push(value);
                    warning = warning.or(notice);
                }
                CallOutcome::Wait(holder) => {
                    self.advisory = before;
                    let key = key.expect("a lock call has a key");
                    return Ok(Outcome::WaitAdvisory(holder, key, function.mode));
                }
            }
        }
        let result = SqlResult {
            columns: columns_of(&plan.items),
            rows: vec![row],
            tag: "SELECT 1".to_string(),
            rows_affected: 1,
        };
        Ok(with_notice(result, warning))
    }

    fn read_in_key_order(&self, plan: &SelectPlan) -> Option<bool> {
        if !plan.joins.is_empty() {
            return None;
        }
        match plan.order.as_slice() {
            [] => Some(false),
            [(Expr::Column(column, _), descending, _)]
                if plan.filter.is_none() && plan.limit.is_some() =>
            {
                let table = self.tables.get(plan.table.as_deref()?)?;
                (table.def.primary_key == Some(*column)).then_some(*descending)
            }
            _ => None,
        }
    }

    /// A `SELECT` that neither sorts, groups nor locks, read as PostgreSQL streams it: each
    /// row filtered and projected as it is read (the rows `OFFSET` skips too, none after the
    /// `LIMIT`th), so an error in a row comes after the rows before it
    /// ([`PgError::rows_before`]).
    fn select_streaming(
        &self,
        session: SessionId,
        plan: &SelectPlan,
        params: &[Value],
        descending: bool,
    ) -> Result<Outcome, PgError> {
        let (limit, offset) = limit_and_offset(plan, params)?;
        let mut rows = match &plan.table {
            Some(table) => self.matching(session, table, None, params)?,
            None => vec![(Value::Null, Vec::new())],
        };
        if descending {
            rows.reverse();
        }
        let mut out: Vec<Vec<Value>> = Vec::new();
        let mut read = 0usize;
        for (_, tuple) in &rows {
            if limit.is_some_and(|limit| out.len() >= limit) {
                break;
            }
            let row = match passes(plan.filter.as_ref(), tuple, None, params) {
                Ok(false) => continue,
                Ok(true) => project(&plan.items, tuple, None, params),
                Err(error) => Err(error),
            };
            match row {
                Ok(row) => {
                    read += 1;
                    if read > offset {
                        out.push(row);
                    }
                }
                Err(error) => {
                    return Err(PgError {
                        rows_before: (!out.is_empty()).then(|| Box::new(out)),
                        ..error
                    })
                }
            }
        }
        let count = out.len() as u64;
        Ok(Outcome::Done(SqlResult {
            columns: columns_of(&plan.items),
            rows: out,
            tag: format!("SELECT {count}"),
            rows_affected: count,
        }))
    }

    /// A `SELECT` with aggregates, `GROUP BY`, `HAVING` or `DISTINCT`: its rows grouped by the
    /// keys (in key order; one group of every row, even of none, without `GROUP BY`), groups
    /// failing `HAVING` dropped, each group's select list and `ORDER BY` keys computed over its
    /// rows, repeated result rows dropped under `DISTINCT`, then sorted, `OFFSET` and `LIMIT`.
    fn select_groups(
        &self,
        plan: &SelectPlan,
        rows: Vec<(Value, Vec<Value>)>,
        params: &[Value],
    ) -> Result<Outcome, PgError> {
        let eval_on = |expr: &Expr, group: &[Vec<Value>]| {
            let row: &[Value] = group.first().map_or(&[], Vec::as_slice);
            expr.fold_aggregates(group, params)?.eval(&EvalContext {
                row,
                excluded: None,
                params,
            })
        };
        let groups: Vec<Vec<Vec<Value>>> = if plan.group_by.is_empty() {
            vec![rows.into_iter().map(|(_, tuple)| tuple).collect()]
        } else {
            let mut grouped: BTreeMap<Vec<Value>, Vec<Vec<Value>>> = BTreeMap::new();
            for (_, tuple) in rows {
                let key = plan
                    .group_by
                    .iter()
                    .map(|e| {
                        e.eval(&EvalContext {
                            row: &tuple,
                            excluded: None,
                            params,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                grouped.entry(key).or_default().push(tuple);
            }
            grouped.into_values().collect()
        };
        let mut out: Vec<Vec<Value>> = Vec::with_capacity(groups.len());
        let mut keys: Vec<Vec<Value>> = Vec::with_capacity(groups.len());
        let mut seen: std::collections::BTreeSet<Vec<Value>> = std::collections::BTreeSet::new();
        for group in &groups {
            if let Some(having) = &plan.having {
                if eval_on(having, group)? != Value::Bool(true) {
                    continue;
                }
            }
            let row = plan
                .items
                .iter()
                .map(|(_, e)| eval_on(e, group))
                .collect::<Result<Vec<_>, _>>()?;
            let order = plan
                .order
                .iter()
                .map(|(e, _, _)| eval_on(e, group))
                .collect::<Result<Vec<_>, _>>()?;
            if plan.distinct && !seen.insert(row.clone()) {
                continue;
            }
            out.push(row);
            keys.push(order);
        }
        let order: Vec<usize> = sorted_order(&keys, &plan.order);
        let (limit, offset) = limit_and_offset(plan, params)?;
        let rows: Vec<Vec<Value>> = order
            .into_iter()
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
            .map(|i| std::mem::take(&mut out[i]))
            .collect();
        let count = rows.len() as u64;
        Ok(Outcome::Done(SqlResult {
            columns: columns_of(&plan.items),
            rows,
            tag: format!("SELECT {count}"),
            rows_affected: count,
        }))
    }

    /// Checks NOT NULL and CHECK constraints of a new tuple.
    fn check_row(def: &TableDef, tuple: &[Value], params: &[Value]) -> Result<(), PgError> {
        for (column, value) in def.columns.iter().zip(tuple) {
            if column.not_null && value.is_null() {
                return Err(PgError::error(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!(
                        "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                        column.name, def.name
                    ),
                )
                .with_detail(failing_row(tuple))
                .on(&def.name, Some(&column.name), None));
            }
        }
        for check in &def.checks {
            let value = check.expr.eval(&EvalContext {
                row: tuple,
                excluded: None,
                params,
            })?;
            if value == Value::Bool(false) {
                return Err(PgError::error(
                    sqlstate::CHECK_VIOLATION,
                    format!(
                        "new row for relation \"{}\" violates check constraint \"{}\"",
                        def.name, check.name
                    ),
                )
                .with_detail(failing_row(tuple))
                .on(&def.name, None, Some(&check.name)));
            }
        }
        Ok(())
    }

    /// An `INSERT`. The numbers its rows took from sequences stay taken when it fails, as
    /// in PostgreSQL; not when it waits (it runs again from the start when the wait is over,
    /// and takes them then).
    fn insert(
        &mut self,
        session: SessionId,
        plan: &InsertPlan,
        params: &[Value],
    ) -> Result<Outcome, PgError> {
        let mut sequences = self.tables[plan.table.as_str()].sequences.clone();
        let outcome = self.insert_rows(session, plan, params, &mut sequences);
        if outcome.is_err() {
            let stored = &self.tables[plan.table.as_str()].sequences;
            if *stored != sequences {
                if let Some(table) = self.tables_mut().get_mut(plan.table.as_str()) {
                    table.sequences = sequences;
                }
            }
        }
        outcome
    }

    /// The `xmax` an `ON CONFLICT DO UPDATE` leaves on the row it changed: the id of the
    /// session's transaction (given one now if it has none yet). Under a savepoint
    /// PostgreSQL shows the subtransaction's own id, which the stand-in does not number.
    fn updating_xid(&mut self, session: SessionId) -> Result<i64, PgError> {
        let in_savepoint = (self.sessions.get(&session)).is_some_and(|s| !s.savepoints.is_empty());
        if in_savepoint {
            return Err(unsupported(
                "xmax of a row changed under a savepoint (PostgreSQL shows the \
                 subtransaction's id)",
            ));
        }
        Ok(self.assign_txid(session).unwrap_or(0))
    }

    fn insert_rows(
        &mut self,
        session: SessionId,
        plan: &InsertPlan,
        params: &[Value],
        sequences: &mut BTreeMap<usize, i64>,
    ) -> Result<Outcome, PgError> {
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        let mut table = self.tables[plan.table.as_str()].clone();
        let def = table.def.clone();
        let mut returned = Vec::new();
        let mut count = 0u64;
        let mut touched: Vec<Value> = Vec::new();
        let calls = plan.rows.iter().flatten().any(Expr::has_volatile_call);
        // `xmax` in `RETURNING` reads a column after the table's: 0 for a row inserted, the
        // transaction's id for one `ON CONFLICT DO UPDATE` changed.
        let xmax_at = def.columns.len();
        let reads_xmax = (plan.returning.iter()).any(|(_, e)| mentions_column(e, xmax_at));
        let with_xmax = |row: &[Value], xmax: i64| -> Vec<Value> {
            row.iter().cloned().chain([Value::Int(xmax)]).collect()
        };
        // Each row to insert: its expressions and the source row they read (none for VALUES).
        let source_rows: Vec<Vec<Value>> = match &plan.source {
            Some(name) => self.relation_rows(name),
            None => Vec::new(),
        };
        let inputs: Vec<(&Vec<Expr>, &[Value])> = match &plan.source {
            Some(_) => source_rows
                .iter()
                .map(|row| (&plan.rows[0], &row[..]))
                .collect(),
            None => plan.rows.iter().map(|exprs| (exprs, &[][..])).collect(),
        };
        for (exprs, source_row) in inputs {
            let mut tuple = Vec::with_capacity(exprs.len());
            for (expr, column) in exprs.iter().zip(&def.columns) {
                let value = match expr {
                    Expr::Sequence { column: index, .. } => {
                        let value = next_in_sequence(sequences, *index, &def)?;
                        table.sequences.insert(*index, value);
                        // The column's default is `nextval` of its sequence: the session's
                        // `currval` and `lastval` follow.
                        let name = sequence_name(&def, *index);
                        let state = self.session_mut(session);
                        state.sequence_values.insert(name.clone(), value);
                        state.last_sequence = Some(name);
                        Value::Int(value)
                    }
                    other => {
                        let resolved = if calls {
                            self.resolve_volatile_calls(session, other, source_row, params)?
                        } else {
                            None
                        };
                        resolved.as_ref().unwrap_or(other).eval(&EvalContext {
                            row: source_row,
                            excluded: None,
                            params,
                        })?
                    }
                };
                tuple.push(cast(value, column.ty)?);
            }
            Self::check_row(&def, &tuple, params)?;
            // Whether `ON CONFLICT` handles a conflict on the unique index at a position of
            // `def.indexes` (none: the primary key).
            let handled = |index: Option<usize>| {
                !matches!(plan.conflict, Conflict::Error) && plan.arbiter.covers(index)
            };
            // The arbiters among the unique indexes first, as PostgreSQL's speculative
            // insertion checks them before it inserts; a row they find is the conflict.
            let mut conflicting = None;
            for (position, unique) in def.indexes.iter().enumerate() {
                if !unique.unique || !handled(Some(position)) {
                    continue;
                }
                match index::clash(&table, unique, &tuple, session, None)? {
                    Clash::None => {}
                    Clash::Wait(holder) => return Ok(Outcome::Wait(holder, None)),
                    Clash::Row(key) => {
                        conflicting = Some(key);
                        break;
                    }
                }
            }
            let on_other_index = conflicting.is_some();
            let key = match (conflicting, def.primary_key) {
                (Some(key), _) => key,
                (None, Some(pk)) => tuple[pk].clone(),
                (None, None) => {
                    table.next_seq += 1;
                    Value::Int(table.next_seq - 1)
                }
            };
            let existing = table.rows.get(&key);
            let pending_other = existing
                .and_then(|r| r.lock.as_ref())
                .filter(|l| l.holder != session && l.uncommitted.is_some());
            if let Some(lock) = pending_other {
                return Ok(Outcome::Wait(lock.holder, None));
            }
            let live = existing.and_then(|r| r.visible_tuple(session).cloned());
            if let Some(old) = live {
                let action = if on_other_index || handled(None) {
                    &plan.conflict
                } else {
                    &Conflict::Error
                };
                match action {
                    Conflict::Error => {
                        let pk = &def.columns[def.primary_key.expect("a key conflict needs a key")];
                        return Err(PgError::error(
                            sqlstate::UNIQUE_VIOLATION,
                            format!(
                                "duplicate key value violates unique constraint \"{}_pkey\"",
                                def.name
                            ),
                        )
                        .with_detail(format!(
                            "Key ({})=({}) already exists.",
                            pk.name,
                            key.detail_text()
                        ))
                        .on(
                            &def.name,
                            None,
                            Some(&format!("{}_pkey", def.name)),
                        ));
                    }
                    Conflict::Nothing => continue,
                    Conflict::Update(assignments, filter) => {
                        if touched.contains(&key) {
                            return Err(PgError::error(
                                "21000",
                                "ON CONFLICT DO UPDATE command cannot affect row a second time",
                            )
                            .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
                        }
                        touched.push(key.clone());
                        let row = table.rows.get(&key).expect("exists");
                        let assigns_key = assigns_key(&def, assignments);
                        let holder = if assigns_key {
                            row.locked_by_other(session)
                        } else {
                            row.locked_by_other_no_key(session)
                        };
                        if let Some(holder) = holder {
                            return Ok(Outcome::Wait(holder, None));
                        }
                        let keep_lock = in_block;
                        if !passes(filter.as_ref(), &old, Some(&tuple), params)? {
                            if keep_lock {
                                lock_row_in_as(
                                    table.rows.get_mut(&key).expect("exists"),
                                    session,
                                    None,
                                    !assigns_key,
                                );
                            }
                            continue;
                        }
                        let mut new = old.clone();
                        for (index, expr) in assignments {
                            let value = expr.eval(&EvalContext {
                                row: &old,
                                excluded: Some(&tuple),
                                params,
                            })?;
                            new[*index] = cast(value, def.columns[*index].ty)?;
                        }
                        Self::check_row(&def, &new, params)?;
                        if let Some(outcome) =
                            unique_check(&table, &def, &new, Some((&key, &old)), session)?
                        {
                            return Ok(outcome);
                        }
                        let no_key = !index::changes_key(&def, &old, &new);
                        let row = table.rows.get_mut(&key).expect("exists");
                        if in_block {
                            lock_row_in_as(row, session, Some(Written::Row(new.clone())), no_key);
                        } else {
                            row.committed = Some(new.clone());
                        }
                        if reads_xmax {
                            let xmax = self.updating_xid(session)?;
                            let new = with_xmax(&new, xmax);
                            returned.push(project(&plan.returning, &new, None, params)?);
                        } else {
                            returned.push(project(&plan.returning, &new, None, params)?);
                        }
                        count += 1;
                        continue;
                    }
                }
            }
            // The other unique indexes, after the primary key, in the order they were made.
            for (position, unique) in def.indexes.iter().enumerate() {
                if !unique.unique || handled(Some(position)) {
                    continue;
                }
                match index::clash(&table, unique, &tuple, session, None)? {
                    Clash::None => {}
                    Clash::Wait(holder) => return Ok(Outcome::Wait(holder, None)),
                    Clash::Row(_) => return Err(index::violation(&def, unique, &tuple)),
                }
            }
            touched.push(key.clone());
            let row = table.rows.entry(key).or_insert(Row {
                committed: None,
                lock: None,
                shared: Vec::new(),
                key_only: Vec::new(),
                waiters: Vec::new(),
            });
            if in_block {
                lock_row_in(row, session, Some(Written::Row(tuple.clone())));
            } else {
                row.committed = Some(tuple.clone());
            }
            if reads_xmax {
                let tuple = with_xmax(&tuple, 0);
                returned.push(project(&plan.returning, &tuple, None, params)?);
            } else {
                returned.push(project(&plan.returning, &tuple, None, params)?);
            }
            count += 1;
        }
        *self
            .tables_mut()
            .get_mut(plan.table.as_str())
            .expect("the plan's table exists") = table;
        Ok(Outcome::Done(written(
            &plan.returning,
            returned,
            "INSERT 0",
            count,
        )))
    }

    /// [`Postgres::targets`], with the values of correlated subqueries put after each row's
    /// columns before `filter` is read ([`Postgres::with_correlated`]).
    #[allow(clippy::type_complexity)]
    fn targets_with_correlated(
        &mut self,
        session: SessionId,
        table: &str,
        joins: &[JoinPlan],
        filter: Option<&Expr>,
        correlated: &[Subquery],
        params: &[Value],
    ) -> Result<Result<Vec<(Value, Vec<Value>)>, Outcome>, PgError> {
        if correlated.is_empty() {
            return Ok(Ok(self.targets(session, table, joins, filter, params)?));
        }
        if joins.is_empty() {
            let rows = self.targets(session, table, joins, None, params)?;
            return self.with_correlated(session, rows, correlated, filter, params);
        }
        // Every combination, so that the first one that passes is the one a row changes with.
        let rows = self.joined(session, table, joins, None, params)?;
        Ok(self
            .with_correlated(session, rows, correlated, filter, params)?
            .map(first_per_target))
    }

    /// The rows an `UPDATE` or `DELETE` changes, each with its key: those of `table` that pass
    /// `filter`, or, with `FROM`/`USING` tables, each row of `table` joined to the first
    /// combination of theirs that passes (PostgreSQL changes a row once, with one of the
    /// combinations, which one unspecified), its values followed by theirs.
    fn targets(
        &self,
        session: SessionId,
        table: &str,
        joins: &[JoinPlan],
        filter: Option<&Expr>,
        params: &[Value],
    ) -> Result<Vec<(Value, Vec<Value>)>, PgError> {
        if joins.is_empty() {
            return self.matching(session, table, filter, params);
        }
        Ok(first_per_target(
            self.joined(session, table, joins, filter, params)?,
        ))
    }

    fn update_rows(
        &mut self,
        session: SessionId,
        plan: &UpdatePlan,
        params: &[Value],
        resuming: bool,
        waited: Option<(String, Value)>,
    ) -> Result<Outcome, PgError> {
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        let def = self.tables[plan.table.as_str()].def.clone();
        let width = def.columns.len();
        let candidates = match self.targets_with_correlated(
            session,
            &plan.table,
            &plan.joins,
            plan.filter.as_ref(),
            &plan.correlated,
            params,
        )? {
            Ok(candidates) => candidates,
            Err(waiting) => return Ok(waiting),
        };
        // Each row's key, its new values, and the values of `FROM`'s tables it was joined to.
        let mut changes: Vec<(Value, Vec<Value>, Vec<Value>)> = Vec::new();
        let calls = plan.assignments.iter().any(|(_, e)| e.has_volatile_call());
        for (key, joined) in &candidates {
            let mut new = joined[..width].to_vec();
            for (index, expr) in &plan.assignments {
                let resolved = if calls {
                    self.resolve_volatile_calls(session, expr, joined, params)?
                } else {
                    None
                };
                let value = resolved.as_ref().unwrap_or(expr).eval(&EvalContext {
                    row: joined,
                    excluded: None,
                    params,
                })?;
                new[*index] = cast(value, def.columns[*index].ty)?;
            }
            Self::check_row(&def, &new, params)?;
            changes.push((key.clone(), new, joined[width..].to_vec()));
        }
        // Each row's lock: `FOR NO KEY UPDATE`'s when the row keeps its key, as PostgreSQL's
        // `heap_update` decides it row by row.
        let no_key: Vec<bool> = changes
            .iter()
            .map(|(key, new, _)| {
                let row = self.tables[plan.table.as_str()].rows.get(key);
                let old = row.and_then(|r| r.visible_tuple(session));
                old.is_some_and(|old| !index::changes_key(&def, old, new))
            })
            .collect();
        let mut blocker = None;
        for ((key, _, _), &no_key) in changes.iter().zip(&no_key) {
            let row = self.tables[plan.table.as_str()].rows.get(key);
            let holder = row.and_then(|r| {
                if no_key {
                    r.locked_by_other_no_key(session)
                } else {
                    r.locked_by_other(session)
                }
            });
            if let Some(holder) = holder {
                blocker = Some((holder, key.clone()));
                break;
            }
        }
        if let Some((holder, key)) = blocker {
            return Ok(Outcome::Wait(holder, Some((plan.table.clone(), key))));
        }
        // A resumed statement locks the row it is about (the row its WHERE clause pins by
        // primary key, else the row it waited for) before re-checking its WHERE clause: if
        // another transaction holds that row, it waits again; if the re-check fails, it keeps
        // the lock (inside a block) and updates nothing there.
        let resume_key = if resuming {
            def.primary_key
                .and_then(|pk| pinned_key(plan.filter.as_ref(), pk, params))
                .or(waited
                    .filter(|(name, _)| *name == plan.table)
                    .map(|(_, key)| key))
                .filter(|key| !changes.iter().any(|(k, _, _)| k == key))
        } else {
            None
        };
        // The lock of a row the statement re-checks after its wait.
        let assigns_key = assigns_key(&def, &plan.assignments);
        if let Some(key) = &resume_key {
            let row = self.tables[plan.table.as_str()].rows.get(key);
            if row.is_some_and(|r| r.visible_tuple(session).is_some()) {
                let holder = row.and_then(|r| {
                    if assigns_key {
                        r.locked_by_other(session)
                    } else {
                        r.locked_by_other_no_key(session)
                    }
                });
                if let Some(holder) = holder {
                    return Ok(Outcome::Wait(
                        holder,
                        Some((plan.table.clone(), key.clone())),
                    ));
                }
            }
        }
        for (key, _, _) in &changes {
            self.serialization_check(session, &plan.table, key)?;
        }
        let mut table = self.tables[plan.table.as_str()].clone();
        if let Some(key) = resume_key.filter(|_| in_block) {
            if let Some(row) = table.rows.get_mut(&key) {
                if row.visible_tuple(session).is_some() {
                    lock_row_in_as(row, session, None, !assigns_key);
                }
            }
        }
        let mut returned = Vec::new();
        let has_unique = def.indexes.iter().any(|index| index.unique);
        for ((key, new, from), &no_key) in changes.iter().zip(&no_key) {
            if has_unique {
                // Each row is checked as it changes, against the rows changed before it.
                let old = table.rows.get(key).and_then(|r| r.visible_tuple(session));
                if let Some(old) = old.cloned() {
                    if let Some(outcome) =
                        unique_check(&table, &def, new, Some((key, &old)), session)?
                    {
                        return Ok(outcome);
                    }
                }
            }
            let new_key = def.primary_key.map(|pk| new[pk].clone());
            if let Some(new_key) = new_key.filter(|k| k != key) {
                // Checked row by row as PostgreSQL checks it: a row of this statement that
                // has not moved yet still holds its key (`SET id = id + 1` over 1 and 2 is
                // 23505 at 2); one that moved already left its key free.
                let there = table.rows.get(&new_key);
                let pending_other = there
                    .and_then(|r| r.lock.as_ref())
                    .filter(|l| l.holder != session && l.uncommitted.is_some());
                if let Some(lock) = pending_other {
                    return Ok(Outcome::Wait(lock.holder, None));
                }
                let clash = there.and_then(|r| r.visible_tuple(session)).is_some();
                if clash {
                    let pk = &def.columns[def.primary_key.expect("key")];
                    return Err(PgError::error(
                        sqlstate::UNIQUE_VIOLATION,
                        format!(
                            "duplicate key value violates unique constraint \"{}_pkey\"",
                            def.name
                        ),
                    )
                    .with_detail(format!(
                        "Key ({})=({}) already exists.",
                        pk.name,
                        new_key.detail_text()
                    ))
                    .on(&def.name, None, Some(&format!("{}_pkey", def.name))));
                }
                // The row moves to its new key: the old one is deleted.
                let old_row = table.rows.get_mut(key).expect("candidate exists");
                if in_block {
                    lock_row_in(old_row, session, Some(Written::Deleted));
                } else {
                    table.rows.remove(key);
                }
                let row = table.rows.entry(new_key).or_insert(Row {
                    committed: None,
                    lock: None,
                    shared: Vec::new(),
                    key_only: Vec::new(),
                    waiters: Vec::new(),
                });
                if in_block {
                    lock_row_in(row, session, Some(Written::Row(new.clone())));
                } else {
                    row.committed = Some(new.clone());
                }
            } else {
                let row = table.rows.get_mut(key).expect("candidate exists");
                if in_block {
                    lock_row_in_as(row, session, Some(Written::Row(new.clone())), no_key);
                } else {
                    row.committed = Some(new.clone());
                }
            }
            if from.is_empty() {
                returned.push(project(&plan.returning, new, None, params)?);
            } else {
                let row: Vec<Value> = new.iter().chain(from).cloned().collect();
                returned.push(project(&plan.returning, &row, None, params)?);
            }
        }
        *self
            .tables_mut()
            .get_mut(plan.table.as_str())
            .expect("the plan's table exists") = table;
        let count = changes.len() as u64;
        Ok(Outcome::Done(written(
            &plan.returning,
            returned,
            "UPDATE",
            count,
        )))
    }

    fn delete_rows(
        &mut self,
        session: SessionId,
        plan: &DeletePlan,
        params: &[Value],
        waited: Option<(String, Value)>,
    ) -> Result<Outcome, PgError> {
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        let candidates = match self.targets_with_correlated(
            session,
            &plan.table,
            &plan.joins,
            plan.filter.as_ref(),
            &plan.correlated,
            params,
        )? {
            Ok(candidates) => candidates,
            Err(waiting) => return Ok(waiting),
        };
        for (key, _) in &candidates {
            let row = self.tables[plan.table.as_str()].rows.get(key);
            if let Some(holder) = row.and_then(|r| r.locked_by_other(session)) {
                return Ok(Outcome::Wait(
                    holder,
                    Some((plan.table.clone(), key.clone())),
                ));
            }
        }
        for (key, _) in &candidates {
            self.serialization_check(session, &plan.table, key)?;
        }
        let _ = waited;
        let mut table = self.tables[plan.table.as_str()].clone();
        let mut returned = Vec::new();
        for (key, old) in &candidates {
            if in_block {
                lock_row_in(
                    table.rows.get_mut(key).expect("exists"),
                    session,
                    Some(Written::Deleted),
                );
            } else {
                table.rows.remove(key);
            }
            returned.push(project(&plan.returning, old, None, params)?);
        }
        *self
            .tables_mut()
            .get_mut(plan.table.as_str())
            .expect("the plan's table exists") = table;
        let count = candidates.len() as u64;
        Ok(Outcome::Done(written(
            &plan.returning,
            returned,
            "DELETE",
            count,
        )))
    }

    fn create(&mut self, session: SessionId, def: TableDef, if_not_exists: bool) -> SqlExecuted {
        if self.relation(&def.name).is_some() {
            let message = format!("relation \"{}\" already exists", def.name);
            if if_not_exists {
                return SqlExecuted {
                    exec: SqlExec::Done(Ok(tag_only("CREATE TABLE"))),
                    notice: Some(PgError {
                        severity: "NOTICE",
                        ..PgError::error(sqlstate::DUPLICATE_TABLE, format!("{message}, skipping"))
                    }),
                };
            }
            return done(Err(PgError::error(sqlstate::DUPLICATE_TABLE, message)));
        }
        let mut def = def;
        let mut named: Vec<String> = Vec::new();
        for position in 0..def.indexes.len() {
            let taken = |name: &str| {
                self.relation(name).is_some()
                    || name == def.name
                    || (def.primary_key.is_some() && name == index::primary_key_name(&def.name))
                    || named.iter().any(|n| n == name)
            };
            let given = &def.indexes[position].name;
            let name = if given.is_empty() {
                let columns: Vec<&str> = def.indexes[position]
                    .columns
                    .iter()
                    .map(|&c| def.columns[c].name.as_str())
                    .collect();
                index::choose_name(&def.name, &columns, "key", taken)
            } else if taken(given) {
                return done(Err(PgError::error(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{given}\" already exists"),
                )));
            } else {
                given.clone()
            };
            named.push(name.clone());
            def.indexes[position].name = name;
        }
        self.remember_table(session, &def.name, TableChange::Created);
        self.create_table(def);
        done(Ok(tag_only("CREATE TABLE")))
    }

    fn drop_tables(
        &mut self,
        session: SessionId,
        names: Vec<String>,
        if_exists: bool,
    ) -> Result<Outcome, PgError> {
        let mut notice = None;
        for name in &names {
            if self.is_sequence(name) {
                return Err(wrong_object_type(
                    name,
                    "table",
                    "DROP SEQUENCE to remove a sequence",
                ));
            }
            if matches!(self.relation(name), Some(Relation::Index { .. })) {
                return Err(wrong_object_type(
                    name,
                    "table",
                    "DROP INDEX to remove an index",
                ));
            }
            match self.tables.get(name.as_str()) {
                None if if_exists => {
                    notice = Some(skipped("table", name));
                }
                None => {
                    return Err(PgError::error(
                        sqlstate::UNDEFINED_TABLE,
                        format!("table \"{name}\" does not exist"),
                    ))
                }
                Some(table) => {
                    if let Some(holder) =
                        table.rows.values().find_map(|r| r.locked_by_other(session))
                    {
                        return Ok(Outcome::Wait(holder, None));
                    }
                }
            }
        }
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        for name in &names {
            let Some(table) = self.tables_mut().remove(name.as_str()) else {
                continue;
            };
            if in_block {
                // Given back by a rollback; forgotten when the block commits.
                let entry = CatalogUndo::Table {
                    name: name.as_str().into(),
                    before: Some(table),
                    change: TableChange::Dropped,
                };
                self.remember_ddl(session, entry);
            } else {
                self.forget_column_sequences(&table.def);
            }
        }
        self.forget_waits_on_released(session);
        let result = tag_only("DROP TABLE");
        Ok(with_notice(result, notice))
    }

    fn create_sequence(
        &mut self,
        session: SessionId,
        sequence: Sequence,
        if_not_exists: bool,
    ) -> Result<Outcome, PgError> {
        let name = sequence.name.as_str();
        if self.relation(name).is_some() {
            let message = format!("relation \"{name}\" already exists");
            if if_not_exists {
                return Ok(Outcome::Notice(
                    tag_only("CREATE SEQUENCE"),
                    PgError {
                        severity: "NOTICE",
                        ..PgError::error(sqlstate::DUPLICATE_TABLE, format!("{message}, skipping"))
                    },
                ));
            }
            return Err(PgError::error(sqlstate::DUPLICATE_TABLE, message));
        }
        self.remember_sequence(session, &sequence.name);
        self.sequences
            .insert(sequence.name.as_str().into(), sequence);
        Ok(Outcome::Done(tag_only("CREATE SEQUENCE")))
    }

    /// `DROP SEQUENCE`: refused (2BP01) while a column's default calls it, unless `CASCADE`
    /// (which the stand-in does not run for such a sequence). The sessions' `currval` of it
    /// goes with it: one created again under the name is another sequence.
    fn drop_sequences(
        &mut self,
        session: SessionId,
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    ) -> Result<Outcome, PgError> {
        let mut notice = None;
        for name in &names {
            if self.sequences.contains_key(name.as_str()) {
                let dependents = self.defaults_calling(name);
                if !dependents.is_empty() {
                    if cascade {
                        return Err(unsupported(&format!(
                            "DROP SEQUENCE {name} CASCADE while column defaults call it"
                        )));
                    }
                    return Err(PgError::error(
                        "2BP01",
                        format!("cannot drop sequence {name} because other objects depend on it"),
                    )
                    .with_detail(
                        dependents
                            .iter()
                            .map(|(table, column)| {
                                format!(
                                    "default value for column {column} of table {table} \
                                     depends on sequence {name}"
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n"),
                    )
                    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                }
            } else if self.tables.contains_key(name.as_str()) {
                return Err(wrong_object_type(
                    name,
                    "sequence",
                    "DROP TABLE to remove a table",
                ));
            } else if matches!(self.relation(name), Some(Relation::Index { .. })) {
                return Err(wrong_object_type(
                    name,
                    "sequence",
                    "DROP INDEX to remove an index",
                ));
            } else if let Some((table, column)) = self.column_sequence(name) {
                let def = &self.tables[&table].def;
                let column_name = &def.columns[column].name;
                let identity = matches!(
                    def.columns[column].default,
                    Some(Expr::Sequence {
                        kind: SequenceKind::ByDefault | SequenceKind::Always,
                        ..
                    })
                );
                if cascade && !identity {
                    return Err(unsupported(&format!(
                        "DROP SEQUENCE {name} CASCADE of a serial column's sequence"
                    )));
                }
                let error = PgError::error(
                    "2BP01",
                    if identity {
                        format!(
                            "cannot drop sequence {name} because column {column_name} of table \
                             {table} requires it"
                        )
                    } else {
                        format!("cannot drop sequence {name} because other objects depend on it")
                    },
                );
                return Err(if identity {
                    error.with_hint(format!(
                        "You can drop column {column_name} of table {table} instead."
                    ))
                } else {
                    error
                        .with_detail(format!(
                            "default value for column {column_name} of table {table} depends \
                             on sequence {name}"
                        ))
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
                });
            } else if if_exists {
                notice = Some(skipped("sequence", name));
            } else {
                return Err(PgError::error(
                    sqlstate::UNDEFINED_TABLE,
                    format!("sequence \"{name}\" does not exist"),
                ));
            }
        }
        let in_block = self.status(session) == Some(TxStatus::InBlock);
        for name in &names {
            if !self.sequences.contains_key(name.as_str()) {
                continue;
            }
            // Given back by a rollback; forgotten when the block commits.
            self.remember_sequence(session, name);
            self.sequences.remove(name.as_str());
            if !in_block {
                self.forget_sequence(name);
            }
        }
        let result = tag_only("DROP SEQUENCE");
        Ok(with_notice(result, notice))
    }

    /// The `(table, column)`s whose default calls sequence `name` (written as a literal).
    fn defaults_calling(&self, name: &str) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (table_name, table) in self.tables.iter() {
            for column in &table.def.columns {
                let calls_it = |expr: &Expr| match expr {
                    Expr::VolatileCall(_, arguments) => matches!(
                        arguments.first(),
                        Some(Expr::Const(Value::Text(text), _))
                            if relation_name(text).is_ok_and(|n| n == name)
                    ),
                    _ => false,
                };
                if column
                    .default
                    .as_ref()
                    .is_some_and(|d| d.contains(&calls_it))
                {
                    found.push((table_name.to_string(), column.name.clone()));
                }
            }
        }
        found
    }

    /// Every sequence function call in `expr` run now for `session`, on `row`, left to right,
    /// and put in its place; None when `expr` calls none.
    fn resolve_volatile_calls(
        &mut self,
        session: SessionId,
        expr: &Expr,
        row: &[Value],
        params: &[Value],
    ) -> Result<Option<Expr>, PgError> {
        // A stable call is left for here only when a volatile one stands beside it.
        if !expr.contains(&|e| matches!(e, Expr::VolatileCall(..))) {
            return Ok(None);
        }
        let mut resolved = expr.clone();
        resolved.replace_volatile_calls(&mut |function, arguments| {
            let values = eval_each(arguments, row, params)?;
            match function {
                VolatileFn::Sequence(function) => self.sequence_value(session, function, values),
                VolatileFn::Random(function) => self.random_value(session, function, &values),
                VolatileFn::Sleep => Ok(self.sleep_call(&values)),
                VolatileFn::Setting(function) => {
                    settings::call(self.session_mut(session), function, &values)
                }
            }
        })?;
        Ok(Some(resolved))
    }

    /// Every stable function call of `plan` (`current_setting`) run now for `session` and put
    /// in its place; its arguments are constants and parameters (`volatile_call` refuses
    /// others).
    fn resolve_stable_calls(
        &self,
        session: SessionId,
        plan: &mut Plan,
        params: &[Value],
    ) -> Result<(), PgError> {
        let mut failed = None;
        let state = self.sessions.get(&session).expect("connected");
        change_exprs_in(plan, &mut |expr| {
            let mut pending: Vec<&mut Expr> = vec![expr];
            while let Some(expr) = pending.pop() {
                let Expr::VolatileCall(VolatileFn::Setting(function), arguments) = expr else {
                    pending.extend(expr.parts_mut());
                    continue;
                };
                if failed.is_some() || !function_is_stable(*function) {
                    continue;
                }
                let value = eval_each(arguments, &[], params)
                    .and_then(|values| settings::read(state, &values));
                match value {
                    Ok(value) => *expr = Expr::Const(value, SqlType::Text),
                    Err(error) => failed = Some(error),
                }
            }
        });
        failed.map_or(Ok(()), Err)
    }

    /// One call of `random()`, `setseed()` or `gen_random_uuid()` for `session`
    /// (`random.rs`); strict, as PostgreSQL's are (`setseed(NULL)` answers NULL, seeding
    /// nothing).
    fn random_value(
        &mut self,
        session: SessionId,
        function: RandomFn,
        values: &[Value],
    ) -> Result<Value, PgError> {
        if values.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        Ok(match function {
            RandomFn::Random => Value::Float(Float(self.next_random_double(session))),
            RandomFn::SetSeed => {
                let [Value::Float(Float(seed))] = values else {
                    unreachable!("setseed's argument was converted to double precision");
                };
                self.set_session_seed(session, random::check_seed(*seed)?);
                Value::Text(String::new())
            }
            RandomFn::GenRandomUuid => Value::Uuid(self.next_uuid()),
        })
    }

    /// One sequence function for `session` on its arguments' values, as PostgreSQL runs it:
    /// strict (a NULL argument answers NULL), 25006 for a change in a read-only transaction,
    /// 42P01 / 42809 for a name that is no sequence, 55000 for `currval`/`lastval` before
    /// the session has a value.
    fn sequence_value(
        &mut self,
        session: SessionId,
        function: SequenceFn,
        values: Vec<Value>,
    ) -> Result<Value, PgError> {
        let state = &self.sessions[&session];
        if function.writes() && state.read_only {
            return Err(PgError::error(
                "25006",
                format!(
                    "cannot execute {}() in a read-only transaction",
                    function.name()
                ),
            ));
        }
        let not_yet = |what: String| {
            PgError::error(
                "55000",
                format!("{what} is not yet defined in this session"),
            )
        };
        if function == SequenceFn::LastVal {
            let value = state
                .last_sequence
                .as_ref()
                .and_then(|name| state.sequence_values.get(name));
            return value
                .map(|v| Value::Int(*v))
                .ok_or_else(|| not_yet("lastval".to_string()));
        }
        if values.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let mut values = values.into_iter();
        let Some(Value::Text(text)) = values.next() else {
            return Ok(Value::Null);
        };
        let name = relation_name(&text)?;
        let target = if self.sequences.contains_key(name.as_str()) {
            SequenceTarget::Created
        } else if let Some((table, column)) = self.column_sequence(&name) {
            SequenceTarget::Column(table, column)
        } else if self.tables.contains_key(name.as_str()) {
            return Err(PgError::error(
                "42809",
                format!("\"{name}\" is not a sequence"),
            ));
        } else {
            return Err(missing_relation(&name));
        };
        match function {
            SequenceFn::NextVal => {
                let value = self.advance_sequence(&name, &target)?;
                let state = self.session_mut(session);
                state.sequence_values.insert(name.clone(), value);
                state.last_sequence = Some(name);
                Ok(Value::Int(value))
            }
            SequenceFn::SetVal => {
                let value = match values.next() {
                    Some(Value::Int(value)) => value,
                    _ => return Ok(Value::Null),
                };
                let is_called = !matches!(values.next(), Some(Value::Bool(false)));
                self.set_sequence(&name, &target, value, is_called)?;
                if is_called {
                    self.session_mut(session)
                        .sequence_values
                        .insert(name, value);
                }
                Ok(Value::Int(value))
            }
            SequenceFn::CurrVal => self.sessions[&session]
                .sequence_values
                .get(name.as_str())
                .map(|v| Value::Int(*v))
                .ok_or_else(|| not_yet(format!("currval of sequence \"{name}\""))),
            SequenceFn::LastVal => unreachable!("answered above"),
        }
    }

    /// The next value of sequence `name` (2200H past its end).
    fn advance_sequence(&mut self, name: &str, target: &SequenceTarget) -> Result<i64, PgError> {
        match target {
            SequenceTarget::Created => self
                .sequences
                .get_mut(name)
                .expect("a sequence found by name")
                .advance(),
            SequenceTarget::Column(table, column) => {
                let def = self.tables[table].def.clone();
                let mut counters = self.tables[table].sequences.clone();
                let value = next_in_sequence(&mut counters, *column, &def)?;
                if let Some(stored) = self.tables_mut().get_mut(table) {
                    stored.sequences = counters;
                }
                Ok(value)
            }
        }
    }

    /// `setval` of sequence `name`: 22003 outside its bounds (for a column's, 1 and its type's
    /// largest value); with `is_called` false, `value` is the next one given.
    fn set_sequence(
        &mut self,
        name: &str,
        target: &SequenceTarget,
        value: i64,
        is_called: bool,
    ) -> Result<(), PgError> {
        match target {
            SequenceTarget::Created => self
                .sequences
                .get_mut(name)
                .expect("a sequence found by name")
                .set(value, is_called),
            SequenceTarget::Column(table, column) => {
                let max = column_sequence_max(&self.tables[table].def, *column);
                if !(1..=max).contains(&value) {
                    return Err(PgError::error(
                        "22003",
                        format!(
                            "setval: value {value} is out of bounds for sequence \"{name}\" \
                             (1..{max})"
                        ),
                    ));
                }
                let last_given = if is_called { value } else { value - 1 };
                if let Some(stored) = self.tables_mut().get_mut(table) {
                    stored.sequences.insert(*column, last_given);
                }
                Ok(())
            }
        }
    }

    /// The `serial` or identity column whose sequence is called `name`: its table and column.
    fn column_sequence(&self, name: &str) -> Option<(Arc<str>, usize)> {
        column_sequence(&self.tables, name)
    }

    /// Whether `name` is a sequence: one made by `CREATE SEQUENCE` or a column's.
    fn is_sequence(&self, name: &str) -> bool {
        self.sequences.contains_key(name) || self.column_sequence(name).is_some()
    }

    /// A dropped sequence leaves every session's `currval` (and `lastval`, if it was the last).
    /// Forgets the sequences of `def`'s `serial` and identity columns (their table is
    /// dropped), and every session's `currval` of them.
    pub(super) fn forget_column_sequences(&mut self, def: &TableDef) {
        for column in 0..def.columns.len() {
            if matches!(def.columns[column].default, Some(Expr::Sequence { .. })) {
                self.forget_sequence(&sequence_name(def, column));
            }
        }
    }

    pub(super) fn forget_sequence(&mut self, name: &str) {
        for state in self.sessions.values_mut() {
            state.sequence_values.remove(name);
            if state.last_sequence.as_deref() == Some(name) {
                state.last_sequence = None;
            }
        }
    }

    /// The table locks a statement takes before it runs, in order (`table_lock.rs`): its
    /// target's first, then every table it reads, each in the mode its use asks for. Tables
    /// of the statement's own (a `WITH` query's, a subquery's in `FROM`) and names that are
    /// no table now take none.
    fn table_lock_requests(&self, plan: &Plan) -> Vec<(Arc<str>, TableLockMode)> {
        let mut requests = Vec::new();
        self.plan_table_locks(plan, &mut requests);
        requests
    }

    fn plan_table_locks(&self, plan: &Plan, out: &mut Vec<(Arc<str>, TableLockMode)>) {
        let mut take = |name: &str, mode: TableLockMode| {
            if let Some((key, _)) = self.tables.get_key_value(name) {
                if !out.contains(&(key.clone(), mode)) {
                    out.push((key.clone(), mode));
                }
            }
        };
        match plan {
            Plan::Select(select) => {
                for (at, table) in select
                    .table
                    .iter()
                    .chain(select.joins.iter().map(|join| &join.table))
                    .enumerate()
                {
                    let locked = select.lock.is_some()
                        && select
                            .lock_tables
                            .iter()
                            .any(|&(source, _, _)| source == at);
                    let mode = if locked {
                        TableLockMode::RowShare
                    } else {
                        TableLockMode::AccessShare
                    };
                    take(table, mode);
                }
                self.subquery_table_locks(&select.correlated, out);
            }
            Plan::Insert(insert) => take(&insert.table, TableLockMode::RowExclusive),
            Plan::Update(update) => {
                take(&update.table, TableLockMode::RowExclusive);
                for join in &update.joins {
                    take(&join.table, TableLockMode::AccessShare);
                }
                self.subquery_table_locks(&update.correlated, out);
            }
            Plan::Delete(delete) => {
                take(&delete.table, TableLockMode::RowExclusive);
                for join in &delete.joins {
                    take(&join.table, TableLockMode::AccessShare);
                }
                self.subquery_table_locks(&delete.correlated, out);
            }
            Plan::WithSubqueries(subqueries, inner) => {
                if let Plan::Insert(InsertPlan { table, .. })
                | Plan::Update(UpdatePlan { table, .. })
                | Plan::Delete(DeletePlan { table, .. }) = inner.as_ref()
                {
                    take(table, TableLockMode::RowExclusive);
                }
                self.subquery_table_locks(subqueries, out);
                self.plan_table_locks(inner, out);
            }
            Plan::Recursive(recursive) => {
                self.plan_table_locks(&Plan::Select(recursive.step.clone()), out)
            }
            Plan::DropTable(names, _) | Plan::Truncate(names, _) => {
                for name in names {
                    take(name, TableLockMode::AccessExclusive);
                }
            }
            Plan::CreateIndex(index) => take(&index.table, TableLockMode::Share),
            Plan::DropIndex(names, _) => {
                for name in names {
                    if let Some(Relation::Index { table, .. }) = self.relation(name) {
                        take(&table, TableLockMode::AccessExclusive);
                    }
                }
            }
            _ => {}
        }
    }

    fn subquery_table_locks(
        &self,
        subqueries: &[Subquery],
        out: &mut Vec<(Arc<str>, TableLockMode)>,
    ) {
        for subquery in subqueries {
            self.plan_table_locks(&subquery.plan, out);
        }
    }

    /// `LOCK TABLE`: only in a transaction block (25P01); each table in turn, the first that
    /// has to wait making the statement wait (with `NOWAIT`, 55P03 instead). `Err(Ok(_))` is
    /// a wait.
    fn lock_tables(
        &mut self,
        session: SessionId,
        tables: &[Arc<str>],
        mode: TableLockMode,
        nowait: bool,
    ) -> Result<(), Result<TableWait, PgError>> {
        if self.status(session) == Some(TxStatus::Idle) {
            return Err(Err(PgError::error(
                "25P01",
                "LOCK TABLE can only be used in transaction blocks",
            )));
        }
        let requests: Vec<(Arc<str>, TableLockMode)> =
            tables.iter().map(|table| (table.clone(), mode)).collect();
        match self.take_table_locks(session, &requests) {
            Ok(()) => Ok(()),
            Err(wait) if nowait => Err(Err(table_lock::not_obtained(&wait.table))),
            Err(wait) => Err(Ok(wait)),
        }
    }

    /// [`Postgres::wait_for`] a table lock: `session` queues for it first (so a deadlock's
    /// DETAIL names what it waits for).
    fn wait_for_table(&mut self, session: SessionId, wait: TableWait) -> Executed {
        self.queue_for_table(session, wait.table, wait.mode);
        self.wait_for(session, wait.holder)
    }

    /// The session whose open block holds, by DDL, a relation that DDL `plan` of `session`
    /// names (or would create): `session` waits for it (`ddl.rs`). PostgreSQL waits so for a
    /// relation the other block changed, and to create one under a name it created; DDL
    /// naming a relation the other block created answers there at once that it does not
    /// exist, and waits here.
    fn ddl_conflict(&self, session: SessionId, plan: &Plan) -> Option<SessionId> {
        let index_table = |name: &String| match self.relation(name) {
            Some(Relation::Index { table, .. }) => table.to_string(),
            _ => name.clone(),
        };
        let names: Vec<String> = match plan {
            Plan::CreateTable(def, _) => vec![def.name.clone()],
            Plan::DropTable(names, _) | Plan::Truncate(names, _) => names.clone(),
            Plan::CreateSequence(sequence, _) => vec![sequence.name.clone()],
            Plan::DropSequence(names, ..) => names.clone(),
            Plan::CreateIndex(index) => std::iter::once(index.table.clone())
                .chain(index.name.clone())
                .collect(),
            Plan::DropIndex(names, _) => names.iter().map(index_table).collect(),
            _ => return None,
        };
        names
            .iter()
            .find_map(|name| self.ddl_hold(session, name))
            .map(|hold| hold.holder)
    }

    /// What the relation `name` is, if there is one: relations share one namespace (tables,
    /// sequences, and indexes, a primary key's among them).
    fn relation(&self, name: &str) -> Option<Relation> {
        relation_in(&self.tables, &self.sequences, name)
    }

    /// `CREATE INDEX`: the table and its columns looked up, the name checked or chosen, the
    /// index added to the table's definition. Like any DDL here it is not undone by a
    /// rollback. It waits, as PostgreSQL's `SHARE` lock on the table does, while another
    /// transaction has written a row of the table.
    fn create_index(
        &mut self,
        session: SessionId,
        plan: CreateIndexPlan,
    ) -> Result<Outcome, PgError> {
        if plan.concurrently && self.status(session) == Some(TxStatus::InBlock) {
            return Err(PgError::error(
                "25001",
                "CREATE INDEX CONCURRENTLY cannot run inside a transaction block",
            ));
        }
        let not_supported = |what: &str| {
            Err(PgError::error(
                "42809",
                format!("cannot create index on relation \"{}\"", plan.table),
            )
            .with_detail(format!("This operation is not supported for {what}.")))
        };
        match self.relation(&plan.table) {
            Some(Relation::Table) => {}
            Some(Relation::Sequence) => return not_supported("sequences"),
            Some(Relation::Index { .. }) => {
                return Err(PgError::error(
                    "42809",
                    format!("\"{}\" is an index", plan.table),
                ))
            }
            None => return Err(missing_relation(&plan.table)),
        }
        let table = &self.tables[plan.table.as_str()];
        if let Some(holder) = table.rows.values().find_map(|row| {
            row.lock
                .as_ref()
                .filter(|lock| lock.holder != session && lock.uncommitted.is_some())
                .map(|lock| lock.holder)
        }) {
            return Ok(Outcome::Wait(holder, None));
        }
        let def = &table.def;
        let mut columns = Vec::with_capacity(plan.columns.len());
        for name in &plan.columns {
            let Some(column) = def.column(name) else {
                return Err(PgError::error(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{name}\" does not exist"),
                ));
            };
            columns.push(column);
        }
        let name = match plan.name {
            Some(name) if self.relation(&name).is_some() => {
                let message = format!("relation \"{name}\" already exists");
                if plan.if_not_exists {
                    return Ok(Outcome::Notice(
                        tag_only("CREATE INDEX"),
                        PgError {
                            severity: "NOTICE",
                            ..PgError::error(
                                sqlstate::DUPLICATE_TABLE,
                                format!("{message}, skipping"),
                            )
                        },
                    ));
                }
                return Err(PgError::error(sqlstate::DUPLICATE_TABLE, message));
            }
            Some(name) => name,
            None => {
                let names: Vec<&str> = columns
                    .iter()
                    .map(|&c| def.columns[c].name.as_str())
                    .collect();
                index::choose_name(&def.name, &names, "idx", |name| {
                    self.relation(name).is_some()
                })
            }
        };
        if plan.unique {
            let rows: Vec<&[Value]> = table
                .rows
                .values()
                .filter_map(|row| row.visible_tuple(session).map(Vec::as_slice))
                .collect();
            let made = IndexDef {
                predicate: plan.predicate.clone(),
                nulls_not_distinct: plan.nulls_not_distinct,
                ..IndexDef::on(name.clone(), columns.clone(), true, false)
            };
            if let Some(error) = index::duplicated(def, &made, &rows)? {
                return Err(error);
            }
        }
        self.remember_definition(session, &plan.table);
        let table = self
            .tables_mut()
            .get_mut(plan.table.as_str())
            .expect("the table was found above");
        Arc::make_mut(&mut table.def).indexes.push(IndexDef {
            predicate: plan.predicate,
            nulls_not_distinct: plan.nulls_not_distinct,
            ..IndexDef::on(name, columns, plan.unique, false)
        });
        Ok(Outcome::Done(tag_only("CREATE INDEX")))
    }

    /// `DROP INDEX [IF EXISTS] names`: each must be an index made by `CREATE INDEX` (a primary
    /// key's belongs to its constraint, 2BP01).
    fn drop_indexes(
        &mut self,
        session: SessionId,
        names: Vec<String>,
        if_exists: bool,
    ) -> Result<Outcome, PgError> {
        let mut notice = None;
        let mut dropped = Vec::new();
        for name in &names {
            match self.relation(name) {
                Some(Relation::Table) => {
                    return Err(wrong_object_type(
                        name,
                        "index",
                        "DROP TABLE to remove a table",
                    ))
                }
                Some(Relation::Sequence) => {
                    return Err(wrong_object_type(
                        name,
                        "index",
                        "DROP SEQUENCE to remove a sequence",
                    ))
                }
                Some(Relation::Index {
                    table,
                    constraint: true,
                }) => {
                    return Err(PgError::error(
                        "2BP01",
                        format!(
                            "cannot drop index {name} because constraint {name} on table {table} \
                             requires it"
                        ),
                    )
                    .with_hint(format!(
                        "You can drop constraint {name} on table {table} instead."
                    )))
                }
                Some(Relation::Index {
                    table,
                    constraint: false,
                }) => {
                    let rows = &self.tables[&table].rows;
                    if let Some(holder) = rows.values().find_map(|r| r.locked_by_other(session)) {
                        return Ok(Outcome::Wait(holder, None));
                    }
                    dropped.push((table, name));
                }
                None if if_exists => {
                    notice = Some(skipped("index", name));
                }
                None => {
                    return Err(PgError::error(
                        "42704",
                        format!("index \"{name}\" does not exist"),
                    ))
                }
            }
        }
        for (table, name) in dropped {
            self.remember_definition(session, &table);
            if let Some(table) = self.tables_mut().get_mut(&table) {
                Arc::make_mut(&mut table.def)
                    .indexes
                    .retain(|index| index.name != *name);
            }
        }
        let result = tag_only("DROP INDEX");
        Ok(with_notice(result, notice))
    }

    fn truncate(
        &mut self,
        session: SessionId,
        names: Vec<String>,
        restart_sequences: bool,
    ) -> Result<Outcome, PgError> {
        for name in &names {
            let Some(table) = self.tables.get(name.as_str()) else {
                return Err(missing_relation(name));
            };
            if let Some(holder) = table.rows.values().find_map(|r| r.locked_by_other(session)) {
                return Ok(Outcome::Wait(holder, None));
            }
        }
        for name in &names {
            let change = TableChange::Truncated {
                restart: restart_sequences,
            };
            self.remember_table(session, name, change);
            if let Some(table) = self.tables_mut().get_mut(name.as_str()) {
                table.rows.clear();
                if restart_sequences {
                    table.sequences.clear();
                }
            }
        }
        self.forget_waits_on_released(session);
        Ok(Outcome::Done(tag_only("TRUNCATE TABLE")))
    }

    fn savepoint(&mut self, session: SessionId, name: String) -> Result<Outcome, PgError> {
        if self.status(session) != Some(TxStatus::InBlock) {
            return Err(PgError::error(
                "25P01",
                "SAVEPOINT can only be used in transaction blocks",
            ));
        }
        let mut locks = BTreeMap::new();
        let mut shared = Vec::new();
        for (table_name, table) in self.tables.iter() {
            for (key, row) in &table.rows {
                if let Some(lock) = row.lock.as_ref().filter(|l| l.holder == session) {
                    locks.insert(
                        (table_name.to_string(), key.clone()),
                        lock.uncommitted.clone(),
                    );
                }
                if row.shared.contains(&session) {
                    shared.push((table_name.to_string(), key.clone()));
                }
            }
        }
        let state = self.session_mut(session);
        let catalog_undo_len = state.catalog_undo.len();
        let settings = Box::new(state.settings.clone());
        state.savepoints.push(Savepoint {
            name,
            locks,
            shared,
            catalog_undo_len,
            settings,
        });
        Ok(Outcome::Done(tag_only("SAVEPOINT")))
    }

    fn find_savepoint(
        &self,
        session: SessionId,
        name: &str,
        command: &str,
    ) -> Result<usize, PgError> {
        if self.status(session) == Some(TxStatus::Idle) {
            return Err(PgError::error(
                "25P01",
                format!("{command} can only be used in transaction blocks"),
            ));
        }
        let state = self.sessions.get(&session).expect("connected");
        state
            .savepoints
            .iter()
            .rposition(|s| s.name == name)
            .ok_or_else(|| {
                PgError::error(
                    sqlstate::INVALID_SAVEPOINT_SPECIFICATION,
                    format!("savepoint \"{name}\" does not exist"),
                )
            })
    }

    fn release(&mut self, session: SessionId, name: &str) -> Result<Outcome, PgError> {
        let depth = self.find_savepoint(session, name, "RELEASE SAVEPOINT")?;
        self.session_mut(session).savepoints.truncate(depth);
        self.keep_table_locks_at(session, depth);
        Ok(Outcome::Done(tag_only("RELEASE")))
    }

    fn rollback_to(&mut self, session: SessionId, name: &str) -> Result<Outcome, PgError> {
        let depth = self.find_savepoint(session, name, "ROLLBACK TO SAVEPOINT")?;
        self.restore_savepoint(session, depth);
        self.session_mut(session).status = TxStatus::InBlock;
        self.forget_waits_on_released(session);
        Ok(Outcome::Done(tag_only("ROLLBACK")))
    }
}

/// The first joined row of each target row (the first table's), keyed by its key.
fn first_per_target(rows: Vec<JoinedRow>) -> Vec<(Value, Vec<Value>)> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (keys, row) in rows {
        let key = keys
            .into_iter()
            .next()
            .flatten()
            .expect("the target is the first table and never NULL-padded");
        if seen.insert(key.clone()) {
            out.push((key, row));
        }
    }
    out
}

/// 54000 when a join would consider more than [`JOIN_PAIR_LIMIT`] pairs of rows, before it
/// pairs any.
fn check_pairs(left: usize, right: usize) -> Result<(), PgError> {
    if left.saturating_mul(right) > JOIN_PAIR_LIMIT {
        return Err(PgError::error(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "a join of {left} rows with {right} rows is more than this stand-in pairs (at most {JOIN_PAIR_LIMIT} pairs per join)"
            ),
        ));
    }
    Ok(())
}

enum Outcome {
    Done(SqlResult),
    Notice(SqlResult, PgNotice),
    Wait(SessionId, Option<(String, Value)>),
    /// Waiting for an advisory lock held by the session.
    WaitAdvisory(SessionId, AdvisoryKey, AdvisoryMode),
}

fn done(result: Result<SqlResult, PgError>) -> SqlExecuted {
    SqlExecuted {
        exec: SqlExec::Done(result),
        notice: None,
    }
}

fn tag_only(tag: &str) -> SqlResult {
    SqlResult {
        columns: Vec::new(),
        rows: Vec::new(),
        tag: tag.to_string(),
        rows_affected: 0,
    }
}

fn from_typed(executed: Executed) -> SqlExecuted {
    SqlExecuted {
        exec: match executed.exec {
            Exec::Blocked { by } => SqlExec::Blocked { by },
            Exec::Done(result) => SqlExec::Done(result.map(|r| SqlResult {
                columns: Vec::new(),
                rows: Vec::new(),
                tag: r.tag,
                rows_affected: r.rows_affected,
            })),
        },
        notice: executed.notice,
    }
}

/// The primary-key value a WHERE clause pins with a top-level `pk = constant` conjunct.
fn pinned_key(filter: Option<&Expr>, pk: usize, params: &[Value]) -> Option<Value> {
    match filter? {
        Expr::Binary(BinOp::And, left, right, _) => {
            pinned_key(Some(left), pk, params).or_else(|| pinned_key(Some(right), pk, params))
        }
        Expr::Binary(BinOp::Eq, left, right, _) => {
            let constant = |e: &Expr| -> Option<Value> {
                match e {
                    Expr::Const(..) | Expr::Param(..) | Expr::Cast(..) => e
                        .eval(&EvalContext {
                            row: &[],
                            excluded: None,
                            params,
                        })
                        .ok(),
                    _ => None,
                }
            };
            match (left.as_ref(), right.as_ref()) {
                (Expr::Column(c, _), other) | (other, Expr::Column(c, _)) if *c == pk => {
                    constant(other).filter(|v| !v.is_null())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The result of an INSERT, UPDATE or DELETE: its tag (`INSERT 0 n`, `UPDATE n`, `DELETE n`)
/// and, with RETURNING, the rows it returned.
fn written(
    returning: &[(String, Expr)],
    returned: Vec<Vec<Value>>,
    verb: &str,
    count: u64,
) -> SqlResult {
    SqlResult {
        columns: columns_of(returning),
        rows: if returning.is_empty() {
            Vec::new()
        } else {
            returned
        },
        tag: format!("{verb} {count}"),
        rows_affected: count,
    }
}

fn columns_of(items: &[(String, Expr)]) -> Vec<(String, SqlType)> {
    items
        .iter()
        .map(|(name, expr)| (name.clone(), expr.ty()))
        .collect()
}

fn passes(
    filter: Option<&Expr>,
    row: &[Value],
    excluded: Option<&[Value]>,
    params: &[Value],
) -> Result<bool, PgError> {
    match filter {
        None => Ok(true),
        Some(expr) => Ok(expr.eval(&EvalContext {
            row,
            excluded,
            params,
        })? == Value::Bool(true)),
    }
}

fn project(
    items: &[(String, Expr)],
    row: &[Value],
    excluded: Option<&[Value]>,
    params: &[Value],
) -> Result<Vec<Value>, PgError> {
    items
        .iter()
        .map(|(_, expr)| {
            expr.eval(&EvalContext {
                row,
                excluded,
                params,
            })
        })
        .collect()
}

/// A `SELECT`'s `LIMIT` (none: all) and `OFFSET` (0 when absent or NULL), or 2201W/2201X.
fn limit_and_offset(
    plan: &SelectPlan,
    params: &[Value],
) -> Result<(Option<usize>, usize), PgError> {
    let constant = |expr: &Expr| {
        expr.eval(&EvalContext {
            row: &[],
            excluded: None,
            params,
        })
    };
    let limit = match &plan.limit {
        Some(expr) => match constant(expr)? {
            Value::Int(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Value::Null => None,
            _ => return Err(PgError::error("2201W", "LIMIT must not be negative")),
        },
        None => None,
    };
    let offset = match &plan.offset {
        Some(expr) => match constant(expr)? {
            Value::Int(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
            Value::Null => 0,
            _ => return Err(PgError::error("2201X", "OFFSET must not be negative")),
        },
        None => 0,
    };
    Ok((limit, offset))
}

/// The indexes of `keys` in `ORDER BY` order (stable: ties keep their order).
fn sorted_order(keys: &[Vec<Value>], order: &[(Expr, bool, bool)]) -> Vec<usize> {
    let mut indexes: Vec<usize> = (0..keys.len()).collect();
    indexes.sort_by(|&i, &j| compare_keys(&keys[i], &keys[j], order).then(i.cmp(&j)));
    indexes
}

/// Two rows' `ORDER BY` keys compared: each key ascending or descending, NULLs first or last.
fn compare_keys(a: &[Value], b: &[Value], order: &[(Expr, bool, bool)]) -> std::cmp::Ordering {
    for ((x, y), (_, desc, nulls_first)) in a.iter().zip(b).zip(order) {
        let ordering = match (x.is_null(), y.is_null()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) if *nulls_first => std::cmp::Ordering::Less,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) if *nulls_first => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ if *desc => y.cmp(x),
            _ => x.cmp(y),
        };
        if ordering != std::cmp::Ordering::Equal {
            return ordering;
        }
    }
    std::cmp::Ordering::Equal
}

fn sort_rows(
    rows: &mut [(Value, Vec<Value>)],
    order: &[(Expr, bool, bool)],
    params: &[Value],
) -> Result<(), PgError> {
    if order.is_empty() {
        return Ok(());
    }
    let mut keys: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    for (_, tuple) in rows.iter() {
        keys.push(
            order
                .iter()
                .map(|(expr, _, _)| {
                    expr.eval(&EvalContext {
                        row: tuple,
                        excluded: None,
                        params,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    let sorted: Vec<(Value, Vec<Value>)> = sorted_order(&keys, order)
        .into_iter()
        .map(|i| rows[i].clone())
        .collect();
    for (slot, row) in rows.iter_mut().zip(sorted) {
        *slot = row;
    }
    Ok(())
}

impl Analyzer<'_> {
    fn statement(&mut self) -> Result<Plan, PgError> {
        use ast::Statement as S;
        let statement = self.statement;
        Ok(match &statement.ast {
            S::StartTransaction { modes, begin, .. } => {
                let mut isolation = None;
                let mut read_only = None;
                for mode in modes {
                    match mode {
                        TransactionMode::IsolationLevel(level) => {
                            isolation = Some(settings::isolation_of(level)?);
                        }
                        TransactionMode::AccessMode(access) => {
                            read_only = Some(*access == ast::TransactionAccessMode::ReadOnly);
                        }
                    }
                }
                Plan::Begin(
                    isolation,
                    read_only,
                    if *begin { "BEGIN" } else { "START TRANSACTION" },
                )
            }
            S::Commit { chain: false, .. } => Plan::Commit,
            S::Rollback {
                chain: false,
                savepoint: None,
            } => Plan::Rollback,
            S::Rollback {
                chain: false,
                savepoint: Some(name),
            } => Plan::RollbackTo(ident_name(name)),
            S::Savepoint { name } => Plan::Savepoint(ident_name(name)),
            S::ReleaseSavepoint { name } => Plan::Release(ident_name(name)),
            S::CreateTable(create) => self.create_table(create)?,
            S::Drop {
                object_type: ObjectType::Table,
                if_exists,
                names,
                ..
            } => Plan::DropTable(
                names.iter().map(object_name).collect::<Result<_, _>>()?,
                *if_exists,
            ),
            S::Drop {
                object_type: ObjectType::Index,
                if_exists,
                names,
                purge: false,
                temporary: false,
                table: None,
                ..
            } => Plan::DropIndex(
                names.iter().map(object_name).collect::<Result<_, _>>()?,
                *if_exists,
            ),
            S::CreateIndex(create) => {
                let mut plan = create_index_plan(create)?;
                if let Some(node) = &create.predicate {
                    plan.predicate = self.index_predicate(&plan.table, node)?;
                }
                Plan::CreateIndex(plan)
            }
            S::Drop {
                object_type: ObjectType::Sequence,
                if_exists,
                names,
                cascade,
                ..
            } => Plan::DropSequence(
                names.iter().map(object_name).collect::<Result<_, _>>()?,
                *if_exists,
                *cascade,
            ),
            S::CreateSequence {
                temporary: false,
                if_not_exists,
                name,
                sequence_options,
            } => {
                let name = object_name(name)?;
                let sequence = Sequence::define(&name, sequence_options)?;
                Plan::CreateSequence(sequence, *if_not_exists)
            }
            S::Truncate(truncate) => Plan::Truncate(
                truncate
                    .table_names
                    .iter()
                    .map(|t| object_name(&t.name))
                    .collect::<Result<_, _>>()?,
                matches!(
                    truncate.identity,
                    Some(ast::TruncateIdentityOption::Restart)
                ),
            ),
            S::ShowVariable { variable } => {
                let name = variable
                    .iter()
                    .map(ident_name)
                    .collect::<Vec<_>>()
                    .join(" ");
                // Two words only in `SHOW TRANSACTION ISOLATION LEVEL`; else a dotted name.
                let name = match name.as_str() {
                    "transaction isolation level" => "transaction_isolation".to_string(),
                    _ => name.replace(' ', "."),
                };
                if !settings::is_parameter(&name) {
                    return Err(settings::unrecognized(&name));
                }
                if !settings::showable(&name) {
                    return Err(unsupported(&statement.text));
                }
                Plan::Show(name)
            }
            S::Lock(lock) => {
                // `ONLY name *` reads as a syntax error in PostgreSQL's grammar.
                if let Some(target) = lock.tables.iter().find(|t| t.only && t.has_asterisk) {
                    let after_name = statement.position(ast::Spanned::span(&target.name).end);
                    let star = after_name.and_then(|position| {
                        let skipped = statement
                            .text
                            .chars()
                            .skip(
                                usize::try_from(position.checked_sub(1 + statement.offset)?)
                                    .ok()?,
                            )
                            .take_while(|c| c.is_whitespace())
                            .count();
                        Some(position + u32::try_from(skipped).ok()?)
                    });
                    return Err(PgError::error(
                        sqlstate::SYNTAX_ERROR,
                        "syntax error at or near \"*\"",
                    )
                    .at(star));
                }
                let tables = lock
                    .tables
                    .iter()
                    .map(|target| self.lockable_table(&target.name))
                    .collect::<Result<_, _>>()?;
                Plan::LockTables(
                    tables,
                    TableLockMode::of_statement(lock.lock_mode.as_ref()),
                    lock.nowait,
                )
            }
            S::Set(set) => Plan::Set(settings::plan_set(set, &statement.text)?, "SET"),
            S::Reset(reset) => Plan::Set(settings::plan_reset(reset, &statement.text)?, "RESET"),
            S::Query(query) => match query.body.as_ref() {
                SetExpr::Insert(change) | SetExpr::Update(change) | SetExpr::Delete(change) => {
                    // `WITH ... INSERT/UPDATE/DELETE`.
                    let Some(with) = query.with.as_ref().filter(|_| {
                        query.order_by.is_none()
                            && query.limit_clause.is_none()
                            && query.fetch.is_none()
                            && query.locks.is_empty()
                    }) else {
                        return Err(unsupported(&statement.text));
                    };
                    let before = self.enter_with(with, None)?;
                    let plan = self.change(change);
                    self.ctes.truncate(before);
                    plan?
                }
                _ => Plan::Select(Box::new(self.query(query)?)),
            },
            S::Insert(_) | S::Update(_) | S::Delete(_) => self.change(&statement.ast)?,
            _ => {
                return Err(unsupported(
                    &statement
                        .text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                ))
            }
        })
    }

    /// An `INSERT`, `UPDATE` or `DELETE` (with the `WITH` queries in reach, if any).
    fn change(&mut self, node: &ast::Statement) -> Result<Plan, PgError> {
        use ast::Statement as S;
        let statement = self.statement;
        Ok(match node {
            S::Insert(insert) => {
                let plan = self.insert(insert)?;
                if !self.correlated.is_empty() {
                    return Err(unsupported(
                        "a correlated subquery in INSERT (its VALUES or ON CONFLICT)",
                    ));
                }
                Plan::Insert(plan)
            }
            S::Update(update) => {
                if update.or.is_some() || update.output.is_some() || update.settings.is_some() {
                    return Err(unsupported(&statement.text));
                }
                self.refuse_order_and_limit(&update.order_by, update.limit.as_ref())?;
                if !update.table.joins.is_empty() {
                    return Err(unsupported(&statement.text));
                }
                let from = match &update.from {
                    None => &[][..],
                    Some(ast::UpdateTableFromKind::AfterSet(from)) => from.as_slice(),
                    Some(ast::UpdateTableFromKind::BeforeSet(_)) => {
                        return Err(unsupported(&statement.text))
                    }
                };
                let (def, alias) = self.table_of_from(&update.table.relation)?;
                let entries = self.entries_of_from(from, None)?;
                unique_names(
                    std::iter::once((&*def, alias.as_deref()))
                        .chain(entries.iter().map(|e| (&*e.def, e.alias.as_deref()))),
                )?;
                let mut scope = Scope {
                    table: Some(&def),
                    alias,
                    joined: Vec::new(),
                    hidden: 0,
                    outer: None,
                    excluded: false,
                    insert_returning: false,
                    excluded_out_of_reach: false,
                    statement,
                };
                let joins = self.join_entries(&mut scope, &entries, def.columns.len())?;
                let assignments = self.assignments(&scope, &def, &update.assignments)?;
                let filter = self.filter(&scope, update.selection.as_ref())?;
                let returning = match &update.returning {
                    Some(items) => self.select_items(&scope, items)?,
                    None => Vec::new(),
                };
                let correlated = std::mem::take(&mut self.correlated);
                if correlated_in(&joins, width_of(&def, &joins), &correlated) {
                    return Err(unsupported("a correlated subquery in a join condition"));
                }
                Plan::Update(UpdatePlan {
                    table: def.name.clone(),
                    joins,
                    assignments,
                    filter,
                    returning,
                    correlated,
                })
            }
            S::Delete(delete) => {
                if !delete.tables.is_empty()
                    || delete.on_cluster.is_some()
                    || delete.output.is_some()
                    || delete.settings.is_some()
                {
                    return Err(unsupported(&statement.text));
                }
                self.refuse_order_and_limit(&delete.order_by, delete.limit.as_ref())?;
                let from = match &delete.from {
                    FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from) => from,
                };
                let [only] = from.as_slice() else {
                    return Err(unsupported(&statement.text));
                };
                if !only.joins.is_empty() {
                    return Err(unsupported(&statement.text));
                }
                let (def, alias) = self.table_of_from(&only.relation)?;
                let entries =
                    self.entries_of_from(delete.using.as_deref().unwrap_or_default(), None)?;
                unique_names(
                    std::iter::once((&*def, alias.as_deref()))
                        .chain(entries.iter().map(|e| (&*e.def, e.alias.as_deref()))),
                )?;
                let mut scope = Scope {
                    table: Some(&def),
                    alias,
                    joined: Vec::new(),
                    hidden: 0,
                    outer: None,
                    excluded: false,
                    insert_returning: false,
                    excluded_out_of_reach: false,
                    statement,
                };
                let joins = self.join_entries(&mut scope, &entries, def.columns.len())?;
                let filter = self.filter(&scope, delete.selection.as_ref())?;
                let returning = match &delete.returning {
                    Some(items) => self.select_items(&scope, items)?,
                    None => Vec::new(),
                };
                let correlated = std::mem::take(&mut self.correlated);
                if correlated_in(&joins, width_of(&def, &joins), &correlated) {
                    return Err(unsupported("a correlated subquery in a join condition"));
                }
                Plan::Delete(DeletePlan {
                    table: def.name.clone(),
                    joins,
                    filter,
                    returning,
                    correlated,
                })
            }
            _ => return Err(unsupported(&statement.text)),
        })
    }

    /// `ORDER BY` or `LIMIT` on an `UPDATE` or `DELETE` (MySQL's, which the parser reads):
    /// PostgreSQL's syntax error at the keyword, rather than a change of every matching row.
    fn refuse_order_and_limit(
        &self,
        order_by: &[ast::OrderByExpr],
        limit: Option<&ast::Expr>,
    ) -> Result<(), PgError> {
        let statement = self.statement;
        let (word, position) = match (order_by.first(), limit) {
            (Some(first), _) => {
                let by = statement
                    .position_of(&first.expr)
                    .and_then(|at| statement.keyword_before(at, "by"));
                (
                    "ORDER",
                    by.and_then(|at| statement.keyword_before(at, "order")),
                )
            }
            (None, Some(limit)) => (
                "LIMIT",
                statement
                    .position_of(limit)
                    .and_then(|at| statement.keyword_before(at, "limit")),
            ),
            (None, None) => return Ok(()),
        };
        // The keyword as written.
        let written: Option<String> = position.map(|at| {
            let skip = (at - statement.offset - 1) as usize;
            statement.text.chars().skip(skip).take(word.len()).collect()
        });
        Err(PgError::syntax_error_near(written.as_deref().unwrap_or(word)).at(position))
    }

    /// `GROUP BY` expressions (a number names a select-list item); no aggregates inside.
    fn group_by(
        &mut self,
        scope: &Scope<'_>,
        group_by: &ast::GroupByExpr,
        items: &[(String, Expr)],
    ) -> Result<Vec<Expr>, PgError> {
        let ast::GroupByExpr::Expressions(nodes, modifiers) = group_by else {
            return Err(unsupported(&self.statement.text));
        };
        if !modifiers.is_empty() {
            return Err(unsupported(&self.statement.text));
        }
        let mut keys = Vec::with_capacity(nodes.len());
        for node in nodes {
            if let ast::Expr::Value(v) = node {
                if let ast::Value::Number(n, _) = &v.value {
                    let index: usize = n.parse().unwrap_or(0);
                    match items.get(index.wrapping_sub(1)) {
                        Some((_, e)) if !e.is_aggregate() => keys.push(e.clone()),
                        Some(_) => {
                            return Err(PgError::error(
                                "42803",
                                "aggregate functions are not allowed in GROUP BY",
                            )
                            .at(self.statement.position_of(node)))
                        }
                        None => {
                            return Err(PgError::error(
                                "42P10",
                                format!("GROUP BY position {n} is not in select list"),
                            )
                            .at(self.statement.position_of(node)))
                        }
                    }
                    continue;
                }
            }
            let before = self.aggregate_at.take();
            let key = match self.expr(scope, node, SqlType::Unknown) {
                // A bare name no table of `FROM` has may name a select-list item (by its
                // alias or derived name), as PostgreSQL's `findTargetlistEntrySQL92` allows.
                Err(error) if error.code == sqlstate::UNDEFINED_COLUMN => {
                    let ast::Expr::Identifier(ident) = node else {
                        return Err(error);
                    };
                    let name = ident_name(ident);
                    let position = self.statement.position_of(node);
                    let first = match select_list_item(items, &name) {
                        Ok(Some(first)) => first,
                        Ok(None) => return Err(error),
                        Err(()) => return Err(ambiguous("GROUP BY", &name, position)),
                    };
                    if first.is_aggregate() {
                        return Err(PgError::error(
                            "42803",
                            "aggregate functions are not allowed in GROUP BY",
                        )
                        .at(position));
                    }
                    first.clone()
                }
                other => other?,
            };
            if let Some(at) = self.aggregate_at {
                return Err(PgError::error(
                    "42803",
                    "aggregate functions are not allowed in GROUP BY",
                )
                .at(at));
            }
            self.aggregate_at = before;
            keys.push(key);
        }
        Ok(keys)
    }

    /// An aggregate's argument under its `FILTER (WHERE w)`: `CASE WHEN w THEN argument END`,
    /// which every aggregate here skips where it is NULL, as it skips the rows `w` leaves out.
    fn filtered(
        &mut self,
        scope: &Scope<'_>,
        function: &ast::Function,
        argument: Expr,
    ) -> Result<Expr, PgError> {
        let Some(node) = function.filter.as_deref() else {
            return Ok(argument);
        };
        let condition = self.condition(scope, node, "FILTER")?;
        let ty = argument.ty();
        Ok(Expr::Case {
            whens: vec![(condition, argument)],
            otherwise: Box::new(Expr::Const(Value::Null, ty)),
            ty,
        })
    }

    fn filter(
        &mut self,
        scope: &Scope<'_>,
        selection: Option<&ast::Expr>,
    ) -> Result<Option<Expr>, PgError> {
        let Some(node) = selection else {
            return Ok(None);
        };
        Ok(Some(self.condition(scope, node, "WHERE")?))
    }

    /// A `WHERE` or `FILTER` condition: boolean (42804 naming `clause` otherwise), without
    /// aggregates (42803).
    fn condition(
        &mut self,
        scope: &Scope<'_>,
        node: &ast::Expr,
        clause: &str,
    ) -> Result<Expr, PgError> {
        let before = self.aggregate_at.take();
        let expr = self.expr(scope, node, SqlType::Bool)?;
        if let Some(at) = self.aggregate_at {
            return Err(PgError::error(
                "42803",
                format!("aggregate functions are not allowed in {clause}"),
            )
            .at(at));
        }
        self.aggregate_at = before;
        self.boolean(expr, clause, self.statement.position_of(node))
    }

    fn assignments(
        &mut self,
        scope: &Scope<'_>,
        def: &TableDef,
        assignments: &[ast::Assignment],
    ) -> Result<Vec<(usize, Expr)>, PgError> {
        let mut out = Vec::new();
        for assignment in assignments {
            let AssignmentTarget::ColumnName(target) = &assignment.target else {
                return Err(unsupported(&assignment.to_string()));
            };
            // PostgreSQL reads `a.b` as field `b` of column `a` (never a table qualifier).
            let part = |p: &ast::ObjectNamePart| match p {
                ast::ObjectNamePart::Identifier(i) => ident_name(i),
                other => other.to_string(),
            };
            let name = target.0.first().map(part).unwrap_or_default();
            let field = target.0.get(1).map(part);
            let Some(index) = def.column(&name) else {
                return Err(PgError::error(
                    sqlstate::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" of relation \"{}\" does not exist",
                        def.name
                    ),
                )
                .at(self.statement.position_of(target)));
            };
            if let Some(field) = field {
                return Err(PgError::error(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "cannot assign to field \"{field}\" of column \"{name}\" because its type {} is not a composite type",
                        def.columns[index].ty.name()
                    ),
                )
                .at(self.statement.position_of(target)));
            }
            if out.iter().any(|(assigned, _)| *assigned == index) {
                return Err(PgError::error(
                    sqlstate::SYNTAX_ERROR,
                    format!("multiple assignments to same column \"{name}\""),
                ));
            }
            let column = &def.columns[index];
            let expr = if is_default_keyword(&assignment.value) {
                match &column.default {
                    Some(Expr::Sequence { .. }) => {
                        return Err(unsupported(&format!(
                            "{name} = DEFAULT on a serial or identity column"
                        )))
                    }
                    Some(default) => default.clone(),
                    None => Expr::Const(Value::Null, column.ty),
                }
            } else {
                if matches!(
                    column.default,
                    Some(Expr::Sequence {
                        kind: SequenceKind::Always,
                        ..
                    })
                ) {
                    return Err(generated_always(
                        &column.name,
                        format!("column \"{}\" can only be updated to DEFAULT", column.name),
                    ));
                }
                self.assigned(scope, &assignment.value, column)?
            };
            out.push((index, expr));
        }
        Ok(out)
    }

    /// A table of a `FROM` list and its alias (a subquery, a function or a nested join
    /// there is 0A000).
    fn table_of_from(
        &self,
        factor: &TableFactor,
    ) -> Result<(Arc<TableDef>, Option<String>), PgError> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version: None,
                partitions,
                ..
            } if with_hints.is_empty()
                && partitions.is_empty()
                && alias.as_ref().is_none_or(|a| a.columns.is_empty()) =>
            {
                Ok((
                    self.table(name)?,
                    alias.as_ref().map(|a| ident_name(&a.name)),
                ))
            }
            other => Err(unsupported(&other.to_string())),
        }
    }

    /// A table of a `FROM` list: a `WITH` query in reach (named alone), a table of the
    /// catalogue, a subquery with its alias, or `generate_series(...)`. `outer`: the
    /// statement the query of this `FROM` is a subquery of.
    fn item_of_from(
        &mut self,
        factor: &TableFactor,
        outer: Option<&Rc<OuterScope>>,
    ) -> Result<(Arc<TableDef>, Option<String>), PgError> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_hints,
                version: None,
                partitions,
                with_ordinality: false,
                ..
            } if with_hints.is_empty()
                && partitions.is_empty()
                && matches!(name.0.as_slice(), [ast::ObjectNamePart::Identifier(ident)]
                    if ident_name(ident) == "generate_series") =>
            {
                self.series(factor, &args.args, alias.as_ref())
            }
            TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_offset_alias: None,
                with_ordinality: false,
            } => self.unnest(factor, array_exprs, alias.as_ref()),
            TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version: None,
                partitions,
                ..
            } if with_hints.is_empty()
                && partitions.is_empty()
                && alias.as_ref().is_none_or(|a| a.columns.is_empty()) =>
            {
                let named = match name.0.as_slice() {
                    [ast::ObjectNamePart::Identifier(ident)] => ident_name(ident),
                    _ => return self.table_of_from(factor),
                };
                let Some(&(_, index)) = self.ctes.iter().rev().find(|(cte, _)| *cte == named)
                else {
                    let ahead = self.ahead.contains(&named);
                    return self.table_of_from(factor).map_err(|error| {
                        if ahead && error.code == sqlstate::UNDEFINED_TABLE {
                            error
                                .with_detail(format!("There is a WITH item named \"{named}\", but it cannot be referenced from this part of the query."))
                                .with_hint("Use WITH RECURSIVE, or re-order the WITH items to remove forward references.")
                        } else {
                            error
                        }
                    });
                };
                let subquery = &mut self.subqueries[index];
                let returns = match subquery.plan.as_ref() {
                    Plan::Insert(InsertPlan { returning, .. })
                    | Plan::Update(UpdatePlan { returning, .. })
                    | Plan::Delete(DeletePlan { returning, .. }) => !returning.is_empty(),
                    _ => true,
                };
                if !returns {
                    return Err(PgError::error(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("WITH query \"{named}\" does not have a RETURNING clause"),
                    )
                    .at(self.statement.position_of(name)));
                }
                let SubqueryKind::Relation { def, used, .. } = &mut subquery.kind else {
                    unreachable!("a WITH query is a relation")
                };
                *used = true;
                let shown = alias.as_ref().map_or(named, |a| ident_name(&a.name));
                Ok((def.clone(), Some(shown)))
            }
            TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                sample: None,
            } => {
                let Some(alias) = alias else {
                    let at = self.statement.position_of(subquery.as_ref());
                    return Err(PgError::error(
                        sqlstate::SYNTAX_ERROR,
                        "subquery in FROM must have an alias",
                    )
                    .with_hint("For example, FROM (SELECT ...) [AS] foo.")
                    .at(at.and_then(|at| self.statement.opening_parenthesis_before(at))));
                };
                let shown = ident_name(&alias.name);
                let index = self.relation(subquery, &alias.columns, outer, true, |available| {
                    PgError::error(
                        "42P10",
                        format!(
                            "table \"{shown}\" has {available} columns available but {} columns specified",
                            alias.columns.len()
                        ),
                    )
                })?;
                let SubqueryKind::Relation { def, .. } = &self.subqueries[index].kind else {
                    unreachable!("pushed as a relation")
                };
                Ok((def.clone(), Some(shown)))
            }
            other => self.table_of_from(other),
        }
    }

    /// `generate_series(start, stop [, step])` in `FROM`, of `integer`s or `bigint`s, as a
    /// relation of the statement of one column: named by the alias's column list, else by
    /// the alias, else `generate_series`, as PostgreSQL names a function's column. Its
    /// arguments are constants or parameters (a column of another `FROM` item would need
    /// `LATERAL`).
    fn series(
        &mut self,
        factor: &TableFactor,
        arguments: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
    ) -> Result<(Arc<TableDef>, Option<String>), PgError> {
        let position = self.statement.position_of(factor);
        let Some(nodes) = plain_arguments(arguments) else {
            return Err(unsupported(&factor.to_string()));
        };
        let empty = Scope::plain(None, self.statement);
        let analysed = self.arguments(&empty, &nodes)?;
        let types: Vec<SqlType> = analysed.iter().map(Expr::ty).collect();
        let integers = types
            .iter()
            .all(|ty| ty.is_integer() || *ty == SqlType::Unknown);
        if !(2..=3).contains(&analysed.len()) || !integers {
            if analysed.len() >= 2
                && types
                    .iter()
                    .any(|ty| ty.is_time() || *ty == SqlType::Numeric)
            {
                return Err(unsupported(&format!(
                    "{factor}: the stand-in's generate_series counts integers only"
                )));
            }
            return Err(undefined_function("generate_series", &types, position));
        }
        if types
            .iter()
            .all(|ty| matches!(ty, SqlType::Unknown | SqlType::Int2))
        {
            // PostgreSQL's candidates (integer, bigint, numeric, timestamp, ...) tie: none
            // takes a `smallint` without a cast.
            let shown: Vec<&str> = types.iter().map(|ty| ty.name()).collect();
            return Err(ambiguous_function(
                &format!("generate_series({})", shown.join(", ")),
                position,
            ));
        }
        let ty = if types.contains(&SqlType::Int8) {
            SqlType::Int8
        } else {
            SqlType::Int4
        };
        let mut converted = Vec::with_capacity(analysed.len());
        for (argument, node) in analysed.into_iter().zip(&nodes) {
            let at = self.statement.position_of(*node);
            converted.push(self.convert(argument, ty, at)?);
        }
        let mut converted = converted.into_iter();
        let (Some(start), Some(stop)) = (converted.next(), converted.next()) else {
            unreachable!("two or three arguments")
        };
        let plan = Plan::Series(SeriesPlan {
            start,
            stop,
            step: converted.next(),
        });
        let shown = alias.map_or_else(|| "generate_series".to_string(), |a| ident_name(&a.name));
        let items = [(shown.clone(), Expr::Const(Value::Null, ty))];
        self.function_relation(plan, &items, alias, shown)
    }

    /// A function's rows in `FROM` (`generate_series`, `unnest`) as a relation of the
    /// statement named `shown`, its columns `items` renamed by the alias's column list.
    fn function_relation(
        &mut self,
        plan: Plan,
        items: &[(String, Expr)],
        alias: Option<&ast::TableAlias>,
        shown: String,
    ) -> Result<(Arc<TableDef>, Option<String>), PgError> {
        let column_aliases = alias.map_or(&[][..], |a| a.columns.as_slice());
        let first = self.subqueries.len();
        let index = self.push_relation(plan, items, column_aliases, true, first, |available| {
            PgError::error(
                "42P10",
                format!(
                    "table \"{shown}\" has {available} columns available but {} columns specified",
                    column_aliases.len()
                ),
            )
        })?;
        let SubqueryKind::Relation { def, .. } = &self.subqueries[index].kind else {
            unreachable!("pushed as a relation")
        };
        Ok((def.clone(), Some(shown)))
    }

    /// `unnest(array, ...)` in `FROM`: a relation of the statement with a column per array,
    /// named by the alias's column list, else (one array) by the alias, else `unnest`. Its
    /// arguments are constants or parameters, as `generate_series`' are.
    fn unnest(
        &mut self,
        factor: &TableFactor,
        nodes: &[ast::Expr],
        alias: Option<&ast::TableAlias>,
    ) -> Result<(Arc<TableDef>, Option<String>), PgError> {
        // The factor's span starts at its first argument; PostgreSQL points at the name.
        let position = self
            .statement
            .position_of(factor)
            .map(|at| self.statement.word_before(at, "unnest").unwrap_or(at));
        let empty = Scope::plain(None, self.statement);
        let node_refs: Vec<&ast::Expr> = nodes.iter().collect();
        let arrays = self.arguments(&empty, &node_refs)?;
        let types: Vec<SqlType> = arrays.iter().map(Expr::ty).collect();
        if types.is_empty() || types.iter().any(|ty| ty.element().is_none()) {
            return Err(undefined_function("unnest", &types, position));
        }
        let shown = alias.map_or_else(|| "unnest".to_string(), |a| ident_name(&a.name));
        let column_name = if arrays.len() == 1 {
            shown.clone()
        } else {
            "unnest".to_string()
        };
        let items: Vec<(String, Expr)> = types
            .iter()
            .map(|ty| {
                let element = ty.element().unwrap_or(SqlType::Text);
                (column_name.clone(), Expr::Const(Value::Null, element))
            })
            .collect();
        self.function_relation(Plan::Unnest(arrays), &items, alias, shown)
    }

    /// Reads `query` as a relation of the statement (a subquery in `FROM`, a `WITH` query):
    /// its plan becomes a [`SubqueryKind::Relation`], run before the statement, with the
    /// query's columns, the first renamed by `aliases`. `too_many`: the error when there are
    /// more aliases than columns (given how many there are). Its index in `subqueries`.
    fn relation(
        &mut self,
        query: &ast::Query,
        aliases: &[ast::TableAliasColumnDef],
        outer: Option<&Rc<OuterScope>>,
        used: bool,
        too_many: impl FnOnce(usize) -> PgError,
    ) -> Result<usize, PgError> {
        let first = self.subqueries.len();
        let aggregate_at = self.aggregate_at.take();
        self.outer = outer.cloned();
        let planned = self.query(query);
        self.outer = None;
        self.aggregate_at = aggregate_at;
        let plan = planned?;
        if reads_outer(&plan) {
            return Err(unsupported(&format!(
                "a subquery in FROM or WITH that reads the columns of the statement around it: ({query})"
            )));
        }
        let items = plan.items.clone();
        let plan = Plan::Select(Box::new(plan));
        self.push_relation(plan, &items, aliases, used, first, too_many)
    }

    /// A `WITH` query that changes data (`INSERT`, `UPDATE`, `DELETE`), as a relation of the
    /// statement whose rows are those of its `RETURNING`. It always runs (PostgreSQL runs it
    /// whether or not anything reads it): before the statement if something reads it, else
    /// after ([`runs_after_statement`]).
    fn data_changing_relation(
        &mut self,
        change: &ast::Statement,
        aliases: &[ast::TableAliasColumnDef],
        too_many: impl FnOnce(usize) -> PgError,
    ) -> Result<usize, PgError> {
        let first = self.subqueries.len();
        let aggregate_at = self.aggregate_at.take();
        let correlated = std::mem::take(&mut self.correlated);
        let planned = self.change(change);
        self.correlated = correlated;
        self.aggregate_at = aggregate_at;
        let plan = planned?;
        let items = match &plan {
            Plan::Insert(InsertPlan { returning, .. })
            | Plan::Update(UpdatePlan { returning, .. })
            | Plan::Delete(DeletePlan { returning, .. }) => returning.clone(),
            _ => unreachable!("a change is an INSERT, UPDATE or DELETE"),
        };
        self.push_relation(plan, &items, aliases, false, first, too_many)
    }

    /// Pushes `plan` as a relation of the statement, its columns `items` renamed by `aliases`
    /// ([`Analyzer::relation`]).
    fn push_relation(
        &mut self,
        plan: Plan,
        items: &[(String, Expr)],
        aliases: &[ast::TableAliasColumnDef],
        used: bool,
        first: usize,
        too_many: impl FnOnce(usize) -> PgError,
    ) -> Result<usize, PgError> {
        if aliases.len() > items.len() {
            return Err(too_many(items.len()));
        }
        let mut columns: Vec<ColumnDef> = Vec::with_capacity(items.len());
        for (at, (name, expr)) in items.iter().enumerate() {
            let name = match aliases.get(at) {
                Some(alias) if alias.data_type.is_some() => {
                    return Err(unsupported(&format!(
                        "a column type in an alias list ({alias})"
                    )))
                }
                Some(alias) => ident_name(&alias.name),
                None => name.clone(),
            };
            let ty = match expr.ty() {
                SqlType::Unknown => SqlType::Text,
                ty => ty,
            };
            columns.push(ColumnDef {
                name,
                ty,
                not_null: false,
                default: None,
                typmod: None,
            });
        }
        let index = self.subqueries.len();
        let def = Arc::new(TableDef {
            name: derived_table_name(index),
            columns,
            primary_key: None,
            checks: Vec::new(),
            indexes: Vec::new(),
        });
        self.subqueries.push(Subquery {
            kind: SubqueryKind::Relation { def, used, first },
            plan: Box::new(plan),
        });
        Ok(index)
    }

    /// A query whose body is `UNION`, `INTERSECT` or `EXCEPT`: the set operation is a
    /// relation of the statement ([`Analyzer::set_operation`]), and the query reads it as
    /// `SELECT * FROM` it with the query's `ORDER BY`, `LIMIT` and `OFFSET`, which may name
    /// only its result columns (by name or position), as in PostgreSQL.
    fn set_operation_query(
        &mut self,
        query: &ast::Query,
        outer: Option<Rc<OuterScope>>,
    ) -> Result<SelectPlan, PgError> {
        if let Some(lock) = query.locks.first() {
            let locks = self.statement.locks;
            let mode = match lock.lock_type {
                LockType::Update if locks.no_key_update => "NO KEY UPDATE",
                LockType::Update => "UPDATE",
                LockType::Share if locks.key_share => "KEY SHARE",
                LockType::Share => "SHARE",
            };
            return Err(PgError::error(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("FOR {mode} is not allowed with UNION/INTERSECT/EXCEPT"),
            ));
        }
        if let Some(order_by) = &query.order_by {
            if let OrderByKind::Expressions(items) = &order_by.kind {
                for item in items {
                    let plain = matches!(
                        &item.expr,
                        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
                    ) || is_integer_literal(&item.expr);
                    if !plain {
                        return Err(PgError::error(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                        )
                        .with_detail("Only result column names can be used, not expressions or functions.")
                        .with_hint("Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
                        .at(self.statement.position_of(&item.expr)));
                    }
                }
            }
        }
        let index = self.set_operation(query.body.as_ref(), outer.as_ref())?;
        let SubqueryKind::Relation { def, .. } = &self.subqueries[index].kind else {
            unreachable!("pushed as a relation")
        };
        let name = def.name.clone();
        // `SELECT * FROM <the relation>` with the query's own ORDER BY, LIMIT and OFFSET.
        let parsed = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::PostgreSqlDialect {},
            "SELECT * FROM set_operation",
        )
        .ok()
        .and_then(|mut statements| statements.pop());
        let Some(ast::Statement::Query(mut reading)) = parsed else {
            unreachable!("a fixed query parses")
        };
        if let SetExpr::Select(select) = reading.body.as_mut() {
            if let TableFactor::Table { name: table, .. } = &mut select.from[0].relation {
                *table = ObjectName(vec![ast::ObjectNamePart::Identifier(ast::Ident::new(
                    name.clone(),
                ))]);
            }
        }
        reading.order_by = query.order_by.clone();
        reading.limit_clause = query.limit_clause.clone();
        self.ctes.push((name, index));
        let planned = self.query_body(&reading, outer);
        self.ctes.pop();
        planned
    }

    /// `VALUES (a, b), (c, d)` as a query is `SELECT a AS column1, b AS column2 UNION ALL
    /// SELECT c, d` with the same `ORDER BY` and `LIMIT`: each column of the rows' common type,
    /// an untyped literal read as the type of the others, each expression where it was written
    /// (so errors point into the rows). 42601 for rows of different lengths, at the first
    /// value of the first row whose length differs.
    fn values_as_selects(
        &self,
        query: &ast::Query,
        values: &ast::Values,
    ) -> Result<ast::Query, PgError> {
        if values.rows.len() > VALUES_ROW_LIMIT {
            return Err(PgError::error(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "a VALUES list of more than {VALUES_ROW_LIMIT} rows is more than this stand-in runs"
                ),
            ));
        }
        let width = values.rows.first().map_or(0, |row| row.len());
        if let Some(row) = values.rows.iter().find(|row| row.len() != width) {
            return Err(PgError::error(
                sqlstate::SYNTAX_ERROR,
                "VALUES lists must all be the same length",
            )
            .at(row
                .first()
                .and_then(|first| self.statement.position_of(first))));
        }
        let parsed = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::PostgreSqlDialect {},
            "SELECT NULL",
        )
        .ok()
        .and_then(|mut statements| statements.pop());
        let Some(ast::Statement::Query(template)) = parsed else {
            unreachable!("a fixed query parses")
        };
        let SetExpr::Select(template) = *template.body else {
            unreachable!("a fixed query is a SELECT")
        };
        let select_of = |row: &[ast::Expr]| {
            let mut select = template.clone();
            select.projection = row
                .iter()
                .enumerate()
                .map(|(index, expr)| ast::SelectItem::ExprWithAlias {
                    expr: expr.clone(),
                    alias: ast::Ident::new(format!("column{}", index + 1)),
                })
                .collect();
            SetExpr::Select(select)
        };
        let mut rows = values.rows.iter();
        let first = rows
            .next()
            .ok_or_else(|| unsupported("VALUES without rows"))?;
        let mut body = select_of(first);
        for row in rows {
            body = SetExpr::SetOperation {
                left: Box::new(body),
                op: ast::SetOperator::Union,
                set_quantifier: ast::SetQuantifier::All,
                right: Box::new(select_of(row)),
            };
        }
        let mut rewritten = query.clone();
        rewritten.body = Box::new(body);
        Ok(rewritten)
    }

    /// `left UNION right` (or `INTERSECT`, `EXCEPT`, `ALL` or not) as a relation of the
    /// statement: each side a relation (a query, or a set operation itself), the same number
    /// of columns on both (else 42601), each column of their common type (an untyped literal
    /// read as the other side's type; else 42804), named as the left side names it.
    fn set_operation(
        &mut self,
        body: &SetExpr,
        outer: Option<&Rc<OuterScope>>,
    ) -> Result<usize, PgError> {
        // `a UNION b UNION c` is `(a UNION b) UNION c`: the left sides nest as deep as the
        // chain is long, so they are walked in a loop, not recursively.
        let mut chain: Vec<(&ast::SetOperator, &ast::SetQuantifier, &SetExpr)> = Vec::new();
        let mut leftmost = body;
        while let SetExpr::SetOperation {
            left,
            op,
            set_quantifier,
            right,
        } = leftmost
        {
            chain.push((op, set_quantifier, right));
            leftmost = left;
        }
        let first = self.subqueries.len();
        let mut l = match leftmost {
            SetExpr::Query(query) => self.untyped_relation(query, outer)?,
            other => self.untyped_relation(&query_of(other), outer)?,
        };
        let mut left_side = leftmost;
        for (operator, quantifier, right) in chain.into_iter().rev() {
            let operator = match operator {
                ast::SetOperator::Union => SetOperator::Union,
                ast::SetOperator::Intersect => SetOperator::Intersect,
                ast::SetOperator::Except => SetOperator::Except,
                _ => return Err(unsupported(&operator.to_string())),
            };
            let all = is_all(quantifier)?;
            // A right side that is itself a set operation is in parentheses: it nests only
            // as deep as the parser lets parentheses nest.
            let r = self.set_operation(right, outer)?;
            l = self.combined(l, r, (operator, all), (left_side, right), first)?;
            left_side = leftmost;
        }
        Ok(l)
    }

    /// The relation `l OPERATOR [ALL] r`: the same number of columns on both sides (else
    /// 42601), each column of their common type (an untyped literal read as the other side's
    /// type; else 42804), named as the left side names it. `sides`: the two sides' syntax,
    /// for positions.
    fn combined(
        &mut self,
        l: usize,
        r: usize,
        (operator, all): (SetOperator, bool),
        (left, right): (&SetExpr, &SetExpr),
        first: usize,
    ) -> Result<usize, PgError> {
        let right_position = first_item_position(self.statement, right);
        let (l_items, r_items) = (self.relation_items(l), self.relation_items(r));
        if l_items.len() != r_items.len() {
            return Err(PgError::error(
                sqlstate::SYNTAX_ERROR,
                format!(
                    "each {} query must have the same number of columns",
                    operator.name()
                ),
            )
            .at(right_position));
        }
        let mut types = Vec::with_capacity(l_items.len());
        for ((_, le), (_, re)) in l_items.iter().zip(&r_items) {
            let ty = match (le.ty(), re.ty()) {
                (SqlType::Unknown, SqlType::Unknown) => SqlType::Text,
                (SqlType::Unknown, t) | (t, SqlType::Unknown) => t,
                (a, b) if a == b => a,
                (a, b) if a.is_number() && b.is_number() => {
                    if number_rank(a) >= number_rank(b) {
                        a
                    } else {
                        b
                    }
                }
                (a, b) => {
                    return Err(PgError::error(
                        sqlstate::DATATYPE_MISMATCH,
                        format!(
                            "{} types {} and {} cannot be matched",
                            operator.name(),
                            a.name(),
                            b.name()
                        ),
                    )
                    .at(right_position))
                }
            };
            types.push(ty);
        }
        // Untyped literals on either side become the column's type where they stand.
        for (index, side) in [(l, left), (r, right)] {
            let positions: Vec<Option<u32>> = (0..types.len())
                .map(|at| item_position(self.statement, side, at))
                .collect();
            self.retype_relation(index, &types, &positions)?;
        }
        let columns = l_items
            .iter()
            .zip(&types)
            .map(|((name, _), ty)| (name.clone(), Expr::Column(0, *ty)))
            .collect::<Vec<_>>();
        let plan = Plan::SetOperation(SetOperationPlan {
            operator,
            all,
            left: self.relation_table(l),
            right: self.relation_table(r),
            types,
        });
        self.push_relation(plan, &columns, &[], true, first, |_| {
            unreachable!("no aliases")
        })
    }

    /// A side of a set operation that is a query: a relation whose untyped literals and
    /// parameters stay untyped until the operation's column types are known.
    fn untyped_relation(
        &mut self,
        query: &ast::Query,
        outer: Option<&Rc<OuterScope>>,
    ) -> Result<usize, PgError> {
        self.untyped_items_of = Some(std::ptr::from_ref(query) as usize);
        let relation = self.relation(query, &[], outer, true, |_| unreachable!("no aliases"));
        self.untyped_items_of = None;
        relation
    }

    /// A relation's result columns, named and typed (its plan's select list, or the
    /// set operation's columns).
    fn relation_items(&self, index: usize) -> Vec<(String, Expr)> {
        match (
            &self.subqueries[index].kind,
            self.subqueries[index].plan.as_ref(),
        ) {
            (_, Plan::Select(select)) => select.items.clone(),
            (SubqueryKind::Relation { def, .. }, _) => def
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), Expr::Column(i, c.ty)))
                .collect(),
            _ => unreachable!("a relation"),
        }
    }

    /// The name of a relation's table.
    fn relation_table(&self, index: usize) -> String {
        match &self.subqueries[index].kind {
            SubqueryKind::Relation { def, .. } => def.name.clone(),
            _ => unreachable!("a relation"),
        }
    }

    /// Converts a query relation's untyped items to `types` (a set operation's relation is
    /// cast when it runs), and its columns' types with them.
    fn retype_relation(
        &mut self,
        index: usize,
        types: &[SqlType],
        positions: &[Option<u32>],
    ) -> Result<(), PgError> {
        let Plan::Select(select) = self.subqueries[index].plan.as_ref() else {
            return Ok(());
        };
        let mut items = select.items.clone();
        for (((_, item), ty), position) in items.iter_mut().zip(types).zip(positions) {
            if item.ty() == SqlType::Unknown {
                *item = self.convert(item.clone(), *ty, *position)?;
            }
        }
        let subquery = &mut self.subqueries[index];
        let SubqueryKind::Relation { def, .. } = &mut subquery.kind else {
            unreachable!("a relation")
        };
        let def = Arc::make_mut(def);
        let Plan::Select(select) = subquery.plan.as_mut() else {
            unreachable!("checked above")
        };
        for ((column, (_, expr)), (_, item)) in
            def.columns.iter_mut().zip(&mut select.items).zip(items)
        {
            column.ty = item.ty();
            *expr = item;
        }
        Ok(())
    }

    /// A `WITH RECURSIVE` query `name AS (base UNION [ALL] step)`, where `step` reads `name`:
    /// `base` a relation, `step` read with `name` standing for the rows the last round made
    /// (its working table), and the whole a relation whose rows are `base`'s, then each
    /// round's new ones until a round makes none ([`Postgres::recursive_rows`]). Its columns
    /// are `base`'s (renamed by `aliases`); a `step` column of another type is PostgreSQL's
    /// 42804. Refused (0A000): a `step` with subqueries other than correlated ones, or with a
    /// locking clause (PostgreSQL's 0A000 too).
    fn recursive_relation(
        &mut self,
        name: &str,
        query: &ast::Query,
        (base, step, all): (&SetExpr, &SetExpr, bool),
        aliases: &[ast::TableAliasColumnDef],
        outer: Option<&Rc<OuterScope>>,
        too_many: impl Fn(usize) -> PgError,
    ) -> Result<usize, PgError> {
        let first = self.subqueries.len();
        let base_query = match base {
            SetExpr::Query(query) => query.as_ref().clone(),
            other => query_of(other),
        };
        let base = self.relation(&base_query, aliases, outer, true, &too_many)?;
        let SubqueryKind::Relation { def: base_def, .. } = &self.subqueries[base].kind else {
            unreachable!("pushed as a relation")
        };
        // The working table: the base's columns, under a name of its own.
        let mut working = base_def.as_ref().clone();
        working.name = format!("\0working {base}");
        let working = Arc::new(working);
        // The step, with `name` standing for the working table.
        let step_query = match step {
            SetExpr::Query(query) => query.as_ref().clone(),
            other => query_of(other),
        };
        self.subqueries.push(Subquery {
            kind: SubqueryKind::Relation {
                def: working.clone(),
                used: false,
                first: self.subqueries.len(),
            },
            plan: Box::new(Plan::Commit),
        });
        let working_index = self.subqueries.len() - 1;
        self.ctes.push((name.to_string(), working_index));
        let before_step = self.subqueries.len();
        self.outer = outer.cloned();
        let aggregate_at = self.aggregate_at.take();
        let planned = self.query(&step_query);
        self.aggregate_at = aggregate_at;
        self.outer = None;
        self.ctes.pop();
        let step_plan = planned?;
        let reads_itself = matches!(
            self.subqueries[working_index].kind,
            SubqueryKind::Relation { used: true, .. }
        );
        if !reads_itself {
            // Its name only stood for something else: an ordinary `UNION`.
            self.subqueries.truncate(first);
            return self.relation(query, aliases, outer, false, too_many);
        }
        if self.subqueries.len() != before_step || reads_outer(&step_plan) {
            return Err(unsupported(&format!(
                "a subquery in the recursive part of WITH RECURSIVE {name}"
            )));
        }
        if step_plan.lock.is_some() {
            return Err(PgError::error(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE/SHARE in a recursive query is not implemented",
            ));
        }
        // The working table is no subquery of its own: the recursion fills it.
        self.subqueries.pop();
        let types: Vec<SqlType> = working.columns.iter().map(|c| c.ty).collect();
        if step_plan.items.len() != types.len() {
            return Err(PgError::error(
                sqlstate::SYNTAX_ERROR,
                "each UNION query must have the same number of columns",
            )
            .at(first_item_position(self.statement, step)));
        }
        for (at, ((_, item), ty)) in step_plan.items.iter().zip(&types).enumerate() {
            let own = item.ty();
            if own != *ty && own != SqlType::Unknown {
                return Err(PgError::error(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        at + 1,
                        ty.name(),
                        own.name()
                    ),
                )
                .with_hint("Cast the output of the non-recursive term to the correct type.")
                .at(item_position(self.statement, &base_query.body, at)));
            }
        }
        let items: Vec<(String, Expr)> = working
            .columns
            .iter()
            .map(|c| (c.name.clone(), Expr::Column(0, c.ty)))
            .collect();
        let plan = Plan::Recursive(RecursivePlan {
            base: self.relation_table(base),
            working: working.name.clone(),
            step: Box::new(step_plan),
            all,
            types,
        });
        self.push_relation(plan, &items, &[], false, first, |_| {
            unreachable!("renamed in the base")
        })
    }

    /// Reads a `WITH` clause: each query in order, each in reach of those after it, and all
    /// of them in reach of the statement's `FROM` lists until `ctes` is cut back to the
    /// length returned. `outer` as [`Analyzer::item_of_from`].
    fn enter_with(
        &mut self,
        with: &ast::With,
        outer: Option<&Rc<OuterScope>>,
    ) -> Result<usize, PgError> {
        let before = self.ctes.len();
        let ahead_before = self.ahead.len();
        for (at, cte) in with.cte_tables.iter().enumerate() {
            let name = ident_name(&cte.alias.name);
            self.ahead.truncate(ahead_before);
            self.ahead.extend(
                with.cte_tables[at..]
                    .iter()
                    .map(|c| ident_name(&c.alias.name)),
            );
            let position = self.statement.position(cte.alias.name.span.start);
            if with.cte_tables[..at]
                .iter()
                .any(|before| ident_name(&before.alias.name) == name)
            {
                return Err(PgError::error(
                    sqlstate::DUPLICATE_ALIAS,
                    format!("WITH query name \"{name}\" specified more than once"),
                )
                .at(position));
            }
            if cte.from.is_some() {
                return Err(unsupported(&cte.to_string()));
            }
            let too_many = |available: usize| {
                PgError::error(
                    "42P10",
                    format!(
                        "WITH query \"{name}\" has {available} columns available but {} columns specified",
                        cte.alias.columns.len()
                    ),
                )
                .at(position)
            };
            let index = match cte.query.body.as_ref() {
                SetExpr::Insert(change) | SetExpr::Update(change) | SetExpr::Delete(change) => {
                    if self.queries_open > 1 {
                        return Err(PgError::error(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "WITH clause containing a data-modifying statement must be at the top level",
                        )
                        .at(position));
                    }
                    let plain = cte.query.with.is_none()
                        && cte.query.order_by.is_none()
                        && cte.query.limit_clause.is_none()
                        && cte.query.locks.is_empty();
                    if !plain {
                        return Err(unsupported(&cte.to_string()));
                    }
                    self.data_changing_relation(change, &cte.alias.columns, too_many)?
                }
                SetExpr::SetOperation {
                    left,
                    op: ast::SetOperator::Union,
                    set_quantifier,
                    right,
                } if with.recursive => {
                    let all = is_all(set_quantifier)?;
                    if !cte.query.locks.is_empty() {
                        return Err(PgError::error(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "FOR UPDATE/SHARE in a recursive query is not implemented",
                        ));
                    }
                    if cte.query.order_by.is_some() || cte.query.limit_clause.is_some() {
                        return Err(unsupported(&cte.to_string()));
                    }
                    self.recursive_relation(
                        &name,
                        &cte.query,
                        (left, right, all),
                        &cte.alias.columns,
                        outer,
                        too_many,
                    )?
                }
                _ => self.relation(&cte.query, &cte.alias.columns, outer, false, too_many)?,
            };
            self.ctes.push((name, index));
        }
        self.ahead.truncate(ahead_before);
        Ok(before)
    }

    /// `JOIN ... USING (c, ...)` or `NATURAL JOIN` (every column name the tables before and
    /// the joined one share, in the order of the ones before): the merged columns (the left
    /// one for an inner or left join, the right one for a right join, `coalesce` of both for
    /// a full join) and the condition, the columns' equalities.
    fn using(
        &mut self,
        constraint: &ast::JoinConstraint,
        left: &[(String, Expr)],
        right: &TableDef,
        right_offset: usize,
        kind: JoinKind,
    ) -> Result<Using, PgError> {
        let names: Vec<String> = match constraint {
            ast::JoinConstraint::Using(names) => {
                names.iter().map(object_name).collect::<Result<_, _>>()?
            }
            _ => {
                let mut shared: Vec<String> = Vec::new();
                for (name, _) in left {
                    if right.column(name).is_some() && !shared.contains(name) {
                        shared.push(name.clone());
                    }
                }
                shared
            }
        };
        let mut merged: Vec<(String, Expr)> = Vec::new();
        let mut on: Option<Expr> = None;
        for name in names {
            if merged.iter().any(|(m, _)| *m == name) {
                return Err(PgError::error(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column name \"{name}\" appears more than once in USING clause"),
                ));
            }
            let on_left: Vec<&Expr> = left
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, e)| e)
                .collect();
            let l = match on_left.as_slice() {
                [only] => (*only).clone(),
                [] => {
                    return Err(PgError::error(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                        "column \"{name}\" specified in USING clause does not exist in left table"
                    ),
                    ))
                }
                _ => {
                    return Err(PgError::error(
                        sqlstate::AMBIGUOUS_COLUMN,
                        format!(
                            "common column name \"{name}\" appears more than once in left table"
                        ),
                    ))
                }
            };
            let Some(index) = right.column(&name) else {
                return Err(PgError::error(
                    sqlstate::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" specified in USING clause does not exist in right table"
                    ),
                ));
            };
            if right.columns[index + 1..].iter().any(|c| c.name == name) {
                return Err(PgError::error(
                    sqlstate::AMBIGUOUS_COLUMN,
                    format!("common column name \"{name}\" appears more than once in right table"),
                ));
            }
            let r = Expr::Column(right_offset + index, right.columns[index].ty);
            let equal = self.binary(BinOp::Eq, l.clone(), r.clone(), None)?;
            on = Some(match on {
                Some(before) => Expr::binary_node(BinOp::And, before, equal),
                None => equal,
            });
            let ty = l.ty();
            let column = match kind {
                JoinKind::Inner | JoinKind::Left => l,
                JoinKind::Right => r,
                JoinKind::Full => Expr::Coalesce(vec![l, r], ty),
            };
            merged.push((name, column));
        }
        Ok((merged, on))
    }

    /// The tables of a `FROM` list in order, each with how it joins the tables before it (a
    /// subquery, a function or a parenthesised join there is 0A000).
    fn entries_of_from<'q>(
        &mut self,
        from: &'q [ast::TableWithJoins],
        outer: Option<&Rc<OuterScope>>,
    ) -> Result<Vec<FromEntry<'q>>, PgError> {
        let mut entries = Vec::new();
        for item in from {
            let (def, alias) = self.item_of_from(&item.relation, outer)?;
            entries.push(FromEntry {
                def,
                alias,
                kind: JoinKind::Inner,
                constraint: &ast::JoinConstraint::None,
                starts_item: true,
            });
            for join in &item.joins {
                use ast::JoinOperator as J;
                let (kind, constraint) = match &join.join_operator {
                    J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
                    J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
                    J::Right(c) | J::RightOuter(c) => (JoinKind::Right, c),
                    J::FullOuter(c) => (JoinKind::Full, c),
                    J::CrossJoin(c @ ast::JoinConstraint::None) => (JoinKind::Inner, c),
                    _ => return Err(unsupported(&join.to_string())),
                };
                if matches!(constraint, ast::JoinConstraint::UsingAlias(..)) || join.global {
                    return Err(unsupported(&join.to_string()));
                }
                let (def, alias) = self.item_of_from(&join.relation, outer)?;
                entries.push(FromEntry {
                    def,
                    alias,
                    kind,
                    constraint,
                    starts_item: false,
                });
            }
        }
        Ok(entries)
    }

    /// Joins `entries` to the tables already in `scope` (whose rows are `width` columns
    /// wide), one after another: each join's condition is read with the tables of its own
    /// `FROM` item in reach, the items before it hidden, as in PostgreSQL.
    fn join_entries<'s>(
        &mut self,
        scope: &mut Scope<'s>,
        entries: &'s [FromEntry<'_>],
        mut width: usize,
    ) -> Result<Vec<JoinPlan>, PgError> {
        let mut joins = Vec::with_capacity(entries.len());
        let mut item_start = 0;
        for entry in entries {
            if entry.starts_item {
                item_start = scope.sources().len();
            }
            scope.hidden = item_start;
            let left_star = scope.star();
            scope.joined.push(Joined {
                def: &entry.def,
                alias: entry.alias.clone(),
                merged: Vec::new(),
                starts_item: entry.starts_item,
            });
            let on = match entry.constraint {
                ast::JoinConstraint::None => None,
                ast::JoinConstraint::On(node) => {
                    let before = self.aggregate_at.take();
                    let expr = self.expr(scope, node, SqlType::Bool)?;
                    if let Some(at) = self.aggregate_at {
                        return Err(PgError::error(
                            "42803",
                            "aggregate functions are not allowed in JOIN conditions",
                        )
                        .at(at));
                    }
                    self.aggregate_at = before;
                    Some(self.boolean(expr, "JOIN/ON", self.statement.position_of(node))?)
                }
                ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural => {
                    let (merged, on) =
                        self.using(entry.constraint, &left_star, &entry.def, width, entry.kind)?;
                    scope.joined.last_mut().expect("pushed").merged = merged;
                    on
                }
                ast::JoinConstraint::UsingAlias(..) => unreachable!("refused in entries_of_from"),
            };
            joins.push(JoinPlan {
                table: entry.def.name.to_string(),
                kind: entry.kind,
                on,
                left_width: width,
                width: entry.def.columns.len(),
                starts_item: entry.starts_item,
            });
            width += entry.def.columns.len();
        }
        scope.hidden = 0;
        Ok(joins)
    }

    /// A query's plan, with its own correlated subqueries; `self.outer` is the statement it
    /// is a subquery of, if any.
    fn query(&mut self, query: &ast::Query) -> Result<SelectPlan, PgError> {
        let outer_correlated = std::mem::take(&mut self.correlated);
        let outer = self.outer.take();
        self.queries_open += 1;
        let planned = self.query_in(query, outer);
        self.queries_open -= 1;
        let correlated = std::mem::replace(&mut self.correlated, outer_correlated);
        let mut plan = planned?;
        if !correlated.is_empty() {
            let width = plan
                .table
                .as_deref()
                .and_then(|t| self.def_named(t))
                .map_or(0, |def| width_of(&def, &plan.joins));
            if correlated_in(&plan.joins, width, &correlated) {
                return Err(unsupported("a correlated subquery in a join condition"));
            }
            let mut grouped = plan
                .items
                .iter()
                .map(|(_, e)| e)
                .chain(plan.order.iter().map(|(e, _, _)| e))
                .chain(&plan.having)
                .chain(&plan.group_by);
            if plan.aggregate && grouped.any(|e| reads_correlated(e, width)) {
                return Err(correlated_in_groups());
            }
        }
        plan.correlated = correlated;
        Ok(plan)
    }

    fn query_in(
        &mut self,
        query: &ast::Query,
        outer: Option<Rc<OuterScope>>,
    ) -> Result<SelectPlan, PgError> {
        let before = match &query.with {
            Some(with) => self.enter_with(with, outer.as_ref())?,
            None => self.ctes.len(),
        };
        let planned = self.query_body(query, outer);
        self.ctes.truncate(before);
        planned
    }

    /// [`Analyzer::query_in`] with its `WITH` queries in reach.
    fn query_body(
        &mut self,
        query: &ast::Query,
        outer: Option<Rc<OuterScope>>,
    ) -> Result<SelectPlan, PgError> {
        let statement = self.statement;
        if query.fetch.is_some() {
            return Err(unsupported(&statement.text));
        }
        if let SetExpr::SetOperation { .. } = query.body.as_ref() {
            return self.set_operation_query(query, outer);
        }
        if let SetExpr::Values(values) = query.body.as_ref() {
            let rows = self.values_as_selects(query, values)?;
            return self.query_body(&rows, outer);
        }
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Err(unsupported(&statement.text));
        };
        let ignored_clauses = query.for_clause.is_some()
            || query.settings.is_some()
            || query.format_clause.is_some()
            || !query.pipe_operators.is_empty()
            || matches!(select.distinct, Some(ast::Distinct::On(_)))
            || select.select_modifiers.is_some()
            || !select.optimizer_hints.is_empty()
            || select.top.is_some()
            || select.exclude.is_some()
            || select.into.is_some()
            || !select.lateral_views.is_empty()
            || select.prewhere.is_some()
            || !select.connect_by.is_empty()
            || !select.cluster_by.is_empty()
            || !select.distribute_by.is_empty()
            || !select.sort_by.is_empty()
            || !select.named_window.is_empty()
            || select.qualify.is_some()
            || select.value_table_mode.is_some();
        if ignored_clauses {
            return Err(unsupported(&statement.text));
        }
        // FROM: every table, then each join's condition in order, before the select list
        // (PostgreSQL's transformFromClause).
        let entries = self.entries_of_from(&select.from, outer.as_ref())?;
        unique_names(entries.iter().map(|e| (&*e.def, e.alias.as_deref())))?;
        let def = entries.first().map(|e| e.def.clone());
        let mut scope = Scope {
            table: entries.first().map(|e| &*e.def),
            alias: entries.first().and_then(|e| e.alias.clone()),
            joined: Vec::new(),
            hidden: 0,
            outer,
            excluded: false,
            insert_returning: false,
            excluded_out_of_reach: false,
            statement,
        };
        let width = def.as_ref().map_or(0, |d| d.columns.len());
        let joins = self.join_entries(&mut scope, entries.get(1..).unwrap_or_default(), width)?;
        let items = if self.untyped_items_of == Some(std::ptr::from_ref(query) as usize) {
            self.untyped_items_of = None;
            self.select_items_untyped(&scope, &select.projection)?
        } else {
            self.select_items(&scope, &select.projection)?
        };
        let filter = self.filter(&scope, select.selection.as_ref())?;
        let group_by = self.group_by(&scope, &select.group_by, &items)?;
        let having = match &select.having {
            Some(node) => {
                let expr = self.expr(&scope, node, SqlType::Bool)?;
                let position = self.statement.position_of(node);
                Some(self.boolean(expr, "HAVING", position)?)
            }
            None => None,
        };
        let mut order = Vec::new();
        let mut order_nodes: Vec<&ast::Expr> = Vec::new();
        if let Some(order_by) = &query.order_by {
            let OrderByKind::Expressions(exprs) = &order_by.kind else {
                return Err(unsupported(&statement.text));
            };
            for item in exprs {
                order_nodes.push(&item.expr);
                let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                let nulls_first = item.options.nulls_first.unwrap_or(desc);
                let expr = match &item.expr {
                    ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                        let ast::Value::Number(n, _) = &v.value else {
                            unreachable!()
                        };
                        let index: usize = n.parse().unwrap_or(0);
                        match items.get(index.wrapping_sub(1)) {
                            Some((_, e)) => e.clone(),
                            None => {
                                return Err(PgError::error(
                                    "42P10",
                                    format!("ORDER BY position {n} is not in select list"),
                                )
                                .at(self.statement.position_of(&item.expr)))
                            }
                        }
                    }
                    // A bare name of a select-list item is that item, before any column of
                    // `FROM` (PostgreSQL's `findTargetlistEntrySQL92`); two items of that
                    // name that differ make it ambiguous.
                    ast::Expr::Identifier(ident)
                        if items.iter().any(|(name, _)| *name == ident_name(ident)) =>
                    {
                        let name = ident_name(ident);
                        match select_list_item(&items, &name) {
                            Ok(Some(item)) => item.clone(),
                            _ => {
                                let position = self.statement.position_of(&item.expr);
                                return Err(ambiguous("ORDER BY", &name, position));
                            }
                        }
                    }
                    node => self.expr(&scope, node, SqlType::Unknown)?,
                };
                order.push((expr, desc, nulls_first));
            }
        }
        let (limit, offset) = match &query.limit_clause {
            None => (None, None),
            Some(LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) if limit_by.is_empty() => {
                let limit = match limit {
                    Some(node) => {
                        let expr = self.expr(&scope, node, SqlType::Int8)?;
                        Some(self.convert(expr, SqlType::Int8, None)?)
                    }
                    None => None,
                };
                let offset = match offset {
                    Some(offset) => {
                        let expr = self.expr(&scope, &offset.value, SqlType::Int8)?;
                        Some(self.convert(expr, SqlType::Int8, None)?)
                    }
                    None => None,
                };
                (limit, offset)
            }
            Some(_) => return Err(unsupported(&statement.text)),
        };
        // Each locking clause: its lock, its way of waiting, the tables it locks (the one
        // `OF` names, else all of them; never one an outer join may fill with NULLs). The
        // first clause names the lock in the errors about the query around it.
        let mut lock = None;
        let mut lock_tables: Vec<(usize, LockMode, Wait)> = Vec::new();
        for clause in &query.locks {
            let mode = match (clause.lock_type, statement.locks) {
                (LockType::Update, locks) if locks.no_key_update => LockMode::NoKeyUpdate,
                (LockType::Update, _) => LockMode::Update,
                (LockType::Share, locks) if locks.key_share => LockMode::KeyShare,
                (LockType::Share, _) => LockMode::Share,
            };
            let wait = match clause.nonblock {
                None => Wait::Block,
                Some(NonBlock::Nowait) => Wait::Nowait,
                Some(NonBlock::SkipLocked) => Wait::Skip,
            };
            lock.get_or_insert((mode, wait));
            let sources = scope.sources();
            let tables: Vec<usize> = match clause.of.as_ref() {
                Some(name) => {
                    let wanted = object_name(name)?;
                    match sources.iter().position(|(_, shown, _)| *shown == wanted) {
                        Some(index) => vec![index],
                        None => {
                            return Err(PgError::error(
                                sqlstate::UNDEFINED_TABLE,
                                format!(
                                    "relation \"{wanted}\" in {} clause not found in FROM clause",
                                    mode.name()
                                ),
                            )
                            .at(self.statement.position_of(name)))
                        }
                    }
                }
                None => (0..sources.len()).collect(),
            };
            let nullable = |source: usize| {
                let filled_right = source >= 1
                    && matches!(joins[source - 1].kind, JoinKind::Left | JoinKind::Full);
                // A right or full join later in the same `FROM` item.
                let filled_left = joins
                    .iter()
                    .skip(source)
                    .take_while(|j| !j.starts_item)
                    .any(|j| matches!(j.kind, JoinKind::Right | JoinKind::Full));
                filled_right || filled_left
            };
            if tables
                .iter()
                .any(|&source| is_derived_table(&sources[source].0.name))
            {
                return Err(unsupported(&format!(
                    "{} of a subquery in FROM or a WITH query (lock its rows inside it)",
                    mode.name()
                )));
            }
            if tables.iter().any(|&source| nullable(source)) {
                return Err(PgError::error(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "{} cannot be applied to the nullable side of an outer join",
                        mode.name()
                    ),
                ));
            }
            // A table several clauses name takes the strongest lock, NOWAIT if any clause
            // says so, else SKIP LOCKED if any does (PostgreSQL's `applyLockingClause`).
            for source in tables {
                match lock_tables.iter_mut().find(|(s, _, _)| *s == source) {
                    Some((_, held, waits)) => {
                        if mode.strength() > held.strength() {
                            *held = mode;
                        }
                        *waits = match (*waits, wait) {
                            (Wait::Nowait, _) | (_, Wait::Nowait) => Wait::Nowait,
                            (Wait::Skip, _) | (_, Wait::Skip) => Wait::Skip,
                            _ => Wait::Block,
                        };
                    }
                    None => lock_tables.push((source, mode, wait)),
                }
            }
        }
        lock_tables.sort_by_key(|&(source, _, _)| source);
        let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));
        if distinct {
            let outside = order
                .iter()
                .zip(&order_nodes)
                .find(|((e, _, _), _)| !items.iter().any(|(_, item)| item == e));
            if let Some((_, node)) = outside {
                return Err(PgError::error(
                    "42P10",
                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                )
                .at(self.statement.position_of(*node)));
            }
            if let Some((mode, _)) = lock {
                return Err(mode.not_allowed_with("DISTINCT clause"));
            }
        }
        let mut group_by = group_by;
        let aggregate = !group_by.is_empty()
            || having.is_some()
            || items.iter().any(|(_, e)| e.is_aggregate())
            || order.iter().any(|(e, _, _)| e.is_aggregate());
        // Without aggregates, DISTINCT groups the rows by the whole select list.
        let aggregate = if distinct && !aggregate {
            group_by = items.iter().map(|(_, e)| e.clone()).collect();
            true
        } else {
            aggregate
        };
        if aggregate {
            if let Some((mode, _)) = lock {
                let clause = if !group_by.is_empty() {
                    "GROUP BY clause"
                } else if having.is_some() {
                    "HAVING clause"
                } else {
                    "aggregate functions"
                };
                return Err(mode.not_allowed_with(clause));
            }
            // A table grouped by its primary key has every column grouped (PostgreSQL's
            // functional dependency): the row positions of such tables.
            let dependent: Vec<std::ops::Range<usize>> = scope
                .sources()
                .iter()
                .filter(|(def, _, offset)| {
                    def.primary_key.is_some_and(|pk| {
                        group_by
                            .iter()
                            .any(|key| matches!(key, Expr::Column(i, _) if *i == offset + pk))
                    })
                })
                .map(|(def, _, offset)| *offset..offset + def.columns.len())
                .collect();
            // Every column read outside an aggregate must be grouped (PostgreSQL's
            // `check_ungrouped_columns`), looked for in the select list, then HAVING, then
            // ORDER BY, as PostgreSQL does.
            let ungrouped = items
                .iter()
                .map(|(_, e)| e)
                .chain(having.as_ref())
                .chain(order.iter().map(|(e, _, _)| e))
                .find_map(|e| ungrouped_column(e, &group_by, &dependent));
            if let Some(index) = ungrouped {
                // Past the tables' columns: a correlated subquery's value.
                let Some((shown, column)) = scope.column_at(index) else {
                    return Err(correlated_in_groups());
                };
                let column = &column;
                let node = select
                    .projection
                    .iter()
                    .filter_map(|item| match item {
                        SelectItem::UnnamedExpr(node)
                        | SelectItem::ExprWithAlias { expr: node, .. } => Some(node),
                        _ => None,
                    })
                    .chain(select.having.as_ref())
                    .chain(order_nodes.iter().copied())
                    .find_map(|node| column_node(node, column));
                return Err(PgError::error(
                    "42803",
                    format!(
                        "column \"{shown}.{column}\" must appear in the GROUP BY clause or be used in an aggregate function"
                    ),
                )
                .at(node.and_then(|n| self.statement.position_of(n))));
            }
        }
        Ok(SelectPlan {
            table: def.map(|d| d.name.clone()),
            joins,
            lock_tables,
            filter,
            items,
            order,
            limit,
            offset,
            lock,
            aggregate,
            group_by,
            having,
            distinct,
            correlated: Vec::new(),
        })
    }

    fn insert(&mut self, insert: &ast::Insert) -> Result<InsertPlan, PgError> {
        let statement = self.statement;
        let TableObject::TableName(name) = &insert.table else {
            return Err(unsupported(&statement.text));
        };
        let def = self.table(name)?;
        let alias = insert.table_alias.as_ref().map(|a| ident_name(&a.alias));
        let scope = Scope {
            table: Some(&def),
            alias: alias.clone(),
            joined: Vec::new(),
            hidden: 0,
            outer: None,
            excluded: false,
            insert_returning: false,
            excluded_out_of_reach: false,
            statement,
        };
        let targets: Vec<usize> = if insert.columns.is_empty() {
            (0..def.columns.len()).collect()
        } else {
            insert
                .columns
                .iter()
                .map(|c| {
                    let column = match c.0.last() {
                        Some(ast::ObjectNamePart::Identifier(i)) => ident_name(i),
                        _ => c.to_string(),
                    };
                    def.column(&column).ok_or_else(|| {
                        PgError::error(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{column}\" of relation \"{}\" does not exist",
                                def.name
                            ),
                        )
                        .at(statement.position_of(c))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        for (at, index) in targets.iter().enumerate() {
            if targets[..at].contains(index) {
                return Err(PgError::error(
                    sqlstate::DUPLICATE_COLUMN,
                    format!(
                        "column \"{}\" specified more than once",
                        def.columns[*index].name
                    ),
                )
                .at(statement.position_of(&insert.columns[at])));
            }
        }
        let overriding = insert.overriding;
        let ctes_before = self.ctes.len();
        // `DEFAULT VALUES` (no source) is one row of every column's default.
        let (value_rows, source): (Vec<&[ast::Expr]>, _) = match &insert.source {
            None if insert.columns.is_empty() => (vec![&[]], None),
            None => return Err(unsupported(&statement.text)),
            Some(source) => match source.body.as_ref() {
                SetExpr::Values(values) => {
                    // `INSERT INTO t WITH q AS (...) VALUES (...)`: q in reach of the values.
                    if let Some(with) = &source.with {
                        self.enter_with(with, None)?;
                    }
                    (values.rows.iter().map(|row| &row[..]).collect(), None)
                }
                SetExpr::Select(_) | SetExpr::SetOperation { .. } => {
                    let row = self.insert_source(insert, source, &def, &targets)?;
                    (Vec::new(), Some(row))
                }
                _ => return Err(unsupported(&statement.text)),
            },
        };
        let empty = Scope::plain(None, statement);
        let mut rows = Vec::new();
        let source = match source {
            Some((row, name)) => {
                rows.push(row);
                Some(name)
            }
            None => None,
        };
        for row in value_rows {
            if row.len() > targets.len() {
                return Err(PgError::error(
                    sqlstate::SYNTAX_ERROR,
                    "INSERT has more expressions than target columns",
                )
                .at(statement.position_of(&row[targets.len()])));
            }
            if row.len() < targets.len() && !insert.columns.is_empty() {
                return Err(PgError::error(
                    sqlstate::SYNTAX_ERROR,
                    "INSERT has more target columns than expressions",
                )
                .at(statement.position_of(&insert.columns[row.len()])));
            }
            let mut exprs: Vec<Expr> = def
                .columns
                .iter()
                .map(|c| c.default.clone().unwrap_or(Expr::Const(Value::Null, c.ty)))
                .collect();
            for (node, &index) in row.iter().zip(&targets) {
                if is_default_keyword(node) {
                    continue;
                }
                let column = &def.columns[index];
                let identity = match column.default {
                    Some(Expr::Sequence { kind, .. }) => Some(kind),
                    _ => None,
                };
                match (identity, overriding) {
                    (
                        Some(SequenceKind::Always | SequenceKind::ByDefault),
                        Some(InsertOverriding::User),
                    ) => {
                        // The value given is ignored, the sequence numbers the row.
                        self.assigned(&empty, node, column)?;
                        continue;
                    }
                    (Some(SequenceKind::Always), Some(InsertOverriding::System)) => {}
                    (Some(SequenceKind::Always), None) => {
                        return Err(generated_always(
                            &column.name,
                            format!(
                                "cannot insert a non-DEFAULT value into column \"{}\"",
                                column.name
                            ),
                        )
                        .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
                    }
                    _ => {}
                }
                exprs[index] = self.assigned(&empty, node, column)?;
            }
            rows.push(exprs);
        }
        // The source's `WITH` queries are out of reach of `ON CONFLICT` and `RETURNING`.
        self.ctes.truncate(ctes_before);
        let arbiter = match &insert.on {
            Some(OnInsert::OnConflict(on)) => self.arbiter(&def, on.conflict_target.as_ref())?,
            _ => Arbiter::All,
        };
        let conflict = match &insert.on {
            None => Conflict::Error,
            Some(OnInsert::OnConflict(on)) => match &on.action {
                OnConflictAction::DoNothing => Conflict::Nothing,
                OnConflictAction::DoUpdate(update) => {
                    if on.conflict_target.is_none() {
                        return Err(PgError::error(
                            "42601",
                            "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                        )
                        .with_hint("For example, ON CONFLICT (column_name).")
                        .at(statement.position_of(&update.assignments[0].value).map(|_| 0).and(None)));
                    }
                    let scope = Scope {
                        table: Some(&def),
                        alias: alias.clone(),
                        joined: Vec::new(),
                        hidden: 0,
                        outer: None,
                        excluded: true,
                        insert_returning: false,
                        excluded_out_of_reach: false,
                        statement,
                    };
                    let assignments = self.assignments(&scope, &def, &update.assignments)?;
                    let filter = self.filter(&scope, update.selection.as_ref())?;
                    Conflict::Update(assignments, filter)
                }
            },
            Some(_) => return Err(unsupported(&statement.text)),
        };
        let returning = match &insert.returning {
            Some(items) => {
                let scope = Scope {
                    insert_returning: true,
                    excluded_out_of_reach: matches!(conflict, Conflict::Update(..)),
                    ..scope
                };
                self.select_items(&scope, items)?
            }
            None => Vec::new(),
        };
        Ok(InsertPlan {
            table: def.name.clone(),
            rows,
            source,
            conflict,
            arbiter,
            returning,
        })
    }

    /// `INSERT ... SELECT`: the query read as a relation of the statement, run before it
    /// ([`Analyzer::relation`]), and the one row of expressions that makes a row of the table
    /// from a row of the query's: each target column from its item, as an assignment (an
    /// untyped literal read as the column's type, as PostgreSQL reads it), the others their
    /// defaults. Returns that row and the relation's table name.
    fn insert_source(
        &mut self,
        insert: &ast::Insert,
        source: &ast::Query,
        def: &TableDef,
        targets: &[usize],
    ) -> Result<(Vec<Expr>, String), PgError> {
        let statement = self.statement;
        self.untyped_items_of = Some(std::ptr::from_ref(source) as usize);
        let relation = self.relation(source, &[], None, true, |_| unreachable!("no aliases"));
        self.untyped_items_of = None;
        let index = relation?;
        let projection = match source.body.as_ref() {
            SetExpr::Select(select) => &select.projection[..],
            _ => &[],
        };
        let item_position = |at: usize| match projection.get(at) {
            Some(SelectItem::UnnamedExpr(node) | SelectItem::ExprWithAlias { expr: node, .. }) => {
                statement.position_of(node)
            }
            _ => None,
        };
        let Plan::Select(select) = self.subqueries[index].plan.as_ref() else {
            unreachable!("a relation is a SELECT")
        };
        let mut items: Vec<Expr> = select.items.iter().map(|(_, e)| e.clone()).collect();
        if items.len() > targets.len() {
            return Err(PgError::error(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more expressions than target columns",
            )
            .at(item_position(targets.len())));
        }
        if items.len() < targets.len() && !insert.columns.is_empty() {
            return Err(PgError::error(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more target columns than expressions",
            )
            .at(statement.position_of(&insert.columns[items.len()])));
        }
        let mut row: Vec<Expr> = def
            .columns
            .iter()
            .map(|c| c.default.clone().unwrap_or(Expr::Const(Value::Null, c.ty)))
            .collect();
        for (at, (item, &target)) in items.iter_mut().zip(targets).enumerate() {
            let column = &def.columns[target];
            let position = item_position(at);
            // An untyped literal of the query becomes the column's type where it stands.
            if item.ty() == SqlType::Unknown {
                *item = self.convert(item.clone(), column.ty, position)?;
            }
            let ty = item.ty();
            assignable(column, ty, position)?;
            let identity = match column.default {
                Some(Expr::Sequence { kind, .. }) => Some(kind),
                _ => None,
            };
            match (identity, insert.overriding) {
                (
                    Some(SequenceKind::Always | SequenceKind::ByDefault),
                    Some(InsertOverriding::User),
                ) => continue,
                (Some(SequenceKind::Always), Some(InsertOverriding::System)) => {}
                (Some(SequenceKind::Always), None) => {
                    return Err(generated_always(
                        &column.name,
                        format!(
                            "cannot insert a non-DEFAULT value into column \"{}\"",
                            column.name
                        ),
                    )
                    .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
                }
                _ => {}
            }
            let converted = self.convert(Expr::Column(at, ty), column.ty, None)?;
            row[target] = with_modifier_of(column, converted);
        }
        // The relation's items and columns take the types the literals took.
        let subquery = &mut self.subqueries[index];
        let SubqueryKind::Relation { def: relation, .. } = &mut subquery.kind else {
            unreachable!("pushed as a relation")
        };
        let relation = Arc::make_mut(relation);
        let Plan::Select(select) = subquery.plan.as_mut() else {
            unreachable!("a relation is a SELECT")
        };
        for ((column, (_, expr)), item) in relation
            .columns
            .iter_mut()
            .zip(select.items.iter_mut())
            .zip(items)
        {
            column.ty = item.ty();
            *expr = item;
        }
        Ok((row, relation.name.clone()))
    }

    /// The arbiter of `ON CONFLICT target`: the primary key or the unique index whose columns
    /// are the target's (in any order), or the constraint named; 42P10 or 42704 otherwise.
    fn arbiter(
        &mut self,
        def: &TableDef,
        target: Option<&ast::ConflictTarget>,
    ) -> Result<Arbiter, PgError> {
        match target {
            None => Ok(Arbiter::All),
            Some(ast::ConflictTarget::Columns { columns, predicate }) => {
                let mut wanted = Vec::with_capacity(columns.len());
                for ident in columns {
                    let name = ident_name(ident);
                    let Some(column) = def.column(&name) else {
                        return Err(PgError::error(
                            sqlstate::UNDEFINED_COLUMN,
                            format!("column \"{name}\" does not exist"),
                        )
                        .at(self.statement.position(ident.span.start).map(|at| {
                            self.statement.opening_parenthesis_before(at).unwrap_or(at)
                        })));
                    };
                    wanted.push(column);
                }
                wanted.sort_unstable();
                wanted.dedup();
                let same = |columns: &[usize]| {
                    let mut columns = columns.to_vec();
                    columns.sort_unstable();
                    columns == wanted
                };
                // `WHERE` infers a partial index whose predicate is the same condition (a
                // whole index serves any); PostgreSQL also infers one whose predicate the
                // condition implies in other ways.
                let wanted_predicate = match predicate {
                    Some(node) => Some(self.predicate_over(def, node)?),
                    None => None,
                };
                if def.primary_key.is_some_and(|pk| same(&[pk])) {
                    return Ok(Arbiter::PrimaryKey);
                }
                let inferred = |index: &IndexDef| {
                    index.unique
                        && same(&index.columns)
                        && (index.predicate.is_none() || index.predicate == wanted_predicate)
                };
                match def.indexes.iter().position(inferred) {
                    Some(index) => Ok(Arbiter::Index(index)),
                    None => Err(PgError::error(
                        "42P10",
                        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                    )),
                }
            }
            Some(ast::ConflictTarget::OnConstraint(name)) => {
                let name = object_name(name)?;
                if def.primary_key.is_some() && index::primary_key_name(&def.name) == name {
                    return Ok(Arbiter::PrimaryKey);
                }
                match def
                    .indexes
                    .iter()
                    .position(|index| index.constraint && index.name == name)
                {
                    Some(index) => Ok(Arbiter::Index(index)),
                    None => Err(PgError::error(
                        "42704",
                        format!(
                            "constraint \"{name}\" for table \"{}\" does not exist",
                            def.name
                        ),
                    )),
                }
            }
        }
    }

    /// The predicate `node` of a partial index on `table`, analysed over the table's columns,
    /// if the table is there (else running the plan finds it missing). PostgreSQL's refusals:
    /// a subquery (0A000), an aggregate (42803), a function that is not immutable (42P17).
    fn index_predicate(&mut self, table: &str, node: &ast::Expr) -> Result<Option<Expr>, PgError> {
        let Some(def) = self.tables.get(table).map(|t| t.def.clone()) else {
            return Ok(None);
        };
        let subqueries = self.subqueries.len();
        let expr = self.predicate_over(&def, node)?;
        if self.subqueries.len() > subqueries {
            return Err(
                PgError::error("0A000", "cannot use subquery in index predicate")
                    .at(first_subquery_at(self.statement, node)),
            );
        }
        if expr.contains(&|e| matches!(e, Expr::CountStar | Expr::Aggregate(..))) {
            return Err(PgError::error(
                "42803",
                "aggregate functions are not allowed in index predicates",
            )
            .at(self.aggregate_at.flatten()));
        }
        let mutable = |e: &Expr| {
            matches!(
                e,
                Expr::Clock(_)
                    | Expr::Session(_)
                    | Expr::VolatileCall(..)
                    | Expr::Advisory(..)
                    | Expr::Sequence { .. }
            )
        };
        if expr.contains(&mutable) {
            return Err(PgError::error(
                "42P17",
                "functions in index predicate must be marked IMMUTABLE",
            ));
        }
        Ok(Some(expr))
    }

    /// A condition `node` over the columns of `def` (a partial index's predicate, or the
    /// `WHERE` of an `ON CONFLICT` target that infers one).
    fn predicate_over(&mut self, def: &TableDef, node: &ast::Expr) -> Result<Expr, PgError> {
        let statement = self.statement;
        let scope = Scope::plain(Some(def), statement);
        let expr = self.expr(&scope, node, SqlType::Bool)?;
        self.boolean(expr, "WHERE", statement.position_of(node))
    }

    fn create_table(&mut self, create: &ast::CreateTable) -> Result<Plan, PgError> {
        let statement = self.statement;
        // `CREATE TABLE ... AS query` (and `... LIKE`, `... CLONE`): not made here, refused
        // rather than made empty.
        if create.query.is_some() || create.like.is_some() || create.clone.is_some() {
            return Err(unsupported("CREATE TABLE ... AS / LIKE"));
        }
        // A reserved word, unquoted, is not a name in PostgreSQL's grammar (`CREATE TABLE
        // user`, a column named `order`): its syntax error at the word, as written.
        let reserved = create
            .name
            .0
            .last()
            .and_then(|part| part.as_ident())
            .into_iter()
            .chain(create.columns.iter().map(|column| &column.name))
            .find(|ident| {
                ident.quote_style.is_none()
                    && super::catalog_names::is_reserved_for_names(&ident.value.to_lowercase())
            });
        if let Some(ident) = reserved {
            return Err(
                PgError::syntax_error_near(&ident.value).at(statement.position(ident.span.start))
            );
        }
        let name = object_name(&create.name)?;
        let mut def = TableDef {
            name: name.clone(),
            columns: Vec::new(),
            primary_key: None,
            checks: Vec::new(),
            indexes: Vec::new(),
        };
        let mut checks: Vec<(Option<String>, Option<String>, ast::Expr)> = Vec::new();
        // `UNIQUE` constraints as written: a name if given, the columns.
        // Each `UNIQUE`: its name, its columns, and whether its NULLs are not distinct.
        let mut uniques: Vec<(Option<String>, Vec<usize>, bool)> = Vec::new();
        // A primary key of several columns was declared (it is `def.indexes[0]`).
        let mut composite_key = false;
        let multiple_keys = || {
            PgError::error(
                sqlstate::INVALID_TABLE_DEFINITION,
                format!("multiple primary keys for table \"{name}\" are not allowed"),
            )
        };
        for column in &create.columns {
            let column_name = ident_name(&column.name);
            if def.column(&column_name).is_some() {
                return Err(PgError::error(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{column_name}\" specified more than once"),
                ));
            }
            let index = def.columns.len();
            let serial = match column.data_type.to_string().to_ascii_lowercase().as_str() {
                "smallserial" | "serial2" => Some(SqlType::Int2),
                "serial" | "serial4" => Some(SqlType::Int4),
                "bigserial" | "serial8" => Some(SqlType::Int8),
                _ => None,
            };
            // Where the column's type is written (for the errors of its modifier).
            let type_at = statement
                .position(column.name.span.end)
                .and_then(|end| statement.next_word_at(end));
            let ty = match serial {
                Some(ty) => ty,
                None => data_type(&column.data_type).map_err(|error| match error.code {
                    sqlstate::SYNTAX_ERROR => {
                        let parenthesis = type_at.and_then(|at| statement.text_from(at, "("));
                        error.at(parenthesis)
                    }
                    sqlstate::UNDEFINED_OBJECT => error.at(type_at),
                    _ => error,
                })?,
            };
            // `xid` is read in casts (`xmax = '0'::xid`); a column of it, ordered and
            // grouped as PostgreSQL cannot, is not kept.
            if ty == SqlType::Xid {
                return Err(unsupported("a column of type xid"));
            }
            let mut col = ColumnDef {
                name: column_name.clone(),
                ty,
                typmod: type_modifier(&column.data_type).map_err(|error| {
                    // A modifier out of range: PostgreSQL points at the type.
                    match error.code {
                        sqlstate::FEATURE_NOT_SUPPORTED => error,
                        _ => error.at(type_at),
                    }
                })?,
                not_null: serial.is_some(),
                default: serial.map(|ty| Expr::Sequence {
                    column: index,
                    ty,
                    kind: SequenceKind::Serial,
                }),
            };
            // Where its `DEFAULT` is written, if it is.
            let mut explicit_default: Option<Option<u32>> = None;
            let mut identity = false;
            for option in &column.options {
                match &option.option {
                    ColumnOption::NotNull => col.not_null = true,
                    ColumnOption::Null => {}
                    ColumnOption::Default(expr) => {
                        let default_at = statement
                            .position_of(expr)
                            .and_then(|at| statement.keyword_before(at, "default"));
                        if explicit_default.is_some() || serial.is_some() {
                            return Err(PgError::error(
                                sqlstate::SYNTAX_ERROR,
                                format!(
                                    "multiple default values specified for column \"{column_name}\" of table \"{name}\""
                                ),
                            )
                            .at(explicit_default.and(default_at)));
                        }
                        explicit_default = Some(default_at);
                        let empty = Scope::plain(None, statement);
                        col.default = Some(self.assigned(&empty, expr, &col)?);
                    }
                    ColumnOption::Generated {
                        generated_as:
                            generated @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                        sequence_options,
                        generation_expr: None,
                        ..
                    } if sequence_options.as_ref().is_none_or(Vec::is_empty) => {
                        if identity {
                            return Err(PgError::error(
                                sqlstate::SYNTAX_ERROR,
                                format!(
                                    "multiple identity specifications for column \"{column_name}\" of table \"{name}\""
                                ),
                            ));
                        }
                        if serial.is_some() {
                            // A serial column's default is its sequence already.
                            return Err(PgError::error(
                                sqlstate::SYNTAX_ERROR,
                                format!(
                                    "both default and identity specified for column \"{column_name}\" of table \"{name}\""
                                ),
                            ));
                        }
                        if !ty.is_integer() {
                            return Err(PgError::error(
                                "22023",
                                "identity column type must be smallint, integer, or bigint",
                            ));
                        }
                        identity = true;
                        col.not_null = true;
                        col.default = Some(Expr::Sequence {
                            column: index,
                            ty,
                            kind: if matches!(generated, ast::GeneratedAs::Always) {
                                SequenceKind::Always
                            } else {
                                SequenceKind::ByDefault
                            },
                        });
                    }
                    ColumnOption::PrimaryKey(_) => {
                        if def.primary_key.is_some() {
                            return Err(
                                multiple_keys().at(statement.position(column.name.span.start))
                            );
                        }
                        col.not_null = true;
                        def.primary_key = Some(def.columns.len());
                    }
                    ColumnOption::Unique(unique) => {
                        let not_distinct = unique_constraint_supported(unique)?;
                        let given = option.name.as_ref().or(unique.name.as_ref());
                        uniques.push((given.map(ident_name), vec![index], not_distinct));
                    }
                    ColumnOption::Check(check) => checks.push((
                        option
                            .name
                            .as_ref()
                            .map(ident_name)
                            .or(check.name.as_ref().map(ident_name)),
                        Some(column_name.clone()),
                        (*check.expr).clone(),
                    )),
                    other => return Err(unsupported(&format!("column option {other}"))),
                }
            }
            if let (true, Some(default_at)) = (identity, explicit_default) {
                return Err(PgError::error(
                    sqlstate::SYNTAX_ERROR,
                    format!(
                        "both default and identity specified for column \"{column_name}\" of table \"{name}\""
                    ),
                )
                .at(default_at));
            }
            def.columns.push(col);
        }
        for constraint in &create.constraints {
            match constraint {
                TableConstraint::PrimaryKey(pk) => {
                    let start = || {
                        constraint_start(
                            statement,
                            pk.name.as_ref(),
                            &pk.columns,
                            &["primary", "key"],
                        )
                    };
                    if def.primary_key.is_some() || composite_key {
                        return Err(multiple_keys().at(start()));
                    }
                    let columns = key_columns(&def, &pk.columns, "primary key", start)?;
                    for &column in &columns {
                        def.columns[column].not_null = true;
                    }
                    if let [column] = columns[..] {
                        def.primary_key = Some(column);
                    } else {
                        // Several columns: rows are kept in the order they came, and the key is
                        // a unique constraint of its own, named as the primary key, first.
                        composite_key = true;
                        let key = IndexDef::on(index::primary_key_name(&name), columns, true, true);
                        def.indexes.insert(0, key);
                    }
                }
                TableConstraint::Check(check) => checks.push((
                    check.name.as_ref().map(ident_name),
                    None,
                    (*check.expr).clone(),
                )),
                TableConstraint::Unique(unique) => {
                    let not_distinct = unique_constraint_supported(unique)?;
                    let start = || {
                        constraint_start(
                            statement,
                            unique.name.as_ref(),
                            &unique.columns,
                            &["unique"],
                        )
                    };
                    let columns = key_columns(&def, &unique.columns, "unique", start)?;
                    uniques.push((unique.name.as_ref().map(ident_name), columns, not_distinct));
                }
                other => return Err(unsupported(&format!("constraint {other}"))),
            }
        }
        // PostgreSQL makes one index of identical ones (the primary key's first), keeping a
        // name if the first had none; names are chosen when the table is made.
        for (name, columns, not_distinct) in uniques {
            if !not_distinct && def.primary_key.is_some_and(|pk| columns == [pk]) {
                continue;
            }
            let identical =
                |i: &&mut IndexDef| i.columns == columns && i.nulls_not_distinct == not_distinct;
            if let Some(prior) = def.indexes.iter_mut().find(identical) {
                if prior.name.is_empty() {
                    prior.name = name.unwrap_or_default();
                }
                continue;
            }
            def.indexes.push(IndexDef {
                nulls_not_distinct: not_distinct,
                ..IndexDef::on(name.unwrap_or_default(), columns, true, true)
            });
        }
        let scope_def = def.clone();
        let scope = Scope::plain(Some(&scope_def), statement);
        let mut used_names: Vec<String> = Vec::new();
        for (given, column, node) in checks {
            let expr = self.expr(&scope, &node, SqlType::Bool)?;
            let expr = self.boolean(expr, "CHECK", statement.position_of(&node))?;
            let name = match given {
                Some(name) => name,
                None => {
                    let mut columns = Vec::new();
                    collect_columns(&expr, &mut columns);
                    let base = match (column, columns.as_slice()) {
                        (Some(c), _) => format!("{name}_{c}_check"),
                        (None, [only]) => format!("{name}_{}_check", scope_def.columns[*only].name),
                        _ => format!("{name}_check"),
                    };
                    let mut candidate = base.clone();
                    let mut n = 1;
                    while used_names.contains(&candidate) {
                        candidate = format!("{base}{n}");
                        n += 1;
                    }
                    candidate
                }
            };
            used_names.push(name.clone());
            def.checks.push(CheckDef { name, expr });
        }
        def.checks.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Plan::CreateTable(def, create.if_not_exists))
    }
}

/// `NOT test` when `negated` (`NOT LIKE`, `NOT IN`, `NOT EXISTS`, ...), else `test`.
fn negated_if(negated: bool, test: Expr) -> Expr {
    if negated {
        Expr::Not(Box::new(test))
    } else {
        test
    }
}

/// `a op b op ...` (`AND` or `OR`) as a balanced tree (None for no terms).
fn balanced(op: BinOp, mut terms: Vec<Expr>) -> Option<Expr> {
    match terms.len() {
        0 => None,
        1 => terms.pop(),
        n => {
            let right = terms.split_off(n / 2);
            let (left, right) = (balanced(op, terms)?, balanced(op, right)?);
            Some(Expr::binary_node(op, left, right))
        }
    }
}

/// The first column `expr` reads outside aggregates and outside every `GROUP BY` key.
/// The first column `expr` reads outside an aggregate that is neither one of the group `keys`
/// nor in one of the `dependent` ranges (a table grouped by its primary key).
fn ungrouped_column(
    expr: &Expr,
    keys: &[Expr],
    dependent: &[std::ops::Range<usize>],
) -> Option<usize> {
    if keys.contains(expr) {
        return None;
    }
    match expr {
        Expr::Column(index, _) if dependent.iter().any(|r| r.contains(index)) => None,
        Expr::Column(index, _) => Some(*index),
        Expr::CountStar | Expr::Aggregate(..) => None,
        other => other
            .parts()
            .into_iter()
            .find_map(|part| ungrouped_column(part, keys, dependent)),
    }
}

/// Where `column` is named in `node` outside an aggregate call (for an error's position).
fn column_node<'a>(node: &'a ast::Expr, column: &str) -> Option<&'a ast::Expr> {
    use ast::Expr as E;
    match node {
        E::Identifier(ident) if ident_name(ident) == column => Some(node),
        E::CompoundIdentifier(parts) if parts.last().map(ident_name).as_deref() == Some(column) => {
            Some(node)
        }
        E::Nested(inner)
        | E::UnaryOp { expr: inner, .. }
        | E::IsNull(inner)
        | E::IsNotNull(inner)
        | E::IsTrue(inner)
        | E::Cast { expr: inner, .. } => column_node(inner, column),
        E::BinaryOp { left, right, .. } => {
            column_node(left, column).or_else(|| column_node(right, column))
        }
        E::Between {
            expr, low, high, ..
        } => column_node(expr, column)
            .or_else(|| column_node(low, column))
            .or_else(|| column_node(high, column)),
        E::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => column_node(expr, column)
            .or_else(|| list.iter().find_map(|item| column_node(item, column))),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => operand
            .as_deref()
            .and_then(|o| column_node(o, column))
            .or_else(|| {
                conditions.iter().find_map(|when| {
                    column_node(&when.condition, column)
                        .or_else(|| column_node(&when.result, column))
                })
            })
            .or_else(|| else_result.as_deref().and_then(|e| column_node(e, column))),
        E::Function(function) => {
            let name = object_name(&function.name).unwrap_or_default();
            if AggregateKind::parse(&name).is_some() {
                return None;
            }
            match &function.args {
                FunctionArguments::List(list) => list.args.iter().find_map(|arg| match arg {
                    ast::FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => column_node(e, column),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

fn collect_columns(expr: &Expr, out: &mut Vec<usize>) {
    if let Expr::Column(i, _) = expr {
        if !out.contains(i) {
            out.push(*i);
        }
    }
    for part in expr.parts() {
        collect_columns(part, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_counts_from_one_and_stops_at_its_type_s_largest_value() {
        let mut def = TableDef::wallets();
        def.name = "e".to_string();
        def.columns[0].ty = SqlType::Int4;
        let mut sequences = BTreeMap::new();
        assert_eq!(next_in_sequence(&mut sequences, 0, &def).unwrap(), 1);
        assert_eq!(next_in_sequence(&mut sequences, 0, &def).unwrap(), 2);
        sequences.insert(0, i64::from(i32::MAX) - 1);
        assert_eq!(
            next_in_sequence(&mut sequences, 0, &def).unwrap(),
            i64::from(i32::MAX)
        );
        let error = next_in_sequence(&mut sequences, 0, &def).unwrap_err();
        assert_eq!(error.code, "2200H");
        assert_eq!(
            error.message,
            "nextval: reached maximum value of sequence \"e_id_seq\" (2147483647)"
        );
        // A bigint column goes on past it.
        def.columns[0].ty = SqlType::Int8;
        assert_eq!(
            next_in_sequence(&mut sequences, 0, &def).unwrap(),
            i64::from(i32::MAX) + 1
        );
    }
}
