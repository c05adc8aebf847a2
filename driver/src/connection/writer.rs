//! The flusher task: hands each batch of queued frames to the runtime as one send (v5:
//! framed into segments; TLS: encrypted first).

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use doppio_proto::segment::SegmentEncoder;

use crate::stages;

use super::error::{BreakCause, ConnectionError, TlsCause, TlsFailure};
use super::shared::Shared;

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
            if st.write_buf.is_empty() {
                st.flusher = Some(cx.waker().clone());
                return Poll::Pending;
            }
            std::mem::swap(&mut st.write_buf, &mut out);
            st.awaited += std::mem::take(&mut st.unflushed);
            st.publish_awaited(&shared.socket);
            let batch = st.batch;
            st.batch += 1;
            Poll::Ready(Some((batch, !st.timed.is_empty())))
        })
        .await;
        let Some((batch, timed)) = open else {
            return;
        };
        if let Some(compression) = shared.segments.get() {
            framed.clear();
            if let Err(e) = SegmentEncoder::new(compression).encode(&out, &mut framed) {
                return shared.broken(BreakCause::Segments(Arc::new(e)));
            }
            out.clear();
            std::mem::swap(&mut out, &mut framed);
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
