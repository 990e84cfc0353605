//! Byte strings in serialised data: as text when they are UTF-8 (keys, tokens, numbers, as
//! people read them), as an array of byte values otherwise, so nothing is lost either way.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

/// Serialises `bytes` as a string when it is UTF-8, else as an array of byte values.
pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serializer.serialize_str(text),
        Err(_) => serializer.collect_seq(bytes),
    }
}

/// Reads what [`serialize`] wrote.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_any(BytesVisitor)
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string or an array of byte values")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Vec<u8>, E> {
        Ok(text.as_bytes().to_vec())
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        Ok(bytes)
    }
}

/// The same for a list of byte strings.
pub mod list {
    use serde::de::Deserializer;
    use serde::ser::{SerializeSeq, Serializer};
    use serde::Deserialize;

    /// One byte string of a list.
    #[derive(serde::Serialize, Deserialize)]
    #[serde(transparent)]
    struct Item(#[serde(with = "super")] Vec<u8>);

    /// Serialises each byte string as [`super::serialize`] does.
    pub fn serialize<S: Serializer>(list: &[Vec<u8>], serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(list.len()))?;
        for bytes in list {
            seq.serialize_element(&Item(bytes.clone()))?;
        }
        seq.end()
    }

    /// Reads what [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Vec<u8>>, D::Error> {
        let items = Vec::<Item>::deserialize(deserializer)?;
        Ok(items.into_iter().map(|item| item.0).collect())
    }
}
