//! Consuming a scylla-rust-driver result page the way every backend consumes it: each row
//! iterated through the driver's typed deserialization ([`DeserializeRow`]) and each column
//! decoded into its Rust value (`Option<CqlValue>`), or, with `--discard-results`, the rows
//! only counted from the page header.
//!
//! [`DecodedRow`] decodes a row's columns one by one and drops them, so that no row is
//! collected into a `Vec`; what a decoded value owns (the `String` of a text column, the
//! `Vec<u8>` of a blob) is inherent to an owned value, the same on the doppio backend.

use std::hint::black_box;

use scylla::deserialize::row::{ColumnIterator, DeserializeRow};
use scylla::deserialize::value::DeserializeValue;
use scylla::deserialize::{DeserializationError, TypeCheckError};
use scylla::errors::{IntoRowsResultError, RowsError as ResultRowsError};
use scylla::frame::response::result::ColumnSpec;
use scylla::response::query_result::QueryResult;
use scylla::value::CqlValue;

use crate::engine::validate::RowCheck;

/// Why a page's rows could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RowsError {
    /// The result's metadata could not be read (boxed: the error is large, and rare).
    #[error("the result's rows: {0}")]
    Result(#[source] Box<IntoRowsResultError>),
    /// The rows could not be type-checked.
    #[error("the result's rows: {0}")]
    Rows(#[source] ResultRowsError),
    /// A row or value could not be decoded.
    #[error("a row of the result: {0}")]
    Decode(#[source] DeserializationError),
}

/// A row whose every column was decoded into an `Option<CqlValue>` and dropped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodedRow;

impl<'frame, 'metadata> DeserializeRow<'frame, 'metadata> for DecodedRow {
    fn type_check(_specs: &[ColumnSpec<'_>]) -> Result<(), TypeCheckError> {
        // `CqlValue` reads every CQL type.
        Ok(())
    }

    fn deserialize(row: ColumnIterator<'frame, 'metadata>) -> Result<Self, DeserializationError> {
        for column in row {
            let column = column?;
            let value = <Option<CqlValue>>::deserialize(column.spec.typ(), column.slice)?;
            // The optimiser must not drop the decoding whose result nothing reads.
            black_box(value);
        }
        Ok(DecodedRow)
    }
}

/// Whether a conditional update's answer says it was not applied: its first row's
/// `[applied]` column is false (false when the answer has no such column: not conditional,
/// or no rows). Reads a copy of the page's handle (reference counts, no copy of its bytes):
/// called for conditional statements only.
pub(crate) fn not_applied(page: &QueryResult) -> bool {
    let Ok(rows) = page.clone().into_rows_result() else {
        return false;
    };
    let Ok(mut iter) = rows.rows::<ColumnIterator<'_, '_>>() else {
        return false;
    };
    let Some(Ok(row)) = iter.next() else {
        return false;
    };
    for column in row.flatten() {
        if column.spec.name() == "[applied]" {
            return matches!(
                <Option<bool>>::deserialize(column.spec.typ(), column.slice),
                Ok(Some(false))
            );
        }
    }
    false
}

/// Consumes one page: returns its number of rows, after decoding every column of every row
/// unless `discard`; with `check` (`--validate`), each row's raw cells are compared too.
pub(crate) fn consume(
    page: QueryResult,
    discard: bool,
    check: Option<&RowCheck>,
) -> Result<u64, RowsError> {
    let rows = match page.into_rows_result() {
        Ok(rows) => rows,
        // A statement without rows (an INSERT's Void).
        Err(IntoRowsResultError::ResultNotRows(_)) => return Ok(0),
        Err(e) => return Err(RowsError::Result(Box::new(e))),
    };
    if let Some(check) = check {
        // The raw cells of each row to the check, then (unless discarding) every value
        // decoded as below: the same work as without validation, plus the comparison.
        let mut n = 0u64;
        for row in rows
            .rows::<ColumnIterator<'_, '_>>()
            .map_err(RowsError::Rows)?
        {
            let row = row.map_err(RowsError::Decode)?;
            check.row(
                row.clone()
                    .map(|c| c.ok().and_then(|c| c.slice.map(|s| s.as_slice()))),
            );
            if !discard {
                black_box(DecodedRow::deserialize(row).map_err(RowsError::Decode)?);
            }
            n += 1;
        }
        return Ok(n);
    }
    if discard {
        return Ok(rows.rows_num() as u64);
    }
    let mut n = 0u64;
    for row in rows.rows::<DecodedRow>().map_err(RowsError::Rows)? {
        black_box(row.map_err(RowsError::Decode)?);
        n += 1;
    }
    Ok(n)
}
