//! Rows: [`SerializeRow`], a statement's values each checked against its bind marker, for
//! `()`, tuples (which are also `tuple` values), slices and `Vec`s; [`Bound`] binds any row as
//! [`QueryValues`]; and the column labels of errors.

use bytes::BytesMut;

use super::value_trait::{mismatch, write_value, SerializeValue, Special};
use crate::error::{ProtoError, Result, ValueError};
use crate::metadata::ColumnSpec;
use crate::types::ColumnType;
use crate::value::ValueResult;
use crate::values::QueryValues;

/// The label of a column in errors: ``2 `age` `` when its name is known, else `2`.
pub fn column_label(index: usize, columns: Option<&[ColumnSpec]>) -> String {
    match columns.and_then(|c| c.get(index)) {
        Some(c) => format!("{index} `{}`", c.name),
        None => index.to_string(),
    }
}

fn bind_error(index: usize, columns: Option<&[ColumnSpec]>, reason: ValueError) -> ProtoError {
    ProtoError::Value {
        column: column_label(index, columns),
        reason: Box::new(reason),
    }
}

/// Fails unless `count` values were given for the known bind markers.
pub(crate) fn check_count(count: usize, columns: Option<&[ColumnSpec]>) -> Result<()> {
    match columns {
        Some(c) if c.len() != count => Err(ProtoError::InvalidValue {
            what: "bound values",
            detail: format!("{count} values for {} bind markers", c.len()),
        }),
        _ => Ok(()),
    }
}

/// A whole row of values bound to a statement, each checked against its bind marker.
///
/// Implemented for tuples of [`SerializeValue`]s (arity 0 to 16), slices and `Vec`s of any
/// one [`SerializeValue`] type (including [`CqlValue`] and `&dyn SerializeValue`), and
/// named values ([`Named`], `HashMap`/`BTreeMap` from names). Every implementation is also a
/// [`QueryValues`]; wrap other implementations in [`Bound`] to bind them.
///
/// [`CqlValue`]: crate::value::CqlValue
/// [`Named`]: super::Named
pub trait SerializeRow {
    /// Number of values.
    fn value_count(&self) -> usize;

    /// True if each value is preceded by its bind-marker name.
    fn is_named(&self) -> bool {
        false
    }

    /// Appends the values (`[string]` name if named, then `[value]`), without the count.
    /// With `columns`, checks the count and each value's type; an error names the column.
    /// Without them, each value is written as its Rust type's natural CQL type.
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()>;
}

/// Binds any [`SerializeRow`] as [`QueryValues`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound<R>(pub R);

impl<R: SerializeRow> QueryValues for Bound<R> {
    fn count(&self) -> usize {
        self.0.value_count()
    }
    fn has_names(&self) -> bool {
        self.0.is_named()
    }
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        self.0.serialize_row(columns, buf)
    }
}

macro_rules! query_values_via_row {
    ([$($g:tt)*] $t:ty) => {
        impl<$($g)*> QueryValues for $t {
            fn count(&self) -> usize {
                self.value_count()
            }
            fn has_names(&self) -> bool {
                self.is_named()
            }
            fn write_values(
                &self,
                columns: Option<&[ColumnSpec]>,
                buf: &mut BytesMut,
            ) -> Result<()> {
                self.serialize_row(columns, buf)
            }
        }
    };
}

pub(super) use query_values_via_row;

/// No values (`QueryValues` for `()` lives in [`crate::values`]).
impl SerializeRow for () {
    fn value_count(&self) -> usize {
        0
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, _: &mut BytesMut) -> Result<()> {
        check_count(0, columns)
    }
}

macro_rules! tuples {
    ($($n:literal => ($($i:tt $T:ident),+);)+) => {$(
        impl<$($T: SerializeValue),+> SerializeValue for ($($T,)+) {
            fn natural_type(&self) -> ColumnType {
                ColumnType::Tuple(vec![$(self.$i.natural_type()),+])
            }
            fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
                let ColumnType::Tuple(types) = typ else {
                    return Err(mismatch::<Self>(typ));
                };
                if types.len() != $n {
                    return Err(ValueError::TupleArity { given: $n, expected: types.len() });
                }
                $(
                    if matches!(self.$i.special(), Some(Special::Unset)) {
                        return Err(ValueError::UnsetTupleField);
                    }
                    write_value(&self.$i, types.get($i), buf)?;
                )+
                Ok(())
            }
        }

        impl<$($T: SerializeValue),+> SerializeRow for ($($T,)+) {
            fn value_count(&self) -> usize {
                $n
            }
            fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
                check_count($n, columns)?;
                $(
                    let typ = columns.and_then(|c| c.get($i)).map(|c| &c.typ);
                    write_value(&self.$i, typ, buf).map_err(|r| bind_error($i, columns, r))?;
                )+
                Ok(())
            }
        }

        query_values_via_row!([$($T: SerializeValue),+] ($($T,)+));
    )+};
}

crate::tuple_arity::for_each_tuple_arity!(tuples);

/// Positional values of one Rust type (`[CqlValue]` for dynamic use, or
/// `[&dyn SerializeValue]` for mixed types).
impl<V: SerializeValue> SerializeRow for [V] {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        check_count(self.len(), columns)?;
        for (i, v) in self.iter().enumerate() {
            let typ = columns.and_then(|c| c.get(i)).map(|c| &c.typ);
            write_value(v, typ, buf).map_err(|r| bind_error(i, columns, r))?;
        }
        Ok(())
    }
}

/// Positional values of one Rust type.
impl<V: SerializeValue> SerializeRow for Vec<V> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        self.as_slice().serialize_row(columns, buf)
    }
}

query_values_via_row!([V: SerializeValue] [V]);
query_values_via_row!([V: SerializeValue] Vec<V>);
