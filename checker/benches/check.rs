//! The exhaustive checker's throughput and memory on the 3-caller fenced-cas proof.
//!
//! `cargo bench -p leaselab-checker --bench check`, optionally followed by
//! `-- --threads 1,2 --callers 3 --no-symmetry`; `-- --frontier` times instead the sweeps
//! `leaselab frontier --safeguard lease-watchdog --ttl 3..4 --work 2` and `--ttl 3..6 --work 4`
//! run (the same library call, one thread). For each thread count it prints the unique
//! states found, the wall and CPU time (the process's user + system time, which a loaded
//! machine disturbs far less than wall time), unique states per second of each, and the
//! heap's peak during the search divided by the unique states: the bytes each stored state
//! cost (the visited set, the path records, and the two levels of states held at a time).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use leaselab_checker::bfs::Counters;
use leaselab_checker::{
    run, CheckConfig, LeaseModel, PropertyVerdict, RunOptions, Strategy, LEDGER,
};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::Safeguard;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let now = IN_USE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
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
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
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
        let base_in_use = IN_USE.load(Ordering::Relaxed);
        PEAK.store(base_in_use, Ordering::Relaxed);
        let cpu_start = cpu_seconds();
        let start = Instant::now();
        let table = sweep(
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
        .expect("valid cells");
        let cpu = cpu_start.and_then(|s| cpu_seconds().map(|e| e - s));
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base_in_use);
        println!(
            "frontier lease-watchdog --ttl {ttls:?} --work {works:?}: {:.1}s wall, {} CPU, heap peak {:.1} MiB",
            start.elapsed().as_secs_f64(),
            cpu.map_or_else(|| "unknown".to_string(), |c| format!("{c:.1}s")),
            peak as f64 / (1024.0 * 1024.0)
        );
        print!("{}", table.table());
    }
}

fn main() {
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
    for threads in threads {
        let base = IN_USE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let cpu_start = cpu_seconds();
        let start = Instant::now();
        let report = run(
            &model,
            RunOptions {
                strategy: Strategy::Bfs,
                threads,
                max_unique: None,
                stop_at_violation: false,
                stop_once_found: &[],
            },
            &Counters::default(),
        );
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_start.and_then(|s| cpu_seconds().map(|e| e - s));
        assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Safe));
        // The counts the Promela model of the same protocol stores (and this checker always
        // found): a change to how states are stored must not change what is explored.
        let expected = match (callers, config.symmetry) {
            (3, true) => Some(863_149),
            (3, false) => Some(5_164_309),
            _ => None,
        };
        if let Some(expected) = expected {
            assert_eq!(report.unique_states, expected, "the 3-caller state count");
        }
        let unique = report.unique_states as f64;
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
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
            "{threads} thread(s): {} unique states ({} generated) in {secs:.2}s wall ({:.0} unique/s), {cpu_text}, heap peak {:.1} MiB = {:.0} bytes per state",
            report.unique_states,
            report.states_generated,
            unique / secs,
            peak as f64 / (1024.0 * 1024.0),
            peak as f64 / unique
        );
    }
}
