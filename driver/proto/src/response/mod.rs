//! Response messages (spec section 4.2), both directions, with the body envelope.
//!
//! Decoding (client side): [`ResponseFrame::decode`] takes a [`Frame`] (decompressing it
//! when the flag is set and compression was negotiated), reads the envelope (tracing id,
//! warnings, custom payload: spec sections 2.2 and 4) and the message. Byte payloads (row
//! content, paging state, prepared id) are zero-copy slices of the frame body; column specs
//! and error texts are owned (decoded once per result or error).
//!
//! Encoding (server side, for the stub server and tests): [`encode_response`] writes a whole
//! frame into a buffer, truncating back on error.
//!
//! Map (the messages in the specification's order, then the envelope; every item is
//! re-exported here):
//! - `error` (4.2.1): [`ErrorResponse`], [`ErrorCode`], [`ErrorDetail`], [`FailureReason`].
//! - READY (4.2.2), AUTHENTICATE (4.2.3) and SUPPORTED (4.2.4) carry no type of their own:
//!   they are variants of [`Response`] (`message`).
//! - `result` (4.2.5): [`ResultBody`] and the Prepared kind ([`Prepared`]); `result_rows`
//!   reads where a Rows kind's rows start; `schema_change`: [`SchemaChange`] and
//!   [`SchemaTarget`], the Schema_change kind's fields and EVENT SCHEMA_CHANGE's.
//! - `event` (4.2.6): [`Event`].
//! - AUTH_CHALLENGE (4.2.7) and AUTH_SUCCESS (4.2.8), like READY, are variants of
//!   [`Response`].
//! - `message`: [`Response`], every message as one enum, its opcode and its body encoded.
//! - `decode`: the client side, [`ResponseFrame`] and [`frame_body`].
//! - `encode`: the server side, [`encode_response`] with its [`Envelope`].
//!
//! [`Frame`]: crate::frame::Frame

mod decode;
mod encode;
mod error;
mod event;
mod message;
mod result;
mod result_rows;
mod schema_change;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_metadata_ids;

pub use decode::{frame_body, ResponseFrame};
pub use encode::{encode_response, Envelope, PayloadEntries};
pub use error::{ErrorCode, ErrorDetail, ErrorResponse, FailureReason};
pub use event::Event;
pub use message::Response;
pub use result::{Prepared, ResultBody};
pub use schema_change::{SchemaChange, SchemaTarget};
