//! The workspace's maintenance programs, run as `cargo run -p xtask -- <command>` (the
//! scripts in `scripts/` are thin entry points to them).
//!
//! Modules:
//! - `cassandra`: the `cassandra` command, the local Cassandra cluster control
//!   (`scripts/cassandra.sh`) over `doppio_test_support::cluster`: `args` (commands, options,
//!   usage), `mod` (running them, exit codes).
//! - `import_graph`: the `import-graph` command, each crate's import graph by module and by
//!   file, checked for circles and upward arrows (`scripts/import-graph.sh`,
//!   `scripts/check-seams.sh`). Its own map: `circles` (strongly connected components),
//!   `error` (why it could not run), `files` (the file view), `modules` (the module view),
//!   `report` (arguments, printing, verdict), `source` (what one file says, read with syn),
//!   `tree` (a crate's files and modules), `tests` (planted crates).

mod cassandra;
mod import_graph;

use std::io::Write;
use std::process::ExitCode;

/// The commands, for `--help` and a wrong command.
const COMMANDS: &str = "Usage: xtask <command> [args...]
Commands:
  cassandra     the local Cassandra cluster: install, start, stop, kill, status, add,
                decommission, nodetool, logs, wipe (xtask cassandra --help)
  import-graph  each crate's import graph by module and by file; fails on circles and on
                upward arrows (xtask import-graph --help)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("import-graph") => import_graph_command(&args[1..]),
        Some("cassandra") => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            cassandra::run(&args[1..], &root)
        }
        Some("-h" | "--help") => {
            // A closed pipe (`| head`) is no error worth a panic.
            let _ = writeln!(std::io::stdout(), "{COMMANDS}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{COMMANDS}");
            ExitCode::from(2)
        }
    }
}

/// `import-graph`, run from the workspace root (where this crate's parent directory is, or
/// the current directory if that is gone): exit 0 if the checks pass, 1 if one fails, 2 if the
/// sources could not be read.
fn import_graph_command(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        let _ = writeln!(std::io::stdout(), "{}", import_graph::USAGE);
        return ExitCode::SUCCESS;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if root.join("Cargo.toml").is_file() {
        if let Err(err) = std::env::set_current_dir(&root) {
            eprintln!(
                "import-graph: cannot enter the workspace root {}: {err}",
                root.display()
            );
            return ExitCode::from(2);
        }
    }
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    match import_graph::run(args, &mut out, &mut err) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("import-graph: {error}");
            ExitCode::from(2)
        }
    }
}
