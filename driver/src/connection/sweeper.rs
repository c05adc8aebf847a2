//! The sweeper task: fails requests past their deadlines with a timeout.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use doppio_rt::Timer;

use crate::clock::Ticks;

use super::shared::Shared;

/// Fails requests at their deadlines, sleeping until the earliest one.
pub(super) async fn sweep_loop(shared: Rc<Shared>) {
    loop {
        let planned = shared.state.borrow().next_sweep;
        let mut timer =
            pin!(planned.map(|t| Timer::new(t.saturating_duration_since(Ticks::now()))));
        let proceed = poll_fn(|cx| {
            let mut st = shared.state.borrow_mut();
            if st.closed.is_some() {
                return Poll::Ready(false);
            }
            if st.next_sweep != planned {
                // An earlier deadline arrived: plan again.
                return Poll::Ready(true);
            }
            st.sweeper = Some(cx.waker().clone());
            drop(st);
            match timer.as_mut().as_pin_mut() {
                Some(t) => t.poll(cx).map(|_| true),
                None => Poll::Pending,
            }
        })
        .await;
        if !proceed {
            return;
        }
        let now = Ticks::now();
        let mut st = shared.state.borrow_mut();
        if st.next_sweep.is_some_and(|t| t <= now) {
            let sweep = st.in_flight.sweep(now);
            st.stats.timeouts += sweep.expired as u64;
            st.next_sweep = sweep.next;
        }
    }
}
