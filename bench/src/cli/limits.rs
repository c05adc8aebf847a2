//! The allowed range of every numeric option of `load`, `run` and `findmax`, checked by the
//! option parser: a value out of range is refused before anything starts (exit 2, one line
//! naming the option, the value and the range), never silently replaced. The bounds keep
//! every option from making the bench allocate without bound:
//!
//! | option | allowed | why the bound |
//! |---|---|---|
//! | `-p/--concurrency` | 1 to 1,000,000 | a fiber of ~4 KiB each (100,000: 426 MiB) |
//! | `-t/--threads` | 1 to 1,024 | one shard or worker thread each |
//! | `-c/--connections` | 1 to 256 per node (per shard) | a socket and buffers each |
//! | `--segments` | 1 to 1,000 | a connect and a warm-up each |
//! | `--retries` | 0 to 100 | |
//! | `--refine` | 0 to 30 | bisection rounds: 30 halve any bracket below 1 req/s |
//! | `-s/--sampling` | at least 1ms | a sample spilled per interval (0 grew to 17.5 GB) |
//! | `--progress-every` | at least 100ms | |
//! | `--timeout` | 1ms to 1h | |
//! | `--step-duration` | at least 100ms | |
//! | `-d/--duration` | at least 1 iteration or a time above 0 | |
//! | `-r/--rate` | not a constant 0 (a schedule may pass through 0) | a rate of 0 sends nothing |
//! | `--timer-slack` | 0 to 100ms | the runtime's own bound |
//! | `--batch-wait` | 0 to 10ms | the runtime's own bound: an answer waits this long at most |
//! | `--release-grid` | 0 (each request at its own due time) to 1s | a coarser grid turns a rate into bursts |
//! | `--equal-load`, each of `curve --loads` | above 0 and at most 100 % | a share of the slowest capacity: 0 sends nothing, above 100 % is no longer paced |
//! | `nemesis -d/--duration` | 10s to 24h | a fault needs time to start and heal within the run |
//! | `nemesis --mean-gap`, `--fault-min`, `--fault-max`, `--settle` | 1s to 1h (`--settle` from 0) | |
//! | `nemesis --keys` | 1 to 1,000,000 | one read at `ALL` each after the run |
//! | `nemesis --nodes` | 1 to 9 | the cluster scripts' most |
//! | `curve --loads` | 1 to 20 loads, none twice | a point's rounds each (at 10s a point, 20 points take an hour) |

use std::time::Duration;

use crate::engine::schedule::{RateSchedule, ScheduleError};
use crate::engine::Limit;
use crate::units::{self, DurationError, UnitError};

/// The most concurrent requests a run may ask for.
pub(crate) const MAX_CONCURRENCY: u64 = 1_000_000;
/// The most threads (doppio shards or tokio workers).
pub(crate) const MAX_THREADS: u64 = 1024;
/// The most connections per node (doppio: per shard and node).
pub(crate) const MAX_CONNECTIONS: u64 = 256;
/// The most segments per driver.
pub(crate) const MAX_SEGMENTS: u64 = 1000;
/// The most retries per request.
pub(crate) const MAX_RETRIES: u64 = 100;
/// The most bisection rounds of `findmax --refine`.
pub(crate) const MAX_REFINE: u64 = 30;
/// `--waterfall N`: one request in at most a billion is timed.
pub(crate) const MAX_WATERFALL: u64 = 1_000_000_000;
/// The shortest sample interval.
pub(crate) const MIN_SAMPLE_INTERVAL: Duration = Duration::from_millis(1);
/// The shortest interval between progress lines.
pub(crate) const MIN_PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// The longest request timeout.
pub(crate) const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(3600);
/// The shortest findmax step.
pub(crate) const MIN_STEP_DURATION: Duration = Duration::from_millis(100);
/// The most loads of `curve --loads`.
pub(crate) const MAX_LOADS: usize = 20;

/// Why an option's value is refused (clap prints it after the option's name).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum OptionError {
    /// Not a whole number, or one outside the option's range.
    #[error("`{text}` is not a whole number from {min} to {max}")]
    NotWholeWithin {
        /// The text given.
        text: String,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
    /// Not a duration or a count in the bench's grammar.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// A bare number that no unit would bring into the option's range (`-s 0`).
    #[error(
        "`{text}` is not a duration: a number needs its unit, and this option takes {range} \
         (e.g. 1s or 500ms)"
    )]
    BareNumberOutOfRange {
        /// The text given.
        text: String,
        /// The allowed range.
        range: String,
    },
    /// A duration outside the option's range.
    #[error("`{text}` is out of range: {range}")]
    DurationOutOfRange {
        /// The text given.
        text: String,
        /// The allowed range, as a reader wants it (`from 1ms to 3600s`, `at least 1ms`).
        range: String,
    },
    /// A run length of 0 iterations or no time.
    #[error("`{text}` measures nothing: give at least 1 iteration or a time above 0")]
    MeasuresNothing {
        /// The text given.
        text: String,
    },
    /// Not a rate or a rate schedule.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// An SQPOLL idle time the kernel does not take.
    #[error("the SQPOLL idle time must be whole milliseconds from 1ms to {max_secs}s")]
    SqPollIdle {
        /// The longest idle time, in seconds.
        max_secs: u64,
    },
    /// Neither a core number nor `none`.
    #[error("`{text}` is neither a core number nor `none`")]
    NotACore {
        /// The text given.
        text: String,
    },
    /// Not a share of the slowest backend's capacity.
    #[error(
        "`{text}` is not a share of the slowest backend's capacity: give a percentage above \
         0 and at most 100 (70%) or a fraction (0.7)"
    )]
    NotAShare {
        /// The text given.
        text: String,
    },
    /// A constant rate of 0.
    #[error("`{text}` sends nothing: give a rate above 0 (leave -r out for no limit)")]
    SendsNothing {
        /// The text given.
        text: String,
    },
    /// A list of loads with no load in it, or an empty entry.
    #[error(
        "`{text}` is not a list of loads: give shares of the slowest backend's capacity \
         separated by commas (10%,30%,50%)"
    )]
    NoLoads {
        /// The text given.
        text: String,
    },
    /// A load given twice (to the hundredth of a percent, as the points' files are named).
    #[error("`{text}`: `{again}` repeats the load {percent} % given before it")]
    RepeatedLoad {
        /// The whole list.
        text: String,
        /// The entry that repeats one.
        again: String,
        /// The load, in percent.
        percent: String,
    },
    /// More loads than a curve takes.
    #[error("`{text}` gives {count} loads: a curve takes at most {max}")]
    TooManyLoads {
        /// The whole list.
        text: String,
        /// How many it gives.
        count: usize,
        /// The most allowed.
        max: usize,
    },
}

/// A whole number within `min..=max` as the option's type (every bound here fits `usize`
/// and `u32`, so the conversion fails only for a range it was not made for).
fn whole<T: TryFrom<u64>>(text: &str, min: u64, max: u64) -> Result<T, OptionError> {
    let refused = || OptionError::NotWholeWithin {
        text: text.to_owned(),
        min,
        max,
    };
    match text.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => T::try_from(n).map_err(|_| refused()),
        _ => Err(refused()),
    }
}

/// `-p/--concurrency`.
pub(crate) fn concurrency(text: &str) -> Result<usize, OptionError> {
    whole(text, 1, MAX_CONCURRENCY)
}

/// `-t/--threads`.
pub(crate) fn threads(text: &str) -> Result<usize, OptionError> {
    whole(text, 1, MAX_THREADS)
}

/// `-c/--connections`.
pub(crate) fn connections(text: &str) -> Result<usize, OptionError> {
    whole(text, 1, MAX_CONNECTIONS)
}

/// `nemesis --keys`.
pub(crate) fn nemesis_keys(text: &str) -> Result<i64, OptionError> {
    whole(text, 1, 1_000_000)
}

/// `nemesis --nodes`.
pub(crate) fn nemesis_nodes(text: &str) -> Result<usize, OptionError> {
    whole(text, 1, 9)
}

/// `nemesis -d/--duration`.
pub(crate) fn nemesis_duration(text: &str) -> Result<Duration, OptionError> {
    duration_within(
        text,
        Duration::from_secs(10),
        Some(Duration::from_secs(24 * 3600)),
    )
}

/// `nemesis --mean-gap`, `--fault-min`, `--fault-max`.
pub(crate) fn nemesis_interval(text: &str) -> Result<Duration, OptionError> {
    duration_within(
        text,
        Duration::from_secs(1),
        Some(Duration::from_secs(3600)),
    )
}

/// `nemesis --settle`.
pub(crate) fn nemesis_settle(text: &str) -> Result<Duration, OptionError> {
    zero_or_within(text, Duration::from_secs(3600))
}

/// `--segments`.
pub(crate) fn segments(text: &str) -> Result<usize, OptionError> {
    whole(text, 1, MAX_SEGMENTS)
}

/// `--retries`.
pub(crate) fn retries(text: &str) -> Result<u32, OptionError> {
    whole(text, 0, MAX_RETRIES)
}

/// `--refine`.
pub(crate) fn refine(text: &str) -> Result<u32, OptionError> {
    whole(text, 0, MAX_REFINE)
}

/// `--waterfall`.
pub(crate) fn waterfall(text: &str) -> Result<u64, OptionError> {
    whole(text, 1, MAX_WATERFALL)
}

/// A duration with its unit within `min..=max` (`max` none: no upper bound).
fn duration_within(
    text: &str,
    min: Duration,
    max: Option<Duration>,
) -> Result<Duration, OptionError> {
    let range = || match max {
        Some(max) => format!("from {min:?} to {max:?}"),
        None => format!("at least {min:?}"),
    };
    let within = |d: Duration| d >= min && max.is_none_or(|max| d <= max);
    let d = match units::duration(text) {
        Ok(d) => d,
        // A bare number: the hint names units that give a duration this option takes
        // (`0` on an option of at least 1ms is not helped by `0s`).
        Err(UnitError::Duration(DurationError::BareNumber { .. }))
            if ["s", "ms"].iter().all(|unit| {
                units::duration(&format!("{text}{unit}")).map_or(true, |d| !within(d))
            }) =>
        {
            return Err(OptionError::BareNumberOutOfRange {
                text: text.to_owned(),
                range: range(),
            })
        }
        Err(e) => return Err(e.into()),
    };
    if !within(d) {
        return Err(OptionError::DurationOutOfRange {
            text: text.to_owned(),
            range: range(),
        });
    }
    Ok(d)
}

/// `-s/--sampling` of `run` and `findmax`.
pub(crate) fn sample_interval(text: &str) -> Result<Duration, OptionError> {
    duration_within(text, MIN_SAMPLE_INTERVAL, None)
}

/// `--progress-every`.
pub(crate) fn progress_every(text: &str) -> Result<Duration, OptionError> {
    duration_within(text, MIN_PROGRESS_EVERY, None)
}

/// `--timeout`.
pub(crate) fn request_timeout(text: &str) -> Result<Duration, OptionError> {
    duration_within(text, Duration::from_millis(1), Some(MAX_REQUEST_TIMEOUT))
}

/// `findmax --step-duration`.
pub(crate) fn step_duration(text: &str) -> Result<Duration, OptionError> {
    duration_within(text, MIN_STEP_DURATION, None)
}

/// `--release-grid`: 0 (`0`, `0s`, `off`: each request released at its own due time) to
/// [`crate::engine::grid::MAX_STEP`].
pub(crate) fn release_grid(text: &str) -> Result<Duration, OptionError> {
    zero_or_within(text, crate::engine::grid::MAX_STEP)
}

/// `--timer-slack`: 0 to the io_uring runtime's longest.
pub(crate) fn timer_slack(text: &str) -> Result<Duration, OptionError> {
    zero_or_within(text, doppio_driver::rt::uring::Config::MAX_TIMER_SLACK)
}

/// `--batch-wait`: 0 (off) to the io_uring runtime's longest.
pub(crate) fn batch_wait(text: &str) -> Result<Duration, OptionError> {
    zero_or_within(text, doppio_driver::rt::uring::Config::MAX_BATCH_WAIT)
}

/// A duration from 0 (`0` or `off` too) to `max`.
fn zero_or_within(text: &str, max: Duration) -> Result<Duration, OptionError> {
    if matches!(text.trim(), "0" | "off") {
        return Ok(Duration::ZERO);
    }
    duration_within(text, Duration::ZERO, Some(max))
}

/// `run -d/--duration`: some iterations or some time (the warm-up may be 0).
pub(crate) fn run_length(text: &str) -> Result<Limit, OptionError> {
    match Limit::parse(text)? {
        Limit::Count(0) | Limit::Time(Duration::ZERO) => Err(OptionError::MeasuresNothing {
            text: text.to_owned(),
        }),
        limit => Ok(limit),
    }
}

/// `--equal-load`: a share of the slowest backend's capacity, `70%` or `0.7`, above 0 and at
/// most 1.
pub(crate) fn share(text: &str) -> Result<f64, OptionError> {
    let refused = || OptionError::NotAShare {
        text: text.to_owned(),
    };
    let t = text.trim();
    let x = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map_err(|_| refused())? / 100.0,
        None => t.parse::<f64>().map_err(|_| refused())?,
    };
    if x.is_finite() && x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(refused())
    }
}

/// `curve --loads`: shares of the slowest backend's capacity, in the order they run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loads(pub Vec<f64>);

impl Loads {
    /// A load as a percentage for names and tables: to the hundredth, trailing zeros cut
    /// (`0.3` is `30`, `0.125` is `12.5`); two loads of one label are one load.
    pub(crate) fn percent(share: f64) -> String {
        let text = format!("{:.2}", share * 100.0);
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// `curve --loads`: 1 to [`MAX_LOADS`] shares separated by commas, each as
/// [`share`] takes it, none twice.
pub(crate) fn loads(text: &str) -> Result<Loads, OptionError> {
    let entries: Vec<&str> = text.split(',').map(str::trim).collect();
    if entries.iter().any(|e| e.is_empty()) {
        return Err(OptionError::NoLoads {
            text: text.to_owned(),
        });
    }
    if entries.len() > MAX_LOADS {
        return Err(OptionError::TooManyLoads {
            text: text.to_owned(),
            count: entries.len(),
            max: MAX_LOADS,
        });
    }
    let mut shares: Vec<f64> = Vec::with_capacity(entries.len());
    for entry in entries {
        let x = share(entry)?;
        let percent = Loads::percent(x);
        if shares.iter().any(|&s| Loads::percent(s) == percent) {
            return Err(OptionError::RepeatedLoad {
                text: text.to_owned(),
                again: entry.to_owned(),
                percent,
            });
        }
        shares.push(x);
    }
    Ok(Loads(shares))
}

/// `-r/--rate` of `load` and `run`: a constant rate of 0 sends nothing.
pub(crate) fn rate_limit(text: &str) -> Result<RateSchedule, OptionError> {
    let schedule = RateSchedule::parse(text)?;
    if schedule.constant() == Some(0.0) {
        return Err(OptionError::SendsNothing {
            text: text.to_owned(),
        });
    }
    Ok(schedule)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare number's hint names a unit only where that unit gives a value the option
    /// takes: `-s 5` is told `5s`, `-s 0` is told the range instead of `0s`.
    #[test]
    fn a_bare_number_is_hinted_with_a_unit_the_option_takes() {
        let five = sample_interval("5").unwrap_err().to_string();
        assert!(five.contains("`5s`"), "{five}");
        let zero = sample_interval("0").unwrap_err().to_string();
        assert!(!zero.contains("`0s`"), "{zero}");
        assert!(zero.contains("at least 1ms"), "{zero}");
        let huge = request_timeout("9999999").unwrap_err().to_string();
        assert!(huge.contains("from 1ms to 3600s"), "{huge}");
    }

    #[test]
    fn counts_are_refused_outside_their_range() {
        type Parser = fn(&str) -> Result<usize, OptionError>;
        let table: [(Parser, &str, &str); 4] = [
            (concurrency, "1", "1000000"),
            (threads, "1", "1024"),
            (connections, "1", "256"),
            (segments, "1", "1000"),
        ];
        for (parse, low, high) in table {
            assert!(parse(low).is_ok() && parse(high).is_ok());
            for bad in [
                "0",
                "-1",
                "1000001",
                "99999999999999999999",
                "",
                "ten",
                "1.5",
            ] {
                let e = parse(bad).unwrap_err().to_string();
                assert!(e.contains(&format!("from {low} to {high}")), "{e}");
            }
        }
        assert_eq!(retries("0"), Ok(0));
        assert_eq!(retries("100"), Ok(100));
        assert!(retries("101").is_err() && retries("-1").is_err());
        assert_eq!(refine("30"), Ok(30));
        assert!(refine("31").is_err());
    }

    #[test]
    fn durations_are_refused_outside_their_range() {
        assert_eq!(sample_interval("2ms"), Ok(Duration::from_millis(2)));
        assert!(sample_interval("0").is_err());
        assert!(sample_interval("0s").is_err());
        assert!(sample_interval("500us").is_err());
        assert!(sample_interval("-1s").is_err());
        assert!(progress_every("99ms").is_err());
        assert!(progress_every("1s").is_ok());
        assert!(request_timeout("0s").is_err());
        assert!(request_timeout("1h").is_ok());
        let e = request_timeout("2h").unwrap_err().to_string();
        assert!(e.contains("from 1ms to 3600s"), "{e}");
        assert!(step_duration("50ms").is_err());
        assert!(step_duration("1500ms").is_ok());
        assert_eq!(release_grid("0"), Ok(Duration::ZERO));
        assert_eq!(release_grid("off"), Ok(Duration::ZERO));
        assert_eq!(release_grid("0s"), Ok(Duration::ZERO));
        assert_eq!(release_grid("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(release_grid("1s"), Ok(Duration::from_secs(1)));
        for bad in ["2s", "-1ms", "1", "fast", ""] {
            assert!(release_grid(bad).is_err(), "{bad}");
        }
        assert_eq!(timer_slack("off"), Ok(Duration::ZERO));
        assert_eq!(timer_slack("100ms"), Ok(Duration::from_millis(100)));
        assert!(timer_slack("101ms").is_err() && timer_slack("-1us").is_err());
        assert_eq!(batch_wait("250us"), Ok(Duration::from_micros(250)));
        assert!(batch_wait("11ms").is_err() && batch_wait("7").is_err());
        let e = release_grid("5").unwrap_err().to_string();
        assert!(e.contains("`5ms`") || e.contains("unit"), "{e}");
    }

    #[test]
    fn time_only_options_refuse_a_bare_number_and_months() {
        type Parser = fn(&str) -> Result<Duration, OptionError>;
        let table: [(&str, Parser); 4] = [
            ("-s", sample_interval),
            ("--progress-every", progress_every),
            ("--timeout", request_timeout),
            ("--step-duration", step_duration),
        ];
        for (option, parse) in table {
            // `--timeout 5000` was 83 minutes; now it says how to write what was meant.
            let e = parse("5000").unwrap_err().to_string();
            assert_eq!(
                e, "`5000` is not a duration: a number needs its unit, e.g. `5000s` or `5000ms`",
                "{option}"
            );
            let e = parse("1M").unwrap_err().to_string();
            assert!(e.contains("`M` is not a unit of time"), "{option}: {e}");
            assert_eq!(parse("2s"), Ok(Duration::from_secs(2)), "{option}");
        }
        // -d takes either: a number is iterations, with a time unit a time; `1M` a million.
        assert_eq!(run_length("1M"), Ok(Limit::Count(1_000_000)));
        assert_eq!(run_length("1m"), Ok(Limit::Time(Duration::from_secs(60))));
        assert_eq!(run_length("5000"), Ok(Limit::Count(5000)));
    }

    #[test]
    fn a_list_of_loads_takes_shares_each_once_and_names_the_entry_it_refuses() {
        assert_eq!(
            loads("10%,30%,50%,70%,90%"),
            Ok(Loads(vec![0.1, 0.3, 0.5, 0.7, 0.9]))
        );
        // In the order given, fractions and percentages alike, 100 % included.
        assert_eq!(loads(" 0.9 , 20% ,100%"), Ok(Loads(vec![0.9, 0.2, 1.0])));
        for (bad, named) in [("10%,0%", "`0%`"), ("150%", "`150%`"), ("30%,abc", "`abc`")] {
            let e = loads(bad).unwrap_err();
            assert!(matches!(e, OptionError::NotAShare { .. }), "{bad}: {e:?}");
            let e = e.to_string();
            assert!(e.starts_with(named), "{bad}: {e}");
            assert!(e.contains("above 0 and at most 100"), "{bad}: {e}");
        }
        for empty in ["", " ", "10%,,30%", "10%,"] {
            let e = loads(empty).unwrap_err();
            assert_eq!(
                e,
                OptionError::NoLoads {
                    text: empty.to_owned()
                }
            );
            assert!(e.to_string().contains("separated by commas"), "{e}");
        }
        // 30% and 0.3 are one load; so are two that name one file (load-30.json).
        for (twice, again) in [
            ("30%,50%,30%", "30%"),
            ("30%,0.3", "0.3"),
            ("30%,30.001%", "30.001%"),
        ] {
            let e = loads(twice).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("`{twice}`: `{again}` repeats the load 30 % given before it")
            );
        }
        assert!(loads("30%,30.01%").is_ok());
        let twenty: Vec<String> = (1..=20).map(|k| format!("{}%", k * 5)).collect();
        assert_eq!(loads(&twenty.join(",")).map(|l| l.0.len()), Ok(20));
        let many: Vec<String> = (1..=21).map(|k| format!("{}%", k * 4)).collect();
        let e = loads(&many.join(",")).unwrap_err().to_string();
        assert!(
            e.contains("gives 21 loads: a curve takes at most 20"),
            "{e}"
        );
        assert!(e.starts_with("`4%,8%,"), "{e}");
        assert_eq!(Loads::percent(0.125), "12.5");
        assert_eq!(Loads::percent(1.0), "100");
        assert_eq!(Loads::percent(0.0001), "0.01");
    }

    #[test]
    fn a_run_of_nothing_and_a_rate_of_nothing_are_refused() {
        for nothing in ["0", "0s", "0ms"] {
            let e = run_length(nothing).unwrap_err().to_string();
            assert!(e.contains("measures nothing"), "{e}");
        }
        assert_eq!(run_length("1"), Ok(Limit::Count(1)));
        assert_eq!(run_length("2s"), Ok(Limit::Time(Duration::from_secs(2))));
        let e = rate_limit("0").unwrap_err().to_string();
        assert!(e.contains("sends nothing"), "{e}");
        assert!(rate_limit("10k").is_ok());
        // A schedule through 0 is a schedule, not nothing.
        assert!(rate_limit("ramp:0..10k/10s").is_ok());
    }
}
