//! The reader task: receives (decrypting with TLS), parses every complete frame (v5: out of
//! segments) and hands each to its caller's slot, or to the event queue.
//!
//! The task only awaits the socket; what it does with the bytes that arrived is
//! [`FrameSplitter::dispatch`]'s and [`received`]'s, driven by bytes alone and unit-tested
//! below without a socket.

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use doppio_proto::frame::{Direction, FrameDecoder, Opcode};
use doppio_proto::segment::{EnvelopeAssembler, SegmentCompression, SegmentDecoder};
use doppio_proto::ProtocolVersion;

use crate::clock::Ticks;
use crate::stages;

use super::error::{BreakCause, ConnectionError, ProtocolFault, TlsCause, TlsFailure};
use super::in_flight;
use super::shared::Shared;
use super::state::State;
use super::tls;

/// Reads, parses every complete frame, and hands each to its caller.
pub(super) async fn read_loop(shared: Rc<Shared>, mut raw: BytesMut) {
    // Received bytes are appended to `buf` by the runtime's stream (glommio: one `recv` into
    // a scratch buffer; io_uring: a copy out of each provided buffer, which goes back to the
    // ring at once); complete frames are split off it as zero-copy bodies.
    let mut buf = BytesMut::with_capacity(shared.config.read_chunk.max(1024) * 2);
    let mut splitter = FrameSplitter::new(shared.config.max_frame_body);
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
        let n = match received(read, buf.len()) {
            Ok(n) => n,
            Err(cause) => return shared.broken(cause),
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
        let segments = shared.segments.get();
        let max_queued_events = shared.config.max_queued_events;
        if let Err(fault) =
            splitter.dispatch(&mut buf, &mut st, segments, read_at, max_queued_events)
        {
            drop(st);
            return shared.protocol_violation(fault);
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

/// What a receive brought (`read`, with `unparsed` bytes already waiting in the read
/// buffer): the number of bytes, or why the connection broke. Nothing received is the node
/// closing, in the middle of a frame if part of one was waiting.
fn received(read: std::io::Result<usize>, unparsed: usize) -> Result<usize, BreakCause> {
    match read {
        Ok(0) if unparsed != 0 => Err(BreakCause::ClosedMidFrame { received: unparsed }),
        Ok(0) => Err(BreakCause::ClosedByNode),
        Ok(n) => Ok(n),
        Err(e) => Err(BreakCause::Read(Arc::new(e))),
    }
}

/// The reader's parsing, apart from its socket: splits every complete frame off the bytes
/// that arrived (v5: out of complete segments) and hands each out. Allocates nothing of its
/// own per frame (bodies are zero-copy slices of the buffer they arrived in).
pub(super) struct FrameSplitter {
    /// Until STARTUP is answered the version is not settled (a node refusing the one offered
    /// answers in its own): any version doppio speaks is read.
    bare: FrameDecoder,
    /// v5 framing: segments are checked and their payloads gathered into `envelopes` (one
    /// copy per segment, the price of the CRC32 over the payload), whose frames are then
    /// split off as from the read buffer before.
    envelopes: BytesMut,
    assembler: EnvelopeAssembler,
}

impl FrameSplitter {
    /// A splitter refusing frame bodies (and v5 envelopes) larger than `max_frame_body`.
    pub(super) fn new(max_frame_body: usize) -> Self {
        Self {
            bare: FrameDecoder::new(Direction::Response)
                .with_any_version()
                .with_max_body_len(max_frame_body),
            envelopes: BytesMut::new(),
            assembler: EnvelopeAssembler::new(max_frame_body),
        }
    }

    /// Splits every complete frame off `buf` (the bytes received and not yet parsed; with
    /// v5 `segments`, every complete segment first) and hands each out under the state's
    /// borrow: an event to the queue (the oldest dropped past `max_queued_events`), an
    /// answer to its request's slot (one answer fewer awaited; a late one counted; a timed
    /// request stamped with `read_at`, the read's arrival, unless 0). A partial frame stays
    /// in `buf` (or the envelopes) for the next read. The first protocol violation stops it
    /// and is returned: the caller closes the connection.
    #[inline]
    pub(super) fn dispatch(
        &mut self,
        buf: &mut BytesMut,
        st: &mut State,
        segments: Option<SegmentCompression>,
        read_at: u64,
        max_queued_events: usize,
    ) -> Result<(), ProtocolFault> {
        let (decoder, source) = match segments {
            None => (self.bare, buf),
            Some(compression) => {
                let segments = SegmentDecoder::new(compression);
                loop {
                    let gathered = segments.decode(buf).and_then(|s| {
                        s.map(|s| self.assembler.push(s, &mut self.envelopes))
                            .transpose()
                    });
                    match gathered {
                        Ok(Some(())) => {}
                        Ok(None) => break,
                        Err(e) => return Err(ProtocolFault::Segment(Arc::new(e))),
                    }
                }
                (
                    self.bare.with_version(ProtocolVersion::V5),
                    &mut self.envelopes,
                )
            }
        };
        loop {
            let frame = match decoder.decode(source) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => return Err(ProtocolFault::Frame(Arc::new(e))),
            };
            st.stats.frames_read += 1;
            let stream = frame.header.stream;
            if stream < 0 {
                if frame.header.opcode != Opcode::Event {
                    let op = frame.header.opcode;
                    return Err(ProtocolFault::ServerStream { opcode: op, stream });
                }
                if st.events.len() >= max_queued_events {
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
                    return Err(ProtocolFault::UnknownStream { stream });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::task::{Context, Waker};

    use bytes::BufMut;
    use doppio_proto::frame::{Flags, Frame, FrameHeader};
    use doppio_proto::segment::SegmentEncoder;
    use doppio_proto::ProtoError;

    use super::super::in_flight::{Outcome, StreamHandle};
    use super::*;

    const MAX_BODY: usize = 1024;

    /// Appends a response frame of `version` on `stream` to `buf`.
    fn frame(
        buf: &mut BytesMut,
        version: ProtocolVersion,
        stream: i16,
        opcode: Opcode,
        body: &[u8],
    ) {
        FrameHeader {
            version,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream,
            opcode,
            length: body.len() as u32,
        }
        .write_to(buf);
        buf.put_slice(body);
    }

    fn answer(stream: i16, body: &[u8]) -> BytesMut {
        let mut buf = BytesMut::new();
        frame(&mut buf, ProtocolVersion::V4, stream, Opcode::Result, body);
        buf
    }

    /// `n` requests handed to the kernel, awaiting their answers.
    fn sent(st: &mut State, n: usize) -> Vec<StreamHandle> {
        let handles = (0..n)
            .map(|_| st.in_flight.try_acquire_now().expect("a free stream id"))
            .collect();
        st.awaited += n;
        handles
    }

    fn outcome(st: &mut State, h: StreamHandle) -> Option<Outcome<Frame, ConnectionError>> {
        match st
            .in_flight
            .poll_outcome(h, &mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(outcome) => Some(outcome),
            Poll::Pending => None,
        }
    }

    fn body(outcome: Option<Outcome<Frame, ConnectionError>>) -> Vec<u8> {
        match outcome {
            Some(Outcome::Answer(frame)) => frame.body.to_vec(),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn a_frame_split_across_two_reads_is_handed_out_once_whole() {
        let whole = answer(0, b"rows");
        // Split in the header, at its end, and in the body.
        for at in 1..whole.len() {
            let mut st = State::new(8);
            let h = sent(&mut st, 1)[0];
            let mut splitter = FrameSplitter::new(MAX_BODY);
            let mut buf = BytesMut::from(&whole[..at]);
            assert!(splitter.dispatch(&mut buf, &mut st, None, 0, 8).is_ok());
            assert_eq!(st.stats.frames_read, 0, "split at {at}");
            assert_eq!(st.awaited, 1);
            assert!(outcome(&mut st, h).is_none());
            buf.extend_from_slice(&whole[at..]);
            assert!(splitter.dispatch(&mut buf, &mut st, None, 0, 8).is_ok());
            assert_eq!(st.stats.frames_read, 1);
            assert_eq!(st.awaited, 0);
            assert!(buf.is_empty());
            assert_eq!(body(outcome(&mut st, h)), b"rows");
        }
    }

    #[test]
    fn two_frames_in_one_read_are_both_handed_out_and_a_third_waits() {
        let mut st = State::new(8);
        let h = sent(&mut st, 3);
        let mut buf = answer(h[1].stream, b"second");
        buf.extend_from_slice(&answer(h[0].stream, b"first"));
        let third = answer(h[2].stream, b"third");
        buf.extend_from_slice(&third[..4]);
        let mut splitter = FrameSplitter::new(MAX_BODY);
        assert!(splitter.dispatch(&mut buf, &mut st, None, 0, 8).is_ok());
        assert_eq!(st.stats.frames_read, 2);
        assert_eq!(st.awaited, 1);
        assert_eq!(body(outcome(&mut st, h[0])), b"first");
        assert_eq!(body(outcome(&mut st, h[1])), b"second");
        assert!(outcome(&mut st, h[2]).is_none());
        assert_eq!(
            &buf[..],
            &third[..4],
            "the partial frame waits for the next read"
        );
    }

    #[test]
    fn an_answer_after_its_timeout_is_counted_late() {
        let mut st = State::new(8);
        let h = sent(&mut st, 1)[0];
        let now = Ticks::now();
        st.in_flight.set_deadline(h, now);
        st.next_sweep = Some(now);
        st.sweep_due(now);
        assert_eq!(st.stats.timeouts, 1);
        assert!(matches!(outcome(&mut st, h), Some(Outcome::TimedOut)));
        assert_eq!(
            st.in_flight.orphans(),
            1,
            "the id waits for its late answer"
        );
        let mut buf = answer(h.stream, b"too late");
        let mut splitter = FrameSplitter::new(MAX_BODY);
        assert!(splitter.dispatch(&mut buf, &mut st, None, 0, 8).is_ok());
        assert_eq!(st.stats.late_answers, 1);
        assert_eq!(st.in_flight.orphans(), 0);
        assert_eq!(st.in_flight.in_use(), 0, "the late answer frees its id");
        assert_eq!(st.awaited, 0);
    }

    #[test]
    fn an_answer_on_a_stream_nobody_awaits_is_a_protocol_violation() {
        let mut st = State::new(8);
        let mut buf = answer(5, b"who asked?");
        let mut splitter = FrameSplitter::new(MAX_BODY);
        let fault = splitter.dispatch(&mut buf, &mut st, None, 0, 8);
        assert!(matches!(
            fault,
            Err(ProtocolFault::UnknownStream { stream: 5 })
        ));
    }

    #[test]
    fn events_are_queued_and_the_oldest_dropped_past_the_limit() {
        let mut st = State::new(8);
        st.event_waiter = Some(Waker::noop().clone());
        let mut buf = BytesMut::new();
        for body in [b"1", b"2", b"3"] {
            frame(&mut buf, ProtocolVersion::V4, -1, Opcode::Event, body);
        }
        let mut splitter = FrameSplitter::new(MAX_BODY);
        assert!(splitter.dispatch(&mut buf, &mut st, None, 0, 2).is_ok());
        assert_eq!(st.stats.frames_read, 3);
        assert_eq!(st.stats.events_dropped, 1);
        let kept: Vec<_> = st.events.iter().map(|f| f.body.to_vec()).collect();
        assert_eq!(kept, [b"2", b"3"]);
        assert!(st.event_waiter.is_none(), "the event's reader was woken");
    }

    #[test]
    fn a_server_stream_frame_that_is_not_an_event_is_a_protocol_violation() {
        let mut st = State::new(8);
        let mut buf = answer(-1, b"");
        let mut splitter = FrameSplitter::new(MAX_BODY);
        let fault = splitter.dispatch(&mut buf, &mut st, None, 0, 8);
        assert!(matches!(
            fault,
            Err(ProtocolFault::ServerStream {
                opcode: Opcode::Result,
                stream: -1
            })
        ));
    }

    #[test]
    fn a_frame_larger_than_max_frame_body_is_refused_from_its_header() {
        let mut st = State::new(8);
        let h = sent(&mut st, 1)[0];
        let mut buf = answer(h.stream, &[0; MAX_BODY + 1]);
        buf.truncate(9);
        let mut splitter = FrameSplitter::new(MAX_BODY);
        match splitter.dispatch(&mut buf, &mut st, None, 0, 8) {
            Err(ProtocolFault::Frame(e)) => {
                assert!(
                    matches!(
                        *e,
                        ProtoError::TooLong {
                            limit: MAX_BODY,
                            ..
                        }
                    ),
                    "{e}"
                )
            }
            other => panic!("expected a frame fault, got {other:?}"),
        }
        assert_eq!(st.stats.frames_read, 0);
    }

    #[test]
    fn v5_frames_are_split_out_of_segments_whatever_the_reads() {
        let mut envelopes = BytesMut::new();
        let mut st = State::new(8);
        let h = sent(&mut st, 2);
        frame(
            &mut envelopes,
            ProtocolVersion::V5,
            h[0].stream,
            Opcode::Result,
            b"one",
        );
        frame(
            &mut envelopes,
            ProtocolVersion::V5,
            h[1].stream,
            Opcode::Result,
            b"two",
        );
        let mut segments = BytesMut::new();
        SegmentEncoder::new(SegmentCompression::None)
            .encode(&envelopes, &mut segments)
            .expect("whole envelopes");
        let mut splitter = FrameSplitter::new(MAX_BODY);
        let mut buf = BytesMut::new();
        for byte in segments.iter() {
            buf.put_u8(*byte);
            let dispatched =
                splitter.dispatch(&mut buf, &mut st, Some(SegmentCompression::None), 0, 8);
            assert!(dispatched.is_ok());
        }
        assert_eq!(st.stats.frames_read, 2);
        assert_eq!(body(outcome(&mut st, h[0])), b"one");
        assert_eq!(body(outcome(&mut st, h[1])), b"two");
        // A v4 frame where v5 segments are due is a violation, not a frame.
        let mut buf = answer(0, b"unframed");
        let fault = splitter.dispatch(&mut buf, &mut st, Some(SegmentCompression::None), 0, 8);
        assert!(matches!(fault, Err(ProtocolFault::Segment(_))));
    }

    #[test]
    fn a_receive_of_nothing_is_the_node_closing() {
        assert!(matches!(received(Ok(7), 3), Ok(7)));
        assert!(matches!(received(Ok(0), 0), Err(BreakCause::ClosedByNode)));
        assert!(matches!(
            received(Ok(0), 5),
            Err(BreakCause::ClosedMidFrame { received: 5 })
        ));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(matches!(received(Err(reset), 0), Err(BreakCause::Read(_))));
    }
}
