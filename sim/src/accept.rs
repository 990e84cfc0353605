//! The accept loops the Redis and PostgreSQL servers share: on turmoil's simulated network and
//! on real loopback ports, each connection served in its own local task.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncWrite};

/// A server that can serve one connection at a time per task.
pub(crate) trait ServeConnection: Clone + 'static {
    /// Serves one connection from `peer` until it ends.
    fn serve_connection<S>(
        &self,
        stream: S,
        peer: Option<SocketAddr>,
    ) -> impl Future<Output = io::Result<()>>
    where
        S: AsyncRead + AsyncWrite + Unpin + 'static;
}

/// Accepts connections on a turmoil listener forever.
pub(crate) async fn accept_turmoil<T: ServeConnection>(
    server: T,
    listener: turmoil::net::TcpListener,
) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        spawn_connection(&server, stream, peer);
    }
}

/// Accepts connections on a real listener forever (inside a [`tokio::task::LocalSet`]).
pub(crate) async fn accept_tokio<T: ServeConnection>(
    server: T,
    listener: tokio::net::TcpListener,
) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        spawn_connection(&server, stream, peer);
    }
}

fn spawn_connection<T, S>(server: &T, stream: S, peer: SocketAddr)
where
    T: ServeConnection,
    S: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let server = server.clone();
    tokio::task::spawn_local(async move {
        // An I/O error ends the connection; there is no one to report it to.
        let _ = server.serve_connection(stream, Some(peer)).await;
    });
}
