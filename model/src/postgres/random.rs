//! `random()`, `setseed()` and `gen_random_uuid()`, deterministic as the rest of the stand-in.
//!
//! PostgreSQL 15 draws `random()` from a per-session xoroshiro128** generator
//! (`src/common/pg_prng.c`); `setseed(x)` seeds it from `x` through splitmix64, and from then on
//! the session's numbers are fixed: `SELECT setseed(0.5); SELECT random()` answers
//! 0.9851677175347999 on every PostgreSQL 15. The stand-in runs the same generator, so after a
//! `setseed` it answers the same numbers. Before one, PostgreSQL seeds the generator from a
//! strong random source; the stand-in seeds it from the server's seed
//! ([`Postgres::set_random_seed`](super::engine::Postgres::set_random_seed): the run's seed in
//! a simulation, 0 otherwise) and the session's number, so a run replays to the byte.
//! `gen_random_uuid()` (version 4) takes its bits from one server-wide generator seeded the same
//! way, so two sessions never draw the same sequence of uuids.
//!
//! These functions are volatile: the executor runs each call where it stands, left to right,
//! like a sequence function ([`VolatileFn`]).

use super::engine::{Postgres, SessionId};
use super::error::PgError;
use super::sequence::SequenceFn;
use super::settings::SettingFn;
use super::value::{SqlType, Value};

/// A function whose every call the executor runs (it reads or changes the server or the
/// session): never folded, never evaluated as a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VolatileFn {
    /// `nextval`, `currval`, `setval`, `lastval` (`sequence.rs`).
    Sequence(SequenceFn),
    /// `random`, `setseed`, `gen_random_uuid`.
    Random(RandomFn),
    /// `pg_sleep(double precision)`: `void`; the statement asks its server to wait that many
    /// seconds before it answers ([`Postgres::take_requested_sleep`]).
    Sleep,
    /// `current_setting` and `set_config` (`settings.rs`): they read or change the session's
    /// settings where they stand.
    Setting(SettingFn),
}

impl VolatileFn {
    /// Its name, as PostgreSQL writes it in messages.
    pub fn name(self) -> &'static str {
        match self {
            VolatileFn::Sequence(function) => function.name(),
            VolatileFn::Random(function) => function.name(),
            VolatileFn::Sleep => "pg_sleep",
            VolatileFn::Setting(function) => function.name(),
        }
    }

    /// Its result type.
    pub fn ty(self) -> SqlType {
        match self {
            VolatileFn::Sequence(_) => SqlType::Int8,
            VolatileFn::Random(RandomFn::Random) => SqlType::Float8,
            VolatileFn::Random(RandomFn::SetSeed) => SqlType::Void,
            VolatileFn::Random(RandomFn::GenRandomUuid) => SqlType::Uuid,
            VolatileFn::Sleep => SqlType::Void,
            VolatileFn::Setting(_) => SqlType::Text,
        }
    }

    /// Whether it only reads (`current_setting`, stable in PostgreSQL's terms): the executor
    /// runs its calls once, before the statement, wherever they stand.
    pub fn is_stable(self) -> bool {
        matches!(
            self,
            VolatileFn::Setting(SettingFn::Current | SettingFn::CurrentMissingOk)
        )
    }

    /// The types of its arguments.
    pub fn parameters(self) -> &'static [SqlType] {
        match self {
            VolatileFn::Sequence(_) => &[],
            VolatileFn::Random(function) => function.parameters(),
            VolatileFn::Sleep => &[SqlType::Float8],
            VolatileFn::Setting(function) => function.parameters(),
        }
    }
}

/// A function of random numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RandomFn {
    /// `random()`: a `double precision` in [0, 1) from the session's generator.
    Random,
    /// `setseed(double precision)`: seeds the session's generator; `void`.
    SetSeed,
    /// `gen_random_uuid()`: a version 4 uuid.
    GenRandomUuid,
}

impl RandomFn {
    /// The function a name calls, if it is one of these.
    pub fn parse(name: &str) -> Option<RandomFn> {
        Some(match name {
            "random" => RandomFn::Random,
            "setseed" => RandomFn::SetSeed,
            "gen_random_uuid" => RandomFn::GenRandomUuid,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            RandomFn::Random => "random",
            RandomFn::SetSeed => "setseed",
            RandomFn::GenRandomUuid => "gen_random_uuid",
        }
    }

    /// The types of its arguments.
    pub fn parameters(self) -> &'static [SqlType] {
        match self {
            RandomFn::Random | RandomFn::GenRandomUuid => &[],
            RandomFn::SetSeed => &[SqlType::Float8],
        }
    }
}

/// The xoroshiro128** generator of PostgreSQL's `pg_prng.c`: 128 bits of state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prng {
    s0: u64,
    s1: u64,
}

/// One step of splitmix64 over `state`, as `pg_prng.c` fills a state from a seed.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut value = *state;
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^ (value >> 31)
}

impl Prng {
    /// The generator `pg_prng_seed` makes of a 64-bit seed (never all zeroes).
    pub fn seeded(seed: u64) -> Prng {
        let mut state = seed;
        let s0 = splitmix64(&mut state);
        let s1 = splitmix64(&mut state);
        if s0 == 0 && s1 == 0 {
            // `pg_prng_seed_check`'s fallback: Knuth's LCG constants.
            return Prng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        Prng { s0, s1 }
    }

    /// The generator `setseed(seed)` makes (`pg_prng_fseed`): the seed scaled to 52 bits,
    /// truncated toward zero, its two's complement bits as the integer seed.
    pub fn from_fraction(seed: f64) -> Prng {
        debug_assert!((-1.0..=1.0).contains(&seed));
        let scaled = ((1u64 << 52) - 1) as f64 * seed;
        Prng::seeded(scaled as i64 as u64)
    }

    /// The next 64 bits (`xoroshiro128ss`).
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let value = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        value
    }

    /// A double in [0, 1) from the top 52 bits (`pg_prng_double`).
    pub fn next_double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 / (1u64 << 52) as f64
    }

    /// 128 random bits made a version 4, variant 1 uuid (as `gen_random_uuid` marks them).
    pub fn next_uuid(&mut self) -> u128 {
        let bits = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        let version_cleared = bits & !(0xF_u128 << 76);
        let variant_cleared = version_cleared & !(0x3_u128 << 62);
        variant_cleared | (0x4_u128 << 76) | (0x2_u128 << 62)
    }
}

/// The generator a session starts with (before any `setseed`): from the server's seed and the
/// session's number.
pub fn session_prng(server_seed: u64, session: u32) -> Prng {
    let mut state = server_seed ^ 0x7261_6e64_6f6d_0000;
    let mixed = splitmix64(&mut state) ^ u64::from(session);
    Prng::seeded(mixed)
}

/// The server-wide generator of `gen_random_uuid`.
pub fn uuid_prng(server_seed: u64) -> Prng {
    let mut state = server_seed ^ 0x7575_6964_0000_0000;
    Prng::seeded(splitmix64(&mut state))
}

/// `setseed`'s check of its argument: 22023 outside [-1, 1] or NaN, with the value as C's
/// `%g` writes it.
pub fn check_seed(seed: f64) -> Result<f64, PgError> {
    if seed.is_nan() || !(-1.0..=1.0).contains(&seed) {
        return Err(PgError::error(
            "22023",
            format!(
                "setseed parameter {} is out of allowed range [-1,1]",
                format_g(seed)
            ),
        ));
    }
    Ok(seed)
}

/// A double as PostgreSQL's `snprintf` writes `%g`: six significant digits, trailing zeros
/// dropped, an exponent (`e+10`) below 1e-4 or from 1e6; `NaN`, `Infinity`, `-Infinity`.
pub fn format_g(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The exponent after rounding to six significant digits.
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} writes an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} writes a decimal exponent");
    let trim = |text: &str| -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text.to_string()
        }
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        let decimals = usize::try_from(5 - exponent).unwrap_or(0);
        trim(&format!("{value:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What PostgreSQL 15 answers to `SELECT setseed(s); SELECT random(), random()`.
    #[test]
    fn setseed_then_random_answers_postgresqls_numbers() {
        let cases = [
            (0.5, 0.985_167_717_534_799_9, 0.825_301_858_027_981),
            (0.0, 0.870_255_310_581_867_6, 0.426_569_726_107_606),
            (-1.0, 0.725_656_831_544_149, 0.213_424_316_059_815_93),
            (1.0, 0.397_884_222_769_816_7, 0.743_873_241_754_084_1),
            (0.25, 0.197_263_584_984_389_78, 0.210_532_193_953_654_86),
        ];
        for (seed, first, second) in cases {
            let mut prng = Prng::from_fraction(seed);
            assert_eq!(prng.next_double(), first, "setseed({seed})");
            assert_eq!(prng.next_double(), second, "setseed({seed}), second");
        }
    }

    #[test]
    fn a_uuid_is_version_4_variant_1() {
        let mut prng = Prng::seeded(7);
        for _ in 0..100 {
            let uuid = prng.next_uuid();
            assert_eq!((uuid >> 76) & 0xF, 4);
            assert_eq!((uuid >> 62) & 0x3, 2);
        }
    }

    #[test]
    fn format_g_writes_as_printf_does() {
        for (value, text) in [
            (2.0, "2"),
            (1.5, "1.5"),
            (-1.25, "-1.25"),
            (1e10, "1e+10"),
            (123_456.0, "123456"),
            (1_234_567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.000_012_5, "1.25e-05"),
            (-3.000_000_1, "-3"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ] {
            assert_eq!(format_g(value), text, "{value}");
        }
    }
}

/// The time `pg_sleep` calls asked for since the server's driver last took it, in
/// microseconds: a signal to the driver, not part of the state (every value compares and
/// hashes alike). A served or simulated server waits it out before the statement answers; the
/// model checker's statements take no time, so there it is never taken.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RequestedSleep(pub(super) Option<u64>);

impl PartialEq for RequestedSleep {
    fn eq(&self, _: &RequestedSleep) -> bool {
        true
    }
}

impl Eq for RequestedSleep {}

impl Postgres {
    /// One `pg_sleep(seconds)` call: strict (NULL answers NULL), nothing for zero, negative or
    /// NaN seconds, else the time is added to what the statement asks its server to wait.
    pub(super) fn sleep_call(&mut self, values: &[Value]) -> Value {
        match values {
            [Value::Float(super::value::Float(seconds))] => {
                if *seconds > 0.0 {
                    // A float to integer cast saturates: infinity asks for the longest wait.
                    let micros = (seconds * 1_000_000.0) as u64;
                    let total = self.requested_sleep.0.unwrap_or(0).saturating_add(micros);
                    self.requested_sleep.0 = Some(total);
                }
                Value::Text(String::new())
            }
            _ => Value::Null,
        }
    }

    /// The time the last statement's `pg_sleep` calls asked for, if any (taking it).
    pub fn take_requested_sleep(&mut self) -> Option<std::time::Duration> {
        self.requested_sleep
            .0
            .take()
            .map(std::time::Duration::from_micros)
    }
}

/// The number the first transaction that asks for one gets (`txid_current()`); later ones count
/// up. PostgreSQL's numbers depend on the server's history; only their order and equality are
/// the same here.
const FIRST_TXID: i64 = 10_000;

impl Postgres {
    /// The number of `session`'s transaction, given it now if it has none: what
    /// `txid_current()` reads (a statement outside a block is a transaction of its own; the
    /// statement's calls are stamped with it before it runs, as `current_user` is, and
    /// `txid_current_if_assigned()` reads the number the transaction has then). PostgreSQL also
    /// numbers a transaction at its first write; the stand-in numbers only the ones that ask,
    /// so the numbers' order follows the calls.
    pub(super) fn assign_txid(&mut self, session: SessionId) -> Option<i64> {
        let next = self.next_txid.unwrap_or(FIRST_TXID);
        let state = self.sessions.get_mut(&session)?;
        if state.txid.is_none() {
            state.txid = Some(next);
            self.next_txid = Some(next.saturating_add(1));
        }
        state.txid
    }

    /// The numbers `txid_current()` gave: the next one (None before the first), and each
    /// session's whose transaction has one (for state hashes).
    pub fn transaction_numbers(
        &self,
    ) -> (Option<i64>, impl Iterator<Item = (SessionId, i64)> + '_) {
        let given = self
            .sessions
            .iter()
            .filter_map(|(&session, state)| Some((session, state.txid?)));
        (self.next_txid, given)
    }
}
