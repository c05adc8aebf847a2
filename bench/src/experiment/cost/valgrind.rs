//! One child run of `doppio cost` under a Valgrind tool, and what is read from the tool's
//! output: Callgrind's inclusive instructions of the simulated runtime's poll functions, and
//! DHAT's allocations split by the poll function on each stack.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use super::counts::Split;
use crate::backend::cost_scenario::Scenario;
use crate::backend::Driver;
use crate::failure::CostError;

/// The first of Valgrind's commands that `doppio cost` needs and `PATH` lacks, if any.
pub(crate) fn missing_tool() -> Option<&'static str> {
    ["valgrind", "callgrind_annotate"]
        .into_iter()
        .find(|tool| which(tool).is_none())
}

/// The function through which the simulated runtime polls the client's tasks.
const CLIENT_POLL: &str = "doppio_rt::sim::executor::poll_client_task";
/// The function through which it polls the main future (the client's).
const CLIENT_MAIN: &str = "doppio_rt::sim::executor::poll_client_main";
/// The function through which it polls the peer's.
const PEER_POLL: &str = "doppio_rt::sim::executor::poll_peer_task";

/// One child process to run under a tool.
pub(super) struct Child<'a> {
    pub(super) exe: &'a Path,
    pub(super) out: &'a Path,
    pub(super) driver: Driver,
    pub(super) scenario: Scenario,
    pub(super) requests: u64,
    pub(super) stub: Option<SocketAddr>,
}

impl Child<'_> {
    fn stem(&self) -> String {
        format!(
            "{}.{}.{}",
            self.scenario.name(),
            self.driver.name(),
            self.requests
        )
    }

    /// Runs the child under `valgrind` with `tool_args`; its output goes to a log file.
    fn valgrind(&self, tool: &str, tool_args: &[String]) -> Result<(), CostError> {
        let log = self.out.join(format!("{}.{tool}.log", self.stem()));
        let file = std::fs::File::create(&log).map_err(|e| CostError::Output {
            path: log.clone(),
            why: e.to_string(),
        })?;
        // The child starts with an empty environment: glibc's start-up reads every variable
        // (about 500 instructions each), so `empty`, a whole process, would otherwise
        // count the caller's shell (CI's environment put it 2.3 % over the baseline).
        // Valgrind is named by its path, since no `PATH` goes with it.
        let valgrind = which("valgrind").ok_or(CostError::NoValgrind { tool: "valgrind" })?;
        let mut cmd = Command::new(valgrind);
        cmd.env_clear()
            .arg(format!("--tool={tool}"))
            .args(tool_args)
            .arg(self.exe)
            .args([crate::cli::COST_CHILD, "--driver", self.driver.name()])
            .args(["--scenario", self.scenario.name()])
            .args(["--requests", &self.requests.to_string()]);
        if let Some(stub) = self.stub {
            cmd.args(["--stub", &stub.to_string()]);
        }
        let status = cmd
            .stdout(file.try_clone().map_err(|e| CostError::Output {
                path: log.clone(),
                why: e.to_string(),
            })?)
            .stderr(file)
            .status()
            .map_err(|e| CostError::Run {
                what: format!("valgrind --tool={tool}"),
                status: e.to_string(),
                log: log.clone(),
            })?;
        if !status.success() {
            return Err(CostError::Run {
                what: format!("{} under {tool}", self.stem()),
                status: status.to_string(),
                log,
            });
        }
        Ok(())
    }

    /// Fills `split`'s instructions from a Callgrind run.
    pub(super) fn callgrind(&self, split: &mut Split) -> Result<(), CostError> {
        let file = self.out.join(format!("{}.callgrind", self.stem()));
        self.valgrind(
            "callgrind",
            &[
                format!("--callgrind-out-file={}", file.display()),
                "--dump-instr=no".into(),
                "--dump-line=no".into(),
            ],
        )?;
        let annotated = Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "--threshold=100", "--auto=no"])
            .arg(&file)
            .output()
            .map_err(|e| CostError::Output {
                path: file.clone(),
                why: format!("callgrind_annotate: {e}"),
            })?;
        let text = String::from_utf8_lossy(&annotated.stdout);
        let bad = |why: &str| CostError::Output {
            path: file.clone(),
            why: why.into(),
        };
        let total = annotated_cost(&text, "PROGRAM TOTALS").ok_or_else(|| bad("no total"))?;
        if self.driver == Driver::Scylla {
            split.client.instructions = total;
            return Ok(());
        }
        let client = annotated_cost(&text, CLIENT_POLL).unwrap_or(0)
            + annotated_cost(&text, CLIENT_MAIN).unwrap_or(0);
        let peer = annotated_cost(&text, PEER_POLL).unwrap_or(0);
        split.client.instructions = client;
        split.peer.instructions = peer;
        split.rest.instructions = total.saturating_sub(client + peer);
        Ok(())
    }

    /// Fills `split`'s allocations and bytes from a DHAT run.
    pub(super) fn dhat(&self, split: &mut Split) -> Result<(), CostError> {
        let file = self.out.join(format!("{}.dhat.json", self.stem()));
        self.valgrind(
            "dhat",
            &[
                format!("--dhat-out-file={}", file.display()),
                // Deep enough to reach the poll function from any allocation of a task.
                "--num-callers=300".into(),
            ],
        )?;
        let text = std::fs::read_to_string(&file).map_err(|e| CostError::Output {
            path: file.clone(),
            why: e.to_string(),
        })?;
        let dhat: DhatFile = serde_json::from_str(&text).map_err(|e| CostError::Output {
            path: file.clone(),
            why: format!("not DHAT's JSON: {e}"),
        })?;
        split_heap(&dhat, self.driver == Driver::Scylla, split);
        Ok(())
    }
}

/// The inclusive cost `callgrind_annotate --inclusive=yes --auto=no` gives `what`: the
/// program's total, or a function's. A function is listed once with its object file
/// (`file:function [object]`), its whole inclusive cost, and may be listed again under the
/// source files of code inlined into it (`other.rs:function`, no object): those lines are
/// parts of the first, nested in it, never to be added to it (a scenario's closure inlined
/// into the executor's poll once doubled the client's count this way, against a program
/// total that had not moved). Only when no line of the function carries an object are its
/// lines summed.
fn annotated_cost(text: &str, what: &str) -> Option<u64> {
    let mut whole = None;
    let mut parts = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(Ok(n)) = words.next().map(|w| w.replace(',', "").parse::<u64>()) else {
            continue;
        };
        // The share in parentheses may be one word or two ("( 0.02%)").
        let rest: Vec<&str> = words
            .filter(|w| !w.starts_with('(') && !w.ends_with("%)"))
            .collect();
        if what == "PROGRAM TOTALS" {
            if rest.join(" ") == what {
                *whole.get_or_insert(0) += n;
            }
            continue;
        }
        let named = rest
            .first()
            .and_then(|w| w.split_once(':')) // file:function
            .is_some_and(|(_, function)| function == what);
        if !named {
            continue;
        }
        let with_object = rest.get(1).is_some_and(|w| w.starts_with('['));
        let sum = if with_object { &mut whole } else { &mut parts };
        *sum.get_or_insert(0) += n;
    }
    whole.or(parts)
}

/// DHAT's output file, the parts read here.
#[derive(Debug, Deserialize)]
struct DhatFile {
    /// Program points: each allocation stack with its totals.
    pps: Vec<DhatPoint>,
    /// Frame names, by index.
    ftbl: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct DhatPoint {
    /// Total bytes.
    tb: u64,
    /// Total blocks.
    tbk: u64,
    /// Frames, innermost first.
    fs: Vec<usize>,
}

/// Adds allocations and bytes to `split` by who made them: under the client's polls, the
/// peer's, or elsewhere (all `client` for a process that is all driver).
fn split_heap(dhat: &DhatFile, all_client: bool, split: &mut Split) {
    let frames = |names: &[&str]| -> Vec<bool> {
        dhat.ftbl
            .iter()
            .map(|f| names.iter().any(|n| f.contains(n)))
            .collect()
    };
    let client_frames = frames(&[CLIENT_POLL, CLIENT_MAIN]);
    let peer_frames = frames(&[PEER_POLL]);
    for pp in &dhat.pps {
        let has = |frames: &[bool]| {
            pp.fs
                .iter()
                .any(|&f| frames.get(f).copied().unwrap_or(false))
        };
        let counts = if all_client || has(&client_frames) {
            &mut split.client
        } else if has(&peer_frames) {
            &mut split.peer
        } else {
            &mut split.rest
        };
        counts.allocations += pp.tbk;
        counts.bytes += pp.tb;
    }
}

/// The path of `tool` on `PATH`, if it is there.
fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(tool))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::cost::counts::ToolCounts;

    #[test]
    fn callgrind_annotate_lines_are_read_with_their_thousands_separators() {
        let text = "\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
12,345,678  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir          file:function
--------------------------------------------------------------------------------
5,000,000 (40.50%)  driver/rt/src/sim/executor.rs:doppio_rt::sim::executor::poll_client_task [/bin/doppio]
    1,380 ( 0.02%)  /rustc/x/library/core/src/pin.rs:doppio_rt::sim::executor::poll_client_task
  400,000  ???:doppio_rt::sim::executor::poll_peer_task [/bin/doppio]
  999,999  ???:doppio_rt::sim::executor::poll_peer_task_not [/bin/doppio]
";
        assert_eq!(annotated_cost(text, "PROGRAM TOTALS"), Some(12_345_678));
        // Its line with its object: the part inlined from pin.rs is within it.
        assert_eq!(annotated_cost(text, CLIENT_POLL), Some(5_000_000));
        assert_eq!(annotated_cost(text, PEER_POLL), Some(400_000));
        assert_eq!(annotated_cost(text, "nothing"), None);
    }

    /// The lines of the build that doubled the client's count: `poll_client_main` with its
    /// object, then again under the scenario's file (inlined, nested in the first).
    #[test]
    fn a_function_s_inlined_parts_are_not_added_to_its_whole() {
        let text = "\
7,333,402 (100.0%)  PROGRAM TOTALS
2,713,488 (37.00%)  /w/driver/rt/src/sim/executor.rs:doppio_rt::sim::executor::poll_client_main [/w/doppio]
2,684,815 (36.61%)  /w/bench/src/backend/doppio/cost.rs:doppio_rt::sim::executor::poll_client_main
1,659,723 (22.63%)  /w/driver/rt/src/sim/executor.rs:doppio_rt::sim::executor::poll_peer_task [/w/doppio]
    3,000 ( 0.04%)  /w/x.rs:only_parts
    2,000 ( 0.03%)  /w/y.rs:only_parts
";
        assert_eq!(annotated_cost(text, CLIENT_MAIN), Some(2_713_488));
        assert_eq!(annotated_cost(text, PEER_POLL), Some(1_659_723));
        assert_eq!(
            annotated_cost(text, "only_parts"),
            Some(5_000),
            "no object: summed"
        );
    }

    #[test]
    fn heap_is_split_by_the_poll_function_on_each_stack() {
        let dhat = DhatFile {
            ftbl: vec![
                "[root]".into(),
                format!("0x1: {CLIENT_POLL} (executor.rs:1)"),
                format!("0x2: {PEER_POLL} (executor.rs:2)"),
                "0x3: main (main.rs:1)".into(),
            ],
            pps: vec![
                DhatPoint {
                    tb: 100,
                    tbk: 2,
                    fs: vec![3, 1, 0],
                },
                DhatPoint {
                    tb: 40,
                    tbk: 1,
                    fs: vec![2, 0],
                },
                DhatPoint {
                    tb: 7,
                    tbk: 1,
                    fs: vec![3],
                },
            ],
        };
        let heap = |counts: ToolCounts| (counts.allocations, counts.bytes);
        let mut h = Split::default();
        split_heap(&dhat, false, &mut h);
        assert_eq!(
            (heap(h.client), heap(h.peer), heap(h.rest)),
            ((2, 100), (1, 40), (1, 7))
        );
        let mut all = Split::default();
        split_heap(&dhat, true, &mut all);
        assert_eq!(heap(all.client), (4, 147));
    }
}
