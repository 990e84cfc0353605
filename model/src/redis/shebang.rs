//! A script's first line `#!lua flags=...`, as Redis 7.0 reads it (`evalExtractShebangFlags`
//! in `eval.c`): the flags a script declares, and the Lua body compiled without the line.
//!
//! A script without the line is a *legacy* script: it may write unless called by `EVAL_RO` /
//! `EVALSHA_RO`. A script with it declares what it does: without `no-writes` it is refused by
//! the `_RO` commands and on a read-only replica before it runs; with `no-writes` every write
//! it tries fails.

/// What a script's shebang line declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// The script has a `#!lua` line (it is not a legacy script).
    pub shebang: bool,
    /// `no-writes`: the script only reads.
    pub no_writes: bool,
    /// `no-cluster`: the script may not run in cluster mode.
    pub no_cluster: bool,
}

/// The flags Redis 7.0 knows (`scripts_flags_def`); the others change nothing here.
const KNOWN_FLAGS: [&str; 5] = [
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// Reads `source`'s shebang line, if it has one. The error is Redis's text, without `ERR `.
pub fn flags(source: &[u8]) -> Result<ScriptFlags, String> {
    if !source.starts_with(b"#!") {
        return Ok(ScriptFlags::default());
    }
    // Redis looks for the line's end with `strchr`, which stops at a zero byte too.
    let Some(end) = source.iter().position(|&b| b == b'\n' || b == 0) else {
        return Err("Invalid script shebang".to_string());
    };
    if source[end] == 0 {
        return Err("Invalid script shebang".to_string());
    }
    let Some(parts) = super::split_args::split_args(&source[..end]) else {
        return Err("Invalid engine in script shebang".to_string());
    };
    let Some((engine, options)) = parts.split_first() else {
        return Err("Invalid engine in script shebang".to_string());
    };
    if engine.as_slice() != b"#!lua" {
        return Err(format!(
            "Unexpected engine in script shebang: {}",
            String::from_utf8_lossy(engine)
        ));
    }
    let mut flags = ScriptFlags {
        shebang: true,
        ..ScriptFlags::default()
    };
    for option in options {
        let Some(list) = option.strip_prefix(b"flags=") else {
            return Err(format!(
                "Unknown lua shebang option: {}",
                String::from_utf8_lossy(option)
            ));
        };
        // `sdssplitlen` of an empty list gives no flag at all; of `a,` an empty second one.
        if list.is_empty() {
            continue;
        }
        for flag in list.split(|&b| b == b',') {
            match KNOWN_FLAGS.iter().find(|known| known.as_bytes() == flag) {
                Some(&"no-writes") => flags.no_writes = true,
                Some(&"no-cluster") => flags.no_cluster = true,
                Some(_) => {}
                None => {
                    return Err(format!(
                        "Unexpected flag in script shebang: {}",
                        String::from_utf8_lossy(flag)
                    ))
                }
            }
        }
    }
    Ok(flags)
}

/// The part of `source` Lua compiles: without its shebang line, but with the line's end, so
/// that the script's line numbers are the user's.
pub fn lua_body(source: &[u8]) -> &[u8] {
    if !source.starts_with(b"#!") {
        return source;
    }
    match source.iter().position(|&b| b == b'\n' || b == 0) {
        Some(end) if source[end] == b'\n' => &source[end..],
        _ => source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(source: &str) -> String {
        flags(source.as_bytes()).expect_err(source)
    }

    #[test]
    fn shebang_errors_are_redis_texts() {
        // Each checked against Redis 7.0.15.
        assert_eq!(error("#!lua"), "Invalid script shebang");
        assert_eq!(error("#!lua\0\nreturn 1"), "Invalid script shebang");
        assert_eq!(
            error("#!python foo=1\nreturn 1"),
            "Unexpected engine in script shebang: #!python"
        );
        assert_eq!(
            error("#! lua\nreturn 1"),
            "Unexpected engine in script shebang: #!"
        );
        assert_eq!(
            error("#!LUA\nreturn 1"),
            "Unexpected engine in script shebang: #!LUA"
        );
        assert_eq!(
            error("#!lua \"abc\nreturn 1"),
            "Invalid engine in script shebang"
        );
        assert_eq!(
            error("#!lua flags=\"no-writes\"x\nreturn 1"),
            "Invalid engine in script shebang"
        );
        assert_eq!(
            error("#!lua name=x\nreturn 1"),
            "Unknown lua shebang option: name=x"
        );
        assert_eq!(
            error("#!lua flags\nreturn 1"),
            "Unknown lua shebang option: flags"
        );
        assert_eq!(
            error("#!lua flags=foo\nreturn 1"),
            "Unexpected flag in script shebang: foo"
        );
        assert_eq!(
            error("#!lua flags=no-writes,\nreturn 1"),
            "Unexpected flag in script shebang: "
        );
        assert_eq!(
            error("#!lua flags=no-writes=1\nreturn 1"),
            "Unexpected flag in script shebang: no-writes=1"
        );
    }

    #[test]
    fn flags_are_read_and_gathered() {
        let read = |s: &str| flags(s.as_bytes()).expect(s);
        assert_eq!(read("return 1"), ScriptFlags::default());
        assert_eq!(read(" #!lua\nreturn 1"), ScriptFlags::default());
        let plain = ScriptFlags {
            shebang: true,
            ..ScriptFlags::default()
        };
        assert_eq!(read("#!lua\n"), plain);
        assert_eq!(read("#!lua\r\nreturn 1"), plain);
        assert_eq!(read("#!lua flags=\nreturn 1"), plain);
        assert_eq!(
            read("#!lua flags=allow-oom,allow-stale,allow-cross-slot-keys\nreturn 1"),
            plain
        );
        let no_writes = ScriptFlags {
            no_writes: true,
            ..plain
        };
        assert_eq!(read("#!lua flags=no-writes\nreturn 1"), no_writes);
        assert_eq!(read("#!lua  flags=no-writes  \nreturn 1"), no_writes);
        assert_eq!(
            read("#!lua flags=no-writes flags=allow-oom\nreturn 1"),
            no_writes
        );
        assert_eq!(read("#!lua 'flags=no-writes'\nreturn 1"), no_writes);
        assert_eq!(read("#!lua flags=\"no-\\x77rites\"\nreturn 1"), no_writes);
        assert!(read("#!lua flags=no-cluster\nreturn 1").no_cluster);
    }

    #[test]
    fn the_body_keeps_the_line_end() {
        assert_eq!(lua_body(b"#!lua flags=no-writes\nreturn 1"), b"\nreturn 1");
        assert_eq!(lua_body(b"return 1"), b"return 1");
        assert_eq!(lua_body(b"#!lua"), b"#!lua");
    }
}
