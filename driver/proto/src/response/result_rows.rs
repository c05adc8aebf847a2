//! RESULT Rows (spec section 4.2.5.2): where the rows of a body start, once their metadata
//! and count are read and checked against the bytes left.

use bytes::Bytes;

use crate::error::{ProtoError, Result};
use crate::metadata::RowsMetadata;
use crate::wire::Reader;

/// Where the rows of a Rows result start in the body, once their metadata and count have
/// been read (the content is the rest of the body).
pub(super) struct RowsAt {
    pub(super) metadata: RowsMetadata,
    pub(super) rows_count: usize,
    pub(super) offset: usize,
}

// Inlined into the decoder: the hot path of every SELECT (the rows are then built in place
// rather than moved through returns).
#[inline(always)]
pub(super) fn read_rows(r: &mut Reader<'_>, body: &Bytes, metadata_ids: bool) -> Result<RowsAt> {
    let metadata = RowsMetadata::decode(r, body, metadata_ids)?;
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
