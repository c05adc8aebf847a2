//! The TCP connections this process holds, as the kernel lists them, whichever driver opened
//! them: which sockets are the process's own (`/proc/self/fd`), where each one goes
//! (`/proc/self/net/tcp` and `tcp6`), and those that appeared since a moment, once they stop
//! changing ([`settle`]: a driver returns from connecting before its pools are full, and
//! fills them in the background).
//!
//! Read through the `procfs` crate. Nothing here knows a driver: the shape of what a backend
//! opened is [`crate::report::connection_shape`]'s.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use procfs::net::{TcpNetEntry, TcpState};
use procfs::process::{FDTarget, Process};

/// `/proc` could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read this process's sockets from /proc")]
pub(crate) struct SocketsError(#[source] procfs::ProcError);

/// One established TCP connection: its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TcpConnection {
    /// This process's end.
    pub local: SocketAddr,
    /// The peer's end.
    pub remote: SocketAddr,
}

/// The socket inodes of this process's open file descriptors now.
pub(crate) fn own_sockets() -> Result<BTreeSet<u64>, SocketsError> {
    let fds = Process::myself()
        .and_then(|p| p.fd())
        .map_err(SocketsError)?;
    // A descriptor closed while the list was read is gone: skipped, not an error.
    Ok(fds
        .flatten()
        .filter_map(|fd| match fd.target {
            FDTarget::Socket(inode) => Some(inode),
            _ => None,
        })
        .collect())
}

/// This process's TCP sockets that are not in `before`: the established ones it opened, and
/// how many are still connecting (their handshake not done).
fn opened_since(before: &BTreeSet<u64>) -> Result<(Vec<TcpConnection>, usize), SocketsError> {
    let own = own_sockets()?;
    let mut entries = procfs::net::tcp().map_err(SocketsError)?;
    entries.extend(procfs::net::tcp6().map_err(SocketsError)?);
    Ok(split_new(&entries, &own, before))
}

/// Of `entries`, those whose inode is in `own` and not in `before`: the established ones this
/// process opened as connections (sorted), and the count of those in a connecting state.
/// Those it accepted are left out: their local port is one it listens on (a server in the
/// same process, such as a test's stub or the metrics endpoint).
fn split_new(
    entries: &[TcpNetEntry],
    own: &BTreeSet<u64>,
    before: &BTreeSet<u64>,
) -> (Vec<TcpConnection>, usize) {
    let listening: BTreeSet<u16> = entries
        .iter()
        .filter(|e| own.contains(&e.inode) && e.state == TcpState::Listen)
        .map(|e| e.local_address.port())
        .collect();
    let mut established = Vec::new();
    let mut connecting = 0;
    for e in entries.iter().filter(|e| {
        own.contains(&e.inode)
            && !before.contains(&e.inode)
            && !listening.contains(&e.local_address.port())
    }) {
        match e.state {
            TcpState::Established => established.push(TcpConnection {
                local: e.local_address,
                remote: e.remote_address,
            }),
            TcpState::SynSent | TcpState::SynRecv => connecting += 1,
            _ => {}
        }
    }
    established.sort_unstable();
    (established, connecting)
}

/// The connections [`settle`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opened {
    /// The established connections opened since the moment given, sorted.
    pub connections: Vec<TcpConnection>,
    /// True if they held still for the quiet time (false: still changing at the limit).
    pub settled: bool,
}

/// How often [`settle`] looks.
const POLL: Duration = Duration::from_millis(25);

/// The TCP connections this process opened since `before` (from [`own_sockets`]), read
/// again until none is connecting and the established ones have not changed for `quiet`,
/// or until `limit` has passed; `pause` waits between two looks (and may drive whatever
/// opens them).
pub(crate) fn settle(
    before: &BTreeSet<u64>,
    quiet: Duration,
    limit: Duration,
    pause: &mut dyn FnMut(Duration),
) -> Result<Opened, SocketsError> {
    let started = Instant::now();
    let (mut last, mut connecting) = opened_since(before)?;
    let mut still_since = Instant::now();
    loop {
        if connecting == 0 && still_since.elapsed() >= quiet {
            return Ok(Opened {
                connections: last,
                settled: true,
            });
        }
        if started.elapsed() >= limit {
            return Ok(Opened {
                connections: last,
                settled: false,
            });
        }
        pause(POLL);
        let (now, now_connecting) = opened_since(before)?;
        if now != last || now_connecting != connecting {
            still_since = Instant::now();
        }
        last = now;
        connecting = now_connecting;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    const QUIET: Duration = Duration::from_millis(50);
    const LIMIT: Duration = Duration::from_secs(5);

    #[test]
    fn connections_opened_after_a_moment_are_found_with_both_ends() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let before = own_sockets().unwrap();
        let a = TcpStream::connect(server).unwrap();
        let b = TcpStream::connect(server).unwrap();
        let (_sa, _) = listener.accept().unwrap();
        let (_sb, _) = listener.accept().unwrap();
        let opened = settle(&before, QUIET, LIMIT, &mut std::thread::sleep).unwrap();
        // Both client ends are found; the ends this process accepted are not its own
        // connections.
        let to_server: Vec<_> = opened
            .connections
            .iter()
            .filter(|c| c.remote == server)
            .collect();
        assert_eq!(to_server.len(), 2, "{opened:?}");
        let locals: BTreeSet<SocketAddr> = to_server.iter().map(|c| c.local).collect();
        let expected: BTreeSet<SocketAddr> = [a.local_addr().unwrap(), b.local_addr().unwrap()]
            .into_iter()
            .collect();
        assert_eq!(locals, expected);
        assert!(
            opened
                .connections
                .iter()
                .all(|c| c.local.port() != server.port()),
            "{opened:?}"
        );
    }

    #[test]
    fn sockets_open_before_the_moment_are_left_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let _old = TcpStream::connect(server).unwrap();
        let (_old_accepted, _) = listener.accept().unwrap();
        let before = own_sockets().unwrap();
        let opened = settle(&before, QUIET, LIMIT, &mut std::thread::sleep).unwrap();
        assert!(
            opened
                .connections
                .iter()
                .all(|c| c.remote != server && c.local != server),
            "{opened:?}"
        );
    }

    #[test]
    fn a_listening_socket_is_no_connection() {
        let before = own_sockets().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let opened = settle(&before, QUIET, LIMIT, &mut std::thread::sleep).unwrap();
        // Other tests of this binary may open connections meanwhile: only the listener's
        // address is this test's.
        assert!(
            opened
                .connections
                .iter()
                .all(|c| c.local != at && c.remote != at),
            "{opened:?}"
        );
    }
}
