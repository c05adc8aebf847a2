//! Hand-written histories whose answer is known.

use super::*;

/// One process, one operation after another: writes, compare-and-sets from absent and from
/// a value (applied and not) and reads that see each.
#[test]
fn sequential_operations_are_linearizable() {
    let report = assert_linearizable(vec![
        read(0, 0, 1, None),
        cas(0, 2, 3, None, 1, true),
        read(0, 4, 5, Some(1)),
        write(0, 6, 7, 2),
        cas(0, 8, 9, Some(2), 3, true),
        cas(0, 10, 11, Some(2), 4, false),
        cas(0, 12, 13, None, 5, false),
        read(0, 14, 15, Some(3)),
    ]);
    assert_eq!((report.keys, report.ops), (1, 8));
}

/// Operations that overlap may take effect in either order, at any moment of their
/// intervals: a read during a write sees the old value, a later one the new, and a read
/// concurrent with a second write sees either.
#[test]
fn overlapping_operations_take_effect_inside_their_intervals() {
    assert_linearizable(vec![
        write(0, 0, 10, 1),
        read(1, 1, 3, None),
        read(1, 4, 6, Some(1)),
        write(2, 5, 15, 2),
        read(1, 11, 12, Some(1)),
        read(1, 13, 14, Some(2)),
        read(1, 16, 17, Some(2)),
    ]);
    // The second write may also come first, the first one then overwriting it.
    assert_linearizable(vec![
        write(0, 0, 10, 1),
        write(2, 0, 10, 2),
        read(1, 11, 12, Some(1)),
    ]);
}

/// Two concurrent compare-and-sets from the same value: one applies, the other does not,
/// whichever was invoked first.
#[test]
fn of_two_concurrent_cas_from_one_value_one_applies() {
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        cas(1, 2, 6, Some(1), 2, true),
        cas(2, 3, 5, Some(1), 3, false),
        read(0, 7, 8, Some(2)),
    ]);
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        cas(1, 2, 6, Some(1), 2, false),
        cas(2, 3, 5, Some(1), 3, true),
        read(0, 7, 8, Some(3)),
    ]);
}

/// A write of unknown outcome may have taken effect, even after the client gave up on it
/// (its completion is open): reads see the old value after it "ended", then the new one.
#[test]
fn an_unknown_write_may_have_taken_effect_late() {
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        unknown(write(1, 2, 3, 2)),
        read(0, 4, 5, Some(1)),
        read(0, 6, 7, Some(2)),
        read(2, 20, 21, Some(2)),
    ]);
}

/// A write of unknown outcome may never have taken effect.
#[test]
fn an_unknown_write_may_never_have_taken_effect() {
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        unknown(write(1, 2, 3, 2)),
        read(0, 10, 11, Some(1)),
        read(2, 12, 13, Some(1)),
    ]);
}

/// A compare-and-set of unknown outcome applied or not: both histories are linearizable,
/// and so is one where it applied only after a later write made its expected value current.
#[test]
fn an_unknown_cas_may_or_may_not_have_applied() {
    let unknown_cas = || unknown(cas(1, 2, 3, Some(1), 2, true));
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        unknown_cas(),
        read(0, 4, 5, Some(2)),
    ]);
    assert_linearizable(vec![
        write(0, 0, 1, 1),
        unknown_cas(),
        read(0, 4, 5, Some(1)),
    ]);
    assert_linearizable(vec![
        write(0, 0, 1, 5),
        unknown_cas(),
        read(0, 4, 5, Some(5)),
        write(0, 6, 7, 1),
        read(0, 8, 9, Some(2)),
    ]);
}

/// Refused operations did not happen: a refused write's value is never read, and the check
/// does not place them.
#[test]
fn failed_operations_did_not_happen() {
    let report = assert_linearizable(vec![
        write(0, 0, 1, 1),
        failed(write(1, 2, 3, 2)),
        failed(cas(1, 4, 5, Some(1), 3, true)),
        read(0, 6, 7, Some(1)),
    ]);
    assert_eq!(report.ops, 2);
}

/// Keys are separate registers: a key not written reads absent whatever the others hold.
#[test]
fn keys_are_checked_apart() {
    let report = assert_linearizable(vec![
        write(0, 0, 1, 1),
        on_key(read(1, 2, 3, None), 2),
        on_key(write(1, 4, 5, 7), 2),
        read(0, 6, 7, Some(1)),
        on_key(read(0, 8, 9, Some(7)), 2),
    ]);
    assert_eq!(report.keys, 2);
}

/// An answer and an invoke at the same nanosecond count as concurrent: the read may come
/// before the write.
#[test]
fn an_answer_and_an_invoke_at_one_moment_are_concurrent() {
    assert_linearizable(vec![write(0, 0, 5, 1), read(1, 5, 6, None)]);
    let violation = the_violation(vec![write(0, 0, 5, 1), read(1, 6, 7, None)]);
    assert_eq!(violation.core(), [0, 1]);
}

/// A stale read: two writes one after the other, then a read of the first value. Its
/// shortest failing prefix ends at the read's answer and holds the three; the core is the
/// second write and the read (whatever the first write did, a read after the second cannot
/// see anything but its value).
#[test]
fn a_stale_read_after_a_completed_write_is_caught() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        write(0, 2, 3, 2),
        read(1, 4, 5, Some(1)),
        read(2, 6, 7, Some(2)),
    ]);
    assert_eq!(violation.key, 1);
    assert_eq!(violation.cut_ns, Some(5));
    let prefix: Vec<usize> = violation.prefix.iter().map(|op| op.index).collect();
    assert_eq!(prefix, [0, 1, 2]);
    assert_eq!(violation.core(), [1, 2]);
    let text = violation.to_string();
    assert!(text.contains("key 1: NOT linearizable"), "{text}");
    assert!(
        text.contains("holds 3 operations; the 2 marked *"),
        "{text}"
    );
    assert!(
        text.contains("* op #2 process 1 [+0.000004 ms .. +0.000005 ms] read: ok, read 1"),
        "{text}"
    );
    assert!(text.contains("    op #0 process 0"), "{text}");
}

/// A compare-and-set that applied against a value no one wrote: the core is that one
/// operation, and the prefix ends at its answer (the read after it is not part of it).
#[test]
fn a_cas_applied_against_a_value_no_one_wrote_is_caught() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        cas(1, 2, 3, Some(7), 8, true),
        read(0, 4, 5, Some(8)),
    ]);
    assert_eq!(violation.cut_ns, Some(3));
    assert_eq!(violation.prefix.len(), 2);
    assert_eq!(violation.core(), [1]);
}

/// Two compare-and-sets from one value both applied: whatever else happened, at most one of
/// them can have found the value they expected. The prefix ends at the second's answer.
#[test]
fn two_cas_from_one_value_both_applied_are_caught() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        cas(1, 2, 6, Some(1), 2, true),
        cas(2, 3, 7, Some(1), 3, true),
        read(0, 8, 9, Some(3)),
    ]);
    assert_eq!(violation.cut_ns, Some(7));
    assert_eq!(violation.prefix.len(), 3);
    assert_eq!(violation.core(), [1, 2]);
}

/// Once a read has seen the value of a write of unknown outcome, no later read may see the
/// older value again: the unknown write cannot excuse it, and it is not in the core.
#[test]
fn an_unknown_write_cannot_excuse_a_return_to_an_older_value() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        unknown(write(1, 2, 3, 2)),
        read(0, 4, 5, Some(2)),
        read(0, 6, 7, Some(1)),
    ]);
    assert_eq!(violation.cut_ns, Some(7));
    assert_eq!(violation.core(), [2, 3]);
}

/// A read cannot see a write invoked after it was answered.
#[test]
fn a_read_from_the_future_is_caught() {
    let violation = the_violation(vec![read(0, 0, 1, Some(1)), write(1, 2, 3, 1)]);
    assert_eq!(violation.cut_ns, Some(1));
    assert_eq!(violation.core(), [0]);
}

/// A pending answer: an operation answered after the cut is shown pending, not as answered.
#[test]
fn an_operation_answered_after_the_cut_is_pending_in_the_prefix() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        write(1, 2, 20, 5),
        write(0, 3, 4, 2),
        read(0, 5, 6, Some(1)),
    ]);
    assert_eq!(violation.cut_ns, Some(6));
    let pending: Vec<usize> = violation
        .prefix
        .iter()
        .filter(|op| op.pending_at_cut)
        .map(|op| op.index)
        .collect();
    assert_eq!(pending, [1]);
    assert_eq!(violation.core(), [2, 3]);
    assert!(violation.to_string().contains("pending at the cut"));
}

/// One key failing leaves the others passed: the violation names that key only.
#[test]
fn a_violation_names_its_key_only() {
    let violation = the_violation(vec![
        write(0, 0, 1, 1),
        on_key(write(0, 0, 1, 1), 2),
        on_key(read(1, 2, 3, Some(9)), 2),
        read(1, 4, 5, Some(1)),
    ]);
    assert_eq!(violation.key, 2);
    assert_eq!(violation.core(), [2]);
}

/// A search that reaches its memory bound says undecided: neither passed nor a violation.
#[test]
fn a_search_past_its_bound_is_undecided_not_a_violation() {
    let ops: Vec<Op> = (0..12)
        .map(|i| write(i, 0, 100, i64::from(i)))
        .chain([read(0, 101, 102, Some(0))])
        .collect();
    let tight = Limits {
        cache_bytes: 1_000,
        ..Limits::default()
    };
    let report = check(&History::new(ops.clone()), &tight).unwrap();
    println!("{report}");
    assert!(!report.passed());
    assert!(report.violations.is_empty());
    assert_eq!(report.undecided.len(), 1);
    assert_eq!(report.undecided[0].key, 1);
    assert!(report.to_string().contains("undecided"));
    assert_linearizable(ops);
}
