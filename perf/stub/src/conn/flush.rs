//! Writing: everything the reader (or a delayed answer) buffered goes out as one send per
//! turn, framed into v5 segments and encrypted when the connection says so.

use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;

use bytes::BytesMut;
use doppio_proto::segment::SegmentEncoder;

use crate::conn::state::Conn;

/// Writes what the reader (or a delayed answer) buffered, one batch per wake-up.
pub(super) async fn flush_loop(conn: Rc<Conn>) {
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
