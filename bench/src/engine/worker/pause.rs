//! A fiber's pause until its next request is released, looking at the interrupt flag now
//! and then on a long wait.

use std::time::{Duration, Instant};

use crate::engine::session::BenchSession;

/// Sleeps until `deadline`, in steps of at most [`PAUSE_STEP`] so that an interrupt ends a
/// long wait (a schedule's part at rate 0, a low rate); false when interrupted. `passed` is
/// a time known to be past (or about now), so that the usual short wait reads no clock.
pub(super) async fn pause_until<S: BenchSession>(
    session: &S,
    sleeper: &mut S::Sleeper,
    deadline: Instant,
    passed: Instant,
) -> bool {
    if deadline <= passed + PAUSE_STEP {
        session.sleep_until(sleeper, deadline).await;
        return true;
    }
    loop {
        let step = Instant::now() + PAUSE_STEP;
        if deadline <= step {
            session.sleep_until(sleeper, deadline).await;
            return true;
        }
        session.sleep_until(sleeper, step).await;
        if crate::interrupt::interrupted() {
            return false;
        }
    }
}

/// The longest sleep between two looks at the interrupt flag while a fiber waits.
const PAUSE_STEP: Duration = Duration::from_millis(100);
