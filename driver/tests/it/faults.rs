//! doppio under the stub's faults (perf/stub, in this process: no Cassandra; on the
//! simulated runtime served in memory on the test's executor, in virtual time), with the
//! guarantees of the reliability issue checked request by request: a dropped connection
//! fails its request and the pool reconnects; a 2-second stall (timeouts at the deadline,
//! stream ids bounded, no hang, service back after it), connections dropped under load (every request answered
//! once, by its own answer, or failed with `ConnectionBroken`; reconnection with backoff),
//! broken frames (a protocol error naming the fault while other connections carry on), and
//! OVERLOADED / UNAVAILABLE / READ_TIMEOUT answers handled as the retry policy documents.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use doppio_driver::config::Backoff;
use doppio_driver::config::HandshakeConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::response::ErrorCode;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::session::{DefaultRetryPolicy, NoRetry, RetryPolicy};
use doppio_driver::{Error, PagingState, Session, SessionConfig, Statement};
use doppio_stub::Shape;

use crate::support;

use doppio_driver::rt::Runtime;
use support::stub;

fn config(addr: SocketAddr, retry: Arc<dyn RetryPolicy>) -> SessionConfig {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.retry_policy = retry;
    c.connection.request_timeout = Duration::from_secs(5);
    c.backoff = Backoff::new(Duration::from_millis(20), Duration::from_millis(200));
    c
}

/// One request: when it started (since the test's start), how long it took, and how it ended.
type Outcome = (Duration, Duration, Result<(), Error>);

/// How much later than its deadline a request may fail. The deadline sweep runs on the
/// coarse clock (a few ms) and wakes on glommio's timer; the rest is a busy 2-core machine.
const DEADLINE_BOUND: Duration = Duration::from_millis(150);

fn a_dropped_connection_fails_its_requests_and_the_driver_reconnects(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
when = { statement = "DROPME" }
then = "drop"
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    stub.run("faults", move || async move {
        let s = Session::connect(config(addr, Arc::new(NoRetry)))
            .await
            .unwrap();
        let e = s
            .query_unpaged("SELECT v FROM t WHERE DROPME", &())
            .await
            .unwrap_err();
        assert!(matches!(e, Error::ConnectionBroken(_)), "{e}");
        // The pool reconnects in the background.
        let mut ok = false;
        for _ in 0..100 {
            doppio_driver::rt::sleep(Duration::from_millis(20)).await;
            if s.query_unpaged("SELECT v FROM t", &()).await.is_ok() {
                ok = true;
                break;
            }
        }
        assert!(ok, "service resumes on a new connection");
        s.close("done");
    });
}

fn a_two_second_stall_fails_requests_at_their_deadline_bounds_stream_ids_and_service_resumes(
    runtime: Runtime,
) {
    const STREAMS: usize = 32;
    const FIBERS: usize = 64;
    const TIMEOUT: Duration = Duration::from_millis(400);
    const STALL_AT: Duration = Duration::from_millis(300);
    const STALL: Duration = Duration::from_secs(2);
    const RUN: Duration = Duration::from_millis(3600);
    let stub = stub(
        runtime,
        r#"
[[rule]]
name = "stall"
when = { statement = "STALL" }
then = { stall = "2s" }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    stub.run("faults", move || async move {
        let mut c = config(addr, Arc::new(NoRetry));
        c.connection.max_streams = STREAMS;
        // Tolerate the stall (a connection is otherwise given up when its orphans pile up).
        c.connection.max_orphans = 100_000;
        c.connection.request_timeout = TIMEOUT;
        c.connection.keepalive = None;
        let s = Rc::new(Session::connect(c).await.unwrap());
        // Time since the test's start, on the executor's clock (virtual on a simulation).
        let t0 = doppio_driver::rt::now();
        let since_start = move || doppio_driver::rt::now() - t0;
        // (start, elapsed, outcome) of every request.
        let log: Rc<RefCell<Vec<Outcome>>> = Rc::default();
        let staller = {
            let s = s.clone();
            doppio_driver::rt::spawn_local(async move {
                doppio_driver::rt::sleep(STALL_AT).await;
                let stall = Statement::new("SELECT v FROM t WHERE STALL")
                    .with_config(|c| c.timeout = Some(Duration::from_secs(10)));
                s.query_unpaged(stall, &()).await.unwrap();
                since_start()
            })
        };
        let fibers: Vec<_> = (0..FIBERS)
            .map(|_| {
                let s = s.clone();
                let log = log.clone();
                doppio_driver::rt::spawn_local(async move {
                    while since_start() < RUN {
                        let start = since_start();
                        let r = s.query_unpaged("SELECT v FROM t", &()).await.map(|_| ());
                        log.borrow_mut().push((start, since_start() - start, r));
                    }
                })
            })
            .collect();
        for f in fibers {
            f.await;
        }
        let stall_answered = staller.await;
        let finished = since_start();
        let stats = s.stats();
        s.close("done");
        let log = log.borrow();
        eprintln!(
            "{} requests, stall answered at {stall_answered:?}, fibers done at {finished:?}, \
             in-flight high water {}, timeouts {}, late answers {}",
            log.len(),
            stats.connections.in_flight_high_water,
            stats.connections.timeouts,
            stats.connections.late_answers
        );
        // The stall really happened and held the connection.
        assert!(stall_answered >= STALL_AT + STALL, "{stall_answered:?}");
        // Every failure is a timeout, at its deadline.
        let mut timeouts = 0;
        let mut latest = Duration::ZERO;
        for (start, elapsed, r) in log.iter() {
            if let Err(e) = r {
                assert!(matches!(e, Error::Timeout { .. }), "at {start:?}: {e}");
                assert!(
                    *elapsed >= TIMEOUT,
                    "failed early: {elapsed:?} at {start:?}"
                );
                latest = latest.max(*elapsed - TIMEOUT);
                timeouts += 1;
            }
        }
        eprintln!("{timeouts} timeouts, the latest {latest:?} after its deadline");
        assert!(
            latest <= DEADLINE_BOUND,
            "a timeout came {latest:?} after its deadline"
        );
        // Roughly every fiber timed out about every TIMEOUT during the stall.
        assert!(timeouts >= FIBERS * 3, "{timeouts} timeouts");
        // Stream ids: bounded by the configuration, and the bound was reached (backpressure
        // held the other fibers back).
        assert_eq!(stats.connections.in_flight_high_water, STREAMS as u64);
        // Service resumes: every request started well after the stall ended succeeded.
        let after: Vec<_> = log
            .iter()
            .filter(|(start, _, _)| *start > stall_answered + Duration::from_millis(300))
            .collect();
        assert!(
            after.len() > 100,
            "{} requests after the stall",
            after.len()
        );
        assert!(
            after.iter().all(|(_, _, r)| r.is_ok()),
            "failures after the stall"
        );
        // Nothing hung: the last request ended within its timeout of the run's end.
        assert!(finished <= RUN + TIMEOUT + DEADLINE_BOUND, "{finished:?}");
    });
}

fn connections_dropped_under_load_fail_only_their_in_flight_requests_and_answers_never_cross(
    runtime: Runtime,
) {
    const FIBERS: u32 = 48;
    const PER_FIBER: u32 = 400;
    const ROWS: usize = 50_000;
    // A connection is dropped at every 3000th request: about six drops under this load.
    let stub = stub(
        runtime,
        r#"
[[rule]]
name = "drop"
when = { statement = "FROM t", every = 3000 }
then = "drop"
"#,
        Shape {
            rows: ROWS,
            row_bytes: 8,
            ..Shape::default()
        },
    );
    let addr = stub.addr();
    let drops = stub.run("faults", move || async move {
        let s = Rc::new(
            Session::connect(config(addr, Arc::new(NoRetry)))
                .await
                .unwrap(),
        );
        #[derive(Default)]
        struct Tally {
            ok: u64,
            broken: u64,
            no_connection: u64,
            calls: u64,
        }
        let tally = Rc::new(RefCell::new(Tally::default()));
        let fibers: Vec<_> = (0..FIBERS)
            .map(|f| {
                let s = s.clone();
                let tally = tally.clone();
                doppio_driver::rt::spawn_local(async move {
                    for k in 0..PER_FIBER {
                        // Each request asks for one row at its own index: the answer's paging
                        // state (the next index) says whose answer it is.
                        let i = (f * PER_FIBER + k) % (ROWS as u32 - 1);
                        let state = PagingState::from_bytes(i.to_be_bytes().to_vec());
                        let read = Statement::new("SELECT v FROM t")
                            .with_config(|c| c.page_size = Some(1));
                        let r = s.query_single_page(read, &(), &state).await;
                        let pause = matches!(r, Err(Error::NoConnection(_)));
                        {
                            let mut t = tally.borrow_mut();
                            t.calls += 1;
                            match r {
                                Ok(res) => {
                                    assert_eq!(res.rows_count(), 1);
                                    let next = res.paging_state().map(|b| b.to_vec());
                                    assert_eq!(
                                        next,
                                        Some((i + 1).to_be_bytes().to_vec()),
                                        "request {i} got another request's answer"
                                    );
                                    t.ok += 1;
                                }
                                Err(Error::ConnectionBroken(_)) => t.broken += 1,
                                // Nothing was sent: the pool is reconnecting.
                                Err(Error::NoConnection(_)) => t.no_connection += 1,
                                Err(e) => panic!("request {i}: unexpected error {e}"),
                            }
                        }
                        if pause {
                            // Let the pool reconnect rather than spin on it.
                            doppio_driver::rt::sleep(Duration::from_millis(2)).await;
                        }
                    }
                })
            })
            .collect();
        for f in fibers {
            f.await;
        }
        let pool = s.node_at(addr).unwrap().pool_stats();
        let t = std::mem::take(&mut *tally.borrow_mut());
        eprintln!(
            "{} calls: {} answered, {} connection broken, {} no connection; pool opened {} \
             connections, {} failed attempts",
            t.calls, t.ok, t.broken, t.no_connection, pool.opened, pool.failed_attempts
        );
        // Every call came back exactly once.
        assert_eq!(t.calls, u64::from(FIBERS * PER_FIBER));
        assert_eq!(t.ok + t.broken + t.no_connection, t.calls);
        assert!(t.broken > 0, "some requests were in flight at a drop");
        // Load went on: most requests were answered, and once the pool has reconnected (the
        // last drop may have come just before the end: backoff 20-200 ms) a request succeeds.
        assert!(t.ok > t.calls / 2, "{} of {} answered", t.ok, t.calls);
        s.node_at(addr)
            .unwrap()
            .wait_connected(Duration::from_secs(5))
            .await
            .unwrap();
        s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        // Counted now, not at the end of the load: when the last drop came just before it,
        // its reconnection happened since (seen once on a loaded machine: 4 opened, 4 drops).
        let opened = s.node_at(addr).unwrap().pool_stats().opened;
        s.close("done");
        opened
    });
    let fired = stub.fired();
    let dropped = fired.iter().find(|(n, _)| n == "drop").unwrap().1;
    eprintln!("the stub dropped {dropped} connections");
    assert!(dropped >= 3, "{dropped} drops");
    // One connection at the start and one per drop: no reconnection storm.
    assert!(
        drops > dropped && drops <= dropped + 2,
        "{drops} connections opened for {dropped} drops"
    );
}

fn a_broken_frame_closes_only_its_connection_with_an_error_naming_the_fault(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
when = { statement = "BADVERSION" }
then = { malformed = "bad_version" }

[[rule]]
when = { statement = "OVERSIZED" }
then = { malformed = "oversized_length" }

[[rule]]
when = { statement = "CORRUPTLZ4" }
then = { malformed = "corrupt_lz4" }

[[rule]]
when = { statement = "WRONGSTREAM" }
then = "wrong_stream"

[[rule]]
when = { statement = "TRUNCATED" }
then = { malformed = "truncated" }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    stub.run("faults", move || async move {
        // A bystander session (its own connection) runs requests all along.
        let bystander = Rc::new(
            Session::connect(config(addr, Arc::new(NoRetry)))
                .await
                .unwrap(),
        );
        let stop = Rc::new(std::cell::Cell::new(false));
        let load = {
            let (b, stop) = (bystander.clone(), stop.clone());
            doppio_driver::rt::spawn_local(async move {
                let (mut ok, mut failed) = (0u64, 0u64);
                while !stop.get() {
                    match b.query_unpaged("SELECT v FROM t", &()).await {
                        Ok(_) => ok += 1,
                        Err(_) => failed += 1,
                    }
                }
                (ok, failed)
            })
        };
        // Both framings: v4 frames on the socket, and v5 envelopes inside valid segments
        // (the stub frames its malformed answers too, so the envelope checks meet them).
        let cases = [
            ("BADVERSION", false, "version"),
            ("OVERSIZED", false, "limit"),
            ("CORRUPTLZ4", true, "lz4"),
            ("WRONGSTREAM", false, "no request waiting"),
            ("TRUNCATED", false, "middle of a frame"),
        ];
        let v5_cases = [
            ("BADVERSION", false, "version"),
            ("OVERSIZED", false, "limit"),
            ("WRONGSTREAM", false, "no request waiting"),
            // A self-contained segment holding half an envelope.
            ("TRUNCATED", false, "whole envelopes"),
        ];
        let all = cases
            .iter()
            .map(|c| (ProtocolVersion::V4, *c))
            .chain(v5_cases.iter().map(|c| (ProtocolVersion::V5, *c)));
        for (version, (statement, lz4, expect)) in all {
            let mut c = config(addr, Arc::new(NoRetry));
            c.handshake = {
                let mut cfg = HandshakeConfig::default();
                cfg.compression = lz4;
                cfg.protocol_version = Some(version);
                cfg
            };
            let victim = Session::connect(c).await.unwrap();
            let e = victim
                .query_unpaged(&format!("SELECT v FROM t WHERE {statement}"), &())
                .await
                .unwrap_err();
            let text = doppio_driver::error::Report(&e).to_string();
            eprintln!("{version} {statement}: {text}");
            assert!(
                matches!(e, Error::Protocol { .. } | Error::ConnectionBroken(_)),
                "{statement}: {text}"
            );
            assert!(text.contains(expect), "{statement}: {text}");
            if statement == "TRUNCATED" && version == ProtocolVersion::V4 {
                // Half a frame, then the close: the connection broke, nothing was misread.
                assert!(matches!(e, Error::ConnectionBroken(_)), "{e}");
            }
            // The victim's pool replaces its connection; the session serves again.
            let mut healed = false;
            for _ in 0..100 {
                if victim.query_unpaged("SELECT v FROM t", &()).await.is_ok() {
                    healed = true;
                    break;
                }
                doppio_driver::rt::sleep(Duration::from_millis(20)).await;
            }
            assert!(healed, "{statement}: the session did not recover");
            victim.close("done");
        }
        stop.set(true);
        let (ok, failed) = load.await;
        eprintln!("bystander: {ok} answered, {failed} failed");
        assert_eq!(failed, 0, "another connection was hurt");
        assert!(ok > 100, "the bystander ran ({ok} requests)");
        bystander.close("done");
    });
}

fn overloaded_unavailable_and_read_timeouts_are_retried_exactly_as_the_policy_documents(
    runtime: Runtime,
) {
    // Every second matching request fails, so a retry (the next matching request) succeeds.
    let mut rules = String::new();
    for (name, code) in [
        ("OVL", "overloaded"),
        ("UNAV", "unavailable"),
        ("RTO", "read_timeout"),
    ] {
        for variant in ["RETRY", "NORETRY", "IDEM"] {
            rules.push_str(&format!(
                "[[rule]]\nname = \"{name}_{variant}\"\nwhen = {{ statement = \"{name}_{variant} \", \
                 every = 2 }}\nthen = {{ error = {{ code = \"{code}\", message = \"{name}\" }} }}\n\n"
            ));
        }
    }
    let stub = stub(runtime, &rules, Shape::default());
    let addr = stub.addr();
    let results = stub.run("faults", move || async move {
        let retrying = Session::connect(config(
            addr,
            Arc::new(DefaultRetryPolicy { max_retries: 1 }),
        ))
        .await
        .unwrap();
        let plain = Session::connect(config(addr, Arc::new(NoRetry)))
            .await
            .unwrap();
        let mut out = Vec::new();
        for name in ["OVL", "UNAV", "RTO"] {
            for (variant, s, idempotent) in [
                ("RETRY", &retrying, false),
                ("NORETRY", &plain, false),
                ("IDEM", &retrying, true),
            ] {
                let before = s.stats();
                let mut errors = 0u64;
                for _ in 0..20 {
                    let cql = format!("SELECT v FROM t WHERE k = '{name}_{variant} '");
                    let read = Statement::new(cql).with_config(|c| c.idempotent = idempotent);
                    if let Err(e) = s.query_unpaged(read, &()).await {
                        assert!(matches!(e, Error::Server { .. }), "{name} {variant}: {e}");
                        assert!(e.to_string().contains(name), "{e}");
                        errors += 1;
                    }
                }
                let retries = s.stats().retries - before.retries;
                out.push((format!("{name}_{variant}"), errors, retries));
            }
        }
        retrying.close("done");
        plain.close("done");
        out
    });
    let fired = stub.fired();
    for (rule, errors, retries) in results {
        let n = fired.iter().find(|(r, _)| *r == rule).map_or(0, |x| x.1);
        eprintln!("{rule}: fired {n}, errors {errors}, retries {retries}");
        // Every error the stub sent was either retried or returned, never both or neither.
        assert_eq!(errors + retries, n, "{rule}");
        let expect_retried = match rule.as_str() {
            // Not applied on the coordinator: the policy sends it to the next node even when
            // not idempotent, but this stub is the only node, and a node that refused a
            // request is not asked again at once: the error is returned (the next-node
            // retry is `stub_cluster.rs`'s).
            "OVL_RETRY" | "UNAV_RETRY" | "OVL_IDEM" | "UNAV_IDEM" => false,
            // Replicas timed out: retried (same node) only when idempotent.
            "RTO_IDEM" => true,
            "RTO_RETRY" => false,
            // NoRetry returns every error.
            _ => false,
        };
        if expect_retried {
            assert_eq!(errors, 0, "{rule}: every error retried");
            assert!(retries >= 10, "{rule}");
        } else {
            assert_eq!(retries, 0, "{rule}: nothing retried");
            assert_eq!(errors, 10, "{rule}: every second request failed");
        }
    }
}

/// The EXECUTE fast path (a prepared statement with default options, encoded from its
/// template) decodes its own answers: one that does not decode must close the connection as
/// every other path does (before the fix it was reported but the connection stayed open,
/// its next answers trusted).
fn an_undecodable_answer_on_the_execute_fast_path_closes_its_connection(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
when = { opcode = "EXECUTE", statement = "BADBODY" }
then = { malformed = "bad_body" }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    stub.run("faults", move || async move {
        let s = Session::connect(config(addr, Arc::new(NoRetry)))
            .await
            .unwrap();
        let p = s.prepare("SELECT v FROM t WHERE BADBODY").await.unwrap();
        let node = s.node_at(addr).unwrap();
        let conn = node.connection().expect("an open connection");
        let e = s.execute_unpaged(&p, &()).await.unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Protocol { violation, .. }
                    if matches!(**violation, doppio_driver::error::Violation::Decode(_))
            ),
            "{}",
            doppio_driver::error::Report(&e)
        );
        assert!(
            conn.closed().is_some(),
            "the connection that carried the undecodable answer is closed"
        );
        s.close("done");
    });
}

/// A node that forgot a prepared statement answers UNPREPARED: the driver prepares it there
/// again and executes once more, on the same request; if the node forgets it again at once,
/// that UNPREPARED is the request's error (one healing per request, never a loop).
fn an_unprepared_answer_is_healed_once_by_preparing_again(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
name = "prepares"
when = { opcode = "PREPARE", statement = "FORGETS" }
then = { delay = { fixed = "0s" } }

[[rule]]
name = "forgets every second"
when = { opcode = "EXECUTE", statement = "FORGETS", every = 2 }
then = { error = { code = "unprepared", message = "forgotten" } }

[[rule]]
name = "always forgets"
when = { opcode = "EXECUTE", statement = "ALWAYS" }
then = { error = { code = "unprepared", message = "forgotten" } }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    stub.run("faults", move || async move {
        let s = Session::connect(config(addr, Arc::new(NoRetry)))
            .await
            .unwrap();
        let p = s.prepare("SELECT v FROM t WHERE FORGETS").await.unwrap();
        // EXECUTE 1 is answered; every later call's first EXECUTE is forgotten, healed by a
        // PREPARE and answered on its second EXECUTE.
        for i in 0..10 {
            let r = s.execute_unpaged(&p, &()).await;
            assert!(r.is_ok(), "call {i}: {:?}", r.err());
        }
        assert_eq!(s.stats().reprepares, 9, "each healing counted");
        assert_eq!(s.stats().retries, 0, "a healing is not a retry");
        let q = s.prepare("SELECT v FROM t WHERE ALWAYS").await.unwrap();
        let e = s.execute_unpaged(&q, &()).await.unwrap_err();
        assert_eq!(e.server_code(), Some(ErrorCode::Unprepared), "{e}");
        assert_eq!(s.stats().reprepares, 10);
        s.close("done");
    });
    let fired = |name: &str| {
        stub.fired()
            .into_iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, n)| n)
    };
    assert_eq!(fired("forgets every second"), 9);
    assert_eq!(fired("prepares"), 1 + 9, "one PREPARE per healing");
    assert_eq!(
        fired("always forgets"),
        2,
        "the first EXECUTE and the one after preparing again, no more"
    );
}

support::runtime_tests!(;
    and_sim:
    an_unprepared_answer_is_healed_once_by_preparing_again,
    an_undecodable_answer_on_the_execute_fast_path_closes_its_connection,
    a_dropped_connection_fails_its_requests_and_the_driver_reconnects,
    a_two_second_stall_fails_requests_at_their_deadline_bounds_stream_ids_and_service_resumes,
    connections_dropped_under_load_fail_only_their_in_flight_requests_and_answers_never_cross,
    a_broken_frame_closes_only_its_connection_with_an_error_naming_the_fault,
    overloaded_unavailable_and_read_timeouts_are_retried_exactly_as_the_policy_documents,
);
