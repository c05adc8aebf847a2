//! The command and its options read into the typed model ([`super::model`]): `write`,
//! `read`, `mixed ratio(...)`, `user profile= ops(...)` with `n=`, `duration=`, `cl=`,
//! `no-warmup`; the `-groups` are read by [`super::options`]. Commands and options that
//! cassandra-stress has and doppio stress does not run are refused by name.

use std::path::PathBuf;

use super::error::StressError;
use super::lex::{Group, Line, Word};
use super::model::{CommandSpec, Kind, Length, StressLine};
use super::options;
use super::values::{self, once};
use crate::backend::Consistency;
use crate::workload::profile::convert::insert_op;
use crate::workload::profile::{Profile, ProfileError};

/// cassandra-stress commands doppio stress does not run yet.
const UNSUPPORTED_COMMANDS: &[&str] = &[
    "counter_write",
    "counter_read",
    "help",
    "print",
    "legacy",
    "version",
];

/// Reads a split line into the model.
pub(crate) fn line(l: &Line) -> Result<StressLine, StressError> {
    let command = command(&l.command)?;
    let opts = options::groups(&l.groups, &command.kind)?;
    Ok(StressLine {
        command,
        groups: opts,
    })
}

/// The command and its options.
fn command(g: &Group) -> Result<CommandSpec, StressError> {
    let name = g.name.as_str();
    if UNSUPPORTED_COMMANDS.contains(&name) {
        return Err(StressError::unsupported(&format!("command `{name}`")));
    }
    if !["write", "read", "mixed", "user"].contains(&name) {
        return Err(StressError::UnknownCommand {
            command: name.to_owned(),
        });
    }
    let mut n = None;
    let mut duration = None;
    let mut consistency = None;
    let mut no_warmup = false;
    let mut ratio: Option<(f64, f64)> = None;
    let mut profile: Option<(Vec<PathBuf>, Vec<String>)> = None;
    let mut ops: Option<Vec<(String, f64)>> = None;
    for w in &g.words {
        match w {
            Word::Pair { key, value } if key == "n" => {
                once(&n, "n")?;
                n = Some(values::count("n", value, 1, values::MAX_OPS)?);
            }
            Word::Pair { key, value } if key == "duration" => {
                once(&duration, "duration")?;
                duration = Some(values::duration("duration", value)?);
            }
            Word::Pair { key, value } if key == "cl" => {
                once(&consistency, "cl")?;
                consistency = Some(Consistency::parse(value).map_err(|e| {
                    StressError::bad("cl", value, &format!("is not a consistency level ({e})"))
                })?);
            }
            Word::Bare(b) if b.eq_ignore_ascii_case("no-warmup") => no_warmup = true,
            Word::Pair { key, value } if key == "truncate" => {
                if !value.eq_ignore_ascii_case("never") {
                    return Err(StressError::unsupported_hint(
                        &format!("`truncate={value}`"),
                        "truncate the table with cqlsh first (truncate=never is the default)",
                    ));
                }
            }
            Word::Call {
                name: call, args, ..
            } if call == "ratio" && name == "mixed" => {
                once(&ratio, "ratio")?;
                ratio = Some(mixed_ratio(args)?);
            }
            Word::Pair { key, value } if key == "profile" && name == "user" => {
                once(&profile, "profile")?;
                profile = Some(read_profiles(value)?);
            }
            Word::Call {
                name: call, args, ..
            } if call == "ops" && name == "user" => {
                once(&ops, "ops")?;
                ops = Some(user_ops(args)?);
            }
            Word::Compare { text, .. } => {
                return Err(StressError::unsupported_hint(
                    &format!("`{text}` (stopping on the error of the mean)"),
                    "give n= or duration=",
                ))
            }
            Word::Pair { key, .. } | Word::Call { name: key, .. }
                if ["clustering", "keysize", "ratio", "ops", "profile"].contains(&key.as_str()) =>
            {
                return Err(match key.as_str() {
                    "ratio" | "ops" | "profile" => StressError::conflict(&format!(
                        "option `{key}` does not apply to `{name}` (ratio(...) is mixed's, \
                         profile= and ops(...) are user's)"
                    )),
                    _ => StressError::unsupported(&format!("option `{key}`")),
                })
            }
            other => {
                return Err(StressError::UnknownOption {
                    option: other.name().to_owned(),
                    place: format!(" of `{name}`"),
                })
            }
        }
    }
    let length = match (n, duration) {
        (Some(_), Some(_)) => {
            return Err(StressError::conflict(
                "options `n` and `duration` do not go together: give one",
            ))
        }
        (Some(n), None) => Length::Count(n),
        (None, Some(d)) => Length::Time(d),
        (None, None) => {
            return Err(StressError::unsupported_hint(
                "running without n= or duration= (until the error of the mean settles)",
                "give n= (such as n=1M) or duration= (such as duration=5m)",
            ))
        }
    };
    let kind = match name {
        "write" => Kind::Write,
        "read" => Kind::Read,
        // cassandra-stress's default ratio: as many reads as writes.
        "mixed" => {
            let (write, read) = ratio.unwrap_or((1.0, 1.0));
            Kind::Mixed { write, read }
        }
        _ => {
            let (profiles, inserts) = profile
                .ok_or_else(|| StressError::conflict("command `user` needs `profile=FILE.yaml`"))?;
            Kind::User {
                profiles,
                inserts,
                ops: ops.unwrap_or_default(),
            }
        }
    };
    Ok(CommandSpec {
        kind,
        length,
        consistency,
        no_warmup,
    })
}

/// `ratio(write=W,read=R)`.
fn mixed_ratio(args: &[(String, String)]) -> Result<(f64, f64), StressError> {
    let (mut write, mut read) = (None, None);
    for (k, v) in args {
        match k.to_ascii_lowercase().as_str() {
            "write" => {
                once(&write, "ratio(write)")?;
                write = Some(values::weight("ratio(write)", v)?);
            }
            "read" => {
                once(&read, "ratio(read)")?;
                read = Some(values::weight("ratio(read)", v)?);
            }
            other => {
                return Err(StressError::unsupported(&format!(
                    "operation `{other}` in ratio(...) (mixed runs write and read)"
                )))
            }
        }
    }
    let (write, read) = (write.unwrap_or(0.0), read.unwrap_or(0.0));
    if write + read <= 0.0 {
        return Err(StressError::bad(
            "ratio",
            &format!("write={write},read={read}"),
            "runs nothing (give a weight above 0)",
        ));
    }
    Ok((write, read))
}

/// `ops(name=w,...)`: names lower-cased, as cassandra-stress lowers query names.
fn user_ops(args: &[(String, String)]) -> Result<Vec<(String, f64)>, StressError> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (k, v) in args {
        let name = k.to_ascii_lowercase();
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(StressError::bad(
                "ops",
                k,
                "is not an operation name (letters, digits, _, - and ., as in \
                 SPECNAME.QUERY)",
            ));
        }
        if out.iter().any(|(n, _)| *n == name) {
            return Err(StressError::Repeated {
                option: format!("ops({name})"),
            });
        }
        out.push((name.clone(), values::weight(&format!("ops({name})"), v)?));
    }
    if out.is_empty() || out.iter().all(|(_, w)| *w <= 0.0) {
        return Err(StressError::bad(
            "ops",
            "",
            "runs nothing (give an operation a weight above 0)",
        ));
    }
    Ok(out)
}

/// The profiles of `profile=` (comma-separated, as cassandra-stress takes several), each
/// read and checked, and their inserts' operation names.
fn read_profiles(value: &str) -> Result<(Vec<PathBuf>, Vec<String>), StressError> {
    let profiles = Profile::read_all(value).map_err(|e| match e {
        ProfileError::Io { path, source } => StressError::Profile {
            path,
            reason: source.to_string(),
        },
        other => StressError::Profile {
            path: value.to_owned(),
            reason: other.to_string(),
        },
    })?;
    let paths = value.split(',').map(|p| PathBuf::from(p.trim())).collect();
    let inserts = if profiles.len() == 1 {
        vec![insert_op(None)]
    } else {
        profiles
            .iter()
            .map(|p| insert_op(Some(&p.specname)))
            .collect()
    };
    Ok((paths, inserts))
}
