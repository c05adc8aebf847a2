//! The request path of `Session::execute`, end to end and stage by stage: the instrument
//! that work on a cheaper request path (issue 29) is measured against.
//!
//! ```sh
//! cargo bench -p doppio-driver --bench request_path                 # everything (~8 min)
//! cargo bench -p doppio-driver --bench request_path -- --quick      # a quick pass (~1 min)
//! cargo bench -p doppio-driver --bench request_path -- e2e/uring    # a filter, as criterion takes it
//! ```
//!
//! Everything runs on one client shard (a `doppio_driver::bench_internals::Shards` executor pinned to core
//! `REQUEST_PATH_CLIENT_CORE`, default 0), once per runtime (`REQUEST_PATH_RUNTIMES`, default
//! `glommio,uring`); criterion's `iter_custom` sends each sample there as a job and the
//! shard times it itself. The statement is the `empty` workload's (`SELECT key FROM
//! system.local WHERE key = 'local'`: no values, no token; the answer is one row of one text
//! cell without metadata), prepared, executed with the session's defaults in protocol v4
//! (what the loopback study's runs with scylla-rust-driver speak).
//!
//! Time is the client thread's CPU time (user and system, `CLOCK_THREAD_CPUTIME_ID`), not
//! wall time, for every bench but `remote_wall`: the machine has two cores that other work
//! shares, and CPU time does not count the time the thread was preempted
//! (`REQUEST_PATH_CLOCK=wall` measures wall time everywhere instead).
//!
//! End to end (`e2e/<runtime>/<peer>/c<C>`): ns per request, `C` requests in flight as `C`
//! fibers (one local task each, as the bench's doppio backend runs them) sharing a count of
//! requests; time / requests. Peers, each the stub server (perf/stub) answering as it does
//! in the loopback study:
//! - `remote`: a stub on its own executor pinned to the other core
//!   (`REQUEST_PATH_STUB_CORE`, default 1; its runtime `REQUEST_PATH_STUB_RUNTIME`, default
//!   uring), over loopback TCP: the loopback study's setting; the client's CPU per request
//!   (what the loopback study calls client CPU per request).
//! - `remote_wall`: the same in wall time (latency at C = 1, throughput at C = 256).
//! - `local_tcp`: the stub served by tasks on the client's own executor, over loopback TCP:
//!   no second core, no cross-core wake-up, but every kernel round trip (both sides' CPU).
//! - `memory`: the same on an in-memory connection (`doppio_rt::memory`): no socket, no
//!   kernel; what is left is the driver, the runtime's task machinery and the stub's own
//!   work (`peer/*` measures the latter alone, to subtract).
//! - `memory_bench_call`: `memory` as the bench's doppio backend calls it: through one more
//!   async function that reads every cell of the page.
//!
//! Stages (each calls the driver's own code through `doppio_driver::bench_internals`; the `stage/*`
//! ones do not involve the executor and run once, on the first runtime's shard):
//! - `stage/encode/*`: the EXECUTE from its template into the write buffer.
//! - `stage/placement/*`: token (when the partition key is bound), replicas, the policy's
//!   pick and the node's connection.
//! - `stage/in_flight`: take a stream id, set its deadline, park on it (the task's real
//!   waker stored), complete it with an answer, poll the answer out, id freed.
//! - `stage/decode/*`: `ResponseFrame::decode` and `result_of` into a `QueryResult`.
//! - `<runtime>/wake`: one waker round trip through the executor: a task wakes a parked one,
//!   which is polled and parks again. Per wake-up.
//! - `<runtime>/submit/<n>`: `n` frames queued as a request queues its frame, the flusher
//!   woken, its swap and the runtime's send (in memory: no kernel), until the peer has the
//!   bytes. Per frame; includes one wake-up of the waiting bench task per batch.
//! - `<runtime>/connection/c<C>`: `Connection::request` alone against the in-memory stub:
//!   id, encode, flush, the stub's answer, the reader, the wake-up; no session level, no
//!   decode.
//! - `<runtime>/peer/c<C>`: the in-memory stub alone, driven by a raw client that writes
//!   pre-encoded EXECUTEs and counts the answers' bytes: what the stub adds to `memory`.
//!
//! The sizes of `QueryResult` and of the request's futures are printed first.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion};
use doppio_driver::bench_internals as internals;
use doppio_driver::bench_internals::{ShardOptions, Shards};
use doppio_driver::connection::{Connection, ConnectionConfig};
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::deserialize::DeserializeValue;
use doppio_driver::proto::frame::Frame;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::{Runtime, TcpListener, TcpStream};
use doppio_driver::{Error, PagingState, PreparedStatement, QueryResult, Session, SessionConfig};
use doppio_stub::{LocalStubHandle, Stub, StubConfig, StubHandle};

/// The `empty` workload's statement (bench/workloads/empty.toml).
const EMPTY: &str = "SELECT key FROM system.local WHERE key = 'local'";
/// A statement whose partition key is bound (the stub lists `bench` with SimpleStrategy and
/// names the first marker the key): routed by token.
const KEYED: &str = "SELECT v FROM bench.kv WHERE k = ?";
/// A statement answered with a Void RESULT.
const INSERT: &str = "INSERT INTO bench.kv (k, v) VALUES (?, ?)";
/// The key and value bound to `KEYED` and `INSERT`.
const KEY: &[u8] = b"key-0000000001";
const VALUE: &[u8] = b"value-0000000001";

/// Where the in-memory stub listens (no socket: any address no real listener has).
const MEMORY_STUB: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 9);
/// Where the submit bench's in-memory sink listens.
const MEMORY_SINK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 10);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stub_config() -> StubConfig {
    StubConfig {
        log_rules: false,
        routed_keyspace: Some("bench".into()),
        ..StubConfig::default()
    }
}

fn session_config(addr: SocketAddr) -> SessionConfig {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.handshake.protocol_version = Some(ProtocolVersion::V4);
    c
}

/// A session connected to one stub, with the `empty` statement prepared.
struct Peer {
    session: Session,
    empty: PreparedStatement,
    /// A stub served on this executor (kept alive with the session).
    _local: Option<LocalStubHandle>,
}

impl Peer {
    async fn connect(addr: SocketAddr, local: Option<LocalStubHandle>) -> Self {
        let session = Session::connect(session_config(addr))
            .await
            .unwrap_or_else(|e| panic!("connect to the stub at {addr}: {e}"));
        let empty = session
            .prepare(EMPTY)
            .await
            .expect("prepare the empty statement");
        Self {
            session,
            empty,
            _local: local,
        }
    }

    /// The connection an EXECUTE of `empty` goes to.
    fn connection(&self) -> Connection {
        internals::place_execute(&self.session, &self.empty, &()).expect("a connection")
    }
}

/// Which peer an end-to-end bench talks to.
#[derive(Debug, Clone, Copy)]
enum PeerKind {
    Remote,
    LocalTcp,
    Memory,
}

/// How an end-to-end bench calls the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// `session.execute_unpaged(&prepared, &())`.
    Execute,
    /// As the bench's doppio backend: one more async level, every cell read.
    BenchShaped,
}

/// What a sample's time is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    Wall,
    /// The client thread's CPU time.
    ThreadCpu,
}

impl Clock {
    /// The clock of every bench but `remote_wall`: the client thread's CPU time, unless
    /// `REQUEST_PATH_CLOCK=wall`.
    fn samples() -> Clock {
        match std::env::var("REQUEST_PATH_CLOCK").as_deref() {
            Ok("wall") => Clock::Wall,
            _ => Clock::ThreadCpu,
        }
    }

    fn now(self) -> Duration {
        match self {
            Clock::Wall => {
                thread_local! {
                    static ORIGIN: Instant = Instant::now();
                }
                ORIGIN.with(|o| o.elapsed())
            }
            Clock::ThreadCpu => internals::thread_cpu_time(),
        }
    }
}

/// Everything the benches use on the client shard, set up once per runtime.
struct Bench {
    remote: Peer,
    local_tcp: Peer,
    memory: Peer,
    keyed: PreparedStatement,
    insert: PreparedStatement,
    /// The memory stub's answers to `empty` (one row) and to `insert` (Void), as received.
    one_row: Frame,
    void: Frame,
    /// The submit bench's connection and the other end of it, which the bench reads itself.
    sink: Connection,
    sink_end: TcpStream,
    _sink_listener: TcpListener,
}

impl Bench {
    async fn setup(remote: SocketAddr) -> Self {
        let memory_stub = Stub::serve_local(
            TcpListener::bind_memory(MEMORY_STUB).expect("in-memory listener"),
            &stub_config(),
        )
        .expect("serve the in-memory stub");
        let memory = Peer::connect(MEMORY_STUB, Some(memory_stub)).await;
        let tcp = TcpListener::bind("127.0.0.1:0".parse().expect("address"), 64 * 1024)
            .expect("bind a loopback listener");
        let local = Stub::serve_local(tcp, &stub_config()).expect("serve the local stub");
        let local_tcp = Peer::connect(local.addr(), Some(local)).await;
        let remote = Peer::connect(remote, None).await;
        let keyed = memory.session.prepare(KEYED).await.expect("prepare keyed");
        let insert = memory
            .session
            .prepare(INSERT)
            .await
            .expect("prepare insert");
        let conn = memory.connection();
        let one_row = conn
            .request(None, |buf, stream| {
                internals::encode_execute(&memory.session, &memory.empty, &(), buf, stream)
            })
            .await
            .expect("the one-row answer");
        let void = conn
            .request(None, |buf, stream| {
                internals::encode_execute(&memory.session, &insert, &(KEY, VALUE), buf, stream)
            })
            .await
            .expect("the void answer");
        // What the stages are measured on is what the benches say it is.
        let rows = internals::decode_execute(&memory.session, &conn, &one_row, &memory.empty)
            .expect("one row");
        assert_eq!(
            rows.rows_count(),
            1,
            "the empty statement's answer has one row"
        );
        let none = internals::decode_execute(&memory.session, &conn, &void, &insert).expect("void");
        assert!(none.rows().is_none(), "the insert's answer is Void");
        assert_eq!(
            memory.session.replicas_of(&keyed, &(KEY,)),
            vec![MEMORY_STUB],
            "the keyed statement is routed by token to its replica"
        );
        assert!(memory.session.token_of(&memory.empty, &()).is_none());
        let sink_listener = TcpListener::bind_memory(MEMORY_SINK).expect("sink listener");
        let sink = Connection::connect(MEMORY_SINK, {
            let mut cfg = ConnectionConfig::default();
            // Nothing ever answers the sink: no probe may close it mid-run.
            cfg.keepalive = None;
            cfg
        })
        .await
        .expect("connect the sink");
        let (sink_end, _) = sink_listener.accept().await.expect("accept the sink");
        Self {
            remote,
            local_tcp,
            memory,
            keyed,
            insert,
            one_row,
            void,
            sink,
            sink_end,
            _sink_listener: sink_listener,
        }
    }

    fn peer(&self, kind: PeerKind) -> &Peer {
        match kind {
            PeerKind::Remote => &self.remote,
            PeerKind::LocalTcp => &self.local_tcp,
            PeerKind::Memory => &self.memory,
        }
    }
}

#[derive(Default)]
struct ShardState {
    bench: RefCell<Option<Rc<Bench>>>,
}

/// One runtime's client shard and the stub on the other core.
struct Harness {
    runtime: Runtime,
    shards: Shards<ShardState>,
    _remote: StubHandle,
}

impl Harness {
    fn start(runtime: Runtime) -> Self {
        let client_core = env_or("REQUEST_PATH_CLIENT_CORE", 0usize);
        let stub_core = env_or("REQUEST_PATH_STUB_CORE", 1usize);
        let stub_runtime = env_or("REQUEST_PATH_STUB_RUNTIME", Runtime::Uring);
        let remote = Stub::start(StubConfig {
            cores: vec![stub_core],
            pin: true,
            runtime: stub_runtime,
            ..stub_config()
        })
        .expect("start the stub on its core");
        let shards = Shards::start_with(
            &ShardOptions {
                runtime,
                ..ShardOptions::new(&[client_core], true, Duration::from_secs(1))
            },
            |_| ShardState::default(),
        )
        .expect("start the client shard");
        let addr = remote.addr();
        shards
            .run_on_shards(move |state| async move {
                let bench = Bench::setup(addr).await;
                *state.bench.borrow_mut() = Some(Rc::new(bench));
            })
            .expect("set up the client shard");
        Self {
            runtime,
            shards,
            _remote: remote,
        }
    }

    /// Runs `f` on the client shard and returns the time it reports.
    fn on_shard<F, Fut>(&self, f: F) -> Duration
    where
        F: Fn(Rc<Bench>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Duration> + 'static,
    {
        let out = self
            .shards
            .run_on_shards(move |state| {
                let bench = state.bench.borrow().clone().expect("the shard is set up");
                f(bench)
            })
            .expect("the client shard runs the sample");
        out[0]
    }

    /// Runs `f` on the shard, for what is not timed.
    fn with_bench<T, F>(&self, f: F) -> T
    where
        T: Send + 'static,
        F: Fn(&Bench) -> T + Send + Sync + 'static,
    {
        let mut out = self
            .shards
            .run_on_shards(move |state| {
                let bench = state.bench.borrow().clone().expect("the shard is set up");
                let t = f(&bench);
                async move { t }
            })
            .expect("the client shard runs the job");
        out.remove(0)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.shards
            .run_on_shards(|state| {
                if let Some(b) = state.bench.borrow_mut().take() {
                    for p in [&b.remote, &b.local_tcp, &b.memory] {
                        p.session.close("the bench is done");
                    }
                    b.sink.close("the bench is done");
                }
                async {}
            })
            .ok();
        self.shards.shutdown();
    }
}

/// Consumes a page as the bench's doppio backend does (bench/src/backend/doppio/rows.rs):
/// every cell of every row decoded into a value.
fn consume(page: &QueryResult) -> u64 {
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
async fn bench_shaped(session: &Session, prepared: &PreparedStatement) -> Result<u64, Error> {
    let start = PagingState::start();
    let page = session.execute_single_page(prepared, &(), &start).await?;
    Ok(consume(&page))
}

/// `requests` requests through `c` fibers sharing a count; the time `clock` reports for all
/// of them (tasks spawned before the clock starts: they run once the caller awaits them).
async fn e2e(
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
async fn connection_requests(bench: Rc<Bench>, c: usize, requests: u64, clock: Clock) -> Duration {
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
async fn stub_alone(bench: Rc<Bench>, c: usize, requests: u64, clock: Clock) -> Duration {
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
async fn wake_round_trips(round_trips: u64, clock: Clock) -> Duration {
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
async fn submit(bench: Rc<Bench>, batch: usize, frames: u64, clock: Clock) -> Duration {
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
fn time_sync(iters: u64, mut f: impl FnMut()) -> Duration {
    let clock = Clock::samples();
    let start = clock.now();
    for _ in 0..iters {
        f();
    }
    clock.now().saturating_sub(start)
}

fn print_sizes(h: &Harness) {
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

fn stages(c: &mut Criterion, h: &Rc<Harness>) {
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

fn per_runtime(c: &mut Criterion, h: &Rc<Harness>) {
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

fn request_path(c: &mut Criterion) {
    let runtimes: Vec<Runtime> = std::env::var("REQUEST_PATH_RUNTIMES")
        .unwrap_or_else(|_| "glommio,uring".into())
        .split(',')
        .map(|r| {
            r.parse()
                .unwrap_or_else(|e| panic!("REQUEST_PATH_RUNTIMES: {e}"))
        })
        .collect();
    let mut sizes_printed = false;
    for (i, runtime) in runtimes.into_iter().enumerate() {
        let h = Rc::new(Harness::start(runtime));
        if !sizes_printed {
            print_sizes(&h);
            sizes_printed = true;
        }
        // The stages that do not involve the executor run once, on the first runtime's shard.
        if i == 0 {
            stages(c, &h);
        }
        per_runtime(c, &h);
    }
}

criterion_group!(benches, request_path);
criterion_main!(benches);
