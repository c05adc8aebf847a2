//! ScyllaDB's tablets routing v2 as the stub emulates it: offered beside v1 by an emulated
//! ScyllaDB node; on a connection that turned it on every EXECUTE ends with a tablet version
//! block (one without it is a PROTOCOL_ERROR that names it, and the connection lives on),
//! and the answer carries the tablet's `tablets-routing-v2` payload (its routing and
//! version) when the block disagrees with the tablet's version, never when it agrees. A raw
//! client of doppio-proto's parts checks the bytes; scylla-rust-driver 1.9, which turns v2
//! on too, is checked against the tablets in `cluster.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::{NonZeroU16, NonZeroU32, NonZeroU8};

use doppio_proto::murmur3;
use doppio_proto::response::{ErrorCode, Response, ResponseFrame};
use doppio_proto::scylla_extensions::{
    Extensions, TabletRouting, TABLETS_ROUTING_V2, TABLETS_V2_PAYLOAD_KEY,
};
use doppio_proto::tablet_version::{TabletVersion, UNKNOWN_VERSION_BLOCK};
use doppio_rt::Runtime;
use doppio_stub::tablets::TabletLayout;
use doppio_stub::{Cluster, ScyllaShards, Stub, StubConfig, StubHandle, TabletMigration, Tablets};

use crate::support::{self, RawClient};

const TABLETS: u32 = 8;

/// 3 emulated ScyllaDB nodes of one shard each, RF 3, 8 tablets that never move: every
/// request reaches a replica of its tablet (none is misrouted).
fn tablet_stub(runtime: Runtime, v2: bool) -> (StubHandle, TabletLayout) {
    let mut scylla = ScyllaShards::new(NonZeroU16::new(1).unwrap(), [127, 0, 0, 1].into());
    scylla.extensions.tablets_routing_v2 = v2;
    let tablets = Tablets {
        count: NonZeroU32::new(TABLETS).unwrap(),
        migrate_after: None,
        migration: TabletMigration::Move,
    };
    let stub = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some("ks".into()),
        scylla: Some(scylla),
        cluster: Some(Cluster {
            nodes: NonZeroU8::new(3).unwrap(),
            replication_factor: NonZeroU8::new(3).unwrap(),
            vnodes: NonZeroU16::new(8).unwrap(),
        }),
        tablets: Some(tablets),
        ..StubConfig::default()
    })
    .unwrap();
    let layout = TabletLayout {
        tablets,
        nodes: 3,
        replication: 3,
        shards: NonZeroU16::new(1).unwrap(),
    };
    (stub, layout)
}

/// A raw client on `stub` that turned on every extension offered; whether v2 was.
fn client(stub: &StubHandle) -> (RawClient, bool) {
    let mut c = RawClient::open(stub.addr());
    let offered = Extensions::from_supported(&c.options()).unwrap();
    let asked = offered.startup_options();
    let mut options = vec![("CQL_VERSION", "3.0.0")];
    options.extend(asked.iter().map(|(k, v)| (*k, v.as_str())));
    c.startup_with(&options);
    let on = offered.accepted_in_startup(&options);
    c.metadata_ids = on.metadata_ids();
    (c, on.tablets_routing_v2)
}

/// The tablet routing an answer carried: (key, decoded), if any.
fn payload_of(answer: &ResponseFrame) -> Option<(String, TabletRouting)> {
    let payload = answer.custom_payload.as_ref()?;
    let (key, value) = payload
        .iter()
        .find(|(k, _)| k.starts_with("tablets-routing"))?;
    let value = value.as_ref().unwrap();
    let routing = if key == TABLETS_V2_PAYLOAD_KEY {
        TabletRouting::decode_v2(value).unwrap()
    } else {
        TabletRouting::decode(value).unwrap()
    };
    Some((key.clone(), routing))
}

fn execute(c: &mut RawClient, p: &doppio_proto::response::Prepared, key: &[u8]) -> ResponseFrame {
    use doppio_proto::consistency::Consistency;
    use doppio_proto::request::{Execute, QueryParameters, WithTabletBlock};
    use doppio_proto::wire::RawValue;
    let values = [RawValue::Bytes(key), RawValue::Bytes(b"v")];
    let e = Execute {
        id: &p.id,
        result_metadata_id: p.result_metadata_id.as_deref(),
        metadata_ids: c.metadata_ids,
        params: QueryParameters {
            consistency: Consistency::One,
            ..QueryParameters::default()
        },
        values: &&values[..],
        columns: None,
    };
    match c.tablet_block {
        Some(block) => c.call(&WithTabletBlock { body: &e, block }),
        None => c.call(&e),
    }
}

/// A key (of one byte) whose tablet's version does not agree with the unknown block.
fn key_of_a_tablet_unknown_blocks_disagree_with(layout: &TabletLayout) -> (Vec<u8>, u32) {
    (0..=255u8)
        .map(|b| vec![b])
        .map(|k| {
            let t = layout.tablet_of(murmur3::token(&k));
            (k, t)
        })
        .find(|(_, t)| !layout.version(*t, 0).agrees_with(UNKNOWN_VERSION_BLOCK))
        .unwrap()
}

fn an_execute_without_its_block_on_a_v2_connection_is_a_protocol_error(runtime: Runtime) {
    let (stub, _) = tablet_stub(runtime, true);
    let (mut c, v2) = client(&stub);
    assert!(v2, "an emulated ScyllaDB node offers {TABLETS_ROUTING_V2}");
    let p = c.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
    c.tablet_block = None;
    match execute(&mut c, &p, b"k").response {
        Response::Error(e) => {
            assert_eq!(e.code, ErrorCode::ProtocolError, "{e:?}");
            assert!(e.message.contains("tablet version block"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    // The connection lives on: with its block, the same EXECUTE is answered.
    c.tablet_block = Some(UNKNOWN_VERSION_BLOCK);
    assert!(matches!(
        execute(&mut c, &p, b"k").response,
        Response::Result(_)
    ));
}

fn a_v2_payload_comes_when_the_block_disagrees_and_only_then(runtime: Runtime) {
    let (stub, layout) = tablet_stub(runtime, true);
    let (mut c, _) = client(&stub);
    let p = c.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
    let (key, tablet) = key_of_a_tablet_unknown_blocks_disagree_with(&layout);
    let version = layout.version(tablet, 0);
    // No version known: the tablet comes back, with its version.
    c.tablet_block = Some(UNKNOWN_VERSION_BLOCK);
    let (k, routing) = payload_of(&execute(&mut c, &p, &key)).expect("a payload");
    assert_eq!(k, TABLETS_V2_PAYLOAD_KEY);
    assert_eq!(routing.version, Some(version));
    assert_eq!(routing.replicas, layout.routing(tablet, 0).replicas);
    // Every block of the right version agrees: no payload (none of these is misrouted).
    for i in 0..16 {
        c.tablet_block = Some(version.block(i));
        assert_eq!(payload_of(&execute(&mut c, &p, &key)), None, "nibble {i}");
    }
    // A stale version: each block that probes a changed nibble brings the tablet back.
    let stale = TabletVersion(version.0 ^ 0x0000_0000_0010_0000);
    for i in 0..16u8 {
        c.tablet_block = Some(stale.block(i));
        let got = payload_of(&execute(&mut c, &p, &key)).map(|(_, r)| r.version);
        let expected = (i == 5).then_some(Some(version));
        assert_eq!(got, expected, "nibble {i}");
    }
    let payloads: u64 = stub.node_counts().iter().map(|n| n.tablet_payloads).sum();
    let wrong: u64 = stub.node_counts().iter().map(|n| n.wrong_replica).sum();
    assert_eq!((payloads, wrong), (2, 0));
}

fn a_node_offering_v1_only_reads_no_block_and_sends_no_payload_to_replicas(runtime: Runtime) {
    let (stub, layout) = tablet_stub(runtime, false);
    let (mut c, v2) = client(&stub);
    assert!(!v2);
    let p = c.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
    let (key, _) = key_of_a_tablet_unknown_blocks_disagree_with(&layout);
    for _ in 0..4 {
        let answer = execute(&mut c, &p, &key);
        assert!(matches!(answer.response, Response::Result(_)));
        assert_eq!(payload_of(&answer), None);
    }
    let none = stub.node_counts().iter().all(|n| n.tablet_payloads == 0);
    assert!(none, "{:?}", stub.node_counts());
}

support::runtime_tests!(
    an_execute_without_its_block_on_a_v2_connection_is_a_protocol_error,
    a_v2_payload_comes_when_the_block_disagrees_and_only_then,
    a_node_offering_v1_only_reads_no_block_and_sends_no_payload_to_replicas,
);
