//! ScyllaDB's result metadata ids in v4 (`SCYLLA_USE_METADATA_ID`), as the stub emulates
//! them: offered among a ScyllaDB node's extensions and by nothing else; on a v4 connection
//! that turned it on, PREPARED carries the id of its result columns, EXECUTE sends it back,
//! and an EXECUTE whose id is stale (its table altered since: `ALTER TABLE`) is answered
//! `METADATA_CHANGED` with the new columns and their id. A raw client of doppio-proto's parts
//! checks the bytes; scylla-rust-driver 1.9, which negotiates the extension, follows an
//! altered table through it.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::NonZeroU16;

use doppio_proto::response::{Prepared, Response, ResultBody, SchemaChange, SchemaTarget};
use doppio_proto::rows::Rows;
use doppio_proto::scylla_extensions::{Extensions, USE_METADATA_ID};
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;
use doppio_proto::{MetadataIds, ProtocolVersion};
use doppio_rt::Runtime;
use doppio_stub::{ScyllaShards, Shape, Stub, StubConfig, StubHandle};

use crate::support::{self, on_scylla, RawClient};

const SELECT: &str = "SELECT * FROM ks.t WHERE k = ?";

/// A stub emulating a ScyllaDB node of 2 shards, which speaks v4 only (as ScyllaDB).
fn scylla_stub(runtime: Runtime) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        log_rules: false,
        newest_protocol: ProtocolVersion::V4,
        scylla: Some(ScyllaShards::new(
            NonZeroU16::new(2).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        ..StubConfig::default()
    })
    .unwrap()
}

/// A raw v4 client on `stub` that turned on, in STARTUP, every extension the node offers;
/// whether metadata ids were among them.
fn client_with_what_is_offered(stub: &StubHandle) -> (RawClient, bool) {
    let mut c = RawClient::open(stub.addr());
    let offered = Extensions::from_supported(&c.options()).unwrap();
    let asked = offered.startup_options();
    let mut options = vec![("CQL_VERSION", "3.0.0")];
    options.extend(asked.iter().map(|(k, v)| (*k, v.as_str())));
    c.startup_with(&options);
    let on = offered.accepted_in_startup(&options);
    c.metadata_ids = on.metadata_ids();
    // Tablets routing v2 on: every EXECUTE ends with a block (that of an unknown version).
    c.tablet_block = on
        .tablets_routing_v2
        .then_some(doppio_proto::tablet_version::UNKNOWN_VERSION_BLOCK);
    (c, offered.use_metadata_id)
}

fn rows(answer: Response) -> Rows {
    match answer {
        Response::Result(ResultBody::Rows(rows)) => rows,
        other => panic!("not rows: {other:?}"),
    }
}

/// The one row of `rows`, read by `columns`.
fn only_row(rows: &Rows, columns: &[doppio_proto::metadata::ColumnSpec]) -> Vec<Option<CqlValue>> {
    let view = rows.view_with(columns);
    assert_eq!(view.len(), 1);
    view.iter().next().unwrap().unwrap().to_values().unwrap()
}

fn prepare_with_id(c: &mut RawClient) -> (Prepared, Vec<u8>) {
    let p = c.prepare(SELECT);
    let id = p
        .result_metadata_id
        .clone()
        .expect("an id, negotiated")
        .to_vec();
    (p, id)
}

fn scylla_s_metadata_ids_are_offered_negotiated_and_honoured_on_v4(runtime: Runtime) {
    let stub = scylla_stub(runtime);
    let (mut c, offered) = client_with_what_is_offered(&stub);
    assert!(offered, "a ScyllaDB node offers SCYLLA_USE_METADATA_ID");
    assert_eq!(c.metadata_ids, MetadataIds::Negotiated);
    let (p, first_id) = prepare_with_id(&mut c);
    assert_eq!(p.result_metadata.columns.len(), 1);
    // The id sent back matches: rows without metadata, as skip_metadata asks.
    let key: &[u8] = b"k";
    let quiet = rows(c.execute_with(&p, &[key], true, Some(&first_id)));
    assert!(quiet.metadata.no_metadata);
    assert_eq!(quiet.metadata.new_metadata_id, None);
    assert_eq!(quiet.metadata.columns_count, 1);

    // The table changes under the prepared statement.
    assert_eq!(
        c.query("ALTER TABLE ks.t ADD w int"),
        Response::Result(ResultBody::SchemaChange(SchemaChange {
            change: "UPDATED".into(),
            target: SchemaTarget::Table("ks".into(), "t".into()),
        }))
    );
    // The old id is stale: METADATA_CHANGED, the new columns and their id, whatever
    // skip_metadata asked.
    let changed = rows(c.execute_with(&p, &[key], true, Some(&first_id)));
    let new_id = changed
        .metadata
        .new_metadata_id
        .as_deref()
        .expect("METADATA_CHANGED")
        .to_vec();
    assert_ne!(new_id, first_id);
    assert!(!changed.metadata.no_metadata);
    let names: Vec<(&str, &ColumnType)> = changed
        .metadata
        .columns
        .iter()
        .map(|c| (c.name.as_str(), &c.typ))
        .collect();
    assert_eq!(
        names,
        vec![("v", &ColumnType::Blob), ("w", &ColumnType::Int)]
    );
    assert_eq!(
        only_row(&changed, &changed.metadata.columns)[1],
        Some(CqlValue::Int(42))
    );
    // With the new id: quiet again, two columns.
    let quiet = rows(c.execute_with(&p, &[key], true, Some(&new_id)));
    assert!(quiet.metadata.no_metadata && quiet.metadata.new_metadata_id.is_none());
    assert_eq!(quiet.metadata.columns_count, 2);
    // Preparing again gives the new id (the statement's id is the same).
    let (again, again_id) = prepare_with_id(&mut c);
    assert_eq!(again.id, p.id);
    assert_eq!(again_id, new_id);
    // A column dropped: the count is back to one, of another type; only the id tells.
    assert!(matches!(
        c.query("ALTER TABLE ks.t DROP v"),
        Response::Result(ResultBody::SchemaChange(_))
    ));
    let changed = rows(c.execute_with(&p, &[key], true, Some(&new_id)));
    assert_eq!(changed.metadata.columns.len(), 1);
    assert_eq!(changed.metadata.columns[0].typ, ColumnType::Int);
    assert!(changed.metadata.new_metadata_id.is_some());
    assert_eq!(
        only_row(&changed, &changed.metadata.columns),
        vec![Some(CqlValue::Int(42))]
    );
    // An ALTER the stub cannot apply is an error, and changes nothing.
    assert!(matches!(
        c.query("ALTER TABLE ks.t DROP nope"),
        Response::Error(_)
    ));
    assert!(matches!(
        c.query("ALTER TABLE system.local ADD x int"),
        Response::Error(_)
    ));

    // A connection that did not turn it on: no id in PREPARED, none read from EXECUTE,
    // and rows that changed come without a word (a client reading them by the columns it
    // prepared with reads stale ones: what the extension is for).
    let mut plain = RawClient::ready(stub.addr());
    let p = plain.prepare(SELECT);
    assert_eq!(p.result_metadata_id, None);
    let quiet = rows(plain.execute_with(&p, &[key], true, None));
    assert!(quiet.metadata.no_metadata && quiet.metadata.new_metadata_id.is_none());
}

fn a_node_that_does_not_emulate_scylladb_offers_no_metadata_ids(runtime: Runtime) {
    let stub = support::stub(runtime, "", Shape::default());
    let (_, offered) = client_with_what_is_offered(&stub);
    assert!(!offered);
    // Asked for anyway, it is not turned on: v4 stays v4.
    let mut c = RawClient::open(stub.addr());
    c.startup_with(&[("CQL_VERSION", "3.0.0"), (USE_METADATA_ID, "")]);
    let p = c.prepare(SELECT);
    assert_eq!(p.result_metadata_id, None);
    let quiet = rows(c.execute_with(&p, &[b"k"], true, None));
    assert!(quiet.metadata.no_metadata);
}

fn scylla_rust_driver_follows_an_altered_table_by_its_metadata_id(runtime: Runtime) {
    let stub = scylla_stub(runtime);
    on_scylla(stub.addr(), |s| async move {
        let p = s.prepare(SELECT).await.unwrap();
        let key = vec![1u8];
        let r = s.execute_unpaged(&p, (key.clone(),)).await.unwrap();
        let rows = r.into_rows_result().unwrap();
        let values: Vec<(Vec<u8>,)> = rows
            .rows::<(Vec<u8>,)>()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(values, vec![(vec![0x5a; 8],)]);

        s.query_unpaged("ALTER TABLE ks.t ADD w int", ())
            .await
            .unwrap();
        let r = s.execute_unpaged(&p, (key.clone(),)).await.unwrap();
        let rows = r.into_rows_result().unwrap();
        let values: Vec<(Vec<u8>, i32)> = rows
            .rows::<(Vec<u8>, i32)>()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(values, vec![(vec![0x5a; 8], 42)]);
        // The statement took the new columns from METADATA_CHANGED (without the extension
        // its columns would stay those it was prepared with).
        let names: Vec<String> = p
            .get_current_result_set_col_specs()
            .get()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        assert_eq!(names, vec!["v".to_owned(), "w".to_owned()]);

        // One column again, of another type: read as an int, not as the blob it was.
        s.query_unpaged("ALTER TABLE ks.t DROP v", ())
            .await
            .unwrap();
        let r = s.execute_unpaged(&p, (key,)).await.unwrap();
        let rows = r.into_rows_result().unwrap();
        let values: Vec<(i32,)> = rows.rows::<(i32,)>().unwrap().map(Result::unwrap).collect();
        assert_eq!(values, vec![(42,)]);
    });
}

support::runtime_tests!(
    scylla_s_metadata_ids_are_offered_negotiated_and_honoured_on_v4,
    a_node_that_does_not_emulate_scylladb_offers_no_metadata_ids,
    scylla_rust_driver_follows_an_altered_table_by_its_metadata_id,
);
