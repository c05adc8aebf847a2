//! Stacks of the bench itself, sampled around each measured segment: drawn as flamegraphs
//! (`doppio run --flamegraph PREFIX`), and classified by layer for the report's ANATOMY
//! table (`--anatomy`, or with `--flamegraph`; see [`crate::probe::anatomy`]).
//!
//! Around each measured segment, `perf record -e cpu-clock --call-graph dwarf` samples this
//! process (hardware counters are not needed, so it works in VMs); after the run, each
//! backend's recordings are read back with `perf script` and folded into stacks
//! ([`Flames::fold`]). A flamegraph run draws them with the `inferno` crate as
//! `PREFIX-<driver>.svg`, with the folded stacks beside it (`PREFIX-<driver>.folded`), and,
//! with several backends, one differential flamegraph per pair of CPU per request
//! (`PREFIX-diff-<a>-<b>.svg`). Warmups are not recorded.
//!
//! `perf` is a separate process: its own CPU time is not in the bench's rusage (it is
//! measured apart, [`Stopped::recorder_cpu`]), but it takes CPU from the machine while it
//! records, and each sample's stack copy is made in the sampled thread: the overhead figures
//! of a sampled run are perturbed (the report says so). [`Sampling::ANATOMY`] samples half
//! as often with half the stack of [`Sampling::FLAMEGRAPH`], to perturb less.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How densely `perf record` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sampling {
    /// Samples per second per thread (cpu-clock).
    pub hz: u32,
    /// Bytes of each sample's user stack copied for DWARF unwinding.
    pub stack_bytes: u32,
}

impl Sampling {
    /// For flamegraphs: deep stacks, many samples.
    pub(crate) const FLAMEGRAPH: Sampling = Sampling {
        hz: 999,
        stack_bytes: 16384,
    };
    /// For the anatomy alone: the frame that owns a sample is near the leaf, so a shorter
    /// stack does (a frame that names no layer above the cut-off goes to `other`).
    pub(crate) const ANATOMY: Sampling = Sampling {
        hz: 499,
        stack_bytes: 8192,
    };

    /// The command's options, as a report states them.
    pub(crate) fn describe(&self) -> String {
        format!(
            "perf record -e cpu-clock -F {} --call-graph dwarf,{}",
            self.hz, self.stack_bytes
        )
    }
}

/// Why a flamegraph could not be recorded or drawn.
#[derive(Debug, thiserror::Error)]
pub enum FlameError {
    /// `perf` could not be started.
    #[error("cannot start `perf record` (is linux-perf installed?): {0}")]
    Spawn(std::io::Error),
    /// `perf` ended with an error.
    #[error("`{command}` failed ({status}): {}", if detail.is_empty() { "it printed nothing" } else { detail })]
    Perf {
        /// The command.
        command: String,
        /// How it ended (`exit status: 255`, `signal: 9 (SIGKILL)`).
        status: std::process::ExitStatus,
        /// What it printed on stderr.
        detail: String,
    },
    /// Reading, folding or drawing failed.
    #[error("flamegraph {path}: {detail}")]
    Render {
        /// The file.
        path: String,
        /// What failed.
        detail: String,
    },
}

/// One running `perf record` of this process.
pub(crate) struct Recording {
    child: Child,
    data: PathBuf,
}

/// A recording that ended.
pub(crate) struct Stopped {
    /// Its data file.
    pub data: PathBuf,
    /// The CPU time `perf record` itself used (user and system), which the bench's own
    /// CPU figures do not include.
    pub recorder_cpu: Duration,
}

impl Recording {
    /// Starts sampling this process into `data` as `sampling` says (DWARF call graphs).
    pub(crate) fn start(data: &Path, sampling: Sampling) -> Result<Self, FlameError> {
        let child = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-F"])
            .arg(sampling.hz.to_string())
            .arg("--call-graph")
            .arg(format!("dwarf,{}", sampling.stack_bytes))
            .arg("-p")
            .arg(std::process::id().to_string())
            .arg("-o")
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(FlameError::Spawn)?;
        // perf needs a moment to attach to every thread before samples count.
        std::thread::sleep(std::time::Duration::from_millis(300));
        Ok(Self {
            child,
            data: data.to_owned(),
        })
    }

    /// Stops sampling (SIGINT, as perf expects) and waits for the data file.
    pub(crate) fn stop(self) -> Result<Stopped, FlameError> {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling our own child process by its pid.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
        // The children's CPU grows by perf's once it is waited for (no other child of the
        // bench is waited for meanwhile: perf's are the only children it starts).
        let before = crate::probe::process_cost::children_cpu();
        let out = self.child.wait_with_output().map_err(FlameError::Spawn)?;
        let recorder_cpu = crate::probe::process_cost::children_cpu().saturating_sub(before);
        if !self.data.exists() {
            return Err(FlameError::Perf {
                command: "perf record".into(),
                status: out.status,
                detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(Stopped {
            data: self.data,
            recorder_cpu,
        })
    }
}

/// The recordings of every backend, folded at the end of the run.
#[derive(Default)]
pub(crate) struct Flames {
    /// Recorded data files by driver name.
    pub recorded: BTreeMap<String, Vec<PathBuf>>,
    /// `perf record`'s own CPU time by driver name.
    pub recorder_cpu: BTreeMap<String, Duration>,
}

impl Flames {
    /// Keeps a stopped recording of `driver`.
    pub(crate) fn add(&mut self, driver: &str, stopped: Stopped) {
        self.recorded
            .entry(driver.to_owned())
            .or_default()
            .push(stopped.data);
        *self.recorder_cpu.entry(driver.to_owned()).or_default() += stopped.recorder_cpu;
    }

    /// Folds each backend's recordings into stacks (`comm;root;...;leaf WEIGHT` lines,
    /// weights in nanoseconds of cpu-clock), by driver name. The data files are removed,
    /// those not read too when one fails.
    pub(crate) fn fold(&self) -> Result<BTreeMap<String, Vec<u8>>, FlameError> {
        let folded = self.fold_all();
        if folded.is_err() {
            for data in self.recorded.values().flatten() {
                let _ = std::fs::remove_file(data);
            }
        }
        folded
    }

    /// [`Flames::fold`] without the cleaning up after a failure.
    fn fold_all(&self) -> Result<BTreeMap<String, Vec<u8>>, FlameError> {
        let mut out = BTreeMap::new();
        for (driver, files) in &self.recorded {
            let mut folded: Vec<u8> = Vec::new();
            for data in files {
                let script = Command::new("perf")
                    .args(["script", "-i"])
                    .arg(data)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(FlameError::Spawn)?;
                let out = script.wait_with_output().map_err(FlameError::Spawn)?;
                let _ = std::fs::remove_file(data);
                if !out.status.success() {
                    return Err(FlameError::Perf {
                        command: format!("perf script -i {}", data.display()),
                        status: out.status,
                        detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
                    });
                }
                let mut options = inferno::collapse::perf::Options::default();
                options.include_tid = false;
                options.include_pid = false;
                let mut folder = inferno::collapse::perf::Folder::from(options);
                use inferno::collapse::Collapse;
                folder
                    .collapse(BufReader::new(&out.stdout[..]), &mut folded)
                    .map_err(|e| FlameError::Render {
                        path: data.display().to_string(),
                        detail: e.to_string(),
                    })?;
            }
            out.insert(driver.clone(), folded);
        }
        Ok(out)
    }
}

/// Where a flamegraph run writes `driver`'s folded stacks: `PREFIX-<driver>.folded`.
pub(crate) fn folded_path(prefix: &Path, driver: &str) -> PathBuf {
    PathBuf::from(format!("{}-{driver}.folded", prefix.display()))
}

/// Writes `PREFIX-<driver>.svg` and `.folded` for each backend's folded stacks. Returns the
/// SVG files written.
pub(crate) fn draw(
    prefix: &Path,
    folded: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<PathBuf>, FlameError> {
    let mut written = Vec::new();
    for (driver, folded) in folded {
        let svg_path = PathBuf::from(format!("{}-{driver}.svg", prefix.display()));
        std::fs::write(folded_path(prefix, driver), folded).map_err(|e| FlameError::Render {
            path: svg_path.display().to_string(),
            detail: e.to_string(),
        })?;
        let mut options = inferno::flamegraph::Options::default();
        options.title = format!("doppio bench: {driver} (measured segments, cpu-clock)");
        options.count_name = "ns".into();
        write_svg(&svg_path, options, &String::from_utf8_lossy(folded))?;
        written.push(svg_path);
    }
    Ok(written)
}

/// Draws `lines` (folded stacks, with one count or two for a differential) into the SVG
/// file `path`.
fn write_svg(
    path: &Path,
    mut options: inferno::flamegraph::Options<'_>,
    lines: &str,
) -> Result<(), FlameError> {
    let render_err = |detail: String| FlameError::Render {
        path: path.display().to_string(),
        detail,
    };
    let mut svg = std::fs::File::create(path).map_err(|e| render_err(e.to_string()))?;
    inferno::flamegraph::from_lines(&mut options, lines.lines(), &mut svg)
        .map_err(|e| render_err(e.to_string()))?;
    svg.flush().map_err(|e| render_err(e.to_string()))
}

/// Folded stacks with each weight divided by `requests`, in picoseconds per request (so
/// that two backends that ran different numbers of requests compare per request).
pub(crate) fn per_request(folded: &[u8], requests: u64) -> String {
    let mut out = String::new();
    let requests = requests.max(1) as u128;
    for line in String::from_utf8_lossy(folded).lines() {
        let Some((stack, ns)) = crate::probe::anatomy::folded_line(line) else {
            continue;
        };
        let ps = u128::from(ns) * 1000 / requests;
        if ps > 0 {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&ps.to_string());
            out.push('\n');
        }
    }
    out
}

/// Writes `PREFIX-diff-<a>-<b>.svg`: the differential flamegraph of `b` against `a`, per
/// request (each frame's width is `b`'s CPU per request in it; red where `b` spends more per
/// request than `a`, blue where less). `a` and `b` are (driver, folded stacks, requests).
pub(crate) fn draw_differential(
    prefix: &Path,
    a: (&str, &[u8], u64),
    b: (&str, &[u8], u64),
) -> Result<PathBuf, FlameError> {
    let svg_path = PathBuf::from(format!("{}-diff-{}-{}.svg", prefix.display(), a.0, b.0));
    draw_differential_to(&svg_path, a, b)?;
    Ok(svg_path)
}

/// [`draw_differential`] into the file `svg_path`.
pub(crate) fn draw_differential_to(
    svg_path: &Path,
    a: (&str, &[u8], u64),
    b: (&str, &[u8], u64),
) -> Result<(), FlameError> {
    let (before, after) = (per_request(a.1, a.2), per_request(b.1, b.2));
    let mut lines: Vec<u8> = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        before.as_bytes(),
        after.as_bytes(),
        &mut lines,
    )
    .map_err(|e| FlameError::Render {
        path: svg_path.display().to_string(),
        detail: e.to_string(),
    })?;
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!(
        "doppio bench: {} against {} (CPU per request; red: {} spends more, blue: less)",
        b.0, a.0, b.0
    );
    options.count_name = "ps/request".into();
    write_svg(svg_path, options, &String::from_utf8_lossy(&lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_divide_per_request() {
        let folded = b"t;a;b 3000\nt;a 500\nbad line\nt;c 1\n";
        // 3000 ns over 2 requests: 1,500,000 ps; 1 ns over 2: 500 ps.
        assert_eq!(
            per_request(folded, 2),
            "t;a;b 1500000\nt;a 250000\nt;c 500\n"
        );
        // No request: divided by one, not by zero.
        assert_eq!(per_request(b"t;a 7\n", 0), "t;a 7000\n");
    }

    #[test]
    fn a_differential_flamegraph_is_drawn_per_request() {
        let dir = std::env::temp_dir().join(format!("doppio-flame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("run");
        // a: 2 requests, 4000 ns in codec; b: 4 requests, 4000 ns in codec, 4000 in driver.
        let a = b"t;main;codec 4000\n".to_vec();
        let b = b"t;main;codec 4000\nt;main;driver 4000\n".to_vec();
        let svg = draw_differential(&prefix, ("a", &a, 2), ("b", &b, 4)).unwrap();
        assert_eq!(svg, dir.join("run-diff-a-b.svg"));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg"), "{text}");
        // codec: 2,000,000 ps per request in a, 1,000,000 in b: a fall, drawn in blue, and
        // the driver's frame only in b.
        assert!(text.contains("codec"), "{text}");
        assert!(text.contains("driver"), "{text}");
        assert!(text.contains("-50.00%"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
