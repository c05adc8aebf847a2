//! The contract between statements and their bound values.
//!
//! QUERY, EXECUTE and BATCH write their values through [`QueryValues`], so the message
//! encoders know nothing of Rust types: the value layer (typed serialization checked against
//! column types) and plain pre-serialized `[value]`s both plug in here.

use bytes::BytesMut;

use crate::error::Result;
use crate::metadata::ColumnSpec;
use crate::wire::{self, RawValue};

/// A set of values bound to a statement, written in the `<n><value_1>...<value_n>` layout.
pub trait QueryValues {
    /// Number of values (`<n>`); 0 means the Values flag is not set.
    fn count(&self) -> usize;

    /// True if each value is preceded by its bind-marker name (QUERY flag 0x40).
    fn has_names(&self) -> bool {
        false
    }

    /// Appends the values (each `[string]` name if named, then the `[value]`), without the
    /// `<n>` count. `columns` are the bind markers from PREPARE, when known, so that the
    /// implementation can check each value against its column's type; an error names the
    /// column. On error `buf` may hold a partial write: the caller truncates it.
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()>;
}

/// No values.
impl QueryValues for () {
    fn count(&self) -> usize {
        0
    }

    fn write_values(&self, _: Option<&[ColumnSpec]>, _: &mut BytesMut) -> Result<()> {
        Ok(())
    }
}

/// Positional values already serialized.
impl QueryValues for [RawValue<'_>] {
    fn count(&self) -> usize {
        self.len()
    }

    fn write_values(&self, _: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        for v in self {
            wire::put_value(buf, *v, "bound value")?;
        }
        Ok(())
    }
}

/// Named values already serialized.
impl QueryValues for [(&str, RawValue<'_>)] {
    fn count(&self) -> usize {
        self.len()
    }

    fn has_names(&self) -> bool {
        true
    }

    fn write_values(&self, _: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        for (name, v) in self {
            wire::put_string(buf, name, "bound value name")?;
            wire::put_value(buf, *v, "bound value")?;
        }
        Ok(())
    }
}

impl<T: QueryValues + ?Sized> QueryValues for &T {
    fn count(&self) -> usize {
        (**self).count()
    }

    fn has_names(&self) -> bool {
        (**self).has_names()
    }

    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        (**self).write_values(columns, buf)
    }
}
