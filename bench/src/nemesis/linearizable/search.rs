//! The search for a linearization of one key's operations: Wing and Gong's backtracking over
//! which operation takes effect next, in the just-in-time form Lowe described, with a cache
//! of configurations already explored so that it is not exponential on usual histories.
//!
//! The operations' invokes and completions are one list of entries in time order (at equal
//! times an invoke comes first, so the two operations count as concurrent). The search walks
//! the list from its head. At an invoke, it tries to let that operation take effect now: if
//! the register allows the step, and the configuration this leads to (the set of operations
//! that took effect so far, and the register's value) was never reached before, the
//! operation's two entries leave the list, the choice is pushed on a stack and the walk
//! starts again at the head. Otherwise the walk goes on to the next entry. Reaching a
//! completion means that operation has to have taken effect by now and has not: the last
//! choice is undone (its entries back into the list, the value restored) and the walk goes
//! on after that choice's invoke. The list empty, every operation has a place: linearizable.
//! The stack empty at a completion: no order works.
//!
//! An optional operation (its outcome unknown) may also never take effect: reaching its
//! completion, the search first tries dropping it (a choice like any other, cached and undone
//! the same way) before undoing earlier choices. Its completion is usually open (after every
//! other entry), so it may take effect at any time after its invoke or, dropped at the end,
//! never.
//!
//! A configuration decides everything the search does after it, so reaching one a second time
//! can only fail again; the cache holds each configuration explored. Its memory is bounded:
//! past the bound the search gives up and says so, rather than answer.

use std::collections::HashSet;

use super::key_history::CheckedOp;
use super::register::State;

/// What the search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// An order of the operations, each at a moment between its invoke and its completion,
    /// that the register allows.
    Linearizable,
    /// No such order.
    NotLinearizable,
    /// The cache of configurations reached its bound before an answer.
    GaveUp,
}

/// The search's answer and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Search {
    /// What it found.
    pub(crate) found: Found,
    /// How many configurations it explored.
    pub(crate) configurations: usize,
}

/// One choice on the stack: which operation, the value before it, and whether it was
/// dropped rather than taken.
struct Choice {
    op: usize,
    before: State,
    dropped: bool,
}

/// The operations' entries as a doubly linked list that entries can leave and re-enter in
/// the reverse order (the search's undo). Entry `2 i` is operation `i`'s invoke, `2 i + 1` its
/// completion, and `2 n` the head, before the first entry and after the last.
struct Entries {
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl Entries {
    fn new(ops: &[CheckedOp]) -> Self {
        let head = 2 * ops.len();
        let mut order: Vec<(u64, bool, usize)> = Vec::with_capacity(head);
        for (i, op) in ops.iter().enumerate() {
            order.push((op.invoke_ns, false, 2 * i));
            order.push((op.complete_ns.unwrap_or(u64::MAX), true, 2 * i + 1));
        }
        order.sort_unstable();
        let mut next = vec![head; head + 1];
        let mut prev = vec![head; head + 1];
        let mut last = head;
        for &(_, _, entry) in &order {
            next[last] = entry;
            prev[entry] = last;
            last = entry;
        }
        next[last] = head;
        prev[head] = last;
        Self { next, prev }
    }

    fn head(&self) -> usize {
        self.next.len() - 1
    }

    fn first(&self) -> usize {
        self.next[self.head()]
    }

    fn is_empty(&self) -> bool {
        self.first() == self.head()
    }

    fn unlink(&mut self, entry: usize) {
        let (prev, next) = (self.prev[entry], self.next[entry]);
        self.next[prev] = next;
        self.prev[next] = prev;
    }

    fn relink(&mut self, entry: usize) {
        let (prev, next) = (self.prev[entry], self.next[entry]);
        self.next[prev] = entry;
        self.prev[next] = entry;
    }

    /// Operation `op`'s two entries leave the list.
    fn take(&mut self, op: usize) {
        self.unlink(2 * op);
        self.unlink(2 * op + 1);
    }

    /// They come back: the undo of the last [`Entries::take`] not yet undone.
    fn restore(&mut self, op: usize) {
        self.relink(2 * op + 1);
        self.relink(2 * op);
    }
}

/// The set of operations that took effect (or were dropped), one bit each.
#[derive(Clone)]
struct Done {
    words: Vec<u64>,
}

impl Done {
    fn new(ops: usize) -> Self {
        Self {
            words: vec![0; ops.div_ceil(64)],
        }
    }

    fn set(&mut self, op: usize) {
        self.words[op / 64] |= 1 << (op % 64);
    }

    fn clear(&mut self, op: usize) {
        self.words[op / 64] &= !(1 << (op % 64));
    }
}

/// Searches for a linearization of `ops` (one key's), the cache of configurations held to
/// about `cache_bytes`.
pub(crate) fn search(ops: &[CheckedOp], cache_bytes: usize) -> Search {
    let mut entries = Entries::new(ops);
    let mut done = Done::new(ops.len());
    // A configuration's cost: its bits, the set's slot and the allocation's bookkeeping.
    let per_configuration = done.words.len() * 8 + 48;
    let max_configurations = cache_bytes / per_configuration;
    let mut seen: HashSet<(Box<[u64]>, State)> = HashSet::new();
    let mut stack: Vec<Choice> = Vec::new();
    let mut state: State = None;
    let mut entry = entries.first();
    let answer = |found, seen: &HashSet<_>| Search {
        found,
        configurations: seen.len(),
    };
    loop {
        if entries.is_empty() {
            return answer(Found::Linearizable, &seen);
        }
        let op = entry / 2;
        let is_invoke = entry != entries.head() && entry % 2 == 0;
        if is_invoke {
            if let Some(after) = ops[op].step.apply(state) {
                done.set(op);
                if seen.insert((done.words.clone().into_boxed_slice(), after)) {
                    if seen.len() > max_configurations {
                        return answer(Found::GaveUp, &seen);
                    }
                    stack.push(Choice {
                        op,
                        before: state,
                        dropped: false,
                    });
                    state = after;
                    entries.take(op);
                    entry = entries.first();
                    continue;
                }
                done.clear(op);
            }
            entry = entries.next[entry];
            continue;
        }
        // A completion (or, in a list that is not empty, never: the head).
        if entry != entries.head() && ops[op].optional {
            done.set(op);
            if seen.insert((done.words.clone().into_boxed_slice(), state)) {
                if seen.len() > max_configurations {
                    return answer(Found::GaveUp, &seen);
                }
                stack.push(Choice {
                    op,
                    before: state,
                    dropped: true,
                });
                entries.take(op);
                entry = entries.first();
                continue;
            }
            done.clear(op);
        }
        let Some(choice) = stack.pop() else {
            return answer(Found::NotLinearizable, &seen);
        };
        done.clear(choice.op);
        entries.restore(choice.op);
        state = choice.before;
        entry = if choice.dropped {
            // Back at its completion, where dropping it is now a configuration seen: the
            // search undoes the choice before.
            2 * choice.op + 1
        } else {
            entries.next[2 * choice.op]
        };
    }
}
