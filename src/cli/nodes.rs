//! The flags about Redlock's independent Redis nodes: how many, and (in the checker) what may
//! happen to them.

use clap::Args as ClapArgs;
use leaselab_model::safeguard::Safeguard;
use leaselab_model::world::NodeFaults;

use super::check::parse_ticks;
use crate::exit::UsageError;

/// `redlock` and `redlock-cas`: the nodes and their faults.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct NodeArgs {
    /// Redlock's independent Redis nodes (odd, 3 to 9; default 5). Only for redlock and
    /// redlock-cas.
    #[arg(long, value_name = "N")]
    pub redis_nodes: Option<u8>,
    /// How many node restarts without persistence may strike (any node, any moment): the node
    /// comes back at once with its keys gone.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub node_restarts: u32,
    /// How many delayed node restarts may strike: the node is down for the TTL + 1 tick, then
    /// comes back empty (the Redis page's mitigation).
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub node_delayed_restarts: u32,
    /// How many node clock jumps may strike (any node, any moment).
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub node_clock_jumps: u32,
    /// How far a node clock jump steps the clock forward, in ticks.
    #[arg(long, default_value = "0", value_parser = parse_ticks, value_name = "T")]
    pub node_clock_jump: u64,
    /// Every node's clock rate error, in percent: `+20%` runs 20 % fast (keys expire early),
    /// `-10%` slow.
    #[arg(long, default_value = "0", value_parser = parse_percent, value_name = "PCT", allow_hyphen_values = true)]
    pub node_drift: i32,
    /// How many node clock slews may start (any node, any moment, one per node at a time):
    /// NTP's gradual correction of --node-clock-slew ticks at --slew-rate.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub node_clock_slews: u32,
    /// The offset a node clock slew applies, in ticks.
    #[arg(long, default_value = "0", value_parser = parse_ticks, value_name = "T")]
    pub node_clock_slew: u64,
}

/// `+20%`, `20%`, `-5`, `0`.
pub fn parse_percent(text: &str) -> Result<i32, String> {
    let trimmed = text.trim();
    let number = trimmed.strip_suffix('%').unwrap_or(trimmed);
    let number = number.strip_prefix('+').unwrap_or(number);
    number
        .parse::<i32>()
        .map_err(|_| format!("'{text}' is not a whole percentage; write e.g. +20% or -5%"))
}

impl NodeArgs {
    /// The node faults these flags ask for; a slew applies its offset at `slew_rate_ppm`
    /// (`--slew-rate`).
    pub fn faults(&self, slew_rate_ppm: u32) -> NodeFaults {
        NodeFaults {
            restarts: self.node_restarts,
            delayed_restarts: self.node_delayed_restarts,
            clock_jumps: self.node_clock_jumps,
            clock_jump_ms: self.node_clock_jump,
            drift_percent: self.node_drift,
            clock_slews: self.node_clock_slews,
            clock_slew_ms: self.node_clock_slew,
            slew_rate_ppm,
        }
    }

    /// `safeguard` (as named on the command line: `name`) on the nodes `--redis-nodes` asks
    /// for; refused for a single-server one, and when the name already says another count.
    pub fn apply(&self, safeguard: Safeguard, name: Option<&str>) -> Result<Safeguard, UsageError> {
        if let (Some(asked), Some(name)) = (self.redis_nodes, name) {
            let named = safeguard.redis_nodes();
            if name.ends_with("-nodes") && named != asked {
                return Err(UsageError::new(format!(
                    "--safeguard {name} --redis-nodes {asked}: the name already says {named} \
                     nodes; give the count once (e.g. --safeguard redlock --redis-nodes {asked})"
                )));
            }
        }
        match self.redis_nodes {
            None => Ok(safeguard),
            Some(_) if safeguard.redis_nodes() == 0 => Err(UsageError::new(format!(
                "--redis-nodes: {} locks on one Redis; only redlock and redlock-cas run on \
                 several independent nodes (e.g. --safeguard redlock --redis-nodes 3)",
                safeguard.name()
            ))),
            Some(nodes) => Ok(safeguard.with_redis_nodes(nodes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_percent;

    #[test]
    fn percentages_read_with_or_without_sign_and_percent() {
        assert_eq!(parse_percent("+20%"), Ok(20));
        assert_eq!(parse_percent("-5%"), Ok(-5));
        assert_eq!(parse_percent("3"), Ok(3));
        assert!(parse_percent("fast").unwrap_err().contains("+20%"));
    }
}
