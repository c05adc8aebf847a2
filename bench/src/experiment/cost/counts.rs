//! What one child run of `doppio cost` cost, by tool, and split by who did it.

/// One tool's counts over one child run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ToolCounts {
    /// User-space instructions (Callgrind's Ir).
    pub(crate) instructions: u64,
    /// Heap allocations (DHAT's blocks).
    pub(crate) allocations: u64,
    /// Bytes allocated.
    pub(crate) bytes: u64,
}

impl ToolCounts {
    pub(super) fn plus(self, o: ToolCounts) -> ToolCounts {
        ToolCounts {
            instructions: self.instructions + o.instructions,
            allocations: self.allocations + o.allocations,
            bytes: self.bytes + o.bytes,
        }
    }

    pub(super) fn minus(self, o: ToolCounts) -> ToolCounts {
        ToolCounts {
            instructions: self.instructions.saturating_sub(o.instructions),
            allocations: self.allocations.saturating_sub(o.allocations),
            bytes: self.bytes.saturating_sub(o.bytes),
        }
    }
}

/// What one child run cost, split by who did it (doppio's runs only; a scylla run is all
/// `client`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// The driver (doppio: polls of the client's tasks; scylla: the whole process).
    pub(crate) client: ToolCounts,
    /// The stub (doppio's runs: polls of the peer's tasks).
    pub(crate) peer: ToolCounts,
    /// The rest: the simulated executor, the program's start and end.
    pub(crate) rest: ToolCounts,
}
