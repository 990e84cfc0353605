//! Indexes: `CREATE [UNIQUE] INDEX`, `DROP INDEX` and `UNIQUE` constraints as a user's schema
//! has them, partial ones (`WHERE`, [`IndexDef::holds`]) and `NULLS NOT DISTINCT` ones among them.
//!
//! The stand-in scans its rows, so a plain index changes no answer; a unique one refuses a
//! second row with the same values in its columns (none of them NULL) as PostgreSQL's
//! `_bt_check_unique` does: 23505 against a row visible to the statement, and a wait for the
//! transaction that wrote a row with those values or changed or deleted one that had them
//! ([`clash`]). A unique constraint is a unique index that belongs to its constraint (so
//! `DROP INDEX` refuses it, 2BP01), named `<table>_<columns>_key` unless named. Indexes also
//! change the catalogue: an index is a relation, so its name is taken for tables and sequences too (and a
//! table's primary key is the index `<table>_pkey`), it goes with its table, and `DROP TABLE`,
//! `DROP SEQUENCE` and `DROP INDEX` each refuse the others' objects. A name PostgreSQL chooses
//! (`CREATE INDEX ON locks (expires_at)`) is chosen as its `ChooseRelationName` does:
//! `locks_expires_at_idx`, then `..._idx1`, `..._idx2`, cut to 63 bytes as `makeObjectName`
//! cuts it.

/// The longest name PostgreSQL keeps, in bytes (`NAMEDATALEN - 1`).
pub const NAME_BYTES: usize = 63;

use std::cmp::Ordering;

use super::catalog::{EvalContext, Expr, TableDef};
use super::engine::{SessionId, Table, Written};
use super::error::{sqlstate, PgError};
use super::value::Value;

/// An index of a table: its name and its columns (by position in the table), in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexDef {
    /// The index name (empty in a `CREATE TABLE` plan until one is chosen).
    pub name: String,
    /// The indexed columns.
    pub columns: Vec<usize>,
    /// `UNIQUE`: no two rows with equal values in every column (NULLs never equal).
    pub unique: bool,
    /// It is a `UNIQUE` constraint's (dropped with the constraint, not by `DROP INDEX`).
    pub constraint: bool,
    /// `WHERE`: a partial index holds only the rows this condition (over the row's columns,
    /// immutable) is true for; a unique one compares only those.
    pub predicate: Option<Expr>,
    /// `NULLS NOT DISTINCT`: a unique index compares NULLs as equal (by default two rows
    /// with a NULL in a column of the key never clash).
    pub nulls_not_distinct: bool,
}

impl IndexDef {
    /// An index on `columns` without a predicate, NULLs distinct.
    pub fn on(name: String, columns: Vec<usize>, unique: bool, constraint: bool) -> IndexDef {
        IndexDef {
            name,
            columns,
            unique,
            constraint,
            predicate: None,
            nulls_not_distinct: false,
        }
    }

    /// Whether the index holds `tuple`: always, but for a partial index whose predicate is not
    /// true for it.
    pub(super) fn holds(&self, tuple: &[Value]) -> Result<bool, PgError> {
        let Some(predicate) = &self.predicate else {
            return Ok(true);
        };
        let context = EvalContext {
            row: tuple,
            excluded: None,
            params: &[],
        };
        Ok(predicate.eval(&context)? == Value::Bool(true))
    }

    /// Whether `tuple`'s key can clash with another: it is in the index, and none of its
    /// values is NULL unless NULLs are not distinct.
    pub(super) fn keyed(&self, tuple: &[Value]) -> Result<bool, PgError> {
        let nulls_ok =
            self.nulls_not_distinct || self.columns.iter().all(|&c| tuple[c] != Value::Null);
        Ok(nulls_ok && self.holds(tuple)?)
    }
}

/// How a row's values meet a unique index's other rows ([`clash`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Clash {
    /// No other row has those values.
    None,
    /// The row with this key has them, as the statement sees it.
    Row(Value),
    /// This transaction wrote a row with those values, or changed or deleted one that had
    /// them, and has not ended: whether they clash depends on how it ends.
    Wait(SessionId),
}

/// Whether `tuple` may stand in `table` beside its other rows (the row `own`, the one being
/// changed, aside) under unique index `index`, as `session` writes it. An error is the
/// predicate's of a partial index, on `tuple`.
pub(super) fn clash(
    table: &Table,
    index: &IndexDef,
    tuple: &[Value],
    session: SessionId,
    own: Option<&Value>,
) -> Result<Clash, PgError> {
    if !index.keyed(tuple)? {
        return Ok(Clash::None);
    }
    let columns = &index.columns;
    // Another row's predicate was true or false when it was written, and is the same now
    // (it is immutable): an error it could raise was raised then.
    let same = |other: &[Value]| {
        columns
            .iter()
            .all(|&c| other[c].cmp(&tuple[c]) == Ordering::Equal)
            && index.holds(other).unwrap_or(false)
    };
    for (key, row) in &table.rows {
        if Some(key) == own {
            continue;
        }
        if let Some(lock) = row.lock.as_ref().filter(|lock| lock.holder != session) {
            if let Some(written) = &lock.uncommitted {
                let pending = matches!(written, Written::Row(new) if same(new));
                if pending || row.committed.as_deref().is_some_and(same) {
                    return Ok(Clash::Wait(lock.holder));
                }
                continue;
            }
        }
        if row.visible_tuple(session).is_some_and(|t| same(t)) {
            return Ok(Clash::Row(key.clone()));
        }
    }
    Ok(Clash::None)
}

/// Whether `column` of `def`'s table is one of its key columns: its primary key's or one of
/// a unique index without a predicate, PostgreSQL's key for row locks.
pub(super) fn is_key_column(def: &TableDef, column: usize) -> bool {
    def.primary_key == Some(column)
        || def.indexes.iter().any(|index| {
            index.unique && index.predicate.is_none() && index.columns.contains(&column)
        })
}

/// Whether `new`, a new version of `old`, changes a value in one of `def`'s key columns
/// ([`is_key_column`]). An `UPDATE` that changes none takes the `FOR NO KEY UPDATE` lock,
/// which a `FOR KEY SHARE` lock does not hold back.
pub(super) fn changes_key(def: &TableDef, old: &[Value], new: &[Value]) -> bool {
    debug_assert_eq!(old.len(), new.len());
    (0..old.len()).any(|column| old[column] != new[column] && is_key_column(def, column))
}

/// The 23505 of a row of `def`'s table that would repeat the values of another row in
/// `index`'s columns.
pub(super) fn violation(def: &TableDef, index: &IndexDef, tuple: &[Value]) -> PgError {
    PgError::error(
        sqlstate::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            index.name
        ),
    )
    .with_detail(format!(
        "Key ({})=({}) already exists.",
        column_names(def, index),
        key_text(tuple.iter().collect(), &index.columns)
    ))
    .on(&def.name, None, Some(&index.name))
}

/// `CREATE UNIQUE INDEX` over `rows` that already repeat a key: PostgreSQL's 23505, naming
/// the smallest repeated key (its index build finds it sorting the rows). An error is a
/// partial index's predicate's, on a row.
pub(super) fn duplicated(
    def: &TableDef,
    index: &IndexDef,
    rows: &[&[Value]],
) -> Result<Option<PgError>, PgError> {
    let columns = &index.columns;
    let mut keys: Vec<Vec<&Value>> = Vec::with_capacity(rows.len());
    for row in rows {
        if index.keyed(row)? {
            keys.push(columns.iter().map(|&c| &row[c]).collect());
        }
    }
    keys.sort();
    let Some(repeated) = keys.windows(2).find(|pair| pair[0] == pair[1]) else {
        return Ok(None);
    };
    let values: Vec<String> = repeated[0].iter().map(|v| v.detail_text()).collect();
    Ok(Some(
        PgError::error(
            sqlstate::UNIQUE_VIOLATION,
            format!("could not create unique index \"{}\"", index.name),
        )
        .with_detail(format!(
            "Key ({})=({}) is duplicated.",
            column_names(def, index),
            values.join(", ")
        ))
        .on(&def.name, None, Some(&index.name)),
    ))
}

/// The index's column names as a DETAIL writes them: `b, c`.
fn column_names(def: &TableDef, index: &IndexDef) -> String {
    index
        .columns
        .iter()
        .map(|&c| def.columns[c].name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A key's values as a DETAIL writes them: `x, 1`.
fn key_text(tuple: Vec<&Value>, columns: &[usize]) -> String {
    columns
        .iter()
        .map(|&c| tuple[c].detail_text())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The name of a table's primary key index (and constraint).
pub fn primary_key_name(table: &str) -> String {
    format!("{table}_pkey")
}

/// The name PostgreSQL gives an unnamed index of `table` on `columns`: the first of
/// `<table>_<columns>_<label>`, `..._<label>1`, `..._<label>2`, ... that `taken` does not
/// refuse (`idx` for `CREATE INDEX`, `key` for a `UNIQUE` constraint).
pub fn choose_name(
    table: &str,
    columns: &[&str],
    label: &str,
    taken: impl Fn(&str) -> bool,
) -> String {
    let addition = name_addition(&distinct_column_names(columns));
    let base = label;
    let mut label = base.to_string();
    let mut pass = 0u32;
    loop {
        let name = object_name(table, &addition, &label);
        if !taken(&name) {
            return name;
        }
        pass += 1;
        label = format!("{base}{pass}");
    }
}

/// `ChooseIndexColumnNames`: each column's name, a repeated one numbered (`a`, `a1`, `a2`)
/// and cut so that the number fits.
fn distinct_column_names(columns: &[&str]) -> Vec<String> {
    let mut chosen: Vec<String> = Vec::with_capacity(columns.len());
    for &original in columns {
        let mut name = original.to_string();
        let mut number = 1u32;
        while chosen.contains(&name) {
            let suffix = number.to_string();
            let keep = clip(original, NAME_BYTES - suffix.len());
            name = format!("{}{suffix}", &original[..keep]);
            number += 1;
        }
        chosen.push(name);
    }
    chosen
}

/// `ChooseIndexNameAddition`: the column names joined by `_`, at most 63 bytes.
fn name_addition(columns: &[String]) -> String {
    let mut addition = String::new();
    for name in columns {
        if !addition.is_empty() {
            addition.push('_');
        }
        let room = NAME_BYTES.saturating_sub(addition.len());
        addition.push_str(&name[..clip(name, room)]);
        if addition.len() >= NAME_BYTES {
            break;
        }
    }
    addition
}

/// `makeObjectName`: `name1_name2_label`, the longer of the two names shortened byte by byte
/// until the whole fits in 63 bytes (never a character cut in half). Also how a `serial`
/// column's sequence is named (`<table>_<column>_seq`).
pub(super) fn object_name(name1: &str, name2: &str, label: &str) -> String {
    let overhead = label.len() + 1 + usize::from(!name2.is_empty());
    let available = NAME_BYTES.saturating_sub(overhead);
    let (mut keep1, mut keep2) = (name1.len(), name2.len());
    while keep1 + keep2 > available {
        if keep1 > keep2 {
            keep1 -= 1;
        } else {
            keep2 -= 1;
        }
    }
    let mut name = name1[..clip(name1, keep1)].to_string();
    if !name2.is_empty() {
        name.push('_');
        name.push_str(&name2[..clip(name2, keep2)]);
    }
    name.push('_');
    name.push_str(label);
    name
}

/// The longest prefix of `text` of at most `bytes` bytes that ends on a character boundary.
fn clip(text: &str, bytes: usize) -> usize {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_chosen_as_postgresql_chooses_them() {
        let none = |_: &str| false;
        assert_eq!(
            choose_name("locks", &["expires_at"], "idx", none),
            "locks_expires_at_idx"
        );
        assert_eq!(
            choose_name("locks", &["owner", "expires_at"], "idx", none),
            "locks_owner_expires_at_idx"
        );
        assert_eq!(choose_name("t3", &["a", "a"], "idx", none), "t3_a_a1_idx");
        assert_eq!(
            choose_name("t3", &["a", "b", "a"], "key", none),
            "t3_a_b_a1_key"
        );
        let taken = |name: &str| name == "locks_expires_at_idx" || name == "locks_expires_at_idx1";
        assert_eq!(
            choose_name("locks", &["expires_at"], "idx", taken),
            "locks_expires_at_idx2"
        );
    }

    #[test]
    fn long_names_are_cut_to_63_bytes_as_make_object_name_cuts_them() {
        // Measured on PostgreSQL 15: a 63-byte table name and a 58-byte column beside `d`.
        let table = "b".repeat(63);
        let column = "c".repeat(58);
        let name = choose_name(&table, &[&column, "d"], "idx", |_| false);
        assert_eq!(name, format!("{}_{}_idx", "b".repeat(29), "c".repeat(29)));
        assert_eq!(name.len(), NAME_BYTES);
        // A multi-byte character is never cut in half.
        let wide = "é".repeat(40);
        let name = choose_name(&wide, &["x"], "idx", |_| false);
        assert!(
            name.len() <= NAME_BYTES && name.ends_with("_x_idx"),
            "{name}"
        );
    }
}
