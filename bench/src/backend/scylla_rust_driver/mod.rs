//! The scylla-rust-driver backend: one `scylla::Session` on a tokio runtime, configured as
//! its users run it. With one thread the runtime is `current_thread` (the driver's
//! connection tasks and the workload share that thread, like one doppio shard); with more,
//! a multi-threaded runtime with that many workers for the driver's tasks, and one thread
//! per bench worker that drives its request loops on that runtime (`Handle::block_on`): a
//! worker's loops share cells and are `!Send`, so they are built on their thread and never
//! move (no `unsafe`).
//!
//! Cores: unless `--no-pin`, every thread that does request work is pinned (core_affinity)
//! to the cores doppio's shards use
//! ([`ConnectOptions::pinned_cores`](crate::backend::ConnectOptions::pinned_cores)): the
//! tokio workers round-robin over them, bench worker `w` to the `w`th, and with one thread
//! the thread that drives the `current_thread` runtime during a phase to the first.
//!
//! Children: [`rows`], a result page consumed (every row decoded, or only counted);
//! [`retry`], `--retries` with the bench's retry decisions; [`cost`], `doppio cost`'s runs of
//! scylla-rust-driver against a stub. Private ones, a concern each: `connect`, the backend
//! connected ([`ScyllaBackend`]: its runtime and session); `pins`, the cores its request
//! threads are pinned to; `profile`, the bench's settings as the driver takes them (the
//! execution profile, the settings it refuses); `types`, the bench's type of a column type;
//! `prepare`, a phase's statements prepared and batches built; `bind`, arguments written
//! into the driver's request buffer; `execute`, a request executed, page after page;
//! `error`, the backend's errors and a request's failure mapped onto the bench's kinds;
//! `run`, a phase's workers run ([`PhaseRunner`](crate::engine::phase::PhaseRunner)) and
//! the [`Backend`](crate::backend::Backend) interface.

pub(crate) mod cost;
pub(crate) mod retry;
pub(crate) mod rows;

mod bind;
mod connect;
mod error;
mod execute;
mod pins;
mod prepare;
mod profile;
mod run;
mod types;

#[cfg(test)]
mod tests;

pub(crate) use connect::ScyllaBackend;
pub(crate) use profile::check_settings;
