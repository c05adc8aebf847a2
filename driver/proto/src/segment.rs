//! Protocol v5 framing (spec section 2): envelopes travel inside **segments**, each a
//! header protected by a CRC24 and a payload of at most 128 KiB - 1 followed by its CRC32.
//!
//! - A **self-contained** segment holds one or more whole envelopes.
//! - An envelope too large for one segment is cut into consecutive segments that are not
//!   self-contained, each holding the next part of that one envelope.
//! - With lz4 negotiated, each segment's payload is compressed on its own (the header then
//!   carries both lengths; an uncompressed length of 0 means the payload was sent as it
//!   was, which a sender does when compression would not shrink it).
//!
//! Wire facts the spec leaves out, taken from Apache Cassandra's behaviour (its encoder and
//! decoder, and the frames it sends): every header and CRC field is little-endian; the
//! CRC24 runs over the header's 3 (or 5, with lz4) length-and-flag bytes, least significant
//! first; the payload's CRC32 is the IEEE CRC32 (as `java.util.zip.CRC32`) of the bytes
//! `FA 2D 55 CA` followed by the payload (the compressed one, with lz4).
//!
//! [`SegmentEncoder`] writes a buffer of whole envelopes as segments; [`SegmentDecoder`]
//! checks and unwraps segments as bytes arrive; [`EnvelopeAssembler`] joins the payloads
//! back into the envelope stream and checks that self-contained segments really hold whole
//! envelopes. Sans IO like the rest of the crate.
//!
//! Invariants: a length is checked against the segment limit before anything is sliced or
//! reserved; a CRC mismatch is an error (the connection's bytes can no longer be trusted),
//! never a panic.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::error::{ProtoError, Result};
use crate::frame::{HEADER_LEN, LENGTH_OFFSET};

/// The largest payload a segment carries (17 bits of length).
pub const MAX_PAYLOAD: usize = (1 << 17) - 1;
/// Header bytes of a segment without compression.
pub const HEADER_LEN_PLAIN: usize = 6;
/// Header bytes of a segment with lz4.
pub const HEADER_LEN_LZ4: usize = 8;
/// Bytes of the payload's CRC32 trailer.
pub const TRAILER_LEN: usize = 4;

const CRC24_INIT: u32 = 0x0087_5060;
const CRC24_POLY: u32 = 0x0197_4F0B;
const CRC32_PREFIX: [u8; 4] = [0xFA, 0x2D, 0x55, 0xCA];
const SELF_CONTAINED_PLAIN: u32 = 1 << 17;
const SELF_CONTAINED_LZ4: u64 = 1 << 34;
const LEN_MASK: u64 = (1 << 17) - 1;

/// The CRC24 of the low `len` bytes of `bytes`, least significant byte first.
pub fn crc24(mut bytes: u64, len: usize) -> u32 {
    let mut crc = CRC24_INIT;
    for _ in 0..len {
        crc ^= ((bytes & 0xff) as u32) << 16;
        bytes >>= 8;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x0100_0000 != 0 {
                crc ^= CRC24_POLY;
            }
        }
    }
    crc
}

/// The CRC32 of a segment payload.
pub fn crc32(payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&CRC32_PREFIX);
    h.update(payload);
    h.finalize()
}

/// Whether segment payloads are lz4-compressed (negotiated in STARTUP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentCompression {
    /// Plain payloads, 6-byte headers.
    None,
    /// lz4 block per payload, 8-byte headers.
    Lz4,
}

impl SegmentCompression {
    /// The header length of a segment.
    pub const fn header_len(self) -> usize {
        match self {
            SegmentCompression::None => HEADER_LEN_PLAIN,
            SegmentCompression::Lz4 => HEADER_LEN_LZ4,
        }
    }
}

/// Writes envelopes as segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentEncoder {
    compression: SegmentCompression,
}

impl SegmentEncoder {
    /// An encoder for a connection with this compression.
    pub const fn new(compression: SegmentCompression) -> Self {
        Self { compression }
    }

    /// Appends `envelopes` (whole envelopes, back to back) to `out` as segments: as many
    /// whole envelopes per self-contained segment as fit, and an envelope larger than a
    /// segment alone in segments that are not self-contained.
    ///
    /// Fails if `envelopes` does not end on an envelope boundary (a caller bug: nothing is
    /// written then).
    pub fn encode(&self, envelopes: &[u8], out: &mut BytesMut) -> Result<()> {
        // Checked whole before anything is written.
        for end in envelope_ends(envelopes) {
            end?;
        }
        let mut start = 0;
        let mut end = 0;
        for next in envelope_ends(envelopes).flatten() {
            if next - start <= MAX_PAYLOAD {
                end = next;
                continue;
            }
            if end > start {
                self.segment(&envelopes[start..end], true, out);
                start = end;
            }
            if next - start <= MAX_PAYLOAD {
                end = next;
            } else {
                // One envelope larger than a segment: cut it.
                for part in envelopes[start..next].chunks(MAX_PAYLOAD) {
                    self.segment(part, false, out);
                }
                start = next;
                end = next;
            }
        }
        if end > start {
            self.segment(&envelopes[start..end], true, out);
        }
        Ok(())
    }

    /// Appends `bytes` as self-contained segments without checking that they hold whole
    /// envelopes. For fault injection only (the stub's malformed answers in v5, which must
    /// reach the client inside valid segments so that its envelope checks meet them): a
    /// conforming sender uses [`SegmentEncoder::encode`].
    pub fn encode_unchecked(&self, bytes: &[u8], out: &mut BytesMut) {
        for part in bytes.chunks(MAX_PAYLOAD) {
            self.segment(part, true, out);
        }
    }

    /// Appends one segment carrying `payload` (at most [`MAX_PAYLOAD`] bytes).
    fn segment(&self, payload: &[u8], self_contained: bool, out: &mut BytesMut) {
        debug_assert!(payload.len() <= MAX_PAYLOAD);
        match self.compression {
            SegmentCompression::None => {
                let mut header = payload.len() as u32;
                if self_contained {
                    header |= SELF_CONTAINED_PLAIN;
                }
                let crc = crc24(u64::from(header), 3);
                out.reserve(HEADER_LEN_PLAIN + payload.len() + TRAILER_LEN);
                out.put_slice(&header.to_le_bytes()[..3]);
                out.put_slice(&crc.to_le_bytes()[..3]);
                out.put_slice(payload);
                out.put_u32_le(crc32(payload));
            }
            SegmentCompression::Lz4 => {
                // Allocates lz4's output block: compression trades that for fewer bytes, and
                // is off unless negotiated.
                let compressed = lz4_flex::block::compress(payload);
                let (body, uncompressed_len) = if compressed.len() < payload.len() {
                    (compressed.as_slice(), payload.len() as u64)
                } else {
                    // Sent as it is: no gain from compressing.
                    (payload, 0)
                };
                let mut header = body.len() as u64 | (uncompressed_len << 17);
                if self_contained {
                    header |= SELF_CONTAINED_LZ4;
                }
                let crc = u64::from(crc24(header, 5));
                out.reserve(HEADER_LEN_LZ4 + body.len() + TRAILER_LEN);
                out.put_u64_le(header | (crc << 40));
                out.put_slice(body);
                out.put_u32_le(crc32(body));
            }
        }
    }
}

/// The length of the envelope whose header starts `bytes` (header included), if the header
/// is there.
fn envelope_len(bytes: &[u8]) -> Option<usize> {
    let len = bytes.get(LENGTH_OFFSET..LENGTH_OFFSET + 4)?;
    let mut be = [0u8; 4];
    be.copy_from_slice(len);
    Some(HEADER_LEN + u32::from_be_bytes(be) as usize)
}

/// The end offset of each envelope in `envelopes`, which must hold whole envelopes (an
/// error at the first that is cut short). Allocates nothing.
fn envelope_ends(envelopes: &[u8]) -> impl Iterator<Item = Result<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= envelopes.len() {
            return None;
        }
        let left = envelopes.len() - at;
        let end = envelope_len(&envelopes[at..])
            .filter(|&len| len <= left)
            .map(|len| at + len);
        Some(match end {
            Some(end) => {
                at = end;
                Ok(end)
            }
            None => {
                at = envelopes.len();
                Err(ProtoError::Truncated {
                    what: "envelope in a segment",
                    needed: envelope_len(&envelopes[envelopes.len() - left..])
                        .unwrap_or(HEADER_LEN),
                    available: left,
                })
            }
        })
    })
}

/// One segment's payload, checked and decompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Whether the payload holds whole envelopes only.
    pub self_contained: bool,
    /// The payload.
    pub payload: Bytes,
}

/// Takes segments off the front of a byte buffer as they complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentDecoder {
    compression: SegmentCompression,
}

impl SegmentDecoder {
    /// A decoder for a connection with this compression.
    pub const fn new(compression: SegmentCompression) -> Self {
        Self { compression }
    }

    /// The next whole segment at the front of `buf`, removed from it; `None` when more bytes
    /// are needed (nothing is consumed then). A bad CRC or an impossible length is an error.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Segment>> {
        let header_len = self.compression.header_len();
        if buf.len() < header_len {
            return Ok(None);
        }
        let (payload_len, uncompressed_len, self_contained) = self.header(&buf[..header_len])?;
        let total = header_len + payload_len + TRAILER_LEN;
        if buf.len() < total {
            return Ok(None);
        }
        let mut segment = buf.split_to(total);
        segment.advance(header_len);
        let trailer = segment.split_off(payload_len);
        let mut crc = [0u8; 4];
        crc.copy_from_slice(&trailer);
        let expected = u32::from_le_bytes(crc);
        let actual = crc32(&segment);
        if actual != expected {
            return Err(ProtoError::Checksum {
                what: "segment payload CRC32",
                expected,
                actual,
            });
        }
        let payload = match uncompressed_len {
            0 => segment.freeze(),
            n => {
                let out = lz4_flex::block::decompress(&segment, n)
                    .map_err(|e| ProtoError::Compression(e.to_string()))?;
                if out.len() != n {
                    return Err(ProtoError::Compression(format!(
                        "segment payload decompressed to {} bytes, its header says {n}",
                        out.len()
                    )));
                }
                Bytes::from(out)
            }
        };
        Ok(Some(Segment {
            self_contained,
            payload,
        }))
    }

    /// Reads and checks a header: (payload length on the wire, uncompressed length or 0,
    /// self-contained).
    fn header(&self, h: &[u8]) -> Result<(usize, usize, bool)> {
        let mut raw = [0u8; 8];
        let (value, bytes) = match self.compression {
            SegmentCompression::None => (3, HEADER_LEN_PLAIN),
            SegmentCompression::Lz4 => (5, HEADER_LEN_LZ4),
        };
        raw[..bytes].copy_from_slice(&h[..bytes]);
        let all = u64::from_le_bytes(raw);
        let header = all & ((1u64 << (8 * value)) - 1);
        let expected = ((all >> (8 * value)) & 0x00ff_ffff) as u32;
        let actual = crc24(header, value);
        if actual != expected {
            return Err(ProtoError::Checksum {
                what: "segment header CRC24",
                expected,
                actual,
            });
        }
        let payload_len = (header & LEN_MASK) as usize;
        Ok(match self.compression {
            SegmentCompression::None => (
                payload_len,
                0,
                header & u64::from(SELF_CONTAINED_PLAIN) != 0,
            ),
            SegmentCompression::Lz4 => (
                payload_len,
                ((header >> 17) & LEN_MASK) as usize,
                header & SELF_CONTAINED_LZ4 != 0,
            ),
        })
    }
}

/// Joins segment payloads back into the stream of envelopes, for the envelope decoder
/// ([`crate::frame::FrameDecoder`]) to read.
///
/// Checks what self-containment promises: a self-contained segment starts at an envelope
/// boundary and ends at one; segments that are not self-contained carry one envelope, whose
/// parts arrive in order with nothing between them.
#[derive(Debug)]
pub struct EnvelopeAssembler {
    /// Bytes of an envelope being assembled from segments that are not self-contained.
    partial: BytesMut,
    /// The largest envelope body accepted (the connection's frame limit).
    max_body_len: usize,
}

impl EnvelopeAssembler {
    /// An assembler with nothing pending that refuses envelopes whose body is over
    /// `max_body_len` bytes before gathering them.
    pub fn new(max_body_len: usize) -> Self {
        Self {
            partial: BytesMut::new(),
            max_body_len,
        }
    }

    /// Whether part of a large envelope is waiting for its next segment.
    pub fn is_partial(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Appends what `segment` completes to `envelopes`: all of a self-contained payload, or
    /// the whole large envelope once its last part has arrived.
    pub fn push(&mut self, segment: Segment, envelopes: &mut BytesMut) -> Result<()> {
        if segment.self_contained {
            if self.is_partial() {
                return Err(ProtoError::InvalidValue {
                    what: "segment",
                    detail: "a self-contained segment arrived inside a large envelope".into(),
                });
            }
            if let Some(Err(cut)) = envelope_ends(&segment.payload).find(Result::is_err) {
                // An envelope declaring a body over the limit is refused as such (the cause
                // a reader needs), whether or not its bytes would have followed.
                if let ProtoError::Truncated { needed, .. } = cut {
                    let len = needed.saturating_sub(HEADER_LEN);
                    if len > self.max_body_len {
                        return Err(ProtoError::TooLong {
                            what: "envelope body",
                            len,
                            limit: self.max_body_len,
                        });
                    }
                }
                return Err(ProtoError::InvalidValue {
                    what: "segment",
                    detail: "a self-contained segment does not hold whole envelopes".into(),
                });
            }
            envelopes.extend_from_slice(&segment.payload);
            return Ok(());
        }
        self.partial.extend_from_slice(&segment.payload);
        let Some(whole) = envelope_len(&self.partial) else {
            return Ok(());
        };
        if whole - HEADER_LEN > self.max_body_len {
            return Err(ProtoError::TooLong {
                what: "envelope body",
                len: whole - HEADER_LEN,
                limit: self.max_body_len,
            });
        }
        match self.partial.len().cmp(&whole) {
            std::cmp::Ordering::Less => Ok(()),
            std::cmp::Ordering::Equal => {
                envelopes.extend_from_slice(&self.partial.split());
                Ok(())
            }
            std::cmp::Ordering::Greater => Err(ProtoError::InvalidValue {
                what: "segment",
                detail: "segments that are not self-contained carry more than one envelope".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v5-style envelope: 9-byte header (version 5 request, `stream`, OPTIONS opcode) and a
    /// body of `len` bytes of a repeating pattern.
    fn envelope(stream: u16, len: usize) -> Vec<u8> {
        let mut e = vec![0x05, 0, (stream >> 8) as u8, stream as u8, 0x05];
        e.extend_from_slice(&(len as u32).to_be_bytes());
        e.extend((0..len).map(|i| (i * 7 + usize::from(stream)) as u8));
        e
    }

    /// Decodes every segment in `wire` fed in pieces of `step` bytes, and reassembles them.
    fn decode_all(
        compression: SegmentCompression,
        wire: &[u8],
        step: usize,
    ) -> Result<(Vec<Segment>, Vec<u8>)> {
        let d = SegmentDecoder::new(compression);
        let mut a = EnvelopeAssembler::new(1 << 24);
        let mut buf = BytesMut::new();
        let mut segments = Vec::new();
        let mut envelopes = BytesMut::new();
        for piece in wire.chunks(step.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(s) = d.decode(&mut buf)? {
                segments.push(s.clone());
                a.push(s, &mut envelopes)?;
            }
        }
        assert!(buf.is_empty(), "bytes left over");
        assert!(!a.is_partial(), "a large envelope left half assembled");
        Ok((segments, envelopes.to_vec()))
    }

    const BOTH: [SegmentCompression; 2] = [SegmentCompression::None, SegmentCompression::Lz4];

    #[test]
    fn the_crc24_of_nothing_is_its_initial_value_and_every_header_bit_changes_it() {
        assert_eq!(crc24(0, 0), CRC24_INIT);
        let base = crc24(0x02_0010, 3);
        for bit in 0..24 {
            assert_ne!(crc24(0x02_0010 ^ (1 << bit), 3), base, "bit {bit}");
        }
        assert!(crc24(u64::MAX, 5) < 1 << 24, "a CRC24 fits in 24 bits");
    }

    #[test]
    fn the_payload_crc32_is_ieee_over_the_prefix_then_the_payload() {
        // IEEE CRC32 of the four prefix bytes alone, checked with a second implementation
        // (bit by bit, reflected polynomial 0xEDB88320).
        let bitwise = |data: &[u8]| {
            let mut crc = !0u32;
            for &b in data {
                crc ^= u32::from(b);
                for _ in 0..8 {
                    crc = if crc & 1 != 0 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        };
        assert_eq!(crc32(&[]), bitwise(&CRC32_PREFIX));
        let mut data = CRC32_PREFIX.to_vec();
        data.extend_from_slice(b"segment payload");
        assert_eq!(crc32(b"segment payload"), bitwise(&data));
    }

    #[test]
    fn small_envelopes_share_one_self_contained_segment_with_the_documented_header() {
        let mut envelopes = envelope(1, 0);
        envelopes.extend(envelope(2, 30));
        let mut wire = BytesMut::new();
        SegmentEncoder::new(SegmentCompression::None)
            .encode(&envelopes, &mut wire)
            .unwrap();
        assert_eq!(wire.len(), HEADER_LEN_PLAIN + envelopes.len() + TRAILER_LEN);
        // Length in the low 17 bits, little-endian, then the self-contained bit.
        let header = u32::from_le_bytes([wire[0], wire[1], wire[2], 0]);
        assert_eq!(header, envelopes.len() as u32 | 1 << 17);
        let crc = u32::from_le_bytes([wire[3], wire[4], wire[5], 0]);
        assert_eq!(crc, crc24(u64::from(header), 3));
        let trailer = &wire[wire.len() - 4..];
        assert_eq!(
            u32::from_le_bytes(trailer.try_into().unwrap()),
            crc32(&envelopes)
        );
        let (segments, back) = decode_all(SegmentCompression::None, &wire, 1).unwrap();
        assert_eq!(segments.len(), 1);
        assert!(segments[0].self_contained);
        assert_eq!(back, envelopes);
    }

    #[test]
    fn envelopes_round_trip_at_every_split_point_with_and_without_lz4() {
        // Sizes around the segment limit: several envelopes per segment, an envelope that
        // fills one exactly, and envelopes that need two and three segments.
        let sizes = [
            0,
            10,
            MAX_PAYLOAD - HEADER_LEN,
            MAX_PAYLOAD - HEADER_LEN + 1,
            5,
            2 * MAX_PAYLOAD + 17,
            100,
        ];
        let mut envelopes = Vec::new();
        for (i, len) in sizes.iter().enumerate() {
            envelopes.extend(envelope(i as u16, *len));
        }
        for c in BOTH {
            let mut wire = BytesMut::new();
            SegmentEncoder::new(c)
                .encode(&envelopes, &mut wire)
                .unwrap();
            for step in [1, 7, 4096, MAX_PAYLOAD + 3, wire.len()] {
                let (segments, back) = decode_all(c, &wire, step).unwrap();
                assert_eq!(back, envelopes, "{c:?}, pieces of {step}");
                assert!(segments.iter().all(|s| s.payload.len() <= MAX_PAYLOAD));
                // The two large envelopes travel in 2 + 3 segments that are not
                // self-contained; everything else is self-contained.
                assert_eq!(segments.iter().filter(|s| !s.self_contained).count(), 5);
            }
        }
    }

    #[test]
    fn an_lz4_segment_that_would_not_shrink_is_sent_as_it_is() {
        // Bytes without repetition: lz4 cannot shrink them.
        let mut x = 0x1234_5678u32;
        let body: Vec<u8> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let mut e = envelope(3, 0);
        e[5..9].copy_from_slice(&(body.len() as u32).to_be_bytes());
        e.extend_from_slice(&body);
        let mut wire = BytesMut::new();
        SegmentEncoder::new(SegmentCompression::Lz4)
            .encode(&e, &mut wire)
            .unwrap();
        let header = u64::from_le_bytes(wire[..8].try_into().unwrap()) & ((1 << 40) - 1);
        assert_eq!(header & LEN_MASK, e.len() as u64, "compressed length = raw");
        assert_eq!(
            (header >> 17) & LEN_MASK,
            0,
            "uncompressed length 0: as it is"
        );
        assert_eq!(decode_all(SegmentCompression::Lz4, &wire, 5).unwrap().1, e);
        // A compressible one is compressed.
        let e = envelope(4, 5000);
        let mut wire = BytesMut::new();
        SegmentEncoder::new(SegmentCompression::Lz4)
            .encode(&e, &mut wire)
            .unwrap();
        assert!(wire.len() < e.len() / 2);
        assert_eq!(decode_all(SegmentCompression::Lz4, &wire, 64).unwrap().1, e);
    }

    #[test]
    fn a_flipped_bit_anywhere_is_a_checksum_or_framing_error_never_a_panic_or_wrong_bytes() {
        let mut envelopes = envelope(1, 40);
        envelopes.extend(envelope(2, 3));
        for c in BOTH {
            let mut wire = BytesMut::new();
            SegmentEncoder::new(c)
                .encode(&envelopes, &mut wire)
                .unwrap();
            for i in 0..wire.len() {
                for bit in 0..8 {
                    let mut bad = wire.to_vec();
                    bad[i] ^= 1 << bit;
                    // Either an error, or (a length grew) still waiting for bytes: never
                    // other envelopes than were sent.
                    let d = SegmentDecoder::new(c);
                    let mut buf = BytesMut::from(&bad[..]);
                    match d.decode(&mut buf) {
                        Err(ProtoError::Checksum { .. } | ProtoError::Compression(_)) => {}
                        Ok(None) => {}
                        other => panic!("{c:?} byte {i} bit {bit}: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn the_assembler_refuses_what_self_containment_rules_out() {
        let mut out = BytesMut::new();
        let whole = Bytes::from(envelope(1, 10));
        // A self-contained segment cut inside an envelope.
        let mut a = EnvelopeAssembler::new(1 << 20);
        let cut = Segment {
            self_contained: true,
            payload: whole.slice(..12),
        };
        assert!(matches!(
            a.push(cut, &mut out),
            Err(ProtoError::InvalidValue { .. })
        ));
        // ... and one whose envelope declares a body over the limit says so.
        let mut a = EnvelopeAssembler::new(5);
        let oversized = Segment {
            self_contained: true,
            payload: whole.slice(..12),
        };
        assert!(matches!(
            a.push(oversized, &mut out),
            Err(ProtoError::TooLong {
                len: 10,
                limit: 5,
                ..
            })
        ));
        // A self-contained segment while a large envelope is half assembled.
        let mut a = EnvelopeAssembler::new(1 << 20);
        a.push(
            Segment {
                self_contained: false,
                payload: whole.slice(..12),
            },
            &mut out,
        )
        .unwrap();
        assert!(a.is_partial());
        let next = Segment {
            self_contained: true,
            payload: whole.clone(),
        };
        assert!(a.push(next, &mut out).is_err());
        // Parts that run past their envelope.
        let mut a = EnvelopeAssembler::new(1 << 20);
        let mut two = whole.to_vec();
        two.extend_from_slice(&whole);
        let over = Segment {
            self_contained: false,
            payload: Bytes::from(two),
        };
        assert!(a.push(over, &mut out).is_err());
        // A body over the limit is refused from its header, before it is gathered.
        let mut a = EnvelopeAssembler::new(5);
        let big = Segment {
            self_contained: false,
            payload: whole.slice(..9),
        };
        assert!(matches!(
            a.push(big, &mut out),
            Err(ProtoError::TooLong { len: 10, .. })
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn encoding_refuses_a_buffer_that_does_not_end_on_an_envelope() {
        let mut e = envelope(1, 10);
        e.pop();
        let mut wire = BytesMut::new();
        assert!(SegmentEncoder::new(SegmentCompression::None)
            .encode(&e, &mut wire)
            .is_err());
        assert!(wire.is_empty(), "nothing written");
        // Fault injection sends it all the same, in valid segments the decoder accepts as
        // segments; it is the envelope inside that is cut short.
        for compression in [SegmentCompression::None, SegmentCompression::Lz4] {
            let mut wire = BytesMut::new();
            SegmentEncoder::new(compression).encode_unchecked(&e, &mut wire);
            let segment = SegmentDecoder::new(compression)
                .decode(&mut wire)
                .expect("a valid segment")
                .expect("a whole segment");
            assert!(wire.is_empty());
            assert!(segment.self_contained);
            assert_eq!(segment.payload, e);
            let mut out = BytesMut::new();
            assert!(EnvelopeAssembler::new(1 << 20)
                .push(segment, &mut out)
                .is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder() {
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for c in BOTH {
            for _ in 0..2000 {
                let len = (next() % 64) as usize;
                let mut buf: BytesMut = (0..len).map(|_| next() as u8).collect();
                let d = SegmentDecoder::new(c);
                let mut a = EnvelopeAssembler::new(1 << 16);
                let mut out = BytesMut::new();
                while let Ok(Some(s)) = d.decode(&mut buf) {
                    if a.push(s, &mut out).is_err() {
                        break;
                    }
                }
            }
        }
    }
}
