//! `doppio nemesis`'s run (bench/NEMESIS.md): the table created, the backend's writers
//! started, the schedule's faults applied and healed through the cluster script at their
//! times while the writers run, the cluster made whole, the history saved, every key read
//! back at `ALL`, check (a) made and the report written. Driver-neutral: the backend runs
//! the workload ([`crate::backend::nemesis_run`]).
//!
//! Children: [`cluster`], the cluster script that applies and heals faults; [`report`], the
//! run's report (`nemesis.json`).

pub(crate) mod cluster;
pub(crate) mod report;

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cluster::ClusterScript;
use report::{errors_by_kind, Counts, FaultRecord, NemesisReport};

use crate::backend::nemesis::{WritesPlan, WritesRun, WritesTarget};
use crate::backend::nemesis_run as workload;
use crate::engine::phase::BackendError;
use crate::failure::NemesisError;
use crate::nemesis::acked_writes::{self, ReadBack};
use crate::nemesis::history::History;
use crate::nemesis::schedule::Schedule;

/// The longest the cluster may take to be whole again after the run.
const HEAL_WITHIN: Duration = Duration::from_secs(300);
/// How many times a key's read-back is tried, and how far apart.
const READ_ATTEMPTS: u32 = 10;
const READ_PAUSE: Duration = Duration::from_secs(2);
/// How often the fault loop looks at the clock, Ctrl-C and the writers.
const TICK: Duration = Duration::from_millis(50);

/// A nemesis run, its options checked.
#[derive(Debug, Clone)]
pub(crate) struct NemesisPlan {
    /// Where the workload's table is.
    pub(crate) target: WritesTarget,
    /// The keys the values are spread over.
    pub(crate) keys: i64,
    /// Writes in flight at once.
    pub(crate) concurrency: usize,
    /// How long the writers run.
    pub(crate) duration: Duration,
    /// The faults.
    pub(crate) schedule: Schedule,
    /// The cluster script.
    pub(crate) script: ClusterScript,
    /// The folder of the history and the report.
    pub(crate) out: PathBuf,
}

/// A run carried out: its report, where it was written, and whether Ctrl-C cut it short.
#[derive(Debug)]
pub(crate) struct NemesisRun {
    /// The report.
    pub(crate) report: NemesisReport,
    /// Its file.
    pub(crate) report_path: PathBuf,
    /// Whether Ctrl-C or SIGTERM stopped the run early.
    pub(crate) interrupted: bool,
}

/// Nanoseconds from `epoch` to now.
fn now_ns(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn log(epoch: Instant, what: &str) {
    eprintln!("nemesis +{:.1}s: {what}", epoch.elapsed().as_secs_f64());
}

/// Runs `plan`: see the module's comment. The cluster is made whole whatever happened
/// between the table's creation and the read-back.
pub(crate) fn run(plan: &NemesisPlan) -> Result<NemesisRun, NemesisError> {
    let backend = |step| move |source: BackendError| NemesisError::Backend { step, source };
    workload::create_table(&plan.target).map_err(backend("create the table"))?;
    let epoch = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let writes = WritesPlan {
        keys: plan.keys,
        concurrency: plan.concurrency,
        epoch,
        until: epoch + plan.duration,
        stop: stop.clone(),
    };
    let target = plan.target.clone();
    let writers = std::thread::Builder::new()
        .name("nemesis-writers".to_owned())
        .spawn(move || workload::write(&target, &writes))
        .map_err(|e| NemesisError::Cluster(format!("start the writers' thread: {e}")))?;
    log(
        epoch,
        &format!(
            "writing for {:?} on {} with {} faults scheduled",
            plan.duration,
            plan.target.driver.name(),
            plan.schedule.faults.len()
        ),
    );
    let (faults, interrupted) = carry_out(plan, epoch, &writers);
    if interrupted || faults.iter().any(|f| f.error.is_some()) {
        // Otherwise the writers run to the end of the run.
        stop.store(true, Ordering::Relaxed);
    }
    let written = writers
        .join()
        .map_err(|_| NemesisError::Cluster("the writers' thread panicked".to_owned()));
    log(epoch, "writers done; making the cluster whole");
    let heal_start = Instant::now();
    let heal_error = plan.script.heal_all(HEAL_WITHIN).err();
    let heal_s = heal_start.elapsed().as_secs_f64();
    let WritesRun { ops } = written?.map_err(backend("the writers"))?;
    let history = History::new(ops);
    let history_name = "history.jsonl";
    let history_path = plan.out.join(history_name);
    let file = File::create(&history_path).map_err(|source| NemesisError::Report {
        path: history_path.clone(),
        source,
    })?;
    history.write_jsonl(BufWriter::new(file))?;
    // The file is what a later check reads: it must read back as recorded.
    let file = File::open(&history_path).map_err(|source| NemesisError::Report {
        path: history_path.clone(),
        source,
    })?;
    if History::read_jsonl(BufReader::new(file))? != history {
        return Err(NemesisError::HistoryMismatch { path: history_path });
    }
    log(
        epoch,
        &format!(
            "{} writes recorded in {}; reading every key back at ALL",
            history.ops.len(),
            history_path.display()
        ),
    );
    let read = workload::read_back(&plan.target, plan.keys, READ_ATTEMPTS, READ_PAUSE)
        .map_err(backend("the read-back"))?;
    let mut read_back = ReadBack::new();
    for (&key, values) in &read.keys {
        read_back.record(key, values.iter().copied());
    }
    let check = acked_writes::check(&history, &read_back)?;
    let mut report = NemesisReport {
        seed: plan.schedule.options.seed,
        driver: plan.target.driver.name(),
        node: plan.target.node.to_string(),
        table: format!("{}.{}", plan.target.keyspace, plan.target.table),
        concurrency: plan.concurrency,
        keys: plan.keys,
        duration_s: plan.duration.as_secs_f64(),
        schedule: plan.schedule.clone(),
        faults_applied: faults.iter().filter(|f| f.applied()).count(),
        faults,
        counts: Counts::of(&history, &check),
        errors_by_kind: errors_by_kind(&history),
        acked_writes: check,
        unread_keys: read.unread,
        heal_s,
        heal_error,
        history: history_name.to_owned(),
        passed: false,
    };
    report.passed = report.failure().is_none();
    let report_path = plan.out.join("nemesis.json");
    let json = serde_json::to_vec_pretty(&report).map_err(|e| NemesisError::Report {
        path: report_path.clone(),
        source: e.into(),
    })?;
    std::fs::write(&report_path, json).map_err(|source| NemesisError::Report {
        path: report_path.clone(),
        source,
    })?;
    Ok(NemesisRun {
        report,
        report_path,
        interrupted,
    })
}

/// One moment of the schedule: a fault (by its index) applied or healed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at_ns: u64,
    /// A heal sorts before an apply of the same moment.
    apply: bool,
    fault: usize,
}

/// Applies and heals the schedule's faults at their times, until the last heal, Ctrl-C, or
/// the writers' end; each fault's record, and whether Ctrl-C stopped it.
///
/// A heal can take longer than planned (a restarted node replays its commit log before it
/// answers): a fault then starts no sooner than the settle time after the last heal
/// finished, however late that makes it, and lasts as long as planned from when it went
/// down, so that one node is down at a time as planned; a fault that would start after the
/// writers' end is not applied (its record says so by having no times).
fn carry_out(
    plan: &NemesisPlan,
    epoch: Instant,
    writers: &JoinHandle<Result<WritesRun, BackendError>>,
) -> (Vec<FaultRecord>, bool) {
    let mut records: Vec<FaultRecord> = plan
        .schedule
        .faults
        .iter()
        .cloned()
        .map(FaultRecord::planned)
        .collect();
    let mut events: Vec<Event> = plan
        .schedule
        .faults
        .iter()
        .enumerate()
        .flat_map(|(fault, f)| {
            [
                Event {
                    at_ns: f.start_ns,
                    apply: true,
                    fault,
                },
                Event {
                    at_ns: f.heal_ns,
                    apply: false,
                    fault,
                },
            ]
        })
        .collect();
    events.sort_unstable();
    let settle = Duration::from_nanos(plan.schedule.options.settle_ns);
    let until = epoch + plan.duration;
    // When the last heal finished (the run's start: none yet).
    let mut settled_from = epoch;
    for event in events {
        let planned = epoch + Duration::from_nanos(event.at_ns);
        let record = &records[event.fault];
        let at = match (event.apply, record.down_ns) {
            (true, _) => planned.max(settled_from + settle),
            // Down as long as planned, from when it went down.
            (false, Some(down_ns)) => {
                let lasts = record.fault.heal_ns.saturating_sub(record.fault.start_ns);
                epoch + Duration::from_nanos(down_ns.saturating_add(lasts))
            }
            // Never applied: nothing to heal.
            (false, None) => continue,
        };
        if event.apply && at >= until {
            // Too late for the writers to see it; its heal is skipped with it.
            log(
                epoch,
                &format!(
                    "fault #{} skipped: it would start after the run",
                    event.fault
                ),
            );
            continue;
        }
        while Instant::now() < at {
            if crate::interrupt::interrupted() {
                log(epoch, "interrupted: healing, then the read-back");
                return (records, true);
            }
            if writers.is_finished() {
                log(epoch, "the writers ended early: no more faults");
                return (records, false);
            }
            std::thread::sleep(TICK.min(at.saturating_duration_since(Instant::now())));
        }
        let record = &mut records[event.fault];
        let what = format!("{:?} of nodes {:?}", record.fault.kind, record.fault.nodes);
        if event.apply {
            record.started_ns = Some(now_ns(epoch));
            match plan.script.apply(&record.fault) {
                Ok(()) => {
                    record.down_ns = Some(now_ns(epoch));
                    log(epoch, &format!("{what} applied"));
                }
                Err(e) => {
                    log(epoch, &format!("{what} failed: {e}"));
                    record.error = Some(e);
                    return (records, false);
                }
            }
        } else {
            record.heal_started_ns = Some(now_ns(epoch));
            match plan.script.heal(&record.fault) {
                Ok(()) => {
                    record.healed_ns = Some(now_ns(epoch));
                    settled_from = Instant::now();
                    log(epoch, &format!("{what} healed"));
                }
                Err(e) => {
                    log(epoch, &format!("{what}: heal failed: {e}"));
                    record.error = Some(e);
                    return (records, false);
                }
            }
        }
    }
    (records, false)
}
