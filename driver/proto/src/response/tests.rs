//! Tests of the response messages: round trips of every message and error code in v4 and
//! v5, the envelope's order, extension errors, and hostile bodies.

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};

use super::*;
use crate::compression::Compression;
use crate::consistency::Consistency;
use crate::error::ProtoError;
use crate::frame::{Direction, Flags, Frame, FrameDecoder, FrameHeader, Opcode};
use crate::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use crate::rows::Rows;
use crate::scylla_extensions::{Extensions, RateLimitError};
use crate::types::ColumnType;
use crate::version::ProtocolVersion;

fn round_trip(env: &Envelope<'_>, r: &Response, c: Option<Compression>) -> ResponseFrame {
    let mut buf = BytesMut::new();
    encode_response(&mut buf, 7, env, r, c).unwrap();
    let frame = FrameDecoder::new(Direction::Response)
        .with_version(env.version)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert!(buf.is_empty());
    let back = ResponseFrame::decode(&frame, c, 1 << 20).unwrap();
    assert_eq!(back.stream, 7);
    assert_eq!(&back.response, r);
    back
}

fn col(name: &str, typ: ColumnType) -> ColumnSpec {
    ColumnSpec::new("ks", "t", name, typ)
}

/// v4's responses, with the v5 fields a v5 server adds to them.
fn as_v5(r: &Response) -> Response {
    match r {
        Response::Result(ResultBody::Prepared(p)) => {
            let mut p = p.clone();
            p.result_metadata_id = Some(Bytes::from_static(&[0xcd; 16]));
            Response::Result(ResultBody::Prepared(p))
        }
        Response::Result(ResultBody::Rows(rows)) => {
            let mut rows = rows.clone();
            rows.metadata.new_metadata_id = Some(Box::new(Bytes::from_static(b"new")));
            Response::Result(ResultBody::Rows(rows))
        }
        other => other.clone(),
    }
}

#[test]
fn every_response_round_trips() {
    let node: SocketAddr = "127.0.0.2:9042".parse().unwrap();
    let change = SchemaChange {
        change: "CREATED".into(),
        target: SchemaTarget::Function("ks".into(), "f".into(), vec!["int".into()]),
    };
    let rows = Rows {
        metadata: RowsMetadata {
            columns_count: 2,
            paging_state: Some(Bytes::from_static(b"next")),
            columns: vec![col("k", ColumnType::Int), col("v", ColumnType::Varchar)],
            no_metadata: false,
            new_metadata_id: None,
        },
        rows_count: 1,
        content: Bytes::from_static(&[0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'a']),
    };
    let all = [
        Response::Ready,
        Response::Authenticate("org.apache.cassandra.auth.PasswordAuthenticator".into()),
        Response::Supported(vec![("CQL_VERSION".into(), vec!["3.4.7".into()])]),
        Response::Result(ResultBody::Void),
        Response::Result(ResultBody::Rows(rows)),
        Response::Result(ResultBody::SetKeyspace("ks".into())),
        Response::Result(ResultBody::Prepared(Box::new(Prepared {
            id: Bytes::from_static(&[0xab; 16]),
            result_metadata_id: None,
            metadata: PreparedMetadata {
                pk_indexes: vec![1, 0],
                columns: vec![col("a", ColumnType::Int), col("b", ColumnType::Bigint)],
                extension_flags: 0,
            },
            result_metadata: RowsMetadata {
                columns_count: 0,
                no_metadata: true,
                ..Default::default()
            },
        }))),
        Response::Result(ResultBody::SchemaChange(change.clone())),
        Response::Event(Event::TopologyChange {
            change: "NEW_NODE".into(),
            node,
        }),
        Response::Event(Event::StatusChange {
            change: "DOWN".into(),
            node,
        }),
        Response::Event(Event::SchemaChange(change)),
        Response::AuthChallenge(Some(Bytes::from_static(b"c"))),
        Response::AuthSuccess(None),
    ];
    let v5 = Envelope {
        version: ProtocolVersion::V5,
        ..Envelope::default()
    };
    for r in &all {
        round_trip(&Envelope::default(), r, None);
        round_trip(&Envelope::default(), r, Some(Compression::Lz4));
        round_trip(&v5, &as_v5(r), None);
    }
    // A PREPARED without its v5 field is not v5, and one with it is not v4: refused, not
    // silently dropped or made up.
    let mut buf = BytesMut::new();
    let prepared = all
        .iter()
        .find(|r| matches!(r, Response::Result(ResultBody::Prepared(_))))
        .unwrap();
    assert!(encode_response(&mut buf, 0, &v5, prepared, None).is_err());
    assert!(encode_response(&mut buf, 0, &Envelope::default(), &as_v5(prepared), None).is_err());
    assert!(buf.is_empty());
    assert!(
        encode_response(&mut buf, 0, &v5, &Response::Ready, Some(Compression::Lz4)).is_err(),
        "v5 compresses segments, not envelopes"
    );
}

#[test]
fn metadata_changed_without_columns_is_an_error() {
    // Rows, flags NO_METADATA | METADATA_CHANGED, 1 column, new id "n", 0 rows.
    let body: &'static [u8] = &[
        0, 0, 0, 2, 0, 0, 0, 0x0c, 0, 0, 0, 1, 0, 1, b'n', 0, 0, 0, 0,
    ];
    let frame = Frame {
        header: FrameHeader {
            version: ProtocolVersion::V5,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 1,
            opcode: Opcode::Result,
            length: body.len() as u32,
        },
        body: Bytes::from_static(body),
    };
    assert!(matches!(
        ResponseFrame::decode(&frame, None, 1 << 20),
        Err(ProtoError::InvalidValue {
            what: "rows metadata flags",
            ..
        })
    ));
}

#[test]
fn every_error_code_round_trips_with_its_fields() {
    let errors = [
        (ErrorCode::ServerError, ErrorDetail::None),
        (
            ErrorCode::Unavailable,
            ErrorDetail::Unavailable {
                consistency: Consistency::Quorum,
                required: 2,
                alive: 1,
            },
        ),
        (
            ErrorCode::WriteTimeout,
            ErrorDetail::WriteTimeout {
                consistency: Consistency::One,
                received: 0,
                block_for: 1,
                write_type: "SIMPLE".into(),
                contentions: None,
            },
        ),
        (
            ErrorCode::ReadTimeout,
            ErrorDetail::ReadTimeout {
                consistency: Consistency::One,
                received: 0,
                block_for: 1,
                data_present: true,
            },
        ),
        (
            ErrorCode::ReadFailure,
            ErrorDetail::ReadFailure {
                consistency: Consistency::All,
                received: 1,
                block_for: 3,
                failures: 2,
                reasons: vec![],
                data_present: false,
            },
        ),
        (
            ErrorCode::FunctionFailure,
            ErrorDetail::FunctionFailure {
                keyspace: "ks".into(),
                function: "f".into(),
                arg_types: vec!["int".into(), "text".into()],
            },
        ),
        (
            ErrorCode::WriteFailure,
            ErrorDetail::WriteFailure {
                consistency: Consistency::Two,
                received: 1,
                block_for: 2,
                failures: 1,
                reasons: vec![],
                write_type: "BATCH".into(),
            },
        ),
        (
            ErrorCode::AlreadyExists,
            ErrorDetail::AlreadyExists {
                keyspace: "ks".into(),
                table: "".into(),
            },
        ),
        (
            ErrorCode::Unprepared,
            ErrorDetail::Unprepared {
                id: Bytes::from_static(b"\x01\x02"),
            },
        ),
        (ErrorCode::Overloaded, ErrorDetail::None),
        (ErrorCode::Other(0x7777), ErrorDetail::None),
        // ScyllaDB's rate-limit error: a code of the node's choosing, two bytes after
        // the message, kept raw.
        (
            ErrorCode::Other(0xF000),
            ErrorDetail::Extension {
                fields: Bytes::from_static(&[1, 0]),
            },
        ),
    ];
    for (code, detail) in errors {
        let e = ErrorResponse {
            code,
            message: format!("{} happened", code.name()),
            detail,
        };
        assert_eq!(ErrorCode::from_code(code.code()), code);
        round_trip(&Envelope::default(), &Response::Error(Box::new(e)), None);
    }
}

/// The rate-limit error's two bytes are read as such only under the code the connection
/// negotiated; under another code, or unreadable, they stay raw.
#[test]
fn an_extension_error_is_read_as_the_extension_negotiated_for_its_code() {
    use crate::scylla_extensions::RateLimitedOp;
    let raw = |code: i32, fields: &'static [u8]| ErrorResponse {
        code: ErrorCode::Other(code),
        message: "Per-partition rate limit reached".into(),
        detail: ErrorDetail::Extension {
            fields: Bytes::from_static(fields),
        },
    };
    let negotiated = Extensions {
        rate_limit_code: Some(0xF000),
        ..Extensions::default()
    };
    let mut e = raw(0xF000, &[1, 1]);
    e.read_extension(&negotiated);
    assert_eq!(
        e.detail,
        ErrorDetail::RateLimit(RateLimitError {
            op: RateLimitedOp::Write,
            rejected_by_coordinator: true,
        })
    );
    // Encoded as the same two bytes: decoded raw, then read again alike.
    let mut buf = BytesMut::new();
    let sent = Response::Error(Box::new(e.clone()));
    encode_response(&mut buf, 7, &Envelope::default(), &sent, None).unwrap();
    let frame = FrameDecoder::new(Direction::Response)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    let Response::Error(mut back) = ResponseFrame::decode(&frame, None, 1 << 20)
        .unwrap()
        .response
    else {
        panic!("not an error")
    };
    assert_eq!(back.detail, raw(0xF000, &[1, 1]).detail);
    back.read_extension(&negotiated);
    assert_eq!(*back, e);
    for (code, fields, extensions) in [
        (0xF001, &[1u8, 1][..], negotiated),
        (0xF000, &[1, 1][..], Extensions::default()),
        (0xF000, &[7, 1][..], negotiated),
        (0xF000, &[0][..], negotiated),
    ] {
        let mut e = raw(code, fields);
        let before = e.clone();
        e.read_extension(&extensions);
        assert_eq!(e, before, "{code:#x} {fields:?}");
    }
}

#[test]
fn v5_errors_carry_reason_maps_contentions_and_cas_write_unknown() {
    let v5 = Envelope {
        version: ProtocolVersion::V5,
        ..Envelope::default()
    };
    let reasons = vec![
        FailureReason {
            endpoint: "127.0.0.2".parse().unwrap(),
            code: 0x0001,
        },
        FailureReason {
            endpoint: "::1".parse().unwrap(),
            code: 0x01F7,
        },
    ];
    let details = [
        (
            ErrorCode::ReadFailure,
            ErrorDetail::ReadFailure {
                consistency: Consistency::All,
                received: 1,
                block_for: 3,
                failures: 2,
                reasons: reasons.clone(),
                data_present: true,
            },
        ),
        (
            ErrorCode::WriteFailure,
            ErrorDetail::WriteFailure {
                consistency: Consistency::Quorum,
                received: 0,
                block_for: 2,
                failures: 2,
                reasons: reasons.clone(),
                write_type: "SIMPLE".into(),
            },
        ),
        (
            ErrorCode::WriteTimeout,
            ErrorDetail::WriteTimeout {
                consistency: Consistency::Serial,
                received: 1,
                block_for: 2,
                write_type: "CAS".into(),
                contentions: Some(3),
            },
        ),
        (
            ErrorCode::WriteTimeout,
            ErrorDetail::WriteTimeout {
                consistency: Consistency::One,
                received: 0,
                block_for: 1,
                write_type: "SIMPLE".into(),
                contentions: None,
            },
        ),
        (
            ErrorCode::CasWriteUnknown,
            ErrorDetail::CasWriteUnknown {
                consistency: Consistency::LocalSerial,
                received: 1,
                block_for: 2,
            },
        ),
        (ErrorCode::CdcWriteFailure, ErrorDetail::None),
    ];
    for (code, detail) in details {
        assert_eq!(ErrorCode::from_code(code.code()), code);
        let e = ErrorResponse {
            code,
            message: "failed".into(),
            detail,
        };
        round_trip(&v5, &Response::Error(Box::new(e)), None);
    }
    // A reason map's count is its length: a disagreeing count is not encoded.
    let bad = ErrorResponse {
        code: ErrorCode::ReadFailure,
        message: String::new(),
        detail: ErrorDetail::ReadFailure {
            consistency: Consistency::All,
            received: 0,
            block_for: 1,
            failures: 3,
            reasons,
            data_present: false,
        },
    };
    let mut buf = BytesMut::new();
    assert!(encode_response(&mut buf, 0, &v5, &Response::Error(Box::new(bad)), None).is_err());
    assert!(buf.is_empty());
}

#[test]
fn a_reason_map_longer_than_its_body_is_refused_before_reserving() {
    // ERROR Read_failure, message "", ONE, 0, 1, reason map of i32::MAX entries.
    let body: &'static [u8] = &[
        0, 0, 0x13, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff,
    ];
    let frame = Frame {
        header: FrameHeader {
            version: ProtocolVersion::V5,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 1,
            opcode: Opcode::Error,
            length: body.len() as u32,
        },
        body: Bytes::from_static(body),
    };
    assert!(ResponseFrame::decode(&frame, None, 1 << 20).is_err());
}

#[test]
fn envelope_fields_come_back_in_spec_order() {
    let tid = [9u8; 16];
    let env = Envelope {
        version: ProtocolVersion::V4,
        metadata_ids: crate::version::MetadataIds::ByVersion,
        tracing_id: Some(tid),
        warnings: &["Aggregation query used without partition key"],
        custom_payload: Some(&[("k", Some(&b"v"[..]))]),
    };
    let back = round_trip(&env, &Response::Result(ResultBody::Void), None);
    assert_eq!(back.tracing_id, Some(tid));
    assert_eq!(
        back.warnings,
        vec!["Aggregation query used without partition key"]
    );
    assert_eq!(
        back.custom_payload,
        Some(vec![("k".to_string(), Some(Bytes::from_static(b"v")))])
    );
}

#[test]
fn hostile_responses_are_errors() {
    let frame = |op, flags, body: &'static [u8]| Frame {
        header: FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Response,
            flags,
            stream: 1,
            opcode: op,
            length: body.len() as u32,
        },
        body: Bytes::from_static(body),
    };
    let cases = [
        frame(Opcode::Result, Flags::NONE, &[0, 0, 0, 9]),
        frame(
            Opcode::Result,
            Flags::NONE,
            &[0, 0, 0, 2, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff],
        ),
        // Rows: 1 column, then a rows count of i32::MAX with no content.
        frame(
            Opcode::Result,
            Flags::NONE,
            &[0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff],
        ),
        frame(Opcode::Error, Flags::NONE, &[0, 0, 0x10, 0, 0, 1, b'x']),
        frame(Opcode::Ready, Flags::TRACING, &[1, 2, 3]),
        frame(Opcode::Ready, Flags::NONE, &[1]),
        frame(Opcode::Ready, Flags::COMPRESSION, &[0, 0, 0, 0]),
        frame(Opcode::Query, Flags::NONE, &[]),
        frame(Opcode::Event, Flags::NONE, &[0, 3, b'F', b'O', b'O']),
    ];
    for f in &cases {
        assert!(ResponseFrame::decode(f, None, 1 << 20).is_err(), "{f:?}");
    }
}
