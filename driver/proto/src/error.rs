//! The protocol layer's error type.
//!
//! Every failure names what was being read or written (`what`) so that a message such as
//! "truncated \[string\] in SUPPORTED options: need 12 bytes, 3 left" can be acted upon.
//! Errors are cold: they may allocate, the success path never does.
//!
//! [`ValueError`] says why one value could not be converted between its bytes and a Rust or
//! dynamic value; the row reader and the binders wrap it in [`ProtoError::Value`] with the
//! column, [`crate::value::CqlValue::decode`] and `encode` in [`ProtoError::InvalidCqlValue`].
//! Both keep it as their [`std::error::Error::source`].

use std::str::Utf8Error;

/// Result alias used throughout `doppio-proto`.
pub type Result<T, E = ProtoError> = std::result::Result<T, E>;

/// Everything that can go wrong while encoding or decoding CQL frames.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// Fewer bytes were left than a field needs.
    #[error("truncated {what}: need {needed} bytes, {available} left")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// A length prefix was negative where the notation does not allow it.
    #[error("invalid length {len} for {what}")]
    InvalidLength {
        /// The field being read.
        what: &'static str,
        /// The length found on the wire.
        len: i64,
    },
    /// A length exceeds what the protocol (or a configured limit) allows.
    #[error("{what} is {len} bytes, over the limit of {limit}")]
    TooLong {
        /// The field being read or written.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The limit it broke.
        limit: usize,
    },
    /// A `[string]` or `[long string]` was not valid UTF-8.
    #[error("{what} is not valid UTF-8")]
    InvalidUtf8 {
        /// The field being read.
        what: &'static str,
    },
    /// The frame's version byte is not a protocol version the decoder accepts.
    #[error("unsupported protocol version byte 0x{0:02x} (doppio speaks v4 and v5: 0x04 or 0x05 requests, 0x84 or 0x85 responses)")]
    UnsupportedVersion(u8),
    /// The frame travels the wrong way (a request where a response was expected, or back).
    #[error("frame direction is {found}, expected {expected}")]
    WrongDirection {
        /// What the version byte said.
        found: &'static str,
        /// What the decoder was set up for.
        expected: &'static str,
    },
    /// The opcode byte names no message of protocol v4.
    #[error("unknown opcode 0x{0:02x}")]
    UnknownOpcode(u8),
    /// The message is valid CQL but not of a kind this call accepts.
    #[error("unexpected {found} message, expected {expected}")]
    UnexpectedMessage {
        /// The opcode that arrived.
        found: &'static str,
        /// What the caller expected.
        expected: &'static str,
    },
    /// A field held a value outside its domain (an unknown enum code, a bad flag combination).
    #[error("invalid {what}: {detail}")]
    InvalidValue {
        /// The field being read or written.
        what: &'static str,
        /// Why it was rejected.
        detail: String,
    },
    /// Bytes were left over after a message or value that should have used them all.
    #[error("{extra} unexpected trailing bytes after {what}")]
    TrailingBytes {
        /// The message or value.
        what: &'static str,
        /// How many bytes were left.
        extra: usize,
    },
    /// A compressed body could not be decompressed.
    #[error("corrupt lz4 body: {0}")]
    Compression(String),
    /// A v5 segment's header CRC24 or payload CRC32 does not match its bytes.
    #[error("{what} mismatch: the wire says {expected:#x}, the bytes give {actual:#x}")]
    Checksum {
        /// Which checksum.
        what: &'static str,
        /// The checksum sent.
        expected: u32,
        /// The checksum of what arrived.
        actual: u32,
    },
    /// A v4 frame had the compression flag set but no compression was negotiated.
    #[error("frame has the compression flag but no compression was negotiated")]
    UnexpectedCompression,
    /// A value does not fit its column's type, or its bytes are not a valid value of it.
    #[error("column {column}: {reason}")]
    Value {
        /// The column: its index and, when known, its name (for example ``2 `age` ``).
        column: String,
        /// Why (boxed: errors are the cold path, and a small `ProtoError` keeps the results
        /// and futures of the hot path small).
        #[source]
        reason: Box<ValueError>,
    },
    /// A dynamic value ([`crate::value::CqlValue`]) could not be decoded or encoded as the
    /// type it was given (no column in sight).
    #[error("invalid CQL value: {0}")]
    InvalidCqlValue(#[source] Box<ValueError>),
}

impl ProtoError {
    /// The typed value error of a [`ProtoError::Value`] or [`ProtoError::InvalidCqlValue`]
    /// (their `source()` is the same error, boxed).
    pub fn value_error(&self) -> Option<&ValueError> {
        match self {
            ProtoError::Value { reason, .. } | ProtoError::InvalidCqlValue(reason) => Some(reason),
            _ => None,
        }
    }
}

impl From<ValueError> for ProtoError {
    fn from(e: ValueError) -> Self {
        ProtoError::InvalidCqlValue(Box::new(e))
    }
}

/// Why one value could not be decoded from its bytes or encoded as a column's type (the
/// caller adds the column: see [`ProtoError::Value`]).
///
/// The messages name the part of the value and the numbers involved, so that for example
/// ``column 2 `tags`: element count 9 cannot fit in 12 bytes`` can be acted upon.
///
/// Kept small (types and names boxed): it travels inside [`ProtoError`] and the driver's
/// errors, whose size every `Result` on the request path pays for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Fewer bytes were left than a part of the value needs.
    #[error("{what} needs {needed} bytes, {left} left")]
    Truncated {
        /// The part being read (`map size`, `vector element`, `vint`, ...).
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes that were left.
        left: usize,
    },
    /// A value of a fixed-size type has the wrong number of bytes.
    #[error("{typ} value of {len} bytes, expected {expected}")]
    WrongSize {
        /// The type.
        typ: String,
        /// The value's length.
        len: usize,
        /// The type's size.
        expected: usize,
    },
    /// Bytes were left after a value (or a part of it) that should have used them all.
    #[error("{extra} bytes left over after {what}")]
    TrailingBytes {
        /// The value or part.
        what: &'static str,
        /// How many bytes were left.
        extra: usize,
    },
    /// A count (collection elements, map entries) is negative.
    #[error("negative {what} {count}")]
    NegativeCount {
        /// The count.
        what: &'static str,
        /// Its value on the wire.
        count: i32,
    },
    /// A count cannot fit in the bytes left, each element taking a few bytes at least.
    #[error("{what} {count} cannot fit in {left} bytes")]
    CountTooLarge {
        /// The count.
        what: &'static str,
        /// Its value on the wire.
        count: usize,
        /// Bytes that were left for the elements.
        left: usize,
    },
    /// More elements than an `[int]` count can say.
    #[error("{count} elements are too many for an [int] count")]
    TooManyElements {
        /// How many there were.
        count: usize,
    },
    /// A `varint` too large for the integer type asked for.
    #[error("varint of {len} bytes does not fit in {target}")]
    VarintOverflow {
        /// Its length in bytes.
        len: usize,
        /// The integer type.
        target: &'static str,
    },
    /// A value longer than a `[bytes]` length can say.
    #[error("value of {len} bytes is over 2 GiB")]
    ValueTooLong {
        /// Its length.
        len: usize,
    },
    /// The type nests deeper than [`crate::types::MAX_TYPE_DEPTH`].
    #[error("nested deeper than {limit} levels")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// A `time` outside `0..86_400_000_000_000` nanoseconds.
    #[error("time {nanos} is outside one day")]
    TimeOutsideDay {
        /// The nanoseconds since midnight it claimed.
        nanos: i64,
    },
    /// A `timeuuid` (or a uuid for a `timeuuid` column) that is not a version-1 UUID.
    #[error("a timeuuid needs a version-1 uuid, not version {version}")]
    NotTimeuuid {
        /// The UUID's version (the high nibble of byte 6).
        version: u8,
    },
    /// An `inet` that is neither 4 nor 16 bytes.
    #[error("inet of {len} bytes, expected 4 or 16")]
    InetLength {
        /// Its length.
        len: usize,
    },
    /// An `ascii` value with a byte over 0x7f.
    #[error("ascii value has a non-ASCII byte at offset {offset}")]
    NonAscii {
        /// Where the first such byte is.
        offset: usize,
    },
    /// A text value that is not UTF-8.
    #[error("{what} is not valid UTF-8")]
    InvalidUtf8 {
        /// The type (`text`, `ascii`).
        what: &'static str,
        /// Where and why.
        #[source]
        source: Utf8Error,
    },
    /// A `decimal` with its scale but no unscaled value.
    #[error("decimal has no unscaled value")]
    DecimalWithoutUnscaled,
    /// A `duration`'s months or days out of `i32` range.
    #[error("duration {part} {value} out of range")]
    DurationPartOutOfRange {
        /// `months` or `days`.
        part: &'static str,
        /// The value on the wire.
        value: i64,
    },
    /// A `duration` whose parts do not share one sign (as CQL requires).
    #[error(
        "a duration's months, days and nanoseconds must share one sign, not {months}, {days} and {nanoseconds}"
    )]
    DurationSigns {
        /// Months.
        months: i32,
        /// Days.
        days: i32,
        /// Nanoseconds.
        nanoseconds: i64,
    },
    /// A null where the wire format has no room for one (inside a collection).
    #[error("null {what}")]
    NullElement {
        /// The part (`element in a collection`, `map key`, `map value`).
        what: &'static str,
    },
    /// A null or unset element given for a collection, vector or map.
    #[error("a {container} cannot hold null or unset {what}")]
    NullOrUnsetElement {
        /// `collection`, `vector` or `map`.
        container: &'static str,
        /// `elements`, or `keys or values`.
        what: &'static str,
    },
    /// An unset tuple field (only null is allowed).
    #[error("a tuple field cannot be unset")]
    UnsetTupleField,
    /// A null read into a type that cannot hold it.
    #[error("null value; read it into Option<{into}>")]
    Null {
        /// The Rust type asked for.
        into: &'static str,
    },
    /// A vector type whose elements take no bytes.
    #[error("vector of zero-sized elements")]
    ZeroSizedVectorElements,
    /// A vector value with the wrong number of elements.
    #[error("{given} elements for a vector of dimension {dimension}")]
    VectorDimension {
        /// Elements given.
        given: usize,
        /// The type's dimension.
        dimension: u32,
    },
    /// A vector element of a fixed-size type that encoded to another size.
    #[error("vector element of {len} bytes, expected {expected}")]
    VectorElementSize {
        /// Its length.
        len: usize,
        /// The element type's size.
        expected: usize,
    },
    /// A tuple value with another number of fields than its type.
    #[error("a tuple of {given} fields for a tuple of {expected}")]
    TupleArity {
        /// Fields given.
        given: usize,
        /// Fields of the type.
        expected: usize,
    },
    /// A UDT value with a field its type does not have.
    #[error("type {udt} has no field {field}")]
    NoSuchField {
        /// The UDT's name.
        udt: Box<str>,
        /// The field.
        field: Box<str>,
    },
    /// A dynamic value of one kind for a column of another type.
    #[error("cannot encode a {value} value as {typ}")]
    CannotEncode {
        /// The value's kind (`Bigint`, `List`, ...).
        value: &'static str,
        /// The column type.
        typ: String,
    },
    /// A dynamic value of another kind than the one asked for.
    #[error("expected {expected}, read {found}")]
    UnexpectedKind {
        /// The kind asked for.
        expected: &'static str,
        /// The kind that was read.
        found: &'static str,
    },
    /// A Rust value for a column type it does not map to.
    #[error("cannot serialize {rust} as {typ}")]
    CannotSerialize {
        /// The Rust type (or `a map`, `a sequence`).
        rust: &'static str,
        /// The column type.
        typ: String,
    },
    /// A column type that does not map to the Rust type asked for.
    #[error("cannot read {typ} into {rust}")]
    CannotDeserialize {
        /// The column type.
        typ: String,
        /// The Rust type.
        rust: &'static str,
    },
    /// A row type with another number of columns than the result.
    #[error("the result has {columns} columns, the row type {row}")]
    ColumnCount {
        /// Columns of the result.
        columns: usize,
        /// Columns of the row type.
        row: usize,
    },
    /// A named value whose name no bind marker of the statement has.
    #[error("the statement has no bind marker of that name")]
    NoBindMarker,
    /// A row type read by column name has a field for a column the result does not have.
    #[error("no column `{name}` in the result, which the row type reads")]
    MissingColumn {
        /// The column's name.
        name: Box<str>,
    },
    /// A column (of a result, or a bind marker) that no field of the row type matches by
    /// name.
    #[error("the row type has no field for this column")]
    NoFieldForColumn,
    /// A UDT field given as unset (only null is allowed).
    #[error("a UDT field cannot be unset")]
    UnsetUdtField,
    /// A failure a [`crate::serialize::SerializeValue`] or
    /// [`crate::deserialize::DeserializeValue`] implementation outside this crate reports
    /// in its own words.
    #[error("{0}")]
    Custom(String),
}
