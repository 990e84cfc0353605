//! How a caller waits before trying a busy lock again.

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backoff {
    /// Sleep for a duration drawn from `min_ms..=max_ms`, then try again.
    Wait {
        /// Shortest wait.
        min_ms: u64,
        /// Longest wait.
        max_ms: u64,
    },
    /// Stop trying: the caller gives up.
    Stop,
}

/// A retry strategy, with the state it keeps between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Retry {
    /// The tutorial's hand-written lock: a random 5 to 15 ms (`5ms + rand.N(10ms)`), forever
    /// (until the deadline).
    Jittered5To15,
    /// bsm/redislock `NoRetry()`: one attempt.
    NoRetry,
    /// A random wait drawn uniformly from `min_ms..=max_ms`, forever (until the deadline);
    /// redsync's default is 50 to 250 ms.
    Uniform {
        /// Shortest wait.
        min_ms: u64,
        /// Longest wait.
        max_ms: u64,
    },
    /// bsm/redislock `LinearBackoff(d)`.
    Linear {
        /// The fixed wait.
        backoff_ms: u64,
    },
    /// bsm/redislock v0.10.0 `ExponentialBackoff(min, max)`: the n-th wait (n = 1, 2, ...)
    /// is `2 << n` ms, raised to at least `min_ms` and capped at `max_ms` (0: no cap).
    Exponential {
        /// Lower bound.
        min_ms: u64,
        /// Upper bound (0: none).
        max_ms: u64,
        /// How many backoffs were handed out so far (the strategy object's counter).
        count: u32,
    },
}

impl Retry {
    /// The wait before the next attempt, advancing the strategy's counter. With `jitter`,
    /// the tutorial's full-jitter wrapper: a random wait in `[1ms, d + 1ms)`, where `d` is
    /// the inner strategy's wait (a `d` of 0 still means stop).
    pub fn next_backoff(&mut self, jitter: bool) -> Backoff {
        let inner_ms = match self {
            Retry::Jittered5To15 => {
                return Backoff::Wait {
                    min_ms: 5,
                    max_ms: 14,
                }
            }
            Retry::Uniform { min_ms, max_ms } => {
                return Backoff::Wait {
                    min_ms: *min_ms,
                    max_ms: *max_ms,
                }
            }
            Retry::NoRetry => 0,
            Retry::Linear { backoff_ms } => *backoff_ms,
            Retry::Exponential {
                min_ms,
                max_ms,
                count,
            } => {
                *count = count.saturating_add(1);
                exponential_ms(*count, *min_ms, *max_ms)
            }
        };
        if inner_ms == 0 {
            return Backoff::Stop;
        }
        if jitter {
            // 1ms + rand.N(d): uniform over [1, d + 1) ms; whole milliseconds 1..=d.
            Backoff::Wait {
                min_ms: 1,
                max_ms: inner_ms,
            }
        } else {
            Backoff::Wait {
                min_ms: inner_ms,
                max_ms: inner_ms,
            }
        }
    }
}

/// bsm/redislock v0.10.0's exponential backoff for the `count`-th call (1-based).
fn exponential_ms(count: u32, min_ms: u64, max_ms: u64) -> u64 {
    let raw_ms: u64 = if count < 25 {
        2u64 << count
    } else {
        2u64 << 25
    };
    if raw_ms < min_ms {
        min_ms
    } else if max_ms != 0 && raw_ms > max_ms {
        max_ms
    } else {
        raw_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_matches_redislock_schedule() {
        let mut retry = Retry::Exponential {
            min_ms: 16,
            max_ms: 128,
            count: 0,
        };
        let waits: Vec<u64> = (0..8)
            .map(|_| match retry.next_backoff(false) {
                Backoff::Wait { min_ms, max_ms } => {
                    assert_eq!(min_ms, max_ms);
                    min_ms
                }
                Backoff::Stop => panic!("exponential never stops"),
            })
            .collect();
        // 2<<1=4, 2<<2=8, 2<<3=16 raised to 16; then 32, 64, 128, capped at 128.
        assert_eq!(waits, vec![16, 16, 16, 32, 64, 128, 128, 128]);
    }

    #[test]
    fn no_retry_stops_and_jitter_keeps_stop() {
        assert_eq!(Retry::NoRetry.next_backoff(false), Backoff::Stop);
        assert_eq!(Retry::NoRetry.next_backoff(true), Backoff::Stop);
    }

    #[test]
    fn full_jitter_spreads_over_one_to_d() {
        let mut retry = Retry::Linear { backoff_ms: 64 };
        assert_eq!(
            retry.next_backoff(true),
            Backoff::Wait {
                min_ms: 1,
                max_ms: 64
            }
        );
        assert_eq!(
            retry.next_backoff(false),
            Backoff::Wait {
                min_ms: 64,
                max_ms: 64
            }
        );
    }

    #[test]
    fn counter_saturates_instead_of_overflowing() {
        let mut retry = Retry::Exponential {
            min_ms: 0,
            max_ms: 0,
            count: u32::MAX,
        };
        assert_eq!(
            retry.next_backoff(false),
            Backoff::Wait {
                min_ms: 2 << 25,
                max_ms: 2 << 25
            }
        );
    }
}
