//! The flusher task: hands each batch of queued frames to the runtime as one send (v5:
//! framed into segments; TLS: encrypted first).
//!
//! The task only awaits wake-ups and sends; taking a batch ([`State::take_batch`]) and
//! framing it ([`frame_segments`]) are plain functions, unit-tested below without a socket.

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use doppio_proto::segment::{SegmentCompression, SegmentEncoder};
use doppio_proto::ProtoError;

use crate::stages;

use super::error::{BreakCause, ConnectionError, TlsCause, TlsFailure};
use super::shared::Shared;
use super::state::State;

/// Writes whatever callers queued, one batch per wake-up.
pub(super) async fn flush_loop(shared: Rc<Shared>) {
    // Swapped with the shared write buffer: both keep their capacity, so steady-state
    // flushing allocates nothing.
    let mut out = BytesMut::with_capacity(64 * 1024);
    // v5: the batch's envelopes are framed into segments here, then the buffers swap (both
    // keep their capacity).
    let mut framed = BytesMut::new();
    // TLS: the batch is encrypted into records here, then the buffers swap likewise.
    let mut cipher = BytesMut::new();
    loop {
        let open = poll_fn(|cx| {
            let mut st = shared.state.borrow_mut();
            if st.closed.is_some() {
                return Poll::Ready(None);
            }
            let Some(taken) = st.take_batch(&mut out) else {
                st.flusher = Some(cx.waker().clone());
                return Poll::Pending;
            };
            st.publish_awaited(&shared.socket);
            Poll::Ready(Some(taken))
        })
        .await;
        let Some((batch, timed)) = open else {
            return;
        };
        if let Some(compression) = shared.segments.get() {
            if let Err(e) = frame_segments(&mut out, &mut framed, compression) {
                return shared.broken(BreakCause::Segments(Arc::new(e)));
            }
        }
        if let Some(tls) = &shared.tls {
            cipher.clear();
            if let Err(e) = tls.borrow_mut().encrypt(&out, &mut cipher) {
                return shared.close(ConnectionError::Tls {
                    addr: shared.addr,
                    failure: TlsFailure::Other,
                    cause: TlsCause::Encrypt(Arc::new(e)),
                });
            }
            out.clear();
            std::mem::swap(&mut out, &mut cipher);
        }
        let written = out.len();
        if timed {
            // Handed to the runtime now, framed and encrypted (for timed requests in it).
            shared.state.borrow_mut().flushed_at[(batch % 64) as usize] = stages::now();
        }
        // Lazy: nothing needs `out` back until more is queued, and whoever queues it hurries
        // this send (see `Shared::request`), so on io_uring the send's completion alone does
        // not end the executor's wait: a request and its answer cost one enter.
        let (result, back) = shared.socket.send_lazy(out).await;
        out = back;
        let writes = match result {
            Ok(writes) => writes,
            Err(e) if e.kind() == std::io::ErrorKind::WriteZero => {
                return shared.broken(BreakCause::WriteZero)
            }
            Err(e) => return shared.broken(BreakCause::Write(Arc::new(e))),
        };
        let mut st = shared.state.borrow_mut();
        st.stats.flushes += 1;
        st.stats.writes += writes;
        st.stats.bytes_written += written as u64;
        drop(st);
        out.clear();
    }
}

impl State {
    /// The flusher takes the batch callers queued, if any: the write buffer is swapped with
    /// its empty `out` (both keep their capacity), the batch's requests are now awaited
    /// (handed to the kernel), and the next batch takes the next number. Returns the batch's
    /// number and whether a request is being timed.
    #[inline]
    pub(super) fn take_batch(&mut self, out: &mut BytesMut) -> Option<(u64, bool)> {
        if self.write_buf.is_empty() {
            return None;
        }
        std::mem::swap(&mut self.write_buf, out);
        self.awaited += std::mem::take(&mut self.unflushed);
        let batch = self.batch;
        self.batch += 1;
        Some((batch, !self.timed.is_empty()))
    }
}

/// v5: frames the batch in `out` (whole envelopes) into segments, through `framed`; the
/// buffers swap, both keeping their capacity. Fails (a caller bug) if `out` does not end on
/// an envelope boundary.
fn frame_segments(
    out: &mut BytesMut,
    framed: &mut BytesMut,
    compression: SegmentCompression,
) -> Result<(), ProtoError> {
    framed.clear();
    SegmentEncoder::new(compression).encode(out, framed)?;
    out.clear();
    std::mem::swap(out, framed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;
    use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
    use doppio_proto::segment::{EnvelopeAssembler, SegmentDecoder};
    use doppio_proto::ProtocolVersion;

    use super::super::in_flight::StreamHandle;
    use super::super::state::Timed;
    use super::*;

    #[test]
    fn a_batch_is_what_was_queued_since_the_last_and_its_requests_are_then_awaited() {
        let mut st = State::new(8);
        let mut out = BytesMut::with_capacity(64);
        assert_eq!(
            st.take_batch(&mut out),
            None,
            "nothing queued: the flusher sleeps"
        );
        st.write_buf.put_slice(b"two frames");
        st.unflushed = 2;
        assert_eq!(st.take_batch(&mut out), Some((0, false)));
        assert_eq!(&out[..], b"two frames");
        assert!(st.write_buf.is_empty());
        assert!(
            st.write_buf.capacity() >= 64,
            "the flusher's buffer is swapped in"
        );
        assert_eq!((st.awaited, st.unflushed), (2, 0));
        out.clear();
        st.write_buf.put_slice(b"one");
        st.unflushed = 1;
        st.timed.push(Timed {
            handle: StreamHandle {
                stream: 0,
                generation: 0,
            },
            token: 1,
            batch: 1,
            stamps: crate::stages::Stamps::default(),
        });
        assert_eq!(
            st.take_batch(&mut out),
            Some((1, true)),
            "numbered on, timed"
        );
        assert_eq!(st.awaited, 3);
    }

    #[test]
    fn a_batch_is_framed_into_segments_that_give_back_its_envelopes() {
        let mut envelopes = BytesMut::new();
        for (stream, body) in [(0, &b"first"[..]), (1, &b"second"[..])] {
            FrameHeader {
                version: ProtocolVersion::V5,
                direction: Direction::Request,
                flags: Flags::NONE,
                stream,
                opcode: Opcode::Options,
                length: body.len() as u32,
            }
            .write_to(&mut envelopes);
            envelopes.put_slice(body);
        }
        let mut out = envelopes.clone();
        let mut framed = BytesMut::new();
        assert!(frame_segments(&mut out, &mut framed, SegmentCompression::None).is_ok());
        assert!(framed.is_empty());
        let mut assembler = EnvelopeAssembler::new(1024);
        let mut gathered = BytesMut::new();
        while let Some(segment) = SegmentDecoder::new(SegmentCompression::None)
            .decode(&mut out)
            .expect("a valid segment")
        {
            assembler
                .push(segment, &mut gathered)
                .expect("whole envelopes");
        }
        assert!(out.is_empty());
        assert_eq!(gathered, envelopes);
        // Half an envelope is a caller bug, refused.
        let mut out = envelopes.split_to(12);
        assert!(frame_segments(&mut out, &mut framed, SegmentCompression::None).is_err());
    }
}
