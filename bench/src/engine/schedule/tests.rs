//! The schedule's tests: parsing, its errors, and the due times of ramps, steps, sines,
//! rates of zero and Poisson arrivals.

use super::parse::DEFAULT_SEED;
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
    assert!(matches!(err("sine:10k,20k,60s"), E::Sine { part, .. } if part == "sine:10k,20k,60s"));
    assert!(matches!(err("sine:0,0,60s"), E::Sine { .. }));
    assert!(matches!(err("sine:20k,10k,0s"), E::ZeroDuration { .. }));
    assert!(matches!(err("1k,poisson,poisson:3"), E::Poisson { part, .. } if part == "poisson:3"));
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
