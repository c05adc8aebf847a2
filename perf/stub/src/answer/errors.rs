//! The ERROR answers the stub builds itself: a protocol error saying why, UNPREPARED with
//! the unknown id, and any code with a message.

use bytes::Bytes;
use doppio_proto::response::{ErrorCode, ErrorDetail, ErrorResponse, Response};

pub(super) fn error(code: ErrorCode, message: impl Into<String>) -> Response {
    Response::Error(Box::new(ErrorResponse {
        code,
        message: message.into(),
        detail: ErrorDetail::None,
    }))
}

/// The answer to a request the stub cannot handle (`detail` says why).
pub fn protocol_error(detail: impl Into<String>) -> Response {
    error(ErrorCode::ProtocolError, detail)
}

/// UNPREPARED for `id`.
pub fn unprepared(id: &[u8]) -> Response {
    Response::Error(Box::new(ErrorResponse {
        code: ErrorCode::Unprepared,
        message: "Prepared query with ID not found (doppio-stub forgot it or never saw it)".into(),
        detail: ErrorDetail::Unprepared {
            id: Bytes::copy_from_slice(id),
        },
    }))
}
