//! Flamegraphs of the bench itself, one per backend (`doppio run --flamegraph PREFIX`).
//!
//! Around each measured segment, `perf record -e cpu-clock --call-graph dwarf` samples this
//! process (hardware counters are not needed, so it works in VMs); after the run, each
//! backend's recordings are read back with `perf script`, folded into stacks and drawn with
//! the `inferno` crate as `PREFIX-<driver>.svg`, with the folded stacks beside it
//! (`PREFIX-<driver>.folded`, for diffing two runs). Warmups are not recorded.
//!
//! `perf` is a separate process: its own CPU time is not in the bench's rusage, but it takes
//! CPU from the machine while it records, so the overhead figures of a flamegraph run are
//! perturbed (the report says so).

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

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
pub struct Recording {
    child: Child,
    data: PathBuf,
}

impl Recording {
    /// Starts sampling this process into `data` (999 Hz, DWARF call graphs).
    pub fn start(data: &Path) -> Result<Self, FlameError> {
        let child = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-F", "999"])
            .args(["--call-graph", "dwarf,16384"])
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
    pub fn stop(self) -> Result<PathBuf, FlameError> {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling our own child process by its pid.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
        let out = self.child.wait_with_output().map_err(FlameError::Spawn)?;
        if !self.data.exists() {
            return Err(FlameError::Perf {
                command: "perf record".into(),
                status: out.status,
                detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(self.data)
    }
}

/// The recordings of every backend, drawn at the end of the run.
#[derive(Default)]
pub struct Flames {
    /// Recorded data files by driver name.
    pub recorded: BTreeMap<String, Vec<PathBuf>>,
}

impl Flames {
    /// Folds each backend's recordings and writes `PREFIX-<driver>.svg` and `.folded`.
    /// Returns the SVG files written.
    pub fn render(&self, prefix: &Path) -> Result<Vec<PathBuf>, FlameError> {
        let mut written = Vec::new();
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
                let _ = std::fs::remove_file(data);
            }
            let base = format!("{}-{driver}", prefix.display());
            let folded_path = PathBuf::from(format!("{base}.folded"));
            let svg_path = PathBuf::from(format!("{base}.svg"));
            let render_err = |detail: String| FlameError::Render {
                path: svg_path.display().to_string(),
                detail,
            };
            std::fs::write(&folded_path, &folded).map_err(|e| render_err(e.to_string()))?;
            let text = String::from_utf8_lossy(&folded);
            let mut options = inferno::flamegraph::Options::default();
            options.title = format!("doppio bench: {driver} (measured segments, cpu-clock)");
            options.count_name = "samples".into();
            let mut svg =
                std::fs::File::create(&svg_path).map_err(|e| render_err(e.to_string()))?;
            inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg)
                .map_err(|e| render_err(e.to_string()))?;
            svg.flush().map_err(|e| render_err(e.to_string()))?;
            written.push(svg_path);
        }
        Ok(written)
    }
}
