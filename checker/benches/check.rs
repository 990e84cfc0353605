//! The exhaustive checker's throughput and memory on the 3-caller fenced-cas proof.
//!
//! `cargo bench -p leaselab-checker --bench check`, optionally followed by
//! `-- --threads 1,2 --callers 3 --no-symmetry`; `-- --frontier` times instead the sweeps
//! `leaselab frontier --safeguard lease-watchdog --ttl 3..4 --work 2` and `--ttl 3..6 --work 4`
//! run (the same library call, one thread). For each thread count it runs the search twice:
//! once timed, printing the unique states found, the wall and CPU time (the process's user +
//! system time, which a loaded machine disturbs far less than wall time) and unique states
//! per second of each; once with every allocation counted, printing the heap's peak during
//! the search divided by the unique states: the bytes each stored state cost (the visited
//! set, the path records, and the two levels of states held at a time). Counting costs a
//! shared atomic update per allocation, which two threads contend for, so the timed run
//! counts nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Instant;

use leaselab_checker::bfs::Counters;
use leaselab_checker::{
    run, CheckConfig, LeaseModel, PropertyVerdict, RunOptions, Strategy, LEDGER,
};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::Safeguard;

/// The system allocator, counting the bytes in use and their peak while [`COUNTING`] is on.
struct Counting;

/// Whether allocations are counted now (off while a search is timed).
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Bytes allocated less bytes freed since counting started (a block allocated before and
/// freed during counting makes it smaller, so it may dip below zero).
static IN_USE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let size = size as isize;
        let now = IN_USE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

fn shrank(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        IN_USE.fetch_sub(size as isize, Ordering::Relaxed);
    }
}

/// Runs `f` with every allocation counted; the heap's peak above where it started, in bytes.
fn heap_peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    IN_USE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::SeqCst);
    let result = f();
    COUNTING.store(false, Ordering::SeqCst);
    (result, PEAK.load(Ordering::Relaxed).max(0) as usize)
}

// SAFETY: every call is forwarded to `System` with the same arguments; the counters are
// only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The process's user + system CPU time so far, in seconds (Linux: `/proc/self/stat`, in
/// clock ticks of 1/100 s; none elsewhere).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Times the watchdog's frontier sweeps as `leaselab frontier` runs them.
fn frontier() {
    use leaselab_checker::frontier::sweep;
    for (ttls, works) in [(vec![3, 4], vec![2]), (vec![3, 4, 5, 6], vec![4])] {
        let base = CheckConfig::new(Safeguard::LeaseWatchdog);
        // One run, timed and counted at once (a sweep takes long enough that running it
        // twice would double the bench; counting costs one thread about a tenth).
        let cpu_start = cpu_seconds();
        let start = Instant::now();
        let (table, peak) = heap_peak_of(|| {
            sweep(
                base,
                &ttls,
                &works,
                RunOptions {
                    strategy: Strategy::Bfs,
                    threads: 1,
                    max_unique: Some(10_000_000),
                    stop_at_violation: true,
                    stop_once_found: &[],
                },
                &Counters::default(),
                |_, _| {},
                |cell| {
                    println!(
                        "  TTL {} work {}: {} ({} check(s), {} states) after {:.1}s wall",
                        cell.ttl_ticks,
                        cell.work_ticks,
                        cell.boundary.cell(),
                        cell.checks,
                        cell.unique_states,
                        start.elapsed().as_secs_f64()
                    );
                },
            )
            .expect("valid cells")
        });
        let cpu = cpu_start.and_then(|s| cpu_seconds().map(|e| e - s));
        println!(
            "frontier lease-watchdog --ttl {ttls:?} --work {works:?}: {:.1}s wall, {} CPU, heap peak {:.1} MiB (allocations counted while timed)",
            start.elapsed().as_secs_f64(),
            cpu.map_or_else(|| "unknown".to_string(), |c| format!("{c:.1}s")),
            peak as f64 / (1024.0 * 1024.0)
        );
        print!("{}", table.table());
    }
}

/// The binary's new start on huge pages (`src/huge_pages.rs`), so that the bench measures the
/// heap `leaselab check` runs with.
#[path = "../../src/huge_pages.rs"]
mod huge_pages;

fn main() {
    huge_pages::start_on_huge_pages();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--frontier") {
        return frontier();
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let threads: Vec<usize> = value("--threads")
        .unwrap_or_else(|| "1,2".into())
        .split(',')
        .map(|t| t.parse().expect("--threads takes numbers"))
        .collect();
    let callers: u32 = value("--callers")
        .map(|c| c.parse().expect("--callers takes a number"))
        .unwrap_or(3);
    let mut config = CheckConfig::new(Safeguard::Fenced {
        guard: WriteGuard::FenceBelowAndEqual,
    });
    config.callers = callers;
    config.ttl_ticks = 1;
    config.work_ticks = 1;
    config.horizon_ticks = Some(6);
    config.symmetry = !args.iter().any(|a| a == "--no-symmetry");
    let model = LeaseModel::new(config).expect("a valid check");
    println!(
        "fenced-cas proof: {} (TTL {}, work {})",
        config.bound_text(),
        config.ttl_ticks,
        config.work_ticks
    );
    let options = |threads| RunOptions {
        strategy: Strategy::Bfs,
        threads,
        max_unique: None,
        stop_at_violation: false,
        stop_once_found: &[],
    };
    // The counts the Promela model of the same protocol stores (and this checker always
    // found): a change to how states are stored must not change what is explored.
    let expected = match (callers, config.symmetry) {
        (3, true) => Some(863_149),
        (3, false) => Some(5_164_309),
        _ => None,
    };
    for threads in threads {
        // Timed, nothing counted.
        let cpu_start = cpu_seconds();
        let start = Instant::now();
        let report = run(&model, options(threads), &Counters::default());
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_start.and_then(|s| cpu_seconds().map(|e| e - s));
        assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Safe));
        if let Some(expected) = expected {
            assert_eq!(report.unique_states, expected, "the 3-caller state count");
        }
        let unique = report.unique_states as f64;
        let cpu_text = cpu.map_or_else(
            || "CPU time unknown".to_string(),
            |cpu| {
                format!(
                    "{cpu:.2}s CPU ({:.0} unique/s per CPU second)",
                    unique / cpu
                )
            },
        );
        println!(
            "{threads} thread(s): {} unique states ({} generated) in {secs:.2}s wall ({:.0} unique/s), {cpu_text}",
            report.unique_states,
            report.states_generated,
            unique / secs,
        );
        // Counted, not timed: the same search again.
        let (counted, peak) = heap_peak_of(|| run(&model, options(threads), &Counters::default()));
        assert_eq!(counted.unique_states, report.unique_states);
        println!(
            "{threads} thread(s): heap peak {:.1} MiB = {:.0} bytes per state",
            peak as f64 / (1024.0 * 1024.0),
            peak as f64 / unique
        );
    }
}
