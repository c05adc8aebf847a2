//! Tests of PREPARED and Rows with ScyllaDB's `SCYLLA_USE_METADATA_ID` on a v4 connection:
//! the result metadata ids v5 defines, written and read only where the connection negotiated
//! them, every truncation refused, and `METADATA_CHANGED` refused where it does not exist.

use bytes::{Bytes, BytesMut};

use super::*;
use crate::error::ProtoError;
use crate::frame::{Direction, Flags, Frame, FrameDecoder, FrameHeader, Opcode};
use crate::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use crate::rows::Rows;
use crate::types::ColumnType;
use crate::version::{MetadataIds, ProtocolVersion};

const NEGOTIATED: Envelope<'static> = Envelope {
    version: ProtocolVersion::V4,
    metadata_ids: MetadataIds::Negotiated,
    tracing_id: None,
    warnings: &[],
    custom_payload: None,
};

fn col(name: &str, typ: ColumnType) -> ColumnSpec {
    ColumnSpec::new("ks", "t", name, typ)
}

fn prepared(result_metadata_id: Option<Bytes>) -> Response {
    Response::Result(ResultBody::Prepared(Box::new(Prepared {
        id: Bytes::from_static(&[0xab; 16]),
        result_metadata_id,
        metadata: PreparedMetadata {
            pk_indexes: vec![0],
            columns: vec![col("k", ColumnType::Int)],
            extension_flags: 0,
        },
        result_metadata: RowsMetadata {
            columns_count: 2,
            columns: vec![col("k", ColumnType::Int), col("v", ColumnType::Blob)],
            ..RowsMetadata::default()
        },
    })))
}

/// Rows of one column `w int` whose metadata changed: the new id and the columns in full.
fn changed_rows() -> Response {
    Response::Result(ResultBody::Rows(Rows {
        metadata: RowsMetadata {
            columns_count: 1,
            paging_state: Some(Bytes::from_static(b"page")),
            columns: vec![col("w", ColumnType::Int)],
            no_metadata: false,
            new_metadata_id: Some(Box::new(Bytes::from_static(&[0x5e; 16]))),
        },
        rows_count: 1,
        content: Bytes::from_static(&[0, 0, 0, 4, 0, 0, 0, 42]),
    }))
}

/// `response` encoded with `envelope`, as the frame a client reads.
fn frame_of(envelope: &Envelope<'_>, response: &Response) -> Frame {
    let mut buf = BytesMut::new();
    encode_response(&mut buf, 5, envelope, response, None).unwrap();
    FrameDecoder::new(Direction::Response)
        .with_version(envelope.version)
        .decode(&mut buf)
        .unwrap()
        .unwrap()
}

/// `frame` with its body cut to `len` bytes (the header saying so).
fn cut(frame: &Frame, len: usize) -> Frame {
    Frame {
        header: FrameHeader {
            length: len as u32,
            ..frame.header
        },
        body: frame.body.slice(..len),
    }
}

#[test]
fn v4_prepared_and_rows_carry_metadata_ids_when_negotiated() {
    for response in [prepared(Some(Bytes::from_static(b"rid"))), changed_rows()] {
        let frame = frame_of(&NEGOTIATED, &response);
        assert_eq!(frame.header.version, ProtocolVersion::V4);
        let back =
            ResponseFrame::decode_with(&frame, None, 1 << 20, MetadataIds::Negotiated).unwrap();
        assert_eq!(back.response, response);
        // A client that does not know the connection negotiated it: an error, never a
        // misreading.
        assert!(ResponseFrame::decode(&frame, None, 1 << 20).is_err());
    }
    // PREPARED: [int] kind, [short bytes] id, [short bytes] result metadata id, metadata.
    let frame = frame_of(&NEGOTIATED, &prepared(Some(Bytes::from_static(b"rid"))));
    assert_eq!(&frame.body[4..6], &[0, 16]);
    assert_eq!(&frame.body[22..27], &[0, 3, b'r', b'i', b'd']);
    // Rows: flags GLOBAL_TABLES_SPEC | HAS_MORE_PAGES | METADATA_CHANGED, 1 column, the
    // paging state, then the new id before the columns.
    let frame = frame_of(&NEGOTIATED, &changed_rows());
    assert_eq!(&frame.body[4..8], &[0, 0, 0, 0x0b]);
    assert_eq!(&frame.body[16..20], b"page");
    assert_eq!(&frame.body[20..22], &[0, 16]);
    assert_eq!(&frame.body[22..38], &[0x5e; 16]);
}

#[test]
fn ids_are_written_exactly_where_the_connection_carries_them() {
    let plain_v4 = Envelope::default();
    let mut buf = BytesMut::new();
    // Without the extension, v4 has no such fields: refused, nothing written.
    let with_id = prepared(Some(Bytes::from_static(b"rid")));
    assert!(encode_response(&mut buf, 0, &plain_v4, &with_id, None).is_err());
    assert!(encode_response(&mut buf, 0, &plain_v4, &changed_rows(), None).is_err());
    // With it, PREPARED's id is required, as in v5.
    let err = encode_response(&mut buf, 0, &NEGOTIATED, &prepared(None), None).unwrap_err();
    assert!(err.to_string().contains("SCYLLA_USE_METADATA_ID"), "{err}");
    assert!(buf.is_empty());
    // Rows that did not change read alike either way.
    let Response::Result(ResultBody::Rows(mut same)) = changed_rows() else {
        unreachable!()
    };
    same.metadata.new_metadata_id = None;
    let same = Response::Result(ResultBody::Rows(same));
    let frame = frame_of(&NEGOTIATED, &same);
    assert_eq!(frame.body, frame_of(&plain_v4, &same).body);
    let back = ResponseFrame::decode_with(&frame, None, 1 << 20, MetadataIds::Negotiated);
    assert_eq!(back.unwrap().response, same);
}

#[test]
fn metadata_changed_in_v4_without_the_extension_is_an_error() {
    // Rows, flags METADATA_CHANGED, 1 column, new id "n", a global spec ks.t, column w int,
    // 0 rows: well formed where ids are carried.
    let body: &'static [u8] = &[
        0, 0, 0, 2, 0, 0, 0, 0x09, 0, 0, 0, 1, 0, 1, b'n', 0, 2, b'k', b's', 0, 1, b't', 0, 1,
        b'w', 0, 9, 0, 0, 0, 0,
    ];
    let frame = |version| Frame {
        header: FrameHeader {
            version,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 1,
            opcode: Opcode::Result,
            length: body.len() as u32,
        },
        body: Bytes::from_static(body),
    };
    let v4 = frame(ProtocolVersion::V4);
    assert!(matches!(
        ResponseFrame::decode(&v4, None, 1 << 20),
        Err(ProtoError::InvalidValue {
            what: "rows metadata flags",
            ..
        })
    ));
    for (f, ids) in [
        (&v4, MetadataIds::Negotiated),
        (&frame(ProtocolVersion::V5), MetadataIds::ByVersion),
    ] {
        let back = ResponseFrame::decode_with(f, None, 1 << 20, ids).unwrap();
        let Response::Result(ResultBody::Rows(rows)) = back.response else {
            panic!("{back:?}")
        };
        assert_eq!(
            rows.metadata.new_metadata_id.as_deref(),
            Some(&Bytes::from_static(b"n"))
        );
        assert_eq!(rows.metadata.columns, vec![col("w", ColumnType::Int)]);
    }
}

#[test]
fn every_truncation_and_lie_of_v4_prepared_and_rows_with_ids_is_an_error() {
    let rows = changed_rows();
    let content = match &rows {
        Response::Result(ResultBody::Rows(r)) => r.content.len(),
        _ => unreachable!(),
    };
    for (response, lazy_tail) in [
        (prepared(Some(Bytes::from_static(b"rid"))), 0),
        (rows, content),
    ] {
        let frame = frame_of(&NEGOTIATED, &response);
        // The rows' content is read lazily (by the row reader, which checks it): every cut
        // before it must fail here.
        for len in 0..frame.body.len() - lazy_tail {
            assert!(
                ResponseFrame::decode_with(
                    &cut(&frame, len),
                    None,
                    1 << 20,
                    MetadataIds::Negotiated
                )
                .is_err(),
                "{response:?} cut at {len}"
            );
        }
    }
    // An id longer than the body, in PREPARED and in Rows.
    let mut prepared_lie = frame_of(&NEGOTIATED, &prepared(Some(Bytes::from_static(b"rid"))));
    let mut body = prepared_lie.body.to_vec();
    body[22..24].copy_from_slice(&u16::MAX.to_be_bytes());
    prepared_lie.body = body.into();
    let mut rows_lie = frame_of(&NEGOTIATED, &changed_rows());
    let mut body = rows_lie.body.to_vec();
    body[20..22].copy_from_slice(&u16::MAX.to_be_bytes());
    rows_lie.body = body.into();
    for lie in [prepared_lie, rows_lie] {
        assert!(ResponseFrame::decode_with(&lie, None, 1 << 20, MetadataIds::Negotiated).is_err());
    }
}
