//! Response messages (spec section 4.2), both directions, with the body envelope.
//!
//! Decoding (client side): [`ResponseFrame::decode`] takes a [`Frame`] (decompressing it
//! when the flag is set and compression was negotiated), reads the envelope (tracing id,
//! warnings, custom payload: spec sections 2.2 and 4) and the message. Byte payloads (row
//! content, paging state, prepared id) are zero-copy slices of the frame body; column specs
//! and error texts are owned (decoded once per result or error).
//!
//! Encoding (server side, for the stub server and tests): [`encode_response`] writes a whole
//! frame into a buffer, truncating back on error.

use std::net::{IpAddr, SocketAddr};

use bytes::{BufMut, Bytes, BytesMut};

use crate::compression::Compression;
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::{patch_length, Direction, Flags, Frame, FrameHeader, Opcode, HEADER_LEN};
use crate::metadata::{PreparedMetadata, RowsMetadata};
use crate::rows::Rows;
use crate::scylla_extensions::{Extensions, RateLimitError};
use crate::version::ProtocolVersion;
use crate::wire::{self, Reader};

/// The error codes of spec section 9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 0x0000: something unexpected happened on the server.
    ServerError,
    /// 0x000A: the client broke the protocol.
    ProtocolError,
    /// 0x0100: authentication failed.
    AuthenticationError,
    /// 0x1000: not enough replicas alive.
    Unavailable,
    /// 0x1001: the coordinator is overloaded.
    Overloaded,
    /// 0x1002: the coordinator is bootstrapping.
    IsBootstrapping,
    /// 0x1003: truncation failed.
    TruncateError,
    /// 0x1100: a write timed out.
    WriteTimeout,
    /// 0x1200: a read timed out.
    ReadTimeout,
    /// 0x1300: a read failed on replicas.
    ReadFailure,
    /// 0x1400: a user-defined function failed.
    FunctionFailure,
    /// 0x1500: a write failed on replicas.
    WriteFailure,
    /// 0x1600 (v5): a write to a CDC-tracked table failed (the spec gives it no fields).
    CdcWriteFailure,
    /// 0x1700 (v5): a contended compare-and-set may or may not have been applied.
    CasWriteUnknown,
    /// 0x2000: CQL syntax error.
    SyntaxError,
    /// 0x2100: not allowed.
    Unauthorized,
    /// 0x2200: invalid query.
    Invalid,
    /// 0x2300: configuration problem.
    ConfigError,
    /// 0x2400: keyspace or table already exists.
    AlreadyExists,
    /// 0x2500: prepared id unknown to this node.
    Unprepared,
    /// A code this protocol version does not define (kept, not rejected).
    Other(i32),
}

impl ErrorCode {
    /// The code for a wire value.
    pub fn from_code(code: i32) -> Self {
        match code {
            0x0000 => Self::ServerError,
            0x000A => Self::ProtocolError,
            0x0100 => Self::AuthenticationError,
            0x1000 => Self::Unavailable,
            0x1001 => Self::Overloaded,
            0x1002 => Self::IsBootstrapping,
            0x1003 => Self::TruncateError,
            0x1100 => Self::WriteTimeout,
            0x1200 => Self::ReadTimeout,
            0x1300 => Self::ReadFailure,
            0x1400 => Self::FunctionFailure,
            0x1500 => Self::WriteFailure,
            0x1600 => Self::CdcWriteFailure,
            0x1700 => Self::CasWriteUnknown,
            0x2000 => Self::SyntaxError,
            0x2100 => Self::Unauthorized,
            0x2200 => Self::Invalid,
            0x2300 => Self::ConfigError,
            0x2400 => Self::AlreadyExists,
            0x2500 => Self::Unprepared,
            other => Self::Other(other),
        }
    }

    /// The wire value.
    pub fn code(self) -> i32 {
        match self {
            Self::ServerError => 0x0000,
            Self::ProtocolError => 0x000A,
            Self::AuthenticationError => 0x0100,
            Self::Unavailable => 0x1000,
            Self::Overloaded => 0x1001,
            Self::IsBootstrapping => 0x1002,
            Self::TruncateError => 0x1003,
            Self::WriteTimeout => 0x1100,
            Self::ReadTimeout => 0x1200,
            Self::ReadFailure => 0x1300,
            Self::FunctionFailure => 0x1400,
            Self::WriteFailure => 0x1500,
            Self::CdcWriteFailure => 0x1600,
            Self::CasWriteUnknown => 0x1700,
            Self::SyntaxError => 0x2000,
            Self::Unauthorized => 0x2100,
            Self::Invalid => 0x2200,
            Self::ConfigError => 0x2300,
            Self::AlreadyExists => 0x2400,
            Self::Unprepared => 0x2500,
            Self::Other(c) => c,
        }
    }

    /// A short name (`"write timeout"`), for messages and per-kind counters.
    pub fn name(self) -> &'static str {
        match self {
            Self::ServerError => "server error",
            Self::ProtocolError => "protocol error",
            Self::AuthenticationError => "authentication error",
            Self::Unavailable => "unavailable",
            Self::Overloaded => "overloaded",
            Self::IsBootstrapping => "is bootstrapping",
            Self::TruncateError => "truncate error",
            Self::WriteTimeout => "write timeout",
            Self::ReadTimeout => "read timeout",
            Self::ReadFailure => "read failure",
            Self::FunctionFailure => "function failure",
            Self::WriteFailure => "write failure",
            Self::CdcWriteFailure => "cdc write failure",
            Self::CasWriteUnknown => "cas write unknown",
            Self::SyntaxError => "syntax error",
            Self::Unauthorized => "unauthorized",
            Self::Invalid => "invalid",
            Self::ConfigError => "config error",
            Self::AlreadyExists => "already exists",
            Self::Unprepared => "unprepared",
            Self::Other(_) => "unknown error",
        }
    }
}

/// One replica's entry in a v5 failure's `<reason_map>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureReason {
    /// The replica that failed.
    pub endpoint: IpAddr,
    /// Why (spec section 9: 0x0000 unknown, 0x0001 too many tombstones, 0x0002 timeout, ...;
    /// kept as sent: a newer server may send codes this crate does not name).
    pub code: u16,
}

/// Reads `<cl><received><blockfor>`, the start of the timeout and failure errors' fields.
fn read_acks(r: &mut Reader<'_>) -> Result<(Consistency, i32, i32)> {
    Ok((
        Consistency::decode(r)?,
        r.read_int("received")?,
        r.read_int("block for")?,
    ))
}

/// Writes what [`read_acks`] reads.
fn put_acks(buf: &mut BytesMut, consistency: Consistency, received: i32, block_for: i32) {
    consistency.encode(buf);
    buf.put_i32(received);
    buf.put_i32(block_for);
}

/// Reads `<numfailures>` (v4) or `<reason_map>` (v5): the count, and the reasons in v5.
fn read_failures(r: &mut Reader<'_>, v5: bool) -> Result<(i32, Vec<FailureReason>)> {
    if !v5 {
        return Ok((r.read_int("failures")?, Vec::new()));
    }
    let reasons = read_reasons(r)?;
    // read_count bounded it by the bytes left, far below i32::MAX.
    let failures = i32::try_from(reasons.len()).unwrap_or(i32::MAX);
    Ok((failures, reasons))
}

/// Reads a v5 `<reason_map>`: an `[int]` n, then n `<endpoint><failure_code>`.
fn read_reasons(r: &mut Reader<'_>) -> Result<Vec<FailureReason>> {
    // An entry takes at least 7 bytes (size byte, IPv4 address, code).
    let n = crate::metadata::read_count(r, "reason map entries", 7)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(FailureReason {
            endpoint: r.read_inetaddr("failed replica")?,
            code: r.read_short("failure code")?,
        });
    }
    Ok(out)
}

/// Writes the count of failed replicas: `<numfailures>` in v4, `<reason_map>` in v5 (whose
/// count is the reasons'; `failures` must agree with it).
fn put_failures(
    buf: &mut BytesMut,
    version: ProtocolVersion,
    failures: i32,
    reasons: &[FailureReason],
) -> Result<()> {
    if !version.has_v5_fields() {
        buf.put_i32(failures);
        return Ok(());
    }
    if usize::try_from(failures).ok() != Some(reasons.len()) {
        return Err(ProtoError::InvalidValue {
            what: "reason map",
            detail: format!("{failures} failures but {} reasons", reasons.len()),
        });
    }
    buf.put_i32(failures);
    for reason in reasons {
        wire::put_inetaddr(buf, reason.endpoint);
        buf.put_u16(reason.code);
    }
    Ok(())
}

/// The extra fields some error codes carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorDetail {
    /// Codes with no extra field.
    None,
    /// Unavailable: level, replicas required, replicas alive.
    Unavailable {
        /// Consistency asked for.
        consistency: Consistency,
        /// Replicas needed.
        required: i32,
        /// Replicas alive.
        alive: i32,
    },
    /// Write timeout.
    WriteTimeout {
        /// Consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// `SIMPLE`, `BATCH`, `UNLOGGED_BATCH`, `COUNTER`, `BATCH_LOG`, `CAS`, `VIEW`, `CDC`.
        write_type: String,
        /// v5, `CAS` writes only: contentions during the compare-and-set.
        contentions: Option<u16>,
    },
    /// Read timeout.
    ReadTimeout {
        /// Consistency asked for.
        consistency: Consistency,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// Whether the replica asked for data answered.
        data_present: bool,
    },
    /// Read failure.
    ReadFailure {
        /// Consistency asked for.
        consistency: Consistency,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// Replicas that failed.
        failures: i32,
        /// v5: which replicas failed and why (empty in v4, which sends the count only).
        reasons: Vec<FailureReason>,
        /// Whether the replica asked for data answered.
        data_present: bool,
    },
    /// Function failure.
    FunctionFailure {
        /// Keyspace of the function.
        keyspace: String,
        /// Function name.
        function: String,
        /// CQL types of its arguments.
        arg_types: Vec<String>,
    },
    /// Write failure.
    WriteFailure {
        /// Consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// Replicas that failed.
        failures: i32,
        /// v5: which replicas failed and why (empty in v4, which sends the count only).
        reasons: Vec<FailureReason>,
        /// The kind of write.
        write_type: String,
    },
    /// v5: a compare-and-set whose outcome is unknown.
    CasWriteUnknown {
        /// Consistency asked for.
        consistency: Consistency,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
    },
    /// Already exists: keyspace, and table (empty when a keyspace exists).
    AlreadyExists {
        /// Keyspace.
        keyspace: String,
        /// Table, or empty.
        table: String,
    },
    /// Unprepared: the id the node does not know.
    Unprepared {
        /// The prepared id.
        id: Bytes,
    },
    /// Fields after the message of a code the specification does not define, as a protocol
    /// extension adds them; kept raw until [`ErrorResponse::read_extension`] reads them as
    /// the extension the connection negotiated for that code.
    Extension {
        /// The bytes after the message.
        fields: Bytes,
    },
    /// ScyllaDB's rate-limit error (`SCYLLA_RATE_LIMIT_ERROR`, its code chosen by the node):
    /// which operation was refused, and by whom. Never to be retried.
    RateLimit(RateLimitError),
}

/// An ERROR message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorResponse {
    /// The code.
    pub code: ErrorCode,
    /// The server's message.
    pub message: String,
    /// Code-specific fields.
    pub detail: ErrorDetail,
}

impl ErrorResponse {
    /// Reads the raw fields of an extension's code ([`ErrorDetail::Extension`]) as the
    /// extension that `extensions` (what the connection negotiated) gives that code: the
    /// rate-limit error. Fields that do not read as it stay raw; other errors are untouched.
    pub fn read_extension(&mut self, extensions: &Extensions) {
        let ErrorCode::Other(code) = self.code else {
            return;
        };
        if extensions.rate_limit_code != Some(code) {
            return;
        }
        if let ErrorDetail::Extension { fields } = &self.detail {
            if let Ok(limit) = RateLimitError::decode(fields) {
                self.detail = ErrorDetail::RateLimit(limit);
            }
        }
    }
}

impl std::fmt::Display for ErrorResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (0x{:04x}): {}",
            self.code.name(),
            self.code.code(),
            self.message
        )
    }
}

impl ErrorResponse {
    fn decode(r: &mut Reader<'_>, body: &Bytes, version: ProtocolVersion) -> Result<Self> {
        let v5 = version.has_v5_fields();
        let code = ErrorCode::from_code(r.read_int("error code")?);
        let message = r.read_string("error message")?.to_owned();
        let detail = match code {
            ErrorCode::Unavailable => ErrorDetail::Unavailable {
                consistency: Consistency::decode(r)?,
                required: r.read_int("required replicas")?,
                alive: r.read_int("alive replicas")?,
            },
            ErrorCode::WriteTimeout => {
                let (consistency, received, block_for) = read_acks(r)?;
                let write_type = r.read_string("write type")?.to_owned();
                let contentions = (v5 && write_type == "CAS")
                    .then(|| r.read_short("contentions"))
                    .transpose()?;
                ErrorDetail::WriteTimeout {
                    consistency,
                    received,
                    block_for,
                    write_type,
                    contentions,
                }
            }
            ErrorCode::ReadTimeout => {
                let (consistency, received, block_for) = read_acks(r)?;
                ErrorDetail::ReadTimeout {
                    consistency,
                    received,
                    block_for,
                    data_present: r.read_byte("data present")? != 0,
                }
            }
            ErrorCode::ReadFailure => {
                let (consistency, received, block_for) = read_acks(r)?;
                let (failures, reasons) = read_failures(r, v5)?;
                ErrorDetail::ReadFailure {
                    consistency,
                    received,
                    block_for,
                    failures,
                    reasons,
                    data_present: r.read_byte("data present")? != 0,
                }
            }
            ErrorCode::FunctionFailure => ErrorDetail::FunctionFailure {
                keyspace: r.read_string("function keyspace")?.to_owned(),
                function: r.read_string("function name")?.to_owned(),
                arg_types: r
                    .read_string_list("function argument types")?
                    .map(str::to_owned)
                    .collect(),
            },
            ErrorCode::WriteFailure => {
                let (consistency, received, block_for) = read_acks(r)?;
                let (failures, reasons) = read_failures(r, v5)?;
                ErrorDetail::WriteFailure {
                    consistency,
                    received,
                    block_for,
                    failures,
                    reasons,
                    write_type: r.read_string("write type")?.to_owned(),
                }
            }
            ErrorCode::CasWriteUnknown if v5 => {
                let (consistency, received, block_for) = read_acks(r)?;
                ErrorDetail::CasWriteUnknown {
                    consistency,
                    received,
                    block_for,
                }
            }
            ErrorCode::AlreadyExists => ErrorDetail::AlreadyExists {
                keyspace: r.read_string("existing keyspace")?.to_owned(),
                table: r.read_string("existing table")?.to_owned(),
            },
            ErrorCode::Unprepared => ErrorDetail::Unprepared {
                id: body.slice_ref(r.read_short_bytes("unprepared id")?),
            },
            ErrorCode::Other(_) if !r.is_empty() => ErrorDetail::Extension {
                fields: body.slice_ref(r.take(r.remaining(), "extension fields")?),
            },
            _ => ErrorDetail::None,
        };
        Ok(Self {
            code,
            message,
            detail,
        })
    }

    fn encode(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        buf.put_i32(self.code.code());
        wire::put_string(buf, &self.message, "error message")?;
        match &self.detail {
            ErrorDetail::None => {}
            ErrorDetail::Extension { fields } => buf.put_slice(fields),
            ErrorDetail::RateLimit(limit) => buf.put_slice(&limit.encode()),
            ErrorDetail::Unavailable {
                consistency,
                required,
                alive,
            } => {
                consistency.encode(buf);
                buf.put_i32(*required);
                buf.put_i32(*alive);
            }
            ErrorDetail::WriteTimeout {
                consistency,
                received,
                block_for,
                write_type,
                contentions,
            } => {
                put_acks(buf, *consistency, *received, *block_for);
                wire::put_string(buf, write_type, "write type")?;
                if version.has_v5_fields() && write_type == "CAS" {
                    buf.put_u16(contentions.unwrap_or(0));
                }
            }
            ErrorDetail::ReadTimeout {
                consistency,
                received,
                block_for,
                data_present,
            } => {
                put_acks(buf, *consistency, *received, *block_for);
                buf.put_u8(u8::from(*data_present));
            }
            ErrorDetail::ReadFailure {
                consistency,
                received,
                block_for,
                failures,
                reasons,
                data_present,
            } => {
                put_acks(buf, *consistency, *received, *block_for);
                put_failures(buf, version, *failures, reasons)?;
                buf.put_u8(u8::from(*data_present));
            }
            ErrorDetail::FunctionFailure {
                keyspace,
                function,
                arg_types,
            } => {
                wire::put_string(buf, keyspace, "function keyspace")?;
                wire::put_string(buf, function, "function name")?;
                wire::put_string_list(
                    buf,
                    arg_types.iter().map(String::as_str),
                    "function argument types",
                )?;
            }
            ErrorDetail::WriteFailure {
                consistency,
                received,
                block_for,
                failures,
                reasons,
                write_type,
            } => {
                put_acks(buf, *consistency, *received, *block_for);
                put_failures(buf, version, *failures, reasons)?;
                wire::put_string(buf, write_type, "write type")?;
            }
            ErrorDetail::CasWriteUnknown {
                consistency,
                received,
                block_for,
            } => {
                put_acks(buf, *consistency, *received, *block_for);
            }
            ErrorDetail::AlreadyExists { keyspace, table } => {
                wire::put_string(buf, keyspace, "existing keyspace")?;
                wire::put_string(buf, table, "existing table")?;
            }
            ErrorDetail::Unprepared { id } => wire::put_short_bytes(buf, id, "unprepared id")?,
        }
        Ok(())
    }
}

/// What a schema change touched (RESULT Schema_change and EVENT SCHEMA_CHANGE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaTarget {
    /// A keyspace.
    Keyspace(String),
    /// A table: keyspace and name.
    Table(String, String),
    /// A user type: keyspace and name.
    Type(String, String),
    /// A function: keyspace, name, argument types.
    Function(String, String, Vec<String>),
    /// An aggregate: keyspace, name, argument types.
    Aggregate(String, String, Vec<String>),
}

/// A schema change: `CREATED`, `UPDATED` or `DROPPED`, and its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// `CREATED`, `UPDATED` or `DROPPED`.
    pub change: String,
    /// What changed.
    pub target: SchemaTarget,
}

impl SchemaChange {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let change = r.read_string("schema change type")?.to_owned();
        let target = r.read_string("schema change target")?;
        let mut s = |what| r.read_string(what).map(str::to_owned);
        let target = match target {
            "KEYSPACE" => SchemaTarget::Keyspace(s("keyspace")?),
            "TABLE" => SchemaTarget::Table(s("keyspace")?, s("table")?),
            "TYPE" => SchemaTarget::Type(s("keyspace")?, s("type")?),
            "FUNCTION" | "AGGREGATE" => {
                let ks = s("keyspace")?;
                let name = s("function name")?;
                let args = r
                    .read_string_list("argument types")?
                    .map(str::to_owned)
                    .collect();
                if target == "FUNCTION" {
                    SchemaTarget::Function(ks, name, args)
                } else {
                    SchemaTarget::Aggregate(ks, name, args)
                }
            }
            other => {
                return Err(ProtoError::InvalidValue {
                    what: "schema change target",
                    detail: format!("{other:?}"),
                })
            }
        };
        Ok(Self { change, target })
    }

    fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        wire::put_string(buf, &self.change, "schema change type")?;
        let (target, ks, name, args): (&str, &str, Option<&str>, Option<&[String]>) =
            match &self.target {
                SchemaTarget::Keyspace(k) => ("KEYSPACE", k, None, None),
                SchemaTarget::Table(k, t) => ("TABLE", k, Some(t), None),
                SchemaTarget::Type(k, t) => ("TYPE", k, Some(t), None),
                SchemaTarget::Function(k, f, a) => ("FUNCTION", k, Some(f), Some(a)),
                SchemaTarget::Aggregate(k, f, a) => ("AGGREGATE", k, Some(f), Some(a)),
            };
        wire::put_string(buf, target, "schema change target")?;
        wire::put_string(buf, ks, "keyspace")?;
        if let Some(n) = name {
            wire::put_string(buf, n, "name")?;
        }
        if let Some(a) = args {
            wire::put_string_list(buf, a.iter().map(String::as_str), "argument types")?;
        }
        Ok(())
    }
}

/// A RESULT Prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The id to EXECUTE with (zero-copy slice of the frame body).
    pub id: Bytes,
    /// v5: the id of the result metadata, sent back with every EXECUTE (`None` in v4).
    pub result_metadata_id: Option<Bytes>,
    /// Bind markers and partition-key indexes.
    pub metadata: PreparedMetadata,
    /// The columns an execution will return (may be empty with `no_metadata`).
    pub result_metadata: RowsMetadata,
}

/// A RESULT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBody {
    /// Nothing to return.
    Void,
    /// Rows, read lazily.
    Rows(Rows),
    /// `USE` succeeded.
    SetKeyspace(String),
    /// PREPARE succeeded (boxed: rare, and large enough to slow every move of a result).
    Prepared(Box<Prepared>),
    /// A schema-altering statement succeeded.
    SchemaChange(SchemaChange),
}

/// An EVENT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `NEW_NODE` or `REMOVED_NODE`, and the node's address.
    TopologyChange {
        /// The change.
        change: String,
        /// The node.
        node: SocketAddr,
    },
    /// `UP` or `DOWN`, and the node's address.
    StatusChange {
        /// The change.
        change: String,
        /// The node.
        node: SocketAddr,
    },
    /// A schema change.
    SchemaChange(SchemaChange),
}

/// A response message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// ERROR (boxed: rare, and large enough to slow every move of a `Response`).
    Error(Box<ErrorResponse>),
    /// READY.
    Ready,
    /// AUTHENTICATE with the server's authenticator class.
    Authenticate(String),
    /// SUPPORTED options.
    Supported(Vec<(String, Vec<String>)>),
    /// RESULT.
    Result(ResultBody),
    /// EVENT.
    Event(Event),
    /// AUTH_CHALLENGE token.
    AuthChallenge(Option<Bytes>),
    /// AUTH_SUCCESS final token.
    AuthSuccess(Option<Bytes>),
}

/// A decoded response frame: stream, envelope and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseFrame {
    /// The protocol version of its header.
    pub version: ProtocolVersion,
    /// The stream id of the request this answers (-1 for events).
    pub stream: i16,
    /// Tracing session id, when tracing was asked for.
    pub tracing_id: Option<[u8; 16]>,
    /// Warnings the server attached.
    pub warnings: Vec<String>,
    /// Custom payload, if any.
    pub custom_payload: Option<Vec<(String, Option<Bytes>)>>,
    /// The message.
    pub response: Response,
}

/// Returns the frame's body, decompressed if its flag says so.
///
/// Fails if the flag is set and nothing was negotiated.
pub fn frame_body(
    frame: &Frame,
    compression: Option<Compression>,
    max_len: usize,
) -> Result<Bytes> {
    if frame.header.flags.contains(Flags::COMPRESSION) {
        match compression {
            Some(c) => c.decompress(&frame.body, max_len),
            None => Err(ProtoError::UnexpectedCompression),
        }
    } else {
        Ok(frame.body.clone())
    }
}

/// Where the rows of a Rows result start in the body, once their metadata and count have
/// been read (the content is the rest of the body).
struct RowsAt {
    metadata: RowsMetadata,
    rows_count: usize,
    offset: usize,
}

// Inlined into the decoder: the hot path of every SELECT (the rows are then built in place
// rather than moved through returns).
#[inline(always)]
fn read_rows(r: &mut Reader<'_>, body: &Bytes) -> Result<RowsAt> {
    let metadata = RowsMetadata::decode(r, body)?;
    let rows_count = r.read_int("rows count")?;
    let rows_count = usize::try_from(rows_count).map_err(|_| ProtoError::InvalidLength {
        what: "rows count",
        len: rows_count.into(),
    })?;
    // Every row holds `columns_count` [bytes], 4 bytes each at least: a count that cannot
    // fit in what is left is rejected now rather than when the rows are read.
    let min = rows_count.saturating_mul(metadata.columns_count.saturating_mul(4));
    if min > r.remaining() {
        return Err(ProtoError::Truncated {
            what: "rows content",
            needed: min,
            available: r.remaining(),
        });
    }
    let offset = body.len() - r.remaining();
    r.take(r.remaining(), "rows content")?;
    Ok(RowsAt {
        metadata,
        rows_count,
        offset,
    })
}

/// A frame body the decoder reads from and cuts the rows content out of. Borrowed today
/// (each zero-copy slice takes a reference); an owned body that hands the rows its own
/// reference was measured slower (the larger result was copied out of the decoder).
trait BodySource {
    fn bytes(&self) -> &Bytes;
    /// The body from `offset` to its end.
    fn tail(self, offset: usize) -> Bytes;
}

impl BodySource for &Bytes {
    #[inline]
    fn bytes(&self) -> &Bytes {
        self
    }
    #[inline]
    fn tail(self, offset: usize) -> Bytes {
        self.slice(offset..)
    }
}

/// A decoded message, or a Rows result whose content is still to be cut from the body.
enum Decoded {
    Message(Response),
    Rows(RowsAt),
}

impl ResponseFrame {
    /// Decodes a response frame. `compression` is what STARTUP negotiated; `max_len` bounds a
    /// decompressed body.
    #[inline]
    pub fn decode(frame: &Frame, compression: Option<Compression>, max_len: usize) -> Result<Self> {
        if frame.header.flags.contains(Flags::COMPRESSION) {
            let body = frame_body(frame, compression, max_len)?;
            Self::decode_body(&frame.header, &body)
        } else {
            // Borrow the body: no refcount traffic but the rows content's slice.
            Self::decode_body(&frame.header, &frame.body)
        }
    }

    #[inline(always)]
    fn decode_body(header: &FrameHeader, source: impl BodySource) -> Result<Self> {
        if header.direction != Direction::Response {
            return Err(ProtoError::WrongDirection {
                found: "request",
                expected: "response",
            });
        }
        let flags = header.flags;
        let opcode = header.opcode;
        let body = source.bytes();
        let mut r = Reader::new(body);
        let tracing_id = if flags.contains(Flags::TRACING) {
            Some(r.read_uuid("tracing id")?)
        } else {
            None
        };
        let warnings = if flags.contains(Flags::WARNING) {
            r.read_string_list("warnings")?.map(str::to_owned).collect()
        } else {
            Vec::new()
        };
        let custom_payload = if flags.contains(Flags::CUSTOM_PAYLOAD) {
            Some(
                r.read_bytes_map("custom payload")?
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.map(|v| body.slice_ref(v))))
                    .collect(),
            )
        } else {
            None
        };
        let decoded = match opcode {
            Opcode::Error => Decoded::Message(Response::Error(Box::new(ErrorResponse::decode(
                &mut r,
                body,
                header.version,
            )?))),
            Opcode::Ready => Decoded::Message(Response::Ready),
            Opcode::Authenticate => Decoded::Message(Response::Authenticate(
                r.read_string("authenticator class")?.to_owned(),
            )),
            Opcode::Supported => Decoded::Message(Response::Supported(
                r.read_string_multimap("SUPPORTED options")?
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
                    .collect(),
            )),
            Opcode::Result => match r.read_int("result kind")? {
                0x0001 => Decoded::Message(Response::Result(ResultBody::Void)),
                0x0002 => Decoded::Rows(read_rows(&mut r, body)?),
                0x0003 => Decoded::Message(Response::Result(ResultBody::SetKeyspace(
                    r.read_string("keyspace")?.to_owned(),
                ))),
                0x0004 => {
                    let id = body.slice_ref(r.read_short_bytes("prepared id")?);
                    let result_metadata_id = header
                        .version
                        .has_v5_fields()
                        .then(|| r.read_short_bytes("result metadata id"))
                        .transpose()?
                        .map(|rid| body.slice_ref(rid));
                    let metadata = PreparedMetadata::decode(&mut r)?;
                    let result_metadata = RowsMetadata::decode(&mut r, body)?;
                    Decoded::Message(Response::Result(ResultBody::Prepared(Box::new(Prepared {
                        id,
                        result_metadata_id,
                        metadata,
                        result_metadata,
                    }))))
                }
                0x0005 => Decoded::Message(Response::Result(ResultBody::SchemaChange(
                    SchemaChange::decode(&mut r)?,
                ))),
                other => {
                    return Err(ProtoError::InvalidValue {
                        what: "result kind",
                        detail: format!("0x{other:04x}"),
                    })
                }
            },
            Opcode::Event => {
                Decoded::Message(Response::Event(match r.read_string("event type")? {
                    "TOPOLOGY_CHANGE" => Event::TopologyChange {
                        change: r.read_string("topology change")?.to_owned(),
                        node: r.read_inet("node address")?,
                    },
                    "STATUS_CHANGE" => Event::StatusChange {
                        change: r.read_string("status change")?.to_owned(),
                        node: r.read_inet("node address")?,
                    },
                    "SCHEMA_CHANGE" => Event::SchemaChange(SchemaChange::decode(&mut r)?),
                    other => {
                        return Err(ProtoError::InvalidValue {
                            what: "event type",
                            detail: format!("{other:?}"),
                        })
                    }
                }))
            }
            Opcode::AuthChallenge => Decoded::Message(Response::AuthChallenge(
                r.read_bytes("auth challenge")?.map(|t| body.slice_ref(t)),
            )),
            Opcode::AuthSuccess => Decoded::Message(Response::AuthSuccess(
                r.read_bytes("auth success")?.map(|t| body.slice_ref(t)),
            )),
            other => {
                return Err(ProtoError::UnexpectedMessage {
                    found: other.name(),
                    expected: "a response",
                })
            }
        };
        r.expect_end(opcode.name())?;
        let response = match decoded {
            Decoded::Message(m) => m,
            Decoded::Rows(at) => Response::Result(ResultBody::Rows(Rows {
                metadata: at.metadata,
                rows_count: at.rows_count,
                content: source.tail(at.offset),
            })),
        };
        Ok(Self {
            version: header.version,
            stream: header.stream,
            tracing_id,
            warnings,
            custom_payload,
            response,
        })
    }
}

impl Response {
    /// The message's opcode.
    pub fn opcode(&self) -> Opcode {
        match self {
            Response::Error(_) => Opcode::Error,
            Response::Ready => Opcode::Ready,
            Response::Authenticate(_) => Opcode::Authenticate,
            Response::Supported(_) => Opcode::Supported,
            Response::Result(_) => Opcode::Result,
            Response::Event(_) => Opcode::Event,
            Response::AuthChallenge(_) => Opcode::AuthChallenge,
            Response::AuthSuccess(_) => Opcode::AuthSuccess,
        }
    }

    /// Appends the message body (no envelope) as `version` lays it out.
    pub fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        match self {
            Response::Error(e) => e.encode(buf, version),
            Response::Ready => Ok(()),
            Response::Authenticate(class) => wire::put_string(buf, class, "authenticator class"),
            Response::Supported(opts) => wire::put_string_multimap(buf, opts, "SUPPORTED options"),
            Response::Result(res) => match res {
                ResultBody::Void => {
                    buf.put_i32(0x0001);
                    Ok(())
                }
                ResultBody::Rows(rows) => {
                    buf.put_i32(0x0002);
                    rows.metadata.encode(buf)?;
                    buf.put_i32(i32::try_from(rows.rows_count).map_err(|_| {
                        ProtoError::TooLong {
                            what: "rows count",
                            len: rows.rows_count,
                            limit: i32::MAX as usize,
                        }
                    })?);
                    buf.put_slice(&rows.content);
                    Ok(())
                }
                ResultBody::SetKeyspace(ks) => {
                    buf.put_i32(0x0003);
                    wire::put_string(buf, ks, "keyspace")
                }
                ResultBody::Prepared(p) => {
                    buf.put_i32(0x0004);
                    wire::put_short_bytes(buf, &p.id, "prepared id")?;
                    match (&p.result_metadata_id, version.has_v5_fields()) {
                        (Some(rid), true) => {
                            wire::put_short_bytes(buf, rid, "result metadata id")?;
                        }
                        (None, false) => {}
                        (_, v5) => {
                            return Err(ProtoError::InvalidValue {
                                what: "PREPARED result metadata id",
                                detail: if v5 {
                                    "is required in protocol v5".into()
                                } else {
                                    "does not exist in protocol v4".into()
                                },
                            })
                        }
                    }
                    p.metadata.encode(buf)?;
                    p.result_metadata.encode(buf)
                }
                ResultBody::SchemaChange(c) => {
                    buf.put_i32(0x0005);
                    c.encode(buf)
                }
            },
            Response::Event(ev) => match ev {
                Event::TopologyChange { change, node } | Event::StatusChange { change, node } => {
                    let kind = if matches!(ev, Event::TopologyChange { .. }) {
                        "TOPOLOGY_CHANGE"
                    } else {
                        "STATUS_CHANGE"
                    };
                    wire::put_string(buf, kind, "event type")?;
                    wire::put_string(buf, change, "change")?;
                    wire::put_inet(buf, *node);
                    Ok(())
                }
                Event::SchemaChange(c) => {
                    wire::put_string(buf, "SCHEMA_CHANGE", "event type")?;
                    c.encode(buf)
                }
            },
            Response::AuthChallenge(t) => wire::put_bytes(buf, t.as_deref(), "auth challenge"),
            Response::AuthSuccess(t) => wire::put_bytes(buf, t.as_deref(), "auth success"),
        }
    }
}

/// Custom-payload entries to encode: keys and values (`None` for null).
pub type PayloadEntries<'a> = &'a [(&'a str, Option<&'a [u8]>)];

/// The envelope of a response being encoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Envelope<'a> {
    /// The protocol version (v4 unless set).
    pub version: ProtocolVersion,
    /// Tracing session id.
    pub tracing_id: Option<[u8; 16]>,
    /// Warnings.
    pub warnings: &'a [&'a str],
    /// Custom payload.
    pub custom_payload: Option<PayloadEntries<'a>>,
}

/// Appends a whole response frame: header, envelope, body, patched length; compressed when
/// `compression` is given (v4 only: v5 compresses segments). On error `buf` is truncated
/// back to its length on entry.
pub fn encode_response(
    buf: &mut BytesMut,
    stream: i16,
    envelope: &Envelope<'_>,
    response: &Response,
    compression: Option<Compression>,
) -> Result<()> {
    let start = buf.len();
    let result = (|| {
        let mut flags = Flags::NONE;
        if envelope.tracing_id.is_some() {
            flags = flags.with(Flags::TRACING);
        }
        if !envelope.warnings.is_empty() {
            flags = flags.with(Flags::WARNING);
        }
        if envelope.custom_payload.is_some() {
            flags = flags.with(Flags::CUSTOM_PAYLOAD);
        }
        if compression.is_some() {
            if envelope.version.has_segments() {
                return Err(ProtoError::InvalidValue {
                    what: "envelope compression",
                    detail: "protocol v5 compresses segments, not envelopes".into(),
                });
            }
            flags = flags.with(Flags::COMPRESSION);
        }
        FrameHeader {
            version: envelope.version,
            direction: Direction::Response,
            flags,
            stream,
            opcode: response.opcode(),
            length: 0,
        }
        .write_to(buf);
        let write_body = |out: &mut BytesMut| -> Result<()> {
            if let Some(id) = envelope.tracing_id {
                out.put_slice(&id);
            }
            if !envelope.warnings.is_empty() {
                wire::put_string_list(out, envelope.warnings.iter().copied(), "warnings")?;
            }
            if let Some(p) = envelope.custom_payload {
                wire::put_bytes_map(out, p, "custom payload")?;
            }
            response.encode_body(out, envelope.version)
        };
        match compression {
            None => write_body(buf)?,
            Some(c) => {
                // The server side compresses through a scratch buffer (not a client hot path).
                let mut plain = BytesMut::new();
                write_body(&mut plain)?;
                c.compress(&plain, buf)?;
            }
        }
        let len = buf.len() - start - HEADER_LEN;
        let len = u32::try_from(len).map_err(|_| ProtoError::TooLong {
            what: "response body",
            len,
            limit: u32::MAX as usize,
        })?;
        patch_length(&mut buf[start..], len)
    })();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameDecoder;
    use crate::metadata::ColumnSpec;
    use crate::types::ColumnType;

    fn round_trip(env: &Envelope<'_>, r: &Response, c: Option<Compression>) -> ResponseFrame {
        let mut buf = BytesMut::new();
        encode_response(&mut buf, 7, env, r, c).unwrap();
        let frame = FrameDecoder::new(Direction::Response)
            .with_version(env.version)
            .decode(&mut buf)
            .unwrap()
            .unwrap();
        assert!(buf.is_empty());
        let back = ResponseFrame::decode(&frame, c, 1 << 20).unwrap();
        assert_eq!(back.stream, 7);
        assert_eq!(&back.response, r);
        back
    }

    fn col(name: &str, typ: ColumnType) -> ColumnSpec {
        ColumnSpec::new("ks", "t", name, typ)
    }

    /// v4's responses, with the v5 fields a v5 server adds to them.
    fn as_v5(r: &Response) -> Response {
        match r {
            Response::Result(ResultBody::Prepared(p)) => {
                let mut p = p.clone();
                p.result_metadata_id = Some(Bytes::from_static(&[0xcd; 16]));
                Response::Result(ResultBody::Prepared(p))
            }
            Response::Result(ResultBody::Rows(rows)) => {
                let mut rows = rows.clone();
                rows.metadata.new_metadata_id = Some(Box::new(Bytes::from_static(b"new")));
                Response::Result(ResultBody::Rows(rows))
            }
            other => other.clone(),
        }
    }

    #[test]
    fn every_response_round_trips() {
        let node: SocketAddr = "127.0.0.2:9042".parse().unwrap();
        let change = SchemaChange {
            change: "CREATED".into(),
            target: SchemaTarget::Function("ks".into(), "f".into(), vec!["int".into()]),
        };
        let rows = Rows {
            metadata: RowsMetadata {
                columns_count: 2,
                paging_state: Some(Bytes::from_static(b"next")),
                columns: vec![col("k", ColumnType::Int), col("v", ColumnType::Varchar)],
                no_metadata: false,
                new_metadata_id: None,
            },
            rows_count: 1,
            content: Bytes::from_static(&[0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'a']),
        };
        let all = [
            Response::Ready,
            Response::Authenticate("org.apache.cassandra.auth.PasswordAuthenticator".into()),
            Response::Supported(vec![("CQL_VERSION".into(), vec!["3.4.7".into()])]),
            Response::Result(ResultBody::Void),
            Response::Result(ResultBody::Rows(rows)),
            Response::Result(ResultBody::SetKeyspace("ks".into())),
            Response::Result(ResultBody::Prepared(Box::new(Prepared {
                id: Bytes::from_static(&[0xab; 16]),
                result_metadata_id: None,
                metadata: PreparedMetadata {
                    pk_indexes: vec![1, 0],
                    columns: vec![col("a", ColumnType::Int), col("b", ColumnType::Bigint)],
                    extension_flags: 0,
                },
                result_metadata: RowsMetadata {
                    columns_count: 0,
                    no_metadata: true,
                    ..Default::default()
                },
            }))),
            Response::Result(ResultBody::SchemaChange(change.clone())),
            Response::Event(Event::TopologyChange {
                change: "NEW_NODE".into(),
                node,
            }),
            Response::Event(Event::StatusChange {
                change: "DOWN".into(),
                node,
            }),
            Response::Event(Event::SchemaChange(change)),
            Response::AuthChallenge(Some(Bytes::from_static(b"c"))),
            Response::AuthSuccess(None),
        ];
        let v5 = Envelope {
            version: ProtocolVersion::V5,
            ..Envelope::default()
        };
        for r in &all {
            round_trip(&Envelope::default(), r, None);
            round_trip(&Envelope::default(), r, Some(Compression::Lz4));
            round_trip(&v5, &as_v5(r), None);
        }
        // A PREPARED without its v5 field is not v5, and one with it is not v4: refused, not
        // silently dropped or made up.
        let mut buf = BytesMut::new();
        let prepared = all
            .iter()
            .find(|r| matches!(r, Response::Result(ResultBody::Prepared(_))))
            .unwrap();
        assert!(encode_response(&mut buf, 0, &v5, prepared, None).is_err());
        assert!(
            encode_response(&mut buf, 0, &Envelope::default(), &as_v5(prepared), None).is_err()
        );
        assert!(buf.is_empty());
        assert!(
            encode_response(&mut buf, 0, &v5, &Response::Ready, Some(Compression::Lz4)).is_err(),
            "v5 compresses segments, not envelopes"
        );
    }

    #[test]
    fn metadata_changed_without_columns_is_an_error() {
        // Rows, flags NO_METADATA | METADATA_CHANGED, 1 column, new id "n", 0 rows.
        let body: &'static [u8] = &[
            0, 0, 0, 2, 0, 0, 0, 0x0c, 0, 0, 0, 1, 0, 1, b'n', 0, 0, 0, 0,
        ];
        let frame = Frame {
            header: FrameHeader {
                version: ProtocolVersion::V5,
                direction: Direction::Response,
                flags: Flags::NONE,
                stream: 1,
                opcode: Opcode::Result,
                length: body.len() as u32,
            },
            body: Bytes::from_static(body),
        };
        assert!(matches!(
            ResponseFrame::decode(&frame, None, 1 << 20),
            Err(ProtoError::InvalidValue {
                what: "rows metadata flags",
                ..
            })
        ));
    }

    #[test]
    fn every_error_code_round_trips_with_its_fields() {
        let errors = [
            (ErrorCode::ServerError, ErrorDetail::None),
            (
                ErrorCode::Unavailable,
                ErrorDetail::Unavailable {
                    consistency: Consistency::Quorum,
                    required: 2,
                    alive: 1,
                },
            ),
            (
                ErrorCode::WriteTimeout,
                ErrorDetail::WriteTimeout {
                    consistency: Consistency::One,
                    received: 0,
                    block_for: 1,
                    write_type: "SIMPLE".into(),
                    contentions: None,
                },
            ),
            (
                ErrorCode::ReadTimeout,
                ErrorDetail::ReadTimeout {
                    consistency: Consistency::One,
                    received: 0,
                    block_for: 1,
                    data_present: true,
                },
            ),
            (
                ErrorCode::ReadFailure,
                ErrorDetail::ReadFailure {
                    consistency: Consistency::All,
                    received: 1,
                    block_for: 3,
                    failures: 2,
                    reasons: vec![],
                    data_present: false,
                },
            ),
            (
                ErrorCode::FunctionFailure,
                ErrorDetail::FunctionFailure {
                    keyspace: "ks".into(),
                    function: "f".into(),
                    arg_types: vec!["int".into(), "text".into()],
                },
            ),
            (
                ErrorCode::WriteFailure,
                ErrorDetail::WriteFailure {
                    consistency: Consistency::Two,
                    received: 1,
                    block_for: 2,
                    failures: 1,
                    reasons: vec![],
                    write_type: "BATCH".into(),
                },
            ),
            (
                ErrorCode::AlreadyExists,
                ErrorDetail::AlreadyExists {
                    keyspace: "ks".into(),
                    table: "".into(),
                },
            ),
            (
                ErrorCode::Unprepared,
                ErrorDetail::Unprepared {
                    id: Bytes::from_static(b"\x01\x02"),
                },
            ),
            (ErrorCode::Overloaded, ErrorDetail::None),
            (ErrorCode::Other(0x7777), ErrorDetail::None),
            // ScyllaDB's rate-limit error: a code of the node's choosing, two bytes after
            // the message, kept raw.
            (
                ErrorCode::Other(0xF000),
                ErrorDetail::Extension {
                    fields: Bytes::from_static(&[1, 0]),
                },
            ),
        ];
        for (code, detail) in errors {
            let e = ErrorResponse {
                code,
                message: format!("{} happened", code.name()),
                detail,
            };
            assert_eq!(ErrorCode::from_code(code.code()), code);
            round_trip(&Envelope::default(), &Response::Error(Box::new(e)), None);
        }
    }

    /// The rate-limit error's two bytes are read as such only under the code the connection
    /// negotiated; under another code, or unreadable, they stay raw.
    #[test]
    fn an_extension_error_is_read_as_the_extension_negotiated_for_its_code() {
        use crate::scylla_extensions::RateLimitedOp;
        let raw = |code: i32, fields: &'static [u8]| ErrorResponse {
            code: ErrorCode::Other(code),
            message: "Per-partition rate limit reached".into(),
            detail: ErrorDetail::Extension {
                fields: Bytes::from_static(fields),
            },
        };
        let negotiated = Extensions {
            rate_limit_code: Some(0xF000),
            ..Extensions::default()
        };
        let mut e = raw(0xF000, &[1, 1]);
        e.read_extension(&negotiated);
        assert_eq!(
            e.detail,
            ErrorDetail::RateLimit(RateLimitError {
                op: RateLimitedOp::Write,
                rejected_by_coordinator: true,
            })
        );
        // Encoded as the same two bytes: decoded raw, then read again alike.
        let mut buf = BytesMut::new();
        let sent = Response::Error(Box::new(e.clone()));
        encode_response(&mut buf, 7, &Envelope::default(), &sent, None).unwrap();
        let frame = FrameDecoder::new(Direction::Response)
            .decode(&mut buf)
            .unwrap()
            .unwrap();
        let Response::Error(mut back) = ResponseFrame::decode(&frame, None, 1 << 20)
            .unwrap()
            .response
        else {
            panic!("not an error")
        };
        assert_eq!(back.detail, raw(0xF000, &[1, 1]).detail);
        back.read_extension(&negotiated);
        assert_eq!(*back, e);
        for (code, fields, extensions) in [
            (0xF001, &[1u8, 1][..], negotiated),
            (0xF000, &[1, 1][..], Extensions::default()),
            (0xF000, &[7, 1][..], negotiated),
            (0xF000, &[0][..], negotiated),
        ] {
            let mut e = raw(code, fields);
            let before = e.clone();
            e.read_extension(&extensions);
            assert_eq!(e, before, "{code:#x} {fields:?}");
        }
    }

    #[test]
    fn v5_errors_carry_reason_maps_contentions_and_cas_write_unknown() {
        let v5 = Envelope {
            version: ProtocolVersion::V5,
            ..Envelope::default()
        };
        let reasons = vec![
            FailureReason {
                endpoint: "127.0.0.2".parse().unwrap(),
                code: 0x0001,
            },
            FailureReason {
                endpoint: "::1".parse().unwrap(),
                code: 0x01F7,
            },
        ];
        let details = [
            (
                ErrorCode::ReadFailure,
                ErrorDetail::ReadFailure {
                    consistency: Consistency::All,
                    received: 1,
                    block_for: 3,
                    failures: 2,
                    reasons: reasons.clone(),
                    data_present: true,
                },
            ),
            (
                ErrorCode::WriteFailure,
                ErrorDetail::WriteFailure {
                    consistency: Consistency::Quorum,
                    received: 0,
                    block_for: 2,
                    failures: 2,
                    reasons: reasons.clone(),
                    write_type: "SIMPLE".into(),
                },
            ),
            (
                ErrorCode::WriteTimeout,
                ErrorDetail::WriteTimeout {
                    consistency: Consistency::Serial,
                    received: 1,
                    block_for: 2,
                    write_type: "CAS".into(),
                    contentions: Some(3),
                },
            ),
            (
                ErrorCode::WriteTimeout,
                ErrorDetail::WriteTimeout {
                    consistency: Consistency::One,
                    received: 0,
                    block_for: 1,
                    write_type: "SIMPLE".into(),
                    contentions: None,
                },
            ),
            (
                ErrorCode::CasWriteUnknown,
                ErrorDetail::CasWriteUnknown {
                    consistency: Consistency::LocalSerial,
                    received: 1,
                    block_for: 2,
                },
            ),
            (ErrorCode::CdcWriteFailure, ErrorDetail::None),
        ];
        for (code, detail) in details {
            assert_eq!(ErrorCode::from_code(code.code()), code);
            let e = ErrorResponse {
                code,
                message: "failed".into(),
                detail,
            };
            round_trip(&v5, &Response::Error(Box::new(e)), None);
        }
        // A reason map's count is its length: a disagreeing count is not encoded.
        let bad = ErrorResponse {
            code: ErrorCode::ReadFailure,
            message: String::new(),
            detail: ErrorDetail::ReadFailure {
                consistency: Consistency::All,
                received: 0,
                block_for: 1,
                failures: 3,
                reasons,
                data_present: false,
            },
        };
        let mut buf = BytesMut::new();
        assert!(encode_response(&mut buf, 0, &v5, &Response::Error(Box::new(bad)), None).is_err());
        assert!(buf.is_empty());
    }

    #[test]
    fn a_reason_map_longer_than_its_body_is_refused_before_reserving() {
        // ERROR Read_failure, message "", ONE, 0, 1, reason map of i32::MAX entries.
        let body: &'static [u8] = &[
            0, 0, 0x13, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff,
        ];
        let frame = Frame {
            header: FrameHeader {
                version: ProtocolVersion::V5,
                direction: Direction::Response,
                flags: Flags::NONE,
                stream: 1,
                opcode: Opcode::Error,
                length: body.len() as u32,
            },
            body: Bytes::from_static(body),
        };
        assert!(ResponseFrame::decode(&frame, None, 1 << 20).is_err());
    }

    #[test]
    fn envelope_fields_come_back_in_spec_order() {
        let tid = [9u8; 16];
        let env = Envelope {
            version: ProtocolVersion::V4,
            tracing_id: Some(tid),
            warnings: &["Aggregation query used without partition key"],
            custom_payload: Some(&[("k", Some(&b"v"[..]))]),
        };
        let back = round_trip(&env, &Response::Result(ResultBody::Void), None);
        assert_eq!(back.tracing_id, Some(tid));
        assert_eq!(
            back.warnings,
            vec!["Aggregation query used without partition key"]
        );
        assert_eq!(
            back.custom_payload,
            Some(vec![("k".to_string(), Some(Bytes::from_static(b"v")))])
        );
    }

    #[test]
    fn hostile_responses_are_errors() {
        let frame = |op, flags, body: &'static [u8]| Frame {
            header: FrameHeader {
                version: ProtocolVersion::V4,
                direction: Direction::Response,
                flags,
                stream: 1,
                opcode: op,
                length: body.len() as u32,
            },
            body: Bytes::from_static(body),
        };
        let cases = [
            frame(Opcode::Result, Flags::NONE, &[0, 0, 0, 9]),
            frame(
                Opcode::Result,
                Flags::NONE,
                &[0, 0, 0, 2, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff],
            ),
            // Rows: 1 column, then a rows count of i32::MAX with no content.
            frame(
                Opcode::Result,
                Flags::NONE,
                &[0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff],
            ),
            frame(Opcode::Error, Flags::NONE, &[0, 0, 0x10, 0, 0, 1, b'x']),
            frame(Opcode::Ready, Flags::TRACING, &[1, 2, 3]),
            frame(Opcode::Ready, Flags::NONE, &[1]),
            frame(Opcode::Ready, Flags::COMPRESSION, &[0, 0, 0, 0]),
            frame(Opcode::Query, Flags::NONE, &[]),
            frame(Opcode::Event, Flags::NONE, &[0, 3, b'F', b'O', b'O']),
        ];
        for f in &cases {
            assert!(ResponseFrame::decode(f, None, 1 << 20).is_err(), "{f:?}");
        }
    }
}
