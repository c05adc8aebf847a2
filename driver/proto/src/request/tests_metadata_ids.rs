//! Tests of EXECUTE with ScyllaDB's `SCYLLA_USE_METADATA_ID` on a v4 connection: the result
//! metadata id after the prepared id, field by field and from the template, read back only by
//! a server told the connection negotiated it, and every truncation refused.

use bytes::BytesMut;

use super::*;
use crate::consistency::Consistency;
use crate::frame::{Flags, FrameHeader, HEADER_LEN};
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire::RawValue;

const V4: ProtocolVersion = ProtocolVersion::V4;

fn params() -> QueryParameters<'static> {
    QueryParameters {
        consistency: Consistency::LocalQuorum,
        skip_metadata: true,
        page_size: Some(5000),
        ..Default::default()
    }
}

fn encoded(request: &impl RequestBody) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_envelope(&mut buf, V4, 3, Flags::NONE, request).unwrap();
    buf
}

#[test]
fn a_v4_execute_carries_the_result_metadata_id_only_when_negotiated() {
    let values = [RawValue::Bytes(b"k")];
    let e = Execute {
        id: b"\x0a\x0b",
        result_metadata_id: Some(b"\x0c\x0d\x0e"),
        metadata_ids: MetadataIds::Negotiated,
        params: params(),
        values: &values[..],
        columns: None,
    };
    let with = encoded(&e);
    assert_eq!(with[0], 4, "still a v4 frame");
    // [short bytes] id, [short bytes] result metadata id, then v4's parameters (one flag
    // byte: VALUES | SKIP_METADATA | PAGE_SIZE).
    assert_eq!(
        &with[HEADER_LEN..HEADER_LEN + 12],
        &[0, 2, 0x0a, 0x0b, 0, 3, 0x0c, 0x0d, 0x0e, 0, 6, 0x07]
    );
    let header = FrameHeader::decode(&with).unwrap();
    let body = &with[HEADER_LEN..];
    let back = Request::decode_with(&header, body, MetadataIds::Negotiated).unwrap();
    assert_eq!(
        back.request,
        Request::Execute {
            id: b"\x0a\x0b",
            result_metadata_id: Some(b"\x0c\x0d\x0e"),
            params: DecodedParameters {
                params: params(),
                values: vec![(None, values[0])],
            },
        }
    );
    // A server that does not know the connection negotiated it reads the id as the
    // consistency and the rest as nonsense: an error here, never a silent misreading.
    assert!(Request::decode(&header, body).is_err());

    // The template writes the same bytes, and fits only a connection laid out alike.
    let t = ExecuteTemplate::new(
        V4,
        MetadataIds::Negotiated,
        e.id,
        e.result_metadata_id,
        1,
        &params(),
        Flags::NONE,
    )
    .unwrap();
    let mut templated = BytesMut::new();
    t.encode(&mut templated, 3, &values[..], None).unwrap();
    assert_eq!(templated, with);
    assert!(t.fits(V4, MetadataIds::Negotiated, false));
    assert!(!t.fits(V4, MetadataIds::ByVersion, false));
    assert!(!t.fits(ProtocolVersion::V5, MetadataIds::Negotiated, false));
    // A page of its own: the same as field by field.
    let page = PageRequest {
        page_size: Some(10),
        paging_state: Some(b"\x01\x02"),
    };
    let mut paged = BytesMut::new();
    t.encode_page(&mut paged, 3, &values[..], None, page)
        .unwrap();
    let plain_page = Execute {
        params: QueryParameters {
            page_size: Some(10),
            paging_state: Some(b"\x01\x02"),
            ..params()
        },
        ..e
    };
    assert_eq!(paged, encoded(&plain_page));

    // Without the extension, v4 sends no id (as before it existed), and its template
    // fits only such a connection.
    let without = encoded(&Execute {
        metadata_ids: MetadataIds::ByVersion,
        ..e
    });
    assert_eq!(&without[HEADER_LEN..HEADER_LEN + 4], &[0, 2, 0x0a, 0x0b]);
    assert_eq!(without.len() + 5, with.len(), "the id's 5 bytes");
    let plain = ExecuteTemplate::new(
        V4,
        MetadataIds::ByVersion,
        e.id,
        e.result_metadata_id,
        1,
        &params(),
        Flags::NONE,
    )
    .unwrap();
    assert!(
        plain.fits(V4, MetadataIds::ByVersion, false)
            && !plain.fits(V4, MetadataIds::Negotiated, false)
    );
    // A v5 template carries the id whatever the extension says.
    let v5 = ExecuteTemplate::new(
        ProtocolVersion::V5,
        MetadataIds::ByVersion,
        e.id,
        e.result_metadata_id,
        1,
        &params(),
        Flags::NONE,
    )
    .unwrap();
    assert!(v5.fits(ProtocolVersion::V5, MetadataIds::Negotiated, false));

    // Negotiated, the id is required, as in v5: refused, nothing written.
    let mut buf = BytesMut::from(&b"before"[..]);
    let missing = Execute {
        result_metadata_id: None,
        ..e
    };
    let err = encode_envelope(&mut buf, V4, 0, Flags::NONE, &missing).unwrap_err();
    assert!(err.to_string().contains("SCYLLA_USE_METADATA_ID"), "{err}");
    assert_eq!(&buf[..], b"before");
    assert!(ExecuteTemplate::new(
        V4,
        MetadataIds::Negotiated,
        e.id,
        None,
        1,
        &params(),
        Flags::NONE
    )
    .is_err());
}

#[test]
fn every_truncation_and_lie_of_a_v4_execute_with_its_id_is_an_error() {
    let values = [RawValue::Bytes(b"key")];
    let e = Execute {
        id: b"\x0a\x0b",
        result_metadata_id: Some(&[7; 16]),
        metadata_ids: MetadataIds::Negotiated,
        params: params(),
        values: &values[..],
        columns: None,
    };
    let buf = encoded(&e);
    let header = FrameHeader::decode(&buf).unwrap();
    let body = &buf[HEADER_LEN..];
    assert!(Request::decode_with(&header, body, MetadataIds::Negotiated).is_ok());
    for cut in 0..body.len() {
        assert!(
            Request::decode_with(&header, &body[..cut], MetadataIds::Negotiated).is_err(),
            "cut at {cut}"
        );
    }
    // A result metadata id longer than the body.
    let mut lie = body.to_vec();
    lie[4..6].copy_from_slice(&u16::MAX.to_be_bytes());
    assert!(Request::decode_with(&header, &lie, MetadataIds::Negotiated).is_err());
}
