//! QUERY (spec section 4.1.4) and its `<query_parameters>`, which EXECUTE and BATCH share:
//! the flags, the parameters and the bound values, encoded and decoded.

use bytes::{BufMut, BytesMut};

use super::body::{count_u16, put_flags, read_flags, v5_only, RequestBody};
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::Opcode;
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

    pub(super) fn check(&self, version: ProtocolVersion) -> Result<()> {
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
    pub(super) fn encode_suffix(&self, buf: &mut BytesMut) -> Result<()> {
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
pub(super) fn count_error(
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
pub(super) fn write_values(
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

pub(super) fn decode_values<'a>(r: &mut Reader<'a>, named: bool) -> Result<DecodedValues<'a>> {
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

pub(super) fn decode_parameters<'a>(
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
pub(super) fn decode_v5_suffix<'a>(
    r: &mut Reader<'a>,
    flags: u32,
) -> Result<(Option<&'a str>, Option<i32>)> {
    let keyspace = (flags & query_flags::WITH_KEYSPACE != 0)
        .then(|| r.read_string("query keyspace"))
        .transpose()?;
    let now = (flags & query_flags::NOW_IN_SECONDS != 0)
        .then(|| r.read_int("now in seconds"))
        .transpose()?;
    Ok((keyspace, now))
}
