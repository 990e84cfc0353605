//! Indexes: `CREATE INDEX` and `DROP INDEX` as a user's schema has them.
//!
//! The stand-in scans its rows, so a plain index changes no answer; what it changes is the
//! catalogue: an index is a relation, so its name is taken for tables and sequences too (and a
//! table's primary key is the index `<table>_pkey`), it goes with its table, and `DROP TABLE`,
//! `DROP SEQUENCE` and `DROP INDEX` each refuse the others' objects. A name PostgreSQL chooses
//! (`CREATE INDEX ON locks (expires_at)`) is chosen as its `ChooseRelationName` does:
//! `locks_expires_at_idx`, then `..._idx1`, `..._idx2`, cut to 63 bytes as `makeObjectName`
//! cuts it.

/// The longest name PostgreSQL keeps, in bytes (`NAMEDATALEN - 1`).
pub const NAME_BYTES: usize = 63;

/// An index of a table: its name and its columns (by position in the table), in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexDef {
    /// The index name.
    pub name: String,
    /// The indexed columns.
    pub columns: Vec<usize>,
}

/// The name of a table's primary key index (and constraint).
pub fn primary_key_name(table: &str) -> String {
    format!("{table}_pkey")
}

/// The name PostgreSQL gives an unnamed index of `table` on `columns`: the first of
/// `<table>_<columns>_idx`, `..._idx1`, `..._idx2`, ... that `taken` does not refuse.
pub fn choose_name(table: &str, columns: &[&str], taken: impl Fn(&str) -> bool) -> String {
    let addition = name_addition(&distinct_column_names(columns));
    let mut label = "idx".to_string();
    let mut pass = 0u32;
    loop {
        let name = object_name(table, &addition, &label);
        if !taken(&name) {
            return name;
        }
        pass += 1;
        label = format!("idx{pass}");
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
/// until the whole fits in 63 bytes (never a character cut in half).
fn object_name(name1: &str, name2: &str, label: &str) -> String {
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
            choose_name("locks", &["expires_at"], none),
            "locks_expires_at_idx"
        );
        assert_eq!(
            choose_name("locks", &["owner", "expires_at"], none),
            "locks_owner_expires_at_idx"
        );
        assert_eq!(choose_name("t3", &["a", "a"], none), "t3_a_a1_idx");
        assert_eq!(choose_name("t3", &["a", "b", "a"], none), "t3_a_b_a1_idx");
        let taken = |name: &str| name == "locks_expires_at_idx" || name == "locks_expires_at_idx1";
        assert_eq!(
            choose_name("locks", &["expires_at"], taken),
            "locks_expires_at_idx2"
        );
    }

    #[test]
    fn long_names_are_cut_to_63_bytes_as_make_object_name_cuts_them() {
        // Measured on PostgreSQL 15: a 63-byte table name and a 58-byte column beside `d`.
        let table = "b".repeat(63);
        let column = "c".repeat(58);
        let name = choose_name(&table, &[&column, "d"], |_| false);
        assert_eq!(name, format!("{}_{}_idx", "b".repeat(29), "c".repeat(29)));
        assert_eq!(name.len(), NAME_BYTES);
        // A multi-byte character is never cut in half.
        let wide = "é".repeat(40);
        let name = choose_name(&wide, &["x"], |_| false);
        assert!(
            name.len() <= NAME_BYTES && name.ends_with("_x_idx"),
            "{name}"
        );
    }
}
