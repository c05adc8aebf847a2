//! Each request frame answered: `dispatch` accepts its version, decompresses its body and
//! hands the request to the one function of its opcode (a map; nothing is defined here):
//! - `dispatch`: [`handle`], the frame's version and compression checked, then the dispatch.
//! - `handshake`: STARTUP (compression, ScyllaDB extensions, the version settled), OPTIONS,
//!   REGISTER, AUTH_RESPONSE.
//! - `query`: QUERY. `prepare`: PREPARE (ScyllaDB's LWT mark). `batch`: BATCH.
//! - `execute`: EXECUTE, the hot path from the encoded body and the decoded one.
//! - `placement`: where a keyed EXECUTE landed (emulated shards, replicas, tablets).
//! - `fields`: an EXECUTE's id, flags and first value read in place from its body.
//! - `reply`: what every decoded request shares: its answer, the rules, the write.

mod batch;
mod dispatch;
mod execute;
mod fields;
mod handshake;
mod placement;
mod prepare;
mod query;
mod reply;

pub(super) use dispatch::handle;
