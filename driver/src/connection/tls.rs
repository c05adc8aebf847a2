//! TLS between the socket and the connection's buffers, with rustls (sans-IO, so one
//! integration serves both runtimes; the `ring` provider: no OpenSSL, no aws-lc).
//!
//! - [`TlsConfig`]: what a driver trusts and shows (CA file, optional client certificate and
//!   key, optional server name), read from PEM files once and shared by every connection of
//!   every shard (an `Arc` cloned once per connect, never per request).
//! - `TlsFailure::of`: the kind of a rustls error ([`TlsFailure`] itself is in `error`,
//!   beside the connection error that carries it).
//! - `TlsSession` (crate-private): one connection's TLS state. [`TlsSession::handshake`]
//!   runs after TCP connect and before any CQL, bounded by the connect timeout; then the
//!   reader hands it what arrived ([`TlsSession::decrypt`], ciphertext in, plaintext
//!   appended to the frame buffer) and the flusher each batch ([`TlsSession::encrypt`]).
//!
//! What rustls allocates on the request path: on each flush it encrypts the batch into
//! records, each a fresh `Vec` in its send queue that `write_tls` then copies into our
//! buffer (one allocation per 16 KiB record); on each read it decrypts in place in its own
//! buffer (kept) and queues the plaintext as a `Vec` per record that we copy out. These are
//! rustls's own and its API offers no way to lend it our buffers (the unbuffered API would,
//! at the price of driving the state machine by hand); plaintext connections are unchanged.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, BytesMut};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{CertificateError, ClientConfig, ClientConnection, RootCertStore};

use super::error::{ConnectionError, TlsCause, TlsFailure};
use doppio_rt::TcpStream;

/// Why the TLS configuration could not be built (files, PEM contents, key mismatch).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// A PEM file could not be read or parsed.
    #[error("cannot read {what} from {path}")]
    Pem {
        /// What the file should hold.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The CA file holds no certificate.
    #[error("{path} holds no certificate")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// rustls refused a certificate or key (malformed, unsupported, key not matching).
    #[error("{what} refused")]
    Rustls {
        /// What was refused.
        what: &'static str,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// The server name is neither a DNS name nor an IP address.
    #[error("invalid TLS server name {name:?}")]
    ServerName {
        /// The name given.
        name: String,
    },
}

/// What every TLS connection of a session trusts and shows: the CA certificates the node's
/// certificate must chain to, an optional client certificate, and the name the node's
/// certificate must carry (default: the node's IP address, so a node's certificate needs
/// an IP subject alternative name unless a name is set).
///
/// ```no_run
/// # fn main() -> Result<(), doppio_driver::error::TlsConfigError> {
/// use doppio_driver::config::TlsConfig;
/// let tls = TlsConfig::from_ca_file("ca.pem")?
///     .with_client_cert("client.pem", "client.key")?
///     .with_server_name("db.example.com")?;
/// let node = "10.0.0.1:9142".parse().expect("an address");
/// let session = doppio_driver::SessionConfig::new(node).with_tls(tls);
/// # let _ = session;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    roots: Arc<RootCertStore>,
    client: Option<Arc<ClientAuth>>,
    server_name: Option<ServerName<'static>>,
    /// Built from the fields above: shared by every connection (an `Arc` clone per connect).
    rustls: Arc<ClientConfig>,
}

struct ClientAuth {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("ca_certificates", &self.roots.len())
            .field("client_certificate", &self.client.is_some())
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl TlsConfig {
    /// Trusts the CA certificates of the PEM file `path` (one or more).
    pub fn from_ca_file(path: impl AsRef<Path>) -> Result<Self, TlsConfigError> {
        let path = path.as_ref();
        let pem = |source| TlsConfigError::Pem {
            what: "CA certificates",
            path: path.to_owned(),
            source,
        };
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(path).map_err(pem)? {
            roots
                .add(cert.map_err(pem)?)
                .map_err(|source| TlsConfigError::Rustls {
                    what: "CA certificate",
                    source,
                })?;
        }
        if roots.is_empty() {
            return Err(TlsConfigError::NoCertificate {
                path: path.to_owned(),
            });
        }
        Self::build(Arc::new(roots), None, None)
    }

    /// Shows the node the certificate chain of the PEM file `cert` (the client's certificate
    /// first) with the private key of the PEM file `key` (PKCS#8, PKCS#1 or SEC1), for nodes
    /// that ask for client certificates.
    pub fn with_client_cert(
        self,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<Self, TlsConfigError> {
        let (cert, key) = (cert.as_ref(), key.as_ref());
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|source| TlsConfigError::Pem {
                what: "client certificates",
                path: cert.to_owned(),
                source,
            })?;
        if chain.is_empty() {
            return Err(TlsConfigError::NoCertificate {
                path: cert.to_owned(),
            });
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsConfigError::Pem {
            what: "a private key",
            path: key.to_owned(),
            source,
        })?;
        Self::build(
            self.roots,
            Some(Arc::new(ClientAuth { chain, key })),
            self.server_name,
        )
    }

    /// The name the node's certificate must carry (a DNS name or an IP address), instead of
    /// the node's IP address.
    pub fn with_server_name(mut self, name: &str) -> Result<Self, TlsConfigError> {
        let parsed =
            ServerName::try_from(name.to_owned()).map_err(|_| TlsConfigError::ServerName {
                name: name.to_owned(),
            })?;
        self.server_name = Some(parsed);
        Ok(self)
    }

    /// The server name set with [`TlsConfig::with_server_name`], if any.
    pub fn server_name(&self) -> Option<String> {
        self.server_name.as_ref().map(|n| n.to_str().into_owned())
    }

    /// The rustls configuration every connection uses (ring provider, the trusted CAs, the
    /// client certificate), for other rustls users that should verify alike (the bench hands
    /// it to scylla-rust-driver).
    pub fn rustls_config(&self) -> Arc<ClientConfig> {
        self.rustls.clone()
    }

    /// Whether a client certificate is shown.
    pub fn has_client_cert(&self) -> bool {
        self.client.is_some()
    }

    fn build(
        roots: Arc<RootCertStore>,
        client: Option<Arc<ClientAuth>>,
        server_name: Option<ServerName<'static>>,
    ) -> Result<Self, TlsConfigError> {
        let refused = |what| move |source| TlsConfigError::Rustls { what, source };
        let builder =
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(refused("protocol versions"))?
                .with_root_certificates(roots.clone());
        let config = match &client {
            None => builder.with_no_client_auth(),
            Some(auth) => builder
                .with_client_auth_cert(auth.chain.clone(), auth.key.clone_key())
                .map_err(refused("client certificate and key"))?,
        };
        Ok(Self {
            roots,
            client,
            server_name,
            rustls: Arc::new(config),
        })
    }

    /// The name to check the certificate of the node at `addr` against.
    fn name_for(&self, addr: SocketAddr) -> ServerName<'static> {
        match &self.server_name {
            Some(name) => name.clone(),
            None => ServerName::IpAddress(addr.ip().into()),
        }
    }
}

impl TlsFailure {
    /// The kind of a rustls error.
    fn of(error: &rustls::Error) -> Self {
        use rustls::Error as E;
        match error {
            E::InvalidCertificate(c) => match c {
                CertificateError::UnknownIssuer => TlsFailure::UnknownCa,
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => TlsFailure::Expired,
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => TlsFailure::NameMismatch,
                _ => TlsFailure::BadCertificate,
            },
            E::InvalidMessage(_) | E::InappropriateMessage { .. } => TlsFailure::NotTls,
            E::AlertReceived(_) => TlsFailure::Refused,
            _ => TlsFailure::Other,
        }
    }
}

/// Whether `bytes`, the first a node sent to a plaintext connection, open a TLS record (an
/// alert or a handshake message, any TLS 1.x): the node expects TLS.
pub(crate) fn looks_like_tls(bytes: &[u8]) -> bool {
    matches!(bytes, [0x15 | 0x16, 0x03, 0x00..=0x04, ..])
}

/// One connection's TLS state (see the module's documentation).
pub(crate) struct TlsSession {
    conn: ClientConnection,
    /// Plaintext is copied out of rustls through this (allocated once per connection).
    scratch: Box<[u8]>,
}

impl TlsSession {
    /// Runs the handshake on `socket` within `timeout`. Ciphertext that arrived after the
    /// handshake's last message is left in `raw` for the reader.
    pub(crate) async fn handshake(
        socket: &TcpStream,
        addr: SocketAddr,
        config: &TlsConfig,
        timeout: Duration,
        raw: &mut BytesMut,
    ) -> Result<Self, ConnectionError> {
        let fail = |failure, cause| ConnectionError::Tls {
            addr,
            failure,
            cause,
        };
        let mut conn = ClientConnection::new(config.rustls.clone(), config.name_for(addr))
            .map_err(|e| fail(TlsFailure::of(&e), TlsCause::Rustls(Arc::new(e))))?;
        // The send queue is drained into our buffer at every flush: no limit to enforce
        // (the caller's own buffer is the bound), and a limit would turn a large batch into
        // a partial write.
        conn.set_buffer_limit(None);
        let mut session = Self {
            conn,
            scratch: vec![0; 16 * 1024].into_boxed_slice(),
        };
        let handshake = session.drive_handshake(socket, raw);
        match doppio_rt::timeout(timeout, handshake).await {
            Ok(Ok(())) => Ok(session),
            Ok(Err((failure, cause))) => Err(fail(failure, cause)),
            Err(_) => Err(fail(TlsFailure::TimedOut, TlsCause::TimedOut(timeout))),
        }
    }

    async fn drive_handshake(
        &mut self,
        socket: &TcpStream,
        raw: &mut BytesMut,
    ) -> Result<(), (TlsFailure, TlsCause)> {
        let mut out = BytesMut::with_capacity(4096);
        while self.conn.is_handshaking() {
            if self.conn.wants_write() {
                self.write_tls(&mut out)
                    .map_err(|e| (TlsFailure::Other, TlsCause::Io(Arc::new(e))))?;
                let (sent, back) = socket.send(out).await;
                out = back;
                out.clear();
                sent.map_err(|e| (TlsFailure::Closed, TlsCause::Write(Arc::new(e))))?;
                continue;
            }
            let n = std::future::poll_fn(|cx| socket.poll_recv(cx, raw))
                .await
                .map_err(|e| (TlsFailure::Closed, TlsCause::Read(Arc::new(e))))?;
            if n == 0 {
                return Err((TlsFailure::Closed, TlsCause::ClosedByNode));
            }
            self.absorb(raw)?;
        }
        // The client's last flight (Finished) may still be queued.
        if self.conn.wants_write() {
            self.write_tls(&mut out)
                .map_err(|e| (TlsFailure::Other, TlsCause::Io(Arc::new(e))))?;
            let (sent, _) = socket.send(out).await;
            sent.map_err(|e| (TlsFailure::Closed, TlsCause::Write(Arc::new(e))))?;
        }
        Ok(())
    }

    /// Feeds rustls the ciphertext of `raw` (consumed) and processes it. The rustls error's
    /// kind is returned with its text.
    fn absorb(&mut self, raw: &mut BytesMut) -> Result<(), (TlsFailure, TlsCause)> {
        while !raw.is_empty() {
            let mut rest: &[u8] = raw;
            let n = self
                .conn
                .read_tls(&mut rest)
                .map_err(|e| (TlsFailure::Other, TlsCause::Io(Arc::new(e))))?;
            raw.advance(n);
            self.conn
                .process_new_packets()
                .map_err(|e| (TlsFailure::of(&e), TlsCause::Rustls(Arc::new(e))))?;
            if n == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Decrypts the ciphertext of `raw` (consumed) and appends its plaintext to `plain`.
    /// `Ok(false)` once the node has closed the TLS session (close_notify).
    pub(crate) fn decrypt(
        &mut self,
        raw: &mut BytesMut,
        plain: &mut BytesMut,
    ) -> Result<bool, (TlsFailure, TlsCause)> {
        loop {
            // rustls holds a bounded amount of plaintext: take it out before feeding more.
            let mut rest: &[u8] = raw;
            let n = if rest.is_empty() {
                0
            } else {
                self.conn
                    .read_tls(&mut rest)
                    .map_err(|e| (TlsFailure::Other, TlsCause::Io(Arc::new(e))))?
            };
            raw.advance(n);
            self.conn
                .process_new_packets()
                .map_err(|e| (TlsFailure::of(&e), TlsCause::Rustls(Arc::new(e))))?;
            loop {
                match self.conn.reader().read(&mut self.scratch) {
                    Ok(0) => return Ok(false),
                    Ok(got) => plain.extend_from_slice(&self.scratch[..got]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The node closed the TCP connection without close_notify: the reader
                    // sees the socket's end next.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err((TlsFailure::Other, TlsCause::Io(Arc::new(e)))),
                }
            }
            if raw.is_empty() {
                return Ok(true);
            }
        }
    }

    /// Encrypts `plain` into records appended to `cipher`.
    pub(crate) fn encrypt(&mut self, plain: &[u8], cipher: &mut BytesMut) -> io::Result<()> {
        self.conn.writer().write_all(plain)?;
        self.write_tls(cipher)
    }

    /// Moves everything rustls has queued to send into `out`.
    fn write_tls(&mut self, out: &mut BytesMut) -> io::Result<()> {
        let mut w = out.writer();
        while self.conn.wants_write() {
            self.conn.write_tls(&mut w)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_records_are_told_from_cql_frames() {
        // A TLS alert and a ServerHello, then a CQL v4 response header and an empty answer.
        assert!(looks_like_tls(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(looks_like_tls(&[0x16, 0x03, 0x01]));
        assert!(!looks_like_tls(&[0x84, 0x00, 0x00, 0x00, 0x06]));
        assert!(!looks_like_tls(&[0x15]));
    }

    #[test]
    fn missing_and_empty_ca_files_are_typed_errors() {
        let missing = TlsConfig::from_ca_file("/nonexistent/ca.pem");
        assert!(
            matches!(missing, Err(TlsConfigError::Pem { .. })),
            "{missing:?}"
        );
        let dir = std::env::temp_dir().join(format!("doppio-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, b"not a certificate\n").expect("write");
        let none = TlsConfig::from_ca_file(&empty);
        assert!(
            matches!(none, Err(TlsConfigError::NoCertificate { .. })),
            "{none:?}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
