//! The backend-neutral engine: runs a workload's statements at a concurrency and an optional
//! rate on one worker (a doppio shard, or one worker of the scylla backend on its runtime)
//! and records what happened.
//!
//! Children: `limit`, how long a phase lasts ([`Limit`]); `request`, one request's
//! outcome ([`Answer`], [`RequestError`]); `error_kind`, the bench's kind of a failed
//! request (`ErrorKind`), onto which each backend maps its driver's errors; `session`,
//! what a backend offers a worker ([`BenchSession`], with each request's [`Args`] and
//! [`BatchArgs`]); `plan`, a phase's
//! plan as the workers run it ([`PhasePlan`]: its prepared statements and `[[run]]` entries);
//! `assemble`, a phase's plan built from the workload and a backend's prepared
//! statements; `worker`, one worker's share of a phase ([`run_worker`]: its fibers'
//! request loop, [`WorkerSpec`], `WorkerEnd`), and the two private files only it uses:
//! `recorder`, what a worker records per sample interval, and `outage`, whether its node
//! went away; `interval`, a
//! worker's record of one sample interval (`IntervalSample`) and where intervals begin and
//! end; `clock`, the clock of each request's end (the CPU's time-stamp counter without a
//! rate, where it is invariant); `collect`, the coordinator's side: workers' interval
//! samples merged into one sample per interval; `cycles`, the range of iteration numbers
//! a loader draws from (`--cycles`, `--loader`); `phase`, a phase as every worker runs it
//! (its spec, what a backend gives the engine to run it: `phase::PhaseRunner`, the
//! workers' messages); `drive`, the coordinator's side of a phase (started on a backend's
//! workers, samples merged and spilled, its outcome); [`schedule`], the rate schedule (`-r`)
//! and each iteration's due time; [`grid`], the release grid a paced request waits for
//! (`--release-grid`); `lateness`, how late each paced iteration was sent; `statements`, what each run statement did (per interval
//! counts, per phase histograms), beside the totals; `spill`, released samples with their
//! histograms written to a temporary file, so that a run of any length keeps memory bounded;
//! `validate`, `--validate`'s comparison of returned rows with what their writer wrote;
//! `order`, the backends' order in each round of an interleaved run (`--order`);
//! `waterfall`, `--waterfall`'s timed requests split into stages whose means add up to
//! their mean latency.
//!
//! A worker runs `concurrency` fibers: futures joined inside the worker's one task, not a
//! task each. Fiber `f` of a worker with `C` fibers runs the worker's iterations `f`,
//! `f + C`, `f + 2C`, ...; worker `w` of `N` owns the global iterations `j * N + w`. No
//! counter is shared, so fibers never wait for each other, and every iteration number runs
//! exactly once. These are the phase's ordinals; with a `cycles::CycleRange` ordinal `o`
//! runs the iteration number `START + o % len` instead of `o`.
//!
//! No coordinated omission: with a rate schedule ([`schedule`]; a constant rate `r` is the
//! simplest), iteration `j` of a worker of `N` is due where the schedule's integral reaches
//! `j * N` (`start + j * N / r` at a constant rate). A fiber sleeps until its iteration is
//! released (the first point of the release grid at or after its due time, the same grid
//! for every backend: [`grid`]), and latency is measured from the due time, so a slow answer that delays the next
//! requests shows up in their latency. The service time (from the moment the request was
//! actually sent) is kept beside it. Without a rate, both are the same, and a fiber's next
//! request is due when its previous one ended: one clock read per request (its end is the
//! next one's start), so a latency includes the engine's own bookkeeping between the two
//! (tens of nanoseconds: `--driver null` measures it). The service histogram of such a run
//! is then the latency histogram itself, copied once per sample interval rather than
//! recorded twice per request.
//!
//! Invariants:
//! - Per request the engine allocates nothing: arguments are encoded straight into the
//!   driver's buffer, histograms are preallocated and rotated once per sample interval.
//! - Per request it reads the clock once without a rate (the end: the CPU's time-stamp
//!   counter where it is invariant, `clock`), twice with one (the send after the fiber's
//!   pause, the end: the monotonic clock), records one latency histogram (two with a
//!   rate: latency and service time), and finds its sample interval by comparing the end
//!   with the current interval's end (no division).
//! - Errors are never lost: each is counted by kind, with the first message of each kind.
//! - Every request is counted in the totals and in its statement's entry (indexed by the
//!   statement's position in the plan), so the statements' counts add up to the totals.

pub(crate) mod assemble;
pub(crate) mod clock;
pub(crate) mod collect;
pub(crate) mod cycles;
pub(crate) mod drive;
pub(crate) mod error_kind;
pub mod grid;
pub(crate) mod interval;
pub(crate) mod lateness;
pub(crate) mod limit;
pub(crate) mod order;
mod outage;
pub(crate) mod phase;
pub(crate) mod plan;
mod recorder;
pub(crate) mod request;
pub mod schedule;
pub(crate) mod session;
pub(crate) mod spill;
pub(crate) mod statements;
pub(crate) mod validate;
pub(crate) mod waterfall;
pub(crate) mod worker;

pub(crate) use error_kind::ErrorKind;
pub use limit::Limit;
pub use plan::PhasePlan;
pub use plan::PlanStatement;
pub use request::Answer;
pub use request::RequestError;
pub use session::Args;
pub use session::BatchArgs;
pub use session::BenchSession;
pub use worker::run_worker;
pub use worker::WorkerSpec;
