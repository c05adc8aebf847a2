//! The warm-then-measure routine of `run`, `curve` and `findmax`: one backend's warmup (nothing
//! recorded) and then its measured stretch, each with its progress line. What else watches
//! the measured stretch (Prometheus, the HdrHistogram log, a flamegraph recording) attaches
//! as an [`Observer`], called once before the stretch, once per merged sample interval and
//! once after it: never per request, so that the request loops stay as they are. The
//! driver's overhead ([`Meter`]) and its counters are read around the stretch when asked.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::backend::{Backend, Driver, DriverCounters};
use crate::engine::collect::Sample;
use crate::engine::drive::{drive_phase, PhaseOutcome};
use crate::engine::phase::{PhaseError, PhaseSpec};
use crate::failure::{Failure, RunFailure};
use crate::live_log::LiveHdrLog;
use crate::probe::flame::{FlameError, Recording, Sampling, Stopped};
use crate::probe::hw_counters::{HwCounting, HwCounts, Unavailable};
use crate::probe::process_cost::{Cost, Counting, Meter};
use crate::probe::server_cpu::{CpuReading, ServerLoad, ServerProcesses};
use crate::progress::{PhaseEnd, Progress};
use crate::render::prometheus::MetricsServer;
use crate::workload::Workload;

/// What watches a measured stretch besides its progress line.
pub(crate) trait Observer {
    /// The stretch is about to start (after the warmup).
    fn before(&mut self, _driver: Driver) {}
    /// A merged sample interval of the stretch; `phase_start` is about when its intervals
    /// count from.
    fn sample(&mut self, _driver: Driver, _phase_start: SystemTime, _sample: &Sample) {}
    /// The stretch ended (successfully or not); `cost` is the driver's overhead over it when
    /// it was measured.
    fn after(&mut self, _driver: Driver, _cost: Option<&Cost>) {}
}

/// One backend's warmup and measured stretch.
pub(crate) struct Stretch<'a> {
    /// The backend.
    pub(crate) backend: &'a Arc<dyn Backend>,
    /// The workload it runs.
    pub(crate) workload: &'a Arc<Workload>,
    /// The warmup's phase (`None`: no warmup).
    pub(crate) warmup: Option<PhaseSpec>,
    /// The measured phase.
    pub(crate) measured: PhaseSpec,
    /// The warmup's progress label.
    pub(crate) warmup_label: String,
    /// The measured stretch's progress label.
    pub(crate) label: String,
    /// How a failure of the warmup names it (`the warmup`, `a warmup`).
    pub(crate) warmup_name: &'static str,
    /// No progress on stderr (`-q`).
    pub(crate) quiet: bool,
    /// How often a progress line is printed when stderr is not a terminal.
    pub(crate) progress_every: Duration,
    /// Measure the driver's overhead over the stretch ([`Meter`]), counting syscalls so
    /// (`None`: not measured).
    pub(crate) meter: Option<Counting>,
    /// Read the driver's counters before and after the stretch.
    pub(crate) counters: bool,
    /// The threads of each other backend, parked while this one runs: what they do over
    /// the measured stretch is left out of its cost and given in [`Cost::apart`], in this
    /// order (`Meter::start_apart`).
    pub(crate) parked: &'a [Vec<i32>],
}

/// What a measured stretch produced.
pub(crate) struct Measured {
    /// The phase's outcome, or why it failed.
    pub(crate) outcome: Result<PhaseOutcome, PhaseError>,
    /// The driver's overhead over the stretch, if asked.
    pub(crate) cost: Option<Cost>,
    /// The driver's counters before and after the stretch, if asked and the driver has them.
    pub(crate) counters: Option<(DriverCounters, DriverCounters)>,
}

/// How a phase with `outcome` (none: it failed) ended, for its last progress line.
pub(crate) fn phase_end(outcome: Option<&PhaseOutcome>) -> PhaseEnd {
    match outcome {
        Some(o) if o.aborted.is_none() && !crate::interrupt::interrupted() => PhaseEnd::Completed,
        _ => PhaseEnd::Stopped,
    }
}

/// Runs `s`'s warmup, then its measured stretch with `observers`. `started` says whether a
/// phase of this command has run (a statement that cannot be prepared before that means
/// the command could not start); it is set once one has. A failed warmup, or one that was
/// interrupted or aborted, is returned as the failure; the measured stretch's outcome is
/// returned as it is, for the caller to keep what it measured before judging it
/// ([`ended`]).
pub(crate) fn warm_then_measure(
    s: Stretch<'_>,
    started: &mut bool,
    observers: &mut [&mut dyn Observer],
) -> Result<Measured, Failure> {
    let driver = s.backend.driver();
    if let Some(spec) = s.warmup {
        let progress = Progress::new(s.quiet, &s.warmup_label, spec.limit, s.progress_every);
        unrecorded(
            s.backend,
            s.workload,
            spec,
            progress,
            s.warmup_name,
            started,
        )?;
    }
    let mut progress = Progress::new(s.quiet, &s.label, s.measured.limit, s.progress_every);
    let counters_before = if s.counters {
        s.backend.counters()
    } else {
        None
    };
    for o in observers.iter_mut() {
        o.before(driver);
    }
    let meter = s
        .meter
        .map(|counting| Meter::start_apart(counting, s.parked));
    // The phase's intervals count from about now (drive_phase starts its clock a few
    // milliseconds later): the live log's interval starts are within that.
    let phase_wall = SystemTime::now();
    let outcome = drive_phase(s.backend, s.workload, s.measured, |x| {
        progress.sample(x);
        for o in observers.iter_mut() {
            o.sample(driver, phase_wall, x);
        }
    });
    let cost = meter.map(Meter::stop);
    for o in observers.iter_mut() {
        o.after(driver, cost.as_ref());
    }
    let counters_after = if s.counters {
        s.backend.counters()
    } else {
        None
    };
    progress.done(phase_end(outcome.as_ref().ok()));
    if outcome.is_ok() {
        *started = true;
    }
    Ok(Measured {
        outcome,
        cost,
        counters: counters_before.zip(counters_after),
    })
}

/// Runs `spec` unrecorded (a warmup, the node's warm-up before the first round, an
/// `--equal-load` capacity probe) with its `progress` line. A failure is the command's: a
/// statement refused before any phase ran (`started`, set once this one has) is a bad
/// workload; an interrupted phase, or one that stopped before its limit (the node went away,
/// named as `name` says: `the warmup`), ends it.
pub(crate) fn unrecorded(
    backend: &Arc<dyn Backend>,
    workload: &Arc<Workload>,
    spec: PhaseSpec,
    progress: Progress,
    name: &'static str,
    started: &mut bool,
) -> Result<PhaseOutcome, Failure> {
    let mut progress = progress.warming_up();
    let warm = drive_phase(backend, workload, spec, |x| progress.sample(x));
    progress.done(phase_end(warm.as_ref().ok()));
    let warm = warm.map_err(|e| Failure::of_phase(e, *started))?;
    *started = true;
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    if let Some(why) = warm.aborted {
        return Err(RunFailure::WarmupAborted {
            driver: backend.driver().name(),
            warmup: name,
            why,
        }
        .into());
    }
    Ok(warm)
}

/// How a measured stretch that ran ends the command: interrupted, or `aborted` (the node
/// went away: [`PhaseOutcome::aborted`]), or not at all.
pub(crate) fn ended(driver: Driver, aborted: Option<String>) -> Result<(), Failure> {
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    if let Some(why) = aborted {
        return Err(RunFailure::Aborted {
            driver: driver.name(),
            why,
        }
        .into());
    }
    Ok(())
}

/// The node's CPU around each measured stretch, when it runs on this machine
/// ([`crate::probe::server_cpu`]).
pub(crate) struct ServerCpu {
    processes: ServerProcesses,
    before: Option<CpuReading>,
    /// The last stretch's load, taken by the caller.
    pub(crate) last: Option<ServerLoad>,
}

impl ServerCpu {
    /// Watches `processes`.
    pub(crate) fn new(processes: ServerProcesses) -> Self {
        ServerCpu {
            processes,
            before: None,
            last: None,
        }
    }
}

impl Observer for ServerCpu {
    fn before(&mut self, _driver: Driver) {
        self.last = None;
        self.before = Some(self.processes.read());
    }

    fn after(&mut self, _driver: Driver, _cost: Option<&Cost>) {
        if let Some(before) = self.before.take() {
            let after = self.processes.read();
            self.last = Some(ServerLoad::between(&before, &after, self.processes.cores));
        }
    }
}

/// `--prometheus`: each sample and each stretch's overhead served at `/metrics`.
pub(crate) struct Prometheus<'a>(pub &'a MetricsServer);

impl Observer for Prometheus<'_> {
    fn sample(&mut self, driver: Driver, _phase_start: SystemTime, sample: &Sample) {
        self.0.sample(driver.name(), sample);
    }

    fn after(&mut self, driver: Driver, cost: Option<&Cost>) {
        if let Some(cost) = cost {
            self.0.segment(driver.name(), cost);
        }
    }
}

/// `--hdr-log`: each sample's latency histogram appended to the interval log. The first
/// write that fails stops the log for the rest of the run ([`HdrLog::failed`]).
pub(crate) struct HdrLog {
    log: Option<LiveHdrLog>,
    error: Option<std::io::Error>,
}

impl HdrLog {
    /// The log written to `log`, if any.
    pub(crate) fn new(log: Option<LiveHdrLog>) -> Self {
        HdrLog { log, error: None }
    }

    /// The write that failed during the last stretch, if one did (the log is closed then).
    pub(crate) fn failed(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }
}

impl Observer for HdrLog {
    fn sample(&mut self, driver: Driver, phase_start: SystemTime, s: &Sample) {
        if let (Some(log), None) = (self.log.as_mut(), &self.error) {
            let began = phase_start + s.start;
            if let Err(e) = log.interval(driver.name(), began, s.duration, &s.latency) {
                self.error = Some(e);
            }
        }
    }

    fn after(&mut self, _driver: Driver, _cost: Option<&Cost>) {
        if self.error.is_some() {
            self.log = None;
        }
    }
}

/// `--flamegraph` and `--anatomy`: `perf record` around each measured stretch, its data
/// file named by the prefix, the driver and the stretch's number.
pub(crate) struct Flamegraph {
    prefix: PathBuf,
    sampling: Sampling,
    /// The number of the next stretch's data file.
    pub(crate) segment: usize,
    recording: Option<Recording>,
    /// The recordings stopped, by driver, in order.
    pub(crate) recorded: Vec<(Driver, Stopped)>,
    /// Recordings that could not start or stop.
    pub(crate) failures: Vec<FlameError>,
}

impl Flamegraph {
    /// Recordings named `PREFIX-<driver>-<segment>.perf.data`, sampled so.
    pub(crate) fn new(prefix: PathBuf, sampling: Sampling) -> Self {
        Flamegraph {
            prefix,
            sampling,
            segment: 0,
            recording: None,
            recorded: Vec::new(),
            failures: Vec::new(),
        }
    }
}

impl Observer for Flamegraph {
    fn before(&mut self, driver: Driver) {
        let data = PathBuf::from(format!(
            "{}-{}-{}.perf.data",
            self.prefix.display(),
            driver.name(),
            self.segment
        ));
        match Recording::start(&data, self.sampling) {
            Ok(r) => self.recording = Some(r),
            Err(e) => self.failures.push(e),
        }
    }

    fn after(&mut self, driver: Driver, _cost: Option<&Cost>) {
        if let Some(r) = self.recording.take() {
            match r.stop() {
                Ok(stopped) => self.recorded.push((driver, stopped)),
                Err(e) => self.failures.push(e),
            }
        }
    }
}

/// Hardware counters around each measured stretch, or why the machine has none.
#[derive(Default)]
pub(crate) struct Hardware {
    running: Option<HwCounting>,
    /// The last stretch's counts, or why there are none (taken by the caller).
    pub(crate) last: Option<Result<HwCounts, Unavailable>>,
}

impl Observer for Hardware {
    fn before(&mut self, _driver: Driver) {
        match HwCounting::start() {
            Ok(c) => self.running = Some(c),
            Err(e) => self.last = Some(Err(e)),
        }
    }

    fn after(&mut self, _driver: Driver, _cost: Option<&Cost>) {
        if let Some(c) = self.running.take() {
            self.last = Some(c.stop());
        }
    }
}
