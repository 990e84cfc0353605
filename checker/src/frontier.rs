//! Where a safeguard stops being safe: the largest pause, per TTL and work, for which the
//! ledger still holds.
//!
//! Allowing longer pauses only adds behaviours (every schedule with pauses up to `p` is also
//! one with pauses up to `p + 1`), so safety is monotone in the pause bound: the boundary is
//! one less than the least pause that breaks the ledger. One search at pauses up to the
//! horizon finds that least pause for the whole cell ([`crate::pause_search`]); when it
//! cannot (a limit stopped it), the cell is checked pause by pause, doubling the pause until
//! the ledger breaks, then bisecting. Each cell is exhaustive to its
//! own horizon (`2 × work + 2 × TTL + 4` by default); a pause as long as the horizon never binds,
//! so a cell safe at the horizon is safe with unbounded pauses (`∞`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use leaselab_model::safeguard::ParamError;

use crate::bfs::Counters;
use crate::config::CheckConfig;
use crate::model::{LeaseModel, PropertySet, LEDGER};
use crate::pause_search::least_pauses;
use crate::run::{run, PropertyVerdict, RunOptions};

/// The largest pause for which the ledger holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "ticks", rename_all = "lowercase")]
pub enum Boundary {
    /// Not even without pauses.
    None,
    /// Pauses up to this many ticks (per caller, in all).
    UpTo(u64),
    /// Any pause (within the horizon): safe in the asynchronous model.
    Unbounded,
    /// Not established: a check of the cell hit the state limit, or its bound let no run
    /// play out (see [`Cell::reason`]).
    Inconclusive,
}

impl Boundary {
    /// `-` (never safe), `2`, `∞`, or `?` (inconclusive).
    pub fn cell(self) -> String {
        match self {
            Boundary::None => "-".into(),
            Boundary::UpTo(p) => p.to_string(),
            Boundary::Unbounded => "∞".into(),
            Boundary::Inconclusive => "?".into(),
        }
    }
}

/// One cell of the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The lease.
    pub ttl_ticks: u64,
    /// The work.
    pub work_ticks: u64,
    /// The horizon it was checked to.
    pub horizon_ticks: u64,
    /// The boundary.
    pub boundary: Boundary,
    /// How many checks it took.
    pub checks: u32,
    /// Distinct states over all of them.
    pub unique_states: u64,
    /// Why the boundary is inconclusive (none when it was established).
    pub reason: Option<String>,
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frontier {
    /// The safeguard.
    pub safeguard: String,
    /// Callers per check.
    pub callers: u32,
    /// TTLs (rows).
    pub ttls: Vec<u64>,
    /// Works (columns).
    pub works: Vec<u64>,
    /// Row by row.
    pub cells: Vec<Cell>,
}

/// The most cells a sweep runs by default (`leaselab frontier --max-cells`).
pub const DEFAULT_MAX_CELLS: usize = 100;

/// What one check of a cell said about the ledger.
enum Ledger {
    Safe,
    Violated,
    Inconclusive(String),
}

/// What the ledger does under `config`, within `budget` distinct states.
fn ledger_check(
    config: CheckConfig,
    options: RunOptions,
    budget: Option<u64>,
    counters: &Counters,
    unique: &mut u64,
) -> Result<Ledger, ParamError> {
    let model = LeaseModel::with_properties(config, PropertySet::LedgerOnly)?;
    let options = RunOptions {
        max_unique: budget,
        stop_at_violation: true,
        ..options
    };
    counters.reset();
    let report = run(&model, options, counters);
    *unique += report.unique_states;
    Ok(match report.verdict(LEDGER) {
        Some(PropertyVerdict::Violated) => Ledger::Violated,
        Some(PropertyVerdict::Safe) => Ledger::Safe,
        _ => Ledger::Inconclusive(format!(
            "pauses up to {}: {}",
            config
                .max_pause_ticks
                .map_or("unbounded".to_string(), |p| p.to_string()),
            report
                .property(LEDGER)
                .map_or_else(String::new, |p| p.basis.clone())
        )),
    })
}

/// The boundary for one (TTL, work), `base` giving everything else.
pub fn boundary(base: CheckConfig, options: RunOptions) -> Result<Cell, ParamError> {
    boundary_watched(base, options, &Counters::default())
}

/// [`boundary`], with `options.max_unique` the limit on distinct states of each of the
/// cell's checks, and `counters` updated as each check runs (and [`Counters::request_stop`]
/// honoured).
///
/// The cell is first decided by one search at pauses up to the horizon that notes the least
/// pause breaking the ledger ([`crate::pause_search`]); when that search stops at a limit, or
/// its answer leaves some pause undecided, the cell falls back to one check per pause
/// ([`boundary_by_checks`]), which can still settle what needs only small pauses.
pub fn boundary_watched(
    base: CheckConfig,
    options: RunOptions,
    counters: &Counters,
) -> Result<Cell, ParamError> {
    let horizon = base.horizon();
    let config = CheckConfig {
        max_pause_ticks: Some(horizon),
        horizon_ticks: Some(horizon),
        ..base
    };
    let model = LeaseModel::with_properties(config, PropertySet::LedgerOnly)?;
    counters.reset();
    let pauses = least_pauses(&model, options.max_unique, counters);
    if pauses.stopped.is_none() {
        // Every pause the bisection asks about is decided by the two least pauses.
        let mut safe_at = |pause: u64| -> Result<bool, Undecided> {
            match (pauses.violation, pauses.witness) {
                (Some(v), _) if v <= pause => Ok(false),
                (_, Some(w)) if w <= pause => Ok(true),
                _ => Err(Undecided::Inconclusive(String::new())),
            }
        };
        if let Ok(boundary) = search(&mut safe_at, horizon) {
            return Ok(Cell {
                ttl_ticks: base.ttl_ticks,
                work_ticks: base.work_ticks,
                horizon_ticks: horizon,
                boundary,
                checks: 1,
                unique_states: pauses.unique,
                reason: None,
            });
        }
    }
    let mut cell = boundary_by_checks(base, options, counters)?;
    cell.checks += 1;
    cell.unique_states += pauses.unique;
    Ok(cell)
}

/// [`boundary_watched`] by one check per pause: doubling the pause until the ledger breaks,
/// then bisecting, each check stopping at its first violation.
pub fn boundary_by_checks(
    base: CheckConfig,
    options: RunOptions,
    counters: &Counters,
) -> Result<Cell, ParamError> {
    let horizon = base.horizon();
    let mut checks = 0;
    let mut unique = 0;
    let mut check_at = |pause: Option<u64>| -> Result<Ledger, ParamError> {
        checks += 1;
        ledger_check(
            CheckConfig {
                max_pause_ticks: pause,
                horizon_ticks: Some(horizon),
                ..base
            },
            options,
            options.max_unique,
            counters,
            &mut unique,
        )
    };
    // Pauses as long as the horizon never bind (no run lasts longer), so "safe up to the
    // horizon" is "safe with unbounded pauses". Search upwards by doubling, then bisect. Any
    // check that cannot tell makes the whole cell inconclusive.
    let mut safe_at = |pause: u64| -> Result<bool, Undecided> {
        match check_at(Some(pause)).map_err(Undecided::Param)? {
            Ledger::Safe => Ok(true),
            Ledger::Violated => Ok(false),
            Ledger::Inconclusive(reason) => Err(Undecided::Inconclusive(reason)),
        }
    };
    let (boundary, reason) = match search(&mut safe_at, horizon) {
        Ok(boundary) => (boundary, None),
        Err(Undecided::Param(error)) => return Err(error),
        Err(Undecided::Inconclusive(reason)) => (Boundary::Inconclusive, Some(reason)),
    };
    Ok(Cell {
        ttl_ticks: base.ttl_ticks,
        work_ticks: base.work_ticks,
        horizon_ticks: horizon,
        boundary,
        checks,
        unique_states: unique,
        reason,
    })
}

/// Decrements its counter when dropped.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why a cell's search could not go on.
enum Undecided {
    Param(ParamError),
    Inconclusive(String),
}

/// The largest pause `safe_at` holds for, by doubling then bisecting up to `horizon`.
fn search(
    safe_at: &mut impl FnMut(u64) -> Result<bool, Undecided>,
    horizon: u64,
) -> Result<Boundary, Undecided> {
    if !safe_at(0)? {
        return Ok(Boundary::None);
    }
    let (mut lo, mut hi) = (0u64, None);
    let mut pause = 1u64;
    while pause < horizon {
        if safe_at(pause)? {
            lo = pause;
            pause *= 2;
        } else {
            hi = Some(pause);
            break;
        }
    }
    let hi = match hi {
        Some(hi) => Some(hi),
        None if safe_at(horizon)? => None,
        None => Some(horizon),
    };
    Ok(match hi {
        None => Boundary::Unbounded,
        Some(mut hi) => {
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if safe_at(mid)? {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Boundary::UpTo(lo)
        }
    })
}

/// The table for every TTL in `ttls` and work in `works` (each cell at `base`'s horizon, or
/// its own default when `base` has none).
///
/// `options.max_unique` limits each check of each cell; `counters` is updated as every check
/// runs (a stop request stops every cell); `on_start` is told each cell before it runs,
/// `on_cell` after. With `options.threads` above 1 and more than one cell, that many cells
/// run side by side, each searched by one thread (a cell's pause search is one thread
/// anyway) with counters of its own (a search reads its own counts against its limit): the
/// table is the same, only sooner. `counters` then shows the progress of the cell with the
/// most states so far, and a stop requested on it is passed to every cell.
pub fn sweep(
    base: CheckConfig,
    ttls: &[u64],
    works: &[u64],
    options: RunOptions,
    counters: &Counters,
    on_start: impl Fn(u64, u64) + Sync,
    on_cell: impl Fn(&Cell) + Sync,
) -> Result<Frontier, ParamError> {
    let configs: Vec<CheckConfig> = ttls
        .iter()
        .flat_map(|&ttl_ticks| {
            works.iter().map(move |&work_ticks| CheckConfig {
                ttl_ticks,
                work_ticks,
                max_pause_ticks: None,
                ..base
            })
        })
        .collect();
    let side_by_side = options.threads.clamp(1, configs.len().max(1));
    let cell_options = if side_by_side > 1 {
        RunOptions {
            threads: 1,
            ..options
        }
    } else {
        options
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Cell, ParamError>>>> =
        Mutex::new((0..configs.len()).map(|_| None).collect());
    let worker = |counters: &Counters| loop {
        let at = next.fetch_add(1, Ordering::Relaxed);
        let Some(&config) = configs.get(at) else {
            return;
        };
        on_start(config.ttl_ticks, config.work_ticks);
        let cell = boundary_watched(config, cell_options, counters);
        if let Ok(cell) = &cell {
            on_cell(cell);
        }
        let failed = cell.is_err();
        results.lock().unwrap_or_else(PoisonError::into_inner)[at] = Some(cell);
        if failed {
            // Cells are validated before a sweep; a cell that still fails ends the sweep.
            next.store(configs.len(), Ordering::Relaxed);
            return;
        }
    };
    if side_by_side == 1 {
        worker(counters);
    } else {
        let own: Vec<Counters> = (0..side_by_side).map(|_| Counters::default()).collect();
        let working = AtomicUsize::new(side_by_side);
        std::thread::scope(|scope| {
            for cell_counters in &own {
                let working = &working;
                scope.spawn(move || {
                    // Counted down however the worker ends (a panic included), so the relay
                    // below always ends and the scope passes the panic on.
                    let _done = CountDown(working);
                    worker(cell_counters);
                });
            }
            // Relay: a stop asked of the sweep goes to every cell; the busiest cell's counts
            // are the sweep's progress.
            while working.load(Ordering::Relaxed) > 0 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                if counters.stop_requested() {
                    own.iter().for_each(Counters::request_stop);
                }
                if let Some(busiest) = own.iter().max_by_key(|c| c.unique.load(Ordering::Relaxed)) {
                    for (to, from) in [
                        (&counters.unique, &busiest.unique),
                        (&counters.generated, &busiest.generated),
                        (&counters.depth, &busiest.depth),
                        (&counters.level, &busiest.level),
                    ] {
                        to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
                    }
                }
            }
        });
    }
    let mut cells = Vec::with_capacity(configs.len());
    for result in results.into_inner().unwrap_or_else(PoisonError::into_inner) {
        match result {
            Some(cell) => cells.push(cell?),
            None => continue,
        }
    }
    assert_eq!(cells.len(), configs.len(), "every cell of a sweep ran");
    Ok(Frontier {
        safeguard: base.safeguard.name(),
        callers: base.callers,
        ttls: ttls.to_vec(),
        works: works.to_vec(),
        cells,
    })
}

impl Frontier {
    /// The cells whose boundary could not be established.
    pub fn inconclusive(&self) -> Vec<&Cell> {
        self.cells
            .iter()
            .filter(|c| c.boundary == Boundary::Inconclusive)
            .collect()
    }

    /// True when every cell is established and safe with unbounded pauses.
    pub fn safe_everywhere(&self) -> bool {
        !self.cells.is_empty() && self.cells.iter().all(|c| c.boundary == Boundary::Unbounded)
    }

    /// The table as text: TTL down, work across, the largest safe pause in each cell.
    pub fn table(&self) -> String {
        let width = self
            .cells
            .iter()
            .map(|c| c.boundary.cell().chars().count())
            .chain(self.works.iter().map(|w| w.to_string().len()))
            .max()
            .unwrap_or(1)
            .max(4);
        let mut out = String::new();
        out.push_str(&format!("{:>10} |", "TTL \\ work"));
        for work in &self.works {
            out.push_str(&format!(" {:>width$}", work));
        }
        out.push('\n');
        out.push_str(&format!("{}-+", "-".repeat(10)));
        out.push_str(&"-".repeat((width + 1) * self.works.len()));
        out.push('\n');
        for &ttl in &self.ttls {
            out.push_str(&format!("{ttl:>10} |"));
            for &work in &self.works {
                let cell = self
                    .cells
                    .iter()
                    .find(|c| c.ttl_ticks == ttl && c.work_ticks == work)
                    .map(|c| c.boundary.cell())
                    .unwrap_or_default();
                let pad = width.saturating_sub(cell.chars().count());
                out.push_str(&format!(" {}{cell}", " ".repeat(pad)));
            }
            out.push('\n');
        }
        out
    }
}
