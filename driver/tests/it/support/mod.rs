//! Helpers shared by the driver's integration tests.
//!
//! Files named `cassandra_*.rs` hold the tests that need a real Cassandra; every such test
//! is gated by [`cassandra_runtime_tests!`] (or, outside that macro, by
//! `doppio_test_support::Node::answering` at its start): it runs when its node answers, and is skipped with a message outside CI
//! or fails in CI when it does not (`doppio-test-support`). Every other file runs with no
//! Cassandra: the stub ([`stub`], [`StubNode`]) or small misbehaving peers
//! ([`ScriptedPeer`], [`misbehaving_peer`]) stand in for nodes. The stub and the scripted
//! peers work on every runtime: over loopback TCP on glommio and io_uring, in memory on the
//! test's own executor on the simulated one (which has no sockets, and virtual time).

// The tracing test binary compiles this module too and uses only some of its helpers.
#![allow(dead_code)]

pub(crate) mod pki;

use std::net::SocketAddr;
use std::time::Duration;

use doppio_driver::rt::Runtime;

use doppio_test_support::{CASSANDRA, CASSANDRA_CLUSTER};

/// The local Cassandra the tests use: `DOPPIO_CASSANDRA`, default 127.0.0.1:9042
/// (`scripts/test.sh` starts one with `scripts/cassandra.sh`).
pub(crate) fn cassandra() -> SocketAddr {
    CASSANDRA.addr()
}

/// A stub server (perf/stub) for a test on `runtime`, with these TOML fault `rules` (not
/// logged) and result `shape`: a node for the tests that need no Cassandra (see
/// [`StubNode`]). Stops when dropped.
pub(crate) fn stub(runtime: Runtime, rules: &str, shape: doppio_stub::Shape) -> StubNode {
    let rules = doppio_stub::Rules::parse(rules).unwrap_or_else(|e| panic!("stub rules: {e}"));
    StubNode::start(
        runtime,
        doppio_stub::StubConfig {
            shape,
            rules,
            log_rules: false,
            ..doppio_stub::StubConfig::default()
        },
    )
}

/// Where a stub node listens on the simulated runtime (in memory: no socket), unless its
/// configuration names another address; a cluster's other nodes follow it (10.0.0.2, ...).
/// A fixed address, so that a run replays the same way.
pub(crate) const SIM_NODE: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::new(10, 0, 0, 1),
    9042,
));

/// The delay of each send on the simulated runtime's in-memory network, drawn from the seed
/// in this range (each direction; bytes keep their order). Virtual time stands still while
/// a task is ready: without a delay, a fiber looping on requests answered at once would
/// never let a timer fire, where on a real network every round trip takes time.
pub(crate) const SIM_NET_DELAY: (Duration, Duration) =
    (Duration::from_micros(50), Duration::from_micros(250));

/// The executor a test of `runtime` runs on: unpinned (tests share the cores); on the
/// simulated runtime, seed 0 (a run replays exactly) and the network delay
/// [`SIM_NET_DELAY`].
pub(crate) fn executor_spec(runtime: Runtime, name: &str) -> doppio_driver::rt::ExecutorSpec {
    let mut spec = doppio_driver::rt::ExecutorSpec::new(runtime, name);
    spec.sim.net_delay = SIM_NET_DELAY;
    spec
}

/// A stub node (perf/stub) for a test body written once for every runtime. On glommio and
/// io_uring the stub runs on threads of its own over loopback TCP ([`doppio_stub::Stub::start`],
/// on the test's runtime); on the simulated runtime, which has no sockets and whose time is
/// virtual, it is served in memory ([`doppio_stub::Stub::in_memory`], at [`SIM_NODE`] unless
/// the configuration's `listen` says otherwise) by the test's own executor, beside the
/// client: the test runs its body with [`StubNode::run`] (or wraps it with
/// [`StubNode::beside`] for an executor of its own). Its addresses and counters (`Deref` to
/// the [`doppio_stub::StubHandle`]) read the same on every runtime, from the test's thread,
/// during the run and after. Stops when dropped.
pub(crate) struct StubNode {
    runtime: Runtime,
    handle: doppio_stub::StubHandle,
    /// On the simulated runtime: the stub each run serves on its executor.
    memory: Option<doppio_stub::MemoryStub>,
}

impl StubNode {
    /// A stub of `config` (its `runtime` is `runtime`'s) for a test on `runtime`.
    pub(crate) fn start(runtime: Runtime, config: doppio_stub::StubConfig) -> Self {
        let mut config = doppio_stub::StubConfig { runtime, ..config };
        if runtime == Runtime::Sim {
            if config.listen == doppio_stub::StubConfig::default().listen {
                config.listen = SIM_NODE;
            }
            let (handle, memory) = doppio_stub::Stub::in_memory(config)
                .unwrap_or_else(|e| panic!("make the stub in memory: {e}"));
            return Self {
                runtime,
                handle,
                memory: Some(memory),
            };
        }
        let handle =
            doppio_stub::Stub::start(config).unwrap_or_else(|e| panic!("start the stub: {e}"));
        Self {
            runtime,
            handle,
            memory: None,
        }
    }

    /// Runs `f` to completion on a fresh executor of the node's runtime, as [`on_runtime`]
    /// does; on the simulated runtime the stub is served on that executor first.
    pub(crate) fn run<T, F, Fut>(&self, name: &str, f: F) -> T
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = T> + 'static,
    {
        on_runtime(self.runtime, name, self.beside(f))
    }

    /// `f` as the main task of an executor of the test's making: on the simulated runtime
    /// it first serves the stub on that executor (as the peer: `doppio_driver::rt::sim::as_peer`),
    /// elsewhere it is `f`.
    pub(crate) fn beside<T, F, Fut>(
        &self,
        f: F,
    ) -> impl FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = T>>> + Send + 'static
    where
        T: 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = T> + 'static,
    {
        let memory = self.memory.clone();
        move || {
            if let Some(stub) = memory {
                doppio_driver::rt::sim::as_peer(|| stub.serve())
                    .unwrap_or_else(|e| panic!("serve the stub in memory: {e}"));
            }
            Box::pin(f())
        }
    }

    /// On the simulated runtime, the stub to serve in memory
    /// ([`doppio_stub::MemoryStub::serve`]) on an executor where the test serves it itself
    /// (a node that appears during a run); `None` elsewhere (it serves already).
    pub(crate) fn memory(&self) -> Option<doppio_stub::MemoryStub> {
        self.memory.clone()
    }

    /// Stops it (every node, and on glommio and io_uring its threads).
    pub(crate) fn stop(self) {
        self.handle.stop();
    }
}

impl std::ops::Deref for StubNode {
    type Target = doppio_stub::StubHandle;

    fn deref(&self) -> &doppio_stub::StubHandle {
        &self.handle
    }
}

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)` (and one on the
/// simulated runtime for each name after `and_sim:`), each first taking its file's turn
/// (`doppio_test_support::file_turn`): `doppio_rt::runtime_tests!` with that guard.
#[allow(unused_macros)] // a binary of Cassandra tests only may not use it
macro_rules! runtime_tests {
    ($($tests:tt)*) => {
        doppio_driver::rt::runtime_tests!(guard: doppio_test_support::file_turn; $($tests)*);
    };
}
#[allow(unused_imports)] // a binary of Cassandra tests only may not use it
pub(crate) use runtime_tests;

/// [`runtime_tests!`] for tests that need the Cassandra `node` (the name of a
/// `doppio_test_support::Node`: `CASSANDRA`, `CASSANDRA_AUTH`, `CASSANDRA_CLUSTER`): one `#[test]`
/// per runtime for each named `fn name(runtime: Runtime)`, which runs it if the node
/// answers, and otherwise skips (outside CI, with a message) or fails (in CI); each first
/// takes its file's turn (`doppio_test_support::file_turn`).
#[allow(unused_macros)] // binaries without Cassandra tests
macro_rules! cassandra_runtime_tests {
    ($node:ident; $($name:ident),* $(,)?) => {
        crate::support::cassandra_runtime_tests!(@on glommio, Glommio, $node; $($name),*);
        crate::support::cassandra_runtime_tests!(@on uring, Uring, $node; $($name),*);
    };
    (@on $module:ident, $runtime:ident, $node:ident; $($name:ident),*) => {
        mod $module {
            $(#[test]
            fn $name() {
                let _turn = doppio_test_support::file_turn(module_path!());
                if doppio_test_support::$node.answering().is_some() {
                    super::$name(doppio_driver::rt::Runtime::$runtime)
                }
            })*
        }
    };
}
#[allow(unused_imports)] // binaries without Cassandra tests
pub(crate) use cassandra_runtime_tests;

/// Runs `f` to completion on a fresh executor of `runtime` ([`executor_spec`]: not pinned,
/// tests share the cores); a panic inside fails the calling test.
pub(crate) fn on_runtime<T, F, Fut>(runtime: Runtime, name: &str, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    let handle =
        doppio_driver::rt::spawn_executor(executor_spec(runtime, &format!("{name}-{runtime}")), f)
            .unwrap_or_else(|e| panic!("[{name}] {e}"));
    match handle.join() {
        Ok(out) => out,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A keyspace name of the calling test's own (tests run in parallel and share the node).
pub(crate) fn keyspace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("doppio_{test}_{}_{nanos}", std::process::id())
}

/// `CREATE KEYSPACE` with SimpleStrategy and one replica (the test node is alone).
pub(crate) fn create_keyspace_cql(ks: &str) -> String {
    format!(
        "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
    )
}

/// A session to `node` at consistency ONE with the given request timeout and lz4 choice.
pub(crate) async fn session_to(
    node: SocketAddr,
    compression: bool,
    timeout: std::time::Duration,
) -> doppio_driver::Session {
    let mut c = doppio_driver::SessionConfig::new(node);
    c.consistency = doppio_driver::proto::consistency::Consistency::One;
    c.connection.request_timeout = timeout;
    c.handshake = {
        let mut cfg = doppio_driver::config::HandshakeConfig::default();
        cfg.compression = compression;
        cfg
    };
    doppio_driver::Session::connect(c)
        .await
        .expect("connect to Cassandra")
}

/// The three-node test cluster (`scripts/cassandra-cluster.sh`): `DOPPIO_CLUSTER`, default
/// 127.0.0.21:9042 (its other nodes are .22 and .23).
pub(crate) fn cluster() -> SocketAddr {
    CASSANDRA_CLUSTER.addr()
}

/// Held by a test that stops, kills or freezes nodes of the three-node cluster: its two
/// runtimes' variants (and any other such test of the binary) take turns, since one would
/// otherwise find the nodes the other took away.
pub(crate) fn cluster_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `scripts/cassandra-cluster.sh ARGS` and panics with its output if it fails.
pub(crate) fn cluster_script(args: &[&str]) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("cassandra-cluster.sh");
    let out = std::process::Command::new(&script)
        .args(args)
        .output()
        .expect("run scripts/cassandra-cluster.sh");
    assert!(
        out.status.success(),
        "cassandra-cluster.sh {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The owner of `token` on a ring of `(token, node)` pairs: the node of the first ring
/// token at or after it, wrapping around (written apart from the driver's own ring, to
/// check it).
pub(crate) fn ring_owner(ring: &[(i64, SocketAddr)], token: i64) -> SocketAddr {
    let mut sorted = ring.to_vec();
    sorted.sort();
    sorted
        .iter()
        .find(|(t, _)| *t >= token)
        .unwrap_or(&sorted[0])
        .1
}

/// Polls `check` every 50 ms until it is true or `timeout` passes (on the executor's clock:
/// virtual on the simulated runtime); returns how long it took.
pub(crate) async fn eventually(
    timeout: std::time::Duration,
    mut check: impl FnMut() -> bool,
) -> Option<std::time::Duration> {
    let start = doppio_driver::rt::now();
    while doppio_driver::rt::now() - start < timeout {
        if check() {
            return Some(doppio_driver::rt::now() - start);
        }
        doppio_driver::rt::sleep(std::time::Duration::from_millis(50)).await;
    }
    None
}

/// An OPTIONS request frame on `stream`, written into `buf` (a request body for
/// `Connection::request` that any node answers).
pub(crate) fn options(
    buf: &mut bytes::BytesMut,
    stream: i16,
) -> Result<(), doppio_driver::proto::ProtoError> {
    use doppio_driver::proto::frame::Flags;
    use doppio_driver::proto::request::{encode_request, Options};
    encode_request(buf, stream, Flags::NONE, &Options)
}

/// A peer that accepts one connection and then does `behave` with it, on a plain thread.
pub(crate) fn misbehaving_peer(behave: fn(std::net::TcpStream)) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            behave(stream);
        }
    });
    addr
}

/// One step of a scripted misbehaving peer ([`ScriptedPeer`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum PeerStep {
    /// Read and never answer, until the client goes away.
    Drain,
    /// Take the next `n` bytes (or fewer, if the client goes away first).
    Read(usize),
    /// Write these bytes.
    Write(&'static [u8]),
    /// Wait this long (on the executor's clock on the simulated runtime).
    Sleep(Duration),
    /// Answer every v4 frame with READY on its stream, until the client goes away.
    ReadyToEverything,
}

/// A small misbehaving peer that accepts one connection and plays a script of
/// [`PeerStep`]s on it, then hangs up: on glommio and io_uring a plain thread with a
/// loopback `std::net` socket ([`misbehaving_peer`]); on the simulated runtime a task of
/// the test's own executor on an in-memory listener at [`SIM_NODE`], playing the same
/// script in virtual time. As with [`StubNode`], the test runs its body with
/// [`ScriptedPeer::run`].
pub(crate) struct ScriptedPeer {
    runtime: Runtime,
    addr: SocketAddr,
    script: Vec<PeerStep>,
}

impl ScriptedPeer {
    /// A peer playing `script` for a test on `runtime`.
    pub(crate) fn start(runtime: Runtime, script: &[PeerStep]) -> Self {
        let script = script.to_vec();
        if runtime == Runtime::Sim {
            return Self {
                runtime,
                addr: SIM_NODE,
                script,
            };
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local addr");
        let steps = script.clone();
        std::thread::spawn(move || {
            if let Ok((stream, _)) = listener.accept() {
                play_blocking(stream, &steps);
            }
        });
        Self {
            runtime,
            addr,
            script,
        }
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Runs `f` to completion on a fresh executor of the test's runtime, as [`on_runtime`]
    /// does; on the simulated runtime the peer listens on that executor first.
    pub(crate) fn run<T, F, Fut>(&self, name: &str, f: F) -> T
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = T> + 'static,
    {
        let (sim, addr, script) = (self.runtime == Runtime::Sim, self.addr, self.script.clone());
        on_runtime(self.runtime, name, move || {
            if sim {
                let listener = doppio_driver::rt::TcpListener::bind_memory(addr)
                    .expect("an in-memory listener");
                doppio_driver::rt::sim::as_peer(|| {
                    doppio_driver::rt::spawn_local(async move {
                        if let Ok((stream, _)) = listener.accept().await {
                            play(stream, &script).await;
                        }
                    })
                    .detach()
                });
            }
            f()
        })
    }
}

/// Plays `script` on a loopback socket, blocking (a peer's own thread).
fn play_blocking(mut s: std::net::TcpStream, script: &[PeerStep]) {
    use std::io::{Read, Write};
    for step in script {
        match *step {
            PeerStep::Drain => {
                let mut sink = [0u8; 1024];
                while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
            }
            PeerStep::Read(n) => {
                let _ = s.read_exact(&mut vec![0u8; n]);
            }
            PeerStep::Write(bytes) => {
                let _ = s.write_all(bytes);
            }
            PeerStep::Sleep(d) => std::thread::sleep(d),
            PeerStep::ReadyToEverything => {
                let mut header = [0u8; 9];
                while s.read_exact(&mut header).is_ok() {
                    let len =
                        u32::from_be_bytes([header[5], header[6], header[7], header[8]]) as usize;
                    let mut body = vec![0u8; len];
                    if s.read_exact(&mut body).is_err() {
                        return;
                    }
                    let ready = [0x84, 0, header[2], header[3], 0x02, 0, 0, 0, 0];
                    if s.write_all(&ready).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// Plays `script` on a stream of the current executor (the simulated runtime's in-memory
/// one), as [`play_blocking`] does on a socket.
async fn play(s: doppio_driver::rt::TcpStream, script: &[PeerStep]) {
    let mut buf = bytes::BytesMut::new();
    // Until `buf` holds `n` bytes; false if the client went away first.
    async fn fill(s: &doppio_driver::rt::TcpStream, buf: &mut bytes::BytesMut, n: usize) -> bool {
        while buf.len() < n {
            match std::future::poll_fn(|cx| s.poll_recv(cx, buf)).await {
                Ok(0) | Err(_) => return false,
                Ok(_) => {}
            }
        }
        true
    }
    for step in script {
        match *step {
            PeerStep::Drain => {
                while fill(&s, &mut buf, 1).await {
                    buf.clear();
                }
            }
            PeerStep::Read(n) => {
                fill(&s, &mut buf, n).await;
                let n = n.min(buf.len());
                let _ = buf.split_to(n);
            }
            PeerStep::Write(bytes) => {
                let _ = s.send(bytes::BytesMut::from(bytes)).await;
            }
            PeerStep::Sleep(d) => doppio_driver::rt::sleep(d).await,
            PeerStep::ReadyToEverything => loop {
                if !fill(&s, &mut buf, 9).await {
                    return;
                }
                let len = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) as usize;
                if !fill(&s, &mut buf, 9 + len).await {
                    return;
                }
                let header = buf.split_to(9 + len);
                let ready = [0x84, 0, header[2], header[3], 0x02, 0, 0, 0, 0];
                if s.send(bytes::BytesMut::from(&ready[..])).await.0.is_err() {
                    return;
                }
            },
        }
    }
    s.shutdown();
}

/// The stub playing `nodes` emulated ScyllaDB nodes of `shards` shards each (replication
/// factor `rf`, 8 tokens per node) with keyspace `ks` routed, on `runtime`: the base the
/// cluster tests add their own settings to (`..scylla_cluster(...)`).
pub(crate) fn scylla_cluster(
    runtime: Runtime,
    nodes: u8,
    shards: u16,
    rf: u8,
) -> doppio_stub::StubConfig {
    let nonzero = |n: u16| std::num::NonZeroU16::new(n).expect("not zero");
    let nonzero8 = |n: u8| std::num::NonZeroU8::new(n).expect("not zero");
    doppio_stub::StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some("ks".into()),
        scylla: Some(doppio_stub::ScyllaShards::new(
            nonzero(shards),
            [127, 0, 0, 1].into(),
        )),
        cluster: Some(doppio_stub::Cluster {
            nodes: nonzero8(nodes),
            replication_factor: nonzero8(rf),
            vnodes: nonzero(8),
        }),
        ..doppio_stub::StubConfig::default()
    }
}

/// Waits (bounded: 30 s) until `s` has `nodes` nodes, each with at least `per_node` open
/// connections: the pools grow to one connection per ScyllaDB shard once their first
/// connection reported the shards, in the background (a wait, not a timing assertion).
pub(crate) async fn wait_for_connections(
    s: &doppio_driver::Session,
    nodes: usize,
    per_node: usize,
) {
    let view = s.view();
    let deadline = doppio_driver::rt::now() + std::time::Duration::from_secs(30);
    loop {
        let open: Vec<usize> = (0..view.len() as u16)
            .map(|i| view.node(i).map_or(0, |n| n.open_connections()))
            .collect();
        if open.len() == nodes && open.iter().all(|&n| n >= per_node) {
            return;
        }
        assert!(
            doppio_driver::rt::now() < deadline,
            "connections per node: {open:?}"
        );
        doppio_driver::rt::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// The next random key of 1 to 8 bytes (xorshift of `x`).
pub(crate) fn next_key(x: &mut u64) -> Vec<u8> {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    x.to_be_bytes()[..(1 + (*x % 8) as usize)].to_vec()
}
