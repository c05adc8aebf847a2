//! The feature `tracing`: the driver's events at its cold points reach a subscriber
//! (connecting, the topology, connections opened, preparing, a retry decision, a connection
//! closed), all of target `doppio_driver`, and a request on the common path emits none. Against
//! the stub, on every runtime. Built only with the feature:
//! `cargo test -p doppio-driver --features tracing --test tracing_events`.

#![cfg(feature = "tracing")]
#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::sync::{Arc, Mutex};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::Shape;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[path = "it/support/mod.rs"]
mod support;

use support::stub;

/// Every event's target and message, in order.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<(String, String)>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let target = event.metadata().target().to_owned();
        self.0.lock().unwrap().push((target, m.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Collect {
    fn messages(&self) -> Vec<String> {
        let all = self.0.lock().unwrap();
        assert!(all.iter().all(|(t, _)| t == "doppio_driver"), "{all:?}");
        all.iter().map(|(_, m)| m.clone()).collect()
    }
}

const RULES: &str = r#"
[[rule]]
when = { statement = "REFUSED" }
then = { error = { code = "invalid", message = "refused" } }
"#;

fn the_cold_points_emit_events_and_a_plain_request_none(runtime: Runtime) {
    let stub = stub(runtime, RULES, Shape::default());
    let addr = stub.addr();
    stub.run("tracing-events", move || async move {
        let collect = Collect::default();
        let _guard = tracing::subscriber::set_default(collect.clone());
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        let seen = collect.messages();
        for expected in [
            "session connecting",
            "topology installed",
            "connection opened",
            "session connected",
            "prepared; preparing on the other nodes",
        ] {
            assert!(seen.iter().any(|m| m == expected), "{expected}: {seen:?}");
        }
        // The common path emits nothing.
        let before = seen.len();
        for k in 0..20u8 {
            s.execute_unpaged(&p, &(vec![k],)).await.unwrap();
        }
        assert_eq!(collect.messages().len(), before, "{:?}", collect.messages());
        // A failure: the retry policy's decision.
        s.query_unpaged("SELECT v FROM ks.t WHERE REFUSED", &())
            .await
            .unwrap_err();
        let seen = collect.messages();
        assert!(
            seen.iter()
                .any(|m| m == "request failed; the retry policy decided"),
            "{seen:?}"
        );
        s.close("done");
    });
}

support::runtime_tests!(;
    and_sim:
    the_cold_points_emit_events_and_a_plain_request_none,
);
