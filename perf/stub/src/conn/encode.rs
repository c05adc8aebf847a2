//! A message encoded into a connection's output: one envelope in the connection's version,
//! laid out with the result metadata ids its STARTUP turned on.

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::response::{encode_response, Envelope, Response};
use doppio_proto::{MetadataIds, ProtocolVersion};

use crate::answer;

/// Appends `response` on `stream` in `version` with result metadata ids `ids` (envelope
/// compressed when `compression`, v4 only).
pub(super) fn put_message(
    out: &mut BytesMut,
    version: ProtocolVersion,
    ids: MetadataIds,
    stream: i16,
    response: &Response,
    compression: Option<Compression>,
) {
    let envelope = Envelope {
        version,
        metadata_ids: ids,
        ..Envelope::default()
    };
    if let Err(e) = encode_response(out, stream, &envelope, response, compression) {
        // Only a body over 2 GiB fails; say so instead of sending nothing.
        let fallback = answer::protocol_error(format!("the stub cannot encode its answer: {e}"));
        let _ = encode_response(out, stream, &envelope, &fallback, None);
    }
}
