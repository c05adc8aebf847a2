//! ScyllaDB's result metadata ids in v4 (`SCYLLA_USE_METADATA_ID`), against the stub
//! emulating a ScyllaDB node (no ScyllaDB runs here; the stub follows ScyllaDB's
//! protocol-extensions document, and speaks v4 only, as ScyllaDB): the driver turns it on in
//! STARTUP when the node offers it and not otherwise; prepared EXECUTEs on v4 then send the
//! statement's result metadata id and skip the result metadata, and a table altered under a
//! prepared statement (`ALTER TABLE` on the stub) is detected by its answer's
//! METADATA_CHANGED: its rows are read by the new columns, which the statement keeps, with no
//! re-prepare. Without the extension v4 is as it was: a change of the column count is healed
//! by preparing again, one that keeps the count goes unseen.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::NonZeroU16;

use doppio_driver::proto::response::ResultBody;
use doppio_driver::proto::types::ColumnType;
use doppio_driver::proto::{MetadataIds, ProtocolVersion};
use doppio_driver::rt::Runtime;
use doppio_driver::session::PagingState;
use doppio_driver::{QueryResult, Session, SessionConfig};
use doppio_stub::{ScyllaShards, StubConfig};

use crate::support;

use support::StubNode;

const SELECT: &str = "SELECT * FROM ks.t WHERE k = ?";

/// A stub of one v4-only node, emulating a ScyllaDB node of 2 shards when `scylla`.
fn v4_stub(runtime: Runtime, scylla: bool) -> StubNode {
    StubNode::start(
        runtime,
        StubConfig {
            log_rules: false,
            newest_protocol: ProtocolVersion::V4,
            scylla: scylla
                .then(|| ScyllaShards::new(NonZeroU16::new(2).unwrap(), [127, 0, 0, 1].into())),
            ..StubConfig::default()
        },
    )
}

/// Whether `r`'s rows came without their metadata (read by the statement's columns).
fn quiet(r: &QueryResult) -> bool {
    matches!(&r.body, ResultBody::Rows(rows) if rows.metadata.no_metadata)
}

/// The names and types of `columns`.
fn named(columns: &[doppio_driver::proto::metadata::ColumnSpec]) -> Vec<(String, ColumnType)> {
    columns
        .iter()
        .map(|c| (c.name.clone(), c.typ.clone()))
        .collect()
}

fn metadata_ids_are_turned_on_when_offered_and_not_otherwise(runtime: Runtime) {
    for scylla in [true, false] {
        let stub = v4_stub(runtime, scylla);
        let addr = stub.addr();
        stub.run("metadata-ids-negotiated", move || async move {
            let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
            let conn = s.view().node(0).unwrap().connection().unwrap();
            assert_eq!(conn.version(), ProtocolVersion::V4);
            assert_eq!(conn.extensions().use_metadata_id, scylla);
            let expected = if scylla {
                MetadataIds::Negotiated
            } else {
                MetadataIds::ByVersion
            };
            assert_eq!(conn.metadata_ids(), expected);
            let p = s.prepare(SELECT).await.unwrap();
            assert_eq!(p.result_metadata_id().is_some(), scylla);
            // Executed either way, rows without metadata (read by the prepared columns).
            let r = s.execute_unpaged(&p, &(vec![1u8],)).await.unwrap();
            assert!(quiet(&r));
            assert_eq!(
                r.typed_rows::<(Vec<u8>,)>().unwrap(),
                vec![(vec![0x5a; 8],)]
            );
            s.close("done");
        });
        stub.stop();
    }
}

fn a_table_altered_under_a_prepared_statement_is_followed_by_its_metadata_id(runtime: Runtime) {
    let stub = v4_stub(runtime, true);
    let addr = stub.addr();
    stub.run("metadata-ids-altered", move || async move {
        let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
        let p = s.prepare(SELECT).await.unwrap();
        let first_id = p.result_metadata_id().unwrap();
        let key = (vec![1u8],);
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert!(quiet(&r), "v4 EXECUTEs skip the result metadata");

        // Two changes that leave one column, of another type: the count would not tell, the
        // id does. The node says METADATA_CHANGED, the rows carry the new column, and the
        // statement takes it and its id: the int is read as an int, not as the blob the
        // column was.
        for alter in ["ALTER TABLE ks.t ADD w int", "ALTER TABLE ks.t DROP v"] {
            s.query_unpaged(alter, &()).await.unwrap();
        }
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert!(!quiet(&r), "the new columns came with the rows");
        assert_eq!(r.typed_rows::<(i32,)>().unwrap(), vec![(42,)]);
        let second_id = p.result_metadata_id().unwrap();
        assert_ne!(second_id, first_id);
        assert_eq!(
            named(&p.result_columns()),
            vec![("w".into(), ColumnType::Int)]
        );
        // The new id sent: rows without metadata again, read by the new column.
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert!(quiet(&r));
        assert_eq!(r.typed_rows::<(i32,)>().unwrap(), vec![(42,)]);

        // A column added: followed the same way.
        s.query_unpaged("ALTER TABLE ks.t ADD x text", &())
            .await
            .unwrap();
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert_eq!(
            r.typed_rows::<(i32, String)>().unwrap(),
            vec![(42, "x".to_owned())]
        );
        assert_eq!(
            named(&p.result_columns()),
            vec![
                ("w".into(), ColumnType::Int),
                ("x".into(), ColumnType::Varchar)
            ]
        );
        assert_ne!(p.result_metadata_id().unwrap(), second_id);
        // A page of it too, without metadata, by the statement's columns.
        let page = s
            .execute_single_page(&p, &key, &PagingState::start())
            .await
            .unwrap();
        assert!(quiet(&page));
        assert_eq!(
            page.typed_rows::<(i32, String)>().unwrap(),
            vec![(42, "x".to_owned())]
        );
        let stats = s.stats();
        s.close("done");
        assert_eq!(
            stats.reprepares, 0,
            "detected by the id, not healed by preparing"
        );
    });
    stub.stop();
}

fn without_the_extension_v4_reads_by_the_columns_it_prepared_with(runtime: Runtime) {
    let stub = v4_stub(runtime, false);
    let addr = stub.addr();
    stub.run("metadata-ids-off", move || async move {
        let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
        let p = s.prepare(SELECT).await.unwrap();
        assert_eq!(p.result_metadata_id(), None);
        let key = (vec![1u8],);
        // One column again, of another type: nothing tells, and the int's four bytes are
        // read as the blob the column was (what the extension prevents).
        for alter in ["ALTER TABLE ks.t ADD w int", "ALTER TABLE ks.t DROP v"] {
            s.query_unpaged(alter, &()).await.unwrap();
        }
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert!(quiet(&r));
        assert_eq!(
            r.typed_rows::<(Vec<u8>,)>().unwrap(),
            vec![(vec![0, 0, 0, 42],)]
        );
        assert_eq!(
            named(&p.result_columns()),
            vec![("v".into(), ColumnType::Blob)]
        );
        // A column added: the count differs, and the statement is prepared again.
        s.query_unpaged("ALTER TABLE ks.t ADD x text", &())
            .await
            .unwrap();
        let r = s.execute_unpaged(&p, &key).await.unwrap();
        assert_eq!(
            r.typed_rows::<(i32, String)>().unwrap(),
            vec![(42, "x".to_owned())]
        );
        let stats = s.stats();
        s.close("done");
        assert_eq!(stats.reprepares, 1);
    });
    stub.stop();
}

support::runtime_tests!(;
    and_sim:
    metadata_ids_are_turned_on_when_offered_and_not_otherwise,
    a_table_altered_under_a_prepared_statement_is_followed_by_its_metadata_id,
    without_the_extension_v4_reads_by_the_columns_it_prepared_with,
);
