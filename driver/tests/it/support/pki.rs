//! Certificates made at test time (rcgen) and a small blocking TLS server (rustls on a std
//! thread) for the TLS tests: a test CA, node certificates that are expired or carry the
//! wrong name, client certificates; files in a directory of the test's own.

#![allow(dead_code)] // each TLS test binary uses some of these

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A test CA with its files in a directory of its own (removed when dropped).
pub(crate) struct Pki {
    dir: PathBuf,
    ca: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, in memory and as PEM files.
pub(crate) struct Leaf {
    pub(crate) chain: Vec<CertificateDer<'static>>,
    pub(crate) key: PrivateKeyDer<'static>,
    pub(crate) cert_file: PathBuf,
    pub(crate) key_file: PathBuf,
}

/// When a certificate is valid.
#[derive(Clone, Copy)]
pub(crate) enum Validity {
    /// From 2020 to 4000.
    Current,
    /// 2020 to 2021: expired.
    Expired,
}

impl Pki {
    /// A new CA named `name` (its files under the temporary directory).
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "doppio-tls-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("create the test PKI directory");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("doppio test CA {name}"));
        let key = KeyPair::generate().expect("CA key");
        let ca = CertifiedIssuer::self_signed(params, key).expect("self-signed CA");
        std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write ca.pem");
        Self { dir, ca }
    }

    /// The CA's PEM file.
    pub(crate) fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A certificate signed by this CA for `names` (IP addresses become IP SANs), written
    /// to `<file>.pem` and `<file>.key`.
    pub(crate) fn leaf(&self, file: &str, names: &[&str], validity: Validity) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, format!("doppio test {file}"));
        match validity {
            Validity::Current => {
                params.not_before = date_time_ymd(2020, 1, 1);
                params.not_after = date_time_ymd(4000, 1, 1);
            }
            Validity::Expired => {
                params.not_before = date_time_ymd(2020, 1, 1);
                params.not_after = date_time_ymd(2021, 1, 1);
            }
        }
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &self.ca).expect("sign the leaf");
        let cert_file = self.dir.join(format!("{file}.pem"));
        let key_file = self.dir.join(format!("{file}.key"));
        std::fs::write(&cert_file, cert.pem()).expect("write the certificate");
        std::fs::write(&key_file, key.serialize_pem()).expect("write the key");
        Leaf {
            chain: vec![cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            cert_file,
            key_file,
        }
    }

    /// The directory of the files.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the TLS server saw of one connection.
#[derive(Debug)]
pub(crate) struct Seen {
    /// Whether the handshake completed.
    pub(crate) handshake_done: bool,
    /// Whether the client showed a certificate.
    pub(crate) client_cert: bool,
}

/// A blocking TLS server on 127.0.0.1 (a thread of its own) with `leaf` as its
/// certificate, requiring a client certificate of `client_ca` if given. It serves up to
/// `connections` connections (handshake only: it speaks no CQL), reports each on the
/// returned channel, and ends.
pub(crate) fn tls_server(
    leaf: &Leaf,
    client_ca: Option<&Pki>,
    connections: usize,
) -> (SocketAddr, mpsc::Receiver<Seen>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("protocol versions");
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca.ca.der().clone()).expect("client CA");
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .expect("client verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = Arc::new(
        builder
            .with_single_cert(leaf.chain.clone(), leaf.key.clone_key())
            .expect("server certificate"),
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..connections {
            let Ok((mut tcp, _)) = listener.accept() else {
                return;
            };
            // Bounded: a client that stops talking ends the connection within this.
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
            let mut conn = rustls::ServerConnection::new(config.clone()).expect("server conn");
            let mut done = true;
            while conn.is_handshaking() {
                if conn.complete_io(&mut tcp).is_err() {
                    done = false;
                    break;
                }
            }
            // Send whatever is queued (the session tickets, or the alert of a refusal).
            let _ = conn.write_tls(&mut tcp);
            let client_cert = conn.peer_certificates().is_some_and(|c| !c.is_empty());
            let _ = tx.send(Seen {
                handshake_done: done,
                client_cert,
            });
            // Hold the connection until the client closes it (or the read timeout): closing
            // with its bytes unread would reset it before the client reads the alert.
            let mut sink = [0u8; 1024];
            while matches!(tcp.read(&mut sink), Ok(n) if n > 0) {}
            let _ = tcp.flush();
        }
    });
    (addr, rx)
}

/// A TCP listener on 127.0.0.1 that accepts connections and never sends a byte (a node that
/// never answers the TLS handshake). Its thread holds each connection for up to a minute.
pub(crate) fn silent_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for _ in 0..4 {
            match listener.accept() {
                Ok((tcp, _)) => held.push(tcp),
                Err(_) => return,
            }
        }
        std::thread::sleep(Duration::from_secs(60));
    });
    addr
}
