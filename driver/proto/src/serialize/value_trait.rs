//! [`SerializeValue`], one Rust value written as a CQL value of a given type, and
//! [`write_value`], which writes it as a whole `[value]` (null and unset included).

use bytes::{BufMut, BytesMut};

use crate::error::ValueError;
use crate::types::ColumnType;
use crate::value::ValueResult;

/// What a value writes instead of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `null` (length -1).
    Null,
    /// `not set` (length -2).
    Unset,
}

/// A Rust value that can be bound as a CQL value.
pub trait SerializeValue {
    /// The column type used when no bind-marker metadata is known (unprepared QUERY).
    fn natural_type(&self) -> ColumnType;

    /// Writes the value's bytes (no length prefix) as a value of `typ`, or says why it does
    /// not fit.
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()>;

    /// `Some` if this value is null or unset rather than bytes.
    fn special(&self) -> Option<Special> {
        None
    }
}

/// Writes `v` as a whole `[value]` (length, then bytes), for `typ` or its natural type.
pub fn write_value<T: SerializeValue + ?Sized>(
    v: &T,
    typ: Option<&ColumnType>,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    match v.special() {
        Some(Special::Null) => {
            buf.put_i32(-1);
            return Ok(());
        }
        Some(Special::Unset) => {
            buf.put_i32(-2);
            return Ok(());
        }
        None => {}
    }
    let start = buf.len();
    buf.put_i32(0);
    let result = match typ {
        Some(t) => v.write(t, buf),
        None => v.write(&v.natural_type(), buf),
    };
    if let Err(e) = result {
        buf.truncate(start);
        return Err(e);
    }
    let len = buf.len() - start - 4;
    let len = i32::try_from(len).map_err(|_| ValueError::ValueTooLong { len })?;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

pub(super) fn mismatch<T: ?Sized>(typ: &ColumnType) -> ValueError {
    ValueError::CannotSerialize {
        rust: std::any::type_name::<T>(),
        typ: crate::value::type_name(typ),
    }
}
