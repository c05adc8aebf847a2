//! ERROR (spec section 4.2.1): the error codes of section 9, the fields each carries (v4
//! and v5), and the message decoded and encoded.

use std::net::IpAddr;

use bytes::{BufMut, Bytes, BytesMut};

use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
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
    pub(super) fn decode(
        r: &mut Reader<'_>,
        body: &Bytes,
        version: ProtocolVersion,
    ) -> Result<Self> {
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

    pub(super) fn encode(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
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
