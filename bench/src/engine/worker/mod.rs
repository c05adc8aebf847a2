//! One worker's share of a phase ([`run_worker`]): what it runs ([`WorkerSpec`]), its
//! fibers' request loop (pacing, sequences, batches, validation), and what it returns
//! ([`WorkerEnd`]).
//!
//! Children: `spec`, what a worker runs and returns ([`WorkerSpec`], [`WorkerEnd`]); `run`,
//! the worker itself ([`run_worker`]: its recorder, clock and outage watch set up, its fibers
//! run, its end gathered); `fiber`, one fiber's request loop; `pause`, a fiber's wait until
//! its request is released (interruptible); `validated`, a validated statement's answer
//! judged by its check. Beside the worker in [`engine`](super), and used only by it:
//! `recorder`, what it records per sample interval, and `outage`, whether its node went
//! away.

mod fiber;
mod pause;
mod run;
mod spec;
mod validated;

#[cfg(test)]
mod tests;

pub use run::run_worker;
pub(crate) use spec::WorkerEnd;
pub use spec::WorkerSpec;
