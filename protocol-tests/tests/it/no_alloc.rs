//! No allocation on the hot paths: encoding an EXECUTE into a reused buffer, and decoding
//! a one-row RESULT (header, body, the row's values) allocate nothing once warmed up.
//!
//! The test binary installs a counting global allocator (`main.rs`); what is counted is the
//! measuring thread's own allocations, not those of tests running beside it.

use bytes::BytesMut;
use doppio_alloc_count::measure;
use doppio_proto::consistency::Consistency;
use doppio_proto::deserialize::DeserializeValue;
use doppio_proto::frame::{Direction, Flags, FrameDecoder};
use doppio_proto::request::{encode_request, Execute, ExecuteTemplate, QueryParameters};
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::types::ColumnType;
use doppio_proto::wire::RawValue;
use doppio_proto::wire::Reader;
use doppio_proto::{MetadataIds, ProtocolVersion};
use protocol_tests::fixtures::parse_hex;

const ROUNDS: usize = 1000;

fn one_row_result() -> Vec<u8> {
    parse_hex(
        "84 00 00 01 08 00000024
         00000002 00000001 00000001 0002 6b73 0001 74 0001 76 0009
         00000001 00000004 0000002a",
    )
}

#[test]
fn frame_decoder_reused_buffer_allocates_nothing() {
    let frame = one_row_result();
    let d = FrameDecoder::new(Direction::Response);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let round = |buf: &mut BytesMut| {
        buf.extend_from_slice(&frame);
        let f = d.decode(buf).expect("valid").expect("whole frame");
        let mut r = Reader::new(&f.body);
        let kind = r.read_int("kind").expect("kind");
        assert_eq!(kind, 2);
        f.body.len()
    };
    for _ in 0..10 {
        round(&mut buf);
    }
    let (total, s) = measure(|| (0..ROUNDS).map(|_| round(&mut buf)).sum::<usize>());
    assert_eq!(total, ROUNDS * (frame.len() - 9));
    assert_eq!(s.count, 0, "{s:?}");
}

/// The counter works: without this, a broken allocator would make every test above pass.
#[test]
fn the_counting_allocator_counts() {
    let (v, s) = measure(|| std::hint::black_box(Vec::<u8>::with_capacity(100)));
    assert_eq!(s.count, 1);
    assert_eq!(s.largest, 100);
    drop(v);
    let (_, s) = measure(|| {
        let mut b = BytesMut::with_capacity(10);
        b.extend_from_slice(&[0; 100]);
    });
    assert!(s.count >= 2, "{s:?}");
}

const ID: &[u8] = &[0x11; 16];

fn params() -> QueryParameters<'static> {
    QueryParameters {
        consistency: Consistency::LocalQuorum,
        skip_metadata: true,
        ..Default::default()
    }
}

#[test]
fn execute_template_encode_allocates_nothing() {
    template_encode_allocates_nothing(ProtocolVersion::V4, None);
}

#[test]
fn v5_execute_template_encode_allocates_nothing() {
    template_encode_allocates_nothing(ProtocolVersion::V5, Some(&[7; 16]));
}

fn template_encode_allocates_nothing(version: ProtocolVersion, result_metadata_id: Option<&[u8]>) {
    let template = ExecuteTemplate::new(
        version,
        MetadataIds::ByVersion,
        ID,
        result_metadata_id,
        3,
        &params(),
        Flags::NONE,
    )
    .expect("template");
    let k = 42i32.to_be_bytes();
    let values = [
        RawValue::Bytes(&k),
        RawValue::Bytes(b"hello"),
        RawValue::Null,
    ];
    let mut buf = BytesMut::with_capacity(4096);
    for stream in 0..10 {
        buf.clear();
        template
            .encode(&mut buf, stream, &values[..], None)
            .expect("encode");
    }
    let expected = buf.clone();
    let ((), s) = measure(|| {
        for _ in 0..ROUNDS {
            buf.clear();
            template
                .encode(&mut buf, 9, &values[..], None)
                .expect("encode");
        }
    });
    assert_eq!(s.count, 0, "{s:?}");
    assert_eq!(buf, expected);
}

#[test]
fn plain_execute_encode_allocates_nothing() {
    let k = 42i32.to_be_bytes();
    let values = [
        RawValue::Bytes(&k),
        RawValue::Bytes(b"hello"),
        RawValue::Unset,
    ];
    let mut buf = BytesMut::with_capacity(4096);
    let execute = Execute {
        id: ID,
        result_metadata_id: None,
        metadata_ids: MetadataIds::ByVersion,
        params: params(),
        values: &values[..],
        columns: None,
    };
    for stream in 0..10 {
        buf.clear();
        encode_request(&mut buf, stream, Flags::NONE, &execute).unwrap();
    }
    let expected = buf.clone();
    let ((), s) = measure(|| {
        for _ in 0..ROUNDS {
            buf.clear();
            encode_request(&mut buf, 9, Flags::NONE, &execute).expect("encode");
        }
    });
    assert_eq!(s.count, 0, "{s:?}");
    assert_eq!(buf, expected);
}

/// A one-row RESULT as a prepared statement executed with `skip_metadata` gets it:
/// NO_METADATA, two columns (int 42, text "hello").
fn one_row_no_metadata() -> Vec<u8> {
    parse_hex(
        "84 00 0001 08 00000021
         00000002 00000004 00000002
         00000001
         00000004 0000002a
         00000005 68656c6c6f",
    )
}

/// Decodes one RESULT from `buf` and sums its row's values (int + text length).
fn decode_one_row(d: &FrameDecoder, buf: &mut BytesMut) -> i64 {
    let f = d.decode(buf).expect("valid").expect("whole frame");
    let r = ResponseFrame::decode(&f, None, 1 << 20).expect("RESULT");
    let Response::Result(ResultBody::Rows(rows)) = r.response else {
        panic!("not rows")
    };
    assert_eq!(rows.rows_count, 1);
    // The row reader, and the typed deserializers with the prepared statement's types (a
    // skip_metadata result carries none).
    let mut sum = 0;
    for row in rows.iter() {
        let row = row.expect("valid row");
        let mut cells = row.cells();
        let k = cells.next().expect("k");
        let v = cells.next().expect("v");
        let k = i32::deserialize(&ColumnType::Int, k).expect("int");
        let v = <&str>::deserialize(&ColumnType::Varchar, v).expect("text");
        sum += i64::from(k) + v.len() as i64;
    }
    sum
}

#[test]
fn one_row_result_without_metadata_decodes_without_allocating() {
    let frame = one_row_no_metadata();
    let d = FrameDecoder::new(Direction::Response);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    for _ in 0..10 {
        buf.extend_from_slice(&frame);
        assert_eq!(decode_one_row(&d, &mut buf), 47);
    }
    let (sum, s) = measure(|| {
        (0..ROUNDS)
            .map(|_| {
                buf.extend_from_slice(&frame);
                decode_one_row(&d, &mut buf)
            })
            .sum::<i64>()
    });
    assert_eq!(sum, 47 * ROUNDS as i64);
    assert_eq!(s.count, 0, "{s:?}");
}

/// With full metadata, doppio-proto owns the column specs (keyspace, table, name and type
/// per column: `RowsMetadata` is built once per result). Bounded, but not zero: a client
/// that wants zero allocations executes prepared statements with `skip_metadata`.
#[test]
fn one_row_result_with_metadata_allocates_only_its_column_specs() {
    let frame = one_row_result();
    let d = FrameDecoder::new(Direction::Response);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let round = |buf: &mut BytesMut| {
        buf.extend_from_slice(&frame);
        let f = d.decode(buf).expect("valid").expect("whole");
        let r = ResponseFrame::decode(&f, None, 1 << 20).expect("RESULT");
        let Response::Result(ResultBody::Rows(rows)) = r.response else {
            return false;
        };
        // Typed reading through the metadata: no allocation beyond the decode.
        let mut typed = rows.typed::<(i32,)>().expect("typed");
        matches!(typed.next(), Some(Ok((42,))))
    };
    for _ in 0..10 {
        assert!(round(&mut buf));
    }
    let (ok, s) = measure(|| round(&mut buf));
    assert!(ok);
    // One column: the Vec of specs, and keyspace, table and name strings, and no more
    // than that again for the typed read.
    assert!(s.count <= 8, "{s:?}");
    assert!(s.count >= 1, "{s:?}");
    assert!(s.peak_in_use < 1024, "{s:?}");
}

/// BUG (doppio-proto rows.rs `Row::raw` and `Row::get`): the "index past the columns" error
/// is built with `ok_or(ProtoError::InvalidValue { detail: format!(..) })`, evaluated on
/// every call, so reading a cell by index allocates its would-be error message even when
/// the index is valid (one allocation per `raw`, two per `get`). `ok_or_else` fixes it.
#[test]
fn row_raw_by_index_allocates_nothing() {
    let frame = one_row_no_metadata();
    let f = FrameDecoder::new(Direction::Response)
        .decode(&mut BytesMut::from(&frame[..]))
        .unwrap()
        .unwrap();
    let r = ResponseFrame::decode(&f, None, 1 << 20).unwrap();
    let Response::Result(ResultBody::Rows(rows)) = r.response else {
        panic!("not rows")
    };
    let row = rows.iter().next().unwrap().unwrap();
    let _ = row.raw(0).unwrap();
    let (k, s) = measure(|| row.raw(0).expect("cell 0"));
    assert_eq!(k, Some(&[0, 0, 0, 42][..]));
    assert_eq!(s.count, 0, "{s:?}");
}
