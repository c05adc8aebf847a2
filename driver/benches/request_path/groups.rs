//! The benchmark groups criterion runs: the stages alone, and each runtime's end-to-end
//! and per-layer paths.

use std::future::poll_fn;
use std::hint::black_box;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use criterion::Criterion;
use doppio_driver::bench_internals as internals;

use crate::harness::{Call, Clock, Harness, PeerKind, KEY, VALUE};
use crate::paths::{connection_requests, e2e, stub_alone, submit, time_sync, wake_round_trips};

pub(crate) fn print_sizes(h: &Harness) {
    let s = h.with_bench(|b| {
        let m = &b.memory;
        internals::future_sizes(&m.session, &m.empty, &(), &m.connection())
    });
    println!(
        "sizes (bytes): QueryResult {}, Result<QueryResult, Error> {}; futures: \
         Session::execute_unpaged {}, Session::execute_with {}, Session::run {}, \
         Session::execute_once {}, Connection::request {}",
        s.query_result,
        s.result,
        s.execute,
        s.execute_with,
        s.run,
        s.execute_once,
        s.connection_request
    );
}

pub(crate) fn stages(c: &mut Criterion, h: &Rc<Harness>) {
    let mut g = c.benchmark_group("stage");
    for (name, which) in [
        ("encode/empty", 0u8),
        ("encode/keyed", 1),
        ("encode/insert", 2),
    ] {
        let h = h.clone();
        g.bench_function(name, move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| async move {
                    let m = &bench.memory;
                    let mut buf = BytesMut::with_capacity(64 * 1024);
                    let mut stream = 0i16;
                    time_sync(iters, || {
                        if buf.len() > 60 * 1024 {
                            buf.clear();
                        }
                        stream = (stream + 1) & 0x3ff;
                        let r = match which {
                            0 => internals::encode_execute(
                                &m.session,
                                &m.empty,
                                &(),
                                &mut buf,
                                stream,
                            ),
                            1 => internals::encode_execute(
                                &m.session,
                                &bench.keyed,
                                &(KEY,),
                                &mut buf,
                                stream,
                            ),
                            _ => internals::encode_execute(
                                &m.session,
                                &bench.insert,
                                &(KEY, VALUE),
                                &mut buf,
                                stream,
                            ),
                        };
                        r.expect("encode");
                        black_box(&buf);
                    })
                })
            })
        });
    }
    for (name, keyed) in [("placement/no_key", false), ("placement/keyed", true)] {
        let h = h.clone();
        g.bench_function(name, move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| async move {
                    let m = &bench.memory;
                    time_sync(iters, || {
                        let conn = if keyed {
                            internals::place_execute(&m.session, &bench.keyed, &(KEY,))
                        } else {
                            internals::place_execute(&m.session, &m.empty, &())
                        };
                        black_box(conn.expect("a connection"));
                    })
                })
            })
        });
    }
    {
        let h = h.clone();
        g.bench_function("in_flight", move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| async move {
                    let mut table = internals::InFlightTable::new(32768);
                    let mut answer = Some(bench.one_row.clone());
                    let timeout = Duration::from_secs(12);
                    poll_fn(|cx| {
                        let elapsed = time_sync(iters, || {
                            let Poll::Ready(slot) = table.poll_acquire(&mut None, cx) else {
                                panic!("a free id");
                            };
                            table.set_deadline(slot, timeout);
                            assert!(table.poll_outcome(slot, cx).is_pending());
                            let frame = answer.take().expect("the answer");
                            assert!(table.complete(slot.stream(), frame));
                            let Poll::Ready(Some(frame)) = table.poll_outcome(slot, cx) else {
                                panic!("the answer is ready");
                            };
                            answer = Some(black_box(frame));
                        });
                        Poll::Ready(elapsed)
                    })
                    .await
                })
            })
        });
    }
    for (name, void) in [("decode/one_row", false), ("decode/void", true)] {
        let h = h.clone();
        g.bench_function(name, move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| async move {
                    let m = &bench.memory;
                    let conn = m.connection();
                    let (frame, prepared) = if void {
                        (&bench.void, &bench.insert)
                    } else {
                        (&bench.one_row, &m.empty)
                    };
                    time_sync(iters, || {
                        let r = internals::decode_execute(&m.session, &conn, frame, prepared);
                        black_box(r.expect("a result"));
                    })
                })
            })
        });
    }
    g.finish();
}

pub(crate) fn per_runtime(c: &mut Criterion, h: &Rc<Harness>) {
    let rt = h.runtime.name();
    let mut g = c.benchmark_group(rt);
    {
        let h = h.clone();
        g.bench_function("wake", move |b| {
            b.iter_custom(|iters| h.on_shard(move |_| wake_round_trips(iters, Clock::samples())))
        });
    }
    for batch in [1usize, 256] {
        let h = h.clone();
        g.bench_function(format!("submit/{batch}"), move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| submit(bench, batch, iters, Clock::samples()))
            })
        });
    }
    for conc in [1usize, 256] {
        let h = h.clone();
        g.bench_function(format!("connection/c{conc}"), move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| connection_requests(bench, conc, iters, Clock::samples()))
            })
        });
    }
    for conc in [1usize, 256] {
        let h = h.clone();
        g.bench_function(format!("peer/c{conc}"), move |b| {
            b.iter_custom(|iters| {
                h.on_shard(move |bench| stub_alone(bench, conc, iters, Clock::samples()))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group(format!("e2e/{rt}"));
    let samples = Clock::samples();
    let cases = [
        ("remote", PeerKind::Remote, Call::Execute, samples),
        ("remote_wall", PeerKind::Remote, Call::Execute, Clock::Wall),
        ("local_tcp", PeerKind::LocalTcp, Call::Execute, samples),
        ("memory", PeerKind::Memory, Call::Execute, samples),
        (
            "memory_bench_call",
            PeerKind::Memory,
            Call::BenchShaped,
            samples,
        ),
    ];
    for (name, kind, call, clock) in cases {
        for conc in [1usize, 256] {
            let h = h.clone();
            g.bench_function(format!("{name}/c{conc}"), move |b| {
                b.iter_custom(|iters| {
                    h.on_shard(move |bench| e2e(bench, kind, call, conc, iters, clock))
                })
            });
        }
    }
    g.finish();
}
