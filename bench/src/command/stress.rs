//! `doppio stress -- COMMAND ...`: a cassandra-stress command line read and mapped
//! ([`crate::stress_cli`]), its schema created, then run as `doppio run` with the backend of
//! `--driver`. Every check (the line, the workload, the drivers, the files it writes) is
//! made before anything connects.

use clap::Parser;

use crate::cli::{Cli, Command, RunArgs, StressArgs};
use crate::command::setup::{check_writable, connect_options, workload_of};
use crate::command::{run, schema};
use crate::failure::Failure;
use crate::stress_cli::{self, StressError};

/// The `doppio run` options and workload the line stands for.
pub(crate) fn run_args(a: &StressArgs) -> Result<(RunArgs, stress_cli::StressPlan), StressError> {
    let plan = stress_cli::plan(&a.words)?;
    let mut argv: Vec<String> = ["doppio", "run", "--driver", &a.driver, "-t"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    argv.push(a.threads.to_string());
    if let Some(o) = &a.output {
        argv.push("-o".to_owned());
        argv.push(o.display().to_string());
    }
    if a.quiet {
        argv.push("-q".to_owned());
    }
    if a.no_pin {
        argv.push("--no-pin".to_owned());
    }
    argv.extend(plan.run_args.iter().cloned());
    // The mapping gives only values its parser checked: a refusal here is a range of
    // `doppio run` the line's own checks do not know of; it names the option as mapped.
    let cli = Cli::try_parse_from(&argv).map_err(|e| StressError::Conflict {
        message: format!(
            "line maps to `doppio run` options it refuses: {}",
            e.to_string().lines().next().unwrap_or_default()
        ),
    })?;
    let Command::Run(mut run) = cli.command else {
        return Err(StressError::conflict("line does not map to `doppio run`"));
    };
    run.connect.inline_workload = plan.workload.clone();
    Ok((run, plan))
}

/// Runs `doppio stress`.
pub fn stress(a: &StressArgs, argv: Vec<String>) -> Result<(), Failure> {
    let (run, plan) = run_args(a)?;
    if a.dry_run {
        let shown = crate::secret::redact_argv(plan.run_args.iter().cloned());
        println!(
            "# doppio run --driver {} -t {} {}",
            a.driver,
            a.threads,
            shown.join(" ")
        );
        for n in &plan.notes {
            println!("# note: {n}");
        }
        if let Some(w) = &plan.workload {
            print!("{}", w.toml);
        }
        return Ok(());
    }
    // Checked before the schema connects: the workload, the drivers and their settings, the
    // report's and the HDR log's folders (`run` checks them too, but only after the schema
    // has been made on the node).
    workload_of(&run.connect)?;
    connect_options(&run.connect, &run.connect.drivers()?)?;
    if let Some(report) = &a.output {
        check_writable(report, "-o")?;
    }
    if let Some(log) = &run.hdr_log {
        check_writable(log, "-log hdrfile")?;
    }
    if !a.quiet {
        for n in &plan.notes {
            eprintln!("note: {n}");
        }
    }
    schema::schema(&run.connect)?;
    run::run(&run, argv).map(|_| ())
}
