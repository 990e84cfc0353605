//! Scripts run in Lua 5.1 as Redis 7.0 runs them: any source, reply conversions both ways,
//! the sandbox, `redis.*` helpers and the error texts.
//!
//! Every expected reply below is what Redis 7.0.15 answered to the same `EVAL` (checked with a
//! raw RESP client against 127.0.0.1:6379); `tests/fidelity_redis.rs` compares many of them
//! against the real server automatically.

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::scripts::sha1_hex_of;
use leaselab_model::redis::{Redis, Reply};

fn eval_args(redis: &mut Redis, source: &str, keys: &[&str], args: &[&str]) -> Reply {
    let mut argv = vec![
        b"EVAL".to_vec(),
        source.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    argv.extend(keys.iter().map(|k| k.as_bytes().to_vec()));
    argv.extend(args.iter().map(|a| a.as_bytes().to_vec()));
    redis.execute(&argv, 1_000)
}

fn eval(source: &str) -> Reply {
    eval_args(&mut Redis::new(), source, &[], &[])
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

/// `<message> script: <sha1>, on @user_script:<line>.`
fn script_err(source: &str, message: &str, line: u32) -> Reply {
    err(&format!(
        "{message} script: {}, on @user_script:{line}.",
        sha1_hex_of(source.as_bytes())
    ))
}

#[test]
fn lua_values_become_replies_as_in_redis() {
    assert_eq!(eval("return 3.9"), Reply::Integer(3));
    assert_eq!(eval("return -3.9"), Reply::Integer(-3));
    assert_eq!(eval("return 'str'"), bulk("str"));
    assert_eq!(eval("return true"), Reply::Integer(1));
    assert_eq!(eval("return false"), Reply::Nil);
    assert_eq!(eval("return nil"), Reply::Nil);
    assert_eq!(eval("return"), Reply::Nil);
    assert_eq!(
        eval("return {1,2,nil,3}"),
        Reply::Array(vec![Reply::Integer(1), Reply::Integer(2)])
    );
    assert_eq!(eval("return {ok='fine'}"), Reply::Status("fine".into()));
    assert_eq!(eval("return {ok='a\\nb'}"), Reply::Status("a b".into()));
    assert_eq!(eval("return {err='My err'}"), err("My err"));
    assert_eq!(eval("return {ok=1}"), Reply::Array(vec![]));
    assert_eq!(eval("return {err=2}"), Reply::Array(vec![]));
    assert_eq!(
        eval("return {{1,'a'},{ok='x'}}"),
        Reply::Array(vec![
            Reply::Array(vec![Reply::Integer(1), bulk("a")]),
            Reply::Status("x".into())
        ])
    );
    assert_eq!(eval("return 1, 2"), Reply::Integer(1));
}

#[test]
fn redis_replies_become_lua_values_as_in_redis() {
    let mut redis = Redis::new();
    redis.execute(&[b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()], 1_000);
    let probe = "local r = {} \
        r[1] = type(redis.call('get', KEYS[1])) \
        r[2] = tostring(redis.call('get', 'missing')) \
        r[3] = type(redis.call('incr', 'n')) \
        r[4] = redis.call('set', 'x', 1).ok \
        r[5] = redis.pcall('incr', KEYS[1]).err \
        r[6] = type(redis.call('mget', KEYS[1], 'missing')[2]) \
        return r";
    assert_eq!(
        eval_args(&mut redis, probe, &["k"], &[]),
        Reply::Array(vec![
            bulk("string"),
            bulk("false"),
            bulk("number"),
            bulk("OK"),
            bulk("ERR value is not an integer or out of range"),
            bulk("boolean"),
        ])
    );
}

#[test]
fn redis_helpers() {
    assert_eq!(eval("return redis.error_reply('x')"), err("ERR x"));
    assert_eq!(eval("return redis.error_reply('-MY x')"), err("MY x"));
    assert_eq!(eval("return redis.error_reply('a b')"), err("a b"));
    assert_eq!(
        eval("return redis.error_reply({})"),
        err("ERR wrong number or type of arguments")
    );
    assert_eq!(
        eval("return redis.status_reply('FINE')"),
        Reply::Status("FINE".into())
    );
    assert_eq!(
        eval("return redis.status_reply(1)"),
        err("ERR wrong number or type of arguments")
    );
    assert_eq!(
        eval("return redis.sha1hex('abc')"),
        bulk("a9993e364706816aba3e25717850c26c9cd0d89d")
    );
    assert_eq!(eval("return redis.log(redis.LOG_WARNING,'x')"), Reply::Nil);
    let source = "return redis.sha1hex()";
    assert_eq!(
        eval(source),
        script_err(source, "ERR wrong number of arguments", 1)
    );
}

#[test]
fn script_error_texts_are_redis_texts() {
    let cases: [(&str, &str); 13] = [
        (
            "return x",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'x'",
        ),
        (
            "return redis.call('nosuch')",
            "ERR Unknown Redis command called from script",
        ),
        (
            "return redis.call('get')",
            "ERR Wrong number of args calling Redis command from script",
        ),
        (
            "return redis.call('get', 'a', 'b')",
            "ERR Wrong number of args calling Redis command from script",
        ),
        ("error('boom')", "ERR user_script:1: boom"),
        ("error('a\\nb')", "ERR user_script:1: a b"),
        (
            "x = 1",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "string.foo = 1",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        ("rawset(_G,'x',1)", "ERR Attempt to modify a readonly table"),
        (
            "getmetatable('').__index.upper = nil",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "return os",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'os'",
        ),
        (
            "return redis.call('set', {}, 1)",
            "ERR Lua redis lib command arguments must be strings or integers",
        ),
        (
            "return redis.call()",
            "ERR Please specify at least one argument for this redis lib call",
        ),
    ];
    for (source, message) in cases {
        assert_eq!(eval(source), script_err(source, message, 1), "{source}");
    }
    assert_eq!(
        eval("return redis.pcall('nosuch')"),
        err("ERR Unknown Redis command called from script")
    );
    assert_eq!(
        eval("return redis.pcall()"),
        err("ERR Please specify at least one argument for this redis lib call")
    );
    assert_eq!(
        eval("error({err='X'})"),
        script_err("error({err='X'})", "X", 1)
    );
    assert_eq!(eval("error()"), script_err("error()", "ERR nil", 1));
    // Redis 7.0's pcall hands a caught error table over as its text.
    assert_eq!(
        eval("local ok, e = pcall(redis.call, 'nosuch') return {ok, e}"),
        Reply::Array(vec![
            Reply::Nil,
            bulk("ERR Unknown Redis command called from script")
        ])
    );
    assert_eq!(
        eval("local ok, e = pcall(error, {err='E'}) return type(e)"),
        bulk("string")
    );
    let source = "return redis.call('eval','return 1','0')";
    assert_eq!(
        eval(source),
        script_err(
            source,
            "ERR This Redis command is not allowed from script",
            1
        )
    );
    let source = "return math.random(0)";
    assert_eq!(
        eval(source),
        script_err(
            source,
            "ERR user_script:1: bad argument #1 to 'random' (interval is empty)",
            1
        )
    );
    let source = "return math.random(1,2,3)";
    assert_eq!(
        eval(source),
        script_err(source, "ERR user_script:1: wrong number of arguments", 1)
    );
}

#[test]
fn the_failing_line_is_reported() {
    let source =
        "local a = 1\n\nlocal function f()\n  return redis.call('nosuch')\nend\nreturn f()";
    assert_eq!(
        eval(source),
        script_err(source, "ERR Unknown Redis command called from script", 4)
    );
    let source = "local t = nil\r\nreturn t.x";
    assert_eq!(
        eval(source),
        script_err(
            source,
            "ERR user_script:2: attempt to index local 't' (a nil value)",
            2
        )
    );
}

#[test]
fn compile_errors_are_reported_and_nothing_is_cached() {
    let mut redis = Redis::new();
    let expected = err(
        "ERR Error compiling script (new function): user_script:1: '<eof>' expected near 'error'",
    );
    assert_eq!(
        eval_args(&mut redis, "return syntax error here", &[], &[]),
        expected
    );
    assert_eq!(
        redis.execute(
            &[b"SCRIPT".to_vec(), b"LOAD".to_vec(), b"return +".to_vec()],
            0
        ),
        err("ERR Error compiling script (new function): user_script:1: unexpected symbol near '+'")
    );
    assert!(!redis.script_cached_sha1(&sha1_hex_of(b"return +")));
}

#[test]
fn numbers_passed_to_commands_use_percent_17g() {
    let mut redis = Redis::new();
    let cases = [
        ("0.1", "0.10000000000000001"),
        ("1e17", "1e+17"),
        ("-0.0", "-0"),
        ("1/0", "inf"),
        ("42", "42"),
    ];
    for (lua, stored) in cases {
        let source = format!("redis.call('set', KEYS[1], {lua}) return redis.call('get', KEYS[1])");
        assert_eq!(eval_args(&mut redis, &source, &["k"], &[]), bulk(stored));
    }
}

#[test]
fn any_source_runs_and_is_cached() {
    let mut redis = Redis::new();
    let source = "-- a comment\r\nif redis.call('GET', KEYS[1]) == ARGV[1] then\r\n  \
                  return redis.call('DEL', KEYS[1])\r\nend\r\nreturn 0\r\n";
    redis.execute(&[b"SET".to_vec(), b"lock".to_vec(), b"me".to_vec()], 0);
    assert_eq!(
        eval_args(&mut redis, source, &["lock"], &["you"]),
        Reply::Integer(0)
    );
    assert_eq!(
        eval_args(&mut redis, source, &["lock"], &["me"]),
        Reply::Integer(1)
    );
    assert_eq!(redis.peek(b"lock", 0), None);
    let sha = sha1_hex_of(source.as_bytes());
    assert!(redis.script_cached_sha1(&sha));
    assert!(redis.script_cached_sha1(&sha.to_ascii_uppercase()));
    let reply = redis.execute(
        &[
            b"EVALSHA".to_vec(),
            sha.as_bytes().to_vec(),
            b"1".to_vec(),
            b"lock".to_vec(),
            b"me".to_vec(),
        ],
        0,
    );
    assert_eq!(reply, Reply::Integer(0));
    redis.execute(&[b"SCRIPT".to_vec(), b"FLUSH".to_vec()], 0);
    assert!(!redis.script_cached_sha1(&sha));
}

#[test]
fn writes_before_a_failing_call_stay_and_are_replicated() {
    let mut redis = Redis::new();
    let source = "redis.call('set', KEYS[1], 'v')\nredis.call('incr', KEYS[1])";
    assert_eq!(
        eval_args(&mut redis, source, &["k"], &[]),
        script_err(source, "ERR value is not an integer or out of range", 2)
    );
    assert_eq!(redis.peek(b"k", 0), Some(&b"v"[..]));
    assert_eq!(
        redis.drain_effects(),
        vec![Effect::Set {
            key: b"k".to_vec(),
            value: b"v".to_vec(),
            expire_at_ms: None,
            db: 0
        }]
    );
}

#[test]
fn math_random_is_redis_rand48_continuing_across_scripts() {
    // A fresh Redis 7.0.15 answered these two EVALs in this order.
    let mut redis = Redis::new();
    let source = "return {math.random(1000000), math.random(1000000), math.random(1000000)}";
    let ints = |list: [i64; 3]| Reply::Array(list.map(Reply::Integer).to_vec());
    assert_eq!(
        eval_args(&mut redis, source, &[], &[]),
        ints([396_465, 840_486, 353_337])
    );
    assert_eq!(
        eval_args(&mut redis, source, &[], &[]),
        ints([446_584, 318_693, 886_429])
    );
    // The same history gives the same numbers; a restart starts over.
    let mut again = Redis::new();
    assert_eq!(
        eval_args(&mut again, source, &[], &[]),
        ints([396_465, 840_486, 353_337])
    );
    redis.restart_empty();
    assert_eq!(
        eval_args(&mut redis, source, &[], &[]),
        ints([396_465, 840_486, 353_337])
    );
}

#[test]
fn globals_do_not_leak_between_scripts() {
    let mut redis = Redis::new();
    let _ = eval_args(&mut redis, "rawset(_G, 'leak', 1)", &[], &[]);
    let _ = eval_args(&mut redis, "pcall(function() leak2 = 1 end)", &[], &[]);
    assert_eq!(
        eval_args(&mut redis, "return ('abc'):upper()", &[], &[]),
        bulk("ABC")
    );
    let source = "return {type(rawget(_G, 'leak')), type(rawget(_G, 'leak2'))}";
    assert_eq!(
        eval_args(&mut redis, source, &[], &[]),
        Reply::Array(vec![bulk("nil"), bulk("nil")])
    );
    let source = "return {#KEYS, #ARGV, KEYS[1], ARGV[2]}";
    assert_eq!(
        eval_args(&mut redis, source, &["a", "b"], &["x", "y"]),
        Reply::Array(vec![
            Reply::Integer(2),
            Reply::Integer(2),
            bulk("a"),
            bulk("y")
        ])
    );
}

#[test]
fn a_runaway_script_is_stopped_with_an_error() {
    let mut redis = Redis::new();
    let source = "local i = 0 while true do i = i + 1 end";
    let Reply::Error(text) = eval_args(&mut redis, source, &[], &[]) else {
        panic!("a runaway script must end in an error");
    };
    assert!(text.starts_with("ERR "), "{text}");
    assert!(text.contains("BUSY"), "{text}");
    assert!(text.contains(&sha1_hex_of(source.as_bytes())), "{text}");
    // The server keeps working afterwards.
    assert_eq!(
        eval_args(&mut redis, "return 7", &[], &[]),
        Reply::Integer(7)
    );
}

#[test]
fn a_script_cannot_catch_its_way_past_the_budget() {
    let mut redis = Redis::new();
    let source = "while true do pcall(function() while true do end end) end";
    assert!(eval_args(&mut redis, source, &[], &[]).is_error());
}

#[test]
fn a_huge_allocation_is_an_error_not_a_crash() {
    let mut redis = Redis::new();
    let source = "local s = string.rep('x', 1024 * 1024) local t = {} \
                  for i = 1, 100000 do t[i] = s .. i end return #t";
    assert!(eval_args(&mut redis, source, &[], &[]).is_error());
    assert_eq!(
        eval_args(&mut redis, "return 8", &[], &[]),
        Reply::Integer(8)
    );
}

#[test]
fn a_library_result_past_the_memory_limit_stops_the_script_and_cannot_be_caught() {
    let mut redis = Redis::new();
    // One megabyte string, held 100 times: the result would be 100 MB.
    for source in [
        "local s = string.rep('x', 1000000) local t = {} for i = 1, 100 do t[i] = s end \
         return cjson.encode(t)",
        "local s = string.rep('x', 1000000) local t = {} for i = 1, 100 do t[i] = s end \
         local ok = pcall(cmsgpack.pack, t) return 'caught'",
    ] {
        let Reply::Error(error) = eval_args(&mut redis, source, &[], &[]) else {
            panic!("{source}: stopped with an error");
        };
        assert!(error.contains("grew past 32 MiB"), "{source}: {error}");
    }
    // Ten of them (10 MB) is within the limit.
    let ten = "local s = string.rep('x', 1000000) local t = {} for i = 1, 10 do t[i] = s end \
               return #cmsgpack.pack(t)";
    assert_eq!(
        eval_args(&mut redis, ten, &[], &[]),
        Reply::Integer(10_000_051)
    );
}

#[test]
fn a_script_that_ran_out_of_memory_leaves_the_next_ones_working() {
    let mut redis = Redis::new();
    // A million nested tables: the heap limit stops it; its garbage must not stop the rest.
    let source = "local t = {} local c = t for i = 1, 1000000 do c[1] = {} c = c[1] end return 1";
    assert!(eval_args(&mut redis, source, &[], &[]).is_error());
    assert_eq!(
        eval_args(&mut redis, "return 1", &[], &[]),
        Reply::Integer(1)
    );
    let Reply::Error(error) = eval_args(&mut redis, "return (", &[], &[]) else {
        panic!("a syntax error is an error");
    };
    assert!(error.contains("Error compiling script"), "{error}");
    assert!(!error.contains("memory"), "{error}");
}

#[test]
fn a_pattern_match_that_would_run_for_hours_is_stopped_and_cannot_be_caught() {
    let mut redis = Redis::new();
    for source in [
        "return string.find(string.rep('a', 100000), 'a*a*a*a*a*b')",
        "local ok = pcall(string.gsub, string.rep('a', 100000), '(a-)(a-)(a-)(a-)b', '') \
         return 'caught'",
        "for w in string.gmatch(string.rep('a', 100000), 'a*a*a*a*b') do end return 2",
        "return string.find(string.rep('a', 4000000), string.rep('a', 1000000) .. 'b', 1, true)",
    ] {
        let Reply::Error(error) = eval_args(&mut redis, source, &[], &[]) else {
            panic!("{source}: stopped with an error");
        };
        assert!(
            error.contains("steps of one pattern match"),
            "{source}: {error}"
        );
    }
    // Patterns that finish answer as Lua 5.1 answers them.
    assert_eq!(
        eval_args(
            &mut redis,
            "return {string.find('lock:{wallet:42}', '{(.-)}')}",
            &[],
            &[]
        ),
        Reply::Array(vec![
            Reply::Integer(6),
            Reply::Integer(16),
            Reply::Bulk(b"wallet:42".to_vec()),
        ])
    );
    assert_eq!(
        eval_args(
            &mut redis,
            "return string.gsub('a,b,,c', ',', ';')",
            &[],
            &[]
        ),
        Reply::Bulk(b"a;b;;c".to_vec())
    );
}
