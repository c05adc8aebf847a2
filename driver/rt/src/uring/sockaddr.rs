//! Conversions between `std::net::SocketAddr` and the kernel's `sockaddr_storage`.
//!
//! Invariant: a [`SockAddrBuf`] handed to the kernel (connect, accept) lives in a `Box` owned
//! by the operation slot until its CQE arrives, so its address is stable and valid for as
//! long as the kernel may read or write it.

use std::io;
use std::mem;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// A socket address in the kernel's layout, with its length.
pub(crate) struct SockAddrBuf {
    /// The address.
    pub(crate) storage: libc::sockaddr_storage,
    /// Its length in bytes (in/out for accept).
    pub(crate) len: libc::socklen_t,
}

impl SockAddrBuf {
    /// An empty buffer with room for any address (for accept and getsockname).
    pub(crate) fn empty() -> SockAddrBuf {
        SockAddrBuf {
            // SAFETY: sockaddr_storage is plain old data; all-zero bytes are a valid value.
            storage: unsafe { mem::zeroed() },
            len: mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    /// `addr` in the kernel's layout.
    pub(crate) fn from_addr(addr: &SocketAddr) -> SockAddrBuf {
        let mut buf = SockAddrBuf::empty();
        match addr {
            SocketAddr::V4(a) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
                unsafe {
                    (&raw mut buf.storage)
                        .cast::<libc::sockaddr_in>()
                        .write(sin)
                };
                buf.len = mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            }
            SocketAddr::V6(a) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    sin6_flowinfo: a.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
                unsafe {
                    (&raw mut buf.storage)
                        .cast::<libc::sockaddr_in6>()
                        .write(sin6)
                };
                buf.len = mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            }
        }
        buf
    }

    /// Pointer to the address, for the kernel.
    pub(crate) fn as_ptr(&self) -> *const libc::sockaddr {
        (&raw const self.storage).cast()
    }

    /// The address the kernel wrote, as a `SocketAddr`.
    pub(crate) fn to_addr(&self) -> io::Result<SocketAddr> {
        match self.storage.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the family says the storage holds a sockaddr_in, which it is
                // large enough and aligned for.
                let sin = unsafe { &*(&raw const self.storage).cast::<libc::sockaddr_in>() };
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Ok(SocketAddr::V4(SocketAddrV4::new(
                    ip,
                    u16::from_be(sin.sin_port),
                )))
            }
            libc::AF_INET6 => {
                // SAFETY: as above, for sockaddr_in6.
                let sin6 = unsafe { &*(&raw const self.storage).cast::<libc::sockaddr_in6>() };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Ok(SocketAddr::V6(SocketAddrV6::new(
                    ip,
                    u16::from_be(sin6.sin6_port),
                    sin6.sin6_flowinfo,
                    sin6.sin6_scope_id,
                )))
            }
            f => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected address family {f}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_v4_and_v6() {
        for a in ["127.0.0.1:9042", "[::1]:443", "[fe80::1%2]:80"] {
            let addr: SocketAddr = a.parse().unwrap();
            assert_eq!(SockAddrBuf::from_addr(&addr).to_addr().unwrap(), addr);
        }
        assert!(SockAddrBuf::empty().to_addr().is_err());
    }
}
