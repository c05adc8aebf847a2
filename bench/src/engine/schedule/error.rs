//! Why a text is not a rate schedule ([`ScheduleError`]), naming the part that is wrong.

use crate::units::UnitError;

/// Why a text is not a rate schedule; each names the part that is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// Nothing given.
    #[error("the rate schedule is empty (give a rate such as 10k, or parts such as ramp:1k..10k/30s,hold:1m)")]
    Empty,
    /// An empty part (two commas, a trailing comma).
    #[error("`{text}` has an empty part (two commas in a row, or one at the end)")]
    EmptyPart {
        /// The whole schedule.
        text: String,
    },
    /// A part of no known kind.
    #[error(
        "`{part}` is not a part of a rate schedule: expected RATE[/DURATION], \
         step:RATE[/DURATION], ramp:FROM..TO/DURATION, hold:DURATION, \
         sine:MEAN,AMPLITUDE,PERIOD[/DURATION] or poisson[:SEED]"
    )]
    UnknownPart {
        /// The part.
        part: String,
    },
    /// A part whose form is wrong (a missing `..` or `/DURATION`, a sine's values).
    #[error("`{part}`: expected {expected}")]
    Form {
        /// The part.
        part: String,
        /// The form it should have.
        expected: &'static str,
    },
    /// Not a rate.
    #[error(
        "`{part}`: `{text}` is not a rate in requests per second such as 500, 2.5, 10k or 1.5M"
    )]
    Rate {
        /// The part.
        part: String,
        /// The text that should be a rate.
        text: String,
    },
    /// Not a duration.
    #[error("`{part}`: {source}")]
    Duration {
        /// The part.
        part: String,
        /// Why.
        source: UnitError,
    },
    /// A duration of zero.
    #[error("`{part}`: the duration must be longer than 0")]
    ZeroDuration {
        /// The part.
        part: String,
    },
    /// A part after one that lasts for ever.
    #[error("`{part}` comes after `{endless}`, which has no duration and so lasts for ever")]
    AfterEndless {
        /// The part.
        part: String,
        /// The part without a duration before it.
        endless: String,
    },
    /// `hold` first: no rate to hold.
    #[error("`{part}`: hold keeps the rate the previous part ended at, and there is none")]
    HoldFirst {
        /// The part.
        part: String,
    },
    /// A sine that would go below 0, or whose mean is 0.
    #[error("`{part}`: {reason}")]
    Sine {
        /// The part.
        part: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// `poisson` twice, or a bad seed.
    #[error("`{part}`: {reason}")]
    Poisson {
        /// The part.
        part: String,
        /// What is wrong.
        reason: &'static str,
    },
}
