//! Read validation (`--validate`): a `[[run]]` statement with `validate = EXPR` reads the row
//! that its *writer* wrote at iteration `EXPR(i)`: the `[load]` statement, or the run statement
//! its `written_by` names (a converted profile's insert). Each value the writer's generators
//! produce at that iteration, for a column the read returns (matched by name), must come back
//! byte for byte; a read that returns no row is a missing row. Below, "the load" is the
//! writer.
//!
//! The comparison is the bench's, not a driver's: both backends hand every returned row's raw
//! cells to the same [`RowCheck`] while they consume the row as usual (decoding every value),
//! so validation costs the same on each and a driver that decodes wrongly cannot also check
//! wrongly. A failed check becomes the request's error, of kind [`ErrorKind::InvalidValue`]
//! or [`ErrorKind::MissingRow`]: counted by statement, sample and backend like any error, and it fails the run's exit code.
//!
//! Expected bytes are the load's own encoding of its generators' values for the column's type
//! (the bytes it sent), so only what the server stored and returned is compared. A validated
//! statement reads one row: every row it returns is compared with the same expected values.
//!
//! Collections compare as the server normalises them: the server stores a set's elements and
//! a map's keys sorted by their type's order, without duplicates (a map keeps a key's last
//! value), so a column whose type holds a set or a map anywhere is compared in a canonical
//! form of both sides ([`canonical`]): every set's elements and map's entries sorted by their
//! bytes, duplicates dropped. Lists, tuples, user types and vectors keep their order, and so
//! compare byte for byte inside that form. And a list, set or map column that the load wrote
//! empty reads back as null when the column is not frozen (an empty collection is no cells),
//! so at the top level, empty and null are the same.
//!
//! Per request: one evaluation of the source expression and of each checked column's
//! generator into the fiber's reused buffer (collection columns go through the canonical
//! form in reused buffers too); nothing allocates unless a check fails (its message).

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;

use crate::workload::encode::{encode, CqlType, Encoded};
use crate::workload::expr::Expr;
use crate::workload::Statement;

use super::error_kind::ErrorKind;
use super::request::RequestError;

/// Why a statement's `validate` cannot be compiled against what the backend prepared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ValidationError {
    /// The writer's generators do not match its bind markers, so the values it wrote are
    /// not known.
    #[error("the writing statement has {markers} bind markers but {args} args")]
    LoadArgs {
        /// The load statement's bind markers.
        markers: usize,
        /// Its generators (`args`).
        args: usize,
    },
    /// The read returns none of the columns the load writes: nothing to compare.
    #[error(
        "validate: the statement returns {returned:?}, none of the columns its writer writes \
         ({loaded:?}); select at least one of them"
    )]
    NoLoadedColumn {
        /// The read's result columns.
        returned: Vec<String>,
        /// The columns the load statement's bind markers write.
        loaded: Vec<String>,
    },
}

/// What a backend learnt from its PREPAREs that validation needs: the writer's bind
/// markers (column name and type) and the read's result columns (names, in order).
#[derive(Debug, Clone, Default)]
pub(crate) struct PreparedShape {
    /// The writer's bind markers, in order.
    pub(crate) writer_markers: Vec<(String, CqlType)>,
    /// The read's result columns, in order.
    pub(crate) result_columns: Vec<String>,
}

/// One checked column: where it is in the read's result and how the load made its value.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    result_index: usize,
    generator: Expr,
    kind: CqlType,
    /// Compared in the canonical form (a collection at the top, or a set or map inside).
    canonical: bool,
}

/// A validated statement, compiled against its backend's prepared metadata.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The writer's iteration that wrote the row read by iteration `i`.
    source: Expr,
    /// The writer's name in messages (`load` for the `[load]` statement).
    writer: String,
    columns: Vec<Column>,
}

impl Validation {
    /// Matches the load's columns to the read's result columns by name. `None` when
    /// `statement` has no `validate`; an error when no column of the result was written by
    /// the load, or the load's arguments do not match its markers.
    pub(crate) fn compile(
        statement: &Statement,
        load: &Statement,
        shape: &PreparedShape,
    ) -> Result<Option<Self>, ValidationError> {
        let Some(source) = &statement.validate else {
            return Ok(None);
        };
        if load.args.len() != shape.writer_markers.len() {
            return Err(ValidationError::LoadArgs {
                markers: shape.writer_markers.len(),
                args: load.args.len(),
            });
        }
        let columns: Vec<Column> = shape
            .writer_markers
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
                    canonical: is_collection(kind) || kind.has_unordered(),
                })
            })
            .collect();
        if columns.is_empty() {
            return Err(ValidationError::NoLoadedColumn {
                returned: shape.result_columns.clone(),
                loaded: shape
                    .writer_markers
                    .iter()
                    .map(|(n, _)| n.clone())
                    .collect(),
            });
        }
        Ok(Some(Self {
            source: source.clone(),
            writer: load.name.clone(),
            columns,
        }))
    }

    /// The names of the checked columns (for the CONFIG section).
    #[cfg(test)]
    pub(crate) fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// A checked column's index in the result, its byte range in the expected buffer (`None`:
/// the load wrote null), and its type when it compares in the canonical form.
type ExpectedCell = (usize, Option<(usize, usize)>, Option<CqlType>);

/// One fiber's check of the request it has in flight: the expected cells, and what the
/// returned rows showed. Reused from request to request (its buffers keep their capacity).
#[derive(Debug, Default)]
pub(crate) struct RowCheck {
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
    /// Scratch for the canonical form: a cell's bytes, and the entries being sorted.
    scratch: RefCell<Vec<u8>>,
    canon: RefCell<Vec<u8>>,
    entries: RefCell<Vec<Entry>>,
}

impl RowCheck {
    /// Prepares the check of iteration `i` of a statement validated by `v`.
    pub(crate) fn begin(&self, v: &Validation, i: u64) {
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
            if c.canonical {
                let mut scratch = self.scratch.borrow_mut();
                let mut entries = self.entries.borrow_mut();
                scratch.clear();
                let written = match encode(value, &c.kind, &mut *scratch) {
                    Ok(Encoded::Written) => Some(scratch.as_slice()),
                    Ok(Encoded::Null) => None,
                    Err(e) => {
                        self.failed.set(Some(e.0));
                        return;
                    }
                };
                match normalise(written, &c.kind, &mut expected, &mut entries) {
                    Ok(range) => cells.push((c.result_index, range, Some(c.kind.clone()))),
                    Err(Malformed) => {
                        self.failed
                            .set(Some("the load's own encoding does not parse"));
                        return;
                    }
                }
                continue;
            }
            match encode(value, &c.kind, &mut *expected) {
                Ok(Encoded::Written) => {
                    cells.push((c.result_index, Some((from, expected.len())), None));
                }
                Ok(Encoded::Null) => cells.push((c.result_index, None, None)),
                Err(e) => {
                    self.failed.set(Some(e.0));
                    return;
                }
            }
        }
    }

    /// Compares one returned row (its raw cells in result order) with the expected cells.
    pub(crate) fn row<'c>(&self, row: impl Iterator<Item = Option<&'c [u8]>>) {
        self.rows.set(self.rows.get() + 1);
        if self.mismatch.borrow().is_some() {
            return;
        }
        let expected = self.expected.borrow();
        let cells = self.cells.borrow();
        for (index, got) in row.enumerate() {
            for (k, (at, want, canonical)) in cells.iter().enumerate() {
                if *at != index {
                    continue;
                }
                let want = want.map(|(a, b)| &expected[a..b]);
                let same = match canonical {
                    None => want == got,
                    Some(ty) => {
                        let mut canon = self.canon.borrow_mut();
                        let mut entries = self.entries.borrow_mut();
                        canon.clear();
                        match normalise(got, ty, &mut canon, &mut entries) {
                            Ok(range) => want == range.map(|(a, b)| &canon[a..b]),
                            Err(Malformed) => false,
                        }
                    }
                };
                if !same {
                    *self.mismatch.borrow_mut() = Some((k, got.map(<[u8]>::to_vec)));
                    return;
                }
            }
        }
    }

    /// The request's result once validated: a successful read that returned no row, or a
    /// row that differs, becomes an error.
    pub(crate) fn finish(
        &self,
        v: &Validation,
        result: Result<u64, RequestError>,
    ) -> Result<u64, RequestError> {
        let rows = result?;
        let source = self.source.get();
        if let Some(why) = self.failed.get() {
            return Err(RequestError {
                kind: ErrorKind::InvalidValue,
                message: format!(
                    "cannot compute the expected row of {} iteration {source}: {why}",
                    v.writer
                ),
            });
        }
        if rows == 0 || self.rows.get() == 0 {
            return Err(RequestError {
                kind: ErrorKind::MissingRow,
                message: format!(
                    "no row returned for the row of {} iteration {source}",
                    v.writer
                ),
            });
        }
        if let Some((k, got)) = self.mismatch.borrow().as_ref() {
            let expected = self.expected.borrow();
            let cells = self.cells.borrow();
            let want = cells
                .get(*k)
                .and_then(|(_, r, _)| r.map(|(a, b)| &expected[a..b]));
            let name = v.columns.get(*k).map_or("?", |c| c.name.as_str());
            return Err(RequestError {
                kind: ErrorKind::InvalidValue,
                message: format!(
                    "column `{name}` of the row of {} iteration {source}: expected {}, got {}",
                    v.writer,
                    show(want),
                    show(got.as_deref())
                ),
            });
        }
        Ok(rows)
    }
}

/// A list, set or map at the top of a column's type.
fn is_collection(t: &CqlType) -> bool {
    matches!(t, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_))
}

/// A cell that does not parse as its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Malformed;

/// One set element or map entry in the canonical form: its byte range in the output, and
/// where its key ends (the element's end for a set).
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    key_end: usize,
    end: usize,
}

/// Appends the canonical form of a top-level `cell` of type `ty` to `out` and returns its
/// range; `None` for null, and for an empty list, set or map (what a non-frozen empty
/// collection reads back as).
fn normalise(
    cell: Option<&[u8]>,
    ty: &CqlType,
    out: &mut Vec<u8>,
    entries: &mut Vec<Entry>,
) -> Result<Option<(usize, usize)>, Malformed> {
    let Some(bytes) = cell else {
        return Ok(None);
    };
    if is_collection(ty) && bytes == [0, 0, 0, 0] {
        return Ok(None);
    }
    let from = out.len();
    canonical(bytes, ty, out, entries)?;
    Ok(Some((from, out.len())))
}

/// Reads `n` bytes from the front of `b`.
fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8], Malformed> {
    if b.len() < n {
        return Err(Malformed);
    }
    let (head, rest) = b.split_at(n);
    *b = rest;
    Ok(head)
}

fn take_int(b: &mut &[u8]) -> Result<i32, Malformed> {
    let bytes: [u8; 4] = take(b, 4)?.try_into().map_err(|_| Malformed)?;
    Ok(i32::from_be_bytes(bytes))
}

/// A `[bytes]`: an `[int]` length (negative: null), then the bytes.
fn take_cell<'a>(b: &mut &'a [u8]) -> Result<Option<&'a [u8]>, Malformed> {
    let len = take_int(b)?;
    if len < 0 {
        return Ok(None);
    }
    take(b, len as usize).map(Some)
}

/// Cassandra's unsigned vint (a vector's element length).
fn take_unsigned_vint(b: &mut &[u8]) -> Result<usize, Malformed> {
    let first = *take(b, 1)?.first().ok_or(Malformed)?;
    let extra = first.leading_ones() as usize;
    let mut v = u64::from(first & 0xffu8.checked_shr(extra as u32).unwrap_or(0));
    for &byte in take(b, extra)? {
        v = (v << 8) | u64::from(byte);
    }
    usize::try_from(v).map_err(|_| Malformed)
}

/// Appends `cell` as `[bytes]` in canonical form.
fn canonical_cell(
    cell: Option<&[u8]>,
    ty: &CqlType,
    out: &mut Vec<u8>,
    entries: &mut Vec<Entry>,
) -> Result<(), Malformed> {
    let Some(bytes) = cell else {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return Ok(());
    };
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    canonical(bytes, ty, out, entries)?;
    let len = u32::try_from(out.len() - at - 4).map_err(|_| Malformed)?;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Appends the canonical form of the value `bytes` of type `ty` to `out`: the same bytes,
/// except that every set's elements and map's entries are sorted by their (canonical)
/// bytes with duplicates dropped, a map keeping the last entry of each key, and that a
/// variable-size vector element's length is an `[int]`. Two values the server holds equal
/// have the same canonical form whichever order they were written in. `entries` is scratch
/// shared by the nested levels (each uses the part above what its callers use), so nothing
/// allocates once the buffers have grown.
fn canonical(
    bytes: &[u8],
    ty: &CqlType,
    out: &mut Vec<u8>,
    entries: &mut Vec<Entry>,
) -> Result<(), Malformed> {
    let mut b = bytes;
    match ty {
        CqlType::Scalar(_) => {
            out.extend_from_slice(bytes);
            return Ok(());
        }
        CqlType::List(e) => {
            let n = take_int(&mut b)?;
            out.extend_from_slice(&n.to_be_bytes());
            for _ in 0..n.max(0) {
                canonical_cell(take_cell(&mut b)?, e, out, entries)?;
            }
        }
        CqlType::Set(_) | CqlType::Map(_) => {
            let n = take_int(&mut b)?;
            let count_at = out.len();
            out.extend_from_slice(&n.to_be_bytes());
            let first = out.len();
            let base = entries.len();
            for _ in 0..n.max(0) {
                let start = out.len();
                let key_end = match ty {
                    CqlType::Map(kv) => {
                        canonical_cell(take_cell(&mut b)?, &kv.0, out, entries)?;
                        let key_end = out.len();
                        canonical_cell(take_cell(&mut b)?, &kv.1, out, entries)?;
                        key_end
                    }
                    CqlType::Set(e) => {
                        canonical_cell(take_cell(&mut b)?, e, out, entries)?;
                        out.len()
                    }
                    _ => return Err(Malformed),
                };
                entries.push(Entry {
                    start,
                    key_end,
                    end: out.len(),
                });
            }
            // By key, then by position: the last of equal keys is the last written.
            let mine = &mut entries[base..];
            mine.sort_unstable_by(|x, y| {
                out[x.start..x.key_end]
                    .cmp(&out[y.start..y.key_end])
                    .then(x.start.cmp(&y.start))
            });
            // The sorted entries are appended after the unsorted ones, then moved down.
            let tail = out.len();
            let mut kept = 0i32;
            for k in 0..mine.len() {
                let e = mine[k];
                let last_of_key = mine
                    .get(k + 1)
                    .is_none_or(|next| out[e.start..e.key_end] != out[next.start..next.key_end]);
                if last_of_key {
                    out.extend_from_within(e.start..e.end);
                    kept += 1;
                }
            }
            out.copy_within(tail.., first);
            out.truncate(first + (out.len() - tail));
            out[count_at..count_at + 4].copy_from_slice(&kept.to_be_bytes());
            entries.truncate(base);
        }
        CqlType::Tuple(ts) => {
            for t in ts.iter() {
                if b.is_empty() {
                    break;
                }
                canonical_cell(take_cell(&mut b)?, t, out, entries)?;
            }
        }
        CqlType::Udt(u) => {
            for (_, t) in &u.fields {
                if b.is_empty() {
                    break;
                }
                canonical_cell(take_cell(&mut b)?, t, out, entries)?;
            }
        }
        CqlType::Vector(e, dim) => {
            if crate::workload::encode::vector_element_size(e).is_some() {
                out.extend_from_slice(bytes);
                return Ok(());
            }
            for _ in 0..*dim {
                let len = take_unsigned_vint(&mut b)?;
                canonical_cell(Some(take(&mut b, len)?), e, out, entries)?;
            }
        }
    }
    if b.is_empty() {
        Ok(())
    } else {
        Err(Malformed)
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
        let shape = PreparedShape {
            writer_markers: vec![
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
        assert_eq!(e.kind, ErrorKind::InvalidValue);
        assert!(e.message.contains("column `value`"), "{}", e.message);
        // A null where a value was written.
        check.begin(&v, 8);
        let cells = stored(&v, check.source.get());
        check.row([Some(cells[0].as_slice()), None].into_iter());
        assert_eq!(
            check.finish(&v, Ok(1)).unwrap_err().kind,
            ErrorKind::InvalidValue
        );
        // No row.
        check.begin(&v, 9);
        let e = check.finish(&v, Ok(0)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MissingRow);
        // A failed request stays what it was.
        check.begin(&v, 10);
        let timeout = RequestError {
            kind: ErrorKind::Timeout,
            message: String::new(),
        };
        assert_eq!(
            check.finish(&v, Err(timeout)).unwrap_err().kind,
            ErrorKind::Timeout
        );
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
            &PreparedShape {
                writer_markers: markers.clone(),
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
            &PreparedShape {
                writer_markers: markers,
                result_columns: vec!["other".into()],
            },
        )
        .unwrap_err();
        assert!(
            matches!(&e, ValidationError::NoLoadedColumn { returned, .. } if returned == &["other"]),
            "{e:?}"
        );
        assert!(e.to_string().contains("none of the columns"), "{e}");
    }

    fn int_cell(v: i32) -> Vec<u8> {
        [&4i32.to_be_bytes()[..], &v.to_be_bytes()].concat()
    }

    fn collection(cells: &[Vec<u8>], count: i32) -> Vec<u8> {
        let mut out = count.to_be_bytes().to_vec();
        for c in cells {
            out.extend_from_slice(c);
        }
        out
    }

    fn canon(bytes: &[u8], ty: &CqlType) -> Result<Vec<u8>, Malformed> {
        let mut out = Vec::new();
        let mut entries = Vec::new();
        canonical(bytes, ty, &mut out, &mut entries)?;
        assert!(entries.is_empty(), "every level gives its scratch back");
        Ok(out)
    }

    #[test]
    fn sets_and_maps_compare_as_the_server_normalises_them() {
        use std::sync::Arc;
        let int: CqlType = CqlKind::Int.into();
        let set = CqlType::Set(Arc::new(int.clone()));
        let sorted = collection(&[int_cell(-1), int_cell(0), int_cell(5)], 3);
        let written = collection(&[int_cell(5), int_cell(-1), int_cell(5), int_cell(0)], 4);
        assert_eq!(canon(&written, &set), canon(&sorted, &set));
        let other = collection(&[int_cell(-1), int_cell(1), int_cell(5)], 3);
        assert_ne!(canon(&other, &set), canon(&sorted, &set));
        // A map keeps a key's last value.
        let map = CqlType::Map(Arc::new((int.clone(), int.clone())));
        let twice = collection(&[int_cell(1), int_cell(10), int_cell(1), int_cell(20)], 2);
        let last = collection(&[int_cell(1), int_cell(20)], 1);
        assert_eq!(canon(&twice, &map), canon(&last, &map));
        // Lists keep their order, also around a set inside.
        let list = CqlType::List(Arc::new(set.clone()));
        let cell = |b: &[u8]| [&(b.len() as i32).to_be_bytes()[..], b].concat();
        let a = collection(&[cell(&written), cell(&other)], 2);
        let b = collection(&[cell(&sorted), cell(&other)], 2);
        let c = collection(&[cell(&other), cell(&sorted)], 2);
        assert_eq!(canon(&a, &list), canon(&b, &list));
        assert_ne!(canon(&a, &list), canon(&c, &list));
        // Malformed input is an error, not a panic.
        assert!(canon(&[0, 0, 0, 3, 0, 0], &set).is_err());
        assert!(canon(&[0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 9], &set).is_err());
        assert!(canon(&[0xff], &CqlType::Vector(Arc::new(CqlKind::Text.into()), 2)).is_err());
    }

    #[test]
    fn a_set_column_is_checked_in_the_servers_order_and_empty_is_null() {
        use std::sync::Arc;
        let text = r#"
            [load]
            count = 100
            statement = "INSERT INTO t (id, s) VALUES (?, ?)"
            args = ["i", "set(i % 3, 2 - j)"]
            [[run]]
            statement = "SELECT id, s FROM t WHERE id = ?"
            args = ["i % 100"]
            validate = "i % 100"
        "#;
        let w = Workload::from_toml("t", text, &[]).unwrap();
        let set = CqlType::Set(Arc::new(CqlKind::Int.into()));
        let shape = PreparedShape {
            writer_markers: vec![("id".into(), CqlKind::BigInt.into()), ("s".into(), set)],
            result_columns: vec!["id".into(), "s".into()],
        };
        let v = Validation::compile(&w.run[0], &w.load.as_ref().unwrap().statement, &shape)
            .unwrap()
            .unwrap();
        let check = RowCheck::default();
        let id = |n: i64| n.to_be_bytes().to_vec();
        // Iteration 2 wrote {2, 1}: the server returns {1, 2}.
        check.begin(&v, 2);
        let stored = collection(&[int_cell(1), int_cell(2)], 2);
        check.row([Some(id(2).as_slice()), Some(stored.as_slice())].into_iter());
        assert!(check.finish(&v, Ok(1)).is_ok());
        check.begin(&v, 2);
        let changed = collection(&[int_cell(1), int_cell(3)], 2);
        check.row([Some(id(2).as_slice()), Some(changed.as_slice())].into_iter());
        let e = check.finish(&v, Ok(1)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidValue);
        assert!(e.message.contains("column `s`"), "{}", e.message);
        // Iteration 3 wrote an empty set: a non-frozen column reads it back as null.
        check.begin(&v, 3);
        check.row([Some(id(3).as_slice()), None].into_iter());
        assert!(check.finish(&v, Ok(1)).is_ok());
        check.begin(&v, 4);
        check.row([Some(id(4).as_slice()), None].into_iter());
        assert_eq!(
            check.finish(&v, Ok(1)).unwrap_err().kind,
            ErrorKind::InvalidValue
        );
    }
}
