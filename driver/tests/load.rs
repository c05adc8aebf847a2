//! Load and failure behaviour against a real Cassandra: 100,000 concurrent requests from one
//! shard complete through stream-id backpressure within a stated memory bound; a node that
//! stops answering times a request out at its deadline while the connection keeps serving;
//! lz4 on and off give the same rows.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio::handshake::HandshakeConfig;
use doppio::proto::consistency::Consistency;
use doppio::proto::value::CqlValue;
use doppio::{Error, Session, SessionConfig, StatementOptions};

mod support;
use support::{cassandra, on_glommio};

/// Counts live heap bytes and their peak (test binary only; atomics are fine here).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn keyspace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("doppio_{test}_{}_{nanos}", std::process::id())
}

async fn session_to(node: SocketAddr, compression: bool, timeout: Duration) -> Session {
    let mut c = SessionConfig::new(node);
    c.consistency = Consistency::One;
    c.connection.request_timeout = timeout;
    c.handshake = HandshakeConfig {
        compression,
        ..HandshakeConfig::default()
    };
    Session::connect(c).await.unwrap()
}

async fn table_of_100(s: &Session, ks: &str) {
    s.query(
        &format!("CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
        &(),
    )
    .await
    .unwrap();
    s.use_keyspace(ks).await.unwrap();
    s.query("CREATE TABLE t (k int PRIMARY KEY, v text)", &())
        .await
        .unwrap();
    let insert = s
        .prepare("INSERT INTO t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    for k in 0..100i32 {
        s.execute(&insert, &(k, format!("value {k}")))
            .await
            .unwrap();
    }
}

/// The bound on what the driver itself may hold while 100,000 requests are outstanding on
/// one connection: only `max_streams` (32,768) of them are encoded or answered at a time
/// (the rest wait for a stream id without allocating), and each in-flight one costs its
/// encoded frame (~40 bytes), its slot, and at most its answer (~70 bytes) plus the read
/// buffer (64 KiB chunks). 32,768 x 1 KiB = 32 MiB is a generous ceiling; without
/// backpressure the answers of all 100,000 would be buffered at once.
const DRIVER_MEMORY_BOUND: usize = 32 << 20;

#[test]
fn a_hundred_thousand_concurrent_requests_complete_within_a_memory_bound() {
    on_glommio("load-100k", || async {
        let ks = keyspace("load");
        let s = session_to(cassandra(), false, Duration::from_secs(60)).await;
        table_of_100(&s, &ks).await;
        let select = s.prepare("SELECT v FROM t WHERE k = ?").await.unwrap();
        const N: usize = 100_000;
        // Spawn every request first: the tasks (their futures) are allocated now, so the
        // heap measured from here on is what the driver holds while they run.
        let before_spawn = LIVE.load(Ordering::Relaxed);
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let (s, select) = (s.clone(), select.clone());
                glommio::spawn_local(async move {
                    let k = (i % 100) as i32;
                    let r = s.execute(&select, &(k,)).await?;
                    let rows: Vec<(String,)> = r.typed_rows()?;
                    Ok::<_, Error>(rows.first().map(|r| r.0.clone()) == Some(format!("value {k}")))
                })
            })
            .collect();
        let baseline = LIVE.load(Ordering::Relaxed);
        PEAK.store(baseline, Ordering::Relaxed);
        let started = Instant::now();
        let mut correct = 0;
        for h in handles {
            if h.await.unwrap() {
                correct += 1;
            }
        }
        let elapsed = started.elapsed();
        let peak_over_baseline = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
        // What stays once every task is gone: the connection's buffers at their high-water
        // capacity and its in-flight table.
        let retained = LIVE.load(Ordering::Relaxed).saturating_sub(before_spawn);
        let conn = s.pool().pick().unwrap();
        let stats = conn.stats();
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        println!(
            "100,000 requests in {elapsed:?}: tasks {:.1} MiB; heap peak {:.1} MiB over them; \
             {:.1} MiB retained after; {} writes, {} reads, {} requests",
            mib(baseline - before_spawn),
            mib(peak_over_baseline),
            mib(retained),
            stats.writes,
            stats.reads,
            stats.requests
        );
        assert_eq!(correct, N, "every request got its own row back");
        assert!(
            peak_over_baseline < DRIVER_MEMORY_BOUND,
            "driver heap peaked {peak_over_baseline} bytes over the spawned tasks"
        );
        assert!(
            retained < DRIVER_MEMORY_BOUND,
            "the driver kept {retained} bytes after the run"
        );
        assert_eq!(conn.in_flight(), 0);
        // Backpressure: never more in flight than the stream-id space, which was full.
        assert_eq!(
            stats.in_flight_high_water,
            doppio::connection::ConnectionConfig::default().max_streams as u64
        );
        assert!(conn.closed().is_none(), "the connection survived");
        s.query(&format!("DROP KEYSPACE {ks}"), &()).await.unwrap();
    });
}

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

#[test]
fn a_node_that_stops_answering_times_out_at_the_deadline_and_the_connection_recovers() {
    let proxy = FreezingProxy::start(cassandra());
    let (addr, frozen) = (proxy.addr, proxy.frozen.clone());
    on_glommio("load-timeout", move || async move {
        let deadline = Duration::from_millis(800);
        let s = session_to(addr, false, Duration::from_secs(10)).await;
        let select = s.prepare("SELECT key FROM system.local").await.unwrap();
        s.execute(&select, &()).await.unwrap();
        frozen.store(true, Ordering::Relaxed);
        let options = StatementOptions {
            timeout: Some(deadline),
            ..StatementOptions::default()
        };
        let started = Instant::now();
        let err = s.execute_with(&select, &(), &options).await.unwrap_err();
        let elapsed = started.elapsed();
        println!("timed out after {elapsed:?} (deadline {deadline:?}): {err}");
        assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        assert!(elapsed >= deadline, "not before the deadline: {elapsed:?}");
        assert!(
            elapsed < deadline + Duration::from_secs(2),
            "at the deadline: {elapsed:?}"
        );
        let conn = s.pool().pick().unwrap();
        assert_eq!(
            conn.orphans(),
            1,
            "the timed-out stream id waits for its late answer"
        );
        frozen.store(false, Ordering::Relaxed);
        // The same connection serves again; the late answer is discarded, its id released.
        let r = s.execute(&select, &()).await.unwrap();
        assert_eq!(r.rows_count(), 1);
        let wait = Instant::now();
        while conn.orphans() > 0 && wait.elapsed() < Duration::from_secs(5) {
            glommio::timer::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(conn.orphans(), 0, "the late answer released its stream id");
        assert!(conn.stats().late_answers >= 1);
        assert_eq!(s.pool().stats().opened, 1, "no reconnect was needed");
        assert!(conn.closed().is_none());
    });
}

#[test]
fn lz4_on_and_off_give_the_same_rows() {
    on_glommio("load-lz4", || async {
        let ks = keyspace("lz4");
        let plain = session_to(cassandra(), false, Duration::from_secs(10)).await;
        plain
            .query(
                &format!("CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
                &(),
            )
            .await
            .unwrap();
        plain.use_keyspace(&ks).await.unwrap();
        plain
            .query(
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
                .execute(&insert, &(i % 7, i, text, blob))
                .await
                .unwrap();
        }
        let lz4 = session_to(cassandra(), true, Duration::from_secs(10)).await;
        lz4.use_keyspace(&ks).await.unwrap();
        let read_all = |s: Session| async move {
            let mut out = Vec::new();
            let mut pages = s.query_pages(
                "SELECT p, c, v, b FROM t",
                &(),
                StatementOptions {
                    page_size: Some(128),
                    ..StatementOptions::default()
                },
            );
            while let Some(page) = pages.next_page().await.unwrap() {
                for row in page.rows().unwrap().iter() {
                    let row = row.unwrap();
                    out.push(row.to_values().unwrap());
                }
            }
            // One unpaged read too: a large body, compressed as a whole.
            let whole = s
                .query_with(
                    "SELECT p, c, v, b FROM t",
                    &(),
                    &StatementOptions {
                        page_size: Some(0),
                        ..StatementOptions::default()
                    },
                )
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
            .query(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}
