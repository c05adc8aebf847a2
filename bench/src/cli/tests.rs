//! The tests of the command line: connection options that cannot be used, option ranges,
//! SQPOLL and pinning checks.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::engine::Limit;

use super::*;

/// The `run` subcommand's connection options of `args`.
fn connect_of(args: &[&str]) -> Connect {
    let argv = ["doppio", "run"].iter().chain(args);
    match Cli::try_parse_from(argv)
        .expect("the options parse")
        .command
    {
        Command::Run(run) => run.connect,
        other => panic!("not a run: {other:?}"),
    }
}

#[test]
fn connection_options_that_cannot_be_used_say_which_and_what_to_type() {
    let c = connect_of(&["-P", "rows=10", "-P", "rows"]);
    let e = c.param_pairs().unwrap_err();
    assert!(
        matches!(&e, ConnectError::Param { text } if text == "rows"),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("-P rows: expected NAME=VALUE"),
        "{e}"
    );
    let c = connect_of(&["--driver", "doppio,scyla"]);
    assert_eq!(c.drivers().unwrap_err().name, "scyla");
    let c = connect_of(&["--driver", "doppio-uring", "--sqpoll-cpu", "0"]);
    let e = c.sqpoll_options(&c.drivers().unwrap()).unwrap_err();
    assert!(matches!(e, ConnectError::SqPollWithoutDriver), "{e:?}");
    assert!(e.to_string().contains("doppio-uring-sqpoll only"), "{e}");
    let c = connect_of(&["--driver", "doppio,scylla", "--batch-wait", "200us"]);
    let e = c.uring_wait(&c.drivers().unwrap()).unwrap_err();
    assert!(matches!(e, ConnectError::UringWaitWithoutDriver), "{e:?}");
    let c = connect_of(&["--driver", "doppio-uring", "--timer-slack", "0"]);
    let w = c.uring_wait(&c.drivers().unwrap()).unwrap();
    assert_eq!(w.timer_slack, Some(Duration::ZERO));
    let c = connect_of(&["--driver", "doppio-uring-sqpoll", "--sqpoll-cpu", "4096"]);
    let e = c.sqpoll_options(&c.drivers().unwrap()).unwrap_err();
    assert!(
        matches!(e, ConnectError::SqPollCpuOffline { core: 4096, .. }),
        "{e:?}"
    );
}

#[test]
fn a_repeated_option_takes_its_last_value_and_repeatable_ones_collect() {
    let cli = Cli::try_parse_from([
        "doppio",
        "run",
        "-d",
        "10s",
        "-p",
        "64",
        "-P",
        "rows=1",
        "-d",
        "30s",
        "-p",
        "256",
        "-P",
        "keyspace=k",
    ])
    .expect("a repeated option is accepted");
    let Command::Run(run) = cli.command else {
        panic!("not a run: {cli:?}");
    };
    assert_eq!(run.rounds.duration, Limit::parse("30s").unwrap());
    assert_eq!(run.rounds.concurrency, 256);
    assert_eq!(run.connect.params, vec!["rows=1", "keyspace=k"]);
}

/// Every subcommand's options are well formed (no id twice among the flattened groups
/// `run` and `curve` share, every `conflicts_with` naming an option).
#[test]
fn the_command_line_is_well_formed() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn curve_takes_the_rounds_of_run_and_five_loads_by_default() {
    let parse = |args: &[&str]| {
        let argv = ["doppio", "curve"].iter().chain(args);
        Cli::try_parse_from(argv).map(|cli| match cli.command {
            Command::Curve(c) => c,
            other => panic!("not a curve: {other:?}"),
        })
    };
    let c = parse(&["-o", "out"]).unwrap();
    assert_eq!(c.loads, limits::Loads(vec![0.1, 0.3, 0.5, 0.7, 0.9]));
    assert_eq!(c.out, PathBuf::from("out"));
    assert_eq!(c.rounds.segments, None);
    assert!(c.from.is_empty() && !c.force);
    let c = parse(&["-o", "o", "--loads", "90%,0.2", "-p", "16", "-d", "2s"]).unwrap();
    assert_eq!(c.loads.0, [0.9, 0.2]);
    assert_eq!(c.rounds.concurrency, 16);
    assert_eq!(c.rounds.duration, Limit::Time(Duration::from_secs(2)));
    // Where the curve goes is always given; --from takes the loads from its reports.
    assert!(parse(&[]).is_err());
    assert!(parse(&["-o", "o", "--from", "a.json", "--loads", "50%"]).is_err());
    let e = parse(&["-o", "o", "--loads", "50%,150%"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`150%` is not a share"), "{e}");
}

#[test]
fn the_rate_takes_a_number_or_a_schedule_and_a_bad_schedule_is_a_usage_error() {
    let run = |rate: &str| {
        Cli::try_parse_from(["doppio", "run", "-r", rate]).map(|cli| match cli.command {
            Command::Run(run) => run.rate,
            other => panic!("not a run: {other:?}"),
        })
    };
    let constant = run("2500").expect("a number").expect("a rate");
    assert_eq!(constant.constant(), Some(2500.0));
    let schedule = run("ramp:1k..5k/10s,hold:5s").unwrap().unwrap();
    assert_eq!(schedule.constant(), None);
    assert_eq!(schedule.text(), "ramp:1k..5k/10s,hold:5s");
    let e = run("ramp:1k..5k/10s,hold:5x").unwrap_err().to_string();
    assert!(e.contains("`hold:5x`"), "{e}");
}
