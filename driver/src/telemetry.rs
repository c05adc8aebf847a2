//! The driver's `tracing` events (cargo feature `tracing`, off by default): one macro,
//! [`event!`], that becomes a `tracing` event of target `doppio_driver` with the feature, and
//! nothing at all without it (its arguments are not even evaluated).
//!
//! Events mark the session's cold points only: connecting, preparing and re-preparing, retry
//! decisions, connections opened, closed and failed (a node going down and coming back as
//! this shard sees it), reconnection backoff, topology changes and schema agreement. None is
//! on the request path's common case: a `tracing` macro loads an atomic (the global maximum
//! level) even when no subscriber listens, which the request path must not pay.
//!
//! Invariant: without the feature this module expands to nothing; no `tracing` code, atomic
//! or dependency is compiled in.

/// A `tracing` event of target `doppio_driver` at `$level` (`trace`, `debug`, `info`, `warn`,
/// `error`), with `tracing`'s field syntax; nothing without the feature.
#[cfg(feature = "tracing")]
macro_rules! event {
    ($level:ident, $($arg:tt)+) => {
        ::tracing::$level!(target: "doppio_driver", $($arg)+)
    };
}

/// Without the feature `tracing`: nothing (the arguments are not evaluated).
#[cfg(not(feature = "tracing"))]
macro_rules! event {
    ($level:ident, $($arg:tt)+) => {{}};
}

pub(crate) use event;
