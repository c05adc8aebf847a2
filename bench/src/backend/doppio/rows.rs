//! Consuming a doppio result page the way every backend consumes it: each row iterated and
//! each column decoded into its Rust value ([`CqlValue`], through doppio's typed value API),
//! or, with `--discard-results`, the rows only counted from the page header.
//!
//! Nothing is allocated per row or per page here; what a decoded value owns (the `String` of
//! a text column, the `Vec<u8>` of a blob) is inherent to decoding it into an owned value,
//! the same on the scylla backend, and is dropped at once.

use std::hint::black_box;

use doppio_driver::proto::deserialize::DeserializeValue;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::QueryResult;

use crate::engine::validate::RowCheck;

/// Why a page's rows could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RowsError {
    /// The rows content is malformed (a row or cell runs past the page).
    #[error("rows of the result: {0}")]
    Rows(#[source] doppio_driver::proto::ProtoError),
    /// A value does not decode as its column's type.
    #[error("column {column} of the result: {source}")]
    Value {
        /// The column's name.
        column: String,
        /// Why.
        #[source]
        source: doppio_driver::proto::ValueError,
    },
}

/// Whether a conditional update's answer says it was not applied: its first row's
/// `[applied]` column is false (false when the answer has no such column: not conditional,
/// or no rows).
pub(crate) fn not_applied(page: &QueryResult) -> bool {
    let Some(rows) = page.rows() else {
        return false;
    };
    let columns = rows.columns();
    let Some(at) = columns.iter().position(|c| c.name == "[applied]") else {
        return false;
    };
    let Some(Ok(row)) = rows.iter().next() else {
        return false;
    };
    let Some(cell) = row.cells().nth(at) else {
        return false;
    };
    matches!(
        <Option<bool>>::deserialize(&columns[at].typ, cell),
        Ok(Some(false))
    )
}

/// Consumes one page: returns its number of rows, after decoding every column of every row
/// unless `discard`; with `check` (`--validate`), each row's raw cells are compared too.
pub(crate) fn consume(
    page: &QueryResult,
    discard: bool,
    check: Option<&RowCheck>,
) -> Result<u64, RowsError> {
    let Some(rows) = page.rows() else {
        return Ok(0);
    };
    if discard && check.is_none() {
        return Ok(rows.len() as u64);
    }
    let columns = rows.columns();
    let mut n = 0u64;
    for row in rows.iter() {
        let row = row.map_err(RowsError::Rows)?;
        if let Some(check) = check {
            check.row(row.cells());
            if discard {
                n += 1;
                continue;
            }
        }
        for (cell, spec) in row.cells().zip(columns) {
            // An owned value per cell: a text or blob column allocates its String or Vec
            // (inherent to an owned value); every other type decodes without allocating.
            let value = <Option<CqlValue>>::deserialize(&spec.typ, cell).map_err(|source| {
                RowsError::Value {
                    column: spec.name.clone(),
                    source,
                }
            })?;
            // The optimiser must not drop the decoding whose result nothing reads.
            black_box(value);
        }
        n += 1;
    }
    Ok(n)
}
