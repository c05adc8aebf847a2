//! Re-encoding decoded messages with doppio-proto's encoders, for round-trip tests.

use bytes::BytesMut;
use doppio_proto::frame::FrameHeader;
use doppio_proto::request::{
    encode_envelope, AuthResponse, Batch, BatchStatement, DecodedBatchStatement, DecodedValues,
    Execute, Options, Prepare, Query, Register, Request, RequestFrame, Startup,
};
use doppio_proto::wire::RawValue;
use doppio_proto::{MetadataIds, Result};

/// Values in the two shapes `QueryValues` is implemented for.
enum Values<'a> {
    Positional(Vec<RawValue<'a>>),
    Named(Vec<(&'a str, RawValue<'a>)>),
}

fn split_values<'a>(values: &DecodedValues<'a>) -> Values<'a> {
    if values.iter().any(|(n, _)| n.is_some()) {
        Values::Named(values.iter().map(|(n, v)| (n.unwrap_or(""), *v)).collect())
    } else {
        Values::Positional(values.iter().map(|(_, v)| *v).collect())
    }
}

/// Encodes `frame` (a decoded request) again as a whole frame with `header`'s version,
/// stream and flags, through doppio-proto's request encoders.
pub fn reencode_request(header: &FrameHeader, frame: &RequestFrame<'_>) -> Result<BytesMut> {
    let mut buf = BytesMut::new();
    let (version, stream, flags) = (header.version, header.stream, header.flags);
    match &frame.request {
        Request::Startup(options) => {
            encode_envelope(&mut buf, version, stream, flags, &Startup { options })?
        }
        Request::Options => encode_envelope(&mut buf, version, stream, flags, &Options)?,
        Request::AuthResponse(token) => encode_envelope(
            &mut buf,
            version,
            stream,
            flags,
            &AuthResponse { token: *token },
        )?,
        Request::Register(events) => {
            encode_envelope(&mut buf, version, stream, flags, &Register { events })?
        }
        Request::Prepare { query, keyspace } => {
            let p = Prepare {
                query,
                keyspace: *keyspace,
            };
            encode_envelope(&mut buf, version, stream, flags, &p)?
        }
        Request::Query(query, p) => match split_values(&p.values) {
            Values::Positional(v) => {
                let q = Query {
                    query,
                    params: p.params,
                    values: &v[..],
                };
                encode_envelope(&mut buf, version, stream, flags, &q)?
            }
            Values::Named(v) => {
                let q = Query {
                    query,
                    params: p.params,
                    values: &v[..],
                };
                encode_envelope(&mut buf, version, stream, flags, &q)?
            }
        },
        Request::Execute {
            id,
            result_metadata_id,
            params: p,
        } => match split_values(&p.values) {
            Values::Positional(v) => {
                let e = Execute {
                    id,
                    result_metadata_id: *result_metadata_id,
                    metadata_ids: MetadataIds::ByVersion,
                    params: p.params,
                    values: &v[..],
                    columns: None,
                };
                encode_envelope(&mut buf, version, stream, flags, &e)?
            }
            Values::Named(v) => {
                let e = Execute {
                    id,
                    result_metadata_id: *result_metadata_id,
                    metadata_ids: MetadataIds::ByVersion,
                    params: p.params,
                    values: &v[..],
                    columns: None,
                };
                encode_envelope(&mut buf, version, stream, flags, &e)?
            }
        },
        Request::Batch {
            kind,
            statements,
            consistency,
            serial_consistency,
            timestamp,
            keyspace,
            now_in_seconds,
        } => {
            let values: Vec<Vec<RawValue<'_>>> = statements
                .iter()
                .map(|s| match s {
                    DecodedBatchStatement::Query(_, v) | DecodedBatchStatement::Prepared(_, v) => {
                        v.iter().map(|(_, v)| *v).collect()
                    }
                })
                .collect();
            // `&dyn QueryValues` needs a sized value: a `&[RawValue]` (not the slice itself).
            let slices: Vec<&[RawValue<'_>]> = values.iter().map(Vec::as_slice).collect();
            let stmts: Vec<BatchStatement<'_>> = statements
                .iter()
                .zip(&slices)
                .map(|(s, v)| match s {
                    DecodedBatchStatement::Query(query, _) => {
                        BatchStatement::Query { query, values: v }
                    }
                    DecodedBatchStatement::Prepared(id, _) => BatchStatement::Prepared {
                        id,
                        values: v,
                        columns: None,
                    },
                })
                .collect();
            let b = Batch {
                kind: *kind,
                statements: &stmts,
                consistency: *consistency,
                serial_consistency: *serial_consistency,
                timestamp: *timestamp,
                keyspace: *keyspace,
                now_in_seconds: *now_in_seconds,
            };
            encode_envelope(&mut buf, version, stream, flags, &b)?
        }
    }
    Ok(buf)
}

/// Encodes a decoded response again as a whole frame (envelope included) of the version it
/// was decoded from, through
/// doppio-proto's response encoder, uncompressed unless `compression` is given.
pub fn reencode_response(
    frame: &doppio_proto::response::ResponseFrame,
    compression: Option<doppio_proto::compression::Compression>,
) -> Result<BytesMut> {
    use doppio_proto::response::{encode_response, Envelope};
    let warnings: Vec<&str> = frame.warnings.iter().map(String::as_str).collect();
    let payload: Option<doppio_proto::wire::BytesMap<'_>> = frame
        .custom_payload
        .as_ref()
        .map(|p| p.iter().map(|(k, v)| (k.as_str(), v.as_deref())).collect());
    let envelope = Envelope {
        version: frame.version,
        metadata_ids: doppio_proto::MetadataIds::ByVersion,
        tracing_id: frame.tracing_id,
        warnings: &warnings,
        custom_payload: payload.as_deref(),
    };
    let mut buf = BytesMut::new();
    encode_response(
        &mut buf,
        frame.stream,
        &envelope,
        &frame.response,
        compression,
    )?;
    Ok(buf)
}
