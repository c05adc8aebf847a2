//! cassandra-stress's distributions: `FIXED(n)`, `SEQ(min..max)`, `UNIFORM(min..max)`,
//! `GAUSSIAN(min..max[,stdvrng])`, `GAUSSIAN(min..max,mean,stdev)`, `EXP(min..max)`,
//! `EXTREME(min..max,shape)` (also `WEIBULL`), `QEXTREME(min..max,shape,quantas)`, each
//! invertible with a leading `~`, and the ratio form `DIST/divisor` of a profile's `select`.
//!
//! Read as cassandra-stress reads them (names in any case, the aliases `gauss`, `normal`,
//! `norm`, `extr`, `weibull`, `qextr`; numbers with a `k`, `m` or `b` suffix for thousands,
//! millions and billions; bounds split by two or more dots), and sampled as a pure function of
//! a 64-bit key, so that a workload's values repeat exactly (bench/PROFILES.md says where the
//! shapes follow cassandra-stress and where a choice was made).
//!
//! Shapes, for `delta = max - min`:
//! - UNIFORM: every integer of `[min, max]` equally likely.
//! - GAUSSIAN: a normal sample truncated toward zero and clamped to `[min, max]` (the mass
//!   beyond each bound lands on it); by default mean `(min + max) / 2` and standard deviation
//!   `delta / 2 / stdvrng` (`stdvrng` 3 when not given).
//! - EXP: `min` plus an exponential sample clamped to `[0, delta]`, whose mean puts
//!   `sqrt(1 / delta)` of the mass at `max` or beyond (so that the whole range is reached).
//! - EXTREME: the same with a Weibull sample of the given shape, its scale chosen the same way.
//! - QEXTREME: the EXTREME range cut into `quantas` slices of equal probability; a sample picks
//!   a slice by the EXTREME distribution and a value uniformly within it.
//! - `~`: `max - (v - min)`: the most likely values become the least.

use std::fmt;

use super::hash::mix;

/// Why a distribution could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad distribution `{spec}`: {message}")]
pub struct DistError {
    /// The text as given.
    pub(crate) spec: String,
    /// What is wrong.
    pub(crate) message: String,
}

/// A distribution's shape and parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum DistShape {
    /// Always the value.
    Fixed(i64),
    /// `min`, `min + 1`, ... `max`, then again from `min`, by the index drawn from.
    Seq,
    /// Uniform over the integers of the range.
    Uniform,
    /// Normal, clamped.
    Gaussian {
        /// Its mean.
        mean: f64,
        /// Its standard deviation.
        stdev: f64,
    },
    /// Exponential from `min`, clamped.
    Exp {
        /// Its mean (above `min`).
        mean: f64,
    },
    /// Weibull from `min`, clamped.
    Extreme {
        /// Weibull shape.
        shape: f64,
        /// Weibull scale.
        scale: f64,
    },
    /// Weibull cut into slices of equal probability, uniform within each.
    QExtreme {
        /// Weibull shape.
        shape: f64,
        /// Weibull scale.
        scale: f64,
        /// The slices' bounds: `quantas + 1` values from `min` to `max + 1`, non-decreasing.
        bounds: Vec<i64>,
    },
}

/// A parsed distribution: its shape over `[min, max]`, maybe inverted.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// The text it was read from (trimmed).
    text: String,
    /// The smallest value it gives.
    pub min: i64,
    /// The largest value it gives.
    pub max: i64,
    /// Its shape.
    pub shape: DistShape,
    /// `~`: `max - (v - min)`.
    pub inverted: bool,
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A ratio `DIST/divisor` (a profile's `select` and `row-population`): a sample of `DIST`
/// divided by `divisor`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ratio {
    /// The numerator's distribution.
    pub(crate) dist: Distribution,
    /// The divisor (positive).
    pub(crate) divisor: f64,
}

impl Ratio {
    /// Reads `DIST/divisor`.
    pub(crate) fn parse(text: &str) -> Result<Self, DistError> {
        let t = text.trim();
        let bad = |message: &str| DistError {
            spec: t.to_owned(),
            message: message.to_owned(),
        };
        let Some((dist, divisor)) = t.rsplit_once('/') else {
            return Err(bad("a ratio is DIST/divisor, e.g. fixed(1)/10"));
        };
        let divisor: f64 = divisor
            .trim()
            .parse()
            .map_err(|_| bad("the divisor is not a number"))?;
        if !(divisor > 0.0 && divisor.is_finite()) {
            return Err(bad("the divisor must be positive"));
        }
        Ok(Self {
            dist: Distribution::parse(dist)?,
            divisor,
        })
    }

    /// Its mean, estimated from its distribution's mean.
    pub(crate) fn mean(&self) -> f64 {
        self.dist.mean() / self.divisor
    }

    /// Its largest value.
    #[cfg(test)]
    pub(crate) fn max(&self) -> f64 {
        self.dist.max as f64 / self.divisor
    }
}

/// A number as cassandra-stress reads one: an integer with an optional `k`, `m` or `b`
/// (thousand, million, billion; any case).
pub(crate) fn parse_count(text: &str) -> Option<i64> {
    let t = text.trim().to_ascii_lowercase();
    let (digits, mult) = match t.as_bytes().last()? {
        b'k' => (&t[..t.len() - 1], 1_000),
        b'm' => (&t[..t.len() - 1], 1_000_000),
        b'b' => (&t[..t.len() - 1], 1_000_000_000),
        _ => (&t[..], 1),
    };
    digits.parse::<i64>().ok()?.checked_mul(mult)
}

/// The `k`-th uniform draw in [0, 1) of `key`.
fn unit(key: u64, k: u64) -> f64 {
    (mix(mix(key).wrapping_add(k)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The quantile of Exp(1) or of Weibull(shape, 1) at `1 - sqrt(1 / delta)`: the scale that
/// puts that much of the mass beyond `delta` is `delta` over it.
fn edge_quantile(delta: f64, shape: f64) -> f64 {
    (0.5 * delta.ln()).powf(1.0 / shape)
}

impl Distribution {
    /// Reads a distribution: `[~]NAME(args)`.
    pub fn parse(text: &str) -> Result<Self, DistError> {
        let t = text.trim();
        let bad = |message: String| DistError {
            spec: t.to_owned(),
            message,
        };
        let (inverted, body) = match t.strip_prefix('~') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, t),
        };
        let (Some(open), true) = (body.find('('), body.ends_with(')')) else {
            return Err(bad("expected NAME(arguments), e.g. uniform(1..100)".into()));
        };
        let name = body[..open].trim().to_ascii_lowercase();
        let args: Vec<&str> = body[open + 1..body.len() - 1]
            .split(',')
            .map(str::trim)
            .collect();
        if args.iter().any(|a| a.is_empty()) {
            return Err(bad("an argument is empty".into()));
        }
        let count = |a: &str| parse_count(a).ok_or_else(|| bad(format!("`{a}` is not a number")));
        let float = |a: &str| {
            a.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .ok_or_else(|| bad(format!("`{a}` is not a number")))
        };
        let range = |a: &str| -> Result<(i64, i64), DistError> {
            let Some(dots) = a.find("..") else {
                return Err(bad(format!("`{a}` is not a range min..max")));
            };
            let (lo, hi) = (&a[..dots], a[dots..].trim_start_matches('.'));
            let (lo, hi) = (count(lo)?, count(hi)?);
            if lo > hi {
                return Err(bad(format!("min {lo} is above max {hi}")));
            }
            if hi.checked_sub(lo).and_then(|d| d.checked_add(1)).is_none() {
                return Err(bad("the range is too wide".into()));
            }
            Ok((lo, hi))
        };
        let arity = |lo: usize, hi: usize| {
            if args.len() < lo || args.len() > hi {
                let want = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} to {hi}")
                };
                Err(bad(format!(
                    "{name} takes {want} arguments, got {}",
                    args.len()
                )))
            } else {
                Ok(())
            }
        };
        let shape_arg = |a: &str| {
            let s = float(a)?;
            if s > 0.0 {
                Ok(s)
            } else {
                Err(bad(format!("the shape {s} must be positive")))
            }
        };
        let (min, max, shape) = match name.as_str() {
            "fixed" => {
                arity(1, 1)?;
                let v = count(args[0])?;
                (v, v, DistShape::Fixed(v))
            }
            "seq" => {
                arity(1, 1)?;
                let (lo, hi) = range(args[0])?;
                (lo, hi, DistShape::Seq)
            }
            "uniform" => {
                arity(1, 1)?;
                let (lo, hi) = range(args[0])?;
                (lo, hi, DistShape::Uniform)
            }
            "gaussian" | "gauss" | "normal" | "norm" => {
                arity(1, 3)?;
                let (lo, hi) = range(args[0])?;
                let (mean, stdev) = if args.len() == 3 {
                    (float(args[1])?, float(args[2])?)
                } else {
                    let to_edge = if args.len() == 2 {
                        float(args[1])?
                    } else {
                        3.0
                    };
                    if to_edge <= 0.0 {
                        return Err(bad(format!("stdvrng {to_edge} must be positive")));
                    }
                    (
                        (lo as f64 + hi as f64) / 2.0,
                        (hi as f64 - lo as f64) / 2.0 / to_edge,
                    )
                };
                if stdev < 0.0 {
                    return Err(bad(format!("the standard deviation {stdev} is negative")));
                }
                (lo, hi, DistShape::Gaussian { mean, stdev })
            }
            "exp" => {
                arity(1, 1)?;
                let (lo, hi) = range(args[0])?;
                let delta = (hi - lo) as f64;
                // Below 2 the rule gives no finite mean; any mean reaches both values.
                let mean = if delta >= 2.0 {
                    delta / edge_quantile(delta, 1.0)
                } else {
                    delta.max(1.0)
                };
                (lo, hi, DistShape::Exp { mean })
            }
            "extreme" | "extr" | "weibull" | "qextreme" | "qextr" => {
                let quantized = name.starts_with('q');
                arity(if quantized { 3 } else { 2 }, if quantized { 3 } else { 2 })?;
                let (lo, hi) = range(args[0])?;
                let shape = shape_arg(args[1])?;
                let delta = (hi - lo) as f64;
                let scale = if delta >= 2.0 {
                    delta / edge_quantile(delta, shape)
                } else {
                    delta.max(1.0)
                };
                if quantized {
                    let quantas = args[2]
                        .parse::<u32>()
                        .ok()
                        .filter(|&q| (1..=1_000_000).contains(&q))
                        .ok_or_else(|| {
                            bad(format!("quantas `{}` is not a count of 1 to 1M", args[2]))
                        })?;
                    let bounds = quantum_bounds(lo, hi, shape, scale, quantas);
                    (
                        lo,
                        hi,
                        DistShape::QExtreme {
                            shape,
                            scale,
                            bounds,
                        },
                    )
                } else {
                    (lo, hi, DistShape::Extreme { shape, scale })
                }
            }
            "" => return Err(bad("no distribution name".into())),
            other => {
                return Err(bad(format!(
                    "unknown distribution `{other}` (fixed, seq, uniform, gaussian, exp, \
                     extreme, weibull, qextreme)"
                )))
            }
        };
        Ok(Self {
            text: t.to_owned(),
            min,
            max,
            shape,
            inverted,
        })
    }

    /// The value for `index` (the position in a sequence: SEQ's only input) and `key` (the
    /// random source of every other shape). A pure function of both.
    pub(crate) fn sample(&self, index: u64, key: u64) -> i64 {
        let delta = self.max.abs_diff(self.min);
        // Within [0, delta]: `min + off` and `max - off` cannot overflow.
        let offset = |x: f64| -> u64 {
            if x <= 0.0 {
                0
            } else if x >= delta as f64 {
                delta
            } else {
                (x as u64).min(delta)
            }
        };
        let off = match &self.shape {
            DistShape::Fixed(_) => 0,
            DistShape::Seq => index % delta.saturating_add(1).max(1),
            DistShape::Uniform => {
                let span = u128::from(delta) + 1;
                let u = mix(mix(key).wrapping_add(0x5eed));
                ((u128::from(u) * span) >> 64) as u64
            }
            DistShape::Gaussian { mean, stdev } => {
                let u1 = 1.0 - unit(key, 1);
                let u2 = unit(key, 2);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                // Truncated toward zero, as a cast of the sample does, then clamped.
                let v = (mean + stdev * z).trunc();
                offset(v - self.min as f64)
            }
            DistShape::Exp { mean } => offset((-mean * (1.0 - unit(key, 1)).ln()).trunc()),
            DistShape::Extreme { shape, scale } => offset(weibull(key, *shape, *scale).trunc()),
            DistShape::QExtreme {
                shape,
                scale,
                bounds,
            } => {
                let v = self
                    .min
                    .saturating_add(offset(weibull(key, *shape, *scale)) as i64);
                // The slice holding v: bounds[q] <= v < bounds[q + 1], so it is never empty.
                let q = bounds[1..bounds.len() - 1].partition_point(|&b| b <= v);
                let (lo, hi) = (bounds[q], bounds[q + 1]);
                let width = hi.abs_diff(lo).max(1);
                let within = ((unit(key, 3) * width as f64) as u64).min(width - 1);
                lo.abs_diff(self.min).saturating_add(within).min(delta)
            }
        };
        if self.inverted {
            (self.max as i128 - off as i128) as i64
        } else {
            (self.min as i128 + off as i128) as i64
        }
    }

    /// Its mean: the mean of the values [`Self::sample`] gives, truncated and clamped onto
    /// the range. Exact for FIXED, SEQ and UNIFORM; for GAUSSIAN, EXP and EXTREME, summed
    /// over the range's values when it holds at most [`SUMMED`] of them, else the unclamped
    /// distribution's mean (the clamp moves it by about `1 / sqrt(max - min)` of itself, by
    /// the scale rule); for QEXTREME, EXTREME's unclamped mean.
    pub(crate) fn mean(&self) -> f64 {
        let (lo, hi) = (self.min as f64, self.max as f64);
        let delta = self.max.abs_diff(self.min);
        let summed = delta <= SUMMED;
        let m = match &self.shape {
            DistShape::Fixed(v) => *v as f64,
            DistShape::Seq | DistShape::Uniform => (lo + hi) / 2.0,
            DistShape::Gaussian { .. } | DistShape::Exp { .. } | DistShape::Extreme { .. }
                if summed =>
            {
                // E[offset] = the sum over k of P(offset >= k).
                lo + (1..=delta).map(|k| self.at_least(k)).sum::<f64>()
            }
            DistShape::Gaussian { mean, .. } => mean.clamp(lo, hi),
            DistShape::Exp { mean } => (lo + mean).min(hi),
            DistShape::Extreme { scale, shape } | DistShape::QExtreme { scale, shape, .. } => {
                (lo + scale * gamma(1.0 + 1.0 / shape)).min(hi)
            }
        };
        if self.inverted {
            hi - (m - lo)
        } else {
            m
        }
    }

    /// The probability that a sample's offset from `min` (before inversion) is at least
    /// `k` (1 to `max - min`), for GAUSSIAN, EXP and EXTREME: `sample` truncates toward zero,
    /// so a non-negative draw reaches `k` when it is at least `k`.
    fn at_least(&self, k: u64) -> f64 {
        let k = k as f64;
        match &self.shape {
            DistShape::Exp { mean } => (-k / mean).exp(),
            DistShape::Extreme { shape, scale } => (-(k / scale).powf(*shape)).exp(),
            DistShape::Gaussian { mean, stdev } => {
                // The value is trunc(Y), Y normal; it reaches t = min + k when Y >= t for
                // t >= 1, and when Y > t - 1 for t <= 0.
                let t = self.min as f64 + k;
                let edge = if t >= 1.0 { t } else { t - 1.0 };
                if *stdev > 0.0 {
                    0.5 * statrs::function::erf::erfc(
                        (edge - mean) / (stdev * std::f64::consts::SQRT_2),
                    )
                } else if mean.trunc() >= t {
                    1.0
                } else {
                    0.0
                }
            }
            DistShape::Fixed(_)
            | DistShape::Seq
            | DistShape::Uniform
            | DistShape::QExtreme { .. } => 0.0,
        }
    }
}

/// The widest range whose mean [`Distribution::mean`] sums value by value (at conversion
/// time, never per request).
pub(crate) const SUMMED: u64 = 1 << 16;

/// A Weibull(shape, scale) sample from `key`.
fn weibull(key: u64, shape: f64, scale: f64) -> f64 {
    scale * (-(1.0 - unit(key, 1)).ln()).powf(1.0 / shape)
}

/// The bounds of `quantas` slices of equal probability of the EXTREME distribution over
/// `[min, max]`: `min`, its quantiles at 1/q, 2/q, ..., and `max + 1`.
fn quantum_bounds(min: i64, max: i64, shape: f64, scale: f64, quantas: u32) -> Vec<i64> {
    let delta = max.abs_diff(min);
    let mut bounds = Vec::with_capacity(quantas as usize + 1);
    bounds.push(min);
    for k in 1..quantas {
        let p = f64::from(k) / f64::from(quantas);
        let x = (scale * (-(1.0 - p).ln()).powf(1.0 / shape)).trunc();
        let off = if x <= 0.0 { 0 } else { (x as u64).min(delta) };
        bounds.push(min.saturating_add(off as i64));
    }
    bounds.push(max.saturating_add(1));
    bounds
}

/// The gamma function for positive arguments (Lanczos, g = 7): enough for a mean.
fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x))
    } else {
        let x = x - 1.0;
        let t = x + 7.5;
        let mut a = G[0];
        for (k, g) in G.iter().enumerate().skip(1) {
            a += g / (x + k as f64);
        }
        (std::f64::consts::TAU).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: u64 = 200_000;

    fn dist(text: &str) -> Distribution {
        Distribution::parse(text).unwrap()
    }

    /// `N` samples with keys 0, 1, 2, ... (the keys are mixed inside: a fixed seed).
    fn samples(d: &Distribution) -> Vec<i64> {
        (0..N).map(|k| d.sample(k, k)).collect()
    }

    fn mean(v: &[i64]) -> f64 {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }

    fn stdev(v: &[i64]) -> f64 {
        let m = mean(v);
        (v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    }

    /// The standard normal CDF (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
    fn phi(z: f64) -> f64 {
        let x = z.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.327_591_1 * x);
        let poly = t
            * (0.254_829_592
                + t * (-0.284_496_736
                    + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let erf = 1.0 - poly * (-x * x).exp();
        if z >= 0.0 {
            0.5 * (1.0 + erf)
        } else {
            0.5 * (1.0 - erf)
        }
    }

    /// The share of samples at most `k` is `p` within 5 standard errors.
    fn assert_cdf(v: &[i64], k: i64, p: f64, what: &str) {
        let got = v.iter().filter(|&&x| x <= k).count() as f64 / v.len() as f64;
        let se = (p * (1.0 - p) / v.len() as f64).sqrt();
        assert!(
            (got - p).abs() <= 5.0 * se + 1e-9,
            "{what}: P(v <= {k}) = {got}, expected {p} (se {se})"
        );
    }

    /// `mean()` is the mean of what `sample` gives, clamp and truncation included: the
    /// converter sizes a profile's batches from it (exp(1..200): 70.4 rows, not the 76.2
    /// of the unclamped distribution).
    #[test]
    fn the_mean_is_the_samples_mean() {
        for text in [
            "FIXED(7)",
            "UNIFORM(1..100)",
            "SEQ(5..9)",
            "exp(1..200)",
            "~exp(1..100)",
            "EXP(0..10)",
            "extreme(16..256,1.5)",
            "~extreme(1..50,0.8)",
            "gaussian(1..1000)",
            "GAUSSIAN(1..100,80,40)",
            "~gaussian(0..20,2,5)",
            "GAUSSIAN(-50..50,-10,30)",
        ] {
            let d = dist(text);
            let v = samples(&d);
            let (m, sd) = (mean(&v), stdev(&v));
            let se = sd / (v.len() as f64).sqrt();
            assert!(
                (d.mean() - m).abs() <= 5.0 * se + 1e-9,
                "{text}: mean() {} against the samples' {m} (se {se})",
                d.mean()
            );
        }
        // exp(1..200) read as its unclamped mean would size orders' batches one row too big.
        assert!((dist("exp(1..200)").mean() - 70.4).abs() < 0.1);
    }

    #[test]
    fn numbers_take_cassandra_stress_suffixes() {
        assert_eq!(parse_count("12"), Some(12));
        assert_eq!(parse_count("5k"), Some(5_000));
        assert_eq!(parse_count("5K"), Some(5_000));
        assert_eq!(parse_count("2m"), Some(2_000_000));
        assert_eq!(parse_count("100B"), Some(100_000_000_000));
        assert_eq!(parse_count("-3"), Some(-3));
        assert_eq!(parse_count("1.5k"), None);
        assert_eq!(parse_count("x"), None);
        let d = dist("uniform(1..100B)");
        assert_eq!((d.min, d.max), (1, 100_000_000_000));
        let d = dist("UNIFORM(1...10)");
        assert_eq!((d.min, d.max), (1, 10));
    }

    #[test]
    fn bad_distributions_say_why() {
        for (text, says) in [
            ("uniform(10..1)", "above max"),
            ("uniform(1-10)", "not a range"),
            ("zipf(1..10)", "unknown distribution `zipf`"),
            ("uniform(1..10", "NAME(arguments)"),
            ("fixed(a)", "`a` is not a number"),
            ("gaussian(1..10,1,2,3)", "1 to 3 arguments"),
            ("extreme(1..10)", "2 arguments"),
            ("extreme(1..10,0)", "positive"),
            ("qextreme(1..10,2,0)", "quantas"),
            ("gaussian(1..10,-1)", "positive"),
            ("uniform(1..,)", "empty"),
            ("(1..10)", "no distribution name"),
        ] {
            let e = Distribution::parse(text).unwrap_err();
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
        assert!(Ratio::parse("fixed(1)").is_err());
        assert!(Ratio::parse("fixed(1)/0").is_err());
        let r = Ratio::parse("uniform(1..9)/10").unwrap();
        assert!((r.mean() - 0.5).abs() < 1e-12 && (r.max() - 0.9).abs() < 1e-12);
    }

    #[test]
    fn fixed_and_seq_are_exact() {
        let d = dist("FIXED(42)");
        assert!(samples(&d).iter().all(|&v| v == 42));
        let d = dist("seq(5..7)");
        let v: Vec<i64> = (0..7).map(|k| d.sample(k, 999)).collect();
        assert_eq!(v, [5, 6, 7, 5, 6, 7, 5]);
        let d = dist("~seq(5..7)");
        let v: Vec<i64> = (0..4).map(|k| d.sample(k, 999)).collect();
        assert_eq!(v, [7, 6, 5, 7]);
    }

    #[test]
    fn uniform_covers_its_range_evenly() {
        let d = dist("uniform(1..10)");
        let v = samples(&d);
        assert!(v.iter().all(|&x| (1..=10).contains(&x)));
        for k in 1..=10 {
            assert_cdf(&v, k, k as f64 / 10.0, "uniform(1..10)");
        }
        assert!((mean(&v) - 5.5).abs() < 5.0 * (99.0f64 / 12.0 / N as f64).sqrt());
        // Deterministic: the same keys give the same values.
        assert_eq!(v, samples(&d));
    }

    #[test]
    fn gaussian_has_its_mean_spread_and_clamp() {
        // Mean 50.5, stdev 49.5 / 3 = 16.5; truncation toward zero moves the mean by -0.5.
        let d = dist("gaussian(1..100)");
        let v = samples(&d);
        assert!(v.iter().all(|&x| (1..=100).contains(&x)));
        let se = 16.5 / (N as f64).sqrt();
        assert!((mean(&v) - 50.0).abs() < 5.0 * se, "mean {}", mean(&v));
        assert!((stdev(&v) - 16.5).abs() < 0.3, "stdev {}", stdev(&v));
        // The median: P(X < 51) = Phi(0.5 / 16.5).
        assert_cdf(&v, 50, 0.512_09, "gaussian median");
        // With stdvrng 1 the bounds are one deviation away (mean 51, stdev 50): everything
        // below 2 lands on 1 (truncated or clamped), everything from 101 on 101.
        let d = dist("gauss(1..101,1)");
        let v = samples(&d);
        assert_cdf(&v, 1, phi(-49.0 / 50.0), "gaussian clamp at min");
        assert_cdf(&v, 100, phi(1.0), "gaussian clamp at max");
        // Explicit mean and deviation.
        let d = dist("normal(0..1000,200,50)");
        let v = samples(&d);
        assert!((mean(&v) - 199.5).abs() < 5.0 * 50.0 / (N as f64).sqrt());
        assert!((stdev(&v) - 50.0).abs() < 1.0);
    }

    #[test]
    fn exp_follows_its_cdf_and_reaches_max() {
        let d = dist("exp(1..1000)");
        let DistShape::Exp { mean: m } = d.shape else {
            panic!("{d:?}")
        };
        // The mass clamped onto max is sqrt(1 / delta).
        assert!(((-999.0 / m).exp() - (1.0f64 / 999.0).sqrt()).abs() < 1e-9);
        let v = samples(&d);
        assert!(v.iter().all(|&x| (1..=1000).contains(&x)));
        for k in [0, 10, 100, 200, 500, 998] {
            let p = 1.0 - (-(k as f64 + 1.0) / m).exp();
            assert_cdf(&v, 1 + k, p, "exp");
        }
        // Inverted: the mirror image, most values near max.
        let inv = samples(&dist("~exp(1..1000)"));
        assert!((mean(&v) + mean(&inv) - 1001.0).abs() < 1e-9 * N as f64);
        assert_cdf(&inv, 1, (-999.0 / m).exp(), "~exp at min");
        assert_cdf(&inv, 999, (-1.0 / m).exp(), "~exp below max");
    }

    #[test]
    fn extreme_follows_the_weibull_cdf() {
        for spec in ["extreme(1..1000,1.5)", "WEIBULL(1..1000,1.5)"] {
            let d = dist(spec);
            let DistShape::Extreme { shape, scale } = d.shape else {
                panic!("{d:?}")
            };
            let cdf = |t: f64| 1.0 - (-(t / scale).powf(shape)).exp();
            // The mass clamped onto max is sqrt(1 / delta).
            assert!((1.0 - cdf(999.0) - (1.0f64 / 999.0).sqrt()).abs() < 1e-9);
            let v = samples(&d);
            assert!(v.iter().all(|&x| (1..=1000).contains(&x)));
            for k in [0, 50, 100, 200, 400, 998] {
                assert_cdf(&v, 1 + k, cdf(k as f64 + 1.0), spec);
            }
            // E[min + min(trunc(X), delta)] = min + sum over k of P(X >= k), k = 1..delta.
            let expected = 1.0 + (1..=999).map(|k| 1.0 - cdf(f64::from(k))).sum::<f64>();
            let se = stdev(&v) / (N as f64).sqrt();
            assert!(
                (mean(&v) - expected).abs() < 5.0 * se,
                "{spec}: {}",
                mean(&v)
            );
        }
    }

    #[test]
    fn qextreme_gives_each_slice_its_share_uniformly() {
        let d = dist("qextreme(1..1000000,2,4)");
        let DistShape::QExtreme { bounds, .. } = &d.shape else {
            panic!("{d:?}")
        };
        assert_eq!(bounds.len(), 5);
        assert_eq!((bounds[0], bounds[4]), (1, 1_000_001));
        let v = samples(&d);
        assert!(v.iter().all(|&x| (1..=1_000_000).contains(&x)));
        // Each slice holds a quarter of the mass...
        for (q, bound) in bounds.iter().enumerate().take(4).skip(1) {
            assert_cdf(&v, bound - 1, q as f64 / 4.0, "qextreme slice");
        }
        // ...spread evenly within it: the slice's lower half holds half its share.
        let (lo, hi) = (bounds[1], bounds[2]);
        let mid = lo + (hi - lo) / 2;
        let inside: Vec<i64> = v.iter().copied().filter(|&x| lo <= x && x < hi).collect();
        assert_cdf(&inside, mid - 1, 0.5, "uniform within a slice");
        // Inverted: the mirror image.
        let inv = samples(&dist("~qextreme(1..1000000,2,4)"));
        assert!(inv.iter().all(|&x| (1..=1_000_000).contains(&x)));
        assert!((mean(&v) + mean(&inv) - 1_000_001.0).abs() < 1e-6);
    }

    #[test]
    fn tiny_ranges_do_not_break_the_scales() {
        for spec in [
            "exp(5..5)",
            "exp(5..6)",
            "extreme(5..6,2)",
            "qextreme(5..5,2,3)",
        ] {
            let d = dist(spec);
            assert!(samples(&d).iter().all(|&x| (5..=6).contains(&x)), "{spec}");
        }
        let e = Distribution::parse("uniform(-9223372036854775808..9223372036854775806)");
        assert!(e.unwrap_err().to_string().contains("too wide"));
    }
}
