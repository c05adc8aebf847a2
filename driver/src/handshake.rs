//! The CQL handshake on a fresh connection: OPTIONS/SUPPORTED, STARTUP (with lz4 when both
//! sides support it), and authentication when the node asks for it.
//!
//! The protocol version is chosen from SUPPORTED's `PROTOCOL_VERSIONS`: v5 when the node
//! offers it as a final version (`5/v5`, not a beta), v4 otherwise, or the one configured.
//! OPTIONS goes out in v4 (every node answers it); STARTUP goes out in the chosen version,
//! and in v5 everything after its answer travels in segments (spec section 2.3.1).
//!
//! A ScyllaDB node's sharding options (`SCYLLA_*` in SUPPORTED) are read into
//! [`ShardingInfo`] and kept on the connection; options that cannot be read leave the
//! connection unsharded (the error is in [`Negotiated::sharding`]), never fail it.
//!
//! Of ScyllaDB's other extensions, the LWT mark (`SCYLLA_LWT_ADD_METADATA_MARK`), the
//! rate-limit error (`SCYLLA_RATE_LIMIT_ERROR`), tablets routing
//! (`TABLETS_ROUTING_V1`: a misrouted request's answer says where its tablet is, see
//! `session::tablets`) and result metadata ids in v4 (`SCYLLA_USE_METADATA_ID`: PREPARED,
//! EXECUTE and Rows then carry them as in v5, see [`Connection::metadata_ids`]) are turned on
//! in STARTUP when the node offers them, and kept on the connection
//! ([`Connection::extensions`]); offers that cannot be read are left off, never fail the
//! connection.

use std::time::Duration;

use doppio_proto::compression::Compression;
use doppio_proto::frame::Flags;
use doppio_proto::request::{AuthResponse, Options, Startup};
use doppio_proto::response::Response;
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::segment::SegmentCompression;
use doppio_proto::ProtocolVersion;

use crate::auth::{AuthError, AuthenticatorFactory};
use crate::connection::{Connection, ConnectionError, RequestError, TlsCause, TlsFailure};
use crate::error::{Error, VersionError};
use crate::result::{reply, unexpected};
use crate::routing::sharding::{ShardingError, ShardingInfo};

/// The CQL version doppio asks for in STARTUP.
pub(crate) const CQL_VERSION: &str = "3.0.0";

/// What the handshake needs.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct HandshakeConfig {
    /// Ask for lz4 when the node supports it.
    pub compression: bool,
    /// Credentials, for nodes that require authentication (each handshake makes its own
    /// authenticator).
    pub authenticator: Option<AuthenticatorFactory>,
    /// Timeout of each handshake step (default: the connection's request timeout).
    pub timeout: Option<Duration>,
    /// The protocol version to speak; `None` negotiates (v5 when the node offers it, else
    /// v4). A version the node does not offer fails the handshake.
    pub protocol_version: Option<ProtocolVersion>,
}

impl std::fmt::Debug for HandshakeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandshakeConfig")
            .field("compression", &self.compression)
            .field("authenticator", &self.authenticator.is_some())
            .field("timeout", &self.timeout)
            .field("protocol_version", &self.protocol_version)
            .finish()
    }
}

/// What was agreed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// Body compression in force.
    pub compression: Option<Compression>,
    /// The node's SUPPORTED options.
    pub supported: Vec<(String, Vec<String>)>,
    /// Whether the node asked for authentication.
    pub authenticated: bool,
    /// The protocol version spoken.
    pub version: ProtocolVersion,
    /// What a ScyllaDB node said about its shards: `Ok(None)` on Cassandra; an error when
    /// the options were there but unusable (the connection is then used unsharded).
    pub sharding: Result<Option<ShardingInfo>, ShardingError>,
    /// ScyllaDB's extensions turned on in STARTUP (none on Cassandra).
    pub extensions: Extensions,
}

/// The version to speak, from the node's `PROTOCOL_VERSIONS` (e.g. `["3/v3", "4/v4",
/// "5/v5", "6/v6-beta"]`; empty when the node does not say, as ScyllaDB: then v4).
pub(crate) fn choose_version(
    offered: &[String],
    wanted: Option<ProtocolVersion>,
) -> Result<ProtocolVersion, VersionError> {
    let offers = |v: ProtocolVersion| {
        let exact = format!("{}/v{}", v.number(), v.number());
        offered.is_empty() && v == ProtocolVersion::V4 || offered.contains(&exact)
    };
    match wanted {
        Some(v) if offers(v) => Ok(v),
        Some(wanted) => Err(VersionError::NotOffered {
            wanted,
            offered: offered.to_vec(),
        }),
        None => ProtocolVersion::ALL
            .into_iter()
            .find(|v| offers(*v))
            .ok_or_else(|| VersionError::NoneSpoken {
                offered: offered.to_vec(),
            }),
    }
}

/// Runs the handshake on `conn`. On success the connection is ready for queries.
pub(crate) async fn handshake(
    conn: &Connection,
    config: &HandshakeConfig,
) -> Result<Negotiated, Error> {
    let node = conn.addr();
    let map = |e| Error::from_request(node, e);
    let answer = conn
        .send(Flags::NONE, &Options, config.timeout)
        .await
        .map_err(|e| match e {
            // The connection's first request, answered by a close or a reset without a
            // single byte: what a TLS-only port does to a plaintext client (Cassandra resets
            // at once). A CQL node that refuses a client answers with an ERROR instead.
            RequestError::Connection(ConnectionError::Broken { addr, cause })
                if conn.config().tls.is_none() && conn.stats().bytes_read == 0 =>
            {
                Error::ConnectionBroken(ConnectionError::Tls {
                    addr,
                    failure: TlsFailure::NodeRequiresTls,
                    cause: TlsCause::BrokenAtFirstRequest(cause),
                })
            }
            e => map(e),
        })?;
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
    let version = choose_version(values("PROTOCOL_VERSIONS"), config.protocol_version)
        .map_err(|error| Error::Handshake { node, error })?;
    let compression = (config.compression && values("COMPRESSION").iter().any(|c| c == "lz4"))
        .then_some(Compression::Lz4);
    let mut options = vec![("CQL_VERSION", CQL_VERSION)];
    if let Some(c) = compression {
        options.push(("COMPRESSION", c.name()));
    }
    // What the node offers of ScyllaDB's extensions (nothing on Cassandra). Tablets routing
    // v2, when offered, alone (it subsumes v1): the node then reads one more byte after
    // every EXECUTE's parameters, the tablet version block, which every EXECUTE on this
    // connection writes (its template's last byte, or `WithTabletBlock` on the general
    // path).
    let offered = Extensions::from_supported(&supported).unwrap_or_default();
    let extension_options = offered.startup_options();
    let asked: Vec<(&str, &str)> = extension_options
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .collect();
    // What the connection then uses: what it asked for (v2 alone of the two versions).
    let extensions = offered.accepted_in_startup(&asked);
    options.extend(asked);
    let sharding = ShardingInfo::from_supported(&supported);
    conn.set_sharding(sharding.clone().ok().flatten());
    conn.set_version(version);
    let v5 = version.has_segments();
    // STARTUP goes out uncompressed; in v4 its answer may already be compressed (v5 frames
    // come after it).
    if !v5 {
        conn.accept_compression(compression);
    }
    let answer = conn
        .send(Flags::NONE, &Startup { options: &options }, config.timeout)
        .await
        .map_err(map)?;
    if v5 {
        // READY or AUTHENTICATE was the last unframed message: segments from here on, lz4
        // on the segments if it was negotiated.
        if matches!(answer.response, Response::Ready | Response::Authenticate(_)) {
            conn.start_segments(match compression {
                Some(_) => SegmentCompression::Lz4,
                None => SegmentCompression::None,
            });
        }
    } else {
        // Everything after STARTUP may be compressed.
        conn.set_compression(compression);
    }
    let mut authenticated = false;
    match reply(node, answer.response)? {
        Response::Ready => conn.set_extensions(extensions),
        Response::Authenticate(class) => {
            authenticated = true;
            authenticate(conn, config, &class).await?;
            conn.set_extensions(extensions);
        }
        other => return Err(unexpected(node, "STARTUP", &other)),
    }
    Ok(Negotiated {
        compression,
        supported,
        authenticated,
        version,
        sharding,
        extensions,
    })
}

async fn authenticate(
    conn: &Connection,
    config: &HandshakeConfig,
    class: &str,
) -> Result<(), Error> {
    let node = conn.addr();
    let auth_err = |error| Error::Authentication { node, error };
    let Some(make) = &config.authenticator else {
        return Err(auth_err(AuthError::NotConfigured {
            server_authenticator: class.to_owned(),
        }));
    };
    let auth = make();
    let mut token = auth.initial_response(class).map_err(auth_err)?;
    // A SASL exchange is a few round trips; a bound stops a node that never finishes.
    const ROUNDS: usize = 16;
    for _ in 0..ROUNDS {
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
            Response::Error(error) => return Err(auth_err(AuthError::Refused(error))),
            other => return Err(unexpected(node, "AUTH_RESPONSE", &other)),
        }
    }
    Err(auth_err(AuthError::Unfinished { rounds: ROUNDS }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offers(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_newest_final_version_both_speak_is_chosen() {
        let cassandra5 = offers(&["3/v3", "4/v4", "5/v5", "6/v6-beta"]);
        let cassandra3 = offers(&["3/v3", "4/v4", "5/v5-beta"]);
        assert_eq!(choose_version(&cassandra5, None), Ok(ProtocolVersion::V5));
        assert_eq!(
            choose_version(&cassandra5, Some(ProtocolVersion::V4)),
            Ok(ProtocolVersion::V4)
        );
        // A beta v5 is not v5.
        assert_eq!(choose_version(&cassandra3, None), Ok(ProtocolVersion::V4));
        let refused = choose_version(&cassandra3, Some(ProtocolVersion::V5)).unwrap_err();
        assert!(
            matches!(&refused, VersionError::NotOffered { wanted, .. } if *wanted == ProtocolVersion::V5),
            "{refused:?}"
        );
        assert!(
            refused.to_string().contains("v5 was asked for"),
            "{refused}"
        );
        // A node that does not list its versions (ScyllaDB) speaks v4.
        assert_eq!(choose_version(&[], None), Ok(ProtocolVersion::V4));
        assert!(choose_version(&[], Some(ProtocolVersion::V5)).is_err());
        let none = choose_version(&offers(&["3/v3"]), None).unwrap_err();
        assert_eq!(
            none,
            VersionError::NoneSpoken {
                offered: offers(&["3/v3"])
            }
        );
        assert!(none.to_string().contains("neither"), "{none}");
    }
}
