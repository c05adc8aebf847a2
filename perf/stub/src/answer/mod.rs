//! What the stub answers, per request: one [`Responder`] per shard.
//!
//! Handshake and control messages get what a one-node Cassandra 5.0 would say (SUPPORTED
//! with lz4, READY, system tables from [`crate::tables`]). An ordinary SELECT answers the
//! configured result shape (N rows of one blob column `v` of M bytes, or the table's columns
//! once altered), a statement that is not a SELECT answers Void, `USE ks` answers
//! Set_keyspace, `ALTER TABLE` Schema_change.
//!
//! PREPARE computes everything an EXECUTE of the statement will answer and encodes it once:
//! the RESULT body with metadata and without (for `skip_metadata`), and with
//! `METADATA_CHANGED` (the columns and their result metadata id, a hash of the columns), for
//! an EXECUTE that sent a result metadata id other than the columns' (v5, or v4 with
//! ScyllaDB's `SCYLLA_USE_METADATA_ID` on); uncompressed and lz4. An EXECUTE then costs a
//! lookup of its 16-byte id among the shard's statements (a short linear scan: drivers
//! prepare a handful), a compare of the result metadata id it sent, a 9-byte header and one
//! copy of the body.
//!
//! `ALTER TABLE [ks.]t ADD name type` and `ALTER TABLE [ks.]t DROP name` change the columns
//! SELECTs of that table answer, and the answers of the statements prepared on it (their
//! ids stay; their result metadata ids change): the stub's schema changes, for clients that
//! must notice them. A change is the state of the responder that answered it: one node on
//! one executor (a stub of one node on one core, as tests run it, changes as a whole).
//!
//! A prepared SELECT of more than one row also keeps its rows: an EXECUTE of it is decoded in
//! full and paged by its page size and paging state like a QUERY (encoded when asked for;
//! a request for every row at once still gets the pre-encoded body).
//!
//! Invariants: the EXECUTE path of a statement of at most one row allocates nothing and
//! parses only the id and the flags byte;
//! prepared ids are a hash of the statement text and keyspace, so they are the same on every
//! shard and across restarts (a client that re-prepares after a restart gets the same id).
//!
//! Files (this one is a map; nothing is defined here):
//! - `responder`: [`Responder`], one shard's answering state, and the [`Answer`] it gives
//!   each request (the system tables and the configured shape selected, `USE`, PREPARE).
//! - `prepared`: [`PreparedEntry`], a prepared statement's answers encoded once, and the
//!   ids of statements and of their result columns.
//! - `rows`: a result's rows, their pages and their encoding as a RESULT Rows.
//! - `schema`: `ALTER TABLE`, parsed, and the columns of the tables it changed.
//! - `shape`: [`Shape`], the configured result shape.
//! - `errors`: the ERROR answers the stub builds ([`protocol_error`], [`unprepared`]).
//! - `frames`: RESULT frames around a pre-encoded body ([`put_body_frame`], with a custom
//!   payload [`put_body_frame_with_payload`]).

mod errors;
mod frames;
mod prepared;
mod responder;
mod rows;
mod schema;
mod shape;
#[cfg(test)]
mod tests;

pub use errors::{protocol_error, unprepared};
pub use frames::{put_body_frame, put_body_frame_with_payload};
pub use prepared::PreparedEntry;
pub use responder::{Answer, Responder};
pub use shape::Shape;
