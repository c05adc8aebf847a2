//! The schedule itself ([`RateSchedule`]): its parts laid out one after the other, and what
//! it says of any moment (the rate, the requests due so far, the mean rate over a stretch).

use std::fmt;

use super::part::{RateShape, SchedulePart};

/// A rate schedule: parts one after the other, and how arrivals are spread around it.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSchedule {
    /// At least one; the last lasts for ever.
    pub(super) parts: Vec<SchedulePart>,
    /// `Some(seed)`: Poisson arrivals.
    pub(super) poisson: Option<u64>,
    /// The schedule as given (trimmed), for reports.
    pub(super) text: String,
}

impl RateSchedule {
    /// The schedule as given.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The rate, when it is one constant rate (Poisson arrivals or not).
    pub(crate) fn constant(&self) -> Option<f64> {
        match self.parts.as_slice() {
            [p] => match p.shape {
                RateShape::Linear { from, .. } => Some(from),
                RateShape::Sine { .. } => None,
            },
            _ => None,
        }
    }

    /// The seed of Poisson arrivals, if arrivals are Poisson.
    #[cfg(test)]
    pub(crate) fn poisson_seed(&self) -> Option<u64> {
        self.poisson
    }

    /// The part that holds time `t` (seconds from the start).
    fn part_at(&self, t: f64) -> Option<&SchedulePart> {
        self.parts
            .iter()
            .rev()
            .find(|p| p.start <= t)
            .or(self.parts.first())
    }

    /// The scheduled rate at `t` seconds from the start, requests per second.
    pub(crate) fn rate_at(&self, t: f64) -> f64 {
        self.part_at(t)
            .map_or(0.0, |p| p.rate((t - p.start).clamp(0.0, p.length)))
    }

    /// Requests due from the start to `t` seconds (the integral of the rate).
    pub(crate) fn count_until(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        self.part_at(t).map_or(0.0, |p| {
            p.before + p.integral((t - p.start).clamp(0.0, p.length))
        })
    }

    /// The mean scheduled rate from `t0` to `t1` seconds, requests per second (the rate at
    /// `t0` when they are equal).
    pub(crate) fn mean_rate(&self, t0: f64, t1: f64) -> f64 {
        if t1 > t0 {
            (self.count_until(t1) - self.count_until(t0)) / (t1 - t0)
        } else {
            self.rate_at(t0)
        }
    }
}

impl fmt::Display for RateSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
