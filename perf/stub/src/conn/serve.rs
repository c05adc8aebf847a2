//! Serving one accepted connection: the TLS handshake, the read loop (backpressure, stalls,
//! v5 segments gathered into envelopes) and the frames it walks in place, each handed to
//! [`handle`]; the per-batch counters added to the shared ones.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use bytes::{Buf, BytesMut};
use doppio_proto::frame::{Direction, FrameDecoder, FrameStatus};
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::segment::{EnvelopeAssembler, SegmentCompression, SegmentDecoder};
use doppio_proto::{ProtoError, ProtocolVersion};
use doppio_rt::TcpStream;

use crate::answer;
use crate::conn::flush::flush_loop;
use crate::conn::handle::handle;
use crate::conn::state::{Conn, MAX_BODY, OUT_LIMIT};
use crate::conn::watch::Watched;
use crate::node::Tally;
use crate::shard::ShardContext;
use crate::tls::ServerTls;

/// Serves one accepted connection until it closes.
/// `watched`: the node's connections on this executor, when a watcher closes them if the
/// node is taken down and sends them events (a cluster).
pub(crate) async fn serve(
    stream: TcpStream,
    ctx: Rc<ShardContext>,
    scylla_shard: Option<u16>,
    watched: Option<Rc<Watched>>,
) {
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
        events: Cell::new(0),
    });
    if let Some(w) = &watched {
        w.add(&conn);
    }
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
