//! Redis Cluster hash slots.
//!
//! The stand-in is a single node that owns every slot, so the only cluster behaviour it shows is
//! the slot check: with cluster mode on, a command or script whose keys hash to different slots
//! is refused with [`CROSSSLOT_ERROR`] (checked against a real Redis 7.0 cluster node).

/// The number of hash slots.
pub const SLOT_COUNT: u16 = 16384;

/// The error a cluster node sends for a command whose keys are in different slots.
pub const CROSSSLOT_ERROR: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// The hash slot of a key: CRC16 (XMODEM) of the hash tag (the text between the first `{` and
/// the next `}`, when non-empty) or of the whole key, modulo 16384.
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = hash_tag(key).unwrap_or(key);
    crc16_xmodem(hashed) & (SLOT_COUNT - 1)
}

/// The hash tag of a key: the bytes between the first `{` and the first `}` after it, when
/// there are any. `foo{}{bar}` has none (the first pair is empty), `foo{{bar}}` has `{bar`.
pub fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let after_open = &key[open + 1..];
    let close = after_open.iter().position(|&b| b == b'}')?;
    if close == 0 {
        return None;
    }
    Some(&after_open[..close])
}

/// True when every key hashes to the same slot (also for no keys or one key).
pub fn same_slot<K: AsRef<[u8]>>(keys: &[K]) -> bool {
    let mut slots = keys.iter().map(|key| key_slot(key.as_ref()));
    match slots.next() {
        None => true,
        Some(first) => slots.all(|slot| slot == first),
    }
}

/// CRC16 with the XMODEM parameters (polynomial 0x1021, initial value 0, no reflection), as
/// Redis Cluster uses it.
fn crc16_xmodem(data: &[u8]) -> u16 {
    const POLYNOMIAL: u16 = 0x1021;
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ POLYNOMIAL
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots reported by `CLUSTER KEYSLOT` on a real Redis 7.0.15 node.
    #[test]
    fn slots_match_real_redis() {
        let cases: [(&str, u16); 15] = [
            ("foo", 12182),
            ("bar", 5061),
            ("{user1000}.following", 3443),
            ("{user1000}.followers", 3443),
            ("foo{}{bar}", 8363),
            ("foo{{bar}}zap", 4015),
            ("foo{bar}{zap}", 5061),
            ("{}", 15257),
            ("", 0),
            ("lock:{wallet:42}", 2746),
            ("fence:{wallet:42}", 2746),
            ("lock:wallet:42", 10000),
            ("123456789", 12739),
            ("{", 4092),
            ("a{b", 13340),
        ];
        for (key, slot) in cases {
            assert_eq!(key_slot(key.as_bytes()), slot, "slot of {key:?}");
        }
    }

    #[test]
    fn crc16_check_value() {
        // The XMODEM check value: CRC of "123456789" is 0x31C3.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
    }

    #[test]
    fn hash_tag_rules() {
        assert_eq!(hash_tag(b"lock:{wallet:42}"), Some(&b"wallet:42"[..]));
        assert_eq!(hash_tag(b"foo{}{bar}"), None);
        assert_eq!(hash_tag(b"foo{{bar}}"), Some(&b"{bar"[..]));
        assert_eq!(hash_tag(b"no-tag"), None);
        assert_eq!(hash_tag(b"open{only"), None);
    }

    #[test]
    fn same_slot_of_tagged_keys() {
        assert!(same_slot(&[
            b"lock:{w}".as_slice(),
            b"fence:{w}".as_slice()
        ]));
        assert!(!same_slot(&[b"lock:w".as_slice(), b"fence:w".as_slice()]));
        assert!(same_slot::<&[u8]>(&[]));
    }
}
