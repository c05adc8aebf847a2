//! The table of a connection's in-flight requests, indexed by stream id.
//!
//! Executor-agnostic: it only stores `Waker`s, so it is unit-tested without glommio. One table
//! belongs to one connection on one shard and lives in a `RefCell`; nothing here is atomic.
//!
//! A slot's life (each arrow names who moves it):
//!
//! ```text
//!   Free --acquire--> Waiting --answer--> Ready --caller polls--> Free
//!                      |  |
//!                      |  +--deadline sweep--> TimedOut --caller polls--> Orphaned --late answer--> Free
//!                      |                          |  +--late answer--> Expired --caller polls--> Free
//!                      +--caller drops--> Orphaned   +--caller drops--> Orphaned
//! ```
//!
//! Invariants:
//! - An orphaned id returns to the free list only when its late answer arrives (or the
//!   connection closes), so a late answer is never taken for the answer to a newer request.
//! - Ids are bounded by `max_streams` (at most 32768, the protocol's space). When none is free,
//!   callers queue their wakers and are woken in FIFO order as ids are freed (backpressure).
//! - Slots grow lazily up to `max_streams` and are then reused: after warm-up, acquiring,
//!   completing and releasing an id allocates nothing.
//! - Each acquisition bumps the slot's generation, so a stale handle (from a sweep list or an
//!   old caller) never touches a newer use of the same id.

use crate::clock::Ticks;
use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

#[cfg(feature = "unstable-internals")]
use doppio_proto::frame::Frame;

#[cfg(feature = "unstable-internals")]
use super::ConnectionError;

/// The protocol's stream-id space for requests: 0..=32767.
pub(crate) const MAX_STREAMS: usize = 32768;

/// A stream id together with the generation of its current use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamHandle {
    /// The wire stream id.
    pub(crate) stream: i16,
    /// Which use of the id this is.
    pub(crate) generation: u32,
}

/// How a request ended, as its caller sees it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome<T, E> {
    /// The server answered.
    Answer(T),
    /// The deadline passed first.
    TimedOut,
    /// The connection failed the request (broken, closed).
    Failed(E),
}

#[derive(Debug)]
enum SlotState<T, E> {
    Free,
    Waiting(Option<Waker>),
    Ready(Outcome<T, E>),
    TimedOut(Option<Waker>),
    Expired,
    Orphaned,
}

#[derive(Debug)]
struct Slot<T, E> {
    generation: u32,
    /// When a waiting request times out; kept in the slot so the sweep needs no list of its
    /// own and memory stays bounded by `max_streams`.
    deadline: Option<Ticks>,
    state: SlotState<T, E>,
}

/// What one deadline sweep found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sweep {
    /// Requests whose deadline had passed; their callers were woken to a timeout.
    pub(crate) expired: usize,
    /// The earliest deadline still pending, if any: when to sweep next.
    pub(crate) next: Option<Ticks>,
}

/// What became of an answer handed to [`InFlight::complete`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Completion {
    /// Stored for its caller, who was woken.
    Delivered,
    /// The caller had gone or timed out; the answer was dropped.
    Late,
    /// No request is waiting on that id: the server broke the protocol.
    UnknownStream,
}

/// In-flight requests of one connection. `T` is an answer, `E` a connection failure.
#[derive(Debug)]
pub(crate) struct InFlight<T, E> {
    slots: Vec<Slot<T, E>>,
    free: Vec<i16>,
    max_streams: usize,
    in_use: usize,
    orphans: usize,
    /// Acquirers waiting for an id, first come first served, by ticket.
    acquire_waiters: VecDeque<(u64, Waker)>,
    /// Tickets whose waiter was handed a freed id and has not taken it yet: that many free
    /// ids are reserved, so a newcomer never overtakes a waiter.
    granted: Vec<u64>,
    next_ticket: u64,
}

impl<T, E: Clone> InFlight<T, E> {
    /// A table with room for `max_streams` concurrent requests (clamped to 1..=32768).
    pub(crate) fn new(max_streams: usize) -> Self {
        let max_streams = max_streams.clamp(1, MAX_STREAMS);
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            max_streams,
            in_use: 0,
            orphans: 0,
            acquire_waiters: VecDeque::new(),
            granted: Vec::new(),
            next_ticket: 0,
        }
    }

    /// Ids in use (waiting, answered but not yet taken, timed out, or orphaned).
    pub(crate) fn in_use(&self) -> usize {
        self.in_use
    }

    /// Ids held only because a late answer is still owed.
    pub(crate) fn orphans(&self) -> usize {
        self.orphans
    }

    /// The configured bound.
    #[cfg(test)]
    fn max_streams(&self) -> usize {
        self.max_streams
    }

    /// Takes a free stream id, or `None` when all are in use.
    pub(crate) fn try_acquire(&mut self) -> Option<StreamHandle> {
        let stream = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() < self.max_streams => {
                // Bounded growth (max_streams <= 32768, so the id fits an i16); after warm-up
                // every id comes from `free` and nothing is allocated.
                let s = self.slots.len() as i16;
                self.slots.push(Slot {
                    generation: 0,
                    deadline: None,
                    state: SlotState::Free,
                });
                s
            }
            None => return None,
        };
        let slot = &mut self.slots[stream as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.deadline = None;
        slot.state = SlotState::Waiting(None);
        self.in_use += 1;
        Some(StreamHandle {
            stream,
            generation: slot.generation,
        })
    }

    /// Takes a free id if one can be taken at once without overtaking anybody (nobody
    /// queued for one, and more ids free than are reserved by grants): the first come,
    /// first served rule of [`InFlight::poll_acquire`], for a caller that does not wait.
    #[inline]
    pub(crate) fn try_acquire_now(&mut self) -> Option<StreamHandle> {
        if self.acquire_waiters.is_empty() && self.free_ids() > self.granted.len() {
            self.try_acquire()
        } else {
            None
        }
    }

    /// Ids that can be taken now (freed, or never used yet).
    fn free_ids(&self) -> usize {
        self.free.len() + self.max_streams.saturating_sub(self.slots.len())
    }

    /// Takes a free id in arrival order, or queues the caller. `ticket` is the caller's
    /// place in the queue (`None` until it first waits; reset when it gets its id).
    ///
    /// Invariant: ids are handed out first come, first served. A freed id goes to the
    /// longest waiter (its ticket is granted and it is woken); newcomers take an id at once
    /// only when nobody waits and more ids are free than are reserved by grants. Without
    /// this a caller that loops (take, answer, take again) re-took every freed id before the
    /// woken waiter ran, and a waiter could starve until its timeout.
    pub(crate) fn poll_acquire(
        &mut self,
        ticket: &mut Option<u64>,
        cx: &mut Context<'_>,
    ) -> Poll<StreamHandle> {
        let Some(t) = *ticket else {
            if let Some(h) = self.try_acquire_now() {
                return Poll::Ready(h);
            }
            let t = self.next_ticket;
            self.next_ticket += 1;
            self.acquire_waiters.push_back((t, cx.waker().clone()));
            *ticket = Some(t);
            return Poll::Pending;
        };
        if let Some(pos) = self.granted.iter().position(|&g| g == t) {
            self.granted.swap_remove(pos);
            if let Some(h) = self.try_acquire() {
                *ticket = None;
                return Poll::Ready(h);
            }
            // A grant always has a free id behind it; if not, wait at the head of the queue.
            self.acquire_waiters.push_front((t, cx.waker().clone()));
            return Poll::Pending;
        }
        match self.acquire_waiters.iter_mut().find(|(x, _)| *x == t) {
            Some((_, w)) => {
                if !w.will_wake(cx.waker()) {
                    *w = cx.waker().clone();
                }
            }
            // Neither queued nor granted (the queue was drained): back at the head.
            None => self.acquire_waiters.push_front((t, cx.waker().clone())),
        }
        Poll::Pending
    }

    /// Callers waiting for a free id.
    #[cfg(test)]
    fn acquire_waiters(&self) -> usize {
        self.acquire_waiters.len()
    }

    /// A queued acquirer gives up (timeout, drop): it leaves the queue, and an id granted to
    /// it goes to the next waiter rather than being lost.
    pub(crate) fn cancel_acquire(&mut self, ticket: u64) {
        if let Some(pos) = self.granted.iter().position(|&g| g == ticket) {
            self.granted.swap_remove(pos);
            self.grant_next();
        } else if let Some(pos) = self.acquire_waiters.iter().position(|(x, _)| *x == ticket) {
            self.acquire_waiters.remove(pos);
        }
    }

    /// Hands a free id to the longest waiter, if any.
    fn grant_next(&mut self) {
        if self.free_ids() > self.granted.len() {
            if let Some((t, w)) = self.acquire_waiters.pop_front() {
                self.granted.push(t);
                w.wake();
            }
        }
    }

    fn current(&mut self, h: StreamHandle) -> Option<&mut Slot<T, E>> {
        let slot = self.slots.get_mut(usize::try_from(h.stream).ok()?)?;
        (slot.generation == h.generation).then_some(slot)
    }

    fn release(&mut self, stream: i16) {
        if let Some(slot) = self.slots.get_mut(stream as usize) {
            slot.state = SlotState::Free;
            self.free.push(stream);
            self.in_use -= 1;
            self.grant_next();
        }
    }

    /// Hands the answer that arrived on `stream` to its caller.
    pub(crate) fn complete(&mut self, stream: i16, answer: T) -> Completion {
        let Some(slot) = usize::try_from(stream)
            .ok()
            .and_then(|i| self.slots.get_mut(i))
        else {
            return Completion::UnknownStream;
        };
        match std::mem::replace(&mut slot.state, SlotState::Free) {
            SlotState::Waiting(waker) => {
                slot.state = SlotState::Ready(Outcome::Answer(answer));
                if let Some(w) = waker {
                    w.wake();
                }
                Completion::Delivered
            }
            SlotState::TimedOut(waker) => {
                // The caller still has to learn of its timeout; it frees the id then.
                slot.state = SlotState::Expired;
                if let Some(w) = waker {
                    w.wake();
                }
                Completion::Late
            }
            SlotState::Orphaned => {
                self.orphans -= 1;
                self.release(stream);
                Completion::Late
            }
            other @ (SlotState::Free | SlotState::Ready(_) | SlotState::Expired) => {
                // An answer for an idle id, or a second answer to one request.
                slot.state = other;
                Completion::UnknownStream
            }
        }
    }

    /// Polls for the outcome of `h`. Once it returns `Ready`, `h` is spent.
    ///
    /// A stale handle (its request already ended) stays pending: that is a caller bug, and
    /// taking another request's answer would be worse.
    pub(crate) fn poll_outcome(
        &mut self,
        h: StreamHandle,
        cx: &mut Context<'_>,
    ) -> Poll<Outcome<T, E>> {
        let Some(slot) = self.current(h) else {
            return Poll::Pending;
        };
        match std::mem::replace(&mut slot.state, SlotState::Free) {
            SlotState::Ready(outcome) => {
                self.release(h.stream);
                Poll::Ready(outcome)
            }
            SlotState::TimedOut(_) => {
                // The late answer is still owed: keep the id until it comes.
                slot.state = SlotState::Orphaned;
                self.orphans += 1;
                Poll::Ready(Outcome::TimedOut)
            }
            SlotState::Expired => {
                self.release(h.stream);
                Poll::Ready(Outcome::TimedOut)
            }
            SlotState::Waiting(mut waker) => {
                match &waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => waker = Some(cx.waker().clone()),
                }
                slot.state = SlotState::Waiting(waker);
                Poll::Pending
            }
            other @ (SlotState::Free | SlotState::Orphaned) => {
                slot.state = other;
                Poll::Pending
            }
        }
    }

    /// The caller of `h` is gone (its future was dropped). Whatever it was owed is dropped;
    /// an id whose answer has not arrived yet becomes an orphan.
    pub(crate) fn abandon(&mut self, h: StreamHandle) {
        let Some(slot) = self.current(h) else {
            return;
        };
        match std::mem::replace(&mut slot.state, SlotState::Free) {
            SlotState::Waiting(_) | SlotState::TimedOut(_) => {
                slot.state = SlotState::Orphaned;
                self.orphans += 1;
            }
            SlotState::Ready(_) | SlotState::Expired => self.release(h.stream),
            other @ (SlotState::Free | SlotState::Orphaned) => slot.state = other,
        }
    }

    /// Sets when `h` times out (checked by [`InFlight::sweep`]).
    pub(crate) fn set_deadline(&mut self, h: StreamHandle, deadline: Ticks) {
        if let Some(slot) = self.current(h) {
            slot.deadline = Some(deadline);
        }
    }

    /// Gives back an id whose request was never sent (encoding failed, or the caller gave up
    /// before its frame was queued): no answer can come, so it is free at once.
    pub(crate) fn cancel_unsent(&mut self, h: StreamHandle) {
        if let Some(slot) = self.current(h) {
            if matches!(slot.state, SlotState::Waiting(_)) {
                self.release(h.stream);
            }
        }
    }

    /// Times out every waiting request whose deadline is at or before `now`, and finds the
    /// next deadline. Cost: one pass over the slots grown so far (at most `max_streams`).
    pub(crate) fn sweep(&mut self, now: Ticks) -> Sweep {
        let mut expired = 0;
        let mut next: Option<Ticks> = None;
        for slot in &mut self.slots {
            let (SlotState::Waiting(waker), Some(deadline)) = (&mut slot.state, slot.deadline)
            else {
                continue;
            };
            if deadline <= now {
                let waker = waker.take();
                time_out(&mut slot.state, waker);
                expired += 1;
            } else {
                next = Some(next.map_or(deadline, |n| n.min(deadline)));
            }
        }
        Sweep { expired, next }
    }

    /// The deadline of `h` passed: if it is still waiting, its caller is woken to a timeout.
    /// Returns `true` if it was still waiting. (The connection times requests out by
    /// [`InFlight::sweep`]; this one-request form serves the table's tests.)
    #[cfg(test)]
    fn expire(&mut self, h: StreamHandle) -> bool {
        let Some(slot) = self.current(h) else {
            return false;
        };
        match &mut slot.state {
            SlotState::Waiting(waker) => {
                let waker = waker.take();
                time_out(&mut slot.state, waker);
                true
            }
            _ => false,
        }
    }

    /// The connection is gone: every caller still waiting is failed with `err` and woken,
    /// orphans are freed (no answer will come), and queued acquirers are woken so they can
    /// see the connection is closed.
    pub(crate) fn fail_all(&mut self, err: &E) {
        for i in 0..self.slots.len() {
            let slot = &mut self.slots[i];
            match std::mem::replace(&mut slot.state, SlotState::Free) {
                SlotState::Waiting(waker) => {
                    slot.state = SlotState::Ready(Outcome::Failed(err.clone()));
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
                SlotState::TimedOut(waker) => {
                    slot.state = SlotState::Expired;
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
                SlotState::Orphaned => {
                    self.orphans -= 1;
                    self.release(i as i16);
                }
                other => slot.state = other,
            }
        }
        self.granted.clear();
        for (_, w) in self.acquire_waiters.drain(..) {
            w.wake();
        }
    }
}

#[cfg(feature = "unstable-internals")]
/// One connection's in-flight table on its own, for the request-path benchmarks
/// (`driver/benches/request_path/`): the calls a request makes on it, one by one, with
/// nothing around them. Not an API: reached through `doppio_driver::bench_internals`.
#[doc(hidden)]
#[derive(Debug)]
pub struct InFlightTable(InFlight<Frame, ConnectionError>);

#[cfg(feature = "unstable-internals")]
/// A stream id taken from an [`InFlightTable`], with its generation.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct TableSlot(StreamHandle);

#[cfg(feature = "unstable-internals")]
impl TableSlot {
    /// The wire stream id.
    pub fn stream(self) -> i16 {
        self.0.stream
    }
}

#[cfg(feature = "unstable-internals")]
impl InFlightTable {
    /// A table of `max_streams` ids, as a connection makes it.
    pub fn new(max_streams: usize) -> Self {
        Self(InFlight::new(max_streams))
    }

    /// Takes an id first come, first served, as a request's `Acquire` does; `ticket` is the
    /// caller's place in the queue when none is free.
    pub fn poll_acquire(
        &mut self,
        ticket: &mut Option<u64>,
        cx: &mut Context<'_>,
    ) -> Poll<TableSlot> {
        self.0.poll_acquire(ticket, cx).map(TableSlot)
    }

    /// Sets the request's deadline `timeout` from now on the coarse clock, as a request
    /// does once its frame is queued.
    pub fn set_deadline(&mut self, slot: TableSlot, timeout: std::time::Duration) {
        self.0.set_deadline(slot.0, Ticks::deadline(timeout));
    }

    /// Hands an answer to the caller of `stream`, as the reader does; true if delivered.
    pub fn complete(&mut self, stream: i16, answer: Frame) -> bool {
        self.0.complete(stream, answer) == Completion::Delivered
    }

    /// Polls for the answer of `slot`, as a request's `Answer` does; once ready the id is
    /// free again. `Ready(None)`: the request ended without an answer.
    pub fn poll_outcome(&mut self, slot: TableSlot, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        self.0.poll_outcome(slot.0, cx).map(|o| match o {
            Outcome::Answer(frame) => Some(frame),
            Outcome::TimedOut | Outcome::Failed(_) => None,
        })
    }

    /// Ids in use.
    pub fn in_use(&self) -> usize {
        self.0.in_use()
    }
}

/// Times out a waiting slot: its caller (if it has polled) is woken and finds the timeout.
fn time_out<T, E>(state: &mut SlotState<T, E>, waker: Option<Waker>) {
    if let Some(w) = &waker {
        w.wake_by_ref();
    }
    *state = SlotState::TimedOut(waker);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    struct CountingWaker(AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<CountingWaker>, Waker) {
        let c = Arc::new(CountingWaker(AtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    type Table = InFlight<&'static str, String>;

    #[test]
    fn answer_reaches_its_caller_and_frees_the_id() {
        let mut t = Table::new(4);
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let h = t.try_acquire().unwrap();
        assert_eq!(t.poll_outcome(h, &mut cx), Poll::Pending);
        assert_eq!(t.complete(h.stream, "rows"), Completion::Delivered);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(
            t.poll_outcome(h, &mut cx),
            Poll::Ready(Outcome::Answer("rows"))
        );
        assert_eq!(t.in_use(), 0);
        // A second answer on the same id is a protocol violation.
        assert_eq!(t.complete(h.stream, "again"), Completion::UnknownStream);
        assert_eq!(t.complete(-1, "event"), Completion::UnknownStream);
        assert_eq!(t.complete(3, "never used"), Completion::UnknownStream);
    }

    #[test]
    fn backpressure_when_ids_run_out() {
        let mut t = Table::new(2);
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let a = t.try_acquire().unwrap();
        let _b = t.try_acquire().unwrap();
        let mut ticket = None;
        assert_eq!(t.poll_acquire(&mut ticket, &mut cx), Poll::Pending);
        assert_eq!(t.acquire_waiters(), 1);
        t.complete(a.stream, "x");
        assert_eq!(
            t.poll_outcome(a, &mut cx),
            Poll::Ready(Outcome::Answer("x"))
        );
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the queued acquirer is woken"
        );
        let Poll::Ready(c) = t.poll_acquire(&mut ticket, &mut cx) else {
            panic!("the woken waiter gets the freed id");
        };
        assert_eq!(ticket, None);
        assert_eq!(c.stream, a.stream);
        assert_ne!(c.generation, a.generation);
    }

    #[test]
    fn a_newcomer_never_overtakes_a_waiting_acquirer() {
        let mut t = Table::new(1);
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        let mut first = None;
        let Poll::Ready(a) = t.poll_acquire(&mut first, &mut cx) else {
            panic!("a free id is taken at once");
        };
        let mut waiter = None;
        assert_eq!(t.poll_acquire(&mut waiter, &mut cx), Poll::Pending);
        t.complete(a.stream, "x");
        assert!(t.poll_outcome(a, &mut cx).is_ready());
        // The id is free, but it is the waiter's: a newcomer (the caller that just finished,
        // looping round) queues behind it.
        let mut newcomer = None;
        assert_eq!(t.poll_acquire(&mut newcomer, &mut cx), Poll::Pending);
        let Poll::Ready(b) = t.poll_acquire(&mut waiter, &mut cx) else {
            panic!("the waiter gets the id it was granted");
        };
        // A waiter that gives up passes its grant on.
        t.complete(b.stream, "y");
        assert!(t.poll_outcome(b, &mut cx).is_ready());
        t.cancel_acquire(newcomer.unwrap());
        assert_eq!(t.acquire_waiters(), 0);
        let mut late = None;
        assert!(t.poll_acquire(&mut late, &mut cx).is_ready());
    }

    #[test]
    fn a_granted_waiter_that_gives_up_passes_the_id_on() {
        let mut t = Table::new(1);
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        let a = t.try_acquire().unwrap();
        let (mut x, mut y) = (None, None);
        assert_eq!(t.poll_acquire(&mut x, &mut cx), Poll::Pending);
        assert_eq!(t.poll_acquire(&mut y, &mut cx), Poll::Pending);
        t.complete(a.stream, "x");
        assert!(t.poll_outcome(a, &mut cx).is_ready());
        // x was granted the id and gives up before taking it: y gets it.
        t.cancel_acquire(x.unwrap());
        assert!(t.poll_acquire(&mut y, &mut cx).is_ready());
    }

    #[test]
    fn timed_out_id_is_held_until_the_late_answer() {
        let mut t = Table::new(1);
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let h = t.try_acquire().unwrap();
        assert_eq!(t.poll_outcome(h, &mut cx), Poll::Pending);
        assert!(t.expire(h));
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(t.poll_outcome(h, &mut cx), Poll::Ready(Outcome::TimedOut));
        assert_eq!(t.orphans(), 1);
        assert!(
            t.try_acquire().is_none(),
            "the orphaned id is not reused yet"
        );
        assert_eq!(t.complete(h.stream, "late"), Completion::Late);
        assert_eq!(t.orphans(), 0);
        assert!(t.try_acquire().is_some());
    }

    #[test]
    fn late_answer_before_the_caller_sees_its_timeout() {
        let mut t = Table::new(1);
        let (_c, w) = waker();
        let mut cx = Context::from_waker(&w);
        let h = t.try_acquire().unwrap();
        assert!(t.expire(h));
        assert_eq!(t.complete(h.stream, "late"), Completion::Late);
        assert_eq!(t.poll_outcome(h, &mut cx), Poll::Ready(Outcome::TimedOut));
        assert_eq!(t.in_use(), 0);
        assert_eq!(t.orphans(), 0);
    }

    #[test]
    fn dropped_caller_orphans_and_stale_handles_are_ignored() {
        let mut t = Table::new(1);
        let (_c, w) = waker();
        let mut cx = Context::from_waker(&w);
        let h = t.try_acquire().unwrap();
        t.abandon(h);
        assert_eq!(t.orphans(), 1);
        assert!(!t.expire(h), "a stale sweep entry does nothing");
        assert_eq!(t.complete(h.stream, "late"), Completion::Late);
        let h2 = t.try_acquire().unwrap();
        assert_eq!(h2.stream, h.stream);
        // The old handle must not see the new request's answer.
        t.complete(h2.stream, "new");
        assert_eq!(t.poll_outcome(h, &mut cx), Poll::Pending);
        assert_eq!(
            t.poll_outcome(h2, &mut cx),
            Poll::Ready(Outcome::Answer("new"))
        );
    }

    #[test]
    fn fail_all_fails_waiters_and_frees_orphans() {
        let mut t = Table::new(8);
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let a = t.try_acquire().unwrap();
        let b = t.try_acquire().unwrap();
        let c = t.try_acquire().unwrap();
        assert_eq!(t.poll_outcome(a, &mut cx), Poll::Pending);
        assert_eq!(t.poll_outcome(c, &mut cx), Poll::Pending);
        t.abandon(b);
        assert!(t.expire(c));
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "expiry wakes c");
        t.fail_all(&"connection to 127.0.0.1:9042 broken".to_string());
        assert_eq!(
            t.poll_outcome(a, &mut cx),
            Poll::Ready(Outcome::Failed(
                "connection to 127.0.0.1:9042 broken".into()
            ))
        );
        assert_eq!(t.poll_outcome(c, &mut cx), Poll::Ready(Outcome::TimedOut));
        assert_eq!(t.in_use(), 0);
        assert_eq!(t.orphans(), 0);
        assert_eq!(count.0.load(Ordering::SeqCst), 3, "fail_all wakes a and c");
    }

    #[test]
    fn sweep_expires_due_requests_and_reports_the_next_deadline() {
        let mut t = Table::new(8);
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let now = Ticks::now();
        let sec = std::time::Duration::from_secs(1);
        let due = t.try_acquire().unwrap();
        let later = t.try_acquire().unwrap();
        let answered = t.try_acquire().unwrap();
        let no_deadline = t.try_acquire().unwrap();
        t.set_deadline(due, now);
        t.set_deadline(later, now + 2 * sec);
        t.set_deadline(answered, now);
        t.complete(answered.stream, "in time");
        assert_eq!(t.poll_outcome(due, &mut cx), Poll::Pending);
        let s = t.sweep(now);
        assert_eq!(
            s,
            Sweep {
                expired: 1,
                next: Some(now + 2 * sec)
            }
        );
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(t.poll_outcome(due, &mut cx), Poll::Ready(Outcome::TimedOut));
        assert_eq!(
            t.poll_outcome(answered, &mut cx),
            Poll::Ready(Outcome::Answer("in time"))
        );
        assert_eq!(t.sweep(now + 3 * sec).expired, 1);
        assert_eq!(
            t.poll_outcome(later, &mut cx),
            Poll::Ready(Outcome::TimedOut)
        );
        assert_eq!(t.poll_outcome(no_deadline, &mut cx), Poll::Pending);
        t.cancel_unsent(no_deadline);
        assert_eq!(
            t.in_use(),
            2,
            "the two timed-out ids wait for their late answers"
        );
    }

    #[test]
    fn ids_stay_within_the_bound_and_are_recycled() {
        let mut t = Table::new(MAX_STREAMS + 10);
        assert_eq!(t.max_streams(), MAX_STREAMS);
        let mut handles = Vec::new();
        while let Some(h) = t.try_acquire() {
            assert!(h.stream >= 0);
            handles.push(h);
        }
        assert_eq!(handles.len(), MAX_STREAMS);
        let (_c, w) = waker();
        let mut cx = Context::from_waker(&w);
        for h in &handles {
            t.complete(h.stream, "ok");
            assert_eq!(
                t.poll_outcome(*h, &mut cx),
                Poll::Ready(Outcome::Answer("ok"))
            );
        }
        assert_eq!(t.in_use(), 0);
    }
}
