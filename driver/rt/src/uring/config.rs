//! The executor's configuration: ring and provided-buffer sizes and the poll budget.
//!
//! Invariant: a `Config` is plain data; it is checked when an executor is built (by
//! [`super::run`]), where every value the kernel or the buffer ring cannot take becomes a
//! [`super::UringError`], never a panic.

/// How an executor is built (see [`super::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Submission-queue entries (the completion queue gets four times as many, so that
    /// multishot receives rarely overflow it). Default 256.
    pub ring_entries: u32,
    /// Provided buffers in the executor's buffer ring, shared by every stream's multishot
    /// receive: a power of two, at most 32768. Default 64.
    pub buffers: u16,
    /// Size of each provided buffer in bytes. Default 16 KiB.
    pub buffer_size: u32,
    /// At most this many task polls per loop turn before the executor turns to I/O again
    /// (user-space preemption). Default 128.
    pub poll_budget: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ring_entries: 256,
            buffers: 64,
            buffer_size: 16 * 1024,
            poll_budget: 128,
        }
    }
}
