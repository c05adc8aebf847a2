//! `doppio`: the benchmark's command line (see `doppio --help` and bench/MANUAL.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use doppio_bench::cli::{Cli, Command, CostChildArgs, COST_CHILD};
use doppio_bench::command::{
    cost, curve, findmax, hdr, list, load, merge, nemesis, plot, profile, run, schema, show,
    stress, sweep, Failure,
};

fn main() -> ExitCode {
    // The process `doppio cost` counts: its own small command, not the whole tree.
    if std::env::args_os().nth(1).is_some_and(|a| a == COST_CHILD) {
        let a = CostChildArgs::parse_from(std::env::args_os().skip(1));
        return exit(cost::child(&a.driver, &a.scenario, a.requests, a.stub));
    }
    // As reports keep it: never with the password.
    let argv = doppio_bench::secret::redact_argv(std::env::args());
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Run(_)
            | Command::Load(_)
            | Command::Findmax(_)
            | Command::Curve(_)
            | Command::Stress(_)
            | Command::Nemesis(_)
    ) {
        if let Err(e) = doppio_bench::interrupt::install() {
            eprintln!("warning: Ctrl-C will not keep the measurements: {e}");
        }
    }
    let result = match &cli.command {
        Command::Schema(c) => schema::schema(c),
        Command::Load(a) => load::load(a),
        Command::Run(a) => run::run(a, argv.clone()).map(|_| ()),
        Command::Curve(a) => curve::curve(a, argv.clone()),
        Command::Findmax(a) => findmax::findmax(a, argv.clone()).map(|_| ()),
        Command::Show {
            report,
            baseline,
            log,
            flamediff,
        } => show::show(report, baseline.as_deref(), *log, flamediff.as_deref()),
        Command::Hdr {
            report,
            output,
            driver,
            statement,
        } => hdr::hdr(report, output, driver.as_deref(), statement.as_deref()),
        Command::List { dir } => list::list(&dir.clone().unwrap_or_else(|| PathBuf::from("."))),
        Command::Sweep {
            reports,
            markdown,
            svg,
            title,
        } => sweep::sweep(reports, markdown.as_deref(), svg.as_deref(), title)
            .map_err(Failure::Sweep),
        Command::Merge {
            reports,
            output,
            sequential,
        } => merge::merge(reports, output, *sequential, argv),
        Command::Plot {
            reports,
            output,
            percentiles,
            title,
        } => plot::command(reports, output, percentiles, title.as_deref()),
        Command::Profile(p) => profile::profile(p),
        Command::Stress(a) => stress::stress(a, argv.clone()),
        Command::Cost(a) => cost::cost(a),
        Command::Nemesis(a) => nemesis::nemesis(a),
    };
    exit(result)
}

/// The exit of a command's `result`: success, or its error printed with its code.
fn exit(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
