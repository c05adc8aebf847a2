#!/usr/bin/env bash
# A real Apache Cassandra 5.0 on this machine, from Maven Central jars: no Docker, no tarball.
#
#   scripts/cassandra.sh install                    resolve cassandra-all and its deps (idempotent)
#   scripts/cassandra.sh start [--nodes N] [--auth] [--tls] [--heap SIZE] [--timeout SECS]
#   scripts/cassandra.sh stop [NODE]                stop every node (or one), SIGTERM then SIGKILL
#   scripts/cassandra.sh kill NODE                  SIGKILL one node (fault tests)
#   scripts/cassandra.sh pause NODE                 SIGSTOP one node: it keeps its connections
#                                                   and answers nothing (fault tests)
#   scripts/cassandra.sh resume NODE                SIGCONT a paused node
#   scripts/cassandra.sh status                     one line per node (UP, STARTING, PAUSED, DOWN,
#                                                   LEFT); exit 0 only if all are up
#   scripts/cassandra.sh add [--token T] [--heap SIZE] [--timeout SECS]
#                                                   bootstrap one more node into the running
#                                                   cluster (next address; default token: the
#                                                   middle of the widest gap in the ring)
#   scripts/cassandra.sh decommission NODE          stream NODE's data away, leave the ring, stop
#   scripts/cassandra.sh nodetool NODE ARGS...      Cassandra's nodetool against NODE (JMX)
#   scripts/cassandra.sh logs [NODE] [LINES]        the last lines of a node's log (default node 1)
#   scripts/cassandra.sh wipe                       stop, then delete all node state
#
# Nodes listen on 127.0.0.1, 127.0.0.2, ... with the usual ports (CQL 9042, storage 7000);
# DOPPIO_CASSANDRA_FIRST_IP=K moves node 1 to 127.0.0.K (node i to 127.0.0.(K+i-1)), so that a
# second, independent cluster (another state directory) can run beside the first one:
# scripts/cassandra-auth.sh uses that for the authentication tests.
# State (yaml, data, logs, pids) lives in $DOPPIO_CASSANDRA_STATE (default: .cassandra/ in the
# repository, git-ignored); the jar cache in $DOPPIO_CACHE (default: ~/.cache/doppio).
# With --auth, PasswordAuthenticator is on and the test user is cassandra / cassandra.
# With --tls, the native port speaks TLS only (client_encryption_options enabled, not
# optional): a CA and each node's certificate (IP SAN of the node, valid 825 days) are made with
# openssl in $STATE/tls/ (ca.pem is the file clients trust); nothing is downloaded.
# DOPPIO_CASSANDRA_RACKS=r1,r1,r2 places node i in the i-th rack of data center
# "datacenter1" (GossipingPropertyFileSnitch); without it every node uses SimpleSnitch
# (datacenter1, rack1). Racks are fixed at a node's first boot, like tokens.
# Each node serves JMX on loopback, port 7200 + the last octet of its address (7201 for
# 127.0.0.1), which `nodetool` and `decommission` use (NodeTool from the same jars).
# DOPPIO_CASSANDRA_EXTRA_YAML: lines appended to each node's cassandra.yaml when it starts
# (e.g. the overload test's native_transport_max_requests_per_second).
#
# The cluster control is Rust: `xtask cassandra` (xtask/src/cassandra/) over the library
# doppio_test_support::cluster (test-support/src/cluster/), which the tests that manage a
# cluster of their own call directly. This script builds xtask quietly (into
# $CARGO_TARGET_DIR, default target/) and runs it; DOPPIO_XTASK=PATH runs an xtask binary
# built beforehand instead (scripts/test.sh builds it once for its four parallel starts).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The default state folder is this checkout's, whichever checkout built the binary.
export DOPPIO_CASSANDRA_STATE=${DOPPIO_CASSANDRA_STATE:-$ROOT/.cassandra}
if [ -n "${DOPPIO_XTASK:-}" ]; then
    exec "$DOPPIO_XTASK" cassandra "$@"
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
xtask=${CARGO_TARGET_DIR:-$ROOT/target}/debug/xtask
# cargo runs only when a source may have changed since the binary was built: it would wait
# for the build lock while another cargo command (a test run) holds it.
if [ ! -x "$xtask" ] || [ -n "$(find "$ROOT/xtask" "$ROOT/test-support" "$ROOT/Cargo.toml" \
    "$ROOT/Cargo.lock" -newer "$xtask" -print -quit 2>/dev/null)" ]; then
    # A fresh checkout compiles it first (about a minute): say why nothing happens meanwhile.
    [ -x "$xtask" ] || echo "[cassandra.sh] building the cluster control (cargo build -p xtask)" >&2
    cargo build --locked -q --manifest-path "$ROOT/Cargo.toml" -p xtask
fi
exec "$xtask" cassandra "$@"
