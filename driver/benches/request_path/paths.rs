//! The measured paths: each sends its requests (or wakes, or frames) and returns the time
//! they took on the clock the run uses.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::hint::black_box;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::BytesMut;
use doppio_driver::bench_internals as internals;
use doppio_driver::proto::deserialize::DeserializeValue;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::rt::TcpStream;
use doppio_driver::{Error, PagingState, PreparedStatement, QueryResult, Session};

use crate::harness::{Bench, Call, Clock, PeerKind, MEMORY_STUB};

/// Consumes a page as the bench's doppio backend does (bench/src/backend/doppio/rows.rs):
/// every cell of every row decoded into a value.
pub(crate) fn consume(page: &QueryResult) -> u64 {
    let Some(rows) = page.rows() else {
        return 0;
    };
    let columns = rows.columns();
    let mut n = 0;
    for row in rows.iter() {
        let row = row.expect("a well-formed row");
        for (cell, column) in row.cells().zip(columns) {
            black_box(<Option<CqlValue>>::deserialize(&column.typ, cell).expect("a value"));
        }
        n += 1;
    }
    n
}

/// One request as the bench's doppio backend makes it: its own async level around
/// `execute_single_page` (the first page), the page consumed.
pub(crate) async fn bench_shaped(
    session: &Session,
    prepared: &PreparedStatement,
) -> Result<u64, Error> {
    let start = PagingState::start();
    let page = session.execute_single_page(prepared, &(), &start).await?;
    Ok(consume(&page))
}

/// `requests` requests through `c` fibers sharing a count; the time `clock` reports for all
/// of them (tasks spawned before the clock starts: they run once the caller awaits them).
pub(crate) async fn e2e(
    bench: Rc<Bench>,
    kind: PeerKind,
    call: Call,
    c: usize,
    requests: u64,
    clock: Clock,
) -> Duration {
    let left = Rc::new(Cell::new(requests));
    let fibers: Vec<_> = (0..(c as u64).min(requests))
        .map(|_| {
            let (bench, left) = (bench.clone(), left.clone());
            doppio_driver::rt::spawn_local(async move {
                let peer = bench.peer(kind);
                while left.get() > 0 {
                    left.set(left.get() - 1);
                    match call {
                        Call::Execute => {
                            let r = peer.session.execute_unpaged(&peer.empty, &()).await;
                            black_box(&r.expect("an answer"));
                        }
                        Call::BenchShaped => {
                            let rows = bench_shaped(&peer.session, &peer.empty).await;
                            black_box(rows.expect("an answer"));
                        }
                    }
                }
            })
        })
        .collect();
    let start = clock.now();
    for f in fibers {
        f.await;
    }
    clock.now().saturating_sub(start)
}

/// `Connection::request` alone, `requests` of them through `c` fibers.
pub(crate) async fn connection_requests(
    bench: Rc<Bench>,
    c: usize,
    requests: u64,
    clock: Clock,
) -> Duration {
    let left = Rc::new(Cell::new(requests));
    let conn = Rc::new(bench.memory.connection());
    let fibers: Vec<_> = (0..(c as u64).min(requests))
        .map(|_| {
            let (bench, left, conn) = (bench.clone(), left.clone(), conn.clone());
            doppio_driver::rt::spawn_local(async move {
                let m = &bench.memory;
                while left.get() > 0 {
                    left.set(left.get() - 1);
                    let frame = conn
                        .request(None, |buf, stream| {
                            internals::encode_execute(&m.session, &m.empty, &(), buf, stream)
                        })
                        .await;
                    black_box(&frame.expect("an answer"));
                }
            })
        })
        .collect();
    let start = clock.now();
    for f in fibers {
        f.await;
    }
    clock.now().saturating_sub(start)
}

/// The in-memory stub alone: a raw client writes `c` pre-encoded EXECUTEs at a time and
/// waits for all their answers' bytes; the time per request, for `requests` of them.
pub(crate) async fn stub_alone(
    bench: Rc<Bench>,
    c: usize,
    requests: u64,
    clock: Clock,
) -> Duration {
    let m = &bench.memory;
    let client = TcpStream::connect(MEMORY_STUB, Duration::from_secs(1), 64 * 1024)
        .await
        .expect("a raw connection to the in-memory stub");
    let mut frames = BytesMut::new();
    for stream in 0..c {
        internals::encode_execute(&m.session, &m.empty, &(), &mut frames, stream as i16)
            .expect("encode");
    }
    let answer_len = bench.one_row.header.length as usize + doppio_driver::proto::frame::HEADER_LEN;
    let rounds = requests.div_ceil(c as u64).max(1);
    let mut inbox = BytesMut::with_capacity(answer_len * c * 2);
    let start = clock.now();
    for _ in 0..rounds {
        let (sent, back) = client.send(frames).await;
        sent.expect("send to the stub");
        frames = back;
        while inbox.len() < answer_len * c {
            let n = poll_fn(|cx| client.poll_recv(cx, &mut inbox))
                .await
                .expect("receive from the stub");
            assert!(n > 0, "the stub hung up");
        }
        inbox.clear();
    }
    let elapsed = clock.now().saturating_sub(start);
    client.shutdown();
    // Scaled to `requests` (rounds * c may exceed it by less than one round).
    elapsed.mul_f64(requests as f64 / (rounds * c as u64) as f64)
}

/// Waker round trips between two tasks; the time per wake-up (two per round trip).
pub(crate) async fn wake_round_trips(round_trips: u64, clock: Clock) -> Duration {
    struct PingPong {
        /// True while it is the other task's turn.
        theirs: Cell<bool>,
        done: Cell<bool>,
        mine: RefCell<Option<Waker>>,
        other: RefCell<Option<Waker>>,
    }
    let st = Rc::new(PingPong {
        theirs: Cell::new(false),
        done: Cell::new(false),
        mine: RefCell::new(None),
        other: RefCell::new(None),
    });
    let other = {
        let st = st.clone();
        doppio_driver::rt::spawn_local(async move {
            loop {
                poll_fn(|cx| {
                    if st.theirs.get() || st.done.get() {
                        return Poll::Ready(());
                    }
                    *st.other.borrow_mut() = Some(cx.waker().clone());
                    Poll::Pending
                })
                .await;
                if st.done.get() {
                    return;
                }
                st.theirs.set(false);
                if let Some(w) = st.mine.borrow_mut().take() {
                    w.wake();
                }
            }
        })
    };
    let start = clock.now();
    for _ in 0..round_trips {
        st.theirs.set(true);
        if let Some(w) = st.other.borrow_mut().take() {
            w.wake();
        }
        poll_fn(|cx| {
            if !st.theirs.get() {
                return Poll::Ready(());
            }
            *st.mine.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
    }
    let elapsed = clock.now().saturating_sub(start);
    st.done.set(true);
    if let Some(w) = st.other.borrow_mut().take() {
        w.wake();
    }
    other.await;
    elapsed / 2
}

/// `frames` requests' worth of frames queued `batch` at a time, each batch flushed and
/// received by the sink's other end.
pub(crate) async fn submit(bench: Rc<Bench>, batch: usize, frames: u64, clock: Clock) -> Duration {
    let m = &bench.memory;
    let mut frame = BytesMut::new();
    internals::encode_execute(&m.session, &m.empty, &(), &mut frame, 1).expect("encode");
    let batches = frames.div_ceil(batch as u64).max(1);
    let mut sink = BytesMut::with_capacity(64 * 1024);
    let start = clock.now();
    for _ in 0..batches {
        for _ in 0..batch {
            doppio_driver::bench_internals::queue_raw(&bench.sink, &frame);
        }
        let mut got = 0;
        while got < frame.len() * batch {
            got += poll_fn(|cx| bench.sink_end.poll_recv(cx, &mut sink))
                .await
                .expect("the sink receives");
        }
        sink.clear();
    }
    clock
        .now()
        .saturating_sub(start)
        .mul_f64(frames as f64 / (batches * batch as u64) as f64)
}

/// Runs `iters` times a synchronous stage `f` on the shard, inside a task (so that wakers
/// are the task's own), and times it.
pub(crate) fn time_sync(iters: u64, mut f: impl FnMut()) -> Duration {
    let clock = Clock::samples();
    let start = clock.now();
    for _ in 0..iters {
        f();
    }
    clock.now().saturating_sub(start)
}
