//! Differential tests: the Redis stand-in against a real Redis 7.
//!
//! Random sequences of the commands the stand-in supports (every `SET` option mix, valid and
//! invalid; `GET`, `DEL`, `EXISTS`, `SETNX`; `INCR` on numbers, text and huge values;
//! `PEXPIRE`/`PTTL` with 0, negative and huge values; `EVAL`/`EVALSHA` of the known scripts;
//! `SCRIPT LOAD|EXISTS|FLUSH`; wrong argument counts and unknown commands) are sent with the
//! `redis` client to the real server and to the stand-in, which our RESP server serves on a
//! loopback port on the real wall clock. Every reply must be identical, errors included;
//! `PTTL` (and the redislock `pttl.lua` script) within [`TTL_TOLERANCE_MS`]. Generated TTLs
//! are long enough to stay stable while a sequence runs; [`expiry_after_real_waits`] adds
//! short ones and waits past them.
//!
//! Needs `LEASELAB_REDIS_URL` (e.g. `redis://127.0.0.1:6379`); without it every test here
//! prints one line saying it was skipped and passes. Each test uses its own key prefix and
//! deletes its keys at the end, also when it fails.
//!
//! Every sequence starts with `SCRIPT FLUSH` on both servers so that their script caches
//! agree. On the shared real server that flushes every client's cached scripts: acceptable on
//! a development or CI machine (clients fall back from `EVALSHA` to `EVAL`), never to be
//! pointed at a server that matters. `FLUSHALL`/`FLUSHDB` are never sent to it.
//!
//! `MULTI`/`EXEC`/`DISCARD`/`WATCH`/`UNWATCH` on two raw connections are compared byte for
//! byte with the stand-in's `Redis::execute_in` and a `Session` per connection
//! ([`transactions_match_redis`]).
//!
//! Databases other than 0 (`SELECT`, `MOVE`, `COPY ... DB`, `SELECT` in `MULTI` and in scripts,
//! `WATCH` across databases) are compared the same way on a fixed sequence
//! ([`databases_match_redis`]), which deletes its keys in every database it used.
//! `FLUSHDB`, `FLUSHALL` and `SWAPDB` are not sent: `model/tests/redis_databases.rs` has them,
//! checked by hand against a private server.
//!
//! Scripts of other lock libraries (`tests/fixtures/lock_scripts.rs`: redsync, node-redlock,
//! Redisson's RLock),
//! the known scripts with CRLF line ends, an added comment or trailing blanks, and small Lua
//! probes of the reply conversions and error texts are compared the same way
//! ([`library_scripts_match_redis`]).
//!
//! Not compared (deliberate differences, see `docs/fidelity.md`): `DELEX` (Redis 8.4; not in
//! Redis 7), `CLIENT SETINFO` (7.2), `HELLO 3`, `math.random` (the real server's generator has run for other clients), runaway
//! scripts. Never sent to the shared real server: `error()` with a table that has no `err`
//! field (it crashes Redis 7.0.15).

mod common;

#[allow(dead_code)]
mod lock_scripts {
    include!("fixtures/lock_scripts.rs");
}

use common::{cases, report, runtime};
use std::cell::RefCell;
use std::fmt;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use leaselab::cli::serve::wall_clock_ms;
use leaselab_model::redis::{Redis, ScriptId};
use leaselab_sim::clients::redis_url as connect;
use leaselab_sim::observer::NoopObserver;
use leaselab_sim::redis_server::RedisServer;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use redis::aio::MultiplexedConnection;
use redis::Value;
use sha1::Digest as _;
use tokio::task::LocalSet;

/// The environment variable naming the real server.
const URL_VAR: &str = "LEASELAB_REDIS_URL";

/// How far two `PTTL` replies may be apart: the commands reach the two servers a moment apart.
const TTL_TOLERANCE_MS: i64 = 250;

/// How long a reply may take.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Generated sequences of the main test.
const SEQUENCES: u32 = 2_000;
/// Generated sequences with real waits past short TTLs.
const EXPIRY_SEQUENCES: u32 = 24;

/// The tests share the real server's script cache (and `SCRIPT FLUSH` empties it), so they
/// run one at a time: within this process (the mutex) and across processes that run this
/// suite against the same server at once (an exclusive `flock` on a file in the temporary
/// directory, released when the guard drops).
static REAL_SERVER: Mutex<()> = Mutex::new(());

struct OneAtATime {
    _file: std::fs::File,
    _guard: MutexGuard<'static, ()>,
}

fn one_at_a_time() -> OneAtATime {
    let guard = REAL_SERVER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let path = std::env::temp_dir().join("leaselab-fidelity-redis-script-cache.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    // SAFETY: flock on a file descriptor this function owns; blocks until the lock is free.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) };
    assert_eq!(locked, 0, "flock {}", path.display());
    OneAtATime {
        _file: file,
        _guard: guard,
    }
}

// ---------------------------------------------------------------------------------------------
// The environment.

/// The real server's URL, or `None` after printing one line saying why the test is skipped.
fn redis_url(test: &str) -> Option<String> {
    common::server_url(URL_VAR, test, "redis://127.0.0.1:6379", "Redis")
}

/// Serves a fresh stand-in on a loopback port (inside the current `LocalSet`), on the real
/// wall clock, so that its TTLs run like the real server's.
async fn start_stand_in() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let server = RedisServer::new(
        Rc::new(RefCell::new(Redis::new())),
        Rc::new(wall_clock_ms),
        Rc::new(NoopObserver),
    );
    tokio::task::spawn_local(async move {
        let _ = server.serve_tokio(listener).await;
    });
    address
}

/// The test's keys on the real server: `<prefix>*`, deleted when this value is dropped (also
/// while a failing test unwinds).
struct KeyPrefix {
    url: String,
    prefix: String,
}

impl KeyPrefix {
    fn new(url: &str, test: &str) -> KeyPrefix {
        KeyPrefix {
            url: url.to_string(),
            prefix: format!("leaselab:fidelity:{}:{test}:", std::process::id()),
        }
    }
}

impl Drop for KeyPrefix {
    fn drop(&mut self) {
        // The test's runtime may be gone or busy (we may be unwinding from a failure inside
        // it): delete from a thread with a runtime of its own.
        let url = self.url.clone();
        let pattern = format!("{}*", self.prefix);
        let deleted = std::thread::spawn(move || {
            runtime().block_on(async {
                let mut real = connect(&url, Some(RESPONSE_TIMEOUT))
                    .await
                    .map_err(|error| error.to_string())?;
                let keys: Vec<Vec<u8>> = redis::cmd("KEYS")
                    .arg(&pattern)
                    .query_async(&mut real)
                    .await
                    .map_err(|error| error.to_string())?;
                if !keys.is_empty() {
                    redis::cmd("DEL")
                        .arg(keys)
                        .query_async::<i64>(&mut real)
                        .await
                        .map_err(|error| error.to_string())?;
                }
                Ok::<(), String>(())
            })
        })
        .join();
        if !matches!(deleted, Ok(Ok(()))) {
            report(&format!(
                "warning: could not delete the keys {}* on {URL_VAR}: {deleted:?}",
                self.prefix
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sequences.

/// One argument of a command, rendered when the command is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Arg {
    /// Literal bytes.
    Text(String),
    /// Key number `n` of the sequence (`<prefix><case>:k<n>`).
    Key(u8),
    /// Unix time in milliseconds, this many ms from now (for `PXAT`).
    FromNowMs(i64),
    /// Unix time in seconds, this many seconds from now (for `EXAT`).
    FromNowSecs(i64),
    /// A glob pattern under the sequence's key prefix (for `KEYS` and `SCAN ... MATCH`).
    Pattern(&'static str),
}

/// How two replies are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    /// Identical.
    Exact,
    /// Identical, except that non-negative integers (remaining TTLs) may differ by
    /// [`TTL_TOLERANCE_MS`].
    Ttl,
    /// An array compared as a set (`KEYS`: Redis answers in its hash table's order).
    Unordered,
    /// A `SCAN` run to the end on each server (cursor after cursor until 0), the keys it
    /// returned compared as a set; an error compared as such.
    ScanAll,
}

/// One step of a sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    argv: Vec<Arg>,
    compare: Compare,
    /// After the command, wait this long (past a short TTL) before the next one.
    wait_ms: u64,
}

impl Op {
    fn new(argv: Vec<Arg>) -> Op {
        let compare = match argv.first() {
            Some(Arg::Text(name))
                if ["pttl", "expiretime", "pexpiretime"]
                    .iter()
                    .any(|ttl| name.eq_ignore_ascii_case(ttl)) =>
            {
                Compare::Ttl
            }
            _ => Compare::Exact,
        };
        Op {
            argv,
            compare,
            wait_ms: 0,
        }
    }
}

/// A sequence as sent: each argument rendered for one case.
fn render(argv: &[Arg], prefix: &str, now_ms: u64) -> Vec<Vec<u8>> {
    let now = i64::try_from(now_ms).expect("a sane clock");
    argv.iter()
        .map(|arg| match arg {
            Arg::Text(text) => text.clone().into_bytes(),
            Arg::Key(n) => format!("{prefix}k{n}").into_bytes(),
            Arg::FromNowMs(offset) => (now + offset).to_string().into_bytes(),
            Arg::FromNowSecs(offset) => (now / 1000 + offset).to_string().into_bytes(),
            Arg::Pattern(pattern) => format!("{prefix}{pattern}").into_bytes(),
        })
        .collect()
}

/// An argument vector as redis-cli would show it.
fn show_argv(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|arg| {
            let text = String::from_utf8_lossy(arg);
            if !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_graphic() && c != '"' && c != '\'')
            {
                text.into_owned()
            } else {
                format!("{text:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A reply, with server errors kept as their full text.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Value(Value),
    Error(String),
    /// The client failed for another reason (a closed connection, a timeout, bad RESP).
    Client(String),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Value(value) => write!(f, "{}", show_value(value)),
            Answer::Error(text) => write!(f, "(error) {text}"),
            Answer::Client(text) => write!(f, "client error: {text}"),
        }
    }
}

fn show_value(value: &Value) -> String {
    match value {
        Value::Nil => "(nil)".to_string(),
        Value::Int(n) => format!("(integer) {n}"),
        Value::BulkString(bytes) => format!("{:?}", String::from_utf8_lossy(bytes)),
        Value::Okay => "OK".to_string(),
        Value::SimpleString(text) => format!("+{text}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show_value).collect::<Vec<_>>().join(", ")
        ),
        other => format!("{other:?}"),
    }
}

async fn send(connection: &mut MultiplexedConnection, argv: &[Vec<u8>]) -> Answer {
    let mut command = redis::Cmd::new();
    for arg in argv {
        command.arg(arg.as_slice());
    }
    match command.query_async::<Value>(connection).await {
        Ok(value) => Answer::Value(value),
        Err(error) => match (error.code(), error.detail()) {
            (Some(code), Some(detail)) => Answer::Error(format!("{code} {detail}")),
            (Some(code), None) => Answer::Error(code.to_string()),
            _ => Answer::Client(error.to_string()),
        },
    }
}

fn agree(compare: Compare, real: &Answer, stand_in: &Answer) -> bool {
    match (compare, real, stand_in) {
        (Compare::Unordered, Answer::Value(Value::Array(a)), Answer::Value(Value::Array(b))) => {
            sorted_bulks(a) == sorted_bulks(b)
        }
        (Compare::Ttl, Answer::Value(Value::Int(a)), Answer::Value(Value::Int(b)))
            if *a >= 0 && *b >= 0 =>
        {
            (a - b).abs() <= TTL_TOLERANCE_MS
        }
        _ => real == stand_in && !matches!(real, Answer::Client(_)),
    }
}

/// The bulk strings of an array, sorted and without repeats (`None` if any is not one).
fn sorted_bulks(items: &[Value]) -> Option<Vec<Vec<u8>>> {
    let mut bulks = items
        .iter()
        .map(|item| match item {
            Value::BulkString(bytes) => Some(bytes.clone()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    bulks.sort();
    bulks.dedup();
    Some(bulks)
}

/// `SCAN` from cursor 0 to the end: the keys every call returned, as one array of bulk
/// strings in byte order (the first error or odd reply as it came).
async fn scan_all(connection: &mut MultiplexedConnection, argv: &[Vec<u8>]) -> Answer {
    let mut argv = argv.to_vec();
    let mut keys = Vec::new();
    for _ in 0..100_000 {
        let answer = send(connection, &argv).await;
        let Answer::Value(Value::Array(parts)) = &answer else {
            return answer;
        };
        let [Value::BulkString(cursor), Value::Array(found)] = parts.as_slice() else {
            return answer;
        };
        keys.extend(found.iter().cloned());
        if cursor.as_slice() == b"0" {
            return match sorted_bulks(&keys) {
                Some(sorted) => Answer::Value(Value::Array(
                    sorted.into_iter().map(Value::BulkString).collect(),
                )),
                None => Answer::Client(format!(
                    "SCAN returned a key that is not a string: {keys:?}"
                )),
            };
        }
        argv[1] = cursor.clone();
    }
    Answer::Client("SCAN did not come back to cursor 0 in 100,000 calls".to_string())
}

/// Both servers, connected, and what their replies covered.
struct Servers {
    real: MultiplexedConnection,
    stand_in: MultiplexedConnection,
    /// How often each distinct error text (with keys and hashes removed) was seen.
    errors: std::collections::BTreeMap<String, usize>,
    /// How many replies were not errors.
    values: usize,
}

impl Servers {
    async fn connect(url: &str) -> Servers {
        let real = connect(url, Some(RESPONSE_TIMEOUT))
            .await
            .unwrap_or_else(|error| panic!("cannot connect to {URL_VAR}={url:?}: {error}"));
        let address = start_stand_in().await;
        let stand_in = connect(&format!("redis://{address}"), Some(RESPONSE_TIMEOUT))
            .await
            .expect("connect to the stand-in");
        Servers {
            real,
            stand_in,
            errors: Default::default(),
            values: 0,
        }
    }

    /// Runs a sequence on both servers with keys under `prefix`. `Err` shows the sequence up
    /// to the first difference.
    async fn compare(&mut self, prefix: &str, ops: &[Op]) -> Result<(), String> {
        // Align both script caches. On the real server this empties every client's cached
        // scripts, not just ours: acceptable on a development or CI machine only.
        let flush = [b"SCRIPT".to_vec(), b"FLUSH".to_vec()];
        let mut transcript = String::new();
        for (name, connection) in [("Redis", &mut self.real), ("stand-in", &mut self.stand_in)] {
            let answer = send(connection, &flush).await;
            if answer != Answer::Value(Value::Okay) {
                return Err(format!("SCRIPT FLUSH on the {name}: {answer}"));
            }
        }
        let mut result = Ok(());
        for op in ops {
            let argv = render(&op.argv, prefix, wall_clock_ms());
            let (real, stand_in) = if op.compare == Compare::ScanAll {
                (
                    scan_all(&mut self.real, &argv).await,
                    scan_all(&mut self.stand_in, &argv).await,
                )
            } else {
                (
                    send(&mut self.real, &argv).await,
                    send(&mut self.stand_in, &argv).await,
                )
            };
            let shown = show_argv(&argv).replace(prefix, "");
            if agree(op.compare, &real, &stand_in) {
                match &real {
                    Answer::Error(text) => {
                        let general = text.replace(prefix, "").chars().take(60).collect();
                        *self.errors.entry(general).or_default() += 1;
                    }
                    _ => self.values += 1,
                }
                transcript.push_str(&format!("  same      {shown} -> {real}\n"));
            } else {
                transcript.push_str(&format!(
                    "  Redis     {shown} -> {real}\n  stand-in  {shown} -> {stand_in}\n"
                ));
                result = Err(format!(
                    "the stand-in answered differently from Redis (keys shown without their \
                     prefix {prefix}):\n{transcript}"
                ));
                break;
            }
            if op.wait_ms > 0 {
                tokio::time::sleep(Duration::from_millis(op.wait_ms)).await;
                transcript.push_str(&format!("  (waited {} ms)\n", op.wait_ms));
            }
        }
        // Clean up this sequence's keys on both.
        let keys: Vec<Vec<u8>> = (0..KEYS)
            .map(|n| format!("{prefix}k{n}").into_bytes())
            .collect();
        let del: Vec<Vec<u8>> = [vec![b"DEL".to_vec()], keys].concat();
        send(&mut self.real, &del).await;
        send(&mut self.stand_in, &del).await;
        result
    }
}

/// Runs fixed sequences (named regressions and scenarios).
fn check_sequences(test: &str, sequences: &[Vec<Op>]) {
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    LocalSet::new().block_on(&runtime(), async {
        let mut servers = Servers::connect(&url).await;
        for (n, ops) in sequences.iter().enumerate() {
            let prefix = format!("{}{n}:", keys.prefix);
            if let Err(difference) = servers.compare(&prefix, ops).await {
                panic!("{difference}");
            }
        }
    });
}

/// Runs `count` generated sequences and shrinks a difference to a minimal one.
fn check_generated(test: &str, count: u32, strategy: impl Strategy<Value = Vec<Op>>) {
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    let runtime = runtime();
    let local = LocalSet::new();
    let servers = RefCell::new(local.block_on(&runtime, Servers::connect(&url)));
    let case = RefCell::new(0u64);
    let commands = RefCell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |ops| {
        *case.borrow_mut() += 1;
        *commands.borrow_mut() += ops.len();
        let prefix = format!("{}{}:", keys.prefix, case.borrow());
        local
            .block_on(&runtime, servers.borrow_mut().compare(&prefix, &ops))
            .map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {
            let servers = servers.borrow();
            report(&format!(
                "{test}: {count} generated command sequences ({} commands) answered as Redis \
                 does: {} values, {} errors of {} kinds",
                commands.borrow(),
                servers.values,
                servers.errors.values().sum::<usize>(),
                servers.errors.len()
            ));
            if std::env::var_os("LEASELAB_FIDELITY_VERBOSE").is_some() {
                for (error, seen) in servers.errors.iter() {
                    report(&format!("  {seen:6} {error}"));
                }
            }
        }
        Err(TestError::Fail(reason, ops)) => {
            panic!("{reason}\nminimal sequence: {ops:#?}")
        }
        Err(error) => panic!("{error}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Generators.

/// Keys per sequence.
const KEYS: u8 = 3;

fn text(text: &str) -> Arg {
    Arg::Text(text.to_string())
}

/// A command name in upper, lower or mixed case.
fn name(name: &'static str) -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => Just(name.to_ascii_uppercase()),
        1 => Just(name.to_ascii_lowercase()),
        1 => Just(
            name.chars()
                .enumerate()
                .map(|(at, c)| if at % 2 == 0 { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                .collect::<String>()
        ),
    ]
    .prop_map(Arg::Text)
}

fn key() -> impl Strategy<Value = Arg> {
    (0..KEYS).prop_map(Arg::Key)
}

fn value() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["v", "t1", "t2", "", "10", "-3", "hello world"]).prop_map(text)
}

/// Texts that are numbers to Redis or almost.
fn number_text() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec![
        "0",
        "10",
        "-5",
        "9223372036854775807",
        "9223372036854775806",
        "-9223372036854775808",
        "-9223372036854775807",
        "9223372036854775808",
        "12345678901234567890",
        "007",
        "-0",
        "+5",
        " 5",
        "5 ",
        "1e3",
        "1.5",
        "abc",
        "",
    ])
    .prop_map(text)
}

/// An invalid or extreme TTL in either unit.
fn bad_ttl() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec![
        "0",
        "-1",
        "-100000",
        "abc",
        "1.5",
        "",
        "+10000",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "9223372036854775",
        "9223372036854776",
        "9223372036854",
    ])
    .prop_map(text)
}

/// A TTL in milliseconds: usually long enough to be stable, sometimes invalid or extreme.
fn ttl_ms() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => (10_000i64..100_000_000).prop_map(|ms| Arg::Text(ms.to_string())),
        2 => bad_ttl(),
    ]
}

/// A TTL in seconds.
fn ttl_secs() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => (10i64..1_000_000).prop_map(|s| Arg::Text(s.to_string())),
        2 => bad_ttl(),
    ]
}

/// One `SET` option (or a stray word), as argument vector pieces.
fn set_option() -> impl Strategy<Value = Vec<Arg>> {
    prop_oneof![
        2 => name("nx").prop_map(|a| vec![a]),
        2 => name("xx").prop_map(|a| vec![a]),
        2 => name("get").prop_map(|a| vec![a]),
        1 => name("keepttl").prop_map(|a| vec![a]),
        2 => (name("ex"), ttl_secs()).prop_map(|(a, b)| vec![a, b]),
        3 => (name("px"), ttl_ms()).prop_map(|(a, b)| vec![a, b]),
        1 => (name("exat"), prop_oneof![
            3 => (10i64..100_000).prop_map(Arg::FromNowSecs),
            1 => Just(text("1")),
            1 => bad_ttl(),
        ]).prop_map(|(a, b)| vec![a, b]),
        1 => (name("pxat"), prop_oneof![
            3 => (10_000i64..100_000_000).prop_map(Arg::FromNowMs),
            1 => Just(text("1")),
            1 => Just(Arg::FromNowMs(-5_000)),
            1 => bad_ttl(),
        ]).prop_map(|(a, b)| vec![a, b]),
        1 => prop::sample::select(vec!["EX", "PX", "FOO", "NXX"]).prop_map(|w| vec![text(w)]),
    ]
}

fn set() -> impl Strategy<Value = Op> {
    (
        name("set"),
        key(),
        value(),
        prop::collection::vec(set_option(), 0..=3),
    )
        .prop_map(|(set, key, value, options)| {
            Op::new([vec![set, key, value], options.concat()].concat())
        })
}

/// A token-like argument for the scripts.
fn token() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => prop::sample::select(vec!["t1", "t2"]).prop_map(text),
        1 => value(),
    ]
}

/// KEYS and ARGV for a known script: usually what it expects, sometimes not.
fn script_keys_and_args(script: ScriptId) -> BoxedStrategy<(Vec<Arg>, Vec<Arg>)> {
    let one_or_two_keys = prop::collection::vec(key(), 1..=2);
    let expected = match script {
        ScriptId::Release | ScriptId::ReleaseOneLine => (key(), token())
            .prop_map(|(k, t)| (vec![k], vec![t]))
            .boxed(),
        ScriptId::Refresh => (key(), token(), ttl_ms())
            .prop_map(|(k, t, ttl)| (vec![k], vec![t, ttl]))
            .boxed(),
        ScriptId::FencedAcquire => (key(), key(), token(), ttl_ms())
            .prop_map(|(lock, fence, t, ttl)| (vec![lock, fence], vec![t, ttl]))
            .boxed(),
        ScriptId::RedislockObtain => (
            one_or_two_keys,
            token(),
            prop::sample::select(vec!["2", "1", "0", "x"]).prop_map(text),
            ttl_ms(),
        )
            .prop_map(|(keys, t, len, ttl)| (keys, vec![t, len, ttl]))
            .boxed(),
        ScriptId::RedislockRefresh => (one_or_two_keys, token(), ttl_ms())
            .prop_map(|(keys, t, ttl)| (keys, vec![t, ttl]))
            .boxed(),
        // A user's script takes whatever its file says: any keys and tokens.
        ScriptId::RedislockRelease | ScriptId::RedislockPttl | ScriptId::User(_) => {
            (one_or_two_keys, token())
                .prop_map(|(keys, t)| (keys, vec![t]))
                .boxed()
        }
    };
    let odd = (
        prop::collection::vec(key(), 0..=2),
        prop::collection::vec(token(), 0..=3),
    );
    prop_oneof![6 => expected, 1 => odd].boxed()
}

/// How `numkeys` is written.
#[derive(Clone, Copy, Debug)]
enum NumKeys {
    Right,
    TooMany,
    Fewer,
    Negative,
    NotANumber,
}

fn numkeys() -> impl Strategy<Value = NumKeys> {
    prop_oneof![
        12 => Just(NumKeys::Right),
        1 => Just(NumKeys::TooMany),
        1 => Just(NumKeys::Fewer),
        1 => Just(NumKeys::Negative),
        1 => Just(NumKeys::NotANumber),
    ]
}

fn numkeys_arg(numkeys: NumKeys, keys: usize, args: usize) -> Arg {
    let n = match numkeys {
        NumKeys::Right => keys.to_string(),
        NumKeys::TooMany => (keys + args + 1).to_string(),
        NumKeys::Fewer => keys.saturating_sub(1).to_string(),
        NumKeys::Negative => "-1".to_string(),
        NumKeys::NotANumber => "one".to_string(),
    };
    Arg::Text(n)
}

/// How the script is named.
#[derive(Clone, Copy, Debug)]
enum By {
    Source,
    Sha,
    ShaUpperCase,
}

fn script() -> impl Strategy<Value = ScriptId> {
    prop::sample::select(ScriptId::ALL.to_vec())
}

fn eval() -> impl Strategy<Value = Op> {
    let by = prop_oneof![
        2 => Just(By::Source),
        2 => Just(By::Sha),
        1 => Just(By::ShaUpperCase),
    ];
    (script(), by, numkeys())
        .prop_flat_map(|(script, by, numkeys)| {
            (
                Just(script),
                Just(by),
                Just(numkeys),
                script_keys_and_args(script),
            )
        })
        .prop_map(|(script, by, numkeys, (keys, args))| {
            let (command, first) = match by {
                By::Source => ("EVAL", script.source().to_string()),
                By::Sha => ("EVALSHA", script.sha1_hex()),
                By::ShaUpperCase => ("EVALSHA", script.sha1_hex().to_ascii_uppercase()),
            };
            let n = numkeys_arg(numkeys, keys.len(), args.len());
            let wait_ms = wait_past_short_ttl(script, numkeys, &keys, &args);
            let mut op = Op::new([vec![text(command), Arg::Text(first), n], keys, args].concat());
            op.wait_ms = wait_ms;
            if script == ScriptId::RedislockPttl {
                op.compare = Compare::Ttl;
            }
            op
        })
}

/// The longest TTL an argument meant as something else (a token length, a value moved into
/// ARGV by a short `numkeys`) can give a key by accident.
const ACCIDENTAL_TTL_MAX_MS: i64 = 50;

/// A script whose TTL argument ends up a few milliseconds (odd arguments can do that) is
/// followed by a wait past it, so that both servers agree the key is gone.
fn wait_past_short_ttl(script: ScriptId, numkeys: NumKeys, keys: &[Arg], args: &[Arg]) -> u64 {
    let ttl_argv_index = match script {
        ScriptId::Refresh | ScriptId::FencedAcquire | ScriptId::RedislockRefresh => 2,
        ScriptId::RedislockObtain => 3,
        ScriptId::Release
        | ScriptId::ReleaseOneLine
        | ScriptId::RedislockRelease
        | ScriptId::RedislockPttl
        | ScriptId::User(_) => return 0,
    };
    let keys_taken = match numkeys {
        NumKeys::Right => keys.len(),
        NumKeys::Fewer => keys.len().saturating_sub(1),
        NumKeys::TooMany | NumKeys::Negative | NumKeys::NotANumber => return 0,
    };
    let all: Vec<&Arg> = keys.iter().chain(args).collect();
    match all.get(keys_taken + ttl_argv_index - 1) {
        Some(Arg::Text(ttl)) => match ttl.parse::<i64>() {
            Ok(ms) if (1..=ACCIDENTAL_TTL_MAX_MS).contains(&ms) => 80,
            _ => 0,
        },
        _ => 0,
    }
}

/// A SHA1 that names no loaded script, or not a SHA1 at all.
fn unknown_sha() -> impl Strategy<Value = Arg> {
    prop_oneof![
        3 => (any::<u128>(), any::<u32>()).prop_map(|(a, b)| Arg::Text(format!("{a:032x}{b:08x}"))),
        1 => prop::sample::select(vec!["abc", "", "zz"]).prop_map(text),
    ]
}

fn script_command() -> impl Strategy<Value = Op> {
    let sha = prop_oneof![
        3 => script().prop_map(|s| Arg::Text(s.sha1_hex())),
        1 => unknown_sha(),
    ];
    prop_oneof![
        3 => (name("script"), script()).prop_map(|(s, script)| {
            Op::new(vec![s, text("LOAD"), Arg::Text(script.source().to_string())])
        }),
        2 => (name("script"), prop::collection::vec(sha.clone(), 1..=3))
            .prop_map(|(s, shas)| Op::new([vec![s, text("EXISTS")], shas].concat())),
        3 => (name("script"), prop::sample::select(vec![vec![], vec!["SYNC"], vec!["ASYNC"]]))
            .prop_map(|(s, mode)| {
                Op::new([vec![s, text("FLUSH")], mode.into_iter().map(text).collect()].concat())
            }),
        2 => (unknown_sha(), prop::collection::vec(key(), 0..=1)).prop_map(|(sha, keys)| {
            let n = Arg::Text(keys.len().to_string());
            Op::new([vec![text("EVALSHA"), sha, n], keys].concat())
        }),
    ]
}

/// Commands with a wrong number of arguments, unknown commands and subcommands.
fn malformed() -> impl Strategy<Value = Op> {
    let shapes: Vec<Vec<&'static str>> = vec![
        vec!["GET"],
        vec!["GET", "$k", "extra"],
        vec!["SET", "$k"],
        vec!["SET"],
        vec!["SETNX", "$k"],
        vec!["SETNX", "$k", "v", "extra"],
        vec!["DEL"],
        vec!["EXISTS"],
        vec!["INCR"],
        vec!["INCR", "$k", "extra"],
        vec!["PEXPIRE", "$k"],
        vec!["PEXPIRE"],
        vec!["PTTL"],
        vec!["PTTL", "$k", "extra"],
        vec!["EVAL"],
        vec!["EVAL", "return 1"],
        vec!["EVALSHA"],
        vec!["EVALSHA", "abc"],
        vec!["SCRIPT"],
        vec!["SCRIPT", "LOAD"],
        vec!["SCRIPT", "EXISTS"],
        vec!["SCRIPT", "FOO"],
        vec!["SCRIPT", "FLUSH", "NOW"],
        vec!["PING", "a", "b"],
        vec!["FOO"],
        vec!["FOO", "a", "b"],
        vec!["GETT", "$k"],
        vec!["DELEXX", "$k"],
    ];
    (prop::sample::select(shapes), key()).prop_map(|(shape, key)| {
        Op::new(
            shape
                .into_iter()
                .map(|part| {
                    if part == "$k" {
                        key.clone()
                    } else {
                        text(part)
                    }
                })
                .collect(),
        )
    })
}

/// Any supported command, valid or not.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => set(),
        3 => (name("get"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("del"), prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, keys)| Op::new([vec![c], keys].concat())),
        2 => (name("exists"), prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, keys)| Op::new([vec![c], keys].concat())),
        2 => (name("setnx"), key(), value()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        3 => (name("incr"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        3 => (name("set"), key(), number_text()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        3 => (name("pexpire"), key(), ttl_ms()).prop_map(|(c, k, t)| Op::new(vec![c, k, t])),
        3 => (name("pttl"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        8 => eval(),
        4 => script_command(),
        1 => (name("ping"), prop::option::of(value())).prop_map(|(c, message)| {
            Op::new([vec![c], message.into_iter().collect()].concat())
        }),
        2 => malformed(),
    ]
}

fn sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=12)
}

/// A command that gives a key a TTL of a few milliseconds, followed by a wait past it.
fn short_lived() -> impl Strategy<Value = Op> {
    let ms = || (1i64..=30).prop_map(|ms| Arg::Text(ms.to_string()));
    prop_oneof![
        (key(), value(), ms()).prop_map(|(k, v, ms)| vec![text("SET"), k, v, text("PX"), ms]),
        (key(), value(), ms()).prop_map(|(k, v, ms)| vec![
            text("SET"),
            k,
            v,
            text("NX"),
            text("PX"),
            ms
        ]),
        (key(), value(), 1i64..=30).prop_map(|(k, v, ms)| vec![
            text("SET"),
            k,
            v,
            text("PXAT"),
            Arg::FromNowMs(ms)
        ]),
        (key(), ms()).prop_map(|(k, ms)| vec![text("PEXPIRE"), k, ms]),
        (key(), token(), ms()).prop_map(|(k, t, ms)| vec![
            text("EVAL"),
            Arg::Text(ScriptId::Refresh.source().to_string()),
            text("1"),
            k,
            t,
            ms
        ]),
    ]
    .prop_map(|argv| Op {
        wait_ms: 80,
        ..Op::new(argv)
    })
}

fn expiry_sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(prop_oneof![3 => op(), 1 => short_lived()], 2..=10)
}

/// Generated sequences of lock-library scripts, script variants and Lua probes.
const LIBRARY_SEQUENCES: u32 = 400;

/// How a library script is called: its KEYS and ARGV.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// KEYS[1]; ARGV = [token].
    KeyToken,
    /// KEYS[1]; ARGV = [token, ttl ms].
    KeyTokenTtl,
    /// One or two KEYS; ARGV = [token, ttl ms].
    KeysTokenTtl,
    /// One or two KEYS; ARGV = [token].
    KeysToken,
    /// Redisson's lock: KEYS[1]; ARGV = [lease ms, owner].
    RedissonLock,
    /// Redisson's unlock: KEYS = [lock, channel]; ARGV = [message, lease ms, owner].
    RedissonUnlock,
}

/// The other libraries' scripts with their shapes.
fn library_scripts() -> Vec<(&'static lock_scripts::LibraryScript, Shape)> {
    use lock_scripts::*;
    vec![
        (&REDSYNC_DELETE, Shape::KeyToken),
        (&REDSYNC_TOUCH, Shape::KeyTokenTtl),
        (&NODE_REDLOCK_ACQUIRE, Shape::KeysTokenTtl),
        (&NODE_REDLOCK_EXTEND, Shape::KeysTokenTtl),
        (&NODE_REDLOCK_RELEASE, Shape::KeysToken),
        (&REDISSON_LOCK, Shape::RedissonLock),
        (&REDISSON_UNLOCK, Shape::RedissonUnlock),
    ]
}

/// A Redisson lock owner (`uuid:threadId`).
fn owner() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => prop::sample::select(vec!["uuid-1:1", "uuid-2:7"]).prop_map(text),
        1 => value(),
    ]
}

fn shape_keys_and_args(shape: Shape) -> BoxedStrategy<(Vec<Arg>, Vec<Arg>)> {
    match shape {
        Shape::RedissonLock => {
            return (key(), ttl_ms(), owner())
                .prop_map(|(k, lease, owner)| (vec![k], vec![lease, owner]))
                .boxed()
        }
        Shape::RedissonUnlock => {
            return (key(), key(), ttl_ms(), owner())
                .prop_map(|(k, channel, lease, owner)| {
                    (vec![k, channel], vec![text("0"), lease, owner])
                })
                .boxed()
        }
        _ => {}
    }
    let keys = match shape {
        Shape::KeyToken | Shape::KeyTokenTtl => prop::collection::vec(key(), 1..=1).boxed(),
        _ => prop::collection::vec(key(), 1..=2).boxed(),
    };
    match shape {
        Shape::KeyToken | Shape::KeysToken => (keys, token())
            .prop_map(|(keys, t)| (keys, vec![t]))
            .boxed(),
        _ => (keys, token(), ttl_ms())
            .prop_map(|(keys, t, ttl)| (keys, vec![t, ttl]))
            .boxed(),
    }
}

/// `EVAL source` or, half the time, `EVALSHA sha1` (NOSCRIPT until the source was sent).
fn eval_op(source: String, keys: Vec<Arg>, args: Vec<Arg>, by_sha: bool) -> Op {
    let n = Arg::Text(keys.len().to_string());
    let (command, first) = if by_sha {
        (
            "EVALSHA",
            leaselab_model::redis::scripts::sha1_hex_of(source.as_bytes()),
        )
    } else {
        ("EVAL", source)
    };
    Op::new([vec![text(command), Arg::Text(first), n], keys, args].concat())
}

fn library_eval() -> impl Strategy<Value = Op> {
    (prop::sample::select(library_scripts()), any::<bool>())
        .prop_flat_map(|((script, shape), by_sha)| {
            (
                Just(script.source),
                shape_keys_and_args(shape),
                Just(by_sha),
            )
        })
        .prop_map(|(source, (keys, args), by_sha)| {
            let mut op = eval_op(source.to_string(), keys, args, by_sha);
            // Redisson's lock answers the holder's PTTL when it is taken.
            if source == lock_scripts::REDISSON_LOCK.source {
                op.compare = Compare::Ttl;
            }
            op
        })
}

/// The same statements, written differently: another script to Redis (another SHA1).
fn variant(source: &str, how: u8) -> String {
    match how {
        0 => source.replace('\n', "\r\n"),
        1 => format!("-- a comment a user added\n{source}"),
        2 => format!("{source}\n\n   "),
        _ => source.replace('\t', "    "),
    }
}

fn variant_eval() -> impl Strategy<Value = Op> {
    (script(), 0u8..4, any::<bool>())
        .prop_flat_map(|(script, how, by_sha)| {
            (
                Just(script),
                Just(how),
                Just(by_sha),
                script_keys_and_args(script),
            )
        })
        .prop_map(|(script, how, by_sha, (keys, args))| {
            let wait_ms = wait_past_short_ttl(script, NumKeys::Right, &keys, &args);
            let mut op = eval_op(variant(script.source(), how), keys, args, by_sha);
            op.wait_ms = wait_ms;
            if script == ScriptId::RedislockPttl {
                op.compare = Compare::Ttl;
            }
            op
        })
}

/// Small scripts that exercise the reply conversions, the `redis` helpers and the error
/// texts. KEYS = [k0], ARGV = [token, number text].
const PROBES: [&str; 39] = [
    "return {1,2,nil,3}",
    "return 3.9",
    "return -3.9",
    "return true",
    "return false",
    "return {ok='fine'}",
    "return {err='My err'}",
    "return {ok=1}",
    "return {{1,'a'},{ok='x'},{err='y'}}",
    "return redis.error_reply('x')",
    "return redis.error_reply('-MY x')",
    "return redis.status_reply('FINE')",
    "return redis.sha1hex(ARGV[1])",
    "return x",
    "return redis.call('nosuch')",
    "return redis.pcall('nosuch')",
    "return redis.call('get')",
    "return redis.call('get', KEYS[1], KEYS[1])",
    "error('boom')",
    "x = 1",
    "string.foo = 1",
    "return redis.call('incr', KEYS[1])",
    "return redis.pcall('incr', KEYS[1])",
    "redis.call('set', KEYS[1], ARGV[2])\nlocal n = redis.call('incr', KEYS[1])\nreturn {n, type(n)}",
    "return {redis.call('get', KEYS[1]), type(redis.call('get', KEYS[1]))}",
    "return tonumber(ARGV[2]) * 2.5",
    "local ok, e = pcall(redis.call, 'nosuch')\nreturn e",
    "local a = 1\nlocal b = 2\nreturn redis.call('pexpire', KEYS[1], 'abc')",
    "return redis.call('set', KEYS[1], {})",
    "return redis.call('set', KEYS[1], ARGV[1], 'PX', 0.5)",
    "return redis.pcall('watch', KEYS[1])",
    "return redis.pcall('watch')",
    "return redis.pcall('multi')",
    "return redis.pcall('multi', KEYS[1])",
    "return redis.pcall('exec')",
    "return redis.pcall('discard', KEYS[1])",
    "return redis.pcall('unwatch')",
    "return redis.pcall('wait', 0, 0)",
    "return redis.pcall('wait', 0)",
];

/// Every probe once, by `EVAL` (the generated sequences sample them at random).
#[test]
fn every_probe_script_matches_redis() {
    let sequences: Vec<Vec<Op>> = PROBES
        .iter()
        .map(|source| {
            vec![eval_op(
                source.to_string(),
                vec![Arg::Key(0)],
                vec![text("tok"), text("7")],
                false,
            )]
        })
        .collect();
    check_sequences("every_probe_script_matches_redis", &sequences);
}

// ---------------------------------------------------------------------------------------------
// The `bit` and `cjson` libraries.

/// Scripts that use `bit` and `cjson` as Redis 7.0 gives them: every function, the argument
/// conversions, the error texts (direct and through `pcall`), the settings (each script that
/// changes one sets it back, so that the real server is left as it was). ARGV = [token, number].
const LIBRARY_PROBES: [&str; 75] = [
    // bit
    "return {bit.tobit(1), bit.tobit(-1), bit.tobit(2^32), bit.tobit(2^32 + 5), bit.tobit(2^31)}",
    "return {bit.tobit(2.5), bit.tobit(3.5), bit.tobit(-2.5), bit.tobit(0.49999), bit.tobit(-0.5)}",
    "return {bit.tobit(2^53), bit.tobit(2^60 + 2^40), bit.tobit(1e300), bit.tobit(-1e300)}",
    "return {bit.tobit(1/0), bit.tobit(-1/0), bit.tobit(0/0)}",
    "return {bit.band(0xff, 0x0f0, 0x3c), bit.bor(1, 2, 4, 8), bit.bxor(5, 3, 1), bit.band(7)}",
    "return {bit.bnot(0), bit.bnot(-1), bit.bswap(0x12345678), bit.bswap(-1)}",
    "return {bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(3, -1)}",
    "return {bit.rshift(-1, 28), bit.arshift(-256, 4), bit.arshift(256, 4), bit.rshift(1, 0)}",
    "return {bit.rol(0x12345678, 12), bit.ror(0x12345678, 12), bit.rol(1, 32), bit.ror(1, 1)}",
    "return {bit.tohex(255), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -2), bit.tohex(0x1234, 12)}",
    "return {bit.tohex(1, 0), bit.tohex(-1, -8), bit.tohex(0xabcdef, -3), bit.tohex(2^40 + 10)}",
    "return {bit.band('12', ' 0x0f '), bit.bor('1e1', 1), bit.tohex('255')}",
    "return bit.band(1, 'x')",
    "return bit.band(1, 2, {})",
    "return bit.bor()",
    "return bit.tohex(1, nil)",
    "return bit.lshift(1)",
    "local f = bit.bxor\nreturn f(1, true)",
    "return {pcall(bit.tobit)}",
    "bit.x = 1",
    "return type(bit.band) .. type(bit.tohex)",
    "return {bit.band(tonumber(ARGV[2]), 6), bit.tohex(tonumber(ARGV[2]))}",
    // cjson.encode
    "return cjson.encode({1, 2, 'three', true, false})",
    "return cjson.encode({a = 1})",
    "return cjson.encode({})",
    "return cjson.encode({[1] = 'a', [2] = 'b', [4] = 'd'})",
    "return cjson.encode({[1] = 1, [20] = 2})",
    "return cjson.encode({[10] = 1})",
    "return cjson.encode({[11] = 1})",
    "return cjson.encode({[1] = 1, [1.5] = 2})",
    "return cjson.encode({[0] = 'zero'})",
    "return cjson.encode({[-1] = 'minus'})",
    "return cjson.encode({1, 2, x = 3})",
    "return cjson.encode({[true] = 1})",
    "return cjson.encode({[{}] = 1})",
    "return cjson.encode({f = function() end})",
    "return cjson.encode(coroutine.create(function() end))",
    "return cjson.encode('a/b\"c\\\\d\\n\\r\\t\\b\\f\\0\\1\\31\\127\\128\\255')",
    "return cjson.encode({1/3, -1/3, 1e15, 1e16, 123456.789, 0.1, 1e-7, 2^63, -0.0, 100})",
    "return cjson.encode({3.14159, 12345678901234567890})",
    "return cjson.encode(1/0)",
    "return cjson.encode({[1/0] = 1})",
    "return cjson.encode(nil)",
    "return cjson.encode()",
    "return cjson.encode(1, 2)",
    "return cjson.encode(cjson.null)",
    "return cjson.encode({cjson.null, 1})",
    "return cjson.encode({a = {b = {c = {1, {2, {}}}}}})",
    "return cjson.encode(ARGV)",
    "return cjson.encode(KEYS)",
    "return cjson.encode({ARGV[1], tonumber(ARGV[2])})",
    // cjson.decode
    "return cjson.decode('[1, \"two\", true, false, null, {\"a\": [] }, {}]')",
    "local t = cjson.decode('{\"a\": 1, \"b\": [1, 2, 3], \"c\": {\"d\": \"e\"}}')\nreturn {t.a, t.b[3], t.c.d, cjson.encode(t)}",
    "return {cjson.decode('\"\\\\u00e9\\\\u4e2d\\\\ud83d\\\\ude00\\\\/\\\\b\\\\f\\\\n\\\\r\\\\t\\\\\"\\\\\\\\\"')}",
    "return cjson.decode('[0x10, +5, 1e2, 1., -0, 007, Infinity, -inf]')",
    "local t = cjson.decode('[NaN, nan(1), -nan]')\nreturn {tostring(t[1]), tostring(t[2]), tostring(t[3])}",
    "return cjson.decode('[1, 2')",
    "return cjson.decode('{\"a\" 1}')",
    "return cjson.decode('{\"a\": 1,}')",
    "return cjson.decode('{1: 2}')",
    "return cjson.decode('[1 2]')",
    "return cjson.decode('[1] x')",
    "return cjson.decode('tru')",
    "return cjson.decode('\"abc')",
    "return cjson.decode('\"\\\\x\"')",
    "return cjson.decode('\"\\\\u12\"')",
    "return cjson.decode('\"\\\\udc00\"')",
    "return cjson.decode('.5')",
    "return cjson.decode('-')",
    "return cjson.decode('')",
    "return cjson.decode('[1]\\0garbage')",
    "return cjson.decode('\\0[')",
    "return cjson.decode({})",
    "return {cjson.decode(123), cjson.decode(' 1.5 ')}",
    "return {pcall(cjson.decode, '[')}",
];

/// More library scripts: the settings, `cjson.new`, `cjson.null`, depth limits.
const LIBRARY_SETTING_PROBES: [&str; 16] = [
    "return {cjson.encode_sparse_array(), cjson.encode_max_depth(), cjson.decode_max_depth()}",
    "return {cjson.encode_number_precision(), cjson.encode_keep_buffer(), cjson.encode_invalid_numbers(), cjson.decode_invalid_numbers()}",
    "return {cjson._NAME, cjson._VERSION, type(cjson.null), tostring(cjson.null), cjson.null == cjson.decode('null')}",
    "local r = {cjson.encode_number_precision(3), cjson.encode({1/3, 12345})}\ncjson.encode_number_precision(14)\nreturn r",
    "local r = {pcall(cjson.encode_number_precision, 15)}\nlocal s = {pcall(cjson.encode_number_precision, 0)}\nreturn {r[2], s[2], cjson.encode_number_precision()}",
    "local r = {cjson.encode_sparse_array(true, 3, 2), cjson.encode({[1] = 1, [20] = 2})}\ncjson.encode_sparse_array(false, 2, 10)\nreturn r",
    "local r = {pcall(cjson.encode_sparse_array, 'on', -1)}\nlocal now = {cjson.encode_sparse_array()}\ncjson.encode_sparse_array(false, 2, 10)\nreturn {r[2], now[1], now[2]}",
    "local r = {cjson.encode_invalid_numbers('null'), cjson.encode({1/0, 0/0, 1})}\nlocal s = {cjson.encode_invalid_numbers('on'), cjson.encode({1/0, -1/0})}\ncjson.encode_invalid_numbers(false)\nreturn {r[1], r[2], s[1], s[2]}",
    "local r = {pcall(cjson.encode_invalid_numbers, 'maybe')}\nlocal s = {pcall(cjson.encode_invalid_numbers, 1, 2)}\ncjson.encode_invalid_numbers(false)\nreturn {r[2], s[2]}",
    "local r = {cjson.decode_invalid_numbers(false), pcall(cjson.decode, '[1, 0x10]')}\nlocal s = {pcall(cjson.decode, '[Infinity]')}\nlocal u = {pcall(cjson.decode, '[007]')}\ncjson.decode_invalid_numbers(true)\nreturn {r[3], s[2], u[2]}",
    "local r = {cjson.encode_max_depth(2), pcall(cjson.encode, {{{}}})}\ncjson.encode_max_depth(1000)\nreturn {r[1], r[3]}",
    "local r = {cjson.decode_max_depth(2), pcall(cjson.decode, '[[[1]]]')}\ncjson.decode_max_depth(1000)\nreturn {r[1], r[3]}",
    "local r = {pcall(cjson.encode_max_depth, 'x')}\nlocal s = {pcall(cjson.encode_max_depth, 0)}\nreturn {r[2], s[2], cjson.encode_max_depth()}",
    "local c = cjson.new()\nc.encode_number_precision(2)\nreturn {c.encode(1/3), cjson.encode(1/3), c.encode_number_precision(), cjson.encode_number_precision()}",
    "local t = {}\nlocal c = t\nfor i = 1, 1001 do c[1] = {}\nc = c[1] end\nreturn {pcall(cjson.encode, t)}",
    "return {pcall(cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001))}",
];

/// Sets `cjson`'s settings on the real server back to Redis's defaults when dropped, also
/// after a comparison failed half-way through a script that changes them.
struct CjsonDefaults(Option<String>);

impl CjsonDefaults {
    fn on_drop() -> CjsonDefaults {
        CjsonDefaults(
            std::env::var(URL_VAR)
                .ok()
                .filter(|url| !url.trim().is_empty()),
        )
    }
}

impl Drop for CjsonDefaults {
    fn drop(&mut self) {
        use std::io::Write;
        let Some(url) = &self.0 else {
            return;
        };
        let reset = "cjson.encode_number_precision(14) cjson.encode_sparse_array(false, 2, 10) \
            cjson.encode_invalid_numbers(false) cjson.decode_invalid_numbers(true) \
            cjson.encode_max_depth(1000) cjson.decode_max_depth(1000) \
            cjson.encode_keep_buffer(true)";
        let mut connection = RawConnection::open(url);
        let argv = [b"EVAL".to_vec(), reset.as_bytes().to_vec(), b"0".to_vec()];
        let _ = connection.writer.write_all(&encode_argv(&argv));
        let _ = read_resp(&mut connection.reader);
    }
}

/// Every library probe once, by `EVAL`.
#[test]
fn bit_and_cjson_match_redis() {
    let _defaults = CjsonDefaults::on_drop();
    let sequences: Vec<Vec<Op>> = LIBRARY_PROBES
        .iter()
        .chain(LIBRARY_SETTING_PROBES.iter())
        .map(|source| {
            vec![eval_op(
                source.to_string(),
                vec![Arg::Key(0)],
                vec![text("tok/\"x\""), text("-7.5")],
                false,
            )]
        })
        .collect();
    check_sequences("bit_and_cjson_match_redis", &sequences);
}

/// A JSON-like text: JSON with CJSON's extensions (hex, `Infinity`, `+1`, leading zeros),
/// escapes good and bad, and now and then a piece cut, doubled or put in the wrong place.
fn json_text() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        prop::sample::select(vec![
            "0",
            "-0",
            "1",
            "-1.5",
            "1e3",
            "1E-3",
            "2.5e+2",
            "1.",
            "0x1F",
            "+5",
            "007",
            "Infinity",
            "-inf",
            "NaN",
            "1e400",
            "123456789012345678901234567890",
            "true",
            "false",
            "null",
            "nul",
            "tru",
            "-",
            ".5",
            "1e",
            "0x",
        ])
        .prop_map(str::to_string),
        (-1_000_000i64..1_000_000).prop_map(|n| n.to_string()),
        prop::collection::vec(
            prop::sample::select(vec![
                "a",
                "Z",
                " ",
                "/",
                "\\/",
                "\\\\",
                "\\\"",
                "\\n",
                "\\t",
                "\\b",
                "\\f",
                "\\r",
                "\\u0041",
                "\\u00e9",
                "\\u4E2D",
                "\\ud83d\\ude00",
                "\\ud83d",
                "\\udc00",
                "\\u12",
                "\\x",
                "é",
                "\u{1}",
                "\t",
            ]),
            0..6,
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat())),
    ];
    let value = scalar.prop_recursive(4, 24, 5, |inner| {
        let key = prop::sample::select(vec!["a", "b", "c", "key", "1", "", "a/b", "é"]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key, inner), 0..5).prop_map(|pairs| {
                let members: Vec<String> = pairs
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }),
        ]
    });
    let damage = prop_oneof![
        6 => Just(None),
        1 => (any::<prop::sample::Index>(), prop::sample::select(vec![
            ",", ":", "[", "]", "{", "}", "\"", "\\", " ", "\0", "x", "\n",
        ])).prop_map(|(at, piece)| Some((at, piece, false))),
        1 => (any::<prop::sample::Index>(), Just("")).prop_map(|(at, piece)| Some((at, piece, true))),
    ];
    (value, damage).prop_map(|(text, damage)| match damage {
        None => text,
        Some((at, piece, cut)) => {
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            let at = boundaries[at.index(boundaries.len())];
            if cut {
                text[..at].to_string()
            } else {
                format!("{}{piece}{}", &text[..at], &text[at..])
            }
        }
    })
}

/// `cjson.decode` of generated text, and `cjson.encode` of what it gave.
const DECODE_ENCODE: &str = "local ok, v = pcall(cjson.decode, ARGV[1])\n\
    if not ok then return 'decode: ' .. v end\n\
    local ok2, s = pcall(cjson.encode, v)\n\
    if not ok2 then return 'encode: ' .. s end\n\
    return s";

/// Generated JSON texts decoded and encoded again.
#[test]
fn generated_json_round_trips_match_redis() {
    let strategy = prop::collection::vec(json_text(), 1..=4).prop_map(|texts| {
        texts
            .into_iter()
            .map(|t| eval_op(DECODE_ENCODE.to_string(), vec![], vec![Arg::Text(t)], false))
            .collect()
    });
    check_generated("generated_json_round_trips_match_redis", 300, strategy);
}

/// A number as a script's argument: integers of every size, fractions, hexadecimal,
/// exponents, infinities and words.
fn bit_operand() -> impl Strategy<Value = Arg> {
    prop_oneof![
        (-40i64..40).prop_map(|n| Arg::Text(n.to_string())),
        any::<i32>().prop_map(|n| Arg::Text(n.to_string())),
        any::<i64>().prop_map(|n| Arg::Text(n.to_string())),
        (-1e6f64..1e6).prop_map(|x| Arg::Text(format!("{x:.2}"))),
        prop::sample::select(vec![
            "0x7fffffff",
            "0xffffffff",
            "0x100000000",
            " 12 ",
            "1e10",
            "2.5",
            "3.5",
            "-0.5",
            "4294967296",
            "9007199254740993",
            "1e300",
            "inf",
            "nan",
            "x",
            "",
            "0x",
        ])
        .prop_map(text),
    ]
}

/// Every `bit` function on two generated arguments.
const BIT_ALL: &str = "local a, b = ARGV[1], ARGV[2]\n\
    local ok, r = pcall(function()\n\
      return {bit.tobit(a), bit.bnot(a), bit.bswap(a), bit.band(a, b), bit.bor(a, b),\n\
        bit.bxor(a, b, a), bit.lshift(a, b), bit.rshift(a, b), bit.arshift(a, b),\n\
        bit.rol(a, b), bit.ror(a, b), bit.tohex(a), bit.tohex(a, b)}\n\
    end)\n\
    return r";

/// Generated operands through every `bit` function.
#[test]
fn generated_bit_operations_match_redis() {
    let strategy = prop::collection::vec(
        (bit_operand(), bit_operand())
            .prop_map(|(a, b)| eval_op(BIT_ALL.to_string(), vec![], vec![a, b], false)),
        1..=4,
    );
    check_generated("generated_bit_operations_match_redis", 300, strategy);
}

/// A Lua table constructor (source text) of numbers, strings, booleans and tables under keys
/// of every kind `cjson.encode` meets: a sequence, holes, integers past it, fractions, strings.
fn lua_value_source() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        prop::sample::select(vec![
            "1",
            "-2",
            "0",
            "1/3",
            "2^53",
            "1e300",
            "-0.0",
            "12345.678",
            "true",
            "false",
            "'x'",
            "'a/b'",
            "'\\0\\1\\127'",
            "'\\228\\184\\173'",
            "''",
            "cjson.null",
        ])
        .prop_map(str::to_string),
        (-1000i64..1000).prop_map(|n| n.to_string()),
    ];
    scalar.prop_recursive(3, 30, 6, |inner| {
        let entry = prop_oneof![
            3 => inner.clone().prop_map(|v| v),
            1 => ((1i64..30), inner.clone()).prop_map(|(k, v)| format!("[{k}] = {v}")),
            1 => (prop::sample::select(vec!["a", "b", "key", "z"]), inner.clone())
                .prop_map(|(k, v)| format!("{k} = {v}")),
            1 => (prop::sample::select(vec!["0", "-1", "1.5", "'1'", "2^31", "1e10"]), inner)
                .prop_map(|(k, v)| format!("[{k}] = {v}")),
        ];
        prop::collection::vec(entry, 0..7).prop_map(|entries| format!("{{{}}}", entries.join(", ")))
    })
}

/// Generated Lua values through `cjson.encode`, and what `cjson.decode` makes of the text.
#[test]
fn generated_lua_values_encode_as_redis_does() {
    let strategy = prop::collection::vec(
        lua_value_source().prop_map(|value| {
            let source = format!(
                "local ok, s = pcall(cjson.encode, {value})\n\
                 if not ok then return 'encode: ' .. s end\n\
                 local ok2, v = pcall(cjson.decode, s)\n\
                 if not ok2 then return {{s, 'decode: ' .. v}} end\n\
                 return {{s, cjson.encode(v)}}"
            );
            eval_op(source, vec![], vec![], false)
        }),
        1..=4,
    );
    check_generated("generated_lua_values_encode_as_redis_does", 300, strategy);
}

/// Scripts that use `cmsgpack` as Redis 7.0 gives it: packing every kind of value (integers at
/// each size boundary, floats and doubles, infinities and NaN, strings at each header size,
/// arrays, maps, holes, nesting past 16, functions), unpacking every form it reads and the
/// ones it refuses, cut input, offsets and limits, and the argument errors.
const CMSGPACK_PROBES: [&str; 24] = [
    "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
    "return hex(cmsgpack.pack(0, 1, 127, 128, 255, 256, 65535, 65536, 2^32 - 1, 2^32, 2^53, 2^63))",
    "return hex(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1, -2^63))",
    "return hex(cmsgpack.pack(0.5, 0.1, -2.25, 1/0, -1/0, 0/0, 1e300, 2^64, -0.0))",
    "return hex(cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('y', 32), string.rep('z', 256)):sub(1, 120))",
    "return #cmsgpack.pack(string.rep('w', 70000))",
    "return hex(cmsgpack.pack({}, {1, 2, 3}, {[1] = 'a', [3] = 'c'}, {a = 1}, {1, 2, x = 3}, {[1.5] = 1}, {[-1] = 1}, {[2^31] = 1}))",
    "local t = {} for i = 1, 20 do t[i] = i end return hex(cmsgpack.pack(t))",
    "local t = {} for i = 1, 20 do t['k' .. i] = i end return #cmsgpack.pack(t)",
    "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return hex(cmsgpack.pack(t))",
    "return hex(cmsgpack.pack(true, false, nil, function() end, cjson.null, coroutine.create(function() end)))",
    "return hex(cmsgpack.pack(string))",
    "return cmsgpack.pack()",
    "return {pcall(cmsgpack.pack)}",
    "local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))",
    "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3, {four = 4}}, true, 0.5))}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
    "local s = cmsgpack.pack(1, 2, 3)\nreturn {{cmsgpack.unpack_one(s, 1)}, {cmsgpack.unpack_one(s, 2)}, {cmsgpack.unpack_one(s, 3)}}",
    "local s = cmsgpack.pack(1, 2, 3)\nreturn {{cmsgpack.unpack_limit(s, 2)}, {cmsgpack.unpack_limit(s, 0, 1)}, {cmsgpack.unpack_limit(s, 0)}}",
    "return {pcall(cmsgpack.unpack_limit, 'abc', -1)}",
    "return {pcall(cmsgpack.unpack_one, 'abc', 9)}",
    "return {pcall(cmsgpack.unpack_limit, 'abc')}",
    "return {pcall(cmsgpack.unpack)}",
    "return {pcall(cmsgpack.unpack, '\\129\\192\\1')}",
];

/// A script's helper that writes bytes as hexadecimal, put in front of each msgpack script.
const HEX: &str = "local function hex(s) return (s:gsub('.', function(c) \
    return string.format('%02x', c:byte()) end)) end\n";

/// Every `cmsgpack` probe once, by `EVAL`.
#[test]
fn cmsgpack_matches_redis() {
    let sequences: Vec<Vec<Op>> = CMSGPACK_PROBES
        .iter()
        .map(|source| vec![eval_op(format!("{HEX}{source}"), vec![], vec![], false)])
        .collect();
    check_sequences("cmsgpack_matches_redis", &sequences);
}

/// MessagePack-like bytes (as hexadecimal): pieces of every form lua-cmsgpack reads, the forms
/// it refuses (`bin`, `ext`, 0xc1), headers whose contents are missing, and stray bytes.
fn msgpack_hex() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "c0",
            "c2",
            "c3",
            "00",
            "01",
            "7f",
            "ff",
            "e0",
            "cc80",
            "cd0100",
            "ce00010000",
            "cf8000000000000000",
            "cfffffffffffffffff",
            "d0ff",
            "d1ff01",
            "d2ffffff00",
            "d3ffffffffffffffff",
            "ca3f800000",
            "ca7fc00000",
            "cb3ff0000000000000",
            "cbfff8000000000000",
            "a3616263",
            "a0",
            "d903616263",
            "da0003616263",
            "db00000003616263",
            "91",
            "92",
            "93",
            "9f",
            "81",
            "82",
            "dc0002",
            "dd00000001",
            "de0001",
            "df00000001",
            "90",
            "80",
            "c4026869",
            "c1",
            "d401",
            "c7",
            "a5",
            "d9",
            "cd01",
            "cb3ff0",
        ])
        .prop_map(str::to_string),
        any::<u8>().prop_map(|b| format!("{b:02x}")),
    ];
    prop::collection::vec(piece, 1..10).prop_map(|pieces| pieces.concat())
}

/// Unpacks generated bytes whole, one value, and up to a limit from an offset; what came out
/// is packed again and shown as hexadecimal (or the error). A map unpacked with a map as a key
/// becomes a table keyed by a table, which Lua iterates in the order of its address (in Redis
/// as in the stand-in, different from run to run), so such a value is shown as `table-keyed`.
const MSGPACK_UNPACK: &str = "local s = ARGV[1]:gsub('..', function(h) return string.char(tonumber(h, 16)) end)\n\
    local function keyed(v, depth)\n\
      if type(v) ~= 'table' or depth > 40 then return false end\n\
      for k, x in pairs(v) do\n\
        if type(k) == 'table' or keyed(x, depth + 1) then return true end\n\
      end\n\
      return false\n\
    end\n\
    local function show(ok, ...)\n\
      if not ok then return 'E:' .. tostring(...) end\n\
      if select('#', ...) == 0 then return 'none' end\n\
      for i = 1, select('#', ...) do\n\
        if keyed((select(i, ...)), 0) then return 'table-keyed' end\n\
      end\n\
      return hex(cmsgpack.pack(...))\n\
    end\n\
    return {show(pcall(cmsgpack.unpack, s)), show(pcall(cmsgpack.unpack_one, s, tonumber(ARGV[2]))),\n\
      show(pcall(cmsgpack.unpack_limit, s, tonumber(ARGV[3]), tonumber(ARGV[2])))}";

/// Generated bytes through `cmsgpack.unpack`, `unpack_one` and `unpack_limit`.
#[test]
fn generated_msgpack_unpacks_as_redis_does() {
    let strategy = prop::collection::vec(
        (msgpack_hex(), -1i64..12, -1i64..4).prop_map(|(bytes, offset, limit)| {
            eval_op(
                format!("{HEX}{MSGPACK_UNPACK}"),
                vec![],
                vec![
                    Arg::Text(bytes),
                    Arg::Text(offset.to_string()),
                    Arg::Text(limit.to_string()),
                ],
                false,
            )
        }),
        1..=4,
    );
    check_generated("generated_msgpack_unpacks_as_redis_does", 300, strategy);
}

/// Generated Lua values through `cmsgpack.pack`, and back through `unpack`.
#[test]
fn generated_lua_values_pack_as_redis_does() {
    let strategy = prop::collection::vec(
        (lua_value_source(), lua_value_source()).prop_map(|(first, second)| {
            let source = format!(
                "{HEX}local s = cmsgpack.pack({first}, {second})\n\
                 return {{hex(s), hex(cmsgpack.pack(cmsgpack.unpack(s)))}}"
            );
            eval_op(source, vec![], vec![], false)
        }),
        1..=4,
    );
    check_generated("generated_lua_values_pack_as_redis_does", 300, strategy);
}

/// Scripts that use `struct` as Redis 7.0 gives it: every option, both byte orders,
/// alignment, fields wider than 8 bytes, C's casts of odd numbers, `c0` both ways, and every
/// error with the argument it names.
const STRUCT_PROBES: [&str; 20] = [
    "return {hex(struct.pack('>i', 1)), hex(struct.pack('<i', -2)), hex(struct.pack('>I16', -1)), hex(struct.pack('<i16', -1)), hex(struct.pack('>i3', 2^23))}",
    "return {hex(struct.pack('>b', 300)), hex(struct.pack('>h', -1.7)), hex(struct.pack('>L', 2^64)), hex(struct.pack('>l', 2^63)), hex(struct.pack('>I', 2^40 + 5))}",
    "return {hex(struct.pack('>L', 0/0)), hex(struct.pack('>L', 1/0)), hex(struct.pack('>l', -1/0)), hex(struct.pack('<f', 1.5)), hex(struct.pack('>d', 0.1))}",
    "return {hex(struct.pack('!4bxi', 1, 2)), hex(struct.pack('!4 b i3 h', 1, 2, 3)), hex(struct.pack('c3', 'abcdef')), hex(struct.pack('s', 'a\\0b')), hex(struct.pack('c0', 'xyz'))}",
    "return {struct.size('!4bi'), struct.size('bi'), struct.size('!bd'), struct.size('!8bd'), struct.size('c10'), struct.size('T'), struct.size('q'), struct.size('x')}",
    "return {struct.unpack('>I16', struct.pack('>I16', -1))}",
    "return {struct.unpack('<i16', struct.pack('<i16', -5))}",
    "return {struct.unpack('b c0', '\\3abcd')}",
    "return {struct.unpack('c2c0', '12' .. string.rep('z', 20))}",
    "return {struct.unpack('>i', '\\0\\0\\0\\1\\0\\0\\0\\2', 5)}",
    "return {struct.unpack('!4bi', 'a\\0\\0\\0\\1\\0\\0\\0'), struct.unpack('<I9', '\\1\\2\\3\\4\\5\\6\\7\\8\\9')}",
    "return {pcall(struct.pack, 'i33', 1)}",
    "return {pcall(struct.pack, '!3i', 1)}",
    "return {pcall(struct.pack, 'q', 1)}",
    "return {pcall(struct.pack, 'c5', 'abc')}",
    "return {pcall(struct.pack, 'bb', 1)}",
    "return {pcall(struct.size, 's'), pcall(struct.size, 'c0'), pcall(struct.size, '%')}",
    "return {pcall(struct.unpack, 'c0', 'abc'), pcall(struct.unpack, 's', 'abc'), pcall(struct.unpack, '>i', 'abc')}",
    "return {pcall(struct.unpack, 'i', 'abcd', 0), pcall(struct.unpack, 'i', 'abcd', -3), pcall(struct.pack, 'i99999999999', 1)}",
    "return #{struct.unpack(string.rep('b', 8100), string.rep('a', 8100))}",
];

/// Every `struct` probe once, by `EVAL`.
#[test]
fn struct_matches_redis() {
    let sequences: Vec<Vec<Op>> = STRUCT_PROBES
        .iter()
        .map(|source| vec![eval_op(format!("{HEX}{source}"), vec![], vec![], false)])
        .collect();
    check_sequences("struct_matches_redis", &sequences);
}

/// A `struct` format: options with and without counts, byte orders, alignments, spaces, and
/// now and then one it refuses.
fn struct_format() -> impl Strategy<Value = String> {
    let option = prop_oneof![
        8 => prop::sample::select(vec![
            "b", "B", "h", "H", "l", "L", "T", "i", "I", "i1", "I2", "i3", "i8", "I12", "i16",
            "f", "d", "x", "c2", "c0", "s", ">", "<", "!", "!2", "!4", " ",
        ]),
        1 => prop::sample::select(vec!["q", "=", "!3", "i40", "%"]),
    ];
    prop::collection::vec(option, 1..7).prop_map(|options| options.concat())
}

/// Values for a format's fields: numbers of every size and kind, and strings.
fn struct_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-300i64..300).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "2^31", "-2^31", "2^32", "2^63", "-2^63", "2^64", "1/0", "-1/0", "0/0", "1.5", "-2.75",
            "0.1", "'ab'", "'abcdef'", "''", "'7'",
        ])
        .prop_map(str::to_string),
    ]
}

/// Generated formats packed with generated values, and unpacked again; generated formats
/// unpacking generated bytes from generated offsets.
#[test]
fn generated_struct_formats_match_redis() {
    let packing = (struct_format(), prop::collection::vec(struct_value(), 0..6)).prop_map(
        |(format, values)| {
            let source = format!(
                "{HEX}local ok, s = pcall(struct.pack, '{format}'{})\n\
                 if not ok then return 'E:' .. s end\n\
                 return {{hex(s), pcall(struct.size, '{format}'), pcall(struct.unpack, '{format}', s)}}",
                values.iter().map(|v| format!(", {v}")).collect::<String>()
            );
            eval_op(source, vec![], vec![], false)
        },
    );
    let unpacking = (struct_format(), msgpack_hex(), -2i64..6).prop_map(|(format, bytes, start)| {
        let source = format!(
            "{HEX}local s = ARGV[1]:gsub('..', function(h) return string.char(tonumber(h, 16)) end)\n\
             return {{pcall(struct.unpack, '{format}', s, tonumber(ARGV[2]))}}"
        );
        eval_op(
            source,
            vec![],
            vec![Arg::Text(bytes), Arg::Text(start.to_string())],
            false,
        )
    });
    let strategy = prop::collection::vec(prop_oneof![packing, unpacking], 1..=4);
    check_generated("generated_struct_formats_match_redis", 300, strategy);
}

fn probe_eval() -> impl Strategy<Value = Op> {
    (
        prop::sample::select(PROBES.to_vec()),
        token(),
        number_text(),
        any::<bool>(),
    )
        .prop_map(|(source, t, n, by_sha)| {
            eval_op(source.to_string(), vec![Arg::Key(0)], vec![t, n], by_sha)
        })
}

fn library_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => set(),
        2 => (name("get"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("pttl"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        8 => library_eval(),
        2 => hash_op(),
        4 => variant_eval(),
        4 => probe_eval(),
    ]
}

fn library_sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(library_op(), 1..=10)
}

/// Generated sequences of the further commands (TTL, EXPIRE, ..., WAIT).
const MORE_SEQUENCES: u32 = 400;

/// A TTL in seconds or a Unix time for the expire commands: long enough to stay stable, in
/// the past, or invalid.
fn expire_op() -> impl Strategy<Value = Op> {
    let seconds = prop_oneof![
        3 => (100i64..1_000_000).prop_map(|s| Arg::Text(s.to_string())),
        1 => (-100i64..=0).prop_map(|s| Arg::Text(s.to_string())),
        2 => bad_ttl(),
    ];
    let at_secs = prop_oneof![
        3 => (100i64..1_000_000).prop_map(Arg::FromNowSecs),
        1 => (-1_000i64..=-2).prop_map(Arg::FromNowSecs),
        2 => bad_ttl(),
    ];
    let at_ms = prop_oneof![
        3 => (100_000i64..1_000_000_000).prop_map(Arg::FromNowMs),
        1 => (-1_000_000i64..=-2_000).prop_map(Arg::FromNowMs),
        2 => bad_ttl(),
    ];
    let ms = prop_oneof![
        3 => (100_000i64..1_000_000_000).prop_map(|ms| Arg::Text(ms.to_string())),
        1 => (-100i64..=0).prop_map(|ms| Arg::Text(ms.to_string())),
        1 => bad_ttl(),
    ];
    // Redis 7's NX|XX|GT|LT, valid, repeated, incompatible and unknown, in any case: mostly
    // none, so that keys keep TTLs for the options to compare against.
    let options = prop_oneof![
        3 => Just(Vec::new()),
        2 => prop::collection::vec(
            prop::sample::select(vec!["nx", "XX", "gt", "Lt", "xx", "GT", "nope"]).prop_map(text),
            1..=2,
        ),
    ];
    let with = |c: Arg, k: Arg, t: Arg, o: Vec<Arg>| Op::new([vec![c, k, t], o].concat());
    prop_oneof![
        (name("expire"), key(), seconds, options.clone())
            .prop_map(move |(c, k, t, o)| with(c, k, t, o)),
        (name("expireat"), key(), at_secs, options.clone())
            .prop_map(move |(c, k, t, o)| with(c, k, t, o)),
        (name("pexpireat"), key(), at_ms, options.clone())
            .prop_map(move |(c, k, t, o)| with(c, k, t, o)),
        (name("pexpire"), key(), ms, options).prop_map(move |(c, k, t, o)| with(c, k, t, o)),
    ]
}

/// A hash field.
fn field() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["f1", "f2", "uuid-1:1", ""]).prop_map(text)
}

fn hash_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (name("hset"), key(), prop::collection::vec((field(), value()), 1..=3))
            .prop_map(|(c, k, pairs)| {
                let flat = pairs.into_iter().flat_map(|(f, v)| [f, v]).collect();
                Op::new([vec![c, k], flat].concat())
            }),
        1 => (name("hset"), key(), field()).prop_map(|(c, k, f)| Op::new(vec![c, k, f])),
        2 => (name("hget"), key(), field()).prop_map(|(c, k, f)| Op::new(vec![c, k, f])),
        3 => (name("hincrby"), key(), field(), number_text())
            .prop_map(|(c, k, f, n)| Op::new(vec![c, k, f, n])),
        2 => (name("hexists"), key(), field()).prop_map(|(c, k, f)| Op::new(vec![c, k, f])),
        2 => (name("hdel"), key(), prop::collection::vec(field(), 1..=3))
            .prop_map(|(c, k, fields)| Op::new([vec![c, k], fields].concat())),
        2 => (name("hgetall"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        1 => (name("hlen"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
    ]
}

fn more_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => hash_op(),
        6 => set(),
        3 => (name("set"), key(), number_text()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        4 => expire_op(),
        3 => (name("ttl"), key()).prop_map(|(c, k)| Op {
            compare: Compare::Ttl,
            ..Op::new(vec![c, k])
        }),
        2 => (name("pttl"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("persist"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("getdel"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        3 => (name("incrby"), key(), number_text()).prop_map(|(c, k, n)| Op::new(vec![c, k, n])),
        3 => (name("decrby"), key(), number_text()).prop_map(|(c, k, n)| Op::new(vec![c, k, n])),
        2 => (name("decr"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("type"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        1 => (name("echo"), value()).prop_map(|(c, v)| Op::new(vec![c, v])),
        1 => (name("publish"), value(), value()).prop_map(|(c, ch, m)| Op::new(vec![c, ch, m])),
        1 => (name("wait"), prop::sample::select(vec!["0", "x", "-1"]).prop_map(text),
              prop::sample::select(vec!["0", "10", "-1", "x"]).prop_map(text))
            .prop_map(|(c, n, t)| Op::new(vec![c, n, t])),
        2 => (name("exists"), prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, keys)| Op::new([vec![c], keys].concat())),
        1 => malformed(),
    ]
}

/// The string, key and hash commands a user reaches for beyond the safeguards' own: MGET,
/// MSET, MSETNX, GETSET, SETEX, PSETEX, STRLEN, APPEND, GETRANGE, UNLINK, EXPIRETIME,
/// PEXPIRETIME, HMGET, HMSET, HSETNX, HKEYS, HVALS, HSTRLEN, mixed with SET, HSET and EXPIRE
/// so that keys have types and TTLs to meet.
fn string_op() -> impl Strategy<Value = Op> {
    let keys = || prop::collection::vec(key(), 1..=3);
    let pairs = || prop::collection::vec((key(), value()), 1..=3);
    let flat = |pairs: Vec<(Arg, Arg)>| pairs.into_iter().flat_map(|(k, v)| [k, v]).collect();
    let ttl = prop_oneof![
        3 => (1i64..1_000_000).prop_map(|n| Arg::Text(n.to_string())),
        1 => prop::sample::select(vec![
            "0", "-5", "x", "1.5", "9223372036854775", "9223372036854775807",
            "-9223372036854775808",
        ])
        .prop_map(text),
    ];
    let index = prop::sample::select(vec!["0", "1", "-1", "-3", "2", "100", "x"]).prop_map(text);
    prop_oneof![
        4 => hash_op(),
        4 => set(),
        3 => expire_op(),
        2 => (name("mget"), keys()).prop_map(|(c, k)| Op::new([vec![c], k].concat())),
        2 => (name("mset"), pairs()).prop_map(move |(c, p)| Op::new([vec![c], flat(p)].concat())),
        2 => (name("msetnx"), pairs()).prop_map(move |(c, p)| Op::new([vec![c], flat(p)].concat())),
        1 => (name("mset"), pairs(), key())
            .prop_map(move |(c, p, k)| Op::new([vec![c], flat(p), vec![k]].concat())),
        2 => (name("getset"), key(), value()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        2 => (name("setex"), key(), ttl.clone(), value())
            .prop_map(|(c, k, t, v)| Op::new(vec![c, k, t, v])),
        2 => (name("psetex"), key(), ttl, value())
            .prop_map(|(c, k, t, v)| Op::new(vec![c, k, t, v])),
        2 => (name("strlen"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("append"), key(), value()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        2 => (name("getrange"), key(), index.clone(), index)
            .prop_map(|(c, k, a, b)| Op::new(vec![c, k, a, b])),
        2 => (name("unlink"), keys()).prop_map(|(c, k)| Op::new([vec![c], k].concat())),
        2 => (name("rename"), key(), key()).prop_map(|(c, a, b)| Op::new(vec![c, a, b])),
        2 => (name("renamenx"), key(), key()).prop_map(|(c, a, b)| Op::new(vec![c, a, b])),
        1 => (name("touch"), keys()).prop_map(|(c, k)| Op::new([vec![c], k].concat())),
        3 => (name("getex"), key(), getex_options())
            .prop_map(|(c, k, o)| Op::new([vec![c, k], o].concat())),
        2 => (name("keys"), pattern()).prop_map(|(c, p)| Op {
            compare: Compare::Unordered,
            ..Op::new(vec![c, p])
        }),
        3 => (name("scan"), pattern(), scan_options()).prop_map(|(c, p, o)| Op {
            compare: Compare::ScanAll,
            ..Op::new([vec![c, text("0"), text("MATCH"), p], o].concat())
        }),
        // Cursors Redis refuses, and ones it reads as 0 (a scan from them runs to the end).
        1 => (name("scan"),
              prop::sample::select(vec!["x", " 0", "18446744073709551616", "+", "1e3", "0x1"]),
              pattern())
            .prop_map(|(c, cursor, p)| Op::new(vec![c, text(cursor), text("MATCH"), p])),
        1 => (name("scan"), prop::sample::select(vec!["+0", "-0", "", "00"]), pattern())
            .prop_map(|(c, cursor, p)| Op {
                compare: Compare::ScanAll,
                ..Op::new(vec![c, text(cursor), text("MATCH"), p])
            }),
        2 => (name("expiretime"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("pexpiretime"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        2 => (name("hmget"), key(), prop::collection::vec(field(), 1..=3))
            .prop_map(|(c, k, f)| Op::new([vec![c, k], f].concat())),
        2 => (name("hmset"), key(), prop::collection::vec((field(), value()), 1..=2))
            .prop_map(move |(c, k, p)| Op::new([vec![c, k], flat(p)].concat())),
        1 => (name("hmset"), key(), field()).prop_map(|(c, k, f)| Op::new(vec![c, k, f])),
        2 => (name("hsetnx"), key(), field(), value())
            .prop_map(|(c, k, f, v)| Op::new(vec![c, k, f, v])),
        1 => (name("hkeys"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        1 => (name("hvals"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        1 => (name("hstrlen"), key(), field()).prop_map(|(c, k, f)| Op::new(vec![c, k, f])),
        // Offsets past 512 MiB are refused before anything is written (an empty value at one
        // changes nothing); no generated write makes a string that long.
        3 => (name("setrange"),
              key(),
              prop::sample::select(vec![
                  "0", "1", "2", "5", "12", "-1", "x", "1.5", "536870912", "536870911",
                  "9223372036854775807",
              ]),
              value())
            .prop_map(|(c, k, offset, v)| {
                let v = if offset == "536870911" { text("") } else { v };
                Op::new(vec![c, k, text(offset), v])
            }),
        // Database 0 only: a copy into another database of the real server would outlive the
        // test's key prefix clean-up (`databases_match_redis` copies into others).
        3 => (name("copy"),
              key(),
              key(),
              prop::sample::select(vec![
                  "", "REPLACE", "replace REPLACE", "DB 0", "db 0 replace", "DB 16", "DB -1",
                  "DB x", "DB", "FOO", "DB 3000000000", "REPLACE DB",
              ]))
            .prop_map(|(c, a, b, options)| {
                let options = options.split_whitespace().map(text);
                Op::new([vec![c, a, b], options.collect()].concat())
            }),
    ]
}

/// The bit commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP) with offsets, bits, ranges and
/// units valid and not, mixed with SET of strings of varied bits, APPEND, SETRANGE, the hash
/// commands (for `WRONGTYPE`) and the expire family. No generated `SETBIT` grows a string
/// past 13 bytes: an offset near 2^32 is only sent where Redis refuses it or reads it.
fn bit_op() -> impl Strategy<Value = Op> {
    let bits_value = || {
        prop::sample::select(vec![
            "foobar",
            "",
            "a",
            "\u{1}",
            "\u{7f}",
            "ÿ",
            "€€",
            "hello world",
            "10",
            "\u{0}\u{0}",
        ])
        .prop_map(text)
    };
    let offset = || {
        prop_oneof![
            4 => (0u32..104).prop_map(|n| Arg::Text(n.to_string())),
            1 => prop::sample::select(vec!["-1", "x", "1.5", "4294967296", " 1", "+1", "-0"])
                .prop_map(text),
        ]
    };
    let read_offset = || {
        prop_oneof![
            3 => offset(),
            1 => prop::sample::select(vec!["1000000", "4294967295", "9223372036854775807"])
                .prop_map(text),
        ]
    };
    let index = || {
        prop::sample::select(vec![
            "0",
            "1",
            "2",
            "-1",
            "-2",
            "5",
            "7",
            "9",
            "17",
            "100",
            "-100",
            "x",
            "-9223372036854775808",
            "9223372036854775807",
        ])
        .prop_map(text)
    };
    let unit = || prop::sample::select(vec!["BYTE", "BIT", "bit", "Byte", "FOO"]).prop_map(text);
    let bit = || prop::sample::select(vec!["0", "1", "1", "0", "2", "-1", "x"]).prop_map(text);
    let range = move || {
        prop_oneof![
            2 => Just(Vec::new()),
            1 => index().prop_map(|a| vec![a]),
            3 => (index(), index()).prop_map(|(a, b)| vec![a, b]),
            3 => (index(), index(), unit()).prop_map(|(a, b, u)| vec![a, b, u]),
            1 => (index(), index(), unit(), unit()).prop_map(|(a, b, u, v)| vec![a, b, u, v]),
        ]
    };
    prop_oneof![
        3 => (name("set"), key(), bits_value()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        1 => (name("append"), key(), bits_value()).prop_map(|(c, k, v)| Op::new(vec![c, k, v])),
        1 => (name("setrange"), key(), prop::sample::select(vec!["0", "1", "3"]), bits_value())
            .prop_map(|(c, k, o, v)| Op::new(vec![c, k, text(o), v])),
        1 => hash_op(),
        1 => expire_op(),
        1 => (name("get"), key()).prop_map(|(c, k)| Op::new(vec![c, k])),
        4 => (name("setbit"), key(), offset(), bit())
            .prop_map(|(c, k, o, b)| Op::new(vec![c, k, o, b])),
        3 => (name("getbit"), key(), read_offset())
            .prop_map(|(c, k, o)| Op::new(vec![c, k, o])),
        4 => (name("bitcount"), key(), range())
            .prop_map(|(c, k, r)| Op::new([vec![c, k], r].concat())),
        4 => (name("bitpos"), key(), bit(), range())
            .prop_map(|(c, k, b, r)| Op::new([vec![c, k, b], r].concat())),
        3 => (name("bitop"),
              prop::sample::select(vec!["AND", "or", "Xor", "NOT", "not", "nand"]),
              key(),
              prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, op, dest, sources)| Op::new([vec![c, text(op), dest], sources].concat())),
        1 => (name("bitop"), prop::sample::select(vec!["AND", "NOT"]), key())
            .prop_map(|(c, op, dest)| Op::new(vec![c, text(op), dest])),
    ]
}

fn bit_sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(bit_op(), 1..=14)
}

/// A pattern over the sequence's keys (`k0`, `k1`, `k2` under its prefix).
fn pattern() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec![
        "*", "k*", "k?", "k[01]", "k[^0]", "k[0-1]", "k[1-0]", "\\k1", "k\\2", "*1", "?*", "k[",
        "k[0", "x*", "k1", "k**", "[k]?", "k[\\]]",
    ])
    .prop_map(Arg::Pattern)
}

/// `SCAN` options after `MATCH`: `COUNT` (valid, 0, text), `TYPE` (each type, any case, an
/// unknown one), a second `MATCH`, an option without its value, an unknown option.
fn scan_options() -> impl Strategy<Value = Vec<Arg>> {
    let option = prop::sample::select(vec![
        "COUNT 1",
        "count 2",
        "COUNT 100",
        "COUNT 0",
        "COUNT x",
        "TYPE string",
        "type HASH",
        "TYPE list",
        "TYPE nope",
        "COUNT",
        "FOO 1",
    ]);
    prop::collection::vec(option, 0..=2).prop_map(|options| {
        options
            .into_iter()
            .flat_map(|option| option.split(' ').map(text).collect::<Vec<_>>())
            .collect()
    })
}

/// `GETEX` options: each expiry kind with a valid, zero, negative, non-integer or overflowing
/// number, `PERSIST`, combinations Redis refuses, and an option without its number.
fn getex_options() -> impl Strategy<Value = Vec<Arg>> {
    let relative = prop_oneof![
        3 => (1i64..1_000_000).prop_map(|n| Arg::Text(n.to_string())),
        1 => prop::sample::select(vec!["0", "-5", "x", "9223372036854775807"]).prop_map(text),
    ];
    let at_secs = prop_oneof![
        3 => (100i64..1_000_000).prop_map(Arg::FromNowSecs),
        1 => (-1_000i64..=-2).prop_map(Arg::FromNowSecs),
    ];
    let at_ms = prop_oneof![
        3 => (100_000i64..1_000_000_000).prop_map(Arg::FromNowMs),
        1 => (-1_000_000i64..=-2_000).prop_map(Arg::FromNowMs),
    ];
    prop_oneof![
        2 => Just(Vec::new()),
        2 => (prop::sample::select(vec!["EX", "px", "Ex"]), relative.clone())
            .prop_map(|(o, n)| vec![text(o), n]),
        1 => at_secs.prop_map(|n| vec![text("EXAT"), n]),
        1 => at_ms.prop_map(|n| vec![text("pxat"), n]),
        2 => Just(vec![text("PERSIST")]),
        1 => prop::sample::select(vec![
            "EX 10 PX 10", "EX 10 EX 20", "PERSIST EX 10", "EX 10 PERSIST", "PERSIST persist",
            "EX", "KEEPTTL", "NX", "GET", "FOO",
        ])
        .prop_map(|o| o.split(' ').map(text).collect()),
    ]
}

fn string_sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(string_op(), 1..=12)
}

fn more_sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(more_op(), 1..=12)
}

/// Generated transaction sequences (two connections).
const TRANSACTION_SEQUENCES: u32 = 300;

/// A reply as RESP2 bytes, exactly as the stand-in's RESP server sends it.
fn resp_bytes(reply: &leaselab_model::redis::Reply) -> Vec<u8> {
    let mut out = Vec::new();
    leaselab_sim::resp::encode_reply(reply, &mut out);
    out
}

/// Reads one whole RESP2 reply, as raw bytes.
fn read_resp(reader: &mut impl std::io::BufRead) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    let header = String::from_utf8_lossy(&line[1..line.len().saturating_sub(2)]).into_owned();
    let mut out = line.clone();
    match line.first() {
        Some(b'$') => {
            let length: i64 = header.parse().unwrap_or(-1);
            if length >= 0 {
                let mut body = vec![0; usize::try_from(length).unwrap_or(0) + 2];
                reader.read_exact(&mut body)?;
                out.extend(body);
            }
        }
        Some(b'*') => {
            let count: i64 = header.parse().unwrap_or(-1);
            for _ in 0..count.max(0) {
                out.extend(read_resp(reader)?);
            }
        }
        _ => {}
    }
    Ok(out)
}

fn encode_argv(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for arg in argv {
        out.extend(format!("${}\r\n", arg.len()).into_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// One raw connection to the real server.
struct RawConnection {
    writer: std::net::TcpStream,
    reader: std::io::BufReader<std::net::TcpStream>,
}

impl RawConnection {
    fn open(url: &str) -> RawConnection {
        let address = url
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .to_string();
        let stream = std::net::TcpStream::connect(&address)
            .unwrap_or_else(|error| panic!("cannot connect to {address}: {error}"));
        stream
            .set_read_timeout(Some(RESPONSE_TIMEOUT))
            .expect("a read timeout");
        RawConnection {
            writer: stream.try_clone().expect("a second handle"),
            reader: std::io::BufReader::new(stream),
        }
    }

    fn send(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        use std::io::Write;
        self.writer
            .write_all(&encode_argv(argv))
            .expect("send to Redis");
        read_resp(&mut self.reader).expect("a reply from Redis")
    }
}

/// A step of a transaction sequence: which connection, and the command.
fn transaction_step() -> impl Strategy<Value = (usize, Vec<Arg>)> {
    let key = || (0..2u8).prop_map(Arg::Key);
    let command = prop_oneof![
        3 => Just(vec![text("MULTI")]),
        3 => Just(vec![text("EXEC")]),
        1 => Just(vec![text("DISCARD")]),
        3 => prop::collection::vec(key(), 1..=2)
            .prop_map(|keys| [vec![text("WATCH")], keys].concat()),
        1 => Just(vec![text("WATCH")]),
        1 => Just(vec![text("UNWATCH")]),
        3 => (key(), value()).prop_map(|(k, v)| vec![text("SET"), k, v]),
        2 => key().prop_map(|k| vec![text("GET"), k]),
        2 => key().prop_map(|k| vec![text("INCR"), k]),
        1 => key().prop_map(|k| vec![text("DEL"), k]),
        1 => key().prop_map(|k| vec![text("PEXPIRE"), k, text("100000")]),
        1 => key().prop_map(|k| vec![text("SET"), k, text("v"), text("FOO")]),
        1 => key().prop_map(|k| vec![text("INCR"), k, text("x")]),
        1 => Just(vec![text("NOSUCH"), text("a")]),
    ];
    (prop_oneof![2 => Just(0usize), 1 => Just(1usize)], command)
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn generated_command_sequences_match_redis() {
    check_generated(
        "generated_command_sequences_match_redis",
        cases(SEQUENCES),
        sequence(),
    );
}

/// Short TTLs with real waits past them: keys must be gone on both servers.
#[test]
fn expiry_after_real_waits() {
    check_generated(
        "expiry_after_real_waits",
        cases(EXPIRY_SEQUENCES),
        expiry_sequence(),
    );
}

/// A fixed sequence: `$kN` is key N, `$now_ms+N` / `$now_s+N` a Unix time from now.
fn fixed(commands: &[&[&str]]) -> Vec<Op> {
    commands
        .iter()
        .map(|command| {
            Op::new(
                command
                    .iter()
                    .map(|part| {
                        if let Some(n) = part.strip_prefix("$k") {
                            Arg::Key(n.parse().expect("a key number"))
                        } else if let Some(n) = part.strip_prefix("$now_ms+") {
                            Arg::FromNowMs(n.parse().expect("an offset"))
                        } else if let Some(n) = part.strip_prefix("$now_s+") {
                            Arg::FromNowSecs(n.parse().expect("an offset"))
                        } else {
                            text(part)
                        }
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The tutorial's lease: SET NX PX, PTTL, and the compare-and-delete release with a stale
/// token and the right one; once with the one-line script its `redis-cli` session types, once
/// with the Go source of it. Also the one-line script's errors, which name its own SHA1 and
/// line 1.
#[test]
fn tutorial_lease_session() {
    let session = |release: &'static str| {
        fixed(&[
            &["SET", "$k0", "token-a", "NX", "PX", "30000"],
            &["SET", "$k0", "token-b", "NX", "PX", "30000"],
            &["PTTL", "$k0"],
            &["EVAL", release, "1", "$k0", "token-b"],
            &["EVAL", release, "1", "$k0", "token-a"],
            &["EXISTS", "$k0"],
        ])
    };
    let one_line = ScriptId::ReleaseOneLine.source();
    let one_line_sha = ScriptId::ReleaseOneLine.sha1_hex();
    let go_sha = ScriptId::Release.sha1_hex();
    check_sequences(
        "tutorial_lease_session",
        &[
            session(one_line),
            session(ScriptId::Release.source()),
            fixed(&[
                &["EVAL", one_line, "0"],
                &["SCRIPT", "EXISTS", &one_line_sha, &go_sha],
                &["SET", "$k0", "x"],
                &["EVALSHA", &one_line_sha, "1", "$k0", "x"],
                &["EVALSHA", &go_sha, "1", "$k0", "x"],
            ]),
        ],
    );
}

/// The expiry boundary at the millisecond, inside one script (Redis 7 judges expiry in a
/// script by the time the script started, so every command sees the same millisecond). The
/// script reads `TIME` as `now` and finds whether the script's frozen clock is `now` or one
/// millisecond before (the real server's `TIME` may have moved on since the script started):
/// a key set to expire at `now − 1` is gone only in the first case. Then, at that frozen
/// millisecond `t`: a key with `PXAT t` still exists (`EXISTS`, `GET`, `PTTL` 0, and `SET NX`
/// finds it taken); `PXAT t − 1` is gone; `PEXPIREAT t` deletes at once (answers 1); `PXAT
/// t + 1` has `PTTL` 1. Run on the real server until its script did not straddle a
/// millisecond (at most 20 tries; `PTTL` reads the running clock), then compared with the
/// stand-in's answer.
const BOUNDARY_SCRIPT: &str = r#"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function at(ms) return string.format('%.0f', ms) end
redis.call('SET', KEYS[1], 'probe', 'PXAT', at(now - 1))
local straddled = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1])
local t = now - straddled
local out = {straddled}
redis.call('SET', KEYS[1], 'a', 'PXAT', at(t))
out[#out + 1] = redis.call('EXISTS', KEYS[1])
out[#out + 1] = redis.call('GET', KEYS[1])
out[#out + 1] = redis.call('PTTL', KEYS[1])
out[#out + 1] = redis.call('SET', KEYS[1], 'b', 'NX') or 'nil'
redis.call('SET', KEYS[2], 'a', 'PXAT', at(t - 1))
out[#out + 1] = redis.call('EXISTS', KEYS[2])
out[#out + 1] = redis.call('SET', KEYS[2], 'b', 'NX', 'PX', '60000')
redis.call('SET', KEYS[3], 'a')
out[#out + 1] = redis.call('PEXPIREAT', KEYS[3], at(t))
out[#out + 1] = redis.call('EXISTS', KEYS[3])
redis.call('SET', KEYS[3], 'a', 'PXAT', at(t + 1))
out[#out + 1] = redis.call('PTTL', KEYS[3])
return out
"#;

#[test]
fn expiry_boundary_at_the_millisecond() {
    let test = "expiry_boundary_at_the_millisecond";
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    LocalSet::new().block_on(&runtime(), async {
        let mut servers = Servers::connect(&url).await;
        let argv: Vec<Vec<u8>> = [
            "EVAL".to_string(),
            BOUNDARY_SCRIPT.to_string(),
            "3".to_string(),
            format!("{}k0", keys.prefix),
            format!("{}k1", keys.prefix),
            format!("{}k2", keys.prefix),
        ]
        .map(String::into_bytes)
        .to_vec();
        let del: Vec<Vec<u8>> = [b"DEL".to_vec()]
            .into_iter()
            .chain(argv[3..].iter().cloned())
            .collect();
        // The real server's answer, pinned: the boundary as Redis 7 keeps it.
        let expected = Answer::Value(Value::Array(vec![
            Value::Int(0),
            Value::Int(1),
            Value::BulkString(b"a".to_vec()),
            Value::Int(0),
            Value::BulkString(b"nil".to_vec()),
            Value::Int(0),
            Value::Okay,
            Value::Int(1),
            Value::Int(0),
            Value::Int(1),
        ]));
        // A run that straddled a millisecond (before or after `TIME`: `PTTL` reads the clock
        // as it is, not as the script started) is run again.
        let mut real = send(&mut servers.real, &argv).await;
        let mut tries = 1;
        while real != expected && tries < 20 {
            send(&mut servers.real, &del).await;
            real = send(&mut servers.real, &argv).await;
            tries += 1;
        }
        send(&mut servers.real, &del).await;
        let stand_in = send(&mut servers.stand_in, &argv).await;
        assert_eq!(real, expected, "Redis's boundary after {tries} tries");
        assert_eq!(stand_in, real, "the stand-in at the boundary");
        report(&format!(
            "{test}: the boundary answered as Redis does ({tries} run(s) on the real server)"
        ));
    });
}

/// A key whose lease ran out and that nothing touched since is free for `SET NX` (Redis
/// expires it on access), on both servers; and `TIME`'s arity error.
#[test]
fn set_nx_takes_an_expired_untouched_key() {
    let mut lapsed = fixed(&[
        &["SET", "$k0", "holder-a", "NX", "PX", "30"],
        &["SET", "$k0", "holder-b", "NX", "PX", "30000"],
        &["GET", "$k0"],
        &["PTTL", "$k0"],
        &["TIME", "now"],
    ]);
    lapsed[0].wait_ms = 80;
    check_sequences("set_nx_takes_an_expired_untouched_key", &[lapsed]);
}

/// `SCRIPT FLUSH` empties the cache: `EVALSHA` then answers NOSCRIPT until the script is
/// sent again.
#[test]
fn script_flush_then_evalsha() {
    let sha = ScriptId::FencedAcquire.sha1_hex();
    let source = ScriptId::FencedAcquire.source();
    check_sequences(
        "script_flush_then_evalsha",
        &[fixed(&[
            &["EVALSHA", &sha, "2", "$k0", "$k1", "t1", "30000"],
            &["EVAL", source, "2", "$k0", "$k1", "t1", "30000"],
            &["EVALSHA", &sha, "2", "$k0", "$k1", "t2", "30000"],
            &["SCRIPT", "EXISTS", &sha],
            &["SCRIPT", "FLUSH"],
            &["SCRIPT", "EXISTS", &sha],
            &["EVALSHA", &sha, "2", "$k0", "$k1", "t2", "30000"],
            &["DEL", "$k0"],
            &["SCRIPT", "LOAD", source],
            &["EVALSHA", &sha, "2", "$k0", "$k1", "t2", "30000"],
            &["GET", "$k1"],
        ])],
    );
}

/// `cjson`'s settings are the server's: one script's change holds for the next, until
/// `SCRIPT FLUSH` starts Lua afresh. The sequence ends with the defaults, as it found them.
#[test]
fn cjson_settings_last_until_script_flush() {
    let _defaults = CjsonDefaults::on_drop();
    check_sequences(
        "cjson_settings_last_until_script_flush",
        &[fixed(&[
            &["EVAL", "return cjson.encode_number_precision(4)", "0"],
            &["EVAL", "return cjson.encode({1/3, 2/3})", "0"],
            &["EVAL", "return {cjson.encode_sparse_array(true), cjson.encode_invalid_numbers('null')}", "0"],
            &["EVAL", "return cjson.encode({[1] = 1/3, [50] = 1/0})", "0"],
            &["SCRIPT", "FLUSH"],
            &["EVAL", "return {cjson.encode_number_precision(), cjson.encode_sparse_array(), cjson.encode_invalid_numbers()}", "0"],
            &["EVAL", "return {pcall(cjson.encode, {[1] = 1/3, [50] = 1})}", "0"],
        ])],
    );
}

/// Regression: a script's integer reply goes through a Lua number (a double), so a fence
/// counter past 2^53 loses precision and one at `i64::MAX` comes back as `i64::MIN` (the
/// stand-in returned the exact INCR result).
#[test]
fn regression_fenced_acquire_returns_the_fence_through_a_double() {
    let source = ScriptId::FencedAcquire.source();
    check_sequences(
        "regression_fenced_acquire_returns_the_fence_through_a_double",
        &[
            fixed(&[
                &["SET", "$k0", "9223372036854775806"],
                &["EVAL", source, "2", "$k1", "$k0", "t1", "10000"],
                &["GET", "$k0"],
            ]),
            fixed(&[
                &["SET", "$k0", "9007199254740992"],
                &["EVAL", source, "2", "$k1", "$k0", "t1", "10000"],
                &["GET", "$k0"],
            ]),
        ],
    );
}

/// Lock libraries' scripts, variants of the known scripts and Lua probes, generated.
#[test]
fn library_scripts_match_redis() {
    check_generated(
        "library_scripts_match_redis",
        cases(LIBRARY_SEQUENCES),
        library_sequence(),
    );
}

/// Each library's lock life on one key: acquire, a second caller refused, extend, release by
/// a stale token refused, release.
#[test]
fn lock_library_sessions() {
    use lock_scripts::*;
    let redsync = fixed(&[
        &["SET", "$k0", "tok-a", "NX", "PX", "30000"],
        &["EVAL", REDSYNC_TOUCH.source, "1", "$k0", "tok-b", "60000"],
        &["EVAL", REDSYNC_TOUCH.source, "1", "$k0", "tok-a", "60000"],
        &["PTTL", "$k0"],
        &["EVAL", REDSYNC_DELETE.source, "1", "$k0", "tok-b"],
        &["EVAL", REDSYNC_DELETE.source, "1", "$k0", "tok-a"],
        &["EXISTS", "$k0"],
    ]);
    let node_redlock = fixed(&[
        &[
            "EVAL",
            NODE_REDLOCK_ACQUIRE.source,
            "2",
            "$k0",
            "$k1",
            "tok-a",
            "30000",
        ],
        &[
            "EVAL",
            NODE_REDLOCK_ACQUIRE.source,
            "2",
            "$k1",
            "$k2",
            "tok-b",
            "30000",
        ],
        &[
            "EVAL",
            NODE_REDLOCK_EXTEND.source,
            "2",
            "$k0",
            "$k1",
            "tok-b",
            "60000",
        ],
        &[
            "EVAL",
            NODE_REDLOCK_EXTEND.source,
            "2",
            "$k0",
            "$k1",
            "tok-a",
            "60000",
        ],
        &["PTTL", "$k1"],
        &[
            "EVAL",
            NODE_REDLOCK_RELEASE.source,
            "2",
            "$k0",
            "$k1",
            "tok-b",
        ],
        &[
            "EVAL",
            NODE_REDLOCK_RELEASE.source,
            "2",
            "$k0",
            "$k1",
            "tok-a",
        ],
        &["EXISTS", "$k0", "$k1"],
        &[
            "EVAL",
            NODE_REDLOCK_ACQUIRE.source,
            "1",
            "$k0",
            "tok-c",
            "abc",
        ],
    ]);
    let mut redisson = fixed(&[
        &[
            "EVAL",
            REDISSON_LOCK.source,
            "1",
            "$k0",
            "30000",
            "uuid-1:1",
        ],
        &[
            "EVAL",
            REDISSON_LOCK.source,
            "1",
            "$k0",
            "30000",
            "uuid-1:1",
        ],
        &[
            "EVAL",
            REDISSON_LOCK.source,
            "1",
            "$k0",
            "30000",
            "uuid-2:7",
        ],
        &["HGETALL", "$k0"],
        &[
            "EVAL",
            REDISSON_UNLOCK.source,
            "2",
            "$k0",
            "$k1",
            "0",
            "30000",
            "uuid-2:7",
        ],
        &[
            "EVAL",
            REDISSON_UNLOCK.source,
            "2",
            "$k0",
            "$k1",
            "0",
            "30000",
            "uuid-1:1",
        ],
        &["PTTL", "$k0"],
        &[
            "EVAL",
            REDISSON_UNLOCK.source,
            "2",
            "$k0",
            "$k1",
            "0",
            "30000",
            "uuid-1:1",
        ],
        &["EXISTS", "$k0"],
        &[
            "EVAL",
            REDISSON_UNLOCK.source,
            "2",
            "$k0",
            "$k1",
            "0",
            "30000",
            "uuid-1:1",
        ],
        &["SET", "$k0", "a-string"],
        &[
            "EVAL",
            REDISSON_LOCK.source,
            "1",
            "$k0",
            "30000",
            "uuid-1:1",
        ],
    ]);
    redisson[2].compare = Compare::Ttl;
    check_sequences("lock_library_sessions", &[redsync, node_redlock, redisson]);
}

/// TTL, EXPIRE, EXPIREAT, PEXPIREAT, PERSIST, GETDEL, INCRBY, DECR, DECRBY, ECHO, TYPE,
/// PUBLISH, WAIT (`WAIT 0 t` only: with replicas to wait for, a lone Redis blocks), generated.
#[test]
fn more_commands_match_redis() {
    check_generated(
        "more_commands_match_redis",
        cases(MORE_SEQUENCES),
        more_sequence(),
    );
}

/// MGET, MSET, MSETNX, GETSET, SETEX, PSETEX, STRLEN, APPEND, GETRANGE, UNLINK,
/// EXPIRETIME, PEXPIRETIME and the hash commands HMGET, HMSET, HSETNX, HKEYS, HVALS, HSTRLEN,
/// generated.
#[test]
fn string_and_key_commands_match_redis() {
    check_generated(
        "string_and_key_commands_match_redis",
        cases(MORE_SEQUENCES),
        string_sequence(),
    );
}

/// SETBIT, GETBIT, BITCOUNT, BITPOS and BITOP, generated (`bit_op`).
#[test]
fn bit_commands_match_redis() {
    check_generated(
        "bit_commands_match_redis",
        cases(MORE_SEQUENCES),
        bit_sequence(),
    );
}

/// MULTI/EXEC/DISCARD/WATCH/UNWATCH on two connections, byte for byte on the wire: the
/// stand-in runs the same commands through [`Redis::execute_in`] with one `Session` per
/// connection.
#[test]
fn transactions_match_redis() {
    use leaselab_model::redis::Session;
    let test = "transactions_match_redis";
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    let real = RefCell::new([RawConnection::open(&url), RawConnection::open(&url)]);
    let mut runner = TestRunner::new(Config {
        cases: cases(TRANSACTION_SEQUENCES),
        failure_persistence: None,
        ..Config::default()
    });
    let case = RefCell::new(0u64);
    let commands = RefCell::new(0usize);
    let strategy = prop::collection::vec(transaction_step(), 1..=14);
    let result = runner.run(&strategy, |steps| {
        *case.borrow_mut() += 1;
        *commands.borrow_mut() += steps.len();
        let prefix = format!("{}{}:", keys.prefix, case.borrow());
        let mut real = real.borrow_mut();
        let mut stand_in = Redis::new();
        let mut sessions = [Session::new(), Session::new()];
        let mut transcript = String::new();
        let mut outcome = Ok(());
        for (connection, argv) in &steps {
            let argv = render(argv, &prefix, wall_clock_ms());
            let step = Step {
                connection: *connection,
                argv: &argv,
                prefix: &prefix,
            };
            if let Err(difference) =
                step.on_both(&mut real[..], &mut stand_in, &mut sessions, &mut transcript)
            {
                outcome = Err(TestCaseError::fail(difference));
                break;
            }
        }
        // Leave both connections outside any transaction and watching nothing.
        for connection in real.iter_mut() {
            connection.send(&[b"DISCARD".to_vec()]);
            connection.send(&[b"UNWATCH".to_vec()]);
        }
        let del = [
            b"DEL".to_vec(),
            format!("{prefix}k0").into_bytes(),
            format!("{prefix}k1").into_bytes(),
        ];
        real[0].send(&del);
        outcome
    });
    match result {
        Ok(()) => report(&format!(
            "{test}: {} generated transaction sequences ({} commands) answered byte for byte \
             as Redis does",
            case.borrow(),
            commands.borrow()
        )),
        Err(TestError::Fail(reason, steps)) => {
            panic!("{reason}\nminimal sequence: {steps:#?}")
        }
        Err(error) => panic!("{error}"),
    }
}

/// One request of a two-connection sequence: which connection sends it, its arguments, and
/// the key prefix left out when it is shown.
struct Step<'a> {
    connection: usize,
    argv: &'a [Vec<u8>],
    prefix: &'a str,
}

impl Step<'_> {
    /// Sends the request on its connection to Redis (`real`) and to the stand-in (with that
    /// connection's `Session`), and adds both answers to `transcript`; the transcript as the
    /// error when they are not the same bytes.
    fn on_both(
        &self,
        real: &mut [RawConnection],
        stand_in: &mut Redis,
        sessions: &mut [leaselab_model::redis::Session],
        transcript: &mut String,
    ) -> Result<(), String> {
        let connection = self.connection;
        let from_redis = real[connection].send(self.argv);
        let reply = stand_in.execute_in(&mut sessions[connection], self.argv, wall_clock_ms());
        let from_stand_in = resp_bytes(&reply);
        let shown = show_argv(self.argv).replace(self.prefix, "");
        if from_redis == from_stand_in {
            transcript.push_str(&format!(
                "  same      [{connection}] {shown} -> {:?}\n",
                String::from_utf8_lossy(&from_redis)
            ));
            return Ok(());
        }
        transcript.push_str(&format!(
            "  Redis     [{connection}] {shown} -> {:?}\n  stand-in  [{connection}] {shown} -> {:?}\n",
            String::from_utf8_lossy(&from_redis),
            String::from_utf8_lossy(&from_stand_in)
        ));
        Err(format!(
            "the stand-in answered differently from Redis:\n{transcript}"
        ))
    }
}

/// The databases a [`databases_match_redis`] step may use.
const DATABASES_USED: [&str; 5] = ["0", "2", "3", "4", "5"];

/// Deletes the keys `<prefix>k0` to `<prefix>k3` in each of [`DATABASES_USED`] on the real
/// server when dropped (also while a failing test unwinds).
struct KeysInDatabases {
    url: String,
    prefix: String,
}

impl Drop for KeysInDatabases {
    fn drop(&mut self) {
        let mut connection = RawConnection::open(&self.url);
        let mut del = vec![b"DEL".to_vec()];
        del.extend((0..4).map(|n| format!("{}k{n}", self.prefix).into_bytes()));
        for db in DATABASES_USED {
            connection.send(&[b"SELECT".to_vec(), db.as_bytes().to_vec()]);
            connection.send(&del);
        }
    }
}

/// `SELECT` and the commands that work across databases (`MOVE`, `COPY ... DB`), `SELECT`
/// queued in `MULTI` and called by a script, `WATCH` of a key written in another database: a
/// fixed sequence on two raw connections, compared byte for byte with the stand-in's
/// [`Redis::execute_in`] and a `Session` per connection. `$kN` is key N (0 to 3), `$at` a Unix
/// time in ms ten minutes from the start. Every key is deleted at the end in every database
/// used.
#[test]
fn databases_match_redis() {
    use leaselab_model::redis::Session;
    let test = "databases_match_redis";
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let prefix = format!("leaselab:fidelity:{}:{test}:", std::process::id());
    let _clean_up = KeysInDatabases {
        url: url.clone(),
        prefix: prefix.clone(),
    };
    let at = (wall_clock_ms() + 600_000).to_string();
    let select_then_set = "redis.call('select', ARGV[1]); redis.call('set', KEYS[1], ARGV[2]); \
                           return redis.call('get', KEYS[1])";
    let steps: &[(usize, &[&str])] = &[
        (0, &["SELECT", "16"]),
        (0, &["SELECT", "-1"]),
        (0, &["SELECT", "x"]),
        (0, &["SELECT", "2147483648"]),
        (0, &["SELECT", "2"]),
        (0, &["SET", "$k0", "v2"]),
        (1, &["GET", "$k0"]),
        (1, &["SET", "$k0", "v0"]),
        (0, &["GET", "$k0"]),
        (0, &["EXISTS", "$k0", "$k1"]),
        (0, &["MOVE", "$k0", "0"]),
        (0, &["MOVE", "$k0", "2"]),
        (0, &["MOVE", "$k0", "16"]),
        (0, &["MOVE", "$k0", "x"]),
        (0, &["MOVE", "$k0", "2147483648"]),
        (0, &["MOVE", "$k1", "3"]),
        (0, &["SET", "$k1", "x"]),
        (0, &["PEXPIREAT", "$k1", "$at"]),
        (0, &["MOVE", "$k1", "3"]),
        (0, &["EXISTS", "$k1"]),
        (0, &["SELECT", "3"]),
        (0, &["PEXPIRETIME", "$k1"]),
        (0, &["HSET", "$k2", "f", "v"]),
        (0, &["COPY", "$k2", "$k2", "DB", "2"]),
        (0, &["COPY", "$k2", "$k2", "DB", "2"]),
        (0, &["COPY", "$k2", "$k3", "DB", "16"]),
        (0, &["COPY", "$k2", "$k3", "DB", "x"]),
        (0, &["COPY", "$k2", "$k2"]),
        (0, &["COPY", "$k2", "$k2", "DB", "3"]),
        (0, &["COPY", "$k1", "$k1", "DB", "2", "REPLACE"]),
        (0, &["SELECT", "2"]),
        (0, &["HGETALL", "$k2"]),
        (0, &["PEXPIRETIME", "$k1"]),
        (0, &["MULTI"]),
        (0, &["SELECT", "4"]),
        (0, &["SET", "$k0", "v4"]),
        (0, &["SELECT", "99"]),
        (0, &["GET", "$k0"]),
        (0, &["EXEC"]),
        (0, &["GET", "$k0"]),
        (0, &["SELECT", "2"]),
        (0, &["EVAL", select_then_set, "1", "$k0", "5", "v5"]),
        (0, &["GET", "$k0"]),
        (0, &["EVAL", "return redis.call('select', 16)", "0"]),
        (0, &["EVAL", "return redis.pcall('select', 'x')", "0"]),
        (0, &["WATCH", "$k0"]),
        (1, &["SET", "$k0", "other"]),
        (0, &["MULTI"]),
        (0, &["GET", "$k0"]),
        (0, &["EXEC"]),
        (0, &["WATCH", "$k0"]),
        (1, &["SELECT", "2"]),
        (1, &["SET", "$k0", "w2"]),
        (0, &["MULTI"]),
        (0, &["PING"]),
        (0, &["EXEC"]),
        (1, &["SELECT", "5"]),
        (1, &["GET", "$k0"]),
        (0, &["SELECT", "0"]),
        (0, &["GET", "$k0"]),
    ];
    let mut real = [RawConnection::open(&url), RawConnection::open(&url)];
    let mut stand_in = Redis::new();
    let mut sessions = [Session::new(), Session::new()];
    let mut transcript = String::new();
    for (connection, words) in steps {
        let argv: Vec<Vec<u8>> = words
            .iter()
            .map(|word| {
                let word = match word.strip_prefix("$k") {
                    Some(n) => format!("{prefix}k{n}"),
                    None if *word == "$at" => at.clone(),
                    None => word.to_string(),
                };
                word.into_bytes()
            })
            .collect();
        let step = Step {
            connection: *connection,
            argv: &argv,
            prefix: &prefix,
        };
        if let Err(difference) =
            step.on_both(&mut real[..], &mut stand_in, &mut sessions, &mut transcript)
        {
            panic!("{difference}");
        }
    }
    report(&format!(
        "{test}: {} commands on two connections answered byte for byte as Redis does",
        steps.len()
    ));
}

/// A self-test of the comparison: replies that differ are reported.
#[test]
fn the_comparison_can_fail() {
    use leaselab_model::redis::Reply;
    assert_eq!(resp_bytes(&Reply::NilArray), b"*-1\r\n".to_vec());
    assert_ne!(resp_bytes(&Reply::Nil), resp_bytes(&Reply::NilArray));
    assert_ne!(
        resp_bytes(&Reply::Integer(1)),
        resp_bytes(&Reply::Integer(0))
    );
    let mut reader = std::io::Cursor::new(b"*2\r\n$1\r\na\r\n:5\r\n+OK\r\n".to_vec());
    assert_eq!(
        read_resp(&mut reader).expect("a reply"),
        b"*2\r\n$1\r\na\r\n:5\r\n".to_vec()
    );
    assert!(!agree(
        Compare::Exact,
        &Answer::Value(Value::Int(1)),
        &Answer::Value(Value::Int(0))
    ));
    assert!(!agree(
        Compare::Exact,
        &Answer::Error("ERR syntax error".into()),
        &Answer::Value(Value::Okay)
    ));
    assert!(!agree(
        Compare::Ttl,
        &Answer::Value(Value::Int(30_000)),
        &Answer::Value(Value::Int(29_000))
    ));
    assert!(!agree(
        Compare::Ttl,
        &Answer::Value(Value::Int(-1)),
        &Answer::Value(Value::Int(-2))
    ));
    assert!(agree(
        Compare::Ttl,
        &Answer::Value(Value::Int(30_000)),
        &Answer::Value(Value::Int(29_990))
    ));
    assert!(!agree(
        Compare::Exact,
        &Answer::Client("closed".into()),
        &Answer::Client("closed".into())
    ));
}

// ---------------------------------------------------------------------------------------------
// Lists, sets and sorted sets, byte for byte.

/// Generated list, set and sorted-set sequences.
const COLLECTION_SEQUENCES: u32 = 2_000;

/// A list element or set member.
fn element() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["a", "b", "c", "1", "2", "10", "-3", ""]).prop_map(text)
}

/// A sorted-set score, valid or not, as strtod reads it.
fn score_text() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => prop::sample::select(vec!["1", "2", "3", "0", "-1", "1.5", "0.1", "2.5"]).prop_map(text),
        1 => prop::sample::select(vec![
            "inf", "-inf", "+inf", "1e400", "1e-400", "x", "0x10", "nan", " 1", "1e20", "-0",
            "1.1", "", "5e-324",
        ])
        .prop_map(text),
    ]
}

/// One end of a score range.
fn score_bound() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec![
        "-inf", "+inf", "(1", "1", "(2", "2", "5", "0", "x", "(x", "", "(", "1e400", " 1", "(nan",
        "1.5",
    ])
    .prop_map(text)
}

/// One end of a lexicographic range.
fn lex_bound() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["-", "+", "[a", "(a", "[b", "(c", "[", "a", "x"]).prop_map(text)
}

/// A list or rank index.
fn index_text() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["0", "1", "2", "-1", "-2", "-10", "10", "x"]).prop_map(text)
}

/// A pop count, valid or not.
fn count_text() -> impl Strategy<Value = Arg> {
    prop::sample::select(vec!["0", "1", "2", "5", "-1", "x"]).prop_map(text)
}

fn zrange_options() -> impl Strategy<Value = Vec<Arg>> {
    let option = prop::sample::select(vec![
        "WITHSCORES",
        "withscores",
        "BYSCORE",
        "BYLEX",
        "REV",
        "LIMIT 0 2",
        "LIMIT 1 -1",
        "LIMIT -1 2",
        "LIMIT 1 0",
        "LIMIT x 1",
        "LIMIT",
        "FOO",
    ]);
    prop::collection::vec(option, 0..=3).prop_map(|options| {
        options
            .into_iter()
            .flat_map(|option| option.split(' ').map(text).collect::<Vec<_>>())
            .collect()
    })
}

fn list_op() -> impl Strategy<Value = Vec<Arg>> {
    let elements = || prop::collection::vec(element(), 1..=3);
    prop_oneof![
        3 => (prop::sample::select(vec!["LPUSH", "RPUSH", "lpush", "RPUSH"]), key(), elements())
            .prop_map(|(c, k, e)| [vec![text(c), k], e].concat()),
        1 => (prop::sample::select(vec!["LPUSHX", "RPUSHX"]), key(), elements())
            .prop_map(|(c, k, e)| [vec![text(c), k], e].concat()),
        3 => (prop::sample::select(vec!["LPOP", "RPOP"]), key(),
              prop::collection::vec(count_text(), 0..=2))
            .prop_map(|(c, k, n)| [vec![text(c), k], n].concat()),
        1 => key().prop_map(|k| vec![text("LLEN"), k]),
        2 => (key(), index_text()).prop_map(|(k, i)| vec![text("LINDEX"), k, i]),
        2 => (key(), index_text(), index_text())
            .prop_map(|(k, a, b)| vec![text("LRANGE"), k, a, b]),
        2 => (key(), index_text(), element())
            .prop_map(|(k, n, e)| vec![text("LREM"), k, n, e]),
        2 => (key(), index_text(), element())
            .prop_map(|(k, i, e)| vec![text("LSET"), k, i, e]),
        1 => (key(), index_text(), index_text())
            .prop_map(|(k, a, b)| vec![text("LTRIM"), k, a, b]),
        1 => (key(), prop::sample::select(vec!["BEFORE", "after", "MIDDLE"]), element(), element())
            .prop_map(|(k, w, p, e)| vec![text("LINSERT"), k, text(w), p, e]),
        2 => (key(), key()).prop_map(|(a, b)| vec![text("RPOPLPUSH"), a, b]),
        2 => (key(), key(), prop::sample::select(vec!["LEFT", "right", "UP"]),
              prop::sample::select(vec!["left", "RIGHT", "x"]))
            .prop_map(|(a, b, f, t)| vec![text("LMOVE"), a, b, text(f), text(t)]),
        3 => (key(), element(), lpos_options())
            .prop_map(|(k, e, o)| [vec![text("LPOS"), k, e], o].concat()),
    ]
}

/// `LPOS` options, valid, repeated, out of range and unknown.
fn lpos_options() -> impl Strategy<Value = Vec<Arg>> {
    let option = prop::sample::select(vec![
        "RANK 1",
        "RANK 2",
        "rank -1",
        "RANK -2",
        "RANK 0",
        "RANK x",
        "RANK -9223372036854775808",
        "COUNT 0",
        "count 1",
        "COUNT 2",
        "COUNT -1",
        "COUNT x",
        "MAXLEN 0",
        "maxlen 2",
        "MAXLEN 1",
        "MAXLEN -1",
        "RANK",
        "FOO 1",
    ]);
    prop::collection::vec(option, 0..=3).prop_map(|options| {
        options
            .into_iter()
            .flat_map(|option| option.split(' ').map(text).collect::<Vec<_>>())
            .collect()
    })
}

fn set_op() -> impl Strategy<Value = Vec<Arg>> {
    let members = || prop::collection::vec(element(), 1..=3);
    prop_oneof![
        3 => (key(), members()).prop_map(|(k, m)| [vec![text("SADD"), k], m].concat()),
        2 => (key(), members()).prop_map(|(k, m)| [vec![text("SREM"), k], m].concat()),
        2 => (key(), element()).prop_map(|(k, m)| vec![text("SISMEMBER"), k, m]),
        1 => (key(), members()).prop_map(|(k, m)| [vec![text("SMISMEMBER"), k], m].concat()),
        2 => key().prop_map(|k| vec![text("SMEMBERS"), k]),
        1 => key().prop_map(|k| vec![text("SCARD"), k]),
        2 => (key(), key(), element()).prop_map(|(a, b, m)| vec![text("SMOVE"), a, b, m]),
        2 => (prop::sample::select(vec!["SINTER", "SUNION", "SDIFF", "sinter"]),
              prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, k)| [vec![text(c)], k].concat()),
        2 => (prop::sample::select(vec!["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), key(),
              prop::collection::vec(key(), 1..=3))
            .prop_map(|(c, d, k)| [vec![text(c), d], k].concat()),
        1 => prop::sample::select(vec!["SINTER", "SDIFFSTORE"]).prop_map(|c| vec![text(c)]),
        3 => (prop::sample::select(vec!["1", "2", "3", "0", "-1", "x", "4"]),
              prop::collection::vec(key(), 1..=3),
              prop::sample::select(vec!["", "LIMIT 1", "limit 0", "LIMIT 2", "LIMIT -1",
                                        "LIMIT x", "LIMIT", "FOO 1"]))
            .prop_map(|(n, k, limit)| {
                let limit = limit.split_whitespace().map(text).collect::<Vec<_>>();
                [vec![text("SINTERCARD"), text(n)], k, limit].concat()
            }),
    ]
}

fn zset_op() -> impl Strategy<Value = Vec<Arg>> {
    let zadd_option =
        prop::sample::select(vec!["NX", "XX", "GT", "LT", "CH", "INCR", "ch"]).prop_map(text);
    let pairs = || prop::collection::vec((score_text(), element()), 1..=3);
    let flat = |pairs: Vec<(Arg, Arg)>| -> Vec<Arg> {
        pairs.into_iter().flat_map(|(s, m)| [s, m]).collect()
    };
    prop_oneof![
        4 => (key(), pairs()).prop_map(move |(k, p)| [vec![text("ZADD"), k], flat(p)].concat()),
        3 => (key(), prop::collection::vec(zadd_option, 1..=2), pairs())
            .prop_map(move |(k, o, p)| [vec![text("ZADD"), k], o, flat(p)].concat()),
        1 => (key(), score_text()).prop_map(|(k, s)| vec![text("ZADD"), k, s]),
        2 => (key(), score_text(), element())
            .prop_map(|(k, s, m)| vec![text("ZINCRBY"), k, s, m]),
        2 => (key(), prop::collection::vec(element(), 1..=2))
            .prop_map(|(k, m)| [vec![text("ZREM"), k], m].concat()),
        2 => (key(), element()).prop_map(|(k, m)| vec![text("ZSCORE"), k, m]),
        1 => (key(), prop::collection::vec(element(), 1..=2))
            .prop_map(|(k, m)| [vec![text("ZMSCORE"), k], m].concat()),
        1 => key().prop_map(|k| vec![text("ZCARD"), k]),
        2 => (key(), score_bound(), score_bound())
            .prop_map(|(k, a, b)| vec![text("ZCOUNT"), k, a, b]),
        2 => (prop::sample::select(vec!["ZRANK", "ZREVRANK"]), key(), element())
            .prop_map(|(c, k, m)| vec![text(c), k, m]),
        3 => (key(), index_text(), index_text(), zrange_options())
            .prop_map(|(k, a, b, o)| [vec![text("ZRANGE"), k, a, b], o].concat()),
        2 => (key(), score_bound(), score_bound(), zrange_options())
            .prop_map(|(k, a, b, o)| [vec![text("ZRANGE"), k, a, b, text("BYSCORE")], o].concat()),
        1 => (key(), lex_bound(), lex_bound(), zrange_options())
            .prop_map(|(k, a, b, o)| [vec![text("ZRANGE"), k, a, b, text("BYLEX")], o].concat()),
        1 => (key(), index_text(), index_text(), zrange_options())
            .prop_map(|(k, a, b, o)| [vec![text("ZREVRANGE"), k, a, b], o].concat()),
        2 => (prop::sample::select(vec!["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), key(),
              score_bound(), score_bound(), zrange_options())
            .prop_map(|(c, k, a, b, o)| [vec![text(c), k, a, b], o].concat()),
        1 => (key(), score_bound(), score_bound())
            .prop_map(|(k, a, b)| vec![text("ZREMRANGEBYSCORE"), k, a, b]),
        2 => (prop::sample::select(vec!["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), key(),
              lex_bound(), lex_bound(), zrange_options())
            .prop_map(|(c, k, a, b, o)| [vec![text(c), k, a, b], o].concat()),
        1 => (key(), lex_bound(), lex_bound())
            .prop_map(|(k, a, b)| vec![text("ZLEXCOUNT"), k, a, b]),
        1 => (key(), lex_bound(), lex_bound())
            .prop_map(|(k, a, b)| vec![text("ZREMRANGEBYLEX"), k, a, b]),
        1 => (key(), index_text(), index_text())
            .prop_map(|(k, a, b)| vec![text("ZREMRANGEBYRANK"), k, a, b]),
        2 => (prop::sample::select(vec!["ZPOPMIN", "ZPOPMAX"]), key(),
              prop::collection::vec(count_text(), 0..=2))
            .prop_map(|(c, k, n)| [vec![text(c), k], n].concat()),
    ]
}

/// `HSCAN`, `SSCAN` or `ZSCAN` of a key: cursors Redis accepts (mostly 0) and refuses, and
/// options valid and not (`COUNT` only at 10 or more, or invalid: below that Redis 7.0 may
/// answer a set it keeps as a hash table in parts, which the contract allows and the
/// stand-in never does; `TYPE` is `SCAN`'s alone; `NOVALUES` came in 7.4). A small hash or
/// sorted set is read whole from any cursor; a set of words is a hash table in Redis 7.0,
/// which a cursor other than 0 enters at a place of its own, so `SSCAN` only starts at 0.
fn element_scan() -> impl Strategy<Value = Vec<Arg>> {
    let any_cursor = prop_oneof![
        6 => Just("0"),
        1 => prop::sample::select(vec!["x", "1", "", "-0", "+0", "18446744073709551616", " 0", "7"]),
    ];
    let zero_cursor = prop_oneof![
        6 => Just("0"),
        1 => prop::sample::select(vec!["x", "", "-0", "+0", "18446744073709551616", " 0"]),
    ];
    let command_and_cursor = prop_oneof![
        2 => (prop::sample::select(vec!["HSCAN", "ZSCAN"]), any_cursor),
        1 => (Just("SSCAN"), zero_cursor),
    ];
    let pattern = prop::sample::select(vec![
        "*", "a*", "?", "[ab]", "1*", "*0", "f*", "uuid*", "[^a]", "", "\\a", "[",
    ]);
    let option = prop_oneof![
        3 => pattern.prop_map(|p| vec![text("MATCH"), text(p)]),
        2 => prop::sample::select(vec!["10", "100", "0", "-1", "x", "1.5"])
            .prop_map(|n| vec![text("COUNT"), text(n)]),
        1 => prop::sample::select(vec!["TYPE", "NOVALUES", "MATCH", "count", "nope"])
            .prop_map(|o| vec![text(o)]),
        1 => Just(vec![text("TYPE"), text("string")]),
    ];
    (
        command_and_cursor,
        key(),
        prop::collection::vec(option, 0..=2),
    )
        .prop_map(|((c, cursor), k, options)| {
            [vec![text(c), k, text(cursor)], options.concat()].concat()
        })
}

/// Commands of every type on the same keys, so that types meet (`WRONGTYPE`), keys expire and
/// empty collections disappear.
fn collection_op() -> impl Strategy<Value = Vec<Arg>> {
    prop_oneof![
        5 => list_op(),
        4 => set_op(),
        7 => zset_op(),
        2 => element_scan(),
        1 => (key(), value()).prop_map(|(k, v)| vec![text("SET"), k, v]),
        1 => (key(), field(), value()).prop_map(|(k, f, v)| vec![text("HSET"), k, f, v]),
        1 => key().prop_map(|k| vec![text("GET"), k]),
        2 => key().prop_map(|k| vec![text("TYPE"), k]),
        1 => key().prop_map(|k| vec![text("EXISTS"), k]),
        1 => key().prop_map(|k| vec![text("DEL"), k]),
        1 => key().prop_map(|k| vec![text("EXPIRE"), k, text("1000")]),
        1 => key().prop_map(|k| vec![text("PERSIST"), k]),
    ]
}

/// The elements of a RESP array reply, each as its raw bytes (for replies whose order Redis
/// does not define).
fn resp_elements(reply: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut reader = std::io::BufReader::new(reply);
    let mut header = Vec::new();
    std::io::BufRead::read_until(&mut reader, b'\n', &mut header).ok()?;
    if header.first() != Some(&b'*') {
        return None;
    }
    let count: usize = String::from_utf8_lossy(&header[1..header.len() - 2])
        .parse()
        .ok()?;
    (0..count).map(|_| read_resp(&mut reader).ok()).collect()
}

/// A reply as compared: the members `SMEMBERS`, `SINTER`, `SUNION`, `SDIFF` and `SSCAN` answer in any order (Redis answers in its hash table's
/// order, which depends on a seed chosen at start-up), everything else byte for byte.
fn comparable(argv: &[Vec<u8>], reply: &[u8]) -> Vec<u8> {
    // `SSCAN` answers [cursor, members]: the members in any order, as `SMEMBERS`.
    if argv[0].eq_ignore_ascii_case(b"sscan") {
        if let Some([cursor, members]) = resp_elements(reply).as_deref() {
            if let Some(mut members) = resp_elements(members) {
                members.sort();
                return [cursor.clone(), members.concat()].concat();
            }
        }
    }
    let unordered = [&b"smembers"[..], b"sinter", b"sunion", b"sdiff"];
    if unordered
        .iter()
        .any(|name| argv[0].eq_ignore_ascii_case(name))
    {
        if let Some(mut members) = resp_elements(reply) {
            members.sort();
            return members.concat();
        }
    }
    reply.to_vec()
}

/// Runs generated command sequences on a real Redis and the stand-in (one connection each,
/// the stand-in through [`Redis::execute_in`] as its RESP server runs it) and compares every
/// reply's bytes.
fn check_raw_sequences(test: &str, count: u32, strategy: impl Strategy<Value = Vec<Vec<Arg>>>) {
    use leaselab_model::redis::Session;
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    let real = RefCell::new(RawConnection::open(&url));
    let mut runner = TestRunner::new(Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    });
    let case = RefCell::new(0u64);
    let commands = RefCell::new(0usize);
    let errors = RefCell::new(std::collections::BTreeSet::new());
    let result = runner.run(&strategy, |steps| {
        *case.borrow_mut() += 1;
        *commands.borrow_mut() += steps.len();
        let prefix = format!("{}{}:", keys.prefix, case.borrow());
        let mut real = real.borrow_mut();
        let mut stand_in = Redis::new();
        let mut session = Session::new();
        let mut transcript = String::new();
        let mut outcome = Ok(());
        for argv in &steps {
            let argv = render(argv, &prefix, wall_clock_ms());
            let from_redis = real.send(&argv);
            let reply = stand_in.execute_in(&mut session, &argv, wall_clock_ms());
            let from_stand_in = resp_bytes(&reply);
            let shown = show_argv(&argv).replace(&prefix, "");
            if from_redis.first() == Some(&b'-') {
                errors
                    .borrow_mut()
                    .insert(String::from_utf8_lossy(&from_redis).replace(&prefix, ""));
            }
            if comparable(&argv, &from_redis) == comparable(&argv, &from_stand_in) {
                transcript.push_str(&format!(
                    "  same      {shown} -> {:?}\n",
                    String::from_utf8_lossy(&from_redis)
                ));
            } else {
                transcript.push_str(&format!(
                    "  Redis     {shown} -> {:?}\n  stand-in  {shown} -> {:?}\n",
                    String::from_utf8_lossy(&from_redis),
                    String::from_utf8_lossy(&from_stand_in)
                ));
                outcome = Err(TestCaseError::fail(format!(
                    "the stand-in answered differently from Redis (keys shown without their \
                     prefix):\n{transcript}"
                )));
                break;
            }
        }
        let del: Vec<Vec<u8>> = std::iter::once(b"DEL".to_vec())
            .chain((0..KEYS).map(|n| format!("{prefix}k{n}").into_bytes()))
            .collect();
        real.send(&del);
        outcome
    });
    match result {
        Ok(()) => report(&format!(
            "{test}: {} generated sequences ({} commands) answered byte for byte as Redis \
             does, {} distinct errors",
            case.borrow(),
            commands.borrow(),
            errors.borrow().len()
        )),
        Err(TestError::Fail(reason, steps)) => {
            panic!("{reason}\nminimal sequence: {steps:#?}")
        }
        Err(error) => panic!("{error}"),
    }
}

/// LPUSH/RPUSH/LPUSHX/RPUSHX/LPOP/RPOP/LLEN/LINDEX/LRANGE/LREM/LSET/LTRIM/LINSERT, SADD/SREM/
/// SISMEMBER/SMISMEMBER/SMEMBERS/SCARD and the sorted-set commands (lex ranges included),
/// mixed with strings and hashes on the same keys, generated.
#[test]
fn lists_sets_and_sorted_sets_match_redis() {
    check_raw_sequences(
        "lists_sets_and_sorted_sets_match_redis",
        cases(COLLECTION_SEQUENCES),
        prop::collection::vec(collection_op(), 1..=14),
    );
}

/// `SPOP` and `SRANDMEMBER` draw members at random, so Redis and the stand-in (which draws
/// from a stream seeded by the set itself) take different members; everything else must
/// agree. For sets of 1 to 6 members and every count from -8 to 8 (and none), on each server:
/// errors and empty replies byte for byte; a reply's shape (nil, bulk, array) and its number
/// of members equal; every member drawn from the set, distinct unless the count is negative;
/// the whole set when the count reaches its size; and after `SPOP`, what it took and what
/// `SMEMBERS` still has make the set again, with `EXISTS` equal (the key goes with its last
/// member). Then the argument errors, the wrong type, and a missing key.
#[test]
fn random_set_draws_match_redis_in_all_but_which_members() {
    use leaselab_model::redis::Session;
    let test = "random_set_draws_match_redis_in_all_but_which_members";
    let Some(url) = redis_url(test) else {
        return;
    };
    let _one_at_a_time = one_at_a_time();
    let keys = KeyPrefix::new(&url, test);
    let key = format!("{}s", keys.prefix).into_bytes();
    let mut real = RawConnection::open(&url);
    let mut stand_in = Redis::new();
    let mut session = Session::new();
    let mut both = |argv: &[&[u8]]| -> (Vec<u8>, Vec<u8>) {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.to_vec()).collect();
        let from_redis = real.send(&argv);
        let from_stand_in = resp_bytes(&stand_in.execute_in(&mut session, &argv, wall_clock_ms()));
        (from_redis, from_stand_in)
    };
    let members_of = |reply: &[u8]| -> Vec<Vec<u8>> {
        match resp_elements(reply) {
            Some(elements) => elements,
            None if reply.starts_with(b"$-1") => Vec::new(),
            None => vec![reply.to_vec()],
        }
    };
    let all: Vec<Vec<u8>> = ["a", "7", "b", "-2", "cc", ""]
        .iter()
        .map(|m| resp_bytes(&leaselab_model::redis::Reply::Bulk(m.as_bytes().to_vec())))
        .collect();
    let mut checked = 0;
    for size in 1..=all.len() {
        let set = &all[..size];
        let counts = std::iter::once(None).chain((-8i64..=8).map(Some));
        for count in counts {
            for command in [&b"SRANDMEMBER"[..], b"SPOP"] {
                let members: Vec<String> = ["a", "7", "b", "-2", "cc", ""][..size]
                    .iter()
                    .map(|m| m.to_string())
                    .collect();
                let mut sadd: Vec<&[u8]> = vec![b"SADD", &key];
                sadd.extend(members.iter().map(|m| m.as_bytes()));
                let (a, b) = both(&[b"DEL", &key]);
                assert_eq!(a, b);
                let (a, b) = both(&sadd);
                assert_eq!(a, b);
                let count_text = count.map(|n| n.to_string());
                let mut argv: Vec<&[u8]> = vec![command, &key];
                argv.extend(count_text.as_deref().map(str::as_bytes));
                let shown = String::from_utf8_lossy(&argv.join(&b' ')).replace(&keys.prefix, "");
                let (from_redis, from_stand_in) = both(&argv);
                let context = format!(
                    "{shown} on a set of {size}: Redis {:?}, stand-in {:?}",
                    String::from_utf8_lossy(&from_redis),
                    String::from_utf8_lossy(&from_stand_in)
                );
                let (drawn_redis, drawn_stand_in) =
                    (members_of(&from_redis), members_of(&from_stand_in));
                if from_redis.starts_with(b"-") || drawn_redis.is_empty() {
                    assert_eq!(from_redis, from_stand_in, "{context}");
                }
                if from_redis.starts_with(b"-") {
                    checked += 1;
                    continue;
                }
                assert_eq!(
                    from_redis[0], from_stand_in[0],
                    "the same kind of reply: {context}"
                );
                assert_eq!(
                    drawn_redis.len(),
                    drawn_stand_in.len(),
                    "as many members: {context}"
                );
                let repeats = count.is_some_and(|n| n < 0);
                let whole = count.is_some_and(|n| n >= size as i64);
                for drawn in [&drawn_redis, &drawn_stand_in] {
                    assert!(
                        drawn.iter().all(|m| set.contains(m)),
                        "members of the set: {context}"
                    );
                    let mut distinct = drawn.clone();
                    distinct.sort();
                    distinct.dedup();
                    if !repeats {
                        assert_eq!(distinct.len(), drawn.len(), "distinct: {context}");
                    }
                    if whole {
                        assert_eq!(distinct.len(), size, "the whole set: {context}");
                    }
                }
                if command == b"SPOP" {
                    let (left_redis, left_stand_in) = both(&[b"SMEMBERS", &key]);
                    for (drawn, left) in [
                        (&drawn_redis, &left_redis),
                        (&drawn_stand_in, &left_stand_in),
                    ] {
                        let mut again = [drawn.clone(), members_of(left)].concat();
                        again.sort();
                        let mut expected = set.to_vec();
                        expected.sort();
                        assert_eq!(again, expected, "taken and left make the set: {context}");
                    }
                    let (a, b) = both(&[b"EXISTS", &key]);
                    assert_eq!(a, b, "the key goes with its last member: {context}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6 * 18 * 2);
    // Argument errors (read before the key), the wrong type, a missing key, arity.
    let missing = format!("{}missing", keys.prefix).into_bytes();
    let string = format!("{}string", keys.prefix).into_bytes();
    let (a, b) = both(&[b"SET", &string, b"x"]);
    assert_eq!(a, b);
    let odd: Vec<Vec<&[u8]>> = vec![
        vec![b"SPOP", &key, b"-1"],
        vec![b"SPOP", &key, b"x"],
        vec![b"SPOP", &missing, b"-1"],
        vec![b"SPOP", &key, b"1", b"2"],
        vec![b"SPOP"],
        vec![b"SPOP", &missing],
        vec![b"SPOP", &missing, b"0"],
        vec![b"SPOP", &missing, b"3"],
        vec![b"SPOP", &string],
        vec![b"SPOP", &string, b"-1"],
        vec![b"SPOP", &string, b"1"],
        vec![b"SRANDMEMBER", &key, b"-9223372036854775808"],
        vec![b"SRANDMEMBER", &missing, b"-9223372036854775808"],
        vec![b"SRANDMEMBER", &key, b"9223372036854775808"],
        vec![b"SRANDMEMBER", &key, b"x"],
        vec![b"SRANDMEMBER", &key, b"1", b"2"],
        vec![b"SRANDMEMBER"],
        vec![b"SRANDMEMBER", &missing],
        vec![b"SRANDMEMBER", &missing, b"-3"],
        vec![b"SRANDMEMBER", &missing, b"9223372036854775807"],
        vec![b"SRANDMEMBER", &string],
        vec![b"SRANDMEMBER", &string, b"2"],
    ];
    for argv in odd {
        let (from_redis, from_stand_in) = both(&argv);
        let shown = String::from_utf8_lossy(&argv.join(&b' ')).replace(&keys.prefix, "");
        assert_eq!(
            String::from_utf8_lossy(&from_redis),
            String::from_utf8_lossy(&from_stand_in),
            "{shown}"
        );
    }
    both(&[b"DEL", &key, &string]);
}

/// Redisson's fair lock, whose queue is a list and whose waiters' timeouts are a sorted set:
/// a holder, two waiters queued in order, a re-entry, unlocks that hand the lock to the head
/// of the queue, a waiter that may not jump the queue, stale waiters removed, and the script
/// meeting a key of the wrong type. The waits it answers are lease times read with `PTTL`
/// (compared with a tolerance); the queue and the timeout set are compared exactly.
#[test]
fn redisson_fair_lock_session() {
    use lock_scripts::{REDISSON_FAIR_LOCK, REDISSON_FAIR_UNLOCK};
    let lock = |owner: &'static str, now_ms: &'static str| -> Vec<&'static str> {
        vec![
            "EVAL",
            REDISSON_FAIR_LOCK.source,
            "3",
            "$k0",
            "$k1",
            "$k2",
            "30000",
            owner,
            "300000",
            now_ms,
        ]
    };
    let unlock = |owner: &'static str, latch: &'static str| -> Vec<&'static str> {
        vec![
            "EVAL",
            REDISSON_FAIR_UNLOCK.source,
            "5",
            "$k0",
            "$k1",
            "$k2",
            "channel",
            latch,
            "0",
            "30000",
            owner,
            "1000",
            "publish",
            "5000",
        ]
    };
    let steps: Vec<(Vec<&str>, Compare)> = vec![
        (lock("A:1", "1000"), Compare::Exact),
        (lock("B:1", "1000"), Compare::Ttl),
        (lock("C:1", "1000"), Compare::Ttl),
        (lock("B:1", "1000"), Compare::Ttl),
        (vec!["LRANGE", "$k1", "0", "-1"], Compare::Exact),
        (vec!["ZCARD", "$k2"], Compare::Exact),
        (vec!["ZRANK", "$k2", "C:1"], Compare::Exact),
        (lock("A:1", "1000"), Compare::Exact),
        (vec!["HGETALL", "$k0"], Compare::Exact),
        (unlock("A:1", "$k3"), Compare::Exact),
        (unlock("A:1", "$k3"), Compare::Exact),
        (unlock("A:1", "$k4"), Compare::Exact),
        (vec!["EXISTS", "$k0"], Compare::Exact),
        (lock("C:1", "1000"), Compare::Exact),
        (lock("B:1", "1000"), Compare::Exact),
        (vec!["LRANGE", "$k1", "0", "-1"], Compare::Exact),
        (vec!["ZRANGE", "$k2", "0", "-1"], Compare::Exact),
        (lock("D:1", "1000000000"), Compare::Ttl),
        (vec!["LRANGE", "$k1", "0", "-1"], Compare::Exact),
        (vec!["ZCARD", "$k2"], Compare::Exact),
        (vec!["TYPE", "$k1"], Compare::Exact),
        (vec!["TYPE", "$k2"], Compare::Exact),
        (vec!["SET", "$k0", "a-string"], Compare::Exact),
        (lock("E:1", "1000"), Compare::Exact),
        (vec!["SET", "$k2", "a-string"], Compare::Exact),
        (lock("D:1", "1000"), Compare::Exact),
    ];
    let commands: Vec<&[&str]> = steps.iter().map(|(argv, _)| argv.as_slice()).collect();
    let mut ops = fixed(&commands);
    for (op, (_, compare)) in ops.iter_mut().zip(&steps) {
        op.compare = *compare;
    }
    check_sequences("redisson_fair_lock_session", &[ops]);
}

/// `INFO`'s sections as `(header, [(field, value)])`, in the order given.
fn info_sections(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in text.split("\r\n").filter(|line| !line.is_empty()) {
        if let Some(header) = line.strip_prefix("# ") {
            sections.push((header.to_string(), Vec::new()));
        } else if let (Some((field, value)), Some(section)) =
            (line.split_once(':'), sections.last_mut())
        {
            section.1.push((field.to_string(), value.to_string()));
        } else {
            panic!("a line outside any section, or without a colon: {line:?}");
        }
    }
    sections
}

/// `INFO` with the section names a client asks for: the stand-in's reply has the real
/// server's section headers in the real server's order, its lines end in CRLF, and each field
/// it gives is one the real server gives, with the same value (the clock within a minute).
/// The keyspace is left out: the real server's counts other tests' keys too (the stand-in's
/// counts are checked in `server/info.rs`).
#[test]
fn info_matches_redis_in_every_field_the_stand_in_gives() {
    let Some(url) = redis_url("info_matches_redis_in_every_field_the_stand_in_gives") else {
        return;
    };
    LocalSet::new().block_on(&runtime(), async {
        let mut servers = Servers::connect(&url).await;
        let asked: [&[&str]; 10] = [
            &[],
            &["server"],
            &["SERVER", "Replication"],
            &["replication", "server"],
            &["persistence"],
            &["cluster", "clients"],
            &["default"],
            &["all"],
            &["everything"],
            &["nosuch"],
        ];
        for sections in asked {
            let argv: Vec<Vec<u8>> = std::iter::once("INFO")
                .chain(sections.iter().copied())
                .map(|word| word.as_bytes().to_vec())
                .collect();
            let shown = show_argv(&argv);
            let text = |answer: Answer| match answer {
                Answer::Value(Value::BulkString(bytes)) => {
                    String::from_utf8(bytes).expect("INFO is text")
                }
                other => panic!("{shown}: not a bulk string: {other:?}"),
            };
            let real = text(send(&mut servers.real, &argv).await);
            let stand_in = text(send(&mut servers.stand_in, &argv).await);
            assert_eq!(
                stand_in.matches('\n').count(),
                stand_in.matches("\r\n").count(),
                "{shown}: CRLF lines"
            );
            let (real, stand_in) = (info_sections(&real), info_sections(&stand_in));
            let headers = |sections: &[(String, Vec<(String, String)>)]| -> Vec<String> {
                sections.iter().map(|(header, _)| header.clone()).collect()
            };
            assert_eq!(headers(&stand_in), headers(&real), "{shown}: sections");
            for ((header, fields), (_, real_fields)) in stand_in.iter().zip(&real) {
                if header == "Keyspace" {
                    continue;
                }
                for (field, value) in fields {
                    let real_value = real_fields
                        .iter()
                        .find(|(name, _)| name == field)
                        .map(|(_, value)| value)
                        .unwrap_or_else(|| panic!("{shown}: Redis has no {header} field {field}"));
                    if field == "server_time_usec" {
                        let (a, b): (i64, i64) = (
                            value.parse().expect("a number"),
                            real_value.parse().expect("a number"),
                        );
                        assert!(
                            (a - b).abs() < 60_000_000,
                            "{shown}: {field} {a} against {b}"
                        );
                    } else {
                        assert_eq!(value, real_value, "{shown}: {header} field {field}");
                    }
                }
            }
        }
    });
}

/// Serves a fresh stand-in on a loopback port from a thread of its own, so that the test's
/// thread can talk to it over blocking [`RawConnection`]s. The thread ends with the process.
/// What a comparison on raw connections needs: the real server's URL (one such test at a time),
/// a stand-in on its own thread, and the test's key (under a prefix deleted at the end).
struct RawComparison {
    url: String,
    stand_in: String,
    key: String,
    // Dropped in this order: the keys deleted, then the next test let in.
    _keys: KeyPrefix,
    _one_at_a_time: OneAtATime,
}

impl RawComparison {
    /// `None` (the test skipped) without a real server.
    fn start(test: &str) -> Option<RawComparison> {
        let url = redis_url(test)?;
        let one_at_a_time = one_at_a_time();
        let keys = KeyPrefix::new(&url, test);
        Some(RawComparison {
            stand_in: format!("redis://{}", stand_in_on_its_own_thread()),
            key: format!("{}k", keys.prefix),
            url,
            _keys: keys,
            _one_at_a_time: one_at_a_time,
        })
    }
}

fn stand_in_on_its_own_thread() -> SocketAddr {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let local = LocalSet::new();
        local.block_on(&runtime(), async move {
            let address = start_stand_in().await;
            sender
                .send(address)
                .expect("the test waits for the address");
            std::future::pending::<()>().await;
        });
    });
    receiver.recv().expect("the stand-in's address")
}

/// Sends `argv` on a new connection and reads until the server closes it: the bytes it
/// answered before closing (none when it closes without a reply).
fn answer_before_close(url: &str, argv: &[Vec<u8>]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut connection = RawConnection::open(url);
    connection
        .writer
        .write_all(&encode_argv(argv))
        .expect("send");
    let mut answered = Vec::new();
    connection
        .reader
        .read_to_end(&mut answered)
        .expect("the server closes the connection");
    answered
}

/// What a connection says about itself and the server's gatekeeping, byte for byte on two raw
/// connections: `AUTH` on a server without a password, `CLIENT SETNAME`/`GETNAME`,
/// `READONLY`/`READWRITE`/`CLUSTER` outside cluster mode, `EXEC` with arguments (EXECABORT,
/// the transaction discarded), `redis.log`'s argument checks, `QUIT` with arguments and an
/// HTTP request (closed without a reply). `CLIENT ID` and `HELLO`'s `id` differ in value (each
/// server counts its own connections): both must be integers that grow with each connection.
/// Sends each step on one connection to Redis at `url` and one to the stand-in, and checks
/// that the replies are the same bytes (`key` shown as `$k`); the connections, for more.
fn compare_steps(
    url: &str,
    stand_in: &str,
    key: &str,
    steps: &[Vec<String>],
) -> (RawConnection, RawConnection) {
    let mut real = RawConnection::open(url);
    let mut ours = RawConnection::open(stand_in);
    let mut transcript = String::new();
    for step in steps {
        let argv: Vec<Vec<u8>> = step.iter().map(|w| w.clone().into_bytes()).collect();
        let from_redis = real.send(&argv);
        let from_stand_in = ours.send(&argv);
        let shown = step.join(" ").replace(key, "$k");
        transcript.push_str(&format!(
            "  {shown} -> Redis {:?}, stand-in {:?}\n",
            String::from_utf8_lossy(&from_redis),
            String::from_utf8_lossy(&from_stand_in)
        ));
        assert_eq!(
            from_redis, from_stand_in,
            "{shown}: the stand-in answered differently\n{transcript}"
        );
    }
    (real, ours)
}

/// Scripts' `#!lua` lines and their flags, `EVAL_RO` and `EVALSHA_RO`, byte for byte.
#[test]
fn script_flags_match_redis() {
    let test = "script_flags_match_redis";
    let Some(raw) = RawComparison::start(test) else {
        return;
    };
    let (url, stand_in, key) = (raw.url.clone(), raw.stand_in.clone(), raw.key.clone());
    let with_key = |name: &str, source: &str| -> Vec<String> {
        vec![
            name.to_string(),
            source.to_string(),
            "1".to_string(),
            key.clone(),
            "v".to_string(),
        ]
    };
    let eval = |source: &str| with_key("EVAL", source);
    let eval_ro = |source: &str| with_key("EVAL_RO", source);
    let load = |source: &str| vec!["SCRIPT".to_string(), "LOAD".to_string(), source.to_string()];
    let sha = |source: &str| hex::encode(sha1::Sha1::digest(source.as_bytes()));
    let writer = "return redis.call('set', KEYS[1], ARGV[1])";
    let reader = "return redis.call('get', KEYS[1])";
    let steps: Vec<Vec<String>> = vec![
        eval(&format!("#!lua\n{writer}")),
        eval(&format!("#!lua flags=no-writes\n{writer}")),
        eval(&format!("#!lua flags=no-writes\n{reader}")),
        eval("#!lua flags=no-writes\nreturn redis.pcall('set', KEYS[1], ARGV[1])"),
        eval("#!lua flags=no-writes\nreturn redis.pcall('publish', 'leaselab-nobody', 'm')"),
        eval("#!lua flags=no-writes\nreturn redis.pcall('pexpire', KEYS[1], 100000)"),
        eval("#!lua flags=no-writes\nreturn redis.pcall('eval', 'return 1', 0)"),
        eval("#!lua flags=no-writes\nreturn redis.pcall('nosuch')"),
        eval("#!lua flags=no-writes\nreturn redis.pcall('set')"),
        eval("#!lua flags=allow-oom,no-writes\nreturn redis.call('exists', KEYS[1])"),
        eval("#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys,allow-oom\nreturn 1"),
        eval("#!lua flags=\nreturn 3"),
        eval("#!lua  flags=no-writes  \nreturn 4"),
        eval("#!lua\r\nreturn ARGV[1]"),
        eval("#!lua\n"),
        eval("#!lua 'flags=no-writes'\nreturn redis.pcall('del', KEYS[1])"),
        eval("#!lua flags=no-writes flags=allow-oom\nreturn redis.pcall('del', KEYS[1])"),
        eval("#!lua"),
        eval("#!"),
        eval("#!python foo=1\nreturn 1"),
        eval("#! lua\nreturn 1"),
        eval("#!LUA\nreturn 1"),
        eval("#!luax\nreturn 1"),
        eval("#!lua \"abc\nreturn 1"),
        eval("#!lua flags=\"no-writes\"x\nreturn 1"),
        eval("#!lua name=x\nreturn 1"),
        eval("#!lua flags\nreturn 1"),
        eval("#!lua flags=foo\nreturn 1"),
        eval("#!lua flags=no-writes,\nreturn 1"),
        eval("#!lua flags=no-writes,,allow-oom\nreturn 1"),
        eval("#!lua\nreturn nil +"),
        eval("  #!lua\nreturn 1"),
        load("#!lua flags=foo\nreturn 1"),
        load(&format!("#!lua flags=no-writes\n{writer}")),
        with_key("EVALSHA", &sha(&format!("#!lua flags=no-writes\n{writer}"))),
        eval_ro(writer),
        eval_ro("return redis.pcall('set', KEYS[1], ARGV[1])"),
        eval_ro(reader),
        eval_ro(&format!("#!lua\n{reader}")),
        eval_ro(&format!("#!lua flags=no-writes\n{reader}")),
        eval_ro("#!lua flags=allow-oom\nreturn 1"),
        eval_ro("return redis.pcall('eval_ro', 'return 1', 0)"),
        load(writer),
        with_key("EVALSHA_RO", &sha(writer)),
        with_key("evalsha_ro", &sha(reader)),
        with_key("EVALSHA_RO", &"0".repeat(40)),
        vec![
            "EVAL_RO".to_string(),
            "return 1".to_string(),
            "-1".to_string(),
        ],
        vec!["EVAL_RO".to_string(), "return 1".to_string()],
        vec!["EVALSHA_RO".to_string(), "abc".to_string(), "0".to_string()],
        vec!["GET".to_string(), key.clone()],
    ];
    compare_steps(&url, &stand_in, &key, &steps);
}

/// One step of [`blocking_pops_match_redis`] on connection `.0` (or a pause).
enum Blocking {
    /// Send and read the reply.
    Send(usize, &'static [&'static str]),
    /// Send without reading (the command blocks, or waits behind one that does), then pause
    /// so that the server has it before the next step.
    Start(usize, &'static [&'static str]),
    /// Read the next reply.
    Collect(usize),
    /// Close the connection (opened again empty for later steps).
    Close(usize),
    Pause(u64),
}

/// Runs `steps` on three raw connections to the server at `url`: every reply read, in order.
fn blocking_transcript(url: &str, key: &str, steps: &[Blocking]) -> Vec<(String, Vec<u8>)> {
    use std::io::Write;
    let mut connections: Vec<RawConnection> = (0..3).map(|_| RawConnection::open(url)).collect();
    let render = |words: &[&str]| -> Vec<Vec<u8>> {
        words
            .iter()
            .map(|word| word.replace("$k", key).into_bytes())
            .collect()
    };
    let mut transcript = Vec::new();
    for (at, step) in steps.iter().enumerate() {
        match step {
            Blocking::Send(conn, words) => {
                let reply = connections[*conn].send(&render(words));
                transcript.push((format!("{at}: c{conn} {}", words.join(" ")), reply));
            }
            Blocking::Start(conn, words) => {
                connections[*conn]
                    .writer
                    .write_all(&encode_argv(&render(words)))
                    .expect("send to Redis");
                std::thread::sleep(Duration::from_millis(60));
            }
            Blocking::Collect(conn) => {
                let reply = read_resp(&mut connections[*conn].reader).expect("a reply");
                transcript.push((format!("{at}: c{conn} reply"), reply));
            }
            Blocking::Close(conn) => {
                connections[*conn] = RawConnection::open(url);
                std::thread::sleep(Duration::from_millis(60));
            }
            Blocking::Pause(ms) => std::thread::sleep(Duration::from_millis(*ms)),
        }
    }
    transcript
}

/// `BLPOP`/`BRPOP` (and `BZPOPMIN`/`BZPOPMAX`) on three connections, byte for byte: served by a
/// push from another
/// connection (from `RPUSH`, `LPUSH`, inside `MULTI`, from a script, by `RPOPLPUSH`), in the
/// order the connections blocked, from the first ready key of several; a timeout (a nil
/// array); commands sent while blocked run after the reply; `MULTI` never blocks; a key that
/// became a string is skipped; a connection closed while blocked takes nothing; another
/// database; the timeout's errors and `WRONGTYPE` before blocking.
#[test]
fn blocking_pops_match_redis() {
    use Blocking::*;
    let test = "blocking_pops_match_redis";
    let Some(raw) = RawComparison::start(test) else {
        return;
    };
    let steps = [
        Start(0, &["BLPOP", "$k1", "$k2", "0"]),
        Send(1, &["RPUSH", "$k2", "a", "b"]),
        Collect(0),
        Send(1, &["LRANGE", "$k2", "0", "-1"]),
        // In the order they blocked.
        Start(0, &["BLPOP", "$k1", "0"]),
        Start(2, &["BRPOP", "$k1", "0"]),
        Send(1, &["RPUSH", "$k1", "x"]),
        Collect(0),
        Send(1, &["RPUSH", "$k1", "y", "z"]),
        Collect(2),
        Send(1, &["LRANGE", "$k1", "0", "-1"]),
        Send(1, &["DEL", "$k1", "$k2"]),
        // A timeout, and one under a millisecond (rounded up to one).
        Start(0, &["BLPOP", "$k3", "0.1"]),
        Pause(250),
        Collect(0),
        Start(0, &["BRPOP", "$k3", "0.0001"]),
        Pause(50),
        Collect(0),
        // Sent while blocked: runs after the reply.
        Start(0, &["BRPOP", "$k4", "0"]),
        Start(0, &["PING"]),
        Start(0, &["LLEN", "$k4"]),
        Send(1, &["LPUSH", "$k4", "q", "r"]),
        Collect(0),
        Collect(0),
        Collect(0),
        // MULTI never blocks.
        Send(0, &["MULTI"]),
        Send(0, &["BLPOP", "$k5", "0"]),
        Send(0, &["BRPOP", "$k5", "x"]),
        Send(0, &["EXEC"]),
        Send(0, &["MULTI"]),
        Send(0, &["BLPOP", "$k4", "$k5", "0"]),
        Send(0, &["EXEC"]),
        // Pushed inside MULTI, by a script, by RPOPLPUSH.
        Start(0, &["BLPOP", "$k5", "0"]),
        Send(1, &["MULTI"]),
        Send(1, &["RPUSH", "$k5", "m"]),
        Send(1, &["RPUSH", "$k5", "n"]),
        Send(1, &["EXEC"]),
        Collect(0),
        Start(0, &["BLPOP", "$k6", "0"]),
        Send(
            1,
            &[
                "EVAL",
                "return redis.call('rpush', KEYS[1], 'o', 'p')",
                "1",
                "$k6",
            ],
        ),
        Collect(0),
        Start(0, &["BRPOP", "$k7", "0"]),
        Send(1, &["RPOPLPUSH", "$k6", "$k7"]),
        Collect(0),
        Send(1, &["DEL", "$k5", "$k6", "$k7"]),
        // A key that became a string while waited on is skipped.
        Start(0, &["BLPOP", "$k8", "0.3"]),
        Send(1, &["SET", "$k8", "text"]),
        Pause(400),
        Collect(0),
        Send(1, &["DEL", "$k8"]),
        // A connection closed while blocked takes nothing.
        Start(2, &["BLPOP", "$k9", "0"]),
        Close(2),
        Send(1, &["RPUSH", "$k9", "e"]),
        Send(1, &["LLEN", "$k9"]),
        Send(1, &["DEL", "$k9"]),
        // Another database (the element taken, so nothing is left there).
        Send(0, &["SELECT", "2"]),
        Start(0, &["BLPOP", "$k10", "0"]),
        Send(1, &["RPUSH", "$k10", "db0"]),
        Send(1, &["SELECT", "2"]),
        Send(1, &["RPUSH", "$k10", "db2"]),
        Collect(0),
        Send(1, &["EXISTS", "$k10"]),
        Send(1, &["SELECT", "0"]),
        Send(0, &["SELECT", "0"]),
        Send(1, &["DEL", "$k10"]),
        // Refused before blocking.
        Send(0, &["BLPOP", "$k1", "-1"]),
        Send(0, &["BLPOP", "$k1", "x"]),
        Send(0, &["BLPOP", "$k1", "inf"]),
        Send(0, &["BRPOP", "$k1", " 1"]),
        Send(0, &["BLPOP", "$k1"]),
        Send(1, &["SET", "$k2", "text"]),
        Send(0, &["BLPOP", "$k1", "$k2", "0"]),
        Send(1, &["RPUSH", "$k1", "first"]),
        Send(0, &["BLPOP", "$k1", "$k2", "0"]),
        Send(
            0,
            &[
                "EVAL",
                "return redis.pcall('blpop', KEYS[1], '0')",
                "1",
                "$k1",
            ],
        ),
        Send(1, &["DEL", "$k1", "$k2"]),
        // Sorted sets: served by ZADD, lowest or highest score, in the order connections
        // blocked; a timeout; WRONGTYPE both ways; MULTI; scripts.
        Start(0, &["BZPOPMIN", "$z1", "$z2", "0"]),
        Send(1, &["ZADD", "$z2", "2", "b", "1", "a"]),
        Collect(0),
        Send(0, &["BZPOPMAX", "$z2", "0"]),
        Start(0, &["BZPOPMAX", "$z3", "0"]),
        Start(2, &["BZPOPMIN", "$z3", "0"]),
        Send(1, &["ZADD", "$z3", "1.5", "x", "2.5", "y", "0.5", "w"]),
        Collect(0),
        Collect(2),
        Start(0, &["bzpopmin", "$z4", "0.1"]),
        Pause(250),
        Collect(0),
        Send(1, &["RPUSH", "$z4", "l"]),
        Send(0, &["BZPOPMIN", "$z4", "0"]),
        Send(0, &["BLPOP", "$z3", "0"]),
        Send(0, &["MULTI"]),
        Send(0, &["BZPOPMIN", "$z5", "0"]),
        Send(0, &["BZPOPMAX", "$z3", "0"]),
        Send(0, &["EXEC"]),
        Send(0, &["BZPOPMIN", "$z5", "-1"]),
        Send(0, &["BZPOPMIN", "$z5"]),
        Send(
            0,
            &[
                "EVAL",
                "return redis.pcall('bzpopmax', KEYS[1], '0')",
                "1",
                "$z3",
            ],
        ),
        Send(1, &["DEL", "$z3", "$z4"]),
        // BRPOPLPUSH and BLMOVE: their errors, served in blocking order with the element
        // moved, a timeout (a nil array), inside MULTI (nil), a destination of another type
        // (WRONGTYPE when served, the element left), a source that became a string (skipped),
        // a list rotated onto itself, refused in a script.
        Send(0, &["BRPOPLPUSH", "$m1", "$m2", "x"]),
        Send(0, &["BLMOVE", "$m1", "$m2", "LEFTX", "RIGHT", "x"]),
        Send(0, &["BLMOVE", "$m1", "$m2", "LEFT", "RIGHT", "-1"]),
        Send(0, &["BLMOVE", "$m1", "$m2", "LEFT", "RIGHT"]),
        Start(0, &["BRPOPLPUSH", "$m1", "$m2", "0"]),
        Send(1, &["RPUSH", "$m1", "a", "b"]),
        Collect(0),
        Send(1, &["LRANGE", "$m2", "0", "-1"]),
        Send(1, &["DEL", "$m1", "$m2"]),
        Start(0, &["BLMOVE", "$m1", "$m2", "RIGHT", "LEFT", "0"]),
        Start(2, &["blmove", "$m1", "$m2", "left", "right", "0"]),
        Send(1, &["RPUSH", "$m1", "x", "y", "z"]),
        Collect(0),
        Collect(2),
        Send(1, &["LRANGE", "$m2", "0", "-1"]),
        Send(1, &["LRANGE", "$m1", "0", "-1"]),
        Send(1, &["DEL", "$m1", "$m2"]),
        Start(0, &["BRPOPLPUSH", "$m1", "$m2", "0.1"]),
        Pause(250),
        Collect(0),
        Send(0, &["MULTI"]),
        Send(0, &["BLMOVE", "$m1", "$m2", "LEFT", "LEFT", "0"]),
        Send(0, &["BRPOPLPUSH", "$m1", "$m2", "0"]),
        Send(0, &["EXEC"]),
        Send(1, &["SET", "$m2", "text"]),
        Start(0, &["BLMOVE", "$m1", "$m2", "LEFT", "LEFT", "0.3"]),
        Send(1, &["RPUSH", "$m1", "e"]),
        Collect(0),
        Send(1, &["LRANGE", "$m1", "0", "-1"]),
        Send(0, &["BRPOPLPUSH", "$m1", "$m2", "0"]),
        Send(1, &["DEL", "$m1", "$m2"]),
        Start(0, &["BRPOPLPUSH", "$m1", "$m2", "0.3"]),
        Send(1, &["SET", "$m1", "text"]),
        Pause(400),
        Collect(0),
        Send(1, &["DEL", "$m1"]),
        Start(0, &["BLMOVE", "$m1", "$m1", "LEFT", "RIGHT", "0"]),
        Send(1, &["RPUSH", "$m1", "p", "q"]),
        Collect(0),
        Send(1, &["LRANGE", "$m1", "0", "-1"]),
        Send(1, &["DEL", "$m1"]),
        Send(
            0,
            &[
                "EVAL",
                "return redis.pcall('blmove', KEYS[1], KEYS[2], 'left', 'left', '0')",
                "2",
                "$m1",
                "$m2",
            ],
        ),
        Send(
            0,
            &[
                "EVAL",
                "return redis.pcall('brpoplpush', KEYS[1])",
                "1",
                "$m1",
            ],
        ),
    ];
    compare_transcripts(test, &raw, &steps);
}

/// Runs `steps` against the real Redis and the stand-in of `raw` and compares every reply byte
/// for byte (the run's key prefix shown as `$k`).
fn compare_transcripts(test: &str, raw: &RawComparison, steps: &[Blocking]) {
    let real = blocking_transcript(&raw.url, &raw.key, steps);
    let ours = blocking_transcript(&raw.stand_in, &raw.key, steps);
    assert_eq!(real.len(), ours.len());
    for ((step, from_redis), (_, from_stand_in)) in real.iter().zip(&ours) {
        assert_eq!(
            String::from_utf8_lossy(from_redis).replace(&raw.key, "$k"),
            String::from_utf8_lossy(from_stand_in).replace(&raw.key, "$k"),
            "{}: the stand-in answered differently",
            step.replace(&raw.key, "$k")
        );
    }
    report(&format!(
        "{test}: {} replies as Redis gives them",
        real.len()
    ));
}

/// Publish/subscribe on three connections, byte for byte: `SUBSCRIBE`, `PSUBSCRIBE` and
/// `SSUBSCRIBE` with their confirmations (one per channel) and counts, a subscribed
/// connection's restricted commands and its `PING`, messages pushed by `PUBLISH` and
/// `SPUBLISH` from a connection, a script and `EXEC`, `PUBSUB`'s subcommands, the
/// `UNSUBSCRIBE`s (with and without channels, with nothing to leave), `RESET` and `QUIT`
/// leaving every channel, a closed connection counted no more, a subscription inside `MULTI`,
/// and the commands' refusals in scripts.
#[test]
fn publish_subscribe_matches_redis() {
    use Blocking::*;
    let test = "publish_subscribe_matches_redis";
    let Some(raw) = RawComparison::start(test) else {
        return;
    };
    let steps = [
        Send(0, &["SUBSCRIBE", "$k:a", "$k:b"]),
        Collect(0),
        Send(0, &["SUBSCRIBE", "$k:a"]),
        Send(0, &["PING"]),
        Send(0, &["ping", "hello"]),
        Send(0, &["PING", "a", "b"]),
        Send(0, &["GET", "$k"]),
        Send(0, &["GET"]),
        Send(0, &["NOSUCHCOMMAND", "x"]),
        Send(0, &["CLIENT", "ID"]),
        Send(0, &["MULTI"]),
        Send(0, &["WAIT", "0", "0"]),
        Send(0, &["BLPOP", "$k", "0"]),
        Send(0, &["HELLO"]),
        Send(1, &["PUBLISH", "$k:a", "m1"]),
        Collect(0),
        Send(0, &["PSUBSCRIBE", "$k:*"]),
        Send(1, &["PUBLISH", "$k:a", "m2"]),
        Collect(0),
        Collect(0),
        Send(1, &["PUBLISH", "$k:nobody", "m3"]),
        Collect(0),
        Send(1, &["PUBSUB", "NUMSUB", "$k:a", "$k:b", "$k:c"]),
        Send(1, &["PUBSUB", "NUMSUB"]),
        Send(1, &["PUBSUB", "CHANNELS", "$k:a*"]),
        Send(1, &["pubsub", "channels", "$k:b"]),
        Send(1, &["PUBSUB", "CHANNELS", "a", "b"]),
        Send(1, &["PUBSUB", "NUMPAT", "x"]),
        Send(1, &["PUBSUB", "NOSUCH"]),
        Send(1, &["PUBSUB"]),
        Send(1, &["PUBSUB", "HELP"]),
        Send(1, &["PUBSUB", "SHARDNUMSUB", "$k:a"]),
        Send(1, &["PUBLISH", "$k:a"]),
        // A second subscriber; a script and a transaction publish.
        Send(2, &["SUBSCRIBE", "$k:a"]),
        Send(1, &["PUBLISH", "$k:a", "m4"]),
        Collect(0),
        Collect(0),
        Collect(2),
        Send(
            1,
            &[
                "EVAL",
                "return redis.call('publish', ARGV[1], ARGV[2])",
                "0",
                "$k:a",
                "m5",
            ],
        ),
        Collect(0),
        Collect(0),
        Collect(2),
        Send(1, &["MULTI"]),
        Send(1, &["PUBLISH", "$k:b", "m6"]),
        Send(1, &["PUBLISH", "$k:a", "m7"]),
        Send(1, &["EXEC"]),
        Collect(0),
        Collect(0),
        Collect(0),
        Collect(0),
        Collect(2),
        // Leaving.
        Send(0, &["UNSUBSCRIBE", "$k:b", "$k:q"]),
        Collect(0),
        Send(0, &["PUNSUBSCRIBE"]),
        Send(0, &["UNSUBSCRIBE"]),
        Send(0, &["UNSUBSCRIBE"]),
        Send(0, &["PUNSUBSCRIBE"]),
        Send(0, &["PING"]),
        Send(0, &["UNSUBSCRIBE", "$k:never"]),
        Send(2, &["RESET"]),
        Send(2, &["GET", "$k"]),
        Send(1, &["PUBLISH", "$k:a", "m8"]),
        // Subscribing inside MULTI: the commands after it in the transaction still run.
        Send(2, &["MULTI"]),
        Send(2, &["PING"]),
        Send(2, &["SUBSCRIBE", "$k:c"]),
        Send(2, &["PING", "x"]),
        Send(2, &["GET", "$k"]),
        Send(2, &["EXEC"]),
        Send(2, &["GET", "$k"]),
        Send(1, &["PUBLISH", "$k:c", "m9"]),
        Collect(2),
        // A closed subscriber is counted no more.
        Close(2),
        Send(1, &["PUBLISH", "$k:c", "m10"]),
        Send(1, &["PUBSUB", "NUMSUB", "$k:c"]),
        // Shard channels: their own count and message.
        Send(0, &["SSUBSCRIBE", "$k:s", "$k:t"]),
        Collect(0),
        Send(0, &["SUBSCRIBE", "$k:s"]),
        Send(1, &["SPUBLISH", "$k:s", "hi"]),
        Send(1, &["PUBLISH", "$k:s", "ho"]),
        Collect(0),
        Collect(0),
        Send(1, &["PUBSUB", "SHARDNUMSUB", "$k:s", "$k:u"]),
        Send(1, &["PUBSUB", "SHARDCHANNELS", "$k:t"]),
        Send(0, &["SUNSUBSCRIBE", "$k:t"]),
        Send(0, &["SUNSUBSCRIBE"]),
        Send(0, &["SUNSUBSCRIBE"]),
        Send(0, &["PING"]),
        Send(0, &["UNSUBSCRIBE"]),
        Send(0, &["PING"]),
        // QUIT ends the subscriptions with the connection.
        Send(0, &["PSUBSCRIBE", "$k:z*"]),
        Send(0, &["QUIT"]),
        Close(0),
        Send(1, &["PUBLISH", "$k:zz", "gone"]),
        // In scripts.
        Send(1, &["EVAL", "return redis.pcall('subscribe', 'x')", "0"]),
        Send(1, &["EVAL", "return redis.pcall('ssubscribe')", "0"]),
        Send(
            1,
            &[
                "EVAL",
                "return redis.pcall('pubsub', 'numsub', ARGV[1])",
                "0",
                "$k:c",
            ],
        ),
        Send(1, &["EVAL", "return redis.pcall('pubsub')", "0"]),
        Send(1, &["EVAL", "return redis.pcall('pubsub', 'nosuch')", "0"]),
        Send(
            1,
            &["EVAL", "return redis.pcall('pubsub', 'numpat', 'x')", "0"],
        ),
        Send(
            1,
            &[
                "EVAL",
                "return redis.pcall('pubsub', 'channels', 'a', 'b')",
                "0",
            ],
        ),
        Send(
            1,
            &["EVAL_RO", "return redis.pcall('spublish', 'x', 'y')", "0"],
        ),
        Send(
            1,
            &["EVAL_RO", "return redis.pcall('publish', 'x', 'y')", "0"],
        ),
    ];
    compare_transcripts(test, &raw, &steps);
}

/// `ROLE` and `RESET` (the transaction, the watched keys, the database and the name it
/// resets; inside `MULTI` it runs at once), their arity errors, in `MULTI` and in scripts,
/// byte for byte on one raw connection to each server.
#[test]
fn role_and_reset_match_redis() {
    let test = "role_and_reset_match_redis";
    let Some(raw) = RawComparison::start(test) else {
        return;
    };
    let (url, stand_in, key) = (raw.url.clone(), raw.stand_in.clone(), raw.key.clone());
    let words = |words: &[&str]| -> Vec<String> {
        words.iter().map(|word| word.replace("$k", &key)).collect()
    };
    let eval = |source: &str| words(&["EVAL", source, "0"]);
    let steps: Vec<Vec<String>> = vec![
        words(&["ROLE"]),
        words(&["role"]),
        words(&["ROLE", "x"]),
        words(&["RESET", "x"]),
        words(&["RESET"]),
        words(&["CLIENT", "SETNAME", "before-reset"]),
        words(&["SELECT", "2"]),
        words(&["GET", "$k"]),
        words(&["RESET"]),
        words(&["CLIENT", "GETNAME"]),
        words(&["SET", "$k", "in-db-0"]),
        words(&["SELECT", "3"]),
        words(&["GET", "$k"]),
        words(&["MULTI"]),
        words(&["SET", "$k", "queued"]),
        words(&["RESET"]),
        words(&["EXEC"]),
        words(&["GET", "$k"]),
        words(&["MULTI"]),
        words(&["RESET", "x"]),
        words(&["EXEC"]),
        words(&["WATCH", "$k"]),
        words(&["RESET"]),
        words(&["SET", "$k", "changed-after-watch"]),
        words(&["MULTI"]),
        words(&["GET", "$k"]),
        words(&["EXEC"]),
        words(&["MULTI"]),
        words(&["ROLE"]),
        words(&["ROLE", "x"]),
        words(&["EXEC"]),
        words(&["MULTI"]),
        words(&["ROLE"]),
        words(&["EXEC"]),
        eval("return redis.pcall('role')"),
        eval("return redis.pcall('reset')"),
        eval("return redis.pcall('role', 'x')"),
        words(&["DEL", "$k"]),
    ];
    compare_steps(&url, &stand_in, &key, &steps);
    report(&format!(
        "{test}: {} steps answered as Redis does",
        steps.len()
    ));
}

#[test]
fn connection_commands_match_redis() {
    let test = "connection_commands_match_redis";
    let Some(raw) = RawComparison::start(test) else {
        return;
    };
    let (url, stand_in, key) = (raw.url.clone(), raw.stand_in.clone(), raw.key.clone());
    let eval = |source: &str| vec!["EVAL".to_string(), source.to_string(), "0".to_string()];
    let words = |words: &[&str]| -> Vec<String> {
        words.iter().map(|word| word.replace("$k", &key)).collect()
    };
    let steps: Vec<Vec<String>> = vec![
        words(&["AUTH", "pw"]),
        words(&["AUTH", "default", "pw"]),
        words(&["AUTH", "nobody", "pw"]),
        words(&["AUTH", "a", "b", "c"]),
        words(&["AUTH"]),
        words(&["CLIENT", "GETNAME"]),
        words(&["CLIENT", "SETNAME", "lock-client"]),
        words(&["CLIENT", "GETNAME"]),
        words(&["client", "getname"]),
        words(&["CLIENT", "SETNAME", ""]),
        words(&["CLIENT", "GETNAME"]),
        words(&["CLIENT", "GETNAME", "x"]),
        words(&["CLIENT", "ID", "x"]),
        words(&["READONLY"]),
        words(&["READWRITE"]),
        words(&["READONLY", "x"]),
        words(&["CLUSTER", "INFO"]),
        words(&["CLUSTER", "KEYSLOT", "$k"]),
        words(&["cluster", "nodes"]),
        words(&["CLUSTER", "NOSUCH"]),
        words(&["CLUSTER"]),
        words(&["CLUSTER", "INFO", "x"]),
        words(&["CLUSTER", "KEYSLOT"]),
        words(&["EXEC", "x"]),
        words(&["MULTI"]),
        words(&["SET", "$k", "v"]),
        words(&["EXEC", "x"]),
        words(&["EXEC"]),
        words(&["GET", "$k"]),
        eval("return redis.log(redis.LOG_WARNING, 'leaselab fidelity test')"),
        eval("return redis.log(99, 'x')"),
        eval("return redis.log('x')"),
        eval("return redis.log()"),
        eval("return redis.log('3', 'x')"),
        eval("return redis.log(3.7, 'x')"),
        eval("return redis.log(-0.5, 'x')"),
        eval("return redis.log(-1, 'x')"),
        eval("return redis.log(4, 'x', 'y')"),
        eval("return redis.log('abc', 'x')"),
        eval("return redis.pcall('auth', 'default', 'x')"),
        eval("return redis.pcall('blpop', 'leaselab-absent', '0')"),
        eval("return redis.pcall('subscribe', 'leaselab-channel')"),
        eval("return redis.pcall('blpop', 'leaselab-absent')"),
        eval("return redis.pcall('bzpopmin', 'leaselab-absent', '1')"),
        eval("return redis.pcall('brpoplpush', 'a', 'b')"),
        eval("return redis.pcall('unsubscribe')"),
        words(&["QUIT", "x", "y"]),
    ];
    let (mut real, mut ours) = compare_steps(&url, &stand_in, &key, &steps);
    // After QUIT both close the connection.
    for connection in [&mut real, &mut ours] {
        let mut rest = Vec::new();
        let read = std::io::Read::read_to_end(&mut connection.reader, &mut rest);
        assert!(
            matches!(read, Ok(0)),
            "the connection stays open after QUIT: {read:?}"
        );
    }

    // An HTTP request: closed without a word.
    for request in [vec!["POST", "/", "HTTP/1.1"], vec!["Host:", "example.com"]] {
        let argv: Vec<Vec<u8>> = request.iter().map(|w| w.as_bytes().to_vec()).collect();
        assert_eq!(
            answer_before_close(&url, &argv),
            b"".to_vec(),
            "Redis: {request:?}"
        );
        assert_eq!(
            answer_before_close(&stand_in, &argv),
            b"".to_vec(),
            "stand-in: {request:?}"
        );
    }

    // Connection ids: integers, growing with each connection; `HELLO`'s is the connection's.
    for server in [&url, &stand_in] {
        let id = |connection: &mut RawConnection| -> i64 {
            let reply = connection.send(&[b"CLIENT".to_vec(), b"ID".to_vec()]);
            let text = String::from_utf8(reply).expect("text");
            text.strip_prefix(':')
                .and_then(|rest| rest.strip_suffix("\r\n"))
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("{server}: CLIENT ID answered {text:?}"))
        };
        let mut first = RawConnection::open(server);
        let mut second = RawConnection::open(server);
        let (a, b) = (id(&mut first), id(&mut second));
        assert!(a > 0 && b > a, "{server}: ids {a} then {b}");
        let hello = second.send(&[
            b"HELLO".to_vec(),
            b"2".to_vec(),
            b"SETNAME".to_vec(),
            b"via-hello".to_vec(),
        ]);
        let hello = String::from_utf8_lossy(&hello).into_owned();
        assert!(
            hello.contains(&format!("$2\r\nid\r\n:{b}\r\n")),
            "{server}: HELLO does not give the connection's id {b}: {hello:?}"
        );
        assert_eq!(
            second.send(&[b"CLIENT".to_vec(), b"GETNAME".to_vec()]),
            b"$9\r\nvia-hello\r\n".to_vec(),
            "{server}: HELLO ... SETNAME names the connection"
        );
    }
    report(&format!(
        "{test}: {} commands, QUIT, two HTTP requests and connection ids answered as Redis does",
        steps.len()
    ));
}

/// A subscriber that stops reading is closed once more than 32 MB of messages wait for it
/// (Redis's `client-output-buffer-limit pubsub` hard limit), so a publisher cannot make the
/// stand-in hold an unbounded backlog; the publisher's counts are unchanged by it.
#[test]
fn a_subscriber_that_stops_reading_is_closed_past_the_output_limit() {
    use std::io::Read;
    let stand_in = format!("redis://{}", stand_in_on_its_own_thread());
    let mut subscriber = RawConnection::open(&stand_in);
    let channel = b"flood".to_vec();
    let confirmation = subscriber.send(&[b"SUBSCRIBE".to_vec(), channel.clone()]);
    assert!(confirmation.starts_with(b"*3\r\n$9\r\nsubscribe"));
    let mut publisher = RawConnection::open(&stand_in);
    let message = vec![b'x'; 1024 * 1024];
    for _ in 0..48 {
        let count = publisher.send(&[b"PUBLISH".to_vec(), channel.clone(), message.clone()]);
        assert_eq!(count, b":1\r\n", "counted while it is subscribed");
    }
    // What reaches the subscriber ends with the close, well short of the 48 MiB published.
    let mut received = Vec::new();
    let read = subscriber.reader.read_to_end(&mut received);
    assert!(read.is_ok(), "closed, not timed out: {read:?}");
    assert!(
        received.len() < 40 * 1024 * 1024,
        "{} bytes reached it",
        received.len()
    );
    let after = publisher.send(&[b"PUBLISH".to_vec(), channel, b"late".to_vec()]);
    assert_eq!(after, b":0\r\n", "the closed subscriber is forgotten");
}
