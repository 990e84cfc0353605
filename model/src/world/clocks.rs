//! The wall clocks of the World's Redis servers (the single Redis and each Redlock node), and
//! the two ways a clock gets corrected that the safety section contrasts:
//!
//! - a **jump** (stepped clock): the clock moves forward by [`ClockFaults::jump_ms`] at once,
//!   so every key expires that much early — a lease can end before its holder is done;
//! - a **slew** (NTP's gradual correction): from the moment it starts, the clock runs
//!   [`ClockFaults::slew_rate_ppm`] millionths fast until it has gained
//!   [`ClockFaults::slew_ms`] — a key expires early by at most rate × lease, which at NTP's
//!   500 ppm is nothing within a lease of milliseconds.
//!
//! Either may strike at any moment the checker picks, within a budget per run. A server's clock
//! is the world's clock at its drift rate plus [`ClockState::offset_ms`].

/// What may happen to a server's clock during a run (all zero: nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClockFaults {
    /// How many forward jumps may strike.
    pub jumps: u32,
    /// How far each jump steps the clock forward.
    pub jump_ms: u64,
    /// How many slews may start (0 or 1: a clock slews towards one offset at a time).
    pub slews: u32,
    /// The offset a slew applies, gradually.
    pub slew_ms: u64,
    /// How fast a slew applies its offset, in millionths of elapsed time (NTP: at most 500).
    pub slew_rate_ppm: u32,
}

/// NTP's largest slew rate: 500 ppm (0.5 ms per second).
pub const NTP_SLEW_RATE_PPM: u32 = 500;

impl ClockFaults {
    /// True when some fault may still strike.
    pub fn any(&self) -> bool {
        self.jumps > 0 || self.slews > 0
    }

    /// The faults in words, `whose` naming the clock, e.g. for `Redis's`: `1 jump of Redis's
    /// clock by +5ms, 1 slew of Redis's clock by +5ms at 500 ppm`; empty when there are none.
    pub fn describe(&self, whose: &str) -> String {
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if self.jumps > 0 {
            parts.push(format!(
                "{} jump{} of {whose} clock by +{}ms",
                self.jumps,
                plural(self.jumps),
                self.jump_ms
            ));
        }
        if self.slews > 0 {
            parts.push(format!(
                "{} slew{} of {whose} clock by +{}ms at {} ppm",
                self.slews,
                plural(self.slews),
                self.slew_ms,
                self.slew_rate_ppm
            ));
        }
        parts.join(", ")
    }
}

/// What the faults did to one clock so far. The default (nothing yet) is what every clock
/// starts with, and what hashing leaves out so fault-free states keep their fingerprints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockState {
    /// How far jumps stepped the clock forward, in all.
    pub jumped_ms: u64,
    /// When (world time) the slew started, if one did.
    pub slewing_since_ms: Option<u64>,
}

impl ClockState {
    /// How far ahead of its undisturbed reading the clock is at world time `now_ms`: every jump,
    /// and what the slew has applied by then (whole milliseconds, rounded down, at most the
    /// slew's offset).
    pub fn offset_ms(&self, faults: &ClockFaults, now_ms: u64) -> u64 {
        let slewed_ms = match self.slewing_since_ms {
            None => 0,
            Some(since_ms) => {
                let elapsed_us = u128::from(now_ms.saturating_sub(since_ms)) * 1_000;
                let gained_us = elapsed_us * u128::from(faults.slew_rate_ppm) / 1_000_000;
                let gained_ms = u64::try_from(gained_us / 1_000).unwrap_or(u64::MAX);
                gained_ms.min(faults.slew_ms)
            }
        };
        self.jumped_ms.saturating_add(slewed_ms)
    }

    /// True when a slew may start now: one is left in `left` and none has started.
    pub fn may_slew(&self, left: &ClockFaults) -> bool {
        left.slews > 0 && self.slewing_since_ms.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jump_counts_at_once_and_a_slew_gradually_up_to_its_offset() {
        let faults = ClockFaults {
            jumps: 1,
            jump_ms: 5,
            slews: 1,
            slew_ms: 3,
            slew_rate_ppm: 250_000,
        };
        let mut clock = ClockState::default();
        assert_eq!(clock.offset_ms(&faults, 10), 0);
        clock.jumped_ms += faults.jump_ms;
        assert_eq!(clock.offset_ms(&faults, 10), 5);
        clock.slewing_since_ms = Some(10);
        // 25 % of the time since the slew started, rounded down, at most 3.
        let offsets: Vec<u64> = (10..=30).map(|t| clock.offset_ms(&faults, t)).collect();
        assert_eq!(
            offsets,
            [5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8]
        );
    }

    #[test]
    fn at_ntp_rate_a_slew_gains_nothing_within_a_second() {
        let faults = ClockFaults {
            slews: 1,
            slew_ms: 3_000,
            slew_rate_ppm: NTP_SLEW_RATE_PPM,
            ..ClockFaults::default()
        };
        let clock = ClockState {
            jumped_ms: 0,
            slewing_since_ms: Some(0),
        };
        assert_eq!(clock.offset_ms(&faults, 1_999), 0);
        assert_eq!(clock.offset_ms(&faults, 2_000), 1);
        assert_eq!(clock.offset_ms(&faults, u64::MAX), 3_000);
    }

    #[test]
    fn only_one_slew_at_a_time() {
        let left = ClockFaults {
            slews: 1,
            ..ClockFaults::default()
        };
        let mut clock = ClockState::default();
        assert!(clock.may_slew(&left));
        clock.slewing_since_ms = Some(0);
        assert!(!clock.may_slew(&left));
        assert!(!ClockState::default().may_slew(&ClockFaults::default()));
    }
}
