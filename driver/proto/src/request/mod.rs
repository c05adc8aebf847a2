//! Request messages (spec section 4.1), both directions.
//!
//! Encoding (client side, the hot path): every request struct borrows its data and writes
//! its body straight into a caller-owned `BytesMut` through [`encode_request`], which writes
//! the header with a zero length, the body, then patches the length. On any error the
//! buffer is truncated back to where the frame began, so nothing partial is ever sent.
//! [`ExecuteTemplate`] pre-encodes everything of an EXECUTE that does not change between
//! calls; encoding one is two `memcpy`s plus the values.
//!
//! Decoding (server side, for the stub server and tests): [`Request::decode`] borrows from
//! the frame body; bound values stay `[value]` slices.
//!
//! Map (a file per message, in the specification's order; every item is re-exported here):
//! - `body`: what they share: [`RequestBody`], the frame encoders ([`encode_request`],
//!   [`encode_envelope`], [`encode_request_compressed`]) and the flags and counts helpers.
//! - `startup` (4.1.1): [`Startup`].
//! - `auth_response` (4.1.2): [`AuthResponse`].
//! - `options` (4.1.3): [`Options`].
//! - `query` (4.1.4): [`Query`] and the `<query_parameters>` EXECUTE and BATCH share:
//!   [`query_flags`], [`QueryParameters`], the bound values, and their decoded forms
//!   ([`DecodedParameters`], [`DecodedValues`]).
//! - `prepare` (4.1.5): [`Prepare`] and [`prepare_flags`].
//! - `execute` (4.1.6): [`Execute`], [`ExecuteTemplate`] and [`PageRequest`].
//! - `batch` (4.1.7): [`Batch`], [`BatchOf`], [`BatchStatement`], [`BatchElements`],
//!   [`BatchType`] and [`DecodedBatchStatement`].
//! - `register` (4.1.8): [`Register`].
//! - `decode`: the server side, [`Request`] and [`RequestFrame`] read back from a body.

mod auth_response;
mod batch;
mod body;
mod decode;
mod execute;
mod options;
mod prepare;
mod query;
mod register;
mod startup;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_metadata_ids;
#[cfg(test)]
mod tests_v5;

pub use auth_response::AuthResponse;
pub use batch::{Batch, BatchElements, BatchOf, BatchStatement, BatchType, DecodedBatchStatement};
pub use body::{encode_envelope, encode_request, encode_request_compressed, RequestBody};
pub use decode::{Request, RequestFrame};
pub use execute::{Execute, ExecuteTemplate, PageRequest, WithTabletBlock};
pub use options::Options;
pub use prepare::{prepare_flags, Prepare};
pub use query::{query_flags, DecodedParameters, DecodedValues, Query, QueryParameters};
pub use register::Register;
pub use startup::Startup;
