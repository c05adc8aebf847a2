//! The backends behind one interface: doppio (one shard per core, on glommio or on doppio's
//! own io_uring runtime, the latter also in SQPOLL mode: the same driver on two event loops)
//! and scylla-rust-driver (a tokio runtime), and the null backend (no driver: the engine's own
//! floor). The engine ([`crate::engine`]) runs the same workload on any, and drives a phase
//! on one ([`crate::engine::drive`]) through the [`PhaseRunner`](crate::engine::phase::PhaseRunner) each backend implements;
//! this folder holds only that interface ([`Backend`]), its adapters and what they share.
//!
//! Children: [`doppio`] (doppio on glommio or on its own io_uring runtime, one shard per
//! core) and [`scylla_rust_driver`] (scylla-rust-driver on a tokio runtime; not `scylla`, the
//! name of its crate); each maps the bench's
//! neutral types (consistency, values, outcomes, error kinds, retry decisions) to its
//! driver's and names no other driver. [`null`]: requests that
//! complete at once without I/O, on doppio's io_uring runtime (what the engine itself costs
//! per request). What they share, which they import: [`interface`], the [`Backend`] trait
//! they implement; [`driver`], which driver runs ([`Driver`]) and the protocol versions the
//! drivers speak; [`options`], how to connect ([`ConnectOptions`], [`Consistency`],
//! [`SqPollOptions`]); [`settings`]: the driver settings both take (serial consistency,
//! compression, retry backoff, data center and rack, TLS), and the refusal of one a backend
//! cannot honour; [`retry`], the bench's retry policy (`--retries`: what a failure says,
//! where the request goes next), which the scylla adapter follows and doppio's own policy
//! is tested equal to; [`counters`], the driver-side counters a backend reports
//! ([`DriverCounters`]); [`tls`], doppio's TLS configuration, which the scylla backend takes
//! too; [`nemesis`], the nemesis's acknowledged-writes workload, driver-neutral (doppio's
//! adapter runs it, `doppio::nemesis`), and above the adapters [`nemesis_run`], which one
//! runs it; `tasks`, fibers run as tasks of doppio's runtimes (the doppio and null backends).
//! Above the adapters, [`connect`](mod@connect) checks the settings and starts the chosen
//! one.
//!
//! Fairness of cores: every backend's threads that do request work are pinned to the same
//! cores, [`ConnectOptions::pinned_cores`] (0..threads), unless `--no-pin`.

pub(crate) mod connect;
pub(crate) mod cost;
pub(crate) mod cost_scenario;
pub(crate) mod counters;
pub(crate) mod doppio;
pub(crate) mod driver;
pub(crate) mod interface;
pub(crate) mod nemesis;
pub(crate) mod nemesis_run;
pub(crate) mod null;
pub(crate) mod options;
pub(crate) mod retry;
pub(crate) mod scylla_rust_driver;
pub(crate) mod settings;
mod tasks;
pub(crate) mod tls;

pub(crate) use connect::{check_settings, connect};
pub(crate) use counters::{add_counts, DriverCounters, UringEnters};
pub(crate) use driver::{common_protocol, Driver, UnknownDriver};
pub(crate) use interface::Backend;
pub(crate) use options::{
    ConnectOptions, Consistency, SqPollOptions, UringWait, DEFAULT_PAGE_SIZE,
};
pub(crate) use settings::{
    Compression, Locality, RetryBackoff, SerialConsistency, SettingError, TlsOptions,
};
