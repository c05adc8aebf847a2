//! Frame-body compression as protocol v4 frames it (spec section 5).
//!
//! lz4: the compressed body is a 4-byte big-endian uncompressed length followed by one lz4
//! block. The declared length is checked against a limit before anything is reserved, and a
//! corrupt block is an error, never a panic (lz4_flex's safe decoder).

use bytes::{BufMut, Bytes};

use crate::error::{ProtoError, Result};

/// A compression algorithm negotiated in STARTUP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// lz4 block compression.
    Lz4,
}

impl Compression {
    /// The name used in STARTUP's `COMPRESSION` option and in SUPPORTED.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
        }
    }

    /// Appends the compressed form of `body` to `out`.
    ///
    /// Allocates lz4's output block once per call: compression trades that for fewer bytes
    /// on the wire, and is off unless negotiated.
    pub fn compress(self, body: &[u8], out: &mut impl BufMut) -> Result<()> {
        let len = u32::try_from(body.len()).map_err(|_| ProtoError::TooLong {
            what: "compressed body",
            len: body.len(),
            limit: u32::MAX as usize,
        })?;
        out.put_u32(len);
        out.put_slice(&lz4_flex::block::compress(body));
        Ok(())
    }

    /// Decompresses a frame body, refusing a declared length over `max_len`.
    pub fn decompress(self, body: &[u8], max_len: usize) -> Result<Bytes> {
        let Some((len, block)) = body.split_first_chunk::<4>() else {
            return Err(ProtoError::Truncated {
                what: "lz4 uncompressed length",
                needed: 4,
                available: body.len(),
            });
        };
        let len = u32::from_be_bytes(*len) as usize;
        if len > max_len {
            return Err(ProtoError::TooLong {
                what: "decompressed body",
                len,
                limit: max_len,
            });
        }
        // lz4 expands a block at most about 255-fold: a larger claim is a lie, refused before
        // the output is reserved, so the allocation stays tied to the input's size.
        let most = block.len().saturating_mul(255).saturating_add(64);
        if len > most {
            return Err(ProtoError::Compression(format!(
                "a {}-byte block cannot expand to the {len} bytes claimed",
                block.len()
            )));
        }
        if len == 0 {
            return Ok(Bytes::new());
        }
        let out = lz4_flex::block::decompress(block, len)
            .map_err(|e| ProtoError::Compression(e.to_string()))?;
        if out.len() != len {
            return Err(ProtoError::Compression(format!(
                "block decompressed to {} bytes, header said {len}",
                out.len()
            )));
        }
        Ok(Bytes::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_hostile_blocks() {
        let body = b"SELECT * FROM ks.t WHERE k = ? -- SELECT * FROM ks.t WHERE k = ?".repeat(20);
        let mut out = Vec::new();
        Compression::Lz4.compress(&body, &mut out).unwrap();
        assert!(out.len() < body.len());
        assert_eq!(&out[..4], &(body.len() as u32).to_be_bytes());
        let back = Compression::Lz4.decompress(&out, 1 << 20).unwrap();
        assert_eq!(&back[..], &body[..]);
        // Over the limit: refused before decompressing.
        assert!(matches!(
            Compression::Lz4.decompress(&out, 100),
            Err(ProtoError::TooLong { .. })
        ));
        // Corrupt and truncated blocks are errors.
        let mut bad = out.clone();
        for b in bad.iter_mut().skip(4) {
            *b = 0xff;
        }
        assert!(Compression::Lz4.decompress(&bad, 1 << 20).is_err());
        assert!(Compression::Lz4
            .decompress(&out[..out.len() / 2], 1 << 20)
            .is_err());
        assert!(Compression::Lz4.decompress(&[0, 0], 1 << 20).is_err());
        // A huge declared length with a tiny block must not allocate it.
        let lie = [0x0f, 0xff, 0xff, 0xff, 0x10, 0x41];
        assert!(Compression::Lz4.decompress(&lie, 1 << 20).is_err());
    }
}
