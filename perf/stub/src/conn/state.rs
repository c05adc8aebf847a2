//! One connection's state: its socket, output buffer, settled version and framing, the
//! extensions it turned on and the counts of its current read batch; and the limits that
//! bound its memory.

use std::cell::{Cell, RefCell};
use std::task::Waker;
use std::time::Instant;

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::response::Response;
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::segment::SegmentCompression;
use doppio_proto::{MetadataIds, ProtocolVersion};
use doppio_rt::TcpStream;

use crate::conn::encode::put_message;
use crate::node::Tally;
use crate::tls::ServerTls;

/// Answers waiting beyond this many bytes pause reading (a client that does not read).
pub(crate) const OUT_LIMIT: usize = 16 << 20;
/// The largest request body accepted.
pub(crate) const MAX_BODY: usize = 16 << 20;

/// One connection, shared by its reader, its flusher and its delayed answers.
pub(super) struct Conn {
    pub(super) socket: TcpStream,
    /// TLS state (reader decrypts, flusher encrypts; each borrows it between awaits only).
    pub(super) tls: Option<RefCell<ServerTls>>,
    pub(super) number: u64,
    pub(super) out: RefCell<BytesMut>,
    pub(super) flusher: Cell<Option<Waker>>,
    /// The reader, waiting for the output to drain below the limit.
    pub(super) drained: Cell<Option<Waker>>,
    pub(super) closed: Cell<bool>,
    /// Close once what is buffered has been written (after a truncated frame).
    pub(super) close_after_flush: Cell<bool>,
    pub(super) stalled_until: Cell<Option<Instant>>,
    /// lz4 on envelopes (v4 only: v5 compresses segments, see `segments`).
    pub(super) lz4: Cell<bool>,
    pub(super) keyspace: RefCell<Option<String>>,
    /// The version answers are written in: the request's, until a STARTUP settles the
    /// connection's version (v4 or v5) for good.
    pub(super) version: Cell<ProtocolVersion>,
    pub(super) settled: Cell<bool>,
    /// v5 framing both ways, once a v5 STARTUP has been answered: requests arrive in
    /// segments, answers leave in them (lz4 on segments when STARTUP asked for it).
    pub(super) segments: Cell<Option<SegmentCompression>>,
    /// Bytes at the front of `out` written before framing began (the STARTUP's own answer,
    /// which v5 sends unframed): the flusher sends them as they are.
    pub(super) unframed: Cell<usize>,
    /// The emulated ScyllaDB shard of this connection (when the emulation is on).
    pub(super) scylla_shard: Option<u16>,
    /// The ScyllaDB extensions this connection's STARTUP turned on (of those offered).
    pub(super) extensions: Cell<Extensions>,
    /// EXECUTEs with a partition key in the current read batch, and those of them whose
    /// token another shard owns (added to the shared counters once per batch).
    pub(super) batch_keyed: Cell<u64>,
    pub(super) batch_wrong: Cell<u64>,
    /// EXECUTEs of the current read batch checked against their token's replicas (a
    /// cluster node only; added to the node's counters once per batch).
    pub(super) batch_placed: Cell<Tally>,
    /// The event types a REGISTER asked for (`crate::events`' bits).
    pub(super) events: Cell<u8>,
}

impl Conn {
    pub(super) fn close(&self) {
        if self.closed.replace(true) {
            return;
        }
        // Ends both directions (waking a parked read) without closing the descriptor.
        self.socket.shutdown();
        self.wake_flusher();
        if let Some(w) = self.drained.take() {
            w.wake();
        }
    }

    /// Answers were buffered (or the connection is to close): the flusher runs, or, if it
    /// is still sending the batch before lazily, that send's completion matters now.
    pub(super) fn wake_flusher(&self) {
        match self.flusher.take() {
            Some(w) => w.wake(),
            None => self.socket.hurry_send(),
        }
    }

    pub(super) fn compression(&self) -> Option<Compression> {
        self.lz4.get().then_some(Compression::Lz4)
    }

    /// Whether this connection's STARTUP turned on ScyllaDB's result metadata ids in v4.
    #[inline]
    pub(super) fn metadata_ids(&self) -> MetadataIds {
        self.extensions.get().metadata_ids()
    }

    /// Encodes `response` on `stream` into `out`.
    pub(super) fn put(&self, out: &mut BytesMut, stream: i16, response: &Response) {
        put_message(
            out,
            self.version.get(),
            self.metadata_ids(),
            stream,
            response,
            self.compression(),
        );
    }

    pub(super) async fn sleep_while_stalled(&self) {
        while let Some(until) = self.stalled_until.get() {
            let now = doppio_rt::now();
            if now >= until {
                self.stalled_until.set(None);
                break;
            }
            doppio_rt::sleep(until - now).await;
        }
    }
}
