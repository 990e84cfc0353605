//! The client core driven by hand: what it asks for, in order, when a connection breaks, a
//! backoff runs past the deadline, or a reply never comes.

use leaselab_model::client::{Client, ClientPolicy, CloseReason, ConnId, Output, Server, SetUp};
use leaselab_model::redis::Reply;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Caller, Keys, Outcome, Params, Safeguard};

fn lease() -> Caller {
    let params = Params {
        wallet_id: 42,
        amount: 10,
        work_ms: 1,
        ttl_ms: 100,
        acquire_timeout_ms: Some(50),
        keys: Keys::for_wallet("", 42),
    };
    Safeguard::Lease {
        release: ReleaseVia::Script,
    }
    .build(&params, 0xabc)
    .expect("valid parameters")
}

/// A started client whose set-up connection to Redis (connection 1) is open.
fn started(policy: ClientPolicy) -> Client<Caller> {
    let mut client = Client::new(
        lease(),
        policy,
        SetUp {
            redis: true,
            postgres: false,
        },
    );
    assert_eq!(
        client.poll(0),
        Some(Output::Connect {
            server: Server::Redis,
            conn: ConnId(1),
            dial_timeout_ms: policy.dial_timeout_ms,
        })
    );
    client.handle_connected(ConnId(1));
    assert_eq!(client.poll(0), None, "waits for its start");
    client.start();
    client
}

/// Polls until the first send; returns the request's timeout and the send.
fn first_send(client: &mut Client<Caller>, now_ms: u64) -> (u64, Output) {
    let Some(Output::BeginRedis { timeout_ms, .. }) = client.poll(now_ms) else {
        panic!("the lease begins with a Redis request");
    };
    let send = client
        .poll(now_ms)
        .expect("sent at once on the open connection");
    (timeout_ms, send)
}

#[test]
fn a_broken_connection_is_closed_and_the_request_sent_again_on_a_new_one() {
    let mut client = started(ClientPolicy::default());
    let (timeout_ms, send) = first_send(&mut client, 10);
    assert_eq!(timeout_ms, 3_000, "go-redis's read timeout");
    let Output::SendRedis {
        conn: ConnId(1),
        request,
        attempt: 0,
        ..
    } = send
    else {
        panic!("sent on connection 1, got {send:?}");
    };
    assert_eq!(client.poll_timeout(), Some(3_010));

    client.handle_connection_broke("reset".into());
    assert_eq!(
        client.poll(11),
        Some(Output::Close {
            server: Server::Redis,
            conn: ConnId(1),
            reason: CloseReason::Broken("reset".into()),
        })
    );
    assert_eq!(
        client.poll(11),
        Some(Output::DrawBackoff {
            attempt: 1,
            below_ms: 16
        }),
        "go-redis: below 8 ms << 1"
    );
    assert_eq!(client.poll_timeout(), None, "no deadline while backing off");
    client.handle_backoff_drawn(11, 7);
    assert_eq!(
        client.poll(11),
        Some(Output::Retry {
            server: Server::Redis,
            attempt: 1,
            backoff_ms: 7
        })
    );
    client.handle_woke();
    assert_eq!(
        client.poll(18),
        Some(Output::Connect {
            server: Server::Redis,
            conn: ConnId(2),
            dial_timeout_ms: 5_000,
        })
    );
    client.handle_connected(ConnId(2));
    assert_eq!(
        client.poll(18),
        Some(Output::SendRedis {
            server: Server::Redis,
            conn: ConnId(2),
            request,
            attempt: 1
        }),
        "the same request again: a script would run twice"
    );
    assert_eq!(
        client.poll_timeout(),
        Some(3_010),
        "one deadline for all attempts"
    );
}

#[test]
fn retries_stop_when_used_up_and_the_machine_hears_of_the_error() {
    let policy = ClientPolicy {
        max_retries: 1,
        ..ClientPolicy::default()
    };
    let mut client = started(policy);
    first_send(&mut client, 0);
    client.handle_connection_broke("reset".into());
    assert!(matches!(client.poll(0), Some(Output::Close { .. })));
    assert!(matches!(client.poll(0), Some(Output::DrawBackoff { .. })));
    client.handle_backoff_drawn(0, 0);
    assert!(matches!(client.poll(0), Some(Output::Retry { .. })));
    client.handle_woke();
    assert!(matches!(client.poll(0), Some(Output::Connect { .. })));
    client.handle_connect_failed(ConnId(2), "refused".into());
    assert_eq!(
        client.poll(0),
        Some(Output::Close {
            server: Server::Redis,
            conn: ConnId(2),
            reason: CloseReason::Broken("refused".into()),
        })
    );
    // No retry left: the machine runs with the error and, unable to acquire, ends.
    let next = client.poll(0);
    assert!(
        matches!(
            &next,
            Some(Output::Done(Outcome::Failed(error))) if error.contains("refused")
        ),
        "{next:?}"
    );
}

#[test]
fn a_backoff_that_would_end_at_the_deadline_gives_up_instead() {
    let policy = ClientPolicy {
        read_timeout_ms: 20,
        ..ClientPolicy::default()
    };
    let mut client = started(policy);
    first_send(&mut client, 0);
    client.handle_connection_broke("reset".into());
    assert!(matches!(client.poll(5), Some(Output::Close { .. })));
    assert!(matches!(client.poll(5), Some(Output::DrawBackoff { .. })));
    client.handle_backoff_drawn(5, 15);
    let next = client.poll(5);
    assert!(
        matches!(
            &next,
            Some(Output::Done(Outcome::Failed(error))) if error.contains("reset")
        ),
        "5 + 15 reaches the deadline at 20: {next:?}"
    );
}

#[test]
fn a_reply_that_never_comes_times_out_and_closes_the_connection() {
    let policy = ClientPolicy {
        read_timeout_ms: 20,
        ..ClientPolicy::default()
    };
    let mut client = started(policy);
    first_send(&mut client, 0);
    client.handle_timeout(19);
    assert_eq!(client.poll(19), None, "too early: still waiting");
    client.handle_timeout(20);
    assert_eq!(
        client.poll(20),
        Some(Output::Close {
            server: Server::Redis,
            conn: ConnId(1),
            reason: CloseReason::RedisTimeout { after_ms: 20 },
        })
    );
    assert_eq!(client.connection(Server::Redis), None);
    let next = client.poll(20);
    assert!(
        matches!(
            &next,
            Some(Output::Done(Outcome::Failed(error))) if error.contains("in time")
        ),
        "{next:?}"
    );
}

#[test]
fn a_reply_goes_to_the_machine_and_the_connection_stays_open() {
    let mut client = started(ClientPolicy::default());
    first_send(&mut client, 0);
    client.handle_redis_reply(Reply::ok());
    assert_eq!(client.poll_timeout(), None);
    // Acquired: the lease reads the balance next, on the same connection.
    assert!(matches!(client.poll(1), Some(Output::Reached(_))));
    client.handle_resumed();
    assert!(matches!(client.poll(1), Some(Output::BeginRedis { .. })));
    assert!(matches!(
        client.poll(1),
        Some(Output::SendRedis {
            conn: ConnId(1),
            attempt: 0,
            ..
        })
    ));
    assert_eq!(client.connections_opened(), 1);
}

#[test]
fn the_core_adds_little_to_a_caller_the_checker_keeps_millions_of() {
    // Connections, the policy (shared), an idle operation, an empty queue with room for two
    // outputs (inline, so that a copied client allocates nothing on its next step): a slot
    // grows by this much per caller. The checker shares equal slots among its worlds, so
    // this is paid per distinct caller, not per stored state.
    let added = std::mem::size_of::<Client<Caller>>() - std::mem::size_of::<Caller>();
    assert!(
        added <= 224,
        "the client core adds {added} bytes to a caller"
    );
}
