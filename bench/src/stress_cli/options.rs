//! The `-groups` of a cassandra-stress command line read into the model: `-rate`, `-pop`,
//! `-col`, `-schema`, `-node`, `-port`, `-mode`, `-log`. Groups and sub-options that
//! cassandra-stress has and doppio stress does not run (`-insert`, `-graph`, `-rate auto`,
//! `-mode thrift`, ...) are refused by name.

use std::time::Duration;

use super::error::StressError;
use super::lex::{Group, Word};
use super::model::{
    ColumnSpec, Groups, Kind, LogSpec, ModeSpec, Pace, Population, RateSpec, SchemaSpec,
};
use super::values::{self, once};
use crate::backend::Compression;
use crate::workload::dist::DistShape;

/// cassandra-stress groups doppio stress does not run yet.
const UNSUPPORTED_GROUPS: &[&str] = &[
    "-insert",
    "-errors",
    "-sample",
    "-transport",
    "-graph",
    "-tokenrange",
    "-sendto",
    "-credentials-file",
    "-reporting",
    "-jmx",
];

/// The most bytes `-col size=` gives a value (1 MiB).
pub(crate) const MAX_VALUE_SIZE: i64 = 1 << 20;
/// The most columns `-col n=` gives a row.
pub(crate) const MAX_COLUMNS: u32 = 1000;

/// Reads every group, for `kind`.
pub(crate) fn groups(groups: &[Group], kind: &Kind) -> Result<Groups, StressError> {
    let mut o = Groups::default();
    let mut seen: Vec<&str> = Vec::new();
    for g in groups {
        let name = g.name.as_str();
        if UNSUPPORTED_GROUPS.contains(&name) {
            let words: Vec<String> = g.words.iter().map(text).collect();
            let what = [name.to_owned()]
                .into_iter()
                .chain(words)
                .collect::<Vec<_>>();
            return Err(StressError::unsupported(&format!(
                "option `{}`",
                what.join(" ")
            )));
        }
        if seen.contains(&name) {
            return Err(StressError::Repeated {
                option: name.to_owned(),
            });
        }
        seen.push(name);
        let user = matches!(kind, Kind::User { .. });
        match name {
            "-rate" => o.rate = rate(g)?,
            "-pop" => o.population = Some(population(g)?),
            "-col" if user => return Err(not_with_user("-col")),
            "-col" => o.columns = columns(g)?,
            "-schema" if user => return Err(not_with_user("-schema")),
            "-schema" => o.schema = schema(g)?,
            "-node" => o.nodes = nodes(g)?,
            "-port" => o.port = Some(port(g)?),
            "-mode" => o.mode = mode(g)?,
            "-log" => o.log = log(g)?,
            _ => {
                return Err(StressError::UnknownOption {
                    option: name.to_owned(),
                    place: String::new(),
                })
            }
        }
    }
    Ok(o)
}

/// A word as given.
fn text(w: &Word) -> String {
    match w {
        Word::Pair { key, value } => format!("{key}={value}"),
        Word::Call { text, .. } | Word::Compare { text, .. } | Word::Bare(text) => text.clone(),
    }
}

fn not_with_user(group: &str) -> StressError {
    StressError::conflict(&format!(
        "option `{group}` applies to write, read and mixed: a user profile's columnspec and \
         keyspace_definition say what it sets"
    ))
}

/// A sub-option of `group` that cassandra-stress has and doppio stress does not run.
fn unsupported_in(group: &str, w: &Word) -> StressError {
    StressError::unsupported(&format!("option `{group} {}`", text(w)))
}

fn unknown_in(group: &str, w: &Word) -> StressError {
    StressError::UnknownOption {
        option: w.name().to_owned(),
        place: format!(" in `{group}`"),
    }
}

fn rate(g: &Group) -> Result<RateSpec, StressError> {
    let mut r = RateSpec::default();
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "threads" => {
                once(&r.threads, "-rate threads")?;
                let max = crate::cli::limits::MAX_CONCURRENCY;
                let n = values::count("-rate threads", value, 1, max)?;
                r.threads = usize::try_from(n).ok();
            }
            Word::Pair { key, value } if key == "throttle" || key == "fixed" => {
                if r.pace.is_some() {
                    return Err(StressError::conflict(
                        "options `-rate throttle` and `-rate fixed` do not go together: give one",
                    ));
                }
                let option = format!("-rate {key}");
                let v = values::rate(&option, value)?;
                r.pace = Some(if key == "fixed" {
                    Pace::Fixed(v)
                } else {
                    Pace::Throttle(v)
                });
            }
            Word::Bare(b) if b.eq_ignore_ascii_case("auto") => {
                return Err(StressError::unsupported_hint(
                    "option `-rate auto`",
                    "give -rate threads=N",
                ))
            }
            Word::Compare { key, .. } if key == "threads" => {
                return Err(StressError::unsupported_hint(
                    &format!("option `-rate {}`", text(w)),
                    "give -rate threads=N",
                ))
            }
            _ => return Err(unknown_in("-rate", w)),
        }
    }
    Ok(r)
}

fn population(g: &Group) -> Result<Population, StressError> {
    let mut p: Option<Population> = None;
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "seq" => {
                if p.is_some() {
                    return Err(two_populations());
                }
                let (min, max) = values::range("-pop seq", value)?;
                p = Some(Population::Seq { min, max });
            }
            Word::Pair { key, value } if key == "dist" => {
                if p.is_some() {
                    return Err(two_populations());
                }
                let d = values::distribution("-pop dist", value, 0, values::MAX_OPS as i64)?;
                p = Some(Population::Dist(d.to_string()));
            }
            Word::Pair { key, .. }
                if ["contents", "read-lookback", "revisit"].contains(&key.as_str()) =>
            {
                return Err(unsupported_in("-pop", w))
            }
            Word::Bare(b) if b.eq_ignore_ascii_case("no-wrap") => {
                return Err(unsupported_in("-pop", w))
            }
            _ => return Err(unknown_in("-pop", w)),
        }
    }
    p.ok_or_else(|| StressError::bad("-pop", "", "needs seq=MIN..MAX or dist=DIST"))
}

fn two_populations() -> StressError {
    StressError::conflict("options `-pop seq` and `-pop dist` do not go together: give one")
}

fn columns(g: &Group) -> Result<ColumnSpec, StressError> {
    let mut c = ColumnSpec::default();
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "size" => {
                once(&c.size, "-col size")?;
                let d = values::distribution("-col size", value, 0, MAX_VALUE_SIZE)?;
                c.size = Some(d.to_string());
            }
            Word::Pair { key, value } if key == "n" => {
                once(&c.count, "-col n")?;
                let d = values::distribution("-col n", value, 1, i64::from(MAX_COLUMNS))?;
                if !matches!(d.shape, DistShape::Fixed(_)) {
                    return Err(StressError::unsupported_hint(
                        &format!("option `-col n={value}` (a varying column count)"),
                        "give n=FIXED(k)",
                    ));
                }
                c.count = u32::try_from(d.max).ok();
            }
            Word::Pair { key, .. }
                if ["names", "super", "comparator", "timestamp", "data"]
                    .contains(&key.as_str()) =>
            {
                return Err(unsupported_in("-col", w))
            }
            Word::Bare(b) if b.eq_ignore_ascii_case("slice") => {
                return Err(unsupported_in("-col", w))
            }
            _ => return Err(unknown_in("-col", w)),
        }
    }
    Ok(c)
}

/// A keyspace name doppio puts into CQL unquoted.
fn keyspace(value: &str) -> Result<String, StressError> {
    let ok = !value.is_empty()
        && value.len() <= 48
        && value.starts_with(|c: char| c.is_ascii_alphabetic())
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(StressError::bad(
            "-schema keyspace",
            value,
            "is not a keyspace name (a letter, then letters, digits and _; at most 48)",
        ));
    }
    Ok(value.to_owned())
}

fn schema(g: &Group) -> Result<SchemaSpec, StressError> {
    let mut s = SchemaSpec::default();
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "keyspace" => {
                once(&s.keyspace, "-schema keyspace")?;
                s.keyspace = Some(keyspace(value)?);
            }
            Word::Call { name, args, .. } if name == "replication" => {
                once(&s.factor, "-schema replication")?;
                for (k, v) in args {
                    if !k.eq_ignore_ascii_case("factor") {
                        return Err(StressError::unsupported(&format!(
                            "option `-schema replication({k}=...)` (only factor= is)"
                        )));
                    }
                    let f = values::count("-schema replication(factor)", v, 1, 100)?;
                    s.factor = u32::try_from(f).ok();
                }
            }
            Word::Call { name, .. } | Word::Pair { key: name, .. }
                if name == "compaction" || name == "compression" =>
            {
                return Err(unsupported_in("-schema", w))
            }
            _ => return Err(unknown_in("-schema", w)),
        }
    }
    Ok(s)
}

fn nodes(g: &Group) -> Result<Vec<String>, StressError> {
    let mut out = Vec::new();
    for w in &g.words {
        match w {
            Word::Bare(b) if b.eq_ignore_ascii_case("whitelist") => {
                return Err(unsupported_in("-node", w))
            }
            Word::Bare(list) => {
                for n in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !n
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
                    {
                        return Err(StressError::bad(
                            "-node",
                            n,
                            "is not a host name or address",
                        ));
                    }
                    out.push(n.to_owned());
                }
            }
            Word::Pair { key, .. } if key == "file" || key == "datacenter" => {
                return Err(unsupported_in("-node", w))
            }
            _ => return Err(unknown_in("-node", w)),
        }
    }
    if out.is_empty() {
        return Err(StressError::bad(
            "-node",
            "",
            "needs a host (such as 127.0.0.1,10.0.0.2)",
        ));
    }
    Ok(out)
}

fn port(g: &Group) -> Result<u16, StressError> {
    let mut native = None;
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "native" => {
                once(&native, "-port native")?;
                let p = values::count("-port native", value, 1, u64::from(u16::MAX))?;
                native = u16::try_from(p).ok();
            }
            Word::Pair { key, .. } if key == "thrift" || key == "jmx" => {
                return Err(unsupported_in("-port", w))
            }
            _ => return Err(unknown_in("-port", w)),
        }
    }
    native.ok_or_else(|| StressError::bad("-port", "", "needs native=PORT"))
}

fn mode(g: &Group) -> Result<ModeSpec, StressError> {
    let mut m = ModeSpec::default();
    for w in &g.words {
        match w {
            Word::Bare(b)
                if ["native", "cql3", "prepared"].contains(&b.to_ascii_lowercase().as_str()) => {}
            Word::Bare(b)
                if ["thrift", "simplenative", "unprepared", "cql3_prepared"]
                    .contains(&b.to_ascii_lowercase().as_str()) =>
            {
                return Err(unsupported_in("-mode", w))
            }
            Word::Pair { key, value } if key == "user" => {
                once(&m.user, "-mode user")?;
                m.user = Some(value.clone());
            }
            Word::Pair { key, value } if key == "password" => {
                once(&m.password, "-mode password")?;
                m.password = Some(value.clone().into());
            }
            Word::Pair { key, value } if key == "protocolversion" => {
                once(&m.protocol, "-mode protocolVersion")?;
                m.protocol = match value.trim() {
                    "4" => Some(4),
                    "5" => Some(5),
                    "1" | "2" | "3" => {
                        return Err(StressError::unsupported_hint(
                            &format!("option `-mode protocolVersion={value}`"),
                            "doppio speaks protocol 4 and 5",
                        ))
                    }
                    _ => {
                        return Err(StressError::bad(
                            "-mode protocolVersion",
                            value,
                            "is not a protocol version (4 or 5)",
                        ))
                    }
                };
            }
            Word::Pair { key, value } if key == "compression" => {
                once(&m.compression, "-mode compression")?;
                m.compression = Some(Compression::parse(value).map_err(|_| {
                    StressError::bad("-mode compression", value, "is not lz4 or none")
                })?);
            }
            Word::Pair { key, value } if key == "connectionsperhost" => {
                once(&m.connections, "-mode connectionsPerHost")?;
                let max = crate::cli::limits::MAX_CONNECTIONS;
                let n = values::count("-mode connectionsPerHost", value, 1, max)?;
                m.connections = usize::try_from(n).ok();
            }
            Word::Pair { key, .. }
                if key == "maxpending"
                    || key == "auth-provider"
                    || key == "requestsperconnection"
                    || key.starts_with("ssl") =>
            {
                return Err(unsupported_in("-mode", w))
            }
            _ => return Err(unknown_in("-mode", w)),
        }
    }
    if m.password.is_some() && m.user.is_none() {
        return Err(StressError::conflict(
            "option `-mode password=` needs `-mode user=`",
        ));
    }
    Ok(m)
}

fn log(g: &Group) -> Result<LogSpec, StressError> {
    let mut l = LogSpec::default();
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "hdrfile" => {
                once(&l.hdrfile, "-log hdrfile")?;
                if value.trim().is_empty() {
                    return Err(StressError::bad(
                        "-log hdrfile",
                        value,
                        "is not a file name",
                    ));
                }
                l.hdrfile = Some(value.trim().into());
            }
            Word::Pair { key, value } if key == "interval" => {
                once(&l.interval, "-log interval")?;
                l.interval = Some(interval(value)?);
            }
            Word::Pair { key, .. } if key == "file" || key == "level" => {
                return Err(unsupported_in("-log", w))
            }
            Word::Bare(b)
                if b.eq_ignore_ascii_case("no-summary")
                    || b.eq_ignore_ascii_case("no-settings") =>
            {
                return Err(unsupported_in("-log", w))
            }
            _ => return Err(unknown_in("-log", w)),
        }
    }
    Ok(l)
}

/// `-log interval=`: seconds (a bare number), or a duration with `s` or `ms`; 1ms to 1h.
fn interval(value: &str) -> Result<Duration, StressError> {
    let t = value.trim();
    let d = if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
        t.parse::<u64>().ok().map(Duration::from_secs)
    } else {
        crate::units::duration(t).ok()
    };
    match d {
        Some(d) if d >= Duration::from_millis(1) && d <= Duration::from_secs(3600) => Ok(d),
        _ => Err(StressError::bad(
            "-log interval",
            value,
            "is not an interval from 1ms to 1h (such as 1, 1s or 500ms)",
        )),
    }
}
