//! Where a safeguard stops being safe: the largest pause, per TTL and work, for which the
//! ledger still holds.
//!
//! Allowing longer pauses only adds behaviours (every schedule with pauses up to `p` is also
//! one with pauses up to `p + 1`), so safety is monotone in the pause bound: the search
//! doubles the pause until the ledger breaks, then bisects. Each cell is exhaustive to its
//! own horizon (`2 × work + 2 × TTL + 4` by default); a pause as long as the horizon never binds,
//! so a cell safe at the horizon is safe with unbounded pauses (`∞`).

use serde::Serialize;

use crate::safeguard::ParamError;

use super::bfs::Counters;
use super::config::CheckConfig;
use super::model::{LeaseModel, PropertySet, LEDGER};
use super::run::{run, PropertyVerdict, RunOptions};

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
}

impl Boundary {
    /// `-` (never safe), `2`, or `∞`.
    pub fn cell(self) -> String {
        match self {
            Boundary::None => "-".into(),
            Boundary::UpTo(p) => p.to_string(),
            Boundary::Unbounded => "∞".into(),
        }
    }
}

/// One cell of the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The lease.
    pub ttl_ms: u64,
    /// The work.
    pub work_ms: u64,
    /// The horizon it was checked to.
    pub horizon_ms: u64,
    /// The boundary.
    pub boundary: Boundary,
    /// How many checks it took.
    pub checks: u32,
    /// Distinct states over all of them.
    pub unique_states: u64,
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

/// True when the ledger holds for `config`.
fn ledger_safe(
    config: CheckConfig,
    options: RunOptions,
    unique: &mut u64,
) -> Result<bool, ParamError> {
    let model = LeaseModel::with_properties(config, PropertySet::LedgerOnly)?;
    let report = run(&model, options, &Counters::default());
    *unique += report.unique_states;
    Ok(report.verdict(LEDGER) != Some(PropertyVerdict::Violated))
}

/// The boundary for one (TTL, work), `base` giving everything else.
pub fn boundary(base: CheckConfig, options: RunOptions) -> Result<Cell, ParamError> {
    let horizon = base.horizon();
    let mut checks = 0;
    let mut unique = 0;
    let mut safe_at = |pause: Option<u64>| {
        checks += 1;
        ledger_safe(
            CheckConfig {
                max_pause_ms: pause,
                horizon_ms: Some(horizon),
                ..base
            },
            options,
            &mut unique,
        )
    };
    // Pauses as long as the horizon never bind (no run lasts longer), so "safe up to the
    // horizon" is "safe with unbounded pauses". Search upwards by doubling, then bisect.
    let boundary = if !safe_at(Some(0))? {
        Boundary::None
    } else {
        let (mut lo, mut hi) = (0u64, None);
        let mut pause = 1u64;
        while pause < horizon {
            if safe_at(Some(pause))? {
                lo = pause;
                pause *= 2;
            } else {
                hi = Some(pause);
                break;
            }
        }
        let hi = match hi {
            Some(hi) => Some(hi),
            None if safe_at(Some(horizon))? => None,
            None => Some(horizon),
        };
        match hi {
            None => Boundary::Unbounded,
            Some(mut hi) => {
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if safe_at(Some(mid))? {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                Boundary::UpTo(lo)
            }
        }
    };
    Ok(Cell {
        ttl_ms: base.ttl_ms,
        work_ms: base.work_ms,
        horizon_ms: horizon,
        boundary,
        checks,
        unique_states: unique,
    })
}

/// The table for every TTL in `ttls` and work in `works` (each cell at `base`'s horizon, or
/// its own default when `base` has none).
pub fn sweep(
    base: CheckConfig,
    ttls: &[u64],
    works: &[u64],
    options: RunOptions,
    mut on_cell: impl FnMut(&Cell),
) -> Result<Frontier, ParamError> {
    let mut cells = Vec::new();
    for &ttl_ms in ttls {
        for &work_ms in works {
            let config = CheckConfig {
                ttl_ms,
                work_ms,
                max_pause_ms: None,
                ..base
            };
            let cell = boundary(config, options)?;
            on_cell(&cell);
            cells.push(cell);
        }
    }
    Ok(Frontier {
        safeguard: base.safeguard.name(),
        callers: base.callers,
        ttls: ttls.to_vec(),
        works: works.to_vec(),
        cells,
    })
}

impl Frontier {
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
                    .find(|c| c.ttl_ms == ttl && c.work_ms == work)
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
