//! A session against the stub served on the session's own executor (`Stub::serve_local`),
//! over an in-memory connection (`doppio_rt::memory`) and over loopback TCP: what the
//! request-path benchmarks (`driver/benches/request_path/`) measure with. Every request gets
//! its own answer, a keyed statement on the stub's routed keyspace is routed by token, and
//! on doppio's own runtime the in-memory path puts no operation into the ring.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::{Runtime, TcpListener};
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Stub, StubConfig};

use crate::support;

use support::on_runtime;

fn stub_config() -> StubConfig {
    StubConfig {
        log_rules: false,
        routed_keyspace: Some("bench".into()),
        ..StubConfig::default()
    }
}

fn session_config(addr: SocketAddr, version: Option<ProtocolVersion>) -> SessionConfig {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.handshake.protocol_version = version;
    c
}

/// 64 fibers of 50 requests each through `session`: every one answered with its row.
async fn many_requests(session: &Session) {
    let prepared = session
        .prepare("SELECT key FROM system.local WHERE key = 'local'")
        .await
        .unwrap();
    let answered = Rc::new(Cell::new(0u32));
    let fibers: Vec<_> = (0..64)
        .map(|_| {
            let (s, p, answered) = (session.clone(), prepared.clone(), answered.clone());
            doppio_driver::rt::spawn_local(async move {
                for _ in 0..50 {
                    let r = s.execute_unpaged(&p, &()).await.unwrap();
                    let rows: Vec<(String,)> = r.typed_rows().unwrap();
                    assert_eq!(rows, vec![("local".to_owned(),)]);
                    answered.set(answered.get() + 1);
                }
            })
        })
        .collect();
    for f in fibers {
        f.await;
    }
    assert_eq!(answered.get(), 64 * 50);
}

fn a_session_runs_against_an_in_memory_stub_on_its_own_executor(runtime: Runtime) {
    on_runtime(runtime, "in-memory-stub", move || async move {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let stub =
            Stub::serve_local(TcpListener::bind_memory(addr).unwrap(), &stub_config()).unwrap();
        assert_eq!(stub.addr(), addr);
        for version in [Some(ProtocolVersion::V4), None] {
            let session = Session::connect(session_config(addr, version))
                .await
                .unwrap();
            let before = doppio_driver::rt::uring::stats();
            many_requests(&session).await;
            if runtime == Runtime::Uring {
                let d = doppio_driver::rt::uring::stats().since(&before);
                assert_eq!(d.sqes_submitted, 0, "nothing went through the ring: {d:?}");
            }
            // The routed keyspace: a bound key is routed by token to the stub, its replica.
            let keyed = session
                .prepare("SELECT v FROM bench.kv WHERE k = ?")
                .await
                .unwrap();
            let key: &[u8] = b"k1";
            assert!(session.token_of(&keyed, &(key,)).is_some());
            assert_eq!(session.replicas_of(&keyed, &(key,)), vec![addr]);
            let r = session.execute_unpaged(&keyed, &(key,)).await.unwrap();
            assert_eq!(r.rows_count(), 1);
            session.close("done");
        }
        assert!(stub.connections() >= 4, "control and pool, per session");
    });
}

fn a_session_runs_against_a_stub_served_on_its_own_executor_over_tcp(runtime: Runtime) {
    on_runtime(runtime, "local-tcp-stub", move || async move {
        let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap(), 64 * 1024).unwrap();
        let stub = Stub::serve_local(listener, &stub_config()).unwrap();
        let session = Session::connect(session_config(stub.addr(), None))
            .await
            .unwrap();
        many_requests(&session).await;
        session.close("done");
    });
}

support::runtime_tests!(
    a_session_runs_against_a_stub_served_on_its_own_executor_over_tcp;
    and_sim: a_session_runs_against_an_in_memory_stub_on_its_own_executor,
);
