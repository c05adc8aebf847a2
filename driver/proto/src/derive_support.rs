//! What the code that `doppio-macros` derives calls: small functions that keep the expanded
//! code short and its errors in one place. Not an API of its own (hidden from the docs, and
//! free to change with the macros, which are released with this crate).
//!
//! Names are matched by [`field_index`] and [`column_index`]: the same position first (a
//! struct declared in the columns' or the UDT's order costs one comparison per field), then a
//! search. Nothing here allocates on the success path except [`layout_by_name`], once per
//! result, when the fields are not in the columns' order.

use bytes::BufMut;
pub use bytes::BytesMut;

use crate::deserialize::{DeserializeValue, RowLayout};
use crate::error::{ProtoError, Result, ValueError};
use crate::metadata::ColumnSpec;
use crate::serialize::{write_value, SerializeValue, Special};
use crate::types::ColumnType;
use crate::value::{type_name, ValueResult};

/// The error of a row type's field: the column index and why.
pub type FieldResult<T> = std::result::Result<T, (usize, ValueError)>;

/// The index in `names` of `name`: `at` when `names[at]` is it, else the first match.
#[inline]
pub fn field_index(names: &[&str], at: usize, name: &str) -> Option<usize> {
    if names.get(at).is_some_and(|n| *n == name) {
        return Some(at);
    }
    names.iter().position(|n| *n == name)
}

/// The index of the column named `name`: `at` when column `at` is it, else the first match.
#[inline]
pub fn column_index(columns: &[ColumnSpec], at: usize, name: &str) -> Option<usize> {
    if columns.get(at).is_some_and(|c| c.name == name) {
        return Some(at);
    }
    columns.iter().position(|c| c.name == name)
}

/// Where each of the fields `names` is among `columns`, for a row type read by name: every
/// name must be a column (else [`ValueError::MissingColumn`]) and, unless `extra_columns`,
/// every column a field's (else [`ValueError::NoFieldForColumn`] at that column).
pub fn layout_by_name(
    columns: &[ColumnSpec],
    names: &[&str],
    extra_columns: bool,
) -> FieldResult<RowLayout> {
    let mut found = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let column = column_index(columns, i, name).ok_or_else(|| {
            (
                columns.len(),
                ValueError::MissingColumn {
                    name: (*name).into(),
                },
            )
        })?;
        found.push(column);
    }
    if !extra_columns {
        if let Some(unread) = (0..columns.len()).find(|c| !found.contains(c)) {
            return Err((unread, ValueError::NoFieldForColumn));
        }
    }
    Ok(RowLayout::from_columns(found))
}

/// A row type read by position has as many fields as the result has columns.
pub fn check_column_count(columns: &[ColumnSpec], fields: usize) -> FieldResult<()> {
    if columns.len() == fields {
        Ok(())
    } else {
        Err((
            0,
            ValueError::ColumnCount {
                columns: columns.len(),
                row: fields,
            },
        ))
    }
}

fn past_the_row(column: usize, columns: usize) -> (usize, ValueError) {
    (
        column,
        ValueError::ColumnCount {
            columns,
            row: column.saturating_add(1),
        },
    )
}

/// Checks that column `column` can be read into `T`.
#[inline]
pub fn check<'a, T: DeserializeValue<'a>>(
    columns: &[ColumnSpec],
    column: usize,
) -> FieldResult<()> {
    let spec = columns
        .get(column)
        .ok_or_else(|| past_the_row(column, columns.len()))?;
    T::type_check(&spec.typ).map_err(|e| (column, e))
}

/// Reads column `column` of a row into `T`.
#[inline]
pub fn read<'a, T: DeserializeValue<'a>>(
    columns: &[ColumnSpec],
    values: &[Option<&'a [u8]>],
    column: usize,
) -> FieldResult<T> {
    let spec = columns
        .get(column)
        .ok_or_else(|| past_the_row(column, columns.len()))?;
    let cell = values
        .get(column)
        .ok_or_else(|| past_the_row(column, values.len()))?;
    T::deserialize(&spec.typ, *cell).map_err(|e| (column, e))
}

/// Reads the column named `name` (field `at` of the row type) into `T`, without a layout.
#[inline]
pub fn read_named<'a, T: DeserializeValue<'a>>(
    columns: &[ColumnSpec],
    values: &[Option<&'a [u8]>],
    at: usize,
    name: &str,
) -> FieldResult<T> {
    let column = column_index(columns, at, name).ok_or_else(|| {
        (
            columns.len(),
            ValueError::MissingColumn { name: name.into() },
        )
    })?;
    read(columns, values, column)
}

fn bind_error(index: usize, columns: Option<&[ColumnSpec]>, reason: ValueError) -> ProtoError {
    ProtoError::Value {
        column: crate::serialize::column_label(index, columns),
        reason: Box::new(reason),
    }
}

/// Writes `v` as bound value `index`, checked against its bind marker when `columns` are
/// known (its natural type otherwise).
#[inline]
pub fn bind<T: SerializeValue + ?Sized>(
    v: &T,
    index: usize,
    columns: Option<&[ColumnSpec]>,
    buf: &mut BytesMut,
) -> Result<()> {
    let typ = columns.and_then(|c| c.get(index)).map(|c| &c.typ);
    write_value(v, typ, buf).map_err(|r| bind_error(index, columns, r))
}

/// Bind marker `index` has no field of the struct.
#[cold]
pub fn no_field(index: usize, columns: &[ColumnSpec]) -> ProtoError {
    bind_error(index, Some(columns), ValueError::NoFieldForColumn)
}

/// Every field was bound to a marker: the first that was not is
/// [`ValueError::NoBindMarker`], named.
pub fn check_all_bound(names: &[&str], bound: &[bool]) -> Result<()> {
    match names.iter().zip(bound).find(|(_, b)| !**b) {
        None => Ok(()),
        Some((name, _)) => Err(ProtoError::Value {
            column: format!("`{name}`"),
            reason: Box::new(ValueError::NoBindMarker),
        }),
    }
}

/// `count` values for the bind markers, when they are known.
pub fn check_bind_count(count: usize, columns: Option<&[ColumnSpec]>) -> Result<()> {
    crate::serialize::check_count(count, columns)
}

/// The name and fields of a UDT type that `T` reads, or why `typ` is not one.
#[inline]
pub fn udt_to_read<T: ?Sized>(typ: &ColumnType) -> ValueResult<(&str, &[(String, ColumnType)])> {
    match typ {
        ColumnType::Udt { name, fields, .. } => Ok((name, fields)),
        _ => Err(ValueError::CannotDeserialize {
            typ: type_name(typ),
            rust: std::any::type_name::<T>(),
        }),
    }
}

/// The name and fields of a UDT type that `T` writes, or why `typ` is not one.
#[inline]
pub fn udt_to_write<T: ?Sized>(typ: &ColumnType) -> ValueResult<(&str, &[(String, ColumnType)])> {
    match typ {
        ColumnType::Udt { name, fields, .. } => Ok((name, fields)),
        _ => Err(ValueError::CannotSerialize {
            rust: std::any::type_name::<T>(),
            typ: type_name(typ),
        }),
    }
}

/// The type of field `name` of the UDT `udt`, or [`ValueError::NoSuchField`].
pub fn udt_field_type<'t>(
    udt: &str,
    fields: &'t [(String, ColumnType)],
    name: &str,
) -> ValueResult<&'t ColumnType> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t)
        .ok_or_else(|| ValueError::NoSuchField {
            udt: udt.into(),
            field: name.into(),
        })
}

/// Every one of `names` is a field of the UDT (a struct writes no field its type lacks).
pub fn udt_has_fields(
    udt: &str,
    fields: &[(String, ColumnType)],
    names: &[&str],
) -> ValueResult<()> {
    for name in names {
        udt_field_type(udt, fields, name)?;
    }
    Ok(())
}

/// The bytes of a non-null value read into `T`.
#[inline]
pub fn non_null<T: ?Sized>(bytes: Option<&[u8]>) -> ValueResult<&[u8]> {
    bytes.ok_or_else(|| ValueError::Null {
        into: std::any::type_name::<T>(),
    })
}

/// The next field of a UDT value (`None` for null, and for a field past the end: a value
/// written before `ALTER TYPE ... ADD` has fewer fields than its type, spec section 7).
#[inline]
pub fn next_udt_field<'a>(rest: &mut &'a [u8]) -> ValueResult<Option<&'a [u8]>> {
    if rest.is_empty() {
        return Ok(None);
    }
    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
        return Err(ValueError::Truncated {
            what: "UDT field length",
            needed: 4,
            left: rest.len(),
        });
    };
    let len = i32::from_be_bytes(*len);
    let Ok(len) = usize::try_from(len) else {
        *rest = tail;
        return Ok(None);
    };
    let Some((field, tail)) = tail.split_at_checked(len) else {
        return Err(ValueError::Truncated {
            what: "UDT field",
            needed: len,
            left: tail.len(),
        });
    };
    *rest = tail;
    Ok(Some(field))
}

/// Nothing is left after a UDT value's fields.
#[inline]
pub fn udt_end(rest: &[u8]) -> ValueResult<()> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(ValueError::TrailingBytes {
            what: "UDT",
            extra: rest.len(),
        })
    }
}

/// A field of the struct that the UDT value should have had, when `T` reads it without
/// checking the type first.
#[cold]
pub fn missing_udt_field(udt: &str, name: &str) -> ValueError {
    ValueError::NoSuchField {
        udt: udt.into(),
        field: name.into(),
    }
}

/// Writes one field of a UDT value as `typ`: the `nulls` fields the struct skipped before
/// it first (a field of the type the struct does not have is null; after the last field the
/// struct has, they are left out, as spec section 7 allows), then the field (null allowed,
/// unset refused).
#[inline]
pub fn write_udt_field<T: SerializeValue + ?Sized>(
    v: &T,
    typ: &ColumnType,
    nulls: &mut usize,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    if v.special() == Some(Special::Unset) {
        return Err(ValueError::UnsetUdtField);
    }
    for _ in 0..std::mem::take(nulls) {
        buf.put_i32(-1);
    }
    write_value(v, Some(typ), buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, typ: ColumnType) -> ColumnSpec {
        ColumnSpec::new("ks", "t", name, typ)
    }

    #[test]
    fn names_match_in_place_first_then_anywhere() {
        let names = ["a", "b", "c"];
        assert_eq!(field_index(&names, 1, "b"), Some(1));
        assert_eq!(field_index(&names, 0, "c"), Some(2));
        assert_eq!(field_index(&names, 7, "a"), Some(0));
        assert_eq!(field_index(&names, 0, "z"), None);
        let cols = [spec("x", ColumnType::Int), spec("y", ColumnType::Int)];
        let layout = layout_by_name(&cols, &["x", "y"], false).unwrap();
        assert!(layout.is_in_order());
        let layout = layout_by_name(&cols, &["y", "x"], false).unwrap();
        assert_eq!((layout.column(0), layout.column(1)), (1, 0));
        assert_eq!(
            layout_by_name(&cols, &["y"], false).unwrap_err(),
            (0, ValueError::NoFieldForColumn)
        );
        assert_eq!(layout_by_name(&cols, &["y"], true).unwrap().column(0), 1);
        assert_eq!(
            layout_by_name(&cols, &["x", "q"], false).unwrap_err(),
            (2, ValueError::MissingColumn { name: "q".into() })
        );
    }

    #[test]
    fn udt_fields_read_short_values_and_refuse_bad_lengths() {
        let mut rest: &[u8] = &[0, 0, 0, 1, 7, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(next_udt_field(&mut rest).unwrap(), Some(&[7][..]));
        assert_eq!(next_udt_field(&mut rest).unwrap(), None);
        assert_eq!(next_udt_field(&mut rest).unwrap(), None, "past the end");
        udt_end(rest).unwrap();
        assert!(next_udt_field(&mut &[0, 0, 0, 9, 1][..]).is_err());
        assert!(next_udt_field(&mut &[0, 0][..]).is_err());
        assert!(udt_end(&[1]).is_err());
    }

    #[test]
    fn udt_fields_are_written_with_inner_nulls_and_unset_refused() {
        let mut buf = BytesMut::new();
        let mut nulls = 2;
        write_udt_field(&5i32, &ColumnType::Int, &mut nulls, &mut buf).unwrap();
        assert_eq!(nulls, 0);
        assert_eq!(
            &buf[..],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 4, 0, 0, 0, 5]
        );
        let unset = crate::value::Unset;
        assert_eq!(
            write_udt_field(&unset, &ColumnType::Int, &mut nulls, &mut buf),
            Err(ValueError::UnsetUdtField)
        );
    }
}
