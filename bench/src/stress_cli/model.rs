//! A cassandra-stress command line as doppio stress understands it: the typed model the
//! parser ([`super::parse`]) fills and the mapping ([`super::map`]) reads. Only what doppio
//! runs has a field; everything else is refused by the parser.

use std::path::PathBuf;
use std::time::Duration;

use crate::backend::{Compression, Consistency};
use crate::secret::Secret;

/// The whole line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StressLine {
    /// The command and its own options.
    pub command: CommandSpec,
    /// The option groups (`-rate`, `-pop`, ...).
    pub groups: Groups,
}

/// What the option groups say.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Groups {
    /// `-rate`.
    pub rate: RateSpec,
    /// `-pop`.
    pub population: Option<Population>,
    /// `-col`.
    pub columns: ColumnSpec,
    /// `-schema`.
    pub schema: SchemaSpec,
    /// `-node`: host names or addresses (default 127.0.0.1, as doppio's).
    pub nodes: Vec<String>,
    /// `-port native=`.
    pub port: Option<u16>,
    /// `-mode`.
    pub mode: ModeSpec,
    /// `-log`.
    pub log: LogSpec,
}

/// What the command does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// `write`: upserts into `keyspace1.standard1`.
    Write,
    /// `read`: reads of `keyspace1.standard1` by key.
    Read,
    /// `mixed ratio(write=W,read=R)`: both, in these proportions.
    Mixed {
        /// The weight of writes.
        write: f64,
        /// The weight of reads.
        read: f64,
    },
    /// `user profile=p.yaml ops(name=w,...)`: a user profile's operations.
    User {
        /// The profiles, read and checked (`profile=a.yaml,b.yaml`: several run together).
        profiles: Vec<PathBuf>,
        /// Their inserts' operation names (`insert`; `SPECNAME.insert` for several), the
        /// operations that run unless `ops(...)` leaves them out.
        inserts: Vec<String>,
        /// The operations' weights, names lower-cased, in the order given (empty: the
        /// profiles' own, every insert).
        ops: Vec<(String, f64)>,
    },
}

impl Kind {
    /// The command's name as cassandra-stress spells it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Read => "read",
            Kind::Mixed { .. } => "mixed",
            Kind::User { .. } => "user",
        }
    }
}

/// How long the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Length {
    /// `n=`: this many operations.
    Count(u64),
    /// `duration=`: this long.
    Time(Duration),
}

/// The command and its options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandSpec {
    /// Which command.
    pub kind: Kind,
    /// `n=` or `duration=`.
    pub length: Length,
    /// `cl=`.
    pub consistency: Option<Consistency>,
    /// `no-warmup` was given (doppio stress never warms up; read and accepted).
    pub no_warmup: bool,
}

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Pace {
    /// `throttle=R/s`: at most R operations per second over the whole run.
    Throttle(f64),
    /// `fixed=R/s`: R operations per second on a fixed schedule, latency from each one's due
    /// time.
    Fixed(f64),
}

/// `-rate`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct RateSpec {
    /// `threads=N`: operations in flight.
    pub threads: Option<usize>,
    /// `throttle=` or `fixed=`.
    pub pace: Option<Pace>,
}

/// `-pop`: which partition keys the operations visit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Population {
    /// `seq=MIN..MAX`: MIN, MIN+1, ... MAX, then again.
    Seq {
        /// The first key.
        min: i64,
        /// The last key.
        max: i64,
    },
    /// `dist=SPEC`: drawn from a distribution (checked).
    Dist(String),
}

impl Population {
    /// The distribution doppio's `dist()` draws it with.
    pub(crate) fn spec(&self) -> String {
        match self {
            Population::Seq { min, max } => format!("SEQ({min}..{max})"),
            Population::Dist(spec) => spec.clone(),
        }
    }
}

/// `-col`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ColumnSpec {
    /// `size=DIST`: bytes of each value (checked).
    pub size: Option<String>,
    /// `n=FIXED(k)`: columns per row.
    pub count: Option<u32>,
}

/// `-schema`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SchemaSpec {
    /// `keyspace=`.
    pub keyspace: Option<String>,
    /// `replication(factor=N)`.
    pub factor: Option<u32>,
}

/// `-mode`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ModeSpec {
    /// `user=`.
    pub user: Option<String>,
    /// `password=`.
    pub password: Option<Secret>,
    /// `protocolVersion=` (4 or 5).
    pub protocol: Option<u8>,
    /// `compression=`.
    pub compression: Option<Compression>,
    /// `connectionsPerHost=`.
    pub connections: Option<usize>,
}

/// `-log`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LogSpec {
    /// `hdrfile=`: the HdrHistogram interval log.
    pub hdrfile: Option<PathBuf>,
    /// `interval=`: the sample interval.
    pub interval: Option<Duration>,
}
