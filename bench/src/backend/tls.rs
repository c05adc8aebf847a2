//! TLS to the nodes: doppio's TLS configuration from the bench's [`TlsOptions`], which the
//! doppio backend uses and whose rustls configuration the scylla backend takes too, so
//! that both verify alike with the same provider.

use doppio_driver::config::TlsConfig;

use super::settings::TlsOptions;

/// doppio's TLS configuration from the bench's options (the scylla backend takes its rustls
/// configuration too, so that both verify alike with the same provider).
pub(crate) fn tls_config(
    t: &TlsOptions,
) -> Result<TlsConfig, doppio_driver::error::TlsConfigError> {
    let mut tls = TlsConfig::from_ca_file(&t.ca)?;
    if let Some((cert, key)) = &t.client_cert {
        tls = tls.with_client_cert(cert, key)?;
    }
    if let Some(name) = &t.server_name {
        tls = tls.with_server_name(name)?;
    }
    Ok(tls)
}
