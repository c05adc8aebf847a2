//! ScyllaDB's protocol extensions beyond its shards ([`crate::sharding`]): the LWT mark on
//! prepared statements, the rate-limit error, tablets routing v1 and v2 and result metadata
//! ids in v4. What a node offers in SUPPORTED, what a client turns on in STARTUP, and the
//! wire forms of each.
//!
//! A node lists an extension in SUPPORTED, with its arguments as `NAME=VALUE` values of the
//! key; a client that wants it sends the key back in STARTUP (with the arguments the
//! extension needs), and the node uses it on that connection only:
//! - `SCYLLA_LWT_ADD_METADATA_MARK` (argument `LWT_OPTIMIZATION_META_BIT_MASK`, a 32-bit
//!   mask): a prepared statement that is a lightweight transaction has that bit set in its
//!   bind-marker metadata flags, so that a driver sends it to the primary replica first.
//! - `SCYLLA_RATE_LIMIT_ERROR` (argument `ERROR_CODE`, a 32-bit code chosen by the node): an
//!   operation over a partition's rate limit fails with that code, whose body adds
//!   `<op_type><rejected_by_coordinator>` (two bytes) after the message. Never to be retried.
//! - `TABLETS_ROUTING_V1`: a RESULT to a request that reached a node or shard that does not
//!   own its tablet carries the tablet's range and replicas in its custom payload, under
//!   `tablets-routing-v1`: the serialized tuple `(bigint, bigint, list<tuple<uuid, int>>)`,
//!   the range `(first, last]` and each replica's host id and shard.
//! - `TABLETS_ROUTING_V2_EXPERIMENTAL` (tablets routing v2, which subsumes v1: a client
//!   offered both turns on v2 alone): every EXECUTE ends with one more byte after its
//!   parameters, a block of the client's version of the tablet
//!   ([`crate::tablet_version`]); a RESULT carries the tablet under `tablets-routing-v2`
//!   when the request reached a node or shard without it or when the block disagrees with
//!   the node's version: v1's tuple with the version as a fourth element, `bigint`. The
//!   replicas come in the node's order, the leader of a strongly consistent table's
//!   tablet first.
//! - `SCYLLA_USE_METADATA_ID` (no argument): a v4 connection carries the result metadata ids
//!   v5 defines, laid out as v5 lays them: PREPARED has `<result_metadata_id>` after its id,
//!   EXECUTE sends the one the client holds after the prepared id, and a Rows result whose
//!   columns no longer have the id the EXECUTE sent says `Metadata_changed` (flag `0x0008`)
//!   with `<new_metadata_id>` after the paging state and the columns in full. A client can
//!   then skip result metadata safely: a changed table is detected, not decoded with stale
//!   columns. The codecs take it as [`crate::version::MetadataIds`]
//!   ([`Extensions::metadata_ids`]).
//!
//! Invariants: reading never panics and checks every length against the bytes left; a node
//! that offers an extension with an unreadable argument gets an [`ExtensionError`] naming it
//! (and the driver then leaves that extension off).

use bytes::{BufMut, BytesMut};

use crate::error::{ProtoError, Result};
use crate::murmur3::Token;
use crate::tablet_version::TabletVersion;
use crate::version::MetadataIds;
use crate::wire::{self, Reader};

/// SUPPORTED and STARTUP key of the LWT mark.
pub const LWT_ADD_METADATA_MARK: &str = "SCYLLA_LWT_ADD_METADATA_MARK";
/// The LWT mark's argument: the bit mask of the prepared metadata flags.
pub const LWT_MASK_ARGUMENT: &str = "LWT_OPTIMIZATION_META_BIT_MASK";
/// SUPPORTED and STARTUP key of the rate-limit error.
pub const RATE_LIMIT_ERROR: &str = "SCYLLA_RATE_LIMIT_ERROR";
/// The rate-limit error's argument: the error code the node uses for it.
pub const RATE_LIMIT_CODE_ARGUMENT: &str = "ERROR_CODE";
/// SUPPORTED and STARTUP key of tablets routing v1.
pub const TABLETS_ROUTING_V1: &str = "TABLETS_ROUTING_V1";
/// The custom payload key of a RESULT's tablet routing information.
pub const TABLETS_PAYLOAD_KEY: &str = "tablets-routing-v1";
/// SUPPORTED and STARTUP key of tablets routing v2 (experimental in ScyllaDB: the key says
/// so).
pub const TABLETS_ROUTING_V2: &str = "TABLETS_ROUTING_V2_EXPERIMENTAL";
/// The custom payload key of a RESULT's tablet routing information under v2.
pub const TABLETS_V2_PAYLOAD_KEY: &str = "tablets-routing-v2";
/// SUPPORTED and STARTUP key of result metadata ids in v4.
pub const USE_METADATA_ID: &str = "SCYLLA_USE_METADATA_ID";

/// Why an extension a node offered cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtensionError {
    /// The extension is offered without an argument it needs.
    #[error("SUPPORTED offers {extension} without its {argument}")]
    MissingArgument {
        /// The extension's key.
        extension: &'static str,
        /// The argument's name.
        argument: &'static str,
    },
    /// An argument's value is not a number of its type.
    #[error("SUPPORTED's {extension} has {argument}={value:?}, not a {expected}")]
    BadArgument {
        /// The extension's key.
        extension: &'static str,
        /// The argument's name.
        argument: &'static str,
        /// What the node sent.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// The extensions (besides sharding) a node offers, or a connection uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extensions {
    /// The LWT mark's bit in prepared metadata flags.
    pub lwt_mask: Option<u32>,
    /// The error code of the rate-limit error.
    pub rate_limit_code: Option<i32>,
    /// Tablets routing v1.
    pub tablets_routing_v1: bool,
    /// Tablets routing v2.
    pub tablets_routing_v2: bool,
    /// Result metadata ids in v4 (`SCYLLA_USE_METADATA_ID`).
    pub use_metadata_id: bool,
}

/// The value of `NAME=VALUE` among an option's values.
fn argument<'a>(values: &'a [String], name: &str) -> Option<&'a str> {
    values.iter().find_map(|v| {
        v.split_once('=')
            .filter(|(n, _)| n.trim() == name)
            .map(|(_, value)| value.trim())
    })
}

impl Extensions {
    /// What a node's SUPPORTED offers (a Cassandra node: nothing).
    pub fn from_supported(
        options: &[(String, Vec<String>)],
    ) -> std::result::Result<Self, ExtensionError> {
        let values = |key: &str| options.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let mut out = Self {
            tablets_routing_v1: values(TABLETS_ROUTING_V1).is_some(),
            tablets_routing_v2: values(TABLETS_ROUTING_V2).is_some(),
            use_metadata_id: values(USE_METADATA_ID).is_some(),
            ..Self::default()
        };
        if let Some(v) = values(LWT_ADD_METADATA_MARK) {
            let text = argument(v, LWT_MASK_ARGUMENT).ok_or(ExtensionError::MissingArgument {
                extension: LWT_ADD_METADATA_MARK,
                argument: LWT_MASK_ARGUMENT,
            })?;
            let mask = text
                .parse::<u32>()
                .map_err(|_| ExtensionError::BadArgument {
                    extension: LWT_ADD_METADATA_MARK,
                    argument: LWT_MASK_ARGUMENT,
                    value: text.to_owned(),
                    expected: "32-bit unsigned number",
                })?;
            out.lwt_mask = Some(mask);
        }
        if let Some(v) = values(RATE_LIMIT_ERROR) {
            let text =
                argument(v, RATE_LIMIT_CODE_ARGUMENT).ok_or(ExtensionError::MissingArgument {
                    extension: RATE_LIMIT_ERROR,
                    argument: RATE_LIMIT_CODE_ARGUMENT,
                })?;
            let code = text
                .parse::<i32>()
                .map_err(|_| ExtensionError::BadArgument {
                    extension: RATE_LIMIT_ERROR,
                    argument: RATE_LIMIT_CODE_ARGUMENT,
                    value: text.to_owned(),
                    expected: "32-bit signed number",
                })?;
            out.rate_limit_code = Some(code);
        }
        Ok(out)
    }

    /// The SUPPORTED options that offer these extensions (the stub's side).
    pub fn to_supported(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        if let Some(mask) = self.lwt_mask {
            out.push((
                LWT_ADD_METADATA_MARK.to_owned(),
                vec![format!("{LWT_MASK_ARGUMENT}={mask}")],
            ));
        }
        if let Some(code) = self.rate_limit_code {
            out.push((
                RATE_LIMIT_ERROR.to_owned(),
                vec![format!("{RATE_LIMIT_CODE_ARGUMENT}={code}")],
            ));
        }
        if self.tablets_routing_v1 {
            out.push((TABLETS_ROUTING_V1.to_owned(), Vec::new()));
        }
        if self.tablets_routing_v2 {
            out.push((TABLETS_ROUTING_V2.to_owned(), Vec::new()));
        }
        if self.use_metadata_id {
            out.push((USE_METADATA_ID.to_owned(), Vec::new()));
        }
        out
    }

    /// The STARTUP options that turn these extensions on for a connection (the LWT mark
    /// repeats its mask, as the node expects; tablets routing v2 alone when both versions
    /// are offered: it subsumes v1).
    pub fn startup_options(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(mask) = self.lwt_mask {
            out.push((LWT_ADD_METADATA_MARK, format!("{LWT_MASK_ARGUMENT}={mask}")));
        }
        if self.rate_limit_code.is_some() {
            out.push((RATE_LIMIT_ERROR, String::new()));
        }
        if self.tablets_routing_v2 {
            out.push((TABLETS_ROUTING_V2, String::new()));
        } else if self.tablets_routing_v1 {
            out.push((TABLETS_ROUTING_V1, String::new()));
        }
        if self.use_metadata_id {
            out.push((USE_METADATA_ID, String::new()));
        }
        out
    }

    /// Of what a node offers (`self`), what a client turned on in its STARTUP `options`.
    pub fn accepted_in_startup(&self, options: &[(&str, &str)]) -> Self {
        let asked = |key: &str| options.iter().any(|(k, _)| *k == key);
        Self {
            lwt_mask: self.lwt_mask.filter(|_| asked(LWT_ADD_METADATA_MARK)),
            rate_limit_code: self.rate_limit_code.filter(|_| asked(RATE_LIMIT_ERROR)),
            tablets_routing_v1: self.tablets_routing_v1 && asked(TABLETS_ROUTING_V1),
            tablets_routing_v2: self.tablets_routing_v2 && asked(TABLETS_ROUTING_V2),
            use_metadata_id: self.use_metadata_id && asked(USE_METADATA_ID),
        }
    }

    /// How a connection that uses these extensions lays out result metadata ids (what the
    /// codecs of PREPARED, EXECUTE and Rows take beside the version).
    pub const fn metadata_ids(&self) -> MetadataIds {
        if self.use_metadata_id {
            MetadataIds::Negotiated
        } else {
            MetadataIds::ByVersion
        }
    }

    /// Whether a connection with these extensions learns tablets from its answers (v1 or
    /// v2).
    pub fn tablets_routing(&self) -> bool {
        self.tablets_routing_v1 || self.tablets_routing_v2
    }

    /// Whether a prepared statement with these metadata flags is a lightweight transaction:
    /// every bit of the mask set (always false without the LWT mark, or with a zero mask).
    pub fn is_lwt(&self, prepared_flags: i32) -> bool {
        // The flags are the wire's 32 bits; the mask is read as unsigned, so compare bits.
        let flags = u32::from_be_bytes(prepared_flags.to_be_bytes());
        self.lwt_mask
            .is_some_and(|mask| mask != 0 && flags & mask == mask)
    }
}

/// The operation a rate limit refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitedOp {
    /// A read (`op_type` 0).
    Read,
    /// A write (`op_type` 1).
    Write,
}

/// The fields of ScyllaDB's rate-limit error, after the error's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitError {
    /// What was refused.
    pub op: RateLimitedOp,
    /// Refused by the coordinator (true) or by the replicas (false).
    pub rejected_by_coordinator: bool,
}

impl RateLimitError {
    /// Reads `<op_type><rejected_by_coordinator>` (the error's fields after its message).
    pub fn decode(fields: &[u8]) -> Result<Self> {
        let mut r = Reader::new(fields);
        let op = match r.read_byte("rate limit op_type")? {
            0 => RateLimitedOp::Read,
            1 => RateLimitedOp::Write,
            other => {
                return Err(ProtoError::InvalidValue {
                    what: "rate limit op_type",
                    detail: format!("{other} is neither 0 (read) nor 1 (write)"),
                })
            }
        };
        let rejected_by_coordinator = r.read_byte("rate limit rejected_by_coordinator")? != 0;
        r.expect_end("rate limit error")?;
        Ok(Self {
            op,
            rejected_by_coordinator,
        })
    }

    /// The two bytes of the fields.
    pub fn encode(&self) -> [u8; 2] {
        let op = match self.op {
            RateLimitedOp::Read => 0,
            RateLimitedOp::Write => 1,
        };
        [op, u8::from(self.rejected_by_coordinator)]
    }
}

/// One replica of a tablet: the node's host id and the shard on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabletReplica {
    /// The node's host id (`system.local.host_id`), as 16 bytes.
    pub host_id: [u8; 16],
    /// The shard on that node.
    pub shard: i32,
}

/// A tablet's routing information: its token range `(first_token, last_token]`, its
/// replicas and, under tablets routing v2, its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletRouting {
    /// The range's exclusive start.
    pub first_token: i64,
    /// The range's inclusive end.
    pub last_token: i64,
    /// The replicas, in the node's order.
    pub replicas: Vec<TabletReplica>,
    /// The tablet's version (`tablets-routing-v2`; `None` from a v1 payload).
    pub version: Option<TabletVersion>,
}

/// Reads a tuple element `[bytes]` that must be present and exactly `len` bytes long.
fn fixed_element<'a>(r: &mut Reader<'a>, what: &'static str, len: usize) -> Result<&'a [u8]> {
    match r.read_bytes(what)? {
        Some(b) if b.len() == len => Ok(b),
        Some(b) => Err(ProtoError::InvalidValue {
            what,
            detail: format!("{} bytes, expected {len}", b.len()),
        }),
        None => Err(ProtoError::InvalidValue {
            what,
            detail: "null".to_owned(),
        }),
    }
}

/// Reads a present tuple element `[bytes]` as a reader of its own.
fn element<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<Reader<'a>> {
    r.read_bytes(what)?
        .map(Reader::new)
        .ok_or_else(|| ProtoError::InvalidValue {
            what,
            detail: "null".to_owned(),
        })
}

impl TabletRouting {
    /// Reads the `tablets-routing-v1` payload value.
    pub fn decode(payload: &[u8]) -> Result<Self> {
        Self::decode_as(payload, false)
    }

    /// Reads the `tablets-routing-v2` payload value (v1's with the version after).
    pub fn decode_v2(payload: &[u8]) -> Result<Self> {
        Self::decode_as(payload, true)
    }

    /// Reads a payload of v1, or of v2 when `versioned`.
    fn decode_as(payload: &[u8], versioned: bool) -> Result<Self> {
        let long = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            i64::from_be_bytes(a)
        };
        let mut r = Reader::new(payload);
        let first = fixed_element(&mut r, "tablet first token", 8)?;
        let last = fixed_element(&mut r, "tablet last token", 8)?;
        let mut list = element(&mut r, "tablet replicas")?;
        let version = if versioned {
            let v = fixed_element(&mut r, "tablet version", 8)?;
            Some(TabletVersion::from_wire(long(v)))
        } else {
            None
        };
        r.expect_end("tablet routing")?;
        // Each replica is at least a 4-byte length and a 28-byte tuple.
        let n = crate::metadata::read_count(&mut list, "tablet replica count", 32)?;
        let mut replicas = Vec::with_capacity(n);
        for _ in 0..n {
            let mut tuple = element(&mut list, "tablet replica")?;
            let host = fixed_element(&mut tuple, "tablet replica host id", 16)?;
            let shard = fixed_element(&mut tuple, "tablet replica shard", 4)?;
            tuple.expect_end("tablet replica")?;
            let mut host_id = [0u8; 16];
            host_id.copy_from_slice(host);
            replicas.push(TabletReplica {
                host_id,
                shard: i32::from_be_bytes([shard[0], shard[1], shard[2], shard[3]]),
            });
        }
        list.expect_end("tablet replicas")?;
        let (first_token, last_token) = (long(first), long(last));
        if first_token >= last_token {
            return Err(ProtoError::InvalidValue {
                what: "tablet token range",
                detail: format!("({first_token}, {last_token}] is empty"),
            });
        }
        Ok(Self {
            first_token,
            last_token,
            replicas,
            version,
        })
    }

    /// Writes the payload value: `tablets-routing-v2`'s when it has a version, v1's
    /// otherwise.
    pub fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        let mut list = BytesMut::new();
        let count = i32::try_from(self.replicas.len()).map_err(|_| ProtoError::InvalidValue {
            what: "tablet replica count",
            detail: format!("{} replicas", self.replicas.len()),
        })?;
        list.put_i32(count);
        for replica in &self.replicas {
            // A tuple of two elements: [bytes] of 16 and [bytes] of 4.
            list.put_i32(4 + 16 + 4 + 4);
            list.put_i32(16);
            list.put_slice(&replica.host_id);
            list.put_i32(4);
            list.put_i32(replica.shard);
        }
        buf.put_i32(8);
        buf.put_i64(self.first_token);
        buf.put_i32(8);
        buf.put_i64(self.last_token);
        wire::put_bytes(buf, Some(&list), "tablet replicas")?;
        if let Some(v) = self.version {
            buf.put_i32(8);
            buf.put_i64(v.to_wire());
        }
        Ok(())
    }

    /// Whether `token` is in the range `(first_token, last_token]`.
    pub fn contains(&self, token: Token) -> bool {
        self.first_token < token && token <= self.last_token
    }

    /// Whether the two ranges share a token (a newer tablet replaces every cached one it
    /// overlaps).
    pub fn overlaps(&self, other: &TabletRouting) -> bool {
        self.first_token < other.last_token && other.first_token < self.last_token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_scylla_node_s_offer_is_read_and_round_trips() {
        let offered = options(&[
            ("COMPRESSION", &["lz4"]),
            (
                LWT_ADD_METADATA_MARK,
                &["LWT_OPTIMIZATION_META_BIT_MASK=2147483648"],
            ),
            (RATE_LIMIT_ERROR, &["ERROR_CODE=61440"]),
            (TABLETS_ROUTING_V1, &[]),
            (USE_METADATA_ID, &[]),
        ]);
        let ext = Extensions::from_supported(&offered).unwrap();
        assert_eq!(
            ext,
            Extensions {
                lwt_mask: Some(0x8000_0000),
                rate_limit_code: Some(61440),
                tablets_routing_v1: true,
                tablets_routing_v2: false,
                use_metadata_id: true,
            }
        );
        assert_eq!(ext.metadata_ids(), MetadataIds::Negotiated);
        assert_eq!(Extensions::from_supported(&ext.to_supported()), Ok(ext));
        // A Cassandra node offers none.
        let cassandra = options(&[
            ("COMPRESSION", &["lz4", "snappy"]),
            ("CQL_VERSION", &["3.4.7"]),
        ]);
        assert_eq!(
            Extensions::from_supported(&cassandra),
            Ok(Extensions::default())
        );
        assert!(Extensions::default().startup_options().is_empty());
        assert_eq!(Extensions::default().metadata_ids(), MetadataIds::ByVersion);
    }

    #[test]
    fn startup_turns_on_what_the_client_asked_for_only() {
        let offered = Extensions {
            lwt_mask: Some(4),
            rate_limit_code: Some(0x7777),
            tablets_routing_v1: true,
            tablets_routing_v2: false,
            use_metadata_id: true,
        };
        let startup = offered.startup_options();
        assert_eq!(
            startup,
            vec![
                (
                    LWT_ADD_METADATA_MARK,
                    "LWT_OPTIMIZATION_META_BIT_MASK=4".to_owned()
                ),
                (RATE_LIMIT_ERROR, String::new()),
                (TABLETS_ROUTING_V1, String::new()),
                (USE_METADATA_ID, String::new()),
            ]
        );
        let pairs: Vec<(&str, &str)> = startup.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(offered.accepted_in_startup(&pairs), offered);
        let only_tablets = [(TABLETS_ROUTING_V1, ""), ("CQL_VERSION", "3.0.0")];
        assert_eq!(
            offered.accepted_in_startup(&only_tablets),
            Extensions {
                tablets_routing_v1: true,
                ..Extensions::default()
            }
        );
        // Metadata ids only when the client sent the key back (the node then lays v4
        // messages out with them).
        let only_ids = [(USE_METADATA_ID, "")];
        let on = offered.accepted_in_startup(&only_ids);
        assert_eq!(
            on,
            Extensions {
                use_metadata_id: true,
                ..Extensions::default()
            }
        );
        assert_eq!(on.metadata_ids(), MetadataIds::Negotiated);
        let not_offered = Extensions::default().accepted_in_startup(&only_ids);
        assert_eq!(not_offered.metadata_ids(), MetadataIds::ByVersion);
    }

    #[test]
    fn unreadable_arguments_name_the_extension() {
        let e = Extensions::from_supported(&options(&[(LWT_ADD_METADATA_MARK, &[])]));
        assert_eq!(
            e,
            Err(ExtensionError::MissingArgument {
                extension: LWT_ADD_METADATA_MARK,
                argument: LWT_MASK_ARGUMENT
            })
        );
        let e = Extensions::from_supported(&options(&[(RATE_LIMIT_ERROR, &["ERROR_CODE=x"])]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "SUPPORTED's SCYLLA_RATE_LIMIT_ERROR has ERROR_CODE=\"x\", not a 32-bit signed number"
        );
    }

    #[test]
    fn the_lwt_mark_is_a_bit_of_the_prepared_flags() {
        let ext = Extensions {
            lwt_mask: Some(0x8000_0000),
            ..Extensions::default()
        };
        assert!(ext.is_lwt(i32::MIN));
        assert!(ext.is_lwt(-1));
        assert!(!ext.is_lwt(0x0001));
        assert!(!Extensions::default().is_lwt(-1));
        let zero = Extensions {
            lwt_mask: Some(0),
            ..Extensions::default()
        };
        assert!(!zero.is_lwt(-1));
    }

    #[test]
    fn rate_limit_fields_round_trip_and_bad_ones_are_errors() {
        for op in [RateLimitedOp::Read, RateLimitedOp::Write] {
            for rejected_by_coordinator in [false, true] {
                let e = RateLimitError {
                    op,
                    rejected_by_coordinator,
                };
                assert_eq!(RateLimitError::decode(&e.encode()), Ok(e));
            }
        }
        assert!(RateLimitError::decode(&[2, 0]).is_err());
        assert!(RateLimitError::decode(&[0]).is_err());
        assert!(RateLimitError::decode(&[0, 1, 9]).is_err());
    }

    #[test]
    fn tablet_routing_round_trips_and_knows_its_range() {
        let tablet = TabletRouting {
            first_token: -100,
            last_token: 100,
            replicas: vec![
                TabletReplica {
                    host_id: [1; 16],
                    shard: 3,
                },
                TabletReplica {
                    host_id: [2; 16],
                    shard: 0,
                },
            ],
            version: None,
        };
        let mut buf = BytesMut::new();
        tablet.encode(&mut buf).unwrap();
        // Two 12-byte longs, the list's length, its count and two 32-byte replicas.
        assert_eq!(buf.len(), 12 + 12 + 4 + 4 + 2 * 32);
        assert_eq!(TabletRouting::decode(&buf), Ok(tablet.clone()));
        assert!(!tablet.contains(-100));
        assert!(tablet.contains(-99) && tablet.contains(100));
        assert!(!tablet.contains(101));
        let next = TabletRouting {
            first_token: 100,
            last_token: 200,
            replicas: Vec::new(),
            version: None,
        };
        assert!(!tablet.overlaps(&next) && !next.overlaps(&tablet));
        let inside = TabletRouting {
            first_token: 0,
            last_token: 50,
            replicas: Vec::new(),
            version: None,
        };
        assert!(tablet.overlaps(&inside) && inside.overlaps(&tablet));
    }

    #[test]
    fn every_truncation_and_lie_of_a_tablet_payload_is_an_error() {
        let tablet = TabletRouting {
            first_token: 1,
            last_token: 2,
            replicas: vec![TabletReplica {
                host_id: [7; 16],
                shard: 1,
            }],
            version: None,
        };
        let mut buf = BytesMut::new();
        tablet.encode(&mut buf).unwrap();
        for cut in 0..buf.len() {
            assert!(TabletRouting::decode(&buf[..cut]).is_err(), "cut at {cut}");
        }
        // A replica count far beyond the bytes: refused before anything is reserved.
        let mut lie = buf.to_vec();
        lie[28..32].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(TabletRouting::decode(&lie).is_err());
        // An empty range.
        let empty = TabletRouting {
            first_token: 5,
            last_token: 5,
            replicas: Vec::new(),
            version: None,
        };
        let mut buf = BytesMut::new();
        empty.encode(&mut buf).unwrap();
        assert!(TabletRouting::decode(&buf).is_err());
    }

    #[test]
    fn a_node_offering_both_tablet_versions_gets_v2_alone() {
        let offered = Extensions::from_supported(&options(&[
            (TABLETS_ROUTING_V1, &[]),
            (TABLETS_ROUTING_V2, &[]),
        ]))
        .unwrap();
        assert!(offered.tablets_routing_v1 && offered.tablets_routing_v2);
        assert_eq!(
            Extensions::from_supported(&offered.to_supported()),
            Ok(offered)
        );
        let startup = offered.startup_options();
        assert_eq!(startup, vec![(TABLETS_ROUTING_V2, String::new())]);
        let pairs: Vec<(&str, &str)> = startup.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let on = offered.accepted_in_startup(&pairs);
        assert!(on.tablets_routing_v2 && !on.tablets_routing_v1 && on.tablets_routing());
        // A node of v1 only: v1, as before.
        let v1 = Extensions {
            tablets_routing_v1: true,
            ..Extensions::default()
        };
        assert_eq!(
            v1.startup_options(),
            vec![(TABLETS_ROUTING_V1, String::new())]
        );
        assert!(!Extensions::default().tablets_routing());
    }

    #[test]
    fn a_v2_payload_carries_the_version_after_v1_s_tuple() {
        let tablet = TabletRouting {
            first_token: -100,
            last_token: 100,
            replicas: vec![TabletReplica {
                host_id: [3; 16],
                shard: 2,
            }],
            version: Some(TabletVersion(0xFEDC_BA98_7654_3210)),
        };
        let mut buf = BytesMut::new();
        tablet.encode(&mut buf).unwrap();
        let mut v1 = BytesMut::new();
        TabletRouting {
            version: None,
            ..tablet.clone()
        }
        .encode(&mut v1)
        .unwrap();
        // v1's bytes, then one more 8-byte element.
        assert_eq!(&buf[..v1.len()], &v1[..]);
        assert_eq!(buf.len(), v1.len() + 12);
        assert_eq!(TabletRouting::decode_v2(&buf), Ok(tablet.clone()));
        // Each reader refuses the other's form: v1 sees bytes left over, v2 a missing
        // element.
        assert!(TabletRouting::decode(&buf).is_err());
        assert!(TabletRouting::decode_v2(&v1).is_err());
        for cut in 0..buf.len() {
            assert!(
                TabletRouting::decode_v2(&buf[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        // A version of another length than 8.
        let mut odd = v1.to_vec();
        odd.extend_from_slice(&4i32.to_be_bytes());
        odd.extend_from_slice(&[0; 4]);
        assert!(TabletRouting::decode_v2(&odd).is_err());
    }
}
