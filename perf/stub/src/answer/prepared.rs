//! A prepared statement's answers, encoded once at PREPARE (with metadata and without,
//! uncompressed and lz4), and the ids of statements.

use bytes::{Bytes, BytesMut};
use doppio_proto::compression::Compression;
use doppio_proto::request::DecodedParameters;
use doppio_proto::response::{encode_response, Envelope, Response};

use crate::answer::rows::{page_bounds, rows_response, RowSet};

/// A prepared statement and its pre-encoded answers.
#[derive(Debug)]
pub struct PreparedEntry {
    /// The statement text.
    pub text: String,
    /// RESULT bodies of an EXECUTE: `[with metadata, without]`.
    pub(super) bodies: [Bytes; 2],
    /// The same, lz4-compressed.
    pub(super) compressed: [Bytes; 2],
    /// A SELECT's columns and rows when it has more than one row (its EXECUTEs are paged).
    pub(super) pageable: Option<RowSet>,
    /// Whether the statement is conditional (a lightweight transaction).
    pub(super) conditional: bool,
}

impl PreparedEntry {
    /// The RESULT body an EXECUTE gets (compressed when `lz4`).
    pub fn body(&self, skip_metadata: bool, lz4: bool) -> &Bytes {
        let i = usize::from(skip_metadata);
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

    /// The page an EXECUTE with `params` asks for, when it is not the whole result: rows
    /// from the paging state's index (the next row's, as QUERY pages give it), at most the
    /// page size of them.
    pub(super) fn page(&self, params: &DecodedParameters<'_>) -> Option<Response> {
        let (columns, rows) = self.pageable.as_ref()?;
        let (start, end, more) = page_bounds(params, rows.len());
        if start == 0 && more.is_none() {
            return None;
        }
        Some(rows_response(
            columns.clone(),
            &rows[start..end],
            more,
            params.params.skip_metadata,
        ))
    }
}

/// A 128-bit id of a statement: two FNV-1a hashes of its text and keyspace.
pub(super) fn statement_id(text: &str, keyspace: Option<&str>) -> [u8; 16] {
    let hash = |seed: u64| {
        let mut h = seed;
        for b in text
            .bytes()
            .chain([0u8])
            .chain(keyspace.unwrap_or("").bytes())
        {
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

/// Encodes a response body (no header) with `encode_response` and strips the header.
pub(super) fn body_of(response: &Response, compression: Option<Compression>) -> Bytes {
    let mut buf = BytesMut::new();
    // Encoding a response the stub built itself cannot fail but for sizes beyond 2 GiB,
    // which the stub never builds; an empty body is then sent, which the client reports.
    if encode_response(&mut buf, 0, &Envelope::default(), response, compression).is_err() {
        return Bytes::new();
    }
    buf.split_off(doppio_proto::frame::HEADER_LEN).freeze()
}
