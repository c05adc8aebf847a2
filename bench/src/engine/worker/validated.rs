//! A validated statement's answer: its rows as the statement's check judges them.

use crate::engine::request::{Answer, RequestError};

/// `result` with its rows as `finish` judges them (a validated statement's check), the
/// answer's other fields kept; a failure stays one, or becomes an answer of `finish`'s rows.
pub(super) fn validated(
    result: Result<Answer, RequestError>,
    finish: impl FnOnce(Result<u64, RequestError>) -> Result<u64, RequestError>,
) -> Result<Answer, RequestError> {
    match result {
        Ok(Answer {
            rows,
            not_applied,
            stages,
        }) => finish(Ok(rows)).map(|rows| Answer {
            rows,
            not_applied,
            stages,
        }),
        Err(e) => finish(Err(e)).map(Answer::rows),
    }
}
