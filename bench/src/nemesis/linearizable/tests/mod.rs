//! The checker's tests: hand-written histories, linearizable and not (`planted`), and
//! histories of a simulated register with random concurrency and outcomes (`simulated`).

use crate::nemesis::history::{Answer, History, Op, OpKind, Outcome};

use super::{check, Limits, Linearizability, Violation};

mod planted;
mod simulated;

/// An answered operation of process `process` on key 1, invoked at `invoke` and answered at
/// `complete` (nanoseconds).
fn op(process: u32, invoke: u64, complete: u64, kind: OpKind, answer: Answer) -> Op {
    Op {
        process,
        key: 1,
        kind,
        invoke_ns: invoke,
        complete_ns: complete,
        outcome: Outcome::Ok(answer),
    }
}

fn write(process: u32, invoke: u64, complete: u64, value: i64) -> Op {
    op(
        process,
        invoke,
        complete,
        OpKind::Write { value },
        Answer::Written,
    )
}

fn read(process: u32, invoke: u64, complete: u64, value: Option<i64>) -> Op {
    op(
        process,
        invoke,
        complete,
        OpKind::Read,
        Answer::Read { value },
    )
}

fn cas(
    process: u32,
    invoke: u64,
    complete: u64,
    expected: Option<i64>,
    new: i64,
    applied: bool,
) -> Op {
    op(
        process,
        invoke,
        complete,
        OpKind::Cas { expected, new },
        Answer::Cas { applied },
    )
}

/// The same operation, its outcome unknown (the client gave up at its completion).
fn unknown(mut op: Op) -> Op {
    op.outcome = Outcome::Unknown {
        reason: "timeout".to_owned(),
    };
    op
}

/// The same operation, refused by the server.
fn failed(mut op: Op) -> Op {
    op.outcome = Outcome::Failed {
        reason: "unavailable".to_owned(),
    };
    op
}

/// The same operation on another key.
fn on_key(mut op: Op, key: i64) -> Op {
    op.key = key;
    op
}

fn checked(ops: Vec<Op>) -> Linearizability {
    check(&History::new(ops), &Limits::default()).unwrap()
}

/// Asserts the history linearizable, every key placed.
fn assert_linearizable(ops: Vec<Op>) -> Linearizability {
    let report = checked(ops);
    assert!(report.passed(), "{report}");
    assert!(report.violations.is_empty() && report.undecided.is_empty());
    report
}

/// Asserts the history has exactly one key not linearizable, prints its witness and returns
/// it.
fn the_violation(ops: Vec<Op>) -> Violation {
    let report = checked(ops);
    println!("{report}");
    assert!(!report.passed());
    assert!(report.undecided.is_empty(), "{report}");
    assert_eq!(report.violations.len(), 1, "{report}");
    report.violations[0].clone()
}
