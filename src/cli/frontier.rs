//! `leaselab frontier`: where a safeguard stops being safe — the largest pause per TTL and
//! work for which the ledger holds, each cell established exhaustively.

use std::io::IsTerminal;

use clap::Args as ClapArgs;
use leaselab_model::checker::frontier::{sweep, Boundary, Frontier};
use leaselab_model::checker::{CheckConfig, RunOptions, Strategy};
use leaselab_model::safeguard::Safeguard;

use crate::exit::{CommandResult, Status, UsageError};

use super::check::parse_ticks;

/// Sweep the pause bound (and TTL against work) and print the boundary table.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The safeguard, e.g. lease, lease-watchdog, fenced.
    #[arg(long, value_name = "NAME")]
    pub safeguard: String,
    /// How many callers.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub callers: u32,
    /// TTLs (rows), in ticks: a list `3,4,6` or a range `3..6`.
    #[arg(long, default_value = "3..5", value_parser = parse_list, value_name = "LIST")]
    pub ttl: TickList,
    /// Works (columns), in ticks: a list `1,2,4` or a range `1..4`.
    #[arg(long, default_value = "1,2,4", value_parser = parse_list, value_name = "LIST")]
    pub work: TickList,
    /// Time stops here in every cell, in ticks (default: each cell's 2 × work + 2 × TTL + 4).
    /// The state space grows quickly with it; a violation needs about 2 × work + TTL + 3.
    #[arg(long, value_parser = parse_ticks, value_name = "H")]
    pub horizon: Option<u64>,
    /// How many Redis failovers may strike.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub failovers: u32,
    /// The balance before the run.
    #[arg(long, default_value_t = 20, value_name = "B")]
    pub balance: i64,
    /// How much each caller spends.
    #[arg(long, default_value_t = 10, value_name = "A")]
    pub amount: i64,
    /// Worker threads per check.
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub threads: usize,
    /// Print the table as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A list of tick values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickList(pub Vec<u64>);

/// `3,4,6` or `3..6` (inclusive).
pub fn parse_list(text: &str) -> Result<TickList, String> {
    let text = text.trim();
    if let Some((lo, hi)) = text.split_once("..") {
        let lo = parse_ticks(lo)?;
        let hi = parse_ticks(hi.trim_start_matches('='))?;
        if hi < lo || hi - lo > 64 {
            return Err(format!(
                "'{text}' is not a range of at most 65 values from low to high; write e.g. 3..6"
            ));
        }
        return Ok(TickList((lo..=hi).collect()));
    }
    let values: Result<Vec<u64>, String> = text.split(',').map(parse_ticks).collect();
    let values = values?;
    if values.is_empty() || values.len() > 65 {
        return Err(format!(
            "'{text}': give between 1 and 65 values, e.g. 1,2,4"
        ));
    }
    Ok(TickList(values))
}

/// Runs `leaselab frontier`.
pub fn execute(args: Args) -> CommandResult {
    let safeguard = Safeguard::parse(&args.safeguard)
        .map_err(|e| UsageError::new(format!("--safeguard: {e}")))?;
    if args.threads == 0 || args.threads > 256 {
        return Err(UsageError::new(format!(
            "--threads {}: use between 1 and 256 threads",
            args.threads
        )));
    }
    let base = CheckConfig {
        callers: args.callers,
        initial_balance: args.balance,
        amount: args.amount,
        failovers: args.failovers,
        horizon_ms: args.horizon,
        ..CheckConfig::new(safeguard)
    };
    // Refuse bad cells before running any.
    for &ttl_ms in &args.ttl.0 {
        for &work_ms in &args.work.0 {
            CheckConfig {
                ttl_ms,
                work_ms,
                ..base
            }
            .validate()
            .map_err(|e| UsageError::new(format!("--ttl {ttl_ms} --work {work_ms}: {e}")))?;
        }
    }
    let options = RunOptions {
        strategy: Strategy::Bfs,
        threads: args.threads,
        max_unique: None,
    };
    let progress = !args.json && std::io::stderr().is_terminal();
    let frontier = sweep(base, &args.ttl.0, &args.work.0, options, |cell| {
        if progress {
            eprint!(
                "\r\x1b[2Kchecked TTL {} work {}: {}",
                cell.ttl_ms,
                cell.work_ms,
                cell.boundary.cell()
            );
        }
    })?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&frontier).expect("frontiers serialise")
        );
    } else {
        if progress {
            eprint!("\r\x1b[2K");
        }
        print!("{}", render(&frontier, &base));
    }
    Ok(Status::Ok)
}

fn render(frontier: &Frontier, base: &CheckConfig) -> String {
    let mut out = format!(
        "{}: the largest pause (ticks, per caller in all) for which the ledger holds\n\
         {} callers spending {} from {}{}; every cell exhaustive to {}\n\
         '-' = broken even without pauses, '∞' = safe with unbounded pauses\n\n",
        frontier.safeguard,
        frontier.callers,
        base.amount,
        base.initial_balance,
        match base.failovers {
            0 => String::new(),
            k => format!(", up to {k} failover(s)"),
        },
        match base.horizon_ms {
            Some(h) => format!("a horizon of {h} ticks"),
            None => "its horizon (2 x work + 2 x TTL + 4 ticks)".to_string(),
        }
    );
    out.push_str(&frontier.table());
    let unbounded = frontier
        .cells
        .iter()
        .all(|c| c.boundary == Boundary::Unbounded);
    if unbounded {
        out.push_str("\nsafe in every cell, whatever the pauses\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_list("3..5"), Ok(TickList(vec![3, 4, 5])));
        assert_eq!(parse_list("1,2,4"), Ok(TickList(vec![1, 2, 4])));
        assert_eq!(parse_list("2ms,4"), Ok(TickList(vec![2, 4])));
        assert!(parse_list("5..3").is_err());
        assert!(parse_list("1,x").is_err());
    }
}
