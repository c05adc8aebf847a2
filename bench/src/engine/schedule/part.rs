//! One part of a schedule ([`SchedulePart`], its [`RateShape`]): its rate, the integral of its rate, and
//! that integral inverted (when the part's `m`-th request is due).

use std::f64::consts::TAU;

/// The shape of a part, in the part's own time (`tau`, seconds from its start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum RateShape {
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
pub(super) struct SchedulePart {
    /// Seconds from the phase's start.
    pub(super) start: f64,
    /// Seconds (`f64::INFINITY`: for ever).
    pub(super) length: f64,
    pub(super) shape: RateShape,
    /// Requests due before the part: the integral of the rate up to `start`.
    pub(super) before: f64,
    /// Requests due within the part (infinite for an endless part of positive rate).
    pub(super) count: f64,
}

impl SchedulePart {
    pub(super) fn rate(&self, tau: f64) -> f64 {
        match self.shape {
            RateShape::Linear { from, to } => {
                if self.length.is_finite() {
                    from + (to - from) * tau / self.length
                } else {
                    from
                }
            }
            RateShape::Sine {
                mean,
                amplitude,
                period,
            } => mean + amplitude * (TAU * tau / period).sin(),
        }
    }

    /// The integral of the rate from the part's start to `tau` (within the part).
    pub(super) fn integral(&self, tau: f64) -> f64 {
        match self.shape {
            RateShape::Linear { from, to } => {
                if self.length.is_finite() {
                    from * tau + (to - from) * tau * tau / (2.0 * self.length)
                } else {
                    from * tau
                }
            }
            RateShape::Sine {
                mean,
                amplitude,
                period,
            } => mean * tau + amplitude * period / TAU * (1.0 - (TAU * tau / period).cos()),
        }
    }

    /// The `tau` at which the integral reaches `m` (0 < m <= count), knowing it is at least
    /// `hint` (the previous due time's, whose integral is at most `m`).
    pub(super) fn invert(&self, m: f64, hint: f64) -> f64 {
        if m <= 0.0 {
            return 0.0;
        }
        let tau = match self.shape {
            RateShape::Linear { from, to } => {
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
            RateShape::Sine { mean, period, .. } => self.invert_sine(m, hint, mean, period),
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
