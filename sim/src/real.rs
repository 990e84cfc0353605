//! Real mode: the same safeguard machines, the same clients and the same client policy as the
//! simulation, against a real Redis and a real PostgreSQL over real TCP, with real sleeps.
//!
//! Only what the simulation provides is replaced (the driver's `Surroundings`): the clock
//! is tokio's (milliseconds since the release), connections are real TCP connections to the
//! servers the URLs name, and there is no added latency (the real network has its own). Random
//! draws — lock tokens, jittered sleeps, retry backoffs — still come from each caller's ChaCha
//! stream seeded by the run seed, but the timing is the machine's and the servers', so a run is
//! not reproducible: its digest identifies that one run only.
//!
//! # Isolation
//!
//! Each run works on keys of its own, `leaselab:<pid>:<seed>:<n>:` followed by the usual
//! names (the lock and the fence counter keep their `{wallet:42}` hash tag), and, when the
//! balance lives in PostgreSQL, in a schema of its own, `leaselab_<pid>_<seed>_<n>`, with the
//! tutorial's `wallets` table; every caller session sets `search_path` to it. Keys and schema
//! are removed when the run ends, also when it fails or panics.
//!
//! # Redlock's nodes
//!
//! Node n is a server of its own when `RealConfig::redis_node_urls` names one per node
//! (`run --redis-node-url URL`, once per node: independent processes, as Redlock assumes),
//! else database n of the `--redis` server (independent keyspaces in one process). The lock
//! key is deleted on every node before the run and after it.
//!
//! # What cannot run for real
//!
//! GC pauses are real sleeps of the caller's loop and work as in the simulation. Failovers,
//! Redis restarts, partitions and clock jumps need the simulator's control of servers,
//! network and clocks: a scenario with any of them is refused ([`validate`]).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use leaselab_model::fault::Fault;
use leaselab_model::redis::{Reply, ScriptId};
use leaselab_model::safeguard::{BalanceIn, Keys, ParamError, RedisRequest};
use leaselab_model::scenario::{Scenario, DEFAULT_DEADLOCK_TIMEOUT_MS};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::{ConnectionAddr, IntoConnectionInfo};
use tokio::sync::{watch, Notify};
use tokio::time::Instant;
use tokio_postgres::config::Host;

use crate::clients::{
    postgres_over_stream, postgres_real, redis_over_stream, redis_url, redis_url_in_db,
};
use crate::driver::{drive, CallerEnd, Surroundings};
use crate::events::{Event, What};
use crate::run::{assemble, caller_specs, host_rng, FinalState, RunReport};
use leaselab_model::client::{ClientPolicy, Server};

/// Where the real servers are and how the run behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealConfig {
    /// `redis://host:port[/db]` (needed when the safeguard uses Redis).
    pub redis_url: Option<String>,
    /// Redlock's nodes as separate Redis servers, node n at `redis_node_urls[n - 1]`. Empty:
    /// node n is database n of the server at `redis_url`.
    pub redis_node_urls: Vec<String>,
    /// `postgres://user@host[:port]/db` (needed when the balance lives in PostgreSQL).
    pub postgres_url: Option<String>,
    /// How the clients react to timeouts and broken connections (as in the simulation).
    pub client: ClientPolicy,
    /// The run stops this long after the release even if callers are still running.
    pub horizon_ms: u64,
}

impl RealConfig {
    /// The given servers, the simulation's client policy and horizon.
    pub fn new(redis_url: Option<String>, postgres_url: Option<String>) -> RealConfig {
        let sim = crate::run::SimConfig::default();
        RealConfig {
            redis_url,
            redis_node_urls: Vec::new(),
            postgres_url,
            client: sim.client,
            horizon_ms: sim.horizon_ms,
        }
    }
}

/// Why a real run did not happen or did not finish cleanly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RealError {
    /// The scenario cannot run for real (or at all); the message says why and what to do.
    Refused(String),
    /// A server could not be reached, set up, read or cleaned up.
    Server(String),
}

impl fmt::Display for RealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RealError::Refused(text) | RealError::Server(text) => write!(f, "{text}"),
        }
    }
}

impl std::error::Error for RealError {}

impl From<ParamError> for RealError {
    fn from(error: ParamError) -> RealError {
        RealError::Refused(error.0)
    }
}

/// True when the safeguard talks to Redis (a lock, or the balance).
pub fn needs_redis(scenario: &Scenario) -> bool {
    scenario.safeguard.uses_lock() || scenario.balance_in() == BalanceIn::Redis
}

/// True when the balance lives in PostgreSQL.
pub fn needs_postgres(scenario: &Scenario) -> bool {
    scenario.balance_in() == BalanceIn::Postgres
}

/// Checks that `scenario` can run against real servers with `config`: a valid scenario, no
/// fault that needs the simulator, a URL for every server the safeguard uses. The error says
/// which fault or URL and why.
pub fn validate(scenario: &Scenario, config: &RealConfig) -> Result<(), RealError> {
    scenario.validate()?;
    for fault in &scenario.faults {
        let why = match fault {
            // The client's own faults: the driver carries them out against real servers too.
            Fault::Pause { .. } | Fault::LostReply { .. } | Fault::DroppedConnection { .. } => {
                continue
            }
            Fault::Failover { .. } => {
                "a failover needs the simulator's Redis replica, whose replication lag decides \
                 which lock keys and fence INCRs are lost"
            }
            Fault::ReplicaRestart { .. } => {
                "a replica restart needs the simulator's replica; a real Redis here has none"
            }
            Fault::RedisRestart { .. } => {
                "a restart without persistence would empty a real Redis server; only the \
                 simulator's stand-in can be restarted"
            }
            Fault::RedisCrashAof { .. } => {
                "a machine crash would take down a real Redis server; only the simulator's \
                 stand-in can crash and reload its append-only file"
            }
            Fault::EvictFenceCounter { .. } => {
                "an eviction would delete a real Redis server's key behind its maxmemory \
                 policy's back; only the simulator's stand-in evicts on cue"
            }
            Fault::Partition { .. } => {
                "a partition needs the simulator's network, which drops the segments on a cut \
                 link; real TCP connections cannot be cut from here"
            }
            Fault::ClockDrift { .. } | Fault::ClockSlew { .. } => {
                "a drifting or slewing clock needs the simulator's server clocks; a real Redis \
                 uses the machine's clock"
            }
            Fault::ClockJump { .. } => {
                "a clock jump needs the simulator's server clocks; a real Redis uses the \
                 machine's clock"
            }
            Fault::NodeRestart { .. } => {
                "a node restart would empty a real Redis server; only the simulator's \
                 stand-ins can be restarted"
            }
        };
        return Err(RealError::Refused(format!(
            "{}: cannot run against real servers: {why}. Run it without --redis/--postgres (in \
             the simulation), or drop the fault (--no-faults); GC pauses (--pause) do run for real",
            fault.describe()
        )));
    }
    let nodes = usize::from(scenario.safeguard.redis_nodes());
    if !config.redis_node_urls.is_empty() && config.redis_node_urls.len() != nodes {
        return Err(RealError::Refused(if nodes == 0 {
            format!(
                "{} locks on one Redis: --redis-node-url names a Redlock node's server; drop it, \
                 or run a redlock safeguard",
                scenario.name
            )
        } else {
            format!(
                "{} locks on {nodes} Redis nodes but {} --redis-node-url URL{} given: give one per \
                 node (node n is the n-th), or none to run every node as a database of --redis",
                scenario.name,
                config.redis_node_urls.len(),
                if config.redis_node_urls.len() == 1 { " was" } else { "s were" }
            )
        }));
    }
    // Redlock's lock lives on its nodes: with a server per node, `--redis` is needed only
    // for a balance kept in Redis.
    let nodes_elsewhere = nodes > 0 && !config.redis_node_urls.is_empty();
    let needs_main_redis = if nodes_elsewhere {
        scenario.balance_in() == BalanceIn::Redis
    } else {
        needs_redis(scenario)
    };
    if needs_main_redis && config.redis_url.is_none() {
        return Err(RealError::Refused(format!(
            "{} uses Redis: give --redis URL, e.g. --redis redis://127.0.0.1:6379",
            scenario.name
        )));
    }
    if needs_postgres(scenario) && config.postgres_url.is_none() {
        return Err(RealError::Refused(format!(
            "{} keeps the balance in PostgreSQL: give --postgres URL, e.g. --postgres \
             postgres://postgres@127.0.0.1/test",
            scenario.name
        )));
    }
    Ok(())
}

/// Runs `scenario` once against the real servers, with `seed` for the callers' random streams.
/// Refuses a scenario it cannot run (see [`validate`]) before touching the servers; removes
/// the run's keys and schema afterwards.
pub fn run(scenario: &Scenario, seed: u64, config: &RealConfig) -> Result<RunReport, RealError> {
    validate(scenario, config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| RealError::Server(format!("cannot start a tokio runtime: {error}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, run_isolated(scenario, seed, config))
}

/// A process-wide counter, so that runs with the same seed in one process never share keys.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The names a run works under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// The Redis key prefix, `leaselab:<pid>:<seed>:<n>:`.
    pub prefix: String,
    /// The PostgreSQL schema, `leaselab_<pid>_<seed>_<n>`.
    pub schema: String,
}

impl Namespace {
    /// A namespace no other run of this process uses.
    pub fn fresh(seed: u64) -> Namespace {
        let pid = std::process::id();
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        Namespace {
            prefix: format!("leaselab:{pid}:{seed}:{n}:"),
            schema: format!("leaselab_{pid}_{seed}_{n}"),
        }
    }
}

/// Sets the run's namespace up, runs it, and cleans up whatever happened.
async fn run_isolated(
    scenario: &Scenario,
    seed: u64,
    config: &RealConfig,
) -> Result<RunReport, RealError> {
    let namespace = Namespace::fresh(seed);
    let mut scenario = scenario.clone();
    scenario.params.keys = Keys::for_wallet(&namespace.prefix, scenario.params.wallet_id);
    let mut admin = Admin::connect(&scenario, config, &namespace).await?;
    // From here on the namespace exists (at least partly): clean it up on every path. The
    // guard does it from its own thread if this future unwinds.
    let guard = CleanupGuard {
        admin: Some(admin.cleanup_plan()),
    };
    let result: Result<RunReport, RealError> = async {
        admin.seed(&scenario).await?;
        let outcome = drive_callers(&scenario, seed, config, &namespace).await?;
        let state = admin.final_state(&scenario).await?;
        Ok(assemble(
            &scenario,
            seed,
            &outcome.ends,
            state,
            outcome.events,
            outcome.finished,
            outcome.tokens_issued,
        ))
    }
    .await;
    let cleaned = admin.cleanup().await;
    guard.disarm();
    let report = result?;
    cleaned?;
    Ok(report)
}

/// What the callers did.
struct CallersOutcome {
    ends: Vec<Option<CallerEnd>>,
    events: Vec<Event>,
    finished: Result<(), u64>,
    tokens_issued: Vec<i64>,
}

/// Spawns every caller on this thread, releases them together once all have opened their
/// connections, and waits for their ends (or the horizon).
async fn drive_callers(
    scenario: &Scenario,
    seed: u64,
    config: &RealConfig,
    namespace: &Namespace,
) -> Result<CallersOutcome, RealError> {
    let postgres = match (&config.postgres_url, needs_postgres(scenario)) {
        (Some(url), true) => {
            let mut parsed: tokio_postgres::Config = url
                .parse()
                .map_err(|error| RealError::Refused(format!("--postgres {url}: {error}")))?;
            let mut options = format!("-csearch_path={}", namespace.schema);
            // deadlock_timeout is a superuser setting: set only when the scenario changes it.
            if scenario.deadlock_timeout_ms != DEFAULT_DEADLOCK_TIMEOUT_MS {
                options.push_str(&format!(
                    " -cdeadlock_timeout={}ms",
                    scenario.deadlock_timeout_ms
                ));
            }
            parsed.options(options);
            Some((parsed, url.clone()))
        }
        _ => None,
    };
    let (release_tx, _) = watch::channel(None);
    let env = Rc::new(RealWorld {
        policy: config.client,
        redis_url: config.redis_url.clone().unwrap_or_default(),
        nodes: NodePlace::all(scenario, config),
        postgres,
        callers: scenario.callers,
        ready: Cell::new(0),
        all_ready: Notify::new(),
        release: release_tx,
        log: RefCell::new(Vec::new()),
        ends: RefCell::new(vec![None; scenario.callers as usize]),
        tokens_issued: RefCell::new(Vec::new()),
    });
    let (mut specs, _owners) = caller_specs(scenario, seed)?;
    // The same seeded spawn order as the simulation's host order.
    specs.shuffle(&mut host_rng(seed, "world"));
    let handles: Vec<_> = specs
        .into_iter()
        .map(|spec| tokio::task::spawn_local(drive(spec, env.clone())))
        .collect();

    // Set-up: every caller opens its connections (each bounded by the dial timeout).
    let setup = Duration::from_millis(2 * config.client.dial_timeout_ms + 1_000);
    let _ = tokio::time::timeout(setup, env.all_ready.notified()).await;
    let release = Instant::now() + Duration::from_millis(1);
    env.log_at(
        release,
        "world",
        What::Released {
            callers: scenario.callers,
        },
    );
    env.release.send_replace(Some(release));

    let horizon = release + Duration::from_millis(config.horizon_ms);
    let mut handles = handles;
    let waited = tokio::time::timeout_at(horizon, async {
        for handle in handles.iter_mut() {
            // A caller that panicked never finished: it counts as failed.
            let _ = handle.await;
        }
    })
    .await;
    let finished = match waited {
        Ok(()) => Ok(()),
        Err(_) => {
            for handle in &handles {
                handle.abort();
            }
            let unfinished = env.ends.borrow().iter().filter(|e| e.is_none()).count();
            env.log(
                "world",
                What::Horizon {
                    unfinished: unfinished as u32,
                },
            );
            Err(config.horizon_ms)
        }
    };
    // Let aborted callers drop their connections before the namespace is removed.
    for handle in handles {
        if !handle.is_finished() {
            let _ = handle.await;
        }
    }
    let events = env
        .log
        .take()
        .into_iter()
        .map(|(at, host, what)| Event {
            t_us: signed_us(at, release),
            host,
            what,
        })
        .collect();
    Ok(CallersOutcome {
        ends: env.ends.take(),
        events,
        finished,
        tokens_issued: env.tokens_issued.take(),
    })
}

/// Microseconds from `origin` to `at` (negative before it).
fn signed_us(at: Instant, origin: Instant) -> i64 {
    if at >= origin {
        (at - origin).as_micros() as i64
    } else {
        -((origin - at).as_micros() as i64)
    }
}

/// What every caller of a real run shares (all run on one thread).
struct RealWorld {
    policy: ClientPolicy,
    redis_url: String,
    /// Redlock's nodes, node n at index n − 1.
    nodes: Vec<NodePlace>,
    /// The callers' session configuration (with the run's `search_path`) and its URL.
    postgres: Option<(tokio_postgres::Config, String)>,
    callers: u32,
    /// Callers done with their set-up.
    ready: Cell<u32>,
    /// Signalled when the last caller is ready.
    all_ready: Notify,
    /// The release instant, once set.
    release: watch::Sender<Option<Instant>>,
    /// Events with their real instants (turned into times since the release at the end).
    log: RefCell<Vec<(Instant, String, What)>>,
    ends: RefCell<Vec<Option<CallerEnd>>>,
    /// Tokens the fenced-acquire script handed out, as the callers saw them.
    tokens_issued: RefCell<Vec<i64>>,
}

impl RealWorld {
    fn log_at(&self, at: Instant, host: &str, what: What) {
        self.log.borrow_mut().push((at, host.to_string(), what));
    }
}

impl Surroundings for RealWorld {
    fn policy(&self) -> ClientPolicy {
        self.policy
    }

    fn caller_ms(&self) -> u64 {
        match *self.release.borrow() {
            Some(release) => Instant::now()
                .saturating_duration_since(release)
                .as_millis() as u64,
            None => 0,
        }
    }

    fn log(&self, host: &str, what: What) {
        self.log_at(Instant::now(), host, what);
    }

    async fn wait_for_start(&self, start_offset_ms: u64) {
        self.ready.set(self.ready.get() + 1);
        if self.ready.get() == self.callers {
            self.all_ready.notify_one();
        }
        let mut release = self.release.subscribe();
        let Ok(at) = release.wait_for(Option::is_some).await.map(|at| *at) else {
            return;
        };
        let at = at.expect("waited for it");
        tokio::time::sleep_until(at + Duration::from_millis(start_offset_ms)).await;
    }

    async fn open_redis(&self, server: Server) -> Result<MultiplexedConnection, String> {
        if let Server::Node(node) = server {
            let place = usize::from(node)
                .checked_sub(1)
                .and_then(|at| self.nodes.get(at))
                .ok_or_else(|| format!("Redlock node {node} does not exist in this run"))?;
            return place.open().await.map_err(|error| error.to_string());
        }
        redis_url(&self.redis_url, None)
            .await
            .map_err(|error| error.to_string())
    }

    async fn open_postgres(
        &self,
        application_name: &str,
    ) -> Result<tokio_postgres::Client, String> {
        let Some((config, url)) = &self.postgres else {
            return Err("no PostgreSQL URL was given".to_string());
        };
        let mut config = config.clone();
        config.application_name(application_name);
        postgres_real(&config, url)
            .await
            .map_err(|error| error.to_string())
    }

    /// The real network has its own latency: nothing is added, nothing is drawn.
    async fn network_delay(&self, _rng: &mut ChaCha8Rng) {}

    fn finish(&self, index: u32, end: CallerEnd) {
        self.ends.borrow_mut()[index as usize - 1] = Some(end);
    }

    fn redis_replied(&self, request: &RedisRequest, reply: &Reply) {
        if let (
            RedisRequest::Script {
                script: ScriptId::FencedAcquire,
                ..
            },
            Reply::Integer(token),
        ) = (request, reply)
        {
            self.tokens_issued.borrow_mut().push(*token);
        }
    }
}

/// Where real mode keeps one of Redlock's nodes: a server of its own (`--redis-node-url URL`),
/// or database n of the one `--redis` server (`db: Some(n)`: independent keyspaces in one
/// process, so not independent machines).
#[derive(Clone, Debug, PartialEq, Eq)]
struct NodePlace {
    url: String,
    db: Option<i64>,
}

impl NodePlace {
    /// Every Redlock node of `scenario` (none for a single-Redis safeguard), node n first at
    /// index n − 1.
    fn all(scenario: &Scenario, config: &RealConfig) -> Vec<NodePlace> {
        let nodes = scenario.safeguard.redis_nodes();
        if !config.redis_node_urls.is_empty() {
            return config
                .redis_node_urls
                .iter()
                .map(|url| NodePlace {
                    url: url.clone(),
                    db: None,
                })
                .collect();
        }
        let url = config.redis_url.clone().unwrap_or_default();
        (1..=nodes)
            .map(|node| NodePlace {
                url: url.clone(),
                db: Some(i64::from(node)),
            })
            .collect()
    }

    /// A connection to the node (its database selected).
    async fn open(&self) -> Result<MultiplexedConnection, crate::clients::ConnectError> {
        match self.db {
            Some(db) => redis_url_in_db(&self.url, db).await,
            None => redis_url(&self.url, None).await,
        }
    }

    /// `URL` or `URL (database n)`, for messages.
    fn describe(&self) -> String {
        match self.db {
            Some(db) => format!("{} (database {db})", self.url),
            None => self.url.clone(),
        }
    }
}

/// Deletes `key` on every node in `nodes` (each within [`COMMAND_TIMEOUT`]).
async fn delete_on_nodes(
    nodes: &mut [(MultiplexedConnection, NodePlace)],
    key: &[u8],
    what: &str,
) -> Result<(), RealError> {
    for (connection, place) in nodes.iter_mut() {
        let url = place.describe();
        within(
            &url,
            what,
            redis::cmd("DEL").arg(key).query_async::<()>(connection),
        )
        .await?
        .map_err(|error| RealError::Server(redis_failure(&url, what, &error)))?;
    }
    Ok(())
}

/// The run's own connections for seeding, reading and cleaning up.
struct Admin {
    redis: Option<(MultiplexedConnection, String)>,
    /// Redlock's nodes (none for a single Redis), each with a connection of its own.
    nodes: Vec<(MultiplexedConnection, NodePlace)>,
    postgres: Option<(tokio_postgres::Client, String)>,
    plan: CleanupPlan,
}

/// What to remove when a run ends.
#[derive(Clone, Debug)]
struct CleanupPlan {
    /// The Redis URL, the run's keys, and their prefix (a safeguard file may name keys of its
    /// own, such as `{balance_key}:fence`; every key under the prefix goes too).
    redis: Option<(String, Vec<Vec<u8>>, String)>,
    /// Redlock's nodes and the lock key to delete on each.
    nodes: Vec<(NodePlace, Vec<u8>)>,
    postgres: Option<(String, String)>,
}

impl Admin {
    async fn connect(
        scenario: &Scenario,
        config: &RealConfig,
        namespace: &Namespace,
    ) -> Result<Admin, RealError> {
        let keys = &scenario.params.keys;
        let mut admin = Admin {
            nodes: Vec::new(),
            redis: None,
            postgres: None,
            plan: CleanupPlan {
                redis: None,
                nodes: Vec::new(),
                postgres: None,
            },
        };
        // Every URL given is checked, also one the scenario does not need: a wrong URL is
        // reported rather than silently ignored.
        if let Some(url) = &config.redis_url {
            let connection = connect_redis_checked(url).await?;
            if !needs_redis(scenario) {
                drop(connection);
            } else {
                admin.redis = Some((connection, url.clone()));
                admin.plan.redis = Some((
                    url.clone(),
                    vec![keys.balance.clone(), keys.lock.clone(), keys.fence.clone()],
                    namespace.prefix.clone(),
                ));
            }
        }
        for place in NodePlace::all(scenario, config) {
            // Every node's server is checked as `--redis` is, then opened on its database.
            drop(connect_redis_checked(&place.url).await?);
            let connection = place.open().await.map_err(|error| {
                RealError::Server(format!("Redis {}: connecting: {error}", place.describe()))
            })?;
            admin.plan.nodes.push((place.clone(), keys.lock.clone()));
            admin.nodes.push((connection, place));
        }
        if let Some(url) = &config.postgres_url {
            let client = connect_postgres_checked(url).await?;
            if needs_postgres(scenario) {
                admin.postgres = Some((client, url.clone()));
                admin.plan.postgres = Some((url.clone(), namespace.schema.clone()));
            }
        }
        Ok(admin)
    }

    fn cleanup_plan(&self) -> CleanupPlan {
        self.plan.clone()
    }

    /// The wallet, the fence counter, no lock.
    async fn seed(&mut self, scenario: &Scenario) -> Result<(), RealError> {
        let keys = &scenario.params.keys;
        if let Some((connection, url)) = &mut self.redis {
            let mut pipe = redis::pipe();
            pipe.cmd("DEL")
                .arg(&keys.balance)
                .arg(&keys.lock)
                .arg(&keys.fence)
                .ignore();
            if scenario.balance_in() == BalanceIn::Redis {
                pipe.cmd("SET")
                    .arg(&keys.balance)
                    .arg(scenario.initial_balance)
                    .ignore();
            }
            if scenario.initial_fence_counter != 0 {
                pipe.cmd("SET")
                    .arg(&keys.fence)
                    .arg(scenario.initial_fence_counter)
                    .ignore();
            }
            within(url, "seeding", pipe.query_async::<()>(connection))
                .await?
                .map_err(|error| RealError::Server(redis_failure(url, "seeding", &error)))?;
        }
        delete_on_nodes(&mut self.nodes, &keys.lock, "seeding").await?;
        if let (Some((client, url)), Some((_, schema))) = (&self.postgres, &self.plan.postgres) {
            within(
                url,
                &format!("creating {schema}"),
                client.batch_execute(&format!(
                    "CREATE SCHEMA {schema};
                     CREATE TABLE {schema}.wallets (
                         id      bigint PRIMARY KEY,
                         balance bigint NOT NULL CHECK (balance >= 0),
                         fence   bigint NOT NULL DEFAULT 0
                     );
                     INSERT INTO {schema}.wallets (id, balance) VALUES {};",
                    scenario
                        .wallet_ids()
                        .iter()
                        .map(|id| format!("({id}, {})", scenario.initial_balance))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            )
            .await?
            .map_err(|error| {
                RealError::Server(format!("PostgreSQL {url}: creating {schema}: {error}"))
            })?;
        }
        Ok(())
    }

    /// The balance, the fence, the counter, the lock, as the servers hold them now.
    async fn final_state(&mut self, scenario: &Scenario) -> Result<FinalState, RealError> {
        let keys = &scenario.params.keys;
        let mut state = FinalState {
            balances: vec![None; scenario.wallet_ids().len()],
            final_fence: None,
            fence_counter: None,
            lock_left_behind: false,
        };
        if let Some((connection, url)) = &mut self.redis {
            let read = |error: redis::RedisError| {
                RealError::Server(redis_failure(url, "reading the final state", &error))
            };
            let mut pipe = redis::pipe();
            pipe.cmd("GET")
                .arg(&keys.balance)
                .cmd("GET")
                .arg(&keys.fence)
                .cmd("EXISTS")
                .arg(&keys.lock);
            let (balance, counter, lock): (Option<String>, Option<String>, bool) =
                within(url, "reading the final state", pipe.query_async(connection))
                    .await?
                    .map_err(read)?;
            if scenario.balance_in() == BalanceIn::Redis {
                state.balances = vec![balance.and_then(|text| text.parse().ok())];
            }
            state.fence_counter = counter.and_then(|text| text.parse().ok());
            state.lock_left_behind = scenario.safeguard.uses_lock() && lock;
        }
        if let (Some((client, url)), Some((_, schema))) = (&self.postgres, &self.plan.postgres) {
            let sql = format!("SELECT balance, fence FROM {schema}.wallets WHERE id = $1");
            for (at, id) in scenario.wallet_ids().into_iter().enumerate() {
                let row = within(url, "reading the wallet", client.query_opt(&sql, &[&id]))
                    .await?
                    .map_err(|error| {
                        RealError::Server(format!("PostgreSQL {url}: reading wallet {id}: {error}"))
                    })?;
                if let Some(row) = row {
                    state.balances[at] = row.try_get::<_, i64>(0).ok();
                    if id == scenario.params.wallet_id {
                        state.final_fence = row.try_get::<_, i64>(1).ok();
                    }
                }
            }
        }
        Ok(state)
    }

    /// Deletes the run's keys and drops its schema.
    async fn cleanup(&mut self) -> Result<(), RealError> {
        let mut errors = Vec::new();
        if let (Some((connection, url)), Some((_, keys, prefix))) =
            (&mut self.redis, &self.plan.redis)
        {
            let mut del = redis::pipe();
            del.cmd("DEL").ignore();
            for key in keys {
                del.arg(key);
            }
            match within(
                url,
                "deleting the run's keys",
                del.query_async::<()>(connection),
            )
            .await
            {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    errors.push(redis_failure(url, "deleting the run's keys", &error))
                }
                Err(error) => errors.push(error.to_string()),
            }
            match within(
                url,
                "deleting the run's other keys",
                delete_prefixed(connection, prefix),
            )
            .await
            {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    errors.push(redis_failure(url, "deleting the run's other keys", &error))
                }
                Err(error) => errors.push(error.to_string()),
            }
        }
        if let Some((_, lock)) = self.plan.nodes.first() {
            let lock = lock.clone();
            if let Err(error) =
                delete_on_nodes(&mut self.nodes, &lock, "deleting the run's lock key").await
            {
                errors.push(error.to_string());
            }
        }
        if let (Some((client, url)), Some((_, schema))) = (&self.postgres, &self.plan.postgres) {
            let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
            match within(
                url,
                &format!("dropping schema {schema}"),
                client.batch_execute(&drop),
            )
            .await
            {
                Ok(Ok(())) => {}
                Ok(Err(error)) => errors.push(format!(
                    "PostgreSQL {url}: dropping schema {schema}: {error}"
                )),
                Err(error) => errors.push(error.to_string()),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(RealError::Server(errors.join("; ")))
        }
    }
}

/// Deletes every key under `prefix` (`SCAN ... MATCH prefix*`, at most
/// [`MAX_CLEANUP_SCANS`] rounds): the keys a safeguard file named beside the run's own.
async fn delete_prefixed<C: redis::aio::ConnectionLike>(
    connection: &mut C,
    prefix: &str,
) -> redis::RedisResult<()> {
    debug_assert!(
        !prefix.contains(['*', '?', '[', '\\']),
        "a prefix with no glob characters"
    );
    let pattern = format!("{prefix}*");
    let mut cursor: u64 = 0;
    for _ in 0..MAX_CLEANUP_SCANS {
        let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1_000)
            .query_async(connection)
            .await?;
        if !keys.is_empty() {
            redis::cmd("DEL")
                .arg(keys)
                .query_async::<()>(connection)
                .await?;
        }
        if next == 0 {
            break;
        }
        cursor = next;
    }
    Ok(())
}

/// How many `SCAN` rounds a cleanup takes at most (1,000 keys looked at per round).
const MAX_CLEANUP_SCANS: usize = 1_000;

/// How long connecting to a real server, its handshake and a first command may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one of the run's own commands (seeding, reading the final state, cleaning up) may
/// take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs one of the run's own commands on the server at `url` within [`COMMAND_TIMEOUT`].
async fn within<T>(
    url: &str,
    what: &str,
    command: impl std::future::Future<Output = T>,
) -> Result<T, RealError> {
    tokio::time::timeout(COMMAND_TIMEOUT, command)
        .await
        .map_err(|_| {
            RealError::Server(format!(
                "{url}: {what}: no answer within {}s; the server is not usable (overloaded, stopped, or not the server the URL should name)",
                COMMAND_TIMEOUT.as_secs()
            ))
        })
}

/// A failed command of the run's own on Redis, in a user's words.
fn redis_failure(url: &str, what: &str, error: &redis::RedisError) -> String {
    if error.is_timeout() {
        format!(
            "Redis {url}: {what}: no answer within {}s; the server is not usable (overloaded, \
             stopped, or not a Redis server)",
            CONNECT_TIMEOUT.as_secs()
        )
    } else {
        format!("Redis {url}: {what}: {error}")
    }
}

/// Why a connection attempt failed, in a user's words: `what` is what was being done.
fn io_failure(error: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ConnectionRefused => "nothing listens there",
        ErrorKind::BrokenPipe
        | ErrorKind::ConnectionReset
        | ErrorKind::ConnectionAborted
        | ErrorKind::UnexpectedEof => "the server closed the connection",
        _ => "",
    }
}

/// Connects to the Redis `url` names, with a deadline on each step, and checks that it is a
/// Redis server by sending `PING`. Every failure names the URL and what was expected.
pub async fn connect_redis_checked(url: &str) -> Result<MultiplexedConnection, RealError> {
    let fail = |why: String| RealError::Server(format!("--redis {url}: {why}"));
    let info = url.into_connection_info().map_err(|error| {
        fail(format!(
            "not a usable Redis URL ({error}); write it as redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379"
        ))
    })?;
    let ConnectionAddr::Tcp(host, port) = info.addr() else {
        return Err(fail(
            "only plain TCP redis://HOST:PORT URLs are supported (no TLS, no unix sockets)"
                .to_string(),
        ));
    };
    let address = format!("{host}:{port}");
    let secs = CONNECT_TIMEOUT.as_secs();
    let stream = connect_tcp(host, *port, "Redis").await.map_err(fail)?;
    let not_redis = |what: String| {
        fail(format!(
            "the server at {address} is not a Redis server, or not a usable one: {what}; point --redis at a Redis server (a PostgreSQL URL belongs to --postgres)"
        ))
    };
    let handshake = async {
        let mut connection =
            redis_over_stream(stream, info.redis_settings(), Some(CONNECT_TIMEOUT)).await?;
        let pong: redis::Value = redis::cmd("PING").query_async(&mut connection).await?;
        Ok::<_, crate::clients::ConnectError>((connection, pong))
    };
    match tokio::time::timeout(CONNECT_TIMEOUT + Duration::from_millis(500), handshake).await {
        Err(_) => Err(not_redis(format!("it did not answer PING within {secs}s"))),
        Ok(Err(crate::clients::ConnectError::Redis(error))) if error.is_timeout() => {
            Err(not_redis(format!("it did not answer PING within {secs}s")))
        }
        Ok(Err(crate::clients::ConnectError::Redis(error)))
            if error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError)
                || error.code().is_some() =>
        {
            Err(fail(format!("Redis at {address} refused PING: {error}")))
        }
        Ok(Err(error)) => Err(not_redis(format!(
            "the RESP handshake failed ({error}), as when the server closes the connection on a RESP request"
        ))),
        Ok(Ok((connection, redis::Value::SimpleString(pong)))) if pong == "PONG" => Ok(connection),
        Ok(Ok((_, other))) => Err(not_redis(format!("it answered PING with {other:?}"))),
    }
}

/// Opens a TCP connection to `host:port` within [`CONNECT_TIMEOUT`]; the error says what
/// failed, for a message that names the URL around it.
async fn connect_tcp(host: &str, port: u16, server: &str) -> Result<tokio::net::TcpStream, String> {
    let address = format!("{host}:{port}");
    let secs = CONNECT_TIMEOUT.as_secs();
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect((host, port)))
        .await
    {
        Err(_) => Err(format!(
            "cannot reach the server at {address} within {secs}s; check the host, the port and any firewall"
        )),
        Ok(Err(error)) => Err(format!(
            "cannot reach {server} at {address}: {error}{}; check that {server} runs there and the URL is right",
            match io_failure(&error) {
                "" => String::new(),
                why => format!(" ({why})"),
            }
        )),
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
    }
}

/// Connects to the PostgreSQL server `url` names, with a deadline on each step. Every failure
/// names the URL and what was expected; the server's own refusal (a database that does not
/// exist, an unknown role) is quoted.
pub async fn connect_postgres_checked(url: &str) -> Result<tokio_postgres::Client, RealError> {
    let fail = |why: String| RealError::Server(format!("--postgres {url}: {why}"));
    let config: tokio_postgres::Config = url.parse().map_err(|error| {
        fail(format!(
            "not a usable PostgreSQL URL ({error}); write it as postgres://USER@HOST[:PORT]/DB, e.g. postgres://postgres@127.0.0.1:5432/test"
        ))
    })?;
    let Some(Host::Tcp(host)) = config.get_hosts().first() else {
        return Err(fail(
            "name one TCP host, e.g. postgres://postgres@127.0.0.1/test (unix sockets are not supported)"
                .to_string(),
        ));
    };
    if config.get_user().is_none() {
        return Err(fail(
            "name a user, e.g. postgres://postgres@127.0.0.1/test".to_string(),
        ));
    }
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(crate::clients::POSTGRES_PORT);
    let address = format!("{host}:{port}");
    let secs = CONNECT_TIMEOUT.as_secs();
    let stream = connect_tcp(host, port, "PostgreSQL").await.map_err(fail)?;
    match tokio::time::timeout(CONNECT_TIMEOUT, postgres_over_stream(stream, &config)).await {
        Err(_) => Err(fail(format!(
            "the server at {address} did not answer the PostgreSQL startup message within {secs}s: is it a PostgreSQL server? (a Redis server, for one, waits silently; a Redis URL belongs to --redis)"
        ))),
        Ok(Ok(client)) => Ok(client),
        Ok(Err(crate::clients::ConnectError::Postgres(error))) => match error.as_db_error() {
            Some(db) => {
                let advice = match db.code().code() {
                    "3D000" => format!(
                        "; create it (createdb -h {host} -p {port} {}) or name another database in the URL",
                        config.get_dbname().unwrap_or("NAME")
                    ),
                    "28000" | "28P01" => "; name a role that exists and may log in".to_string(),
                    _ => String::new(),
                };
                Err(fail(format!(
                    "PostgreSQL at {address} refused the connection: {}{advice}",
                    db.message()
                )))
            }
            None => Err(fail(format!(
                "the server at {address} is not a PostgreSQL server, or not a usable one: the startup failed ({error}); point --postgres at a PostgreSQL server"
            ))),
        },
        Ok(Err(error)) => Err(fail(format!(
            "the server at {address} is not a usable PostgreSQL server: {error}"
        ))),
    }
}

/// Cleans up from a thread of its own if the run's future is dropped before it cleaned up
/// (a panic while unwinding).
struct CleanupGuard {
    admin: Option<CleanupPlan>,
}

impl CleanupGuard {
    fn disarm(mut self) {
        self.admin = None;
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        let Some(plan) = self.admin.take() else {
            return;
        };
        let what = format!("{plan:?}");
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                if let Some((url, keys, prefix)) = &plan.redis {
                    let mut connection = tokio::time::timeout(
                        CONNECT_TIMEOUT,
                        redis_url(url, Some(Duration::from_secs(5))),
                    )
                    .await
                    .ok()?
                    .ok()?;
                    let mut del = redis::cmd("DEL");
                    for key in keys {
                        del.arg(key);
                    }
                    tokio::time::timeout(COMMAND_TIMEOUT, del.query_async::<()>(&mut connection))
                        .await
                        .ok()?
                        .ok()?;
                    tokio::time::timeout(COMMAND_TIMEOUT, delete_prefixed(&mut connection, prefix))
                        .await
                        .ok()?
                        .ok()?;
                }
                for (place, lock) in &plan.nodes {
                    let mut connection = tokio::time::timeout(CONNECT_TIMEOUT, place.open())
                        .await
                        .ok()?
                        .ok()?;
                    tokio::time::timeout(
                        COMMAND_TIMEOUT,
                        redis::cmd("DEL")
                            .arg(lock)
                            .query_async::<()>(&mut connection),
                    )
                    .await
                    .ok()?
                    .ok()?;
                }
                if let Some((url, schema)) = &plan.postgres {
                    let client = connect_postgres_checked(url).await.ok()?;
                    let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
                    tokio::time::timeout(COMMAND_TIMEOUT, client.batch_execute(&drop))
                        .await
                        .ok()?
                        .ok()?;
                }
                Some(())
            })
        })
        .join();
        if !matches!(done, Ok(Some(()))) {
            eprintln!(
                "warning: could not remove a real run's keys or schema ({what}); remove them by hand"
            );
        }
    }
}
