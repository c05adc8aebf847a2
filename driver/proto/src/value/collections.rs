//! The wire shapes of collections, tuples, UDTs and vectors: element counts, `[int]`
//! length-prefixed elements, and a vector's elements (fixed-size back to back, or each
//! prefixed with an unsigned vint).

use bytes::BufMut;

use super::cursor::Cursor;
use super::result::ValueResult;
use crate::error::ValueError;
use crate::types::ColumnType;

/// The size of a vector element of type `typ` when Cassandra 5 writes it without a length
/// (`AbstractType.valueLengthIfFixed`): boolean, int, bigint, float, double, timestamp, uuid,
/// timeuuid and vectors of those. Every other element type (including tinyint, smallint,
/// date and time, which Cassandra treats as variable-length) is prefixed by an unsigned vint.
pub fn vector_element_size(typ: &ColumnType) -> Option<usize> {
    match typ {
        ColumnType::Boolean => Some(1),
        ColumnType::Int | ColumnType::Float => Some(4),
        ColumnType::Bigint | ColumnType::Double | ColumnType::Timestamp => Some(8),
        ColumnType::Uuid | ColumnType::Timeuuid => Some(16),
        ColumnType::Vector { element, dimension } => {
            vector_element_size(element)?.checked_mul(*dimension as usize)
        }
        _ => None,
    }
}

/// Calls `f` with the bytes of each element of a `vector<element, dimension>` value, then
/// checks that nothing is left over.
pub(crate) fn vector_elements<'a>(
    element: &ColumnType,
    dimension: u32,
    bytes: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> ValueResult<()>,
) -> ValueResult<()> {
    let n = dimension as usize;
    let size = vector_element_size(element);
    match size {
        // Cassandra has no zero-dimension vectors; refuse a type that would let
        // `dimension` elements be read from no bytes at all.
        Some(0) if n > 0 => return Err(ValueError::ZeroSizedVectorElements),
        // Fixed-size elements: the whole length is known, so it is checked once, up front.
        Some(size) if size.saturating_mul(n) > bytes.len() => {
            return Err(ValueError::Truncated {
                what: "vector",
                needed: size.saturating_mul(n),
                left: bytes.len(),
            })
        }
        _ => {}
    }
    let mut b = Cursor(bytes);
    for _ in 0..n {
        let len = match size {
            Some(size) => size,
            // A length past usize (32-bit targets) is past the bytes left too.
            None => usize::try_from(b.unsigned_vint()?).unwrap_or(usize::MAX),
        };
        f(b.take(len, "vector element")?)?;
    }
    b.end("vector")
}

/// Writes `[int]` length, then what `f` writes, patching the length afterwards.
pub(crate) fn put_len_prefixed(
    buf: &mut impl BufMut,
    f: impl FnOnce(&mut Vec<u8>) -> ValueResult<()>,
) -> ValueResult<()> {
    // Nested values go through a small scratch Vec: collection elements are the cold path;
    // top-level values are written in place by the serialize layer.
    let mut scratch = Vec::new();
    f(&mut scratch)?;
    let len = i32::try_from(scratch.len())
        .map_err(|_| ValueError::ValueTooLong { len: scratch.len() })?;
    buf.put_i32(len);
    buf.put_slice(&scratch);
    Ok(())
}

/// An element count as the `[int]` the wire has for it.
pub(crate) fn count_i32(count: usize) -> ValueResult<i32> {
    i32::try_from(count).map_err(|_| ValueError::TooManyElements { count })
}
