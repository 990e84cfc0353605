//! RESP2: decoding requests (multibulk arrays and inline commands) and encoding replies.
//!
//! The decoder follows Redis 7's `processMultibulkBuffer` / `processInlineBuffer`
//! (src/networking.c): the same limits and the same protocol error texts, so a malformed
//! request gets the error reply Redis would send, after which the server closes the
//! connection.

pub use leaselab_model::redis::split_args::split_args as split_inline_args;
use leaselab_model::redis::Reply;

/// The longest inline request, or count line, Redis buffers without a newline (64 KiB).
pub const INLINE_MAX_BYTES: usize = 64 * 1024;

/// The largest bulk string a client may send (`proto-max-bulk-len`, 512 MiB).
pub const BULK_MAX_BYTES: i64 = 512 * 1024 * 1024;

/// The most bytes one connection may hold of requests not yet executed (Redis's
/// `client-query-buffer-limit`, 1 GiB); a client over it is disconnected without a reply.
pub const QUERY_BUFFER_MAX_BYTES: usize = 1024 * 1024 * 1024;

/// The largest multibulk count Redis accepts (`INT_MAX`).
const MULTIBULK_MAX_COUNT: i64 = i32::MAX as i64;

/// How many argument slots to reserve up front at most, whatever count the client announced.
const PREALLOCATED_ARGS_MAX: usize = 64;

/// A malformed request. The bytes are what follows `Protocol error: ` (Redis may put any
/// byte of the request there, as in `expected '$', got '\xff'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub Vec<u8>);

impl ProtocolError {
    fn new(text: impl Into<Vec<u8>>) -> ProtocolError {
        ProtocolError(text.into())
    }

    /// The text after `Protocol error: `, with any byte that is not UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// Appends the reply Redis sends before closing, `-ERR Protocol error: <text>\r\n`, byte
    /// for byte (a carriage return or line feed in the text becomes a space, as in Redis).
    pub fn encode_reply(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"-ERR Protocol error: ");
        out.extend(self.0.iter().map(|&byte| match byte {
            b'\r' | b'\n' => b' ',
            other => other,
        }));
        out.extend_from_slice(b"\r\n");
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

/// Decodes the first request in `buf` (a convenience over [`RequestReader`] for a buffer that
/// is all there is so far).
///
/// `Ok(None)` means the request is not complete yet: read more and call again with the
/// same bytes at the front. An error means the connection is unusable: reply with
/// [`ProtocolError::encode_reply`] and close.
pub fn decode_request(buf: &[u8]) -> Result<Option<Request>, ProtocolError> {
    let mut reader = RequestReader::new();
    reader.push(buf);
    Ok(reader.next_request()?.map(|argv| Request {
        argv,
        consumed_bytes: reader.pos,
    }))
}

/// A multibulk request whose count has been read but not all of its arguments.
#[derive(Debug, Default)]
struct PendingMultibulk {
    /// Arguments still to read.
    remaining: usize,
    /// The length of the next argument, once its `$<len>` line has been read.
    bulk_len: Option<usize>,
    /// The arguments read so far.
    argv: Vec<Vec<u8>>,
    /// Their total size.
    argv_bytes: usize,
}

/// Reads the requests of one connection as they arrive, as Redis 7's `processInputBuffer`
/// does (src/networking.c): a multibulk request is consumed line by line and argument by
/// argument, so a request is never parsed twice, and nothing is reserved because of a count
/// or length the client announced.
///
/// Redis looks for line ends with C's `strchr`, which stops at a zero byte: a zero byte in an
/// inline request or a count line hides everything after it, so such a request stays
/// incomplete until more than 64 KiB are waiting ("too big inline request").
#[derive(Debug, Default)]
pub struct RequestReader {
    buf: Vec<u8>,
    pos: usize,
    pending: Option<PendingMultibulk>,
}

impl RequestReader {
    /// An empty reader.
    pub fn new() -> RequestReader {
        RequestReader::default()
    }

    /// Appends bytes read from the connection.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held for requests not yet returned: unparsed input and the arguments read so far
    /// of an incomplete request.
    pub fn held_bytes(&self) -> usize {
        self.unparsed()
            + self
                .pending
                .as_ref()
                .map_or(0, |pending| pending.argv_bytes)
    }

    /// True when [`held_bytes`](Self::held_bytes) is over [`QUERY_BUFFER_MAX_BYTES`]: Redis
    /// closes such a connection without a reply.
    pub fn over_limit(&self) -> bool {
        self.held_bytes() > QUERY_BUFFER_MAX_BYTES
    }

    /// Bytes of memory the reader has reserved: its buffer and the arguments of an incomplete
    /// request (never more than what arrived, give or take growth slack).
    pub fn reserved_bytes(&self) -> usize {
        self.buf.capacity()
            + self.pending.as_ref().map_or(0, |pending| {
                pending.argv.capacity() * std::mem::size_of::<Vec<u8>>()
                    + pending.argv.iter().map(Vec::capacity).sum::<usize>()
            })
    }

    fn unparsed(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next complete request: `Ok(None)` until one has fully arrived, an empty argv for
    /// the requests Redis skips (`*0`, `*-1`, an empty line). An error means the connection
    /// is unusable: reply with [`ProtocolError::encode_reply`] and close.
    pub fn next_request(&mut self) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        if self.pending.is_none() {
            match self.buf.get(self.pos) {
                None => return Ok(None),
                Some(b'*') => {}
                Some(_) => return self.next_inline(),
            }
            let Some(count_end) = self.line_end(b'\r', "too big mbulk count string")? else {
                return Ok(None);
            };
            let count = match parse_redis_integer(&self.buf[self.pos + 1..count_end]) {
                Some(count) if count <= MULTIBULK_MAX_COUNT => count,
                _ => return Err(ProtocolError::new("invalid multibulk length")),
            };
            self.pos = count_end + 2;
            if count <= 0 {
                return Ok(Some(Vec::new()));
            }
            let count = count as usize;
            self.pending = Some(PendingMultibulk {
                remaining: count,
                argv: Vec::with_capacity(count.min(PREALLOCATED_ARGS_MAX)),
                ..PendingMultibulk::default()
            });
        }
        loop {
            let pending = self
                .pending
                .as_ref()
                .expect("a multibulk request is pending");
            if pending.remaining == 0 {
                break;
            }
            let len = match pending.bulk_len {
                Some(len) => len,
                None => {
                    let Some(len_end) = self.line_end(b'\r', "too big bulk count string")? else {
                        return Ok(None);
                    };
                    let marker = self.buf[self.pos];
                    if marker != b'$' {
                        let mut text = b"expected '$', got '".to_vec();
                        text.push(marker);
                        text.push(b'\'');
                        return Err(ProtocolError(text));
                    }
                    let len = match parse_redis_integer(&self.buf[self.pos + 1..len_end]) {
                        Some(len) if (0..=BULK_MAX_BYTES).contains(&len) => len as usize,
                        _ => return Err(ProtocolError::new("invalid bulk length")),
                    };
                    self.pos = len_end + 2;
                    len
                }
            };
            let pending = self
                .pending
                .as_mut()
                .expect("a multibulk request is pending");
            // Like Redis, the two bytes after the data are skipped without being checked.
            if self.buf.len() - self.pos < len + 2 {
                pending.bulk_len = Some(len);
                return Ok(None);
            }
            pending
                .argv
                .push(self.buf[self.pos..self.pos + len].to_vec());
            pending.argv_bytes += len;
            pending.bulk_len = None;
            pending.remaining -= 1;
            self.pos += len + 2;
        }
        Ok(self.pending.take().map(|pending| pending.argv))
    }

    /// Finds the `stop` byte that ends the line at the read position, as `strchr` would: the
    /// search also ends at a zero byte, and finds nothing then. `Ok(None)` until the byte
    /// after a `\r` has arrived too (Redis skips it without looking); `too_big` is the error
    /// once more than 64 KiB wait without an end.
    fn line_end(&self, stop: u8, too_big: &str) -> Result<Option<usize>, ProtocolError> {
        let found = self.buf[self.pos..]
            .iter()
            .position(|&byte| byte == stop || byte == 0)
            .map(|offset| self.pos + offset)
            .filter(|&end| self.buf[end] == stop);
        match found {
            None if self.unparsed() > INLINE_MAX_BYTES => Err(ProtocolError::new(too_big)),
            None => Ok(None),
            Some(end) if stop == b'\r' && end + 2 > self.buf.len() => Ok(None),
            Some(end) => Ok(Some(end)),
        }
    }

    fn next_inline(&mut self) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let Some(newline) = self.line_end(b'\n', "too big inline request")? else {
            return Ok(None);
        };
        let line_end = if newline > self.pos && self.buf[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        let argv = split_inline_args(&self.buf[self.pos..line_end])
            .ok_or_else(|| ProtocolError::new("unbalanced quotes in request"))?;
        self.pos = newline + 1;
        Ok(Some(argv))
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
        Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
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
        let mut out = Vec::new();
        error.encode_reply(&mut out);
        assert_eq!(
            out,
            b"-ERR Protocol error: unbalanced quotes in request\r\n".to_vec()
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
                Err(ProtocolError(text.as_bytes().to_vec())),
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
            Err(ProtocolError(b"too big inline request".to_vec()))
        );
        let mut count = b"*".to_vec();
        count.extend(vec![b'1'; INLINE_MAX_BYTES + 1]);
        assert_eq!(
            decode_request(&count),
            Err(ProtocolError(b"too big mbulk count string".to_vec()))
        );
        let mut bulk = b"*1\r\n$".to_vec();
        bulk.extend(vec![b'1'; INLINE_MAX_BYTES + 1]);
        assert_eq!(
            decode_request(&bulk),
            Err(ProtocolError(b"too big bulk count string".to_vec()))
        );
    }

    #[test]
    fn a_zero_byte_hides_the_rest_of_an_inline_request_or_count_line() {
        // Redis searches line ends with strchr, which stops at the zero byte: these wait
        // for more input (and are never split into an endless run of empty arguments).
        for input in [
            &b"\x00\r\n"[..],
            b"SET a\x00b c\r\n",
            b"PING\x00\r\n",
            b"*1\x00\r\n",
            b"*1\r\n$4\x00\r\nPING\r\n",
        ] {
            assert_eq!(decode_request(input), Ok(None), "{input:?}");
        }
        // ... until more than 64 KiB wait.
        let mut big = b"SET a\x00b\r\n".to_vec();
        big.resize(INLINE_MAX_BYTES + 1, b'x');
        assert_eq!(
            decode_request(&big),
            Err(ProtocolError(b"too big inline request".to_vec()))
        );
        // A zero byte inside bulk data is data.
        let request = decode_request(b"*1\r\n$4\r\nPI\x00G\r\n").unwrap().unwrap();
        assert_eq!(request.argv, vec![b"PI\x00G".to_vec()]);
        // And a zero byte ends a line handed to the splitter directly.
        assert_eq!(
            split_inline_args(b"SET a\x00b c").unwrap(),
            args(&["SET", "a"])
        );
        assert_eq!(split_inline_args(b"\x00").unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(split_inline_args(b"\"a\x00\""), None);
    }

    #[test]
    fn the_64_kib_limits_count_from_the_start_of_the_line() {
        let mut count = b"*".to_vec();
        count.resize(INLINE_MAX_BYTES, b'1');
        assert_eq!(decode_request(&count), Ok(None));
        count.push(b'1');
        assert!(decode_request(&count).is_err());
        let mut bulk = b"*1\r\n$".to_vec();
        bulk.resize(4 + INLINE_MAX_BYTES, b'1');
        assert_eq!(decode_request(&bulk), Ok(None));
        bulk.push(b'1');
        assert!(decode_request(&bulk).is_err());
    }

    #[test]
    fn a_reader_fed_byte_by_byte_gives_the_same_requests() {
        let mut buf = Vec::new();
        encode_request(&args(&["SET", "key", "va\r\nlue"]), &mut buf);
        buf.extend_from_slice(b"get 'k' \"\\x41\"\r\n*0\r\n");
        encode_request(&args(&["PING"]), &mut buf);
        let mut reader = RequestReader::new();
        let mut requests = Vec::new();
        for &byte in &buf {
            reader.push(&[byte]);
            while let Some(argv) = reader.next_request().unwrap() {
                requests.push(argv);
            }
        }
        assert_eq!(
            requests,
            vec![
                args(&["SET", "key", "va\r\nlue"]),
                args(&["get", "k", "A"]),
                vec![],
                args(&["PING"])
            ]
        );
        assert_eq!(reader.held_bytes(), 0);
    }

    #[test]
    fn announced_sizes_reserve_nothing_and_held_bytes_count_what_arrived() {
        let mut reader = RequestReader::new();
        reader.push(b"*2147483647\r\n$536870912\r\nabc");
        assert_eq!(reader.next_request(), Ok(None));
        assert_eq!(reader.held_bytes(), 3);
        assert!(reader.buf.capacity() < 1024);
        let pending = reader.pending.as_ref().unwrap();
        assert!(pending.argv.capacity() <= PREALLOCATED_ARGS_MAX);
        assert!(!reader.over_limit());
    }

    #[test]
    fn a_protocol_error_is_encoded_byte_for_byte() {
        let error = decode_request(b"*1\r\n\xff\r\n").unwrap_err();
        let mut out = Vec::new();
        error.encode_reply(&mut out);
        assert_eq!(
            out,
            b"-ERR Protocol error: expected '$', got '\xff'\r\n".to_vec()
        );
        let error = decode_request(b"*1\r\n\r\n").unwrap_err();
        let mut out = Vec::new();
        error.encode_reply(&mut out);
        assert_eq!(
            out,
            b"-ERR Protocol error: expected '$', got ' '\r\n".to_vec()
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
