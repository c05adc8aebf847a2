//! `doppio nemesis`: the options checked (every one before anything starts: the driver,
//! the keyspace's name, the kinds of fault, the contact point, the folders and files, the
//! schedule, which must hold a fault), the schedule printed, the run carried out
//! (`crate::experiment::nemesis`) and its verdict printed; exit 1 when the check fails.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::backend::nemesis::WritesTarget;
use crate::backend::nemesis_run::supported;
use crate::backend::Driver;
use crate::cli::NemesisArgs;
use crate::experiment::nemesis::cluster::ClusterScript;
use crate::experiment::nemesis::{run, NemesisPlan};
use crate::failure::{Failure, NemesisError};
use crate::nemesis::schedule::{FaultKind, Schedule, ScheduleOptions};

/// `doppio nemesis`.
pub fn nemesis(a: &NemesisArgs) -> Result<(), Failure> {
    let plan = plan_of(a)?;
    println!(
        "nemesis: seed {}, {} faults in {:?} on {} (table {}.{}):",
        a.seed,
        plan.schedule.faults.len(),
        a.duration,
        plan.target.driver.name(),
        plan.target.keyspace,
        plan.target.table
    );
    for fault in &plan.schedule.faults {
        println!(
            "  {:?} of nodes {:?} from +{:.1}s to +{:.1}s",
            fault.kind,
            fault.nodes,
            fault.start_ns as f64 / 1e9,
            fault.heal_ns as f64 / 1e9
        );
    }
    let done = run(&plan)?;
    let r = &done.report;
    print!("{}", r.acked_writes);
    println!(
        "writes {}: acknowledged {}, failed {}, unknown {}; faults applied {} of {}; errors by \
         kind {:?}; healed in {:.1}s",
        r.counts.writes,
        r.counts.acknowledged,
        r.counts.failed,
        r.counts.unknown,
        r.faults_applied,
        r.faults.len(),
        r.errors_by_kind,
        r.heal_s
    );
    println!("report: {}", done.report_path.display());
    if done.interrupted {
        return Err(Failure::Interrupted);
    }
    match r.failure() {
        None => Ok(()),
        Some(why) => Err(NemesisError::Failed {
            why,
            report: done.report_path.clone(),
        }
        .into()),
    }
}

/// The run `a` asks for, every option checked.
fn plan_of(a: &NemesisArgs) -> Result<NemesisPlan, NemesisError> {
    let driver = Driver::parse(&a.driver)
        .ok()
        .filter(|&d| supported(d))
        .ok_or_else(|| NemesisError::Driver {
            driver: a.driver.clone(),
        })?;
    if !plain_name(&a.keyspace) {
        return Err(NemesisError::Keyspace {
            keyspace: a.keyspace.clone(),
        });
    }
    let kinds = fault_kinds(&a.faults).ok_or_else(|| NemesisError::FaultKinds {
        faults: a.faults.clone(),
    })?;
    let node = resolve(&a.node)?;
    if !a.out.is_dir() {
        return Err(NemesisError::Out {
            path: a.out.clone(),
        });
    }
    if !a.cluster_script.is_file() {
        return Err(NemesisError::Script {
            path: a.cluster_script.clone(),
        });
    }
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let schedule = Schedule::draw(ScheduleOptions {
        seed: a.seed,
        run_ns: ns(a.duration),
        nodes: a.nodes,
        replication_factor: a.replication_factor,
        mean_gap_ns: ns(a.mean_gap),
        min_fault_ns: ns(a.fault_min),
        max_fault_ns: ns(a.fault_max),
        settle_ns: ns(a.settle),
        allow_quorum_loss: false,
        kinds,
    })?;
    if schedule.faults.is_empty() {
        return Err(NemesisError::NoFault {
            seed: a.seed,
            duration: a.duration,
        });
    }
    let down = schedule
        .faults
        .iter()
        .map(|f| schedule.down_at(f.start_ns))
        .max()
        .unwrap_or(0);
    if down > 1 {
        return Err(NemesisError::TooManyDown {
            replication_factor: a.replication_factor,
            seed: a.seed,
            down,
        });
    }
    // A table of the run's own: no value of an earlier run in the read-back.
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(NemesisPlan {
        target: WritesTarget {
            driver,
            node,
            keyspace: a.keyspace.clone(),
            table: format!("writes_{stamp}_{}", std::process::id()),
            replication_factor: a.replication_factor,
            request_timeout: a.timeout,
        },
        keys: a.keys,
        concurrency: a.concurrency,
        duration: a.duration,
        schedule,
        script: ClusterScript {
            path: a.cluster_script.clone(),
            nodes: a.nodes,
        },
        out: a.out.clone(),
    })
}

/// A plain CQL name: a lowercase letter, then up to 47 lowercase letters, digits or `_`.
fn plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 48
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `--faults`: kill, pause, stop, comma-separated, at least one (repeats are kept once).
fn fault_kinds(text: &str) -> Option<Vec<FaultKind>> {
    let mut kinds = Vec::new();
    for name in text.split(',').map(str::trim) {
        let kind = match name {
            "kill" => FaultKind::Kill,
            "pause" => FaultKind::Pause,
            "stop" => FaultKind::Stop,
            _ => return None,
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// `--node`, resolved (port 9042 when none is given).
fn resolve(node: &str) -> Result<SocketAddr, NemesisError> {
    let with_port = if node.contains(':') {
        node.to_owned()
    } else {
        format!("{node}:9042")
    };
    let why = |why: String| NemesisError::Node {
        node: node.to_owned(),
        why,
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| why(e.to_string()))?
        .next()
        .ok_or_else(|| why("no address".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_kinds_and_names_are_checked() {
        assert_eq!(
            fault_kinds("kill, pause,kill"),
            Some(vec![FaultKind::Kill, FaultKind::Pause])
        );
        assert_eq!(fault_kinds("stop"), Some(vec![FaultKind::Stop]));
        assert_eq!(fault_kinds(""), None);
        assert_eq!(fault_kinds("kill,partition"), None);
        assert!(plain_name("doppio_nemesis"));
        assert!(!plain_name("Doppio"));
        assert!(!plain_name("a-b"));
        assert!(!plain_name("1a"));
        assert!(!plain_name(""));
        assert!(!plain_name(&"a".repeat(49)));
    }
}
