//! One lane into one shard: a bounded lock-free queue that any thread pushes into and the
//! shard's drainer pops from, the drainer's waker (set by the shard, woken by a pusher), and
//! the wakers of callers waiting for room.
//!
//! Neither side takes a lock: the queue is crossbeam's `ArrayQueue` (a ring of slots claimed
//! by compare-and-swap), the drainer's waker an `AtomicWaker`, and the callers waiting for
//! room push their wakers onto a lock-free `SegQueue` that the drainer empties, waking all of
//! them, once per batch it pops (a caller woken for nothing registers again; only under
//! overload does anyone wait at all).
//!
//! Invariants:
//! - Nothing pushed is lost silently: an item is popped by the drainer, or dropped by
//!   [`Lane::close`] or by the pusher that finds the lane closed after its push (dropping an
//!   item drops the sender of its answer, so its caller learns the shard is gone).
//! - A caller waiting for room is woken when the drainer pops after it registered, or when
//!   the lane closes: every register-then-check here is ordered against the other side's
//!   change-then-check by a `SeqCst` fence on both sides.

use std::future::poll_fn;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::task::{Poll, Waker};

use atomic_waker::AtomicWaker;
use crossbeam_queue::{ArrayQueue, SegQueue};

/// Why an item was handed back instead of queued.
#[derive(Debug)]
pub(super) enum Refused<T> {
    /// The queue is full.
    Full(T),
    /// The lane is closed (the handle dropped, or the cluster shut down).
    Closed(T),
}

/// A bounded lane into one shard.
pub(super) struct Lane<T> {
    queue: ArrayQueue<T>,
    /// The shard's drainer, woken when an item arrives or the lane closes.
    drainer: AtomicWaker,
    /// Callers waiting for room.
    room: SegQueue<Waker>,
    closed: AtomicBool,
}

/// The most items a lane holds, whatever its configuration asks: a lane's slots are
/// allocated up front, and a capacity near `usize::MAX` would abort the process.
pub(super) const MAX_CAPACITY: usize = 1 << 20;

impl<T> Lane<T> {
    /// A lane of `capacity` items (at least one, at most [`MAX_CAPACITY`]).
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            queue: ArrayQueue::new(capacity.clamp(1, MAX_CAPACITY)),
            drainer: AtomicWaker::new(),
            room: SegQueue::new(),
            closed: AtomicBool::new(false),
        }
    }

    /// Queues `item` at once, or hands it back (full, or closed).
    pub(super) fn try_push(&self, item: T) -> Result<(), Refused<T>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Refused::Closed(item));
        }
        if let Err(item) = self.queue.push(item) {
            return Err(Refused::Full(item));
        }
        // Ordered against `close`: either its drain sees the item, or this sees it closed
        // and drops what is queued itself.
        fence(Ordering::SeqCst);
        if self.closed.load(Ordering::Relaxed) {
            self.drop_queued();
        }
        self.drainer.wake();
        Ok(())
    }

    /// Queues `item`, waiting for room while the queue is full; hands it back if the lane
    /// is (or gets) closed.
    pub(super) async fn push(&self, item: T) -> Result<(), T> {
        let mut item = Some(item);
        poll_fn(|cx| {
            let Some(it) = item.take() else {
                // Polled again after it returned Ready: nothing left to push.
                return Poll::Ready(Ok(()));
            };
            let it = match self.try_push(it) {
                Ok(()) => return Poll::Ready(Ok(())),
                Err(Refused::Closed(it)) => return Poll::Ready(Err(it)),
                Err(Refused::Full(it)) => it,
            };
            self.room.push(cx.waker().clone());
            // Ordered against `made_room` and `close`: either the drainer (or the closer)
            // sees this waker, or the second try sees the room (or the closed lane).
            fence(Ordering::SeqCst);
            match self.try_push(it) {
                Ok(()) => Poll::Ready(Ok(())),
                Err(Refused::Closed(it)) => Poll::Ready(Err(it)),
                Err(Refused::Full(it)) => {
                    item = Some(it);
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// The next item, if any (the drainer's side).
    pub(super) fn pop(&self) -> Option<T> {
        self.queue.pop()
    }

    /// Registers the drainer's waker; call before looking for items (then an item pushed
    /// after the look wakes it).
    pub(super) fn register_drainer(&self, waker: &Waker) {
        self.drainer.register(waker);
    }

    /// Wakes the drainer (from its own shard: a local task finished).
    pub(super) fn wake_drainer(&self) {
        self.drainer.wake();
    }

    /// Tells the callers waiting for room that the drainer popped items: wakes all of them
    /// (each tries again; one woken for nothing registers again).
    pub(super) fn made_room(&self) {
        fence(Ordering::SeqCst);
        self.wake_waiting();
    }

    fn wake_waiting(&self) {
        while let Some(waker) = self.room.pop() {
            waker.wake();
        }
    }

    /// Whether the lane is closed.
    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Closes the lane: refuses new items, drops the queued ones (their callers learn the
    /// shard is gone), wakes the drainer and every caller waiting for room. Idempotent.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.drop_queued();
        self.drainer.wake();
        self.wake_waiting();
    }

    fn drop_queued(&self) {
        while let Some(item) = self.queue.pop() {
            drop(item);
        }
    }

    /// Items queued now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::{Context, Wake};

    use super::*;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    /// A capacity a user may type, 0 or huge, makes a usable lane, never a panic or an
    /// abort (`usize::MAX` overflowed the queue's allocation before the bound).
    #[test]
    fn any_capacity_makes_a_bounded_usable_lane() {
        for (asked, holds) in [(0, 1), (1, 1), (usize::MAX, MAX_CAPACITY)] {
            let lane = Lane::new(asked);
            assert_eq!(lane.queue.capacity(), holds, "asked {asked}");
            assert!(lane.try_push(7u8).is_ok());
        }
    }

    #[test]
    fn a_full_lane_hands_the_item_back_and_a_closed_one_refuses() {
        let lane = Lane::new(2);
        lane.try_push(1).unwrap();
        lane.try_push(2).unwrap();
        assert!(matches!(lane.try_push(3), Err(Refused::Full(3))));
        assert_eq!(lane.pop(), Some(1));
        lane.try_push(3).unwrap();
        lane.close();
        assert_eq!(lane.len(), 0, "closing drops what was queued");
        assert!(matches!(lane.try_push(4), Err(Refused::Closed(4))));
        assert!(lane.is_closed());
    }

    #[test]
    fn a_push_wakes_the_registered_drainer() {
        let lane = Lane::new(4);
        let (count, waker) = counting();
        lane.register_drainer(&waker);
        lane.try_push(()).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        // The waker was taken by the wake: a second push wakes no one until it registers.
        lane.try_push(()).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        lane.register_drainer(&waker);
        lane.close();
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            2,
            "closing wakes the drainer"
        );
    }

    #[test]
    fn a_caller_waits_for_room_and_is_woken_when_the_drainer_pops() {
        let lane = Lane::new(1);
        lane.try_push(1).unwrap();
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let mut push = Box::pin(lane.push(2));
        assert!(push.as_mut().poll(&mut cx).is_pending(), "full: waits");
        assert_eq!(lane.pop(), Some(1));
        lane.made_room();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "popping woke it");
        assert!(matches!(push.as_mut().poll(&mut cx), Poll::Ready(Ok(()))));
        assert_eq!(lane.pop(), Some(2));
    }

    #[test]
    fn a_caller_waiting_for_room_gets_its_item_back_when_the_lane_closes() {
        let lane = Lane::new(1);
        lane.try_push(1).unwrap();
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let mut push = Box::pin(lane.push(2));
        assert!(push.as_mut().poll(&mut cx).is_pending());
        lane.close();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "closing woke it");
        assert!(matches!(push.as_mut().poll(&mut cx), Poll::Ready(Err(2))));
    }

    /// Items dropped by `close` or by a pusher that raced it: each counted once, none left
    /// in the queue, whatever the interleaving.
    #[test]
    fn nothing_is_left_behind_when_a_close_races_the_pushers() {
        struct Tracked(Arc<AtomicUsize>);
        impl Drop for Tracked {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        for _ in 0..200 {
            let lane = Arc::new(Lane::new(64));
            let dropped = Arc::new(AtomicUsize::new(0));
            let pushers: Vec<_> = (0..3)
                .map(|_| {
                    let (lane, dropped) = (lane.clone(), dropped.clone());
                    std::thread::spawn(move || {
                        let mut refused = 0;
                        for _ in 0..20 {
                            if let Err(Refused::Closed(t) | Refused::Full(t)) =
                                lane.try_push(Tracked(dropped.clone()))
                            {
                                drop(t);
                                refused += 1;
                            }
                        }
                        refused
                    })
                })
                .collect();
            lane.close();
            let refused: usize = pushers.into_iter().map(|p| p.join().unwrap()).sum();
            assert_eq!(lane.len(), 0, "an item outlived the close");
            assert_eq!(dropped.load(Ordering::SeqCst), 60, "{refused} refused");
        }
    }

    /// Many threads push through a small lane, waiting for room, while one drains it: every
    /// item arrives once (no lost wake-up leaves a caller waiting).
    #[test]
    fn waiting_callers_all_get_through_a_small_lane() {
        let lane = Arc::new(Lane::new(2));
        let pushers: Vec<_> = (0..4u64)
            .map(|t| {
                let lane = lane.clone();
                std::thread::spawn(move || {
                    for i in 0..500 {
                        futures_lite::future::block_on(lane.push(t * 1000 + i)).unwrap();
                    }
                })
            })
            .collect();
        let mut got = Vec::new();
        while got.len() < 2000 {
            let mut popped = false;
            while let Some(v) = lane.pop() {
                got.push(v);
                popped = true;
            }
            if popped {
                lane.made_room();
            }
            std::thread::yield_now();
        }
        for p in pushers {
            p.join().unwrap();
        }
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), 2000);
    }
}
