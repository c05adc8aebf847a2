//! What the door for tokio applications costs per request: the same prepared statement run
//! from one process three ways, against the same loopback stub (perf/stub), interleaved in
//! rounds:
//! - `door`: tokio tasks call `SendSession::execute_unpaged`; each request crosses to the
//!   doppio shard and its answer back (one hop each way).
//! - `direct`: the same requests on the shard itself (`Cluster::run_on_shards`, fibers
//!   calling `Session::execute_unpaged` in a loop): no hop.
//! - `scylla`: scylla-rust-driver's `Session::execute_unpaged` from tasks of the same tokio
//!   runtime.
//!
//! ```sh
//! cargo bench -p doppio-driver --bench tokio_door
//! DOOR_BENCH_REQUESTS=100000 DOOR_BENCH_ROUNDS=5 DOOR_BENCH_CONCURRENCY=1,64 \
//!   DOOR_BENCH_RUNTIME=uring cargo bench -p doppio-driver --bench tokio_door
//! ```
//!
//! Setting: one doppio shard and a tokio runtime of one worker thread (the client), the
//! stub on one executor of its own (uring) over loopback TCP; nothing pinned (the machine's
//! cores are shared). Protocol v4 on both drivers (what scylla-rust-driver speaks), one
//! connection each, lz4 off. The statement is the `empty` workload's (`SELECT key FROM
//! system.local WHERE key = 'local'`: no values; one row of one text cell); each answer's
//! row count is checked.
//!
//! Per run: wall time per request (`elapsed / requests`, with `C` requests in flight as `C`
//! tasks or fibers), and the client's CPU per request: the on-CPU time of every thread of
//! the process except the stub's (`/proc/self/task/*/schedstat`, nanoseconds), over the
//! requests. Printed per round, then the median of each over the rounds with the ratios
//! to `direct`.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // a benchmark: a panic is a failed run

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::Runtime;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, SendSession};

const CQL: &str = "SELECT key FROM system.local WHERE key = 'local'";

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// On-CPU nanoseconds of every thread of this process whose name does not start with
/// `doppio-stub` (the stub's executors).
fn client_cpu() -> Duration {
    let mut total = 0u64;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if name.starts_with("doppio-stub") {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
        total += stat
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(total)
}

#[derive(Clone, Copy, Debug)]
enum Way {
    Door,
    Direct,
    Scylla,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::Door => "door",
            Way::Direct => "direct",
            Way::Scylla => "scylla",
        }
    }
}

/// Wall and client CPU per request, in microseconds.
#[derive(Clone, Copy, Debug)]
struct Cost {
    wall_us: f64,
    cpu_us: f64,
}

struct Clients {
    tokio: tokio::runtime::Runtime,
    cluster: Cluster,
    door: SendSession,
    door_prepared: doppio_driver::door::SendPrepared,
    scylla: Arc<scylla::client::session::Session>,
    scylla_prepared: scylla::statement::prepared::PreparedStatement,
}

impl Clients {
    fn connect(stub: SocketAddr, runtime: Runtime) -> Self {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("door-bench-tokio")
            .enable_all()
            .build()
            .unwrap();
        let cluster = Cluster::builder()
            .session_config(
                SessionConfig::new(stub)
                    .with_protocol_version(Some(ProtocolVersion::V4))
                    .with_consistency(Consistency::One),
            )
            .runtime(runtime)
            .cores(&[0])
            .pin(false)
            .build()
            .unwrap();
        let door = SendSession::new(&cluster);
        let (door_prepared, scylla, scylla_prepared) = tokio.block_on(async {
            let door_prepared = door.prepare(CQL).await.unwrap();
            let scylla = scylla::client::session_builder::SessionBuilder::new()
                .known_node_addr(stub)
                .pool_size(scylla::client::PoolSize::PerHost(NonZeroUsize::MIN))
                .compression(None)
                .build()
                .await
                .unwrap();
            let mut prepared = scylla.prepare(CQL).await.unwrap();
            prepared.set_consistency(scylla::frame::types::Consistency::One);
            (door_prepared, Arc::new(scylla), prepared)
        });
        Self {
            tokio,
            cluster,
            door,
            door_prepared,
            scylla,
            scylla_prepared,
        }
    }

    /// Runs `requests` requests `way`, `concurrency` at a time.
    fn run(&self, way: Way, requests: u64, concurrency: u64) -> Cost {
        let cpu = client_cpu();
        let started = Instant::now();
        match way {
            Way::Door => self.tokio.block_on(async {
                let left = Arc::new(AtomicU64::new(requests));
                let tasks: Vec<_> = (0..concurrency)
                    .map(|_| {
                        let (door, prepared, left) =
                            (self.door.clone(), self.door_prepared.clone(), left.clone());
                        tokio::spawn(async move {
                            while take(&left) {
                                let r = door.execute_unpaged(&prepared, ()).await.unwrap();
                                assert_eq!(r.rows_count(), 1);
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }),
            Way::Direct => {
                let prepared = CQL;
                self.cluster
                    .run_on_shards(move |session| async move {
                        let statement = session.prepare(prepared).await.unwrap();
                        let left = std::rc::Rc::new(std::cell::Cell::new(requests));
                        let fibers: Vec<_> = (0..concurrency)
                            .map(|_| {
                                let (session, statement, left) =
                                    (session.clone(), statement.clone(), left.clone());
                                doppio_driver::rt::spawn_local(async move {
                                    while left.get() > 0 {
                                        left.set(left.get() - 1);
                                        let r =
                                            session.execute_unpaged(&statement, &()).await.unwrap();
                                        assert_eq!(r.rows_count(), 1);
                                    }
                                })
                            })
                            .collect();
                        for f in fibers {
                            f.await;
                        }
                    })
                    .unwrap();
            }
            Way::Scylla => self.tokio.block_on(async {
                let left = Arc::new(AtomicU64::new(requests));
                let tasks: Vec<_> = (0..concurrency)
                    .map(|_| {
                        let (session, prepared, left) = (
                            self.scylla.clone(),
                            self.scylla_prepared.clone(),
                            left.clone(),
                        );
                        tokio::spawn(async move {
                            while take(&left) {
                                let r = session.execute_unpaged(&prepared, ()).await.unwrap();
                                assert_eq!(r.into_rows_result().unwrap().rows_num(), 1);
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }),
        }
        let wall = started.elapsed();
        let cpu = client_cpu().saturating_sub(cpu);
        let n = requests as f64;
        Cost {
            wall_us: wall.as_secs_f64() * 1e6 / n,
            cpu_us: cpu.as_secs_f64() * 1e6 / n,
        }
    }
}

/// Takes one request off the shared count; false when none is left.
fn take(left: &AtomicU64) -> bool {
    left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken from the command line.
    let requests: u64 = env("DOOR_BENCH_REQUESTS", 100_000);
    let rounds: usize = env("DOOR_BENCH_ROUNDS", 5);
    let runtime = match std::env::var("DOOR_BENCH_RUNTIME").as_deref() {
        Ok("glommio") => Runtime::Glommio,
        _ => Runtime::Uring,
    };
    let concurrencies: Vec<u64> = std::env::var("DOOR_BENCH_CONCURRENCY")
        .unwrap_or_else(|_| "1,64".into())
        .split(',')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig {
        runtime: Runtime::Uring,
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap();
    let clients = Clients::connect(stub.addr(), runtime);
    println!(
        "tokio_door: {requests} requests per run, {rounds} rounds, doppio shard on {}, \
         tokio 1 worker, stub on uring (unpinned)",
        runtime.name()
    );
    let ways = [Way::Door, Way::Direct, Way::Scylla];
    // Warm-up: connections, caches, the stub's prepared answer.
    for way in ways {
        clients.run(way, requests / 10 + 1, 8);
    }
    for &c in &concurrencies {
        println!("\nconcurrency {c}");
        println!("| round | way | wall µs/req | client CPU µs/req |");
        println!("|---|---|---|---|");
        let mut costs: Vec<Vec<Cost>> = vec![Vec::new(); ways.len()];
        for round in 0..rounds {
            // Interleaved, the order rotated each round.
            for k in 0..ways.len() {
                let i = (round + k) % ways.len();
                let cost = clients.run(ways[i], requests, c);
                println!(
                    "| {round} | {} | {:.2} | {:.2} |",
                    ways[i].name(),
                    cost.wall_us,
                    cost.cpu_us
                );
                costs[i].push(cost);
            }
        }
        let wall: Vec<f64> = costs
            .iter()
            .map(|c| median(c.iter().map(|x| x.wall_us).collect()))
            .collect();
        let cpu: Vec<f64> = costs
            .iter()
            .map(|c| median(c.iter().map(|x| x.cpu_us).collect()))
            .collect();
        println!("\nmedians, concurrency {c} (ratio to direct):");
        println!("| way | wall µs/req | × direct | client CPU µs/req | × direct |");
        println!("|---|---|---|---|---|");
        for (i, way) in ways.iter().enumerate() {
            println!(
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                way.name(),
                wall[i],
                wall[i] / wall[1],
                cpu[i],
                cpu[i] / cpu[1]
            );
        }
    }
    drop(clients.door);
    clients.cluster.shutdown();
    stub.stop();
}
