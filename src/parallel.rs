//! Independent jobs (one simulated run per seed) on a few worker threads, their results
//! handed on in the jobs' order: a batch's output is the same for any thread count.
//!
//! Each job runs wholly on one thread (a simulated run is single-threaded and depends on its
//! seed alone), so running jobs side by side changes when they finish, never what they give.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

/// Jobs finished on a worker thread and not yet handed on, at most this many per thread:
/// what a batch holds stays bounded when one job takes much longer than the ones after it.
pub const AHEAD_PER_THREAD: usize = 4;

/// Runs `work` for every item of `items` on `threads` worker threads (on the calling thread
/// alone when `threads` is 1) and hands each result to `deliver`, in the order of `items`.
///
/// The calling thread hands out items, never more than [`AHEAD_PER_THREAD`] × `threads` past
/// the first result not yet delivered, and puts the results back in order. The first error,
/// of `work` or of `deliver`, stops the handing out: the workers finish the job they are in,
/// and the error is returned (the earliest in item order among those seen).
pub fn in_order<T: Send, E: Send>(
    items: impl Iterator<Item = u64>,
    threads: usize,
    work: &(dyn Fn(u64) -> Result<T, E> + Sync),
    deliver: &mut dyn FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    assert!(threads >= 1, "at least one thread");
    if threads == 1 {
        for item in items {
            deliver(work(item)?)?;
        }
        return Ok(());
    }
    let window = (threads * AHEAD_PER_THREAD) as u64;
    let stop = AtomicBool::new(false);
    let (work_tx, work_rx) = mpsc::channel::<(u64, u64)>();
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(u64, Result<T, E>)>();
    let mut items = items;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let (work_rx, stop) = (&work_rx, &stop);
            scope.spawn(move || loop {
                let job = match work_rx.lock() {
                    Ok(receiver) => receiver.recv(),
                    Err(_) => return,
                };
                let Ok((position, item)) = job else { return };
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if done_tx.send((position, work(item))).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut handed_out = 0u64;
        let mut delivered = 0u64;
        let mut finished: BTreeMap<u64, Result<T, E>> = BTreeMap::new();
        let mut more = true;
        let result = loop {
            while more && handed_out < delivered + window {
                match items.next() {
                    Some(item) => {
                        // The workers wait on the channel until it closes below, so it is open.
                        let _ = work_tx.send((handed_out, item));
                        handed_out += 1;
                    }
                    None => more = false,
                }
            }
            if delivered == handed_out {
                break Ok(());
            }
            // A worker ends before the channel closes only by panicking, and the scope passes
            // that panic on when it joins the workers: nothing is returned then.
            let Ok((position, outcome)) = done_rx.recv() else {
                break Ok(());
            };
            finished.insert(position, outcome);
            let mut failed = None;
            while let Some(outcome) = finished.remove(&delivered) {
                delivered += 1;
                if let Err(error) = outcome.and_then(&mut *deliver) {
                    failed = Some(error);
                    break;
                }
            }
            if let Some(error) = failed {
                break Err(error);
            }
            debug_assert!(finished.len() as u64 <= window, "held results stay bounded");
        };
        stop.store(true, Ordering::Relaxed);
        drop(work_tx);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(
        threads: usize,
        items: std::ops::Range<u64>,
        fail_at: Option<u64>,
    ) -> (Vec<u64>, Result<(), String>) {
        let work = |item: u64| -> Result<u64, String> {
            // Later items finish sooner, so results come back out of order.
            std::thread::sleep(std::time::Duration::from_micros(200 * (20 - item % 20)));
            match fail_at {
                Some(bad) if bad == item => Err(format!("item {item} failed")),
                _ => Ok(item * item),
            }
        };
        let mut seen = Vec::new();
        let result = in_order(items, threads, &work, &mut |value| {
            seen.push(value);
            Ok(())
        });
        (seen, result)
    }

    #[test]
    fn results_come_in_item_order_for_any_thread_count() {
        let expected: Vec<u64> = (0..60u64).map(|i| i * i).collect();
        for threads in [1, 2, 3, 8] {
            let (seen, result) = collect(threads, 0..60, None);
            assert_eq!(result, Ok(()));
            assert_eq!(seen, expected, "{threads} threads");
        }
    }

    #[test]
    fn the_first_error_stops_the_batch_after_the_results_before_it() {
        for threads in [1, 2, 4] {
            let (seen, result) = collect(threads, 0..100, Some(7));
            assert_eq!(
                result,
                Err("item 7 failed".to_string()),
                "{threads} threads"
            );
            assert_eq!(seen, (0..7u64).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn an_error_of_deliver_stops_the_batch() {
        let work = |item: u64| -> Result<u64, String> { Ok(item) };
        let mut seen = Vec::new();
        let result = in_order(0..1_000, 2, &work, &mut |value| {
            if value == 5 {
                return Err("enough".to_string());
            }
            seen.push(value);
            Ok(())
        });
        assert_eq!(result, Err("enough".to_string()));
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    }
}
