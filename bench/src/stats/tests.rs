//! The tests of the statistics: margins and t-tests on correlated samples, Welch and
//! Student's t against reference values, paired ratios and drift, Holm, histograms.

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use super::batch_means::{batch_count, batch_means, estimate};
use super::histogram::{write_interval_log, LatencyHistogram, MAX_LATENCY_NS};
use super::holm::holm_adjusted;
use super::paired::{paired_ratio, paired_ratio_adjusted};
use super::student_t::{student_t_cdf, student_t_quantile, student_t_two_sided_p};
use super::welch::{welch_t_test, welch_t_test_raw};

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
    let read: Vec<_> = hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&log)
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
