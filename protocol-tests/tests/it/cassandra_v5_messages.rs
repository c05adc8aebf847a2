//! Protocol v5 messages against the real Cassandra 5.0, encoded and decoded by doppio-proto
//! alone (no hand-written bytes): STARTUP as a bare v5 envelope, then segments; QUERY,
//! PREPARE and BATCH with the v5 keyspace field instead of USE; now-in-seconds moving a
//! TTL'd cell out of its lifetime; EXECUTE with the result metadata id PREPARED gave; and
//! METADATA_CHANGED after an ALTER TABLE, whose new id then quiets the next result. What
//! the spec's text leaves open (field order, which flags a server honours) is settled here
//! by the server.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, FrameHeader, HEADER_LEN};
use doppio_proto::request::{
    encode_envelope, Batch, BatchStatement, BatchType, Execute, Prepare, Query, QueryParameters,
    RequestBody, Startup,
};
use doppio_proto::response::{ErrorCode, Prepared, Response, ResponseFrame, ResultBody};
use doppio_proto::rows::Rows;
use doppio_proto::segment::{
    EnvelopeAssembler, SegmentCompression, SegmentDecoder, SegmentEncoder,
};
use doppio_proto::wire::RawValue;
use doppio_proto::{MetadataIds, ProtocolVersion};
use doppio_test_support::CASSANDRA;
use protocol_tests::unique_keyspace;

const V5: ProtocolVersion = ProtocolVersion::V5;
const MAX: usize = 1 << 26;

/// A v5 connection made of doppio-proto's parts only.
struct V5 {
    socket: TcpStream,
    inbox: BytesMut,
    envelopes: BytesMut,
    assembler: EnvelopeAssembler,
    next_stream: i16,
    /// The segments consumed since the last answer was returned.
    wire: Vec<u8>,
    /// The segments that carried the last answer and nothing else (empty when it shared
    /// them with another envelope): what [`V5::record`] keeps as a fixture.
    last_wire: Vec<u8>,
}

impl V5 {
    fn open() -> Self {
        let mut socket =
            TcpStream::connect_timeout(&CASSANDRA.addr(), Duration::from_secs(5)).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut out = BytesMut::new();
        let startup = Startup {
            options: &[("CQL_VERSION", "3.0.0")],
        };
        encode_envelope(&mut out, V5, 0, Flags::NONE, &startup).unwrap();
        socket.write_all(&out).unwrap();
        // READY comes as a bare envelope (framing starts after it).
        let mut head = [0u8; HEADER_LEN];
        socket.read_exact(&mut head).unwrap();
        let header = FrameHeader::decode(&head).unwrap();
        assert_eq!(header.version, V5, "Cassandra answers a v5 STARTUP in v5");
        let mut body = vec![0u8; header.length as usize];
        socket.read_exact(&mut body).unwrap();
        let ready = ResponseFrame::decode(
            &Frame {
                header,
                body: Bytes::from(body),
            },
            None,
            MAX,
        )
        .unwrap();
        assert_eq!(ready.response, Response::Ready);
        Self {
            socket,
            inbox: BytesMut::new(),
            envelopes: BytesMut::new(),
            assembler: EnvelopeAssembler::new(MAX),
            next_stream: 1,
            wire: Vec::new(),
            last_wire: Vec::new(),
        }
    }

    /// Sends one request in a segment and returns its answer.
    fn call(&mut self, request: &impl RequestBody) -> ResponseFrame {
        let stream = self.next_stream;
        self.next_stream += 1;
        let mut envelope = BytesMut::new();
        encode_envelope(&mut envelope, V5, stream, Flags::NONE, request).unwrap();
        let mut wire = BytesMut::new();
        SegmentEncoder::new(SegmentCompression::None)
            .encode(&envelope, &mut wire)
            .unwrap();
        self.socket.write_all(&wire).unwrap();
        let answer = self.recv();
        assert_eq!(answer.stream, stream);
        assert_eq!(answer.version, V5);
        answer
    }

    fn recv(&mut self) -> ResponseFrame {
        let envelopes = FrameDecoder::new(Direction::Response).with_version(V5);
        let segments = SegmentDecoder::new(SegmentCompression::None);
        loop {
            if let Some(frame) = envelopes.decode(&mut self.envelopes).unwrap() {
                self.last_wire = std::mem::take(&mut self.wire);
                if !self.envelopes.is_empty() {
                    self.last_wire.clear();
                }
                return ResponseFrame::decode(&frame, None, MAX).unwrap();
            }
            let before = self.inbox.clone();
            if let Some(segment) = segments.decode(&mut self.inbox).unwrap() {
                let used = before.len() - self.inbox.len();
                self.wire.extend_from_slice(&before[..used]);
                self.assembler.push(segment, &mut self.envelopes).unwrap();
                continue;
            }
            let mut chunk = [0u8; 65536];
            let n = self.socket.read(&mut chunk).unwrap();
            assert!(n > 0, "Cassandra closed the connection");
            self.inbox.extend_from_slice(&chunk[..n]);
        }
    }

    /// Keeps the segments of the last answer as `fixtures/captured/v5_{label}.seg` when
    /// `DOPPIO_RECORD_FIXTURES=1` (read back by `captured_v5_fixtures.rs`).
    fn record(&self, label: &str) {
        if std::env::var("DOPPIO_RECORD_FIXTURES").is_ok_and(|v| v == "1") {
            assert!(
                !self.last_wire.is_empty(),
                "{label}: the answer shared its segment with another envelope"
            );
            let path = protocol_tests::captured_dir().join(format!("v5_{label}.seg"));
            std::fs::write(path, &self.last_wire).unwrap();
        }
    }

    /// A QUERY that must succeed; its result.
    fn query(&mut self, cql: &str, params: QueryParameters<'_>) -> ResultBody {
        let q = Query {
            query: cql,
            params,
            values: &(),
        };
        result(self.call(&q), cql)
    }

    /// EXECUTE of `prepared` with result metadata id `rid`, skipping the metadata, for the
    /// row of int key `k`.
    fn execute(&mut self, prepared: &Prepared, rid: &[u8], k: i32) -> ResponseFrame {
        let key = k.to_be_bytes();
        let e = Execute {
            id: &prepared.id,
            result_metadata_id: Some(rid),
            metadata_ids: MetadataIds::ByVersion,
            params: QueryParameters {
                skip_metadata: true,
                ..one()
            },
            values: &&[RawValue::Bytes(&key)][..],
            columns: None,
        };
        self.call(&e)
    }

    fn prepare(&mut self, cql: &str, keyspace: Option<&str>) -> Prepared {
        match result(
            self.call(&Prepare {
                query: cql,
                keyspace,
            }),
            cql,
        ) {
            ResultBody::Prepared(p) => *p,
            other => panic!("{cql}: not PREPARED but {other:?}"),
        }
    }
}

fn result(frame: ResponseFrame, what: &str) -> ResultBody {
    match frame.response {
        Response::Result(r) => r,
        other => panic!("{what}: {other:?}"),
    }
}

fn rows(r: ResultBody) -> Rows {
    match r {
        ResultBody::Rows(rows) => rows,
        other => panic!("not Rows but {other:?}"),
    }
}

fn one() -> QueryParameters<'static> {
    QueryParameters {
        consistency: Consistency::One,
        ..QueryParameters::default()
    }
}

#[test]
fn v5_messages_round_trip_with_cassandra() {
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let mut c = V5::open();
    let ks = unique_keyspace("v5_messages");
    c.query(
        &format!(
            "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', \
             'replication_factor': 1}}"
        ),
        one(),
    );
    // The keyspace field instead of USE or a qualified name: in QUERY...
    let in_ks = QueryParameters {
        keyspace: Some(&ks),
        ..one()
    };
    c.query("CREATE TABLE t (k int PRIMARY KEY, v int)", in_ks);
    c.query("INSERT INTO t (k, v) VALUES (1, 10)", in_ks);

    // ... in BATCH ...
    let insert = c.prepare("INSERT INTO t (k, v) VALUES (?, ?)", Some(&ks));
    let (k2, v2, k3, v3) = (
        2i32.to_be_bytes(),
        20i32.to_be_bytes(),
        3i32.to_be_bytes(),
        30i32.to_be_bytes(),
    );
    let first = [RawValue::Bytes(&k2), RawValue::Bytes(&v2)];
    let second = [RawValue::Bytes(&k3), RawValue::Bytes(&v3)];
    let batch = Batch {
        kind: BatchType::Unlogged,
        statements: &[
            BatchStatement::Prepared {
                id: &insert.id,
                values: &&first[..],
                columns: None,
            },
            BatchStatement::Query {
                query: "INSERT INTO t (k, v) VALUES (?, ?)",
                values: &&second[..],
            },
        ],
        consistency: Consistency::One,
        serial_consistency: None,
        timestamp: None,
        keyspace: Some(&ks),
        now_in_seconds: None,
    };
    assert_eq!(result(c.call(&batch), "BATCH"), ResultBody::Void);
    c.record("result_void_batch");

    // ... and in PREPARE, whose answer carries the v5 result metadata id.
    let select = c.prepare("SELECT k, v FROM t WHERE k = ?", Some(&ks));
    c.record("result_prepared");
    let rid = select
        .result_metadata_id
        .clone()
        .expect("a v5 PREPARED carries a result metadata id");
    assert!(!rid.is_empty());
    assert_eq!(select.metadata.pk_indexes, vec![0]);
    for (k, v) in [(1i32, 10i32), (2, 20), (3, 30)] {
        let r = rows(result(c.execute(&select, &rid, k), "EXECUTE"));
        if k == 1 {
            c.record("result_rows_no_metadata");
        }
        assert!(r.metadata.no_metadata, "skip_metadata was honoured");
        assert_eq!(r.metadata.new_metadata_id, None);
        let row = r.iter().next().unwrap().unwrap();
        let cells: Vec<_> = row.cells().collect();
        assert_eq!(cells[0], Some(&k.to_be_bytes()[..]));
        assert_eq!(cells[1], Some(&v.to_be_bytes()[..]));
    }

    // METADATA_CHANGED: a statement whose columns change says so with the new columns and
    // a new id, even though the client asked to skip metadata; the new id quiets it.
    let star = c.prepare("SELECT * FROM t WHERE k = ?", Some(&ks));
    let old = star.result_metadata_id.clone().unwrap();
    assert_eq!(star.result_metadata.columns.len(), 2);
    c.query("ALTER TABLE t ADD w text", in_ks);
    let run = |c: &mut V5, rid: &[u8]| c.execute(&star, rid, 1);
    let changed = match run(&mut c, &old).response {
        Response::Result(ResultBody::Rows(r)) => r,
        // The node may first forget the statement (its schema changed): prepare again.
        Response::Error(e) if e.code == ErrorCode::Unprepared => {
            let again = c.prepare("SELECT * FROM t WHERE k = ?", Some(&ks));
            assert_eq!(again.id, star.id);
            rows(result(run(&mut c, &old), "EXECUTE after re-prepare"))
        }
        other => panic!("EXECUTE after ALTER: {other:?}"),
    };
    c.record("result_rows_metadata_changed");
    let new_id = changed
        .metadata
        .new_metadata_id
        .clone()
        .expect("METADATA_CHANGED after ALTER TABLE");
    assert_ne!(*new_id, old);
    assert!(!changed.metadata.no_metadata);
    let names: Vec<_> = changed
        .metadata
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["k", "v", "w"]);
    let quiet = rows(result(run(&mut c, &new_id), "EXECUTE with the new id"));
    assert!(quiet.metadata.no_metadata);
    assert_eq!(quiet.metadata.new_metadata_id, None);

    // now_in_seconds: a cell with a 100 s TTL is alive now and gone 1000 s from now.
    c.query("INSERT INTO t (k, v) VALUES (9, 90) USING TTL 100", in_ks);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i32;
    let at = |c: &mut V5, when: i32| {
        let r = rows(c.query(
            "SELECT v FROM t WHERE k = 9",
            QueryParameters {
                now_in_seconds: Some(when),
                ..in_ks
            },
        ));
        r.rows_count
    };
    assert_eq!(at(&mut c, now), 1, "alive now");
    assert_eq!(at(&mut c, now + 1000), 0, "expired 1000 s from now");

    // A v5 error decodes too: an id the node never prepared.
    let unknown = Execute {
        id: &[0xde, 0xad],
        result_metadata_id: Some(&rid),
        metadata_ids: MetadataIds::ByVersion,
        params: one(),
        values: &(),
        columns: None,
    };
    match c.call(&unknown).response {
        Response::Error(e) => assert_eq!(e.code, ErrorCode::Unprepared),
        other => panic!("EXECUTE of an unknown id: {other:?}"),
    }
    c.record("error_unprepared");
    c.query(&format!("DROP KEYSPACE {ks}"), one());
}
