//! Helpers shared by the stub's test files: a stub with rules, and an executor of either
//! runtime to run a client on.

#![allow(clippy::unwrap_used)]
// tests: a panic is a failed test with its location
// Each test binary compiles this module and uses only some of its helpers.
#![allow(dead_code)]

use doppio::rt::Runtime;
use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

/// A stub on `runtime`, on an ephemeral port with these TOML `rules` and result `shape`,
/// rules not logged.
pub(crate) fn stub(runtime: Runtime, rules: &str, shape: Shape) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        shape,
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

/// Runs `f` on a fresh executor of `runtime`.
pub(crate) fn on_runtime<F, Fut>(runtime: Runtime, f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    doppio::rt::run_on(runtime, &format!("stub-test-{runtime}"), f).unwrap()
}

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)`.
pub(crate) use doppio::rt::runtime_tests;
