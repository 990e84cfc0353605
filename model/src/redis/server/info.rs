//! `INFO [section ...]` laid out as Redis 7.0's `genRedisInfoString` lays it out: the same
//! sections in the same order, each a `# Name` line and its `field:value` lines, a blank line
//! between sections, every line ending in CRLF. A client reads it on connecting (ioredis waits
//! for `loading:0` before its first command; others read `redis_version` or `role`).
//!
//! The stand-in fills only the fields whose value it knows as the real server would: the
//! version, mode, clock and `hz` of the server, `loading`, the role, whether cluster mode is on,
//! and each database's key counts. The other sections are there with their headers and no fields
//! (a real server's connection, memory, CPU and command statistics describe a process the
//! stand-in is not); `avg_ttl` is 0, which Redis reports until its active expiry has sampled.

use super::{Redis, Role, REDIS_VERSION};
use crate::redis::command::is_option;
use crate::redis::reply::Reply;

/// The keyspace section's field for each database.
const DB_NAMES: [&str; super::DATABASES as usize] = [
    "db0", "db1", "db2", "db3", "db4", "db5", "db6", "db7", "db8", "db9", "db10", "db11", "db12",
    "db13", "db14", "db15",
];

/// The sections in Redis 7.0's order, with whether `INFO` without arguments (or `default`)
/// includes them. `all` is every one; `everything` adds modules' own sections (there are none).
const SECTIONS: [(&str, &str, bool); 13] = [
    ("server", "Server", true),
    ("clients", "Clients", true),
    ("memory", "Memory", true),
    ("persistence", "Persistence", true),
    ("stats", "Stats", true),
    ("replication", "Replication", true),
    ("cpu", "CPU", true),
    ("modules", "Modules", true),
    ("commandstats", "Commandstats", false),
    ("errorstats", "Errorstats", true),
    ("latencystats", "Latencystats", false),
    ("cluster", "Cluster", true),
    ("keyspace", "Keyspace", true),
];

impl Redis {
    /// `INFO [section ...]`: the named sections (any case; `default`, `all` and `everything`
    /// name groups), in Redis's order whatever the order asked; an unknown name adds nothing,
    /// so only unknown names give an empty string.
    pub(super) fn info(&self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let asked = &argv[1..];
        let wanted = |name: &str, default: bool| -> bool {
            if asked.is_empty() {
                return default;
            }
            asked.iter().any(|arg| {
                is_option(arg, name)
                    || is_option(arg, "all")
                    || is_option(arg, "everything")
                    || (default && is_option(arg, "default"))
            })
        };
        let mut text = String::new();
        for (name, title, default) in SECTIONS {
            if !wanted(name, default) {
                continue;
            }
            if !text.is_empty() {
                text.push_str("\r\n");
            }
            text.push_str("# ");
            text.push_str(title);
            text.push_str("\r\n");
            for (field, value) in self.info_fields(name, now_ms) {
                text.push_str(field);
                text.push(':');
                text.push_str(&value);
                text.push_str("\r\n");
            }
        }
        Reply::Bulk(text.into_bytes())
    }

    /// The fields of one section that the stand-in knows.
    fn info_fields(&self, section: &str, now_ms: u64) -> Vec<(&'static str, String)> {
        match section {
            "server" => vec![
                ("redis_version", REDIS_VERSION.to_string()),
                (
                    "redis_mode",
                    if self.cluster_mode {
                        "cluster"
                    } else {
                        "standalone"
                    }
                    .to_string(),
                ),
                ("arch_bits", "64".to_string()),
                ("server_time_usec", now_ms.saturating_mul(1_000).to_string()),
                ("hz", "10".to_string()),
                ("configured_hz", "10".to_string()),
            ],
            "persistence" => vec![
                ("loading", "0".to_string()),
                ("async_loading", "0".to_string()),
            ],
            "replication" => vec![(
                "role",
                match self.role {
                    Role::Primary => "master",
                    Role::Replica => "slave",
                }
                .to_string(),
            )],
            "cluster" => vec![("cluster_enabled", u8::from(self.cluster_mode).to_string())],
            "keyspace" => self
                .databases()
                .filter_map(|(db, keyspace)| {
                    let (mut keys, mut expires) = (0_u64, 0_u64);
                    for entry in keyspace.values() {
                        if entry.is_expired_at(now_ms) {
                            continue;
                        }
                        keys += 1;
                        expires += u64::from(entry.expire_at_ms.is_some());
                    }
                    (keys > 0).then(|| {
                        (
                            DB_NAMES[usize::from(db)],
                            format!("keys={keys},expires={expires},avg_ttl=0"),
                        )
                    })
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::redis::reply::Reply;
    use crate::redis::Redis;

    fn run(redis: &mut Redis, words: &[&str], now_ms: u64) -> Reply {
        let argv: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        redis.execute(&argv, now_ms)
    }

    fn text(reply: Reply) -> String {
        match reply {
            Reply::Bulk(bytes) => String::from_utf8(bytes).expect("INFO is text"),
            other => panic!("INFO answers a bulk string, not {other:?}"),
        }
    }

    #[test]
    fn info_lays_out_sections_in_redis_order_with_crlf_lines() {
        let mut redis = Redis::new();
        let all = text(run(&mut redis, &["INFO"], 1_500));
        let headers: Vec<&str> = all.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headers,
            [
                "# Server",
                "# Clients",
                "# Memory",
                "# Persistence",
                "# Stats",
                "# Replication",
                "# CPU",
                "# Modules",
                "# Errorstats",
                "# Cluster",
                "# Keyspace"
            ]
        );
        assert!(
            all.starts_with("# Server\r\nredis_version:7.0.15\r\n"),
            "{all:?}"
        );
        assert!(all.contains("server_time_usec:1500000\r\n"), "{all:?}");
        assert!(
            all.contains("\r\n\r\n# Persistence\r\nloading:0\r\n"),
            "{all:?}"
        );
        assert!(
            all.ends_with("# Keyspace\r\n"),
            "an empty keyspace lists no database"
        );
        assert_eq!(
            all.matches('\n').count(),
            all.matches("\r\n").count(),
            "CRLF lines"
        );
    }

    #[test]
    fn info_sections_are_chosen_by_name_in_any_case_and_kept_in_order() {
        let mut redis = Redis::new();
        run(&mut redis, &["SET", "a", "1"], 0);
        run(&mut redis, &["SET", "b", "1", "PX", "10"], 0);
        run(&mut redis, &["HSET", "h", "f", "v"], 0);
        assert_eq!(
            text(run(&mut redis, &["INFO", "KEYSPACE", "replication"], 5)),
            "# Replication\r\nrole:master\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\n"
        );
        assert_eq!(
            text(run(&mut redis, &["info", "keyspace"], 11)),
            "# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n",
            "a key past its deadline is not counted"
        );
        assert_eq!(text(run(&mut redis, &["INFO", "nosuch"], 0)), "");
        let everything = text(run(&mut redis, &["INFO", "everything"], 0));
        assert!(everything.contains("# Commandstats\r\n\r\n# Errorstats\r\n\r\n# Latencystats"));
        assert_eq!(
            everything,
            text(run(&mut redis, &["INFO", "all"], 0)),
            "no module adds a section"
        );
        assert_eq!(
            text(run(&mut redis, &["INFO", "default"], 0)),
            text(run(&mut redis, &["INFO"], 0))
        );
    }
}
