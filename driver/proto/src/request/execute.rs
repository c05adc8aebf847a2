//! EXECUTE (spec section 4.1.6): a prepared statement by id with its values, field by field
//! ([`Execute`]) or from a pre-encoded [`ExecuteTemplate`]. The result metadata id after the
//! prepared id is v5's, and v4's on a connection that turned on ScyllaDB's extension
//! ([`MetadataIds`]). On a connection that turned on ScyllaDB's tablets routing v2 every
//! EXECUTE ends with one more byte after its parameters, the tablet version block
//! ([`crate::tablet_version`]): a template then carries a placeholder there
//! ([`ExecuteTemplate::with_tablet_block`]) that the caller overwrites per request, and the
//! general path wraps its [`Execute`] in [`WithTabletBlock`].

use bytes::{BufMut, BytesMut};

use super::body::{finish_frame, put_flags, RequestBody};
use super::query::{count_error, query_flags, write_values, QueryParameters};
use crate::error::{ProtoError, Result};
use crate::frame::{patch_stream, Direction, Flags, FrameHeader, Opcode};
use crate::metadata::ColumnSpec;
use crate::tablet_version::UNKNOWN_VERSION_BLOCK;
use crate::values::QueryValues;
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire;

/// EXECUTE: a prepared statement by id, with its values.
#[derive(Debug, Clone, Copy)]
pub struct Execute<'a, V: ?Sized> {
    /// The prepared id from RESULT Prepared.
    pub id: &'a [u8],
    /// The result metadata id from RESULT Prepared (or the newest a Rows result's
    /// METADATA_CHANGED gave). Required where the connection carries ids
    /// ([`ProtocolVersion::has_metadata_ids`]: v5, or v4 with ScyllaDB's extension on); not
    /// sent elsewhere.
    pub result_metadata_id: Option<&'a [u8]>,
    /// Whether the connection turned on ScyllaDB's result metadata ids in v4.
    pub metadata_ids: MetadataIds,
    /// Consistency, paging and the rest.
    pub params: QueryParameters<'a>,
    /// Bound values.
    pub values: &'a V,
    /// The bind markers from PREPARE, to check the values against.
    pub columns: Option<&'a [ColumnSpec]>,
}

/// Writes EXECUTE's `<id>` and, where the connection carries them, `<result_metadata_id>`.
fn put_execute_ids(
    buf: &mut BytesMut,
    version: ProtocolVersion,
    ids: MetadataIds,
    id: &[u8],
    result_metadata_id: Option<&[u8]>,
) -> Result<()> {
    wire::put_short_bytes(buf, id, "prepared id")?;
    if version.has_metadata_ids(ids) {
        let rid = result_metadata_id.ok_or_else(|| ProtoError::InvalidValue {
            what: "EXECUTE result metadata id",
            detail: if version.has_v5_fields() {
                "is required in protocol v5 (RESULT Prepared gives it)".into()
            } else {
                "is required in v4 with SCYLLA_USE_METADATA_ID on (RESULT Prepared gives it)".into()
            },
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
        put_execute_ids(
            buf,
            version,
            self.metadata_ids,
            self.id,
            self.result_metadata_id,
        )?;
        self.params.encode(version, self.values, self.columns, buf)
    }
}

/// A request body followed by one tablet version block byte (an EXECUTE on a connection with
/// tablets routing v2: the byte comes after its parameters, where the node reads it).
#[derive(Debug, Clone, Copy)]
pub struct WithTabletBlock<'a, B: ?Sized> {
    /// The EXECUTE.
    pub body: &'a B,
    /// The block ([`crate::tablet_version::TabletVersion::block`], or
    /// [`UNKNOWN_VERSION_BLOCK`]).
    pub block: u8,
}

impl<B: RequestBody + ?Sized> RequestBody for WithTabletBlock<'_, B> {
    fn opcode(&self) -> Opcode {
        self.body.opcode()
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        self.body.encode_body(buf, version)?;
        buf.put_u8(self.block);
        Ok(())
    }
}

/// An EXECUTE with everything but the stream id and the values encoded once.
///
/// Invariant: `prefix` is a whole frame header (length 0, stream 0) followed by the prepared
/// id, the consistency and the flags; `suffix` is what follows the values. The flags say
/// "values present" exactly when the statement has bind markers. With a tablet block
/// (`tablet_block`), `suffix` ends with its placeholder byte, so every frame written from the
/// template ends with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteTemplate {
    version: ProtocolVersion,
    /// Whether `prefix` holds a result metadata id (v5, or v4 with ScyllaDB's extension).
    carries_metadata_id: bool,
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    markers: usize,
    /// The query flags at the end of `prefix`.
    flags: u32,
    /// Bytes of `suffix` that are the template's own page size (0 or 4): a page of its
    /// own ([`ExecuteTemplate::encode_page`]) writes its size and state there instead.
    page_size_len: usize,
    /// Whether `suffix` ends with a tablet version block's placeholder (tablets routing v2).
    tablet_block: bool,
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
    /// Pre-encodes an EXECUTE of `version` (on a connection whose result metadata ids are
    /// `ids`) for prepared statement `id` (and, where ids are carried, its
    /// `result_metadata_id`) with `markers` bind markers. `params.paging_state` is not
    /// allowed here (it changes per page: use [`Execute`]).
    pub fn new(
        version: ProtocolVersion,
        ids: MetadataIds,
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
        put_execute_ids(&mut prefix, version, ids, id, result_metadata_id)?;
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
            carries_metadata_id: version.has_metadata_ids(ids),
            prefix: prefix.to_vec(),
            suffix: suffix.to_vec(),
            markers,
            flags: f,
            page_size_len: if params.page_size.is_some() { 4 } else { 0 },
            tablet_block: false,
        })
    }

    /// The template for a connection with tablets routing v2 when `on`: one byte longer, its
    /// frames end with a tablet version block ([`UNKNOWN_VERSION_BLOCK`] until the caller
    /// overwrites it: [`ExecuteTemplate::set_tablet_block`]). Without `on`, unchanged.
    pub fn with_tablet_block(mut self, on: bool) -> Self {
        if on && !self.tablet_block {
            self.suffix.push(UNKNOWN_VERSION_BLOCK);
            self.tablet_block = true;
        }
        self
    }

    /// Whether its frames end with a tablet version block.
    #[inline]
    pub fn carries_tablet_block(&self) -> bool {
        self.tablet_block
    }

    /// Writes `block` into the frame `frame` just written from this template (it ends
    /// `frame`); nothing when the template carries no block.
    #[inline]
    pub fn set_tablet_block(&self, frame: &mut [u8], block: u8) {
        if self.tablet_block {
            if let Some(last) = frame.last_mut() {
                *last = block;
            }
        }
    }

    /// The protocol version it encodes (a connection of another version cannot send it).
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Whether a connection of `version` with result metadata ids `ids` and tablets routing
    /// v2 on or not (`tablet_block`) can send it: the same version, a result metadata id
    /// exactly where that connection carries one, and a tablet block exactly where it reads
    /// one.
    #[inline]
    pub fn fits(&self, version: ProtocolVersion, ids: MetadataIds, tablet_block: bool) -> bool {
        self.version == version
            && self.carries_metadata_id == version.has_metadata_ids(ids)
            && self.tablet_block == tablet_block
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
