//! The PostgreSQL frontend/backend protocol v3: decoding what a client sends and encoding what
//! the server answers.
//!
//! Only the subset a `tokio-postgres` client (and `psql`) uses with trust authentication:
//! the startup packets, simple Query, the extended protocol (Parse, Bind, Describe, Execute,
//! Sync, Flush, Close) and Terminate. Limits and error texts follow PostgreSQL 15
//! (src/backend/tcop/postgres.c, src/backend/postmaster/postmaster.c,
//! src/backend/libpq/pqformat.c).

use leaselab_model::postgres::PgError;

/// The protocol version of a v3.0 StartupMessage.
pub const PROTOCOL_3_0: i32 = 196_608;
/// The request code of an SSLRequest.
pub const SSL_REQUEST_CODE: i32 = 80_877_103;
/// The request code of a GSSENCRequest.
pub const GSSENC_REQUEST_CODE: i32 = 80_877_104;
/// The request code of a CancelRequest.
pub const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// The longest startup packet body PostgreSQL accepts (`MAX_STARTUP_PACKET_LENGTH`), not
/// counting the 4-byte length word.
pub const STARTUP_PACKET_MAX_BYTES: usize = 10_000;
/// The longest Query, Parse or Bind message (`PQ_LARGE_MESSAGE_LIMIT`, 1 GiB - 1).
pub const LARGE_MESSAGE_MAX_BYTES: usize = (1 << 30) - 1;
/// The longest message of any other type (`PQ_SMALL_MESSAGE_LIMIT`).
pub const SMALL_MESSAGE_MAX_BYTES: usize = 10_000;

/// The type OID of `bigint` (`int8`).
pub const INT8_OID: u32 = 20;
/// The type OID of `smallint` (`int2`).
pub const INT2_OID: u32 = 21;
/// The type OID of `integer` (`int4`).
pub const INT4_OID: u32 = 23;

/// SQLSTATE `08P01` protocol_violation.
pub const PROTOCOL_VIOLATION: &str = "08P01";

/// A message the connection cannot recover from: answer with the error (if any) and close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatalWireError {
    /// The `FATAL` error to send first; `None` to close silently (PostgreSQL only logs it).
    pub error: Option<PgError>,
}

/// An error response with severity `ERROR`.
pub fn error(code: &'static str, message: impl Into<String>) -> PgError {
    PgError::error(code, message)
}

/// An error response with severity `FATAL` (the server closes the connection after it).
pub fn fatal(code: &'static str, message: impl Into<String>) -> PgError {
    PgError {
        severity: "FATAL",
        ..PgError::error(code, message)
    }
}

/// The first packet of a connection (it has no type byte).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartupPacket {
    /// SSLRequest: the server answers `N` (no TLS) and waits for the next startup packet.
    SslRequest,
    /// GSSENCRequest: answered `N` like SSLRequest.
    GssEncRequest,
    /// CancelRequest: the server closes the connection without answering.
    CancelRequest {
        /// The backend's process id.
        process_id: i32,
        /// The backend's secret key.
        secret_key: i32,
    },
    /// StartupMessage.
    Startup {
        /// Major version in the high 16 bits, minor in the low 16.
        protocol_version: i32,
        /// `user`, `database`, `application_name`, `client_encoding`, ... in the order sent.
        params: Vec<(String, String)>,
    },
}

/// A decoded packet and how many bytes of the buffer it used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<T> {
    /// The packet or message.
    pub message: T,
    /// How many bytes of the buffer it used.
    pub consumed_bytes: usize,
}

/// Decodes the startup packet at the front of `buf`; `Ok(None)` until it is complete.
pub fn decode_startup(buf: &[u8]) -> Result<Option<Decoded<StartupPacket>>, FatalWireError> {
    let Some(len) = read_i32_at(buf, 0) else {
        return Ok(None);
    };
    // PostgreSQL subtracts the length word before checking (src/backend/postmaster).
    let len = len as i64;
    if len - 4 < 4 || len - 4 > STARTUP_PACKET_MAX_BYTES as i64 {
        // PostgreSQL logs "invalid length of startup packet" and closes without a reply.
        return Err(FatalWireError { error: None });
    }
    let len = len as usize;
    if buf.len() < len {
        return Ok(None);
    }
    let code = read_i32_at(buf, 4).unwrap_or_default();
    let body = &buf[8..len];
    let message = match code {
        SSL_REQUEST_CODE => StartupPacket::SslRequest,
        GSSENC_REQUEST_CODE => StartupPacket::GssEncRequest,
        CANCEL_REQUEST_CODE => StartupPacket::CancelRequest {
            process_id: read_i32_at(body, 0).unwrap_or_default(),
            secret_key: read_i32_at(body, 4).unwrap_or_default(),
        },
        protocol_version => StartupPacket::Startup {
            protocol_version,
            params: decode_startup_params(body)?,
        },
    };
    Ok(Some(Decoded {
        message,
        consumed_bytes: len,
    }))
}

fn decode_startup_params(body: &[u8]) -> Result<Vec<(String, String)>, FatalWireError> {
    let layout_error = || FatalWireError {
        error: Some(fatal(
            PROTOCOL_VIOLATION,
            "invalid startup packet layout: expected terminator as last byte",
        )),
    };
    if body.last() != Some(&0) {
        return Err(layout_error());
    }
    let mut reader = Reader::new(&body[..body.len() - 1]);
    let mut params = Vec::new();
    while !reader.is_empty() {
        let name = reader.cstr().map_err(|_| layout_error())?;
        let value = reader.cstr().map_err(|_| layout_error())?;
        params.push((name, value));
    }
    Ok(params)
}

/// What a Describe or Close refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// `S`: a prepared statement.
    Statement,
    /// `P`: a portal.
    Portal,
}

/// A message from the client after startup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrontendMessage {
    /// `Q`: a simple query (one or more statements).
    Query {
        /// The SQL text.
        sql: String,
    },
    /// `P`: prepare a statement.
    Parse {
        /// The statement name (`""` for the unnamed statement).
        name: String,
        /// The SQL text.
        sql: String,
        /// Declared parameter type OIDs (0 = let the server infer).
        param_oids: Vec<u32>,
    },
    /// `B`: bind parameters to a prepared statement, making a portal.
    Bind {
        /// The portal name (`""` for the unnamed portal).
        portal: String,
        /// The prepared statement's name.
        statement: String,
        /// Parameter format codes (0 text, 1 binary): none, one for all, or one each.
        param_formats: Vec<i16>,
        /// Parameter values; `None` is SQL NULL.
        params: Vec<Option<Vec<u8>>>,
        /// Result column format codes: none, one for all, or one each.
        result_formats: Vec<i16>,
    },
    /// `D`: describe a statement or portal.
    Describe {
        /// Statement or portal.
        target: Target,
        /// Its name.
        name: String,
    },
    /// `E`: execute a portal.
    Execute {
        /// The portal name.
        portal: String,
        /// The most rows to return (0 = all).
        max_rows: i32,
    },
    /// `S`: end of an extended-protocol batch.
    Sync,
    /// `H`: send what is buffered.
    Flush,
    /// `C`: close a statement or portal.
    Close {
        /// Statement or portal.
        target: Target,
        /// Its name.
        name: String,
    },
    /// `X`: the client is leaving.
    Terminate,
    /// `F`: a function call by OID (the stand-in has no functions to call).
    FunctionCall {
        /// The function's OID.
        oid: u32,
    },
    /// `d`, `c` or `f` (CopyData, CopyDone, CopyFail) outside a COPY: PostgreSQL accepts and
    /// ignores them (a client may still be sending data for a COPY that failed).
    CopyIgnored,
}

/// True for the message types of the extended protocol, after whose errors the server skips
/// to the next Sync (as PostgreSQL's `doing_extended_query_message`: not Query, Terminate,
/// Sync itself, FunctionCall or the copy messages).
pub fn is_extended_type(type_byte: u8) -> bool {
    !matches!(type_byte, b'Q' | b'X' | b'S' | b'F' | b'd' | b'c' | b'f')
}

/// The prepared statement a Bind message names, read as far as PostgreSQL reads before it
/// looks the statement up (portal name, statement name); `None` if even that is malformed.
pub fn bind_statement_name(message: &[u8]) -> Option<String> {
    let mut reader = Reader::new(message.get(5..)?);
    reader.cstr().ok()?;
    reader.cstr().ok()
}

/// A frontend message that could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrontendError {
    /// The stream is unusable (bad length or unknown type): send the error if any, close.
    Fatal(FatalWireError),
    /// The message was framed correctly but its contents are malformed: an `ERROR`, after
    /// which the connection goes on (skipping to Sync in the extended protocol). The message
    /// is consumed.
    Malformed {
        /// The error to send (boxed: an error with all its fields is large).
        error: Box<PgError>,
        /// How many bytes the message used.
        consumed_bytes: usize,
        /// The message's type byte.
        type_byte: u8,
    },
}

/// Decodes the message at the front of `buf`; `Ok(None)` until it is complete.
pub fn decode_frontend(buf: &[u8]) -> Result<Option<Decoded<FrontendMessage>>, FrontendError> {
    let Some(&type_byte) = buf.first() else {
        return Ok(None);
    };
    let max_len = match type_byte {
        b'Q' | b'P' | b'B' | b'F' | b'd' => LARGE_MESSAGE_MAX_BYTES,
        b'S' | b'H' | b'X' | b'D' | b'E' | b'C' | b'c' | b'f' | b'p' => SMALL_MESSAGE_MAX_BYTES,
        other => {
            return Err(FrontendError::Fatal(FatalWireError {
                error: Some(fatal(
                    PROTOCOL_VIOLATION,
                    format!("invalid frontend message type {other}"),
                )),
            }))
        }
    };
    let Some(len) = read_i32_at(buf, 1) else {
        return Ok(None);
    };
    if len < 4 || len as i64 > max_len as i64 {
        // PostgreSQL reports "invalid message length" to the log only, then closes.
        return Err(FrontendError::Fatal(FatalWireError { error: None }));
    }
    let consumed_bytes = 1 + len as usize;
    if buf.len() < consumed_bytes {
        return Ok(None);
    }
    let mut reader = Reader::new(&buf[5..consumed_bytes]);
    match decode_body(type_byte, &mut reader).and_then(|message| {
        reader.expect_end()?;
        Ok(message)
    }) {
        Ok(message) => Ok(Some(Decoded {
            message,
            consumed_bytes,
        })),
        Err(BodyError::Unsupported) => Err(FrontendError::Fatal(FatalWireError {
            error: Some(fatal(
                PROTOCOL_VIOLATION,
                format!("invalid frontend message type {type_byte}"),
            )),
        })),
        Err(BodyError::Malformed(error)) => Err(FrontendError::Malformed {
            error: Box::new(error),
            consumed_bytes,
            type_byte,
        }),
    }
}

enum BodyError {
    Unsupported,
    Malformed(PgError),
}

impl From<PgError> for BodyError {
    fn from(error: PgError) -> BodyError {
        BodyError::Malformed(error)
    }
}

fn decode_body(type_byte: u8, reader: &mut Reader<'_>) -> Result<FrontendMessage, BodyError> {
    let message = match type_byte {
        b'Q' => FrontendMessage::Query {
            sql: reader.cstr()?,
        },
        b'P' => decode_parse(reader)?,
        b'B' => decode_bind(reader)?,
        b'D' => FrontendMessage::Describe {
            target: reader.target("DESCRIBE")?,
            name: reader.cstr()?,
        },
        b'E' => FrontendMessage::Execute {
            portal: reader.cstr()?,
            max_rows: reader.i32()?,
        },
        b'S' => FrontendMessage::Sync,
        b'H' => FrontendMessage::Flush,
        b'C' => FrontendMessage::Close {
            target: reader.target("CLOSE")?,
            name: reader.cstr()?,
        },
        b'X' => FrontendMessage::Terminate,
        b'd' | b'c' | b'f' => {
            reader.skip_rest();
            FrontendMessage::CopyIgnored
        }
        // PostgreSQL reads the OID, looks the function up, and only then the arguments.
        b'F' => {
            let oid = reader.i32()? as u32;
            reader.skip_rest();
            FrontendMessage::FunctionCall { oid }
        }
        _ => return Err(BodyError::Unsupported),
    };
    Ok(message)
}

fn decode_parse(reader: &mut Reader<'_>) -> Result<FrontendMessage, PgError> {
    let name = reader.cstr()?;
    let sql = reader.cstr()?;
    let count = reader.count()?;
    let mut param_oids = Vec::with_capacity(count.min(reader.remaining() / 4));
    for _ in 0..count {
        param_oids.push(reader.i32()? as u32);
    }
    Ok(FrontendMessage::Parse {
        name,
        sql,
        param_oids,
    })
}

fn decode_bind(reader: &mut Reader<'_>) -> Result<FrontendMessage, PgError> {
    let portal = reader.cstr()?;
    let statement = reader.cstr()?;
    let format_count = reader.count()?;
    let mut param_formats = Vec::with_capacity(format_count.min(reader.remaining() / 2));
    for _ in 0..format_count {
        param_formats.push(reader.i16()?);
    }
    let param_count = reader.count()?;
    let mut params = Vec::with_capacity(param_count.min(reader.remaining() / 4));
    for _ in 0..param_count {
        let len = reader.i32()?;
        params.push(if len == -1 {
            None
        } else if len < 0 {
            return Err(insufficient_data());
        } else {
            Some(reader.bytes(len as usize)?.to_vec())
        });
    }
    let result_count = reader.count()?;
    let mut result_formats = Vec::with_capacity(result_count.min(reader.remaining() / 2));
    for _ in 0..result_count {
        result_formats.push(reader.i16()?);
    }
    Ok(FrontendMessage::Bind {
        portal,
        statement,
        param_formats,
        params,
        result_formats,
    })
}

fn insufficient_data() -> PgError {
    error(PROTOCOL_VIOLATION, "insufficient data left in message")
}

fn read_i32_at(buf: &[u8], pos: usize) -> Option<i32> {
    let bytes = buf.get(pos..pos + 4)?;
    Some(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Reads the fields of one message body, with PostgreSQL's errors for short or bad data.
struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(body: &'a [u8]) -> Reader<'a> {
        Reader { body, pos: 0 }
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.body.len()
    }

    fn skip_rest(&mut self) {
        self.pos = self.body.len();
    }

    fn remaining(&self) -> usize {
        self.body.len() - self.pos
    }

    fn bytes(&mut self, len: usize) -> Result<&'a [u8], PgError> {
        if self.remaining() < len {
            return Err(insufficient_data());
        }
        let bytes = &self.body[self.pos..self.pos + len];
        self.pos += len;
        Ok(bytes)
    }

    fn i16(&mut self) -> Result<i16, PgError> {
        let bytes = self.bytes(2)?;
        Ok(i16::from_be_bytes([bytes[0], bytes[1]]))
    }

    fn i32(&mut self) -> Result<i32, PgError> {
        let bytes = self.bytes(4)?;
        Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// An Int16 count (never negative in a valid message).
    fn count(&mut self) -> Result<usize, PgError> {
        let count = self.i16()?;
        usize::try_from(count).map_err(|_| insufficient_data())
    }

    fn cstr(&mut self) -> Result<String, PgError> {
        let rest = &self.body[self.pos..];
        let Some(nul) = rest.iter().position(|&byte| byte == 0) else {
            return Err(error(PROTOCOL_VIOLATION, "invalid string in message"));
        };
        let text = std::str::from_utf8(&rest[..nul]).map_err(|_| {
            error(
                "22021",
                "invalid byte sequence for encoding \"UTF8\" in message string",
            )
        })?;
        self.pos += nul + 1;
        Ok(text.to_string())
    }

    fn target(&mut self, what: &str) -> Result<Target, PgError> {
        match self.bytes(1)?[0] {
            b'S' => Ok(Target::Statement),
            b'P' => Ok(Target::Portal),
            other => Err(error(
                PROTOCOL_VIOLATION,
                format!("invalid {what} message subtype {other}"),
            )),
        }
    }

    fn expect_end(&self) -> Result<(), PgError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(error(PROTOCOL_VIOLATION, "invalid message format"))
        }
    }
}

/// The transaction state a ReadyForQuery reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransactionStatus {
    /// `I`: not in a transaction block.
    Idle,
    /// `T`: in a transaction block.
    InTransaction,
    /// `E`: in a failed transaction block (statements refused until ROLLBACK).
    Failed,
}

impl TransactionStatus {
    /// The status byte.
    pub fn byte(self) -> u8 {
        match self {
            TransactionStatus::Idle => b'I',
            TransactionStatus::InTransaction => b'T',
            TransactionStatus::Failed => b'E',
        }
    }
}

/// The wire format of a value: text (0) or binary (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Format code 0.
    Text,
    /// Format code 1.
    Binary,
}

impl Format {
    /// The format of a format code; `unsupported format code: N` (22023) otherwise.
    pub fn from_code(code: i16) -> Result<Format, PgError> {
        match code {
            0 => Ok(Format::Text),
            1 => Ok(Format::Binary),
            other => Err(error("22023", format!("unsupported format code: {other}"))),
        }
    }

    /// The format code.
    pub fn code(self) -> i16 {
        match self {
            Format::Text => 0,
            Format::Binary => 1,
        }
    }
}

/// One column of a RowDescription; every column the server returns is a `bigint`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// The type OID (`bigint` for the typed statements).
    pub type_oid: u32,
    /// The format its values are sent in (text in a statement Describe).
    pub format: Format,
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendMessage {
    /// `R` with code 0: trust authentication succeeded.
    AuthenticationOk,
    /// `S`: a run-time parameter's value.
    ParameterStatus {
        /// The parameter name.
        name: String,
        /// Its value.
        value: String,
    },
    /// `K`: what a CancelRequest must quote.
    BackendKeyData {
        /// The backend's process id.
        process_id: i32,
        /// The secret key.
        secret_key: i32,
    },
    /// `v`: the newest minor protocol version the server supports, and the protocol options
    /// it did not recognise.
    NegotiateProtocolVersion {
        /// The newest minor version supported.
        newest_minor: i32,
        /// Unrecognised `_pq_.` options.
        unrecognized_options: Vec<String>,
    },
    /// `Z`: ready for the next query.
    ReadyForQuery(TransactionStatus),
    /// `T`: the columns of the rows that follow; all `bigint`.
    RowDescription(Vec<Column>),
    /// `D`: one row; `None` is SQL NULL.
    DataRow(Vec<Option<Vec<u8>>>),
    /// `C`: a statement finished, with its command tag.
    CommandComplete(String),
    /// `I`: the query string was empty.
    EmptyQueryResponse,
    /// `E`: an error.
    ErrorResponse(PgError),
    /// `N`: a notice, e.g. a `WARNING` (same fields as an error).
    NoticeResponse(PgError),
    /// `1`.
    ParseComplete,
    /// `2`.
    BindComplete,
    /// `3`.
    CloseComplete,
    /// `n`: the statement or portal returns no rows.
    NoData,
    /// `t`: the parameter types of a prepared statement.
    ParameterDescription(Vec<u32>),
    /// `s`: Execute stopped at its row limit; the portal can be executed again.
    PortalSuspended,
}

impl BackendMessage {
    /// Appends the message, framed (type byte and length), to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(self.type_byte());
        out.extend_from_slice(&[0; 4]);
        self.encode_body(out);
        let len = (out.len() - start - 1) as i32;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    }

    fn type_byte(&self) -> u8 {
        match self {
            BackendMessage::AuthenticationOk => b'R',
            BackendMessage::ParameterStatus { .. } => b'S',
            BackendMessage::BackendKeyData { .. } => b'K',
            BackendMessage::NegotiateProtocolVersion { .. } => b'v',
            BackendMessage::ReadyForQuery(_) => b'Z',
            BackendMessage::RowDescription(_) => b'T',
            BackendMessage::DataRow(_) => b'D',
            BackendMessage::CommandComplete(_) => b'C',
            BackendMessage::EmptyQueryResponse => b'I',
            BackendMessage::ErrorResponse(_) => b'E',
            BackendMessage::NoticeResponse(_) => b'N',
            BackendMessage::ParseComplete => b'1',
            BackendMessage::BindComplete => b'2',
            BackendMessage::CloseComplete => b'3',
            BackendMessage::NoData => b'n',
            BackendMessage::ParameterDescription(_) => b't',
            BackendMessage::PortalSuspended => b's',
        }
    }

    fn encode_body(&self, out: &mut Vec<u8>) {
        match self {
            BackendMessage::AuthenticationOk => put_i32(out, 0),
            BackendMessage::ParameterStatus { name, value } => {
                put_cstr(out, name);
                put_cstr(out, value);
            }
            BackendMessage::BackendKeyData {
                process_id,
                secret_key,
            } => {
                put_i32(out, *process_id);
                put_i32(out, *secret_key);
            }
            BackendMessage::NegotiateProtocolVersion {
                newest_minor,
                unrecognized_options,
            } => {
                put_i32(out, *newest_minor);
                put_i32(out, unrecognized_options.len() as i32);
                for option in unrecognized_options {
                    put_cstr(out, option);
                }
            }
            BackendMessage::ReadyForQuery(status) => out.push(status.byte()),
            BackendMessage::RowDescription(columns) => encode_row_description(columns, out),
            BackendMessage::DataRow(values) => {
                put_i16(out, values.len() as i16);
                for value in values {
                    match value {
                        None => put_i32(out, -1),
                        Some(bytes) => {
                            put_i32(out, bytes.len() as i32);
                            out.extend_from_slice(bytes);
                        }
                    }
                }
            }
            BackendMessage::CommandComplete(tag) => put_cstr(out, tag),
            BackendMessage::ErrorResponse(error) | BackendMessage::NoticeResponse(error) => {
                encode_error_fields(error, out)
            }
            BackendMessage::ParameterDescription(oids) => {
                put_i16(out, oids.len() as i16);
                for &oid in oids {
                    put_i32(out, oid as i32);
                }
            }
            BackendMessage::EmptyQueryResponse
            | BackendMessage::ParseComplete
            | BackendMessage::BindComplete
            | BackendMessage::CloseComplete
            | BackendMessage::NoData
            | BackendMessage::PortalSuspended => {}
        }
    }
}

fn encode_row_description(columns: &[Column], out: &mut Vec<u8>) {
    const NO_TABLE_OID: i32 = 0;
    const NO_ATTRIBUTE_NUMBER: i16 = 0;
    const INT8_SIZE_BYTES: i16 = 8;
    const NO_TYPE_MODIFIER: i32 = -1;
    put_i16(out, columns.len() as i16);
    for column in columns {
        put_cstr(out, &column.name);
        put_i32(out, NO_TABLE_OID);
        put_i16(out, NO_ATTRIBUTE_NUMBER);
        put_i32(out, column.type_oid as i32);
        put_i16(out, type_size(column.type_oid).unwrap_or(INT8_SIZE_BYTES));
        put_i32(out, NO_TYPE_MODIFIER);
        put_i16(out, column.format.code());
    }
}

/// The fixed size PostgreSQL reports for a type (-1: variable).
fn type_size(oid: u32) -> Option<i16> {
    Some(match oid {
        20 | 701 => 8,
        23 => 4,
        21 => 2,
        16 => 1,
        25 | 1700 => -1,
        _ => return None,
    })
}

fn encode_error_fields(error: &PgError, out: &mut Vec<u8>) {
    let mut field = |code: u8, value: &str| {
        out.push(code);
        put_cstr(out, value);
    };
    field(b'S', error.severity);
    field(b'V', error.severity);
    field(b'C', error.code);
    field(b'M', &error.message);
    if let Some(detail) = &error.detail {
        field(b'D', detail);
    }
    if let Some(hint) = &error.hint {
        field(b'H', hint);
    }
    if let Some(position) = error.position {
        field(b'P', &position.to_string());
    }
    if let Some(object) = &error.object {
        field(b's', &object.schema);
        field(b't', &object.table);
        if let Some(column) = &object.column {
            field(b'c', column);
        }
        if let Some(constraint) = &object.constraint {
            field(b'n', constraint);
        }
    }
    out.push(0);
}

fn put_i16(out: &mut Vec<u8>, value: i16) {
    out.extend_from_slice(&value.to_be_bytes());
}

fn put_i32(out: &mut Vec<u8>, value: i32) {
    out.extend_from_slice(&value.to_be_bytes());
}

/// Writes a NUL-terminated string; an embedded NUL (never produced by this server) would
/// end the string early, so it is dropped.
fn put_cstr(out: &mut Vec<u8>, text: &str) {
    out.extend(text.bytes().filter(|&byte| byte != 0));
    out.push(0);
}

/// Encodes a `bigint` value in `format`.
pub fn encode_int8(value: i64, format: Format) -> Vec<u8> {
    match format {
        Format::Text => value.to_string().into_bytes(),
        Format::Binary => value.to_be_bytes().to_vec(),
    }
}

/// An integer parameter type the server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntType {
    /// `smallint`.
    Int2,
    /// `integer`.
    Int4,
    /// `bigint`.
    Int8,
}

impl IntType {
    /// The type of a declared parameter OID (0, "unspecified", is inferred as `bigint`).
    pub fn from_oid(oid: u32) -> Option<IntType> {
        match oid {
            0 | INT8_OID => Some(IntType::Int8),
            INT4_OID => Some(IntType::Int4),
            INT2_OID => Some(IntType::Int2),
            _ => None,
        }
    }

    /// The type OID.
    pub fn oid(self) -> u32 {
        match self {
            IntType::Int2 => INT2_OID,
            IntType::Int4 => INT4_OID,
            IntType::Int8 => INT8_OID,
        }
    }

    /// The SQL name PostgreSQL uses in input errors.
    pub fn sql_name(self) -> &'static str {
        match self {
            IntType::Int2 => "smallint",
            IntType::Int4 => "integer",
            IntType::Int8 => "bigint",
        }
    }

    fn size_bytes(self) -> usize {
        match self {
            IntType::Int2 => 2,
            IntType::Int4 => 4,
            IntType::Int8 => 8,
        }
    }

    fn range(self) -> (i64, i64) {
        match self {
            IntType::Int2 => (i16::MIN as i64, i16::MAX as i64),
            IntType::Int4 => (i32::MIN as i64, i32::MAX as i64),
            IntType::Int8 => (i64::MIN, i64::MAX),
        }
    }
}

/// Decodes parameter `position` (1-based, for error texts) of type `ty` sent in `format`.
pub fn decode_int_param(
    bytes: &[u8],
    ty: IntType,
    format: Format,
    position: usize,
) -> Result<i64, PgError> {
    match format {
        // As the type's receive function reads it: too short runs out of data, too long
        // leaves bytes over.
        Format::Binary if bytes.len() < ty.size_bytes() => Err(insufficient_data()),
        Format::Binary => decode_binary_int(bytes, ty).ok_or_else(|| {
            error(
                "22P03",
                format!("incorrect binary data format in bind parameter {position}"),
            )
        }),
        Format::Text => decode_text_int(bytes, ty),
    }
}

fn decode_binary_int(bytes: &[u8], ty: IntType) -> Option<i64> {
    if bytes.len() != ty.size_bytes() {
        return None;
    }
    Some(match ty {
        IntType::Int2 => i16::from_be_bytes([bytes[0], bytes[1]]) as i64,
        IntType::Int4 => i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        IntType::Int8 => i64::from_be_bytes(bytes.try_into().ok()?),
    })
}

/// Parses text the way PostgreSQL's `int8in`/`int4in`/`int2in` do: optional white space
/// around, an optional sign, decimal digits.
fn decode_text_int(bytes: &[u8], ty: IntType) -> Result<i64, PgError> {
    let text = String::from_utf8_lossy(bytes);
    let invalid = || {
        error(
            "22P02",
            format!(
                "invalid input syntax for type {}: \"{}\"",
                ty.sql_name(),
                text
            ),
        )
    };
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let (negative, digits) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(invalid());
    }
    let out_of_range = || {
        error(
            "22003",
            format!(
                "value \"{}\" is out of range for type {}",
                text,
                ty.sql_name()
            ),
        )
    };
    let magnitude: i128 = digits.parse().map_err(|_| out_of_range())?;
    let value = if negative { -magnitude } else { magnitude };
    let (min, max) = ty.range();
    if value < min as i128 || value > max as i128 {
        return Err(out_of_range());
    }
    Ok(value as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(type_byte: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![type_byte];
        out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    fn decode_one(buf: &[u8]) -> FrontendMessage {
        let decoded = decode_frontend(buf).unwrap().unwrap();
        assert_eq!(decoded.consumed_bytes, buf.len());
        decoded.message
    }

    #[test]
    fn startup_packets() {
        let mut ssl = Vec::new();
        ssl.extend_from_slice(&8i32.to_be_bytes());
        ssl.extend_from_slice(&SSL_REQUEST_CODE.to_be_bytes());
        let decoded = decode_startup(&ssl).unwrap().unwrap();
        assert_eq!(decoded.message, StartupPacket::SslRequest);
        assert_eq!(decoded.consumed_bytes, 8);
        assert_eq!(decode_startup(&ssl[..7]), Ok(None));

        let mut body = PROTOCOL_3_0.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0alice\0database\0db\0\0");
        let mut startup = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        let decoded = decode_startup(&startup).unwrap().unwrap();
        assert_eq!(
            decoded.message,
            StartupPacket::Startup {
                protocol_version: PROTOCOL_3_0,
                params: vec![
                    ("user".into(), "alice".into()),
                    ("database".into(), "db".into())
                ],
            }
        );
        for len in 0..startup.len() {
            assert_eq!(decode_startup(&startup[..len]), Ok(None));
        }
    }

    #[test]
    fn bad_startup_packets_are_fatal() {
        let tiny = [0, 0, 0, 4, 0, 0, 0, 0];
        assert_eq!(
            decode_startup(&tiny),
            Err(FatalWireError { error: None }),
            "a length under 8 closes silently"
        );
        let huge = [0, 1, 0, 0, 0, 3, 0, 0];
        assert!(decode_startup(&huge).is_err());

        let mut body = PROTOCOL_3_0.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0alice");
        let mut startup = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        let error = decode_startup(&startup).unwrap_err().error.unwrap();
        assert_eq!(error.severity, "FATAL");
        assert_eq!(error.code, "08P01");
    }

    #[test]
    fn simple_and_extended_messages() {
        assert_eq!(
            decode_one(&framed(b'Q', b"BEGIN\0")),
            FrontendMessage::Query {
                sql: "BEGIN".into()
            }
        );
        let mut parse = b"s1\0SELECT $1\0".to_vec();
        parse.extend_from_slice(&[0, 2, 0, 0, 0, 20, 0, 0, 0, 0]);
        assert_eq!(
            decode_one(&framed(b'P', &parse)),
            FrontendMessage::Parse {
                name: "s1".into(),
                sql: "SELECT $1".into(),
                param_oids: vec![20, 0],
            }
        );
        let mut bind = b"p\0s1\0".to_vec();
        bind.extend_from_slice(&[0, 1, 0, 1]); // one format: binary
        bind.extend_from_slice(&[0, 2]); // two params
        bind.extend_from_slice(&[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7]);
        bind.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]); // NULL
        bind.extend_from_slice(&[0, 0]); // no result formats
        assert_eq!(
            decode_one(&framed(b'B', &bind)),
            FrontendMessage::Bind {
                portal: "p".into(),
                statement: "s1".into(),
                param_formats: vec![1],
                params: vec![Some(7i64.to_be_bytes().to_vec()), None],
                result_formats: vec![],
            }
        );
        assert_eq!(
            decode_one(&framed(b'D', b"Ss1\0")),
            FrontendMessage::Describe {
                target: Target::Statement,
                name: "s1".into()
            }
        );
        assert_eq!(
            decode_one(&framed(b'E', b"\0\0\0\0\x05")),
            FrontendMessage::Execute {
                portal: "".into(),
                max_rows: 5
            }
        );
        assert_eq!(
            decode_one(&framed(b'C', b"P\0")),
            FrontendMessage::Close {
                target: Target::Portal,
                name: "".into()
            }
        );
        assert_eq!(decode_one(&framed(b'S', b"")), FrontendMessage::Sync);
        assert_eq!(decode_one(&framed(b'H', b"")), FrontendMessage::Flush);
        assert_eq!(decode_one(&framed(b'X', b"")), FrontendMessage::Terminate);
    }

    #[test]
    fn partial_messages_wait_for_more() {
        let message = framed(b'Q', b"SELECT 1\0");
        for len in 0..message.len() {
            assert_eq!(decode_frontend(&message[..len]), Ok(None));
        }
    }

    #[test]
    fn unknown_types_and_bad_lengths_are_fatal() {
        match decode_frontend(&framed(b'x', b"")) {
            Err(FrontendError::Fatal(FatalWireError { error: Some(error) })) => {
                assert_eq!(error.message, "invalid frontend message type 120");
                assert_eq!(error.severity, "FATAL");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            decode_frontend(&[b'Q', 0, 0, 0, 3]),
            Err(FrontendError::Fatal(FatalWireError { error: None }))
        );
        assert_eq!(
            decode_frontend(&[b'S', 0, 1, 0, 0]),
            Err(FrontendError::Fatal(FatalWireError { error: None })),
            "a Sync longer than the small-message limit"
        );
    }

    #[test]
    fn malformed_bodies_are_recoverable_errors() {
        let message = framed(b'Q', b"no terminator");
        match decode_frontend(&message) {
            Err(FrontendError::Malformed {
                error,
                consumed_bytes,
                type_byte,
            }) => {
                assert_eq!(error.message, "invalid string in message");
                assert_eq!(consumed_bytes, message.len());
                assert!(!is_extended_type(type_byte));
            }
            other => panic!("{other:?}"),
        }
        match decode_frontend(&framed(b'S', b"x")) {
            Err(FrontendError::Malformed {
                error, type_byte, ..
            }) => {
                assert_eq!(error.message, "invalid message format");
                // An error in Sync itself does not start skipping to the next Sync.
                assert!(!is_extended_type(type_byte));
            }
            other => panic!("{other:?}"),
        }
        match decode_frontend(&framed(b'B', b"\0\0\0\x01\0\x01")) {
            Err(FrontendError::Malformed { error, .. }) => {
                assert_eq!(error.message, "insufficient data left in message")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backend_messages_are_framed() {
        let mut out = Vec::new();
        BackendMessage::ReadyForQuery(TransactionStatus::Failed).encode(&mut out);
        BackendMessage::CommandComplete("UPDATE 1".into()).encode(&mut out);
        BackendMessage::DataRow(vec![Some(encode_int8(-5, Format::Text)), None]).encode(&mut out);
        assert_eq!(
            out,
            [
                &b"Z\0\0\0\x05E"[..],
                b"C\0\0\0\x0dUPDATE 1\0",
                b"D\0\0\0\x10\0\x02\0\0\0\x02-5\xff\xff\xff\xff",
            ]
            .concat()
        );
    }

    #[test]
    fn error_response_fields() {
        let mut out = Vec::new();
        let mut error = error("23514", "new row violates");
        error.detail = Some("Failing row contains (1, -5, 0).".into());
        BackendMessage::ErrorResponse(error).encode(&mut out);
        let body =
            b"SERROR\0VERROR\0C23514\0Mnew row violates\0DFailing row contains (1, -5, 0).\0\0";
        assert_eq!(out, framed(b'E', body));
    }

    #[test]
    fn integer_parameters() {
        let bigint = IntType::Int8;
        assert_eq!(
            decode_int_param(&(-7i64).to_be_bytes(), bigint, Format::Binary, 1),
            Ok(-7)
        );
        assert_eq!(
            decode_int_param(&300i32.to_be_bytes(), IntType::Int4, Format::Binary, 1),
            Ok(300)
        );
        assert_eq!(
            decode_int_param(&[0, 1], IntType::Int2, Format::Binary, 1),
            Ok(1)
        );
        assert_eq!(
            decode_int_param(&[0; 9], bigint, Format::Binary, 2)
                .unwrap_err()
                .message,
            "incorrect binary data format in bind parameter 2"
        );
        let short = decode_int_param(&[0, 1], bigint, Format::Binary, 2).unwrap_err();
        assert_eq!(
            (short.code, short.message.as_str()),
            ("08P01", "insufficient data left in message")
        );
        assert_eq!(decode_int_param(b" +42 ", bigint, Format::Text, 1), Ok(42));
        assert_eq!(
            decode_int_param(b"-9223372036854775808", bigint, Format::Text, 1),
            Ok(i64::MIN)
        );
        let syntax = decode_int_param(b"4x", bigint, Format::Text, 1).unwrap_err();
        assert_eq!(
            (syntax.code, syntax.message.as_str()),
            ("22P02", "invalid input syntax for type bigint: \"4x\"")
        );
        let range = decode_int_param(b"99999999999999999999", bigint, Format::Text, 1).unwrap_err();
        assert_eq!(
            (range.code, range.message.as_str()),
            (
                "22003",
                "value \"99999999999999999999\" is out of range for type bigint"
            )
        );
        assert_eq!(
            decode_int_param(b"40000", IntType::Int2, Format::Text, 1)
                .unwrap_err()
                .code,
            "22003"
        );
        assert!(decode_int_param(b"", bigint, Format::Text, 1).is_err());
        assert!(decode_int_param(b"-", bigint, Format::Text, 1).is_err());
    }

    #[test]
    fn format_codes() {
        assert_eq!(Format::from_code(0), Ok(Format::Text));
        assert_eq!(Format::from_code(1), Ok(Format::Binary));
        assert_eq!(
            Format::from_code(2).unwrap_err().message,
            "unsupported format code: 2"
        );
    }

    /// Cross-checks against `postgres-protocol`, the codec `tokio-postgres` itself uses.
    mod against_client_codec {
        use super::super::*;
        use bytes::{BufMut, BytesMut};
        use postgres_protocol::message::{backend, frontend};
        use postgres_protocol::IsNull;
        use tokio_postgres::fallible_iterator::FallibleIterator;

        fn decode_frontend_all(mut buf: &[u8]) -> Vec<FrontendMessage> {
            let mut messages = Vec::new();
            while !buf.is_empty() {
                let decoded = decode_frontend(buf).unwrap().expect("complete message");
                messages.push(decoded.message);
                buf = &buf[decoded.consumed_bytes..];
            }
            messages
        }

        #[test]
        fn decodes_what_the_client_codec_encodes() {
            let mut buf = BytesMut::new();
            frontend::ssl_request(&mut buf);
            let ssl = decode_startup(&buf).unwrap().unwrap();
            assert_eq!(ssl.message, StartupPacket::SslRequest);

            let mut buf = BytesMut::new();
            frontend::startup_message([("client_encoding", "UTF8"), ("user", "u")], &mut buf)
                .unwrap();
            assert_eq!(
                decode_startup(&buf).unwrap().unwrap().message,
                StartupPacket::Startup {
                    protocol_version: PROTOCOL_3_0,
                    params: vec![
                        ("client_encoding".into(), "UTF8".into()),
                        ("user".into(), "u".into())
                    ],
                }
            );

            let mut buf = BytesMut::new();
            frontend::query("BEGIN", &mut buf).unwrap();
            frontend::parse("s0", "UPDATE x", [INT8_OID, 0], &mut buf).unwrap();
            frontend::describe(b'S', "s0", &mut buf).unwrap();
            let values = [Some(7i64.to_be_bytes().to_vec()), None];
            frontend::bind(
                "p1",
                "s0",
                [1, 0],
                values,
                |value: Option<Vec<u8>>, buf: &mut BytesMut| match value {
                    Some(bytes) => {
                        buf.put_slice(&bytes);
                        Ok(IsNull::No)
                    }
                    None => Ok(IsNull::Yes),
                },
                [1],
                &mut buf,
            )
            .map_err(|_| "bind")
            .unwrap();
            frontend::describe(b'P', "p1", &mut buf).unwrap();
            frontend::execute("p1", 10, &mut buf).unwrap();
            frontend::close(b'S', "s0", &mut buf).unwrap();
            frontend::flush(&mut buf);
            frontend::sync(&mut buf);
            frontend::terminate(&mut buf);
            assert_eq!(
                decode_frontend_all(&buf),
                vec![
                    FrontendMessage::Query {
                        sql: "BEGIN".into()
                    },
                    FrontendMessage::Parse {
                        name: "s0".into(),
                        sql: "UPDATE x".into(),
                        param_oids: vec![INT8_OID, 0],
                    },
                    FrontendMessage::Describe {
                        target: Target::Statement,
                        name: "s0".into()
                    },
                    FrontendMessage::Bind {
                        portal: "p1".into(),
                        statement: "s0".into(),
                        param_formats: vec![1, 0],
                        params: vec![Some(7i64.to_be_bytes().to_vec()), None],
                        result_formats: vec![1],
                    },
                    FrontendMessage::Describe {
                        target: Target::Portal,
                        name: "p1".into()
                    },
                    FrontendMessage::Execute {
                        portal: "p1".into(),
                        max_rows: 10
                    },
                    FrontendMessage::Close {
                        target: Target::Statement,
                        name: "s0".into()
                    },
                    FrontendMessage::Flush,
                    FrontendMessage::Sync,
                    FrontendMessage::Terminate,
                ]
            );
        }

        fn parse_backend_all(bytes: &[u8]) -> Vec<backend::Message> {
            let mut buf = BytesMut::from(bytes);
            let mut messages = Vec::new();
            while let Some(message) = backend::Message::parse(&mut buf).unwrap() {
                messages.push(message);
            }
            assert!(buf.is_empty(), "{} bytes left over", buf.len());
            messages
        }

        #[test]
        fn the_client_codec_parses_what_the_server_encodes() {
            let mut error = error("23514", "new row violates check constraint");
            error.detail = Some("Failing row contains (1, -5, 0).".into());
            let sent = [
                BackendMessage::AuthenticationOk,
                BackendMessage::ParameterStatus {
                    name: "server_version".into(),
                    value: "15.8".into(),
                },
                BackendMessage::BackendKeyData {
                    process_id: 3,
                    secret_key: -9,
                },
                BackendMessage::ReadyForQuery(TransactionStatus::InTransaction),
                BackendMessage::ParseComplete,
                BackendMessage::ParameterDescription(vec![INT8_OID, INT4_OID]),
                BackendMessage::RowDescription(vec![
                    Column {
                        name: "balance".into(),
                        type_oid: INT8_OID,
                        format: Format::Binary,
                    },
                    Column {
                        name: "fence".into(),
                        type_oid: INT8_OID,
                        format: Format::Text,
                    },
                ]),
                BackendMessage::NoData,
                BackendMessage::BindComplete,
                BackendMessage::DataRow(vec![
                    Some(encode_int8(90, Format::Binary)),
                    Some(encode_int8(-3, Format::Text)),
                ]),
                BackendMessage::PortalSuspended,
                BackendMessage::CommandComplete("UPDATE 1".into()),
                BackendMessage::EmptyQueryResponse,
                BackendMessage::CloseComplete,
                BackendMessage::ErrorResponse(error),
            ];
            let mut bytes = Vec::new();
            for message in &sent {
                message.encode(&mut bytes);
            }
            let parsed = parse_backend_all(&bytes);
            assert_eq!(parsed.len(), sent.len());
            let mut parsed = parsed.into_iter();
            let mut next = || parsed.next().unwrap();
            assert!(matches!(next(), backend::Message::AuthenticationOk));
            let backend::Message::ParameterStatus(status) = next() else {
                panic!()
            };
            assert_eq!(
                (status.name().unwrap(), status.value().unwrap()),
                ("server_version", "15.8")
            );
            let backend::Message::BackendKeyData(key) = next() else {
                panic!()
            };
            assert_eq!((key.process_id(), key.secret_key()), (3, -9));
            let backend::Message::ReadyForQuery(ready) = next() else {
                panic!()
            };
            assert_eq!(ready.status(), b'T');
            assert!(matches!(next(), backend::Message::ParseComplete));
            let backend::Message::ParameterDescription(params) = next() else {
                panic!()
            };
            assert_eq!(
                params.parameters().collect::<Vec<_>>().unwrap(),
                vec![INT8_OID, INT4_OID]
            );
            let backend::Message::RowDescription(rows) = next() else {
                panic!()
            };
            let fields: Vec<(String, u32, i16, i16)> = rows
                .fields()
                .map(|field| {
                    Ok((
                        field.name().to_string(),
                        field.type_oid(),
                        field.type_size(),
                        field.format(),
                    ))
                })
                .collect()
                .unwrap();
            assert_eq!(
                fields,
                vec![
                    ("balance".to_string(), INT8_OID, 8, 1),
                    ("fence".to_string(), INT8_OID, 8, 0)
                ]
            );
            assert!(matches!(next(), backend::Message::NoData));
            assert!(matches!(next(), backend::Message::BindComplete));
            let backend::Message::DataRow(row) = next() else {
                panic!()
            };
            let values: Vec<Vec<u8>> = row
                .ranges()
                .map(|range| Ok(row.buffer()[range.unwrap()].to_vec()))
                .collect()
                .unwrap();
            assert_eq!(values, vec![90i64.to_be_bytes().to_vec(), b"-3".to_vec()]);
            assert!(matches!(next(), backend::Message::PortalSuspended));
            let backend::Message::CommandComplete(complete) = next() else {
                panic!()
            };
            assert_eq!(complete.tag().unwrap(), "UPDATE 1");
            assert!(matches!(next(), backend::Message::EmptyQueryResponse));
            assert!(matches!(next(), backend::Message::CloseComplete));
            let backend::Message::ErrorResponse(body) = next() else {
                panic!()
            };
            let fields: Vec<(u8, String)> = body
                .fields()
                .map(|field| {
                    Ok((
                        field.type_(),
                        String::from_utf8_lossy(field.value_bytes()).into_owned(),
                    ))
                })
                .collect()
                .unwrap();
            assert_eq!(
                fields,
                vec![
                    (b'S', "ERROR".to_string()),
                    (b'V', "ERROR".to_string()),
                    (b'C', "23514".to_string()),
                    (b'M', "new row violates check constraint".to_string()),
                    (b'D', "Failing row contains (1, -5, 0).".to_string()),
                ]
            );
        }
    }
}
