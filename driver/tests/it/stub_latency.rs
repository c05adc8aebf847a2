//! Per-shard latency histograms against the stub, on every runtime (the simulated one
//! included): every request is one value (EXECUTE on its common path and its general one,
//! QUERY, BATCH, failures), a slow answer shows in the tail, and a session configured
//! without a histogram records nothing.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::time::Duration;

use doppio_driver::config::LatencyConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::session::BatchType;
use doppio_driver::{Batch, PagingState, Session, SessionConfig};
use doppio_stub::Shape;

use crate::support;

use support::stub;

/// A key as the stub's tables have them (blobs).
fn key(k: i32) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

const RULES: &str = r#"
[[rule]]
when = { statement = "SLOW" }
then = { delay = { fixed = "30ms" } }

[[rule]]
when = { statement = "REFUSED" }
then = { error = { code = "invalid", message = "refused" } }
"#;

fn every_request_is_one_value_and_a_slow_one_shows_in_the_tail(runtime: Runtime) {
    let stub = stub(runtime, RULES, Shape::default());
    let addr = stub.addr();
    stub.run("latency", move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        config.latency = Some(LatencyConfig::default());
        let s = Session::connect(config).await.unwrap();
        assert_eq!(s.latency().unwrap().count(), 0);
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        for k in 0..50i32 {
            s.execute_unpaged(&p, &(key(k),)).await.unwrap(); // the common path
        }
        let paged = p.with_config(|c| {
            c.page_size = Some(7);
            c.consistency = Some(Consistency::Quorum);
        });
        for k in 0..5i32 {
            s.execute_single_page(&paged, &(key(k),), &PagingState::start())
                .await
                .unwrap(); // the general path
        }
        for _ in 0..10 {
            s.query_unpaged("SELECT v FROM ks.t", &()).await.unwrap();
        }
        let batch =
            Batch::new(BatchType::Unlogged).with_query("INSERT INTO ks.t (k, v) VALUES (1, 2)");
        s.batch(&batch, &((),)).await.unwrap();
        s.query_unpaged("SELECT v FROM ks.t WHERE REFUSED", &())
            .await
            .unwrap_err();
        for _ in 0..2 {
            s.query_unpaged("SELECT v FROM ks.t WHERE SLOW", &())
                .await
                .unwrap();
        }
        let latency = s.latency().unwrap();
        let stats = s.stats();
        // The PREPARE is a request too.
        assert_eq!(stats.requests, 1 + 50 + 5 + 10 + 1 + 1 + 2, "{stats:?}");
        assert_eq!(latency.count(), stats.requests, "{latency:?}");
        assert!(latency.min() > Duration::ZERO, "{latency:?}");
        assert!(latency.max() >= Duration::from_millis(30), "{latency:?}");
        assert!(
            latency.quantile(0.5) < Duration::from_millis(30),
            "{latency:?}"
        );
        assert!(latency.quantile(0.5) >= latency.min(), "{latency:?}");
        if runtime == Runtime::Sim {
            // Each way over the simulated network takes at least its smallest delay.
            let floor = 2 * support::SIM_NET_DELAY.0;
            assert!(latency.min() >= floor, "{latency:?}");
        }
        // A snapshot is a copy: later requests do not change it.
        s.execute_unpaged(&p, &(key(1),)).await.unwrap();
        assert_eq!(s.latency().unwrap().count(), latency.count() + 1);
        s.close("done");
    });
}

fn a_session_without_a_histogram_records_nothing(runtime: Runtime) {
    let stub = stub(runtime, "", Shape::default());
    let addr = stub.addr();
    stub.run("latency-off", move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        config.latency = None;
        let s = Session::connect(config).await.unwrap();
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        s.execute_unpaged(&p, &(key(1),)).await.unwrap();
        s.query_unpaged("SELECT v FROM ks.t", &()).await.unwrap();
        assert!(s.latency().is_none());
        assert_eq!(s.stats().requests, 3, "PREPARE, EXECUTE, QUERY");
        s.close("done");
    });
}

support::runtime_tests!(;
    and_sim:
    every_request_is_one_value_and_a_slow_one_shows_in_the_tail,
    a_session_without_a_histogram_records_nothing,
);
