//! ScyllaDB's shards: what a node says about them in SUPPORTED, which shard owns a token,
//! and which source ports reach a given shard through the shard-aware port.
//!
//! ScyllaDB runs one shard per core and advertises, on every connection's SUPPORTED:
//! `SCYLLA_SHARD` (the shard this connection landed on), `SCYLLA_NR_SHARDS`,
//! `SCYLLA_SHARDING_ALGORITHM` (`biased-token-round-robin`), `SCYLLA_SHARDING_IGNORE_MSB`
//! and, when it listens on one, `SCYLLA_SHARD_AWARE_PORT`. On that port a connection from
//! source port `p` lands on shard `p % nr_shards`.
//!
//! Invariants: parsing never panics (a bad value is a [`ShardingError`] naming the option,
//! and the driver then treats the node as unsharded); [`Sharder::shard_of`] is a few integer
//! operations, allocation-free, and agrees with ScyllaDB's `dht::sharder` (checked against
//! scylla-rust-driver's on a million random tokens in `bench/tests/it/sharding.rs`).

use std::num::NonZeroU16;

use crate::murmur3::Token;

/// The only sharding algorithm ScyllaDB has (and the one [`Sharder`] computes).
pub const ALGORITHM: &str = "biased-token-round-robin";

/// The source ports a driver draws from to reach a shard through the shard-aware port: the
/// ephemeral range, as ScyllaDB's drivers use.
pub const SOURCE_PORTS: std::ops::RangeInclusive<u16> = 49152..=65535;

/// Why a node's sharding options could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardingError {
    /// Some `SCYLLA_` options are there, but not this one.
    #[error("SUPPORTED has ScyllaDB sharding options but not {option}")]
    Missing {
        /// The option.
        option: &'static str,
    },
    /// An option's value is not a number in its range.
    #[error("SUPPORTED's {option} is {value:?}, not a number in its range")]
    BadNumber {
        /// The option.
        option: &'static str,
        /// What the node sent.
        value: String,
    },
    /// A sharding algorithm doppio does not know.
    #[error("unknown sharding algorithm {0:?} (doppio knows {ALGORITHM})")]
    UnknownAlgorithm(String),
    /// `SCYLLA_SHARD` is not below `SCYLLA_NR_SHARDS`.
    #[error("SCYLLA_SHARD {shard} is not below SCYLLA_NR_SHARDS {nr_shards}")]
    ShardOutOfRange {
        /// The connection's shard.
        shard: u16,
        /// The shard count.
        nr_shards: u16,
    },
}

/// Which ScyllaDB shard owns a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sharder {
    /// Shards of the node.
    pub nr_shards: NonZeroU16,
    /// Most significant bits of the biased token ignored (`SCYLLA_SHARDING_IGNORE_MSB`).
    pub ignore_msb: u8,
}

impl Sharder {
    /// The shard that owns `token`: the biased token (`token + 2^63` as unsigned) shifted
    /// left by `ignore_msb`, scaled to `[0, nr_shards)` by a 128-bit multiply.
    #[inline]
    pub fn shard_of(&self, token: Token) -> u16 {
        let mut biased = (token as u64).wrapping_add(1u64 << 63);
        // A shift of 64 or more leaves nothing (ScyllaDB sends 12; the parser bounds it).
        biased = biased.checked_shl(u32::from(self.ignore_msb)).unwrap_or(0);
        ((u128::from(biased) * u128::from(self.nr_shards.get())) >> 64) as u16
    }

    /// The shard a connection from `source_port` lands on through the shard-aware port.
    pub fn shard_of_source_port(&self, source_port: u16) -> u16 {
        source_port % self.nr_shards.get()
    }

    /// The source ports in [`SOURCE_PORTS`] that reach `shard`, starting at the first one at
    /// or after `start` (a random start spreads the cores and clients that race for ports)
    /// and wrapping around once.
    pub fn source_ports(&self, shard: u16, start: u16) -> impl Iterator<Item = u16> {
        let n = u32::from(self.nr_shards.get());
        let (lo, hi) = (
            u32::from(*SOURCE_PORTS.start()),
            u32::from(*SOURCE_PORTS.end()),
        );
        // The first port of the range on `shard`.
        let first = lo + (n + u32::from(shard) % n - lo % n) % n;
        let count = if first > hi { 0 } else { (hi - first) / n + 1 };
        let from = u32::from(start)
            .clamp(lo, hi)
            .saturating_sub(first)
            .div_ceil(n);
        (0..count).map(move |i| (first + ((from + i) % count.max(1)) * n) as u16)
    }
}

/// What a ScyllaDB node said about its shards on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardingInfo {
    /// The shard this connection landed on.
    pub shard: u16,
    /// The node's shard count and token-to-shard function.
    pub sharder: Sharder,
    /// The shard-aware port, if the node has one.
    pub shard_aware_port: Option<u16>,
}

impl ShardingInfo {
    /// Reads the sharding options of a SUPPORTED answer: `Ok(None)` when there are none (a
    /// Cassandra node), an error when they are there but unusable.
    pub fn from_supported(
        supported: &[(String, Vec<String>)],
    ) -> Result<Option<Self>, ShardingError> {
        let first = |key: &str| {
            supported
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.first())
                .map(String::as_str)
        };
        let keys = [
            "SCYLLA_SHARD",
            "SCYLLA_NR_SHARDS",
            "SCYLLA_SHARDING_ALGORITHM",
        ];
        if keys.iter().all(|k| first(k).is_none()) {
            return Ok(None);
        }
        let required =
            |option: &'static str| first(option).ok_or(ShardingError::Missing { option });
        fn number<T: std::str::FromStr>(
            option: &'static str,
            value: &str,
        ) -> Result<T, ShardingError> {
            value.trim().parse().map_err(|_| ShardingError::BadNumber {
                option,
                value: value.to_owned(),
            })
        }
        let algorithm = required("SCYLLA_SHARDING_ALGORITHM")?;
        if algorithm != ALGORITHM {
            return Err(ShardingError::UnknownAlgorithm(algorithm.to_owned()));
        }
        let shard: u16 = number("SCYLLA_SHARD", required("SCYLLA_SHARD")?)?;
        let nr: u16 = number("SCYLLA_NR_SHARDS", required("SCYLLA_NR_SHARDS")?)?;
        let nr_shards = NonZeroU16::new(nr).ok_or_else(|| ShardingError::BadNumber {
            option: "SCYLLA_NR_SHARDS",
            value: "0".into(),
        })?;
        let msb = required("SCYLLA_SHARDING_IGNORE_MSB")?;
        let ignore_msb: u8 = number("SCYLLA_SHARDING_IGNORE_MSB", msb)?;
        if ignore_msb >= 64 {
            return Err(ShardingError::BadNumber {
                option: "SCYLLA_SHARDING_IGNORE_MSB",
                value: msb.to_owned(),
            });
        }
        if shard >= nr {
            return Err(ShardingError::ShardOutOfRange {
                shard,
                nr_shards: nr,
            });
        }
        let shard_aware_port = first("SCYLLA_SHARD_AWARE_PORT")
            .map(|p| number::<u16>("SCYLLA_SHARD_AWARE_PORT", p))
            .transpose()?
            .filter(|&p| p != 0);
        Ok(Some(Self {
            shard,
            sharder: Sharder {
                nr_shards,
                ignore_msb,
            },
            shard_aware_port,
        }))
    }

    /// The options a node with this sharding sends in SUPPORTED (for the stub and tests).
    pub fn to_supported(&self) -> Vec<(String, Vec<String>)> {
        let mut options = vec![
            ("SCYLLA_SHARD".to_owned(), vec![self.shard.to_string()]),
            (
                "SCYLLA_NR_SHARDS".to_owned(),
                vec![self.sharder.nr_shards.to_string()],
            ),
            (
                "SCYLLA_SHARDING_ALGORITHM".to_owned(),
                vec![ALGORITHM.to_owned()],
            ),
            (
                "SCYLLA_SHARDING_IGNORE_MSB".to_owned(),
                vec![self.sharder.ignore_msb.to_string()],
            ),
        ];
        if let Some(port) = self.shard_aware_port {
            options.push(("SCYLLA_SHARD_AWARE_PORT".to_owned(), vec![port.to_string()]));
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sharder(nr: u16, msb: u8) -> Sharder {
        Sharder {
            nr_shards: NonZeroU16::new(nr).expect("nonzero"),
            ignore_msb: msb,
        }
    }

    fn options(pairs: &[(&str, &str)]) -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), vec![(*v).to_owned()]))
            .collect()
    }

    #[test]
    fn scylla_options_are_read_and_written_back() {
        let info = ShardingInfo {
            shard: 3,
            sharder: sharder(8, 12),
            shard_aware_port: Some(19042),
        };
        let mut supported = info.to_supported();
        supported.push(("CQL_VERSION".into(), vec!["3.3.1".into()]));
        assert_eq!(ShardingInfo::from_supported(&supported), Ok(Some(info)));
        // Cassandra: none of them.
        let cassandra = options(&[("CQL_VERSION", "3.4.7"), ("COMPRESSION", "lz4")]);
        assert_eq!(ShardingInfo::from_supported(&cassandra), Ok(None));
        // No shard-aware port: sharded all the same.
        let no_port = ShardingInfo {
            shard_aware_port: None,
            ..info
        };
        assert_eq!(
            ShardingInfo::from_supported(&no_port.to_supported()),
            Ok(Some(no_port))
        );
    }

    #[test]
    fn bad_sharding_options_are_typed_errors_naming_the_option() {
        let base = [
            ("SCYLLA_SHARD", "1"),
            ("SCYLLA_NR_SHARDS", "4"),
            ("SCYLLA_SHARDING_ALGORITHM", ALGORITHM),
            ("SCYLLA_SHARDING_IGNORE_MSB", "12"),
            ("SCYLLA_SHARD_AWARE_PORT", "19042"),
        ];
        let with = |key: &str, value: &str| {
            let pairs: Vec<(&str, &str)> = base
                .iter()
                .map(|&(k, v)| (k, if k == key { value } else { v }))
                .collect();
            ShardingInfo::from_supported(&options(&pairs))
        };
        assert!(matches!(
            with("SCYLLA_NR_SHARDS", "four"),
            Err(ShardingError::BadNumber {
                option: "SCYLLA_NR_SHARDS",
                ..
            })
        ));
        assert!(matches!(
            with("SCYLLA_NR_SHARDS", "0"),
            Err(ShardingError::BadNumber {
                option: "SCYLLA_NR_SHARDS",
                ..
            })
        ));
        assert!(matches!(
            with("SCYLLA_SHARDING_IGNORE_MSB", "64"),
            Err(ShardingError::BadNumber {
                option: "SCYLLA_SHARDING_IGNORE_MSB",
                ..
            })
        ));
        assert!(matches!(
            with("SCYLLA_SHARD_AWARE_PORT", "70000"),
            Err(ShardingError::BadNumber {
                option: "SCYLLA_SHARD_AWARE_PORT",
                ..
            })
        ));
        assert_eq!(
            with("SCYLLA_SHARD", "4"),
            Err(ShardingError::ShardOutOfRange {
                shard: 4,
                nr_shards: 4
            })
        );
        assert_eq!(
            with("SCYLLA_SHARDING_ALGORITHM", "random"),
            Err(ShardingError::UnknownAlgorithm("random".into()))
        );
        let partial = options(&[("SCYLLA_SHARD", "1"), ("SCYLLA_NR_SHARDS", "4")]);
        assert_eq!(
            ShardingInfo::from_supported(&partial),
            Err(ShardingError::Missing {
                option: "SCYLLA_SHARDING_ALGORITHM"
            })
        );
        let text = with("SCYLLA_NR_SHARDS", "x").expect_err("bad").to_string();
        assert!(text.contains("SCYLLA_NR_SHARDS"), "{text}");
    }

    #[test]
    fn tokens_map_to_shards_as_scylla_computes() {
        // Without ignored bits, shards split the biased ring evenly.
        let s = sharder(4, 0);
        assert_eq!(s.shard_of(i64::MIN), 0);
        assert_eq!(s.shard_of(-1), 1);
        assert_eq!(s.shard_of(0), 2);
        assert_eq!(s.shard_of(i64::MAX), 3);
        // ignore_msb 12: the ring is cut into 2^12 pieces, each split over the shards.
        let s = sharder(4, 12);
        let piece = 1i64 << (64 - 12);
        assert_eq!(s.shard_of(i64::MIN), 0);
        assert_eq!(s.shard_of(i64::MIN + piece / 4), 1);
        assert_eq!(s.shard_of(i64::MIN + piece - 1), 3);
        assert_eq!(s.shard_of(i64::MIN + piece), 0);
        // One shard owns everything.
        assert_eq!(sharder(1, 12).shard_of(12345), 0);
    }

    #[test]
    fn source_ports_reach_their_shard_and_cover_the_range() {
        let s = sharder(7, 12);
        for shard in 0..7 {
            let ports: Vec<u16> = s.source_ports(shard, 60000).collect();
            assert!(ports.iter().all(|&p| s.shard_of_source_port(p) == shard));
            assert!(ports.iter().all(|p| SOURCE_PORTS.contains(p)));
            assert!(ports[0] >= 60000 && ports[0] < 60007, "{}", ports[0]);
            let mut sorted = ports.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), ports.len(), "each port once");
            let expected = SOURCE_PORTS.filter(|p| p % 7 == shard).count();
            assert_eq!(ports.len(), expected);
        }
        // A start past the range's end wraps to its beginning.
        let s = sharder(4, 0);
        let first = s.source_ports(1, 65535).next();
        assert_eq!(first, Some(49153), "the first port of shard 1");
    }
}
