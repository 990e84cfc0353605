//! `leaselab serve redis|postgres`: serve a stand-in on a real TCP port, so that `redis-cli`,
//! `psql` and any other client can talk to it.
//!
//! The stand-ins are the same ones the simulation uses, behind the same wire servers; here they
//! run on the machine's real network and the Redis stand-in runs on the real wall clock
//! (milliseconds since the Unix epoch), as Redis does. Everything is kept in memory and is
//! lost when the server stops. Ctrl-C (or SIGTERM) stops it cleanly.

use std::cell::RefCell;
use std::io::{self, Write as _};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args as ClapArgs, Subcommand};
use leaselab_model::postgres::{PgError, Postgres, QueryResult, SessionId, Wallet};
use leaselab_model::redis::{Redis, Reply};
use leaselab_sim::observer::{escape_bytes, NoopObserver, Observer, Protocol};
use leaselab_sim::pg_server::{Accounts, PgServer};
use leaselab_sim::redis_server::{ClockMs, RedisServer};

use crate::exit::{CommandResult, Status, UsageError};

/// The port `serve redis` listens on unless told otherwise (not 6379, so that it does not
/// collide with a real Redis on the same machine).
pub const DEFAULT_REDIS_PORT: u16 = 7777;
/// The port `serve postgres` listens on unless told otherwise (not 5432, for the same reason).
pub const DEFAULT_POSTGRES_PORT: u16 = 5433;
/// The wallet `serve postgres` creates when no `--wallet` is given: the tutorial's wallet 42
/// holding 100.
pub const DEFAULT_WALLET: (i64, i64) = (42, 100);

/// `leaselab serve`: serve a stand-in on a real TCP port.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Which stand-in to serve.
    #[command(subcommand)]
    pub server: Server,
}

/// The stand-in to serve.
#[derive(Debug, Subcommand)]
pub enum Server {
    /// Serve the Redis 7 stand-in over RESP2 (try `redis-cli -p 7777`).
    Redis(RedisArgs),
    /// Serve the PostgreSQL 15 stand-in: the `wallets` table, over the v3 protocol (try
    /// `psql -h 127.0.0.1 -p 5433`).
    Postgres(PostgresArgs),
}

/// Where to listen, and whether to log.
#[derive(Debug, Clone, ClapArgs)]
pub struct Listen {
    /// The address to listen on. Loopback by default; any other address makes the stand-in
    /// reachable from other machines.
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST),
          value_parser = parse_ip)]
    pub bind: IpAddr,
    /// Print every command or statement and its reply to stderr.
    #[arg(long)]
    pub log: bool,
}

/// `leaselab serve redis`.
#[derive(Debug, ClapArgs)]
pub struct RedisArgs {
    /// The TCP port (0: any free port; the one chosen is printed).
    #[arg(long, default_value_t = DEFAULT_REDIS_PORT)]
    pub port: u16,
    /// Address and logging.
    #[command(flatten)]
    pub listen: Listen,
}

/// `leaselab serve postgres`.
#[derive(Debug, ClapArgs)]
pub struct PostgresArgs {
    /// The TCP port (0: any free port; the one chosen is printed).
    #[arg(long, default_value_t = DEFAULT_POSTGRES_PORT)]
    pub port: u16,
    /// Address and logging.
    #[command(flatten)]
    pub listen: Listen,
    /// A row of `wallets` to start with, as ID=BALANCE (fence 0); repeat for more rows.
    /// Default: 42=100, the tutorial's wallet.
    #[arg(long = "wallet", value_name = "ID=BALANCE", value_parser = parse_wallet, conflicts_with = "no_wallets")]
    pub wallets: Vec<(i64, i64)>,
    /// Start with no tables at all, e.g. to run the tutorial's `CREATE TABLE wallets` unchanged.
    #[arg(long)]
    pub no_wallets: bool,
    /// A role (user name) clients may connect as; repeat for more. Others are refused with
    /// PostgreSQL's `role "..." does not exist`. Default: postgres.
    #[arg(long = "role", value_name = "NAME")]
    pub roles: Vec<String>,
    /// A database clients may connect to; repeat for more. Others are refused with
    /// PostgreSQL's `database "..." does not exist`. Default: postgres and test.
    #[arg(long = "database", value_name = "NAME")]
    pub databases: Vec<String>,
    /// PostgreSQL's deadlock_timeout: a statement waiting for a row lock looks for a deadlock
    /// once, this long after it started waiting, and fails with 40P01 if it is in one
    /// (1ms to 600s).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_deadlock_timeout)]
    pub deadlock_timeout: u64,
}

/// Parses `--deadlock-timeout`: a duration from 1 ms to 600 s, in ms.
fn parse_deadlock_timeout(text: &str) -> Result<u64, String> {
    use leaselab_model::scenario::MAX_DEADLOCK_TIMEOUT_MS;
    let ms = crate::cli::run::parse_duration(text)?;
    if (1..=MAX_DEADLOCK_TIMEOUT_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!(
            "{text:?} is outside 1ms..={}s: give a deadlock_timeout such as 1s or 200ms",
            MAX_DEADLOCK_TIMEOUT_MS / 1000
        ))
    }
}

/// Parses `--bind`: an IP address, not a host name.
fn parse_ip(text: &str) -> Result<IpAddr, String> {
    text.trim().parse().map_err(|_| {
        format!("{text:?} is not an IP address: give one such as 127.0.0.1 or ::1 (host names are not looked up)")
    })
}

/// Parses `ID=BALANCE` for `--wallet`.
fn parse_wallet(text: &str) -> Result<(i64, i64), String> {
    let usage = "write a wallet as ID=BALANCE, e.g. --wallet 42=100";
    let (id, balance) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} has no '=': {usage}"))?;
    let id: i64 = id
        .trim()
        .parse()
        .map_err(|_| format!("wallet id {id:?} is not a bigint: {usage}"))?;
    let balance: i64 = balance
        .trim()
        .parse()
        .map_err(|_| format!("balance {balance:?} is not a bigint: {usage}"))?;
    if balance < 0 {
        return Err(format!(
            "balance {balance} is negative, which the wallets table's CHECK (balance >= 0) \
             refuses: give a balance of 0 or more"
        ));
    }
    Ok((id, balance))
}

/// Runs `leaselab serve`: serves until Ctrl-C or SIGTERM, then exits 0. A port that cannot be
/// bound is a usage error (exit 2).
pub fn execute(args: &Args) -> CommandResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| UsageError::new(format!("cannot start the server runtime: {error}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        match &args.server {
            Server::Redis(redis) => serve_redis(redis).await,
            Server::Postgres(postgres) => serve_postgres(postgres).await,
        }
    })
}

/// Milliseconds since the Unix epoch on this machine's wall clock: the clock a real Redis
/// expires keys by.
pub fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// This machine's wall clock as PostgreSQL keeps time (microseconds since 2000-01-01 UTC):
/// what a served PostgreSQL's `now()` answers.
fn wall_clock_pg() -> i64 {
    let unix_micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
        });
    leaselab_model::postgres::datetime::from_unix_micros(unix_micros)
}

/// Binds a listener on `bind:port`, with an error that says what to do about it.
async fn listen(
    bind: IpAddr,
    port: u16,
    flag_hint: &str,
) -> Result<tokio::net::TcpListener, UsageError> {
    let address = SocketAddr::new(bind, port);
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| {
            let advice = match error.kind() {
                io::ErrorKind::AddrInUse => format!(
                "something else is listening there; stop it or pick another port with {flag_hint}"
            ),
                io::ErrorKind::PermissionDenied => {
                    format!("ports below 1024 need privileges; pick another port with {flag_hint}")
                }
                io::ErrorKind::AddrNotAvailable => {
                    "that address is not one of this machine's; try --bind 127.0.0.1".to_string()
                }
                _ => format!("check --bind and {flag_hint}"),
            };
            UsageError::new(format!("cannot listen on {address}: {error}; {advice}"))
        })
}

/// Prints the banner: the first line is `... listening on <address>`, which scripts may read.
fn announce(what: &str, address: SocketAddr, try_it: &str) {
    let mut out = io::stdout().lock();
    // A closed stdout must not stop the server.
    let _ = writeln!(out, "leaselab: {what} listening on {address}");
    let _ = writeln!(out, "  try: {try_it}");
    let _ = writeln!(
        out,
        "  Ctrl-C stops it; everything is kept in memory and is lost then."
    );
    let _ = out.flush();
    if !address.ip().is_loopback() {
        eprintln!(
            "warning: {} is not a loopback address: anyone who can reach this machine can use \
             the stand-in",
            address.ip()
        );
    }
}

/// Resolves when the process is asked to stop: Ctrl-C, or SIGTERM on Unix.
async fn stop_requested() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            return tokio::select! {
                biased;
                _ = tokio::signal::ctrl_c() => "Ctrl-C",
                _ = terminate.recv() => "SIGTERM",
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

/// Runs an accept loop until a stop is requested. The loop reports accept errors on stderr and
/// goes on serving; should it ever end with an error, the command ends with it.
async fn run_until_stopped(
    what: &str,
    serve: impl std::future::Future<Output = io::Result<()>>,
) -> CommandResult {
    tokio::select! {
        biased;
        signal = stop_requested() => {
            println!("leaselab: {signal}: {what} stopped");
            Ok(Status::Ok)
        }
        result = serve => match result {
            Ok(()) => Ok(Status::Ok),
            Err(error) => Err(UsageError::new(format!("{what} stopped: {error}"))),
        },
    }
}

fn observer(log: bool) -> Rc<dyn Observer> {
    if log {
        Rc::new(StderrLog)
    } else {
        Rc::new(NoopObserver)
    }
}

async fn serve_redis(args: &RedisArgs) -> CommandResult {
    let listener = listen(args.listen.bind, args.port, "--port").await?;
    let address = local_address(&listener)?;
    let clock: ClockMs = Rc::new(wall_clock_ms);
    // A served stand-in has no replicas: recording its changes for them would only grow.
    let mut redis = Redis::new();
    redis.record_effects(false);
    let server = RedisServer::new(
        Rc::new(RefCell::new(redis)),
        clock,
        observer(args.listen.log),
    );
    let try_it = if address.ip().is_loopback() && address.ip().is_ipv4() {
        format!("redis-cli -p {}", address.port())
    } else {
        format!("redis-cli -h {} -p {}", address.ip(), address.port())
    };
    announce("Redis 7 stand-in", address, &try_it);
    run_until_stopped("the Redis stand-in", server.serve_tokio(listener)).await
}

async fn serve_postgres(args: &PostgresArgs) -> CommandResult {
    let listener = listen(args.listen.bind, args.port, "--port").await?;
    let address = local_address(&listener)?;
    let mut postgres = Postgres::empty();
    let wallets = if args.no_wallets {
        Vec::new()
    } else if args.wallets.is_empty() {
        vec![DEFAULT_WALLET]
    } else {
        args.wallets.clone()
    };
    for &(id, balance) in &wallets {
        postgres.seed_wallet(id, Wallet { balance, fence: 0 });
    }
    let names = |given: &[String], default: &[&str]| -> std::collections::BTreeSet<String> {
        if given.is_empty() {
            default.iter().map(|name| name.to_string()).collect()
        } else {
            given.iter().cloned().collect()
        }
    };
    let accounts = Accounts {
        roles: names(&args.roles, &["postgres"]),
        databases: names(&args.databases, &["postgres", "test"]),
    };
    let user = accounts.roles.iter().next().cloned().unwrap_or_default();
    let server = PgServer::new(Rc::new(RefCell::new(postgres)), observer(args.listen.log))
        .with_accounts(accounts)
        .with_deadlock_timeout(std::time::Duration::from_millis(args.deadlock_timeout))
        .with_clock(Rc::new(wall_clock_pg));
    let query = match wallets.first() {
        Some((id, _)) => format!("SELECT balance, fence FROM wallets WHERE id = {id}"),
        None => "SELECT 1".to_string(),
    };
    let try_it = format!(
        "psql -h {} -p {} -U {user} -c '{query}'",
        address.ip(),
        address.port()
    );
    let what = if wallets.is_empty() {
        "PostgreSQL 15 stand-in (no tables)"
    } else {
        "PostgreSQL 15 stand-in (table wallets)"
    };
    announce(what, address, &try_it);
    run_until_stopped("the PostgreSQL stand-in", server.serve_tokio(listener)).await
}

fn local_address(listener: &tokio::net::TcpListener) -> Result<SocketAddr, UsageError> {
    listener
        .local_addr()
        .map_err(|error| UsageError::new(format!("cannot read the listening address: {error}")))
}

/// Prints every executed command or statement to stderr, one line each.
struct StderrLog;

impl Observer for StderrLog {
    fn redis_command(&self, conn_id: u64, argv: &[Vec<u8>], reply: &Reply) {
        let command: Vec<String> = argv.iter().map(|arg| escape_bytes(arg)).collect();
        eprintln!(
            "redis conn={conn_id} {} -> {}",
            command.join(" "),
            reply.describe()
        );
    }

    fn sql_statement(
        &self,
        conn_id: u64,
        sql: &str,
        params: &[i64],
        result: &Result<QueryResult, PgError>,
    ) {
        let outcome = match result {
            Ok(result) => format!("{} rows={:?}", result.tag, result.rows),
            Err(error) => error.describe(),
        };
        eprintln!("postgres conn={conn_id} {sql} params={params:?} -> {outcome}");
    }

    fn sql_blocked(&self, conn_id: u64, sql: &str, params: &[i64], blocked_by: SessionId) {
        eprintln!(
            "postgres conn={conn_id} {sql} params={params:?} waits for the row lock of session {}",
            blocked_by.0
        );
    }

    fn connection_opened(&self, protocol: Protocol, conn_id: u64, peer: Option<SocketAddr>) {
        match peer {
            Some(peer) => eprintln!("{} conn={conn_id} opened from {peer}", protocol.name()),
            None => eprintln!("{} conn={conn_id} opened", protocol.name()),
        }
    }

    fn connection_closed(&self, protocol: Protocol, conn_id: u64) {
        eprintln!("{} conn={conn_id} closed", protocol.name());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wallets_parse_and_bad_ones_say_how_to_fix_them() {
        assert_eq!(parse_wallet("42=100"), Ok((42, 100)));
        assert_eq!(parse_wallet(" -7 = 0 "), Ok((-7, 0)));
        for bad in ["42", "x=1", "1=y", "1=-5", "1=99999999999999999999"] {
            let error = parse_wallet(bad).unwrap_err();
            assert!(
                error.contains("--wallet") || error.contains("CHECK"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn bind_takes_ip_addresses_only() {
        assert_eq!(
            parse_ip("::1"),
            Ok(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST))
        );
        assert!(parse_ip("localhost").unwrap_err().contains("127.0.0.1"));
    }

    #[test]
    fn a_busy_port_is_a_usage_error_that_names_the_flag() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = taken.local_addr().unwrap().port();
            let error = listen(IpAddr::V4(Ipv4Addr::LOCALHOST), port, "--port")
                .await
                .unwrap_err();
            assert!(
                error.message.contains(&format!("127.0.0.1:{port}")),
                "{error}"
            );
            assert!(error.message.contains("--port"), "{error}");
        });
    }
}
