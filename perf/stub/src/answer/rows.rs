//! A result's rows before encoding: a system table's or the configured shape's, the page
//! a request asks for, and their RESULT Rows.

use bytes::{BufMut, Bytes, BytesMut};
use doppio_proto::metadata::{ColumnSpec, RowsMetadata};
use doppio_proto::request::DecodedParameters;
use doppio_proto::response::{Response, ResultBody};
use doppio_proto::rows::Rows;
use doppio_proto::value::CqlValue;

/// The rows `start..end` of `total` that a request with `params` asks for, and the paging
/// state of the next page if there is one (the next row's index, 4 bytes).
pub(super) fn page_bounds(
    params: &DecodedParameters<'_>,
    total: usize,
) -> (usize, usize, Option<Bytes>) {
    let start = params
        .params
        .paging_state
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, |s| u32::from_be_bytes(s) as usize)
        .min(total);
    let page = params
        .params
        .page_size
        .filter(|p| *p > 0)
        .map_or(total, |p| p as usize);
    let end = start.saturating_add(page).min(total);
    let more = (end < total).then(|| Bytes::copy_from_slice(&(end as u32).to_be_bytes()));
    (start, end, more)
}

/// One row's values.
pub(super) type Row = Vec<Option<CqlValue>>;

/// Column specs and row values of a result, before encoding.
pub(super) type RowSet = (Vec<ColumnSpec>, Vec<Row>);

/// A SELECT's rows before paging: a system table's, or the configured shape's (`count`
/// copies of one row, made only for the page a QUERY asks for: a one-row page of a
/// 50,000-row shape costs one row, not 50,000).
pub(super) enum SelectRows {
    Table(Vec<Row>),
    Shape { row: Row, count: usize },
}

impl SelectRows {
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Table(rows) => rows.len(),
            Self::Shape { count, .. } => *count,
        }
    }

    /// Rows `start..end` (within [`Self::len`]).
    pub(super) fn page(&self, start: usize, end: usize) -> std::borrow::Cow<'_, [Row]> {
        match self {
            Self::Table(rows) => std::borrow::Cow::Borrowed(&rows[start..end]),
            Self::Shape { row, .. } => std::borrow::Cow::Owned(vec![row.clone(); end - start]),
        }
    }

    /// Every row.
    pub(super) fn into_rows(self) -> Vec<Row> {
        match self {
            Self::Table(rows) => rows,
            Self::Shape { row, count } => vec![row; count],
        }
    }
}

/// A RESULT Rows of `rows` (values in `columns` order); with `changed`, the columns' result
/// metadata id, it says `METADATA_CHANGED` and sends the columns with that id whatever
/// `skip_metadata` asks (for a client whose id was stale).
pub(super) fn rows_response(
    columns: Vec<ColumnSpec>,
    rows: &[Vec<Option<CqlValue>>],
    paging_state: Option<Bytes>,
    skip_metadata: bool,
    changed: Option<&[u8; 16]>,
) -> Response {
    let mut content = BytesMut::new();
    for row in rows {
        for (value, spec) in row.iter().zip(&columns) {
            match value {
                None => content.put_i32(-1),
                Some(v) => {
                    let at = content.len();
                    content.put_i32(0);
                    if v.encode(&spec.typ, &mut content).is_err() {
                        // A value the stub made for its own column cannot mismatch; if it
                        // ever did, null is what the client sees.
                        content.truncate(at);
                        content.put_i32(-1);
                        continue;
                    }
                    let len = (content.len() - at - 4) as i32;
                    content[at..at + 4].copy_from_slice(&len.to_be_bytes());
                }
            }
        }
    }
    let columns_count = columns.len();
    let skip_metadata = skip_metadata && changed.is_none();
    Response::Result(ResultBody::Rows(Rows {
        metadata: RowsMetadata {
            columns_count,
            paging_state,
            columns: if skip_metadata { Vec::new() } else { columns },
            no_metadata: skip_metadata,
            new_metadata_id: changed.map(|id| Box::new(Bytes::copy_from_slice(id))),
        },
        rows_count: rows.len(),
        content: content.freeze(),
    }))
}
