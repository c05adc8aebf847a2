//! EVENT (spec section 4.2.6): topology, status and schema changes pushed to a registered
//! connection.

use std::net::SocketAddr;

use super::schema_change::SchemaChange;

/// An EVENT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `NEW_NODE` or `REMOVED_NODE`, and the node's address.
    TopologyChange {
        /// The change.
        change: String,
        /// The node.
        node: SocketAddr,
    },
    /// `UP` or `DOWN`, and the node's address.
    StatusChange {
        /// The change.
        change: String,
        /// The node.
        node: SocketAddr,
    },
    /// A schema change.
    SchemaChange(SchemaChange),
}
