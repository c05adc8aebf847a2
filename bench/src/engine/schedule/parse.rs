//! A schedule read from its text ([`RateSchedule::parse`], the grammar in the documentation
//! of [`schedule`](super)) or made constant ([`RateSchedule::steady`]), and its parts laid
//! out one after the other.

use std::f64::consts::TAU;

use super::error::ScheduleError;
use super::model::RateSchedule;
use super::part::{RateShape, SchedulePart};
use crate::units;

/// The seed of `poisson` without one.
pub(super) const DEFAULT_SEED: u64 = 1;

/// A part being read, before the times are laid out.
struct Parsed {
    shape: RateShape,
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
                shape: RateShape::Linear {
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

    /// Reads a schedule (the grammar is in the documentation of [`schedule`](super)).
    pub(crate) fn parse(text: &str) -> Result<Self, ScheduleError> {
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
                        shape: RateShape::Linear {
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
                        shape: RateShape::Linear {
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
                        shape: RateShape::Linear {
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
                        shape: RateShape::Sine {
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
                shape: RateShape::Linear {
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
            let mut part = SchedulePart {
                start,
                length: p.length.unwrap_or(f64::INFINITY),
                shape: p.shape,
                before,
                count: 0.0,
            };
            part.count = if part.length.is_finite() {
                part.integral(part.length)
            } else if part.rate(0.0) > 0.0 || matches!(part.shape, RateShape::Sine { .. }) {
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
        RateShape::Linear { to, .. } => to,
        RateShape::Sine {
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
