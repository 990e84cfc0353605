//! Shards: one part of a command's work, so that N machines together do what one would.
//!
//! `--shard K/N` gives shard K of N the items (seeds of `run --runs`, rows of `tour`, checks
//! of `check --suite`, cells of `matrix`) whose 0-based position `i` in the unsharded order
//! has `i % N == K - 1`. The N shards are disjoint and together hold every item exactly
//! once; the round robin spreads slow and fast neighbours over the shards. `leaselab merge`
//! puts their `--json` outputs back together (`crate::cli::merge`).

use serde::{Deserialize, Serialize};

/// The most shards a command may be split into.
pub const MAX_SHARDS: u64 = 10_000;

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 1.
    pub index: u64,
    /// How many shards in all.
    pub count: u64,
}

impl Shard {
    /// The whole work as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// `K/N` with 1 ≤ K ≤ N ≤ [`MAX_SHARDS`]; the error says what is wrong and what to write.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let usage = |why: &str| {
            format!("'{text}': {why}; write K/N with 1 <= K <= N, e.g. --shard 1/4 ... --shard 4/4")
        };
        let (index, count) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| usage("not of the form K/N"))?;
        let number = |part: &str, name: &str| {
            part.trim()
                .parse::<u64>()
                .map_err(|_| usage(&format!("{name} is not a whole number")))
        };
        let index = number(index, "K")?;
        let count = number(count, "N")?;
        if count == 0 {
            return Err(usage("N must be at least 1"));
        }
        if count > MAX_SHARDS {
            return Err(usage(&format!("N must be at most {MAX_SHARDS}")));
        }
        if index == 0 || index > count {
            return Err(usage(&format!("K must be between 1 and N ({count})")));
        }
        Ok(Shard { index, count })
    }

    /// True when the item at 0-based `position` of the unsharded order is this shard's.
    pub fn owns(&self, position: u64) -> bool {
        debug_assert!(1 <= self.index && self.index <= self.count);
        position % self.count == self.index - 1
    }

    /// `K/N`.
    pub fn text(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// The `--shard K/N` flag, shared by every command that can be split.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct ShardArgs {
    /// Take only shard K of N of the work (K/N, e.g. 2/4): a deterministic, disjoint part;
    /// the N shards' `--json` outputs, given to `leaselab merge`, make the unsharded result.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
}

impl ShardArgs {
    /// The shard, or the whole work.
    pub fn shard(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        for count in 1..=7u64 {
            for position in 0..50u64 {
                let owners = (1..=count)
                    .filter(|&index| Shard { index, count }.owns(position))
                    .count();
                assert_eq!(owners, 1, "position {position} of {count} shards");
            }
        }
    }

    #[test]
    fn bad_shards_say_what_to_write() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse(" 1/1 "), Ok(Shard::WHOLE));
        for (text, needle) in [
            ("0/4", "K must be between 1 and N (4)"),
            ("5/4", "K must be between 1 and N (4)"),
            ("1/0", "N must be at least 1"),
            ("3", "not of the form K/N"),
            ("a/4", "K is not a whole number"),
            ("1/-2", "N is not a whole number"),
            ("1/20000", "at most 10000"),
        ] {
            let error = Shard::parse(text).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
            assert!(error.contains("write K/N"), "{text}: {error}");
        }
    }
}
