//! The operation table: what the ring knows about each request it handed to the kernel.
//!
//! A slot is found from a CQE's `user_data`, which packs a kind tag (8 bits), the slot's
//! generation (24 bits) and its index (32 bits). Kinds: [`KIND_OP`] one-shot requests owned
//! by an [`super::op_future::Op`] future, [`KIND_RECV`] a stream's multishot receive, [`KIND_WAKE`]
//! the executor's eventfd read, [`KIND_IGNORE`] requests whose completion carries nothing
//! (cancels, closes).
//!
//! Invariants:
//! - Whatever the kernel may read or write for a request (a send buffer, a socket address)
//!   is owned by its slot ([`Hold`]) until the request's last CQE arrives, even if the
//!   future that started it is gone ([`State::Abandoned`]): nothing is freed under the
//!   kernel.
//! - A slot's generation changes every time it is freed, so a CQE or handle that names an
//!   older generation finds nothing (`get` returns `None`).
//! - Slots and the free list live in one `Vec` whose capacity is kept: after warm-up,
//!   starting an operation allocates nothing.
//! - [`OpTable::lazy`] counts the one-shot requests started *lazy* whose CQE has not been
//!   dispatched yet: requests that complete while being submitted (a send with
//!   `MSG_DONTWAIT` cannot wait in the kernel) and whose completion nobody is in a hurry
//!   for, so that the executor's wait does not end for them (see `ring`). A lazy
//!   request is counted from its start to its CQE, abandoned or not; [`OpTable::hurry`] ends its
//!   laziness early.

use std::rc::Rc;
use std::task::Waker;

use bytes::BytesMut;

use super::sockaddr::SockAddrBuf;
use super::stream_state::StreamState;

/// One-shot request owned by an `Op` future.
pub(crate) const KIND_OP: u8 = 1;
/// A stream's multishot receive.
pub(crate) const KIND_RECV: u8 = 2;
/// The executor's eventfd read (cross-thread wake-ups).
pub(crate) const KIND_WAKE: u8 = 3;
/// A request whose completion is ignored (cancel, close).
pub(crate) const KIND_IGNORE: u8 = 4;

const GEN_MASK: u32 = 0x00FF_FFFF;
const NONE: u32 = u32::MAX;

/// Packs a kind, slot index and generation into a CQE `user_data`.
pub(crate) fn user_data(kind: u8, index: u32, gen: u32) -> u64 {
    (kind as u64) << 56 | ((gen & GEN_MASK) as u64) << 32 | index as u64
}

/// Splits a `user_data` into (kind, index, generation).
pub(crate) fn split(ud: u64) -> (u8, u32, u32) {
    ((ud >> 56) as u8, ud as u32, ((ud >> 32) as u32) & GEN_MASK)
}

/// What a request keeps alive while the kernel may use it.
pub(crate) enum Hold {
    /// Nothing.
    Nothing,
    /// The buffer a send reads from.
    Buf(BytesMut),
    /// The address a connect reads or an accept writes (`accept`: a successful result is
    /// then a new fd).
    Addr {
        /// The address buffer.
        addr: Box<SockAddrBuf>,
        /// Whether the request is an accept.
        accept: bool,
    },
}

/// A slot's state.
pub(crate) enum State {
    /// Unused; `next` is the next free slot.
    Free { next: u32 },
    /// In the kernel; the future waits (`lazy`: counted in [`OpTable::lazy`]).
    Waiting {
        waker: Option<Waker>,
        hold: Hold,
        lazy: bool,
    },
    /// Completed; the future has not picked the result up yet.
    Done { res: i32, hold: Hold },
    /// In the kernel, but its future is gone: freed when the CQE arrives.
    Abandoned { hold: Hold, lazy: bool },
    /// A stream's multishot receive slot (armed or not), owned by the stream.
    Stream(Rc<StreamState>),
}

struct Slot {
    gen: u32,
    state: State,
}

/// What a completed one-shot request leaves behind.
pub(crate) struct Completion {
    /// The CQE's result (negative errno on failure).
    pub(crate) res: i32,
    /// What the request held, handed back.
    pub(crate) hold: Hold,
}

/// What the executor must do after a one-shot CQE (outside the slab's borrow).
pub(crate) enum Completed {
    /// Wake the waiting future.
    Wake(Option<Waker>),
    /// The future was gone: drop (or clean up) what the request held.
    Orphan(Hold, i32),
    /// A CQE for a slot that no longer exists (cannot happen for one-shot requests).
    Stale,
}

/// The slab of operation slots.
#[derive(Default)]
pub(crate) struct OpTable {
    slots: Vec<Slot>,
    free: Option<u32>,
    /// Lazy one-shot requests whose CQE has not been dispatched.
    lazy: usize,
}

impl OpTable {
    /// Takes a slot for a one-shot request holding `hold` (`lazy`: see [`OpTable::lazy`]);
    /// returns (index, generation).
    pub(crate) fn alloc_op(&mut self, hold: Hold, lazy: bool) -> (u32, u32) {
        self.lazy += usize::from(lazy);
        self.alloc(State::Waiting {
            waker: None,
            hold,
            lazy,
        })
    }

    /// Lazy one-shot requests whose CQE has not been dispatched yet: each posts exactly one
    /// CQE without waiting on anything outside the kernel, so a wait for `lazy() + 1`
    /// completions ends only when something else has completed too.
    pub(crate) fn lazy(&self) -> usize {
        self.lazy
    }

    /// Someone now waits for the lazy request `index`: its completion counts again. Returns
    /// whether it was lazy (and still in the kernel).
    pub(crate) fn hurry(&mut self, index: u32, gen: u32) -> bool {
        match self.get(index, gen) {
            Some(State::Waiting { lazy, .. }) if *lazy => {
                *lazy = false;
                self.lazy -= 1;
                true
            }
            _ => false,
        }
    }

    /// Takes a free slot for `state`; returns (index, generation).
    pub(crate) fn alloc(&mut self, state: State) -> (u32, u32) {
        match self.free {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                let next = match slot.state {
                    State::Free { next } => next,
                    _ => unreachable!("free list names a used slot"),
                };
                self.free = (next != NONE).then_some(next);
                slot.state = state;
                (i, slot.gen)
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|i| *i != NONE)
                    .expect("too many operation slots");
                self.slots.push(Slot { gen: 0, state });
                (i, 0)
            }
        }
    }

    /// Frees slot `index` and returns its old state (for the caller to drop outside any
    /// borrow of the executor).
    pub(crate) fn free(&mut self, index: u32) -> State {
        let next = self.free.unwrap_or(NONE);
        let slot = &mut self.slots[index as usize];
        slot.gen = (slot.gen + 1) & GEN_MASK;
        self.free = Some(index);
        std::mem::replace(&mut slot.state, State::Free { next })
    }

    /// The state of slot `index` if it still has generation `gen`.
    pub(crate) fn get(&mut self, index: u32, gen: u32) -> Option<&mut State> {
        match self.slots.get_mut(index as usize) {
            Some(s) if s.gen == gen && !matches!(s.state, State::Free { .. }) => Some(&mut s.state),
            _ => None,
        }
    }

    /// Records a one-shot CQE.
    pub(crate) fn complete(&mut self, index: u32, gen: u32, res: i32) -> Completed {
        let Some(state) = self.get(index, gen) else {
            return Completed::Stale;
        };
        match state {
            State::Waiting { waker, hold, lazy } => {
                let was_lazy = *lazy;
                let waker = waker.take();
                let hold = std::mem::replace(hold, Hold::Nothing);
                *state = State::Done { res, hold };
                self.lazy -= usize::from(was_lazy);
                Completed::Wake(waker)
            }
            State::Abandoned { .. } => match self.free(index) {
                State::Abandoned { hold, lazy } => {
                    self.lazy -= usize::from(lazy);
                    Completed::Orphan(hold, res)
                }
                _ => unreachable!("checked above"),
            },
            _ => Completed::Stale,
        }
    }

    /// Polls a one-shot slot: its completion if done (freeing the slot), else records `waker`.
    pub(crate) fn poll(&mut self, index: u32, gen: u32, waker: &Waker) -> Option<Completion> {
        let state = self.get(index, gen)?;
        match state {
            State::Waiting { waker: w, .. } => {
                match w {
                    Some(w) if w.will_wake(waker) => {}
                    _ => *w = Some(waker.clone()),
                }
                None
            }
            State::Done { .. } => match self.free(index) {
                State::Done { res, hold } => Some(Completion { res, hold }),
                _ => unreachable!("checked above"),
            },
            _ => None,
        }
    }

    /// The future of slot `index` is gone. Returns `true` if the request is still in the
    /// kernel (the caller cancels it), or the hold and result of a completion nobody picked
    /// up (the caller cleans it up).
    pub(crate) fn abandon(&mut self, index: u32, gen: u32) -> Abandon {
        let Some(state) = self.get(index, gen) else {
            return Abandon::Gone;
        };
        match state {
            State::Waiting { hold, lazy, .. } => {
                let hold = std::mem::replace(hold, Hold::Nothing);
                *state = State::Abandoned { hold, lazy: *lazy };
                Abandon::InKernel
            }
            State::Done { .. } => match self.free(index) {
                State::Done { res, hold, .. } => Abandon::Completed(hold, res),
                _ => unreachable!("checked above"),
            },
            _ => Abandon::Gone,
        }
    }

    /// Forgets every slot (and what it holds), for a teardown that could not prove the
    /// kernel done with them.
    pub(crate) fn leak(&mut self) {
        std::mem::forget(std::mem::take(&mut self.slots));
    }
}

/// What [`OpTable::abandon`] found.
pub(crate) enum Abandon {
    /// Still in the kernel: cancel it; the slot keeps what it holds until the CQE.
    InKernel,
    /// Completed but not picked up: clean up the hold (and a new fd for accept).
    Completed(Hold, i32),
    /// Nothing there.
    Gone,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips() {
        let ud = user_data(KIND_RECV, 123_456, 0xAB_CDEF);
        assert_eq!(split(ud), (KIND_RECV, 123_456, 0xAB_CDEF));
        assert_eq!(split(user_data(KIND_IGNORE, 0, 0)).0, KIND_IGNORE);
    }

    #[test]
    fn generations_reject_stale_completions_and_slots_are_reused() {
        let mut ops = OpTable::default();
        let (i, g) = ops.alloc_op(Hold::Nothing, false);
        assert!(matches!(ops.complete(i, g, 5), Completed::Wake(None)));
        let waker = Waker::noop();
        let c = ops.poll(i, g, waker).expect("done");
        assert_eq!(c.res, 5);
        // Freed: the old generation finds nothing; the slot comes back with a new one.
        assert!(matches!(ops.complete(i, g, 1), Completed::Stale));
        let (i2, g2) = ops.alloc_op(Hold::Buf(BytesMut::from(&b"abc"[..])), false);
        assert_eq!((i2, g2), (i, g + 1));
        // Abandoned: the hold stays until the CQE, then comes back as an orphan.
        assert!(matches!(ops.abandon(i2, g2), Abandon::InKernel));
        match ops.complete(i2, g2, 3) {
            Completed::Orphan(Hold::Buf(b), 3) => assert_eq!(&b[..], b"abc"),
            _ => panic!("expected the orphaned buffer"),
        }
    }

    #[test]
    fn lazy_requests_are_counted_until_their_cqe_or_until_hurried() {
        let mut ops = OpTable::default();
        let (a, ga) = ops.alloc_op(Hold::Nothing, true);
        let (b, gb) = ops.alloc_op(Hold::Nothing, true);
        let (c, gc) = ops.alloc_op(Hold::Nothing, false);
        assert_eq!(ops.lazy(), 2);
        // A lazy CQE stops counting once dispatched.
        assert!(matches!(ops.complete(a, ga, 10), Completed::Wake(None)));
        assert_eq!(ops.lazy(), 1);
        // Hurried: counted no more, and hurrying twice (or a non-lazy one) changes nothing.
        assert!(ops.hurry(b, gb));
        assert!(!ops.hurry(b, gb));
        assert!(!ops.hurry(c, gc));
        assert_eq!(ops.lazy(), 0);
        assert!(matches!(ops.complete(b, gb, 10), Completed::Wake(None)));
        assert_eq!(ops.lazy(), 0);
        // Abandoned while lazy: still counted until its CQE frees it.
        let (d, gd) = ops.alloc_op(Hold::Nothing, true);
        assert!(matches!(ops.abandon(d, gd), Abandon::InKernel));
        assert_eq!(ops.lazy(), 1);
        assert!(matches!(
            ops.complete(d, gd, 3),
            Completed::Orphan(Hold::Nothing, 3)
        ));
        assert_eq!(ops.lazy(), 0);
        // A completed slot cannot be hurried.
        assert!(!ops.hurry(a, ga));
    }
}
