//! The protocol versions doppio speaks, and what differs between them in messages.
//!
//! v4 and v5 share the 9-byte envelope header and most message bodies. v5 (spec section 9,
//! "Changes from v4") widens the QUERY, EXECUTE and BATCH flags from a `[byte]` to an
//! `[int]`, adds a flags `[int]` to PREPARE, a keyspace and a now-in-seconds to the
//! parameters, the result metadata id to PREPARED and EXECUTE, a reason map to the failure
//! errors, and wraps envelopes in segments ([`crate::segment`]) once STARTUP is done. Every
//! encoder and decoder that differs takes the version and branches here.

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
}
