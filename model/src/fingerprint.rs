//! State fingerprints: a fast 64-bit hash that is the same on every machine and every run.
//!
//! Integers are mixed as values (not as native-endian bytes) and byte strings are read
//! little-endian, so a fingerprint does not depend on the platform. Two different states
//! share a fingerprint with probability about 2⁻⁶⁴ per pair; the checker treats states with
//! equal fingerprints as equal, as stateright does.

use std::hash::{BuildHasherDefault, Hash, Hasher};

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// A streaming hasher: each word is folded in with a multiply-xor-rotate step, and the result
/// goes through a full avalanche when finished. Words go alternately into two lanes (each
/// word is folded into the lane of two words before, and the lanes swap), so two chains of
/// multiplications run side by side instead of one twice as long.
#[derive(Clone, Copy, Debug, Default)]
pub struct FingerprintHasher {
    /// The lane the next word goes into.
    next: u64,
    /// The other lane.
    other: u64,
    count: u64,
}

impl FingerprintHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.count = self.count.wrapping_add(1);
        let folded = (word ^ self.next.rotate_left(23)).wrapping_mul(K);
        self.next = self.other;
        self.other = folded ^ (folded >> 29) ^ self.count;
    }
}

impl Hasher for FingerprintHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.mix(n as u64);
        self.mix((n >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_i8(&mut self, n: i8) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_i16(&mut self, n: i16) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_i32(&mut self, n: i32) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_isize(&mut self, n: isize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The lanes joined (each through a multiplication, so neither cancels the other),
        // then splitmix64's finaliser.
        let lanes = self.next.wrapping_mul(K) ^ self.other.rotate_left(32).wrapping_mul(!K);
        let mut z = lanes ^ self.count.wrapping_mul(K);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The fingerprint of a value.
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FingerprintHasher::default();
    value.hash(&mut hasher);
    hasher.finish()
}

/// A hasher for maps keyed by fingerprints: the key already is a good hash.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`PassThrough`] hashers.
pub type BuildPassThrough = BuildHasherDefault<PassThrough>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_agree_and_different_ones_differ() {
        let value = (1u8, 2u64, b"lock".to_vec());
        assert_eq!(fingerprint(&value), fingerprint(&value.clone()));
        assert_ne!(fingerprint(&(1u64, 2u64)), fingerprint(&(2u64, 1u64)));
        assert_ne!(fingerprint(&b"ab".to_vec()), fingerprint(&b"ba".to_vec()));
        assert_ne!(fingerprint(&vec![0u8; 8]), fingerprint(&vec![0u8; 9]));
    }
}
