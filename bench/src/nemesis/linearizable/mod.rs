//! Check (b) of a nemesis run: is the register workload's history linearizable? Each key is
//! a register (absent at first) that clients write, compare-and-set (lightweight
//! transactions) and read (`SERIAL`); the history is linearizable when every operation can be
//! given one moment between its invoke and its completion such that, taken in that order,
//! the operations are what a single register would have answered. An operation of unknown
//! outcome may take effect at any moment after its invoke, or never.
//!
//! Modules:
//! - [`register`]: the sequential register, the step each operation takes in it.
//! - [`key_history`]: one key's operations in the search's terms (keys are checked apart),
//!   whole or as seen at a cut.
//! - [`search`]: the search for a linearization (Wing and Gong, Lowe's just-in-time form,
//!   configurations cached), with a bound on its memory.
//! - [`witness`]: for a key that fails, its smallest failing sub-history: the shortest
//!   failing prefix and the core of operations that cannot be linearized together.
//! - [`limits`]: the memory bounds of the searches.
//! - [`report`]: what the check found, and its text.
//! - [`check`](mod@check): every key searched, and a witness for each that fails.

mod check;
mod key_history;
mod limits;
mod register;
mod report;
mod search;
mod witness;

// The room's face; until the nemesis runner uses it, only the tests do.
#[cfg_attr(
    not(test),
    expect(unused_imports, reason = "the nemesis runner is still to come")
)]
pub(crate) use {
    check::check,
    limits::Limits,
    report::{Linearizability, Violation},
};

#[cfg(test)]
mod tests;
