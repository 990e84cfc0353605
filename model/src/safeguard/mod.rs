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
//! | Redlock | [`redlock`] | losing a minority of N independent nodes | pauses, delays and clock drift within the validity; no node forgets a key or steps its clock |
//! | Redlock + check-and-set | [`redlock`] | everything: the write checks the version read | PostgreSQL |
//! | PostgreSQL only | [`pg_only`] | everything: the database serialises | nothing outside PostgreSQL |
//! | transfer, rows locked by id | [`pg_retry`] | lost updates and overdrafts on two wallets | retrying a rare 40P01 |
//! | transfer, source locked first | [`pg_retry`] | the same, deadlocks aborted by PostgreSQL | retrying every 40P01 |
//! | REPEATABLE READ / SERIALIZABLE | [`pg_retry`] | lost updates | retrying every 40001 |
//! | READ COMMITTED read-modify-write | [`pg_retry`] | nothing (the contrast) | nobody else spending at once |
//!
//! [`Safeguard`] names a safeguard and its options; [`Safeguard::build`] makes one caller's
//! [`Caller`] machine from the run's [`Params`].

pub mod fenced;
pub mod lease;
pub mod naive;
pub mod no_lock;
pub mod pg_only;
pub mod pg_retry;
pub mod reading;
pub mod redislock;
pub mod redlock;
pub mod spec;
pub mod step;
pub mod user;
pub mod watchdog;

pub use reading::Reading;

/// A caller's fixed bytes (a key name, its token): set when it is built and never changed, so
/// shared by every copy of the caller instead of copied with it.
pub type FixedBytes = std::sync::Arc<[u8]>;
pub use step::{
    CallerStats, Input, Machine, Outcome, Point, RedisRequest, SqlRequest, Step, SINGLE_REDIS,
};
pub mod lock;
pub mod locked;
pub mod retry;
pub mod store;

use crate::postgres::{Isolation, WriteGuard};

use lease::{Lease, ReleaseVia};
use lock::{token_text, Lock};
use locked::{LockedSpend, LockedSpendConfig};
use pg_only::{PgDebit, PgForUpdate};
use pg_retry::{PgIsolated, PgTransfer};
use retry::Retry;
use store::Store;
use watchdog::Watchdog;

/// A retry strategy for [`Safeguard::Redislock`], as bsm/redislock v0.10.0 offers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetryStrategy {
    /// `NoRetry()`.
    NoRetry,
    /// `LinearBackoff(d)`.
    Linear {
        /// The wait.
        backoff_ms: u64,
    },
    /// `ExponentialBackoff(min, max)`.
    Exponential {
        /// Lower bound.
        min_ms: u64,
        /// Upper bound.
        max_ms: u64,
    },
}

/// A safeguard and its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Safeguard {
    /// No lock; balance in Redis (step 1).
    NoLock,
    /// `SETNX` + `DEL`; balance in Redis.
    SetnxDel,
    /// `SETNX` then `PEXPIRE` as two commands, `DEL` release; balance in Redis.
    SetnxExpire,
    /// `SET NX PX` lease with compare-and-delete release; balance in Redis (step 2).
    Lease {
        /// Lua script or DELEX.
        release: ReleaseVia,
    },
    /// The lease with a watchdog refreshing every TTL/3 (step 3).
    LeaseWatchdog,
    /// The lease, trusted only after `WAIT 1 <TTL/4>` says a replica has it (released and
    /// given up otherwise); balance in Redis.
    LeaseWait,
    /// bsm/redislock `Obtain` (step 4).
    Redislock {
        /// The retry strategy.
        retry: RetryStrategy,
        /// Wrap it in full jitter.
        jitter: bool,
    },
    /// Fenced acquire + PostgreSQL write with the given guard (steps 5 and 6).
    Fenced {
        /// How the write checks the token.
        guard: WriteGuard,
    },
    /// Redlock on `nodes` independent Redis nodes; the balance in PostgreSQL, written
    /// unchecked, or (`cas`) only if the version read is unchanged, with the random token as
    /// the new version (Sanfilippo's check-and-set).
    Redlock {
        /// How many nodes (odd, 3..=9).
        nodes: u8,
        /// Check-and-set on the write.
        cas: bool,
    },
    /// PostgreSQL single-statement conditional debit, no lock.
    PgDebit,
    /// PostgreSQL `SELECT ... FOR UPDATE` transaction, no lock.
    PgForUpdate,
    /// A transfer between two wallets under `SELECT ... FOR UPDATE` on both rows, retried
    /// after 40P01; `ordered`: the rows are locked by id, else the source first.
    PgTransfer {
        /// Lock the rows in id order.
        ordered: bool,
    },
    /// Read-modify-write of the balance in a transaction at `isolation`, retried after 40001.
    PgIsolation {
        /// The transaction's isolation level.
        isolation: Isolation,
    },
    /// A safeguard described in a file ([`spec`]), registered in this process ([`user`]).
    User(user::UserId),
}

/// Where a safeguard keeps the balance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BalanceIn {
    /// A Redis string.
    Redis,
    /// The PostgreSQL `wallets` row.
    Postgres,
}

/// The keys one wallet uses in Redis.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keys {
    /// The balance (steps 1–4).
    pub balance: Vec<u8>,
    /// The lock.
    pub lock: Vec<u8>,
    /// The fence counter.
    pub fence: Vec<u8>,
}

impl Keys {
    /// `{prefix}wallet:{id}:balance`, `{prefix}lock:{wallet:{id}}`, `{prefix}fence:{wallet:{id}}`
    /// (the lock and fence share a hash tag).
    pub fn for_wallet(prefix: &str, id: i64) -> Keys {
        Keys {
            balance: format!("{prefix}wallet:{id}:balance").into_bytes(),
            lock: format!("{prefix}lock:{{wallet:{id}}}").into_bytes(),
            fence: format!("{prefix}fence:{{wallet:{id}}}").into_bytes(),
        }
    }
}

/// The parameters every caller of a run shares.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Params {
    /// The wallet (`wallets.id`).
    pub wallet_id: i64,
    /// How much each caller spends.
    pub amount: i64,
    /// How long the work between read and write takes.
    pub work_ms: u64,
    /// The lease duration.
    pub ttl_ms: u64,
    /// Give up acquiring after this long; none: the safeguard's default (redislock: the TTL,
    /// as `Obtain` without a context deadline; others: 5 s).
    pub acquire_timeout_ms: Option<u64>,
    /// The Redis keys.
    pub keys: Keys,
}

/// A parameter a safeguard cannot work with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

/// How long `lease-wait`'s `WAIT` waits for a replica: a quarter of the TTL (at least 1 ms), so
/// a lock trusted after it still has most of its lease.
pub fn wait_timeout_ms(ttl_ms: u64) -> u64 {
    (ttl_ms / 4).max(1)
}

/// The default acquire deadline of the hand-written locks (the tutorial's 5-second context).
pub const DEFAULT_ACQUIRE_TIMEOUT_MS: u64 = 5_000;

impl Safeguard {
    /// Every safeguard with its default options, in teaching order.
    pub fn catalogue() -> Vec<Safeguard> {
        let exponential = RetryStrategy::Exponential {
            min_ms: 16,
            max_ms: 128,
        };
        vec![
            Safeguard::NoLock,
            Safeguard::SetnxDel,
            Safeguard::SetnxExpire,
            Safeguard::Lease {
                release: ReleaseVia::Script,
            },
            Safeguard::Lease {
                release: ReleaseVia::Delex,
            },
            Safeguard::LeaseWatchdog,
            Safeguard::Redislock {
                retry: RetryStrategy::NoRetry,
                jitter: false,
            },
            Safeguard::Redislock {
                retry: exponential,
                jitter: false,
            },
            Safeguard::Redislock {
                retry: exponential,
                jitter: true,
            },
            Safeguard::Fenced {
                guard: WriteGuard::Unfenced,
            },
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelow,
            },
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelowAndEqual,
            },
            Safeguard::PgDebit,
            Safeguard::PgForUpdate,
            Safeguard::PgTransfer { ordered: true },
            Safeguard::PgTransfer { ordered: false },
            Safeguard::PgIsolation {
                isolation: Isolation::ReadCommitted,
            },
            Safeguard::PgIsolation {
                isolation: Isolation::RepeatableRead,
            },
            Safeguard::PgIsolation {
                isolation: Isolation::Serializable,
            },
        ]
    }

    /// True for the transfers between two wallets.
    pub fn is_transfer(&self) -> bool {
        matches!(self, Safeguard::PgTransfer { .. })
    }

    /// What each caller does with the money, for headers: `spend 10 from 100`, or for
    /// transfers `transfer 10 between two wallets of 100 each`.
    pub fn money_phrase(&self, amount: i64, initial_balance: i64) -> String {
        if self.is_transfer() {
            format!("transfer {amount} between two wallets of {initial_balance} each")
        } else {
            format!("spend {amount} from {initial_balance}")
        }
    }

    /// True when the safeguard's callers roll back and retry transactions PostgreSQL aborts
    /// (40P01, 40001), so a caller's request count grows with the other callers.
    pub fn retries_transactions(&self) -> bool {
        matches!(
            self,
            Safeguard::PgTransfer { .. }
                | Safeguard::PgIsolation {
                    isolation: Isolation::RepeatableRead | Isolation::Serializable
                }
        )
    }

    /// The safeguards that ask the replicas: `lease-wait` (not in [`Safeguard::catalogue`],
    /// whose rows run on a lone primary; the checker's World and the simulation host a
    /// replica for these, and the matrix gives them rows of their own).
    pub fn replicated() -> Vec<Safeguard> {
        vec![Safeguard::LeaseWait]
    }

    /// The safeguards on several independent Redis nodes (so far decided by the checker
    /// only; the simulation hosts one Redis): `redlock` and `redlock-cas` on 5 nodes.
    pub fn multi_node() -> Vec<Safeguard> {
        vec![
            Safeguard::Redlock {
                nodes: redlock::NODES_DEFAULT,
                cas: false,
            },
            Safeguard::Redlock {
                nodes: redlock::NODES_DEFAULT,
                cas: true,
            },
        ]
    }

    /// How many independent Redis nodes the safeguard locks on: 0 for the single-server
    /// safeguards (they use the one Redis, [`SINGLE_REDIS`]).
    pub fn redis_nodes(&self) -> u8 {
        match self {
            Safeguard::Redlock { nodes, .. } => *nodes,
            _ => 0,
        }
    }

    /// The same safeguard on `nodes` Redis nodes (Redlock only; others are unchanged).
    pub fn with_redis_nodes(self, nodes: u8) -> Safeguard {
        match self {
            Safeguard::Redlock { cas, .. } => Safeguard::Redlock { nodes, cas },
            other => other,
        }
    }

    /// The name used on the command line and in traces.
    pub fn name(&self) -> String {
        match self {
            Safeguard::NoLock => "no-lock".into(),
            Safeguard::SetnxDel => "setnx-del".into(),
            Safeguard::SetnxExpire => "setnx-expire".into(),
            Safeguard::Lease {
                release: ReleaseVia::Script,
            } => "lease".into(),
            Safeguard::Lease {
                release: ReleaseVia::Delex,
            } => "lease-delex".into(),
            Safeguard::LeaseWatchdog => "lease-watchdog".into(),
            Safeguard::LeaseWait => "lease-wait".into(),
            Safeguard::Redislock { retry, jitter } => {
                let retry = match retry {
                    RetryStrategy::NoRetry => "no-retry".to_string(),
                    RetryStrategy::Linear { backoff_ms } => format!("linear-{backoff_ms}ms"),
                    RetryStrategy::Exponential { min_ms, max_ms } => {
                        format!("exponential-{min_ms}ms-{max_ms}ms")
                    }
                };
                let jitter = if *jitter { "+jitter" } else { "" };
                format!("redislock-{retry}{jitter}")
            }
            Safeguard::Fenced {
                guard: WriteGuard::Unfenced,
            } => "fenced-unchecked".into(),
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelow,
            } => "fenced".into(),
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelowAndEqual,
            } => "fenced-cas".into(),
            Safeguard::Fenced {
                guard: WriteGuard::FenceEqual,
            } => "fenced-version".into(),
            Safeguard::Redlock { nodes, cas } => {
                let cas = if *cas { "-cas" } else { "" };
                if *nodes == redlock::NODES_DEFAULT {
                    format!("redlock{cas}")
                } else {
                    format!("redlock{cas}-{nodes}-nodes")
                }
            }
            Safeguard::PgDebit => "pg-debit".into(),
            Safeguard::PgForUpdate => "pg-for-update".into(),
            Safeguard::PgTransfer { ordered: true } => "pg-transfer-ordered".into(),
            Safeguard::PgTransfer { ordered: false } => "pg-transfer-unordered".into(),
            Safeguard::PgIsolation {
                isolation: Isolation::ReadCommitted,
            } => "pg-read-committed".into(),
            Safeguard::PgIsolation {
                isolation: Isolation::RepeatableRead,
            } => "pg-repeatable-read".into(),
            Safeguard::PgIsolation {
                isolation: Isolation::Serializable,
            } => "pg-serializable".into(),
            Safeguard::User(id) => user::get(*id).name.clone(),
        }
    }

    /// Parses a name produced by [`Safeguard::name`] (redislock names accept any numbers).
    pub fn parse(name: &str) -> Result<Safeguard, ParamError> {
        if let Some(found) = Safeguard::catalogue()
            .into_iter()
            .chain(Safeguard::replicated())
            .find(|s| s.name() == name)
        {
            return Ok(found);
        }
        if let Some(id) = user::find(name) {
            return Ok(Safeguard::User(id));
        }
        if let Some(rest) = name.strip_prefix("redislock-") {
            let (rest, jitter) = match rest.strip_suffix("+jitter") {
                Some(inner) => (inner, true),
                None => (rest, false),
            };
            let ms = |text: &str| text.strip_suffix("ms").and_then(|n| n.parse::<u64>().ok());
            let retry = if rest == "no-retry" {
                Some(RetryStrategy::NoRetry)
            } else if let Some(d) = rest.strip_prefix("linear-") {
                ms(d).map(|backoff_ms| RetryStrategy::Linear { backoff_ms })
            } else if let Some(bounds) = rest.strip_prefix("exponential-") {
                bounds.split_once('-').and_then(|(lo, hi)| {
                    Some(RetryStrategy::Exponential {
                        min_ms: ms(lo)?,
                        max_ms: ms(hi)?,
                    })
                })
            } else {
                None
            };
            if let Some(retry) = retry {
                return Ok(Safeguard::Redislock { retry, jitter });
            }
        }
        if let Some(rest) = name.strip_prefix("redlock") {
            let (rest, cas) = match rest.strip_prefix("-cas") {
                Some(rest) => (rest, true),
                None => (rest, false),
            };
            let nodes = if rest.is_empty() {
                Some(redlock::NODES_DEFAULT)
            } else {
                rest.strip_prefix('-')
                    .and_then(|n| n.strip_suffix("-nodes"))
                    .and_then(|n| n.parse::<u8>().ok())
            };
            if let Some(nodes) = nodes {
                return Ok(Safeguard::Redlock { nodes, cas });
            }
        }
        let known: Vec<String> = Safeguard::catalogue()
            .iter()
            .chain(Safeguard::replicated().iter())
            .chain(Safeguard::multi_node().iter())
            .map(Safeguard::name)
            .collect();
        Err(ParamError(format!(
            "unknown safeguard '{name}'; known safeguards: {} (redislock takes no-retry, linear-<N>ms or exponential-<MIN>ms-<MAX>ms, optionally +jitter; redlock and redlock-cas take -<N>-nodes, or --redis-nodes N); or describe your own in a file and pass --safeguard-file FILE",
            known.join(", ")
        )))
    }

    /// Where this safeguard keeps the balance.
    pub fn balance_in(&self) -> BalanceIn {
        match self {
            Safeguard::User(id) => user::get(*id).balance_in,
            Safeguard::Fenced { .. }
            | Safeguard::Redlock { .. }
            | Safeguard::PgDebit
            | Safeguard::PgForUpdate
            | Safeguard::PgTransfer { .. }
            | Safeguard::PgIsolation { .. } => BalanceIn::Postgres,
            _ => BalanceIn::Redis,
        }
    }

    /// True when the safeguard takes a Redis lock.
    pub fn uses_lock(&self) -> bool {
        if let Safeguard::User(id) = self {
            return user::get(*id).acquire.is_some();
        }
        !matches!(
            self,
            Safeguard::NoLock
                | Safeguard::PgDebit
                | Safeguard::PgForUpdate
                | Safeguard::PgTransfer { .. }
                | Safeguard::PgIsolation { .. }
        )
    }

    /// True when a watchdog refreshes the lease while the caller works (every TTL/3).
    pub fn has_watchdog(&self) -> bool {
        match self {
            Safeguard::LeaseWatchdog => true,
            Safeguard::User(id) => user::get(*id).refresh.is_some(),
            _ => false,
        }
    }

    /// True when the lock expires by itself: a lease with a TTL (a file's lock when its
    /// acquire or refresh names `{ttl_ms}`).
    pub fn has_ttl(&self) -> bool {
        match self {
            Safeguard::User(id) => user::get(*id).uses(user::Var::TtlMs),
            Safeguard::SetnxDel => false,
            _ => self.uses_lock(),
        }
    }

    /// True when a fence counter is kept in Redis (a file's when a request names
    /// `{fence_key}`).
    pub fn has_fence_counter(&self) -> bool {
        match self {
            Safeguard::Fenced { .. } => true,
            Safeguard::User(id) => user::get(*id).uses(user::Var::FenceKey),
            _ => false,
        }
    }

    /// Checks the parameters before anything runs.
    pub fn validate(&self, params: &Params) -> Result<(), ParamError> {
        if self.uses_lock() && params.ttl_ms < 1 {
            return Err(ParamError("TTL must be at least 1ms".into()));
        }
        if self.has_watchdog() && params.ttl_ms < 3 {
            return Err(ParamError(format!(
                "the watchdog refreshes every TTL/3, so it needs a TTL of at least 3ms (got {}ms)",
                params.ttl_ms
            )));
        }
        if let Safeguard::Redlock { nodes, .. } = self {
            let (min, max) = (redlock::NODES_MIN, redlock::NODES_MAX);
            if !(min..=max).contains(nodes) || nodes % 2 == 0 {
                return Err(ParamError(format!(
                    "Redlock needs an odd number of Redis nodes from {min} to {max} (got {nodes}); try --redis-nodes 5"
                )));
            }
        }
        if params.amount <= 0 {
            return Err(ParamError(format!(
                "the amount must be positive (got {})",
                params.amount
            )));
        }
        if self.is_transfer() && params.wallet_id == i64::MAX {
            return Err(ParamError(format!(
                "a transfer moves money between wallet N and N + 1; wallet {} has no successor (try --wallet-id 42)",
                params.wallet_id
            )));
        }
        Ok(())
    }

    /// The wallets the safeguard's callers use, by id: the run's wallet, and for transfers
    /// the next id too.
    pub fn wallet_ids(&self, params: &Params) -> Vec<i64> {
        match self {
            Safeguard::PgTransfer { .. } => {
                vec![params.wallet_id, params.wallet_id.saturating_add(1)]
            }
            _ => vec![params.wallet_id],
        }
    }

    /// Caller `caller`'s (1-based) transfer, `(from, to)`: odd callers move money from the
    /// run's wallet to the next one, even callers back, so transfers go both ways.
    pub fn transfer_direction(params: &Params, caller: u32) -> (i64, i64) {
        let (a, b) = (params.wallet_id, params.wallet_id.saturating_add(1));
        if caller % 2 == 1 {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// Caller `caller`'s (1-based) machine, with its random 128-bit token: as
    /// [`Safeguard::build`], and a transfer goes the caller's way
    /// ([`Safeguard::transfer_direction`]).
    pub fn build_caller(
        &self,
        params: &Params,
        caller: u32,
        token: u128,
    ) -> Result<Caller, ParamError> {
        if let Safeguard::PgTransfer { ordered } = *self {
            self.validate(params)?;
            let (from, to) = Safeguard::transfer_direction(params, caller);
            return Ok(Caller::PgTransfer(PgTransfer::new(
                from,
                to,
                params.amount,
                params.work_ms,
                ordered,
            )));
        }
        self.build(params, token)
    }

    /// One caller's machine, with its random 128-bit token.
    pub fn build(&self, params: &Params, token: u128) -> Result<Caller, ParamError> {
        self.validate(params)?;
        let token_number = token;
        let token = token_text(token);
        let keys = &params.keys;
        let redis_store = Store::Redis {
            key: keys.balance.clone(),
        };
        let lease = || Lease {
            key: keys.lock.as_slice().into(),
            token: token.as_slice().into(),
            ttl_ms: params.ttl_ms,
            release: ReleaseVia::Script,
            wait_ms: None,
        };
        let timeout = params
            .acquire_timeout_ms
            .unwrap_or(DEFAULT_ACQUIRE_TIMEOUT_MS);
        let config = |lock: Lock, store: Store| LockedSpendConfig {
            lock,
            store,
            retry: Retry::Jittered5To15,
            jitter: false,
            watchdog: None,
            amount: params.amount,
            work_ms: params.work_ms,
            acquire_timeout_ms: timeout,
        };
        let setnx = |expire_ttl_ms| {
            Lock::Setnx(naive::Setnx {
                key: keys.lock.as_slice().into(),
                value: token.as_slice().into(),
                expire_ttl_ms,
            })
        };
        let config = match *self {
            Safeguard::PgDebit => {
                return Ok(Caller::PgDebit(PgDebit::new(
                    params.wallet_id,
                    params.amount,
                    params.work_ms,
                )))
            }
            Safeguard::PgForUpdate => {
                return Ok(Caller::PgForUpdate(PgForUpdate::new(
                    params.wallet_id,
                    params.amount,
                    params.work_ms,
                )))
            }
            Safeguard::PgTransfer { .. } => return self.build_caller(params, 1, token_number),
            Safeguard::PgIsolation { isolation } => {
                return Ok(Caller::PgIsolated(PgIsolated::new(
                    params.wallet_id,
                    params.amount,
                    params.work_ms,
                    isolation,
                )))
            }
            Safeguard::NoLock => config(Lock::Nothing, redis_store),
            Safeguard::SetnxDel => config(setnx(None), redis_store),
            Safeguard::SetnxExpire => config(setnx(Some(params.ttl_ms)), redis_store),
            Safeguard::Lease { release } => {
                config(Lock::Lease(Lease { release, ..lease() }), redis_store)
            }
            Safeguard::LeaseWait => config(
                Lock::Lease(Lease {
                    wait_ms: Some(wait_timeout_ms(params.ttl_ms)),
                    ..lease()
                }),
                redis_store,
            ),
            Safeguard::LeaseWatchdog => LockedSpendConfig {
                watchdog: Some(Watchdog::new(params.ttl_ms)),
                ..config(Lock::Lease(lease()), redis_store)
            },
            Safeguard::Redislock { retry, jitter } => LockedSpendConfig {
                retry: match retry {
                    RetryStrategy::NoRetry => Retry::NoRetry,
                    RetryStrategy::Linear { backoff_ms } => Retry::Linear { backoff_ms },
                    RetryStrategy::Exponential { min_ms, max_ms } => Retry::Exponential {
                        min_ms,
                        max_ms,
                        count: 0,
                    },
                },
                jitter,
                acquire_timeout_ms: params.acquire_timeout_ms.unwrap_or(params.ttl_ms),
                ..config(
                    Lock::Redislock(redislock::Redislock {
                        key: keys.lock.as_slice().into(),
                        token: token.as_slice().into(),
                        ttl_ms: params.ttl_ms,
                    }),
                    redis_store,
                )
            },
            Safeguard::User(id) => {
                let spec = user::get(id);
                let lock = match spec.acquire {
                    Some(_) => Lock::User(user::UserLock {
                        spec: id,
                        keys: keys.clone(),
                        token: token.as_slice().into(),
                        ttl_ms: params.ttl_ms,
                        wallet_id: params.wallet_id,
                        amount: params.amount,
                    }),
                    None => Lock::Nothing,
                };
                let store = user::UserStore::new(id, keys, params.wallet_id, params.amount)
                    .map_err(ParamError)?;
                LockedSpendConfig {
                    retry: spec.retry,
                    jitter: spec.jitter,
                    watchdog: spec.refresh.as_ref().map(|_| Watchdog::new(params.ttl_ms)),
                    acquire_timeout_ms: params
                        .acquire_timeout_ms
                        .or(spec.acquire_timeout_ms)
                        .unwrap_or(DEFAULT_ACQUIRE_TIMEOUT_MS),
                    ..config(lock, Store::User(store))
                }
            }
            Safeguard::Redlock { nodes, cas } => config(
                Lock::Redlock(redlock::Redlock::new(
                    keys.lock.clone(),
                    token.clone(),
                    params.ttl_ms,
                    nodes,
                    cas.then(|| redlock::Redlock::cas_value(token_number)),
                )),
                Store::Postgres {
                    id: params.wallet_id,
                    guard: if cas {
                        WriteGuard::FenceEqual
                    } else {
                        WriteGuard::Unfenced
                    },
                },
            ),
            Safeguard::Fenced { guard } => config(
                Lock::Fenced(fenced::FencedLock {
                    key: keys.lock.as_slice().into(),
                    fence_key: keys.fence.as_slice().into(),
                    token: token.as_slice().into(),
                    ttl_ms: params.ttl_ms,
                }),
                Store::Postgres {
                    id: params.wallet_id,
                    guard,
                },
            ),
        };
        Ok(Caller::Locked(LockedSpend::new(config)))
    }
}

/// One caller's state machine, whichever safeguard it runs.
// Not boxed: the model checker clones callers constantly, and a box per clone costs more
// than the padding of the smaller variants.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Caller {
    /// A Redis-lock (or no-lock) safeguard.
    Locked(LockedSpend),
    /// The single-statement debit.
    PgDebit(PgDebit),
    /// The `FOR UPDATE` transaction.
    PgForUpdate(PgForUpdate),
    /// A transfer between two wallets.
    PgTransfer(PgTransfer),
    /// A read-modify-write at an isolation level.
    PgIsolated(PgIsolated),
}

impl Caller {
    /// Whether the caller is acquiring or releasing its Redis lock (none otherwise), for
    /// reply faults aimed at one of them.
    pub fn stage(&self) -> Option<crate::world::FaultsOn> {
        match self {
            Caller::Locked(machine) => machine.stage(),
            Caller::PgDebit(_)
            | Caller::PgForUpdate(_)
            | Caller::PgTransfer(_)
            | Caller::PgIsolated(_) => None,
        }
    }

    /// True while the caller believes it holds the Redis lock.
    pub fn believes_it_holds(&self) -> bool {
        match self {
            Caller::Locked(machine) => machine.believes_it_holds(),
            Caller::PgDebit(_)
            | Caller::PgForUpdate(_)
            | Caller::PgTransfer(_)
            | Caller::PgIsolated(_) => false,
        }
    }
}

impl Machine for Caller {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        match self {
            Caller::Locked(machine) => machine.next(now_ms, input),
            Caller::PgDebit(machine) => machine.next(now_ms, input),
            Caller::PgForUpdate(machine) => machine.next(now_ms, input),
            Caller::PgTransfer(machine) => machine.next(now_ms, input),
            Caller::PgIsolated(machine) => machine.next(now_ms, input),
        }
    }

    fn stats(&self) -> CallerStats {
        match self {
            Caller::Locked(machine) => machine.stats(),
            Caller::PgDebit(machine) => machine.stats(),
            Caller::PgForUpdate(machine) => machine.stats(),
            Caller::PgTransfer(machine) => machine.stats(),
            Caller::PgIsolated(machine) => machine.stats(),
        }
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        match self {
            Caller::Locked(machine) => machine.reading(input),
            Caller::PgDebit(machine) => machine.reading(input),
            Caller::PgForUpdate(machine) => machine.reading(input),
            Caller::PgTransfer(machine) => machine.reading(input),
            Caller::PgIsolated(machine) => machine.reading(input),
        }
    }
}
