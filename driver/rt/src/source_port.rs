//! Connecting from a chosen local (source) port, for both runtimes: a socket bound to the
//! port before its connect. ScyllaDB's shard-aware port assigns a connection to the shard
//! `source_port % nr_shards`, so a driver that wants a given shard binds such a port first.
//!
//! These are setup-time syscalls (once per connection), never on the request path.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::uring::sockaddr::SockAddrBuf;

/// A new blocking TCP socket of `peer`'s family, bound to `local_port` on the unspecified
/// address. A port in use fails with `AddrInUse` (the caller tries another).
pub(crate) fn bound_socket(peer: &SocketAddr, local_port: u16) -> io::Result<OwnedFd> {
    let (domain, local) = match peer {
        SocketAddr::V4(_) => (
            libc::AF_INET,
            SocketAddr::from((Ipv4Addr::UNSPECIFIED, local_port)),
        ),
        SocketAddr::V6(_) => (
            libc::AF_INET6,
            SocketAddr::from((Ipv6Addr::UNSPECIFIED, local_port)),
        ),
    };
    // SAFETY: socket(2) takes no pointers; the result is checked.
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let addr = SockAddrBuf::from_addr(&local);
    // SAFETY: the pointer and length describe `addr`, alive for the call.
    let r = unsafe { libc::bind(sock.as_raw_fd(), addr.as_ptr(), addr.len) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sock)
}

/// Connects the blocking socket `sock` to `peer`, giving up after `timeout` (`TimedOut`).
/// Blocks the calling thread: for a helper thread, never an executor's.
pub(crate) fn blocking_connect(
    sock: &OwnedFd,
    peer: &SocketAddr,
    timeout: Duration,
) -> io::Result<()> {
    let fd = sock.as_raw_fd();
    // A blocking connect honours SO_SNDTIMEO (it then fails with EINPROGRESS).
    let tv = libc::timeval {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_usec: libc::suseconds_t::from(timeout.subsec_micros()),
    };
    set_timeval(fd, &tv)?;
    let addr = SockAddrBuf::from_addr(peer);
    // SAFETY: the pointer and length describe `addr`, alive for the call.
    let r = unsafe { libc::connect(fd, addr.as_ptr(), addr.len) };
    let result = if r < 0 {
        let e = io::Error::last_os_error();
        Err(match e.raw_os_error() {
            Some(libc::EINPROGRESS) | Some(libc::EAGAIN) => io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connect to {peer} timed out after {timeout:?}"),
            ),
            _ => e,
        })
    } else {
        Ok(())
    };
    // Sends are the runtime's business from here: no timeout left on them.
    set_timeval(
        fd,
        &libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
    )?;
    result
}

fn set_timeval(fd: i32, tv: &libc::timeval) -> io::Result<()> {
    // SAFETY: passes a pointer to a live timeval and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_socket_connects_from_its_port_and_a_taken_port_is_addr_in_use() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let peer = listener.local_addr().expect("addr");
        // A free port: bind one, note it, release it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let sock = bound_socket(&peer, port).expect("binds");
        blocking_connect(&sock, &peer, Duration::from_secs(5)).expect("connects");
        let (_accepted, from) = listener.accept().expect("accepted");
        assert_eq!(
            from.port(),
            port,
            "the connection comes from the bound port"
        );
        let taken = bound_socket(&peer, port).expect_err("the port is taken");
        assert_eq!(taken.kind(), io::ErrorKind::AddrInUse);
    }
}
