//! Whether a worker's node went away ([`OutageWatch`]): a stretch with no success in which
//! every failure was a lost connection ([`ErrorKind::NODE_GONE`]), which stops the worker after
//! `--max-outage`.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use super::error_kind::ErrorKind;
use super::request::RequestError;

/// Watches one worker's outcomes for an outage: a stretch with no success in which requests
/// fail because the connection is gone. Other errors (timeouts, overloaded, ...) neither
/// start nor end an outage: a stalled or busy node is measured, not abandoned.
#[derive(Debug)]
pub(super) struct OutageWatch {
    limit: Option<Duration>,
    /// The first node-gone failure since the last success.
    since: Cell<Option<Instant>>,
    /// Why the worker stopped, once it has.
    verdict: RefCell<Option<String>>,
    /// Whether it has (`verdict` is set): read by every fiber before every request, a
    /// plain flag rather than a `RefCell` borrow.
    stopped: Cell<bool>,
}

impl OutageWatch {
    /// A watch that stops the worker after an outage of `limit` (`None`: never).
    pub(super) fn new(limit: Option<Duration>) -> Self {
        Self {
            limit,
            since: Cell::new(None),
            verdict: RefCell::new(None),
            stopped: Cell::new(false),
        }
    }

    /// Notes the outcome of a request that ended at `now`.
    pub(super) fn observe<T>(&self, now: Instant, result: &Result<T, RequestError>) {
        let Some(limit) = self.limit else { return };
        match result {
            Ok(_) => self.since.set(None),
            Err(e) if ErrorKind::NODE_GONE.contains(&e.kind) => {
                let since = match self.since.get() {
                    Some(t) => t,
                    None => {
                        self.since.set(Some(now));
                        now
                    }
                };
                let lasted = now.saturating_duration_since(since);
                if lasted >= limit && !self.stopped.get() {
                    self.stopped.set(true);
                    *self.verdict.borrow_mut() = Some(format!(
                        "the node went away: no request succeeded for {:.1} s and every \
                         failure was a lost connection (last: {})",
                        lasted.as_secs_f64(),
                        e.message
                    ));
                }
            }
            Err(_) => {}
        }
    }

    /// Whether the worker should stop (read by every fiber before every request).
    #[inline]
    pub(super) fn stopped(&self) -> bool {
        self.stopped.get()
    }

    /// Why the worker stopped, if it did.
    pub(super) fn into_verdict(self) -> Option<String> {
        self.verdict.into_inner()
    }
}
