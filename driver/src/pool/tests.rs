//! The pool's tests against a stub node, on every runtime.

use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use doppio_proto::frame::Flags;
use doppio_proto::request::{encode_request, Options};

use super::*;
use crate::connection::{Connection, ConnectionConfig, ConnectionError};
use doppio_rt::Runtime;

/// TCP connections with no handshake (OPTIONS needs none).
fn plain_connections() -> ConnectFn {
    Rc::new(|addr, _| {
        Box::pin(async move { Connection::connect(addr, ConnectionConfig::default()).await })
    })
}

fn on<T: Send + 'static, Fut: Future<Output = T> + 'static>(
    runtime: Runtime,
    f: impl FnOnce() -> Fut + Send + 'static,
) -> T {
    doppio_rt::run_on(runtime, "pool-test", f).expect("the runtime starts")
}

/// A stub node for a test on any runtime: on its own threads over loopback TCP, or on
/// the simulated runtime (no sockets, virtual time) in memory, served by the test's own
/// executor ([`StubNode::on`]).
struct StubNode {
    handle: doppio_stub::StubHandle,
    memory: Option<doppio_stub::MemoryStub>,
    runtime: Runtime,
}

impl StubNode {
    fn start(runtime: Runtime, config: doppio_stub::StubConfig) -> Self {
        let config = doppio_stub::StubConfig { runtime, ..config };
        let (handle, memory) = if runtime == Runtime::Sim {
            let config = doppio_stub::StubConfig {
                listen: SocketAddr::from(([10, 0, 0, 1], 9042)),
                ..config
            };
            let (handle, memory) = doppio_stub::Stub::in_memory(config).expect("the stub is made");
            (handle, Some(memory))
        } else {
            (
                doppio_stub::Stub::start(config).expect("the stub starts"),
                None,
            )
        };
        Self {
            handle,
            memory,
            runtime,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.handle.addr()
    }

    /// Runs `f` on a fresh executor of the test's runtime, the stub served on it first
    /// on the simulated runtime.
    fn on<T: Send + 'static, Fut: Future<Output = T> + 'static>(
        &self,
        f: impl FnOnce() -> Fut + Send + 'static,
    ) -> T {
        let memory = self.memory.clone();
        on(self.runtime, move || {
            if let Some(stub) = memory {
                doppio_rt::sim::as_peer(|| stub.serve()).expect("the stub serves");
            }
            f()
        })
    }

    fn stop(self) {
        self.handle.stop();
    }
}

fn pool_replaces_a_closed_connection_in_the_background(runtime: Runtime) {
    let stub = StubNode::start(runtime, doppio_stub::StubConfig::default());
    let node = stub.addr();
    stub.on(move || async move {
        let pool = NodePool::start(node, 2, plain_connections(), Backoff::default());
        pool.wait_ready(Duration::from_secs(10))
            .await
            .expect("a connection opens");
        while pool.open_count() < 2 {
            doppio_rt::sleep(Duration::from_millis(5)).await;
        }
        let victim = pool.pick().expect("an open connection");
        victim.close("test closes it");
        // The other connection still serves requests while the slot refills.
        let conn = pool.pick().expect("the survivor");
        assert!(conn.closed().is_none());
        conn.request(None, |buf, stream| {
            encode_request(buf, stream, Flags::NONE, &Options)
        })
        .await
        .expect("answered");
        let start = doppio_rt::now();
        while pool.open_count() < 2 {
            assert!(
                (doppio_rt::now() - start) < Duration::from_secs(10),
                "slot not refilled: {pool:?}"
            );
            doppio_rt::sleep(Duration::from_millis(5)).await;
        }
        let stats = pool.stats();
        assert_eq!(stats.opened, 3);
        assert_eq!(stats.closed, 1);
        pool.close("test over");
        assert_eq!(pool.open_count(), 0);
    });
    stub.stop();
}

fn pool_to_a_dead_node_backs_off_and_reports_why(runtime: Runtime) {
    // A port that was just free: connecting is refused.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    on(runtime, move || async move {
        let backoff = Backoff {
            base: Duration::from_millis(20),
            cap: Duration::from_millis(100),
        };
        let pool = NodePool::start(dead, 1, plain_connections(), backoff);
        let err = pool
            .wait_ready(Duration::from_millis(600))
            .await
            .expect_err("nothing listens");
        assert!(
            matches!(err, ConnectionError::Connect { addr, .. } if addr == dead),
            "{err}"
        );
        assert!(pool.pick().is_none());
        assert!(pool.known_down(), "a refused connect is evidence");
        let attempts = pool.stats().failed_attempts;
        // Backoff, not a busy loop: at most one attempt per few ms on average, at least 2.
        assert!(
            (2..=200).contains(&attempts),
            "{attempts} attempts in 600 ms"
        );
        pool.close("test over");
    });
}

/// A stub that answers OPTIONS after `delay`.
fn slow_options_stub(runtime: Runtime, delay: &str) -> StubNode {
    let rules = doppio_stub::Rules::parse(&format!(
        "[[rule]]\nname = \"slow\"\nwhen = {{ opcode = \"OPTIONS\" }}\n\
         then = {{ delay = {{ fixed = \"{delay}\" }} }}\n"
    ))
    .expect("the rules parse");
    StubNode::start(
        runtime,
        doppio_stub::StubConfig {
            rules,
            log_rules: false,
            ..doppio_stub::StubConfig::default()
        },
    )
}

/// A pool of one connection to `node` with one OPTIONS in flight: the pool, its
/// connection and the request's task.
async fn pool_with_a_request_in_flight(
    node: SocketAddr,
) -> (
    Rc<NodePool>,
    Connection,
    doppio_rt::Task<Result<(), crate::connection::RequestError>>,
) {
    let pool = NodePool::start(node, 1, plain_connections(), Backoff::default());
    pool.wait_ready(Duration::from_secs(10))
        .await
        .expect("a connection opens");
    let conn = pool.pick().expect("an open connection");
    let request = ask_options(&conn).await;
    (pool, conn, request)
}

/// Sends OPTIONS on `conn` from a task of its own, and returns once it is in flight.
async fn ask_options(
    conn: &Connection,
) -> doppio_rt::Task<Result<(), crate::connection::RequestError>> {
    let asking = conn.clone();
    let request = doppio_rt::spawn_local(async move {
        asking
            .request(None, |buf, stream| {
                encode_request(buf, stream, Flags::NONE, &Options)
            })
            .await
            .map(|_| ())
    });
    while conn.in_flight() == 0 {
        doppio_rt::sleep(Duration::from_millis(1)).await;
    }
    request
}

/// Waits (bounded) until `done` holds.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let start = doppio_rt::now();
    while !done() {
        assert!(
            (doppio_rt::now() - start) < Duration::from_secs(10),
            "never: {what}"
        );
        doppio_rt::sleep(Duration::from_millis(5)).await;
    }
}

/// A connection replaced in its slot (`NodePool::retire_connection`, after a wrong-shard
/// one's replacement landed) answers its requests in flight, then closes and counts as
/// closed, its traffic kept; one still draining when the pool closes closes with it.
fn a_replaced_connection_drains_then_closes_unless_the_pool_closes_first(runtime: Runtime) {
    let stub = slow_options_stub(runtime, "300ms");
    let node = stub.addr();
    stub.on(move || async move {
        // The slots' watchers never connect: the pool's only connection is the replaced one.
        let never: ConnectFn = Rc::new(|_, _| Box::pin(std::future::pending()));
        let pool = NodePool::start(node, 1, never.clone(), Backoff::default());
        let conn = Connection::connect(node, ConnectionConfig::default())
            .await
            .expect("connects");
        let request = ask_options(&conn).await;
        pool.retire_connection(0, conn.clone(), "replaced");
        assert!(pool.pick().is_none(), "no request picks it");
        assert_eq!(pool.in_flight(), 1, "its request counts while it drains");
        request.await.expect("answered, not cut off");
        eventually("closed and counted", || pool.stats().closed == 1).await;
        assert!(conn.closed().is_some());
        assert!(pool.draining.borrow().is_empty());
        assert_eq!(pool.connection_stats().requests, 1, "its traffic kept");
        pool.close("test over");

        let pool = NodePool::start(node, 1, never, Backoff::default());
        let conn = Connection::connect(node, ConnectionConfig::default())
            .await
            .expect("connects");
        let request = ask_options(&conn).await;
        pool.retire_connection(0, conn.clone(), "replaced");
        pool.close("test over");
        let err = request.await.expect_err("cut off by the pool's close");
        assert!(err.to_string().contains("test over"), "{err}");
        eventually("counted", || pool.stats().closed == 1).await;
    });
    stub.stop();
}

fn a_retired_pool_lets_its_requests_in_flight_finish_then_closes(runtime: Runtime) {
    let stub = slow_options_stub(runtime, "300ms");
    let node = stub.addr();
    stub.on(move || async move {
        let (pool, conn, request) = pool_with_a_request_in_flight(node).await;
        pool.retire("the node left", Duration::from_secs(10));
        assert!(pool.pick().is_none(), "no new request picks it");
        assert_eq!(pool.open_count(), 0);
        assert!(
            conn.closed().is_none(),
            "open while its request is in flight"
        );
        request.await.expect("answered, not cut off");
        let start = doppio_rt::now();
        while conn.closed().is_none() {
            assert!(
                (doppio_rt::now() - start) < Duration::from_secs(5),
                "never closed"
            );
            doppio_rt::sleep(Duration::from_millis(5)).await;
        }
        // Retired: no watcher opens another connection.
        doppio_rt::sleep(Duration::from_millis(100)).await;
        assert_eq!(pool.stats().opened, 1);
        assert_eq!(pool.open_count(), 0);
    });
    stub.stop();
}

fn a_retired_pool_closes_after_its_grace_even_if_requests_remain(runtime: Runtime) {
    let stub = slow_options_stub(runtime, "5s");
    let node = stub.addr();
    stub.on(move || async move {
        let (pool, conn, request) = pool_with_a_request_in_flight(node).await;
        let start = doppio_rt::now();
        pool.retire("the node left", Duration::from_millis(100));
        let err = request.await.expect_err("cut off after the grace");
        assert!(err.to_string().contains("the node left"), "{err}");
        assert!(
            (doppio_rt::now() - start) < Duration::from_secs(4),
            "not the 5 s answer"
        );
        assert!(conn.closed().is_some());
    });
    stub.stop();
}

/// A pool whose first connect has not finished is not known down (the session's schema
/// agreement counts its node: right after a session starts, most pools are in this
/// state, and a node left out of the agreement missed a fresh table); an open one is not
/// either; a closed one is.
fn a_pool_still_connecting_is_not_known_down(runtime: Runtime) {
    let stub = StubNode::start(runtime, doppio_stub::StubConfig::default());
    let node = stub.addr();
    stub.on(move || async move {
        let never: ConnectFn = Rc::new(|_, _| Box::pin(std::future::pending()));
        let connecting = NodePool::start(node, 1, never, Backoff::default());
        doppio_rt::sleep(Duration::from_millis(50)).await;
        assert!(!connecting.is_up());
        assert!(!connecting.known_down(), "no attempt has ended yet");
        connecting.close("test over");

        let pool = NodePool::start(node, 1, plain_connections(), Backoff::default());
        pool.wait_ready(Duration::from_secs(10))
            .await
            .expect("a connection opens");
        assert!(!pool.known_down());
        pool.close("test over");
        assert!(pool.known_down(), "closed");
    });
    stub.stop();
}

doppio_rt::runtime_tests!(;
    and_sim:
    a_pool_still_connecting_is_not_known_down,
    pool_replaces_a_closed_connection_in_the_background,
    pool_to_a_dead_node_backs_off_and_reports_why,
    a_retired_pool_lets_its_requests_in_flight_finish_then_closes,
    a_retired_pool_closes_after_its_grace_even_if_requests_remain,
    a_replaced_connection_drains_then_closes_unless_the_pool_closes_first,
);
