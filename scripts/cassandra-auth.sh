#!/usr/bin/env bash
# A second, independent one-node Cassandra with PasswordAuthenticator on, for the
# authentication tests: 127.0.0.11:9042, user cassandra / cassandra, state in .cassandra-auth/.
# It runs beside the ordinary test node (127.0.0.1) and takes the same commands:
#
#   scripts/cassandra-auth.sh start      (adds --auth and a 512M heap)
#   scripts/cassandra-auth.sh status | stop | logs | wipe
#
# The tests find it through DOPPIO_CASSANDRA_AUTH (default 127.0.0.11:9042).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DOPPIO_CASSANDRA_STATE=${DOPPIO_CASSANDRA_AUTH_STATE:-$ROOT/.cassandra-auth}
export DOPPIO_CASSANDRA_FIRST_IP=11
cmd=${1:-status}
shift || true
if [ "$cmd" = start ]; then
    exec "$ROOT/scripts/cassandra.sh" start --auth --heap 512M "$@"
fi
exec "$ROOT/scripts/cassandra.sh" "$cmd" "$@"
