//! The accept loops the Redis and PostgreSQL servers share: on turmoil's simulated network and
//! on real loopback ports, each connection served in its own local task.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

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

/// The first pause after a failed accept on a real port; it doubles on each failure in a row.
pub(crate) const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest pause between accept attempts after failures.
pub(crate) const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Something connections are accepted from (a real listener, or a test's stand-in for one).
pub(crate) trait Acceptor {
    /// The accepted connection.
    type Stream: AsyncRead + AsyncWrite + Unpin + 'static;
    /// Waits for the next connection.
    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Stream, SocketAddr)>>;
}

impl Acceptor for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;

    async fn accept(&mut self) -> io::Result<(tokio::net::TcpStream, SocketAddr)> {
        let (stream, peer) = tokio::net::TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        Ok((stream, peer))
    }
}

/// Accepts connections on a real listener forever (inside a [`tokio::task::LocalSet`]).
///
/// A failed accept (too many open files, a connection reset before it was accepted, ...) does
/// not stop the server and its state: the error goes to stderr and the loop tries again after
/// a pause that doubles while the failures go on (10 ms up to 1 s).
pub(crate) async fn accept_tokio<T: ServeConnection>(
    server: T,
    listener: tokio::net::TcpListener,
) -> io::Result<()> {
    let address = listener
        .local_addr()
        .map_or_else(|_| "a real port".to_string(), |address| address.to_string());
    accept_forever(server, listener, |error, pause| {
        eprintln!(
            "leaselab: accepting a connection on {address} failed: {error}; still serving, trying again in {}ms",
            pause.as_millis()
        );
    })
    .await
}

/// The accept loop of [`accept_tokio`], for any acceptor; `on_error` hears of every failed
/// accept and the pause before the next attempt.
pub(crate) async fn accept_forever<T, A>(
    server: T,
    mut acceptor: A,
    mut on_error: impl FnMut(&io::Error, Duration),
) -> io::Result<()>
where
    T: ServeConnection,
    A: Acceptor,
{
    let mut pause = ACCEPT_BACKOFF_MIN;
    loop {
        match acceptor.accept().await {
            Ok((stream, peer)) => {
                pause = ACCEPT_BACKOFF_MIN;
                spawn_connection(&server, stream, peer);
            }
            Err(error) => {
                on_error(&error, pause);
                tokio::time::sleep(pause).await;
                pause = next_pause(pause);
            }
        }
    }
}

/// The pause after one more failure in a row.
fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(ACCEPT_BACKOFF_MAX)
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

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;
    use std::rc::Rc;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

    use super::*;

    /// Answers every connection with `hi` and counts them.
    #[derive(Clone, Default)]
    struct Greeter {
        served: Rc<Cell<u32>>,
    }

    impl ServeConnection for Greeter {
        async fn serve_connection<S>(
            &self,
            mut stream: S,
            _peer: Option<SocketAddr>,
        ) -> io::Result<()>
        where
            S: AsyncRead + AsyncWrite + Unpin + 'static,
        {
            self.served.set(self.served.get() + 1);
            stream.write_all(b"hi").await
        }
    }

    /// Fails as scripted, then hands out connections.
    struct Scripted {
        script: VecDeque<io::Result<DuplexStream>>,
    }

    impl Acceptor for Scripted {
        type Stream = DuplexStream;

        async fn accept(&mut self) -> io::Result<(DuplexStream, SocketAddr)> {
            match self.script.pop_front() {
                Some(next) => next.map(|stream| (stream, SocketAddr::from(([127, 0, 0, 1], 9)))),
                None => std::future::pending().await,
            }
        }
    }

    #[test]
    fn pauses_double_up_to_a_second() {
        let mut pause = ACCEPT_BACKOFF_MIN;
        let mut pauses = Vec::new();
        for _ in 0..10 {
            pauses.push(pause.as_millis());
            pause = next_pause(pause);
        }
        assert_eq!(
            pauses,
            vec![10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]
        );
    }

    #[test]
    fn accept_errors_are_reported_and_the_loop_keeps_serving() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            let emfile = || io::Error::from_raw_os_error(24);
            let (client_a, server_a) = tokio::io::duplex(64);
            let (client_b, server_b) = tokio::io::duplex(64);
            let mut script = VecDeque::new();
            script.push_back(Err(emfile()));
            script.push_back(Err(emfile()));
            script.push_back(Ok(server_a));
            for _ in 0..3 {
                script.push_back(Err(emfile()));
            }
            script.push_back(Ok(server_b));
            let greeter = Greeter::default();
            let pauses = Rc::new(RefCell::new(Vec::new()));
            let seen = pauses.clone();
            let started = tokio::time::Instant::now();
            tokio::task::spawn_local(accept_forever(
                greeter.clone(),
                Scripted { script },
                move |error, pause| {
                    assert_eq!(error.raw_os_error(), Some(24));
                    seen.borrow_mut().push(pause.as_millis());
                },
            ));
            for mut client in [client_a, client_b] {
                let mut greeting = [0u8; 2];
                client.read_exact(&mut greeting).await.unwrap();
                assert_eq!(&greeting, b"hi");
            }
            assert_eq!(greeter.served.get(), 2);
            assert_eq!(*pauses.borrow(), vec![10, 20, 10, 20, 40]);
            // The pauses were slept.
            let slept_ms: u128 = pauses.borrow().iter().sum();
            assert!(started.elapsed().as_millis() >= slept_ms);
        });
    }
}
