//! Bad input for the wire servers and real mode: `leaselab serve` with busy or bad ports and
//! addresses, hostile bytes sent to a served stand-in (which must answer as its real
//! counterpart would and go on serving), and real-mode URLs that are malformed, of the wrong
//! scheme, unreachable, of the wrong protocol, or point at a listener that never answers
//! (each exits 2 within seconds, naming the URL).
//!
//! Self-contained: the "wrong protocol" servers are the stand-ins themselves, served by the
//! binary under test, and the silent listener belongs to the test.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bad_input::{check_all, Case};

/// Text that lives as long as the test (the harness wants `&'static str`).
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `leaselab serve ...` child on a free port, killed when dropped.
struct Served {
    child: Child,
    port: u16,
    redis: bool,
}

impl Served {
    /// Starts `leaselab serve <what> --port 0 [extra...]` (optionally under `prlimit`) and
    /// reads the port it chose from its first line.
    fn start_with(prefix: &[&str], what: &str, extra: &[&str]) -> Served {
        let binary = env!("CARGO_BIN_EXE_leaselab");
        let mut command = match prefix.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(binary);
                command
            }
            None => Command::new(binary),
        };
        let mut child = command
            .args(["serve", what, "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("leaselab serve starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first
            .trim()
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in the banner {first:?}"));
        Served {
            child,
            port,
            redis: what == "redis",
        }
    }

    fn start(what: &str) -> Served {
        Served::start_with(&[], what, &[])
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(400)))
            .unwrap();
        stream
    }

    /// Sends `bytes` on a fresh connection and returns what came back before the server
    /// closed the connection or stayed quiet for 400 ms, and whether it closed it.
    fn exchange(&self, bytes: &[u8]) -> (Vec<u8>, bool) {
        let mut stream = self.connect();
        let _ = stream.write_all(bytes);
        read_quietly(&mut stream)
    }

    /// The server process still runs, and a Redis stand-in answers a PING on a fresh
    /// connection (a PostgreSQL stand-in answers an SSLRequest with `N`).
    fn assert_still_serves(&mut self, what: &str) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the server died after {what}"
        );
        let (request, answer): (Vec<u8>, &[u8]) = if self.redis {
            (b"PING\r\n".to_vec(), b"+PONG\r\n")
        } else {
            (ssl_request(), b"N")
        };
        let mut stream = self.connect();
        stream.write_all(&request).unwrap();
        let mut reply = vec![0u8; answer.len()];
        let read = stream.read_exact(&mut reply);
        assert!(
            read.is_ok() && reply == answer,
            "no {:?} after {what}: {read:?} {:?}",
            answer.escape_ascii().to_string(),
            reply.escape_ascii().to_string()
        );
    }

    /// Stops the server and returns what it wrote on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_quietly(stream: &mut TcpStream) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return (out, true),
            Ok(read) => out.extend_from_slice(&chunk[..read]),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (out, false)
            }
            Err(_) => return (out, true),
        }
    }
}

fn ssl_request() -> Vec<u8> {
    let mut packet = 8i32.to_be_bytes().to_vec();
    packet.extend_from_slice(&80_877_103i32.to_be_bytes());
    packet
}

fn startup_message(user: &str) -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for text in ["user", user, "database", "test"] {
        body.extend_from_slice(text.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    packet
}

#[test]
fn serve_refuses_busy_ports_and_bad_values() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let busy = leak(format!("127.0.0.1:{port}"));
    check_all(vec![
        Case::new("serve redis on a busy port", &[], 2, &[busy, "--port"]).with_args(
            ["serve", "redis", "--port", &port]
                .map(String::from)
                .to_vec(),
        ),
        Case::new("serve postgres on a busy port", &[], 2, &[busy, "--port"]).with_args(
            ["serve", "postgres", "--port", &port]
                .map(String::from)
                .to_vec(),
        ),
        Case::new(
            "port too big",
            &["serve", "redis", "--port", "70000"],
            2,
            &["70000"],
        ),
        Case::new(
            "negative port",
            &["serve", "redis", "--port=-1"],
            2,
            &["-1"],
        ),
        Case::new(
            "deadlock timeout of zero",
            &["serve", "postgres", "--deadlock-timeout", "0ms"],
            2,
            &["0ms", "1ms"],
        ),
        Case::new(
            "deadlock timeout too long",
            &["serve", "postgres", "--deadlock-timeout", "700s"],
            2,
            &["700s", "600s"],
        ),
        Case::new(
            "port not a number",
            &["serve", "postgres", "--port", "abc"],
            2,
            &["abc"],
        ),
        Case::new(
            "bind to a host name",
            &["serve", "redis", "--bind", "localhost"],
            2,
            &["localhost", "127.0.0.1"],
        ),
        Case::new(
            "bind to an address of another machine",
            &["serve", "redis", "--port", "0", "--bind", "192.0.2.1"],
            2,
            &["192.0.2.1", "--bind"],
        ),
        Case::new(
            "negative wallet balance",
            &["serve", "postgres", "--port", "0", "--wallet", "1=-5"],
            2,
            &["negative"],
        ),
        Case::new("unknown stand-in", &["serve", "mysql"], 2, &["mysql"]),
    ]);
    drop(taken);
}

#[test]
fn real_mode_urls_that_cannot_work_exit_2_naming_the_url() {
    let refused = free_port();
    let mut redis_stand_in = Served::start("redis");
    let mut postgres_stand_in = Served::start("postgres");
    let redis_at = |port: u16| leak(format!("redis://127.0.0.1:{port}"));
    let postgres_at = |port: u16| leak(format!("postgres://postgres@127.0.0.1:{port}/test"));
    let run = |args: &[&'static str]| {
        let scenario = if args.contains(&"--postgres") {
            "step5-fencing"
        } else {
            "step2-lock"
        };
        let mut all = vec!["run", scenario, "--runs", "1"];
        all.extend_from_slice(args);
        all.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let quick = Duration::from_secs(10);
    check_all(vec![
        Case::new("redis URL not a URL", &[], 2, &["--redis", "not a url"])
            .with_args(run(&["--redis", "not a url"]))
            .deadline(quick),
        Case::new(
            "redis URL of another scheme",
            &[],
            2,
            &["http://127.0.0.1:6379"],
        )
        .with_args(run(&["--redis", "http://127.0.0.1:6379"]))
        .deadline(quick),
        Case::new(
            "redis URL port out of range",
            &[],
            2,
            &["redis://127.0.0.1:99999"],
        )
        .with_args(run(&["--redis", "redis://127.0.0.1:99999"]))
        .deadline(quick),
        Case::new("redis over a unix socket", &[], 2, &["unix", "tcp"])
            .with_args(run(&["--redis", "unix:///tmp/leaselab-nowhere.sock"]))
            .deadline(quick),
        Case::new(
            "redis port where nothing listens",
            &[],
            2,
            &[redis_at(refused), "nothing listens"],
        )
        .with_args(run(&["--redis", redis_at(refused)]))
        .deadline(quick),
        Case::new(
            "redis URL at a PostgreSQL server",
            &[],
            2,
            &[redis_at(postgres_stand_in.port), "not a redis server"],
        )
        .with_args(run(&["--redis", redis_at(postgres_stand_in.port)]))
        .deadline(quick),
        Case::new(
            "postgres URL not a URL",
            &[],
            2,
            &["--postgres", "postgres://[::1"],
        )
        .with_args(run(&[
            "--redis",
            redis_at(redis_stand_in.port),
            "--postgres",
            "postgres://[::1",
        ]))
        .deadline(quick),
        Case::new("postgres URL of another scheme", &[], 2, &["mysql://x/y"])
            .with_args(run(&[
                "--redis",
                redis_at(redis_stand_in.port),
                "--postgres",
                "mysql://x/y",
            ]))
            .deadline(quick),
        Case::new("postgres URL without a user", &[], 2, &["name a user"])
            .with_args(run(&[
                "--redis",
                redis_at(redis_stand_in.port),
                "--postgres",
                "postgres://127.0.0.1/test",
            ]))
            .deadline(quick),
        Case::new(
            "postgres port where nothing listens",
            &[],
            2,
            &[postgres_at(refused), "nothing listens"],
        )
        .with_args(run(&[
            "--redis",
            redis_at(redis_stand_in.port),
            "--postgres",
            postgres_at(refused),
        ]))
        .deadline(quick),
        Case::new(
            "postgres URL at a Redis server",
            &[],
            2,
            &[postgres_at(redis_stand_in.port), "postgresql server"],
        )
        .with_args(run(&[
            "--redis",
            redis_at(redis_stand_in.port),
            "--postgres",
            postgres_at(redis_stand_in.port),
        ]))
        .deadline(quick),
        Case::new(
            "a postgres URL the scenario does not need is still checked",
            &[],
            2,
            &[postgres_at(refused)],
        )
        .with_args(
            [
                "run",
                "step2-lock",
                "--redis",
                redis_at(redis_stand_in.port),
                "--postgres",
                postgres_at(refused),
            ]
            .map(String::from)
            .to_vec(),
        )
        .deadline(quick),
    ]);
    redis_stand_in.assert_still_serves("the real-mode cases");
    postgres_stand_in.assert_still_serves("the real-mode cases");
}

/// A listener that accepts connections and never says a word.
fn silent_listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn real_mode_against_a_silent_listener_exits_2_within_seconds() {
    let silent = silent_listener();
    let redis_stand_in = Served::start("redis");
    let redis_url = leak(format!("redis://127.0.0.1:{silent}"));
    let postgres_url = leak(format!("postgres://postgres@127.0.0.1:{silent}/test"));
    let stand_in_url = format!("redis://127.0.0.1:{}", redis_stand_in.port);
    let deadline = Duration::from_secs(8);
    let started = Instant::now();
    check_all(vec![
        Case::new(
            "redis URL at a silent listener",
            &[],
            2,
            &[redis_url, "PING"],
        )
        .with_args(
            ["run", "step2-lock", "--redis", redis_url]
                .map(String::from)
                .to_vec(),
        )
        .deadline(deadline),
        Case::new(
            "postgres URL at a silent listener",
            &[],
            2,
            &[postgres_url, "startup"],
        )
        .with_args(
            [
                "run",
                "step5-fencing",
                "--redis",
                &stand_in_url,
                "--postgres",
                postgres_url,
            ]
            .map(String::from)
            .to_vec(),
        )
        .deadline(deadline),
    ]);
    assert!(started.elapsed() < 2 * deadline);
}

#[test]
fn hostile_bytes_to_the_served_redis_stand_in_get_redis_answers_and_it_serves_on() {
    let mut served = Served::start("redis");
    // Redis reads 16 KiB at a time and refuses a line once more than 64 KiB wait without a
    // line feed; 200 000 bytes are over it however the reads fall.
    let mut long_inline = vec![b'a'; 200_000];
    long_inline.extend_from_slice(b"\r\n");
    let cases: Vec<(&str, Vec<u8>, &[u8], bool)> = vec![
        // (name, bytes, reply, closed)
        ("zero byte line", b"\x00\r\n".to_vec(), b"", false),
        (
            "zero byte in an inline SET",
            b"SET a\x00b c\r\n".to_vec(),
            b"",
            false,
        ),
        (
            "bulk over 512 MiB",
            b"*1\r\n$536870913\r\n".to_vec(),
            b"-ERR Protocol error: invalid bulk length\r\n",
            true,
        ),
        (
            "multibulk count over INT_MAX",
            b"*2147483648\r\n".to_vec(),
            b"-ERR Protocol error: invalid multibulk length\r\n",
            true,
        ),
        (
            "inline request over 64 KiB",
            long_inline,
            b"-ERR Protocol error: too big inline request\r\n",
            true,
        ),
        (
            "unbalanced quotes",
            b"PING \"a\r\n".to_vec(),
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
            true,
        ),
        (
            "negative bulk length",
            b"*1\r\n$-5\r\n".to_vec(),
            b"-ERR Protocol error: invalid bulk length\r\n",
            true,
        ),
    ];
    for (name, bytes, reply, closed) in cases {
        let seen = served.exchange(&bytes);
        assert_eq!(
            (seen.0.escape_ascii().to_string(), seen.1),
            (reply.escape_ascii().to_string(), closed),
            "{name}"
        );
        served.assert_still_serves(name);
    }
    // A client that vanishes mid-request leaves the server serving.
    let mut stream = served.connect();
    stream.write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk").unwrap();
    stream.shutdown(Shutdown::Both).unwrap();
    served.assert_still_serves("a client that left mid-request");
}

#[test]
fn hostile_bytes_to_the_served_postgres_stand_in_get_postgres_answers_and_it_serves_on() {
    let mut served = Served::start("postgres");
    // An absurd startup packet length: closed without a word.
    let (reply, closed) = served.exchange(&[0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0]);
    assert_eq!((reply, closed), (Vec::new(), true), "absurd startup length");
    served.assert_still_serves("an absurd startup length");
    // A CancelRequest for a process that does not exist: closed without a word.
    let mut cancel = 16i32.to_be_bytes().to_vec();
    cancel.extend_from_slice(&80_877_102i32.to_be_bytes());
    cancel.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2]);
    assert_eq!(served.exchange(&cancel), (Vec::new(), true), "cancel");
    // A GSSENCRequest is declined like an SSLRequest.
    let mut gss = 8i32.to_be_bytes().to_vec();
    gss.extend_from_slice(&80_877_104i32.to_be_bytes());
    assert_eq!(served.exchange(&gss).0, b"N".to_vec(), "GSSENCRequest");
    // An unknown message type after a good startup: a FATAL protocol violation, closed.
    let mut bytes = startup_message("postgres");
    bytes.extend_from_slice(b"Z\x00\x00\x00\x04");
    let (reply, closed) = served.exchange(&bytes);
    let text = String::from_utf8_lossy(&reply);
    assert!(
        text.contains("invalid frontend message type 90") && closed,
        "{text:?} closed={closed}"
    );
    served.assert_still_serves("an unknown message type");
    // A Query whose length is absurd: closed.
    let mut bytes = startup_message("postgres");
    bytes.extend_from_slice(b"Q\x7f\xff\xff\xff");
    let (_, closed) = served.exchange(&bytes);
    assert!(closed, "absurd message length");
    served.assert_still_serves("an absurd message length");
}

#[test]
fn accept_errors_do_not_stop_a_served_stand_in() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        common::report(
            "accept_errors_do_not_stop_a_served_stand_in: skipped: no `prlimit` (util-linux) to \
             lower the server's file limit",
        );
        return;
    }
    // Few file descriptors: the server soon cannot accept more connections.
    let mut served = Served::start_with(&["prlimit", "--nofile=24:24", "--"], "redis", &[]);
    let mut clients = Vec::new();
    for _ in 0..40 {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", served.port)) {
            clients.push(stream);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    drop(clients);
    // Once the connections are gone the server serves again, its keyspace intact.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stream = TcpStream::connect(("127.0.0.1", served.port));
        if let Ok(mut stream) = stream {
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            if stream.write_all(b"PING\r\n").is_ok() && read_quietly(&mut stream).0 == b"+PONG\r\n"
            {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the server did not serve again");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        served.child.try_wait().unwrap().is_none(),
        "the server exited"
    );
    let stderr = served.stop();
    assert!(
        stderr.contains("accepting a connection") && stderr.contains("still serving"),
        "stderr: {stderr}"
    );
}

/// A "Redis" that answers the handshake (`PING`, `CLIENT SETINFO`, `HELLO` is refused) and
/// then falls silent: every later command goes unanswered.
fn redis_that_falls_silent() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut chunk = [0u8; 4096];
                while let Ok(read) = stream.read(&mut chunk) {
                    if read == 0 {
                        break;
                    }
                    let text = String::from_utf8_lossy(&chunk[..read]).to_uppercase();
                    let mut reply = Vec::new();
                    for _ in 0..text.matches("SETINFO").count() {
                        reply.extend_from_slice(b"+OK\r\n");
                    }
                    for _ in 0..text.matches("PING").count() {
                        reply.extend_from_slice(b"+PONG\r\n");
                    }
                    if stream.write_all(&reply).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_redis_that_falls_silent_mid_run_is_an_error_not_a_hang() {
    let port = redis_that_falls_silent();
    let url = leak(format!("redis://127.0.0.1:{port}"));
    check_all(vec![Case::new(
        "redis falls silent after the handshake",
        &[],
        2,
        &[url, "no answer within", "not usable"],
    )
    .with_args(
        ["run", "step2-lock", "--redis", url]
            .map(String::from)
            .to_vec(),
    )
    .deadline(Duration::from_secs(15))]);
}
