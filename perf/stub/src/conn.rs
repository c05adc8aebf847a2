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
//! [`OUT_LIMIT`] bytes of answers wait for a client that does not read, and a frame longer
//! than [`MAX_BODY`] is refused with a PROTOCOL_ERROR and the connection closed. Nothing
//! from the wire is trusted: a malformed request is an ERROR answer, never a panic.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::task::{Poll, Waker};
use std::time::Instant;

use bytes::{Buf, BytesMut};
use doppio_proto::compression::Compression;
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::{Direction, Flags, FrameDecoder, FrameHeader, FrameStatus, Opcode};
use doppio_proto::murmur3;
use doppio_proto::request::Request;
use doppio_proto::response::{
    encode_response, Envelope, ErrorCode, ErrorDetail, ErrorResponse, Response, ResultBody,
};
use doppio_proto::scylla_extensions::{Extensions, RateLimitError, TABLETS_PAYLOAD_KEY};
use doppio_proto::segment::{
    EnvelopeAssembler, SegmentCompression, SegmentDecoder, SegmentEncoder,
};
use doppio_proto::{ProtoError, ProtocolVersion};
use doppio_rt::TcpStream;

use crate::answer::{self, Answer};
use crate::node::Tally;
use crate::rules::{Malformed, Probe, Reaction};
use crate::shard::ShardContext;
use crate::tables;
use crate::tls::ServerTls;

/// Answers waiting beyond this many bytes pause reading (a client that does not read).
pub(crate) const OUT_LIMIT: usize = 16 << 20;
/// The largest request body accepted.
pub(crate) const MAX_BODY: usize = 16 << 20;

struct Conn {
    socket: TcpStream,
    /// TLS state (reader decrypts, flusher encrypts; each borrows it between awaits only).
    tls: Option<RefCell<ServerTls>>,
    number: u64,
    out: RefCell<BytesMut>,
    flusher: Cell<Option<Waker>>,
    /// The reader, waiting for the output to drain below the limit.
    drained: Cell<Option<Waker>>,
    closed: Cell<bool>,
    /// Close once what is buffered has been written (after a truncated frame).
    close_after_flush: Cell<bool>,
    stalled_until: Cell<Option<Instant>>,
    /// lz4 on envelopes (v4 only: v5 compresses segments, see `segments`).
    lz4: Cell<bool>,
    keyspace: RefCell<Option<String>>,
    /// The version answers are written in: the request's, until a STARTUP settles the
    /// connection's version (v4 or v5) for good.
    version: Cell<ProtocolVersion>,
    settled: Cell<bool>,
    /// v5 framing both ways, once a v5 STARTUP has been answered: requests arrive in
    /// segments, answers leave in them (lz4 on segments when STARTUP asked for it).
    segments: Cell<Option<SegmentCompression>>,
    /// Bytes at the front of `out` written before framing began (the STARTUP's own answer,
    /// which v5 sends unframed): the flusher sends them as they are.
    unframed: Cell<usize>,
    /// The emulated ScyllaDB shard of this connection (when the emulation is on).
    scylla_shard: Option<u16>,
    /// The ScyllaDB extensions this connection's STARTUP turned on (of those offered).
    extensions: Cell<Extensions>,
    /// EXECUTEs with a partition key in the current read batch, and those of them whose
    /// token another shard owns (added to the shared counters once per batch).
    batch_keyed: Cell<u64>,
    batch_wrong: Cell<u64>,
    /// EXECUTEs of the current read batch checked against their token's replicas (a
    /// cluster node only; added to the node's counters once per batch).
    batch_placed: Cell<Tally>,
}

impl Conn {
    fn close(&self) {
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
    fn wake_flusher(&self) {
        match self.flusher.take() {
            Some(w) => w.wake(),
            None => self.socket.hurry_send(),
        }
    }

    fn compression(&self) -> Option<Compression> {
        self.lz4.get().then_some(Compression::Lz4)
    }

    /// Encodes `response` on `stream` into `out`.
    fn put(&self, out: &mut BytesMut, stream: i16, response: &Response) {
        put_message(
            out,
            self.version.get(),
            stream,
            response,
            self.compression(),
        );
    }

    async fn sleep_while_stalled(&self) {
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

/// Serves one accepted connection until it closes.
pub(crate) async fn serve(stream: TcpStream, ctx: Rc<ShardContext>, scylla_shard: Option<u16>) {
    let _ = stream.set_nodelay(true);
    // Ciphertext that came with the handshake's last flight is the reader's to decrypt.
    let mut raw = BytesMut::new();
    let tls = match &ctx.tls {
        None => None,
        Some(config) => match ServerTls::handshake(&stream, config, &mut raw).await {
            Some(tls) => Some(RefCell::new(tls)),
            None => return stream.shutdown(),
        },
    };
    let number = ctx.next_connection.fetch_add(1, Ordering::Relaxed) + 1;
    let conn = Rc::new(Conn {
        socket: stream,
        tls,
        number,
        out: RefCell::new(BytesMut::with_capacity(64 * 1024)),
        flusher: Cell::new(None),
        drained: Cell::new(None),
        closed: Cell::new(false),
        close_after_flush: Cell::new(false),
        stalled_until: Cell::new(None),
        lz4: Cell::new(false),
        keyspace: RefCell::new(None),
        version: Cell::new(ProtocolVersion::V4),
        settled: Cell::new(false),
        segments: Cell::new(None),
        unframed: Cell::new(0),
        scylla_shard,
        extensions: Cell::new(Extensions::default()),
        batch_keyed: Cell::new(0),
        batch_wrong: Cell::new(0),
        batch_placed: Cell::new(Tally::default()),
    });
    doppio_rt::spawn_local(flush_loop(conn.clone())).detach();
    // Any version the stub speaks until a STARTUP settles it.
    let any = FrameDecoder::new(Direction::Request)
        .with_any_version()
        .with_max_body_len(MAX_BODY);
    let mut inbuf = BytesMut::with_capacity(128 * 1024);
    // v5: segment payloads gathered here (one copy per segment, the price of its CRC32),
    // then walked as `inbuf` is before framing.
    let mut envelopes = BytesMut::new();
    let mut assembler = EnvelopeAssembler::new(MAX_BODY);
    // The client's first requests may have come with its last handshake flight: rustls
    // holds them decrypted already, and no further read would bring them.
    if let Some(tls) = &conn.tls {
        if tls.borrow_mut().decrypt(&mut raw, &mut inbuf).is_err() {
            return conn.close();
        }
    }
    let mut primed = !inbuf.is_empty();
    'serve: while !conn.closed.get() {
        conn.sleep_while_stalled().await;
        // Backpressure: a client that does not read its answers stops being read.
        poll_fn(|cx| {
            if conn.closed.get() || conn.out.borrow().len() <= OUT_LIMIT {
                return Poll::Ready(());
            }
            conn.drained.set(Some(cx.waker().clone()));
            Poll::Pending
        })
        .await;
        let read = if primed {
            primed = false;
            Ok(inbuf.len())
        } else if raw.is_empty() {
            poll_fn(|cx| {
                if conn.closed.get() {
                    return Poll::Ready(Ok(0));
                }
                match &conn.tls {
                    None => conn.socket.poll_recv(cx, &mut inbuf),
                    Some(_) => conn.socket.poll_recv(cx, &mut raw),
                }
            })
            .await
        } else {
            Ok(raw.len())
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(tls) = &conn.tls {
            if tls.borrow_mut().decrypt(&mut raw, &mut inbuf).is_err() {
                break;
            }
        }
        // More than one pass only when a v5 STARTUP switched to segments with bytes still
        // behind it (a client that did not wait for READY).
        loop {
            let framing = conn.segments.get();
            let decoder = if conn.settled.get() {
                any.with_version(conn.version.get())
            } else {
                any
            };
            let source = match framing {
                None => &mut inbuf,
                Some(compression) => {
                    if let Err(e) = gather(compression, &mut inbuf, &mut assembler, &mut envelopes)
                    {
                        let mut out = conn.out.borrow_mut();
                        conn.put(
                            &mut out,
                            0,
                            &answer::protocol_error(format!("bad segment: {e}")),
                        );
                        drop(out);
                        conn.close_after_flush.set(true);
                        conn.wake_flusher();
                        break 'serve;
                    }
                    &mut envelopes
                }
            };
            let mut pos = 0;
            loop {
                match decoder.check(&source[pos..]) {
                    Ok(FrameStatus::Complete { header, frame_len }) => {
                        let body = &source[pos + doppio_proto::frame::HEADER_LEN..pos + frame_len];
                        handle(&conn, &ctx, &header, body);
                        pos += frame_len;
                        if conn.closed.get() || conn.segments.get() != framing {
                            break;
                        }
                    }
                    Ok(FrameStatus::NeedMore(_)) => break,
                    Err(e) => {
                        // The stream cannot be resynchronised: say why and hang up.
                        let stream = source
                            .get(pos + 2..pos + 4)
                            .map_or(0, |s| i16::from_be_bytes([s[0], s[1]]));
                        let mut out = conn.out.borrow_mut();
                        conn.put(
                            &mut out,
                            stream,
                            &answer::protocol_error(format!("bad frame: {e}")),
                        );
                        conn.close_after_flush.set(true);
                        break;
                    }
                }
            }
            source.advance(pos);
            let switched = conn.segments.get() != framing;
            if !switched || inbuf.is_empty() || conn.close_after_flush.get() || conn.closed.get() {
                break;
            }
        }
        if let (Some(shard), Some(e)) = (conn.scylla_shard, ctx.scylla()) {
            e.count(shard, conn.batch_keyed.take(), conn.batch_wrong.take());
        }
        if ctx.node().checks_replicas() {
            ctx.node().add(conn.batch_placed.take());
        }
        if !conn.out.borrow().is_empty() {
            conn.wake_flusher();
        }
        if conn.close_after_flush.get() {
            break;
        }
    }
    if !conn.close_after_flush.get() {
        conn.close();
    }
    if let (Some(shard), Some(e)) = (conn.scylla_shard, ctx.scylla()) {
        e.release(shard);
    }
}

/// Writes what the reader (or a delayed answer) buffered, one batch per wake-up.
async fn flush_loop(conn: Rc<Conn>) {
    let mut batch = BytesMut::with_capacity(64 * 1024);
    // v5: the batch's envelopes framed into segments here, then swapped with `batch` (both
    // keep their capacity).
    let mut framed = BytesMut::new();
    // TLS: each batch is encrypted into this, then the buffers swap (both keep capacity).
    let mut cipher = BytesMut::new();
    loop {
        let open = poll_fn(|cx| {
            if conn.closed.get() {
                return Poll::Ready(false);
            }
            if conn.out.borrow().is_empty() {
                conn.flusher.set(Some(cx.waker().clone()));
                return Poll::Pending;
            }
            Poll::Ready(true)
        })
        .await;
        if !open {
            return;
        }
        conn.sleep_while_stalled().await;
        std::mem::swap(&mut *conn.out.borrow_mut(), &mut batch);
        if let Some(w) = conn.drained.take() {
            w.wake();
        }
        if let Some(compression) = conn.segments.get() {
            let raw = conn.unframed.replace(0).min(batch.len());
            framed.clear();
            framed.extend_from_slice(&batch[..raw]);
            let encoder = SegmentEncoder::new(compression);
            if encoder.encode(&batch[raw..], &mut framed).is_err() {
                // Only a malformed answer a fault rule asked for fails to frame: it goes out
                // in valid segments all the same, so that the client's envelope checks meet
                // it.
                encoder.encode_unchecked(&batch[raw..], &mut framed);
            }
            batch.clear();
            std::mem::swap(&mut batch, &mut framed);
        }
        if let Some(tls) = &conn.tls {
            cipher.clear();
            if tls.borrow_mut().encrypt(&batch, &mut cipher).is_err() {
                return conn.close();
            }
            batch.clear();
            std::mem::swap(&mut batch, &mut cipher);
        }
        // Lazy unless the connection closes after this batch: whoever buffers more answers
        // (or asks for the close) hurries it (`wake_flusher`), so on io_uring its completion
        // alone does not end the executor's wait.
        let (sent, back) = if conn.close_after_flush.get() {
            conn.socket.send(batch).await
        } else {
            conn.socket.send_lazy(batch).await
        };
        batch = back;
        if sent.is_err() {
            return conn.close();
        }
        batch.clear();
        if conn.close_after_flush.get() && conn.out.borrow().is_empty() {
            return conn.close();
        }
    }
}

/// Moves every whole segment at the front of `inbuf` into `envelopes` (through the
/// assembler, which joins a large envelope's parts); a bad segment is an error.
fn gather(
    compression: SegmentCompression,
    inbuf: &mut BytesMut,
    assembler: &mut EnvelopeAssembler,
    envelopes: &mut BytesMut,
) -> Result<(), ProtoError> {
    let decoder = SegmentDecoder::new(compression);
    while let Some(segment) = decoder.decode(inbuf)? {
        assembler.push(segment, envelopes)?;
    }
    Ok(())
}

/// Appends `response` on `stream` in `version` (envelope compressed when `compression`,
/// v4 only).
fn put_message(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    response: &Response,
    compression: Option<Compression>,
) {
    let envelope = Envelope {
        version,
        ..Envelope::default()
    };
    if let Err(e) = encode_response(out, stream, &envelope, response, compression) {
        // Only a body over 2 GiB fails; say so instead of sending nothing.
        let fallback = answer::protocol_error(format!("the stub cannot encode its answer: {e}"));
        let _ = encode_response(out, stream, &envelope, &fallback, None);
    }
}

/// The prepared id of an EXECUTE and the offset of its flags (`[short bytes id]`, in v5
/// `[short bytes result_metadata_id]`, then `[short consistency]`).
fn execute_id(body: &[u8], version: ProtocolVersion) -> Option<(&[u8], usize)> {
    let short = |at: usize| -> Option<usize> {
        Some(usize::from(u16::from_be_bytes([
            *body.get(at)?,
            *body.get(at + 1)?,
        ])))
    };
    let len = short(0)?;
    let id = body.get(2..2 + len)?;
    let mut at = 2 + len;
    if version.has_v5_fields() {
        at += 2 + short(at)?;
    }
    Some((id, at + 2))
}

/// The query flags at `at` (`[byte]` in v4, `[int]` in v5) and the offset after them.
fn query_flags(body: &[u8], at: usize, version: ProtocolVersion) -> Option<(u32, usize)> {
    if version.has_int_flags() {
        let b = body.get(at..at + 4)?;
        Some((u32::from_be_bytes([b[0], b[1], b[2], b[3]]), at + 4))
    } else {
        Some((u32::from(*body.get(at)?), at + 1))
    }
}

/// The EXECUTE fields the fast path needs: the prepared id and `skip_metadata`.
fn execute_head(body: &[u8], version: ProtocolVersion) -> Option<(&[u8], bool)> {
    let (id, at) = execute_id(body, version)?;
    let (flags, _) = query_flags(body, at, version)?;
    Some((id, flags & 0x02 != 0))
}

/// The first bound value of an EXECUTE (`[short bytes id]`, in v5 `[short bytes
/// result_metadata_id]`, `[short consistency][flags][short n][value...]`, each value `[int
/// length][bytes]`, after its `[string name]` when flag 0x40 says values are named); `None`
/// when it has none or is malformed.
fn execute_first_value(body: &[u8], version: ProtocolVersion) -> Option<&[u8]> {
    let (_, at) = execute_id(body, version)?;
    let (flags, mut at) = query_flags(body, at, version)?;
    if flags & 0x01 == 0 || u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]) == 0 {
        return None;
    }
    at += 2;
    if flags & 0x40 != 0 {
        let name = usize::from(u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]));
        at += 2 + name;
    }
    let n = i32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?);
    let n = usize::try_from(n).ok()?;
    body.get(at + 4..at + 4 + n)
}

/// Answers one request frame.
fn handle(conn: &Rc<Conn>, ctx: &ShardContext, header: &FrameHeader, raw: &[u8]) {
    let stream = header.stream;
    if !conn.settled.get() {
        let newest = ctx.responder.borrow().newest_protocol();
        if header.version > newest {
            // As Cassandra does: refused in a version the stub speaks, naming those.
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error(format!(
                    "Invalid or unsupported protocol version ({}); the stub speaks up to {newest}",
                    header.version.number()
                )),
            );
            return;
        }
        conn.version.set(header.version);
    }
    let version = header.version;
    let decompressed;
    let body: &[u8] = if header.flags.contains(Flags::COMPRESSION) {
        if !conn.lz4.get() {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error("a compressed frame, but no compression was agreed"),
            );
            return;
        }
        match Compression::Lz4.decompress(raw, MAX_BODY) {
            Ok(b) => {
                decompressed = b;
                &decompressed
            }
            Err(e) => {
                let mut out = conn.out.borrow_mut();
                conn.put(
                    &mut out,
                    stream,
                    &answer::protocol_error(format!("bad lz4 body: {e}")),
                );
                return;
            }
        }
    } else {
        raw
    };
    // The hot path: EXECUTE of a known statement, answered from its encoded body (one that
    // may need paging is decoded in full below).
    if header.opcode == Opcode::Execute {
        let sharded = conn.scylla_shard.zip(ctx.scylla());
        let node = ctx.node();
        // The tablet whose routing this answer carries (a request that reached a node or
        // shard that holds no replica of its tablet, on a connection with tablets routing).
        let mut tablet_payload = None;
        if sharded.is_some() || node.checks_replicas() {
            // The partition key is the first bound value of every statement the stub
            // prepares when it emulates ScyllaDB or plays a cluster.
            if let Some(key) = execute_first_value(body, version) {
                let token = murmur3::token(key);
                // With tablets, the tablet and the epoch it is placed in now.
                let tablet = node.tablets().map(|t| {
                    let (layout, _) = t;
                    let at = (
                        layout.tablet_of(token),
                        layout.epoch(doppio_rt::now().saturating_duration_since(ctx.started)),
                    );
                    (t, at)
                });
                let mut misplaced = false;
                if let Some((shard, e)) = sharded {
                    let owner = match tablet {
                        Some(((layout, here), (k, epoch))) => layout.shard_on(k, here, epoch),
                        None => Some(e.config.sharder().shard_of(token)),
                    };
                    conn.batch_keyed.set(conn.batch_keyed.get() + 1);
                    if owner != Some(shard) {
                        misplaced = true;
                        if owner.is_some() {
                            conn.batch_wrong.set(conn.batch_wrong.get() + 1);
                        }
                    }
                }
                // Only EXECUTEs of a statement this node knows (an UNPREPARED one is sent
                // again once prepared).
                let conditional = execute_head(body, version).and_then(|(id, _)| {
                    let responder = ctx.responder.borrow();
                    responder.lookup(id).map(|e| e.conditional())
                });
                if let Some(conditional) = conditional {
                    let mut tally = conn.batch_placed.get();
                    match tablet {
                        Some((t, at)) => {
                            let payload = misplaced && conn.extensions.get().tablets_routing_v1;
                            if payload {
                                tablet_payload = Some((t.0, at));
                            }
                            node.place_in_tablet(&mut tally, t, at, conditional, payload);
                        }
                        None => node.place(&mut tally, token, conditional),
                    }
                    conn.batch_placed.set(tally);
                }
            }
        }
        // Recorded when the statement is one this node knows: the EXECUTE reached a node
        // that could run it, whatever its answer (dropped, stalled, an error). One answered
        // UNPREPARED ran nowhere, and its client rightly sends it again once prepared.
        if ctx.records_values() {
            let known = execute_head(body, version)
                .is_some_and(|(id, _)| ctx.responder.borrow().lookup(id).is_some());
            if known {
                if let Some(v) = execute_first_value(body, version) {
                    ctx.record_value(v);
                }
            }
        }
        if let Some((id, skip_metadata)) = execute_head(body, version) {
            let responder = ctx.responder.borrow();
            if let Some(entry) = responder.lookup(id).filter(|e| !e.pageable()) {
                let lz4 = conn.lz4.get();
                let mut matcher = ctx.matcher.borrow_mut();
                let rule = if matcher.is_empty() {
                    None
                } else {
                    matcher.check(&Probe {
                        opcode: Opcode::Execute,
                        statement: Some(&entry.text),
                        connection: conn.number,
                        node: node.index(),
                        elapsed: doppio_rt::now().saturating_duration_since(ctx.started),
                        // Only with rules: the hot path without them decodes no parameters.
                        serial_consistency: Request::decode(header, body)
                            .ok()
                            .and_then(|r| serial_of(&r.request)),
                    })
                };
                match rule {
                    None => {
                        let mut out = conn.out.borrow_mut();
                        match tablet_payload {
                            None => answer::put_body_frame(
                                &mut out,
                                version,
                                stream,
                                entry.body(skip_metadata, lz4),
                                lz4,
                            ),
                            // A misroute: the rare path, which encodes the payload.
                            Some((layout, (k, epoch))) => answer::put_body_frame_with_payload(
                                &mut out,
                                version,
                                stream,
                                entry.body(skip_metadata, false),
                                (TABLETS_PAYLOAD_KEY, &layout.payload(k, epoch)),
                                lz4,
                            ),
                        }
                    }
                    Some(i) => {
                        let elapsed = doppio_rt::now().saturating_duration_since(ctx.started);
                        let reaction = matcher.rule(i).then.clone();
                        let delay_u = matcher.uniform();
                        drop(matcher);
                        ctx.fired(i, conn.number);
                        let body = entry.body(skip_metadata, lz4).clone();
                        drop(responder);
                        react(
                            conn,
                            stream,
                            reaction,
                            delay_u,
                            elapsed,
                            Some(id),
                            false, // an EXECUTE's answer
                            move |out: &mut BytesMut, s| {
                                answer::put_body_frame(out, version, s, &body, lz4)
                            },
                        );
                    }
                }
                return;
            }
        }
    }
    let request = match Request::decode(header, body) {
        Ok(r) => r,
        Err(e) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error(format!("bad {}: {e}", header.opcode)),
            );
            return;
        }
    };
    let request = request.request;
    // STARTUP: compression, if asked for, applies from the next frame on.
    let mut start_lz4 = false;
    if let Request::Startup(options) = &request {
        if let Some(e) = ctx.scylla() {
            conn.extensions
                .set(e.config.extensions.accepted_in_startup(options));
        }
        match options
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("COMPRESSION"))
        {
            Some((_, v)) if v.eq_ignore_ascii_case("lz4") => start_lz4 = true,
            Some((_, v)) => {
                let mut out = conn.out.borrow_mut();
                conn.put(
                    &mut out,
                    stream,
                    &answer::protocol_error(format!("compression {v} is not supported (lz4 is)")),
                );
                return;
            }
            None => {}
        }
    }
    let statement: Option<String> = match &request {
        Request::Query(t, _) | Request::Prepare { query: t, .. } => Some((*t).to_owned()),
        Request::Execute { id, .. } => ctx.responder.borrow().lookup(id).map(|e| e.text.clone()),
        _ => None,
    };
    let mut answer = {
        let mut keyspace = conn.keyspace.borrow_mut();
        ctx.responder
            .borrow_mut()
            .answer(&request, &mut keyspace, conn.lz4.get(), version)
    };
    if let (Answer::Message(Response::Supported(options)), Some(shard), Some(e)) =
        (&mut answer, conn.scylla_shard, ctx.scylla())
    {
        options.extend(e.supported(shard));
    }
    // ScyllaDB's LWT mark: a conditional statement's prepared metadata carries the bit the
    // connection negotiated.
    if let (Answer::Message(Response::Result(ResultBody::Prepared(p))), Some(mask)) =
        (&mut answer, conn.extensions.get().lwt_mask)
    {
        if statement.as_deref().is_some_and(tables::is_conditional) {
            p.metadata.extension_flags |= i32::from_be_bytes(mask.to_be_bytes());
        }
    }
    let id = match &request {
        Request::Execute { id, .. } => Some(*id),
        _ => None,
    };
    let rule = {
        let mut matcher = ctx.matcher.borrow_mut();
        if matcher.is_empty() {
            None
        } else {
            matcher
                .check(&Probe {
                    opcode: header.opcode,
                    statement: statement.as_deref(),
                    connection: conn.number,
                    node: ctx.node().index(),
                    elapsed: doppio_rt::now().saturating_duration_since(ctx.started),
                    serial_consistency: serial_of(&request),
                })
                .map(|i| (i, matcher.rule(i).then.clone(), matcher.uniform()))
        }
    };
    let lz4 = conn.lz4.get();
    let write = move |out: &mut BytesMut, s: i16| match &answer {
        Answer::Body(b) => answer::put_body_frame(out, version, s, b, lz4),
        Answer::Message(m) => put_message(out, version, s, m, lz4.then_some(Compression::Lz4)),
    };
    match rule {
        None => write(&mut conn.out.borrow_mut(), stream),
        Some((i, reaction, u)) => {
            ctx.fired(i, conn.number);
            // A v5 STARTUP's answer goes out before framing begins, even when delayed.
            let unframed = matches!(request, Request::Startup(_)) && version.has_segments();
            let elapsed = doppio_rt::now().saturating_duration_since(ctx.started);
            react(conn, stream, reaction, u, elapsed, id, unframed, write);
        }
    }
    if let Request::Startup(_) = &request {
        // The version is settled; v5 frames everything after this answer in segments, and
        // compresses segments rather than envelopes.
        conn.settled.set(true);
        if version.has_segments() {
            conn.segments.set(Some(if start_lz4 {
                SegmentCompression::Lz4
            } else {
                SegmentCompression::None
            }));
            conn.unframed.set(conn.out.borrow().len());
        } else if start_lz4 {
            conn.lz4.set(true);
        }
    }
}

/// The serial consistency a QUERY, EXECUTE or BATCH carries.
fn serial_of(request: &Request<'_>) -> Option<Consistency> {
    match request {
        Request::Query(_, p) | Request::Execute { params: p, .. } => p.params.serial_consistency,
        Request::Batch {
            serial_consistency, ..
        } => *serial_consistency,
        _ => None,
    }
}

/// ScyllaDB's answer to an operation over its partition's rate limit: the rate-limit error
/// with its fields where the connection turned the extension on, Config_error otherwise.
fn rate_limit_error(limit: RateLimitError, extensions: Extensions) -> Response {
    let message = "Per-partition rate limit reached (doppio-stub)".to_owned();
    let (code, detail) = match extensions.rate_limit_code {
        Some(code) => (ErrorCode::Other(code), ErrorDetail::RateLimit(limit)),
        None => (ErrorCode::ConfigError, ErrorDetail::None),
    };
    Response::Error(Box::new(ErrorResponse {
        code,
        message,
        detail,
    }))
}

/// The ERROR a rule asks for, with the fields its code requires.
fn injected_error(code: ErrorCode, message: &str, id: Option<&[u8]>) -> Response {
    use doppio_proto::consistency::Consistency::One;
    let detail = match code {
        ErrorCode::Unavailable => ErrorDetail::Unavailable {
            consistency: One,
            required: 1,
            alive: 0,
        },
        ErrorCode::WriteTimeout => ErrorDetail::WriteTimeout {
            consistency: One,
            received: 0,
            block_for: 1,
            write_type: "SIMPLE".into(),
            contentions: None,
        },
        ErrorCode::ReadTimeout => ErrorDetail::ReadTimeout {
            consistency: One,
            received: 0,
            block_for: 1,
            data_present: false,
        },
        ErrorCode::ReadFailure => ErrorDetail::ReadFailure {
            consistency: One,
            received: 0,
            block_for: 1,
            failures: 1,
            reasons: Vec::new(),
            data_present: false,
        },
        ErrorCode::WriteFailure => ErrorDetail::WriteFailure {
            consistency: One,
            received: 0,
            block_for: 1,
            failures: 1,
            reasons: Vec::new(),
            write_type: "SIMPLE".into(),
        },
        ErrorCode::FunctionFailure => ErrorDetail::FunctionFailure {
            keyspace: "stub".into(),
            function: "f".into(),
            arg_types: Vec::new(),
        },
        ErrorCode::AlreadyExists => ErrorDetail::AlreadyExists {
            keyspace: "stub".into(),
            table: "t".into(),
        },
        ErrorCode::Unprepared => ErrorDetail::Unprepared {
            id: bytes::Bytes::copy_from_slice(id.unwrap_or(&[0; 16])),
        },
        _ => ErrorDetail::None,
    };
    Response::Error(Box::new(ErrorResponse {
        code,
        message: message.to_owned(),
        detail,
    }))
}

/// Carries out a rule's reaction for the request on `stream`, `elapsed` after the stub
/// started (a drifting delay's time); `write` encodes the normal answer on a given stream.
/// `unframed`: the answer is a v5 STARTUP's, which goes out before segment framing begins
/// (a delayed one too: the client sends nothing else until it has it).
#[allow(clippy::too_many_arguments)] // one call site; each argument is a different fact
fn react(
    conn: &Rc<Conn>,
    stream: i16,
    reaction: Reaction,
    u: f64,
    elapsed: std::time::Duration,
    id: Option<&[u8]>,
    unframed: bool,
    write: impl FnOnce(&mut BytesMut, i16) + 'static,
) {
    match reaction {
        Reaction::Delay(d) => {
            let delay = d.sample(u, elapsed);
            let mut answer = BytesMut::new();
            write(&mut answer, stream);
            // A weak handle: the connection may close meanwhile.
            let out = Rc::downgrade(conn);
            doppio_rt::spawn_local(async move {
                doppio_rt::sleep(delay).await;
                if let Some(conn) = out.upgrade() {
                    if !conn.closed.get() {
                        let mut out = conn.out.borrow_mut();
                        out.extend_from_slice(&answer);
                        if unframed {
                            conn.unframed.set(out.len());
                        }
                        drop(out);
                        conn.wake_flusher();
                    }
                }
            })
            .detach();
        }
        Reaction::Error { code, message } => {
            let mut out = conn.out.borrow_mut();
            conn.put(&mut out, stream, &injected_error(code, &message, id));
        }
        Reaction::RateLimit(limit) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &rate_limit_error(limit, conn.extensions.get()),
            );
        }
        Reaction::Stall(d) => {
            let until = doppio_rt::now() + d;
            if conn.stalled_until.get().is_none_or(|t| t < until) {
                conn.stalled_until.set(Some(until));
            }
            write(&mut conn.out.borrow_mut(), stream);
        }
        Reaction::Drop => conn.close(),
        Reaction::WrongStream => {
            let other = if stream == i16::MAX {
                i16::MAX - 1
            } else {
                i16::MAX
            };
            write(&mut conn.out.borrow_mut(), other);
        }
        Reaction::Malformed(kind) => {
            let mut guard = conn.out.borrow_mut();
            let out: &mut BytesMut = &mut guard;
            let version = conn.version.get();
            let header = |flags, length| FrameHeader {
                version,
                direction: Direction::Response,
                flags,
                stream,
                opcode: Opcode::Result,
                length,
            };
            match kind {
                Malformed::BadVersion => {
                    let at = out.len();
                    header(Flags::NONE, 4).write_to(out);
                    out[at] = 0x7f;
                    out.extend_from_slice(&[0, 0, 0, 1]);
                }
                Malformed::OversizedLength => {
                    header(Flags::NONE, i32::MAX as u32).write_to(out);
                }
                Malformed::Truncated => {
                    header(Flags::NONE, 100).write_to(out);
                    out.extend_from_slice(&[0, 0, 0, 2, 0, 0]);
                    conn.close_after_flush.set(true);
                }
                Malformed::CorruptLz4 => {
                    // An uncompressed length of 100, then bytes that are no lz4 block.
                    header(Flags::COMPRESSION, 12).write_to(out);
                    out.extend_from_slice(&[0, 0, 0, 100, 0xff, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0]);
                }
                Malformed::BadBody => {
                    header(Flags::NONE, 4).write_to(out);
                    out.extend_from_slice(&0x7777_i32.to_be_bytes());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppio_proto::ProtocolVersion::{V4, V5};

    #[test]
    fn the_execute_head_is_read_without_trusting_lengths() {
        let body = [0, 2, 0xab, 0xcd, 0, 1, 0x02, 0, 0];
        assert_eq!(execute_head(&body, V4), Some((&[0xab, 0xcd][..], true)));
        assert_eq!(
            execute_head(&[0, 9, 1], V4),
            None,
            "an id longer than the body"
        );
        assert_eq!(execute_head(&[0, 1, 7, 0], V4), None, "no flags byte");
        assert_eq!(execute_head(&[], V4), None);
    }

    #[test]
    fn the_first_value_of_an_execute_is_read_without_trusting_lengths() {
        // id [ab], consistency ONE, flags VALUES, 2 values: [00 07] and [ff].
        let body = [
            0, 1, 0xab, 0, 1, 0x01, 0, 2, 0, 0, 0, 2, 0, 7, 0, 0, 0, 1, 0xff,
        ];
        assert_eq!(execute_first_value(&body, V4), Some(&[0, 7][..]));
        // Named values: the name is skipped.
        let named = [0, 1, 0xab, 0, 1, 0x41, 0, 1, 0, 1, b'k', 0, 0, 0, 1, 9];
        assert_eq!(execute_first_value(&named, V4), Some(&[9][..]));
        assert_eq!(
            execute_first_value(&[0, 1, 0xab, 0, 1, 0x00], V4),
            None,
            "no values"
        );
        assert_eq!(
            execute_first_value(&body[..13], V4),
            None,
            "a value past the body"
        );
        let null = [0, 1, 0xab, 0, 1, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(execute_first_value(&null, V4), None, "a null value");
    }

    #[test]
    fn v5_executes_are_read_past_their_result_metadata_id_and_int_flags() {
        // id [ab], result metadata id [cd ef], consistency ONE, flags SKIP_METADATA|VALUES
        // as an [int], 1 value [07].
        let body = [
            0, 1, 0xab, 0, 2, 0xcd, 0xef, 0, 1, 0, 0, 0, 0x03, 0, 1, 0, 0, 0, 1, 7,
        ];
        assert_eq!(execute_head(&body, V5), Some((&[0xab][..], true)));
        assert_eq!(execute_first_value(&body, V5), Some(&[7][..]));
        // Read as v4, the same bytes mean something else, and nothing is trusted.
        assert_ne!(execute_head(&body, V4), Some((&[0xab][..], true)));
        assert_eq!(
            execute_head(&body[..6], V5),
            None,
            "a result id past the body"
        );
        assert_eq!(execute_head(&body[..11], V5), None, "flags cut short");
        assert_eq!(
            execute_first_value(&body[..19], V5),
            None,
            "a value past the body"
        );
    }
}
