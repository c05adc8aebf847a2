//! `doppio-stub --listen ADDR:PORT --cores LIST [--rows N --row-bytes M] [--rules FILE] [--tls-cert FILE --tls-key FILE]`:
//! prints `listening on ADDR:PORT` once ready, serves until SIGINT or SIGTERM, exits 0.
//!
//! `--scylla-shards N` emulates a ScyllaDB node of N shards (see `doppio_stub::scylla`): it
//! also prints `shard-aware port on ADDR:PORT`, and on exit the requests each emulated shard
//! received and how many arrived at a shard that does not own their token.
//!
//! `--nodes N` plays a cluster of N nodes on consecutive loopback addresses from --listen's
//! (see `doppio_stub::cluster`): it also prints `cluster of N nodes on ADDR:PORT, ...`, and on
//! exit each node's requests, those that reached a node that is no replica of their token,
//! and the lightweight transactions that missed their primary replica.
//!
//! `--datacenters dc1:3,dc2:3 [--racks N]` plays a cluster laid out over data centers and
//! racks instead (see `doppio_stub::datacenters`): NetworkTopologyStrategy with
//! --replication-factor in each data center; on exit it also prints each node's data center
//! and rack, and the requests each data center received.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Parser;
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::types::ColumnType;
use doppio_proto::ProtocolVersion;
use doppio_stub::cluster::{DEFAULT_REPLICATION_FACTOR, DEFAULT_VNODES};
use doppio_stub::{
    Cluster, Datacenters, NodeCounts, Rules, ScyllaShards, Shape, ShardAwarePort, Stub, StubConfig,
    TabletMigration, Tablets,
};

/// A loopback CQL v4 stub server: answers at once, or as its fault rules say.
#[derive(Debug, Parser)]
#[command(name = "doppio-stub", version, about)]
struct Args {
    /// Address to listen on (port 0: any free port; the line printed says which).
    #[arg(long, default_value = "127.0.0.1:9043")]
    listen: SocketAddr,
    /// Cores to run one pinned shard each on, e.g. `1` or `0,1`.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    cores: Vec<usize>,
    /// Rows an ordinary SELECT returns.
    #[arg(long, default_value_t = 1)]
    rows: usize,
    /// Bytes of the one blob column of each row.
    #[arg(long, default_value_t = 8)]
    row_bytes: usize,
    /// The type of every bind marker of a prepared statement: blob, bigint, int, text.
    #[arg(long, default_value = "blob")]
    bind_type: String,
    /// Fault rules (TOML; see perf/stub/README.md).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// Do not pin the shards to their cores.
    #[arg(long)]
    no_pin: bool,
    /// The event loop: glommio, or doppio's own io_uring runtime (`uring`).
    #[arg(long, default_value = "glommio")]
    runtime: doppio_rt::Runtime,
    /// The newest CQL protocol version offered and spoken: 5 (as Cassandra 5.0), or 4 (a
    /// node that offers no v5, like Cassandra 3.x or ScyllaDB; `--scylla-shards` implies 4).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(4..=5))]
    max_protocol: u8,
    /// Answer STARTUP with AUTHENTICATE naming this server authenticator class, e.g.
    /// `org.apache.cassandra.auth.PasswordAuthenticator` (any credentials then succeed).
    #[arg(long, value_name = "CLASS")]
    authenticator: Option<String>,
    /// Do not log fired rules.
    #[arg(short, long)]
    quiet: bool,
    /// Emulate a ScyllaDB node of this many shards (SUPPORTED's SCYLLA_ options, a
    /// shard-aware port, counts of requests per shard and of wrong-shard arrivals).
    #[arg(long)]
    scylla_shards: Option<std::num::NonZeroU16>,
    /// SCYLLA_SHARDING_IGNORE_MSB of the emulated node (ScyllaDB's default: 12).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u8).range(0..64))]
    scylla_ignore_msb: u8,
    /// The emulated node's shard-aware port (default: the --listen port + 1; any free port
    /// when that is 0).
    #[arg(long)]
    shard_aware_port: Option<u16>,
    /// Offer no shard-aware port (drivers then reach shards through the plain port only).
    #[arg(long, conflicts_with = "shard_aware_port")]
    no_shard_aware_port: bool,
    /// ScyllaDB extensions the emulated node does not offer (comma-separated or repeated),
    /// for a comparison with and without one: `lwt` (the LWT mark), `rate-limit`,
    /// `tablets-v1`, `tablets-v2`, `metadata-id` (`SCYLLA_USE_METADATA_ID`).
    #[arg(
        long,
        value_name = "EXTENSION",
        value_delimiter = ',',
        requires = "scylla_shards"
    )]
    scylla_without: Vec<ScyllaExtension>,
    /// Serve TLS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// List this keyspace with SimpleStrategy (the cluster's replication factor; 1 for one
    /// node) and name the first bind marker of every prepared statement its partition key:
    /// drivers then route statements on its tables by token.
    #[arg(long, value_name = "KEYSPACE")]
    routed_keyspace: Option<String>,
    /// Play a cluster of this many nodes (1 to 255): node i listens on the i-th address
    /// after --listen's (127.0.0.1, 127.0.0.2, ...), same port; each EXECUTE is checked
    /// against the replicas of its token and counted per node.
    #[arg(long, value_name = "N", group = "shape")]
    nodes: Option<u8>,
    /// Play a cluster laid out over data centers, NAME:NODES each, e.g. `dc1:3,dc2:3`
    /// (nodes numbered data center by data center from --listen's address): each node gives
    /// its data center and rack in system.local and system.peers, the routed keyspace is
    /// listed with NetworkTopologyStrategy and --replication-factor in each data center
    /// (at most its nodes), and each EXECUTE is checked against the replicas it places.
    #[arg(
        long,
        value_name = "DC:N,...",
        group = "shape",
        conflicts_with = "tablets"
    )]
    datacenters: Option<String>,
    /// Racks per data center of --datacenters: node j of a data center is on rack
    /// `j % RACKS` (rack1, rack2, ...).
    #[arg(
        long,
        value_name = "RACKS",
        default_value_t = 1,
        requires = "datacenters"
    )]
    racks: u8,
    /// The cluster's replication factor (SimpleStrategy, capped at --nodes; or per data
    /// center of --datacenters).
    #[arg(long, value_name = "RF", default_value_t = DEFAULT_REPLICATION_FACTOR, requires = "shape")]
    replication_factor: u8,
    /// Tokens per node of the cluster.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_VNODES, requires = "shape")]
    vnodes: u16,
    /// Split the routed keyspace's tables into this many ScyllaDB tablets each, over the
    /// cluster's nodes and emulated shards (needs --nodes and --scylla-shards): a request
    /// that reaches a node or shard holding no replica of its tablet is counted and its
    /// answer carries the tablet's routing (`tablets-routing-v1`; under tablets routing v2,
    /// `tablets-routing-v2`, sent also when the request's tablet version block is stale).
    #[arg(long, value_name = "N", requires_all = ["nodes", "scylla_shards"])]
    tablets: Option<std::num::NonZeroU32>,
    /// Move every tablet once, this long after the start (`30s`, `500ms`).
    #[arg(long, value_name = "DURATION", requires = "tablets", value_parser = doppio_units::duration)]
    migrate_tablets_after: Option<std::time::Duration>,
    /// The migration keeps each tablet's replicas and changes only their order (a new
    /// primary), instead of moving them.
    #[arg(long, requires = "migrate_tablets_after")]
    reorder_tablets: bool,
}

/// The cluster --nodes (or --datacenters and --racks), --replication-factor and --vnodes
/// ask for, with its data centers if any, or why not.
fn cluster(args: &Args) -> Result<Option<(Cluster, Option<Datacenters>)>, String> {
    if let Some(spec) = &args.datacenters {
        let racks = std::num::NonZeroU8::new(args.racks)
            .ok_or("--racks 0: a data center has at least one rack")?;
        let vnodes = std::num::NonZeroU16::new(args.vnodes)
            .ok_or("--vnodes 0: every node owns at least one token")?;
        let dcs = Datacenters::parse(spec, racks, args.replication_factor)
            .map_err(|e| format!("--datacenters {spec}: {e}"))?;
        let c = Cluster::of_datacenters(&dcs, vnodes)
            .map_err(|e| format!("--datacenters {spec}: {e}"))?;
        return Ok(Some((c, Some(dcs))));
    }
    let Some(nodes) = args.nodes else {
        return Ok(None);
    };
    let nodes =
        std::num::NonZeroU8::new(nodes).ok_or("--nodes 0: a cluster has at least one node")?;
    let replication_factor = std::num::NonZeroU8::new(args.replication_factor)
        .ok_or("--replication-factor 0: every token needs at least one replica")?;
    let vnodes = std::num::NonZeroU16::new(args.vnodes)
        .ok_or("--vnodes 0: every node owns at least one token")?;
    Ok(Some((
        Cluster {
            nodes,
            replication_factor,
            vnodes,
        },
        None,
    )))
}

fn bind_type(name: &str) -> Result<ColumnType, String> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "blob" => ColumnType::Blob,
        "bigint" => ColumnType::Bigint,
        "int" => ColumnType::Int,
        "text" | "varchar" => ColumnType::Varchar,
        "uuid" => ColumnType::Uuid,
        "timestamp" => ColumnType::Timestamp,
        other => {
            return Err(format!(
                "unsupported --bind-type {other} (blob, bigint, int, text, uuid, timestamp)"
            ))
        }
    })
}

/// A ScyllaDB extension of `--scylla-without`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScyllaExtension {
    /// The LWT mark in prepared metadata.
    Lwt,
    /// The rate-limit error.
    RateLimit,
    /// Tablets routing v1.
    TabletsV1,
    /// Tablets routing v2.
    TabletsV2,
    /// `SCYLLA_USE_METADATA_ID`.
    MetadataId,
}

/// `offered` without the `removed` extensions.
fn without(mut offered: Extensions, removed: &[ScyllaExtension]) -> Extensions {
    for r in removed {
        match r {
            ScyllaExtension::Lwt => offered.lwt_mask = None,
            ScyllaExtension::RateLimit => offered.rate_limit_code = None,
            ScyllaExtension::TabletsV1 => offered.tablets_routing_v1 = false,
            ScyllaExtension::TabletsV2 => offered.tablets_routing_v2 = false,
            ScyllaExtension::MetadataId => offered.use_metadata_id = false,
        }
    }
    offered
}

fn main() -> ExitCode {
    let args = Args::parse();
    let fail = |message: String| {
        eprintln!("doppio-stub: {message}");
        ExitCode::from(2)
    };
    let rules = match &args.rules {
        Some(path) => match Rules::load(path) {
            Ok(r) => r,
            Err(e) => return fail(e.to_string()),
        },
        None => Rules::default(),
    };
    let bind = match bind_type(&args.bind_type) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => match doppio_stub::tls::server_config(cert, key) {
            Ok(c) => Some(c),
            Err(e) => return fail(e.to_string()),
        },
        _ => None,
    };
    let (cluster, datacenters) = match cluster(&args) {
        Ok(Some((c, dcs))) => (Some(c), dcs),
        Ok(None) => (None, None),
        Err(e) => return fail(e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, stop.clone()) {
            return fail(format!("cannot handle signal {signal}: {e}"));
        }
    }
    let config = StubConfig {
        listen: args.listen,
        cores: args.cores.clone(),
        pin: !args.no_pin,
        runtime: args.runtime,
        shape: Shape {
            rows: args.rows,
            row_bytes: args.row_bytes,
            bind_type: bind,
        },
        rules,
        log_rules: !args.quiet,
        record_values: false,
        authenticator: args.authenticator.clone(),
        newest_protocol: if args.max_protocol == 4 {
            ProtocolVersion::V4
        } else {
            ProtocolVersion::V5
        },
        scylla: args.scylla_shards.map(|shards| ScyllaShards {
            shards,
            ignore_msb: args.scylla_ignore_msb,
            shard_aware_port: if args.no_shard_aware_port {
                ShardAwarePort::None
            } else {
                let port = args
                    .shard_aware_port
                    .unwrap_or_else(|| match args.listen.port() {
                        0 => 0,
                        p => p.wrapping_add(1),
                    });
                ShardAwarePort::Listen(SocketAddr::new(args.listen.ip(), port))
            },
            extensions: without(doppio_stub::scylla::SCYLLA_EXTENSIONS, &args.scylla_without),
        }),
        routed_keyspace: args.routed_keyspace.clone(),
        tls,
        cluster,
        datacenters: datacenters.clone(),
        tablets: args.tablets.map(|count| Tablets {
            count,
            migrate_after: args.migrate_tablets_after,
            migration: if args.reorder_tablets {
                TabletMigration::Reorder
            } else {
                TabletMigration::Move
            },
        }),
    };
    let stub = match Stub::start(config) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    println!("listening on {}", stub.addr());
    if let Some(aware) = stub.shard_aware_addr() {
        println!("shard-aware port on {aware}");
    }
    if let Some(c) = cluster {
        let addrs: Vec<String> = stub.node_addrs().iter().map(|a| a.to_string()).collect();
        let replication = match &datacenters {
            Some(dcs) => {
                let per_dc: Vec<String> = dcs
                    .datacenters
                    .iter()
                    .map(|d| format!("{} {} nodes rf {}", d.name, d.nodes, d.replication_factor))
                    .collect();
                format!(
                    "NetworkTopologyStrategy: {}; {} racks per data center",
                    per_dc.join(", "),
                    dcs.racks
                )
            }
            None => format!("replication factor {}", c.replication()),
        };
        println!(
            "cluster of {} nodes on {} ({replication})",
            addrs.len(),
            addrs.join(", "),
        );
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let fired = stub.fired();
    let connections = stub.connections();
    let shard_counts = stub.shard_counts();
    let node_counts = stub.node_counts();
    stub.stop();
    for (name, n) in fired.iter().filter(|(_, n)| *n > 0) {
        eprintln!("doppio-stub: rule `{name}` fired {n} times");
    }
    if cluster.is_some() {
        for n in &node_counts {
            eprintln!(
                "doppio-stub: node {}: {} requests, {} at a node not their replica, {} not at \
                 their primary replica; {} lightweight transactions, {} of them not at their \
                 primary replica; {} answers with their tablet's routing; {} connections; in \
                 data center {}, rack {}",
                n.addr,
                n.requests,
                n.wrong_replica,
                n.not_primary,
                n.lwt_requests,
                n.lwt_not_primary,
                n.tablet_payloads,
                n.connections,
                n.data_center,
                n.rack
            );
            if let Some(c) = &n.shards {
                eprintln!(
                    "doppio-stub: node {}: requests per emulated ScyllaDB shard {:?}, {} at a \
                     shard not owning their token; connections per shard {:?}",
                    n.addr, c.requests, c.wrong_shard, c.connections
                );
            }
        }
        if datacenters.is_some() {
            for (dc, c) in NodeCounts::by_datacenter(&node_counts) {
                eprintln!(
                    "doppio-stub: data center {dc}: {} requests, {} at a node not their replica",
                    c.requests, c.wrong_replica
                );
            }
        }
    } else if let Some(c) = shard_counts {
        eprintln!(
            "doppio-stub: requests per emulated ScyllaDB shard {:?}, {} at a shard not owning \
             their token; connections per shard {:?}",
            c.requests, c.wrong_shard, c.connections
        );
    }
    eprintln!("doppio-stub: stopped after {connections} connections");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scylla_without_removes_each_named_extension_and_only_it() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from([&["doppio-stub", "--scylla-shards", "2"], extra].concat())
                .map(|a| without(doppio_stub::scylla::SCYLLA_EXTENSIONS, &a.scylla_without))
        };
        let all = parse(&[]).unwrap();
        assert_eq!(all, doppio_stub::scylla::SCYLLA_EXTENSIONS);
        let some = parse(&["--scylla-without", "metadata-id,tablets-v1"]).unwrap();
        assert!(!some.use_metadata_id && !some.tablets_routing_v1);
        assert_eq!(some.lwt_mask, all.lwt_mask);
        assert_eq!(some.rate_limit_code, all.rate_limit_code);
        let none = parse(&[
            "--scylla-without",
            "lwt",
            "--scylla-without",
            "rate-limit,tablets-v2,tablets-v1,metadata-id",
        ])
        .unwrap();
        assert_eq!(none, Extensions::default());
        assert!(parse(&["--scylla-without", "bogus"]).is_err());
        let alone = Args::try_parse_from(["doppio-stub", "--scylla-without", "lwt"]);
        assert!(alone.is_err(), "needs --scylla-shards");
    }

    #[test]
    fn reordering_tablets_needs_a_migration_to_reorder() {
        let parse = |extra: &[&str]| Args::try_parse_from([&["doppio-stub"], extra].concat());
        let reorder = [
            "--nodes",
            "3",
            "--scylla-shards",
            "2",
            "--tablets",
            "8",
            "--migrate-tablets-after",
            "1s",
            "--reorder-tablets",
        ];
        assert!(parse(&reorder).unwrap().reorder_tablets);
        assert!(parse(&reorder[..6]).is_ok());
        assert!(
            parse(&[&reorder[..6], &["--reorder-tablets"][..]].concat()).is_err(),
            "no migration to reorder"
        );
    }

    #[test]
    fn the_stub_listens_on_loopback_unless_told_otherwise() {
        let args = Args::try_parse_from(["doppio-stub"]).unwrap();
        assert!(args.listen.ip().is_loopback(), "{}", args.listen);
        assert!(StubConfig::default().listen.ip().is_loopback());
        let args = Args::try_parse_from(["doppio-stub", "--listen", "0.0.0.0:9043"]).unwrap();
        assert!(args.listen.ip().is_unspecified());
    }

    #[test]
    fn a_cluster_of_zero_nodes_replicas_or_tokens_is_refused_in_one_line() {
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["doppio-stub"], extra].concat()).unwrap();
            cluster(&args)
        };
        assert_eq!(parse(&[]), Ok(None));
        let (c, dcs) = parse(&["--nodes", "3"]).unwrap().unwrap();
        assert_eq!(dcs, None);
        assert_eq!((c.nodes.get(), c.replication()), (3, 3));
        let (c, _) = parse(&["--nodes", "2", "--replication-factor", "5"])
            .unwrap()
            .unwrap();
        assert_eq!(c.replication(), 2, "capped at the node count");
        for (bad, says) in [
            (&["--nodes", "0"][..], "--nodes 0"),
            (
                &["--nodes", "2", "--replication-factor", "0"],
                "--replication-factor 0",
            ),
            (&["--nodes", "2", "--vnodes", "0"], "--vnodes 0"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with(says) && !e.contains('\n'), "{e}");
        }
        // A replication factor without a cluster is a mistake clap names.
        assert!(Args::try_parse_from(["doppio-stub", "--replication-factor", "2"]).is_err());
    }

    #[test]
    fn data_centers_are_parsed_or_refused_in_one_line() {
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["doppio-stub"], extra].concat()).unwrap();
            cluster(&args)
        };
        let (c, dcs) = parse(&["--datacenters", "dc1:3,dc2:3", "--racks", "3"])
            .unwrap()
            .unwrap();
        let dcs = dcs.unwrap();
        assert_eq!(c.nodes.get(), 6);
        assert_eq!(dcs.racks.get(), 3);
        assert_eq!(
            dcs.replication_map(),
            [("dc1".to_owned(), 3), ("dc2".to_owned(), 3)]
        );
        for (bad, says) in [
            (&["--datacenters", "dc1:3", "--racks", "0"][..], "--racks 0"),
            (&["--datacenters", "dc1"], "--datacenters dc1: `dc1`"),
            (
                &["--datacenters", "dc1:0"],
                "--datacenters dc1:0: data center dc1 has 0",
            ),
            (
                &["--datacenters", "dc1:3,dc2:2"],
                "--datacenters dc1:3,dc2:2: replication factor 3 in data center dc2",
            ),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with(says) && !e.contains('\n'), "{e}");
        }
        // --nodes and --datacenters are two shapes of one cluster: one at a time.
        assert!(
            Args::try_parse_from(["doppio-stub", "--nodes", "3", "--datacenters", "a:3"]).is_err()
        );
        assert!(Args::try_parse_from(["doppio-stub", "--racks", "2"]).is_err());
    }
}
