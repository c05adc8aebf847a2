//! Collections as CQL values: slices, arrays, `Vec`s and sets (as `list`, `set` or
//! `vector`), and maps, each element written and checked in place.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use bytes::{BufMut, BytesMut};

use super::value_trait::{write_value, SerializeValue};
use crate::error::ValueError;
use crate::types::ColumnType;
use crate::value::{count_i32, vector_element_size, ValueResult};

fn write_elements<'x, T: SerializeValue + 'x>(
    items: impl ExactSizeIterator<Item = &'x T>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    match typ {
        ColumnType::List(e) | ColumnType::Set(e) => {
            buf.put_i32(count_i32(items.len())?);
            for item in items {
                if item.special().is_some() {
                    return Err(ValueError::NullOrUnsetElement {
                        container: "collection",
                        what: "elements",
                    });
                }
                write_value(item, Some(e), buf)?;
            }
            Ok(())
        }
        ColumnType::Vector { element, dimension } => {
            if items.len() != *dimension as usize {
                return Err(ValueError::VectorDimension {
                    given: items.len(),
                    dimension: *dimension,
                });
            }
            let fixed = vector_element_size(element);
            for item in items {
                if item.special().is_some() {
                    return Err(ValueError::NullOrUnsetElement {
                        container: "vector",
                        what: "elements",
                    });
                }
                let start = buf.len();
                item.write(element, buf)?;
                let len = buf.len() - start;
                match fixed {
                    Some(s) if s == len => {}
                    Some(expected) => return Err(ValueError::VectorElementSize { len, expected }),
                    None => {
                        // Variable-size elements carry an unsigned vint length before them:
                        // append it, then rotate it in front of the element (no allocation).
                        let end = buf.len();
                        crate::value::put_unsigned_vint(buf, len as u64);
                        let vint_len = buf.len() - end;
                        if let Some(written) = buf.get_mut(start..) {
                            written.rotate_right(vint_len);
                        }
                    }
                }
            }
            Ok(())
        }
        other => Err(ValueError::CannotSerialize {
            rust: "a sequence",
            typ: crate::value::type_name(other),
        }),
    }
}

impl<T: SerializeValue> SerializeValue for [T] {
    fn natural_type(&self) -> ColumnType {
        ColumnType::List(Box::new(
            self.first().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

/// Arrays, for vectors (`[f32; 3]`) as well as lists and sets. (`[u8; 16]` is a uuid.)
impl<T: SerializeValue, const N: usize> SerializeValue for [T; N] {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Vector {
            element: Box::new(self.first().map_or(ColumnType::Blob, T::natural_type)),
            dimension: N as u32,
        }
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl<T: SerializeValue> SerializeValue for Vec<T> {
    fn natural_type(&self) -> ColumnType {
        self.as_slice().natural_type()
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl<T: SerializeValue, S> SerializeValue for HashSet<T, S> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Set(Box::new(
            self.iter().next().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

impl<T: SerializeValue> SerializeValue for BTreeSet<T> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Set(Box::new(
            self.iter().next().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

fn write_map<'x, K: SerializeValue + 'x, V: SerializeValue + 'x>(
    entries: impl ExactSizeIterator<Item = (&'x K, &'x V)>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    let ColumnType::Map(kt, vt) = typ else {
        return Err(ValueError::CannotSerialize {
            rust: "a map",
            typ: crate::value::type_name(typ),
        });
    };
    buf.put_i32(count_i32(entries.len())?);
    for (k, v) in entries {
        if k.special().is_some() || v.special().is_some() {
            return Err(ValueError::NullOrUnsetElement {
                container: "map",
                what: "keys or values",
            });
        }
        write_value(k, Some(kt), buf)?;
        write_value(v, Some(vt), buf)?;
    }
    Ok(())
}

fn map_natural<K: SerializeValue, V: SerializeValue>(first: Option<(&K, &V)>) -> ColumnType {
    match first {
        Some((k, v)) => ColumnType::Map(Box::new(k.natural_type()), Box::new(v.natural_type())),
        None => ColumnType::Map(Box::new(ColumnType::Blob), Box::new(ColumnType::Blob)),
    }
}

impl<K: SerializeValue, V: SerializeValue, S> SerializeValue for HashMap<K, V, S> {
    fn natural_type(&self) -> ColumnType {
        map_natural(self.iter().next())
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_map(self.iter(), typ, buf)
    }
}

impl<K: SerializeValue, V: SerializeValue> SerializeValue for BTreeMap<K, V> {
    fn natural_type(&self) -> ColumnType {
        map_natural(self.iter().next())
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_map(self.iter(), typ, buf)
    }
}
