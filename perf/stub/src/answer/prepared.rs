//! A prepared statement's answers, encoded once at PREPARE (with metadata, without, and with
//! `METADATA_CHANGED` for a client holding a stale result metadata id; uncompressed and lz4),
//! and the ids of statements and of their result columns.

use bytes::{Bytes, BytesMut};
use doppio_proto::compression::Compression;
use doppio_proto::metadata::{ColumnSpec, RowsMetadata};
use doppio_proto::request::DecodedParameters;
use doppio_proto::response::{encode_response, Envelope, Response};
use doppio_proto::MetadataIds;

use crate::answer::rows::{page_bounds, rows_response, RowSet};

/// A prepared statement and its pre-encoded answers.
#[derive(Debug)]
pub struct PreparedEntry {
    /// The statement text.
    pub text: String,
    /// The keyspace it was prepared in (the connection's then), to prepare it again when
    /// its table changes.
    pub(super) keyspace: Option<String>,
    /// The id of its result columns now ([`metadata_id`]).
    pub(super) result_metadata_id: [u8; 16],
    /// RESULT bodies of an EXECUTE: `[with metadata, without, METADATA_CHANGED]`.
    pub(super) bodies: [Bytes; 3],
    /// The same, lz4-compressed.
    pub(super) compressed: [Bytes; 3],
    /// A SELECT's columns and rows when it has more than one row (its EXECUTEs are paged).
    pub(super) pageable: Option<RowSet>,
    /// Whether the statement is conditional (a lightweight transaction).
    pub(super) conditional: bool,
}

impl PreparedEntry {
    /// The RESULT body an EXECUTE gets (compressed when `lz4`): `METADATA_CHANGED` with the
    /// columns and their id when it sent a result metadata id (`sent_id`, where the
    /// connection carries them) that is not theirs, else with or without the columns as
    /// `skip_metadata` asks.
    #[inline]
    pub fn body(&self, skip_metadata: bool, sent_id: Option<&[u8]>, lz4: bool) -> &Bytes {
        let i = if self.stale(sent_id) {
            2
        } else {
            usize::from(skip_metadata)
        };
        if lz4 {
            &self.compressed[i]
        } else {
            &self.bodies[i]
        }
    }

    /// Whether an EXECUTE of this statement may need paging (more than one row): such an
    /// EXECUTE is decoded in full and answered by
    /// [`Responder::answer`](crate::answer::Responder::answer).
    pub fn pageable(&self) -> bool {
        self.pageable.is_some()
    }

    /// Whether the statement is a lightweight transaction
    /// ([`tables::is_conditional`](crate::tables::is_conditional)).
    pub fn conditional(&self) -> bool {
        self.conditional
    }

    /// Whether a client that sent `sent_id` holds result columns other than the statement's
    /// now (no id sent: the connection carries none, nothing to compare).
    #[inline]
    pub(super) fn stale(&self, sent_id: Option<&[u8]>) -> bool {
        sent_id.is_some_and(|id| id != self.result_metadata_id.as_slice())
    }

    /// The page an EXECUTE with `params` (and `sent_id`, [`Self::body`]) asks for, when it is
    /// not the whole result: rows from the paging state's index (the next row's, as QUERY
    /// pages give it), at most the page size of them; with `METADATA_CHANGED` when the id
    /// sent is stale.
    pub(super) fn page(
        &self,
        params: &DecodedParameters<'_>,
        sent_id: Option<&[u8]>,
    ) -> Option<Response> {
        let (columns, rows) = self.pageable.as_ref()?;
        let (start, end, more) = page_bounds(params, rows.len());
        if start == 0 && more.is_none() {
            return None;
        }
        let changed = self.stale(sent_id).then_some(&self.result_metadata_id);
        Some(rows_response(
            columns.clone(),
            &rows[start..end],
            more,
            params.params.skip_metadata,
            changed,
        ))
    }
}

/// A 128-bit id of `bytes`: two FNV-1a hashes of them.
fn id_of(bytes: impl Iterator<Item = u8> + Clone) -> [u8; 16] {
    let hash = |seed: u64| {
        let mut h = seed;
        for b in bytes.clone() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&hash(0xcbf2_9ce4_8422_2325).to_be_bytes());
    id[8..].copy_from_slice(&hash(0x6c62_272e_07bb_0142).to_be_bytes());
    id
}

/// A 128-bit id of a statement: of its text and keyspace.
pub(super) fn statement_id(text: &str, keyspace: Option<&str>) -> [u8; 16] {
    id_of(
        text.bytes()
            .chain([0u8])
            .chain(keyspace.unwrap_or("").bytes()),
    )
}

/// The result metadata id of `columns`: of their specs as a Rows result lays them out, so
/// that it changes exactly when a column is added, dropped, renamed or retyped (as the id
/// Cassandra and ScyllaDB compute from the result metadata does). Distinct from any statement
/// id of the same bytes by a leading marker.
pub(super) fn metadata_id(columns: &[ColumnSpec]) -> [u8; 16] {
    let mut specs = BytesMut::new();
    let metadata = RowsMetadata {
        columns_count: columns.len(),
        columns: columns.to_vec(),
        ..RowsMetadata::default()
    };
    // Encoding the stub's own columns fails only beyond 2 GiB of names; an id of the
    // marker alone is then as good as any.
    let _ = metadata.encode(&mut specs);
    id_of(
        b"result metadata\0"
            .iter()
            .copied()
            .chain(specs.iter().copied()),
    )
}

/// Encodes a response body (no header) with `encode_response` and strips the header. A Rows
/// body lays out alike in v4 and v5; it is encoded as a connection that carries result
/// metadata ids would have it, so that one with `METADATA_CHANGED` encodes too (it is sent
/// only to such a connection).
pub(super) fn body_of(response: &Response, compression: Option<Compression>) -> Bytes {
    let mut buf = BytesMut::new();
    let envelope = Envelope {
        metadata_ids: MetadataIds::Negotiated,
        ..Envelope::default()
    };
    // Encoding a response the stub built itself cannot fail but for sizes beyond 2 GiB,
    // which the stub never builds; an empty body is then sent, which the client reports.
    if encode_response(&mut buf, 0, &envelope, response, compression).is_err() {
        return Bytes::new();
    }
    buf.split_off(doppio_proto::frame::HEADER_LEN).freeze()
}
