//! `--tls`: the test CA (made once per state folder) and each node's key and certificate,
//! signed by it, with the node's IP address as subject alternative name, made with openssl in
//! `$STATE/tls/`. Cassandra 5.0 reads them as PEM (PEMBasedSslContextFactory): one file
//! holding the unencrypted PKCS#8 key and the chain. Nothing is downloaded.

use std::path::Path;
use std::process::Stdio;

use super::config::write;
use super::error::{Error, Result};
use super::layout::Cluster;
use super::programs::{apt_install, log, Tools};

/// Whether a file exists and is not empty (`[ -s ]`).
fn non_empty(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.len() > 0)
}

/// Runs openssl with `args`, its output discarded; `what` names the step in the error.
fn openssl(tools: &Tools, args: &[&str], what: &str) -> Result<()> {
    let ok = tools
        .command("openssl")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(Error::Failed(format!("openssl: cannot {what}")))
    }
}

impl Cluster {
    /// Makes the CA if there is none, and node `i`'s certificate if it has none.
    pub(crate) fn make_tls_material(&self, i: u32, tools: &Tools) -> Result<()> {
        let tls = self.state.join("tls");
        let addr = self.addr(i);
        if tools.find("openssl").is_none() {
            apt_install(tools, &["openssl"])?;
        }
        std::fs::create_dir_all(&tls).map_err(Error::io(format!("create {}", tls.display())))?;
        let path = |name: &str| tls.join(name).display().to_string();
        let (ca_pem, ca_key) = (path("ca.pem"), path("ca.key"));
        if !non_empty(&tls.join("ca.pem")) || !non_empty(&tls.join("ca.key")) {
            let subject = format!("/CN=doppio test CA {}", self.name());
            openssl(
                tools,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-keyout",
                    &ca_key,
                    "-out",
                    &ca_pem,
                    "-days",
                    "825",
                    "-subj",
                    &subject,
                ],
                "make the CA",
            )?;
            log(&format!("made the test CA {ca_pem}"));
        }
        let bundle = tls.join(format!("node{i}.bundle.pem"));
        if non_empty(&bundle) {
            return Ok(());
        }
        let (key, csr, ext, pem) = (
            path(&format!("node{i}.key")),
            path(&format!("node{i}.csr")),
            path(&format!("node{i}.ext")),
            path(&format!("node{i}.pem")),
        );
        let subject = format!("/CN={addr}");
        openssl(
            tools,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
                "-subj",
                &subject,
            ],
            &format!("make node {i}'s key"),
        )?;
        write(
            Path::new(&ext),
            &format!("subjectAltName=IP:{addr}\nextendedKeyUsage=serverAuth\n"),
        )?;
        openssl(
            tools,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca_pem,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-days",
                "825",
                "-extfile",
                &ext,
                "-out",
                &pem,
            ],
            &format!("sign node {i}'s certificate"),
        )?;
        let read = |f: &str| std::fs::read_to_string(f).map_err(Error::io(format!("read {f}")));
        write(&bundle, &(read(&key)? + &read(&pem)?))?;
        log(&format!(
            "made node {i}'s certificate for IP {addr} ({pem})"
        ));
        Ok(())
    }
}
