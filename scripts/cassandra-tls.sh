#!/usr/bin/env bash
# A one-node Cassandra whose native port speaks TLS only, for the TLS tests: 127.0.0.41:9042,
# state in .cassandra-tls/ (the CA clients trust: .cassandra-tls/tls/ca.pem). It runs beside
# the ordinary test node (127.0.0.1) and takes the same commands:
#
#   scripts/cassandra-tls.sh start      (adds --tls and a 512M heap)
#   scripts/cassandra-tls.sh status | stop | logs | wipe
#
# The tests find it through DOPPIO_CASSANDRA_TLS (default 127.0.0.41:9042) and its CA through
# DOPPIO_CASSANDRA_TLS_CA (default .cassandra-tls/tls/ca.pem).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DOPPIO_CASSANDRA_STATE=${DOPPIO_CASSANDRA_TLS_STATE:-$ROOT/.cassandra-tls}
export DOPPIO_CASSANDRA_FIRST_IP=41
cmd=${1:-status}
shift || true
if [ "$cmd" = start ]; then
    exec "$ROOT/scripts/cassandra.sh" start --tls --heap 512M "$@"
fi
exec "$ROOT/scripts/cassandra.sh" "$cmd" "$@"
