//! The Redis stand-in served on turmoil's network, driven by the `redis` crate (and by raw
//! RESP for inline commands and protocol errors).

mod wire_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::redis::{Redis, ScriptId};
use leaselab_sim::clients::{redis_sim, REDIS_HOST, REDIS_PORT};
use leaselab_sim::observer::{NoopObserver, Observer, TextLog};
use redis::AsyncCommands;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wire_support::{serve_redis, sim};

const RESPONSE_TIMEOUT: Option<Duration> = Some(Duration::from_secs(1));

fn noop() -> Rc<dyn Observer> {
    Rc::new(NoopObserver)
}

fn fresh_redis() -> Rc<RefCell<Redis>> {
    Rc::new(RefCell::new(Redis::new()))
}

#[test]
fn set_nx_px_get_pttl_and_expiry_in_simulated_time() {
    let mut sim = sim(11);
    serve_redis(&mut sim, fresh_redis(), noop());
    sim.client("caller", async {
        let mut con = redis_sim(REDIS_HOST, REDIS_PORT, RESPONSE_TIMEOUT).await?;
        let acquired: Option<String> = redis::cmd("SET")
            .arg("lock")
            .arg("token-1")
            .arg("NX")
            .arg("PX")
            .arg(100)
            .query_async(&mut con)
            .await?;
        assert_eq!(acquired.as_deref(), Some("OK"));
        let busy: Option<String> = redis::cmd("SET")
            .arg("lock")
            .arg("token-2")
            .arg("NX")
            .arg("PX")
            .arg(100)
            .query_async(&mut con)
            .await?;
        assert_eq!(busy, None, "NX refuses a held lock with a nil reply");
        let holder: Option<String> = con.get("lock").await?;
        assert_eq!(holder.as_deref(), Some("token-1"));
        let ttl_ms: i64 = con.pttl("lock").await?;
        assert!((90..=100).contains(&ttl_ms), "PTTL {ttl_ms}");

        tokio::time::sleep(Duration::from_millis(60)).await;
        let ttl_ms: i64 = con.pttl("lock").await?;
        assert!((30..=40).contains(&ttl_ms), "PTTL after 60 ms: {ttl_ms}");

        tokio::time::sleep(Duration::from_millis(60)).await;
        let holder: Option<String> = con.get("lock").await?;
        assert_eq!(holder, None, "the lease expired in simulated time");
        let ttl_ms: i64 = con.pttl("lock").await?;
        assert_eq!(ttl_ms, -2);
        let reacquired: Option<String> = redis::cmd("SET")
            .arg("lock")
            .arg("token-2")
            .arg("NX")
            .arg("PX")
            .arg(100)
            .query_async(&mut con)
            .await?;
        assert_eq!(reacquired.as_deref(), Some("OK"));
        Ok(())
    });
    sim.run().unwrap();
}

#[test]
fn error_replies_reach_the_client_with_their_exact_text() {
    let mut sim = sim(12);
    serve_redis(&mut sim, fresh_redis(), noop());
    sim.client("caller", async {
        let mut con = redis_sim(REDIS_HOST, REDIS_PORT, RESPONSE_TIMEOUT).await?;
        let error = redis::cmd("SET")
            .arg("lock")
            .arg("token")
            .arg("NX")
            .arg("PX")
            .arg(0)
            .query_async::<Option<String>>(&mut con)
            .await
            .unwrap_err();
        let text = format!(
            "{} {}",
            error.code().unwrap_or("?"),
            error.detail().unwrap_or("?")
        );
        assert_eq!(text, "ERR invalid expire time in 'set' command");

        let error = redis::cmd("EVALSHA")
            .arg("0000000000000000000000000000000000000000")
            .arg(0)
            .query_async::<i64>(&mut con)
            .await
            .unwrap_err();
        assert_eq!(error.code(), Some("NOSCRIPT"));
        assert_eq!(error.detail(), Some("No matching script. Please use EVAL."));
        // The connection still works.
        let pong: String = redis::cmd("PING").query_async(&mut con).await?;
        assert_eq!(pong, "PONG");
        Ok(())
    });
    sim.run().unwrap();
}

/// `redis::Script` sends EVALSHA; after SCRIPT FLUSH the server answers NOSCRIPT, and the
/// client loads the script (SCRIPT LOAD) and sends EVALSHA again.
#[test]
fn script_invocation_recovers_from_noscript_after_script_flush() {
    let log = Rc::new(TextLog::new());
    let mut sim = sim(13);
    serve_redis(&mut sim, fresh_redis(), log.clone());
    sim.client("caller", async {
        let mut con = redis_sim(REDIS_HOST, REDIS_PORT, RESPONSE_TIMEOUT).await?;
        let release = redis::Script::new(ScriptId::Release.source());
        assert_eq!(release.get_hash(), ScriptId::Release.sha1_hex());
        let _: () = redis::cmd("SET")
            .arg("lock")
            .arg("token-1")
            .query_async(&mut con)
            .await?;
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut con)
            .await?;
        let stale: i64 = release
            .key("lock")
            .arg("token-2")
            .invoke_async(&mut con)
            .await?;
        assert_eq!(stale, 0, "a release with another token deletes nothing");
        let released: i64 = release
            .key("lock")
            .arg("token-1")
            .invoke_async(&mut con)
            .await?;
        assert_eq!(released, 1);
        let holder: Option<String> = con.get("lock").await?;
        assert_eq!(holder, None);
        Ok(())
    });
    sim.run().unwrap();

    let sha = ScriptId::Release.sha1_hex();
    let commands: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|line| line.contains("EVALSHA") || line.contains("SCRIPT"))
        .map(|line| line.split(" cmd=").nth(1).unwrap().to_string())
        .collect();
    let source = leaselab_sim::observer::escape_bytes(ScriptId::Release.source().as_bytes());
    assert_eq!(
        commands,
        [
            "[\"SCRIPT\" \"FLUSH\"] reply=OK".to_string(),
            format!(
                "[\"EVALSHA\" \"{sha}\" \"1\" \"lock\" \"token-2\"] \
                 reply=(error) NOSCRIPT No matching script. Please use EVAL."
            ),
            format!("[\"SCRIPT\" \"LOAD\" {source}] reply=\"{sha}\""),
            format!("[\"EVALSHA\" \"{sha}\" \"1\" \"lock\" \"token-2\"] reply=(integer) 0"),
            format!("[\"EVALSHA\" \"{sha}\" \"1\" \"lock\" \"token-1\"] reply=(integer) 1"),
        ]
    );
}

/// What `redis-cli` and `nc` send: inline commands, pipelined; a malformed request gets
/// Redis's protocol error and the connection is closed.
#[test]
fn inline_commands_and_protocol_errors_over_raw_tcp() {
    let mut sim = sim(14);
    serve_redis(&mut sim, fresh_redis(), noop());
    sim.client("raw", async {
        let mut stream = turmoil::net::TcpStream::connect((REDIS_HOST, REDIS_PORT)).await?;
        stream
            .write_all(b"SET greeting \"hello world\"\r\nGET greeting\r\n*1\r\n$4\r\nPI")
            .await?;
        tokio::time::sleep(Duration::from_millis(10)).await;
        stream.write_all(b"NG\r\n*1\r\n:1\r\nPING\r\n").await?;
        let mut received = Vec::new();
        stream.read_to_end(&mut received).await?;
        assert_eq!(
            String::from_utf8_lossy(&received),
            "+OK\r\n$11\r\nhello world\r\n+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n"
        );

        let mut stream = turmoil::net::TcpStream::connect((REDIS_HOST, REDIS_PORT)).await?;
        stream
            .write_all(b"GET greeting\r\nQUIT\r\nGET greeting\r\n")
            .await?;
        let mut received = Vec::new();
        stream.read_to_end(&mut received).await?;
        assert_eq!(
            String::from_utf8_lossy(&received),
            "$11\r\nhello world\r\n+OK\r\n",
            "QUIT answers OK and closes"
        );
        Ok(())
    });
    sim.run().unwrap();
}
