//! A cassandra-stress line mapped onto `doppio run`: the options of `doppio run` it stands
//! for and, for the legacy commands, the generated workload ([`super::legacy`]). What each
//! option becomes, and why, is in bench/STRESS.md.

use super::legacy;
use super::model::{Kind, Length, Pace, StressLine};
use crate::backend::Compression;
use crate::cli::InlineWorkload;
use crate::workload::profile::convert::{weight_param, VALIDATE};

/// `-rate threads=` when `-rate` gives none: the thread count cassandra-stress settles on
/// for `write n=...` without `-rate` (its `auto` search is not run).
pub(crate) const DEFAULT_THREADS: usize = 200;
/// The population's upper end when `n=` does not give it (`duration=`): cassandra-stress's.
pub(crate) const DEFAULT_POPULATION: u64 = 1_000_000;

/// What a line runs as.
#[derive(Debug, Clone)]
pub(crate) struct StressPlan {
    /// The options of `doppio run` (after `run`; the backend options are the caller's).
    pub run_args: Vec<String>,
    /// The workload of a legacy command (a user profile runs with `--profile` instead).
    pub workload: Option<InlineWorkload>,
    /// Where doppio's run differs from cassandra-stress's, for the user to read.
    pub notes: Vec<String>,
}

/// The population's distribution: `-pop`, else cassandra-stress's default, `SEQ(1..N)`
/// for `write` and `GAUSSIAN(1..N)` otherwise (N the `n=`, else 1M).
pub(crate) fn population(line: &StressLine) -> String {
    if let Some(p) = &line.groups.population {
        return p.spec();
    }
    let n = match line.command.length {
        Length::Count(n) => n,
        Length::Time(_) => DEFAULT_POPULATION,
    };
    match line.command.kind {
        Kind::Write => format!("SEQ(1..{n})"),
        _ => format!("GAUSSIAN(1..{n})"),
    }
}

/// The nodes with `-port native=` applied (`host:port`; an IPv6 address in brackets).
fn nodes(line: &StressLine) -> Vec<String> {
    let hosts: Vec<String> = if line.groups.nodes.is_empty() {
        if line.groups.port.is_none() {
            return Vec::new();
        }
        vec!["127.0.0.1".to_owned()]
    } else {
        line.groups.nodes.clone()
    };
    match line.groups.port {
        None => hosts,
        Some(port) => hosts
            .into_iter()
            .map(|h| match h.matches(':').count() {
                _ if h.starts_with('[') && h.contains("]:") => h,
                _ if h.starts_with('[') => format!("{h}:{port}"),
                0 => format!("{h}:{port}"),
                // `host:port` given: its own port is kept.
                1 => h,
                _ => format!("[{h}]:{port}"),
            })
            .collect(),
    }
}

/// Maps `line` onto `doppio run`.
pub(crate) fn plan(line: &StressLine) -> StressPlan {
    let mut a: Vec<String> = nodes(line);
    let mut notes = Vec::new();
    let push = |a: &mut Vec<String>, k: &str, v: String| {
        a.push(k.to_owned());
        a.push(v);
    };
    match line.command.length {
        Length::Count(n) => {
            push(&mut a, "-d", n.to_string());
            // One segment per backend: each runs the command once, iterations 0..n, so that
            // `write n=N` over SEQ(1..N) writes every key (two segments of n/2 would each
            // start again at 0 and write the first half twice).
            push(&mut a, "--segments", "1".to_owned());
        }
        Length::Time(d) => push(&mut a, "-d", format!("{}s", d.as_secs())),
    }
    // Every operation counted from the first: no unrecorded warm-up (`no-warmup`'s run).
    push(&mut a, "--warmup", "0".to_owned());
    if !line.command.no_warmup {
        notes.push(
            "no warm-up is run (as with no-warmup): every operation of n= is measured".to_owned(),
        );
    }
    let threads = line.groups.rate.threads.unwrap_or(DEFAULT_THREADS);
    push(&mut a, "-p", threads.to_string());
    match line.groups.rate.pace {
        Some(Pace::Fixed(r)) => push(&mut a, "-r", r.to_string()),
        Some(Pace::Throttle(r)) => {
            push(&mut a, "-r", r.to_string());
            notes.push(
                "throttle= paces as fixed= does: latency counts from each operation's due time \
                 (the report's `after release` rows count from its send, as throttle's)"
                    .to_owned(),
            );
        }
        None => {}
    }
    if let Some(cl) = line.command.consistency {
        push(&mut a, "--consistency", cl.name().to_owned());
    }
    let m = &line.groups.mode;
    if let Some(u) = &m.user {
        push(&mut a, "--user", u.clone());
    }
    if let Some(p) = &m.password {
        push(&mut a, "--password", p.expose().to_owned());
    }
    if let Some(v) = m.protocol {
        push(&mut a, "--protocol", v.to_string());
    }
    if let Some(c) = m.compression {
        let name = match c {
            Compression::Lz4 => "lz4",
            Compression::None => "none",
        };
        push(&mut a, "--compression", name.to_owned());
    }
    if let Some(c) = m.connections {
        push(&mut a, "-c", c.to_string());
    }
    if let Some(h) = &line.groups.log.hdrfile {
        push(&mut a, "--hdr-log", h.display().to_string());
    }
    if let Some(i) = line.groups.log.interval {
        push(&mut a, "-s", format!("{}ms", i.as_millis()));
    }
    let workload = match &line.command.kind {
        Kind::User {
            profiles,
            inserts,
            ops,
        } => {
            let paths: Vec<String> = profiles.iter().map(|p| p.display().to_string()).collect();
            push(&mut a, "--profile", paths.join(","));
            for (name, w) in ops {
                push(&mut a, "-P", format!("{}={w}", weight_param(name)));
            }
            // An operation that ops() leaves out does not run; the converted profiles'
            // weights are 0 but for their inserts'.
            for insert in inserts {
                if !ops.is_empty() && !ops.iter().any(|(name, _)| name == insert) {
                    push(&mut a, "-P", format!("{}=0", weight_param(insert)));
                }
            }
            // The operation doppio adds to a profile reads back the insert's rows: checked.
            let validates = |name: &str| {
                name == VALIDATE
                    || name
                        .strip_suffix(VALIDATE)
                        .is_some_and(|s| s.ends_with('.'))
            };
            if ops.iter().any(|(name, w)| validates(name) && *w > 0.0) {
                a.push("--validate".to_owned());
            }
            if let Some(p) = &line.groups.population {
                push(&mut a, "-P", format!("population={}", p.spec()));
            }
            None
        }
        kind => Some(InlineWorkload {
            name: format!("stress-{}", kind.name()),
            toml: legacy::toml(line, &population(line)),
        }),
    };
    StressPlan {
        run_args: a,
        workload,
        notes,
    }
}
