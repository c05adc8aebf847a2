//! ScyllaDB's shards (SUPPORTED's `SCYLLA_*` options, the shard of a token, the source ports
//! of a shard): the protocol layer's [`doppio_proto::sharding`], re-exported where the
//! driver routes with it.

pub use doppio_proto::sharding::*;
