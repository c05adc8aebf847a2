//! What the io_uring runtime issue asks of the driver on each runtime, against the stub
//! (perf/stub, in this process: no Cassandra; on the simulated runtime served in memory on
//! the test's executor): requests dropped mid-flight lose and corrupt nothing; a 16 MiB
//! result and many large pages arrive whole through a small provided-buffer ring (on
//! every runtime; the ring only on doppio's own); and on doppio's own runtime a
//! shard makes at most one `io_uring_enter` per loop turn, busy or idle, also in SQPOLL mode,
//! where a cluster's shards submit without entering.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::uring::{self as uring_rt, Config, SqPoll};
use doppio_driver::rt::{ExecutorSpec, Runtime};
use doppio_driver::{Cluster, Error, PagingState, Session, SessionConfig, Statement};
use doppio_stub::Shape;

use crate::support;

use support::{stub, StubNode};

fn config(addr: SocketAddr) -> SessionConfig {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.connection.request_timeout = Duration::from_secs(10);
    c
}

/// Runs `f` on an executor of `runtime` whose io_uring runtime (if it is that one) has a
/// provided-buffer ring of `buffers` buffers of `buffer_size` bytes, with `stub` served
/// beside it on the simulated runtime.
fn on_runtime_with_buffers<F, Fut>(
    runtime: Runtime,
    stub: &StubNode,
    buffers: u16,
    buffer_size: u32,
    f: F,
) where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let spec = ExecutorSpec {
        uring: Config {
            buffers,
            buffer_size,
            ..Config::default()
        },
        ..support::executor_spec(runtime, &format!("runtimes-test-{runtime}"))
    };
    let f = stub.beside(f);
    let handle = doppio_driver::rt::spawn_executor(spec, f).unwrap();
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

/// The row index a one-row page answered, from its paging state (the next index).
fn answered_index(r: &doppio_driver::QueryResult) -> Option<u32> {
    let next = r.paging_state()?;
    Some(u32::from_be_bytes(next[..].try_into().ok()?) - 1)
}

/// Requests whose futures are dropped while their frames are queued, sent or answered (a
/// timeout far shorter than the stub's delay) lose nothing and corrupt nothing: every
/// request that is awaited gets its own answer (checked through the paging state), the
/// connection stays open, and the abandoned ids come back once their late answers arrive.
fn requests_dropped_mid_flight_lose_nothing_and_corrupt_nothing(runtime: Runtime) {
    const ROWS: usize = 1000;
    let stub = stub(
        runtime,
        r#"
seed = 3
[[rule]]
name = "slow"
when = { statement = "FROM t", probability = 0.5 }
then = { delay = { uniform = ["1ms", "4ms"] } }
"#,
        Shape {
            rows: ROWS,
            row_bytes: 8,
            ..Shape::default()
        },
    );
    let addr = stub.addr();
    on_runtime_with_buffers(runtime, &stub, 64, 16 * 1024, move || async move {
        let s = Rc::new(Session::connect(config(addr)).await.unwrap());
        let (dropped, answered) = (Rc::new(Cell::new(0u32)), Rc::new(Cell::new(0u32)));
        let fibers: Vec<_> = (0..32u32)
            .map(|f| {
                let (s, dropped, answered) = (s.clone(), dropped.clone(), answered.clone());
                doppio_driver::rt::spawn_local(async move {
                    for k in 0..200u32 {
                        let i = (f * 200 + k) % (ROWS as u32 - 1);
                        let state = PagingState::from_bytes(i.to_be_bytes().to_vec());
                        let read = Statement::new("SELECT v FROM t")
                            .with_config(|c| c.page_size = Some(1));
                        let request = s.query_single_page(read, &(), &state);
                        if k % 2 == 0 {
                            // Dropped mid-flight: 0.5-1 ms is shorter than most answers.
                            let limit = Duration::from_micros(500 + u64::from(k % 5) * 100);
                            match doppio_driver::rt::timeout(limit, request).await {
                                Err(_) => dropped.set(dropped.get() + 1),
                                Ok(r) => {
                                    assert_eq!(answered_index(&r.unwrap()), Some(i));
                                    answered.set(answered.get() + 1);
                                }
                            }
                        } else {
                            let r = request.await.unwrap();
                            assert_eq!(answered_index(&r), Some(i), "request {i}'s own answer");
                            answered.set(answered.get() + 1);
                        }
                    }
                })
            })
            .collect();
        for f in fibers {
            f.await;
        }
        eprintln!(
            "{runtime}: {} requests dropped mid-flight, {} answered",
            dropped.get(),
            answered.get()
        );
        assert!(dropped.get() > 100, "the test dropped requests in flight");
        assert_eq!(dropped.get() + answered.get(), 32 * 200);
        let conn = s.node_at(addr).unwrap().connection().unwrap();
        assert!(conn.closed().is_none(), "the connection survived");
        // The abandoned ids return as their late answers arrive.
        for _ in 0..200 {
            if conn.in_flight() == 0 {
                break;
            }
            doppio_driver::rt::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(conn.in_flight(), 0, "every abandoned id came back");
        assert!(conn.stats().late_answers > 0, "late answers were absorbed");
        let r = s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        assert!(r.rows_count() > 0);
        s.close("done");
    });
}

/// A 16 MiB result in one page, then 32 pages of 1 MiB at once, through a provided-buffer
/// ring of four 4 KiB buffers on doppio's own runtime (the multishot receive runs out of
/// buffers over and over): every row arrives whole, in order, with the right bytes.
fn a_16_mib_result_and_many_large_pages_arrive_whole_through_a_small_buffer_ring(runtime: Runtime) {
    const ROWS: usize = 2048;
    const ROW_BYTES: usize = 8192; // 2048 x 8 KiB = 16 MiB of values
    let stub = stub(
        runtime,
        "",
        Shape {
            rows: ROWS,
            row_bytes: ROW_BYTES,
            ..Shape::default()
        },
    );
    let addr = stub.addr();
    on_runtime_with_buffers(runtime, &stub, 4, 4096, move || async move {
        let before = uring_rt::stats();
        let s = Rc::new(Session::connect(config(addr)).await.unwrap());
        let check = |r: &doppio_driver::QueryResult, rows: usize| {
            assert_eq!(r.rows_count(), rows);
            let typed: Vec<(Vec<u8>,)> = r.typed_rows().unwrap();
            for (n, (v,)) in typed.iter().enumerate() {
                assert!(
                    v.len() == ROW_BYTES && v.iter().all(|&b| b == 0x5a),
                    "row {n}: {} bytes, not the stub's",
                    v.len()
                );
            }
        };
        let whole =
            Statement::new("SELECT v FROM t").with_config(|c| c.page_size = Some(ROWS as i32));
        let r = s
            .query_single_page(whole, &(), &PagingState::start())
            .await
            .unwrap();
        check(&r, ROWS);
        let pages: Vec<_> = (0..32u32)
            .map(|p| {
                let s = s.clone();
                doppio_driver::rt::spawn_local(async move {
                    let state = PagingState::from_bytes((p * 16).to_be_bytes().to_vec());
                    let read =
                        Statement::new("SELECT v FROM t").with_config(|c| c.page_size = Some(128));
                    s.query_single_page(read, &(), &state).await
                })
            })
            .collect();
        for (p, page) in pages.into_iter().enumerate() {
            let r = page.await.unwrap();
            check(&r, 128);
            let next = u32::from_be_bytes(r.paging_state().unwrap()[..].try_into().unwrap());
            assert_eq!(next, p as u32 * 16 + 128, "page {p} is its own");
        }
        if runtime == Runtime::Uring {
            let d = uring_rt::stats().since(&before);
            eprintln!(
                "uring: {} buffer-ring exhaustions (ENOBUFS), {} multishot re-arms",
                d.recv_enobufs, d.recv_rearms
            );
            assert!(d.recv_enobufs > 0, "the small ring ran out: {d:?}");
        }
        s.close("done");
    });
}

/// A shard on doppio's own runtime makes at most one `io_uring_enter` per loop turn: busy
/// (64 fibers of requests against the stub) and idle (a connected session, nothing to do).
#[test]
fn a_uring_shard_enters_the_kernel_at_most_once_per_turn_busy_or_idle() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub(Runtime::Uring, "", Shape::default());
    let addr = stub.addr();
    on_runtime_with_buffers(Runtime::Uring, &stub, 64, 16 * 1024, move || async move {
        let s = Rc::new(Session::connect(config(addr)).await.unwrap());
        let before = uring_rt::stats();
        let fibers: Vec<_> = (0..64)
            .map(|_| {
                let s = s.clone();
                doppio_driver::rt::spawn_local(async move {
                    for _ in 0..300 {
                        s.query_unpaged("SELECT v FROM t", &()).await?;
                    }
                    Ok::<(), Error>(())
                })
            })
            .collect();
        for f in fibers {
            f.await.unwrap();
        }
        let busy = uring_rt::stats().since(&before);
        let requests = 64.0 * 300.0;
        eprintln!(
            "busy: {} turns, {} io_uring_enter ({} waiting), {:.3} enters per request, {} SQEs",
            busy.turns,
            busy.enters,
            busy.enters_waiting,
            busy.enters as f64 / requests,
            busy.sqes_submitted
        );
        assert!(busy.turns > 0);
        assert!(busy.enters <= busy.turns, "busy: {busy:?}");
        let before = uring_rt::stats();
        doppio_driver::rt::sleep(Duration::from_millis(300)).await;
        let idle = uring_rt::stats().since(&before);
        eprintln!(
            "idle 300 ms: {} turns, {} io_uring_enter",
            idle.turns, idle.enters
        );
        assert!(idle.enters <= idle.turns, "idle: {idle:?}");
        assert!(
            idle.turns <= 5,
            "an idle shard sleeps in the kernel: {idle:?}"
        );
        s.close("done");
    });
}

/// One doppio-uring shard, run with `config` against a stub, serving `fibers` fibers that
/// each send `each` queries one after the other (a closed loop): the shard's runtime counters
/// over the loop, and its ring's set-up flags.
fn closed_loop_on_a_uring_shard(
    config: Config,
    fibers: usize,
    each: usize,
) -> (uring_rt::Stats, Option<uring_rt::SetupFlags>) {
    let stub = stub(Runtime::Uring, "", Shape::default());
    let cluster = Cluster::builder()
        .session_config(SessionConfig::new(stub.addr()).with_consistency(Consistency::One))
        .cores(&[0])
        .pin(false)
        .runtime(Runtime::Uring)
        .uring_config(config)
        .build()
        .unwrap();
    let mut shards = cluster
        .run_on_shards(move |session| async move {
            let s = Rc::new(session);
            let before = uring_rt::stats();
            let fibers: Vec<_> = (0..fibers)
                .map(|_| {
                    let s = s.clone();
                    doppio_driver::rt::spawn_local(async move {
                        for _ in 0..each {
                            s.query_unpaged("SELECT v FROM t", &()).await?;
                        }
                        Ok::<(), Error>(())
                    })
                })
                .collect();
            for f in fibers {
                f.await.unwrap();
            }
            (uring_rt::stats().since(&before), uring_rt::setup_flags())
        })
        .unwrap();
    cluster.shutdown();
    assert_eq!(shards.len(), 1);
    shards.remove(0)
}

/// A cluster whose shard runs doppio's runtime in SQPOLL mode (`ClusterBuilder::uring_config`)
/// connects and serves requests; the shard's ring has `SQPOLL` and no task-run flag, and
/// every `io_uring_enter` it makes waits, wakes the kernel's thread or flushes an overflow:
/// none is made only to submit.
#[test]
fn a_cluster_on_sqpoll_shards_serves_requests_submitting_without_entering() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let sqpoll = Config {
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(20),
            cpu: None,
        }),
        ..Config::default()
    };
    let (st, flags) = closed_loop_on_a_uring_shard(sqpoll, 16, 200);
    let flags = flags.expect("a uring shard");
    eprintln!(
        "SQPOLL shard ({flags}), 3200 requests: {} turns, {} enters ({} waiting, {} waking the \
         SQ thread, {} for a CQ overflow), {} SQEs",
        st.turns,
        st.enters,
        st.enters_waiting,
        st.enters_sq_wakeup,
        st.enters_cq_overflow,
        st.sqes_submitted
    );
    assert!(flags.sqpoll && !flags.defer_taskrun, "{flags}");
    assert!(st.enters <= st.turns, "{st:?}");
    assert!(
        st.enters <= st.enters_waiting + st.enters_sq_wakeup + st.enters_cq_overflow,
        "{st:?}"
    );
    assert!(st.sqes_submitted > 0, "{st:?}");
}

/// The batched wait against a node that answers a batch of requests in one write (the
/// stub): the connections tell the runtime how many answers they await, it learns that one
/// receive brings many of them, and after a few turns it waits for one completion again. A
/// closed loop of 32 fibers then never waits out its 5 ms batch wait; before the connection
/// counted the answers awaited rather than its stream ids in use (an answered id stays in use
/// until its caller takes the answer), every wait of such a loop was a batch.
#[test]
fn a_closed_loop_whose_answers_come_together_learns_not_to_batch_its_waits() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let batching = Config {
        batch_wait: Duration::from_millis(5),
        ..Config::default()
    };
    let (st, _) = closed_loop_on_a_uring_shard(batching, 32, 100);
    eprintln!("3200 requests, 32 at a time: {st:?}");
    assert!(
        st.enters_waiting > 50,
        "the loop waited for its answers: {st:?}"
    );
    assert!(
        st.waits_batched * 5 < st.enters_waiting,
        "{} of {} waits were batches: {st:?}",
        st.waits_batched,
        st.enters_waiting
    );
}

support::runtime_tests!(;
    and_sim:
    requests_dropped_mid_flight_lose_nothing_and_corrupt_nothing,
    a_16_mib_result_and_many_large_pages_arrive_whole_through_a_small_buffer_ring,
);
