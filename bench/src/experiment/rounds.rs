//! The rounds of measured segments that `run` and `curve` share: the backends connected
//! once ([`Rounds`], which shuts them down when dropped), the node warmed before the first
//! round, each backend's capacity probed at full speed ([`Rounds::capacities`]), and rounds
//! of segments at a rate or none ([`Rounds::run`]): round `r` runs every backend's segment
//! `r` once, in the order `--order` gives, each after its own warmup, and what each segment
//! measured is added to its backend's [`BackendRun`] as it ends. What watches a segment
//! besides the client's own figures (the node's CPU, hardware counters, `run`'s HDR log,
//! Prometheus and perf recordings) comes in as [`Watchers`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::connections::Before;
use super::measure::{
    ended, unrecorded, warm_then_measure, Flamegraph, Hardware, HdrLog, Observer, Prometheus,
    ServerCpu, Stretch,
};
use crate::backend::{self, Backend, ConnectOptions, Driver};
use crate::cli::{Connect, RoundArgs};
use crate::engine::cycles::CycleRange;
use crate::engine::drive::PhaseOutcome;
use crate::engine::grid::ReleaseGrid;
use crate::engine::order::Order;
use crate::engine::phase::{Phase, PhaseSpec, SAMPLE_BACKLOG};
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::failure::Failure;
use crate::probe::flame::Flames;
use crate::probe::thread_usage::{started_between, thread_ids};
use crate::progress::Progress;
use crate::report::{BackendRun, RunConfig, StatementInfo};
use crate::workload::Workload;

/// Capacity probes per backend (each backend's capacity is its best).
pub(crate) const PROBE_ROUNDS: usize = 2;

/// Splits a phase limit across `segments`.
pub(crate) fn per_segment(limit: Limit, segments: usize) -> Limit {
    let n = segments.max(1);
    match limit {
        Limit::Time(d) => Limit::Time(d / n as u32),
        Limit::Count(c) => Limit::Count(c.div_ceil(n as u64)),
    }
}

/// What every phase of a command's rounds runs with.
pub(crate) struct RoundsPlan<'a> {
    /// The rounds' options.
    pub(crate) args: &'a RoundArgs,
    /// Progress (`-q`, `--progress-every`) and `--max-outage`.
    pub(crate) connect: &'a Connect,
    /// The workload every phase runs.
    pub(crate) workload: Arc<Workload>,
    /// Segments per backend: the rounds (at least 1).
    pub(crate) segments: usize,
    /// The iteration numbers every phase draws from.
    pub(crate) cycles: Option<CycleRange>,
}

impl RoundsPlan<'_> {
    /// A measured segment's length (and a capacity probe's).
    pub(crate) fn measured(&self) -> Limit {
        per_segment(self.args.duration, self.segments)
    }

    /// The warmup before each measured segment, if any (`--warmup 0s` or `0`: none).
    fn warmup(&self) -> Option<Limit> {
        let w = self.args.warmup;
        let none = matches!(w, Limit::Time(d) if d.is_zero()) || w == Limit::Count(0);
        (!none).then_some(w)
    }

    /// Each round's order of `drivers`, by name (`config.rounds`).
    pub(crate) fn round_names(&self, drivers: &[Driver]) -> Vec<Vec<String>> {
        (0..self.segments)
            .map(|r| {
                self.args
                    .order
                    .round(drivers.len(), r)
                    .map(|i| drivers[i].name().to_owned())
                    .collect()
            })
            .collect()
    }

    /// A phase of `limit`, recorded or not, at `rate` (none: full speed).
    fn spec(&self, limit: Limit, record: bool, rate: Option<&Arc<RateSchedule>>) -> PhaseSpec {
        PhaseSpec {
            phase: Phase::Run,
            concurrency: self.args.concurrency,
            rate: rate.cloned(),
            grid: ReleaseGrid::new(self.args.release_grid),
            limit,
            interval: self.args.interval,
            record,
            max_outage: self.connect.outage_limit(),
            cycles: self.cycles,
        }
    }
}

/// What watches each measured segment besides the client's own figures, each an
/// [`Observer`]; what they find goes to the segment's backend entry or to the warnings.
#[derive(Default)]
pub(crate) struct Watchers<'a> {
    /// `--hdr-log`.
    pub(crate) hdr_log: Option<HdrLog>,
    /// `--prometheus`.
    pub(crate) prometheus: Option<Prometheus<'a>>,
    /// `--flamegraph` or `--anatomy`.
    pub(crate) sampled: Option<Sampled>,
    /// The node's CPU, when it runs on this machine.
    pub(crate) server_cpu: Option<ServerCpu>,
    /// Hardware counters (or why there are none).
    pub(crate) hardware: Hardware,
}

/// `--flamegraph` or `--anatomy`: `perf record` around each segment, and its recordings.
pub(crate) struct Sampled {
    /// How its failures name it (`flamegraph`, `anatomy`).
    pub(crate) what: &'static str,
    /// The recorder.
    pub(crate) recorder: Flamegraph,
    /// The recordings stopped so far, by backend.
    pub(crate) flames: Flames,
}

impl Watchers<'_> {
    /// Every watcher, for segment `segment` (the perf recordings' file names count it).
    fn observers(&mut self, segment: usize) -> Vec<&mut dyn Observer> {
        let mut observers: Vec<&mut dyn Observer> = Vec::new();
        if let Some(h) = &mut self.hdr_log {
            observers.push(h);
        }
        if let Some(p) = &mut self.prometheus {
            observers.push(p);
        }
        if let Some(s) = &mut self.sampled {
            s.recorder.segment = segment;
            observers.push(&mut s.recorder);
        }
        if let Some(s) = &mut self.server_cpu {
            observers.push(s);
        }
        observers.push(&mut self.hardware);
        observers
    }

    /// What went wrong with a watcher over the last segment, as warnings, and the
    /// recordings it stopped kept.
    fn after_segment(&mut self, warnings: &mut Vec<String>) {
        if let Some(e) = self.hdr_log.as_mut().and_then(HdrLog::failed) {
            warnings.push(format!("--hdr-log stopped: {e}"));
        }
        if let Some(s) = &mut self.sampled {
            for e in s.recorder.failures.drain(..) {
                warnings.push(format!("no {}: {e}", s.what));
            }
            for (d, stopped) in s.recorder.recorded.drain(..) {
                s.flames.add(d.name(), stopped);
            }
        }
    }
}

/// One segment's place: its round, its position in the round, and its backend's index.
#[derive(Debug, Clone, Copy)]
struct Place {
    round: usize,
    position: usize,
    backend: usize,
}

/// A command's connected backends and the rounds they run. Dropping it shuts the backends
/// down (also those connected before one that failed to).
pub(crate) struct Rounds<'a> {
    plan: RoundsPlan<'a>,
    backends: Vec<(Driver, Arc<dyn Backend>)>,
    /// The threads each backend started as it connected (its executors, runtime workers),
    /// by the index of `backends`: set apart from the others' segments, while it is parked.
    threads: Vec<Vec<i32>>,
    /// Whether a phase has run: until then, statements that cannot be prepared are a bad
    /// workload (the command could not start), after it a failure of the run.
    started: bool,
}

impl Drop for Rounds<'_> {
    fn drop(&mut self) {
        for (_, b) in &self.backends {
            b.shutdown();
        }
    }
}

impl<'a> Rounds<'a> {
    /// Connects the backends of `drivers` in order, noting each one's pinned cores, the
    /// connections it opened, its protocol version and io_uring setup in `config` and giving
    /// each an empty entry in `runs` as it connects.
    pub(crate) fn connect(
        plan: RoundsPlan<'a>,
        drivers: &[Driver],
        options: &ConnectOptions,
        config: &mut RunConfig,
        runs: &mut BTreeMap<Driver, BackendRun>,
    ) -> Result<Self, Failure> {
        let mut rounds = Rounds {
            plan,
            backends: Vec::new(),
            threads: Vec::new(),
            started: false,
        };
        for &d in drivers {
            let before = thread_ids();
            let sockets = Before::now();
            let b = backend::connect(d, options).map_err(Failure::Start)?;
            // Unreadable /proc: no threads set apart (the meter then says why it counts
            // nothing either).
            let started = match (before, thread_ids()) {
                (Ok(before), Ok(after)) => started_between(&before, &after),
                _ => Vec::new(),
            };
            rounds.threads.push(started);
            let name = d.name().to_owned();
            config.thread_cores.insert(name.clone(), b.thread_cores());
            if let Some(v) = b.protocol_version() {
                config.protocol_versions.insert(name.clone(), v);
            }
            sockets.record(b.as_ref(), options, &name, &mut config.connection_shapes);
            if let Some(f) = b.uring_setup_flags() {
                config.uring_setup.insert(name, f);
            }
            rounds.backends.push((d, b));
            runs.insert(d, rounds.empty_run());
        }
        Ok(rounds)
    }

    /// An empty entry of a backend, for its first segment to add to.
    fn empty_run(&self) -> BackendRun {
        BackendRun {
            rows_counted: true,
            statement_info: StatementInfo::of_workload(&self.plan.workload),
            ..BackendRun::default()
        }
    }

    /// An empty entry for every connected backend (the rounds of another rate).
    pub(crate) fn empty_runs(&self) -> BTreeMap<Driver, BackendRun> {
        self.backends
            .iter()
            .map(|(d, _)| (*d, self.empty_run()))
            .collect()
    }

    /// `--server-warmup`: the workload run unrecorded with the first backend, so that no
    /// segment meets a cold node (nothing when it is 0).
    pub(crate) fn warm_server(&mut self) -> Result<(), Failure> {
        let warmup = self.plan.args.server_warmup;
        if warmup.is_zero() {
            return Ok(());
        }
        let spec = self.plan.spec(Limit::Time(warmup), false, None);
        self.before_rounds(0, spec, "server warmup").map(drop)
    }

    /// Each backend's capacity, iterations per second by driver name: the best of
    /// [`PROBE_ROUNDS`] unrecorded probes at full speed, a measured segment's length each,
    /// in rotated order (a node's passing slowdown, a collection or a flush, only ever
    /// lowers a probe, and one probe that met it would set the rate of every point).
    pub(crate) fn capacities(&mut self) -> Result<BTreeMap<String, f64>, Failure> {
        let mut capacities: BTreeMap<String, f64> = BTreeMap::new();
        for round in 0..PROBE_ROUNDS {
            for k in Order::Rotate.round(self.backends.len(), round) {
                let spec = self.plan.spec(self.plan.measured(), false, None);
                let outcome = self.before_rounds(k, spec, "capacity probe")?;
                let secs = outcome.elapsed.as_secs_f64();
                let capacity = if secs > 0.0 {
                    outcome.iterations as f64 / secs
                } else {
                    0.0
                };
                let best = capacities
                    .entry(self.backends[k].0.name().to_owned())
                    .or_insert(0.0);
                *best = best.max(capacity);
            }
        }
        Ok(capacities)
    }

    /// An unrecorded phase of backend `k` before the first round, `what` it is (`server
    /// warmup`, `capacity probe`), through [`unrecorded`].
    fn before_rounds(
        &mut self,
        k: usize,
        spec: PhaseSpec,
        what: &'static str,
    ) -> Result<PhaseOutcome, Failure> {
        let (driver, b) = &self.backends[k];
        let label = format!("{what} ({})", driver.name());
        let c = self.plan.connect;
        let progress = Progress::new(c.quiet, &label, spec.limit, c.progress_every);
        unrecorded(
            b,
            &self.plan.workload,
            spec,
            progress,
            what,
            &mut self.started,
        )
    }

    /// The rounds at `rate` (none: full speed), each segment's figures added to its
    /// backend's entry in `runs` as it ends (so that a failure keeps what was measured),
    /// warnings to `warnings`. Stops at the first failure or interruption.
    pub(crate) fn run(
        &mut self,
        rate: Option<Arc<RateSchedule>>,
        watch: &mut Watchers<'_>,
        runs: &mut BTreeMap<Driver, BackendRun>,
        warnings: &mut Vec<String>,
    ) -> Result<(), Failure> {
        for round in 0..self.plan.segments {
            let order = self.plan.args.order.round(self.backends.len(), round);
            for (position, backend) in order.enumerate() {
                if crate::interrupt::interrupted() {
                    return Err(Failure::Interrupted);
                }
                let place = Place {
                    round,
                    position,
                    backend,
                };
                self.segment(place, rate.as_ref(), watch, runs, warnings)?;
            }
        }
        Ok(())
    }

    /// One backend's warmup and measured segment at `place`, added to its entry in `runs`;
    /// what the other backends' threads did meanwhile is added to theirs, as done while
    /// parked.
    fn segment(
        &mut self,
        place: Place,
        rate: Option<&Arc<RateSchedule>>,
        watch: &mut Watchers<'_>,
        runs: &mut BTreeMap<Driver, BackendRun>,
        warnings: &mut Vec<String>,
    ) -> Result<(), Failure> {
        let Rounds {
            plan,
            backends,
            threads,
            started,
        } = self;
        let (driver, b) = &backends[place.backend];
        let others: Vec<usize> = (0..backends.len())
            .filter(|&k| k != place.backend)
            .collect();
        let parked: Vec<Vec<i32>> = others.iter().map(|&k| threads[k].clone()).collect();
        let name = driver.name();
        let stretch = Stretch {
            backend: b,
            workload: &plan.workload,
            // Warmup: same workload, nothing recorded.
            warmup: plan.warmup().map(|w| plan.spec(w, false, rate)),
            measured: plan.spec(plan.measured(), true, rate),
            warmup_label: format!("{name} warmup"),
            label: if plan.segments > 1 {
                format!("{name} {}/{}", place.round + 1, plan.segments)
            } else {
                name.to_owned()
            },
            warmup_name: "the warmup",
            quiet: plan.connect.quiet,
            progress_every: plan.connect.progress_every,
            meter: Some(plan.args.syscalls),
            counters: true,
            parked: &parked,
        };
        let done = warm_then_measure(stretch, started, &mut watch.observers(place.round))?;
        watch.after_segment(warnings);
        if let Some(cost) = &done.cost {
            for (&k, apart) in others.iter().zip(&cost.apart) {
                runs.entry(backends[k].0).or_default().add_parked(apart);
            }
        }
        let run = runs.entry(*driver).or_default();
        let outcome = done.outcome.map_err(|e| Failure::of_phase(e, *started))?;
        warn_of_outcome(*driver, &outcome, warnings);
        if let Some(cost) = &done.cost {
            run.add_cost(cost);
        }
        if let Some(counted) = watch.hardware.last.take() {
            run.add_hardware(counted);
        }
        run.mark_segment(
            place.round,
            place.position,
            done.cost.as_ref(),
            watch.server_cpu.as_mut().and_then(|s| s.last.take()),
        );
        if let Some((before, after)) = &done.counters {
            run.add_counters(before, after, &outcome.requests_by_node);
        }
        let aborted = outcome.aborted.clone();
        // Everything measured so far is in `run` before the segment's end is judged: the
        // report keeps it.
        run.add_phase(outcome);
        ended(*driver, aborted)
    }
}

/// The warnings a segment's outcome calls for: workers that failed, and workers that
/// waited for the coordinator to take their samples.
fn warn_of_outcome(driver: Driver, outcome: &PhaseOutcome, warnings: &mut Vec<String>) {
    for w in &outcome.failed_workers {
        warnings.push(format!("{}: {w}", driver.name()));
    }
    if outcome.stalled.times > 0 {
        warnings.push(format!(
            "{}: workers waited {:.1} ms in {} sends for the coordinator to take their \
             samples (it fell {} samples behind); requests in flight waited too: use a \
             longer --sample interval",
            driver.name(),
            outcome.stalled.waited.as_secs_f64() * 1e3,
            outcome.stalled.times,
            SAMPLE_BACKLOG,
        ));
    }
}
