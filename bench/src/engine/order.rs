//! The backends' order in each round of an interleaved run ([`Order`], `--order`).
//!
//! A run of several backends measures them in rounds: round `r` runs each backend's segment
//! `r` once. A fixed order (ABC every round) turns any drift within a round (the node's JIT
//! warming up, a cache filling, a neighbour's load) into a bias against whichever backend
//! always comes later; rotating the order (ABC, BCA, CAB, ...) gives every backend every
//! place equally often over a multiple of the backends' count, so the drift cancels out of
//! the within-round comparison the VERDICT makes.

use std::fmt;

/// How the backends are ordered within each round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Order {
    /// Round `r` starts with backend `r mod n` and goes on in the given order (the default).
    #[default]
    Rotate,
    /// The given order in every round.
    Fixed,
}

/// An `--order` that is neither `rotate` nor `fixed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown order `{0}`: rotate (each round starts one backend later) or fixed")]
pub(crate) struct UnknownOrder(pub String);

impl Order {
    /// Reads `rotate` or `fixed`.
    pub(crate) fn parse(text: &str) -> Result<Self, UnknownOrder> {
        match text {
            "rotate" => Ok(Order::Rotate),
            "fixed" => Ok(Order::Fixed),
            other => Err(UnknownOrder(other.to_owned())),
        }
    }

    /// Its name, as `--order` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Order::Rotate => "rotate",
            Order::Fixed => "fixed",
        }
    }

    /// The indices (into the given order of `n` backends) that round `round` runs, in turn.
    pub(crate) fn round(self, n: usize, round: usize) -> impl Iterator<Item = usize> {
        let shift = match self {
            Order::Rotate if n > 0 => round % n,
            _ => 0,
        };
        (0..n).map(move |i| (i + shift) % n)
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(order: Order, n: usize, count: usize) -> Vec<Vec<usize>> {
        (0..count).map(|r| order.round(n, r).collect()).collect()
    }

    #[test]
    fn rotation_gives_every_backend_every_place_once_per_cycle() {
        assert_eq!(
            rounds(Order::Rotate, 3, 4),
            [vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1], vec![0, 1, 2]]
        );
        assert_eq!(
            rounds(Order::Rotate, 2, 3),
            [vec![0, 1], vec![1, 0], vec![0, 1]]
        );
        assert_eq!(rounds(Order::Rotate, 1, 2), [vec![0], vec![0]]);
        assert_eq!(rounds(Order::Rotate, 0, 1), [Vec::<usize>::new()]);
    }

    #[test]
    fn a_fixed_order_is_the_given_one_every_round() {
        assert_eq!(rounds(Order::Fixed, 3, 2), [vec![0, 1, 2], vec![0, 1, 2]]);
    }

    #[test]
    fn order_names_read_back_and_others_are_refused() {
        for o in [Order::Rotate, Order::Fixed] {
            assert_eq!(Order::parse(o.name()), Ok(o));
        }
        let e = Order::parse("random").unwrap_err().to_string();
        assert!(e.contains("`random`") && e.contains("rotate"), "{e}");
    }
}
