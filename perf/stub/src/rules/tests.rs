//! The rules' tests: the documented example and bad files, delays and their drift, and
//! which requests conditions select.

use std::time::Duration;

use doppio_proto::frame::Opcode;
use doppio_proto::response::ErrorCode;
use doppio_proto::scylla_extensions::{RateLimitError, RateLimitedOp};

use crate::rules::parse::parse_duration;
use crate::rules::{error_code_named, Delay, Malformed, Matcher, Probe, Reaction, Rules};

const EXAMPLE: &str = r#"
seed = 7

[[rule]]
name = "slow reads"
when = { opcode = "EXECUTE", statement = "SELECT", probability = 0.5 }
then = { delay = { exponential = "2ms" } }

[[rule]]
name = "overloaded"
when = { every = 3, after = "1s", until = "5s" }
then = { error = { code = "overloaded", message = "try later" } }

[[rule]]
when = { connection = 2 }
then = "drop"

[[rule]]
then = { malformed = "bad_version" }
"#;

#[test]
fn the_documented_example_parses() {
    let r = Rules::parse(EXAMPLE).unwrap();
    assert_eq!(r.seed, 7);
    assert_eq!(r.rules.len(), 4);
    assert_eq!(
        r.rules[0].then,
        Reaction::Delay(Delay::Exponential(Duration::from_millis(2)))
    );
    assert_eq!(r.rules[0].when.opcode, Some(Opcode::Execute));
    assert!(matches!(
        r.rules[1].then,
        Reaction::Error {
            code: ErrorCode::Overloaded,
            ..
        }
    ));
    assert_eq!(r.rules[2].name, "rule 3");
    assert_eq!(r.rules[2].then, Reaction::Drop);
    assert_eq!(r.rules[3].then, Reaction::Malformed(Malformed::BadVersion));
}

#[test]
fn bad_files_say_which_rule_and_what() {
    for (text, expect) in [
        ("[[rule]]\nthen = \"explode\"", "unknown reaction"),
        (
            "[[rule]]\nname = \"x\"\nwhen = { opcode = \"FOO\" }\nthen = \"drop\"",
            "x: unknown opcode",
        ),
        (
            "[[rule]]\nwhen = { every = 0 }\nthen = \"drop\"",
            "at least 1",
        ),
        (
            "[[rule]]\nthen = { error = { code = \"nope\" } }",
            "unknown error code",
        ),
        (
            "[[rule]]\nthen = { delay = { fixed = \"3 parsecs\" } }",
            "`parsecs` is not a unit of time",
        ),
        (
            "[[rule]]\nthen = { stall = \"1s\", malformed = \"truncated\" }",
            "exactly one",
        ),
        (
            "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"] } }",
            "both ramp",
        ),
        (
            "[[rule]]\nthen = { delay = { over = \"1s\" } }",
            "both ramp",
        ),
        (
            "[[rule]]\nthen = { delay = { fixed = \"1ms\", ramp = [\"1ms\", \"5ms\"], over = \"1s\" } }",
            "exactly one of fixed, uniform, exponential, ramp",
        ),
        (
            "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5\"], over = \"1s\" } }",
            "unit",
        ),
        (
            "[[rule]]\nthen = { delay = { ramp = [\"0ms\", \"5ms\"], over = \"1s\", growth = \"geometric\" } }",
            "above 0 at both ends",
        ),
        (
            "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"], over = \"1s\", growth = \"cubic\" } }",
            "unknown growth `cubic`",
        ),
        (
            "[[rule]]\nthen = { delay = { fixed = \"1ms\", growth = \"geometric\" } }",
            "growth belongs to a ramp",
        ),
    ] {
        let e = Rules::parse(text).unwrap_err().to_string();
        assert!(e.contains(expect), "{text}: {e}");
    }
}

#[test]
fn a_ramp_delay_drifts_from_its_first_to_its_second_bound_then_stays() {
    let rules =
        Rules::parse("[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"], over = \"4s\" } }")
            .unwrap();
    let Reaction::Delay(d) = rules.rules[0].then else {
        panic!("not a delay: {:?}", rules.rules[0].then);
    };
    let at = |ms: u64| d.sample(0.3, Duration::from_millis(ms));
    assert_eq!(at(0), Duration::from_millis(1));
    assert_eq!(at(2000), Duration::from_millis(3));
    assert_eq!(at(4000), Duration::from_millis(5));
    assert_eq!(at(60_000), Duration::from_millis(5));
    // A ramp may slow down as well as speed up, and one over no time is its end at once.
    let down = Delay::Ramp {
        from: Duration::from_millis(4),
        to: Duration::ZERO,
        over: Duration::from_secs(2),
        geometric: false,
    };
    assert_eq!(
        down.sample(0.9, Duration::from_secs(1)),
        Duration::from_millis(2)
    );
    let instant = Delay::Ramp {
        from: Duration::ZERO,
        to: Duration::from_millis(7),
        over: Duration::ZERO,
        geometric: false,
    };
    assert_eq!(
        instant.sample(0.0, Duration::ZERO),
        Duration::from_millis(7)
    );
    // Geometric: 2 ms to 32 ms over 4 s doubles every second.
    let rules = Rules::parse(
        "[[rule]]\nthen = { delay = { ramp = [\"2ms\", \"32ms\"], over = \"4s\", growth = \"geometric\" } }",
    )
    .unwrap();
    let Reaction::Delay(g) = rules.rules[0].then else {
        panic!("not a delay");
    };
    for (s, ms) in [
        (0, 2.0),
        (1, 4.0),
        (2, 8.0),
        (3, 16.0),
        (4, 32.0),
        (9, 32.0),
    ] {
        let d = g.sample(0.5, Duration::from_secs(s)).as_secs_f64() * 1e3;
        assert!((d - ms).abs() < 1e-6, "{s} s: {d} ms");
    }
}

#[test]
fn a_node_condition_selects_the_requests_that_reached_that_node() {
    let r = Rules::parse(
        "[[rule]]\nname = \"n1\"\nwhen = { node = 1 }\nthen = { error = { code = \"overloaded\" } }\n",
    )
    .unwrap();
    assert_eq!(r.rules[0].when.node, Some(1));
    let mut m = Matcher::new(std::sync::Arc::new(r), 0);
    let at = |node| Probe {
        opcode: Opcode::Query,
        statement: Some("SELECT 1"),
        connection: 1,
        node,
        elapsed: Duration::ZERO,
        serial_consistency: None,
    };
    assert_eq!(m.check(&at(0)), None);
    assert_eq!(m.check(&at(1)), Some(0));
    assert_eq!(m.check(&at(2)), None);
}

#[test]
fn conditions_select_requests_and_every_counts_matches() {
    let r = std::sync::Arc::new(Rules::parse(EXAMPLE).unwrap());
    let mut m = Matcher::new(r, 0);
    let probe = |opcode, statement, elapsed| Probe {
        opcode,
        statement,
        connection: 1,
        node: 0,
        elapsed: Duration::from_secs(elapsed),
        serial_consistency: None,
    };
    // Before 1 s, a QUERY matches only the catch-all malformed rule.
    assert_eq!(m.check(&probe(Opcode::Query, Some("SELECT 1"), 0)), Some(3));
    // Within the window, every third matching request is overloaded.
    let hits: Vec<_> = (0..6)
        .map(|_| m.check(&probe(Opcode::Query, None, 2)))
        .collect();
    assert_eq!(
        hits.iter().filter(|h| **h == Some(1)).count(),
        2,
        "{hits:?}"
    );
    // Probability 0.5 over many EXECUTEs of a SELECT: about half are delayed.
    let delayed = (0..2000)
        .filter(|_| m.check(&probe(Opcode::Execute, Some("SELECT v"), 0)) == Some(0))
        .count();
    assert!((800..1200).contains(&delayed), "{delayed}");
    let d = Delay::Uniform(Duration::from_millis(1), Duration::from_millis(3));
    assert_eq!(d.sample(0.5, Duration::ZERO), Duration::from_millis(2));
    assert!(
        Delay::Exponential(Duration::from_millis(2)).sample(0.0, Duration::ZERO) == Duration::ZERO
    );
}

#[test]
fn durations_read_as_the_bench_reads_them() {
    let ms = Duration::from_millis;
    for (text, want) in [
        ("20us", Duration::from_micros(20)),
        ("20µs", Duration::from_micros(20)),
        ("2ms", ms(2)),
        ("5 ms", ms(5)),
        ("1.5s", ms(1500)),
        ("2m", ms(120_000)),
        ("1h30m", ms(5_400_000)),
    ] {
        assert_eq!(parse_duration(text), Ok(want), "{text}");
    }
    for bad in ["", "-1s", "-1", "1k", "soon", "0.5", "1M"] {
        let e = parse_duration(bad).unwrap_err();
        assert!(e.contains("is not a duration"), "{e}");
    }
    // A bare number says how to write it.
    let e = parse_duration("2").unwrap_err();
    assert!(e.contains("`2s` or `2ms`"), "{e}");
}

#[test]
fn rate_limit_reactions_read_their_operation() {
    let r = Rules::parse(
        "[[rule]]\nthen = { rate_limit = { op = \"write\", rejected_by_coordinator = true } }\n\
         [[rule]]\nthen = { rate_limit = { op = \"READ\" } }",
    )
    .unwrap();
    assert_eq!(
        r.rules[0].then,
        Reaction::RateLimit(RateLimitError {
            op: RateLimitedOp::Write,
            rejected_by_coordinator: true
        })
    );
    assert_eq!(
        r.rules[1].then,
        Reaction::RateLimit(RateLimitError {
            op: RateLimitedOp::Read,
            rejected_by_coordinator: false
        })
    );
    let e = Rules::parse("[[rule]]\nthen = { rate_limit = { op = \"scan\" } }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rate_limit op `scan` (read or write)"), "{e}");
}

#[test]
fn error_codes_are_known_by_name() {
    assert_eq!(
        error_code_named("read_timeout"),
        Some(ErrorCode::ReadTimeout)
    );
    assert_eq!(
        error_code_named("is_bootstrapping"),
        Some(ErrorCode::IsBootstrapping)
    );
    assert_eq!(error_code_named("unprepared"), Some(ErrorCode::Unprepared));
    assert_eq!(error_code_named("bogus"), None);
}
