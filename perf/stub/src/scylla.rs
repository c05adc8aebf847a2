//! ScyllaDB's shards, emulated: which emulated shard a connection belongs to, what SUPPORTED
//! then says, and the counters of where requests landed.
//!
//! ScyllaDB runs one shard per core. With [`ScyllaShards`] configured, the stub behaves as
//! a node of `shards` shards towards drivers: connections on its shard-aware port belong to
//! shard `peer_port % shards` (the driver chose that source port), connections on the plain
//! port to the shard with the fewest connections at that moment (as ScyllaDB balances
//! them), or to the one shard a test pinned them to (`StubHandle::pin_plain_port`: a
//! driver's connection then lands on a shard it did not aim at); SUPPORTED carries the `SCYLLA_*` options with the connection's shard; each
//! EXECUTE's token (Murmur3 of its first bound value, the partition key of every statement
//! the stub prepares then) is checked against the shard that owns it, and requests that
//! arrive at another shard are counted as wrong-shard arrivals.
//!
//! The stub's executors are not its emulated shards: any executor may serve a connection of
//! any emulated shard. Counters are atomics written once per connection (open, close) and
//! once per read batch (each connection sums its requests in plain cells first), never per
//! request; none of this runs unless the emulation is on.

use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::sync::atomic::{AtomicU64, Ordering};

use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::sharding::{Sharder, ShardingInfo};

/// Where the emulated node's shard-aware port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardAwarePort {
    /// No shard-aware port: SUPPORTED names none (drivers use the plain port).
    None,
    /// Listen on this address (port 0: any free port) and advertise it.
    Listen(SocketAddr),
    /// Advertise this port without listening on it (a port drivers cannot reach: tests
    /// of their fallback to the plain port).
    Unreachable(u16),
}

/// The emulation of a ScyllaDB node's shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScyllaShards {
    /// Shards of the emulated node.
    pub shards: NonZeroU16,
    /// `SCYLLA_SHARDING_IGNORE_MSB` (ScyllaDB's default is 12).
    pub ignore_msb: u8,
    /// The shard-aware port.
    pub shard_aware_port: ShardAwarePort,
    /// ScyllaDB's other extensions the node offers in SUPPORTED (a connection uses those
    /// its client turns on in STARTUP).
    pub extensions: Extensions,
}

/// What a ScyllaDB node offers besides its shards, with ScyllaDB's values: the LWT mark
/// (bit 31 of the prepared metadata flags), the rate-limit error (code 0xF000), tablets
/// routing v1 and v2 (whose payloads a stub sends only when it lays out tablets,
/// [`crate::StubConfig::tablets`]; a client offered both turns on v2 alone, and each of its
/// EXECUTEs then ends with a tablet version block: set `tablets_routing_v2` off in
/// [`ScyllaShards::extensions`], or `--scylla-without tablets-v2`, to offer v1 alone) and result
/// metadata ids in v4 (`SCYLLA_USE_METADATA_ID`:
/// a connection that turns it on gets PREPARED's id, sends it with each EXECUTE, and is
/// answered `METADATA_CHANGED` with the columns and their id when the one it sent is stale,
/// as after an `ALTER TABLE`: see [`crate::answer`]).
pub const SCYLLA_EXTENSIONS: Extensions = Extensions {
    lwt_mask: Some(0x8000_0000),
    rate_limit_code: Some(0xF000),
    tablets_routing_v1: true,
    tablets_routing_v2: true,
    use_metadata_id: true,
};

impl ScyllaShards {
    /// `shards` shards, ScyllaDB's default ignore-msb (12), a shard-aware port on any free
    /// port of `ip`.
    pub fn new(shards: NonZeroU16, ip: std::net::IpAddr) -> Self {
        Self {
            shards,
            ignore_msb: 12,
            shard_aware_port: ShardAwarePort::Listen(SocketAddr::new(ip, 0)),
            extensions: SCYLLA_EXTENSIONS,
        }
    }

    /// The token-to-shard function.
    pub fn sharder(&self) -> Sharder {
        Sharder {
            nr_shards: self.shards,
            ignore_msb: self.ignore_msb,
        }
    }
}

/// Where requests landed, per emulated shard (a snapshot of the counters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardCounts {
    /// EXECUTEs with a bound partition key that arrived at each shard.
    pub requests: Vec<u64>,
    /// Of those, the ones that arrived at a shard that does not own their token.
    pub wrong_shard: u64,
    /// Connections each shard has accepted so far.
    pub connections: Vec<u64>,
}

/// The emulation's shared state: its configuration and counters.
#[derive(Debug)]
pub(crate) struct Emulation {
    pub(crate) config: ScyllaShards,
    /// The port SUPPORTED advertises as shard-aware (once known).
    aware_port: AtomicU64,
    open: Vec<AtomicU64>,
    accepted: Vec<AtomicU64>,
    requests: Vec<AtomicU64>,
    wrong: AtomicU64,
    /// The shard plain-port connections are pinned to, plus one (0: none, the least loaded).
    pinned: AtomicU64,
}

impl Emulation {
    pub(crate) fn new(config: ScyllaShards) -> Self {
        let n = usize::from(config.shards.get());
        let zeros = || (0..n).map(|_| AtomicU64::new(0)).collect();
        let aware = match config.shard_aware_port {
            ShardAwarePort::Unreachable(p) => u64::from(p),
            ShardAwarePort::Listen(a) => u64::from(a.port()),
            ShardAwarePort::None => 0,
        };
        Self {
            config,
            aware_port: AtomicU64::new(aware),
            open: zeros(),
            accepted: zeros(),
            requests: zeros(),
            wrong: AtomicU64::new(0),
            pinned: AtomicU64::new(0),
        }
    }

    /// Sends the plain-port connections accepted from now on to `shard` (`None`: to the
    /// least loaded again). Fails with the number of shards if there is no such shard.
    pub(crate) fn pin_plain_port(&self, shard: Option<u16>) -> Result<(), u16> {
        let shards = self.config.shards.get();
        match shard {
            Some(s) if s >= shards => Err(shards),
            _ => {
                let stored = shard.map_or(0, |s| u64::from(s) + 1);
                self.pinned.store(stored, Ordering::Relaxed);
                Ok(())
            }
        }
    }

    /// Records the port the shard-aware listener was bound to (asked for port 0).
    pub(crate) fn set_aware_port(&self, port: u16) {
        self.aware_port.store(u64::from(port), Ordering::Relaxed);
    }

    /// The advertised shard-aware port (0: none).
    pub(crate) fn aware_port(&self) -> u16 {
        self.aware_port.load(Ordering::Relaxed) as u16
    }

    /// The shard of a new connection: `peer_port % shards` on the shard-aware port, else
    /// the pinned shard if one is, else the shard with the fewest open connections (the
    /// lowest on a tie).
    pub(crate) fn assign(&self, shard_aware: bool, peer_port: u16) -> u16 {
        let pinned = self.pinned.load(Ordering::Relaxed);
        let shard = if shard_aware {
            self.config.sharder().shard_of_source_port(peer_port)
        } else if pinned > 0 {
            (pinned - 1) as u16
        } else {
            let fewest = self
                .open
                .iter()
                .enumerate()
                .min_by_key(|(_, n)| n.load(Ordering::Relaxed))
                .map_or(0, |(i, _)| i);
            fewest as u16
        };
        let at = usize::from(shard);
        self.open[at].fetch_add(1, Ordering::Relaxed);
        self.accepted[at].fetch_add(1, Ordering::Relaxed);
        shard
    }

    /// A connection of `shard` closed.
    pub(crate) fn release(&self, shard: u16) {
        self.open[usize::from(shard)].fetch_sub(1, Ordering::Relaxed);
    }

    /// SUPPORTED's ScyllaDB options for a connection of `shard`: its sharding and the other
    /// extensions offered.
    pub(crate) fn supported(&self, shard: u16) -> Vec<(String, Vec<String>)> {
        let port = self.aware_port.load(Ordering::Relaxed) as u16;
        let mut options = ShardingInfo {
            shard,
            sharder: self.config.sharder(),
            shard_aware_port: (port != 0).then_some(port),
        }
        .to_supported();
        options.extend(self.config.extensions.to_supported());
        options
    }

    /// Adds one read batch's counts of a connection of `shard`.
    pub(crate) fn count(&self, shard: u16, requests: u64, wrong: u64) {
        if requests > 0 {
            self.requests[usize::from(shard)].fetch_add(requests, Ordering::Relaxed);
        }
        if wrong > 0 {
            self.wrong.fetch_add(wrong, Ordering::Relaxed);
        }
    }

    /// The counters now.
    pub(crate) fn counts(&self) -> ShardCounts {
        let load = |v: &[AtomicU64]| v.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        ShardCounts {
            requests: load(&self.requests),
            wrong_shard: self.wrong.load(Ordering::Relaxed),
            connections: load(&self.accepted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_assigned_as_scylla_does() {
        let config = ScyllaShards::new(NonZeroU16::new(4).expect("4"), [127, 0, 0, 1].into());
        let e = Emulation::new(config);
        // The shard-aware port: by source port.
        assert_eq!(e.assign(true, 50001), 1);
        assert_eq!(e.assign(true, 50003), 3);
        // The plain port: the least loaded shards, in order.
        assert_eq!(e.assign(false, 1234), 0);
        assert_eq!(e.assign(false, 1234), 2);
        e.release(3);
        assert_eq!(e.assign(false, 1234), 3);
        assert_eq!(e.counts().connections, vec![1, 1, 1, 2]);
        let supported = e.supported(2);
        let info = ShardingInfo::from_supported(&supported)
            .expect("readable")
            .expect("sharded");
        assert_eq!(info.shard, 2);
        assert_eq!(info.sharder, config.sharder());
        assert_eq!(
            Extensions::from_supported(&supported),
            Ok(SCYLLA_EXTENSIONS)
        );
        e.count(2, 10, 3);
        assert_eq!(e.counts().requests, vec![0, 0, 10, 0]);
        assert_eq!(e.counts().wrong_shard, 3);
    }

    #[test]
    fn plain_port_connections_go_to_the_pinned_shard_until_unpinned() {
        let config = ScyllaShards::new(NonZeroU16::new(4).expect("4"), [127, 0, 0, 1].into());
        let e = Emulation::new(config);
        assert_eq!(e.pin_plain_port(Some(4)), Err(4), "no shard 4 of 4");
        assert_eq!(e.pin_plain_port(Some(2)), Ok(()));
        // Pinned: every plain-port connection, however loaded shard 2 is.
        for _ in 0..3 {
            assert_eq!(e.assign(false, 1234), 2);
        }
        // The shard-aware port still maps by source port.
        assert_eq!(e.assign(true, 50001), 1);
        assert_eq!(e.pin_plain_port(None), Ok(()));
        // The least loaded again: 0, then 3.
        assert_eq!(e.assign(false, 1234), 0);
        assert_eq!(e.assign(false, 1234), 3);
        assert_eq!(e.counts().connections, vec![1, 1, 3, 1]);
    }
}
