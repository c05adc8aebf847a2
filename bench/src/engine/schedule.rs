//! Rate schedules (`-r`): when each iteration of a rate-limited phase is due.
//!
//! A schedule is a list of parts, separated by commas, run one after the other from the
//! phase's start; each rate is requests per second over all workers (a count such as `500`,
//! `2.5`, `10k`, `1.5M`), each duration a duration with its unit (`500ms`, `30s`, `2m`):
//!
//! - `RATE` or `RATE/DURATION` (also `step:RATE[/DURATION]`): a constant rate;
//! - `ramp:FROM..TO/DURATION`: linearly from `FROM` to `TO`;
//! - `hold:DURATION`: the rate the previous part ended at;
//! - `sine:MEAN,AMPLITUDE,PERIOD[/DURATION]`: `MEAN + AMPLITUDE * sin(2 pi t / PERIOD)`, `t`
//!   from the part's start (the amplitude at most the mean: a rate is never below 0);
//! - `poisson` or `poisson:SEED` (an option, anywhere in the list, at most once): arrivals
//!   at exponential gaps around the scheduled rate, drawn from a seeded generator (seed 1
//!   unless given), so that a run is reproducible.
//!
//! Only the last part may go without a duration (it lasts for ever). After a last part with
//! a duration, the rate it ended at holds; the phase's own limit (`-d`) still ends the run.
//! Each phase (warmup, each measured segment) starts the schedule anew.
//!
//! The maths: with `L(t)` the integral of the rate from 0 to `t` (all workers), request `n`
//! of a worker (of `W`) is due at the first `t` where `L(t) / W` reaches `n`. Ramps and
//! steps invert in closed form (a quadratic), a sine by a bracketed Newton iteration from the
//! previous due time (a few steps, bounded). A part at rate 0 is skipped over: the next
//! request is due where the rate becomes positive again, or never (the worker stops asking).
//!
//! Each fiber keeps its own [`Pacer`] (a few numbers, nothing allocated) and steps it from
//! one of its iterations to its next: with `C` fibers on the worker, `C` requests further.
//! With Poisson arrivals each fiber draws its own exponential gaps (mean `C` requests), from
//! a generator seeded by the schedule's seed, the worker and the fiber: the fibers' arrivals
//! together are a Poisson process at the worker's share of the rate (a sum of independent
//! Poisson processes is one).

use std::f64::consts::TAU;
use std::fmt;

use crate::units::{self, UnitError};

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

/// The shape of a part, in the part's own time (`tau`, seconds from its start).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// From `from` to `to` req/s linearly over the part's length (constant when equal).
    Linear { from: f64, to: f64 },
    /// `mean + amplitude * sin(TAU * tau / period)`.
    Sine {
        mean: f64,
        amplitude: f64,
        period: f64,
    },
}

/// One part: its shape from `start` for `length` seconds (infinite for the last part).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Part {
    /// Seconds from the phase's start.
    start: f64,
    /// Seconds (`f64::INFINITY`: for ever).
    length: f64,
    shape: Shape,
    /// Requests due before the part: the integral of the rate up to `start`.
    before: f64,
    /// Requests due within the part (infinite for an endless part of positive rate).
    count: f64,
}

impl Part {
    fn rate(&self, tau: f64) -> f64 {
        match self.shape {
            Shape::Linear { from, to } => {
                if self.length.is_finite() {
                    from + (to - from) * tau / self.length
                } else {
                    from
                }
            }
            Shape::Sine {
                mean,
                amplitude,
                period,
            } => mean + amplitude * (TAU * tau / period).sin(),
        }
    }

    /// The integral of the rate from the part's start to `tau` (within the part).
    fn integral(&self, tau: f64) -> f64 {
        match self.shape {
            Shape::Linear { from, to } => {
                if self.length.is_finite() {
                    from * tau + (to - from) * tau * tau / (2.0 * self.length)
                } else {
                    from * tau
                }
            }
            Shape::Sine {
                mean,
                amplitude,
                period,
            } => mean * tau + amplitude * period / TAU * (1.0 - (TAU * tau / period).cos()),
        }
    }

    /// The `tau` at which the integral reaches `m` (0 < m <= count), knowing it is at least
    /// `hint` (the previous due time's, whose integral is at most `m`).
    fn invert(&self, m: f64, hint: f64) -> f64 {
        if m <= 0.0 {
            return 0.0;
        }
        let tau = match self.shape {
            Shape::Linear { from, to } => {
                // from * tau + s tau^2 / 2 = m, s = (to - from) / length: the root
                // 2m / (from + sqrt(from^2 + 2 s m)), which holds for s of either sign or 0
                // and for from = 0, and loses no precision when s is small.
                let slope = if self.length.is_finite() {
                    (to - from) / self.length
                } else {
                    0.0
                };
                let root = (from * from + 2.0 * slope * m).max(0.0).sqrt();
                let den = from + root;
                if den > 0.0 {
                    2.0 * m / den
                } else {
                    self.length
                }
            }
            Shape::Sine { mean, period, .. } => self.invert_sine(m, hint, mean, period),
        };
        tau.clamp(0.0, self.length)
    }

    /// Newton's method kept inside a bracket (a bisection step when Newton would leave
    /// it), from the previous due time: the integral is nondecreasing, and over any
    /// `x + period` seconds it grows by at least `mean * x`.
    fn invert_sine(&self, m: f64, hint: f64, mean: f64, period: f64) -> f64 {
        let mut lo = hint.max(0.0);
        let below = m - self.integral(lo);
        if below <= 0.0 {
            return lo;
        }
        let mut hi = (lo + below / mean + period).min(self.length);
        let tolerance = 1e-9 * m.max(1.0);
        let mut x = (lo + below / mean).min(hi);
        for _ in 0..64 {
            let f = self.integral(x) - m;
            if f.abs() <= tolerance || hi - lo <= 1e-10 {
                break;
            }
            if f < 0.0 {
                lo = x;
            } else {
                hi = x;
            }
            let rate = self.rate(x);
            let newton = x - f / rate;
            x = if rate > 0.0 && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
        }
        x
    }
}

/// A rate schedule: parts one after the other, and how arrivals are spread around it.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSchedule {
    /// At least one; the last lasts for ever.
    parts: Vec<Part>,
    /// `Some(seed)`: Poisson arrivals.
    poisson: Option<u64>,
    /// The schedule as given (trimmed), for reports.
    text: String,
}

/// The seed of `poisson` without one.
const DEFAULT_SEED: u64 = 1;

/// A part being read, before the times are laid out.
struct Parsed {
    shape: Shape,
    length: Option<f64>,
    /// Its text, for errors.
    text: String,
}

impl RateSchedule {
    /// A constant rate, requests per second (negative or not finite: 0).
    pub fn steady(rate: f64) -> Self {
        let rate = if rate.is_finite() { rate.max(0.0) } else { 0.0 };
        Self::lay_out(
            vec![Parsed {
                shape: Shape::Linear {
                    from: rate,
                    to: rate,
                },
                length: None,
                text: String::new(),
            }],
            None,
            format!("{rate}"),
        )
    }

    /// Reads a schedule (the grammar is in the module's documentation).
    pub fn parse(text: &str) -> Result<Self, ScheduleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ScheduleError::Empty);
        }
        let mut tokens = text.split(',').map(str::trim);
        let mut parts: Vec<Parsed> = Vec::new();
        let mut poisson: Option<u64> = None;
        while let Some(token) = tokens.next() {
            if token.is_empty() {
                return Err(ScheduleError::EmptyPart {
                    text: text.to_owned(),
                });
            }
            if token.contains(';') {
                return Err(ScheduleError::Form {
                    part: token.to_owned(),
                    expected: "parts separated by commas, such as 10k,poisson (not 10k;poisson)",
                });
            }
            let (kind, body) = token.split_once(':').unwrap_or(("", token));
            let kind = kind.trim();
            let body = body.trim();
            if kind == "poisson" || token == "poisson" {
                if poisson.is_some() {
                    return Err(ScheduleError::Poisson {
                        part: token.to_owned(),
                        reason: "poisson is given twice",
                    });
                }
                poisson = Some(if token == "poisson" {
                    DEFAULT_SEED
                } else {
                    body.replace('_', "")
                        .parse::<u64>()
                        .map_err(|_| ScheduleError::Poisson {
                            part: token.to_owned(),
                            reason: "the seed must be a whole number from 0 to 2^64 - 1",
                        })?
                });
                continue;
            }
            if let Some(endless) = parts.last().filter(|p| p.length.is_none()) {
                return Err(ScheduleError::AfterEndless {
                    part: token.to_owned(),
                    endless: endless.text.clone(),
                });
            }
            let part = match kind {
                "" | "step" => {
                    let (rate, length) = split_length(token, body)?;
                    let rate = parse_rate(token, rate)?;
                    Parsed {
                        shape: Shape::Linear {
                            from: rate,
                            to: rate,
                        },
                        length,
                        text: token.to_owned(),
                    }
                }
                "ramp" => {
                    const FORM: &str = "ramp:FROM..TO/DURATION, such as ramp:1k..50k/60s";
                    let (rates, length) = split_length(token, body)?;
                    let length = length.ok_or(ScheduleError::Form {
                        part: token.to_owned(),
                        expected: FORM,
                    })?;
                    let (from, to) = rates.split_once("..").ok_or(ScheduleError::Form {
                        part: token.to_owned(),
                        expected: FORM,
                    })?;
                    Parsed {
                        shape: Shape::Linear {
                            from: parse_rate(token, from)?,
                            to: parse_rate(token, to)?,
                        },
                        length: Some(length),
                        text: token.to_owned(),
                    }
                }
                "hold" => {
                    let rate = match parts.last() {
                        Some(p) => end_rate(p),
                        None => {
                            return Err(ScheduleError::HoldFirst {
                                part: token.to_owned(),
                            })
                        }
                    };
                    Parsed {
                        shape: Shape::Linear {
                            from: rate,
                            to: rate,
                        },
                        length: Some(parse_length(token, body)?),
                        text: token.to_owned(),
                    }
                }
                "sine" => {
                    // The sine's three values take this token and the next two.
                    let (amplitude, period) = (tokens.next(), tokens.next());
                    let whole = [Some(token), amplitude, period]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(",");
                    let (Some(amplitude), Some(period)) = (amplitude, period) else {
                        return Err(ScheduleError::Form {
                            part: whole,
                            expected:
                                "sine:MEAN,AMPLITUDE,PERIOD[/DURATION], such as sine:20k,10k,60s",
                        });
                    };
                    let (period, length) = split_length(&whole, period)?;
                    let mean = parse_rate(&whole, body)?;
                    let amplitude = parse_rate(&whole, amplitude)?;
                    let period = parse_length(&whole, period)?;
                    if mean <= 0.0 {
                        return Err(ScheduleError::Sine {
                            part: whole,
                            reason: "the mean rate must be above 0",
                        });
                    }
                    if amplitude > mean {
                        return Err(ScheduleError::Sine {
                            part: whole,
                            reason:
                                "the amplitude is larger than the mean: the rate would go below 0",
                        });
                    }
                    Parsed {
                        shape: Shape::Sine {
                            mean,
                            amplitude,
                            period,
                        },
                        length,
                        text: whole,
                    }
                }
                _ => {
                    return Err(ScheduleError::UnknownPart {
                        part: token.to_owned(),
                    })
                }
            };
            parts.push(part);
        }
        if parts.is_empty() {
            return Err(ScheduleError::Form {
                part: text.to_owned(),
                expected: "a rate or parts besides poisson, such as 10k,poisson",
            });
        }
        Ok(Self::lay_out(parts, poisson, text.to_owned()))
    }

    /// Places the parts one after the other, the last one for ever (a final part with a
    /// duration is followed by its end rate, held).
    fn lay_out(mut parsed: Vec<Parsed>, poisson: Option<u64>, text: String) -> Self {
        if let Some(last) = parsed.last().filter(|p| p.length.is_some()) {
            let rate = end_rate(last);
            parsed.push(Parsed {
                shape: Shape::Linear {
                    from: rate,
                    to: rate,
                },
                length: None,
                text: String::new(),
            });
        }
        let mut parts = Vec::with_capacity(parsed.len());
        let (mut start, mut before) = (0.0, 0.0);
        for p in parsed {
            let mut part = Part {
                start,
                length: p.length.unwrap_or(f64::INFINITY),
                shape: p.shape,
                before,
                count: 0.0,
            };
            part.count = if part.length.is_finite() {
                part.integral(part.length)
            } else if part.rate(0.0) > 0.0 || matches!(part.shape, Shape::Sine { .. }) {
                f64::INFINITY
            } else {
                0.0
            };
            start += part.length;
            before += part.count;
            parts.push(part);
        }
        Self {
            parts,
            poisson,
            text,
        }
    }

    /// The schedule as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The rate, when it is one constant rate (Poisson arrivals or not).
    pub fn constant(&self) -> Option<f64> {
        match self.parts.as_slice() {
            [p] => match p.shape {
                Shape::Linear { from, .. } => Some(from),
                Shape::Sine { .. } => None,
            },
            _ => None,
        }
    }

    /// The seed of Poisson arrivals, if arrivals are Poisson.
    pub fn poisson_seed(&self) -> Option<u64> {
        self.poisson
    }

    /// The part that holds time `t` (seconds from the start).
    fn part_at(&self, t: f64) -> Option<&Part> {
        self.parts
            .iter()
            .rev()
            .find(|p| p.start <= t)
            .or(self.parts.first())
    }

    /// The scheduled rate at `t` seconds from the start, requests per second.
    pub fn rate_at(&self, t: f64) -> f64 {
        self.part_at(t)
            .map_or(0.0, |p| p.rate((t - p.start).clamp(0.0, p.length)))
    }

    /// Requests due from the start to `t` seconds (the integral of the rate).
    pub fn count_until(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        self.part_at(t).map_or(0.0, |p| {
            p.before + p.integral((t - p.start).clamp(0.0, p.length))
        })
    }

    /// The mean scheduled rate from `t0` to `t1` seconds, requests per second (the rate at
    /// `t0` when they are equal).
    pub fn mean_rate(&self, t0: f64, t1: f64) -> f64 {
        if t1 > t0 {
            (self.count_until(t1) - self.count_until(t0)) / (t1 - t0)
        } else {
            self.rate_at(t0)
        }
    }

    /// The pacer of fiber `fiber` of `fibers` on worker `worker` of `workers`.
    pub fn pacer(&self, worker: usize, workers: usize, fiber: usize, fibers: usize) -> Pacer<'_> {
        let workers = workers.max(1) as f64;
        let fibers = fibers.max(1) as f64;
        let step = fibers * workers;
        let mut rng = self.poisson.map(|seed| {
            let mut r = SplitMix64(seed);
            // Distinct streams per worker and fiber, mixed through the generator.
            r.0 ^= SplitMix64(((worker as u64) << 32) | fiber as u64).next();
            r
        });
        let pending = match rng.as_mut() {
            Some(r) => step * r.exponential(),
            // Uniform: the worker's ordinal `fiber` is the first of this fiber.
            None => fiber as f64 * workers,
        };
        Pacer {
            parts: &self.parts,
            part: 0,
            tau: 0.0,
            done: 0.0,
            pending,
            step,
            rng,
        }
    }
}

impl fmt::Display for RateSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for RateSchedule {
    type Err = ScheduleError;

    fn from_str(text: &str) -> Result<Self, ScheduleError> {
        Self::parse(text)
    }
}

/// The rate a parsed part ends at.
fn end_rate(p: &Parsed) -> f64 {
    match p.shape {
        Shape::Linear { to, .. } => to,
        Shape::Sine {
            mean,
            amplitude,
            period,
        } => {
            let length = p.length.unwrap_or(0.0);
            (mean + amplitude * (TAU * length / period).sin()).max(0.0)
        }
    }
}

/// `VALUE/DURATION` into the value and the duration's seconds, if any.
fn split_length<'a>(part: &str, body: &'a str) -> Result<(&'a str, Option<f64>), ScheduleError> {
    match body.split_once('/') {
        Some((value, length)) => Ok((value, Some(parse_length(part, length)?))),
        None => Ok((body, None)),
    }
}

/// A positive duration, seconds.
fn parse_length(part: &str, text: &str) -> Result<f64, ScheduleError> {
    let d = units::duration(text).map_err(|source| ScheduleError::Duration {
        part: part.to_owned(),
        source,
    })?;
    if d.is_zero() {
        return Err(ScheduleError::ZeroDuration {
            part: part.to_owned(),
        });
    }
    Ok(d.as_secs_f64())
}

/// A rate: a non-negative number (`2.5`) or a count (`10k`, `1.5M`).
fn parse_rate(part: &str, text: &str) -> Result<f64, ScheduleError> {
    let text = text.trim();
    let bad = || ScheduleError::Rate {
        part: part.to_owned(),
        text: text.to_owned(),
    };
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        Ok(_) => Err(bad()),
        Err(_) => units::count(text).map(|n| n as f64).map_err(|_| bad()),
    }
}

/// One fiber's position in the schedule: steps from one of its due times to its next with
/// a few floating-point operations (a square root for a ramp, a few sines for a sine wave),
/// nothing allocated.
#[derive(Debug, Clone)]
pub struct Pacer<'a> {
    parts: &'a [Part],
    /// The part of the last due time.
    part: usize,
    /// The last due time within the part, seconds from its start.
    tau: f64,
    /// Requests (all workers) due in the part up to `tau`.
    done: f64,
    /// Requests (all workers) to the next due time.
    pending: f64,
    /// Requests (all workers) between two due times of the fiber, on average.
    step: f64,
    /// Poisson arrivals' generator.
    rng: Option<SplitMix64>,
}

impl Pacer<'_> {
    /// The next due time, seconds from the phase's start; `None` when the rate stays 0
    /// from here on (nothing more is ever due).
    pub fn next_due(&mut self) -> Option<f64> {
        let mut need = self.pending;
        self.pending = match self.rng.as_mut() {
            Some(r) => self.step * r.exponential(),
            None => self.step,
        };
        loop {
            let part = self.parts.get(self.part)?;
            let left = part.count - self.done;
            // A part with nothing left (one at rate 0) is skipped rather than ended in.
            if need < left || (need <= left && left > 0.0) {
                self.done += need;
                self.tau = part.invert(self.done, self.tau);
                return Some(part.start + self.tau);
            }
            need -= left.max(0.0);
            self.part += 1;
            self.done = 0.0;
            self.tau = 0.0;
        }
    }
}

/// A small seeded generator (Steele, Lea and Flood's SplitMix64): enough for arrival gaps,
/// and the same sequence for the same seed everywhere.
#[derive(Debug, Clone, Copy)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An exponential variate of mean 1.
    fn exponential(&mut self) -> f64 {
        // Uniform in [0, 1) from the top 53 bits; 1 - u is in (0, 1], so its log is finite.
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> RateSchedule {
        RateSchedule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// The first `n` due times of one fiber alone on one worker.
    fn due_times(s: &RateSchedule, n: usize) -> Vec<f64> {
        let mut p = s.pacer(0, 1, 0, 1);
        (0..n).map_while(|_| p.next_due()).collect()
    }

    #[test]
    fn a_number_is_a_constant_rate() {
        for (text, rate) in [
            ("5000", 5000.0),
            ("2.5", 2.5),
            ("10k", 10_000.0),
            ("1.5M", 1.5e6),
        ] {
            let s = parse(text);
            assert_eq!(s.constant(), Some(rate), "{text}");
            assert_eq!(s.text(), text);
            assert_eq!(s.poisson_seed(), None);
        }
        let due = due_times(&parse("100"), 5);
        assert_eq!(due, vec![0.0, 0.01, 0.02, 0.03, 0.04]);
    }

    #[test]
    fn parts_follow_each_other_and_the_last_rate_holds() {
        let s = parse("ramp:1k..50k/60s, hold:30s,step:60k/30s");
        assert_eq!(s.constant(), None);
        assert_eq!(s.rate_at(0.0), 1000.0);
        assert!((s.rate_at(30.0) - 25_500.0).abs() < 1e-6);
        assert_eq!(s.rate_at(75.0), 50_000.0);
        assert_eq!(s.rate_at(100.0), 60_000.0);
        assert_eq!(s.rate_at(1000.0), 60_000.0, "the last rate holds");
        // The ramp's integral is its mean rate times its length.
        let ramp = 25_500.0 * 60.0;
        assert!((s.count_until(60.0) - ramp).abs() < 1e-6);
        assert!((s.count_until(90.0) - ramp - 50_000.0 * 30.0).abs() < 1e-6);
        assert!((s.mean_rate(60.0, 90.0) - 50_000.0).abs() < 1e-6);
        assert!((s.mean_rate(120.0, 130.0) - 60_000.0).abs() < 1e-6);
        // A step with a duration as the last part: its rate holds after it.
        let s = parse("step:5k/10s");
        assert_eq!(s.rate_at(20.0), 5000.0);
        let s = parse("2k/1s,poisson:42");
        assert_eq!(s.poisson_seed(), Some(42));
        assert_eq!(parse("poisson,10").poisson_seed(), Some(DEFAULT_SEED));
        let s = parse("sine:20k,10k,60s/2m,step:1k");
        assert!((s.rate_at(15.0) - 30_000.0).abs() < 1e-6);
        assert_eq!(s.rate_at(200.0), 1000.0);
    }

    #[test]
    fn bad_schedules_name_the_bad_part() {
        use ScheduleError as E;
        let err = |t: &str| RateSchedule::parse(t).unwrap_err();
        assert_eq!(err(" "), E::Empty);
        assert_eq!(
            err("1k,,2k"),
            E::EmptyPart {
                text: "1k,,2k".into()
            }
        );
        assert!(matches!(err("1k,"), E::EmptyPart { .. }));
        assert_eq!(
            err("ramp:1k..5k/10s,wobble:3"),
            E::UnknownPart {
                part: "wobble:3".into()
            }
        );
        assert!(matches!(err("ramp:1k/10s"), E::Form { part, .. } if part == "ramp:1k/10s"));
        assert!(matches!(err("ramp:1k..5k"), E::Form { part, .. } if part == "ramp:1k..5k"));
        assert_eq!(
            err("ramp:1k..lots/10s"),
            E::Rate {
                part: "ramp:1k..lots/10s".into(),
                text: "lots".into()
            }
        );
        for bad in ["-5", "NaN", "inf", "1m", "5req"] {
            assert!(matches!(err(bad), E::Rate { .. }), "{bad}: {:?}", err(bad));
        }
        assert!(
            matches!(err("ramp:1k..2k/10 parsecs"), E::Duration { part, .. } if part == "ramp:1k..2k/10 parsecs")
        );
        assert!(
            matches!(err("step:1k/10"), E::Duration { .. }),
            "a unit is needed"
        );
        assert_eq!(
            err("step:1k/0s"),
            E::ZeroDuration {
                part: "step:1k/0s".into()
            }
        );
        assert_eq!(
            err("5k,ramp:1k..2k/1s"),
            E::AfterEndless {
                part: "ramp:1k..2k/1s".into(),
                endless: "5k".into()
            }
        );
        assert_eq!(
            err("hold:10s"),
            E::HoldFirst {
                part: "hold:10s".into()
            }
        );
        assert!(matches!(err("sine:20k,10k"), E::Form { part, .. } if part == "sine:20k,10k"));
        assert!(
            matches!(err("sine:10k,20k,60s"), E::Sine { part, .. } if part == "sine:10k,20k,60s")
        );
        assert!(matches!(err("sine:0,0,60s"), E::Sine { .. }));
        assert!(matches!(err("sine:20k,10k,0s"), E::ZeroDuration { .. }));
        assert!(
            matches!(err("1k,poisson,poisson:3"), E::Poisson { part, .. } if part == "poisson:3")
        );
        assert!(matches!(err("1k,poisson:x"), E::Poisson { part, .. } if part == "poisson:x"));
        assert!(matches!(err("poisson"), E::Form { .. }));
        assert!(matches!(err("10k;poisson"), E::Form { part, .. } if part == "10k;poisson"));
        // The messages name the part.
        let m = err("ramp:1k..2k/10s,hold:5x").to_string();
        assert!(m.starts_with("`hold:5x`: `5x` is not a duration"), "{m}");
    }

    #[test]
    fn a_ramps_nth_due_time_is_the_quadratics_root() {
        // 1k to 5k req/s over 10 s: L(t) = 1000 t + 200 t^2.
        let s = parse("ramp:1k..5k/10s");
        let due = due_times(&s, 30_001);
        for (n, &t) in due.iter().enumerate().step_by(997) {
            let n = n as f64;
            let want = (-1000.0 + (1e6 + 800.0 * n).sqrt()) / 400.0;
            assert!((t - want).abs() < 1e-9, "request {n}: {t} against {want}");
        }
        // After the ramp (30,000 requests) the last rate holds: 5k/s.
        assert!((due[30_000] - 10.0).abs() < 1e-9);
        let mut p = s.pacer(0, 1, 0, 1);
        let later: Vec<f64> = (0..30_011).filter_map(|_| p.next_due()).collect();
        assert!((later[30_010] - 10.002).abs() < 1e-9);
        // Random access agrees: request n of a fiber alone is due at L^-1(n).
        assert!((s.count_until(due[12_345]) - 12_345.0).abs() < 1e-6);
    }

    #[test]
    fn fibers_and_workers_share_the_schedule_between_them() {
        // 3 workers of 4 fibers each at 1200 req/s: each fiber every 10 ms; fiber f of a
        // worker starts at its ordinal f, 2.5 ms apart (the worker's own rate is 400/s).
        let s = parse("1200");
        let mut p = s.pacer(1, 3, 2, 4);
        let due: Vec<f64> = (0..3).filter_map(|_| p.next_due()).collect();
        for (k, want) in [0.005, 0.015, 0.025].into_iter().enumerate() {
            assert!((due[k] - want).abs() < 1e-12, "{due:?}");
        }
        // Over a ramp, all fibers of all workers together follow it.
        let s = parse("ramp:2k..8k/4s");
        let mut all = Vec::new();
        for w in 0..2 {
            for f in 0..3 {
                let mut p = s.pacer(w, 2, f, 3);
                all.extend(std::iter::from_fn(|| p.next_due()).take_while(|&t| t < 4.0));
            }
        }
        assert!(
            ((all.len() as f64) - s.count_until(4.0)).abs() < 8.0,
            "{}",
            all.len()
        );
    }

    /// Due times per whole second against the schedule's integral over it, within 1 %.
    fn assert_counts_follow(s: &RateSchedule, seconds: usize, fibers: usize) {
        let mut per_second = vec![0u64; seconds];
        for f in 0..fibers {
            let mut p = s.pacer(0, 1, f, fibers);
            while let Some(t) = p.next_due() {
                let Some(bin) = per_second.get_mut(t as usize) else {
                    break;
                };
                *bin += 1;
            }
        }
        for (k, &got) in per_second.iter().enumerate() {
            let want = s.count_until(k as f64 + 1.0) - s.count_until(k as f64);
            assert!(
                (got as f64 - want).abs() <= 0.01 * want + 1.0,
                "{s}: second {k}: {got} due, {want:.1} scheduled"
            );
        }
    }

    #[test]
    fn due_times_per_second_follow_the_integral_of_ramps_steps_and_sines() {
        assert_counts_follow(
            &parse("ramp:1k..20k/5s,hold:2s,step:3k/2s,ramp:3k..0/2s"),
            14,
            1,
        );
        assert_counts_follow(&parse("ramp:500..8k/6s,step:2k"), 10, 7);
        assert_counts_follow(&parse("sine:10k,5k,4s"), 12, 1);
        assert_counts_follow(&parse("sine:10k,10k,3s/9s,step:2k"), 12, 5);
    }

    #[test]
    fn a_rate_of_zero_is_skipped_over_or_ends_the_schedule() {
        // 0 for 2 s, then 100/s: the first request is due at 2 s, not at 0.
        let due = due_times(&parse("step:0/2s,100/1s,0/3s,step:10"), 104);
        assert!((due[0] - 2.0).abs() < 1e-12, "{:?}", &due[..3]);
        assert!((due[99] - 2.99).abs() < 1e-9);
        // Request 100 is where the integral reaches 100: the end of the 100/s part; the
        // next where the rate is positive again.
        assert!((due[100] - 3.0).abs() < 1e-9, "{:?}", &due[98..]);
        assert!((due[101] - 6.1).abs() < 1e-9, "{:?}", &due[98..]);
        assert!((due[102] - 6.2).abs() < 1e-9);
        // A ramp down to 0 and nothing after: the requests of the ramp, then none.
        let due = due_times(&parse("ramp:100..0/2s"), 1000);
        assert_eq!(due.len(), 101, "100 scheduled, plus request 0 at the start");
        assert!(due.iter().all(|t| t.is_finite() && *t <= 2.0));
        assert_eq!(due_times(&parse("0"), 10), Vec::<f64>::new());
        // From a ramp starting at 0: request 0 at the start.
        let due = due_times(&parse("ramp:0..100/1s"), 3);
        assert_eq!(due[0], 0.0);
        assert!((due[1] - 0.02f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn poisson_gaps_are_exponential_around_the_rate_and_reproducible() {
        let s = parse("1k,poisson:11");
        let due = due_times(&s, 200_001);
        let gaps: Vec<f64> = due.windows(2).map(|w| w[1] - w[0]).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / (n - 1.0);
        let cv = var.sqrt() / mean;
        assert!((mean - 0.001).abs() < 0.00001, "mean gap {mean}");
        assert!((cv - 1.0).abs() < 0.02, "coefficient of variation {cv}");
        // Several fibers together: still a Poisson process at the rate.
        let mut merged = Vec::new();
        for f in 0..8 {
            let mut p = s.pacer(0, 1, f, 8);
            merged.extend(std::iter::from_fn(|| p.next_due()).take_while(|&t| t < 100.0));
        }
        merged.sort_by(f64::total_cmp);
        let gaps: Vec<f64> = merged.windows(2).map(|w| w[1] - w[0]).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / (n - 1.0);
        assert!((mean - 0.001).abs() < 0.00002, "mean gap {mean}");
        assert!((var.sqrt() / mean - 1.0).abs() < 0.03);
        // The same seed, the same arrivals; another seed, others.
        assert_eq!(
            due_times(&s, 1000),
            due_times(&parse("1k,poisson:11"), 1000)
        );
        assert_ne!(
            due_times(&s, 1000),
            due_times(&parse("1k,poisson:12"), 1000)
        );
        let a = s.pacer(0, 2, 3, 4).next_due();
        assert_ne!(a, s.pacer(1, 2, 3, 4).next_due(), "workers differ");
        assert_ne!(a, s.pacer(0, 2, 2, 4).next_due(), "fibers differ");
    }

    #[test]
    fn due_times_never_go_backwards() {
        for text in [
            "ramp:10..10k/3s,sine:5k,5k,1s/4s,step:0/1s,ramp:0..3k/1s",
            "sine:1k,1k,250ms,poisson",
        ] {
            let due = due_times(&parse(text), 40_000);
            assert!(due.windows(2).all(|w| w[1] >= w[0]), "{text}");
            assert!(due.iter().all(|t| t.is_finite()));
        }
    }
}
