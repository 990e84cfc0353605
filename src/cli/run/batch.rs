//! Batches of runs (`run --runs N`, the tour's rows): the seeds, running them one by one, and
//! what is kept of them in bounded memory whatever N is (counts, min/median/max, a few seeds,
//! the traces saved as they go).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use leaselab_model::scenario::Scenario;
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::{RunReport, RunVerdict, SimConfig};

use super::{progress, real_error};
use crate::exit::UsageError;
use crate::shard::Shard;

/// The seeds of a batch: `first`, `first + 1`, ... `first + count - 1`, never wrapping past
/// the largest seed (`u64::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    /// The first seed.
    pub first: u64,
    /// How many (at least 1).
    pub count: u64,
}

impl Seeds {
    /// `count` seeds from `first`; refuses no runs and a range that would run past
    /// `u64::MAX` (seeds do not wrap around).
    pub fn new(first: u64, count: u64) -> Result<Seeds, UsageError> {
        if count == 0 {
            return Err(UsageError::new("--runs must be at least 1"));
        }
        if first.checked_add(count - 1).is_none() {
            return Err(UsageError::new(format!(
                "--seed {first} --runs {count}: the seeds would run past {} (the largest \
                 seed; seeds do not wrap around); use --runs {} or fewer, or a smaller --seed",
                u64::MAX,
                u64::MAX - first + 1
            )));
        }
        Ok(Seeds { first, count })
    }

    /// The last seed.
    pub fn last(&self) -> u64 {
        self.first + (self.count - 1)
    }

    /// Every seed, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> {
        let first = self.first;
        (0..self.count).map(move |offset| first + offset)
    }

    /// The seeds of `shard`, in order: those at positions K-1, K-1+N, ... of the batch.
    pub fn of_shard(&self, shard: Shard) -> impl Iterator<Item = u64> {
        let first = self.first;
        (shard.index - 1..self.count)
            .step_by(shard.count as usize)
            .map(move |offset| first + offset)
    }

    /// How many seeds `shard` runs.
    pub fn count_of_shard(&self, shard: Shard) -> u64 {
        let skip = shard.index - 1;
        if self.count > skip {
            (self.count - skip - 1) / shard.count + 1
        } else {
            0
        }
    }

    /// True when `seed` is one of `shard`'s.
    pub fn shard_owns(&self, shard: Shard, seed: u64) -> bool {
        seed >= self.first && seed <= self.last() && shard.owns(seed - self.first)
    }
}

/// Where the runs of a batch run.
#[derive(Clone, Debug)]
pub enum Runner {
    /// On the simulated network, with this configuration (its time limit), `threads` runs
    /// side by side (each run is one thread's alone; see [`for_each_run`]).
    Sim {
        /// The simulation's configuration.
        config: SimConfig,
        /// How many runs at once (at least 1).
        threads: usize,
    },
    /// Against real servers, one run at a time.
    Real(RealConfig),
}

/// How many simulated runs a batch runs side by side when `--threads` is not given: one per
/// core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most simulated runs side by side (`--threads`).
pub const MAX_THREADS: usize = 256;

/// `--threads K`, shared by the commands that run batches of seeds.
#[derive(Debug, Clone, clap::Args)]
pub struct ThreadsArgs {
    /// Simulated runs side by side, each wholly on one thread (default: one per core). The
    /// output is the same for any K: runs are reported in seed order. Real runs always run one
    /// at a time.
    #[arg(long, value_name = "K")]
    pub threads: Option<usize>,
}

impl ThreadsArgs {
    /// The thread count asked for, or one per core ([`check_threads`]).
    pub fn threads(&self) -> Result<usize, UsageError> {
        check_threads(self.threads.unwrap_or_else(default_threads))
    }
}

/// Refuses a `--threads` of 0 or more than [`MAX_THREADS`] (batches, and `check`'s and
/// `frontier`'s searches alike).
pub fn check_threads(threads: usize) -> Result<usize, UsageError> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(UsageError::new(format!(
            "--threads {threads}: use between 1 and {MAX_THREADS} threads (this machine has {})",
            default_threads()
        )));
    }
    Ok(threads)
}

/// Runs `scenario` once per seed of `shard` (every seed: [`Shard::WHOLE`]), handing each
/// report to `each` as soon as it is made (no report is kept here), in seed order. A progress
/// bar shows on a terminal. The first error (a real server that cannot be reached, or an error
/// of `each`) stops the batch.
///
/// Simulated runs with `threads` above 1 run side by side, each wholly on one worker thread
/// (a run's simulation is single-threaded and depends on its seed alone), and are handed to
/// `each` in seed order all the same: the batch's output is the same for any thread count.
pub fn for_each_run(
    scenario: &Scenario,
    seeds: Seeds,
    shard: Shard,
    runner: &Runner,
    mut each: impl FnMut(RunReport) -> Result<(), UsageError>,
) -> Result<(), UsageError> {
    let label = match runner {
        Runner::Sim { .. } => scenario.name.clone(),
        Runner::Real(_) => format!("{} (real)", scenario.name),
    };
    let bar = progress(seeds.count_of_shard(shard), &label);
    let mut deliver = |report: RunReport| -> Result<(), UsageError> {
        crate::cli::refuse_stopped_script()?;
        each(report)?;
        bar.inc(1);
        Ok(())
    };
    match runner {
        Runner::Sim { config, threads } => {
            let run = |seed| {
                leaselab_sim::run::run_with(scenario, seed, config).map_err(UsageError::from)
            };
            let threads = (*threads as u64).min(seeds.count_of_shard(shard)).max(1) as usize;
            crate::parallel::in_order(seeds.of_shard(shard), threads, &run, &mut deliver)?;
        }
        Runner::Real(config) => {
            for seed in seeds.of_shard(shard) {
                deliver(leaselab_sim::real::run(scenario, seed, config).map_err(real_error)?)?;
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// How many distinct values (or buckets) a [`Spread`] keeps before it coarsens.
pub const SPREAD_BUCKETS: usize = 2_048;

/// Min, median and max of a stream of values in bounded memory: exact counts per distinct
/// value while there are at most [`SPREAD_BUCKETS`] of them (counters take few), then counts
/// per bucket of a width that doubles as needed (the median is then known to within a
/// bucket, and said to be approximate). Min and max stay exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    count: u64,
    min: i64,
    max: i64,
    /// Bucket width (1: exact).
    width: i128,
    /// Bucket start -> how many values fell in it.
    buckets: BTreeMap<i128, u64>,
}

impl Spread {
    /// No values yet.
    pub fn new() -> Spread {
        Spread {
            width: 1,
            ..Spread::default()
        }
    }

    /// Adds a value.
    pub fn add(&mut self, value: i64) {
        if self.count == 0 {
            self.min = value;
            self.max = value;
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        self.count += 1;
        let width = self.width.max(1);
        *self
            .buckets
            .entry(i128::from(value).div_euclid(width) * width)
            .or_insert(0) += 1;
        self.coarsen();
    }

    /// Doubles the bucket width until at most [`SPREAD_BUCKETS`] buckets are left: the width
    /// is then the smallest power of two that keeps every value seen within the limit.
    fn coarsen(&mut self) {
        while self.buckets.len() > SPREAD_BUCKETS {
            self.width = self.width.max(1).saturating_mul(2);
            self.rebucket(self.width);
        }
    }

    /// Puts the counts into buckets of `width` (a power of two at least the current width:
    /// every old bucket lies inside one new bucket).
    fn rebucket(&mut self, width: i128) {
        let old = std::mem::take(&mut self.buckets);
        for (start, count) in old {
            *self
                .buckets
                .entry(start.div_euclid(width) * width)
                .or_insert(0) += count;
        }
    }

    /// Adds every value of `other`: the result is the spread of both streams' values, equal to
    /// the one made by adding them one by one (same width, same buckets), so a spread merged
    /// from shards is the unsharded one.
    pub fn merge(&mut self, other: &Spread) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            self.width = self.width.max(1);
            return;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let width = self.width.max(other.width).max(1);
        self.width = width;
        self.rebucket(width);
        for (start, count) in &other.buckets {
            *self
                .buckets
                .entry(start.div_euclid(width) * width)
                .or_insert(0) += count;
        }
        self.coarsen();
    }

    /// What a shard's output carries of this spread.
    pub fn parts(&self) -> SpreadParts {
        SpreadParts {
            count: self.count,
            min: self.min,
            max: self.max,
            width: self.width.max(1),
            buckets: self.buckets.iter().map(|(s, c)| (*s, *c)).collect(),
        }
    }

    /// The spread `parts` describe, checked: the width a power of two, each bucket aligned
    /// to it and holding values, no more than [`SPREAD_BUCKETS`] buckets, the counts adding
    /// up, min and max inside the buckets.
    pub fn from_parts(parts: &SpreadParts) -> Result<Spread, String> {
        let width = parts.width;
        if width < 1 || width.count_ones() != 1 {
            return Err(format!("width {width} is not a power of two"));
        }
        if parts.buckets.len() > SPREAD_BUCKETS {
            return Err(format!(
                "{} buckets, more than {SPREAD_BUCKETS}",
                parts.buckets.len()
            ));
        }
        let mut buckets = BTreeMap::new();
        let mut total: u64 = 0;
        for &(start, count) in &parts.buckets {
            if start.rem_euclid(width) != 0 || count == 0 || buckets.insert(start, count).is_some()
            {
                return Err(format!("bucket {start} (of {count} values) is not valid"));
            }
            total = total
                .checked_add(count)
                .ok_or_else(|| "the bucket counts overflow".to_string())?;
        }
        if total != parts.count {
            return Err(format!(
                "the buckets hold {total} values, but count says {}",
                parts.count
            ));
        }
        if let (Some(first), Some(last)) = (buckets.keys().next(), buckets.keys().next_back()) {
            let (min, max) = (i128::from(parts.min), i128::from(parts.max));
            if min > max
                || min.div_euclid(width) * width != *first
                || max.div_euclid(width) * width != *last
            {
                return Err(format!(
                    "min {} and max {} do not match the buckets",
                    parts.min, parts.max
                ));
            }
        }
        Ok(Spread {
            count: parts.count,
            min: parts.min,
            max: parts.max,
            width,
            buckets,
        })
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value (0 when there is none).
    pub fn min(&self) -> i64 {
        self.min
    }

    /// The largest value (0 when there is none).
    pub fn max(&self) -> i64 {
        self.max
    }

    /// True while the median is exact.
    pub fn exact(&self) -> bool {
        self.width <= 1
    }

    /// The median: the value at index `count / 2` of the sorted values (the upper one of the
    /// two middle values); when not [`Spread::exact`], the middle of its bucket, within
    /// min..=max. 0 when there is none.
    pub fn median(&self) -> i64 {
        if self.count == 0 {
            return 0;
        }
        let index = self.count / 2;
        let mut seen = 0;
        for (start, count) in &self.buckets {
            seen += count;
            if seen > index {
                let middle = start + (self.width - 1) / 2;
                return middle.clamp(i128::from(self.min), i128::from(self.max)) as i64;
            }
        }
        self.max
    }

    /// The median as printed: `~` before an approximate one.
    pub fn median_text(&self) -> String {
        if self.exact() {
            self.median().to_string()
        } else {
            format!("~{}", self.median())
        }
    }
}

/// A [`Spread`] as a shard's JSON carries it: enough to merge shards exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpreadParts {
    /// How many values.
    pub count: u64,
    /// The smallest value.
    pub min: i64,
    /// The largest value.
    pub max: i64,
    /// The bucket width (a power of two; 1: every value kept exactly).
    pub width: i128,
    /// Each bucket's start and how many values fell in it, in order.
    pub buckets: Vec<(i128, u64)>,
}

/// Seeds kept for a summary: the first [`Self::LIMIT`], and how many more there were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeedList {
    /// The first seeds.
    pub seeds: Vec<u64>,
    /// How many more were not kept.
    pub more: u64,
}

impl SeedList {
    /// How many seeds are kept.
    pub const LIMIT: usize = 100;

    /// Adds a seed.
    pub fn push(&mut self, seed: u64) {
        if self.seeds.len() < Self::LIMIT {
            self.seeds.push(seed);
        } else {
            self.more += 1;
        }
    }

    /// How many seeds in all.
    pub fn total(&self) -> u64 {
        self.seeds.len() as u64 + self.more
    }

    /// The list of a batch made of disjoint parts: the first seeds of all of them (a part
    /// keeps its own first seeds, so the first [`Self::LIMIT`] of the whole are among them),
    /// and how many more there were.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a SeedList>) -> SeedList {
        let mut seeds = Vec::new();
        let mut total = 0;
        for part in parts {
            seeds.extend_from_slice(&part.seeds);
            total += part.total();
        }
        seeds.sort_unstable();
        seeds.truncate(Self::LIMIT);
        let more = total - seeds.len() as u64;
        SeedList { seeds, more }
    }

    /// `3 8 12` or `3 8 12 ... and 40 more`.
    pub fn text(&self) -> String {
        let mut text: Vec<String> = self.seeds.iter().map(u64::to_string).collect();
        if self.more > 0 {
            text.push(format!("... and {} more", self.more));
        }
        text.join(" ")
    }
}

/// Saves BROKEN runs as traces while a batch runs: by default the first BROKEN run of each
/// group (the command, or a tour row), with `all` every one. The directory is checked before
/// anything runs ([`TraceSaver::new`]); a write that fails later stops saving and is
/// reported, without hiding the verdict.
#[derive(Debug)]
pub struct TraceSaver {
    dir: Option<PathBuf>,
    all: bool,
    /// OK runs are saved too.
    ok: bool,
    saved_in_group: bool,
    /// Every trace saved, in order (the first few paths; the rest counted).
    pub saved: Vec<PathBuf>,
    /// How many traces were saved in all.
    pub saved_count: u64,
    /// BROKEN runs not saved because one of their group was saved already.
    pub not_saved: u64,
    /// Why saving stopped, if it did.
    pub error: Option<String>,
}

impl TraceSaver {
    /// How many saved paths are kept for the output.
    pub const LISTED: usize = 20;

    /// A saver into `dir` (none: saving is off), which must be a directory that can be
    /// created and written to: checked now, before any run.
    pub fn new(dir: Option<&Path>, all: bool) -> Result<TraceSaver, UsageError> {
        if let Some(dir) = dir {
            probe_dir(dir)?;
        }
        Ok(TraceSaver {
            dir: dir.map(Path::to_path_buf),
            all,
            ok: false,
            saved_in_group: false,
            saved: Vec::new(),
            saved_count: 0,
            not_saved: 0,
            error: None,
        })
    }

    /// Saves OK runs too (`run --save-ok-traces`), under the same first-or-all rule.
    pub fn with_ok(mut self, ok: bool) -> TraceSaver {
        self.ok = ok;
        self
    }

    /// The directory traces go to, if saving is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Starts a new group (a tour row): its first BROKEN run is saved again.
    pub fn start_group(&mut self) {
        self.saved_in_group = false;
    }

    /// Saves `report` if it is BROKEN (or OK, with `with_ok`) and due (the first of its
    /// group, or every one with `all`); returns the path when it did.
    pub fn offer(&mut self, report: &RunReport) -> Option<PathBuf> {
        let ok_and_wanted = self.ok && report.verdict() == RunVerdict::Ok;
        if !(report.broken() || ok_and_wanted) {
            return None;
        }
        let dir = self.dir.as_ref()?;
        if self.error.is_some() {
            return None;
        }
        if self.saved_in_group && !self.all {
            self.not_saved += 1;
            return None;
        }
        match crate::trace::save_trace(report, dir) {
            Ok(path) => {
                self.saved_in_group = true;
                self.saved_count += 1;
                if self.saved.len() < Self::LISTED {
                    self.saved.push(path.clone());
                }
                Some(path)
            }
            Err(error) => {
                self.error = Some(format!(
                    "--save-traces {}: cannot write a trace: {error}; no more traces are saved",
                    dir.display()
                ));
                None
            }
        }
    }
}

/// Checks that `dir` can hold traces: creates it (and its parents), writes and removes a
/// small file, then removes again what it created, so that a command that saves nothing
/// leaves nothing behind. The error names the directory, the reason and the way out.
pub fn probe_dir(dir: &Path) -> Result<(), UsageError> {
    let refuse = |why: String| {
        UsageError::new(format!(
            "--save-traces {}: {why}; choose a directory you can write to, or pass \
             --no-save-traces",
            dir.display()
        ))
    };
    let mut missing = Vec::new();
    let mut ancestor = Some(dir);
    while let Some(path) = ancestor {
        if path.as_os_str().is_empty() || path.exists() {
            break;
        }
        missing.push(path.to_path_buf());
        ancestor = path.parent();
    }
    std::fs::create_dir_all(dir)
        .map_err(|error| refuse(format!("cannot create the directory: {error}")))?;
    if !dir.is_dir() {
        return Err(refuse("not a directory".to_string()));
    }
    let probe = dir.join(format!(".leaselab-probe-{}", std::process::id()));
    let written = std::fs::write(&probe, b"probe");
    let _ = std::fs::remove_file(&probe);
    // Deepest first; a directory that is not empty (someone else's) stays.
    for path in &missing {
        let _ = std::fs::remove_dir(path);
    }
    written.map_err(|error| refuse(format!("cannot write there: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_run_up_to_the_largest_and_never_wrap() {
        let seeds = Seeds::new(u64::MAX, 1).unwrap();
        assert_eq!(seeds.iter().collect::<Vec<_>>(), vec![u64::MAX]);
        let seeds = Seeds::new(u64::MAX - 2, 3).unwrap();
        assert_eq!(seeds.last(), u64::MAX);
        assert_eq!(seeds.iter().count(), 3);
        let error = Seeds::new(u64::MAX, 2).unwrap_err();
        assert!(error.message.contains("do not wrap"), "{}", error.message);
        assert!(
            error.message.contains("--runs 1 or fewer"),
            "{}",
            error.message
        );
        assert!(Seeds::new(2, u64::MAX).is_err());
        assert_eq!(Seeds::new(1, u64::MAX).unwrap().last(), u64::MAX);
        assert!(Seeds::new(1, 0).is_err());
    }

    #[test]
    fn a_spread_of_few_values_is_exact() {
        let mut spread = Spread::new();
        for value in [5, 1, 9, 1, 7] {
            spread.add(value);
        }
        // Sorted: 1 1 5 7 9; index 5 / 2 = 2.
        assert_eq!((spread.min(), spread.median(), spread.max()), (1, 5, 9));
        assert!(spread.exact());
        assert_eq!(spread.median_text(), "5");
        let mut even = Spread::new();
        for value in [4, 1, 3, 2] {
            even.add(value);
        }
        assert_eq!(even.median(), 3);
        assert_eq!(Spread::new().median(), 0);
    }

    #[test]
    fn a_spread_of_many_distinct_values_stays_bounded_and_close() {
        let mut spread = Spread::new();
        // 0..100_000 shuffled by a stride coprime to the length.
        let n: i64 = 100_000;
        for i in 0..n {
            spread.add((i * 7_919) % n);
        }
        assert!(spread.buckets.len() <= SPREAD_BUCKETS);
        assert_eq!((spread.min(), spread.max()), (0, n - 1));
        assert!(!spread.exact());
        let error = (spread.median() - n / 2).abs();
        assert!(
            error <= n / SPREAD_BUCKETS as i64 * 2,
            "{}",
            spread.median()
        );
        assert!(spread.median_text().starts_with('~'));
        let mut extremes = Spread::new();
        for value in [i64::MIN, i64::MAX, 0] {
            extremes.add(value);
        }
        assert_eq!(
            (extremes.min(), extremes.median(), extremes.max()),
            (i64::MIN, 0, i64::MAX)
        );
    }

    #[test]
    fn shards_of_a_batch_hold_each_seed_once() {
        let seeds = Seeds::new(5, 11).unwrap();
        for count in 1..=13 {
            let mut all: Vec<u64> = Vec::new();
            for index in 1..=count {
                let shard = Shard { index, count };
                let part: Vec<u64> = seeds.of_shard(shard).collect();
                assert_eq!(part.len() as u64, seeds.count_of_shard(shard));
                assert!(part.iter().all(|&seed| seeds.shard_owns(shard, seed)));
                all.extend(part);
            }
            all.sort_unstable();
            assert_eq!(all, seeds.iter().collect::<Vec<_>>(), "{count} shards");
        }
        assert!(!seeds.shard_owns(Shard::WHOLE, 4));
        assert!(!seeds.shard_owns(Shard::WHOLE, 16));
    }

    #[test]
    fn spreads_merged_from_parts_equal_the_whole() {
        // Few values (exact) and many (coarsened), split round robin into 1 to 4 parts.
        for n in [7i64, 100_000] {
            let values: Vec<i64> = (0..n).map(|i| (i * 7_919) % n - n / 3).collect();
            let mut whole = Spread::new();
            values.iter().for_each(|&v| whole.add(v));
            for parts in 1..=4usize {
                let mut merged = Spread::new();
                for part in 0..parts {
                    let mut spread = Spread::new();
                    for v in values.iter().skip(part).step_by(parts) {
                        spread.add(*v);
                    }
                    let spread = Spread::from_parts(&spread.parts()).unwrap();
                    merged.merge(&spread);
                }
                assert_eq!(merged, whole, "{n} values in {parts} parts");
                assert_eq!(merged.median_text(), whole.median_text());
            }
        }
        let mut empty = Spread::new();
        empty.merge(&Spread::new());
        assert_eq!(empty.count(), 0);
    }

    #[test]
    fn bad_spread_parts_are_refused() {
        let mut spread = Spread::new();
        [3, 5, 5].iter().for_each(|&v| spread.add(v));
        let good = spread.parts();
        assert!(Spread::from_parts(&good).is_ok());
        let mut bad = good.clone();
        bad.width = 3;
        assert!(Spread::from_parts(&bad)
            .unwrap_err()
            .contains("power of two"));
        let mut bad = good.clone();
        bad.count = 4;
        assert!(Spread::from_parts(&bad)
            .unwrap_err()
            .contains("count says 4"));
        let mut bad = good;
        bad.min = 4;
        assert!(Spread::from_parts(&bad)
            .unwrap_err()
            .contains("do not match"));
    }

    #[test]
    fn merged_seed_lists_keep_the_first_of_the_whole() {
        let (mut a, mut b, mut whole) = (
            SeedList::default(),
            SeedList::default(),
            SeedList::default(),
        );
        for seed in 1..=300 {
            whole.push(seed);
            if seed % 2 == 0 {
                a.push(seed)
            } else {
                b.push(seed)
            }
        }
        assert_eq!(SeedList::merged([&a, &b]), whole);
    }

    #[test]
    fn seed_lists_keep_the_first_and_count_the_rest() {
        let mut list = SeedList::default();
        for seed in 1..=150 {
            list.push(seed);
        }
        assert_eq!(list.seeds.len(), SeedList::LIMIT);
        assert_eq!(list.total(), 150);
        assert!(list.text().ends_with("100 ... and 50 more"));
    }

    #[test]
    fn an_unwritable_directory_is_refused_and_a_new_one_left_as_found() {
        let error = probe_dir(Path::new("/proc/leaselab-no/such")).unwrap_err();
        assert!(
            error.message.contains("/proc/leaselab-no/such"),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("--no-save-traces"),
            "{}",
            error.message
        );
        let base = std::env::temp_dir().join(format!("leaselab-probe-test-{}", std::process::id()));
        let dir = base.join("a/b");
        probe_dir(&dir).unwrap();
        assert!(!base.exists(), "the probe removes what it created");
        std::fs::write(&base, b"a file").unwrap();
        assert!(probe_dir(&base).is_err());
        std::fs::remove_file(&base).unwrap();
    }
}
