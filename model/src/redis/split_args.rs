//! Redis's `sdssplitargs`: how Redis splits a line into words, for an inline request (the
//! served connection, `sim/src/resp.rs`) and for a script's `#!lua` line (`shebang.rs`).

/// C's `isspace`, which Redis uses between words.
fn is_redis_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c)
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|digit| digit as u8)
}

/// Splits an inline request line like Redis's `sdssplitargs`: white space separates
/// arguments, `"..."` understands `\n \r \t \b \a \\ \" \xHH`, `'...'` understands `\'`, and a
/// closing quote must be followed by white space or the end. `None` for unbalanced quotes.
///
/// Like Redis, which reads the line as a C string, a zero byte ends the line.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = &line[..line
        .iter()
        .position(|&byte| byte == 0)
        .unwrap_or(line.len())];
    let mut args = Vec::new();
    let mut pos = 0;
    loop {
        while pos < line.len() && is_redis_space(line[pos]) {
            pos += 1;
        }
        if pos >= line.len() {
            return Some(args);
        }
        let (arg, next) = split_one_arg(line, pos)?;
        args.push(arg);
        pos = next;
    }
}

/// Reads one argument starting at `pos` (not white space); returns it and where to go on.
fn split_one_arg(line: &[u8], mut pos: usize) -> Option<(Vec<u8>, usize)> {
    let mut arg = Vec::new();
    let mut in_double = false;
    let mut in_single = false;
    loop {
        let byte = line.get(pos).copied();
        if in_double {
            let byte = byte?;
            let next = line.get(pos + 1).copied();
            if byte == b'\\' && next == Some(b'x') {
                let high = line.get(pos + 2).copied().and_then(hex_value);
                let low = line.get(pos + 3).copied().and_then(hex_value);
                if let (Some(high), Some(low)) = (high, low) {
                    arg.push(high * 16 + low);
                    pos += 4;
                    continue;
                }
            }
            if byte == b'\\' && next.is_some() {
                arg.push(match next? {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'a' => 0x07,
                    other => other,
                });
                pos += 2;
            } else if byte == b'"' {
                if line
                    .get(pos + 1)
                    .is_some_and(|&after| !is_redis_space(after))
                {
                    return None;
                }
                return Some((arg, pos + 1));
            } else {
                arg.push(byte);
                pos += 1;
            }
        } else if in_single {
            let byte = byte?;
            if byte == b'\\' && line.get(pos + 1) == Some(&b'\'') {
                arg.push(b'\'');
                pos += 2;
            } else if byte == b'\'' {
                if line
                    .get(pos + 1)
                    .is_some_and(|&after| !is_redis_space(after))
                {
                    return None;
                }
                return Some((arg, pos + 1));
            } else {
                arg.push(byte);
                pos += 1;
            }
        } else {
            match byte {
                None | Some(b' ' | b'\n' | b'\r' | b'\t' | 0) => return Some((arg, pos)),
                Some(b'"') => in_double = true,
                Some(b'\'') => in_single = true,
                Some(other) => arg.push(other),
            }
            pos += 1;
        }
    }
}
