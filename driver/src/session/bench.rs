//! The stages of one `Session::execute_unpaged`, callable one at a time, for the request-path
//! benchmarks (`driver/benches/request_path/`): each function runs the code the hot path
//! runs for its stage, calling the same functions in the same order. Not an API: reached
//! through `doppio_driver::bench_internals`, hidden from the docs, and free to change with any
//! commit.

use std::rc::Rc;

use bytes::BytesMut;
use doppio_proto::frame::Frame;
use doppio_proto::values::QueryValues;
use doppio_proto::ProtoError;

use super::handle::Session;
use super::prepared::PreparedStatement;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::partition_key::PlacedValues;

/// Encodes the EXECUTE of `prepared` with `values` on `stream` into `buf`, as the hot path
/// writes it into a connection's write buffer: from the statement's template, with the
/// values serialized into the frame (as when the placement serialized none).
pub fn encode_execute<V: QueryValues + ?Sized>(
    session: &Session,
    prepared: &PreparedStatement,
    values: &V,
    buf: &mut BytesMut,
    stream: i16,
) -> Result<(), ProtoError> {
    let values = &PlacedValues::new(&session.inner.scratch, None, values);
    let columns = Some(prepared.inner.metadata.columns.as_slice());
    let template = Rc::clone(&prepared.inner.template.borrow());
    template.encode(buf, stream, values, columns)
}

/// Where an EXECUTE of `prepared` with `values` goes, as `execute_with` and `run` find it:
/// the placement (the token of a bound partition key and its replicas), the policy's first
/// pick, and that node's connection (its ScyllaDB shard's when it has shards). `None`: no
/// node to send to.
pub fn place_execute<V: QueryValues + ?Sized>(
    session: &Session,
    prepared: &PreparedStatement,
    values: &V,
) -> Option<Connection> {
    let (placement, _serialized) = session.place_prepared(prepared, values, None);
    let routing = placement.routing();
    let index = session.inner.policy.pick(&placement.view, &routing)?;
    let node = placement.view.node(index)?;
    node.started();
    placement.connection(index, node)
}

/// The answer `frame` to an EXECUTE of `prepared` sent to `conn`'s node, as the hot path
/// reads it: decoded in place (an undecodable frame closes the connection), made a
/// [`QueryResult`] (or the error it carries), rows sent without metadata given the
/// statement's result columns.
pub fn decode_execute(
    session: &Session,
    conn: &Connection,
    frame: &Frame,
    prepared: &PreparedStatement,
) -> Result<QueryResult, Error> {
    session.execute_answer(conn, prepared, frame)
}

/// Sizes in bytes of what one EXECUTE hands up and of the futures it nests, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FutureSizes {
    /// `QueryResult`.
    pub query_result: usize,
    /// `Result<QueryResult, Error>`: what every level returns.
    pub result: usize,
    /// The future of `Session::execute_unpaged` (`execute_with`'s, its answer checked).
    pub execute: usize,
    /// The future of `Session::execute_with`: the common case's one state machine (the
    /// general path is boxed on demand: `run` and `execute_once` below).
    pub execute_with: usize,
    /// The future of `Session::run` (the plan, around `execute_once`): the general path's
    /// retries.
    pub run: usize,
    /// The future of `Session::execute_once` (one attempt on one connection, general path).
    pub execute_once: usize,
    /// The future of `Connection::request` (stream id, write buffer, answer).
    pub connection_request: usize,
}

/// The sizes of the futures one `execute_unpaged(prepared, values)` builds, measured on unpolled
/// futures of the very functions the hot path calls, with `values`' type.
pub fn future_sizes<V: QueryValues + ?Sized>(
    session: &Session,
    prepared: &PreparedStatement,
    values: &V,
    conn: &Connection,
) -> FutureSizes {
    let execute = std::mem::size_of_val(&session.execute_unpaged(prepared, values));
    let inner = session.request_future_sizes(prepared, values, conn);
    FutureSizes {
        query_result: std::mem::size_of::<QueryResult>(),
        result: std::mem::size_of::<Result<QueryResult, Error>>(),
        execute,
        execute_with: inner[0],
        run: inner[1],
        execute_once: inner[2],
        connection_request: inner[3],
    }
}
