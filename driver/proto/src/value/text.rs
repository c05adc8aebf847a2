//! `ascii` and `text` bytes read as text (`ascii` checked to be ASCII). Blobs need no
//! helper: they are their bytes.

use super::result::ValueResult;
use crate::error::ValueError;
use crate::types::ColumnType;

/// Fails unless every byte is ASCII (as an `ascii` value needs).
pub(crate) fn check_ascii(b: &[u8]) -> ValueResult<()> {
    // `is_ascii` checks a word at a time; the offset is looked for only on failure.
    if b.is_ascii() {
        return Ok(());
    }
    let offset = b.iter().position(|c| !c.is_ascii()).unwrap_or(0);
    Err(ValueError::NonAscii { offset })
}

/// The text of an `ascii` or `text` value (`ascii` is checked to be ASCII).
pub(crate) fn text<'b>(b: &'b [u8], typ: &ColumnType) -> ValueResult<&'b str> {
    if matches!(typ, ColumnType::Ascii) {
        check_ascii(b)?;
    }
    std::str::from_utf8(b).map_err(|source| ValueError::InvalidUtf8 {
        what: "text",
        source,
    })
}
