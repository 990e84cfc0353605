//! Every lock safeguard of the tutorial as a sans-IO state machine, one file each.
//!
//! | safeguard | file | guards against | relies on |
//! |---|---|---|---|
//! | no lock | [`no_lock`] | nothing | nobody else spending at once |
//! | SETNX + DEL | [`naive`] | concurrent holders | no crash, work never outlives anything |
//! | SETNX then PEXPIRE | [`naive`] | a crashed holder (mostly) | no crash between the two commands |
//! | lease | [`lease`] | crashed holders, foreign releases | work + pauses shorter than the TTL |
//! | lease + watchdog | [`watchdog`] | work longer than the TTL | pauses shorter than TTL − TTL/3 |
//! | redislock | [`redislock`] | as lease; retry strategies | as lease |
//! | fenced | [`fenced`] | stale writers (paused holders) | the fence counter never goes back |
//! | PostgreSQL only | [`pg_only`] | everything: the database serialises | nothing outside PostgreSQL |
//!
//! [`Safeguard`] names a safeguard and its options; [`Safeguard::build`] makes one caller's
//! [`Caller`] machine from the run's [`Params`].

pub mod fenced;
pub mod lease;
pub mod naive;
pub mod no_lock;
pub mod pg_only;
pub mod redislock;
pub mod step;
pub mod watchdog;

pub use step::{CallerStats, Input, Machine, Outcome, Point, RedisRequest, SqlRequest, Step};
