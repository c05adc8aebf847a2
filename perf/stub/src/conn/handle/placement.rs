//! Where a keyed EXECUTE landed, read on the hot path before it is answered: its token
//! against the emulated ScyllaDB shard of its connection and, in a cluster, against the
//! replicas of its token (or of its tablet), counted in the connection's read-batch counters.

use doppio_proto::murmur3;
use doppio_proto::ProtocolVersion;

use crate::conn::handle::fields::{execute_first_value, execute_head};
use crate::conn::state::Conn;
use crate::shard::ShardContext;
use crate::tablets::TabletLayout;

/// A misrouted request's tablet, whose routing its answer carries: the layout, and the
/// tablet with the epoch it is placed in now.
pub(super) type TabletPayload<'a> = (&'a TabletLayout, (u32, u32));

/// Counts where the EXECUTE `body` (in `version`) landed, when the stub emulates ScyllaDB's
/// shards or plays a cluster; returns the tablet whose routing its answer carries, if any.
pub(super) fn place<'a>(
    conn: &Conn,
    ctx: &'a ShardContext,
    body: &[u8],
    version: ProtocolVersion,
) -> Option<TabletPayload<'a>> {
    let sharded = conn.scylla_shard.zip(ctx.scylla());
    let node = ctx.node();
    // The tablet whose routing this answer carries (a request that reached a node or
    // shard that holds no replica of its tablet, on a connection with tablets routing).
    let mut tablet_payload = None;
    if sharded.is_some() || node.checks_replicas() {
        // The partition key is the first bound value of every statement the stub
        // prepares when it emulates ScyllaDB or plays a cluster.
        let ids = conn.metadata_ids();
        if let Some(key) = execute_first_value(body, version, ids) {
            let token = murmur3::token(key);
            // With tablets, the tablet and the epoch it is placed in now.
            let tablet = node.tablets().map(|t| {
                let (layout, _) = t;
                let at = (
                    layout.tablet_of(token),
                    layout.epoch(doppio_rt::now().saturating_duration_since(ctx.started)),
                );
                (t, at)
            });
            let mut misplaced = false;
            if let Some((shard, e)) = sharded {
                let owner = match tablet {
                    Some(((layout, here), (k, epoch))) => layout.shard_on(k, here, epoch),
                    None => Some(e.config.sharder().shard_of(token)),
                };
                conn.batch_keyed.set(conn.batch_keyed.get() + 1);
                if owner != Some(shard) {
                    misplaced = true;
                    if owner.is_some() {
                        conn.batch_wrong.set(conn.batch_wrong.get() + 1);
                    }
                }
            }
            // Only EXECUTEs of a statement this node knows (an UNPREPARED one is sent
            // again once prepared).
            let conditional = execute_head(body, version, ids).and_then(|head| {
                let responder = ctx.responder.borrow();
                responder.lookup(head.id).map(|e| e.conditional())
            });
            if let Some(conditional) = conditional {
                let mut tally = conn.batch_placed.get();
                match tablet {
                    Some((t, at)) => {
                        let payload = misplaced && conn.extensions.get().tablets_routing_v1;
                        if payload {
                            tablet_payload = Some((t.0, at));
                        }
                        node.place_in_tablet(&mut tally, t, at, conditional, payload);
                    }
                    None => node.place(&mut tally, token, conditional),
                }
                conn.batch_placed.set(tally);
            }
        }
    }
    tablet_payload
}
