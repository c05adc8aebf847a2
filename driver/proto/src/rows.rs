//! The rows of a RESULT Rows, kept in the frame body and read lazily.
//!
//! [`Rows::iter`] walks each row once to find its bounds (every cell length checked against
//! the bytes left) and yields [`Row`]s that borrow the body; [`Rows::typed`] checks the
//! column types against a row type (a tuple, or a struct deriving `FromRow`) once per
//! result, then reads rows into it with the cells on the stack (up to 16 columns; wider rows
//! in one buffer reused for every row). Nothing is allocated per row unless the caller asks
//! for owned values.

use bytes::Bytes;

use crate::deserialize::{DeserializeValue, FromRow, RowLayout};
use crate::error::{ProtoError, Result, ValueError};
use crate::metadata::{ColumnSpec, RowsMetadata};
use crate::value::CqlValue;

/// A RESULT Rows: its metadata, and its rows still encoded in the frame body.
///
/// Invariant: `content` is a zero-copy slice of the received frame body holding exactly
/// `<rows_content>`; nothing in it has been validated beyond its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// Column specs, paging state and flags.
    pub metadata: RowsMetadata,
    /// `<rows_count>` as the server sent it.
    pub rows_count: usize,
    /// `<rows_content>`: `rows_count` rows of `metadata.columns_count` `[bytes]` each.
    pub content: Bytes,
}

/// The most columns [`TypedRows`] reads with the cells on the stack (the largest tuple
/// arity); a wider row type reads them into a buffer allocated once per result.
const STACK_COLUMNS: usize = 16;

fn column_error(columns: &[ColumnSpec], index: usize, reason: ValueError) -> ProtoError {
    let column = match &reason {
        // A column the row type wants and the result lacks has no index: name it alone.
        ValueError::MissingColumn { name } => format!("`{name}`"),
        _ => crate::serialize::column_label(index, Some(columns)),
    };
    ProtoError::Value {
        column,
        reason: Box::new(reason),
    }
}

/// Splits one `[bytes]` off the front of `rest`.
fn next_cell<'a>(rest: &mut &'a [u8]) -> Result<Option<&'a [u8]>> {
    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
        return Err(ProtoError::Truncated {
            what: "row cell length",
            needed: 4,
            available: rest.len(),
        });
    };
    let len = i32::from_be_bytes(*len);
    match usize::try_from(len) {
        Err(_) => {
            *rest = tail;
            Ok(None)
        }
        Ok(n) if n <= tail.len() => {
            let (cell, t) = tail.split_at(n);
            *rest = t;
            Ok(Some(cell))
        }
        Ok(n) => Err(ProtoError::Truncated {
            what: "row cell",
            needed: n,
            available: tail.len(),
        }),
    }
}

impl Rows {
    /// Column specs (empty if the server sent no metadata).
    pub fn columns(&self) -> &[ColumnSpec] {
        &self.metadata.columns
    }

    /// The rows with the column specs the server sent.
    pub fn view(&self) -> RowsView<'_> {
        RowsView {
            rows: self,
            columns: &self.metadata.columns,
        }
    }

    /// The rows of a result sent without metadata (`skip_metadata`), read with `columns`
    /// known from elsewhere (the prepared statement's result columns). The caller vouches
    /// that they describe this result; their number is checked against `columns_count`.
    pub fn view_with<'a>(&'a self, columns: &'a [ColumnSpec]) -> RowsView<'a> {
        RowsView {
            rows: self,
            columns,
        }
    }

    /// The rows, read lazily from the frame body without allocating. A malformed row ends
    /// the iteration with an error.
    pub fn iter(&self) -> RowIter<'_> {
        self.view().iter()
    }

    /// The rows read as `T`, with the column types checked once, here.
    pub fn typed<'a, T: FromRow<'a>>(&'a self) -> Result<TypedRows<'a, T>> {
        self.view().typed()
    }
}

/// Rows together with the column specs to read them by: their own, or (for results sent
/// without metadata) the prepared statement's. Copy; borrows both.
#[derive(Debug, Clone, Copy)]
pub struct RowsView<'a> {
    rows: &'a Rows,
    columns: &'a [ColumnSpec],
}

impl<'a> RowsView<'a> {
    /// The column specs the rows are read by.
    pub fn columns(&self) -> &'a [ColumnSpec] {
        self.columns
    }

    /// Rows in this page.
    pub fn len(&self) -> usize {
        self.rows.rows_count
    }

    /// True if the page has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.rows_count == 0
    }

    /// The underlying rows.
    pub fn rows(&self) -> &'a Rows {
        self.rows
    }

    /// The rows, read lazily from the frame body without allocating. A malformed row ends
    /// the iteration with an error.
    pub fn iter(&self) -> RowIter<'a> {
        RowIter {
            rest: &self.rows.content,
            left: self.rows.rows_count,
            columns_count: self.rows.metadata.columns_count,
            columns: self.columns,
            done: false,
        }
    }

    /// The rows read as `T`, with the column types checked once, here.
    pub fn typed<T: FromRow<'a>>(&self) -> Result<TypedRows<'a, T>> {
        let columns = self.columns;
        if columns.len() != self.rows.metadata.columns_count {
            return Err(ProtoError::InvalidValue {
                what: "rows",
                detail: if columns.is_empty() {
                    "the result has no column metadata (skip_metadata): typed rows need it".into()
                } else {
                    format!(
                        "{} column specs for rows of {} columns",
                        columns.len(),
                        self.rows.metadata.columns_count
                    )
                },
            });
        }
        let layout = T::layout(columns).map_err(|(i, reason)| column_error(columns, i, reason))?;
        Ok(TypedRows {
            rows: self.iter(),
            layout,
            wide: Vec::new(),
            _t: std::marker::PhantomData,
        })
    }
}

impl<'a> IntoIterator for RowsView<'a> {
    type Item = Result<Row<'a>>;
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Result<Row<'a>>;
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

/// Iterator over the rows of a [`Rows`], borrowing its content.
#[derive(Debug, Clone)]
pub struct RowIter<'a> {
    rest: &'a [u8],
    left: usize,
    columns_count: usize,
    columns: &'a [ColumnSpec],
    done: bool,
}

impl<'a> Iterator for RowIter<'a> {
    type Item = Result<Row<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.left == 0 {
            self.done = true;
            if !self.rest.is_empty() {
                return Some(Err(ProtoError::TrailingBytes {
                    what: "rows content",
                    extra: self.rest.len(),
                }));
            }
            return None;
        }
        let start = self.rest;
        let mut walk = self.rest;
        for _ in 0..self.columns_count {
            if let Err(e) = next_cell(&mut walk) {
                self.done = true;
                return Some(Err(e));
            }
        }
        let len = start.len() - walk.len();
        self.rest = walk;
        self.left -= 1;
        Some(Ok(Row {
            bytes: &start[..len],
            columns_count: self.columns_count,
            columns: self.columns,
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left + 1))
    }
}

/// One row: its cells, still encoded.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    bytes: &'a [u8],
    columns_count: usize,
    columns: &'a [ColumnSpec],
}

impl<'a> Row<'a> {
    /// The row's raw bytes (its cells, each a `[bytes]`).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.columns_count
    }

    /// True if the row has no cells.
    pub fn is_empty(&self) -> bool {
        self.columns_count == 0
    }

    /// The raw cells in order (`None` for null). The row was validated when it was read.
    pub fn cells(&self) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        let mut rest = self.bytes;
        (0..self.columns_count).map_while(move |_| next_cell(&mut rest).ok())
    }

    /// The raw values of the row's columns in order (`None` for null); the same as
    /// [`Row::cells`].
    pub fn columns(&self) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        self.cells()
    }

    /// The raw value of cell `index` (`None` for null).
    pub fn raw(&self, index: usize) -> Result<Option<&'a [u8]>> {
        // ok_or_else: the message is built only on failure (success allocates nothing).
        self.cells()
            .nth(index)
            .ok_or_else(|| ProtoError::InvalidValue {
                what: "column index",
                detail: format!("{index} is past the {} columns", self.columns_count),
            })
    }

    /// Cell `index` read as `T` (checked against the column's type).
    pub fn get<T: DeserializeValue<'a>>(&self, index: usize) -> Result<T> {
        let raw = self.raw(index)?;
        let col = self
            .columns
            .get(index)
            .ok_or_else(|| ProtoError::InvalidValue {
                what: "column index",
                detail: format!("no metadata for column {index}"),
            })?;
        T::type_check(&col.typ)
            .and_then(|()| T::deserialize(&col.typ, raw))
            .map_err(|reason| column_error(self.columns, index, reason))
    }

    /// Every cell as a dynamic value (`None` for null). Needs column metadata.
    pub fn to_values(&self) -> Result<Vec<Option<CqlValue>>> {
        (0..self.columns_count)
            .map(|i| self.get::<Option<CqlValue>>(i))
            .collect()
    }
}

/// Rows read as `T`; yields an error (naming the column) for a row that does not fit.
#[derive(Debug, Clone)]
pub struct TypedRows<'a, T> {
    rows: RowIter<'a>,
    /// Where `T` reads each field, found once by [`FromRow::layout`].
    layout: RowLayout,
    /// The cells of a row wider than [`STACK_COLUMNS`]: reserved at the first row, then
    /// cleared and refilled for each (no allocation per row).
    wide: Vec<Option<&'a [u8]>>,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: FromRow<'a>> Iterator for TypedRows<'a, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        let row = match self.rows.next()? {
            Ok(row) => row,
            Err(e) => return Some(Err(e)),
        };
        let read = if row.columns_count <= STACK_COLUMNS {
            // Cells on the stack: typed reading allocates nothing per row.
            let mut cells: [Option<&'a [u8]>; STACK_COLUMNS] = [None; STACK_COLUMNS];
            for (slot, cell) in cells.iter_mut().zip(row.cells()) {
                *slot = cell;
            }
            T::from_row_with(&self.layout, row.columns, &cells[..row.columns_count])
        } else {
            self.wide.clear();
            self.wide.extend(row.cells());
            T::from_row_with(&self.layout, row.columns, &self.wide)
        };
        Some(read.map_err(|(i, reason)| column_error(row.columns, i, reason)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::RowsMetadata;
    use crate::types::ColumnType;

    fn rows(content: &'static [u8], count: usize) -> Rows {
        let col = |name: &str, typ| ColumnSpec {
            keyspace: "ks".into(),
            table: "t".into(),
            name: name.into(),
            typ,
        };
        Rows {
            metadata: RowsMetadata {
                columns_count: 2,
                paging_state: None,
                columns: vec![col("k", ColumnType::Int), col("v", ColumnType::Varchar)],
                no_metadata: false,
                new_metadata_id: None,
            },
            rows_count: count,
            content: Bytes::from_static(content),
        }
    }

    const TWO_ROWS: &[u8] = &[
        0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, b'h', b'i', // (1, "hi")
        0, 0, 0, 4, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, // (2, null)
    ];

    #[test]
    fn typed_and_dynamic_access() {
        let r = rows(TWO_ROWS, 2);
        let typed: Vec<(i32, Option<&str>)> = r.typed().unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(typed, vec![(1, Some("hi")), (2, None)]);
        let first = r.iter().next().unwrap().unwrap();
        assert_eq!(first.get::<i32>(0).unwrap(), 1);
        assert_eq!(first.get::<String>(1).unwrap(), "hi");
        assert_eq!(
            first.to_values().unwrap(),
            vec![Some(CqlValue::Int(1)), Some(CqlValue::Text("hi".into()))]
        );
        let second = r.iter().nth(1).unwrap().unwrap();
        let err = second.get::<String>(1).unwrap_err();
        assert!(
            err.to_string().starts_with("column 1 `v`: null value"),
            "{err}"
        );
        assert!(first.get::<i32>(5).is_err());
    }

    #[test]
    fn column_errors_carry_the_typed_value_error_as_their_source() {
        use std::error::Error as _;
        let r = rows(TWO_ROWS, 2);
        let second = r.iter().nth(1).unwrap().unwrap();
        let err = second.get::<String>(1).unwrap_err();
        assert_eq!(
            err,
            ProtoError::Value {
                column: "1 `v`".into(),
                reason: Box::new(ValueError::Null {
                    into: std::any::type_name::<String>()
                }),
            }
        );
        assert!(matches!(err.value_error(), Some(ValueError::Null { .. })));
        assert_eq!(
            err.source().map(ToString::to_string),
            err.value_error().map(ToString::to_string),
            "the source is the value error"
        );
        let err = r.typed::<(i64, String)>().unwrap_err();
        assert!(matches!(
            &err,
            ProtoError::Value { reason, .. }
                if matches!(&**reason, ValueError::CannotDeserialize { typ, rust: "i64" } if typ == "int")
        ));
        let err = r.typed::<(i32,)>().unwrap_err();
        assert!(matches!(
            &err,
            ProtoError::Value { reason, .. }
                if **reason == ValueError::ColumnCount { columns: 2, row: 1 }
        ));
    }

    #[test]
    fn type_mismatch_is_reported_once_per_result() {
        let r = rows(TWO_ROWS, 2);
        let err = r.typed::<(i64, String)>().unwrap_err();
        assert_eq!(err.to_string(), "column 0 `k`: cannot read int into i64");
        assert!(r.typed::<(i32,)>().is_err(), "wrong arity");
    }

    #[test]
    fn malformed_content_is_an_error_not_a_panic() {
        assert!(rows(&TWO_ROWS[..20], 2).iter().any(|r| r.is_err()));
        assert!(rows(TWO_ROWS, 3).iter().any(|r| r.is_err()));
        assert!(
            rows(TWO_ROWS, 1).iter().any(|r| r.is_err()),
            "trailing row bytes"
        );
        assert!(rows(&[0x7f, 0xff, 0xff, 0xff], 1)
            .iter()
            .any(|r| r.is_err()));
        assert_eq!(
            rows(TWO_ROWS, 3).iter().count(),
            3,
            "iteration stops after the error"
        );
    }

    #[test]
    fn raw_cells_collections_and_no_metadata() {
        // One row: (list<int> [5], null).
        let content: &'static [u8] = &[
            0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 5, // [5]
            0xff, 0xff, 0xff, 0xff, // null
        ];
        let list = ColumnType::List(Box::new(ColumnType::Int));
        let mut r = rows(content, 1);
        r.metadata.columns[0].typ = list.clone();
        r.metadata.columns[1].typ = ColumnType::Set(Box::new(ColumnType::Int));
        let row = (&r).into_iter().next().unwrap().unwrap();
        assert_eq!(row.len(), 2);
        assert_eq!(row.raw(1).unwrap(), None);
        assert_eq!(row.raw(0).unwrap().map(<[u8]>::len), Some(12));
        assert_eq!(row.columns().count(), 2);
        assert!(row.raw(2).is_err());
        assert_eq!(row.get::<Vec<i32>>(0).unwrap(), vec![5]);
        assert_eq!(row.get::<Option<Vec<i32>>>(1).unwrap(), None);
        let err = row.get::<Vec<i32>>(1).unwrap_err().to_string();
        assert!(err.starts_with("column 1 `v`: null value"), "{err}");
        assert_eq!(
            row.to_values().unwrap(),
            vec![Some(CqlValue::List(vec![CqlValue::Int(5)])), None]
        );
        let typed: Vec<(Vec<i32>, Option<Vec<i32>>)> =
            r.typed().unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(typed, vec![(vec![5], None)]);
        // A cell whose bytes do not fit its type: an error for that row, naming the column.
        r.metadata.columns[0].typ = ColumnType::Int;
        r.metadata.columns[1].typ = ColumnType::Int;
        let mut typed = r.typed::<(i32, Option<i32>)>().unwrap();
        let err = typed.next().unwrap().unwrap_err().to_string();
        assert!(err.starts_with("column 0 `k`:"), "{err}");
        // Without metadata, raw access works and typed access explains why it cannot.
        r.metadata.no_metadata = true;
        r.metadata.columns.clear();
        assert!(r.typed::<(i32, Option<i32>)>().is_err());
        let row = r.iter().next().unwrap().unwrap();
        assert_eq!(row.raw(1).unwrap(), None);
        assert!(row.get::<i32>(0).is_err());
    }

    #[test]
    fn hostile_counts_and_lengths() {
        // A huge row count over a few bytes: one error, then the end, without reserving.
        let huge = rows(TWO_ROWS, usize::MAX);
        let mut it = huge.iter();
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
        // A cell length past the end, and a length field cut short.
        assert!(rows(&[0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 9, 1], 1)
            .iter()
            .any(|r| r.is_err()));
        assert!(rows(&[0, 0, 0, 4, 0, 0, 0, 1, 0, 0], 1)
            .iter()
            .any(|r| r.is_err()));
        assert_eq!(rows(&[], 0).iter().count(), 0);
    }
}
