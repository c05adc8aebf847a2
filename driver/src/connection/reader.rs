//! The reader task: receives (decrypting with TLS), parses every complete frame (v5: out of
//! segments) and hands each to its caller's slot, or to the event queue.

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use doppio_proto::frame::{Direction, FrameDecoder, Opcode};
use doppio_proto::segment::{EnvelopeAssembler, SegmentDecoder};
use doppio_proto::ProtocolVersion;

use crate::clock::Ticks;
use crate::stages;

use super::error::{BreakCause, ConnectionError, ProtocolFault, TlsCause, TlsFailure};
use super::in_flight;
use super::shared::Shared;
use super::tls;

/// Reads, parses every complete frame, and hands each to its caller.
pub(super) async fn read_loop(shared: Rc<Shared>, mut raw: BytesMut) {
    // Received bytes are appended to `buf` by the runtime's stream (glommio: one `recv` into
    // a scratch buffer; io_uring: a copy out of each provided buffer, which goes back to the
    // ring at once); complete frames are split off it as zero-copy bodies.
    let mut buf = BytesMut::with_capacity(shared.config.read_chunk.max(1024) * 2);
    // Until STARTUP is answered the version is not settled (a node refusing the one offered
    // answers in its own): any version doppio speaks is read.
    let bare = FrameDecoder::new(Direction::Response)
        .with_any_version()
        .with_max_body_len(shared.config.max_frame_body);
    // v5 framing: segments are checked and their payloads gathered into `envelopes` (one
    // copy per segment, the price of the CRC32 over the payload), whose frames are then
    // split off as from `buf` before.
    let mut envelopes = BytesMut::new();
    let mut assembler = EnvelopeAssembler::new(shared.config.max_frame_body);
    // Whether nothing has arrived yet: a plaintext connection that a node closes before
    // answering anything, or answers with TLS, is talking to a TLS port.
    let mut first = true;
    loop {
        let read = if raw.is_empty() {
            poll_fn(|cx| {
                if shared.state.borrow().closed.is_some() {
                    return Poll::Ready(Ok(0));
                }
                match &shared.tls {
                    None => shared.socket.poll_recv(cx, &mut buf),
                    Some(_) => shared.socket.poll_recv(cx, &mut raw),
                }
            })
            .await
        } else {
            // Ciphertext left over from the TLS handshake. (No plaintext can be: CQL's
            // client speaks first, so a node sends no data with its handshake flights.)
            Ok(raw.len())
        };
        if let Some(tls) = &shared.tls {
            if let Ok(n) = read {
                if n > 0 {
                    match tls.borrow_mut().decrypt(&mut raw, &mut buf) {
                        Ok(true) => {}
                        Ok(false) => return shared.broken(BreakCause::CloseNotify),
                        Err((failure, cause)) => {
                            return shared.close(ConnectionError::Tls {
                                addr: shared.addr,
                                failure,
                                cause,
                            })
                        }
                    }
                }
            }
        } else if first && matches!(read, Ok(n) if n > 0) && tls::looks_like_tls(&buf) {
            // A node that closes without a byte may require TLS too; the handshake judges
            // that case (`handshake::handshake`), since only it knows nothing else was sent.
            return shared.close(ConnectionError::Tls {
                addr: shared.addr,
                failure: TlsFailure::NodeRequiresTls,
                cause: TlsCause::AnsweredWithTls,
            });
        }
        first = false;
        let n = match read {
            Ok(0) if !buf.is_empty() => {
                return shared.broken(BreakCause::ClosedMidFrame {
                    received: buf.len(),
                })
            }
            Ok(0) => return shared.broken(BreakCause::ClosedByNode),
            Ok(n) => n,
            Err(e) => return shared.broken(BreakCause::Read(Arc::new(e))),
        };
        let mut st = shared.state.borrow_mut();
        if st.closed.is_some() {
            return;
        }
        st.stats.reads += 1;
        st.stats.bytes_read += n as u64;
        st.last_read = Ticks::now();
        // The read's arrival, for timed requests answered in it (no clock read otherwise).
        let read_at = if st.timed.is_empty() {
            0
        } else {
            stages::now()
        };
        let (decoder, source) = match shared.segments.get() {
            None => (bare, &mut buf),
            Some(compression) => {
                let segments = SegmentDecoder::new(compression);
                loop {
                    let gathered = segments
                        .decode(&mut buf)
                        .and_then(|s| s.map(|s| assembler.push(s, &mut envelopes)).transpose());
                    match gathered {
                        Ok(Some(())) => {}
                        Ok(None) => break,
                        Err(e) => {
                            drop(st);
                            return shared.protocol_violation(ProtocolFault::Segment(Arc::new(e)));
                        }
                    }
                }
                (bare.with_version(ProtocolVersion::V5), &mut envelopes)
            }
        };
        loop {
            let frame = match decoder.decode(source) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => {
                    drop(st);
                    return shared.protocol_violation(ProtocolFault::Frame(Arc::new(e)));
                }
            };
            st.stats.frames_read += 1;
            let stream = frame.header.stream;
            if stream < 0 {
                if frame.header.opcode != Opcode::Event {
                    let op = frame.header.opcode;
                    drop(st);
                    return shared
                        .protocol_violation(ProtocolFault::ServerStream { opcode: op, stream });
                }
                if st.events.len() >= shared.config.max_queued_events {
                    st.events.pop_front();
                    st.stats.events_dropped += 1;
                }
                st.events.push_back(frame);
                if let Some(w) = st.event_waiter.take() {
                    w.wake();
                }
                continue;
            }
            let completion = st.in_flight.complete(stream, frame);
            if !matches!(completion, in_flight::Completion::UnknownStream) {
                st.awaited = st.awaited.saturating_sub(1);
            }
            match completion {
                in_flight::Completion::Delivered if read_at != 0 => {
                    st.timed_answer(stream, read_at);
                }
                in_flight::Completion::Delivered => {}
                in_flight::Completion::Late => st.stats.late_answers += 1,
                in_flight::Completion::UnknownStream => {
                    drop(st);
                    return shared.protocol_violation(ProtocolFault::UnknownStream { stream });
                }
            }
        }
        st.publish_awaited(&shared.socket);
        if st.in_flight.orphans() > shared.config.max_orphans {
            let orphans = st.in_flight.orphans();
            drop(st);
            return shared.close(ConnectionError::Closed {
                addr: shared.addr,
                reason: format!("{orphans} requests timed out without an answer"),
            });
        }
    }
}
