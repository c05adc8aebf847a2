//! The rules as data: each rule's condition on a request and its reaction, delays and
//! broken frames included; what the TOML file is read into.

use std::time::Duration;

use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Opcode;
use doppio_proto::response::ErrorCode;
use doppio_proto::scylla_extensions::RateLimitError;

/// A delay distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delay {
    /// Always this long.
    Fixed(Duration),
    /// Uniform between the two.
    Uniform(Duration, Duration),
    /// Exponential with this mean.
    Exponential(Duration),
    /// A drift: `from` when the stub starts, growing linearly to `to` at `over` after it,
    /// then `to`.
    Ramp {
        /// The delay at the start.
        from: Duration,
        /// The delay from `over` on.
        to: Duration,
        /// How long the growth takes.
        over: Duration,
        /// By an equal factor per second (`growth = "geometric"`) rather than equal steps.
        geometric: bool,
    },
}

impl Delay {
    /// A delay drawn with `u`, uniform in [0, 1), `elapsed` after the stub started.
    pub fn sample(&self, u: f64, elapsed: Duration) -> Duration {
        match *self {
            Delay::Fixed(d) => d,
            Delay::Ramp {
                from,
                to,
                over,
                geometric,
            } => {
                let done = if over.is_zero() {
                    1.0
                } else {
                    (elapsed.as_secs_f64() / over.as_secs_f64()).min(1.0)
                };
                let (from_s, to_s) = (from.as_secs_f64(), to.as_secs_f64());
                let now = if geometric {
                    from_s * (to_s / from_s).powf(done)
                } else {
                    from_s + (to_s - from_s) * done
                };
                Duration::from_secs_f64(now.max(0.0))
            }
            Delay::Uniform(a, b) => a + (b.saturating_sub(a)).mul_f64(u),
            Delay::Exponential(mean) => mean.mul_f64(-(1.0 - u).max(f64::MIN_POSITIVE).ln()),
        }
    }
}

/// How a malformed frame is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// A version byte of no protocol.
    BadVersion,
    /// A body length beyond any limit (2 GiB - 1).
    OversizedLength,
    /// A header announcing more body than is sent, then the connection is closed.
    Truncated,
    /// The compression flag on a body that is not lz4.
    CorruptLz4,
    /// A well-formed frame whose RESULT body is not: a result kind no protocol defines.
    /// The frame layer accepts it; only decoding the message fails.
    BadBody,
}

/// What the stub does instead of (or before) answering.
#[derive(Debug, Clone, PartialEq)]
pub enum Reaction {
    /// Answer after a delay (the connection's other answers are not held up).
    Delay(Delay),
    /// Answer with an ERROR.
    Error {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
    },
    /// Stop answering and reading this connection for the duration, then go on.
    Stall(Duration),
    /// Close the connection at once.
    Drop,
    /// Send a broken frame instead of the answer.
    Malformed(Malformed),
    /// Answer on a stream id the client never used.
    WrongStream,
    /// ScyllaDB's rate-limit error (its protocol extension), when the connection turned the
    /// extension on; Config_error otherwise, as ScyllaDB falls back.
    RateLimit(RateLimitError),
}

/// When a rule applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Condition {
    /// The request's opcode.
    pub opcode: Option<Opcode>,
    /// A substring of the statement text.
    pub statement: Option<String>,
    /// The connection's number (1 = the first accepted).
    pub connection: Option<u64>,
    /// The node of a cluster stub the request reached (0 = the first; a single stub is 0).
    pub node: Option<u8>,
    /// Every Nth matching request.
    pub every: Option<u64>,
    /// Probability of applying to a matching request.
    pub probability: Option<f64>,
    /// Not before this long after the stub started.
    pub after: Option<Duration>,
    /// Not after this long after the stub started.
    pub until: Option<Duration>,
    /// The serial consistency the request carries (`Some(None)`: none).
    pub serial_consistency: Option<Option<Consistency>>,
}

/// One rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its name.
    pub name: String,
    /// When it applies.
    pub when: Condition,
    /// What it does.
    pub then: Reaction,
}

/// Rules and the seed of their randomness.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    /// The rules, in order.
    pub rules: Vec<Rule>,
    /// Seed of the random choices (probabilities, delays).
    pub seed: u64,
}
