#!/usr/bin/env bash
# A third, independent Cassandra: three nodes on 127.0.0.21, .22 and .23 (port 9042), for the
# cluster-awareness tests (token routing, node failure and recovery). One data center,
# "datacenter1"; nodes 1 and 2 in rack "rack1", node 3 in "rack2" (GossipingPropertyFileSnitch),
# so that NetworkTopologyStrategy placement across racks is exercised. State in
# .cassandra-cluster/. It takes the commands of scripts/cassandra.sh:
#
#   scripts/cassandra-cluster.sh start        (three nodes, 768M heap each; restarts any node
#                                             that is down, e.g. after `stop 2`)
#   scripts/cassandra-cluster.sh status | stop [NODE] | kill NODE | pause NODE | resume NODE
#                                | logs [NODE] | wipe
#
# The tests find it through DOPPIO_CLUSTER (default 127.0.0.21:9042).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DOPPIO_CASSANDRA_STATE=${DOPPIO_CLUSTER_STATE:-$ROOT/.cassandra-cluster}
export DOPPIO_CASSANDRA_FIRST_IP=21
export DOPPIO_CASSANDRA_RACKS=rack1,rack1,rack2
cmd=${1:-status}
shift || true
if [ "$cmd" = start ]; then
    exec "$ROOT/scripts/cassandra.sh" start --nodes 3 "$@"
fi
exec "$ROOT/scripts/cassandra.sh" "$cmd" "$@"
