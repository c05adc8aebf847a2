//! The protocol versions doppio speaks, and what differs between them in messages.
//!
//! v4 and v5 share the 9-byte envelope header and most message bodies. v5 (spec section 9,
//! "Changes from v4") widens the QUERY, EXECUTE and BATCH flags from a `[byte]` to an
//! `[int]`, adds a flags `[int]` to PREPARE, a keyspace and a now-in-seconds to the
//! parameters, the result metadata id to PREPARED and EXECUTE, a reason map to the failure
//! errors, and wraps envelopes in segments ([`crate::segment`]) once STARTUP is done. Every
//! encoder and decoder that differs takes the version and branches here.
//!
//! One extension changes that layout within a version: ScyllaDB's `SCYLLA_USE_METADATA_ID`
//! ([`crate::scylla_extensions`]) gives v4 the result metadata ids of v5 (PREPARED's, EXECUTE's
//! and a Rows result's `Metadata_changed`). A connection turns it on at STARTUP, so the
//! header's version alone cannot say; the codecs that differ take [`MetadataIds`] beside the
//! version, and [`ProtocolVersion::has_metadata_ids`] decides.

use crate::error::{ProtoError, Result};

/// A native protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ProtocolVersion {
    /// Protocol v4 (Cassandra 2.2+, ScyllaDB): bare frames.
    #[default]
    V4 = 4,
    /// Protocol v5 (Cassandra 4.0+): envelopes inside checksummed segments.
    V5 = 5,
}

impl ProtocolVersion {
    /// Every version doppio speaks, newest first (the order a client offers them in).
    pub const ALL: [ProtocolVersion; 2] = [ProtocolVersion::V5, ProtocolVersion::V4];

    /// The version number (the low 7 bits of the header's first byte).
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The version with this number, or [`ProtoError::UnsupportedVersion`].
    pub fn from_number(n: u8) -> Result<Self> {
        match n {
            4 => Ok(ProtocolVersion::V4),
            5 => Ok(ProtocolVersion::V5),
            other => Err(ProtoError::UnsupportedVersion(other)),
        }
    }

    /// Whether envelopes travel inside v5 segments once the connection is ready.
    pub const fn has_segments(self) -> bool {
        matches!(self, ProtocolVersion::V5)
    }

    /// Whether the QUERY, EXECUTE, BATCH and PREPARE flags are an `[int]` (v5) rather than
    /// a `[byte]` (PREPARE: absent).
    pub const fn has_int_flags(self) -> bool {
        matches!(self, ProtocolVersion::V5)
    }

    /// Whether messages carry the fields v5 added: the result metadata id (PREPARED,
    /// EXECUTE), the keyspace and now-in-seconds parameters, reason maps in failures and
    /// CAS contentions in write timeouts.
    pub const fn has_v5_fields(self) -> bool {
        matches!(self, ProtocolVersion::V5)
    }

    /// Whether PREPARED and EXECUTE carry a result metadata id, and a Rows result may say
    /// `Metadata_changed` with a new one: always in v5; in v4 only on a connection that
    /// turned on ScyllaDB's extension (`ids`).
    pub const fn has_metadata_ids(self, ids: MetadataIds) -> bool {
        self.has_v5_fields() || matches!(ids, MetadataIds::Negotiated)
    }
}

/// Whether a connection turned on ScyllaDB's `SCYLLA_USE_METADATA_ID` at STARTUP, which gives
/// v4 messages v5's result metadata ids (a v5 connection has them either way): what the
/// codecs of PREPARED, EXECUTE and Rows take beside the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MetadataIds {
    /// As the version lays messages out (Cassandra; a ScyllaDB connection without the
    /// extension).
    #[default]
    ByVersion,
    /// The extension is on: v4 messages carry the ids as v5's do.
    Negotiated,
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}", self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_others_are_refused() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::from_number(v.number()).unwrap(), v);
        }
        for n in [0, 1, 2, 3, 6, 0x44, 0x7f] {
            assert_eq!(
                ProtocolVersion::from_number(n),
                Err(ProtoError::UnsupportedVersion(n))
            );
        }
        assert_eq!(ProtocolVersion::V5.to_string(), "v5");
        assert!(ProtocolVersion::V5 > ProtocolVersion::V4);
    }

    #[test]
    fn metadata_ids_travel_in_v5_and_in_v4_only_when_negotiated() {
        use MetadataIds::{ByVersion, Negotiated};
        assert!(!ProtocolVersion::V4.has_metadata_ids(ByVersion));
        assert!(ProtocolVersion::V4.has_metadata_ids(Negotiated));
        assert!(ProtocolVersion::V5.has_metadata_ids(ByVersion));
        assert!(ProtocolVersion::V5.has_metadata_ids(Negotiated));
        assert_eq!(MetadataIds::default(), ByVersion);
    }
}
