//! The keepalive task: probes an idle node with OPTIONS, and closes a connection whose node
//! does not answer.
//!
//! When to probe is [`until_idle`]'s to say, from the times it is given (unit-tested below
//! without a timer).

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
        let last_read = shared.state.borrow().last_read;
        if let Some(sleep) = until_idle(last_read, Ticks::now(), interval) {
            // Sleep until the connection has been idle for `interval`, or it closes.
            let mut timer = pin!(Timer::new(sleep));
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

/// How long the keepalive sleeps before the connection, last read from at `last_read`, has
/// been idle for `interval` at `now`; `None` once it has (probe the node now).
fn until_idle(last_read: Ticks, now: Ticks, interval: Duration) -> Option<Duration> {
    let idle_for = now.saturating_duration_since(last_read);
    (idle_for < interval).then(|| interval - idle_for)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_node_is_probed_once_it_has_been_quiet_for_the_interval() {
        let read = Ticks::now();
        let sec = Duration::from_secs(1);
        let interval = 30 * sec;
        assert_eq!(until_idle(read, read, interval), Some(interval));
        assert_eq!(until_idle(read, read + 10 * sec, interval), Some(20 * sec));
        assert_eq!(until_idle(read, read + interval, interval), None);
        assert_eq!(until_idle(read, read + 40 * sec, interval), None);
        // A read after `now` was taken (the clock is coarse): a whole interval to go.
        assert_eq!(until_idle(read + sec, read, interval), Some(interval));
    }
}
