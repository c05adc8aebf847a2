//! The keepalive task: probes an idle node with OPTIONS, and closes a connection whose node
//! does not answer.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use doppio_proto::frame::Flags;
use doppio_proto::request::{encode_envelope, Options};
use doppio_rt::Timer;

use crate::clock::Ticks;

use super::error::{ConnectionError, RequestError};
use super::shared::Shared;

/// Probes an idle node with OPTIONS; a node that does not answer within the interval is
/// treated as gone.
pub(super) async fn keepalive_loop(shared: Rc<Shared>, interval: Duration) {
    loop {
        let idle_for = Ticks::now().saturating_duration_since(shared.state.borrow().last_read);
        if idle_for < interval {
            // Sleep until the connection has been idle for `interval`, or it closes.
            let mut timer = pin!(Timer::new(interval - idle_for));
            let open = poll_fn(|cx| {
                let mut st = shared.state.borrow_mut();
                if st.closed.is_some() {
                    return Poll::Ready(false);
                }
                st.keepalive = Some(cx.waker().clone());
                drop(st);
                timer.as_mut().poll(cx).map(|_| true)
            })
            .await;
            if !open {
                return;
            }
            continue;
        }
        shared.state.borrow_mut().stats.keepalives += 1;
        let version = shared.version.get();
        let probe = shared.request(Some(interval), |buf, stream| {
            encode_envelope(buf, version, stream, Flags::NONE, &Options)
        });
        match probe.await {
            Ok(_) => {}
            Err(RequestError::Timeout { .. }) => {
                return shared.close(ConnectionError::Closed {
                    addr: shared.addr,
                    reason: format!("no answer to a keepalive within {interval:?}"),
                })
            }
            Err(_) => return,
        }
    }
}
