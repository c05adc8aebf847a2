//! The doppio backend: one shard per thread (pinned to
//! [`ConnectOptions::pinned_cores`](crate::backend::ConnectOptions::pinned_cores), the
//! cores every backend uses, unless `--no-pin`), each running its worker's fibers on its own
//! session; on glommio (`doppio`) or on doppio's own io_uring runtime (`doppio-uring`, and
//! in SQPOLL mode `doppio-uring-sqpoll`), the same code either way.
//!
//! Children: [`rows`], a result page consumed (every row decoded, or only counted);
//! [`cost`], `doppio cost`'s runs of doppio on a simulated runtime; [`nemesis`], the
//! nemesis's acknowledged-writes workload on doppio, its errors mapped onto outcomes. Private ones, a concern
//! each: `connect`, the backend connected ([`DoppioBackend`]: its shards and sessions);
//! `runtime`, the event loop and io_uring configuration it runs on; `profile`, the bench's
//! settings as doppio takes them (consistency levels, the settings it refuses); `types`, the
//! bench's type of a column type; `prepare`, a phase's statements prepared and batches
//! built; `bind`, arguments written into the driver's frame buffer; `execute`, a request
//! executed, page after page; `timed`, `--waterfall`'s requests timed stage by stage;
//! `error`, the backend's errors and a request's failure mapped onto the bench's kinds;
//! `retry_agreement` (a test), the bench's retry policy checked against doppio's; `run`, a
//! phase's workers run on the shards ([`PhaseRunner`](crate::engine::phase::PhaseRunner));
//! `interface`, the [`Backend`](crate::backend::Backend) interface (counters among it).

pub(crate) mod cost;
pub(crate) mod nemesis;
pub(crate) mod rows;

mod bind;
mod connect;
mod error;
mod execute;
mod interface;
mod prepare;
mod profile;
#[cfg(test)]
mod retry_agreement;
mod run;
mod runtime;
mod timed;
mod types;

pub(crate) use connect::DoppioBackend;
pub(crate) use profile::check_settings;
