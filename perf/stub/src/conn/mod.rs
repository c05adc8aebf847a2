//! One client connection: read, answer every complete frame, write the answers in one go.
//!
//! The reader appends what arrived to its buffer (glommio: one `recv` of up to 64 KiB;
//! doppio's io_uring runtime: the multishot receive's buffers), walks every complete frame in
//! place (no per-frame allocation or reference count), and appends each answer to the
//! connection's output buffer; the flusher hands everything buffered to the runtime as one
//! send per turn. So a read that brought 256 requests costs one receive and one send.
//!
//! Fault reactions act here: a delayed answer is written by a small task when its time
//! comes (other answers are not held back), a stall holds both reading and writing, a drop
//! closes the socket, a malformed frame or a wrong stream id replaces the answer.
//!
//! Invariants: memory per connection is bounded: reading pauses while more than
//! `OUT_LIMIT` bytes of answers wait for a client that does not read, and a frame longer
//! than `MAX_BODY` is refused with a PROTOCOL_ERROR and the connection closed (both in
//! `state`). Nothing from the wire is trusted: a malformed request is an ERROR answer, never
//! a panic.
//!
//! Files (this one is a map; nothing is defined here), imports going down the list only:
//! - `serve`: one accepted connection served: TLS handshake, the read loop, v5 segments,
//!   the frames walked in place.
//! - `handle`: each request frame answered by the function of its opcode.
//! - `react`: fault actions, what a fired rule does instead of (or to) the answer.
//! - `flush`: writing, one send per turn (v5 segments, TLS).
//! - `watch`: a cluster node's connections closed when it is taken down, and sent the
//!   events they registered for.
//! - `state`: the connection's state and the limits on its memory.
//! - `encode`: a message encoded into the output.

mod encode;
mod flush;
mod handle;
mod react;
mod serve;
mod state;
mod watch;

pub(crate) use serve::serve;
pub(crate) use watch::{watch, Watched};
