//! `xtask cassandra`'s arguments: the commands and options of `scripts/cassandra.sh`, checked
//! before anything runs (`--nodes 0`, `--heap` with no value, an unknown option: errors).

use std::time::Duration;

use doppio_test_support::cluster::{Add, Start};

/// The usage, as the shell version's header said it.
pub(crate) const USAGE: &str = "\
A real Apache Cassandra 5.0 on this machine, from Maven Central jars: no Docker, no tarball.

  scripts/cassandra.sh install                    resolve cassandra-all and its deps (idempotent)
  scripts/cassandra.sh start [--nodes N] [--auth] [--tls] [--heap SIZE] [--timeout SECS]
  scripts/cassandra.sh stop [NODE]                stop every node (or one), SIGTERM then SIGKILL
  scripts/cassandra.sh kill NODE                  SIGKILL one node (fault tests)
  scripts/cassandra.sh pause NODE                 SIGSTOP one node: it keeps its connections
                                                  and answers nothing (fault tests)
  scripts/cassandra.sh resume NODE                SIGCONT a paused node
  scripts/cassandra.sh status                     one line per node (UP, STARTING, PAUSED, DOWN,
                                                  LEFT); exit 0 only if all are up
  scripts/cassandra.sh add [--token T] [--heap SIZE] [--timeout SECS]
                                                  bootstrap one more node into the running
                                                  cluster (next address; default token: the
                                                  middle of the widest gap in the ring)
  scripts/cassandra.sh decommission NODE          stream NODE's data away, leave the ring, stop
  scripts/cassandra.sh nodetool NODE ARGS...      Cassandra's nodetool against NODE (JMX)
  scripts/cassandra.sh logs [NODE] [LINES]        the last lines of a node's log (default node 1)
  scripts/cassandra.sh wipe                       stop, then delete all node state

Nodes listen on 127.0.0.1, 127.0.0.2, ... with the usual ports (CQL 9042, storage 7000);
DOPPIO_CASSANDRA_FIRST_IP=K moves node 1 to 127.0.0.K (node i to 127.0.0.(K+i-1)), so that a
second, independent cluster (another state directory) can run beside the first one:
scripts/cassandra-auth.sh uses that for the authentication tests.
State (yaml, data, logs, pids) lives in $DOPPIO_CASSANDRA_STATE (default: .cassandra/ in the
repository, git-ignored); the jar cache in $DOPPIO_CACHE (default: ~/.cache/doppio).";

/// A parsed command.
#[derive(Debug)]
pub(crate) enum Command {
    Install,
    Start(Start),
    Stop(Option<u32>),
    Kill(u32),
    Pause(u32),
    Resume(u32),
    Status,
    Add(Add),
    Decommission(u32),
    Nodetool(u32, Vec<String>),
    Logs(u32, usize),
    Wipe,
}

/// Why the arguments cannot be run.
#[derive(Debug)]
pub(crate) enum Wrong {
    /// No such command: the usage, exit 2.
    Usage,
    /// A bad option or value: one error line, exit 1.
    Option(String),
}

/// The command `args` name; `None` for help.
pub(crate) fn parse(args: &[String]) -> Result<Option<Command>, Wrong> {
    let (name, rest) = match args.split_first() {
        Some((name, rest)) => (name.as_str(), rest),
        None => return Ok(None),
    };
    let bad = |why: String| Wrong::Option(why);
    let command = match name {
        "install" => Command::Install,
        "start" => Command::Start(start(rest).map_err(bad)?),
        "stop" => Command::Stop(rest.first().map(|n| node(n)).transpose().map_err(bad)?),
        "kill" => {
            Command::Kill(node(first(rest, "kill needs a node number").map_err(bad)?).map_err(bad)?)
        }
        "pause" => Command::Pause(
            node(first(rest, "pause needs a node number").map_err(bad)?).map_err(bad)?,
        ),
        "resume" => Command::Resume(
            node(first(rest, "resume needs a node number").map_err(bad)?).map_err(bad)?,
        ),
        "status" => Command::Status,
        "add" => Command::Add(add(rest).map_err(bad)?),
        "decommission" => Command::Decommission(
            node(first(rest, "decommission needs a node number").map_err(bad)?).map_err(bad)?,
        ),
        "nodetool" => {
            let i = node(first(rest, "nodetool needs a node number").map_err(bad)?).map_err(bad)?;
            Command::Nodetool(i, rest[1..].to_vec())
        }
        "logs" => {
            let i = rest.first().map_or(Ok(1), |n| node(n)).map_err(bad)?;
            let lines = match rest.get(1) {
                None => 100,
                Some(l) => l
                    .parse()
                    .map_err(|_| bad(format!("logs: {l:?} is not a line count")))?,
            };
            Command::Logs(i, lines)
        }
        "wipe" => Command::Wipe,
        "help" | "--help" | "-h" => return Ok(None),
        _ => return Err(Wrong::Usage),
    };
    Ok(Some(command))
}

/// The first argument, or `missing` as the error.
fn first<'a>(rest: &'a [String], missing: &str) -> Result<&'a str, String> {
    rest.first()
        .map(String::as_str)
        .ok_or_else(|| missing.to_owned())
}

/// A node number.
fn node(text: &str) -> Result<u32, String> {
    text.parse()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("no node {text}"))
}

/// An option's value: the next argument, if there is one and it is not another option.
fn value<'a>(it: &mut std::slice::Iter<'a, String>, missing: &str) -> Result<&'a str, String> {
    match it.next() {
        Some(v) if !v.starts_with("--") && !v.is_empty() => Ok(v),
        _ => Err(missing.to_owned()),
    }
}

/// `--timeout SECS`.
fn seconds(text: &str) -> Result<Duration, String> {
    text.parse()
        .map(Duration::from_secs)
        .map_err(|_| format!("--timeout needs seconds, not {text:?}"))
}

/// `start`'s options.
fn start(rest: &[String]) -> Result<Start, String> {
    let mut o = Start::default();
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--nodes" => {
                let n = value(&mut it, "--nodes needs a number")?;
                let ok = n.len() == 1 && n != "0";
                o.nodes = n
                    .parse()
                    .ok()
                    .filter(|_| ok)
                    .ok_or("--nodes must be 1 to 9")?;
            }
            "--auth" => o.auth = true,
            "--tls" => o.tls = true,
            "--heap" => o.heap = Some(value(&mut it, "--heap needs a size such as 1G")?.to_owned()),
            "--timeout" => o.timeout = seconds(value(&mut it, "--timeout needs seconds")?)?,
            other => return Err(format!("start: unknown option {other}")),
        }
    }
    Ok(o)
}

/// `add`'s options.
fn add(rest: &[String]) -> Result<Add, String> {
    let mut o = Add::default();
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--token" => {
                // A negative token is a value, not an option.
                let t = it
                    .next()
                    .filter(|t| !t.is_empty())
                    .ok_or("--token needs a token")?;
                o.token = Some(
                    t.parse()
                        .map_err(|_| "--token must be an integer (Murmur3)")?,
                );
            }
            "--heap" => o.heap = value(&mut it, "--heap needs a size such as 1G")?.to_owned(),
            "--timeout" => o.timeout = seconds(value(&mut it, "--timeout needs seconds")?)?,
            other => return Err(format!("add: unknown option {other}")),
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn option_error(text: &str) -> String {
        match parse(&args(text)) {
            Err(Wrong::Option(why)) => why,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn start_takes_the_shell_versions_options() {
        let Ok(Some(Command::Start(o))) = parse(&args(
            "start --nodes 3 --auth --tls --heap 512M --timeout 60",
        )) else {
            panic!("start parses");
        };
        assert_eq!((o.nodes, o.auth, o.tls), (3, true, true));
        assert_eq!(
            (o.heap.as_deref(), o.timeout),
            (Some("512M"), Duration::from_secs(60))
        );
        let Ok(Some(Command::Add(a))) = parse(&args("add --token -42 --timeout 9")) else {
            panic!("add parses");
        };
        assert_eq!((a.token, a.heap.as_str()), (Some(-42), "768M"));
    }

    #[test]
    fn a_bad_option_is_an_error_before_anything_runs() {
        assert_eq!(option_error("start --nodes 0"), "--nodes must be 1 to 9");
        assert_eq!(option_error("start --nodes 10"), "--nodes must be 1 to 9");
        assert_eq!(
            option_error("start --heap"),
            "--heap needs a size such as 1G"
        );
        assert_eq!(
            option_error("start --heap --tls"),
            "--heap needs a size such as 1G"
        );
        assert_eq!(option_error("start --tsl"), "start: unknown option --tsl");
        assert_eq!(
            option_error("add --token x"),
            "--token must be an integer (Murmur3)"
        );
        assert_eq!(option_error("kill"), "kill needs a node number");
        assert_eq!(option_error("pause"), "pause needs a node number");
        assert_eq!(option_error("resume 0"), "no node 0");
        assert!(matches!(
            parse(&args("pause 3")),
            Ok(Some(Command::Pause(3)))
        ));
        assert!(matches!(
            parse(&args("resume 2")),
            Ok(Some(Command::Resume(2)))
        ));
        assert_eq!(option_error("stop two"), "no node two");
        assert!(matches!(parse(&args("launch")), Err(Wrong::Usage)));
        assert!(matches!(parse(&args("help")), Ok(None)));
    }
}
