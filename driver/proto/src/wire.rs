//! The notations of spec section 3 (`[int]`, `[string]`, `[bytes]`, `[value]`, ...), read from
//! and written to byte buffers.
//!
//! Reading: [`Reader`] walks a borrowed slice. Every length prefix is checked against the
//! bytes that are left before anything is sliced, and slices borrow from the input, so
//! reading allocates nothing. Writing: the `put_*` functions append to any [`BufMut`];
//! those that take a length-prefixed value fail with [`ProtoError::TooLong`] when the value
//! does not fit its prefix, rather than writing a wrong length.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use bytes::BufMut;

use crate::error::{ProtoError, Result};

/// A `[value]` as it appears on the wire: bytes, null (`-1`) or not set (`-2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawValue<'a> {
    /// A present value (possibly empty).
    Bytes(&'a [u8]),
    /// `null`.
    Null,
    /// `not set`: leaves the existing value unchanged.
    Unset,
}

/// A decoded `[bytes map]`: keys with their values, `None` for null.
pub type BytesMap<'a> = Vec<(&'a str, Option<&'a [u8]>)>;

/// A cursor over a borrowed byte slice, reading the spec's notations.
///
/// Invariant: `buf` is always the unread tail of the input; a failed read leaves the
/// cursor where it was for the fixed-size reads, and the caller discards it on error.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// True when everything has been read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The unread tail, without consuming it.
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// Fails with [`ProtoError::TrailingBytes`] unless everything was read.
    pub fn expect_end(&self, what: &'static str) -> Result<()> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(ProtoError::TrailingBytes {
                what,
                extra: self.buf.len(),
            })
        }
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.buf.len() {
            return Err(ProtoError::Truncated {
                what,
                needed: n,
                available: self.buf.len(),
            });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let bytes = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// A `[byte]`.
    pub fn read_byte(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A `[short]` (unsigned 16 bits).
    pub fn read_short(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    /// An `[int]` (signed 32 bits).
    pub fn read_int(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    /// A `[long]` (signed 64 bits).
    pub fn read_long(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// A `[uuid]` (16 bytes).
    pub fn read_uuid(&mut self, what: &'static str) -> Result<[u8; 16]> {
        self.array(what)
    }

    fn utf8(bytes: &'a [u8], what: &'static str) -> Result<&'a str> {
        std::str::from_utf8(bytes).map_err(|_| ProtoError::InvalidUtf8 { what })
    }

    /// A `[string]`: a `[short]` length, then UTF-8.
    pub fn read_string(&mut self, what: &'static str) -> Result<&'a str> {
        let n = self.read_short(what)? as usize;
        Self::utf8(self.take(n, what)?, what)
    }

    /// A `[long string]`: an `[int]` length, then UTF-8.
    pub fn read_long_string(&mut self, what: &'static str) -> Result<&'a str> {
        let n = self.read_int(what)?;
        let n = usize::try_from(n).map_err(|_| ProtoError::InvalidLength {
            what,
            len: n.into(),
        })?;
        Self::utf8(self.take(n, what)?, what)
    }

    /// A `[bytes]`: `None` for a negative length (null).
    pub fn read_bytes(&mut self, what: &'static str) -> Result<Option<&'a [u8]>> {
        let n = self.read_int(what)?;
        match usize::try_from(n) {
            Ok(n) => Ok(Some(self.take(n, what)?)),
            Err(_) => Ok(None),
        }
    }

    /// A `[value]`: bytes, null (`-1`) or not set (`-2`); any other negative length is an error.
    pub fn read_value(&mut self, what: &'static str) -> Result<RawValue<'a>> {
        let n = self.read_int(what)?;
        match n {
            -1 => Ok(RawValue::Null),
            -2 => Ok(RawValue::Unset),
            n if n < 0 => Err(ProtoError::InvalidLength {
                what,
                len: n.into(),
            }),
            n => Ok(RawValue::Bytes(self.take(n as usize, what)?)),
        }
    }

    /// A `[short bytes]`.
    pub fn read_short_bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let n = self.read_short(what)? as usize;
        self.take(n, what)
    }

    /// A `[string list]`, as an iterator that borrows the input (no allocation).
    pub fn read_string_list(&mut self, what: &'static str) -> Result<StringList<'a>> {
        let count = self.read_short(what)?;
        let start = *self;
        // Walk once to validate every element and find the end; the iterator re-reads.
        for _ in 0..count {
            self.read_string(what)?;
        }
        Ok(StringList {
            reader: start,
            left: count,
        })
    }

    /// A `[string map]` of borrowed pairs.
    pub fn read_string_map(&mut self, what: &'static str) -> Result<Vec<(&'a str, &'a str)>> {
        let n = self.read_short(what)? as usize;
        // Each pair needs at least 4 bytes: never reserve more than the input can hold.
        let mut out = Vec::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            let k = self.read_string(what)?;
            let v = self.read_string(what)?;
            out.push((k, v));
        }
        Ok(out)
    }

    /// A `[string multimap]` of borrowed keys and value lists.
    pub fn read_string_multimap(
        &mut self,
        what: &'static str,
    ) -> Result<Vec<(&'a str, Vec<&'a str>)>> {
        let n = self.read_short(what)? as usize;
        let mut out = Vec::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            let k = self.read_string(what)?;
            let values = self.read_string_list(what)?.collect();
            out.push((k, values));
        }
        Ok(out)
    }

    /// A `[bytes map]` of borrowed keys and values (`None` for a null value).
    pub fn read_bytes_map(&mut self, what: &'static str) -> Result<BytesMap<'a>> {
        let n = self.read_short(what)? as usize;
        let mut out = Vec::with_capacity(n.min(self.remaining() / 6));
        for _ in 0..n {
            let k = self.read_string(what)?;
            let v = self.read_bytes(what)?;
            out.push((k, v));
        }
        Ok(out)
    }

    /// An `[inet]`: address size (4 or 16), address, `[int]` port.
    pub fn read_inet(&mut self, what: &'static str) -> Result<SocketAddr> {
        let ip = self.read_inetaddr(what)?;
        let port = self.read_int(what)?;
        let port = u16::try_from(port).map_err(|_| ProtoError::InvalidValue {
            what,
            detail: format!("port {port} is out of range"),
        })?;
        Ok(SocketAddr::new(ip, port))
    }

    /// An `[inetaddr]` (as in events): address size (4 or 16), then the address.
    pub fn read_inetaddr(&mut self, what: &'static str) -> Result<IpAddr> {
        match self.read_byte(what)? {
            4 => Ok(IpAddr::V4(Ipv4Addr::from(self.array::<4>(what)?))),
            16 => Ok(IpAddr::V6(Ipv6Addr::from(self.array::<16>(what)?))),
            n => Err(ProtoError::InvalidValue {
                what,
                detail: format!("address size {n}, expected 4 or 16"),
            }),
        }
    }
}

/// The strings of a `[string list]`, validated when the list was read.
#[derive(Debug, Clone)]
pub struct StringList<'a> {
    reader: Reader<'a>,
    left: u16,
}

impl<'a> Iterator for StringList<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Validated by `read_string_list`, so this cannot fail; stop rather than panic if it did.
        self.reader.read_string("[string list]").ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for StringList<'_> {}

fn short_len(len: usize, what: &'static str) -> Result<u16> {
    u16::try_from(len).map_err(|_| ProtoError::TooLong {
        what,
        len,
        limit: u16::MAX as usize,
    })
}

fn int_len(len: usize, what: &'static str) -> Result<i32> {
    i32::try_from(len).map_err(|_| ProtoError::TooLong {
        what,
        len,
        limit: i32::MAX as usize,
    })
}

/// Writes a `[short]`.
pub fn put_short(buf: &mut impl BufMut, v: u16) {
    buf.put_u16(v);
}

/// Writes an `[int]`.
pub fn put_int(buf: &mut impl BufMut, v: i32) {
    buf.put_i32(v);
}

/// Writes a `[long]`.
pub fn put_long(buf: &mut impl BufMut, v: i64) {
    buf.put_i64(v);
}

/// Writes a `[string]`; fails if it is longer than 65535 bytes.
pub fn put_string(buf: &mut impl BufMut, s: &str, what: &'static str) -> Result<()> {
    buf.put_u16(short_len(s.len(), what)?);
    buf.put_slice(s.as_bytes());
    Ok(())
}

/// Writes a `[long string]`.
pub fn put_long_string(buf: &mut impl BufMut, s: &str, what: &'static str) -> Result<()> {
    buf.put_i32(int_len(s.len(), what)?);
    buf.put_slice(s.as_bytes());
    Ok(())
}

/// Writes a `[bytes]`; `None` is written as null (length -1).
pub fn put_bytes(buf: &mut impl BufMut, b: Option<&[u8]>, what: &'static str) -> Result<()> {
    match b {
        Some(b) => {
            buf.put_i32(int_len(b.len(), what)?);
            buf.put_slice(b);
        }
        None => buf.put_i32(-1),
    }
    Ok(())
}

/// Writes a `[value]`.
pub fn put_value(buf: &mut impl BufMut, v: RawValue<'_>, what: &'static str) -> Result<()> {
    match v {
        RawValue::Bytes(b) => put_bytes(buf, Some(b), what),
        RawValue::Null => {
            buf.put_i32(-1);
            Ok(())
        }
        RawValue::Unset => {
            buf.put_i32(-2);
            Ok(())
        }
    }
}

/// Writes a `[short bytes]`.
pub fn put_short_bytes(buf: &mut impl BufMut, b: &[u8], what: &'static str) -> Result<()> {
    buf.put_u16(short_len(b.len(), what)?);
    buf.put_slice(b);
    Ok(())
}

/// Writes a `[string list]`.
pub fn put_string_list<'s>(
    buf: &mut impl BufMut,
    items: impl ExactSizeIterator<Item = &'s str>,
    what: &'static str,
) -> Result<()> {
    buf.put_u16(short_len(items.len(), what)?);
    for s in items {
        put_string(buf, s, what)?;
    }
    Ok(())
}

/// Writes a `[string map]`.
pub fn put_string_map<'s>(
    buf: &mut impl BufMut,
    pairs: &[(&'s str, &'s str)],
    what: &'static str,
) -> Result<()> {
    buf.put_u16(short_len(pairs.len(), what)?);
    for (k, v) in pairs {
        put_string(buf, k, what)?;
        put_string(buf, v, what)?;
    }
    Ok(())
}

/// Writes a `[string multimap]`.
pub fn put_string_multimap<S: AsRef<str>>(
    buf: &mut impl BufMut,
    pairs: &[(S, Vec<S>)],
    what: &'static str,
) -> Result<()> {
    buf.put_u16(short_len(pairs.len(), what)?);
    for (k, vs) in pairs {
        put_string(buf, k.as_ref(), what)?;
        put_string_list(buf, vs.iter().map(AsRef::as_ref), what)?;
    }
    Ok(())
}

/// Writes a `[bytes map]`.
pub fn put_bytes_map(
    buf: &mut impl BufMut,
    pairs: &[(&str, Option<&[u8]>)],
    what: &'static str,
) -> Result<()> {
    buf.put_u16(short_len(pairs.len(), what)?);
    for (k, v) in pairs {
        put_string(buf, k, what)?;
        put_bytes(buf, *v, what)?;
    }
    Ok(())
}

/// Writes an `[inetaddr]`: size byte and address.
pub fn put_inetaddr(buf: &mut impl BufMut, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            buf.put_u8(4);
            buf.put_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            buf.put_u8(16);
            buf.put_slice(&v6.octets());
        }
    }
}

/// Writes an `[inet]`: address and `[int]` port.
pub fn put_inet(buf: &mut impl BufMut, addr: SocketAddr) {
    put_inetaddr(buf, addr.ip());
    buf.put_i32(i32::from(addr.port()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_round_trip_and_truncation() {
        let mut buf = Vec::new();
        put_string(&mut buf, "héllo", "t").unwrap();
        let mut r = Reader::new(&buf);
        assert_eq!(r.read_string("t").unwrap(), "héllo");
        assert!(r.is_empty());
        let mut short = Reader::new(&buf[..4]);
        assert!(matches!(
            short.read_string("t"),
            Err(ProtoError::Truncated {
                needed: 6,
                available: 2,
                ..
            })
        ));
    }

    #[test]
    fn value_lengths() {
        let mut buf = Vec::new();
        put_value(&mut buf, RawValue::Null, "v").unwrap();
        put_value(&mut buf, RawValue::Unset, "v").unwrap();
        put_value(&mut buf, RawValue::Bytes(b"ab"), "v").unwrap();
        buf.extend_from_slice(&(-3i32).to_be_bytes());
        let mut r = Reader::new(&buf);
        assert_eq!(r.read_value("v").unwrap(), RawValue::Null);
        assert_eq!(r.read_value("v").unwrap(), RawValue::Unset);
        assert_eq!(r.read_value("v").unwrap(), RawValue::Bytes(b"ab"));
        assert!(matches!(
            r.read_value("v"),
            Err(ProtoError::InvalidLength { len: -3, .. })
        ));
    }

    #[test]
    fn huge_lengths_are_rejected_before_slicing() {
        let buf = i32::MAX.to_be_bytes();
        assert!(matches!(
            Reader::new(&buf).read_bytes("b"),
            Err(ProtoError::Truncated { .. })
        ));
        // A list that claims 65535 strings but holds none.
        let buf = [0xff, 0xff];
        assert!(Reader::new(&buf).read_string_list("l").is_err());
        assert!(Reader::new(&buf).read_string_map("m").is_err());
    }

    #[test]
    fn multimap_and_inet_round_trip() {
        let mut buf = Vec::new();
        let mm = vec![("A", vec!["1", "2"]), ("B", vec![])];
        put_string_multimap(&mut buf, &mm, "mm").unwrap();
        let addr: SocketAddr = "[::1]:9042".parse().unwrap();
        put_inet(&mut buf, addr);
        let mut r = Reader::new(&buf);
        assert_eq!(r.read_string_multimap("mm").unwrap(), mm);
        assert_eq!(r.read_inet("i").unwrap(), addr);
        r.expect_end("t").unwrap();
    }

    #[test]
    fn overlong_string_is_an_error_not_a_wrong_prefix() {
        let s = "x".repeat(70_000);
        let mut buf = Vec::new();
        assert!(matches!(
            put_string(&mut buf, &s, "s"),
            Err(ProtoError::TooLong { .. })
        ));
    }
}
