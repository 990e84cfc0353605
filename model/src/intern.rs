//! Texts from safeguard files (Lua scripts, SQL statements), interned once per process.
//!
//! A user's safeguard carries its scripts and statements as [`TextId`]s: four bytes that
//! hash and compare in constant time, so the model checker's states stay cheap however long
//! the script. The text behind an id lives for the rest of the process (a file's few texts,
//! each stored once however often it is interned: the table is bounded by the distinct texts
//! loaded).
//!
//! Ids never leave the process: traces store the texts themselves, so an id's number only
//! depends on the order texts were loaded in, never on anything saved.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use sha1::{Digest, Sha1};

/// How many distinct texts a process may intern (a guard against a loop loading files).
pub const MAX_TEXTS: usize = 65_536;

/// An interned text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextId(u32);

/// One interned text, with what is asked of it often.
#[derive(Debug)]
pub struct Interned {
    /// A short name for people (e.g. `my-lock/acquire`): the first name it was interned under.
    pub name: &'static str,
    /// The text.
    pub text: &'static str,
    /// The SHA1 of the text in lower-case hex (a script's name in Redis).
    pub sha1_hex: &'static str,
    /// The SHA1 as 20 bytes.
    pub digest: [u8; 20],
}

#[derive(Default)]
struct Table {
    by_text: BTreeMap<&'static str, TextId>,
    texts: Vec<&'static Interned>,
}

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(Table::default()))
}

/// A text that could not be interned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooManyTexts;

impl std::fmt::Display for TooManyTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {MAX_TEXTS} distinct scripts and statements loaded"
        )
    }
}

/// Interns `text` under `name` (the name of its first interning is kept).
pub fn intern(name: &str, text: &str) -> Result<TextId, TooManyTexts> {
    let mut table = table()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&id) = table.by_text.get(text) {
        return Ok(id);
    }
    if table.texts.len() >= MAX_TEXTS {
        return Err(TooManyTexts);
    }
    let digest: [u8; 20] = Sha1::digest(text.as_bytes()).into();
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let interned: &'static Interned = Box::leak(Box::new(Interned {
        name: leak(name.to_string()),
        text: leak(text.to_string()),
        sha1_hex: leak(hex::encode(digest)),
        digest,
    }));
    let id = TextId(u32::try_from(table.texts.len()).expect("bounded by MAX_TEXTS"));
    table.texts.push(interned);
    table.by_text.insert(interned.text, id);
    Ok(id)
}

/// The text behind an id.
pub fn get(id: TextId) -> &'static Interned {
    let table = table()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    table.texts[id.0 as usize]
}

/// A name for a column or command tag that must be `&'static str` (interned like a text).
pub fn static_str(text: &str) -> &'static str {
    match intern(text, text) {
        Ok(id) => get(id).text,
        Err(TooManyTexts) => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_one_id_and_keeps_its_first_name() {
        let a = intern("a", "return 1 -- intern test").unwrap();
        let b = intern("b", "return 1 -- intern test").unwrap();
        let c = intern("c", "return 2 -- intern test").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(get(a).name, "a");
        assert_eq!(get(c).text, "return 2 -- intern test");
        assert_eq!(
            get(a).sha1_hex,
            hex::encode(Sha1::digest(b"return 1 -- intern test"))
        );
    }
}
