//! Publish/subscribe as Redis 7.0 runs it over RESP2 (`pubsub.c`): `SUBSCRIBE`, `PSUBSCRIBE`
//! and `SSUBSCRIBE` with their `UNSUBSCRIBE`s, `PUBLISH` and `SPUBLISH`, and `PUBSUB`'s
//! subcommands.
//!
//! A connection's subscriptions live in its [`Session`] (what it subscribed to, in order, and
//! its client id); the server keeps which clients listen to what ([`PubSub`]), so that a
//! `PUBLISH` (also one a script makes) counts its receivers and leaves one message per receiver
//! for the serving connections to push ([`Redis::take_deliveries`]). A session without a
//! client id (the model checker's, a lone command's) can subscribe, and then answers as a
//! subscribed RESP2 connection does, but receives nothing: no connection could carry it.
//!
//! Two orders are Redis's own hash-table orders, which change with its random hash seed at each
//! start and so cannot be matched: an `UNSUBSCRIBE` without arguments leaves its channels in the
//! order they were subscribed here, and one `PUBLISH` reaching a connection through several
//! patterns pushes the `pmessage`s in the patterns' byte order (`PUBSUB CHANNELS` too lists
//! channels in byte order).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use super::{Redis, Session};
use crate::redis::command::wrong_arity_error;
use crate::redis::glob;
use crate::redis::reply::Reply;

/// The three kinds of subscription: to a channel, to a pattern of channels, to a shard channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    /// The kind a `(P|S)SUBSCRIBE` or `(P|S)UNSUBSCRIBE` (lower case) acts on.
    fn of(lower_name: &[u8]) -> Option<(Kind, bool)> {
        match lower_name {
            b"subscribe" => Some((Kind::Channel, true)),
            b"psubscribe" => Some((Kind::Pattern, true)),
            b"ssubscribe" => Some((Kind::Shard, true)),
            b"unsubscribe" => Some((Kind::Channel, false)),
            b"punsubscribe" => Some((Kind::Pattern, false)),
            b"sunsubscribe" => Some((Kind::Shard, false)),
            _ => None,
        }
    }

    /// The first word of a subscription's confirmation.
    fn word(self, subscribe: bool) -> &'static str {
        match (self, subscribe) {
            (Kind::Channel, true) => "subscribe",
            (Kind::Pattern, true) => "psubscribe",
            (Kind::Shard, true) => "ssubscribe",
            (Kind::Channel, false) => "unsubscribe",
            (Kind::Pattern, false) => "punsubscribe",
            (Kind::Shard, false) => "sunsubscribe",
        }
    }
}

/// True for `SUBSCRIBE`, `UNSUBSCRIBE` and their `P`/`S` forms, in any case: commands whose
/// reply is one message per channel (the server hands them as one array, see
/// [`Redis::execute_in`]).
pub fn is_subscription_command(name: &[u8]) -> bool {
    Kind::of(&name.to_ascii_lowercase()).is_some()
}

/// What one connection subscribed to, each list in the order it subscribed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Subscriber {
    /// The connection's client id, when a server serves it (messages go to it).
    client: Option<u64>,
    channels: Vec<Vec<u8>>,
    patterns: Vec<Vec<u8>>,
    shards: Vec<Vec<u8>>,
}

impl Subscriber {
    fn list(&mut self, kind: Kind) -> &mut Vec<Vec<u8>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }

    /// The count a confirmation carries: channels and patterns together, shard channels apart
    /// (`clientSubscriptionsCount`, `clientShardSubscriptionsCount`).
    fn count(&self, kind: Kind) -> i64 {
        let count = match kind {
            Kind::Channel | Kind::Pattern => self.channels.len() + self.patterns.len(),
            Kind::Shard => self.shards.len(),
        };
        i64::try_from(count).unwrap_or(i64::MAX)
    }

    fn subscribed(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shards.is_empty())
    }
}

/// A session's subscriptions: none (and no client id) in the model checker, where it costs a
/// null pointer and is not hashed, so sessions hash as they did before subscriptions existed.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SessionPubSub(pub(super) Option<Box<Subscriber>>);

impl Hash for SessionPubSub {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if let Some(subscriber) = &self.0 {
            subscriber.hash(state);
        }
    }
}

impl SessionPubSub {
    /// Subscriptions of the connection with this client id (none yet).
    pub(super) fn for_client(client: u64) -> SessionPubSub {
        SessionPubSub(Some(Box::new(Subscriber {
            client: Some(client),
            ..Subscriber::default()
        })))
    }

    /// True while subscribed to anything: a RESP2 connection then runs only the subscription
    /// commands, `PING`, `QUIT` and `RESET`.
    pub(super) fn subscribed(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|subscriber| subscriber.subscribed())
    }

    fn client(&self) -> Option<u64> {
        self.0.as_ref().and_then(|subscriber| subscriber.client)
    }
}

/// How far a subscriber may fall behind: Redis 7.0's `client-output-buffer-limit pubsub` hard
/// limit (32 MB). A connection with more messages than this waiting is closed (the soft limit,
/// 8 MB for 60 s, is not kept).
pub const PUBSUB_OUTPUT_LIMIT_BYTES: usize = 32 * 1024 * 1024;

/// About how many bytes a message takes on the wire (its strings and their headers).
pub fn message_bytes(message: &Reply) -> usize {
    match message {
        Reply::Array(parts) => 16 + parts.iter().map(message_bytes).sum::<usize>(),
        Reply::Bulk(bytes) => 16 + bytes.len(),
        _ => 16,
    }
}

/// The server's side: which clients listen to each channel, pattern and shard channel, and the
/// messages published for them and not yet taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Registry {
    channels: BTreeMap<Vec<u8>, BTreeSet<u64>>,
    patterns: BTreeMap<Vec<u8>, BTreeSet<u64>>,
    shards: BTreeMap<Vec<u8>, BTreeSet<u64>>,
    /// `(client id, message)` in the order they were published.
    deliveries: Vec<(u64, Reply)>,
    /// The bytes of each client's messages in `deliveries`: past the output limit a client is
    /// left no more (it is still counted, as Redis counts a client it is about to close).
    waiting_bytes: BTreeMap<u64, usize>,
}

impl Registry {
    fn map(&mut self, kind: Kind) -> &mut BTreeMap<Vec<u8>, BTreeSet<u64>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }

    fn leave(&mut self, kind: Kind, name: &[u8], client: u64) {
        let map = self.map(kind);
        if let Some(clients) = map.get_mut(name) {
            clients.remove(&client);
            if clients.is_empty() {
                map.remove(name);
            }
        }
    }
}

/// The server's subscribers: none in the model checker (a null pointer, not hashed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PubSub(Option<Box<Registry>>);

impl Hash for PubSub {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if let Some(registry) = &self.0 {
            registry.hash(state);
        }
    }
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

/// How many, as a reply.
fn integer(count: usize) -> Reply {
    Reply::Integer(i64::try_from(count).unwrap_or(i64::MAX))
}

/// `PUBSUB HELP`'s lines (Redis 7.0.15).
const PUBSUB_HELP: [&str; 14] = [
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
];

/// The error `PUBSUB` gives itself for a subcommand with arguments it does not take.
fn pubsub_usage_error(subcommand: &[u8]) -> Reply {
    Reply::Error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
        String::from_utf8_lossy(subcommand)
    ))
}

/// The error a subscribed RESP2 connection gets for any other command (`processCommand`),
/// `fullname` as the command table names it (`client|id` for a subcommand).
pub(super) fn subscribed_context_error(fullname: &str) -> Reply {
    Reply::Error(format!(
        "ERR Can't execute '{fullname}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / \
         RESET are allowed in this context"
    ))
}

/// The commands a subscribed RESP2 connection may still send (`QUIT` never reaches the model).
pub(super) const ALLOWED_WHILE_SUBSCRIBED: [&str; 9] = [
    "ping",
    "subscribe",
    "ssubscribe",
    "unsubscribe",
    "sunsubscribe",
    "psubscribe",
    "punsubscribe",
    "quit",
    "reset",
];

/// `PING [message]` on a subscribed RESP2 connection: `pong` and the message (empty without;
/// more than one argument is `pingCommand`'s arity error, as on any connection).
pub(super) fn subscribed_ping(argv: &[Vec<u8>]) -> Reply {
    if argv.len() > 2 {
        return wrong_arity_error("ping");
    }
    Reply::Array(vec![
        bulk("pong"),
        Reply::Bulk(argv.get(1).cloned().unwrap_or_default()),
    ])
}

impl Redis {
    /// A `(P|S)SUBSCRIBE` or `(P|S)UNSUBSCRIBE` (arity checked) on `session`: one confirmation
    /// per channel, as one array.
    pub(super) fn subscription(&mut self, session: &mut Session, argv: &[Vec<u8>]) -> Reply {
        let lower = argv[0].to_ascii_lowercase();
        let (kind, subscribe) = Kind::of(&lower).expect("a subscription command");
        let client = session.pubsub.client();
        let subscriber = session
            .pubsub
            .0
            .get_or_insert_with(Box::<Subscriber>::default);
        let mut replies = Vec::new();
        let names: Vec<Vec<u8>> = if subscribe || argv.len() > 1 {
            argv[1..].to_vec()
        } else {
            subscriber.list(kind).clone()
        };
        if names.is_empty() {
            // `UNSUBSCRIBE` with nothing to leave: one confirmation without a channel.
            return Reply::Array(vec![Reply::Array(vec![
                bulk(kind.word(false)),
                Reply::Nil,
                Reply::Integer(subscriber.count(kind)),
            ])]);
        }
        for name in names {
            let list = subscriber.list(kind);
            let at = list.iter().position(|held| *held == name);
            match (subscribe, at) {
                (true, None) => {
                    list.push(name.clone());
                    if let Some(client) = client {
                        let registry = self.pubsub.0.get_or_insert_with(Box::default);
                        registry
                            .map(kind)
                            .entry(name.clone())
                            .or_default()
                            .insert(client);
                    }
                }
                (false, Some(at)) => {
                    list.remove(at);
                    if let (Some(client), Some(registry)) = (client, self.pubsub.0.as_mut()) {
                        registry.leave(kind, &name, client);
                    }
                }
                _ => {}
            }
            replies.push(Reply::Array(vec![
                bulk(kind.word(subscribe)),
                Reply::Bulk(name),
                Reply::Integer(subscriber.count(kind)),
            ]));
        }
        Reply::Array(replies)
    }

    /// Leaves every subscription of `session` without a confirmation (`RESET`).
    pub(super) fn unsubscribe_all(&mut self, session: &mut Session) {
        let Some(subscriber) = session.pubsub.0.as_mut() else {
            return;
        };
        if let (Some(client), Some(registry)) = (subscriber.client, self.pubsub.0.as_mut()) {
            for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
                for name in subscriber.list(kind).iter() {
                    registry.leave(kind, name, client);
                }
            }
        }
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            subscriber.list(kind).clear();
        }
    }

    /// Forgets the connection `client` in every subscription (it closed).
    pub fn end_client(&mut self, client: u64) {
        let Some(registry) = self.pubsub.0.as_mut() else {
            return;
        };
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            registry.map(kind).retain(|_, clients| {
                clients.remove(&client);
                !clients.is_empty()
            });
        }
        registry.deliveries.retain(|(to, _)| *to != client);
        registry.waiting_bytes.remove(&client);
    }

    /// The messages published since the last call: `(client id, message)`, in order, for the
    /// serving connections to push.
    pub fn take_deliveries(&mut self) -> Vec<(u64, Reply)> {
        match self.pubsub.0.as_mut() {
            Some(registry) => {
                registry.waiting_bytes.clear();
                std::mem::take(&mut registry.deliveries)
            }
            None => Vec::new(),
        }
    }

    /// `PUBLISH channel message` (`shard`: `SPUBLISH`): one message for each subscriber of the
    /// channel and each (subscriber, pattern) that matches it; the count of them.
    pub(super) fn publish(&mut self, channel: &[u8], message: &[u8], shard: bool) -> Reply {
        let Some(registry) = self.pubsub.0.as_mut() else {
            return Reply::Integer(0);
        };
        let mut delivered = Vec::new();
        let (map, word) = if shard {
            (&registry.shards, "smessage")
        } else {
            (&registry.channels, "message")
        };
        for client in map.get(channel).into_iter().flatten() {
            let pushed = vec![
                bulk(word),
                Reply::Bulk(channel.to_vec()),
                Reply::Bulk(message.to_vec()),
            ];
            delivered.push((*client, Reply::Array(pushed)));
        }
        if !shard {
            for (pattern, clients) in &registry.patterns {
                if !glob::matches(pattern, channel) {
                    continue;
                }
                for client in clients {
                    let pushed = vec![
                        bulk("pmessage"),
                        Reply::Bulk(pattern.clone()),
                        Reply::Bulk(channel.to_vec()),
                        Reply::Bulk(message.to_vec()),
                    ];
                    delivered.push((*client, Reply::Array(pushed)));
                }
            }
        }
        let count = delivered.len();
        for (client, message) in delivered {
            let waiting = registry.waiting_bytes.entry(client).or_insert(0);
            if *waiting <= PUBSUB_OUTPUT_LIMIT_BYTES {
                *waiting += message_bytes(&message);
                registry.deliveries.push((client, message));
            }
        }
        integer(count)
    }

    /// `PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP` (arity checked).
    pub(super) fn pubsub_command(&self, argv: &[Vec<u8>]) -> Reply {
        let empty = Registry::default();
        let registry = self.pubsub.0.as_deref().unwrap_or(&empty);
        let sub = argv[1].to_ascii_lowercase();
        match sub.as_slice() {
            b"channels" | b"shardchannels" => {
                if argv.len() > 3 {
                    return pubsub_usage_error(&argv[1]);
                }
                let map = if sub == b"channels" {
                    &registry.channels
                } else {
                    &registry.shards
                };
                Reply::Array(
                    map.keys()
                        .filter(|channel| argv.len() < 3 || glob::matches(&argv[2], channel))
                        .map(|channel| Reply::Bulk(channel.clone()))
                        .collect(),
                )
            }
            b"numsub" | b"shardnumsub" => {
                let map = if sub == b"numsub" {
                    &registry.channels
                } else {
                    &registry.shards
                };
                let mut pairs = Vec::new();
                for channel in &argv[2..] {
                    pairs.push(Reply::Bulk(channel.clone()));
                    pairs.push(integer(map.get(channel).map_or(0, BTreeSet::len)));
                }
                Reply::Array(pairs)
            }
            b"numpat" => integer(registry.patterns.len()),
            b"help" => Reply::Array(
                PUBSUB_HELP
                    .iter()
                    .map(|line| Reply::Status((*line).to_string()))
                    .collect(),
            ),
            _ => unreachable!("the command table knows no other PUBSUB subcommand"),
        }
    }

    /// Forgets every subscriber (a restart drops every connection).
    pub(super) fn forget_subscribers(&mut self) {
        self.pubsub = PubSub::default();
    }
}
