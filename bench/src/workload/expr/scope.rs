//! The scope an expression is evaluated in: the iteration, the element's position and the
//! key random functions draw from.

use super::random::mix;

/// The scope an expression is evaluated in: the iteration, the position of the innermost
/// enclosing element (`j`), and the key random functions draw from (the iteration at the top
/// level; mixed with each enclosing element's position inside collections).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Env {
    pub(super) i: u64,
    pub(super) j: u64,
    pub(super) key: u64,
}

impl Env {
    pub(super) fn top(i: u64) -> Self {
        Self { i, j: 0, key: i }
    }

    /// The scope of element `j` of the collection made at call site `site`.
    pub(super) fn element(self, site: u64, j: u64) -> Self {
        Self {
            i: self.i,
            j,
            key: mix(mix(self.key ^ site).wrapping_add(j)),
        }
    }
}
