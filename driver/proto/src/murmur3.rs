//! The token of a partition key as Cassandra's `Murmur3Partitioner` computes it.
//!
//! Cassandra hashes the serialized partition key with its own MurmurHash3 x64 128-bit
//! variant (seed 0) and takes the first 64-bit half as the token. Its variant differs from
//! the reference algorithm in one place: the bytes of the last, partial block are read as
//! **signed** Java bytes, so a tail byte of 0x80 or more is sign-extended before it is
//! shifted into place. A token of `i64::MIN` (the partitioner's minimum, reserved for the
//! empty key) is mapped to `i64::MAX`.
//!
//! The routing key of a single-column partition key is that column's serialized value; of a
//! composite key, every component as `[u16 length][bytes][0x00]` ([`composite_key`]).
//!
//! Invariant: pure functions of their input, no allocation (the composite key is built in a
//! caller's reusable buffer).

/// A position on the token ring of the Murmur3 partitioner.
pub type Token = i64;

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline]
fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[inline]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

#[inline]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// A tail byte as Cassandra reads it: a signed byte widened to 64 bits.
#[inline]
fn signed(b: u8) -> u64 {
    i64::from(b as i8) as u64
}

/// The first half of Cassandra's MurmurHash3 x64 128 of `key` (seed 0).
pub fn hash(key: &[u8]) -> i64 {
    let mut h1: u64 = 0;
    let mut h2: u64 = 0;
    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let (a, b) = block.split_at(8);
        // Whole blocks are read as little-endian unsigned words.
        let k1 = u64::from_le_bytes(a.try_into().unwrap_or([0; 8]));
        let k2 = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        h1 ^= mix_k1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let mut k1: u64 = 0;
    let mut k2: u64 = 0;
    for (i, &b) in tail.iter().enumerate().skip(8) {
        k2 ^= signed(b) << ((i - 8) * 8);
    }
    if tail.len() > 8 {
        h2 ^= mix_k2(k2);
    }
    for (i, &b) in tail.iter().enumerate().take(8) {
        k1 ^= signed(b) << (i * 8);
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(k1);
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h1 as i64
}

/// The token of a routing key (the serialized partition key).
pub fn token(routing_key: &[u8]) -> Token {
    if routing_key.is_empty() {
        return i64::MIN;
    }
    match hash(routing_key) {
        i64::MIN => i64::MAX,
        t => t,
    }
}

/// Appends the routing key of a composite partition key made of `components` (each a
/// serialized value) to `out`: `[u16 length][bytes][0x00]` per component. Returns `false`
/// (and leaves `out` as it was) if a component is longer than 65535 bytes, which Cassandra
/// would refuse as a partition-key component.
pub fn composite_key<'a>(
    components: impl IntoIterator<Item = &'a [u8]>,
    out: &mut Vec<u8>,
) -> bool {
    let start = out.len();
    for c in components {
        let Ok(len) = u16::try_from(c.len()) else {
            out.truncate(start);
            return false;
        };
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(c);
        out.push(0);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens read from Cassandra 5.0.6 with `SELECT token(k) FROM t WHERE k = ...` (the
    /// integration test `routing` checks 10,000 more of several key types).
    #[test]
    fn tokens_match_cassandra() {
        assert_eq!(token(&1i32.to_be_bytes()), -4069959284402364209);
        assert_eq!(token(b""), i64::MIN);
    }

    #[test]
    fn tail_bytes_are_sign_extended_like_java() {
        // A one-byte key of 0xff and of 0x7f differ in more than the low byte: the high
        // byte's sign spreads over the whole word before mixing.
        let reference_style = {
            // What an unsigned reading would give, for contrast.
            let mut k1: u64 = 0xff;
            k1 = mix_k1(k1);
            let mut h1: u64 = k1 ^ 1;
            let mut h2: u64 = 1;
            h1 = h1.wrapping_add(h2);
            h2 = h2.wrapping_add(h1);
            h1 = fmix(h1);
            h2 = fmix(h2);
            h1.wrapping_add(h2) as i64
        };
        assert_ne!(hash(&[0xff]), reference_style);
    }

    #[test]
    fn composite_keys_are_length_prefixed_and_terminated() {
        let mut out = Vec::new();
        assert!(composite_key([&[1u8, 2][..], &b"abc"[..]], &mut out));
        assert_eq!(out, [0, 2, 1, 2, 0, 0, 3, b'a', b'b', b'c', 0]);
        let big = vec![0u8; 70_000];
        let mut out2 = vec![9];
        assert!(!composite_key([&big[..]], &mut out2));
        assert_eq!(out2, [9], "left as it was");
    }

    #[test]
    fn every_tail_length_is_hashed_without_panic() {
        let key: Vec<u8> = (0..=255u8).collect();
        let mut seen = std::collections::HashSet::new();
        for len in 0..=40 {
            seen.insert(token(&key[..len]));
        }
        assert_eq!(seen.len(), 41, "every length gives its own token");
    }
}
