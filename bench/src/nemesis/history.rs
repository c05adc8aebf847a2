//! A run's history: every operation the clients made, with when it was invoked, when its
//! answer came (or the client stopped waiting) and what the answer was. The checkers read
//! nothing else, so a history saved as JSON lines can be checked again later.
//!
//! Times are a monotonic clock's nanoseconds, one clock for every worker of the run: an
//! operation *precedes* another when it completed strictly before the other was invoked;
//! otherwise the two are concurrent.
//!
//! An outcome is one of three. *Ok*: the server answered, and the answer is kept (the value
//! a read returned, whether a compare-and-set applied). *Failed*: the server said the
//! operation did not happen (the coordinator refused it before sending it anywhere). *Unknown*:
//! no answer the client can trust (a timeout, a lost connection): the operation may have
//! taken effect, at any time after its invoke, or never.

use std::fmt;
use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

/// What an operation asked of its key's register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Set the value, whatever it was.
    Write {
        /// The value written.
        value: i64,
    },
    /// Compare-and-set (a lightweight transaction): set `new` if the value is `expected`
    /// (`None`: if the key holds no value, `IF NOT EXISTS`).
    Cas {
        /// The value the key must hold for the write to apply.
        expected: Option<i64>,
        /// The value written if it applies.
        new: i64,
    },
    /// Read the value (a `SERIAL` read in the register workload, `ALL` in the read-back).
    Read,
}

/// What the server answered to an operation that completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// A write was acknowledged.
    Written,
    /// A read returned this value (`None`: the key holds none).
    Read {
        /// The value read.
        value: Option<i64>,
    },
    /// A compare-and-set answered whether it applied.
    Cas {
        /// Whether the value was the expected one, and so was replaced.
        applied: bool,
    },
}

/// How an operation ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The server answered.
    Ok(Answer),
    /// The server said the operation did not happen; why, in the bench's words.
    Failed {
        /// The error's kind or message.
        reason: String,
    },
    /// The client does not know whether the operation happened; why.
    Unknown {
        /// The error's kind or message (a timeout, a closed connection).
        reason: String,
    },
}

/// One operation of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Op {
    /// The worker (client process or fiber) that made it.
    pub(crate) process: u32,
    /// The key it touched.
    pub(crate) key: i64,
    /// What it asked.
    pub(crate) kind: OpKind,
    /// When it was sent (monotonic nanoseconds).
    pub(crate) invoke_ns: u64,
    /// When its answer came, or when the client gave up on it (monotonic nanoseconds).
    pub(crate) complete_ns: u64,
    /// How it ended.
    pub(crate) outcome: Outcome,
}

impl Op {
    /// The operation and its outcome in a few words: `cas 1 -> 2: applied`.
    pub(crate) fn describe(&self) -> String {
        let asked = match self.kind {
            OpKind::Write { value } => format!("write {value}"),
            OpKind::Cas { expected, new } => format!("cas {} -> {new}", ValueText(expected)),
            OpKind::Read => "read".to_owned(),
        };
        let ended = match &self.outcome {
            Outcome::Ok(Answer::Written) => "ok".to_owned(),
            Outcome::Ok(Answer::Read { value }) => format!("ok, read {}", ValueText(*value)),
            Outcome::Ok(Answer::Cas { applied: true }) => "ok, applied".to_owned(),
            Outcome::Ok(Answer::Cas { applied: false }) => "ok, not applied".to_owned(),
            Outcome::Failed { reason } => format!("failed ({reason})"),
            Outcome::Unknown { reason } => format!("unknown ({reason})"),
        };
        format!("{asked}: {ended}")
    }
}

/// A register's value as text: the number, or `absent`.
pub(crate) struct ValueText(pub(crate) Option<i64>);

impl fmt::Display for ValueText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(value) => write!(f, "{value}"),
            None => f.write_str("absent"),
        }
    }
}

/// Why a history cannot be checked: it says something no run could have recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// An operation completed before it was invoked.
    #[error("op #{index} completed at {complete_ns} ns, before its invoke at {invoke_ns} ns")]
    CompletedBeforeInvoke {
        /// Its position in the history.
        index: usize,
        /// Its invoke time.
        invoke_ns: u64,
        /// Its completion time.
        complete_ns: u64,
    },
    /// An operation's answer is not one its kind gives (a read answered "applied").
    #[error("op #{index} ({kind:?}) has an answer of another kind: {answer:?}")]
    AnswerOfAnotherKind {
        /// Its position in the history.
        index: usize,
        /// What it asked.
        kind: OpKind,
        /// What it was answered.
        answer: Answer,
    },
}

/// Why a history file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryFileError {
    /// Reading or writing failed.
    #[error("history file: {0}")]
    Io(#[from] std::io::Error),
    /// A line is not an operation.
    #[error("history file, line {line}: {source}")]
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// An operation could not be written as JSON.
    #[error("history file: op #{index} not written: {source}")]
    Encode {
        /// Its position in the history.
        index: usize,
        /// What the JSON writer said.
        source: serde_json::Error,
    },
    /// The file's operations are not a history a run could record.
    #[error("history file: {0}")]
    Invalid(#[from] HistoryError),
}

/// The operations of a run, in the order they were recorded; an operation's position is its
/// name in what the checkers print (`op #12`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct History {
    /// The operations.
    pub(crate) ops: Vec<Op>,
}

impl History {
    /// A history of these operations.
    pub(crate) fn new(ops: Vec<Op>) -> Self {
        Self { ops }
    }

    /// Checks what a run could not have recorded: a completion before its invoke, an answer
    /// of another kind than the operation's.
    pub(crate) fn validate(&self) -> Result<(), HistoryError> {
        for (index, op) in self.ops.iter().enumerate() {
            if op.complete_ns < op.invoke_ns {
                return Err(HistoryError::CompletedBeforeInvoke {
                    index,
                    invoke_ns: op.invoke_ns,
                    complete_ns: op.complete_ns,
                });
            }
            if let Outcome::Ok(answer) = op.outcome {
                let fits = matches!(
                    (op.kind, answer),
                    (OpKind::Write { .. }, Answer::Written)
                        | (OpKind::Cas { .. }, Answer::Cas { .. })
                        | (OpKind::Read, Answer::Read { .. })
                );
                if !fits {
                    return Err(HistoryError::AnswerOfAnotherKind {
                        index,
                        kind: op.kind,
                        answer,
                    });
                }
            }
        }
        Ok(())
    }

    /// Writes the history as JSON lines, one operation a line.
    pub(crate) fn write_jsonl(&self, mut out: impl Write) -> Result<(), HistoryFileError> {
        for (index, op) in self.ops.iter().enumerate() {
            serde_json::to_writer(&mut out, op)
                .map_err(|source| HistoryFileError::Encode { index, source })?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    }

    /// Reads a history written by [`History::write_jsonl`] (blank lines skipped) and
    /// validates it.
    pub(crate) fn read_jsonl(input: impl BufRead) -> Result<Self, HistoryFileError> {
        let mut ops = Vec::new();
        for (number, line) in input.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let op = serde_json::from_str(&line).map_err(|source| HistoryFileError::Line {
                line: number + 1,
                source,
            })?;
            ops.push(op);
        }
        let history = Self { ops };
        history.validate()?;
        Ok(history)
    }
}

#[cfg(test)]
mod tests;
