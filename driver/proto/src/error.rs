//! The protocol layer's error type.
//!
//! Every failure names what was being read or written (`what`) so that a message such as
//! "truncated [string] in SUPPORTED options: need 12 bytes, 3 left" can be acted upon.
//! Errors are cold: they may allocate, the success path never does.

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
    /// The frame's version byte is not protocol v4 in the expected direction.
    #[error("unsupported protocol version byte 0x{0:02x} (doppio speaks v4: 0x04 requests, 0x84 responses)")]
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
    /// The frame is compressed but no compression was negotiated.
    #[error("frame has the compression flag but no compression was negotiated")]
    UnexpectedCompression,
    /// A value does not fit its column's type, or its bytes are not a valid value of it.
    #[error("column {column}: {reason}")]
    Value {
        /// The column: its index and, when known, its name (for example `2 (age)`).
        column: String,
        /// Why.
        reason: String,
    },
}
