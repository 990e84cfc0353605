//! RESP2: decoding requests (multibulk arrays and inline commands) and encoding replies.
//!
//! The decoder follows Redis 7's `processMultibulkBuffer` / `processInlineBuffer`
//! (src/networking.c): the same limits and the same protocol error texts, so a malformed
//! request gets the error reply Redis would send, after which the server closes the
//! connection.

use leaselab_model::redis::Reply;

/// The longest inline request, or count line, Redis buffers without a newline (64 KiB).
pub const INLINE_MAX_BYTES: usize = 64 * 1024;

/// The largest bulk string a client may send (`proto-max-bulk-len`, 512 MiB).
pub const BULK_MAX_BYTES: i64 = 512 * 1024 * 1024;

/// The largest multibulk count Redis accepts (`INT_MAX`).
const MULTIBULK_MAX_COUNT: i64 = i32::MAX as i64;

/// How many argument slots to reserve up front at most, whatever count the client announced.
const PREALLOCATED_ARGS_MAX: usize = 64;

/// A malformed request. The text is what follows `Protocol error: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(text: impl Into<String>) -> ProtocolError {
        ProtocolError(text.into())
    }

    /// The reply Redis sends before closing: `ERR Protocol error: <text>`.
    pub fn reply(&self) -> Reply {
        Reply::Error(format!("ERR Protocol error: {}", self.0))
    }
}

/// One request taken off the front of a buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The argument vector; empty for requests Redis skips (`*0`, an empty inline line).
    pub argv: Vec<Vec<u8>>,
    /// How many bytes of the buffer the request used.
    pub consumed_bytes: usize,
}

/// Decodes the first request in `buf`.
///
/// `Ok(None)` means the request is not complete yet: read more and call again with the
/// same bytes at the front. An error means the connection is unusable: reply with
/// [`ProtocolError::reply`] and close.
pub fn decode_request(buf: &[u8]) -> Result<Option<Request>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => decode_multibulk(buf),
        Some(_) => decode_inline(buf),
    }
}

/// Finds the `\r` that ends a count line starting at `start`; `Ok(None)` until the byte after
/// it has arrived too (Redis skips that byte without looking at it).
fn find_count_line_end(
    buf: &[u8],
    start: usize,
    too_big: &str,
) -> Result<Option<usize>, ProtocolError> {
    match buf[start..].iter().position(|&byte| byte == b'\r') {
        None if buf.len() - start > INLINE_MAX_BYTES => Err(ProtocolError::new(too_big)),
        None => Ok(None),
        Some(offset) if start + offset + 2 > buf.len() => Ok(None),
        Some(offset) => Ok(Some(start + offset)),
    }
}

/// Parses a decimal integer as Redis's `string2ll` does (no `+`, no leading zeros, no spaces).
fn parse_redis_integer(text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|byte| byte.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if canonical {
        text.parse().ok()
    } else {
        None
    }
}

fn decode_multibulk(buf: &[u8]) -> Result<Option<Request>, ProtocolError> {
    let Some(count_end) = find_count_line_end(buf, 1, "too big mbulk count string")? else {
        return Ok(None);
    };
    let count = match parse_redis_integer(&buf[1..count_end]) {
        Some(count) if count <= MULTIBULK_MAX_COUNT => count,
        _ => return Err(ProtocolError::new("invalid multibulk length")),
    };
    let mut pos = count_end + 2;
    if count <= 0 {
        return Ok(Some(Request {
            argv: Vec::new(),
            consumed_bytes: pos,
        }));
    }
    let count = count as usize;
    let mut argv = Vec::with_capacity(count.min(PREALLOCATED_ARGS_MAX));
    while argv.len() < count {
        let Some(&marker) = buf.get(pos) else {
            return Ok(None);
        };
        if marker != b'$' {
            return Err(ProtocolError(format!(
                "expected '$', got '{}'",
                marker as char
            )));
        }
        let Some(len_end) = find_count_line_end(buf, pos + 1, "too big bulk count string")? else {
            return Ok(None);
        };
        let len = match parse_redis_integer(&buf[pos + 1..len_end]) {
            Some(len) if (0..=BULK_MAX_BYTES).contains(&len) => len as usize,
            _ => return Err(ProtocolError::new("invalid bulk length")),
        };
        let data_start = len_end + 2;
        // Like Redis, the two bytes after the data are skipped without being checked.
        if buf.len() < data_start + len + 2 {
            return Ok(None);
        }
        argv.push(buf[data_start..data_start + len].to_vec());
        pos = data_start + len + 2;
    }
    Ok(Some(Request {
        argv,
        consumed_bytes: pos,
    }))
}

fn decode_inline(buf: &[u8]) -> Result<Option<Request>, ProtocolError> {
    let Some(newline) = buf.iter().position(|&byte| byte == b'\n') else {
        if buf.len() > INLINE_MAX_BYTES {
            return Err(ProtocolError::new("too big inline request"));
        }
        return Ok(None);
    };
    let line_end = if newline > 0 && buf[newline - 1] == b'\r' {
        newline - 1
    } else {
        newline
    };
    let argv = split_inline_args(&buf[..line_end])
        .ok_or_else(|| ProtocolError::new("unbalanced quotes in request"))?;
    Ok(Some(Request {
        argv,
        consumed_bytes: newline + 1,
    }))
}

fn is_redis_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c)
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|digit| digit as u8)
}

/// Splits an inline request line like Redis's `sdssplitargs`: white space separates
/// arguments, `"..."` understands `\n \r \t \b \a \\ \" \xHH`, `'...'` understands `\'`, and a
/// closing quote must be followed by white space or the end. `None` for unbalanced quotes.
pub fn split_inline_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
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

/// Appends the RESP2 encoding of `reply` to `out`.
///
/// Carriage returns and line feeds inside a status or error text are replaced by spaces (as
/// Redis does for errors), so the output is always valid RESP.
pub fn encode_reply(reply: &Reply, out: &mut Vec<u8>) {
    match reply {
        Reply::Status(text) => encode_simple_line(b'+', text, out),
        Reply::Error(text) => encode_simple_line(b'-', text, out),
        Reply::Integer(value) => {
            out.push(b':');
            out.extend_from_slice(value.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Reply::Bulk(bytes) => {
            out.push(b'$');
            out.extend_from_slice(bytes.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
        Reply::Array(items) => {
            out.push(b'*');
            out.extend_from_slice(items.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
            for item in items {
                encode_reply(item, out);
            }
        }
    }
}

fn encode_simple_line(marker: u8, text: &str, out: &mut Vec<u8>) {
    out.push(marker);
    out.extend(text.bytes().map(|byte| match byte {
        b'\r' | b'\n' => b' ',
        other => other,
    }));
    out.extend_from_slice(b"\r\n");
}

/// Appends the RESP2 encoding of a request (an array of bulk strings) to `out`, as clients
/// send it.
pub fn encode_request(argv: &[Vec<u8>], out: &mut Vec<u8>) {
    let items = argv.iter().map(|arg| Reply::Bulk(arg.clone())).collect();
    encode_reply(&Reply::Array(items), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|word| word.as_bytes().to_vec()).collect()
    }

    fn decode_all(buf: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut pos = 0;
        let mut requests = Vec::new();
        while let Some(request) = decode_request(&buf[pos..])? {
            requests.push(request.argv);
            pos += request.consumed_bytes;
        }
        assert_eq!(pos, buf.len(), "trailing bytes left undecoded");
        Ok(requests)
    }

    #[test]
    fn decodes_a_multibulk_request() {
        let buf = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n";
        let request = decode_request(buf).unwrap().unwrap();
        assert_eq!(request.argv, args(&["SET", "k", "v1"]));
        assert_eq!(request.consumed_bytes, buf.len());
    }

    #[test]
    fn every_strict_prefix_of_a_request_is_incomplete() {
        let mut buf = Vec::new();
        encode_request(&args(&["SET", "key", "va\r\nlue", "PX", "100"]), &mut buf);
        for len in 0..buf.len() {
            assert_eq!(
                decode_request(&buf[..len]),
                Ok(None),
                "prefix of {len} bytes"
            );
        }
        let request = decode_request(&buf).unwrap().unwrap();
        assert_eq!(
            request.argv,
            args(&["SET", "key", "va\r\nlue", "PX", "100"])
        );
    }

    #[test]
    fn decodes_pipelined_requests_one_at_a_time() {
        let mut buf = Vec::new();
        encode_request(&args(&["GET", "a"]), &mut buf);
        encode_request(&args(&["PTTL", "b"]), &mut buf);
        buf.extend_from_slice(b"PING\r\n");
        assert_eq!(
            decode_all(&buf).unwrap(),
            vec![args(&["GET", "a"]), args(&["PTTL", "b"]), args(&["PING"])]
        );
    }

    #[test]
    fn binary_bulk_strings_survive() {
        let mut buf = Vec::new();
        encode_request(&[b"SET".to_vec(), vec![0, 255, b'\r', b'\n']], &mut buf);
        let request = decode_request(&buf).unwrap().unwrap();
        assert_eq!(
            request.argv,
            vec![b"SET".to_vec(), vec![0, 255, b'\r', b'\n']]
        );
    }

    #[test]
    fn empty_multibulk_counts_are_skipped() {
        let empty: Vec<Vec<u8>> = Vec::new();
        assert_eq!(
            decode_all(b"*0\r\n*-1\r\n").unwrap(),
            vec![empty.clone(), empty]
        );
    }

    #[test]
    fn decodes_inline_commands() {
        assert_eq!(
            decode_all(b"set k  v\r\nget k\n\r\n").unwrap(),
            vec![args(&["set", "k", "v"]), args(&["get", "k"]), vec![]]
        );
        assert_eq!(decode_request(b"get k"), Ok(None));
    }

    #[test]
    fn inline_quotes_and_escapes() {
        assert_eq!(
            split_inline_args(br#"set "a b\x41\n" 'it\'s' x"y z"w"#),
            None,
            "a closing quote must be followed by a space"
        );
        assert_eq!(
            split_inline_args(br#"set "a b\x41\n\"" 'it\'s' x"y z""#).unwrap(),
            vec![
                b"set".to_vec(),
                b"a bA\n\"".to_vec(),
                b"it's".to_vec(),
                b"xy z".to_vec()
            ]
        );
        assert_eq!(split_inline_args(b"  ").unwrap(), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn unbalanced_quotes_are_a_protocol_error() {
        let error = decode_request(b"set \"k v\r\n").unwrap_err();
        assert_eq!(
            error.reply(),
            Reply::Error("ERR Protocol error: unbalanced quotes in request".into())
        );
        assert!(decode_request(b"get 'k\r\n").is_err());
    }

    #[test]
    fn malformed_multibulk_requests_get_redis_errors() {
        let cases: [(&[u8], &str); 8] = [
            (b"*x\r\n", "invalid multibulk length"),
            (b"*+1\r\n", "invalid multibulk length"),
            (b"*01\r\n", "invalid multibulk length"),
            (b"*2\r\n$4\r\nECHO\r\n$01\r\n", "invalid bulk length"),
            (b"*3000000000\r\n", "invalid multibulk length"),
            (b"*1\r\n+GET\r\n", "expected '$', got '+'"),
            (b"*1\r\n$-3\r\n", "invalid bulk length"),
            (b"*1\r\n$600000000\r\n", "invalid bulk length"),
        ];
        for (input, text) in cases {
            assert_eq!(
                decode_request(input),
                Err(ProtocolError(text.to_string())),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn overlong_lines_without_newline_are_protocol_errors() {
        let mut inline = vec![b'a'; INLINE_MAX_BYTES];
        assert_eq!(decode_request(&inline), Ok(None));
        inline.push(b'a');
        assert_eq!(
            decode_request(&inline),
            Err(ProtocolError("too big inline request".into()))
        );
        let mut count = b"*".to_vec();
        count.extend(vec![b'1'; INLINE_MAX_BYTES + 1]);
        assert_eq!(
            decode_request(&count),
            Err(ProtocolError("too big mbulk count string".into()))
        );
        let mut bulk = b"*1\r\n$".to_vec();
        bulk.extend(vec![b'1'; INLINE_MAX_BYTES + 1]);
        assert_eq!(
            decode_request(&bulk),
            Err(ProtocolError("too big bulk count string".into()))
        );
    }

    #[test]
    fn the_two_bytes_after_bulk_data_are_not_checked() {
        // As in Redis: `PINGxx` is read as `PING` followed by two skipped bytes.
        let buf = b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n";
        assert_eq!(
            decode_all(buf).unwrap(),
            vec![args(&["PING"]), args(&["PING"])]
        );
    }

    #[test]
    fn requests_before_a_malformed_one_still_decode() {
        let buf = b"*1\r\n$4\r\nPING\r\n*1\r\n:1\r\n";
        let first = decode_request(buf).unwrap().unwrap();
        assert_eq!(first.argv, args(&["PING"]));
        assert!(decode_request(&buf[first.consumed_bytes..]).is_err());
    }

    #[test]
    fn encodes_every_reply_kind() {
        let reply = Reply::Array(vec![
            Reply::ok(),
            Reply::error("ERR bad\r\nthing"),
            Reply::Integer(-2),
            Reply::Bulk(b"a\r\nb".to_vec()),
            Reply::Nil,
            Reply::Array(vec![]),
        ]);
        let mut out = Vec::new();
        encode_reply(&reply, &mut out);
        assert_eq!(
            out,
            b"*6\r\n+OK\r\n-ERR bad  thing\r\n:-2\r\n$4\r\na\r\nb\r\n$-1\r\n*0\r\n".to_vec()
        );
    }

    #[test]
    fn integers_are_parsed_strictly() {
        assert_eq!(parse_redis_integer(b"0"), Some(0));
        assert_eq!(parse_redis_integer(b"-12"), Some(-12));
        for bad in [
            &b""[..],
            b"-",
            b"01",
            b"-0",
            b"+1",
            b" 1",
            b"1x",
            b"99999999999999999999",
        ] {
            assert_eq!(parse_redis_integer(bad), None, "{bad:?}");
        }
    }

    /// Cross-checks against the `redis` crate's own encoder and parser.
    #[test]
    fn decodes_what_redis_rs_encodes_and_redis_rs_parses_replies() {
        let packed = redis::cmd("SET")
            .arg("lock")
            .arg(b"t\x00k")
            .arg("NX")
            .arg("PX")
            .arg(30_000)
            .get_packed_command();
        let request = decode_request(&packed).unwrap().unwrap();
        assert_eq!(request.consumed_bytes, packed.len());
        assert_eq!(
            request.argv,
            vec![
                b"SET".to_vec(),
                b"lock".to_vec(),
                b"t\x00k".to_vec(),
                b"NX".to_vec(),
                b"PX".to_vec(),
                b"30000".to_vec()
            ]
        );

        let mut out = Vec::new();
        encode_reply(
            &Reply::Array(vec![
                Reply::ok(),
                Reply::Integer(7),
                Reply::Bulk(b"v".to_vec()),
                Reply::Nil,
            ]),
            &mut out,
        );
        assert_eq!(
            redis::parse_redis_value(&out).unwrap(),
            redis::Value::Array(vec![
                redis::Value::Okay,
                redis::Value::Int(7),
                redis::Value::BulkString(b"v".to_vec()),
                redis::Value::Nil,
            ])
        );
        let mut out = Vec::new();
        encode_reply(
            &Reply::error("NOSCRIPT No matching script. Please use EVAL."),
            &mut out,
        );
        let value = redis::parse_redis_value(&out).unwrap();
        let redis::Value::ServerError(error) = value else {
            panic!("{value:?}")
        };
        assert_eq!(error.code(), "NOSCRIPT");
        assert_eq!(
            error.details(),
            Some("No matching script. Please use EVAL.")
        );
    }
}
