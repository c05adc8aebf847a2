//! Routing to the ScyllaDB shard that owns a token adds no allocation per request: the
//! allocations per EXECUTE on the request's own thread are counted against the stub
//! emulating 4 ScyllaDB shards (token -> shard -> that shard's connection) and against the
//! plain stub with 4 connections (round-robin, no shard), with the same pre-built keys, on
//! each runtime. The comparison is asserted on doppio's own io_uring runtime, which
//! allocates nothing per loop turn, so that every allocation counted is the driver's: there
//! routing by shard must add none. On glommio the runtime's own allocations per turn (about
//! 9.5 per request here) vary with scheduling by up to 1.5 per request between runs on this
//! 2-core machine, so the counts are printed, not compared; both runtimes check that every
//! request landed on its shard.
//! The counting allocator is the test binary's (`main.rs`); the count read is this thread's.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use doppio_alloc_count::thread_allocations;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{ScyllaShards, StubConfig};

use crate::support;

use support::on_runtime;

const REQUESTS: usize = 2000;

/// Allocations per EXECUTE on the session's thread, after a warm-up, against `addr`.
fn allocations_per_request(runtime: Runtime, addr: SocketAddr, sharded: bool) -> f64 {
    let connections = 4;
    on_runtime(runtime, "scylla-alloc", move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        // Sharded: one per ScyllaDB shard; plain: four to the one node.
        config.connections = if sharded { 1 } else { connections };
        let s = Session::connect(config).await.unwrap();
        let node = s.view().node(0).unwrap().clone();
        let deadline = Instant::now() + Duration::from_secs(20);
        while node.open_connections() < connections {
            assert!(Instant::now() < deadline, "{}", node.open_connections());
            doppio_driver::rt::sleep(Duration::from_millis(5)).await;
        }
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        let keys: Vec<(Vec<u8>,)> = (0..REQUESTS as u64)
            .map(|k| (k.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec(),))
            .collect();
        for k in &keys {
            s.execute_unpaged(&p, k).await.unwrap();
        }
        let before = thread_allocations();
        for k in &keys {
            s.execute_unpaged(&p, k).await.unwrap();
        }
        let n = thread_allocations() - before;
        s.close("done");
        n as f64 / REQUESTS as f64
    })
}

fn shard_routing_allocates_nothing_more_per_request(runtime: Runtime) {
    let sharded = doppio_stub::Stub::start(StubConfig {
        runtime,
        log_rules: false,
        scylla: Some(ScyllaShards::new(
            NonZeroU16::new(4).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        ..StubConfig::default()
    })
    .unwrap();
    let plain = doppio_stub::Stub::start(StubConfig {
        runtime,
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap();
    let with_shards = allocations_per_request(runtime, sharded.addr(), true);
    let without = allocations_per_request(runtime, plain.addr(), false);
    let counts = sharded.shard_counts().unwrap();
    assert_eq!(counts.wrong_shard, 0, "{counts:?}");
    assert_eq!(counts.requests.iter().sum::<u64>(), 2 * REQUESTS as u64);
    eprintln!("{runtime}: allocations per request: {with_shards} with shards, {without} without");
    if runtime == Runtime::Uring {
        assert!(
            with_shards <= without,
            "allocations per request: {with_shards} with ScyllaDB shards, {without} without"
        );
    }
    sharded.stop();
    plain.stop();
}

support::runtime_tests!(shard_routing_allocates_nothing_more_per_request);
