//! Tests of the request messages in protocol v4: byte layouts, round trips, templates, and
//! bodies that must be refused.

use bytes::{BufMut, BytesMut};

use super::*;
use crate::compression::Compression;
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::{Direction, Flags, FrameHeader, Opcode, HEADER_LEN};
use crate::metadata::ColumnSpec;
use crate::values::QueryValues;
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire::RawValue;

fn decode(buf: &[u8]) -> RequestFrame<'_> {
    let h = FrameHeader::decode(buf).unwrap();
    assert_eq!(h.length as usize, buf.len() - HEADER_LEN);
    Request::decode(&h, &buf[HEADER_LEN..]).unwrap()
}

#[test]
fn query_layout_is_byte_exact() {
    let mut buf = BytesMut::new();
    let values = [RawValue::Bytes(&[0, 0, 0, 7]), RawValue::Null];
    let q = Query {
        query: "SELECT ?",
        params: QueryParameters {
            consistency: Consistency::One,
            page_size: Some(100),
            ..Default::default()
        },
        values: &values[..],
    };
    encode_request(&mut buf, 3, Flags::NONE, &q).unwrap();
    let expected: Vec<u8> = [
        &[0x04, 0x00, 0x00, 0x03, 0x07][..], // header: v4 request, no flags, stream 3, QUERY
        &[0, 0, 0, 33],                      // body length: 4 + 8 + 2 + 1 + 2 + 8 + 4 + 4
        &[0, 0, 0, 8],                       // [long string] length
        b"SELECT ?",
        &[0x00, 0x01],             // consistency ONE
        &[0x05],                   // flags: VALUES | PAGE_SIZE
        &[0x00, 0x02],             // 2 values
        &[0, 0, 0, 4, 0, 0, 0, 7], // [value] int 7
        &[0xff, 0xff, 0xff, 0xff], // null
        &[0, 0, 0, 100],           // page size
    ]
    .concat();
    assert_eq!(&buf[..], &expected[..]);
    let back = decode(&buf);
    let Request::Query(text, p) = back.request else {
        panic!()
    };
    assert_eq!(text, "SELECT ?");
    assert_eq!(p.params.page_size, Some(100));
    assert_eq!(p.values, vec![(None, values[0]), (None, values[1])]);
}

#[test]
fn execute_template_equals_plain_execute_and_patches_stream() {
    let params = QueryParameters {
        consistency: Consistency::LocalQuorum,
        serial_consistency: Some(Consistency::LocalSerial),
        timestamp: Some(1_700_000_000_000_000),
        skip_metadata: true,
        ..Default::default()
    };
    let values = [RawValue::Bytes(b"k1"), RawValue::Unset];
    let t = ExecuteTemplate::new(
        ProtocolVersion::V4,
        MetadataIds::ByVersion,
        b"\x01\x02",
        None,
        2,
        &params,
        Flags::NONE,
    )
    .unwrap();
    let mut a = BytesMut::new();
    t.encode(&mut a, 42, &values[..], None).unwrap();
    let mut b = BytesMut::new();
    let e = Execute {
        id: b"\x01\x02",
        result_metadata_id: None,
        metadata_ids: MetadataIds::ByVersion,
        params,
        values: &values[..],
        columns: None,
    };
    encode_request(&mut b, 42, Flags::NONE, &e).unwrap();
    assert_eq!(a, b);
    // Wrong arity is an error and leaves the buffer as it was.
    let before = a.clone();
    assert!(t.encode(&mut a, 1, &values[..1], None).is_err());
    assert_eq!(a, before);
    let back = decode(&b);
    assert_eq!(
        back.request,
        Request::Execute {
            id: b"\x01\x02",
            result_metadata_id: None,
            params: DecodedParameters {
                params,
                values: vec![(None, values[0]), (None, values[1])],
            }
        }
    );
}

/// Values that name the marker they lack (as a struct bound by name does) give that
/// error rather than the counts, on both encoders; others give the counts.
#[test]
fn a_count_mismatch_lets_the_values_name_the_column() {
    struct NamesTheGap;
    impl QueryValues for NamesTheGap {
        fn count(&self) -> usize {
            1
        }
        fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
            buf.put_i32(-1);
            match columns {
                Some(c) if c.len() != 1 => Err(ProtoError::Value {
                    column: "1 `b`".into(),
                    reason: Box::new(crate::ValueError::NoFieldForColumn),
                }),
                _ => Ok(()),
            }
        }
    }
    let int = |n: &str| ColumnSpec::new("ks", "t", n, crate::types::ColumnType::Int);
    let cols = [int("a"), int("b")];
    let params = QueryParameters::default();
    let t = ExecuteTemplate::new(
        ProtocolVersion::V4,
        MetadataIds::ByVersion,
        b"id",
        None,
        2,
        &params,
        Flags::NONE,
    )
    .unwrap();
    let mut buf = BytesMut::new();
    let err = t
        .encode(&mut buf, 1, &NamesTheGap, Some(&cols))
        .unwrap_err();
    assert!(
        matches!(err, ProtoError::Value { ref column, .. } if column == "1 `b`"),
        "{err}"
    );
    assert!(buf.is_empty(), "nothing left behind");
    let e = Execute {
        id: b"id",
        result_metadata_id: None,
        metadata_ids: MetadataIds::ByVersion,
        params,
        values: &NamesTheGap,
        columns: Some(&cols),
    };
    let err = encode_request(&mut buf, 1, Flags::NONE, &e).unwrap_err();
    assert!(matches!(err, ProtoError::Value { .. }), "{err}");
    let values = [RawValue::Null];
    let err = t.encode(&mut buf, 1, &values[..], Some(&cols)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid bound values: 1 values for 2 bind markers"
    );
}

#[test]
fn every_request_round_trips() {
    let named = [("k", RawValue::Bytes(b"v"))];
    let vals = [RawValue::Bytes(b"x")];
    let stmts = [
        BatchStatement::Query {
            query: "INSERT INTO t (k) VALUES (?)",
            values: &&vals[..],
        },
        BatchStatement::Prepared {
            id: b"id",
            values: &(),
            columns: None,
        },
    ];
    let mut buf = BytesMut::new();
    encode_request(
        &mut buf,
        0,
        Flags::NONE,
        &Startup {
            options: &[("CQL_VERSION", "3.0.0")],
        },
    )
    .unwrap();
    encode_request(&mut buf, 1, Flags::NONE, &Options).unwrap();
    encode_request(
        &mut buf,
        2,
        Flags::NONE,
        &AuthResponse {
            token: Some(b"\0u\0p"),
        },
    )
    .unwrap();
    encode_request(
        &mut buf,
        3,
        Flags::NONE,
        &Register {
            events: &["SCHEMA_CHANGE"],
        },
    )
    .unwrap();
    encode_request(
        &mut buf,
        4,
        Flags::TRACING,
        &Prepare {
            query: "SELECT 1",
            keyspace: None,
        },
    )
    .unwrap();
    encode_request(
        &mut buf,
        5,
        Flags::NONE,
        &Query {
            query: "SELECT :k",
            params: QueryParameters {
                paging_state: Some(b"ps"),
                ..Default::default()
            },
            values: &named[..],
        },
    )
    .unwrap();
    encode_request(
        &mut buf,
        6,
        Flags::NONE,
        &Batch {
            kind: BatchType::Unlogged,
            statements: &stmts,
            consistency: Consistency::Quorum,
            serial_consistency: None,
            timestamp: Some(5),
            keyspace: None,
            now_in_seconds: None,
        },
    )
    .unwrap();
    let decoder = crate::frame::FrameDecoder::new(Direction::Request);
    let mut frames = Vec::new();
    while let Some(f) = decoder.decode(&mut buf).unwrap() {
        frames.push(f);
    }
    assert_eq!(frames.len(), 7);
    let d: Vec<_> = frames
        .iter()
        .map(|f| Request::decode(&f.header, &f.body).unwrap())
        .collect();
    assert_eq!(
        d[0].request,
        Request::Startup(vec![("CQL_VERSION", "3.0.0")])
    );
    assert_eq!(d[1].request, Request::Options);
    assert_eq!(d[2].request, Request::AuthResponse(Some(b"\0u\0p")));
    assert_eq!(d[3].request, Request::Register(vec!["SCHEMA_CHANGE"]));
    assert!(d[4].tracing);
    assert_eq!(
        d[4].request,
        Request::Prepare {
            query: "SELECT 1",
            keyspace: None
        }
    );
    let Request::Query(_, p) = &d[5].request else {
        panic!()
    };
    assert_eq!(p.values, vec![(Some("k"), RawValue::Bytes(b"v"))]);
    assert_eq!(p.params.paging_state, Some(&b"ps"[..]));
    let Request::Batch {
        kind,
        statements,
        timestamp,
        ..
    } = &d[6].request
    else {
        panic!()
    };
    assert_eq!(*kind, BatchType::Unlogged);
    assert_eq!(*timestamp, Some(5));
    assert_eq!(
        statements[1],
        DecodedBatchStatement::Prepared(b"id", vec![])
    );
}

#[test]
fn invalid_parameters_send_nothing() {
    let mut buf = BytesMut::from(&b"queued"[..]);
    let bad = Query {
        query: "x",
        params: QueryParameters {
            serial_consistency: Some(Consistency::One),
            ..Default::default()
        },
        values: &(),
    };
    assert!(encode_request(&mut buf, 0, Flags::NONE, &bad).is_err());
    assert_eq!(&buf[..], b"queued");
}

#[test]
fn compressed_request_decompresses_to_the_plain_body() {
    let q = Prepare {
        query: &"SELECT * FROM t WHERE a = ? AND b = ?".repeat(10),
        keyspace: None,
    };
    let mut plain = BytesMut::new();
    encode_request(&mut plain, 9, Flags::NONE, &q).unwrap();
    let mut packed = BytesMut::new();
    let mut scratch = BytesMut::new();
    encode_request_compressed(
        &mut packed,
        9,
        Flags::NONE,
        &q,
        Compression::Lz4,
        &mut scratch,
    )
    .unwrap();
    let h = FrameHeader::decode(&packed).unwrap();
    assert!(h.flags.contains(Flags::COMPRESSION));
    let body = Compression::Lz4
        .decompress(&packed[HEADER_LEN..], 1 << 20)
        .unwrap();
    assert_eq!(&body[..], &plain[HEADER_LEN..]);
}

#[test]
fn hostile_request_bodies_are_errors() {
    let h = |op| FrameHeader {
        version: ProtocolVersion::V4,
        direction: Direction::Request,
        flags: Flags::NONE,
        stream: 0,
        opcode: op,
        length: 0,
    };
    // Claims 65535 values, holds none.
    let body = [0, 1, query_flags::VALUES as u8, 0xff, 0xff];
    assert!(Request::decode(&h(Opcode::Execute), &[&[0, 0][..], &body].concat()).is_err());
    assert!(Request::decode(&h(Opcode::Query), &[0xff, 0xff, 0xff, 0xff]).is_err());
    assert!(Request::decode(&h(Opcode::Batch), &[7, 0, 0]).is_err());
    assert!(
        Request::decode(&h(Opcode::Options), &[1]).is_err(),
        "trailing bytes"
    );
    assert!(Request::decode(&h(Opcode::Result), &[]).is_err());
}

/// On a connection with tablets routing v2 a template is one byte longer: its frames end
/// with the block, which the caller writes per request, byte for byte the general path's
/// EXECUTE with the block after its parameters; a page of its own keeps the block last.
#[test]
fn a_template_with_a_tablet_block_ends_every_frame_with_the_block() {
    let params = QueryParameters {
        consistency: Consistency::One,
        page_size: Some(100),
        skip_metadata: true,
        ..Default::default()
    };
    let values = [RawValue::Bytes(b"k1")];
    let plain = ExecuteTemplate::new(
        ProtocolVersion::V4,
        MetadataIds::ByVersion,
        b"\x01\x02",
        None,
        1,
        &params,
        Flags::NONE,
    )
    .unwrap();
    let t = plain.clone().with_tablet_block(true);
    assert!(t.carries_tablet_block() && !plain.carries_tablet_block());
    assert!(t.fits(ProtocolVersion::V4, MetadataIds::ByVersion, true));
    assert!(!t.fits(ProtocolVersion::V4, MetadataIds::ByVersion, false));
    assert!(!plain.fits(ProtocolVersion::V4, MetadataIds::ByVersion, true));
    // Turned on twice: still one byte.
    assert_eq!(t.clone().with_tablet_block(true), t);
    let mut a = BytesMut::new();
    t.encode(&mut a, 7, &values[..], None).unwrap();
    let mut without = BytesMut::new();
    plain.encode(&mut without, 7, &values[..], None).unwrap();
    assert_eq!(a.len(), without.len() + 1);
    assert_eq!(a[a.len() - 1], crate::tablet_version::UNKNOWN_VERSION_BLOCK);
    t.set_tablet_block(&mut a, 0x5C);
    let e = Execute {
        id: b"\x01\x02",
        result_metadata_id: None,
        metadata_ids: MetadataIds::ByVersion,
        params,
        values: &values[..],
        columns: None,
    };
    let mut b = BytesMut::new();
    let blocked = WithTabletBlock {
        body: &e,
        block: 0x5C,
    };
    encode_request(&mut b, 7, Flags::NONE, &blocked).unwrap();
    assert_eq!(a, b);
    // The same body but for the block after it.
    assert_eq!(&a[HEADER_LEN..a.len() - 1], &without[HEADER_LEN..]);
    // A page of its own: the block stays last.
    let mut p = BytesMut::new();
    let page = PageRequest {
        page_size: Some(5),
        paging_state: Some(b"st"),
    };
    t.encode_page(&mut p, 7, &values[..], None, page).unwrap();
    assert_eq!(p[p.len() - 1], crate::tablet_version::UNKNOWN_VERSION_BLOCK);
    // The plain template does nothing with a block.
    let before = without.clone();
    plain.set_tablet_block(&mut without, 0x5C);
    assert_eq!(without, before);
}
