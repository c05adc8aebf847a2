//! Failure and compression behaviour against a real Cassandra: a node that stops answering
//! times a request out at its deadline while the connection keeps serving; lz4 on and off
//! give the same rows. (100,000 concurrent requests: `cassandra_many_requests.rs`.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::proto::value::CqlValue;
use doppio_driver::{Error, Session, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime, session_to};

/// A TCP proxy to `target` that can be frozen: while frozen it stops passing the server's
/// bytes to the client (they wait in the kernel's buffers), as a node that stops answering.
struct FreezingProxy {
    addr: SocketAddr,
    frozen: Arc<AtomicBool>,
}

impl FreezingProxy {
    fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let frozen = Arc::new(AtomicBool::new(false));
        let f = frozen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(target) else {
                    return;
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pump(client, server, None));
                let f = f.clone();
                std::thread::spawn(move || pump(s2, c2, Some(f)));
            }
        });
        Self { addr, frozen }
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, frozen: Option<Arc<AtomicBool>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if let Some(f) = &frozen {
            while f.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(std::net::Shutdown::Both);
                return;
            }
            Ok(n) => {
                if let Some(f) = &frozen {
                    // Frozen after the read: hold these bytes back too.
                    while f.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

fn a_node_that_stops_answering_times_out_at_the_deadline_and_the_connection_recovers(
    runtime: Runtime,
) {
    let proxy = FreezingProxy::start(cassandra());
    let (addr, frozen) = (proxy.addr, proxy.frozen.clone());
    on_runtime(runtime, "load-timeout", move || async move {
        let deadline = Duration::from_millis(800);
        let s = session_to(addr, false, Duration::from_secs(10)).await;
        let select = s.prepare("SELECT key FROM system.local").await.unwrap();
        s.execute_unpaged(&select, &()).await.unwrap();
        frozen.store(true, Ordering::Relaxed);
        let select = select.with_config(|c| c.timeout = Some(deadline));
        let started = Instant::now();
        let err = s.execute_unpaged(&select, &()).await.unwrap_err();
        let elapsed = started.elapsed();
        println!("timed out after {elapsed:?} (deadline {deadline:?}): {err}");
        assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        assert!(elapsed >= deadline, "not before the deadline: {elapsed:?}");
        assert!(
            elapsed < deadline + Duration::from_secs(2),
            "at the deadline: {elapsed:?}"
        );
        let conn = s.node_at(s.node()).unwrap().connection().unwrap();
        assert_eq!(
            conn.orphans(),
            1,
            "the timed-out stream id waits for its late answer"
        );
        frozen.store(false, Ordering::Relaxed);
        // The same connection serves again; the late answer is discarded, its id released.
        let r = s.execute_unpaged(&select, &()).await.unwrap();
        assert_eq!(r.rows_count(), 1);
        let wait = Instant::now();
        while conn.orphans() > 0 && wait.elapsed() < Duration::from_secs(5) {
            doppio_driver::rt::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(conn.orphans(), 0, "the late answer released its stream id");
        assert!(conn.stats().late_answers >= 1);
        assert_eq!(
            s.node_at(s.node()).unwrap().pool_stats().opened,
            1,
            "no reconnect was needed"
        );
        assert!(conn.closed().is_none());
    });
}

fn lz4_on_and_off_give_the_same_rows(runtime: Runtime) {
    on_runtime(runtime, "load-lz4", || async {
        let ks = keyspace("lz4");
        let plain = session_to(cassandra(), false, Duration::from_secs(30)).await;
        plain
            .query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        plain.use_keyspace(&ks).await.unwrap();
        plain
            .query_unpaged(
                "CREATE TABLE t (p int, c int, v text, b blob, PRIMARY KEY (p, c))",
                &(),
            )
            .await
            .unwrap();
        let insert = plain
            .prepare("INSERT INTO t (p, c, v, b) VALUES (?, ?, ?, ?)")
            .await
            .unwrap();
        for i in 0..1000i32 {
            let text = format!("row {i} ").repeat(20); // compressible
            let blob: Vec<u8> = (0..64).map(|k| (i as u8).wrapping_mul(k)).collect();
            plain
                .execute_unpaged(&insert, &(i % 7, i, text, blob))
                .await
                .unwrap();
        }
        let lz4 = session_to(cassandra(), true, Duration::from_secs(30)).await;
        lz4.use_keyspace(&ks).await.unwrap();
        let read_all = |s: Session| async move {
            let mut out = Vec::new();
            let read =
                Statement::new("SELECT p, c, v, b FROM t").with_config(|c| c.page_size = Some(128));
            let mut pages = s.query_iter(read, &());
            while let Some(page) = pages.next_page().await.unwrap() {
                for row in page.rows().unwrap().iter() {
                    let row = row.unwrap();
                    out.push(row.to_values().unwrap());
                }
            }
            // One unpaged read too: a large body, compressed as a whole.
            let whole = s
                .query_unpaged("SELECT p, c, v, b FROM t", &())
                .await
                .unwrap();
            (out, whole.rows_count(), s.stats().connections.bytes_read)
        };
        let (a, a_whole, a_bytes) = read_all(plain.clone()).await;
        let (b, b_whole, b_bytes) = read_all(lz4.clone()).await;
        assert_eq!(a.len(), 1000);
        assert_eq!(a, b, "same rows with and without lz4");
        assert_eq!((a_whole, b_whole), (1000, 1000));
        assert!(
            matches!(&a[0][2], Some(CqlValue::Text(t)) if t.starts_with("row ")),
            "{:?}",
            a[0]
        );
        println!("bytes read: {a_bytes} plain, {b_bytes} with lz4");
        assert!(
            b_bytes < a_bytes / 2,
            "lz4 was really on: {b_bytes} vs {a_bytes}"
        );
        plain
            .query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    a_node_that_stops_answering_times_out_at_the_deadline_and_the_connection_recovers,
    lz4_on_and_off_give_the_same_rows,
);
