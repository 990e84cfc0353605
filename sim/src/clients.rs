//! Connecting the real `redis` and `tokio-postgres` clients, over turmoil's simulated network
//! or to real servers.
//!
//! Each helper spawns the client's driver future (the task that moves bytes between the
//! client handle and the socket): on a turmoil host into the host's `LocalSet` (it dies with
//! the host), elsewhere with [`tokio::spawn`].

use std::fmt;
use std::io;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::config::Host;
use tokio_postgres::tls::NoTls;
use tokio_postgres::{Client, Config};

/// The turmoil host name of the Redis server.
pub const REDIS_HOST: &str = "redis";
/// The turmoil host name of the PostgreSQL server.
pub const POSTGRES_HOST: &str = "postgres";
/// The host names of Redlock's independent nodes, `redis-1` to `redis-9` (node n is
/// `NODE_HOSTS[n - 1]`; they listen on [`REDIS_PORT`]).
pub const NODE_HOSTS: [&str; 9] = [
    "redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "redis-6", "redis-7", "redis-8",
    "redis-9",
];

/// Redlock node `node`'s (1-based) host name.
pub fn node_host(node: u8) -> &'static str {
    NODE_HOSTS[usize::from(node) - 1]
}
/// The port Redis listens on.
pub const REDIS_PORT: u16 = 6379;
/// The port PostgreSQL listens on.
pub const POSTGRES_PORT: u16 = 5432;
/// The user (and database) the simulated PostgreSQL clients log in as.
pub const POSTGRES_USER: &str = "leaselab";

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The TCP connection failed.
    Io(io::Error),
    /// The Redis handshake failed or the URL was refused by the `redis` crate.
    Redis(redis::RedisError),
    /// The PostgreSQL startup failed.
    Postgres(tokio_postgres::Error),
    /// The URL names no TCP host and port this helper can use.
    Url(String),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Io(error) => write!(f, "cannot connect: {error}"),
            ConnectError::Redis(error) => write!(f, "redis: {error}"),
            ConnectError::Postgres(error) => match error.as_db_error() {
                // The server's own words (e.g. `database "x" does not exist`), not "db error".
                Some(db) => write!(
                    f,
                    "postgres: {}: {} (SQLSTATE {})",
                    db.severity(),
                    db.message(),
                    db.code().code()
                ),
                None => write!(f, "postgres: {error}"),
            },
            ConnectError::Url(text) => write!(f, "{text}"),
        }
    }
}

impl std::error::Error for ConnectError {}

impl From<io::Error> for ConnectError {
    fn from(error: io::Error) -> ConnectError {
        ConnectError::Io(error)
    }
}

impl From<redis::RedisError> for ConnectError {
    fn from(error: redis::RedisError) -> ConnectError {
        ConnectError::Redis(error)
    }
}

impl From<tokio_postgres::Error> for ConnectError {
    fn from(error: tokio_postgres::Error) -> ConnectError {
        ConnectError::Postgres(error)
    }
}

/// Spawns a client's driver future. On a turmoil host it joins the host's `LocalSet`, where
/// the simulation sees it woken (a host whose tasks all wait may be skipped, see
/// `turmoil::Builder::skip_idle_hosts`); elsewhere it is a task of the runtime.
fn spawn_driver<F>(driver: F)
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    if turmoil::in_simulation() {
        tokio::task::spawn_local(driver);
    } else {
        tokio::spawn(driver);
    }
}

/// Makes a `redis` multiplexed connection over an already connected stream, with the given
/// response timeout (`None`: wait forever), and spawns its driver.
///
/// The handshake is the client's own: it pipelines `CLIENT SETINFO LIB-NAME` and
/// `CLIENT SETINFO LIB-VER` (RESP2, no password, database 0).
pub async fn redis_over_stream<S>(
    stream: S,
    settings: &RedisConnectionInfo,
    response_timeout: Option<Duration>,
) -> Result<MultiplexedConnection, ConnectError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let config = AsyncConnectionConfig::new().set_response_timeout(response_timeout);
    let (connection, driver) =
        MultiplexedConnection::new_with_config(settings, stream, config).await?;
    spawn_driver(driver);
    Ok(connection)
}

/// Connects a `redis` multiplexed connection to `host:port` on turmoil's network.
pub async fn redis_sim(
    host: &str,
    port: u16,
    response_timeout: Option<Duration>,
) -> Result<MultiplexedConnection, ConnectError> {
    let stream = turmoil::net::TcpStream::connect((host, port)).await?;
    redis_over_stream(stream, &RedisConnectionInfo::default(), response_timeout).await
}

/// Connects a `redis` multiplexed connection to a real server named by a `redis://` URL.
pub async fn redis_url(
    url: &str,
    response_timeout: Option<Duration>,
) -> Result<MultiplexedConnection, ConnectError> {
    let info = url.into_connection_info()?;
    let ConnectionAddr::Tcp(host, port) = info.addr() else {
        return Err(ConnectError::Url(format!(
            "{url}: only plain TCP redis:// URLs are supported (no TLS, no unix sockets)"
        )));
    };
    let stream = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
    stream.set_nodelay(true)?;
    redis_over_stream(stream, info.redis_settings(), response_timeout).await
}

/// Connects to the real Redis at `url` and selects database `db` on the connection (every
/// reconnect selects it again): real mode's Redlock node `db`.
pub async fn redis_url_in_db(url: &str, db: i64) -> Result<MultiplexedConnection, ConnectError> {
    let info = url.into_connection_info()?;
    let ConnectionAddr::Tcp(host, port) = info.addr() else {
        return Err(ConnectError::Url(format!(
            "{url}: only plain TCP redis:// URLs are supported (no TLS, no unix sockets)"
        )));
    };
    let stream = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
    stream.set_nodelay(true)?;
    let settings = info.redis_settings().clone().set_db(db);
    redis_over_stream(stream, &settings, None).await
}

/// The `tokio-postgres` configuration of the simulated clients: user and database
/// `leaselab`, no TLS; the password is unused (the servers trust every user).
pub fn postgres_sim_config() -> Config {
    let mut config = Config::new();
    config.user(POSTGRES_USER).dbname(POSTGRES_USER);
    config
}

/// Starts a `tokio-postgres` session over an already connected stream and spawns its
/// connection driver. `config` must name a user.
pub async fn postgres_over_stream<S>(stream: S, config: &Config) -> Result<Client, ConnectError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) = config.connect_raw(stream, NoTls).await?;
    spawn_driver(async move {
        // A connection error surfaces to the client as a closed connection.
        let _ = connection.await;
    });
    Ok(client)
}

/// Connects a `tokio-postgres` client to `host:port` on turmoil's network.
pub async fn postgres_sim(host: &str, port: u16) -> Result<Client, ConnectError> {
    let stream = turmoil::net::TcpStream::connect((host, port)).await?;
    postgres_over_stream(stream, &postgres_sim_config()).await
}

/// Connects a `tokio-postgres` client to a real server named by a `postgres://` URL or a
/// `key=value` connection string (plain TCP, no TLS).
pub async fn postgres_url(url: &str) -> Result<Client, ConnectError> {
    let config: Config = url.parse()?;
    postgres_real(&config, url).await
}

/// Connects a `tokio-postgres` client to the real server `config` names (parsed from `url`,
/// which error messages quote), over plain TCP.
pub async fn postgres_real(config: &Config, url: &str) -> Result<Client, ConnectError> {
    let Some(Host::Tcp(host)) = config.get_hosts().first() else {
        return Err(ConnectError::Url(format!(
            "{url}: name one TCP host (unix sockets are not supported)"
        )));
    };
    if config.get_user().is_none() {
        return Err(ConnectError::Url(format!(
            "{url}: name a user, e.g. postgres://user@host/db"
        )));
    }
    let port = config.get_ports().first().copied().unwrap_or(POSTGRES_PORT);
    let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
    stream.set_nodelay(true)?;
    postgres_over_stream(stream, config).await
}
