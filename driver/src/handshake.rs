//! The CQL handshake on a fresh connection: OPTIONS/SUPPORTED, STARTUP (with lz4 when both
//! sides support it), and authentication when the node asks for it.

use std::time::Duration;

use doppio_proto::compression::Compression;
use doppio_proto::frame::Flags;
use doppio_proto::request::{AuthResponse, Options, Startup};
use doppio_proto::response::Response;

use crate::auth::AuthenticatorFactory;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::{reply, unexpected};

/// The CQL version doppio asks for in STARTUP.
pub const CQL_VERSION: &str = "3.0.0";

/// What the handshake needs.
#[derive(Clone, Default)]
pub struct HandshakeConfig {
    /// Ask for lz4 when the node supports it.
    pub compression: bool,
    /// Credentials, for nodes that require authentication (each handshake makes its own
    /// authenticator).
    pub authenticator: Option<AuthenticatorFactory>,
    /// Timeout of each handshake step (default: the connection's request timeout).
    pub timeout: Option<Duration>,
}

impl std::fmt::Debug for HandshakeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandshakeConfig")
            .field("compression", &self.compression)
            .field("authenticator", &self.authenticator.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// What was agreed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// Body compression in force.
    pub compression: Option<Compression>,
    /// The node's SUPPORTED options.
    pub supported: Vec<(String, Vec<String>)>,
    /// Whether the node asked for authentication.
    pub authenticated: bool,
}

/// Runs the handshake on `conn`. On success the connection is ready for queries.
pub async fn handshake(conn: &Connection, config: &HandshakeConfig) -> Result<Negotiated, Error> {
    let node = conn.addr();
    let map = |e| Error::from_request(node, e);
    let answer = conn
        .send(Flags::NONE, &Options, config.timeout)
        .await
        .map_err(map)?;
    let supported = match reply(node, answer.response)? {
        Response::Supported(s) => s,
        other => return Err(unexpected(node, "OPTIONS", &other)),
    };
    let values = |key: &str| {
        supported
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    };
    let versions = values("PROTOCOL_VERSIONS");
    if !versions.is_empty() && !versions.iter().any(|v| v.starts_with("4/")) {
        return Err(Error::Handshake {
            node,
            reason: format!("the node does not speak protocol v4 (it offers {versions:?})"),
        });
    }
    let compression = (config.compression && values("COMPRESSION").iter().any(|c| c == "lz4"))
        .then_some(Compression::Lz4);
    let mut options = vec![("CQL_VERSION", CQL_VERSION)];
    if let Some(c) = compression {
        options.push(("COMPRESSION", c.name()));
    }
    // STARTUP goes out uncompressed; its answer may already be compressed.
    conn.accept_compression(compression);
    let answer = conn
        .send(Flags::NONE, &Startup { options: &options }, config.timeout)
        .await
        .map_err(map)?;
    // Everything after STARTUP may be compressed.
    conn.set_compression(compression);
    let mut authenticated = false;
    match reply(node, answer.response)? {
        Response::Ready => {}
        Response::Authenticate(class) => {
            authenticated = true;
            authenticate(conn, config, &class).await?;
        }
        other => return Err(unexpected(node, "STARTUP", &other)),
    }
    Ok(Negotiated {
        compression,
        supported,
        authenticated,
    })
}

async fn authenticate(
    conn: &Connection,
    config: &HandshakeConfig,
    class: &str,
) -> Result<(), Error> {
    let node = conn.addr();
    let auth_err = |reason: String| Error::Authentication { node, reason };
    let Some(make) = &config.authenticator else {
        return Err(auth_err(format!(
            "the node requires authentication ({class}) but no credentials were configured"
        )));
    };
    let auth = make();
    let mut token = auth.initial_response(class).map_err(auth_err)?;
    // A SASL exchange is a few round trips; a bound stops a node that never finishes.
    for _ in 0..16 {
        let answer = conn
            .send(
                Flags::NONE,
                &AuthResponse {
                    token: Some(&token),
                },
                config.timeout,
            )
            .await
            .map_err(|e| Error::from_request(node, e))?;
        match answer.response {
            Response::AuthSuccess(_) => return Ok(()),
            Response::AuthChallenge(challenge) => {
                token = auth
                    .evaluate_challenge(challenge.as_deref())
                    .map_err(auth_err)?;
            }
            // The node refused the credentials: an authentication failure, not a request
            // error.
            Response::Error(error) => return Err(auth_err(error.to_string())),
            other => return Err(unexpected(node, "AUTH_RESPONSE", &other)),
        }
    }
    Err(auth_err(
        "the exchange did not finish after 16 rounds".into(),
    ))
}
