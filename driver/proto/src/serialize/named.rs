//! Named values ([`Named`], and maps from marker names): each value preceded by its
//! bind-marker name and checked against the marker of that name.

use std::collections::{BTreeMap, HashMap};

use bytes::BytesMut;

use super::row::{check_count, query_values_via_row, SerializeRow};
use super::value_trait::{write_value, SerializeValue};
use crate::error::{ProtoError, Result, ValueError};
use crate::metadata::ColumnSpec;
use crate::values::QueryValues;

/// Named values (QUERY with `:name` markers), in the order given: `Named(&[("id", v), ...])`
/// or `Named(vec![...])`. With column specs, each value is checked against the marker of the
/// same name, and a name no marker has is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<T>(pub T);

fn write_named<'x, N: AsRef<str> + 'x, V: SerializeValue + 'x>(
    values: impl Iterator<Item = (&'x N, &'x V)>,
    count: usize,
    columns: Option<&[ColumnSpec]>,
    buf: &mut BytesMut,
) -> Result<()> {
    check_count(count, columns)?;
    for (i, (name, v)) in values.enumerate() {
        let name = name.as_ref();
        crate::wire::put_string(buf, name, "bound value name")?;
        let typ = match columns {
            Some(c) => match c.iter().find(|c| c.name == name) {
                Some(c) => Some(&c.typ),
                None => {
                    return Err(ProtoError::Value {
                        column: format!("{i} `{name}`"),
                        reason: Box::new(ValueError::NoBindMarker),
                    })
                }
            },
            None => None,
        };
        write_value(v, typ, buf).map_err(|reason| ProtoError::Value {
            column: format!("{i} `{name}`"),
            reason: Box::new(reason),
        })?;
    }
    Ok(())
}

impl<N: AsRef<str>, V: SerializeValue> SerializeRow for Named<&[(N, V)]> {
    fn value_count(&self) -> usize {
        self.0.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(
            self.0.iter().map(|(n, v)| (n, v)),
            self.0.len(),
            columns,
            buf,
        )
    }
}

impl<N: AsRef<str>, V: SerializeValue> SerializeRow for Named<Vec<(N, V)>> {
    fn value_count(&self) -> usize {
        self.0.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        Named(self.0.as_slice()).serialize_row(columns, buf)
    }
}

/// Named values from a map of marker names.
impl<N: AsRef<str>, V: SerializeValue, S> SerializeRow for HashMap<N, V, S> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(self.iter(), self.len(), columns, buf)
    }
}

/// Named values from a map of marker names.
impl<N: AsRef<str>, V: SerializeValue> SerializeRow for BTreeMap<N, V> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(self.iter(), self.len(), columns, buf)
    }
}

query_values_via_row!(['n, N: AsRef<str>, V: SerializeValue] Named<&'n [(N, V)]>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue] Named<Vec<(N, V)>>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue, S] HashMap<N, V, S>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue] BTreeMap<N, V>);
