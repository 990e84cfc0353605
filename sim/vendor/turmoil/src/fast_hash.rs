//! A fixed, fast hasher for the maps `Sim::step` reads on every step (a leaselab change, see
//! PATCH.md): the hosts, their runtimes, the links and a link's queues per host, all keyed by
//! IP addresses. `IndexMap` iterates in insertion order whatever the hasher, so swapping
//! SipHash with a random key for this one changes no run; it only makes each look-up cheaper.

use std::hash::{BuildHasherDefault, Hasher};

/// The Fx hash (rustc's): a rotate, a xor and a multiply per word.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The map takes its control bytes from the top bits: fold the low ones in.
        self.hash.rotate_left(26)
    }
}

/// An `IndexMap` with [`FxHasher`].
pub(crate) type FastMap<K, V> = indexmap::IndexMap<K, V, BuildHasherDefault<FxHasher>>;
