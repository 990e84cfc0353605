//! Lists, sets and sorted sets: the commands lock libraries and queues built on Redis use
//! beyond strings and hashes (Redisson's fair lock keeps its queue in a list and its
//! timeouts in a sorted set; semaphores and rate limiters use sorted sets). Each follows Redis
//! 7.0's `t_list.c`, `t_set.c` and `t_zset.c`: the order in which arguments are read, the key
//! looked up and its type checked decides which error a bad call gets, and a key is only
//! counted as modified (for `WATCH`) when Redis would signal it.
//!
//! A collection is changed where it is stored (a push onto a long list costs one element, not
//! a copy of the list); a primary that feeds replicas records the whole collection after each
//! change.
//!
//! Sets of keys: `SINTER`, `SUNION`, `SDIFF`, their `...STORE` forms and `SINTERCARD`; `LPOS`.
//! A hash's, set's or sorted set's elements: `HSCAN`, `SSCAN`, `ZSCAN`.
//!
//! Random picks from a set: `SPOP`, `SRANDMEMBER` (see [`Draws`] for how they pick).
//!
//! Not here: blocking pops, the sorted-set forms of the above (`ZUNION`, ...) and
//! `ZRANDMEMBER`: they get Redis's unknown command error.

use std::collections::{BTreeSet, VecDeque};
use std::hash::Hasher;
use std::sync::Arc;

use super::{Entry, Redis, Role, WRONGTYPE_ERROR};
use crate::fingerprint::FingerprintHasher;
use crate::redis::collection::{
    format_g17, parse_score, set_members_order, Collection, Score, ScoreBound, SortedSet,
};
use crate::redis::command::{integer_arg, wrong_arity_error, SYNTAX_ERROR};
use crate::redis::replication::Effect;
use crate::redis::reply::Reply;

type List = VecDeque<Vec<u8>>;
type Set = BTreeSet<Vec<u8>>;

/// `getPositiveLongFromObjectOrReply` with no message of its own.
const NOT_POSITIVE_ERROR: &str = "ERR value is out of range, must be positive";
const NOT_A_FLOAT_ERROR: &str = "ERR value is not a valid float";
const RANGE_NOT_A_FLOAT_ERROR: &str = "ERR min or max is not a float";
const LEX_RANGE_ERROR: &str = "ERR min or max not valid string range item";
const NAN_ERROR: &str = "ERR resulting score is not a number (NaN)";

fn as_list(c: &mut Collection) -> Option<&mut List> {
    match c {
        Collection::List(list) => Some(list),
        _ => None,
    }
}

fn as_set(c: &mut Collection) -> Option<&mut Set> {
    match c {
        Collection::Set(set) => Some(set),
        _ => None,
    }
}

fn as_zset(c: &mut Collection) -> Option<&mut SortedSet> {
    match c {
        Collection::SortedSet(members) => Some(members),
        _ => None,
    }
}

impl Redis {
    /// Runs a list, set or sorted-set command (argv checked against the command table).
    pub(super) fn collection_command(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let name = argv[0].to_ascii_lowercase();
        let outcome = match name.as_slice() {
            b"lpush" | b"rpush" | b"lpushx" | b"rpushx" => self.push(&name, argv, now_ms),
            b"lpop" | b"rpop" => self.pop(&name, argv, now_ms),
            b"blpop" | b"brpop" | b"bzpopmin" | b"bzpopmax" => {
                self.blocking_pop(&name, argv, now_ms)
            }
            b"llen" => self
                .typed(&argv[1], now_ms, None, as_list)
                .map(|found| Reply::Integer(found.map_or(0, |list| length(list.len())))),
            b"lindex" => self.lindex(argv, now_ms),
            b"lrange" => self.lrange(argv, now_ms),
            b"lrem" => self.lrem(argv, now_ms),
            b"lset" => self.lset(argv, now_ms),
            b"ltrim" => self.ltrim(argv, now_ms),
            b"linsert" => self.linsert(argv, now_ms),
            b"sadd" => self.sadd(argv, now_ms),
            b"srem" => self.srem(argv, now_ms),
            b"sismember" => self.typed(&argv[1], now_ms, None, as_set).map(|found| {
                Reply::Integer(i64::from(found.is_some_and(|set| set.contains(&argv[2]))))
            }),
            b"smismember" => self.typed(&argv[1], now_ms, None, as_set).map(|found| {
                Reply::Array(
                    argv[2..]
                        .iter()
                        .map(|m| {
                            Reply::Integer(i64::from(
                                found.as_ref().is_some_and(|set| set.contains(m)),
                            ))
                        })
                        .collect(),
                )
            }),
            b"smembers" => self.typed(&argv[1], now_ms, None, as_set).map(|found| {
                let members = found.map(|set| set_members_order(set)).unwrap_or_default();
                Reply::Array(members.into_iter().map(Reply::Bulk).collect())
            }),
            b"scard" => self
                .typed(&argv[1], now_ms, None, as_set)
                .map(|found| Reply::Integer(found.map_or(0, |set| length(set.len())))),
            b"spop" => self.spop(argv, now_ms),
            b"srandmember" => self.srandmember(argv, now_ms),
            b"zadd" => self.zadd(argv, false, now_ms),
            b"zincrby" => self.zadd(argv, true, now_ms),
            b"zrem" => self.zrem(argv, now_ms),
            b"zscore" => self
                .typed(&argv[1], now_ms, None, as_zset)
                .map(|found| found.map_or(Reply::Nil, |members| score_reply(members, &argv[2]))),
            b"zmscore" => self.typed(&argv[1], now_ms, None, as_zset).map(|found| {
                Reply::Array(
                    argv[2..]
                        .iter()
                        .map(|m| {
                            found
                                .as_ref()
                                .map_or(Reply::Nil, |members| score_reply(members, m))
                        })
                        .collect(),
                )
            }),
            b"zcard" => self
                .typed(&argv[1], now_ms, None, as_zset)
                .map(|found| Reply::Integer(found.map_or(0, |members| length(members.len())))),
            b"zcount" => self.zcount(argv, now_ms),
            b"zrank" | b"zrevrank" => self.typed(&argv[1], now_ms, None, as_zset).map(|found| {
                let Some(members) = found else {
                    return Reply::Nil;
                };
                match members.rank(&argv[2]) {
                    Some(at) if name == b"zrank" => Reply::Integer(length(at)),
                    Some(at) => Reply::Integer(length(members.len() - 1 - at)),
                    None => Reply::Nil,
                }
            }),
            b"zrange" => self.zrange(argv, RangeBy::Auto, Direction::Auto, now_ms),
            b"zrevrange" => self.zrange(argv, RangeBy::Rank, Direction::Reverse, now_ms),
            b"zrangebyscore" => self.zrange(argv, RangeBy::Score, Direction::Forward, now_ms),
            b"zrevrangebyscore" => self.zrange(argv, RangeBy::Score, Direction::Reverse, now_ms),
            b"zrangebylex" => self.zrange(argv, RangeBy::Lex, Direction::Forward, now_ms),
            b"zrevrangebylex" => self.zrange(argv, RangeBy::Lex, Direction::Reverse, now_ms),
            b"zlexcount" => self.zlexcount(argv, now_ms),
            b"rpoplpush" => self.lmove(&argv[1], &argv[2], false, true, now_ms),
            b"brpoplpush" | b"blmove" => self.blocking_move(&name, argv, now_ms),
            b"lmove" => match (list_end(&argv[3]), list_end(&argv[4])) {
                (Ok(from_head), Ok(to_head)) => {
                    self.lmove(&argv[1], &argv[2], from_head, to_head, now_ms)
                }
                (Err(error), _) | (_, Err(error)) => Err(error),
            },
            b"smove" => self.smove(argv, now_ms),
            b"hscan" | b"sscan" | b"zscan" => Ok(self.scan_elements(&name, argv, now_ms)),
            b"lpos" => self.lpos(argv, now_ms),
            b"sintercard" => self.sintercard(argv, now_ms),
            b"sinter" | b"sunion" | b"sdiff" | b"sinterstore" | b"sunionstore" | b"sdiffstore" => {
                self.set_algebra(&name, argv, now_ms)
            }
            b"zremrangebyscore" | b"zremrangebyrank" | b"zremrangebylex" => {
                self.zremrange(&name, argv, now_ms)
            }
            b"zpopmin" | b"zpopmax" => self.zpop(&name, argv, now_ms),
            _ => unreachable!("not a collection command"),
        };
        outcome.unwrap_or_else(|error| error)
    }

    // ----- typed access ----------------------------------------------------------------

    /// The collection `key` holds, in place, after lazy expiry: `None` when the key is missing
    /// (an empty one is stored first when `create` says what to make), `WRONGTYPE` when it
    /// holds another type. A caller that changes it calls [`Redis::collection_written`].
    fn typed<T>(
        &mut self,
        key: &[u8],
        now_ms: u64,
        create: Option<fn() -> Collection>,
        pick: fn(&mut Collection) -> Option<&mut T>,
    ) -> Result<Option<&mut T>, Reply> {
        self.expire_if_needed(key, now_ms);
        if self.visible(key, now_ms).is_none() {
            let Some(create) = create else {
                return Ok(None);
            };
            debug_assert_eq!(self.role, Role::Primary, "only a primary writes keys");
            let entry = Entry {
                value: Vec::new(),
                expire_at_ms: None,
                collection: Some(create()),
            };
            self.keyspace.insert(Arc::from(key), entry);
        }
        let entry = self
            .keyspace
            .get_mut(key)
            .expect("present: looked up above");
        match entry.collection.as_mut().and_then(pick) {
            Some(found) => Ok(Some(found)),
            None => Err(Reply::error(WRONGTYPE_ERROR)),
        }
    }

    /// After a change made in place: the key counts as written (`WATCH`), replicas get the
    /// whole collection, and an emptied one is deleted (Redis keeps no empty collection).
    pub(super) fn collection_written(&mut self, key: &[u8]) {
        let entry = self.keyspace.get(key).expect("a collection just changed");
        if entry.collection.as_ref().is_none_or(Collection::is_empty) {
            self.delete_key(key);
            return;
        }
        let effect = (self.role == Role::Primary && self.recording.0).then(|| Effect::Collection {
            key: key.to_vec(),
            value: entry.collection.clone().expect("a collection"),
            expire_at_ms: entry.expire_at_ms,
            db: self.selected.0,
        });
        self.touch(key);
        self.effects.extend(effect);
    }

    // ----- lists -------------------------------------------------------------------------

    /// `LPUSH`/`RPUSH`/`LPUSHX`/`RPUSHX`: the new length (0 for `..X` on a missing key).
    fn push(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let head = name.starts_with(b"l");
        let only_existing = name.ends_with(b"x");
        let create = (!only_existing).then_some(new_list as fn() -> Collection);
        let Some(list) = self.typed(&argv[1], now_ms, create, as_list)? else {
            return Ok(Reply::Integer(0));
        };
        for element in &argv[2..] {
            if head {
                list.push_front(element.clone());
            } else {
                list.push_back(element.clone());
            }
        }
        let len = length(list.len());
        self.collection_written(&argv[1]);
        Ok(Reply::Integer(len))
    }

    /// `LPOP`/`RPOP key [count]`: one element, or an array of up to `count`.
    fn pop(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let fullname = if name == b"lpop" { "lpop" } else { "rpop" };
        if argv.len() > 3 {
            return Err(wrong_arity_error(fullname));
        }
        let count = argv.get(2).map(|arg| positive_arg(arg)).transpose()?;
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(if count.is_some() {
                Reply::NilArray
            } else {
                Reply::Nil
            });
        };
        if count == Some(0) {
            return Ok(Reply::Array(Vec::new()));
        }
        let taken = usize::try_from(count.unwrap_or(1))
            .unwrap_or(usize::MAX)
            .min(list.len());
        let popped: Vec<Vec<u8>> = if fullname == "lpop" {
            list.drain(..taken).collect()
        } else {
            list.drain(list.len() - taken..).rev().collect()
        };
        self.collection_written(&argv[1]);
        Ok(match count {
            None => Reply::Bulk(popped.into_iter().next().expect("a list is never empty")),
            Some(_) => Reply::Array(popped.into_iter().map(Reply::Bulk).collect()),
        })
    }

    /// `BLPOP`/`BRPOP`/`BZPOPMIN`/`BZPOPMAX key [key ...] timeout` as they run at once
    /// (`blockingPopGenericCommand`, `blockingGenericZpopCommand`): the timeout is read first;
    /// then the first key (in the order given) holding a non-empty list (a sorted set) gives
    /// up one element, answered as `[key, element]` (`[key, member, score]`); a key holding
    /// another type is `WRONGTYPE` when it is reached. When every key is missing, the command
    /// answers a nil array here, which is what it answers inside `MULTI`; a server that serves
    /// connections blocks the connection instead until an element comes or the timeout
    /// passes.
    fn blocking_pop(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let timeout = argv.last().expect("the arity check leaves a timeout");
        crate::redis::command::blocking_deadline_ms(timeout, now_ms)?;
        for key in &argv[1..argv.len() - 1] {
            let popped = match name {
                b"blpop" | b"brpop" => {
                    let Some(list) = self.typed(key, now_ms, None, as_list)? else {
                        continue;
                    };
                    let element = if name == b"blpop" {
                        list.pop_front()
                    } else {
                        list.pop_back()
                    };
                    vec![Reply::Bulk(element.expect("a list is never empty"))]
                }
                _ => {
                    let Some(members) = self.typed(key, now_ms, None, as_zset)? else {
                        continue;
                    };
                    let (score, member) = members
                        .pop(name == b"bzpopmin")
                        .expect("a sorted set is never empty");
                    vec![Reply::Bulk(member), Reply::Bulk(score.text())]
                }
            };
            self.collection_written(key);
            let mut reply = vec![Reply::Bulk(key.clone())];
            reply.extend(popped);
            return Ok(Reply::Array(reply));
        }
        Ok(Reply::NilArray)
    }

    /// `BRPOPLPUSH source destination timeout` and `BLMOVE source destination from to timeout`
    /// run at once (`blmoveGenericCommand`): the ends read first (`BLMOVE`), then the timeout;
    /// an empty source answers nil without looking at the destination (a connection outside
    /// `MULTI` then blocks, see `sim/src/redis_server.rs`), else it is `LMOVE`.
    fn blocking_move(
        &mut self,
        name: &[u8],
        argv: &[Vec<u8>],
        now_ms: u64,
    ) -> Result<Reply, Reply> {
        let (from_head, to_head) = if name == b"blmove" {
            (list_end(&argv[3])?, list_end(&argv[4])?)
        } else {
            (false, true)
        };
        let timeout = argv.last().expect("the arity check leaves a timeout");
        crate::redis::command::blocking_deadline_ms(timeout, now_ms)?;
        self.lmove(&argv[1], &argv[2], from_head, to_head, now_ms)
    }

    /// `LINDEX key index`: the key is looked up before the index is read.
    fn lindex(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(Reply::Nil);
        };
        let index = integer_arg(&argv[2])?;
        Ok(match list_index(list.len(), index) {
            Some(at) => Reply::Bulk(list[at].clone()),
            None => Reply::Nil,
        })
    }

    /// `LRANGE key start stop`.
    fn lrange(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let start = integer_arg(&argv[2])?;
        let stop = integer_arg(&argv[3])?;
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let range = index_range(list.len(), start, stop).unwrap_or(0..0);
        Ok(Reply::Array(
            list.range(range).cloned().map(Reply::Bulk).collect(),
        ))
    }

    /// `LREM key count element`: from the head for a positive count, the tail for a negative
    /// one, every match for 0.
    fn lrem(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let count = integer_arg(&argv[2])?;
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(Reply::Integer(0));
        };
        let limit = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        let mut removed = 0usize;
        let mut keep = |element: &Vec<u8>| {
            let take = *element == argv[3] && (limit == 0 || removed < limit);
            if take {
                removed += 1;
            }
            !take
        };
        if count < 0 {
            let mut kept: List = list.iter().rev().filter(|e| keep(e)).cloned().collect();
            kept.make_contiguous().reverse();
            *list = kept;
        } else {
            list.retain(|e| keep(e));
        }
        if removed > 0 {
            self.collection_written(&argv[1]);
        }
        Ok(Reply::Integer(length(removed)))
    }

    /// `LSET key index element`.
    fn lset(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Err(Reply::error("ERR no such key"));
        };
        let index = integer_arg(&argv[2])?;
        let Some(at) = list_index(list.len(), index) else {
            return Err(Reply::error("ERR index out of range"));
        };
        list[at] = argv[3].clone();
        self.collection_written(&argv[1]);
        Ok(Reply::ok())
    }

    /// `LTRIM key start stop`: keeps the range; an existing key counts as modified even when
    /// nothing was removed (as in Redis).
    fn ltrim(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let start = integer_arg(&argv[2])?;
        let stop = integer_arg(&argv[3])?;
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(Reply::ok());
        };
        match index_range(list.len(), start, stop) {
            Some(range) => {
                list.truncate(range.end);
                list.drain(..range.start);
            }
            None => list.clear(),
        }
        self.collection_written(&argv[1]);
        Ok(Reply::ok())
    }

    /// `LINSERT key BEFORE|AFTER pivot element`: the new length, -1 without the pivot.
    fn linsert(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let after = if argv[2].eq_ignore_ascii_case(b"after") {
            true
        } else if argv[2].eq_ignore_ascii_case(b"before") {
            false
        } else {
            return Err(Reply::error(SYNTAX_ERROR));
        };
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(Reply::Integer(0));
        };
        let Some(at) = list.iter().position(|element| *element == argv[3]) else {
            return Ok(Reply::Integer(-1));
        };
        list.insert(if after { at + 1 } else { at }, argv[4].clone());
        let len = length(list.len());
        self.collection_written(&argv[1]);
        Ok(Reply::Integer(len))
    }

    /// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT` and `RPOPLPUSH source destination`:
    /// the element moved (nil when the source is missing). The destination's type is checked
    /// before anything moves; the same key rotates its list.
    fn lmove(
        &mut self,
        source: &[u8],
        destination: &[u8],
        from_head: bool,
        to_head: bool,
        now_ms: u64,
    ) -> Result<Reply, Reply> {
        if self.typed(source, now_ms, None, as_list)?.is_none() {
            return Ok(Reply::Nil);
        }
        self.typed(destination, now_ms, None, as_list)?;
        let list = self
            .typed(source, now_ms, None, as_list)?
            .expect("looked up above");
        let value = if from_head {
            list.pop_front()
        } else {
            list.pop_back()
        }
        .expect("a list is never empty");
        let target = self
            .typed(destination, now_ms, Some(new_list), as_list)?
            .expect("created when missing");
        if to_head {
            target.push_front(value.clone());
        } else {
            target.push_back(value.clone());
        }
        self.collection_written(destination);
        if source != destination {
            self.collection_written(source);
        }
        Ok(Reply::Bulk(value))
    }

    // ----- sets --------------------------------------------------------------------------

    /// `SADD key member...`: how many were new.
    fn sadd(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let set = self
            .typed(&argv[1], now_ms, Some(new_set), as_set)?
            .expect("created when missing");
        let added = argv[2..]
            .iter()
            .filter(|member| set.insert((*member).clone()))
            .count();
        if added > 0 {
            self.collection_written(&argv[1]);
        }
        Ok(Reply::Integer(length(added)))
    }

    /// `SMOVE source destination member`: 1 when moved (or, on one key, when it is there).
    fn smove(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let (source, destination, member) = (&argv[1], &argv[2], &argv[3]);
        // Redis looks both up first and answers 0 for a missing source before any type check.
        self.expire_if_needed(source, now_ms);
        self.expire_if_needed(destination, now_ms);
        if self.visible(source, now_ms).is_none() {
            return Ok(Reply::Integer(0));
        }
        self.typed(source, now_ms, None, as_set)?;
        self.typed(destination, now_ms, None, as_set)?;
        let set = self
            .typed(source, now_ms, None, as_set)?
            .expect("looked up above");
        if source == destination {
            return Ok(Reply::Integer(i64::from(set.contains(member))));
        }
        if !set.remove(member) {
            return Ok(Reply::Integer(0));
        }
        self.collection_written(source);
        let target = self
            .typed(destination, now_ms, Some(new_set), as_set)?
            .expect("created when missing");
        if target.insert(member.clone()) {
            self.collection_written(destination);
        }
        Ok(Reply::Integer(1))
    }

    /// `SINTER`/`SUNION`/`SDIFF key...` and `SINTERSTORE`/`SUNIONSTORE`/`SDIFFSTORE
    /// destination key...` (Redis 7.0's `sinterGenericCommand` and
    /// `sunionDiffGenericCommand`): every key is looked up and type-checked in order (a
    /// missing key is an empty set); the result is answered as a set's members, or stored in
    /// `destination` (replacing whatever it held, with no TTL; deleted when empty) and its size
    /// answered.
    /// `LPOS key element [RANK r] [COUNT n] [MAXLEN m]` (`lposCommand`): options first (`RANK`
    /// not 0, `COUNT` and `MAXLEN` not negative, each with its own message), then the key. The
    /// positions count from the head whichever way the search goes (a negative rank searches
    /// from the tail); without `COUNT` the first match or nil, with it an array (`COUNT 0`:
    /// every match); `MAXLEN` compares at most that many elements.
    fn lpos(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let mut rank: i64 = 1;
        let mut count: Option<i64> = None;
        let mut max_len: i64 = 0;
        let mut j = 3;
        while j < argv.len() {
            let option = argv[j].to_ascii_lowercase();
            let Some(number) = argv.get(j + 1) else {
                return Err(Reply::error(SYNTAX_ERROR));
            };
            let positive = |message: &str| match integer_arg(number) {
                Ok(n) if n >= 0 => Ok(n),
                _ => Err(Reply::error(format!("ERR {message}"))),
            };
            match option.as_slice() {
                b"rank" => {
                    rank = integer_arg(number)?;
                    if rank == 0 {
                        return Err(Reply::error(
                            "ERR RANK can't be zero: use 1 to start from the first match, 2 \
                             from the second ... or use negative to start from the end of \
                             the list",
                        ));
                    }
                }
                b"count" => count = Some(positive("COUNT can't be negative")?),
                b"maxlen" => max_len = positive("MAXLEN can't be negative")?,
                _ => return Err(Reply::error(SYNTAX_ERROR)),
            }
            j += 2;
        }
        let none = || match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Nil,
        };
        let Some(list) = self.typed(&argv[1], now_ms, None, as_list)? else {
            return Ok(none());
        };
        let from_tail = rank < 0;
        // Redis 7.0 negates the rank in a C long: the most negative one stays negative, so
        // every match is past it (as rank -1) and its count check never stops the search.
        let wraps = rank == i64::MIN;
        let skip = if wraps {
            0
        } else {
            usize::try_from(rank.unsigned_abs() - 1).unwrap_or(usize::MAX)
        };
        let wanted = match count {
            Some(0) => usize::MAX,
            Some(_) if wraps => usize::MAX,
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => 1,
        };
        let compared = match usize::try_from(max_len) {
            Ok(0) | Err(_) => list.len(),
            Ok(m) => m.min(list.len()),
        };
        let last = list.len().saturating_sub(1);
        let positions = (0..compared).map(|i| if from_tail { last - i } else { i });
        let found: Vec<Reply> = positions
            .filter(|&at| list[at] == argv[2])
            .skip(skip)
            .take(wanted)
            .map(|at| Reply::Integer(length(at)))
            .collect();
        Ok(match count {
            Some(_) => Reply::Array(found),
            None => found.into_iter().next().unwrap_or(Reply::Nil),
        })
    }

    /// `HSCAN`, `SSCAN`, `ZSCAN key cursor [MATCH pattern] [COUNT n]`, read in Redis 7.0's
    /// order: the cursor (`invalid cursor`), the key (missing: cursor 0 and nothing, whatever
    /// the options say), its type, then the options (no `TYPE` here). Every element is visited
    /// in one call and the cursor is 0, whatever cursor was given, as Redis answers for a
    /// small collection (a listpack or an intset, which it reads whole from any cursor; a
    /// large one it keeps as a hash table and answers in parts). `MATCH` filters a hash's
    /// fields and a set's or sorted set's members; a hash answers field, value, ... and a
    /// sorted set member, score, ... (scores as `ZSCORE` prints them).
    fn scan_elements(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Reply {
        use crate::redis::server::strings::{empty_scan, scan_cursor, scan_options};
        if scan_cursor(&argv[2]).is_none() {
            return Reply::error("ERR invalid cursor");
        }
        self.expire_if_needed(&argv[1], now_ms);
        let Some(entry) = self.visible(&argv[1], now_ms) else {
            return empty_scan();
        };
        let elements: Vec<(&[u8], Option<Vec<u8>>)> = match (name, entry.collection.as_ref()) {
            (b"hscan", Some(Collection::Hash(fields))) => fields
                .iter()
                .map(|(field, value)| (field.as_slice(), Some(value.clone())))
                .collect(),
            (b"sscan", Some(Collection::Set(members))) => {
                members.iter().map(|m| (m.as_slice(), None)).collect()
            }
            (b"zscan", Some(Collection::SortedSet(members))) => members
                .iter()
                .map(|(score, member)| (member.as_slice(), Some(score.text())))
                .collect(),
            _ => return Reply::error(WRONGTYPE_ERROR),
        };
        let pattern = match scan_options(argv, 3, false) {
            Ok(options) => options.pattern,
            Err(error) => return error,
        };
        let found = elements
            .into_iter()
            .filter(|(element, _)| pattern.is_none_or(|p| crate::redis::glob::matches(p, element)))
            .flat_map(|(element, value)| {
                std::iter::once(Reply::Bulk(element.to_vec())).chain(value.map(Reply::Bulk))
            })
            .collect();
        Reply::Array(vec![Reply::Bulk(b"0".to_vec()), Reply::Array(found)])
    }

    /// `SINTERCARD numkeys key [key ...] [LIMIT limit]` (`sinterCardCommand`): `numkeys` at
    /// least 1 and at most the arguments left, `LIMIT` not negative (0: none); then the keys'
    /// types as `SINTER` checks them; the size of the intersection, at most `limit`.
    fn sintercard(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let numkeys = match integer_arg(&argv[1]) {
            Ok(n) if n >= 1 => n,
            _ => return Err(Reply::error("ERR numkeys should be greater than 0")),
        };
        let available = argv.len() - 2;
        let numkeys = match usize::try_from(numkeys) {
            Ok(n) if n <= available => n,
            _ => {
                return Err(Reply::error(
                    "ERR Number of keys can't be greater than number of args",
                ))
            }
        };
        let mut limit = 0usize;
        let mut j = 2 + numkeys;
        while j < argv.len() {
            match argv.get(j + 1) {
                Some(number) if argv[j].eq_ignore_ascii_case(b"limit") => {
                    limit = match integer_arg(number) {
                        Ok(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
                        _ => return Err(Reply::error("ERR LIMIT can't be negative")),
                    };
                }
                _ => return Err(Reply::error(SYNTAX_ERROR)),
            }
            j += 2;
        }
        let mut sets: Vec<Option<Set>> = Vec::with_capacity(numkeys);
        for key in &argv[2..2 + numkeys] {
            sets.push(
                self.typed(key, now_ms, None, as_set)?
                    .map(|set| set.clone()),
            );
        }
        let Some(present) = sets
            .iter()
            .map(Option::as_ref)
            .collect::<Option<Vec<&Set>>>()
        else {
            return Ok(Reply::Integer(0));
        };
        let (first, rest) = present.split_first().expect("at least one key");
        let mut size = 0usize;
        for member in first.iter() {
            if rest.iter().all(|set| set.contains(member)) {
                size += 1;
                if size == limit {
                    break;
                }
            }
        }
        Ok(Reply::Integer(length(size)))
    }

    fn set_algebra(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let store = name.ends_with(b"store");
        let (destination, keys) = if store {
            (Some(&argv[1]), &argv[2..])
        } else {
            (None, &argv[1..])
        };
        let mut sets: Vec<Option<Set>> = Vec::with_capacity(keys.len());
        for key in keys {
            sets.push(
                self.typed(key, now_ms, None, as_set)?
                    .map(|set| set.clone()),
            );
        }
        let result: Set = if name.starts_with(b"sinter") {
            match sets
                .iter()
                .map(Option::as_ref)
                .collect::<Option<Vec<&Set>>>()
            {
                None => Set::new(),
                Some(present) => {
                    let (first, rest) = present.split_first().expect("at least one key");
                    first
                        .iter()
                        .filter(|member| rest.iter().all(|set| set.contains(*member)))
                        .cloned()
                        .collect()
                }
            }
        } else if name.starts_with(b"sunion") {
            sets.into_iter().flatten().flatten().collect()
        } else {
            let mut sets = sets.into_iter();
            let mut first = sets.next().flatten().unwrap_or_default();
            for other in sets.flatten() {
                first.retain(|member| !other.contains(member));
            }
            first
        };
        let Some(destination) = destination else {
            return Ok(Reply::Array(
                set_members_order(&result)
                    .into_iter()
                    .map(Reply::Bulk)
                    .collect(),
            ));
        };
        let size = length(result.len());
        self.expire_if_needed(destination, now_ms);
        if result.is_empty() {
            if self.keyspace.contains_key(destination.as_slice()) {
                self.delete_key(destination);
            }
            return Ok(Reply::Integer(0));
        }
        debug_assert_eq!(self.role, Role::Primary, "only a primary writes keys");
        self.keyspace.insert(
            Arc::from(destination.as_slice()),
            Entry {
                value: Vec::new(),
                expire_at_ms: None,
                collection: Some(Collection::Set(result)),
            },
        );
        self.collection_written(destination);
        Ok(Reply::Integer(size))
    }

    /// `SREM key member...`: how many were there.
    fn srem(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let Some(set) = self.typed(&argv[1], now_ms, None, as_set)? else {
            return Ok(Reply::Integer(0));
        };
        let removed = argv[2..]
            .iter()
            .filter(|member| set.remove(*member))
            .count();
        if removed > 0 {
            self.collection_written(&argv[1]);
        }
        Ok(Reply::Integer(length(removed)))
    }

    /// `SPOP key [count]`: members taken out at random ([`Draws`]); the key goes when the
    /// last one does. The count is read before the key, as Redis 7.0 reads it.
    fn spop(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        if argv.len() > 3 {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        let count = argv.get(2).map(|arg| positive_arg(arg)).transpose()?;
        let Some(set) = self.typed(&argv[1], now_ms, None, as_set)? else {
            return Ok(match count {
                None => Reply::Nil,
                Some(_) => Reply::Array(Vec::new()),
            });
        };
        if count == Some(0) {
            return Ok(Reply::Array(Vec::new()));
        }
        let wanted = usize::try_from(count.unwrap_or(1)).unwrap_or(usize::MAX);
        let members = set_members_order(set);
        let mut draws = Draws::of(&members, now_ms);
        let popped = draws.distinct(members, wanted);
        for member in &popped {
            set.remove(member);
        }
        self.collection_written(&argv[1]);
        Ok(match count {
            None => Reply::Bulk(popped.into_iter().next().expect("a set is never empty")),
            Some(_) => Reply::Array(popped.into_iter().map(Reply::Bulk).collect()),
        })
    }

    /// `SRANDMEMBER key [count]`: members drawn at random ([`Draws`]); a negative count
    /// draws that many with repeats, a positive one that many distinct (the whole set when it
    /// has no more).
    fn srandmember(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        if argv.len() > 3 {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        let count = match argv.get(2) {
            None => None,
            Some(arg) => match integer_arg(arg)? {
                i64::MIN => {
                    return Err(Reply::error(
                        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                    ))
                }
                n => Some(n),
            },
        };
        if count.is_some_and(|n| n < 0 && n.unsigned_abs() > SRANDMEMBER_REPEATS_LIMIT) {
            return Err(Reply::error(format!(
                "ERR SRANDMEMBER with a count below -{SRANDMEMBER_REPEATS_LIMIT} is more than this stand-in answers"
            )));
        }
        let Some(set) = self.typed(&argv[1], now_ms, None, as_set)? else {
            return Ok(match count {
                None => Reply::Nil,
                Some(_) => Reply::Array(Vec::new()),
            });
        };
        let mut members = set_members_order(set);
        let mut draws = Draws::of(&members, now_ms);
        let Some(count) = count else {
            let at = draws.below(members.len());
            return Ok(Reply::Bulk(members.swap_remove(at)));
        };
        let wanted = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        let drawn: Vec<Vec<u8>> = if count < 0 {
            (0..wanted)
                .map(|_| members[draws.below(members.len())].clone())
                .collect()
        } else {
            draws.distinct(members, wanted)
        };
        Ok(Reply::Array(drawn.into_iter().map(Reply::Bulk).collect()))
    }

    // ----- sorted sets -------------------------------------------------------------------

    /// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member...`, and `ZINCRBY key increment
    /// member` (which Redis runs as `ZADD` with `INCR`, reading options the same way).
    fn zadd(&mut self, argv: &[Vec<u8>], zincrby: bool, now_ms: u64) -> Result<Reply, Reply> {
        let mut flags = AddFlags {
            incr: zincrby,
            ..AddFlags::default()
        };
        let mut changed_count = false;
        let mut at = 2;
        while at < argv.len() {
            let option = argv[at].to_ascii_lowercase();
            match option.as_slice() {
                b"nx" => flags.nx = true,
                b"xx" => flags.xx = true,
                b"ch" => changed_count = true,
                b"incr" => flags.incr = true,
                b"gt" => flags.gt = true,
                b"lt" => flags.lt = true,
                _ => break,
            }
            at += 1;
        }
        let pairs = &argv[at..];
        if pairs.is_empty() || pairs.len() % 2 == 1 {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        if flags.nx && flags.xx {
            return Err(Reply::error(
                "ERR XX and NX options at the same time are not compatible",
            ));
        }
        if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
            return Err(Reply::error(
                "ERR GT, LT, and/or NX options at the same time are not compatible",
            ));
        }
        if flags.incr && pairs.len() > 2 {
            return Err(Reply::error(
                "ERR INCR option supports a single increment-element pair",
            ));
        }
        let scores: Vec<f64> = pairs
            .iter()
            .step_by(2)
            .map(|score| parse_score(score).ok_or_else(|| Reply::error(NOT_A_FLOAT_ERROR)))
            .collect::<Result<_, _>>()?;
        // XX on a missing key does nothing and creates nothing.
        let create = (!flags.xx).then_some(new_zset as fn() -> Collection);
        let Some(members) = self.typed(&argv[1], now_ms, create, as_zset)? else {
            return Ok(if flags.incr {
                Reply::Nil
            } else {
                Reply::Integer(0)
            });
        };
        let (mut added, mut updated, mut processed) = (0i64, 0i64, 0i64);
        let mut last_score = 0.0;
        let mut outcome = Ok(());
        for (score, member) in scores.into_iter().zip(pairs.iter().skip(1).step_by(2)) {
            match zset_add(members, score, member, flags) {
                AddOutcome::NotANumber => {
                    outcome = Err(Reply::error(NAN_ERROR));
                    break;
                }
                AddOutcome::Nothing => {}
                AddOutcome::Added(score) => {
                    added += 1;
                    processed += 1;
                    last_score = score;
                }
                AddOutcome::Updated(score) => {
                    updated += 1;
                    processed += 1;
                    last_score = score;
                }
                AddOutcome::Unchanged(score) => {
                    processed += 1;
                    last_score = score;
                }
            }
        }
        if added > 0 || updated > 0 || members.is_empty() {
            self.collection_written(&argv[1]);
        }
        outcome?;
        Ok(if flags.incr {
            if processed > 0 {
                Reply::Bulk(format_g17(last_score).into_bytes())
            } else {
                Reply::Nil
            }
        } else if changed_count {
            Reply::Integer(added + updated)
        } else {
            Reply::Integer(added)
        })
    }

    /// `ZREM key member...`: how many were there.
    fn zrem(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Integer(0));
        };
        let removed = argv[2..].iter().filter(|m| members.remove(m)).count();
        if removed > 0 {
            self.collection_written(&argv[1]);
        }
        Ok(Reply::Integer(length(removed)))
    }

    /// `ZCOUNT key min max`: the range is read before the key is looked up.
    fn zcount(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let range = score_range(&argv[2], &argv[3])?;
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Integer(0));
        };
        let count = members
            .iter()
            .filter(|(score, _)| range.contains(score.value()))
            .count();
        Ok(Reply::Integer(length(count)))
    }

    /// `ZRANGE`, `ZREVRANGE`, `ZRANGEBYSCORE`, `ZREVRANGEBYSCORE`: Redis's
    /// `zrangeGenericCommand`, which reads the options, then the range, then the key.
    fn zrange(
        &mut self,
        argv: &[Vec<u8>],
        mut by: RangeBy,
        mut direction: Direction,
        now_ms: u64,
    ) -> Result<Reply, Reply> {
        let mut with_scores = false;
        let mut offset: i64 = 0;
        let mut limit: i64 = -1;
        let mut at = 4;
        while at < argv.len() {
            let left = argv.len() - at - 1;
            let option = argv[at].to_ascii_lowercase();
            match option.as_slice() {
                b"withscores" => with_scores = true,
                b"limit" if left >= 2 => {
                    offset = integer_arg(&argv[at + 1])?;
                    limit = integer_arg(&argv[at + 2])?;
                    at += 2;
                }
                b"rev" if direction == Direction::Auto => direction = Direction::Reverse,
                b"bylex" if by == RangeBy::Auto => by = RangeBy::Lex,
                b"byscore" if by == RangeBy::Auto => by = RangeBy::Score,
                _ => return Err(Reply::error(SYNTAX_ERROR)),
            }
            at += 1;
        }
        let reverse = direction == Direction::Reverse;
        if by == RangeBy::Auto {
            by = RangeBy::Rank;
        }
        if limit != -1 && by == RangeBy::Rank {
            return Err(Reply::error(
                "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        if with_scores && by == RangeBy::Lex {
            return Err(Reply::error(
                "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
            ));
        }
        // By score or lex, a reversed range is given as max, min.
        let (min, max) = if reverse && by != RangeBy::Rank {
            (&argv[3], &argv[2])
        } else {
            (&argv[2], &argv[3])
        };
        let selection = match by {
            RangeBy::Rank => Selection::Rank(integer_arg(min)?, integer_arg(max)?),
            RangeBy::Score => Selection::Score(score_range(min, max)?),
            RangeBy::Lex => Selection::Lex(LexRange::parse(min, max)?),
            RangeBy::Auto => unreachable!("resolved above"),
        };
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let members: &SortedSet = members;
        let picked: Vec<&(Score, Vec<u8>)> = match selection {
            Selection::Rank(start, stop) => match index_range(members.len(), start, stop) {
                None => Vec::new(),
                Some(range) if reverse => members
                    .iter()
                    .rev()
                    .skip(range.start)
                    .take(range.len())
                    .collect(),
                Some(range) => members.iter().skip(range.start).take(range.len()).collect(),
            },
            Selection::Score(range) => walk_range(
                members,
                reverse,
                offset,
                limit,
                |(score, _)| range.contains(score.value()),
                |(score, _)| range.reaches_min(score.value()),
                |(score, _)| range.reaches_max(score.value()),
            ),
            Selection::Lex(range) => walk_range(
                members,
                reverse,
                offset,
                limit,
                |(_, member)| range.contains(member),
                |(_, member)| range.reaches_min(member),
                |(_, member)| range.reaches_max(member),
            ),
        };
        let mut reply = Vec::with_capacity(picked.len() * if with_scores { 2 } else { 1 });
        for (score, member) in picked {
            reply.push(Reply::Bulk(member.clone()));
            if with_scores {
                reply.push(Reply::Bulk(score.text()));
            }
        }
        Ok(Reply::Array(reply))
    }

    /// `ZLEXCOUNT key min max`: the members a lex range walk takes (Redis's `zsetLexCount`).
    fn zlexcount(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let range = LexRange::parse(&argv[2], &argv[3])?;
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Integer(0));
        };
        let members: &SortedSet = members;
        Ok(Reply::Integer(length(lex_walk(members, &range).len())))
    }

    /// `ZREMRANGEBYSCORE key min max`, `ZREMRANGEBYRANK key start stop` and
    /// `ZREMRANGEBYLEX key min max`.
    fn zremrange(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let selection = if name == b"zremrangebyrank" {
            Selection::Rank(integer_arg(&argv[2])?, integer_arg(&argv[3])?)
        } else if name == b"zremrangebylex" {
            Selection::Lex(LexRange::parse(&argv[2], &argv[3])?)
        } else {
            Selection::Score(score_range(&argv[2], &argv[3])?)
        };
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Integer(0));
        };
        let removed = match selection {
            Selection::Rank(start, stop) => match index_range(members.len(), start, stop) {
                Some(range) => members.retain(|rank, _| !range.contains(&rank)),
                None => 0,
            },
            Selection::Score(range) => {
                members.retain(|_, (score, _)| !range.contains(score.value()))
            }
            Selection::Lex(range) => {
                let gone: BTreeSet<Vec<u8>> = lex_walk(members, &range)
                    .into_iter()
                    .map(|(_, member)| member.clone())
                    .collect();
                members.retain(|_, (_, member)| !gone.contains(member))
            }
        };
        if removed > 0 {
            self.collection_written(&argv[1]);
        }
        Ok(Reply::Integer(length(removed)))
    }

    /// `ZPOPMIN`/`ZPOPMAX key [count]`: member and score pairs, flat (RESP2).
    fn zpop(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        if argv.len() > 3 {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        let count = argv.get(2).map(|arg| positive_arg(arg)).transpose()?;
        let Some(members) = self.typed(&argv[1], now_ms, None, as_zset)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        if count == Some(0) {
            return Ok(Reply::Array(Vec::new()));
        }
        let taken = usize::try_from(count.unwrap_or(1))
            .unwrap_or(usize::MAX)
            .min(members.len());
        let lowest = name == b"zpopmin";
        let popped: Vec<(Score, Vec<u8>)> =
            (0..taken).filter_map(|_| members.pop(lowest)).collect();
        self.collection_written(&argv[1]);
        Ok(Reply::Array(
            popped
                .into_iter()
                .flat_map(|(score, member)| [Reply::Bulk(member), Reply::Bulk(score.text())])
                .collect(),
        ))
    }
}

/// The most members `SRANDMEMBER key -count` answers: a count below minus this is refused
/// (Redis would try to answer it, with as many replies as asked).
pub const SRANDMEMBER_REPEATS_LIMIT: u64 = 1 << 20;

/// The random draws of `SPOP` and `SRANDMEMBER`. Redis draws from its random generator; the
/// stand-in draws from a stream seeded by a fingerprint of the set's members and the server's
/// clock, so that what a command answers is a function of the keyspace and the time (a
/// simulated run stays a function of its seed, whose timing moves the draws, and a world of
/// the checker of its state; the checker does not branch over the draws). Which members are
/// drawn differs from Redis, as it differs between two runs of Redis.
struct Draws {
    state: u64,
}

impl Draws {
    fn of(members: &[Vec<u8>], now_ms: u64) -> Draws {
        let mut hasher = FingerprintHasher::default();
        hasher.write_u64(now_ms);
        for member in members {
            hasher.write_usize(member.len());
            hasher.write(member);
        }
        Draws {
            state: hasher.finish(),
        }
    }

    /// `wanted` distinct members of `members` (all of them when there are no more).
    fn distinct(&mut self, mut members: Vec<Vec<u8>>, wanted: usize) -> Vec<Vec<u8>> {
        if wanted >= members.len() {
            return members;
        }
        (0..wanted)
            .map(|_| {
                let at = self.below(members.len());
                members.swap_remove(at)
            })
            .collect()
    }

    /// A number below `n` (splitmix64 steps; `n` > 0).
    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "a draw from an empty set");
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

fn new_list() -> Collection {
    Collection::List(List::new())
}

fn new_set() -> Collection {
    Collection::Set(Set::new())
}

fn new_zset() -> Collection {
    Collection::SortedSet(SortedSet::default())
}

/// The options of one `ZADD`.
#[derive(Clone, Copy, Debug, Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    incr: bool,
}

/// What `zsetAdd` did with one score and member; the score is the member's score after it.
enum AddOutcome {
    /// The new score is NaN (`INCR` of `inf` by `-inf`): nothing changed.
    NotANumber,
    /// `NX` on an existing member, `XX` on a new one, or a `GT`/`LT` that did not hold.
    Nothing,
    Added(f64),
    Updated(f64),
    /// Processed, with the score it already had.
    Unchanged(f64),
}

/// Redis's `zsetAdd`.
fn zset_add(members: &mut SortedSet, score: f64, member: &[u8], flags: AddFlags) -> AddOutcome {
    if let Some(current) = members.score(member) {
        if flags.nx {
            return AddOutcome::Nothing;
        }
        let current = current.value();
        let mut score = score;
        if flags.incr {
            score += current;
        }
        let Some(new) = Score::new(score) else {
            return AddOutcome::NotANumber;
        };
        if (flags.lt && score >= current) || (flags.gt && score <= current) {
            return AddOutcome::Nothing;
        }
        if score == current {
            return AddOutcome::Unchanged(score);
        }
        members.insert(member, new);
        AddOutcome::Updated(new.value())
    } else if !flags.xx {
        let Some(new) = Score::new(score) else {
            return AddOutcome::NotANumber;
        };
        members.insert(member, new);
        // The reply carries the score as given: `-0` is answered `-0` and stored as 0.
        AddOutcome::Added(score)
    } else {
        AddOutcome::Nothing
    }
}

/// `ZSCORE`'s reply for one member.
fn score_reply(members: &SortedSet, member: &[u8]) -> Reply {
    members
        .score(member)
        .map_or(Reply::Nil, |score| Reply::Bulk(score.text()))
}

/// How `ZRANGE` selects: chosen by the command or its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RangeBy {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Auto,
    Forward,
    Reverse,
}

/// A parsed range.
enum Selection {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// A score interval, as `zslParseRange` reads it.
#[derive(Clone, Copy, Debug)]
struct ScoreRange {
    min: ScoreBound,
    max: ScoreBound,
}

impl ScoreRange {
    fn contains(self, score: f64) -> bool {
        self.min.below(score) && self.max.above(score)
    }

    fn reaches_min(self, score: f64) -> bool {
        self.min.below(score)
    }

    fn reaches_max(self, score: f64) -> bool {
        self.max.above(score)
    }
}

fn score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
    match (ScoreBound::parse(min), ScoreBound::parse(max)) {
        (Some(min), Some(max)) => Ok(ScoreRange { min, max }),
        _ => Err(Reply::error(RANGE_NOT_A_FLOAT_ERROR)),
    }
}

/// One end of a lexicographic range: `-`, `+`, `[x` (inclusive) or `(x` (exclusive).
#[derive(Clone, Debug)]
enum LexBound {
    Lowest,
    Highest,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

impl LexBound {
    fn parse(bytes: &[u8]) -> Option<LexBound> {
        match bytes.split_first() {
            Some((b'+', [])) => Some(LexBound::Highest),
            Some((b'-', [])) => Some(LexBound::Lowest),
            Some((b'(', rest)) => Some(LexBound::Exclusive(rest.to_vec())),
            Some((b'[', rest)) => Some(LexBound::Inclusive(rest.to_vec())),
            _ => None,
        }
    }
}

/// A lexicographic interval, as `zslParseLexRange` reads it.
#[derive(Clone, Debug)]
struct LexRange {
    min: LexBound,
    max: LexBound,
}

impl LexRange {
    fn parse(min: &[u8], max: &[u8]) -> Result<LexRange, Reply> {
        match (LexBound::parse(min), LexBound::parse(max)) {
            (Some(min), Some(max)) => Ok(LexRange { min, max }),
            _ => Err(Reply::error(LEX_RANGE_ERROR)),
        }
    }

    fn reaches_min(&self, member: &[u8]) -> bool {
        match &self.min {
            LexBound::Lowest => true,
            LexBound::Highest => false,
            LexBound::Inclusive(bound) => member >= bound.as_slice(),
            LexBound::Exclusive(bound) => member > bound.as_slice(),
        }
    }

    fn reaches_max(&self, member: &[u8]) -> bool {
        match &self.max {
            LexBound::Lowest => false,
            LexBound::Highest => true,
            LexBound::Inclusive(bound) => member <= bound.as_slice(),
            LexBound::Exclusive(bound) => member < bound.as_slice(),
        }
    }

    fn contains(&self, member: &[u8]) -> bool {
        self.reaches_min(member) && self.reaches_max(member)
    }
}

/// Redis's walk of a score or lex range with `LIMIT offset count`: find the first member in
/// range from the low end (the last from the high end when reversed), skip `offset` members
/// without looking at them, then take members while they are within the far end, at most
/// `limit` (a negative limit takes all; a negative offset skips everything).
fn walk_range(
    members: &SortedSet,
    reverse: bool,
    offset: i64,
    limit: i64,
    in_range: impl Fn(&(Score, Vec<u8>)) -> bool,
    reaches_min: impl Fn(&(Score, Vec<u8>)) -> bool,
    reaches_max: impl Fn(&(Score, Vec<u8>)) -> bool,
) -> Vec<&(Score, Vec<u8>)> {
    if offset > 0 && usize::try_from(offset).is_ok_and(|o| o >= members.len()) {
        return Vec::new();
    }
    if offset < 0 {
        return Vec::new();
    }
    // Redis's `zslIsInRange`/`zslIsInLexRange`: nothing when the last member is below the
    // range or the first above it (for a lex range over members of different scores this
    // decides alone: the set is in score order).
    let (Some(first), Some(last)) = (members.iter().next(), members.iter().next_back()) else {
        return Vec::new();
    };
    if !reaches_min(last) || !reaches_max(first) {
        return Vec::new();
    }
    let order: Box<dyn Iterator<Item = &(Score, Vec<u8>)>> = if reverse {
        Box::new(members.iter().rev())
    } else {
        Box::new(members.iter())
    };
    // The first member at or past the near end; it must also be within the far end.
    let near = |m: &(Score, Vec<u8>)| {
        if reverse {
            reaches_max(m)
        } else {
            reaches_min(m)
        }
    };
    let far = |m: &(Score, Vec<u8>)| {
        if reverse {
            reaches_min(m)
        } else {
            reaches_max(m)
        }
    };
    let mut walk = order.skip_while(|m| !near(m)).peekable();
    if !walk.peek().is_some_and(|m| in_range(m)) {
        return Vec::new();
    }
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    walk.skip(skip).take(take).take_while(|m| far(m)).collect()
}

/// `LEFT` or `RIGHT` (any case) as "the head", else Redis's syntax error.
fn list_end(word: &[u8]) -> Result<bool, Reply> {
    if word.eq_ignore_ascii_case(b"left") {
        Ok(true)
    } else if word.eq_ignore_ascii_case(b"right") {
        Ok(false)
    } else {
        Err(Reply::error(SYNTAX_ERROR))
    }
}

/// The members a forward lex range walk takes, no `LIMIT`.
fn lex_walk<'a>(members: &'a SortedSet, range: &LexRange) -> Vec<&'a (Score, Vec<u8>)> {
    walk_range(
        members,
        false,
        0,
        -1,
        |(_, member)| range.contains(member),
        |(_, member)| range.reaches_min(member),
        |(_, member)| range.reaches_max(member),
    )
}

/// A list index (negative from the tail) as a position, `None` when out of range.
fn list_index(len: usize, index: i64) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let at = if index < 0 { len + index } else { index };
    (0..len)
        .contains(&at)
        .then(|| usize::try_from(at).expect("in range"))
}

/// Redis's `start`/`stop` rules for `LRANGE`, `LTRIM`, `ZRANGE` by rank and
/// `ZREMRANGEBYRANK`: negative from the end, clamped; `None` for an empty range.
fn index_range(len: usize, start: i64, stop: i64) -> Option<std::ops::Range<usize>> {
    let len_i = i64::try_from(len).ok()?;
    let mut start = if start < 0 {
        len_i.saturating_add(start)
    } else {
        start
    };
    let mut stop = if stop < 0 {
        len_i.saturating_add(stop)
    } else {
        stop
    };
    if start < 0 {
        start = 0;
    }
    if start > stop || start >= len_i {
        return None;
    }
    if stop >= len_i {
        stop = len_i - 1;
    }
    let start = usize::try_from(start).expect("non-negative");
    let stop = usize::try_from(stop).expect("non-negative");
    Some(start..stop + 1)
}

/// A positive count (`LPOP key count`, `ZPOPMIN key count`).
fn positive_arg(bytes: &[u8]) -> Result<i64, Reply> {
    match integer_arg(bytes) {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(Reply::error(NOT_POSITIVE_ERROR)),
    }
}

/// A length as a RESP integer.
fn length(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
