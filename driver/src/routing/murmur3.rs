//! The token of a partition key as Cassandra's `Murmur3Partitioner` computes it: the
//! protocol layer's [`doppio_proto::murmur3`], re-exported where the driver routes with it.

pub use doppio_proto::murmur3::*;
