//! The parser and the mapping: every supported option read and mapped, bad values and
//! refused options each an error naming the option.

use std::time::Duration;

use super::error::StressError;
use super::map::{self, DEFAULT_THREADS};
use super::model::{Kind, Length, Pace, Population};
use super::{plan, read};
use crate::backend::{Compression, Consistency};
use crate::workload::Workload;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn err(line: &str) -> String {
    match plan(&words(line)) {
        Ok(p) => panic!("`{line}` was accepted: {:?}", p.run_args),
        Err(e) => e.to_string(),
    }
}

/// The value following `option` in the mapped `doppio run` options.
fn arg(args: &[String], option: &str) -> Option<String> {
    let at = args.iter().position(|a| a == option)?;
    args.get(at + 1).cloned()
}

#[test]
fn write_n_maps_to_a_counted_run_of_the_standard1_upsert() {
    let p = plan(&words(
        "write n=1M -rate threads=64 -node 10.0.0.1,10.0.0.2",
    ))
    .unwrap();
    assert_eq!(&p.run_args[..2], ["10.0.0.1", "10.0.0.2"]);
    assert_eq!(arg(&p.run_args, "-d").as_deref(), Some("1000000"));
    assert_eq!(arg(&p.run_args, "-p").as_deref(), Some("64"));
    assert_eq!(arg(&p.run_args, "--warmup").as_deref(), Some("0"));
    assert_eq!(arg(&p.run_args, "--segments").as_deref(), Some("1"));
    assert_eq!(arg(&p.run_args, "-r"), None);
    let w = p.workload.unwrap();
    assert_eq!(w.name, "stress-write");
    assert!(w.toml.contains("dist('SEQ(1..1000000)', i)"), "{}", w.toml);
    assert!(w
        .toml
        .contains("keyspace1.standard1 (key blob PRIMARY KEY, \\\"C0\\\" blob"));
    assert!(w.toml.contains("\\\"C4\\\" blob)"), "{}", w.toml);
    assert!(!w.toml.contains("C5"), "{}", w.toml);
    assert!(w.toml.contains("blob(34, pk, 100)"), "{}", w.toml);
    let compiled = Workload::from_toml(&w.name, &w.toml, &[]).unwrap();
    assert_eq!(compiled.groups.len(), 1);
    assert_eq!(compiled.groups[0].name, "write");
    assert_eq!(compiled.schema.len(), 2);
}

#[test]
fn read_and_mixed_draw_a_gaussian_population_and_weigh_by_ratio() {
    let p = plan(&words("read duration=5m")).unwrap();
    assert_eq!(arg(&p.run_args, "-d").as_deref(), Some("300s"));
    // A time: the segments of `doppio run` (several when backends are compared in rounds).
    assert_eq!(arg(&p.run_args, "--segments"), None);
    assert_eq!(arg(&p.run_args, "-p"), Some(DEFAULT_THREADS.to_string()));
    let w = p.workload.unwrap();
    assert!(w.toml.contains("GAUSSIAN(1..1000000)"), "{}", w.toml);
    let compiled = Workload::from_toml(&w.name, &w.toml, &[]).unwrap();
    assert_eq!(compiled.groups.len(), 1);
    assert_eq!(compiled.groups[0].name, "read");

    let line = read(&words("mixed ratio(write=1,read=3) n=10k")).unwrap();
    assert_eq!(
        line.command.kind,
        Kind::Mixed {
            write: 1.0,
            read: 3.0
        }
    );
    let p = map::plan(&line);
    let w = p.workload.unwrap();
    let compiled = Workload::from_toml(&w.name, &w.toml, &[]).unwrap();
    let names: Vec<&str> = compiled.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["write", "read"]);
    let reads = (0..4000).filter(|&i| compiled.pick(i) == 1).count();
    assert!((2800..3200).contains(&reads), "{reads} reads of 4000");
    // cassandra-stress's default: one read per write.
    let line = read(&words("mixed n=10")).unwrap();
    assert_eq!(
        line.command.kind,
        Kind::Mixed {
            write: 1.0,
            read: 1.0
        }
    );
}

#[test]
fn every_supported_option_is_read_and_mapped() {
    let hdr = std::env::temp_dir().join("stress-unit.hlog");
    let line = format!(
        "write n=5000 cl=QUORUM no-warmup truncate=never -rate threads=8 fixed=2k/s \
         -pop seq=1..100 -col size=UNIFORM(10..20) n=FIXED(3) \
         -schema keyspace=ks_stress replication(factor=3) -node a.example,b.example \
         -port native=9043 -mode native cql3 prepared user=u password=secret \
         protocolVersion=4 compression=lz4 connectionsPerHost=2 \
         -log hdrfile={} interval=2s",
        hdr.display()
    );
    let l = read(&words(&line)).unwrap();
    assert_eq!(l.command.length, Length::Count(5000));
    assert_eq!(l.command.consistency, Some(Consistency::Quorum));
    assert!(l.command.no_warmup);
    assert_eq!(l.groups.rate.threads, Some(8));
    assert_eq!(l.groups.rate.pace, Some(Pace::Fixed(2000.0)));
    assert_eq!(
        l.groups.population,
        Some(Population::Seq { min: 1, max: 100 })
    );
    assert_eq!(l.groups.columns.count, Some(3));
    assert_eq!(l.groups.schema.factor, Some(3));
    assert_eq!(l.groups.port, Some(9043));
    assert_eq!(l.groups.mode.compression, Some(Compression::Lz4));
    assert_eq!(l.groups.log.interval, Some(Duration::from_secs(2)));
    let p = map::plan(&l);
    let a = &p.run_args;
    assert_eq!(&a[..2], ["a.example:9043", "b.example:9043"]);
    for (option, value) in [
        ("-r", "2000"),
        ("--consistency", "QUORUM"),
        ("--user", "u"),
        ("--password", "secret"),
        ("--protocol", "4"),
        ("--compression", "lz4"),
        ("-c", "2"),
        ("-s", "2000ms"),
        ("-p", "8"),
    ] {
        assert_eq!(arg(a, option).as_deref(), Some(value), "{option} in {a:?}");
    }
    assert_eq!(arg(a, "--hdr-log"), Some(hdr.display().to_string()));
    let w = p.workload.unwrap();
    assert!(w.toml.contains("ks_stress.standard1"), "{}", w.toml);
    assert!(w.toml.contains("'replication_factor': 3"), "{}", w.toml);
    assert!(
        w.toml.contains("dist('UNIFORM(10..20)', hash(pk, 200))"),
        "{}",
        w.toml
    );
    assert!(w.toml.contains("\\\"C2\\\" blob)"), "{}", w.toml);
    Workload::from_toml(&w.name, &w.toml, &[]).unwrap();

    let p = plan(&words(
        "write n=1 -rate throttle=500/s -pop dist=UNIFORM(1..50)",
    ))
    .unwrap();
    assert_eq!(arg(&p.run_args, "-r").as_deref(), Some("500"));
    assert!(
        p.notes.iter().any(|n| n.contains("throttle")),
        "{:?}",
        p.notes
    );
    assert!(p
        .workload
        .unwrap()
        .toml
        .contains("dist('UNIFORM(1..50)', i)"));
    // -port alone: the default node on that port.
    let p = plan(&words("write n=1 -port native=19042")).unwrap();
    assert_eq!(p.run_args[0], "127.0.0.1:19042");
}

/// The values of the `-P` options in `args`, in order.
fn params(args: &[String]) -> Vec<&String> {
    args.windows(2)
        .filter(|w| w[0] == "-P")
        .map(|w| &w[1])
        .collect()
}

#[test]
fn user_runs_the_profile_with_its_op_weights() {
    let profile = format!("{}/profiles/classic.yaml", env!("CARGO_MANIFEST_DIR"));
    let line = format!("user profile={profile} ops(insert=1,Q1=3) n=100 -pop dist=UNIFORM(1..20)");
    let l = read(&words(&line)).unwrap();
    let Kind::User { ops, .. } = &l.command.kind else {
        panic!("{:?}", l.command.kind);
    };
    assert_eq!(ops, &[("insert".to_owned(), 1.0), ("q1".to_owned(), 3.0)]);
    let p = map::plan(&l);
    assert!(p.workload.is_none());
    assert_eq!(arg(&p.run_args, "--profile"), Some(profile.clone()));
    let ps = params(&p.run_args);
    assert_eq!(
        ps,
        ["ops_insert=1", "ops_q1=3", "population=UNIFORM(1..20)"]
    );
    assert!(!p.run_args.iter().any(|a| a == "--validate"));
    // `validate`, the read-back doppio adds to a profile, turns the comparison on.
    // An operation ops() leaves out does not run: the insert too.
    let line = format!("user profile={profile} ops(validate=1) n=100");
    let p = map::plan(&read(&words(&line)).unwrap());
    assert!(
        p.run_args.iter().any(|a| a == "--validate"),
        "{:?}",
        p.run_args
    );
    assert!(
        p.run_args.windows(2).any(|w| w == ["-P", "ops_insert=0"]),
        "{:?}",
        p.run_args
    );
    let line = format!("user profile={profile} ops(insert=1,validate=0) n=100");
    let p = map::plan(&read(&words(&line)).unwrap());
    assert!(
        !p.run_args.iter().any(|a| a == "--validate"),
        "{:?}",
        p.run_args
    );
}

#[test]
fn user_runs_several_profiles_with_ops_named_by_specname() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let profiles = format!("{dir}/profiles/users.yaml,{dir}/profiles/orders.yaml");
    let line = format!("user profile={profiles} ops(users.insert=1,orders.recent=2) n=10");
    let p = map::plan(&read(&words(&line)).unwrap());
    assert_eq!(arg(&p.run_args, "--profile"), Some(profiles.clone()));
    let ps = params(&p.run_args);
    // orders' insert is left out, so it does not run.
    assert_eq!(
        ps,
        [
            "ops_users_insert=1",
            "ops_orders_recent=2",
            "ops_orders_insert=0"
        ]
    );
    let line = format!("user profile={profiles} ops(orders.validate=1) n=10");
    let p = map::plan(&read(&words(&line)).unwrap());
    assert!(
        p.run_args.iter().any(|a| a == "--validate"),
        "{:?}",
        p.run_args
    );
    // Each file is read before anything connects: a missing one is named.
    let e = err(&format!(
        "user profile={dir}/profiles/users.yaml,/no/such.yaml n=1"
    ));
    assert!(e.contains("/no/such.yaml"), "{e}");
    let e = err(&format!("user profile={dir}/profiles/users.yaml, n=1"));
    assert!(e.contains("an empty name"), "{e}");
    // A profile that does not read is refused with its reason.
    let bad = std::env::temp_dir().join(format!("doppio-bad-profile-{}.yaml", std::process::id()));
    std::fs::write(&bad, "keyspace: ks\ntable: t\ncolunmspec: []\n").unwrap();
    let e = err(&format!("user profile={} n=1", bad.display()));
    std::fs::remove_file(&bad).unwrap();
    assert!(e.contains("colunmspec"), "{e}");
}

#[test]
fn bad_values_are_errors_naming_the_option() {
    for (line, names) in [
        ("write n=0", "`n`"),
        ("write n=-5", "`n`"),
        ("write n=99999999999999999999", "`n`"),
        ("write n=lots", "`n`"),
        ("read duration=30", "`duration`"),
        ("read duration=0m", "`duration`"),
        ("write n=1 cl=SOMETIMES", "`cl`"),
        ("write n=1 -rate threads=0", "`-rate threads`"),
        ("write n=1 -rate threads=2000000", "`-rate threads`"),
        ("write n=1 -rate fixed=100", "`-rate fixed`"),
        ("write n=1 -rate throttle=0/s", "`-rate throttle`"),
        ("write n=1 -pop seq=10..1", "`-pop seq`"),
        ("write n=1 -pop dist=WOBBLY(1..2)", "`-pop dist`"),
        ("write n=1 -col size=FIXED(99999999)", "`-col size`"),
        ("write n=1 -col n=FIXED(0)", "`-col n`"),
        (
            "write n=1 -schema replication(factor=0)",
            "`-schema replication(factor)`",
        ),
        ("write n=1 -schema keyspace=bad-name", "`-schema keyspace`"),
        ("write n=1 -port native=70000", "`-port native`"),
        (
            "write n=1 -mode protocolVersion=9",
            "`-mode protocolVersion`",
        ),
        ("write n=1 -mode compression=zstd", "`-mode compression`"),
        (
            "write n=1 -mode connectionsPerHost=0",
            "`-mode connectionsPerHost`",
        ),
        ("write n=1 -log interval=0", "`-log interval`"),
        ("mixed n=1 ratio(write=-1)", "`ratio(write)`"),
        ("mixed n=1 ratio(write=0,read=0)", "`ratio`"),
        ("user profile=/no/such/profile.yaml n=1", "`profile`"),
        ("user n=1", "profile="),
        ("write n=1 duration=1m", "`n` and `duration`"),
        ("write n=1 n=2", "`n`"),
        ("write n=1 -rate threads=1 -rate threads=2", "`-rate`"),
        ("write n=1 -rate fixed=1/s throttle=1/s", "`-rate throttle`"),
        ("write n=1 -pop seq=1..2 dist=FIXED(1)", "`-pop seq`"),
        ("write n=1 -mode password=p", "`-mode user=`"),
        ("write n=1 -node", "`-node`"),
        ("write ratio(write=1) n=1", "`ratio`"),
        ("write n=1 -col size=FIXED(1", "-col size`"),
    ] {
        let e = err(line);
        assert!(e.contains(names), "`{line}`: {e}");
    }
}

#[test]
fn unknown_commands_and_options_are_named() {
    let e = err("wrtie n=1");
    assert!(
        e.contains("unknown cassandra-stress command `wrtie`"),
        "{e}"
    );
    let e = err("write n=1 bogus=2");
    assert!(e.contains("unknown cassandra-stress option `bogus`"), "{e}");
    let e = err("write n=1 -rate speed=2");
    assert!(e.contains("`speed` in `-rate`"), "{e}");
    let e = err("write n=1 -bogus x");
    assert!(
        e.contains("unknown cassandra-stress option `-bogus`"),
        "{e}"
    );
    assert_eq!(plan(&[]).unwrap_err(), StressError::NoCommand);
}

#[test]
fn what_is_not_supported_yet_says_so_by_name() {
    for (line, named) in [
        ("counter_write n=1", "`counter_write`"),
        ("counter_read n=1", "`counter_read`"),
        ("help", "`help`"),
        ("print", "`print`"),
        ("write", "without n= or duration="),
        ("write n=1 err<0.02", "`err<0.02`"),
        ("write n>100", "`n>100`"),
        ("write n=1 truncate=always", "`truncate=always`"),
        ("mixed n=1 clustering=GAUSSIAN(1..10)", "`clustering`"),
        (
            "mixed n=1 ratio(write=1,counter_write=1)",
            "`counter_write`",
        ),
        (
            "write n=1 -insert partitions=FIXED(1)",
            "`-insert partitions=FIXED(1)`",
        ),
        ("write n=1 -graph file=g.html", "`-graph file=g.html`"),
        ("write n=1 -sendto 10.0.0.1", "`-sendto 10.0.0.1`"),
        ("write n=1 -tokenrange", "`-tokenrange`"),
        ("write n=1 -errors ignore", "`-errors ignore`"),
        ("write n=1 -transport truststore=t", "`-transport"),
        ("write n=1 -rate auto", "`-rate auto`"),
        ("write n=1 -rate threads>=4", "`-rate threads>=4`"),
        ("write n=1 -pop contents=SORTED", "`-pop contents=SORTED`"),
        ("write n=1 -pop no-wrap", "`-pop no-wrap`"),
        ("write n=1 -col n=UNIFORM(1..5)", "`-col n=UNIFORM(1..5)`"),
        ("write n=1 -col names=a,b", "`-col names=a,b`"),
        (
            "write n=1 -schema compaction(strategy=LCS)",
            "`-schema compaction(strategy=LCS)`",
        ),
        (
            "write n=1 -schema replication(strategy=NTS)",
            "`-schema replication(strategy=...)`",
        ),
        ("write n=1 -node whitelist", "`-node whitelist`"),
        ("write n=1 -node file=nodes.txt", "`-node file=nodes.txt`"),
        ("write n=1 -port jmx=7199", "`-port jmx=7199`"),
        ("write n=1 -mode thrift", "`-mode thrift`"),
        ("write n=1 -mode maxPending=128", "`-mode maxpending=128`"),
        (
            "write n=1 -mode protocolVersion=3",
            "`-mode protocolVersion=3`",
        ),
        ("write n=1 -log file=out.log", "`-log file=out.log`"),
        ("write n=1 -log no-summary", "`-log no-summary`"),
    ] {
        let e = err(line);
        assert!(
            e.contains("not supported yet") && e.contains(named),
            "`{line}`: {e}"
        );
    }
    let profile = format!("{}/profiles/classic.yaml", env!("CARGO_MANIFEST_DIR"));
    let e = err(&format!("user profile={profile} n=1 -col size=FIXED(1)"));
    assert!(e.contains("`-col`"), "{e}");
}
