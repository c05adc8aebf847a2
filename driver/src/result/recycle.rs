//! Boxes recycled through a per-thread list of spares, so that a value too large to move
//! cheaply can be handed around as one pointer without an allocation per use.
//!
//! A [`Recycled<T>`] owns a `Box<T>`. Making one takes a spare box of this thread (or
//! allocates one while the list is empty: warm-up, or more values alive at once than ever
//! before); dropping one empties the value ([`Recyclable::clear`], which drops what it
//! holds) and puts the box back, most recently freed first so that the next one is warm in
//! the cache.
//!
//! Invariants:
//! - The list of spares is thread-local (no atomic, no lock); a value dropped on another
//!   thread than the one it was made on simply joins that thread's list.
//! - At most [`MAX_SPARES`] boxes wait per thread and type; past that a dropped box is
//!   freed, so memory is bounded by the most values ever alive at once, capped.
//! - A spare holds an empty value: nothing it held (buffers, reference counts) outlives the
//!   `Recycled` that held it.
//! - If the thread's list is gone (the thread is exiting) the box is simply freed.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// Spare boxes kept per thread and type, at most.
pub(crate) const MAX_SPARES: usize = 4096;

/// A thread's spare boxes of one type. The boxes are the point (each is an allocation kept
/// for reuse), hence a vector of boxes.
#[allow(clippy::vec_box)]
pub(crate) type Spares<T> = Vec<Box<T>>;

/// A value whose boxes are recycled per thread.
pub(crate) trait Recyclable: Sized + 'static {
    /// This thread's spare boxes of this type.
    fn spares() -> &'static LocalKey<RefCell<Spares<Self>>>;

    /// Drops what the value holds, leaving it empty (as a spare must be).
    fn clear(&mut self);
}

/// A boxed value whose box goes back to this thread's spares when it is dropped.
pub(crate) struct Recycled<T: Recyclable>(Option<Box<T>>);

impl<T: Recyclable> Recycled<T> {
    /// Boxes `value`, in a spare box when this thread has one.
    #[inline]
    pub(crate) fn new(value: T) -> Self {
        let spare = T::spares()
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten();
        Recycled(Some(match spare {
            Some(mut b) => {
                // The spare is empty: overwriting it drops nothing of value.
                *b = value;
                b
            }
            None => Box::new(value),
        }))
    }

    /// An empty value (`T::default()`, as spares are) filled in place by `fill`: what it
    /// writes lands in the box directly, with no copy of the whole value.
    #[inline]
    pub(crate) fn filled(fill: impl FnOnce(&mut T)) -> Self
    where
        T: Default,
    {
        let spare = T::spares()
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten();
        let mut b = spare.unwrap_or_default();
        fill(&mut b);
        Recycled(Some(b))
    }

    /// The value, taken out of its box (which goes back to the spares).
    pub(crate) fn into_inner(mut self) -> T
    where
        T: Default,
    {
        let inner = self.0.as_deref_mut().map(std::mem::take);
        inner.unwrap_or_default()
    }

    /// Spare boxes of this type on this thread (for tests).
    #[cfg(test)]
    fn spare_count() -> usize {
        T::spares().with(|s| s.borrow().len())
    }
}

impl<T: Recyclable> Deref for Recycled<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // The box is taken only in `drop`.
        match &self.0 {
            Some(b) => b,
            None => unreachable!("a Recycled is empty only while it is dropped"),
        }
    }
}

impl<T: Recyclable> DerefMut for Recycled<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.0 {
            Some(b) => b,
            None => unreachable!("a Recycled is empty only while it is dropped"),
        }
    }
}

impl<T: Recyclable> Drop for Recycled<T> {
    #[inline]
    fn drop(&mut self) {
        let Some(mut b) = self.0.take() else {
            return;
        };
        b.clear();
        // Past the cap, or with the thread's list gone, the box is freed here.
        let _ = T::spares().try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < MAX_SPARES {
                s.push(b);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[derive(Default)]
    struct Held(Option<Rc<()>>);

    thread_local! {
        static SPARES: RefCell<Spares<Held>> = const { RefCell::new(Vec::new()) };
    }

    impl Recyclable for Held {
        fn spares() -> &'static LocalKey<RefCell<Spares<Self>>> {
            &SPARES
        }

        fn clear(&mut self) {
            self.0 = None;
        }
    }

    #[test]
    fn a_dropped_value_lets_go_of_what_it_held_and_its_box_is_reused() {
        let token = Rc::new(());
        let a = Recycled::new(Held(Some(token.clone())));
        let first: *const Held = &*a;
        assert_eq!(Rc::strong_count(&token), 2);
        drop(a);
        // Emptied: the spare holds nothing.
        assert_eq!(Rc::strong_count(&token), 1);
        assert_eq!(Recycled::<Held>::spare_count(), 1);
        // The next value takes that very box.
        let b = Recycled::new(Held(Some(token.clone())));
        assert_eq!(&*b as *const Held, first);
        assert_eq!(Recycled::<Held>::spare_count(), 0);
        // Taken out: the value lives on, the box is a spare again.
        let inner = b.into_inner();
        assert_eq!(Rc::strong_count(&token), 2);
        assert_eq!(Recycled::<Held>::spare_count(), 1);
        drop(inner);
        assert_eq!(Rc::strong_count(&token), 1);
    }

    #[test]
    fn a_value_filled_in_place_takes_a_spare_box() {
        let a = Recycled::new(Held::default());
        let first: *const Held = &*a;
        drop(a);
        let token = Rc::new(());
        let b = Recycled::<Held>::filled(|h| h.0 = Some(token.clone()));
        assert_eq!(&*b as *const Held, first);
        assert_eq!(Rc::strong_count(&token), 2);
        drop(b);
        assert_eq!(Rc::strong_count(&token), 1);
    }

    #[test]
    fn spares_are_capped() {
        let many: Vec<_> = (0..MAX_SPARES + 10)
            .map(|_| Recycled::new(Held::default()))
            .collect();
        drop(many);
        assert_eq!(Recycled::<Held>::spare_count(), MAX_SPARES);
    }
}
