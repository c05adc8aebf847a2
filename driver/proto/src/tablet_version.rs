//! ScyllaDB's tablet versions (tablets routing v2, negotiated as
//! `TABLETS_ROUTING_V2_EXPERIMENTAL`): a tablet's version and the one-byte "block" a client
//! appends to every EXECUTE on such a connection, by which the node tells whether the
//! client's copy of the tablet is stale.
//!
//! A version is 64 bits the node derives from the tablet's ordered replica list: not a
//! counter, only its bit pattern means anything. A block names one of its sixteen nibbles
//! (index 0 the least significant) in its high half and carries that nibble's value in its
//! low half; the node compares the named nibble of its own version with it, and sends the
//! tablet's routing information back when they differ. A client that probes a different
//! nibble on each request notices any change of version within sixteen requests of the
//! tablet (at most), and one that knows no version sends a block that disagrees with most.
//!
//! Sans-IO like the rest of the crate: no clock and no random source; the caller picks the
//! nibble.

/// A tablet's version under tablets routing v2 (the `bigint` the node sends, as its bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TabletVersion(pub u64);

impl TabletVersion {
    /// The version of the `bigint` the node sent (only the bits count).
    pub fn from_wire(value: i64) -> Self {
        TabletVersion(u64::from_be_bytes(value.to_be_bytes()))
    }

    /// The `bigint` to send for it.
    pub fn to_wire(self) -> i64 {
        i64::from_be_bytes(self.0.to_be_bytes())
    }

    /// The nibble at `index` (0 the least significant; taken modulo 16).
    fn nibble(self, index: u8) -> u8 {
        // Masked to four bits: the cast keeps them all.
        ((self.0 >> (u32::from(index & 0x0F) * 4)) & 0x0F) as u8
    }

    /// The block that probes nibble `index` (modulo 16): the index in the high half, the
    /// nibble in the low half.
    pub fn block(self, index: u8) -> u8 {
        ((index & 0x0F) << 4) | self.nibble(index)
    }

    /// Whether `block` agrees with this version (the node's check): the nibble it names has
    /// the value it carries.
    pub fn agrees_with(self, block: u8) -> bool {
        self.nibble(block >> 4) == block & 0x0F
    }
}

/// The block to send when the client knows no version of the tablet: one that disagrees with
/// every version whose nibble 0 is not 15, so the node almost always answers with the
/// tablet's routing information (the client then learns it at once, as under v1 after a
/// misroute).
pub const UNKNOWN_VERSION_BLOCK: u8 = 0x0F;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_names_its_nibble_and_carries_its_value() {
        let v = TabletVersion(0x0123_4567_89AB_CDEF);
        assert_eq!(v.block(0), 0x0F);
        assert_eq!(v.block(1), 0x1E);
        assert_eq!(v.block(15), 0xF0);
        // The index is taken modulo 16.
        assert_eq!(v.block(16), v.block(0));
        for i in 0..16 {
            assert!(v.agrees_with(v.block(i)), "nibble {i}");
        }
    }

    #[test]
    fn every_changed_nibble_is_seen_by_the_block_that_probes_it() {
        let old = TabletVersion(0x0123_4567_89AB_CDEF);
        for i in 0..16u8 {
            let new = TabletVersion(old.0 ^ (0x1 << (u32::from(i) * 4)));
            let seen: Vec<u8> = (0..16)
                .filter(|&k| !new.agrees_with(old.block(k)))
                .collect();
            assert_eq!(seen, vec![i], "a change in nibble {i} only");
        }
    }

    #[test]
    fn the_wire_bigint_keeps_every_bit() {
        for v in [
            0u64,
            1,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x0123_4567_89AB_CDEF,
        ] {
            let t = TabletVersion(v);
            assert_eq!(TabletVersion::from_wire(t.to_wire()), t);
        }
        assert_eq!(TabletVersion::from_wire(-1).0, u64::MAX);
    }

    #[test]
    fn the_unknown_block_disagrees_unless_nibble_0_is_15() {
        assert!(!TabletVersion(0x10).agrees_with(UNKNOWN_VERSION_BLOCK));
        assert!(TabletVersion(0x1F).agrees_with(UNKNOWN_VERSION_BLOCK));
    }
}
