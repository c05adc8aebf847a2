//! Where a keyed EXECUTE landed, read on the hot path before it is answered: its token
//! against the emulated ScyllaDB shard of its connection and, in a cluster, against the
//! replicas of its token (or of its tablet, and under tablets routing v2 its block against
//! the tablet's version), counted in the connection's read-batch counters.

use doppio_proto::murmur3;
use doppio_proto::ProtocolVersion;

use crate::conn::handle::fields::{execute_first_value, execute_head};
use crate::conn::state::Conn;
use crate::shard::ShardContext;
use crate::tablets::TabletLayout;

/// A misrouted request's tablet (or under v2 one whose block is stale), whose routing its
/// answer carries: the layout, the tablet with the epoch it is placed in now, and whether
/// the payload is v2's.
pub(super) type TabletPayload<'a> = (&'a TabletLayout, (u32, u32), bool);

/// Counts where the EXECUTE `body` (in `version`, with tablet version block `block` on a
/// connection with tablets routing v2) landed, when the stub emulates ScyllaDB's shards or
/// plays a cluster; returns the tablet whose routing its answer carries, if any: under v1
/// a misrouted request's, under v2 also one whose block disagrees with its version.
pub(super) fn place<'a>(
    conn: &Conn,
    ctx: &'a ShardContext,
    body: &[u8],
    version: ProtocolVersion,
    block: Option<u8>,
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
                        let on = conn.extensions.get();
                        let v2 = on.tablets_routing_v2;
                        // Under v2, a block that disagrees with the tablet's version.
                        let stale =
                            v2 && block.is_some_and(|b| !t.0.version(at.0, at.1).agrees_with(b));
                        let payload = (misplaced && on.tablets_routing()) || stale;
                        if payload {
                            tablet_payload = Some((t.0, at, v2));
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
