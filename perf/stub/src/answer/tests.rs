//! What the responder answers: prepared statements from their encoded bodies, pages of
//! QUERYs and EXECUTEs, system tables and `USE` as Cassandra answers them, ScyllaDB's
//! keyspaces in tablets, and the statement ids.

use std::sync::Arc;

use bytes::Bytes;
use doppio_proto::consistency::Consistency;
use doppio_proto::request::{DecodedParameters, QueryParameters, Request};
use doppio_proto::response::{ErrorCode, Prepared, Response, ResultBody};
use doppio_proto::{MetadataIds, ProtocolVersion};

use crate::answer::prepared::statement_id;
use crate::answer::{Answer, Responder, Shape};

fn params(skip: bool) -> DecodedParameters<'static> {
    DecodedParameters {
        params: QueryParameters {
            consistency: Consistency::One,
            skip_metadata: skip,
            ..QueryParameters::default()
        },
        values: Vec::new(),
    }
}

#[test]
fn prepared_statements_are_answered_from_their_encoded_bodies() {
    let shape = Arc::new(Shape {
        rows: 3,
        row_bytes: 5,
        ..Shape::default()
    });
    let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
    let mut ks = None;
    let Answer::Message(Response::Result(ResultBody::Prepared(p))) = r.answer(
        &Request::Prepare {
            query: "SELECT v FROM t WHERE k = ?",
            keyspace: None,
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("prepared")
    };
    assert_eq!(p.metadata.columns.len(), 1);
    assert_eq!(p.result_metadata.columns.len(), 1);
    let Answer::Body(bare) = r.answer(
        &Request::Execute {
            id: &p.id,
            result_metadata_id: None,
            params: params(true),
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("body")
    };
    // Kind, flags (GLOBAL_TABLES_SPEC | NO_METADATA, as Cassandra sends them), one
    // column, three rows of [int 5][5 bytes].
    assert_eq!(
        &bare[..16],
        &[0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 3]
    );
    assert_eq!(bare.len(), 16 + 3 * 9);
    let Answer::Body(full) = r.answer(
        &Request::Execute {
            id: &p.id,
            result_metadata_id: None,
            params: params(false),
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("body")
    };
    assert!(full.len() > bare.len(), "metadata included");
    let Answer::Message(Response::Error(e)) = r.answer(
        &Request::Execute {
            id: &[1, 2, 3],
            result_metadata_id: None,
            params: params(false),
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("unprepared")
    };
    assert_eq!(e.code, ErrorCode::Unprepared);
}

/// A QUERY's page of the configured shape is made from the rows it holds, not from all
/// of them: the stub once built every row of the shape for each QUERY and then sent a
/// page of them (a one-row page of a 50,000-row shape cost 50,000 row allocations, and
/// made the driver's fault test against it take 80 s of CPU on glommio and io_uring).
/// A shape of more rows than memory could hold answers its pages at once.
#[test]
fn a_query_s_page_of_a_huge_shape_makes_only_its_own_rows() {
    let rows = usize::MAX / 4;
    let shape = Arc::new(Shape {
        rows,
        row_bytes: 8,
        ..Shape::default()
    });
    let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
    let mut ks = None;
    let state = 1000u32.to_be_bytes();
    let mut p = params(true);
    p.params.page_size = Some(2);
    p.params.paging_state = Some(&state);
    let Answer::Message(Response::Result(ResultBody::Rows(page))) = r.answer(
        &Request::Query("SELECT v FROM t", p),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("rows")
    };
    assert_eq!(page.rows_count, 2);
    assert_eq!(
        page.metadata.paging_state.as_deref(),
        Some(&1002u32.to_be_bytes()[..]),
        "the next page's state"
    );
}

#[test]
fn executes_of_a_several_row_select_are_paged_by_page_size_and_paging_state() {
    let shape = Arc::new(Shape {
        rows: 5,
        row_bytes: 3,
        ..Shape::default()
    });
    let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
    let mut ks = None;
    let Answer::Message(Response::Result(ResultBody::Prepared(p))) = r.answer(
        &Request::Prepare {
            query: "SELECT v FROM t",
            keyspace: None,
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("prepared")
    };
    assert!(r.lookup(&p.id).unwrap().pageable());
    fn page(state: Option<&[u8]>, size: Option<i32>) -> DecodedParameters<'_> {
        let mut p = params(true);
        p.params.page_size = size;
        p.params.paging_state = state;
        p
    }
    let mut pages = Vec::new();
    let mut state: Option<Bytes> = None;
    loop {
        let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
            &Request::Execute {
                id: &p.id,
                result_metadata_id: None,
                params: page(state.as_deref(), Some(2)),
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("a page of rows")
        };
        pages.push(rows.rows_count);
        state = rows.metadata.paging_state;
        if state.is_none() {
            break;
        }
    }
    assert_eq!(pages, vec![2, 2, 1], "5 rows in pages of 2");
    // Every row at once: the pre-encoded body, as before.
    for size in [None, Some(5), Some(5000)] {
        let answer = r.answer(
            &Request::Execute {
                id: &p.id,
                result_metadata_id: None,
                params: page(None, size),
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        );
        assert!(matches!(answer, Answer::Body(_)), "{size:?}: {answer:?}");
    }
    // A one-row statement keeps the fast path (no rows kept).
    let Answer::Message(Response::Result(ResultBody::Prepared(one))) = r.answer(
        &Request::Prepare {
            query: "SELECT key FROM system.local WHERE key = 'local'",
            keyspace: None,
        },
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("prepared")
    };
    assert!(!r.lookup(&one.id).unwrap().pageable());
}

#[test]
fn system_tables_and_use_are_answered_like_cassandra() {
    let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), Arc::default());
    let mut ks = None;
    let Answer::Message(Response::Result(ResultBody::SetKeyspace(k))) = r.answer(
        &Request::Query("USE \"ks1\"", params(false)),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("use")
    };
    assert_eq!(k, "ks1");
    assert_eq!(ks.as_deref(), Some("ks1"));
    let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
        &Request::Query(
            "SELECT host_id, rpc_address, data_center, rack, tokens FROM system.local",
            params(false),
        ),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("rows")
    };
    assert_eq!(rows.rows_count, 1);
    let names: Vec<&str> = rows.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["host_id", "rpc_address", "data_center", "rack", "tokens"]
    );
    let Answer::Message(Response::Error(e)) = r.answer(
        &Request::Query("SELECT bogus FROM system.local", params(false)),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("error")
    };
    assert_eq!(e.code, ErrorCode::Invalid);
    // A system table the stub lacks (ScyllaDB's) is unconfigured, as on Cassandra; a
    // user table gets the configured shape.
    let Answer::Message(Response::Error(e)) = r.answer(
        &Request::Query(
            "SELECT keyspace_name, table_name, partitioner FROM system_schema.scylla_tables",
            params(false),
        ),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("error")
    };
    assert_eq!(e.code, ErrorCode::Invalid);
    assert!(e.message.contains("unconfigured table"), "{}", e.message);
    let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
        &Request::Query("SELECT v FROM ks1.kv WHERE k = 1", params(false)),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("rows of the shape")
    };
    assert_eq!(rows.rows_count, 1);
    let Answer::Message(Response::Result(ResultBody::Void)) = r.answer(
        &Request::Query("INSERT INTO t (k) VALUES (1)", params(false)),
        &mut ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("void")
    };
}

/// ScyllaDB's table of keyspaces in tablets: empty on an emulated ScyllaDB node, the
/// routed keyspace (NetworkTopologyStrategy) with its tablets when it is in tablets.
#[test]
fn scylla_keyspaces_lists_the_keyspace_in_tablets() {
    use std::collections::BTreeMap;
    let select = |r: &mut Responder, cql: &'static str| {
        let mut ks = None;
        match r.answer(
            &Request::Query(cql, params(false)),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) {
            Answer::Message(Response::Result(ResultBody::Rows(rows))) => rows,
            _ => panic!("rows of {cql}"),
        }
    };
    const TABLETS: &str =
        "SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces";
    let addr = "127.0.0.1:9042".parse().unwrap();
    let mut scylla = Responder::new(addr, Arc::default()).with_scylla_keyspaces();
    assert_eq!(select(&mut scylla, TABLETS).rows_count, 0);
    let mut r = Responder::new(addr, Arc::default())
        .with_scylla_keyspaces()
        .with_tablet_keyspace("ks", 3, 24);
    let rows = select(&mut r, TABLETS);
    let got: Vec<(String, Option<i32>)> = rows
        .typed::<(String, Option<i32>)>()
        .unwrap()
        .map(|row| row.unwrap())
        .collect();
    assert_eq!(got, vec![("ks".to_owned(), Some(24))]);
    let rows = select(
        &mut r,
        "SELECT keyspace_name, replication FROM system_schema.keyspaces",
    );
    let replication: Vec<(String, BTreeMap<String, String>)> = rows
        .typed::<(String, BTreeMap<String, String>)>()
        .unwrap()
        .map(|row| row.unwrap())
        .filter(|(k, _)| k == "ks")
        .collect();
    assert_eq!(
        replication,
        vec![(
            "ks".to_owned(),
            BTreeMap::from([
                (
                    "class".to_owned(),
                    "org.apache.cassandra.locator.NetworkTopologyStrategy".to_owned()
                ),
                ("datacenter1".to_owned(), "3".to_owned())
            ])
        )]
    );
}

#[test]
fn ids_depend_on_text_and_keyspace_only() {
    assert_eq!(statement_id("a", None), statement_id("a", None));
    assert_ne!(statement_id("a", None), statement_id("a", Some("k")));
    assert_ne!(statement_id("a", None), statement_id("b", None));
}

/// `ALTER TABLE` changes the columns of its table's statements, which keep their ids; an
/// EXECUTE that sends their old result metadata id (a connection that carries ids) gets
/// METADATA_CHANGED with the new columns and id, whole or a page of them.
#[test]
fn an_altered_table_s_statements_answer_a_stale_id_with_their_new_columns() {
    let shape = Arc::new(Shape {
        rows: 3,
        ..Shape::default()
    });
    let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
    let mut ks = Some("ks".to_owned());
    let mut prepare = |r: &mut Responder, ids| -> Prepared {
        match r.answer_with(
            &Request::Prepare {
                query: "SELECT * FROM t WHERE k = ?",
                keyspace: None,
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
            ids,
        ) {
            Answer::Message(Response::Result(ResultBody::Prepared(p))) => *p,
            _ => panic!("prepared"),
        }
    };
    assert_eq!(
        prepare(&mut r, MetadataIds::ByVersion).result_metadata_id,
        None
    );
    let p = prepare(&mut r, MetadataIds::Negotiated);
    let first = p.result_metadata_id.clone().unwrap();
    let mut ks = Some("ks".to_owned());
    let mut execute = |r: &mut Responder, sent: &[u8], params: DecodedParameters<'_>| {
        r.answer_with(
            &Request::Execute {
                id: &p.id,
                result_metadata_id: Some(sent),
                params,
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
            MetadataIds::Negotiated,
        )
    };
    let Answer::Body(quiet) = execute(&mut r, &first, params(true)) else {
        panic!("body")
    };
    // GLOBAL_TABLES_SPEC | NO_METADATA, one column.
    assert_eq!(&quiet[4..12], &[0, 0, 0, 5, 0, 0, 0, 1]);

    let mut session_ks = Some("ks".to_owned());
    let Answer::Message(Response::Result(ResultBody::SchemaChange(change))) = r.answer(
        &Request::Query("ALTER TABLE t ADD w int", params(false)),
        &mut session_ks,
        false,
        ProtocolVersion::V4,
    ) else {
        panic!("schema change")
    };
    assert_eq!(
        change.target,
        doppio_proto::response::SchemaTarget::Table("ks".into(), "t".into())
    );
    let Answer::Body(changed) = execute(&mut r, &first, params(true)) else {
        panic!("body")
    };
    let again = prepare(&mut r, MetadataIds::Negotiated);
    assert_eq!(again.id, p.id);
    let new = again.result_metadata_id.unwrap();
    assert_ne!(new, first);
    // GLOBAL_TABLES_SPEC | METADATA_CHANGED, two columns, the new id, then the columns.
    assert_eq!(&changed[4..14], &[0, 0, 0, 9, 0, 0, 0, 2, 0, 16]);
    assert_eq!(&changed[14..30], &new[..]);
    // The new id: quiet again.
    let Answer::Body(quiet) = execute(&mut r, &new, params(true)) else {
        panic!("body")
    };
    assert_eq!(&quiet[4..12], &[0, 0, 0, 5, 0, 0, 0, 2]);
    // A page of it, with the stale id: the page's rows with the new columns and id.
    let mut page = params(true);
    page.params.page_size = Some(2);
    let Answer::Message(Response::Result(ResultBody::Rows(rows))) = execute(&mut r, &first, page)
    else {
        panic!("a page")
    };
    assert_eq!(rows.rows_count, 2);
    assert!(rows.metadata.paging_state.is_some());
    assert_eq!(rows.metadata.new_metadata_id.as_deref(), Some(&new));
    assert_eq!(rows.columns().len(), 2);
}
