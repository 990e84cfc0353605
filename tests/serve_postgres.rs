//! Smoke tests of `leaselab serve postgres`, run as a child process on a free loopback port:
//! `tokio-postgres` and `psql` (when installed) read and debit the tutorial's wallet 42.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

/// A running `leaselab serve postgres`, killed when dropped (also when a test fails).
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_leaselab"))
            .args(["serve", "postgres", "--port", &port.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start leaselab serve postgres");
        let mut banner = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut banner)
            .expect("read the banner");
        let server = Server { child, port };
        assert!(
            banner.contains(&format!("listening on 127.0.0.1:{port}")),
            "unexpected banner {banner:?}"
        );
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tokio_postgres_reads_and_debits_the_default_wallet() {
    let server = Server::start(&[]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let client = leaselab_sim::clients::postgres_url(&url)
            .await
            .expect("connect to leaselab serve postgres");
        let select = "SELECT balance, fence FROM wallets WHERE id = 42";
        let row = client.query_one(select, &[]).await.expect("wallet 42");
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (100, 0));
        let debit = "UPDATE wallets SET balance = balance - $1 WHERE id = 42 AND balance >= $1";
        assert_eq!(client.execute(debit, &[&30i64]).await.expect("debit"), 1);
        assert_eq!(client.execute(debit, &[&80i64]).await.expect("debit"), 0);
        let row = client.query_one(select, &[]).await.expect("wallet 42");
        assert_eq!(row.get::<_, i64>(0), 70);
    });
}

#[test]
fn psql_reads_the_wallets_given_on_the_command_line() {
    let server = Server::start(&["--wallet", "7=250", "--wallet", "8=0"]);
    let output = match Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
        .args(["-U", "postgres", "-d", "postgres", "-X", "-A", "-t", "-c"])
        .arg("SELECT balance, fence FROM wallets WHERE id = 7")
        .stdin(Stdio::null())
        .output()
    {
        Ok(output) => output,
        Err(_) => {
            eprintln!(
                "psql_reads_the_wallets_given_on_the_command_line: skipped: psql is not \
                 installed"
            );
            return;
        }
    };
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "250|0");
}
