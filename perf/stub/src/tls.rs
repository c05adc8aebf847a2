//! TLS for the stub (`--tls-cert FILE --tls-key FILE`): rustls with the ring provider, between
//! a connection's socket and its buffers, as in the driver (the stub cannot use the driver's
//! module: it depends on no driver code).
//!
//! [`server_config`] reads the certificate chain and key once; `ServerTls::handshake` runs
//! on each accepted connection before any CQL; then the reader decrypts what arrived into its
//! frame buffer and the flusher encrypts each batch of answers. What rustls allocates per
//! record (a `Vec` in its send queue and one per decrypted record's plaintext) is rustls's
//! own; a plaintext stub is unchanged.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use bytes::{Buf, BufMut, BytesMut};
use doppio_rt::TcpStream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection};

/// Why the TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A PEM file could not be read.
    #[error("cannot read {what} from {path}: {source}")]
    Pem {
        /// What the file should hold.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        source: rustls::pki_types::pem::Error,
    },
    /// rustls refused the certificate or key.
    #[error("certificate and key refused: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The server configuration of the PEM certificate chain `cert` and key `key`.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsSetupError> {
    let pem = |what, path: &Path| {
        let path = path.display().to_string();
        move |source| TlsSetupError::Pem { what, path, source }
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(pem("certificates", cert))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(pem("a private key", key))?;
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
    Ok(Arc::new(config))
}

/// One connection's TLS state.
pub(crate) struct ServerTls {
    conn: ServerConnection,
    /// Plaintext is copied out of rustls through this (once per connection).
    scratch: Box<[u8]>,
}

impl ServerTls {
    /// Runs the handshake on `socket`; ciphertext that came after it is left in `raw`.
    /// `None` when the client failed it or went away (the connection is then dropped).
    pub(crate) async fn handshake(
        socket: &TcpStream,
        config: &Arc<ServerConfig>,
        raw: &mut BytesMut,
    ) -> Option<Self> {
        let mut conn = ServerConnection::new(config.clone()).ok()?;
        conn.set_buffer_limit(None);
        let mut tls = Self {
            conn,
            scratch: vec![0; 16 * 1024].into_boxed_slice(),
        };
        let mut out = BytesMut::with_capacity(4096);
        loop {
            if tls.conn.wants_write() {
                tls.write_tls(&mut out).ok()?;
                let (sent, back) = socket.send(out).await;
                out = back;
                out.clear();
                sent.ok()?;
                continue;
            }
            if !tls.conn.is_handshaking() {
                return Some(tls);
            }
            let n = std::future::poll_fn(|cx| socket.poll_recv(cx, raw))
                .await
                .ok()?;
            if n == 0 {
                return None;
            }
            let processed = tls.absorb(raw);
            if processed.is_err() {
                // Send the alert that says why, then give up.
                let _ = tls.write_tls(&mut out);
                let _ = socket.send(out).await;
                return None;
            }
        }
    }

    fn absorb(&mut self, raw: &mut BytesMut) -> Result<(), rustls::Error> {
        while !raw.is_empty() {
            let mut rest: &[u8] = raw;
            let n = self
                .conn
                .read_tls(&mut rest)
                .map_err(|e| rustls::Error::General(e.to_string()))?;
            raw.advance(n);
            self.conn.process_new_packets()?;
            if n == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Decrypts `raw` (consumed) into `plain`; `Err` on a TLS error or the client's
    /// close_notify (either ends the connection).
    pub(crate) fn decrypt(&mut self, raw: &mut BytesMut, plain: &mut BytesMut) -> io::Result<()> {
        loop {
            let mut rest: &[u8] = raw;
            let n = if rest.is_empty() {
                0
            } else {
                self.conn.read_tls(&mut rest)?
            };
            raw.advance(n);
            self.conn.process_new_packets().map_err(io::Error::other)?;
            loop {
                match self.conn.reader().read(&mut self.scratch) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(got) => plain.extend_from_slice(&self.scratch[..got]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            if raw.is_empty() {
                return Ok(());
            }
        }
    }

    /// Encrypts `plain` into records appended to `cipher`.
    pub(crate) fn encrypt(&mut self, plain: &[u8], cipher: &mut BytesMut) -> io::Result<()> {
        self.conn.writer().write_all(plain)?;
        self.write_tls(cipher)
    }

    fn write_tls(&mut self, out: &mut BytesMut) -> io::Result<()> {
        let mut w = out.writer();
        while self.conn.wants_write() {
            self.conn.write_tls(&mut w)?;
        }
        Ok(())
    }
}
