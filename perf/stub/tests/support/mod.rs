//! Helpers shared by the stub's test files: a stub with rules, and a glommio executor to run
//! a client on.

#![allow(clippy::unwrap_used, dead_code)] // tests; not every file uses every helper

use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

/// A stub on an ephemeral port with these TOML `rules` and result `shape`, rules not logged.
pub fn stub(rules: &str, shape: Shape) -> StubHandle {
    Stub::start(StubConfig {
        shape,
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

/// Runs `f` on a fresh glommio executor and returns its result.
pub fn on_glommio_value<T, F, Fut>(f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    glommio::LocalExecutorBuilder::default()
        .name("stub-test")
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// Runs `f` on a fresh glommio executor.
pub fn on_glommio<F, Fut>(f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    on_glommio_value(f);
}
