use super::*;
use crate::nemesis::history::{Answer, Op};

fn write(key: i64, value: i64, outcome: Outcome) -> Op {
    Op {
        process: u32::try_from(value % 4).unwrap(),
        key,
        kind: OpKind::Write { value },
        invoke_ns: u64::try_from(value).unwrap() * 10,
        complete_ns: u64::try_from(value).unwrap() * 10 + 5,
        outcome,
    }
}

fn ok() -> Outcome {
    Outcome::Ok(Answer::Written)
}

fn unknown() -> Outcome {
    Outcome::Unknown {
        reason: "timeout".to_owned(),
    }
}

fn failed() -> Outcome {
    Outcome::Failed {
        reason: "unavailable".to_owned(),
    }
}

/// A planted lost write: three acknowledged writes, the read-back misses one of them; that
/// one, and only it, is reported lost, and the check fails.
#[test]
fn a_planted_lost_write_is_caught() {
    let history = History::new(vec![
        write(1, 1, ok()),
        write(1, 2, ok()),
        write(2, 3, ok()),
    ]);
    let mut read_back = ReadBack::new();
    read_back.record(1, [1]);
    read_back.record(2, [3]);
    let report = check(&history, &read_back).unwrap();
    println!("{report}");
    assert!(!report.passed());
    assert_eq!(report.acknowledged, 3);
    assert_eq!(
        report.lost,
        [WriteRef {
            index: 1,
            process: 2,
            key: 1,
            value: 2,
            complete_ns: 25
        }]
    );
    assert!(report
        .to_string()
        .contains("lost: op #1 (process 2) key 1 value 2"));

    read_back.record(1, [2]);
    let healed = check(&history, &read_back).unwrap();
    assert!(healed.passed(), "{healed}");
    assert!(healed.lost.is_empty());
}

/// Writes whose outcome is unknown are never lost, found or not: they are counted apart,
/// and a history of only those passes.
#[test]
fn unknown_writes_are_never_reported_lost() {
    let history = History::new(vec![
        write(1, 1, unknown()),
        write(1, 2, unknown()),
        write(2, 3, unknown()),
        write(2, 4, ok()),
    ]);
    let mut read_back = ReadBack::new();
    read_back.record(1, [2]);
    read_back.record(2, [4]);
    let report = check(&history, &read_back).unwrap();
    assert!(report.passed(), "{report}");
    assert!(report.lost.is_empty());
    assert_eq!(
        report.unknown,
        Tally {
            found: 1,
            not_found: 2
        }
    );
    assert_eq!(report.acknowledged, 1);
}

/// A write the server refused must be absent; one read back anyway is listed and fails the
/// check, and the absent ones are only counted.
#[test]
fn a_refused_write_read_back_fails_the_check() {
    let history = History::new(vec![write(1, 1, failed()), write(1, 2, failed())]);
    let mut read_back = ReadBack::new();
    read_back.record(1, [2]);
    let report = check(&history, &read_back).unwrap();
    assert!(!report.passed());
    assert_eq!(report.failed_absent, 1);
    assert_eq!(report.failed_but_present.len(), 1);
    assert_eq!(report.failed_but_present[0].index, 1);
    assert!(report.lost.is_empty());
}

/// A key the read-back did not read leaves its writes unverified, not lost; a key read and
/// empty loses them.
#[test]
fn an_unread_key_is_unverified_not_lost() {
    let history = History::new(vec![write(1, 1, ok()), write(2, 2, ok())]);
    let mut read_back = ReadBack::new();
    read_back.record(2, []);
    let report = check(&history, &read_back).unwrap();
    assert_eq!(report.unverified, 1);
    assert_eq!(report.lost.len(), 1);
    assert_eq!(report.lost[0].key, 2);
}

/// A value read back that no write wrote is listed and fails the check.
#[test]
fn a_value_from_nowhere_fails_the_check() {
    let history = History::new(vec![write(1, 1, ok())]);
    let mut read_back = ReadBack::new();
    read_back.record(1, [1, 99]);
    let report = check(&history, &read_back).unwrap();
    assert!(!report.passed());
    assert_eq!(report.unwritten, [Unwritten { key: 1, value: 99 }]);
    assert!(report.lost.is_empty());
}

/// Two writes of one value to one key cannot be told apart by a read-back: refused, naming
/// both.
#[test]
fn the_same_value_written_twice_is_refused() {
    let mut second = write(1, 5, unknown());
    second.invoke_ns = 100;
    second.complete_ns = 110;
    let history = History::new(vec![write(1, 5, ok()), write(2, 5, ok()), second]);
    assert_eq!(
        check(&history, &ReadBack::new()),
        Err(AckedWritesError::SameValueTwice {
            key: 1,
            value: 5,
            first: 0,
            second: 2
        })
    );
}
