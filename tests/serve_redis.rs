//! Smoke tests of `leaselab serve redis`, run as a child process on a free loopback port:
//! `redis-cli` (when installed) gets `PONG` and replays the tutorial's session, the `redis`
//! client does the same, Ctrl-C stops the server cleanly, and a busy port is a usage error.

use std::io::{BufRead, BufReader, Read as _};
use std::net::TcpListener;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use redis::Value;

/// The tutorial's `redis-cli` compare-and-delete, exactly as it types it.
const TUTORIAL_RELEASE: &str = "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then return \
                                redis.call(\"DEL\", KEYS[1]) end return 0";

/// A running `leaselab serve ...`, killed when dropped (also when a test fails).
struct Server {
    child: Child,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

impl Server {
    /// Starts `leaselab serve <kind> --port <free port>` and waits for its banner.
    fn start(kind: &str) -> Server {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_leaselab"))
            .args(["serve", kind, "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start leaselab serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("its stdout"));
        let mut banner = String::new();
        stdout.read_line(&mut banner).expect("read the banner");
        let mut server = Server {
            child,
            stdout,
            port,
        };
        assert!(
            banner.contains(&format!("listening on 127.0.0.1:{port}")),
            "unexpected banner {banner:?}; stderr: {}",
            server.stderr()
        );
        server
    }

    fn stderr(&mut self) -> String {
        let _ = self.child.kill();
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }

    /// Sends SIGINT (what Ctrl-C sends) and returns the exit status and the rest of stdout.
    fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -INT failed");
        let status = self.child.wait().expect("wait for leaselab serve");
        let mut rest = String::new();
        let _ = self.stdout.read_to_string(&mut rest);
        (status, rest)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// `redis-cli -p <port> <args>`, or `None` when redis-cli is not installed.
fn redis_cli(port: u16, args: &[&str]) -> Option<String> {
    let output = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(output.status.success(), "redis-cli {args:?}: {output:?}");
    Some(
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string(),
    )
}

#[test]
fn redis_cli_gets_pong_and_replays_the_tutorial_session() {
    let server = Server::start("redis");
    let port = server.port;
    let Some(pong) = redis_cli(port, &["PING"]) else {
        eprintln!(
            "redis_cli_gets_pong_and_replays_the_tutorial_session: skipped: redis-cli is not \
             installed (the redis client test covers the same session)"
        );
        return;
    };
    assert_eq!(pong, "PONG");
    let key = "lock:wallet:42";
    let cli = |args: &[&str]| redis_cli(port, args).expect("redis-cli");
    assert_eq!(cli(&["SET", key, "token-a", "NX", "PX", "30000"]), "OK");
    // redis-cli prints a nil reply as an empty line when its output is not a terminal.
    assert_eq!(cli(&["SET", key, "token-b", "NX", "PX", "30000"]), "");
    let ttl: i64 = cli(&["PTTL", key])
        .parse()
        .expect("PTTL answers an integer");
    assert!((25_000..=30_000).contains(&ttl), "PTTL {ttl}");
    assert_eq!(cli(&["EVAL", TUTORIAL_RELEASE, "1", key, "token-b"]), "0");
    assert_eq!(cli(&["EVAL", TUTORIAL_RELEASE, "1", key, "token-a"]), "1");
    assert_eq!(cli(&["EXISTS", key]), "0");
    // Any script runs in Lua, as in Redis.
    assert_eq!(cli(&["EVAL", "return 1 + 1", "0"]), "2");
}

#[test]
fn the_redis_client_replays_the_tutorial_session_and_ctrl_c_stops_the_server() {
    let server = Server::start("redis");
    let url = format!("redis://127.0.0.1:{}", server.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut redis = leaselab_sim::clients::redis_url(&url, Some(Duration::from_secs(10)))
            .await
            .expect("connect to leaselab serve redis");
        let mut send = async |args: &[&str]| -> Value {
            let mut command = redis::Cmd::new();
            for arg in args {
                command.arg(*arg);
            }
            command
                .query_async::<Value>(&mut redis)
                .await
                .expect("a reply")
        };
        let key = "lock:wallet:42";
        assert_eq!(send(&["PING"]).await, Value::SimpleString("PONG".into()));
        assert_eq!(
            send(&["SET", key, "token-a", "NX", "PX", "30000"]).await,
            Value::Okay
        );
        assert_eq!(
            send(&["SET", key, "token-b", "NX", "PX", "30000"]).await,
            Value::Nil
        );
        let Value::Int(ttl) = send(&["PTTL", key]).await else {
            panic!("PTTL answers an integer");
        };
        assert!((25_000..=30_000).contains(&ttl), "PTTL {ttl}");
        let release = |token| ["EVAL", TUTORIAL_RELEASE, "1", key, token];
        assert_eq!(send(&release("token-b")).await, Value::Int(0));
        assert_eq!(send(&release("token-a")).await, Value::Int(1));
        assert_eq!(send(&["EXISTS", key]).await, Value::Int(0));
    });
    let (status, rest) = server.interrupt();
    assert!(status.success(), "exit status {status:?} after Ctrl-C");
    assert!(rest.contains("stopped"), "stdout after Ctrl-C: {rest:?}");
}

#[test]
fn a_busy_port_is_a_usage_error() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = taken.local_addr().expect("its address").port();
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(["serve", "redis", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("run leaselab serve");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")) && stderr.contains("--port"),
        "{stderr}"
    );
}

/// One request in RESP on a raw connection; the whole reply as text.
fn raw_request(stream: &mut std::net::TcpStream, argv: &[&str]) -> String {
    use std::io::Write as _;
    let mut request = format!("*{}\r\n", argv.len());
    for arg in argv {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes()).expect("send");
    std::thread::sleep(Duration::from_millis(50));
    let mut buffer = [0u8; 4096];
    let read = stream.read(&mut buffer).expect("a reply");
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[test]
fn each_connection_has_its_own_transaction_and_a_watched_key_touched_elsewhere_aborts_exec() {
    let server = Server::start("redis");
    let connect = || {
        let stream =
            std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connect to serve");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("a read timeout");
        stream
    };
    let mut a = connect();
    let mut b = connect();
    assert_eq!(raw_request(&mut a, &["WATCH", "wallet"]), "+OK\r\n");
    assert_eq!(raw_request(&mut a, &["MULTI"]), "+OK\r\n");
    assert_eq!(raw_request(&mut a, &["SET", "wallet", "90"]), "+QUEUED\r\n");
    // Another connection is not inside A's transaction: its SET runs at once.
    assert_eq!(raw_request(&mut b, &["SET", "wallet", "80"]), "+OK\r\n");
    let exec = raw_request(&mut a, &["EXEC"]);
    assert_eq!(
        exec, "*-1\r\n",
        "EXEC after a touched WATCH answers the null array"
    );
    assert_eq!(raw_request(&mut b, &["GET", "wallet"]), "$2\r\n80\r\n");
    // Without a touched key, EXEC runs the queue.
    assert_eq!(raw_request(&mut a, &["MULTI"]), "+OK\r\n");
    assert_eq!(raw_request(&mut a, &["INCR", "n"]), "+QUEUED\r\n");
    assert_eq!(raw_request(&mut a, &["EXEC"]), "*1\r\n:1\r\n");
}
