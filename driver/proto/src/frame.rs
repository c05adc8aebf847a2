//! The 9-byte frame header (spec section 2) and an incremental frame decoder.
//!
//! [`FrameDecoder::check`] looks at a buffer and answers "a whole frame of N bytes is here"
//! or "need N more bytes" without allocating or copying; [`FrameDecoder::decode`] then
//! splits the frame off a `BytesMut` as a zero-copy [`Bytes`] body. A body longer than the
//! configured limit is rejected as soon as its header is seen, before any byte of it is
//! buffered or reserved.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{ProtoError, Result};
use crate::version::ProtocolVersion;

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 9;
/// The protocol version doppio speaks unless told otherwise (v4; v5 is negotiated).
pub const PROTOCOL_VERSION: u8 = ProtocolVersion::V4.number();
/// The protocol's own body limit (spec section 2.5: 256 MB).
pub const DEFAULT_MAX_BODY_LEN: usize = 256 * 1024 * 1024;
/// Byte offset of the stream id inside an encoded frame.
pub const STREAM_OFFSET: usize = 2;
/// Byte offset of the body length inside an encoded frame.
pub const LENGTH_OFFSET: usize = 5;

const RESPONSE_BIT: u8 = 0x80;

/// Which way a frame travels, from the version byte's top bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server (`0x04`).
    Request,
    /// Server to client (`0x84`).
    Response,
}

impl Direction {
    /// The version byte for `version` in this direction.
    pub const fn version_byte(self, version: ProtocolVersion) -> u8 {
        match self {
            Direction::Request => version.number(),
            Direction::Response => version.number() | RESPONSE_BIT,
        }
    }

    /// The other direction.
    const fn reverse(self) -> Direction {
        match self {
            Direction::Request => Direction::Response,
            Direction::Response => Direction::Request,
        }
    }

    const fn name(self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }
}

/// The header's flag byte (spec section 2.2). Unknown bits are kept and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    /// No flag set.
    pub const NONE: Flags = Flags(0);
    /// The body is compressed with the negotiated algorithm.
    pub const COMPRESSION: Flags = Flags(0x01);
    /// Request: trace this request. Response: the body starts with a tracing id.
    pub const TRACING: Flags = Flags(0x02);
    /// A `[bytes map]` custom payload precedes the message.
    pub const CUSTOM_PAYLOAD: Flags = Flags(0x04);
    /// Response: a `[string list]` of warnings precedes the message.
    pub const WARNING: Flags = Flags(0x08);

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// These flags with `other` added.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// These flags with `other` removed.
    pub const fn without(self, other: Flags) -> Flags {
        Flags(self.0 & !other.0)
    }
}

/// The message kinds of protocol v4 (spec section 2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// ERROR (response).
    Error = 0x00,
    /// STARTUP (request).
    Startup = 0x01,
    /// READY (response).
    Ready = 0x02,
    /// AUTHENTICATE (response).
    Authenticate = 0x03,
    /// OPTIONS (request).
    Options = 0x05,
    /// SUPPORTED (response).
    Supported = 0x06,
    /// QUERY (request).
    Query = 0x07,
    /// RESULT (response).
    Result = 0x08,
    /// PREPARE (request).
    Prepare = 0x09,
    /// EXECUTE (request).
    Execute = 0x0A,
    /// REGISTER (request).
    Register = 0x0B,
    /// EVENT (response, server-initiated).
    Event = 0x0C,
    /// BATCH (request).
    Batch = 0x0D,
    /// AUTH_CHALLENGE (response).
    AuthChallenge = 0x0E,
    /// AUTH_RESPONSE (request).
    AuthResponse = 0x0F,
    /// AUTH_SUCCESS (response).
    AuthSuccess = 0x10,
}

impl Opcode {
    /// Every opcode, in code order.
    pub const ALL: [Opcode; 16] = [
        Opcode::Error,
        Opcode::Startup,
        Opcode::Ready,
        Opcode::Authenticate,
        Opcode::Options,
        Opcode::Supported,
        Opcode::Query,
        Opcode::Result,
        Opcode::Prepare,
        Opcode::Execute,
        Opcode::Register,
        Opcode::Event,
        Opcode::Batch,
        Opcode::AuthChallenge,
        Opcode::AuthResponse,
        Opcode::AuthSuccess,
    ];

    /// The opcode for a wire byte.
    pub fn from_u8(b: u8) -> Result<Opcode> {
        Ok(match b {
            0x00 => Opcode::Error,
            0x01 => Opcode::Startup,
            0x02 => Opcode::Ready,
            0x03 => Opcode::Authenticate,
            0x05 => Opcode::Options,
            0x06 => Opcode::Supported,
            0x07 => Opcode::Query,
            0x08 => Opcode::Result,
            0x09 => Opcode::Prepare,
            0x0A => Opcode::Execute,
            0x0B => Opcode::Register,
            0x0C => Opcode::Event,
            0x0D => Opcode::Batch,
            0x0E => Opcode::AuthChallenge,
            0x0F => Opcode::AuthResponse,
            0x10 => Opcode::AuthSuccess,
            other => return Err(ProtoError::UnknownOpcode(other)),
        })
    }

    /// The spec's name for the message (`"QUERY"`, `"AUTH_SUCCESS"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Opcode::Error => "ERROR",
            Opcode::Startup => "STARTUP",
            Opcode::Ready => "READY",
            Opcode::Authenticate => "AUTHENTICATE",
            Opcode::Options => "OPTIONS",
            Opcode::Supported => "SUPPORTED",
            Opcode::Query => "QUERY",
            Opcode::Result => "RESULT",
            Opcode::Prepare => "PREPARE",
            Opcode::Execute => "EXECUTE",
            Opcode::Register => "REGISTER",
            Opcode::Event => "EVENT",
            Opcode::Batch => "BATCH",
            Opcode::AuthChallenge => "AUTH_CHALLENGE",
            Opcode::AuthResponse => "AUTH_RESPONSE",
            Opcode::AuthSuccess => "AUTH_SUCCESS",
        }
    }

    /// The direction this message travels in.
    pub const fn direction(self) -> Direction {
        match self {
            Opcode::Startup
            | Opcode::Options
            | Opcode::Query
            | Opcode::Prepare
            | Opcode::Execute
            | Opcode::Register
            | Opcode::Batch
            | Opcode::AuthResponse => Direction::Request,
            _ => Direction::Response,
        }
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The protocol version (v5 calls this header an envelope's).
    pub version: ProtocolVersion,
    /// Request or response.
    pub direction: Direction,
    /// The flag byte.
    pub flags: Flags,
    /// The stream id; negative ids are server-initiated (EVENT uses -1).
    pub stream: i16,
    /// The message kind.
    pub opcode: Opcode,
    /// Body length in bytes.
    pub length: u32,
}

impl FrameHeader {
    /// Decodes the first 9 bytes of `bytes`: version 4 or 5 in either direction, a known
    /// opcode.
    pub fn decode(bytes: &[u8]) -> Result<FrameHeader> {
        let Some(h) = bytes.get(..HEADER_LEN) else {
            return Err(ProtoError::Truncated {
                what: "frame header",
                needed: HEADER_LEN,
                available: bytes.len(),
            });
        };
        let direction = if h[0] & RESPONSE_BIT == 0 {
            Direction::Request
        } else {
            Direction::Response
        };
        let version = ProtocolVersion::from_number(h[0] & !RESPONSE_BIT)
            .map_err(|_| ProtoError::UnsupportedVersion(h[0]))?;
        Ok(FrameHeader {
            version,
            direction,
            flags: Flags(h[1]),
            stream: i16::from_be_bytes([h[2], h[3]]),
            opcode: Opcode::from_u8(h[4])?,
            length: u32::from_be_bytes([h[5], h[6], h[7], h[8]]),
        })
    }

    /// The 9 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let s = self.stream.to_be_bytes();
        let l = self.length.to_be_bytes();
        [
            self.direction.version_byte(self.version),
            self.flags.0,
            s[0],
            s[1],
            self.opcode as u8,
            l[0],
            l[1],
            l[2],
            l[3],
        ]
    }

    /// Appends the 9 header bytes to `buf`.
    pub fn write_to(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.to_bytes());
    }
}

/// Overwrites the stream id of the encoded frame that starts at `frame[0]`.
///
/// Lets a request be encoded before its stream id is known, or a template be reused.
/// Returns an error if `frame` is shorter than a header.
pub fn patch_stream(frame: &mut [u8], stream: i16) -> Result<()> {
    let field = frame
        .get_mut(STREAM_OFFSET..STREAM_OFFSET + 2)
        .ok_or_else(|| ProtoError::Truncated {
            what: "frame header",
            needed: HEADER_LEN,
            available: 0,
        })?;
    field.copy_from_slice(&stream.to_be_bytes());
    Ok(())
}

/// Overwrites the body length of the encoded frame that starts at `frame[0]`.
pub fn patch_length(frame: &mut [u8], length: u32) -> Result<()> {
    let field = frame
        .get_mut(LENGTH_OFFSET..HEADER_LEN)
        .ok_or_else(|| ProtoError::Truncated {
            what: "frame header",
            needed: HEADER_LEN,
            available: 0,
        })?;
    field.copy_from_slice(&length.to_be_bytes());
    Ok(())
}

/// What [`FrameDecoder::check`] found at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStatus {
    /// A whole frame is buffered: its header, and its total length (header included).
    Complete {
        /// The decoded header.
        header: FrameHeader,
        /// Header plus body, in bytes.
        frame_len: usize,
    },
    /// At least this many more bytes are needed before a frame is whole.
    NeedMore(usize),
}

/// A whole frame: its header and its (still encoded, possibly compressed) body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: FrameHeader,
    /// The body, a zero-copy slice of the read buffer.
    pub body: Bytes,
}

/// Finds frames in a stream of bytes.
///
/// Invariants: it never allocates, never reads past a frame's end, and gives the same frames
/// wherever the input is split into reads.
#[derive(Debug, Clone, Copy)]
pub struct FrameDecoder {
    direction: Direction,
    version: Option<ProtocolVersion>,
    max_body_len: usize,
}

impl FrameDecoder {
    /// A decoder for protocol v4 frames travelling in `direction`, with the protocol's
    /// 256 MB body limit.
    pub const fn new(direction: Direction) -> Self {
        Self {
            direction,
            version: Some(ProtocolVersion::V4),
            max_body_len: DEFAULT_MAX_BODY_LEN,
        }
    }

    /// The same decoder for frames of `version` only (others are
    /// [`ProtoError::UnsupportedVersion`]).
    pub const fn with_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// The same decoder accepting every version doppio speaks, for a handshake whose version
    /// is not settled yet (a server refusing the version a client offered answers in its own).
    pub const fn with_any_version(mut self) -> Self {
        self.version = None;
        self
    }

    /// The same decoder with another body limit.
    pub const fn with_max_body_len(mut self, max_body_len: usize) -> Self {
        self.max_body_len = max_body_len;
        self
    }

    /// The body limit in force.
    pub const fn max_body_len(&self) -> usize {
        self.max_body_len
    }

    /// Looks at the start of `buf` without consuming or allocating.
    pub fn check(&self, buf: &[u8]) -> Result<FrameStatus> {
        if buf.len() < HEADER_LEN {
            // A bad version byte is reported as soon as it arrives.
            if let Some(&v) = buf.first() {
                self.check_version(v)?;
            }
            return Ok(FrameStatus::NeedMore(HEADER_LEN - buf.len()));
        }
        self.check_version(buf[0])?;
        let header = FrameHeader::decode(buf)?;
        let body_len = header.length as usize;
        if body_len > self.max_body_len {
            return Err(ProtoError::TooLong {
                what: "frame body",
                len: body_len,
                limit: self.max_body_len,
            });
        }
        let frame_len = HEADER_LEN + body_len;
        if buf.len() < frame_len {
            Ok(FrameStatus::NeedMore(frame_len - buf.len()))
        } else {
            Ok(FrameStatus::Complete { header, frame_len })
        }
    }

    fn check_version(&self, v: u8) -> Result<()> {
        let accepted = |n: u8| match self.version {
            Some(version) => n == version.number(),
            None => ProtocolVersion::from_number(n).is_ok(),
        };
        if !accepted(v & !RESPONSE_BIT) {
            return Err(ProtoError::UnsupportedVersion(v));
        }
        let found = if v & RESPONSE_BIT == 0 {
            Direction::Request
        } else {
            Direction::Response
        };
        if found == self.direction {
            Ok(())
        } else {
            Err(ProtoError::WrongDirection {
                found: self.direction.reverse().name(),
                expected: self.direction.name(),
            })
        }
    }

    /// Splits the next whole frame off the front of `buf`, or returns `None` if more bytes
    /// are needed (leaving `buf` untouched). The body shares `buf`'s allocation.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Frame>> {
        match self.check(buf)? {
            FrameStatus::NeedMore(_) => Ok(None),
            FrameStatus::Complete { header, frame_len } => {
                let mut frame = buf.split_to(frame_len);
                let body = frame.split_off(HEADER_LEN).freeze();
                Ok(Some(Frame { header, body }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options_frame(stream: i16) -> [u8; 9] {
        FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Request,
            flags: Flags::NONE,
            stream,
            opcode: Opcode::Options,
            length: 0,
        }
        .to_bytes()
    }

    #[test]
    fn header_round_trip() {
        let bytes = options_frame(0x1234);
        assert_eq!(bytes, [0x04, 0, 0x12, 0x34, 0x05, 0, 0, 0, 0]);
        let h = FrameHeader::decode(&bytes).unwrap();
        assert_eq!(h.to_bytes(), bytes);
    }

    #[test]
    fn need_more_then_complete() {
        let d = FrameDecoder::new(Direction::Request);
        let f = options_frame(7);
        for cut in 0..HEADER_LEN {
            assert_eq!(
                d.check(&f[..cut]).unwrap(),
                FrameStatus::NeedMore(HEADER_LEN - cut)
            );
        }
        assert!(matches!(
            d.check(&f).unwrap(),
            FrameStatus::Complete { frame_len: 9, .. }
        ));
    }

    #[test]
    fn oversized_body_rejected_from_header_alone() {
        let d = FrameDecoder::new(Direction::Response).with_max_body_len(1024);
        let mut h = [0x84, 0, 0, 1, 0x08, 0, 0, 0, 0];
        h[5..].copy_from_slice(&2048u32.to_be_bytes());
        assert!(matches!(
            d.check(&h),
            Err(ProtoError::TooLong { len: 2048, .. })
        ));
        h[5..].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(d.check(&h), Err(ProtoError::TooLong { .. })));
    }

    #[test]
    fn wrong_version_and_direction() {
        let d = FrameDecoder::new(Direction::Response);
        assert!(matches!(
            d.check(&[0x04]),
            Err(ProtoError::WrongDirection { .. })
        ));
        assert!(matches!(
            d.check(&[0x83]),
            Err(ProtoError::UnsupportedVersion(0x83))
        ));
        assert!(matches!(
            d.check(&[0x84, 0, 0, 0, 0x04, 0, 0, 0, 0]),
            Err(ProtoError::UnknownOpcode(4))
        ));
    }

    #[test]
    fn a_decoder_accepts_its_version_only_unless_told_any() {
        let v5_ready = [0x85, 0, 0, 1, 0x02, 0, 0, 0, 0];
        let v4 = FrameDecoder::new(Direction::Response);
        assert_eq!(
            v4.check(&v5_ready),
            Err(ProtoError::UnsupportedVersion(0x85))
        );
        let v5 = v4.with_version(ProtocolVersion::V5);
        let Ok(FrameStatus::Complete { header, .. }) = v5.check(&v5_ready) else {
            panic!("a v5 decoder refused a v5 envelope");
        };
        assert_eq!(header.version, ProtocolVersion::V5);
        assert_eq!(header.to_bytes(), v5_ready);
        assert_eq!(v5.check(&[0x84]), Err(ProtoError::UnsupportedVersion(0x84)));
        assert_eq!(
            v5.check(&[0x05]),
            Err(ProtoError::WrongDirection {
                found: "request",
                expected: "response"
            })
        );
        let any = v5.with_any_version();
        for first in [0x84, 0x85] {
            let mut f = v5_ready;
            f[0] = first;
            assert!(matches!(any.check(&f), Ok(FrameStatus::Complete { .. })));
        }
        for bad in [0x83, 0x86, 0x03, 0xff] {
            assert_eq!(any.check(&[bad]), Err(ProtoError::UnsupportedVersion(bad)));
        }
    }

    #[test]
    fn decode_splits_zero_copy_and_patch_stream() {
        let mut buf = BytesMut::new();
        let mut f = FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 0,
            opcode: Opcode::Ready,
            length: 3,
        }
        .to_bytes()
        .to_vec();
        f.extend_from_slice(b"abc");
        patch_stream(&mut f, -1).unwrap();
        buf.extend_from_slice(&f);
        buf.extend_from_slice(&f[..4]);
        let d = FrameDecoder::new(Direction::Response);
        let frame = d.decode(&mut buf).unwrap().unwrap();
        assert_eq!(frame.header.stream, -1);
        assert_eq!(&frame.body[..], b"abc");
        assert_eq!(buf.len(), 4);
        assert!(d.decode(&mut buf).unwrap().is_none());
        assert_eq!(buf.len(), 4);
    }
}
