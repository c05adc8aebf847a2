//! Text and blobs as CQL values: `str` and `String` (as `text` or, checked, `ascii`), byte
//! slices, `Vec<u8>` and `Bytes` (as `blob` or a custom type).

use bytes::{BufMut, Bytes, BytesMut};

use super::macros::scalar;
use super::value_trait::{mismatch, SerializeValue};
use crate::types::ColumnType;
use crate::value::{check_ascii, ValueResult};

scalar!(str, ColumnType::Varchar, |v, typ, buf| {
    ColumnType::Varchar => buf.put_slice(v.as_bytes()),
    ColumnType::Ascii => {
        check_ascii(v.as_bytes())?;
        buf.put_slice(v.as_bytes())
    },
});
scalar!([u8], ColumnType::Blob, |v, typ, buf| {
    ColumnType::Blob | ColumnType::Custom(_) => buf.put_slice(v),
});

impl SerializeValue for String {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Varchar
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_str().write(typ, buf)
    }
}

impl SerializeValue for Vec<u8> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl SerializeValue for Bytes {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_ref().write(typ, buf)
    }
}
