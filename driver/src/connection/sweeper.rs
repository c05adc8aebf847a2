//! The sweeper task: fails requests past their deadlines with a timeout.
//!
//! The task only sleeps; the sweep itself ([`State::sweep_due`]) takes the time it is given,
//! unit-tested below without a timer.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use doppio_rt::Timer;

use crate::clock::Ticks;

use super::shared::Shared;
use super::state::State;

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
        shared.state.borrow_mut().sweep_due(now);
    }
}

impl State {
    /// If the earliest deadline has come by `now`, fails every request past its deadline
    /// (counted as timeouts; their ids stay orphaned until their late answers) and plans
    /// the next sweep for the earliest deadline left.
    pub(super) fn sweep_due(&mut self, now: Ticks) {
        if self.next_sweep.is_some_and(|t| t <= now) {
            let sweep = self.in_flight.sweep(now);
            self.stats.timeouts += sweep.expired as u64;
            self.next_sweep = sweep.next;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_sweep_fails_what_is_due_and_plans_the_next_deadline() {
        let mut st = State::new(8);
        let now = Ticks::now();
        let sec = Duration::from_secs(1);
        let due = st.in_flight.try_acquire_now().expect("a free id");
        let later = st.in_flight.try_acquire_now().expect("a free id");
        st.in_flight.set_deadline(due, now + sec);
        st.in_flight.set_deadline(later, now + 3 * sec);
        st.next_sweep = Some(now + sec);
        st.sweep_due(now);
        assert_eq!(st.stats.timeouts, 0, "nothing is due yet");
        assert_eq!(st.next_sweep, Some(now + sec));
        st.sweep_due(now + 2 * sec);
        assert_eq!(st.stats.timeouts, 1);
        assert_eq!(st.next_sweep, Some(now + 3 * sec));
        st.sweep_due(now + 3 * sec);
        assert_eq!(st.stats.timeouts, 2);
        assert_eq!(st.next_sweep, None, "nothing left to sweep");
        assert_eq!(
            st.in_flight.in_use(),
            2,
            "both ids wait for their late answers"
        );
    }
}
