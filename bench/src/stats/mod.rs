//! The bench's statistics: HDR latency histograms, means with error margins that account
//! for correlation between samples, and Welch's t-test for comparing two runs.
//!
//! Why correlation matters: the per-sample throughput or mean latency of a benchmark is not
//! independent from one sample to the next (a compaction, a GC pause, a busy neighbour or a
//! cache warming up spans several samples), so the naive standard error `s / sqrt(n)` is
//! too small and differences look significant when they are not. We use batch means: the
//! samples are cut into about `sqrt(n)` consecutive batches and the batch means, nearly
//! independent when a batch is longer than the correlation, are the observations of the
//! margin and of the t-test.
//!
//! Student's t (quantiles for the margins, tail probabilities for the p-values) comes from
//! the `statrs` crate.
//!
//! Several comparisons made at once are corrected for their number with Holm's step-down
//! method ([`holm_adjusted`]): the VERDICT's findings are such a family.
//!
//! Measured against the stub (A/A: 40 pairs of identical 1 s runs of 20 samples, throughput
//! and mean latency compared: 80 comparisons), "significant" at p < 0.01: 3 of 80 with
//! batch means and 11 of 80 with the naive test on a quiet machine; 1, 6 and 13 of 80 with
//! batch means, the earlier AR(1) effective-sample-size correction and the naive test
//! beside a fuzzer on the other core. `bench/tests/it/stub_runs.rs` keeps the calibration as a
//! test.

use std::io::Write;

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Why a histogram could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// Not valid base64.
    #[error("histogram is not valid base64: {0}")]
    Base64(String),
    /// Not a valid serialized histogram.
    #[error("histogram could not be decoded: {0}")]
    Decode(String),
    /// The histogram could not be encoded or written.
    #[error("histogram could not be written: {0}")]
    Encode(String),
}

/// The largest latency recorded exactly: one hour, in nanoseconds. Larger values are
/// recorded as this value and counted in [`LatencyHistogram::saturated`].
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds: 1 ns to 1 hour, 3 significant digits.
#[derive(Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    saturated: u64,
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("count", &self.count())
            .field("min", &self.min())
            .field("max", &self.max())
            .finish()
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        // Bounds are constants that the crate accepts (low >= 1, high >= 2 * low, sigfig 3).
        let h = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
            .unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()));
        Self { h, saturated: 0 }
    }

    /// Records one value (clamped to the histogram's range).
    pub fn record(&mut self, ns: u64) {
        if ns > MAX_LATENCY_NS {
            self.saturated += 1;
        }
        self.h.saturating_record(ns.max(1));
    }

    /// Records `n` occurrences of a value.
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if ns > MAX_LATENCY_NS {
            self.saturated += n;
        }
        self.h.saturating_record_n(ns.max(1), n);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot overflow the range.
        if self.h.add(&other.h).is_err() {
            for v in other.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.saturated += other.saturated;
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Values that were above [`MAX_LATENCY_NS`].
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.min_nz()
        }
    }

    /// Largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.h.max()
    }

    /// Mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.h.mean()
        }
    }

    /// Standard deviation (0 when empty).
    pub fn stdev(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.h.stdev()
        }
    }

    /// The value at percentile `p` (0 to 100); 0 when empty.
    pub fn value_at_percentile(&self, p: f64) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.value_at_percentile(p)
        }
    }

    /// The percentiles reports show: min, 25, 50, 75, 90, 95, 99, 99.9, 99.99, max.
    pub fn percentiles(&self) -> Vec<(f64, u64)> {
        let mut out = vec![(0.0, self.min())];
        for p in [25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99] {
            out.push((p, self.value_at_percentile(p)));
        }
        out.push((100.0, self.max()));
        out
    }

    /// Empties the histogram.
    pub fn clear(&mut self) {
        self.h.reset();
        self.saturated = 0;
    }

    /// The histogram in HdrHistogram's compressed V2 format, base64 (readable by every
    /// HdrHistogram implementation).
    pub fn to_base64(&self) -> String {
        match self.to_v2_bytes() {
            Ok(bytes) => base64::engine::general_purpose::STANDARD.encode(bytes),
            // Serializing into memory fails only on an internal error of the encoder; an
            // empty string then reads back as an error, never as a wrong histogram.
            Err(_) => String::new(),
        }
    }

    /// The histogram in HdrHistogram's compressed V2 format (the bytes behind
    /// [`LatencyHistogram::to_base64`]).
    pub fn to_v2_bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.h, &mut bytes)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        Ok(bytes)
    }

    /// Reads [`LatencyHistogram::to_base64`]'s output.
    pub fn from_base64(text: &str) -> Result<Self, StatsError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| StatsError::Base64(e.to_string()))?;
        Self::from_v2_bytes(&bytes)
    }

    /// Reads [`LatencyHistogram::to_v2_bytes`]'s output.
    pub fn from_v2_bytes(bytes: &[u8]) -> Result<Self, StatsError> {
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| StatsError::Decode(format!("{e:?}")))?;
        let mut out = Self::new();
        for v in decoded.iter_recorded() {
            out.h
                .saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
        Ok(out)
    }
}

/// Writes `intervals` (start offset from `start_unix_secs`, duration, histogram; seconds)
/// as an HdrHistogram interval log, the format `HistogramLogProcessor` and plotting tools
/// read.
pub fn write_interval_log(
    w: &mut impl Write,
    start_unix_secs: f64,
    intervals: &[(f64, f64, &LatencyHistogram)],
) -> Result<(), StatsError> {
    let mut serializer = V2DeflateSerializer::new();
    let start =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start_unix_secs.max(0.0));
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("written by doppio hdr; values in nanoseconds")
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6)
        .begin_log_with(w, &mut serializer)
        .map_err(|e| StatsError::Encode(e.to_string()))?;
    for (offset, duration, h) in intervals {
        log.write_histogram(
            &h.h,
            std::time::Duration::from_secs_f64(offset.max(0.0)),
            std::time::Duration::from_secs_f64(duration.max(0.0)),
            None,
        )
        .map_err(|e| StatsError::Encode(format!("{e:?}")))?;
    }
    Ok(())
}

/// A mean with its confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Sample mean.
    pub mean: f64,
    /// Half-width of the confidence interval (NaN with fewer than two samples).
    pub margin: f64,
    /// Samples.
    pub n: usize,
    /// Batches the samples were grouped into (see [`batch_means`]).
    pub batches: usize,
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// How many batches `n` samples are grouped into: `floor(sqrt(n))`, at least 2 (or `n`
/// when `n < 2`). Batches of `sqrt(n)` samples grow with the run, so that correlation
/// spanning a few samples stays within a batch while there are still enough batches to
/// estimate a variance from.
pub fn batch_count(n: usize) -> usize {
    if n < 2 {
        return n;
    }
    let mut k = (n as f64).sqrt().floor() as usize;
    // Guard the float square root at exact squares.
    while (k + 1) * (k + 1) <= n {
        k += 1;
    }
    while k * k > n {
        k -= 1;
    }
    k.max(2)
}

/// The means of [`batch_count`]`(xs.len())` consecutive, non-overlapping batches of `xs`
/// (sizes differ by at most one; every sample is in exactly one batch).
pub fn batch_means(xs: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let k = batch_count(n);
    (0..k)
        .map(|i| mean(&xs[i * n / k..(i + 1) * n / k]))
        .collect()
}

/// The mean of `xs` and its confidence half-width at `confidence` (e.g. 0.99), from the
/// spread of its [`batch_means`] and Student's t with `batches - 1` degrees of freedom.
pub fn estimate(xs: &[f64], confidence: f64) -> Estimate {
    let n = xs.len();
    let m = mean(xs);
    if n < 2 {
        return Estimate {
            mean: m,
            margin: f64::NAN,
            n,
            batches: n,
        };
    }
    let batches = batch_means(xs);
    let k = batches.len();
    let se = (variance(&batches) / k as f64).sqrt();
    let t = student_t_quantile(0.5 + confidence / 2.0, (k - 1) as f64);
    Estimate {
        mean: m,
        margin: t * se,
        n,
        batches: k,
    }
}

/// A two-sided t-test's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// The t statistic (positive when `b`'s mean is larger).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test on the [`batch_means`] of two series of samples. Fewer than two samples
/// on a side gives p = 1 (no evidence); two constant, equal series give p = 1, constant
/// different ones p = 0.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> TTest {
    // Fewer than two samples stay fewer than two batches (`batch_count`), which the raw
    // test answers with p = 1.
    welch_t_test_raw(&batch_means(a), &batch_means(b))
}

/// The textbook Welch test (independent samples), as R's `t.test(var.equal = FALSE)`.
pub fn welch_t_test_raw(a: &[f64], b: &[f64]) -> TTest {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.len() < 2 || b.len() < 2 {
        return TTest {
            t: 0.0,
            df: 0.0,
            p_value: 1.0,
        };
    }
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(b) - mean(a);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return TTest {
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: 0.0,
            p_value: if diff == 0.0 { 1.0 } else { 0.0 },
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let p = student_t_two_sided_p(t, df);
    TTest {
        t,
        df,
        p_value: p.clamp(0.0, 1.0),
    }
}

/// The ratio of `b` to `a` estimated from pairs `(a_i, b_i)` measured side by side (one
/// pair per round of an interleaved run), with its interval and a paired t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedRatio {
    /// The geometric mean of the pairs' ratios `b_i / a_i`.
    pub ratio: f64,
    /// The interval's low end (NaN with fewer than two pairs).
    pub low: f64,
    /// The interval's high end (NaN with fewer than two pairs).
    pub high: f64,
    /// The two-sided p-value of "the ratio is 1" (1 with fewer than two pairs).
    pub p_value: f64,
    /// The pairs used (both figures positive and finite).
    pub pairs: usize,
    /// Whether the ratio was adjusted for a drift within rounds
    /// ([`paired_ratio_adjusted`]).
    pub adjusted: bool,
}

/// [`PairedRatio`] at `confidence` (e.g. 0.99): the paired t-test on the logarithms of the
/// pairs' ratios, with `pairs - 1` degrees of freedom, its interval taken back to a ratio.
/// Pairing by round removes whatever drifts from round to round (a node warming up, a
/// neighbour's load); what drifts within a round cancels only when the order rotates. A
/// pair with a figure that is not positive and finite is left out. Identical ratios give
/// an interval of no width, and p = 0 (1 when they are all 1).
pub fn paired_ratio(pairs: &[(f64, f64)], confidence: f64) -> PairedRatio {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|&&(a, b)| ratio_defined(a, b))
        .map(|(a, b)| (b / a).ln())
        .collect();
    let n = logs.len();
    let m = mean(&logs);
    if n < 2 {
        return PairedRatio {
            ratio: if n == 1 { m.exp() } else { f64::NAN },
            low: f64::NAN,
            high: f64::NAN,
            p_value: 1.0,
            pairs: n,
            adjusted: false,
        };
    }
    let se = (variance(&logs) / n as f64).sqrt();
    ratio_of_log(m, se, (n - 1) as f64, n, false, confidence)
}

/// Whether `b / a` has a logarithm: both positive and finite.
fn ratio_defined(a: f64, b: f64) -> bool {
    a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0
}

/// A [`PairedRatio`] from the estimate `m` of a log-ratio, its standard error `se` on `df`
/// degrees of freedom, from `pairs`.
fn ratio_of_log(
    m: f64,
    se: f64,
    df: f64,
    pairs: usize,
    adjusted: bool,
    confidence: f64,
) -> PairedRatio {
    let (margin, p_value) = if se > 0.0 {
        let q = student_t_quantile(0.5 + confidence / 2.0, df);
        (q * se, student_t_two_sided_p(m / se, df).clamp(0.0, 1.0))
    } else {
        (0.0, if m == 0.0 { 1.0 } else { 0.0 })
    };
    PairedRatio {
        ratio: m.exp(),
        low: (m - margin).exp(),
        high: (m + margin).exp(),
        p_value,
        pairs,
        adjusted,
    }
}

/// [`paired_ratio`] adjusted for a drift within rounds. Each pair `(a, b, gap)` says how
/// many places later `b` ran than `a` in its round (negative: earlier). A steady drift
/// within rounds moves each round's log-ratio in proportion to its gap, so the log-ratios
/// are fitted as `tau + beta * gap` by least squares and `tau`, the ratio had the two run at
/// the same moment, is reported with `pairs - 2` degrees of freedom (the crossover design's
/// period effect). A rotated order varies the gaps and makes this possible; when every pair
/// has the same gap (a fixed order) the drift cannot be told apart from the difference, and
/// with fewer than three pairs there is no room to fit it: both are [`paired_ratio`].
pub fn paired_ratio_adjusted(pairs: &[(f64, f64, f64)], confidence: f64) -> PairedRatio {
    let points: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|&&(a, b, g)| ratio_defined(a, b) && g.is_finite())
        .map(|(a, b, g)| (*g, (b / a).ln()))
        .collect();
    let n = points.len();
    let gaps: Vec<f64> = points.iter().map(|p| p.0).collect();
    let g_mean = mean(&gaps);
    let sxx: f64 = gaps.iter().map(|g| (g - g_mean) * (g - g_mean)).sum();
    if n < 3 || sxx <= 0.0 {
        let plain: Vec<(f64, f64)> = pairs.iter().map(|&(a, b, _)| (a, b)).collect();
        return paired_ratio(&plain, confidence);
    }
    let y_mean = mean(&points.iter().map(|p| p.1).collect::<Vec<_>>());
    let sxy: f64 = points
        .iter()
        .map(|(g, y)| (g - g_mean) * (y - y_mean))
        .sum();
    let beta = sxy / sxx;
    let tau = y_mean - beta * g_mean;
    let residual: f64 = points
        .iter()
        .map(|(g, y)| {
            let r = y - tau - beta * g;
            r * r
        })
        .sum();
    let df = (n - 2) as f64;
    let se = (residual / df * (1.0 / n as f64 + g_mean * g_mean / sxx)).sqrt();
    ratio_of_log(tau, se, df, n, true, confidence)
}

/// The Holm-adjusted p-values of a family of `m` tests, in the order given: with the raw
/// p-values sorted ascending, `p_(1) <= ... <= p_(m)`, the `i`-th adjusted one is the
/// largest of `min(1, (m - j + 1) * p_(j))` over `j <= i` (Holm's step-down method, made
/// monotone). A test whose adjusted p-value is below `alpha` is a difference shown with a
/// family-wise error rate of at most `alpha`, whatever the dependence between the tests.
/// A NaN p-value counts as 1, and one outside 0..=1 is clamped to it; `m = 1` leaves the
/// p-value as it is.
pub fn holm_adjusted(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let raw: Vec<f64> = p_values
        .iter()
        .map(|&p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    // A stable sort: ties keep their order, and get the same adjusted value anyway.
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| raw[i].total_cmp(&raw[j]));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0_f64;
    for (rank, &k) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * raw[k]).min(1.0));
        adjusted[k] = running;
    }
    adjusted
}

/// Student's t with `df` degrees of freedom (statrs); `None` when `df` is not a positive
/// number.
fn students_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// P(T <= t) for Student's t with `df` degrees of freedom (NaN when `df` is not positive).
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    students_t(df).map_or(f64::NAN, |d| d.cdf(t))
}

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom:
/// `P(|T| >= |t|)` (NaN when `df` is not positive).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    students_t(df).map_or(f64::NAN, |d| 2.0 * d.sf(t.abs()))
}

/// The `q` quantile of Student's t (NaN when `df` is not positive or `q` is outside 0..=1).
pub fn student_t_quantile(q: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(d) if (0.0..=1.0).contains(&q) => d.inverse_cdf(q),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64 + Box–Muller: a deterministic normal stream for the tests.
    struct Rng(u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn unit(&mut self) -> f64 {
            ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u1, u2) = (self.unit(), self.unit());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        }
    }

    #[test]
    fn paired_ratio_is_the_paired_t_test_on_log_ratios() {
        // Ratios 1 and 2: the geometric mean is sqrt(2); the logs' standard error is ln 2 / 2,
        // so t = 1 on 1 degree of freedom (Cauchy): p = 0.5, and the 99 % quantile is
        // 63.657.
        let r = paired_ratio(&[(3.0, 3.0), (5.0, 10.0)], 0.99);
        assert!((r.ratio - 2f64.sqrt()).abs() < 1e-12, "{r:?}");
        assert!((r.p_value - 0.5).abs() < 1e-9, "{r:?}");
        let half = 63.656_741 * std::f64::consts::LN_2 / 2.0;
        assert!(
            (r.low.ln() - (0.5 * std::f64::consts::LN_2 - half)).abs() < 1e-4,
            "{r:?}"
        );
        assert!(
            (r.high.ln() - (0.5 * std::f64::consts::LN_2 + half)).abs() < 1e-4,
            "{r:?}"
        );
        assert_eq!(r.pairs, 2);
        // The same ratio in every round: an interval of no width; p = 0, or 1 for a ratio
        // of 1.
        let same = paired_ratio(&[(1.0, 0.5), (4.0, 2.0), (9.0, 4.5)], 0.99);
        assert_eq!(
            (same.ratio, same.low, same.high, same.p_value),
            (0.5, 0.5, 0.5, 0.0)
        );
        assert_eq!(paired_ratio(&[(1.0, 1.0), (2.0, 2.0)], 0.99).p_value, 1.0);
        // Pairs with a figure that is not positive and finite are left out; fewer than two
        // leave no interval and no evidence.
        let one = paired_ratio(&[(0.0, 1.0), (2.0, f64::NAN), (2.0, 3.0)], 0.99);
        assert_eq!((one.ratio, one.pairs, one.p_value), (1.5, 1, 1.0));
        assert!(one.low.is_nan() && one.high.is_nan());
        assert!(paired_ratio(&[], 0.99).ratio.is_nan());
    }

    #[test]
    fn pairing_by_round_removes_a_drift_between_rounds() {
        // The node's pace halves over 8 rounds; both backends run at it within a few per
        // cent of noise. Unpaired, the drift makes each side's spread huge; paired, the
        // ratio is found near 1 with a narrow interval, and no difference is claimed.
        let mut rng = Rng(7);
        let pairs: Vec<(f64, f64)> = (0..8)
            .map(|r| {
                let pace = 100_000.0 * (1.0 - r as f64 / 16.0);
                (
                    pace * (1.0 + 0.01 * rng.normal()),
                    pace * (1.0 + 0.01 * rng.normal()),
                )
            })
            .collect();
        let r = paired_ratio(&pairs, 0.99);
        assert!(r.low < 1.0 && 1.0 < r.high, "{r:?}");
        assert!(r.high / r.low < 1.08, "{r:?}");
        assert!(r.p_value > 0.01, "{r:?}");
        // A real 10 % difference under the same drift is found.
        let slower: Vec<(f64, f64)> = pairs.iter().map(|&(a, b)| (a, 0.9 * b)).collect();
        let r = paired_ratio(&slower, 0.99);
        assert!(r.high < 0.95 && r.p_value < 0.001, "{r:?}");
    }

    #[test]
    fn a_drift_within_rounds_is_fitted_out_when_the_order_rotates() {
        // b is truly 0.8x a; within each round the node slows 10 % from one place to the
        // next, so the later of the two looks 10 % worse. Rotated (b second, then first):
        // the plain paired ratio is right on average but wide; the adjusted one is 0.8 and
        // narrow.
        let mut rng = Rng(11);
        let rounds: Vec<(f64, f64, f64)> = (0..8)
            .map(|r| {
                let gap = if r % 2 == 0 { 1.0 } else { -1.0 };
                let a = 1000.0 * (1.0 + 0.005 * rng.normal());
                let b = 800.0 * 0.9f64.powf(gap) * (1.0 + 0.005 * rng.normal());
                (a, b, gap)
            })
            .collect();
        let adjusted = paired_ratio_adjusted(&rounds, 0.99);
        assert!(adjusted.adjusted && adjusted.pairs == 8, "{adjusted:?}");
        assert!((adjusted.ratio - 0.8).abs() < 0.01, "{adjusted:?}");
        assert!(adjusted.low > 0.78 && adjusted.high < 0.82, "{adjusted:?}");
        let plain: Vec<(f64, f64)> = rounds.iter().map(|&(a, b, _)| (a, b)).collect();
        let plain = paired_ratio(&plain, 0.99);
        assert!(plain.high / plain.low > 1.2, "{plain:?}");
        // A fixed order (every gap 1) cannot tell the drift from the difference: the plain
        // ratio, which carries the bias (0.8 x 0.9).
        let fixed: Vec<(f64, f64, f64)> = rounds
            .iter()
            .enumerate()
            .map(|(r, &(a, _, _))| (a, 720.0 * (1.0 + 0.001 * r as f64), 1.0))
            .collect();
        let f = paired_ratio_adjusted(&fixed, 0.99);
        assert!(!f.adjusted && (f.ratio - 0.72).abs() < 0.01, "{f:?}");
        // Two pairs: no room for the fit either.
        assert!(!paired_ratio_adjusted(&rounds[..2], 0.99).adjusted);
    }

    fn all_close(got: &[f64], want: &[f64]) -> bool {
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12)
    }

    #[test]
    fn holm_adjusts_a_textbook_family_in_its_given_order() {
        // Sorted: 0.005 x 4, 0.01 x 3, 0.03 x 2, then 0.04 x 1 = 0.04 raised to 0.06.
        let adjusted = holm_adjusted(&[0.01, 0.04, 0.03, 0.005]);
        assert!(
            all_close(&adjusted, &[0.03, 0.06, 0.06, 0.02]),
            "{adjusted:?}"
        );
        // Capped at 1.
        let capped = holm_adjusted(&[0.2, 0.5, 0.9]);
        assert!(all_close(&capped, &[0.6, 1.0, 1.0]), "{capped:?}");
    }

    #[test]
    fn holm_is_monotone_in_the_raw_p_values_and_never_below_them() {
        let mut rng = Rng(7);
        for m in 1..12 {
            let raw: Vec<f64> = (0..m).map(|_| rng.unit().powi(3)).collect();
            let adjusted = holm_adjusted(&raw);
            for i in 0..m {
                assert!(
                    adjusted[i] >= raw[i] && adjusted[i] <= 1.0,
                    "{raw:?} {adjusted:?}"
                );
                for j in 0..m {
                    if raw[i] <= raw[j] {
                        assert!(adjusted[i] <= adjusted[j], "{raw:?} {adjusted:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn holm_leaves_one_test_as_it_is_and_no_test_empty() {
        assert_eq!(holm_adjusted(&[0.0123]), [0.0123]);
        assert!(holm_adjusted(&[]).is_empty());
    }

    #[test]
    fn holm_reads_nan_as_1_and_clamps_what_is_outside_0_to_1() {
        let adjusted = holm_adjusted(&[f64::NAN, 0.004, -0.5, 3.0]);
        // Sorted: 0 (from -0.5) x 4, 0.004 x 3, then 1 and 1.
        assert!(
            all_close(&adjusted, &[1.0, 0.012, 0.0, 1.0]),
            "{adjusted:?}"
        );
        assert_eq!(holm_adjusted(&[f64::NAN]), [1.0]);
    }

    #[test]
    fn batches_cover_every_sample_once_in_about_sqrt_n_groups() {
        assert_eq!(
            [0, 1, 2, 3, 4, 8, 9, 10, 20, 50, 99, 100, 3600].map(batch_count),
            [0, 1, 2, 2, 2, 2, 3, 3, 4, 7, 9, 10, 60]
        );
        let xs: Vec<f64> = (0..50).map(f64::from).collect();
        let bm = batch_means(&xs);
        assert_eq!(bm.len(), 7);
        // Sizes 7 or 8, in order.
        assert_eq!(bm[0], 3.0); // samples 0..=6
        assert_eq!(bm[6], 45.5); // samples 42..=49
    }

    /// An AR(1) series with coefficient `phi` and unit innovations.
    fn ar1(rng: &mut Rng, phi: f64, n: usize) -> Vec<f64> {
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                x = phi * x + rng.normal();
                x
            })
            .collect()
    }

    #[test]
    fn correlated_samples_are_not_found_different_more_often_than_p_says() {
        // Two runs of the same AR(1) process (phi = 0.5: each sample keeps half of the
        // previous one's deviation, as a slow disturbance spanning samples does), 50 samples
        // each: false verdicts at p < 0.01 are 2.1 % with batch means (batches of 7 still
        // carry a little of the correlation) and 15 % with the naive test.
        let mut rng = Rng(11);
        let trials = 2000;
        let (mut batched, mut naive) = (0, 0);
        for _ in 0..trials {
            let a = ar1(&mut rng, 0.5, 50);
            let b = ar1(&mut rng, 0.5, 50);
            batched += usize::from(welch_t_test(&a, &b).p_value < 0.01);
            naive += usize::from(welch_t_test_raw(&a, &b).p_value < 0.01);
        }
        let (batched, naive) = (batched as f64 / trials as f64, naive as f64 / trials as f64);
        assert!(batched <= 0.03, "batch means: {batched}");
        assert!(naive >= 0.10, "naive: {naive}");
    }

    #[test]
    fn a_real_difference_is_still_found() {
        // Means 0 and 1.5 standard deviations apart, 50 samples each: found at p < 0.001.
        let mut rng = Rng(5);
        let a: Vec<f64> = (0..50).map(|_| rng.normal()).collect();
        let b: Vec<f64> = (0..50).map(|_| 1.5 + rng.normal()).collect();
        let r = welch_t_test(&a, &b);
        assert!(r.p_value < 0.001 && r.t > 0.0, "{r:?}");
    }

    #[test]
    fn welch_matches_reference_values() {
        // R: t.test(b, a) with a = 1..10 and b = c(7:20): the classic textbook pair;
        // t = 5.4349 (b - a), df = 21.982, p-value = 1.855e-05.
        let a: Vec<f64> = (1..=10).map(f64::from).collect();
        let b: Vec<f64> = (7..=20).map(f64::from).collect();
        let r = welch_t_test_raw(&a, &b);
        assert!((r.t - 5.4349).abs() < 1e-3, "{r:?}");
        assert!((r.df - 21.982).abs() < 1e-2, "{r:?}");
        assert!((r.p_value - 1.855e-5).abs() < 1e-7, "{r:?}");
        // Equal samples: no evidence.
        let same = welch_t_test_raw(&a, &a);
        assert!((same.p_value - 1.0).abs() < 1e-12);
        // Degenerate inputs do not give NaN.
        assert_eq!(welch_t_test(&[1.0], &a).p_value, 1.0);
        assert_eq!(welch_t_test(&[2.0, 2.0], &[2.0, 2.0]).p_value, 1.0);
        assert_eq!(welch_t_test(&[2.0, 2.0], &[3.0, 3.0]).p_value, 0.0);
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 95 % critical values: df 1 -> 12.706, df 10 -> 2.228, df 30 -> 2.042.
        for (df, crit) in [(1.0, 12.706), (10.0, 2.228), (30.0, 2.042)] {
            let q = student_t_quantile(0.975, df);
            assert!((q - crit).abs() < 1e-3, "df {df}: {q}");
            assert!((student_t_cdf(crit, df) - 0.975).abs() < 1e-4);
            assert!((student_t_two_sided_p(crit, df) - 0.05).abs() < 1e-4);
            assert!((student_t_two_sided_p(-crit, df) - 0.05).abs() < 1e-4);
        }
        // Two-sided 99 % critical values: df 2 -> 9.925, df 5 -> 4.032, df 20 -> 2.845.
        for (df, crit) in [(2.0, 9.925), (5.0, 4.032), (20.0, 2.845)] {
            let q = student_t_quantile(0.995, df);
            assert!((q - crit).abs() < 1e-3, "df {df}: {q}");
            assert!((student_t_two_sided_p(crit, df) - 0.01).abs() < 1e-4);
        }
        // Fractional degrees of freedom (Welch): qt(0.975, 21.982) = 2.0740 in R.
        assert!((student_t_quantile(0.975, 21.982) - 2.0740).abs() < 1e-3);
        assert!((student_t_cdf(0.0, 5.0) - 0.5).abs() < 1e-12);
        assert!((student_t_quantile(0.5, 7.0)).abs() < 1e-9);
        // No distribution without degrees of freedom: NaN, never a made-up number.
        assert!(student_t_quantile(0.975, 0.0).is_nan());
        assert!(student_t_two_sided_p(1.0, -1.0).is_nan());
        assert!(student_t_quantile(1.5, 10.0).is_nan());
    }

    #[test]
    fn the_margin_covers_the_mean_with_and_without_correlation() {
        // i.i.d. normal: the 95 % interval covers the true mean about 95 % of the time.
        let mut rng = Rng(7);
        let trials = 2000;
        let covered = (0..trials)
            .filter(|_| {
                let xs: Vec<f64> = (0..30).map(|_| 10.0 + rng.normal()).collect();
                let e = estimate(&xs, 0.95);
                (e.mean - 10.0).abs() <= e.margin
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.92..=0.98).contains(&rate), "coverage {rate}");
        // A correlated series (AR(1), phi = 0.5, 400 samples: 20 batches of 20): the
        // interval still covers the true mean (0) about 95 % of the time, where the naive
        // one, about 58 % as wide, would cover it about 75 % of the time.
        let covered = (0..trials)
            .filter(|_| {
                let xs = ar1(&mut rng, 0.5, 400);
                let e = estimate(&xs, 0.95);
                e.mean.abs() <= e.margin
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.91..=0.98).contains(&rate), "correlated coverage {rate}");
    }

    #[test]
    fn merged_histograms_equal_one_histogram_of_all_values() {
        let mut rng = Rng(3);
        let values: Vec<u64> = (0..100_000)
            .map(|_| (rng.unit() * 5e6) as u64 + 1000)
            .collect();
        let mut all = LatencyHistogram::new();
        let mut parts = vec![
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        ];
        for (k, v) in values.iter().enumerate() {
            all.record(*v);
            parts[k % 3].record(*v);
        }
        let mut merged = LatencyHistogram::new();
        for p in &parts {
            merged.merge(p);
        }
        assert_eq!(merged.count(), all.count());
        assert_eq!(merged.min(), all.min());
        assert_eq!(merged.max(), all.max());
        assert_eq!(merged.percentiles(), all.percentiles());
        assert!((merged.mean() - all.mean()).abs() < 1e-6);
    }

    #[test]
    fn base64_round_trip_and_interval_log() {
        let mut h = LatencyHistogram::new();
        for v in [1_000u64, 2_000, 2_000, 50_000, 9_000_000] {
            h.record(v);
        }
        h.record(MAX_LATENCY_NS * 2);
        assert_eq!(h.saturated(), 1);
        let back = LatencyHistogram::from_base64(&h.to_base64()).unwrap();
        assert_eq!(back.count(), h.count());
        assert_eq!(back.percentiles(), h.percentiles());
        assert!(LatencyHistogram::from_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_base64("AAAA").is_err());

        let mut log = Vec::new();
        write_interval_log(
            &mut log,
            1_700_000_000.0,
            &[(0.0, 1.0, &h), (1.0, 1.0, &back)],
        )
        .unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[StartTime: 1700000000.000"), "{text}");
        let read: Vec<_> =
            hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&log)
                .filter_map(|e| match e {
                    Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(i)) => Some(i),
                    _ => None,
                })
                .collect();
        assert_eq!(read.len(), 2);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(read[1].encoded_histogram())
            .unwrap();
        let h2: Histogram<u64> = Deserializer::new()
            .deserialize(&mut decoded.as_slice())
            .unwrap();
        assert_eq!(h2.len(), h.count());
    }
}
