//! Request messages (spec section 4.1), both directions.
//!
//! Encoding (client side, the hot path): every request struct borrows its data and writes
//! its body straight into a caller-owned `BytesMut` through [`encode_request`], which writes
//! the header with a zero length, the body, then patches the length. On any error the
//! buffer is truncated back to where the frame began, so nothing partial is ever sent.
//! [`ExecuteTemplate`] pre-encodes everything of an EXECUTE that does not change between
//! calls; encoding one is two `memcpy`s plus the values.
//!
//! Decoding (server side, for the stub server and tests): [`Request::decode`] borrows from
//! the frame body; bound values stay `[value]` slices.

use bytes::{BufMut, BytesMut};

use crate::compression::Compression;
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::{patch_length, patch_stream, Direction, Flags, FrameHeader, Opcode, HEADER_LEN};
use crate::metadata::ColumnSpec;
use crate::values::QueryValues;
use crate::version::ProtocolVersion;
use crate::wire::{self, RawValue, Reader};

/// The `<flags>` bits of `<query_parameters>` (QUERY and EXECUTE) and of BATCH: a `[byte]`
/// in v4, an `[int]` in v5 (whose two new bits are the last two here).
pub mod query_flags {
    /// Values follow.
    pub const VALUES: u32 = 0x01;
    /// Ask for a result without column metadata.
    pub const SKIP_METADATA: u32 = 0x02;
    /// `<result_page_size>` follows.
    pub const PAGE_SIZE: u32 = 0x04;
    /// `<paging_state>` follows.
    pub const PAGING_STATE: u32 = 0x08;
    /// `<serial_consistency>` follows.
    pub const SERIAL_CONSISTENCY: u32 = 0x10;
    /// `<timestamp>` follows.
    pub const DEFAULT_TIMESTAMP: u32 = 0x20;
    /// Each value is preceded by its bind-marker name.
    pub const NAMES_FOR_VALUES: u32 = 0x40;
    /// v5: `<keyspace>` follows.
    pub const WITH_KEYSPACE: u32 = 0x80;
    /// v5: `<now_in_seconds>` follows.
    pub const NOW_IN_SECONDS: u32 = 0x100;
}

/// The `<flags>` bits of PREPARE (v5 only).
pub mod prepare_flags {
    /// `<keyspace>` follows.
    pub const WITH_KEYSPACE: u32 = 0x01;
}

/// Writes a flags field: a `[byte]` in v4 (where no bit above 0x80 exists), an `[int]` in v5.
fn put_flags(buf: &mut BytesMut, version: ProtocolVersion, flags: u32) -> Result<()> {
    if version.has_int_flags() {
        buf.put_u32(flags);
        return Ok(());
    }
    let byte = u8::try_from(flags).map_err(|_| ProtoError::InvalidValue {
        what: "query flags",
        detail: format!("0x{flags:x} needs protocol v5 (v4 flags are one byte)"),
    })?;
    buf.put_u8(byte);
    Ok(())
}

/// Reads a flags field written by [`put_flags`].
fn read_flags(r: &mut Reader<'_>, version: ProtocolVersion, what: &'static str) -> Result<u32> {
    if version.has_int_flags() {
        Ok(r.read_int(what)? as u32)
    } else {
        Ok(u32::from(r.read_byte(what)?))
    }
}

/// The error for a v5-only field in a v4 message.
fn v5_only(what: &'static str) -> ProtoError {
    ProtoError::InvalidValue {
        what,
        detail: "is a protocol v5 field (this connection speaks v4)".into(),
    }
}

/// A request body that can be written into a frame.
pub trait RequestBody {
    /// The message's opcode.
    fn opcode(&self) -> Opcode;
    /// Appends the body (without header or envelope) as `version` lays it out.
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()>;
}

/// Appends one whole protocol v4 request frame to `buf`: header, body, patched length.
/// [`encode_envelope`] with [`ProtocolVersion::V4`].
pub fn encode_request(
    buf: &mut BytesMut,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
) -> Result<()> {
    encode_envelope(buf, ProtocolVersion::V4, stream, flags, request)
}

/// Appends one whole request frame (v5: envelope) of `version` to `buf`: header, body,
/// patched length. A v5 envelope goes into a segment ([`crate::segment`]) once the
/// connection is ready; before that (OPTIONS, STARTUP, AUTH_RESPONSE) it is sent bare.
///
/// Sending a custom payload is not supported yet: the `CUSTOM_PAYLOAD` flag is cleared so
/// the frame never announces a payload it does not carry.
///
/// On error, `buf` is truncated back to its length on entry.
pub fn encode_envelope(
    buf: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
) -> Result<()> {
    let start = buf.len();
    let result = (|| {
        FrameHeader {
            version,
            direction: Direction::Request,
            flags: flags
                .without(Flags::COMPRESSION)
                .without(Flags::CUSTOM_PAYLOAD),
            stream,
            opcode: request.opcode(),
            length: 0,
        }
        .write_to(buf);
        request.encode_body(buf, version)?;
        finish_frame(buf, start)
    })();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

/// Like [`encode_request`] (protocol v4), with the body compressed. `scratch` holds the
/// uncompressed body (reused between calls, so only lz4's own output block is allocated).
/// v5 compresses segments, not envelopes ([`crate::segment`]).
pub fn encode_request_compressed(
    buf: &mut BytesMut,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
    compression: Compression,
    scratch: &mut BytesMut,
) -> Result<()> {
    scratch.clear();
    request.encode_body(scratch, ProtocolVersion::V4)?;
    let start = buf.len();
    FrameHeader {
        version: ProtocolVersion::V4,
        direction: Direction::Request,
        flags: flags
            .with(Flags::COMPRESSION)
            .without(Flags::CUSTOM_PAYLOAD),
        stream,
        opcode: request.opcode(),
        length: 0,
    }
    .write_to(buf);
    let result = compression
        .compress(scratch, buf)
        .and_then(|()| finish_frame(buf, start));
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

/// Patches the length of the frame that starts at `start` and ends at the buffer's end.
fn finish_frame(buf: &mut BytesMut, start: usize) -> Result<()> {
    let body_len = buf.len() - start - HEADER_LEN;
    let len = u32::try_from(body_len)
        .ok()
        .filter(|l| (*l as usize) <= crate::frame::DEFAULT_MAX_BODY_LEN)
        .ok_or_else(|| ProtoError::TooLong {
            what: "request body",
            len: body_len,
            limit: crate::frame::DEFAULT_MAX_BODY_LEN,
        })?;
    patch_length(&mut buf[start..], len)
}

fn count_u16(n: usize, what: &'static str) -> Result<u16> {
    u16::try_from(n).map_err(|_| ProtoError::TooLong {
        what,
        len: n,
        limit: u16::MAX as usize,
    })
}

/// STARTUP: the connection's options (`CQL_VERSION`, optionally `COMPRESSION`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startup<'a> {
    /// Option pairs, written as a `[string map]`.
    pub options: &'a [(&'a str, &'a str)],
}

impl RequestBody for Startup<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Startup
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_string_map(buf, self.options, "STARTUP options")
    }
}

/// OPTIONS: asks which options the server supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options;

impl RequestBody for Options {
    fn opcode(&self) -> Opcode {
        Opcode::Options
    }
    fn encode_body(&self, _: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        Ok(())
    }
}

/// AUTH_RESPONSE: a SASL token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthResponse<'a> {
    /// The token (`None` is a null `[bytes]`).
    pub token: Option<&'a [u8]>,
}

impl RequestBody for AuthResponse<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::AuthResponse
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_bytes(buf, self.token, "AUTH_RESPONSE token")
    }
}

/// REGISTER: the event types to receive (`TOPOLOGY_CHANGE`, `STATUS_CHANGE`, `SCHEMA_CHANGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register<'a> {
    /// Event type names.
    pub events: &'a [&'a str],
}

impl RequestBody for Register<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Register
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_string_list(buf, self.events.iter().copied(), "REGISTER events")
    }
}

/// PREPARE: a statement to prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepare<'a> {
    /// CQL text.
    pub query: &'a str,
    /// v5: the keyspace to prepare in, instead of the connection's.
    pub keyspace: Option<&'a str>,
}

impl RequestBody for Prepare<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Prepare
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        wire::put_long_string(buf, self.query, "PREPARE query")?;
        if version.has_int_flags() {
            let flags = match self.keyspace {
                Some(_) => prepare_flags::WITH_KEYSPACE,
                None => 0,
            };
            buf.put_u32(flags);
            if let Some(ks) = self.keyspace {
                wire::put_string(buf, ks, "PREPARE keyspace")?;
            }
        } else if self.keyspace.is_some() {
            return Err(v5_only("PREPARE keyspace"));
        }
        Ok(())
    }
}

/// The parts of `<query_parameters>` other than the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryParameters<'a> {
    /// Consistency level.
    pub consistency: Consistency,
    /// Ask the server to leave column metadata out of a Rows result.
    pub skip_metadata: bool,
    /// Rows per page.
    pub page_size: Option<i32>,
    /// Where the previous page ended.
    pub paging_state: Option<&'a [u8]>,
    /// Consistency of the Paxos phase of conditional updates.
    pub serial_consistency: Option<Consistency>,
    /// Default write timestamp, in microseconds since the epoch (must not be negative).
    pub timestamp: Option<i64>,
    /// v5: the keyspace to run in, instead of the connection's.
    pub keyspace: Option<&'a str>,
    /// v5: "now" for the query, in seconds since the epoch (TTL liveness, deletion times).
    pub now_in_seconds: Option<i32>,
}

impl QueryParameters<'_> {
    /// The `<flags>` for these parameters and `values`.
    pub fn flags(&self, values: &(impl QueryValues + ?Sized)) -> u32 {
        let mut f = 0;
        if values.count() > 0 {
            f |= query_flags::VALUES;
            if values.has_names() {
                f |= query_flags::NAMES_FOR_VALUES;
            }
        }
        if self.skip_metadata {
            f |= query_flags::SKIP_METADATA;
        }
        if self.page_size.is_some() {
            f |= query_flags::PAGE_SIZE;
        }
        if self.paging_state.is_some() {
            f |= query_flags::PAGING_STATE;
        }
        if self.serial_consistency.is_some() {
            f |= query_flags::SERIAL_CONSISTENCY;
        }
        if self.timestamp.is_some() {
            f |= query_flags::DEFAULT_TIMESTAMP;
        }
        if self.keyspace.is_some() {
            f |= query_flags::WITH_KEYSPACE;
        }
        if self.now_in_seconds.is_some() {
            f |= query_flags::NOW_IN_SECONDS;
        }
        f
    }

    fn check(&self, version: ProtocolVersion) -> Result<()> {
        if !version.has_v5_fields() {
            if self.keyspace.is_some() {
                return Err(v5_only("query keyspace"));
            }
            if self.now_in_seconds.is_some() {
                return Err(v5_only("now in seconds"));
            }
        }
        if let Some(s) = self.serial_consistency {
            if !s.is_serial() {
                return Err(ProtoError::InvalidValue {
                    what: "serial consistency",
                    detail: format!("{s} is not SERIAL or LOCAL_SERIAL"),
                });
            }
        }
        if let Some(ts) = self.timestamp {
            if ts < 0 {
                return Err(ProtoError::InvalidValue {
                    what: "default timestamp",
                    detail: format!("{ts} is negative"),
                });
            }
        }
        if let Some(p) = self.page_size {
            if p <= 0 {
                return Err(ProtoError::InvalidValue {
                    what: "page size",
                    detail: format!("{p} is not positive"),
                });
            }
        }
        Ok(())
    }

    /// Writes `<query_parameters>` of `version` with `values` checked against `columns`
    /// when known.
    pub fn encode(
        &self,
        version: ProtocolVersion,
        values: &(impl QueryValues + ?Sized),
        columns: Option<&[ColumnSpec]>,
        buf: &mut BytesMut,
    ) -> Result<()> {
        self.check(version)?;
        self.consistency.encode(buf);
        put_flags(buf, version, self.flags(values))?;
        write_values(values, columns, buf)?;
        self.encode_suffix(buf)
    }

    /// Everything after the values: page size, paging state, serial consistency, timestamp,
    /// and in v5 keyspace and now-in-seconds (whose flags [`Self::check`] kept out of v4).
    fn encode_suffix(&self, buf: &mut BytesMut) -> Result<()> {
        if let Some(p) = self.page_size {
            buf.put_i32(p);
        }
        if let Some(state) = self.paging_state {
            wire::put_bytes(buf, Some(state), "paging state")?;
        }
        if let Some(s) = self.serial_consistency {
            s.encode(buf);
        }
        if let Some(ts) = self.timestamp {
            buf.put_i64(ts);
        }
        if let Some(ks) = self.keyspace {
            wire::put_string(buf, ks, "query keyspace")?;
        }
        if let Some(now) = self.now_in_seconds {
            buf.put_i32(now);
        }
        Ok(())
    }
}

/// The error of positional values whose count is not the bind markers': the values' own when
/// they say more (a struct bound by name names the marker it has no field for), else the
/// counts. Cold: the values are written to find out, then cut off.
#[cold]
fn count_error(
    values: &(impl QueryValues + ?Sized),
    columns: Option<&[ColumnSpec]>,
    markers: usize,
    buf: &mut BytesMut,
) -> ProtoError {
    if columns.is_some() {
        let mark = buf.len();
        let own = values.write_values(columns, buf).err();
        buf.truncate(mark);
        if let Some(e) = own {
            return e;
        }
    }
    ProtoError::InvalidValue {
        what: "bound values",
        detail: format!("{} values for {markers} bind markers", values.count()),
    }
}

/// Writes `<n><value_1>...<value_n>` if there are values; checks the count against the bind
/// markers when they are known.
fn write_values(
    values: &(impl QueryValues + ?Sized),
    columns: Option<&[ColumnSpec]>,
    buf: &mut BytesMut,
) -> Result<()> {
    let n = values.count();
    if let Some(cols) = columns {
        if n != cols.len() && !values.has_names() {
            return Err(count_error(values, columns, cols.len(), buf));
        }
    }
    if n > 0 {
        buf.put_u16(count_u16(n, "bound value count")?);
        values.write_values(columns, buf)?;
    }
    Ok(())
}

/// QUERY: an unprepared statement with its values.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a, V: ?Sized> {
    /// CQL text.
    pub query: &'a str,
    /// Consistency, paging and the rest.
    pub params: QueryParameters<'a>,
    /// Bound values.
    pub values: &'a V,
}

impl<V: QueryValues + ?Sized> RequestBody for Query<'_, V> {
    fn opcode(&self) -> Opcode {
        Opcode::Query
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        wire::put_long_string(buf, self.query, "QUERY text")?;
        self.params.encode(version, self.values, None, buf)
    }
}

/// EXECUTE: a prepared statement by id, with its values.
#[derive(Debug, Clone, Copy)]
pub struct Execute<'a, V: ?Sized> {
    /// The prepared id from RESULT Prepared.
    pub id: &'a [u8],
    /// v5: the result metadata id from RESULT Prepared (or the newest a Rows result's
    /// METADATA_CHANGED gave). Required in v5; not sent in v4, where it does not exist.
    pub result_metadata_id: Option<&'a [u8]>,
    /// Consistency, paging and the rest.
    pub params: QueryParameters<'a>,
    /// Bound values.
    pub values: &'a V,
    /// The bind markers from PREPARE, to check the values against.
    pub columns: Option<&'a [ColumnSpec]>,
}

/// Writes EXECUTE's `<id>` and, in v5, `<result_metadata_id>`.
fn put_execute_ids(
    buf: &mut BytesMut,
    version: ProtocolVersion,
    id: &[u8],
    result_metadata_id: Option<&[u8]>,
) -> Result<()> {
    wire::put_short_bytes(buf, id, "prepared id")?;
    if version.has_v5_fields() {
        let rid = result_metadata_id.ok_or_else(|| ProtoError::InvalidValue {
            what: "EXECUTE result metadata id",
            detail: "is required in protocol v5 (RESULT Prepared gives it)".into(),
        })?;
        wire::put_short_bytes(buf, rid, "result metadata id")?;
    }
    Ok(())
}

impl<V: QueryValues + ?Sized> RequestBody for Execute<'_, V> {
    fn opcode(&self) -> Opcode {
        Opcode::Execute
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        put_execute_ids(buf, version, self.id, self.result_metadata_id)?;
        self.params.encode(version, self.values, self.columns, buf)
    }
}

/// An EXECUTE with everything but the stream id and the values encoded once.
///
/// Invariant: `prefix` is a whole frame header (length 0, stream 0) followed by the prepared
/// id, the consistency and the flags; `suffix` is what follows the values. The flags say
/// "values present" exactly when the statement has bind markers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteTemplate {
    version: ProtocolVersion,
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    markers: usize,
    /// The query flags at the end of `prefix`.
    flags: u32,
    /// Bytes of `suffix` that are the template's own page size (0 or 4): a page of its
    /// own ([`ExecuteTemplate::encode_page`]) writes its size and state there instead.
    page_size_len: usize,
}

/// A request's own page: its size and where it starts, in place of the template's page
/// size ([`ExecuteTemplate::encode_page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageRequest<'a> {
    /// Rows per page (`None`: unpaged).
    pub page_size: Option<i32>,
    /// The paging state of the page before (`None`: the first page).
    pub paging_state: Option<&'a [u8]>,
}

impl ExecuteTemplate {
    /// Pre-encodes an EXECUTE of `version` for prepared statement `id` (and, in v5, its
    /// `result_metadata_id`) with `markers` bind markers. `params.paging_state` is not
    /// allowed here (it changes per page: use [`Execute`]).
    pub fn new(
        version: ProtocolVersion,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        markers: usize,
        params: &QueryParameters<'_>,
        flags: Flags,
    ) -> Result<Self> {
        params.check(version)?;
        if params.paging_state.is_some() {
            return Err(ProtoError::InvalidValue {
                what: "EXECUTE template",
                detail: "a paging state changes per page and cannot be templated".into(),
            });
        }
        let mut prefix = BytesMut::new();
        FrameHeader {
            version,
            direction: Direction::Request,
            flags: flags
                .without(Flags::COMPRESSION)
                .without(Flags::CUSTOM_PAYLOAD),
            stream: 0,
            opcode: Opcode::Execute,
            length: 0,
        }
        .write_to(&mut prefix);
        put_execute_ids(&mut prefix, version, id, result_metadata_id)?;
        params.consistency.encode(&mut prefix);
        let mut f = params.flags(&());
        if markers > 0 {
            f |= query_flags::VALUES;
        }
        put_flags(&mut prefix, version, f)?;
        let mut suffix = BytesMut::new();
        params.encode_suffix(&mut suffix)?;
        Ok(Self {
            version,
            prefix: prefix.to_vec(),
            suffix: suffix.to_vec(),
            markers,
            flags: f,
            page_size_len: if params.page_size.is_some() { 4 } else { 0 },
        })
    }

    /// The protocol version it encodes (a connection of another version cannot send it).
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Bind markers the statement has.
    pub fn markers(&self) -> usize {
        self.markers
    }

    /// Appends a whole EXECUTE frame on `stream` with `values` (checked against `columns`
    /// when given). Allocates nothing when `buf` has room. On error `buf` is restored.
    pub fn encode(
        &self,
        buf: &mut BytesMut,
        stream: i16,
        values: &(impl QueryValues + ?Sized),
        columns: Option<&[ColumnSpec]>,
    ) -> Result<()> {
        self.encode_with(buf, stream, values, columns, None)
    }

    /// [`ExecuteTemplate::encode`] of one page: `page`'s size and paging state in place of
    /// the template's page size, the rest as templated (a page of a paged read goes out as
    /// fast as any request, with no frame built field by field).
    pub fn encode_page(
        &self,
        buf: &mut BytesMut,
        stream: i16,
        values: &(impl QueryValues + ?Sized),
        columns: Option<&[ColumnSpec]>,
        page: PageRequest<'_>,
    ) -> Result<()> {
        self.encode_with(buf, stream, values, columns, Some(page))
    }

    fn encode_with(
        &self,
        buf: &mut BytesMut,
        stream: i16,
        values: &(impl QueryValues + ?Sized),
        columns: Option<&[ColumnSpec]>,
        page: Option<PageRequest<'_>>,
    ) -> Result<()> {
        let start = buf.len();
        let result = (|| {
            if values.count() != self.markers && !values.has_names() {
                return Err(count_error(values, columns, self.markers, buf));
            }
            if values.has_names() {
                return Err(ProtoError::InvalidValue {
                    what: "bound values",
                    detail: format!(
                        "{} values for {} bind markers (names are not allowed in EXECUTE \
                         templates)",
                        values.count(),
                        self.markers,
                    ),
                });
            }
            buf.extend_from_slice(&self.prefix);
            patch_stream(&mut buf[start..], stream)?;
            let Some(page) = page else {
                write_values(values, columns, buf)?;
                buf.extend_from_slice(&self.suffix);
                return finish_frame(buf, start);
            };
            let mut flags = self.flags & !(query_flags::PAGE_SIZE | query_flags::PAGING_STATE);
            if page.page_size.is_some() {
                flags |= query_flags::PAGE_SIZE;
            }
            if page.paging_state.is_some() {
                flags |= query_flags::PAGING_STATE;
            }
            // The flags end the prefix: one byte in v4, an int in v5.
            let end = buf.len();
            if self.version.has_int_flags() {
                buf[end - 4..end].copy_from_slice(&flags.to_be_bytes());
            } else {
                // The page bits are in the low byte: the template's byte stays a byte.
                buf[end - 1] = flags as u8;
            }
            write_values(values, columns, buf)?;
            if let Some(size) = page.page_size {
                buf.put_i32(size);
            }
            if let Some(state) = page.paging_state {
                wire::put_bytes(buf, Some(state), "paging state")?;
            }
            buf.extend_from_slice(&self.suffix[self.page_size_len..]);
            finish_frame(buf, start)
        })();
        if result.is_err() {
            buf.truncate(start);
        }
        result
    }
}

/// The kind of a BATCH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BatchType {
    /// Logged (atomic through the batch log).
    #[default]
    Logged = 0,
    /// Unlogged.
    Unlogged = 1,
    /// Counter updates only.
    Counter = 2,
}

impl BatchType {
    fn from_byte(b: u8) -> Result<Self> {
        match b {
            0 => Ok(BatchType::Logged),
            1 => Ok(BatchType::Unlogged),
            2 => Ok(BatchType::Counter),
            other => Err(ProtoError::InvalidValue {
                what: "batch type",
                detail: format!("{other} is not 0, 1 or 2"),
            }),
        }
    }
}

/// One statement of a BATCH: CQL text or a prepared id, and its values.
#[derive(Clone, Copy)]
pub enum BatchStatement<'a> {
    /// An unprepared statement.
    Query {
        /// CQL text.
        query: &'a str,
        /// Its values.
        values: &'a dyn QueryValues,
    },
    /// A prepared statement.
    Prepared {
        /// The prepared id.
        id: &'a [u8],
        /// Its values.
        values: &'a dyn QueryValues,
        /// Its bind markers, to check the values against.
        columns: Option<&'a [ColumnSpec]>,
    },
}

impl std::fmt::Debug for BatchStatement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchStatement::Query { query, values } => f
                .debug_struct("Query")
                .field("query", query)
                .field("values", &values.count())
                .finish(),
            BatchStatement::Prepared { id, values, .. } => f
                .debug_struct("Prepared")
                .field("id", id)
                .field("values", &values.count())
                .finish(),
        }
    }
}

/// The statements of a BATCH, handed to the encoder one at a time (so that a caller whose
/// statements and values are computed per request needs no array of them).
pub trait BatchElements {
    /// How many statements.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with statement `k` (`0..len()`), which borrows from this call only.
    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> Result<()>,
    ) -> Result<()>;
}

impl BatchElements for &[BatchStatement<'_>] {
    fn len(&self) -> usize {
        <[BatchStatement<'_>]>::len(self)
    }

    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> Result<()>,
    ) -> Result<()> {
        match self.get(k) {
            Some(st) => f(st),
            None => Err(ProtoError::InvalidValue {
                what: "batch statement",
                detail: format!("no statement {k} of {}", <[_]>::len(self)),
            }),
        }
    }
}

/// BATCH: several DML statements at once.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// Logged, unlogged or counter.
    pub kind: BatchType,
    /// The statements.
    pub statements: &'a [BatchStatement<'a>],
    /// Consistency level.
    pub consistency: Consistency,
    /// Serial consistency for conditional statements.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp in microseconds.
    pub timestamp: Option<i64>,
    /// v5: the keyspace to run in, instead of the connection's.
    pub keyspace: Option<&'a str>,
    /// v5: "now" for the batch, in seconds since the epoch.
    pub now_in_seconds: Option<i32>,
}

impl RequestBody for Batch<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Batch
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        BatchOf {
            kind: self.kind,
            statements: &self.statements,
            consistency: self.consistency,
            serial_consistency: self.serial_consistency,
            timestamp: self.timestamp,
            keyspace: self.keyspace,
            now_in_seconds: self.now_in_seconds,
        }
        .encode_body(buf, version)
    }
}

/// BATCH of statements handed out one at a time ([`BatchElements`]): the same message as
/// [`Batch`], for a caller that has no slice of them.
#[derive(Clone, Copy)]
pub struct BatchOf<'a> {
    /// Logged, unlogged or counter.
    pub kind: BatchType,
    /// The statements.
    pub statements: &'a dyn BatchElements,
    /// Consistency level.
    pub consistency: Consistency,
    /// Serial consistency for conditional statements.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp in microseconds.
    pub timestamp: Option<i64>,
    /// v5: the keyspace to run in, instead of the connection's.
    pub keyspace: Option<&'a str>,
    /// v5: "now" for the batch, in seconds since the epoch.
    pub now_in_seconds: Option<i32>,
}

impl RequestBody for BatchOf<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Batch
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        // The suffix is laid out as QUERY's (without page size and paging state).
        let suffix = QueryParameters {
            serial_consistency: self.serial_consistency,
            timestamp: self.timestamp,
            keyspace: self.keyspace,
            now_in_seconds: self.now_in_seconds,
            ..QueryParameters::default()
        };
        suffix.check(version)?;
        buf.put_u8(self.kind as u8);
        buf.put_u16(count_u16(self.statements.len(), "batch statement count")?);
        for k in 0..self.statements.len() {
            self.statements
                .with_element(k, &mut |st| write_batch_statement(st, buf))?;
        }
        self.consistency.encode(buf);
        put_flags(buf, version, suffix.flags(&()))?;
        suffix.encode_suffix(buf)
    }
}

impl std::fmt::Debug for BatchOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchOf")
            .field("kind", &self.kind)
            .field("statements", &self.statements.len())
            .field("consistency", &self.consistency)
            .field("serial_consistency", &self.serial_consistency)
            .field("timestamp", &self.timestamp)
            .field("keyspace", &self.keyspace)
            .field("now_in_seconds", &self.now_in_seconds)
            .finish()
    }
}

/// One statement of a BATCH: its kind byte, its text or id, and its values.
fn write_batch_statement(st: &BatchStatement<'_>, buf: &mut BytesMut) -> Result<()> {
    let (values, columns) = match st {
        BatchStatement::Query { query, values } => {
            buf.put_u8(0);
            wire::put_long_string(buf, query, "batch query")?;
            (*values, None)
        }
        BatchStatement::Prepared {
            id,
            values,
            columns,
        } => {
            buf.put_u8(1);
            wire::put_short_bytes(buf, id, "batch prepared id")?;
            (*values, *columns)
        }
    };
    if values.has_names() {
        return Err(ProtoError::InvalidValue {
            what: "batch values",
            detail: "named values do not work in BATCH (CASSANDRA-10246)".into(),
        });
    }
    buf.put_u16(count_u16(values.count(), "batch value count")?);
    values.write_values(columns, buf)
}

/// Bound values as decoded by a server: optional names and raw `[value]`s.
pub type DecodedValues<'a> = Vec<(Option<&'a str>, RawValue<'a>)>;

/// `<query_parameters>` as decoded by a server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedParameters<'a> {
    /// Everything but the values.
    pub params: QueryParameters<'a>,
    /// The values, in order.
    pub values: DecodedValues<'a>,
}

fn decode_values<'a>(r: &mut Reader<'a>, named: bool) -> Result<DecodedValues<'a>> {
    let n = r.read_short("value count")? as usize;
    // Each value takes at least 4 bytes: never reserve past what the input can hold.
    let mut out = Vec::with_capacity(n.min(r.remaining() / 4));
    for _ in 0..n {
        let name = if named {
            Some(r.read_string("value name")?)
        } else {
            None
        };
        out.push((name, r.read_value("bound value")?));
    }
    Ok(out)
}

fn decode_parameters<'a>(
    r: &mut Reader<'a>,
    version: ProtocolVersion,
) -> Result<DecodedParameters<'a>> {
    let consistency = Consistency::decode(r)?;
    let flags = read_flags(r, version, "query flags")?;
    let values = if flags & query_flags::VALUES != 0 {
        decode_values(r, flags & query_flags::NAMES_FOR_VALUES != 0)?
    } else {
        Vec::new()
    };
    let page_size = (flags & query_flags::PAGE_SIZE != 0)
        .then(|| r.read_int("page size"))
        .transpose()?;
    let paging_state = if flags & query_flags::PAGING_STATE != 0 {
        r.read_bytes("paging state")?
    } else {
        None
    };
    let serial_consistency = (flags & query_flags::SERIAL_CONSISTENCY != 0)
        .then(|| Consistency::decode(r))
        .transpose()?;
    let timestamp = (flags & query_flags::DEFAULT_TIMESTAMP != 0)
        .then(|| r.read_long("default timestamp"))
        .transpose()?;
    let (keyspace, now_in_seconds) = decode_v5_suffix(r, flags)?;
    Ok(DecodedParameters {
        params: QueryParameters {
            consistency,
            skip_metadata: flags & query_flags::SKIP_METADATA != 0,
            page_size,
            paging_state,
            serial_consistency,
            timestamp,
            keyspace,
            now_in_seconds,
        },
        values,
    })
}

/// The v5 keyspace and now-in-seconds, if their flags are set. A v4 request cannot carry
/// 0x100 (its flags are one byte); one with 0x80 is read with a keyspace too, which v4 does
/// not define: the encoder never sends it in v4.
fn decode_v5_suffix<'a>(r: &mut Reader<'a>, flags: u32) -> Result<(Option<&'a str>, Option<i32>)> {
    let keyspace = (flags & query_flags::WITH_KEYSPACE != 0)
        .then(|| r.read_string("query keyspace"))
        .transpose()?;
    let now = (flags & query_flags::NOW_IN_SECONDS != 0)
        .then(|| r.read_int("now in seconds"))
        .transpose()?;
    Ok((keyspace, now))
}

/// A BATCH statement as decoded by a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedBatchStatement<'a> {
    /// CQL text and values.
    Query(&'a str, DecodedValues<'a>),
    /// Prepared id and values.
    Prepared(&'a [u8], DecodedValues<'a>),
}

/// A request as decoded by a server, borrowing the frame body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// STARTUP options.
    Startup(Vec<(&'a str, &'a str)>),
    /// OPTIONS.
    Options,
    /// AUTH_RESPONSE token.
    AuthResponse(Option<&'a [u8]>),
    /// REGISTER event types.
    Register(Vec<&'a str>),
    /// PREPARE.
    Prepare {
        /// The CQL text.
        query: &'a str,
        /// v5: the keyspace to prepare in.
        keyspace: Option<&'a str>,
    },
    /// QUERY text and parameters.
    Query(&'a str, DecodedParameters<'a>),
    /// EXECUTE.
    Execute {
        /// The prepared id.
        id: &'a [u8],
        /// v5: the result metadata id the client knows.
        result_metadata_id: Option<&'a [u8]>,
        /// Consistency, values and the rest.
        params: DecodedParameters<'a>,
    },
    /// BATCH.
    Batch {
        /// Logged, unlogged, counter.
        kind: BatchType,
        /// The statements.
        statements: Vec<DecodedBatchStatement<'a>>,
        /// Consistency level.
        consistency: Consistency,
        /// Serial consistency.
        serial_consistency: Option<Consistency>,
        /// Default timestamp.
        timestamp: Option<i64>,
        /// v5: the keyspace to run in.
        keyspace: Option<&'a str>,
        /// v5: "now" in seconds.
        now_in_seconds: Option<i32>,
    },
}

/// A request frame's envelope (spec section 4): only a custom payload for requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame<'a> {
    /// Tracing was asked for.
    pub tracing: bool,
    /// The custom payload, if the flag was set.
    pub custom_payload: Option<wire::BytesMap<'a>>,
    /// The message.
    pub request: Request<'a>,
}

impl<'a> Request<'a> {
    /// Decodes a request body (already decompressed) according to its header.
    pub fn decode(header: &FrameHeader, body: &'a [u8]) -> Result<RequestFrame<'a>> {
        if header.direction != Direction::Request {
            return Err(ProtoError::WrongDirection {
                found: "response",
                expected: "request",
            });
        }
        let mut r = Reader::new(body);
        let custom_payload = if header.flags.contains(Flags::CUSTOM_PAYLOAD) {
            Some(r.read_bytes_map("custom payload")?)
        } else {
            None
        };
        let request = match header.opcode {
            Opcode::Startup => Request::Startup(r.read_string_map("STARTUP options")?),
            Opcode::Options => Request::Options,
            Opcode::AuthResponse => Request::AuthResponse(r.read_bytes("AUTH_RESPONSE token")?),
            Opcode::Register => Request::Register(r.read_string_list("REGISTER events")?.collect()),
            Opcode::Prepare => {
                let query = r.read_long_string("PREPARE query")?;
                let keyspace = if header.version.has_int_flags() {
                    let flags = r.read_int("PREPARE flags")? as u32;
                    (flags & prepare_flags::WITH_KEYSPACE != 0)
                        .then(|| r.read_string("PREPARE keyspace"))
                        .transpose()?
                } else {
                    None
                };
                Request::Prepare { query, keyspace }
            }
            Opcode::Query => {
                let q = r.read_long_string("QUERY text")?;
                Request::Query(q, decode_parameters(&mut r, header.version)?)
            }
            Opcode::Execute => {
                let id = r.read_short_bytes("prepared id")?;
                let result_metadata_id = header
                    .version
                    .has_v5_fields()
                    .then(|| r.read_short_bytes("result metadata id"))
                    .transpose()?;
                Request::Execute {
                    id,
                    result_metadata_id,
                    params: decode_parameters(&mut r, header.version)?,
                }
            }
            Opcode::Batch => {
                let kind = BatchType::from_byte(r.read_byte("batch type")?)?;
                let n = r.read_short("batch statement count")? as usize;
                // Each statement takes at least 5 bytes.
                let mut statements = Vec::with_capacity(n.min(r.remaining() / 5));
                // Names (flag 0x40) come after the statements: values are read unnamed, as
                // servers do (CASSANDRA-10246).
                for _ in 0..n {
                    let st = match r.read_byte("batch statement kind")? {
                        0 => {
                            let q = r.read_long_string("batch query")?;
                            DecodedBatchStatement::Query(q, decode_values(&mut r, false)?)
                        }
                        1 => {
                            let id = r.read_short_bytes("batch prepared id")?;
                            DecodedBatchStatement::Prepared(id, decode_values(&mut r, false)?)
                        }
                        k => {
                            return Err(ProtoError::InvalidValue {
                                what: "batch statement kind",
                                detail: format!("{k} is not 0 or 1"),
                            })
                        }
                    };
                    statements.push(st);
                }
                let consistency = Consistency::decode(&mut r)?;
                let flags = read_flags(&mut r, header.version, "batch flags")?;
                let serial_consistency = (flags & query_flags::SERIAL_CONSISTENCY != 0)
                    .then(|| Consistency::decode(&mut r))
                    .transpose()?;
                let timestamp = (flags & query_flags::DEFAULT_TIMESTAMP != 0)
                    .then(|| r.read_long("batch timestamp"))
                    .transpose()?;
                let (keyspace, now_in_seconds) = decode_v5_suffix(&mut r, flags)?;
                Request::Batch {
                    kind,
                    statements,
                    consistency,
                    serial_consistency,
                    timestamp,
                    keyspace,
                    now_in_seconds,
                }
            }
            other => {
                return Err(ProtoError::UnexpectedMessage {
                    found: other.name(),
                    expected: "a request",
                })
            }
        };
        r.expect_end(header.opcode.name())?;
        Ok(RequestFrame {
            tracing: header.flags.contains(Flags::TRACING),
            custom_payload,
            request,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(buf: &[u8]) -> RequestFrame<'_> {
        let h = FrameHeader::decode(buf).unwrap();
        assert_eq!(h.length as usize, buf.len() - HEADER_LEN);
        Request::decode(&h, &buf[HEADER_LEN..]).unwrap()
    }

    #[test]
    fn query_layout_is_byte_exact() {
        let mut buf = BytesMut::new();
        let values = [RawValue::Bytes(&[0, 0, 0, 7]), RawValue::Null];
        let q = Query {
            query: "SELECT ?",
            params: QueryParameters {
                consistency: Consistency::One,
                page_size: Some(100),
                ..Default::default()
            },
            values: &values[..],
        };
        encode_request(&mut buf, 3, Flags::NONE, &q).unwrap();
        let expected: Vec<u8> = [
            &[0x04, 0x00, 0x00, 0x03, 0x07][..], // header: v4 request, no flags, stream 3, QUERY
            &[0, 0, 0, 33],                      // body length: 4 + 8 + 2 + 1 + 2 + 8 + 4 + 4
            &[0, 0, 0, 8],                       // [long string] length
            b"SELECT ?",
            &[0x00, 0x01],             // consistency ONE
            &[0x05],                   // flags: VALUES | PAGE_SIZE
            &[0x00, 0x02],             // 2 values
            &[0, 0, 0, 4, 0, 0, 0, 7], // [value] int 7
            &[0xff, 0xff, 0xff, 0xff], // null
            &[0, 0, 0, 100],           // page size
        ]
        .concat();
        assert_eq!(&buf[..], &expected[..]);
        let back = decode(&buf);
        let Request::Query(text, p) = back.request else {
            panic!()
        };
        assert_eq!(text, "SELECT ?");
        assert_eq!(p.params.page_size, Some(100));
        assert_eq!(p.values, vec![(None, values[0]), (None, values[1])]);
    }

    #[test]
    fn execute_template_equals_plain_execute_and_patches_stream() {
        let params = QueryParameters {
            consistency: Consistency::LocalQuorum,
            serial_consistency: Some(Consistency::LocalSerial),
            timestamp: Some(1_700_000_000_000_000),
            skip_metadata: true,
            ..Default::default()
        };
        let values = [RawValue::Bytes(b"k1"), RawValue::Unset];
        let t = ExecuteTemplate::new(
            ProtocolVersion::V4,
            b"\x01\x02",
            None,
            2,
            &params,
            Flags::NONE,
        )
        .unwrap();
        let mut a = BytesMut::new();
        t.encode(&mut a, 42, &values[..], None).unwrap();
        let mut b = BytesMut::new();
        let e = Execute {
            id: b"\x01\x02",
            result_metadata_id: None,
            params,
            values: &values[..],
            columns: None,
        };
        encode_request(&mut b, 42, Flags::NONE, &e).unwrap();
        assert_eq!(a, b);
        // Wrong arity is an error and leaves the buffer as it was.
        let before = a.clone();
        assert!(t.encode(&mut a, 1, &values[..1], None).is_err());
        assert_eq!(a, before);
        let back = decode(&b);
        assert_eq!(
            back.request,
            Request::Execute {
                id: b"\x01\x02",
                result_metadata_id: None,
                params: DecodedParameters {
                    params,
                    values: vec![(None, values[0]), (None, values[1])],
                }
            }
        );
    }

    /// Values that name the marker they lack (as a struct bound by name does) give that
    /// error rather than the counts, on both encoders; others give the counts.
    #[test]
    fn a_count_mismatch_lets_the_values_name_the_column() {
        struct NamesTheGap;
        impl QueryValues for NamesTheGap {
            fn count(&self) -> usize {
                1
            }
            fn write_values(
                &self,
                columns: Option<&[ColumnSpec]>,
                buf: &mut BytesMut,
            ) -> Result<()> {
                buf.put_i32(-1);
                match columns {
                    Some(c) if c.len() != 1 => Err(ProtoError::Value {
                        column: "1 `b`".into(),
                        reason: Box::new(crate::ValueError::NoFieldForColumn),
                    }),
                    _ => Ok(()),
                }
            }
        }
        let int = |n: &str| ColumnSpec::new("ks", "t", n, crate::types::ColumnType::Int);
        let cols = [int("a"), int("b")];
        let params = QueryParameters::default();
        let t = ExecuteTemplate::new(ProtocolVersion::V4, b"id", None, 2, &params, Flags::NONE)
            .unwrap();
        let mut buf = BytesMut::new();
        let err = t
            .encode(&mut buf, 1, &NamesTheGap, Some(&cols))
            .unwrap_err();
        assert!(
            matches!(err, ProtoError::Value { ref column, .. } if column == "1 `b`"),
            "{err}"
        );
        assert!(buf.is_empty(), "nothing left behind");
        let e = Execute {
            id: b"id",
            result_metadata_id: None,
            params,
            values: &NamesTheGap,
            columns: Some(&cols),
        };
        let err = encode_request(&mut buf, 1, Flags::NONE, &e).unwrap_err();
        assert!(matches!(err, ProtoError::Value { .. }), "{err}");
        let values = [RawValue::Null];
        let err = t.encode(&mut buf, 1, &values[..], Some(&cols)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid bound values: 1 values for 2 bind markers"
        );
    }

    #[test]
    fn every_request_round_trips() {
        let named = [("k", RawValue::Bytes(b"v"))];
        let vals = [RawValue::Bytes(b"x")];
        let stmts = [
            BatchStatement::Query {
                query: "INSERT INTO t (k) VALUES (?)",
                values: &&vals[..],
            },
            BatchStatement::Prepared {
                id: b"id",
                values: &(),
                columns: None,
            },
        ];
        let mut buf = BytesMut::new();
        encode_request(
            &mut buf,
            0,
            Flags::NONE,
            &Startup {
                options: &[("CQL_VERSION", "3.0.0")],
            },
        )
        .unwrap();
        encode_request(&mut buf, 1, Flags::NONE, &Options).unwrap();
        encode_request(
            &mut buf,
            2,
            Flags::NONE,
            &AuthResponse {
                token: Some(b"\0u\0p"),
            },
        )
        .unwrap();
        encode_request(
            &mut buf,
            3,
            Flags::NONE,
            &Register {
                events: &["SCHEMA_CHANGE"],
            },
        )
        .unwrap();
        encode_request(
            &mut buf,
            4,
            Flags::TRACING,
            &Prepare {
                query: "SELECT 1",
                keyspace: None,
            },
        )
        .unwrap();
        encode_request(
            &mut buf,
            5,
            Flags::NONE,
            &Query {
                query: "SELECT :k",
                params: QueryParameters {
                    paging_state: Some(b"ps"),
                    ..Default::default()
                },
                values: &named[..],
            },
        )
        .unwrap();
        encode_request(
            &mut buf,
            6,
            Flags::NONE,
            &Batch {
                kind: BatchType::Unlogged,
                statements: &stmts,
                consistency: Consistency::Quorum,
                serial_consistency: None,
                timestamp: Some(5),
                keyspace: None,
                now_in_seconds: None,
            },
        )
        .unwrap();
        let decoder = crate::frame::FrameDecoder::new(Direction::Request);
        let mut frames = Vec::new();
        while let Some(f) = decoder.decode(&mut buf).unwrap() {
            frames.push(f);
        }
        assert_eq!(frames.len(), 7);
        let d: Vec<_> = frames
            .iter()
            .map(|f| Request::decode(&f.header, &f.body).unwrap())
            .collect();
        assert_eq!(
            d[0].request,
            Request::Startup(vec![("CQL_VERSION", "3.0.0")])
        );
        assert_eq!(d[1].request, Request::Options);
        assert_eq!(d[2].request, Request::AuthResponse(Some(b"\0u\0p")));
        assert_eq!(d[3].request, Request::Register(vec!["SCHEMA_CHANGE"]));
        assert!(d[4].tracing);
        assert_eq!(
            d[4].request,
            Request::Prepare {
                query: "SELECT 1",
                keyspace: None
            }
        );
        let Request::Query(_, p) = &d[5].request else {
            panic!()
        };
        assert_eq!(p.values, vec![(Some("k"), RawValue::Bytes(b"v"))]);
        assert_eq!(p.params.paging_state, Some(&b"ps"[..]));
        let Request::Batch {
            kind,
            statements,
            timestamp,
            ..
        } = &d[6].request
        else {
            panic!()
        };
        assert_eq!(*kind, BatchType::Unlogged);
        assert_eq!(*timestamp, Some(5));
        assert_eq!(
            statements[1],
            DecodedBatchStatement::Prepared(b"id", vec![])
        );
    }

    #[test]
    fn invalid_parameters_send_nothing() {
        let mut buf = BytesMut::from(&b"queued"[..]);
        let bad = Query {
            query: "x",
            params: QueryParameters {
                serial_consistency: Some(Consistency::One),
                ..Default::default()
            },
            values: &(),
        };
        assert!(encode_request(&mut buf, 0, Flags::NONE, &bad).is_err());
        assert_eq!(&buf[..], b"queued");
    }

    #[test]
    fn compressed_request_decompresses_to_the_plain_body() {
        let q = Prepare {
            query: &"SELECT * FROM t WHERE a = ? AND b = ?".repeat(10),
            keyspace: None,
        };
        let mut plain = BytesMut::new();
        encode_request(&mut plain, 9, Flags::NONE, &q).unwrap();
        let mut packed = BytesMut::new();
        let mut scratch = BytesMut::new();
        encode_request_compressed(
            &mut packed,
            9,
            Flags::NONE,
            &q,
            Compression::Lz4,
            &mut scratch,
        )
        .unwrap();
        let h = FrameHeader::decode(&packed).unwrap();
        assert!(h.flags.contains(Flags::COMPRESSION));
        let body = Compression::Lz4
            .decompress(&packed[HEADER_LEN..], 1 << 20)
            .unwrap();
        assert_eq!(&body[..], &plain[HEADER_LEN..]);
    }

    #[test]
    fn hostile_request_bodies_are_errors() {
        let h = |op| FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Request,
            flags: Flags::NONE,
            stream: 0,
            opcode: op,
            length: 0,
        };
        // Claims 65535 values, holds none.
        let body = [0, 1, query_flags::VALUES as u8, 0xff, 0xff];
        assert!(Request::decode(&h(Opcode::Execute), &[&[0, 0][..], &body].concat()).is_err());
        assert!(Request::decode(&h(Opcode::Query), &[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(Request::decode(&h(Opcode::Batch), &[7, 0, 0]).is_err());
        assert!(
            Request::decode(&h(Opcode::Options), &[1]).is_err(),
            "trailing bytes"
        );
        assert!(Request::decode(&h(Opcode::Result), &[]).is_err());
    }

    /// Encodes `request` as `version`, decodes it back, and returns the bytes of the body.
    fn v(version: ProtocolVersion, request: &impl RequestBody) -> BytesMut {
        let mut buf = BytesMut::new();
        encode_envelope(&mut buf, version, 3, Flags::NONE, request).unwrap();
        assert_eq!(buf[0], version.number());
        buf
    }

    fn decode_v5(buf: &[u8]) -> RequestFrame<'_> {
        let d =
            crate::frame::FrameDecoder::new(Direction::Request).with_version(ProtocolVersion::V5);
        let Ok(crate::frame::FrameStatus::Complete { header, frame_len }) = d.check(buf) else {
            panic!("not one whole v5 envelope");
        };
        assert_eq!(frame_len, buf.len());
        Request::decode(&header, &buf[HEADER_LEN..]).unwrap()
    }

    #[test]
    fn v5_query_flags_are_an_int_with_keyspace_and_now_in_seconds_last() {
        let params = QueryParameters {
            consistency: Consistency::One,
            page_size: Some(7),
            keyspace: Some("ks"),
            now_in_seconds: Some(1_700_000_000),
            ..Default::default()
        };
        let q = Query {
            query: "SELECT 1",
            params,
            values: &(),
        };
        let buf = v(ProtocolVersion::V5, &q);
        let body = &buf[HEADER_LEN..];
        // [long string] "SELECT 1", consistency ONE, flags as an [int]: page size | keyspace
        // | now in seconds, then page size, keyspace, now.
        let mut expected = vec![0, 0, 0, 8];
        expected.extend_from_slice(b"SELECT 1");
        expected.extend_from_slice(&[0, 1, 0, 0, 0x01, 0x84, 0, 0, 0, 7, 0, 2, b'k', b's']);
        expected.extend_from_slice(&1_700_000_000i32.to_be_bytes());
        assert_eq!(body, &expected[..]);
        let back = decode_v5(&buf);
        let Request::Query(text, p) = back.request else {
            panic!("not a QUERY")
        };
        assert_eq!(text, "SELECT 1");
        assert_eq!(p.params, params);
        // The same parameters without the v5 fields: one flag byte in v4, an int in v5.
        let plain = Query {
            params: QueryParameters {
                keyspace: None,
                now_in_seconds: None,
                ..params
            },
            ..q
        };
        assert_eq!(
            v(ProtocolVersion::V5, &plain).len(),
            v(ProtocolVersion::V4, &plain).len() + 3
        );
    }

    #[test]
    fn v5_only_fields_are_refused_in_v4_and_send_nothing() {
        let mut buf = BytesMut::from(&b"queued"[..]);
        let with_ks = Query {
            query: "SELECT 1",
            params: QueryParameters {
                keyspace: Some("ks"),
                ..Default::default()
            },
            values: &(),
        };
        let with_now = Query {
            params: QueryParameters {
                now_in_seconds: Some(1),
                ..Default::default()
            },
            ..with_ks
        };
        let prepare = Prepare {
            query: "SELECT 1",
            keyspace: Some("ks"),
        };
        for err in [
            encode_request(&mut buf, 0, Flags::NONE, &with_ks),
            encode_request(&mut buf, 0, Flags::NONE, &with_now),
            encode_request(&mut buf, 0, Flags::NONE, &prepare),
        ] {
            let Err(ProtoError::InvalidValue { detail, .. }) = err else {
                panic!("a v5 field was accepted in v4: {err:?}");
            };
            assert!(detail.contains("v5"), "{detail}");
        }
        assert_eq!(&buf[..], b"queued");
    }

    #[test]
    fn v5_prepare_has_int_flags_and_an_optional_keyspace() {
        for keyspace in [None, Some("ks")] {
            let p = Prepare {
                query: "SELECT 1",
                keyspace,
            };
            let buf = v(ProtocolVersion::V5, &p);
            let flags_at = HEADER_LEN + 4 + "SELECT 1".len();
            let flags = u32::from_be_bytes(buf[flags_at..flags_at + 4].try_into().unwrap());
            assert_eq!(flags, u32::from(keyspace.is_some()));
            assert_eq!(
                decode_v5(&buf).request,
                Request::Prepare {
                    query: "SELECT 1",
                    keyspace
                }
            );
        }
    }

    /// A page encoded from the template (its own size and paging state in place of the
    /// template's page size) is byte for byte the EXECUTE built field by field, in v4 and
    /// v5, whatever the template had as page size and whatever follows the paging state.
    #[test]
    fn a_templated_page_is_the_execute_built_field_by_field() {
        let values = [RawValue::Bytes(b"k")];
        for version in [ProtocolVersion::V4, ProtocolVersion::V5] {
            for template_page in [None, Some(5000)] {
                for (page_size, paging_state) in [
                    (None, None),
                    (Some(10), None),
                    (Some(10), Some(&b"\x01\x02\x03"[..])),
                    (None, Some(&b""[..])),
                ] {
                    let defaults = QueryParameters {
                        consistency: Consistency::LocalQuorum,
                        skip_metadata: true,
                        page_size: template_page,
                        serial_consistency: Some(Consistency::LocalSerial),
                        timestamp: Some(1_700_000_000_000_000),
                        ..Default::default()
                    };
                    let metadata_id = (version == ProtocolVersion::V5).then_some(&b"\x0c"[..]);
                    let e = Execute {
                        id: b"\x0a\x0b",
                        result_metadata_id: metadata_id,
                        params: QueryParameters {
                            page_size,
                            paging_state,
                            ..defaults
                        },
                        values: &values[..],
                        columns: None,
                    };
                    let plain = v(version, &e);
                    let t =
                        ExecuteTemplate::new(version, e.id, metadata_id, 1, &defaults, Flags::NONE)
                            .unwrap();
                    let mut templated = BytesMut::from(&b"before"[..]);
                    let page = PageRequest {
                        page_size,
                        paging_state,
                    };
                    t.encode_page(&mut templated, 3, &values[..], None, page)
                        .unwrap();
                    assert_eq!(
                        &templated[6..],
                        &plain[..],
                        "{version:?}, template page {template_page:?}, {page:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn v5_execute_carries_the_result_metadata_id_and_its_template_agrees() {
        let params = QueryParameters {
            consistency: Consistency::LocalQuorum,
            skip_metadata: true,
            page_size: Some(5000),
            ..Default::default()
        };
        let values = [RawValue::Bytes(b"k")];
        let e = Execute {
            id: b"\x0a\x0b",
            result_metadata_id: Some(b"\x0c\x0d\x0e"),
            params,
            values: &values[..],
            columns: None,
        };
        let plain = v(ProtocolVersion::V5, &e);
        // [short bytes] id, [short bytes] result metadata id, then the parameters.
        assert_eq!(
            &plain[HEADER_LEN..HEADER_LEN + 9],
            &[0, 2, 0x0a, 0x0b, 0, 3, 0x0c, 0x0d, 0x0e]
        );
        let t = ExecuteTemplate::new(
            ProtocolVersion::V5,
            e.id,
            e.result_metadata_id,
            1,
            &params,
            Flags::NONE,
        )
        .unwrap();
        let mut templated = BytesMut::new();
        t.encode(&mut templated, 3, &values[..], None).unwrap();
        assert_eq!(templated, plain);
        assert_eq!(
            decode_v5(&plain).request,
            Request::Execute {
                id: b"\x0a\x0b",
                result_metadata_id: Some(b"\x0c\x0d\x0e"),
                params: DecodedParameters {
                    params,
                    values: vec![(None, values[0])],
                },
            }
        );
        // v5 cannot EXECUTE without it; v4 does not send it.
        let mut buf = BytesMut::new();
        let missing = Execute {
            result_metadata_id: None,
            ..e
        };
        assert!(encode_envelope(&mut buf, ProtocolVersion::V5, 0, Flags::NONE, &missing).is_err());
        assert!(buf.is_empty());
        assert!(
            ExecuteTemplate::new(ProtocolVersion::V5, e.id, None, 1, &params, Flags::NONE).is_err()
        );
        let v4 = v(ProtocolVersion::V4, &e);
        assert_eq!(&v4[HEADER_LEN..HEADER_LEN + 4], &[0, 2, 0x0a, 0x0b]);
        assert_eq!(
            v4.len() + 5 + 3,
            plain.len(),
            "v4: no id (5 bytes), one flag byte"
        );
    }

    #[test]
    fn v5_batch_round_trips_with_keyspace_and_now() {
        let vals = [RawValue::Bytes(b"x")];
        let stmts = [BatchStatement::Prepared {
            id: b"id",
            values: &&vals[..],
            columns: None,
        }];
        let b = Batch {
            kind: BatchType::Logged,
            statements: &stmts,
            consistency: Consistency::Quorum,
            serial_consistency: Some(Consistency::Serial),
            timestamp: Some(9),
            keyspace: Some("ks"),
            now_in_seconds: Some(42),
        };
        let buf = v(ProtocolVersion::V5, &b);
        assert_eq!(
            decode_v5(&buf).request,
            Request::Batch {
                kind: BatchType::Logged,
                statements: vec![DecodedBatchStatement::Prepared(
                    b"id",
                    vec![(None, vals[0])]
                )],
                consistency: Consistency::Quorum,
                serial_consistency: Some(Consistency::Serial),
                timestamp: Some(9),
                keyspace: Some("ks"),
                now_in_seconds: Some(42),
            }
        );
        let mut v4 = BytesMut::new();
        assert!(encode_request(&mut v4, 0, Flags::NONE, &b).is_err());
        assert!(v4.is_empty());
    }

    #[test]
    fn a_v4_request_read_as_v5_is_an_error_not_a_misreading() {
        // One flag byte where v5 expects four: the parameters run out.
        let q = Query {
            query: "SELECT 1",
            params: QueryParameters::default(),
            values: &(),
        };
        let mut buf = v(ProtocolVersion::V4, &q);
        buf[0] = ProtocolVersion::V5.number();
        let h = FrameHeader::decode(&buf).unwrap();
        assert!(Request::decode(&h, &buf[HEADER_LEN..]).is_err());
    }
}
