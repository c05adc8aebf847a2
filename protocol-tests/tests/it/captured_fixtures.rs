//! Decodes every committed frame captured from Cassandra (`fixtures/captured/*.bin`,
//! recorded by `cassandra_captured.rs` with `DOPPIO_RECORD_FIXTURES=1`). No server needed.

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, Opcode};
use doppio_proto::response::{ErrorCode, ErrorDetail, Event, Response, ResponseFrame, ResultBody};
use doppio_proto::types::ColumnType;
use protocol_tests::captured_dir;
use protocol_tests::fixtures::to_hex;
use protocol_tests::reencode::reencode_response;

const MAX: usize = 1 << 20;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(captured_dir())
        .expect("fixtures/captured exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read fixture"))
        })
        .collect();
    out.sort();
    out
}

fn one_frame(name: &str, bytes: &[u8]) -> Frame {
    let mut buf = BytesMut::from(bytes);
    let f = FrameDecoder::new(Direction::Response)
        .decode(&mut buf)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}: incomplete"));
    assert!(buf.is_empty(), "{name}: trailing bytes");
    f
}

#[test]
fn every_captured_frame_is_one_response_frame() {
    let all = fixtures();
    assert!(all.len() >= 15, "only {} captured frames", all.len());
    for (name, bytes) in &all {
        let f = one_frame(name, bytes);
        let expected = if name.contains("error") {
            Opcode::Error
        } else if name.contains("event") {
            Opcode::Event
        } else if name.contains("ready") {
            Opcode::Ready
        } else if name.contains("supported") {
            Opcode::Supported
        } else {
            Opcode::Result
        };
        assert_eq!(f.header.opcode, expected, "{name}");
    }
}

fn decode(name: &str) -> ResponseFrame {
    let (_, bytes) = fixtures()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no captured frame {name}"));
    let f = one_frame(name, &bytes);
    ResponseFrame::decode(&f, Some(Compression::Lz4), MAX).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// True if the frame names a vector type: Cassandra spells it `VectorType(E , N)` and
/// doppio-proto `VectorType(E, N)` (see `vector_class_name_is_spelled_as_cassandra_does`).
fn has_vector_type(bytes: &[u8]) -> bool {
    bytes.windows(11).any(|w| w == b"VectorType(")
}

/// What Cassandra sent decodes with doppio-proto and re-encodes to the very same bytes
/// (frames naming a vector type: to the same message).
#[test]
fn every_captured_frame_decodes_and_reencodes_byte_exact() {
    let mut exact = 0;
    for (name, bytes) in fixtures() {
        if has_vector_type(&bytes) {
            let f = one_frame(&name, &bytes);
            let decoded = ResponseFrame::decode(&f, Some(Compression::Lz4), MAX).unwrap();
            let mut again = reencode_response(&decoded, None).unwrap();
            let f2 = FrameDecoder::new(Direction::Response)
                .decode(&mut again)
                .unwrap()
                .unwrap();
            assert_eq!(
                ResponseFrame::decode(&f2, None, MAX).unwrap(),
                decoded,
                "{name}"
            );
            continue;
        }
        exact += 1;
        let f = one_frame(&name, &bytes);
        let decoded = ResponseFrame::decode(&f, Some(Compression::Lz4), MAX)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if f.header.flags.contains(Flags::COMPRESSION) {
            let plain = Compression::Lz4.decompress(&f.body, MAX).unwrap();
            let again = reencode_response(&decoded, None).unwrap();
            assert_eq!(to_hex(&again[9..]), to_hex(&plain), "{name}");
        } else {
            let again = reencode_response(&decoded, None).unwrap();
            assert_eq!(to_hex(&again), to_hex(&bytes), "{name}");
        }
    }
    assert!(exact >= 15, "{exact} frames compared byte for byte");
}

/// Cassandra 5 writes a vector's class as `VectorType(<element> , <dimension>)` (a space
/// before the comma); doppio-proto's `ColumnType::class_name` writes `(<element>, <dim>)`.
/// Clients parse both, but a server built on doppio-proto (the stub) does not send what
/// Cassandra sends, and captured frames with vectors do not re-encode byte for byte.
#[test]
fn vector_class_name_is_spelled_as_cassandra_does() {
    let t = ColumnType::Vector {
        element: Box::new(ColumnType::Float),
        dimension: 3,
    };
    assert_eq!(
        t.class_name(),
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType , 3)"
    );
}

#[test]
fn captured_frames_mean_what_the_session_did() {
    let err = |name: &str| match decode(name).response {
        Response::Error(e) => e,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(err("session_error_syntax").code, ErrorCode::SyntaxError);
    assert_eq!(err("session_error_invalid").code, ErrorCode::Invalid);
    let exists = err("session_error_already_exists");
    assert!(
        matches!(exists.detail, ErrorDetail::AlreadyExists { ref table, .. } if table == "counters")
    );
    let unprepared = err("session_error_unprepared");
    assert!(
        matches!(unprepared.detail, ErrorDetail::Unprepared { ref id } if id[..4] == [0xde, 0xad, 0xbe, 0xef])
    );

    let Response::Event(Event::SchemaChange(change)) =
        decode("session_event_schema_change").response
    else {
        panic!("not a schema event")
    };
    assert_eq!(change.change, "CREATED");

    let Response::Result(ResultBody::Rows(rows)) = decode("session_result_rows_all_types").response
    else {
        panic!("not rows")
    };
    assert_eq!(rows.rows_count, 2);
    assert_eq!(rows.metadata.columns.len(), 25);
    assert_eq!(rows.metadata.columns[0].typ, ColumnType::Int);
    assert!(rows
        .metadata
        .columns
        .iter()
        .any(|c| c.typ == ColumnType::Duration));

    let Response::Result(ResultBody::Rows(rows)) = decode("session_result_rows_paged").response
    else {
        panic!("not rows")
    };
    assert!(rows.metadata.paging_state.is_some());

    let traced = decode("session_result_rows_traced");
    assert!(traced.tracing_id.is_some());

    let Response::Result(ResultBody::Prepared(p)) = decode("session_result_prepared").response
    else {
        panic!("not prepared")
    };
    assert_eq!(p.metadata.pk_indexes, [1]);

    let Response::Result(ResultBody::Rows(rows)) = decode("session_result_rows_lz4").response
    else {
        panic!("not rows")
    };
    assert_eq!(rows.rows_count, 1);
}
