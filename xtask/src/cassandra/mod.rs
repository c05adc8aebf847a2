//! `xtask cassandra <command>`: the local Cassandra cluster control's command line
//! (`scripts/cassandra.sh` runs it), over `doppio_test_support::cluster`. The commands,
//! options and environment are the shell version's; errors are one `[cassandra.sh] error:`
//! line and exit code 1, a wrong command prints the usage and exits 2.

mod args;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use doppio_test_support::cluster::{self, Cluster};

use args::{parse, Command, USAGE};

/// Runs `xtask cassandra ARGS`; the repository (for the default state folder `.cassandra/`)
/// is `root`.
pub(crate) fn run(args: &[String], root: &Path) -> ExitCode {
    let command = match parse(args) {
        Ok(Some(command)) => command,
        Ok(None) => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(args::Wrong::Usage) => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::from(2);
        }
        Err(args::Wrong::Option(why)) => return fail(&why),
    };
    let cluster = match Cluster::from_env(&root.join(".cassandra")) {
        Ok(cluster) => cluster,
        Err(e) => {
            // As the shell version said it, with no `error:` prefix.
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match execute(&cluster, command) {
        Ok(code) => code,
        Err(e) => fail(&e.to_string()),
    }
}

/// One error line, exit code 1.
fn fail(why: &str) -> ExitCode {
    cluster::log(&format!("error: {why}"));
    ExitCode::FAILURE
}

/// Exit code 0 if `ok`, else 1.
fn code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs one parsed command on `cluster`.
fn execute(cluster: &Cluster, command: Command) -> cluster::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    Ok(match command {
        Command::Install => cluster.install().map(|()| ExitCode::SUCCESS)?,
        Command::Start(o) => cluster.start(&o).map(|()| ExitCode::SUCCESS)?,
        Command::Stop(node) => cluster.stop(node).map(|()| ExitCode::SUCCESS)?,
        Command::Kill(node) => cluster.kill(node).map(|()| ExitCode::SUCCESS)?,
        Command::Pause(node) => cluster.pause(node).map(|()| ExitCode::SUCCESS)?,
        Command::Resume(node) => cluster.resume(node).map(|()| ExitCode::SUCCESS)?,
        Command::Status => code(cluster.status(&mut out)?),
        Command::Add(o) => cluster.add(&o).map(|_| ExitCode::SUCCESS)?,
        Command::Decommission(node) => cluster.decommission(node).map(|()| ExitCode::SUCCESS)?,
        Command::Nodetool(node, args) => {
            let status = cluster.nodetool(node, &args)?;
            status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .map_or(ExitCode::FAILURE, ExitCode::from)
        }
        Command::Logs(node, lines) => cluster
            .logs(node, lines, &mut out)
            .map(|()| ExitCode::SUCCESS)?,
        Command::Wipe => cluster.wipe().map(|()| ExitCode::SUCCESS)?,
    })
}
