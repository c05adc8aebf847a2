//! Progress of a phase on stderr: elapsed and remaining time (or iterations), the last
//! sample's rate and p99, and the errors so far. On a terminal it is one live bar
//! (indicatif); otherwise (CI logs, `nohup`, a pipe) a plain line every `--progress-every`
//! (10 s by default) and one when the phase ends. `--quiet` silences both.
//!
//! What the lines say is true of the phase: a warm-up, whose samples keep no figures, says
//! it is warming up instead of a rate of 0 and a p99 of 0; the end of a phase is one line
//! (never the last line again), and a phase stopped early (Ctrl-C, a failure) says where
//! it stopped rather than what was left.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::collect::Sample;
use crate::engine::Limit;

/// How progress is shown.
enum Mode {
    Off,
    Bar(ProgressBar),
    /// Plain lines, one per `every` of phase time.
    Lines {
        every: Duration,
        next: Duration,
    },
}

/// One phase's progress display.
pub(crate) struct Progress {
    mode: Mode,
    label: String,
    limit: Limit,
    /// Phase time covered by the samples so far.
    elapsed: Duration,
    requests: u64,
    errors: u64,
    /// The last sample's rate and p99 (ms).
    rate: f64,
    p99_ms: f64,
    /// The last sample's target rate (rate-limited phases).
    target: Option<f64>,
    /// A warm-up: its samples keep no figures, so none are shown.
    warming_up: bool,
    /// The phase time of the last plain line printed.
    printed_at: Option<Duration>,
}

/// How a phase ended, as its last progress line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PhaseEnd {
    /// It ran to its limit.
    Completed,
    /// It stopped before (Ctrl-C, an outage, a failure).
    Stopped,
}

impl Progress {
    /// Progress of a phase called `label` that runs until `limit`.
    pub(crate) fn new(quiet: bool, label: &str, limit: Limit, every: Duration) -> Self {
        let mode = if quiet {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            let (len, template) = match limit {
                Limit::Time(d) => (
                    d.as_millis() as u64,
                    "{prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta}) {msg}",
                ),
                Limit::Count(n) => (
                    n,
                    "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta}) {msg}",
                ),
            };
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.set_prefix(format!("[{label}]"));
            Mode::Bar(bar)
        } else {
            Mode::Lines {
                every: every.max(Duration::from_millis(100)),
                next: every,
            }
        };
        Self {
            mode,
            label: label.to_owned(),
            limit,
            elapsed: Duration::ZERO,
            requests: 0,
            errors: 0,
            rate: 0.0,
            p99_ms: 0.0,
            target: None,
            warming_up: false,
            printed_at: None,
        }
    }

    /// A warm-up's progress: its samples keep no figures (the lines say it warms up).
    pub(crate) fn warming_up(mut self) -> Self {
        self.warming_up = true;
        self
    }

    /// Takes one merged sample.
    pub(crate) fn sample(&mut self, s: &Sample) {
        if matches!(self.mode, Mode::Off) {
            return;
        }
        self.elapsed = s.start + s.duration;
        self.requests += s.requests;
        self.errors += s.error_count();
        self.rate = s.throughput();
        self.target = s.target_rps;
        self.p99_ms = s.latency.value_at_percentile(99.0) as f64 / 1e6;
        let position = match self.limit {
            Limit::Time(_) => self.elapsed.as_millis() as u64,
            Limit::Count(_) => self.requests,
        };
        let elapsed = self.elapsed;
        let (figures, line) = (self.figures(), self.line());
        match &mut self.mode {
            Mode::Off => {}
            Mode::Bar(bar) => {
                bar.set_position(position);
                bar.set_message(figures);
            }
            Mode::Lines { every, next } => {
                if elapsed >= *next {
                    while *next <= elapsed {
                        *next += *every;
                    }
                    eprintln!("{line}");
                    self.printed_at = Some(elapsed);
                }
            }
        }
    }

    /// The phase has ended as `end` says.
    pub(crate) fn done(&mut self, end: PhaseEnd) {
        match &self.mode {
            Mode::Off => {}
            Mode::Bar(bar) => bar.finish_and_clear(),
            Mode::Lines { .. } => eprintln!("{}", self.last_line(end)),
        }
        self.mode = Mode::Off;
    }

    /// The line that ends the phase: how far it got and why it ended; the figures only if
    /// no line has shown them at this point already.
    fn last_line(&self, end: PhaseEnd) -> String {
        let fresh = self.printed_at != Some(self.elapsed);
        let figures = if fresh && !self.warming_up {
            format!(": {}", self.figures())
        } else {
            String::new()
        };
        match end {
            PhaseEnd::Completed => format!(
                "[{}] done after {:.1}s{figures}",
                self.label,
                self.elapsed.as_secs_f64()
            ),
            PhaseEnd::Stopped => format!(
                "[{}] stopped at {:.1}s, before its end{figures}",
                self.label,
                self.elapsed.as_secs_f64()
            ),
        }
    }

    fn figures(&self) -> String {
        if self.warming_up {
            return "warming up (no figures kept)".to_owned();
        }
        let target = self
            .target
            .map_or(String::new(), |t| format!(" (target {t:.0})"));
        format!(
            "{:.0} req/s{target}  p99 {:.3} ms  errors {}",
            self.rate, self.p99_ms, self.errors
        )
    }

    /// The plain line: label, elapsed, what is left, figures.
    fn line(&self) -> String {
        let left = match self.limit {
            Limit::Time(d) => format!("{:.0}s left", d.saturating_sub(self.elapsed).as_secs_f64()),
            Limit::Count(n) => {
                format!("{} of {n} iterations left", n.saturating_sub(self.requests))
            }
        };
        format!(
            "[{}] {:.1}s, {left}: {}",
            self.label,
            self.elapsed.as_secs_f64(),
            self.figures()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatencyHistogram;

    fn sample(i: u64) -> Sample {
        let mut latency = LatencyHistogram::new();
        latency.record(2_000_000);
        Sample {
            index: i,
            start: Duration::from_secs(i),
            duration: Duration::from_secs(1),
            requests: 100,
            rows: 0,
            errors: vec![("timeout", 1)],
            latency,
            service: LatencyHistogram::new(),
            mean_lateness_ns: 0.0,
            target_rps: None,
            statements: Vec::new(),
            nodes: Vec::new(),
            tablet_misroutes: None,
        }
    }

    /// Plain-line progress of a 10 s phase called `doppio`, a line every `every` seconds.
    fn lines(every: u64, warming_up: bool) -> Progress {
        Progress {
            mode: Mode::Lines {
                every: Duration::from_secs(every),
                next: Duration::from_secs(every),
            },
            label: "doppio".into(),
            limit: Limit::Time(Duration::from_secs(10)),
            elapsed: Duration::ZERO,
            requests: 0,
            errors: 0,
            rate: 0.0,
            p99_ms: 0.0,
            target: None,
            warming_up,
            printed_at: None,
        }
    }

    #[test]
    fn plain_lines_say_elapsed_left_rate_p99_and_errors() {
        let mut p = lines(2, false);
        p.sample(&sample(0));
        p.sample(&sample(1));
        let line = p.line();
        assert!(
            line.starts_with("[doppio] 2.0s, 8s left: 100 req/s"),
            "{line}"
        );
        assert!(line.contains("p99 2.00"), "{line}");
        assert!(line.ends_with("errors 2"), "{line}");
        let mut counted = Progress {
            limit: Limit::Count(1000),
            ..p
        };
        counted.requests = 300;
        assert!(counted.line().contains("700 of 1000 iterations left"));
        // A rate-limited phase: the sample's target beside its rate.
        counted.sample(&Sample {
            target_rps: Some(120.0),
            ..sample(2)
        });
        assert!(
            counted.line().contains("100 req/s (target 120)  p99"),
            "{}",
            counted.line()
        );
    }

    /// The end of a phase is one line, without the figures again when the last line had
    /// them; a phase stopped early says so; a warm-up shows no made-up figures.
    #[test]
    fn the_last_line_tells_how_the_phase_ended_once() {
        let mut p = lines(1, false);
        p.sample(&sample(0));
        assert_eq!(p.printed_at, Some(Duration::from_secs(1)), "a line at 1 s");
        assert_eq!(p.last_line(PhaseEnd::Completed), "[doppio] done after 1.0s");
        let stopped = p.last_line(PhaseEnd::Stopped);
        assert_eq!(stopped, "[doppio] stopped at 1.0s, before its end");
        assert!(!stopped.contains("left"), "{stopped}");
        // Figures not shown yet at this point: the last line has them.
        p.printed_at = None;
        assert!(p
            .last_line(PhaseEnd::Completed)
            .starts_with("[doppio] done after 1.0s: 100 req/s"));
        let mut w = lines(1, true);
        w.sample(&sample(0));
        let line = w.line();
        assert!(line.contains("warming up (no figures kept)"), "{line}");
        assert!(!line.contains("req/s") && !line.contains("p99"), "{line}");
    }
}
