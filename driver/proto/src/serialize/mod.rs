//! Rust values into CQL `[value]`s, checked against column types.
//!
//! [`SerializeValue`] writes one value's bytes for a given column type, or says why it does
//! not fit (an `i64` for an `int` column, a `Vec` for a `map`, a vector of the wrong
//! dimension). [`SerializeRow`] writes a whole row: tuples of serializable values (arity 0 to
//! 16), slices and `Vec`s of one serializable type (`CqlValue`, `&dyn SerializeValue`), and
//! named values ([`Named`], maps from names). Each of these is also a [`QueryValues`] (wrap
//! other rows in [`Bound`]), so they bind to QUERY, EXECUTE and BATCH; with the bind markers
//! known, the count and every type are checked and an error names the column
//! (``column 2 `age`: cannot serialize i64 as int``); without them, each value is written as
//! its Rust type's natural CQL type.
//!
//! Invariants: each `[value]` is written in place (length placeholder, bytes, patched
//! length), so binding a tuple of scalars and strings into a reused buffer allocates nothing;
//! a value that is refused is truncated away (an error from a row may leave earlier values,
//! which the message encoder truncates).

//!
//! Map (every item is re-exported here):
//! - `value_trait`: [`SerializeValue`], [`Special`] and [`write_value`].
//! - The impls by type family: `numbers` (integers, floats, `bool`, varint, decimal), `text`
//!   (strings and blobs), `time` (date, timestamp, time, duration), `uuid_inet` (UUIDs and
//!   addresses), `wrappers` ([`CqlValue`](crate::value::CqlValue), `Unset`, `Option`,
//!   references), `collections` (lists, sets, vectors, maps); `macros` writes the scalar
//!   ones.
//! - `row`: [`SerializeRow`] for `()`, tuples, slices and `Vec`s, [`Bound`], and
//!   [`column_label`].
//! - `named`: [`Named`] and rows from maps of marker names.
//!
//! [`QueryValues`]: crate::values::QueryValues

mod collections;
mod macros;
mod named;
mod numbers;
mod row;
#[cfg(test)]
mod tests;
mod text;
mod time;
mod uuid_inet;
mod value_trait;
mod wrappers;

pub use named::Named;
pub use row::{column_label, Bound, SerializeRow};
pub use value_trait::{write_value, SerializeValue, Special};

pub(crate) use row::check_count;
