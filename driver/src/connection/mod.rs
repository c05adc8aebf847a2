//! One connection to one node, owned by one shard: DESIGN section 3 made concrete.
//!
//! Written once for both runtimes: it names no executor, only [`doppio_rt`] (tasks, timers
//! and the stream's three operations: receive into a buffer, send a whole buffer, shut
//! down).
//!
//! A request's way through it:
//! 1. The caller takes a stream id from the `in_flight` table (waiting if all are in use:
//!    backpressure) and encodes its frame **directly into the connection's write buffer**.
//! 2. The caller parks on its slot. The first enqueue into an empty write buffer wakes the
//!    **flusher**, which swaps the buffer with its own (empty, capacity kept) and hands
//!    everything queued to the runtime as one send (glommio: a `send` syscall, more only if
//!    the kernel takes less; io_uring: one lazy send operation in the ring's next
//!    submission, whose completion does not wake the executor on its own). If the flusher
//!    is still sending the batch before, that first enqueue hurries the send instead.
//! 3. The **reader** appends whatever arrived to its buffer (glommio: one `recv` of up to
//!    `read_chunk` bytes; io_uring: the multishot receive's provided buffers), splits off
//!    every complete frame as a zero-copy `Bytes` body, and completes the slot of each
//!    stream id.
//! 4. The **sweeper** sleeps until the earliest deadline, then fails every request past its
//!    deadline with a timeout; their ids stay orphaned until the late answer comes. Too many
//!    orphans close the connection (the node is not answering).
//! 5. The **keepalive** task (when configured) probes an idle node with OPTIONS.
//!
//! Four tasks per connection, spawned once at connect; per request: no task, no channel, no
//! allocation once buffers have grown, no lock and no atomic (state is `Rc<RefCell<_>>`,
//! borrowed only between awaits, never across one).
//!
//! A request the caller armed for timing ([`crate::stages`]) keeps its stamps in the
//! connection's `timed` list (at most [`crate::stages::MAX_TIMED`], reserved at connect):
//! queued, its batch handed to the runtime, its read arrived, its frame handed to its slot,
//! its answer polled. Untimed requests pay one thread-local read when queued and an
//! empty-list check per read, flush and answer polled.
//!
//! With TLS ([`ConnectionConfig::tls`]), the `tls` module's handshake runs after TCP
//! connect and before any CQL (within the connect timeout); then the reader decrypts what
//! arrived into its frame buffer and the flusher encrypts each batch before sending it.
//!
//! Public: [`Connection`] is the low-level single-connection API; the protocol state the
//! handshake sets on it (version, compression, v5 framing, ScyllaDB sharding) is the
//! crate's. Its errors ([`ConnectionError`] and its causes, [`RequestError`]) and TLS
//! settings ([`TlsConfig`]) are re-exported here from the private `error` and `tls`.
//!
//! A read, a write or a protocol violation closes the connection: every request in flight
//! fails at once with a [`ConnectionError`], later requests fail immediately, and the socket
//! is shut down. Dropping the last [`Connection`] handle closes it too.

//!
//! Its files, one concern each: `config` ([`ConnectionConfig`]), `stats`
//! ([`ConnectionStats`]), `state` (the mutable state behind one `RefCell`), `in_flight` (the
//! stream-id table), `shared` (the core the handles and tasks share: closing, queueing a
//! request), `handle` ([`Connection`]: opening one, its methods), `request` (a request
//! awaited in one future), `pending` (requests whose caller drives the wait:
//! [`StreamWait`], [`PendingAnswer`]), the four tasks `reader`, `writer` (the flusher),
//! `sweeper` and `keepalive` (each task only awaits its socket or timer: what it does with
//! the bytes and the time is plain functions, unit-tested without a socket), `tls` and
//! `error`.

mod config;
mod error;
mod handle;
mod in_flight;
mod keepalive;
mod pending;
mod reader;
mod request;
mod shared;
mod state;
mod stats;
mod sweeper;
mod tls;
mod writer;

pub use config::ConnectionConfig;
pub use error::{
    BreakCause, ConnectFailure, ConnectionError, ProtocolFault, RequestError, TlsCause, TlsFailure,
};
pub use handle::Connection;
#[cfg(feature = "unstable-internals")]
pub use in_flight::{InFlightTable, TableSlot};
pub use pending::{PendingAnswer, StreamWait};
pub use stats::ConnectionStats;
pub use tls::{TlsConfig, TlsConfigError};
