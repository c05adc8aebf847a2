//! What several subcommands set up the same way: the connection options and the workload of
//! the command line, the `--cycles` range, the default report file and the check that the
//! files a command will write can be written. Imports no command.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::{self, ConnectOptions, Driver, Locality};
use crate::cli::{Connect, CyclesArgs, ResultArgs};
use crate::engine::cycles::Cycles;
use crate::failure::{Failure, UsageError};
use crate::workload::Workload;

/// The connection options of `c`, checked against every backend of `drivers` (a setting one
/// of them cannot honour is refused before anything connects).
pub(crate) fn connect_options(c: &Connect, drivers: &[Driver]) -> Result<ConnectOptions, Failure> {
    c.check_pinning()?;
    let options = ConnectOptions {
        nodes: c.node_addrs()?,
        threads: c.threads,
        connections: c.connections,
        consistency: c.consistency,
        request_timeout: c.timeout,
        retries: c.retries,
        compression: c.compression,
        username: c.user.clone(),
        password: c.password.clone(),
        pin: !c.no_pin,
        spin_before_park: c.spin,
        uring_wait: c.uring_wait(drivers)?,
        page_size: backend::DEFAULT_PAGE_SIZE,
        discard_results: false,
        waterfall_every: None,
        serial_consistency: c.serial_consistency,
        locality: Locality::new(c.datacenter.clone(), c.rack.clone())?,
        retry_backoff: c.retry_backoff,
        protocol: c.protocol.or_else(|| backend::common_protocol(drivers)),
        tls: c.tls_options(),
        sqpoll: c.sqpoll_options(drivers)?,
    };
    for &d in drivers {
        backend::check_settings(d, &options)?;
    }
    Ok(options)
}

/// What a search over loads (`curve`, `findmax`) starts from, each checked before anything
/// connects: the workload (without `--validate`), the drivers (at least one), and the
/// connection options with the page size and how results are consumed.
pub(crate) fn contest_of(
    c: &Connect,
    r: &ResultArgs,
) -> Result<(Arc<Workload>, Vec<Driver>, ConnectOptions), Failure> {
    let workload = with_validation(workload_of(c)?, false)?;
    let drivers = c.drivers()?;
    if drivers.is_empty() {
        return Err(UsageError::NoDriver.into());
    }
    let options = result_options(c, r, &drivers)?;
    Ok((workload, drivers, options))
}

/// [`connect_options`] with the page size and how results are consumed (`run`, `findmax`).
pub(crate) fn result_options(
    c: &Connect,
    r: &ResultArgs,
    drivers: &[Driver],
) -> Result<ConnectOptions, Failure> {
    let page_size = i32::try_from(r.page_size).map_err(|_| UsageError::PageSizeTooLarge {
        page_size: r.page_size,
    })?;
    Ok(ConnectOptions {
        page_size,
        discard_results: r.discard_results,
        ..connect_options(c, drivers)?
    })
}

pub(crate) fn workload_of(c: &Connect) -> Result<Arc<Workload>, Failure> {
    let params = c.param_pairs()?;
    Ok(Arc::new(match (&c.inline_workload, &c.profile) {
        (Some(w), _) => Workload::from_toml(&w.name, &w.toml, &params)?,
        (None, Some(profile)) => Workload::from_profile(profile, &params)?,
        (None, None) => Workload::resolve(&c.workload, &params)?,
    }))
}

pub(crate) fn first_driver(c: &Connect) -> Result<Driver, Failure> {
    let drivers = c.drivers()?;
    Ok(drivers.first().copied().ok_or(UsageError::NoDriver)?)
}

/// The range of `--cycles` or `--loader` for `workload`, if either is given.
pub(crate) fn cycles_of(a: &CyclesArgs, workload: &Workload) -> Result<Option<Cycles>, Failure> {
    Ok(Cycles::choose(
        a.cycles,
        a.loader,
        workload.key_space(),
        &workload.name,
    )?)
}

/// Where a command's report goes: the `-o` path as given (the user named it: it is written
/// there, replacing a file of that name, even when the run fails before measuring), or a
/// default name in the current folder, reserved at once by creating it empty, with `-2`,
/// `-3`, ... appended when a file of that name exists: runs started in the same second,
/// or a report kept from an earlier run, are never overwritten.
#[derive(Debug)]
pub(crate) struct ReportPath {
    path: PathBuf,
    /// A default name this command created (empty until the report is written).
    reserved: bool,
}

impl ReportPath {
    /// The most numbered names tried before giving up (a folder with a thousand reports of
    /// one workload started in one second is not a case to guess about).
    const MAX_SUFFIX: u32 = 1000;

    /// `given` (checked writable), or the first free default name, reserved.
    pub(crate) fn choose(
        given: Option<&Path>,
        prefix: &str,
        workload: &str,
        started_at: &str,
    ) -> Result<Self, Failure> {
        if let Some(path) = given {
            check_writable(path, "-o")?;
            return Ok(Self {
                path: path.to_owned(),
                reserved: false,
            });
        }
        Self::reserve(default_report_path(prefix, workload, started_at))
    }

    /// The first free name of `base`, `base-2`, `base-3`, ... (`.json` kept last), created
    /// empty so that no other run takes it.
    fn reserve(base: PathBuf) -> Result<Self, Failure> {
        check_writable(&base, "-o")?;
        let stem = base.with_extension("");
        for k in 1..=Self::MAX_SUFFIX {
            let path = match k {
                1 => base.clone(),
                k => PathBuf::from(format!("{}-{k}.json", stem.display())),
            };
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => {
                    return Ok(Self {
                        path,
                        reserved: true,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(UsageError::NotWritable {
                        option: "-o",
                        folder: path.parent().unwrap_or(Path::new(".")).to_owned(),
                        path,
                        source,
                    }
                    .into())
                }
            }
        }
        Err(UsageError::NoFreeReportName {
            base,
            tried: Self::MAX_SUFFIX,
        }
        .into())
    }

    /// The path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a run that measured nothing writes its report here: only where the user
    /// named the file (`-o`); a default name is given back instead.
    pub(crate) fn keeps_unmeasured(&self) -> bool {
        !self.reserved
    }

    /// Gives back a reserved default name the command will not write (its empty file is
    /// removed); a named path is left as it is.
    pub(crate) fn release(self) {
        if self.reserved {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A report's default file in the current folder: PREFIX-WORKLOAD-DATE.json (the
/// workload's file stem, the start time without separators).
pub(crate) fn default_report_path(prefix: &str, workload: &str, started_at: &str) -> PathBuf {
    PathBuf::from(format!(
        "{prefix}-{}-{}.json",
        Path::new(workload)
            .file_stem()
            .map_or("workload".into(), |s| s.to_string_lossy().into_owned()),
        started_at
            .replace([':', '-'], "")
            .replace('T', "-")
            .trim_end_matches('Z')
    ))
}

/// Refuses, before anything starts, a file the command could not write when it ends:
/// `option`'s `path` in a folder that does not exist, a folder itself, or not writable
/// (an existing file is opened for appending, which changes nothing; a new one is probed
/// with a file made and removed at once in its folder). Without this a missing folder was
/// found only after the whole run.
pub(crate) fn check_writable(path: &Path, option: &'static str) -> Result<(), Failure> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(UsageError::NoFolder {
            option,
            path: path.to_owned(),
            folder: folder.to_owned(),
        }
        .into());
    }
    if path.is_dir() {
        return Err(UsageError::IsFolder {
            option,
            path: path.to_owned(),
        }
        .into());
    }
    let writable = if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
    } else {
        let probe = folder.join(format!(".doppio-probe-{}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map(drop)
            .and_then(|()| std::fs::remove_file(&probe))
    };
    Ok(writable.map_err(|source| UsageError::NotWritable {
        option,
        path: path.to_owned(),
        folder: folder.to_owned(),
        source,
    })?)
}

/// The workload as `--validate` asks: with it, at least one run statement must name the row
/// it reads (`validate`); without it, no statement is validated.
pub(crate) fn with_validation(workload: Arc<Workload>, on: bool) -> Result<Arc<Workload>, Failure> {
    let validated = workload.run.iter().any(|s| s.validate.is_some());
    if on && !validated {
        return Err(UsageError::NothingToValidate {
            workload: workload.name.clone(),
        }
        .into());
    }
    if on || !validated {
        return Ok(workload);
    }
    let mut w = Workload::clone(&workload);
    for s in &mut w.run {
        s.validate = None;
    }
    Ok(Arc::new(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A default name taken by another run (or an earlier report) is never reused: the next
    /// free numbered name is reserved; a name given back is free again; a name given with
    /// -o is used as it is, never numbered.
    #[test]
    fn default_report_names_never_collide_and_a_named_one_is_kept() {
        let dir = std::env::temp_dir().join(format!("doppio-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("doppio-empty-20261126-101010.json");
        let first = ReportPath::reserve(base.clone()).unwrap();
        let second = ReportPath::reserve(base.clone()).unwrap();
        let third = ReportPath::reserve(base.clone()).unwrap();
        assert_eq!(first.path(), base);
        assert_eq!(
            second.path(),
            dir.join("doppio-empty-20261126-101010-2.json")
        );
        assert_eq!(
            third.path(),
            dir.join("doppio-empty-20261126-101010-3.json")
        );
        assert!(third.path().exists(), "reserved on disk");
        assert!(!first.keeps_unmeasured());
        second.release();
        let again = ReportPath::reserve(base.clone()).unwrap();
        assert_eq!(
            again.path(),
            dir.join("doppio-empty-20261126-101010-2.json")
        );
        // Named with -o: as given, kept even when nothing is measured, never removed.
        let named = ReportPath::choose(Some(&base), "doppio", "empty", "").unwrap();
        assert_eq!(named.path(), base);
        assert!(named.keeps_unmeasured());
        named.release();
        assert!(base.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
