//! Read validation (`--validate`): a `[[run]]` statement with `validate = EXPR` reads the row
//! that the load phase wrote at iteration `EXPR(i)`. Each value the load's generators produce
//! at that iteration, for a column the read returns (matched by name), must come back byte
//! for byte; a read that returns no row is a missing row.
//!
//! The comparison is the bench's, not a driver's: both backends hand every returned row's raw
//! cells to the same [`RowCheck`] while they consume the row as usual (decoding every value),
//! so validation costs the same on each and a driver that decodes wrongly cannot also check
//! wrongly. A failed check becomes the request's error, of kind [`MISMATCH`] or [`MISSING`]:
//! counted by statement, sample and backend like any error, and it fails the run's exit code.
//!
//! Expected bytes are the load's own encoding of its generators' values for the column's type
//! (the bytes it sent), so only what the server stored and returned is compared. A validated
//! statement reads one row: every row it returns is compared with the same expected values.
//!
//! Per request: one evaluation of the source expression and of each checked column's
//! generator into the fiber's reused buffer; nothing allocates unless a check fails (its
//! message).

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;

use crate::workload::encode::{encode, CqlType, Encoded};
use crate::workload::expr::Expr;
use crate::workload::Statement;

use super::RequestError;

/// Error kind of a returned value that differs from what the load wrote.
pub const MISMATCH: &str = "invalid_value";
/// Error kind of a validated read that returned no row.
pub const MISSING: &str = "missing_row";

/// What a backend learnt from its PREPAREs that validation needs: the load statement's bind
/// markers (column name and type) and the read's result columns (names, in order).
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// The `[load]` statement's bind markers, in order.
    pub load_markers: Vec<(String, CqlType)>,
    /// The read's result columns, in order.
    pub result_columns: Vec<String>,
}

/// One checked column: where it is in the read's result and how the load made its value.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    result_index: usize,
    generator: Expr,
    kind: CqlType,
}

/// A validated statement, compiled against its backend's prepared metadata.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The load iteration that wrote the row read by iteration `i`.
    source: Expr,
    columns: Vec<Column>,
}

impl Validation {
    /// Matches the load's columns to the read's result columns by name. `None` when
    /// `statement` has no `validate`; an error when no column of the result was written by
    /// the load, or the load's arguments do not match its markers.
    pub fn compile(
        statement: &Statement,
        load: &Statement,
        shape: &Shape,
    ) -> Result<Option<Self>, String> {
        let Some(source) = &statement.validate else {
            return Ok(None);
        };
        if load.args.len() != shape.load_markers.len() {
            return Err(format!(
                "the [load] statement has {} bind markers but {} args",
                shape.load_markers.len(),
                load.args.len()
            ));
        }
        let columns: Vec<Column> = shape
            .load_markers
            .iter()
            .zip(&load.args)
            .filter_map(|((name, kind), generator)| {
                let result_index = shape
                    .result_columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))?;
                Some(Column {
                    name: name.clone(),
                    result_index,
                    generator: generator.clone(),
                    kind: kind.clone(),
                })
            })
            .collect();
        if columns.is_empty() {
            return Err(format!(
                "validate: the statement returns {:?}, none of the columns [load] writes ({:?})",
                shape.result_columns,
                shape
                    .load_markers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
            ));
        }
        Ok(Some(Self {
            source: source.clone(),
            columns,
        }))
    }

    /// The names of the checked columns (for the CONFIG section).
    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// A checked column's index in the result and its byte range in the expected buffer
/// (`None`: the load wrote null).
type ExpectedCell = (usize, Option<(usize, usize)>);

/// One fiber's check of the request it has in flight: the expected cells, and what the
/// returned rows showed. Reused from request to request (its buffers keep their capacity).
#[derive(Debug, Default)]
pub struct RowCheck {
    /// The expected cells' bytes, back to back.
    expected: RefCell<Vec<u8>>,
    /// Per checked column: its index in the result and its byte range in `expected` (`None`:
    /// the load wrote null).
    cells: RefCell<Vec<ExpectedCell>>,
    /// The load iteration being checked.
    source: Cell<u64>,
    rows: Cell<u64>,
    /// The first difference: the checked column's position and what came back.
    mismatch: RefCell<Option<(usize, Option<Vec<u8>>)>>,
    /// The load's generators could not be evaluated for this iteration.
    failed: Cell<Option<&'static str>>,
}

impl RowCheck {
    /// Prepares the check of iteration `i` of a statement validated by `v`.
    pub fn begin(&self, v: &Validation, i: u64) {
        self.rows.set(0);
        *self.mismatch.borrow_mut() = None;
        self.failed.set(None);
        let mut expected = self.expected.borrow_mut();
        let mut cells = self.cells.borrow_mut();
        expected.clear();
        cells.clear();
        let source = match v.source.eval(i).map(|x| match x {
            crate::workload::expr::Value::Int(n) => Some(n as u64),
            _ => None,
        }) {
            Ok(Some(n)) => n,
            Ok(None) => {
                self.failed.set(Some("`validate` must give an integer"));
                return;
            }
            Err(e) => {
                self.failed.set(Some(e.0));
                return;
            }
        };
        self.source.set(source);
        for c in &v.columns {
            let from = expected.len();
            let value = match c.generator.eval(source) {
                Ok(value) => value,
                Err(e) => {
                    self.failed.set(Some(e.0));
                    return;
                }
            };
            match encode(value, &c.kind, &mut *expected) {
                Ok(Encoded::Written) => cells.push((c.result_index, Some((from, expected.len())))),
                Ok(Encoded::Null) => cells.push((c.result_index, None)),
                Err(e) => {
                    self.failed.set(Some(e.0));
                    return;
                }
            }
        }
    }

    /// Compares one returned row (its raw cells in result order) with the expected cells.
    pub fn row<'c>(&self, row: impl Iterator<Item = Option<&'c [u8]>>) {
        self.rows.set(self.rows.get() + 1);
        if self.mismatch.borrow().is_some() {
            return;
        }
        let expected = self.expected.borrow();
        let cells = self.cells.borrow();
        for (index, got) in row.enumerate() {
            for (k, (at, want)) in cells.iter().enumerate() {
                if *at != index {
                    continue;
                }
                let want = want.map(|(a, b)| &expected[a..b]);
                if want != got {
                    *self.mismatch.borrow_mut() = Some((k, got.map(<[u8]>::to_vec)));
                    return;
                }
            }
        }
    }

    /// The request's result once validated: a successful read that returned no row, or a
    /// row that differs, becomes an error.
    pub fn finish(
        &self,
        v: &Validation,
        result: Result<u64, RequestError>,
    ) -> Result<u64, RequestError> {
        let rows = result?;
        let source = self.source.get();
        if let Some(why) = self.failed.get() {
            return Err(RequestError {
                kind: MISMATCH,
                message: format!(
                    "cannot compute the expected row of load iteration {source}: {why}"
                ),
            });
        }
        if rows == 0 || self.rows.get() == 0 {
            return Err(RequestError {
                kind: MISSING,
                message: format!("no row returned for the row of load iteration {source}"),
            });
        }
        if let Some((k, got)) = self.mismatch.borrow().as_ref() {
            let expected = self.expected.borrow();
            let cells = self.cells.borrow();
            let want = cells
                .get(*k)
                .and_then(|(_, r)| r.map(|(a, b)| &expected[a..b]));
            let name = v.columns.get(*k).map_or("?", |c| c.name.as_str());
            return Err(RequestError {
                kind: MISMATCH,
                message: format!(
                    "column `{name}` of the row of load iteration {source}: expected {}, got {}",
                    show(want),
                    show(got.as_deref())
                ),
            });
        }
        Ok(rows)
    }
}

/// A cell for a message: null, or its length and first bytes in hex.
fn show(cell: Option<&[u8]>) -> String {
    match cell {
        None => "null".into(),
        Some(b) => {
            let mut s = format!("{} bytes 0x", b.len());
            for byte in b.iter().take(16) {
                let _ = write!(s, "{byte:02x}");
            }
            if b.len() > 16 {
                s.push_str("...");
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::encode::CqlKind;
    use crate::workload::Workload;

    fn read_validation() -> Validation {
        let w = Workload::resolve("read", &[("rows".into(), "100".into())]).unwrap();
        let shape = Shape {
            load_markers: vec![
                ("id".into(), CqlKind::BigInt.into()),
                ("value".into(), CqlKind::Blob.into()),
            ],
            result_columns: vec!["id".into(), "value".into()],
        };
        Validation::compile(&w.run[0], &w.load.as_ref().unwrap().statement, &shape)
            .unwrap()
            .expect("the built-in read is validated")
    }

    /// The cells the load wrote at `source` (id, value), as the server returns them.
    fn stored(v: &Validation, source: u64) -> Vec<Vec<u8>> {
        v.columns
            .iter()
            .map(|c| {
                let mut out = Vec::new();
                encode(c.generator.eval(source).unwrap(), &c.kind, &mut out).unwrap();
                out
            })
            .collect()
    }

    #[test]
    fn the_row_the_load_wrote_passes_and_a_changed_or_missing_one_fails() {
        let v = read_validation();
        assert_eq!(v.column_names(), ["id", "value"]);
        let check = RowCheck::default();
        for i in 0..50 {
            check.begin(&v, i);
            let source = check.source.get();
            assert!(source < 100, "hash(i) % rows");
            let cells = stored(&v, source);
            assert_eq!(cells[0], (source as i64).to_be_bytes());
            check.row(cells.iter().map(|c| Some(c.as_slice())));
            assert_eq!(check.finish(&v, Ok(1)).unwrap(), 1);
        }
        // One byte changed in `value`.
        check.begin(&v, 7);
        let mut cells = stored(&v, check.source.get());
        cells[1][3] ^= 1;
        check.row(cells.iter().map(|c| Some(c.as_slice())));
        let e = check.finish(&v, Ok(1)).unwrap_err();
        assert_eq!(e.kind, MISMATCH);
        assert!(e.message.contains("column `value`"), "{}", e.message);
        // A null where a value was written.
        check.begin(&v, 8);
        let cells = stored(&v, check.source.get());
        check.row([Some(cells[0].as_slice()), None].into_iter());
        assert_eq!(check.finish(&v, Ok(1)).unwrap_err().kind, MISMATCH);
        // No row.
        check.begin(&v, 9);
        let e = check.finish(&v, Ok(0)).unwrap_err();
        assert_eq!(e.kind, MISSING);
        // A failed request stays what it was.
        check.begin(&v, 10);
        let timeout = RequestError {
            kind: "timeout",
            message: String::new(),
        };
        assert_eq!(check.finish(&v, Err(timeout)).unwrap_err().kind, "timeout");
    }

    #[test]
    fn columns_are_matched_by_name_in_any_order_and_unmatched_ones_are_refused() {
        let w = Workload::resolve("read", &[("rows".into(), "100".into())]).unwrap();
        let load = &w.load.as_ref().unwrap().statement;
        let markers = vec![
            ("id".into(), CqlKind::BigInt.into()),
            ("value".into(), CqlKind::Blob.into()),
        ];
        // SELECT value, id: the value is the result's first column.
        let v = Validation::compile(
            &w.run[0],
            load,
            &Shape {
                load_markers: markers.clone(),
                result_columns: vec!["value".into(), "id".into()],
            },
        )
        .unwrap()
        .unwrap();
        let check = RowCheck::default();
        check.begin(&v, 3);
        let cells = stored(&v, check.source.get());
        check.row([Some(cells[1].as_slice()), Some(cells[0].as_slice())].into_iter());
        assert!(check.finish(&v, Ok(1)).is_ok());
        let e = Validation::compile(
            &w.run[0],
            load,
            &Shape {
                load_markers: markers,
                result_columns: vec!["other".into()],
            },
        )
        .unwrap_err();
        assert!(e.contains("none of the columns"), "{e}");
    }
}
