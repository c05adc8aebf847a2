//! The executor's provided-buffer ring (`IORING_REGISTER_PBUF_RING`): the buffers every
//! stream's multishot receive fills.
//!
//! Layout: one page-aligned anonymous mapping holds the ring of `io_uring_buf` entries the
//! kernel reads; a second holds all buffers back to back (`buffers × buffer_size` bytes).
//! Buffer `bid` is bytes `bid × buffer_size ..` of the second mapping.
//!
//! Invariants:
//! - The ring has `entries` (a power of two) slots, so every buffer fits in it at once: a
//!   buffer is either in the ring (the kernel may pick it), or handed out by exactly one CQE
//!   and then returned exactly once with [`BufRing::push`] (by the stream that queued it, or
//!   at once if its stream is gone).
//! - The tail lives in the ring's first entry (`resv` of entry 0, byte offset 14): it is the
//!   one word shared with the kernel on the data path. We write entries with plain stores and
//!   then publish the tail with a `Release` store, so the kernel (which loads it with acquire)
//!   sees the entries before the tail that covers them.
//! - Both mappings stay mapped until the buffer ring is unregistered and no receive is in
//!   flight; if the executor cannot prove that (teardown timed out) it calls
//!   [`BufRing::leak`] and the memory is never unmapped.

use std::cell::Cell;
use std::io;
use std::ptr;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::IoUring;

use super::error::UringError;

/// The buffer group id of the executor's one buffer ring.
pub(crate) const BGID: u16 = 0;

/// The kernel's `struct io_uring_buf` (ABI layout, 16 bytes).
#[repr(C)]
struct RingEntry {
    addr: u64,
    len: u32,
    bid: u16,
    /// In entry 0: the ring's tail. Never written through an entry.
    resv: u16,
}

/// Offset of the tail in the ring mapping (`resv` of entry 0).
const TAIL_OFFSET: usize = 14;

/// An anonymous private mapping, unmapped on drop unless leaked.
struct Mapping {
    ptr: *mut u8,
    len: usize,
    leaked: bool,
}

impl Mapping {
    fn new(len: usize) -> io::Result<Mapping> {
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches
        // no existing memory; the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p.cast(),
            len,
            leaked: false,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if !self.leaked {
            // SAFETY: `ptr`/`len` are exactly what mmap returned, unmapped once, and the owner
            // guarantees the kernel no longer references the memory (else it leaks it).
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

/// The provided-buffer ring of one executor.
pub(crate) struct BufRing {
    ring: Mapping,
    bufs: Mapping,
    entries: u16,
    buffer_size: u32,
    /// Our copy of the tail: entries below it are published or about to be.
    tail: Cell<u16>,
    /// The tail value last published to the kernel.
    published: Cell<u16>,
    /// Buffers out of the ring: handed to us by CQEs and not pushed back yet.
    held: Cell<u16>,
}

impl BufRing {
    /// Maps the ring and the buffers, registers the ring with `uring` as group [`BGID`], and
    /// puts every buffer in it.
    pub(crate) fn new(uring: &IoUring, entries: u16, buffer_size: u32) -> Result<Self, UringError> {
        if entries == 0 || !entries.is_power_of_two() || entries > 32768 {
            return Err(UringError::unavailable(format!(
                "invalid Config: buffers = {entries} is not a power of two in 1..=32768"
            )));
        }
        if buffer_size == 0 || buffer_size > i32::MAX as u32 {
            return Err(UringError::unavailable(format!(
                "invalid Config: buffer_size = {buffer_size} is not in 1..=2^31-1"
            )));
        }
        let total = (entries as usize)
            .checked_mul(buffer_size as usize)
            .filter(|t| *t <= isize::MAX as usize)
            .ok_or_else(|| {
                UringError::unavailable(format!(
                    "invalid Config: {entries} buffers of {buffer_size} bytes do not fit in memory"
                ))
            })?;
        let ring_len = entries as usize * std::mem::size_of::<RingEntry>();
        let ring = Mapping::new(ring_len)
            .map_err(|e| UringError::os("mapping the provided-buffer ring", &e))?;
        let bufs =
            Mapping::new(total).map_err(|e| UringError::os("mapping the provided buffers", &e))?;
        // SAFETY: the ring mapping is page-aligned, `entries` entries long, zero-filled (a
        // valid empty ring, tail 0), and stays mapped until after unregistration (or leaks).
        unsafe {
            uring
                .submitter()
                .register_buf_ring_with_flags(ring.ptr as u64, entries, BGID, 0)
        }
        .map_err(|e| UringError::os("registering the provided-buffer ring", &e))?;
        let this = BufRing {
            ring,
            bufs,
            entries,
            buffer_size,
            tail: Cell::new(0),
            published: Cell::new(0),
            // Every buffer starts in our hands and is pushed below.
            held: Cell::new(entries),
        };
        for bid in 0..entries {
            this.push(bid);
        }
        this.publish();
        Ok(this)
    }

    /// Size of each buffer.
    #[cfg(test)]
    pub(crate) fn buffer_size(&self) -> u32 {
        self.buffer_size
    }

    /// Number of buffers.
    pub(crate) fn len(&self) -> u16 {
        self.entries
    }

    /// A CQE handed buffer `bid` to us.
    pub(crate) fn taken(&self) {
        self.held.set(self.held.get() + 1);
    }

    /// Buffers the kernel can pick from right now (once published).
    pub(crate) fn available(&self) -> u16 {
        self.entries - self.held.get()
    }

    /// Returns buffer `bid` to the ring (visible to the kernel at the next [`Self::publish`]).
    pub(crate) fn push(&self, bid: u16) {
        debug_assert!(bid < self.entries);
        self.held.set(self.held.get() - 1);
        let tail = self.tail.get();
        let index = (tail & (self.entries - 1)) as usize;
        let addr = self.buffer_ptr(bid) as u64;
        // SAFETY: `index < entries`, so the entry lies inside the ring mapping. The kernel
        // does not read entries at or past the published tail, and this slot is free: at most
        // `entries` buffers exist, so the tail never laps the kernel's head. Only `addr`,
        // `len` and `bid` are written (never `resv`, which is the tail in entry 0), each
        // through a raw pointer, so no reference overlaps the tail the kernel reads.
        unsafe {
            let e = self.ring.ptr.cast::<RingEntry>().add(index);
            ptr::addr_of_mut!((*e).addr).write(addr);
            ptr::addr_of_mut!((*e).len).write(self.buffer_size);
            ptr::addr_of_mut!((*e).bid).write(bid);
        }
        self.tail.set(tail.wrapping_add(1));
    }

    /// Publishes every buffer pushed so far to the kernel.
    pub(crate) fn publish(&self) {
        let tail = self.tail.get();
        if tail == self.published.get() {
            return;
        }
        let p = self.ring.ptr.wrapping_add(TAIL_OFFSET).cast::<u16>();
        // SAFETY: the tail is the u16 at byte offset 14 of the page-aligned ring mapping
        // (so 2-byte aligned and in bounds), and is only ever accessed atomically (the kernel
        // loads it with acquire). This Release store is the one atomic the data path needs:
        // it orders the entry writes of `push` before the kernel can see them.
        let t = unsafe { AtomicU16::from_ptr(p) };
        t.store(tail, Ordering::Release);
        self.published.set(tail);
    }

    /// The first `len` bytes of buffer `bid`, which a CQE handed to us.
    pub(crate) fn slice(&self, bid: u16, len: u32) -> &[u8] {
        assert!(
            bid < self.entries && len <= self.buffer_size,
            "bad provided buffer"
        );
        // SAFETY: the range lies inside the buffer mapping (checked above). The kernel wrote
        // it before posting the CQE that named it (the CQ tail's acquire load orders that
        // before our read), and it does not write it again until we push `bid` back, which
        // needs this borrow gone (callers copy out, then push).
        unsafe { std::slice::from_raw_parts(self.buffer_ptr(bid), len as usize) }
    }

    fn buffer_ptr(&self, bid: u16) -> *mut u8 {
        // Stays inside the mapping for every `bid < entries` (see `new`).
        self.bufs
            .ptr
            .wrapping_add(bid as usize * self.buffer_size as usize)
    }

    /// Never unmap the memory: the kernel may still reference it.
    pub(crate) fn leak(&mut self) {
        self.ring.leaked = true;
        self.bufs.leaked = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_fills_and_publishes_every_buffer() {
        let uring = IoUring::new(8).expect("io_uring");
        let ring = BufRing::new(&uring, 8, 64).expect("buffer ring");
        assert_eq!(ring.len(), 8);
        assert_eq!(ring.buffer_size(), 64);
        assert_eq!(ring.tail.get(), 8);
        assert_eq!(ring.published.get(), 8);
        assert_eq!(ring.available(), 8);
        // Push/publish wrap the u16 tail without touching the tail word through an entry.
        for bid in 0..8 {
            ring.taken();
            ring.push(bid);
        }
        ring.publish();
        assert_eq!(ring.published.get(), 16);
        assert_eq!(ring.slice(3, 64).len(), 64);
        uring
            .submitter()
            .unregister_buf_ring(BGID)
            .expect("unregister");
    }

    #[test]
    fn refuses_bad_sizes_with_a_typed_error() {
        let uring = IoUring::new(8).expect("io_uring");
        for (n, size) in [(0u16, 64u32), (3, 64), (65535, 64), (8, 0)] {
            let e = BufRing::new(&uring, n, size).err().expect("refused");
            assert!(e.to_string().contains("io_uring"), "{e}");
        }
    }
}
