//! One connection to one node, owned by one shard.
//!
//! Parts: [`in_flight`] tracks stream ids and the callers waiting on them (bounded, with
//! backpressure and orphaned ids on timeout). The glommio reader, flusher and deadline sweep
//! that drive it arrive with the driver-core issue.

pub mod in_flight;
