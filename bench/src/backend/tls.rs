//! TLS to the nodes: doppio's TLS configuration from the bench's [`TlsOptions`], which the
//! doppio backend uses and whose rustls configuration the scylla backend takes too, so
//! that both verify alike with the same provider.

use doppio_driver::config::TlsConfig;
use doppio_driver::error::TlsConfigError;

use super::settings::TlsOptions;

/// `--tls` refused (a CA or client certificate file unreadable, a bad server name): doppio's
/// configuration error, printed with its causes.
#[derive(Debug, thiserror::Error)]
#[error("--tls: {}", doppio_driver::error::Report(.0))]
pub(crate) struct TlsError(#[source] TlsConfigError);

/// doppio's TLS configuration from the bench's options (the scylla backend takes its rustls
/// configuration too, so that both verify alike with the same provider).
pub(crate) fn tls_config(t: &TlsOptions) -> Result<TlsConfig, TlsError> {
    tls_config_of(t).map_err(TlsError)
}

fn tls_config_of(t: &TlsOptions) -> Result<TlsConfig, TlsConfigError> {
    let mut tls = TlsConfig::from_ca_file(&t.ca)?;
    if let Some((cert, key)) = &t.client_cert {
        tls = tls.with_client_cert(cert, key)?;
    }
    if let Some(name) = &t.server_name {
        tls = tls.with_server_name(name)?;
    }
    Ok(tls)
}
