//! The harness: the stub peers, the sessions and connections on each runtime's client
//! shard, the clock, and what every measured path is given (`Bench`).

use std::cell::RefCell;
use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use doppio_driver::bench_internals as internals;
use doppio_driver::bench_internals::{ShardOptions, Shards};
use doppio_driver::connection::{Connection, ConnectionConfig};
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::frame::Frame;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::{Runtime, TcpListener, TcpStream};
use doppio_driver::{PreparedStatement, Session, SessionConfig};
use doppio_stub::{LocalStubHandle, Stub, StubConfig, StubHandle};

/// The `empty` workload's statement (bench/workloads/empty.toml).
pub(crate) const EMPTY: &str = "SELECT key FROM system.local WHERE key = 'local'";
/// A statement whose partition key is bound (the stub lists `bench` with SimpleStrategy and
/// names the first marker the key): routed by token.
pub(crate) const KEYED: &str = "SELECT v FROM bench.kv WHERE k = ?";
/// A statement answered with a Void RESULT.
pub(crate) const INSERT: &str = "INSERT INTO bench.kv (k, v) VALUES (?, ?)";
/// The key and value bound to `KEYED` and `INSERT`.
pub(crate) const KEY: &[u8] = b"key-0000000001";
pub(crate) const VALUE: &[u8] = b"value-0000000001";

/// Where the in-memory stub listens (no socket: any address no real listener has).
pub(crate) const MEMORY_STUB: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 9);
/// Where the submit bench's in-memory sink listens.
pub(crate) const MEMORY_SINK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 10);

pub(crate) fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub(crate) fn stub_config() -> StubConfig {
    StubConfig {
        log_rules: false,
        routed_keyspace: Some("bench".into()),
        ..StubConfig::default()
    }
}

pub(crate) fn session_config(addr: SocketAddr) -> SessionConfig {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.handshake.protocol_version = Some(ProtocolVersion::V4);
    c
}

/// A session connected to one stub, with the `empty` statement prepared.
pub(crate) struct Peer {
    pub(crate) session: Session,
    pub(crate) empty: PreparedStatement,
    /// A stub served on this executor (kept alive with the session).
    pub(crate) _local: Option<LocalStubHandle>,
}

impl Peer {
    pub(crate) async fn connect(addr: SocketAddr, local: Option<LocalStubHandle>) -> Self {
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
    pub(crate) fn connection(&self) -> Connection {
        internals::place_execute(&self.session, &self.empty, &()).expect("a connection")
    }
}

/// Which peer an end-to-end bench talks to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PeerKind {
    Remote,
    LocalTcp,
    Memory,
}

/// How an end-to-end bench calls the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// `session.execute_unpaged(&prepared, &())`.
    Execute,
    /// As the bench's doppio backend: one more async level, every cell read.
    BenchShaped,
}

/// What a sample's time is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clock {
    Wall,
    /// The client thread's CPU time.
    ThreadCpu,
}

impl Clock {
    /// The clock of every bench but `remote_wall`: the client thread's CPU time, unless
    /// `REQUEST_PATH_CLOCK=wall`.
    pub(crate) fn samples() -> Clock {
        match std::env::var("REQUEST_PATH_CLOCK").as_deref() {
            Ok("wall") => Clock::Wall,
            _ => Clock::ThreadCpu,
        }
    }

    pub(crate) fn now(self) -> Duration {
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
pub(crate) struct Bench {
    pub(crate) remote: Peer,
    pub(crate) local_tcp: Peer,
    pub(crate) memory: Peer,
    pub(crate) keyed: PreparedStatement,
    pub(crate) insert: PreparedStatement,
    /// The memory stub's answers to `empty` (one row) and to `insert` (Void), as received.
    pub(crate) one_row: Frame,
    pub(crate) void: Frame,
    /// The submit bench's connection and the other end of it, which the bench reads itself.
    pub(crate) sink: Connection,
    pub(crate) sink_end: TcpStream,
    pub(crate) _sink_listener: TcpListener,
}

impl Bench {
    pub(crate) async fn setup(remote: SocketAddr) -> Self {
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

    pub(crate) fn peer(&self, kind: PeerKind) -> &Peer {
        match kind {
            PeerKind::Remote => &self.remote,
            PeerKind::LocalTcp => &self.local_tcp,
            PeerKind::Memory => &self.memory,
        }
    }
}

#[derive(Default)]
pub(crate) struct ShardState {
    pub(crate) bench: RefCell<Option<Rc<Bench>>>,
}

/// One runtime's client shard and the stub on the other core.
pub(crate) struct Harness {
    pub(crate) runtime: Runtime,
    pub(crate) shards: Shards<ShardState>,
    pub(crate) _remote: StubHandle,
}

impl Harness {
    pub(crate) fn start(runtime: Runtime) -> Self {
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
    pub(crate) fn on_shard<F, Fut>(&self, f: F) -> Duration
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
    pub(crate) fn with_bench<T, F>(&self, f: F) -> T
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
