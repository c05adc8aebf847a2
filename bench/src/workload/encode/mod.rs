//! Generated values written as the CQL bytes of a bind marker's column type, with no
//! allocation: the same bytes for every backend (each driver takes them pre-serialized).
//!
//! A column's type is a [`CqlType`]: a scalar [`CqlKind`], or a list, set, map, tuple, user
//! type or vector of further types, built once per prepared statement by each backend from
//! its driver's type description. Composite values
//! ([`Value::Composite`](super::expr::Value::Composite)) are encoded by recursion, element
//! by element as they are evaluated:
//! - list/set: `[int]` count, then each element as `[bytes]` (`[int]` length, -1 for null);
//!   map: count, then key and value `[bytes]` per entry; tuple and user type: each field as
//!   `[bytes]` (null allowed), as many as the type has;
//! - vector (Cassandra 5 `VectorType`): exactly `dimension` elements, no count and no nulls;
//!   an element of a fixed-size type (`vector_element_size`) is its bytes alone, any other
//!   is preceded by its length as an unsigned vint.
//!
//! An element's length comes before its bytes: a sink that can rewrite what it holds
//! (`Sink::position`: a frame buffer) gets a placeholder patched afterwards; an append-only
//! sink (scylla's cell builder) gets the length from a counting pass over the element first
//! (the same evaluation into `Counter`, which stores nothing). Either way, no allocation.
//!
//! Files (private; what they make public is re-exported here): `types`, the column types
//! ([`CqlType`], [`CqlKind`]) and a value's natural one (`natural_type`); `fit`, whether
//! a generator's values fit a type (`compatible`, `FitError`), checked when a statement
//! is prepared; `value`, a value written as a type's bytes (`encode`), composites element
//! by element; `scalar`, a scalar value as a scalar type's bytes (`encode_scalar`);
//! `sink`, where the bytes go (`Sink`, `Counter`) and whether a value was written
//! (`Encoded`); `tests`, encoding's tests.

mod fit;
mod scalar;
mod sink;
mod types;
mod value;

#[cfg(test)]
mod tests;

pub(crate) use self::fit::compatible;
pub(crate) use self::sink::{Encoded, Sink};
pub use self::types::CqlKind;
pub use self::types::CqlType;
pub(crate) use self::types::{natural_type, vector_element_size, UdtType};
pub(crate) use self::value::encode;
