//! Murmur3 tokens (signed 64-bit): the evenly spaced ones a fresh cluster's nodes get, and the
//! middle of the ring's widest gap, which a node added later takes by default. The arithmetic
//! wraps round the ring the way bash's 64-bit arithmetic did in the shell version.

/// Node `i` of `n` (1-based): `-2^63 + (i-1) * (2^63-1)/n * 2`.
pub(crate) fn node_token(i: u32, n: u32) -> i64 {
    let step = (i64::MAX / i64::from(n.max(1))).wrapping_mul(2);
    (1..i).fold(i64::MIN, |t, _| t.wrapping_add(step))
}

/// The middle of the widest gap between consecutive tokens of `sorted` (the gap from the last
/// token round to the first included); 0 for an empty ring. Gaps are compared in quarters so
/// that nothing overflows; on a tie the first gap wins.
pub(crate) fn widest_gap_middle(sorted: &[i64]) -> i64 {
    let Some(&first) = sorted.first() else {
        return 0;
    };
    let (mut best_a, mut best_q) = (0_i64, -1_i64);
    for (k, &a) in sorted.iter().enumerate() {
        let q = match sorted.get(k + 1) {
            Some(&next) => next / 4 - a / 4,
            None => first / 4 + (1_i64 << 62) - a / 4,
        };
        if q > best_q {
            best_q = q;
            best_a = a;
        }
    }
    best_a.wrapping_add(best_q.wrapping_mul(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_ring_is_evenly_spaced_from_the_bottom() {
        assert_eq!(node_token(1, 1), i64::MIN);
        assert_eq!(node_token(1, 3), i64::MIN);
        // The values the shell version wrote for the three-node clusters.
        assert_eq!(node_token(2, 3), -3_074_457_345_618_258_604);
        assert_eq!(node_token(3, 3), 3_074_457_345_618_258_600);
        assert_eq!(node_token(2, 2), -2);
    }

    #[test]
    fn an_added_node_takes_the_middle_of_the_widest_gap() {
        let ring = [node_token(1, 3), node_token(2, 3), node_token(3, 3)];
        // Three near-equal gaps; the last, round the top, is the widest by a few.
        assert_eq!(widest_gap_middle(&ring), 6_148_914_691_236_517_204);
        let inner = [
            -6_000_000_000_000_000_000,
            6_000_000_000_000_000_000,
            7_000_000_000_000_000_000,
        ];
        assert_eq!(widest_gap_middle(&inner), 0);
        // The gap from 400 round to -100 is the widest: its middle wraps past the top.
        assert_eq!(
            widest_gap_middle(&[-100, 0, 400]),
            -9_223_372_036_854_775_658
        );
        assert_eq!(widest_gap_middle(&[]), 0);
    }

    #[test]
    fn a_single_token_is_faced_by_the_opposite_point_of_the_ring() {
        assert_eq!(widest_gap_middle(&[i64::MIN]), 0);
        assert_eq!(widest_gap_middle(&[0]), i64::MIN);
        assert_eq!(widest_gap_middle(&[1000]), i64::MIN + 1000);
    }
}
