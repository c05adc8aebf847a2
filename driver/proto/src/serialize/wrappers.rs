//! The values that wrap others: [`CqlValue`] (any type), [`Unset`], `Option` (`None` is
//! null) and references.

use bytes::BytesMut;

use super::value_trait::{SerializeValue, Special};
use crate::types::ColumnType;
use crate::value::{CqlValue, Unset, ValueResult};

impl SerializeValue for CqlValue {
    fn natural_type(&self) -> ColumnType {
        CqlValue::natural_type(self)
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.encode_reason(typ, buf)
    }
}

impl SerializeValue for Unset {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, _: &ColumnType, _: &mut BytesMut) -> ValueResult<()> {
        Ok(())
    }
    fn special(&self) -> Option<Special> {
        Some(Special::Unset)
    }
}

impl<T: SerializeValue> SerializeValue for Option<T> {
    fn natural_type(&self) -> ColumnType {
        self.as_ref().map_or(ColumnType::Blob, T::natural_type)
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match self {
            Some(v) => v.write(typ, buf),
            None => Ok(()),
        }
    }
    fn special(&self) -> Option<Special> {
        match self {
            Some(v) => v.special(),
            None => Some(Special::Null),
        }
    }
}

impl<T: SerializeValue + ?Sized> SerializeValue for &T {
    fn natural_type(&self) -> ColumnType {
        (**self).natural_type()
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        (**self).write(typ, buf)
    }
    fn special(&self) -> Option<Special> {
        (**self).special()
    }
}
