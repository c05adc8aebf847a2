//! The nemesis (issue 48): a run against a local cluster while its nodes are killed, paused
//! and stopped, and checks of the history the clients recorded. This is its pure core,
//! driver-neutral and without any process control: so far the history, the check of
//! acknowledged writes and the fault schedule.
//!
//! Modules:
//! - [`history`]: the operations of a run (worker, key, write / compare-and-set / read,
//!   invoke and completion times, outcome answered, refused or unknown), saved as JSON lines.
//! - [`acked_writes`]: check (a), every acknowledged write read back after healing; writes of
//!   unknown outcome counted apart, never as lost.
//! - [`schedule`]: the seeded fault schedule, within what the replication factor spares.

pub(crate) mod acked_writes;
pub(crate) mod history;
pub(crate) mod schedule;
