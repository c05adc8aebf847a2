//! Tests of the request messages in protocol v5: int flags, the v5-only fields, the result
//! metadata id, and v4 bytes read as v5.

use bytes::BytesMut;

use super::*;
use crate::consistency::Consistency;
use crate::error::ProtoError;
use crate::frame::{Direction, Flags, FrameHeader, HEADER_LEN};
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire::RawValue;

/// Encodes `request` as `version`, decodes it back, and returns the bytes of the body.
fn v(version: ProtocolVersion, request: &impl RequestBody) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_envelope(&mut buf, version, 3, Flags::NONE, request).unwrap();
    assert_eq!(buf[0], version.number());
    buf
}

fn decode_v5(buf: &[u8]) -> RequestFrame<'_> {
    let d = crate::frame::FrameDecoder::new(Direction::Request).with_version(ProtocolVersion::V5);
    let Ok(crate::frame::FrameStatus::Complete { header, frame_len }) = d.check(buf) else {
        panic!("not one whole v5 envelope");
    };
    assert_eq!(frame_len, buf.len());
    Request::decode(&header, &buf[HEADER_LEN..]).unwrap()
}

#[test]
fn v5_query_flags_are_an_int_with_keyspace_and_now_in_seconds_last() {
    let params = QueryParameters {
        consistency: Consistency::One,
        page_size: Some(7),
        keyspace: Some("ks"),
        now_in_seconds: Some(1_700_000_000),
        ..Default::default()
    };
    let q = Query {
        query: "SELECT 1",
        params,
        values: &(),
    };
    let buf = v(ProtocolVersion::V5, &q);
    let body = &buf[HEADER_LEN..];
    // [long string] "SELECT 1", consistency ONE, flags as an [int]: page size | keyspace
    // | now in seconds, then page size, keyspace, now.
    let mut expected = vec![0, 0, 0, 8];
    expected.extend_from_slice(b"SELECT 1");
    expected.extend_from_slice(&[0, 1, 0, 0, 0x01, 0x84, 0, 0, 0, 7, 0, 2, b'k', b's']);
    expected.extend_from_slice(&1_700_000_000i32.to_be_bytes());
    assert_eq!(body, &expected[..]);
    let back = decode_v5(&buf);
    let Request::Query(text, p) = back.request else {
        panic!("not a QUERY")
    };
    assert_eq!(text, "SELECT 1");
    assert_eq!(p.params, params);
    // The same parameters without the v5 fields: one flag byte in v4, an int in v5.
    let plain = Query {
        params: QueryParameters {
            keyspace: None,
            now_in_seconds: None,
            ..params
        },
        ..q
    };
    assert_eq!(
        v(ProtocolVersion::V5, &plain).len(),
        v(ProtocolVersion::V4, &plain).len() + 3
    );
}

#[test]
fn v5_only_fields_are_refused_in_v4_and_send_nothing() {
    let mut buf = BytesMut::from(&b"queued"[..]);
    let with_ks = Query {
        query: "SELECT 1",
        params: QueryParameters {
            keyspace: Some("ks"),
            ..Default::default()
        },
        values: &(),
    };
    let with_now = Query {
        params: QueryParameters {
            now_in_seconds: Some(1),
            ..Default::default()
        },
        ..with_ks
    };
    let prepare = Prepare {
        query: "SELECT 1",
        keyspace: Some("ks"),
    };
    for err in [
        encode_request(&mut buf, 0, Flags::NONE, &with_ks),
        encode_request(&mut buf, 0, Flags::NONE, &with_now),
        encode_request(&mut buf, 0, Flags::NONE, &prepare),
    ] {
        let Err(ProtoError::InvalidValue { detail, .. }) = err else {
            panic!("a v5 field was accepted in v4: {err:?}");
        };
        assert!(detail.contains("v5"), "{detail}");
    }
    assert_eq!(&buf[..], b"queued");
}

#[test]
fn v5_prepare_has_int_flags_and_an_optional_keyspace() {
    for keyspace in [None, Some("ks")] {
        let p = Prepare {
            query: "SELECT 1",
            keyspace,
        };
        let buf = v(ProtocolVersion::V5, &p);
        let flags_at = HEADER_LEN + 4 + "SELECT 1".len();
        let flags = u32::from_be_bytes(buf[flags_at..flags_at + 4].try_into().unwrap());
        assert_eq!(flags, u32::from(keyspace.is_some()));
        assert_eq!(
            decode_v5(&buf).request,
            Request::Prepare {
                query: "SELECT 1",
                keyspace
            }
        );
    }
}

/// A page encoded from the template (its own size and paging state in place of the
/// template's page size) is byte for byte the EXECUTE built field by field, in v4 and
/// v5, whatever the template had as page size and whatever follows the paging state.
#[test]
fn a_templated_page_is_the_execute_built_field_by_field() {
    let values = [RawValue::Bytes(b"k")];
    for version in [ProtocolVersion::V4, ProtocolVersion::V5] {
        for template_page in [None, Some(5000)] {
            for (page_size, paging_state) in [
                (None, None),
                (Some(10), None),
                (Some(10), Some(&b"\x01\x02\x03"[..])),
                (None, Some(&b""[..])),
            ] {
                let defaults = QueryParameters {
                    consistency: Consistency::LocalQuorum,
                    skip_metadata: true,
                    page_size: template_page,
                    serial_consistency: Some(Consistency::LocalSerial),
                    timestamp: Some(1_700_000_000_000_000),
                    ..Default::default()
                };
                let metadata_id = (version == ProtocolVersion::V5).then_some(&b"\x0c"[..]);
                let e = Execute {
                    id: b"\x0a\x0b",
                    result_metadata_id: metadata_id,
                    metadata_ids: MetadataIds::ByVersion,
                    params: QueryParameters {
                        page_size,
                        paging_state,
                        ..defaults
                    },
                    values: &values[..],
                    columns: None,
                };
                let plain = v(version, &e);
                let t = ExecuteTemplate::new(
                    version,
                    MetadataIds::ByVersion,
                    e.id,
                    metadata_id,
                    1,
                    &defaults,
                    Flags::NONE,
                )
                .unwrap();
                let mut templated = BytesMut::from(&b"before"[..]);
                let page = PageRequest {
                    page_size,
                    paging_state,
                };
                t.encode_page(&mut templated, 3, &values[..], None, page)
                    .unwrap();
                assert_eq!(
                    &templated[6..],
                    &plain[..],
                    "{version:?}, template page {template_page:?}, {page:?}"
                );
            }
        }
    }
}

#[test]
fn v5_execute_carries_the_result_metadata_id_and_its_template_agrees() {
    let params = QueryParameters {
        consistency: Consistency::LocalQuorum,
        skip_metadata: true,
        page_size: Some(5000),
        ..Default::default()
    };
    let values = [RawValue::Bytes(b"k")];
    let e = Execute {
        id: b"\x0a\x0b",
        result_metadata_id: Some(b"\x0c\x0d\x0e"),
        metadata_ids: MetadataIds::ByVersion,
        params,
        values: &values[..],
        columns: None,
    };
    let plain = v(ProtocolVersion::V5, &e);
    // [short bytes] id, [short bytes] result metadata id, then the parameters.
    assert_eq!(
        &plain[HEADER_LEN..HEADER_LEN + 9],
        &[0, 2, 0x0a, 0x0b, 0, 3, 0x0c, 0x0d, 0x0e]
    );
    let t = ExecuteTemplate::new(
        ProtocolVersion::V5,
        MetadataIds::ByVersion,
        e.id,
        e.result_metadata_id,
        1,
        &params,
        Flags::NONE,
    )
    .unwrap();
    let mut templated = BytesMut::new();
    t.encode(&mut templated, 3, &values[..], None).unwrap();
    assert_eq!(templated, plain);
    assert_eq!(
        decode_v5(&plain).request,
        Request::Execute {
            id: b"\x0a\x0b",
            result_metadata_id: Some(b"\x0c\x0d\x0e"),
            params: DecodedParameters {
                params,
                values: vec![(None, values[0])],
            },
        }
    );
    // v5 cannot EXECUTE without it; v4 does not send it.
    let mut buf = BytesMut::new();
    let missing = Execute {
        result_metadata_id: None,
        ..e
    };
    assert!(encode_envelope(&mut buf, ProtocolVersion::V5, 0, Flags::NONE, &missing).is_err());
    assert!(buf.is_empty());
    assert!(ExecuteTemplate::new(
        ProtocolVersion::V5,
        MetadataIds::ByVersion,
        e.id,
        None,
        1,
        &params,
        Flags::NONE
    )
    .is_err());
    let v4 = v(ProtocolVersion::V4, &e);
    assert_eq!(&v4[HEADER_LEN..HEADER_LEN + 4], &[0, 2, 0x0a, 0x0b]);
    assert_eq!(
        v4.len() + 5 + 3,
        plain.len(),
        "v4: no id (5 bytes), one flag byte"
    );
}

#[test]
fn v5_batch_round_trips_with_keyspace_and_now() {
    let vals = [RawValue::Bytes(b"x")];
    let stmts = [BatchStatement::Prepared {
        id: b"id",
        values: &&vals[..],
        columns: None,
    }];
    let b = Batch {
        kind: BatchType::Logged,
        statements: &stmts,
        consistency: Consistency::Quorum,
        serial_consistency: Some(Consistency::Serial),
        timestamp: Some(9),
        keyspace: Some("ks"),
        now_in_seconds: Some(42),
    };
    let buf = v(ProtocolVersion::V5, &b);
    assert_eq!(
        decode_v5(&buf).request,
        Request::Batch {
            kind: BatchType::Logged,
            statements: vec![DecodedBatchStatement::Prepared(
                b"id",
                vec![(None, vals[0])]
            )],
            consistency: Consistency::Quorum,
            serial_consistency: Some(Consistency::Serial),
            timestamp: Some(9),
            keyspace: Some("ks"),
            now_in_seconds: Some(42),
        }
    );
    let mut v4 = BytesMut::new();
    assert!(encode_request(&mut v4, 0, Flags::NONE, &b).is_err());
    assert!(v4.is_empty());
}

#[test]
fn a_v4_request_read_as_v5_is_an_error_not_a_misreading() {
    // One flag byte where v5 expects four: the parameters run out.
    let q = Query {
        query: "SELECT 1",
        params: QueryParameters::default(),
        values: &(),
    };
    let mut buf = v(ProtocolVersion::V4, &q);
    buf[0] = ProtocolVersion::V5.number();
    let h = FrameHeader::decode(&buf).unwrap();
    assert!(Request::decode(&h, &buf[HEADER_LEN..]).is_err());
}
