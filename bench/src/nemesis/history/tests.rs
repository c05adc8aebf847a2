use super::*;

fn op(kind: OpKind, invoke_ns: u64, complete_ns: u64, outcome: Outcome) -> Op {
    Op {
        process: 1,
        key: 7,
        kind,
        invoke_ns,
        complete_ns,
        outcome,
    }
}

fn sample() -> History {
    History::new(vec![
        op(
            OpKind::Write { value: 3 },
            10,
            20,
            Outcome::Ok(Answer::Written),
        ),
        op(
            OpKind::Cas {
                expected: None,
                new: 4,
            },
            15,
            40,
            Outcome::Unknown {
                reason: "timeout".to_owned(),
            },
        ),
        op(
            OpKind::Read,
            50,
            60,
            Outcome::Ok(Answer::Read { value: None }),
        ),
        op(
            OpKind::Cas {
                expected: Some(3),
                new: 5,
            },
            61,
            70,
            Outcome::Ok(Answer::Cas { applied: false }),
        ),
        op(
            OpKind::Write { value: 9 },
            71,
            72,
            Outcome::Failed {
                reason: "unavailable".to_owned(),
            },
        ),
    ])
}

/// A history written as JSON lines reads back the same, every kind and outcome included;
/// each line is one operation, in the format the manual shows.
#[test]
fn a_history_survives_json_lines() {
    let history = sample();
    let mut bytes = Vec::new();
    history.write_jsonl(&mut bytes).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert_eq!(text.lines().count(), history.ops.len());
    assert!(text.lines().all(|line| line.starts_with('{')), "{text}");
    // The format bench/NEMESIS.md shows.
    assert_eq!(
        text.lines().nth(1).unwrap(),
        r#"{"process":1,"key":7,"kind":{"cas":{"expected":null,"new":4}},"invoke_ns":15,"complete_ns":40,"outcome":{"unknown":{"reason":"timeout"}}}"#
    );
    assert_eq!(
        text.lines().nth(3).unwrap(),
        r#"{"process":1,"key":7,"kind":{"cas":{"expected":3,"new":5}},"invoke_ns":61,"complete_ns":70,"outcome":{"ok":{"cas":{"applied":false}}}}"#
    );
    let back = History::read_jsonl(bytes.as_slice()).unwrap();
    assert_eq!(back, history);
}

/// A line that is not an operation is named by its number; blank lines do not count as
/// operations but do count as lines.
#[test]
fn a_bad_line_is_named_by_its_number() {
    let mut bytes = Vec::new();
    sample().write_jsonl(&mut bytes).unwrap();
    bytes.extend_from_slice(b"\n{\"process\": 1}\n");
    let error = History::read_jsonl(bytes.as_slice()).unwrap_err();
    match error {
        HistoryFileError::Line { line, .. } => assert_eq!(line, 7),
        other => panic!("expected a line error, got {other}"),
    }
}

/// What no run records is refused: a completion before the invoke, and an answer of another
/// kind than the operation (a read answered "applied").
#[test]
fn impossible_histories_are_refused() {
    let backwards = History::new(vec![op(
        OpKind::Read,
        20,
        10,
        Outcome::Ok(Answer::Read { value: None }),
    )]);
    assert_eq!(
        backwards.validate(),
        Err(HistoryError::CompletedBeforeInvoke {
            index: 0,
            invoke_ns: 20,
            complete_ns: 10
        })
    );
    let mismatched = History::new(vec![
        op(
            OpKind::Write { value: 1 },
            0,
            1,
            Outcome::Ok(Answer::Written),
        ),
        op(
            OpKind::Read,
            2,
            3,
            Outcome::Ok(Answer::Cas { applied: true }),
        ),
    ]);
    assert!(matches!(
        mismatched.validate(),
        Err(HistoryError::AnswerOfAnotherKind { index: 1, .. })
    ));
    let mut bytes = Vec::new();
    mismatched.write_jsonl(&mut bytes).unwrap();
    assert!(matches!(
        History::read_jsonl(bytes.as_slice()),
        Err(HistoryFileError::Invalid(_))
    ));
    assert_eq!(sample().validate(), Ok(()));
}

/// The few words an operation is printed as say what it asked and how it ended.
#[test]
fn an_operation_describes_itself() {
    let described: Vec<String> = sample().ops.iter().map(Op::describe).collect();
    assert_eq!(
        described,
        [
            "write 3: ok",
            "cas absent -> 4: unknown (timeout)",
            "read: ok, read absent",
            "cas 3 -> 5: ok, not applied",
            "write 9: failed (unavailable)",
        ]
    );
}
