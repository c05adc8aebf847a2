//! CQL values (spec section 6): newtypes for values without a natural Rust type, and the
//! dynamic [`CqlValue`] covering every type Cassandra 5 serves.
//!
//! Formats (v4 section 6, and Cassandra 5 for the two types v4 lacks):
//! - varint: big-endian two's complement, minimal length; decimal: `[int]` scale, varint.
//! - date: `u32` days with 2^31 at 1970-01-01; time: `i64` nanoseconds of the day.
//! - duration: three zig-zag signed vints (months, days, nanoseconds), Cassandra's vint: the
//!   first byte's leading one-bits count the bytes that follow.
//! - list/set: `[int]` n, then n elements as `[bytes]`; map: n, then key and value `[bytes]`.
//! - tuple and UDT: each field as `[bytes]` (null allowed); a UDT may omit trailing fields.
//! - vector: `dimension` elements with no count. Element types Cassandra 5 treats as fixed
//!   size (boolean, int, bigint, float, double, timestamp, uuid, timeuuid, and vectors of
//!   those: see [`vector_element_size`]) are written back to back; every other element type
//!   (text, varint, collections, and also tinyint, smallint, date and time, which Cassandra
//!   does not mark fixed-length) is prefixed with an unsigned vint length. Nulls are refused.
//!
//! Invariants: decoding checks every count and length against the bytes left before it
//! reserves or slices, recursion is bounded by [`crate::types::MAX_TYPE_DEPTH`], and any
//! input gives a value or an error, never a panic.
//!
//! Map (every item is re-exported here):
//! - `result`: [`ValueResult`].
//! - `cql_value`: [`CqlValue`] (its variant names and natural types) and [`Unset`].
//! - The newtypes by type family, each with its conversions: `numbers` ([`CqlVarint`],
//!   [`CqlDecimal`]), `time` ([`CqlDate`], [`CqlTime`], [`CqlTimestamp`], [`CqlDuration`]),
//!   `uuids` ([`CqlUuid`] and the `timeuuid` check; `inet` is [`std::net::IpAddr`]), `text`
//!   (`ascii` and `text` bytes as text).
//! - `collections`: lists, sets, maps, tuples, UDTs and vectors on the wire (counts,
//!   length-prefixed elements, [`vector_element_size`]).
//! - `cursor`: reading a value's bytes, Cassandra's vint, fixed-size values.
//! - `type_name`: [`type_name()`], a type's CQL name for messages.
//! - `decode` and `encode`: [`CqlValue::decode`] and [`CqlValue::encode`], every type's wire
//!   format both ways.

mod collections;
mod cql_value;
mod cursor;
mod decode;
mod encode;
mod numbers;
mod result;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_errors;
mod text;
mod time;
mod type_name;
mod uuids;

pub use collections::vector_element_size;
pub use cql_value::{CqlValue, Unset};
pub use numbers::{CqlDecimal, CqlVarint};
pub use result::ValueResult;
pub use time::{CqlDate, CqlDuration, CqlTime, CqlTimestamp};
pub use type_name::type_name;
pub use uuids::CqlUuid;

pub(crate) use collections::{count_i32, vector_elements};
pub(crate) use cursor::{fixed, put_unsigned_vint, Cursor};
pub(crate) use text::{check_ascii, text};
pub(crate) use uuids::check_timeuuid;
